"""The CLI answers bad words, bad bytes, busy and broken databases with a clear error."""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from engine.db import describe_error
from tests.cli_support import ran
from tests.hermes_support import workbench_cmd


def _run(args, env=None, **kwargs):
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(args, capture_output=True, env=full_env, timeout=60, **kwargs)


@pytest.mark.parametrize(
    "argv",
    [
        ["memory", "show", "--json", "--bogus"],
        ["memory", "add", "--json"],
        ["--json", "sessions", "show"],
        ["memory", "history", "--json", "--limit", "many"],
        ["pending", "--json", "frobnicate"],
    ],
)
def test_every_usage_error_under_json_prints_one_json_document(tmp_path, argv):
    proc = _run(workbench_cmd("--home", str(tmp_path / "h"), *argv), text=True)
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)  # exactly one document, nothing else on stdout
    assert doc["success"] is False and doc["usage"] is True and doc["error"]
    assert proc.stderr == ""  # the error once, in the document: no usage text beside it


def test_an_empty_home_is_refused_instead_of_writing_the_default_home(tmp_path):
    for argv in (["--home", "", "memory", "add", "x"], ["--home=", "memory", "add", "x"]):
        proc = _run(workbench_cmd(*argv, "--json"), env={"WORKBENCH_HOME": str(tmp_path / "default")}, text=True)
        assert proc.returncode == 2, proc.stderr
        assert "--home is empty" in json.loads(proc.stdout)["error"]
    assert not (tmp_path / "default").exists()


def test_a_home_under_an_unknown_user_is_refused(tmp_path):
    proc = _run(
        workbench_cmd("memory", "show", "--json"), env={"WORKBENCH_HOME": "~nosuchuser-wb/x"}, cwd=tmp_path, text=True
    )
    assert proc.returncode == 1
    assert "names a user" in json.loads(proc.stdout)["error"]
    assert list(tmp_path.iterdir()) == []


def test_arguments_that_are_not_utf8_are_a_usage_error_and_write_nothing(tmp_path):
    home = tmp_path / "h"
    argv = [os.fsencode(a) for a in workbench_cmd("--home", str(home), "--json", "memory", "add")] + [b"caf\xff\xfe"]
    proc = _run(argv)
    assert proc.returncode == 2
    assert "not valid UTF-8" in json.loads(proc.stdout)["error"]
    assert not (home / "memories" / "MEMORY.md").exists()
    assert b"Traceback" not in proc.stderr


