"""A person's conversation with the agent, from opening a session to ending it.

``workbench run``, the TUI's Run screen and scenarios all talk to the agent through a
``Conversation``: it opens a new session or resumes one named by id, unique id prefix or
title (``archive.find_session``; one that had ended is reopened at once, as Hermes's
``/resume`` reopens it), runs turns, switches session, and ends every session
it leaves with a reason, as Hermes's CLI does: ``cli_close`` when the user quits, and,
the moment a switch leaves it, ``new_session`` for a new one (``/new``) or
``resumed_other`` for another (``/resume``): ``leaving_reason``, the one place that
rule lives, for every skin.
What state.db will not take as a session is left (busy past the timeout) is kept in
workbench.db, with that end, and stored by the next workbench process (``engine.kept``).
A scenario's config overlay is given to the conversation, whose stores alone see it.

Models belong to the caller (a scenario plays one across several sessions): a
conversation never closes one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .events import RunnerEvent
from .runner.session import CLOSE_REASON, NEW_SESSION_REASON, RESUMED_OTHER_REASON, AgentSession, TurnResult

if TYPE_CHECKING:
    from .home import Home
    from .kept import Kept
    from .models.base import Model


class Conversation:
    """Runs turns in one session at a time and ends each session it leaves.

    Not thread-safe except ``cancel()``: one thread drives it (a worker, in the TUI).
    """

    def __init__(
        self,
        home: Home,
        model: Model,
        *,
        session: str | None = None,
        title: str | None = None,
        source: str = "cli",
        config: dict[str, Any] | None = None,
        config_given_by: str | None = None,
        on_event: Callable[[RunnerEvent], None] | None = None,
        background_review: bool = True,
        step_delay: float = 0.0,
        cancel_event: threading.Event | None = None,
    ):
        self.home = home.with_config(config, config_given_by) if config else home
        resumed = home.archive.find_session(session).id if session else None
        self.agent = AgentSession(
            self.home,
            model,
            session_id=resumed,
            title=title,
            source=source,
            on_event=on_event,
            background_review=background_review,
            step_delay=step_delay,
            cancel_event=cancel_event,
        )
        self.ended = False

    @property
    def id(self) -> str:
        return self.agent.id

    def run_turn(self, text: str, said_at: float | None = None) -> TurnResult:
        return self.agent.run_turn(text, said_at)

    @property
    def unstored(self) -> int:
        """Messages state.db does not hold yet (it was busy when the turn ended)."""
        return self.agent.unstored

    def store(self) -> None:
        """Store what state.db does not hold yet; raises as storing a turn does (state.db busy, say)."""
        self.agent.flush()

    def compress(self) -> bool:
        """Compress the context now (a scenario's ``compress`` step)."""
        return self.agent.maybe_compress(force=True)

    def cancel(self) -> None:
        """Stop the running turn at its next safe point (any thread)."""
        self.agent.cancel()

    @property
    def stop_event(self) -> threading.Event:
        """Set once the running turn is asked to stop (``cancel``): a skin that lets a turn's waits for
        a lock be cancelled runs the turn in ``lock_waits.cancellable(stop_event)``."""
        return self.agent.cancel_event

    @classmethod
    def resuming(cls, home: Home, model: Model, session_id: str | None, **options: Any) -> Conversation:
        """A conversation in the stored session whose id is ``session_id`` (None: a new one). One deleted
        since it was chosen is said, and a new session takes the talk, as ``switch_session`` does."""
        gone = _deleted(home, session_id)
        conversation = cls(home, model, session=None if gone else session_id, **options)
        if gone:
            conversation._say_gone(gone)
        return conversation

    @property
    def live_warning(self) -> str | None:
        """Said before anything is written when the session resumed had not ended (shown as live): another
        Hermes may be writing to it. This conversation writes to it too but never ends it (``live_before``)."""
        return live_warning(self.agent.id) if self.agent.live_before else None

    @property
    def archived_note(self) -> str | None:
        """Said as the session is resumed when it is archived: it stays so (``archived_note``)."""
        return archived_note(self.agent.id) if self.agent.archived else None

    @property
    def reopened_note(self) -> str | None:
        """Said as the session is resumed when it had ended: this conversation reopens it (its first write
        at the latest) and ends it again when it is left, with an end reason of its own."""
        reason = self.agent.ended_before
        return reopened_note(self.agent.id, reason) if reason is not None else None

    @property
    def live_archived_note(self) -> str | None:
        """Said in place of both ``live_warning`` and ``archived_note`` by a skin with little room (the
        TUI's one notice) when the session resumed is live and archived (``live_archived_note``)."""
        return live_archived_note(self.agent.id) if self.agent.live_before and self.agent.archived else None

    def switch_session(self, session: str | None = None) -> str:
        """Leave this session for a new one, or for the stored session whose id is ``session`` (at the
        newest segment of its compression chain), ending it at once as Hermes's ``/new`` or ``/resume``
        does (``leaving_reason``): a session never written is not made, and one ended or deleted
        meanwhile (by Hermes, say) keeps its end or stays gone. Resuming the session it is in changes
        nothing. One chosen and deleted since is said, and a new session takes its place: never another
        whose id or title it also reads as. What state.db will not take of the session left is kept
        for later (``AgentSession.keep``); a state.db that will not take the end raises, and the
        conversation stays where it was."""
        gone = _deleted(self.home, session)
        if session is not None and not gone and self.home.archive.tip_of(session) == self.agent.id:
            return self.agent.id
        self.agent.switch_session(None if gone else session, leaving_reason(session))  # the provider hears it
        if gone:
            self.agent.emit(
                "warning",
                message=f"Session {gone} was deleted; your next message starts a new session.",
                old_session_id=gone,
            )
        return self.agent.id

    def _say_gone(self, session_id: str) -> None:
        self.agent.emit(
            "warning",
            message=f"Session {session_id} was deleted; this message starts a new session.",
            old_session_id=session_id,
        )

    def keep(self, why: str) -> Kept | None:
        """Keep what state.db did not take (``why``) in workbench.db, to be stored and the session ended
        by the next workbench process that finds state.db free; raises when workbench.db cannot take it."""
        return self.agent.keep(CLOSE_REASON, why)

    def leave(self) -> None:
        """Stop without storing what state.db did not take, and without waiting for it (once)."""
        if not self.ended:
            self.ended = True
            self.agent.leave()

    def end(self, reason: str = CLOSE_REASON) -> Kept | None:
        """Store what is left, wait for the reviews and end the session (once); what state.db would not
        take is kept in workbench.db for later, and returned."""
        if self.ended:
            return None
        self.ended = True
        return self.agent.end(reason)


def live_warning(session_id: str) -> str:
    """The one wording, for every skin, of resuming a session that had not ended."""
    return (
        f"Session {session_id} has not ended (it is live): another Hermes may be writing to it. Your messages "
        "go into it as well, and leaving it here does not end it."
    )


def reopened_note(session_id: str, reason: str) -> str:
    """The one wording, for every skin, of resuming a session that had ended."""
    return f"Session {session_id} had ended ({reason}): it is reopened here, and leaving it here ends it again."


def archived_note(session_id: str) -> str:
    """The one wording, for every skin, of resuming an archived session. It stays archived, as Hermes's
    ``/resume`` leaves it: the user archived it, and unarchiving is theirs to choose."""
    return (
        f"Session {session_id} is archived: it stays so, and your messages go into it, hidden like it from the "
        f"Sessions tree, `sessions list` and session_search. `workbench sessions archive {session_id} --undo` "
        "(or a on Sessions) lists it again."
    )


def live_archived_note(session_id: str) -> str:
    """The one wording of resuming a session that is both live and archived, where two notices stacked
    would cover the conversation (the TUI at 80x24): what ``live_warning`` and ``archived_note`` say, shorter."""
    return (
        f"Session {session_id} is live (another Hermes may be writing to it) and archived: your messages go into "
        "it, hidden from lists and session_search. Leaving it here neither ends nor unarchives it."
    )


def leaving_reason(session: str | None) -> str:
    """The end a session left for ``session`` gets (None: a new one), as Hermes's CLI writes it."""
    return NEW_SESSION_REASON if session is None else RESUMED_OTHER_REASON


def _deleted(home: Home, session_id: str | None) -> str | None:
    """``session_id`` when it names a session no longer stored (deleted since it was chosen), else None."""
    return session_id if session_id is not None and home.archive.get_session(session_id) is None else None
