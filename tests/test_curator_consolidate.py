"""Consolidation plans: offline clustering, verification, approval, absorbed names, cron, rollback."""

from __future__ import annotations

import json
import subprocess

import pytest

from engine import open_home
from engine.clock import FixedClock
from engine.skills.manage import skill_manage_tool, skill_view_tool
from engine.skills.validation import SkillError
from engine.timeline import Timeline
from engine.tools import ToolContext
from tests.hermes_support import workbench_cmd
from tests.test_skills_support import tree_state, write_skill

T0 = 1_780_000_000.0

REBASE = (
    "# Rebase\nRun git fetch, then git rebase origin/main.\n\n## Conflicts\nResolve, git add, git rebase --continue.\n"
)
MERGE = "# Merge\nRun git fetch, then git merge origin/main.\n\n## Conflicts\nResolve, git add, git commit.\n"

UMBRELLA = """---
name: git
description: 'Umbrella for git-merge, git-rebase: Merge a git branch into main safely; Rebase a git branch onto main safely'
absorbed:
- git-merge
- git-rebase
---

# git

Consolidated by the Curator from 2 overlapping skills, now archived. Each part below is one of them, unchanged, under its old name: load this skill, git, wherever one of them is called for.

## git-merge

Merge a git branch into main safely

# Merge
Run git fetch, then git merge origin/main.

## Conflicts
Resolve, git add, git commit.

Support files: `references/flags.md`, `scripts/check.sh`

## git-rebase

Rebase a git branch onto main safely

# Rebase
Run git fetch, then git rebase origin/main.

## Conflicts
Resolve, git add, git rebase --continue.

Support files: `references/git-rebase-flags.md`
"""


def agent_skill(home, name, **kw):
    write_skill(home, name, **kw)
    home.skills.usage.set_fields(name, created_by="agent")


@pytest.fixture
def library(tmp_path):
    """Two overlapping agent-made git skills, an unrelated one, a user-owned and a pinned look-alike."""
    home = open_home(tmp_path / "h", clock=FixedClock(T0))
    agent_skill(
        home,
        "git-rebase",
        description="Rebase a git branch onto main safely",
        body=REBASE,
        files={"references/flags.md": "# Flags\n--onto\n"},
    )
    agent_skill(
        home,
        "git-merge",
        description="Merge a git branch into main safely",
        body=MERGE,
        files={"references/flags.md": "# Flags\n--no-ff\n", "scripts/check.sh": "echo ok\n"},
    )
    agent_skill(home, "pdf-extract", description="Extract tables from PDF files", body="# Extract\nUse pdfplumber.\n")
    write_skill(home, "git-merging", description="Merge a git branch into main safely", body=MERGE)  # user-owned
    agent_skill(home, "git-merge-pinned", description="Merge a git branch into main safely", body=MERGE)
    home.skills.usage.set_fields("git-merge-pinned", pinned=True)
    yield home
    home.close()


def staged_plan(home):
    result = home.curator.consolidation.propose()
    assert result["success"] and result["staged"], result
    return result["pending_id"]


def test_the_umbrella_description_joins_sentences_without_doubling_their_stops(tmp_path):
    """Hermes's skills end their descriptions with a full stop: they were joined as "…with git.; Merge …"."""
    home = open_home(tmp_path / "h", clock=FixedClock(T0))
    agent_skill(home, "git-merge-main", description="Merge main into a feature branch with git.", body=MERGE)
    agent_skill(home, "git-merge-release", description="Merge a release branch into main with git.", body=MERGE)
    plan = home.approvals.get(staged_plan(home)).payload["plan"]
    assert (
        "description: 'Umbrella for git-merge-main, git-merge-release: Merge main into a feature branch with git; "
        "Merge a release branch into main with git'" in plan["umbrella"]["skill_md"]
    )
    home.close()


