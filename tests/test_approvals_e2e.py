"""End to end through real processes and the real memory store: stage, restart, approve."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.test_approvals_cli import cli, python


def agent_write(home, method, *args):
    """Stage a memory write as the agent, in its own process; returns the pending id."""
    call = ", ".join(map(repr, args))
    return python(home, f"print(home.memory.{method}({call}, ToolContext(actor='agent'))['pending_id'])")


def memory_home(tmp_path, *entries):
    home = tmp_path / "h"
    home.mkdir()
    (home / "memories").mkdir()
    (home / "memories" / "MEMORY.md").write_text("\n§\n".join(entries))
    (home / "config.yaml").write_text("memory:\n  write_approval: on\n")
    return home


def test_staged_in_one_process_approved_in_another(tmp_path):
    home = memory_home(tmp_path, "User likes tea")
    pid = agent_write(home, "add", "memory", "Project uses uv")
    assert (home / "memories" / "MEMORY.md").read_text() == "User likes tea"
    code, data = cli(home, "pending", "approve", pid)
    assert code == 0 and data["success"] and [r["id"] for r in data["approved"]] == [pid] and data["failed"] == []
    assert (home / "memories" / "MEMORY.md").read_text() == "User likes tea\n§\nProject uses uv"
    assert not (home / "pending" / "memory" / f"{pid}.json").exists()


def test_cli_stale_pin_fails_with_exit_1_and_keeps_the_record(tmp_path):
    home = memory_home(tmp_path, "User likes tea", "Project uses uv")
    pid = agent_write(home, "remove", "memory", "tea")
    (home / "memories" / "MEMORY.md").write_text("User likes green tea\n§\nProject uses uv")  # edited by hand
    code, data = cli(home, "pending", "approve", pid)
    assert code == 1 and data["success"] is False and data["approved"] == []
    assert data["failed"][0]["id"] == pid and "Entry changed since it was staged" in data["error"]
    assert (home / "memories" / "MEMORY.md").read_text() == "User likes green tea\n§\nProject uses uv"
    assert [r["id"] for r in cli(home, "pending", "list")[1]["pending"]] == [pid]
    code, view = cli(home, "pending", "show", pid)
    assert code == 0 and view["error"].startswith("Entry changed")


def test_cli_show_edit_then_approve_and_approve_all(tmp_path):
    home = memory_home(tmp_path, "User likes tea", "Project uses uv")
    edited = agent_write(home, "replace", "memory", "tea", "User likes coffee")
    stale = agent_write(home, "remove", "memory", "uv")
    fine = agent_write(home, "add", "user", "Name is Ada")
    code, view = cli(home, "pending", "show", edited, "--edit", "User likes mate")
    assert code == 0 and ["+", "User likes mate"] in view["diff"] and view["budget"]["limit"] == 2200
    text = subprocess.run(
        [sys.executable, "-m", "workbench", "pending", "show", edited, "--home", str(home)],
        capture_output=True,
        text=True,
    ).stdout
    assert "- User likes tea" in text and "+ User likes coffee" in text and "budget (if approved)" in text
    assert cli(home, "pending", "approve", edited, "--edit", "User likes mate")[0] == 0
    (home / "memories" / "MEMORY.md").write_text("User likes mate\n§\nProject uses uv and pip")
    code, data = cli(home, "pending", "approve", "all")
    assert code == 1 and [r["id"] for r in data["approved"]] == [fine] and [r["id"] for r in data["failed"]] == [stale]
    assert "Entry changed since it was staged" in data["error"]
    assert (home / "memories" / "MEMORY.md").read_text() == "User likes mate\n§\nProject uses uv and pip"
    assert (home / "memories" / "USER.md").read_text() == "Name is Ada"


def test_two_processes_approving_the_same_record_apply_it_once(tmp_path):
    home = memory_home(tmp_path, "User likes tea")
    pid = agent_write(home, "add", "memory", "Project uses uv")
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "workbench", "pending", "approve", pid, "--home", str(home), "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    results = [json.loads(p.communicate()[0]) for p in procs]
    assert sorted(len(r["approved"]) for r in results) == [0, 1]
    loser = next(r for r in results if not r["approved"])
    assert "No pending write" in loser["error"]
    approvals = python(home, "print(len([r for r in home.journal.query(subsystem='memory') if r.action == 'add']))")
    assert approvals == "1"
