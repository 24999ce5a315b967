"""What every model backend speaks: OpenAI-style chat messages in, a ``ModelReply`` out.

Messages are plain dicts in the chat-completions shape (``role``, ``content``,
``tool_calls`` as ``[{"id", "type": "function", "function": {"name", "arguments"}}]``,
``tool_call_id`` on tool results), so the same transcript goes to the offline model,
a scenario and a real endpoint without translation.
"""

from __future__ import annotations

import json
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import WorkbenchError

# Marks the request a compression makes, so rule-based models can answer it extractively.
SUMMARY_INSTRUCTION = (
    "Summarise the conversation turns above for a handoff. Keep the user's goals, stated preferences, "
    "decisions, completed actions with their tools, and open questions. Write plain prose and short lists."
)


# session_search recaps (auxiliary.session_search): one request per past session found.
RECAP_SYSTEM = (
    "You write short recaps of past conversations so an assistant can recall them. From the transcript excerpt, "
    "say what the user wanted, what was done or decided, and any exact details (commands, file names, numbers) "
    "that matter for the search topic. Past tense, a few sentences, no preamble."
)


# The background review's requests (the runner sends them, rule-based models recognise them).
MEMORY_REVIEW_PROMPT = (
    "Review the conversation above and consider saving to memory if appropriate. Focus on: 1. what the user "
    "revealed about themselves (persona, preferences, personal details worth remembering); 2. how they expect you "
    "to behave or work. If something stands out, save it with the memory tool. If nothing is worth saving, say "
    "'Nothing to save.' and stop."
)
SKILL_REVIEW_PROMPT = (
    "Review the conversation above and update the skill library. If a multi-step procedure was repeated or a "
    "technique emerged that will be needed again, capture it as a class-level skill with skill_manage (patch an "
    "existing skill before creating a new one; check skills_list first). If nothing is worth saving, say "
    "'Nothing to save.' and stop."
)
# The memory flush before a compression (one call, only the memory tool offered).
FLUSH_PROMPT = (
    "[System note: this conversation is about to be compressed, and the turns above will be replaced by a short "
    "summary. Before that happens, save with the memory tool whatever will still matter in later sessions: the "
    "user's preferences and corrections, who they are, and recurring patterns, rather than details of the current "
    "task. If nothing qualifies, reply 'Nothing to save.']"
)
REVIEW_TOOLS_NOTE = "You can only call memory and skill management tools. Other tools will be denied at runtime."
LIVE_MEMORY_HEADING = "Memory entries on disk now (read-only view; the system prompt shows them as the session began):"


class ModelError(WorkbenchError):
    """The model could not answer (auth, network, protocol); the message says what to fix."""


_call = threading.local()  # the model call running in this thread: whether its caller left it


def caller_left() -> bool:
    """Whether the turn that made the model call running in this thread has left it (esc: the runner's
    ``leavable``). A retry then is for no one, and spends the endpoint's tokens."""
    left = getattr(_call, "left", None)
    return left is not None and left()


def leavable_here(left: Callable[[], bool]) -> None:
    """Say, in a model call's own thread, how ``caller_left`` learns that its caller left it."""
    _call.left = left


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str | None = None  # set when the model sent arguments that are not a JSON object

    def to_message(self) -> dict[str, Any]:
        args = self.raw_arguments if self.raw_arguments is not None else json.dumps(self.arguments, ensure_ascii=False)
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": args}}


@dataclass
class ModelReply:
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: dict[str, int] | None = None  # prompt_tokens / completion_tokens when the backend reports them

    def to_message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [call.to_message() for call in self.tool_calls]
        return message


class Model(ABC):
    """A chat model. ``complete`` is the one required call; ``summarise`` backs compression."""

    name = "model"
    streams = False  # True: a ``StreamingModel`` whose ``complete`` hands text to ``on_delta`` as it arrives

    @abstractmethod
    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        """One chat-completions call: the conversation and tool schemas in, a reply out."""

    def summarise(self, messages: list[dict[str, Any]]) -> str:
        """Summarise the turns a compression drops (default: ask the model itself)."""
        prompt = f"{serialise_turns(messages)}\n\n{SUMMARY_INSTRUCTION}"
        return self.complete([{"role": "user", "content": prompt}], []).content.strip()

    def recap(self, topic: str, transcript: str) -> str:
        """A short recap of one past session's excerpt, focused on ``topic`` (session_search recaps)."""
        prompt = (
            f"Search topic: {topic}\n\nTRANSCRIPT EXCERPT:\n{transcript}\n\nRecap it with the search topic in mind."
        )
        return self.complete(
            [{"role": "system", "content": RECAP_SYSTEM}, {"role": "user", "content": prompt}], []
        ).content.strip()

    def close(self) -> None:  # noqa: B027 - optional hook, not abstract
        """Release network clients; nothing to do for local models."""


class StreamingModel(Model):
    """A model that can hand its reply's text to ``on_delta`` piece by piece (while ``streams`` is on)."""

    @abstractmethod
    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_delta: Callable[[str], None] | None = None,
    ) -> ModelReply:
        """One chat-completions call; with ``on_delta`` the text also arrives through it as it is made."""


def parse_arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """Decode tool-call arguments; anything but a JSON object is kept raw so the runner can report it."""
    if isinstance(raw, dict):
        return raw, None
    if raw in (None, ""):
        return {}, None
    try:
        value = json.loads(raw)
    except (TypeError, ValueError, RecursionError):
        return {}, str(raw)
    return (value, None) if isinstance(value, dict) else ({}, str(raw))


def serialise_turns(messages: list[dict[str, Any]], limit: int = 4000) -> str:
    """One line block per message, long contents cut (head and tail kept), for summary prompts."""
    lines = []
    for message in messages:
        content = str(message.get("content") or "")
        if len(content) > limit:
            content = f"{content[: limit * 2 // 3]} [...] {content[-limit // 4 :]}"
        calls = ", ".join(c["function"]["name"] for c in message.get("tool_calls") or [])
        label = message.get("role", "?").upper() + (f" [tools: {calls}]" if calls else "")
        if message.get("role") == "tool":
            label = f"TOOL RESULT ({message.get('tool_name') or message.get('name') or '?'})"
        lines.append(f"{label}: {content}")
    return "\n\n".join(lines)


def last_user_index(messages: list[dict[str, Any]]) -> int:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "user":
            return index
    return -1
