"""state.db: Hermes 0.19.0's complete layout (schema version 22), and nothing of ours.

A fresh archive gets exactly Hermes's tables, indexes, both FTS5 tables and their six
triggers. Hermes checks those six triggers every time it opens state.db; when any is
missing it rebuilds both FTS tables in separate autocommit statements, and a message
written in between makes that rebuild fail half way with the index wiped. So an
archive of our version that lacks part of the layout (as earlier workbench releases
made them, without the trigram table) is completed in one ``BEGIN IMMEDIATE``
transaction, backfilled inside it (``repair``). An archive that already has the
layout is never altered, nor is one of another schema version (Hermes migrates those
itself). A file that is not a usable SQLite database is refused, untouched.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..db import describe_error, is_damage, write_transaction
from ..errors import WorkbenchError

SCHEMA_VERSION = 22

# Hermes's tables (schema 22), as Hermes declares them.
TABLES_SQL = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);

CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    user_id TEXT,
    session_key TEXT,
    chat_id TEXT,
    chat_type TEXT,
    thread_id TEXT,
    display_name TEXT,
    origin_json TEXT,
    expiry_finalized INTEGER DEFAULT 0,
    model TEXT,
    model_config TEXT,
    system_prompt TEXT,
    parent_session_id TEXT,
    started_at REAL NOT NULL,
    ended_at REAL,
    end_reason TEXT,
    message_count INTEGER DEFAULT 0,
    tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0,
    output_tokens INTEGER DEFAULT 0,
    cache_read_tokens INTEGER DEFAULT 0,
    cache_write_tokens INTEGER DEFAULT 0,
    reasoning_tokens INTEGER DEFAULT 0,
    cwd TEXT,
    git_branch TEXT,
    git_repo_root TEXT,
    billing_provider TEXT,
    billing_base_url TEXT,
    billing_mode TEXT,
    estimated_cost_usd REAL,
    actual_cost_usd REAL,
    cost_status TEXT,
    cost_source TEXT,
    pricing_version TEXT,
    title TEXT,
    api_call_count INTEGER DEFAULT 0,
    handoff_state TEXT,
    handoff_platform TEXT,
    handoff_error TEXT,
    compression_failure_cooldown_until REAL,
    compression_failure_error TEXT,
    compression_fallback_streak INTEGER NOT NULL DEFAULT 0,
    profile_name TEXT,
    rewind_count INTEGER NOT NULL DEFAULT 0,
    archived INTEGER NOT NULL DEFAULT 0,
    FOREIGN KEY (parent_session_id) REFERENCES sessions(id)
);

CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content TEXT,
    tool_call_id TEXT,
    tool_calls TEXT,
    tool_name TEXT,
    effect_disposition TEXT,
    timestamp REAL NOT NULL,
    token_count INTEGER,
    finish_reason TEXT,
    reasoning TEXT,
    reasoning_content TEXT,
    reasoning_details TEXT,
    codex_reasoning_items TEXT,
    codex_message_items TEXT,
    platform_message_id TEXT,
    observed INTEGER DEFAULT 0,
    active INTEGER NOT NULL DEFAULT 1,
    compacted INTEGER NOT NULL DEFAULT 0,
    api_content TEXT
);

CREATE TABLE IF NOT EXISTS session_model_usage (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    billing_provider TEXT NOT NULL DEFAULT '',
    billing_base_url TEXT NOT NULL DEFAULT '',
    billing_mode TEXT NOT NULL DEFAULT '',
    task TEXT NOT NULL DEFAULT '',
    api_call_count INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    estimated_cost_usd REAL NOT NULL DEFAULT 0,
    actual_cost_usd REAL NOT NULL DEFAULT 0,
    cost_status TEXT, cost_source TEXT, first_seen REAL, last_seen REAL,
    PRIMARY KEY (session_id, model, billing_provider, billing_base_url, billing_mode, task)
);

CREATE TABLE IF NOT EXISTS state_meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS gateway_routing (scope TEXT NOT NULL DEFAULT '', session_key TEXT NOT NULL,
    entry_json TEXT NOT NULL, updated_at REAL NOT NULL, PRIMARY KEY (scope, session_key));
CREATE TABLE IF NOT EXISTS compression_locks (session_id TEXT PRIMARY KEY, holder TEXT NOT NULL,
    acquired_at REAL NOT NULL, expires_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS async_delegations ( delegation_id TEXT PRIMARY KEY, origin_session TEXT NOT NULL,
    origin_ui_session_id TEXT NOT NULL DEFAULT '', parent_session_id TEXT, state TEXT NOT NULL,
    dispatched_at REAL NOT NULL, completed_at REAL, updated_at REAL NOT NULL, event_json TEXT, result_json TEXT,
    delivery_state TEXT NOT NULL DEFAULT 'pending', delivery_attempts INTEGER NOT NULL DEFAULT 0, delivered_at REAL,
    owner_pid INTEGER, owner_started_at INTEGER, task_json TEXT, delivery_claim TEXT, delivery_claimed_at REAL);

CREATE INDEX IF NOT EXISTS idx_sessions_source ON sessions(source);
CREATE INDEX IF NOT EXISTS idx_sessions_source_id ON sessions(source, id);
CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX IF NOT EXISTS idx_sessions_started ON sessions(started_at DESC);
CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id, timestamp);
CREATE INDEX IF NOT EXISTS idx_compression_locks_expires ON compression_locks(expires_at);
CREATE INDEX IF NOT EXISTS idx_session_model_usage_session ON session_model_usage(session_id);
CREATE INDEX IF NOT EXISTS idx_session_model_usage_model ON session_model_usage(model);
CREATE INDEX IF NOT EXISTS idx_async_delegations_delivery ON async_delegations(delivery_state, completed_at);
CREATE INDEX IF NOT EXISTS idx_messages_session_active ON messages(session_id, active, timestamp);
CREATE INDEX IF NOT EXISTS idx_messages_active_null ON messages(active) WHERE active IS NULL;
CREATE INDEX IF NOT EXISTS idx_sessions_session_key ON sessions(session_key, started_at DESC);
CREATE INDEX IF NOT EXISTS idx_sessions_gateway_peer ON sessions(source, user_id, chat_id, chat_type, thread_id, started_at DESC);
CREATE INDEX IF NOT EXISTS idx_sessions_handoff_state ON sessions(handoff_state, started_at);
CREATE INDEX IF NOT EXISTS idx_messages_platform_msg_id ON messages(session_id, platform_message_id)
    WHERE platform_message_id IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS idx_sessions_title_unique ON sessions(title) WHERE title IS NOT NULL;
"""

