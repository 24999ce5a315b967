"""``local``: a provider that needs nothing but this home, recalling from the session archive.

For each user message it searches state.db (FTS5, CJK included) for earlier sessions
that share its key words, outside the current conversation's lineage, and offers the
best snippets as recall. It also gives the model a ``recall`` tool for the same search.
Nothing leaves the machine and nothing new is stored: the archive already holds it all.
"""

from __future__ import annotations

from typing import Any

from ..models.phrasing import keywords, shorten
from .base import MemoryProvider

RECALL_LIMIT = 3
RECALL_SCHEMA = {
    "name": "recall",
    "description": "Search earlier sessions (outside this conversation) for passages about a topic. "
                   "Returns the best snippet of each matching session.",
    "parameters": {"type": "object", "properties": {
        "query": {"type": "string", "description": "words to look for"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 10}}, "required": ["query"]},
}


class LocalRecallProvider(MemoryProvider):
    name = "local"

    def __init__(self, home):
        self.home = home
        self.session_id = ""

    def initialize(self, session_id: str, **context: Any) -> None:
        self.session_id = session_id

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", reason: str = "") -> None:
        self.session_id = new_session_id

    def _hits(self, text: str, limit: int, session_id: str) -> list[dict[str, Any]]:
        words = list(dict.fromkeys(keywords(text)))[:6]
        if not words:
            return []
        hits = self.home.archive.search(" OR ".join(words), limit=limit, exclude_lineage_of=session_id or None,
                                        role=("user", "assistant"))
        return [{"session_id": h.session_id, "title": h.title, "when": h.when, "snippet": h.snippet} for h in hits]

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        hits = self._hits(query, RECALL_LIMIT, session_id or self.session_id)
        if not hits:
            return ""
        lines = [f"- {h['title'] or h['session_id']} ({str(h['when'] or '')[:10]}): {shorten(h['snippet'], 200)}"
                 for h in hits]
        return "## Recalled from earlier sessions\n" + "\n".join(lines)

    def tool_schemas(self) -> list[dict[str, Any]]:
        return [RECALL_SCHEMA]

    def handle_tool_call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return {"success": False, "error": "recall needs a non-empty 'query'."}
        limit = args.get("limit", 5)
        limit = limit if isinstance(limit, int) and 1 <= limit <= 10 else 5
        hits = self._hits(query, limit, self.session_id)
        return {"success": True, "count": len(hits), "results": hits}
