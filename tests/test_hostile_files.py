"""One regression test per hostile on-disk finding of the red team (issue 12).

Each spoils one file of a seeded home the way the red team did and runs the commands
that read it, in-process: a clear refusal (exit 1, one JSON document with ``error``) or
a normal answer, never an internal error (exit 70) or a traceback.
"""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3

import pytest

from engine import open_home
from engine.curator.ledger import columns
from engine.errors import WorkbenchError
from engine.memory.tool import memory_tool
from engine.tools import ToolContext
from workbench.cli import main


@pytest.fixture
def root(demo_root, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CONFIG_DIR", str(tmp_path / "config"))
    return demo_root


def cli(root, *argv):
    """(status, the JSON document) of ``workbench --home ROOT ARGV --json``."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["--home", str(root), *argv, "--json"])
    assert "Traceback" not in out.getvalue() + err.getvalue()
    return status, json.loads(out.getvalue())


def pending_record(root):
    path = next((root / "pending").glob("*/*.json"))
    return path, json.loads(path.read_text())


@pytest.mark.parametrize(
    "field, value",
    [("created_at", "1e999"), ("created_at", "-1e999"), ("created_at", "1e300"), ("message_id", "1" + "0" * 400)],
)
def test_pending_record_with_an_impossible_number_is_a_problem_not_a_crash(root, field, value):
    path, record = pending_record(root)
    text = json.dumps(record).replace(f'"{field}": {json.dumps(record[field])}', f'"{field}": {value}')
    path.write_text(text)
    status, listing = cli(root, "pending", "list")
    assert status == 0 and listing["problems"] and record["id"] not in [r["id"] for r in listing.get("records", [])]
    status, shown = cli(root, "pending", "show", record["id"])
    assert status == 1 and field in shown["error"]


@pytest.mark.parametrize(
    "value",
    [
        "1e999",
        "-Infinity",
        "NaN",
        '"0001-01-01T00:00:00-05:00"',
        '"0001-01-01T00:00:00"',
        "[" * 100_000 + "]" * 100_000,
    ],
)
def test_usage_json_with_hostile_values_still_lists_skills(root, value):
    usage = root / "skills/.usage.json"
    records = json.loads(usage.read_text())
    records["deploy-staging"]["use_count"] = "@@"
    records["deploy-staging"]["last_used_at"] = "@@"
    usage.write_text(json.dumps(records).replace('"@@"', value))
    for argv in (["skills", "list"], ["skills", "show", "deploy-staging"], ["curator", "status"]):
        status, _ = cli(root, *argv)
        assert status == 0, argv
    status, ran = cli(root, "curator", "run")
    if value.startswith("["):  # past Python's (and Hermes's) parser: unreadable, so no pass judges it
        assert status == 1 and "skills/.usage.json is nested too deeply" in ran["error"]
    else:
        assert status == 0


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan", "1.0e+400", "99999999999999999999999"])
def test_config_with_a_non_finite_number_is_refused_with_its_line(root, value):
    (root / "config.yaml").write_text(f"curator:\n  interval_hours: {value}\nmemory:\n  memory_char_limit: {value}\n")
    for argv in (["curator", "status"], ["memory", "show"]):
        status, refused = cli(root, *argv)
        assert status == 1 and "config.yaml line" in refused["error"], refused


def test_binary_skill_md_is_refused_by_name(root):
    (root / "skills/devops/deploy-staging/SKILL.md").write_bytes(b"\xff\xfe\x00\x00binary")
    status, _ = cli(root, "skills", "list")
    assert status == 0
    status, refused = cli(root, "skills", "show", "deploy-staging")
    assert status == 1 and "not UTF-8" in refused["error"]


def spoil_state(root, sql, *args):
    db = sqlite3.connect(root / "state.db")
    db.execute(sql, args)
    db.commit()
    db.close()


def test_blob_titles_and_content_are_shown_as_text(root):
    spoil_state(
        root,
        "UPDATE sessions SET title = CAST(? || id AS BLOB), model_config = ?, started_at = ?",
        b"\xffbad\x00title",
        "[" * 100_000 + "]" * 100_000,
        "not a time",
    )
    spoil_state(root, "UPDATE messages SET content = CAST(? AS TEXT), timestamp = ?", b"\xff\xfe bytes", 1e308)
    status, listing = cli(root, "sessions", "list")
    assert status == 0 and all("bad" in s["title"] for s in listing["sessions"])
    session = listing["sessions"][0]["id"]
    for argv in (["sessions", "show", session], ["sessions", "export", session], ["sessions", "search", "bytes"]):
        status, _ = cli(root, *argv)
        assert status == 0, argv


@pytest.mark.parametrize(
    "tool_calls",
    [
        "{bad json",
        "[" * 100_000 + "]" * 100_000,
        '[{"function": "x"}]',
        "7",
        '[{"id": 1, "function": {"name": ["x"], "arguments": 7}}]',
    ],
)
def test_a_session_with_malformed_tool_calls_can_be_resumed(root, tool_calls):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert (
            main(["--home", str(root), "run", "--model", "offline", "-m", "Remember that I prefer tabs", "--json"]) == 0
        )
    session = json.loads(out.getvalue())["session_id"]
    spoil_state(root, "UPDATE messages SET tool_calls = ? WHERE tool_calls IS NOT NULL", tool_calls)
    status, shown = cli(root, "sessions", "show", session)
    assert status == 0
    status, resumed = cli(root, "run", "--model", "offline", "--session", session, "-m", "What do I prefer?")
    assert status == 0 and resumed["session_id"] == session


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("tool_calls", "result"),
    [
        (None, DEEP),  # a tool result nested past Python's stack
        ('[{"id": "c1", "function": {"name": "memory", "arguments": "' + DEEP + '"}}]', '{"success": true}'),
        (  # a staged call whose target is no string
            '[{"id": "c1", "function": {"name": "memory", "arguments": '
            '"{\\"action\\": \\"add\\", \\"target\\": [\\"memory\\"], \\"content\\": \\"x\\"}"}}]',
            '{"success": true, "staged": true, "pending_id": "abcd1234"}',
        ),
    ],
)
def test_hostile_tool_rows_in_a_session_are_shown_not_fatal(root, tool_calls, result):
    """A Hermes session's tool rows are read for writes, staged calls and claims: none may end in an internal error."""
    home = open_home(root)
    home.archive.create_session("hostile", source="cli")
    home.archive.append_messages(
        "hostile",
        [
            {"role": "user", "content": "remember x"},
            {"role": "assistant", "content": None, "tool_calls": json.loads(tool_calls) if tool_calls else None},
            {"role": "tool", "content": result, "tool_name": "memory", "tool_call_id": "c1"},
        ],
    )
    home.close()
    if tool_calls:
        spoil_state(
            root, "UPDATE messages SET tool_calls = ? WHERE session_id = 'hostile' AND role = 'assistant'", tool_calls
        )
    status, shown = cli(root, "sessions", "show", "hostile")
    assert status == 0 and len(shown["messages"]) == 3


@pytest.mark.parametrize("path", ["skills/.hub/lock.json", "skills/.curator_state"])
def test_a_hostile_json_file_the_skills_read_is_ignored(root, path):
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(DEEP)
    assert cli(root, "skills", "list")[0] == 0
    assert cli(root, "curator", "run", "--dry-run")[0] == 0


def test_ledger_rows_of_the_wrong_types_are_skipped(root):
    ledger = root / "skills/.curator_ledger.jsonl"
    rows = [json.loads(line) for line in ledger.read_text().splitlines()]
    rows[0]["evidence"] = True
    rows[1]["after"] = [{"path": ["x"], "sha256": 7}]
    rows[2]["evidence"] = {"rolled_back": ["a list"]}
    ledger.write_text("\n".join(json.dumps(r) for r in rows) + '\n[1, 2]\n"text"\n')
    status, listing = cli(root, "curator", "ledger")
    assert status == 0 and rows[0]["id"] not in [e["id"] for e in listing["entries"]]
    status, refused = cli(root, "curator", "rollback", rows[1]["id"])
    assert status == 1 and "No ledger entry" in refused["error"]
    status, _ = cli(root, "curator", "rollback", rows[2]["id"])
    assert status in (0, 1)


@pytest.mark.parametrize("path", ["skills/\ud800.md", "skills/a\u0000.md"])
def test_a_ledger_row_naming_a_lone_surrogate_is_listed_aligned_and_refused_cleanly(root, path):
    """Such rows were skipped whole; read, a path no file name can spell made rollback exit 70 (as a NUL
    always had), and a time holding one pushed its line out of the columns."""
    ledger = root / "skills/.curator_ledger.jsonl"
    row = json.loads(ledger.read_text().splitlines()[0])
    row.update(
        id="0123456789ab",
        ts="2026-12\ud800-01T10:00:00+00:00",
        skill="bad\ud800name",
        after=[{"path": path, "sha256": "0" * 64}],
    )
    with ledger.open("a") as out:
        out.write(json.dumps(row) + "\n")
    status, listing = cli(root, "curator", "ledger")
    assert status == 0 and listing["entries"][0]["id"] == "0123456789ab"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["--home", str(root), "curator", "ledger"]) == 0
    lines = out.getvalue().splitlines()
    assert "bad<U+D800>name" in lines[0]
    assert lines[0].index(" by ") == lines[1].index(" by ")  # each column padded as shown
    home = open_home(root)
    assert len({tuple(map(len, row[:3])) for row in columns(home.skills.ledger.entries())}) == 1
    home.close()
    status, refused = cli(root, "curator", "rollback", "0123456789ab")
    assert status == 1 and "not a file name this system can hold" in refused["error"]


