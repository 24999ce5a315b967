"""state.db: Hermes's schema (version 22), opened without reshaping anything Hermes owns.

A fresh archive gets Hermes's own tables, indexes, FTS5 tables and triggers, so Hermes
can open a home the workbench created. An existing database (any schema version) is
used as it is: we read which tables and columns are there and adapt our queries; we
never add, drop or alter anything in it. A file that is not a usable SQLite database
is refused with a clear error and left untouched.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

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
    compacted INTEGER NOT NULL DEFAULT 0
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
_INDEXED = "COALESCE(new.content,'') || ' ' || COALESCE(new.tool_name,'') || ' ' || COALESCE(new.tool_calls,'')"


def _fts_sql(table: str, tokenize: str = "") -> str:
    options = f", tokenize='{tokenize}'" if tokenize else ""
    return f"""
CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5(content{options});
CREATE TRIGGER IF NOT EXISTS {table}_insert AFTER INSERT ON messages BEGIN
  INSERT INTO {table}(rowid, content) VALUES (new.id, {_INDEXED});
END;
CREATE TRIGGER IF NOT EXISTS {table}_delete AFTER DELETE ON messages BEGIN
  DELETE FROM {table} WHERE rowid = old.id;
END;
CREATE TRIGGER IF NOT EXISTS {table}_update AFTER UPDATE ON messages BEGIN
  DELETE FROM {table} WHERE rowid = old.id;
  INSERT INTO {table}(rowid, content) VALUES (new.id, {_INDEXED});
END;
"""


FTS_SQL = _fts_sql("messages_fts")
TRIGRAM_SQL = _fts_sql("messages_fts_trigram", "trigram")
HERMES_DDL = TABLES_SQL + FTS_SQL + TRIGRAM_SQL


@dataclass(frozen=True)
class Capabilities:
    """What an opened state.db offers: its version, columns and search indexes."""

    version: int | None
    session_columns: frozenset[str]
    message_columns: frozenset[str]
    fts: bool
    trigram: bool
    tables: frozenset[str] = field(default_factory=frozenset)

    def has(self, table: str, column: str) -> bool:
        return column in (self.session_columns if table == "sessions" else self.message_columns)


def _fail(path: Path, exc: Exception) -> WorkbenchError:
    return WorkbenchError(
        f"{path} is not a usable session archive ({exc}). It was not modified. Move it aside to let the "
        "workbench start a new archive, or restore it from a backup.", path=str(path))


def _split(script: str) -> list[str]:
    """Split a script into complete statements (trigger bodies hold semicolons)."""
    statements, pending = [], ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip())
            pending = ""
    return [s for s in statements if s]


def create_schema(conn: sqlite3.Connection, trigram: bool = True) -> bool:
    """Create Hermes's schema if the database has none; False when it is already there.

    Without ``trigram`` Hermes's trigram table is left out (our bigram index answers CJK
    queries for a fraction of its cost); Hermes creates it and backfills it the first
    time it opens the database, as it does for any database missing FTS triggers.
    """
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'sessions'").fetchone():
        return False
    conn.execute("BEGIN IMMEDIATE")
    try:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'sessions'").fetchone():
            conn.execute("ROLLBACK")
            return False
        for statement in _split(HERMES_DDL if trigram else TABLES_SQL + FTS_SQL):
            conn.execute(statement)
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return True


def inspect(conn: sqlite3.Connection, path: Path) -> Capabilities:
    """Read what this database holds; refuse a file that is not a session archive."""
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
        if not {"sessions", "messages"} <= names:
            raise WorkbenchError(
                f"{path} is an SQLite database but not a session archive (no sessions/messages tables). "
                "It was not modified; point --home at a Hermes home or move the file aside.", path=str(path))
        session_cols = frozenset(r[1] for r in conn.execute("PRAGMA table_info(sessions)"))
        message_cols = frozenset(r[1] for r in conn.execute("PRAGMA table_info(messages)"))
        version = None
        if "schema_version" in names:
            row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
            version = row[0] if row else None
        fts = "messages_fts" in names and _usable(conn, "messages_fts")
        trigram = "messages_fts_trigram" in names and _usable(conn, "messages_fts_trigram")
    except sqlite3.DatabaseError as exc:
        raise _fail(path, exc)
    return Capabilities(version, session_cols, message_cols, fts, trigram, frozenset(names))


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
        raise _fail(path, exc)
