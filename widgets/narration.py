"""The demo's narration: one slim line that tells the story as the engine's events arrive.

``Narrator`` turns events into lines, each said once ("memory just passed 80%: …"); it
is fed only while ``workbench demo`` plays, so the line never shows outside the demo.
``NarrationLine`` shows the newest line; a click (or the app's key) hides it for good.
"""

from __future__ import annotations

import threading

from textual.events import Click
from textual.message import Message
from textual.widgets import Static

from engine.events import Event, MemoryChanged, PendingChanged, RunnerEvent

from .literal import literal

WARN_RATIO = 0.8


class Narrator:
    """Story lines for engine events; ``usage(target)`` gives (chars, limit) of a store."""

    def __init__(self, usage) -> None:
        self.usage = usage
        self.said: set[str] = set()
        self._lock = threading.Lock()  # events are narrated in parallel workers

    def line(self, event: Event, session_running: bool) -> str | None:
        """The line ``event`` earns (worker thread: it may read a memory file), or None."""
        for key, text in self._candidates(event, session_running):
            with self._lock:
                if key in self.said:
                    continue
                self.said.add(key)
            return text
        return None

    def _candidates(self, event: Event, session_running: bool):
        if isinstance(event, MemoryChanged):
            chars, limit = self.usage(event.target)
            name = event.target.upper()
            if limit and chars / limit >= WARN_RATIO:
                yield (
                    f"full:{event.target}",
                    f"{name} just passed 80% of its limit ({chars:,}/{limit:,}): the gauge on 1 turns amber.",
                )
            if session_running and event.actor == "agent":
                yield ("drift", "The frozen snapshot no longer matches live memory: press 1 to compare them.")
        elif isinstance(event, RunnerEvent) and event.kind == "session_rotated":
            yield ("compression", "A compression created a child session: press 2 to see it in the lineage.")
        elif isinstance(event, PendingChanged) and event.action == "staged":
            if event.subsystem == "skills":
                who = {"review": "The review", "curator": "The Curator"}.get(event.actor, "The agent")
                yield ("skill", f"{who} proposed a skill change: press 4 to approve it.")
            else:
                yield ("pending", "A memory write waits for approval: press 4 to review it.")


class NarrationLine(Static):
    """The newest narration, hidden while there is none; a click dismisses the narration."""

    DEFAULT_CSS = """
    NarrationLine { height: 1; padding: 0 1; background: $accent 20%; color: $foreground;
                    text-wrap: nowrap; text-overflow: ellipsis; }
    """

    class Dismissed(Message):
        """The user clicked the line away."""

    def say(self, text: str) -> None:
        self.update(literal(f"f3 ✕  ▸ {text}") if text else "")  # the key first: a narrow line cuts the end
        self.display = bool(text)

    def on_mount(self) -> None:
        self.display = False

    def on_click(self, event: Click) -> None:
        event.stop()
        self.post_message(self.Dismissed())
