"""Skill changes the session archive records: a Hermes agent's own ``skill_manage`` calls.

Hermes changes skills/ itself and never writes our journal: a workbench process that looks next
journals the change as ``external``. The assistant message holding the call is in state.db,
with the tool result saying it landed, so that call is where the change came from, as a
``memory`` call is for an outside memory edit (``memory.history.hermes_call``).
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import WorkbenchError
from ..memory.archive_writes import HERMES_SLACK_S, ArchiveWrites, ascii_terms
from ..values import decoded_calls, json_object
from .outside import ARCHIVED, CREATED, EDITED, REMOVED

if TYPE_CHECKING:
    from ..home import Home
    from ..journal import JournalEntry

TOOL = "skill_manage"
# The calls that make each change a look journals, by whether it is of a support file (``file``) or SKILL.md.
# A delete in a curator pass (Hermes's background review) archives the skill, so the look finds it archived.
ACTIONS = {
    (False, CREATED): ("create",),
    (False, EDITED): ("patch", "edit"),
    (False, REMOVED): ("delete",),
    (False, ARCHIVED): ("delete",),
    (True, CREATED): ("write_file",),
    (True, EDITED): ("write_file", "patch"),
    (True, REMOVED): ("remove_file",),
}
_ESCAPES = re.compile(r"\\[tr]")  # written as a tab or CR where the file has them there (``fuzzy_match``)


@dataclass(frozen=True)
class SkillCall:
    """The Hermes ``skill_manage`` call behind an outside skill row, and where it is."""

    session_id: str
    message_id: int
    action: str


def hermes_skill_call(home: Home, entry: JournalEntry) -> SkillCall | None:
    """The applied call behind an outside skill row (``_behind`` says which), if state.db has it (None as well when
    state.db cannot be read: the row is then listed as before, never failed): naming the row's skill
    and file (``file_path``; none for SKILL.md), of an action that makes its change, stored between
    the look before the row (less ``HERMES_SLACK_S``) and the row (plus that slack: Hermes stamps a call's
    message when it stores it, after its tools ran, so after the look that saw their change), and no
    source of an earlier outside row of the skill nor a call of the workbench's own agent: with that slack, a hand edit
    minutes after the agent's edit would otherwise get the agent's call too."""
    if _actions(entry) is None or entry.subsystem != "skills" or not ascii_terms(entry.target):
        return None
    if entry.target not in home.memory.archive_writes.named_by(TOOL):  # (no call ever named it: no queries)
        return None
    try:
        return home.memory.archive_writes.call_among(entry.id, lambda: _sources(home, entry))
    except (WorkbenchError, sqlite3.Error):
        return None


def _actions(row: JournalEntry) -> tuple[str, ...] | None:
    """The ``skill_manage`` actions that make an outside skill row's change, or None for another row."""
    if row.action != "external":
        return None
    return ACTIONS.get((bool(row.detail.get("file")), str(row.detail.get("change"))))


def _sources(home: Home, entry: JournalEntry) -> dict[int, SkillCall | None]:
    """The call behind each outside row of ``entry``'s skill up to it (None: none found), found oldest
    first, so that a call is the source of one row only; all kept, so a page finds them in one pass."""
    rows = home.journal.query(
        subsystem="skills", target=entry.target, before_id=entry.id + 1, limit=2**62, oldest_first=True
    )
    conn = home.archive.conn()
    stored = ArchiveWrites.calls_of(conn, home.archive.caps.fts, TOOL, ascii_terms(entry.target))
    # (session, message, position) of each call given to a row; position None: every call of a message the
    # workbench's agent made (it stores its turns in state.db as Hermes does), whose own row names it
    taken: set[tuple[str, int, int | None]] = {
        (session_id, message_id, None)
        for session_id, message_id in home.journal.connection().execute(
            "SELECT DISTINCT session_id, message_id FROM journal WHERE subsystem = 'skills' AND target = ? "
            "AND actor != 'external' AND session_id IS NOT NULL AND message_id IS NOT NULL",
            (entry.target,),
        )
    }
    texts = home.skills.outside.texts(str(row.detail.get("sha")) for row in rows if not row.detail.get("file"))
    sources: dict[int, SkillCall | None] = {}
    since = float("-inf")  # when the look before the row was journaled
    for row in rows:
        actions = _actions(row)
        if actions:
            found = _behind(conn, stored, row, actions, since - HERMES_SLACK_S, taken, _left(row, texts))
            sources[row.id] = found[0] if found else None
            if found:
                taken.add(found[1])
        since = row.at
    return sources


