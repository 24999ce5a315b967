"""What a reviewer needs to judge a proposal: a line diff and near-duplicate warnings.

Plain data only (lists and dicts); the TUI and the CLI render it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from ..clock import shown_time
from ..diffs import DiffLine, line_diff
from ..memory.format import Usage, serialize, split_pieces
from ..memory.ops import staged_operations
from ..memory.similar import near_duplicates
from ..textsafety import flat_line, inline


def entry_diff(before: list[str], after: list[str], rewrites: Collection[tuple[str, str]] = ()) -> list[DiffLine]:
    """A memory file's diff entry by entry: whole entries kept, removed or added, each line of
    them marked, with the ``§`` line between entries as context. A line diff of the file text
    could pair lines of unrelated entries, so a batch that removes one entry and adds another
    read as if a third one were removed and written again. An entry a replace wrote in the place
    of the one just removed (a pair in ``rewrites``) follows it with no ``§`` between, so it reads
    as one entry changed; a remove and an unrelated add stay two entries."""
    lines: list[DiffLine] = []

    def entry(kind: str, text: str, *, in_place: bool = False) -> None:
        if lines and not in_place:
            lines.append((" ", "§"))
        lines.extend((kind, line) for line in text.split("\n"))

    for op, i1, i2, j1, j2 in SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if op == "equal":
            for text in before[i1:i2]:
                entry(" ", text)
            continue
        added = list(after[j1:j2])
        for text in before[i1:i2]:
            entry("-", text)
            rewrite = next((new for new in added if (text, new) in rewrites), None)
            if rewrite is not None:  # its rewrite straight after it: one entry changed
                added.remove(rewrite)
                entry("+", rewrite, in_place=True)
        for text in added:
            entry("+", text)
    return lines


def diff_stats(lines: Iterable[DiffLine]) -> dict[str, int]:
    kinds = [kind for kind, _ in lines]
    return {"added": kinds.count("+"), "removed": kinds.count("-")}


def proposed_texts(payload: dict, edit: str | None) -> list[str]:
    """The entry texts a memory proposal would write (``edit`` stands in for its texts:
    a single op's, or a batch's one per entry)."""
    if edit is not None:
        return split_pieces(edit) if payload.get("action") == "batch" else [edit.strip()]
    texts = []
    for op in staged_operations(payload):
        if isinstance(op, dict) and op.get("action") in ("add", "replace"):
            text = op.get("content") or op.get("new_text")
            if isinstance(text, str) and text.strip():
                texts.append(text.strip())
    return texts


def memory_view(staged: dict, payload: dict, edit: str | None, limit: int, threshold: float) -> dict:
    """The store file's text before and after, its diff, the budget afterwards, and duplicate warnings."""
    before, after = list(staged["before_entries"]), list(staged["after_entries"])
    before_text, after_text = serialize(before), serialize(after)
    usage = Usage.of(after, limit)
    removed = [entry for entry in before if entry not in after]
    return {
        "target": staged["target"],
        "before": before,
        "after": after,
        "before_text": before_text,
        "after_text": after_text,
        "diff": entry_diff(before, after, {(old, new) for old, new in staged.get("rewrites", [])}),
        "budget": usage.to_dict(),
        "targets": staged.get("targets", []),
        "duplicates": near_duplicates(proposed_texts(payload, edit), before, threshold, ignore=removed),
    }


def budget_label(preview: dict, *, why: bool = True) -> str:
    """What a memory preview's budget is, in the words of the decision approval would make (the rule
    approval runs made the preview): the store if approved; for one approval would refuse as over the
    limit, that it would be refused and by how much (its ``error`` says the rest); for one that adds an
    entry already there, that nothing changes. Both skins head the gauge with it, short enough for the
    pane's title: "if approved" over a store past its limit read as though approving would get it there.
    ``why`` False: the decision alone (``would be refused``), for a title too narrow for the rest."""
    budget = preview.get("budget") or {}
    if preview.get("error"):
        over = int(budget.get("chars", 0)) - int(budget.get("limit", 0))
        return "would be refused" + (f": over by {over:,}" if over > 0 and why else "")
    if preview.get("before") == preview.get("after"):  # (an add of an entry already there: approved, no change)
        there = any(dup.get("exact") for dup in preview.get("duplicates") or [])
        return "no change" + (": already there" if there and why else "")
    return "if approved"


