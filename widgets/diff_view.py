"""A literal line diff: ``-`` removed lines, ``+`` added lines, kept lines in between.

Takes the engine's plain diff data (a list of ``(kind, line)`` with kind " ", "+" or
"-") and folds long runs of kept lines so the change stays in view.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.content import Content
from textual.widgets import Static

from engine.diffs import WHITESPACE_ONLY, shown_diff, whitespace_only
from engine.textsafety import clipped

from .literal import assemble, wrap

STYLES = {"+": ("+ ", "$mark-added"), "-": ("- ", "$mark-removed"), " ": ("  ", "")}


def diff_content(lines: Iterable[tuple[str, str]], *, context: int = 2, width: int | None = None) -> Content:
    """Render diff lines, keeping ``context`` kept lines around each change. ``width``: wrap each
    line's text to it, under its first character (a ``+`` never stands alone above its text)."""
    lines = list(lines)
    shown = shown_diff(lines, context)
    if not shown:
        return Content.styled("(no change)", "$text-muted")
    out = [Content.styled(WHITESPACE_ONLY, "$text-muted")] if whitespace_only(lines) else []
    for diff_line in shown:
        if diff_line is None:
            out.append(Content.styled("  …", "$text-muted"))
            continue
        kind, line = diff_line
        prefix, style = STYLES.get(kind, STYLES[" "])
        text = assemble((clipped(line), style))
        rows = wrap(text, width - len(prefix)) if width and width > len(prefix) + 1 else [text]
        out.append(Content.assemble((prefix, f"bold {style}" if style else ""), rows[0]))
        out += [Content.assemble(" " * len(prefix), row) for row in rows[1:]]
    return Content("\n").join(out)


class DiffView(Static):
    """Shows a diff; set it with ``show(lines)``, empty it with ``clear()``."""

    DEFAULT_CSS = """
    DiffView { height: auto; }
    """

    lines: tuple[tuple[str, str], ...] | None = None  # None: no diff at all (not an empty one)
    drawn_at: int | None = None  # the width the lines were wrapped to

    def show(self, lines: Iterable[tuple[str, str]]) -> None:
        self.lines = tuple(lines)
        self._draw()

    def clear(self) -> None:
        """Show nothing (``update("")`` alone would be undone by the next resize, which draws ``lines``)."""
        self.lines = None
        self._draw()

    def on_resize(self) -> None:
        if self.content_size.width != self.drawn_at:  # (a change of height wraps nothing anew)
            self._draw()

    def _draw(self) -> None:
        self.drawn_at = self.content_size.width
        self.update("" if self.lines is None else diff_content(self.lines, width=self.drawn_at or None))
