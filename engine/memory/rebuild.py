"""The file a memory write left, got back from the journal without a snapshot of every write.

Telling an outside edit from our own writes needs the text the journal last left a file
as. Keeping that whole file for every write made it most of a write's journal cost (an
insert and a delete of the file in ``journal_files``, 17 WAL pages an add). So a write
keeps a snapshot only every ``SNAPSHOT_EVERY`` writes, or when its result cannot be
rebuilt; the writes between record their place after it (``depth``), and the text is
rebuilt by replaying their entry-level rows on it.

A write is a link in the chain only if it read exactly the file the journal last left
(a hand reordering changes no entry, so it is journaled as nothing) and replaying its own
rows on the entries it read gives exactly the text it writes: the writer checks both
under the lock, before its rows are stored, so a rebuild replays only what was proven to
replay. Anything else (a repair that rewrites the whole text, a file starting with
U+FEFF, an outside edit) keeps a snapshot.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..journal import content_hash
from ..values import json_value, storable
from .format import read_as_hermes, serialize

SNAPSHOT_EVERY = 32  # writes replayed at most to rebuild a file
SUBSYSTEM = "memory"  # the journal rows of memory writes

# the journal rows that say which file a write (or an outside edit) left: the newest one counts
LEFT_ROW = (  # (json_valid first: a row someone else wrote into the table is passed over, never an error)
    "subsystem = ? AND target = ? AND status = 'done' AND json_valid(detail) "
    "AND coalesce(json_extract(detail, '$.file_sha'), json_extract(detail, '$.file_after')) IS NOT NULL"
)

Change = tuple[str | None, str | None, int | None]  # (before, after, index) of one entry


@dataclass(frozen=True)
class Left:
    """What the journal last left a file as."""

    id: int
    sha: str
    text: str | None  # the whole text, in rows of journals from before hashes (``file_after``)
    depth: int  # writes since the snapshot it is rebuilt from (0: its own snapshot was kept)
    at: float = 0.0  # when that row was journaled

    def link(self) -> int | None:
        """The depth of a write on top of this file, or None when that write must keep a snapshot."""
        if self.text is not None or self.depth >= SNAPSHOT_EVERY:
            return None
        return self.depth + 1


# the newest LEFT_ROW's id, hash, text (older rows), depth and time
_LEFT = (
    "id, json_extract(detail, '$.file_sha'), json_extract(detail, '$.file_after'), json_extract(detail, '$.depth'), at "
    f"FROM journal WHERE {LEFT_ROW} ORDER BY id DESC LIMIT 1"
)
_LEFT_OF = f"SELECT {_LEFT}"
# the same, after whether any row of the target is pending (its own subquery, on the partial index)
_PENDING_AND_LEFT = (
    f"SELECT EXISTS (SELECT 1 FROM journal WHERE status = 'pending' AND subsystem = ? AND target = ?), {_LEFT}"
)


def left_of(conn: sqlite3.Connection, target: str) -> Left | None:
    row = conn.execute(_LEFT_OF, (SUBSYSTEM, target)).fetchone()
    return None if row is None else _left(row)


def left_unless_pending(conn: sqlite3.Connection, target: str) -> tuple[bool, Left | None]:
    """``(False, left_of(conn, target))`` when ``target`` has no pending rows, asked in one statement;
    ``(True, None)`` when it has some, or when no row names a file it left (then nothing tells)."""
    row = conn.execute(_PENDING_AND_LEFT, (SUBSYSTEM, target, SUBSYSTEM, target)).fetchone()
    if row is None or row[0]:
        return True, None
    return False, _left(tuple(row)[1:])


def _left(row: Sequence[Any]) -> Left:
    row_id, sha, text, depth, at = row
    if sha is None:
        sha = content_hash(text)
    else:
        text = None
    return Left(
        row_id,
        sha,
        text,
        depth if isinstance(depth, int) and depth > 0 else 0,
        at if isinstance(at, (int, float)) else 0.0,
    )


def _chain(conn: sqlite3.Connection, target: str, left: Left) -> tuple[str, dict[int, list[Change]]]:
    """(the base snapshot's hash, each write's changes by depth) for ``left``, read back from its rows."""
    writes: dict[int, list[Change]] = {}
    cursor = conn.execute(
        f"SELECT detail, before, after FROM journal WHERE {LEFT_ROW} AND id <= ? ORDER BY id DESC",
        (SUBSYSTEM, target, left.id),
    )
    for detail_json, before, after in cursor:  # newest first, down to the base
        detail = json_value(detail_json, {})
        if not isinstance(detail, dict):
            return "", writes
        depth = detail.get("depth")
        if not isinstance(depth, int) or depth <= 0:
            return detail.get("file_sha") or content_hash(detail.get("file_after") or ""), writes
        writes.setdefault(depth, []).insert(0, (before, after, detail.get("index")))
    return "", writes


def base_of(conn: sqlite3.Connection, target: str, left: Left) -> str:
    """The hash of the snapshot ``left``'s file is rebuilt from (its own when it was kept)."""
    return left.sha if left.depth == 0 else _chain(conn, target, left)[0]


def replay(entries: list[str], changes: Iterable[Change]) -> list[str] | None:
    """``entries`` with each change made in turn, as the journal stores it; None if one does not apply."""
    out = list(entries)
    for before, after, index in changes:
        if before is None:
            if after is None:
                return None
            if index is None:
                out.append(after)
            else:
                out.insert(index, after)
            continue
        if index is not None and 0 <= index < len(out) and out[index] == before:
            at = index
        elif before in out:
            at = out.index(before)
        else:
            return None
        if after is None:
            del out[at]
        else:
            out[at] = after
    return out


def replays(entries: list[str], changes: Iterable[Change], result: list[str]) -> bool:
    """Whether ``changes`` as the journal stores them, replayed on ``entries``, give exactly ``result``."""
    return replay(entries, [(storable(before), storable(after), index) for before, after, index in changes]) == result


def rebuild(conn: sqlite3.Connection, target: str, left: Left, kept) -> str | None:
    """The text ``left`` names, from its base snapshot (``kept(sha)`` gives one) and the rows since."""
    if left.depth == 0:
        return kept(left.sha)
    base, writes = _chain(conn, target, left)
    text = kept(base) if base else None
    if text is None or sorted(writes) != list(range(1, left.depth + 1)):
        return None
    for depth in range(1, left.depth + 1):
        entries = replay(read_as_hermes(text), writes[depth])
        if entries is None:
            return None
        text = serialize(entries)
    return text if content_hash(text) == left.sha else None
