"""The ``workbench`` command line (its contract: docs/cli-contract.md).

Each command group lives in its own module with a ``register(subparsers, common)``
function. Handlers take ``(home, args)`` and return an ``Output``; this module prints
it (``--json``: exactly one JSON document) and maps refusals to exit status 1 and
usage errors to 2, never showing a traceback for either.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import difflib
import importlib
import re
import sqlite3
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine import Home, lock_waits, open_home
from engine.db import home_error
from engine.errors import WorkbenchError
from engine.lock_waits import describe
from engine.textsafety import json_text, quoted, shell_word, visible

from ..crash import CRASH_EXIT, crash_message, log_to_stderr_in_one_line
from .echo import ECHO_LIMIT, cut_echoes, echoed, retyped, typed
from .fit import said, tell

# Each top-level command: the module that registers it (and holds its handlers), and its line in the list
# of commands. A command line imports only the module of the command it names; the list (``workbench
# --help``, a word that names no command) is made from here, importing none of them.
COMMANDS = {
    "tui": ("workbench.cli.tui_cmds", "open the TUI on the home (as `workbench` alone does)"),
    "demo": ("workbench.cli.tui_cmds", "seed (or reuse) a demo home, open the TUI and play the demo scenario"),
    "memory": ("workbench.cli.memory_cmds", "curated memory: MEMORY.md and USER.md"),
    "pending": ("workbench.cli.pending_cmds", "review memory and skill writes staged for approval"),
    "skills": ("workbench.cli.skills_cmds", "the skill library (procedural memory)"),
    "curator": ("workbench.cli.curator_cmds", "skill lifecycle: stale, archive, purge, rollback"),
    "sessions": ("workbench.cli.sessions_cmds", "the session archive (state.db) and search"),
    "run": ("workbench.cli.run_cmds", "run agent turns headless (messages or a scenario)"),
    "scenarios": ("workbench.cli.run_cmds", "built-in agent scenarios"),
    "doctor": ("workbench.cli.doctor_cmds", "check the home for both programs, say how to fix it"),
    "providers": ("workbench.cli.providers_cmds", "memory providers (memory.provider)"),
    "timeline": ("workbench.cli.timeline_cmds", "every change to what the agent knows, newest first"),
    "revert": ("workbench.cli.timeline_cmds", "undo a timeline row or a whole group"),
}
LARGE_ARCHIVE = 50_000  # messages from which a state.db layout completion reports its progress


@dataclass
class Output:
    """What a command produced: the JSON document and a human rendering of it."""

    data: dict[str, Any]
    text: str | Callable[[], str] = ""
    ok: bool | None = None  # default: data.get("success", True)
    extra: dict[str, Any] = field(default_factory=dict)
    report: bool = False  # a report (doctor's): on stdout even when its status is 1, so it pipes

    @property
    def succeeded(self) -> bool:
        return self.ok if self.ok is not None else self.data.get("success", True) is not False


class UsageError(Exception):
    """Wrong usage discovered after parsing (exit status 2)."""


class _ArgumentError(Exception):
    """argparse found the words wrong; carries the parser whose usage to print."""

    def __init__(self, parser: argparse.ArgumentParser, message: str):
        super().__init__(message)
        self.parser = parser


PROG = "workbench"
FREE_TEXT = ("TEXT", "QUERY", "TITLE")  # positionals that take any words: the likeliest to be left unquoted


def empty_text(metavar: str) -> str:
    """The one wording of a TEXT (or QUERY) given empty or blank, where it needs words."""
    return f"{metavar} is empty: give it words, in quotes when there are several"


class _Usage(argparse.HelpFormatter):
    """Usage lines that read truly where a command's action may be left out (``workbench``, ``memory``,
    ``sessions``, ``timeline`` alone each do something): argparse writes ``ACTION ...`` as if one were
    needed; this writes ``[ACTION ...]``, and for a command with one action its arguments
    (``[show ROW]``)."""

    def _format_args(self, action, default_metavar):
        if action.nargs != argparse.PARSER or action.required:
            return super()._format_args(action, default_metavar)
        choices = getattr(action, "choices", None) or {}
        if len(choices) == 1 and action.dest != "command":  # (the top level may hold one: see build_parser)
            [(name, sub)] = choices.items()
            needed = [a.metavar or a.dest for a in sub._actions if not a.option_strings and a.required]
            return "[" + " ".join([name, *needed]) + "]"
        return f"[{action.metavar or default_metavar} ...]"


class _Parser(argparse.ArgumentParser):
    _words: tuple[str, ...] = ()  # what this parser was given, for the advice on a missing argument
    _advising = False  # an advice is being worked out: argparse's errors meanwhile are answers, not advised

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Usage)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # raised instead of exiting, so --json can still answer in JSON
        message = _requoted(message)
        if self._advising:
            raise _ArgumentError(self, message)
        self._advising = True
        try:
            advice = (
                self._dash_hint(message)
                or self._dashed_value_hint(message)
                or self._dashed_word_hint(message)
                or _choice_hint(self.prog, message)
            )
        finally:
            self._advising = False
        raise _ArgumentError(self, message + advice)

    def _dashed_value_hint(self, message: str) -> str:
        """For ``memory remove --old -dash``: argparse reads the value as an option and says the option
        has none. Say to join them (``--old=-dash``)."""
        if not message.endswith("expected one argument"):
            return ""
        options = message.removeprefix("argument ").split(":")[0].split("/")
        typed = next((o for o in options if o in self._words), None)
        if typed is None or self._words.index(typed) + 1 >= len(self._words):
            return ""
        value = self._words[self._words.index(typed) + 1]
        long = next((o for o in options if o.startswith("--")), None)
        joined = f"{long}={value}" if long else f"{typed}{value}"
        if not value.startswith("-"):
            return ""
        return f" ({echoed(value)} starts with '-', so it reads as an option: give it as {echoed(shell_word(joined))})"

    def _dash_hint(self, message: str) -> str:
        """For ``sessions search -foo``: argparse reads the text as an unknown option, then says the
        text is missing. Say how to pass text that starts with a dash."""
        missing = next(
            (m for m in FREE_TEXT if message.startswith("the following arguments are required") and m in message), None
        )
        dashed = next((w for w in self._words if self._unknown_option(w)), None)
        if missing is None or dashed is None or "--" in self._words:
            return ""
        whole = typed.get() or self._words  # (options typed before the command name are kept too)
        example = " ".join(map(shell_word, [PROG, *(w for w in whole if w != dashed), "--", dashed]))
        return (
            f" ({missing} {echoed(dashed)} starts with '-', so it reads as an option: put -- before it, last, "
            f"as in {echoed(example)})"
        )

    def _dashed_word_hint(self, message: str) -> str:
        """For ``pending approve --all``: the word the missing argument takes (``ID|all``) typed as an
        option. Say it without its dashes. A placeholder (``ID``, in capitals) stands for a value, so
        typing it bare is no better: it is never offered."""
        if not message.startswith("the following arguments are required"):
            return ""
        words = {w for w in re.findall(r"[\w-]+", message.split(":", 1)[1]) if not w.isupper()}
        typed = next((w for w in self._words if self._unknown_option(w) and w.lstrip("-") in words), None)
        return f". Did you mean {quoted(typed.lstrip('-'))}, without the dashes?" if typed else ""

    def _option_word_hint(self, extras: list[str]) -> str:
        """For ``memory remove memory --old X`` or ``memory add --user hi``: a word left over (dashed or
        not) that one of the command's options takes (``--target memory``). Say it with its option."""
        for word in (w.lstrip("-") for w in extras):
            option = next((a for a in self._actions if a.option_strings and a.choices and word in a.choices), None)
            if option is not None:
                return f". Did you mean {quoted(f'{option.option_strings[-1]} {word}')}?"
        return ""

    def _unknown_option(self, word: str) -> bool:
        """Whether argparse reads ``word`` as an option this command does not have (``--home=/x`` it has;
        ``--`` and ``--h`` it calls ambiguous, which is no unknown option)."""
        try:
            parsed = self._parse_optional(word)
        except _ArgumentError:
            return False
        return parsed is not None and parsed[0] is None

    def parse_known_args(self, args=None, namespace=None):
        """A subcommand reports words it cannot use itself, under its own usage (argparse leaves
        them to the top level, whose usage says nothing about the command typed)."""
        self._words = tuple(args) if args is not None else ()
        namespace, extras = super().parse_known_args(args, namespace)
        if self.prog != PROG:
            if extras:
                blank = not any(word.strip() for word in extras)  # ('' shows as itself, not as nothing)
                words = (
                    " ".join(map(shell_word, extras)) + " (empty: leave it out)" if blank else echoed(" ".join(extras))
                )
                self.error(
                    self._empty_text(namespace, extras)
                    or f"unrecognized arguments: {words}"
                    + (self._quoting_hint(namespace, extras) or self._option_word_hint(extras))
                )
            if not hasattr(namespace, "usage_parser"):  # the innermost command's, for a UsageError later
                namespace.usage_parser = self
        return namespace, extras

    def _free_text(self, namespace) -> tuple[argparse.Action | None, object]:
        """The positional that takes any words (TEXT, QUERY, TITLE), and what it took."""
        free = next((a for a in self._actions if not a.option_strings and a.metavar in FREE_TEXT), None)
        return free, getattr(namespace, free.dest, None) if free else None

    def _empty_text(self, namespace, extras: list[str]) -> str:
        """For ``memory add memory ""``: the words left over are blank and the one TEXT took is an
        option's choice, so TEXT was meant empty (and the word for the option). Said as an empty TEXT
        is said, never as quoting advice (``memory add 'memory '``)."""
        free, value = self._free_text(namespace)
        if free is None or not isinstance(value, str) or any(word.strip() for word in extras):
            return ""
        option = next((a for a in self._actions if a.option_strings and a.choices and value in a.choices), None)
        if option is None:
            return ""
        flag = option.option_strings[-1]
        takes_value = {f for f, action in self._option_string_actions.items() if action.nargs != 0}
        example = retyped(PROG, value, extras, [flag, value, free.metavar], takes_value)
        meant = f"; if it was meant for {flag}: {example}" if example else ""
        return f"{empty_text(free.metavar)} ({quoted(value)} was read as {free.metavar}{meant})"

    def _quoting_hint(self, namespace, extras: list[str]) -> str:
        """For a command whose TEXT or QUERY took only the first word: how to pass all of them, as the
        command typed with its options (never one that drops ``--target user`` or ``--home``)."""
        free, value = self._free_text(namespace)
        if free is None or not isinstance(value, str) or any(word.startswith("-") for word in extras):
            return ""
        if not any(word.strip() for word in extras):  # (quoting them in would only add spaces)
            return ""
        whole = " ".join([value, *extras])
        if len(whole) > ECHO_LIMIT:  # an example as long as the text would bury the advice
            return f" ({free.metavar} is one argument: put all of it in one pair of quotes)"
        takes_value = {flag for flag, action in self._option_string_actions.items() if action.nargs != 0}
        example = retyped(PROG, value, extras, [whole], takes_value)
        if not example:
            return ""
        hint = f"{free.metavar} is one argument: put it in quotes, as in {example}"
        option = next((a for a in self._actions if a.option_strings and a.choices and value in a.choices), None)
        if option is not None:  # `memory add user Name is Sam`: the first word may be meant for an option
            flag = option.option_strings[-1]
            other = retyped(PROG, value, extras, [flag, value, " ".join(extras)], takes_value)
            hint += f"; or, if {quoted(value)} was meant for {flag}: {other}"
        return f" ({hint})"


