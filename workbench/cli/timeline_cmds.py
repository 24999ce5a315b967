"""``workbench timeline`` and ``workbench revert``: the history of what the agent knows, and undo."""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import asdict

from rich.cells import cell_len

from engine.clock import shown_time
from engine.diffs import WHITESPACE_ONLY, shown_diff, whitespace_only
from engine.home import Home
from engine.journal import ACTORS
from engine.textsafety import inline, visible
from engine.timeline import (
    SUBSYSTEMS,
    MalformedReference,
    Row,
    Timeline,
    TimelineError,
    detail_lines,
    filter_value,
    has_skill_diff,
    opens_line,
    outcome_lines,
    parse_since,
    preview_lines,
    why_line,
)

from . import Output, UsageError, add_command
from .catching_up import catch_up
from .fit import TIMES, commands, diff_line, fit_row, folded, phrased, terminal_width, wrapped
from .numbers import ID, whole

LIMIT = 50  # rows per page unless --limit says otherwise
FILTERS = {  # the listing's filters: registered from here, and repeated by the next page's command
    "since": {"metavar": "WHEN", "help": "only rows since then: 2h, 3d, 1w or an ISO date/time"},
    # (checked by the rule the TUI's search box follows, filter_value, not argparse's choices)
    "actor": {"metavar": "ACTOR", "help": f"only rows by this actor: {', '.join(ACTORS)}"},
    "subsystem": {"metavar": "NAME", "help": f"only rows of this subsystem: {', '.join(SUBSYSTEMS)}"},
    "target": {"help": "only rows about this target (memory, user, a skill, a pending id)"},
    "session": {"metavar": "ID", "help": "only rows from this session (its id, or the start of it)"},
    "search": {"metavar": "TEXT", "help": "only rows whose text contains TEXT"},
    "group": {"help": "only the rows of one group (shown in brackets after a row's summary)"},
}


def register(subparsers, common) -> None:
    timeline = add_command(subparsers, "timeline", common)
    for name, options in FILTERS.items():
        timeline.add_argument(f"--{name}", **options)
    timeline.add_argument(
        "--limit",
        type=whole(1, 100_000, "a number of rows"),
        default=LIMIT,
        metavar="N",
        help=f"at most N rows (default {LIMIT})",
    )
    timeline.add_argument("--before", type=ID, metavar="ID", help="rows older than this row id (paging)")
    timeline.set_defaults(handler=show_timeline, read_only=False, creates_home=False)
    shown = timeline.add_subparsers(dest="timeline_command", metavar="show", parser_class=subparsers._parser_class)
    one = shown.add_parser(
        "show", parents=[common], help="one row, with what a skill's SKILL.md read before and after an outside change"
    )
    one.add_argument("row", type=ID, metavar="ROW", help="a timeline row id (`workbench timeline`)")
    one.set_defaults(handler=show_row, read_only=False, creates_home=False)

    revert = add_command(
        subparsers,
        "revert",
        common,
        description=(
            "Undo a timeline row or a whole group. It applies at once, with no --yes to give (scripts rely on it: "
            "see docs/cli-contract.md, Confirmation); --dry-run first lists what it would change. Undoable: the "
            "revert is journaled as rows of its own, which `workbench revert` takes back in turn."
        ),
    )
    revert.add_argument(
        "ref",
        metavar="ROW_OR_GROUP",
        help="a timeline row id, or a group as `workbench timeline` shows it (outside:..., revert:...)",
    )
    revert.add_argument("--dry-run", action="store_true", help="list what would change and what would be refused")
    revert.add_argument(
        "--skill-md-only",
        action="store_true",
        help="a skill removed outside with support files no copy was kept of: bring back its SKILL.md alone",
    )
    revert.set_defaults(handler=revert_ref, creates_home=False)


