"""How a proposal that left the queue outside the workbench left it: approved, rejected, or not known.

Hermes's ``/memory approve`` applies a staged write (its text stripped, as its store does)
and only then deletes the record; ``reject`` just deletes it. The workbench sees a record
gone with no decision of its own and journals one (``ApprovalQueue._decided_outside``).
Memory's outside edits are journaled first, so the edits since staging are the evidence:
the ``approve`` row cites those that made its changes (``detail.applied_rows``), each
cited once, and the Timeline finds an outside edit's approval (and so the call that
staged it) through that list.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any

from ..curator.ledger import sha256
from ..errors import WorkbenchError
from ..fileio import UnsafePath
from ..memory.archive_writes import changes
from ..memory.similar import score
from ..memory.targets import TARGETS
from ..values import number_value
from .outside_skills import skill_outcome

if TYPE_CHECKING:
    from ..home import Home
    from ..journal import JournalEntry

LEFT_OUTSIDE = "it left the queue outside the workbench"
MEMORY_ACTIONS = ("add", "replace", "remove")
EDITS_READ = 1000  # outside edits since staging read as evidence, oldest first
# the outside memory rows outside approvals cite: (approval row, its pending id, cited row) each
_CITED = (
    "SELECT journal.id, journal.target, cited.value FROM journal, json_each(CASE WHEN json_valid(journal.detail) "
    "THEN journal.detail ELSE '{}' END, '$.applied_rows') AS cited "
    "WHERE subsystem = 'approvals' AND action = 'approve' AND actor = 'external'"
)


def outcome(home: Home, staged: JournalEntry, claimed: set[int]) -> tuple[str, str, list[int]]:
    """The decision row's action, why, and the outside memory rows that wrote the proposal.

    Approved when each change it proposed is such a row, or is in memory as it is now (at
    least one a row). Rejected when memory shows none of them and nothing written outside
    since is close to them. Else, and for anything but a memory add, replace, remove or
    batch of them, closed: whether it was applied is not known (a duplicate Hermes accepted
    as a no-op, an approved entry edited before a workbench process looked). A skill proposal is
    judged by the library as it is now (``outside_skills``)."""
    created = number_value(staged.detail.get("created_at"))
    since = staged.at if created is None else created
    payload = staged.detail.get("payload")
    if staged.detail.get("subsystem") == "skills" and isinstance(payload, dict):
        present = staged.detail.get("present")
        if not isinstance(present, bool):  # a record of ours was checked against the library when staged
            present = True if staged.detail.get("staged_by") == "workbench" else None
        action, why = skill_outcome(home, payload, since, LEFT_OUTSIDE, present)
        return action, why, _skill_rows(home, payload, since, claimed) if action == "approve" else []
    proposed = _proposed_changes(staged.detail)
    if proposed is None:
        return "close", f"{LEFT_OUTSIDE}; whether it was applied is not known", []
    target, changes = proposed
    edits = home.journal.query(
        subsystem="memory",
        target=target,
        actor="external",
        actions=MEMORY_ACTIONS,
        since=since,
        limit=EDITS_READ,
        oldest_first=True,  # the likeliest evidence
    )
    rows = [row for row in edits if row.id not in claimed]
    candidates = _not_rewrites(rows, changes)
    evidence: list[int] = []
    made = 0  # proposed changes an outside row made
    for action, text, old in sorted(changes, key=lambda change: change[0] == "remove"):  # (removes last: below)
        row = next((r for r in candidates if r.id not in evidence and _writes(action, text, r)), None)
        if row is None and action == "remove":  # an add of the same proposal that holds the entry whole was paired
            row = next((r for r in candidates if r.id in evidence and _extended(text, r)), None)  # with it
            made += row is not None
            continue
        if row is not None:
            made += 1
            evidence.append(row.id)
            if action == "replace" and row.action == "add" and old is not None:  # written past pairing
                evidence += _taken_with(candidates, row, old, evidence)
    try:
        entries = home.memory.entries(target)
    except WorkbenchError:
        return "close", f"{LEFT_OUTSIDE}; the memory file cannot be read to tell whether it was applied", []
    holds = [_holds(action, text, entries) for action, text, _ in changes]
    if evidence and (made == len(changes) or all(holds)):
        return "approve", f"{LEFT_OUTSIDE}, and its change is the outside edit of memory in row {evidence[0]}", evidence
    if any(holds):
        return "close", f"{LEFT_OUTSIDE}; memory holds what it proposed, but no outside edit since wrote it", []
    threshold = home.memory.duplicate_threshold()
    seen = [text for row in rows for text in (row.before, row.after) if isinstance(text, str)]
    if any(score(text, other) >= threshold for _, text, _ in changes for other in seen):
        return "close", f"{LEFT_OUTSIDE}; memory was edited outside since in a way close to it", []
    return "reject", f"{LEFT_OUTSIDE} without its change reaching memory", []


def cited_rows(conn: sqlite3.Connection, pending_ids: list[str] | None = None) -> list[int]:
    """The outside memory rows outside approvals cite (of the proposals ``pending_ids`` only, if given)."""
    return [row for rows in applied_by(conn, pending_ids).values() for row in rows]


def applied_by(conn: sqlite3.Connection, pending_ids: list[str] | None = None) -> dict[str, list[int]]:
    """For each proposal approved outside (of ``pending_ids`` only, if given), the memory rows it wrote."""
    where, args = "", []
    if pending_ids is not None:
        where, args = " AND target IN (SELECT value FROM json_each(?))", [json.dumps(pending_ids)]
    found: dict[str, list[int]] = {}
    for _, pending_id, row in conn.execute(_CITED + where, args):
        if isinstance(row, int):
            found.setdefault(pending_id, []).append(row)
    return found


def citing_approval(conn: sqlite3.Connection, row_id: int) -> int | None:
    """The outside approval that cites the outside memory row ``row_id``, if one does."""
    found = conn.execute(_CITED + " AND cited.value = ? LIMIT 1", (row_id,)).fetchone()
    return found[0] if found else None


def citing_approvals(conn: sqlite3.Connection) -> dict[int, int]:
    """For each outside memory row an outside approval cites, that approval's row id."""
    return {row: approval for approval, _, row in conn.execute(_CITED) if isinstance(row, int)}


