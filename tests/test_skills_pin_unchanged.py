"""A pin or unpin that finds the skill so already changes nothing and journals nothing; reverting a pin row
sets the pin that row found, never a toggle; an outside archive or pin refused by a revert names the command
that takes it back.

A user trial: Hermes pinned git-rebase; `workbench skills pin git-rebase` twice printed "pinned." and wrote two
`user pinned skill 'git-rebase'` rows, and reverting one would have unpinned it, undoing Hermes's pin.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from engine import open_home
from engine.timeline import Timeline
from tests.hermes_support import workbench_cmd
from tests.test_skills_support import write_skill

HERMES_PINS = """
import json
from tools.skill_usage import set_pinned
set_pinned("brew", True)
print(json.dumps(True))
"""

HERMES_ARCHIVES = """
import json
from tools.skill_usage import archive_skill
print(json.dumps(list(archive_skill("brew"))))
"""


def _cli(root, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        workbench_cmd(*args, "--home", str(root)), capture_output=True, text=True, timeout=60, check=False
    )


def _pin_rows(root) -> list[tuple[str, str, str | None, str | None]]:
    home = open_home(root)
    try:
        rows = home.journal.connection().execute(
            "SELECT action, target, before, after FROM journal WHERE subsystem = 'skills' "
            "AND action IN ('pin', 'unpin') ORDER BY id"
        )
        return [tuple(r) for r in rows]
    finally:
        home.close()


@pytest.mark.slow  # Hermes's own skill_usage code, and the CLI, in their own processes
def test_pinning_a_skill_hermes_pinned_says_so_and_journals_nothing(tmp_path, hermes):
    root = tmp_path / "home"
    home = open_home(root)
    write_skill(home, "brew")
    home.skills.outside.record()  # the baseline look, before Hermes pins it
    home.close()
    assert hermes.json(root, HERMES_PINS)

    for _ in range(2):
        done = _cli(root, "skills", "pin", "brew")
        assert (done.returncode, done.stdout.strip()) == (0, "Skill 'brew' is already pinned; nothing changed.")
    done = _cli(root, "skills", "pin", "brew", "--json")
    assert done.returncode == 0 and json.loads(done.stdout) == {
        "success": True,
        "changed": False,
        "message": "Skill 'brew' is already pinned; nothing changed.",
        "name": "brew",
        "pinned": True,
    }
    assert _pin_rows(root) == []

    # Hermes's pin is on the timeline as its own; a revert of it says how to unpin, and leaves it pinned
    listed = json.loads(_cli(root, "timeline", "--subsystem", "skills", "--json").stdout)["rows"]
    assert [(r["actor"], r["change"]) for r in listed] == [("external", "pinned")]
    preview = _cli(root, "revert", str(listed[0]["id"]), "--dry-run")
    assert preview.returncode == 1
    assert "pinned outside the workbench, which saved nothing of it to put back; " in preview.stdout
    assert "`workbench skills unpin brew` unpins it (or p in Skills)" in preview.stdout
    home = open_home(root)
    try:
        assert home.skills.usage.pinned() == {"brew"}
    finally:
        home.close()


def test_unpinning_a_skill_never_pinned_says_so_and_journals_nothing(tmp_path):
    root = tmp_path / "home"
    home = open_home(root)
    write_skill(home, "brew")
    home.close()
    for _ in range(2):
        done = _cli(root, "skills", "unpin", "brew")
        assert (done.returncode, done.stdout.strip()) == (0, "Skill 'brew' is not pinned; nothing changed.")
    done = _cli(root, "skills", "unpin", "brew", "--json")
    assert done.returncode == 0
    assert json.loads(done.stdout) | {"message": None} == {
        "success": True,
        "changed": False,
        "message": None,
        "name": "brew",
        "pinned": False,
    }
    assert _pin_rows(root) == []
    done = _cli(root, "skills", "pin", "brew", "--json")  # a real change still journals its row
    assert json.loads(done.stdout)["changed"] is True
    assert _pin_rows(root) == [("pin", "brew", "False", "True")]


def test_reverting_a_pin_row_that_changed_nothing_never_flips_the_pin(home):
    """Rows an earlier version wrote for a pin of a pinned skill and an unpin of an unpinned one."""
    write_skill(home, "brew")
    write_skill(home, "tidy")
    home.skills.usage.set_fields("brew", pinned=True)  # as Hermes's set_pinned leaves it
    pinned = home.journal.append("skills", "pin", "brew", actor="user", before="True", after="True")
    unpinned = home.journal.append("skills", "unpin", "tidy", actor="user", before="False", after="False")
    timeline = Timeline(home)
    assert [row.summary for row in timeline.page(limit=2)] == [
        "unpinned skill 'tidy' (already so: nothing changed)",
        "pinned skill 'brew' (already so: nothing changed)",
    ]
    for row, word in ((pinned, "a pin"), (unpinned, "an unpin")):
        preview = timeline.preview(row)
        assert preview["changes"] == []
        assert preview["refused"][0]["error"].startswith(f"{word} that changed nothing")
        result = timeline.revert(row)
        assert not result["success"] and result["reverted"] == []
    assert home.skills.usage.pinned() == {"brew"}
    assert timeline.revert(f"{pinned}")["refused"]  # (named alone: refused, as every skip is)


def test_reverting_a_pin_sets_what_it_found_and_refuses_once_the_pin_moved_on(home):
    write_skill(home, "brew")
    timeline = Timeline(home)
    assert home.curator.pin("brew")["changed"]
    [pin] = timeline.page(limit=1)
    home.skills.usage.set_fields("brew", pinned=False)  # unpinned by another program, with no look since
    preview = timeline.preview(pin.id)
    assert preview["changes"] == [] and preview["refused"][0]["error"] == "'brew' is not pinned already"
    assert not timeline.revert(pin.id)["success"] and home.skills.usage.pinned() == set()

    assert home.curator.pin("brew")["changed"]
    [again] = timeline.page(limit=1)
    assert home.curator.unpin("brew")["changed"]
    [unpin] = timeline.page(limit=1)
    refused = timeline.preview(again.id)["refused"][0]["error"]
    assert refused == f"row {unpin.id} (unpin) changed the pin of 'brew' since"
    assert timeline.preview(unpin.id)["changes"][0]["undo"] == "pin skill 'brew'"  # the newest: what it found
    assert timeline.revert(unpin.id)["success"] and home.skills.usage.pinned() == {"brew"}


@pytest.mark.slow  # Hermes's own curator code in its own process
def test_reverting_a_skill_hermes_archived_names_the_restore(tmp_path, hermes):
    root = tmp_path / "home"
    home = open_home(root)
    write_skill(home, "brew")
    home.skills.outside.record()
    done, why = hermes.json(root, HERMES_ARCHIVES)
    assert done, why
    home.skills.outside.record()
    [row] = Timeline(home).page(limit=1)
    home.close()
    assert row.change == "archived"
    preview = _cli(root, "revert", str(row.id), "--dry-run")
    assert preview.returncode == 1
    assert (
        f"would refuse row {row.id} (skill 'brew' archived outside the workbench (brew/SKILL.md)): archived outside "
        "the workbench, which saved nothing of it to put back; `workbench skills restore brew` brings it back "
        "from the archive (or r in Skills)"
    ) in preview.stdout
    done = _cli(root, "revert", str(row.id), "--json")
    assert done.returncode == 1 and "`workbench skills restore brew`" in json.loads(done.stdout)["refused"][0]["error"]


def _set_pin_outside(home, pinned: bool) -> None:
    """Flip brew's pin in .usage.json as another program does (a whole new file)."""
    path = home.skills_dir / ".usage.json"
    records = json.loads(path.read_text(encoding="utf-8"))
    records["brew"]["pinned"] = pinned
    path.write_text(json.dumps(records), encoding="utf-8")


