"""A revert of a row it cannot take back says what to do instead, with a command that does it (real Hermes)."""

from __future__ import annotations

import json
import subprocess

from engine import open_home
from tests.hermes_support import workbench_cmd

SKILL = "---\nname: standup\ndescription: Daily standup notes\n---\n\nThree lines.\n"
HERMES_CREATES = """
import json
from tools.skill_manager_tool import skill_manage
print(json.dumps(json.loads(skill_manage(action="create", name="standup", content=%r))))
"""
HERMES_STAGES = """
import json
from tools.memory_tool import load_on_disk_store, memory_tool
print(json.dumps(json.loads(memory_tool(store=load_on_disk_store(), action="add", target="memory",
                                        content="Deploys go out on Fridays"))))
"""


def cli(root, *args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(workbench_cmd(*args, "--home", str(root)), capture_output=True, text=True, timeout=60)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def row_of(root, action: str, subsystem: str) -> int:
    rows = json.loads(cli(root, "timeline", "--json").stdout)["rows"]
    return next(r["id"] for r in rows if (r["action"], r["subsystem"]) == (action, subsystem))


def said(proc: subprocess.CompletedProcess) -> str:
    return " ".join((proc.stdout + proc.stderr).split())


def test_a_skill_hermes_created_is_refused_with_the_archive_command_that_works(tmp_path, hermes):
    root = tmp_path / "home"
    open_home(root).close()
    assert cli(root, "timeline").returncode == 0  # the workbench's first look: the skills as they are
    assert hermes.json(root, HERMES_CREATES % SKILL)["success"]
    row = row_of(root, "external", "skills")
    proc = cli(root, "revert", str(row))
    assert proc.returncode == 1
    assert (
        "skill 'standup' created outside the workbench (standup/SKILL.md)): created outside the workbench, which "
        "saved nothing of it to put back; to take it out of use, archive it: `workbench skills archive standup` "
        "(or a in Skills; restorable)" in said(proc)
    )
    assert cli(root, "skills", "archive", "standup").returncode == 0  # the command it names does it
    assert not (root / "skills" / "standup").exists() and (root / "skills" / ".archive" / "standup").is_dir()
    again = said(cli(root, "revert", str(row)))
    assert "it is no active skill in skills/standup now, so nothing is left to take out of use" in again
    assert "archive it" not in again


def test_a_proposal_hermes_staged_is_not_called_a_decision(tmp_path, hermes):
    root = tmp_path / "home"
    open_home(root).close()
    (root / "config.yaml").write_text("memory:\n  write_approval: true\n", encoding="utf-8")
    pending_id = hermes.json(root, HERMES_STAGES)["pending_id"]
    row = row_of(root, "stage", "approvals")
    proc = cli(root, "revert", str(row))
    assert proc.returncode == 1 and "a record of a decision" not in said(proc)
    assert (
        f"a proposal staged for review, not a change: proposal {pending_id} still waits in the queue; to drop it, "
        f"reject it: `workbench pending reject {pending_id}` (or r in Approvals)" in said(proc)
    )
    assert cli(root, "pending", "reject", pending_id).returncode == 0  # the command it names does it
    rejected = row_of(root, "reject", "approvals")
    assert (
        f"proposal {pending_id} was rejected since: nothing to revert (reverting row {rejected} puts it back in "
        "the queue)" in said(cli(root, "revert", str(row)))
    )
    assert cli(root, "revert", str(rejected)).returncode == 0
    assert cli(root, "pending", "approve", pending_id).returncode == 0
    approved = row_of(root, "approve", "approvals")
    assert f"proposal {pending_id} was approved since (row {approved}): revert the change it led to" in said(
        cli(root, "revert", str(row))
    )


HERMES_WRITES = """
import json
from tools.memory_tool import load_on_disk_store, memory_tool
print(json.dumps(json.loads(memory_tool(store=load_on_disk_store(), target="memory", **%r))))
"""


def hermes_then_look(hermes, root, **call) -> int:
    """Hermes's memory tool in its own process, then the workbench's look, which journals it: its row."""
    assert hermes.json(root, HERMES_WRITES % call)["success"]
    assert cli(root, "timeline").returncode == 0
    return row_of(root, call["action"], "memory")


def test_an_entry_hermes_changed_after_ours_names_the_row_to_revert_first(tmp_path, hermes):
    """A trial: reverting a hand-added entry Hermes had reworded since said only "it was changed or removed
    since", leaving the user to find which of the loop's many rows it was. The row named is the newest
    that took it away (Hermes wrote it back in between), the one whose revert brings it back."""
    root = tmp_path / "home"
    open_home(root).close()
    assert cli(root, "memory", "add", "Build server is ci-9").returncode == 0
    ours = row_of(root, "add", "memory")
    first = hermes_then_look(hermes, root, action="replace", old_text="ci-9", content="Build server is ci-10")
    hermes_then_look(hermes, root, action="replace", old_text="ci-10", content="Build server is ci-9")
    theirs = hermes_then_look(hermes, root, action="replace", old_text="ci-9", content="Build server is ci-11")
    proc = cli(root, "revert", str(ours))
    assert proc.returncode == 1 and (root / "memories" / "MEMORY.md").read_text() == "Build server is ci-11"
    assert (
        f"the entry it wrote is no longer in MEMORY.md: row {theirs} (external replace) changed it since; "
        "revert that row first" in said(proc)
    )
    assert f"row {first} " not in said(proc)
    assert cli(root, "revert", str(theirs)).returncode == 0  # what it says to do, and then ours goes
    assert cli(root, "revert", str(ours)).returncode == 0
    assert (root / "memories" / "MEMORY.md").read_text() == ""
    assert cli(root, "memory", "add", "Cache host is redis-2").returncode == 0
    ours = row_of(root, "add", "memory")
    gone = hermes_then_look(hermes, root, action="remove", old_text="redis-2")
    proc = cli(root, "revert", str(ours))
    assert proc.returncode == 1
    assert f"is no longer in MEMORY.md: row {gone} (external remove) took it out since" in said(proc)
