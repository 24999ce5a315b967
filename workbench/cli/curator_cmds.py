"""``workbench curator run|status|pause|resume|consolidate|purge|rollback|ledger``: skill lifecycle from the shell."""

from __future__ import annotations

import argparse

from engine.clock import stamped
from engine.counts import counted
from engine.curator.ledger import EMPTY, columns, ledger_line, one_line_each, shortened
from engine.curator.run import counts_lines, purge_days_typed
from engine.home import Home
from engine.textsafety import inline

from . import Output, add_command
from .fit import folded, terminal_width, wrapped
from .numbers import ROWS


def purge_days(text: str) -> int:
    """``--days``: the engine's rule, in its words, as the Skills screen's purge box says them."""
    try:
        return purge_days_typed(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(subparsers, common) -> None:
    curator = add_command(subparsers, "curator", common)
    sub = curator.add_subparsers(dest="curator_command", metavar="ACTION", required=True)

    run = sub.add_parser("run", parents=[common], help="apply the lifecycle rule now (writes a report)")
    run.add_argument("--dry-run", action="store_true", help="report what would change, change nothing")
    run.set_defaults(handler=run_curator, creates_home=False)

    status = sub.add_parser("status", parents=[common], help="state counts, last run, settings")
    status.set_defaults(handler=curator_status, read_only=True)

    for name, handler, text in (
        ("pause", pause_curator, "stop automatic passes (the flag Hermes honours too)"),
        ("resume", resume_curator, "let automatic passes run again"),
    ):
        sub.add_parser(name, parents=[common], help=text).set_defaults(handler=handler, creates_home=False)

    consolidate = sub.add_parser(
        "consolidate", parents=[common], help="plan one merge of overlapping skills and stage it for review"
    )
    consolidate.set_defaults(handler=consolidate_skills, creates_home=False)

    purge = sub.add_parser("purge", parents=[common], help="delete archived skills older than N days (blobs kept)")
    purge.add_argument(
        "--days",
        type=purge_days,
        required=True,
        metavar="N",
        help="only skills archived at least N days ago",
    )
    purge.add_argument("--yes", action="store_true", help="confirm the purge")
    purge.add_argument("--dry-run", action="store_true", help="list what would be purged")
    purge.set_defaults(handler=purge_archive, creates_home=False)

    rollback = sub.add_parser(
        "rollback",
        parents=[common],
        help="undo the files one ledger entry changed",
        description=(
            "Undo the files one ledger entry changed. It applies at once, with no --yes to give (scripts rely on "
            "it: see docs/cli-contract.md, Confirmation). Undoable: the rollback is a ledger entry of its own, "
            "which `workbench curator rollback` takes back in turn."
        ),
    )
    rollback.add_argument(
        "ledger_id", metavar="LEDGER_ID", help="the ledger entry to undo (`workbench curator ledger`)"
    )
    rollback.set_defaults(handler=rollback_entry, creates_home=False)

    ledger = sub.add_parser("ledger", parents=[common], help="recent ledger entries, newest first")
    ledger.add_argument("--limit", type=ROWS, default=20, help="at most this many entries (default 20)")
    ledger.set_defaults(handler=show_ledger, read_only=True)


def run_curator(home: Home, args) -> Output:
    report = home.curator.run(dry_run=args.dry_run)
    waiting = home.curator.awaiting_review()
    lines = report.outcome(waiting)
    return Output({**report.to_dict(), "awaiting_review": waiting}, text=_fitted(lines, inline(report.report_path)))


def curator_status(home: Home, args) -> Output:
    status = home.curator.status()
    settings = status["settings"]
    lines = [
        f"curator: {_state(status)}  runs: {status['run_count']}  last run: {_last_run(status)}",
        f"  last summary: {status['last_run_summary'] or '-'}{_dry_run(status)}",
        *(f"  {line}" for line in counts_lines(status)),
        f"  pinned: {', '.join(status['pinned']) or '-'}",
        f"  stale after {settings['stale_after_days']} d, archive after {settings['archive_after_days']} d",
        f"  schedule: every {settings['interval_hours']:g} h after {settings['min_idle_hours']:g} h idle; "
        f"automatic consolidation {'on' if settings['consolidate'] else 'off'}",
        f"  next pass: {stamped(status['next']['next_at']) or 'not scheduled'} — {status['next']['reason']}",
    ]
    for problem in (status["policy_problem"], status["usage_problem"]):
        lines += [f"⚠ {inline(problem)}"] if problem else []
    return Output(status, text=_fitted(lines))


def _fitted(lines: list[str], path: str = "") -> str:
    """``lines`` as printed: one wider than the terminal wraps at spaces, its continuation deeper, but
    never inside ``path`` (the report's, a user copies it): that goes whole on a line of its own."""
    columns = terminal_width()
    return "\n".join(part for line in lines for part in folded(line, columns, whole=path))


def _state(status: dict) -> str:
    """What governs automatic passes, first: off in config.yaml, else paused, else on."""
    if not status["enabled"]:
        return "DISABLED" + (" (and paused)" if status["paused"] else "")
    return "PAUSED (enabled in config.yaml)" if status["paused"] else "ENABLED"


def _last_run(status: dict) -> str:
    """The last pass's time, or for a first check's seed the time it deferred the first pass at."""
    at = stamped(status["last_run_at"])
    if not at:
        return "never"
    return f"never (the first pass was deferred at {at})" if status["seeded_only"] else at


def _dry_run(status: dict) -> str:
    """Which pass the summary is, when a Hermes dry run wrote it: not the last run's on the line above."""
    dry = status["last_summary_dry_run"]
    if dry is None:
        return ""
    real = "no real pass has run yet" if _last_run(status).startswith("never") else "last run is the last real pass"
    at = f" at {stamped(dry['at'])}" if dry["at"] else ", its time unknown"
    return f" (a dry run{at}: it changed nothing; {real})"


def pause_curator(home: Home, args) -> Output:
    result = home.curator.pause()
    return Output(result, text=result["message"])


def resume_curator(home: Home, args) -> Output:
    result = home.curator.resume()
    return Output(result, text=result["message"])


def consolidate_skills(home: Home, args) -> Output:
    result = home.curator.consolidation.propose()
    return Output(result, text=result.get("message") or f"error: {result.get('error')}")


def purge_archive(home: Home, args) -> Output:
    if not args.yes and not args.dry_run:
        error = (
            "Purging deletes archived skills from disk (their files stay restorable from the ledger's blobs). "
            "Add --yes to confirm, or --dry-run to preview; nothing was purged."
        )
        return Output({"success": False, "error": error, "purged": []}, text=f"error: {error}")
    result = home.curator.purge(args.days, dry_run=args.dry_run)
    names = [c["path"] for c in (result["candidates"] if args.dry_run else result["purged"])]
    head = "would purge" if args.dry_run else "purged"
    return Output(
        result, text=f"curator: {head} {counted(len(names), 'archived skill')}" + "".join(f"\n  {n}" for n in names)
    )


def rollback_entry(home: Home, args) -> Output:
    result = home.curator.rollback(args.ledger_id)
    return Output(result, text=result["message"])


def show_ledger(home: Home, args) -> Output:
    entries = home.curator.ledger(args.limit)
    listed = [{**e.to_dict(), "journal_actor": e.journal_actor} for e in entries]
    lines = ledger_lines(entries, terminal_width()) or wrapped(EMPTY, terminal_width())
    return Output({"entries": listed}, text="\n".join(lines))


def ledger_lines(entries: list, width: int) -> list[str]:
    """One line an entry where every line fits ``width``; else, for every entry alike so the columns still
    line up, its id, time and action, then its skill (its folder whole) and who under them: at 60 and 80
    columns a row of 89 cells wrapped into what read as the next row."""
    shown = columns(entries)
    rows = list(zip(entries, shown, shortened(entries), strict=True))
    if one_line_each(entries, shown, width):
        return [ledger_line(e, shown) for e, shown, _ in rows]
    lines = []
    for e, (when, action, skill, actor), whole in rows:
        lines.append(f"{e.id}  {when}  {action}".rstrip())
        lines += wrapped(f"{whole or skill.rstrip()}  by {actor}", width, indent="    ", hang="  ", chop=False)
    return lines
