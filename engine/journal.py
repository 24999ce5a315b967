"""The journal: one row for every mutation the workbench makes or observes.

Rows live in ``<home>/workbench.db`` (ours alone; Hermes never reads it). A row is
written *before* the change it describes (status ``pending``) and marked ``done`` once
the change is on disk, so a crash in between leaves evidence instead of silence.
The journal is how history, provenance ("who wrote this entry, in which session and
message") and undo work.

Rows hold entry-level before/after. A whole file is kept only where something needs it:
``journal_files`` holds snapshots by content hash (sha256), and a subsystem keeps just
the ones it still needs (memory: the snapshot each target's last file is rebuilt from,
to tell an outside edit from its own; see ``memory/rebuild.py``), so the journal grows
with the entries changed, not with the size of the file on every write.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from .clock import Clock
from .db import (
    DatabaseBusyError,
    DatabaseDamaged,
    ThreadConnections,
    close_guard,
    database_error,
    database_stamp,
    integrity_problems,
    write_statement,
    write_transaction,
)
from .errors import WorkbenchError
from .fileio import UnsafePath
from .values import LONE_SURROGATE, iso_time, json_value, number_value, storable, text_value

ACTORS = ("agent", "review", "curator", "user", "external")
# (actor, detail): what every row that actor journals in this thread carries meanwhile (``tagged``)
_TAG: ContextVar[tuple[str, dict[str, Any]] | None] = ContextVar("journal_tag", default=None)


@contextlib.contextmanager
def tagged(actor: str, **detail: Any) -> Iterator[None]:
    """Every row ``actor`` journals in this thread meanwhile carries ``detail``: the rows one act
    writes through several stores (a group's revert) so read as one Timeline group. Rows of
    other actors (an outside edit a write journals first) are left as they are."""
    token = _TAG.set((actor, detail))
    try:
        yield
    finally:
        _TAG.reset(token)


def _kept_tag(conn: sqlite3.Connection, entry_id: int, detail: dict[str, Any]) -> dict[str, Any]:
    """The detail a row is committed with: a row begun tagged keeps its tag (another row settled
    meanwhile, say a killed process's, gets none)."""
    tag = _TAG.get()
    if tag is None:
        return detail
    found = conn.execute("SELECT detail FROM journal WHERE id = ?", (entry_id,)).fetchone()
    begun = json_value(found[0], {}) if found else {}
    tagged_row = isinstance(begun, dict) and all(begun.get(key) == value for key, value in tag[1].items())
    return {**detail, **tag[1]} if tagged_row else detail


def _with_tag(actor: str, detail: dict[str, Any] | None) -> dict[str, Any] | None:
    tag = _TAG.get()
    return {**(detail or {}), **tag[1]} if tag is not None and tag[0] == actor else detail


def _detail_json(detail: dict | None) -> str | None:
    """``detail`` as JSON; escaped (\\uXXXX) where a lone surrogate would not be valid UTF-8, so it reads back as is."""
    if not detail:
        return None
    text = json.dumps(detail, ensure_ascii=False)
    return json.dumps(detail) if LONE_SURROGATE.search(text) else text


# The row an undo or a revert took back (``undo_of`` in its detail); only rows that name one (a cheap
# test on every insert) are in its index, and a detail damaged by hand reads as naming none.
_UNDOES = "instr(detail, '\"undo_of\"') > 0"
_UNDO_OF = "CASE WHEN json_valid(detail) THEN json_extract(detail, '$.undo_of') END"

# The undo rows naming any of a JSON list of rows, oldest first. An undo is always newer than the row
# it names, so ``id > ?`` (the oldest asked) also bounds the search where the index is missing (a
# journal an older version made, opened read-only): the newest rows, the ones shown, are found fast.
UNDOS_OF = (
    f"SELECT {_UNDO_OF}, id FROM journal WHERE {_UNDOES} AND {_UNDO_OF} IN (SELECT value FROM json_each(?)) "
    f"AND id > {_UNDO_OF} AND id > ? AND status = 'done' ORDER BY id"
)

# Rows are found by session only for a session named (``session_id = ?`` or a range, which imply NOT NULL to
# SQLite's planner; a LIKE does not, so it says ``session_id IS NOT NULL`` too), so the session index leaves out
# the rows of no session (a person's edits, the curator's passes): their writes touch one index page fewer. It
# replaces ``idx_journal_session``, which indexed every row (dropped where found).
_BUMP = "INSERT INTO journal_changes (one, n) VALUES (1, 1) ON CONFLICT (one) DO UPDATE SET n = n + 1;"
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS journal (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    actor TEXT NOT NULL,
    subsystem TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    before TEXT,
    after TEXT,
    session_id TEXT,
    message_id INTEGER,
    detail TEXT,
    status TEXT NOT NULL DEFAULT 'done'
);
CREATE INDEX IF NOT EXISTS idx_journal_target ON journal(subsystem, target, id);
CREATE INDEX IF NOT EXISTS idx_journal_sessions ON journal(session_id) WHERE session_id IS NOT NULL;
DROP INDEX IF EXISTS idx_journal_session;
CREATE INDEX IF NOT EXISTS idx_journal_pending ON journal(subsystem, target) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS idx_journal_undo_of ON journal({_UNDO_OF}) WHERE {_UNDOES};
CREATE TABLE IF NOT EXISTS journal_files (sha TEXT PRIMARY KEY, text TEXT NOT NULL) WITHOUT ROWID;
BEGIN;
CREATE TABLE IF NOT EXISTS journal_changes (one INTEGER PRIMARY KEY CHECK (one = 1), n INTEGER NOT NULL);
CREATE TRIGGER IF NOT EXISTS journal_row_changed AFTER UPDATE ON journal
WHEN OLD.status IS NOT 'pending' OR NEW.status IS 'pending' BEGIN {_BUMP} END;
CREATE TRIGGER IF NOT EXISTS journal_row_deleted AFTER DELETE ON journal BEGIN {_BUMP} END;
COMMIT;
"""

# What the journal's rows are at, for the TUI's watcher (``workbench/watch.py``), read without a write of its
# own on the hot path: an insert moves the table's AUTOINCREMENT sequence, a row settled (pending to done or
# abandoned) leaves the pending index, and every other change (a credit, a delete) bumps ``journal_changes`` by
# trigger. A memory write (its insert, then its settle) so writes no page more; a counter bumped on every change
# cost it a page a commit. The counter and its triggers come in one transaction (above): a credit committed
# between them, on a workbench.db an older version made, bumped a counter the watcher already read.
CHANGES = (
    "SELECT (SELECT seq FROM sqlite_sequence WHERE name = 'journal'), (SELECT n FROM journal_changes), "
    "(SELECT count(*) || ' ' || total(id) FROM journal WHERE status = 'pending')"
)


@lru_cache(maxsize=4)
def content_hash(text: str) -> str:
    """A file text's SHA-256. Remembered for the last few texts: one memory write hashes its
    new file for the journal row, the release check and the snapshot (18 KB each time)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class JournalEntry:
    id: int
    at: float
    actor: str
    subsystem: str
    action: str
    target: str
    before: str | None
    after: str | None
    session_id: str | None
    message_id: int | None
    detail: dict[str, Any] = field(default_factory=dict)
    status: str = "done"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "at": iso_time(self.at),
            "actor": self.actor,
            "subsystem": self.subsystem,
            "action": self.action,
            "target": self.target,
            "before": self.before,
            "after": self.after,
            "session_id": self.session_id,
            "message_id": self.message_id,
            "detail": self.detail,
            "status": self.status,
        }


# A first look that found a memory store with no entries: only the baseline its later changes are told
# from (``MemoryStore.record_external_change``), no change of its own, so listings leave it out.
LOOK_AT_NOTHING = (  # (IS: a seen row whose detail lacks ``entries`` is listed, never lost to a NULL)
    "action = 'seen' AND coalesce(json_valid(detail), 0) AND json_extract(detail, '$.entries') IS '[]'"
)


def _row(row: sqlite3.Row) -> JournalEntry:
    """A journal row, read leniently: a hand-edited row is shown as well as it can be, never raised."""
    detail = json_value(row["detail"], {})
    message_id = row["message_id"]
    return JournalEntry(
        id=row["id"],
        at=number_value(row["at"]) or 0.0,
        actor=text_value(row["actor"]) or "",
        subsystem=text_value(row["subsystem"]) or "",
        action=text_value(row["action"]) or "",
        target=text_value(row["target"]) or "",
        before=text_value(row["before"]),
        after=text_value(row["after"]),
        session_id=text_value(row["session_id"]),
        message_id=message_id if isinstance(message_id, int) else None,
        detail=detail if isinstance(detail, dict) else {"unreadable": text_value(row["detail"])},
        status=text_value(row["status"]) or "",
    )


@dataclass
class Recording:
    """A pending row ``Journal.recording`` wrote; ``updates`` correct it when it is committed."""

    id: int
    updates: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Mark:
    """How one connection left workbench.db: when a later transaction on it finds the same mark, nothing
    wrote the file in between, neither another connection (``PRAGMA data_version`` moves with each of
    their commits, in this process or another) nor this one (``total_changes`` counts its own rows,
    rolled back or not)."""

    conn: sqlite3.Connection
    version: int
    changes: int


def mark(conn: sqlite3.Connection) -> Mark:
    """Inside a transaction on ``conn`` (whose BEGIN has read the file's latest state): its mark now."""
    return Mark(conn, conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes)


def mark_after(conn: sqlite3.Connection, within: Mark) -> Mark:
    """The mark a transaction on ``conn`` that found ``within`` leaves once it has committed: its own
    rows counted, the version as it found it (its own commit never moves it)."""
    return Mark(conn, within.version, conn.total_changes)


# a write's pending rows marked done (one row, or a JSON list of them); rows settled meanwhile stay
_DONE_ONE = "UPDATE journal SET status = 'done' WHERE id = ? AND status = 'pending'"
_DONE_ALL = "UPDATE journal SET status = 'done' WHERE id IN (SELECT value FROM json_each(?)) AND status = 'pending'"

_Method = TypeVar("_Method", bound=Callable[..., Any])
_Read = TypeVar("_Read")


# SQLite's own word for a damaged file (a torn page) or one that is no database: nothing else (a hand-edited
# row's bad JSON, a bug's bad SQL) makes the whole journal unusable
_DAMAGE_CODES = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


def _damaged(exc: sqlite3.DatabaseError) -> bool:
    return getattr(exc, "sqlite_errorcode", 0) & 0xFF in _DAMAGE_CODES


def _names_the_file(method: _Method) -> _Method:
    """SQLite's own errors ("database disk image is malformed") name no file: a journal call that meets
    one raises the error ``database_error`` gives for workbench.db instead (``DatabaseDamaged`` for damage)."""

    @functools.wraps(method)
    def call(self: Journal, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except (sqlite3.ProgrammingError, sqlite3.IntegrityError, sqlite3.InterfaceError):
            raise  # a bug of ours, not the file's: never "move it aside"
        except sqlite3.DatabaseError as exc:
            if self._damage is not None:  # (a write on the read-only connections ``mark_damaged`` leaves)
                raise DatabaseDamaged(self._damage, path=str(self.path)) from exc
            error = database_error(exc, self.path)
            if _damaged(exc):
                self.mark_damaged(error.message)  # damage deep in a table: ``problem`` says so from now on
            raise error from exc

    return call  # type: ignore[return-value]  # (the same signature: functools.wraps)


class Journal:
    def __init__(self, path: Path, clock: Clock, read_only: bool = False, refused: str | None = None):
        """``refused``: why ``path`` is never opened (the link policy's verdict), raised by every use."""
        self.path = path
        self._refused = refused
        self._damage: str | None = None  # what a call found damaged, once one did
        self._guard: sqlite3.Connection | None = None  # read-only, closed last once damaged (``mark_damaged``)
        self._retired: list[ThreadConnections] = []  # writable connections set aside by ``mark_damaged``
        self._checked: tuple[tuple, str | None] | None = None  # (the files' stamp, ``problem``'s verdict then)
        self.clock = clock
        self.read_only = read_only
        self._conns = ThreadConnections(
            path, read_only, on_connect=None if read_only else self._ensure_schema, follow=True
        )
        self._table_seen = not read_only
        self._wal_path = f"{path}-wal"
        self._checkpointed_at = 0  # the WAL file's size when ``checkpoint_if_due`` last ran one
        self._checkpoint_calls = 0  # its calls since

    # WAL checkpoints of workbench.db (see ``checkpoint_if_due``): SQLite's own, inside a commit, only past
    # twice its usual point; the file cut back to ``WAL_CHECKPOINT_BYTES`` when the WAL starts over (and
    # otherwise written again from its start, in place), so a file past that size holds that many bytes
    WAL_CHECKPOINT_BYTES = 4 << 20  # about SQLite's own 1,000 pages of 4 KiB
    AUTOCHECKPOINT_PAGES = 2000
    CHECKPOINT_CALLS = 100  # (``checkpoint_if_due``: a WAL that did not start over is copied again this often)

    @classmethod
    def _ensure_schema(cls, conn: sqlite3.Connection) -> None:
        conn.execute(f"PRAGMA wal_autocheckpoint={cls.AUTOCHECKPOINT_PAGES}")
        conn.execute(f"PRAGMA journal_size_limit={cls.WAL_CHECKPOINT_BYTES}")
        conn.executescript(_SCHEMA)

    def checkpoint_if_due(self) -> None:
        """A PASSIVE checkpoint of workbench.db on this thread's connection once its WAL file has grown past
        ``WAL_CHECKPOINT_BYTES``: for a writer that has just let go of a lock other processes wait on (a
        memory file's), so that the checkpoint SQLite would otherwise run inside one of its commits there
        (about 4 ms every 130 adds) runs after it. A PASSIVE checkpoint blocks no reader or writer.

        A WAL that did not start over after this process's last checkpoint (other writers raced it, or
        a connection without the size limit wrote first and left the file long) stays past the size:
        it is copied again only once it has grown by another quarter of it or after ``CHECKPOINT_CALLS``
        calls, never on every write. Whatever happens here (a failure is left to the next call), SQLite's
        own checkpoint at ``AUTOCHECKPOINT_PAGES`` bounds the WAL."""
        self._checkpoint_calls += 1
        try:
            size = os.stat(self._wal_path).st_size
        except OSError:
            return
        last, limit = self._checkpointed_at, self.WAL_CHECKPOINT_BYTES
        if size <= limit or (last <= size < last + limit // 4 and self._checkpoint_calls < self.CHECKPOINT_CALLS):
            return
        self._checkpointed_at, self._checkpoint_calls = size, 0
        if self._refused is not None or self.read_only:
            return
        with contextlib.suppress(sqlite3.Error, WorkbenchError):
            conn = self._conns.get()
            if not conn.in_transaction:
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()

    @_names_the_file
    def exists(self) -> bool:
        """Whether there is a journal to read: False for a home opened read-only before any
        workbench journaled in it. workbench.db alone does not tell: a search made in a home
        nothing else has touched creates it with only its index tables."""
        if not self._table_seen and self.path.exists():
            found = self.connection().execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'journal'")
            self._table_seen = found.fetchone() is not None
        return self._table_seen

    def problem(self) -> str | None:
        """Why workbench.db cannot be read now (damaged, not SQLite, a folder, not readable), or None.

        The stores still show their files without it but settle nothing (``Home``), every write is
        refused with this message, and the screens show it. A lock another process holds is no
        problem for reading (WAL), so it is None then too."""
        if self._damage is not None:
            return self._damage
        if not self.path.exists() and not self.path.is_symlink():
            return None
        stamp = database_stamp(
            self.path
        )  # asked per listed session: the schema is read again only once the files moved
        if self._checked is not None and self._checked[0] == stamp:
            return self._checked[1]
        try:
            self._look()
            verdict = None
        except DatabaseBusyError:
            verdict = None
        except WorkbenchError as exc:
            verdict = exc.message
        self._checked = (stamp, verdict)
        return verdict

    def noticed(self, exc: BaseException) -> str | None:
        """Whether damage SQLite reported outside a journal call (a query another module made on
        ``connection()``; the error names no file) is workbench.db's: if SQLite's check of the file finds
        damage, the message a journal call would have raised, remembered as ``problem``; else None."""
        if self._damage is None and isinstance(exc, sqlite3.DatabaseError) and _damaged(exc) and self.path.exists():
            try:
                damaged = bool(integrity_problems(self.path, quick=True))
            except sqlite3.DatabaseError as check:
                damaged = _damaged(check)
            if damaged:
                self.mark_damaged(database_error(exc, self.path).message)
        return self._damage

    def mark_damaged(self, message: str) -> None:
        """workbench.db is damaged (``message`` says so, and what to do): every later call says it (``problem``);
        threads get read-only connections from now on, so no part's write lands in it (SQLite lets one through
        where the damage spares its pages, a table made on first use too); and a read-only connection held
        until ``close`` keeps any close of ours from copying its -wal into it (a -wal not its own, beside a
        restored backup, was in the file for good). ``close`` runs at exit too, for a process that never
        closes its home (the CLI)."""
        if self._damage is None:
            self._damage = message
        if self._guard is None and not self.read_only and (guard := close_guard(self.path)) is not None:
            self._guard = guard
            self._retired.append(self._conns)
            self._conns = ThreadConnections(self.path, True, follow=True)
            atexit.register(self.close)

    def read_or(self, read: Callable[[], _Read], unreadable: _Read) -> _Read:
        """``read()``, or ``unreadable`` while workbench.db cannot be read: its first page (``problem``),
        or damage deep in a table that only this read meets (``problem`` says so from then on). What
        the files hold is still shown, without what the journal would add to it."""
        if self.problem() is not None:
            return unreadable
        try:
            return read()
        except DatabaseDamaged:
            return unreadable

    @_names_the_file
    def reading(self, read: Callable[[], _Read]) -> _Read:
        """``read()``: a query another module makes on this journal's ``connection()``, whose SQLite
        errors are named (and damage remembered) as the journal's own calls' are."""
        return read()

    @_names_the_file
    def _look(self) -> None:
        """Read the schema: the first page a damaged or foreign file fails on."""
        self.connection().execute("SELECT count(*) FROM sqlite_master").fetchone()

    def connection(self) -> sqlite3.Connection:
        """This thread's connection to workbench.db (other parts may keep their own tables there)."""
        if self._refused is not None:
            raise UnsafePath(self._refused)
        return self._conns.get()

    def transaction(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """One write transaction on this thread's connection: the journal calls made inside it
        join it and commit together (a memory write's reads and pending rows: one commit)."""
        self.refuse_damaged()
        return write_transaction(self.connection(), self.read_only)

    def refuse_damaged(self) -> None:
        """Raise ``DatabaseDamaged`` once workbench.db is known to be damaged (``mark_damaged``): another
        part's writes ask this first (``transaction``), since one SQLite lets through (a table the damage
        spared: the skills' look) still lands in the damaged file, or over a -wal not its own."""
        if self._damage is not None:
            raise DatabaseDamaged(self._damage, path=str(self.path))

    def begin(
        self,
        subsystem: str,
        action: str,
        target: str,
        *,
        actor: str = "agent",
        before: str | None = None,
        after: str | None = None,
        session_id: str | None = None,
        message_id: int | None = None,
        detail: dict[str, Any] | None = None,
        snapshot: str | None = None,
    ) -> int:
        """Record an intended change (status ``pending``); call ``commit`` once it is on disk.

        ``snapshot``: a file text to keep in ``journal_files`` (same transaction).
        """
        return self._insert(
            subsystem, action, target, actor, before, after, session_id, message_id, detail, "pending", snapshot
        )

    @_names_the_file
    def file_text(self, sha: str) -> str | None:
        """A kept snapshot by its hash (None when it was released or never kept)."""
        if not self.exists():
            return None
        row = self.connection().execute("SELECT text FROM journal_files WHERE sha = ?", (sha,)).fetchone()
        return row[0] if row else None

    @_names_the_file
    def commit(
        self, entry_id: int, *, snapshot: str | None = None, release: tuple[str, ...] = (), **updates: Any
    ) -> None:
        """Mark a pending row done, optionally correcting before/after/detail with what was really written.

        ``snapshot``: a file text to keep; ``release``: snapshot hashes no longer needed
        (both in the same transaction).
        """
        sets, values = ["status = 'done'"], []
        for key in ("before", "after"):
            if key in updates:
                sets.append(f"{key} = ?")
                values.append(storable(updates[key]))
        conn = self.connection()
        with write_transaction(conn, self.read_only):
            if "detail" in updates:
                sets.append("detail = ?")
                values.append(_detail_json(_kept_tag(conn, entry_id, updates["detail"])))
            conn.execute(f"UPDATE journal SET {', '.join(sets)} WHERE id = ?", (*values, entry_id))
            self._keep(conn, snapshot)
            self._release(conn, release, entry_id)

    @_names_the_file
    def commit_all(
        self,
        entry_ids: list[int],
        *,
        snapshot: str | None = None,
        release: tuple[str, ...] = (),
        since: Mark | None = None,
    ) -> Mark | None:
        """Mark ``begin_all``'s rows done in one transaction, once the change is on disk (with no
        snapshot to keep or release, one ``UPDATE`` in its own transaction: no BEGIN or COMMIT to run).

        Rows another writer settled meanwhile are left as they are; if a later writer has
        begun rows of its own, ``snapshot`` (the file these rows left) is not kept, since
        that writer keeps what it needs, and a ``release``d snapshot one of its rows names
        stays. (The memory store commits under its file lock, so for it neither happens
        unless a process died between its rename and this commit.)

        ``since``: the mark the transaction that began the rows left (``mark_after``); unless this
        connection wrote meanwhile, the mark this commit leaves is returned (else None). It keeps the
        version ``since`` found: a commit of another connection since then moves the version the next
        transaction finds, so that one tells it from this mark.
        """
        if not entry_ids:
            return None
        newest = max(entry_ids)
        conn = self.connection()
        untouched = since is not None and conn.total_changes == since.changes  # (nothing wrote on conn)
        if snapshot is None and not release:  # (most memory writes): one statement, its own transaction
            if len(entry_ids) == 1:
                write_statement(conn, _DONE_ONE, (newest,), self.read_only)
            else:
                write_statement(conn, _DONE_ALL, (json.dumps(entry_ids),), self.read_only)
            return mark_after(conn, since) if untouched and since is not None else None
        with write_transaction(conn, self.read_only):
            conn.executemany(_DONE_ONE, [(i,) for i in entry_ids])
            if (
                snapshot is not None
                and not conn.execute(
                    "SELECT 1 FROM journal AS later, journal AS mine WHERE mine.id = ?1 AND later.id > ?1 "
                    "AND later.subsystem = mine.subsystem AND later.target = mine.target "
                    "AND later.status != 'abandoned' LIMIT 1",
                    (newest,),
                ).fetchone()
            ):
                self._keep(conn, snapshot)
            self._release(conn, release, newest)
        return mark_after(conn, since) if untouched and since is not None else None

    @contextlib.contextmanager
    def recording(self, subsystem: str, action: str, target: str, **fields: Any) -> Iterator[Recording]:
        """The journal-first rule as a block: a pending row before the change, committed (with the
        entry's ``updates``) after it, abandoned if the block fails."""
        entry = Recording(self.begin(subsystem, action, target, **fields))
        try:
            yield entry
        except BaseException as exc:
            self.abandon(entry.id, str(exc) or type(exc).__name__)
            raise
        self.commit(entry.id, **entry.updates)

    @_names_the_file
    def abandon(self, entry_id: int, reason: str) -> None:
        """Mark a pending row as not applied (the change was refused or failed)."""
        conn = self.connection()
        with write_transaction(conn, self.read_only):
            conn.execute(
                "UPDATE journal SET status = 'abandoned', detail = json_set(CASE WHEN json_valid(detail) "
                "THEN detail ELSE '{}' END, '$.reason', ?) WHERE id = ?",  # (a damaged detail gives way to the reason)
                (reason, entry_id),
            )

    def append(
        self,
        subsystem: str,
        action: str,
        target: str,
        *,
        actor: str = "agent",
        before: str | None = None,
        after: str | None = None,
        session_id: str | None = None,
        message_id: int | None = None,
        detail: dict[str, Any] | None = None,
        snapshot: str | None = None,
    ) -> int:
        """Record a change that is already complete."""
        return self._insert(
            subsystem, action, target, actor, before, after, session_id, message_id, detail, "done", snapshot
        )

    def record_in(
        self,
        conn: sqlite3.Connection,
        subsystem: str,
        action: str,
        target: str,
        *,
        actor: str,
        before: str | None = None,
        after: str | None = None,
        session_id: str | None = None,
        message_id: int | None = None,
        detail: dict[str, Any] | None = None,
    ) -> int:
        """Record a completed change inside the caller's open transaction on ``connection()``.

        For changes that live in workbench.db themselves (the local provider's facts): the
        change and its journal row then commit together or not at all.
        """
        return self._execute(
            conn, subsystem, action, target, actor, before, after, session_id, message_id, detail, "done"
        )

    def append_all(
        self,
        subsystem: str,
        target: str,
        rows: list[dict[str, Any]],
        *,
        actor: str,
        session_id: str | None = None,
        message_id: int | None = None,
        snapshot: str | None = None,
        release: tuple[str, ...] = (),
        at: float | None = None,
    ) -> list[int]:
        """Record several completed changes at once (one transaction: all rows or none).

        Each row is a dict of ``action`` and optionally ``before``, ``after``, ``detail``, and its own
        ``actor``, ``session_id``, ``message_id`` and ``at`` where it differs from the others (a catch-up's
        replayed Hermes calls beside an outside edit); ``at`` dates them when they happened before now (an
        outside edit found later).
        """
        return self._insert_all(subsystem, target, rows, actor, session_id, message_id, "done", snapshot, release, at)

    @_names_the_file  # (``within``: SQLite's errors on the caller's connection name workbench.db too)
    def begin_all(
        self,
        subsystem: str,
        target: str,
        rows: list[dict[str, Any]],
        *,
        actor: str,
        session_id: str | None = None,
        message_id: int | None = None,
        within: sqlite3.Connection | None = None,
        at: float | None = None,
    ) -> list[int]:
        """Record several intended changes (status ``pending``) in one transaction; ``commit_all`` them once
        they are on disk. Rows as in ``append_all`` (``at``: their time, the clock's now unless given).

        ``within``: this thread's connection, inside the caller's open ``transaction()``: the rows are
        part of it (they commit with it, or roll back with it), with no savepoint of their own."""
        if within is None:
            return self._insert_all(subsystem, target, rows, actor, session_id, message_id, "pending", None, (), at)
        return self._rows_into(within, subsystem, target, rows, actor, session_id, message_id, "pending", at)

    def _rows_into(self, conn, subsystem, target, rows, actor, session_id, message_id, status, at=None) -> list[int]:
        """Insert ``rows`` (as ``append_all`` takes them) on ``conn``, in its open transaction."""
        return [
            self._execute(
                conn,
                subsystem,
                row["action"],
                target,
                row.get("actor", actor),
                row.get("before"),
                row.get("after"),
                row.get("session_id", session_id),
                row.get("message_id", message_id),
                row.get("detail"),
                status,
                row.get("at", at),
            )
            for row in rows
        ]

    @_names_the_file
    def _insert_all(
        self, subsystem, target, rows, actor, session_id, message_id, status, snapshot, release, at=None
    ) -> list[int]:
        conn = self.connection()
        with write_transaction(conn, self.read_only):
            self._keep(conn, snapshot)
            ids = self._rows_into(conn, subsystem, target, rows, actor, session_id, message_id, status, at)
            self._release(conn, release, ids[-1] if ids else 0)
            return ids

    @_names_the_file
    def _insert(
        self,
        subsystem,
        action,
        target,
        actor,
        before,
        after,
        session_id,
        message_id,
        detail,
        status,
        snapshot: str | None = None,
    ) -> int:
        conn = self.connection()
        with write_transaction(conn, self.read_only):
            self._keep(conn, snapshot)
            return self._execute(
                conn, subsystem, action, target, actor, before, after, session_id, message_id, detail, status
            )

    @staticmethod
    def _keep(conn: sqlite3.Connection, snapshot: str | None) -> None:
        """Inside a transaction: keep one snapshot."""
        if snapshot is not None:
            conn.execute(
                "INSERT OR IGNORE INTO journal_files (sha, text) VALUES (?, ?)", (content_hash(snapshot), snapshot)
            )

    @staticmethod
    def _release(conn: sqlite3.Connection, release: tuple[str, ...], newest_id: int) -> None:
        """Inside a transaction: drop released snapshots, except one that a row after ``newest_id``
        (a write that began meanwhile) or ``newest_id`` itself names as the file it leaves."""
        if not release:  # (most writes release none: no statement to prepare)
            return
        conn.executemany(
            "DELETE FROM journal_files WHERE sha = ?1 AND NOT EXISTS (SELECT 1 FROM journal WHERE id >= ?2 "
            "AND status != 'abandoned' AND json_extract(detail, '$.file_sha') = ?1)",
            [(sha, newest_id) for sha in release],
        )

    def _execute(
        self, conn, subsystem, action, target, actor, before, after, session_id, message_id, detail, status, at=None
    ) -> int:
        if actor not in ACTORS:
            raise ValueError(f"unknown actor {actor!r}; expected one of {ACTORS}")
        cur = conn.execute(
            "INSERT INTO journal (at, actor, subsystem, action, target, before, after, session_id, message_id, "
            "detail, status)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                self.clock.now() if at is None else at,
                actor,
                subsystem,
                storable(action),
                storable(target),
                storable(before),
                storable(after),
                storable(session_id),
                message_id,
                _detail_json(_with_tag(actor, detail)),
                status,
            ),
        )
        return int(cur.lastrowid)

    @_names_the_file
    def get(self, entry_id: int) -> JournalEntry | None:
        if not self.exists():
            return None
        row = self.connection().execute("SELECT * FROM journal WHERE id = ?", (entry_id,)).fetchone()
        return _row(row) if row else None

    @_names_the_file
    def query(
        self,
        *,
        subsystem: str | None = None,
        target: str | None = None,
        session_id: str | None = None,
        actor: str | None = None,
        actions: tuple[str, ...] | None = None,
        limit: int = 50,
        before_id: int | None = None,
        since: float | None = None,
        include_pending: bool = False,
        oldest_first: bool = False,
    ) -> list[JournalEntry]:
        """Newest first, or ``oldest_first`` (``since``: rows at or after that time)."""
        if not self.exists():
            return []
        where: list[str] = []
        args: list[object] = []
        if actions is not None:
            where.append(f"action IN ({', '.join('?' * len(actions))})")
            args += actions
        for column, value in (
            ("subsystem", subsystem),
            ("target", target),
            ("session_id", session_id),
            ("actor", actor),
        ):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        if before_id is not None:
            where.append("id < ?")
            args.append(before_id)
        if since is not None:
            where.append("at >= ?")
            args.append(since)
        if not include_pending:
            where.append("status = 'done'")
        where.append(f"NOT ({LOOK_AT_NOTHING})")
        order = "id" if oldest_first else "id DESC"
        sql = (
            "SELECT * FROM journal" + (f" WHERE {' AND '.join(where)}" if where else "") + f" ORDER BY {order} LIMIT ?"
        )
        return [_row(r) for r in self.connection().execute(sql, (*args, limit))]

    @_names_the_file
    def targets(self, subsystem: str, targets: list[str]) -> list[str]:
        """Which of ``targets`` any row of ``subsystem`` names (done, pending or abandoned)."""
        if not self.exists() or not targets:
            return []
        rows = self.connection().execute(
            "SELECT DISTINCT target FROM journal WHERE subsystem = ? AND target IN (SELECT value FROM json_each(?))",
            (subsystem, json.dumps(targets)),
        )
        return [row[0] for row in rows]

    @_names_the_file
    def undos_of(self, row_id: int) -> list[int]:
        """Every done row that names ``row_id`` as the row it undid (``undo_of``), oldest first."""
        if not self.exists():
            return []
        rows = self.connection().execute(
            f"SELECT id FROM journal WHERE {_UNDOES} AND {_UNDO_OF} = ? AND id > ? AND status = 'done' ORDER BY id",
            (row_id, row_id),
        )
        return [row[0] for row in rows]

    @_names_the_file
    def undone_by(self, ids: list[int]) -> dict[int, int]:
        """Which of ``ids`` stand undone, each with the row that undid it: its newest undo, when
        that undo is not itself undone (an undo of an undo of an undo still undoes: the chain of
        newest undos is followed to its end, and an odd count of them takes the row back)."""
        if not ids or not self.exists():
            return {}
        newest: dict[int, int] = {}  # a row -> its newest undo row
        asked, looked = list(ids), set(ids)
        while asked:
            found = dict(self.connection().execute(UNDOS_OF, (json.dumps(asked), min(asked))).fetchall())
            newest.update(found)
            asked = [undo for undo in found.values() if undo not in looked]  # an undo is newer: this ends
            looked.update(asked)
        undone = {}
        for row_id in ids:
            depth, step = 0, row_id
            while step in newest:
                depth, step = depth + 1, newest[step]
            if depth % 2:
                undone[row_id] = newest[row_id]
        return undone

    @_names_the_file
    def proposers(self, subsystem: str, action: str) -> dict[str, str]:
        """Each target's proposer, where its newest done ``action`` row replayed an approved proposal,
        or the newest is a proposal of that action approved outside the workbench (which names its
        target ``name`` in its payload, as a skill proposal does)."""
        if not self.exists():
            return {}
        rows = self.connection().execute(
            "SELECT target, CASE WHEN json_valid(detail) THEN json_extract(detail, '$.proposed_by') END, id "
            "FROM journal WHERE subsystem = ? AND action = ? AND status = 'done' "
            "UNION ALL SELECT json_extract(detail, '$.payload.name'), json_extract(detail, '$.proposed_by'), id "
            "FROM journal WHERE subsystem = 'approvals' AND action = 'approve' AND actor = 'external' "
            "AND json_valid(detail) AND json_extract(detail, '$.subsystem') = ? "
            "AND json_extract(detail, '$.payload.action') = ? ORDER BY id",
            (subsystem, action, subsystem, action),
        )
        newest = {target: who for target, who, _ in rows}
        return {target: who for target, who in newest.items() if isinstance(who, str) and who}

    @_names_the_file
    def rejected_payloads(self, subsystem: str) -> list[tuple[str, dict[str, Any]]]:
        """(pending id, payload) of each ``subsystem`` proposal a person rejected here and nobody put back
        since (``restore``), oldest first."""
        if not self.exists():
            return []
        rows = self.connection().execute(
            "SELECT target, json_extract(detail, '$.payload') FROM journal AS r WHERE subsystem = 'approvals' "
            "AND action = 'reject' AND actor = 'user' AND status = 'done' AND json_valid(detail) "
            "AND json_extract(detail, '$.subsystem') = ? AND NOT EXISTS (SELECT 1 FROM journal WHERE "
            "subsystem = 'approvals' AND action = 'restore' AND target = r.target AND status = 'done' AND id > r.id) "
            "ORDER BY id",
            (subsystem,),
        )
        return [(target, payload) for target, raw in rows if raw and isinstance(payload := json.loads(raw), dict)]

    @_names_the_file
    def writers_of(self, subsystem: str, target: str, text: str) -> list[JournalEntry]:
        """Provenance: the done rows whose result (``after``) is exactly ``text``, newest first."""
        if not self.exists():
            return []
        rows = self.connection().execute(
            "SELECT * FROM journal WHERE subsystem = ? AND target = ? AND after = ? AND status = 'done' "
            "ORDER BY id DESC",
            (subsystem, target, text),
        )
        return [_row(r) for r in rows]

    @_names_the_file
    def texts_holding(self, subsystem: str, target: str, part: str, actions: tuple[str, ...], limit: int) -> list[str]:
        """Up to ``limit`` distinct texts that done ``actions`` rows wrote or took away holding ``part``,
        the most recently journaled first."""
        if not self.exists():
            return []
        named = {f"a{i}": action for i, action in enumerate(actions)}
        kinds = ", ".join(f":{name}" for name in named)
        where = f"subsystem = :subsystem AND target = :target AND status = 'done' AND action IN ({kinds})"
        rows = self.connection().execute(
            f"SELECT value FROM (SELECT after AS value, id FROM journal WHERE {where} "
            f"UNION ALL SELECT before, id FROM journal WHERE {where}) "
            "WHERE instr(value, :part) > 0 GROUP BY value ORDER BY max(id) DESC LIMIT :limit",
            {"subsystem": subsystem, "target": target, "part": part, "limit": limit, **named},
        )
        return [row[0] for row in rows]

    @_names_the_file
    def about(
        self,
        subsystem: str,
        target: str,
        text: str,
        limit: int = 1000,
        before_id: int | None = None,
        after_id: int | None = None,
    ) -> list[JournalEntry]:
        """History of one text: the done rows that wrote it (``after``) or took it away (``before``),
        newest first (``before_id``: only rows older than that one), or, given ``after_id``, the rows
        newer than that one, oldest first."""
        if not self.exists():
            return []
        order = "ASC" if after_id is not None else "DESC"
        rows = self.connection().execute(
            "SELECT * FROM journal WHERE subsystem = ? AND target = ? AND (after = ? OR before = ?) "
            f"AND status = 'done' AND id < ? AND id > ? ORDER BY id {order} LIMIT ?",
            (
                subsystem,
                target,
                text,
                text,
                2**63 - 1 if before_id is None else before_id,
                -1 if after_id is None else after_id,
                limit,
            ),
        )
        return [_row(r) for r in rows]

    @_names_the_file
    def about_all(self, subsystem: str, target: str, texts: Sequence[str]) -> dict[str, list[JournalEntry]]:
        """``about`` for many texts in one statement (one pass over the target's rows, not one per text):
        each text's rows, newest first; a text no row is about is left out."""
        if not texts or not self.exists():
            return {}
        wanted = json.dumps(list(dict.fromkeys(texts)))
        rows = self.connection().execute(
            "SELECT * FROM journal WHERE subsystem = ? AND target = ? AND status = 'done' "
            "AND (after IN (SELECT value FROM json_each(?)) OR before IN (SELECT value FROM json_each(?))) "
            "ORDER BY id DESC",
            (subsystem, target, wanted, wanted),
        )
        found: dict[str, list[JournalEntry]] = {}
        keys = set(texts)
        for r in rows:
            entry = _row(r)
            for text in {entry.after, entry.before}:
                if text in keys:
                    found.setdefault(text, []).append(entry)
        return found

    @_names_the_file
    def first(self, subsystem: str, target: str, action: str) -> JournalEntry | None:
        """The oldest done row of ``action`` on ``target`` (e.g. when the workbench first saw a file)."""
        if not self.exists():
            return None
        row = (
            self.connection()
            .execute(
                "SELECT * FROM journal WHERE subsystem = ? AND target = ? AND action = ? AND status = 'done' "
                "ORDER BY id LIMIT 1",
                (subsystem, target, action),
            )
            .fetchone()
        )
        return _row(row) if row else None

    @_names_the_file
    def pending(
        self, subsystem: str, target: str | None = None, *, within: sqlite3.Connection | None = None
    ) -> list[JournalEntry]:
        """Rows still ``pending``, oldest first: under the owner's lock, each is an interrupted change to settle.

        A home without a journal yet has none (and asking does not create workbench.db). ``within``:
        this thread's connection inside the caller's open ``transaction()``, where the journal is
        there for certain (no look at the file first).
        """
        if within is None and (not self.path.exists() or not self.exists()):
            return []
        sql = "SELECT * FROM journal WHERE status = 'pending' AND subsystem = ?" + (" AND target = ?" if target else "")
        args = (subsystem, target) if target else (subsystem,)
        return [_row(r) for r in (within or self.connection()).execute(sql + " ORDER BY id", args)]

    @_names_the_file
    def applied(self, subsystem: str, pending_id: str) -> bool:
        """True when a done row of ``subsystem`` applied the pending record ``pending_id`` (settling an approval)."""
        return bool(self.applying(subsystem, pending_id, limit=1))

    def applying(self, subsystem: str, pending_id: str, limit: int = -1) -> list[int]:
        """The done rows of ``subsystem`` that applied the pending record ``pending_id``: the change its
        approval led to (the Timeline says a group's revert takes it back)."""
        if not self.exists():
            return []
        rows = self.connection().execute(
            "SELECT id FROM journal WHERE subsystem = ? AND status = 'done' "
            "AND json_extract(detail, '$.pending_id') = ? ORDER BY id LIMIT ?",
            (subsystem, pending_id, limit),
        )
        return [row[0] for row in rows]

    @_names_the_file
    def holds_file(self, subsystem: str, text: str) -> bool:
        """True when a row recorded ``text`` as a whole file (its hash, or ``file_after`` in older rows):
        a leftover temp of it adds nothing."""
        return (
            self.path.exists()
            and self.exists()
            and self.connection()
            .execute(
                "SELECT 1 FROM journal WHERE subsystem = ? AND (json_extract(detail, '$.file_sha') = ? "
                "OR json_extract(detail, '$.file_after') = ?) LIMIT 1",
                (subsystem, content_hash(text), text),
            )
            .fetchone()
            is not None
        )

    def close(self) -> None:
        self._conns.close_all()
        for conns in self._retired:
            conns.close_all()
        self._retired.clear()
        if self._guard is not None:  # (last: ``mark_damaged``)
            self._guard.close()
            self._guard = None
            atexit.unregister(self.close)
