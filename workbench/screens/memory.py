"""The Memory screen: frozen snapshot vs live entries, hand edits, history and origin.

For the chosen target (MEMORY or USER) the left column is the frozen snapshot (what the
running session's prompt holds; with no session running, the store as it was when the screen
opened, a session was left or ``f`` re-took it, titled ``taken HH:MM:SS``, never as what a new session
would freeze, which is the live file) and the right column is what is on disk now, aligned entry by
entry (``engine.memory.align``): one row per entry, a blank slot where a side has none,
marked ``+`` added, ``~`` changed, ``−`` removed, ``↕`` moved since the snapshot. The
columns move and scroll together; ``n``/``N`` go to the next/previous change. Hand
edits go through the same store calls the agent uses (validation, threat scan, limits)
with actor "user". An edit is opened against one version of an entry; if another writer
changed that entry in the meantime the save is refused and both versions are shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.cells import cell_len
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import OptionList, Static

from engine.clock import shown_time
from engine.diffs import WHITESPACE_ONLY
from engine.errors import WorkbenchError
from engine.events import (
    ConfigChanged,
    Event,
    JournalChanged,
    MemoryChanged,
    PendingChanged,
    RunnerEvent,
    SessionChanged,
)
from engine.memory import MemoryFileUnreadable, history
from engine.memory.align import ADDED, CHANGED, MOVED, REMOVED, UNCHANGED, UNLISTED, align
from engine.memory.budget import Budget, draft_budget
from engine.memory.format import Usage, listed
from engine.memory.ops import ALREADY_THERE
from engine.memory.snapshot import MemorySnapshot
from engine.memory.targets import FILE_NAMES, SHORT_NAMES, next_target
from engine.memory.threats import entry_flags, prompt_note
from engine.safety import Verdict
from engine.textsafety import apart, flat_line, quote_ending
from engine.tools import ToolContext
from widgets.drift_banner import DriftBanner
from widgets.entry_list import MARKS, EntryList, EntryRow
from widgets.fact_list import FactList
from widgets.gauge import CapacityGauge
from widgets.literal import WholeStatic, assemble, literal

from ..messages import JumpToMessage, ShowEntry
from .base import WorkbenchScreen
from .dialogs import ConfirmDialog, Conflict, DiskCheck, EditDialog, Outcome
from .help import HelpSection, binding_rows, working_bindings
from .memory_facts import FactsPane
from .repair import DriftExamined, DriftRepair

TITLES = SHORT_NAMES
MARK_OF = {UNCHANGED: "", ADDED: "+", CHANGED: "~", REMOVED: "-", MOVED: "↕", UNLISTED: ""}
# Runner events after which the running session's prompt may hold a new snapshot (``session_resumed``:
# Run resumed a session, ``EngineBridge.resumed``).
REFREEZE_KINDS = ("turn_started", "session_rotated", "session_resumed")


LIVE_EMPTY = "(no entries; press a to add)"
GONE_NOW = (  # ``e`` on an entry another writer removed or rewrote since the list was read
    "That entry is no longer in {file}: another writer removed or rewrote it since the list was read, so there "
    "is nothing to edit (the list is read again). To write your text anyway, add it as an entry of its own (a)."
)
FROZEN_EMPTY = "(empty snapshot: f refreezes it; the prompt holds no entries)"


def frozen_empty(error: str | None, session_running: bool) -> str:
    """The snapshot column's text while it holds no entry: ``f`` offered only where it refreezes the
    snapshot, with no session running (a session's prompt keeps its snapshot, and f says so)."""
    what = f"the file could not be read when it was taken: {error}" if error else "the prompt holds no entries"
    if session_running:
        return f"(empty snapshot: {what})"
    if not error:
        return FROZEN_EMPTY
    return (
        f"(empty snapshot: {what} Then f refreezes it)"
        if what.endswith(".")
        else f"(empty snapshot: {what}; f refreezes it)"
    )


@dataclass
class MemoryView:
    """Everything the screen shows for one target, read in a worker."""

    target: str
    frozen: list[EntryRow]  # one per aligned row, blank where the row has no frozen entry
    live: list[EntryRow]  # likewise for the live file
    entries: list[tuple[str | None, str | None]]  # each row's frozen entry as on disk, and its live entry
    live_entries: list[str]
    frozen_chars: int  # as the block's header counts them: [BLOCKED] placeholders included
    blocked: int  # frozen entries the prompt shows as placeholders
    live_chars: int
    limit: int
    ghost: int  # what the pending adds approving would apply would add (``PendingGrowth.chars``)
    taken_at: float
    time_known: bool = True  # False: a stored prompt no record dates; ``taken_at`` is a lower bound
    enabled: bool = True  # False: config keeps this store out of the prompt
    error: str | None = None  # why the live file could not be read (its columns then list nothing)
    frozen_error: str | None = None  # why the file could not be read when the snapshot was taken
    snapshot: MemorySnapshot | None = None  # taken by this load because the app had none yet
    refused: int = 0  # pending adds approving would refuse: not in ``ghost``, said beside it
    entry_count: int | None = None  # the live file's entries when only the first are listed (far over its limit)
    unscanned: int = 0  # frozen entries past the listed ones, which the threat scan did not read


@dataclass
class MemoryLoaded(Message):
    view: MemoryView


@dataclass
class DetailLoaded(Message):
    detail: history.EntryStory | None
    verdict: Verdict | None = None  # the threat scan's view of the entry, when it has one
    prompts: str | None = None  # which prompts block the entry (``threats.prompt_note``)
    error: str | None = None  # why its story cannot be told (workbench.db unreadable)


@dataclass
class EditChecked(Message):
    """``e``'s read of the live file: whether the entry it was pressed on is there still."""

    target: str
    text: str
    there: bool


@dataclass
class EntryAdded(Message):
    """A hand add was saved: select it once the next load shows it."""

    text: str


def user_context() -> ToolContext:
    return ToolContext(actor="user")


def result_error(result: dict) -> str | None:
    """The error of a store result, or None when it succeeded."""
    if result.get("success", True) is not False:
        return None
    return str(result.get("error") or "The write was refused.")


CHANGES = Binding.Group("Changes")
# The footer's width for every key of the columns and r Repair besides: narrower, n N Changes gives way to it.
ROOM_FOR_REPAIR = 90
FACTS_HELP = (
    "The facts the local provider keeps (memory.provider: local), each with the session message it came "
    "from. g or enter opens a fact's source message on the Sessions screen; p or esc goes back to the "
    "MEMORY/USER columns, where the entry keys work."
)


class MemoryScreen(WorkbenchScreen):
    TITLE_TEXT = "Memory"
    SELECTS = {"edit": "an entry", "remove": "an entry", "jump": "an entry", "undo": "an entry"}
    HELP = (
        "Left: the frozen snapshot the running session's prompt holds; with no session live, the store as it "
        "was when the snapshot was taken (its title says when; f refreezes it). Right: the live file, what a new "
        "session freezes; + added, ~ changed, − removed since the snapshot (takes effect next session). "
        "The columns are aligned: the same entry on the same row, a blank slot where one side has none, "
        "↕ an entry on another row since; n / N jump to the next / previous change. "
        "Hand edits use the agent's validation and are journaled as 'user'; Enter on a live entry edits it. "
        "A file that no longer round-trips, or a store over its limit, shows a banner; "
        "r repairs it (preview first, u undoes). "
        "p shows the local provider's facts instead (g: a fact's source message)."
    )

    FOOTER_FIRST = ("r",)  # where the footer is narrow (60 columns): the repair the banner asks for
    BINDINGS = [
        Binding("t", "switch_target", "Target", id="memory.target"),
        Binding("a", "add", "Add", id="memory.add"),
        Binding("e", "edit", "Edit", id="memory.edit"),
        Binding("d,delete", "remove", "Remove", key_display="d", id="memory.remove"),
        Binding("g", "jump", "Source", show=False, id="memory.jump"),  # the detail pane says "g: go to it"
        Binding("u", "undo", "Undo", id="memory.undo"),
        Binding("n", "change(1)", "Next change", group=CHANGES, id="memory.next_change"),
        Binding("N", "change(-1)", "Previous change", key_display="N", group=CHANGES, id="memory.previous_change"),
        # the same keys out of the footer, where at 80 columns n N Changes gives way to r Repair (help lists them)
        Binding("n", "change_unlisted(1)", "Next change", show=False, id="memory.next_change_unlisted"),
        Binding(
            "N", "change_unlisted(-1)", "Previous change", key_display="N", show=False, id="memory.previous_unlisted"
        ),
        Binding("p", "facts", "Facts", show=False, id="memory.facts"),  # in help: the footer is full at 80
        Binding("escape", "facts_back", "Back from facts", id="memory.facts_back"),  # only in the facts view
        Binding("p", "facts_back", "Back from facts", show=False, id="memory.facts_back_p"),  # (p there: back)
        # r: in the footer while this store needs a repair (the banner's), else only a status line saying why not
        Binding("r", "repair", "Repair", id="memory.repair"),
        Binding("r", "repair_none", "Repair", show=False, id="memory.repair_none"),
        Binding("f", "refreeze", "Refreeze", show=False, id="memory.refreeze"),
        Binding("left,h", "column('frozen')", "Frozen column", show=False, id="memory.frozen"),
        Binding("right,l", "column('live')", "Live column", show=False, id="memory.live"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.target = "memory"
        self.view: MemoryView | None = None
        self.detail: history.EntryStory | None = None
        self._wanted: str | None = None  # an entry to select once the next load shows (ShowEntry)
        self.drift = DriftRepair(self)  # the banner and repair flow of a file that no longer round-trips

    def compose_body(self) -> ComposeResult:
        yield DriftBanner(id="drift-banner")
        with Horizontal(id="memory-columns"):
            with Vertical(classes="memory-column", id="frozen-column"):
                yield Static("", id="frozen-title", classes="column-title")
                yield CapacityGauge(id="frozen-gauge")
                yield EntryList(id="frozen-list", empty_text=FROZEN_EMPTY)
            with Vertical(classes="memory-column", id="live-column"):
                yield Static("", id="live-title", classes="column-title")
                yield CapacityGauge(id="live-gauge")
                yield EntryList(id="live-list", empty_text=LIVE_EMPTY)
        yield FactsPane(id="provider-facts")
        yield self.status_line()
        with VerticalScroll(id="memory-detail"):
            yield WholeStatic("", id="detail-text")

    def on_mount(self) -> None:
        frozen, live = self.query_one("#frozen-list", EntryList), self.query_one("#live-list", EntryList)
        frozen.twin, live.twin = live, frozen  # row for row: one cursor, one scroll
        live.focus()
        self.watch(self.app, "running_session", lambda _: self.request_reload(), init=False)  # (the label, the side)
        self.drift.check(self.target)  # the banner first: a file far over its limit says so before it is listed
        self.reload()

    # -- loading ------------------------------------------------------------------
    def engine_event(self, event: Event) -> None:
        if isinstance(event, (MemoryChanged, PendingChanged, ConfigChanged)) or (  # a limit may have changed
            isinstance(event, RunnerEvent) and event.kind in REFREEZE_KINDS
        ):
            self.request_reload()
        elif (
            isinstance(event, (SessionChanged, JournalChanged))
            and event.actor == "external"
            and self.detail is not None
        ):
            # state.db changed: the entry's origin message may be stored now; workbench.db: another process
            # may have credited its row to Hermes's call. The entry under the cursor: the one shown may be the
            # last one's, the cursor's own still loading (this load, exclusive, would cancel it)
            focused = self.focused
            self.load_detail(self._entry_under(focused) if isinstance(focused, EntryList) else self.detail.entry)

    @work(thread=True, exclusive=True, group="memory-load", exit_on_error=False)
    def reload(self) -> None:
        try:
            view = self._read(self.target)
        except WorkbenchError as exc:  # e.g. the file is not UTF-8: say so, keep what is shown
            self.report(exc.in_app, error=True)
            self.drift.examine(self.target)  # (its banner and r follow the file, which changed)
            return
        self.post_result(MemoryLoaded(view))

    @on(ShowEntry)
    def _show_entry(self, message: ShowEntry) -> None:
        """Select ``message.text`` in the live column of its target (after a fresh load)."""
        self.target = message.target
        self._wanted = message.text
        self.show_status("")
        self.reload()

    def _select_wanted(self, view: MemoryView) -> None:
        text, self._wanted = self._wanted, None
        live = self.query_one("#live-list", EntryList)
        index = next((i for i, (_, entry) in enumerate(view.entries) if entry == text), None)
        if index is None:
            self.show_status(
                f"That entry is no longer in {TITLES[view.target]}: it was changed or removed "
                "after that message wrote it."
            )
            return
        live.focus()
        live.highlighted = index
        self.load_detail(text)

    def _reselect_detail(self) -> None:
        """After a reload, the detail pane follows the entry under the cursor (its story may have grown)."""
        if isinstance(self.focused, EntryList):
            self.load_detail(self._entry_under(self.focused))

    def _entry_under(self, column: EntryList) -> str | None:
        """The entry a column's cursor is on; on a blank slot, the other side's entry of that row."""
        index = column.highlighted
        if self.view is None or index is None or index >= len(self.view.entries) or not column.rows:
            return None
        frozen, live = self.view.entries[index]
        return (frozen or live) if column.id == "frozen-list" else (live or frozen)

    def _read(self, target: str) -> MemoryView:
        """Worker thread: the snapshot, the live entries and pending additions."""
        memory = self.home.memory
        snapshot, taken = self.workbench.frozen_snapshot, None
        if snapshot is None:
            snapshot = taken = memory.snapshot()
        unreadable = None
        try:
            live = memory.entries(target)
        except MemoryFileUnreadable:
            if self.view is not None and self.view.target == target:
                raise  # what was shown of it stays; the status line says why
            live, unreadable = [], memory.read(target).error  # (never the other store's entries under its name)
        usage = Usage.of(live, memory.limit(target))
        # a store far over its limit: its first entries only (the banner says why), so neither the rows
        # nor their alignment, scans and lookups grow with a 10 MB file
        count, live_listed = len(live), listed(live, usage.limit)
        live, live_rest = live[:live_listed], set(live[live_listed:])
        frozen = snapshot.listing(target)
        raw, shown = frozen.raw, frozen.shown
        frozen_rest = set(snapshot.raw_entries[target][len(raw) :])
        present = set(live) | live_rest
        gone = [entry for entry in raw if entry not in present]
        links = history.successors(memory, target, gone, snapshot.taken_at) if unreadable is None else {}
        frozen_rows, live_rows, entries = [], [], []
        for row in align(raw, live, links, (frozen_rest, live_rest)):
            # (a live file that cannot be read removed nothing: its entries are not known, so none is marked)
            mark = MARK_OF[row.status] if unreadable is None else ""
            old = raw[row.frozen] if row.frozen is not None else None
            new = live[row.live] if row.live is not None else None
            frozen_rows.append(EntryRow(shown[row.frozen] if row.frozen is not None else "", mark))
            threats = tuple(entry_flags(new).ids) if new is not None else ()
            live_rows.append(EntryRow(new or "", mark, old if row.status == CHANGED else None, threats))
            entries.append((old, new))
        growth = self.home.approvals.pending_growth(target)
        return MemoryView(
            target=target,
            frozen=frozen_rows,
            live=live_rows,
            entries=entries,
            live_entries=live,
            frozen_chars=frozen.chars,
            blocked=frozen.blocked,
            unscanned=frozen.unscanned,
            live_chars=usage.chars,
            limit=usage.limit,
            ghost=growth.chars,
            refused=growth.refused,
            taken_at=snapshot.taken_at,
            time_known=snapshot.time_known,
            enabled=snapshot.enabled[target],
            error=unreadable,
            frozen_error=snapshot.errors.get(target),
            snapshot=taken,
            entry_count=count if count > len(live) else None,
        )

    @on(MemoryLoaded)
    def _loaded(self, message: MemoryLoaded) -> None:
        view = message.view
        if self.workbench.frozen_snapshot is None and view.snapshot is not None:
            self.workbench.frozen_snapshot = view.snapshot  # what this screen compares with from now on
        if view.target != self.target:
            return
        self.view = view
        title = TITLES[view.target]
        self._title_frozen()
        counts = [(mark, sum(1 for row in view.live if row.mark == mark)) for mark in ("+", "~", "-")]
        counts.append(("↕", sum(1 for row in view.live if row.mark == "↕" and not row.blank)))  # one per entry
        changes = " ".join(f"{MARKS[mark][0]}{n}" for mark, n in counts if n)
        self.query_one("#live-title", Static).update(
            assemble(
                (f"{title} ", "bold $accent"),
                ("live ", "bold"),
                ("" if view.entry_count else "(next session) ", "$text-muted"),  # (room for what is listed)
                (
                    f"{len(view.live_entries):,} of {view.entry_count:,} listed " if view.entry_count else "",
                    "bold $warning",
                ),
                (changes, "bold $mark-changed"),
            )
        )
        frozen_gauge = self.query_one("#frozen-gauge", CapacityGauge)
        frozen_gauge.used, frozen_gauge.limit = view.frozen_chars, view.limit
        live_gauge = self.query_one("#live-gauge", CapacityGauge)
        live_gauge.used, live_gauge.limit, live_gauge.ghost = view.live_chars, view.limit, view.ghost
        refused = f"{view.refused} pending add{'s' * (view.refused != 1)} would be refused, not counted"
        live_gauge.note = refused if view.refused else ""
        frozen_list = self.query_one("#frozen-list", EntryList)
        frozen_list.empty_text = frozen_empty(view.frozen_error, bool(self.workbench.running_session))
        frozen_list.set_rows(view.frozen)
        live_list = self.query_one("#live-list", EntryList)
        live_list.empty_text = f"(could not be read: {view.error})" if view.error else LIVE_EMPTY  # (not "press a")
        live_list.set_rows(view.live)
        self.drift.check(view.target)
        self._said_unreadable()
        if self._wanted is not None:
            self._select_wanted(view)
        else:
            self._reselect_detail()

    @on(DriftExamined)
    def _drift_examined(self, message: DriftExamined) -> None:
        self.drift.show(message.target, message.found)
        self.refresh_bindings()  # r Repair is in the footer while this store needs one

    # -- selection and detail -----------------------------------------------------

    @on(EntryList.Highlighted)
    def _highlighted(self, message: EntryList.Highlighted) -> None:
        if message.entry_list is self.focused or (self.focused is None and message.entry_list.id == "live-list"):
            self.load_detail(self._entry_under(message.entry_list))

    @on(OptionList.OptionSelected, "#live-list")
    def _chosen(self) -> None:
        """Enter (or a click on the highlighted row) in the live column edits that entry."""
        self.action_edit()

    def on_descendant_focus(self, event) -> None:
        """Moving between the columns shows the detail of the entry now under the cursor."""
        if isinstance(event.widget, EntryList):
            self.load_detail(self._entry_under(event.widget))

    @work(thread=True, exclusive=True, group="memory-detail", exit_on_error=False)
    def load_detail(self, entry: str | None) -> None:
        if entry is None:
            self.post_result(DetailLoaded(None))
            return
        try:
            detail = history.story(self.home.memory, self.target, entry)
        except WorkbenchError as exc:
            self.post_result(DetailLoaded(None, entry_flags(entry), error=exc.in_app))
            return
        self.post_result(DetailLoaded(detail, entry_flags(entry), prompt_note(entry)))

    @on(DetailLoaded)
    def _detail_loaded(self, message: DetailLoaded) -> None:
        detail, verdict = message.detail, message.verdict
        self.detail = detail
        text = self.query_one("#detail-text", Static)
        if detail is None:
            said = f"Where this entry came from cannot be told: {message.error}" if message.error else None
            text.update(literal(said or "Select an entry to see where it came from.", "$text-muted"))
            return
        origin = detail.origin
        parts: list = [("origin ", "bold")]
        if origin.via == "before":
            parts.append((origin.describe() + " (no journal row or archived tool call wrote it)\n", "$text-muted"))
        else:
            parts += [(origin.who(), "bold $secondary"), (f" · {history.when(origin.at)}", "$text-muted")]
            if origin.session_id:
                parts.append((f" · session {origin.session_id}", ""))
            if origin.message_id is not None:
                parts.append((f" · message {origin.message_id} (g: go to it)", ""))
            parts.append((" · from the archive (Hermes's tool call)" if origin.via == "archive" else "", "$text-muted"))
            parts.append(("\n", ""))
        if verdict is not None and verdict.findings:
            parts += threat_parts(verdict)
        if message.prompts:
            parts += [("prompts ", "bold"), (message.prompts + "\n", "$warning")]
        for row in detail.history:
            version = flat_line(row.after if row.after is not None else row.before, 60)
            if row.before is not None and row.after is not None:  # a rewrite: cut where it differs from before
                version = apart(flat_line(row.before), flat_line(row.after), 60)[1]
            notes = history.row_notes(row)
            parts += [
                (f"{history.when(row.at)} ", "$text-muted"),
                (f"{row.actor:<8} {history.action_word(row):<8} ", "$secondary"),
                (version, ""),
                (f" ({'; '.join(notes)})" if notes else "", "$text-muted"),
                ("\n", ""),
            ]
        text.update(assemble(*parts))

    # -- actions ------------------------------------------------------------------
    def action_column(self, side: str) -> None:
        """Focus the frozen or live column (the detail pane follows its cursor)."""
        self.query_one(f"#{side}-list", EntryList).focus()

    def action_change_unlisted(self, step: int) -> None:
        self.action_change(step)

    def on_resize(self, _) -> None:
        self.refresh_bindings()  # (whether n N Changes has room beside r Repair in the footer)
        if self.view is not None:
            self.call_after_refresh(self._title_frozen)  # (its form follows the column's width)

    def _title_frozen(self) -> None:
        """The snapshot column's title, in the widest form its width shows whole: the time it was frozen
        or taken is what a narrow column (80 columns) must still show, so the words around it give way
        first (``frozen_notes``)."""
        view = self.view
        if view is None:
            return
        static = self.query_one("#frozen-title", Static)
        room = static.size.width  # (inside its padding)
        name = f"{TITLES[view.target]} "
        blocked = f"⚠ {view.blocked} blocked · " if view.blocked and view.enabled else ""  # (before what gives way)
        if view.unscanned:  # the threat scan read only the listed entries: ``blocked`` counts those
            scanned = sum(old is not None for old, _ in view.entries)
            blocked += f"{scanned:,} of {scanned + view.unscanned:,} scanned · "
        running = bool(self.workbench.running_session) and view.enabled
        notes = frozen_notes(view, running=running)
        if running:  # the word snapshot gives way before each shorter form: "MEMORY in the prompt · 12:00 UTC" says it
            forms = [(word, note) for note in notes for word in ("snapshot ", "")]
        else:  # "USER taken 12:00:00 UTC" would not say what it is: the word goes only with the bare time
            forms = [("snapshot ", note) for note in notes] + [("", note) for note in notes[-2:]]
        word, note = forms[0]
        if room > 0:  # (none yet before the first layout: the widest, and again once it is laid out)
            word, note = next((f for f in forms if cell_len(name + f[0] + blocked + f[1]) <= room), forms[-1])
        static.update(
            assemble((name, "bold $accent"), (word, "bold"), (blocked, "bold $warning"), (note, "$text-muted"))
        )

    def action_change(self, step: int) -> None:
        """Put both columns on the next (``step`` 1) or previous (-1) row with a mark, wrapping around."""
        marked = [i for i, row in enumerate(self.view.live) if row.mark] if self.view else []
        if not marked:
            self._say_unless_unreadable("No changes since the snapshot: both columns hold the same entries.")
            return
        column = self.focused if isinstance(self.focused, EntryList) else self.query_one("#live-list", EntryList)
        if not column.rows:  # this side is all blank slots: move on the other one
            column = column.twin or column
        here = column.highlighted if column.highlighted is not None else -1
        ahead = [i for i in marked if (i - here) * step > 0]
        index = (ahead[0] if step > 0 else ahead[-1]) if ahead else (marked[0] if step > 0 else marked[-1])
        column.focus()
        column.highlighted = index
        where = f"{marked.index(index) + 1} of {len(marked)}"
        if ahead:
            self.show_status(f"Change {where}.")
        else:
            side, end = ("below", "first") if step > 0 else ("above", "last")
            self.show_status(f"No more changes {side}: back to the {end} (change {where}).")

    def action_facts(self) -> None:
        """The local provider's facts in place of the columns, or back (see memory_facts.py)."""
        shown = self.query_one(FactsPane).toggle()
        for part in ("#memory-columns", "#memory-detail"):
            self.query_one(part).display = not shown
        if not shown:
            self.query_one("#live-list").focus()
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        """In the facts view only ``p`` and ``esc`` (back, the footer's way out at 80 columns, where the
        view's title is cut) are the screen's: the keys of the columns (t, a, e, d, u, n, f, r…) would act
        on entries it does not show (``a`` opened "Add to MEMORY" over the facts), so they are hidden
        there and do nothing; the fact list's own ``g`` stays. ``esc`` does nothing on the columns. ``p``
        is Facts on the columns and Back from facts in the facts view (the palette offers that one)."""
        facts = self.is_mounted and self.query_one(FactsPane).display
        if action in ("facts", "facts_back"):
            return (action == "facts_back") == bool(facts)
        if action in ("repair", "repair_none") and not facts:
            return (action == "repair") == self.drift.applies
        if action in ("change", "change_unlisted") and not facts:
            return (action == "change_unlisted") == (self.drift.applies and self.size.width < ROOM_FOR_REPAIR)
        return not facts

    def help_section(self) -> HelpSection:
        """In the facts view, help lists that view's keys (the fact list's g, then p and esc back): the
        columns' keys do nothing there (``check_action``)."""
        if not self.query_one(FactsPane).display:
            return super().help_section()
        keys = binding_rows(working_bindings(self.query_one(FactList))) + binding_rows(working_bindings(self))
        return HelpSection(f"{self.TITLE_TEXT}: provider facts", FACTS_HELP, keys)

    def action_facts_back(self) -> None:
        if self.query_one(FactsPane).display:
            self.action_facts()

    def action_switch_target(self) -> None:
        self.target = next_target(self.target)
        self.show_status("")
        self.reload()

    def action_refreeze(self) -> None:
        if self.workbench.running_session:
            self.show_status("A session is running: its prompt keeps its snapshot until it ends or compresses.")
            return
        self.workbench.frozen_snapshot = None
        self.show_status(
            "Snapshot refrozen: it is what a new session would freeze now; marks show what changes from here."
        )
        self.reload()

    def budget_for(self, replacing: str | None) -> Callable[[str], Budget]:
        """The budget of the store as shown, with a draft added or in place of ``replacing``."""
        view = self.view
        return draft_budget(
            view.live_entries if view else [],
            view.limit if view else 1,
            replacing,
            view.ghost if view else 0,
            self.home.memory.duplicate_threshold(),
        )

    def action_add(self) -> None:
        target = self.target
        add = _Add(self, target)
        watch = _OnDisk(self, target, None)
        self.app.push_screen(
            EditDialog(
                f"Add to {TITLES[target]}",
                "",
                add.submit,
                budget=self.budget_for(None),
                hint="Same rules as the agent: no empty text, no injection patterns, within the limit.",
                recheck=watch.check,
            ),
            lambda saved: self._after_edit(saved, add.note),
        )

    @on(EntryAdded)
    def _entry_added(self, message: EntryAdded) -> None:
        self._wanted = message.text
        self.request_reload()

    def action_edit(self) -> None:
        row = self._editable_row()
        if row is None or self.drift.takes(row.text, remove=False):
            return
        self._check_edit(self.target, row.text)

    @work(thread=True, exclusive=True, group="memory-edit-check", exit_on_error=False)
    def _check_edit(self, target: str, text: str) -> None:
        """The live file read again before the editor opens: an entry another writer removed or rewrote
        since the list was read (Hermes, before the watcher's reload) has nothing left to edit."""
        try:
            there = text in self.home.memory.entries(target)
        except WorkbenchError:  # (unreadable now: the editor's own check of the file says why)
            there = True
        self.post_result(EditChecked(target, text, there))

    @on(EditChecked)
    def _edit_checked(self, message: EditChecked) -> None:
        if not self.is_current or message.target != self.target:  # (left, or switched, meanwhile)
            return
        if not message.there:
            self.show_status(GONE_NOW.format(file=FILE_NAMES[message.target]), error=True)
            self.request_reload()
            return
        edit = _Edit(self, self.target, message.text)
        watch = _OnDisk(self, self.target, edit)
        self.app.push_screen(
            EditDialog(
                f"Edit {TITLES[self.target]} entry",
                message.text,
                edit.submit,
                rebase=edit.rebase,
                budget=self.budget_for(message.text),
                recheck=watch.check,
            ),
            lambda saved: self._after_edit(saved, edit.note),
        )

    def action_remove(self) -> None:
        row = self._editable_row()
        if row is None or self.drift.takes(row.text, remove=True):
            return
        target, entry = self.target, row.text
        self.app.push_screen(
            ConfirmDialog(f"Remove this {TITLES[target]} entry?", entry),
            lambda yes: self._remove(target, entry) if yes else None,
        )

    @work(thread=True, group="memory-write", exit_on_error=False)
    def _remove(self, target: str, entry: str) -> None:
        with self.workbench.user_write():
            error = result_error(self.home.memory.remove_exact(target, entry))
        self.report(error or "Entry removed.", error=error is not None)

    def _after_edit(self, saved: bool | None, note: str | None) -> None:
        """``note``: what the dialog's write did instead of saving (nothing to write)."""
        self.show_status((note or "Saved.") if saved else "")

    def _editable_row(self) -> EntryRow | None:
        """The live entry under the columns' shared cursor, which the detail pane describes too (tab there
        left ``e`` refused); not from the snapshot column, whose reader may think they edit the snapshot."""
        row = self.query_one("#live-list", EntryList).current
        if self.focused is self.query_one("#frozen-list", EntryList):
            self.show_status("e and d change the live file: l (or →) moves to the live column (right).")
            return None
        if row is None:
            self._say_unless_unreadable("Select an entry in the live column (right) first.")
            return None
        if row.blank:
            self.show_status(
                "That entry is already gone from the live file (removed or moved); nothing to change here."
            )
            return None
        return row

    def _said_unreadable(self) -> bool:
        """Say why the store shown lists nothing when its file could not be read, as its load did (True), if
        it could not."""
        if self.view is None or not self.view.error:
            return False
        self.show_status(f"{TITLES[self.view.target]} could not be read: {self.view.error}", error=True)
        return True

    def _say_unless_unreadable(self, message: str) -> None:
        """``message`` (what e, d, u or n lack), unless the store could not be read: then why it lists
        nothing, as its load said ("Select an entry first" sent the user looking for one)."""
        if not self._said_unreadable():
            self.show_status(message)

    def action_repair(self) -> None:
        self.drift.open()

    def action_repair_none(self) -> None:
        self.drift.open()  # (says why there is nothing to repair here)

    def on_drift_banner_repair_requested(self, _: DriftBanner.RepairRequested) -> None:
        self.drift.open()

    def action_jump(self) -> None:
        origin = self.detail.origin if self.detail else None
        if origin is None or origin.session_id is None:
            why = origin.describe() if origin is not None else "no entry selected"
            self.show_status(f"This entry has no recorded source message ({why}).")
            return
        self.app.post_message(JumpToMessage(origin.session_id, origin.message_id))

    def action_undo(self) -> None:
        """Undo the newest change of the selected entry, where it still applies (after a confirmation)."""
        if self.detail is None:
            self._say_unless_unreadable("Select an entry first.")
            return
        offer = self.detail.undo
        if offer is None:
            self.show_status(f"Nothing to undo: {self.detail.why_no_undo}")
            return
        self.app.push_screen(
            ConfirmDialog(offer.question, _undo_detail(offer)), lambda yes: self._undo(offer) if yes else None
        )

    @work(thread=True, group="memory-write", exit_on_error=False)
    def _undo(self, offer: history.Undo) -> None:
        with self.workbench.user_write():
            result = history.apply_undo(self.home.memory, offer, actor="user")
        error = result_error(result)
        self.report(error or result.get("message", "Undone."), error=error is not None)


def frozen_notes(view: MemoryView, *, running: bool) -> list[str]:
    """What the snapshot column's title says after its name, widest first: a live session's prompt,
    frozen when it was built; else the store as it was when this snapshot was taken (screen opened,
    session left, f), which a new session would not freeze (it freezes the live file). The narrower
    forms keep the time, its seconds and zone going last."""
    if not view.enabled:
        return ["disabled in config.yaml: not in the prompt", "not in the prompt: disabled", "disabled"]
    taken = shown_time(view.taken_at, "%H:%M:%S %Z")
    clock = shown_time(view.taken_at, "%H:%M:%S")
    short = shown_time(view.taken_at, "%H:%M")
    if running and not view.time_known:  # stored by another program: no record of when
        return [
            f"in the prompt · built {taken} or later (time not recorded)",
            f"in the prompt · built {taken} or later",
            f"in the prompt · built {clock} or later",
            f"in the prompt · built ≥ {clock}",
            f"prompt · built ≥ {clock}",
            f"prompt · ≥ {clock}",
            f"≥ {short}",
        ]
    if running:
        return [f"in the prompt · {taken}", f"in the prompt · {clock}", f"prompt · {clock}", clock, short]
    return [f"taken {taken} · f refreezes", f"taken {taken}", f"taken {clock}", clock, short]


def threat_parts(verdict: Verdict) -> list[tuple[str, str]]:
    """The detail pane's lines for an entry the threat scan flags: its grade, patterns and reasons."""
    effect = (
        "in the live column d removes it, e rewrites it"
        if verdict.dangerous
        else "it goes into the workbench's prompts as written; check that it is meant"
    )
    parts = [
        ("threat ", "bold $text-error"),
        (f"{verdict.level}: {', '.join(verdict.ids)}", "bold $text-error"),
        (f" ({effect})\n", "$text-muted"),
    ]
    return parts + [(f"  {reason}\n", "") for reason in verdict.reasons]


class _Add:
    """One hand add: ``note`` says so when nothing was written (the store holds that entry already)."""

    def __init__(self, screen: MemoryScreen, target: str):
        self.screen = screen
        self.target = target
        self.note: str | None = None

    def submit(self, text: str) -> Outcome:
        """Dialog worker: add, then select the new entry (the load after the write finds it)."""
        result = self.screen.home.memory.add(self.target, text, user_context())
        error = result_error(result)
        if error is None:
            self.note = ALREADY_THERE if result.get("message") == ALREADY_THERE else None  # (the CLI's words)
            self.screen.post_message(EntryAdded(text.strip()))
        return error


class _Edit:
    """One hand edit, opened against ``base``; re-based only when the user keeps theirs/mine."""

    def __init__(self, screen: MemoryScreen, target: str, base: str):
        self.screen = screen
        self.target = target
        self.original = base
        self.base: str | None = base
        self.unchanged = False  # the last submit found the draft as the entry is: nothing was written
        self.gone = False  # ... and the entry it opened on is no longer there (another writer removed or rewrote it)

    @property
    def note(self) -> str | None:
        if not self.unchanged:
            return None
        if self.gone:  # ("is as it was" was said of an entry Hermes had just removed)
            return "No change to save, and the entry was removed or rewritten since you opened it: left as it is now."
        return "No change to save: the entry is as it was."

    def submit(self, text: str) -> Outcome:
        """Worker thread: replace exactly our base; if it is gone, show whose version won."""
        memory = self.screen.home.memory
        if self.base is None:  # theirs was a removal and the user keeps the draft
            return result_error(memory.add_edit_of(self.target, self.original, text))  # (its history goes on)
        self.unchanged = text.strip() == self.base
        if self.unchanged:
            self.gone = self.base not in memory.entries(self.target)
            return None
        error = result_error(memory.replace_exact(self.target, self.base, text))
        if error and self.base not in memory.entries(self.target):
            return Conflict(self.original, self.theirs())
        return error

    def theirs(self) -> str | None:
        """What became of our base (its rewrites followed forward), if that is still live."""
        return history.successor(self.screen.home.memory, self.target, self.base)

    def rebase(self, conflict: Conflict) -> None:
        self.base = conflict.theirs


class _OnDisk:
    """An open editor's view of the store on disk: what changed since it opened (worker thread)."""

    def __init__(self, screen: MemoryScreen, target: str, edit: _Edit | None):
        self.screen = screen
        self.target = target
        self.edit = edit
        view = screen.view
        self.opened = view.live_entries if view and view.target == target else None

    def check(self) -> DiskCheck:
        memory = self.screen.home.memory
        try:
            entries, limit = memory.entries(self.target), memory.limit(self.target)
        except WorkbenchError as exc:
            return DiskCheck(f"{TITLES[self.target]} cannot be read now: {exc.in_app}")
        if self.opened is None:
            self.opened = entries
        base = self.edit.base if self.edit is not None else None
        moved = self.edit is not None and base is not None and base not in entries
        theirs = self.edit.theirs() if moved else None  # (moved: there is an edit)
        # Keep mine puts the draft in place of what another writer made of the entry (or back, if removed)
        budget = draft_budget(
            entries,
            limit,
            theirs if moved else base,
            self.screen.view.ghost if self.screen.view else 0,
            memory.duplicate_threshold(),
        )
        note = None
        if moved:  # (a removal leaves no version of theirs to show: what saving does then is said)
            note = (
                "Changed on disk since you opened it: another writer changed this entry to "
                f"{quote_ending(flat_line(theirs, 160))} Saving will show both versions first."
                if theirs is not None
                else "Changed on disk since you opened it: another writer removed this entry. Saving will ask "
                "first: keep mine adds your draft back as an entry, take theirs leaves it removed."
            )
        elif entries != self.opened:
            note = (
                f"Changed on disk since you opened it: other {TITLES[self.target]} entries changed "
                "(the budget below is measured against them)."
            )
        return DiskCheck(note, budget, (theirs,) if moved else None)


def _undo_detail(offer: history.Undo) -> str:
    """What an undo puts back: a whole file's changed lines, or the entry now and as it goes back to."""
    if offer.diff:
        said = f"{WHITESPACE_ONLY}\n" if offer.whitespace_only else ""
        more = f"\n… and {offer.more:,} more changed lines, which go back too." if offer.more else ""
        return (
            f"The lines it changes (- goes, + comes back):\n{said}"
            + "\n".join("  ⋯" if line is None else f"{line[0]} {line[1]}" for line in offer.diff)
            + more
        )
    now = flat_line(offer.now, 300) if offer.now is not None else "(nothing)"
    back = flat_line(offer.back_to, 300) if offer.back_to is not None else "(nothing)"
    if offer.now is not None and offer.back_to is not None:  # a rewrite: both cut where they differ
        now, back = apart(flat_line(offer.now), flat_line(offer.back_to), 300)
    return f"now: {now}\nback to: {back}"
