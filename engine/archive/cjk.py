"""A bigram index of CJK text and the word vocabulary, kept in workbench.db so state.db stays as Hermes made it.

Two-character CJK words need an index (a LIKE scan of a large archive takes most of a
second). Every CJK run of a message's indexed text (content, tool name, tool-call JSON
with its ``\\uXXXX`` escapes decoded) is stored as its overlapping character pairs in a
contentless FTS5 table keyed by the message id, half-width katakana folded to full width
(``query.fold_width``, as the query is); a query of 2+ CJK characters becomes a phrase of its
pairs, which matches exactly where the characters appear consecutively.
The same pass counts the message's words into the vocabulary (vocab.py).

The index follows state.db by message id: ``refresh`` indexes every message above the
high-water mark, whoever wrote it (us or a Hermes agent), in bounded batches. Message
ids are never reused (AUTOINCREMENT), so rows deleted from state.db simply stop joining;
search re-checks every candidate against the stored text, so a stale entry can never
produce a wrong hit.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..db import BUSY_TIMEOUT_MS, ThreadConnections, write_transaction
from ..errors import ReadOnlyError, WorkbenchError
from ..values import text_value
from . import merges, vocab
from .query import CJK_CHAR, CJK_RUN, bigrams, fold_width, searchable_text

if TYPE_CHECKING:
    from .core import ArchiveCore

TABLE = "archive_cjk"
BATCH = 1000  # messages per write transaction: the workbench.db lock is held a few tens of ms
VERSION = "4"  # 2: tool-call escapes decoded, vocabulary; 3: half-width katakana; 4: width-folded; else rebuilt
QUICK_BUSY_MS = 100

_SCHEMA = f"""
CREATE VIRTUAL TABLE IF NOT EXISTS {TABLE} USING fts5(grams, content='', tokenize='ascii');
CREATE TABLE IF NOT EXISTS {TABLE}_state (key TEXT PRIMARY KEY, value TEXT);
{vocab.SCHEMA}
"""

INDEXED_TEXT = "COALESCE(m.content,'') || ' ' || COALESCE(m.tool_name,'') || ' ' || COALESCE(m.tool_calls,'')"


class BigramIndex:
    """The bigram table in workbench.db, on connections of its own (one per thread)."""

    def __init__(self, archive: ArchiveCore):
        self.archive = archive
        self._conns = ThreadConnections(archive.home.workbench_db_path, archive.read_only, on_connect=self._setup)

    @staticmethod
    def _setup(conn: sqlite3.Connection) -> None:
        conn.execute(f"PRAGMA busy_timeout={QUICK_BUSY_MS}")  # a search never waits long for the index

    def _conn(self) -> sqlite3.Connection | None:
        """This thread's connection, or None when there is no index (searches then scan)."""
        try:
            conn = self._conns.get()
            if not self._exists(conn):
                if self.archive.read_only:
                    return None
                conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")  # created once: worth a normal wait
                try:
                    conn.executescript(_SCHEMA)
                finally:
                    conn.execute(f"PRAGMA busy_timeout={QUICK_BUSY_MS}")
            elif merges.deep_indexes(conn, (TABLE,), over=merges.UNREADABLE_LEVELS):
                return None  # FTS5 cannot open it (old idle merges): searches scan until `doctor --fix` rebuilds it
        except WorkbenchError:
            return None  # read-only home without workbench.db
        except sqlite3.OperationalError:
            return None  # workbench.db busy right now: try again on the next search
        return conn

    def connection(self) -> sqlite3.Connection | None:
        """This thread's connection to the index (None without one)."""
        return self._conn()

    def available(self) -> bool:
        """True when the index exists (in a writable home it is created on first use)."""
        return self._conn() is not None

    @staticmethod
    def _exists(conn: sqlite3.Connection) -> bool:
        return conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (TABLE + "_state",)).fetchone() is not None

    def current(self) -> bool:
        """True when the index is of this version (an older one is rebuilt by the next refresh)."""
        conn = self._conn()
        if conn is None:
            return False
        row = conn.execute(f"SELECT value FROM {TABLE}_state WHERE key = 'version'").fetchone()
        return row is not None and row[0] == VERSION

    def high_water(self) -> int:
        """Messages with an id up to this are indexed (0: none)."""
        conn = self._conn()
        if conn is None:
            return 0
        row = conn.execute(f"SELECT value FROM {TABLE}_state WHERE key = 'high_water'").fetchone()
        return int(row[0]) if row else 0

    def refresh(self, max_rows: int | None = None, *, wait: bool = True) -> int:
        """Index messages added since the last refresh; returns how many rows were read.

        With ``wait=False`` (a search) a busy workbench.db ends the refresh at once; the
        rows not yet indexed are then scanned by the search instead.
        """
        conn = self._conn()
        if conn is None or self.archive.read_only:
            return 0
        top = self.archive.conn().execute("SELECT max(id) FROM messages").fetchone()[0] or 0
        if top == self.high_water() and self.current():
            return 0
        done = 0
        while max_rows is None or done < max_rows:
            try:
                with write_transaction(conn) if wait else _single_attempt(conn):
                    rows = self._index_batch(conn, top)
            except (WorkbenchError, sqlite3.OperationalError):
                if wait:
                    raise
                return done
            if not rows:
                return done
            done += rows
        return done

    def _index_batch(self, conn: sqlite3.Connection, top: int) -> int:
        """Inside a write transaction: index the next batch above the high-water mark."""
        high = self.high_water()
        if top < high or not self.current():  # another state.db, or an index of an older version
            conn.execute(vocab.SCHEMA)  # absent from an index of version 1
            conn.execute(f"INSERT INTO {TABLE}({TABLE}) VALUES ('delete-all')")
            conn.execute(f"DELETE FROM {vocab.TABLE}")
            self._set(conn, "version", VERSION)
            high = 0
        cursor = self.archive.conn().cursor()
        cursor.row_factory = None
        rows = cursor.execute(
            "SELECT id, content, tool_name, tool_calls FROM messages WHERE id > ? ORDER BY id LIMIT ?", (high, BATCH)
        ).fetchall()
        texts = [(r[0], searchable_text(*map(text_value, r[1:]))) for r in rows]
        conn.executemany(
            f"INSERT INTO {TABLE}(rowid, grams) VALUES (?, ?)",
            [(mid, " ".join(grams(fold_width(text)))) for mid, text in texts if CJK_CHAR.search(text)],
        )
        # the raw text, as messages_fts holds it (a BLOB written by another program reads as text)
        vocab.add(conn, (" ".join(filter(None, map(text_value, r[1:]))) for r in rows))
        self._set(conn, "high_water", rows[-1][0] if rows else high)
        return len(rows)

    def close(self) -> None:
        self._conns.close_all()

    @staticmethod
    def _set(conn: sqlite3.Connection, key: str, value: int | str) -> None:
        conn.execute(
            f"INSERT INTO {TABLE}_state (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, str(value)),
        )

    def rebuild(self) -> int:
        """Drop every entry and index the whole archive again; says why when it cannot (never a silent 0)."""
        if self.archive.read_only:
            raise ReadOnlyError("This home is open read-only; the search index was not rebuilt.")
        conn = self._conn()
        if conn is None:
            self._conns.get()  # raises the reason: a read-only or full disk, a damaged workbench.db
            raise WorkbenchError(
                "workbench.db is busy (another process is writing it); the search index was not "
                "rebuilt. Retry in a moment."
            )
        with write_transaction(conn):
            conn.execute(f"DELETE FROM {TABLE}_state WHERE key = 'version'")  # the next batch starts over
            self._set(conn, "high_water", 0)
        return self.refresh()

    def pages(
        self, match: str, *, descending: bool, ranked: bool, page: int, within: tuple[int, int] | None = None
    ) -> Iterator[list[tuple[int, float]]]:
        """Pages of (message id, bm25 rank) in id order, newest first when ``descending``."""
        conn = self._conn()
        if conn is None:
            return
        yield from fts_pages(conn, TABLE, match, descending=descending, ranked=ranked, page=page, within=within)


