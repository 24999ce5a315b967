"""Archive, restore, pin, purge and rollback: round trips that never lose a byte."""

from __future__ import annotations

import json
import re
import threading

import pytest

from engine import lock_waits
from engine.curator.run import PlanChanged
from engine.doctor import run_doctor
from engine.events import SkillChanged
from engine.skills.manage import skill_manage_tool
from engine.skills.validation import SkillError
from engine.tools import BACKGROUND_REVIEW, ToolContext
from tests.lock_support import holding_flock
from tests.test_lock_cancel import in_thread, wait_until_waiting
from tests.test_skills_support import ctx, skill_md, tree_state, write_skill

DAY = 86400
FILES = {"references/api.md": "# API\n", "scripts/run.sh": "echo hi\n"}


def _active_tree(home, rel):
    return {k: v for k, v in tree_state(home.skills_dir / rel).items()}


def test_archive_restore_rollback_round_trip(home):
    write_skill(home, "deploy", category="ops", files=FILES)
    original = _active_tree(home, "ops/deploy")
    events = []
    home.bus.subscribe(events.append, SkillChanged)
    archived = home.curator.archive("deploy")
    assert not (home.skills_dir / "ops").exists()
    assert _active_tree(home, ".archive/deploy") == original
    assert home.skills.get("deploy").state == "archived"
    restored = home.curator.restore("deploy")
    assert restored["restored_to"].endswith("skills/ops/deploy")  # back into its category
    assert _active_tree(home, "ops/deploy") == original
    assert home.skills.get("deploy").state == "active"
    home.curator.rollback(restored["ledger_id"])  # undo the restore: archived again
    assert _active_tree(home, ".archive/deploy") == original and not (home.skills_dir / "ops").exists()
    assert home.skills.get("deploy").state == "archived"
    home.curator.rollback(archived["ledger_id"])  # undo the archive: active again
    assert _active_tree(home, "ops/deploy") == original and not (home.skills_dir / ".archive" / "deploy").exists()
    assert home.skills.get("deploy").state == "active"
    assert [e.action for e in events] == ["archive", "restore", "rollback", "rollback"]
    assert [e.actor for e in home.curator.ledger()] == ["user"] * 4


def test_rollback_of_a_patch_restores_the_old_text_and_can_itself_be_undone(home):
    write_skill(home, "x")
    old = (home.skills_dir / "x" / "SKILL.md").read_text()
    patched = skill_manage_tool(
        home, {"action": "patch", "name": "x", "old_string": "Do it.", "new_string": "Do it better."}, ctx()
    )
    new = (home.skills_dir / "x" / "SKILL.md").read_text()
    undo = home.curator.rollback(patched["ledger_id"])
    assert (home.skills_dir / "x" / "SKILL.md").read_text() == old
    home.curator.rollback(undo["ledger_id"])
    assert (home.skills_dir / "x" / "SKILL.md").read_text() == new


def test_rollback_of_create_and_delete(home):
    created = skill_manage_tool(home, {"action": "create", "name": "x", "content": skill_md("x")}, ctx())
    skill_manage_tool(
        home, {"action": "write_file", "name": "x", "file_path": "assets/a.txt", "file_content": "A"}, ctx()
    )
    before_delete = tree_state(home.skills_dir / "x")
    deleted = skill_manage_tool(home, {"action": "delete", "name": "x"}, ctx())
    assert not (home.skills_dir / "x").exists()
    home.curator.rollback(deleted["ledger_id"])
    assert tree_state(home.skills_dir / "x") == before_delete
    (home.skills_dir / "x" / "SKILL.md").write_text(skill_md("x", body="edited by hand\n"))
    before = tree_state(home.skills_dir)
    with pytest.raises(SkillError, match="changed after it"):  # undoing the create would lose the hand edit
        home.curator.rollback(created["ledger_id"])
    assert tree_state(home.skills_dir) == before


def test_rollback_of_a_delete_puts_back_the_usage_record_whole(home):
    """The files came back byte for byte but the record was made anew: created_by, created_at and the
    counts were lost, so a skill the agent made read as the user's and left the Curator's care."""
    created = skill_manage_tool(
        home, {"action": "create", "name": "x", "content": skill_md("x")}, ToolContext(origin=BACKGROUND_REVIEW)
    )
    assert created["success"], created
    home.clock.advance(86_400)
    skill_manage_tool(home, {"action": "patch", "name": "x", "old_string": "Do it.", "new_string": "Do."}, ctx())
    before = home.skills.usage.load()["x"]
    assert before["created_by"] == "agent" and before["patch_count"] == 1
    home.clock.advance(86_400)
    deleted = skill_manage_tool(home, {"action": "delete", "name": "x"}, ctx())
    assert "x" not in home.skills.usage.load()
    home.curator.rollback(deleted["ledger_id"])
    assert home.skills.usage.load()["x"] == before


def test_rollback_of_a_create_refuses_while_a_later_file_would_be_left_behind(home):
    """Rolling back a consolidation (or a create) removed its SKILL.md and left a file a later write_file
    had added: a folder with no SKILL.md, in no listing, that doctor did not mention."""
    created = skill_manage_tool(home, {"action": "create", "name": "x", "content": skill_md("x")}, ctx())
    written = skill_manage_tool(
        home, {"action": "write_file", "name": "x", "file_path": "references/notes.md", "file_content": "N"}, ctx()
    )
    before = tree_state(home.skills_dir)
    with pytest.raises(SkillError, match="changed after it") as exc:
        home.curator.rollback(created["ledger_id"])
    assert exc.value.details["changed"] == ["skills/x/references/notes.md"]
    assert exc.value.details["later"] == [written["ledger_id"]]
    assert tree_state(home.skills_dir) == before
    home.curator.rollback(written["ledger_id"])
    home.curator.rollback(created["ledger_id"])
    assert not (home.skills_dir / "x").exists()


def test_rollback_refuses_when_files_changed_since(home):
    write_skill(home, "x")
    archived = home.curator.archive("x")
    hand_edit = home.skills_dir / ".archive" / "x" / "SKILL.md"
    hand_edit.write_text(skill_md("x", body="edited in the archive\n"))
    before = tree_state(home.root / "skills")
    with pytest.raises(SkillError, match="changed after it") as exc:
        home.curator.rollback(archived["ledger_id"])
    assert exc.value.details["changed"] == ["skills/.archive/x/SKILL.md"]
    # no later entry to roll back first (it said so, a dead end): the edit was made outside
    assert exc.value.details["later"] == [] and "changed outside the workbench" in exc.value.message
    assert tree_state(home.root / "skills") == before


