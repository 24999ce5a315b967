"""skill_manage actions end to end: atomic writes, journal, ledger, events, usage, approvals."""

from __future__ import annotations

import json
import subprocess

import pytest

from engine import open_home
from engine.events import SkillChanged
from engine.skills.manage import (
    SKILL_MANAGE_SCHEMA,
    SKILL_VIEW_SCHEMA,
    SKILLS_LIST_SCHEMA,
    skill_manage_tool,
    skill_view_tool,
    skills_list_tool,
)
from engine.tools import BACKGROUND_REVIEW
from tests.hermes_support import workbench_cmd
from tests.test_skills_support import ctx, skill_md, tree_state, write_skill


def _events(home):
    seen = []
    home.bus.subscribe(seen.append, SkillChanged)
    return seen


def test_schemas_are_openai_functions():
    for schema in (SKILLS_LIST_SCHEMA, SKILL_VIEW_SCHEMA, SKILL_MANAGE_SCHEMA):
        assert set(schema) == {"name", "description", "parameters"}
        assert schema["parameters"]["type"] == "object"
    assert SKILL_MANAGE_SCHEMA["parameters"]["properties"]["action"]["enum"] == [
        "create",
        "patch",
        "edit",
        "delete",
        "write_file",
        "remove_file",
    ]


def test_every_action_writes_journals_ledgers_and_announces(home):
    events = _events(home)
    c = ctx()
    md = skill_md("deploy", body="# Deploy\nRun make deploy.\n")
    steps = [
        {"action": "create", "name": "deploy", "content": md, "category": "ops"},
        {"action": "patch", "name": "deploy", "old_string": "make deploy", "new_string": "make release"},
        {"action": "edit", "name": "deploy", "content": skill_md("deploy", body="# Deploy\nRewritten.\n")},
        {"action": "write_file", "name": "deploy", "file_path": "references/notes.md", "file_content": "notes"},
        {
            "action": "patch",
            "name": "deploy",
            "file_path": "references/notes.md",
            "old_string": "notes",
            "new_string": "better notes",
        },
        {"action": "remove_file", "name": "deploy", "file_path": "references/notes.md"},
        {"action": "delete", "name": "deploy"},
    ]
    for args in steps:
        result = skill_manage_tool(home, args, c)
        assert result["success"], result
        assert result["ledger_id"]
    assert [e.action for e in events] == [s["action"] for s in steps]
    assert all(e.name == "deploy" and e.session_id == "s-1" for e in events)
    rows = list(reversed(home.journal.query(subsystem="skills")))
    assert [r.action for r in rows] == [s["action"] for s in steps]
    assert rows[0].before is None and rows[0].after == md
    assert "make release" in rows[1].after and "make deploy" in rows[1].before
    assert (rows[0].actor, rows[0].session_id, rows[0].message_id) == ("agent", "s-1", 7)
    assert rows[-1].after is None and rows[-1].before is not None
    assert [e.action for e in reversed(home.curator.ledger())] == [s["action"] for s in steps]
    assert not (home.skills_dir / "ops").exists()  # the empty category folder went with the skill
    assert json.loads((home.skills_dir / ".usage.json").read_text()) == {}


def test_patch_and_edit_bump_patch_count_and_create_seeds_a_record(home):
    skill_manage_tool(home, {"action": "create", "name": "x", "content": skill_md("x")}, ctx())
    info = home.skills.get("x")
    assert (info.created_by, info.created_at, info.patch_count) == (None, "2026-11-30T12:00:00+00:00", 0)
    skill_manage_tool(home, {"action": "patch", "name": "x", "old_string": "Do it.", "new_string": "Do more."}, ctx())
    assert home.skills.get("x").patch_count == 1


def test_background_create_is_curator_managed(home):
    skill_manage_tool(
        home, {"action": "create", "name": "x", "content": skill_md("x")}, ctx(origin=BACKGROUND_REVIEW, actor="review")
    )
    info = home.skills.get("x")
    assert (info.created_by, info.provenance) == ("agent", "agent")
    [entry] = home.curator.ledger()
    assert entry.actor == "curator"  # Hermes's word, in its ledger file
    # every list of the ledger says who in the Timeline's word too, and why they differ
    assert (entry.journal_actor, entry.shown_actor) == ("review", "review (ledger: curator)")
    assert "journal_actor" not in (home.root / "skills" / ".curator_ledger.jsonl").read_text()
    listed = subprocess.run(
        workbench_cmd("curator", "ledger", "--home", str(home.root)), capture_output=True, text=True, timeout=60
    )
    assert "create  x  by review (ledger: curator)" in listed.stdout


