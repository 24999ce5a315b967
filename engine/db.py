"""SQLite plumbing shared by state.db and workbench.db.

One connection per thread (SQLite connections must not cross threads), WAL, foreign
keys, and explicit ``BEGIN IMMEDIATE`` write transactions. A writer waits for another
process's lock a bounded time (``WORKBENCH_BUSY_TIMEOUT`` seconds, default 5) and then
says which process holds it, so a held database never looks like a hang. Errors from
SQLite are turned into messages that say what really happened (disk full, read-only,
busy, damaged), because the advice differs: "move it aside" is only right for damage.
"""

from __future__ import annotations

import contextlib
import errno
import os
import random
import re
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from . import lock_waits  # (it imports this module's holders lazily)
from .errors import ReadOnlyError, WorkbenchError
from .textsafety import one_line

DEFAULT_BUSY_SECONDS = 5.0
MAX_BUSY_SECONDS = 600.0


def busy_seconds() -> float:
    """How long a write waits for another process's lock: ``$WORKBENCH_BUSY_TIMEOUT`` or 5 s."""
    raw = os.environ.get("WORKBENCH_BUSY_TIMEOUT", "")
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_BUSY_SECONDS
    if value != value or not 0 <= value <= MAX_BUSY_SECONDS:  # NaN or out of range: the default
        return DEFAULT_BUSY_SECONDS
    return value


BUSY_TIMEOUT_MS = int(DEFAULT_BUSY_SECONDS * 1000)
CANCEL_GRACE_S = 0.25  # a cancelled wait for a busy database goes on this long (one short write of Hermes's)


class DatabaseBusyError(WorkbenchError):
    """Another process (or another task of this one) held the write lock past the busy timeout."""


class BusyWaitCancelled(DatabaseBusyError):
    """A wait for a busy database's write lock was cancelled (``lock_waits``: esc on a turn, the TUI's quit)
    before the lock was taken: nothing was written, as at the busy timeout."""


class DatabaseDamaged(WorkbenchError):
    """The file is not a usable database (damaged, not SQLite): only moving it aside or a backup helps."""


# What moving a damaged database aside costs, for the files whose loss is not obvious from their name.
LOST_WITH = {
    "workbench.db": (
        "It holds the workbench's journal (history, undo, the timeline), not your memory, skills, pending "
        "writes or sessions, and nothing can be changed until it is usable."
    ),
}


WAL_WRITE_BYTE = 120  # the byte of a WAL database's -shm file that its one writer locks
RESERVED_BYTE = 0x40000001  # the byte of a rollback-journal database that its writer locks


def lock_holders(path: Path) -> tuple[list[str], bool]:
    """Who holds the write lock of ``path``: other processes as "pid (program)" (``_command_of``), and whether
    this process does (another of its connections: a review, an upkeep step, a turn).

    Linux lists every POSIX lock in /proc/locks by device, inode and byte range; readers
    hold other bytes, so only the writer's byte counts. Elsewhere (or when it cannot be
    read) nobody is found and the message just says "another process".
    """
    wanted: dict[tuple[int, int, int], int | None] = {}
    for candidate, byte in ((Path(f"{path}-shm"), WAL_WRITE_BYTE), (path, RESERVED_BYTE)):
        with contextlib.suppress(OSError):
            wanted[_inode(candidate)] = byte
    return _holders(wanted)


def flock_holders(lock: Path) -> list[str]:
    """Who holds the flock on ``lock`` (a memory file's ``.lock``), as ``lock_holders`` names them."""
    try:
        return _holders({_inode(lock): None})[0]
    except OSError:
        return []