def test_a_rollback_behind_a_later_entry_names_that_entry(home):
    created = skill_manage_tool(home, {"action": "create", "name": "x", "content": skill_md("x")}, ctx())
    patched = skill_manage_tool(
        home, {"action": "patch", "name": "x", "old_string": "Do it.", "new_string": "Do it twice."}, ctx()
    )
    with pytest.raises(SkillError, match=f"Roll back the later entries first: {patched['ledger_id']}") as exc:
        home.curator.rollback(created["ledger_id"])
    assert exc.value.details["later"] == [patched["ledger_id"]]
    home.curator.rollback(patched["ledger_id"])
    home.curator.rollback(created["ledger_id"])  # in that order, both go
    assert not (home.skills_dir / "x").exists()


def test_rollback_refuses_unknown_ids_and_missing_blobs(home):
    with pytest.raises(SkillError, match="No ledger entry"):
        home.curator.rollback("000000000000")
    write_skill(home, "x")
    patched = skill_manage_tool(
        home, {"action": "patch", "name": "x", "old_string": "Do it.", "new_string": "y"}, ctx()
    )
    entry = home.curator.ledger()[0]
    (home.root / ".curator_backups" / "blobs" / entry.before[0].sha256).unlink()
    before = tree_state(home.skills_dir)
    with pytest.raises(SkillError, match="missing"):
        home.curator.rollback(patched["ledger_id"])
    assert tree_state(home.skills_dir) == before


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "skills/../../outside.txt"])
def test_ledger_paths_cannot_leave_the_home(home, path):
    (home.skills_dir / ".curator_ledger.jsonl").write_text(
        json.dumps(
            {
                "id": "evil00000000",
                "ts": "",
                "actor": "agent",
                "action": "patch",
                "skill": "x",
                "before": [{"path": path, "sha256": "0" * 64}],
                "after": [],
            }
        )
        + "\n"
    )
    with pytest.raises(SkillError, match="outside the home"):
        home.curator.rollback("evil00000000")


def test_absolute_ledger_paths_inside_the_home_roll_back(home):
    write_skill(home, "x")
    patched = skill_manage_tool(
        home, {"action": "patch", "name": "x", "old_string": "Do it.", "new_string": "y"}, ctx()
    )
    ledger = home.skills_dir / ".curator_ledger.jsonl"
    ledger.write_text(
        ledger.read_text().replace('"skills/x/SKILL.md"', json.dumps(str(home.skills_dir / "x" / "SKILL.md")))
    )
    home.curator.rollback(patched["ledger_id"])
    assert (home.skills_dir / "x" / "SKILL.md").read_text() == skill_md("x")


def test_archive_name_collision_gets_a_timestamp_and_restore_refuses_ambiguity(home, clock):
    write_skill(home, "x", body="first\n")
    home.curator.archive("x")
    write_skill(home, "x", body="second\n")
    clock.advance(61)
    second = home.curator.archive("x")
    assert second["archived_to"].endswith(".archive/x-20261130120101")
    before = tree_state(home.skills_dir)
    with pytest.raises(SkillError, match="Ambiguous restore") as exc:
        home.curator.restore("x")
    assert exc.value.details["matches"] == ["x", "x-20261130120101"]
    assert tree_state(home.skills_dir) == before
    with pytest.raises(SkillError, match="Ambiguous restore"):  # the bare folder name answers for both
        home.curator.restore("x")
    home.curator.restore(".archive/x")  # its path names the first copy alone
    assert (home.skills_dir / "x" / "SKILL.md").read_text().endswith("first\n")


def test_restore_refuses_existing_destination_and_prefix_matches(home):
    write_skill(home, "git-helpers")
    home.curator.archive("git-helpers")
    with pytest.raises(SkillError, match="No archived skill named 'git'"):
        home.curator.restore("git")
    write_skill(home, "git-helpers")
    before = tree_state(home.skills_dir)
    with pytest.raises(SkillError, match="A skill named 'git-helpers' is already active"):  # why the folder is taken
        home.curator.restore("git-helpers")
    assert tree_state(home.skills_dir) == before
    home.curator.archive("git-helpers")
    (home.skills_dir / "git-helpers").mkdir()  # a folder, not a skill, in the way
    (home.skills_dir / "git-helpers" / "notes.txt").write_text("mine")
    before = tree_state(home.skills_dir)
    with pytest.raises(SkillError, match="destination already exists"):
        home.curator.restore(".archive/git-helpers")
    assert tree_state(home.skills_dir) == before


def test_pin_blocks_archive_and_unpin_allows_it(home):
    write_skill(home, "x")
    assert home.curator.pin("x")["pinned"] is True
    with pytest.raises(SkillError, match="is pinned"):
        home.curator.archive("x")
    home.curator.unpin("x")
    assert home.curator.archive("x")["success"]
    assert [r.action for r in home.journal.query(subsystem="skills")][:3] == ["archive", "unpin", "pin"]
    with pytest.raises(SkillError, match="Skill 'x' is archived: restore it first"):  # not "not found"
        home.curator.pin("x")
    with pytest.raises(SkillError, match="Skill 'nope' not found"):
        home.curator.pin("nope")


def test_purge_only_old_archives_and_blobs_restore_them(home, clock):
    write_skill(home, "old-one", files=FILES)
    write_skill(home, "new-one")
    original = tree_state(home.skills_dir / "old-one")
    home.curator.archive("old-one")
    clock.advance(10 * DAY)
    home.curator.archive("new-one")
    clock.advance(1 * DAY)
    preview = home.curator.purge(7, dry_run=True)
    assert preview["candidates"] == [{"name": "old-one", "path": ".archive/old-one"}] and preview["purged"] == []
    assert (home.skills_dir / ".archive" / "old-one").exists()
    result = home.curator.purge(7)
    assert [p["name"] for p in result["purged"]] == ["old-one"]
    assert not (home.skills_dir / ".archive" / "old-one").exists()
    assert (home.skills_dir / ".archive" / "new-one").exists()
    blobs = home.root / ".curator_backups" / "blobs"
    entry = home.curator.ledger()[0]
    assert entry.action == "purge" and entry.after == ()
    assert all((blobs / ref.sha256).exists() for ref in entry.before)
    assert "old-one" not in json.loads((home.skills_dir / ".usage.json").read_text())
    home.curator.rollback(result["purged"][0]["ledger_id"])
    assert home.skills.get("old-one").state == "archived"
    home.curator.restore("old-one")
    assert tree_state(home.skills_dir / "old-one") == original


