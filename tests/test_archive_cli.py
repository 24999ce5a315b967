"""`workbench sessions ...`: exact JSON fields and exit codes, from real processes where the process is
the point (exit codes, no traceback on a damaged archive) and in this process for the rest."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import stat
import subprocess
import sys

import pytest

from engine import FixedClock, open_home
from engine.errors import SessionLive
from tests.cli_support import ran


def wb_process(home_dir, *args):
    """A real ``python -m workbench`` process: its exit status, JSON document (None when it printed none)
    and stderr."""
    proc = subprocess.run(
        [sys.executable, "-m", "workbench", *args, "--home", str(home_dir), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return proc.returncode, (json.loads(proc.stdout) if proc.stdout.strip() else None), proc.stderr


def wb(home_dir, *args):
    """The same command run in this process (tests/cli_support.py), for the many checks of its fields."""
    code, out, err = ran(*args, "--home", str(home_dir), "--json")
    return code, (json.loads(out) if out.strip() else None), err


@pytest.fixture
def home_dir(tmp_path, clock):
    home = open_home(tmp_path / "h", clock=clock)
    archive = home.archive
    archive.create_session("root_1", source="cli", title="Migration night")
    archive.append_messages(
        "root_1",
        [
            {"role": "user", "content": "run the database migration tonight"},
            {"role": "assistant", "content": "半夜执行数据库迁移"},
        ],
    )
    archive.end_session("root_1", "compression")
    archive.create_session("child_1", source="cli", parent_session_id="root_1", title="Migration night #2")
    archive.append_message("child_1", "user", "migration finished, check the error log")
    home.close()
    return tmp_path / "h"


def test_list_search_show_lineage_json(home_dir):
    """The JSON fields of each read command: the listing from a real process, the rest in this one."""
    code, data, _ = wb_process(home_dir, "sessions", "list")
    assert code == 0 and [s["id"] for s in data["sessions"]] == ["child_1", "root_1"]
    assert set(data["sessions"][0]) >= {
        "id",
        "title",
        "source",
        "started_at",
        "ended_at",
        "end_reason",
        "message_count",
        "parent_session_id",
    }

    code, data, _ = wb(home_dir, "sessions", "search", "migration")
    assert code == 0 and data["count"] == 1  # both sessions share one lineage root
    [hit] = data["results"]
    assert set(hit) >= {"session_id", "root_id", "title", "source", "when", "snippet", "match_message_id"}
    assert hit["root_id"] == "root_1" and "«" in hit["snippet"]

    code, data, _ = wb(home_dir, "sessions", "search", "数据库", "--role", "assistant")
    assert code == 0 and [r["match_message_id"] for r in data["results"]] == [2]
    code, data, _ = wb(home_dir, "sessions", "search", "migration", "--role", "tool,user")
    assert code == 0 and [r["role"] for r in data["results"]] == ["user"]  # "tool,user" is two roles, not one

    code, data, _ = wb(home_dir, "sessions", "show", "root_1", "--around", "2", "--window", "1")
    assert code == 0 and data["session"]["id"] == "root_1"
    assert [m["id"] for m in data["messages"]] == [1, 2]
    assert set(data["messages"][0]) >= {"id", "role", "content", "tool_name", "tool_calls", "timestamp"}

    code, data, _ = wb(home_dir, "sessions", "lineage", "child_1")
    assert code == 0 and data == {
        "root_id": "root_1",
        "chain": ["root_1", "child_1"],
        "children": {"root_1": ["child_1"]},
        "loops_to": None,
    }


def test_show_says_where_a_compressed_conversation_continues_and_what_it_continues(home_dir, tmp_path):
    """A user trial: `sessions show` of a session ended by compression said nothing of where the conversation
    goes on, nor its continuation which session it continues; both name the other and the command to read it."""
    code, out, _ = ran("sessions", "show", "root_1", "--home", str(home_dir))
    assert code == 0 and out.rstrip().splitlines()[-1] == "continued in child_1: workbench sessions show child_1"
    code, out, _ = ran("sessions", "show", "child_1", "--home", str(home_dir))
    assert out.splitlines()[1] == "continues root_1, ended by compression: workbench sessions show root_1"
    assert "continued in" not in out
    code, data, _ = wb(home_dir, "sessions", "show", "child_1")
    assert (data["continues"], data["continued_in"]) == ("root_1", None)
    code, data, _ = wb(home_dir, "sessions", "show", "root_1")
    assert (data["continues"], data["continued_in"]) == (None, "child_1")
    home = open_home(home_dir)
    home.archive.create_session("spawned", source="tool", parent_session_id="child_1")
    home.close()
    code, out, _ = ran("sessions", "show", "spawned", "--home", str(home_dir))
    assert out.splitlines()[1] == "child of child_1: workbench sessions lineage spawned"
    code, out, _ = ran("sessions", "show", "child_1", "--home", str(home_dir))
    assert "continued in" not in out  # (a tool's child session is no continuation)


def test_the_commands_show_names_for_a_continuation_run_as_shown(tmp_path):
    """`sessions show` named the session a compression continued in, and the one it continues, in a
    command as the bare id: one holding a space or an escape (Hermes takes any id) ran as another
    command when pasted. Each id in them is quoted for a shell, as every other command it suggests."""
    home = open_home(tmp_path / "h")
    home.archive.create_session("part one", source="cli")
    home.archive.end_session("part one", "compression")
    home.archive.create_session("part\x1b[31m two", source="cli", parent_session_id="part one")
    home.archive.create_session("tool's", source="tool", parent_session_id="part\x1b[31m two")
    home.close()
    out = ran("sessions", "show", "part one", "--home", str(tmp_path / "h"))[1]
    assert out.rstrip().splitlines()[-1] == "continued in part␛[31m two: workbench sessions show $'part\\x1b[31m two'"
    out = ran("sessions", "show", "part\x1b[31m two", "--home", str(tmp_path / "h"))[1]
    assert "ended by compression: workbench sessions show 'part one'\n" in out
    out = ran("sessions", "show", "tool's", "--home", str(tmp_path / "h"))[1]
    assert out.splitlines()[1] == "child of part␛[31m two: workbench sessions lineage 'tool'\"'\"'s'"


def test_refusals_and_usage_errors(home_dir):
    code, data, _ = wb_process(home_dir, "sessions", "show", "nope")
    assert code == 1 and data["success"] is False and "sessions list" in data["error"]
    code, data, _ = wb_process(home_dir, "sessions", "search", '"unbalanced AND (')
    assert code == 0 and data["count"] == 0
    code, data, err = wb_process(home_dir, "sessions", "show")
    assert code == 2 and data["usage"] is True and "required: ID" in data["error"] and err == ""
    for query in ("", "  "):  # nothing to look for is wrong usage, not "no matches for ''"
        code, data, err = wb_process(home_dir, "sessions", "search", query)
        assert code == 2 and data["usage"] is True and "search needs words to look for" in data["error"]


def test_reindex_rebuilds_the_cjk_index(home_dir):
    code, data, err = wb(home_dir, "sessions", "reindex")
    assert code == 0 and data == {"success": True, "messages_read": 3} and "Traceback" not in err
    code, data, _ = wb(home_dir, "sessions", "search", "数据库")
    assert code == 0 and [r["match_message_id"] for r in data["results"]] == [2]


def test_bad_counts_are_usage_errors_and_short_ids_must_be_unique(home_dir, capsys):
    from workbench.cli import main

    for argv in (
        ["sessions", "list", "--limit", "0"],
        ["sessions", "list", "--offset", "-1"],
        ["sessions", "search", "x", "--limit", "-3"],
        ["sessions", "show", "root_1", "--limit", "-1"],
        ["sessions", "show", "root_1", "--around", "1", "--window", "-2"],
        ["sessions", "prune", "--days", "-1", "--yes"],
    ):
        assert main([*argv, "--home", str(home_dir), "--json"]) == 2, argv
        out, err = capsys.readouterr()
        error = json.loads(out)["error"]  # under --json a usage error is one JSON document, and only that
        assert ("must be" in error or "out of range" in error) and err == ""
        assert main([*argv, "--home", str(home_dir)]) == 2, argv
        err = capsys.readouterr().err
        assert error in err and f"usage: workbench {' '.join(argv[:2])}" in err  # the command's own, not the top's
    for argv in (  # 0 and -1 alike: one message, from the command's own parser
        ["sessions", "list", "--limit", "0"],
        ["sessions", "search", "x", "--limit", "-1"],
        ["memory", "history", "--limit", "0"],
        ["curator", "ledger", "--limit", "0"],
    ):
        assert main([*argv, "--home", str(home_dir)]) == 2, argv
        err = capsys.readouterr().err
        assert "out of range: give a number of rows from 1 to 1,000,000" in err, err
        assert f"usage: workbench {' '.join(argv[:2])}" in err
    assert main(["sessions", "show", "r", "--home", str(home_dir), "--json"]) == 0  # unique prefix of root_1
    assert json.loads(capsys.readouterr().out)["session"]["id"] == "root_1"
    home = open_home(home_dir)
    home.archive.create_session("root_2", source="cli")
    home.close()
    assert main(["sessions", "show", "root", "--home", str(home_dir), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert "start of several session ids" in data["error"] and data["candidates"] == ["root_1", "root_2"]


@pytest.mark.parametrize("damage", ["random", "pages"])
def test_a_damaged_state_db_is_a_clear_error_never_a_traceback(home_dir, damage):
    import os

    path = home_dir / "state.db"
    if damage == "random":  # not SQLite at all
        path.write_bytes(os.urandom(8192))
    else:  # a real archive whose message pages were overwritten (the header and schema still read fine)
        home = open_home(home_dir)
        home.archive.append_messages("child_1", [{"role": "user", "content": f"filler {n} " * 50} for n in range(200)])
        home.close()
        with sqlite3.connect(path) as conn:
            size = conn.execute("PRAGMA page_size").fetchone()[0]
            pages = [
                r[0] for r in conn.execute("SELECT pageno FROM dbstat WHERE name = 'messages' AND pagetype = 'leaf'")
            ]
        conn.close()
        data = bytearray(path.read_bytes())
        for page in pages:
            start = (page - 1) * size
            data[start + 8 : start + size] = b"\xff" * (size - 8)  # cell pointers past the page end
        path.write_bytes(bytes(data))
    before = path.read_bytes()
    commands = [("sessions", "search", "filler"), ("sessions", "search", "数据库"), ("sessions", "show", "child_1")]
    if damage == "random":
        commands += [
            ("sessions", "list"),
            ("sessions", "lineage", "root_1"),
            ("sessions", "reindex"),
            ("run", "-m", "hello"),
            ("run", "--scenario", "smoke"),
        ]
    for command in commands:
        code, data, err = wb_process(home_dir, *command)
        assert code == 1 and data["success"] is False, command
        # a damaged page met mid-command: SQLite's check of the file then names state.db and its recovery
        assert ("not a usable session archive" if damage == "random" else "state.db is damaged") in data["error"]
        assert "Traceback" not in err, (command, err)
    assert path.read_bytes() == before  # refused before anything touched it, or left alone once met


def test_export_to_a_file_and_clear_refusals_for_bad_paths(home_dir, tmp_path, capsys):
    from workbench.cli import main

    out_file = tmp_path / "chat.md"
    argv = ["sessions", "export", "child_1", "--lineage", "--format", "markdown", "--home", str(home_dir), "--json"]
    assert main([*argv, "-o", str(out_file)]) == 0
    assert json.loads(capsys.readouterr().out)["path"] == str(out_file)
    text = out_file.read_text(encoding="utf-8")
    assert text.index("# Migration night\n") < text.index("# Migration night #2") and "半夜执行数据库迁移" in text
    for bad in (tmp_path / "missing" / "x.md", tmp_path):  # no such folder; a folder, not a file
        assert main([*argv, "-o", str(bad)]) == 1
        data = json.loads(capsys.readouterr().out)
        assert data["success"] is False and "Could not write" in data["error"]
    assert not (tmp_path / "missing").exists()
    out_file.write_text("my notes", encoding="utf-8")  # a file of the user's is never replaced unasked
    assert main([*argv, "-o", str(out_file)]) == 1
    assert "exists; pass --force to replace it" in json.loads(capsys.readouterr().out)["error"]
    assert out_file.read_text(encoding="utf-8") == "my notes"
    assert main([*argv, "-o", str(out_file), "--force"]) == 0
    assert "# Migration night" in out_file.read_text(encoding="utf-8")
    capsys.readouterr()
    fifo, link = tmp_path / "pipe.md", tmp_path / "link.md"  # never replaced, --force or not (found in review)
    os.mkfifo(fifo)
    link.symlink_to(out_file)
    for target, said in ((fifo, "is not a regular file"), (link, "is a link")):
        for force in ([], ["--force"]):
            assert main([*argv, "-o", str(target), *force]) == 1
            assert said in json.loads(capsys.readouterr().out)["error"]
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and link.is_symlink()


def test_a_json_export_on_stdout_is_the_exact_data_and_the_files_bytes(home_dir, tmp_path, capsys):
    """Piped to a file, a JSON export is a faithful backup: characters a terminal would act on or hide
    are JSON escapes, never symbols standing for them, and the bytes are those ``-o`` writes."""
    from workbench.cli import main

    hostile = "T\x1b[31mred\u202e\u200b\x9b end"
    home = open_home(home_dir)
    home.archive.create_session("h_1", source="cli", title="Hostile")  # (a title keeps no controls)
    home.archive.append_message("h_1", "user", f"said {hostile}")
    home.close()
    assert main(["sessions", "export", "h_1", "--home", str(home_dir)]) == 0
    out = capsys.readouterr().out
    assert not any(ch in out for ch in "\x1b\u202e\u200b\x9b") and "<U+" not in out
    data = json.loads(out)
    assert data["messages"][0]["content"] == f"said {hostile}"
    assert main(["sessions", "export", "h_1", "--home", str(home_dir), "-o", str(tmp_path / "x.json")]) == 0
    capsys.readouterr()
    assert (tmp_path / "x.json").read_bytes() == out.encode("utf-8")  # its final newline too (found in a trial)


def test_text_output_never_passes_terminal_escapes_through(home_dir, capsys):
    from workbench.cli import main

    home = open_home(home_dir)
    home.archive.create_session("ansi_1", source="cli", title="Colours")
    home.archive.append_messages(
        "ansi_1",
        [
            {"role": "user", "content": "run the tests \x1b]0;pwned\x07 now"},
            {"role": "tool", "tool_name": "terminal", "content": "\x1b[31mFAILED\x1b[0m tests/test_x.py \x1b[2J\x00"},
        ],
    )
    home.close()
    for argv in (["sessions", "show", "ansi_1"], ["sessions", "list"], ["sessions", "search", "FAILED"]):
        assert main([*argv, "--home", str(home_dir)]) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x00" not in out, argv
    assert main(["sessions", "show", "ansi_1", "--home", str(home_dir)]) == 0
    out = capsys.readouterr().out
    assert "␛]0;pwned␇" in out and "␛[31mFAILED␛[0m tests/test_x.py ␛[2J␀" in out  # shown, never obeyed
    assert main(["sessions", "show", "ansi_1", "--home", str(home_dir), "--json"]) == 0  # JSON keeps the exact text
    assert json.loads(capsys.readouterr().out)["messages"][1]["content"].startswith("\x1b[31mFAILED")


def test_tool_calls_of_any_shape_are_listed_by_name_or_as_a_question_mark(home_dir, capsys):
    """Another program (or a hand edit) may store tool calls whose ``function`` is a string or
    missing: the transcript names what it can and marks the rest, never a traceback (fuzzing
    found ``[{"function": "x"}]`` raising AttributeError)."""
    from workbench.cli import main

    calls = [{"function": "x"}, {"id": "c1", "function": {"name": "memory", "arguments": "{}"}}, "loose", {}]
    conn = sqlite3.connect(home_dir / "state.db")
    conn.execute(
        "INSERT INTO messages (session_id, role, content, tool_calls, timestamp) VALUES ('root_1', 'assistant', "
        "'calling', ?, 1796040000)",
        (json.dumps(calls),),
    )
    conn.commit()
    conn.close()
    assert main(["sessions", "show", "root_1", "--home", str(home_dir)]) == 0
    out = capsys.readouterr().out
    assert "?, memory, ?, ?" in out


def test_the_session_list_keeps_its_columns_whatever_the_ids(tmp_path, capsys):
    """ids of different lengths pushed the source and count columns around."""
    from rich.cells import cell_len

    from workbench.cli import main

    home = open_home(tmp_path / "h")
    for session_id in ("a", "ja-plain-long-id", "東京-1", "bidi-\u202eabc"):
        home.archive.create_session(session_id, source="cli")
    home.close()
    assert main(["--home", str(tmp_path / "h"), "sessions", "list"]) == 0
    header, *lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4
    assert len({cell_len(line.split(" cli ")[0]) for line in lines}) == 1  # "cli" starts in one column
    assert cell_len(header.split(" source ")[0]) == cell_len(lines[0].split(" cli ")[0])  # under its header


def test_prune_without_yes_names_what_it_would_delete_and_deletes_nothing(home_dir):
    """It said only 'deletes every ended session older than N days': no count, nothing to check."""
    code, doc, _ = wb(home_dir, "sessions", "prune", "--days", "0")
    assert code == 1 and doc["would_prune"] == 1
    assert "would delete 1 ended session older than 0 days: root_1 (Migration night)" in doc["error"]
    assert "child sessions stay, as roots" in doc["error"]
    code, doc, _ = wb(home_dir, "sessions", "list")
    assert {s["id"] for s in doc["sessions"]} >= {"root_1", "child_1"}
    code, doc, _ = wb(home_dir, "sessions", "prune", "--days", "0", "--yes")
    assert code == 0 and doc["pruned"] == 1


def test_a_prune_dry_run_warns_of_a_live_chain_as_the_prune_does(home_dir):
    """A trial: `prune --dry-run` listed root_1, the ended first segment of a chain whose segment
    child_1 Hermes is still writing, with no word of it. The dry run, the question without --yes and
    the prune itself give the engine's one warning (and an old live session is said to be left)."""
    warning = (
        "root_1 is an ended segment of a conversation still being written: its segment child_1 has not ended "
        "(it is live), so a running Hermes may still be writing to it. Pruning takes that segment, the "
        "conversation's earlier part; child_1 stays, as a root, holding only its own messages."
    )
    code, doc, _ = wb(home_dir, "sessions", "prune", "--days", "0", "--dry-run")
    assert (code, doc["would_prune"], doc["warnings"]) == (0, 1, [warning])
    text = ran("--home", str(home_dir), "sessions", "prune", "--days", "0", "--dry-run")[1]
    assert text.splitlines()[-1] == f"warning: {warning}"
    code, doc, _ = wb(home_dir, "sessions", "prune", "--days", "0")
    assert code == 1 and warning in doc["error"] and doc["warnings"] == [warning]
    home = open_home(home_dir)
    home.archive.create_session("alone", source="cli")  # live, and no chain's: left, however old
    home.close()
    code, doc, _ = wb(home_dir, "sessions", "prune", "--days", "0", "--yes")
    assert code == 0 and doc["pruned"] == 1
    assert doc["warnings"][0] == warning
    assert doc["warnings"][1].startswith("Not pruned: alone has not ended (live)")


