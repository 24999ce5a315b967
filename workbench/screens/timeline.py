"""The Timeline screen: every change to what the agent knows, newest first, grouped and revertable.

Rows come from ``engine.timeline`` a page at a time (older pages load as the cursor
nears the end), so a journal of any length opens at once. The search box filters as
you type: free text, plus ``actor:``, ``subsystem:``, ``target:``, ``session:`` and
``group:`` terms. Groups (a review, a Curator pass, a consolidation, an outside edit, a revert) collapse with
space. ``enter`` opens the row's source; ``v`` reads a row's detail whole where its pane cuts it (a
short terminal keeps it 4 lines); ``r`` reverts the row or the group under the
cursor after a confirmation listing exactly what would change and what would be
refused. Engine events reload the first page, so the view follows live.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from textual import events, on, work
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, Static

from engine.errors import WorkbenchError
from engine.events import Event
from engine.memory.archive_writes import HERMES_SLACK_S
from engine.memory.targets import TARGETS
from engine.textsafety import clipped, quoted
from engine.timeline import (
    UNCREDITED_MOST,
    Reach,
    Row,
    Source,
    Timeline,
    awaits_credit,
    awaits_source,
    describe_group,
    detail_lines,
    group_head,
    has_skill_diff,
    lost_files,
    may_find_source,
    parse_filter,
    preview_lines,
    row_reason,
    source_may_come,
    unrevertable_lines,
    unsourced,
)
from widgets.diff_view import DiffView
from widgets.literal import WholeStatic, literal, wrap, wrapped
from widgets.search_box import SearchBox
from widgets.timeline_list import TimelineList

from ..messages import JumpToMessage, ShowEntry, ShowProposal, ShowSkill
from .base import WorkbenchScreen, clauses
from .dialogs import ConfirmDialog, ReadDialog

PAGE = 200


@dataclass
class PageLoaded(Message):
    rows: list[Row]
    where: str  # first | older | newer
    query: str
    error: str | None = None  # the filter cannot be read (a malformed group:): nothing matches it
    sizes: dict[str, int] = field(default_factory=dict)  # under a filter: how many rows each group holds
    undone: dict[int, int | None] | None = None  # newer rows: each row shown, the row that undid it now
    sources: dict[int, Source] = field(default_factory=dict)  # newer rows: rows shown whose turn was stored since
    # newer rows: those of them credited to their call since, as listed now (None: the filter no longer matches)
    credited: dict[int, Row | None] = field(default_factory=dict)
    reach: Reach | None = None  # an actor:agent page that stopped reading before it filled (``Timeline.reach``)
    # under a filter: the outside memory rows of the span the page read (``Timeline.uncredited``)
    uncredited: list[int] = field(default_factory=list)


@dataclass
class SourceFound(Message):
    row_id: int
    source: Source | None
    settled: bool  # the answer holds for good (found, or the row is past the time Hermes may store its turn)
    opens: bool = False  # g asked for it, and it was found: open it


@dataclass
class RowOpened(Message):
    """What enter on a row opens, found off the UI thread: ``shows`` told to the ``mode`` screen."""

    row_id: int
    mode: str
    shows: Message


@dataclass
class ProposalDecided(Message):
    """Enter on a proposal's row found it decided: its own rows are listed here instead."""

    row_id: int
    pending_id: str


@dataclass
class DiffFound(Message):
    row_id: int
    lines: list[tuple[str, str]] | None  # None: what the row changed is not known


@dataclass
class RevertPreviewed(Message):
    ref: str
    preview: dict


