"""``workbench memory repair``: why a memory file no longer round-trips, and the repairs for it.

Without a repair option it lists the causes (with entry and line numbers), the repairs on
offer as the options that make them, and the file's hash. With one it makes that repair
through ``engine.memory.repair`` (journaled as the user, undoable with ``memory undo``);
``--dry-run`` shows the resulting file instead, and ``--expect HASH`` refuses the repair
if the file is no longer the one that was looked at.
"""

from __future__ import annotations

import argparse

from engine.home import Home
from engine.memory import TARGETS, repair
from engine.memory.format import LISTED, far_over
from engine.memory.ops import Refusal
from engine.textsafety import quoted

from . import Output, UsageError
from .memory_cmds import result_text
from .numbers import whole

ENTRY = whole(1, 1_000_000, "an entry number")


def _pair(what: str):
    """``N:M`` with two whole numbers from 1 (entry and line, or entry and chars)."""

    def parse(text: str) -> tuple[int, int]:
        first, sep, second = text.partition(":")
        if not sep:
            raise argparse.ArgumentTypeError(f"{quoted(text)} is not {what}")
        return ENTRY(first), ENTRY(second)

    parse.__name__ = what
    return parse


class _Writes(argparse.Action):
    """A repair option: it needs a writable home, so only the listing opens it read-only
    (and provably changes nothing, not even a first workbench.db)."""

    def __init__(self, option_strings, dest, nargs=None, **kwargs):
        self.flag = nargs == 0
        super().__init__(option_strings, dest, nargs=nargs, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, True if self.flag else values)
        namespace.read_only = False


def register(sub, common) -> None:
    parser = sub.add_parser(
        "repair", parents=[common], help="why a memory file no longer round-trips, and repairs for it"
    )
    parser.add_argument("--target", choices=TARGETS, help="this store (default: list both; repair memory)")
    fixes = parser.add_mutually_exclusive_group()
    fixes.add_argument(
        "--normalise-line-endings",
        action=_Writes,
        nargs=0,
        default=False,
        help="rewrite CRLF and lone CR line endings as LF",
    )
    fixes.add_argument(
        "--remove-bom",
        action=_Writes,
        nargs=0,
        default=False,
        help="remove a leading byte-order mark (Hermes reads it into entry 1 and blocks that entry)",
    )
    fixes.add_argument(
        "--trim-spacing",
        action=_Writes,
        nargs=0,
        default=False,
        help="trim blank lines and spaces around entries (Hermes refuses to edit a file with them)",
    )
    fixes.add_argument(
        "--replace-invalid-bytes",
        action=_Writes,
        nargs=0,
        default=False,
        help="replace each sequence of bytes that is not UTF-8 with U+FFFD, keeping the file's bytes in a copy",
    )
    fixes.add_argument(
        "--split", action=_Writes, type=_pair("ENTRY:LINE"), metavar="ENTRY:LINE", help="split an entry before LINE"
    )
    fixes.add_argument(
        "--trim", action=_Writes, type=_pair("ENTRY:CHARS"), metavar="ENTRY:CHARS", help="keep an entry's first CHARS"
    )
    fixes.add_argument(
        "--keep-first",
        action=_Writes,
        type=ENTRY,
        metavar="N",
        help="keep entries 1 to N and remove the rest (a file far over its limit)",
    )
    fixes.add_argument(
        "--remove", action=_Writes, type=ENTRY, metavar="ENTRY", help="remove an entry (a piece between '§' lines)"
    )
    parser.add_argument("--dry-run", action="store_true", help="show the resulting file; write nothing")
    parser.add_argument("--expect", metavar="HASH", help="refuse unless the file is still the one listed (file_sha)")
    parser.set_defaults(handler=repair_memory, read_only=True)


def option_of(fix: repair.Repair) -> str:
    """The options that make ``fix``."""
    if fix.kind == "normalise":
        return "--normalise-line-endings"
    if fix.kind == "bom":
        return "--remove-bom"
    if fix.kind == "spacing":
        return "--trim-spacing"
    if fix.kind == "encoding":
        return "--replace-invalid-bytes"
    if fix.kind == "remove":
        return f"--remove {fix.piece}"
    if fix.kind == "keep":
        return f"--keep-first {fix.piece}"
    return f"--{fix.kind} {fix.piece}:{fix.at}"


CHOICES = (
    "normalise_line_endings",
    "remove_bom",
    "trim_spacing",
    "replace_invalid_bytes",
    "split",
    "trim",
    "remove",
    "keep_first",
)  # the options that make a repair


