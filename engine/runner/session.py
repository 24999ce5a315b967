"""One agent session: the turn loop over the engine's tools, with persistence and events.

A turn stores the user's words, asks the model (the current user message carries the
provider's recall in a ``<memory-context>`` fence on the API copy only), runs the tool
calls it makes and feeds the results back until it answers or hits the iteration
limit. Messages reach state.db before each tool batch runs (so a memory write can name
the message that made it), at the end of the turn, and on errors and interrupts. The
session row itself is created on the first write; a stored session that had ended is
reopened the moment it is resumed, as Hermes's ``/resume`` does (``_reopen_now``).
After a turn, nudge counters may start a background review; a context that outgrew its budget is compressed into a
child session (or in place).
"""

from __future__ import annotations

import copy
import functools
import json
import logging
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import kept
from ..archive import sanitize_title
from ..archive.models import Session
from ..counts import counted
from ..db import BusyWaitCancelled, DatabaseDamaged, is_corrupt
from ..errors import WorkbenchError, said
from ..events import RunnerEvent
from ..memory.snapshot import record_prompt_built, stored_prompt_frozen_at
from ..models.base import Model, ModelReply, StreamingModel
from ..providers import configured_providers
from ..providers.base import MemoryProvider
from ..providers.fence import StreamingContextScrubber, attach_to_user_message, sanitize_context
from ..providers.manager import MemoryManager
from ..textsafety import quoted
from ..tools import ToolContext
from ..unstored import Unstored
from ..worker import SerialWorker
from . import background, compression
from .claims import unbacked_claims
from .dropped import put as put_dropped
from .leavable import Leaving, unless_stopped
from .prompt import build_system_prompt, prefix_hash
from .records import RequestLog, RequestRecord
from .tools import Tool, ToolRegistry, builtin_tools

log = logging.getLogger(__name__)

TITLE_CHARS = 60
RESULT_PREVIEW = 400
REVIEW_CLOSE_WAIT_S = 60.0  # how long closing a session waits for its queued reviews
CLOSE_REASON = "cli_close"  # the end reason Hermes's CLI writes when the user leaves
NEW_SESSION_REASON = "new_session"  # ... when /new leaves a session for a new one
RESUMED_OTHER_REASON = "resumed_other"  # ... when /resume leaves it for another
NOT_STORED = "the message asking for this call was not stored yet when the call was due (its writes name it)"
MISSING_RESULT = json.dumps(
    {"success": False, "error": "No result was recorded for this call (the earlier run stopped)."}
)


class Cancelled(Exception):
    """The turn was cancelled from another thread."""


@dataclass
class TurnResult:
    session_id: str
    user: str
    assistant: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # {name, arguments, result}
    status: str = "done"  # done | cancelled | error | iteration_limit
    error: str | None = None
    review: Any = None  # review.ReviewResult when a background review ran
    unbacked_claim: bool = False  # the answer claims a save that no write in this turn backs (see claims.py)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "session_id": self.session_id,
            "user": self.user,
            "assistant": self.assistant,
            "tool_calls": self.tool_calls,
            "status": self.status,
        }
        if self.error:
            data["error"] = self.error
        if self.review is not None:
            data["review"] = self.review.to_dict()
        if self.unbacked_claim:
            data["unbacked_claim"] = True
        return data


def stored_form(message: dict[str, Any]) -> dict[str, Any]:
    """The state.db row for an in-memory message (never the fenced API copy)."""
    return {
        "role": message["role"],
        "content": message.get("content"),
        "tool_calls": message.get("tool_calls"),
        "tool_name": message.get("tool_name"),
        "tool_call_id": message.get("tool_call_id"),
    }


def history(stored) -> list[dict[str, Any]]:
    """Stored messages as the model's history (``resumable``); rows written elsewhere (an older Hermes)
    may carry a leaked memory fence, which is never replayed."""
    taken = [resumable(m) for m in stored]
    for message in taken:
        if message["role"] in ("user", "assistant") and isinstance(message.get("content"), str):
            message["content"] = sanitize_context(message["content"]).strip()
    return taken


def resumable(message) -> dict[str, Any]:
    """A stored message as history for the model. Tool calls a chat API would reject (a hand
    edit, another program) are kept as text in the content, so the session still resumes."""
    calls, unreadable = [], []
    for call in message.tool_calls or []:
        function = call.get("function") if isinstance(call, dict) else None
        if (
            isinstance(function, dict)
            and isinstance(call.get("id"), str)
            and isinstance(function.get("name"), str)
            and isinstance(function.get("arguments"), str)
        ):
            calls.append(call)
        else:
            unreadable.append(json.dumps(call, ensure_ascii=False, default=str)[:500])
    content = message.content
    if unreadable and (content is None or isinstance(content, str)):
        content = "\n".join(
            [content or "", *(f"[stored tool call that cannot be replayed: {c}]" for c in unreadable)]
        ).strip()
    fields = (
        ("role", message.role),
        ("content", content),
        ("tool_calls", calls or None),
        ("tool_name", message.tool_name),
        ("tool_call_id", message.tool_call_id),
    )
    return {k: v for k, v in fields if v is not None}


