"""``workbench memory show|add|replace|remove|history|undo|repair``: curated memory from the shell.

Writes go through the same store, guards and journal as the agent's tool, as actor
``user``; their JSON is the tool's result. A refusal exits 1 with ``success: false``.
"""

from __future__ import annotations

import re

from engine.clock import shown_time
from engine.home import Home
from engine.memory import FILE_NAMES, TARGETS, Usage, history, render_block
from engine.memory.budget import written_advice
from engine.memory.format import BOM, LISTED, far_over_note, has_crlf, line_endings, listed, refused_listing
from engine.memory.targets import HEADINGS
from engine.memory.threats import prompt_note
from engine.textsafety import apart, cells, clipped, flat_line, inline, visible
from engine.tools import ToolContext

from . import Output, UsageError, add_command, empty_text
from .catching_up import catch_up_if_journaled
from .fit import TIMES, folded, labelled, phrased, terminal_width, wrapped
from .numbers import ID, ROWS
from .textin import stdin_text

GAUGE_CELLS = 24
MIN_GAUGE_CELLS = 8  # the gauge gives way to a narrow terminal down to this; below it, its line wraps
STORE_HELP = "the store: memory (MEMORY.md, the default) or user (USER.md)"


def register(subparsers, common) -> None:
    memory = add_command(subparsers, "memory", common)
    memory.set_defaults(handler=show, target=None, frozen=False, read_only=True)
    sub = memory.add_subparsers(dest="memory_command", metavar="ACTION")

    show_p = sub.add_parser("show", parents=[common], help="entries, usage and the rendered prompt block")
    show_p.add_argument("--target", choices=TARGETS, help="only this store (default: both)")
    show_p.add_argument(
        "--frozen",
        action="store_true",
        help="the snapshot a new session would freeze (poisoned entries shown [BLOCKED])",
    )
    show_p.set_defaults(handler=show, read_only=True)

    add = sub.add_parser("add", parents=[common], help="add an entry")
    add.add_argument("--target", choices=TARGETS, default="memory", help=STORE_HELP)
    add.add_argument("text", metavar="TEXT", help="the new entry (-: read it from stdin)")
    add.set_defaults(handler=add_entry, read_only=False)

    replace = sub.add_parser("replace", parents=[common], help="replace the whole entry OLD identifies")
    replace.add_argument("--target", choices=TARGETS, default="memory", help=STORE_HELP)
    replace.add_argument("--old", required=True, metavar="OLD", help="short unique substring of the entry")
    replace.add_argument("text", metavar="TEXT", help="the complete new entry (-: read it from stdin)")
    replace.set_defaults(handler=replace_entry, read_only=False, creates_home=False)

    remove = sub.add_parser("remove", parents=[common], help="remove the entry OLD identifies")
    remove.add_argument("--target", choices=TARGETS, default="memory", help=STORE_HELP)
    remove.add_argument("--old", required=True, metavar="OLD", help="short unique substring of the entry")
    remove.set_defaults(handler=remove_entry, read_only=False, creates_home=False)

    history_p = sub.add_parser("history", parents=[common], help="journal of memory changes, newest first")
    history_p.add_argument("--target", choices=TARGETS, help="only this store (default: both)")
    history_p.add_argument("--limit", type=ROWS, default=20, help="at most this many changes (default 20)")
    history_p.add_argument("--entry", metavar="TEXT", help="only the changes of this exact entry, with its origin")
    history_p.set_defaults(handler=show_history, read_only=False, creates_home=False)

    undo = sub.add_parser(
        "undo",
        parents=[common],
        help="apply the inverse of a journal row",
        description=(
            "Apply the inverse of a journal row. It applies at once, with no --yes to give (scripts rely on it: "
            "see docs/cli-contract.md, Confirmation). Undoable: the undo is a journal row of its own, which "
            "`workbench memory undo` takes back in turn."
        ),
    )
    undo.add_argument(
        "event_id", metavar="ROW", type=ID, help="the journal row to undo: its #id in `workbench memory history`"
    )
    undo.set_defaults(handler=undo_event, read_only=False, creates_home=False)

    from . import memory_repair_cmds  # repair lives there; it renders results as this module does

    memory_repair_cmds.register(sub, common)


# -- show ------------------------------------------------------------------------------
def gauge(usage: Usage, size: int = GAUGE_CELLS) -> str:
    filled = min(size, round(usage.percent / 100 * size))
    return "█" * filled + "░" * (size - filled)


