"""The archive's plumbing: opening state.db safely, connections, journaling and events."""

from __future__ import annotations

import atexit
import contextlib
import functools
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from ..counts import counted
from ..db import (
    RETRY_LONGER,
    Checkpointer,
    DatabaseBusyError,
    DatabaseDamaged,
    ThreadConnections,
    busy_seconds,
    close_guard,
    connect,
    damaged_message,
    database_stamp,
    flock_holders,
    integrity_problems,
    is_corrupt,
    refuse_stranded_wal,
    retry_once,
    write_transaction,
)
from ..errors import ReadOnlyError, WorkbenchError
from ..events import Event
from ..fileio import UnsafePath, crash_point, lock_path_for
from ..journal import Recording
from ..textsafety import quoted
from ..values import count_value, number_value, text_value
from . import merges, schema
from .models import Session, parse_json
from .turn_checks import TurnChecks

if TYPE_CHECKING:
    from ..home import Home

SUBSYSTEM = "sessions"
log = logging.getLogger(__name__)
T = TypeVar("T")
P = ParamSpec("P")
Core = TypeVar("Core", bound="ArchiveCore")
BOUND_PARAMETERS = 500  # ids bound in one statement, well under SQLite's limit


def in_chunks(ids: list[str]) -> Iterator[tuple[list[str], str]]:
    """``ids`` a statement's worth at a time, each with its ``?, ?, …`` placeholders."""
    for start in range(0, len(ids), BOUND_PARAMETERS):
        chunk = ids[start : start + BOUND_PARAMETERS]
        yield chunk, ", ".join("?" * len(chunk))


def changes_archive(method: Callable[Concatenate[Core, P], T]) -> Callable[Concatenate[Core, P], T]:
    """Run an archive change holding the change lock from its first read, so the state it reads,
    the row it journals and the change itself all see the same archive (``ArchiveCore.changing``)."""

    @functools.wraps(method)
    def run(self: Core, *args: P.args, **kwargs: P.kwargs) -> T:
        self.refuse_damaged()  # refused, not attempted: its first read could be of the damage
        with self.changing():
            return method(self, *args, **kwargs)

    return run