def test_offline_plan_merges_only_overlapping_managed_skills_with_exact_umbrella(library):
    pending_id = staged_plan(library)
    record = library.approvals.get(pending_id)
    assert (record.subsystem, record.action, record.origin, record.actor) == (
        "skills",
        "consolidate",
        "curator",
        "curator",
    )
    plan = record.payload["plan"]
    assert [a["name"] for a in plan["absorbed"]] == ["git-merge", "git-rebase"]  # never the user-owned or pinned ones
    assert plan["umbrella"]["skill_md"] == UMBRELLA
    assert plan["moves"] == [
        {
            "skill": "git-merge",
            "from": "references/flags.md",
            "to": "references/flags.md",
            "sha256": plan["absorbed"][0]["files"]["references/flags.md"],
        },
        {
            "skill": "git-merge",
            "from": "scripts/check.sh",
            "to": "scripts/check.sh",
            "sha256": plan["absorbed"][0]["files"]["scripts/check.sh"],
        },
        {
            "skill": "git-rebase",
            "from": "references/flags.md",
            "to": "references/git-rebase-flags.md",
            "sha256": plan["absorbed"][1]["files"]["references/flags.md"],
        },
    ]
    assert library.curator.consolidation.verify(plan) == []
    assert library.curator.consolidation.propose()["pending_id"] == pending_id  # one pending plan at a time


def test_plan_dropping_a_support_file_or_section_fails_verification(library):
    consolidation = library.curator.consolidation
    plan = library.approvals.get(staged_plan(library)).payload["plan"]
    no_script = {**plan, "moves": [m for m in plan["moves"] if m["from"] != "scripts/check.sh"]}
    assert consolidation.verify(no_script) == [
        "support file git-merge/scripts/check.sh is not carried into the umbrella"
    ]
    cut = plan["umbrella"]["skill_md"].replace("Resolve, git add, git commit.\n", "")
    no_section = {**plan, "umbrella": {**plan["umbrella"], "skill_md": cut}}
    assert consolidation.verify(no_section) == [
        "section '## Conflicts' of 'git-merge' is neither in the umbrella nor dropped with a reason"
    ]
    dropped = {**no_section, "dropped": [{"skill": "git-merge", "section": "## Conflicts", "reason": "duplicate"}]}
    assert consolidation.verify(dropped) == []
    outside = {**plan, "umbrella": {**plan["umbrella"], "path": "../escape"}}
    assert "outside the skill tree" in " ".join(consolidation.verify(outside))
    clash = {**plan, "umbrella": {**plan["umbrella"], "name": "pdf-extract", "path": "pdf-extract"}}
    assert any("collides" in p for p in consolidation.verify(clash))


def test_approve_applies_exactly_the_previewed_plan(library):
    pending_id = staged_plan(library)
    preview = library.approvals.preview(pending_id)
    assert preview["error"] is None and preview["absorbed"] == ["git-merge", "git-rebase"]
    assert [(f["path"], f["kind"]) for f in preview["files"]] == [
        ("git/SKILL.md", "create"),
        ("git/references/flags.md", "copy"),
        ("git/scripts/check.sh", "copy"),
        ("git/references/git-rebase-flags.md", "copy"),
        ("git-merge/SKILL.md", "archive"),
        ("git-rebase/SKILL.md", "archive"),
    ]
    created = {f["path"]: f["after"] for f in preview["files"] if f["kind"] != "archive"}
    result = library.approvals.approve(pending_id)
    assert result["success"], result
    for rel, text in created.items():
        assert (library.skills_dir / rel).read_text(encoding="utf-8") == text
    assert sorted(
        p.relative_to(library.skills_dir / "git").as_posix()
        for p in (library.skills_dir / "git").rglob("*")
        if p.is_file()
    ) == sorted(rel.removeprefix("git/") for rel in created)
    assert [f.dir_name for f in library.skills.scanner.archived()] == ["git-merge", "git-rebase"]
    records = library.skills.usage.load()
    assert records["git"]["created_by"] == "agent"
    assert (records["git-merge"]["state"], records["git-merge"]["absorbed_into"]) == ("archived", "git")
    assert library.approvals.list() == []


def test_a_consolidation_names_the_command_that_rolls_it_back(library):
    """It said `workbench curator rollback` undoes it, a command that needs the ledger id the line gave
    apart; it names the id now, and it works (the app's words, ``in_app``, are test_tui_consolidation's)."""
    (library.root / "config.yaml").write_text("curator:\n  consolidate_without_approval: true\n")
    shown = subprocess.run(
        workbench_cmd("curator", "consolidate", "--home", str(library.root)), capture_output=True, text=True
    )
    (entry,) = library.skills.ledger.entries()
    done = f"Consolidated git-merge, git-rebase into 'git' (ledger {entry.id}; "
    assert shown.returncode == 0 and shown.stdout == f"{done}`workbench curator rollback {entry.id}` undoes it).\n", (
        shown.stdout + shown.stderr
    )
    assert library.curator.rollback(entry.id)["success"] and not (library.skills_dir / "git").exists()


