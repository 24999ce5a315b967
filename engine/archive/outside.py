"""Archive changes made outside the workbench: sessions Hermes archived, unarchived or deleted.

Hermes journals nothing of ours, yet archiving or deleting a session changes what the agent
can recall (lists, ``session_search``), so the Timeline must show it. workbench.db keeps
each session's id, archived flag, title and message count as a workbench process last saw
them (``sessions_seen``; an untitled one's first message, once seen, in
``sessions_seen_preview``, to name it when it is deleted), with a fingerprint of the
sessions table; when state.db changed and the fingerprint with it, the difference is
journaled as ``external`` rows: one
``archive`` or ``unarchive`` per compression chain that flipped, one ``delete`` per session
gone (several gone at once are one group). The workbench's own changes update the table
as they are made (``note_archived``, ``note_deleted``), and a change that an archive row
of ours since the last look explains (the state it left is the state now) is skipped too
(a process killed between its change and its note).
The first look only records what is there.
"""

from __future__ import annotations

import json
import logging
import secrets
import sqlite3
from typing import TYPE_CHECKING

from ..errors import WorkbenchError
from ..values import json_value

if TYPE_CHECKING:
    from ..home import Home

log = logging.getLogger(__name__)

SUBSYSTEM = "sessions"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions_seen (
    id TEXT PRIMARY KEY, archived INTEGER NOT NULL, title TEXT, messages INTEGER
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sessions_seen_preview (id TEXT PRIMARY KEY, preview TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sessions_seen_mark (
    one INTEGER PRIMARY KEY CHECK (one = 1), fingerprint TEXT NOT NULL, journal_id INTEGER NOT NULL
);
"""


# What a look compares first: a change to any session's existence, flag, start, title or size
# changes it (``started_at`` tells a session deleted and another made in its rowid apart).
_FINGERPRINT = (
    "SELECT count(*), total(rowid), total(archived * rowid), total(started_at), total(message_count), "
    "total(length(title)) FROM sessions"
)


def catch_up(home: Home) -> list[int]:
    """Journal what changed in state.db's sessions outside the workbench since a workbench process
    last looked; the ids of the rows written. Under the archive's change lock, so no change of
    ours is half made meanwhile."""
    if home.read_only or not home.state_db_path.exists():
        return []
    archive = home.archive
    if not archive.caps.has("sessions", "archived"):
        return []
    with archive.changing():
        state = archive.conn()
        fingerprint = json.dumps(tuple(state.execute(_FINGERPRINT).fetchone()))
        journal = home.journal
        mark = _mark(journal.connection())
        if mark is not None and mark[0] == fingerprint:
            return []
        listed = state.execute("SELECT id, archived, title, message_count FROM sessions").fetchall()
        # an untitled session's first message, read once (before the transaction: a first look may read
        # many): a delete row names the session by it
        untitled = [sid for sid, _, title, count in listed if not title and count]
        kept = _kept_previews(journal.connection(), untitled)
        fresh = archive.previews([sid for sid in untitled if sid not in kept])
        now = {sid: (int(bool(archived)), title, count) for sid, archived, title, count in listed}
        with journal.transaction() as write:
            seen = {row[0]: (row[1], row[2], row[3]) for row in write.execute("SELECT * FROM sessions_seen")}
            newest = write.execute("SELECT coalesce(max(id), 0) FROM journal").fetchone()[0]
            explained = _explained(write, mark[1]) if mark is not None else None
            gone = [sid for sid in seen if sid not in now]
            previews = {**_previews_of(write, gone), **fresh}
            ids = [] if explained is None else _journal(home, seen, now, explained, previews)
            write.executemany(
                "INSERT OR REPLACE INTO sessions_seen VALUES (?, ?, ?, ?)",
                [(sid, *values) for sid, values in now.items() if seen.get(sid) != values],
            )
            write.executemany("DELETE FROM sessions_seen WHERE id = ?", [(sid,) for sid in seen if sid not in now])
            write.executemany("INSERT OR REPLACE INTO sessions_seen_preview VALUES (?, ?)", fresh.items())
            write.execute("DELETE FROM sessions_seen_preview WHERE id NOT IN (SELECT id FROM sessions_seen)")
            write.execute(
                "INSERT OR REPLACE INTO sessions_seen_mark VALUES (1, ?, ?)", (fingerprint, max(newest, *ids, 0))
            )
    return ids


def _kept_previews(conn: sqlite3.Connection, session_ids: list[str]) -> set[str]:
    """Which of ``session_ids`` have their first message kept already (the table made here in a
    workbench.db from before it)."""
    try:
        rows = conn.execute(
            "SELECT id FROM sessions_seen_preview WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(session_ids),),
        )
        return {row[0] for row in rows}
    except sqlite3.OperationalError as exc:
        if "no such table" not in str(exc):
            raise
    conn.executescript(_SCHEMA)
    return set()


def _previews_of(conn: sqlite3.Connection, session_ids: list[str]) -> dict[str, str]:
    """The kept first messages of ``session_ids`` (sessions gone since the last look)."""
    rows = conn.execute(
        "SELECT id, preview FROM sessions_seen_preview WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(session_ids),),
    )
    return dict(rows.fetchall())


def _mark(conn: sqlite3.Connection) -> tuple[str, int] | None:
    """The last look's fingerprint and journal row; the tables made on the first look (never before,
    and never again: a look runs on every state.db change)."""
    try:
        return conn.execute("SELECT fingerprint, journal_id FROM sessions_seen_mark").fetchone()
    except sqlite3.OperationalError as exc:
        if "no such table" not in str(exc):
            raise
    conn.executescript(_SCHEMA)
    return None


def note_archived(home: Home, session_ids: list[str], archived: bool) -> None:
    """Our own archive change, made: so the next look does not take it for one made outside."""
    _note(
        home,
        "UPDATE sessions_seen SET archived = ? WHERE id IN (SELECT value FROM json_each(?))",
        (int(archived), json.dumps(session_ids)),
    )


def note_deleted(home: Home, session_ids: list[str]) -> None:
    """Our own deletion, made (see ``note_archived``)."""
    _note(home, "DELETE FROM sessions_seen WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(session_ids),))


def _note(home: Home, sql: str, args: tuple) -> None:
    """Best effort, after the change and its journal row: if workbench.db cannot take it, the next
    look finds the journal row instead (``_explained``). The mark is cleared so that look compares
    in full: an outside change that undid ours would leave the fingerprint as it was marked."""
    try:
        with home.journal.transaction() as conn:
            conn.execute(sql, args)
            conn.execute("UPDATE sessions_seen_mark SET fingerprint = ''")
    except (sqlite3.Error, WorkbenchError) as exc:  # "no such table": never looked, nothing to note
        if "no such table" not in str(exc):
            log.warning("could not note a session change of ours for the outside look: %s", exc)


def deleted(home: Home) -> set[str]:
    """Every session a journal row says was deleted or pruned (by the workbench, or seen gone outside)."""
    return _explained(home.journal.connection(), 0)[1]


def _explained(conn: sqlite3.Connection, journal_id: int) -> tuple[dict[str, bool], set[str]]:
    """What the journal's archive changes since ``journal_id`` (ours; a kill may have left one
    unnoted) leave: each session's archived flag, and the sessions deleted."""
    flags: dict[str, bool] = {}
    deleted: set[str] = set()
    rows = conn.execute(
        "SELECT action, target, detail FROM journal WHERE subsystem = ? AND id > ? AND status != 'abandoned' "
        "AND action IN ('archive', 'unarchive', 'delete', 'prune') ORDER BY id",
        (SUBSYSTEM, journal_id),
    )
    for action, target, detail in rows:
        data = json_value(detail, {})
        listed = (
            data.get("sessions" if action in ("archive", "unarchive") else "deleted")
            if isinstance(data, dict)
            else None
        )
        named = [sid for sid in listed if isinstance(sid, str)] if isinstance(listed, list) else [target]
        if action in ("archive", "unarchive"):
            flags.update((sid, action == "archive") for sid in named)
        else:
            deleted.update(named)
    return flags, deleted


