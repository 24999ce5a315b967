"""A literal line diff: ``-`` removed lines, ``+`` added lines, kept lines in between.

Takes the engine's plain diff data (a list of ``(kind, line)`` with kind " ", "+" or
"-") and folds long runs of kept lines so the change stays in view.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.content import Content
from textual.widgets import Static

from .literal import assemble

STYLES = {"+": ("+ ", "$mark-added"), "-": ("- ", "$mark-removed"), " ": ("  ", "")}


def diff_content(lines: Iterable[tuple[str, str]], *, context: int = 2) -> Content:
    """Render diff lines, keeping ``context`` kept lines around each change."""
    lines = list(lines)
    changed = [i for i, (kind, _) in enumerate(lines) if kind != " "]
    if not changed:
        return Content.styled("(no change)", "$text-muted")
    keep = {j for i in changed for j in range(i - context, i + context + 1)}
    out: list[Content] = []
    skipped = False
    for i, (kind, line) in enumerate(lines):
        if i not in keep:
            skipped = True
            continue
        if skipped:
            out.append(Content.styled("  …", "$text-muted"))
            skipped = False
        prefix, style = STYLES.get(kind, STYLES[" "])
        out.append(assemble((prefix, f"bold {style}" if style else ""), (line, style)))
    if skipped:
        out.append(Content.styled("  …", "$text-muted"))
    return Content("\n").join(out)


class DiffView(Static):
    """Shows a diff; set it with ``show(lines)``."""

    DEFAULT_CSS = """
    DiffView { height: auto; }
    """

    def show(self, lines: Iterable[tuple[str, str]]) -> None:
        self.update(diff_content(lines))