def test_rolling_back_a_purge_puts_the_usage_record_back_whole(home, clock):
    """The purge's ledger row keeps the record: who made the skill, when, where from, its counts."""
    write_skill(home, "made", category="ops")
    home.curator.archive("made")
    usage = home.skills_dir / ".usage.json"
    records = json.loads(usage.read_text())
    records["made"].update(created_by="agent", use_count=4, view_count=2)  # as Hermes's review recorded it
    usage.write_text(json.dumps(records))
    archived = records["made"]
    clock.advance(10 * DAY)
    purged = home.curator.purge(7)["purged"]
    assert [p["name"] for p in purged] == ["made"]
    clock.advance(DAY)
    home.curator.rollback(purged[0]["ledger_id"])
    assert json.loads((home.skills_dir / ".usage.json").read_text())["made"] == archived
    assert home.curator.restore("made")["restored_to"].endswith("skills/ops/made")  # back into its category
    assert home.skills.get("made").provenance == "agent"


def test_rolling_back_a_purge_leaves_the_record_of_a_skill_made_again_under_its_name(home, clock):
    write_skill(home, "made", category="ops")
    home.curator.archive("made")
    clock.advance(10 * DAY)
    purged = home.curator.purge(7)["purged"]
    skill_manage_tool(home, {"action": "create", "name": "made", "content": skill_md("made")}, ctx())
    made_again = json.loads((home.skills_dir / ".usage.json").read_text())["made"]
    home.curator.rollback(purged[0]["ledger_id"])
    assert json.loads((home.skills_dir / ".usage.json").read_text())["made"] == made_again
    assert home.skills.get("made").state == "active"


def test_a_purge_given_its_preview_purges_only_that_and_names_what_it_left(home, clock):
    for name in ("old-one", "gone-one", "new-one"):
        write_skill(home, name)
        home.curator.archive(name)
    clock.advance(10 * DAY)
    shown = home.curator.purge(7, dry_run=True)["candidates"]
    home.curator.restore("gone-one")
    write_skill(home, "late-one")
    home.curator.archive("late-one")
    home.skills.usage.set_fields("late-one", archived_at="2000-01-01T00:00:00Z")  # old enough after the preview
    result = home.curator.purge(7, only=shown)
    assert [p["name"] for p in result["purged"]] == ["new-one", "old-one"]
    assert result["skipped"] == [{"name": "gone-one", "path": ".archive/gone-one", "reason": "restored or deleted"}]
    assert result["waiting"] == 1 and (home.skills_dir / ".archive" / "late-one").exists()
    assert "1 more archived skill became old enough since the preview" in result["message"]


def test_archive_by_folder_refuses_once_that_folder_is_gone_or_renamed(home):
    write_skill(home, "a")
    folder = write_skill(home, "b")
    (home.skills_dir / "a" / "SKILL.md").unlink()
    (home.skills_dir / "a").rmdir()
    (folder / "SKILL.md").write_text(skill_md("a"))  # b's folder now declares a: the name finds it
    with pytest.raises(SkillError, match=r"no longer in skills/a .*nothing was changed"):
        home.curator.archive("a", folder="a")
    with pytest.raises(SkillError, match=r"skills/b now holds skill 'a', not 'b'"):
        home.curator.archive("b", folder="b")
    assert (folder / "SKILL.md").exists()
    assert home.curator.archive("a", folder="b")["name"] == "a"


def test_a_run_given_its_dry_run_plan_applies_it_or_nothing(home, clock):
    for name in ("one", "two"):
        write_skill(home, name)
        home.skills.usage.set_fields(name, created_by="agent")
    home.skills.usage.set_fields("two", pinned=True)
    clock.advance(45 * DAY)
    preview = home.curator.run(dry_run=True)
    assert preview.plan == (("stale", "one"),)
    home.skills.usage.set_fields("two", pinned=False)  # due too, after the preview
    with pytest.raises(PlanChanged) as changed:
        home.curator.run(expected=preview.plan)
    assert changed.value.report.plan == (("stale", "one"), ("stale", "two")) and changed.value.report.dry_run
    assert home.skills.get("one").state == "active" and home.skills.get("two").state == "active"
    applied = home.curator.run(expected=changed.value.report.plan)
    assert applied.marked_stale == ("one", "two")


@pytest.mark.parametrize("days", [-3, 36_501, 10**20, 2.5, True, "7"])
def test_purge_refuses_bad_days(home, days):
    with pytest.raises(SkillError, match="a whole number from 1 to 36,500"):
        home.curator.purge(days)


def test_purge_refuses_zero_days_as_hermes_reads_it(home):
    """Hermes reads a purge's 0 as purging turned off, so 0 is refused saying so, not read as everything."""
    with pytest.raises(SkillError, match="Hermes reads a purge's 0 as purging turned off"):
        home.curator.purge(0)


def test_archiving_twice_says_it_is_already_archived(home):
    write_skill(home, "x")
    home.curator.archive("x")
    with pytest.raises(SkillError, match="already archived"):
        home.curator.archive("x")


def test_rolling_back_twice_says_it_was_already_rolled_back(home):
    write_skill(home, "deploy", category="ops", files=FILES)
    archived = home.curator.archive("deploy")
    undo = home.curator.rollback(archived["ledger_id"])
    before = tree_state(home.skills_dir)
    with pytest.raises(SkillError, match=f"already rolled back by {undo['ledger_id']}") as again:
        home.curator.rollback(archived["ledger_id"])
    assert again.value.details["rolled_back_by"] == undo["ledger_id"]
    assert tree_state(home.skills_dir) == before
    redo = home.curator.rollback(undo["ledger_id"])  # the archive is in effect again
    with pytest.raises(SkillError, match=f"already rolled back by {redo['ledger_id']}"):
        home.curator.rollback(undo["ledger_id"])
    assert home.curator.rollback(archived["ledger_id"])["success"]  # so it can be undone once more
    assert home.skills.get("deploy").state == "active"


def test_a_rolled_back_entry_done_again_by_a_later_one_is_not_rolled_back_in_its_name(home):
    """Archive, roll back, archive again: rolling back the first archive again undid the second one,
    and the ledger and Timeline credited it to the first."""
    write_skill(home, "old-b")
    first = home.curator.archive("old-b")
    undo = home.curator.rollback(first["ledger_id"])
    second = home.curator.archive("old-b")
    before = tree_state(home.skills_dir)
    with pytest.raises(SkillError, match=f"already rolled back by {undo['ledger_id']}") as again:
        home.curator.rollback(first["ledger_id"])
    assert f"roll back {second['ledger_id']} instead" in str(again.value)
    assert again.value.details["later"] == [second["ledger_id"]]
    assert tree_state(home.skills_dir) == before and home.skills.get("old-b").state == "archived"
    assert home.curator.rollback(second["ledger_id"])["success"]