class TimelineScreen(WorkbenchScreen):
    AUTO_FOCUS = "TimelineList"
    TITLE_TEXT = "Timeline"
    SELECTS = dict.fromkeys(("fold", "unfold", "open_source", "open_message", "revert", "read_detail"), "a row")
    SEARCH_BOX = "timeline-search"
    HELP = (
        "Everything that changed what the agent knows (memory writes, skill changes, approvals, Curator passes, "
        "sessions archived or deleted; Hermes's own as actor external), newest first. Rows of one review, Curator "
        "pass, consolidation, outside edit (Hermes or an editor changing several entries at once) or revert of a "
        "group form a group (space folds it). "
        "Type in the search box to filter: words, or actor:, subsystem:, target:, session:, group:. "
        "enter opens the source; v reads the row's detail whole where its pane cuts it (ending in …); "
        "r reverts the row or group after showing exactly what would change."
    )
    BINDINGS = [
        Binding("slash", "focus_search", "Search", key_display="/", priority=True),
        # space says what it does to the group under the cursor: one of the two is hidden (check_action)
        Binding("space", "fold", "Fold", tooltip="Collapse the group under the cursor"),
        Binding("space", "unfold", "Unfold", tooltip="Expand the folded group under the cursor"),
        Binding("enter", "open_source", "Open", tooltip="Open the entry, skill, proposal or message"),
        Binding("g", "open_message", "Message", tooltip="Open the session message the row came from"),
        Binding("r", "revert", "Revert", tooltip="Revert the row or whole group (asks first)"),
        Binding("m", "more", "More", tooltip="Read on past where an actor filter stopped reading"),
        Binding("v", "read_detail", "Detail", tooltip="Read the row's whole detail, which its pane cuts"),
    ]
    FOOTER_FIRST = ("v",)  # where the footer is narrow (60 columns), as the detail is cut most there
    # below 24 rows the detail and a skill diff yield lines to the list: at 60x20 it keeps 8 rows, and 4 under a
    # status line of 4 (the detail's 8 left it 4, and none under the status)
    VERTICAL_BREAKPOINTS = [(0, "-short"), (24, "-tall")]
    DEFAULT_CSS = """
    TimelineScreen #timeline-search { border: tall $primary 40%; }
    TimelineScreen #timeline-search:focus { border: tall $primary; }
    TimelineScreen #timeline-detail { height: auto; max-height: 8; padding: 0 1; }
    TimelineScreen #timeline-diff { max-height: 25vh; padding: 0 1; }  /* (the list keeps its rows at 80x24) */
    TimelineScreen.-short #timeline-detail { max-height: 4; }
    TimelineScreen.-short #timeline-diff { max-height: 3; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[Row] = []
        self.rows_query: str | None = None  # the filter the listed rows were read under
        self.titles: dict[str, str] = {}
        self.heads: dict[str, tuple[str, str | None]] = {}  # each group header's actor and session
        self.group_sizes: dict[str, int] = {}  # under a filter, each group's whole size (its title says so)
        self.collapsed: set[str] = set()
        self.exhausted = False
        self.loading_more = False
        self.catching_up = False  # a live reload asked for: an older page that cancels it asks again
        self.older_asked: int | None = None  # the row the last older page was asked below
        self.older_owed: int | None = None  # the same, when a live reload cancelled it: asked again after
        self.reach: Reach | None = None  # where the last page loaded stopped reading short, if it did
        self.sources: dict[int, Source | None] = {}  # row id -> the message behind it, once looked up
        self.diffs: dict[int, list[tuple[str, str]] | None] = {}  # row id -> what an outside SKILL.md change did
        # under a filter, the outside memory rows of the span shown, listed or not: one credited may match it now
        # (the newest ``UNCREDITED_MOST`` of them, however long the screen stays open)
        self.uncredited: set[int] = set()
        self.detail_cut = False  # the selected row's detail needs more lines than its pane has (v reads it)

    def compose_body(self) -> Iterable[Widget]:
        yield SearchBox(
            placeholder="search (/): words, actor:review, subsystem:skills, target:, session:", id="timeline-search"
        )
        yield TimelineList(id="timeline-list")
        yield WholeStatic("", id="timeline-detail")
        yield DiffView(id="timeline-diff")
        yield self.status_line()

    def on_mount(self) -> None:
        self.load()

    @property
    def table(self) -> TimelineList:
        return self.query_one(TimelineList)

    @property
    def search(self) -> str:
        return self.query_one("#timeline-search", Input).value

    # -- loading -------------------------------------------------------------------
    def load(self, before_id: int | None = None, after_id: int | None = None) -> None:
        """The first page, an older page (``before_id``) or the rows newer than ``after_id`` (live). Rows
        listed under another filter than the box's (its first page still being read) are followed by a first
        page only: a newer or older page of the new filter would be spliced into them, and, one worker at a
        time, it cancels that first page."""
        if self.search != self.rows_query:
            before_id = after_id = None
        live = after_id is not None
        if before_id is None:  # this load cancels an older page's in flight (one worker group): ask again later
            self.older_owed = self.older_asked if live and self.loading_more else None
            self.loading_more = False
        else:
            self.older_asked = before_id
        self.catching_up = live or (self.catching_up and before_id is not None)  # (a first page reads all)
        awaiting = [row for row in self.rows if may_find_source(row)] if live else []
        crediting = [row.id for row in self.rows if awaits_credit(row)] + sorted(self.uncredited) if live else []
        self._load(self.search, before_id, after_id, [row.id for row in self.rows] if live else [], awaiting, crediting)

    @work(thread=True, exclusive=True, exit_on_error=False, group="timeline")
    def _load(
        self,
        query: str,
        before_id: int | None,
        after_id: int | None,
        shown: list[int],
        awaiting: list[Row],
        crediting: list[int],
    ) -> None:
        """``shown``: the rows on screen, when newer rows are asked for (one of those may undo one of them);
        ``awaiting``: those whose Hermes turn may have been stored since (``may_find_source``); ``crediting``:
        those a look may have credited to their Hermes call since (``awaits_credit``)."""
        timeline = Timeline(self.home)
        try:
            filters = parse_filter(query)
            rows = timeline.page(before_id=before_id, after_id=after_id, limit=PAGE, **filters)
            where = "older" if before_id is not None else "newer" if after_id is not None else "first"
            if where == "newer" and (len(rows) == PAGE or timeline.reach):  # too many to splice in: start over
                rows, where = timeline.page(limit=PAGE, **filters), "first"
            filtered = {key for key, value in filters.items() if value} - {"group"}
            sizes = timeline.group_sizes(r.group for r in rows if r.group) if filtered else {}
            marks = self.home.journal.undone_by(shown) if where == "newer" else {}
            undone = {row_id: marks.get(row_id) for row_id in shown}
            sources = timeline.sources_found(awaiting) if where == "newer" else {}
            credited = timeline.credited(crediting, **filters) if where == "newer" else {}
            uncredited = self._uncredited(timeline, rows, where, before_id, after_id) if filtered else []
        except WorkbenchError as exc:  # e.g. group:zzz, or workbench.db damaged; the old rows must not stay as if
            # they matched
            self.post_result(PageLoaded([], "first", query, exc.in_app))
            return
        self.post_result(
            PageLoaded(
                timeline.with_sources(rows),
                where,
                query,
                sizes=sizes,
                undone=undone,
                sources=sources,
                credited=credited,
                reach=timeline.reach,
                uncredited=uncredited,
            )
        )

    @staticmethod
    def _uncredited(
        timeline: Timeline, rows: list[Row], where: str, before_id: int | None, after_id: int | None
    ) -> list[int]:
        """The outside memory rows of the span a filtered page read (the rows newer than ``after_id``, else
        those below ``before_id`` down to where it stopped: its oldest row when full, the first row when not):
        a credit may make one of those the filter left off match it."""
        if where == "newer":
            return timeline.uncredited(after_id + 1)
        reach = timeline.reach
        oldest = reach.oldest_id if reach else rows[-1].id if len(rows) == PAGE else 0
        return timeline.uncredited(oldest, before_id if where == "older" else None)

    @on(PageLoaded)
    def _loaded(self, message: PageLoaded) -> None:
        if message.query != self.search:
            return  # typed on since: a newer load is coming
        self.group_sizes = message.sizes if message.where == "first" else {**self.group_sizes, **message.sizes}
        shown = self.rows
        if message.where != "older":
            self.catching_up = False  # (the newer rows are read)
        if message.where == "older":
            self.rows = self.rows + message.rows
            self.exhausted = len(message.rows) < PAGE and message.reach is None
            self.loading_more = False
            if self.catching_up:  # it cancelled a live reload (one worker group): the newer rows are read again
                self.call_later(self.reload)
        elif message.where == "newer":
            self.sources.update(message.sources)
            listed = {row.id for row in self.rows}
            self.rows = message.rows + [row for shown in self.rows if (row := self._refreshed(shown, message))]
            now = [row for row_id, row in message.credited.items() if row is not None and row_id not in listed]
            self.rows = sorted(self.rows + now, key=lambda row: row.id, reverse=True) if now else self.rows
            self.uncredited -= message.credited.keys()
            if self.older_owed is not None:  # an older page (m, or the cursor near the end) it cancelled
                self.loading_more = True
                self.call_later(self.load, self.older_owed)
                self.older_owed = None
        else:
            self.uncredited = set()
            self.rows, self.rows_query = message.rows, message.query
            self.exhausted = len(message.rows) < PAGE and message.reach is None
        self.uncredited.update(message.uncredited)
        if len(self.uncredited) > UNCREDITED_MOST:  # (each live reload adds the new ones: the newest are kept)
            self.uncredited = set(sorted(self.uncredited)[-UNCREDITED_MOST:])
        if message.where != "newer":
            self.reach = message.reach
            self.refresh_bindings()  # (m More, and under the list how far the last page read: it stays)
            reach = self.reach
            self.table.border_subtitle = f"read down to row {reach.oldest_id:,} · m reads on" if reach else ""
        seen: set = set()  # a page read while newer changes arrived overlaps the rows already shown
        self.rows = [row for row in self.rows if not (row.id in seen or seen.add(row.id))]
        if message.where == "newer" and self.rows == shown:
            return  # (a commit to workbench.db that left the journal as shown: the index upkeep's, every 2 s)
        self._retitle()
        self.table.show(self.rows, self.titles, self.collapsed, arrived=message.where == "newer", heads=self.heads)
        stopped = f"{self.reach.note(len(message.rows))} m reads on." if self.reach is not None else None
        if not self.rows:
            said = message.error or stopped or empty_state(message.query)
            self.query_one("#timeline-detail", Static).update(literal(said, "$text-muted"))
        elif stopped and message.where != "newer":
            self.show_status(stopped)

    @staticmethod
    def _refreshed(row: Row, message: PageLoaded) -> Row | None:
        """A row shown, as a page of newer rows says it is now: undone, its source found, credited to its
        Hermes call (None: credited, and the filter no longer matches it, ``actor:external``)."""
        undone = message.undone or {}
        if row.id in message.credited:
            credited = message.credited[row.id]
            return None if credited is None else replace(credited, reverted_by=undone.get(row.id, row.reverted_by))
        source = message.sources.get(row.id, row.source)
        return replace(row, reverted_by=undone.get(row.id, row.reverted_by), source=source)

    def _retitle(self) -> None:
        """Each group's one line, from its loaded rows (a group is rarely split across pages)."""
        groups: dict[str, list[Row]] = {}
        for row in self.rows:
            if row.group:
                groups.setdefault(row.group, []).append(row)
        self.titles = {group: describe_group(rows, self.group_sizes.get(group)) for group, rows in groups.items()}
        self.heads = {group: group_head(rows) for group, rows in groups.items()}

    @on(Input.Changed, "#timeline-search")
    def _search_changed(self) -> None:
        self.load()

    @on(Input.Submitted, "#timeline-search")
    def _search_done(self) -> None:
        self.table.focus()

    @on(TimelineList.NearEnd)
    def _more(self) -> None:
        """The next older page, as the cursor nears the last row; not past where a page stopped reading
        short (``Reach``): the list would ask again and again, reading on with no bound. ``m`` does that."""
        if self.reach is None and not self.exhausted and not self.loading_more and self.rows:
            self.loading_more = True
            self.load(self.rows[-1].id)

    def action_more(self) -> None:
        """Read one more bounded page, below where the last one stopped reading short."""
        if self.reach is not None and not self.loading_more:
            self.loading_more = True
            self.load(self.reach.oldest_id)

    def engine_event(self, event: Event) -> None:
        self.request_reload()

    def reload(self) -> None:
        """The rows newer than those shown (all of them while nothing is shown)."""
        self.load(after_id=self.rows[0].id) if self.rows else self.load()

    # -- the selected row ----------------------------------------------------------
    @on(TimelineList.Highlighted)
    def _highlighted(self, message: TimelineList.Highlighted) -> None:
        row = message.row
        self.refresh_bindings()  # (space: a group to fold; g: a message to open)
        if row is None:
            detail = self.query_one("#timeline-detail", Static)
            detail.update(literal(self.titles.get(message.group or "", ""), "bold"))
            self._show_diff(None)
            return
        self._show_detail(row)
        if not row.session_id and row.id not in self.sources:
            self._find_source(row)
        self._show_diff(self.diffs.get(row.id))
        if has_skill_diff(row) and row.id not in self.diffs:
            self._find_diff(row)

    def _show_diff(self, lines: list[tuple[str, str]] | None) -> None:
        """An outside SKILL.md change's diff under the detail; none takes no row from the list above."""
        diff = self.query_one("#timeline-diff", DiffView)
        diff.display = lines is not None
        if lines is None:
            diff.clear()
        else:
            diff.show(lines)

    def _show_detail(self, row: Row) -> None:
        """The row's detail in the lines its pane has (its CSS max-height), ending in … where it needs more."""
        text = self._detail(row)
        detail = self.query_one("#timeline-detail", Static)
        room = int(detail.styles.max_height.value)  # (its CSS max-height: 4 below 24 rows)
        width = detail.content_size.width or self.size.width - 2
        shown = literal(text)  # (whole where it fits, folded by the pane's width)
        cut = len(wrap(shown, width)) > room
        detail.update(Content("\n").join(wrapped(text, width, room)) if cut else shown)
        if cut != self.detail_cut:
            self.detail_cut = cut
            self.refresh_bindings()

    def _detail(self, row: Row) -> str:
        """The row's detail as `timeline show` prints it, with where ``g`` opens the message it came from."""
        return "\n".join(detail_lines(row, self._source_of(row), opens=" · g opens it"))

    def on_resize(self) -> None:
        """The detail is fitted again to the width and lines the new size gives it (once its CSS applies)."""
        self.call_after_refresh(self._refit_detail)

    def _refit_detail(self) -> None:
        row, _ = self.table.current
        if row is not None:
            self._show_detail(row)

    def _source_of(self, row: Row) -> Source | None:
        """The message the row names, or the one a lookup found for it."""
        return Source.named_by(row) or self.sources.get(row.id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="timeline-source")
    def _find_source(self, row: Row, tell: bool = False) -> None:
        """An outside memory edit's Hermes message is looked up in state.db, off the UI thread.
        ``tell`` (g asked for it): said when there is none yet, and why (``unsourced``)."""
        source = Timeline(self.home).source(row)
        now = self.home.clock.now()
        settled = source is not None or now - row.at > HERMES_SLACK_S
        self.post_result(SourceFound(row.id, source, settled, opens=tell and source is not None))
        if tell and source is None:
            may_follow = self.home.archive.turn_may_follow(row.at, HERMES_SLACK_S)
            said = unsourced(row, now, may_follow)
            self.report(f"{said} g opens it once it is there." if source_may_come(row, now, may_follow) else said)

    @work(thread=True, exclusive=True, exit_on_error=False, group="timeline-diff")
    def _find_diff(self, row: Row) -> None:
        """What an outside SKILL.md edit or removal changed, read from workbench.db off the UI thread."""
        try:
            lines = Timeline(self.home).skill_diff(row)
        except WorkbenchError as exc:
            self.report(exc.in_app, error=True)
            return
        self.post_result(DiffFound(row.id, lines))

    @on(DiffFound)
    def _diff_found(self, message: DiffFound) -> None:
        self.diffs[message.row_id] = message.lines
        row, _ = self.table.current
        if row is not None and row.id == message.row_id:
            self._show_diff(message.lines)

    @on(SourceFound)
    def _source_found(self, message: SourceFound) -> None:
        if message.settled:  # a young row's turn may not be stored yet: asked again when next highlighted
            self.sources[message.row_id] = message.source
        if message.opens and message.source is not None:  # stored since g was pressed: opened, as g asked
            self.app.post_message(JumpToMessage(message.source.session_id, message.source.message_id))
        row, _ = self.table.current
        if row is not None and row.id == message.row_id and message.source is not None:
            self._show_detail(row)
            self.refresh_bindings()  # g can open it now

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        """``space`` is dimmed (and does nothing) off a group, ``g`` on a row with no message to open (a
        group's header, a row no session message wrote, a state.db deletion); ``r`` and ``enter`` act
        on every row, or say why not; none of them shows over an empty list. ``space`` reads Unfold on a
        folded group, Fold on any other row."""
        if action == "more":
            return self.reach is not None  # (only when a page stopped short: hidden otherwise)
        if action == "read_detail":
            return self.detail_cut and self.table.current[0] is not None  # (hidden where the pane holds it all)
        if action in ("fold", "unfold", "open_source", "open_message", "revert") and not self.rows:
            return False  # (an empty list, a page that stopped short among them: nothing for them to act on)
        if action not in ("fold", "unfold", "open_message") or not self.is_mounted:
            return True
        row, group = self.table.current
        if action in ("fold", "unfold"):
            group = self._group_here()
            if (action == "unfold") != (group in self.collapsed):
                return False  # (the other of Fold and Unfold is what space does here)
            return True if group else None
        if row is None or (row.subsystem == "sessions" and row.action in ("delete", "prune")):
            return None
        return True if self._source_of(row) is not None else None

    def explain_dimmed(self, action: str, parameters: tuple) -> str | None:
        """Why space, dimmed off a group, does nothing: said when pressed (``g`` says why in ``on_key``)."""
        if action in ("fold", "unfold"):
            return "This row is in no group: space folds or unfolds a group's rows (a revert, a curator run)."
        return None

    def on_key(self, event: events.Key) -> None:
        """``g``, dimmed on a row no message wrote, says why it opens nothing, instead of nothing at all."""
        if event.key == "g" and not isinstance(self.focused, Input) and self.check_action("open_message", ()) is None:
            event.stop()
            self.action_open_message()

    def action_focus_search(self) -> None:
        self.focus_box()

    def _group_here(self) -> str | None:
        """The group under the cursor: its header's, or the group of the row it is on."""
        row, group = self.table.current
        return group or (row.group if row else None)

    def action_fold(self) -> None:
        if self._group_here() not in self.collapsed:
            self.action_toggle_group()

    def action_unfold(self) -> None:
        if self._group_here() in self.collapsed:
            self.action_toggle_group()

    def action_toggle_group(self) -> None:
        group = self._group_here()
        if group:
            self.collapsed.symmetric_difference_update({group})
            self.table.show(self.rows, self.titles, self.collapsed, heads=self.heads)
            self.refresh_bindings()  # (space: Fold, or Unfold on the group folded now)

    @on(TimelineList.RowSelected)
    def _selected(self) -> None:
        self.action_open_source()

    def action_open_source(self) -> None:
        row, group = self.table.current
        if row is None:
            self.action_toggle_group()
        elif row.subsystem == "memory" and row.target in TARGETS:
            self._open_entry(row)
        elif row.subsystem == "skills":
            self._open_skill(row)
        elif row.subsystem == "approvals":
            self._open_proposal(row)
        elif row.session_id or row.subsystem == "sessions":
            self.action_open_message()
        else:
            self.show_status(f"Row {row.id} has no source to open.")

    @work(thread=True, exclusive=True, exit_on_error=False, group="timeline-open")
    def _open_entry(self, row: Row) -> None:
        """The entry a memory row wrote (or, for a removal, removed), read from workbench.db off the UI thread."""
        entry = self.home.journal.get(row.id)
        text = (entry.after if entry and entry.after is not None else entry.before if entry else "") or ""
        self.post_result(RowOpened(row.id, "memory", ShowEntry(row.target, text)))

    @work(thread=True, exclusive=True, exit_on_error=False, group="timeline-open")
    def _open_proposal(self, row: Row) -> None:
        """A pending proposal opens on Approvals; a decided one is not there (Approvals only said so, sending
        the person back here): its own rows are listed instead, which say how it was decided. The pending
        folder is looked in off the UI thread."""
        try:
            pending = self.home.approvals.store.find(row.target) is not None
        except WorkbenchError:  # (not a proposal's id: Approvals says what it is)
            pending = True
        opened = RowOpened(row.id, "approvals", ShowProposal(row.target))
        self.post_result(opened if pending else ProposalDecided(row.id, row.target))

    @work(thread=True, exclusive=True, exit_on_error=False, group="timeline-open")
    def _open_skill(self, row: Row) -> None:
        """The very skill a skills row is about (an archived copy, not the skill made anew under its
        name), found off the UI thread; the Skills screen selects it by its folder."""
        try:
            found = Timeline(self.home).skill_opened(row)
        except (WorkbenchError, OSError):  # (unreadable meanwhile: the name still finds the skill)
            found = None
        self.post_result(RowOpened(row.id, "skills", ShowSkill(row.target, found.rel if found is not None else None)))

    def _still_on(self, row_id: int) -> bool:
        """Whether an answer for row ``row_id`` may act: the cursor is on it still, here on the screen shown
        (an answer for a row the person left, or for a screen they left, opens nothing)."""
        row, _ = self.table.current
        return self.is_current and row is not None and row.id == row_id

    @on(RowOpened)
    def _row_opened(self, message: RowOpened) -> None:
        if self._still_on(message.row_id):
            self._open_mode(message.mode, message.shows)

    @on(ProposalDecided)
    def _proposal_decided(self, message: ProposalDecided) -> None:
        if self._still_on(message.row_id):
            self.query_one("#timeline-search", Input).value = f"target:{message.pending_id}"
            self.show_status(
                f"Proposal {message.pending_id} is no longer pending: its rows, listed here, say how it was decided."
            )

    def _open_mode(self, mode: str, message: Message) -> None:
        async def go() -> None:
            await self.app.switch_mode(mode)
            self.app.screen.post_message(message)

        self.app.call_later(go)

    def action_read_detail(self) -> None:
        """The selected row's detail whole, in a dialog that scrolls: the pane keeps what fits (4 lines in
        a short terminal), and a long ``why`` or summary ended in … with no way to read the rest here."""
        row, _ = self.table.current
        if row is not None:
            self.app.push_screen(ReadDialog(f"Row {row.id}", clipped(self._detail(row))))

    def action_open_message(self) -> None:
        row, _ = self.table.current
        if row is not None and row.subsystem == "sessions" and row.action in ("delete", "prune"):
            self.show_status(f"Row {row.id} deleted what it names from state.db: there is nothing left to open.")
            return
        if row is None:
            self.show_status("This is a group's header: move to one of its rows, and g opens the message it came from.")
            return
        source = self._source_of(row)
        if source is None and awaits_source(row, self.home.clock.now()):
            self._find_source(row, tell=True)  # (asked again: its turn may have been stored since)
            return
        if source is None:
            self.show_status(unsourced(row, self.home.clock.now(), turn_may_follow=False))
            return
        self.app.post_message(JumpToMessage(source.session_id, source.message_id))

    # -- reverting -------------------------------------------------------------------
    def action_revert(self) -> None:
        row, group = self.table.current
        ref = group if row is None else str(row.id)
        if ref:
            self._preview(ref)

    @work(thread=True, exclusive=True, exit_on_error=False, group="timeline-revert")
    def _preview(self, ref: str) -> None:
        try:
            preview = Timeline(self.home).preview(ref)
        except WorkbenchError as exc:
            self.report(exc.in_app, error=True)
            return
        self.post_result(RevertPreviewed(ref, preview))

    @on(RevertPreviewed)
    def _confirm(self, message: RevertPreviewed) -> None:
        ref, preview = message.ref, message.preview
        changes, refused = preview["changes"], preview["refused"]
        if not changes and len(refused) == 1 and "skill_md_only" in refused[0]:
            self._offer_skill_md(ref, refused[0])
            return
        if not changes:  # one status line: each row's reason its own clause (a refusal is no "nothing to do")
            lead = "Cannot revert: " if refused else "Nothing to revert: "
            self.show_status(lead + clauses(unrevertable_lines(preview)), error=bool(refused))
            return
        lines = [f"will {line}" for line in preview_lines(preview)]
        question = f"Revert {len(changes)} change{'s' * (len(changes) != 1)}?"

        def answered(yes: bool | None) -> None:
            if yes:
                self._revert(ref)

        self.ask(ConfirmDialog(question, "\n".join(lines)), answered)

    def _offer_skill_md(self, ref: str, refused: dict) -> None:
        """A skill removed outside with support files no copy was kept of: its SKILL.md alone can come
        back, which is asked, saying what stays lost (``revert --skill-md-only`` in the CLI)."""
        detail = (
            f"Row {refused['id']} ({refused['summary']}) cannot be reverted whole: the workbench kept no copy of "
            f"its support files. Only its SKILL.md comes back; {lost_files(refused['skill_md_only']['lost'])}."
        )

        def answered(yes: bool | None) -> None:
            if yes:
                self._revert(ref, skill_md_only=True)

        self.ask(ConfirmDialog("Bring back its SKILL.md alone?", detail), answered)

    @work(thread=True, exclusive=True, exit_on_error=False, group="timeline-revert")
    def _revert(self, ref: str, skill_md_only: bool = False) -> None:
        try:
            with self.workbench.user_write():
                result = Timeline(self.home).revert(ref, skill_md_only=skill_md_only)
        except WorkbenchError as exc:
            self.report(exc.in_app, error=True)
            return
        count = len(result["reverted"])
        message = f"Reverted {count} change{'s' * (count != 1)}."
        if result["skipped"]:  # as the confirmation said it would
            message += f" Left {len(result['skipped'])}: " + clauses(
                f"{r['id']}: {r['reason']}" for r in result["skipped"]
            )
        if result["refused"]:
            message += " Refused: " + clauses(
                f"row {r['id']}: {row_reason(r['id'], r['error'])}" for r in result["refused"]
            )
        self.report(message, error=bool(result["refused"]))


def empty_state(query: str) -> str:
    """What an empty timeline would show, and how to get there."""
    if query.strip():
        return f"No change matches {quoted(query.strip())}; clear the search (/, then delete) to see every change."
    return (
        "Nothing has changed what the agent knows yet: memory and skill writes, approvals and Curator passes "
        "show here as they happen (talk to the agent on Run, 5)."
    )