def paired(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The API copy of a history written elsewhere (a crashed or older agent): every tool call
    answered, every tool result preceded by its call, as chat APIs require."""
    out: list[dict[str, Any]] = []
    open_calls: list[str] = []
    for message in messages:
        if message.get("role") == "tool":
            if message.get("tool_call_id") in open_calls:
                open_calls.remove(message["tool_call_id"])
                out.append(message)
            continue  # a result whose call is gone would be rejected
        out.extend({"role": "tool", "tool_call_id": call_id, "content": MISSING_RESULT} for call_id in open_calls)
        open_calls = (
            [c.get("id") for c in message.get("tool_calls") or []] if message.get("role") == "assistant" else []
        )
        out.append(message)
    out.extend({"role": "tool", "tool_call_id": call_id, "content": MISSING_RESULT} for call_id in open_calls)
    return out


def reported_usage(usage: dict[str, Any]) -> Counter[str]:
    """Hermes's session counters from what the API reported; nothing when it reported nothing.

    Estimates never go into Hermes's columns (``hermes insights`` sums them as spend):
    the offline and scripted models, and an endpoint that sends no usage, add nothing
    there, and our own estimate of each request stays in workbench.db's request log.
    Like Hermes, ``input_tokens`` leaves out the cached part of the prompt.
    """
    if not isinstance(usage, dict) or not usage:
        return Counter()

    def number(value: Any) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

    prompt = usage.get("prompt_tokens_details")
    completion = usage.get("completion_tokens_details")
    cached = number(prompt.get("cached_tokens")) if isinstance(prompt, dict) else 0
    counts = Counter(
        input_tokens=max(0, number(usage.get("prompt_tokens")) - cached),
        output_tokens=number(usage.get("completion_tokens")),
        cache_read_tokens=cached,
        reasoning_tokens=number(completion.get("reasoning_tokens")) if isinstance(completion, dict) else 0,
        api_call_count=1,
    )
    return +counts  # zero counters are left out


def end_reason_said(reason: str | None) -> str:
    """A session's end reason as shown: Hermes may end one without giving any."""
    return reason or "no reason given"


def ended_elsewhere_warning(session_id: str, reason: str | None) -> str:
    """The one wording, for every skin, of a session ended by another program while it was in use here."""
    return (
        f"Session {session_id} was ended elsewhere ({end_reason_said(reason)}) while you were in it. "
        "Your message reopens it, as resuming an ended session does, and leaving it here ends it again."
    )


def live_uncompressed(session_id: str) -> str:
    """The one wording, for every skin, of a live session's context left uncompressed."""
    return (
        f"Not compressed: session {session_id} has not ended (it is live: another Hermes may be writing to it), "
        "and compressing it would end it. Its context goes on growing; start a new session for a compressed one."
    )


def default_title(text: str) -> str:
    words = " ".join(text.split())
    if len(words) <= TITLE_CHARS:
        return words
    return words[:TITLE_CHARS].rsplit(" ", 1)[0] + "\u2026"


class AgentSession:
    """Holds a conversation and runs its turns. Not thread-safe except ``cancel()``."""

    def __init__(
        self,
        home,
        model: Model,
        *,
        session_id: str | None = None,
        source: str = "cli",
        title: str | None = None,
        cwd: Path | None = None,
        provider: MemoryProvider | None = None,
        on_event: Callable[[RunnerEvent], None] | None = None,
        step_delay: float = 0.0,
        review: bool = True,
        background_review: bool = False,
        cancel_event: threading.Event | None = None,
    ):
        self.home = home
        self.model = model
        self.source = source
        self.title = sanitize_title(title)  # refused now, before a turn runs: at its store it kept the turn out
        self.cwd = cwd
        self.on_event = on_event
        self.step_delay = step_delay
        self.review_enabled = review
        self.background_review = background_review  # True: reviews run on the review thread after the turn
        self._reviews = SerialWorker("bg-review")
        self._storing = threading.Lock()  # one flush at a time (a quit's retry beside a turn's)
        self._saying = threading.Lock()  # a message and its time are added together, and read together
        self._review_stops: dict[threading.Event, str] = {}  # one per queued or running review: its session
        self._reviews_dropped = False  # ``drop_reviews``: ending waits for none
        self._own_cancel = cancel_event is None  # a shared event (a whole scenario's) is never cleared here
        self.cancel_event = cancel_event or threading.Event()
        self.requests = RequestLog(home)
        if background_review:  # (a quit asks about its reviews, whoever holds it: ``background``)
            background.track(self)
        self.manager = MemoryManager(prefetch_timeout=home.config.seconds("memory.provider_timeout"))
        for chosen in [provider] if provider is not None else configured_providers(home, self.manager.warnings):
            self.manager.add_provider(chosen)
        self.tools = self._build_tools()
        self._schema_chars: tuple[Any, int] = (None, 0)
        self._prefix_hashes: dict[tuple, str] = {}
        existing = self._open(session_id)
        self.manager.call(
            "initialize",
            self.id,
            home=str(home.root),
            platform=source,
            parent_session_id=self.parent_id or "",
            resumed=existing is not None,
        )
        for text in self.manager.warnings:  # from choosing the provider, before the session had an id
            self.emit("warning", message=text, where="provider")
        self.manager.on_warning = lambda text: self.emit("warning", message=text, where="provider")

    @property
    def stored(self) -> bool:
        """Whether the session row exists in state.db (it is created on the first write)."""
        return self._created

    # -- set-up ---------------------------------------------------------------------------
    def _open(self, session_id: str | None):
        """Start the conversation state afresh: resume ``session_id`` if it is stored (returned), else a new one."""
        self.parent_id: str | None = None
        self.messages: list[dict[str, Any]] = []
        self.message_ids: list[int] = []  # state.db ids of messages[:len(message_ids)]
        # the session's newest id when this agent last read it: rows past it that are not ours came from
        # elsewhere (a row Hermes stores during our turn has a lower id than ours, stored at its end)
        self._followed_to = 0
        self._said_at: list[float] = []  # when the messages said since the last store were, oldest first
        self._created = False
        self.turns_since_memory = 0
        self.iters_since_skill = 0
        self.last_usage: tuple[int, int] | None = None  # (prompt_tokens, messages seen) from the model
        self.rotations = 0
        self._sizes: dict[int, int] = {}
        self._unrecorded_tokens: Counter[str] = Counter()
        self.ineffective_compressions = 0
        self._foreign_history = False
        self._reopen = self._prompt_unstored = False
        self.reopen_owed: str | None = None  # why a resumed session is not reopened yet (``_reopen_now``)
        self.started_at: float | None = None  # when a new session's id was made (None: a resumed one's row has it)
        self.live_before = False  # resumed while not ended (``_resume``): left open when left, never ended here
        self._uncompressed_said: str | None = None  # the live session ``maybe_compress`` said it leaves alone
        self.archived = False  # resumed while archived (``_resume``): it stays so, hidden from lists (said)
        self.ended_before: str | None = None  # resumed after it ended: its end reason, as said (it is reopened)
        self.home.store_kept()  # (a session resumed here gets what was kept of it first, if state.db is free)
        existing = self.home.archive.get_session(self.home.archive.tip_of(session_id)) if session_id else None
        if existing is not None:
            self._resume(existing)
        else:
            if session_id is None:  # (an id given, not stored: its row starts with its first message)
                self.started_at = self.home.clock.now()  # the time its id spells: its row's started_at
            self.id = session_id or self.home.archive.new_session_id()
            self.system_prompt, self.prompt_at = self._build_prompt(), self.home.clock.now()
        return existing

    def _stored_row(self) -> Session | None:
        """The session's row in state.db (None: never written, or deleted since)."""
        return self.home.archive.get_session(self.id) if self._created else None

    def _forget_if_deleted(self, row: Session | None) -> bool:
        """Drop the conversation when the session row it wrote (``row``, as just read) was deleted since
        (by the user, or by another program): what it held went with it, so nothing of it is stored
        again or ended."""
        if not self._created or row is not None:
            return False
        self.messages, self.message_ids, self._created, self._followed_to = [], [], False, 0
        return True

    def _follow_outside(self, row: Session | None) -> None:
        """Before a turn writes into its session: take up what another program (a Hermes running the
        same session) did to it since this agent last wrote. Messages it appended join the history
        (the model sees them, and ours are stored after them); an end it wrote is said (a
        ``warning`` event with ``ended_elsewhere``) and undone as resuming an ended session undoes
        it (``_reopen_now``, journaled), so nothing is written past an end unsaid, and leaving the
        session here then ends it again, as this agent took it up. ``row``: the session's, as the turn
        just read it."""
        if not self._created or self._reopen or row is None:  # (never written, or reopened by its first write)
            return
        archive = self.home.archive
        if row.end_reason == "compression":  # Hermes went on in a child: so do we (only it has a continuation)
            tip = archive.tip_of(self.id)
            gone = self.id
            self.switch_session(tip if tip != gone else None)  # (left as it is: ended by its compression)
            self.emit(
                "warning",
                message=f"Session {gone} was compressed elsewhere (by Hermes) and goes on in "
                f"{self.id}: this message goes there.",
                old_session_id=gone,
            )
            return
        known = set(self.message_ids)
        mine = sum(1 for i in self.message_ids if i <= self._followed_to)
        if archive.live_message_count(self.id, up_to=self._followed_to) != mine:  # compacted or rewound elsewhere
            self._reload_history()
        else:
            fresh = archive.messages(self.id, after_id=self._followed_to)
            outside = [m for m in fresh if m.id not in known]
            self._followed_to = max([self._followed_to, *(m.id for m in fresh)])
            if outside:
                with self._saying:  # stored already: before anything of ours still waiting to be stored
                    at = len(self.message_ids)
                    self.messages[at:at] = history(outside)
                    self.message_ids.extend(m.id for m in outside)
                self._foreign_history = True
        if row.ended_at is not None:
            self.live_before = False  # from now on this agent's to end: it reopens it
            self._reopen = True
            self._reopen_now()
            self.emit(
                "warning",
                message=ended_elsewhere_warning(self.id, row.end_reason),
                ended_elsewhere=True,
                end_reason=row.end_reason,
            )

    def switch_session(self, session_id: str | None = None, reason: str | None = None) -> str:
        """Go on in another session with the same agent and provider: a new one, or resume a stored one.

        The current session is stored and ended with ``reason`` (None: left open), or kept in
        workbench.db when state.db will not take it (``_leave_session``); the provider hears
        ``on_session_end`` for it and ``on_session_switch`` with reason ``new_session`` or ``resume``.
        """
        if session_id and self.home.archive.get_session(self.home.archive.tip_of(session_id)) is None:
            raise WorkbenchError(f"No stored session {quoted(session_id)} to resume; see `workbench sessions list`.")
        self.wait_for_review(REVIEW_CLOSE_WAIT_S)
        old_id = self.id
        self._leave_session(reason)
        self.title = None
        resumed = self._open(session_id) is not None
        self.manager.call_later(
            "on_session_switch", self.id, parent_session_id=old_id, reason="resume" if resumed else "new_session"
        )
        return self.id

    def _build_tools(self) -> ToolRegistry:
        tools = builtin_tools(self.home)
        for schema in self.manager.tool_schemas():
            name = schema["name"]
            tools.append(Tool(name, schema, functools.partial(self._provider_tool, name)))
        return ToolRegistry(self.home, tools)

    def _provider_tool(self, name: str, home: Any, args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        """Runs a memory provider's tool for this turn's session and message."""
        return self.manager.handle_tool_call(name, args, session_id=ctx.session_id, message_id=ctx.message_id)

    def _build_prompt(self) -> str:
        return build_system_prompt(self.home, provider_block=self.manager.system_prompt_block(), cwd=self.cwd)

    def _resume(self, session) -> None:
        """Continue a stored session (at its compression tip) with its stored prompt."""
        self.id = session.id
        self.title = session.title
        self.parent_id = session.parent_session_id
        self._created = True
        # (messages of it kept in workbench.db and not stored yet end it when they are: its first write reopens it)
        waiting = kept.waits_for(self.home, session.id)
        self._reopen = session.ended_at is not None or waiting is not None
        # not ended: live before us, another Hermes may be running it; we never end what we did not reopen
        self.live_before = session.ended_at is None and waiting is None
        self.archived = bool(session.archived)
        self.ended_before = end_reason_said(session.end_reason) if session.ended_at is not None else None
        if waiting is not None:
            self.reopen_owed = waiting
        elif self._reopen:
            self._reopen_now()
        self._prompt_unstored = not session.system_prompt  # a bare row (made elsewhere) gets ours then
        self._reload_history()
        # when the prompt in use froze memory (the journal lines up blocked entries by it): now, for one
        # built here; a stored one's as recorded when this workbench stored it, else not known (None)
        self.system_prompt = session.system_prompt or self._build_prompt()
        self.prompt_at = stored_prompt_frozen_at(self.home, session) if session.system_prompt else self.home.clock.now()
        interval = self.home.config.int("memory.nudge_interval")
        prior_turns = sum(1 for m in self.messages if m["role"] == "user")
        if interval > 0:
            self.turns_since_memory = prior_turns % interval

    def _reload_history(self) -> None:
        """The conversation as state.db holds it (live rows), then what of ours is not stored yet:
        on a resume, and when another program compacted or rewound the session meanwhile."""
        stored = self.home.archive.messages(self.id)
        with self._saying:
            self.messages = history(stored) + self.messages[len(self.message_ids) :]
            self.message_ids = [m.id for m in stored]
        self._followed_to = max(self.message_ids, default=0)
        self._foreign_history = True  # not written by this session: repair tool pairs in the API copy

    def _reopen_now(self) -> None:
        """Reopen the ended session just resumed, at once, as Hermes's ``/resume`` does: it is in use
        (the Sessions list, the picker and Hermes see it live) until it is left, which ends it again.

        When state.db will not take it (busy past the timeout, a wait cancelled, damage), or while
        messages of it kept in workbench.db still wait (their late store ends it with the end they were
        kept with: reopened before, it would be ended under this conversation; ``_resume``), the reopen
        is owed (``reopen_owed`` says why): the first write makes it (``Unstored.reopen``, kept for
        later with the messages if state.db still refuses), and a session left with nothing written
        keeps the end it had (or gets the one kept), never ended by this agent."""
        try:
            self.home.archive.reopen_session(self.id)
            self._reopen = False
            return
        except (WorkbenchError, sqlite3.Error) as exc:
            self.reopen_owed = kept.cause(said(exc))
        log.warning(
            "Session %s was resumed but not reopened yet (%s): it shows as ended until your first message in "
            "it reopens it.",
            self.id,
            self.reopen_owed,
        )

    # -- events ---------------------------------------------------------------------------
    def emit(self, kind: str, actor: str = "agent", **data: Any) -> None:
        event = RunnerEvent(kind=kind, data=data, session_id=self.id, actor=actor)
        self.home.bus.publish(event)
        if self.on_event is not None:
            try:
                self.on_event(event)
            except Exception:
                log.exception("on_event callback failed for %s", kind)

    def cancel(self) -> None:
        """Stop the running turn (and any background review) at the next safe point; callable from any thread."""
        self.cancel_event.set()
        for stop in list(self._review_stops):
            stop.set()

    def _pause(self) -> None:
        """Pacing for watchable runs; also the point where a cancel is noticed."""
        if self.step_delay > 0:
            self.cancel_event.wait(self.step_delay)
        self._stop_if_cancelled()

    def _stop_if_cancelled(self) -> None:
        if self.cancel_event.is_set():
            raise Cancelled()

    # -- persistence ----------------------------------------------------------------------
    def _say(self, message: dict[str, Any], at: float | None = None) -> None:
        """Add a message to the conversation, noting when it was said (``at``, else now): stored later
        (state.db was busy), it keeps that time, never the time it was finally stored."""
        with self._saying:
            self.messages.append(message)
            self._said_at.append(self.home.clock.now() if at is None else at)

    @property
    def unstored(self) -> int:
        """How many messages of the conversation state.db does not hold yet."""
        return len(self.messages) - len(self.message_ids)

    def flush(self) -> list[int]:
        """Store every message not yet in state.db; creates the session row on first write. Two at once
        (a quit's retry and a turn's) take turns: the second finds nothing left, never stores it twice."""
        with self._storing:
            ids = self._flush()
        if ids:  # state.db took a write: what was kept of conversations left while it was busy goes too
            self.home.store_kept()
        return ids

    def _flush(self) -> list[int]:
        self.requests.flush()
        unstored, stamps = self._unstored()
        if unstored is None:
            return []
        archive = self.home.archive
        prompt_owed = not self._created or self._prompt_unstored  # this store puts our prompt on the row
        try:
            ids = unstored.store(archive)
        finally:  # what landed is not done again
            if unstored.created and not self._created:
                self.title = unstored.title
            self._created, self._reopen, self._prompt_unstored = (
                unstored.created,
                unstored.reopen,
                unstored.prompt_unstored,
            )
            if prompt_owed and unstored.created and not unstored.prompt_unstored and self.prompt_at is not None:
                record_prompt_built(self.home, self.id, self.system_prompt, self.prompt_at)
        self.message_ids.extend(ids)
        with self._saying:
            del self._said_at[:stamps]
        unstored.store_tokens(archive)
        self._unrecorded_tokens.clear()
        self.emit("message_stored", message_ids=ids, roles=[row["role"] for row in unstored.rows])
        return ids

    def _unstored(self) -> tuple[Unstored | None, int]:
        """What state.db lacks of this session (None: nothing), and how many of the times said it uses."""
        with self._saying:  # (a message said while this one stores waits for the next, with its time)
            pending, stamps = self.messages[len(self.message_ids) :], list(self._said_at)
        if not pending:
            return None, 0
        # the newest pending messages were said here; older ones (a compacted copy) are stamped as stored
        times = [None] * max(0, len(pending) - len(stamps)) + stamps[-len(pending) :]
        first_user = next((m.get("content") for m in self.messages if m["role"] == "user"), "") or "Session"
        unstored = Unstored(
            session_id=self.id,
            source=self.source,
            model=self.model.name,
            parent_id=self.parent_id,
            system_prompt=self.system_prompt,
            title=self.title or default_title(str(first_user)),
            created=self._created,
            reopen=self._reopen,
            prompt_unstored=self._prompt_unstored,
            rows=[{**stored_form(m), "timestamp": at} for m, at in zip(pending, times, strict=True)],
            tokens=dict(self._unrecorded_tokens),
            started_at=None if self._created else self.started_at,
        )
        return unstored, len(stamps)

    def _leave_session(self, reason: str | None) -> kept.Kept | None:
        """Store what is left and end the session with ``reason`` (None: it stays open to resume), as
        leaving it does. When state.db will not take the messages (busy past the timeout, a full
        disk), they are kept in workbench.db with that end instead (``keep``); if workbench.db
        cannot take them either, the store's error is raised."""
        self._forget_if_deleted(self._stored_row())
        try:
            self.flush()
        except (WorkbenchError, sqlite3.Error) as exc:
            if not self.unstored:
                raise
            try:
                return self.keep(reason, said(exc))
            except (WorkbenchError, sqlite3.Error) as failed:
                log.warning(
                    "%s could not be kept in workbench.db either: %s", counted(self.unstored, "message"), said(failed)
                )
            raise
        if self._created:
            # (first: a state.db that refuses it leaves the session as it was, to try again; one resumed
            # and never reopened, its reopen owed, keeps the end it had: this agent never took it up)
            # (a session live before this agent took it up, Hermes's maybe, is not this agent's to end)
            if reason and not self._reopen and not self.live_before:
                self.home.archive.end_session(self.id, reason)
            self.manager.call_later("on_session_end", copy.deepcopy(self.messages))
        return None

    def keep(self, reason: str | None, why: str) -> kept.Kept | None:
        """Keep the messages state.db lacks in workbench.db, durably, for the next workbench process
        that finds state.db free to store, ending the session with ``reason`` then (``engine.kept``):
        the conversation is being left while state.db refuses them (``why``). They are no longer
        this conversation's to store. None when nothing was unstored; raises when workbench.db
        cannot take them."""
        with self._storing:
            unstored, stamps = self._unstored()
            if unstored is None:
                return None
            held = kept.put(self.home, unstored, None if self.live_before else reason, why)  # (not ours to end)
            with self._saying:
                del self.messages[len(self.message_ids) : len(self.message_ids) + held.messages]
                del self._said_at[:stamps]
            self._unrecorded_tokens.clear()
        self.emit("messages_kept", messages=held.messages, text=held.describe(kept.when_stored(self.home)))
        return held

    def end(self, reason: str = "session_end") -> kept.Kept | None:
        """Store what is left and end the session row (if it was ever written, and is still there), or
        keep them in workbench.db when state.db will not take them (what was kept is returned). The
        provider is shut down either way."""
        self._close_reviews()
        try:
            return self._leave_session(reason)
        finally:
            self.manager.shutdown()

    def leave(self) -> None:
        """Stop without storing what state.db did not take (the user chose to quit without it): no
        wait on a busy state.db; the provider is shut down and a stored session stays open to resume."""
        self.cancel()
        self._reviews.close(0)
        self.manager.shutdown()

    # -- model requests -------------------------------------------------------------------
    def api_messages(self, fenced: dict[int, str] | None = None) -> list[dict[str, Any]]:
        """System prompt + conversation, with the current user message's API copy fenced."""
        out = [{"role": "system", "content": self.system_prompt}]
        for index, message in enumerate(self.messages):
            if fenced and index in fenced:
                message = {**message, "content": attach_to_user_message(message["content"], fenced[index])}
            out.append(message)
        return paired(out) if self._foreign_history else out

    def request(
        self, messages: list[dict[str, Any]], tools: ToolRegistry, purpose: str, estimate: int | None = None
    ) -> ModelReply:
        """One model call, recorded with the fingerprint of its cacheable prefix."""
        schemas = tools.api_schemas()
        if estimate is None:
            estimate = compression.estimate_tokens(messages[0]["content"], messages[1:], schemas)
        key = (messages[0]["content"], tuple(tools.names()))
        if key not in self._prefix_hashes:  # hashing the prompt and schemas once per prefix, not per request
            self._prefix_hashes[key] = prefix_hash(messages[0]["content"], schemas)
        started = time.perf_counter()
        model = self.model
        if purpose != "turn":
            reply = model.complete(messages, schemas)
        else:  # esc leaves the call at once, its late answer dropped
            left = unless_stopped(functools.partial(self._turn_call, model, messages, schemas), self.cancel_event)
            if left is None:
                raise Cancelled()
            reply = left
        usage = reply.usage or {}
        if purpose == "turn":
            if usage.get("prompt_tokens"):
                self.last_usage = (int(usage["prompt_tokens"]), len(messages) - 1)
            self._unrecorded_tokens.update(reported_usage(usage))  # added to the session row at the next flush
        self.requests.record(
            RequestRecord(
                session_id=self.id,
                purpose=purpose,
                model=self.model.name,
                prefix_hash=self._prefix_hashes[key],
                system_chars=len(messages[0]["content"]),
                message_count=len(messages),
                estimated_tokens=estimate,
                prompt_tokens=usage.get("prompt_tokens"),
                completion_tokens=usage.get("completion_tokens"),
                duration_ms=(time.perf_counter() - started) * 1000,
            )
        )
        return reply

    def _turn_call(
        self, model: Model, messages: list[dict[str, Any]], schemas: list[dict[str, Any]], leaving: Leaving
    ) -> ModelReply:
        """A turn's model call, in a thread the turn may leave. A streaming model's text is scrubbed of
        fence spans and emitted as ``assistant_delta`` events, none once the turn has left the call."""
        if not (isinstance(model, StreamingModel) and model.streams):
            return model.complete(messages, schemas)
        scrubber = StreamingContextScrubber()

        def on_delta(piece: str) -> None:
            self._stop_if_cancelled()  # esc stops reading the stream at once
            shown = scrubber.feed(piece)
            if shown:
                leaving.unless_left(self.emit, "assistant_delta", text=shown)

        reply = model.complete(messages, schemas, on_delta=on_delta)
        tail = scrubber.flush()
        if tail:
            leaving.unless_left(self.emit, "assistant_delta", text=tail)
        return reply

    def _chars(self, messages: list[dict[str, Any]]) -> int:
        """Characters of ``messages`` (sizes are cached: a stored message never changes)."""
        total = 0
        for message in messages:
            size = self._sizes.get(id(message))
            if size is None:
                size = self._sizes[id(message)] = compression.message_chars(message)
            total += size
        return total

    def context_tokens(self) -> int:
        """Reported prompt tokens plus an estimate of what was added since, else chars/4."""
        if self.last_usage and self.last_usage[1] <= len(self.messages):
            tokens, seen = self.last_usage
            return tokens + self._chars(self.messages[seen:]) // 4
        if self._schema_chars[0] is not self.tools:
            self._schema_chars = (self.tools, len(json.dumps(self.tools.api_schemas(), ensure_ascii=False)))
        return (len(self.system_prompt) + self._chars(self.messages) + self._schema_chars[1]) // 4

    # -- the turn -------------------------------------------------------------------------
    def run_turn(self, text: str, said_at: float | None = None) -> TurnResult:
        """One turn on the user's ``text``, said at ``said_at`` (default now: a skin that waited on
        something first, a busy session switch, gives the time it was typed)."""
        if not isinstance(text, str) or not text.strip():
            raise WorkbenchError("A turn needs a non-empty user message.")
        problem = self.home.journal.problem()
        if problem:  # nothing of the turn could be stored (a session's title is journaled): refused before it starts
            raise WorkbenchError(problem)
        self.home.archive.refuse_damaged()  # nor into a state.db known to be damaged (it is left alone)
        row = self._stored_row()
        if self._forget_if_deleted(row):  # its turns would fail to store: this one starts a new session
            gone = self.id
            self.switch_session(None)  # (the provider hears the switch, as on ctrl+l)
            self.emit(
                "warning",
                message=f"Session {gone} was deleted; this message starts a new session.",
                old_session_id=gone,
            )
        self._follow_outside(row)
        result = TurnResult(session_id=self.id, user=text)
        if self._own_cancel:
            self.cancel_event.clear()
        self.emit(
            "turn_started",
            user=text,
            turn=sum(1 for m in self.messages if m["role"] == "user") + 1,
            prompt_at=self.prompt_at,  # (when its prompt froze memory: the Memory screen's "frozen" time)
        )
        review_memory = self._tick_memory_nudge()
        user_message = {"role": "user", "content": text}
        self._say(user_message, said_at)
        turn_state: dict[str, Any] = {}
        compressed, stored = False, True
        try:
            fence = self.manager.recall_fence(text, self.id)
            for iteration in range(1, self.home.config.int("agent.max_iterations") + 1):
                self._pause()
                if not compressed and self.maybe_compress():
                    compressed = True  # at most one per turn
                    result.session_id = self.id
                user_index = next(i for i in range(len(self.messages) - 1, -1, -1) if self.messages[i] is user_message)
                reply = self.request(
                    self.api_messages({user_index: fence}),
                    self.tools,
                    "turn",
                    estimate=self.context_tokens() + len(fence) // 4,
                )
                if not reply.tool_calls:  # an answer that came after esc is dropped (late calls are answered below)
                    self._stop_if_cancelled()
                if "memory-context" in reply.content.lower():  # a model echoing its recall: never store it
                    reply.content = sanitize_context(reply.content).strip()
                if "skill_manage" in self.tools.names():
                    self.iters_since_skill += 1
                self._say(reply.to_message())
                self.emit(
                    "assistant_message",
                    content=reply.content,
                    iteration=iteration,
                    tool_calls=[c.name for c in reply.tool_calls],
                )
                if not reply.tool_calls:
                    result.assistant = reply.content
                    break
                try:
                    self.flush()  # (its calls' writes name this message)
                except Exception as exc:  # so none of them runs: each is answered so, and stored so later
                    stored = False
                    reason = said(exc)
                    for call in reply.tool_calls:
                        self._append_result(call, {"success": False, "error": f"Not run: {NOT_STORED} ({reason})"})
                    raise
                self._run_tools(reply, turn_state, result)
            else:
                result.status = "iteration_limit"
                result.assistant = (
                    f"(Stopped after {self.home.config.int('agent.max_iterations')} model calls "
                    "without a final answer.)"
                )
                self._say({"role": "assistant", "content": result.assistant})
        except Cancelled:
            result.status = "cancelled"
            self.emit("cancelled", user=text)
        except Exception as exc:  # the model or the engine failed: keep everything said so far
            result.status = "error"
            result.error = said(exc)
            if not stored:  # its calls were answered "Not run", and what was said is kept for later
                damaged = isinstance(exc, DatabaseDamaged) or is_corrupt(exc) or self.home.archive.damage is not None
                later = (  # (damage is not a lock another program holds: waiting frees nothing)
                    "state.db is damaged, so it is kept in workbench.db until state.db is recovered or restored "
                    "(`workbench doctor` says how); ask for those calls again after that."
                    if damaged
                    else "it is stored later; ask for those calls again once state.db is free."
                )
                result.error = (
                    f"The turn stopped before its tool calls ran: the message asking for them was not stored "
                    f"yet when they were due ({kept.cause(result.error)}). What was said is kept: {later}"
                )
            if not isinstance(
                exc, (WorkbenchError, sqlite3.Error)
            ):  # refusals, model and disk errors explain themselves
                log.exception("turn failed")
            if isinstance(exc, BusyWaitCancelled):  # its stop (esc, a quit) ended a wait for a busy state.db
                result.status = "cancelled"
                self.emit("cancelled", user=text, message=result.error)
            else:
                self.emit("error", message=result.error, user=text)
        finally:
            if stored:  # (a store that just failed is not waited for again: the next turn or the quit retries)
                self._safe_flush(result)
        result.session_id = self.id
        turn_start = next((i for i in range(len(self.messages) - 1, -1, -1) if self.messages[i] is user_message), None)
        if turn_start is not None and unbacked_claims(self.messages[turn_start:]):
            result.unbacked_claim = True
            self.emit("unbacked_claim", text=result.assistant)
        self.emit(
            "turn_finished",
            status=result.status,
            assistant=result.assistant,
            tool_calls=len(result.tool_calls),
            estimated_tokens=self.context_tokens(),
            error=result.error,
        )
        if result.status == "done" and result.assistant:
            self.manager.sync_turn(text, result.assistant, session_id=self.id, messages=copy.deepcopy(self.messages))
            review_skills = self._tick_skill_nudge()
            if self.review_enabled and (review_memory or review_skills):
                result.review = self._start_review(result, review_memory, review_skills)
        return result

    # -- background review ----------------------------------------------------------------
    def _start_review(self, result: TurnResult, memory: bool, skills: bool):
        """Inline: run it now and return its result. Background: queue it and return None
        (``result.review`` is set when it ends)."""
        from .review import run_review

        conversation = copy.deepcopy(self.api_messages())  # taken here, before the next turn can change it
        # its writes name the turn's last stored message (the answer it looked back from)
        anchor, session_id = (self.message_ids[-1] if self.message_ids else None), self.id
        if not self.background_review:
            return run_review(
                self, conversation, memory=memory, skills=skills, stop=self.cancel_event, message_id=anchor
            )
        stop = threading.Event()
        self._review_stops[stop] = session_id

        def job() -> None:
            try:
                result.review = run_review(
                    self,
                    conversation,
                    memory=memory,
                    skills=skills,
                    stop=stop,
                    message_id=anchor,
                    session_id=session_id,
                )
            finally:
                self._review_stops.pop(stop, None)
                self.emit("review_settled", actor="review")  # (after: ``reviews_under_way`` no longer names it)

        if not self._reviews.submit(job):  # the agent was ended or closed: no thread is left to run it
            self._review_stops.pop(stop, None)
            if self._reviews_dropped:  # a quit while the turn ran: said as the reviews it dropped are
                put_dropped(self.home, [session_id])
            else:
                log.warning("background review not queued: session %s was already ended or closed", session_id)
        return None

    def wait_for_review(self, timeout: float | None = None) -> bool:
        """Wait for every queued background review to finish; True when none is left."""
        return self._reviews.drain(timeout)

    @property
    def reviewing(self) -> bool:
        """Whether a background review is queued or running."""
        return self._reviews.pending() > 0

    def reviews_under_way(self) -> list[str]:
        """The sessions of the background reviews queued or running, in turn order (a quit asks about them)."""
        return list(dict.fromkeys(self._review_stops.values()))

    def drop_reviews(self) -> list[str]:
        """Stop every queued and running background review without waiting for its model's answer (the
        user quits without them): what they had not written is never written, ending the session no
        longer waits for them, and workbench.db notes them for the next start. Returns their sessions."""
        if self._reviews_dropped:  # (once: the quit that asked, then the screen's close)
            return []
        dropped = self.reviews_under_way()
        self._reviews_dropped = True
        for stop in list(self._review_stops):
            stop.set()
        self._reviews.close(0)
        put_dropped(self.home, dropped)  # (the next start says so again: ``dropped.take``)
        return dropped

    def _close_reviews(self) -> None:
        """Let queued reviews finish (bounded) before the session ends; dropped ones are not waited for."""
        self._reviews.close(0 if self._reviews_dropped else REVIEW_CLOSE_WAIT_S)

    def _safe_flush(self, result: TurnResult) -> None:
        try:
            self.flush()
        except Exception as exc:  # kept in memory; the next flush retries
            if isinstance(
                exc, (WorkbenchError, sqlite3.Error)
            ):  # a refused or damaged archive: the message says it all
                log.warning("could not store the turn: %s", exc)
                if is_corrupt(exc):  # damage met: is it state.db's? (then nothing more is written to it)
                    self.home.archive.vet(again=True, quiet=True)
            else:
                log.exception("could not store the turn")
            result.error = result.error or (  # (the busy advice, "Nothing was changed. Retry", is not true of it)
                f"Could not store the turn yet ({kept.cause(str(exc))}): it is kept here and stored with the next "
                "message, or kept in workbench.db when the session is left."
            )
            self.emit("error", message=result.error, where="persist")

    def _run_tools(self, reply: ModelReply, turn_state: dict[str, Any], result: TurnResult) -> None:
        message_id = self.message_ids[-1] if self.message_ids else None
        calls = list(reply.tool_calls)
        for position, call in enumerate(calls):
            try:
                self._pause()
            except Cancelled:
                for skipped in calls[position:]:  # every call gets an answer, so the transcript stays valid
                    self._append_result(skipped, {"success": False, "error": "Interrupted before this tool ran."})
                raise
            self.emit("tool_called", name=call.name, arguments=call.arguments, call_id=call.id)
            if call.raw_arguments is not None:
                outcome = {
                    "success": False,
                    "error": f"The arguments for {call.name!r} were not a JSON object; resend them as one.",
                }
            else:
                ctx = ToolContext(actor="agent", session_id=self.id, message_id=message_id, turn_state=turn_state)
                outcome = self.tools.dispatch(call.name, call.arguments, ctx)
            self._after_tool(call.name, call.arguments, outcome)
            self._append_result(call, outcome)
            result.tool_calls.append({"name": call.name, "arguments": call.arguments, "result": outcome})

    def _append_result(self, call, outcome: dict[str, Any]) -> None:
        content = json.dumps(outcome, ensure_ascii=False, default=str)
        self._say({"role": "tool", "content": content, "tool_call_id": call.id, "tool_name": call.name})
        self.emit_tool_result(call, outcome, preview=content[:RESULT_PREVIEW])

    def emit_tool_result(self, call, outcome: dict[str, Any], **extra: Any) -> None:
        """The ``tool_result`` event of one tool call: the turn's, the flush's and a review's alike."""
        self.emit(
            "tool_result",
            name=call.name,
            call_id=call.id,
            success=outcome.get("success", True) is not False,
            staged=bool(outcome.get("staged")),
            pending_id=outcome.get("pending_id"),
            error=outcome.get("error"),
            **extra,
        )

    def _after_tool(self, name: str, args: dict[str, Any], outcome: dict[str, Any]) -> None:
        """Nudge counters reset on use; committed memory writes are mirrored to the provider."""
        if name == "memory":
            self.turns_since_memory = 0
            anchor = self.message_ids[-1] if self.message_ids else None
            self.manager.notify_memory_write(
                args, outcome, {"session_id": self.id, "write_origin": "foreground", "message_id": anchor}
            )
        elif name == "skill_manage":
            self.iters_since_skill = 0

    # -- nudges ---------------------------------------------------------------------------
    def _tick_memory_nudge(self) -> bool:
        interval = self.home.config.int("memory.nudge_interval")
        if interval <= 0 or "memory" not in self.tools.names():
            return False
        self.turns_since_memory += 1
        if self.turns_since_memory >= interval:
            self.turns_since_memory = 0
            return True
        return False

    def _tick_skill_nudge(self) -> bool:
        interval = self.home.config.int("skills.creation_nudge_interval")
        if interval <= 0 or "skill_manage" not in self.tools.names() or self.iters_since_skill < interval:
            return False
        self.iters_since_skill = 0
        return True

    # -- compression ----------------------------------------------------------------------
    def maybe_compress(self, force: bool = False) -> bool:
        """Compress when the context passed the threshold (or ``force``); True if it did. Never a session
        resumed live (``live_before``): its end is not ours, and the workbench says so once."""
        config = self.home.config
        if not config.bool("compression.enabled") and not force:
            return False
        limit = compression.threshold_tokens(config)
        if not force and (self.context_tokens() < limit or self.ineffective_compressions >= 2):
            return False
        if self.live_before:  # compressing ends it (or rewrites its rows) under the Hermes that may run it
            if self._uncompressed_said != self.id:
                self._uncompressed_said = self.id
                self.emit("warning", message=live_uncompressed(self.id), uncompressed=True)
            return False
        tail_budget = int(limit * min(0.8, max(0.1, config.float("compression.target_ratio"))))
        cut = compression.plan(
            self.messages, protect_first_n=config.int("compression.protect_first_n"), tail_budget=tail_budget
        )
        if cut is None:
            return False
        self.flush()
        self.manager.call_later("on_pre_compress", copy.deepcopy(self.messages))
        self._flush_memories(cut[1])
        done = compression.compact(self.messages, self.model, cut)
        self.manager.call_later("on_session_end", copy.deepcopy(self.messages))
        old_id = self.id
        if config.bool("compression.in_place"):
            self.home.archive.compact_in_place(
                self.id, len(done.head), len(done.tail), done.summary["content"], summary_role=done.summary["role"]
            )
            self.messages = done.messages
            self.message_ids = [m.id for m in self.home.archive.messages(self.id)]
            self._followed_to = max(self.message_ids, default=0)
        else:
            self.home.archive.end_session(old_id, "compression")
            self.started_at = self.home.clock.now()
            self.parent_id, self.id = old_id, self.home.archive.new_session_id()
            self._created = False  # the first flush titles the child "X #2" after its parent "X"
            self.messages, self.message_ids, self._followed_to = done.messages, [], 0
        self.system_prompt = self._build_prompt() + "\n\n" + compression.PROMPT_NOTE
        self.prompt_at = self.home.clock.now()
        if config.bool("compression.in_place"):  # the row keeps its id: store the rebuilt prompt on it
            self.home.archive.update_system_prompt(self.id, self.system_prompt)
            record_prompt_built(self.home, self.id, self.system_prompt, self.prompt_at)
        self.last_usage = None
        self._sizes.clear()  # dropped messages' ids may be reused by new ones
        self.rotations += 1
        # two compressions in a row that leave the context over budget stop automatic ones (the prompt is too big)
        self.ineffective_compressions = self.ineffective_compressions + 1 if self.context_tokens() >= limit else 0
        if not config.bool("compression.in_place"):
            self.flush()
            self.manager.call_later("on_session_switch", self.id, parent_session_id=old_id, reason="compression")
        self.emit(
            "session_rotated",
            old_session_id=old_id,
            new_session_id=self.id,
            title=self.title,
            dropped=done.dropped,
            in_place=config.bool("compression.in_place"),
            estimated_tokens=self.context_tokens(),
            prompt_at=self.prompt_at,
        )
        return True

    def _flush_memories(self, upto: int) -> None:
        """Before ``messages[:upto]`` are summarised: one memory-only call to save what matters (see flush.py)."""
        if (
            not self.home.config.bool("compression.flush_memories")
            or self.cancel_event.is_set()
            or "memory" not in self.tools.names()
        ):
            return
        from .flush import flush_memories

        sent = [{"role": "system", "content": self.system_prompt}, *self.messages[:upto]]
        flush_memories(
            self, paired(sent) if self._foreign_history else sent, self.message_ids[-1] if self.message_ids else None
        )

    def close(self) -> None:
        """Store anything pending and release the provider; the session row stays open for resuming."""
        self._close_reviews()
        self.flush()
        self.manager.shutdown()
        self.model.close()
