"""``workbench sessions list|search|show|lineage|export|rename|archive|delete|prune|reindex``.

Reads open the home read-only (search may update our CJK index in workbench.db, never
state.db). Session ids may be given in full, as a unique prefix, or as a title.
"""

from __future__ import annotations

import json

from rich.cells import cell_len

from engine.archive import Session
from engine.archive.sessions import LISTED_BY, PRUNE_DAYS, from_source, shown_previews, stored_previews, titled
from engine.clock import days, shown_time
from engine.counts import counted, msgs
from engine.errors import BadSearchFilter, SessionLive, WorkbenchError
from engine.export_file import write_export
from engine.home import Home
from engine.memory import history
from engine.runner.claims import unbacked_claims
from engine.session_writes import session_writes
from engine.textsafety import cells, flat_line, inline, quoted, shell_word, visible
from engine.values import call_name

from . import Output, UsageError, add_command
from .echo import echoed
from .fit import MIN_FREE, cut_cells, fit_row, folded, labelled, tell, terminal_width, wrapped
from .index_upgrade import upgrade_before_search
from .numbers import COUNT, ID, ROWS, number

SESSION_HELP = "the session's id, a unique id prefix or its exact title"


def register(subparsers, common) -> None:
    sessions = add_command(subparsers, "sessions", common)
    sessions.set_defaults(handler=list_sessions, limit=20, offset=0, source=None, all=False, read_only=True)
    sub = sessions.add_subparsers(dest="sessions_command", metavar="ACTION")

    ls = sub.add_parser("list", parents=[common], help="sessions, newest first")
    ls.add_argument("--limit", type=ROWS, default=20, help="at most this many sessions (default 20)")
    ls.add_argument("--offset", type=COUNT, default=0, help="skip this many sessions first (paging)")
    ls.add_argument("--source", help="only this source (cli, telegram, workbench, ...)")
    ls.add_argument("--all", action="store_true", help="include archived sessions")
    ls.set_defaults(handler=list_sessions, read_only=True)

    search = sub.add_parser("search", parents=[common], help="full-text search, best hit per lineage")
    search.add_argument("query", metavar="QUERY", help="the words to find, in any language (quote several)")
    search.add_argument("--limit", type=ROWS, default=20, help="at most this many results (default 20)")
    search.add_argument("--offset", type=COUNT, default=0, help="skip this many results first (paging)")
    search.add_argument("--role", action="append", help="only messages with this role (repeatable, or comma-separated)")
    search.add_argument("--sort", choices=["newest", "oldest"], help="order by time instead of relevance")
    search.add_argument("--prefix", action="store_true", help="treat the last word as a prefix (search as you type)")
    search.set_defaults(
        handler=search_sessions, read_only=False, creates_home=False
    )  # may extend the CJK index in workbench.db

    show = sub.add_parser("show", parents=[common], help="a session and its messages")
    show.add_argument("session", metavar="ID", help=SESSION_HELP)
    show.add_argument("--around", type=ID, metavar="MESSAGE_ID", help="only a window around this message")
    show.add_argument("--window", type=COUNT, default=5, help="messages either side of --around (default 5)")
    show.add_argument("--limit", type=ROWS, help="at most this many messages")
    show.add_argument("--offset", type=COUNT, default=0, help="skip this many messages first (paging)")
    show.add_argument("--archived", action="store_true", help="include rows archived by compaction or rewound")
    show.set_defaults(handler=show_session, read_only=True)

    lineage = sub.add_parser("lineage", parents=[common], help="root, chain to the tip, and children")
    lineage.add_argument("session", metavar="ID", help=SESSION_HELP)
    lineage.set_defaults(handler=show_lineage, read_only=True)

    export = sub.add_parser("export", parents=[common], help="a session (or its lineage) as JSON or Markdown")
    export.add_argument("session", metavar="ID", help=SESSION_HELP)
    export.add_argument(
        "--format",
        choices=["json", "markdown"],
        default="json",
        help="json (the default: state.db's rows, which Hermes's import reads back) or markdown",
    )
    export.add_argument("--lineage", action="store_true", help="the whole chain from the root to the tip")
    export.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of stdout")
    export.add_argument("--force", action="store_true", help="replace FILE if it exists")
    export.set_defaults(handler=export_session, read_only=True)

    rename = sub.add_parser("rename", parents=[common], help="set a session's title (empty clears it)")
    rename.add_argument("session", metavar="ID", help=SESSION_HELP)
    rename.add_argument("title", metavar="TITLE", help='the new title ("" clears it)')
    rename.set_defaults(handler=rename_session, read_only=False, creates_home=False)

    archive = sub.add_parser("archive", parents=[common], help="hide a session (with its conversation) from lists")
    archive.add_argument("session", metavar="ID", help=SESSION_HELP)
    archive.add_argument("--undo", action="store_true", help="show it again")
    archive.add_argument(
        "--force", action="store_true", help="archive it even though it has not ended (Hermes may write to it again)"
    )
    archive.set_defaults(handler=archive_session, read_only=False, creates_home=False)

    delete = sub.add_parser("delete", parents=[common], help="delete a session and its messages")
    delete.add_argument("session", metavar="ID", help="the session's whole id or exact title (never a prefix)")
    delete.add_argument("--yes", action="store_true", help="confirm the deletion")
    delete.add_argument(
        "--force", action="store_true", help="delete it even though it has not ended (Hermes may write to it again)"
    )
    delete.set_defaults(handler=delete_session, read_only=False, creates_home=False)

    prune = sub.add_parser("prune", parents=[common], help="delete ended sessions older than N days")
    prune.add_argument(
        "--days",
        type=number(*PRUNE_DAYS, "a number of days"),
        required=True,
        metavar="N",
        help="those started more than N days ago (required; 0: every ended session, as Hermes's --older-than 0)",
    )
    prune.add_argument("--source", help="only sessions from this source (cli, telegram, workbench, ...)")
    prune.add_argument("--yes", action="store_true", help="confirm the deletion")
    prune.add_argument(
        "--dry-run", action="store_true", help="list every session it would delete, delete nothing (even with --yes)"
    )
    prune.set_defaults(handler=prune_sessions, read_only=False, creates_home=False)

    rebuild = sub.add_parser("reindex", parents=[common], help="rebuild the CJK search index (workbench.db)")
    rebuild.set_defaults(handler=reindex, read_only=False, creates_home=False)