def test_prune_with_nothing_to_prune_says_so_and_untitled_sessions_read_as_lists_show_them(tmp_path):
    """It refused (exit 1) 'Pruning would delete 0 ended session(s)… Add --yes to delete them', and
    named an untitled session `(untitled)` where every list shows its first message."""
    home = open_home(tmp_path / "h")
    home.archive.create_session("hermes-1", source="cli")
    home.archive.append_messages("hermes-1", [{"role": "user", "content": "私は渋谷で働いています"}])
    code, doc, _ = wb(tmp_path / "h", "sessions", "prune", "--days", "30")
    assert (code, doc["would_prune"], doc["pruned"]) == (0, 0, 0)
    home.archive.end_session("hermes-1", "cli_close")
    code, doc, _ = wb(tmp_path / "h", "sessions", "prune", "--days", "0")
    assert code == 1 and "older than 0 days: hermes-1 (“私は渋谷で働いています”)." in doc["error"]
    status, out, _ = ran("--home", str(tmp_path / "h"), "sessions", "prune", "--days", "30")
    assert (status, out) == (0, "No ended session is older than 30 days; nothing to prune.\n")


def test_an_untitled_session_is_listed_by_the_start_of_its_first_user_message(tmp_path, capsys):
    """Hermes titles few sessions: lists and search results showed nothing where the title goes. The start
    of its first user message stands there, on one line as every preview is (``flat_line``): its line break
    as ⏎, its escape as ␛. The JSON's ``preview`` is the message's start as stored, as ``sessions show
    --json`` gives a message (it gave what a list shows, symbols and all: JSON is for programs), each
    character that could drive a terminal written as a JSON escape, C1 controls and bidi controls too."""
    from workbench.cli import main

    asked = "Please plan\nthe tulip\x1b[2J\x9b\u202e\u2066 beds for spring " + "and more " * 10
    home = open_home(tmp_path / "h")
    home.archive.create_session("hermes-1", source="cli")
    home.archive.append_messages(
        "hermes-1", [{"role": "system", "content": "You are Hermes."}, {"role": "user", "content": asked}]
    )
    home.archive.end_session("hermes-1", "user_exit")
    home.close()
    status, out, _ = ran("--home", str(tmp_path / "h"), "--json", "sessions", "list")
    assert status == 0 and "\\u001b[2J\\u009b\\u202e\\u2066 beds" in out
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", out), out
    data = json.loads(out)
    assert data["sessions"][0]["title"] is None and data["sessions"][0]["preview"] == asked[:60]
    shown = "Please plan⏎the tulip␛[2J\\x9b<U+202E><U+2066> beds for"
    assert main(["--home", str(tmp_path / "h"), "sessions", "list"]) == 0
    assert f"“{shown}" in capsys.readouterr().out
    assert main(["--home", str(tmp_path / "h"), "sessions", "search", "tulip"]) == 0
    assert f"[user #2]  “{shown[:30]}" in capsys.readouterr().out
    code, data, _ = wb(tmp_path / "h", "sessions", "prune", "--days", "0", "--dry-run")  # (as a prune names it)
    assert code == 0 and data["sessions"] == [{"id": "hermes-1", "title": None, "preview": asked[:60]}]


