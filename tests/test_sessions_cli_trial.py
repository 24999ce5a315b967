"""A user trial of `workbench sessions`, `memory` and `curator` on a Hermes-written home: what the
commands said, run in process (the words, not the process, are the point here)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from engine import open_home
from workbench.cli import main

ESCAPED = json.dumps({"action": "add", "target": "memory", "content": "ユーザーは渋谷で働いている\u202e"})


@pytest.fixture
def home_dir(tmp_path, clock):
    """A Japanese session whose tool call Hermes stored with `json.dumps` defaults, and an English one."""
    home = open_home(tmp_path / "h", clock=clock)
    archive = home.archive
    archive.create_session("s-ja-1", source="cli")
    archive.append_message("s-ja-1", "user", "私は渋谷で働いています")
    call = {"id": "c1", "type": "function", "function": {"name": "memory", "arguments": ESCAPED}}
    archive.append_message("s-ja-1", "assistant", None, tool_calls=[call])
    archive.end_session("s-ja-1", "cli_close")
    archive.create_session("s-en-1", source="cli", title="Deploys")
    archive.append_message("s-en-1", "user", "I deploy with make")
    archive.end_session("s-en-1", "cli_close")
    home.close()
    return tmp_path / "h"


def cli(capsys, home_dir, *words):
    code = main([*words, "--home", str(home_dir)])
    out, err = capsys.readouterr()
    return code, out, err


def test_markdown_export_shows_a_hermes_tool_calls_arguments_decoded(capsys, home_dir):
    """A trial: the Markdown export showed `"content": "\\u30e6\\u30fc…"`; the TUI showed the words."""
    code, markdown, _ = cli(capsys, home_dir, "sessions", "export", "s-ja-1", "--format", "markdown")
    assert code == 0 and '"content": "ユーザーは渋谷で働いている<U+202E>"' in markdown and "\\u30e6" not in markdown
    code, exact, _ = cli(capsys, home_dir, "sessions", "export", "s-ja-1")  # JSON: exactly as stored
    stored = sqlite3.connect(home_dir / "state.db").execute("SELECT tool_calls FROM messages WHERE id = 2").fetchone()
    assert code == 0 and json.loads(exact)["messages"][1]["tool_calls"] == json.loads(stored[0])
    assert json.loads(exact)["messages"][1]["tool_calls"][0]["function"]["arguments"] == ESCAPED


def test_curator_status_while_paused_leads_with_paused_and_says_why_in_one_sentence(capsys, home_dir):
    """A trial: `curator status` led with `curator: ENABLED` while paused, PAUSED came at the end of the
    schedule line, and the next line read `not scheduled (paused (`workbench curator resume` lifts it).)`."""
    assert cli(capsys, home_dir, "curator", "pause")[0] == 0
    code, out, _ = cli(capsys, home_dir, "curator", "status")
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("curator: PAUSED") and "ENABLED" not in out
    assert "PAUSED" not in "\n".join(lines[1:]) and "((" not in out and ".)" not in out
    assert (
        "  next pass: not scheduled — paused: no automatic passes until `workbench curator resume` lifts it." in lines
    )
    cli(capsys, home_dir, "curator", "resume")
    assert cli(capsys, home_dir, "curator", "status")[1].startswith("curator: ENABLED  runs: 0")


@pytest.mark.parametrize(
    "words, also",
    [
        (["memory", "add", ""], ""),
        (["memory", "add", "  "], ""),
        (["memory", "add", "--target", "user", ""], ""),
        (["memory", "add", "memory", ""], " ('memory' was read as TEXT; if it was meant for --target: workbench "),
        (["memory", "replace", "--old", "make", " "], "; to delete the entry, use `workbench memory remove --old OLD`"),
    ],
)
def test_an_empty_memory_text_is_wrong_usage_said_one_way(capsys, home_dir, words, also):
    """A trial: `memory add memory ""` advised `memory add 'memory '` (quoting the blank word in), and
    `memory add ""` said the tool's `Content cannot be empty.` (exit 1): both now say TEXT is empty."""
    cli(capsys, home_dir, "memory", "add", "I deploy with make")
    before = (home_dir / "memories" / "MEMORY.md").read_bytes()
    code, out, err = cli(capsys, home_dir, *words)
    said = err.splitlines()[-1].split(": error: ", 1)[1]
    assert code == 2 and out == "" and said.startswith("TEXT is empty: give it words, in quotes when there are several")
    assert also in said and "'memory '" not in said and "Content cannot be empty" not in said
    assert (home_dir / "memories" / "MEMORY.md").read_bytes() == before


def test_blank_words_left_over_are_named_not_quoted_in(capsys, home_dir):
    code, _, err = cli(capsys, home_dir, "memory", "add", "tea", "")
    assert code == 2 and err.splitlines()[-1].endswith("error: unrecognized arguments: '' (empty: leave it out)")