def test_the_ledger_gives_no_folder_for_a_skill_it_lists_in_one(home):
    """A create in ops/ then a support file's write listed `deploy (ops/deploy)`, as if two folders
    held a `deploy`: the write's entry names no SKILL.md, and its missing folder counted as another."""
    md = skill_md("deploy")
    skill_manage_tool(home, {"action": "create", "name": "deploy", "content": md, "category": "ops"}, ctx())
    write = {"action": "write_file", "name": "deploy", "file_path": "references/notes.md", "file_content": "notes"}
    skill_manage_tool(home, write, ctx())
    listed = subprocess.run(
        workbench_cmd("curator", "ledger", "--home", str(home.root)), capture_output=True, text=True, timeout=60
    )
    lines = listed.stdout.splitlines()
    assert [line.split()[3:5] for line in lines] == [["write_file", "deploy"], ["create", "deploy"]]
    assert "ops/deploy" not in listed.stdout


def test_replace_all_and_unique_patch(home):
    write_skill(home, "x", body="qq qq qq\n")
    result = skill_manage_tool(
        home, {"action": "patch", "name": "x", "old_string": "qq ", "new_string": "b ", "replace_all": True}, ctx()
    )
    assert result["message"] == "Patched SKILL.md in skill 'x' (2 replacements)."
    assert (home.skills_dir / "x" / "SKILL.md").read_text().endswith("b b qq\n")


def test_skill_view_and_list_tools(home):
    write_skill(home, "x", files={"references/r.md": "ref"})
    c = ctx()
    assert skills_list_tool(home, {}, c)["count"] == 1
    assert skill_view_tool(home, {"name": "x"}, c)["linked_files"] == {"references": ["references/r.md"]}
    assert skill_view_tool(home, {"name": "x", "file_path": "references/r.md"}, c)["content"] == "ref"
    assert c.turn_state["skills_read"] == {("x", "SKILL.md"), ("x", "references/r.md")}
    assert skill_view_tool(home, {"name": "missing"}, c)["success"] is False


def test_background_review_guards(home):
    write_skill(home, "users-own")
    review = ctx(origin=BACKGROUND_REVIEW, actor="review")
    result = skill_manage_tool(
        home, {"action": "patch", "name": "users-own", "old_string": "Do it.", "new_string": "x"}, review
    )
    assert "not curator-managed" in result["error"]
    skill_manage_tool(home, {"action": "create", "name": "mine", "content": skill_md("mine")}, review)
    before = tree_state(home.skills_dir)
    unread = skill_manage_tool(
        home, {"action": "patch", "name": "mine", "old_string": "Do it.", "new_string": "x"}, review
    )
    assert unread["_read_before_write_required"] is True
    assert tree_state(home.skills_dir) == before
    skill_view_tool(home, {"name": "mine"}, review)
    assert skill_manage_tool(
        home, {"action": "patch", "name": "mine", "old_string": "Do it.", "new_string": "x"}, review
    )["success"]
    home.curator.pin("mine")
    assert (
        "pinned"
        in skill_manage_tool(home, {"action": "edit", "name": "mine", "content": skill_md("mine")}, review)["error"]
    )


def test_background_delete_archives_instead(home):
    review = ctx(origin=BACKGROUND_REVIEW, actor="review")
    skill_manage_tool(home, {"action": "create", "name": "old", "content": skill_md("old")}, review)
    skill_view_tool(home, {"name": "old"}, review)
    result = skill_manage_tool(home, {"action": "delete", "name": "old"}, review)
    assert result["success"] and "archived" in result["message"]
    assert (home.skills_dir / ".archive" / "old" / "SKILL.md").exists()


def _approval_on(home):
    (home.config_path).write_text("skills:\n  write_approval: true\n")
    home.reload_config()


def test_write_approval_stages_instead_of_writing(home):
    _approval_on(home)
    before = tree_state(home.skills_dir)
    result = skill_manage_tool(home, {"action": "create", "name": "x", "content": skill_md("x")}, ctx())
    assert result["success"] and result["staged"] and result["pending_id"]
    assert result["gist"].startswith("create 'x' — Does a useful thing (")
    assert tree_state(home.skills_dir) == before
    [record] = home.approvals.list("skills")
    assert record.payload == {"action": "create", "name": "x", "content": skill_md("x")}
    invalid = skill_manage_tool(home, {"action": "create", "name": "Bad", "content": skill_md("x")}, ctx())
    assert invalid["success"] is False and len(home.approvals.list("skills")) == 1


