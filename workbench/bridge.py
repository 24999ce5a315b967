"""Engine events -> Textual Messages on the UI thread.

The engine publishes on whatever thread wrote; ``EngineBridge`` subscribes to the bus
and posts each event to the app as an ``EngineEvent`` message (``post_message`` is
thread-safe), so widgets are only ever touched on the UI thread.
"""

from __future__ import annotations

from typing import Callable

from textual.app import App
from textual.message import Message

from engine.events import Event, EventBus


class EngineEvent(Message):
    """One engine event (or a change another process made), delivered to the app."""

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event


class EngineBridge:
    """Forwards every bus event to ``app``; ``close()`` stops forwarding."""

    def __init__(self, app: App, bus: EventBus):
        self._app = app
        self._unsubscribe: Callable[[], None] | None = bus.subscribe(self.forward)

    def forward(self, event: Event) -> None:
        self._app.post_message(EngineEvent(event))

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
