"""The archive's part of ``workbench doctor``: state.db's layout and search indexes.

``check`` reads state.db on a read-only connection of its own (a check never changes
anything): SQLite's ``quick_check``, what the file lacks of Hermes 0.19.0's layout, and
each FTS table's row count against the messages table (a wiped index keeps answering,
with nothing). ``repair`` completes the layout and rebuilds what is out of step, in one
transaction, journaled. Both are registered in ``engine.health`` when ``engine.archive``
is imported.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from ..db import connect
from ..errors import WorkbenchError
from ..health import CHECKS, FIXES, Finding
from . import schema

if TYPE_CHECKING:
    from ..home import Home

AREA = "archive"
REPAIR = "archive-index"
_FIX = ("Run `workbench doctor --fix`: it completes the layout and rebuilds the index from the messages table in "
        "one transaction (no message is changed), then both programs find every message again.")


def check(home: "Home") -> list[Finding]:
    path = home.state_db_path
    if not path.exists() or path.stat().st_size == 0:
        return [Finding(AREA, "info", f"{path} does not exist yet; the first session creates it with Hermes's layout.")]
    try:
        conn = connect(path, read_only=True)
    except (WorkbenchError, sqlite3.DatabaseError) as exc:
        return [_unreadable(path, exc)]
    try:
        return _findings(conn, path)
    except (WorkbenchError, sqlite3.DatabaseError) as exc:
        return [_unreadable(path, exc)]
    finally:
        conn.close()


def _unreadable(path, exc: Exception) -> Finding:
    return Finding(AREA, "error", f"{path} cannot be read as a session archive ({exc}).",
                   "Move it aside (the workbench then starts a new archive) or restore it from a backup.")


def _findings(conn: sqlite3.Connection, path) -> list[Finding]:
    caps = schema.inspect(conn, path)
    found = []
    problems = [row[0] for row in conn.execute("PRAGMA quick_check(5)")]
    if problems != ["ok"]:
        found.append(Finding(AREA, "error", f"SQLite reports damage in {path}: {'; '.join(problems)}.",
                             "Restore state.db from a backup; damaged pages cannot be repaired in place."))
    if caps.version != schema.SCHEMA_VERSION:
        found.append(Finding(AREA, "info", f"{path} has schema version {caps.version}; the workbench reads it as it "
                             f"is and Hermes upgrades it to {schema.SCHEMA_VERSION} the next time it opens it."))
    else:
        gaps = schema.layout_gaps(conn)
        if gaps.skipped:
            found.append(Finding(AREA, "info", f"{path}: not created here: {', '.join(gaps.skipped)}; searches that "
                                 "need it scan the messages instead."))
        if not gaps.complete:
            found.append(Finding(AREA, "warning", f"{path} lacks part of Hermes 0.19.0's layout ("
                                 f"{'; '.join(gaps.describe())}). Hermes rebuilds its search index when it opens "
                                 "such a file, and a message written meanwhile can leave that index empty.",
                                 _FIX, REPAIR))
    messages = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
    for table, usable in (("messages_fts", caps.fts), ("messages_fts_trigram", caps.trigram)):
        rows = schema.fts_rows(conn, table) if usable else None
        if rows is not None and rows != messages:
            found.append(Finding(AREA, "error", f"The search index {table} holds {rows:,} rows for {messages:,} "
                                 "messages: word searches (Hermes's and ours) miss what it lacks.", _FIX, REPAIR))
    return found


def repair(home: "Home") -> str:
    done = home.archive.repair_index()
    return "; ".join(done.describe()) or "state.db needed no repair"


CHECKS.append(check)
FIXES[REPAIR] = repair
