"""Memory adds and replaces a person rejected, which the agent does not propose again.

Told the same fact again ("I prefer tabs over spaces", in the next turn or another session), the
agent and its background review proposed the same add again after the user had said no to it,
and it waited in the queue once more (a changed fact's replace too). The memory tool (every model's
turn, review and flush) asks ``refusal`` before an add or a replace (``batch_refusal`` before a batch
holding one); what the user rejected can still be written by hand.
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING, Any

from ..memory.ops import op_text, staged_operations

if TYPE_CHECKING:
    from ..home import Home


def same_text(text: str) -> str:
    """What two proposals must share to be the same: the text as the user reads it, so width, case,
    spacing and a final full stop (CJK's 。 too: the offline model ends CJK text with it, Hermes need
    not) do not make a rejected fact new."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split()).rstrip(".。").rstrip()


def rejected_write(home: Home, action: str, target: str, content: str, old_text: str = "") -> str | None:
    """The pending id of a rejected ``action`` (add, or replace of ``old_text``) writing ``content`` to memory
    ``target``, if any (newest): a proposal of that write alone, or a batch holding it (its entries were
    proposed again one by one once the batch was rejected)."""
    wanted = (action, target, same_text(content), same_text(old_text))
    found = [
        pending
        for pending, payload in home.journal.rejected_payloads("memory")
        for op in staged_operations(payload)
        if isinstance(op, dict)
        and (
            op.get("action"),
            payload.get("target", "memory"),
            same_text(op_text(op, "content")),
            same_text(op_text(op, "old_text")),
        )
        == wanted
    ]
    return found[-1] if found else None


def refusal(home: Home, action: str, target: str, content: str, old_text: str = "") -> dict[str, Any] | None:
    """The memory tool's result for an add or replace the user rejected (nothing is staged or written);
    None when it was never rejected."""
    pending = rejected_write(home, action, target, content, old_text)
    if pending is None:
        return None
    return {
        "success": False,
        "rejected_before": pending,
        "error": f"Not proposed again: the user rejected this same {action} before (proposal {pending}). "
        f"Do not retry it. To keep it after all, a person writes it by hand: workbench memory {action} "
        f"--target {target}{' --old OLD' if action == 'replace' else ''} TEXT, or on the Memory screen.",
    }


def batch_refusal(home: Home, target: str, operations: Any) -> dict[str, Any] | None:
    """The memory tool's result for a batch holding an add or replace the user rejected: refused whole, as a
    batch is applied all or nothing (one such operation among others was staged again); None otherwise."""
    for number, op in enumerate(operations if isinstance(operations, list) else [], 1):
        action = op.get("action") if isinstance(op, dict) else None
        if action in ("add", "replace") and (content := op_text(op, "content")):
            if refused := refusal(home, action, target, content, op_text(op, "old_text")):
                error = f"Operation {number}: {refused['error']} No operations were applied (batch is all-or-nothing)."
                return {**refused, "error": error}
    return None
