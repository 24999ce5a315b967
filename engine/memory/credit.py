"""An outside row credited to the Hermes call that made it, once Hermes stores its turn.

Hermes's memory tool writes MEMORY.md at once, but Hermes stores the call only later (Hermes 0.19.0
stores the assistant message and its result once the tool has run, each stamped as stored), and a call
counts only with its result: a look in between (the TUI's watcher, any command) journals the change as
``external``, with no session, dated before the call's message. When the result is stored, a look that
finds the row is exactly the call's change (``replay._made_by``)
rewrites that row as the agent's, in the call's session and message, rather than adding a row that
links the two: the row is the change, and what keys on it (undo and revert, its place in the Timeline,
the rebuild of the file, a call replayed once) keeps working on it, while a linking row would be a row
that changed nothing, for every reader to join or pass over. Nothing is lost: the detail keeps all it
held (an outside group's ``edit`` too, though only ``external`` rows make that group, so its revert no
longer takes Hermes's change back), and ``credited`` says when. Its time stays: the file's, when the
change reached the disk, nearer it than the message's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..journal import JournalEntry
from ..textsafety import inline
from ..values import json_value
from .archive_writes import HERMES_SLACK_S
from .rebuild import SUBSYSTEM
from .replay import Credit, recent

if TYPE_CHECKING:
    import sqlite3

    from ..journal import Journal

# the call's own row: journaled or credited before (another process's look may have come first)
_CALL_HAS_ROW = (
    "SELECT 1 FROM journal WHERE session_id = ? AND message_id = ? AND subsystem = ? AND target = ? "
    "AND status = 'done' AND json_valid(detail) AND json_extract(detail, '$.call') IS ?"
)


def awaiting(conn: sqlite3.Connection, target: str, now: float) -> bool:
    """Whether ``target`` has a row a look may still credit: an outside add, replace or remove journaled
    within ``HERMES_SLACK_S`` (read as a look reads the rows its calls may bear on, ``replay.recent``)."""
    _, outside, _ = recent(conn, target, now - HERMES_SLACK_S)
    return any(row.action in ("add", "replace", "remove") for row in outside)


def credit(journal: Journal, target: str, credits: Sequence[Credit], now: float) -> list[int]:
    """Make each credit's rows its call's, under the journal's lock, each row and call once: the rows are
    read again there, and left alone when one is no longer an outside row or the call has a row already.
    The ids of the rows credited."""
    done: list[int] = []
    if not credits:
        return done
    with journal.transaction() as conn:
        for found in credits:
            call = found.call
            details = [d for row in found.rows if (d := _outside_detail(conn, target, row.id)) is not None]
            taken = conn.execute(_CALL_HAS_ROW, (call.session_id, call.message_id, SUBSYSTEM, target, call.index))
            if len(details) < len(found.rows) or taken.fetchone():
                continue
            for row, detail in zip(found.rows, details, strict=True):
                detail.update(call=call.index, credited={"at": now, "action": call.action})
                conn.execute(
                    "UPDATE journal SET actor = 'agent', session_id = ?, message_id = ?, detail = ? WHERE id = ?",
                    (call.session_id, call.message_id, json.dumps(detail), row.id),
                )
                done.append(row.id)
    return done


def _outside_detail(conn: sqlite3.Connection, target: str, row_id: int) -> dict | None:
    """The detail of row ``row_id`` while it is still an outside row of ``target`` (None otherwise)."""
    row = conn.execute(
        "SELECT detail FROM journal WHERE id = ? AND subsystem = ? AND target = ? AND status = 'done' "
        "AND actor = 'external' AND session_id IS NULL",
        (row_id, SUBSYSTEM, target),
    ).fetchone()
    detail = json_value(row[0]) if row else None
    return detail if isinstance(detail, dict) else None


def credited_note(row: JournalEntry) -> str | None:
    """What both skins say of a row credited to its call later (None for any other row): the session id is
    state.db's, shown on one line (a line break in it started what read as the next row)."""
    if not isinstance(row.detail.get("credited"), dict) or row.session_id is None:
        return None
    return f"credited to session {inline(row.session_id)} when its turn was stored"
