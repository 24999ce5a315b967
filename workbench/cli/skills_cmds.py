"""``workbench skills list|show|edit|archive|restore|pin|unpin``: the skill library from the shell.

The CLI acts as the user: archive and restore are journaled and ledgered with actor
``user``, and showing a skill does not count as the agent using it.
"""

from __future__ import annotations

from engine.clock import shown_time
from engine.home import Home
from engine.skills.library import PROVENANCE_NOTE, skill_command
from engine.skills.validation import MAX_SKILL_CONTENT_CHARS, SkillError
from engine.textsafety import cells, cut_cells, inline

from . import Output, add_command, skill_edit_cmds
from .fit import fit_row, terminal_width, wrapped

CLOSE_SCORE = 80  # rapidfuzz WRatio a skill's name needs to be offered for a name that matched none
CLOSE_LIMIT = 5  # close names a refusal offers at most
DESCRIPTION_INDENT = "    "  # a description too long to share its row has the next line, after this
SHORT_LIST = 10  # skills (or a skill's files) a refusal lists by name when none is close to what was typed

NAME_HELP = "the skill's name, or its folder (`workbench skills list` shows both where they differ)"
LIST_FIELDS = (
    "name",
    "category",
    "description",
    "state",
    "pinned",
    "provenance",
    "use_count",
    "uses_note",
    "last_used_at",
    "last_activity_at",
    "problem",
    "name_problem",
    "index_problem",
    "proposed_by",
)


def register(subparsers, common) -> None:
    skills = add_command(subparsers, "skills", common)
    sub = skills.add_subparsers(dest="skills_command", metavar="ACTION", required=True)

    listing = sub.add_parser(
        "list",
        parents=[common],
        help="skills with state, provenance and usage",
        description="Skills with state, provenance and usage, one per line. " + PROVENANCE_NOTE,
    )
    listing.add_argument("--all", action="store_true", help="include archived skills")
    listing.set_defaults(handler=list_skills, read_only=True)

    show = sub.add_parser("show", parents=[common], help="a skill's SKILL.md and linked files, or one linked file")
    show.add_argument("name", metavar="NAME", help=NAME_HELP)
    show.add_argument("--file", metavar="PATH", help="a linked file, e.g. references/api.md")
    show.set_defaults(handler=_named(show_skill), read_only=True)

    for action, text in (
        ("archive", "move a skill to skills/.archive/"),
        ("restore", "bring an archived skill back"),
        ("pin", "never let the Curator touch this skill"),
        ("unpin", "let the Curator manage it again"),
    ):
        parser = sub.add_parser(action, parents=[common], help=text)
        parser.add_argument("name", metavar="NAME", help=NAME_HELP)
        parser.set_defaults(handler=_named(_curator_action(action)), creates_home=False)
    skill_edit_cmds.register(sub, common, NAME_HELP)
    sub.choices["edit"].set_defaults(handler=_named(skill_edit_cmds.edit_skill))


def list_skills(home: Home, args) -> Output:
    skills = home.skills.list(include_archived=args.all)
    rows = [{key: getattr(s, key) for key in LIST_FIELDS} for s in skills]
    # names are never cut (they are what commands take), so the columns are as wide as the longest shown
    names = [inline(s.label) for s in skills]
    categories = [inline(s.category or "-") for s in skills]
    owners = [inline(s.owner) for s in skills]
    counts = [f"{s.use_count}*" if s.uses_note else str(s.use_count) for s in skills]  # (* : see the note below)
    name_width = max(map(len, names), default=0)
    category_width = max(map(len, categories), default=0)
    owner_width = max(map(len, owners), default=0)
    pins = 7 * any(s.pinned for s in skills)  # (the pin column, where a skill is pinned)
    heads = [
        f"{name:<{name_width}}  {category:<{category_width}}  {s.state:<8} {'pinned ' if s.pinned else '':<{pins}}"
        f"{owner:<{owner_width}} uses {uses:<4} "
        for s, name, category, owner, uses in zip(skills, names, categories, owners, counts, strict=True)
    ]
    marks = ["⚠ " if s.problem or s.name_problem or s.index_problem else "" for s in skills]
    days = [_activity(s.last_activity_at) for s in skills]
    day_width = max(map(len, days), default=0)
    columns = terminal_width()
    # the activity column follows the usage where every row has room for it, else it starts each second line
    beside = all(cells(head + mark) + day_width + 2 <= columns for head, mark in zip(heads, marks, strict=True))
    lines = [
        line
        for s, head, mark, day in zip(skills, heads, marks, days, strict=True)
        for line in _skill_row(head, mark, f"{day:<{day_width}}  ", inline(s.description), columns, beside)
    ]
    notes = []  # (each wrapped to the terminal's width, under its mark)
    broken = [inline(s.path) for s in skills if s.problem and not s.too_long]
    if broken:
        notes.append(f"⚠ SKILL.md does not parse in {', '.join(broken)} (`workbench doctor` says why).")
    notes += [f"⚠ {inline(s.path)}: {inline(s.name_problem)}" for s in skills if s.name_problem]
    notes += [f"⚠ {inline(s.path)}: {inline(s.index_problem)}" for s in skills if s.index_problem]
    notes += [f"* {inline(s.path)}: its counts {s.uses_note}" for s in skills if s.uses_note]
    long = [inline(s.path) for s in skills if s.too_long]
    if long:
        notes.append(f"⚠ SKILL.md is over the {MAX_SKILL_CONTENT_CHARS:,}-character limit in {', '.join(long)}.")
    warning = home.skills.usage_warning()
    if warning:
        notes.append(f"⚠ {inline(warning)}")
    lines += [line for note in notes for line in wrapped(note, columns, hang="  ")]
    return Output({"skills": rows, "usage_problem": warning}, text="\n".join(lines) or "No skills.")