# Where argparse quotes a word the user typed with repr ('\x1b[31m', "it's"), it is quoted again as every
# message quotes one.
_ARGPARSE_REPR = re.compile(r"(invalid choice: |ignored explicit argument )('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")


def _requoted(message: str) -> str:
    """argparse's ``message`` with the word it quotes as ``repr`` quoted as every message quotes one (``quoted``)."""
    return _ARGPARSE_REPR.sub(lambda found: found[1] + quoted(ast.literal_eval(found[2])), message)


# Words a new user carries over that name an action another command holds here: Hermes's own
# ``hermes curator archive|restore|pin|unpin|list-archived|prune`` (skills are archived, restored and
# pinned under ``workbench skills``), and ``search``, which searches sessions.
ELSEWHERE = {
    f"{PROG} curator": {
        "archive": "skills archive",
        "restore": "skills restore",
        "pin": "skills pin",
        "unpin": "skills unpin",
        "list-archived": "skills list --all",
        "prune": "curator purge",
    },
    PROG: {"search": "sessions search"},
}


def _choice_hint(prog: str, message: str) -> str:
    """For a mistyped command, action or option value (``memroy``): the choices most like it; for a
    word another command holds here (``ELSEWHERE``), that command."""
    found = re.fullmatch(r"argument .*: invalid choice: '(.*)' \(choose from (.*)\)", message, re.S)
    if found is None:
        return ""
    if moved := ELSEWHERE.get(prog, {}).get(found[1]):
        return f". Did you mean `{PROG} {moved}`?"
    close = difflib.get_close_matches(found[1], re.findall(r"'([^']*)'", found[2]), n=2, cutoff=0.7)
    return f". Did you mean {' or '.join(map(quoted, close))}?" if close else ""