def test_a_search_that_finds_no_whole_word_says_when_a_prefix_would(home_dir, capsys):
    """`migr` is no word of the archive, but words start with it: the TUI lists them as you type, so
    the CLI says --prefix finds them (and says nothing of the kind when no word starts so)."""
    from workbench.cli import main

    assert main(["sessions", "search", "migr", "--home", str(home_dir)]) == 0
    assert capsys.readouterr().out.strip() == (
        "no matches for 'migr'; words that start with the last one match with --prefix"
    )
    code, data, _ = wb(home_dir, "sessions", "search", "migr")
    assert code == 0 and data["count"] == 0 and "--prefix" in data["hint"]
    code, data, _ = wb(home_dir, "sessions", "search", "migr", "--prefix")
    assert data["count"] == 1 and "hint" not in data
    assert main(["sessions", "search", "zzq", "--home", str(home_dir)]) == 0
    assert capsys.readouterr().out.strip() == "no matches for 'zzq'"


def test_an_offset_past_the_last_match_is_not_called_no_matches(home_dir, capsys):
    """`--offset 1` past the one row `migration` finds printed "no matches" and sent the user to --prefix."""
    from workbench.cli import main

    assert main(["sessions", "search", "migration", "--offset", "1", "--home", str(home_dir)]) == 0
    assert capsys.readouterr().out.strip() == ("no more matches for 'migration'; the matches end before --offset 1")
    code, data, _ = wb(home_dir, "sessions", "search", "migration", "--offset", "1")
    assert code == 0 and data["count"] == 0 and data["hint"] == "the matches end before --offset 1"
    assert main(["sessions", "search", "zzq", "--offset", "1", "--home", str(home_dir)]) == 0
    assert capsys.readouterr().out.strip() == "no matches for 'zzq'"


