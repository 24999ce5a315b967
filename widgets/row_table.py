"""A table read row by row (skills, the timeline): home and end go to the first and last row, and
the cursor's row stays in view when the table is made shorter (a status line under it).

Textual's ``DataTable`` gives home and end to horizontal scrolling and ctrl+home / ctrl+end
to the first and last row; in a table whose cursor is a whole row, a reader pressing home
expects the first row, and a key pressed next (``p`` pin, ``r`` revert) acts on it.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from .cursor_in_view import CursorInView


class RowTable(CursorInView, DataTable):
    BINDINGS = [
        Binding("home", "scroll_top", "First row", show=False),
        Binding("end", "scroll_bottom", "Last row", show=False),
    ]

    def measure_columns(self) -> None:
        """Each column as wide as its widest cell (or its header), now, for a table just filled: DataTable
        measures new rows when it is next idle, and in a terminal a Timeline first shown after other
        screens' work was seen drawn at the headers' widths until the next fill (not reproduced under
        Pilot). Measured afresh: DataTable only ever widens a column, so one that held a long cell
        before a filter stayed wide, and the Timeline's summaries, fitted to the rows shown, ran past
        the table's edge with no … (user trial)."""
        for key, column in self.columns.items():
            widths = [cell_len(cell.plain) for cell in self.get_column(key) if isinstance(cell, Text)]
            column.content_width = max([cell_len(column.label.plain), *widths])
        self.refresh()
