"""The Run screen: drive the agent from the TUI and watch its transcript stream.

The agent runs in a thread worker (one turn at a time); its progress arrives as
``RunnerEvent``s through the app's engine bridge, so the transcript grows while the
other screens update from the same events. When a turn ends the transcript is reloaded
from the archive (ids and write markers included). A running turn can be cancelled.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from textual import events, on, work
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.notifications import Notification
from textual.reactive import reactive
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input, Select

from engine import lock_waits
from engine.conversation import Conversation, leaving_reason
from engine.db import DatabaseBusyError, in_app_words, stored_advice_note
from engine.errors import said, said_in_app
from engine.events import Event, RunnerEvent, SessionChanged
from engine.kept import cause, of_session, when_stored
from engine.models import BACKENDS, configured_backend, make_model
from engine.runner import background
from engine.runner.session import CLOSE_REASON, REVIEW_CLOSE_WAIT_S, end_reason_said
from engine.scenarios import consent_needed, list_scenarios, load_scenario, run_scenario
from engine.textsafety import quoted, visible
from widgets.run_status import RunStatus
from widgets.transcript import Transcript, TranscriptItem

from ..messages import AfterEngineEvents, ResumeSession
from .base import WorkbenchScreen
from .resume import RECENT, ResumeDialog
from .sessions import session_items

log = logging.getLogger(__name__)

NO_SCENARIO = "(type messages)"
# The message box's hint, whole at 60 columns (the footer's esc adds "then 1-6" at any width)
PLACEHOLDER = "message the agent; enter sends · esc leaves the box"
# A failed turn's notice when the transcript's last line already gives the reason (one line at 80x24)
TURN_FAILED_SEE_TRANSCRIPT = "The turn failed: see the transcript."
SCENARIO_SPEED = 1.0  # scenario pacing: 1 is watchable, 0 plays without delays
STREAM_SHOW_S = 0.1  # a streamed answer shows at most this often: each showing re-measures and redraws all of it
# Set from the start: a quit's try at storing what state.db lacks gives up on a busy state.db as a quit
# ends a turn's wait (after ``db.CANCEL_GRACE_S``), never after the whole busy timeout.
QUIT_TRY = threading.Event()
QUIT_TRY.set()


@dataclass
class Switch:
    """A move of the agent to another session (None: a new one), asked by ctrl+l or ctrl+o. A worker
    makes it at once; when state.db will not take the end of the session left, the next turn (or
    the quit) makes it. ``done`` is written by the worker that made it and read by the ones queued
    after it (``RunScreen._queue``)."""

    target: str | None
    done: bool = False


class Handover:
    """A turn's (or an opening's: ``RunScreen.open_agent``) hand-over with the screen's close (a quit, a
    closed terminal): whichever of the two comes second ends the session. The screen closing while the
    turn runs (waiting for a lock, say: the quit cancels that wait) leaves the end to the turn's thread,
    once the turn has stopped; a turn over before the close leaves it to the close
    (``RunScreen.on_unmount``)."""

    def __init__(self, before: threading.Event | None = None) -> None:
        self._lock = threading.Lock()
        self._before = before  # a turn's: the worker before it (an opening's is None)
        self._closed = False
        self._over = False
        self.agent: Conversation | None = None  # the turn's (the screen may not have heard of it yet)
        self.owed: Switch | None = None  # a switch the turn could not make: the close ends the session so
        self.finished = threading.Event()  # its thread is done (after the screen closed: the session ended)
        self.note: str | None = None  # what that end left in workbench.db, said once the terminal is back
        self.left_running = False  # the screen closed while it ran (``close``)
        self._begun = False

    def begin(self) -> bool:
        """Worker, first: False when the screen closed before the turn's thread began (a quit right after
        enter, whose worker Textual may start late or never): the turn is not run, and the close ended
        the session as for no turn."""
        with self._lock:
            self._begun = not self._closed
            return self._begun

    def turn_over(self, owed: Switch | None) -> bool:
        """Worker: the turn is over, ``owed`` the switch it could not make (the screen hears of it only
        later, and may close first); True when the screen closed meanwhile (the worker ends the session)."""
        with self._lock:
            self._over, self.owed = True, owed
            return self._closed

    def close(self) -> bool:
        """UI thread, as the screen closes: True when the turn still runs (its thread ends the session)."""
        with self._lock:
            self._closed = True
            self.left_running = self._begun and not self._over
            return self.left_running

    def unrun(self) -> threading.Event | None:
        """UI thread, once closed: for a turn that never began, the worker before it, which is all the close
        waits for (Textual may drop the turn's worker at the quit before it starts: it never says it is done)."""
        return None if self._begun else self._before


class TurnNotBegun(Exception):
    """A turn stopped (esc, a quit) while the worker before it had not yet let it begin."""


@dataclass
class Switched(Message):
    switch: Switch
    left: str
    error: str | None  # why the session left could not be ended (the switch is owed to the next turn)
    warning: str | None = None  # the session resumed had not ended: another Hermes may write to it
    archived: str | None = None  # the session resumed is archived (``Conversation.archived_note``)
    both: str | None = None  # it is both: said in one notice (``Conversation.live_archived_note``)


@dataclass
class KeptWaiting(Message):
    """A resumed session's last messages still wait in workbench.db (state.db was busy as it was left)."""

    session_id: str
    text: str


@dataclass
class StoredBeforeQuit(Message):
    unstored: int
    why: str | None
    busy: bool = False  # state.db refused for a lock another process held
    later: str = ""  # when what workbench.db would keep is stored (``when_stored``)


@dataclass
class KeptBeforeQuit(Message):
    error: str | None  # why workbench.db could not keep them (None: kept)
    note: str | None = None  # what was kept, said once the terminal is back (``RunScreen.exit_note``)


@dataclass
class TurnEnded(Message):
    session_id: str | None
    error: str | None = None
    unsent: str = ""  # a message the turn failed before storing (goes back in the box)
    unstored: int = 0  # messages of the conversation state.db does not hold yet (it was busy)
    unstored_why: str | None = None
    owed: Switch | None = None  # a switch the turn could not make (state.db refused the end): the next one tries
    stopped: bool = False  # cancelled (esc)
    cancelled_waits: list[str] = field(default_factory=list)  # its writes esc stopped waiting for a lock (said)
    scenario: str | None = None  # the scenario played (its rest was not played when it stopped)


@dataclass
class SessionGone(Message):
    session_id: str


@dataclass
class ResumedAtTip(Message):
    """The session resumed was continued after compression: its newest segment is where talk goes on."""

    chosen: str
    tip: str


@dataclass
class SessionReloaded(Message):
    session_id: str
    items: list[TranscriptItem]
    look: tuple | None = None  # ``_look`` of the session as read
    opened: int = 0  # ``RunScreen._opened_count`` when the read began: a later open makes its end stale


def _look(home, session_id: str) -> tuple | None:
    """What of a session a transcript shows can have changed since (its end, title, counts): two
    cheap reads, so a change to state.db elsewhere reads the transcript again only when it is its own."""
    row = home.archive.get_session(session_id)
    if row is None:
        return None
    return (row.ended_at, row.end_reason, row.title, row.message_count, home.archive.live_message_count(session_id))


@dataclass
class Opened(Message):
    """The agent opened for a session resumed before any turn (None: it could not be, ``error`` says why)."""

    opening: Handover
    session_id: str
    model: str
    agent: Conversation | None
    error: str | None = None
    warning: str | None = None  # the session resumed had not ended: another Hermes may write to it
    archived: str | None = None  # the session resumed is archived (``Conversation.archived_note``)
    both: str | None = None  # it is both: said in one notice (``Conversation.live_archived_note``)


@dataclass
class AgentReady(Message):
    """The turn's agent is open (new, resumed or switched) in ``session_id``."""

    agent: Conversation
    session_id: str


@dataclass
class ScenariosLoaded(Message):
    names: list[str]


@dataclass
class ScenarioChecked(Message):
    """Whether the scenario chosen may play in this home: ``changes`` is what it would change in a home
    that is not a demo home (asked first), ``error`` why it may not play here at all."""

    name: str
    changes: str | None = None
    error: str | None = None


@dataclass
class RecentLoaded(Message):
    sessions: list  # the newest sessions, for the resume picker
    previews: dict[str, str]  # the untitled ones' first user messages (``archive.previews``)


class RunScreen(WorkbenchScreen):
    AUTO_FOCUS = "#run-input"
    TITLE_TEXT = "Run"
    HELP = (
        "Talk to the agent or play a scenario and watch the transcript stream; the Memory, Sessions, Skills and "
        "Approvals screens update live. The model is offline (deterministic, no network) unless you choose "
        "another. While idle it shows a run started elsewhere (the demo) as it streams. Enter sends; esc cancels "
        "a running turn, and while idle it leaves the message box (as tab does): typed there, digits are text, "
        "elsewhere they switch screens; ctrl+l starts a new session. In the transcript: j/k move between messages, "
        "w jumps to the next message that wrote memory or skills, m opens the memory entry it wrote, f toggles "
        "follow (off: new messages are "
        "counted, the view stays)."
    )
    FOOTER_FIRST = ("escape",)  # where the footer is narrow (60 columns): in the box, the way to the other screens
    BINDINGS = [
        Binding("ctrl+l", "new_session", "New", tooltip="Start a new session (a clean slate, like clearing a screen)"),
        Binding("ctrl+o", "resume", "Resume", tooltip="Resume a recent session: type an id, its start or a title"),
        Binding("ctrl+g", "play", "Play", tooltip="Play the chosen scenario"),
        Binding("escape", "cancel_turn", "Cancel", tooltip="Cancel the running turn at its next safe point"),
        Binding(
            "escape",
            "leave_input",
            "Leave box (then 1-6)",
            tooltip="Move the focus to the transcript; there the digits switch screens",
        ),
    ]
    DEFAULT_CSS = """
    RunScreen #run-bar { height: 3; }
    RunScreen #run-model { width: 22; }
    RunScreen #run-scenario { width: 28; }
    RunScreen #run-status { width: 1fr; padding: 0 1; }
    RunScreen.-narrow #run-model { width: 16; }  /* (its longest name, scripted) */
    RunScreen.-narrow #run-scenario { width: 23; }  /* (type messages): the status keeps a readable width */
    RunScreen Transcript { height: 1fr; }
    RunScreen #run-input { border: tall $primary 40%; }
    RunScreen #run-input:focus { border: tall $primary; }
    """

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (80, "-wide")]
    running: reactive[bool] = reactive(False, bindings=True, init=False)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.agent: Conversation | None = None
        self._switch: Switch | None = None  # the last switch asked, until it is made (or the next turn takes it)
        self._ending: str | None = None  # the session a switch in progress is leaving (the status says so)
        self._live_notice: Notification | None = None  # "Resumed a live session", until read or left
        self._archived_notice: Notification | None = None  # "Resumed an archived session", as the live one
        self._reopened: tuple[str, str] | None = None  # (session, end reason) Hermes ended, reopened here
        self._opened_count = 0  # agents opened or switched so far: a reread begun before one may be stale
        # Set once the last worker queued to drive the agent is done: each waits for the one before (``_queue``).
        self._idle = threading.Event()
        self._idle.set()
        self.session_id: str | None = None
        self.playing = False  # a scenario (possibly several sessions) is running
        self.checking: str | None = None  # ctrl+g: the scenario whose consent (``consent_needed``) is being read
        self.watching = False  # showing a session another runner drives (e.g. `workbench demo`)
        self._shown_look: tuple | None = None  # ``_look`` of the session as the transcript last read it
        self._streaming: tuple[int, str] | None = None  # (transcript row, text so far) of an answer streaming in
        self._stream_due: Timer | None = None  # the next showing of the streamed answer (``STREAM_SHOW_S``)
        self._covered = False  # suspended under a dialog (help, resume) rather than left for another mode
        self._typing = False  # a burst of typing is on its way to the message box (``on_key``)
        self.speed = SCENARIO_SPEED
        self._cancel = threading.Event()
        self._leaving_unstored = False
        self._storing_to_quit = False  # a quit's store is running (ctrl+q again waits for it)
        self._turn: Handover | None = None  # the last turn's (``_send``) or opening's (``_open_agent``)
        self._opening: Handover | None = None  # an agent being opened for a session resumed before any turn
        self.exit_note: str | None = None  # what ending the session at the close kept in workbench.db (or lost)
        # (session, its line) how the last turn ended, when it failed or was stopped, said as the transcript's
        # last line: a reread of the session from state.db, which holds no such line (nor a stopped turn's
        # partial answer), keeps it there until the next turn or session
        self._end_line: tuple[str, TranscriptItem] | None = None

    def compose_body(self) -> Iterable[Widget]:
        with Horizontal(id="run-bar"):
            # no type-to-search: a letter typed in an open dropdown goes to the message box (on_key)
            yield Select(
                [(name, name) for name in BACKENDS],
                value=self._first_model(),
                allow_blank=False,
                id="run-model",
                type_to_search=False,
            )
            yield Select(
                [(NO_SCENARIO, NO_SCENARIO)],
                value=NO_SCENARIO,
                allow_blank=False,
                id="run-scenario",
                type_to_search=False,
            )
            yield RunStatus(id="run-status")
        yield Transcript(id="run-transcript")
        yield Input(
            placeholder=PLACEHOLDER,
            id="run-input",
            select_on_focus=False,
        )

    def _first_model(self) -> str:
        """The menu starts at the model config.yaml names, as `workbench run` does; a name that is no
        model starts it at offline, said when the screen opens."""
        configured = configured_backend(self.home)
        return configured if configured in BACKENDS else "offline"

    def on_mount(self) -> None:
        self.workbench.run_screen = self
        configured = configured_backend(self.home)
        if configured not in BACKENDS:
            self.notify(
                f"model.backend in config.yaml is {quoted(configured)}, not one of {', '.join(BACKENDS)}: "
                "the Run screen starts at offline.",
                title="Model",
                severity="warning",
                markup=False,
            )
        transcript = self.query_one(Transcript)
        self._title("New session")
        transcript.set_placeholder("Type a message below, or pick a scenario and press ctrl+g.")
        self._status()
        self.load_scenarios()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "cancel_turn":  # esc: cancels while a turn runs, else leaves the message box
            return self.running
        if action == "leave_input":
            # (by id, not a query: a key can come before the screen is composed, opened by R on Sessions)
            return not self.running and self.focused is not None and self.focused.id == "run-input"
        if action in ("play", "new_session", "resume"):  # (not while the agent of a resume is being opened,
            busy = self.running or self._opening is not None or self.checking is not None  # nor a play is asked)
            return None if busy else True
        return True

    def explain_dimmed(self, action: str, parameters: tuple) -> str | None:
        """Why ctrl+l, ctrl+o or ctrl+g, dimmed while the agent is busy, does nothing: said when pressed."""
        if action not in ("play", "new_session", "resume"):
            return None
        if self.running:
            return "A turn is running; wait for it or cancel it (esc)."
        if self._opening is not None:
            return "The session resumed is still opening; try again in a moment."
        return "The scenario is still being checked; try again in a moment."

    # -- choices -------------------------------------------------------------------
    @work(thread=True, exit_on_error=False)
    def load_scenarios(self) -> None:
        names = [scenario.name for scenario in list_scenarios()]
        self.post_message(ScenariosLoaded(names))

    @on(ScenariosLoaded)
    def _set_scenarios(self, message: ScenariosLoaded) -> None:
        names = message.names
        self.query_one("#run-scenario", Select).set_options([(NO_SCENARIO, NO_SCENARIO)] + [(n, n) for n in names])

    @property
    def model_name(self) -> str:
        return str(self.query_one("#run-model", Select).value)

    def _status(self, text: str | None = None) -> None:
        state = text or (
            "running…"
            if self.running
            else "resuming…"
            if self._opening is not None
            else f"ending session {self._ending}…"
            if self._ending
            else "watching a run elsewhere"
            if self.watching
            else "idle"
        )
        style = "bold $text-warning" if self.running else "$text-muted"
        self.query_one(RunStatus).show(state, style, self.session_id)

    def _session_title(self, ended_as: str | None = None) -> None:
        """The session's id, and what stays true of it while shown: run elsewhere (the demo), or resumed
        live (its notice goes once read; that another Hermes may write to it does not), or, once a reread
        finds another program ended the session this agent is in (``ended_as``: its end reason), what the
        next message does: reopen it, or go on in its continuation after a compression."""
        agent = self.agent
        in_it = agent is not None and agent.id == self.session_id
        live = self.session_id is not None and self.resumed_live(self.session_id)
        if self.watching:
            note = " (run elsewhere; typing starts a new session)"
        elif in_it and ended_as == "compression":  # (Hermes compressed it: the talk goes on in its child)
            note = " (compressed elsewhere: your next message goes on in its continuation)"
        elif in_it and ended_as is not None:
            note = f" (ended elsewhere ({ended_as}): your next message reopens it here)"
        elif live:
            note = " (live: another Hermes may write to it too; never ended here)"
        elif self._reopened is not None and self._reopened[0] == self.session_id:
            note = f" (reopened here: Hermes had ended it ({self._reopened[1]}))"
        elif in_it and agent is not None and agent.agent.ended_before is not None:  # (resumed after its end)
            note = f" (reopened here: it had ended ({agent.agent.ended_before}))"
        else:
            note = ""
        # archived (resumed so): marked before the id, as Sessions marks it (a narrow border cuts the end)
        mark = "archived · " if in_it and agent is not None and agent.archived_note is not None else ""
        self._title(f"{mark}Session {self.session_id}{note}")

    def _title(self, text: str) -> None:
        # ids and end reasons come from the database: never markup, control characters and bidi as symbols
        self.query_one(Transcript).border_title = Content(visible(text))

    def watch_running(self) -> None:
        self._status()
        if not self.running:
            self.workbench.recheck_review_wait()

    @on(Select.Changed, "#run-model")
    def _model_changed(self) -> None:
        if self.agent is not None and not self.running:  # an agent keeps its model: its session ends here
            self._end_agent()
            self.action_new_session()
        self.focus_input()

    def _end_agent(self) -> None:
        """Drop the agent as quitting does: its session ends with ``cli_close`` (in a worker: it
        waits for a background review), or as a switch still owed would have ended it."""
        agent, self.agent, switch, self._switch = self.agent, None, self._switch, None
        if agent is not None and not self.running:
            self._leave_session()
            self._close(agent, switch, *self._queue())

    def _leave_session(self) -> None:
        """The header stops naming the session being left at once (it ends in a worker: a switch's,
        or here for a new model)."""
        if self.session_id is not None and self.workbench.running_session == self.session_id:
            self.workbench.running_session = None
        self._withdraw_live()  # "your messages go into it" stops being so
        self._reopened = None  # (ended by us as it is left: come back to, it is not Hermes's end reopened)

    def _queue(self) -> tuple[threading.Event, threading.Event]:
        """UI thread: a place in line for the next worker that drives the agent (one thread at a time,
        in the order asked): it waits for ``before`` and sets its ``done`` when it is done."""
        before, self._idle = self._idle, threading.Event()
        return before, self._idle

    @work(thread=True, exit_on_error=False, group="agent-close")
    def _close(
        self, agent: Conversation, switch: Switch | None, before: threading.Event, done: threading.Event
    ) -> None:
        try:
            before.wait()
            agent.end(_end_reason(switch))
        finally:
            done.set()

    def focus_input(self) -> None:
        """The message box takes the focus after every action here, so typing is never lost."""
        self.query_one("#run-input", Input).focus()

    def on_key(self, event: events.Key) -> None:
        """A printable key that nothing here binds, typed while another pane has the focus,
        goes into the message box (and moves the focus there) instead of being dropped."""
        box = self.query_one("#run-input", Input)
        if self.focused is box or not event.is_printable or not event.character:
            return
        if event.key in self.active_bindings and not self._typing:
            return  # a key of the focused pane (j/k in the transcript)
        # The box takes the focus only after the keys already queued: the rest of a burst follows the first.
        self._typing = True
        event.stop()
        event.prevent_default()
        for select in self.query(Select):
            select.expanded = False  # typing in an open dropdown closes it
        box.focus()
        box.insert_text_at_cursor(event.character)

    def stop_for_exit(self) -> None:
        """The app is exiting (``WorkbenchApp.exit``, which then ends every wait for a lock): a scenario
        or turn stops at once, before it goes on past its write whose wait that cancelled (a scenario
        played on into its next turns after the quit); the session is ended as the close says."""
        self._cancel.set()
        if self.agent is not None:
            self.agent.cancel()

    def after_exit(self) -> Handover | None:
        """The turn still running as the screen closed (its thread ends the session once it stops), if any."""
        turn = self._turn
        return turn if turn is not None and turn.left_running else None

    def on_unmount(self) -> None:
        self._cancel.set()  # never keep the app waiting on a running turn at exit
        turn = self._turn
        agent = self.agent or (turn.agent if turn is not None else None)
        # A review still running (an exit no one was asked about: a hang-up, a closed terminal), whoever
        # started it, is never waited for, and the next start says it was not done.
        background.drop(self.home)
        if turn is not None and turn.close():  # a turn still runs (its lock waits end with the app):
            if agent is not None:  # its thread ends the session once it stops (``run_turn``)
                agent.cancel()
            return
        running = self.running and turn is None  # (a scenario: its runs end their own sessions)
        idle = (turn.unrun() if turn is not None else None) or self._idle
        if agent is not None:
            agent.cancel()  # (a switch waiting for a background review goes on at once)
            if self._leaving_unstored:  # the user chose to quit without what state.db would not take
                agent.leave()
            elif not running and not idle.wait(REVIEW_CLOSE_WAIT_S):  # a switch still going on
                log.warning("session %s was not ended at exit: a switch of session was still going on", agent.id)
            elif not running:  # as Hermes's CLI does on exit; `ctrl+o` (resume) reopens it
                owed = self._switch or (turn.owed if turn is not None else None)  # (its TurnEnded not heard yet)
                with lock_waits.cancellable(self._cancel, asked=False):  # (a busy state.db: kept for later)
                    self.exit_note = _end_at_exit(agent, owed)  # (a switch made already left the session ended)

    def resumed_live(self, session_id: str) -> bool:
        """Whether Run talks in ``session_id`` having resumed it live: another Hermes may write to it too."""
        agent = self.agent
        return agent is not None and agent.id == session_id and agent.live_warning is not None

    @property
    def unstored(self) -> int:
        """Messages of this screen's conversation state.db does not hold yet (quitting asks first)."""
        return self.agent.unstored if self.agent is not None and not self.running else 0

    def quit_after_storing(self) -> None:
        """ctrl+q with a conversation state.db lacks: one more try at storing it first, bounded as a quit
        bounds a turn's wait for a busy state.db (``QUIT_TRY``: a quarter of a second, one short write of
        Hermes's; never the busy timeout), then quit or ask at once. Once at a time: a second ctrl+q
        meanwhile is the same quit."""
        if not self._storing_to_quit:
            self._storing_to_quit = True
            self._status(f"storing {self.unstored} message{'s' * (self.unstored != 1)} before quitting…")
            self._store_before_quit(*self._queue())

    @work(thread=True, exit_on_error=False, group="agent-store")
    def _store_before_quit(self, before: threading.Event, done: threading.Event) -> None:
        """Worker: store (a busy state.db is waited for only as long as a quit waits: ``QUIT_TRY``), then
        the app quits, or asks whether to quit keeping (or without) what is still unstored."""
        agent, why, busy, later = self.agent, None, False, ""
        try:
            before.wait()
            if agent is not None:
                try:
                    with lock_waits.cancellable(QUIT_TRY, asked=False):
                        agent.store()
                except Exception as exc:
                    why, busy = said_in_app(exc), isinstance(exc, DatabaseBusyError)
                    later = when_stored(self.home)
        finally:
            done.set()
        self.post_result(StoredBeforeQuit(agent.unstored if agent is not None else 0, why, busy, later))

    @on(StoredBeforeQuit)
    def _stored_before_quit(self, message: StoredBeforeQuit) -> None:
        self._storing_to_quit = False
        self._status()
        if not message.unstored:
            self.app.exit()
            return
        from .dialogs import ConfirmDialog

        count = f"{message.unstored} message{'s' * (message.unstored != 1)}"
        why = message.why or "unknown reason"
        damage = self.home.journal.problem()  # (a damaged workbench.db can keep nothing)
        keeps = damage is None

        def answered(yes: bool | None) -> None:
            if yes and keeps:
                self._keep_and_quit(why, *self._queue())
            elif yes:
                self._leaving_unstored = True  # (no second wait on state.db while quitting)
                self.app.exit()

        self.app.clear_notifications()  # (at 80x24 the warning toast covered the question)
        if keeps:
            dialog = ConfirmDialog(
                f"{count} {'are' if message.unstored != 1 else 'is'} not in state.db yet"
                f"{' (busy)' if message.busy else ''}. Quit and keep them in workbench.db to store later?",
                f"state.db did not take them: {cause(why)}.\n\ny keeps them in workbench.db and quits at once. "
                f"{message.later} n stays here (ctrl+q tries again, and your next message stores them).",
            )
        else:
            dialog = ConfirmDialog(
                f"Quit without saving {count}?",
                f"They could not be stored: {why}\n\nNor can workbench.db keep them: {damage}\n\n"
                "y quits and they are lost; n stays here (ctrl+q tries again, and your next message stores them).",
            )
        self.app.push_screen(dialog, answered)  # over whichever screen is shown: the quit was asked from there

    @work(thread=True, exit_on_error=False, group="agent-store")
    def _keep_and_quit(self, why: str, before: threading.Event, done: threading.Event) -> None:
        """Worker: keep what state.db did not take in workbench.db (no further wait on state.db), then quit."""
        error, note = None, None
        try:
            before.wait()
            if self.agent is not None and (held := self.agent.keep(why)) is not None:
                note = held.describe(when_stored(self.home))
        except Exception as exc:
            error = said_in_app(exc)
        finally:
            done.set()
        self.post_result(KeptBeforeQuit(error, note))

    @on(KeptBeforeQuit)
    def _kept_before_quit(self, message: KeptBeforeQuit) -> None:
        if message.error is None:
            self._leaving_unstored = True  # (nothing is left to store: quitting waits on nothing)
            self.exit_note = message.note  # (said as a mid-turn quit says what it kept: ``after_exit``)
            self.app.exit()
            return
        self.notify(
            f"{message.error} The app stays open; ctrl+q asks again.",
            title="Could not keep the messages in workbench.db",
            severity="error",
            markup=False,
            timeout=30,
        )

    # -- actions -------------------------------------------------------------------
    def _show_end_line(self) -> None:
        """A failed or stopped turn's line stays the transcript's last (``_end_line``) while its session is shown."""
        if self._end_line is None or self._end_line[0] != self.session_id:
            return
        transcript = self.query_one(Transcript)
        line = self._end_line[1]
        if not transcript.items or transcript.items[-1].content != line.content:
            transcript.append(line)

    def action_new_session(self) -> None:
        self._end_line = None
        self._switch_agent(None)
        self.session_id = None
        self.watching = False
        self._title("New session")
        self.query_one(Transcript).set_items([], placeholder="New session: type a message below.")
        self._status()
        self.focus_input()

    def action_resume(self) -> None:
        self.open_resume()

    @work(thread=True, exclusive=True, exit_on_error=False, group="resume-list")
    def open_resume(self) -> None:
        with self.archive_read():
            recent = self.home.archive.list_sessions(limit=RECENT)
            self.post_result(RecentLoaded(recent, self.home.archive.previews([s.id for s in recent if not s.title])))

    @on(RecentLoaded)
    def _pick_resume(self, message: RecentLoaded) -> None:
        def chosen(session_id: str | None) -> None:
            if session_id is not None:
                self._resume(session_id)
            self.focus_input()

        self.ask(ResumeDialog(message.sessions, self.home.archive.find_session, message.previews), chosen)

    @on(ResumeSession)
    def _resume_asked(self, message: ResumeSession) -> None:
        """The Sessions screen's R: resumed as a pick in ctrl+o's list is, or, while the agent is busy,
        said why not (as ctrl+o, dimmed then, says it)."""
        message.stop()  # handled here; it must not bubble back to the app (which re-posts it)
        if self.check_action("resume", ()) is not True:
            self.notify(self.explain_dimmed("resume", ()) or "", severity="warning", markup=False)
            return
        self._resume(message.session_id)
        self.focus_input()

    def _follow(self, session_id: str) -> None:
        self.session_id = session_id
        self._session_title()
        self.query_one(Transcript).set_items([])
        self._status()

    def _resume(self, session_id: str) -> None:
        if self.agent is not None and session_id == self.session_id:
            self.notify(f"Already in session {session_id}.", markup=False)  # (as Hermes's /resume says)
            return
        self._end_line = None
        self._switch_agent(session_id)
        self.session_id = session_id
        self.workbench.resumed(session_id)  # the header names it now, not at its first turn
        self.watching = False
        self._session_title()
        self._status()
        self.load_session(session_id, at_tip=True)
        self.note_kept(session_id)

    def _switch_agent(self, target: str | None) -> None:
        """ctrl+l (``target`` None) or ctrl+o: the session left ends now, in a worker (as Hermes's ``/new``
        and ``/resume`` end it), not at the next message; the same agent and provider go on. The session
        resumed is reopened at once, as Hermes's ``/resume`` reopens it (``AgentSession._reopen_now``)."""
        self._leave_session()
        if self.agent is None:  # no turn yet: nothing to leave; a session resumed is opened (and reopened) now
            self._switch = None
            if target is not None:
                self._open_agent(target)
            return
        self._switch = switch = Switch(target)
        self._ending = self.session_id or self._ending
        self.switch_now(self.agent, switch, *self._queue())

    def _open_agent(self, session_id: str) -> None:
        """Open the agent in the session resumed before any turn, in a worker, so it is reopened now (and
        ended when it is left: ctrl+l, ctrl+o, the quit); a message sent meanwhile waits for it and goes
        on with it (``run_turn``), and a quit meanwhile ends it once it is open (``Handover``)."""
        self._opening = self._turn = Handover()
        self.refresh_bindings()
        self.open_agent(session_id, self.model_name, self._opening, *self._queue())

    @work(thread=True, exit_on_error=False, group="agent-open")
    def open_agent(
        self, session_id: str, model: str, opening: Handover, before: threading.Event, done: threading.Event
    ) -> None:
        agent, error = None, None
        try:
            before.wait()
            agent = Conversation.resuming(
                self.home, make_model(self.home, model), session_id, source="tui", background_review=True
            )
            opening.agent = agent
        except Exception as exc:  # e.g. an unusable model configuration: said, and the next message tries again
            error = said_in_app(exc)
        finally:
            warning = agent.live_warning if agent is not None else None
            archived = agent.archived_note if agent is not None else None
            both = agent.live_archived_note if agent is not None else None
            self.post_message(
                Opened(opening, session_id, model, agent, error, warning, archived, both)
            )  # (before a turn queued after it)
            done.set()
            if opening.turn_over(None) and agent is not None:  # the screen closed meanwhile: end it here
                with lock_waits.cancellable(self._cancel, asked=False):
                    opening.note = _end_at_exit(agent, None)
            opening.finished.set()

    @on(Opened)
    def _opened(self, message: Opened) -> None:
        self._opened_count += 1
        if self._opening is message.opening:
            self._opening = None
            self.refresh_bindings()
        if message.agent is not None and self.agent is None:
            self.agent = message.agent
        self._status()
        self._session_title()  # (reopened: said there)
        self._say_resumed(message.warning, message.archived, message.both)
        if message.error is not None:
            self.notify(
                f"{message.error} Your next message tries again.",
                title=f"Session {message.session_id} was not opened",
                severity="error",
                markup=False,
                timeout=30,
            )
        elif self.agent is message.agent and self.model_name != message.model:
            self._model_changed()  # chosen while it was being opened: that agent keeps its model

    @work(thread=True, exit_on_error=False, group="agent-switch")
    def switch_now(self, agent: Conversation, switch: Switch, before: threading.Event, done: threading.Event) -> None:
        left, error, warning, archived, both = None, None, None, None, None
        try:
            before.wait()
            left = agent.id
            agent.switch_session(switch.target)  # ends the session left (``leaving_reason``)
            switch.done = True
            if switch.target is not None:
                warning, archived, both = agent.live_warning, agent.archived_note, agent.live_archived_note
        except Exception as exc:  # state.db busy or damaged: the next turn or the quit tries again
            error = said_in_app(exc)
        finally:
            done.set()
        self.post_message(Switched(switch, left or "", error, warning, archived, both))

    @on(Switched)
    def _switched(self, message: Switched) -> None:
        self._opened_count += 1  # (the session switched to is reopened by now)
        if message.switch is not self._switch and self._switch is not None:
            return  # a later switch was asked meanwhile: it says how that one went
        if message.switch.done:
            self._switch = None if self._switch is message.switch else self._switch
        self._ending = None
        self._status()
        if message.switch.target is not None:
            self._session_title()  # (reopened: said there)
        self._say_resumed(message.warning, message.archived, message.both)
        if message.error is not None:
            self.notify(
                f"{cause(message.error)}. It stays open until your next message ends it and goes on "
                "(or until you quit).",
                title=f"Session {message.left} was not ended yet",
                severity="warning",
                markup=False,
                timeout=30,
            )

    def _say_resumed(self, warning: str | None, archived: str | None, both: str | None) -> None:
        """What resuming a live or an archived session says; one notice for a session both live and
        archived (two stacked covered the transcript and the message box at 80x24), taken down as the
        live one is."""
        if both is not None:
            self._warn_live(both, title="Resumed a live, archived session")
            return
        self._warn_live(warning)
        self._say_archived(archived)

    def _warn_live(self, warning: str | None, title: str = "Resumed a live session") -> None:
        """A session resumed that had not ended: said before anything is written to it (and kept in the
        title), in place of a notice before it; what it says stops being so once the session is left."""
        if warning is not None:
            self._withdraw_live()
            if self.app.screen is self:  # (over a dialog opened meanwhile it would cover its buttons)
                self._live_notice = self.workbench.notice(warning, title=title)
            self._session_title()

    def _say_archived(self, note: str | None) -> None:
        """A session resumed that is archived: said once (it stays archived), and marked in the title while
        shown (``_session_title``)."""
        if note is not None:
            self.workbench.withdraw(self._archived_notice)
            if self.app.screen is self:  # (taken down as the live notice is: it would cover the answer)
                self._archived_notice = self.workbench.notice(note, title="Resumed an archived session")
            self._session_title()

    def _withdraw_live(self) -> None:
        """The session's notice goes once it is left (ctrl+l, ctrl+o, another model, deleted), once
        another takes its place, or once a message is sent: it was read before it, and it would
        cover the answer's last lines."""
        self.workbench.withdraw(self._live_notice)
        self.workbench.withdraw(self._archived_notice)
        self._live_notice = self._archived_notice = None

    @work(thread=True, exclusive=True, exit_on_error=False, group="run-kept")
    def note_kept(self, session_id: str) -> None:
        held = of_session(self.home, session_id)
        if held is not None and held.session_id == session_id:
            self.post_result(
                KeptWaiting(
                    session_id,
                    f"{held.count} of this session are kept in workbench.db, not in state.db yet "
                    f"({cause(held.why)}): the transcript and the agent go on without them until they are "
                    f"stored. {when_stored(self.home)}",
                )
            )

    @on(KeptWaiting)
    def _kept_waiting(self, message: KeptWaiting) -> None:
        if message.session_id == self.session_id:
            self.notify(message.text, title="Not shown yet", severity="warning", markup=False, timeout=30)

    def on_screen_suspend(self) -> None:
        """Covered by a dialog or left for another screen: the live session's notice goes (it covered a
        dialog's question and buttons at 80x24), its title keeps saying the session is live."""
        self._covered = self in self.app.screen_stack
        self._withdraw_live()

    def on_screen_resume(self) -> None:
        """Back from another mode, typing goes to the box; back from a dialog, the focus is where it was
        (after esc left the box, a number switches screens as the footer says)."""
        if not self._covered:
            self.focus_input()
        self._covered = False

    def on_descendant_focus(self) -> None:
        self._typing = False  # (the box has it now, or the reader moved on: keys act where the focus is)
        self.refresh_bindings()  # the footer offers esc to leave the message box only while it has the focus

    def on_descendant_blur(self) -> None:
        self.refresh_bindings()

    def action_leave_input(self) -> None:
        self.set_focus(self.query_one(Transcript))  # now, not later: a digit typed next switches screens

    def action_cancel_turn(self) -> None:
        if self.running:
            self._cancel.set()
            if self.agent is not None:
                self.agent.cancel()
            self._status("cancelling…")

    @on(Input.Submitted, "#run-input")
    def _send(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            return
        if self.running:
            self.notify("A turn is running; wait for it or cancel it (esc).", severity="warning")
            return
        event.input.value = ""
        self._end_line = None  # (the next turn's own lines follow)
        self._withdraw_live()  # read by now, it would cover the answer (at 80x24, its last lines)
        if self.watching:
            self.action_new_session()  # never talk into a session another runner drives
        self.running = True
        self._cancel.clear()
        switch, self._switch = self._switch, None  # (made already, or owed: the turn makes it first)
        said_at = self.home.clock.now()  # (said now, stored later: after a switch still going on, say)
        before, done = self._queue()
        self._turn = Handover(before)
        opening = self._opening  # (an agent being opened for a resume: the turn goes on with it)
        self.run_turn(text, said_at, self.model_name, self.agent, switch, self._turn, opening, before, done)

    def action_play(self) -> None:
        scenario = str(self.query_one("#run-scenario", Select).value)
        if scenario == NO_SCENARIO:
            self.notify("Choose a scenario first (the second box at the top).", severity="warning")
            return
        self.checking = scenario
        self.refresh_bindings()
        self.check_scenario(scenario)

    @work(thread=True, exclusive=True, exit_on_error=False, group="scenario-check")
    def check_scenario(self, name: str) -> None:
        """Whether the scenario may change this home (``consent_needed``, the engine's one rule)."""
        try:
            self.post_result(ScenarioChecked(name, changes=consent_needed(self.home, load_scenario(name))))
        except Exception as exc:  # the demo's seed in a real home, an unreadable file: said, nothing played
            self.post_result(ScenarioChecked(name, error=said_in_app(exc)))

    @on(ScenarioChecked)
    def _scenario_checked(self, message: ScenarioChecked) -> None:
        self.checking = None
        self.refresh_bindings()
        if message.error is not None:
            self.notify(message.error, title="Scenario not played", severity="error", markup=False, timeout=30)
            return
        if self.running or self._opening is not None:  # a message sent meanwhile went first
            self.notify("A turn is running; play the scenario once it is done.", severity="warning", markup=False)
            return
        if message.changes is None:
            self._play(message.name, consent=False)
            return
        from .dialogs import ConfirmDialog

        def answered(yes: bool | None) -> None:
            if yes and not self.running and self._opening is None:
                self._play(message.name, consent=True)
            elif not yes:
                self.notify("Nothing was played or changed.", title="Scenario not played", markup=False)
            self.focus_input()

        self.ask(
            ConfirmDialog(
                f"Play the {message.name} scenario in this home (not a demo home)?",
                f"{message.changes}\n\ny plays it here; n plays nothing (a demo home takes scenarios without "
                "asking: `workbench demo --home ./demo-home`).",
            ),
            answered,
        )

    def _play(self, scenario: str, consent: bool) -> None:
        self.action_new_session()  # (forgets a failed or stopped turn's line: ``_end_line``)
        self._turn = None  # (a scenario's runs end their own sessions)
        self.running = True
        self.playing = True
        self._cancel.clear()
        self.play_scenario(scenario, consent)

    # -- the agent (thread workers) ------------------------------------------------
    @work(thread=True, exit_on_error=False, group="agent")
    def run_turn(
        self,
        text: str,
        said_at: float,
        model: str,
        agent: Conversation | None,
        switch: Switch | None,
        turn: Handover,
        opening: Handover | None,
        before: threading.Event,
        done: threading.Event,
    ) -> None:
        """One turn; ``agent`` and ``switch`` are the screen's, read on the UI thread (the worker
        writes no screen state: the agent it opens arrives as ``AgentReady``); with none yet, it goes on
        with the agent ``opening`` opened for a resume. It starts once the worker before it (a switch,
        an opening) is done. Its writes' waits for another process's
        lock end on esc (the agent's stop) as at quit; should the screen close meanwhile, this thread
        ends the session once the turn has stopped, as the quit would have (``Handover``)."""
        session_id, error, unsent, unstored, why = self.session_id, None, text, 0, None
        stopped, waits = False, []
        if not turn.begin():  # (the screen closed first: nothing to run, nobody to tell)
            done.set()
            turn.finished.set()
            return
        try:
            while not before.wait(0.05):  # the worker before it; a quit (or esc) may mean it never runs
                if self._cancel.is_set():
                    raise TurnNotBegun
            agent = agent or (opening.agent if opening is not None else None)
            if agent is not None and switch is not None and not switch.done:  # state.db refused it at ctrl+l
                agent.switch_session(switch.target)  # the session left ends as Hermes ends it
            if agent is None:
                agent = Conversation.resuming(
                    self.home, make_model(self.home, model), session_id, source="tui", background_review=True
                )
            turn.agent = agent
            self.post_message(AgentReady(agent, agent.id))
            if self._cancel.is_set():  # cancelled (or the screen closed) before the screen knew the agent
                agent.cancel()
            # (not a save of the user's: the quit cancels its waits without asking, ``asked=False``)
            with lock_waits.cancellable(agent.stop_event, asked=False):
                result = agent.run_turn(text, said_at)  # (what it raises it raised before taking the message)
            unsent = ""  # the turn took the message: it is stored, even if the turn then failed
            # (its words are the CLI's: a busy error's advice is given as the app gives it)
            why = in_app_words(result.error) if result.error else None
            session_id, error = result.session_id, why if result.status == "error" else None
            unstored = agent.unstored
            stopped = result.status == "cancelled"
            waits = [str(call["result"]["error"]) for call in result.tool_calls if _wait_cancelled(call["result"])]
        except TurnNotBegun:
            stopped = True  # (its message never taken: back in the box)
        except Exception as exc:  # e.g. an unusable model configuration: shown in place, never fatal
            error = said_in_app(exc)
        finally:
            done.set()
            owed = switch if switch is not None and not switch.done else None
            if turn.turn_over(owed) and agent is not None:  # the screen closed under the turn: end it here,
                with lock_waits.cancellable(self._cancel, asked=False):  # never waiting out a busy state.db
                    turn.note = _end_at_exit(agent, owed)  # (what it will not take is kept in workbench.db)
            try:
                self._end_turn(
                    TurnEnded(
                        session_id,
                        error,
                        unsent if error or stopped else "",
                        unstored,
                        why,
                        owed,
                        stopped,
                        waits,
                    )
                )  # always: the screen must never stay "running"
            finally:  # (the app gone, there is no one to tell)
                turn.finished.set()

    @work(thread=True, exit_on_error=False, group="agent")
    def play_scenario(self, name: str, consent: bool) -> None:
        """A scenario, its sessions one after another. As a typed turn's, its writes' waits for another
        process's lock end on esc (its stop) and at quit: the write waiting is not made, the scenario
        stops there (ending its session as it ends them), and the screen says what was not done."""
        error, stopped, waits = None, False, []
        try:
            # (not a save of the user's: the quit cancels its waits without asking, ``asked=False``)
            with lock_waits.cancellable(self._cancel, asked=False):
                result = run_scenario(
                    self.home,
                    name,
                    speed=self.speed,
                    cancel=self._cancel,
                    background_review=True,
                    consent=consent,
                    source="tui",
                )
            stopped = result.cancelled
            waits = [
                str(call["result"]["error"])
                for turn in result.turns
                for call in turn.tool_calls
                if _wait_cancelled(call["result"])
            ]
        except Exception as exc:
            error = said_in_app(exc)
        finally:
            self._end_turn(TurnEnded(None, error, stopped=stopped, cancelled_waits=waits, scenario=name))

    def _end_turn(self, message: TurnEnded) -> None:
        """Worker thread: the turn's end reaches this screen through the app, after the runner
        events this thread published before it (straight to the screen, it could overtake them)."""
        self.app.post_message(AfterEngineEvents(self, message))

    @on(AgentReady)
    def _agent_ready(self, message: AgentReady) -> None:
        self.agent = message.agent
        self.session_id = message.session_id

    @on(TurnEnded)
    def _turn_ended(self, message: TurnEnded) -> None:
        self.running = False
        self.playing = False
        if message.owed is not None and self._switch is None:
            self._switch = message.owed  # never into the session left: the next message tries the switch again
        if self._turn is not None:
            self._turn.owed = None  # (heard: the screen keeps it from here, or a later switch replaced it)
        if message.session_id:
            self.session_id = message.session_id
        # The bar has room for a sentence: the status keeps the first, the notice holds the whole message.
        self._status(
            "failed: " + message.error.split(". ")[0].rstrip(".")
            if message.error
            else "stopped (esc)"
            if message.stopped
            else None
        )
        if message.cancelled_waits:  # esc came while a write waited for a lock: it was never made
            rest = [f"The rest of the scenario {message.scenario} was not played."] if message.scenario else []
            self.notify(
                " ".join([*(f"The agent's write was not made: {text}" for text in message.cancelled_waits), *rest]),
                title="Scenario stopped" if message.scenario else "Turn stopped",
                severity="warning",
                markup=False,
                timeout=20,
            )
        box = self.query_one("#run-input", Input)
        if message.unsent and not box.value:
            box.value = message.unsent  # never stored: to send again once the cause is fixed
        if message.error:
            # the transcript's last line says it whole (kept there through rereads: ``_end_line``), also
            # where the turn failed before a session was made (no endpoint): the status cuts it, and a notice
            # saying it covered half the transcript at 80x24, then went
            self._end_line = (self.session_id, TranscriptItem("system", f"turn error: {message.error}"))
            self._show_end_line()
            self.notify(TURN_FAILED_SEE_TRANSCRIPT, severity="error", markup=False, timeout=10)
        elif message.unstored:
            self.notify(
                f"{message.unstored_why or 'state.db did not take them.'} The conversation stays on this screen "
                "and is stored with your next message; quitting asks first.",
                title=f"{message.unstored} message{'s' * (message.unstored != 1)} not saved yet",
                severity="warning",
                markup=False,
                timeout=30,
            )
        if self.session_id:
            self.load_session(self.session_id)
        self.focus_input()

    @work(thread=True, exclusive=True, exit_on_error=False, group="run-reload")
    def load_session(self, session_id: str, at_tip: bool = False) -> None:
        """``at_tip``: a session just resumed, which compression may have continued in a newer segment
        (the turn goes there); a session talked in follows its rotations by ``session_rotated``."""
        opened = self._opened_count
        with self.archive_read():
            tip = self.home.archive.tip_of(session_id) if at_tip else session_id
            if tip != session_id:
                self.post_result(ResumedAtTip(session_id, tip))
            look = _look(self.home, tip)
            self.post_result(SessionReloaded(tip, session_items(self.home, tip), look, opened))

    @work(thread=True, exclusive=True, exit_on_error=False, group="run-gone")
    def check_gone(self, session_id: str, reload: bool = False) -> None:
        """Whether the session shown was deleted; ``reload``: another program changed state.db, so the
        transcript is read again (messages a Hermes running the session stored show when stored)."""
        opened = self._opened_count
        with self.archive_read():
            look = _look(self.home, session_id)
            if look is None:
                self.post_result(SessionGone(session_id))
            elif reload and look != self._shown_look:  # (another session's change, or upkeep's: nothing to read)
                self.post_result(SessionReloaded(session_id, session_items(self.home, session_id), look, opened))

    @on(SessionGone)
    def _session_gone(self, message: SessionGone) -> None:
        """The session shown was deleted: said now, not at the next message (which starts a new one)."""
        if message.session_id != self.session_id or self.running:
            return
        self.workbench.session_gone(message.session_id)
        self._withdraw_live()
        self._title(f"Session {message.session_id} (deleted: your next message starts a new session)")
        self.query_one(Transcript).set_items([], placeholder="This session was deleted.")
        self.notify(
            f"Session {message.session_id} was deleted; your next message starts a new session.",
            severity="warning",
            markup=False,
        )

    @on(ResumedAtTip)
    def _resumed_at_tip(self, message: ResumedAtTip) -> None:
        if message.chosen != self.session_id:
            return
        self.session_id = message.tip
        self.workbench.resumed(message.tip)
        self._session_title()
        self._status()
        self.notify(
            f"Session {message.chosen} was continued after compression: you are in its newest segment, "
            f"{message.tip}, where your next message goes.",
            markup=False,
            timeout=15,
        )

    @on(SessionReloaded)
    def _reloaded(self, message: SessionReloaded) -> None:
        if self.agent is not None and self.agent.id == message.session_id and self.agent.unstored:
            return  # state.db lacks what the transcript shows (it was busy): the stored copy would erase it
        if self.running:  # (read before a turn began, which shows what it says as it goes)
            return
        if message.session_id == self.session_id:
            self._shown_look = message.look
            transcript = self.query_one(Transcript)
            current = transcript.current
            keep = current.id if current is not None and not transcript.follow else None  # the reader's place
            # an end read before the agent (re)opened the session, or while it is reopening it, is the one
            # the agent undoes, not Hermes's
            reopening = self._opening is not None or (
                self._switch is not None and self._switch.target == message.session_id
            )
            fresh = message.opened == self._opened_count and not reopening
            ended_at, reason = message.look[:2] if message.look and fresh else (None, None)
            self._session_title(ended_as=end_reason_said(reason) if ended_at is not None else None)
            transcript.set_items(message.items, placeholder="This session has no messages yet.", select_id=keep)
            self._show_end_line()

    # -- live events ---------------------------------------------------------------
    def engine_event(self, event: Event) -> None:
        if isinstance(event, SessionChanged) and event.action in ("deleted", "external") and not self.running:
            if self.session_id and (event.action == "external" or event.session_id == self.session_id):
                self.check_gone(self.session_id, reload=event.action == "external")  # (deleted, or changed)
            return
        if not isinstance(event, RunnerEvent) or event.actor != "agent":
            return
        if event.kind == "messages_kept":  # a session left (a switch, another model) while state.db refused
            self.notify(
                str(event.data.get("text")), title="Kept for later", severity="warning", markup=False, timeout=30
            )
            return
        if event.kind == "warning" and event.data.get("old_session_id") == self.session_id and not self.running:
            self.notify(
                str(event.data.get("message")), severity="warning", markup=False
            )  # (ctrl+o to one since deleted)
            self.session_id = None
            self._title("New session")
            self.query_one(Transcript).set_items([], placeholder="New session: type a message below.")
            self._status()
            return
        if event.kind == "warning" and event.data.get("ended_elsewhere") and event.session_id == self.session_id:
            # said in the title, before the message was sent and from now on: a notice covered the
            # answer's last lines (80x24)
            self._reopened = (self.session_id, end_reason_said(event.data.get("end_reason")))
            self._withdraw_live()
            self._session_title()
        if event.kind == "warning" and event.data.get("uncompressed") and event.session_id == self.session_id:
            # (its transcript line goes when the finished turn is read back from state.db)
            self.notify(str(event.data["message"]), title="Not compressed", severity="warning", markup=False)
        if not (self.running or self.watching or self.session_id is None):
            return  # idle on a session of our own: a run elsewhere does not take the view over
        if event.kind == "session_rotated" and event.data.get("old_session_id") == self.session_id:
            self.session_id = event.session_id  # compression: the conversation goes on in a child session
            self._title(f"Session {self.session_id} (continues {event.data['old_session_id']} after compression)")
            self._status()
            return
        if event.kind == "warning" and event.data.get("old_session_id") == self.session_id:
            self.session_id = event.session_id  # its session was deleted: the message went to a new one
            self.notify(str(event.data.get("message")), severity="warning", markup=False)
        if (
            event.kind == "turn_started"
            and event.session_id != self.session_id
            and (self.session_id is None or self.playing or self.watching)
        ):
            self.watching = not self.running  # an agent run elsewhere (the demo): watch it stream
            self._follow(event.session_id)  # or a scenario moved on to its next session
        if event.session_id != self.session_id:
            return
        if event.kind == "turn_finished":
            self.load_session(self.session_id)
        transcript = self.query_one(Transcript)
        if event.kind == "assistant_delta":  # (model.stream: the answer shows as it is written)
            row, text = self._streaming or (len(transcript.items), "")
            self._streaming = (row, text + str(event.data.get("text") or ""))
            if self._stream_due is None:
                self._stream_due = self.set_timer(STREAM_SHOW_S, self._show_stream)
            return
        self._show_stream()  # what streamed in stands in its row before anything follows it
        streaming, self._streaming = self._streaming, None  # any other event ends the streamed text
        item = runner_item(event)
        if event.kind == "cancelled" and streaming is not None:  # its partial answer goes at the reread
            item = TranscriptItem("system", f"{item.content}: its partial answer was not kept")
        if event.kind == "cancelled" and item is not None:  # kept through the reread, as a failure's line
            self._end_line = (event.session_id, item)
        if streaming is not None and event.kind == "assistant_message":
            transcript.replace(streaming[0], item or TranscriptItem("assistant", streaming[1]))
        elif item is not None:
            transcript.append(item)

    def _show_stream(self) -> None:
        """The answer streamed in so far, in its row: pieces come faster than frames, and a long answer
        re-measured and redrawn whole for each of them left the screen behind (``STREAM_SHOW_S``)."""
        if self._stream_due is not None:
            self._stream_due.stop()
            self._stream_due = None
        if self._streaming is None:
            return
        row, text = self._streaming
        transcript = self.query_one(Transcript)
        if row < len(transcript.items):
            transcript.replace(row, TranscriptItem("assistant", text))
        else:
            transcript.append(TranscriptItem("assistant", text))


def runner_item(event: RunnerEvent) -> TranscriptItem | None:
    """What a runner event adds to a streaming transcript (None: nothing to show)."""
    data = event.data
    if event.kind == "turn_started":
        return TranscriptItem("user", str(data.get("user") or ""))
    if event.kind == "assistant_message" and data.get("content"):
        return TranscriptItem("assistant", str(data["content"]))
    if event.kind == "tool_called":
        return TranscriptItem("assistant", tool_calls=({"name": data.get("name"), "arguments": data.get("arguments")},))
    if event.kind == "tool_result":
        preview = str(data.get("preview") or "")
        return TranscriptItem("tool", preview, tool_name=data.get("name"), note=stored_advice_note(preview))
    if event.kind == "warning":
        return TranscriptItem("system", f"warning: {in_app_words(str(data.get('message')))}")
    if event.kind == "unbacked_claim":
        return TranscriptItem(
            "system", "unbacked claim: the answer says it saved or will remember, but this turn wrote nothing"
        )
    if event.kind == "flush_finished":
        return TranscriptItem("system", str(data.get("summary") or ""))
    if event.kind in ("error", "cancelled"):  # (a busy error's advice as the app gives it: ``in_app_words``)
        said = f": {in_app_words(str(data['message']))}" if data.get("message") else ""
        return TranscriptItem("system", f"turn {'stopped (esc)' if event.kind == 'cancelled' else 'error'}{said}")
    return None


def _wait_cancelled(outcome: dict) -> bool:
    """Whether a tool's outcome is a write whose wait for another process's lock was cancelled."""
    return outcome.get("success") is False and "lock" in outcome and "holders" in outcome


def _end_at_exit(agent: Conversation, switch: Switch | None) -> str | None:
    """End the agent's session as Hermes's CLI does at exit (or as a switch still owed would have);
    the quit goes ahead whatever state.db says, so a refusal is logged, never raised. Returns what
    is worth saying once the terminal is back: messages kept in workbench.db, or lost."""
    try:
        held = agent.end(_end_reason(switch))
    except Exception as exc:  # the quit went ahead once asked (``unstored``): it must not hang
        log.warning("session %s was not stored at exit: %s", agent.id, said(exc))
        return f"Session {agent.id} was not stored at exit: {said_in_app(exc)}"
    return held.describe(when_stored(agent.home)) if held is not None else None


def _end_reason(switch: Switch | None) -> str:
    """How the agent's session ends when it is dropped (a quit, another model): as a switch asked
    and still owed would have ended it, else as quitting does."""
    return leaving_reason(switch.target) if switch is not None and not switch.done else CLOSE_REASON