def resolve(home: Home, text: str, *, exact: bool = False) -> Session:
    """An id, unique id prefix or title (the engine's rule, shared with the TUI; ``exact``: whole ones)."""
    return home.archive.find_session(text, exact=exact)


# The columns `sessions list` leaves out, in this order, where the terminal leaves its title no room (--json has them).
NARROW_DROPS = ("source", "messages", "start", "state")


def _when(value: str | None) -> str:
    return shown_time(value) or ""


def list_sessions(home: Home, args) -> Output:
    rows = home.archive.list_sessions(
        limit=args.limit, offset=args.offset, source=args.source, include_archived=args.all
    )
    untitled = [s.id for s in rows if not s.title]
    texts = home.archive.first_messages(untitled)
    previews, stored = shown_previews(texts), stored_previews(texts)
    damaged = home.archive.listing_damage(len(rows), args.limit)
    data = {
        "sessions": [{**s.to_dict(), "preview": stored.get(s.id)} for s in rows],
        "count": len(rows),
        "warning": damaged,  # (state.db damaged: what was listed is what could be read; also on stderr)
    }
    if damaged:
        tell(inline(f"warning: {damaged}"))

    def text() -> str:
        if not rows:  # (an --offset past the last session listed some: "no sessions" would be untrue)
            listed = args.offset and home.archive.list_sessions(limit=1, source=args.source, include_archived=args.all)
            if listed:
                return f"no more sessions: the list ends before --offset {args.offset}"
            return f"no sessions from source {quoted(args.source)}" if args.source else "no sessions"
        ids = [visible(s.id) for s in rows]  # as printed: a control character takes its symbol's cells
        width = max(map(cell_len, ids + ["id"]))
        when = max((cell_len(_when(s.to_dict()["started_at"])) for s in rows), default=0)
        # the time each row shows is the one the list is ordered by (newest first): said in the header
        cells = {
            "start": (f"{LISTED_BY:<{when}}  ", lambda s, shown: f"{_when(s.to_dict()['started_at'])}  "),
            "id": (f"{'id':<{width}}  ", lambda s, shown: f"{shown}{' ' * (width - cell_len(shown))}  "),
            "source": (f"{'source':<9} ", lambda s, shown: f"{s.source:<9} "),
            "messages": (f"{'messages':>10}  ", lambda s, shown: f"{s.message_count:>5} {msgs(s.message_count):<4}  "),
            "state": (f"{'state':<5}  ", lambda s, shown: f"{s.state:<5}  "),
        }
        columns = terminal_width()  # (a title gives way first, then the line's end: --json has them whole)
        for name in NARROW_DROPS:  # (a narrow terminal leaves out columns before the title goes)
            if cell_len("".join(header for header, _ in cells.values())) + MIN_FREE <= columns:
                break
            del cells[name]
        lines = [cut_cells("".join(header for header, _ in cells.values()) + "title", columns)]
        indent = " " * cell_len(cells["start"][0]) if "start" in cells else "  "  # (ids on a line of their own)
        for s, shown in zip(rows, ids, strict=True):
            head = "".join(cell(s, shown) for _, cell in cells.values())
            tail = (f"  (child of {s.parent_session_id})" if s.parent_session_id else "") + (
                "  · archived" if s.archived else ""  # (shown with --all; as search marks it)
            )
            lines += fit_row(head, titled(s.title, previews.get(s.id)) or "", tail, columns, indent)
        return "\n".join(lines)

    return Output(data, text)