def test_a_skill_changed_after_planning_makes_approval_refuse(library):
    pending_id = staged_plan(library)
    before = tree_state(library.skills_dir)
    (library.skills_dir / "git-rebase" / "references" / "flags.md").write_text("# Flags\n--autostash\n")
    changed = tree_state(library.skills_dir)
    # the Approvals pane says why before it is tried, and what to do (its advice had gone with the approval's)
    assert library.approvals.preview(pending_id)["error"] == (
        "'git-rebase' changed since the plan was made. Reject it and let the Curator plan again."
    )
    result = library.approvals.approve(pending_id)
    # (both skins put "Not applied, still pending: " first, and it said "not applied" and what to do twice after
    # it: "The consolidation was not applied: 'git-rebase' changed since the plan was made; make a new plan. The
    # plan stays pending; reject it and let the Curator plan again.")
    assert not result["success"] and result["error"] == (
        "The plan no longer holds: 'git-rebase' changed since the plan was made. Reject it and let the Curator plan "
        "again."
    )
    assert tree_state(library.skills_dir) == changed != before
    assert [r.id for r in library.approvals.list()] == [pending_id]  # still pending


def test_absorbed_names_resolve_to_the_umbrella_and_the_index_lists_it_once(library):
    library.approvals.approve(staged_plan(library))
    ctx = ToolContext()
    viewed = skill_view_tool(library, {"name": "git-rebase"}, ctx)
    assert viewed["success"] and viewed["name"] == "git" and viewed["content"] == UMBRELLA
    patched = skill_manage_tool(
        library,
        {"action": "patch", "name": "git-merge", "old_string": "git commit.", "new_string": "git commit --no-edit."},
        ctx,
    )
    assert patched["success"], patched
    assert "git commit --no-edit." in (library.skills_dir / "git" / "SKILL.md").read_text()
    index = library.skills.index_text()
    deleted = skill_manage_tool(library, {"action": "delete", "name": "git-rebase"}, ctx)
    assert not deleted["success"] and (library.skills_dir / "git").is_dir()  # never deleted by an old name
    with pytest.raises(SkillError):
        library.curator.archive("git-merge")  # nor archived: the Curator and the CLI name skills exactly
    listed = [line.strip().split(":")[0] for line in index.splitlines() if line.startswith("    - ")]
    assert listed == ["- git", "- git-merge-pinned", "- git-merging", "- pdf-extract"]


def content(home):
    """The skills tree and cron folder, minus the ledger (an audit trail that only grows)."""
    skills = {k: v for k, v in tree_state(home.skills_dir).items() if k != ".curator_ledger.jsonl"}
    return skills, tree_state(home.root / "cron")


def write_cron(home, jobs):
    (home.root / "cron").mkdir(exist_ok=True)
    (home.root / "cron" / "jobs.json").write_text(json.dumps({"jobs": jobs, "updated_at": "x"}, indent=2) + "\n")