def test_prune_says_one_day_and_a_dry_run_lists_every_one_and_deletes_nothing(capsys, home_dir):
    """A trial: `prune` said "older than 1 days", and had no --dry-run while `revert` and `curator` do."""
    code, out, _ = cli(capsys, home_dir, "sessions", "prune", "--days", "1", "--source", "nosuch")
    assert code == 0 and out == "No ended session from nosuch is older than 1 day; nothing to prune.\n"
    before = (home_dir / "state.db").read_bytes()
    for extra in ([], ["--yes"]):  # (--dry-run wins over --yes: nothing is deleted either way)
        code, out, _ = cli(capsys, home_dir, "sessions", "prune", "--days", "0", "--dry-run", *extra)
        head, *listed = out.splitlines()  # (both started at the same time: in either order)
        assert code == 0 and head == "would prune 2 ended sessions older than 0 days (nothing was deleted):"
        assert sorted(listed) == ["  s-en-1  Deploys", "  s-ja-1  “私は渋谷で働いています”"]
    code, out, _ = cli(capsys, home_dir, "sessions", "prune", "--days", "0", "--dry-run", "--source", "cli", "--json")
    doc = json.loads(out)
    doc["sessions"].sort(key=lambda s: s["id"])
    assert code == 0 and doc == {
        "success": True,
        "dry_run": True,
        "would_prune": 2,
        "pruned": 0,
        "sessions": [
            {"id": "s-en-1", "title": "Deploys", "preview": "I deploy with make"},
            {"id": "s-ja-1", "title": None, "preview": "私は渋谷で働いています"},
        ],
        "warnings": [],
    }
    assert (home_dir / "state.db").read_bytes() == before
    assert json.loads(cli(capsys, home_dir, "sessions", "list", "--json")[1])["count"] == 2
    code, out, _ = cli(capsys, home_dir, "sessions", "prune", "--days", "0", "--source", "telegram", "--dry-run")
    assert code == 0 and out == "No ended session from telegram is older than 0 days; nothing to prune.\n"


def test_a_session_asked_for_by_the_preview_a_list_shows_is_named_by_its_id(capsys, home_dir, clock):
    """A trial: `sessions export 私は渋谷で働いています` said only "No session matches", though
    `sessions list` shows that text where the title goes (an untitled session's first message)."""
    listed = cli(capsys, home_dir, "sessions", "list")[1]
    assert "“私は渋谷で働いています”" in listed
    for asked in ("私は渋谷で働いています", "“私は渋谷で働いています”"):
        code, out, err = cli(capsys, home_dir, "sessions", "export", asked)
        assert code == 1 and out == "" and "that is how lists show untitled session s-ja-1" in err
        assert "Give its id, s-ja-1" in err
    code, out, _ = cli(capsys, home_dir, "sessions", "show", "渋谷", "--json")
    error = json.loads(out)["error"]  # (a part of a preview is no preview: said as any other miss)
    assert code == 1 and "Sessions are named by id, or by a title set with `workbench sessions rename`" in error
    assert "`workbench sessions search TEXT` finds one by its words" in error
    home = open_home(home_dir, clock=clock)  # two shown alike: neither is named
    home.archive.create_session("s-ja-2", source="cli")
    home.archive.append_message("s-ja-2", "user", "私は渋谷で働いています")
    home.close()
    code, _, err = cli(capsys, home_dir, "sessions", "show", "私は渋谷で働いています")
    assert code == 1 and "s-ja-" not in err and "`workbench sessions search TEXT`" in err


def test_a_multi_line_first_message_is_named_by_its_one_line_preview(capsys, tmp_path, clock):
    """A trial: the hint named the session only when its first message was typed on one line. The list
    shows its line breaks and tabs as ⏎ and ⇥ (they folded into spaces, the one place that hid them) and
    runs of spaces as one; a person copies that, or types spaces for them."""
    home = open_home(tmp_path / "h", clock=clock)
    home.archive.create_session("s-ml-1", source="cli")
    home.archive.append_message("s-ml-1", "user", "\n  rotate the\n\tpostgres   password\nplease")
    home.archive.create_session("s-ml-2", source="cli")  # the same words otherwise spaced: another preview
    home.archive.append_message("s-ml-2", "user", "rotate the postgres password, please")
    home.close()
    listed = cli(capsys, tmp_path / "h", "sessions", "list")[1]
    assert "“rotate the⏎⇥postgres password⏎please”" in listed
    for asked in ("rotate the postgres password please", "“rotate the⏎⇥postgres password⏎please”"):
        code, out, err = cli(capsys, tmp_path / "h", "sessions", "export", asked, "--json")
        doc = json.loads(out)
        assert code == 1 and doc["close_matches"] == ["s-ml-1"], doc
        assert "that is how lists show untitled session s-ml-1" in doc["error"]
