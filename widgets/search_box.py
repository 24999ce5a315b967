"""A one-line search or filter box: typing redraws only the box, and escape leaves it.

Textual's ``Input`` sets its ``virtual_size`` (the width of its text) on every change,
and ``virtual_size`` is a layout reactive: each key typed into a search box relaid out
and repainted the whole screen, about half of a keystroke's time on a 120x40 screen
holding a long list. The box has a fixed size and no horizontal scrollbar, so its text
width only matters to its own scrolling: here the same reactive repaints the box alone.

Its hint (the placeholder) is said whole where it fits; in a narrower box Textual showed the first of
the lines it wraps to, which ended on a comma (``…subsystem:skills,``): it keeps the leading parts that
fit, then ``…``.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual.binding import Binding
from textual.geometry import Size
from textual.reactive import Reactive
from textual.widgets import Input

from .literal import cut_cells


class SearchBox(Input):
    """An ``Input`` for the search and filter boxes above a list (fixed height, full width)."""

    BINDINGS = [
        Binding("escape", "leave", "Clear", show=False),
        Binding("down", "to_list", "To the list", show=False),
    ]
    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.hint = self.placeholder  # the whole hint; the placeholder is it as the box's width holds it

    def on_resize(self) -> None:
        self.placeholder = fitted_hint(self.hint, self.scrollable_content_region.width)

    def action_leave(self) -> None:
        """Escape: empty the box and go on to what it filters, the widget after it."""
        self.value = ""
        self.screen.focus_next()

    def action_to_list(self) -> None:
        """Down: on to what the box filters, its text kept (as tab does), where the arrows go on."""
        self.screen.focus_next()


def fitted_hint(hint: str, cells: int) -> str:
    """``hint`` in ``cells`` cells: whole where it fits, else as many of its leading comma-separated parts
    as fit with ``, …`` after them, so it never ends on a comma or inside a word (one part: cut with …)."""
    if cell_len(hint) <= cells:
        return hint
    parts = hint.split(", ")
    for kept in range(len(parts) - 1, 0, -1):
        shown = ", ".join(parts[:kept]) + ", …"
        if cell_len(shown) <= cells:
            return shown
    return cut_cells(hint, cells)
