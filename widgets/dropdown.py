"""A ``Select`` whose dropdown survives page keys when it has no room to show options.

Textual 8.2.8's ``OptionList._move_page`` looks up the highlighted option's line in a
cache that is only filled once the list has a non-empty content region; a dropdown
squeezed to zero rows raises ``KeyError`` on ``pagedown``/``pageup``. Paging there does
nothing instead.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Select
from textual.widgets._select import SelectCurrent, SelectOverlay


class _Overlay(SelectOverlay):
    def _move_page(self, direction) -> None:
        if self._index_to_line:  # empty until the options are laid out in a visible region
            super()._move_page(direction)


class Dropdown(Select):
    """``Select`` with the guarded overlay (same API)."""

    def compose(self) -> ComposeResult:
        yield SelectCurrent(self.prompt)
        yield _Overlay(type_to_search=self._type_to_search).data_bind(compact=Select.compact)