def _holding(database: Path, begin: str) -> subprocess.Popen:
    """A process that opens ``database``, runs ``begin`` (and a read), says "held" and waits."""
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import sqlite3, sys, time
            conn = sqlite3.connect({str(database)!r}, isolation_level=None)
            conn.execute({begin!r})
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            print("held", flush=True)
            time.sleep(30)
        """),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )


def test_a_held_database_fails_fast_and_names_the_process_holding_it(tmp_path):
    """Only the writer is named: a process that merely reads holds other lock bytes (it once was named too)."""
    home = tmp_path / "h"
    assert _run(workbench_cmd("--home", str(home), "memory", "add", "first")).returncode == 0
    reader = _holding(home / "workbench.db", "BEGIN")
    holder = _holding(home / "workbench.db", "BEGIN IMMEDIATE")
    try:
        assert reader.stdout.readline().strip() == "held"
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        proc = _run(
            workbench_cmd("--home", str(home), "--json", "memory", "add", "second"),
            env={"WORKBENCH_BUSY_TIMEOUT": "1"},
            text=True,
        )
        waited = time.monotonic() - started
    finally:
        for process in (holder, reader):
            process.kill()
            process.wait()
    assert proc.returncode == 1
    error = json.loads(proc.stdout)["error"]
    assert "busy" in error and "WORKBENCH_BUSY_TIMEOUT" in error
    # its program by name (it was the interpreter's path, cut), never its arguments: they can hold secrets
    python = os.path.basename(sys.executable)
    assert f"process {holder.pid} ({python}) holds its write lock" in error and "import sqlite3" not in error
    assert str(reader.pid) not in error
    assert waited < 30  # bounded by the budget, not by the holder (the old retry loop waited 40 s or more)
    assert (home / "memories" / "MEMORY.md").read_text() == "first"


@pytest.mark.parametrize(
    ("exc", "says"),
    [
        (sqlite3.OperationalError("database or disk is full"), "is full"),
        (OSError(28, "No space left on device"), "is full"),
        (sqlite3.OperationalError("attempt to write a readonly database"), "read-only"),
        (OSError(30, "Read-only file system"), "read-only"),
        (sqlite3.DatabaseError("file is not a database"), "could not be read as an SQLite database"),
    ],
)
def test_database_errors_name_the_real_cause(tmp_path, exc, says):
    message = describe_error(exc, tmp_path / "workbench.db")
    assert says in message
    if says != "could not be read as an SQLite database":
        assert "move it aside" not in message.lower()  # dangerous advice for an intact database


def test_an_unexpected_error_exits_nonzero_and_saves_the_traceback_instead_of_printing_it(
    tmp_path, monkeypatch, capsys
):
    from workbench import cli
    from workbench.cli import memory_cmds

    def broken(home, args):
        raise ZeroDivisionError("a bug")

    monkeypatch.setenv("WORKBENCH_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setattr(memory_cmds, "show", broken)
    (tmp_path / "h").mkdir()
    status = cli.main(["--home", str(tmp_path / "h"), "memory", "show", "--json"])
    out = capsys.readouterr()
    assert status == 70
    doc = json.loads(out.out)
    assert doc["success"] is False and doc["internal"] is True
    saved = list((tmp_path / "cfg" / "crashes").iterdir())
    assert len(saved) == 1 and str(saved[0]) in doc["error"]
    assert "ZeroDivisionError: a bug" in saved[0].read_text()
    assert "Traceback" not in out.out + out.err


def test_a_bug_in_rendering_a_commands_text_is_said_and_saved_not_shown_as_a_traceback(tmp_path, monkeypatch, capsys):
    """A command's text is rendered as it prints, after the handler returned (``Output.text`` a callable):
    a bug there raised out of ``main`` and the terminal showed its traceback."""
    from workbench import cli
    from workbench.cli import memory_cmds

    def broken(*args):
        raise ZeroDivisionError("a rendering bug")

    monkeypatch.setenv("WORKBENCH_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setattr(memory_cmds, "_view_text", broken)
    (tmp_path / "h").mkdir()
    status = cli.main(["--home", str(tmp_path / "h"), "memory", "show"])
    out = capsys.readouterr()
    assert status == 70 and out.out == ""
    (saved,) = (tmp_path / "cfg" / "crashes").iterdir()
    assert out.err.startswith("error: ") and str(saved) in out.err.replace("\n", ""), out.err
    assert "ZeroDivisionError: a rendering bug" in saved.read_text()


@pytest.mark.parametrize("argv", [["memory", "show"], ["memory", "show", "--json"], ["nosuch", "--json"]])
def test_a_reader_that_went_away_ends_the_command_quietly(tmp_path, argv):
    """``workbench timeline | head -1`` on a long timeline: head gone, the print raised BrokenPipeError and
    its traceback (two, once the error's own print met the same pipe) covered the terminal; so did a usage
    error's JSON."""
    (tmp_path / "h").mkdir()
    read, write = os.pipe()
    os.close(read)  # (the reader gone before a byte is written: every write fails)
    try:
        proc = subprocess.run(workbench_cmd("--home", str(tmp_path / "h"), *argv), stdout=write, stderr=subprocess.PIPE)
    finally:
        os.close(write)
    assert proc.returncode == 141 and proc.stderr == b"", (proc.returncode, proc.stderr.decode())


@pytest.mark.parametrize(
    "argv",
    [
        ["sessions", "list", "--limit", "99999999999999999999999"],
        ["sessions", "prune", "--days", "inf", "--yes"],
        ["sessions", "prune", "--days", "nan", "--yes"],
        ["sessions", "show", "x", "--around", "1e999"],
        ["memory", "undo", "-5"],
        ["curator", "purge", "--days", "1e999", "--yes"],
        ["run", "--speed", "1e400", "-m", "x"],
    ],
)
def test_huge_or_non_finite_numbers_are_usage_errors(tmp_path, argv, capsys):
    from workbench.cli import main

    assert main(["--home", str(tmp_path / "h"), "--json", *argv]) == 2
    doc = json.loads(capsys.readouterr().out)
    said = ("out of range", "is not", "must be a whole number from")  # (the last: curator's one rule, as the TUI's)
    assert any(words in doc["error"] for words in said), doc


NUMBER_ARGS = (
    ["curator", "purge", "--dry-run", "--days"],
    ["sessions", "prune", "--dry-run", "--days"],
    ["timeline", "--limit"],
    ["timeline", "--since"],  # (the number of an age: 10d)
)


@pytest.mark.parametrize("argv", NUMBER_ARGS)
@pytest.mark.parametrize("typed", ["1_0", "١٠", "1e1", "²"])
def test_a_number_typed_in_anything_but_digits_0_9_is_a_usage_error(tmp_path, argv, typed, capsys):
    """Python's int() and float() read ``1_0``, ``١٠`` and ``1e1`` as 10: `curator purge --days 1_0` purged
    what was archived more than 10 days ago. Every number typed is digits 0-9 (``values.typed_whole``)."""
    from engine import open_home
    from workbench.cli import main

    open_home(tmp_path / "h").close()
    typed += "d" if argv[-1] == "--since" else ""
    assert main(["--home", str(tmp_path / "h"), "--json", *argv, typed]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert repr(typed) in error, error


@pytest.mark.parametrize("argv", NUMBER_ARGS)
@pytest.mark.parametrize("typed", ["１０", " 10 "])  # (a CJK input method's digits: their meaning is plain)
def test_full_width_digits_and_spaces_around_a_number_read_as_its_digits(tmp_path, argv, typed, capsys):
    from engine import open_home
    from workbench.cli import main

    open_home(tmp_path / "h").close()
    typed += "d" if argv[-1] == "--since" else ""
    assert main(["--home", str(tmp_path / "h"), "--json", *argv, typed]) == 0, capsys.readouterr()


@pytest.mark.parametrize("typed", ["３ｄ", "１０ｄ", "２ｈ", "１ｗ"])
def test_an_age_typed_all_in_full_width_reads_as_typed_in_ascii(typed):
    """`timeline --since ３ｄ` was refused while `１０d` was read: the unit a CJK input method types in full
    width too reads as its ASCII letter."""
    from engine.timeline import parse_since
    from engine.values import half_width

    assert parse_since(typed, 1_000_000.0) == parse_since(half_width(typed), 1_000_000.0) < 1_000_000.0


@pytest.mark.parametrize("typed", ["{}", " {} "])
def test_a_row_id_typed_in_full_width_digits_is_reverted(tmp_path, typed, capsys):
    """`workbench revert １０` said "'１０' is not a timeline row or group" while `timeline show １０` and
    `memory undo １０` read row 10: a row id is a number typed as every other one is."""
    from engine import open_home
    from engine.tools import ToolContext
    from workbench.cli import main

    home = open_home(tmp_path / "h")
    assert home.memory.add("memory", "Deploys on Fridays", ToolContext(actor="user"))["success"]
    (row,) = home.journal.query(subsystem="memory", actions=("add",))
    home.close()
    full_width = str(row.id).translate(str.maketrans("0123456789", "０１２３４５６７８９"))
    assert main(["--home", str(tmp_path / "h"), "--json", "revert", typed.format(full_width)]) == 0
    assert json.loads(capsys.readouterr().out)["reverted"][0]["id"] == row.id
    assert open_home(tmp_path / "h").memory.read("memory").entries == []


@pytest.mark.parametrize(
    ("argv", "usage", "hint"),
    [
        (["memory", "add", "bogus", "hello"], "workbench memory add", "workbench --home H memory add 'bogus hello'"),
        (  # the first word may be meant for --target: both readings are offered
            ["memory", "add", "user", "Name", "is", "Sam"],
            "workbench memory add",
            "(TEXT is one argument: put it in quotes, as in workbench --home H memory add 'user Name is Sam'; or, "
            "if 'user' was meant for --target: workbench --home H memory add --target user 'Name is Sam')",
        ),
        (  # the example keeps the options given: it dropped --target user, so it wrote to MEMORY
            ["memory", "add", "--target", "user", "a", "b", "--json"],
            "workbench memory add",
            "as in workbench --home H memory add --target user 'a b' --json)",
        ),
        (
            ["sessions", "search", "error", "log"],
            "workbench sessions search",
            "workbench --home H sessions search 'error log'",
        ),
        (["sessions", "rename", "s1", "New", "title"], "workbench sessions rename", "rename s1 'New title'"),
        (  # the text's first word is the subcommand's own name: the hint quoted that one
            ["memory", "add", "add", "milk"],
            "workbench memory add",
            "as in workbench --home H memory add 'add milk')",
        ),
        (["sessions", "search", "search", "engine"], "workbench sessions search", "sessions search 'search engine')"),
        (["memory", "show", "extra"], "workbench memory show", None),
        (["memory", "add", "hello", "--bogus"], "workbench memory add", None),
        (  # a user trial: the store typed as a word, or as an option of its own
            ["memory", "remove", "memory", "--old", "X"],
            "workbench memory remove",
            "unrecognized arguments: memory. Did you mean '--target memory'?",
        ),
        (["memory", "add", "--user", "hi"], "workbench memory add", "--user. Did you mean '--target user'?"),
    ],
)
def test_words_a_command_cannot_use_are_refused_under_its_own_usage(tmp_path, capsys, argv, usage, hint):
    """argparse left them to the top level, whose usage said nothing about the command typed."""
    from workbench.cli import main

    home = tmp_path / "h"
    assert main(["--home", str(home), *argv]) == 2
    out, err = capsys.readouterr()
    if "--json" in argv:  # the document alone says it: no usage text on stderr
        assert err == ""
        said = json.loads(out)["error"].replace(str(home), "H")
        assert said.startswith("unrecognized arguments:")
    else:
        said = err.replace(str(home), "H")
        assert said.startswith(f"usage: {usage} ") and f"{usage}: error: unrecognized arguments:" in said
    assert (hint in said) if hint else "put it in quotes" not in said
    assert not (home / "memories" / "MEMORY.md").exists()


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_all_typed_as_an_option_is_told_to_drop_the_dashes(tmp_path, capsys, decision):
    """A user trial: `pending approve --all` said only that ID|all is required."""
    from workbench.cli import main

    assert main(["--home", str(tmp_path / "h"), "pending", decision, "--all"]) == 2
    said = capsys.readouterr().err.splitlines()[-1]
    assert said == (
        f"workbench pending {decision}: error: the following arguments are required: ID|all. "
        "Did you mean 'all', without the dashes?"
    )


@pytest.mark.parametrize("argv", [["sessions", "show", "--ID"], ["pending", "approve", "--ID"]])
def test_a_placeholder_typed_as_an_option_is_not_offered_as_a_word(tmp_path, capsys, argv):
    """`sessions show --ID` was told "Did you mean 'ID', without the dashes?": ID stands for a session's
    id, so typing it bare is no better. Only a literal word (``all``) is offered."""
    from workbench.cli import main

    assert main(["--home", str(tmp_path / "h"), *argv]) == 2
    said = capsys.readouterr().err.splitlines()[-1]
    assert said.startswith(f"workbench {argv[0]} {argv[1]}: error: the following arguments are required: ")
    assert "Did you mean" not in said


def test_long_words_a_command_cannot_use_are_echoed_once_and_cut(tmp_path, capsys):
    """A 5,000-character entry left unquoted came back three times in the usage error."""
    from workbench.cli import main

    words = ["memory", "x" * 5000, "extra"]
    assert main(["--home", str(tmp_path / "h"), "--json", "memory", "add", *words]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert len(error) < 400 and error.count("x" * 100) == 1
    assert "… (5,006 characters in all)" in error
    assert error.endswith("(TEXT is one argument: put all of it in one pair of quotes)")


def test_a_skill_name_longer_than_a_file_name_is_not_found_not_a_path_error(tmp_path, capsys):
    """`skills show` with a 300-character name said the path was too long and that "nothing was
    changed", for a command that changes nothing (a user's trial): no such skill can exist."""
    from engine import open_home
    from workbench.cli import main

    open_home(tmp_path / "h").close()
    assert main(["--home", str(tmp_path / "h"), "--json", "skills", "show", "a" * 300]) == 1
    error = json.loads(capsys.readouterr().out)["error"]
    assert error.startswith("Skill 'aaa") and "not found" in error and "path" not in error


@pytest.mark.parametrize(
    "argv",
    [
        ["revert", "LONG"],
        ["sessions", "show", "LONG"],
        ["pending", "approve", "LONG"],
        ["sessions", "search", "LONG"],  # (no error: "no matches for …", cut all the same)
        ["timeline", "--since", "LONG"],
        ["memory", "add", "--target", "LONG", "x"],
        ["LONG"],
    ],
)
def test_an_error_never_repeats_a_long_argument_whole(home, capsys, argv):
    from workbench.cli import main

    home.close()
    long = "z" * 3000
    for shape in ([], ["--json"]):
        assert main(["--home", str(home.root), *shape, *[long if a == "LONG" else a for a in argv]]) in (0, 1, 2)
        out, err = capsys.readouterr()
        said = " ".join(_errors(json.loads(out))) if shape else out + err  # (--json keeps the data, ids too)
        assert "z" * 200 not in said and ("z" not in said or "… (3,000 characters in all)" in said)


def _errors(value) -> list[str]:
    if isinstance(value, dict):
        return [v for k, v in value.items() if k == "error" and isinstance(v, str)] + _errors(list(value.values()))
    if isinstance(value, list):
        return [e for item in value for e in _errors(item)]
    return []


def test_a_home_path_too_long_is_named_so_without_database_advice(tmp_path, capsys):
    from workbench.cli import main

    assert main(["--home", str(tmp_path / ("d" * 300)), "memory", "show"]) == 1
    err = capsys.readouterr().err
    assert "is a longer path than the file system allows" in err and "SQLite" not in err


def test_a_role_no_message_has_is_a_usage_error_naming_the_roles(tmp_path, capsys):
    """--role bogus answered "no matches" with status 0, as if the search had run on that role."""
    from workbench.cli import main

    home = tmp_path / "h"
    assert main(["--home", str(home), "run", "-m", "hello there"]) == 0
    capsys.readouterr()
    assert main(["--home", str(home), "--json", "sessions", "search", "hello", "--role", "bogus"]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["error"] == (
        "no message has the role 'bogus'; a role filter takes one of: assistant, system, tool, user"
    )
    assert err == ""  # (--json: the document alone; the usage comes with the text form)
    assert main(["--home", str(home), "sessions", "search", "hello", "--role", "bogus"]) == 2
    assert capsys.readouterr().err.startswith("usage: workbench sessions search ")
    assert main(["--home", str(home), "--json", "sessions", "search", "zebra", "--role", "user"]) == 0  # no hit
    assert json.loads(capsys.readouterr().out)["count"] == 0
    assert main(["--home", str(home), "--json", "sessions", "search", "hello", "--role", "bogus,user"]) == 2
    assert "'bogus'" in json.loads(capsys.readouterr().out)["error"]  # (a typo beside a good role: said too)


def test_role_and_sort_words_in_the_query_filter_as_the_flags_do(tmp_path, capsys):
    """The TUI's search box reads ``role:`` and ``sort:`` words; the CLI reads them alike, beside its flags."""
    from workbench.cli import main

    home = tmp_path / "h"
    assert main(["--home", str(home), "run", "-m", "hello there"]) == 0
    capsys.readouterr()
    for role in ("assistant", "user"):
        assert main(["--home", str(home), "--json", "sessions", "search", f"role:{role} hello"]) == 0
        assert [hit["role"] for hit in json.loads(capsys.readouterr().out)["results"]] == [role]
    assert main(["--home", str(home), "--json", "sessions", "search", "hello role:user", "--sort", "newest"]) == 0
    (hit,) = json.loads(capsys.readouterr().out)["results"]
    assert hit["role"] == "user" and hit["plan"].endswith(":newest")
    assert main(["--home", str(home), "--json", "sessions", "search", "hello sort:oldest", "--sort", "newest"]) == 2
    assert json.loads(capsys.readouterr().out)["error"] == "two orders given (sort:newest and sort:oldest): keep one"
    assert main(["--home", str(home), "--json", "sessions", "search", "role:user"]) == 2  # a filter alone: no words
    assert "search needs words" in json.loads(capsys.readouterr().out)["error"]


def test_a_home_this_command_created_is_said_once_on_stderr(tmp_path):
    """A mistyped --home made a new, empty home in silence: the memory seemed to be gone."""
    typo = tmp_path / "hermse"
    first = _run(workbench_cmd("--home", str(typo), "--json", "memory", "add", "a fact"), text=True)
    assert first.returncode == 0 and json.loads(first.stdout)["success"]  # stdout stays one JSON document
    assert f"note: {typo} did not exist: created a new, empty home there" in first.stderr
    again = _run(workbench_cmd("--home", str(typo), "memory", "add", "another fact"), text=True)
    assert again.returncode == 0 and "did not exist" not in again.stderr


@pytest.mark.parametrize(
    "command",
    [
        ["sessions", "search", "東京"],
        ["sessions", "reindex"],
        ["sessions", "rename", "s1", "title"],
        ["memory", "remove", "--old", "tea"],
        ["memory", "history"],
        ["pending", "approve", "abc123"],
        ["revert", "5"],
        ["curator", "rollback", "abc123"],
        ["curator", "run", "--dry-run"],
        ["curator", "pause"],
        ["curator", "consolidate"],
        ["doctor", "--fix"],
        ["doctor"],
        ["memory", "show"],
        ["sessions", "list"],
    ],
)
def test_a_command_on_what_a_home_holds_never_creates_one(tmp_path, command):
    """`sessions search` at a mistyped --home made a new home (and a workbench.db without its journal)."""
    typo = tmp_path / "hermse"
    status, out, _ = ran("--home", str(typo), "--json", *command)
    assert status == 1 and not typo.exists()
    assert json.loads(out)["error"] == (
        f"{typo} does not exist; this command works on an existing home only. Check --home."
    )


def test_a_malformed_since_or_purge_bound_is_a_usage_error(tmp_path):
    """`timeline --since yesterday` exited 1 where every other usage error exits 2, and `curator purge
    --days 0` passed the parser's 0-36,500 only to be refused by the engine's 1."""
    home = str(tmp_path / "h")
    assert ran("--home", home, "memory", "add", "a fact")[0] == 0
    status, _, err = ran("--home", home, "timeline", "--since", "yesterday")
    assert status == 2 and err.startswith("usage: workbench timeline")
    for days in ("36501", "99999999999999999999", "-1"):
        status, _, err = ran("--home", home, "curator", "purge", "--days", days, "--dry-run")
        assert status == 2 and "must be a whole number from 1 to 36,500" in err
    # 0 is no "everything" here (as `sessions prune --days 0` is): Hermes reads it as purging turned off
    status, _, err = ran("--home", home, "curator", "purge", "--days", "0", "--dry-run")
    assert status == 2 and "argument --days: 0 days is refused: Hermes reads a purge's 0 as purging " in err
    assert "give 1 to purge every skill archived a day or more ago." in err
    assert ran("--home", home, "curator", "purge", "--days", "36500", "--dry-run")[0] == 0


def test_listing_the_built_in_scenarios_needs_no_home(tmp_path):
    typo = tmp_path / "hermse"
    listed = _run(workbench_cmd("--home", str(typo), "--json", "scenarios", "list"), text=True)
    assert listed.returncode == 0 and "demo" in {s["name"] for s in json.loads(listed.stdout)["scenarios"]}
    assert not typo.exists() and "did not exist" not in listed.stderr


def test_a_malformed_revert_reference_is_a_usage_error_and_a_missing_one_is_not(tmp_path):
    """`revert abc` exited 1 where `memory undo abc` exits 2: a reference of no known form is usage."""
    home = str(tmp_path / "h")
    assert ran("--home", home, "memory", "add", "a fact")[0] == 0
    status, _, err = ran("--home", home, "revert", "abc", "--dry-run")
    assert status == 2 and err.startswith("usage: workbench revert")
    for missing in ("99999", "review:nobody:1"):
        assert ran("--home", home, "revert", missing, "--dry-run")[0] == 1


def test_a_warning_the_engine_logs_is_one_visible_line_and_its_traceback_a_file(tmp_path):
    """Python's last-resort handler printed a logged warning raw (data in it reached the terminal)
    and a logged exception with its whole traceback."""
    script = textwrap.dedent(
        """
        import logging, sys
        from workbench import cli
        from workbench.cli import memory_cmds

        def noisy(home, args):
            log = logging.getLogger("engine.memory.archive_writes")
            log.warning("search for %s failed: %s", "\\x1b]0;PWNED\\x07", "database is locked")
            log.warning("search for %s failed: %s", "\\x1b]0;PWNED\\x07", "database is locked")  # said once
            try:
                1 / 0
            except ZeroDivisionError:
                log.exception("a background job failed")
            return None

        memory_cmds.show = noisy
        sys.exit(cli.main(["--home", sys.argv[1], "memory", "show"]))
        """
    )
    (tmp_path / "h").mkdir()
    env = {**os.environ, "WORKBENCH_CONFIG_DIR": str(tmp_path / "cfg")}
    proc = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "h")], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 0 and "Traceback" not in proc.stderr and "\x1b" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 2, lines
    assert lines[0] == "warning: search for ␛]0;PWNED␇ failed: database is locked"
    assert lines[1].startswith("warning: a background job failed (ZeroDivisionError; the traceback is in ")
    (saved,) = (tmp_path / "cfg" / "crashes").iterdir()
    assert "ZeroDivisionError: division by zero" in saved.read_text()


@pytest.mark.parametrize(
    "argv",
    [
        ["sessions", "search", "-foo"],
        ["memory", "add", "--target", "user", "-dashes-first"],
        ["sessions", "search", "--limit=5", "-foo"],  # an option given with = is no text
    ],
)
@pytest.mark.parametrize("home_first", [False, True])  # --home before the command name is kept too
def test_text_that_starts_with_a_dash_is_told_how_to_pass_it(tmp_path, capsys, argv, home_first):
    """``sessions search -foo`` said only that QUERY was missing: argparse reads ``-foo`` as an option."""
    from workbench.cli import main

    (tmp_path / "h").mkdir()
    home = ["--home", str(tmp_path / "h")]
    assert main([*home, *argv] if home_first else [*argv, *home]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    dashed = argv[-1]
    assert "starts with '-', so it reads as an option: put -- before it, last" in error
    example = error.rsplit("as in ", 1)[1].rstrip(")")
    words = shlex.split(example)
    assert words[:1] == ["workbench"] and words[-2:] == ["--", dashed]
    assert main(words[1:]) == 0, "the example given is a command that works"


@pytest.mark.parametrize(
    ("argv", "joined"),
    [
        (["memory", "remove", "--old", "-dash"], "--old=-dash"),
        (["sessions", "search", "tea", "--role", "-x"], "--role=-x"),
        (["run", "-m", "-hello"], "--message=-hello"),  # a short option: its long form, joined
    ],
)
def test_an_option_value_that_starts_with_a_dash_is_told_how_to_pass_it(tmp_path, capsys, argv, joined):
    """`memory remove --old -dash` said only "expected one argument": argparse reads -dash as an option."""
    from workbench.cli import main

    (tmp_path / "h").mkdir()
    assert main(["--home", str(tmp_path / "h"), *argv]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.endswith(f"starts with '-', so it reads as an option: give it as {joined})")


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["sessions", "search", "--h"], "ambiguous option: --h could match --help, --home"),
        (["skills", "show", "--", "x", "--limit"], "unrecognized arguments: --limit"),  # (after --: no option)
    ],
)
def test_a_word_argparse_calls_ambiguous_is_a_usage_error_not_a_crash(tmp_path, argv, says):
    """`skills archive -- -dash --home H` and `sessions search --h` overflowed the stack: the advice on
    a dash asked argparse about `--` (or `--h`), whose "ambiguous option" error asked for advice again."""
    (tmp_path / "h").mkdir()
    done = _run(workbench_cmd(*argv, "--home", str(tmp_path / "h")), text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr and "RecursionError" not in done.stderr
    assert says in done.stderr.strip().splitlines()[-1]


REFUSALS = [
    ["memory", "remove", "--old", "zzz"],
    ["memory", "replace", "--old", "zzz", "new text"],
    ["memory", "undo", "999"],
    ["memory", "repair", "--remove", "9"],
    ["pending", "approve", "nope"],
    ["pending", "reject", "0000dead"],
    ["curator", "purge", "--days", "1"],
]


@pytest.mark.parametrize("argv", REFUSALS, ids=lambda a: " ".join(a[:3]))
def test_every_refusal_starts_with_error(home, capsys, argv):
    """Memory commands started their refusals with `✗` and `pending approve nope` with `Approved 0
    pending write(s).`: the contract says a refusal prints `error: ...` on stderr."""
    from workbench.cli import main

    home.memory.add("memory", "Kettle descales monthly")
    home.close()
    assert main(["--home", str(home.root), *argv]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("error: ") and "✗" not in err


def test_approve_all_with_a_failure_ends_with_the_error(home, capsys):
    """A batch that partly failed lists what was done on stdout and ends with an `error:` line."""
    from tests.hermes_support import hermes_record
    from workbench.cli import main

    hermes_record(home, "0000ad01", {"action": "add", "target": "memory", "content": "Cups live left"})
    hermes_record(home, "0000ad02", {"action": "remove", "target": "memory", "old_text": "no such entry"})
    home.close()
    assert main(["--home", str(home.root), "pending", "approve", "all"]) == 1
    out, _ = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == "Approved 1 pending write." and "0000ad01" in lines[1]
    assert lines[-1] == "error: 1 of 2 could not be approved and stay pending."


def test_a_lock_holder_that_rewrote_its_title_is_named_without_its_arguments(tmp_path):
    """A process that sets its title (setproctitle) has one argv word holding spaces: the holder's
    name kept what followed its last '/', a secret argument included (`tool --token=SECRET123`)."""
    from engine.db import _command_of

    titled = subprocess.Popen(["/opt/tool --token=SECRET123 --key a/b", "30"], executable="/bin/sleep")
    blank = subprocess.Popen(["\u00a0\u2028", "30"], executable="/bin/sleep")  # (spaces Python splits on alone)
    job = tmp_path / "job.py --password=hunter2"  # (a script's word too: cut at its first space)
    job.write_text("import sys\nsys.stdin.read()\n")
    script = subprocess.Popen(["python3", str(job)], executable=sys.executable, stdin=subprocess.PIPE)

    def named(process: subprocess.Popen) -> str:  # (a child's argv shows in /proc only once its exec is done)
        deadline = time.monotonic() + 10
        while (name := _command_of(str(process.pid))) == "unknown program" and time.monotonic() < deadline:
            time.sleep(0.01)
        return name

    try:
        assert named(titled) == "tool"
        assert named(script) == "python3 job.py"
        assert named(blank) == "30"  # (it raised IndexError: a traceback for a busy error)
    finally:
        for process in (titled, script, blank):
            process.kill()
            process.wait()


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["memory", "undo", "-1"], "-1 is out of range: give an id of 1 or more"),
        (["timeline", "show", "0"], "0 is out of range: give an id of 1 or more"),
        (["memory", "undo", str(2**63)], f"{2**63} is out of range: give an id from 1 to 9,223,372,036,854,775,807"),
    ],
)
def test_an_id_below_one_is_refused_without_sqlites_bound(tmp_path, argv, said, capsys):
    """A trial: `memory undo -1` answered `give an id from 1 to 9,223,372,036,854,775,807`, a bound
    only SQLite has in mind; it is named only for an id past it."""
    from workbench.cli import main

    assert main(["--home", str(tmp_path / "h"), "--json", *argv]) == 2
    assert json.loads(capsys.readouterr().out)["error"].endswith(said)


def test_a_quoting_hint_for_text_with_a_bidi_control_runs_as_shown_when_copied(home):
    """The hint showed the query's bidi override as `<U+202E>`, a placeholder that, copied, would be
    searched as those eight characters: the command suggested now spells it as a shell escape ($'...'),
    and copied into a shell it runs with the very text typed."""
    home.close()
    proc = _run(
        workbench_cmd("sessions", "search", "deploy", "\u202elog", "--json", "--home", str(home.root)), text=True
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    error = json.loads(proc.stdout)["error"]
    hint = error.split("put it in quotes, as in ", 1)[1].removesuffix(")")
    assert "<U+202E>" not in hint and "\u202e" not in hint and "$'deploy \\xe2\\x80\\xaelog'" in hint
    assert hint.startswith("workbench ")
    ran = _run(["bash", "-c", hint.replace("workbench", shlex.join(workbench_cmd()), 1)], text=True)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["query"] == "deploy \u202elog"