def test_an_archived_skill_keeps_the_category_it_was_archived_from(home):
    """The list showed category '-' for an archived billing skill."""
    write_skill(home, "rerender-invoice-pdfs", category="billing")
    write_skill(home, "flat-one")
    home.curator.archive("rerender-invoice-pdfs")
    home.curator.archive("flat-one")
    listed = {s.name: (s.state, s.category) for s in home.skills.list(include_archived=True)}
    assert listed == {"rerender-invoice-pdfs": ("archived", "billing"), "flat-one": ("archived", None)}


def test_a_usage_file_holding_an_escaped_lone_surrogate_is_written_back_as_it_was(home):
    """A \\ud800 escape in .usage.json (valid JSON, no UTF-8 for it) made pinning crash with a traceback."""
    write_skill(home, "x")
    home.curator.pin("x")
    path = home.skills_dir / ".usage.json"
    path.write_text(path.read_text(encoding="utf-8").replace('"archived_at": null', '"archived_at": "\\ud800"'))
    assert home.curator.unpin("x")["success"]
    assert '"archived_at": "\\ud800"' in path.read_text(encoding="utf-8")


def test_a_rollback_behind_an_outside_edit_names_no_entry_it_cannot_redo(home):
    """A later entry was named even when the file was changed after it too (by a rollback, then an
    outside edit): rolling that back would redo a change and still be refused."""
    created = skill_manage_tool(home, {"action": "create", "name": "x", "content": skill_md("x")}, ctx())
    patched = skill_manage_tool(
        home, {"action": "patch", "name": "x", "old_string": "Do it.", "new_string": "Do it twice."}, ctx()
    )
    home.curator.rollback(patched["ledger_id"])
    (home.skills_dir / "x" / "SKILL.md").write_text(skill_md("x", body="edited by Hermes\n"))
    with pytest.raises(SkillError, match="changed outside the workbench") as exc:
        home.curator.rollback(created["ledger_id"])
    assert exc.value.details["later"] == [] and "Roll back the later entries first" not in exc.value.message


def test_archiving_a_skill_whose_usage_record_holds_a_lone_surrogate_is_no_crash(home):
    """The ledger row (which carries the usage record) was encoded on its own, without the escape
    fallback the usage file's writer has: a fuzz example made `skills archive` exit 70."""
    write_skill(home, "x")
    home.curator.pin("x")
    home.curator.unpin("x")
    path = home.skills_dir / ".usage.json"
    path.write_text(path.read_text(encoding="utf-8").replace('"created_by": null', '"created_by": "\\ud800"'))
    assert '"created_by": "\\ud800"' in path.read_text(encoding="utf-8")
    assert home.curator.archive("x")["success"]
    assert "\\ud800" in (home.root / "skills" / ".curator_ledger.jsonl").read_text(encoding="utf-8")


def test_an_archive_whose_usage_record_holds_a_lone_surrogate_is_listed_and_rolls_back(home):
    """Such a row was written (escaped) but the ledger reader skipped it on purpose: `curator ledger`
    did not list the archive and it could not be rolled back."""
    write_skill(home, "x")
    home.curator.pin("x")
    home.curator.unpin("x")
    path = home.skills_dir / ".usage.json"
    path.write_text(path.read_text(encoding="utf-8").replace('"created_by": null', '"created_by": "\\ud800"'))
    archived = home.curator.archive("x")
    assert [e.id for e in home.skills.ledger.entries()][-1] == archived["ledger_id"]
    assert home.curator.rollback(archived["ledger_id"])["success"]
    assert home.skills.get("x").state == "active"
    record = json.loads(path.read_text(encoding="utf-8"))["x"]
    assert record["created_by"] == "\ud800" and record["state"] == "active"


def test_a_skill_holding_a_file_name_that_is_not_utf8_archives_and_rolls_back(home):
    """Python spells such a name with \\udc80-\\udcff surrogates; the ledger row naming it was skipped
    when read, so the archive was not listed and rollback said "No ledger entry"."""
    import os

    folder = write_skill(home, "x")
    odd = os.fsdecode(b"\xffnotes.md")
    (folder / odd).write_bytes(b"kept\n")
    archived = home.curator.archive("x")
    assert home.skills.ledger.entries()[-1].id == archived["ledger_id"]
    assert home.curator.rollback(archived["ledger_id"])["success"]
    assert (home.skills_dir / "x" / odd).read_bytes() == b"kept\n"


HERMES_RESTORES_AND_ARCHIVES = """
import json
import re
from tools.skill_usage import archive_skill, restore_skill
print(json.dumps([list(restore_skill("theta-new")), list(archive_skill("theta-new"))]))
"""


@pytest.mark.slow  # Hermes's own archive code in its own process
@pytest.mark.parametrize("legacy", [False, True], ids=["stamped", "record-before-the-stamp"])
def test_a_copy_hermes_archived_again_is_flat_not_where_we_archived_it_from(home, hermes, legacy):
    """Hermes's restore puts a skill back flat and its archive rewrites archived_at but leaves the
    archived_from (and archive_dir) we wrote: the copy showed as `ops` and restored into ops/."""
    write_skill(home, "theta-new", category="ops")
    home.curator.archive("theta-new")
    assert home.skills.get("theta-new").category == "ops"  # our own copy: where it lived
    if legacy:  # a record an earlier workbench wrote: no stamp, so its whole-second archived_at says it is ours
        home.skills.usage.update(lambda records, now: records["theta-new"].pop("archived_from_at"))
        assert home.skills.get("theta-new").category == "ops"
    (restored, _), (archived, _) = hermes.json(home.root, HERMES_RESTORES_AND_ARCHIVES)
    assert restored and archived and (home.skills_dir / ".archive" / "theta-new").is_dir()
    assert home.skills.usage.load()["theta-new"]["archived_from"] == "ops/theta-new"  # Hermes left it
    listed = [(s.name, s.category, s.state) for s in home.skills.list(include_archived=True)]
    assert listed == [("theta-new", None, "archived")]
    assert home.curator.restore("theta-new")["restored_to"] == str(home.skills_dir / "theta-new")


def _skill_at(home, folder: str, name: str) -> None:
    (home.skills_dir / folder).mkdir(parents=True)
    (home.skills_dir / folder / "SKILL.md").write_text(
        f'---\nname: "{name}"\ndescription: Named with a slash\n---\nDo it.\n', encoding="utf-8"
    )


