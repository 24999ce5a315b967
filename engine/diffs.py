"""Line diffs: which lines a change kept, removed and added, and the few around each change a reader
needs (pure, so the widgets may use it as the CLI and the engine do)."""

from __future__ import annotations

from collections.abc import Iterable
from difflib import SequenceMatcher

DiffLine = tuple[str, str]  # (" " | "+" | "-", line)


def line_diff(before: str, after: str) -> list[DiffLine]:
    """Every line of ``before``/``after`` marked kept (" "), removed ("-") or added ("+")."""
    old, new = before.splitlines(), after.splitlines()
    lines: list[DiffLine] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if op == "equal":
            lines.extend((" ", line) for line in old[i1:i2])
            continue
        lines.extend(("-", line) for line in old[i1:i2])
        lines.extend(("+", line) for line in new[j1:j2])
    return lines


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
