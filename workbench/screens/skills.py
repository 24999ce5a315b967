"""The Skills screen: the library with a fuzzy filter, the selected skill's files, curator actions.

Browsing calls the library's ``view`` with ``record=False`` (as ``skills show`` does), so
looking at a skill in the UI never counts as the agent using it and never keeps a stale
skill alive; which files may be read is the library's rule, not the screen's. Every curator action runs in a thread
worker; purge and rollback ask first, and the dry run shows exactly what a run would
change before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from textual import on, work
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.notifications import SeverityLevel
from textual.widget import Widget
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from engine.archive.query import fold_widths
from engine.clock import stamped
from engine.counts import counted
from engine.curator.ledger import EMPTY, columns, one_line_each, shortened
from engine.curator.run import WHERE_RECORDED, PlanChanged, pinned_refusal, purge_days_typed
from engine.errors import WorkbenchError
from engine.events import Event, SkillChanged
from engine.skills.frontmatter import problem_line
from engine.skills.hand_edit import open_skill_md
from engine.skills.library import PROVENANCE_NOTE
from engine.skills.usage import parse_iso
from engine.textsafety import flat_line
from widgets.code_view import CodeView
from widgets.literal import TAB_CELLS, WholeStatic, assemble, hanging, literal, visible
from widgets.search_box import SearchBox
from widgets.skill_list import SkillList, SkillRow, fuzzy_filter
from widgets.skill_meta import SkillMeta

from ..messages import ShowSkill
from .base import WorkbenchScreen
from .dialogs import ConfirmDialog, Dialog
from .skill_edit import SkillEdit

MAX_VIEW_CHARS = 400_000  # shown of one file
SKILL_KEYS = ("archive", "restore", "pin", "unpin")  # the keys that act on the selected skill
PLAN_VERBS = (("marked_stale", "mark stale"), ("archived", "archive"), ("reactivated", "reactivate"))


@dataclass
class SkillsLoaded(Message):
    rows: list[SkillRow]
    usage_problem: str | None = None  # why skills/.usage.json cannot be read (``usage_warning``)


@dataclass
class FilesLoaded(Message):
    name: str
    files: list[str]  # SKILL.md, then the linked files
    unlinked: list[str]  # the folder's other files (``other_files``)


@dataclass
class FileLoaded(Message):
    name: str
    file: str
    text: str


@dataclass
class CuratorReported(Message):
    """A curator action finished: say how, then reread the library."""

    text: str
    severity: SeverityLevel = "information"


@dataclass
class PlanReady(Message):
    plan: list[str]  # what a curator run would change (a dry run), then what it keeps for cron jobs
    outcome: list[str]  # the dry run in the engine's words (CuratorReport.outcome), as the CLI says it
    actions: tuple[tuple[str, str], ...] = ()  # the same changes by folder (CuratorReport.plan): applied as shown
    changed: bool = False  # a new preview: the one answered no longer held, so nothing was applied


@dataclass
class EditOpened(Message):
    edit: SkillEdit


@dataclass
class PurgePreviewed(Message):
    days: int
    names: list[dict[str, Any]]


@dataclass
class LedgerLoaded(Message):
    entries: list[Any]


@dataclass
class RollbackPreviewed(Message):
    """A ledger entry chosen, with what rolling it back would do (or why it would be refused)."""

    entry: Any
    files: list[str]
    refusal: str | None


def skill_row(info: Any) -> SkillRow:
    return SkillRow(
        name=info.name,
        category=info.category,
        description=info.description,
        state=info.state,
        pinned=bool(info.pinned),
        provenance=info.provenance or "",
        owner=info.owner,
        proposed_by=info.proposed_by,
        use_count=info.use_count or 0,
        uses_note=info.uses_note,
        last_active_at=parse_iso(info.last_activity_at),
        path=info.path,
        problem=problem_line(info.problem or info.name_problem or "") or None,  # (one line, where first)
        too_long=info.too_long,
        shared=info.needs_folder,
        folder=info.label_folder,
        index_problem=info.index_problem,
    )


def shown_part(text: str, where: str) -> str:
    """At most ``MAX_VIEW_CHARS`` of a file, ending at a line, then a last line saying it was cut and
    where the whole of it is: a cut the pane made silently read as the file's end."""
    if len(text) <= MAX_VIEW_CHARS:
        return text
    end = text.rfind("\n", 0, MAX_VIEW_CHARS) + 1 or MAX_VIEW_CHARS
    return (
        f"{text[:end].rstrip(chr(10))}\n\n⋯ Cut here: this pane shows the first {end:,} of {len(text):,} "
        f"characters. Read it whole in an editor:\n{where}"
    )