def test_a_skill_whose_name_holds_a_slash_restores_by_the_name_it_was_archived_by(home, clock):
    """``skills archive '[bold red]evil[/]'`` worked but ``skills restore`` refused that name (a folder
    name cannot hold "/"), the suggestion fell back to ``.archive/]``, and a second such skill,
    archived to ``.archive/]-<ts>``, made ``restore ]`` ambiguous though it is another skill."""
    _skill_at(home, "[bold red]evil[/]", "[bold red]evil[/]")
    _skill_at(home, "x[/]", "x[/]")
    assert home.curator.archive("[bold red]evil[/]")["archived_to"].endswith("/.archive/]")
    clock.advance(61)
    assert home.curator.archive("x[/]")["archived_to"].endswith("/.archive/]-20261130120101")
    assert home.skills.command("restore", "[bold red]evil[/]") == "workbench skills restore '[bold red]evil[/]'"
    copy = next(f for f in home.skills.scanner.archived() if f.dir_name == "]-20261130120101")
    assert home.skills.command("restore", copy) == "workbench skills restore 'x[/]'"
    assert home.curator.restore("]")["name"] == "[bold red]evil[/]"  # its folder's own skill, not x[/]
    home.curator.archive("[bold red]evil[/]")
    assert home.curator.restore("[bold red]evil[/]")["restored_to"] == str(home.skills_dir / "[bold red]evil[/]")
    assert home.curator.restore("x[/]")["name"] == "x[/]"
    assert (home.skills_dir / "x[/]" / "SKILL.md").exists() and not list(home.skills_dir.glob(".archive/*"))
    with pytest.raises(SkillError, match="Give the skill's name"):  # a path no copy declares stays refused
        home.curator.restore("devops/nothing")


def test_an_ambiguous_restore_names_a_command_for_each_copy(home, clock):
    _skill_at(home, "[bold red]evil[/]", "[bold red]evil[/]")
    home.curator.archive("[bold red]evil[/]")
    _skill_at(home, "[bold red]evil[/]", "[bold red]evil[/]")
    clock.advance(61)
    home.curator.archive("[bold red]evil[/]")
    before = tree_state(home.skills_dir)
    with pytest.raises(SkillError, match="Ambiguous restore") as exc:
        home.curator.restore("[bold red]evil[/]")
    assert tree_state(home.skills_dir) == before
    assert exc.value.message.endswith(
        "Restore one by its folder: `workbench skills restore '.archive/]-20261130120101'`; "
        "`workbench skills restore '.archive/]'`."
    )
    assert home.curator.restore(".archive/]-20261130120101")["name"] == "[bold red]evil[/]"


@pytest.mark.slow  # Hermes's own archive code in its own process
def test_a_slash_named_skill_hermes_archived_restores_by_its_name(home, hermes):
    """Hermes finds a skill to archive by its declared name, slash and all, and moves its last folder
    to ``.archive/]`` (its own restore takes only that folder name); ours takes the name too."""
    _skill_at(home, "[bold red]evil[/]", "[bold red]evil[/]")
    code = "import json\nfrom tools.skill_usage import archive_skill\n"
    (archived, _) = hermes.json(home.root, code + 'print(json.dumps(list(archive_skill("[bold red]evil[/]"))))')
    assert archived and (home.skills_dir / ".archive" / "]" / "SKILL.md").is_file()
    assert home.skills.command("restore", "[bold red]evil[/]") == "workbench skills restore '[bold red]evil[/]'"
    restored = home.curator.restore("[bold red]evil[/]")
    assert restored["name"] == "[bold red]evil[/]" and (home.skills_dir / "]" / "SKILL.md").is_file()  # flat


def test_a_rollback_never_leaves_two_active_skills_of_one_name(home, clock):
    """Rolling back the Curator's archive of a second copy, after the first copy was restored, put it back
    beside the first: two active `k8s-rollout`, which `skills show` called ambiguous and Hermes listed once."""
    write_skill(home, "k8s-rollout", category="ops", body="first\n")
    home.curator.archive("k8s-rollout")
    write_skill(home, "k8s-rollout", category="devops", body="second\n")
    clock.advance(61)
    second = home.curator.archive("k8s-rollout", actor="curator")
    home.curator.restore(".archive/k8s-rollout")
    entry = home.skills.ledger.get(second["ledger_id"])
    before = tree_state(home.skills_dir)
    active = home.skills.find("k8s-rollout").path
    refusal = f"A skill named 'k8s-rollout' is already active at {active}; archive or rename it before restoring"
    with pytest.raises(SkillError, match=re.escape(refusal + " skills/devops/k8s-rollout. Nothing was changed.")):
        home.curator.rollback_files(entry)  # the question a person is asked says so first
    with pytest.raises(SkillError, match=re.escape(refusal)):
        home.curator.rollback(second["ledger_id"])
    assert tree_state(home.skills_dir) == before
    assert [f.path for f in home.skills.scanner.active() if f.name == "k8s-rollout"] == [active]
    home.curator.archive("k8s-rollout")  # the way out the refusal names
    assert home.curator.rollback(second["ledger_id"])["success"]
    assert (home.skills_dir / "devops" / "k8s-rollout" / "SKILL.md").read_text().endswith("second\n")


def test_a_restore_checks_for_a_skill_of_its_name_under_the_lock(home, monkeypatch):
    """The restore looked for an active skill of its name before taking the skills lock only."""
    write_skill(home, "deploy", category="ops")
    home.curator.archive("deploy")
    curator = home.curator
    move = curator._move

    def made_meanwhile(*args, **kwargs):  # another process makes one between the first look and the move
        write_skill(home, "deploy", category="devops")
        return move(*args, **kwargs)

    monkeypatch.setattr(curator, "_move", made_meanwhile)
    before_usage = home.skills.usage.load()
    with pytest.raises(SkillError, match="A skill named 'deploy' is already active at .*devops/deploy"):
        curator.restore("deploy")
    assert (home.skills_dir / ".archive" / "deploy" / "SKILL.md").is_file()
    assert not (home.skills_dir / "ops").exists()
    assert home.skills.usage.load() == before_usage


def test_each_archived_copy_of_one_name_keeps_its_own_category(home, clock):
    """`.usage.json` is keyed by name: the second archive rewrote the record, so the first copy showed
    category `-` and `r` restored it to skills/k8s-rollout, not back to devops/."""
    write_skill(home, "k8s-rollout", category="devops", body="first\n")
    home.curator.archive("k8s-rollout")
    write_skill(home, "k8s-rollout", category="ops/k8s", body="second\n")
    clock.advance(61)
    home.curator.archive("k8s-rollout", actor="curator")
    listed = {s.path: s.category for s in home.skills.list(include_archived=True) if s.name == "k8s-rollout"}
    assert listed == {".archive/k8s-rollout": "devops", ".archive/k8s-rollout-20261130120101": "ops/k8s"}
    restored = home.curator.restore(".archive/k8s-rollout")
    assert restored["restored_to"] == str(home.skills_dir / "devops" / "k8s-rollout")  # its own folder
    assert (home.skills_dir / "devops" / "k8s-rollout" / "SKILL.md").read_text().endswith("first\n")
    [left] = [s for s in home.skills.list(include_archived=True) if s.state == "archived"]
    assert (left.path, left.category) == (".archive/k8s-rollout-20261130120101", "ops/k8s")  # the restore kept it
    home.curator.archive("k8s-rollout")  # a third archive: both copies still know where they lived
    listed = {s.path: s.category for s in home.skills.list(include_archived=True) if s.name == "k8s-rollout"}
    assert listed == {".archive/k8s-rollout": "devops", ".archive/k8s-rollout-20261130120101": "ops/k8s"}
    home.curator.restore(".archive/k8s-rollout-20261130120101")
    assert (home.skills_dir / "ops" / "k8s" / "k8s-rollout" / "SKILL.md").read_text().endswith("second\n")


