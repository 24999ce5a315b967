"""What every workbench screen shares: the header, the footer, engine events, workers.

Subclass ``WorkbenchScreen``, set ``TITLE_TEXT`` and ``HELP`` (shown on the help
screen), yield the screen's own widgets from ``compose_body`` and react to engine
events in ``engine_event`` (called on the UI thread for every event). Load workers hand
their results back with ``deliver``. A screen that
yields ``status_line()`` can report outcomes and errors in place with ``show_status``. Run engine calls
with ``@work(thread=True, exit_on_error=False)``; post results back as Messages or with
``self.app.call_from_thread``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Footer, Static
from textual.worker import get_current_worker

from engine.events import Event
from widgets.header import WorkbenchHeader
from widgets.literal import literal
from widgets.narration import NarrationLine

if TYPE_CHECKING:
    from engine.home import Home

    from ..app import WorkbenchApp


STATUS_SECONDS = 6.0  # how long a status message stays (errors twice as long)


class WorkbenchScreen(Screen):
    """A mode's screen with the shared header and footer."""

    TITLE_TEXT = ""
    HELP = ""
    _status_timer: Timer | None = None

    @property
    def workbench(self) -> WorkbenchApp:
        return self.app  # type: ignore[return-value]

    @property
    def home(self) -> Home:
        return self.workbench.home

    def compose(self) -> ComposeResult:
        yield WorkbenchHeader()
        yield NarrationLine()
        yield from self.compose_body()
        yield Footer()

    def compose_body(self) -> Iterable[Widget]:
        return ()

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

    def on_narration_line_dismissed(self, _: NarrationLine.Dismissed) -> None:
        self.workbench.action_hide_narration()

    def deliver(self, callback, *args, **kwargs) -> None:
        """From a load worker: run ``callback`` on the UI thread, unless a newer load of the
        same group (exclusive workers) superseded this one, whose data would be older."""
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(callback, *args, **kwargs)

    @staticmethod
    def status_line() -> Static:
        """A one-line (or a few lines) status area, hidden until there is something to say."""
        status = Static("", id="status", classes="status")
        status.display = False
        return status

    def show_status(self, message: str, *, error: bool = False) -> None:
        """Say ``message`` (shown literally) in the status line for a few seconds (an error
        a little longer); an empty message hides it."""
        status = self.query_one("#status", Static)
        status.set_class(error, "error")
        status.update(literal(message))
        status.display = bool(message)
        if self._status_timer is not None:
            self._status_timer.stop()
        self._status_timer = (
            self.set_timer(STATUS_SECONDS * (2 if error else 1), lambda: self.show_status("")) if message else None
        )

    def confirm(self, question: str, detail: str, then: Callable[[], object]) -> None:
        """The one rule for a destructive one-key action: ask first ("No" has the focus, ``y``
        confirms), then run ``then``."""
        from .dialogs import ConfirmDialog

        self.app.push_screen(ConfirmDialog(question, detail), lambda yes: then() if yes else None)

    def engine_event(self, event: Event) -> None:
        """An engine event (or an external change) arrived; refresh what it touches."""

    def on_workbench_header_pending_clicked(self, _: WorkbenchHeader.PendingClicked) -> None:
        self.workbench.goto("approvals")

    def on_workbench_header_mode_clicked(self, message: WorkbenchHeader.ModeClicked) -> None:
        self.workbench.goto(message.mode)