def test_cron_jobs_naming_an_absorbed_skill_are_rewritten_and_rollback_is_byte_identical(library):
    write_cron(
        library,
        [
            {
                "id": "a1",
                "name": "nightly",
                "skill": "git-rebase",
                "skills": ["git-rebase", "git-merge", "pdf-extract"],
            },
            {"id": "b2", "name": "other", "skill": "pdf-extract", "skills": ["pdf-extract"]},
        ],
    )
    pending_id = staged_plan(library)
    (library.root / "cron" / ".jobs.lock").touch()  # Hermes's lock file: not content
    before = content(library)
    usage_before = (library.skills_dir / ".usage.json").read_bytes()
    assert library.approvals.preview(pending_id)["cron"] == [
        {
            "job_id": "a1",
            "job_name": "nightly",
            "before": ["git-rebase", "git-merge", "pdf-extract"],
            "after": ["git", "pdf-extract"],
        }
    ]
    applied = library.approvals.approve(pending_id)["result"]
    jobs = json.loads((library.root / "cron" / "jobs.json").read_text())["jobs"]
    assert [(j["skill"], j["skills"]) for j in jobs] == [
        ("git", ["git", "pdf-extract"]),
        ("pdf-extract", ["pdf-extract"]),
    ]
    entry = library.skills.ledger.get(applied["ledger_id"])
    assert "cron/jobs.json" in {f.path for f in entry.before}
    assert {f.path for f in entry.before} >= {
        "skills/git-merge/SKILL.md",
        "skills/git-merge/scripts/check.sh",
        "skills/git-rebase/references/flags.md",
    }
    after = content(library)
    rolled = library.curator.rollback(applied["ledger_id"])
    assert rolled["success"]
    assert content(library) == before
    assert (library.skills_dir / ".usage.json").read_bytes() == usage_before
    again = library.curator.rollback(rolled["ledger_id"])  # a rollback of the rollback re-applies it
    assert again["success"]
    assert content(library) == after
    assert library.skills.usage.load()["git-merge"]["absorbed_into"] == "git"


def test_consolidate_without_approval_applies_verified_plans(tmp_path, library):
    (library.root / "config.yaml").write_text("curator:\n  consolidate_without_approval: true\n")
    library.reload_config()
    result = library.curator.consolidation.propose()
    assert result["success"] and not result["staged"] and result["name"] == "git"
    assert library.approvals.list() == [] and (library.skills_dir / "git" / "SKILL.md").read_text() == UMBRELLA


def test_hermes_lists_a_plan_record_and_refuses_to_apply_it(library, hermes):
    pending_id = staged_plan(library)
    before = tree_state(library.root / "pending"), tree_state(library.skills_dir)
    seen = hermes.json(
        library.root,
        f"""
import json
from hermes_cli.write_approval_commands import handle_pending_subcommand
listing = handle_pending_subcommand("skills", ["pending"])
approve = handle_pending_subcommand("skills", ["approve", "{pending_id}"])
print(json.dumps({{"listing": listing, "approve": approve}}))
""",
    )
    assert pending_id in seen["listing"] and "consolidate git-merge, git-rebase into 'git'" in seen["listing"]
    assert "Approved 0 skills write(s)." in seen["approve"] and f"{pending_id}:" in seen["approve"]
    assert (tree_state(library.root / "pending"), tree_state(library.skills_dir)) == before
    assert library.approvals.approve(pending_id)["success"]  # ours still applies it


def test_openai_backend_plans_through_a_forced_tool_and_the_plan_is_verified(library):
    from tests.test_models_openai import FakeEndpoint

    endpoint = FakeEndpoint()
    try:
        (library.root / "config.yaml").write_text(
            f"model:\n  backend: openai\n  name: m\n  base_url: {endpoint.base_url}\n  max_retries: 0\n"
        )
        library.reload_config()
        body = "# git\n\n" + MERGE + "\n" + REBASE
        endpoint.answer(
            tool_calls=[
                (
                    "c1",
                    "propose_consolidation",
                    {
                        "absorbed": ["git-merge", "git-rebase"],
                        "umbrella_name": "git-sync",
                        "description": "Sync branches",
                        "body": body,
                        "reason": "same task",
                        "moves": [
                            {"skill": "git-merge", "from": "references/flags.md", "to": "references/merge-flags.md"},
                            {"skill": "git-rebase", "from": "references/flags.md", "to": "references/rebase-flags.md"},
                        ],
                        "dropped": [],
                    },
                )
            ]
        )
        result = library.curator.consolidation.propose()
        request = endpoint.requests[0]["body"]
        assert request["tool_choice"] == {"type": "function", "function": {"name": "propose_consolidation"}}
        assert not result["success"]  # the model forgot scripts/check.sh: reported, never staged
        assert result["problems"] == ["support file git-merge/scripts/check.sh is not carried into the umbrella"]
        assert library.approvals.list() == []
        endpoint.answer(
            tool_calls=[
                (
                    "c2",
                    "propose_consolidation",
                    {
                        "absorbed": ["git-merge", "git-rebase"],
                        "umbrella_name": "git-sync",
                        "description": "Sync branches",
                        "body": body,
                        "reason": "same task",
                        "dropped": [],
                        "moves": [
                            {"skill": "git-merge", "from": "references/flags.md", "to": "references/merge-flags.md"},
                            {"skill": "git-merge", "from": "scripts/check.sh", "to": "scripts/check.sh"},
                            {"skill": "git-rebase", "from": "references/flags.md", "to": "references/rebase-flags.md"},
                        ],
                    },
                )
            ]
        )
        staged = library.curator.consolidation.propose()
        assert staged["staged"], staged
        plan = library.approvals.get(staged["pending_id"]).payload["plan"]
        assert plan["source"] == "model:m" and plan["umbrella"]["skill_md"].startswith("---\nname: git-sync\n")
        assert library.approvals.approve(staged["pending_id"])["success"]
        assert (library.skills_dir / "git-sync" / "references" / "rebase-flags.md").read_text() == "# Flags\n--onto\n"
    finally:
        endpoint.close()


