"""Context compression: summarise the middle of a conversation that outgrew its budget.

The head (first messages) and the tail (the most recent, sized by a token budget, at
most half of the rest, and always holding the last user message) are kept verbatim; everything between them is
replaced by one summary message. A tool call and its results always stay together,
on the same side of a boundary. Token counts are model-independent estimates
(characters / 4) unless the model reported real usage.

Thresholds are plain ``compression.threshold * model.context_length``; Hermes's extra
floors (75 % and 64K tokens) are left out so small local models compress too.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..models.base import Model

log = logging.getLogger(__name__)

SUMMARY_PREFIX = (
    "[CONTEXT COMPACTION \u2014 REFERENCE ONLY] Earlier turns were compacted into the summary below. "
    "It is background, not a new request; the messages after it continue the conversation.\n\n"
)
SUMMARY_SUFFIX = "\n\n--- END OF CONTEXT SUMMARY \u2014 respond to the message below, not the summary above ---"
PROMPT_NOTE = (
    "[Note: Some earlier conversation turns have been compacted into a handoff summary to save context "
    "space. Your persistent memory (MEMORY.md, USER.md) remains fully authoritative regardless of compaction.]"
)
FALLBACK_PER_TURN = 300
MIN_TAIL = 3


def message_chars(message: dict[str, Any]) -> int:
    size = len(str(message.get("content") or ""))
    if message.get("tool_calls"):
        size += len(json.dumps(message["tool_calls"], ensure_ascii=False))
    return size


def estimate_tokens(system_prompt: str, messages: list[dict[str, Any]], tools: Sequence[dict[str, Any]] = ()) -> int:
    """Characters / 4 over the whole request (system prompt, messages, tool schemas)."""
    chars = len(system_prompt) + sum(message_chars(m) for m in messages)
    chars += len(json.dumps(list(tools), ensure_ascii=False)) if tools else 0
    return chars // 4


def threshold_tokens(config) -> int:
    return max(1, int(config.float("compression.threshold") * config.int("model.context_length")))


def is_summary(message: dict[str, Any]) -> bool:
    return str(message.get("content") or "").startswith(SUMMARY_PREFIX[:30])


@dataclass
class Compaction:
    head: list[dict[str, Any]]
    summary: dict[str, Any]
    tail: list[dict[str, Any]]
    dropped: int

    @property
    def messages(self) -> list[dict[str, Any]]:
        return [*self.head, self.summary, *self.tail]


def boundaries(messages: list[dict[str, Any]], protect_first_n: int, tail_budget: int) -> tuple[int, int] | None:
    """(end of head, start of tail), or None when there is no middle worth summarising."""
    head_end = min(max(0, protect_first_n), len(messages))
    while head_end < len(messages) and messages[head_end].get("role") == "tool":
        head_end += 1
    tail_start, spent = len(messages), 0
    max_tail = max(MIN_TAIL, (len(messages) - head_end) // 2)  # always leave a middle worth summarising
    while tail_start > head_end:
        cost = message_chars(messages[tail_start - 1]) // 4
        kept = len(messages) - tail_start
        if kept >= max_tail or (kept >= MIN_TAIL and spent + cost > tail_budget * 1.5):
            break
        spent += cost
        tail_start -= 1
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=tail_start)
    tail_start = min(tail_start, last_user) if last_user >= head_end else tail_start
    while head_end < tail_start < len(messages) and messages[tail_start].get("role") == "tool":
        tail_start -= 1  # never separate tool results from the call that asked for them
    if tail_start - head_end < 2:
        return None
    return head_end, tail_start


def fallback_summary(middle: list[dict[str, Any]]) -> str:
    """Used when the model cannot summarise: each dropped message, cut short."""
    lines = [
        f"{m.get('role', '?')}: {str(m.get('content') or '')[:FALLBACK_PER_TURN]}" for m in middle if m.get("content")
    ]
    return "Summary unavailable; the compacted turns began:\n" + "\n".join(lines)[:8000]


def plan(messages: list[dict[str, Any]], *, protect_first_n: int, tail_budget: int) -> tuple[int, int] | None:
    """Where a compaction of ``messages`` would cut (see ``boundaries``); None when it would not."""
    if any(is_summary(m) for m in messages):
        protect_first_n = 0  # after the first compaction the head decays, as in Hermes
    return boundaries(messages, protect_first_n, tail_budget)


def compact(messages: list[dict[str, Any]], model: Model, cut: tuple[int, int]) -> Compaction:
    """Summarise the middle of ``messages`` between the ``cut`` that ``plan`` chose."""
    head, middle, tail = messages[: cut[0]], messages[cut[0] : cut[1]], messages[cut[1] :]
    try:
        summary_text = model.summarise(middle).strip() or fallback_summary(middle)
    except Exception as exc:  # a failed summary must not lose the conversation
        log.warning("compression summary failed (%s); using the fallback summary", exc)
        summary_text = fallback_summary(middle)
    role = "user" if not head or head[-1].get("role") in ("assistant", "tool") else "assistant"
    if tail and tail[0].get("role") == role:
        flipped = "assistant" if role == "user" else "user"
        if not head or head[-1].get("role") != flipped:
            role = flipped
    summary = {"role": role, "content": SUMMARY_PREFIX + summary_text + SUMMARY_SUFFIX}
    return Compaction(head=list(head), summary=summary, tail=list(tail), dropped=len(middle))
