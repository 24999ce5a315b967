"""A one-line text box whose typing redraws only itself.

Textual's ``Input`` sets its ``virtual_size`` (the width of its text) on every change,
and ``virtual_size`` is a layout reactive: each key typed into a search box relaid out
and repainted the whole screen, about half of a keystroke's time on a 120x40 screen
holding a long list. The box has a fixed size and no horizontal scrollbar, so its text
width only matters to its own scrolling: here the same reactive repaints the box alone.
"""

from __future__ import annotations

from textual.geometry import Size
from textual.reactive import Reactive
from textual.widgets import Input


class SearchBox(Input):
    """An ``Input`` for search and filter boxes (fixed height, full width)."""

    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)