def test_an_offset_past_the_last_session_is_not_called_no_sessions(home_dir, capsys):
    """`sessions list --offset 5` in a home of two sessions printed "no sessions"; so did `--source nope`
    in a home of Hermes sessions, as if the archive were empty: it names the source now."""
    from workbench.cli import main

    assert main(["sessions", "list", "--offset", "5", "--home", str(home_dir)]) == 0
    assert capsys.readouterr().out.strip() == "no more sessions: the list ends before --offset 5"
    assert main(["sessions", "list", "--offset", "5", "--source", "telegram", "--home", str(home_dir)]) == 0
    assert capsys.readouterr().out.strip() == "no sessions from source 'telegram'"


def test_the_text_search_marks_an_archived_session_as_the_tui_does(home_dir):
    """`sessions search` listed an archived session's hit like any other; the TUI says `· archived`."""
    assert wb(home_dir, "sessions", "archive", "root_1", "--force")[0] == 0  # (its continuation child_1 is live)
    listed = ran("sessions", "search", "migration", "--home", str(home_dir))[1]
    hits = [line for line in listed.splitlines() if line[:1].isdigit()]
    assert hits and all(line.endswith("· archived") for line in hits), listed


def test_a_title_stored_as_bytes_is_searched_and_shown_as_text(home_dir):
    """The fuzz suite: a session whose title another program stored as a BLOB (bad UTF-8 among it) made
    `sessions search`'s text output raise TypeError (the fitted title line read the bytes as text)."""
    db = sqlite3.connect(home_dir / "state.db")
    db.execute("UPDATE sessions SET title = ? WHERE id = 'root_1'", (b"\xff\xfe\x00Night \xe5\x8d\x8a",))
    db.commit()
    db.close()
    status, out, err = ran("sessions", "search", "migration", "--home", str(home_dir))
    assert status == 0 and "Traceback" not in err, err
    hit = next(line for line in out.splitlines() if "root_1" in line)
    assert hit.endswith("\ufffd\ufffd\u2400Night 半"), hit  # (bad bytes as U+FFFD, NUL as its symbol)
    code, data, _ = wb(home_dir, "sessions", "search", "migration")
    assert code == 0 and {h["title"] for h in data["results"] if h["session_id"] == "root_1"} == {
        "\ufffd\ufffd\x00Night 半"
    }


