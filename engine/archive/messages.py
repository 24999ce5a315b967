"""Message rows: append with counters, live and archived loads, windows, compaction, rewind."""

from __future__ import annotations

import json
from collections.abc import Iterable
from operator import itemgetter
from typing import Any

from ..errors import WorkbenchError
from ..events import MessageStored, SessionChanged
from ..textsafety import quoted
from ..values import count_value, number_value, text_value
from . import merges
from .core import ArchiveCore, changes_archive
from .models import Message, decode_content, encode_content, parse_json

_FIELDS = ("role", "content", "tool_calls", "tool_name", "tool_call_id", "timestamp", "token_count", "finish_reason")
_FIELD_SET = frozenset(_FIELDS)
_ROWS_PER_INSERT = 200  # well under SQLite's limit of bound parameters per statement
_REPAIRS = 2  # index repairs one append may run before it writes regardless


def _tool_calls_json(tool_calls: Any) -> str | None:
    if tool_calls is None or tool_calls == []:
        return None
    if isinstance(tool_calls, str):
        return tool_calls
    return json.dumps(tool_calls, ensure_ascii=False)  # CJK in arguments stays searchable


def _call_count(role: str, tool_calls: Any) -> int:
    """Tool calls an assistant message makes (tool results count none, a non-list counts one)."""
    if role == "tool" or not tool_calls:
        return 0
    parsed = parse_json(tool_calls, tool_calls) if isinstance(tool_calls, str) else tool_calls
    return len(parsed) if isinstance(parsed, list) else 1


