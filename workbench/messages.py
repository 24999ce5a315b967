"""Messages screens send each other through the app."""

from __future__ import annotations

from textual.message import Message
from textual.message_pump import MessagePump
from textual.worker import NoActiveWorker, get_current_worker


class JumpToMessage(Message):
    """Show this session's message (the Sessions screen handles it; posted to the app,
    which switches to Sessions and re-posts it to that screen)."""

    def __init__(self, session_id: str, message_id: int | None) -> None:
        super().__init__()
        self.session_id = session_id
        self.message_id = message_id


class ShowEntry(Message):
    """Select this memory entry on the Memory screen (posted to that screen by the app)."""

    def __init__(self, target: str, text: str) -> None:
        super().__init__()
        self.target = target
        self.text = text


class ShowSkill(Message):
    """Select this skill on the Skills screen (posted to that screen by the Timeline)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name


class ShowProposal(Message):
    """Select this pending proposal on the Approvals screen (posted to that screen by the Timeline)."""

    def __init__(self, pending_id: str) -> None:
        super().__init__()
        self.pending_id = pending_id


class AfterEngineEvents(Message):
    """Posted to the app from a worker thread: the app hands ``message`` to ``target`` after every
    engine event that thread posted before it (the app's queue is first in, first out, and so is
    the line of callbacks the engine-event signal gives a screen).

    A Run screen's turn ends this way, so no runner event of the turn reaches the screen after
    the screen has taken the turn as over."""

    def __init__(self, target: MessagePump, message: Message) -> None:
        super().__init__()
        self.target = target
        self.message = message


class WorkerAnswer(Message):
    """A thread worker's result, which knows whether a newer request replaced it.

    A worker in an exclusive group is cancelled when the next one starts, but its thread
    runs on and posts its answer, which can then arrive after the newer one's (a busy
    machine, a slow read): the screen would show the older data last. Cancelling happens
    on the UI thread, so a handler that drops ``superseded`` answers never shows one."""

    def __post_init__(self) -> None:
        super().__post_init__()
        try:
            self._worker = get_current_worker()
        except NoActiveWorker:  # posted from the UI thread: nothing can replace it
            self._worker = None

    @property
    def superseded(self) -> bool:
        return self._worker is not None and self._worker.is_cancelled
