"""The archive's part of ``workbench doctor``: state.db's layout and search indexes.

``check`` reads state.db on a read-only connection of its own (a check never changes
anything): what the file lacks of Hermes 0.19.0's layout, and each FTS table's row count
against the messages table (a wiped index keeps answering, with nothing). SQLite's own
integrity check of the file is ``engine.home_health``'s. ``repair`` completes the layout
and rebuilds what is out of step, in one transaction, journaled. Both are registered in
``engine.health`` when this module is imported (``engine.doctor`` lists it).
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from ..db import Checkpointer, busy_wait, connect, stranded_wal
from ..errors import WorkbenchError
from ..health import CHECKS, FIXES, Finding
from . import merges, schema
from .cjk import TABLE as BIGRAM_TABLE

if TYPE_CHECKING:
    from ..home import Home

AREA = "archive"
REPAIR = "archive-index"
_FIX = (
    "Run `workbench doctor --fix`: it completes the layout and rebuilds the index from the messages table in "
    "one transaction (no message is changed), then both programs find every message again."
)


def check(home: Home) -> list[Finding]:
    path = home.state_db_path
    if stranded_wal(path):
        return []  # engine.home_health's database check says what to do
    if not path.exists():
        return [Finding(AREA, "info", f"{path} does not exist yet; the first session creates it with Hermes's layout.")]
    if path.stat().st_size == 0:  # (it was said not to exist: a state.db truncated by accident read as a new home)
        return [
            Finding(  # (a warning: "all good" above it hid that sessions may be gone)
                AREA,
                "warning",
                f"{path} is an empty file (0 bytes): it holds no sessions; the first session writes Hermes's "
                "layout into it.",
                "If it held sessions, they are gone from it: restore it from a backup before a session writes to it.",
            )
        ]
    try:
        conn = connect(path, read_only=True)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except (WorkbenchError, sqlite3.DatabaseError):
        return []  # a damaged file: engine.home_health's integrity check reports it
    try:
        conn.execute("BEGIN")  # one snapshot: a message Hermes stores meanwhile is in every count or in none
        deep = _deep_findings(
            merges.deep_indexes(conn), path, "every search fails, and so does every message Hermes stores"
        )
        if any(f.severity == "error" for f in deep):
            return deep  # FTS5 cannot open such an index, so nothing else here can be read
        return deep + _findings(conn, path)
    except WorkbenchError as exc:  # an SQLite file that is not a session archive, or damage met on the way
        return [
            Finding(
                AREA,
                "error",
                exc.message,
                "Move it aside (the workbench then starts a new archive) or restore it from a backup.",
            )
        ]
    except sqlite3.DatabaseError:
        return []
    finally:
        conn.close()


def _findings(conn: sqlite3.Connection, path) -> list[Finding]:
    caps = schema.inspect(conn, path)
    found = []
    if caps.version != schema.SCHEMA_VERSION:
        found.append(
            Finding(
                AREA,
                "info",
                f"{path} has schema version {caps.version}; the workbench reads it as it "
                f"is and Hermes upgrades it to {schema.SCHEMA_VERSION} the next time it opens it.",
            )
        )
    else:
        gaps = schema.layout_gaps(conn)
        if gaps.skipped:
            found.append(
                Finding(
                    AREA,
                    "info",
                    f"{path}: not created here: {', '.join(gaps.skipped)}; searches that "
                    "need it scan the messages instead.",
                )
            )
        if not gaps.complete:
            found.append(
                Finding(
                    AREA,
                    "warning",
                    f"{path} lacks part of Hermes 0.19.0's layout ("
                    f"{'; '.join(gaps.describe())}). Hermes rebuilds its search index when it opens "
                    "such a file, and a message written meanwhile can leave that index empty.",
                    _FIX,
                    REPAIR,
                )
            )
    messages = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
    for table, usable in (("messages_fts", caps.fts), ("messages_fts_trigram", caps.trigram)):
        rows = schema.fts_rows(conn, table) if usable else None
        if rows is not None and rows != messages:
            found.append(
                Finding(
                    AREA,
                    "error",
                    f"The search index {table} holds {rows:,} rows for {messages:,} "
                    "messages: word searches (Hermes's and ours) miss what it lacks.",
                    _FIX,
                    REPAIR,
                )
            )
    return found


def repair(home: Home) -> str:
    archive = home.archive
    done = archive.repair_index()  # opening it for the repair may already have completed the layout
    lines = (archive.completed.describe() if archive.completed else []) + done.describe()
    return "state.db: " + "; ".join(lines) if lines else "state.db needed no repair"


DEPTH_REPAIR = "archive-fts-depth"
CJK_DEPTH_REPAIR = "archive-cjk-depth"
CJK_DEPTH_FIX = (
    "Run `workbench doctor --fix`: it empties the CJK index and indexes every message into it again (it holds "
    "nothing else; a few minutes per million messages)."
)
DEPTH_FIX = (
    "Run `workbench doctor --fix` with Hermes stopped: it empties the index and rebuilds it from the index's "
    "own copy of every message, in one transaction (no message is changed; about a minute per million messages)."
)


def _deep_findings(
    levels_by_table: dict[str, int], path, harm: str, fix: str = DEPTH_FIX, repair: str = DEPTH_REPAIR
) -> list[Finding]:
    return [
        Finding(
            AREA,
            "error" if levels > merges.UNREADABLE_LEVELS else "warning",
            f"The search index {table} in {path} lists {levels:,} levels, "
            + (
                f"so SQLite reads it as damaged: {harm}. "
                if levels > merges.UNREADABLE_LEVELS
                else f"and SQLite refuses to open it past {merges.UNREADABLE_LEVELS:,}. "
            )
            + "An earlier workbench's idle merges added them (each step gathered the index into a new level).",
            fix,
            repair,
        )
        for table, levels in levels_by_table.items()
    ]


def check_cjk_depth(home: Home) -> list[Finding]:
    """The same for our CJK index in workbench.db, which the old idle steps deepened on their own."""
    path = home.workbench_db_path
    if not path.exists():
        return []
    try:
        conn = connect(path, read_only=True)
    except (WorkbenchError, sqlite3.DatabaseError):
        return []  # the database check reports a damaged file
    try:
        deep = merges.deep_indexes(conn, (BIGRAM_TABLE,))
    except sqlite3.DatabaseError:
        return []
    finally:
        conn.close()
    return _deep_findings(
        deep, path, "every search for Chinese or Japanese text fails", CJK_DEPTH_FIX, CJK_DEPTH_REPAIR
    )


def repair_cjk_depth(home: Home) -> str:
    """Empty the CJK index's structure, then index the archive into it again (it holds nothing else)."""
    conn = connect(home.workbench_db_path)
    try:
        deep = merges.deep_indexes(conn, (BIGRAM_TABLE,))
        if deep:
            with busy_wait(conn, 1000):
                conn.execute("BEGIN IMMEDIATE")
            merges.reset_structure(conn, BIGRAM_TABLE)
            conn.execute("COMMIT")
    except sqlite3.Error as exc:
        raise WorkbenchError(f"workbench.db's CJK index could not be reset ({exc}); nothing was changed.") from exc
    finally:
        conn.close()
    if not deep:
        return "workbench.db: the CJK index is not over-deep any more"
    rows = home.archive.bigram_index.rebuild()
    return f"workbench.db: rebuilt {BIGRAM_TABLE} from {rows:,} messages (it listed {deep[BIGRAM_TABLE]:,} levels)"


