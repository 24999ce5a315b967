"""Full-text search over the archive, any language, grouped by lineage root.

Routing (the ``plan`` of every hit says which one ran):

* ``fts``: words, phrases and prefixes go to Hermes's FTS5 table (unicode61 over content,
  tool name and tool-call JSON). A prefix is first expanded into whole words by our
  vocabulary (vocab.py): all of them when there are few (``prefix`` in the plan), else,
  while typing, the most frequent (``prefix-top``: a first page; the next keystroke
  narrows it), so a keystroke never makes FTS5 merge every doclist of ``t*``.
* ``bigram``: a query with CJK text goes to our bigram index (cjk.py); with no index (a
  read-only home never indexed) to Hermes's ``trigram`` table when a term has 3+
  characters, else to a ``like`` scan. AND/OR/NOT read as FTS5 reads them
  (query.ParsedQuery.clauses), and each OR alternative goes to the first of these that
  can narrow it (``bigram+like`` when they differ). Every CJK-path candidate is
  re-checked against the whole query as case-insensitive substrings of the text with
  tool-call escapes decoded (query.searchable_text), so recall equals such a substring
  evaluation.

Ordering: ``ranked`` is BM25 within the newest 1,000 matches at a time (then the next
1,000 further back), which costs the same for a term in every message as for a rare
one; ``newest`` / ``oldest`` order by time, and prefix queries (``serv*``, search as you
type) are always newest first, since ranking a prefix costs a pass over all its matches.
Results keep only the best hit per lineage root. Any text is a safe query: it never raises, it returns fewer or no hits.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import logging
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator

from ..errors import BadSearchFilter, WorkbenchError
from ..textsafety import quoted
from ..values import text_value
from . import vocab
from .cjk import HALF_WIDTH, INDEXED_TEXT, BigramIndex, fts_pages
from .core import in_chunks
from .filters import SearchFilters, read_filters
from .lineage import LineageMixin
from .models import Marks, SearchHit, chain_title, content_text, decode_content
from .query import (
    MIN_PREFIX,
    OPERATORS,
    Clause,
    ParsedQuery,
    bigram_match,
    contains_cjk,
    escaped_forms,
    fold_width,
    half_width,
    like_escape,
    negated,
    parse,
    readable_calls,
    searchable_text,
    width_folded,
    width_parts,
    width_pattern,
)

log = logging.getLogger(__name__)

PAGE = 1000  # matches ranked together
FETCH = 200  # candidate rows read per query
SNIPPET_WIDTH = 160
COUNT_CAP = 100  # matches counted per session at most ("100+")
SESSION_HITS = 50  # hits listed when a session's result is expanded
MERGE_GAP = 2000  # sessions' id ranges closer than this are counted in one index walk
REFRESH_BUDGET = 50_000  # messages one search may add to the CJK index before answering
SOURCES = ("bigram", "trigram", "like")  # where a CJK or mixed query's alternatives are read, as the plan names them

Pages = Iterator[list[tuple[int, float]]]
Within = tuple[int, int] | None  # an inclusive message id range (one session's), None for the whole archive


class _Ranges:
    """Disjoint inclusive id ranges, merged as they are added; membership by bisection."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def add(self, lo: int, hi: int) -> None:
        i = bisect.bisect_left(self.ends, lo - 1)  # the first range that ends at or after lo - 1
        j = bisect.bisect_right(self.starts, hi + 1)  # past the last range that starts by hi + 1
        if i < j:  # overlapping or adjacent ranges [i, j) merge into one
            lo, hi = min(lo, self.starts[i]), max(hi, self.ends[j - 1])
        self.starts[i:j], self.ends[i:j] = [lo], [hi]

    def __contains__(self, value: int) -> bool:
        i = bisect.bisect_right(self.starts, value) - 1
        return i >= 0 and value <= self.ends[i]


class _Plan:
    """How a query is answered: ``walk(within)`` yields pages of candidates, ``verify`` the query re-checked."""

    def __init__(self, name: str, walk: Callable[[Within], Pages], verify: list[Clause] | None):
        self.name, self.walk, self.verify = name, walk, verify
        self.pages = walk(None)


PARTIAL_NOTE = "Only the commonest words that start with a prefix you typed were searched: type on to narrow."
HERMES_ROLES = ("assistant", "system", "tool", "user")  # what Hermes's agent loop writes; other writers add others


