"""Crashes found by hand and by key mashing: each test failed before its fix."""

from __future__ import annotations

import pytest
from textual.screen import ModalScreen
from textual.widgets import Select
from textual.widgets._select import SelectOverlay

from engine.memory.budget import draft_budget
from tests.screens_seed import open_mode, seed_skills
from tests.tui_support import make_app, settle
from widgets import textual_fixes
from widgets.skill_list import SkillList
from workbench import app as app_module
from workbench.app import WorkbenchApp
from workbench.cli import main, tui_cmds
from workbench.screens.dialogs import ConfirmDialog, EditDialog
from workbench.screens.help import HelpScreen
from workbench.screens.memory import MemoryScreen
from workbench.screens.resume import ResumeDialog
from workbench.screens.run import RunScreen
from workbench.screens.skills import DaysDialog, LedgerDialog, SkillsScreen
from workbench.screens.timeline import PageLoaded, TimelineScreen

pytestmark = pytest.mark.anyio


async def test_moving_in_a_skill_table_filtered_to_nothing(home, tmp_path):
    seed_skills(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "3", SkillsScreen)
        await pilot.press("slash", *"zzzzqqq", "tab")
        await settle(pilot)
        assert screen.query_one(SkillList).row_count == 0
        await pilot.press("up", "down", "pageup", "pagedown", "home", "end", "enter", "a", "p")
        await settle(pilot)
        assert screen.current is None and app.is_running


async def test_a_dialog_answered_twice_closes_once(home, tmp_path):
    home.memory.add("memory", "Deploys go through staging first", None)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "1", MemoryScreen)
        await pilot.press("d")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmDialog)
        dialog.action_answer(False)
        dialog.action_answer(False)  # a second key or click before the screen is gone
        dialog._pressed(type("Pressed", (), {"button": type("B", (), {"id": "no"})()})())
        await settle(pilot)
        assert app.screen is screen
        await pilot.press("a")
        await settle(pilot)
        editor = app.screen
        assert isinstance(editor, EditDialog)
        editor.action_cancel()
        editor._cancel()
        editor._take_theirs()
        await settle(pilot)
        assert app.screen is screen and app.is_running
        for _ in range(3):  # the burst from the issue
            await pilot.press("d", "enter", "n")
        await settle(pilot)
        assert app.screen is screen and app.is_running
        editor.action_cancel()  # escape or ctrl+s reaching an editor that has closed (a mash found it):
        editor.action_save()  # its text area is gone, so there is no draft to compare or save
        await settle(pilot)
        assert app.screen is screen and app.is_running


DIALOGS = {
    "confirm": lambda app: ConfirmDialog("Remove it?"),
    "edit": lambda app: EditDialog("Edit", "a fact", lambda text: None, budget=draft_budget(["a fact"], 2200)),
    "resume": lambda app: ResumeDialog([], lambda text: None, {}),
    "days": lambda app: DaysDialog("Purge after how many days?", 30),
    "ledger": lambda app: LedgerDialog([]),
    "help": lambda app: HelpScreen(app.help_sections()),
}


@pytest.mark.parametrize("kind", DIALOGS)
async def test_a_dialog_answered_before_it_mounts_closes_and_the_app_goes_on(home, tmp_path, kind):
    """Mashed keys can answer a dialog before its Mount (ctrl+o then esc stopped the app in a CI
    run): it closes once it has mounted, and its on_mount finds the widgets it looks up."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        below = app.screen
        dialog = DIALOGS[kind](app)
        app.push_screen(dialog)
        dialog.dismiss(None)
        dialog.dismiss(None)  # and a second answer still closes it once
        await settle(pilot)
        assert app.is_running and app.screen is below


async def test_page_keys_in_the_model_dropdown(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "5", RunScreen)
        model = screen.query_one("#run-model", Select)
        model.query_one(SelectOverlay).styles.max_height = 2  # squeezed: a border and no room for options
        model.focus()
        await pilot.press("enter", "pagedown", "pageup", "pagedown", "end", "home")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert app.is_running


class CrashingApp(WorkbenchApp):
    """The real app, run headless, with a key whose handler has a bug."""

    BINDINGS = [*WorkbenchApp.BINDINGS, ("z", "bug", "")]

    def action_bug(self) -> None:
        raise RuntimeError("a bug in a handler")

    def on_ready(self) -> None:
        self.call_after_refresh(lambda: self.simulate_key("z"))

    def run(self, **kwargs):
        return super().run(headless=True, size=(80, 24), **kwargs)


def test_a_crash_exits_non_zero_and_says_where_the_traceback_is(home, tmp_path, monkeypatch, capsys):
    config = tmp_path / "config"
    monkeypatch.setenv("WORKBENCH_CONFIG_DIR", str(config))
    monkeypatch.setattr(app_module, "WorkbenchApp", CrashingApp)
    monkeypatch.setattr(tui_cmds, "has_terminal", lambda: True)  # (headless: no terminal needed)
    assert main(["--home", str(home.root)]) == 1
    err = capsys.readouterr().err
    assert "stopped on an unexpected error (RuntimeError: a bug in a handler)" in err
    assert "Traceback" not in err
    saved = list((config / "crashes").glob("crash-*.txt"))
    assert len(saved) == 1 and str(saved[0]) in err
    text = saved[0].read_text(encoding="utf-8")
    assert "Traceback" in text and "action_bug" in text and "a bug in a handler" in text


async def test_the_theme_picker_answered_twice_and_closed_while_searching(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "1", MemoryScreen)
        await pilot.press("f2")
        await settle(pilot)
        palette = app.screen
        assert palette is not screen
        palette.dismiss()
        palette.dismiss()  # Textual's palette pops whatever is on top: never the mode's screen
        await settle(pilot)
        assert app.screen is screen
        for _ in range(5):  # close it while its search worker runs
            await pilot.press("f2", "n", "o", "escape")
        await pilot.press("f2", "pagedown", "pageup", "escape")
        await settle(pilot)
        assert app.screen is screen and app.is_running


async def test_the_command_palette_closes_once_and_only_from_the_top(home, tmp_path):
    """The key-mashing test ended the app: the palette was dismissed while another screen was
    on top of it (which popped that screen and settled the palette's result), then escape
    reached it and settled the result again (``InvalidStateError``)."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "1", MemoryScreen)
        palette = await open_mode(pilot, "ctrl+p", textual_fixes.Palette)
        above = ModalScreen()
        app.push_screen(above)
        await settle(pilot)
        palette.dismiss()  # a late answer while it is not on top: ignored
        await settle(pilot)
        assert app.screen_stack[-2:] == [palette, above]
        app.pop_screen()
        await settle(pilot)
        palette._action_escape()
        palette._action_escape()  # a second escape before it is gone
        await settle(pilot)
        assert app.screen is screen and app.is_running


async def test_an_overlapping_timeline_page_never_duplicates_a_row(home, tmp_path):
    for number in range(3):
        home.memory.add("memory", f"Note number {number}", None)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        shown = list(screen.rows)
        assert len(shown) >= 3
        screen.post_message(PageLoaded(shown[:2], "older", screen.search))  # read while newer rows arrived
        await settle(pilot)
        assert [row.id for row in screen.rows] == [row.id for row in shown] and app.is_running