# Hermes's two inline FTS5 tables and their six triggers. The indexed text of a message
# is its content, tool name and tool-call JSON, so tool names and arguments are searchable.
INDEXED_TEXT = "COALESCE({p}content,'') || ' ' || COALESCE({p}tool_name,'') || ' ' || COALESCE({p}tool_calls,'')"


def _fts_sql(table: str, tokenize: str = "") -> str:
    options = f", tokenize='{tokenize}'" if tokenize else ""
    text = INDEXED_TEXT.format(p="new.")
    return f"""
CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5(content{options});
CREATE TRIGGER IF NOT EXISTS {table}_insert AFTER INSERT ON messages BEGIN
  INSERT INTO {table}(rowid, content) VALUES (new.id, {text});
END;
CREATE TRIGGER IF NOT EXISTS {table}_delete AFTER DELETE ON messages BEGIN
  DELETE FROM {table} WHERE rowid = old.id;
END;
CREATE TRIGGER IF NOT EXISTS {table}_update AFTER UPDATE ON messages BEGIN
  DELETE FROM {table} WHERE rowid = old.id;
  INSERT INTO {table}(rowid, content) VALUES (new.id, {text});
END;
"""


FTS_SQL = _fts_sql("messages_fts")
TRIGRAM_SQL = _fts_sql("messages_fts_trigram", "trigram")
HERMES_DDL = TABLES_SQL + FTS_SQL + TRIGRAM_SQL
FTS_TABLES = {"messages_fts": FTS_SQL, "messages_fts_trigram": TRIGRAM_SQL}
_UNIQUE_TITLES = "idx_sessions_title_unique"
BACKFILL_CHUNK = 20_000  # message ids per backfill statement (one progress report each)

