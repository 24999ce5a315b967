"""Turn writes leave FTS5's merging to idle time.

FTS5 merges segments as part of every write (its ``automerge`` setting), and the work
grows with the number of index levels: at 1M messages a turn write into Hermes's layout
spent about three quarters of its CPU merging, and now and then a merge of large
segments held the write lock for most of a second. Our turn writes switch ``automerge``
off inside their own transaction, have FTS5 write their rows out at a savepoint, and
put the table's setting back before the commit: other writers (Hermes) only ever see
the file's own setting. ``crisismerge`` is left as it is, so a level that fills up is
still merged at once and the number of segments stays bounded whoever writes; the rest
is ``upkeep``'s bounded idle steps.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator

DEFAULT_AUTOMERGE = 4  # FTS5's value when the table's config holds none
MAX_AUTOMERGE = 64  # the largest value FTS5 accepts


def _automerge(conn: sqlite3.Connection, table: str) -> int | None:
    """The table's automerge, or None when merging is already off or the setting is not one FTS5 accepts."""
    try:
        row = conn.execute(f"SELECT v FROM {table}_config WHERE k = 'automerge'").fetchone()
    except sqlite3.Error:
        return None
    value = DEFAULT_AUTOMERGE if row is None else row[0]
    return value if isinstance(value, int) and 0 < value <= MAX_AUTOMERGE else None


def _set(conn: sqlite3.Connection, table: str, value: int) -> None:
    conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('automerge', ?)", (value,))


@contextlib.contextmanager
def deferred(conn: sqlite3.Connection, tables: tuple[str, ...]) -> Iterator[None]:
    """Inside a write transaction: the rows written in the block add segments, merging nothing."""
    kept = {}
    for table in tables:
        value = _automerge(conn, table)
        if value is None:
            continue
        try:
            _set(conn, table, 0)
        except sqlite3.Error:
            continue  # a table FTS5 cannot configure is written as before
        kept[table] = value
    yield
    if kept:
        conn.execute("SAVEPOINT fts_flush")  # FTS5 writes its pending rows out at a savepoint
        conn.execute("RELEASE fts_flush")
        for table, value in kept.items():
            _set(conn, table, value)
