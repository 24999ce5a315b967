"""The Textual app: modes (keys 1-6), header state, engine bridge, file watcher, themes.

Adding a screen: subclass ``workbench.screens.base.WorkbenchScreen`` and add it to
``MODES`` below; its key, tab, palette commands and help section follow from
``MODE_ORDER`` and the screen's ``BINDINGS`` / ``HELP``.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import signal
import sqlite3
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import platformdirs
from textual import events, on, work
from textual.actions import parse as parse_action
from textual.app import App
from textual.await_complete import AwaitComplete
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.message import Message
from textual.notifications import Notification, Notify, SeverityLevel
from textual.reactive import reactive
from textual.screen import Screen
from textual.signal import Signal
from textual.theme import ThemeProvider
from textual.widgets._toast import ToastRack
from textual.worker import Worker, WorkerState, get_current_worker

from engine import lock_waits
from engine.archive import outside as sessions_outside
from engine.db import in_app_words
from engine.errors import WorkbenchError
from engine.events import (
    ConfigChanged,
    Event,
    JournalChanged,
    KeptStored,
    PendingChanged,
    RunnerEvent,
    SessionChanged,
    SkillChanged,
)
from engine.home import Home
from engine.memory.targets import TARGETS
from engine.runner import background, dropped
from engine.runner.review import dropped_note, failed_note
from themes import DEFAULT_THEME, STYLESHEET, THEMES, VARIABLE_DEFAULTS
from widgets import textual_fixes
from widgets.literal import visible
from widgets.narration import Narrator, Story
from widgets.transcript import Transcript
from workbench.exit_threads import run_until_quit

from . import problems
from .bridge import EngineBridge, EngineEvent
from .crash import OneLineLog, save_traceback
from .messages import AfterEngineEvents, JumpToMessage, ResultsFromWorkers, ResumeSession, ShowEntry
from .problems import ProblemSaid
from .screens.approvals import ApprovalsScreen
from .screens.base import WorkbenchScreen
from .screens.dialogs import LATER, ConfirmDialog, EditDialog, QuitLaterDialog
from .screens.doctor import DoctorDialog
from .screens.help import HelpScreen, HelpSection, binding_rows, class_bindings, working_bindings
from .screens.memory import MemoryScreen
from .screens.run import RunScreen
from .screens.sessions import SessionsScreen
from .screens.skills import SkillsScreen
from .screens.timeline import TimelineScreen
from .settings import load_settings, save_setting, settings_path
from .watch import HomeWatcher

textual_fixes.apply()

# (mode, key, label) in key order; a mode shows up once it is in MODES.
UPKEEP_SECONDS = 2.0  # between idle index-upkeep steps

MODE_ORDER = (
    ("memory", "1", "Memory"),
    ("sessions", "2", "Sessions"),
    ("skills", "3", "Skills"),
    ("approvals", "4", "Approvals"),
    ("run", "5", "Run"),
    ("timeline", "6", "Timeline"),
)

MODES: dict[str, type[Screen]] = {
    "memory": MemoryScreen,
    "sessions": SessionsScreen,
    "skills": SkillsScreen,
    "approvals": ApprovalsScreen,
    "run": RunScreen,
    "timeline": TimelineScreen,
}

CURATOR_TICK = 60.0  # seconds between checks whether a Curator pass is due
GC_THRESHOLDS = (20_000, 20, 20)  # Python's are (700, 10, 10); see on_mount
TERMINAL_CHECK = 1.0  # seconds between checks that the terminal is still there
REVIEW_WAIT_NOTICE_S = 3600.0  # its notice stays as long as that wait (withdrawn when it ends)

log = logging.getLogger(__name__)

# Changes another process made, reported by the watcher, as the events the screens know.
EXTERNAL_EVENTS = {
    "skills": SkillChanged(actor="external", action="external"),
    "pending": PendingChanged(actor="external", action="external"),
    "sessions": SessionChanged(actor="external", action="external"),
    "journal": JournalChanged(),
}


def lock_wait_keys(screen: Screen, asked: bool) -> str:
    """What esc (on ``screen``, the one the notice of a lasting lock wait appears on) and ctrl+q do to
    that wait (``asked``: a write of the user's waits, which quitting asks about): the one place these
    words live."""
    if isinstance(screen, EditDialog) and screen.saving:
        esc = "Esc stops the save waiting here (nothing is written, your draft stays); "
    elif isinstance(screen, ApprovalsScreen):
        esc = "Esc stops a decision waiting here (it stays pending); "
    elif isinstance(screen, RunScreen) and screen.running:
        played = "the scenario" if screen.playing else "the agent's turn"
        esc = f"Esc stops {played}, and a write of it waiting here is not made; "
    else:
        esc = ""
    quits = "ctrl+q asks before quitting without it." if asked else "ctrl+q quits without it."
    return esc + quits


# -- the app's own worker results --------------------------------------------------------
@dataclass
class LockWaited(Message):
    lock: Path
    text: str  # ``lock_waits.describe``
    asked: bool = False  # a write of the user's waits (ctrl+q asks before quitting without it)


@dataclass
class LockWaitEnded(Message):
    lock: Path
    took: bool  # it took the lock (the write went on), rather than being cancelled


@dataclass
class WaitsAtQuit(Message):
    waits: list[lock_waits.Wait]  # the writes waiting on another process's lock when ctrl+q was pressed
    lines: list[str]  # each in words, with who holds its lock


@dataclass
class PendingCounted(Message):
    count: int


@dataclass
class JournalChecked(Message):
    problem: str  # why workbench.db cannot be read, or ""


@dataclass
class CuratorNoted(Message):
    note: str  # the automatic Curator pass that just ran, for the header


@dataclass
class NarrationReady(Message):
    line: Story


@dataclass
class DemoFinished(Message):
    turns: int
    sessions: int


def home_label(root: Path) -> str:
    """The home as a person would type it: relative to here, or with ~."""
    root = root.resolve()
    for base, prefix in ((Path.cwd().resolve(), ""), (Path.home().resolve(), "~/")):
        if root != base and base in root.parents:
            return prefix + str(root.relative_to(base))
    return str(root)


class ScreenCommands(Provider):
    """Palette commands: go to each mode, the doctor and the current screen's actions (``_commands``),
    then every other mode's actions named with its screen (``_elsewhere``), so a command is found from
    any screen. The list is built once per open (``startup``); a hit of the first kind ranks above any
    of the second."""

    def _commands(self):
        app: WorkbenchApp = self.app  # type: ignore[assignment]
        for mode, key, label in app.mode_tabs():
            yield f"Go to {label}", partial(app.goto, mode), f"key {key}"
        yield "Doctor: check the home", app.action_doctor, "the checks `workbench doctor` runs (read-only)"
        screen = self.screen
        title = getattr(screen, "TITLE_TEXT", "")
        offered = set()
        for key, description, action in screen_actions(type(screen)):
            _, name, parameters = parse_action(action)  # (Sessions' a: archive, or unarchive, by its parameter)
            if (key, description) in offered or not screen.check_action(name, parameters):
                continue  # not one dimmed or hidden in the footer (it would do nothing), nor a twin offered already
            offered.add((key, description))
            yield f"{title}: {description}", partial(screen.run_action, action), f"key {key}"

    def _elsewhere(self):
        """Each other mode's actions, one per description (its twins, such as Memory's Repair with and
        without a repair to make, go with it: the screen picks on arrival, ``run_elsewhere``). Those
        of ``esc`` are left out: they leave a state of a view, and a screen not shown is in none."""
        app: WorkbenchApp = self.app  # type: ignore[assignment]
        for mode, _, _ in app.mode_tabs():
            cls = app.MODES[mode]
            if isinstance(self.screen, cls):
                continue
            twins: dict[str, tuple[str, list[str]]] = {}
            for key, description, action in screen_actions(cls):
                if key != "escape":
                    twins.setdefault(description, (key, []))[1].append(action)
            for description, (key, actions) in twins.items():
                run = partial(app.run_elsewhere, mode, key, description, actions)
                yield f"{cls.TITLE_TEXT}: {description}", run, f"key {key} on {cls.TITLE_TEXT}"

    async def startup(self) -> None:
        here = [(*command, True) for command in self._commands()]
        self._listed = here + [(*command, False) for command in self._elsewhere()]

    async def discover(self) -> Hits:
        for title, callback, help_text, _ in self._listed:
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, callback, help_text, here in self._listed:
            score = matcher.match(title)
            if score > 0:
                yield Hit((1 + score if here else score) / 2, matcher.highlight(title), callback, help=help_text)


def screen_actions(cls) -> list[tuple[str, str, str]]:
    """(key, description, action) for a screen class's described bindings."""
    out, seen = [], set()
    for item in class_bindings(cls):
        binding = item if isinstance(item, Binding) else Binding(*item)
        if binding.description and binding.action not in seen:
            seen.add(binding.action)
            out.append((binding.key_display or binding.key.split(",")[0], binding.description, binding.action))
    return out