HERMES_CREATES_K8S = """
import json
from tools.skill_manager_tool import skill_manage
content = "---\\nname: k8s-rollout\\ndescription: Roll out again\\n---\\n# k8s-rollout\\n\\nSteps.\\n"
print(json.dumps(json.loads(skill_manage("create", "k8s-rollout", content=content, category="ops"))["success"]))
"""


@pytest.mark.slow  # Hermes's own skill_manage in its own process
def test_an_older_copy_keeps_its_category_when_hermes_makes_the_name_again(home, hermes, clock):
    """The trial: archive, Hermes creates the name again, the Curator archives that copy too."""
    write_skill(home, "k8s-rollout", category="devops")
    home.curator.archive("k8s-rollout")
    assert hermes.json(home.root, HERMES_CREATES_K8S) is True
    clock.advance(61)
    home.curator.archive("k8s-rollout", actor="curator")
    listed = {s.path: s.category for s in home.skills.list(include_archived=True) if s.name == "k8s-rollout"}
    assert listed == {".archive/k8s-rollout": "devops", ".archive/k8s-rollout-20261130120101": "ops"}
    assert home.curator.restore(".archive/k8s-rollout")["restored_to"] == str(home.skills_dir / "devops/k8s-rollout")


@pytest.mark.slow  # Hermes's own skill_manage in its own process
def test_a_pin_of_a_skill_made_again_is_its_own_not_the_archived_copys(home, hermes):
    """The trial: after `skills pin trial8-backup` (the active one, made again by Hermes over our archive),
    `skills list --all` showed the archived copy pinned too, `curator status` said `pinned: trial8-backup,
    trial8-backup`, and doctor said all good."""
    write_skill(home, "k8s-rollout", category="devops")
    home.curator.archive("k8s-rollout")
    assert hermes.json(home.root, HERMES_CREATES_K8S) is True  # ops/k8s-rollout, the copy's record kept
    home.curator.pin("k8s-rollout")
    pins = {s.path: s.pinned for s in home.skills.list(include_archived=True) if s.name == "k8s-rollout"}
    assert pins == {"ops/k8s-rollout": True, ".archive/k8s-rollout": False}
    assert home.skills.get(".archive/k8s-rollout").pinned is False
    assert home.curator.status()["pinned"] == ["k8s-rollout"]
    with pytest.raises(SkillError) as refused:  # (its restore would clash with the active one: not advised)
        home.curator.pin(".archive/k8s-rollout")
    assert refused.value.message == (
        "Skill 'k8s-rollout' in skills/.archive/k8s-rollout is an archived copy: the name's pin is the active "
        "skill's, in skills/ops/k8s-rollout (`workbench skills pin k8s-rollout`). Nothing was changed."
    )
    home.curator.unpin("k8s-rollout")
    assert home.curator.status()["pinned"] == []


@pytest.mark.slow  # Hermes's own skill_manage in its own process
def test_doctor_names_a_skill_made_again_whose_record_is_the_archived_copys(home, hermes):
    """Doctor said "all good" on a home where a skill made again shares its record with an archived copy."""
    write_skill(home, "k8s-rollout", category="devops")
    assert not [f for f in run_doctor(home).findings if "made anew" in f.what]
    home.curator.archive("k8s-rollout")
    assert hermes.json(home.root, HERMES_CREATES_K8S) is True
    [finding] = [f for f in run_doctor(home).findings if "made anew" in f.what]
    assert finding.severity == "info" and not finding.repair
    assert "skill 'k8s-rollout' (skills/ops/k8s-rollout)" in finding.what
    assert "archived copy in skills/.archive/k8s-rollout" in finding.what
    assert "share their use counts and pin" in finding.what and "never marks this one stale" in finding.what
    assert "`workbench skills archive k8s-rollout`" in finding.fix


@pytest.mark.slow  # Hermes's own archive_skill and skill_manage in their own process
def test_a_skill_hermes_archived_and_made_again_is_known_by_its_copys_name(home, hermes, clock):
    """Hermes's own archive writes no ``archive_dir``: a skill it archived and then made again has a
    record saying archived with no folder named. The pass read it as moved back by hand and archived
    the new skill seconds after it was made; Skills showed the old copy's uses; doctor said nothing."""
    write_skill(home, "k8s-rollout", category="devops")
    home.skills.usage.set_fields("k8s-rollout", created_by="agent", use_count=5, last_used_at="2026-01-02T00:00:00Z")
    code = "import json\nfrom tools.skill_usage import archive_skill\n"
    archived = hermes.json(home.root, code + 'print(json.dumps(list(archive_skill("k8s-rollout"))))')
    assert archived[0] is True
    assert hermes.json(home.root, HERMES_CREATES_K8S) is True
    record = home.skills.usage.load()["k8s-rollout"]
    assert record["state"] == "archived" and not record.get("archive_dir")
    clock.advance(100 * DAY)
    report = home.curator.run(dry_run=True)
    assert report.plan == () and report.archived == ()
    new = next(s for s in home.skills.list() if s.name == "k8s-rollout")
    assert (new.use_count, new.last_used_at) == (0, None)
    [finding] = [f for f in run_doctor(home).findings if "made anew" in f.what]
    assert "archived copy in skills/.archive/k8s-rollout" in finding.what


def test_a_skill_made_again_by_our_agent_leaves_the_archived_copy_its_category(home):
    """Our create wrote a fresh record over the archived copy's, so the copy lost its category."""
    write_skill(home, "k8s-rollout", category="devops")
    home.curator.archive("k8s-rollout")
    created = skill_manage_tool(
        home, {"action": "create", "name": "k8s-rollout", "content": skill_md("k8s-rollout")}, ctx()
    )
    assert created["success"]
    [copy] = [s for s in home.skills.list(include_archived=True) if s.state == "archived"]
    assert copy.category == "devops"
    home.curator.archive("k8s-rollout")
    assert home.curator.restore(".archive/k8s-rollout")["restored_to"] == str(home.skills_dir / "devops/k8s-rollout")