def test_a_rename_taking_an_earlier_segments_title_says_so(home_dir):
    """Renaming a continuation to its first segment's title moved it off that segment, as Hermes does,
    and the CLI said only the new title: the other session's was gone without a word."""
    code, data, _ = wb(home_dir, "sessions", "rename", "child_1", "Migration night")
    assert code == 0 and data["title"] == "Migration night" and data["taken_from"] == "root_1"
    code, data, _ = wb(home_dir, "sessions", "show", "root_1")
    assert code == 0 and data["session"]["title"] is None
    status, out, _ = ran("sessions", "rename", "root_1", "Part one", "--home", str(home_dir))
    assert status == 0 and out == "root_1: Part one\n"  # nothing taken: as before
    taken = ran("sessions", "rename", "child_1", "Part one", "--home", str(home_dir))[1]
    assert taken == "child_1: Part one\n(taken from root_1, an earlier segment of this conversation, now untitled)\n"


def test_sessions_show_names_a_session_as_the_transcript_does(tmp_path, monkeypatch):
    """`sessions show` printed `(untitled)` for an untitled session, where the Sessions screen's
    transcript shows its first message, or for a segment of a titled chain the chain's title and its
    place (review: one rule, in the engine, for both skins)."""
    home = open_home(tmp_path / "h")
    home.archive.create_session("c1", source="cli")
    home.archive.append_messages("c1", [{"role": "user", "content": "我们讨论一下数据库迁移的计划"}])
    home.archive.end_session("c1", "compression")
    home.archive.create_session("c2", source="cli", parent_session_id="c1", title="数据库迁移")
    home.archive.create_session("alone", source="cli")
    home.archive.append_messages("alone", [{"role": "user", "content": "how long to steep?"}])
    home.close()
    code, doc, _ = wb(tmp_path / "h", "sessions", "show", "c1")
    assert code == 0 and doc["heading"] == "数据库迁移 · segment 1 of 2"
    shown = ran("--home", str(tmp_path / "h"), "sessions", "show", "alone")[1]
    assert shown.startswith("alone  “how long to steep?”  [cli, 1 msg]")
    monkeypatch.setenv("COLUMNS", "120")
    listed = ran("--home", str(tmp_path / "h"), "sessions", "list")[1]
    row = next(line for line in listed.splitlines() if " alone " in line)
    assert "    1 msg   " in row and "msgs" not in row  # (the count's column keeps its width)


