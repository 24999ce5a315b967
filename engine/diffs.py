"""Line diffs: which lines a change kept, removed and added, and the few around each change a reader
needs (pure, so the widgets may use it as the CLI and the engine do)."""

from __future__ import annotations

import re
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
    """Every line of ``before``/``after`` marked kept (" "), removed ("-") or added ("+"). Lines are
    compared with their line ends, so a CRLF is a change; a changed line keeps all of its end but the
    newline (a carriage return shows as ␍), a kept line none. A final newline one side lacks changes the
    last line only where it is kept (text added after a last line without one leaves it as it was)."""
    old, new = _ended(before), _ended(after)
    # the lines both start and end with are kept, matched in linear time; only those between are diffed
    # (a memory file's '§' lines repeat thousands of times, which made the matcher quadratic: a 10 MB
    # file's repair preview never came back), and past ``MOST_MATCHED`` pairs they are all removed and added
    head, tail = shared_ends(old, new)
    middle_old, middle_new = old[head : len(old) - tail], new[head : len(new) - tail]
    lines: list[DiffLine] = [(" ", _bare(line)) for line in old[:head]]
    if len(middle_old) * len(middle_new) > MOST_MATCHED:
        lines.extend(("-", line.removesuffix("\n")) for line in middle_old)
        lines.extend(("+", line.removesuffix("\n")) for line in middle_new)
    else:
        matcher = SequenceMatcher(None, middle_old, middle_new, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                lines.extend((" ", _bare(line)) for line in middle_old[i1:i2])
                continue
            lines.extend(("-", line.removesuffix("\n")) for line in middle_old[i1:i2])
            lines.extend(("+", line.removesuffix("\n")) for line in middle_new[j1:j2])
    lines.extend((" ", _bare(line)) for line in old[len(old) - tail :])
    if lines and lines[-1][0] == " " and before.endswith("\n") != after.endswith("\n"):
        last = lines.pop()[1]
        lines += [("-", last), ("+", last)]
    return lines


def _ended(text: str) -> list[str]:
    """The lines of ``text`` with their ends, the last given a newline it lacks."""
    lines = text.splitlines(keepends=True)
    if lines and not text.endswith("\n"):
        lines[-1] += "\n"
    return lines


def _bare(line: str) -> str:
    """A line without its line end, whichever it is."""
    return line.splitlines()[0] if line.strip("\n") else ""


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


_TRAILING = re.compile(r"[ \t\r]+$")
_DRAWN = str.maketrans({" ": "·", "\t": "→", "\r": "␍"})
WHITESPACE_ONLY = (
    "whitespace only: · is a trailing space, → a tab, ␍ a carriage return; alike lines differ in a final newline"
)


def marked(line: DiffLine | None) -> DiffLine | None:
    """A changed line with the whitespace a reader could not otherwise see drawn as symbols (trailing
    spaces and carriage returns, and every tab, so tabs against spaces show): ``- 2. Step.`` and
    ``+ 2. Step.  `` read alike. Kept lines are as they are."""
    if line is None or line[0] == " ":
        return line
    kind, text = line
    return kind, _TRAILING.sub(lambda run: run.group().translate(_DRAWN), text).replace("\t", "→")


def shown_diff(lines: Iterable[DiffLine], context: int = 2) -> list[DiffLine | None]:
    """A diff as every view shows it: ``in_context``, each changed line ``marked``."""
    return [marked(line) for line in in_context(lines, context)]


def changed_lines(before: str, after: str) -> list[str]:
    """What changed from ``before`` to ``after`` as text lines, ``- old`` and ``+ new`` among two kept lines
    (``  ⋯`` for those left out): how a save refused over another writer's change says it."""
    return ["  ⋯" if line is None else f"{line[0]} {line[1]}" for line in shown_diff(line_diff(before, after))]


def whitespace_only(lines: Iterable[DiffLine]) -> bool:
    """True when a diff changes something, but only whitespace (spaces, tabs, line ends): what a view
    then says (``WHITESPACE_ONLY``), as such a change is easily read as none."""
    lines = list(lines)
    removed = " ".join(text for kind, text in lines if kind == "-")
    added = " ".join(text for kind, text in lines if kind == "+")
    changed = any(kind != " " for kind, _ in lines)
    return changed and removed.split() == added.split()
