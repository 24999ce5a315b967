"""Engine events -> Textual Messages on the UI thread.

The engine publishes on whatever thread wrote; ``EngineBridge`` subscribes to the bus
and posts each event to the app as an ``EngineEvent`` message (``post_message`` is
thread-safe), so widgets are only ever touched on the UI thread.

It also keeps the Memory screen's frozen side true to the running session's prompt.
The prompt a session stores in state.db holds the memory blocks exactly as the model
sees them, so once the session row exists (at once for a resumed session, after the
first stored message for a new one) the snapshot is read back from it. Until then, and
after an in-place compression, a snapshot is taken on the runner's own thread before the
runner goes on, so a write the agent makes a moment later never leaks into it. A session the
Run screen resumes is read back at once (``resumed``), before its first turn.

The snapshot's time (``taken_at``, the Memory screen's "frozen" time, and the journal's ``since`` that
lines blocked entries up) is when the prompt in use froze memory: the runner's events say so
(``prompt_at``: a resumed session whose stored prompt was missing froze it at the resume, not when
it first started), else the time this workbench recorded when it stored that prompt
(``stored_prompt_frozen_at``). A prompt someone else stored (Hermes, which also rebuilds one on a
resume) has no such time: the snapshot says so (``time_known`` False, the session's start as a
lower bound) and rules no journaled entry out of it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.app import App
from textual.message import Message

from engine.errors import WorkbenchError
from engine.events import Event, RunnerEvent
from engine.memory.snapshot import (
    MemorySnapshot,
    prompt_frozen_after,
    snapshot_from_prompt,
    stored_prompt_frozen_at,
)

if TYPE_CHECKING:
    from engine.home import Home


log = logging.getLogger(__name__)


class EngineEvent(Message):
    """One engine event (or a change another process made), delivered to the app."""

    def __init__(self, event: Event, snapshot: MemorySnapshot | None = None) -> None:
        super().__init__()
        self.event = event
        self.snapshot = snapshot  # set when the running session's frozen memory is (newly) known


class EngineBridge:
    """Forwards every bus event of ``home`` to ``app``; ``close()`` stops forwarding."""

    def __init__(self, app: App, home: Home):
        self._app = app
        self._home = home
        self._session: str | None = None
        self._from_prompt = False  # the current session's snapshot was read from its stored prompt
        self._prompt_at: float | None = None  # when the current session's prompt froze memory (its runner says)
        self._unsubscribe: Callable[[], None] | None = home.bus.subscribe(self.forward)

    def forward(self, event: Event) -> None:
        snapshot = None
        if isinstance(event, RunnerEvent) and event.session_id:
            try:
                snapshot = self._session_snapshot(event)
            except WorkbenchError as exc:  # an unreadable state.db: the event still arrives, the reason is said
                log.warning("%s", exc.message)
        self._app.post_message(EngineEvent(event, snapshot))

    def resumed(self, session_id: str) -> None:
        """Worker thread: Run resumed ``session_id``. The app hears it as a ``session_resumed`` runner
        event of the user's, with the snapshot its stored prompt holds (never on the engine's bus:
        nothing ran)."""
        self.forward(RunnerEvent(actor="user", session_id=session_id, kind="session_resumed"))

    def _session_snapshot(self, event: RunnerEvent) -> MemorySnapshot | None:
        """Publisher's thread: a new frozen snapshot when this event tells of one, else None."""
        rotated = event.kind == "session_rotated"
        # (a resume is fresh even of the session last shown: left and resumed again, its row may hold a prompt now)
        fresh = event.session_id != self._session or rotated or event.kind == "session_resumed"
        if fresh:
            self._session, self._from_prompt, self._prompt_at = event.session_id, False, None
        said_at = event.data.get("prompt_at")
        if isinstance(said_at, (int, float)) and not isinstance(said_at, bool) and said_at != self._prompt_at:
            known = self._prompt_at is not None
            self._prompt_at = float(said_at)
            if known or self._from_prompt:  # read with another time (the row's): read again with this one
                self._from_prompt = False
        if fresh:
            if rotated and event.data.get("in_place"):  # the stored row keeps the old prompt
                self._from_prompt = True
                return self._home.memory.snapshot()
            return self._stored() or self._home.memory.snapshot()
        return None if self._from_prompt else self._stored()

    def _stored(self) -> MemorySnapshot | None:
        session = self._home.archive.get_session(self._session)
        if session is None or not session.system_prompt:
            return None
        self._from_prompt = True
        taken_at = self._prompt_at or stored_prompt_frozen_at(self._home, session)  # None: not known
        return snapshot_from_prompt(self._home, session.system_prompt, taken_at, after=prompt_frozen_after(session))

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
