"""FTS5 segment merging: what a turn write does itself, and what it leaves to idle upkeep.

FTS5 merges segments inside writes: ``automerge`` does, every 64 leaf pages written,
64 pages of merging per level of the index, and ``crisismerge`` merges a whole level in
one go once it holds 16 segments. At 1M messages that was three quarters of a turn
write's CPU, and a write that fell on a merge of large segments (a term's whole doclist
is written in one piece) held the write lock for most of a second.

An index of up to ``FTS5_LEVELS`` levels is left to FTS5: there its merging is cheap and
smooth (the 1M bench archive has 11 levels, 8,000 turns into an empty archive make 6).
Past that, our turn writes switch both off inside their own transaction and merge in
small, even steps instead: a few ``merge`` steps of ``STEP_PAGES`` pages, once the level
FTS5 would merge next holds ``START_SEGMENTS`` and only while it is small
(``SMALL_LEVEL_PAGES``). A turn leaves the large levels to ``upkeep``'s bounded idle
steps, unless one has piled up as many segments as the file's ``crisismerge``: the turns
merge that one at the pace they write (``PACE``). The settings are put back before the commit, so other
connections (Hermes) only ever see the file's own values, and Hermes's writes merge as
they always did.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass

# FTS5's defaults when a table's config holds no value, and the ranges it accepts.
DEFAULTS = {"automerge": 4, "crisismerge": 16, "usermerge": 4}
RANGES = {"automerge": (1, 64), "crisismerge": (2, 1999), "usermerge": (2, 16)}
NO_CRISIS = 1999  # the largest crisismerge FTS5 accepts: no level fills up within one turn
STEP_PAGES = 16  # leaf pages a merge step writes (a little more: a term's doclist is never split)
MAX_STEPS = 2  # merge steps per table per turn: enough to keep the small levels merged
PACE = 4  # pages of a large level's merge owed per leaf page a turn writes (FTS5 merges about 10)
START_SEGMENTS = 8  # a level is merged once it holds this many: fewer, larger merges, as lazy as FTS5's own
SMALL_LEVEL_PAGES = 2000  # a level this small (about 8 MB) merges in a few milliseconds a step
FTS5_LEVELS = 8  # an index of this many levels or fewer is left to FTS5's own merging (smooth and cheap there)
TOP_SHARE = 4  # the top level is merged once its other segments hold a quarter of its largest's pages
MAX_SEGMENTS = 64  # past this many (something kept them from merging), FTS5's own rules apply again


DEEP_LEVELS = 500  # merging adds a level only when a merge passes the top; the old idle steps added 2 each
UNREADABLE_LEVELS = 2000  # past this FTS5 reads the structure as damage: every query and insert fails


EMPTY_STRUCTURE = bytes(7)  # a structure record of no levels: the cookie, then three zero varints


def deep_indexes(
    conn: sqlite3.Connection,
    tables: tuple[str, ...] = ("messages_fts", "messages_fts_trigram"),
    over: int = DEEP_LEVELS,
) -> dict[str, int]:
    """Those of ``tables`` (state.db's by default) whose structure lists more than ``over`` levels
    (read from the shadow table, which works even when FTS5 itself refuses to open the index;
    a table that is not there has depth 0)."""
    return {t: levels for t in tables if (levels := depth(conn, t)) > over}


def reset_structure(conn: sqlite3.Connection, table: str) -> None:
    """Inside a write transaction: give the index an empty structure, so FTS5 opens it again
    (its old segments are then unreferenced, until a ``rebuild`` or ``delete-all`` clears them)."""
    conn.execute(f"UPDATE {table}_data SET block = ? WHERE id = 10", (EMPTY_STRUCTURE,))


@dataclass(frozen=True)
class Level:
    merging: int  # how many of its first segments an unfinished merge is reading (0: none)
    pages: tuple[int, ...]  # leaf pages of each segment


def _record(conn: sqlite3.Connection, table: str) -> tuple[bytes, int, int] | None:
    """An FTS5 index's structure record: its bytes, where the varints start, and the fields a segment has."""
    try:
        row = conn.execute(f"SELECT block FROM {table}_data WHERE id = 10").fetchone()
    except sqlite3.Error:
        return None
    if not row or not isinstance(row[0], bytes) or len(row[0]) < 6:
        return None
    data = row[0]  # a 4-byte cookie; (3.45+) a version marker, then 5 more fields a segment
    return (data, 9, 8) if data[4:9] == b"\xff\x00\x00\x00\x01" else (data, 4, 3)


def depth(conn: sqlite3.Connection, table: str) -> int:
    """How many levels an FTS5 index has (0 when its structure is unreadable): the record's first value."""
    record = _record(conn, table)
    if record is None:
        return 0
    data, start, _ = record
    token = _VARINT.match(data, start)
    return 0 if token is None else _value(token.group())


def structure(conn: sqlite3.Connection, table: str) -> list[Level] | None:
    """An FTS5 index's levels, read from its structure record (None when it is unreadable)."""
    record = _record(conn, table)
    if record is None:
        return None
    data, start, fields = record
    values = _varints(data, start)
    if values is None or len(values) < 3:
        return None
    levels, i = [], 3  # levels, segments in all, the write counter
    try:
        for _ in range(values[0]):
            merging, n = values[i], values[i + 1]
            i += 2
            pages = tuple(values[k + 2] - values[k + 1] + 1 for k in range(i, i + n * fields, fields))
            if len(pages) != n:
                return None
            levels.append(Level(merging, pages))
            i += n * fields
    except IndexError:
        return None
    return levels


def segments(conn: sqlite3.Connection, table: str) -> int | None:
    """How many segments an FTS5 index holds (None when the table or its structure is unreadable)."""
    levels = structure(conn, table)
    return None if levels is None else sum(len(level.pages) for level in levels)


_VARINT = re.compile(rb"[\x80-\xff]{0,7}[\x00-\x7f]")  # SQLite's varints up to 2**56, all a record holds


def _varints(data: bytes, start: int) -> list[int] | None:
    """Every varint from ``start`` on (None when the bytes are not a run of them)."""
    tokens = _VARINT.findall(data, start)
    if sum(map(len, tokens)) != len(data) - start:
        return None
    return [_value(token) for token in tokens]


def _value(token: bytes) -> int:
    value = 0
    for byte in token:
        value = (value << 7) | (byte & 0x7F)
    return value


def next_merge(levels: list[Level], usermerge: int) -> int | None:
    """The level FTS5's ``merge`` would work on next, chosen as FTS5 does: an unfinished merge
    unless a lower level holds more segments, else the level with the most segments if it has
    at least ``usermerge``. None when it would merge nothing."""
    best, chosen = 0, None
    for n, level in enumerate(levels):
        if level.merging:
            if level.merging > best:
                best, chosen = usermerge, n
            break
        if len(level.pages) > best:
            best, chosen = len(level.pages), n
    return chosen if best >= usermerge else None


def merge_due(levels: list[Level] | None) -> bool:
    """Whether an idle step has a merge to do: the one under way, or a level of two or more
    segments, merged as FTS5's automerge does with ``usermerge`` 2 (each level keeps one).

    Never a negative ``merge``: that first gathers every segment into a new top level (two
    levels more for good, and the whole index rewritten) unless all but one are already
    merging. Each idle step did so once. With a write between steps (Hermes's, or a step's
    own CJK batch) each restarted the merge a level higher, its partial output one more
    input: a copy of the 1M archive reached 216 levels and 248 segments within a minute, and
    past 2,000 levels SQLite reads the index as damaged. An index left with one segment a
    level is what automerge leaves too; search on it is as fast as on one segment.

    The top level is the exception: a merge there rewrites the whole index (1.2 GB of
    trigrams at 1M), so it waits until the segments beside its largest hold ``TOP_SHARE``
    of that one's pages, instead of running each time a small one reaches it.
    """
    chosen = None if levels is None else next_merge(levels, 2)
    if levels is None or chosen is None:
        return False
    level = levels[chosen]
    if level.merging or any(other.pages for other in levels[chosen + 1 :]):
        return True
    return (sum(level.pages) - max(level.pages)) * TOP_SHARE >= max(level.pages)


def _input_pages(level: Level) -> int:
    return sum(level.pages[: level.merging] if level.merging else level.pages)


def _output_pages(levels: list[Level] | None, merged: int) -> int:
    """Leaf pages of the level a merge of level ``merged`` writes into (it grows by what a step wrote)."""
    return sum(levels[merged + 1].pages) if levels and len(levels) > merged + 1 else 0


def _settings(conn: sqlite3.Connection, table: str) -> dict[str, int | None] | None:
    """The merge settings the table's config holds (None for a default), or None when one is not a
    value FTS5 accepts, or automerge is off (the file's owner chose that: such a table is written
    as it always was)."""
    try:
        found = dict(conn.execute(f"SELECT k, v FROM {table}_config WHERE k IN (?, ?, ?)", tuple(DEFAULTS)))
    except sqlite3.Error:
        return None
    settings = {key: found.get(key) for key in DEFAULTS}
    for key, value in settings.items():
        low, high = RANGES[key]
        if value is not None and (not isinstance(value, int) or not low <= value <= high):
            return None
    return settings


def set_setting(conn: sqlite3.Connection, table: str, key: str, value: int) -> None:
    conn.execute(f"INSERT INTO {table}({table}, rank) VALUES (?, ?)", (key, value))


def restore_setting(conn: sqlite3.Connection, table: str, key: str, value: int | None) -> None:
    """Put a setting back; one the file did not hold is set to FTS5's default (so every connection
    reloads it) and its row removed again, leaving the config table as it was."""
    set_setting(conn, table, key, DEFAULTS[key] if value is None else value)
    if value is None:
        conn.execute(f"DELETE FROM {table}_config WHERE k = ?", (key,))


def _merge_small_levels(
    conn: sqlite3.Connection, table: str, usermerge: int, crisismerge: int, owed: dict[str, int], flushed: int
) -> None:
    """A few steps while the level next in line is small. A large level is merged only once it holds
    as many segments as FTS5's crisis merge allows (segments never pile up past the file's own bound),
    and then at the pace turns write: ``PACE`` pages ``owed`` for each leaf page the turn wrote (the
    level-0 segments after the first ``flushed``), and a step only once they add up to ``STEP_PAGES``,
    charged with the pages it really merged. Each step of a wide merge writes whole doclists (hundreds
    of pages of a common trigram), so two of them every turn had cost ten times the turn itself."""
    levels = structure(conn, table)
    written = sum(levels[0].pages[flushed:]) if levels else 0
    for _ in range(MAX_STEPS):
        chosen = None if levels is None else next_merge(levels, usermerge)
        if levels is None or chosen is None:
            return
        level = levels[chosen]
        if not level.merging and len(level.pages) < START_SEGMENTS:
            return
        large = _input_pages(level) > SMALL_LEVEL_PAGES
        if large:
            if len(level.pages) < crisismerge:
                return  # left to upkeep's idle steps
            allowance = PACE * written  # credit is kept only up to a turn's or a step's worth: no bursts
            owed[table] = min(owed.get(table, 0) + allowance, max(allowance, STEP_PAGES))
            written = 0
            if owed[table] < STEP_PAGES:
                return
        conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('merge', ?)", (STEP_PAGES,))
        before, levels = levels, structure(conn, table)  # read once: the charge and the next choice
        if large:
            owed[table] -= max(STEP_PAGES, _output_pages(levels, chosen) - _output_pages(before, chosen))


def _ours(levels: list[Level] | None) -> bool:
    """Whether a turn should merge this index itself: only one deep enough for FTS5's own merging
    to come in bursts, and whose structure we can read (else nothing would bound its segments)."""
    if levels is None or len(levels) <= FTS5_LEVELS:
        return False
    return sum(len(level.pages) for level in levels) < MAX_SEGMENTS


@contextlib.contextmanager
def turn_merges(conn: sqlite3.Connection, tables: tuple[str, ...], owed: dict[str, int]) -> Iterator[None]:
    """Inside a write transaction: the rows written in the block are indexed without FTS5's own
    merging, then the small levels are merged in a few bounded steps (``tables``: those deeper
    than ``FTS5_LEVELS``, which FTS5 itself merges smoothly; ``owed``: the archive's running
    count of large-level merge pages its turns owe, per table)."""
    kept, level_zero = {}, {}
    for table in tables:
        settings = _settings(conn, table)
        levels = structure(conn, table)
        if settings is None or not _ours(levels):
            continue
        level_zero[table] = len(levels[0].pages) if levels else 0
        try:
            set_setting(conn, table, "automerge", 0)
            kept[table] = settings
            set_setting(conn, table, "crisismerge", NO_CRISIS)
        except sqlite3.Error:  # a table FTS5 cannot configure is written as before, its settings as they were
            if kept.pop(table, None) is not None:
                restore_setting(conn, table, "automerge", settings["automerge"])
    yield
    if not kept:
        return
    conn.execute("SAVEPOINT fts_flush")  # FTS5 writes its pending rows out at a savepoint
    conn.execute("RELEASE fts_flush")
    for table, settings in kept.items():
        _merge_small_levels(
            conn,
            table,
            settings["usermerge"] or DEFAULTS["usermerge"],
            settings["crisismerge"] or DEFAULTS["crisismerge"],
            owed,
            level_zero[table],
        )
        restore_setting(conn, table, "automerge", settings["automerge"])
        restore_setting(conn, table, "crisismerge", settings["crisismerge"])
