"""A table read row by row (skills, the timeline): home and end go to the first and last row, and
the cursor's row stays in view when the table is made shorter (a status line under it).

Textual's ``DataTable`` gives home and end to horizontal scrolling and ctrl+home / ctrl+end
to the first and last row; in a table whose cursor is a whole row, a reader pressing home
expects the first row, and a key pressed next (``p`` pin, ``r`` revert) acts on it.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import DataTable

from .cursor_in_view import CursorInView


class RowTable(CursorInView, DataTable):
    BINDINGS = [
        Binding("home", "scroll_top", "First row", show=False),
        Binding("end", "scroll_bottom", "Last row", show=False),
    ]