def test_a_pass_names_the_folder_of_each_skill_whose_name_two_share(home, clock):
    """`curator run` said `archived: k8s-rollout, pdf-extract, k8s-rollout`: one name twice, no folder."""
    write_skill(home, "k8s-rollout", category="devops")
    write_skill(home, "k8s-rollout")
    write_skill(home, "pdf-extract", category="docs")
    for name in ("k8s-rollout", "pdf-extract"):
        home.skills.usage.set_fields(name, created_by="agent")
    clock.advance(100 * DAY)
    report = home.curator.run()
    assert sorted(report.archived) == ["k8s-rollout (devops/k8s-rollout)", "k8s-rollout (k8s-rollout)", "pdf-extract"]
    [line] = [line for line in report.outcome() if line.lstrip().startswith("archived:")]
    assert "k8s-rollout (devops/k8s-rollout)" in line and "k8s-rollout (k8s-rollout)" in line
    assert "pdf-extract (" not in line  # a name alone where it is enough
    labels = sorted(s.label for s in home.skills.list(include_archived=True))
    assert labels == [
        "k8s-rollout (.archive/k8s-rollout)",
        f"k8s-rollout (.archive/{report_copy(home)})",
        "pdf-extract",
    ]


def report_copy(home) -> str:
    return next(p.name for p in (home.skills_dir / ".archive").iterdir() if p.name.startswith("k8s-rollout-"))


@pytest.mark.slow  # Hermes's own skill_manage in its own process
def test_a_pass_leaves_a_skill_hermes_made_again_with_the_archived_copys_record(home, hermes, clock):
    """A trial: Hermes's create of a name the Curator had archived keeps that copy's usage record (its
    old last use, state archived), and the next pass archived the new skill seconds after it was made."""
    write_skill(home, "k8s-rollout", category="devops")
    home.skills.usage.set_fields("k8s-rollout", created_by="agent", use_count=7, last_used_at="2026-01-02T00:00:00Z")
    clock.advance(100 * DAY)
    assert home.curator.run().archived == ("k8s-rollout",)
    assert hermes.json(home.root, HERMES_CREATES_K8S) is True  # ops/k8s-rollout, the old record kept
    assert home.skills.usage.load()["k8s-rollout"]["state"] == "archived"
    clock.advance(60)
    report = home.curator.run(dry_run=True)
    assert report.plan == () and report.archived == ()
    assert (home.skills_dir / "ops" / "k8s-rollout" / "SKILL.md").exists()
    # the Skills table: the new skill has no use yet (the old copy's 7 uses and last use are that copy's)
    new, old = sorted(home.skills.list(include_archived=True), key=lambda s: s.state)
    assert (new.state, new.use_count, new.last_used_at, new.created_at) == ("active", 0, None, None)
    assert new.provenance == "agent"
    assert (old.state, old.use_count, old.last_used_at) == ("archived", 7, "2026-01-02T00:00:00Z")
    clock.advance(60)
    home.skills.usage.bump_use("k8s-rollout")  # a use of the new one bumps the same record
    new = next(s for s in home.skills.list() if s.name == "k8s-rollout")
    assert new.use_count == 8 and new.last_used_at is not None and new.last_used_at > "2026-01-02"


def test_an_archive_that_waited_for_the_skills_lock_reads_the_pin_again(home):
    """A pin set while an archive waited for the skills lock (after its first read) was not read again:
    the pinned skill was archived. Hermes's pin takes only the usage lock, as ``set_fields`` does here."""
    write_skill(home, "deploy", category="ops")
    outcome = waiting_for_the_skills_lock(home, lambda: home.curator.archive("deploy"), meanwhile=pin_of(home))
    assert isinstance(outcome.get("error"), SkillError) and "pinned" in str(outcome["error"])
    assert (home.skills_dir / "ops" / "deploy" / "SKILL.md").exists() and not home.curator.ledger()


def test_a_pass_leaves_a_skill_pinned_while_it_waited_for_the_skills_lock(home, clock):
    write_skill(home, "deploy", category="ops")
    home.skills.usage.set_fields("deploy", created_by="agent")
    clock.advance(100 * DAY)
    report = waiting_for_the_skills_lock(home, home.curator.run, meanwhile=pin_of(home))["result"]
    assert report.archived == () and report.errors == ("deploy: pinned since the pass began; left as it is",)
    assert (home.skills_dir / "ops" / "deploy" / "SKILL.md").exists()


def test_a_pass_says_why_it_left_a_skill_whose_record_went_meanwhile(home, clock):
    write_skill(home, "deploy", category="ops")
    home.skills.usage.set_fields("deploy", created_by="agent")
    clock.advance(100 * DAY)

    def forgot() -> None:  # (Hermes's forget)
        home.skills.usage.update(lambda records, now: records.pop("deploy"))

    report = waiting_for_the_skills_lock(home, home.curator.run, meanwhile=forgot)["result"]
    assert report.errors == ("deploy: its usage record went since the pass began; left as it is",)


def test_a_pin_takes_the_skills_lock_an_archive_reads_it_under(home):
    write_skill(home, "deploy", category="ops")

    def not_yet() -> None:  # (not written while an archive may hold the lock)
        assert not home.skills.get("deploy").pinned

    outcome = waiting_for_the_skills_lock(home, lambda: home.curator.pin("deploy"), meanwhile=not_yet)
    assert outcome["result"]["changed"] and home.skills.get("deploy").pinned


def test_a_pin_that_waited_while_the_skill_was_archived_is_refused(home):
    """A review: a pin checked that the skill was active before taking the skills lock, then wrote its pin
    into the record an archive made meanwhile (pinned, archived)."""
    write_skill(home, "deploy", category="ops")

    def archived_by_another_process() -> None:  # (as a pass that held the lock would leave it)
        (home.skills_dir / ".archive").mkdir(exist_ok=True)
        (home.skills_dir / "ops" / "deploy").rename(home.skills_dir / ".archive" / "deploy")

    outcome = waiting_for_the_skills_lock(
        home, lambda: home.curator.pin("deploy"), meanwhile=archived_by_another_process
    )
    assert str(outcome["error"]) == (
        "Skill 'deploy' left skills/ops/deploy while the pin waited (archived or moved by another process). "
        "Nothing was changed."
    )
    assert not (home.skills.usage.load().get("deploy") or {}).get("pinned")


def pin_of(home):
    """Hermes's pin of 'deploy', as it takes only the usage lock."""
    return lambda: home.skills.usage.set_fields("deploy", pinned=True)