def _chosen(args, found: repair.Diagnosis) -> repair.Repair | None:
    if args.normalise_line_endings:
        return repair.normalise()
    if args.remove_bom:
        return repair.unmark()
    if args.trim_spacing:
        return repair.unspace()
    if args.replace_invalid_bytes:
        return found.byte_repair
    if args.split:
        return repair.split(found.piece(args.split[0]), args.split[1])
    if args.trim:
        return repair.trim(found.piece(args.trim[0]), args.trim[1])
    if args.remove:
        return repair.remove(found.piece(args.remove))
    if args.keep_first:
        return found.keep_first(args.keep_first)
    return None


def repair_memory(home: Home, args) -> Output:
    try:
        if not any(getattr(args, choice) not in (None, False) for choice in CHOICES):
            return _listing(home, args)
        found = repair.examine(home.memory, args.target or "memory")
        fix = _chosen(args, found)
        if args.expect is not None and args.expect != found.sha:
            raise repair.refuse(
                f"{found.file_name} changed since it was listed (its hash is now {found.sha}); list it again and "
                "choose the repair anew. Nothing was changed."
            )
        if args.dry_run:
            return _preview(found, fix)
        result = repair.apply(home.memory, found.target, fix, found.sha)
    except Refusal as refusal:
        result = refusal.result
        return Output(result, text=lambda: result_text(result))
    result["repair"] = {**fix.to_dict(), "option": option_of(fix)}
    return Output(result, text=lambda: _applied_text(result))


def _applied_text(result: dict) -> str:
    lines = [result_text(result)]
    if result.get("kept"):  # (its message says what undo does)
        lines.append(f"  kept: {result['kept']}")
    elif result.get("event_id"):
        lines.append(f"  undo: workbench memory undo {result['event_id']}")
    lines += [f"  still: {r['message']}" for r in result.get("reasons", [])]
    if result.get("over_limit"):
        lines.append(f"  still: {result['over_limit']}.")
    return "\n".join(lines)


def _preview(found: repair.Diagnosis, fix: repair.Repair) -> Output:
    after = found.result(fix)
    data = {
        "success": True,
        "dry_run": True,
        "target": found.target,
        "file_sha": found.sha,
        "repair": {**fix.to_dict(), "option": option_of(fix)},
        "after": after,
        "reasons_after": [r.to_dict() for r in repair.diagnose(found.target, after, found.limit).reasons],
        "over_limit_after": repair.over_limit(after, found.limit),
        "left_after": repair.left_after(found.target, after, found.limit),
    }
    expect = f" --expect {found.sha}"
    left = data["left_after"]
    verdict = f"Still after this: {'; '.join(left)}." if left else f"{found.file_name} round-trips and fits its limit."
    if found.data is not None:
        verdict += " " + repair.kept_note(found.file_name)
    return Output(
        data,
        text=lambda: (
            # (the file's own final line break ends its last line: one blank line parts it from the verdict)
            f"{fix.label} (dry run; nothing written). {found.file_name} would read:\n{after.removesuffix(chr(10))}\n\n"
            f"{verdict}\n"
            f"To make it: workbench memory repair --target {found.target} {option_of(fix)}{expect}"
        ),
    )


def _listing(home: Home, args) -> Output:
    if args.dry_run or args.expect is not None:
        raise UsageError("--dry-run and --expect go with a repair option (--split, --trim, --remove, ...)")
    views = {t: repair.examine(home.memory, t) for t in ([args.target] if args.target else TARGETS)}
    data = _view(views[args.target]) if args.target else {t: _view(v) for t, v in views.items()}
    return Output(data, text=lambda: "\n\n".join(_listing_text(v) for v in views.values()))


def _view(found: repair.Diagnosis) -> dict:
    view = found.to_dict()
    for item, fix in zip(view["repairs"], found.repairs, strict=True):
        item["option"] = option_of(fix)
    return view


def _listing_text(found: repair.Diagnosis) -> str:
    lines = [found.headline]
    lines += [f"  ! {r.message}" for r in found.reasons]
    if found.repairs:
        width = max(len(option_of(f)) for f in found.repairs)
        lines.append("  repairs (workbench memory repair --target " + found.target + " OPTION):")
        lines += [f"    {option_of(f):<{width}}  {f.label}" for f in found.repairs]
    if found.reasons:
        lines.append("  entries (pieces between '§' lines):")
        shown = found.pieces[: LISTED if far_over(len(found.text), found.limit) else len(found.pieces)]
        lines += [f"    {p.number:>3}  line {p.line:<4} {p.chars:>6,} chars  {p.preview}" for p in shown]
        if len(shown) < len(found.pieces):
            lines.append(f"    ⋯ {len(found.pieces) - len(shown):,} more not listed (`--json` lists every one)")
        if found.entries_wait:
            lines.append(f"  entry repairs wait: {found.entries_wait}")
        lines.append(f"  file_sha {found.sha} (--expect refuses a repair if the file changed since)")
    return "\n".join(lines)
