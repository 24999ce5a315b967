"""The scripted model: plays the exact replies a scenario file prescribes for each turn.

The scenario runner hands it the script of the turn about to run; each model call in
that turn returns the next scripted reply (tool calls and/or an answer). A turn with
no script, a script that runs out, background reviews, memory flushes and compression
summaries fall back to the offline model, so a scenario only spells out what it needs to pin down.
"""

from __future__ import annotations

from typing import Any

from .base import FLUSH_PROMPT, Model, ModelReply, ToolCall, last_user_index
from .offline import OfflineModel


class ScriptedModel(Model):
    name = "scripted"

    def __init__(self) -> None:
        self.fallback = OfflineModel()
        self._script: list[dict[str, Any]] = []
        self._turn_label = ""

    def play(self, script: list[dict[str, Any]] | None, label: str = "") -> None:
        """Use ``script`` (a list of reply steps) for the next turn; ``None`` lets the offline model answer."""
        self._script = list(script or [])
        self._turn_label = label

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        index = last_user_index(messages)
        replies_so_far = sum(1 for m in messages[index + 1 :] if m.get("role") == "assistant")
        if index < 0 or replies_so_far >= len(self._script) or self._is_review(messages[index]):
            return self.fallback.complete(messages, tools)
        step = self._script[replies_so_far]
        calls = [
            ToolCall(f"{self._turn_label}call_{replies_so_far + 1}_{n}", call["name"], dict(call.get("args") or {}))
            for n, call in enumerate(step.get("tool_calls") or [], 1)
        ]
        return ModelReply(content=str(step.get("answer") or ""), tool_calls=calls)

    @staticmethod
    def _is_review(message: dict[str, Any]) -> bool:
        """A background review's or a memory flush's request: never part of a turn's script."""
        content = str(message.get("content") or "")
        return content.startswith("Review the conversation above") or content == FLUSH_PROMPT

    def summarise(self, messages: list[dict[str, Any]]) -> str:
        return self.fallback.summarise(messages)
