"""Memory writes the session archive records: an agent's own ``memory`` tool calls.

A real Hermes agent writes MEMORY.md / USER.md itself and never touches our journal,
but it stores each assistant message with its tool calls, and each tool result, in
state.db. So an entry that a successful ``memory`` add or replace (alone or inside a
batch) produced was written by that assistant message: that is its provenance when the
journal has none.

Arguments are decoded as JSON, never matched as text: Hermes stores tool calls with
``json.dumps`` (non-ASCII as ``\\uXXXX``), and the arguments inside are a JSON string of
their own. A call counts only when its tool result says it succeeded and was applied
(not staged for approval, not refused).

``ArchiveWrites`` finds those calls with the archive's word index (``memory`` is a
token of every such call) instead of reading every message, and keeps what it found
for as long as state.db is unchanged; when the file changes only newer rows are read.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable

from ..errors import WorkbenchError
from .format import TARGETS

if TYPE_CHECKING:
    from ..home import Home

log = logging.getLogger(__name__)

TOOL = "memory"
WRITING_ACTIONS = ("add", "replace")


@dataclass(frozen=True)
class ArchiveWrite:
    """One entry text an agent's memory tool call wrote, and where."""

    target: str
    text: str
    action: str  # "add" or "replace"
    session_id: str
    message_id: int  # the assistant message holding the call
    at: float


