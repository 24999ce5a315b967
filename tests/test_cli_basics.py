"""The CLI contract's common parts: exit codes, --json, --home placement.

``run`` starts the real entry point where the process is the point (its exit status, no traceback,
no terminal, its imports, ctrl+c); help pages and usage errors, whose words are the point, are read
from the CLI run in this process (``completed``)."""

import json
import subprocess
import sys

import pytest

from tests.cli_support import completed
from workbench.cli import main, tui_cmds


def run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True, env=env)


def test_unknown_command_is_usage_error():
    result = run("frobnicate")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr


def test_malformed_config_is_a_clear_refusal(tmp_path):
    (tmp_path / "config.yaml").write_text("memory: [\n")
    result = run("memory", "show", "--json", "--home", str(tmp_path))
    assert result.returncode == 1
    payload = json.loads(result.stdout)
    assert payload["success"] is False and "config.yaml" in payload["error"]
    assert "Traceback" not in result.stderr


def test_home_is_a_file_is_refused_without_traceback(tmp_path):
    (tmp_path / "file").write_text("x")
    result = run("memory", "show", "--home", str(tmp_path / "file"))
    assert result.returncode == 1
    assert "is a file" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("words", [[], ["tui"]], ids=["bare", "tui"])
def test_workbench_alone_or_tui_opens_the_tui_on_the_home(tmp_path, monkeypatch, words):
    """Users guess `workbench tui`; it opens the same TUI as `workbench` alone."""
    import workbench.app

    opened = []
    monkeypatch.setattr(workbench.app, "run_app", lambda home, **kw: opened.append(home.root))
    monkeypatch.setattr(tui_cmds, "has_terminal", lambda: True)
    assert main([*words, "--home", str(tmp_path / "h")]) in (0, None)
    assert opened == [(tmp_path / "h").resolve()]


