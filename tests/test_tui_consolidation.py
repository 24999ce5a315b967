"""A consolidation plan in the Approvals screen (multi-file diff, approve) and on the Timeline."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from engine.skills.manage import skill_manage_tool
from engine.tools import ToolContext
from tests.screens_seed import open_mode
from tests.test_curator_consolidate import MERGE, REBASE, agent_skill
from tests.tui_support import footer_keys, make_app, settle, wait_for
from widgets.timeline_list import TimelineList
from workbench.cli.pending_cmds import render_preview
from workbench.screens.approvals import ApprovalsScreen
from workbench.screens.timeline import TimelineScreen

pytestmark = pytest.mark.anyio


async def test_a_plan_shows_as_a_multi_file_diff_approves_and_is_one_group_on_the_timeline(home, tmp_path):
    agent_skill(home, "git-rebase", description="Rebase a git branch onto main safely", body=REBASE)
    agent_skill(
        home,
        "git-merge",
        description="Merge a git branch into main safely",
        body=MERGE,
        files={"scripts/check.sh": "echo ok\n"},
    )
    staged = home.curator.consolidation.propose()
    async with make_app(home, tmp_path).run_test(size=(160, 40)) as pilot:  # (the group's title whole)
        await open_mode(pilot, "4", ApprovalsScreen)
        diff = str(pilot.app.screen.query_one("#proposal-diff", Static).content)
        for header in (
            "=== create git/SKILL.md",
            "=== copy git/scripts/check.sh (from git-merge/scripts/check.sh)",
            "=== archive git-merge/SKILL.md",
            "=== archive git-rebase/SKILL.md",
        ):
            assert header in diff
        assert "+ absorbed:" in diff and "- name: git-rebase" in diff
        # e Edit showed on the plan, and said "A consolidation plan cannot be edited": dimmed, it does nothing
        assert await footer_keys(pilot, "a", "r", "e") == {"a": True, "r": True, "e": False}
        await pilot.press("e")
        await settle(pilot)
        assert pilot.app.screen.query_one("#status").display is False
        await pilot.press("a", "y")  # approvals ask first
        await settle(pilot)
        await wait_for(pilot, lambda: (home.skills_dir / "git").exists(), what="the plan applied")
        assert (home.skills_dir / "git" / "scripts" / "check.sh").read_text() == "echo ok\n"
        # it told a person in the app to run `workbench curator rollback`: the app's way back is a key
        (entry,) = home.skills.ledger.entries()
        said = str(pilot.app.screen.query_one("#status", Static).content)
        assert said == (
            f"Consolidated git-merge, git-rebase into 'git' (ledger {entry.id}; on Skills, l opens the ledger, "
            "where enter on it rolls it back)."
        )
        screen = await open_mode(pilot, "6", TimelineScreen)
        table = screen.query_one(TimelineList)
        what = [str(table.get_row_at(i)[3]) for i in range(table.row_count)]
        assert what[0] == "▾ consolidation (3 rows): 1 proposal approved, 1 proposal staged, 1 skill consolidated"
        assert what[1:4] == [
            "  consolidated git-merge, git-rebase into skill 'git'",
            f"  approved skills proposal {staged['pending_id']}: consolidate git-merge, git-rebase into 'git'",
            f"  staged skills proposal {staged['pending_id']}: consolidate git-merge, git-rebase into 'git'",
        ]


async def test_the_app_runs_a_due_pass_when_idle_never_during_a_turn_and_shows_it(home, tmp_path, clock):
    import json

    from widgets.header import WorkbenchHeader

    agent_skill(home, "old-notes", description="Old notes")
    home.skills.usage.set_fields("old-notes", last_used_at="2026-01-01T00:00:00+00:00")
    (home.skills_dir / ".curator_state").write_text(json.dumps({"last_run_at": "2026-11-01T00:00:00+00:00"}))
    clock.advance(3 * 3600)  # idle for three hours
    async with make_app(home, tmp_path).run_test(size=(140, 30)) as pilot:
        await settle(pilot)
        pilot.app._turn_running = True
        pilot.app.curator_tick()
        await settle(pilot)
        assert (home.skills_dir / "old-notes").exists() and pilot.app.curator_note == ""
        pilot.app._turn_running = False
        pilot.app.curator_tick()
        await settle(pilot)
        assert not (home.skills_dir / "old-notes").exists()
        header = pilot.app.screen.query_one(WorkbenchHeader)
        assert "curator 15:00: 1 archived" in header.render().plain


async def test_a_write_to_an_absorbed_name_says_in_approvals_which_skill_it_changes(home, tmp_path):
    agent_skill(home, "git-rebase", description="Rebase a git branch onto main safely", body=REBASE)
    agent_skill(home, "git-merge", description="Merge a git branch into main safely", body=MERGE)
    home.approvals.approve(home.curator.consolidation.propose()["pending_id"])
    (home.root / "config.yaml").write_text("skills:\n  write_approval: true\n")
    home.reload_config()
    staged = skill_manage_tool(
        home,
        {"action": "patch", "name": "git-rebase", "old_string": "--continue.", "new_string": "--continue --quiet."},
        ToolContext(),
    )
    assert staged["staged"], staged
    async with make_app(home, tmp_path).run_test(size=(100, 30)) as pilot:
        await open_mode(pilot, "4", ApprovalsScreen)
        warnings = pilot.app.screen.query_one("#proposal-warnings", Static)
        await wait_for(pilot, lambda: "Goes to another skill" in str(warnings.content), what="the note")
        assert "'git-rebase' was consolidated into 'git'" in str(warnings.content)
    rendered = render_preview(home.approvals.preview(staged["pending_id"]))
    assert "note: 'git-rebase' was consolidated into 'git' (its `absorbed` list names it), so approving" in rendered