def search_sessions(home: Home, args) -> Output:
    try:  # --role and --sort, and role: and sort: in QUERY: the one reader the TUI's search box has
        filters = home.archive.search_filters(args.query, roles=args.role or (), sort=args.sort)
    except BadSearchFilter as exc:
        raise UsageError(exc.message) from exc
    query, roles = filters.text, list(filters.roles) or None
    if not query.strip():  # nothing to look for is wrong usage, not a search that found nothing
        raise UsageError("search needs words to look for, e.g. `workbench sessions search deploy`")
    if unsearched := home.archive.nothing_searched(query, prefix=args.prefix):  # (as no words at all)
        raise UsageError(unsearched)
    upgrade_before_search(home, query, prefix=args.prefix)
    hits = home.archive.search(
        query, limit=args.limit, offset=args.offset, role=roles, prefix=args.prefix, sort=filters.sort
    )
    note = home.archive.search_note(query, hits, prefix=args.prefix)
    # An --offset past the last match found them: saying "no matches", or how to find some, would be untrue.
    past_end = not hits and args.offset > 0
    past_end = past_end and bool(home.archive.search(query, limit=1, role=roles, prefix=args.prefix))
    # Whole words only: `t` finds no word "t" while the TUI, searching as you type, lists what starts with it.
    missed = not hits and not past_end
    widens = missed and not args.prefix and bool(home.archive.search(query, limit=1, role=roles, prefix=True))
    hints = [f"the matches end before --offset {args.offset}" if past_end else None]
    hints.append("words that start with the last one match with --prefix" if widens else None)
    hint = "; ".join(filter(None, hints)) or None
    data = {"query": args.query, "results": [h.to_dict() for h in hits], "count": len(hits), "note": note}
    if hint:
        data["hint"] = hint

    def text() -> str:
        said = [f"note: {note}"] if note else []
        if not hits:
            found = "no more matches" if past_end else "no matches"
            return "\n".join([*said, f"{found} for {quoted(echoed(args.query))}" + (f"; {hint}" if hint else "")])
        lines = said
        previews = home.archive.hit_previews(hits)
        columns = terminal_width()  # (each line fits: the title gives way, and the snippet keeps its match)
        for h in hits:
            title = titled(h.title, previews.get(h.session_id)) or ""
            mark = "  · archived" if h.archived else ""  # (hidden from lists, still searched: as the TUI marks it)
            stamp, role = f"{_when(h.when)}  {h.session_id}", f"[{h.role} #{h.match_message_id}]  "
            head = f"{stamp}  {role}"
            if cell_len(visible(head)) > columns - MIN_FREE:  # (the id `sessions show` takes is never cut: under it)
                lines += folded(stamp, columns, hang="", whole=h.session_id)  # (nor split: on its own line)
                head = "    " + role
            lines += fit_row(head, title, mark, columns, "    ")
            lines.append("    " + h.snippet_in(columns - 4))
        return "\n".join(lines)

    return Output(data, text)


def _message_lines(m, claim: bool, width: int) -> list[str]:
    """One message of a transcript in ``width`` cells: its text ``labelled`` under its start, after
    ``#ID role:`` (under four spaces where that label takes more than half the line), with the tool calls it
    made and whether it claims a save nothing backs. Its line breaks stay line breaks, as ``memory show``
    keeps an entry's: a message is read whole here (a list has its one-line preview), and its code, lists
    and tool output read as written; its tabs show as ⇥ (the terminal drew one up to eight cells wide)."""
    calls = ", ".join(call_name(c) or "?" for c in (m.tool_calls if isinstance(m.tool_calls, list) else []))
    kind = (
        m.role
        + (f":{m.tool_name}" if m.tool_name else "")
        + ("" if m.active else " (archived)" if m.compacted else " (rewound)")
    )
    text = (m.text or "").strip().replace("\t", "⇥") + (f"  [calls {calls}]" if calls else "")
    text += "  [unbacked claim: no memory or skill write in this turn]" if claim else ""
    label = f"#{m.id} {kind}: "
    if cells(visible(label)) * 2 <= width:
        return labelled(label, text, width, chop=True)
    return [visible(label.rstrip()), *wrapped(text, width, "    ", chop=True)]


