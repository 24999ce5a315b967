"""Export of one session, or a whole compression lineage, as JSON or Markdown."""

from __future__ import annotations

from typing import Any

from ..errors import WorkbenchError
from ..textsafety import json_text
from .lineage import LineageMixin
from .messages import MessagesMixin
from .models import Message, Session, iso

FORMATS = ("json", "markdown")


class ExportMixin(MessagesMixin, LineageMixin):
    def export_session(self, session_id: str, fmt: str = "json") -> str:
        """The session's metadata and every message (archived ones included, flagged)."""
        session = self._session_or_fail(session_id)
        return _render([(session, self.messages(session_id, include_archived=True))], fmt)

    def export_lineage(self, session_id: str, fmt: str = "json") -> str:
        """Every session of the chain from the root to the compression tip, in order."""
        chain = self.lineage(session_id).chain
        return _render([(self._session_or_fail(sid), self.messages(sid, include_archived=True)) for sid in chain], fmt)


def _render(segments: list[tuple[Session, list[Message]]], fmt: str) -> str:
    """The document, ending in a newline in either format: the bytes stdout gets are those a file gets."""
    if fmt not in FORMATS:
        raise WorkbenchError(f"Unknown export format {fmt!r}; use one of {', '.join(FORMATS)}.")
    if fmt == "json":
        docs = [_session_doc(s, msgs) for s, msgs in segments]
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
    return "\n\n".join(_markdown(s, msgs) for s, msgs in segments) + "\n"


def _session_doc(session: Session, messages: list[Message]) -> dict[str, Any]:
    return {
        **session.to_dict(),
        "system_prompt": session.system_prompt,
        "model_config": session.model_config,
        "messages": [m.to_dict() for m in messages],
    }


def _markdown(session: Session, messages: list[Message]) -> str:
    lines = [
        f"# {session.title or session.id}",
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
        heading = f"## {message.role}" + (f": {message.tool_name}" if message.tool_name else "")
        lines += ["", f"{heading}{flag} · #{message.id} · {iso(message.timestamp)}", ""]
        if message.text:
            lines.append(message.text)
        for call in message.tool_calls or []:
            function = call.get("function", {}) if isinstance(call, dict) else {}
            lines += ["", f"```tool-call {function.get('name', '?')}", str(function.get("arguments", "")), "```"]
    return "\n".join(lines)
