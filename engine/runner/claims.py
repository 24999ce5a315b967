"""Unbacked claims: an answer that says it saved or will remember something, in a turn that wrote nothing.

A turn is a user message and everything up to the next one. It is backed when one of
its tool results is a memory or skill write that succeeded or was staged; otherwise an
assistant message in it claiming a save ("I'll remember that", "Saved to memory") is
an unbacked claim. The runner flags it as it happens; transcripts and ``sessions show``
mark and count it from the stored messages, so sessions written elsewhere are checked
too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

WRITE_TOOLS = ("memory", "skill_manage")
CLAIM_RE = re.compile(
    r"\b(?:i'll|i will|i'm going to|i am going to)\s+(?:make sure to\s+|also\s+)?"
    r"(?:remember|memori[sz]e|save|store|note|record|keep in mind)\b"
    r"|\b(?:i've|i have|i)\s+(?:also\s+|now\s+)?(?:saved|stored|noted|recorded|remembered|memori[sz]ed)\b"
    r"|\b(?:saved|stored|added|written|noted)\s+(?:it\s+|that\s+|this\s+)?(?:to|in|into)\s+(?:my\s+|your\s+|the\s+)?"
    r"(?:memory|memories|user profile|profile|notes|skills?)\b"
    r"|\bmemory (?:updated|saved)\b",
    re.I,
)
_CONDITIONAL = re.compile(r"\b(?:ask me to|tell me to|want me to|should i|shall i|can i|could i)\b[^.?!]*$", re.I)


def claims_a_save(text: str) -> bool:
    """Whether ``text`` says something was (or will be) saved or remembered."""
    for match in CLAIM_RE.finditer(text or ""):
        if not _CONDITIONAL.search(text[: match.start()].rsplit(".", 1)[-1]):
            return True
    return False


def _wrote(tool_name: str | None, content: Any) -> bool:
    if tool_name not in WRITE_TOOLS:
        return False
    try:
        result = json.loads(content) if isinstance(content, str) else content
    except (ValueError, RecursionError):  # not JSON, or nested past Python's stack
        return False
    return isinstance(result, dict) and (result.get("success") is True or bool(result.get("staged")))


def _field(message: Any, key: str) -> Any:
    """A message dict's value or a stored message's attribute (None when it has none)."""
    return message.get(key) if isinstance(message, dict) else getattr(message, key, None)


def unbacked_claims(messages: Iterable[Any]) -> list[Any]:
    """The ids of assistant messages making an unbacked claim, over stored messages (``role``, ``content``,
    ``tool_name``, ``id`` attributes) or message dicts (then their positions)."""
    found: list[Any] = []
    turn: list[tuple[Any, str]] = []  # (id, text) of the claims in the current turn
    backed = False

    def close() -> None:
        if not backed:
            found.extend(ident for ident, _ in turn)

    for position, message in enumerate(messages):
        role, content = _field(message, "role"), _field(message, "content")
        if role == "user":
            close()
            turn, backed = [], False
        elif role == "tool":
            backed = backed or _wrote(_field(message, "tool_name"), content)
        elif role == "assistant" and isinstance(content, str) and claims_a_save(content):
            turn.append((position if isinstance(message, dict) else _field(message, "id"), content))
    close()
    return found
