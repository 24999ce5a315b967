"""Lineage: compression children, branches and delegates linked by parent_session_id.

Every walk keeps a visited set and a hop cap, so a hand-edited database with a
parent cycle cannot hang or crash it.
"""

from __future__ import annotations

import itertools

from .core import ArchiveCore, in_chunks
from .models import Chain, Lineage, Session

MAX_HOPS = 100
RootKey = tuple[float | None, str]  # a listed root's (started_at, id): where the next page of roots begins
MAX_TREE = 10_000  # sessions gathered into one lineage's children map

# A root has no parent, or a parent that no longer exists.
_ROOT_CONDITION = (
    "(s.parent_session_id IS NULL OR NOT EXISTS (SELECT 1 FROM sessions p WHERE p.id = s.parent_session_id))"
)


def _child_kind(has_config: bool) -> str:
    """SQL for a child's relation to its parent (``c`` child, ``p`` parent)."""

    def marker(key: str) -> str:
        if not has_config:
            return "NULL"
        return f"(CASE WHEN json_valid(c.model_config) THEN json_extract(c.model_config, '$.{key}') END)"

    return f"""CASE
    WHEN c.source = 'subagent' OR {marker("_delegate_from")} IS NOT NULL THEN 'delegate'
    WHEN c.source = 'tool' THEN 'tool'
    WHEN {marker("_branched_from")} IS NOT NULL THEN 'branch'
    WHEN p.end_reason = 'compression' THEN 'compression'
    WHEN p.end_reason = 'branched' THEN 'branch'
    ELSE 'child' END"""


