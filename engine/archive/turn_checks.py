"""What an append checks inside its write transaction, and when a stream of turns may skip it.

Every append used to read, in its transaction, both FTS tables' first and last rows (is the
index whole?) and both indexes' depth (does the turn merge them itself?): two statements
and a record parse per turn, about 4 us of CPU per message of a stream. Only a commit by
another connection (Hermes, another thread) can break the index or deepen it past what
this connection's own turns do, and SQLite counts those: ``PRAGMA data_version`` moves
exactly when another connection committed. So each thread keeps what its connection last
saw, and forgets it when that number moves.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from . import merges, schema

DEPTH_EVERY = 16  # turns between depth reads while nothing else writes: a level takes thousands to add


@dataclass
class TurnChecks:
    """One thread's view of state.db between its appends (``ArchiveCore.turn_checks``)."""

    key: tuple = ()  # (connection, FTS tables, data_version) the view holds for
    whole: int = 0  # 2: the index was shown to stay whole under this connection's inserts
    inserted: bool = False  # a turn committed rows since the last ends check
    deep: tuple[str, ...] = ()  # tables deep enough for the turn's own merging, as last read
    depth_age: int = DEPTH_EVERY  # turns since the depth was read

    def look(self, conn: sqlite3.Connection, tables: tuple[str, ...]) -> None:
        """At the start of a turn's transaction: forget all another connection's commit may have changed."""
        key = (conn, tables, conn.execute("PRAGMA data_version").fetchone()[0])
        if key != self.key:
            self.key, self.whole, self.inserted, self.depth_age = key, 0, False, DEPTH_EVERY

    def whole_fts(self, conn: sqlite3.Connection, tables: tuple[str, ...], sql: str) -> bool:
        """True when every FTS table ends where messages do (``schema.stale_tables``).

        False means an index was wiped or is being rebuilt by another program in separate
        statements (Hermes does so when it finds a trigger missing): writing now could make
        that rebuild fail with the index half empty, so the caller repairs it first. Checked
        until a check finds it whole after a turn of ours committed rows under an earlier one
        that did, with no other commit between: that shows this connection's inserts keep it
        whole (their triggers fire as every later turn's will), so later turns skip it.
        """
        if not tables or self.whole == 2:
            return True
        whole = not schema.stale_tables(conn, tables, sql)
        self.whole = 0 if not whole else 2 if self.whole == 1 and self.inserted else 1
        self.inserted = False
        return whole

    def committed(self) -> None:
        """A turn's rows are committed (after a ``whole_fts`` that passed)."""
        self.inserted = True

    def deep_fts(self, conn: sqlite3.Connection, tables: tuple[str, ...]) -> tuple[str, ...]:
        """The tables past ``merges.FTS5_LEVELS`` levels, whose small levels the turn merges itself:
        read each turn while one is (the turn's merges change it), else every ``DEPTH_EVERY``."""
        if self.deep or self.depth_age >= DEPTH_EVERY:
            self.deep = tuple(merges.deep_indexes(conn, tables, over=merges.FTS5_LEVELS))
            self.depth_age = 0
        self.depth_age += 1
        return self.deep