class ArchiveCore:
    """Connections (one per thread) to state.db and what every part of the archive shares."""

    def __init__(self, home: Home):
        self.home = home
        self.path: Path = home.state_db_path
        self.read_only = home.read_only
        self.clock = home.clock
        self._lock = threading.RLock()  # (``mark_damaged`` may be called while ``_open`` holds it)
        self._conns: ThreadConnections | None = None
        self._checkpoints: Checkpointer | None = None  # WAL checkpoints off the write path
        self._caps: schema.Capabilities | None = None
        self._bounds: tuple[tuple[str, ...], str] = ((), "")  # the FTS tables the write path keeps whole
        self._held = threading.local()  # how deep this thread is in ``changing``
        self._turns = threading.local()  # this thread's ``TurnChecks``
        self._merge_owed: dict[str, int] = {}  # large-level merge pages this process's turns owe (merges)
        # Called with (step, done, total) while a layout completion or index rebuild runs (set by a skin).
        self.progress: schema.Progress | None = None
        self.completed: schema.Layout | None = None  # what opening this archive added to its layout, if anything
        # Why state.db must not be written (``damaged``): set by the first check or read that found it
        # damaged, and kept for the life of this archive; every writer checks it first.
        self.damage: str | None = None
        self._vetted: tuple | None = None  # the files' stamp when SQLite's quick_check last passed (``vet``)
        self._guard: sqlite3.Connection | None = None  # read-only: keeps our last close from checkpointing
        self._damage_lock = threading.Lock()
        self._retired: list[ThreadConnections] = []  # writable connections set aside by ``mark_damaged``

    # -- opening -------------------------------------------------------------------
    def _open(self) -> ThreadConnections:
        with self._lock:
            if self._conns is not None:
                return self._conns
            self.path = self.home.links.resolve_file(self.home.state_db_path)  # a moved state.db is followed
            exists = self.path.exists() and self.path.stat().st_size > 0
            if not exists:
                refuse_stranded_wal(self.path)  # (an empty in-memory archive below would say "no sessions")
            if exists:
                self._probe()  # read-only look first: a corrupt or foreign file is never touched
            if self.damage is not None:  # known damaged: connections that cannot write or checkpoint
                conns = self._following(True)
                conn = conns.get()
            elif self.read_only and not exists:
                # Nothing archived yet and we may not create files: an empty in-memory archive.
                conns = ThreadConnections(Path(":memory:"), False, on_connect=schema.create_schema)
                conn = conns.get()
            else:
                self._checkpoints = None if self.read_only else Checkpointer(self.path)
                conns = self._following(self.read_only, self._checkpoints.adopt if self._checkpoints else None)
                conn = conns.get()
                if (
                    not self.read_only
                    and not schema.create_schema(conn)
                    and schema.completable(conn)
                    and not schema.layout_gaps(conn).complete
                    and self._vet(self.path) is None  # a completion nobody asked for: only into a sound file
                ):
                    self.completed = self._complete(conn, "complete-layout")
                if self.damage is not None:  # the check before that completion found it damaged
                    self._retired.append(conns)
                    conns = self._following(True)
                    conn = conns.get()
            self._read_caps(conn)
            self._conns = conns
            return conns

    def _following(
        self, read_only: bool, on_connect: Callable[[sqlite3.Connection], object] | None = None
    ) -> ThreadConnections:
        """Connections to state.db that follow another file put in its place (a backup restored, a file
        renamed into place), each new file looked at first as opening looks (``_look_again``)."""
        return ThreadConnections(self.path, read_only, on_connect, follow=True, look=self._look_again)

    def _look_again(self) -> None:
        """Before any thread connects to another state.db put in the place of the one opened: the read-only
        look opening takes (a file that is not a usable archive is refused, never written), and its layout
        read again (a backup from an older Hermes may lack columns). An empty one, or none (a reset), gets
        Hermes's layout, as opening gives it."""
        with self._lock:
            try:
                caps = self._probe() if self.path.stat().st_size > 0 else None
            except FileNotFoundError:
                caps = None
            except OSError:
                return  # (connecting says why)
            if caps is None and not self.read_only:
                with contextlib.closing(connect(self.path)) as conn:
                    schema.create_schema(conn)
                    caps = schema.inspect(conn, self.path)
            if caps is not None:
                self._take_caps(caps)

    def _read_caps(self, conn: sqlite3.Connection) -> None:
        self._take_caps(schema.inspect(conn, self.path))

    def _take_caps(self, caps: schema.Capabilities) -> None:
        tables = tuple(t for t, ok in (("messages_fts", caps.fts), ("messages_fts_trigram", caps.trigram)) if ok)
        self._caps, self._bounds = caps, (tables, schema.bounds_sql(tables))

    def _complete(self, conn: sqlite3.Connection, action: str, recount: bool = False) -> schema.Layout:
        """Complete the layout and refill out-of-step FTS tables in one transaction, journaled first."""
        self.refuse_damaged()
        with self.journaled(action, "*", actor="user") as entry:
            with write_transaction(conn):
                done = schema.repair(conn, self.progress, recount=recount)
            self._wrote(conn, 0.0)
            entry.updates["detail"] = {"done": done.describe()}
        return done

    def repair_index(self) -> schema.Layout:
        """Doctor's repair: complete the layout and rebuild every FTS table whose rows differ from messages."""
        conn = self.conn()
        done = self._complete(conn, "repair-index", recount=True)
        self._read_caps(conn)  # a repair may have created an FTS table
        return done

    def turn_checks(self, conn: sqlite3.Connection) -> TurnChecks:
        """This thread's view of state.db between its appends, brought up to date inside a write
        transaction on ``conn`` (``turn_checks``: what an append may skip)."""
        checks = getattr(self._turns, "checks", None)
        if checks is None:
            checks = self._turns.checks = TurnChecks()
        checks.look(conn, self._bounds[0])
        return checks

    def _probe(self) -> schema.Capabilities | None:
        """The read-only look at a file before anything writes to it: raises when it is not a usable archive;
        returns its layout (None: no tables yet)."""
        try:
            probe = connect(self.path, read_only=True)
        except sqlite3.DatabaseError as exc:
            raise schema._fail(self.path, exc) from exc
        try:
            schema.check_integrity(probe, self.path)
            tables = probe.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if tables:
                unreadable = merges.deep_indexes(probe, over=merges.UNREADABLE_LEVELS)
                if unreadable:  # FTS5 would fail to open it below, and the fix is doctor's, not a new archive
                    raise WorkbenchError(
                        f"{self.path}: its search index {', '.join(unreadable)} lists "
                        f"{max(unreadable.values()):,} levels, so SQLite reads it as damaged (every search "
                        "fails, and so does every message Hermes stores). The messages are intact: run "
                        "`workbench doctor --fix` with Hermes stopped to rebuild the index.",
                        path=str(self.path),
                    )
                return schema.inspect(probe, self.path)
            return None
        finally:
            probe.close()

    def conn(self) -> sqlite3.Connection:
        return self._open().get()

    @contextlib.contextmanager
    def one_snapshot(self) -> Iterator[None]:
        """Reads in one read transaction: what another process writes meanwhile is in all of them or none
        (a view built from several reads never mixes two states of the archive)."""
        conn = self.conn()
        if conn.in_transaction:
            yield
            return
        conn.execute("BEGIN")
        try:
            yield
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")

    @property
    def caps(self) -> schema.Capabilities:
        """The layout of the file this thread's connection is on: getting it first looks at another file put
        in place (``_look_again``), so a statement built from these goes to a file that has them."""
        self.conn()
        assert self._caps is not None
        return self._caps

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        if self.damage is not None:
            self.refuse_damaged()
        started = time.perf_counter()
        try:
            with write_transaction(self.conn(), self.read_only) as conn:
                yield conn
        except sqlite3.DatabaseError as exc:  # damage met on the way: no later write tries again
            self.noticed(exc)
            raise
        self._wrote(conn, time.perf_counter() - started)

    # -- damage -----------------------------------------------------------------------
    def refuse_damaged(self) -> None:
        """Raise ``DatabaseDamaged`` (doctor's salvage advice) when state.db is known to be damaged: every
        write, the user's and the idle ones alike, asks this first."""
        if self.damage is not None:
            raise DatabaseDamaged(self.damage, path=str(self.path))

    def noticed(self, exc: BaseException) -> None:
        """A read or write failed with SQLite's word for damage: if state.db itself is damaged (its own
        check says so, ``vet``), say so once and write no more. The error alone does not tell which
        file it came from: idle upkeep also writes workbench.db's search index, and damage there
        marked a sound state.db damaged, refusing every write to it (found in review)."""
        if is_corrupt(exc):
            self.vet(again=True)

    def mark_damaged(self, what: str, quiet: bool = False) -> None:
        """State.db is damaged (``what``: SQLite's word for it): every later write is refused, and the
        connections already open are kept from checkpointing their WAL into it as they close. Said as a
        warning (both skins show one) unless ``quiet``."""
        with self._lock, self._damage_lock:
            if self.damage is not None:
                return
            self.damage = damaged_message(self.path, what)
            if not self.read_only:
                self._leave_alone()
        if not quiet:  # (a caller that shows it says it itself)
            log.warning("%s", self.damage)

    def _leave_alone(self) -> None:
        """SQLite checkpoints the WAL into the file when the last connection to it closes, unless that
        connection is read-only. So: a read-only connection held open until ``close``, which closes it
        last; the writable connections set aside for ``close`` (threads get read-only ones from now
        on); and ``close`` run at exit, too, for a process that never closes its home (the CLI), since
        the interpreter would close the connections in any order."""
        self._guard = close_guard(self.path)
        if self._conns is not None and not self._conns.read_only:
            self._retired.append(self._conns)
            self._conns = self._following(True)
        atexit.register(self.close)

    def vet(self, again: bool = False, quiet: bool = False) -> str | None:
        """Before a write nobody asked for (idle upkeep, a layout completion, storing kept messages):
        SQLite's ``quick_check`` of the whole of state.db, once per process, on a read-only connection.
        Returns why it must not be written (``damage``), or None when it is sound. ``again``: even
        if it was sound before, when it changed since (a read has just failed on a damaged page:
        state.db's, or workbench.db's?)."""
        if self.damage is not None or (self._vetted is not None and not again):
            return self.damage
        try:
            path = self.home.links.resolve_file(self.home.state_db_path)
        except (UnsafePath, OSError):
            return self.damage  # opening it says why
        return self._vet(path, quiet)

    def _vet(self, path: Path, quiet: bool = False) -> str | None:
        stamp = database_stamp(path)
        if self.damage is not None or self._vetted == stamp:
            return self.damage
        try:
            if path.stat().st_size == 0:
                return None  # nothing to damage yet
        except OSError:
            return None
        try:
            problems = integrity_problems(path, quick=True)
        except sqlite3.DatabaseError as exc:
            if not is_corrupt(exc):
                return None  # busy, a disk error: not a verdict; the next write nobody asked for checks again
            problems = [str(exc)]
        if problems:
            shown = problems[0] + (f"; {counted(len(problems) - 1, 'more problem')}" if len(problems) > 1 else "")
            self.mark_damaged(f"SQLite's check reports: {shown}", quiet)
        else:
            self._vetted = stamp
        return self.damage

    def settle_checkpoints(self, timeout: float = 10.0) -> None:
        """Wait for this process's background WAL copy, so a checkpoint run here (doctor's) never
        finds its own thread holding the WAL and reports it as another program."""
        if self._checkpoints is not None:
            self._checkpoints.settle(timeout)

    def _wrote(self, conn: sqlite3.Connection, spent: float) -> None:
        """After any committed write to state.db: its connections never checkpoint on their own."""
        if self._checkpoints is not None:
            self._checkpoints.wrote(conn, spent)

    def close(self) -> None:
        with self._lock:
            if self._checkpoints is not None:
                self._checkpoints.close()
                self._checkpoints = None
            if self._conns is not None:
                self._conns.close_all()
                self._conns = None
            for conns in self._retired:
                conns.close_all()
            self._retired.clear()
            if self._guard is not None:  # closed last (``mark_damaged``)
                self._guard.close()
                self._guard = None
                atexit.unregister(self.close)
            index = self.__dict__.get("_bigram")
            if index is not None:
                index.close()

    # -- column-aware SQL fragments -----------------------------------------------
    def _visible(self, alias: str = "m") -> str:
        """Rows search may show: live, or archived by compaction (not rewound)."""
        if self.caps.has("messages", "active") and self.caps.has("messages", "compacted"):
            return f"({alias}.active = 1 OR {alias}.compacted = 1)"
        return "1"

    def _live(self, alias: str = "m") -> str:
        return f"{alias}.active = 1" if self.caps.has("messages", "active") else "1"

    def _require(self, table: str, *columns: str) -> None:
        missing = [c for c in columns if not self.caps.has(table, c)]
        if missing:
            raise WorkbenchError(
                f"This state.db (schema {self.caps.version}) has no {table}.{', '.join(missing)}; "
                "open it once with a current Hermes to upgrade it, then retry."
            )

    # -- rows ------------------------------------------------------------------------
    @staticmethod
    def _session(row: sqlite3.Row, **extra: Any) -> Session:
        keys = row.keys()

        def get(name: str, default: Any = None) -> Any:
            return row[name] if name in keys and row[name] is not None else default

        config = parse_json(get("model_config"))
        return Session(
            id=text_value(row["id"]) or "",
            source=text_value(get("source")) or "",
            title=text_value(get("title")),
            model=text_value(get("model")),
            parent_session_id=text_value(get("parent_session_id")),
            started_at=number_value(get("started_at")),
            ended_at=number_value(get("ended_at")),
            end_reason=text_value(get("end_reason")),
            message_count=count_value(get("message_count", 0)),
            tool_call_count=count_value(get("tool_call_count", 0)),
            input_tokens=count_value(get("input_tokens", 0)),
            output_tokens=count_value(get("output_tokens", 0)),
            archived=bool(count_value(get("archived", 0))),
            model_config=config if isinstance(config, dict) else None,
            system_prompt=text_value(get("system_prompt")),
            child_count=get("child_count"),
            **extra,
        )

    def _session_or_fail(self, session_id: str) -> Session:
        return self._session(self._session_row_or_fail(session_id))

    def _session_row_or_fail(self, session_id: str) -> sqlite3.Row:
        """The session's row as stored (every column), or the error that names no such session."""
        row = self.conn().execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            raise WorkbenchError(
                f"No session with id {quoted(session_id)}. List sessions with `workbench sessions list`.",
                session_id=session_id,
            )
        return row

    # -- journal and events -------------------------------------------------------
    @contextlib.contextmanager
    def journaled(
        self,
        action: str,
        target: str,
        *,
        actor: str,
        before: str | None = None,
        after: str | None = None,
        detail: dict | None = None,
    ) -> Iterator[Recording]:
        """Journal row written before the change, marked done after it (abandoned on failure).

        The row says what the change means to leave (``after``, ``detail``), so that if this
        process dies between the two, the next one can tell from state.db whether it did
        (``interrupted``); the change lock marks the row as live meanwhile.
        """
        if self.read_only:
            raise ReadOnlyError("This home is open read-only; the session archive was not changed.")
        self.refuse_damaged()
        session_id = None if target == "*" else target
        with (
            self.changing(),
            self.home.journal.recording(
                SUBSYSTEM, action, target, actor=actor, before=before, after=after, session_id=session_id, detail=detail
            ) as entry,
        ):
            crash_point("archive-journaled")
            yield entry
            crash_point("archive-changed")

    @contextlib.contextmanager
    def changing(self, *, wait: bool = True) -> Iterator[None]:
        """Hold the archive's change lock (``state.db.lock``) around a journaled change.

        While a process holds it, its ``pending`` rows are live; a pending row found by the
        holder was left by a process that died mid-change. Taken again by the same thread,
        it is already held. Another holder is waited for as long as a busy database is
        (``busy_seconds``), then the change is refused; ``wait=False``: ``BlockingIOError`` at once.
        """
        depth: int = getattr(self._held, "depth", 0)
        if self.read_only or depth:  # (read only: nothing changes, and no lock file is made)
            self._held.depth = depth + 1
            try:
                yield
            finally:
                self._held.depth -= 1
            return
        with contextlib.ExitStack() as held:
            self._take_change_lock(held, wait)
            self._held.depth = 1
            try:
                yield
            finally:
                self._held.depth = 0

    def _take_change_lock(self, held: contextlib.ExitStack, wait: bool) -> None:
        path, shown = self.home.state_db_path, lock_path_for(self.home.state_db_path)
        started, pause = time.monotonic(), 0.005
        while True:
            try:
                held.enter_context(self.home.links.lock(path, wait=False))
                return
            except BlockingIOError:
                waited = time.monotonic() - started
                if not wait:
                    raise
                if waited >= busy_seconds():
                    holders = flock_holders(lock_path_for(path))
                    who = f"process {', '.join(holders)}" if holders else "another process"
                    said = (
                        f"The session archive is busy: {who} is changing it (it holds {shown}; waited "
                        f"{waited:.1f} s). Nothing was changed."
                    )
                    raise DatabaseBusyError(
                        f"{said} {RETRY_LONGER}", in_app=f"{said} {retry_once(holders)}", holders=holders
                    ) from None
                time.sleep(pause)
                pause = min(pause * 2, 0.05)
            except UnsafePath as exc:
                raise WorkbenchError(f"Cannot lock {shown}: {exc.message}") from exc
            except OSError as exc:
                raise WorkbenchError(f"Cannot lock {shown}: {exc.strerror or exc}. Nothing was changed.") from exc

    def _publish(self, event: Event) -> None:
        self.home.bus.publish(event)
