"""``workbench pending list|show|approve|reject|restore``: the approval queue from the shell."""

from __future__ import annotations

from engine.approvals import PendingRecord
from engine.approvals.preview import budget_label, target_line
from engine.approvals.queue import NOT_APPLIED
from engine.clock import stamped
from engine.counts import counted
from engine.diffs import WHITESPACE_ONLY, marked, whitespace_only
from engine.errors import WorkbenchError
from engine.home import Home
from engine.textsafety import clipped, cut, flat_line, inline

from . import Output, UsageError, add_command
from .catching_up import catch_up, catch_up_if_journaled
from .fit import commands, diff_line, fit_row, phrased, terminal_width, wrapped


def register(subparsers, common) -> None:
    pending = add_command(subparsers, "pending", common)
    sub = pending.add_subparsers(dest="pending_command", metavar="ACTION", required=True)

    listing = sub.add_parser("list", parents=[common], help="pending writes, oldest first")
    listing.add_argument("--subsystem", choices=("memory", "skills"), help="only this subsystem")
    listing.set_defaults(handler=list_pending, read_only=True)  # (it catches up in a journaled home only)

    show = sub.add_parser("show", parents=[common], help="a proposal with its diff, budget and duplicate warnings")
    show.add_argument("id", metavar="ID", help="the pending write's 8-character id (`workbench pending list`)")
    show.add_argument("--edit", metavar="TEXT", help="preview this text in place of the proposed one")
    show.set_defaults(handler=show_pending, creates_home=False)

    approve = sub.add_parser("approve", parents=[common], help="apply pending writes (a stale one fails and stays)")
    approve.add_argument("id", metavar="ID|all", help="a pending write's id, or all to approve every one")
    approve.add_argument(
        "--edit",
        metavar="TEXT",
        help="apply this text instead of the proposed one (one ID only; for "
        "a memory batch one text per add or replace, separated by a line holding only §)",
    )
    approve.add_argument("--subsystem", choices=("memory", "skills"), help="with 'all': only this subsystem")
    approve.add_argument(
        "--anyway",
        action="store_true",
        help="apply a memory write even where the entry it hits was written after it was staged",
    )
    approve.set_defaults(handler=approve_pending, creates_home=False)

    reject = sub.add_parser("reject", parents=[common], help="drop pending writes (kept in the journal)")
    reject.add_argument("id", metavar="ID|all", help="a pending write's id, or all to reject every one")
    reject.add_argument("--subsystem", choices=("memory", "skills"), help="with 'all': only this subsystem")
    reject.set_defaults(handler=reject_pending, creates_home=False)

    restore = sub.add_parser("restore", parents=[common], help="undo a rejection: the proposal waits again")
    restore.add_argument("id", metavar="ID", help="the rejected write's id (`workbench timeline` shows it)")
    restore.set_defaults(handler=restore_pending, creates_home=False)


def age_text(seconds: float) -> str:
    """Compact age: ``just now``, ``45s ago``, ``12m ago``, ``3h ago``, ``2d ago``."""
    if seconds < 1:
        return "just now"
    size, unit = next(
        (size, unit) for size, unit in ((86400, "d"), (3600, "h"), (60, "m"), (1, "s")) if seconds >= size
    )
    return f"{int(seconds // size)}{unit} ago"


def _row(home: Home, record: PendingRecord) -> dict:
    age = record.age(home.clock.now())
    return {
        "id": record.id,
        "subsystem": record.subsystem,
        "action": record.action,
        "summary": record.summary,
        "claim_problem": record.claim_problem,
        "origin": record.origin,
        "created_at": record.created_iso,
        "age_seconds": None if age is None else round(age, 1),
        "age": "unknown" if age is None else age_text(age),
        "actor": record.actor,
        "staged_by": record.staged_by,
        "session_id": record.session_id,
        "flags": record.flags,
    }


