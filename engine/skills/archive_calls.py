"""Skill changes the session archive records: a Hermes agent's own ``skill_manage`` calls.

Hermes changes skills/ itself and never writes our journal: a workbench process that looks next
journals the change as ``external``. The assistant message holding the call is in state.db,
with the tool result saying it landed, so that call is where the change came from, as a
``memory`` call is for an outside memory edit (``memory.history.hermes_call``).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import WorkbenchError
from ..memory.archive_writes import ArchiveWrites, ascii_terms
from ..memory.history import HERMES_SLACK_S
from ..values import decoded_calls, json_object
from .outside import CREATED, EDITED, REMOVED

if TYPE_CHECKING:
    from ..home import Home
    from ..journal import JournalEntry

TOOL = "skill_manage"
# The calls that make each change a look journals, by whether it is of a support file (``file``) or SKILL.md.
ACTIONS = {
    (False, CREATED): ("create",),
    (False, EDITED): ("patch", "edit"),
    (False, REMOVED): ("delete",),
    (True, CREATED): ("write_file",),
    (True, EDITED): ("write_file", "patch"),
    (True, REMOVED): ("remove_file",),
}


@dataclass(frozen=True)
class SkillCall:
    """The Hermes ``skill_manage`` call behind an outside skill row, and where it is."""

    session_id: str
    message_id: int
    action: str


def hermes_skill_call(home: Home, entry: JournalEntry) -> SkillCall | None:
    """The newest applied call behind an outside skill row, if state.db has it (None as well when
    state.db cannot be read: the row is then listed as before, never failed): naming the row's skill
    and file (``file_path``; none for SKILL.md), of an action that makes its change, stored between
    the look before the row (less ``HERMES_SLACK_S``: Hermes stamps the message before its tools run)
    and the row (plus that slack: it may store the turn after the look)."""
    detail = entry.detail
    actions = ACTIONS.get((bool(detail.get("file")), str(detail.get("change"))))
    if entry.subsystem != "skills" or entry.action != "external" or not actions or not ascii_terms(entry.target):
        return None
    try:
        return home.memory.archive_writes.call_of(entry.id, lambda: _call(home, entry, actions))
    except (WorkbenchError, sqlite3.Error):
        return None


def _call(home: Home, entry: JournalEntry, actions: tuple[str, ...]) -> SkillCall | None:
    file = entry.detail.get("file")
    before = (
        home.journal.connection()
        .execute(
            "SELECT at FROM journal WHERE subsystem = 'skills' AND target = ? AND id < ? ORDER BY id DESC LIMIT 1",
            (entry.target, entry.id),
        )
        .fetchone()
    )
    since = (before[0] if before else float("-inf")) - HERMES_SLACK_S
    conn = home.archive.conn()
    rows = ArchiveWrites.calls_of(conn, home.archive.caps.fts, TOOL, ascii_terms(entry.target))
    for row in reversed(rows):
        if not since <= (row["timestamp"] or 0.0) <= entry.at + HERMES_SLACK_S:
            continue
        for position, call_id, name, arguments in decoded_calls(row["tool_calls"]):
            if (
                name == TOOL
                and isinstance(arguments, dict)
                and arguments.get("name") == entry.target
                and arguments.get("action") in actions
                and (arguments.get("file_path") or None) == file  # (a patch with none patches SKILL.md)
                and _applied(ArchiveWrites.result(conn, row["session_id"], row["id"], position, call_id))
            ):
                return SkillCall(row["session_id"], row["id"], arguments["action"])
    return None


def _applied(result: str | None) -> bool:
    """Whether a ``skill_manage`` result says the change landed (not refused, not only staged)."""
    data = json_object(result)
    return isinstance(data, dict) and data.get("success") is True and not data.get("staged")
