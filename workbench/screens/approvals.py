"""The Approvals screen: one queue for staged memory and skill writes.

For the highlighted proposal it shows origin and age, the diff approving would make,
the budget afterwards (memory) and near-duplicate warnings. Approve, reject,
edit-then-approve (same validation as the agent) and approve all; a proposal that would
be refused (its target changed since staging) says why and stays pending. A record file that
cannot be read gets its own row, marked unreadable: its pane says why and what can be done,
``r`` drops it (its bytes kept in the journal), and approving it is refused, saying why.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.cells import cell_len
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from engine import lock_waits
from engine.approvals.editing import batch_budget, edit_draft
from engine.approvals.preview import Seen, budget_label, refusal_now, seen_entries, seen_in, target_line
from engine.approvals.queue import NOT_APPLIED, DryRun, NoSuchRecord, UnusableRecord
from engine.approvals.records import HERMES_SEES, KINDS, PendingRecord, RecordProblem
from engine.clock import shown_time
from engine.errors import WorkbenchError
from engine.events import Event, MemoryChanged, PendingChanged, SkillChanged
from engine.memory import FILE_NAMES
from engine.memory.budget import draft_budget
from engine.memory.similar import closest, strongest
from engine.memory.targets import SHORT_NAMES
from engine.textsafety import clipped, flat_line, inline, path_lines, quote_ending
from engine.timeline import Timeline
from widgets.cursor_in_view import CursorList
from widgets.diff_view import DiffView
from widgets.gauge import CapacityGauge
from widgets.literal import WholeStatic, WholeWrap, age, assemble, cut_cells, literal

from ..messages import ShowProposal
from .base import ReloadWanted, WorkbenchScreen, clauses
from .dialogs import ConfirmDialog, DiskCheck, EditDialog, Outcome

AGE_TICK = 5.0  # seconds between redraws of the ages ("12s", "3m ago"), which change with nothing reloaded


DECISIONS = ("approve", "reject", "edit_approve", "approve_all", "reject_all")  # keys that need a proposal
KEYS = {"a": "approve", "e": "edit_approve", "r": "reject", "A": "approve_all", "R": "reject_all"}
UNREADABLE = "unreadable:"  # the option id of an unreadable record's row, before its path


@dataclass
class QueueView:
    records: list[PendingRecord]
    now: float
    problems: list[RecordProblem]  # files in pending/ that are not readable records (a row each, after them)
    empty_note: str = ""  # what an empty queue says (which gates are on)


@dataclass
class QueueLoaded(Message):
    view: QueueView


@dataclass
class PreviewLoaded(Message):
    preview: dict


@dataclass
class AllAsked(Message):
    """What approving (or rejecting) every pending write would do, one line or more a record."""

    approve: bool
    ids: list[str]  # the records listed: only these are decided
    detail: str
    seen: dict[str, Seen]  # by id, what each was shown as (the entries it hits, a delete's files)
    refused: int = 0  # how many of them approving now would refuse (they stay pending)
    unreadable: int = 0  # unreadable record files: listed to drop (reject), or left as they are (approve)
    dropped: tuple[str, ...] = ()  # (reject) the ids listed as unreadable files, the others as records


@dataclass
class Decided(Message):
    """A decision landed; ``rejected`` are the ids ``u`` can put back (empty after an approval), and
    ``group`` the Timeline group a reject all wrote them in (``u`` reverts it as one, as the Timeline does)."""

    rejected: list[str]
    group: str | None = None


class ApprovalsScreen(WorkbenchScreen):
    TITLE_TEXT = "Approvals"
    SELECTS = dict.fromkeys(("approve", "reject", "edit_approve"), "a proposal")
    HELP = (
        "Staged memory and skill writes wait here. The right side shows what approving would change, "
        "the memory budget afterwards and near-duplicates. Nothing is applied until you approve it; "
        "a proposal the workbench staged whose target changed since is refused and stays pending, while one "
        "Hermes staged (it pins no entry) applies to what its text matches now, with a warning when that "
        "entry was written after it was staged. Every decision asks "
        "first; right after a reject, u puts it back (older ones: r on their Timeline row). A decision "
        "waiting for a lock another process holds (Hermes mid-write) stops waiting on esc, deciding nothing. "
        "A record file that cannot be read is listed as unreadable: it cannot be approved; r drops it, "
        "keeping its bytes in the journal (R drops them with the rest)."
    )

    BINDINGS = [
        Binding("a", "approve", "Approve", id="approvals.approve"),
        Binding("r", "reject", "Reject", id="approvals.reject"),
        Binding("e", "edit_approve", "Edit", id="approvals.edit", tooltip="Edit the proposal, then approve it"),
        Binding("A", "approve_all", "Approve all", key_display="A", id="approvals.all"),
        Binding("R", "reject_all", "Reject all", key_display="R", show=False, id="approvals.reject_all"),
        Binding("u", "unreject", "Unreject", id="approvals.unreject", tooltip="Put the proposals just rejected back"),
        Binding("escape", "stop_waiting", "Stop waiting", show=False, id="approvals.stop_waiting"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.records: list[PendingRecord] = []
        self.problems: list[RecordProblem] = []  # the unreadable record files, listed after the records
        self.preview: dict | None = None  # what approving the highlighted proposal would do
        self._wanted: str | None = None  # a proposal to select once the next load shows (ShowProposal)
        # `a` or `e` came before this proposal's preview: its question or editor follows once the preview shows
        self._ask_when_shown: tuple[str, Callable[[], None]] | None = None
        self.rejected_group: str | None = None  # the reject all that wrote them, for `u`
        self.rejected: list[str] = []  # what the last reject here dropped, for `u` (until the next decision
        # here, or until the screen is left)
        self.stop_waits = threading.Event()  # esc: the decisions waiting for another process's lock stop waiting

    def compose_body(self) -> ComposeResult:
        with Horizontal(id="approvals-columns"):
            with Vertical(id="queue-column"):
                yield Static("", id="queue-title", classes="column-title")
                yield CursorList(id="queue")
            with Vertical(id="proposal-column"):
                yield Static("", id="proposal-title", classes="column-title")
                yield CapacityGauge(id="budget")
                with VerticalScroll(id="proposal-body"):
                    yield WholeStatic("", id="proposal-info")
                    yield WholeStatic("", id="proposal-warnings", classes="warning")
                    yield DiffView(id="proposal-diff")
        yield self.status_line()

    def on_mount(self) -> None:
        self.query_one("#budget").display = False
        self.query_one("#queue").focus()
        self.reload()
        self.set_interval(AGE_TICK, self.refresh_ages)

    def refresh_ages(self) -> None:
        """Redraw the ages in the queue rows and the proposal's header line, and only them (and the rows
        to the queue's width, after a resize): a reload would re-read every record and reset a long diff's
        scroll position."""
        now = self.home.clock.now()
        queue = self.query_one("#queue", OptionList)
        width = self._row_width()
        for index, record in enumerate(self.records[: queue.option_count]):
            if queue.get_option_at_index(index).id == record.id:
                queue.replace_option_prompt_at_index(index, _queue_row(record, now, width))
        current = self.current
        if current is not None and self.preview is not None and self.preview.get("id") == current.id:
            self.query_one("#proposal-info", Static).update(_info(current, now, self.preview.get("session_id")))

    def _row_width(self) -> int:
        """The cells a queue row's line has: the queue's, less a scrollbar, whether one shows yet or not."""
        queue = self.query_one("#queue", OptionList)
        return queue.content_region.width - queue.styles.scrollbar_size_vertical

    def engine_event(self, event: Event) -> None:
        if isinstance(event, (PendingChanged, MemoryChanged, SkillChanged)):
            self.request_reload()

    # -- queue --------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="approvals-load", exit_on_error=False)
    def reload(self) -> None:
        approvals = self.home.approvals
        scan = approvals.scan()
        self.post_result(
            QueueLoaded(QueueView(scan.records, self.home.clock.now(), scan.problems, approvals.empty_note()))
        )

    @on(QueueLoaded)
    def _queue_loaded(self, message: QueueLoaded) -> None:
        view = message.view
        queue = self.query_one("#queue", OptionList)
        row = queue.highlighted  # (set_options below clears the highlight)
        before = queue.get_option_at_index(row).id if row is not None and row < queue.option_count else None
        self.records, self.problems = view.records, view.problems
        self.query_one("#queue-title", Static).update(
            assemble(
                ("Pending ", "bold"),
                (f"({len(view.records)})", "bold $warning" if view.records else "$text-muted"),
                (f" · {len(view.problems)} unreadable" if view.problems else "", "$error"),  # (a row each)
            )
        )
        wanted, self._wanted = self._wanted, None
        self.refresh_bindings()  # (a decision needs a proposal; e one with text)
        ids = [r.id for r in view.records] + [_problem_key(p) for p in view.problems]
        unreadable = {p.id: _problem_key(p) for p in view.problems if p.id}
        if wanted is not None and wanted not in ids and wanted not in unreadable:  # opened from a Timeline row
            self.show_status(f"Proposal {wanted} is no longer pending: its Timeline rows say how it was decided.")
        if not ids:
            # (folded as the rows are: Textual's fold cut ``memory.write_approval`` at the queue's edge)
            queue.set_options([Option(WholeWrap(literal(view.empty_note, "$text-muted")), disabled=True)])
            self._show_preview(None)
            return
        width = self._row_width()
        queue.set_options(
            [Option(_queue_row(r, view.now, width), id=r.id) for r in view.records]
            + [Option(_problem_row(p), id=_problem_key(p)) for p in view.problems]
        )
        if wanted in ids or wanted in unreadable:
            index = ids.index(wanted if wanted in ids else unreadable[wanted])
        else:
            before = unreadable.get(before or "", before)  # (a proposal whose file broke: its file's row)
            index = (
                ids.index(before)
                if before in ids
                else min(row or 0, len(ids) - 1)  # the one decided is gone: the next one takes its row
            )
        queue.highlighted = index
        self._show_row(index)

    def _show_row(self, index: int) -> None:
        """The pane for the queue's row ``index``: a proposal's preview, or what an unreadable file is."""
        record = self.records[index] if index < len(self.records) else None
        problem = self._problem_at(index)
        asked = self._ask_when_shown[0] if self._ask_when_shown else None
        if record is None or record.id != asked:
            if self._ask_when_shown and problem is not None and problem.id == asked:  # (its file broke meanwhile)
                edit = self._ask_when_shown[1] == self.action_edit_approve
                self.show_status(_cannot_read(problem.id, problem.error, problem.reject_refusal, edit), error=True)
            self._ask_when_shown = None  # (the cursor moved on: `a` or `e` was for the row it left)
        if record is not None:
            self.load_preview(record.id)
        elif problem is not None:
            self._show_problem(problem)

    @on(ShowProposal)
    def _show_proposal(self, message: ShowProposal) -> None:
        self._wanted = message.pending_id
        self.reload()

    @property
    def current(self) -> PendingRecord | None:
        queue = self.query_one("#queue", OptionList)
        index = queue.highlighted
        return self.records[index] if self.records and index is not None and index < len(self.records) else None

    @property
    def current_problem(self) -> RecordProblem | None:
        """The unreadable record file highlighted, if the highlighted row is one."""
        return self._problem_at(self.query_one("#queue", OptionList).highlighted)

    def _problem_at(self, index: int | None) -> RecordProblem | None:
        """The unreadable record file at the queue's row ``index``, if that row is one (None past the end:
        a highlight posted before the queue was emptied may still name a row it no longer has)."""
        if index is None or not len(self.records) <= index < len(self.records) + len(self.problems):
            return None
        return self.problems[index - len(self.records)]

    @on(OptionList.OptionHighlighted, "#queue")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.refresh_bindings()  # (e: whether this one holds text to edit; a and e: whether it is readable)
        if event.option.id:
            self._show_row(event.option_index)

    # -- preview ------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="approvals-preview", exit_on_error=False)
    def load_preview(self, pending_id: str) -> None:
        try:
            preview = self.home.approvals.preview(pending_id)
        except Exception as exc:  # decided by another process meanwhile, unreadable record
            preview = {"id": pending_id, "error": getattr(exc, "message", str(exc)), "unread": exc}
            if isinstance(exc, (NoSuchRecord, UnusableRecord)):  # (the queue read it before: its row changes)
                self.post_result(ReloadWanted())
        pinned = (preview.get("payload") or {}).get("matched_entry")
        if preview.get("error") and pinned and preview.get("subsystem") == "memory":
            preview["now"] = self._closest_live(preview["payload"].get("target") or "memory", pinned)
        self.post_result(PreviewLoaded(preview))

    @on(PreviewLoaded)
    def _preview_loaded(self, message: PreviewLoaded) -> None:
        self._show_preview(message.preview)

    def _closest_live(self, target: str, pinned: str) -> str | None:
        """The live entry that most resembles the one a stale proposal was pinned to."""
        try:
            entries = self.home.memory.entries(target)
        except WorkbenchError:
            return None
        return next(iter(closest(pinned, entries)), None)

    def on_resize(self, _) -> None:
        self.call_after_refresh(self._title_proposal)  # (its form follows the pane's width)
        self.call_after_refresh(self.refresh_ages)  # (so do the queue rows' first lines)

    def _title_proposal(self) -> None:
        """The proposal pane's title in the widest form its width shows whole: what approving would do
        (``would be refused``, the gauge below saying by how much) is what a narrow pane (80 columns) must
        still show, so the amount gives way first, then the proposal's id (the CLI's ``pending list``
        names it), then the words are cut with …."""
        current, preview = self.current, self.preview
        if current is None or preview is None or preview.get("id") != current.id:
            return  # (no proposal, or an unreadable record's title, or a preview still on its way)
        static = self.query_one("#proposal-title", Static)
        where = f" · {flat_line(preview['path'], 80)}" if preview.get("path") else ""  # a skill's, under skills/
        if current.subsystem == "memory":  # which store: MEMORY.md or USER.md (the summary may not say)
            where = f" · {FILE_NAMES.get(str(current.payload.get('target') or 'memory'), 'MEMORY.md')}"
        head, named = f"{current.subsystem} {current.action} ", current.id + where
        short = where.removeprefix(" · ") or current.id  # (the id gives way to what it changes)
        labels = (
            [f" · {budget_label(preview, why=why)}:" for why in (True, False)] if preview.get("budget") else ["", ""]
        )
        forms = [(head, named, labels[0]), (head, named, labels[1]), (head, short, labels[1])]
        forms.append((f"{current.action} ", short, labels[1]))  # (60 columns: the file names the subsystem)
        forms.append(("", short, ""))  # (the path is never cut: the action gives way, the summary below says it)
        room = static.size.width  # (inside its padding; none before the first layout: the widest, then fitted)
        fits = (form for form in forms if room <= 0 or cell_len("".join(form)) <= room)
        head, name, label = next(fits, ("", "\n".join(path_lines(short, room)), ""))  # (on lines of its own)
        static.update(assemble((head, "bold $accent"), (name, "$text-muted"), (label, "")))

    def _show_preview(self, preview: dict | None) -> None:
        title = self.query_one("#proposal-title", Static)
        info = self.query_one("#proposal-info", Static)
        warnings = self.query_one("#proposal-warnings", Static)
        diff = self.query_one("#proposal-diff", DiffView)
        budget = self.query_one("#budget", CapacityGauge)
        if preview is None:
            title.update(literal("No proposal selected", "bold"))
            for widget in (info, warnings):
                widget.update("")
            diff.clear()
            budget.display = False
            return
        current = self.current
        if current is None or current.id != preview.get("id"):
            return
        self.preview = preview
        self.refresh_bindings()  # (``e`` is dimmed where the preview says no edit could make it apply)
        data = preview.get("budget")
        self._title_proposal()
        self.refresh_ages()  # the header's age and the queue's, from one clock reading
        notes = []
        if preview.get("error"):
            notes.append(("Would be refused: ", "bold $error"))
            notes.append((preview["error"] + "\n", ""))
            for text in preview.get("proposed") or []:  # the diff is empty: what it asks to write, to judge it
                notes += [("It asks to write: ", "bold"), (clipped(text) + "\n", "")]
            if preview.get("proposed_count", 0) > len(preview.get("proposed") or []):
                notes.append(
                    (f"and {preview['proposed_count'] - len(preview['proposed']):,} more texts\n", "$text-muted")
                )
            pinned = current.payload.get("matched_entry")
            if pinned:
                notes += [("Staged against: ", "bold"), (pinned + "\n", "")]
                notes += [("Now: ", "bold"), (preview.get("now") or "(no similar entry; it was removed)", "")]
                notes.append(("\n", ""))
        if preview.get("stale"):  # the write goes through, but would take away a later change (its diff's −)
            notes += [("Would be refused: ", "bold $error"), (preview["stale"] + "\n", "")]
        if preview.get("umbrella"):  # (the label names the skill the agent asked for)
            notes += [("Goes to another skill: ", "bold $warning"), (preview["umbrella"] + "\n", "")]
        for heading, entry in late_hits(preview):
            notes += [(heading + ": ", "bold $warning"), (flat_line(entry, 200) + "\n", "")]
        named, more = strongest(preview.get("duplicates") or [])
        for dup in named:
            label = "Exact duplicate of" if dup.get("exact") else f"Near-duplicate ({dup.get('score')}%) of"
            notes += [(f"{label}: ", "bold $warning"), (flat_line(dup.get("existing"), 200) + "\n", "")]
        if more:
            notes.append((f"and {more} more (`workbench pending show {current.id}` lists every one)\n", "$warning"))
        warnings.update(assemble(*notes) if notes else "")
        if preview.get("error") and not preview.get("diff"):
            diff.clear()  # refused: there is no change to show ("no change" would read as a harmless approval)
        else:
            diff.show(preview.get("diff") or [])
        budget.display = bool(data)
        if data:
            budget.used, budget.limit = int(data["chars"]), int(data["limit"])
        if self._ask_when_shown and self._ask_when_shown[0] == current.id:
            action, self._ask_when_shown = self._ask_when_shown[1], None
            if self.is_current:  # (not over another screen the user went to meanwhile)
                action()

    def _show_problem(self, problem: RecordProblem) -> None:
        """The pane for an unreadable record file: where it is, why it cannot be read, what can be done."""
        self.preview = None
        kind = KINDS.get(problem.subsystem or "", "pending")
        self.query_one("#proposal-title", Static).update(
            assemble(
                ("unreadable ", "bold $error"),
                (f"{kind} record ", "bold $accent"),
                (flat_line(problem.id or problem.name, 60), "$text-muted"),
            )
        )
        try:
            shown = str(Path(problem.path).relative_to(self.home.root))
        except ValueError:
            shown = problem.path
        self.query_one("#proposal-info", Static).update(
            assemble(("file ", "$text-muted"), (flat_line(shown, 200), "bold"))
        )
        self.query_one("#proposal-warnings", Static).update(
            assemble(
                ("Cannot be used: ", "bold $error"),  # (a file whose name is no id may read well)
                (flat_line(problem.error, 400) + "\n\n", ""),
                ("What can be done:\n", "bold"),
                (problem.remedy, ""),
                ("" if problem.reject_refusal else "\nPress r to reject it (u does not put it back).", "bold"),
            )
        )
        self.query_one("#proposal-diff", DiffView).clear()
        self.query_one("#budget", CapacityGauge).display = False

    def _refused_here(self, action: str) -> str | None:
        """Why ``action`` cannot act on the highlighted row or queue (None: it can), for a key dimmed so."""
        problem = self.current_problem if self.is_mounted else None
        if action in ("approve", "edit_approve") and problem is not None:
            return _cannot_read(problem.id or "this file", problem.error, problem.reject_refusal, action != "approve")
        if action == "reject" and problem is not None:
            return problem.reject_refusal
        droppable = sum(p.reject_refusal is None for p in self.problems)
        if action == "approve_all" and not self.records and self.problems:
            return f"Nothing readable to approve: {_files(len(self.problems))} cannot be approved. " + (
                "r rejects the highlighted one, R all of them."
                if droppable
                else "Nor can they be rejected: each row says why, and what to do instead."
            )
        if action == "reject_all" and not self.records and self.problems and not droppable:
            return (
                f"Nothing can be rejected: {_files(len(self.problems))} rejecting cannot take "
                "(each row says why, and what to do instead)."
            )
        return None

    def explain_dimmed(self, action: str, parameters: tuple) -> str | None:
        """Why a decision's key, dimmed, does nothing: said when pressed (``WorkbenchApp.run_action``;
        an unreadable record's reasons are said by ``on_key``, in the status line)."""
        if action not in DECISIONS:
            return None
        if (reason := self._refused_here(action)) is not None:
            return reason
        record = self.current if self.is_mounted else None
        if record is None:
            return "Nothing waits for approval." if not self.records else "Nothing selected."
        if action == "edit_approve":
            return self._draft(record).note
        return None

    def on_key(self, event: events.Key) -> None:
        """A decision's key dimmed on an unreadable record (or on a queue of only those) says why it does
        nothing, instead of nothing at all."""
        action = KEYS.get(event.key)
        if action is None or self.check_action(action, ()) is not None:
            return
        if (reason := self._refused_here(action)) is not None:
            event.stop()
            event.prevent_default()
            self.show_status(reason, error=True)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        """``u`` shows only while there is a rejection to undo; a decision is dimmed (and does nothing)
        with nothing pending, and ``e`` on a proposal that holds no text to edit (a consolidation plan,
        a removal: ``edit_draft`` says why, as approve --edit does)."""
        if action == "unreject":
            return bool(self.rejected)  # shown in the footer only while there is a rejection to undo
        if action == "stop_waiting":  # (the palette offered it with nothing waiting)
            return bool(self._waiting())
        if action in DECISIONS:
            if not self.is_mounted:
                return None
            if action == "approve_all":  # (an unreadable file is not approved: never counted)
                return True if self.records else None
            if action == "reject_all":
                return True if self.records or any(p.reject_refusal is None for p in self.problems) else None
            if self.current_problem is not None:  # (r drops it, unless it cannot be; a and e are refused)
                return None if self._refused_here(action) is not None else True
            record = self.current
            if record is None:
                return None
            if action == "edit_approve" and self._draft(record).text is None:
                return None
        return True

    def _opened(self, record: PendingRecord) -> dict:
        """The preview shown of ``record`` ({} while it loads)."""
        return self.preview if self.preview and self.preview.get("id") == record.id else {}

    def _draft(self, record: PendingRecord):
        """What ``e`` opens for ``record``: none, with why, for a proposal no edit can help (its preview says)."""
        return edit_draft(record.subsystem, record.payload, self._opened(record))

    # -- actions ------------------------------------------------------------------
    def _selected(self) -> PendingRecord | None:
        record = self.current
        if record is None:
            self.show_status("Nothing selected.")
        return record

    def action_approve(self) -> None:
        record = self._selected()
        if record is not None:
            preview = self._opened(record)
            if not preview:  # (a question without it would leave out a refusal, a late hit or a delete's files)
                self._ask_when_shown = record.id, self.action_approve
                self.show_status("Reading what approving it would change: the question follows.")
                return
            if preview.get("unread"):  # (no question: there is nothing it could approve)
                self.show_status(_unread(record.id, preview["unread"]), error=True)
                return
            targets = preview.get("targets") or []
            hits = [target_line(target, 160, warn=False) for target in targets]  # (``cautions`` warns)
            seen = seen_in(preview)  # approved against what it shows, or refused if that changed meanwhile
            self.confirm(
                f"Approve {record.subsystem} {record.action} {record.id}?",
                "\n".join([flat_line(record.summary, 300), *hits, *cautions(preview)]),
                lambda: self._decide(record.id, approve=True, seen=seen),
            )

    def action_reject(self) -> None:
        problem = self.current_problem
        if problem is not None:
            self._reject_unreadable(problem)
            return
        record = self._selected()
        if record is not None:
            self.confirm(
                f"Reject {record.subsystem} {record.action} {record.id}?",
                flat_line(record.summary, 300) + "\nThe journal keeps it: u puts it back right after.",
                lambda: self._decide(record.id, approve=False, unreadable=False),
            )

    def _reject_unreadable(self, problem: RecordProblem) -> None:
        if (refusal := problem.reject_refusal) is not None or problem.id is None:
            self.show_status(refusal or "", error=True)
            return
        self.confirm(
            f"Reject unreadable {KINDS.get(problem.subsystem or '', 'pending')} record {problem.id}?",
            f"It cannot be read: {flat_line(problem.error, 300)}\n"
            "Its file is removed and its exact bytes are kept in its journal row (u does not put it back)."
            + f"\n{HERMES_SEES.get(problem.hermes, '')}",
            lambda: self._decide(problem.id or "", approve=False, unreadable=True),
        )

    @work(thread=True, group="approvals-write", exit_on_error=False)
    def _decide(
        self, pending_id: str, *, approve: bool, seen: Seen | None = None, unreadable: bool | None = None
    ) -> None:
        approvals = self.home.approvals
        try:
            with lock_waits.cancellable(self.stop_waits):
                if approve:
                    result = approvals.approve(pending_id, seen=seen)
                else:  # (as asked: a record, or an unreadable file; one that is the other now is refused)
                    result = approvals.reject(pending_id, unreadable=unreadable)
        except Exception as exc:
            result = {"success": False, "error": getattr(exc, "message", str(exc))}
        ok = result.get("success") is not False
        if ok:  # (in the app's words where the write's result has its own: a key to press, not a command)
            message = (result.get("result") or {}).get("in_app") or result.get("message")
            undoable = not approve and not result.get("unusable")  # (a dropped unreadable file is not rebuilt)
            self.post_result(Decided([pending_id] if undoable else []))
            if undoable:
                message = f"{message} Press u to put it back."
        else:
            scan = approvals.scan()
            record = next((r for r in scan.records if r.id == pending_id), None)
            error = str(result.get("error") or "refused")
            if record is None and not any(p.id == pending_id for p in scan.problems):  # decided meanwhile
                message = _decided_elsewhere(pending_id, "approved" if approve else "rejected")
            elif approve:  # (its file kept, readable or not)
                message = f"{NOT_APPLIED}{error}"
            else:
                message = f"Not rejected, nothing changed: {error}"
        self.report(message or "Done.", error=not ok)

    def action_edit_approve(self) -> None:
        record = self._selected()
        if record is None:
            return
        if not self._opened(record):  # (its preview may say no edit can help: a stale patch's, before any typing)
            self._ask_when_shown = record.id, self.action_edit_approve
            self.show_status("Reading what approving it would change: the editor follows.")
            return
        draft = self._draft(record)
        if draft.text is None:
            self.show_status(draft.note, error=True)  # (as the dimmed key says it: `e` came before the preview)
            return
        opened = self._opened(record)
        if opened.get("unread"):
            self.show_status(_unread(record.id, opened["unread"], edit=True), error=True)
            return
        heard: set[str] = set()  # late hits this box has warned of: a save after the warning approves
        # said before any typing: a refusal an edit may help (its size or words; one about its target, such as a
        # replace whose entry is gone, no edit helps: ``edit_refusal`` refused the key above)
        refused = f"As it stands it would be refused: {opened['error']}" if opened.get("error") else None
        # (what the draft takes the place of, which the box does not show)
        hits = seen_entries(opened.get("targets") or []) if record.action == "replace" else {}
        replaces = f"It replaces {quote_ending(flat_line(hits[1], 160))}" if 1 in hits else None
        self.app.push_screen(
            EditDialog(
                f"Edit, then approve {record.subsystem} {record.action} {record.id}",
                draft.text,
                lambda edited: self._approve_edited(record, edited, heard),
                hint=" ".join(
                    filter(
                        None, (refused, replaces, draft.note, "Your text is checked exactly as the agent's would be.")
                    )
                ),
                budget=self._draft_budget(record, opened),
                recheck=lambda: self._recheck(record, opened),
                verb="Approve",
            ),
            lambda saved: self._approved_edited() if saved else None,
        )

    def _approved_edited(self) -> None:
        self.show_status("Approved with your edit.")
        self._forget_rejected()  # a decision since: `u` no longer offers the reject before it

    def _draft_budget(self, record: PendingRecord, preview: dict):
        """For a memory add, replace or batch: the store's budget with the edited text, from a preview."""
        if record.subsystem != "memory" or preview.get("id") != record.id or not preview.get("budget"):
            return None
        threshold = self.home.memory.duplicate_threshold()
        if record.action == "batch":
            return batch_budget(
                record.payload, list(preview.get("before") or []), int(preview["budget"]["limit"]), threshold
            )
        targets = preview.get("targets") or []  # the entry a replace hits now, pinned or by Hermes's old_text
        replacing = targets[0]["entry"] if record.action == "replace" and targets else None
        return draft_budget(
            list(preview.get("before") or []),
            int(preview["budget"]["limit"]),
            replacing,
            threshold=threshold,
        )

    def _recheck(self, record: PendingRecord, opened: dict) -> DiskCheck:
        """Worker thread, for an open edit-then-approve: the proposal and its target as they are now."""
        try:
            now = self.home.approvals.preview(record.id)
        except NoSuchRecord:
            return DiskCheck(_decided_elsewhere(record.id, "approved"))
        except Exception as exc:  # its file became unreadable
            return DiskCheck(f"Changed on disk since you opened it: {getattr(exc, 'message', exc)}")
        note = None
        if now.get("error") and now.get("error") != opened.get("error"):
            note = f"Changed on disk since you opened it: approving as staged would now be refused: {now['error']}"
        elif now.get("before") != opened.get("before") or now.get("diff") != opened.get("diff"):
            note = f"Changed on disk since you opened it: {_what_changed(record, opened, now)}."
        return DiskCheck(note, self._draft_budget(record, now))

    def _approve_edited(self, record: PendingRecord, text: str, heard: set[str]) -> Outcome:
        """Worker thread: approve with the edit. A replace or remove that now hits an entry written after
        the proposal was staged (Hermes wrote it while the box was open, say) asks first, as ``a`` does:
        the first save names it and changes nothing, a second approves."""
        try:
            return self._approve_edited_now(record, text, heard)
        except NoSuchRecord:
            return _decided_elsewhere(record.id, "approved")

    def _approve_edited_now(self, record: PendingRecord, text: str, heard: set[str]) -> Outcome:
        seen = None
        if record.subsystem == "memory":
            self.home.memory.catch_up()  # (a write not journaled yet names no date)
            preview = self.home.approvals.preview(record.id)
            late = [(why, entry) for why, entry in late_hits(preview) if entry not in heard]
            if late:
                heard.update(entry for _, entry in late)
                warnings = "\n".join(f"⚠ {why}: {flat_line(entry, 160)}" for why, entry in late)
                return f"Nothing was approved. Save again to approve with your edit anyway, or cancel.\n{warnings}"
            seen = seen_in(preview)  # what was checked is what it changes
        result = self.home.approvals.approve(record.id, edit=text, seen=seen)
        return None if result.get("success") else str(result.get("error") or "refused")

    def action_approve_all(self) -> None:
        self._confirm_all(approve=True)

    def action_reject_all(self) -> None:
        self._confirm_all(approve=False)

    def _confirm_all(self, *, approve: bool) -> None:
        droppable = [] if approve else [p for p in self.problems if p.id and p.reject_refusal is None]
        if not self.records and not droppable:
            self.show_status(
                self._refused_here("approve_all" if approve else "reject_all") or "Nothing waits for approval."
            )
            return
        rejectable = any(p.reject_refusal is None for p in self.problems)
        self._ask_all(approve, list(self.records), droppable, len(self.problems), rejectable)

    @work(thread=True, exclusive=True, group="approvals-ask", exit_on_error=False)
    def _ask_all(
        self,
        approve: bool,
        records: list[PendingRecord],
        droppable: list[RecordProblem],
        unreadable: int,
        rejectable: bool,
    ) -> None:
        """Each record's line, and for an approval, the entry each of its replaces and removes hits
        now (read off the UI thread: a preview reads the files), each foreseen after the ones before
        it, as approving all applies them (``DryRun``)."""
        lines, seen, refused = [], {}, 0
        run = DryRun()
        for record in records:
            lines.append(f"{record.id}  {'Hermes · ' if record.by_hermes else ''}{flat_line(record.summary, 70)}")
            if not approve:
                continue
            try:
                preview = self.home.approvals.preview(record.id, batch=run)
            except WorkbenchError as exc:
                lines.append(f"    cannot be previewed: {exc.in_app}")
                continue
            targets = preview.get("targets") or []
            hits = (target_line(t, 60, warn=False) for t in targets)  # (``cautions`` warns)
            lines += [f"    {line}" for line in [*hits, *cautions(preview)]]
            seen[record.id] = seen_in(preview)
            refused += bool(refusal_now(preview))
        ids = [record.id for record in records] + [str(problem.id) for problem in droppable]
        lines += [f"{problem.id}  unreadable · {flat_line(problem.error, 70)}" for problem in droppable]
        if approve and unreadable:  # (never counted as approved: there is nothing in them to apply)
            rejects = " (r rejects one)." if rejectable else "."
            lines.append(f"Left as they are: {_files(unreadable)}, which cannot be approved{rejects}")
        elif unreadable > len(droppable):
            lines.append(
                f"Left as they are: {_files(unreadable - len(droppable))} rejecting cannot take (their rows say why)."
            )
        count = len(droppable) if not approve else unreadable
        dropped = tuple(str(problem.id) for problem in droppable)
        self.post_result(AllAsked(approve, ids, "\n".join(lines), seen, refused, count, dropped))

    @on(AllAsked)
    def _asked_all(self, message: AllAsked) -> None:
        verb = "Approve" if message.approve else "Reject"
        count = len(message.ids)
        refused = f" ({message.refused} of them would be refused now and stay pending)" if message.refused else ""
        files = f"{message.unreadable} unreadable file{'s' * (message.unreadable != 1)}"
        if message.unreadable and not message.approve and message.unreadable == count:  # (no proposal among them)
            question = "Reject the unreadable file?" if count == 1 else f"Reject all {files}?"
        elif message.unreadable and not message.approve:  # (counted in: each is listed, and dropped)
            question = f"Reject all {count} pending write{'s' * (count != 1)}, {files} among them?"
        else:
            question = f"{verb} all {count} pending write{'s' * (count != 1)}?{refused}"
        self.ask(
            ConfirmDialog(question, message.detail),
            lambda yes: self._decide_all(message.approve, message.ids, message.seen, message.dropped) if yes else None,
        )

    @work(thread=True, group="approvals-write", exit_on_error=False)
    def _decide_all(self, approve: bool, ids: list[str], seen: dict[str, Seen], dropped: tuple[str, ...]) -> None:
        approvals = self.home.approvals
        with lock_waits.cancellable(self.stop_waits):
            result = (
                approvals.approve_all(only=ids, seen=seen)
                if approve
                else approvals.reject_all(only=ids, unreadable=True, shown_unreadable=set(dropped))
            )
        done, failed = result.get("approved" if approve else "rejected", []), result.get("failed", [])
        message = f"{'Approved' if approve else 'Rejected'} {len(done)}."
        if approve and result.get("group"):  # (u puts back rejections only; an approval's undo is a revert)
            them = "it" if len(done) == 1 else "them together"  # (said by the count, before any refusal)
            message += f" To undo {them}: r on the Timeline's group {result['group']}."
        undoable = [] if approve else [item["id"] for item in done if not item.get("unusable")]
        self.post_result(Decided(undoable, result.get("group") if undoable else None))
        dropped = 0 if approve else len(done) - len(undoable)
        if dropped:
            message += f" {_files(dropped)} dropped, each kept in its journal row."
        if undoable:  # (not the files dropped: restore does not rebuild them)
            if dropped:
                them = "the proposal" if len(undoable) == 1 else f"the {len(undoable)} proposals"
            else:
                them = "it" if len(undoable) == 1 else "them"
            message += f" Press u to put {them} back."
        if failed:
            message += f" {len(failed)} refused and still pending: " + clauses(map(_failure_said, failed))
        if result.get("gone"):
            message += f" Decided elsewhere meanwhile, so not here: {', '.join(result['gone'])}."
        if result.get("cancelled"):  # (esc or quitting ended a wait for another process's lock)
            message += f" Stopped, still pending: {', '.join(result['not_decided'])}. {result['cancelled']}"
        self.report(message, error=bool(failed))

    def action_stop_waiting(self) -> None:
        """esc: decisions of this screen waiting for a lock another process holds stop waiting (nothing
        of them is written; each says so when it ends); one that holds its lock runs to its end."""
        if not self._waiting():
            return
        self.stop_waits.set()
        self.stop_waits = threading.Event()  # (the next decision waits again)
        self.show_status("Stopping: a decision waiting for a lock decides nothing…")

    def _waiting(self) -> list:
        """This screen's decisions waiting for another process's lock now."""
        return [wait for wait in lock_waits.under_way() if self.stop_waits in wait.cancel]

    @on(Decided)
    def _remember_rejected(self, message: Decided) -> None:
        # a reject that lands after the screen was left (it waited on a lock, say) is not "just made"
        self.rejected = message.rejected if self.is_current else []
        self.rejected_group = message.group if self.rejected else None
        self.refresh_bindings()

    def on_screen_suspend(self) -> None:
        """Leaving the screen ends `u`'s offer: back later, the reject is no longer "just made" (the
        Timeline's ``r`` still puts it back). A question or the help over it leaves nothing."""
        if not isinstance(self.app.screen, ModalScreen):
            self._forget_rejected()

    def _forget_rejected(self) -> None:
        self.rejected, self.rejected_group = [], None
        self.refresh_bindings()

    def action_unreject(self) -> None:
        """Undo the last reject on this screen right away (older ones: the Timeline's ``r``); a reject
        all's by reverting its group, so the Timeline lists one undo of it, as its ``r`` would."""
        if self.rejected:
            ids, group = self.rejected, self.rejected_group
            self._wanted = ids[0] if len(ids) == 1 else None  # selected once it shows again
            self._forget_rejected()
            if group is None:
                self._restore(ids)
            else:
                self._revert_group(group)

    @work(thread=True, group="approvals-write", exit_on_error=False)
    def _restore(self, ids: list[str]) -> None:
        back, refused = [], []
        for pending_id in ids:
            try:
                with lock_waits.cancellable(self.stop_waits):
                    back.append(self.home.approvals.restore(pending_id)["id"])
            except WorkbenchError as exc:
                refused.append(f"{pending_id}: {exc.in_app}")
        self._report_put_back(len(back), refused)

    @work(thread=True, group="approvals-write", exit_on_error=False)
    def _revert_group(self, group: str) -> None:
        try:
            with lock_waits.cancellable(self.stop_waits):
                result = Timeline(self.home).revert(group)
        except WorkbenchError as exc:
            self.report(f"Nothing was put back: {exc.in_app}", error=True)
            return
        refused = [str(item["error"]) for item in result["refused"]]
        self._report_put_back(len(result["reverted"]), refused)

    def _report_put_back(self, back: int, refused: list[str]) -> None:
        message = f"Put back {back}: waiting for approval again." + (
            f" {len(refused)} could not be: " + clauses(refused) if refused else ""
        )
        self.report(message, error=bool(refused))