def show_session(home: Home, args) -> Output:
    archive = home.archive
    session = resolve(home, args.session)
    data: dict = {"session": session.to_dict()}
    if args.around is not None:
        anchor = archive.message(args.around)
        if anchor is None or anchor.session_id != session.id:
            raise WorkbenchError(f"Message {args.around} is not in session {session.id}.")
        messages, before, after = archive.message_window(args.around, args.window)
        data.update(messages_before=before, messages_after=after)
    else:
        messages = archive.messages(session.id, include_archived=args.archived, limit=args.limit, offset=args.offset)
    writes = session_writes(home, session.id, messages)
    data["messages"] = [{**m.to_dict(), "writes": [w.to_dict() for w in writes.get(m.id, [])]} for m in messages]
    claims = unbacked_claims(archive.messages(session.id))  # the whole session, whatever page is shown
    data["unbacked_claims"] = {"count": len(claims), "message_ids": claims}

    heading = data["heading"] = archive.heading(session)  # (the title, else the chain's or its first message)
    parent = session.parent_session_id
    continues = data["continues"] = parent if parent and archive.continued_in(parent) == session.id else None
    following = data["continued_in"] = archive.continued_in(session.id)

    def text() -> str:
        count = session.message_count
        head = f"{session.id}  {heading or '(untitled)'}  [{session.source}, {count} {msgs(count)}]"
        columns = terminal_width()
        lines = folded(head, columns, hang="")
        if continues:
            lines += folded(
                f"continues {continues}, ended by compression: workbench sessions show {shell_word(continues)}", columns
            )
        elif parent:
            lines += folded(f"child of {parent}: workbench sessions lineage {shell_word(session.id)}", columns)
        for m in messages:
            lines += _message_lines(m, m.id in claims, columns)
            for w in writes.get(m.id, []):
                lines += labelled("    ↳ ", f"{w.summary}: {flat_line(w.text)}", columns, chop=True)
        if following:
            lines += folded(f"continued in {following}: workbench sessions show {shell_word(following)}", columns)
        return "\n".join(lines)

    return Output(data, text)


def show_lineage(home: Home, args) -> Output:
    lineage = home.archive.lineage(resolve(home, args.session).id)
    data = lineage.to_dict()

    def text() -> str:
        links = [lineage.chain[0], *(f"-> {link}" for link in lineage.chain[1:])]
        chain = " ".join(["chain:", *links])  # (wider than the terminal: an id a line, none split)
        lines = [chain] if cell_len(visible(chain)) <= terminal_width() else ["chain:", *(f"  {x}" for x in links)]

        def walk(node: str, depth: int) -> None:
            lines.append("  " * depth + node)
            for child in lineage.children.get(node, []):
                walk(child, depth + 1)

        walk(lineage.root_id, 0)
        if lineage.loops_to is not None:
            lines += folded(
                f"(the parent of {lineage.root_id} is {lineage.loops_to}, below it: state.db's parent ids form a "
                "loop, so the root shown is where the walk up stopped)",
                terminal_width(),
            )
        return "\n".join(lines)

    return Output(data, text)


def export_session(home: Home, args) -> Output:
    session = resolve(home, args.session)
    exporter = home.archive.export_lineage if args.lineage else home.archive.export_session
    body = exporter(session.id, args.format)
    if args.output:
        write_export(home, args.output, body, force=args.force)
        return Output({"success": True, "path": args.output, "session_id": session.id}, f"wrote {args.output}")
    if args.format == "json":
        return Output(json.loads(body), body)
    return Output({"session_id": session.id, "markdown": body}, body)


def rename_session(home: Home, args) -> Output:
    session = resolve(home, args.session)
    taken = home.archive.title_to_take(session.id, args.title)
    title = home.archive.set_title(session.id, args.title, actor="user")
    moved = f"\n(taken from {taken}, an earlier segment of this conversation, now untitled)" if taken else ""
    return Output(
        {"success": True, "session_id": session.id, "title": title, "taken_from": taken},
        f"{session.id}: {title or '(untitled)'}{moved}",
    )


