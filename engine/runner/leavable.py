"""A model call that a turn's stop can leave at once.

esc waited for the model: up to ``model.timeout`` per try, and every retry after it, with the bar
saying "cancelling…" all along. Hermes's interruptible API call runs the request in a thread and
abandons it on an interrupt; so does this.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

POLL = 0.1  # seconds between looks at the stop (Hermes looks every 0.3 s)


def unless_stopped(call: Callable[[], T], stop: threading.Event) -> T | None:
    """``call()``'s result, or its exception; None as soon as ``stop`` is set before it ends (the call
    goes on in its daemon thread, and what it returns is dropped)."""
    box: dict[str, object] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["result"] = call()
        except BaseException as exc:  # (raised again in the caller's thread)
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="model-call", daemon=True).start()
    while not done.wait(POLL):
        if stop.is_set():
            return None
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["result"]  # type: ignore[return-value]
