"""What every workbench screen shares: the header, the footer, engine events, workers.

Subclass ``WorkbenchScreen``, set ``TITLE_TEXT`` and ``HELP`` (shown on the help
screen), yield the screen's own widgets from ``compose_body`` and react to engine
events in ``engine_event`` (called on the UI thread for every event).

One idiom from worker threads to the UI: engine calls run in
``@work(thread=True, exit_on_error=False)`` workers, which never touch widgets or
screen state; each hands its result back as a dataclass ``Message`` (``post_result``,
which drops it on arrival when a newer run of the same exclusive group superseded it:
``messages.ResultsFromWorkers``) that an ``@on`` handler shows on the UI thread. A
screen that yields ``status_line()`` reports an outcome from a worker with ``report``
(a ``StatusReport``).

A screen whose view is a reread of the stores implements ``reload`` and calls
``request_reload`` from ``engine_event``: while the screen is shown, requests in a
burst merge into one reload (``ReloadWanted.can_replace``); while it is hidden, the
screen only marks itself stale and reloads once when it is shown again.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import events, on
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.message import Message
from textual.notifications import Notification
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input, Static, TextArea

from engine.db import in_app_words
from engine.errors import WorkbenchError
from engine.events import Event
from widgets.fitted_footer import FittedFooter
from widgets.header import WorkbenchHeader
from widgets.literal import WholeStatic, cut_cells, literal, wrap
from widgets.narration import NarrationLine
from widgets.transcript import Transcript

from ..messages import ResultsFromWorkers
from .help import HelpSection, binding_rows, view_bindings
from .toast import TOAST_WIDTH

if TYPE_CHECKING:
    from engine.home import Home

    from ..app import WorkbenchApp


STATUS_SECONDS = 6.0  # how long a status message stays (errors twice as long)
STATUS_LINES = 4  # the status line's max-height (themes/workbench.tcss)
STATUS_CUT = " (whole in the notice)"


@dataclass
class StatusReport(Message):
    """A worker's outcome, for the screen's status line."""

    text: str
    error: bool = False


@dataclass
class ReloadWanted(Message):
    """Reread what the screen shows; a request still queued behind another merges into it."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ReloadWanted)


