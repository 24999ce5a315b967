"""Notice changes other processes make to the home, within a second.

A real Hermes agent or an editor may change memory files, skills, pending records,
state.db or config.yaml behind our back. ``HomeWatcher.run`` (meant for a thread worker)
watches those paths with watchfiles and reports each batch as a set of kinds (memory
targets, "skills", "pending", "sessions", "config", "journal"). Our own lock and temp files are ignored.
workbench.db counts by the commits that change its journal ("journal": another workbench process journaled a
row or credited one to Hermes's call, which no file of the home shows; this process's own journal writes count
too, a reload more for a screen that heard of them already, but not the index upkeep's commits beside them).
state.db's idle index merges, this process's, are left out as they tell of them (``HomeWatcher.witness``).
Whether a reported memory change is news (another process wrote it) or this
process's own write is for the store to decide (``MemoryStore.record_external_change``
compares with what this process last wrote or saw). The first report, before any
change, names both memory targets, config.yaml and "pending", so edits made and
proposals staged while nobody watched are caught up, and "skill files", so the skills'
first look (their baseline) is taken, and "session flags", so sessions archived or
deleted outside while nobody watched are journaled (``engine.archive.outside``).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from watchfiles import watch

from engine.db import connect, is_busy
from engine.errors import WorkbenchError
from engine.fileio import UnsafePath
from engine.home import Home
from engine.journal import CHANGES as JOURNAL_CHANGES
from engine.memory.targets import FILE_NAMES, TARGETS

log = logging.getLogger(__name__)

SESSION_FILES = {"state.db", "state.db-wal", "state.db-journal"}
DEBOUNCE_MS = 250
HOLD_S = 2.0  # a writer's merge step takes milliseconds: a hold it never ended stops counting after this


def classify(home: Home, paths: Iterable[str]) -> set[str]:
    """Which parts of the home these changed paths belong to.

    Returns a subset of the memory targets' names and {"skills", "pending", "sessions"}, plus
    "skill files" when a change under skills/ is more than the ledger: a skill's files, or
    ``.usage.json``, where Hermes records pins, for ``OutsideChanges.record`` ("config"
    comes from ``HomeWatcher``'s stat of config.yaml, as state.db's does). Paths are
    compared resolved, since the watcher reports absolute paths and ``--home`` may be
    relative or pass through a symlink.
    """
    root = home.root.resolve()
    memories, skills, pending = (
        root / home.memories_dir.name,
        root / home.skills_dir.name,
        root / home.pending_dir.name,
    )
    files = {FILE_NAMES[target]: target for target in TARGETS}
    linked = {target: kind for kind, target in memory_targets(home).items()}
    kinds: set[str] = set()
    for raw in paths:
        path = Path(raw).resolve()
        name = path.name
        if name.endswith((".lock", ".tmp")) or name.startswith((".mem_", ".tmp")):
            continue
        if path in linked:  # a memory file, or the target of a linked one (dotfiles)
            kinds.add(linked[path])
        elif path.parent == memories and name in files:
            kinds.add(files[name])
        elif path.parent == root and name in SESSION_FILES:
            kinds.add("sessions")
        elif _inside(path, skills):
            kinds.add("skills")
            if path.parent != skills or not name.startswith(".") or name == ".usage.json":  # not the ledger
                kinds.add("skill files")
        elif _inside(path, pending) and name.endswith(".json"):
            kinds.add("pending")
    return kinds


def memory_targets(home: Home) -> dict[str, Path]:
    """Each memory file's real path (a linked one is written at its target), per target; refused links left out."""
    targets = {}
    for kind in TARGETS:
        try:
            targets[kind] = home.links.resolve(home.memories_dir / FILE_NAMES[kind])
        except UnsafePath:
            continue
    return targets


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


