"""The frozen snapshot: what a session's system prompt holds for its whole life.

Taken once at session start (and again on a rebuild, e.g. after compression). Writes
made during the session go to disk at once but never change a snapshot already taken,
which keeps the prompt prefix stable. Entries the threat scan calls dangerous are replaced by a
``[BLOCKED: ...]`` line here only; the live files keep the raw text so it can be removed.
When config.yaml holds a value that makes Hermes inject no memory at all (a quoted char
limit), the snapshot holds no entries either and ``withheld`` says why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from ..errors import WorkbenchError
from .format import FILE_NAMES, TARGETS, Usage, parse_blocks, render_block
from .threats import HERMES_SKIPS, hermes_characters, sanitize_entry

if TYPE_CHECKING:
    from ..home import Home


@dataclass(frozen=True)
class MemorySnapshot:
    entries: Mapping[str, tuple[str, ...]]  # sanitised, as the prompt shows them
    raw_entries: Mapping[str, tuple[str, ...]]  # as they were on disk
    usage: Mapping[str, Usage]  # of the sanitised entries, as the block header shows
    limits: Mapping[str, int]
    enabled: Mapping[str, bool]
    errors: Mapping[str, str | None]  # why a file could not be read (then it counts as empty)
    taken_at: float
    withheld: str | None = None  # why a new Hermes session would inject no memory block

    @classmethod
    def build(
        cls,
        raw: dict[str, list[str]],
        limits: dict[str, int],
        enabled: dict[str, bool],
        errors: dict[str, str | None],
        taken_at: float,
        withheld: str | None = None,
    ) -> MemorySnapshot:
        kept = {t: () if withheld else tuple(raw[t]) for t in TARGETS}
        clean = {t: tuple(sanitize_entry(e, FILE_NAMES[t]) for e in kept[t]) for t in TARGETS}
        return cls(
            entries=MappingProxyType(clean),
            raw_entries=MappingProxyType(kept),
            usage=MappingProxyType({t: Usage.of(list(clean[t]), limits[t]) for t in TARGETS}),
            limits=MappingProxyType(dict(limits)),
            enabled=MappingProxyType(dict(enabled)),
            errors=MappingProxyType(dict(errors)),
            taken_at=taken_at,
            withheld=withheld,
        )

    def block(self, target: str) -> str:
        """Exactly Hermes's system-prompt block for ``target``, or ``""`` when it is empty."""
        return render_block(target, list(self.entries[target]), self.limits[target])

    def blocked(self, target: str) -> list[str]:
        """The raw entries that the snapshot shows as ``[BLOCKED: ...]``."""
        return [raw for raw, shown in zip(self.raw_entries[target], self.entries[target], strict=True) if raw != shown]

    def prompt_text(self) -> str:
        """The MEMORY then USER PROFILE blocks of the enabled stores, joined as in the prompt."""
        return "\n\n".join(b for b in (self.block(t) for t in TARGETS if self.enabled[t]) if b)


def stored_prompt_frozen_at(session) -> float | None:
    """When a stored session's prompt froze memory, as far as state.db tells: as its row was made (Hermes
    builds the prompt at the first turn and makes the row with it; ours stores it with the first
    message). None when the row holds no prompt: a resume builds one, freezing memory then (now)."""
    return (session.started_at or None) if session.system_prompt else None


def snapshot_from_prompt(home: Home, prompt: str, taken_at: float) -> MemorySnapshot:
    """The memory a stored system prompt froze: each block's entries, read back exactly, each
    ``[BLOCKED: ...]`` line taken for the entry it stands for (``frozen_originals``). A store whose
    block is missing was empty (or disabled) when the prompt was built."""
    blocks = parse_blocks(prompt)
    raw: dict[str, list[str]] = {}
    for target in TARGETS:
        if target not in blocks:
            raw[target] = []
            continue
        try:  # the entries on disk, less those written since the prompt was built (never in it)
            live = home.memory.entries(target)
            rows = home.journal.query(subsystem="memory", target=target, since=taken_at, limit=10_000)
            since = {row.after for row in rows}
        except WorkbenchError:  # an unreadable file: the prompt's own lines, as they are
            live, since = [], set()
        raw[target] = frozen_originals(blocks[target][0], [e for e in live if e not in since], FILE_NAMES[target])
    limits = {target: blocks[target][1] if target in blocks else home.memory.limit(target) for target in TARGETS}
    enabled = {target: home.memory.enabled(target) for target in TARGETS}
    return MemorySnapshot.build(raw, limits, enabled, {target: None for target in TARGETS}, taken_at)


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