def list_pending(home: Home, args) -> Output:
    """The queue, read-only. In a home a workbench already journals, what happened outside is journaled
    first (``catch_up``), so a Hermes record seen here keeps its story when Hermes decides it later; a
    home no workbench has journaled has no story to keep, and is left exactly as it is."""
    catch_up_if_journaled(home)
    scan = home.approvals.scan(args.subsystem)
    rows = [_row(home, r) for r in scan.records]
    problems = [p.to_dict() for p in scan.problems]
    columns = terminal_width()
    lines = [f"Pending writes ({len(rows)}):"] if rows else wrapped(home.approvals.empty_note(args.subsystem), columns)
    origins = [record.origin_label + (" (Hermes)" if record.by_hermes else "") for record in scan.records]
    width = max(map(len, origins), default=0)
    for row, origin in zip(rows, origins, strict=True):
        summary = flat_line(row["summary"])  # (a file name in it may hold a line break)
        head = f"  {row['id']}  {row['subsystem']:<6}  {origin:<{width}}  {row['age']:>8}  "
        lines += fit_row(head, summary, "", columns, " " * 6)
        for reason in filter(None, [row["claim_problem"], *row["flags"]]):  # (sentences: wrapped, never cut)
            lines += wrapped(f"⚠ {reason}", columns, " " * 6)
    if rows:
        shown = [
            "Show: workbench pending show ID",
            "Apply: workbench pending approve ID",
            "Drop: workbench pending reject ID",
        ]
        lines += commands(shown, columns)
    lines += [f"warning: skipped {p['path']}: {p['error']}" for p in problems]
    return Output({"pending": rows, "problems": problems}, text="\n".join(lines))


def show_pending(home: Home, args) -> Output:
    home.approvals.get(args.id)  # an id that names nothing is refused before anything is journaled
    catch_up(home)  # Hermes's writes journaled first (a hit on an entry written since staging is dated), and its record
    preview = home.approvals.preview(args.id, edit=args.edit)
    return Output(preview, text=lambda: render_preview(preview))


def render_preview(preview: dict) -> str:
    staged = stamped(preview["created_at"], seconds=True)
    if not preview["time_known"]:
        staged = f"unknown (its record holds {staged}: the clock that wrote it was wrong)"
    columns = terminal_width()  # (its sentences wrap to it: the terminal broke them inside words)
    where = [f"in session {inline(preview['session_id'])}"] if preview.get("session_id") else []
    where += [f"(message {preview['message_id']})"] if preview.get("message_id") is not None else []
    origin = [f"origin: {preview['origin']} ({preview['actor']})", f"staged: {staged}"]
    origin += ["by Hermes"] * (preview["staged_by"] == "hermes") + [" ".join(where)] * bool(where)
    lines = [
        *wrapped(
            f"# Pending {preview['subsystem']} write {preview['id']}: {flat_line(preview['summary'])}",
            columns,
            hang="  ",
        ),
        *phrased(origin, columns, hang="  ", sep="   "),
    ]
    if preview.get("error"):
        lines += wrapped(f"would fail: {preview['error']}", columns, hang="  ")
        lines += [f"it asks to write: {clipped(text)}" for text in preview.get("proposed") or []]
        if preview.get("proposed_count", 0) > len(preview.get("proposed") or []):
            lines.append(f"  and {preview['proposed_count'] - len(preview['proposed']):,} more texts")
    if preview.get("stale"):  # its diff still follows: what approving would take away
        lines += wrapped(f"would fail: {preview['stale']}", columns, hang="  ")
    if preview.get("umbrella"):  # (the label names the skill the agent asked for)
        lines += wrapped(f"note: {preview['umbrella']}", columns, hang="  ")
    lines += [
        line for target in preview.get("targets") or [] for line in wrapped(target_line(target), columns, hang="  ")
    ]
    for reason in preview.get("flags", []):
        lines += wrapped(f"⚠ flagged: {reason}", columns, hang="  ")
    budget = preview.get("budget")
    if budget:
        lines += wrapped(f"budget ({budget_label(preview)}): {budget['text']}", columns, hang="  ")
    for dup in preview.get("duplicates", []):
        kind = "duplicates" if dup["exact"] else f"nearly duplicates ({dup['score']:.0f}%)"
        lines += wrapped(f"warning: proposal {kind} an existing entry: {dup['existing']}", columns, hang="  ")
    if preview.get("files"):  # a consolidation plan: the diff below covers every file it touches
        plan = [
            f"absorbs: {', '.join(preview['absorbed'])}",
            f"reason: {preview['reason']}",
            *(f"drops {d['section']} of {d['skill']}: {d['reason']}" for d in preview.get("dropped") or []),
            *(
                f"cron job {c['job_name'] or c['job_id']}: {', '.join(c['before'])} -> {', '.join(c['after'])}"
                for c in preview.get("cron") or []
            ),
        ]
        lines += [line for said in plan for line in wrapped(said, columns, hang="  ")]
    diff = preview.get("diff") or []
    payload = preview.get("payload") or {}
    if preview.get("error") and not diff and payload.get("action") == "patch":  # what it asks, to judge it
        # as written, spaces kept (a difference in spacing may be why it is not found)
        for label, key in (("it asks to replace", "old_string"), ("with", "new_string")):
            text = payload.get(key)
            lines.append(f"{label}: {cut(inline(text), 300) if isinstance(text, str) else '(none)'}")
    if diff or not preview.get("error"):  # (a refusal has no diff to speak of)
        lines.append("")
        lines += [WHITESPACE_ONLY] if whitespace_only(diff) else []
        lines += [row for line in diff for row in diff_line(*marked(line), columns)] or ["(no textual change)"]
    return "\n".join(lines)