def test_a_markdown_export_titles_a_session_as_sessions_show_heads_it(tmp_path):
    """`sessions export --format markdown` titled an untitled session `# alone` (its id) where every other
    view names it by its first user message; a segment of a titled chain by the chain's title and place."""
    home = open_home(tmp_path / "h")
    home.archive.create_session("c1", source="cli")
    home.archive.append_messages("c1", [{"role": "user", "content": "plan the database migration"}])
    home.archive.end_session("c1", "compression")
    home.archive.create_session("c2", source="cli", parent_session_id="c1", title="DB migration")
    home.archive.create_session("alone", source="cli")
    home.archive.append_messages("alone", [{"role": "system", "content": "You are Hermes."}])
    home.archive.append_messages("alone", [{"role": "user", "content": "how long to steep?"}])
    home.archive.create_session("silent", source="cli")
    home.close()

    def exported(*args: str) -> str:
        status, out, err = ran("--home", str(tmp_path / "h"), "sessions", "export", *args)
        assert status == 0, err
        return out

    assert exported("alone", "--format", "markdown").startswith("# “how long to steep?”\n\n- id: `alone`\n")
    assert exported("silent", "--format", "markdown").startswith("# silent\n")  # (nothing to name it by)
    chain = exported("c1", "--lineage", "--format", "markdown")
    assert chain.startswith("# DB migration · segment 1 of 2\n") and "\n# DB migration\n" in chain


def test_a_markdown_export_fences_tool_results_and_arguments_that_hold_backticks(tmp_path):
    """A trial: a tool result was printed bare (its `# heading` read as one of the export's) and a
    call's arguments in a ``` fence their own ``` closed. Both are fenced, the fence longer than any
    run of backticks inside, so a Markdown reader gives back exactly the text; controls stay symbols."""
    result = "# not a heading\n```\nrm -rf / ```` sneaky\n\x1b[2Jcleared"
    arguments = json.dumps({"command": "echo ```` done"})
    home = open_home(tmp_path / "h")
    home.archive.create_session("s1", source="cli", title="Fences")
    home.archive.append_messages(
        "s1",
        [
            {"role": "user", "content": "run it"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": arguments}}
                ],
            },
            {"role": "tool", "content": result, "tool_name": "terminal", "tool_call_id": "c1"},
        ],
    )
    home.close()
    out = tmp_path / "chat.md"
    status, _, err = ran(
        "--home", str(tmp_path / "h"), "sessions", "export", "s1", "--format", "markdown", "-o", str(out)
    )
    assert status == 0, err
    text = out.read_text(encoding="utf-8")
    assert "\x1b" not in text and "␛[2Jcleared" in text
    assert "`````tool-result\n# not a heading\n" in text
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(text)
    blocks = [(t.info, t.content) for t in tokens if t.type == "fence"]
    assert blocks == [
        ("tool-call terminal", json.dumps(json.loads(arguments), indent=2, ensure_ascii=False) + "\n"),
        ("tool-result", result.replace("\x1b", "␛") + "\n"),
    ]
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert "not a heading" not in headings


def test_an_export_is_never_written_over_the_homes_own_files(home_dir, tmp_path, capsys):
    """``-o state.db --force`` wrote JSON over the archive (and over MEMORY.md, a SKILL.md): a user's
    trial lost every session. A path inside the home is refused, --force or not, links followed."""
    from workbench.cli import main

    (home_dir / "memories").mkdir(exist_ok=True)
    (home_dir / "memories" / "MEMORY.md").write_text("User likes tea", encoding="utf-8")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "into-home").symlink_to(home_dir)  # a folder link into the home: still inside it
    kept = tmp_path / "kept-skills"  # the home's skills/ is a followed link to a folder outside it
    (kept / "tidy").mkdir(parents=True)
    (kept / "tidy" / "SKILL.md").write_text("---\nname: tidy\ndescription: d\n---\nbody\n", encoding="utf-8")
    shutil.rmtree(home_dir / "skills")
    (home_dir / "skills").symlink_to(kept)
    argv = ["sessions", "export", "child_1", "--home", str(home_dir), "--json", "--force", "-o"]
    for target in (
        home_dir / "state.db",
        home_dir / "memories" / "MEMORY.md",
        home_dir / "chat.json",
        outside / "into-home" / "state.db",
        kept / "tidy" / "SKILL.md",
    ):
        assert main([*argv, str(target)]) == 1
        data = json.loads(capsys.readouterr().out)
        assert "is inside the Hermes home" in data["error"] and "Nothing was written" in data["error"]
    assert (home_dir / "memories" / "MEMORY.md").read_text(encoding="utf-8") == "User likes tea"
    assert (kept / "tidy" / "SKILL.md").read_text(encoding="utf-8").endswith("body\n")
    with sqlite3.connect(home_dir / "state.db") as conn:
        assert conn.execute("SELECT count(*) FROM sessions WHERE id = 'child_1'").fetchone() == (1,)
    assert not (home_dir / "chat.json").exists()


