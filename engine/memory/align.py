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
  rows (each side keeps its own order), one row holding each copy.

The rows keep both sides in their own order and put as many unchanged entries side by
side as that allows, then as many changed pairs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..diffs import shared_ends
from .format import pair_changes

UNCHANGED, CHANGED, ADDED, REMOVED, MOVED = "unchanged", "changed", "added", "removed", "moved"
# The table ``align`` fills has a cell per (frozen, live) pair: two stores of 50,000 entries each (a
# file pasted far past its limit) took gigabytes. Past this many cells, ``_linear`` lines them up.
MOST_CELLS = 250_000


@dataclass(frozen=True)
class Row:
    """One row: the index of its frozen entry and of its live entry (None for a blank slot)."""

    status: str
    frozen: int | None
    live: int | None


def align(frozen: Sequence[str], live: Sequence[str], links: Mapping[str, str | None] | None = None) -> list[Row]:
    """The rows that show ``frozen`` beside ``live``, top to bottom; ``links`` maps a frozen
    entry to the live entry the journal says it became, or to None when it was removed
    (``history.successors``)."""
    if len(frozen) * len(live) > MOST_CELLS:
        return _linear(frozen, live)
    changed = _changed_pairs(frozen, live, links or {})
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
    frozen_set, live_set = set(frozen), set(live)
    rows: list[Row] = []
    i = j = 0
    while i < len(frozen) or j < len(live):
        if i < len(frozen) and j < len(live) and weight(i, j) and best[i][j] == best[i + 1][j + 1] + weight(i, j):
            rows.append(Row(UNCHANGED if frozen[i] == live[j] else CHANGED, i, j))
            i, j = i + 1, j + 1
        elif j == len(live) or (i < len(frozen) and best[i][j] == best[i + 1][j]):
            rows.append(Row(MOVED if frozen[i] in live_set else REMOVED, i, None))  # removed before added
            i += 1
        else:
            rows.append(Row(MOVED if live[j] in frozen_set else ADDED, None, j))
            j += 1
    return rows


def _changed_pairs(frozen: Sequence[str], live: Sequence[str], links: Mapping[str, str | None]) -> set[tuple[str, str]]:
    """(frozen, live) pairs of a gone entry and a new one that is its edit: journal links
    first, then the most similar of the rest (not those the journal says were removed)."""
    frozen_set, live_set = set(frozen), set(live)
    gone = [e for e in dict.fromkeys(frozen) if e not in live_set]
    new = [e for e in dict.fromkeys(live) if e not in frozen_set]
    pairs: dict[str, str] = {}  # new -> gone
    taken = {old for old in gone if old in links and links[old] is None}
    for old in gone:
        successor = links.get(old)
        if successor is not None and successor in new and successor not in pairs:
            pairs[successor] = old
    taken.update(pairs.values())
    pairs.update(pair_changes([e for e in gone if e not in taken], [e for e in new if e not in pairs]))
    return {(old, entry) for entry, old in pairs.items()}


def _linear(frozen: Sequence[str], live: Sequence[str]) -> list[Row]:
    """Rows in linear time and memory, for stores too large to weigh every pair: the entries both
    sides start and end with are unchanged rows, the rest of each side removed (or moved) then added
    (or moved) rows, with no changed pairs."""
    head, tail = shared_ends(frozen, live)
    frozen_set, live_set = set(frozen), set(live)
    rows = [Row(UNCHANGED, i, i) for i in range(head)]
    rows += [Row(MOVED if frozen[i] in live_set else REMOVED, i, None) for i in range(head, len(frozen) - tail)]
    rows += [Row(MOVED if live[j] in frozen_set else ADDED, None, j) for j in range(head, len(live) - tail)]
    rows += [Row(UNCHANGED, len(frozen) - tail + k, len(live) - tail + k) for k in range(tail)]
    return rows
