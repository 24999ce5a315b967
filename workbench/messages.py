"""Messages screens send each other through the app."""

from __future__ import annotations

from typing import cast

from textual.message import Message
from textual.message_pump import MessagePump
from textual.worker import NoActiveWorker, Worker, get_current_worker


class JumpToMessage(Message):
    """Show this session's message (the Sessions screen handles it; posted to the app,
    which switches to Sessions and re-posts it to that screen)."""

    def __init__(self, session_id: str, message_id: int | None) -> None:
        super().__init__()
        self.session_id = session_id
        self.message_id = message_id


class ResumeSession(Message):
    """Talk on in this session on the Run screen (posted to the app, which switches to Run and re-posts
    it to that screen): the Sessions screen's R, so a session found there needs no id typed in ctrl+o."""

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id


class ShowEntry(Message):
    """Select this memory entry on the Memory screen (posted to that screen by the app)."""

    def __init__(self, target: str, text: str) -> None:
        super().__init__()
        self.target = target
        self.text = text


class ShowSkill(Message):
    """Select this skill on the Skills screen (posted to that screen by the Timeline): the one in folder
    ``path`` (under skills/) while it is listed, else the one its name finds (the active one first)."""

    def __init__(self, name: str, path: str | None = None) -> None:
        super().__init__()
        self.name = name
        self.path = path


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


class WorkerResult(Message, bubble=False):
    """A thread worker's answer on its way to the UI thread, where it is checked (``ResultsFromWorkers``)."""

    def __init__(self, message: Message) -> None:
        super().__init__()
        try:
            self.worker: Worker | None = get_current_worker()
        except NoActiveWorker:  # posted from the UI thread: nothing can supersede it
            self.worker = None
        self.message = message


class ResultsFromWorkers:
    """Mixed in before a screen, widget or app whose thread workers answer through ``post_result``.

    A worker in an exclusive group is cancelled when the next one starts, but its thread
    runs on and posts its answer, which on a busy machine can arrive after the newer
    one's: the older data would be shown last (a finished scenario's transcript once
    ended at its second turn). Cancelling happens on the UI thread, so an answer checked
    there on arrival is dropped exactly when a newer run superseded it.
    """

    def post_result(self, message: Message) -> None:
        """From a worker: hand ``message`` to the UI thread, unless a newer run of its group comes first."""
        cast(MessagePump, self).post_message(WorkerResult(message))

    def on_worker_result(self, result: WorkerResult) -> None:
        if result.worker is None or not result.worker.is_cancelled:
            cast(MessagePump, self).post_message(result.message)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker here that failed is reported as the app's own are: Textual tells only the worker's
        screen or widget, so an error no worker caught (a damaged state.db read) went unsaid, and the
        view stayed as it was."""
        app = cast(MessagePump, self).app
        report = getattr(app, "on_worker_state_changed", None)
        if report is not None and app is not self:  # (Textual runs the app's own handler and this one both)
            report(event)