def _outside_pins(home) -> list[str]:
    rows = home.journal.connection().execute(
        "SELECT json_extract(detail, '$.change') FROM journal WHERE subsystem = 'skills' AND action = 'external' "
        "ORDER BY id"
    )
    return [r[0] for r in rows]


@pytest.mark.parametrize("between", ["nothing", "a patch of ours", "a stale mark of ours"])
def test_two_watchers_journal_one_outside_pin_once(tmp_path, between):
    """A second watcher took a pin the first had journaled for a new one when a change of ours to the
    skill came between (a review found it), and before that, a pin set again after we unpinned was
    taken for the first watcher's copy and never journaled."""
    root = tmp_path / "home"
    a, b = open_home(root), open_home(root)
    try:
        write_skill(a, "brew", body="# Brew\nSteep 3 minutes.\n")
        a.skills.manage({"action": "patch", "name": "brew", "old_string": "3", "new_string": "4"})
        a.skills.outside.record()
        b.skills.outside.record()
        _set_pin_outside(a, True)
        a.skills.outside.record()
        if between == "a patch of ours":
            assert a.skills.manage({"action": "patch", "name": "brew", "old_string": "4", "new_string": "5"})["success"]
        elif between == "a stale mark of ours":
            a.journal.append("skills", "mark_stale", "brew", actor="curator", detail={"run": "x"})
        b.skills.outside.record()
        assert _outside_pins(a) == ["pinned"]
        assert a.curator.unpin("brew")["changed"]
        _set_pin_outside(a, True)  # set again outside: a change of its own
        b.skills.outside.record()
        a.skills.outside.record()
        assert _outside_pins(a) == ["pinned", "pinned"]
    finally:
        a.close()
        b.close()