def _way_out(screen: Screen) -> str | None:
    """What esc does on ``screen`` now, if anything: it leaves a view the screen kept while hidden (Memory's
    facts), where a palette command of its other keys does nothing."""
    for key, description, action in screen_actions(type(screen)):
        _, name, parameters = parse_action(action)
        if key == "escape" and screen.check_action(name, parameters):
            return description
    return None


class WorkbenchApp(ResultsFromWorkers, App):
    """Memory Workbench. ``home`` is an open Home; the app never closes it."""

    TITLE = "Memory Workbench"
    CSS_PATH = STYLESHEET
    MODES = MODES
    DEFAULT_MODE = "memory"
    COMMANDS = App.COMMANDS | {ScreenCommands}
    BINDINGS = [
        *[Binding(key, f"goto('{mode}')", label, show=False, id=f"mode.{mode}") for mode, key, label in MODE_ORDER],
        Binding("question_mark,f1", "help", "Help", id="help"),  # f1 shown where ? is text (the Run box)
        Binding("f2", "change_theme", "Theme", show=False, id="theme"),
        Binding("f3", "hide_narration", "Hide narration", show=False, id="narration"),
        Binding("ctrl+q", "quit", "Quit", show=False, id="quit"),
    ]

    pending_count: reactive[int] = reactive(0)
    running_session: reactive[str | None] = reactive(None)
    NARRATION_LINGER = 20.0  # seconds the demo's last story line stays once it has finished
    narration: reactive[Story | None] = reactive(None)  # the demo's story line (None outside the demo, or hidden)
    review_status: reactive[str] = reactive("")  # "reviewing…" while a background review runs, then its result
    curator_note: reactive[str] = reactive("")  # the last automatic Curator pass, for the header
    journal_problem: reactive[str] = reactive(
        ""
    )  # why workbench.db cannot be read ("" when it can): every screen says it

    def __init__(
        self,
        home: Home,
        *,
        watch_files: bool = True,
        demo_speed: float | None = None,
        settings_file: Path | None = None,
        label: str | None = None,
        new_home: bool = False,
    ):
        super().__init__()
        self.home = home
        self.new_home = new_home  # opening made the folder: said at start (a mistyped --home)
        self.home_label = label if label is not None else home_label(home.root)
        self.watch_files = watch_files
        self.demo_speed = demo_speed
        self.settings_file = settings_file or settings_path()
        self.engine_events: Signal[Event] = Signal(self, "engine-events")
        self._bridge: EngineBridge | None = None
        self._watcher: HomeWatcher | None = None
        self._unlisten_locks: Callable[[], None] = lambda: None  # (lock_waits.listen, from on_mount)
        self._lock_notices: dict[Path, Notification] = {}  # each said wait's notice, until the wait is over
        self._settings_notice: Notification | None = None  # what the last read of config.yaml said
        self._lock_dialogs: dict[Path, Screen] = {}  # or the editor that says it (``EditDialog.show_wait``)
        self._gc_thresholds = gc.get_threshold()  # put back on unmount (see on_mount)
        self._demo_cancel = threading.Event()
        self._stopping = threading.Event()
        # Set at quit: every wait for another process's lock then ends (lock_waits.cancellable_everywhere),
        # so a worker or a turn waiting on a lock never keeps the app from exiting.
        self._quitting = threading.Event()
        self._uncancel_waits: Callable[[], None] = lambda: None
        self._asking_quit = False  # the question about waiting writes is being put (a second ctrl+q waits for it)
        self._review_wait = False  # w to the review question: quit once the reviews are done
        self._review_wait_notice: Notification | None = None  # (says that wait where the header has no room)
        self._review_line = ""  # the header's review part, without that wait's words
        self.quit_note: str | None = None  # what quitting left unsaved, said once the app has exited
        self.frozen_snapshot = None  # the snapshot the Memory screen compares with (see MemoryScreen)
        self.run_screen: RunScreen | None = None  # set once the Run screen is opened (quitting asks it first)
        self.crash_log: Path | None = None  # where the traceback of an unhandled exception was saved
        # Textual captures stderr while it draws: the engine's warnings become notifications instead.
        self._log = OneLineLog(lambda line: self.post_message(ProblemSaid(line, "Warning")))
        self.problems: list[str] = []  # said whole in help, newest first (``problems.kept``)
        self._stderr_logs: list[logging.Handler] = []  # the CLI's, put back when the app ends
        self._narrator: Narrator | None = None  # only while the demo plays (and until hidden)
        self._demo_over = False  # the demo finished: later events are the user's, not its story
        for theme in THEMES:
            self.register_theme(theme)
        saved = load_settings(self.settings_file).get("theme")
        self.theme = saved if saved in self.available_themes else DEFAULT_THEME

    def run(self, **options: Any) -> Any:
        """``App.run``, except that its end does not wait for its workers' threads (``exit_threads``):
        the terminal is back at once, and ``after_exit`` says what a busy turn still waits for."""
        return run_until_quit(self, **options)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(VARIABLE_DEFAULTS)

    # -- modes --------------------------------------------------------------------
    def mode_tabs(self) -> tuple[tuple[str, str, str], ...]:
        return tuple(tab for tab in MODE_ORDER if tab[0] in self.MODES)

    def mode_of(self, screen: Screen) -> str:
        return next((mode for mode, cls in self.MODES.items() if isinstance(screen, cls)), "")

    def goto(self, mode: str) -> None:
        if mode in self.MODES and mode != self.current_mode:
            self.switch_mode(mode)

    def action_goto(self, mode: str) -> None:
        self.goto(mode)

    @work(exclusive=True, group="palette-elsewhere", exit_on_error=False)
    async def run_elsewhere(self, mode: str, key: str, description: str, actions: list[str]) -> None:
        """A palette command of another mode: go there, then run the first of its ``actions`` the screen
        takes there, or, for one that acts on the selected row (``SELECTS``), say what to select. It
        acts once the reads the screen started on arrival are shown (``_arrived``). A worker, so the
        app's keys are not held up meanwhile."""
        before = set(self.workers)
        if mode != self.current_mode:
            await self.switch_mode(mode)
        screen = self.screen
        await self._arrived(screen, before)
        if self.screen is not screen:  # (the user went elsewhere meanwhile: "Memory: Add" opened over Approvals)
            return
        label = f"{key} ({description})"
        for action in actions:
            _, name, parameters = parse_action(action)
            if name in screen.SELECTS:
                self.notify(f"Select {screen.SELECTS[name]}, then press {label}.")
                return
            if screen.check_action(name, parameters) is not False:
                await self.run_action(action, screen)
                return
        out = _way_out(screen)
        first = f": press esc ({out}) first" if out else ""  # (Memory's facts view hides its columns' keys)
        self.notify(f"{label} does nothing on {screen.TITLE_TEXT} now{first}.", severity="warning")

    async def _arrived(self, screen: Screen, before: set[Worker]) -> None:
        """Until the reads ``screen`` started since ``before`` (its first load, or the reload it missed
        while hidden, asked by a message on its resume) are done and their results shown: "Approvals:
        Approve all" from another screen said nothing waits while the queue was still being read."""
        while True:
            shown = asyncio.get_running_loop().create_future()  # (what the screen has queued is handled: a
            screen.call_next(screen.call_next, shown.set_result, None)  # result, or a reload, is two messages)
            await shown
            started = [w for w in self.workers if w.node is screen and w not in before and not w.is_finished]
            if not started:
                return
            before.update(started)
            await asyncio.gather(*(w.wait() for w in started), return_exceptions=True)  # (superseded, failed: said)

    async def action_quit(self) -> None:
        """Quit; a write waiting on another process's lock is named and the user asked before it is
        cancelled (lock_waits), and a conversation on the Run screen that state.db did not take yet (it
        was busy) gets one more try first, and the user is asked before quitting without it."""
        if self._asking_quit:
            return
        # A person's save or decision is asked about; the app's own (a look for outside edits) just ends.
        waits = [wait for wait in lock_waits.under_way() if wait.asked]
        if waits and not self._quitting.is_set():
            self._asking_quit = True
            self._describe_waits(waits)
            return
        self._quit_now()

    def _quit_now(self, reviews_asked: bool = False) -> None:
        if not reviews_asked and (sessions := background.under_way(self.home)):
            self._ask_about_reviews(sessions)
            return
        if self.run_screen is not None and self.run_screen.unstored:
            self.run_screen.quit_after_storing()
            return
        self.exit()

    def _ask_about_reviews(self, sessions: list[str]) -> None:
        """A background review's model call may take as long as the model's timeout: quitting asks before
        dropping it (the exit then says so), rather than waiting for it on a blank terminal. Every review
        of this process is asked about, whoever started it (a typed turn, a scenario, the demo)."""
        self._asking_quit = True
        question = f"A background review of session {', '.join(sessions)} is still running. Quit and drop it?"
        detail = (
            "It is not done yet (a model may take as long as its timeout). y quits at once: the review is "
            "stopped, and what it has not saved is never saved (the terminal says so when it is back). n stays "
            "here and lets it finish. w stays until it is done and then quits (the header says so; ctrl+q "
            "meanwhile asks again)."
        )

        def answer(choice: bool | str | None) -> None:
            self._asking_quit = False
            self._quit_after_reviews(choice == LATER)
            if choice is True:
                if dropped := background.drop(self.home):  # (none when it ended as the question was put)
                    self._note_at_quit(dropped_note(dropped))
                self._quit_now(reviews_asked=True)

        self.push_screen(QuitLaterDialog(visible(question), visible(detail)), answer)

    def _note_at_quit(self, note: str) -> None:
        """Add ``note`` to what the terminal says once the app has exited."""
        self.quit_note = f"{self.quit_note} {note}" if self.quit_note else note

    def _quit_after_reviews(self, wait: bool) -> None:
        """w to the question: quit once no background review is left, said in the header meanwhile; any
        other answer ends that wait. Looked at again when a review's thread lets go of it (its
        ``review_settled`` event: "review finished" comes before) and when a Run turn ends
        (``recheck_review_wait``), not on a timer; the reviews' threads are looked at in memory, as the
        question did."""
        self._review_wait = wait
        if wait:
            self.call_later(self._quit_if_reviewed)  # (one may have ended as the question was answered)
        self._say_review(self._review_line)
        self.withdraw(self._review_wait_notice)
        self._review_wait_notice = None
        if wait:  # (the header's review part is cut first, gone at 80 columns: this says it at any size)
            self._review_wait_notice = self.notice(
                "The workbench quits once the background review is done. ctrl+q asks again.",
                title="Quit when done",
                severity="information",
                timeout=REVIEW_WAIT_NOTICE_S,
            )

    def recheck_review_wait(self) -> None:
        """A review's thread let go of it, or the Run screen's turn ended (it may have queued no review):
        a quit waiting for the reviews looks again."""
        if self._review_wait:
            self._quit_if_reviewed()

    def _quit_if_reviewed(self) -> None:
        """The wait's look: quit once no review is left, nor a Run turn sent during the wait (its review
        starts before the screen hears the turn end, so it is waited for too), unless ctrl+q asked again
        meanwhile. A question on screen is the user's to answer (it may be about to take the quit back):
        the app never quits under it, but says that the review is done and what each answer now does."""
        turn = self.run_screen is not None and self.run_screen.running
        if not self._review_wait or turn or background.under_way(self.home):
            return
        self._quit_after_reviews(False)
        if self._asking_quit:
            self._review_wait_notice = self.notice(  # (withdrawn by the answer, ``_quit_after_reviews``)
                "The background review is done. y or w quits now; n stays.",
                title="Quit when done",
                severity="information",
            )
            return
        self._quit_now(reviews_asked=True)

    def _say_review(self, line: str) -> None:
        """The header's review part: "reviewing…" or the last result, and while a quit waits for the
        reviews, that it does."""
        self._review_line = line
        self.review_status = f"{line}, then quit (ctrl+q: ask)" if self._review_wait else line

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Every notice (a screen's ``notify`` comes here too) is literal text, its control characters
        shown as symbols: notices carry session ids, titles and error texts from other programs' data,
        and some screens' calls did not make them safe themselves. Never markup. A busy error carried as
        plain text gives the app's advice, not the CLI's (``in_app_words``)."""
        message = visible(in_app_words(message))
        super().notify(message, title=visible(title), severity=severity, timeout=timeout, markup=False)

    def action_help_quit(self) -> None:
        """ctrl+c copies in a text box and quits nowhere: say which key quits. (Textual's own notice is
        markup, which ``notify`` here shows as typed: ``[b]ctrl+q[/b]``.)"""
        self.notify("Press ctrl+q to quit the workbench.", title="Do you want to quit?")

    def notice(
        self, message: str, *, title: str, severity: SeverityLevel = "warning", timeout: float = 30
    ) -> Notification:
        """A notice (literal, as ``notify``'s) that ``withdraw`` takes down once what it says stops being so."""
        notice = Notification(visible(in_app_words(message)), visible(title), severity, timeout, markup=False)
        self.post_message(Notify(notice))
        return notice

    def _refresh_notifications(self) -> None:
        """Textual shows the notices on the top screen only, so one withdrawn while a dialog is open (a
        dialog withdraws what was said before it: ``Dialog.on_mount``) stayed drawn on the screen under
        it, seen through the dialog's backdrop until the dialog closed. The screens under it follow too."""
        super()._refresh_notifications()
        for screen in self.screen_stack[:-1]:
            for rack in screen.query(ToastRack):
                rack.show(self._notifications)

    @on(Notify)
    def _replace_shown(self, message: Notify) -> None:
        """One notice says one thing once: a notice identical to one still shown (a key pressed five times
        on an empty queue stacked five ``Nothing waits for approval.``) takes its place, with a fresh
        timeout, at the bottom of the stack; so does a problem's one line (``problems``) in place of the
        problem before. Runs before Textual's own handler adds it."""
        new = message.notification
        for shown in list(self._notifications):
            if (shown.message, shown.title, shown.severity) == (new.message, new.title, new.severity) or (
                problems.is_problem(shown) and problems.is_problem(new)
            ):
                self._unnotify(shown, refresh=False)  # (Textual's handler refreshes the rack next)

    def withdraw(self, notice: Notification | None) -> None:
        """Take a notice down (Textual's own removal; one gone already is no matter)."""
        if notice is not None:
            self._unnotify(notice)

    def exit(self, result=None, return_code: int = 0, message=None) -> None:
        """Every exit (ctrl+q, a hang-up, a closed terminal) first ends the waits for other processes'
        locks, so no worker keeps the process from ending."""
        if self.run_screen is not None:  # (first: a scenario goes no further than the write whose wait ends)
            self.run_screen.stop_for_exit()
        # A review still running (an exit no one was asked about: a hang-up, a closed terminal) is never
        # waited for, and the next start says it was not done.
        background.drop(self.home)
        self._quitting.set()
        note = visible(self.quit_note) if self.quit_note else None  # (it may name sessions state.db holds)
        super().exit(result, return_code, message if message is not None else note)

    def after_exit(self, say: Callable[[str], object] | None = None) -> None:
        """Once the terminal is back: a Run turn the quit stopped ends its session in its own thread (its
        waits for a busy state.db end with the quit, so this is short); said if it takes a moment, and
        what it kept in workbench.db (state.db busy) is said once it is done."""
        say = say or (lambda text: print(visible(text), file=sys.stderr, flush=True))
        if self.run_screen is None:
            return
        turn, note = self.run_screen.after_exit(), self.run_screen.exit_note
        if turn is not None:
            try:
                if not turn.finished.wait(1.0):  # (a model reply it waits for may take up to model.timeout)
                    say("Waiting for the agent's turn to stop and its session to end… (ctrl+c leaves without waiting)")
                    turn.finished.wait()
            except KeyboardInterrupt:  # (exiting would wait for its thread all the same)
                say("Left without waiting: its session stays open in state.db, as a killed workbench leaves it.")
                sys.stderr.flush()
                os._exit(130)
            note = turn.note
        if note:
            say(f"note: {note}")

    def user_write(self) -> contextlib.AbstractContextManager[None]:
        """Around a write the user asked for, in its worker: should it wait for another process's lock,
        ctrl+q asks before cancelling that wait, and the exit line names it (lock_waits)."""
        return lock_waits.cancellable(self._quitting)

    @work(thread=True, exclusive=True, group="quit-waits", exit_on_error=False)
    def _describe_waits(self, waits: list[lock_waits.Wait]) -> None:
        from engine.db import flock_holders

        lines = []
        for wait in waits:
            holders = flock_holders(wait.lock)
            lines.append(f"{wait.lock} (held by {', '.join(holders) if holders else 'another process'})")
        self.post_result(WaitsAtQuit(waits, lines))

    def on_waits_at_quit(self, message: WaitsAtQuit) -> None:

        waiting = [wait for wait in message.waits if not wait.over and not wait.cancelled]
        if not waiting:  # each took its lock meanwhile, and wrote
            self._asking_quit = False
            self._quit_now()
            return
        if len(message.lines) == 1:  # (its own words: a memory save, an approval, an undo)
            question = f"A change you asked for is waiting for {message.lines[0]}. Quit without it?"
            detail = "It has not taken the lock: quitting cancels the wait, and the write waiting on it is not made."
        else:
            question = (
                f"{len(message.lines)} changes you asked for are waiting for locks other processes hold. "
                "Quit without them?"
            )
            detail = "\n".join(
                [
                    "None has taken its lock: quitting cancels the waits, and the writes waiting on them are not made.",
                    "",
                ]
                + message.lines
            )

        def answer(yes: bool | None) -> None:
            self._asking_quit = False
            if yes:
                self._quit_without(message.waits, message.lines)

        self.push_screen(ConfirmDialog(visible(question), visible(detail)), answer)

    def _quit_without(self, waits: list[lock_waits.Wait], lines: list[str]) -> None:
        """Cancel the waits (any begun since end as the app exits: ``exit``), then quit as ctrl+q does."""
        cancelled = lock_waits.cancel(waits)
        said = [line for wait, line in zip(waits, lines, strict=True) if wait in cancelled]
        if said:
            self.quit_note = visible(
                "Quit without saving: "
                + "; ".join(f"the write waiting for {line} was cancelled before it took the lock" for line in said)
                + "."
            )
        self._quit_now()

    async def run_action(self, action, default_namespace=None, namespaces=None) -> bool:
        """A dimmed key (its owner's ``check_action`` says None: it does nothing where the user is) says
        why in a notice, when its owner can tell (``explain_dimmed``), instead of doing nothing silently
        (the footer's dimming alone was missed: ``w`` on a session that wrote nothing seemed broken)."""
        target, name, parameters = self._parse_action(
            action, self if default_namespace is None else default_namespace, namespaces
        )
        explain = getattr(target, "explain_dimmed", None)
        if explain is not None and target.check_action(name, parameters) is None:
            why = explain(name, parameters)
            if why:
                self.notify(why, severity="warning")
                return True
        return await super().run_action(action, default_namespace, namespaces)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "goto" and parameters:
            if parameters[0] not in self.MODES:
                return False
            return None if parameters[0] == self.current_mode else True
        return True

    def pop_screen(self) -> AwaitComplete:
        """Never pop a mode's own screen: Textual's modals (the palette, the theme picker) dismiss
        by popping whatever is on top, so a key burst that answers one twice would pop the screen
        underneath and crash. Our own dialogs close once (``screens.dialogs.Dialog``)."""
        if len(self.screen_stack) <= 1:
            return AwaitComplete.nothing()
        return super().pop_screen()

    def action_command_palette(self) -> None:
        if self.use_command_palette and not textual_fixes.Palette.is_open(self):
            self.push_screen(textual_fixes.Palette(id="--command-palette"))

    def search_themes(self) -> None:
        self.push_screen(textual_fixes.Palette(providers=[ThemeProvider], placeholder="Search for themes…"))

    def action_screenshot(self, filename: str | None = None, path: str | None = None) -> None:
        """The palette's screenshot, saved where a folder exists (Textual assumes ~/Downloads does);
        Textual's notice then says where it went."""
        self.deliver_screenshot(filename, str(screenshot_folder(path, self.settings_file.parent / "screenshots")))

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.help_sections()))

    def action_doctor(self) -> None:
        self.push_screen(DoctorDialog(self.home))

    def help_sections(self) -> list[HelpSection]:
        """The problems said, whole (their notices have one line), then the current screen as it is now
        (``WorkbenchScreen.help_section``: only the keys that work in its view), then the other modes,
        then the keys that work everywhere."""
        current = self.MODES.get(self.current_mode)
        shown = next((s for s in self.screen_stack if isinstance(s, WorkbenchScreen)), None)
        sections = [HelpSection("Problems said, newest first", "\n\n".join(self.problems), [])] if self.problems else []
        sections += [shown.help_section()] if shown is not None else []
        ordered = [current] + [cls for mode, _, _ in self.mode_tabs() if (cls := self.MODES[mode]) is not current]
        sections += [
            HelpSection(cls.TITLE_TEXT, cls.HELP, binding_rows(class_bindings(cls)))
            for cls in ordered
            if cls is not None and type(shown) is not cls
        ]
        transcripts = shown.query(Transcript) if shown is not None else []
        sections.append(
            HelpSection(
                "Transcript (Sessions and Run)",
                "When the transcript has focus (tab to it).",
                binding_rows(working_bindings(transcripts[0]) if transcripts else Transcript.BINDINGS),
            )
        )
        everywhere = binding_rows(self.BINDINGS) + [
            ("ctrl+p", "Command palette (every screen's actions)"),
            ("tab", "Next pane (shift+tab: previous)"),
            ("ctrl+c", "Copy selected text"),
        ]
        sections.append(HelpSection("Everywhere", "Mouse: click tabs, rows and buttons.", everywhere))
        return sections

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and (self._quitting.is_set() or not self._running):
            # Typed after quitting: ctrl+q then a opened the Add box as the screens closed, and crashed. Or
            # once Textual's shutdown began (run_test's, with the message loop still running): a mode key
            # then switched to a mode whose screens were already gone ("No screens on stack").
            return
        if isinstance(event, events.Key) and isinstance(self.screen, WorkbenchScreen):
            self.screen.key_pressed()  # every key, a text box's and a priority binding's too
        await super().on_event(event)

    # -- lifecycle ----------------------------------------------------------------
    def on_mount(self) -> None:
        self.theme_changed_signal.subscribe(self, self._remember_theme)
        root = logging.getLogger()
        self._stderr_logs = [h for h in root.handlers if isinstance(h, OneLineLog)]  # (Textual holds stderr)
        for handler in self._stderr_logs:
            root.removeHandler(handler)
        root.addHandler(self._log)
        self._bridge = EngineBridge(self, self.home)
        self._unlisten_locks = lock_waits.listen(
            self._lock_wait, lambda lock, took: self.post_message(LockWaitEnded(lock, took))
        )
        self._uncancel_waits = lock_waits.cancellable_everywhere(self._quitting)
        self._warn_misreads()
        self._say_kept_stored()  # (stored as the home opened, before this app listened)
        self._say_dropped_reviews()
        if self.new_home:
            self.notify(
                visible(
                    f"{self.home.root} did not exist: this is a new, empty home. If you meant another, "
                    "quit (ctrl+q) and pass its folder with --home."
                ),
                title="New home",
                severity="warning",
                markup=False,
                timeout=15,
            )
        self.refresh_pending()
        self.check_journal()
        self._turn_running = False
        if not self.home.read_only:
            self.set_interval(CURATOR_TICK, self.curator_tick)
        if self.watch_files and not self.home.read_only:
            self._watcher = HomeWatcher(self.home, self._external_change)
            self._watch()
        if not self.home.read_only:
            self._upkeep()
        if self.demo_speed is not None:
            self._narrator = Narrator(
                lambda target: (self.home.memory.usage(target).chars, self.home.memory.limit(target))
            )
            self._play_demo(self.demo_speed)
        # Drawing allocates many short-lived objects, and a full collection walked everything start-up
        # built (the home, its caches, the screens): a keystroke's frame could wait 50-100 ms for it.
        # Collect less often, and once the first frame is drawn, leave what exists out of collections.
        gc.set_threshold(*GC_THRESHOLDS)
        self.call_after_refresh(gc.freeze)
        if not self.is_headless:
            self.set_interval(TERMINAL_CHECK, self._exit_if_terminal_gone)

    def _exit_if_terminal_gone(self) -> None:
        """Quit once the terminal has hung up (its window closed, tmux killed, ssh dropped).

        SIGHUP only reaches us when our session leader passes it on; under ``make run`` it
        does not, and Textual's input thread then spins on end-of-file while the app goes
        on writing to the home unseen.
        """
        stdin = sys.__stdin__
        if stdin is None or not os.isatty(stdin.fileno()):
            self.exit(return_code=1, message="The terminal went away; the workbench quit.")

    def _lock_wait(self, lock: Path, holders: list[str]) -> None:
        """(The lock-waits thread) a save or turn waits on another process's lock: said, not silent."""
        asked = any(wait.asked for wait in lock_waits.under_way() if wait.lock == lock)
        self.post_message(LockWaited(lock, lock_waits.describe(lock, holders), asked))

    def on_lock_waited(self, message: LockWaited) -> None:
        """Said in a notice, or in the editor that waits: a notice covered its text box at 80x24."""
        text = f"{message.text} {lock_wait_keys(self.screen, message.asked)}"
        if isinstance(self.screen, EditDialog) and self.screen.saving:  # (its save's wait, as the keys say)
            self.screen.show_wait(text)
            self._lock_dialogs[message.lock] = self.screen
            return
        self._lock_notices[message.lock] = self.notice(text, title="Waiting for a lock", timeout=20)

    def on_lock_wait_ended(self, message: LockWaitEnded) -> None:
        """The wait is over: its notice, which says the write will go on, goes (Textual's own removal),
        or the editor's line; one that took the lock says the write went on, a cancelled one has said
        so already."""
        self.withdraw(self._lock_notices.pop(message.lock, None))
        dialog = self._lock_dialogs.pop(message.lock, None)
        if dialog is not None:
            dialog.show_wait(None)
        if message.took:
            self.notify(visible(f"{message.lock} is free: the write went on."), title="Lock free", markup=False)

    def on_unmount(self) -> None:
        self._unlisten_locks()
        self._quitting.set()  # (a wait still under way ends: its worker does not hold up the exit)
        self._uncancel_waits()
        root = logging.getLogger()
        root.removeHandler(self._log)
        for handler in self._stderr_logs:
            root.addHandler(handler)
        self._demo_cancel.set()
        self._stopping.set()
        if self._watcher is not None:
            self._watcher.stop()
        if self._bridge is not None:
            self._bridge.close()
        gc.unfreeze()  # what was frozen is collected again once unreachable (an app in a test process)
        gc.set_threshold(*self._gc_thresholds)

    def _warn_misreads(self) -> None:
        """Values replaced or read differently by Hermes: said at start and whenever config.yaml changes
        (docs/configuration.md)."""
        for title, warning in self.home.config.warnings():
            self.notify(
                visible(warning),
                title=title,
                severity="warning",
                markup=False,
                timeout=30,
            )

    def _remember_theme(self, theme) -> None:
        if load_settings(self.settings_file).get("theme") != theme.name:
            save_setting(self.settings_file, "theme", theme.name)

    # -- engine events ------------------------------------------------------------
    def watch_running_session(self, old: str | None, new: str | None) -> None:
        """No session is live any more (left, ended, deleted): the Memory screen's frozen side turns to
        what a new session would freeze now, not the prompt of the session that was left."""
        if new is None and old is not None:
            self.frozen_snapshot = None

    def session_gone(self, session_id: str) -> None:
        """The session Run shows was deleted: the header no longer names it."""
        if self.running_session == session_id:
            self.running_session = None

    def resumed(self, session_id: str) -> None:
        """Run resumed ``session_id``: the header names it at once, and the Memory screen's frozen side
        turns to what its stored prompt holds (read in a worker, as it is when a turn starts)."""
        self.running_session = session_id
        self._read_resumed(session_id)

    @work(thread=True, exclusive=True, group="resumed-snapshot", exit_on_error=False)
    def _read_resumed(self, session_id: str) -> None:
        if self._bridge is not None:
            self._bridge.resumed(session_id)

    def on_engine_event(self, message: EngineEvent) -> None:
        event = message.event
        if (
            isinstance(event, RunnerEvent)
            and event.kind == "session_resumed"
            and event.session_id != self.running_session
        ):
            return  # Run has left the resumed session since (ctrl+l, another resume): its snapshot is not wanted
        if message.snapshot is not None:
            self.frozen_snapshot = message.snapshot
        if isinstance(event, PendingChanged):
            self.refresh_pending()
        elif isinstance(event, KeptStored):
            self._say_kept_stored()
        elif isinstance(event, ConfigChanged):
            self.withdraw(self._settings_notice)  # (a refusal of the file before says settings this one replaced)
            self._settings_notice = self.notice(
                event.message, title="Settings", severity="warning" if event.error else "information", timeout=10
            )
            if not event.error:
                self._warn_misreads()
        elif isinstance(event, RunnerEvent) and event.kind == "review_settled":
            self.recheck_review_wait()
        elif isinstance(event, RunnerEvent) and event.session_id:
            self.running_session = event.session_id
            if event.kind == "review_started":
                self._say_review("reviewing\u2026")
            elif event.kind == "review_finished":
                self._say_review(visible(f"review: {event.data.get('line') or event.data.get('summary')}"))
                error = event.data.get("error")
                if error and error != "cancelled" and self._review_wait:  # (the quit will not show it)
                    self._note_at_quit(failed_note(event.session_id, str(error)))
            if event.kind in ("turn_started", "turn_finished"):
                self._turn_running = event.kind == "turn_started"
        elif isinstance(event, SessionChanged) and event.action == "ended" and event.session_id == self.running_session:
            self.running_session = None
        self.engine_events.publish(event)
        if self._narrator is not None and not self._demo_over:  # (decided here, in the events' order)
            self._narrate(event, self.running_session is not None)

    @work(thread=True, group="dropped-reviews", exit_on_error=False)
    def _say_dropped_reviews(self) -> None:
        """The background reviews the last quit dropped (its exit line said so, easily lost): said once more."""
        sessions = dropped.take(self.home)
        if sessions:  # (``notice`` posts a message: a worker may call it; the ids are shown as symbols)
            self.notice(dropped_note(sessions), title="Review not done", timeout=30)

    def _say_kept_stored(self) -> None:
        """Messages kept in workbench.db (the user was told so) that are stored in state.db now: said once
        each (``Home.take_kept_stored``), the CLI's words."""
        for note in self.home.take_kept_stored():
            self.notify(note, title="Stored in state.db", markup=False, timeout=15)

    @work(thread=True, group="narration", exit_on_error=False)
    def _narrate(self, event: Event, session_running: bool) -> None:
        narrator = self._narrator
        line = narrator.line(event, session_running) if narrator is not None else None
        if line:
            self.post_message(NarrationReady(line))

    def on_after_engine_events(self, message: AfterEngineEvents) -> None:
        # The engine-event signal hands each event to a screen with ``call_next``, run in order after
        # the screen's current message: the message joins that line, behind the events before it.
        message.target.call_next(message.target.post_message, message.message)

    def on_narration_ready(self, message: NarrationReady) -> None:
        if self._narrator is not None:  # not hidden meanwhile
            self.narration = message.line

    def action_hide_narration(self) -> None:
        self._narrator = None
        self.narration = None

    async def on_jump_to_message(self, message: JumpToMessage) -> None:
        if "sessions" not in self.MODES:
            self.notify("The Sessions screen is not available.", severity="warning")
            return
        await self.switch_mode("sessions")
        self.screen.post_message(JumpToMessage(message.session_id, message.message_id))

    async def on_resume_session(self, message: ResumeSession) -> None:
        if "run" not in self.MODES:
            self.notify("The Run screen is not available.", severity="warning")
            return
        await self.switch_mode("run")
        self.screen.post_message(ResumeSession(message.session_id))

    async def on_transcript_entry_wanted(self, message: Transcript.EntryWanted) -> None:
        """A transcript's ``m``: show the memory entry that message wrote."""
        await self.switch_mode("memory")
        self.screen.post_message(ShowEntry(message.target, message.text))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A failed engine call is reported, never fatal."""
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            cause = " ".join(str(getattr(error, "message", None) or error).split())
            if self._log.said_lately(cause):  # a warning said this problem just now (upkeep on a damaged state.db)
                return
            text = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
            self.post_message(ProblemSaid(text, "Something went wrong", "error"))

    def on_problem_said(self, message: ProblemSaid) -> None:
        """A problem in one line (in place of the one said before: ``_replace_shown``); help lists them whole."""
        text = visible(in_app_words(message.text))
        self.problems = problems.kept(self.problems, text)
        self.notice(
            problems.headline(text, self.home.root, self.size.width),
            title=message.title + problems.TITLE_TAIL,
            severity=message.severity,
            timeout=self.NOTIFICATION_TIMEOUT,
        )

    @work(thread=True, exclusive=True, group="journal-check", exit_on_error=False)
    def check_journal(self) -> None:
        self.post_result(JournalChecked(self.home.journal.problem() or ""))

    def on_journal_checked(self, message: JournalChecked) -> None:
        self.journal_problem = message.problem

    @work(thread=True, exclusive=True, group="pending-count", exit_on_error=False)
    def refresh_pending(self) -> None:
        count = self.home.approvals.count()
        self.post_result(PendingCounted(count))  # dropped if a newer count started meanwhile

    def on_pending_counted(self, message: PendingCounted) -> None:
        self.pending_count = message.count
        if not message.count and self.narration is not None and self.narration.mode == "approvals":
            self.narration = None  # "approve it here" with nothing left to approve would mislead

    @work(thread=True, exclusive=True, group="curator-schedule", exit_on_error=False)
    def curator_tick(self) -> None:
        """Run a due Curator pass (never during a turn: the engine checks idle time and ``busy``)."""
        report = self.home.curator.maybe_run(busy=self._turn_running)
        if report is not None:
            note = f"curator {report['started_at'][11:16]}: {report['summary'].removeprefix('auto: ')}"
            self.post_result(CuratorNoted(note))

    def on_curator_noted(self, message: CuratorNoted) -> None:
        self.curator_note = message.note

    # -- other processes ----------------------------------------------------------
    @work(thread=True, group="watch", exit_on_error=False)
    def _watch(self) -> None:
        self._watcher.run()

    def _external_change(self, kinds: set[str]) -> None:
        """Watcher thread: take a changed config.yaml, journal outside edits, then tell the screens.

        Each step on its own: one that fails (a locked journal) is logged and the rest still run,
        and the screens always hear of the change. While workbench.db cannot be read nothing is
        journaled (the screens say why), but the screens still reread the files."""
        problem = self.home.journal.problem() or ""
        self.post_message(JournalChecked(problem))
        steps = [("config", self.home.refresh_config)] if "config" in kinds else []
        # memory: journals what no workbench process did, announces what this one has not seen; and when
        # state.db alone changed, credits the rows a look journaled as outside edits to the Hermes calls stored since
        memory = self.home.memory
        steps += [(t, partial(memory.record_external_change, t)) for t in TARGETS if t in kinds]
        if "sessions" in kinds:
            steps += [(t, partial(memory.look_for_credit, t)) for t in TARGETS if t not in kinds]
        steps += [("skills", self.home.skills.outside.record)] if "skill files" in kinds else []
        steps += [("pending", self.home.approvals.catch_up)] if "pending" in kinds else []
        if kinds & {"sessions", "session flags"}:  # sessions Hermes archived or deleted
            steps.append(("sessions", partial(sessions_outside.catch_up, self.home)))
        if problem:
            steps = [step for step in steps if step[0] == "config"]
        try:
            for kind, step in steps:
                try:
                    step()
                except (WorkbenchError, OSError, sqlite3.Error) as exc:  # (SQLite's own names no file: explained)
                    said = exc.in_app if isinstance(exc, WorkbenchError) else in_app_words(self.home.explain(exc))
                    log.warning("could not follow the outside change to %s: %s", kind, said)
        finally:
            for kind, event in EXTERNAL_EVENTS.items():
                if kind in kinds:
                    self.post_message(EngineEvent(event))

    @work(thread=True, group="upkeep", exit_on_error=False)
    def _upkeep(self) -> None:
        """Idle-time index upkeep: one bounded step (about 50 ms) every few seconds (archive/upkeep.py)."""
        worker = get_current_worker()
        if self.home.archive.vet() is not None:  # damaged: said (a warning), and nothing is written to it
            return
        while not worker.is_cancelled and not self._stopping.wait(UPKEEP_SECONDS):
            # (the watcher leaves state.db's merges out: they change no session or message)
            self.home.archive.upkeep(witness=self._watcher.witness("sessions") if self._watcher else None)

    # -- demo ---------------------------------------------------------------------
    @work(thread=True, group="demo", exit_on_error=False)
    def _play_demo(self, speed: float) -> None:
        from engine.demo import run_scenario

        result = run_scenario(
            self.home, "demo", speed=speed, cancel=self._demo_cancel, background_review=True, source="tui"
        )
        if not self._demo_cancel.is_set():
            self.post_message(DemoFinished(len(result.turns), len(result.session_ids)))

    def on_demo_finished(self, message: DemoFinished) -> None:
        """The story is told: nothing after the demo is narrated, and its last line goes soon after."""
        self._demo_over = True
        self.set_timer(self.NARRATION_LINGER, self.action_hide_narration)
        self.notify(
            f"The demo played {message.turns} turns in "
            f"{message.sessions} sessions. Press 4 to review what waits for approval.",
            title="Demo finished",
            markup=False,
            timeout=10,
        )

    # -- crashes ------------------------------------------------------------------
    def _handle_exception(self, error: Exception) -> None:
        """An unhandled exception still ends the app (Textual's rule), but its traceback goes to
        a file next to the settings instead of the terminal; ``raise_if_crashed`` says where."""
        self.crash_log = save_traceback(error, self.settings_file.parent / "crashes")
        super()._handle_exception(error)
        if self.crash_log is not None:
            self._exit_renderables.clear()  # the traceback is in the file; the CLI prints one line

    def raise_if_crashed(self) -> None:
        if self.return_code and self._exception is not None:
            error = self._exception
            where = (
                f"The traceback was saved to {self.crash_log}; please attach it to a bug report."
                if self.crash_log
                else "The traceback could not be saved."
            )
            raise WorkbenchError(
                f"The workbench stopped on an unexpected error ({type(error).__name__}: "
                f"{visible(str(error))[:200]}). Nothing was left half-written. {where}"
            )


def screenshot_folder(path: str | None, fallback: Path) -> Path:
    """``path`` (else the Downloads folder), created if missing; ``fallback`` if that cannot be."""
    for folder in (Path(path) if path else platformdirs.user_downloads_path(), fallback):
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(folder, os.W_OK):
            return folder
    return fallback


def run_app(home: Home, *, demo_speed: float | None = None, new_home: bool = False) -> None:
    """Open the TUI on ``home`` (blocking until the user quits); a crash raises WorkbenchError
    after the terminal is restored, so the CLI prints where the traceback went and exits 1."""
    app = WorkbenchApp(home, demo_speed=demo_speed, new_home=new_home)
    # A closed terminal window or a killed tmux sends SIGHUP, whose default ends the process at once:
    # the session being typed in would stay open in state.db. Quit as ctrl+q does instead.
    quit_now = partial(app.exit, return_code=1, message="The terminal hung up; the workbench quit.")
    hung_up = signal.signal(signal.SIGHUP, lambda *_: app.call_later(quit_now))
    try:
        app.run()
    finally:
        signal.signal(signal.SIGHUP, hung_up)
    app.raise_if_crashed()
    app.after_exit()
