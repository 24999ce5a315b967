"""The skill library as a table, with a fuzzy filter (rapidfuzz) over name, category and description.

Rows are keyed by skill name, so refreshing after a curator action keeps the cursor on
the same skill. All cells are literal ``rich.text.Text`` (never markup).
"""

from __future__ import annotations

from dataclasses import dataclass

from rapidfuzz import fuzz, process, utils
from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.message import Message
from textual.widgets import DataTable

from engine.clock import shown_time
from engine.textsafety import folder_beside, visible

from .literal import cut_cells
from .row_table import RowTable

NAME_CELLS = 40  # a longer name (or the folder shown beside it) is cut with … here (the detail pane
# holds it whole), so the other columns stay in view; less where the table's width says so
PROVENANCE_CELLS = 30  # a longer one ("user (approved, proposed by Hermes review)") is cut with … here
# (the detail pane names the proposer whole); less where the names need the room
WIDEST = 2 * NAME_CELLS + 1  # the skill column's widest: a name and a folder, each cut to NAME_CELLS
NAME_LEAST = 20  # where the names would get fewer cells (at 60 columns ``depl…`` for deploy-stage and
# deploy-staging alike), the columns the detail pane repeats give way to them, in this order:
YIELDING = ("provenance", "uses")
FIXED = ("category", "state", "pin", "uses", "activity")  # the columns as wide as their widest cell
FILTER_CUTOFF = 60  # rapidfuzz WRatio score over name, category and description a row needs to stay
NAME_CUTOFF = 75  # the score of the name alone that makes a name hit (a typo: deploi, depoly, deply)


@dataclass(frozen=True)
class SkillRow:
    """What the table shows about one skill (built by the screen from the skills store)."""

    name: str
    category: str | None = None
    description: str = ""
    state: str = "active"  # active / stale / archived
    pinned: bool = False
    provenance: str = ""
    owner: str = ""  # the provenance as both skins say it (the engine's ``SkillInfo.owner``: its proposer too)
    proposed_by: str | None = None  # who proposed it, when the user approved it into the library
    use_count: int = 0
    uses_note: str | None = None  # why its counts may not be its own alone (the engine's ``copy_usage``)
    last_active_at: float | None = None  # its last use, view or patch: what the Curator ages it by
    path: str = ""  # its folder relative to skills/ ("devops/foo", ".archive/foo"): unique, the row's key
    problem: str | None = None  # why its SKILL.md does not parse, a YAML error's place first (listed all the same)
    too_long: bool = False  # the problem is only its SKILL.md's length (it parses)
    shared: bool = False  # its name alone does not pick it out (the engine's ``needs_folder``)
    folder: str | None = None  # the folder the engine's label names beside the name (``SkillInfo.label_folder``)
    # why its line in the prompt's skills index is blocked (a threat pattern in its name or description)
    index_problem: str | None = None

    @property
    def ref(self) -> str:
        """How the engine is asked for this very skill: an archived copy, or one whose name alone does
        not pick it out, by its path, else by its name."""
        return self.path if (self.state == "archived" or self.shared) and self.path else self.name

    @property
    def key(self) -> str:
        return self.path or self.name


def fuzzy_filter(skills: list[SkillRow], query: str) -> list[SkillRow]:
    """Skills matching ``query``, best first; an empty query keeps every skill in order.

    The name is scored on its own, so a typo in a short name is not drowned by a long
    description; name hits come first (a substring of the name before a fuzzy one), then
    skills found by their category or description."""
    query = query.strip()
    if not query:
        return list(skills)
    options = dict(scorer=fuzz.WRatio, processor=utils.default_process, limit=None)
    by_name = {
        index: score
        for _, score, index in process.extract(query, [s.name for s in skills], score_cutoff=NAME_CUTOFF, **options)
    }
    by_text = {
        index: score
        for _, score, index in process.extract(
            query,
            [f"{s.name} {s.category or ''} {s.description}" for s in skills],
            score_cutoff=FILTER_CUTOFF,
            **options,
        )
    }
    lowered = query.lower()

    def rank(index: int) -> tuple:
        named = index in by_name
        return (
            not named,
            named and lowered not in skills[index].name.lower(),
            -(by_name[index] if named else by_text[index]),
            index,
        )

    return [skills[index] for index in sorted(by_name.keys() | by_text.keys(), key=rank)]


FOLDER_CELLS = 6  # what a name leaves its folder at least, when the table is narrow: ``…00751``, the end of
# an archived copy's stamp (minutes and seconds)


def _cut(text: str, cells: int, style: str = "") -> Text:
    """A name in at most ``cells`` cells, ending in … when cut."""
    cell = Text(text, style)
    cell.truncate(max(cells, 1), overflow="ellipsis")
    return cell


def _cut_left(text: str, cells: int, style: str = "") -> Text:
    """A folder in at most ``cells`` cells, its start given way to … when cut: its end (an archived copy's
    stamp, ``…00751``) is what tells it from the others."""
    if cell_len(text) <= cells:
        return Text(text, style)
    kept, width = "", 1
    for char in reversed(text):
        if width + cell_len(char) > cells:
            break
        kept, width = char + kept, width + cell_len(char)
    return Text("…" + kept, style)