def common_options() -> argparse.ArgumentParser:
    """Options every command accepts, before or after the subcommand name."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--home",
        default=argparse.SUPPRESS,
        help="home folder (default: $WORKBENCH_HOME, $HERMES_HOME, or the user data folder)",
    )
    common.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print exactly one JSON document"
    )
    return common


HELP = ("-h", "--help")


def _command_at(argv: list[str]) -> int | None:
    """Where the command ``argv`` names is: its first word that is neither an option nor --home's
    value (none when a help option comes first: that is the top level's help, listing every command)."""
    skip = False
    for at, word in enumerate(argv):
        if skip:
            skip = False
        elif word == "--home":
            skip = True
        elif word == "--" or word in HELP:
            return None
        elif not word.startswith("-"):
            return at
    return None


def _command_word(argv: list[str]) -> str | None:
    """The command ``argv`` names (``_command_at``)."""
    at = _command_at(argv)
    return None if at is None else argv[at]


def _help_word(argv: list[str]) -> list[str]:
    """``workbench help [COMMAND [ACTION]]``, a common guess, as ``workbench [COMMAND [ACTION]] --help``
    (``help`` is no command: it needs no home and is not listed)."""
    at = _command_at(argv)
    if at is None or argv[at] != "help":
        return argv
    rest = argv[:at] + argv[at + 1 :]
    cut = rest.index("--") if "--" in rest else len(rest)
    return [*rest[:cut], "--help", *rest[cut:]]


def _help_moved(argv: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """``workbench --help memory add``, ``workbench memory --help add``: the help of the innermost
    action named, not of the first parser that meets a help option (argparse acts on the first it
    meets). Words after ``--`` are text, never a help option; a help option after the last command or
    action word is argparse's already."""
    head = argv[: argv.index("--")] if "--" in argv else argv
    helps = [i for i, word in enumerate(head) if word in HELP]
    last = _last_action_at(parser, head)
    if not helps or last is None or helps[0] > last:
        return argv
    kept = [word for i, word in enumerate(argv) if not (i in helps and i < last)]
    at = last - sum(1 for i in helps if i < last)
    return [*kept[: at + 1], "--help", *kept[at + 1 :]]


def _last_action_at(parser: argparse.ArgumentParser, words: list[str]) -> int | None:
    """Where the last command or action word of ``words`` is (``memory`` then ``add``), walking the
    parsers as argparse would: options (and the values of those that take one) and help options are
    passed over; the first other word that names no action of the parser reached ends the walk."""
    at, current, skip = None, parser, False
    for i, word in enumerate(words):
        if skip:
            skip = False
            continue
        if word in HELP:
            continue
        if word.startswith("-") and word != "-":
            action = current._option_string_actions.get(word)
            skip = action is not None and action.nargs != 0
            continue
        subs = next((a for a in current._actions if isinstance(a, argparse._SubParsersAction)), None)
        if subs is None or word not in subs.choices:
            break
        current, at = subs.choices[word], i
    return at


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser for ``argv``: its command's, when it names one; when it names none (``workbench
    --help``, a mistyped command), the list of commands only, which needs no command's module (each
    imports the engine parts its handlers use: all of them were most of a help page's CPU). With no
    ``argv``: every command's, in full."""
    named = _command_word(argv or [])
    common = common_options()
    parser = _Parser(
        prog=PROG,
        description="Memory Workbench: see, trust and steer what your agent remembers.",
        parents=[common],
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    if argv is not None and named not in COMMANDS:
        for name, (_, line) in COMMANDS.items():
            subparsers.add_parser(name, help=line)
        return parser
    modules = [COMMANDS[named][0]] if named in COMMANDS else [module for module, _ in COMMANDS.values()]
    for module in dict.fromkeys(modules):
        importlib.import_module(module).register(subparsers, common)
    _describe(parser)
    return parser


def add_command(subparsers, name: str, common: argparse.ArgumentParser, **kwargs) -> argparse.ArgumentParser:
    """The parser of the top-level command ``name``, with its line in the list of commands (``COMMANDS``)."""
    return subparsers.add_parser(name, parents=[common], help=COMMANDS[name][1], **kwargs)


def _describe(parser: argparse.ArgumentParser) -> None:
    """Give each subcommand's ``--help`` page a description line: its help in the list of commands
    as a sentence, unless it has one of its own."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help for choice in action._choices_actions}
        for name, sub in action.choices.items():
            if sub.description is None and helps.get(name):
                text = str(helps[name])
                sub.description = text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")
            _describe(sub)


def _print(output: Output, as_json: bool) -> None:
    if as_json:
        data = output.data if output.succeeded else _cut_errors(output.data)
        sys.stdout.write(json_text(data, indent=2) + "\n")
        return
    text = output.text() if callable(output.text) else output.text
    if not text and output.data:
        text = json_text(output.data, indent=2)
    if text:
        stream = sys.stdout if output.succeeded or output.report else sys.stderr
        if not output.succeeded:  # (an error never repeats a long word of the command line whole)
            text = cut_echoes(text)
        stream.write(visible(text.rstrip("\n")) + "\n")  # the one place text output is printed


def _error_text(message: str) -> Callable[[], str]:
    """A failed command's ``error: …``, its echoes of the command line cut, wrapped at spaces to the terminal's
    width, the continuation two cells in (the terminal broke it inside a word); a word wider than a line (the
    path or id it names) whole on a line of its own."""
    return lambda: said(cut_echoes(f"error: {message}"))


def _cut_errors(value: Any) -> Any:
    """``value`` with each ``error`` message in it cut as the text form cuts it (``cut_echoes``)."""
    if isinstance(value, dict):
        return {k: cut_echoes(v) if k == "error" and isinstance(v, str) else _cut_errors(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut_errors(item) for item in value]
    return value


def _usage_error(parser: argparse.ArgumentParser, message: str, as_json: bool) -> int:
    """Exit status 2: under --json one JSON document on stdout and nothing on stderr (a script reads
    the error there once), else the usage and the error on stderr."""
    message = cut_echoes(message)
    if as_json:
        sys.stdout.write(json_text({"success": False, "error": message, "usage": True}) + "\n")
        return 2
    parser.print_usage(sys.stderr)
    tell(f"{parser.prog}: error: {message}")
    return 2


def _argument_problem(argv: list[str]) -> str:
    """Arguments no command can use: bytes that are not UTF-8 and an empty --home."""
    for word in argv:
        if any("\ud800" <= ch <= "\udfff" for ch in word):  # undecodable bytes arrive as surrogates
            return "an argument is not valid UTF-8 text; pass text in UTF-8"
    for i, word in enumerate(argv):
        if word == "--home=" or (word == "--home" and i + 1 < len(argv) and argv[i + 1] == ""):
            return "--home is empty; give a folder path (or leave --home out to use the default home)"
    return ""


def warn_misreads(home) -> None:
    """One stderr line per config value the workbench replaces or Hermes 0.19.0 would read differently
    (never silent).

    A config.yaml that does not load is left to the commands that need it.
    """
    try:
        warnings = home.config.warnings()
    except WorkbenchError:
        return
    for _, warning in warnings:
        tell(f"warning: {warning}")


def _layout_progress(step: str, done: int, total: int) -> None:
    """A large archive's one-off layout completion or index rebuild, reported on stderr (never stdout)."""
    if total >= LARGE_ARCHIVE:
        sys.stderr.write(f"state.db: {step}: {done:,} of {total:,} messages\n")


def main(argv: list[str] | None = None) -> int:
    argv = _help_word(list(sys.argv[1:] if argv is None else argv))
    parser = build_parser([word for word in argv if word not in HELP])  # (the command's, wherever help is)
    argv = _help_moved(argv, parser)
    typed.set(tuple(argv))
    as_json = "--json" in argv
    problem = _argument_problem(argv)
    if problem:
        return _usage_error(parser, problem, as_json)
    try:
        args = parser.parse_args(argv)
    except _ArgumentError as exc:
        return _usage_error(exc.parser, str(exc), as_json)
    as_json = getattr(args, "json", False)
    log_to_stderr_in_one_line()
    unlisten = lock_waits.listen(lambda lock, holders: tell(f"note: {describe(lock, holders)}"))
    try:
        return _run(parser, args, as_json)
    finally:  # (a caller in this process, the suite's ``cli`` fixture, is not told of its later waits)
        unlisten()


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace, as_json: bool) -> int:
    """The command ``args`` names, run on its home, closed once all is said (``_run_closing``)."""
    with contextlib.ExitStack() as closing:
        return _run_closing(parser, args, as_json, closing)


def _run_closing(parser: argparse.ArgumentParser, args, as_json: bool, closing: contextlib.ExitStack) -> int:
    """The command ``args`` names, run on its home; its exit status (every failure said, never a traceback).
    Its home goes on ``closing``: SQLite copies a database's -wal into it and deletes it as the last
    connection to it closes, which one left open as the process ends never does (the TUI left megabytes of
    -wal behind); while another process (Hermes) holds the database open, SQLite leaves its -wal be."""
    handler = getattr(args, "handler", None)
    if handler is None:  # bare `workbench` opens the TUI
        handler = importlib.import_module("workbench.cli.tui_cmds").open_tui
        args.needs_terminal = True
    try:
        home = None
        if getattr(args, "needs_terminal", False):  # said before the home is opened: nothing is created
            importlib.import_module("workbench.cli.tui_cmds").check_terminal()
        if not getattr(args, "no_home", False):
            home = open_home(
                getattr(args, "home", None),
                read_only=getattr(args, "read_only", False),
                create=getattr(args, "creates_home", True),
                store_kept=getattr(args, "stores_kept", True),
                config_defaults=getattr(args, "config_defaults", False),
            )
            closing.callback(home.close)
            if home.created:  # a mistyped --home would otherwise go unnoticed (the TUI says it too)
                tell(f"note: {home.root} did not exist: created a new, empty home there")
            if not getattr(args, "reports_problems", False):
                warn_misreads(home)
            if handler.__module__ != "workbench.cli.tui_cmds":  # (the TUI says it in a notice)
                _say_kept_stored(home)
            if handler.__module__ != "workbench.cli.tui_cmds":  # the TUI shows progress its own way
                home.archive.progress = _layout_progress
        output = handler(home, args)
        if home is not None and handler.__module__ != "workbench.cli.tui_cmds":
            _say_kept_stored(home)  # (stored as the command ran: `workbench run` opening its session)
        if output is not None:  # (its text is rendered here, as it prints: a bug in that is a crash too)
            _print(output, as_json)
    except UsageError as exc:  # under the usage of the command it concerns
        return _usage_error(getattr(args, "usage_parser", parser), str(exc), as_json)
    except WorkbenchError as exc:
        _print(Output(exc.to_dict(), text=_error_text(exc.message)), as_json)
        return 1
    except BrokenPipeError:  # (stdout's reader went away, `| head`: no file of the home's; see launch.run)
        raise
    except (sqlite3.DatabaseError, OSError) as exc:  # disk full, read-only, busy, or damage the opening checks missed
        message = home.explain(exc) if home is not None else home_error(exc, None)
        _print(Output({"success": False, "error": message}, text=_error_text(message)), as_json)
        return 1
    except KeyboardInterrupt:  # (a wait for another process's lock, stopped before the lock was taken, is said)
        if (wait := lock_waits.interrupted()) is not None:
            tell(f"interrupted: {lock_waits.describe_interrupted(wait)}")
        return 130
    except Exception as exc:  # a bug: the traceback goes to a file, never to the terminal
        message = crash_message(exc)
        _print(Output({"success": False, "error": message, "internal": True}, text=_error_text(message)), as_json)
        return CRASH_EXIT
    if output is None:
        return 0
    if output.succeeded and home is not None and not getattr(args, "reports_problems", False):
        _warn_unreadable_journal(home)
    return 0 if output.succeeded else 1


def _say_kept_stored(home: Home) -> None:
    """Messages this command stored that workbench.db kept for state.db (an earlier run or quit was told
    they were kept there): said once, on stderr, so the user learns they landed."""
    for note in home.take_kept_stored():
        tell(f"note: {note}")


def _warn_unreadable_journal(home: Home) -> None:
    """What a command showed lacked the journal's part (origins, who proposed, history) when
    workbench.db cannot be read, found as it opened or deep in a table as the command read it."""
    problem = home.journal.problem()
    if problem:
        tell(f"warning: shown without the journal: {problem}")