def cautions(preview: dict) -> list[str]:
    """What a question to approve repeats from the pane, one line each: a refusal the preview foresees
    (approving now would be refused, and it stays pending), then each entry written after staging."""
    lines = [f"⚠ {heading}: {flat_line(entry, 160)}" for heading, entry in late_hits(preview)]
    refusal = preview.get("error") or preview.get("stale")
    if now := refusal_now(preview):
        lines.insert(0, f"⚠ Would be refused now, and stay pending: {flat_line(now, 400)}")
    elif refusal:  # a skill's, after an earlier one: judged against the skill as it is now
        lines.insert(
            0,
            f"⚠ Judged against the skill as it is now: {preview['after_earlier']}, before it here, changes "
            f"that skill first, so it may apply then; as it stands: {flat_line(str(refusal), 400)}",
        )
    return lines


def late_hits(preview: dict) -> list[tuple[str, str]]:
    """(what to say, the entry) for each entry a Hermes proposal's replace or remove hits that was
    written after it was staged (approving it anyway is allowed, so the question repeats this)."""
    hits = []
    for hit in preview.get("targets") or []:
        if newer := hit.get("written_after"):
            written = "written" if newer["surely"] else "perhaps written"
            at = shown_time(newer["at"], "%H:%M") or newer["at"]
            hits.append(
                (
                    f"{hit['action'].capitalize()} hits an entry {written} after this was staged "
                    f"({newer['actor']}, {at}): it may not be the one meant",
                    hit["entry"],
                )
            )
    return hits