def plan_lines(report: Any) -> list[str]:
    """A curator report (run or dry run) as one line per skill it touches."""
    lines = [f"{verb:<11} {report.with_reason(name)}" for field, verb in PLAN_VERBS for name in getattr(report, field)]
    return lines + [f"{'keep':<11} {name} (a cron job names it)" for name in report.kept_for_cron]


class DaysDialog(Dialog[int | None]):
    """Ask for a whole number of days (purge archived skills older than that)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, question: str, default: int) -> None:
        super().__init__()
        self.question = question
        self.default = default

    def compose(self):
        with Vertical(classes="dialog"):
            yield Static(Content.styled(self.question, "bold"), classes="dialog-title")
            yield Input(str(self.default), id="days")  # any text: the engine's rule says what is wrong with it
            yield WholeStatic(
                Content.styled("enter: preview what would be purged · esc: cancel", "$text-muted"), id="days-error"
            )

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        try:
            days = purge_days_typed(event.value)
        except ValueError as exc:
            self.query_one("#days-error", Static).update(Content.styled(str(exc), "$text-error"))
            return
        self.dismiss(days)

    def action_cancel(self) -> None:
        self.dismiss(None)


class LedgerDialog(Dialog[str | None]):
    """The curator ledger, newest first; enter picks an entry to roll back.

    Where every entry fits the list's width on one line, each is one (its folder whole beneath where the
    column shortens it); else every entry alike takes two, as ``curator ledger`` prints them: its id, time
    and action, then its skill with the folder whole and who. At 60 columns a row wrapped at its spaces
    into lines that read as separate rows. Reflowed when the dialog's width changes."""

    BINDINGS = [Binding("escape", "cancel", "Close")]

    def __init__(self, entries: list[Any]) -> None:
        super().__init__()
        self.entries = entries
        self._width = 0  # the list's text width the options were last built for

    def compose(self):
        with Vertical(classes="dialog dialog-wide"):
            yield Static(
                Content.styled("Curator ledger: enter rolls the chosen change back · esc closes", "bold"),
                classes="dialog-title",
            )
            yield OptionList() if self.entries else Static(Content(EMPTY))

    def on_mount(self) -> None:
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        if not self.entries:
            return
        listing = self.query_one(OptionList)
        padding = listing.get_component_styles("option-list--option").padding.width
        width = listing.scrollable_content_region.width - padding
        if width < 1 or width == self._width:
            return
        self._width, highlighted = width, listing.highlighted
        shown = columns(self.entries)
        rows = list(zip(self.entries, shown, shortened(self.entries), strict=True))
        one_line = one_line_each(self.entries, shown, width)
        listing.set_options(Option(self._entry(*row, one_line, width), id=row[0].id) for row in rows)
        listing.highlighted = 0 if highlighted is None else highlighted

    @staticmethod
    def _entry(e: Any, shown: tuple[str, str, str, str], whole: str | None, one_line: bool, width: int) -> Content:
        """One entry's option: the id first, as `curator ledger` lists it and a refused rollback names it."""
        when, action, skill, actor = shown
        if one_line:
            return assemble(
                (f"{e.id}  {when}  ", "$text-muted"),
                (f"{action}  ", "bold"),
                skill,
                (f"  by {actor}", "$text-muted"),
                *([] if whole is None else ["\n", (f"  {whole}", "$text-muted")]),  # its folder whole
            )
        named = f"    {whole or skill.rstrip()}"
        below = hanging(f"{named}  by {actor}", width)  # (the id and folder never cut)
        return Content("\n").join(
            [assemble((f"{e.id}  {when}  ", "$text-muted"), (action.rstrip(), "bold")), *_muted_after(below, named)]
        )

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option_id)

    def action_cancel(self) -> None:
        self.dismiss(None)


