"""A one-line search or filter box: typing redraws only the box, and escape leaves it.

Textual's ``Input`` sets its ``virtual_size`` (the width of its text) on every change,
and ``virtual_size`` is a layout reactive: each key typed into a search box relaid out
and repainted the whole screen, about half of a keystroke's time on a 120x40 screen
holding a long list. The box has a fixed size and no horizontal scrollbar, so its text
width only matters to its own scrolling: here the same reactive repaints the box alone.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.geometry import Size
from textual.reactive import Reactive
from textual.widgets import Input


class SearchBox(Input):
    """An ``Input`` for the search and filter boxes above a list (fixed height, full width)."""

    BINDINGS = [
        Binding("escape", "leave", "Clear", show=False),
        Binding("down", "to_list", "To the list", show=False),
    ]
    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)

    def action_leave(self) -> None:
        """Escape: empty the box and go on to what it filters, the widget after it."""
        self.value = ""
        self.screen.focus_next()

    def action_to_list(self) -> None:
        """Down: on to what the box filters, its text kept (as tab does), where the arrows go on."""
        self.screen.focus_next()