def _json(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return value
    if not isinstance(value, str):
        return None
    try:
        return json.loads(value)
    except ValueError:
        return None


def memory_calls(tool_calls: Any) -> list[tuple[int, str | None, dict]]:
    """(position, call id, decoded arguments) of each ``memory`` call in a message's tool calls.

    Accepts the stored JSON text or the decoded list, in both shapes Hermes stores:
    OpenAI's ``{id, type, function: {name, arguments}}`` and the flat ``{name, arguments}``.
    """
    calls = _json(tool_calls)
    found = []
    for position, call in enumerate(calls if isinstance(calls, list) else []):
        if not isinstance(call, dict):
            continue
        function = call.get("function") if isinstance(call.get("function"), dict) else call
        if function.get("name") != TOOL:
            continue
        arguments = _json(function.get("arguments"))
        if isinstance(arguments, dict):
            found.append((position, call.get("id") if isinstance(call.get("id"), str) else None, arguments))
    return found


def written_texts(arguments: dict) -> list[tuple[str, str, str]]:
    """(target, action, entry text) for each entry the call's arguments would write."""
    target = arguments.get("target") or "memory"
    if target not in TARGETS:
        return []
    operations = arguments.get("operations")
    ops = operations if isinstance(operations, list) and operations else [arguments]
    out = []
    for op in ops:
        if not isinstance(op, dict):
            continue
        action, content = op.get("action"), op.get("content")
        if action in WRITING_ACTIONS and isinstance(content, str) and content.strip():
            out.append((target, action, content.strip()))
    return out


def applied(result: Any) -> bool:
    """Whether a memory tool result says the write landed (not refused, not only staged)."""
    data = _json(result)
    return isinstance(data, dict) and data.get("success") is True and not data.get("staged")


def writes_in(messages: Iterable[Any]) -> dict[int, list[ArchiveWrite]]:
    """The applied memory writes of a run of archive messages (one session's), by message id.

    For a transcript: each assistant message's calls matched with the tool results that
    follow it (by call id, or by position when the stored call has none).
    """
    rows = list(messages)
    out: dict[int, list[ArchiveWrite]] = {}
    for i, message in enumerate(rows):
        if message.role != "assistant" or not message.tool_calls:
            continue
        results = [m for m in rows[i + 1:] if m.role == "tool"]
        for position, call_id, arguments in memory_calls(message.tool_calls):
            by_id = [m for m in results if call_id is not None and m.tool_call_id == call_id]
            result = by_id[0] if by_id else (results[position] if call_id is None and position < len(results) else None)
            if result is not None and applied(result.content):
                out.setdefault(message.id, []).extend(
                    ArchiveWrite(t, text, action, message.session_id, message.id, message.timestamp)
                    for t, action, text in written_texts(arguments))
    return out


@dataclass
class _Call:
    session_id: str
    message_id: int
    at: float
    position: int
    call_id: str | None
    writes: list[tuple[str, str, str]]


class ArchiveWrites:
    """The memory writes in one home's state.db, indexed by (target, entry text)."""

    def __init__(self, home: "Home"):
        self.home = home
        self._lock = threading.Lock()
        self._version: tuple | None = None
        self._high = 0  # highest message id read so far
        self._by_text: dict[tuple[str, str], list[ArchiveWrite]] = {}
        self._waiting: list[_Call] = []  # calls whose tool result is not stored yet

    def newest(self, target: str, text: str, after: float | None = None) -> ArchiveWrite | None:
        """The newest applied write of exactly ``text`` (later than ``after``) whose message still exists.

        None as well when state.db is missing or unusable: provenance then falls back, it never fails.
        """
        with self._lock:
            try:
                if not self._refresh():
                    return None
                candidates = [w for w in self._by_text.get((target, text), ()) if after is None or w.at > after]
                conn = self.home.archive.conn()
                for write in reversed(candidates):
                    if conn.execute("SELECT 1 FROM messages WHERE id = ?", (write.message_id,)).fetchone():
                        return write
            except (WorkbenchError, sqlite3.Error) as exc:
                log.warning("memory provenance cannot read %s: %s", self.home.state_db_path, exc)
        return None

    # -- reading the archive ----------------------------------------------------------
    def _stamp(self) -> tuple:
        stamps = []
        for suffix in ("", "-wal"):
            try:
                info = self.home.state_db_path.with_name(self.home.state_db_path.name + suffix).stat()
                stamps.append((info.st_ino, info.st_size, info.st_mtime_ns))
            except OSError:
                stamps.append(None)
        return tuple(stamps)

    def _refresh(self) -> bool:
        """Read what changed since the last look (lock held); False when there is no archive."""
        version = self._stamp()
        if version[0] is None:
            return False
        if version == self._version:
            return True
        conn = self.home.archive.conn()
        top = conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0]
        if top < self._high:  # rows were taken away from the end (a rewind, a restored file): start over
            self._high, self._by_text, self._waiting = 0, {}, []
        calls = self._waiting + [call for row in self._candidates(conn) for call in self._calls_of(row)]
        self._waiting = []
        for call in calls:
            result = self._result_of(conn, call)
            if result is None:
                self._waiting.append(call)
            elif applied(result):
                for target, action, text in call.writes:
                    self._by_text.setdefault((target, text), []).append(
                        ArchiveWrite(target, text, action, call.session_id, call.message_id, call.at))
        for writes in self._by_text.values():
            writes.sort(key=lambda w: w.message_id)
        self._high, self._version = max(self._high, top), version
        return True

    def _candidates(self, conn: sqlite3.Connection) -> list[sqlite3.Row]:
        """Assistant rows newer than the last look whose tool calls name the memory tool."""
        columns = "m.id, m.session_id, m.tool_calls, m.timestamp"
        where = "m.id > ? AND m.role = 'assistant' AND m.tool_calls IS NOT NULL"
        if self.home.archive.caps.fts:
            sql = (f"SELECT {columns} FROM messages_fts f JOIN messages m ON m.id = f.rowid "
                   f"WHERE messages_fts MATCH '\"{TOOL}\"' AND f.rowid > ? AND {where} ORDER BY m.id")
            return conn.execute(sql, (self._high, self._high)).fetchall()
        sql = f"SELECT {columns} FROM messages m WHERE {where} AND instr(m.tool_calls, '{TOOL}') > 0 ORDER BY m.id"
        return conn.execute(sql, (self._high,)).fetchall()

    @staticmethod
    def _calls_of(row: sqlite3.Row) -> list[_Call]:
        calls = []
        for position, call_id, arguments in memory_calls(row["tool_calls"]):
            writes = written_texts(arguments)
            if writes:
                calls.append(_Call(row["session_id"], row["id"], row["timestamp"] or 0.0, position, call_id, writes))
        return calls

    @staticmethod
    def _result_of(conn: sqlite3.Connection, call: _Call) -> str | None:
        """The stored tool result of ``call`` (its content), or None while there is none."""
        if call.call_id is not None:
            row = conn.execute("SELECT content FROM messages WHERE session_id = ? AND id > ? AND role = 'tool' "
                               "AND tool_call_id = ? ORDER BY id LIMIT 1",
                               (call.session_id, call.message_id, call.call_id)).fetchone()
        else:
            row = conn.execute("SELECT content FROM messages WHERE session_id = ? AND id > ? AND role = 'tool' "
                               "ORDER BY id LIMIT 1 OFFSET ?",
                               (call.session_id, call.message_id, call.position)).fetchone()
        return None if row is None else (row[0] or "")
