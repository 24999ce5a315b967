"""How alike two memory entries are: one scorer and one threshold for every skin.

The approval preview's duplicate warnings, the editor's "nearly the same as" note and
its merge suggestions, the closest live entry to a stale pin, and the local provider's
merging of a fact the agent adds all score with rapidfuzz's token-set ratio (0-100:
word order and a shorter text inside a longer one count as alike) against one
setting, so they can never disagree about what is similar.

rapidfuzz is imported on the first score, not with this module: the memory store imports
this module, and importing rapidfuzz took about 10 ms of CPU in every process that opens
the store, though most (a listing, ``pending list``) never compare two entries.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

THRESHOLD_KEY = "approvals.duplicate_threshold"  # score at which an entry counts as a near-duplicate
CLOSE_FLOOR = 30.0  # score below which an entry is not worth naming as "closest"
NAMED = 3  # near-duplicates a warning names on screen; the rest are counted


def score(a: str, b: str) -> float:
    """100 for the same text, else rapidfuzz's token-set ratio."""
    if a == b:
        return 100.0
    return _token_set_ratio()(a, b)


@functools.cache
def _token_set_ratio():
    """rapidfuzz's scorer, imported once, on the first score (see the module's docstring): an import
    statement per score cost about 2 µs in the pairwise loops below."""
    from rapidfuzz.fuzz import token_set_ratio

    return token_set_ratio


def near_duplicates(
    proposed: Iterable[str], existing: Iterable[str], threshold: float, ignore: Iterable[str] = ()
) -> list[dict]:
    """Existing entries equal or nearly equal (score >= ``threshold``) to a proposed text.

    ``ignore`` holds entries the proposal itself replaces, which are no duplicates of it.
    """
    skip = set(ignore)
    entries = [entry for entry in existing if entry not in skip]
    found = []
    for text in dict.fromkeys(proposed):
        for entry in entries:
            value = score(text, entry)
            if value >= threshold:
                found.append({"proposed": text, "existing": entry, "score": round(value, 1), "exact": entry == text})
    return found


def strongest(found: list[dict], n: int = NAMED) -> tuple[list[dict], int]:
    """The ``n`` strongest of ``near_duplicates``' findings (exact, then by score, then in entry
    order) and how many more there are: what a warning has room to name."""
    ranked = sorted(found, key=lambda d: (not d["exact"], -d["score"]))
    return ranked[:n], len(ranked) - len(ranked[:n])


def closest(text: str, entries: Iterable[str], n: int = 1, floor: float = CLOSE_FLOOR) -> list[str]:
    """Up to ``n`` entries most like ``text`` (best first, ties in entry order), none below ``floor``."""
    scored = sorted(((score(text, entry), -i, entry) for i, entry in enumerate(entries)), reverse=True)
    return [entry for value, _, entry in scored[:n] if value >= floor]
