"""The skill library as a table, with a fuzzy filter (rapidfuzz) over name, category and description.

Rows are keyed by skill name, so refreshing after a curator action keeps the cursor on
the same skill. All cells are literal ``rich.text.Text`` (never markup).
"""

from __future__ import annotations

from dataclasses import dataclass

from rapidfuzz import fuzz, process, utils
from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable

from engine.clock import shown_time
from engine.textsafety import visible

from .row_table import RowTable

NAME_CELLS = 40  # a longer name (or the folder shown beside it) is cut with … here (the detail pane
# holds it whole), so the other columns stay in view
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
    proposed_by: str | None = None  # who proposed it, when the user approved it into the library
    use_count: int = 0
    last_used_at: float | None = None
    path: str = ""  # its folder relative to skills/ ("devops/foo", ".archive/foo"): unique, the row's key
    problem: str | None = None  # why its SKILL.md does not parse (it is listed all the same, as Hermes does)
    too_long: bool = False  # the problem is only its SKILL.md's length (it parses)
    shared: bool = False  # its name alone does not pick it out (the engine's ``needs_folder``)
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


def _folder(skill: SkillRow) -> str:
    """A skill's folder (``deploy-20261204224428``), which tells skills of one name apart."""
    return skill.path.rsplit("/", 1)[-1]


def _folder_shown(skill: SkillRow) -> bool:
    """Whether the row names its folder after its name: when the name alone does not pick it out, and
    the folder says more (``deploy deploy-20261204224428``); a folder named as the skill, as an archived
    copy's first one is (``.archive/pdf-extract``), would only repeat it, and its state or category
    tells it from the others."""
    return skill.shared and _folder(skill) != skill.name


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


def _cut(text: str, style: str = "") -> Text:
    """A name or folder in at most ``NAME_CELLS`` cells, ending in … when cut."""
    cell = Text(text, style)
    cell.truncate(NAME_CELLS, overflow="ellipsis")
    return cell


def _day(timestamp: float | None) -> str:
    return (shown_time(timestamp, "%Y-%m-%d") or "?") if timestamp else "never"


class SkillList(RowTable):
    """Skills with category, state, pin, provenance and usage; ``Highlighted`` names the cursor row."""

    DEFAULT_CSS = """
    SkillList { background: $surface; border: round $primary 40%; height: 1fr; }
    SkillList:focus { border: round $primary; }
    """
    COLUMNS = ("skill", "category", "state", "pin", "provenance", "uses", "last used")

    class Highlighted(Message):
        def __init__(self, skill: SkillRow | None) -> None:
            super().__init__()
            self.skill = skill

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, cursor_type="row", zebra_stripes=True)
        self.rows_by_key: dict[str, SkillRow] = {}  # a row's key (its path) -> the skill it shows

    def on_mount(self) -> None:
        for column in self.COLUMNS:
            self.add_column(column, key=column)

    def show(self, skills: list[SkillRow], of: int | None = None) -> None:
        """Replace the rows, keeping the cursor on the same skill when it is still listed (by its folder, else
        by its name: archiving or restoring moves the folder), else on its place in the list. ``of``: how
        many a filter chose them from."""
        current, at = self.current, self.cursor_row
        theme = self.app.current_theme  # state colours from the theme, so they read well on light ones too
        state_styles = {"active": theme.success or "", "stale": theme.warning or "", "archived": "dim"}
        self.clear()
        self.rows_by_key = {}
        for skill in skills:
            self.rows_by_key[skill.key] = skill
            self.add_row(
                Text.assemble(
                    ("⚠ ", theme.warning or "") if skill.problem or skill.index_problem else "",
                    _cut(visible(skill.name)),
                    " " if _folder_shown(skill) else "",
                    _cut(visible(_folder(skill)), "dim") if _folder_shown(skill) else "",  # told apart by folder
                ),
                Text(visible(skill.category or "-")),
                Text(skill.state, state_styles.get(skill.state, "")),
                Text("yes" if skill.pinned else ""),
                Text(visible(skill.provenance or "-")),
                Text(str(skill.use_count), justify="right"),
                Text(_day(skill.last_used_at)),
                key=skill.key,
            )
        self.measure_columns()  # not at the headers' widths until the table is next idle
        shown = f"{len(skills)} of {of}" if of is not None and of != len(skills) else str(len(skills))
        self.border_title = f"{shown} skill{'s' * ((of or len(skills)) != 1)}"
        # the same row, else the same skill by name (archived or restored, its folder moved)
        key = current and (current.key if current.key in self.rows_by_key else self.key_of(current.name))
        if key:
            self.move_cursor(row=self.get_row_index(key))
        elif current and skills:  # gone (Hermes deleted it): the row that takes its place, not the top one
            self.move_cursor(row=min(at, len(skills) - 1))
        elif not skills:
            self.post_message(self.Highlighted(None))

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
