"""Waits on a file lock another process holds: said once they have lasted a second, and
cancellable where a skin asked for it.

Hermes takes a memory file's lock for each write and waits for it without a time limit, as
the workbench does (a write must never be dropped). A wait that lasts (a process stuck
mid-write) left a command printing nothing and the TUI's save or turn silent; the skins
``listen`` here and say who holds the lock. A contended lock costs one dict entry: one
thread, started with the first listener's first long wait, looks at the waits four times a
second.

A wait is blocking (one ``flock`` call) unless its thread runs inside ``cancellable`` (or a skin
made every wait so, ``cancellable_everywhere``: the TUI, for its quit): then ``fileio.file_lock``
polls the lock (after 1 ms, then twice as long each time, up to ``POLL_S``) and gives up with
``WaitCancelled`` once one of the scope's events is set (the TUI's esc on a waiting save, its quit).
Only a wait while the thread holds no lock is cancelled: once a write holds a lock it runs to its
end (an engine part that undoes what it began on a refusal, as an approval does, may say its inner
waits can be cancelled too, with ``inner_waits_cancellable``), and an operation of several locked
steps (``one_operation``: a Curator pass, a purge, a group revert) runs to its end once its first
step took its lock. A cancelled wait is over before the lock is taken, so nothing was written.

The same scopes end a wait for a busy SQLite database (another process holds state.db's or
workbench.db's write lock: ``db.write_transaction``): in a cancellable scope it tries again every
``POLL_S`` instead of one wait in SQLite's busy handler, and ends with ``db.BusyWaitCancelled`` (a
``DatabaseBusyError``, so every caller handles it as the busy timeout reached early) once an event is
set. Those waits are not listened to: the busy timeout bounds them, and their error names the holder.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .errors import WorkbenchError

NOTICE_AFTER_S = 1.0
POLL_S = 0.03  # between tries of a cancellable wait at most (a blocking wait does not poll)
FIRST_POLL_S = 0.001  # a cancellable wait's first pause; each one after is twice the one before, up to POLL_S

Listener = Callable[[Path, list[str]], None]  # (the lock file, its holders as "pid (program)")
Ended = Callable[[Path, bool], None]  # (the lock file, whether the wait took it rather than being cancelled)

_listeners: list[Listener] = []
_ended: list[Ended] = []
_waits: dict[int, Wait] = {}  # the waits under way that are listened to or cancellable, by id
_said: set[int] = set()
_guard = threading.Lock()
_watcher: threading.Thread | None = None


class _ThreadState(threading.local):
    """Each thread's own: its defaults are the class's, so reading one a thread never set raises and
    catches no ``AttributeError`` (a ``getattr`` with a default did, twice on each of a write's waits)."""

    cancel: tuple[threading.Event, ...] = ()  # the events of the innermost ``cancellable``
    asked = False
    held = 0  # locks this thread holds
    operation: list[bool] | None = None  # ``one_operation``'s: whether it has taken a lock
    interrupted: Wait | None = None  # the wait last cancelled (``interrupted``)


_thread = _ThreadState()
_everywhere: list[threading.Event] = []  # ``cancellable_everywhere``: events that end every thread's first wait


class WaitCancelled(WorkbenchError):
    """A wait for a lock another process held was cancelled before the lock was taken: nothing was written."""

    def __init__(self, lock: Path, holders: list[str]):
        who = f"process {', '.join(holders)}" if holders else "another process"
        super().__init__(
            f"Cancelled while waiting for {lock} ({who} held it): nothing was written, nothing changed.",
            lock=str(lock),
            holders=holders,
        )
        self.lock = lock
        self.holders = holders


@dataclass(eq=False)
class Wait:
    """One wait under way for ``lock``; ``cancel``: the events that end it (empty: it blocks)."""

    lock: Path
    cancel: tuple[threading.Event, ...] = ()
    began: float = field(default_factory=time.monotonic)
    over: bool = False  # it took the lock (a cancel after that changes nothing)
    cancelled: bool = False
    # a person's write asked for it (``cancellable``: a save), not an agent's turn nor ``cancellable_everywhere`` alone
    asked: bool = False

    @property
    def cancellable(self) -> bool:
        return bool(self.cancel)

    def stopped(self) -> bool:
        """Whether it was cancelled (here, or by one of its events)."""
        return self.cancelled or any(event.is_set() for event in self.cancel)

    def take(self) -> bool:
        """The lock was just taken: True when the wait ends so, False when it was cancelled first
        (the caller then lets the lock go, writing nothing)."""
        with _guard:
            if self.stopped():
                self.cancelled = True
                return False
            self.over = True
            return True

    def cancelled_error(self) -> WaitCancelled:
        from .db import flock_holders

        with _guard:
            self.cancelled = True
        return WaitCancelled(self.lock, flock_holders(self.lock))


def listen(listener: Listener, ended: Ended | None = None) -> Callable[[], None]:
    """Call ``listener`` (from the watching thread) once for each wait that lasts, and ``ended`` (from the
    waiting thread) when a wait it was told of is over, so what it said can go; returns their removal."""
    with _guard:
        _listeners.append(listener)
        if ended is not None:
            _ended.append(ended)

    def remove() -> None:
        with _guard, contextlib.suppress(ValueError):
            _listeners.remove(listener)
            if ended is not None:
                _ended.remove(ended)

    return remove


@contextlib.contextmanager
def cancellable(*events: threading.Event, asked: bool = True) -> Iterator[None]:
    """Within: this thread's wait for its first lock ends with ``WaitCancelled`` once one of ``events``
    is set (before the lock is taken: a write that holds it is never interrupted). ``asked``: the waits
    within are of a write a person asked for (a skin's quit asks before cancelling those, ``Wait.asked``);
    False for an agent's turn, which its own stop cancels, and a quit without a question."""
    before, was_asked = _thread.cancel, _thread.asked
    _thread.cancel = before + events
    _thread.asked = was_asked or (asked and bool(events))
    try:
        yield
    finally:
        _thread.cancel, _thread.asked = before, was_asked


def cancellable_everywhere(event: threading.Event) -> Callable[[], None]:
    """Make every thread's wait for its first lock end once ``event`` is set (a skin that quits: the
    TUI, whose workers and agent turns would otherwise keep it from exiting); returns its removal."""
    with _guard:
        _everywhere.append(event)

    def remove() -> None:
        with _guard, contextlib.suppress(ValueError):
            _everywhere.remove(event)

    return remove


@contextlib.contextmanager
def inner_waits_cancellable() -> Iterator[None]:
    """Within: a wait in a ``cancellable`` scope may be cancelled though this thread holds a lock; for a
    caller that undoes what it began when what it calls is refused (an approval abandons its row)."""
    before = _thread.held
    _thread.held = 0
    try:
        yield
    finally:
        _thread.held = before


@contextlib.contextmanager
def holding() -> Iterator[None]:
    """Around a lock this thread holds (``fileio.file_lock``): waits inside it are not cancelled, nor,
    within ``one_operation``, any wait after it."""
    _thread.held = _thread.held + 1
    begun = _thread.operation
    if begun is not None:
        begun[0] = True
    try:
        yield
    finally:
        _thread.held -= 1


@contextlib.contextmanager
def one_operation() -> Iterator[None]:
    """Around an operation of several steps that each take a lock and let it go (a Curator pass, a purge,
    a group revert): once its first lock is taken, no later wait of it is cancelled, so it never stops
    half done saying nothing was written. (Also a decorator.)"""
    if _thread.operation is not None:  # inside another: that one decides
        yield
        return
    _thread.operation = [False]
    try:
        yield
    finally:
        _thread.operation = None


@contextlib.contextmanager
def must_finish() -> Iterator[None]:
    """Within: this thread's waits are never cancelled (the last place something can be kept, workbench.db's
    ``kept.put``: cancelled, the messages it keeps would be lost)."""
    _thread.held = _thread.held + 1
    try:
        yield
    finally:
        _thread.held -= 1


def cancel_events() -> tuple[threading.Event, ...]:
    """The events that would end this thread's next wait (empty: it blocks): for a wait that is not a
    ``flock`` (a busy SQLite database, ``db.write_transaction``), which polls and checks them itself."""
    if _bound():
        return ()
    return (*_thread.cancel, *_everywhere)


def _bound() -> bool:
    """Whether this thread's next wait must not be cancelled: it holds a lock, or an operation of it has
    taken one (``one_operation``)."""
    begun = _thread.operation
    return bool(_thread.held) or bool(begun and begun[0])


@contextlib.contextmanager
def waiting(lock: Path) -> Iterator[Wait]:
    """Around a wait for ``lock``; the ``Wait`` says whether it may be cancelled (then it is polled)."""
    global _watcher
    bound = _bound()
    asked: tuple[threading.Event, ...] = () if bound else _thread.cancel
    cancel = () if bound else (*asked, *_everywhere)
    wait = Wait(lock, cancel, asked=bool(asked) and _thread.asked)
    _thread.interrupted = None
    key = id(wait)
    with _guard:
        listened = bool(_listeners)
        kept = listened or wait.cancellable
        if kept:
            _waits[key] = wait
        if listened and (_watcher is None or not _watcher.is_alive()):
            _watcher = threading.Thread(target=_watch, name="lock-waits", daemon=True)
            _watcher.start()
    try:
        yield wait
    except KeyboardInterrupt:  # ctrl+c in the CLI: the command stops, and says it stopped waiting here
        _thread.interrupted = wait
        raise
    finally:
        if kept:
            with _guard:
                _waits.pop(key, None)
                said = key in _said
                _said.discard(key)
                ended = list(_ended) if said else []
            for tell in ended:
                with contextlib.suppress(Exception):  # (as for the listeners: the wait's end goes on)
                    tell(lock, wait.over)


def interrupted() -> Wait | None:
    """The wait this thread was in when ctrl+c stopped it (the lock was never taken), if it was in one."""
    return _thread.interrupted


def describe_interrupted(wait: Wait) -> str:
    """The CLI's one line after ctrl+c stopped a wait: nothing was written by it."""
    from .db import flock_holders

    holders = flock_holders(wait.lock)
    who = f"process {', '.join(holders)}" if holders else "another process"
    return f"stopped waiting for {wait.lock} ({who} held it): nothing was written, nothing changed."


def under_way() -> list[Wait]:
    """The waits under way now that are listened to or cancellable (a skin's quit asks about these)."""
    with _guard:
        return [wait for wait in _waits.values() if not wait.over and not wait.cancelled]


def cancel(waits: list[Wait]) -> list[Wait]:
    """Cancel those of ``waits`` that are cancellable and still waiting; returns them (the others took
    their lock meanwhile, or block). Each ends with ``WaitCancelled`` within ``POLL_S``."""
    done = []
    with _guard:
        for wait in waits:
            if wait.cancellable and not wait.over and not wait.cancelled:
                wait.cancelled = True
                done.append(wait)
    return done


def describe(lock: Path, holders: list[str]) -> str:
    """A lasting wait in words, for people (the one message both skins show)."""
    who = f"process {', '.join(holders)}" if holders else "another process"
    return (
        f"Waiting for {lock}: {who} holds it. The write goes on once it is free; nothing is lost "
        "or written twice (Hermes holds this lock only for each of its own writes)."
    )


def _watch() -> None:
    from .db import flock_holders

    while True:
        time.sleep(NOTICE_AFTER_S / 4)
        now = time.monotonic()
        with _guard:
            due = [
                (key, wait.lock)
                for key, wait in _waits.items()
                if key not in _said and now - wait.began >= NOTICE_AFTER_S
            ]
            _said.update(key for key, _ in due)
            listeners = list(_listeners)
        for _, lock in due:
            holders = flock_holders(lock)
            for listener in listeners:
                with contextlib.suppress(Exception):  # a skin's trouble never stops the wait it reports
                    listener(lock, holders)
