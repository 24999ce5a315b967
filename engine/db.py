"""SQLite plumbing shared by state.db and workbench.db.

One connection per thread (SQLite connections must not cross threads), WAL, foreign
keys, and explicit ``BEGIN IMMEDIATE`` write transactions retried a bounded number of
times when another process holds the write lock.
"""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

from .errors import ReadOnlyError, WorkbenchError

BUSY_TIMEOUT_MS = 5000
WRITE_RETRIES = 8


def connect(path: Path, read_only: bool = False) -> sqlite3.Connection:
    """Open ``path`` with the settings every workbench connection uses."""
    if read_only:
        if not path.exists():
            raise WorkbenchError(f"{path} does not exist (opened read-only, so it was not created).")
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
    else:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys=ON")
    if not read_only:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise WorkbenchError(
                f"{path} is not a usable SQLite database ({exc}). Move it aside and let the workbench create a new one, "
                "or restore it from a backup."
            )
        conn.execute("PRAGMA synchronous=NORMAL")
    return conn


class ThreadConnections:
    """Hands each thread its own connection to one database file."""

    def __init__(self, path: Path, read_only: bool = False, on_connect: Callable[[sqlite3.Connection], None] | None = None):
        self.path = path
        self.read_only = read_only
        self._on_connect = on_connect
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    def get(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is not None and getattr(self._local, "pid", None) != os.getpid():
            conn = None  # inherited across fork: SQLite handles must never be shared with a parent
        if conn is None:
            conn = connect(self.path, self.read_only)
            if self._on_connect:
                self._on_connect(conn)
            self._local.conn = conn
            self._local.pid = os.getpid()
            with self._lock:
                self._all.append(conn)
        return conn

    def close_all(self) -> None:
        with self._lock:
            for conn in self._all:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
            self._all.clear()
        self._local = threading.local()


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


@contextlib.contextmanager
def write_transaction(conn: sqlite3.Connection, read_only: bool = False) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, retrying the BEGIN with backoff while the database is busy."""
    if read_only:
        raise ReadOnlyError("This home is open read-only; nothing was written.")
    for attempt in range(WRITE_RETRIES):
        try:
            conn.execute("BEGIN IMMEDIATE")
            break
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc) or attempt == WRITE_RETRIES - 1:
                raise WorkbenchError(f"The database is busy ({exc}); another process holds it. Retry in a moment.")
            time.sleep(min(0.05 * 2**attempt, 1.0) * (0.5 + random.random()))
    try:
        yield conn
    except BaseException:
        with contextlib.suppress(sqlite3.Error):  # never mask the original error
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
