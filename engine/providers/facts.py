"""The ``local`` provider's own store: short facts in workbench.db, recalled by full-text search.

A fact is one line of text with where it came from (the session and stored message
that made it, and whether the agent added it with a tool or it mirrors a built-in
memory write). Adding a fact close to one already kept (``memory.similar``'s score at
or above ``approvals.duplicate_threshold``, the rule every near-duplicate check uses)
merges into it instead of piling up variants: the longer
wording is kept and the merge is counted. Recall ranks by FTS5 bm25 over the facts'
words. Every write is one ``BEGIN IMMEDIATE`` transaction that re-reads what it
compares against, so two processes never both add the same fact.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from ..db import write_transaction
from ..errors import WorkbenchError
from ..events import FactsChanged
from ..memory.similar import closest, score
from ..models.phrasing import keywords
from ..textsafety import quoted
from ..values import call_name

MAX_FACT_CHARS = 500
FORGET_SCORE = 70  # how close a wording must be to name the fact to forget

_SCHEMA = """
CREATE TABLE IF NOT EXISTS provider_facts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    content TEXT NOT NULL,
    origin TEXT NOT NULL,
    session_id TEXT,
    message_id INTEGER,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    merged INTEGER NOT NULL DEFAULT 0
);
CREATE VIRTUAL TABLE IF NOT EXISTS provider_facts_fts USING fts5(content, content='provider_facts', content_rowid='id');
CREATE TRIGGER IF NOT EXISTS provider_facts_ai AFTER INSERT ON provider_facts BEGIN
    INSERT INTO provider_facts_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER IF NOT EXISTS provider_facts_ad AFTER DELETE ON provider_facts BEGIN
    INSERT INTO provider_facts_fts(provider_facts_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER IF NOT EXISTS provider_facts_au AFTER UPDATE OF content ON provider_facts BEGIN
    INSERT INTO provider_facts_fts(provider_facts_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO provider_facts_fts(rowid, content) VALUES (new.id, new.content);
END;
"""


@dataclass(frozen=True)
class Fact:
    id: int
    content: str
    origin: str  # "tool" (the agent's fact_add) or "memory:<target>" (a mirrored built-in write)
    session_id: str | None
    message_id: int | None
    created_at: float
    updated_at: float
    merged: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _clean(content: Any) -> str:
    if not isinstance(content, str) or not content.strip():
        raise WorkbenchError("A fact needs some text ('content').")
    text = " ".join(content.split())
    if len(text) > MAX_FACT_CHARS:
        raise WorkbenchError(f"A fact is at most {MAX_FACT_CHARS} characters (this one has {len(text)}); split it.")
    return text


class FactStore:
    def __init__(self, home):
        self.home = home
        self._ready = False

    def _conn(self):
        conn = self.home.journal.connection()  # this thread's connection to workbench.db
        if not self._ready:
            conn.executescript(_SCHEMA)
            self._ready = True
        return conn

    @staticmethod
    def _fact(row) -> Fact:
        return Fact(*row)

    def _rows(self, where: str = "", args: tuple = ()) -> list[Fact]:
        sql = (
            "SELECT id, content, origin, session_id, message_id, created_at, updated_at, merged FROM provider_facts "
            f"{where} ORDER BY id"
        )
        return [self._fact(row) for row in self._conn().execute(sql, args)]

    def all(self) -> list[Fact]:
        return self._rows()

    def _journal(
        self,
        conn,
        action: str,
        fact_id: int,
        *,
        actor: str,
        before: str | None = None,
        after: str | None = None,
        session_id: str | None = None,
        message_id: int | None = None,
    ) -> None:
        """Every change to the facts is on the journal (and so the timeline), in the same transaction."""
        self.home.journal.record_in(
            conn,
            "providers",
            action,
            "local",
            actor=actor,
            before=before,
            after=after,
            session_id=session_id,
            message_id=message_id,
            detail={"fact_id": fact_id},
        )

    def _announce(self, action: str, fact_id: int, actor: str, session_id: str | None = None) -> None:
        """After the commit: screens listing the facts refresh."""
        self.home.bus.publish(FactsChanged(actor=actor, session_id=session_id, action=action, fact_id=fact_id))

    def add(
        self,
        content: Any,
        *,
        origin: str = "tool",
        session_id: str | None = None,
        message_id: int | None = None,
        actor: str = "agent",
    ) -> dict[str, Any]:
        """Keep a fact, or merge it into a near-duplicate; says which it did."""
        text = _clean(content)
        conn = self._conn()
        now = self.home.clock.now()
        with write_transaction(conn, self.home.read_only):
            existing = self._rows()
            near = closest(text, [f.content for f in existing], floor=self.home.memory.duplicate_threshold())
            if near:
                fact_id = next(f.id for f in existing if f.content == near[0])
                kept = max((text, near[0]), key=len)
                conn.execute(
                    "UPDATE provider_facts SET content = ?, updated_at = ?, merged = merged + 1 WHERE id = ?",
                    (kept, now, fact_id),
                )
                self._journal(
                    conn,
                    "fact_merge",
                    fact_id,
                    actor=actor,
                    before=near[0],
                    after=kept,
                    session_id=session_id,
                    message_id=message_id,
                )
                result = {
                    "success": True,
                    "merged_into": fact_id,
                    "content": kept,
                    "score": round(score(text, near[0])),
                    "message": f"Merged into fact {fact_id} (a near-duplicate).",
                }
            else:
                cursor = conn.execute(
                    "INSERT INTO provider_facts (content, origin, session_id, message_id, created_at, "
                    "updated_at) VALUES (?,?,?,?,?,?)",
                    (text, origin, session_id, message_id, now, now),
                )
                fact_id = int(cursor.lastrowid or 0)
                self._journal(
                    conn, "fact_add", fact_id, actor=actor, after=text, session_id=session_id, message_id=message_id
                )
                result = {"success": True, "id": fact_id, "content": text, "message": "Fact added."}
        self._announce("fact_merge" if near else "fact_add", fact_id, actor, session_id)
        return result

    def search(self, query: str, limit: int = 5) -> list[Fact]:
        """Facts sharing words with ``query``, best first (bm25)."""
        words = [re.sub(r'"', "", w) for w in dict.fromkeys(keywords(query))][:8]
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in words if w)
        rows = (
            self._conn()
            .execute(
                "SELECT f.id, f.content, f.origin, f.session_id, f.message_id, f.created_at, f.updated_at, f.merged "
                "FROM provider_facts_fts JOIN provider_facts f ON f.id = provider_facts_fts.rowid "
                "WHERE provider_facts_fts MATCH ? ORDER BY bm25(provider_facts_fts) LIMIT ?",
                (match, limit),
            )
            .fetchall()
        )
        return [self._fact(row) for row in rows]

    def forget(self, *, fact_id: Any = None, text: Any = None, actor: str = "agent") -> dict[str, Any]:
        """Remove one fact, by id or by the closest wording (refused when nothing is close enough)."""
        conn = self._conn()
        with write_transaction(conn, self.home.read_only):
            facts = self._rows()
            if fact_id is not None:
                chosen = next((f for f in facts if str(f.id) == str(fact_id)), None)
                if chosen is None:
                    raise WorkbenchError(f"No fact with id {quoted(fact_id)}; search for it with fact_search.")
            else:
                wanted = _clean(text)
                near = closest(wanted, [f.content for f in facts], floor=FORGET_SCORE)
                if not near:
                    raise WorkbenchError(f"No fact matches {wanted!r}; search for it with fact_search.")
                chosen = next(f for f in facts if f.content == near[0])
            conn.execute("DELETE FROM provider_facts WHERE id = ?", (chosen.id,))
            self._journal(
                conn,
                "fact_forget",
                chosen.id,
                actor=actor,
                before=chosen.content,
                session_id=chosen.session_id,
                message_id=chosen.message_id,
            )
        self._announce("fact_forget", chosen.id, actor, chosen.session_id)
        return {"success": True, "removed": chosen.id, "content": chosen.content, "message": "Fact forgotten."}

    def reword(self, fact_id: int, expected: str, content: str, *, actor: str = "user") -> dict[str, Any]:
        """Set a fact back to ``content`` only while it still reads ``expected`` (reverting a merge)."""
        conn = self._conn()
        with write_transaction(conn, self.home.read_only):
            current = next((f for f in self._rows() if f.id == fact_id), None)
            if current is None:
                raise WorkbenchError(f"Fact {fact_id} is gone (forgotten since), so its wording cannot be restored.")
            if current.content != expected:
                raise WorkbenchError(f"Fact {fact_id} has changed since; it now reads {quoted(current.content)}.")
            conn.execute(
                "UPDATE provider_facts SET content = ?, updated_at = ? WHERE id = ?",
                (content, self.home.clock.now(), fact_id),
            )
            self._journal(conn, "fact_reword", fact_id, actor=actor, before=expected, after=content)
        self._announce("fact_reword", fact_id, actor)
        return {"success": True, "id": fact_id, "content": content, "message": f"Fact {fact_id} reads as before."}

    def holds(self, fact_id: int) -> Fact | None:
        return next((f for f in self._rows("WHERE id = ?", (fact_id,))), None)


def _call_names(calls: Any) -> list[str]:
    """The tool names of a stored message's tool calls (rows written by hand may hold anything)."""
    return [name for call in (calls if isinstance(calls, list) else []) if (name := call_name(call))]


def list_facts(home) -> list[dict[str, Any]]:
    """Every kept fact with the stored message it came from (``source_message``: role, text and the
    names of its tool calls, or None)."""
    facts = FactStore(home).all()
    out = []
    for fact in facts:
        message = home.archive.message(fact.message_id) if fact.message_id is not None else None
        source = (
            {
                "id": message.id,
                "session_id": message.session_id,
                "role": message.role,
                "text": message.text,
                "tool_calls": _call_names(message.tool_calls),
            }
            if message is not None
            else None
        )
        out.append({**fact.to_dict(), "source_message": source})
    return out