@pytest.mark.parametrize("words", [[], ["tui"], ["demo"]], ids=["bare", "tui", "demo"])
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_the_tui_without_a_terminal_is_refused_before_anything_is_drawn_or_made(tmp_path, words, as_json):
    """`workbench </dev/null >out 2>err` drew a screen of escape codes into err, then exited 0 (and
    printed nothing on stdout under --json): it is wrong usage, said at once, and no home is made."""
    home = tmp_path / "h"
    json_flag = ["--json"] if as_json else []
    result = subprocess.run(
        [sys.executable, "-m", "workbench", *words, "--home", str(home), *json_flag],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert not home.exists()
    assert "\x1b" not in result.stdout + result.stderr
    said = "the TUI needs a terminal: run it in one, or give a command; see `workbench --help`"
    if as_json:
        assert json.loads(result.stdout) == {"success": False, "error": said, "usage": True}
        assert result.stderr == ""
    else:
        assert result.stdout == ""
        assert result.stderr.splitlines()[-1] == f"{' '.join(['workbench', *words])}: error: {said}"


def test_every_help_page_has_a_description_and_every_argument_a_help():
    """`memory add --help`, `tui --help`, `doctor --help` had no description line, and `--limit`,
    `--offset`, `sessions prune --days`, ID, NAME, ROW_OR_GROUP no help text."""
    import argparse

    from workbench.cli import build_parser

    missing = []

    def walk(parser, words):
        if not parser.description:
            missing.append(f"{' '.join(words)}: no description")
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                listed = {choice.dest: choice.help for choice in action._choices_actions}
                for name, sub in action.choices.items():
                    if not listed.get(name):
                        missing.append(f"{' '.join(words)} {name}: no line in the list of commands")
                    walk(sub, [*words, name])
            elif not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{' '.join(words)} {'/'.join(action.option_strings) or action.dest}: no help")

    walk(build_parser(), ["workbench"])
    assert missing == []
    page = completed("sessions", "prune", "--help")
    assert page.returncode == 0 and "Delete ended sessions older than N days." in page.stdout
    assert "those started more than N days ago (required; 0: every ended session" in " ".join(page.stdout.split())


def test_a_usage_line_shows_an_action_that_may_be_left_out_as_optional():
    """`timeline --help` ended its usage with `show ...`, as if show were needed: `workbench timeline` alone
    lists the rows. The same held for `workbench`, `memory` and `sessions` alone."""
    for words, tail in (
        (("timeline",), "[--limit N] [--before ID] [show ROW]"),
        ((), "[--json] [COMMAND ...]"),
        (("memory",), "[--json] [ACTION ...]"),
        (("sessions",), "[--json] [ACTION ...]"),
        (("skills",), "[--json] ACTION ..."),  # (one is needed here: `workbench skills` alone is wrong usage)
    ):
        page = completed(*words, "--help")
        usage = " ".join(page.stdout.split("\n\n")[0].split())
        assert page.returncode == 0 and usage.endswith(tail), usage
    alone = completed("timeline", "--limit", "x")  # (the usage printed with an error reads the same)
    assert alone.returncode == 2 and "[show ROW]" in " ".join(alone.stderr.split())


def test_a_command_imports_only_its_own_module():
    """Building the whole parser imported every command's module, and with them most of the engine
    (the demo, the runner, the models): about 100 ms of every command's start."""
    script = (
        "import sys, json\n"
        "from workbench.cli import main\n"
        "status = main(sys.argv[1:])\n"
        "print(json.dumps([status, sorted(m for m in sys.modules if m.startswith(('workbench', 'engine.')))]))\n"
    )
    words = ["--home", "/nonexistent-home-for-test", "--json", "memory", "show", "--target", "memory"]
    result = subprocess.run([sys.executable, "-c", script, *words], capture_output=True, text=True)
    _, modules = json.loads(result.stdout.splitlines()[-1])
    commands = {m for m in modules if m.endswith("_cmds")}
    assert commands == {"workbench.cli.memory_cmds", "workbench.cli.memory_repair_cmds"}
    assert not {"engine.demo", "engine.runner", "engine.models", "engine.scenarios"} & set(modules)


@pytest.mark.parametrize(
    "words", [["memory"], ["--home", "x", "sessions"], ["--home=x", "--json", "demo"], ["tui"], ["revert", "3"]]
)
def test_a_commands_own_parser_reads_as_the_whole_one_does(words):
    """The parser built for one command gives that command the same help page and usage as the
    parser of every command, and a word that names no command still lists them all."""
    from workbench.cli import COMMANDS, build_parser

    whole = next(a for a in build_parser()._actions if a.dest == "command").choices
    assert list(COMMANDS) == list(whole)  # (a command missing from COMMANDS would import every module)
    name = next(w for w in words if w in COMMANDS)

    def page(parser, name):
        sub = next(a for a in parser._actions if a.dest == "command").choices[name]
        return sub.format_help()

    assert page(build_parser(words), name) == page(build_parser(), name)
    unknown = completed("memroy")
    assert unknown.returncode == 2
    assert all(command in unknown.stderr for command in COMMANDS)


def test_the_top_levels_help_and_usage_name_every_command_whatever_follows():
    """A review: with only the named command's parser built, a usage error before a command read
    `workbench … [memory]`. The top level's help lists every command."""
    page = completed("--help")
    assert page.returncode == 0 and all(f"    {name}" in page.stdout for name in ("memory", "sessions", "revert"))
    assert "    help" not in page.stdout  # (`workbench help` is --help, no command of its own)
    wrong = completed("--bogus", "memory", "show")
    assert wrong.returncode == 2 and wrong.stderr.startswith(
        "usage: workbench [-h] [--home HOME] [--json] [COMMAND ...]"
    )


@pytest.mark.parametrize(
    "words, usage",
    [
        (["--help", "memory"], "usage: workbench memory [-h]"),
        (["-h", "memory", "add"], "usage: workbench memory add [-h]"),
        (["--home", "H", "--help", "sessions", "search"], "usage: workbench sessions search [-h]"),
        (["memory", "--help", "add"], "usage: workbench memory add [-h]"),
        (["sessions", "-h", "search", "--limit", "5", "words"], "usage: workbench sessions search [-h]"),
        (["--help", "memory", "add", "--target", "usr"], "usage: workbench memory add [-h]"),
        (["help"], "usage: workbench [-h]"),
        (["help", "memory"], "usage: workbench memory [-h]"),
        (["--home", "H", "help", "memory", "add"], "usage: workbench memory add [-h]"),
    ],
)
def test_a_help_option_before_a_command_gives_that_commands_help(tmp_path, words, usage):
    """A trial: `workbench --help memory` printed the top level's page (argparse acts on the first
    help option it meets), not memory's; `memory --help add` printed memory's, not add's; and `help`,
    a common guess, was an invalid choice. Nothing is run and no home is made."""
    words = [str(tmp_path / "h") if w == "H" else w for w in words]
    page = completed(*words)
    assert page.returncode == 0 and page.stdout.startswith(usage) and not (tmp_path / "h").exists()


def test_a_help_option_after_two_dashes_is_text(tmp_path):
    added = completed("--home", str(tmp_path / "h"), "memory", "add", "--", "--help")
    assert added.returncode == 0 and (tmp_path / "h" / "memories" / "MEMORY.md").read_text() == "--help"


@pytest.mark.parametrize(
    "words, listed, close",
    [
        (["memroy"], "invalid choice: 'memroy' (choose from 'tui', ", "memory"),
        (["memory", "shwo"], "invalid choice: 'shwo' (choose from 'show', ", "show"),
        (["memory", "add", "--target", "usr", "x"], "invalid choice: 'usr' (choose from 'memory', 'user')", "user"),
    ],
)
def test_a_mistyped_command_action_or_choice_is_offered_the_closest(words, listed, close):
    """A trial: a mistyped word got argparse's whole list and no "did you mean"."""
    result = completed(*words)
    assert result.returncode == 2 and listed in result.stderr
    assert result.stderr.rstrip().endswith(f"). Did you mean {close!r}?")


@pytest.mark.parametrize(
    "words, meant",
    [
        (["curator", "archive", "deploy"], "skills archive"),
        (["curator", "restore", "deploy"], "skills restore"),
        (["curator", "pin", "deploy"], "skills pin"),
        (["curator", "list-archived"], "skills list --all"),
        (["curator", "prune"], "curator purge"),
        (["search", "数据库"], "sessions search"),
    ],
)
def test_a_word_another_command_holds_names_that_command(words, meant, tmp_path):
    """A trial: `workbench curator archive NAME`, as Hermes's own `hermes curator archive` is typed, and
    `workbench search`, got the list of choices and no word of where that action is."""
    result = completed("--home", str(tmp_path / "h"), *words)
    assert result.returncode == 2 and result.stderr.rstrip().endswith(f"). Did you mean `workbench {meant}`?")
    assert not (tmp_path / "h").exists()
    suggested = completed("--home", str(tmp_path / "h"), *meant.split(), "--help")  # (a command that exists)
    assert suggested.returncode == 0 and suggested.stdout.startswith(f"usage: workbench {' '.join(meant.split()[:2])} ")


def test_a_word_like_no_choice_gets_no_guess():
    result = completed("xyz")
    assert result.returncode == 2 and "Did you mean" not in result.stderr


def test_the_writes_that_need_no_yes_say_so_and_apply_at_once(tmp_path):
    """A trial: `revert` applied without --yes where `sessions prune` asks for it, and nothing said
    why. The contract promises scripts that revert, memory undo and curator rollback apply at once
    (they are undoable; only what cannot be taken back asks), so their help says it, and they do."""
    from pathlib import Path

    for words in (["revert"], ["memory", "undo"], ["curator", "rollback"]):
        page = " ".join(completed(*words, "--help").stdout.split())
        assert "It applies at once, with no --yes to give" in page and "takes back in turn" in page, words
    contract = (Path(__file__).parent.parent / "docs" / "cli-contract.md").read_text(encoding="utf-8")
    assert "**Confirmation.** A command asks for `--yes` only where what it does cannot be taken" in contract
    home = str(tmp_path / "h")
    assert completed("memory", "add", "--target", "memory", "Likes jazz", "--home", home).returncode == 0
    reverted = completed("revert", "1", "--home", home, "--json")
    assert reverted.returncode == 0 and json.loads(reverted.stdout)["reverted"][0]["id"] == 1
    assert (
        json.loads(completed("memory", "show", "--target", "memory", "--home", home, "--json").stdout)["entries"] == []
    )


# ctrl+c while the command line's modules load: a finder that raises KeyboardInterrupt as the CLI's
# package is imported stands for the SIGINT, at a moment a real one could land (any run's first half second).
_INTERRUPTED_IMPORT = """
import runpy, sys

class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == "workbench.cli":
            raise KeyboardInterrupt
        return None

sys.meta_path.insert(0, Interrupt())
sys.argv = ["workbench", *sys.argv[1:]]
runpy.run_module("workbench", run_name="__main__")
"""


@pytest.mark.parametrize("words", [["sessions", "list"], ["--help"]], ids=["command", "help"])
def test_ctrl_c_while_the_command_loads_ends_it_quietly(tmp_path, words):
    """A trial: ctrl+c in a command's first half second (its imports) printed a KeyboardInterrupt
    traceback, even for --help. The entry point now ends such a command as one stopped later: exit 130."""
    result = subprocess.run(
        [sys.executable, "-c", _INTERRUPTED_IMPORT, *words, "--home", str(tmp_path)], capture_output=True, text=True
    )
    assert result.returncode == 130, result.stderr
    assert "Traceback" not in result.stderr and "KeyboardInterrupt" not in result.stderr


def test_the_installed_command_starts_at_the_entry_point_that_catches_ctrl_c():
    """The console script (what `workbench` runs) and `python -m workbench` share that entry point."""
    from importlib.metadata import entry_points

    from workbench import launch

    (script,) = [point for point in entry_points(group="console_scripts") if point.name == "workbench"]
    assert script.load() is launch.run


def test_a_revert_prints_the_command_that_takes_it_back_and_that_command_does(tmp_path):
    """A revert is rows of its own: text names the `workbench revert` that takes it back (its one row, or a
    group's revert group) and --json gives the rows it wrote; running what it printed, as a person would,
    puts the file back, and the revert of that revert is taken back the same way. (Run in this process,
    ``tests/cli_support.py``: the words and the exit status are the subject.)"""
    home = str(tmp_path / "h")
    memory = lambda: json.loads(completed("memory", "show", "--target", "memory", "--home", home, "--json").stdout)  # noqa: E731
    assert completed("memory", "add", "--target", "memory", "Likes jazz", "--home", home).returncode == 0
    data = json.loads(completed("revert", "1", "--home", home, "--json").stdout)
    (new,) = data["reverted"][0]["rows"]
    assert new > 1 and data["undo_ref"] == str(new) and memory()["entries"] == []
    again = completed("revert", str(new), "--home", home)
    assert again.returncode == 0 and memory()["entries"] == ["Likes jazz"]
    printed = again.stdout.splitlines()[-1].split("undo: ", 1)[1]
    assert printed.startswith("workbench revert ") and printed != f"workbench revert {new}"
    assert completed(*printed.split()[1:], "--home", home).returncode == 0 and memory()["entries"] == []
    # a group (an outside edit of two entries): its revert is a group of its own, and so is taken back
    (tmp_path / "h" / "memories" / "MEMORY.md").write_text("One\n§\nTwo", encoding="utf-8")
    rows = json.loads(completed("timeline", "--home", home, "--json").stdout)["rows"]
    (edit,) = {row["group"] for row in rows if str(row.get("group", "")).startswith("outside:")}
    group = completed("revert", edit, "--home", home)
    assert group.returncode == 0 and memory()["entries"] == []
    printed = group.stdout.splitlines()[-1]
    assert printed.startswith("  undo: workbench revert revert:"), group.stdout
    back = completed(*printed.split()[2:], "--home", home, "--json")
    assert back.returncode == 0 and memory()["entries"] == ["One", "Two"]
    assert json.loads(back.stdout)["undo_ref"].startswith("revert:")
