"""The frozen snapshot: what a session's system prompt holds for its whole life.

Taken once at session start (and again on a rebuild, e.g. after compression). Writes
made during the session go to disk at once but never change a snapshot already taken,
which keeps the prompt prefix stable. Entries the threat scan calls dangerous are replaced by a
``[BLOCKED: ...]`` line here only; the live files keep the raw text so it can be removed.
When config.yaml holds a value that makes Hermes inject no memory at all (a quoted char
limit), the snapshot holds no entries either and ``withheld`` says why.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING

from ..errors import WorkbenchError
from ..journal import content_hash
from .format import FILE_NAMES, TARGETS, Usage, listed, parse_blocks, render_block, size_of
from .threats import HERMES_SKIPS, hermes_characters, sanitize_entry

if TYPE_CHECKING:
    from ..home import Home

log = logging.getLogger(__name__)

# ours alone (workbench.db): when this workbench built each prompt it stored on a session row
_BUILDS = """
CREATE TABLE IF NOT EXISTS prompt_builds (
    session_id TEXT NOT NULL,
    prompt_sha TEXT NOT NULL,
    built_at REAL NOT NULL,
    PRIMARY KEY (session_id, prompt_sha)
) WITHOUT ROWID;
"""


@dataclass(frozen=True)
class Listing:
    """A snapshot's listed entries: ``chars`` counts as the block header does, but takes the
    ``unscanned`` entries past them as written (a ``[BLOCKED]`` placeholder would count otherwise)."""

    raw: tuple[str, ...]
    shown: tuple[str, ...]  # sanitised
    chars: int
    unscanned: int

    @property
    def blocked(self) -> int:
        """How many listed entries the prompt shows as placeholders."""
        return sum(raw != shown for raw, shown in zip(self.raw, self.shown, strict=True))


@dataclass(frozen=True)
class MemorySnapshot:
    raw_entries: Mapping[str, tuple[str, ...]]  # as they were on disk
    limits: Mapping[str, int]
    enabled: Mapping[str, bool]
    errors: Mapping[str, str | None]  # why a file could not be read (then it counts as empty)
    taken_at: float  # when it froze memory; when not ``time_known``, a lower bound (the session's start)
    withheld: str | None = None  # why a new Hermes session would inject no memory block
    time_known: bool = True  # False: a stored prompt no record dates (built at ``taken_at`` or later)

    @classmethod
    def build(
        cls,
        raw: dict[str, list[str]],
        limits: dict[str, int],
        enabled: dict[str, bool],
        errors: dict[str, str | None],
        taken_at: float,
        withheld: str | None = None,
        time_known: bool = True,
    ) -> MemorySnapshot:
        kept = {t: () if withheld else tuple(raw[t]) for t in TARGETS}
        return cls(
            raw_entries=MappingProxyType(kept),
            limits=MappingProxyType(dict(limits)),
            enabled=MappingProxyType(dict(enabled)),
            errors=MappingProxyType(dict(errors)),
            taken_at=taken_at,
            withheld=withheld,
            time_known=time_known,
        )

    @cached_property
    def entries(self) -> Mapping[str, tuple[str, ...]]:
        """Every entry sanitised, as the prompt shows it: scanned on first use, not when taken, so a
        listing of a store far over its limit scans only the entries it shows (``listing``)."""
        return MappingProxyType(
            {t: tuple(sanitize_entry(e, FILE_NAMES[t]) for e in self.raw_entries[t]) for t in TARGETS}
        )

    @cached_property
    def usage(self) -> Mapping[str, Usage]:
        """Of the sanitised entries, as the block header counts them."""
        return MappingProxyType({t: Usage.of(list(self.entries[t]), self.limits[t]) for t in TARGETS})

    def listing(self, target: str) -> Listing:
        """The entries a listing shows (``format.listed``), as the prompt shows them: a store far over
        its limit has only those scanned (each entry costs a scan; 50,000 took 13 s)."""
        raw = self.raw_entries[target]
        count = listed(raw, self.limits[target])
        if count == len(raw):
            return Listing(raw, self.entries[target], self.usage[target].chars, 0)
        shown = tuple(sanitize_entry(e, FILE_NAMES[target]) for e in raw[:count])
        return Listing(raw[:count], shown, size_of([*shown, *raw[count:]]), len(raw) - count)

    def block(self, target: str) -> str:
        """Exactly Hermes's system-prompt block for ``target``, or ``""`` when it is empty."""
        return render_block(target, list(self.entries[target]), self.limits[target])

    def blocked(self, target: str) -> list[str]:
        """The raw entries that the snapshot shows as ``[BLOCKED: ...]``."""
        return [raw for raw, shown in zip(self.raw_entries[target], self.entries[target], strict=True) if raw != shown]

    def prompt_text(self) -> str:
        """The MEMORY then USER PROFILE blocks of the enabled stores, joined as in the prompt."""
        return "\n\n".join(b for b in (self.block(t) for t in TARGETS if self.enabled[t]) if b)


