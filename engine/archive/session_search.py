"""The agent's ``session_search`` tool: recall past sessions without any model call.

Four shapes, chosen from the arguments (as in Hermes):

* discover (``query``): the best hit of each past lineage (the current one skipped), a
  session whose title matches listed first, each with a window of messages around the
  hit and a few messages from the start and end of that session as bookends;
* scroll (``session_id`` + ``around_message_id``): a window around one message;
* read (``session_id``): a whole session, or its first 20 and last 10 messages;
* browse (no query): the most recent sessions.

With ``auxiliary.session_search.backend`` set (offline or openai; empty by default, as
in Hermes 0.19.0), each discover result also carries a ``recap`` written by that model
from the messages around the hit. Recaps are made concurrently (at most
``max_concurrency`` at once, all within ``timeout`` seconds); one that fails or is
late falls back to the raw excerpt, and ``recap_source`` says which it is.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, wait
from datetime import datetime
from typing import Any

from ..counts import counted
from ..errors import WorkbenchError
from ..tools import ToolContext
from ..values import row_id
from .filters import SORTS
from .models import Message, SearchHit, Session, content_text
from .search import scanned_unfolded
from .upkeep import upgrade_line

log = logging.getLogger(__name__)

HIDDEN_SOURCES = ("subagent", "tool")  # delegate children and tool-internal sessions never show
DEMOTED_SOURCES = ("cron",)  # scheduled runs come after every other match
DEFAULT_LIMIT, MAX_LIMIT = 3, 10
DEFAULT_WINDOW, MAX_WINDOW = 5, 20
READ_HEAD, READ_TAIL = 20, 10
BOOKEND = 3
WINDOW_CHARS, BOOKEND_CHARS = 4000, 1200
KEEP_ROLES = ("user", "assistant")
EXCERPT_CHARS, RECAP_INPUT_CHARS = 500, 12_000
UPGRADE_S = 2.0  # at most this long on the CJK index's upgrade before a search that waits on it
UNFOLDED_MOST = 2000  # then at most this many messages it has not reached are scanned (about 1.4 s)

SESSION_SEARCH_SCHEMA = {
    "name": "session_search",
    "description": (
        "Search your archive of past sessions (full text, any language; no LLM calls). With query: the best "
        "matching past conversations, one per lineage, each with the messages around the match. With session_id "
        "and around_message_id: scroll around a message. With session_id only: read that session (long ones as "
        'first 20 + last 10 messages). With no arguments: the most recent sessions. Quote phrases ("error log"), '
        "use prefix* for word starts. The current conversation is never returned (it is already in context). "
        "Past sessions show what was said then, not the current state of any external system: check the source "
        "before relying on it."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": 'Words, "phrases" or prefix* to find. Omit to browse recent sessions.',
            },
            "limit": {
                "type": "integer",
                "default": DEFAULT_LIMIT,
                "description": f"Sessions to return (max {MAX_LIMIT}).",
            },
            "sort": {
                "type": "string",
                "enum": ["newest", "oldest"],
                "description": "Order by time instead of relevance.",
            },
            "role_filter": {
                "type": "string",
                "description": "Comma-separated roles to match (default: user,assistant).",
            },
            "session_id": {"type": "string", "description": "A session to read, or to scroll with around_message_id."},
            "around_message_id": {
                "type": "integer",
                "description": "Message id to centre the window on (with session_id).",
            },
            "window": {
                "type": "integer",
                "default": DEFAULT_WINDOW,
                "description": f"Messages either side of around_message_id (1-{MAX_WINDOW}).",
            },
        },
    },
}


def format_when(ts: float | None) -> str:
    if ts is None:
        return "unknown"
    try:
        return datetime.fromtimestamp(float(ts)).strftime("%B %d, %Y at %I:%M %p")
    except (TypeError, ValueError, OverflowError, OSError):
        return "unknown"


def _error(message: str) -> dict[str, Any]:
    return {"success": False, "error": message}


def _int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _shape(message: Message, *, anchor: bool = False, cap: int = WINDOW_CHARS) -> dict[str, Any]:
    text = (
        message.content
        if message.content is None or isinstance(message.content, str)
        else content_text(message.content)
    )
    if text and len(text) > cap:
        text = text[:cap] + "…[truncated]"
    shaped = {
        "id": message.id,
        "role": message.role,
        "content": text,
        "timestamp": message.timestamp,
        "tool_name": message.tool_name,
        "tool_calls": _readable_calls(message.tool_calls),
        "tool_call_id": message.tool_call_id,
    }
    shaped = {k: v for k, v in shaped.items() if v is not None or k == "content"}
    if anchor:
        shaped["anchor"] = True
    return shaped


def _readable_calls(calls: list | None) -> list | None:
    """The calls with each one's JSON arguments written with their letters as themselves. Hermes stores them
    with ``json.dumps`` defaults, and this result is JSON again, so Japanese arguments read ``\\u30e6`` (escaped
    twice) to the model and on the Run screen; the arguments stay the same JSON text (a string, as stored)."""
    if not calls:
        return calls
    return [_readable_call(call) for call in calls]


def _readable_call(call: Any) -> Any:
    function = call.get("function") if isinstance(call, dict) else None
    arguments = function.get("arguments") if isinstance(function, dict) else None
    if not isinstance(function, dict) or not isinstance(arguments, str) or "\\u" not in arguments:
        return call  # (no escape to decode)
    try:
        decoded = json.dumps(json.loads(arguments), ensure_ascii=False)
        decoded.encode("utf-8")  # (a lone surrogate stays escaped: the result must be storable)
    except (ValueError, RecursionError):  # (not JSON, nested past the stack, or a lone surrogate: as stored)
        return call
    return {**call, "function": {**function, "arguments": decoded}}


def _meta(session: Session) -> dict[str, Any]:
    return {
        "when": format_when(session.started_at),
        "source": session.source,
        "model": session.model or "unknown",
        "title": session.title,
    }


def session_search_tool(home, args: dict[str, Any], ctx: ToolContext | None = None) -> dict[str, Any]:
    """Run the tool; refusals come back as ``{"success": false, "error": ...}``."""
    args = args if isinstance(args, dict) else {}
    current = ctx.session_id if ctx else None
    try:
        archive = home.archive
        session_id = args.get("session_id")
        session_id = session_id.strip() if isinstance(session_id, str) and session_id.strip() else None
        if session_id and args.get("around_message_id") is not None:
            return _scroll(archive, session_id, args.get("around_message_id"), args.get("window"), current)
        if session_id:
            return _read(archive, session_id)
        limit = max(1, min(_int(args.get("limit"), DEFAULT_LIMIT), MAX_LIMIT))
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return _browse(archive, limit, current)
        sort = args.get("sort") if args.get("sort") in SORTS else None  # (any other: best first, as Hermes's)
        # role: and sort: words filter, as in the workbench's search box and CLI (one reader, ``filters``)
        filters = archive.search_filters(query, roles=[str(args.get("role_filter") or "")], sort=sort)
        if not filters.text.strip():
            return _browse(archive, limit, current)
        roles = list(filters.roles) or list(KEEP_ROLES)
        # the CJK index's upgrade, as a command runs it before a search, bounded: the turn waits on it
        upgrade = archive.upgrade_before_search(filters.text.strip(), most_s=UPGRADE_S)
        found = _discover(archive, filters.text.strip(), limit, roles, filters.sort, current)
        if upgrade is not None and upgrade.slow:  # the agent is told why the search was slow, or incomplete
            found["note"] = " ".join(filter(None, [found.get("note"), upgrade_line(upgrade.left), _cut(upgrade.left)]))
        if found["results"]:
            add_recaps(home, filters.text.strip(), found["results"])
        return found
    except WorkbenchError as exc:
        return _error(exc.message)


def _cut(left: tuple[int, int]) -> str | None:
    """What a search bounded to ``UNFOLDED_MOST`` of the messages the upgrade has not reached (``left``)
    left unsearched, for the agent to weigh its results (None: it scanned them all)."""
    scanned = scanned_unfolded(left, UNFOLDED_MOST)
    if scanned is None or scanned == left:
        return None
    return (
        f"This search scanned only the newest {UNFOLDED_MOST:,} of them, so a turn is not held long: results may "
        f"be incomplete (a match written in half-width katakana among the {scanned[0] - left[0]:,} older message "
        "ids was not looked for)."
    )


def _excerpt_text(result: dict[str, Any]) -> str:
    """The messages a discover result carries (bookends and window), one ``ROLE: text`` block each."""
    shown = [*result.get("bookend_start", []), *result.get("messages", []), *result.get("bookend_end", [])]
    return "\n\n".join(
        f"{m['role'].upper()}: {' '.join(str(m.get('content') or '').split())}" for m in shown if m.get("content")
    )


def add_recaps(home, query: str, results: list[dict[str, Any]]) -> None:
    """Give each result a ``recap`` from ``auxiliary.session_search`` (nothing when it is not set)."""
    from ..models import ModelError, make_auxiliary_model

    try:
        model = make_auxiliary_model(home, "session_search")
    except ModelError as exc:  # (a key variable named but not set, say): every result keeps its excerpt
        _say_failures([_excerpt_recap(result, _excerpt_text(result), exc.message) for result in results])
        return
    if model is None:
        return
    config = home.config
    bound = max(1, min(config.int("auxiliary.session_search.max_concurrency"), 5))
    texts = [_excerpt_text(r) for r in results]
    pool = ThreadPoolExecutor(max_workers=min(bound, len(results)), thread_name_prefix="recap")
    futures = [pool.submit(model.recap, query, text[:RECAP_INPUT_CHARS]) for text in texts]
    wait(futures, timeout=config.seconds("auxiliary.session_search.timeout"))
    pool.shutdown(wait=False, cancel_futures=True)  # a late recap is not waited for
    failed: list[str] = []
    for result, text, future in zip(results, texts, futures, strict=True):
        recap, why = None, "timed out"
        if future.done() and not future.cancelled():
            try:
                recap = (future.result() or "").strip() or None
                why = "empty answer"
            except Exception as exc:  # one failing recap never fails the search
                why = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        if recap:
            result.update(recap=recap, recap_source="model")
        else:
            failed.append(_excerpt_recap(result, text, why))
    model.close()
    _say_failures(failed)


def _excerpt_recap(result: dict[str, Any], text: str, why: str) -> str:
    """A result whose recap failed: the raw excerpt in its place, and why (``recap_error``, returned)."""
    excerpt = text[:EXCERPT_CHARS] + ("\u2026" if len(text) > EXCERPT_CHARS else "")
    result.update(recap=excerpt or "No preview available.", recap_source="excerpt", recap_error=why)
    return why


def _say_failures(whys: list[str]) -> None:
    """One warning per reason a search's recaps failed, not one per result: a dead endpoint failing
    five recaps was five identical lines on the CLI and five notifications in the TUI."""
    for why, count in Counter(whys).items():
        log.warning("session_search: %s failed (%s); the raw excerpts are used", counted(count, "recap"), why)


def _scroll(archive, session_id: str, around: Any, window: Any, current: str | None) -> dict[str, Any]:
    if isinstance(around, bool) or not isinstance(around, (int, str)) or row_id(str(around)) is None:
        return _error("scroll requires integer around_message_id")
    around = int(around)
    window = max(1, min(_int(window, DEFAULT_WINDOW), MAX_WINDOW))
    session = archive.get_session(session_id)
    if session is None:
        return _error(f"session_id not found: {session_id}")
    root = archive.root_of(session_id)
    if current and archive.get_session(current) and archive.root_of(current) == root:
        return _error("scroll rejected: anchor lives in the current session lineage (already in your active context)")
    response: dict[str, Any] = {}
    anchor = archive.message(around)
    if anchor is None or anchor.session_id != session_id:
        if anchor is None or archive.root_of(anchor.session_id) != root:
            return _error(f"around_message_id {around} not in session_id {session_id}")
        response["warning"] = (
            f"around_message_id {around} lives in {anchor.session_id} (same lineage as "
            f"{session_id}); rebound transparently"
        )
        session = archive.get_session(anchor.session_id)
    shown, before, after = archive.message_window(around, window)
    return {
        "success": True,
        "mode": "scroll",
        "session_id": session.id,
        "around_message_id": around,
        "session_meta": _meta(session),
        "window": window,
        "messages": [_shape(m, anchor=m.id == around) for m in shown],
        "messages_before": before,
        "messages_after": after,
        **response,
    }


def _read(archive, session_id: str) -> dict[str, Any]:
    session = archive.get_session(session_id)
    if session is None:
        return _error(f"session_id not found: {session_id}")
    total = archive.live_message_count(session_id)
    truncated = total > READ_HEAD + READ_TAIL
    if truncated:
        shown = archive.messages(session_id, limit=READ_HEAD) + archive.messages(session_id, offset=total - READ_TAIL)
    else:
        shown = archive.messages(session_id)
    response = {
        "success": True,
        "mode": "read",
        "session_id": session_id,
        "session_meta": _meta(session),
        "message_count": total,
        "truncated": truncated,
        "messages": [_shape(m) for m in shown],
    }
    if truncated:
        response["message"] = (
            f"Session has {total} messages; showing first {READ_HEAD} + last {READ_TAIL}. "
            "Pass around_message_id (any id above) to scroll the middle."
        )
    return response


def _preview(archive, session_id: str) -> str:
    first = (
        archive.conn()
        .execute(
            "SELECT content FROM messages WHERE session_id = ? AND role = 'user' ORDER BY id LIMIT 1", (session_id,)
        )
        .fetchone()
    )
    text = " ".join(content_text(first["content"]).split()) if first and first["content"] else ""
    return text if len(text) <= 60 else text[:60] + "..."


def _browse(archive, limit: int, current: str | None) -> dict[str, Any]:
    current_root = archive.root_of(current) if current and archive.get_session(current) else None
    results: list[dict[str, Any]] = []
    offset = 0
    while len(results) < limit:
        roots = archive.root_sessions(limit=limit + 5, offset=offset)
        if not roots:
            break
        offset += len(roots)
        for root in roots:
            if root.id in (current_root, current) or root.source in HIDDEN_SOURCES:
                continue
            tip = archive.get_session(archive.tip_of(root.id)) or root
            last = (
                archive.conn()
                .execute("SELECT max(timestamp) FROM messages WHERE session_id = ?", (tip.id,))
                .fetchone()[0]
            )
            results.append(
                {
                    "session_id": tip.id,
                    "title": tip.title or root.title,
                    "source": root.source,
                    "started_at": format_when(root.started_at),
                    "last_active": format_when(last or tip.started_at),
                    "message_count": tip.message_count,
                    "preview": _preview(archive, root.id),
                }
            )
            if len(results) >= limit:
                break
    return {
        "success": True,
        "mode": "browse",
        "results": results,
        "count": len(results),
        "message": f"Showing {len(results)} most recent sessions. Pass a query= to search, or "
        "session_id+around_message_id to scroll.",
    }


def _anchored(archive, session_id: str, anchor_id: int) -> dict[str, Any]:
    """The window around the hit (user/assistant rows plus the anchor) and bookends from the session's ends."""
    shown, before, after = archive.message_window(anchor_id, DEFAULT_WINDOW)
    window = [m for m in shown if m.id == anchor_id or m.role in KEEP_ROLES]
    low, high = (shown[0].id, shown[-1].id) if shown else (anchor_id, anchor_id)
    marks = ", ".join("?" * len(KEEP_ROLES))
    visible = archive._live()
    head = (
        archive.conn()
        .execute(
            f"SELECT * FROM messages m WHERE m.session_id = ? AND m.id < ? AND m.role IN ({marks}) AND {visible} "
            "AND length(m.content) > 0 ORDER BY m.id LIMIT ?",
            (session_id, low, *KEEP_ROLES, BOOKEND),
        )
        .fetchall()
    )
    tail = (
        archive.conn()
        .execute(
            f"SELECT * FROM messages m WHERE m.session_id = ? AND m.id > ? AND m.role IN ({marks}) AND {visible} "
            "AND length(m.content) > 0 ORDER BY m.id DESC LIMIT ?",
            (session_id, high, *KEEP_ROLES, BOOKEND),
        )
        .fetchall()
    )
    return {
        "bookend_start": [_shape(archive._message(r), cap=BOOKEND_CHARS) for r in head],
        "messages": [_shape(m, anchor=m.id == anchor_id) for m in window],
        "bookend_end": [_shape(archive._message(r), cap=BOOKEND_CHARS) for r in reversed(tail)],
        "messages_before": before,
        "messages_after": after,
    }


