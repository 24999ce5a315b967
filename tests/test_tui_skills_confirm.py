"""Skills-screen confirmations act on exactly what their question named, captured when asked.

Each test changes the library between the question and the answer, as Hermes or a shell would
(real files, a real `rm`), and checks that `y` neither acts on the row the cursor landed on nor
on anything the question did not list.
"""

from __future__ import annotations

import subprocess

import pytest
from textual.widgets import Input

from tests.screens_seed import open_mode, seed_skills
from tests.test_tui_skills import STALE_TOMATO
from tests.tui_support import make_app, settle, wait_for
from widgets.skill_list import SkillList
from workbench.screens.dialogs import ConfirmDialog
from workbench.screens.skills import DaysDialog, SkillsScreen

pytestmark = pytest.mark.anyio
DAY = 86400


def state_of(home, name: str) -> str | None:
    return next((i.state for i in home.skills.list(include_archived=True) if i.name == name), None)


def notes(app) -> str:
    return "\n".join(n.message for n in app._notifications)


def hand_made(home, name: str) -> None:
    folder = home.skills_dir / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: made by hand\n---\n\nStep one.\n")


async def plan_asked(pilot) -> None:
    """Skills, then d: the dry run's question, open."""
    await open_mode(pilot, "3", SkillsScreen)
    await pilot.press("d")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ConfirmDialog), what="plan dialog")


async def purge_asked(pilot, days: str | None = None) -> None:
    """Skills, then x and ``days`` (the default when None): the purge question, open."""
    await open_mode(pilot, "3", SkillsScreen)
    await pilot.press("x")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, DaysDialog), what="days dialog")
    if days is not None:
        pilot.app.screen.query_one(Input).value = days
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ConfirmDialog), what="purge question")


async def test_archive_acts_on_the_skill_it_asked_about_not_the_row_the_cursor_lands_on(home, tmp_path):
    """`Archive zz-a?`, zz-a deleted from another shell, the table reloaded onto zz-b: `y` archived zz-b."""
    for name in ("zz-a", "zz-b"):
        hand_made(home, name)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "3", SkillsScreen)
        await pilot.press("slash", *"zz-", "enter")
        await settle(pilot)
        assert screen.current.name == "zz-a"
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
        assert app.screen.question == "Archive zz-a?"
        subprocess.run(["rm", "-rf", str(home.skills_dir / "zz-a")], check=True)
        screen.load_skills()  # what the watcher does when the folder goes
        await wait_for(pilot, lambda: list(screen.query_one(SkillList).rows_by_key) == ["zz-b"], what="reload")
        assert screen.current.name == "zz-b"
        await pilot.press("y")
        await wait_for(pilot, lambda: "Could not archive zz-a" in notes(app), what="the refusal")
        assert "no longer in skills/zz-a" in notes(app) and "nothing was changed" in notes(app)
        assert state_of(home, "zz-b") == "active" and "zz-b" not in notes(app)


async def test_archive_of_one_of_two_folders_declaring_a_name_archives_that_folder(home, tmp_path):
    for folder in ("twin-a", "twin-b"):
        (home.skills_dir / folder).mkdir(parents=True)
        (home.skills_dir / folder / "SKILL.md").write_text("---\nname: twin\ndescription: d\n---\n\nBody.\n")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "3", SkillsScreen)
        table = screen.query_one(SkillList)
        table.focus()
        table.move_cursor(row=table.get_row_index("twin-b"))
        await settle(pilot)
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
        assert app.screen.question == "Archive twin (twin-b)?"
        await pilot.press("y")
        await wait_for(pilot, lambda: not (home.skills_dir / "twin-b").exists(), what="archived")
        assert (home.skills_dir / "twin-a" / "SKILL.md").exists()