class HomeWatcher:
    """Watches one home until ``stop()``; calls ``on_change(kinds)`` from its own thread."""

    def __init__(self, home: Home, on_change: Callable[[set[str]], None]):
        self.home = home
        self.on_change = on_change
        self._stop = threading.Event()
        self._stamped: dict[str, _FileStamps] = {}  # while ``run`` runs

    def witness(self, kind: str) -> _FileStamps | None:
        """What follows ``kind``'s database, for a writer of this process to tell of its own commits
        (``engine.archive.upkeep.CommitWitness``); None while the watch is not running."""
        return self._stamped.get(kind)

    def watched_paths(self) -> list[Path]:
        """memories/, skills/, pending/, the folders linked memory files live in, and the home (for state.db)."""
        folders = [p for p in (self.home.memories_dir, self.home.skills_dir, self.home.pending_dir) if p.is_dir()]
        real = {folder.resolve() for folder in folders}
        linked = {target.parent for target in memory_targets(self.home).values()}
        return folders + sorted(p for p in linked - real if p.is_dir())

    def run(self) -> None:
        """Block, reporting changes, until ``stop()`` is called."""
        paths = self.watched_paths()
        stamped = {
            "sessions": _FileStamps(
                [self.home.root / name for name in sorted(SESSION_FILES)], database=self.home.root / "state.db"
            ),
            "config": _FileStamps([self.home.config_path], settled=True),
            "journal": _FileStamps(
                [], database=self.home.journal.path, changes=JOURNAL_CHANGES
            ),  # (linked: where it is)
        }
        self._stamped = stamped
        try:
            self._watch(paths, stamped)
        finally:
            self._stamped = {}
            for files in stamped.values():
                files.close()

    def _watch(self, paths: list[Path], stamped: dict[str, _FileStamps]) -> None:
        # What changed before the watch began is caught up (memory, proposals Hermes staged); the skills'
        # first look is their baseline.
        self._report(set(TARGETS) | {"config", "skill files", "pending", "session flags"})
        if not paths:  # a read-only home without the folders: only state.db and config.yaml can change
            while not self._stop.wait(0.4):
                kinds = {kind for kind, files in stamped.items() if files.changed()}
                if kinds:
                    self._report(kinds)
            return
        for changes in watch(
            *paths,
            debounce=DEBOUNCE_MS,
            step=50,
            stop_event=self._stop,
            rust_timeout=400,
            yield_on_timeout=True,
            recursive=True,
            raise_interrupt=False,
        ):
            kinds = classify(self.home, (path for _, path in changes))
            kinds |= {kind for kind, files in stamped.items() if files.changed()}
            if kinds and not self._stop.is_set():
                self._report(kinds)

    def _report(self, kinds: set[str]) -> None:
        """One failed report (say, a lock file that cannot be used) must not end the watching."""
        try:
            self.on_change(kinds)
        except Exception:
            log.exception("could not report changes to %s", sorted(kinds))

    def stop(self) -> None:
        self._stop.set()


class _FileStamps:
    """state.db and config.yaml live in the home root, which may hold big unrelated trees (a
    Hermes checkout, logs), so they are checked by size and mtime instead of watched recursively."""

    def __init__(
        self, paths: list[Path], *, settled: bool = False, database: Path | None = None, changes: str | None = None
    ):
        """``settled``: report a change only once two looks in a row agree, so a file caught part
        way through being written (an editor that truncates, then writes) is never reported.
        ``database``: a SQLite database whose commits count too (``_Commits``). Size and mtime alone
        missed a second commit: after a checkpoint the WAL is written again from its start (same
        size), and two commits can fall in one mtime tick. ``changes``: as ``_Commits``'s."""
        self.paths = paths
        self.settled = settled
        self.commits = _Commits(database, changes) if database is not None else None
        self._lock = threading.Lock()  # (a writer's thread may look too: ``before``, ``after``)
        self._closed = False  # (that writer may still hold these after the watch ended)
        self.last = self._stamp()
        self._moving: tuple | None = None
        self._held_until: float | None = None  # a writer's commit between ``before`` and ``after``

    def _stamp(self) -> tuple:
        """What is seen now: a database's commits when they can be read (a checkpoint's copy of the WAL into
        the file, as the archive's thread makes every ``Checkpointer.EVERY`` writes, changes its size and
        mtime, but no data: it reloaded the Sessions screen for nothing), else each file's size and mtime."""
        count = self.commits.count() if self.commits is not None else None
        if count is not None:
            return (count,)
        stamps = []
        for path in self.paths:
            try:
                info = path.stat()
                stamps.append((info.st_size, info.st_mtime_ns))
            except OSError:
                stamps.append(None)
        return (*stamps, None) if self.commits is not None else tuple(stamps)

    def changed(self) -> bool:
        with self._lock:
            if self._held():
                return False  # (looked at again once the writer tells ``after``, at the next poll)
            now = self._stamp()
            if now == self.last:
                self._moving = None
                return False
            if self.settled and now != self._moving:  # still moving: look again at the next poll
                self._moving = now
                return False
            self.last, self._moving = now, None
            return True

    def before(self) -> tuple | None:
        """A writer of this process, under its write lock, before it writes: what is seen now, or None
        when that holds a change not reported yet (``engine.archive.upkeep.CommitWitness``). Looks are
        held from then until its ``after``, which decides whether what they would see is news."""
        with self._lock:
            if self._closed or self._held():
                return None
            now = self._stamp()
            if now != self.last:
                return None
            self._held_until = time.monotonic() + HOLD_S
            return now

    def _held(self) -> bool:
        return self._held_until is not None and time.monotonic() < self._held_until

    def after(self, seen: object, alone: bool) -> None:
        """Ends the hold. ``alone``: that writer's commits since ``before`` are all there is, so what is seen
        now is no change, unless a look reported meanwhile (the last report is no longer ``seen``: the hold
        ran out) or the database is another file now (one put in its place, whose commits the writer's
        connection, on the old one, never sees). Not alone: the next look reports what it sees."""
        with self._lock:
            self._held_until = None
            if not alone or self.last != seen or self._closed:
                return
            now = self._stamp()
            if self._database(now) is not None and self._database(now) == self._database(seen):
                self.last = now

    def _database(self, stamp: object) -> int | None:
        """The inode of the database file ``stamp`` read (its last part, ``_Commits.count``), if it read one."""
        if self.commits is None or not isinstance(stamp, tuple) or stamp[-1] is None:
            return None
        return stamp[-1][0]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self.commits is not None:
                self.commits.close()


