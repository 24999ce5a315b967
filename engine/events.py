"""The engine's event bus: typed events, published after a change is on disk.

Publishing is synchronous on the writer's thread; the TUI forwards events to the UI
thread itself. A subscriber that raises is logged and skipped, never breaking a write.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Event:
    """Base of every engine event. ``journal_id`` links to the journal row, if any."""

    actor: str = "agent"
    session_id: str | None = None
    journal_id: int | None = None


@dataclass(frozen=True)
class MemoryChanged(Event):
    target: str = "memory"  # "memory" or "user"
    action: str = ""  # add / replace / remove / batch / undo / external / credit (an outside row now the agent's)
    before: str | None = None
    after: str | None = None


@dataclass(frozen=True)
class SessionChanged(Event):
    """A session row was created, ended, renamed, archived, pruned or deleted."""

    action: str = ""
    parent_session_id: str | None = None


@dataclass(frozen=True)
class MessageStored(Event):
    """One stored turn: ``message_ids`` in order; ``message_id`` and ``role`` are its last message's."""

    message_id: int | None = None
    role: str = ""
    message_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class SkillChanged(Event):
    name: str = ""
    # create / patch / edit / delete / write_file / remove_file / archive / restore / pin / unpin / purge / rollback,
    # mark_stale / reactivate (Curator run), view / use (usage counters only)
    action: str = ""


@dataclass(frozen=True)
class PendingChanged(Event):
    subsystem: str = ""  # "memory" or "skills"
    pending_id: str = ""
    action: str = ""  # staged / approved / rejected / failed / restored (a rejection undone)


@dataclass(frozen=True)
class FactsChanged(Event):
    """The ``local`` provider's fact store changed: fact_add / fact_merge / fact_forget / fact_reword."""

    action: str = ""
    fact_id: int | None = None


@dataclass(frozen=True)
class ConfigChanged(Event):
    """config.yaml changed on disk: the dotted ``keys`` now in use, or the ``error`` that kept it out."""

    keys: tuple[str, ...] = ()
    error: str = ""

    @property
    def message(self) -> str:
        if self.error:
            return f"config.yaml was not taken: {self.error} The settings in use stay as they were."
        shown = ", ".join(self.keys[:6]) + (f" and {len(self.keys) - 6} more" if len(self.keys) > 6 else "")
        return (
            f"config.yaml changed ({shown}). Writes and turns follow it from now on; the model and the "
            "memory provider from the next session."
        )


@dataclass(frozen=True)
class JournalChanged(Event):
    """workbench.db was written by another connection (``HomeWatcher``): a row journaled or credited to its
    Hermes call by another workbench process, which no file of the home shows."""

    actor: str = "external"


@dataclass(frozen=True)
class KeptStored(Event):
    """Messages workbench.db kept for state.db were stored in it (``Home.store_kept``): what to say is
    taken from ``Home.take_kept_stored``, so each is said once whoever hears first."""

    actor: str = "workbench"


@dataclass(frozen=True)
class RunnerEvent(Event):
    """Progress of the agent runner: turn_started, assistant_delta (streamed text),
    assistant_message, tool_called, tool_result, message_stored, turn_finished,
    session_rotated, flush_started, flush_finished, review_started, review_finished, review_settled (its
    thread has let go of it, after review_finished), unbacked_claim, warning, error, cancelled,
    messages_kept. ``actor`` is "review" for a background review's events; ``data`` holds what a
    transcript needs (see engine/runner/session.py)."""

    kind: str = ""
    data: dict[str, Any] = field(default_factory=dict)


Subscriber = Callable[[Event], None]


class EventBus:
    """Thread-safe publish/subscribe over ``Event`` types."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscribers: list[tuple[type[Event], Subscriber]] = []

    def subscribe(self, callback: Subscriber, kind: type[Event] = Event) -> Callable[[], None]:
        """Call ``callback`` for every published event that is an instance of ``kind``.

        Returns a function that removes the subscription.
        """
        entry = (kind, callback)
        with self._lock:
            self._subscribers.append(entry)

        def unsubscribe() -> None:
            with self._lock:
                if entry in self._subscribers:
                    self._subscribers.remove(entry)

        return unsubscribe

    def publish(self, event: Event) -> None:
        with self._lock:
            targets = [cb for kind, cb in self._subscribers if isinstance(event, kind)]
        for callback in targets:
            try:
                callback(event)
            except Exception:  # a broken listener must never break a write
                log.exception("event subscriber failed on %r", event)