def skill_view(staged: dict) -> dict:
    """The changed file of the skill (SKILL.md or a supporting file) before and after, and its diff."""
    before, after = staged.get("before"), staged.get("after")
    diff = staged.get("diff") or line_diff(before or "", after or "")
    if staged.get("removes"):  # a delete: every file it removes (the first 200), then SKILL.md's lines
        more = staged.get("removes_more") or 0
        listed = [(" ", f"=== delete {inline(path)}") for path in staged["removes"]]
        diff = listed + ([(" ", f"=== and {more:,} more files")] if more else []) + diff
    view = {
        "name": staged.get("name"),
        "file": staged.get("file"),
        "path": staged.get("path"),
        "before_text": before,
        "after_text": after,
        "diff": diff,
    }
    for key in (
        "files",
        "absorbed",
        "moves",
        "dropped",
        "reason",
        "cron",
        "folder_stamp",
        "stale",
        "umbrella",
    ):  # (a plan: many files)
        if key in staged:
            view[key] = staged[key]
    return view


def target_line(target: dict, width: int | None = None, *, warn: bool = True) -> str:
    """Which live entry one replace or remove hits (``op N`` only matters in a batch), each entry on one
    line as a summary shows it (``flat_line``: a line break as ⏎), cut to ``width`` characters when given;
    ``warn``: with a warning line when the entry it hits was written after staging (off where the caller
    says that itself)."""
    head = f"op {target['op']} {target['action']}"
    if target["status"] == "hits":
        newer = target.get("written_after") if warn else None
        warning = (
            f"\n  ⚠ that entry {'was' if newer['surely'] else 'may have been'} written after this was staged "
            f"({shown_time(newer['at']) or newer['at']}, {newer['actor']}, event {newer['event_id']}): it may not be "
            "the entry the proposal meant"
            if newer
            else ""
        )
        return f"{head} hits: {flat_line(target['entry'], width)}{warning}"
    if target["status"] == "ambiguous":
        matches = len(target["matches"])
        return f"{head} '{flat_line(target['old_text'], width)}' is ambiguous, it matches {matches} entries"
    if target["pinned"] is not None:
        return f"{head} was staged against an entry that is gone: {flat_line(target['pinned'], width)}"
    return f"{head} '{flat_line(target['old_text'], width)}' matches no entry now"


def seen_entries(targets: list[dict]) -> dict[int, str]:
    """The entry each replace or remove of a preview's ``targets`` hits, by operation number."""
    return {t["op"]: t["entry"] for t in targets if t.get("status") == "hits" and isinstance(t.get("entry"), str)}


@dataclass(frozen=True)
class Seen:
    """What an approver was shown that approving must still find, or it is refused and stays pending:
    the entry each memory replace or remove hits (by operation number), and the files a skill delete
    removes (``folder``: their stamp, ``preview``'s ``folder_stamp``)."""

    entries: dict[int, str] = field(default_factory=dict)
    folder: str | None = None
    refused: bool = False  # shown as refused now (it stays pending, the question said): never applied on it
    checked: bool = False  # not shown to anyone: found by the approval's own check (``ApprovalQueue.approve``)


def seen_in(preview: dict) -> Seen:
    """What a question built from ``preview`` showed, to pass to ``approve`` as ``seen``."""
    return Seen(seen_entries(preview.get("targets") or []), preview.get("folder_stamp"), bool(refusal_now(preview)))


def refusal_now(preview: dict) -> str | None:
    """Why approving now would be refused (None: it would apply, or, for a skill's after an earlier
    proposal that changes that skill first, it may)."""
    refusal = preview.get("error") or preview.get("stale")  # (stale: the write goes, but over a later change)
    return None if not refusal or preview.get("after_earlier") else str(refusal)
