"""SVG snapshots of the Sessions, Skills, Run and Timeline screens at 80x24 and 120x40, in both themes.

Deterministic: a FixedClock, fixed session ids, a fixed home label, a fixed theme, no
file watcher, no blinking cursor, and every worker finished before the shot. SVGs live
in snapshots/test_snapshots_screens/ (see tests/conftest.py); refresh them deliberately
with ``pytest tests/test_snapshots_screens.py --snapshot-update`` after checking the report.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from textual.widgets import Input

from tests.screens_seed import play_scenario, seed_sessions, seed_skills
from tests.tui_support import make_app, settle
from widgets.skill_list import SkillList

SHOTS = [
    pytest.param(size, theme, id=f"{size[0]}x{size[1]}-{theme.removeprefix('workbench-')}")
    for theme in ("workbench-dark", "workbench-light")
    for size in ((80, 24), (120, 40))
]


def shot(snap_compare, home, tmp_path, size, theme, key: str, then=None) -> bool:
    """Open a mode in ``theme``, run ``then(pilot)``, let every worker finish, and compare the screen."""

    async def run_before(pilot):
        pilot.app.theme = theme
        await pilot.press(key)
        await settle(pilot)
        if then is not None:
            await then(pilot)
            await settle(pilot)
        for box in pilot.app.screen.query(Input):
            box.cursor_blink = False

    return snap_compare(make_app(home, tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize(("size", "theme"), SHOTS)
def test_sessions_screen(snap_compare, home, tmp_path, size, theme):
    seed_sessions(home)

    async def expand_lineage(pilot):
        await pilot.press("space")  # the newest root: its compression child, branch and delegate

    assert shot(snap_compare, home, tmp_path, size, theme, "2", expand_lineage)


@pytest.mark.parametrize(("size", "theme"), SHOTS)
def test_sessions_search(snap_compare, home, tmp_path, size, theme):
    seed_sessions(home)

    async def search_cjk(pilot):
        await pilot.press("slash", *"ラーメン")
        await settle(pilot)
        await pilot.press("enter")

    assert shot(snap_compare, home, tmp_path, size, theme, "2", search_cjk)


@pytest.mark.parametrize(("size", "theme"), SHOTS)
def test_skills_screen(snap_compare, home, tmp_path, size, theme):
    seed_skills(home)

    async def select_skill(pilot):
        table = pilot.app.screen.query_one(SkillList)
        table.move_cursor(row=table.get_row_index(table.key_of("git-rebase")))

    assert shot(snap_compare, home, tmp_path, size, theme, "3", select_skill)


@pytest.mark.parametrize(("size", "theme"), SHOTS)
def test_run_screen(snap_compare, home, tmp_path, size, theme):
    numbers = itertools.count(1)
    home.archive.new_session_id = lambda: f"20261130_120000_{next(numbers):06x}"  # fixed ids in the shot

    async def play_smoke(pilot):
        await play_scenario(pilot, pilot.app.screen)

    assert shot(snap_compare, home, tmp_path, size, theme, "5", play_smoke)


@pytest.mark.parametrize(("size", "theme"), SHOTS)
def test_timeline_screen(snap_compare, home, tmp_path, size, theme):
    numbers = itertools.count(1)
    home.archive.new_session_id = lambda: f"20261130_120000_{next(numbers):06x}"

    async def play_then_timeline(pilot):
        await play_scenario(pilot, pilot.app.screen)
        await pilot.press("escape", "6")  # leave the message box, then open the Timeline

    assert shot(snap_compare, home, tmp_path, size, theme, "5", play_then_timeline)


def test_snapshots_are_stored_under_the_top_level_folder():
    folder = Path(__file__).resolve().parent.parent / "snapshots" / "test_snapshots_screens"
    assert sorted(p.name for p in folder.glob("*.svg")) == sorted(
        f"test_{name}[{size}-{theme}].svg"
        for name in ("sessions_screen", "sessions_search", "skills_screen", "run_screen", "timeline_screen")
        for size in ("80x24", "120x40")
        for theme in ("dark", "light")
    )