def waiting_for_the_skills_lock(home, call, meanwhile) -> dict:
    """``call`` in a thread while another process holds the skills lock; once it waits, ``meanwhile``,
    then the lock is let go. What ``call`` returned (``result``) or raised (``error``)."""
    lock = home.skills_dir / ".locks" / "skills.lock"
    lock.parent.mkdir(exist_ok=True)
    holder = holding_flock(lock)
    try:

        def visibly():  # (its wait listed in ``lock_waits.under_way``: a cancellable scope never cancelled)
            with lock_waits.cancellable(threading.Event()):
                return call()

        thread, outcome = in_thread(visibly)
        wait_until_waiting(lock, thread)
        meanwhile()
    finally:
        holder.stdin.close()
        holder.wait()
    thread.join(timeout=10)
    return outcome


HERMES_ARCHIVES_AN_HOUR_LATER = """
import datetime as real
import json
import tools.skill_usage as usage

class Later(real.datetime):  # Hermes's clock an hour on: its second archive of the name, an hour after the first
    @classmethod
    def now(cls, tz=None):
        return real.datetime.now(tz) + real.timedelta(hours=1)

usage.datetime = Later
print(json.dumps(list(usage.archive_skill("k8s-rollout"))))
"""


@pytest.mark.slow  # Hermes's own archive_skill and skill_manage in their own process
def test_a_copy_moved_back_by_hand_is_not_made_anew_when_an_older_copy_stays(home, hermes):
    """A trial: Hermes archived k8s-rollout twice (`.archive/k8s-rollout`, then an hour later
    `.archive/k8s-rollout-<stamp>`; its archive writes no archive_dir). The second copy, moved back by
    hand, read as "made anew" because the first copy stays: the record's copy is the one archived when
    the record says, and a skill made anew is told the copy the record is about, not the older one."""
    from engine.skills.usage import record_copy

    write_skill(home, "k8s-rollout", category="devops")
    home.skills.usage.set_fields("k8s-rollout", created_by="agent")
    code = "import json\nfrom tools.skill_usage import archive_skill\n"
    assert hermes.json(home.root, code + 'print(json.dumps(list(archive_skill("k8s-rollout"))))')[0] is True
    assert hermes.json(home.root, HERMES_CREATES_K8S) is True  # ops/k8s-rollout, the first copy's record kept
    home.skills.usage.set_fields("k8s-rollout", use_count=7)
    ok, said = hermes.json(home.root, HERMES_ARCHIVES_AN_HOUR_LATER)
    assert ok, said
    archive = home.skills_dir / ".archive"
    [second] = [p.name for p in archive.iterdir() if p.name.startswith("k8s-rollout-")]
    assert sorted(p.name for p in archive.iterdir()) == ["k8s-rollout", second]
    record = home.skills.usage.load()["k8s-rollout"]
    assert record["state"] == "archived" and not record.get("archive_dir")

    write_skill(home, "k8s-rollout")  # made anew by hand: the record is the second copy's, not the first's
    copy = record_copy("k8s-rollout", record, home.skills.scanner.archived())
    assert copy is not None and copy.dir_name == second
    [finding] = [f for f in run_doctor(home).findings if "made anew" in f.what]
    assert f"archived copy in skills/.archive/{second}" in finding.what
    (home.skills_dir / "k8s-rollout" / "SKILL.md").unlink()
    (home.skills_dir / "k8s-rollout").rmdir()

    (archive / second).rename(home.skills_dir / "ops" / "k8s-rollout")  # the second copy moved back by hand
    assert record_copy("k8s-rollout", record, home.skills.scanner.archived()) is None
    assert not [f for f in run_doctor(home).findings if "made anew" in f.what]
    [back] = [s for s in home.skills.list() if s.name == "k8s-rollout"]
    assert back.use_count == 7, "its own record's counts, not a skill made anew's"


def test_an_archived_copy_keeps_its_own_counts_when_our_agent_makes_the_name_again(home, wb):
    """`skills list --all` showed the archived copy with the new skill's counts (0, then 1 after one use):
    our create wrote a fresh record for the name. The copy's counts now move with its folder into
    ``archived_copies``, and each copy shows its own."""
    write_skill(home, "k8s-rollout", category="devops")
    home.skills.usage.set_fields("k8s-rollout", use_count=5, last_used_at="2026-01-02T00:00:00Z")
    home.curator.archive("k8s-rollout")
    created = skill_manage_tool(
        home, {"action": "create", "name": "k8s-rollout", "content": skill_md("k8s-rollout")}, ctx()
    )
    assert created["success"]
    home.skills.usage.bump_use("k8s-rollout")
    home.close()
    listed = json.loads(wb("skills", "list", "--all", "--json").stdout)["skills"]
    uses = {s["state"]: (s["use_count"], s["last_used_at"], s.get("uses_note")) for s in listed}
    assert uses["archived"] == (5, "2026-01-02T00:00:00Z", None)
    assert uses["active"][0] == 1 and uses["active"][2] is None


HERMES_USES_K8S = """
import json
from tools.skill_usage import bump_use
bump_use("k8s-rollout")
print("true")
"""


@pytest.mark.slow  # Hermes's own archive_skill, skill_manage and bump_use in their own process
def test_counts_a_skill_made_again_shares_with_its_archived_copy_say_so(home, hermes, wb):
    """Hermes 0.19.0 keeps the archived copy's record when it makes the name again (state archived) and a
    use of the new skill bumps it: both then showed the same 6 uses as their own. Where the record cannot
    tell whose uses they are, both now say their counts may include the other's."""
    write_skill(home, "k8s-rollout", category="devops")
    home.skills.usage.set_fields("k8s-rollout", created_by="agent", use_count=5, last_used_at="2026-01-02T00:00:00Z")
    code = "import json\nfrom tools.skill_usage import archive_skill\n"
    assert hermes.json(home.root, code + 'print(json.dumps(list(archive_skill("k8s-rollout"))))')[0] is True
    assert hermes.json(home.root, HERMES_CREATES_K8S) is True
    assert hermes.json(home.root, HERMES_USES_K8S) is True
    home.close()
    listed = json.loads(wb("skills", "list", "--all", "--json").stdout)["skills"]
    notes = {s["state"]: (s["use_count"], s.get("uses_note")) for s in listed}
    assert notes["active"] == (
        6,
        "may include those of the archived copy of its name (Hermes keeps one usage record a name)",
    )
    assert str(notes["archived"][1]).startswith("may include those of the skill made anew under its name")
    text = wb("skills", "list", "--all").stdout
    assert "uses 6*" in text and "* ops/k8s-rollout: its counts may include those of the archived copy" in text
