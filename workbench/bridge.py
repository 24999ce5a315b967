"""Engine events -> Textual Messages on the UI thread.

The engine publishes on whatever thread wrote; ``EngineBridge`` subscribes to the bus
and posts each event to the app as an ``EngineEvent`` message (``post_message`` is
thread-safe), so widgets are only ever touched on the UI thread.

When a session starts its first turn or is rebuilt by compression, its prompt holds a
fresh memory snapshot. The bridge takes the Memory screen's copy right then, on the
runner's own thread before the runner goes on, so a write the agent makes a moment
later can never leak into the "frozen" side.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from textual.app import App
from textual.message import Message

from engine.events import Event, RunnerEvent

if TYPE_CHECKING:
    from engine.home import Home
    from engine.memory.snapshot import MemorySnapshot


class EngineEvent(Message):
    """One engine event (or a change another process made), delivered to the app."""

    def __init__(self, event: Event, snapshot: "MemorySnapshot | None" = None) -> None:
        super().__init__()
        self.event = event
        self.snapshot = snapshot  # set when a session's prompt just froze memory


class EngineBridge:
    """Forwards every bus event of ``home`` to ``app``; ``close()`` stops forwarding."""

    def __init__(self, app: App, home: "Home"):
        self._app = app
        self._home = home
        self._session: str | None = None
        self._unsubscribe: Callable[[], None] | None = home.bus.subscribe(self.forward)

    def forward(self, event: Event) -> None:
        snapshot = None
        if isinstance(event, RunnerEvent) and event.session_id and (
                event.kind == "session_rotated" or event.session_id != self._session):
            self._session = event.session_id
            snapshot = self._home.memory.snapshot()
        self._app.post_message(EngineEvent(event, snapshot))

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
