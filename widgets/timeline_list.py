"""The timeline as a table: rows newest first, each group under one collapsible header row.

Data in by ``show(rows, titles, collapsed)`` (engine ``timeline.Row`` objects, group
titles by key, the set of collapsed groups); out by ``Highlighted`` (a row or a group
key) and ``NearEnd`` (the cursor is close to the last loaded row: load older ones).
Every cell is literal text, never markup.
"""

from __future__ import annotations

from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable

from .literal import visible
from .row_table import RowTable

NEAR_END = 20  # rows from the bottom at which older rows are asked for


class TimelineList(RowTable):
    DEFAULT_CSS = """
    TimelineList { background: $surface; border: round $primary 40%; height: 1fr; }
    TimelineList:focus { border: round $primary; }
    """
    COLUMNS = ("when", "actor", "what", "session")

    class Highlighted(Message):
        def __init__(self, row, group: str | None) -> None:
            super().__init__()
            self.row = row  # an engine timeline Row, or None on a group header
            self.group = group

    class NearEnd(Message):
        """The cursor is near the last loaded row."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.rows_by_key: dict[str, object] = {}
        self.group_by_key: dict[str, str] = {}

    def on_mount(self) -> None:
        for column in self.COLUMNS:
            self.add_column(column, key=column)

    def show(self, rows: list, titles: dict[str, str], collapsed: set[str]) -> None:
        """Replace the table; a group sits where its newest row is, its rows under it unless collapsed."""
        current = self.current_key
        members: dict[str, list] = {}
        for row in rows:
            if row.group:
                members.setdefault(row.group, []).append(row)
        self.clear()
        self.rows_by_key, self.group_by_key = {}, {}
        placed: set[str] = set()
        for row in rows:
            if row.group is None:
                self._add_row(row, "")
                continue
            if row.group in placed:
                continue
            placed.add(row.group)
            group = row.group
            key = f"group:{group}"
            mark = "▸" if group in collapsed else "▾"
            self.group_by_key[key] = group
            self.add_row(
                Text(row.when[:16].replace("T", " "), "bold"),
                Text(row.actor, "bold"),
                Text(f"{mark} {visible(titles.get(group, group))}", "bold"),
                Text(visible(row.session_id or "-")),
                key=key,
            )
            if group not in collapsed:
                for member in members[group]:
                    self._add_row(member, "  ")
        self.border_title = f"{len(rows)} change{'s' * (len(rows) != 1)} loaded"
        keys = list(self.rows_by_key) + list(self.group_by_key)
        if current in keys:
            self.move_cursor(row=self.get_row_index(current))

    def _add_row(self, row, indent: str) -> None:
        key = f"row:{row.id}"
        self.rows_by_key[key] = row
        self.add_row(
            Text(row.when[:16].replace("T", " ")),
            Text(row.actor),
            Text(indent + visible(row.summary)),
            Text(visible(row.session_id or "-")),
            key=key,
        )

    @property
    def current_key(self) -> str | None:
        if not self.row_count:
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value

    @property
    def current(self):
        """(row, None) on a row, (None, group key) on a group header, (None, None) when empty."""
        key = self.current_key or ""
        return self.rows_by_key.get(key), self.group_by_key.get(key)

    def _on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        row, group = self.current
        self.post_message(self.Highlighted(row, group))
        if self.row_count - event.cursor_row <= NEAR_END:
            self.post_message(self.NearEnd())