def _what_changed(record: PendingRecord, opened: dict, now: dict) -> str:
    """What changed under an open edit-then-approve: for memory, the entry it hits or only others beside
    it (Hermes's own writes every few seconds read "the target changed", as if it were the entry)."""
    if record.subsystem != "memory":
        return "the target changed (the budget below follows it)"
    if seen_entries(now.get("targets") or []) != seen_entries(opened.get("targets") or []):
        return "an entry it changes was rewritten (the budget below follows it)"
    store = SHORT_NAMES.get(now.get("target") or record.payload.get("target") or "memory")  # (a refusal names none)
    others = f"other {store} entries" if store else "other entries"
    return f"{others} changed (the budget below is measured against them)"


def _cannot_read(name: str, error: str, reject_refusal: str | None = None, edit: bool = False) -> str:
    """What a or e (``edit``) says on a record file that cannot be read: why nothing can be approved or
    edited, what to do."""
    none = "nothing to edit" if edit else "no write to apply"
    return f"{_not_done(edit)}: {name} cannot be read ({flat_line(error, 200)}), so there is {none}. " + (
        reject_refusal or "Fix the file by hand, or press r to reject it."
    )


def _unread(pending_id: str, exc: Exception, edit: bool = False) -> str:
    """What a or e (``edit``) says, instead of asking, on a proposal whose preview could not be read
    (``exc``): its file broke or went after the queue read it, or the read failed."""
    if isinstance(exc, NoSuchRecord):
        return _decided_elsewhere(pending_id, "opened for editing" if edit else "approved")
    if isinstance(exc, UnusableRecord):
        return _cannot_read(pending_id, str(exc.details.get("problem") or exc.message), edit=edit)
    unasked = "the editor was not opened" if edit else "it was not asked"
    return (
        f"{_not_done(edit)}: what approving {pending_id} would change could not be read "
        f"({flat_line(getattr(exc, 'message', str(exc)), 200)}), so {unasked}; it stays pending. Select it again "
        "to read it again, or press r to reject it."
    )


