"""The runner's own table in workbench.db: one row per model request.

Each row carries the fingerprint of the request's cacheable prefix (system prompt and
tool schemas), so anyone can check that a session kept its prefix byte-identical
(one distinct hash per session) and see where a rotation changed it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ..db import write_transaction

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runner_requests (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    session_id TEXT NOT NULL,
    purpose TEXT NOT NULL,
    model TEXT NOT NULL,
    prefix_hash TEXT NOT NULL,
    system_chars INTEGER NOT NULL,
    message_count INTEGER NOT NULL,
    estimated_tokens INTEGER NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    duration_ms REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_runner_requests_session ON runner_requests(session_id, id);
"""


@dataclass(frozen=True)
class RequestRecord:
    session_id: str
    purpose: str  # turn | review
    model: str
    prefix_hash: str
    system_chars: int
    message_count: int
    estimated_tokens: int
    prompt_tokens: int | None
    completion_tokens: int | None
    duration_ms: float


class RequestLog:
    """Buffers records and writes them in one transaction per ``flush`` (the runner flushes each turn's messages)."""

    def __init__(self, home):
        self.home = home
        self._ready = False
        self._pending: list[tuple] = []
        self._lock = threading.Lock()  # a background review records from its own thread

    def _conn(self):
        conn = self.home.journal.connection()
        if not self._ready:
            conn.executescript(_SCHEMA)
            self._ready = True
        return conn

    def record(self, rec: RequestRecord) -> None:
        with self._lock:
            self._pending.append(
                (
                    self.home.clock.now(),
                    rec.session_id,
                    rec.purpose,
                    rec.model,
                    rec.prefix_hash,
                    rec.system_chars,
                    rec.message_count,
                    rec.estimated_tokens,
                    rec.prompt_tokens,
                    rec.completion_tokens,
                    rec.duration_ms,
                )
            )

    def flush(self) -> None:
        with self._lock:
            rows, self._pending = self._pending, []
        if not rows:
            return
        conn = self._conn()
        with write_transaction(conn, self.home.read_only):
            conn.executemany(
                "INSERT INTO runner_requests (at, session_id, purpose, model, prefix_hash, system_chars, message_count,"
                " estimated_tokens, prompt_tokens, completion_tokens, duration_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                rows,
            )

    def prefix_hashes(self, session_id: str, purpose: str | None = None) -> list[str]:
        """The prefix hash of every request of a session, oldest first."""
        self.flush()
        sql = "SELECT prefix_hash FROM runner_requests WHERE session_id = ?"
        args: tuple = (session_id,)
        if purpose:
            sql += " AND purpose = ?"
            args += (purpose,)
        return [row[0] for row in self._conn().execute(sql + " ORDER BY id", args)]
