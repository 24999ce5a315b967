"""Line diffs: which lines a change kept, removed and added, and the few around each change a reader
needs (pure, so the widgets may use it as the CLI and the engine do)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from difflib import SequenceMatcher
from typing import Any

DiffLine = tuple[str, str]  # (" " | "+" | "-", line)


def shared_ends(old: Sequence[Any], new: Sequence[Any]) -> tuple[int, int]:
    """How many items ``old`` and ``new`` start with alike, and how many of the rest they end with alike:
    matched in linear time, so only what lies between needs a quadratic matcher."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return head, tail


def line_diff(before: str, after: str) -> list[DiffLine]:
    """Every line of ``before``/``after`` marked kept (" "), removed ("-") or added ("+")."""
    old, new = before.splitlines(), after.splitlines()
    # the lines both start and end with are kept, matched in linear time; only those between are diffed
    # (a memory file's '§' lines repeat thousands of times, which made the matcher quadratic: a 10 MB
    # file's repair preview never came back), and past ``MOST_MATCHED`` pairs they are all removed and added
    head, tail = shared_ends(old, new)
    middle_old, middle_new = old[head : len(old) - tail], new[head : len(new) - tail]
    lines: list[DiffLine] = [(" ", line) for line in old[:head]]
    if len(middle_old) * len(middle_new) > MOST_MATCHED:
        lines.extend(("-", line) for line in middle_old)
        lines.extend(("+", line) for line in middle_new)
    else:
        matcher = SequenceMatcher(None, middle_old, middle_new, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                lines.extend((" ", line) for line in middle_old[i1:i2])
                continue
            lines.extend(("-", line) for line in middle_old[i1:i2])
            lines.extend(("+", line) for line in middle_new[j1:j2])
    lines.extend((" ", line) for line in old[len(old) - tail :])
    return lines


MOST_MATCHED = 4_000_000  # line pairs ``line_diff`` lets the matcher weigh (2,000 lines each side)


def in_context(lines: Iterable[DiffLine], context: int = 2) -> list[DiffLine | None]:
    """The changed lines of a diff with ``context`` kept lines around each, None for each run of kept lines
    left out, so a one-line change in a long file stays in view (the TUI's diff and ``timeline show`` alike);
    empty when nothing changed."""
    lines = list(lines)
    changed = [i for i, (kind, _) in enumerate(lines) if kind != " "]
    keep = {j for i in changed for j in range(i - context, i + context + 1)}
    shown: list[DiffLine | None] = []
    for i, line in enumerate(lines):
        if i in keep:
            shown.append(line)
        elif changed and (not shown or shown[-1] is not None):
            shown.append(None)
    return shown