def _not_done(edit: bool) -> str:
    """How a refusal of a (approve) or e (edit, then approve) begins."""
    return "Not opened for editing" if edit else "Not approved"


def _decided_elsewhere(pending_id: str, verb: str) -> str:
    return (
        f"Not {verb} here: {pending_id} is no longer pending; it was decided elsewhere, by another workbench "
        "command or by Hermes (the Timeline says how)."
    )


def _files(count: int) -> str:
    return f"{count} unreadable file{'s' * (count != 1)}"


def _problem_key(problem: RecordProblem) -> str:
    """The option id of an unreadable record file's row (its path: an id may name one in each folder)."""
    return UNREADABLE + problem.path


def _problem_row(problem: RecordProblem) -> WholeWrap:
    """An unreadable record file's row, in the shape of a proposal's: what, then its id and why (folded as a
    proposal's row is)."""
    kind = KINDS.get(problem.subsystem or "", "pending")
    return WholeWrap(
        assemble(
            (f"{kind:<6} {'unreadable':<11}", "bold $error"),
            ("\n⚠ ", "bold $error"),
            (f"{flat_line(problem.id or problem.name, 40)} · ", "$text-muted"),
            (flat_line(problem.error, 40), ""),  # (two lines at 80 columns; the pane says it whole)
        )
    )