def show_timeline(home: Home, args) -> Output:
    try:
        since = parse_since(args.since, home.clock.now()) if args.since else None
        actor, subsystem = (
            filter_value(name, value) if value else None
            for name, value in (("actor", args.actor), ("subsystem", args.subsystem))
        )
    except TimelineError as exc:  # a malformed option: a usage error, under the command's usage
        raise UsageError(exc.message) from None
    catch_up(home)
    timeline = Timeline(home)
    try:
        rows = timeline.page(
            before_id=args.before,
            limit=args.limit + 1,  # one more says whether an older page exists
            since=since,
            actor=actor,
            subsystem=subsystem,
            target=args.target,
            session_id=args.session,
            text=args.search,
            group=args.group,
        )
    except MalformedReference as exc:  # a --group of no group's form (blank too), as for revert
        raise UsageError(exc.message) from None
    more, rows = len(rows) > args.limit, timeline.with_sources(rows[: args.limit])
    reach = timeline.reach  # a shown-actor filter that stopped reading before the page filled
    below = reach.oldest_id if reach is not None else rows[-1].id if more else None
    stopped = (
        {"stopped": {**asdict(reach), "note": reach.note(len(rows)), "older": older(args, below)}} if reach else {}
    )

    columns = terminal_width()

    def text() -> str:
        if not rows and reach is None:
            return "No changes on the timeline match."
        # Each row's session, unless the filter names exactly the one session every row is of (the start
        # of an id matches several). An outside memory edit or a proposal Hermes staged names none: the
        # Hermes call found for it is shown under it.
        lines = [*listing(), *(wrapped(reach.note(len(rows)), columns) if reach is not None else [])]
        ends = [
            f"Older: {older(args, below)}" if below is not None else "",
            "Undo: workbench revert ROW_OR_GROUP" * bool(rows),
        ]
        lines += commands(ends, columns)
        return "\n".join(lines)

    def listing() -> list[str]:
        """A line a row (its summary gives way to the width: ``timeline show ID`` has it whole), and the
        lines under it that say where it came from, wrapped."""
        named = not args.session or any(r.session != args.session for r in rows)
        lines = []
        for r, head in zip(rows, heads(rows, columns), strict=True):
            tail = (
                (f"  ↶ reverted by row {r.reverted_by}" if r.reverted_by is not None else "")
                + (f"  [{r.group}]" if r.group else "")
                + (f"  (session {inline(r.session_id)})" if named and r.session_id else "")
            )
            # (the summary says what changed: its ids give way to a line of their own before it is cut)
            lines += fit_row(head, r.summary, tail, columns, " " * 9, free_first=True)
            # (a session id, a tool's or a skill's name, a path: a word wider than the line stands whole on its own)
            lines += wrapped(f"↳ {r.found_later}", columns, " " * 9, chop=False) if r.found_later else []
            lines += wrapped(f"← {r.source.describe()}", columns, " " * 9, chop=False) if r.source else []
            lines += wrapped(f"why: {r.why}", columns, " " * 9, chop=False) if r.why else []
        return lines

    return Output({"rows": [r.to_dict() for r in rows], **stopped}, text=text)


def heads(rows: list[Row], columns: int) -> list[str]:
    """Each row's id, time and actor, its time as long as ``columns`` leaves room for: at 30 columns the
    full head (38 cells) was cut in the actor, so a narrow terminal drops the seconds, then the year."""
    for stamp in TIMES:
        shown = [f"{r.id:>7}  {shown_time(r.at, stamp) or '?'}  {r.by:<8} " for r in rows]
        if all(cell_len(visible(head).rstrip()) <= columns for head in shown):
            break
    return shown