def test_a_failure_part_way_leaves_the_tree_as_it_was_and_the_plan_pending(library):
    write_cron(library, [{"id": "a1", "name": "nightly", "skills": ["git-rebase"]}])
    pending_id = staged_plan(library)
    (library.skills_dir / ".archive").write_text("not a folder")  # the archive step will fail
    before = content(library)
    result = library.approvals.approve(pending_id)
    assert not result["success"] and "Could not consolidate" in result["error"]
    assert content(library) == before
    assert [r.id for r in library.approvals.list()] == [pending_id]
    [row] = [r for r in library.journal.query(subsystem="skills", include_pending=True) if r.action == "consolidate"]
    assert row.status == "abandoned"


def test_the_timeline_reverts_a_consolidation_group_and_its_revert(library):
    from engine.timeline import Timeline

    pending_id = staged_plan(library)
    before = content(library)
    library.approvals.approve(pending_id)
    after = content(library)
    timeline = Timeline(library)
    preview = timeline.preview(f"consolidation:{pending_id}")
    assert [c["summary"] for c in preview["changes"]] == ["consolidated git-merge, git-rebase into skill 'git'"]
    assert "restore skills/git-merge/scripts/check.sh" in preview["changes"][0]["undo"]
    assert preview["changes"][0]["undo"].startswith("put its files back as they were (ledger ")  # (not "roll back")
    assert len(preview["skipped"]) == 2  # the staging and the approval are records, not changes
    result = timeline.revert(f"consolidation:{pending_id}")
    assert result["success"] and content(library) == before
    rollback = timeline.page(limit=1)[0]
    assert rollback.summary.startswith("revert of row 3: rolled back consolidate of skill 'git'")
    assert timeline.revert(rollback.id)["success"] and content(library) == after


def test_a_group_revert_says_its_approval_and_staging_rows_change_is_in_it(library):
    """`revert consolidation:ID` reverted the consolidation, then said of its approval and staging rows
    "revert the change it led to", the change it had just reverted."""
    from tests.cli_support import printed, ran

    pending_id = staged_plan(library)
    library.approvals.approve(pending_id)
    home = ("--home", str(library.root))
    status, out, err = ran(*home, "revert", "--dry-run", "2")  # (the approval alone: its change is not in it)
    assert status == 1 and "revert the change it led to" in out + err
    left = [
        "row 2 (approved skills proposal {id}: consolidate git-merge, git-rebase into 'git'): a record of a "
        "decision, not a change: the change it led to (row 3) is in this revert",
        "row 1 (staged skills proposal {id}: consolidate git-merge, git-rebase into 'git'): a proposal "
        "staged, not a change: the change it led to (row 3) is in this revert",
    ]
    preview = printed(*home, "revert", "--dry-run", f"consolidation:{pending_id}").splitlines()
    assert preview[1:3] == [f"would leave {line.format(id=pending_id)}" for line in left]
    done = printed(*home, "revert", f"consolidation:{pending_id}").splitlines()
    assert done[0].startswith("reverted row 3 ") and done[1:3] == [
        f"left {line.format(id=pending_id)}" for line in left
    ]