def _discover(archive, query: str, limit: int, roles: list[str], sort: Any, current: str | None) -> dict[str, Any]:
    current_root = archive.root_of(current) if current and archive.get_session(current) else None
    results: list[dict[str, Any]] = []
    seen: set[str] = set()
    titled = archive.resolve_title(query.strip("`'\" \t"))
    if titled and titled.source not in HIDDEN_SOURCES and archive.root_of(titled.id) != current_root:
        first = archive.messages(titled.id, limit=1)
        if first:
            root = archive.root_of(titled.id)
            seen.add(root)
            results.append(
                {
                    "session_id": titled.id,
                    **_meta(titled),
                    "matched_role": "session_title",
                    "match_message_id": first[0].id,
                    "snippet": f"Session title matched: {titled.title}",
                    **_anchored(archive, titled.id, first[0].id),
                    **({"parent_session_id": root} if root != titled.id else {}),
                }
            )
    hits: list[SearchHit] = []
    for excluded in (HIDDEN_SOURCES + DEMOTED_SOURCES, HIDDEN_SOURCES):  # cron lineages only fill what is left
        if len(results) + len(hits) >= limit:
            break
        hits += archive.search(
            query,
            limit=limit + len(seen) + len(hits),
            role=roles,
            exclude_lineage_of=current,
            exclude_sources=excluded,
            sort=sort,
            per="lineage",
            unfolded_most=UNFOLDED_MOST,
        )
    for hit in hits:
        if hit.root_id in seen or len(results) >= limit:
            continue
        seen.add(hit.root_id)
        root = archive.get_session(hit.root_id)
        results.append(
            {
                "session_id": hit.session_id,
                "when": format_when(root.started_at if root else hit.timestamp),
                "source": root.source if root else hit.source,
                "model": (root.model if root else None) or "unknown",
                "title": hit.title,
                "matched_role": hit.role,
                "match_message_id": hit.match_message_id,
                "snippet": hit.snippet,
                **_anchored(archive, hit.session_id, hit.match_message_id),
                **({"parent_session_id": hit.root_id} if hit.root_id != hit.session_id else {}),
            }
        )
    note = archive.search_note(query)
    said = {"note": note} if note else {}
    if not results:
        return {
            "success": True,
            "mode": "discover",
            "query": query,
            "results": [],
            "count": 0,
            "message": "No matching sessions found.",
            **said,
        }
    return {
        "success": True,
        "mode": "discover",
        "query": query,
        "results": results,
        "count": len(results),
        "sessions_searched": len(seen),
        **said,
    }