def _gauge_line(usage: Usage, facts: str, columns: int) -> list[str]:
    """The usage gauge and ``facts`` in ``columns`` cells: the gauge narrower where they would not fit,
    the line wrapped where even the narrowest would not."""
    size = max(MIN_GAUGE_CELLS, min(GAUGE_CELLS, columns - 4 - cells(visible(facts))))
    return folded(f"  {gauge(usage, size)}  {facts}", columns)


def _view(home: Home, target: str, frozen, notes: dict[str, list[list[str]]]) -> dict:
    """One store as ``memory show`` prints it; ``notes`` gets each entry's origin in words."""
    store = home.memory
    if frozen is not None:
        entries, usage, rendered = list(frozen.entries[target]), frozen.usage[target], frozen.block(target)
        error, raw = frozen.errors[target], list(frozen.raw_entries[target])
        raw[:1] = [e.removeprefix(BOM) for e in raw[:1]]  # entry 1 as journaled: Hermes kept a leading BOM in it
    else:
        state = store.read(target)
        entries, error = state.entries, state.error
        usage = Usage.of(entries, store.limit(target))
        rendered, raw = render_block(target, entries, usage.limit), entries
    count = len(entries)
    shown = listed(entries, usage.limit)  # a store far over its limit: its first entries only, and why
    entries, raw = entries[:shown], raw[:shown]
    origins = history.origins(store, target, raw)
    notes[target] = [o.phrases() for o in origins]
    view = {
        "target": target,
        "entries": entries,
        "entry_count": count,
        "origins": [o.to_dict() for o in origins],
        "chars": usage.chars,
        "limit": usage.limit,
        "percent": usage.percent,
        "usage": usage.text,
        "rendered": rendered,
        "file": str(store.path(target)),
        "enabled": store.enabled(target),
        "error": error,
    }
    if shown < count:
        view["far_over_limit"] = far_over_note(target, store.size(target), usage.limit, count)
    if frozen is not None:
        view["blocked"] = len(frozen.blocked(target))
        view["withheld"] = frozen.withheld
    else:
        view["flags"] = [prompt_note(entry) for entry in entries]
        if state.bom:
            view["byte_order_mark"] = (
                f"{FILE_NAMES[target]} starts with a byte-order mark, which Hermes reads into entry 1 and blocks "
                "from its prompt (`workbench doctor --fix` removes it, undoably)."
            )
    if frozen is None and has_crlf(state.raw):
        view["line_endings"] = (
            f"{FILE_NAMES[target]} uses {line_endings(state.raw)} line endings: shown as Hermes reads it, and the "
            "next write saves it with LF, as Hermes's own does (`workbench doctor --fix` does that now, undoable)."
        )
    return view


def _entries(count: int) -> str:
    return f"{count:,} entr{'y' if count == 1 else 'ies'}"


def _numbered(
    entries: list[str], notes: list[list[str]] | None = None, flags: list[str | None] | None = None
) -> list[str]:
    lines = []
    width = len(str(len(entries)))
    indent = " " * (width + 4)
    columns = terminal_width()
    for i, entry in enumerate(entries, 1):  # (wrapped under its number: the terminal broke words, `Berlin`/`, CET)`)
        lines += labelled(f"  {i:>{width}}. ", clipped(entry), columns, chop=True)
        if notes:  # (its origin wraps to the terminal's width between its phrases, its continuation deeper)
            first, *rest = notes[i - 1]
            lines += phrased([f"↳ {first}", *rest], columns, indent, hang="  ")
        if flags and flags[i - 1]:
            lines += wrapped(f"⚠ {flags[i - 1]}", columns, indent, hang="  ")
    return lines


def _view_text(view: dict, frozen: bool, notes: list[list[str]]) -> str:
    title = HEADINGS[view["target"]] + ("  · frozen snapshot" if frozen else "")  # (the block keeps Hermes's)
    usage = Usage(view["chars"], view["limit"])
    columns = terminal_width()
    facts = f"{usage.text} · {_entries(view['entry_count'])}" + (
        f" · ⚠ {view['blocked']} blocked" if view.get("blocked") and view["enabled"] else ""
    )
    lines = [title, *_gauge_line(usage, facts, columns)]
    if not view["enabled"]:
        lines.append("  (disabled in config: not injected into the prompt, agent writes refused)")
    if view.get("error"):
        lines.append(f"  (unreadable: {view['error']})")
    if view.get("withheld"):
        lines.append(f"  ({view['withheld']})")
    for key in ("far_over_limit", "line_endings", "byte_order_mark"):
        if view.get(key):
            lines += wrapped(f"⚠ {view[key]}", columns, "  ", hang="  ")
    lines.extend(_numbered(view["entries"], notes, view.get("flags")) if view["entries"] else ["  (no entries)"])
    return "\n".join(lines)