class _Commits:
    """Which commit a SQLite database is at, as one read-only connection of ours tells it: ``PRAGMA
    data_version`` moves on every commit another connection (another process's too) makes, and not
    on reads.

    Asked of SQLite, never read from the -shm file (the watcher opened it for its header): closing
    any descriptor of a file drops every POSIX lock this process holds on it, SQLite's own among
    them, and a Hermes that opened state.db then found the -shm unlocked, took itself for its only
    user and truncated it under our connections' map of it (the process died of SIGBUS). SQLite
    keeps its locks across its own connections' closes, and a read-only connection's close never
    checkpoints.

    ``changes``: a query of what the screens show, asked only when data_version moved, whose answer counts
    instead, so a commit that leaves it as it was is no change (workbench.db: the index upkeep's, every 2 s
    while it builds, reloaded the Memory screen's entry history each time). Until it can be asked (a
    workbench.db an older version made, not yet opened for writing by this one) every commit counts."""

    def __init__(self, path: Path, changes: str | None = None):
        self.path = path
        self.changes = changes
        self._conn: sqlite3.Connection | None = None
        self._inode: int | None = None
        self._seen: tuple[int, object] | None = None  # (data_version, what counts at it)
        self._last: tuple[int, object] | None = None  # the last count read: what a busy file still is at

    def count(self) -> tuple[int, object] | None:
        """(the file's inode, its data_version or the answer of ``changes``), or None while it cannot be read
        (not there yet)."""
        try:
            inode = self.path.stat().st_ino
        except OSError:
            self.close()
            return None
        try:
            if self._conn is None or inode != self._inode:  # a state.db put in its place: read the new one
                self.close()
                self._conn = connect(self.path, read_only=True)
                self._conn.execute("PRAGMA busy_timeout=0")  # (never wait on a writer: the thread answers every change)
                self._inode = inode
            version = self._conn.execute("PRAGMA data_version").fetchone()[0]
            if self._seen is None or self._seen[0] != version:
                self._seen = (version, self._counted(self._conn, version))
            self._last = (inode, self._seen[1])
            return self._last
        except (sqlite3.Error, WorkbenchError) as exc:
            if is_busy(exc) and self._inode == inode:  # (held for a moment: no change to report for it)
                return self._last
            self.close()
            return None

    def _counted(self, conn: sqlite3.Connection, version: int) -> object:
        if self.changes is None:
            return version
        try:
            return tuple(conn.execute(self.changes).fetchone())
        except sqlite3.OperationalError as exc:
            if is_busy(exc):
                raise
            return ("each commit", version)  # (its tables are not there yet: no such table)

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn, self._inode, self._seen, self._last = None, None, None, None