def _inode(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return os.major(st.st_dev), os.minor(st.st_dev), st.st_ino


def _holders(wanted: dict[tuple[int, int, int], int | None]) -> tuple[list[str], bool]:
    """The holders of write locks /proc/locks lists on these inodes (covering the byte given, if one)."""
    holders: list[str] = []
    mine = False
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return holders, mine
    for line in lines:
        fields = line.split()
        if "->" in fields or len(fields) < 8 or fields[3] != "WRITE":  # "->" marks a waiter
            continue
        pid, where, first, last = fields[4], fields[5], fields[6], fields[7]
        parts = where.split(":")
        if len(parts) != 3 or not pid.isdigit() or not first.isdigit():
            continue
        try:
            key = (int(parts[0], 16), int(parts[1], 16), int(parts[2]))
        except ValueError:
            continue
        if key not in wanted:
            continue
        locked = wanted[key]
        if locked is not None and not int(first) <= locked <= (int(last) if last.isdigit() else locked):  # "EOF"
            continue
        if int(pid) == os.getpid():
            mine = True
        elif (label := f"{pid} ({_command_of(pid)})") not in holders:
            holders.append(label)
    return holders, mine


def _command_of(pid: str) -> str:
    """The process's program by file name (and an interpreter's script, by file name): never its
    arguments. The name goes into errors that are stored (a tool result in a session, the journal),
    sent to a model, logged and exported, and a command line can hold a secret (a key, a path)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "unknown program"
    # (a process that rewrites its title has one word holding spaces: each is cut at its first space,
    # before its path is, so the arguments after it never come along)
    words = [parts[0] for w in raw.split(b"\0") if (parts := w.decode("utf-8", "replace").split())]
    if not words:
        return "unknown program"
    names = [os.path.basename(words[0]) or words[0]]
    if names[0].startswith("python") and len(words) > 1 and not words[1].startswith("-"):
        names.append(os.path.basename(words[1]) or words[1])  # (``python -c …``, ``-m …``: the interpreter alone)
    text = one_line(" ".join(names), 60)
    return "".join(ch if ch.isprintable() else "?" for ch in text) or "unknown program"


def busy_error(path: Path, waited: float, cancelled: bool = False, *, later: bool = False) -> DatabaseBusyError:
    holders, mine = lock_holders(path)
    if holders:
        who = f"process {', '.join(holders)}"
    elif mine:
        who = "another task of this workbench (a background review, an index upkeep step or a turn)"
    else:
        who = "another process"
    if later:  # (a step that does not wait, and is tried again later: ``write_transaction(wait=False)``)
        return DatabaseBusyError(
            f"{path.name} is busy: {who} holds its write lock (not waited for: this step is tried again "
            "later). Nothing was changed.",
            holders=holders,
        )
    if cancelled:
        return BusyWaitCancelled(
            f"{path.name} is busy: {who} holds its write lock (the wait was cancelled after {waited:g} s). "
            "Nothing was changed.",
            holders=holders,
        )
    said = f"{path.name} is busy: {who} holds its write lock (waited {waited:g} s). Nothing was changed."
    return DatabaseBusyError(
        f"{said} {RETRY_LONGER}",
        in_app=f"{said} {retry_once(holders, mine)}",
        holders=holders,
    )


RETRY_LONGER = "Retry when it is done, or set WORKBENCH_BUSY_TIMEOUT (seconds) to wait longer."


def retry_once(holders: list[str], mine: bool = False) -> str:
    """A running app's advice for a busy lock (its user cannot set ``WORKBENCH_BUSY_TIMEOUT`` in it):
    try again once the holder, named when it is known, is done."""
    if holders:
        return _once_processes(", ".join(holders), len(holders) > 1)
    return f"Try again once that {'task' if mine else 'process'} finishes."


def _once_processes(names: str, many: bool) -> str:
    return f"Try again once process{'es' * many} {names} finish{'es' * (not many)}."


BUSY_WHO = re.compile(r"is busy: (?P<who>.+?) (?:holds its write lock|is changing it)")
HOLDER_START = re.compile(r"(?:^|, )\d+ \(")  # "4242 (python hermes)", each holder as ``lock_holders`` names it


def in_app_words(text: str) -> str:
    """``text`` as a running app says it: a busy error's words carried as plain text (a tool's or a
    decision's ``error``, a turn's reason, several joined in one sentence) give ``RETRY_LONGER``'s
    advice, which only a new command can take (``WORKBENCH_BUSY_TIMEOUT`` is read at start); each
    gets ``retry_once``'s instead, naming the holder its own words name, as ``WorkbenchError.in_app``
    does. Any other text is returned as it is."""
    core = RETRY_LONGER.rstrip(".")  # (joined as clauses, it loses its full stop)
    if core not in text:
        return text
    out, start = [], 0
    while (at := text.find(core, start)) >= 0:
        found = list(BUSY_WHO.finditer(text, start, at))
        who = found[-1]["who"] if found else ""
        if who.startswith("process "):
            names = who.removeprefix("process ")
            advice = _once_processes(names, len(HOLDER_START.findall(names)) > 1)
        else:
            advice = retry_once([], mine=who.startswith("another task of this workbench"))
        out += [text[start:at], advice.rstrip(".")]
        start = at + len(core)
    return "".join([*out, text[start:]])


STORED_ADVICE = (
    "the busy advice above is the agent's, as stored: WORKBENCH_BUSY_TIMEOUT counts when set before the "
    "workbench starts"
)


def stored_advice_note(text: str) -> str:
    """What a transcript says under a stored text giving the CLI's busy advice (a tool's result: kept as
    the model read it, so not reworded as ``in_app_words`` rewords what the app says itself), so a
    reader of the app is not left told to set a variable it cannot take now. "" for any other text."""
    return STORED_ADVICE if RETRY_LONGER.rstrip(".") in text else ""


def on_read_only_mount(path: Path) -> bool:
    """True when ``path`` (or its nearest existing folder) is on a file system mounted read-only."""
    if not path.is_absolute():  # a description such as "a file in HOME", not a path
        return False
    for folder in (path, *path.parents):
        try:
            return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
        except OSError:
            continue
    return False


def _no_space_left(path: Path) -> bool:
    """True when the file system holding ``path`` has no free block left (SQLite then says "disk I/O error")."""
    if not path.is_absolute():
        return False
    for folder in (path, *path.parents):
        try:
            stat = os.statvfs(folder)
        except OSError:
            continue
        return stat.f_bavail == 0
    return False


def database_stamp(path: Path) -> tuple:
    """What tells a database file and its WAL changed: inode, size, mtime and kind of each (None if absent).

    The kind too: a file replaced by a folder within one tick of the coarse clock file times use can
    take its inode, size (4096) and mtime, and a verdict on the file was then taken for the folder's."""
    stamps: list[tuple[int, int, int, int] | None] = []
    for name in (path, path.with_name(path.name + "-wal")):
        try:
            info = os.stat(name)
            stamps.append((info.st_ino, info.st_size, info.st_mtime_ns, stat.S_IFMT(info.st_mode)))
        except OSError:
            stamps.append(None)
    return tuple(stamps)