class LineageMixin(ArchiveCore):
    @property
    def _kind_sql(self) -> str:
        return _child_kind(self.caps.has("sessions", "model_config"))

    def _linked_sql(self, seed: str, *, up: bool, spawned: bool = False) -> str:
        """A recursive CTE ``linked(id)``: ``seed`` (SQL) and the sessions compression joins to it, down
        (its continuations, a second one too) and, with ``up``, back to where the conversation began.
        ``spawned``: with the delegates and tool sessions its segments started too, as Hermes archives a
        conversation (never a branch or other child, a conversation of its own)."""
        edge = (
            f"{self._kind_sql} IN ('compression', 'delegate', 'tool')"
            if spawned
            else f"{self._kind_sql} = 'compression'"
        )
        upward = (
            "UNION SELECT p.id FROM linked l JOIN sessions c ON c.id = l.id "
            f"JOIN sessions p ON p.id = c.parent_session_id WHERE {edge}"
            if up
            else ""
        )
        return f"""WITH RECURSIVE linked(id) AS (SELECT {seed}
            UNION SELECT c.id FROM linked l JOIN sessions p ON p.id = l.id
                JOIN sessions c ON c.parent_session_id = p.id WHERE {edge}
            {upward})"""

    def _live_sql(self, seed: str, *, up: bool) -> str:
        """SQL true when a session compression joins to ``seed`` is not archived."""
        linked = self._linked_sql(seed, up=up)
        return f"EXISTS ({linked} SELECT 1 FROM linked JOIN sessions x ON x.id = linked.id WHERE x.archived = 0)"

    def _shown_sql(self, alias: str) -> str:
        """SQL true for a session ``alias`` the tree shows: not archived, or of a conversation Hermes went
        on compressing after it was archived (a segment compressed out of it is live), which is back in
        use (always, where the layout has no flag). The walk runs only for an archived session with a
        child, so a listing stays on the indexes."""
        if not self.caps.has("sessions", "archived"):
            return "1"
        continued = (
            f"EXISTS (SELECT 1 FROM sessions k WHERE k.parent_session_id = {alias}.id) "
            f"AND {self._live_sql(f'{alias}.id', up=False)}"
        )
        return f"({alias}.archived = 0 OR ({continued}))"

    def _roots_sql(self, include_archived: bool) -> str:
        """SQL true for a session the tree lists as a root (alias ``s``).

        A root has no living parent. Unless ``include_archived``, it is shown (``_shown_sql``); and a
        branch (or other child, never a delegate or a continuation) that is shown, of a conversation
        archived whole, is a root too, as it would otherwise be out of sight.
        """
        if include_archived or not self.caps.has("sessions", "archived"):
            return _ROOT_CONDITION
        return f"({_ROOT_CONDITION} OR {self._branch_of_archived_sql}) AND {self._shown_sql('s')}"

    @property
    def _branch_of_archived_sql(self) -> str:
        """SQL true for a session ``s`` that is a branch (or other child) of a conversation archived whole."""
        return f"""EXISTS (SELECT 1 FROM sessions c JOIN sessions p ON p.id = c.parent_session_id
            WHERE c.id = s.id AND p.archived = 1 AND {self._kind_sql} IN ('branch', 'child')
              AND NOT {self._live_sql("p.id", up=True)})"""

    def conversation_family(self, session_id: str) -> list[str]:
        """Every session compression joins to ``session_id``, with the delegates and tool sessions its
        segments started, oldest first: one conversation, which is archived or restored whole (what
        Hermes's own archive takes, below compressed segments, branches apart; below the others too,
        since the tree hides them with their parent)."""
        rows = self.conn().execute(
            f"{self._linked_sql('?', up=True, spawned=True)} "
            "SELECT s.id FROM linked JOIN sessions s ON s.id = linked.id "
            "ORDER BY s.started_at IS NULL, s.started_at, s.rowid",
            (session_id,),
        )
        return [r[0] for r in rows]

    def archive_flags(self, session_id: str) -> dict[str, bool]:
        """Whether each session of ``session_id``'s conversation (``conversation_family``) is archived."""
        if not self.caps.has("sessions", "archived"):
            return {}
        return self._archived_of(self.conversation_family(session_id))

    def _archived_of(self, session_ids: list[str]) -> dict[str, bool]:
        """The archived flag of each of ``session_ids`` that exists."""
        flags: dict[str, bool] = {}
        for chunk, marks in in_chunks(session_ids):
            rows = self.conn().execute(f"SELECT id, archived FROM sessions WHERE id IN ({marks})", chunk)
            flags.update((sid, bool(flag)) for sid, flag in rows)
        return flags

    def archived_whole(self, session_id: str) -> bool:
        """Whether every session compression joins to ``session_id`` is archived (the tree lists none
        of that conversation): archiving it again changes nothing, and listing it again is what is left."""
        if not self.caps.has("sessions", "archived"):
            return False
        return not self.conn().execute(f"SELECT {self._live_sql('?', up=True)}", (session_id,)).fetchone()[0]

    def archived_share(self, session_id: str) -> str:
        """How much of ``session_id``'s conversation is archived, which says what archiving does to it:
        ``none``; ``part`` (Hermes archived one of its sessions, or went on compressing it after an
        archive): archiving takes the rest; ``whole``: listing it again is what is left."""
        if self.archived_whole(session_id):
            return "whole"
        return "part" if any(self.archive_flags(session_id).values()) else "none"

    def _parent_of(self, session_id: str) -> str | None:
        """The parent's id, or None when there is none or it no longer exists (a dangling reference)."""
        row = (
            self.conn()
            .execute(
                "SELECT s.parent_session_id FROM sessions s JOIN sessions p ON p.id = s.parent_session_id WHERE "
                "s.id = ?",
                (session_id,),
            )
            .fetchone()
        )
        return row["parent_session_id"] if row else None

    def ancestors(self, session_id: str) -> list[str]:
        """Ids from the root down to ``session_id`` (inclusive)."""
        path, seen = [session_id], {session_id}
        current = session_id
        for _ in range(MAX_HOPS):
            parent = self._parent_of(current)
            if parent is None or parent in seen:
                break
            path.append(parent)
            seen.add(parent)
            current = parent
        return path[::-1]

    def root_of(self, session_id: str) -> str:
        return self.ancestors(session_id)[0]

    def listed_root_of(self, session_id: str) -> str:
        """The root of the tree row that holds ``session_id``: its lineage's root, or nearer, a shown
        branch of an archived conversation, which the tree lists as a root of its own (search groups
        by it, so such a branch's hits are not folded into its archived parent's)."""
        path = self.ancestors(session_id)
        if len(path) == 1 or not self.caps.has("sessions", "archived"):
            return path[0]
        below = path[1:]
        rows = self.conn().execute(
            f"SELECT s.id FROM sessions s WHERE s.id IN ({', '.join('?' * len(below))}) "
            f"AND {self._branch_of_archived_sql} AND {self._shown_sql('s')}",
            below,
        )
        listed = {r[0] for r in rows}
        return next((sid for sid in reversed(below) if sid in listed), path[0])

    def tip_of(self, session_id: str) -> str:
        """Follow compression continuations forward to the newest one (the session itself if none)."""
        return self._continuations(session_id)[-1]

    def continued_in(self, session_id: str) -> str | None:
        """The child that continues a session ended by compression (the newest live one if several)."""
        row = (
            self.conn()
            .execute(
                f"""SELECT c.id FROM sessions c JOIN sessions p ON p.id = c.parent_session_id
                WHERE c.parent_session_id = ? AND p.end_reason = 'compression' AND {self._kind_sql} = 'compression'
                ORDER BY (c.end_reason = 'compression') DESC, (c.ended_at IS NULL) DESC,
                         c.started_at DESC, c.id DESC
                LIMIT 1""",
                (session_id,),
            )
            .fetchone()
        )
        return row["id"] if row else None

    def _continuations(self, session_id: str) -> list[str]:
        chain, seen = [session_id], {session_id}
        for _ in range(MAX_HOPS):
            following = self.continued_in(chain[-1])
            if following is None or following in seen:
                break
            chain.append(following)
            seen.add(following)
        return chain

    def _chain_start(self, session_id: str) -> str:
        """The first segment of the compression chain that holds ``session_id``."""
        current, seen = session_id, {session_id}
        for _ in range(MAX_HOPS):
            parent = self._parent_of(current)
            if parent is None or parent in seen or self.continued_in(parent) != current:
                break
            seen.add(parent)
            current = parent
        return current

    def _chain(self, head: Session, kind: str) -> Chain:
        """The chain starting at ``head``: its continuations' rows and the children beside them."""
        ids = self._continuations(head.id)
        marks = ", ".join("?" * len(ids))
        rows = {r["id"]: r for r in self.conn().execute(f"SELECT * FROM sessions WHERE id IN ({marks})", ids)}
        segments = (head, *(self._session(rows[i]) for i in ids[1:] if i in rows))
        others = self.conn().execute(
            f"SELECT count(*) FROM sessions o WHERE parent_session_id IN ({marks}) AND id NOT IN ({marks})"
            f" AND {self._shown_sql('o')}",
            ids + ids,
        )
        return Chain(segments=segments, kind=kind, child_count=others.fetchone()[0])

    def chain_of(self, session_id: str) -> Chain:
        """The compression chain that holds ``session_id`` (a chain of one when it was never compressed)."""
        start = self._chain_start(session_id)
        head = self._session_or_fail(start)
        row = (
            self.conn()
            .execute(
                f"SELECT {self._kind_sql} FROM sessions c JOIN sessions p ON p.id = c.parent_session_id WHERE c.id = ?",
                (start,),
            )
            .fetchone()
        )
        return self._chain(head, row[0] if row else "root")

    def root_chains(
        self, limit: int = 50, offset: int = 0, include_archived: bool = False, *, after: RootKey | None = None
    ) -> list[Chain]:
        """``root_sessions`` with each root followed through its compression continuations."""
        return [self._chain(root, "root") for root in self.root_sessions(limit, offset, include_archived, after=after)]

    def chain_children(self, session_id: str) -> list[Chain]:
        """The children of every segment of ``session_id``'s chain except its continuations, as chains.

        Branches, delegates and other children, oldest first; each is the head of its own chain.
        """
        ids = self._continuations(self._chain_start(session_id))
        children = [c for segment in ids for c in self.children_of(segment) if c.id not in ids]
        children.sort(key=lambda c: (c.started_at is None, c.started_at or 0.0))
        return [self._chain(child, child.kind or "child") for child in children]

    def chain_path(self, session_id: str) -> list[str]:
        """First segments of the chains from the root's down to the one holding ``session_id``.

        What a tree of chains expands to show a session: every entry but the last is an ancestor chain.
        """
        path: list[str] = []
        current: str | None = session_id
        while current is not None and len(path) < MAX_HOPS:
            start = self._chain_start(current)
            if start in path:  # a parent cycle
                break
            path.append(start)
            if self.listed_roots([start]):  # (a branch of an archived conversation is a root of its own)
                break
            current = self._parent_of(start)
        return path[::-1]

    def children_of(self, session_id: str) -> list[Session]:
        """Direct children the tree shows (``_shown_sql``), oldest first, each with its kind and own child count."""
        rows = self.conn().execute(
            f"""SELECT c.*, {self._kind_sql} AS kind,
                       (SELECT count(*) FROM sessions g WHERE g.parent_session_id = c.id AND {self._shown_sql("g")})
                       AS child_count
                FROM sessions c JOIN sessions p ON p.id = c.parent_session_id
                WHERE c.parent_session_id = ? AND c.id != ? AND {self._shown_sql("c")}
                ORDER BY c.started_at, c.rowid""",
            (session_id, session_id),
        )
        return [self._session(r, kind=r["kind"]) for r in rows]

    def root_sessions(
        self, limit: int = 50, offset: int = 0, include_archived: bool = False, *, after: RootKey | None = None
    ) -> list[Session]:
        """Sessions without a living parent, newest first, with their child counts (for a lazily built tree).

        A session whose parent row is gone (deleted by another tool) counts as a root, so
        it never disappears from the tree. ``after``: only the roots listed after that one, so
        a page goes on where the last ended however many roots came or went since.
        """
        beyond, args = self._after_sql(after)
        rows = self.conn().execute(
            f"""SELECT s.*,
                       (SELECT count(*) FROM sessions c WHERE c.parent_session_id = s.id AND {self._shown_sql("c")})
                       AS child_count
                FROM sessions s WHERE {self._roots_sql(include_archived)} AND {beyond}
                ORDER BY s.started_at DESC, s.rowid DESC LIMIT ? OFFSET ?""",
            (*args, max(0, limit), max(0, offset)),
        )
        return [self._session(r) for r in rows]

    def root_ids(self, *, after: RootKey | None = None, down_to: RootKey | None = None) -> list[str]:
        """Ids of the roots ``root_sessions`` lists after ``after`` down to ``down_to`` (inclusive; None:
        to the last), newest first: which of a tree's paged-in roots it does not list yet."""
        beyond, args = self._after_sql(after)
        below, more = self._after_sql(down_to)
        rows = self.conn().execute(
            f"SELECT s.id FROM sessions s WHERE {self._roots_sql(False)} AND {beyond} "
            f"AND {'NOT ' + below if down_to else '1'} ORDER BY s.started_at DESC, s.rowid DESC",
            (*args, *(more if down_to else ())),
        )
        return [r[0] for r in rows]

    @staticmethod
    def _after_sql(key: RootKey | None) -> tuple[str, list[object]]:
        """SQL true for a session ``s`` listed after the root ``key`` (newest first, ties by rowid), and
        its arguments; a key whose session is gone since keeps every session started with it."""
        if key is None:
            return "1", []
        started, session_id = key
        rowid = "COALESCE((SELECT rowid FROM sessions WHERE id = ?), 9223372036854775807)"
        if started is None:  # (no start time: listed last)
            return f"(s.started_at IS NULL AND s.rowid < {rowid})", [session_id]
        return (
            f"(s.started_at IS NULL OR s.started_at <= ? AND (s.started_at < ? OR s.rowid < {rowid}))",
            [started, started, session_id],
        )

    def chain_stamps(self, chains: dict[str, tuple[str, ...]]) -> dict[str, tuple]:
        """For each chain (a row's first segment -> its segments), a stamp that changes whenever its tree
        row would: a segment's title, message count, end or archive flag, or the children it shows (a
        new segment, a branch, one archived or listed again). Two queries for any number of rows: how a
        screen finds, among many rows, the few another process changed."""
        ids = list(dict.fromkeys(sid for segments in chains.values() for sid in segments))
        archived = "archived" if self.caps.has("sessions", "archived") else "0"
        seen: dict[str, tuple] = {}
        children: dict[str, int] = {}
        for chunk, marks in in_chunks(ids):
            columns = f"id, title, message_count, ended_at, end_reason, {archived}"
            for row in self.conn().execute(f"SELECT {columns} FROM sessions WHERE id IN ({marks})", chunk):
                seen[row[0]] = tuple(row[1:])
            for parent, count in self.conn().execute(
                f"SELECT c.parent_session_id, count(*) FROM sessions c WHERE c.parent_session_id IN ({marks}) "
                f"AND {self._shown_sql('c')} GROUP BY c.parent_session_id",
                chunk,
            ):
                children[parent] = count
        return {
            row: tuple((seen.get(sid), children.get(sid, 0)) for sid in segments) for row, segments in chains.items()
        }

    def listed_roots(self, session_ids: list[str]) -> set[str]:
        """Which of ``session_ids`` ``root_sessions`` still lists (not deleted, archived or made a child)."""
        return self._which(session_ids, self._roots_sql(include_archived=False))

    def shown(self, session_ids: list[str]) -> set[str]:
        """Which of ``session_ids`` (the heads of chains beneath a parent) the tree still shows: not
        deleted, and not archived (unless Hermes continued the chain since)."""
        return self._which(session_ids, self._shown_sql("s"))

    def _which(self, session_ids: list[str], condition: str) -> set[str]:
        """Which of ``session_ids`` exist and meet ``condition`` (SQL on alias ``s``)."""
        found: set[str] = set()
        for chunk, marks in in_chunks(session_ids):
            rows = self.conn().execute(f"SELECT s.id FROM sessions s WHERE s.id IN ({marks}) AND {condition}", chunk)
            found.update(r[0] for r in rows)
        return found

    def lineage(self, session_id: str) -> Lineage:
        """Root, the chain root -> session -> compression tip, and the whole tree's children map. Parent ids
        edited into a loop (state.db by hand) end the walk up where it comes back, at ``loops_to``; the
        chain names each session once."""
        self._session_or_fail(session_id)
        up = self.ancestors(session_id)
        onward = self._continuations(session_id)[1:]
        chain = up + list(itertools.takewhile(lambda sid: sid not in up, onward))
        loops_to = parent if (parent := self._parent_of(up[0])) in up else None
        children: dict[str, list[str]] = {}
        frontier, seen = [up[0]], {up[0]}
        while frontier and len(seen) < MAX_TREE:
            current = frontier.pop(0)
            kids = [
                r["id"]
                for r in self.conn().execute(
                    "SELECT id FROM sessions WHERE parent_session_id = ? ORDER BY started_at, rowid", (current,)
                )
                if r["id"] not in seen
            ]
            if kids:
                children[current] = kids
                seen.update(kids)
                frontier.extend(kids)
        return Lineage(root_id=up[0], chain=chain, children=children, loops_to=loops_to)