def _behind(
    conn: sqlite3.Connection,
    stored: list[sqlite3.Row],
    row: JournalEntry,
    actions: tuple[str, ...],
    since: float,
    taken: set[tuple[str, int, int | None]],
    left: str | None,
) -> tuple[SkillCall, tuple[str, int, int]] | None:
    """The applied call in ``stored`` behind ``row`` that is not ``taken`` (position None: every call of
    that message), with its key: the newest stamped from ``since`` to the row, else the first stamped in
    the slack after it (a turn stored, and stamped, once it ended) whose text (``_absent``) is in ``left``,
    the SKILL.md the row left behind, when known. The newest in the whole window took a call minutes
    after the row, the one of a later edit, which was then left with none; so did the first after it,
    for a hand edit found a minute before the agent's patch or rewrite."""
    file = row.detail.get("file")
    at = [m for m in stored if since <= (m["timestamp"] or 0.0) <= row.at]
    after = [m for m in stored if row.at < (m["timestamp"] or 0.0) <= row.at + HERMES_SLACK_S]
    for index, message in enumerate([*reversed(at), *after]):
        session_id, message_id = message["session_id"], message["id"]
        if (session_id, message_id, None) in taken:
            continue
        later = index >= len(at)  # (stamped after the row)
        for position, call_id, name, arguments in decoded_calls(message["tool_calls"]):
            if (
                name == TOOL
                and isinstance(arguments, dict)
                and arguments.get("name") == row.target
                and not (later and _absent(arguments, left))
                and arguments.get("action") in actions
                and (arguments.get("file_path") or None) == file  # (a patch with none patches SKILL.md)
                and (session_id, message_id, position) not in taken
                and _applied(ArchiveWrites.result(conn, session_id, message_id, position, call_id))
            ):
                return SkillCall(session_id, message_id, arguments["action"]), (session_id, message_id, position)
    return None


def _left(row: JournalEntry, texts: dict[str, bytes]) -> str | None:
    """The letters (``_letters``) of the SKILL.md an outside row of it left behind, from the ``texts`` looks
    kept by hash (None: a support file's row, a removal, or a text no look kept); read once a row, not once
    a call looked at."""
    text = None if row.detail.get("file") else texts.get(str(row.detail.get("sha")))
    return None if text is None else _letters(text.decode("utf-8", "replace"))


def _absent(arguments: dict, left: str | None) -> bool:
    """Whether the text a call wrote (a patch's ``new_string``, an edit's or create's ``content``) is missing
    from ``left``, the letters of the SKILL.md a row left behind: then that call did not make the row's change
    (unknown text, or no text written: it may have). Compared by letters and digits alone: a patch that
    matched loosely writes ``new_string`` to the file's indentation, tabs and quotes (Hermes's ``fuzzy_match``)."""
    new = arguments.get("new_string" if arguments.get("action") == "patch" else "content")
    written = _letters(new) if isinstance(new, str) else ""
    return bool(written) and left is not None and written not in left


def _letters(text: str) -> str:
    """``text``'s letters and digits, a ``\\t`` or ``\\r`` Hermes may write as a tab or CR left out."""
    return "".join(ch for ch in _ESCAPES.sub("", text) if ch.isalnum())


def _applied(result: str | None) -> bool:
    """Whether a ``skill_manage`` result says the change landed (not refused, not only staged)."""
    data = json_object(result)
    return isinstance(data, dict) and data.get("success") is True and not data.get("staged")
