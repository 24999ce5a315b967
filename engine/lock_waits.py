"""Waits on a file lock another process holds, said once they have lasted a second.

Hermes takes a memory file's lock for each write and waits for it without a time limit, as
the workbench does (a write must never be dropped). A wait that lasts (a process stuck
mid-write) left a command printing nothing and the TUI's save or turn silent; the skins
``listen`` here and say who holds the lock. A contended lock costs one dict entry: one
thread, started with the first listener's first long wait, looks at the waits four times a
second.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

NOTICE_AFTER_S = 1.0

Listener = Callable[[Path, list[str]], None]  # (the lock file, its holders as "pid (command)")

_listeners: list[Listener] = []
_waits: dict[int, tuple[Path, float]] = {}  # a wait's id -> (its lock file, when it began)
_said: set[int] = set()
_guard = threading.Lock()
_watcher: threading.Thread | None = None


def listen(listener: Listener) -> Callable[[], None]:
    """Call ``listener`` (from the watching thread) once for each wait that lasts; returns its removal."""
    with _guard:
        _listeners.append(listener)

    def remove() -> None:
        with _guard, contextlib.suppress(ValueError):
            _listeners.remove(listener)

    return remove


@contextlib.contextmanager
def waiting(lock: Path) -> Iterator[None]:
    """Around a blocking wait for ``lock``."""
    global _watcher
    key = id(object())
    with _guard:
        listened = bool(_listeners)
        if listened:
            _waits[key] = (lock, time.monotonic())
            if _watcher is None or not _watcher.is_alive():
                _watcher = threading.Thread(target=_watch, name="lock-waits", daemon=True)
                _watcher.start()
    try:
        yield
    finally:
        if listened:
            with _guard:
                _waits.pop(key, None)
                _said.discard(key)


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
                (key, lock)
                for key, (lock, began) in _waits.items()
                if key not in _said and now - began >= NOTICE_AFTER_S
            ]
            _said.update(key for key, _ in due)
            listeners = list(_listeners)
        for _, lock in due:
            holders = flock_holders(lock)
            for listener in listeners:
                with contextlib.suppress(Exception):  # a skin's trouble never stops the wait it reports
                    listener(lock, holders)