# progress(step, done, total): what a long layout completion or index rebuild reports
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Capabilities:
    """What an opened state.db offers: its version, columns and search indexes."""

    version: int | None
    session_columns: frozenset[str]
    message_columns: frozenset[str]
    fts: bool
    trigram: bool
    tables: frozenset[str] = field(default_factory=frozenset)
    # messages.id is AUTOINCREMENT (Hermes's layout): a new id is past every id ever used, so the rows
    # of one INSERT take consecutive ids, the last of which SQLite reports (no RETURNING needed)
    rising_ids: bool = False

    def has(self, table: str, column: str) -> bool:
        return column in (self.session_columns if table == "sessions" else self.message_columns)


def _fail(path: Path, exc: Exception) -> WorkbenchError:
    if not is_damage(exc):  # a full or read-only disk, a lock: the archive is intact, never "move it aside"
        return WorkbenchError(describe_error(exc, path), path=str(path))
    return WorkbenchError(
        f"{path} is not a usable session archive ({exc}). It was not modified. Move it aside to let the "
        "workbench start a new archive, or restore it from a backup.",
        path=str(path),
    )


def _split(script: str) -> list[str]:
    """Split a script into complete statements (trigger bodies hold semicolons)."""
    statements, pending = [], ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip())
            pending = ""
    return [s for s in statements if s]


_NAMED = re.compile(r"CREATE (?:UNIQUE |VIRTUAL )?(TABLE|INDEX|TRIGGER) IF NOT EXISTS (\w+)")


@dataclass(frozen=True)
class _Reference:
    """Hermes's layout by name: each object's statement, and each table's columns as ADD COLUMN declares them."""

    tables: dict[str, str]
    columns: dict[str, dict[str, str]]
    indexes: dict[str, str]
    fts: dict[str, str]
    triggers: dict[str, tuple[str, str]]  # trigger -> (its FTS table, statement)


def _named(statement: str) -> tuple[str, str]:
    """The kind and name one of our own CREATE statements makes."""
    found = _NAMED.match(statement)
    if found is None:
        raise ValueError(f"not a named CREATE statement: {statement[:60]!r}")
    return found.group(1), found.group(2)


@functools.cache
def _reference() -> _Reference:
    kinds: dict[str, dict[str, str]] = {"TABLE": {}, "INDEX": {}, "TRIGGER": {}}
    for statement in _split(TABLES_SQL):
        kind, name = _named(statement)
        kinds[kind][name] = statement
    fts: dict[str, str] = {}
    triggers: dict[str, tuple[str, str]] = {}
    for table, script in FTS_TABLES.items():
        create, *rest = _split(script)
        fts[table] = create
        triggers.update((_named(t)[1], (table, t)) for t in rest)
    scratch = sqlite3.connect(":memory:")
    try:
        scratch.executescript(TABLES_SQL)
        columns = {}
        for table in kinds["TABLE"]:
            declared = {}
            for _, name, kind, notnull, default, pk in scratch.execute(f'PRAGMA table_info("{table}")'):
                declared[name] = " ".join(
                    part
                    for part in (
                        kind,
                        "NOT NULL" if notnull and not pk else "",
                        f"DEFAULT {default}" if default is not None else "",
                    )
                    if part
                )
            columns[table] = declared
    finally:
        scratch.close()
    return _Reference(kinds["TABLE"], columns, kinds["INDEX"], fts, triggers)


@dataclass(frozen=True)
class Layout:
    """What an archive lacks of Hermes's layout (``missing``), or what a completion did (``done``)."""

    tables: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()  # "table.column"
    indexes: tuple[str, ...] = ()
    fts: tuple[str, ...] = ()
    triggers: tuple[str, ...] = ()
    rebuilt: tuple[str, ...] = ()  # FTS tables refilled from messages (a completion only)
    skipped: tuple[str, ...] = ()  # what this SQLite cannot create, with the reason

    @property
    def complete(self) -> bool:
        return not (self.tables or self.columns or self.indexes or self.fts or self.triggers)

    def describe(self) -> list[str]:
        """One line per kind of object, for doctor and the CLI."""
        lines = [
            f"{label}: {', '.join(names)}"
            for label, names in (
                ("tables", self.tables),
                ("columns", self.columns),
                ("indexes", self.indexes),
                ("FTS tables", self.fts),
                ("FTS triggers", self.triggers),
                ("FTS tables rebuilt", self.rebuilt),
                ("not created", self.skipped),
            )
            if names
        ]
        return lines