def is_damage(exc: BaseException) -> bool:
    """True when an SQLite error means the file itself is not a usable database (not the disk, a lock or rights)."""
    text = str(exc).lower()
    return (
        not any(
            cause in text
            for cause in ("disk is full", "readonly", "read-only", "locked", "busy", "unable to open", "disk i/o error")
        )
        and getattr(exc, "errno", None) is None
    )


CORRUPT_CODES = (11, 26)  # SQLITE_CORRUPT ("malformed"), SQLITE_NOTADB


def is_corrupt(exc: BaseException) -> bool:
    """True when SQLite says the file's own pages are damaged (not a lock, the disk, or a missing table)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF in CORRUPT_CODES


def database_error(exc: BaseException, path: Path) -> WorkbenchError:
    """The error to raise for an SQLite or OS error on the database at ``path``: one the callers can tell
    apart (busy, damaged) and whose message names the file, the cause and the fix."""
    if is_busy(exc):
        return busy_error(path, busy_seconds())
    error = DatabaseDamaged if is_damage(exc) else WorkbenchError
    return error(describe_error(exc, path), path=str(path))


def describe_error(exc: BaseException, path: Path | str) -> str:
    """A message for an SQLite or OS error on ``path`` that names the real cause and the fix."""
    text = str(exc).lower()
    errno_ = getattr(exc, "errno", None)
    if "disk is full" in text or errno_ == 28 or ("disk i/o error" in text and _no_space_left(Path(path))):
        return f"The disk holding {path} is full. Nothing was changed; free some space and retry."
    if "readonly" in text or "read-only" in text or errno_ == 30 or on_read_only_mount(Path(path)):
        return (
            f"{path} cannot be written: the file system is read-only or the file is not writable by this user. "
            "Nothing was changed; the data itself is intact."
        )
    if "locked" in text or "busy" in text:
        return busy_error(Path(path), busy_seconds()).message
    if "unable to open" in text or errno_ in (2, 13):
        return (
            f"{path} could not be opened ({exc}): check that its folder exists and is readable and writable "
            "by this user. Nothing was changed."
        )
    if "disk i/o error" in text or errno_ == 5:
        return f"Reading or writing {path} failed with an I/O error ({exc}). Nothing more was changed; check the disk."
    if errno_ == errno.ENAMETOOLONG:
        return f"{path} is a longer path than the file system allows. Nothing was changed; use a shorter one."
    if isinstance(exc, OSError):  # not SQLite's: no database advice
        return f"{path} could not be used ({exc.strerror or exc}). Nothing was changed."
    return _damage_advice(path, f"{path} could not be read as an SQLite database ({exc}).")


def home_error(exc: BaseException, root: Path | None) -> str:
    """An SQLite or OS error that no store turned into one of its own, as both skins say it: on the file
    the error names, else on "a file in" the home (``describe_error``: the cause, the fix, doctor)."""
    where = getattr(exc, "filename", None) or (f"a file in {root}" if root is not None else "this home")
    return describe_error(exc, where)


def salvage_advice(path: Path) -> str:
    """How to get a damaged database's rows back (doctor's fix for one)."""
    return (
        f"Stop Hermes and the workbench, back {path.name} up with its -wal and -shm files, then rebuild it with "
        f"`sqlite3 {path.name} .recover | sqlite3 {path.stem}-recovered.db` and swap the files (or restore it "
        "from a backup)."
    )


def integrity_problems(path: Path, quick: bool = False) -> list[str]:
    """SQLite's own check of the whole file at ``path`` (``quick``: ``quick_check``, which skips matching
    indexes to their tables) on a read-only connection that never writes or checkpoints: ``[]`` when
    it is sound, else the problems it lists. Raises ``sqlite3.DatabaseError`` when the file cannot be
    read that far (damage past the first page; or a lock, a disk error: ``is_damage`` tells)."""
    refuse_stranded_wal(path)
    conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
    try:
        rows = [row[0] for row in conn.execute("PRAGMA quick_check" if quick else "PRAGMA integrity_check")]
    finally:
        conn.close()
    return [] if rows == ["ok"] else rows


WAL_HEADER_BYTES = 32  # a -wal this long or shorter holds no page


def sound_without_wal(path: Path) -> bool:
    """Whether ``path`` has a -wal holding pages and, read without it (``immutable``: nothing beside it
    read, locked or written), passes SQLite's ``integrity_check``. Such a file that fails the check read
    with its -wal is sound, and the -wal is not its own: SQLite reads a -wal's pages over whatever file
    stands beside it, and nothing in the -wal names its file (a backup copied over the database while the
    old -wal stayed). (The same check as the one that failed: ``quick_check`` passes an index that no longer
    matches its table, damage of the file itself.)"""
    try:
        if os.stat(f"{path}-wal").st_size <= WAL_HEADER_BYTES:
            return False
        with contextlib.closing(sqlite3.connect(f"{path.absolute().as_uri()}?immutable=1", uri=True)) as conn:
            return [row[0] for row in conn.execute("PRAGMA integrity_check")] == ["ok"]
    except (OSError, sqlite3.DatabaseError):
        return False


def foreign_wal_message(path: Path, what: str) -> str:
    return (
        f"{path.name} alone is sound, but read with {path.name}-wal beside it SQLite reports damage ({what}): "
        f"that -wal holds pages of another copy of {path.name}, most likely the one a backup was copied over "
        "while its -wal stayed (SQLite reads a -wal's pages over whatever file stands beside it). Nothing was "
        "written to it."
    )


def foreign_wal_advice(path: Path) -> str:
    return (
        f"Stop Hermes and the workbench, move {path.name}-wal and {path.name}-shm aside (keep them: they hold "
        f"the changes made after the backup, to the file it replaced), then run `workbench doctor` again. "
        "docs/reliability.md says how to restore a backup safely."
    )


def damaged_message(path: Path, what: str) -> str:
    """What a database known to be damaged gets instead of a write: what is wrong, that it is left
    alone, and doctor's way to get its rows back."""
    return (
        f"{path} is damaged ({what}). Nothing was written to it: the workbench leaves a damaged database "
        f"as it is (no index upkeep, no new messages, no changes), since writing to it can make recovery "
        f"worse. {salvage_advice(path)} Then run `workbench doctor`."
    )