def repair_depth(home: Home) -> str:
    """Empty each over-deep index's structure and rebuild it, in one transaction, journaled first."""
    home.archive.refuse_damaged()  # (its own connection's close could checkpoint the WAL into the file)
    conn = connect(home.state_db_path)
    try:
        deep = merges.deep_indexes(conn)
        if not deep:
            return "state.db: no search index is over-deep any more"
        with home.archive.journaled("rebuild-deep-index", "*", actor="user", detail={"levels": deep}):
            try:
                with busy_wait(conn, 1000):
                    conn.execute("BEGIN IMMEDIATE")
                for table in deep:
                    merges.reset_structure(conn, table)
                    conn.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise WorkbenchError(
                    f"state.db's search index could not be rebuilt ({exc}); nothing was changed. If Hermes or a "
                    "workbench TUI has it open, close them and run `workbench doctor --fix` again."
                ) from exc
    finally:
        conn.close()
    return "state.db: rebuilt " + ", ".join(f"{t} (it listed {n:,} levels)" for t, n in deep.items())


WAL_REPAIR = "archive-wal"
WAL_WARN_BYTES = 4 * Checkpointer.WAL_KEEP_BYTES  # 256 MB: far past what the archive's checkpoints leave


def check_wal(home: Home) -> list[Finding]:
    """A state.db-wal grown huge: every program that opens the archive first reads it back."""
    wal = home.state_db_path.with_name(home.state_db_path.name + "-wal")
    try:
        size = wal.stat().st_size
    except OSError:
        return []
    if size < WAL_WARN_BYTES:
        return []
    return [
        Finding(
            AREA,
            "warning",
            f"{wal} is {size / 2**30:,.1f} GB: whichever program opens state.db first reads all of it back "
            "before anyone can use the database (Hermes gives up after 1 s with 'database is locked').",
            "Run `workbench doctor --fix` while no other program has state.db open: it copies the WAL into "
            "state.db and empties it (every write in it is already committed; nothing is lost).",
            WAL_REPAIR,
        )
    ]


def repair_wal(home: Home) -> str:
    home.archive.refuse_damaged()  # a checkpoint would copy the WAL into the damaged file: .recover reads both
    conn = home.archive.conn()
    home.archive.settle_checkpoints()
    with busy_wait(conn, 1000):  # a reader that stays is reported, not waited for
        busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    if busy:
        raise WorkbenchError(
            f"state.db is in use by another program ({copied:,} of {frames:,} pages copied), so its WAL could "
            "not be emptied. Close Hermes and any workbench TUI on this home, then run `workbench doctor --fix` "
            "again; nothing was lost."
        )
    return f"state.db: {copied:,} pages copied from its WAL, which is now empty"


CHECKS.append(check)
CHECKS.append(check_wal)
FIXES[REPAIR] = repair
FIXES[WAL_REPAIR] = repair_wal
FIXES[DEPTH_REPAIR] = repair_depth
CHECKS.append(check_cjk_depth)
FIXES[CJK_DEPTH_REPAIR] = repair_cjk_depth