def test_preview_and_apply_staged(home):
    write_skill(home, "x")
    payload = {"action": "patch", "name": "x", "old_string": "Do it.", "new_string": "Do it twice."}
    preview = home.skills.preview_staged(payload)
    assert preview["error"] is None and preview["file"] == "SKILL.md"
    assert preview["after"] == preview["before"].replace("Do it.", "Do it twice.")
    edited = home.skills.preview_staged(payload, edited_content="Edited.")
    assert edited["after"].endswith("Edited.\n")
    result = home.skills.apply_staged(payload, actor="user", edited_content="Edited.", pending_id="abcd1234")
    assert result["success"]
    row = home.journal.query(subsystem="skills")[0]
    assert (row.actor, row.detail["pending_id"]) == ("user", "abcd1234")
    before = tree_state(home.skills_dir)
    stale = home.skills.apply_staged(payload)
    assert stale["success"] is False and "Could not find old_string" in stale["error"]
    assert home.skills.preview_staged(payload)["error"].startswith("Could not find old_string")
    assert tree_state(home.skills_dir) == before


def test_staged_create_approved_through_the_queue(home):
    _approval_on(home)
    staged = skill_manage_tool(home, {"action": "create", "name": "x", "content": skill_md("x")}, ctx())
    outcome = home.approvals.approve(staged["pending_id"])
    assert outcome["success"], outcome
    assert home.skills.get("x").state == "active"
    assert home.approvals.list("skills") == []


def test_preview_works_on_a_read_only_home_and_apply_refuses(tmp_path, clock):
    writable = open_home(tmp_path / "h", clock=clock)
    write_skill(writable, "x")
    writable.close()
    home = open_home(tmp_path / "h", read_only=True, clock=clock)
    payload = {"action": "edit", "name": "x", "content": skill_md("x", body="new\n")}
    assert home.skills.preview_staged(payload)["after"].endswith("new\n")
    result = home.skills.apply_staged(payload)
    assert result["success"] is False and "read-only" in result["error"]


def test_usage_follows_the_frontmatter_name(home):
    skill_manage_tool(home, {"action": "create", "name": "folder-name", "content": skill_md("listed-name")}, ctx())
    [info] = home.skills.list()
    assert (info.name, info.path, info.created_at) == ("listed-name", "folder-name", "2026-11-30T12:00:00+00:00")
    assert home.journal.query(subsystem="skills")[0].target == "listed-name"


def test_a_file_changed_after_planning_is_never_overwritten(home):
    write_skill(home, "x")
    plan = home.skills.plan({"action": "patch", "name": "x", "old_string": "Do it.", "new_string": "Mine."})
    (home.skills_dir / "x" / "SKILL.md").write_text(skill_md("x", body="Theirs.\n"))
    before = tree_state(home.skills_dir)
    with pytest.raises(Exception, match="changed while this write was being prepared"):
        home.skills.execute(plan)
    assert tree_state(home.skills_dir) == before
    assert home.journal.query(subsystem="skills", include_pending=True)[0].status == "abandoned"


@pytest.mark.parametrize(
    "args",
    [
        {"action": "patch", "name": "brew", "old_string": "Do it.", "new_string": "Do it well."},
        {"action": "edit", "name": "brew", "content": skill_md("brew", body="New.\n")},
        {"action": "write_file", "name": "brew", "file_path": "references/a.md", "file_content": "x"},
        {"action": "delete", "name": "brew"},
    ],
)
def test_a_write_to_an_archived_skill_says_it_is_archived_and_how_to_restore_it(home, args):
    """Approving a staged patch of a skill archived since said "Skill 'brew' not found."."""
    write_skill(home, "brew", category="kitchen", body="# Steps\nDo it.\n")
    _approval_on(home)
    staged = skill_manage_tool(home, args, ctx())
    assert staged["staged"], staged
    home.curator.archive("brew")
    before = tree_state(home.skills_dir)
    said = skill_manage_tool(home, args, ctx())  # (the agent's own write, refused before any staging)
    assert not said["success"] and said["archived"] == ".archive/brew" and said["absorbed_into"] is None
    assert said["error"] == (
        f"Skill 'brew' is archived in skills/.archive/brew: this {args['action']} cannot change it, and nothing "
        "was changed. Restore it first (`workbench skills restore brew`, or r in Skills), then try again."
    )
    [record] = home.approvals.list("skills")
    assert home.skills.preview_staged(record.payload)["error"] == said["error"]
    approved = subprocess.run(
        workbench_cmd("pending", "approve", record.id, "--home", str(home.root)), capture_output=True, text=True
    )
    assert approved.returncode == 1 and said["error"] in approved.stdout + approved.stderr
    assert tree_state(home.skills_dir) == before and home.approvals.count() == 1  # it stays pending
    restored = subprocess.run(
        workbench_cmd("skills", "restore", "brew", "--home", str(home.root)), capture_output=True, text=True
    )
    assert restored.returncode == 0, restored.stderr
    assert home.approvals.approve(record.id)["success"]  # then it goes through


def test_a_write_to_a_name_nothing_ever_had_is_still_not_found(home):
    said = skill_manage_tool(home, {"action": "patch", "name": "nope", "old_string": "a", "new_string": "b"}, ctx())
    assert said["error"] == "Skill 'nope' not found." and "archived" not in said