class WorkbenchScreen(ResultsFromWorkers, Screen):
    """A mode's screen with the shared header and footer."""

    TITLE_TEXT = ""
    HELP = ""
    SEARCH_BOX = ""  # the id of the screen's search box, which text pasted over its lists goes to
    # Actions that act on the selected row, and what that row is: the command palette, run from another
    # screen, switches here and says what to select rather than act on a row the user never chose.
    SELECTS: dict[str, str] = {}
    _status_timer: Timer | None = None
    status_notice: Notification | None = None  # the notice saying whole what the status line cut (a dialog takes
    # it down as it opens: ``Dialog.on_mount``)
    stale = False  # an engine event asked for a reload while the screen was hidden

    @property
    def workbench(self) -> WorkbenchApp:
        return self.app  # type: ignore[return-value]

    @property
    def home(self) -> Home:
        return self.workbench.home

    def compose(self) -> ComposeResult:
        yield WorkbenchHeader()
        yield NarrationLine(self.workbench.mode_of(self))
        problem = WholeStatic("", id="journal-problem", classes="status error")
        problem.display = False
        yield problem
        yield from self.compose_body()
        yield FittedFooter()

    def compose_body(self) -> Iterable[Widget]:
        return ()

    def on_paste(self, event: events.Paste) -> None:
        """A paste that no text box took (a list had focus; ``/deploy`` pasted whole) goes into the
        screen's search box, a leading ``/`` being the key that opens it."""
        if self.SEARCH_BOX and not isinstance(self.focused, (Input, TextArea)):
            box = self.search_box
            self.set_focus(box)
            box.post_message(events.Paste(event.text.removeprefix("/")))
            event.stop()

    @property
    def search_box(self) -> Input:
        return self.query_one(f"#{self.SEARCH_BOX}", Input)

    def focus_box(self) -> None:
        """``/`` (a priority binding, run before the keys after it are handed out): focus the search
        box at once, so keys pasted or typed fast after ``/`` land in it rather than on the widget
        that had focus. In a text box ``/`` is just typed."""
        if isinstance(self.focused, (Input, TextArea)):
            raise SkipAction()
        self.set_focus(self.search_box)

    def on_mount(self) -> None:
        """Textual runs this after a subclass's own ``on_mount``: do not call it with super()."""
        header = self.query_one(WorkbenchHeader)
        header.modes = self.workbench.mode_tabs()
        header.active = self.workbench.mode_of(self)
        header.home_label = self.workbench.home_label
        self.watch(self.app, "pending_count", lambda value: setattr(header, "pending", value))
        self.watch(self.app, "curator_note", lambda value: setattr(header, "curator", value))
        self.watch(self.app, "running_session", lambda value: setattr(header, "session", value))
        self.watch(self.app, "review_status", lambda value: setattr(header, "review", value))
        self.workbench.engine_events.subscribe(self, self.engine_event)
        line = self.query_one(NarrationLine)
        self.watch(self.app, "narration", line.say)
        self.watch(self.app, "journal_problem", self._journal_problem)

    def _journal_problem(self, problem: str) -> None:
        """Say on every screen why workbench.db cannot be read: what is shown is the files alone, and
        changes are refused."""
        banner = self.query_one("#journal-problem", Static)
        banner.update(literal(in_app_words(problem)))
        banner.display = bool(problem)

    def on_narration_line_dismissed(self, _: NarrationLine.Dismissed) -> None:
        self.workbench.action_hide_narration()

    def report(self, text: str, *, error: bool = False) -> None:
        """From a worker: say ``text`` in the status line."""
        self.post_result(StatusReport(text, error))

    @contextlib.contextmanager
    def archive_read(self) -> Iterator[None]:
        """A worker's reads of state.db: an error met there is said in the status line, in the words the
        Sessions tree and the CLI say it, where it ended the worker without a word (an empty or stale view).
        What follows the failed read in the ``with`` block is skipped."""
        try:
            yield
        except (WorkbenchError, sqlite3.Error, OSError) as exc:
            self.report(self.home.archive_unreadable(exc), error=True)

    @on(StatusReport)
    def _status_reported(self, message: StatusReport) -> None:
        """Said in the status line; a screen without one (Run) says it in a notice."""
        if self.query("#status"):
            self.show_status(message.text, error=message.error)
        else:
            self.workbench.notice(message.text, title="", severity="error" if message.error else "information")

    # -- reloads ------------------------------------------------------------------
    def reload(self) -> None:
        """Reread what the screen shows (start its load workers); screens that reread override it."""

    def request_reload(self) -> None:
        """UI thread: reload soon if the screen is shown (a burst of requests merges into one),
        else once when it is shown again."""
        if self.is_current:
            self.post_message(ReloadWanted())
        else:
            self.stale = True

    @on(ReloadWanted)
    def _reload_wanted(self) -> None:
        self.reload()

    def on_screen_resume(self) -> None:
        """Shown again (a mode switch, or a dialog on top closed): catch up on what was missed."""
        if self.stale:
            self.stale = False
            self.post_message(ReloadWanted())

    @staticmethod
    def status_line() -> Static:
        """A one-line (or a few lines) status area, hidden until there is something to say."""
        status = WholeStatic("", id="status", classes="status")
        status.display = False
        return status

    def show_status(self, message: str, *, error: bool = False) -> None:
        """Say ``message`` (shown literally) in the status line for a few seconds (an error
        a little longer) or until the next key; an empty message hides it. A busy error carried as plain
        text (a decision's or a revert's ``error``) gives the app's advice, not the CLI's (``in_app_words``)."""
        message = in_app_words(message)
        status = self.query_one("#status", Static)
        status.set_class(error, "error")
        status.update(literal(self._fitted_status(message, error)))
        status.display = bool(message)
        if self._status_timer is not None:
            self._status_timer.stop()
        self._status_timer = (
            self.set_timer(STATUS_SECONDS * (2 if error else 1), lambda: self.show_status("")) if message else None
        )

    def _fitted_status(self, message: str, error: bool) -> str:
        """``message`` as the status line's few lines hold it: one too long for them (a group revert's
        refusals) was cut at its last line with no sign; it is cut with a … there, and said whole in a
        notice, which wraps as long as it needs. The cut one keeps to the left of the notice, which
        covers the right of the bottom rows (Textual's toast: 60 cells, at most half the screen)."""
        width = max(self.size.width - 2, 20)  # (the line's padding)
        lines = wrap(literal(message), width)
        if len(lines) <= STATUS_LINES:
            return message
        self.status_notice = self.workbench.notice(
            message, title="", severity="error" if error else "information", timeout=20
        )
        width = max(width - min(TOAST_WIDTH, self.size.width // 2) - 2, len(STATUS_CUT) + 4)  # (26 at 60 columns)
        lines = wrap(literal(message), width)
        kept = [line.plain.rstrip() for line in lines[:STATUS_LINES]]
        last = cut_cells(kept[-1] + " " + lines[STATUS_LINES].plain.strip(), width - len(STATUS_CUT), words=True)
        return "\n".join([*kept[:-1], last.removesuffix("…") + "…" + STATUS_CUT])

    def key_pressed(self) -> None:
        """The next key clears what the status line said (the action it runs may say something new):
        called by the app for every key, before any widget or binding takes it."""
        if self._status_timer is not None:
            self.show_status("")

    def confirm(self, question: str, detail: str, then: Callable[[], object]) -> None:
        """The one rule for a destructive one-key action: ask first ("No" has the focus, ``y``
        confirms), then run ``then``."""
        from .dialogs import ConfirmDialog

        def answered(yes: bool | None) -> None:  # returns nothing: Textual would await what ``then`` returns
            if yes:
                then()

        self.ask(ConfirmDialog(question, detail), answered)

    def ask(self, dialog: Screen, answered: Callable) -> None:
        """Open ``dialog`` over this screen, unless the user went to another one meanwhile (a worker's
        answer opens it late): over another screen, its keys would act on rows that screen does not show."""
        if self.is_current:
            self.app.push_screen(dialog, answered)
        else:
            self.app.notify(
                f"Not asked: you left {self.TITLE_TEXT} before its question was ready. Ask again there.",
                title=self.TITLE_TEXT,
                markup=False,
            )

    def help_section(self) -> HelpSection:
        """This screen on the help page as it is now: the keys its ``check_action`` hides in the view
        shown are left out (``help.working_bindings``), and the keys of the panes it shows are listed with
        its own (``help.view_bindings``: the transcript's have their own section). A screen with another
        view names it here."""
        return HelpSection(self.TITLE_TEXT, self.HELP, binding_rows(view_bindings(self, separate=(Transcript,))))

    def engine_event(self, event: Event) -> None:
        """An engine event (or an external change) arrived; refresh what it touches."""

    def on_workbench_header_pending_clicked(self, _: WorkbenchHeader.PendingClicked) -> None:
        self.workbench.goto("approvals")

    def on_workbench_header_mode_clicked(self, message: WorkbenchHeader.ModeClicked) -> None:
        self.workbench.goto(message.mode)


def clauses(parts: Iterable[str]) -> str:
    """Sentences said as one: joined by ``;``, each without its own full stop, one at the end (they read
    ".;" between them)."""
    return "; ".join(part.rstrip().rstrip(".") for part in parts) + "."