def test_a_session_that_has_not_ended_is_deleted_only_with_force(home_dir, capsys):
    """`sessions delete s-open --yes` deleted a session Hermes had not ended, and Hermes's next message
    brought back a session of that one message. Now it is refused, nothing changed, unless --force."""
    from workbench.cli import main

    def delete(*flags: str) -> tuple[int, dict]:
        code = main(["--home", str(home_dir), "--json", "sessions", "delete", "child_1", *flags])
        return code, json.loads(capsys.readouterr().out)

    state = (home_dir / "state.db").read_bytes()
    code, doc = delete("--yes")
    assert code == 1 and doc["success"] is False
    assert doc["error"].startswith("Session child_1 has not ended (it is live): a running Hermes may still be writing")
    assert doc["error"].endswith("Nothing was deleted: end it in Hermes first, or add --force to delete it anyway.")
    code, doc = delete()  # without --yes, both are said at once
    assert code == 1 and "add --yes to confirm. Session child_1 has not ended" in doc["error"]
    assert doc["error"].endswith("To delete it anyway, add --yes --force.")
    assert (home_dir / "state.db").read_bytes() == state
    home = open_home(home_dir)
    assert "delete" not in {row.action for row in home.journal.query(subsystem="sessions")}
    assert home.archive.get_session("child_1").message_count == 1
    with pytest.raises(SessionLive, match="has not ended"):  # the engine's own rule, whoever calls it
        home.archive.delete_session("child_1")
    home.close()
    assert delete("--yes", "--force") == (0, {"success": True, "deleted": "child_1", "cited": []})
    code = main(["--home", str(home_dir), "--json", "sessions", "delete", "root_1", "--yes"])  # ended: as before
    assert code == 0 and json.loads(capsys.readouterr().out)["deleted"] == "root_1"


