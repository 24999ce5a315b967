"""Settling the archive changes a killed process left ``pending`` in the journal.

A change to state.db is one transaction, so after a kill it is either all there or not
there at all. Its journal row, written first, says what it meant to leave (a title, the
ids it deleted, the prompt's digest); one look at state.db tells which, and the row is
marked ``done`` or ``abandoned``. Only the holder of the change lock settles, so the row
of a change still running in another process is never touched.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable

from ..db import connect
from ..errors import WorkbenchError
from ..fileio import UnsafePath
from ..journal import JournalEntry
from . import merges, schema
from .core import SUBSYSTEM, ArchiveCore
from .models import prompt_digest

Check = Callable[[sqlite3.Connection, JournalEntry], bool | None]
DONE_NOTE = "interrupted after its change reached state.db; settled on the next open"
UNDONE_NOTE = "interrupted before its change reached state.db; settled on the next open"
UNKNOWN_NOTE = (
    "interrupted; state.db no longer shows whether its change took effect (the row does not say what it "
    "meant to leave, or what it changed has gone since)"
)


class InterruptedMixin(ArchiveCore):
    def settle(self) -> list[int]:
        """Settle the ``sessions`` rows left pending by processes that died mid-change; their ids.

        Nothing is settled while another process is changing the archive (its row is live),
        inside a change of this thread's own, or when state.db or the journal cannot be read
        (their first use says why). A row that cannot be settled stays pending for the next open.
        """
        inside = getattr(self._held, "depth", 0)
        if self.read_only or inside:
            return []
        journal, settled = self.home.journal, []
        try:
            if not journal.pending(SUBSYSTEM):
                return []
            with self.changing(wait=False):
                rows = journal.pending(SUBSYSTEM)  # again, under the lock
                # A connection of its own, read only: opening the archive may redo a layout completion,
                # which would hide whether the interrupted one had done it.
                with contextlib.closing(connect(self.home.links.resolve_file(self.home.state_db_path), True)) as conn:
                    verdicts = [(row, _took_effect(conn, row)) for row in rows]
                for row, verdict in verdicts:
                    with contextlib.suppress(sqlite3.Error):  # (a damaged row stays pending; the rest go on)
                        if verdict:
                            journal.commit(row.id, detail={**row.detail, "settled": DONE_NOTE})
                        else:
                            journal.abandon(row.id, UNDONE_NOTE if verdict is False else UNKNOWN_NOTE)
                        settled.append(row.id)
        except (BlockingIOError, WorkbenchError, UnsafePath, sqlite3.Error):
            pass
        return settled


def _took_effect(conn: sqlite3.Connection, row: JournalEntry) -> bool | None:
    """Whether state.db holds what ``row``'s change meant to leave; None when it cannot tell."""
    check = _CHECKS.get(row.action)
    if check is None:
        return None
    try:
        return check(conn, row)
    except Exception:  # noqa: BLE001  (a column this schema lacks, a hostile detail: it cannot tell)
        return None


def _message_id(value: object) -> int | None:
    """A message id as a row's detail may hold one (a flag or a number past SQLite's range is none)."""
    return value if type(value) is int and 0 < value < 2**63 else None


def _one(conn: sqlite3.Connection, sql: str, *args: object) -> sqlite3.Row | None:
    return conn.execute(sql, args).fetchone()


def _reopened(conn: sqlite3.Connection, row: JournalEntry) -> bool | None:
    found = _one(conn, "SELECT ended_at FROM sessions WHERE id = ?", row.target)
    return None if found is None else found[0] is None


def _titled(conn: sqlite3.Connection, row: JournalEntry) -> bool | None:
    """(A row from before titles were journaled first has no ``title`` in its detail: it cannot tell.)"""
    found = _one(conn, "SELECT title FROM sessions WHERE id = ?", row.target)
    return None if found is None or "title" not in row.detail else found[0] == row.detail["title"]


def _prompted(conn: sqlite3.Connection, row: JournalEntry) -> bool | None:
    found = _one(conn, "SELECT system_prompt FROM sessions WHERE id = ?", row.target)
    meant = row.detail.get("sha256_after")
    return None if found is None or not meant else prompt_digest(found[0]) == meant


def _archived(conn: sqlite3.Connection, row: JournalEntry) -> bool | None:
    chain = row.detail.get("sessions")
    if not isinstance(chain, list) or not chain:
        return None
    marks = ", ".join("?" * len(chain))
    flags = [r[0] for r in conn.execute(f"SELECT archived FROM sessions WHERE id IN ({marks})", chain)]
    return None if not flags else all(flag == (row.action == "archive") for flag in flags)


def _deleted(conn: sqlite3.Connection, row: JournalEntry) -> bool | None:
    ids = row.detail.get("deleted")
    if not isinstance(ids, list) or not ids:
        return None
    marks = ", ".join("?" * len(ids))
    return _one(conn, f"SELECT 1 FROM sessions WHERE id IN ({marks}) LIMIT 1", *ids) is None


def _set_aside(key: str, compacted: bool) -> Check:
    """A compaction or rewind: the message the row names is no longer live (and, compacted, kept as such)."""

    def check(conn: sqlite3.Connection, row: JournalEntry) -> bool | None:
        message_id = _message_id(row.detail.get(key))
        if message_id is None:
            return None
        found = _one(conn, f"SELECT active, {'compacted' if compacted else '1'} FROM messages WHERE id = ?", message_id)
        return None if found is None else found[0] == 0 and found[1] == 1

    return check


def _laid_out(conn: sqlite3.Connection, row: JournalEntry) -> bool | None:
    """A layout completion or repair: the layout is whole and every search index ends where messages do."""
    present = tuple(
        table for table in schema.FTS_TABLES if _one(conn, "SELECT 1 FROM sqlite_master WHERE name = ?", table)
    )
    return schema.layout_gaps(conn).complete and not schema.stale_tables(conn, present)


def _shallow(conn: sqlite3.Connection, row: JournalEntry) -> bool | None:
    levels = row.detail.get("levels")
    tables = tuple(table for table in schema.FTS_TABLES if isinstance(levels, dict) and table in levels)
    return not merges.deep_indexes(conn, tables) if tables else None


_CHECKS: dict[str, Check] = {
    "reopen": _reopened,
    "title": _titled,
    "system_prompt": _prompted,
    "archive": _archived,
    "unarchive": _archived,
    "delete": _deleted,
    "prune": _deleted,
    "compact": _set_aside("last_live_id", compacted=True),
    "rewind": _set_aside("to_message_id", compacted=False),
    "complete-layout": _laid_out,
    "repair-index": _laid_out,
    "rebuild-deep-index": _shallow,
}