def test_a_dry_run_says_which_of_the_curators_merges_await_review(library, capsys):
    """It read "no changes" while its own consolidation waited in Approvals, as if it had nothing going."""
    from workbench.cli import main

    assert library.curator.awaiting_review() is None
    staged_plan(library)
    waiting = library.curator.awaiting_review()
    assert waiting.startswith("1 consolidation it proposed awaits review in Approvals: consolidate git-merge")
    assert main(["--home", str(library.root), "curator", "run", "--dry-run"]) == 0
    assert f"  {waiting}" in capsys.readouterr().out


def _left_outside(home, pending_id):
    """The decision journaled for a plan record that left the queue with no decision of ours."""
    home.approvals.catch_up()
    row = home.journal.query(subsystem="approvals", target=pending_id, limit=1)[0]
    return row.action, row.detail["why"]


def test_a_plan_hermes_rejected_reads_rejected_as_it_cannot_approve_one(library, hermes):
    """It read `closed ... skill 'git' is not in the library, so whether it was applied is not known`,
    though Hermes's approve refuses a plan record and both absorbed skills were untouched."""
    pending_id = staged_plan(library)
    said = hermes.json(
        library.root,
        f"""
import json
from hermes_cli.write_approval_commands import handle_pending_subcommand
print(json.dumps([handle_pending_subcommand("skills", [verb, "{pending_id}"]) for verb in ("approve", "reject")]))
""",
    )
    assert "Unknown action 'consolidate'" in said[0] and "Rejected pending skills write" in said[1]
    assert _left_outside(library, pending_id) == (
        "reject",
        "it left the queue outside the workbench without consolidating: skill 'git' is not in the library and "
        "'git-merge', 'git-rebase' are still active and unchanged since it was staged",
    )
    [row] = [r for r in Timeline(library).page(subsystem="approvals") if r.action == "reject"]
    assert row.summary.startswith(f"rejected skills proposal {pending_id} outside the workbench: consolidate ")


def test_a_plan_dropped_by_hand_after_a_change_is_closed_saying_what_the_library_shows(library):
    changed = staged_plan(library)
    skill_md = library.skills_dir / "git-rebase" / "SKILL.md"
    skill_md.write_text(skill_md.read_text() + "\nOne more line.\n")
    (library.pending_dir / "skills" / f"{changed}.json").unlink()
    assert _left_outside(library, changed) == (
        "close",
        "it left the queue outside the workbench; skill 'git' is not in the library, but 'git-rebase' changed or "
        "left since it was staged, so how it was decided is not known",
    )
    skill_md.write_text(skill_md.read_text().removesuffix("\nOne more line.\n"))
    made = staged_plan(library)
    record = library.pending_dir / "skills" / f"{made}.json"
    library.curator.consolidation.apply(library.approvals.get(made).payload)  # made, but by no approval of it
    record.unlink()
    action, why = _left_outside(library, made)
    assert action == "close" and "the library shows it made (skill 'git' holds the text it proposed, " in why
    assert why.endswith("but Hermes cannot apply a consolidation, so how it was made is not known")


def test_a_proposal_named_by_an_absorbed_name_says_which_skill_approving_changes(library):
    """Its label is the name the agent used; approving changes the umbrella, and the preview says so."""
    library.approvals.approve(staged_plan(library))
    (library.root / "config.yaml").write_text("skills:\n  write_approval: true\n")
    library.reload_config()
    staged = skill_manage_tool(
        library,
        {"action": "patch", "name": "git-merge", "old_string": "git commit.", "new_string": "git commit --no-edit."},
        ToolContext(),
    )
    assert staged["staged"], staged
    preview = library.approvals.preview(staged["pending_id"])
    assert preview["summary"].startswith("patch 'git-merge'")
    assert preview["umbrella"] == (
        "'git-merge' was consolidated into 'git' (its `absorbed` list names it), so approving changes 'git'."
    )
    shown = library.approvals.preview(staged_direct(library))  # a write to a skill by its own name: no note
    assert "umbrella" not in shown
    library.approvals.approve(staged["pending_id"])
    assert "git commit --no-edit." in (library.skills_dir / "git" / "SKILL.md").read_text()


def staged_direct(home):
    staged = skill_manage_tool(
        home,
        {"action": "patch", "name": "git", "old_string": "Consolidated by", "new_string": "Merged by"},
        ToolContext(),
    )
    assert staged["staged"], staged
    return staged["pending_id"]


