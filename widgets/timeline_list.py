"""The timeline as a table: rows newest first, each group under one collapsible header row.

Data in by ``show(rows, titles, collapsed, heads=...)`` (engine ``timeline.Row`` objects, group
titles by key, the set of collapsed groups, each group header's actor and session); out by
``Highlighted`` (a row or a group key) and ``NearEnd`` (the cursor is close to the last loaded
row: load older ones). On
any row the cursor stays on that row (by its id, or its group) as new changes arrive, and
the title counts those that arrived above it (``home`` goes to them).
Every cell is literal text, never markup.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable

from engine.clock import shown_time
from engine.textsafety import inline

from .literal import cut_cells, tail, visible
from .row_table import RowTable

NEAR_END = 20  # rows from the bottom at which older rows are asked for


@dataclass(frozen=True)
class Layout:
    """The columns as the table's width allows: how ``when`` is written, and whether ``session`` shows."""

    when: str
    session: bool


class TimelineList(RowTable):
    DEFAULT_CSS = """
    TimelineList { background: $surface; border: round $primary 40%; height: 1fr; }
    TimelineList:focus { border: round $primary; }
    """
    COLUMNS = ("when", "actor", "session", "what")
    SESSION_CHARS = 14  # "…022919_dacddb": before the summaries, so a long one never pushes it out of view
    WHEN_SPEC, WHEN_CHARS = "%Y-%m-%d %H:%M", 16  # "2026-12-04 18:07"
    SHORT_WHEN = ("%m-%d %H:%M", 11)  # "12-04 18:07": the year gives way first (the detail names it)
    ROOMY_WHAT = 32  # narrower than this, the year and then the session column give way to the summaries
    MIN_WHAT = 12  # narrower than this, the summaries are left to scroll sideways rather than cut

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
        self.unseen: set[int] = set()  # ids of rows that arrived while the cursor was lower down
        self.known: set[int] = set()  # ids of the rows shown
        self.members: dict[str, list] = {}  # a group's rows
        self.loaded = ""
        self.group_by_key: dict[str, str] = {}
        self.shown: tuple[list, dict[str, str], set[str]] | None = None  # show()'s data, shown again on a resize
        self.heads: dict[str, tuple[str, str | None]] = {}  # show()'s group header actors and sessions
        self.what_cells: int | None = None  # the room the summaries are cut to (with …), None: not cut
        self.shape = Layout(self.WHEN_SPEC, True)  # the columns shown, as the width allows

    def on_mount(self) -> None:
        self._add_columns()

    def _add_columns(self) -> None:
        for column in self.COLUMNS:
            if column != "session" or self.shape.session:
                self.add_column(column, key=column, width=self.SESSION_CHARS if column == "session" else None)

    def show(
        self,
        rows: list,
        titles: dict[str, str],
        collapsed: set[str],
        *,
        arrived: bool = False,
        heads: dict[str, tuple[str, str | None]] | None = None,
    ) -> None:
        """Replace the table; a group sits where its newest row is, its rows under it unless collapsed.

        The cursor stays on its row (its id, or its group's header), the first row included: a
        view that followed new changes from there moved the row under a key just pressed (``r``,
        its question open) to a group Hermes wrote meanwhile. The title counts the rows that
        arrived above it since (``home`` goes to them). Only ``arrived`` rows count, while listed: not
        those an older page or a cleared filter brings into the list, nor those a filter hides. A
        row no longer listed (filtered out): the first row."""
        self.shown = (rows, titles, collapsed)
        self.heads = heads or {}
        current = self.current_key
        shape, self.what_cells = self._fit(rows, collapsed)
        if shape != self.shape:
            self.shape = shape
            self.clear(columns=True)
            self._add_columns()
        if shape.session:
            self.columns["session"].width = self._session_cells(rows)
        ids = {row.id for row in rows}
        if arrived and self.known:
            self.unseen |= ids - self.known
        self.unseen &= ids
        self.known = ids
        self.members = members = {}
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
            by, session = self.heads.get(group, (row.by, row.session))
            self.add_row(
                *self._cells(
                    row.at, Text(by, "bold"), session, Text(self._what(f"{mark} {visible(titles.get(group, group))}"))
                ),
                key=key,
            )
            if group not in collapsed:
                for member in members[group]:
                    self._add_row(member, "  ")
        self.measure_columns()
        self.loaded = f"{len(rows)} change{'s' * (len(rows) != 1)} loaded"
        keys = list(self.rows_by_key) + list(self.group_by_key)
        if current not in keys:
            self.unseen.clear()
            self.move_cursor(row=0)
            self.scroll_home(animate=False)
        else:
            self.move_cursor(row=self.get_row_index(current))
        self._retitle()

    def _retitle(self) -> None:
        """How many rows are loaded, and how many newer ones arrived while the cursor was lower down."""
        row, group = self.current
        here = row.id if row is not None else max((r.id for r in self.members.get(group, [])), default=0)
        fresh = sum(1 for i in self.unseen if i > here)
        self.border_title = self.loaded + (f" · {fresh} new above (home)" if fresh else "")

    def _add_row(self, row, indent: str) -> None:
        key = f"row:{row.id}"
        self.rows_by_key[key] = row
        self.add_row(*self._cells(row.at, Text(row.by), row.session, self._summary(row, indent)), key=key)

    def _cells(self, at: float, by: Text, session: str | None, what: Text) -> list[Text]:
        """A line's cells for the columns shown; a group's header (``by`` bold) is bold throughout."""
        when = Text(shown_time(at, self.shape.when) or "?", by.style)
        what.stylize(by.style)
        return [when, by, self._session(session), what] if self.shape.session else [when, by, what]

    def _summary(self, row, indent: str) -> Text:
        """The row's summary; a row that was undone (and not redone) is dimmed behind ↶; one found after
        newer-stamped rows were journaled says when, after it (``Row.found_later``; the detail says it too).
        The summary's tail gives way to that mark, short where the summary would keep fewer than
        ``ROOMY_WHAT`` cells (at 80 columns the whole mark left `staged memory…`): cut off, a row dated before
        the rows under it looked misordered."""
        lead = indent + ("" if row.reverted_by is None else "↶ ")
        found = f" · ↳ {row.found_later}" if row.found_later else ""
        if self.what_cells is None:
            summary = visible(row.summary)
        else:
            room = self.what_cells - cell_len(lead)
            if found and room - cell_len(found) < self.ROOMY_WHAT:
                found = f" · ↳ {row.found_later_short}"
            room -= cell_len(found)  # (a rewrite's, in the room left, with both versions where they differ)
            summary = cut_cells(visible(row.fitted(room)), room, words=True)
        text = self._what(f"{lead}{summary}{found}")
        return Text(text) if row.reverted_by is None else Text(text, "dim")

    def _fit(self, rows: list, collapsed: set[str]) -> tuple[Layout, int | None]:
        """The columns shown and the cells the summary column has beside them (each column pads a cell on
        both sides), so a summary is cut with … where the table ends, not mid-word at its edge with no sign.
        Where the summaries would get fewer than ``ROOMY_WHAT`` cells (60 columns) beside the widest short
        found-later mark, the year gives way, then the session column: the detail pane names both whole.
        The lines about to be shown say whether a scrollbar will take cells (one shown now may be about to go)."""
        region = self.scrollable_content_region
        groups = {row.group for row in rows if row.group}
        lines = 1 + len(groups) + sum(1 for row in rows if row.group not in collapsed)  # the header too
        scrollbar = self.styles.scrollbar_size_vertical
        width = (
            region.width
            + (scrollbar if self.show_vertical_scrollbar else 0)
            - (scrollbar if lines > region.height else 0)
        )
        actor = max([len("actor"), *(len(visible(row.by)) for row in rows)])
        session = self._session_cells(rows) + 2 * self.cell_padding
        room = width - actor - 3 * 2 * self.cell_padding  # (when, actor and what)
        spec, when = self.SHORT_WHEN
        shapes = [
            (Layout(self.WHEN_SPEC, True), self.WHEN_CHARS + session),
            (Layout(spec, True), when + session),
            (Layout(spec, False), when),
        ]
        mark = max((cell_len(f" · ↳ {row.found_later_short}") for row in rows if row.found_later), default=0)
        roomy = self.ROOMY_WHAT + mark  # (a found-later mark beside a summary counts: at 80 columns the columns
        # kept their room and left `staged memory… · ↳ found 22:06`)
        shape, taken = next((fit for fit in shapes if room - fit[1] >= roomy), shapes[-1])
        return shape, room - taken if room - taken >= self.MIN_WHAT else None

    def _session_cells(self, rows: list) -> int:
        """The session column's width: a session's end, or its header's alone while no row loaded names
        one (every `-` left 14 cells the summaries could use)."""
        return self.SESSION_CHARS if any(row.session for row in rows) else len("session")

    def _what(self, text: str) -> str:
        """A summary or a group's title in the room left, cut before a word it would split (prose)."""
        return text if self.what_cells is None else cut_cells(text, self.what_cells, words=True)

    def on_resize(self) -> None:
        if self.shown is not None and self._fit(self.shown[0], self.shown[2]) != (self.shape, self.what_cells):
            self.show(*self.shown, heads=self.heads)

    def _session(self, session: str | None) -> Text:
        """A session, its end when long (the detail line below the table names it whole), on one line as the
        detail names it (``inline``): a cell drew only an id's first line."""
        return Text(tail(inline(session), self.SESSION_CHARS) if session else "-")

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
        if self.unseen:
            if self.cursor_row == 0:  # (not the event's row: a rebuild posts one for row 0 on its way)
                self.unseen.clear()
            self._retitle()
        row, group = self.current
        self.post_message(self.Highlighted(row, group))
        if self.row_count - event.cursor_row <= NEAR_END:
            self.post_message(self.NearEnd())
