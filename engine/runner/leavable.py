"""A model call that a turn's stop can leave at once.

esc waited for the model: up to ``model.timeout`` per try, and every retry after it, with the bar
saying "cancelling…" all along. Hermes's interruptible API call runs the request in a thread and
abandons it on an interrupt; so does this.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ..models.base import leavable_here

T = TypeVar("T")

POLL = 0.1  # seconds between looks at the stop (Hermes looks every 0.3 s)


class Left(Exception):
    """Raised in a call's thread by ``Leaving.unless_left`` once its caller has left it."""


class Leaving:
    """Whether a call's caller has left it. What the call still does for its caller (show a streamed
    piece) goes through ``unless_left``: the next turn clears the stop, so a look at the stop alone
    would let an old stream's pieces show in that turn."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # a step under way ends before the caller moves on
        self._left = False

    def leave(self) -> None:
        with self._lock:
            self._left = True

    def left(self) -> bool:
        return self._left

    def unless_left(self, step: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        """``step(*args, **kwargs)`` while the caller is still there; raises ``Left`` once it is not."""
        with self._lock:
            if self._left:
                raise Left()
            step(*args, **kwargs)


def unless_stopped(call: Callable[[Leaving], T], stop: threading.Event) -> T | None:
    """``call(leaving)``'s result, or its exception; None as soon as ``stop`` is set before it ends (the
    call goes on in its daemon thread, ``leaving`` says it was left, and what it returns is dropped). The
    call is left however the wait ends: a KeyboardInterrupt in it, too."""
    box: dict[str, object] = {}
    done = threading.Event()
    leaving = Leaving()

    def run() -> None:
        leavable_here(leaving.left)  # (a model's retry after the turn left is for no one)
        try:
            box["result"] = call(leaving)
        except BaseException as exc:  # (raised again in the caller's thread)
            box["error"] = exc
        finally:
            done.set()

    try:
        threading.Thread(target=run, name="model-call", daemon=True).start()
        while not done.wait(POLL):
            if stop.is_set():
                return None
    finally:  # (ctrl+c too: KeyboardInterrupt ends the wait, and the call is left as on a stop)
        leaving.leave()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["result"]  # type: ignore[return-value]