def _activity(at: str | None) -> str:
    """A skill's last use, view or patch as its row shows it (the day the Curator ages it from; the Skills
    table's ``activity`` column): ``activity 2026-12-07``, ``activity never``."""
    return f"activity {(shown_time(at, '%Y-%m-%d') or '?') if at else 'never'}"


def _skill_row(head: str, mark: str, day: str, description: str, columns: int, beside: bool) -> list[str]:
    """A listing's row in ``columns`` cells: the activity column ``day`` after ``head`` where ``beside`` (every
    row has room for it), else starting the next line; the description after them where it fits there whole,
    else on a line of its own under them, cut before a word where even that is too narrow (it was cut at 60
    characters inside a word, and the row ran on past the terminal's edge)."""
    if not beside:
        return [
            cut_cells((head + mark).rstrip(), columns),
            *(line.rstrip() for line in fit_row(DESCRIPTION_INDENT + day, description, "", columns, "")),
        ]
    head += day + mark
    if cells(head) + cells(description) <= columns or not description:
        return [cut_cells((head + description).rstrip(), columns)]
    return [cut_cells(head.rstrip(), columns), *fit_row(DESCRIPTION_INDENT, description, "", columns, "")]


def close_names(name: str, names: list[str]) -> list[str]:
    """The names most like ``name``, best first. A name much shorter than what was typed is only a
    piece of it (``a`` in ``stagin``), never offered."""
    from rapidfuzz import fuzz, process, utils  # (here: every command loads this module, few need it)

    typed = utils.default_process(name)
    shaped = [n for n in names if 2 * len(utils.default_process(n)) >= len(typed)]
    found = process.extract(
        name, shaped, scorer=fuzz.WRatio, processor=utils.default_process, score_cutoff=CLOSE_SCORE, limit=CLOSE_LIMIT
    )
    return [match for match, _, _ in found]


def _not_found(home: Home, exc: SkillError, args) -> Output:
    """A skill NAME (or ``--file`` PATH) that matched none: the help the JSON gives (``available_skills``,
    ``available_files``) said in the text too, as close names, else the list when it is short. The
    JSON gains ``close_matches``."""
    if "available_files" in exc.details:
        typed, names = args.file, list(exc.details["available_files"] or [])
        listed, empty = "Its files", "It has no files."
        everything = f"`{skill_command('show', args.name)}` lists all {len(names)}"
    elif "available_archived" in exc.details:  # (a restore: only archived copies can be meant)
        typed, names = args.name, list(exc.details["available_archived"])
        listed, empty = "The archived skills", "No skill is archived."
        everything = f"`workbench skills list --all` shows all {len(names)}"
    else:
        typed, names = args.name, sorted({s.name for s in home.skills.list()})
        listed, empty = "The skills here", "This home has no skills yet."
        everything = f"`workbench skills list` shows all {len(names)}"
    close = close_names(typed, names)
    if close:
        advice = f"Did you mean {', '.join(map(inline, close))}?"
    elif not names:
        advice = empty
    elif len(names) <= SHORT_LIST:
        advice = f"{listed}: {', '.join(map(inline, names))}."
    else:
        advice = f"None has a name close to it; {everything}."
    return Output({**exc.to_dict(), "close_matches": close}, text=f"error: {exc.message} {advice}", ok=False)


def _named(action):
    """``action`` of a command that takes a skill NAME, answering a name (or file) that matched none
    with close ones."""

    def handler(home: Home, args) -> Output:
        try:
            return action(home, args)
        except SkillError as exc:
            if not {"available_skills", "available_files", "available_archived"} & exc.details.keys():  # (ambiguous)
                raise
            return _not_found(home, exc, args)

    return handler


def show_skill(home: Home, args) -> Output:
    result = home.skills.view(args.name, args.file, record=False)
    text = result["content"]
    if result.get("archived"):  # (no active skill has the name: said first, not after a long SKILL.md)
        restore = home.skills.command("restore", result["path"])
        head = f"# archived: skills/{inline(result['path'])}; `{restore}` brings it back"
        if result.get("absorbed_into"):
            head += (
                f"\n# consolidated into '{inline(result['absorbed_into'])}': load that in its place (our agent's "
                "skill_view opens it for this old name, Hermes's does not)"
            )
        text = f"{head}\n\n{text}"
    if result.get("linked_files"):
        files = [f for group in result["linked_files"].values() for f in group]
        text += "\n\nlinked files:\n" + "\n".join(f"  {f}" for f in files)
    if result.get("other_files"):
        text += "\n\nother files (not linked: the agent is never shown them):\n"
        text += "\n".join(f"  {f}" for f in result["other_files"])
    info = None if args.file else home.skills.get(args.name)
    for problem in (info.problem, info.name_problem, info.index_problem) if info else ():
        if problem:  # last, where it is seen after a long SKILL.md scrolls by, as `skills list` marks it
            text += f"\n\n⚠ {inline(problem)}"
    return Output(result, text=text)


def _curator_action(action: str):
    def handler(home: Home, args) -> Output:
        method = getattr(home.curator, action)
        result = method(args.name, actor="user") if action in ("archive", "restore") else method(args.name)
        return Output(result, text=result["message"])

    return handler
