"""Background reviews a quit dropped, kept in workbench.db until the next start says so.

A review the user quit without (``AgentSession.drop_reviews``) never came to its end: the
terminal says so as it comes back, a line easily lost, so the next TUI start says it again,
once (``take``). No command runs a review again; the next review of that session reads the
whole conversation, the dropped one's turns included.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import TYPE_CHECKING

from ..errors import WorkbenchError

if TYPE_CHECKING:
    from ..home import Home

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS dropped_reviews (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    session_id TEXT NOT NULL
);
"""


def put(home: Home, sessions: list[str]) -> None:
    """Remember that the reviews of ``sessions`` were dropped; a workbench.db that will not take it is
    logged, never raised (the quit goes on, and its exit line still says so)."""
    if not sessions or home.read_only:
        return
    try:
        home.journal.connection().executescript(_SCHEMA)
        with home.journal.transaction() as write:
            write.executemany(
                "INSERT INTO dropped_reviews (at, session_id) VALUES (?, ?)",
                [(home.clock.now(), session) for session in sessions],
            )
    except (WorkbenchError, sqlite3.Error, OSError) as exc:
        log.warning("could not note the dropped review of session %s: %s", ", ".join(sessions), exc)


def take(home: Home) -> list[str]:
    """The sessions whose review a quit dropped, oldest first, each once: asking takes them. Only reads
    while there are none (asking never creates workbench.db or the table, nor waits for its lock)."""
    if home.read_only or not home.journal.path.exists():
        return []
    try:
        rows = home.journal.connection().execute("SELECT id, session_id FROM dropped_reviews ORDER BY id").fetchall()
        if rows:
            with home.journal.transaction() as write:
                write.execute("DELETE FROM dropped_reviews WHERE id <= ?", (rows[-1][0],))
    except (WorkbenchError, sqlite3.Error, OSError) as exc:
        if "no such table" not in str(exc):
            log.warning("could not read the dropped reviews: %s", exc)
        return []
    return list(dict.fromkeys(row[1] for row in rows))