def archive_session(home: Home, args) -> Output:
    session = resolve(home, args.session)
    refused = "Nothing was archived: end it in Hermes first, or add --force to archive it anyway."
    live = None if args.undo or args.force else home.archive.live_archive_warning(session.id)
    if live:
        raise WorkbenchError(f"{live} {refused}")
    try:
        changed = home.archive.set_archived(session.id, not args.undo, actor="user", if_ended=not args.force)
    except SessionLive as exc:  # (resumed since it was read)
        raise WorkbenchError(f"{exc.message} {refused}") from exc
    state = "restored" if args.undo else "archived"
    whole = f" ({changed} sessions of its conversation)" if changed > 1 else ""  # (named: a prefix may have found it)
    text = f"{state} {session.id}{whole}" if changed else f"{session.id} is {state} already; nothing changed"
    return Output({"success": True, "session_id": session.id, "archived": not args.undo, "changed": changed}, text)


def delete_session(home: Home, args) -> Output:
    session = resolve(home, args.session, exact=True)
    live = None if args.force else home.archive.live_delete_warning(session.id)
    cited = history.entries_from(home.memory, set(home.archive.deleted_with(session.id)))
    if not args.yes:
        also = f" {live} To delete it anyway, add --yes --force." if live else ""
        memory = f" {history.cited_note(cited)}" if cited else ""
        raise WorkbenchError(
            f"Deleting {session.id} ({session.message_count} messages) cannot be undone; add --yes to confirm."
            f"{memory}{also}",
            cited=cited,
        )
    if live:
        raise WorkbenchError(f"{live} Nothing was deleted: end it in Hermes first, or add --force to delete it anyway.")
    try:
        home.archive.delete_session(session.id, actor="user", live=args.force)
    except SessionLive as exc:  # (reopened since it was read)
        raise WorkbenchError(f"{exc.message} Nothing was deleted: add --force to delete it anyway.") from exc
    said = f"deleted {session.id}" + (f"\nnote: {history.cited_note(cited)}" if cited else "")
    return Output({"success": True, "deleted": session.id, "cited": cited}, said)


def prune_sessions(home: Home, args) -> Output:
    if args.days < 0:
        raise UsageError("--days must be zero or more")
    older = f"{from_source(args.source)} older than {days(args.days)}"
    ids = home.archive.prunable(args.days, source=args.source)
    # what a prune does to sessions that have not ended, said alike by the dry run, the question and the prune
    warnings = home.archive.prune_warnings(args.days, args.source, ids)
    said = [f"warning: {w}" for w in warnings]
    if args.dry_run or not args.yes:  # what it would delete, so the confirmation is an informed one
        if not ids:
            nothing = f"No ended session{from_source(args.source)} is older than {days(args.days)}; nothing to prune."
            data = {"success": True, "would_prune": 0, "pruned": 0, "warnings": warnings}
            return Output(
                {**data, "dry_run": True, "sessions": []} if args.dry_run else data, "\n".join([nothing, *said])
            )
        if args.dry_run:  # every one, a line each: nothing is asked, so nothing is cut
            named = home.archive.labelled(ids)
            lines = [f"would prune {len(ids):,} ended session{'s' * (len(ids) != 1)}{older} (nothing was deleted):"]
            lines += [f"  {n['id']}  {flat_line(n['label'], 60)}".rstrip() for n in named]
            sessions = [{key: n[key] for key in ("id", "title", "preview")} for n in named]
            data = {"success": True, "dry_run": True, "would_prune": len(ids), "pruned": 0, "sessions": sessions}
            return Output({**data, "warnings": warnings}, "\n".join(lines + said))
        raise WorkbenchError(
            f"Pruning would delete {counted(len(ids), 'ended session')}{older}: "
            f"{home.archive.prune_listing(ids)}. Their child sessions stay, as roots. "
            + "".join(f"{w} " for w in warnings)
            + "Add --yes to delete them (--dry-run lists them all).",
            would_prune=len(ids),
            warnings=warnings,
        )
    count = home.archive.prune(args.days, source=args.source, actor="user")
    done = f"pruned {count} session{'s' * (count != 1)}"
    return Output({"success": True, "pruned": count, "warnings": warnings}, "\n".join([done, *said]))


def reindex(home: Home, args) -> Output:
    rows = home.archive.bigram_index.rebuild()
    return Output({"success": True, "messages_read": rows}, f"indexed {rows} messages")
