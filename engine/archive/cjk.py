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

An index of version 3 differs from this one only in the pairs of text holding half-width
katakana (stored as written, not folded), so it is upgraded in place rather than rebuilt:
``fold_step`` (idle upkeep) finds those messages with SQLite's own scan (``HALF_WIDTH``) a
bounded range at a time and re-indexes them, the range done kept as a mark in the state
table, so a killed process resumes; until the last step sets the version, searches scan the
messages not yet re-indexed (``unfolded``). Older versions are rebuilt whole.
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
FOLDS_FROM = "3"  # upgraded in place (fold_step)
FOLD_SCAN = 20_000  # message ids one upgrade step looks through (SQLite's scan, outside the write lock)
FOLD_ROWS = 200  # messages one upgrade step re-indexes: the write lock is held a few ms
QUICK_BUSY_MS = 100

_SCHEMA = f"""
CREATE VIRTUAL TABLE IF NOT EXISTS {TABLE} USING fts5(grams, content='', tokenize='ascii');
CREATE TABLE IF NOT EXISTS {TABLE}_state (key TEXT PRIMARY KEY, value TEXT);
{vocab.SCHEMA}
"""

INDEXED_TEXT = "COALESCE(m.content,'') || ' ' || COALESCE(m.tool_name,'') || ' ' || COALESCE(m.tool_calls,'')"
# A message whose indexed text may hold half-width katakana (U+FF61-FF9F): as written (UTF-8 EF BD A1 to
# EF BE 9F; this byte test, five times faster than a GLOB class, also takes U+FF40-FFBF: a few rows more)
# or as a ``\uff61`` escape in tool-call JSON, which ``searchable_calls`` decodes. Folding changed the
# pairs of these messages only.
_UTF8_FF40_FFBF = "(instr(CAST({0} AS BLOB), X'EFBD') OR instr(CAST({0} AS BLOB), X'EFBE'))"
HALF_WIDTH = (
    "("
    + " OR ".join(_UTF8_FF40_FFBF.format(column) for column in ("m.content", "m.tool_name", "m.tool_calls"))
    + " OR (m.tool_calls LIKE '%\\uff%' AND ("
    + " OR ".join(f"m.tool_calls LIKE '%\\uff{digit}%'" for digit in "6789")
    + ")))"
)


class BigramIndex:
    """The bigram table in workbench.db, on connections of its own (one per thread)."""

    def __init__(self, archive: ArchiveCore):
        self.archive = archive
        self._conns = ThreadConnections(
            archive.home.workbench_db_path, archive.read_only, on_connect=self._setup, follow=True
        )

    @staticmethod
    def _setup(conn: sqlite3.Connection) -> None:
        conn.execute(f"PRAGMA busy_timeout={QUICK_BUSY_MS}")  # a search never waits long for the index

    def _conn(self) -> sqlite3.Connection | None:
        """This thread's connection, or None when there is no index (searches then scan), as while the journal
        in the same file is known to be damaged (the index's writes would land in it)."""
        try:
            self.archive.home.journal.refuse_damaged()
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
        """True when the index can answer: of this version, or of version 3 being upgraded (``unfolded``)."""
        return self._state().get("version") in (VERSION, FOLDS_FROM)

    def _state(self) -> dict[str, str]:
        conn = self._conn()
        return dict(conn.execute(f"SELECT key, value FROM {TABLE}_state").fetchall()) if conn is not None else {}

    def high_water(self) -> int:
        """Messages with an id up to this are indexed (0: none)."""
        return int(self._state().get("high_water", 0))

    def _top(self) -> int:
        """The newest message id in state.db (0: none)."""
        return self.archive.conn().execute("SELECT max(id) FROM messages").fetchone()[0] or 0

    def replaced(self) -> bool:
        """Whether the index covers message ids state.db no longer reaches: another state.db was put in its
        place (or its newest messages deleted), so the next ``refresh`` rebuilds the index whole."""
        return self._top() < self.high_water()

    def unfolded(self) -> tuple[int, int] | None:
        """The ids (first, last) among which messages holding half-width katakana are still indexed as
        version 3 left them (not folded); None when none are (searches scan those, ``HALF_WIDTH``)."""
        state = self._state()
        if state.get("version") != FOLDS_FROM:
            return None
        return int(state.get("folded", 0)) + 1, int(state.get("fold_to", state.get("high_water", 0)))

    def fold_step(self) -> int:
        """One bounded step of the upgrade from version 3; returns the messages looked through (0: none
        to do, or workbench.db busy). The rows are found outside the write lock and checked again in it."""
        span = self.unfolded()
        conn = self._conn()
        if span is None or conn is None or self.archive.read_only:
            return 0
        first, last = span
        if self._top() < last:
            return 0  # another state.db: the next refresh rebuilds the index whole
        cursor = self.archive.conn().cursor()
        cursor.row_factory = None
        rows = cursor.execute(
            f"SELECT m.id, m.content, m.tool_name, m.tool_calls FROM messages m WHERE m.id BETWEEN ? AND ? "
            f"AND {HALF_WIDTH} ORDER BY m.id LIMIT ?",
            (first, min(last, first + FOLD_SCAN - 1), FOLD_ROWS),
        ).fetchall()
        end = rows[-1][0] if len(rows) == FOLD_ROWS else min(last, first + FOLD_SCAN - 1)
        try:
            with _single_attempt(conn):
                if self.unfolded() != span:
                    return 0  # another process took this step (or rebuilt the index) meanwhile
                self._fold_start(conn)
                for mid, *values in rows:
                    text = searchable_text(*map(text_value, values))
                    conn.execute(
                        f"INSERT INTO {TABLE}({TABLE}, rowid, grams) VALUES ('delete', ?, ?)",
                        (mid, " ".join(grams(text))),
                    )
                    conn.execute(
                        f"INSERT INTO {TABLE}(rowid, grams) VALUES (?, ?)", (mid, " ".join(grams(fold_width(text))))
                    )
                if end >= last:
                    conn.execute(f"DELETE FROM {TABLE}_state WHERE key IN ('folded', 'fold_to')")
                    self._set(conn, "version", VERSION)
                else:
                    self._set(conn, "folded", end)
        except sqlite3.OperationalError:
            return 0
        return max(1, end - first + 1)

    def _fold_start(self, conn: sqlite3.Connection) -> None:
        """Inside a write transaction on an index of version 3: note where its unfolded rows end, before
        any row above is indexed (folded); the upgrade must never re-index those."""
        state = self._state()
        if state.get("version") == FOLDS_FROM and "fold_to" not in state:
            self._set(conn, "fold_to", state.get("high_water", 0))

    def refresh(self, max_rows: int | None = None, *, wait: bool = True) -> int:
        """Index messages added since the last refresh; returns how many rows were read.

        With ``wait=False`` (a search) a busy workbench.db ends the refresh at once; the
        rows not yet indexed are then scanned by the search instead.
        """
        conn = self._conn()
        if conn is None or self.archive.read_only:
            return 0
        top = self._top()
        if top == self.high_water() and self.current():
            return 0  # (an upgrade from version 3 is left to idle upkeep: fold_step)
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
            conn.execute(f"DELETE FROM {TABLE}_state WHERE key IN ('folded', 'fold_to')")
            self._set(conn, "version", VERSION)
            high = 0
        self._fold_start(conn)
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