class MessagesMixin(ArchiveCore):
    def append_message(
        self,
        session_id: str,
        role: str,
        content: Any,
        *,
        tool_calls: list | None = None,
        tool_name: str | None = None,
        tool_call_id: str | None = None,
        timestamp: float | None = None,
        token_count: int | None = None,
        finish_reason: str | None = None,
    ) -> int:
        """Store one message at the end of the session; returns its id."""
        return self.append_messages(
            session_id,
            [
                {
                    "role": role,
                    "content": content,
                    "tool_calls": tool_calls,
                    "tool_name": tool_name,
                    "tool_call_id": tool_call_id,
                    "timestamp": timestamp,
                    "token_count": token_count,
                    "finish_reason": finish_reason,
                }
            ],
        )[0]

    def append_messages(self, session_id: str, messages: Iterable[dict[str, Any]]) -> list[int]:
        """Store a turn's messages in one transaction, in order; returns their ids.

        Per turn, not per message: one counter update (which also proves the session
        exists), one multi-row INSERT per ``_ROWS_PER_INSERT`` messages, and
        one ``MessageStored`` event after the commit. FTS5 merges only the small
        levels of its indexes in this transaction, in bounded steps (``merges``).
        """
        rows = [self._message_values(m) for m in messages]
        if not rows:
            return []
        calls = sum(r["calls"] for r in rows)
        for attempt in range(_REPAIRS + 1):
            with self._write() as conn:
                tables, sql = self._bounds  # (once the connection is had: another file's, looked at)
                checks = self.turn_checks(conn)
                whole = attempt == _REPAIRS or checks.whole_fts(conn, tables, sql)
                if whole:
                    self._claim_session(conn, session_id, len(rows), calls)
                    with merges.turn_merges(conn, checks.deep_fts(conn, tables), self._merge_owed):
                        ids = self._insert_rows(conn, session_id, rows)
            if whole:
                checks.committed()
                break
            self._complete(conn, "repair-index")  # in a transaction of its own, journaled, then write
        self._publish(
            MessageStored(session_id=session_id, message_id=ids[-1], message_ids=tuple(ids), role=rows[-1]["role"])
        )
        return ids

    def holds(self, session_id: str, message: dict[str, Any]) -> bool:
        """Whether the session holds ``message`` already (the same role, time and content): a store
        replayed after its process was killed finds the rows it appended (one append is all or none)."""
        values = self._message_values(message)
        found = self.conn().execute(
            "SELECT 1 FROM messages WHERE session_id = ? AND timestamp = ? AND role = ? AND content IS ? LIMIT 1",
            (session_id, values["timestamp"], values["role"], values["content"]),
        )
        return found.fetchone() is not None

    def said_after(self, session_id: str, at: float) -> bool:
        """Whether the session holds a message said after ``at`` (another process went on with it)."""
        found = self.conn().execute(
            "SELECT 1 FROM messages WHERE session_id = ? AND timestamp > ? LIMIT 1", (session_id, at)
        )
        return found.fetchone() is not None

    def _insert_rows(self, conn, session_id: str, rows: list[dict[str, Any]]) -> list[int]:
        """Inside a write: ``INSERT ... VALUES (...), (...)``, a few hundred rows a statement.

        The statement text depends only on the row count, so SQLite's statement cache
        keeps it prepared from turn to turn. Their ids: in Hermes's layout (``rising_ids``)
        the last one's and those before it; else each one's, from ``RETURNING id``.
        """
        caps = self.caps
        columns = [c for c in _FIELDS if caps.has("messages", c)]
        row = f"(?, {', '.join('?' * len(columns))})"
        returning = "" if caps.rising_ids else " RETURNING id"
        # a row's values in column order, in C (itemgetter of one key gives the value, not a tuple)
        fields = itemgetter(*columns) if len(columns) > 1 else lambda r: (r[columns[0]],)
        ids: list[int] = []
        for start in range(0, len(rows), _ROWS_PER_INSERT):
            chunk = rows[start : start + _ROWS_PER_INSERT]
            values = [v for r in chunk for v in (session_id, *fields(r))]
            placeholders = ", ".join([row] * len(chunk))
            sql = f"INSERT INTO messages (session_id, {', '.join(columns)}) VALUES {placeholders}{returning}"
            cursor = conn.execute(sql, values)
            if returning:
                ids += sorted(r[0] for r in cursor)
            else:
                last = cursor.lastrowid
                ids += range(last - len(chunk) + 1, last + 1)
        return ids

    def _claim_session(self, conn, session_id: str, messages: int, calls: int) -> None:
        """Inside the write: add to the counters, refusing a session that does not exist."""
        if (
            not self._set_counters(session_id, messages, calls)
            and not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
        ):
            raise WorkbenchError(
                f"No session with id {quoted(session_id)}. List sessions with `workbench sessions list`.",
                session_id=session_id,
            )

    def _set_counters(self, session_id: str, messages: int, calls: int, absolute: bool = False) -> bool:
        """Inside a write transaction: add to (or set) the counters this schema has; True when the row exists."""
        sets, args, caps = [], [], self.caps
        for column, value in (("message_count", messages), ("tool_call_count", calls)):
            if caps.has("sessions", column):
                sets.append(f"{column} = ?" if absolute else f"{column} = COALESCE({column}, 0) + ?")
                args.append(value)
        if not sets:
            return False
        return (
            self.conn().execute(f"UPDATE sessions SET {', '.join(sets)} WHERE id = ?", (*args, session_id)).rowcount > 0
        )

    def _message_values(self, message: dict[str, Any]) -> dict[str, Any]:
        unknown = message.keys() - _FIELD_SET
        if unknown:
            raise WorkbenchError(
                f"Unknown message field(s): {', '.join(sorted(unknown))}; expected {', '.join(_FIELDS)}."
            )
        role = message.get("role")
        if not isinstance(role, str) or not role.strip():
            raise WorkbenchError("A message needs a role (user, assistant, tool or system).")
        timestamp = message.get("timestamp")
        try:
            timestamp = float(timestamp) if timestamp is not None else self.clock.now()
        except (TypeError, ValueError):
            timestamp = self.clock.now()
        tool_calls = message.get("tool_calls")
        return {
            "role": role,
            "content": encode_content(message.get("content")),
            "calls": _call_count(role, tool_calls),
            "tool_calls": _tool_calls_json(tool_calls),
            "tool_name": message.get("tool_name"),
            "tool_call_id": message.get("tool_call_id"),
            "timestamp": timestamp,
            "token_count": message.get("token_count"),
            "finish_reason": message.get("finish_reason"),
        }

    @staticmethod
    def _message(row) -> Message:
        keys = row.keys()
        tool_calls = parse_json(text_value(row["tool_calls"]), []) if row["tool_calls"] else None
        token_count = number_value(row["token_count"]) if "token_count" in keys else None
        return Message(
            id=row["id"],
            session_id=text_value(row["session_id"]) or "",
            role=text_value(row["role"]) or "",
            content=decode_content(row["content"]),
            timestamp=number_value(row["timestamp"]) or 0.0,
            tool_calls=tool_calls if tool_calls is None or isinstance(tool_calls, list) else [tool_calls],
            tool_name=text_value(row["tool_name"]),
            tool_call_id=text_value(row["tool_call_id"]),
            token_count=count_value(token_count) if token_count is not None else None,
            finish_reason=text_value(row["finish_reason"]) if "finish_reason" in keys else None,
            active=bool(row["active"]) if "active" in keys and row["active"] is not None else True,
            compacted=bool(row["compacted"]) if "compacted" in keys else False,
        )

    def messages(
        self,
        session_id: str,
        include_archived: bool = False,
        limit: int | None = None,
        offset: int = 0,
        after_id: int = 0,
    ) -> list[Message]:
        """A session's messages in insertion order (those after ``after_id``); live rows only unless
        ``include_archived``."""
        where = "m.session_id = ? AND m.id > ?" + ("" if include_archived else f" AND {self._live()}")
        rows = self.conn().execute(
            f"SELECT * FROM messages m WHERE {where} ORDER BY m.id LIMIT ? OFFSET ?",
            (session_id, after_id, -1 if limit is None else max(0, limit), max(0, offset)),
        )
        return [self._message(r) for r in rows]

    def tool_messages(self, session_id: str, tool: str) -> list[Message]:
        """A session's messages that may call ``tool`` (their tool calls name it) and every tool
        result, in order: what a session's own record of its writes is read from, without
        decoding the rest."""
        rows = self.conn().execute(
            "SELECT * FROM messages WHERE session_id = ? AND (role = 'tool' OR (tool_calls IS NOT NULL "
            "AND instr(tool_calls, ?) > 0)) ORDER BY id",
            (session_id, f'"{tool}"'),
        )
        return [self._message(r) for r in rows]

    def recent_calls(self, tool: str, after: float, newest: int, most: int) -> list[Message]:
        """Of the archive's ``newest`` messages, the newest ``most`` that call ``tool``, stamped after
        ``after``, and every tool result after the first of them, in order: a bounded read however large
        the archive is (the rowid range is the only index this needs)."""
        conn = self.conn()
        (top,) = conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()
        calls = conn.execute(
            "SELECT * FROM messages WHERE id > ? AND role = 'assistant' AND tool_calls IS NOT NULL "
            "AND instr(tool_calls, ?) > 0 AND timestamp > ? ORDER BY id DESC LIMIT ?",
            (top - newest, f'"{tool}"', after, most),
        ).fetchall()
        if not calls:
            return []
        results = conn.execute("SELECT * FROM messages WHERE id > ? AND role = 'tool'", (calls[-1]["id"],))
        return sorted((self._message(r) for r in [*calls, *results]), key=lambda m: m.id)

    def newest_result(self, tool: str, newest: int) -> int:
        """The id of the newest result of ``tool`` (or of a tool naming none, as an older writer may store
        it) among the archive's ``newest`` messages, 0 when none: a bounded read on the rowid range."""
        conn = self.conn()
        (top,) = conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()
        (found,) = conn.execute(
            "SELECT coalesce(max(id), 0) FROM messages WHERE id > ? AND role = 'tool' AND coalesce(tool_name, ?) = ?",
            (top - newest, tool, tool),
        ).fetchone()
        return found

    def live_message_count(self, session_id: str, up_to: int | None = None) -> int:
        """How many live messages the session holds (with ids up to ``up_to``, when given)."""
        bound = "" if up_to is None else " AND m.id <= ?"
        return (
            self.conn()
            .execute(
                f"SELECT count(*) FROM messages m WHERE m.session_id = ?{bound} AND {self._live()}",
                (session_id,) if up_to is None else (session_id, up_to),
            )
            .fetchone()[0]
        )

    def message(self, message_id: int) -> Message | None:
        row = self.conn().execute("SELECT * FROM messages WHERE id = ?", (message_id,)).fetchone()
        return self._message(row) if row else None

    def messages_around(self, message_id: int, window: int = 5) -> list[Message]:
        """Up to ``window`` visible messages before and after ``message_id`` in its session, and the anchor."""
        return self.message_window(message_id, window)[0]

    def message_window(self, message_id: int, window: int = 5) -> tuple[list[Message], int, int]:
        """(window, how many visible messages precede it, how many follow it)."""
        anchor = self.message(message_id)
        if anchor is None:
            return [], 0, 0
        window = max(0, int(window))
        visible, conn = self._visible(), self.conn()
        before = conn.execute(
            f"SELECT * FROM messages m WHERE m.session_id = ? AND m.id < ? AND {visible} ORDER BY m.id DESC LIMIT ?",
            (anchor.session_id, message_id, window),
        ).fetchall()
        after = conn.execute(
            f"SELECT * FROM messages m WHERE m.session_id = ? AND m.id > ? AND {visible} ORDER BY m.id LIMIT ?",
            (anchor.session_id, message_id, window),
        ).fetchall()
        n_before = conn.execute(
            f"SELECT count(*) FROM messages m WHERE m.session_id = ? AND m.id < ? AND {visible}",
            (anchor.session_id, message_id),
        ).fetchone()[0]
        n_after = conn.execute(
            f"SELECT count(*) FROM messages m WHERE m.session_id = ? AND m.id > ? AND {visible}",
            (anchor.session_id, message_id),
        ).fetchone()[0]
        shown = [self._message(r) for r in reversed(before)] + [anchor] + [self._message(r) for r in after]
        return shown, n_before - len(before), n_after - len(after)

    @changes_archive
    def compact_in_place(
        self,
        session_id: str,
        keep_head: int,
        keep_tail: int,
        summary: str,
        *,
        summary_role: str = "user",
        actor: str = "agent",
    ) -> int:
        """Archive every live message and keep head + summary + tail as the new live rows.

        Archived rows stay searchable and exportable; loads see only the new live rows.
        Returns the new live message count.
        """
        self._require("messages", "active", "compacted")
        if keep_head < 0 or keep_tail < 0:
            raise WorkbenchError("keep_head and keep_tail must be zero or more.")
        live = self.messages(session_id)
        if keep_head + keep_tail >= len(live):
            raise WorkbenchError(
                f"Nothing to compact: the session has {len(live)} live messages and "
                f"{keep_head} + {keep_tail} would be kept."
            )
        kept = live[:keep_head] + [None] + (live[len(live) - keep_tail :] if keep_tail else [])
        with self.journaled(
            "compact",
            session_id,
            actor=actor,
            detail={"archived": len(live), "keep_head": keep_head, "keep_tail": keep_tail, "last_live_id": live[-1].id},
        ) as entry:
            with self._write() as conn:
                conn.execute(
                    "UPDATE messages SET active = 0, compacted = 1 WHERE session_id = ? AND active = 1", (session_id,)
                )
                rows, last = [], 0.0
                for message in kept:
                    values = (
                        self._message_values({"role": summary_role, "content": summary})
                        if message is None
                        else self._message_values({f: getattr(message, f) for f in _FIELDS})
                    )
                    values["timestamp"] = last = max(values["timestamp"], last + 1e-6)
                    rows.append(values)
                self._insert_rows(conn, session_id, rows)
                calls = sum(r["calls"] for r in rows)
                self._set_counters(session_id, len(kept), calls, absolute=True)
        self._publish(SessionChanged(action="compacted", session_id=session_id, actor=actor, journal_id=entry.id))
        return len(kept)

    @changes_archive
    def rewind(self, session_id: str, to_message_id: int, *, actor: str = "user") -> int:
        """Undo from a user message on: it and every later live row become inactive (not archived)."""
        self._require("messages", "active")
        target = self.message(to_message_id)
        if target is None or target.session_id != session_id or target.role != "user" or not target.active:
            raise WorkbenchError(
                f"Message {to_message_id} is not a live user message of session {session_id}; rewind needs one."
            )
        with self.journaled("rewind", session_id, actor=actor, detail={"to_message_id": to_message_id}) as entry:
            with self._write() as conn:
                count = conn.execute(
                    "UPDATE messages SET active = 0 WHERE session_id = ? AND id >= ? AND active = 1",
                    (session_id, to_message_id),
                ).rowcount
                if self.caps.has("sessions", "rewind_count"):
                    conn.execute("UPDATE sessions SET rewind_count = rewind_count + 1 WHERE id = ?", (session_id,))
            entry.updates["detail"] = {"to_message_id": to_message_id, "rewound": count}
        self._publish(SessionChanged(action="rewound", session_id=session_id, actor=actor, journal_id=entry.id))
        return count