@pytest.mark.parametrize(
    "column, value",
    [
        ("detail", "not json"),
        ("detail", b'\xff\xfe{"a": 1}'),
        ("detail", "[1, 2]"),
        ("at", 1e308),
        ("at", "yesterday"),
        ("target", ""),
    ],
)
def test_journal_rows_that_are_not_ours_are_shown(root, column, value):
    db = sqlite3.connect(root / "workbench.db")
    db.execute(f"UPDATE journal SET {column} = ?", (value,))
    db.commit()
    db.close()
    for argv in (["timeline"], ["memory", "history"]):
        status, _ = cli(root, *argv)
        assert status == 0, argv
    status, _ = cli(root, "revert", "3")
    assert status in (0, 1)


def test_a_100000_operation_batch_is_refused_when_staged_and_when_approved(root):
    home = open_home(root)
    try:
        refused = memory_tool(
            home,
            {
                "action": "batch",
                "target": "memory",
                "operations": [{"action": "add", "content": f"fact {i}"} for i in range(100_000)],
            },
            ToolContext(),
        )
    finally:
        home.close()
    assert refused["success"] is False and "at most 200" in refused["error"]
    path, record = pending_record(root)  # a record someone else wrote, in Hermes's layout
    record.update(
        subsystem="memory",
        action="batch",
        summary="apply 100000 op(s) to memory: remove x",  # (a summary of another write is refused as a lie)
        payload={
            "action": "batch",
            "target": "memory",
            "operations": [{"action": "remove", "old_text": "x"}] * 100_000,
        },
    )
    path.unlink()
    (root / "pending/memory").mkdir(exist_ok=True)
    (root / f"pending/memory/{record['id']}.json").write_text(json.dumps(record))
    status, shown = cli(root, "pending", "show", record["id"])
    assert status in (0, 1) and "at most 200" in json.dumps(shown)
    status, approved = cli(root, "pending", "approve", record["id"])
    assert status == 1 and "at most 200" in approved["error"]
    assert (root / f"pending/memory/{record['id']}.json").exists()


@pytest.mark.parametrize("query", ["\ud800", "a\udfffb", "数据\ud800库"])
def test_search_with_a_lone_surrogate_finds_nothing(root, query):
    home = open_home(root)
    try:
        assert home.archive.search(query) == []
    except WorkbenchError as exc:  # a refusal is acceptable; anything else is not
        assert exc.message
    finally:
        home.close()


def test_reindex_reads_a_blob_message_as_text(tmp_path):
    """A BLOB content row (written by another program) once crashed the CJK/vocabulary indexer."""
    import sqlite3 as _sqlite3

    from engine import open_home as _open
    from workbench.cli import main as _main

    root = tmp_path / "home"
    home = _open(root)
    home.archive.create_session("blob", source="cli")
    home.archive.append_message("blob", "user", "placeholder 数据")
    home.close()
    with _sqlite3.connect(root / "state.db") as raw:
        raw.execute("UPDATE messages SET content = ? WHERE session_id = 'blob'", (b"\xff\xfe\x00binary \xe6\x95\xb0",))
    assert _main(["--home", str(root), "sessions", "reindex", "--json"]) in (0, 1)
