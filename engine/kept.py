"""Messages state.db would not take when their conversation was left, kept in workbench.db until it does.

A conversation left (``workbench run`` ending, the TUI quitting, a session switch, a
scenario's end) while state.db refuses its last messages (another process holds its
write lock past the busy timeout, a full disk) keeps them here, durably, with what their
session row still needs and the end it was to get (``put``). The next workbench process
that opens the home stores them as soon as state.db takes a write at once
(``store_kept``; ``Home.store_kept`` runs it at every open, never waiting), through the
archive calls of the agent's own flush (``Unstored.store``): state.db then holds what
it would have held had it never been busy, each message at the time it was said.

Exactly once: only the holder of the archive's change lock stores them (two processes
opening together: one stores, the other finds the lock taken and leaves them), and a
row is deleted only after its store. A process killed between the two leaves the row;
the next finds the session already holding its first message (one append is all or
nothing) and only ends the session and deletes the row.

A session someone went on with meanwhile (Hermes resumed it: it holds a message said after the
kept ones) is left as it is, neither appended to nor ended: Hermes reads a session in insertion
order, so the kept turn would read as said after theirs (perhaps between a tool call and its
result). The kept messages become a session of their own, a child of it. Each row is stored in one
state.db transaction that never waits for the write lock: Hermes never sees half of it.
A session that was stored and is gone now, where a journal row says it was deleted (by the
workbench, or seen gone outside), was deleted on purpose: its kept messages go with it, as a
running conversation's do (``_forget_if_deleted``), never bringing any of a deleted conversation
back into what the agent can recall. Gone with no such row (state.db put back from a backup, or
deleted while no workbench looked), it is made again for them: nothing kept is lost unasked.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from . import lock_waits
from .archive import outside as sessions_outside
from .clock import stamped
from .db import DatabaseBusyError, on_read_only_mount, salvage_advice, write_transaction
from .errors import WorkbenchError
from .fileio import crash_point
from .health import CHECKS, Finding
from .unstored import Unstored
from .values import iso_time

if TYPE_CHECKING:
    from .home import Home

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS kept_messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    session_id TEXT NOT NULL,
    messages INTEGER NOT NULL,
    end_reason TEXT,
    why TEXT NOT NULL,
    unstored TEXT NOT NULL
);
"""
STORED_LATER = "They are stored automatically when state.db is free; run any workbench command."


def when_stored(home: Home) -> str:
    """When what workbench.db keeps is stored into state.db, and what it takes, as doctor, the CLI and
    the TUI all say it: when state.db is free (``STORED_LATER``); once the home's file system is
    writable; or, for a damaged state.db (SQLite's ``quick_check``, ``vet``: nothing is ever written
    to one), once it is recovered or restored, and how. Runs that check once per process (a read of
    the whole file); only asked when there is something kept."""
    try:
        damage = home.archive.vet(quiet=True)
    except (WorkbenchError, sqlite3.Error, OSError):
        damage = None  # (an archive that cannot be opened: its own error and doctor's say why)
    if damage is not None:
        return (
            "state.db is damaged, and nothing is written to a damaged state.db: they stay in workbench.db until it "
            f"is recovered or restored. {salvage_advice(home.state_db_path)} The next workbench command then "
            "stores them; `workbench doctor` shows whether any are still kept."
        )
    if on_read_only_mount(home.state_db_path):
        return f"{home.root} is on a read-only file system: mount it writable, then run any workbench command."
    return STORED_LATER


def cause(why: str) -> str:
    """Why state.db refused, in the first sentence of its error: the advice after it ("Nothing was
    changed. Retry when it is done") is not true of a turn that ran and is kept."""
    return why.split(". ")[0].rstrip(".")


@dataclass(frozen=True)
class Kept:
    """Messages of one session that workbench.db keeps for state.db, and why state.db did not take them."""

    session_id: str
    messages: int
    why: str
    at: float

    @property
    def count(self) -> str:
        return f"{self.messages} message{'s' * (self.messages != 1)}"

    def describe(self, later: str) -> str:
        """What was kept and why, then ``later`` (``when_stored``: when it is stored into state.db)."""
        return (
            f"{self.count} of session {self.session_id} could not be stored in state.db ({cause(self.why)}). They are "
            f"kept in workbench.db. {later}"
        )