def show(home: Home, args) -> Output:
    targets = [args.target] if args.target else list(TARGETS)
    catch_up_if_journaled(home, targets)  # (as ``memory history`` does, in a home a workbench journals)
    frozen = home.memory.snapshot() if args.frozen else None
    notes: dict[str, list[list[str]]] = {}
    views = {t: _view(home, t, frozen, notes) for t in targets}
    data = views[args.target] if args.target else views
    unreadable = [f"{v['file']} ({v['error']})" for v in views.values() if v["error"]]
    if unreadable:  # shown, but a script must not take an unreadable file for an empty one
        data = {
            **data,
            "success": False,
            "error": f"Cannot read {', '.join(unreadable)}; fix its permissions or "
            "encoding (UTF-8). Nothing was changed.",
        }
    return Output(data, text=lambda: "\n\n".join(_view_text(v, args.frozen, notes[t]) for t, v in views.items()))


# -- writes ----------------------------------------------------------------------------
def result_text(result: dict) -> str:
    """A tool result as a person would like to read it (a replace's new entry shown under the old
    one, both cut where they differ; its sentences wrapped to the terminal's width)."""
    columns = terminal_width()
    if result.get("success"):
        lines = [f"✓ {result.get('message', 'Done.')}"]
        replaced, removed, now = result.get("replaced_entry"), result.get("removed_entry"), result.get("new_entry")
        shown: list[tuple[str, str]] = []
        if replaced is not None and now is not None:
            was, now = apart(replaced, now, SHORT)
            shown += [("was", was), ("now", now)]
        elif replaced is not None:
            shown.append(("was", _short(replaced)))
        if removed is not None:
            shown.append(("was", _short(removed)))
        for label, entry in shown:  # (wrapped to the terminal, the lines after the first under the entry's start)
            lines += wrapped(f"{label}: {entry}", columns, "  ", hang=" " * (len(label) + 2))
        if "usage" in result:
            usage = f"  {result.get('target', '')}: {result['usage']} · {_entries(result.get('entry_count', 0))}"
            lines += folded(usage, columns)
        warnings = [result[key] for key in ("warning", "line_endings", "byte_order_mark") if result.get(key)]
        for warning in [*warnings, *result.get("advice", [])]:  # (wrapped to the terminal, under their mark)
            lines += wrapped(f"⚠ {warning}", columns, hang="  ")
        return "\n".join(lines)
    lines = wrapped(f"error: {result.get('error')}", columns, hang="  ", chop=False)  # (the contract's: every error's)
    if result.get("matches"):
        lines.append("  matching entries:")
        lines.extend(f"    - {m}" for m in result["matches"])
    if result.get("current_entries"):
        current = result["current_entries"]
        lines.append("  current entries:")
        lines.extend(_numbered([refused_listing(entry) for entry in current[:LISTED]]))
        if len(current) > LISTED:  # (a file far over its limit: `--json` has every one)
            lines.append(f"  ⋯ {len(current) - LISTED:,} more not listed (`--json` lists every one)")
    if result.get("drift_backup"):
        lines.append(f"  backup: {result['drift_backup']}")
    return "\n".join(lines)


ID_COLUMN = re.compile(r"#\d+ +")  # a history row's id and its padding: the time starts after it
SHORT = 72  # characters of an entry a line shows, at least (a wider terminal's line, in history)


def _short(text: str | None, width: int = SHORT) -> str:
    if text is None:
        return "—"
    return flat_line(text, width)


def _write(result: dict) -> Output:
    return Output(result, text=lambda: result_text(result))


def _user() -> ToolContext:
    return ToolContext(actor="user")


def _text(args, replaced: str = "") -> str:
    """TEXT as given, or, for ``-``, what stdin holds (one final line break dropped: ``echo`` adds it).
    A text too long for the shell's argument list goes this way. An empty or blank TEXT is wrong usage
    (``replaced``: what to do instead, said after it)."""
    if args.text != "-":
        if not args.text.strip():  # (the engine's refusal names the tool's `content`, not TEXT)
            raise UsageError(empty_text("TEXT") + replaced)
        return args.text
    return stdin_text("the entry", "echo 'text' | workbench memory add -")


def _advised(home: Home, target: str, text: str, result: dict) -> Output:
    """The write's result, with the advice the Memory editor gives about the same text once it is
    saved (``engine.memory.budget``): the entries it nearly duplicates, what Hermes's prompts block."""
    store = home.memory
    if result.get("success") and (
        advice := written_advice(store.entries(target), store.limit(target), text, store.duplicate_threshold())
    ):
        result = {**result, "advice": advice}
    return _write(result)


def add_entry(home: Home, args) -> Output:
    text = _text(args)
    return _advised(home, args.target, text, home.memory.add(args.target, text, _user()))


