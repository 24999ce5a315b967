"""Memory adds a person rejected, which the agent does not propose again.

Told the same fact again ("I prefer tabs over spaces", in the next turn or another session), the
agent and its background review proposed the same add again after the user had said no to it,
and it waited in the queue once more. The memory tool (every model's turn, review and flush)
asks ``refusal`` before an add; what the user rejected can still be added by hand.
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..home import Home


def same_text(text: str) -> str:
    """What two proposals must share to be the same: the text as the user reads it, so width, case,
    spacing and a final full stop do not make a rejected fact new."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split()).rstrip(".")


def rejected_add(home: Home, target: str, content: str) -> str | None:
    """The pending id of a rejected add of ``content`` to memory ``target``, if any (newest)."""
    wanted = same_text(content)
    found = [
        pending
        for pending, payload in home.journal.rejected_payloads("memory")
        if payload.get("action") == "add"
        and payload.get("target", "memory") == target
        and same_text(str(payload.get("content", ""))) == wanted
    ]
    return found[-1] if found else None


def refusal(home: Home, target: str, content: str) -> dict[str, Any] | None:
    """The memory tool's result for an add of what the user rejected (nothing is staged or written);
    None when it was never rejected."""
    pending = rejected_add(home, target, content)
    if pending is None:
        return None
    return {
        "success": False,
        "rejected_before": pending,
        "error": f"Not proposed again: the user rejected this same add before (proposal {pending}). "
        f"Do not retry it. To keep it after all, a person adds it by hand: workbench memory add --target "
        f"{target} TEXT, or a on the Memory screen.",
    }