def _queue_row(record: PendingRecord, now: float, width: int) -> WholeWrap:
    """What and how old on the first line, in ``width`` cells (the queue's, less its scrollbar: a longer
    line wrapped the age under the row), the what cut to leave the age room (the action alone where it fits
    and the kind with it would not: at 60 columns `skill…` said nothing of a consolidation); who and the gist beneath,
    folded by ``wrap`` (Textual's fold ended a line with ``「`` and parted ﾃﾞ from its voiced mark)."""
    kind = KINDS.get(record.subsystem, record.subsystem)
    what = f"{kind:<6} {flat_line(record.action, 11):<11}"  # (a Hermes record's action is any text)
    staged = record.age(now)
    when = f" {'?' if staged is None else age(staged):>5}"
    room = max(1, width - cell_len(when))
    if cell_len(what) > room:  # (a narrow queue, at 60 columns: the padding goes, then the kind, then the words)
        action = flat_line(record.action, 11)
        what = f"{kind} {action}"
        what = cut_cells(action if cell_len(what) > room >= cell_len(action) else what, room, words=True)
        what += " " * (room - cell_len(what))
    return WholeWrap(
        assemble(
            (what, "bold"),
            (when + "\n", "$text-muted"),
            ("⚠ not what it says · " if record.claim_problem else "", "bold $error"),  # (its file's claims lie)
            (f"{record.origin_label} · ", "$text-muted"),
            ("Hermes · " if record.by_hermes else "", "$secondary"),
            (
                cut_cells(flat_line(record.summary), 120, words=True),
                "",
            ),  # (cells: in CJK, 120 characters filled the queue)
        )
    )