def name_cell(skill: SkillRow, cells: int, warning: str = "") -> Text:
    """The skill column's cell in at most ``cells`` cells: ⚠ for a skill that does not parse or is blocked in
    the index, then the engine's label (``skill_label``): the name, and in parentheses the folder that tells
    it from a skill of the same name, each cut with … as needed (the name keeps what the folder does not
    need; the folder at least ``FOLDER_CELLS``)."""
    mark = "⚠ " if skill.problem or skill.index_problem else ""
    cells = max(cells - cell_len(mark), 1)
    name = visible(skill.name)
    if skill.folder is None:
        return Text.assemble((mark, warning), _cut(name, min(cells, NAME_CELLS)))
    folder = visible(skill.folder)
    room = cells - 3  # (" (" and ")": the engine's label, ``name (folder)``)
    if cell_len(name) + cell_len(folder) > room:
        marked = folder_beside(folder, name, archive=True)  # (``.archive/…``: an archived copy's marker kept)
        folder = marked if cell_len(name) + cell_len(marked) <= room else folder_beside(folder, name)
    name_cells = min(cell_len(name), NAME_CELLS, max(room - min(cell_len(folder), FOLDER_CELLS), room // 2, 1))
    folder_cells = max(min(room - name_cells, NAME_CELLS), 1)
    # a folder that ends where the name did (``devops/…``) says most at its start, an archived copy's at its end
    shown = _cut(folder, folder_cells, "dim") if folder.endswith("…") else _cut_left(folder, folder_cells, "dim")
    return Text.assemble((mark, warning), _cut(name, name_cells), (" (", "dim"), shown, (")", "dim"))


def counted(skills: list[SkillRow], of: tuple[int, int] | None = None) -> str:
    """The table's title: the skills, then the archived copies apart (``10 skills · 2 archived``), as
    ``skills list`` (which leaves the archived out) and ``curator status`` (``10 active … 2 archived``)
    count them; ``of``: the skills and archived copies a filter chose them from (``3 of 10 skills``)."""
    archived = sum(1 for skill in skills if skill.state == "archived")
    live = len(skills) - archived
    live_of, archived_of = of if of is not None else (live, archived)
    said = f"{live} of {live_of}" if live_of != live else str(live)
    title = f"{said} skill{'s' * (live_of != 1)}"
    if archived_of:
        title += f" · {archived} of {archived_of} archived" if archived_of != archived else f" · {archived} archived"
    return title


def _owner(skill: SkillRow) -> str:
    return visible(skill.owner or skill.provenance or "-")


def _owner_cell(skill: SkillRow, cells: int) -> Text:
    return Text(cut_cells(_owner(skill), cells))


def _day(timestamp: float | None) -> str:
    return (shown_time(timestamp, "%Y-%m-%d") or "?") if timestamp else "never"


class SkillList(RowTable):
    """Skills with category, state, pin, provenance and usage; ``Highlighted`` names the cursor row."""

    DEFAULT_CSS = """
    SkillList { background: $surface; border: round $primary 40%; height: 1fr; }
    SkillList:focus { border: round $primary; }
    """
    COLUMNS = ("skill", "category", "state", "pin", "provenance", "uses", "activity")

    class Highlighted(Message):
        def __init__(self, skill: SkillRow | None) -> None:
            super().__init__()
            self.skill = skill

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, cursor_type="row", zebra_stripes=True)
        self.rows_by_key: dict[str, SkillRow] = {}  # a row's key (its path) -> the skill it shows
        self._fitted_to = self._unfitted  # the columns shown and the skill and provenance cells' rooms

    @property
    def _unfitted(self) -> tuple[tuple[str, ...], int, int]:
        return self.COLUMNS, WIDEST, PROVENANCE_CELLS

    def on_mount(self) -> None:
        for column in self.COLUMNS:
            self.add_column(column, key=column)

    def show(self, skills: list[SkillRow], of: tuple[int, int] | None = None, top: bool = False) -> None:
        """Replace the rows, keeping the cursor on the same skill when it is still listed (by its folder, else
        by its name: archiving or restoring moves the folder), else on its place in the list. ``of``: how
        many skills and archived copies a filter chose them from (``counted``); ``top``: the cursor on the
        first row instead (a new filter's best match)."""
        current, at = self.current, self.cursor_row
        self.clear()
        self.rows_by_key = {skill.key: skill for skill in skills}
        columns, *rooms = self._fitted_to = self._fit()
        self._show_columns(columns)
        for skill in skills:
            cells = self._cells(skill, rooms)
            self.add_row(*(cells[column] for column in columns), key=skill.key)
        self.measure_columns()
        self.border_title = counted(skills, of)
        # the same row, else the same skill by name (archived or restored, its folder moved)
        key = current and (current.key if current.key in self.rows_by_key else self.key_of(current.name))
        if top and skills:
            self.move_cursor(row=0)
        elif key:
            self.move_cursor(row=self.get_row_index(key))
        elif current and skills:  # gone (Hermes deleted it): the row that takes its place, not the top one
            self.move_cursor(row=min(at, len(skills) - 1))
        elif not skills:
            self.post_message(self.Highlighted(None))

    def _fixed_cells(self, skill: SkillRow) -> dict[str, Text]:
        """The cells of the columns whose width is their widest cell's."""
        theme = self.app.current_theme  # state colours from the theme, so they read well on light ones too
        state_styles = {"active": theme.success or "", "stale": theme.warning or "", "archived": "dim"}
        return {
            "category": Text(visible(skill.category or "-")),
            "state": Text(skill.state, state_styles.get(skill.state, "")),
            "pin": Text("yes" if skill.pinned else ""),
            "uses": Text(str(skill.use_count), justify="right"),
            "activity": Text(_day(skill.last_active_at)),
        }

    def _cells(self, skill: SkillRow, rooms: list[int]) -> dict[str, Text]:
        """Every column's cell, the skill and provenance cut to their ``rooms``."""
        named = name_cell(skill, rooms[0], self.app.current_theme.warning or "")
        return {"skill": named, "provenance": _owner_cell(skill, rooms[1]), **self._fixed_cells(skill)}

    def _fit(self) -> tuple[tuple[str, ...], int, int]:
        """The columns to show and the cells the skill and provenance columns may take, so that every column
        shown, ``activity`` last, stays in view with no sideways scrolling: what the table's width leaves
        them (less a scrollbar's cells when the rows do not fit), the names first (up to ``WIDEST``; at 80
        columns a proposer's 30 cells cut every name to ``git-…``), the provenance the rest, up to
        ``PROVENANCE_CELLS``; each at least its header's width. Where that leaves the names under
        ``NAME_LEAST`` cells, the ``YIELDING`` columns go, one by one."""
        skills = self.rows_by_key.values()
        rows_fit = len(skills) + self.show_header <= self.size.height  # (else a scrollbar takes its cells)
        width = self.size.width - (0 if rows_fit else self.styles.scrollbar_size_vertical)
        if width <= 0:  # not laid out yet: fitted at the first resize
            return self._unfitted
        fixed = [self._fixed_cells(skill) for skill in skills]
        padding = 2 * self.cell_padding
        widths = {key: max([cell_len(key), *(cell_len(row[key].plain) for row in fixed)]) + padding for key in FIXED}
        names = max((name_cell(skill, WIDEST).cell_len for skill in skills), default=0)
        owners = max((cell_len(_owner(skill)) for skill in skills), default=0)
        columns = self.COLUMNS
        for gone in (*YIELDING, None):
            shown = "provenance" in columns
            both = width - sum(widths.get(key, 0) for key in columns) - padding * (1 + shown)
            provenance = max(min(owners, PROVENANCE_CELLS, both - min(names, WIDEST)), len("provenance")) * shown
            room = max(min(WIDEST, both - provenance), len("skill"))
            if room >= min(names, NAME_LEAST) or gone is None:
                break
            columns = tuple(key for key in columns if key != gone)
        return columns, room, provenance

    def _show_columns(self, columns: tuple[str, ...]) -> tuple[str, ...]:
        """Make the table's columns ``columns`` (those after the first that differs go and come again, as a
        column is only ever added last): the columns added, whose cells are still to be filled."""
        shown = tuple(key.value or "" for key in self.columns)
        pairs = enumerate(zip(shown, columns, strict=False))
        same = next((i for i, (was, now) in pairs if was != now), min(len(shown), len(columns)))
        for key in shown[same:]:
            self.remove_column(key)
        for key in columns[same:]:
            self.add_column(key, key=key)
        return columns[same:]

    def on_resize(self, event: events.Resize) -> None:
        """Fit the columns to the new width (``_fit``): the names and provenances cut again, and a column
        that gave way shown again where it fits (or the other way round)."""
        super().on_resize(event)
        fit = self._fit()
        if fit == self._fitted_to:
            return
        columns, *rooms = self._fitted_to = fit
        refill = {"skill", "provenance", *self._show_columns(columns)} & set(columns)
        for key, skill in self.rows_by_key.items():
            cells = self._cells(skill, rooms)
            for column in refill:
                self.update_cell(key, column, cells[column])
        self.measure_columns()

    @property
    def current(self) -> SkillRow | None:
        if not self.row_count:
            return None
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        return self.rows_by_key.get(key or "")

    def key_of(self, name: str) -> str | None:
        """The key of the row listing the skill called ``name`` (an active one before archived copies)."""
        named = [skill for skill in self.rows_by_key.values() if skill.name == name]
        named.sort(key=lambda skill: skill.state == "archived")
        return named[0].key if named else None

    def _on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        # An empty table highlights row -1 with no key (e.g. `up` once a filter left nothing).
        key = event.row_key.value if event.row_key is not None else None
        self.post_message(self.Highlighted(self.rows_by_key.get(key or "")))