def layout_gaps(conn: sqlite3.Connection) -> Layout:
    """What this archive lacks of Hermes 0.19.0's layout (read only, a few catalogue reads)."""
    ref = _reference()
    have: dict[str, set[str]] = {"table": set(), "index": set(), "trigger": set()}
    for kind, name in conn.execute("SELECT type, name FROM sqlite_master"):
        have.setdefault(kind, set()).add(name)
    columns = []
    for table, declared in ref.columns.items():
        if table in have["table"]:
            present = {row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')}
            columns += [f"{table}.{name}" for name in declared if name not in present]
    # What cannot be created here is reported, never retried on every open.
    fts = [t for t in ref.fts if t not in have["table"]]
    unavailable = [t for t in fts if not _can_create(conn, t)]
    skipped = [f"{t} (this SQLite lacks its FTS5 tokenizer)" for t in unavailable]
    indexes = [i for i in ref.indexes if i not in have["index"]]
    if (
        _UNIQUE_TITLES in indexes
        and "sessions" in have["table"]
        and conn.execute(
            "SELECT 1 FROM sessions WHERE title IS NOT NULL GROUP BY title HAVING count(*) > 1 LIMIT 1"
        ).fetchone()
    ):
        indexes.remove(_UNIQUE_TITLES)
        skipped.append(
            f"{_UNIQUE_TITLES} (sessions share a title; Hermes keeps it on the newest when it opens the file)"
        )
    return Layout(
        tables=tuple(t for t in ref.tables if t not in have["table"]),
        columns=tuple(columns),
        indexes=tuple(indexes),
        fts=tuple(t for t in fts if t not in unavailable),
        triggers=tuple(t for t in ref.triggers if t not in have["trigger"] and ref.triggers[t][0] not in unavailable),
        skipped=tuple(skipped),
    )


def _can_create(conn: sqlite3.Connection, table: str) -> bool:
    """Whether this SQLite has the FTS5 module and tokenizer ``table`` needs (a probe in the temp schema)."""
    probe = _reference().fts[table].replace(f"IF NOT EXISTS {table}", "temp.workbench_fts_probe", 1)
    try:
        conn.execute(probe)
    except sqlite3.OperationalError:
        return False
    conn.execute("DROP TABLE temp.workbench_fts_probe")
    return True


def schema_version(conn: sqlite3.Connection) -> int | None:
    try:
        row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
    except sqlite3.OperationalError:
        return None
    return row[0] if row else None


def completable(conn: sqlite3.Connection) -> bool:
    """Only an archive of our schema version is completed; Hermes migrates other versions its own way."""
    return schema_version(conn) == SCHEMA_VERSION


def _has_schema(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'sessions'").fetchone() is not None


def create_schema(conn: sqlite3.Connection) -> bool:
    """Create Hermes's complete layout if the database has none; False when it is already there."""
    if _has_schema(conn):
        return False
    with write_transaction(conn):
        if _has_schema(conn):
            return False
        _apply(conn, layout_gaps(conn), None)
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
    return True


def _apply(conn: sqlite3.Connection, gaps: Layout, progress: Progress | None) -> Layout:
    """Inside a write transaction: create what ``gaps`` lists; an FTS table that gains a trigger is refilled."""
    ref = _reference()
    for table in gaps.tables:
        conn.execute(ref.tables[table])
    for column in gaps.columns:
        table, name = column.split(".", 1)
        conn.execute(f'ALTER TABLE "{table}" ADD COLUMN "{name}" {ref.columns[table][name]}')
    for index in gaps.indexes:
        conn.execute(ref.indexes[index])
    stale = []
    for table, create in ref.fts.items():
        missing = [name for name in gaps.triggers if ref.triggers[name][0] == table]
        if table not in gaps.fts and not missing:
            continue
        conn.execute(create)
        for name in missing:
            conn.execute(ref.triggers[name][1])
        stale.append(table)
    for table in stale:
        refill(conn, table, progress)
    return dataclasses.replace(gaps, rebuilt=tuple(stale))


def refill(conn: sqlite3.Connection, table: str, progress: Progress | None = None) -> int:
    """Inside a write transaction: rebuild one FTS table from every message, in chunks that report progress.

    Dropping and recreating the table is far quicker than deleting its rows one by one;
    the triggers name the table, so they keep working on the new one.
    """
    conn.execute(f"DROP TABLE IF EXISTS {table}")
    conn.execute(_reference().fts[table])
    low, top = conn.execute("SELECT coalesce(min(id), 1) - 1, coalesce(max(id), 0) FROM messages").fetchone()
    total = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
    sql = (
        f"INSERT INTO {table}(rowid, content) SELECT id, {INDEXED_TEXT.format(p='')} FROM messages "
        "WHERE id > ? AND id <= ?"
    )
    done = 0
    while low < top:
        done += conn.execute(sql, (low, low + BACKFILL_CHUNK)).rowcount
        low += BACKFILL_CHUNK
        if progress:
            progress(f"indexing {table}", done, total)
    return done


def bounds_sql(tables: Iterable[str]) -> str:
    """One cheap statement: the first and last message id, then each FTS table's first and last rowid."""
    parts = ["(SELECT min(id) FROM messages)", "(SELECT max(id) FROM messages)"]
    for table in tables:
        parts += [
            f"(SELECT rowid FROM {table} ORDER BY rowid LIMIT 1)",
            f"(SELECT rowid FROM {table} ORDER BY rowid DESC LIMIT 1)",
        ]
    return "SELECT " + ", ".join(parts)


def stale_tables(conn: sqlite3.Connection, tables: tuple[str, ...], sql: str | None = None) -> list[str]:
    """FTS tables whose first or last row is not the first or last message's (a wiped or lagging index).

    Triggers keep both ends equal; a rebuild that another program runs in separate
    statements, or a missing trigger, shows at one end. ``sql`` is ``bounds_sql(tables)``.
    """
    row = tuple(conn.execute(sql or bounds_sql(tables)).fetchone())
    return [table for i, table in enumerate(tables) if row[2 + 2 * i : 4 + 2 * i] != row[0:2]]


def repair(conn: sqlite3.Connection, progress: Progress | None = None, *, recount: bool = False) -> Layout:
    """Inside a write transaction: complete the layout and refill every FTS table that is out of step.

    Out of step means its ends differ from the messages table's, or (``recount``, what
    doctor asks for) its row count does.
    """
    done = _apply(conn, layout_gaps(conn), progress)
    present = tuple(t for t in FTS_TABLES if t not in done.rebuilt and _usable(conn, t))
    stale = stale_tables(conn, present)
    if recount:
        messages = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
        stale += [t for t in present if t not in stale and fts_rows(conn, t) != messages]
    for table in stale:
        refill(conn, table, progress)
    return dataclasses.replace(done, rebuilt=done.rebuilt + tuple(stale))


def fts_rows(conn: sqlite3.Connection, table: str) -> int:
    return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def inspect(conn: sqlite3.Connection, path: Path) -> Capabilities:
    """Read what this database holds; refuse a file that is not a session archive."""
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
        if not {"sessions", "messages"} <= names:
            raise WorkbenchError(
                f"{path} is an SQLite database but not a session archive (no sessions/messages tables). "
                "It was not modified; point --home at a Hermes home or move the file aside.",
                path=str(path),
            )
        session_cols = frozenset(r[1] for r in conn.execute("PRAGMA table_info(sessions)"))
        message_cols = frozenset(r[1] for r in conn.execute("PRAGMA table_info(messages)"))
        version = schema_version(conn) if "schema_version" in names else None
        fts = "messages_fts" in names and _usable(conn, "messages_fts")
        trigram = "messages_fts_trigram" in names and _usable(conn, "messages_fts_trigram")
        (table_sql,) = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'messages'"
        ).fetchone()
    except sqlite3.DatabaseError as exc:
        raise _fail(path, exc) from exc
    rising = re.search(r"\bid\s+INTEGER\s+PRIMARY\s+KEY\s+AUTOINCREMENT\b", table_sql or "", re.IGNORECASE) is not None
    return Capabilities(version, session_cols, message_cols, fts, trigram, frozenset(names), rising)


def _usable(conn: sqlite3.Connection, table: str) -> bool:
    """An FTS table is usable when this SQLite has its module and tokenizer."""
    try:
        conn.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH '\"probe\"' LIMIT 0").fetchall()
        return True
    except sqlite3.OperationalError:
        return False


def check_integrity(conn: sqlite3.Connection, path: Path) -> None:
    """A cheap read that fails on a file that is not SQLite (never writes)."""
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise _fail(path, exc) from exc