def grams(text: str) -> list[str]:
    """The index terms of a text: each CJK run's pairs and its last character alone.

    A single character then matches as the prefix ``X*``: every occurrence starts a pair
    or ends a run.
    """
    found = bigrams(text)
    found.extend(run[-1] for run in CJK_RUN.findall(text))
    return found


@contextlib.contextmanager
def _single_attempt(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One BEGIN IMMEDIATE (no retries): raises OperationalError at once when busy."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def fts_pages(
    conn: sqlite3.Connection,
    table: str,
    match: str,
    *,
    descending: bool,
    ranked: bool,
    page: int,
    within: tuple[int, int] | None = None,
) -> Iterator[list[tuple[int, float]]]:
    """Walk an FTS5 table's matches by rowid in pages; each page ranked best-first if ``ranked``.

    Reading by rowid costs the same whatever the number of matches, so a very common
    term ranks only its most recent ``page`` matches before looking further back.
    ``within`` keeps to an inclusive rowid range (one session's messages), which FTS5
    seeks to instead of reading the matches outside it.
    """
    rank = f"bm25({table})" if ranked else "0.0"
    bound: int | None = None
    while True:
        sql = f"SELECT rowid, {rank} FROM {table} WHERE {table} MATCH ?"
        args: list = [match]
        if within is not None:
            sql += " AND rowid BETWEEN ? AND ?"
            args += within
        if bound is not None:
            sql += " AND rowid < ?" if descending else " AND rowid > ?"
            args.append(bound)
        sql += f" ORDER BY rowid {'DESC' if descending else 'ASC'} LIMIT ?"
        rows = [(int(r[0]), float(r[1])) for r in conn.execute(sql, (*args, page))]
        if not rows:
            return
        bound = rows[-1][0]
        if ranked:
            rows.sort(key=lambda r: r[1])
        yield rows
        if len(rows) < page:
            return
