"""Edit-then-approve: what text of a proposal a reviewer edits, and what an edited memory batch leaves.

A memory add or replace is edited as its entry's text; a skill create, edit, write_file
or patch as the text it writes. A memory batch is edited as one text holding the text of
each of its adds and replaces, in order, separated as entries are in the memory files
(a line holding only ``§``), the rule ``approve --edit`` applies (``ops.edit_batch``); its
removes apply as staged. A remove, a skill delete or remove_file and a consolidation plan
hold no text, and the reason says what they hold instead.

Plain data only; the TUI and the CLI render it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..counts import counted
from ..memory import ops
from ..memory.budget import Budget, hermes_blocked
from ..memory.format import ENTRY_DELIMITER, size_of, split_pieces
from ..memory.similar import closest, near_duplicates, strongest
from ..skills.library import EDITABLE_SLOTS
from ..textsafety import flat_line

QUOTED = 30  # characters of an entry named in a note
NAMED = 3  # operations of a batch a note names one by one


@dataclass(frozen=True)
class EditDraft:
    """The text an editor opens with (None: the proposal holds none) and a note for the reviewer:
    how the text is read back, or why there is nothing to edit."""

    text: str | None
    note: str = ""


@dataclass(frozen=True)
class BatchDraft:
    """A memory batch as approving it with a draft would apply it."""

    entries: list[str] | None  # the store's entries afterwards; None when the draft would be refused
    problem: str = ""  # why it would be refused, when it would
    duplicates: list[dict] = field(default_factory=list)  # ``near_duplicates`` of the draft's texts


def edit_draft(subsystem: str, payload: Any, preview: dict[str, Any] | None = None) -> EditDraft:
    """What edit-then-approve opens for a proposal of ``subsystem`` with this payload; ``preview``, its
    ``ApprovalQueue.preview`` when shown: nothing, with why, where no edit could make it apply (a skill
    patch whose old text is gone from its file: ``edit_refusal``)."""
    if preview and isinstance(refusal := preview.get("edit_refusal"), str):
        return EditDraft(None, refusal)
    payload = payload if isinstance(payload, dict) else {}
    action = payload.get("action")
    if subsystem == "skills":
        if action == "consolidate":
            return EditDraft(
                None, "A consolidation plan cannot be edited (it merges several skills); approve or reject it as it is."
            )
        slot = EDITABLE_SLOTS.get(action) if isinstance(action, str) else None
        text = payload.get(slot) if slot else None
        return EditDraft(text) if isinstance(text, str) else _none(f"A skill {action or 'write'}")
    if action == "batch":
        return _batch_draft(ops.staged_operations(payload))
    if action in ("add", "replace"):
        text = payload.get("content") or payload.get("new_text")
        return EditDraft(text) if isinstance(text, str) else _none(f"This {action}")
    return _none(f"A {action or 'write'}")


def _none(what: str) -> EditDraft:
    return EditDraft(None, f"{what} has no text to edit; approve or reject it as it is.")


def _batch_draft(operations: list[Any]) -> EditDraft:
    named = "; ".join(map(_described, operations[:NAMED]))
    more = f"; and {len(operations) - NAMED} more" if len(operations) > NAMED else ""
    holds = f"This batch holds {counted(len(operations), 'operation')}: {named}{more}."
    try:  # (no edit of its texts gets a batch this long applied: refused before they are joined into a draft)
        ops.check_batch_size(operations)
    except ops.Refusal as refusal:
        return EditDraft(None, f"{holds} {refusal}")
    texts = [_text(op) for op in operations if _editable(op)]
    if not texts:
        return EditDraft(None, f"{holds} It {ops.REMOVES_ONLY}")
    others = len(operations) - len(texts)
    rest = {0: "", 1: " The other operation applies as staged."}.get(
        others, f" The other {others} operations apply as staged."
    )
    if len(texts) == 1:
        action = next(op["action"] for op in operations if _editable(op))
        return EditDraft(texts[0], f"{holds} Below is the text of its {action}.{rest}")
    return EditDraft(
        ENTRY_DELIMITER.join(texts),
        f"{holds} Below are the texts of its {len(texts)} adds and replaces, in order, each separated from the next "
        f"by a line holding only §: keep one text for each.{rest}",
    )


def _editable(op: Any) -> bool:
    return isinstance(op, dict) and op.get("action") in ("add", "replace")


def _text(op: dict[str, Any]) -> str:
    text = op.get("content") or op.get("new_text")
    return text if isinstance(text, str) else ""


def _described(op: Any) -> str:
    """One operation for a note: ``add``, ``replace 'old…'``, ``remove 'old…'``."""
    if not isinstance(op, dict):
        return "an unreadable operation"
    action = op.get("action")
    target = op.get("matched_entry") if isinstance(op.get("matched_entry"), str) else op.get("old_text")
    named = f" '{flat_line(target, QUOTED)}'" if isinstance(target, str) and action in ("replace", "remove") else ""
    return f"{action if isinstance(action, str) else 'unknown'}{named}"


def batch_draft(payload: dict[str, Any], before: list[str], draft: str, threshold: float | None = None) -> BatchDraft:
    """The entries a memory batch leaves once approved with ``draft`` for its texts, applied to
    ``before`` (the store now) as approval applies it, without the limit, so the size shows however
    far over it goes. ``problem`` says why the draft would be refused as it stands (another number
    of texts than the batch adds and replaces, an entry it targets gone)."""
    try:
        operations = ops.edit_batch(payload.get("operations"), draft)
        after = ops.batch(list(before), operations, sys.maxsize, payload.get("target") or "memory").entries
    except ops.Refusal as refusal:
        return BatchDraft(None, str(refusal.result.get("error") or "refused"))
    removed = [entry for entry in before if entry not in after]
    found = near_duplicates(split_pieces(draft), before, threshold, ignore=removed) if threshold else []
    return BatchDraft(list(after), duplicates=found)


def batch_budget(
    payload: dict, entries: list[str], limit: int, threshold: float | None = None
) -> Callable[[str], Budget]:
    """A memory batch's budget once approved with a draft for its texts (``batch_draft``);
    a draft that would be refused leaves the store as it is, and says why."""

    def budget(draft: str) -> Budget:
        found = batch_draft(payload, entries, draft, threshold)
        after = entries if found.entries is None else found.entries
        named, more = strongest(found.duplicates)
        texts = split_pieces(draft)
        longest = max(texts, key=len, default="")
        kept = [e for e in after if e not in texts]
        similar = tuple(closest(longest, kept, n=2)) if longest else ()
        same = tuple(d["existing"] for d in named)
        return Budget(size_of(after), limit, similar, 0, same, more, found.problem, hermes_blocked(texts))

    return budget