def test_a_delete_takes_the_whole_id_never_a_prefix(home_dir, capsys):
    """A trial deleted s-evil in the TUI, then ran `sessions delete s-evil --yes`: s-evil was now a
    unique prefix of s-evil2, which was deleted with no question. A delete names a session by its
    whole id or title only; a prefix is refused naming the ids it starts, and nothing changes."""
    from workbench.cli import main

    state = (home_dir / "state.db").read_bytes()
    assert main(["--home", str(home_dir), "--json", "sessions", "delete", "root", "--yes"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["error"] == (
        "No session has the id 'root'; it is the start of root_1. Give the whole id: a delete cannot be undone."
    )
    assert (home_dir / "state.db").read_bytes() == state
    assert main(["--home", str(home_dir), "--json", "sessions", "delete", "nothing-like-it", "--yes"]) == 1
    assert "(by whole id or exact title)" in json.loads(capsys.readouterr().out)["error"]  # (not "unique id prefix")
    assert main(["--home", str(home_dir), "--json", "sessions", "show", "root"]) == 0  # a look may take a prefix
    capsys.readouterr()
    assert main(["--home", str(home_dir), "--json", "sessions", "delete", "Migration night", "--yes"]) == 0
    assert json.loads(capsys.readouterr().out)["deleted"] == "root_1"  # (a whole title names it too)


def test_search_says_when_fts_syntax_was_read_as_words(home_dir):
    """``source:cli`` and ``near(a b)`` searched their words with no note, in text and --json alike
    (``role:user`` is a filter: ``filters.py``)."""
    code, data, _ = wb(home_dir, "sessions", "search", "source:cli")
    assert code == 0 and data["note"].startswith("'source:' is no filter here: 'source' was read as a word too.")
    code, data, _ = wb(home_dir, "sessions", "search", "near(database migration)")
    assert code == 0 and data["results"] == [] and "'near(' in lower case is no operator" in data["note"]
    status, out, _ = ran("sessions", "search", "content:migration", "--home", str(home_dir))
    assert status == 0 and out.startswith("note: 'content:' is no column filter here")
    code, data, _ = wb(home_dir, "sessions", "search", "http://example.org")
    assert code == 0 and data["note"] is None


def test_a_delete_by_a_title_two_sessions_share_names_both_and_deletes_neither(home_dir, capsys):
    """Hermes leaves duplicate titles when its repair of the unique index fails; a delete by title took
    whichever row came first."""
    from workbench.cli import main

    with sqlite3.connect(home_dir / "state.db") as conn:
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND sql LIKE '%title%'"):
            conn.execute(f'DROP INDEX "{name}"')
        conn.execute("UPDATE sessions SET title = 'Twins'")
    state = (home_dir / "state.db").read_bytes()
    assert main(["--home", str(home_dir), "--json", "sessions", "delete", "Twins", "--yes", "--force"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["error"].startswith("Several sessions have the title 'Twins' (")
    assert sorted(doc["candidates"]) == ["child_1", "root_1"]
    assert (home_dir / "state.db").read_bytes() == state


def test_an_archive_names_the_session_it_took(home_dir, capsys):
    """`sessions archive s-j` takes a prefix, and said only "archived 1 session(s)": which one, it did
    not say."""
    from workbench.cli import main

    assert main(["--home", str(home_dir), "sessions", "archive", "root", "--force"]) == 0
    assert capsys.readouterr().out == "archived root_1 (2 sessions of its conversation)\n"
    assert main(["--home", str(home_dir), "sessions", "archive", "root", "--undo"]) == 0
    assert capsys.readouterr().out == "restored root_1 (2 sessions of its conversation)\n"


def test_a_delete_says_which_memory_entries_came_from_the_session(home_dir, capsys):
    """A trial deleted s-ja-1 and its memory entry's origin turned from "session s-ja-1 · message 16" to
    "present before", with no word before: the delete now names the entries that came from it."""
    from engine.tools import ToolContext
    from workbench.cli import main

    home = open_home(home_dir)
    home.memory.add("memory", "Runs migrations at night", ToolContext(actor="agent", session_id="root_1"))
    home.memory.add("memory", "Unrelated fact", ToolContext(actor="user"))
    home.close()
    assert main(["--home", str(home_dir), "--json", "sessions", "delete", "root_1"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["cited"] == ["Runs migrations at night"]
    assert "1 memory entry came from it (“Runs migrations at night”): it stays, but the message" in doc["error"]
    assert main(["--home", str(home_dir), "sessions", "delete", "root_1", "--yes"]) == 0
    assert capsys.readouterr().out.startswith("deleted root_1\nnote: 1 memory entry came from it")
    (home_dir / "memories" / "USER.md").write_bytes(b"\xff\xfe not UTF-8")  # (unreadable: no reason to refuse)
    assert main(["--home", str(home_dir), "--json", "sessions", "delete", "child_1", "--yes", "--force"]) == 0
    assert json.loads(capsys.readouterr().out)["deleted"] == "child_1"


def test_the_text_list_marks_live_ended_and_archived_sessions(tmp_path, capsys):
    """`sessions list --all` did not say which sessions were archived, nor any list which were live."""
    from workbench.cli import main

    home = open_home(tmp_path / "h")
    for session_id in ("open-one", "done-one", "hidden-one"):
        home.archive.create_session(session_id, source="cli")
    home.archive.end_session("done-one", "cli_close")
    home.archive.end_session("hidden-one", "cli_close")
    home.archive.set_archived("hidden-one", True)
    home.close()
    assert main(["--home", str(tmp_path / "h"), "sessions", "list", "--all"]) == 0
    rows = {line.split()[2]: line for line in capsys.readouterr().out.splitlines() if "msgs" in line}
    assert "msgs  live " in rows["open-one"] and "archived" not in rows["open-one"]
    assert "msgs  ended" in rows["done-one"] and "archived" not in rows["done-one"]
    assert "msgs  ended" in rows["hidden-one"] and rows["hidden-one"].endswith("  · archived")


def test_the_text_list_says_it_shows_and_is_ordered_by_each_sessions_start(tmp_path, capsys):
    """A session started early and written to since looked old beside a list said to be newest first:
    the header says the time shown, which the rows are ordered by, is the start."""
    from workbench.cli import main

    home = open_home(tmp_path / "h", clock=FixedClock(1796040000.0))
    home.archive.create_session("early", source="cli")
    home.clock.advance(3600)
    home.archive.create_session("later", source="cli")
    home.clock.advance(3600)
    home.archive.append_message("early", "user", "still talking")  # active last, started first
    home.close()
    assert main(["--home", str(tmp_path / "h"), "sessions", "list"]) == 0
    header, later, early = capsys.readouterr().out.splitlines()
    assert header.split() == ["start", "id", "source", "messages", "state", "title"]
    assert " later " in later and " early " in early  # newest start first, whatever was active last


def test_full_width_letters_find_their_half_width_word_whole(tmp_path):
    """`sessions search ＰＤＦ` found nothing and hinted at --prefix, which found PDF (and pdfplumber with it);
    the TUI, searching by prefix, found PDF. Now ＰＤＦ is the word PDF, whole, written either way."""
    home = open_home(tmp_path / "h")
    texts = ["The PDF report is ready", "ＰＤＦ form attached", "pdfplumber is fast", "PDF 报告"]
    for n, text in enumerate(texts):
        home.archive.create_session(f"s{n}", source="cli", title=f"Report {n}")
        home.archive.append_message(f"s{n}", "user", text)
    home.close()
    code, data, _ = wb(tmp_path / "h", "sessions", "search", "ＰＤＦ", "--limit", "10")
    assert code == 0 and {r["session_id"] for r in data["results"]} == {"s0", "s1", "s3"}  # (not pdfplumber)
    code, data, _ = wb(tmp_path / "h", "sessions", "search", "ＰＤＦ NOT report", "--limit", "10")
    assert {r["snippet"] for r in data["results"]} == {"«ＰＤＦ» form attached", "«PDF» 报告"}
    code, data, _ = wb(tmp_path / "h", "sessions", "search", "ＰＤＦ report")
    assert code == 0 and data["results"][0]["snippet"] == "The «PDF» «report» is ready"
    code, data, _ = wb(tmp_path / "h", "sessions", "search", "报告")  # CJK as before
    assert code == 0 and data["results"][0]["snippet"] == "PDF «报告»"


def test_a_markdown_export_quotes_message_text_so_it_cannot_forge_the_exports_structure(tmp_path, cli):
    """User and assistant text went into the export raw: a message holding `## assistant · #99 · …`, `---`
    or `# Title` read as a message header, a rule or the export's title. Each message's text is a block
    quote now: a Markdown reader finds only the export's own headings, and the text's Markdown still renders."""
    from markdown_it import MarkdownIt

    hostile = "Sure.\n\n## assistant · #99 · 2026-01-01T00:00:00+00:00\n\nI deleted it.\n---\n# Fake title\n\n**bold**"
    home = open_home(tmp_path / "home")
    home.archive.create_session("s1", source="cli", title="Forged")
    home.archive.append_messages("s1", [{"role": "user", "content": hostile}, {"role": "assistant", "content": "ok"}])
    home.close()
    out = tmp_path / "chat.md"
    assert cli("sessions", "export", "s1", "--format", "markdown", "-o", str(out)).returncode == 0
    tokens = MarkdownIt().parse(out.read_text(encoding="utf-8"))
    top = [t for t in tokens if t.level == 0 and t.type in ("heading_open", "hr")]
    headings = [tokens[tokens.index(t) + 1].content for t in top if t.type == "heading_open"]
    assert [t.type for t in top] == ["heading_open"] * 3  # the title and the two messages, no rule
    assert headings[0] == "Forged" and [h.split(" · ")[0] for h in headings[1:]] == ["user", "assistant"]
    assert "strong_open" in [c.type for t in tokens for c in t.children or []]  # a message's own Markdown reads