def _journal(
    home: Home, seen: dict, now: dict, explained: tuple[dict[str, bool], set[str]], previews: dict[str, str]
) -> list[int]:
    """The rows for what differs between ``seen`` and ``now`` that no change of ours explains
    (``previews``: what names an untitled session)."""
    flags, deleted = explained
    journal, ids = home.journal, []
    flipped = [
        sid
        for sid, (archived, *_) in now.items()
        if sid in seen and seen[sid][0] != archived and flags.get(sid) != bool(archived)
    ]
    for chain in _chains(home, flipped):
        archived = bool(now[chain[0]][0])
        try:
            named = home.archive.named(chain[0], home.archive.chain_of(chain[0]).title)
        except WorkbenchError:  # gone meanwhile: its id alone
            named = {}
        ids.append(
            journal.append(
                SUBSYSTEM,
                "archive" if archived else "unarchive",
                chain[0],
                actor="external",
                after=str(int(archived)),
                session_id=chain[0],
                detail={"sessions": chain, "outside": True, **named},
            )
        )
    gone = [sid for sid in seen if sid not in now and sid not in deleted]
    edit = {"edit": secrets.token_hex(4)} if len(gone) > 1 else {}
    for sid in gone:
        _, title, messages = seen[sid]
        preview = previews.get(sid)
        ids.append(
            journal.append(
                SUBSYSTEM,
                "delete",
                sid,
                actor="external",
                before=title,
                session_id=sid,
                detail={
                    "deleted": [sid],
                    "message_count": messages,
                    "outside": True,
                    **edit,
                    **({} if title or not preview else {"preview": preview}),
                },
            )
        )
    return ids


def _chains(home: Home, flipped: list[str]) -> list[list[str]]:
    """The flipped sessions, one list per conversation (as Hermes archives one at once)."""
    left, chains = list(flipped), []
    while left:
        first = left.pop(0)
        chain = home.archive.conversation_family(first)
        members = [first] + [sid for sid in chain if sid in left]
        left = [sid for sid in left if sid not in members]
        chains.append(members)
    return chains