def scanned_unfolded(unfolded: Within, most: int | None) -> Within:
    """Of the message ids the CJK index's upgrade has not reached (``BigramIndex.unfolded``), those a search
    bounded to ``most`` of them scans: the newest (None: all). The scan of them cost about 0.7 ms a message
    (200,000 in 140 s), so a search that must not hold a turn long reads only so many."""
    if unfolded is None or most is None:
        return unfolded
    return max(unfolded[0], unfolded[1] - most + 1), unfolded[1]


class SearchMixin(LineageMixin):
    def absent_roles(self, roles: Iterable[str]) -> list[str]:
        """Of ``roles``, those no message has, to tell a mistyped role from a search with no hits.
        Hermes's own roles always count as known; another is looked up in ``stored_roles``."""
        return [r for r in roles if r not in HERMES_ROLES and r not in self.stored_roles()]

    def roles(self) -> list[str]:
        """Every role a message has, and Hermes's own."""
        return sorted(self.stored_roles().union(HERMES_ROLES))

    def stored_roles(self) -> frozenset[str]:
        """Every role a message has. Finding them reads the whole table (no index holds roles), so
        they are kept with the newest message id read: ``role:u`` typed letter by letter no longer reads
        a large archive at each keystroke, and while Hermes writes, only the messages added since are
        read (ids only grow: AUTOINCREMENT), not the table again at each new message. (A role whose last
        message went since still counts: its filter then finds nothing, and says so.)"""
        conn = self.conn()
        newest = conn.execute("SELECT max(id) FROM messages").fetchone()[0]
        kept = self.__dict__.get("_stored_roles")
        if kept is not None and kept[0] is not None and newest is not None and kept[0] < newest:
            added = conn.execute("SELECT DISTINCT role FROM messages WHERE id > ?", (kept[0],))
            kept = self.__dict__["_stored_roles"] = (newest, kept[1].union(row[0] for row in added))
        elif kept is None or kept[0] != newest:  # (first, or fewer messages: the newest went)
            found = frozenset(row[0] for row in conn.execute("SELECT DISTINCT role FROM messages"))
            kept = self.__dict__["_stored_roles"] = (newest, found)
        return kept[1]

    def search_filters(self, query: str, *, roles: Iterable[str] = (), sort: str | None = None) -> SearchFilters:
        """``query``'s filters and words (``filters.read_filters``), a role no message has refused in
        words that list the ones there are: a mistyped role is no search that found nothing."""
        filters = read_filters(query, roles=roles, sort=sort)
        absent = [role for role in filters.roles if not role] + self.absent_roles(filter(None, filters.roles))
        if absent:
            named = ", ".join(quoted(role) for role in absent if role)
            what = f"no message has the role {named}" if named else "role: names no role"
            raise BadSearchFilter(f"{what}; a role filter takes one of: {', '.join(self.roles())}")
        return filters

    @property
    def bigram_index(self) -> BigramIndex:
        index = self.__dict__.get("_bigram")
        if index is None:
            index = self.__dict__["_bigram"] = BigramIndex(self)
        return index

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        offset: int = 0,
        role: str | Iterable[str] | None = None,
        exclude_lineage_of: str | None = None,
        exclude_sources: Iterable[str] | None = None,
        prefix: bool = False,
        sort: str | None = None,
        per: str = "chain",
        unfolded_most: int | None = None,
    ) -> list[SearchHit]:
        """The best hit of each row of the tree (a compression chain), best first; ``per="lineage"``: of
        each lineage (a root and everything beneath it), as Hermes's session_search groups. Never raises
        for any query text. ``unfolded_most``: of the messages the CJK index's upgrade has not reached, only
        the newest that many ids are scanned (``scanned_unfolded``; None: all of them)."""
        parsed = self._parsed(query, prefix)
        if parsed.empty or limit <= 0:
            return []
        roles = {role} if isinstance(role, str) else set(role) if role else None
        per_chain = per != "lineage"
        root_of = self.listed_root_of if per_chain else self.root_of  # (Hermes's lineage: to the very root)
        excluded_root = root_of(exclude_lineage_of) if exclude_lineage_of else None
        try:
            plan = self._plan(parsed, sort, typing=prefix, unfolded_most=unfolded_most)
            found = self._group(
                plan,
                need=max(0, offset) + limit,
                roles=roles,
                excluded_root=excluded_root,
                exclude_sources=set(exclude_sources or ()),
                per_chain=per_chain,
            )
            hits = []
            for (root, start), (row, rank) in itertools.islice(found.items(), max(0, offset), None):
                segments = self._segments(row["session_id"], start if per_chain else None)
                hits.append(self._hit(row, rank, root, plan, parsed, segments, self._chain_title(row, segments)))
            return hits
        except sqlite3.OperationalError as exc:  # busy beyond the timeout, or an index Hermes left broken
            log.warning("search for %r failed: %s", query, exc)
            raise WorkbenchError(f"Search could not read the archive ({exc}). Retry in a moment.") from exc

    def nothing_searched(self, query: str, *, prefix: bool = False) -> str | None:
        """Why ``query`` holds nothing to search for (operators alone, a NOT with nothing before it,
        punctuation alone), in words that say how to search, else None: ``search`` finds nothing for
        it without looking, which is no answer that nothing matches."""
        parsed = self._parsed(query, prefix)
        if not parsed.empty:
            return None
        note = parsed.note or "Nothing was searched: the query holds no word to look for (punctuation is not searched)."
        return note if note.startswith("Nothing was searched") else f"Nothing was searched. {note}"

    def waits_on_upgrade(self, query: str, *, prefix: bool = False) -> bool:
        """True while the CJK index is upgraded from version 3 and ``query`` holds a term width folding
        changes: it would scan every message the upgrade has not reached, which costs more than the upgrade
        (a 200,000-message home: 140 s against 16 s), so a command finishes the upgrade first."""
        if self.bigram_index.unfolded() is None:
            return False
        return any(width_folded(term) for clause in self._parsed(query, prefix).clauses() for term in clause.need)

    def search_note(self, query: str, hits: Iterable[SearchHit] = (), *, prefix: bool = False) -> str | None:
        """What the user should know about ``hits`` for ``query``, else None: part of the query not
        searched (a NOT with nothing before it), or, while typing, that only the commonest words a
        prefix may become were searched (``prefix-top``, never for an excluded prefix: match counts
        are then lower bounds)."""
        notes = [self._parsed(query, prefix).note]
        if any(hit.partial for hit in hits):
            notes.append(PARTIAL_NOTE)
        return " ".join(filter(None, notes)) or None

    def match_counts(
        self,
        query: str,
        session_ids: Iterable[str],
        *,
        prefix: bool = False,
        role: Iterable[str] = (),
        cap: int = COUNT_CAP,
        stop: Callable[[], bool] | None = None,
    ) -> dict[str, int]:
        """How many visible messages of each session match ``query`` (``cap`` means that many or more).

        The query is planned once, as ``search`` plans it (while typing, a prefix counts
        the same likeliest words the hits came from). The sessions' id ranges are walked in
        the index, neighbouring ranges in one walk, never the archive's other matches.
        Once ``stop()`` is true (checked before each page: the next key was typed) no more
        is read, and sessions not counted to the end are left out of the answer (the first
        ones given are counted first).
        """
        wanted = list(dict.fromkeys(session_ids))
        plan = self._session_plan(query, prefix)
        if plan is None:
            return dict.fromkeys(wanted, 0)
        found = self._session_matches(plan, wanted, cap, set(role), stop)
        return {sid: len(ids) for sid, ids in found.items()}

    def session_hits(
        self,
        query: str,
        session_ids: str | list[str],
        *,
        prefix: bool = False,
        role: Iterable[str] = (),
        limit: int = SESSION_HITS,
    ) -> list[SearchHit]:
        """Every matching message of the sessions (one, or the segments of a chain), newest first, at
        most ``limit``, each with its snippet (a result expanded)."""
        wanted = [session_ids] if isinstance(session_ids, str) else list(dict.fromkeys(session_ids))
        plan = self._session_plan(query, prefix)
        if plan is None or not wanted:
            return []
        found = self._session_matches(plan, wanted, limit, set(role))
        ids = sorted((mid for sid in wanted for mid in found.get(sid, [])), reverse=True)[: max(0, limit)]
        rows = self._rows(ids)
        root, parsed = self.listed_root_of(wanted[0]), self._parsed(query, prefix)
        shown = [rows[mid] for mid in ids if mid in rows]
        one = {row["session_id"]: row for row in shown}  # a row of each session: its chain, its title read once
        chains = {sid: self._segments(sid) for sid in one}
        titles = {sid: self._chain_title(row, chains[sid]) for sid, row in one.items()}
        return [
            self._hit(row, 0.0, root, plan, parsed, chains[row["session_id"]], titles[row["session_id"]])
            for row in shown
        ]

    def _parsed(self, query: str, prefix: bool) -> ParsedQuery:
        min_prefix = 1 if prefix and self.bigram_index.available() else MIN_PREFIX
        return parse(query if isinstance(query, str) else "", prefix=prefix, min_prefix=min_prefix)

    def _session_plan(self, query: str, prefix: bool) -> _Plan | None:
        parsed = self._parsed(query, prefix)
        return None if parsed.empty else self._plan(parsed, "newest", typing=prefix)

    def _session_matches(
        self,
        plan: _Plan,
        session_ids: list[str],
        limit: int,
        roles: set[str],
        stop: Callable[[], bool] | None = None,
    ) -> dict[str, list[int]]:
        """Ids of each session's visible matching messages (of ``roles``, when any), newest first, at most
        ``limit`` each.

        Sessions still being walked when ``stop()`` turns true are left out.
        """
        if not session_ids or limit <= 0:
            return dict.fromkeys(session_ids, [])
        cursor = self.conn().cursor()
        cursor.row_factory = None
        spans = cursor.execute(
            f"SELECT session_id, min(id), max(id) FROM messages WHERE session_id IN "
            f"({', '.join('?' * len(session_ids))}) GROUP BY session_id ORDER BY 2",
            session_ids,
        ).fetchall()
        walks: list[tuple[list[int], set[str]]] = []  # one index walk per run of ranges at most MERGE_GAP apart
        for sid, lo, hi in spans:
            if walks and lo - walks[-1][0][1] <= MERGE_GAP:
                walks[-1][0][1] = max(walks[-1][0][1], hi)
                walks[-1][1].add(sid)
            else:
                walks.append(([lo, hi], {sid}))
        rank = {sid: place for place, sid in enumerate(session_ids)}
        walks.sort(key=lambda walk: min(rank[sid] for sid in walk[1]))  # the first sessions asked first
        found: dict[str, list[int]] = {sid: [] for sid in session_ids}
        done: set[str] = set()  # counted to the end (their walk finished, or they reached ``limit``)
        try:
            for (lo, hi), open_ in walks:
                for page in plan.walk((lo, hi)):
                    if stop is not None and stop():
                        return {sid: ids for sid, ids in found.items() if sid in done}
                    light = self._light([mid for mid, _ in page])
                    mine = [
                        mid
                        for mid, _ in page
                        if (info := light.get(mid)) and info[2] and info[0] in open_ and (not roles or info[1] in roles)
                    ]
                    rows = self._rows(mine) if plan.verify else {}
                    for mid in mine:
                        sid = light[mid][0]
                        if sid in open_ and (
                            not plan.verify or (mid in rows and self._verified(rows[mid], plan.verify))
                        ):
                            found[sid].append(mid)
                            if len(found[sid]) >= limit:
                                open_.discard(sid)
                                done.add(sid)
                    if not open_:
                        break
                done |= open_
        except sqlite3.OperationalError as exc:
            log.warning("counting the matches of %d sessions failed: %s", len(session_ids), exc)
            raise WorkbenchError(f"Search could not read the archive ({exc}). Retry in a moment.") from exc
        return found

    def iter_matches(self, query: str, *, prefix: bool = False) -> Iterator[int]:
        """Ids of every visible message matching ``query``, newest first (streamed)."""
        parsed = parse(query if isinstance(query, str) else "", prefix=prefix)
        if parsed.empty:
            return
        plan = self._plan(parsed, "newest")
        for page in plan.pages:
            rows = self._rows([mid for mid, _ in page])
            for mid, _ in page:
                row = rows.get(mid)
                if row is not None and row["visible"] and self._verified(row, plan.verify):
                    yield mid

    # -- planning ------------------------------------------------------------------
    def _plan(
        self, parsed: ParsedQuery, sort: str | None, typing: bool = False, unfolded_most: int | None = None
    ) -> _Plan:
        sort = (sort or "").strip().lower()
        words = not parsed.substrings and self.caps.fts  # English words, from FTS5; else substrings (CJK, 🚀)
        if not sort and words and any(t.prefix for t in parsed.tokens):
            sort = "newest"  # BM25 of a prefix costs a pass over every match: newest first instead
        # A substring is found whole or as part of a longer text either way, so searching as you
        # type (``prefix``) finds what `sessions search` finds and must rank it as that does: one
        # best hit per row in both skins (渋谷: the user message, not the newer tool call).
        descending, ranked = sort != "oldest", sort not in ("newest", "oldest")
        order = "ranked" if ranked else sort
        index = self.bigram_index
        if words:
            exprs = [parsed.fts(), parsed.literal_fts()]
            if any(t.prefix for t in parsed.tokens) and index.available():
                expanded = self._expanded_plan(parsed, exprs, order, descending, ranked, typing)
                if expanded is not None:
                    return expanded
            return _Plan(
                f"fts:{order}",
                lambda within: self._fallback_pages(self.conn(), "messages_fts", exprs, descending, ranked, within),
                None,
            )
        return self._substring_plan(parsed.clauses(), order, descending, ranked, unfolded_most)

    def _substring_plan(
        self, clauses: list[Clause], order: str, descending: bool, ranked: bool, unfolded_most: int | None = None
    ) -> _Plan:
        """CJK and mixed queries: each alternative (OR) read from the first index that can narrow it.

        Our bigram index when it has a CJK term, else Hermes's trigram table when it has a
        term of 3+ characters, else a substring scan; several sources are walked together
        by id. Only required terms narrow; every candidate is re-checked against the
        whole query (excluded groups included), so recall equals a substring evaluation.
        """
        index = self.bigram_index
        high = unfolded = None
        if any(bigram_match(list(c.need)) for c in clauses) and index.available():
            index.refresh(max_rows=REFRESH_BUDGET, wait=False)  # what is not indexed yet is scanned below
            high, unfolded = index.high_water(), scanned_unfolded(index.unfolded(), unfolded_most)
        sources: dict[str, list[list[str]]] = {}
        for clause in clauses:
            need = list(clause.need)
            if high is not None and bigram_match(need):
                sources.setdefault("bigram", []).append(need)
            elif self.caps.trigram and any(len(p) >= 3 for t in need for p in width_parts(t)):
                sources.setdefault("trigram", []).append(need)
            else:
                sources.setdefault("like", []).append(need)

        def walk(within: Within) -> Pages:
            walks = [
                self._source_pages(name, needs, descending, ranked, within, high or 0, unfolded)
                for name, needs in sources.items()
            ]
            return walks[0] if len(walks) == 1 else _merged(walks, descending, ranked)

        if list(sources) == ["like"]:
            order = "newest" if descending else "oldest"  # a scan has no ranking
        return _Plan(f"{'+'.join(n for n in SOURCES if n in sources)}:{order}", walk, clauses)

    def _source_pages(
        self,
        source: str,
        needs: list[list[str]],
        descending: bool,
        ranked: bool,
        within: Within,
        high: int,
        unfolded: Within = None,
    ) -> Pages:
        """Candidates of the alternatives ``needs`` (each a list of required terms) from one source.

        On the bigram path, the messages past the index are scanned, and so are those an index of version 3
        still holds unfolded (``unfolded``: its upgrade is under way) that may hold half-width katakana,
        when a term holds a character those fold to.
        """
        if source == "bigram":
            match = _any_of([bigram_match(need) for need in needs])
            gap = self._like_pages(needs, descending, above=high, within=within)
            indexed = self.bigram_index.pages(match, descending=descending, ranked=ranked, page=PAGE, within=within)
            walk = itertools.chain(gap, indexed) if descending else itertools.chain(indexed, gap)
            if unfolded is None or not any(width_folded(term) for need in needs for term in need):
                return walk  # (a term without such a character has the same pairs in either version)
            if within is not None:
                unfolded = (max(unfolded[0], within[0]), min(unfolded[1], within[1]))
            stale = self._like_pages(needs, descending, within=unfolded, kana_rows=True)
            return _merged([walk, stale], descending, ranked)
        if source == "trigram":
            expr = _any_of(
                [" AND ".join(_trigram_term(p) for t in need for p in width_parts(t) if len(p) >= 3) for need in needs]
            )
            return self._fallback_pages(
                self.conn(),
                "messages_fts_trigram",
                [expr],
                descending,
                ranked,
                within,
                fallback=lambda: self._like_pages(needs, descending, within=within),
            )
        return self._like_pages(needs, descending, within=within)

    def _expanded_plan(
        self, parsed: ParsedQuery, exprs: list[str], order: str, descending: bool, ranked: bool, typing: bool
    ) -> _Plan | None:
        """Prefixes as ORs of whole words from the vocabulary (None: leave them to FTS5's own prefix query).

        Words of messages the vocabulary has not counted yet (above its high-water mark,
        when workbench.db was busy) are read from those messages and added.
        """
        index = self.bigram_index
        index.refresh(max_rows=REFRESH_BUDGET, wait=False)
        conn = index.connection()
        if conn is None or not index.current():
            return None
        cursor = self.conn().cursor()
        cursor.row_factory = None
        gap = cursor.execute(
            "SELECT content, tool_name, tool_calls FROM messages WHERE id > ? LIMIT ?",
            (index.high_water(), REFRESH_BUDGET + 1),
        ).fetchall()
        if len(gap) > REFRESH_BUDGET:
            return None
        unseen = set().union(*(vocab.words(" ".join(filter(None, row))) for row in gap)) if gap else set()
        parts: list[str] = []
        complete = True
        excluding = False  # inside the parentheses after a NOT: "a NOT b c" is a NOT (b c), "a NOT b AND c" is not
        for token, excluded in zip(parsed.tokens, negated(parsed.tokens), strict=True):
            if token.operator:
                parts += [")"] * excluding + [token.fts()] + ["("] * (token.text == "NOT")
                excluding = token.text == "NOT"
                continue
            if parts and parts[-1] not in (*OPERATORS, "("):
                parts.append("AND")  # FTS5 takes "a b" as a AND b, but refuses "a (b OR c)" without it
            if not token.prefix:
                parts.append(token.fts())
                continue
            *head, last = vocab.split(token.text) or [""]  # ``session_s``: the phrase "session s*"
            # An excluded prefix is never cut to its commonest words (the others would get through):
            # up to EXACT words, all of them; more, FTS5's own prefix query.
            words, every = vocab.expand(conn, last, vocab.EXPAND if typing and not excluded else vocab.EXACT)
            words += sorted(w for w in unseen if w.startswith(last) and w not in words)
            if not last or not words or not (every or (typing and not excluded)):
                return None  # a word found nowhere, or an exact search over too many words
            complete = complete and every
            parts.append("(" + " OR ".join('"' + " ".join([*head, w]) + '"' for w in words) + ")")
        expr = " ".join([*parts, *[")"] * excluding])
        return _Plan(
            f"fts:{order}:{'prefix' if complete else 'prefix-top'}",
            lambda within: self._fallback_pages(self.conn(), "messages_fts", [expr], descending, ranked, within),
            None,
        )

    @staticmethod
    def _fallback_pages(
        conn, table: str, exprs: list[str], descending: bool, ranked: bool, within: Within = None, fallback=None
    ) -> Pages:
        """Pages for the first expression FTS5 accepts (a refused one yields nothing)."""
        for expr in exprs:
            if not expr:
                continue
            pages = fts_pages(conn, table, expr, descending=descending, ranked=ranked, page=PAGE, within=within)
            try:
                first = next(pages, None)
            except sqlite3.OperationalError:
                continue
            if first is not None:
                yield first
                yield from pages
            return
        if fallback is not None:
            yield from fallback()

    def _like_pages(
        self, needs: list[list[str]], descending: bool, above: int = 0, within: Within = None, kana_rows: bool = False
    ) -> Pages:
        """Scan messages holding every term of any of ``needs`` as substrings (ASCII case-insensitive), by id;
        with ``kana_rows``, only those that may hold half-width katakana (``cjk.HALF_WIDTH``)."""
        if within is not None:
            above = max(above, within[0] - 1)
        alternatives: list[str] = []
        args: list[str] = []
        for need in needs:
            clauses: list[str] = []
            # each piece of the term that reads the same in either width, as stored or escaped in tool-call
            # JSON written by Hermes (kana that may be written half-width do not narrow: the check does)
            for part in (part for term in need for part in width_parts(term)):
                forms = [part, *escaped_forms(part)]
                clauses.append("(" + " OR ".join(f"{INDEXED_TEXT} LIKE ? ESCAPE '\\'" for _ in forms) + ")")
                args += [f"%{like_escape(f)}%" for f in forms]
            alternatives.append("(" + (" AND ".join(clauses) or "1") + ")")
        where = " OR ".join(alternatives) or "1"
        bound = None
        while True:
            sql = f"SELECT m.id FROM messages m WHERE ({where}) AND {self._visible()} AND m.id > ?"
            if kana_rows:
                sql += f" AND {HALF_WIDTH}"
            params = [*args, above]
            if within is not None:
                sql += " AND m.id <= ?"
                params.append(within[1])
            if bound is not None:
                sql += " AND m.id < ?" if descending else " AND m.id > ?"
                params.append(bound)
            sql += f" ORDER BY m.id {'DESC' if descending else 'ASC'} LIMIT ?"
            ids = [r[0] for r in self.conn().execute(sql, (*params, FETCH))]
            if not ids:
                return
            bound = ids[-1]
            yield [(i, 0.0) for i in ids]
            if len(ids) < FETCH:
                return

    # -- collecting -----------------------------------------------------------------
    def _rows(self, ids: list[int]) -> dict[int, sqlite3.Row]:
        if not ids:
            return {}
        archived = "s.archived" if self.caps.has("sessions", "archived") else "0"
        rows = self.conn().execute(
            f"""SELECT m.id, m.session_id, m.role, m.timestamp, m.content, m.tool_name, m.tool_calls,
                       {self._visible()} AS visible, s.source, s.title, {archived} AS archived
                FROM messages m JOIN sessions s ON s.id = m.session_id
                WHERE m.id IN ({", ".join("?" * len(ids))})""",
            ids,
        )
        return {r["id"]: r for r in rows}

    @staticmethod
    def _verified(row: sqlite3.Row, clauses: list[Clause] | None) -> bool:
        if not clauses:
            return True
        text = fold_width(searchable_text(row["content"], row["tool_name"], row["tool_calls"])).lower()
        return any(c.holds(text) for c in clauses)

    def _light(self, ids: list[int]) -> dict[int, tuple]:
        """(session_id, role, visible) of each candidate: enough to filter and group without the text."""
        cursor = self.conn().cursor()
        cursor.row_factory = None
        cursor.execute(
            f"SELECT m.id, m.session_id, m.role, {self._visible()} FROM messages m "
            f"WHERE m.id IN ({', '.join('?' * len(ids))})",
            ids,
        )
        return {r[0]: r[1:] for r in cursor}

    def _group(
        self,
        plan: _Plan,
        *,
        need: int,
        roles: set[str] | None,
        excluded_root: str | None,
        exclude_sources: set[str],
        per_chain: bool,
    ) -> dict[tuple[str, str], tuple[sqlite3.Row, float]]:
        """Walk candidates best-first; the first verified one of each group wins, keyed (lineage root,
        the chain's first segment, or the root again when not ``per_chain``).

        Once a session is settled (its lineage has a hit, or it is excluded), candidates in
        its id range are skipped unread when no other session wrote inside that range: a
        common word matches most messages of every session, and reading each would cost
        more than the search itself.
        """
        groups: dict[tuple[str, str], tuple[sqlite3.Row, float]] = {}
        roots: dict[str, tuple[str, str] | None] = {}  # session -> (root, group), None when excluded
        settled = _Ranges()  # id ranges holding only settled sessions' messages

        def settle(sid: str) -> None:
            span = self._own_range(sid)
            if span is not None:
                settled.add(*span)

        step = max(8, need * 2)  # most searches settle within the first few dozen candidates
        for page in plan.pages:
            start = 0
            while start < len(page):
                chunk = [c for c in page[start : start + step] if c[0] not in settled]
                start += step
                step = min(PAGE, step * 2)
                light = self._light([mid for mid, _ in chunk]) if chunk else {}
                for mid, rank in chunk:
                    info = light.get(mid)
                    if info is None or not info[2] or (roles and info[1] not in roles) or mid in settled:
                        continue
                    sid = info[0]
                    if sid not in roots:
                        root = self._root_unless_excluded(sid, exclude_sources, per_chain)
                        if root is None or root == excluded_root:
                            roots[sid] = None
                            settle(sid)
                        else:
                            roots[sid] = (root, self._chain_start(sid) if per_chain else root)
                    key = roots[sid]
                    if key is None or key in groups:
                        continue
                    row = self._rows([mid]).get(mid)
                    if row is None or not self._verified(row, plan.verify):
                        continue
                    groups[key] = (row, rank)
                    settle(sid)
                    if len(groups) >= need:
                        return groups
        return groups

    def _own_range(self, session_id: str) -> tuple[int, int] | None:
        """The session's (first id, last id) when no other session has a message in between."""
        cursor = self.conn().cursor()
        cursor.row_factory = None
        lo, hi, count = cursor.execute(
            "SELECT min(id), max(id), count(*) FROM messages WHERE session_id = ?", (session_id,)
        ).fetchone()
        if (
            not count
            or cursor.execute("SELECT count(*) FROM messages WHERE id BETWEEN ? AND ?", (lo, hi)).fetchone()[0] != count
        ):
            return None
        return lo, hi

    def _root_unless_excluded(self, session_id: str, exclude_sources: set[str], listed: bool) -> str | None:
        """The session's root (``listed``: the tree row's, else the lineage's), None when its source is excluded."""
        if exclude_sources:
            row = self.conn().execute("SELECT source FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None or row["source"] in exclude_sources:
                return None
        return self.listed_root_of(session_id) if listed else self.root_of(session_id)

    def _segments(self, session_id: str, start: str | None = None) -> tuple[str, ...]:
        """The compression chain holding ``session_id``, first to latest (``start``: its first segment,
        when the caller found it already)."""
        return tuple(self._continuations(start or self._chain_start(session_id)))

    def _titles(self, session_ids: tuple[str, ...]) -> list[str | None]:
        """The titles of ``session_ids``, in order (None for one gone since)."""
        titles: dict[str, str | None] = {}
        for chunk, marks in in_chunks(list(session_ids)):
            titles.update(self.conn().execute(f"SELECT id, title FROM sessions WHERE id IN ({marks})", chunk))
        return [text_value(titles.get(sid)) for sid in session_ids]  # (a title stored as a BLOB: decoded)

    def _chain_title(self, row: sqlite3.Row, segments: tuple[str, ...]) -> str | None:
        """A hit's title: its chain's (``chain_title``, as the tree titles its row) whichever segment
        matched, never a parent's it is not a continuation of."""
        if segments[0] == row["session_id"] and row["title"]:
            return text_value(row["title"])  # (the first segment's title is the chain's)
        return chain_title(self._titles(segments or (row["session_id"],)))

    def _hit(
        self,
        row: sqlite3.Row,
        rank: float,
        root: str,
        plan: _Plan,
        parsed: ParsedQuery,
        segments: tuple[str, ...],
        title: str | None,
    ) -> SearchHit:
        """The hit in its chain's ``segments``, with its chain's ``title``."""
        pattern = highlight_pattern(parsed)
        text = content_text(decode_content(row["content"]))
        if pattern is None or not pattern.search(text):  # the match is in the tool name or call arguments
            text = " ".join(filter(None, (text, row["tool_name"], readable_calls(row["tool_calls"]))))
        excerpt, marks = make_snippet(text, pattern)
        return SearchHit(
            session_id=row["session_id"],
            root_id=root,
            title=title,
            source=row["source"],
            timestamp=row["timestamp"],
            excerpt=excerpt,
            marks=marks,
            match_message_id=row["id"],
            role=row["role"],
            rank=round(rank, 4) + 0.0,
            plan=plan.name,
            archived=bool(row["archived"]),
            segments=segments,
        )


def highlight_pattern(parsed: ParsedQuery) -> re.Pattern | None:
    """What to mark in a snippet: each word searched for, not excluded by NOT (CJK anywhere, others at word
    starts; prefixes extend)."""
    parts = []
    for token in parsed.positive():
        for text in dict.fromkeys((token.text, half_width(token.text))):  # (ＰＤＦ finds PDF too: ``Token.fts``)
            if not text:
                continue
            body = r"\W+".join(re.escape(w) for w in re.findall(r"\w+", text)) or re.escape(text)
            if parsed.substrings or contains_cjk(text):
                parts.append(width_pattern(text))
            else:
                parts.append(r"(?<!\w)" + body + (r"\w*" if token.prefix else r"(?!\w)"))
    if not parts:
        return None
    return re.compile("|".join(sorted(parts, key=len, reverse=True)), re.IGNORECASE)


def _trigram_term(term: str) -> str:
    """A term for the trigram table: as written, or escaped as in tool-call JSON Hermes stored."""
    return "(" + " OR ".join('"' + f.replace('"', '""') + '"' for f in [term, *escaped_forms(term)]) + ")"


def _any_of(exprs: list[str]) -> str:
    """An FTS5 expression matching any of ``exprs`` (one alone unchanged)."""
    exprs = list(dict.fromkeys(exprs))
    return exprs[0] if len(exprs) == 1 else " OR ".join(f"({e})" for e in exprs)


def _merged(walks: list[Pages], descending: bool, ranked: bool) -> Pages:
    """Several walks as one, by id without repeats, in pages of ``PAGE`` (each best first when ``ranked``).

    A walk's pages follow one another by id, so each page sorted by id orders the whole walk.
    """
    rows = heapq.merge(
        *((row for page in pages for row in sorted(page, reverse=descending)) for pages in walks),
        key=lambda row: row[0],
        reverse=descending,
    )
    page: list[tuple[int, float]] = []
    last = None
    for row in rows:
        if row[0] == last:
            continue
        last = row[0]
        page.append(row)
        if len(page) == PAGE:
            yield sorted(page, key=lambda r: r[1]) if ranked else page
            page = []
    if page:
        yield sorted(page, key=lambda r: r[1]) if ranked else page


def make_snippet(text: str, pattern: re.Pattern | None, width: int = SNIPPET_WIDTH) -> tuple[str, Marks]:
    """A one-line excerpt around the first match, and where in it every match is."""
    found = pattern.search(text) if pattern else None
    start = max(0, found.start() - width // 3) if found else 0
    end = min(len(text), max(start + width, found.end() if found else 0))
    lead = "…" if start else ""
    piece = lead + " ".join(text[start:end].split())
    marks = tuple(m.span() for m in pattern.finditer(piece, len(lead)) if m.end() > m.start()) if pattern else ()
    return piece + ("…" if end < len(text) else ""), marks