def _damage_advice(path: Path | str, what: str) -> str:
    """``what`` is wrong with the database at ``path``, what moving it aside costs, and how to go on."""
    lost = LOST_WITH.get(Path(path).name)
    return (
        f"{what} Nothing more was changed. {lost + ' ' if lost else ''}Run `workbench doctor`; if it is damaged, "
        "quit and move it aside with its -wal and -shm files (a new, empty one is then made"
        f"{'; its history is lost' if lost else ''}), or restore it from a backup (`sqlite3 OLD .recover` "
        "salvages rows)."
    )


def _lenient_text(raw: bytes) -> str:
    """TEXT that is not UTF-8 (a hand edit, a foreign tool) read with U+FFFD for the bad bytes."""
    return raw.decode("utf-8", errors="replace")


@contextlib.contextmanager
def busy_wait(conn: sqlite3.Connection, ms: int) -> Iterator[None]:
    """Wait at most ``ms`` for a lock inside the block (a step that can come back later), then the
    connection's own wait again."""
    timeout = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    conn.execute(f"PRAGMA busy_timeout={ms}")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA busy_timeout={timeout}")


def stranded_wal(path: Path) -> int:
    """The bytes in ``path``'s -wal when the database itself is missing or empty (a failed restore or
    ``.recover``), else 0. SQLite deletes such a -wal, and every change it holds, as soon as any
    connection opens the database, a read-only one too (its pager takes an empty file for a new one).
    Connections creating a database together pass through that state for an instant (the -wal written
    before the file's first page): it counts only when it lasts ``STRANDED_LOOKS`` looks."""
    for _ in range(STRANDED_LOOKS):
        size = _wal_beside_empty(path)
        if not size:
            return 0
        time.sleep(0.005)
    return size