def record_prompt_built(home: Home, session_id: str, prompt: str, built_at: float) -> None:
    """Note in workbench.db that the prompt this workbench just stored on ``session_id``'s row froze
    memory at ``built_at`` (``stored_prompt_frozen_at`` reads it back). A home open read-only, or a
    workbench.db that will not take it, leaves that time unknown (said as such), never wrong."""
    if home.read_only:
        return
    try:
        with home.journal.transaction() as conn:
            conn.execute(_BUILDS)
            conn.execute(
                "INSERT OR REPLACE INTO prompt_builds (session_id, prompt_sha, built_at) VALUES (?, ?, ?)",
                (session_id, content_hash(prompt), built_at),
            )
    except (WorkbenchError, sqlite3.Error) as exc:
        log.warning("When the prompt of session %s was built is not recorded: %s", session_id, exc)


def stored_prompt_frozen_at(home: Home, session) -> float | None:
    """When a stored session's prompt froze memory, when that is known: this workbench recorded it as it
    stored that very prompt (``record_prompt_built``). None when the row holds no prompt (a resume builds
    one, freezing memory then) or one someone else stored: Hermes builds one at a session's first turn
    but builds it again on a resume when the stored one is unusable (``update_system_prompt``), and
    ours stores one on a bare row at its first message after a resume, so the row's start is only a
    lower bound (``prompt_frozen_after``)."""
    if not session.system_prompt:
        return None
    try:
        conn = home.journal.connection()
        row = conn.execute(
            "SELECT built_at FROM prompt_builds WHERE session_id = ? AND prompt_sha = ?",
            (session.id, content_hash(session.system_prompt)),
        ).fetchone()
    except (WorkbenchError, sqlite3.Error) as exc:
        if "no such table" not in str(exc):  # (that one: nothing recorded yet)
            log.warning("When the prompt of session %s was built cannot be read: %s", session.id, exc)
        return None
    return float(row[0]) if row else None


def prompt_frozen_after(session) -> float | None:
    """A lower bound of when a stored prompt froze memory: the session's start (None: unknown)."""
    return session.started_at or None


def snapshot_from_prompt(
    home: Home, prompt: str, taken_at: float | None, *, after: float | None = None
) -> MemorySnapshot:
    """The memory a stored system prompt froze: each block's entries, read back exactly, each
    ``[BLOCKED: ...]`` line taken for the entry it stands for (``frozen_originals``). A store whose
    block is missing was empty (or disabled) when the prompt was built. ``taken_at`` None: when it was
    built is not known (``after``, if given, is a lower bound): no written entry is ruled out of it."""
    blocks = parse_blocks(prompt)
    raw: dict[str, list[str]] = {}
    for target in TARGETS:
        if target not in blocks:
            raw[target] = []
            continue
        try:  # the entries on disk, less those written since the prompt was built (never in it)
            live = home.memory.entries(target)
            since = set()
            if taken_at is not None:
                rows = home.journal.query(subsystem="memory", target=target, since=taken_at, limit=10_000)
                since = {row.after for row in rows}
        except WorkbenchError:  # an unreadable file: the prompt's own lines, as they are
            live, since = [], set()
        raw[target] = frozen_originals(blocks[target][0], [e for e in live if e not in since], FILE_NAMES[target])
    limits = {target: blocks[target][1] if target in blocks else home.memory.limit(target) for target in TARGETS}
    enabled = {target: home.memory.enabled(target) for target in TARGETS}
    errors: dict[str, str | None] = {target: None for target in TARGETS}
    if taken_at is None:
        at = after if after is not None else home.clock.now()
        return MemorySnapshot.build(raw, limits, enabled, errors, at, time_known=False)
    return MemorySnapshot.build(raw, limits, enabled, errors, taken_at)


def frozen_originals(shown: list[str], live: list[str], file_name: str) -> list[str]:
    """A stored prompt's entries as they were on disk, as far as the live file tells (``live``: its
    entries that may have been in the prompt): each ``[BLOCKED: ...]`` line stands for a live entry a
    scan (ours, or Hermes's character check) would block, the one whose line it is if one is, else
    the next in file order not yet taken; a line with no such entry left (removed since) stays as
    it is. So a blocked entry lines up with itself on the Memory screen instead of reading as one
    entry removed and another added."""
    present = set(shown)
    blocked = [
        entry
        for entry in live
        if entry not in present and (sanitize_entry(entry, file_name) != entry or hermes_characters(entry))
    ]
    originals = []
    for line in shown:
        if not line.startswith(HERMES_SKIPS) or not blocked or line in live:
            originals.append(line)
            continue
        entry = next((e for e in blocked if sanitize_entry(e, file_name) == line), blocked[0])
        blocked.remove(entry)
        originals.append(entry)
    return originals