def _decide(home: Home, args, one, many, done_key: str) -> Output:
    if args.id == "all":
        outcome = many(args.subsystem)
    else:
        if args.subsystem:
            raise UsageError("--subsystem goes with 'all' only")
        try:
            result = one(args.id)
            if not result["success"] and done_key == "approved":  # refused: the record stays
                result = {**result, "error": NOT_APPLIED + str(result.get("error"))}
        except WorkbenchError as exc:
            result = {"id": args.id, "success": False, "error": exc.message}
        outcome = {done_key: [result] if result["success"] else [], "failed": [] if result["success"] else [result]}
    done, failed = outcome[done_key], outcome["failed"]
    data = {**outcome, "success": not failed}
    if failed:
        data["error"] = (
            failed[0]["error"]
            if len(failed) == 1
            else (f"{len(failed)} proposals could not be {done_key} and stay pending; see 'failed'.")
        )
    if args.id != "all" and failed:  # one proposal refused: said as every refusal is
        return Output(data, text=f"error: {data['error']}")
    if not (done or failed or outcome.get("left_unreadable")):  # `all` of an empty queue: as `pending list` says it
        return Output(data, text="\n".join(wrapped(home.approvals.empty_note(args.subsystem), terminal_width())))
    columns = terminal_width()
    lines = [f"{done_key.capitalize()} {counted(len(done), 'pending write')}."]
    for item in done:  # (a row as `pending list` fits it; under an approved one, what it did)
        lines += fit_row(f"  {item['id']}  ", flat_line(item.get("summary")), "", columns, " " * 6)
        lines += wrapped(_applied(item), columns, " " * 4, hang="  ") if done_key == "approved" else []
    if outcome.get("group"):  # (one step, as the TUI's u and the Timeline's r take it back)
        lines.append(f"undo: workbench revert {outcome['group']}")
    lines += [item["message"] for item in outcome.get("left_unreadable", ())]  # (files it could not take)
    if failed:
        lines.append("Failed:")
        for item in failed:  # (its id, and why beneath, wrapped: the terminal broke it inside words)
            lines += [f"  {item['id']}", *wrapped(item["error"], columns, " " * 4, hang="  ")]
        lines.append(f"error: {len(failed)} of {len(done) + len(failed)} could not be {done_key} and stay pending.")
    # What was done goes on stdout even when a part failed (exit 1), so a log of stdout keeps it.
    return Output(data, text="\n".join(lines), report=bool(done))


def _applied(item: dict) -> str:
    """What an approval did, in the engine's words (the TUI's): one that found memory already so (a duplicate
    add) says it changed nothing; one made with --edit, that the edit was written, not the text its row names."""
    said = item.get("message") or "Applied."
    if item.get("changed") is False:
        return f"Nothing changed: {said}"
    return f"{said} (approved with your edit)" if item.get("edited") else said


def approve_pending(home: Home, args) -> Output:
    if args.id == "all" and args.edit is not None:
        raise UsageError("--edit applies to one proposal; give its ID instead of 'all'")
    return _decide(
        home,
        args,
        lambda rid: home.approvals.approve(rid, edit=args.edit, anyway=args.anyway),
        lambda sub: home.approvals.approve_all(sub, anyway=args.anyway),
        "approved",
    )


def reject_pending(home: Home, args) -> Output:
    return _decide(home, args, home.approvals.reject, lambda sub: home.approvals.reject_all(sub), "rejected")


def restore_pending(home: Home, args) -> Output:
    result = home.approvals.restore(args.id)
    return Output(result, text=f"{result['message']}\n  {result['id']}  {flat_line(result['summary'])}")