async def test_purge_deletes_only_what_its_question_listed(home, tmp_path):
    """The dialog listed one copy; another became old enough before `y`, and both were purged."""
    seed_skills(home)
    home.curator.archive("docker-prune")
    home.clock.advance(100 * DAY)
    home.curator.archive("git-rebase")  # archived today: not listed
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await purge_asked(pilot, "30")
        assert app.screen.detail == "docker-prune  (.archive/docker-prune)"
        home.skills.usage.set_fields("git-rebase", archived_at="2000-01-01T00:00:00Z")  # old enough now
        await pilot.press("y")
        await wait_for(pilot, lambda: "Purged 1 archived skill." in notes(app), what="the purge")
        assert state_of(home, "docker-prune") is None and state_of(home, "git-rebase") == "archived"
        assert "1 more archived skill became old enough since the preview" in notes(app)


async def test_purge_says_which_listed_copy_is_gone_and_purges_the_rest(home, tmp_path):
    seed_skills(home)
    home.curator.archive("docker-prune")
    home.curator.archive("git-rebase")
    home.clock.advance(100 * DAY)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await purge_asked(pilot)
        home.curator.restore("git-rebase")
        await pilot.press("y")
        await wait_for(pilot, lambda: "Purged 1 archived skill." in notes(app), what="the purge")
        assert "Not purged, restored or deleted since the preview: .archive/git-rebase." in notes(app)
        assert state_of(home, "docker-prune") is None and state_of(home, "git-rebase") == "active"


async def test_apply_exactly_this_never_applies_more_than_the_dry_run_showed(home, tmp_path):
    """`Apply exactly this now? mark stale tomato-care`, then another skill became due: `y` changed both."""
    seed_skills(home)
    home.clock.advance(45 * DAY)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await plan_asked(pilot)
        assert app.screen.detail.split("\n\n")[0] == STALE_TOMATO
        home.skills.usage.set_fields("docker-prune", created_by="agent")  # now the curator's, and idle for 45 days
        await pilot.press("y")
        await wait_for(
            pilot, lambda: isinstance(app.screen, ConfirmDialog) and "changed" in app.screen.question, what="new plan"
        )
        assert app.screen.question.startswith("The skills changed since the dry run, so nothing was applied.")
        assert app.screen.detail.split("\n\n")[0] == (
            "mark stale  docker-prune (unused since it was made 45 days ago; the stale limit is 30 days)\n"
            + STALE_TOMATO
        )
        assert state_of(home, "tomato-care") == "active" and state_of(home, "docker-prune") == "active"
        await pilot.press("y")  # the new plan, as shown this time
        await wait_for(pilot, lambda: state_of(home, "docker-prune") == "stale", what="applied")
        assert state_of(home, "tomato-care") == "stale"


async def test_a_plan_that_no_longer_holds_anything_applies_nothing_and_says_so(home, tmp_path):
    seed_skills(home)
    home.clock.advance(45 * DAY)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await plan_asked(pilot)
        home.curator.pin("tomato-care")  # pinned skills are never touched: the plan is empty now
        await pilot.press("y")
        await wait_for(pilot, lambda: "nothing was applied" in notes(app), what="the note")
        assert "Curator dry run: nothing to change (" in notes(app) and state_of(home, "tomato-care") == "active"


async def test_a_purge_bound_is_refused_in_the_same_words_by_both_skins(home, tmp_path):
    """``curator purge --days`` had a parser of its own beside the engine's rule, which the Skills screen's
    purge box applies: both refused the same days, but -1 and 'x' in other words. Now the CLI calls the
    engine's rule too, so a refusal reads the same in both skins."""
    from tests.cli_support import ran

    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_mode(pilot, "3", SkillsScreen)
        for days in ("-1", "x", "0", "36501", "1_0", "١٠"):  # (int() read the last two as 10: a purge of 10 days)
            await pilot.press("x")
            await wait_for(pilot, lambda: isinstance(app.screen, DaysDialog), what="days dialog")
            app.screen.query_one(Input).value = days
            await pilot.press("enter")
            await settle(pilot)
            said = str(app.screen.query_one("#days-error").render())
            status, _, err = ran("--home", str(home.root), "curator", "purge", "--days", days, "--dry-run")
            assert status == 2 and err.splitlines()[-1] == f"workbench curator purge: error: argument --days: {said}"
            await pilot.press("escape")
            await settle(pilot)
