"""The demo's narration: one slim line that tells the story as the engine's events arrive.

``Narrator`` turns events into stories, each told once ("memory just passed 80%: …"); it
is fed only while ``workbench demo`` plays, so the line never shows outside the demo.
``NarrationLine`` shows the newest, worded for the screen it is read on (no "press 1"
while on 1); a click (or the app's key) hides it for good.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from textual.events import Click
from textual.message import Message
from textual.widgets import Static

from engine.events import Event, MemoryChanged, PendingChanged, RunnerEvent

from .literal import literal

WARN_RATIO = 0.8


@dataclass(frozen=True)
class Story:
    """A narration line: ``away`` points to the screen ``mode`` (press N); ``here`` is what it says on it."""

    away: str
    mode: str = ""
    here: str = ""

    def on(self, mode: str) -> str:
        return self.here if mode == self.mode and self.here else self.away


class Narrator:
    """Story lines for engine events; ``usage(target)`` gives (chars, limit) of a store."""

    def __init__(self, usage) -> None:
        self.usage = usage
        self.said: set[str] = set()
        self._lock = threading.Lock()  # events are narrated in parallel workers

    def line(self, event: Event, session_running: bool) -> Story | None:
        """The story ``event`` earns (worker thread: it may read a memory file), or None."""
        for key, story in self._candidates(event, session_running):
            with self._lock:
                if key in self.said:
                    continue
                self.said.add(key)
            return story
        return None

    def _candidates(self, event: Event, session_running: bool):
        if isinstance(event, MemoryChanged):
            chars, limit = self.usage(event.target)
            name = event.target.upper()
            if limit and chars / limit >= WARN_RATIO:
                full = f"{name} just passed 80% of its limit ({chars:,}/{limit:,})"
                yield (
                    f"full:{event.target}",
                    Story(f"{full}: the gauge on 1 turns amber.", "memory", f"{full}: its gauge turns amber."),
                )
            if session_running and event.actor == "agent":
                drift = "The frozen snapshot no longer matches live memory"
                yield ("drift", Story(f"{drift}: press 1 to compare them.", "memory", f"{drift}: compare the columns."))
        elif isinstance(event, RunnerEvent) and event.kind == "session_rotated":
            rotated = "A compression created a child session"
            yield ("compression", Story(f"{rotated}: press 2 to see it in the lineage.", "sessions", f"{rotated}."))
        elif isinstance(event, PendingChanged) and event.action == "staged":
            if event.subsystem == "skills":
                who = {"review": "The review", "curator": "The Curator"}.get(event.actor, "The agent")
                proposed = f"{who} proposed a skill change"
                yield (
                    "skill",
                    Story(f"{proposed}: press 4 to approve it.", "approvals", f"{proposed}: approve it here."),
                )
            else:
                waits = "A memory write waits for approval"
                yield ("pending", Story(f"{waits}: press 4 to review it.", "approvals", f"{waits}: review it here."))


class NarrationLine(Static):
    """The newest narration, hidden while there is none; a click dismisses the narration."""

    DEFAULT_CSS = """
    NarrationLine { height: 1; padding: 0 1; background: $accent 20%; color: $foreground;
                    text-wrap: nowrap; text-overflow: ellipsis; }
    """

    class Dismissed(Message):
        """The user clicked the line away."""

    def __init__(self, mode: str = "") -> None:
        super().__init__()
        self.mode = mode  # the screen this line is on, which a story's wording follows

    def say(self, story: Story | None) -> None:
        text = story.on(self.mode) if story else ""
        self.update(literal(f"f3 ✕  ▸ {text}") if text else "")  # the key first: a narrow line cuts the end
        self.display = bool(text)

    def on_mount(self) -> None:
        self.display = False

    def on_click(self, event: Click) -> None:
        event.stop()
        self.post_message(self.Dismissed())
