"""Background review: after some turns, the same model looks back and saves what it learned.

Every ``memory.nudge_interval`` user turns it is asked what to remember; after
``skills.creation_nudge_interval`` model iterations without a skill change, what to
capture as a skill. It sees the session's own prompt and tool schemas (so the request
prefix stays cache-identical) and the conversation so far, but may only run the memory
and skill tools; it acts as ``review`` with origin ``background_review``, which the
memory and skills parts use to stage destructive or gated writes for approval. Its
messages are never stored, and a failing review never affects the turn it follows.
It runs right after the turn (deterministic: the CLI and scenarios), or with
``AgentSession(background_review=True)`` on a daemon thread, as Hermes does; a new
turn then asks a review still running to stop and waits at most two seconds for it.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from ..models.base import MEMORY_REVIEW_PROMPT, REVIEW_TOOLS_NOTE, SKILL_REVIEW_PROMPT
from ..tools import BACKGROUND_REVIEW, ToolContext
from .tools import REVIEW_TOOLS

log = logging.getLogger(__name__)

MAX_REVIEW_ITERATIONS = 16
DENIED = ("Background review denied tool {tool!r}. Allowed here: memory, skills_list, skill_view and skill_manage. "
          "Do not retry {tool}.")


@dataclass
class ReviewResult:
    triggers: list[str]
    actions: list[dict[str, Any]] = field(default_factory=list)  # {name, arguments, result}
    answer: str = ""
    error: str | None = None

    @property
    def writes(self) -> list[dict[str, Any]]:
        """Committed memory and skill writes (staged ones excluded)."""
        return [a for a in self.actions if a["name"] in ("memory", "skill_manage")
                and a["result"].get("success") is True and not a["result"].get("staged")]

    @property
    def staged(self) -> list[str]:
        return [a["result"]["pending_id"] for a in self.actions if a["result"].get("staged") and a["result"].get("pending_id")]

    @property
    def summary(self) -> str:
        """One line for people: what was saved (staged proposals are counted, not claimed as done)."""
        lines = []
        for action in self.writes:
            args = action["arguments"]
            if action["name"] == "memory":
                lines.append("User profile updated" if args.get("target") == "user" else "Memory updated")
            else:
                verb = {"create": "created", "patch": "patched", "edit": "rewritten", "delete": "archived"}
                lines.append(f"Skill '{args.get('name')}' {verb.get(args.get('action'), 'updated')}")
        if self.staged:
            lines.append(f"{len(self.staged)} proposal(s) waiting for approval")
        return " \u00b7 ".join(dict.fromkeys(lines)) or "Nothing to save."

    def to_dict(self) -> dict[str, Any]:
        return {"triggers": self.triggers, "actions": self.actions, "answer": self.answer, "error": self.error,
                "writes": len(self.writes), "staged": self.staged, "summary": self.summary}


def review_prompt(memory: bool, skills: bool) -> str:
    parts = ([MEMORY_REVIEW_PROMPT] if memory else []) + ([SKILL_REVIEW_PROMPT] if skills else [])
    return "\n\n".join(parts + [REVIEW_TOOLS_NOTE])


def run_review(session, conversation: list[dict[str, Any]], *, memory: bool, skills: bool,
               stop: threading.Event, message_id: int | None = None) -> ReviewResult:
    """Review ``conversation`` (the session's API messages, copied by the caller); never raises.

    Runs on whichever thread calls it; ``stop`` ends it at the next step. Its writes are
    journaled with the session and ``message_id`` (the stored message it looked back from).
    """
    result = ReviewResult(triggers=[t for t, on in (("memory", memory), ("skills", skills)) if on])
    session_id = session.id
    session.emit("review_started", actor="review", triggers=result.triggers)
    tools = session.tools.restricted(REVIEW_TOOLS, DENIED)
    messages = conversation + [{"role": "user", "content": review_prompt(memory, skills)}]
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
                ctx = ToolContext(actor="review", session_id=session_id, message_id=message_id, origin=BACKGROUND_REVIEW,
                                  turn_state=state)
                outcome = tools.dispatch(call.name, call.arguments, ctx)
                if call.name == "memory":
                    session.manager.notify_memory_write(call.arguments, outcome,
                                                        {"session_id": session_id, "write_origin": BACKGROUND_REVIEW})
                messages.append({"role": "tool", "tool_call_id": call.id, "tool_name": call.name,
                                 "content": json.dumps(outcome, ensure_ascii=False, default=str)})
                result.actions.append({"name": call.name, "arguments": call.arguments, "result": outcome})
                session.emit("tool_result", actor="review", name=call.name, call_id=call.id,
                             success=outcome.get("success", True) is not False, staged=bool(outcome.get("staged")),
                             pending_id=outcome.get("pending_id"), error=outcome.get("error"), review=True)
    except Exception as exc:  # a review must never break the session
        log.warning("Background review failed: %s", exc)
        result.error = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        session.emit("error", actor="review", message=f"Background review failed: {result.error}", where="review")
    try:
        session.requests.flush()
    except Exception as exc:  # the records are for statistics; losing them must not fail the review
        log.warning("could not store the review's request records: %s", exc)
    session.emit("review_finished", actor="review", **result.to_dict())
    return result