def _muted_after(lines: list[Content], shown: str) -> list[Content]:
    """``lines`` (``shown`` and more, as ``hanging`` folded them) with what follows ``shown`` muted, as the
    one-line form mutes `by ACTOR`: a fold only takes spaces out, so the boundary is found by counting the
    other characters ``shown`` drew."""
    left = sum(not ch.isspace() for ch in visible(shown).expandtabs(TAB_CELLS))
    styled = []
    for line in lines:
        start = len(line.plain) if left else 0
        for at, ch in enumerate(line.plain):
            if left == 0:
                start = at
                break
            left -= not ch.isspace()
        styled.append(line.stylize("$text-muted", start) if start < len(line.plain) else line)
    return styled


# Columns from which the footer has room for c Curate: with it and p Unpin the keys end at 69, and the
# palette's key (12 cells, at the right) leaves them 68 at 80 columns. (Without Unpin they end at 67,
# but c coming and going with the cursor would move a, p, l and ? about.)
FOOTER_ROOM = 81  # columns from which the footer holds every skill key beside c Curate and p Unpin
FILTER_ROOM = FOOTER_ROOM + 11  # from here / Filter (10 cells) keeps its place beside esc Clear (11) too


class SkillsScreen(WorkbenchScreen):
    AUTO_FOCUS = "SkillList"
    TITLE_TEXT = "Skills"
    SELECTS = dict.fromkeys(("archive", "restore", "pin", "unpin", "unlisted", "purge", "edit"), "a skill")
    SEARCH_BOX = "skills-filter"
    HELP = (
        "The skill library (active, stale and archived) with a fuzzy filter. The lower half shows the selected "
        "skill's SKILL.md and linked files. Curator actions: a dry run shows what a run would change; purge and "
        "rollback ask first. " + PROVENANCE_NOTE + " " + WHERE_RECORDED + "."
    )
    BINDINGS = [
        # / listed but while a filter is set below FILTER_ROOM, where esc Clear takes its place (p Unpin and
        # ? Help keep theirs at 80 columns, and c Curate from FOOTER_ROOM); its unlisted twin answers always
        Binding("slash", "listed_filter", "Filter", key_display="/", priority=True),
        Binding("slash", "focus_filter", "Filter", key_display="/", priority=True, show=False),
        # shown while a filter is set (check_action): in the box its own escape clears it
        Binding("escape", "clear_filter", "Clear", tooltip="Clear the filter: every skill again"),
        Binding("d", "dry_run", "Dry run", tooltip="Show what a curator run would change, then apply exactly that"),
        Binding("c", "curate", "Curate", tooltip="Run the curator now (shows its changes, then asks)"),
        Binding("a", "archive", "Archive"),
        Binding("r", "restore", "Restore"),
        # p says what it does to the selected skill: one of the two is hidden (check_action)
        Binding("p", "pin", "Pin", tooltip="Pin: a pinned skill is never archived"),
        Binding("p", "unpin", "Unpin", tooltip="Unpin: the curator may mark it stale and archive it again"),
        # the footer leaves out p on an archived skill, and below FOOTER_ROOM a on a pinned one (so c Curate
        # fits beside p Unpin): these twins answer those keys there
        Binding("a", "unlisted('archive')", "Archive", show=False),
        Binding("p", "unlisted('pin')", "Pin", show=False),
        Binding("p", "unlisted('unpin')", "Unpin", show=False),
        Binding(
            "x",
            "purge",
            "Purge",
            tooltip="Delete archived skills older than N days (asks; can be rolled back)",
            show=False,
        ),  # rare: in help, so the footer keeps l and ? at 80 columns
        Binding("l", "ledger", "Ledger", tooltip="Curator ledger: roll back any change"),
        # in help, so the footer keeps l and ? at 80 columns
        Binding("e", "edit", "Edit", tooltip="Edit the selected skill's SKILL.md by hand", show=False),
    ]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (24, "-tall")]  # (below 24 rows the list yields rows to SKILL.md)
    DEFAULT_CSS = """
    SkillsScreen #skills-filter { border: tall $primary 40%; }
    SkillsScreen #skills-filter:focus { border: tall $primary; }
    SkillsScreen SkillList { height: 2fr; min-height: 11; }  /* 8 rows, the column names and the ring */
    SkillsScreen.-short SkillList { min-height: 7; }  /* 4 rows: SKILL.md keeps 6 lines at 60x20, not 2 */
    SkillsScreen #skills-detail { height: 3fr; }
    SkillsScreen #skills-side { width: 30; }
    SkillsScreen #skills-meta { height: auto; max-height: 4; padding: 0 1; }  /* the files keep a row at 80x24 */
    SkillsScreen #skills-files { height: 1fr; min-height: 3; border: round $primary 40%; }
    SkillsScreen #skills-files:focus { border: round $primary; }
    SkillsScreen CodeView { width: 1fr; }
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.all_rows: list[SkillRow] = []
        self.shown: tuple[str, str] | None = None
        self._wanted: ShowSkill | None = None  # a skill to select once the next load shows
        self._files_stale = False  # the selected skill changed since its files were read

    def compose_body(self) -> Iterable[Widget]:
        problem = WholeStatic("", id="skills-usage-problem", classes="status warning")
        problem.display = False
        yield problem
        yield SearchBox(placeholder="fuzzy filter skills (/)", id="skills-filter")
        yield SkillList(id="skills-list")
        with Horizontal(id="skills-detail"):
            with Vertical(id="skills-side"):
                yield SkillMeta(id="skills-meta")
                yield OptionList(id="skills-files")
            yield CodeView(id="skills-code")

    def on_mount(self) -> None:
        self.query_one("#skills-files", OptionList).border_title = "Files"
        self.query_one(CodeView).show_message("SKILL.md", "Select a skill.")
        self.load_skills()

    @property
    def skill_list(self) -> SkillList:
        return self.query_one(SkillList)

    @property
    def current(self) -> SkillRow | None:
        return self.skill_list.current

    # -- loading -------------------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="skills")
    def load_skills(self) -> None:
        infos = self.home.skills.list(include_archived=True)
        self.post_result(SkillsLoaded([skill_row(i) for i in infos], self.home.skills.usage_warning()))

    @on(SkillsLoaded)
    def _skills_loaded(self, message: SkillsLoaded) -> None:
        self.all_rows = message.rows
        banner = self.query_one("#skills-usage-problem", Static)
        banner.update(literal(f"⚠ {message.usage_problem}" if message.usage_problem else ""))
        banner.display = bool(message.usage_problem)
        self._apply_filter()
        self.refresh_bindings()  # the row kept may have changed state (restored, archived elsewhere)
        wanted, self._wanted = self._wanted, None
        key = None
        if wanted is not None:  # the very folder asked for while it is listed, else the name's skill
            key = wanted.path if wanted.path in self.skill_list.rows_by_key else self.skill_list.key_of(wanted.name)
        if key is not None:
            self.skill_list.focus()
            self.skill_list.move_cursor(row=self.skill_list.get_row_index(key))

    @on(ShowSkill)
    def _show_skill(self, message: ShowSkill) -> None:
        self._wanted = message
        self.query_one("#skills-filter", Input).value = ""
        self.load_skills()

    @on(Input.Changed, "#skills-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        """A new filter puts the cursor (and the detail pane) on its best match, the first row; an emptied one
        keeps it on the skill it was on."""
        self._apply_filter(best=bool(event.value.strip()))
        self.refresh_bindings()  # (esc Clear, while a filter is set)

    def _apply_filter(self, best: bool = False) -> None:
        archived = sum(1 for row in self.all_rows if row.state == "archived")
        self.skill_list.show(
            # (widths folded: ``ｄｅｐｌｏｙ``, as a CJK input method types it, found no deploy skill)
            fuzzy_filter(self.all_rows, fold_widths(self.query_one("#skills-filter", Input).value)),
            of=(len(self.all_rows) - archived, archived),
            top=best,
        )

    def action_clear_filter(self) -> None:
        """Escape on the list: every skill again, the cursor kept on the skill it was on."""
        self.query_one("#skills-filter", Input).value = ""

    @on(Input.Submitted, "#skills-filter")
    def _filter_submitted(self) -> None:
        self.skill_list.focus()

    @on(SkillList.Highlighted)
    def _skill_highlighted(self, message: SkillList.Highlighted) -> None:
        skill = message.skill
        self.refresh_bindings()  # (r or a and p, by the skill's state)
        meta = self.query_one(SkillMeta)
        meta.skill = skill
        if skill is None:
            self.query_one("#skills-files", OptionList).clear_options()
            empty = (
                "No skill matches the filter."
                if self.all_rows
                else "No skills in this home yet. The agent "
                "writes them with skill_manage, or put a folder holding a SKILL.md under skills/."
            )
            self.query_one(CodeView).show_message("SKILL.md", empty)
            self.shown = None
            return
        self.load_files(skill)

    @work(thread=True, exclusive=True, exit_on_error=False, group="files")
    def load_files(self, skill: SkillRow) -> None:
        view = self._view(skill, None)
        linked = view.get("linked_files") or {}
        name = skill.ref
        files = ["SKILL.md"] + [path for group in sorted(linked) for path in linked[group]]
        self.post_result(FilesLoaded(name, files, view.get("other_files") or []))
        self.post_result(FileLoaded(name, "SKILL.md", view["content"]))

    @on(FilesLoaded)
    def _files_loaded(self, message: FilesLoaded) -> None:
        if self.current is None or self.current.ref != message.name:
            return
        files = self.query_one("#skills-files", OptionList)
        files.clear_options()
        files.add_options([Option(Content(flat_line(path)), id=path) for path in message.files])
        files.add_options(  # in the folder, but no linked file: the agent's skill_view never lists them
            [
                Option(Content.assemble(flat_line(path), ("  not linked", "$text-muted")), id=path)
                for path in message.unlinked
            ]
        )
        files.highlighted = 0

    @on(OptionList.OptionSelected, "#skills-files")
    @on(OptionList.OptionHighlighted, "#skills-files")
    def _file_chosen(self, event: OptionList.OptionMessage) -> None:
        if self.current is not None and event.option_id and self.shown != (self.current.ref, event.option_id):
            self.load_file(self.current, event.option_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="file")
    def load_file(self, skill: SkillRow, file: str) -> None:
        view = self._view(skill, None if file == "SKILL.md" else file)
        self.post_result(FileLoaded(skill.ref, file, view["content"]))

    def _view(self, skill: SkillRow, file: str | None) -> dict[str, Any]:
        """A person's view of a skill or one of its files (worker thread); a refusal is shown as the text."""
        try:
            view = self.home.skills.view(skill.ref, file, record=False)
        except (WorkbenchError, OSError, ValueError) as exc:  # gone, outside the skill, not UTF-8
            view = {"content": getattr(exc, "message", None) or f"{file or 'SKILL.md'} cannot be read: {exc}"}
        where = self.home.skills_dir / skill.key / (file or "SKILL.md")
        return {**view, "content": shown_part(str(view.get("content") or ""), str(where))}

    @on(FileLoaded)
    def _file_loaded(self, message: FileLoaded) -> None:
        if self.current is not None and self.current.ref == message.name:
            self.shown = (message.name, message.file)
            problem = (self.current.problem or self.current.index_problem) if message.file == "SKILL.md" else None
            folder = self.current.folder  # the folder the row names beside a shared name: here whole
            self.query_one(CodeView).show(
                message.file,
                message.text,
                problem and flat_line(problem, 200),
                title=f"{folder}/{message.file}" if folder else None,
            )

    def action_focus_filter(self) -> None:
        self.focus_box()

    def action_listed_filter(self) -> None:
        self.focus_box()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        """The footer says what each key will do to the selected skill: ``a Archive`` on one that is not
        archived, ``r Restore`` in its place on one that is (the other hidden, and doing nothing), ``p``
        Unpin on a pinned skill and Pin on any other; with none selected, ``a`` and ``p`` dimmed. On an
        archived skill ``p`` leaves the footer (the engine refuses it all the same) to an unlisted twin
        (``unlisted``) that says why when pressed. ``a`` on a pinned skill stays: it says how to unpin
        it. (Hidden, not dimmed: at 80 columns the footer has no room for both.) Below ``FOOTER_ROOM``
        columns, ``a`` on a pinned skill leaves it to its twin too, so ``c Curate`` keeps its place. While
        a filter is set, ``esc Clear`` is shown, in the place of ``/ Filter`` below ``FILTER_ROOM`` columns
        (its unlisted twin answers)."""
        if action == "unlisted":
            return self._key_state(parameters[0]) if self._left_out(parameters[0]) else False
        if action in ("clear_filter", "listed_filter"):
            filtered = bool(self.is_mounted and self.query_one("#skills-filter", Input).value)
            return filtered if action == "clear_filter" else not filtered or self.size.width >= FILTER_ROOM
        if action not in SKILL_KEYS:
            return True
        state = self._key_state(action)
        return False if state is not False and self._left_out(action) else state

    def _left_out(self, action: str) -> bool:
        """Whether the footer leaves ``action``'s key out (``check_action``): p on an archived skill, which
        it cannot pin or unpin, and, where it is too narrow for it all, a on a pinned one (refused)."""
        skill = self.current if self.is_mounted else None
        if skill is None:
            return False
        if skill.state == "archived":
            return action in ("pin", "unpin")
        filtered = bool(self.query_one("#skills-filter", Input).value)  # (esc Clear is a cell wider than / Filter)
        return skill.pinned and action == "archive" and self.size.width < FOOTER_ROOM + filtered

    def _key_state(self, action: str) -> bool | None:
        """What a key of ``SKILL_KEYS`` does to the skill selected: True acts, None dimmed, False hidden."""
        skill = self.current if self.is_mounted else None
        if action in ("pin", "unpin") and (action == "unpin") != bool(skill and skill.pinned):
            return False
        if skill is None:
            return None if action in ("archive", "pin") else False
        archived = skill.state == "archived"
        if action in ("archive", "restore"):
            return archived == (action == "restore")
        return None if archived else True

    def explain_dimmed(self, action: str, parameters: tuple) -> str | None:
        """Why a or p, dimmed, does nothing: said when pressed (``WorkbenchApp.run_action``)."""
        if action == "unlisted":
            action = parameters[0]
        if action not in SKILL_KEYS:
            return None
        skill = self.current if self.is_mounted else None
        if skill is None:
            return f"Select a skill to {action}."
        return f"Skill '{skill.name}' is archived: restore it first (r), then {action} it."

    # -- curator actions -------------------------------------------------------------
    def _on_skill(self, verb: str, call: Callable[[str], Any]) -> None:
        skill = self.current
        if skill is None:
            self.notify(f"Select a skill to {verb}.", severity="warning")
            return
        self.curator_call(f"{verb} {skill.name}", lambda: call(skill.ref))  # (an archived copy: by its path)

    def action_archive(self) -> None:
        skill = self.current
        if skill is None:
            self.notify("Select a skill to archive.", severity="warning")
            return
        if skill.pinned:  # refused (the engine refuses it all the same, pinned since or not): said before asking
            self._say_pinned(skill)
            return
        named = f"{skill.name} ({skill.path})" if skill.shared else skill.name
        self.confirm(  # the skill asked about, by its folder: never the row the cursor lands on meanwhile
            f"Archive {named}?",
            "It leaves the agent's library; r restores it, and the ledger can roll it back.",
            lambda: self.curator_call(
                f"archive {named}", lambda: self.home.curator.archive(skill.name, folder=skill.path or None)
            ),
        )

    @work(thread=True, exit_on_error=False, group="skills-pinned")
    def _say_pinned(self, skill: SkillRow) -> None:
        """Why a pinned skill is not archived, with the unpin the CLI takes for it (the engine's
        ``command_arg``: its folder when its name cannot be typed as shown or does not pick it out)."""
        skills = self.home.skills
        try:
            asked = skills.command_arg("unpin", skills.at(skill.path, skill.name) if skill.path else skill.name)
        except WorkbenchError as exc:  # (moved or archived since: said, and the list reloads)
            self._tell(exc.in_app, "warning")
            return
        self._tell(pinned_refusal(skill.name, asked), "warning")

    def action_restore(self) -> None:
        self._on_skill("restore", lambda ref: self.home.curator.restore(ref))

    def action_pin(self) -> None:
        self._on_skill("pin", lambda name: self.home.curator.pin(name))

    def action_unpin(self) -> None:  # (as the footer said: one unpinned elsewhere meanwhile is said so, left as is)
        self._on_skill("unpin", lambda name: self.home.curator.unpin(name))

    def action_edit(self) -> None:
        skill = self.current
        if skill is None:
            self.notify("Select a skill to edit.", severity="warning")
        elif skill.state == "archived":
            said = f"Skill '{skill.name}' is archived: restore it first (r), then edit it."
            self.notify(visible(said), severity="warning", markup=False)
        else:
            self._open_edit(skill.ref)

    @work(thread=True, exit_on_error=False, group="skills-edit")
    def _open_edit(self, ref: str) -> None:
        try:
            opened = open_skill_md(self.home.skills, ref)
        except WorkbenchError as exc:  # (bundled, gone, unreadable: said, never raised into the UI)
            self._tell(f"Could not edit {ref}: {exc.in_app}", "error")
            return
        self.post_result(EditOpened(SkillEdit(self.home.skills, opened)))

    @on(EditOpened)
    def _edit_opened(self, message: EditOpened) -> None:
        edit = message.edit

        def closed(saved: bool | None) -> None:
            if saved and edit.said:
                self.notify(visible(edit.said), markup=False)

        self.app.push_screen(edit.dialog(), closed)

    def on_resize(self) -> None:
        self.refresh_bindings()  # (below FOOTER_ROOM, a key that does nothing to a pinned skill leaves the
        # footer; below FILTER_ROOM, / Filter leaves it to esc Clear while a filter is set)

    def action_unlisted(self, action: str) -> None:
        getattr(self, f"action_{action}")()

    def action_curate(self) -> None:
        """Run the curator after showing exactly what it would change (its dry run), as d does."""
        self.dry_run()

    def action_dry_run(self) -> None:
        self.dry_run()

    @work(thread=True, exit_on_error=False, group="curator-write")  # never exclusive: a change must not be dropped
    def curator_call(self, what: str, call: Callable[[], dict[str, Any]]) -> None:
        """Run one curator action; report its message (or refusal) and refresh the list."""
        try:
            with self.workbench.user_write():
                result = call()
        except WorkbenchError as exc:  # a refusal is shown, never raised into the UI
            self._tell(f"Could not {what}: {exc.in_app}", "error")
            return
        if result.get("success") is False:
            self._tell(f"Could not {what}: {result.get('error')}", "error")
        else:
            self._tell(result.get("message") or f"Done: {what}.")

    def _tell(self, text: str, severity: SeverityLevel = "information") -> None:
        self.post_message(CuratorReported(text, severity))

    @on(CuratorReported)
    def _curator_reported(self, message: CuratorReported) -> None:
        self.notify(message.text, severity=message.severity, markup=False)
        self.request_reload()

    @work(thread=True, exit_on_error=False, group="curator-write")  # never exclusive: a change must not be dropped
    def curate(self, expected: tuple[tuple[str, str], ...] | None) -> None:
        """Run the curator; after a dry run, exactly the plan it showed, else nothing and the new plan."""
        try:
            with self.workbench.user_write():
                report = self.home.curator.run(dry_run=False, expected=expected)
        except PlanChanged as changed:
            new = changed.report
            self.post_result(
                PlanReady(plan_lines(new), new.outcome(self.home.curator.awaiting_review()), new.plan, True)
            )
            return
        except WorkbenchError as exc:
            self._tell(f"Could not run the curator: {exc.in_app}", "error")
            return
        lines = [report.headline, *plan_lines(report)[:10], *report.errors]
        self._tell("\n".join(lines), "warning" if report.errors else "information")

    @work(thread=True, exclusive=True, exit_on_error=False, group="curator-read")
    def dry_run(self) -> None:
        report = self.home.curator.run(dry_run=True)
        outcome = report.outcome(self.home.curator.awaiting_review())
        self.post_result(PlanReady(plan_lines(report), outcome, report.plan))

    @on(PlanReady)
    def _offer_plan(self, message: PlanReady) -> None:
        plan = message.plan
        before = "The skills changed since the dry run, so nothing was applied. " if message.changed else ""
        if not message.actions:  # the engine's words, why included (how many skills it checked)
            self.notify(
                visible(before + "\n".join(message.outcome)),
                severity="warning" if message.changed else "information",
                markup=False,
            )
            return

        def answered(apply: bool | None) -> None:
            if apply:
                self.curate(message.actions)

        self.ask(
            ConfirmDialog(
                f"{before}Run the curator now? It would make "
                + (
                    "1 change, exactly this one:"
                    if len(message.actions) == 1
                    else f"{len(message.actions)} changes, exactly these:"
                ),
                "\n".join([*plan, "", f"{WHERE_RECORDED}."]),
            ),
            answered,
        )

    def action_purge(self) -> None:
        default = self.home.config.int("curator.archive_after_days")

        def got_days(days: int | None) -> None:
            if days is not None:
                self.purge_preview(days)

        self.app.push_screen(DaysDialog("Purge archived skills not touched for how many days?", default), got_days)

    @work(thread=True, exclusive=True, exit_on_error=False, group="curator-read")
    def purge_preview(self, days: int) -> None:
        names = self.home.curator.purge(days, dry_run=True)["candidates"]
        self.post_result(PurgePreviewed(days, names))

    @on(PurgePreviewed)
    def _confirm_purge(self, message: PurgePreviewed) -> None:
        days, names = message.days, message.names
        if not names:
            self.notify(f"No archived skill is older than {days} day{'s' * (days != 1)}; nothing to purge.")
            return

        def answered(yes: bool | None) -> None:
            if yes:  # only those listed: one that grew old enough meanwhile waits for the next question
                self.curator_call(
                    f"purge {counted(len(names), 'skill')}", lambda: self.home.curator.purge(days, only=names)
                )

        detail = "\n".join(f"{n['name']}  ({n['path']})" for n in names)
        self.ask(
            ConfirmDialog(
                f"Purge {counted(len(names), 'archived skill')}? Each keeps a ledger entry and a "
                "stored copy, so it can be rolled back.",
                detail,
            ),
            answered,
        )

    def action_ledger(self) -> None:
        self.open_ledger()

    @work(thread=True, exclusive=True, exit_on_error=False, group="curator-read")
    def open_ledger(self) -> None:
        entries = self.home.curator.ledger()
        self.post_result(LedgerLoaded(entries))

    @on(LedgerLoaded)
    def _show_ledger(self, message: LedgerLoaded) -> None:
        entries = message.entries
        by_id = {e.id: e for e in entries}

        def chosen(entry_id: str | None) -> None:
            if entry_id is not None:
                self._preview_rollback(by_id[entry_id])

        self.ask(LedgerDialog(entries), chosen)

    @work(thread=True, exclusive=True, exit_on_error=False, group="curator-read")
    def _preview_rollback(self, entry: Any) -> None:
        """The files a rollback would restore or remove (reading the ledger's copies: off the UI thread)."""
        try:
            self.post_result(RollbackPreviewed(entry, self.home.curator.rollback_files(entry), None))
        except WorkbenchError as exc:
            self.post_result(RollbackPreviewed(entry, [], exc.in_app))

    @on(RollbackPreviewed)
    def _ask_rollback(self, message: RollbackPreviewed) -> None:
        entry = message.entry
        if message.refusal is not None:  # as the rollback itself would say, without asking first
            self._tell(visible(f"Could not roll back {entry.action} of {entry.skill}: {message.refusal}"), "error")
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.curator_call(
                    f"roll back {entry.action} of {entry.skill}", lambda: self.home.curator.rollback(entry.id)
                )

        files = "\n".join(message.files) or "no files"
        when = stamped(entry.ts) or entry.when
        self.ask(
            ConfirmDialog(
                f"Roll back {entry.action} of {entry.skill} ({when})?",
                f"Restores the files exactly as they were before that change:\n{files}",
            ),
            answered,
        )

    # -- live updates ----------------------------------------------------------------
    def engine_event(self, event: Event) -> None:
        if isinstance(event, SkillChanged):
            if self.current is not None and self.current.name == event.name:
                self._files_stale = True
            self.request_reload()

    def reload(self) -> None:
        """The library again, and the selected skill's files if that skill changed."""
        self.load_skills()
        if self._files_stale and self.current is not None:
            self._files_stale = False
            self.load_files(self.current)