STRANDED_LOOKS = 20  # about 0.1 s: CI saw threads opening a new workbench.db together refused as stranded


def _wal_beside_empty(path: Path) -> int:
    try:
        if path.stat().st_size > 0:
            return 0
    except OSError:
        pass  # missing: opening it would create it, and delete the -wal just the same
    try:
        return os.stat(f"{path}-wal").st_size
    except OSError:
        return 0


def refuse_stranded_wal(path: Path) -> None:
    """Raise ``DatabaseDamaged`` instead of opening a database whose data is all in its -wal (``stranded_wal``)."""
    if size := stranded_wal(path):
        raise DatabaseDamaged(f"{stranded_wal_message(path, size)} {stranded_wal_advice(path)}", path=str(path))


def stranded_wal_message(path: Path, size: int) -> str:
    state = "is empty (0 bytes)" if path.exists() else "is missing"
    return (
        f"{path} {state}, but {path.name}-wal beside it holds {size:,} bytes of its changes. Any program that "
        "opens the database now (Hermes, sqlite3, the workbench) makes SQLite delete that -wal, so the "
        "workbench leaves all three files as they are and cannot use this database."
    )


def stranded_wal_advice(path: Path) -> str:
    """What to do about a -wal whose database is missing or empty, before any program opens it."""
    return (
        f"Before starting Hermes or sqlite3 on this home, copy {path.name}-wal somewhere safe. It holds only the "
        f"pages changed since the last checkpoint, so it is read with the {path.name} it belongs to: put that file "
        f"back from a backup, beside the -wal, then run `workbench doctor`. If you need nothing it holds, move "
        f"{path.name}-wal and {path.name}-shm aside: a new, empty {path.name} is then made."
    )


def connect(path: Path, read_only: bool = False) -> sqlite3.Connection:
    """Open ``path`` with the settings every workbench connection uses (never one whose data is all in
    its -wal: ``refuse_stranded_wal``)."""
    refuse_stranded_wal(path)
    if read_only and not path.exists():
        raise WorkbenchError(f"{path} does not exist (opened read-only, so it was not created).")
    try:
        if read_only:
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
        else:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    except sqlite3.DatabaseError as exc:  # a folder, or a file this user cannot open
        raise database_error(exc, path) from exc
    conn.row_factory = sqlite3.Row
    conn.text_factory = _lenient_text  # another program's bad bytes are shown, never raised
    conn.execute(f"PRAGMA busy_timeout={int(busy_seconds() * 1000)}")
    conn.execute("PRAGMA foreign_keys=ON")
    if not read_only:
        try:
            _while_busy(lambda: conn.execute("PRAGMA journal_mode=WAL"), conn)
            _while_busy(lambda: conn.execute("PRAGMA synchronous=NORMAL"), conn)
        except WorkbenchError:
            conn.close()
            raise
    return conn


def close_guard(path: Path) -> sqlite3.Connection | None:
    """A read-only connection to ``path`` holding its shared lock, for its owner to close after every other
    connection of this process to it (None when it cannot be had). SQLite copies the -wal into the file as
    the last connection to it closes, unless that one is read-only: with this one open, no close of ours
    copies a damaged file's -wal into it (or a -wal not its own, left beside a restored backup)."""
    with contextlib.suppress(sqlite3.Error, WorkbenchError):
        guard = connect(path, read_only=True)
        try:
            guard.execute("SELECT count(*) FROM sqlite_master").fetchone()  # takes its shared lock
        except sqlite3.Error:
            guard.close()
            raise
        return guard
    return None