def put(home: Home, unstored: Unstored, end_reason: str | None, why: str) -> Kept:
    """Keep ``unstored`` (and the session's ``end_reason``, None: it stays open) in workbench.db,
    synced to disk before this returns; raises as a workbench.db write does."""
    now = home.clock.now()
    for row in unstored.rows:  # (a message with no time of its own, a compacted copy, is dated now)
        if row["timestamp"] is None:
            row["timestamp"] = now
    conn = home.journal.connection()
    conn.executescript(_SCHEMA)
    conn.execute("PRAGMA synchronous=FULL")  # kept means on disk: this commit syncs the WAL
    try:  # (never cancelled, even at the TUI's quit: it is the last place the messages can go)
        with lock_waits.must_finish(), home.journal.transaction() as write:
            write.execute(
                "INSERT INTO kept_messages (at, session_id, messages, end_reason, why, unstored) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (now, unstored.session_id, len(unstored.rows), end_reason, why, unstored.to_json()),
            )
    finally:
        conn.execute("PRAGMA synchronous=NORMAL")
    return Kept(unstored.session_id, len(unstored.rows), why, now)


def _select(home: Home, sql: str) -> list[sqlite3.Row]:
    """Rows of kept_messages; none in a workbench.db that never kept any (no table, or no file)."""
    if not home.journal.path.exists():  # (asking must not create workbench.db)
        return []
    try:
        return home.journal.connection().execute(sql).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return []
        raise


def waiting(home: Home) -> bool:
    """Whether workbench.db keeps messages for state.db; False when it cannot be read (nothing to do then)."""
    try:
        return bool(_select(home, "SELECT 1 FROM kept_messages LIMIT 1"))
    except (WorkbenchError, sqlite3.Error, OSError):
        return False


def kept(home: Home) -> list[Kept]:
    """What workbench.db keeps for state.db, oldest first."""
    rows = _select(home, "SELECT session_id, messages, why, at FROM kept_messages ORDER BY id")
    return [Kept(*row) for row in rows]


def of_session(home: Home, prefix: str) -> Kept | None:
    """What is kept of the session whose id starts with ``prefix`` (None also when none can be read)."""
    try:
        return next((k for k in kept(home) if prefix and k.session_id.startswith(prefix)), None)
    except (WorkbenchError, sqlite3.Error, OSError):
        return None


def waits_for(home: Home, session_id: str) -> str | None:
    """Why messages of the session ``session_id`` may wait in workbench.db, not stored in state.db yet
    (None: none do): it keeps some, or it cannot be read, so what it may keep is not known to be stored."""
    try:
        held = any(item.session_id == session_id for item in kept(home))
    except (WorkbenchError, sqlite3.Error, OSError) as exc:
        return f"workbench.db cannot be read ({exc}), so messages of it kept there may not be stored yet"
    return "messages of it kept in workbench.db are not stored in state.db yet" if held else None


def stored_note(session_id: str, messages: int, stored_as: str) -> str:
    """What the skins say, once, of messages kept in workbench.db that are now stored in state.db
    (``stored_as``: the session they went into, a child of theirs when it was resumed elsewhere since):
    the user was told they were kept, so they learn they landed (``Home.take_kept_stored``)."""
    count = f"{messages} message{'s' * (messages != 1)}"
    where = (
        ""
        if stored_as == session_id
        else f", as session {stored_as} (a child of it: it was resumed elsewhere after they were kept)"
    )
    return f"{count} of session {session_id} kept in workbench.db are stored in state.db now{where}."