def _info(record: PendingRecord, now: float, session_id: str | None):
    """The proposal's header: who staged it, when, in which session (``session_id``: the preview's,
    which finds the session of a record Hermes wrote, naming none, from its staging call)."""
    origin = record.origin_label
    who = origin if origin == record.actor else f"{origin} ({record.actor})"
    parts = [
        ("from ", "$text-muted"),
        (who, "bold $secondary"),
        (", staged by Hermes" if record.by_hermes else "", "$secondary"),
        (
            " · staged at an unknown time" if (staged := record.age(now)) is None else f" · {age(staged)} ago",
            "$text-muted",
        ),
    ]
    if session_id:
        parts.append((f" · session {inline(session_id)}", ""))
    parts.append(("\n", ""))
    parts.append((flat_line(record.summary, 240), ""))  # a heading: the diff below holds the whole text
    return assemble(*parts)


def _failure_said(failed: dict) -> str:
    """A refusal of approve all as this screen says it: one the person may approve anyway once they have
    seen what it hits (the engine's ``anyway``) says how here, not with the CLI's ``--anyway``."""
    result = failed.get("result") or {}
    if result.get("anyway"):
        return (
            f"{failed.get('id')}: {result['reason']} Open its row to see the entry it hits now, then press a to "
            "approve it all the same, or r to reject it"
        )
    return f"{failed.get('id')}: {failed.get('error')}"