def _old(args) -> str:
    """``--old``, refused as wrong usage when empty: the engine's message names the tool's
    ``old_text``, which is not what was typed here."""
    if not args.old.strip():
        raise UsageError("--old cannot be empty: give a short substring that picks out one entry")
    return args.old


def replace_entry(home: Home, args) -> Output:
    removing = "; to delete the entry, use `workbench memory remove --old OLD`"
    text = _text(args, removing)
    return _advised(home, args.target, text, home.memory.replace(args.target, _old(args), text, _user()))


def remove_entry(home: Home, args) -> Output:
    return _write(home.memory.remove(args.target, _old(args), _user()))


def undo_event(home: Home, args) -> Output:
    return _write(home.memory.undo(args.event_id, actor="user"))


# -- history ---------------------------------------------------------------------------
def _event(entry) -> dict:
    data = entry.to_dict()
    data["detail"] = {k: v for k, v in entry.detail.items() if k not in ("file_after", "file_sha")}
    return data


def show_history(home: Home, args) -> Output:
    data: dict = {}
    home.memory.catch_up((args.target,) if args.target else TARGETS)
    if args.entry is not None:
        if args.target:
            target, entry = args.target, history.entry_named(home.memory, args.target, args.entry.strip())
        else:  # the store whose entry it names
            target, entry = history.entry_in_either(home.memory, args.entry.strip())
        found = history.story(home.memory, target, entry, args.limit)
        rows = found.history
        data["origin"] = found.origin.to_dict()
        top = [f"origin: {found.origin.describe()}"]
    else:
        top = []
        rows = history.with_calls(home.memory, home.memory.history(args.target, args.limit))
    events = [_event(e) for e in rows]
    data["events"] = events

    def text() -> str:
        lines = list(top)
        if not events:
            none = "No change to this entry" if args.entry is not None else "No memory changes"
            return "\n".join(lines + [f"{none} journaled yet."])
        columns = terminal_width()
        for row, e, head in zip(rows, events, _heads(rows, events, columns), strict=True):
            indent = " " * ID_COLUMN.match(head[0]).end()  # (under the time, past the widest id's padding)
            where = [f"session {inline(e['session_id'])}"] if e["session_id"] else []
            where += [f"msg {e['message_id']}"] if e["session_id"] and e["message_id"] else []
            notes = history.row_notes(row)
            where += ["(" + "; ".join(notes) + ")"] if notes else []
            row_line = "  ".join([*head, " ".join(where)]) if where else "  ".join(head)
            if len(head) == 1 and cells(visible(row_line)) <= columns:
                lines.append(row_line)
            else:  # (its columns kept; the session and notes under them, an id never split from its noun)
                lines += [*head, *phrased(where, columns, indent, hang="  ", sep=" ")]
            short = max(SHORT, columns - cells(indent) - 2)  # (a line's worth where the terminal is wide)
            before, after = e["before"], e["after"]
            if before is not None and after is not None:  # a rewrite: both cut where they differ
                before, after = apart(before, after, short)
            for mark, entry in (("-", before), ("+", after)):  # (wrapped to the terminal, under the entry's start)
                lines += (
                    wrapped(f"{mark} {_short(entry, short)}", columns, indent, hang="  ") if entry is not None else []
                )
        return "\n".join(lines)

    return Output(data, text=text)


def _heads(rows: list, events: list[dict], columns: int) -> list[list[str]]:
    """Each row's id, time, actor, action and store as lines: its columns as wide as the rows shown need,
    the time's year given way where the widest would not fit ``columns``, and where even then it would not,
    the actor, action and store on lines after the id and time, under the time."""
    words = [[e["actor"], history.action_word(row), e["target"]] for row, e in zip(rows, events, strict=True)]
    wide = [max(cells(visible(w[n])) for w in words) for n in range(3)]
    ids = max(len(str(e["id"])) for e in events) + 1
    for stamp in TIMES[1:]:
        times = [shown_time(e["at"], stamp) or "unknown" for e in events]
        heads = [
            f"#{e['id']:<{ids - 1}}  {t}  "
            + "  ".join(visible(w) + " " * (n - cells(visible(w))) for w, n in zip(ws, wide, strict=True))
            for e, t, ws in zip(events, times, words, strict=True)
        ]
        if all(cells(head.rstrip()) <= columns for head in heads):
            return [[head.rstrip()] for head in heads]
    return [
        phrased([f"#{e['id']:<{ids - 1}}  {t}", *ws], columns, hang=" " * (ids + 2), sep="  ")
        for e, t, ws in zip(events, times, words, strict=True)
    ]