def store_kept(home: Home) -> list[str]:
    """Store what is kept into state.db (``home`` writable), each row then forgotten; returns what
    was stored, in ``stored_note``'s words (none for messages that went with their deleted session).

    Only when state.db takes a write at once, and only by the holder of the change lock;
    never raises for a busy or unusable state.db: what is not stored stays kept.
    """
    notes: list[str] = []
    try:
        archive = home.archive
        if archive.vet() is not None:  # a damaged state.db is never written; they stay kept
            return notes
        with archive.changing(wait=False):
            for row in _select(
                home, "SELECT id, session_id, messages, end_reason, unstored FROM kept_messages ORDER BY id"
            ):
                try:
                    stored_as = _store(home, row)
                    if stored_as is not None:
                        notes.append(stored_note(row["session_id"], row["messages"], stored_as))
                except (WorkbenchError, sqlite3.Error, ValueError, TypeError, LookupError) as exc:
                    log.warning("Messages kept for session %s were not stored yet: %s", row["session_id"], exc)
                    if isinstance(exc, DatabaseBusyError):
                        break
    except (BlockingIOError, WorkbenchError, sqlite3.Error, OSError):
        pass  # another process stores them, or state.db cannot take them now
    return notes


def _store(home: Home, row: sqlite3.Row) -> str | None:
    """Store one kept row, in one state.db transaction that never waits, and forget it (see the
    module's docstring); the session they were stored in (None: they went with their deleted session)."""
    archive, unstored = home.archive, Unstored.from_json(row["unstored"])
    with write_transaction(archive.conn(), wait=False):  # all of it or none: Hermes never sees half
        session = archive.get_session(unstored.session_id)
        gone = session is None and unstored.created
        dropped = gone and unstored.session_id in sessions_outside.deleted(home)
        if dropped:
            log.warning(
                "%d kept message(s) of session %s were not stored: the session was deleted after they were "
                "kept, and they went with it.",
                len(unstored.rows),
                unstored.session_id,
            )
        elif session is None or not archive.holds(unstored.session_id, unstored.rows[0]):
            if gone:  # no row says it was deleted (state.db put back from a backup, say): made again
                log.warning(
                    "Session %s is not in state.db; it is made again for its kept messages.", unstored.session_id
                )
                unstored = replace(unstored, created=False, reopen=False, prompt_unstored=False)
            if session is not None and archive.said_after(unstored.session_id, unstored.rows[-1]["timestamp"]):
                unstored = _branched(home, unstored)  # someone went on with it: theirs is not spliced into
            if unstored.parent_id and archive.get_session(unstored.parent_id) is None:
                unstored.parent_id = None  # (its parent was deleted since: orphaned, as deleting a parent leaves it)
            unstored.store(archive)
            unstored.store_tokens(archive)
            if row["end_reason"]:
                archive.end_session(unstored.session_id, row["end_reason"])
        # (stored now, or by a process killed before it forgot the row: in state.db either way)
        stored_as = None if dropped else unstored.session_id
    crash_point("kept-stored")
    with home.journal.transaction() as write:
        write.execute("DELETE FROM kept_messages WHERE id = ?", (row["id"],))
    return stored_as


def _branched(home: Home, unstored: Unstored) -> Unstored:
    """``unstored`` as a session of its own, a child of its session: someone (Hermes, resuming it) said
    more in that one since, and messages appended after theirs would read as said after them (Hermes
    reads a session in insertion order), perhaps between a tool call and its result."""
    archive = home.archive
    stored = archive.get_session(unstored.session_id)
    child = replace(
        unstored,
        session_id=archive.new_session_id(),
        parent_id=unstored.session_id,
        title=(stored.title if stored else None) or unstored.title,
        created=False,
        reopen=False,
        prompt_unstored=False,
    )
    log.warning(
        "%d kept message(s) of session %s were stored as session %s, a child of it: it was resumed elsewhere "
        "since they were kept.",
        len(unstored.rows),
        unstored.session_id,
        child.session_id,
    )
    return child


def check(home: Home) -> list[Finding]:
    """Doctor: messages workbench.db keeps because state.db would not take them (still busy, say)."""
    if home.journal.problem():  # (the databases' check names what is wrong with workbench.db)
        return []
    items = kept(home)
    if not items:
        return []
    fix = when_stored(home)
    return [
        Finding(
            "archive",
            "warning",
            f"{item.count} of session {item.session_id} are kept in workbench.db, not in state.db yet (kept "
            f"{stamped(item.at) or iso_time(item.at)}: {cause(item.why)}).",
            fix,
        )
        for item in items
    ]


CHECKS.append(check)
