"""A ``skills/.usage.json`` that does not parse: said everywhere it matters, never acted on, never replaced.

It was read as empty without a word: a pinned, agent-made, 42-use skill listed as the user's,
unused and unpinned, a Curator pass checked no skill, and the next pin replaced the file.
"""

from __future__ import annotations

import json

import pytest

from engine.skills.manage import skill_manage_tool
from engine.skills.usage import UsageUnreadable
from tests.test_curator_cli import wb
from tests.test_skills_support import ctx, skill_md, write_skill
from tests.tui_support import make_app, settle, wait_for
from workbench.screens.skills import SkillsScreen

BROKEN = '{"deploy": {"created_by": "agent", "use_count": 42, "pinned": true},}\n'  # one trailing comma
WHERE = "skills/.usage.json is not valid JSON"


@pytest.fixture
def broken(home):
    write_skill(home, "deploy", category="ops")
    write_skill(home, "other")
    path = home.skills_dir / ".usage.json"
    path.write_text(BROKEN)
    return path


def test_the_problem_names_the_file_and_where_it_breaks(home, broken):
    assert (
        home.skills.usage.problem() == f"{WHERE}: Expecting property name enclosed in double quotes at line 1 column 69"
    )
    assert home.skills.usage.load() == {}  # read as empty, as Hermes's load_usage reads it
    broken.write_text("[1, 2]")
    assert home.skills.usage.problem() == "skills/.usage.json holds a JSON list, not an object of skills"
    broken.write_bytes(b'{"a": "\xff"}')
    assert home.skills.usage.problem() == "skills/.usage.json is not UTF-8 (byte 7)"
    broken.write_text("{}")
    assert home.skills.usage.problem() is None and home.skills.usage_warning() is None


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"a": "x\x01"}', "Invalid control character at line 1 column 9"),  # (json's own message ends in "at")
        ('{"a": "x', "Unterminated string starting at line 1 column 7"),
        ('{"a" 1}', "Expecting ':' delimiter at line 1 column 6"),
        ('{"a": 1}\n{}', "Extra data at line 2 column 1"),
    ],
)
def test_every_json_error_reads_once_where_it_is(home, broken, text, said):
    broken.write_text(text)
    assert home.skills.usage.problem() == f"{WHERE}: {said}"
    assert " at at " not in home.skills.usage.problem()


def test_no_write_replaces_it_and_each_says_why(home, broken):
    for change in (lambda: home.curator.pin("other"), lambda: home.curator.archive("other")):
        with pytest.raises(UsageUnreadable, match=f"{WHERE}.*would lose every skill's pin.*Nothing was changed"):
            change()
    created = skill_manage_tool(home, {"action": "create", "name": "new-one", "content": skill_md("new-one")}, ctx())
    assert not created["success"] and WHERE in created["error"]
    assert not (home.skills_dir / "new-one").exists() and (home.skills_dir / "other" / "SKILL.md").exists()
    home.skills.record_use("deploy")  # telemetry is skipped, the use itself goes ahead
    home.skills.view("deploy")
    assert broken.read_text() == BROKEN
    assert not list(home.skills_dir.glob(".usage.json.corrupt.*"))
    assert not [row for row in home.journal.pending("skills")]


def test_the_curator_does_not_judge_a_library_it_cannot_read(home, broken):
    home.config_path.write_text("curator:\n  manage_all: true\n")  # pins alone keep skills then
    home.reload_config()
    for dry in (True, False):
        with pytest.raises(UsageUnreadable, match=f"{WHERE}.*The Curator did not run"):
            home.curator.run(dry_run=dry, now=home.clock.now() + 400 * 86400)
    with pytest.raises(UsageUnreadable, match="The Curator did not run"):
        home.curator.consolidation.propose()
    assert broken.read_text() == BROKEN and [s.state for s in home.skills.list()] == ["active", "active"]


def test_the_cli_warns_and_doctor_names_the_file_and_its_backup(home, broken):
    backup = home.skills_dir / ".usage.json.corrupt.1700000000"
    backup.write_text('{"deploy": {"pinned": true}}')
    root = home.root
    home.close()
    status, listed = wb(root, "skills", "list", "--all")
    assert status == 0 and listed["usage_problem"].startswith(WHERE)
    status, shown = wb(root, "curator", "status")
    assert status == 0 and shown["usage_problem"].startswith(WHERE)
    status, run = wb(root, "curator", "run", "--dry-run")
    assert status == 1 and WHERE in run["error"] and "did not run" in run["error"]
    status, pinned = wb(root, "skills", "pin", "other")
    assert status == 1 and WHERE in pinned["error"]
    status, doctor = wb(root, "doctor")
    found = [f["what"] for f in doctor["findings"] if f["area"] == "skills"]
    assert status == 1 and any(f.startswith(WHERE) for f in found), found
    assert any(f.startswith("skills/.usage.json.corrupt.1700000000 is a copy") for f in found), found
    assert broken.read_text() == BROKEN


def test_the_text_listing_ends_with_the_warning(home, broken, capsys):
    from workbench.cli import main

    root = home.root
    home.close()
    assert main(["skills", "list", "--home", str(root)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith(f"⚠ {WHERE}")


def test_no_scheduled_pass_runs_on_it(home, broken):
    """It waits (the TUI's tick would otherwise end in an error no one sees) until the file is fixed."""
    state = home.skills_dir / ".curator_state"
    state.write_text(json.dumps({"last_run_at": "2025-01-01T00:00:00+00:00"}))
    assert home.curator.due().due
    assert home.curator.maybe_run() is None and broken.read_text() == BROKEN
    assert json.loads(state.read_text()) == {"last_run_at": "2025-01-01T00:00:00+00:00"}


@pytest.mark.anyio
async def test_the_skills_screen_says_it_until_it_is_fixed(home, broken, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("3")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SkillsScreen)
        banner = screen.query_one("#skills-usage-problem")
        await wait_for(pilot, lambda: banner.display, what="the warning")
        assert str(banner.render()).startswith(f"⚠ {WHERE}")
        broken.write_text(json.dumps({"deploy": {"created_by": "agent", "use_count": 42, "pinned": True}}))
        screen.load_skills()
        await wait_for(pilot, lambda: not banner.display, what="the warning gone")


def test_hermes_reads_it_as_empty_too(home, broken, hermes):
    """What we show while it is broken is what Hermes sees: no record, so no agent-made skill."""
    seen = hermes.json(
        home.root,
        "import json; from tools import skill_usage as u\n"
        "print(json.dumps([u.load_usage(), u.list_agent_created_skill_names()]))",
    )
    assert seen == [{}, []]