def _proposed_changes(detail: dict[str, Any]) -> tuple[str, list[tuple[str, str, str | None]]] | None:
    """The target and the (action, text, old_text) changes a staged memory write proposes, read as
    Hermes applies it (``archive_writes.changes``: stripped; a remove's text the ``old_text`` it looks
    for); None for anything else, or when any of its operations is not one Hermes applies."""
    payload = detail.get("payload")
    if detail.get("subsystem") != "memory" or not isinstance(payload, dict):
        return None
    target = payload.get("target", "memory")
    operations = payload.get("operations") if payload.get("action") == "batch" else [payload]
    if target not in TARGETS or not isinstance(operations, list) or not operations:
        return None
    found = changes({"target": target, "operations": operations})
    if len(found) != len(operations):
        return None
    return target, [(action, text, old) for _, action, text, old in found]


# the outside change of a skill's SKILL.md each approved skill write shows as (the library's rows are per SKILL.md)
_SKILL_CHANGES = {"create": ("created",), "edit": ("edited",), "patch": ("edited",), "delete": ("removed",)}


def _skill_rows(home: Home, payload: dict[str, Any], since: float, claimed: set[int]) -> list[int]:
    """The outside skill row an approved skill write is, when a watching process journaled one since
    staging (the oldest not cited yet): for a create or edit, one that left SKILL.md holding its text,
    for a patch one that left it as it is now (which holds the patch); a hand edit between is never
    it. A patch of a support file, or a write nobody watched, has none."""
    action = payload.get("action")
    changes = _SKILL_CHANGES.get(str(action))
    if changes is None or (action == "patch" and (payload.get("file_path") or "SKILL.md") != "SKILL.md"):
        return []
    content = payload.get("content")
    if action in ("create", "edit"):
        wrote = sha256(content.encode("utf-8")) if isinstance(content, str) else None
        if wrote is None:
            return []
    else:
        wrote = _skill_md_sha(home, str(payload.get("name"))) if action == "patch" else None
        if action == "patch" and wrote is None:
            return []
    rows = home.journal.query(
        subsystem="skills",
        target=str(payload.get("name")),
        actions=("external",),
        since=since,
        limit=EDITS_READ,
        oldest_first=True,
    )
    found = next(
        (
            row.id
            for row in rows
            if row.id not in claimed
            and "file" not in row.detail  # (a support file's row: never the skill's own change)
            and row.detail.get("change") in changes
            and (wrote is None or row.detail.get("sha") == wrote)
        ),
        None,
    )
    return [] if found is None else [found]