def show_row(home: Home, args) -> Output:
    """One row as the listing shows it, and for an outside edit or removal of a SKILL.md, the diff of what
    it changed (as the Timeline's detail shows it)."""
    timeline = Timeline(home)
    row = timeline.with_sources(timeline.rows_of(str(args.row)))[0]
    diff = timeline.skill_diff(row)
    kept = dropped_text(home, row)
    opened = timeline.skill_opened(row)

    def text() -> str:
        width = terminal_width()
        head, *rest = detail_lines(row)  # (as the Timeline screen's detail shows it: why and source too)
        lines = phrased(head.split(" · "), width, hang="  ")  # (wrapped at spaces: the terminal broke them in words)
        lines += [line for said in rest for line in wrapped(said, width, hang="  ", chop=False)]
        if opened is not None:  # (what enter on the Timeline selects on Skills)
            lines += wrapped(opens_line(opened, home.skills), width, hang="  ", chop=False)
        if kept is not None:
            lines += ["", "the file's text, kept in this row (--json gives it as kept):", *visible(kept).splitlines()]
        if diff is not None:
            lines.append("")
            shown = shown_diff(diff)
            lines += [WHITESPACE_ONLY] if whitespace_only(diff) else []
            lines += [row for d in shown for row in (["  …"] if d is None else diff_line(*d, width))]
            lines += [] if shown else ["(the file was empty)"]
        elif has_skill_diff(row):
            lines.append("(what it read before was not kept: it was last seen by an earlier version, or first seen)")
        return "\n".join(lines)

    shown = {
        **row.to_dict(),
        "why": why_line(row),
        **({"opens": opened.rel} if opened is not None else {}),
    }  # (how the workbench knows of it, as the text says)
    return Output({"row": shown, "diff": diff, **({"kept_text": kept} if kept is not None else {})}, text=text)


def dropped_text(home: Home, row: Row) -> str | None:
    """What an unreadable pending file held, for the row that dropped it (its bytes are kept there, not
    UTF-8 ones as ``\\xff``): to be copied back by hand, as ``pending restore`` cannot rebuild it."""
    if (row.subsystem, row.action) != ("approvals", "reject"):
        return None
    entry = home.journal.get(row.id)
    raw = entry.detail.get("raw") if entry is not None and "unusable" in entry.detail else None
    return raw if isinstance(raw, str) else None


def older(args, before: int) -> str:
    """The command for the next page: this listing's home, filters and size, before ``before``."""
    words = ["workbench", "timeline"]
    for name in ("home", *FILTERS):
        value = getattr(args, name, None)
        if value is not None:
            words += [f"--{name}", shlex.quote(str(value))]
    if args.limit != LIMIT:
        words += ["--limit", str(args.limit)]
    return " ".join([*words, "--before", str(before)])


def revert_ref(home: Home, args) -> Output:
    try:
        return _revert(Timeline(home), args)
    except MalformedReference as exc:  # as a malformed id is for every other command
        raise UsageError(exc.message) from None


def _fitted(lines: Iterable[str]) -> list[str]:
    """A revert's lines (a row, its summary, what reverting it does or why not), each wider than the terminal
    wrapped at spaces, its continuation two cells in (the terminal broke it inside a word)."""
    columns = terminal_width()
    return [part for line in lines for part in folded(line, columns)]


def _revert(timeline: Timeline, args) -> Output:
    if args.dry_run:
        preview = timeline.preview(args.ref, skill_md_only=args.skill_md_only)
        lines = _fitted(f"would {line}" for line in preview_lines(preview))
        if preview.get("error") and not preview["refused"]:  # (each refused row says why on its own line)
            lines.append(f"error: {preview['error']}")
        # Exits as the revert would: 1, with its error, when a row would be refused or nothing would change.
        return Output(
            {"success": "error" not in preview, **preview}, text="\n".join(lines) or "Nothing to revert.", report=True
        )
    result = timeline.revert(args.ref, skill_md_only=args.skill_md_only)
    lines = _fitted(outcome_lines(result))
    if result.get("undo_ref"):  # (as memory repair's: the command that takes it back)
        lines.append(f"  undo: workbench revert {result['undo_ref']}")
    if result.get("error") and not result["refused"]:
        lines.append(f"error: {result['error']}")
    # What it changed goes on stdout even when a row was refused (exit 1), so a log of stdout keeps it.
    return Output(result, text="\n".join(lines), report=bool(result.get("reverted")))
