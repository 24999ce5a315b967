"""The memory flush: before a compression drops turns, the model gets one chance to save from them.

One extra request, offering only the memory tool, over the part of the conversation
about to be summarised, with a system note saying so. Its writes go through the
memory store's normal gates as actor ``agent`` with origin ``flush``, journaled with
the session and its last stored message. Only ``add`` runs: a flush saves, it never
removes or rewrites entries. The compression then rebuilds the system prompt from a
fresh snapshot, so what the flush saved is in the prompt the next request sees.

The runner skips it when ``compression.flush_memories`` is off, on an interrupted turn
and when there is no memory tool; a flush that fails is reported and the compression
goes ahead anyway.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from ..models.base import FLUSH_PROMPT
from ..tools import FLUSH, ToolContext

log = logging.getLogger(__name__)

ADD_ONLY = "The memory flush may only add entries; {what} was not run."


@dataclass
class FlushResult:
    actions: list[dict[str, Any]] = field(default_factory=list)  # {name, arguments, result}
    answer: str = ""
    error: str | None = None

    @property
    def saved(self) -> list[str]:
        """The entries it committed (staged ones are not saved yet)."""
        return [
            a["arguments"].get("content", "")
            for a in self.actions
            if a["result"].get("success") is True and not a["result"].get("staged")
        ]

    @property
    def summary(self) -> str:
        if self.error:
            return f"Memory flush failed: {self.error}"
        staged = sum(1 for a in self.actions if a["result"].get("staged"))
        parts = [f"saved {len(self.saved)} entr{'y' if len(self.saved) == 1 else 'ies'}"] if self.saved else []
        parts += [f"{staged} waiting for approval"] if staged else []
        return "Memory flush before compression: " + (", ".join(parts) or "nothing to save") + "."

    def to_dict(self) -> dict[str, Any]:
        return {
            "actions": self.actions,
            "answer": self.answer,
            "error": self.error,
            "saved": self.saved,
            "summary": self.summary,
        }


def _refusal(args: dict[str, Any]) -> str | None:
    """Why this memory call is not an add-only write (None when it is)."""
    action = args.get("action")
    if action == "batch":
        ops = args.get("operations")
        if isinstance(ops, list) and all(isinstance(op, dict) and op.get("action") == "add" for op in ops):
            return None
        return ADD_ONLY.format(what="a batch with a replace or remove")
    return None if action == "add" else ADD_ONLY.format(what=f"action {action!r}")


def flush_memories(session, messages: list[dict[str, Any]], message_id: int | None) -> FlushResult:
    """Run the flush over ``messages`` (system prompt first, as sent); never raises."""
    result = FlushResult()
    session.emit("flush_started", messages=len(messages) - 1)
    tools = session.tools.only(("memory",))
    try:
        reply = session.request([*messages, {"role": "user", "content": FLUSH_PROMPT}], tools, "flush")
        result.answer = reply.content
        for call in reply.tool_calls:  # one request: its calls run, and the model is not asked again
            refused = (
                _refusal(call.arguments) if call.name == "memory" else "The memory flush can only call the memory tool."
            )
            if refused:
                outcome = {"success": False, "error": refused}
            else:
                ctx = ToolContext(actor="agent", session_id=session.id, message_id=message_id, origin=FLUSH)
                outcome = tools.dispatch(call.name, call.arguments, ctx)
                session.manager.notify_memory_write(
                    call.arguments, outcome, {"session_id": session.id, "write_origin": FLUSH}
                )
            result.actions.append({"name": call.name, "arguments": call.arguments, "result": outcome})
            session.emit_tool_result(
                call, outcome, flush=True, preview=json.dumps(outcome, ensure_ascii=False, default=str)[:400]
            )
    except Exception as exc:  # the compression must go ahead whatever happened here
        log.warning("memory flush failed: %s", exc)
        result.error = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
    session.emit("flush_finished", **result.to_dict())
    return result
