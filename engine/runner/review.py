"""Background review: after some turns, a fork of the agent looks back and saves what it learned.

Every ``memory.nudge_interval`` user turns it is asked what to remember; after
``skills.creation_nudge_interval`` model iterations without a skill change, what to
capture as a skill. The fork shares the parent's model and memory store and sees the
session's own prompt and tool schemas (so the request prefix stays cache-identical)
and the conversation so far, plus the live memory entries (a read-only view: the
prompt's snapshot is frozen); it may only run the memory and skill tools, never
nudges itself, stops after ``MAX_REVIEW_ITERATIONS`` requests, and none of its
messages are stored. It acts as ``review`` with origin ``background_review``, which
the memory and skills parts use to stage destructive or gated writes for approval. A
failing review never affects the turn it follows.

``AgentSession(background_review=True)`` (the TUI, ``workbench demo``, the CLI) queues
it on the session's review thread after the answer is delivered: the next turn never
waits for it, reviews run one at a time in turn order, and ``wait_for_review`` (the
CLI on exit, tests) joins them. Without it the review runs inline, right after the turn.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from ..counts import counted
from ..memory.targets import TARGETS
from ..models.base import LIVE_MEMORY_HEADING, MEMORY_REVIEW_PROMPT, REVIEW_TOOLS_NOTE, SKILL_REVIEW_PROMPT
from ..models.phrasing import shorten
from ..tools import BACKGROUND_REVIEW, ToolContext
from .tools import REVIEW_TOOLS

log = logging.getLogger(__name__)

MAX_REVIEW_ITERATIONS = 16
DUPLICATE = "Entry already exists"  # the memory store's answer to an add it did not need
DENIED = (
    "Background review denied tool {tool!r}. Allowed here: memory, skills_list, skill_view and skill_manage. "
    "Do not retry {tool}."
)


@dataclass
class ReviewResult:
    triggers: list[str]
    actions: list[dict[str, Any]] = field(default_factory=list)  # {name, arguments, result}
    answer: str = ""
    error: str | None = None

    @property
    def writes(self) -> list[dict[str, Any]]:
        """Committed memory and skill writes (staged ones and adds of an entry already there excluded)."""
        return [
            a
            for a in self.actions
            if a["name"] in ("memory", "skill_manage")
            and a["result"].get("success") is True
            and not a["result"].get("staged")
            and not str(a["result"].get("message", "")).startswith(DUPLICATE)
        ]

    @property
    def staged(self) -> list[str]:
        return [
            a["result"]["pending_id"]
            for a in self.actions
            if a["result"].get("staged") and a["result"].get("pending_id")
        ]

    @property
    def summary(self) -> str:
        """What was saved, for people (staged proposals are counted, not claimed as done)."""
        lines = []
        for action in self.writes:
            args = action["arguments"]
            if action["name"] == "memory":
                label = "User profile" if args.get("target") == "user" else "Memory"
                shown = args.get("content") or args.get("old_text") or ""
                sign = {"add": "+", "replace": "~", "remove": "-"}.get(args.get("action"), "~")
                lines.append(f"{label} {sign} \u201c{shorten(str(shown), 70)}\u201d" if shown else f"{label} updated")
            elif args.get("action") == "write_file":
                lines.append(f"Skill '{args.get('name')}' + {args.get('file_path')}")
            else:
                verb = {"create": "created", "patch": "patched", "edit": "rewritten", "delete": "archived"}
                lines.append(f"Skill '{args.get('name')}' {verb.get(args.get('action'), 'updated')}")
        if self.staged:
            lines.append(f"{counted(len(self.staged), 'proposal')} waiting for approval")
        if skipped := [a for a in self.actions if a["result"].get("rejected_before")]:
            lines.append(f"{len(skipped)} not proposed again (rejected before: make the change by hand to keep it)")
        return " \u00b7 ".join(dict.fromkeys(lines)) or "Nothing to save."

    @property
    def line(self) -> str:
        """The result line shown when it ends: what (``summary``) and, when it did something, why (its answer)."""
        if self.error:
            return f"Review {'stopped' if self.error == 'cancelled' else 'failed: ' + self.error}"
        why = " ".join(self.answer.split())
        return f"{self.summary} \u2014 {shorten(why, 300)}" if why and (self.writes or self.staged) else self.summary

    def to_dict(self) -> dict[str, Any]:
        return {
            "triggers": self.triggers,
            "actions": self.actions,
            "answer": self.answer,
            "error": self.error,
            "writes": len(self.writes),
            "staged": self.staged,
            "summary": self.summary,
            "line": self.line,
        }


# There is no command to run a review again, but a later one looks at the whole conversation.
_TALK_ON = "Resume the session (Run, ctrl+o) and talk on: its next review looks at the whole conversation again."


def dropped_note(sessions: list[str]) -> str:
    """What quitting without the background reviews still under way left undone, said once the terminal
    is back."""
    which = ", ".join(sessions)
    return (
        f"The background review of session {which} was stopped at quit: nothing it had not saved yet was saved. "
        + _TALK_ON
    )


def failed_note(session: str, error: str) -> str:
    """A review that failed while the quit waited for it (Quit when done), said once the terminal is back:
    the app quits by itself, so its passing notice of the failure is never seen."""
    return (
        f"The background review of session {session} failed: {error.rstrip('.')}. Nothing it had not saved was "
        f"saved. {_TALK_ON}"
    )


def review_prompt(home, memory: bool, skills: bool) -> str:
    """The request appended to the conversation, ending with the live memory entries (read-only view)."""
    parts = ([MEMORY_REVIEW_PROMPT] if memory else []) + ([SKILL_REVIEW_PROMPT] if skills else [])
    live = [
        f"- [{target}] {entry}"
        for target in TARGETS
        if home.memory.enabled(target)
        for entry in home.memory.entries(target)
    ]
    view = [LIVE_MEMORY_HEADING, *live] if live else []
    return "\n\n".join(parts + [REVIEW_TOOLS_NOTE] + (["\n".join(view)] if view else []))


def run_review(
    session,
    conversation: list[dict[str, Any]],
    *,
    memory: bool,
    skills: bool,
    stop: threading.Event,
    message_id: int | None = None,
    session_id: str | None = None,
) -> ReviewResult:
    """Review ``conversation`` (the session's API messages, copied by the caller); never raises.

    Runs on whichever thread calls it; ``stop`` ends it at the next step. Its writes are
    journaled with the session and ``message_id`` (the stored message it looked back from).
    """
    result = ReviewResult(triggers=[t for t, on in (("memory", memory), ("skills", skills)) if on])
    session_id = session_id or session.id  # queued reviews keep the id of the turn they follow
    session.emit("review_started", actor="review", triggers=result.triggers)
    tools = session.tools.restricted(REVIEW_TOOLS, DENIED)
    messages = conversation + [{"role": "user", "content": review_prompt(session.home, memory, skills)}]
    state: dict[str, Any] = {}
    try:
        for _ in range(MAX_REVIEW_ITERATIONS):
            if stop.is_set():
                result.error = "cancelled"
                break
            reply = session.request(messages, tools, "review")
            messages.append(reply.to_message())
            if not reply.tool_calls:
                result.answer = reply.content
                break
            for call in reply.tool_calls:
                if stop.is_set():  # asked to stop while the model was thinking: write nothing more
                    break
                ctx = ToolContext(
                    actor="review",
                    session_id=session_id,
                    message_id=message_id,
                    origin=BACKGROUND_REVIEW,
                    turn_state=state,
                )
                outcome = tools.dispatch(call.name, call.arguments, ctx)
                if call.name == "memory":
                    session.manager.notify_memory_write(
                        call.arguments, outcome, {"session_id": session_id, "write_origin": BACKGROUND_REVIEW}
                    )
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": call.id,
                        "tool_name": call.name,
                        "content": json.dumps(outcome, ensure_ascii=False, default=str),
                    }
                )
                result.actions.append({"name": call.name, "arguments": call.arguments, "result": outcome})
                session.emit_tool_result(call, outcome, actor="review", review=True)
    except Exception as exc:  # a review must never break the session
        log.warning("Background review failed: %s", exc)
        result.error = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        session.emit("error", actor="review", message=f"Background review failed: {result.error}", where="review")
    try:
        session.requests.flush()
    except Exception as exc:  # the records are for statistics; losing them must not fail the review
        log.warning("could not store the review's request records: %s", exc)
    session.emit("review_finished", actor="review", message_id=message_id, **result.to_dict())
    return result
