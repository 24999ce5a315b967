"""Frozen snapshot beside live memory, entry by entry: which entries share a row.

The Memory screen draws the snapshot a session's prompt holds next to the file on disk
so that the same entry sits on the same row in both columns. Each row holds a frozen
entry, a live one, or both:

* ``unchanged``: the same text on both sides;
* ``changed``: a frozen entry and the live entry it became (its journal successor when
  the journal links them, else the most similar new entry, as external edits are
  journaled; never one the journal says was removed);
* ``added`` (live only) and ``removed`` (frozen only);
* ``moved``: an entry on both sides that another order of entries pushed onto two
  rows (each side keeps its own order), one row holding each copy;
* ``unlisted``: an entry of one side whose copy on the other side is past that side's
  listing cut (a store far over its limit lists only its first entries): neither added
  nor removed, and nothing to mark.

The rows keep both sides in their own order and put as many unchanged entries side by
side as that allows, then as many changed pairs.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from ..diffs import shared_ends
from .format import pair_changes

UNCHANGED, CHANGED, ADDED, REMOVED, MOVED = "unchanged", "changed", "added", "removed", "moved"
UNLISTED = "unlisted"
# The table ``align`` fills has a cell per (frozen, live) pair: two stores of 50,000 entries each (a
# file pasted far past its limit) took gigabytes. Past this many cells, ``_linear`` lines them up.
MOST_CELLS = 250_000


@dataclass(frozen=True)
class Row:
    """One row: the index of its frozen entry and of its live entry (None for a blank slot)."""

    status: str
    frozen: int | None
    live: int | None


def align(
    frozen: Sequence[str],
    live: Sequence[str],
    links: Mapping[str, str | None] | None = None,
    unlisted: tuple[Collection[str], Collection[str]] = ((), ()),
) -> list[Row]:
    """The rows that show ``frozen`` beside ``live``, top to bottom; ``links`` maps a frozen
    entry to the live entry the journal says it became, or to None when it was removed
    (``history.successors``); ``unlisted`` holds the entries each side has past its listing
    cut, so that an entry the other side's cut hides is neither added, removed nor changed."""
    frozen_on = _Side(set(frozen), set(unlisted[0]))
    live_on = _Side(set(live), set(unlisted[1]))
    if len(frozen) * len(live) > MOST_CELLS:
        return _linear(frozen, live, frozen_on, live_on)
    changed = _changed_pairs(frozen, live, links or {}, frozen_on, live_on)
    exact = min(len(frozen), len(live)) + 1  # one unchanged row outweighs every changed pair

    def weight(i: int, j: int) -> int:
        if frozen[i] == live[j]:
            return exact
        return 1 if (frozen[i], live[j]) in changed else 0

    # best[i][j]: the most weight rows can hold for frozen[i:] beside live[j:]
    best = [[0] * (len(live) + 1) for _ in range(len(frozen) + 1)]
    for i in reversed(range(len(frozen))):
        for j in reversed(range(len(live))):
            w = weight(i, j)
            best[i][j] = max(best[i + 1][j], best[i][j + 1], best[i + 1][j + 1] + w if w else 0)
    rows: list[Row] = []
    i = j = 0
    while i < len(frozen) or j < len(live):
        if i < len(frozen) and j < len(live) and weight(i, j) and best[i][j] == best[i + 1][j + 1] + weight(i, j):
            rows.append(Row(UNCHANGED if frozen[i] == live[j] else CHANGED, i, j))
            i, j = i + 1, j + 1
        elif j == len(live) or (i < len(frozen) and best[i][j] == best[i + 1][j]):
            rows.append(Row(live_on.status(frozen[i], REMOVED), i, None))  # removed before added
            i += 1
        else:
            rows.append(Row(frozen_on.status(live[j], ADDED), None, j))
            j += 1
    return rows


@dataclass(frozen=True)
class _Side:
    """The entries one side lists and those it holds past its listing cut."""

    listed: set[str]
    rest: set[str]

    def holds(self, entry: str) -> bool:
        return entry in self.listed or entry in self.rest

    def status(self, entry: str, absent: str) -> str:
        """The status of the other side's ``entry`` on a row of its own: ``absent`` when this side lacks it."""
        if entry in self.listed:
            return MOVED
        return UNLISTED if entry in self.rest else absent


def _changed_pairs(
    frozen: Sequence[str], live: Sequence[str], links: Mapping[str, str | None], frozen_on: _Side, live_on: _Side
) -> set[tuple[str, str]]:
    """(frozen, live) pairs of a gone entry and a new one that is its edit: journal links
    first, then the most similar of the rest (not those the journal says were removed)."""
    gone = [e for e in dict.fromkeys(frozen) if not live_on.holds(e)]
    new = [e for e in dict.fromkeys(live) if not frozen_on.holds(e)]
    pairs: dict[str, str] = {}  # new -> gone
    taken = {old for old in gone if old in links and links[old] is None}
    for old in gone:
        successor = links.get(old)
        if successor is not None and successor in new and successor not in pairs:
            pairs[successor] = old
    taken.update(pairs.values())
    pairs.update(pair_changes([e for e in gone if e not in taken], [e for e in new if e not in pairs]))
    return {(old, entry) for entry, old in pairs.items()}


def _linear(frozen: Sequence[str], live: Sequence[str], frozen_on: _Side, live_on: _Side) -> list[Row]:
    """Rows in linear time and memory, for stores too large to weigh every pair: the entries both
    sides start and end with are unchanged rows, the rest of each side removed (or moved) then added
    (or moved) rows, with no changed pairs."""
    head, tail = shared_ends(frozen, live)
    rows = [Row(UNCHANGED, i, i) for i in range(head)]
    rows += [Row(live_on.status(frozen[i], REMOVED), i, None) for i in range(head, len(frozen) - tail)]
    rows += [Row(frozen_on.status(live[j], ADDED), None, j) for j in range(head, len(live) - tail)]
    rows += [Row(UNCHANGED, len(frozen) - tail + k, len(live) - tail + k) for k in range(tail)]
    return rows
