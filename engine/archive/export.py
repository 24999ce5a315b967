"""Export of one session, or a whole compression lineage, as JSON or Markdown.

The JSON is a faithful copy of ``state.db``'s rows, shaped as Hermes's own
``SessionDB.export_session`` shapes them, so that its ``import_sessions`` reads
it back: every column the file's ``sessions`` and ``messages`` tables have,
whatever their schema version, with the value as stored (numbers stay numbers,
times epoch seconds at full precision). As in Hermes's export, ``content`` is
decoded from its JSON sentinel and ``tool_calls`` parsed; ``messages`` holds the
live rows (what Hermes's import stores, each as live), and the rows compaction
archived or a rewind undid follow in ``inactive_messages``, with their
``active`` and ``compacted`` columns. Times are added as ISO text beside the
numbers (``started_at_iso``, ``ended_at_iso``, ``timestamp_iso``).
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Callable
from typing import Any

from ..errors import WorkbenchError
from ..textsafety import json_text, quoted, readable_json, visible
from ..values import json_value, number_value, text_value
from .lineage import LineageMixin
from .messages import MessagesMixin
from .models import Message, Session, decode_content, iso

FORMATS = ("json", "markdown")


class ExportMixin(MessagesMixin, LineageMixin):
    heading: Callable[[Session], str | None]  # SessionsMixin's (the Archive has both): what a session is called

    def export_session(self, session_id: str, fmt: str = "json") -> str:
        """The session's row and every message's (archived and rewound ones included, apart in JSON)."""
        _check_format(fmt)
        with self.one_snapshot():
            return _render([self._segment(session_id, fmt)], fmt)

    def export_lineage(self, session_id: str, fmt: str = "json") -> str:
        """Every session of the chain from the root to the compression tip, in order."""
        _check_format(fmt)
        with self.one_snapshot():
            chain = self.lineage(session_id).chain
            return _render([self._segment(sid, fmt) for sid in chain], fmt)

    def _segment(self, session_id: str, fmt: str) -> tuple[Any, Any]:
        """One session for ``_render``: its model and messages for Markdown, its raw rows for JSON."""
        row = self._session_row_or_fail(session_id)
        if fmt != "json":  # (titled as `sessions show` heads it: an untitled one by its first user message)
            session = self._session(row)
            return (session, self.heading(session)), self.messages(session_id, include_archived=True)
        rows = self.conn().execute("SELECT * FROM messages WHERE session_id = ? ORDER BY id", (session_id,)).fetchall()
        return row, rows


def _check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise WorkbenchError(f"Unknown export format {quoted(fmt)}; use one of {', '.join(FORMATS)}.")


def _render(segments: list[tuple[Any, Any]], fmt: str) -> str:
    """The document, ending in a newline in either format: the bytes stdout gets are those a file gets."""
    if fmt == "json":
        docs = [_session_doc(s, rows) for s, rows in segments]
        # Exact text, with what a terminal would act on or hide written as JSON escapes: the same
        # bytes in a file and on stdout, where the text printer then has nothing to show as a symbol.
        if len(docs) == 1:
            return json_text(docs[0], indent=2) + "\n"
        return (
            json_text(
                {
                    "root_id": docs[0]["id"],
                    "tip_id": docs[-1]["id"],
                    "segments": docs,
                    "message_count": sum(len(d["messages"]) for d in docs),
                },
                indent=2,
            )
            + "\n"
        )
    # Markdown is for a person to read, wherever it is read (`cat notes.md`): what would drive a
    # terminal shows as a symbol (`␛`, `<U+202E>`), in a file as on stdout.
    return visible("\n\n".join(_markdown(session, heading, msgs) for (session, heading), msgs in segments)) + "\n"


def _stored(value: Any) -> Any:
    """A column's value as JSON can hold it: text (bytes decoded), an integer or a finite float, or null."""
    if isinstance(value, bytes):
        return text_value(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None  # (SQLite keeps an infinity; JSON has none)
    return value


def _columns(row: sqlite3.Row) -> dict[str, Any]:
    return {key: _stored(row[key]) for key in row.keys()}


def _session_doc(row: sqlite3.Row, rows: list[sqlite3.Row]) -> dict[str, Any]:
    doc = _columns(row)
    for name in ("started_at", "ended_at"):
        if name in doc:
            doc[f"{name}_iso"] = iso(number_value(doc[name]))
    messages = [_message_doc(r) for r in rows]
    doc["messages"] = [m for m in messages if m.get("active", 1) == 1]  # (live as Hermes reads it: active = 1)
    doc["inactive_messages"] = [m for m in messages if m.get("active", 1) != 1]
    return doc


def _message_doc(row: sqlite3.Row) -> dict[str, Any]:
    doc = _columns(row)
    if "content" in doc:
        doc["content"] = decode_content(doc["content"])
    if doc.get("tool_calls"):  # (its JSON parsed, as Hermes's export does; the text itself when it is not JSON)
        doc["tool_calls"] = json_value(doc["tool_calls"], doc["tool_calls"])
    if "timestamp" in doc:
        doc["timestamp_iso"] = iso(number_value(doc["timestamp"]))
    return doc


def _markdown(session: Session, heading: str | None, messages: list[Message]) -> str:
    lines = [
        f"# {heading or session.id}",
        "",
        f"- id: `{session.id}`",
        f"- source: {session.source}",
        f"- model: {session.model or 'unknown'}",
        f"- started: {iso(session.started_at)}",
        f"- ended: {iso(session.ended_at) or 'open'}" + (f" ({session.end_reason})" if session.end_reason else ""),
    ]
    if session.parent_session_id:
        lines.append(f"- parent: `{session.parent_session_id}`")
    for message in messages:
        flag = "" if message.active else (" (archived by compaction)" if message.compacted else " (rewound)")
        head = f"## {message.role}" + (f": {message.tool_name}" if message.tool_name else "")
        lines += ["", f"{head}{flag} · #{message.id} · {iso(message.timestamp)}", ""]
        if message.text:
            # a tool's result is the tool's output, not prose: fenced, so its text cannot read as headings
            lines += fenced("tool-result", message.text) if message.role == "tool" else block_quote(message.text)
        for call in message.tool_calls or []:
            nested = call.get("function") if isinstance(call, dict) else None
            function = nested if isinstance(nested, dict) else call if isinstance(call, dict) else {}
            arguments = function.get("arguments", "")
            shown = readable_json(arguments) or str(arguments)  # (decoded: `ユーザー`, not `\u30e6\u30fc`)
            lines += ["", *fenced(f"tool-call {function.get('name', '?')}", shown)]
    return "\n".join(lines)


def block_quote(text: str) -> list[str]:
    """A message's text as a block quote, every line of it (blank ones too, so no line leaves the quote):
    its own Markdown still renders, inside the quote, but a line `## assistant · #9` or `---` in it can
    never read as one of the export's message headings or rules."""
    return [f"> {line}" if line else ">" for line in text.split("\n")]


def fenced(info: str, text: str) -> list[str]:
    """``text`` as a Markdown code block whose fence is longer than any run of backticks in it, so
    nothing inside can close it (CommonMark: a closing fence is at least as long as the opening).
    ``info`` (``tool-call NAME``) goes on the opening line; a backtick or line break there, which
    CommonMark does not allow in a backtick fence's info string, shows as ``'`` or ``⏎``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    label = " ".join(info.replace("`", "'").replace("\r\n", "⏎").replace("\n", "⏎").replace("\r", "⏎").split())
    return [f"{fence}{label}", text, fence]