def test_showing_an_absorbed_name_says_it_is_archived_and_where_it_lives_on(library):
    """`skills show git-merge` printed the archived SKILL.md with no sign it was archived or absorbed."""
    from types import SimpleNamespace

    from workbench.cli.skills_cmds import show_skill

    library.approvals.approve(staged_plan(library))
    shown = show_skill(library, SimpleNamespace(name="git-merge", file=None))
    assert (shown.data["archived"], shown.data["absorbed_into"]) == (True, "git")
    assert shown.text.splitlines()[:2] == [
        "# archived: skills/.archive/git-merge; `workbench skills restore git-merge` brings it back",
        "# consolidated into 'git': load that in its place (our agent's skill_view opens it for this old name, "
        "Hermes's does not)",
    ]
    assert "absorbed_into" not in library.skills.view("pdf-extract", record=False)


def test_what_the_umbrella_tells_the_agent_holds_in_hermes_and_here(library, hermes):
    """The umbrella said "its old name still opens this skill": true of our skill_view only. Hermes 0.19.0's
    model reads the same SKILL.md, and its skill_view answers an old name "not found"."""
    library.approvals.approve(staged_plan(library))
    seen = hermes.json(
        library.root,
        """
import json
from tools.skills_tool import skill_view, skills_list
print(json.dumps({
    "old": json.loads(skill_view("git-merge")),
    "umbrella": json.loads(skill_view("git")),
    "listed": [s["name"] for s in json.loads(skills_list())["skills"]],
}))
""",
    )
    assert seen["old"]["success"] is False and "not found" in seen["old"]["error"]  # Hermes: no old names
    said = seen["umbrella"]["content"]
    assert seen["umbrella"]["success"] and "old name still opens" not in said
    assert "2 overlapping skills, now archived" in said and "load this skill, git, wherever one" in said
    assert "git" in seen["listed"] and not {"git-merge", "git-rebase"} & set(seen["listed"])  # archived there too
    assert skill_view_tool(library, {"name": "git"}, ToolContext())["content"] == said


def test_deleting_an_absorbed_skill_says_where_it_went(library):
    """A delete never follows an old name: it said "Skill 'git-rebase' not found."."""
    library.approvals.approve(staged_plan(library))
    said = skill_manage_tool(library, {"action": "delete", "name": "git-rebase"}, ToolContext())
    assert (said["archived"], said["absorbed_into"]) == (".archive/git-rebase", "git")
    assert said["error"] == (
        "Skill 'git-rebase' is archived (consolidated into 'git') in skills/.archive/git-rebase: this delete cannot "
        "change it, and nothing was changed. Restore it first (`workbench skills restore git-rebase`, or r in "
        "Skills), then try again."  # (not "make the change in 'git'": it holds other skills' content too)
    )


def test_a_hermes_patch_staged_before_its_skill_was_absorbed_says_it_was_written_for_the_old_skill(library):
    """A patch Hermes staged for git-merge, which a consolidation then absorbed into git: the preview said
    "Could not find old_string in SKILL.md of skill 'git'", as if the wrong skill were patched."""
    from tests.hermes_support import hermes_record

    payload = {"action": "patch", "name": "git-merge", "old_string": "name: git-merge\n", "new_string": "name: gm\n"}
    hermes_record(library, "c0ffee01", payload, subsystem="skills")
    assert library.approvals.approve(staged_plan(library))["success"]
    entry = library.skills.ledger.entries()[-1]
    ledger_id, when = entry.id, entry.when
    said = (
        f"Skill 'git-merge' was absorbed into 'git' by the Curator's consolidation of {when} (ledger {ledger_id}): "
        "this patch was written for the old skill, and its old_string is not in SKILL.md of 'git'."
    )
    preview = library.approvals.preview("c0ffee01")
    assert preview["error"].startswith(said), preview["error"]
    before = tree_state(library.skills_dir)
    refused = library.approvals.approve("c0ffee01")
    assert not refused["success"] and refused["error"].startswith(said)
    assert tree_state(library.skills_dir) == before
    direct = skill_manage_tool(library, payload, ToolContext())  # the agent's own call by the old name
    assert direct["error"].startswith(said) and direct["absorbed_into"] == "git"