class ThreadConnections:
    """Hands each thread its own connection to one database file.

    A connection is closed only by its own thread, or once that thread has ended: closing one while
    its thread is inside a statement crashes the process inside SQLite (Python's sqlite3 does not guard
    it). ``close_all`` therefore closes what it may at once and leaves the rest to their threads, which
    close them at their next ``get``; every thread then gets a fresh connection.

    ``follow``: a thread's connection gives way to a new one once another file stands at the path (a
    backup restored over it): it went on reading the old file, and a page its write changed went into the
    -wal beside the path, which is the new file's now, over that page of the new file. The old one is
    closed with the others. ``look``: called before the first connection to each file that stands at the
    path (the one there now when the set is made counts as looked at), or when none does (it may make
    one), and may raise to refuse it
    (state.db's opening looks at a file read-only before anything writes to it, ``ArchiveCore._open``)."""

    def __init__(
        self,
        path: Path,
        read_only: bool = False,
        on_connect: Callable[[sqlite3.Connection], object] | None = None,
        *,
        follow: bool = False,
        look: Callable[[], object] | None = None,
    ):
        self.path = path
        self.read_only = read_only
        self.follow = follow
        self._on_connect = on_connect
        self._look = look
        self._looked = _file_id(path) if look else None  # the file ``look`` was last called for
        self._local = threading.local()
        self._all: list[tuple[sqlite3.Connection, threading.Thread, int]] = []  # with its thread and process
        self._left: list[tuple[sqlite3.Connection, threading.Thread, int]] = []  # closed all, its thread still busy
        self._lock = threading.Lock()
        self._closes = 0  # how many times close_all ran: a connection opened across one is not kept

    def get(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is not None and getattr(self._local, "pid", None) != os.getpid():
            conn = None  # inherited across fork: SQLite handles must never be shared with a parent
        elif conn is not None and self.follow and not conn.in_transaction and self._replaced():
            conn = None  # (the old one stays in ``_all``: a cursor of it may still be read)
        while conn is None:
            if self._left:
                with self._lock:
                    self._left = self._close_idle(self._left)
            closes = self._closes
            file = _file_id(self.path)  # (before it opens: one renamed in meanwhile is followed at the next get)
            if self._look is not None and (file is None or file != self._looked):  # (none: ``look`` may make it)
                self._look()
                self._looked = file or _file_id(self.path)
            conn = connect(self.path, self.read_only)
            if self._on_connect:
                try:
                    self._on_connect(conn)
                except sqlite3.DatabaseError as exc:  # its schema: the first look at the file's pages
                    conn.close()
                    raise database_error(exc, self.path) from exc
            with self._lock:
                if closes != self._closes:  # closed meanwhile (the file replaced, say): this one may hold the old
                    conn.close()
                    conn = None
                    continue
                self._local.conn = conn
                self._local.pid = os.getpid()
                self._local.file = file or _file_id(self.path)  # (none before: this connection made it)
                self._all.append((conn, threading.current_thread(), os.getpid()))
        return conn

    def _replaced(self) -> bool:
        """Whether another file stands at the path than this thread's connection opened (none: not replaced)."""
        now = _file_id(self.path)
        return now is not None and now != getattr(self._local, "file", None)

    def close_all(self) -> None:
        """Close every connection no thread is using; the others close at their thread's next ``get``."""
        with self._lock:  # (the reset too: a get() registering meanwhile must not lose its connection)
            self._closes += 1
            self._left = self._close_idle(self._left + self._all)
            self._all.clear()
            self._local = threading.local()

    @staticmethod
    def _close_idle(conns: list[tuple[sqlite3.Connection, threading.Thread, int]]) -> list:
        """Close the connections of this thread and of ended ones; return those still in a thread's hands.
        One opened in another process is dropped unclosed: closing it here could end that process's locks."""
        busy = []
        here, pid = threading.current_thread(), os.getpid()
        for conn, thread, opened_in in conns:
            if opened_in != pid:
                continue
            if thread is here or not thread.is_alive():
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
            else:
                busy.append((conn, thread, opened_in))
        return busy


def _file_id(path: Path) -> tuple[int, int] | None:
    """The file at ``path`` (device and inode), or None when there is none (``:memory:``, not there)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _db_path(conn: sqlite3.Connection) -> Path:
    row = conn.execute("PRAGMA database_list").fetchone()
    return Path(row[2]) if row and row[2] else Path("database")


def is_busy(exc: BaseException) -> bool:
    """Whether an SQLite error says another connection holds a lock (not the file's fault)."""
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _while_busy(step: Callable[[], object], conn: sqlite3.Connection) -> None:
    """``step`` on ``conn``, run again with backoff while SQLite says busy, up to the busy budget; any
    other error is a ``WorkbenchError`` with advice.

    SQLite's busy handler has already waited where it can. Some answers come at once: a WAL
    snapshot race at BEGIN, and a journal mode being changed by another connection while this
    one opens (two threads opening a new workbench.db together)."""
    cancel = lock_waits.cancel_events()
    if cancel:  # a cancellable scope (esc on a turn, the TUI's quit): SQLite's own wait would not end early
        _while_busy_cancellable(step, conn, cancel)
        return
    started = time.monotonic()
    attempt = 0
    while True:
        try:
            step()
            return
        except sqlite3.DatabaseError as exc:
            waited = time.monotonic() - started
            if not is_busy(exc):
                raise database_error(exc, _db_path(conn)) from exc
            budget = busy_seconds()  # read only when waiting: a step that gets its lock never parses it
            if waited >= budget:
                raise busy_error(_db_path(conn), round(waited, 1)) from exc
            time.sleep(min(0.02 * 2**attempt, 0.5, max(budget - waited, 0)) * (0.5 + random.random()))
            attempt += 1


def _while_busy_cancellable(step: Callable[[], object], conn: sqlite3.Connection, cancel) -> None:
    """``_while_busy``, each try waiting at most ``lock_waits.POLL_S`` in SQLite's busy handler, and
    ``BusyWaitCancelled`` once one of ``cancel`` is set and the wait lasted ``CANCEL_GRACE_S`` (a store after
    esc, or a session's end at quit, still takes a lock that Hermes holds for one short write; nothing is
    written when it raises)."""
    POLL_S = lock_waits.POLL_S

    started = time.monotonic()
    with busy_wait(conn, max(1, int(POLL_S * 1000))):
        while True:
            try:
                step()
                return
            except sqlite3.DatabaseError as exc:
                if not is_busy(exc):
                    raise database_error(exc, _db_path(conn)) from exc
                waited = round(time.monotonic() - started, 1)
                if waited >= CANCEL_GRACE_S and any(event.is_set() for event in cancel):
                    raise busy_error(_db_path(conn), waited, cancelled=True) from exc
                if waited >= busy_seconds():
                    raise busy_error(_db_path(conn), waited) from exc


@contextlib.contextmanager
def write_transaction(
    conn: sqlite3.Connection, read_only: bool = False, *, wait: bool = True
) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, retrying the BEGIN with backoff while the database is busy
    (``wait=False``: ``DatabaseBusyError`` at once, for a step that can come another time).

    Inside another ``write_transaction`` on ``conn`` it is a savepoint: the work joins the outer
    transaction (one commit for several steps) and an error undoes only its own part. A
    transaction left open some other way is never joined: its BEGIN fails, loudly. A COMMIT
    that fails (a full disk) is rolled back, so the connection is never left inside one.
    """
    if read_only:
        raise ReadOnlyError("This home is open read-only; nothing was written.")
    if id(conn) in _OPEN and conn.in_transaction:
        yield from _savepoint(conn)
        return
    if wait:
        _while_busy(lambda: conn.execute("BEGIN IMMEDIATE"), conn)
    else:
        with busy_wait(conn, 0):
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.DatabaseError as exc:
                if is_busy(exc):  # (never waited: not the busy timeout's "waited 5 s")
                    raise busy_error(_db_path(conn), 0, later=True) from exc
                raise database_error(exc, _db_path(conn)) from exc
    _OPEN.add(id(conn))
    try:
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):  # never mask the original error
                conn.execute("ROLLBACK")
            raise
    finally:
        _OPEN.discard(id(conn))


_OPEN: set[int] = set()  # connections inside a write_transaction (by id; each removed when it ends)


def write_statement(
    conn: sqlite3.Connection, sql: str, args: Sequence[object] = (), read_only: bool = False
) -> sqlite3.Cursor:
    """One statement that writes, committed on its own (SQLite's implicit transaction): what a
    ``write_transaction`` holding only it does, with no BEGIN and COMMIT of its own to run. Retried
    with backoff while busy, as that BEGIN is (a WAL snapshot that went stale between the statement's
    read and its write lock is answered at once, and a failed statement changed nothing). Inside an
    open transaction on ``conn`` it is part of it."""
    if read_only:
        raise ReadOnlyError("This home is open read-only; nothing was written.")
    done: list[sqlite3.Cursor] = []
    _while_busy(lambda: done.append(conn.execute(sql, args)), conn)
    return done[0]


def _savepoint(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    conn.execute("SAVEPOINT nested")
    try:
        yield conn
    except BaseException:
        with contextlib.suppress(sqlite3.Error):  # never mask the original error
            conn.execute("ROLLBACK TO nested")
            conn.execute("RELEASE nested")
        raise
    conn.execute("RELEASE nested")


class Checkpointer:
    """WAL checkpoints on a thread of their own, so that no write waits for one.

    SQLite checkpoints on the commit that takes the WAL past 1,000 pages: that commit
    then copies megabytes into the database and fsyncs it, a turn write of hundreds of
    milliseconds on a busy disk. Connections ``adopt``ed here never do; every
    ``EVERY`` writes (about as many pages as SQLite waits for) ``wrote`` wakes a thread
    that runs a PASSIVE checkpoint on its own connection, which blocks neither readers nor
    writers.

    A PASSIVE checkpoint never rewinds the WAL: SQLite starts it over at the first write
    after a checkpoint that copied every frame. While writes follow one another without a
    pause (an import, a bulk build) each checkpoint races the next commit and the file
    only grows (52 GB for a 1M-message build). So when the WAL still holds more than
    ``RESTART_FRAMES`` after the thread's copy, the next ``wrote`` (the writer, between
    its transactions) runs a RESTART checkpoint: it copies only the frames that came in
    since and waits at most ``RESTART_WAIT_MS`` for readers, so the next commit writes
    from the start of the file again. (Not TRUNCATE: a file emptied is grown block by
    block again, which cost a stream some 20 us of CPU per message.) That costs one
    write in about a thousand pages of a stream; a home written turn by turn never
    reaches it, since the WAL starts over by itself in the pauses.
    """

    EVERY = 40
    RESTART_FRAMES = 1000  # about 4 MB of 4 KiB pages: SQLite's own checkpoint threshold
    RESTART_WAIT_MS = 50
    SLOW_WRITE_S = 0.01  # a write this slow leaves a due restart to the next one
    WAL_KEEP_BYTES = 64 * 2**20  # a WAL grown past this (a reader held it across an import) is cut back

    def __init__(self, path: Path):
        self.path = path
        self.checkpoints = 0  # completed by the thread (a figure for tests and doctor)
        self.restarts = 0  # overgrown WALs started over by a writer
        self._overgrown = False  # the thread's last copy left more than RESTART_FRAMES
        self._deferred = False  # a due restart was left to the next write
        self._writes = 0
        self._pid = os.getpid()
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()
        self._idle = threading.Event()  # no copy asked for or running
        self._idle.set()
        self._stop = False
        self._lock = threading.Lock()

    def adopt(self, conn: sqlite3.Connection) -> None:
        """A connection of this archive: no checkpoint in its commits, and after a restart its next
        commit cuts the WAL file back to ``WAL_KEEP_BYTES`` (a restart alone keeps its size)."""
        conn.execute("PRAGMA wal_autocheckpoint=0")
        conn.execute(f"PRAGMA journal_size_limit={self.WAL_KEEP_BYTES}")

    def wrote(self, conn: sqlite3.Connection, spent: float = 0.0) -> None:
        """After a committed write on ``conn`` that took ``spent`` seconds: count it, wake the thread
        every ``EVERY`` writes, and start the WAL over here if the thread found it overgrown (after
        the next write instead, once, when this one was already slow: their costs never add up)."""
        if self._overgrown and (spent < self.SLOW_WRITE_S or self._deferred):
            self._overgrown = self._deferred = False
            self._restart(conn)
        elif self._overgrown:
            self._deferred = True
        with self._lock:
            if self._pid != os.getpid():  # a forked child: the parent's thread is not here
                self._pid, self._thread, self._wake, self._writes = os.getpid(), None, threading.Event(), 0
                self._idle = threading.Event()
                self._idle.set()
            self._writes += 1
            if self._writes < self.EVERY or self._stop:
                return
            self._writes = 0
            if self._thread is None or not self._thread.is_alive():  # (one that could not connect ended)
                self._thread = threading.Thread(target=self._run, name="wal-checkpoint", daemon=True)
                self._thread.start()
            self._idle.clear()
            self._wake.set()

    def _run(self) -> None:
        # (following the file at the path: one put in its place shares the -wal, and a copy of its frames
        # into the old file marked them copied, so the WAL's next restart dropped them)
        conns = ThreadConnections(self.path, follow=True)
        try:
            conns.get()
        except (WorkbenchError, sqlite3.Error):  # the next wake starts a new thread; settle() must not wait
            self._idle.set()
            return
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._stop:
                    return
                with contextlib.suppress(sqlite3.Error, WorkbenchError):  # busy or failed: retried next time
                    _, frames, _ = conns.get().execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                    self.checkpoints += 1
                    self._overgrown = frames > self.RESTART_FRAMES
                with self._lock:
                    if not self._wake.is_set():
                        self._idle.set()
        finally:
            self._idle.set()
            conns.close_all()

    def settle(self, timeout: float = 30.0) -> bool:
        """Wait until the thread has made every copy asked of it (False if ``timeout`` passed
        first): on a loaded machine it may lag the writes by seconds, so a check of what the
        WAL holds after some writes waits for it before it looks."""
        return self._idle.wait(timeout)

    def _restart(self, conn: sqlite3.Connection) -> None:
        try:
            with busy_wait(conn, self.RESTART_WAIT_MS):
                busy, _, _ = conn.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()
            self.restarts += not busy  # busy: a reader of another process; the thread will find it overgrown again
        except sqlite3.Error:
            pass  # the write itself is committed; the next copy tries again

    def close(self) -> None:
        """Stop the thread (after the checkpoint it is running, if any)."""
        with self._lock:
            self._stop, thread = True, self._thread
            self._wake.set()
        if thread is not None and self._pid == os.getpid():
            thread.join()