def _skill_md_sha(home: Home, name: str) -> str | None:
    """The hash of skill ``name``'s SKILL.md as it is now (None when it cannot be read)."""
    found = home.skills.scanner.named(name)
    if len(found) != 1:
        return None
    try:
        return sha256(home.links.read_bytes(found[0].path / "SKILL.md", inside=found[0].path))
    except (OSError, UnsafePath):
        return None


def _taken_with(rows: list[JournalEntry], added: JournalEntry, old_text: str, cited: list[int]) -> list[int]:
    """The remove row of the entry a replace took out, when the replace was journaled past pairing
    as a remove beside its add (``added``): one of the same outside edit whose entry held ``old_text``."""
    edit = added.detail.get("edit")
    found = next(
        (
            r.id
            for r in rows
            if r.action == "remove"
            and r.id not in cited
            and edit is not None
            and r.detail.get("edit") == edit
            and old_text in (r.before or "")
        ),
        None,
    )
    return [] if found is None else [found]


def _not_rewrites(rows: list[JournalEntry], changes: list[tuple[str, str, str | None]]) -> list[JournalEntry]:
    """``rows`` less each remove whose place an add the proposal did not make took, in the same outside
    edit (``detail.edit``, one ``slot`` between the entries both versions kept): an entry rewritten
    past pairing, which is no evidence that a remove was approved. Other rows journaled together (two
    approvals, or an agent's write elsewhere, seen in one look) take nothing away. (A last entry
    removed beside an unrelated append looks the same on disk, and is not counted either.)"""
    added: dict[str, set[int]] = {}
    for row in rows:
        edit, slot = row.detail.get("edit"), row.detail.get("slot")
        unmade = not any(_writes(action, text, row) for action, text, _ in changes)
        if isinstance(edit, str) and isinstance(slot, int) and row.action == "add" and unmade:
            added.setdefault(edit, set()).add(slot)
    return [
        row
        for row in rows
        if row.action != "remove" or row.detail.get("slot") not in added.get(str(row.detail.get("edit")), set())
    ]


def _writes(action: str, text: str, row: JournalEntry) -> bool:
    """Whether an outside memory row made this proposed change."""
    if action == "remove":  # (a replace row: an entry removed where another was added, paired by the journal)
        removed = isinstance(row.before, str) and text in row.before
        return removed and (row.action == "remove" or (row.action == "replace" and text not in (row.after or "")))
    return row.action in ("add", "replace") and row.after == text


def _extended(text: str, row: JournalEntry) -> bool:
    """Whether ``row``, cited for an add or replace, is a replace of an entry holding ``text`` by one that
    holds it whole too (``format.extensions``): a remove of that entry and an add of its longer text."""
    before = row.before or ""
    return row.action == "replace" and text in before and before in (row.after or "")


def _holds(action: str, text: str, entries: list[str]) -> bool:
    """Whether memory as it is shows this proposed change made."""
    if action == "remove":
        return not any(text in entry for entry in entries)
    return text in entries
