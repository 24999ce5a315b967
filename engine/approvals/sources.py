"""Which assistant message proposed a write Hermes staged.

Hermes's pending records hold no session or message (``id``, ``subsystem``, ``action``,
``summary``, ``origin``, ``created_at``, ``payload``; see ``records``), but its agent loop
stores each tool result in state.db after the assistant message whose call made it, and a
staged call's result says so: ``{"success": true, "staged": true, "pending_id": ...}``.
That message is where the proposal came from, so its approval is journaled there, as the
approval of a record the workbench staged is, and ``sessions show`` lists the staged call.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import WorkbenchError
from ..memory.archive_writes import ToolResults
from ..values import decoded_calls, json_value
from .records import is_pending_id

if TYPE_CHECKING:
    from ..home import Home
    from ..journal import JournalEntry

log = logging.getLogger(__name__)

TOOLS = {"memory": "memory", "skills": "skill_manage"}  # the tool that stages each subsystem's writes


@dataclass(frozen=True)
class StagedCall:
    """One tool call of an assistant message whose result says it was staged for approval."""

    pending_id: str
    subsystem: str
    arguments: dict[str, Any]


def staged_id(result: Any) -> str | None:
    """The pending id a tool result says its call was staged under (None: applied, refused or unreadable)."""
    data = result if not isinstance(result, str) else json_value(result)
    if not isinstance(data, dict) or data.get("success") is not True or data.get("staged") is not True:
        return None
    pending_id = data.get("pending_id")
    return pending_id if isinstance(pending_id, str) and is_pending_id(pending_id) else None


def calls(tool_calls: Any) -> list[tuple[str | None, str | None, dict[str, Any]]]:
    """(call id, tool name, decoded arguments, ``{}`` when unreadable) of each call of a message."""
    return [
        (call_id, name, arguments if isinstance(arguments, dict) else {})
        for _, call_id, name, arguments in decoded_calls(tool_calls)
    ]


def _subsystem(tool: str | None) -> str | None:
    return next((subsystem for subsystem, name in TOOLS.items() if name == tool), None)


def staged_in(messages: Iterable[Any]) -> dict[int, list[StagedCall]]:
    """The staged memory and skill calls of a run of one session's messages, by assistant message id.

    Each call is matched with its result by call id, or else by position among the tool
    results that directly follow its message.
    """
    rows = list(messages)
    results = ToolResults(rows)
    out: dict[int, list[StagedCall]] = {}
    for i, message in enumerate(rows):
        if message.role != "assistant" or not message.tool_calls:
            continue
        for position, (call_id, tool, arguments) in enumerate(calls(message.tool_calls)):
            subsystem = _subsystem(tool)
            if subsystem is None:
                continue
            result = results.for_call(i, call_id, position, adjacent=True)
            pending_id = staged_id(result.content) if result is not None else None
            if pending_id is not None:
                out.setdefault(message.id, []).append(StagedCall(pending_id, subsystem, arguments))
    return out


def staged_in_sessions(home: Home, low: str, high: str | None = None) -> list[str]:
    """The pending ids Hermes's calls staged in the session ``low``, or in any session whose id is in
    ``[low, high)``: read from the tool results, which say so (``staged_id``)."""
    if not home.state_db_path.exists():  # never create an archive just to look
        return []
    where = "session_id = ?" if high is None else "session_id >= ? AND session_id < ?"
    try:
        rows = home.archive.conn().execute(
            f"SELECT content FROM messages WHERE {where} AND role = 'tool' AND instr(content, ?) > 0",
            ((low,) if high is None else (low, high)) + ('"staged"',),
        )
        return sorted({found for (content,) in rows if (found := staged_id(content)) is not None})
    except (WorkbenchError, sqlite3.Error) as exc:
        log.warning("cannot list what was staged in %s: %s", home.state_db_path, exc)
        return []


def staging_message(home: Home, subsystem: str, pending_id: str) -> tuple[str, int] | None:
    """(session id, assistant message id) of the call that staged ``pending_id``, if state.db holds it.

    None, never a guess, when the turn is not stored (yet) or the call does not match;
    an unusable state.db is None as well: approval never fails for want of provenance.
    """
    if not home.state_db_path.exists():  # never create an archive just to look
        return None
    try:
        return _staging_message(home, subsystem, pending_id)
    except (WorkbenchError, sqlite3.Error) as exc:
        log.warning("cannot look up who staged %s in %s: %s", pending_id, home.state_db_path, exc)
        return None


def staged_at(home: Home, approval: JournalEntry) -> tuple[str, int | None] | None:
    """Where the proposal an approvals row decided was staged: the message the row names, else,
    for a proposal Hermes staged, the call whose result staged it (``staging_message``)."""
    if approval.session_id is not None:
        return approval.session_id, approval.message_id
    subsystem = approval.detail.get("subsystem")
    if approval.detail.get("staged_by") != "hermes" or subsystem not in TOOLS:
        return None
    return staging_message(home, subsystem, approval.target)


def _staging_message(home: Home, subsystem: str, pending_id: str) -> tuple[str, int] | None:
    conn = home.archive.conn()
    columns = "m.id, m.session_id, m.tool_call_id, m.tool_name, m.content"
    if home.archive.caps.fts:  # the id is one token of the result's text
        results = conn.execute(
            f"SELECT {columns} FROM messages_fts f JOIN messages m ON m.id = f.rowid "
            "WHERE messages_fts MATCH ? AND m.role = 'tool' ORDER BY m.id DESC",
            (f'"{pending_id}"',),
        ).fetchall()
    else:
        results = conn.execute(
            f"SELECT {columns} FROM messages m WHERE m.role = 'tool' AND instr(m.content, ?) > 0 ORDER BY m.id DESC",
            (pending_id,),
        ).fetchall()
    for result_id, session_id, call_id, tool_name, content in results:
        if staged_id(content) != pending_id or tool_name not in (None, TOOLS[subsystem]):
            continue
        found = _caller(conn, session_id, result_id, call_id, subsystem)
        if found is not None:
            return session_id, found
    return None


def _caller(
    conn: sqlite3.Connection, session_id: str, result_id: int, call_id: str | None, subsystem: str
) -> int | None:
    """The assistant message just before a tool result, if the result's call is its call of the subsystem's tool."""
    row = conn.execute(
        "SELECT id, tool_calls FROM messages WHERE session_id = ? AND id < ? AND role = 'assistant' "
        "AND tool_calls IS NOT NULL ORDER BY id DESC LIMIT 1",
        (session_id, result_id),
    ).fetchone()
    if row is None:
        return None
    message_id, tool_calls = row
    made = calls(tool_calls)
    if call_id is not None:
        tools = [tool for cid, tool, _ in made if cid == call_id]
    else:  # by position among the results after the message
        (position,) = conn.execute(
            "SELECT count(*) FROM messages WHERE session_id = ? AND id > ? AND id < ? AND role = 'tool'",
            (session_id, message_id, result_id),
        ).fetchone()
        tools = [made[position][1]] if position < len(made) else []
    return message_id if tools == [TOOLS[subsystem]] else None
