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
    assert "it is no active skill now, so nothing is left to take out of use" in again and "archive it" not in again
