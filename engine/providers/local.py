"""``local``: a provider that needs nothing but this home.

It keeps a store of short facts in workbench.db (``facts.py``: full-text recall,
near-duplicates merged) that the agent fills with ``fact_add`` and prunes with
``fact_forget``, and that mirrors every committed built-in memory write (an add or
replace becomes a fact, a remove forgets the closest one). For each user message it
recalls the matching facts plus snippets of earlier sessions outside the current
conversation (FTS5 over state.db, CJK included). Nothing leaves the machine.
"""

from __future__ import annotations

from typing import Any

from ..errors import WorkbenchError
from ..models.phrasing import keywords, shorten
from ..tools import BACKGROUND_REVIEW
from .base import MemoryProvider
from .facts import FactStore

RECALL_LIMIT = 3
FACT_LIMIT = 5


def _schema(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required},
    }


LIMIT = {"type": "integer", "minimum": 1, "maximum": 10}
SCHEMAS = [
    _schema(
        "recall",
        "Search earlier sessions (outside this conversation) for passages about a topic. Returns the "
        "best snippet of each matching session.",
        {"query": {"type": "string", "description": "words to look for"}, "limit": LIMIT},
        ["query"],
    ),
    _schema(
        "fact_add",
        "Keep a short fact in the local fact store (recalled when a later message is about it). "
        "A near-duplicate of a kept fact is merged into it.",
        {"content": {"type": "string", "description": "one self-contained fact"}},
        ["content"],
    ),
    _schema(
        "fact_search",
        "Search the local fact store.",
        {"query": {"type": "string", "description": "words to look for"}, "limit": LIMIT},
        ["query"],
    ),
    _schema(
        "fact_forget",
        "Remove a fact from the local fact store, by id or by its wording.",
        {"id": {"type": "integer"}, "content": {"type": "string", "description": "the fact's wording"}},
        [],
    ),
]


def _limit(value: Any, default: int = 5) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 10 else default


class LocalProvider(MemoryProvider):
    name = "local"

    def __init__(self, home):
        self.home = home
        self.facts = FactStore(home)
        self.session_id = ""

    def initialize(self, session_id: str, **context: Any) -> None:
        self.session_id = session_id

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", reason: str = "") -> None:
        self.session_id = new_session_id

    def _hits(self, text: str, limit: int, session_id: str) -> list[dict[str, Any]]:
        words = list(dict.fromkeys(keywords(text)))[:6]
        if not words:
            return []
        hits = self.home.archive.search(
            " OR ".join(words), limit=limit, exclude_lineage_of=session_id or None, role=("user", "assistant")
        )
        return [{"session_id": h.session_id, "title": h.title, "when": h.when, "snippet": h.snippet} for h in hits]

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        parts = []
        facts = self.facts.search(query, FACT_LIMIT)
        if facts:
            parts.append("## Facts kept by the local provider\n" + "\n".join(f"- {f.content}" for f in facts))
        hits = self._hits(query, RECALL_LIMIT, session_id or self.session_id)
        if hits:
            parts.append(
                "## Recalled from earlier sessions\n"
                + "\n".join(
                    f"- {h['title'] or h['session_id']} ({str(h['when'] or '')[:10]}): {shorten(h['snippet'], 200)}"
                    for h in hits
                )
            )
        return "\n\n".join(parts)

    def tool_schemas(self) -> list[dict[str, Any]]:
        return SCHEMAS

    def handle_tool_call(self, name: str, args: dict[str, Any], **context: Any) -> dict[str, Any]:
        try:
            if name == "fact_add":
                return self.facts.add(
                    args.get("content"),
                    session_id=context.get("session_id") or self.session_id,
                    message_id=context.get("message_id"),
                )
            if name == "fact_forget":
                if args.get("id") is None and not args.get("content"):
                    return {"success": False, "error": "fact_forget needs the fact's 'id' or its 'content'."}
                return self.facts.forget(fact_id=args.get("id"), text=args.get("content"))
            query = args.get("query")
            if name not in ("recall", "fact_search"):
                return {"success": False, "error": f"The local provider has no tool {name!r}."}
            if not isinstance(query, str) or not query.strip():
                return {"success": False, "error": f"{name} needs a non-empty 'query'."}
            if name == "fact_search":
                found = [f.to_dict() for f in self.facts.search(query, _limit(args.get("limit")))]
            else:
                found = self._hits(query, _limit(args.get("limit")), self.session_id)
            return {"success": True, "count": len(found), "results": found}
        except WorkbenchError as exc:
            return exc.to_dict()

    def on_memory_write(self, action: str, target: str, content: str, metadata: dict[str, Any]) -> None:
        """Mirror a committed built-in write into the fact store."""
        where = {"session_id": metadata.get("session_id"), "message_id": metadata.get("message_id")}
        actor = "review" if metadata.get("write_origin") == BACKGROUND_REVIEW else "agent"
        old = metadata.get("old_text")
        if action in ("remove", "replace") and old:
            try:
                self.facts.forget(text=old, actor=actor)
            except WorkbenchError:
                pass  # it was never mirrored (written before the provider was on)
        if action in ("add", "replace") and content:
            self.facts.add(content, origin=f"memory:{target}", actor=actor, **where)
