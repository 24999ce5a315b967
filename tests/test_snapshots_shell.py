"""SVG snapshots of the Memory, Approvals and help screens at 80x24 and 120x40, in both themes.

Deterministic by construction: a FixedClock, a fixed home label, a fixed theme, no file
watcher, fixed pending ids, and every worker finished before the shot. The app is limited
to the two screens shot here, so other screens' keys and tabs cannot change these SVGs. SVGs live in
snapshots/test_snapshots_shell/ (see tests/conftest.py); refresh them deliberately with
``pytest tests/test_snapshots_shell.py --snapshot-update`` after checking the report.
"""

from __future__ import annotations

import itertools

import pytest
from textual.widgets import OptionList

from engine.tools import BACKGROUND_REVIEW, ToolContext
from tests.tui_support import make_app, settle, wait_for
from workbench.app import WorkbenchApp
from workbench.screens.approvals import ApprovalsScreen
from workbench.screens.memory import MemoryScreen

SHOTS = [
    pytest.param(size, theme, id=f"{size[0]}x{size[1]}-{theme.removeprefix('workbench-')}")
    for theme in ("workbench-dark", "workbench-light")
    for size in ((80, 24), (120, 40))
]
AGENT = ToolContext(actor="agent", session_id="20261130_115500_a1b2c3", message_id=12)


class ShellApp(WorkbenchApp):
    MODES = {"memory": MemoryScreen, "approvals": ApprovalsScreen}


def shell_app(home, tmp_path) -> WorkbenchApp:
    return make_app(home, tmp_path, app_class=ShellApp)


@pytest.fixture
def seeded(home, clock):
    """A home with a few entries, one of them markup-looking, and two staged proposals."""
    ids = (f"{n:08x}" for n in itertools.count(0xA0000001))
    home.approvals.store.new_id = lambda: next(ids)
    memory = home.memory
    for text in (
        "Project deploys with `make release` from the main branch",
        "User prefers [bold]short[/] answers; never <details> fences",
        "CI runs on 2 cores; keep test suites under a minute",
        "Staging database is Postgres 16",
    ):
        memory.add("memory", text, AGENT)
    memory.add("user", "Name: Ada. Timezone: Europe/Lisbon", ToolContext(actor="user"))
    clock.advance(60)
    return home


async def diverge(pilot) -> None:
    """After the screen froze its snapshot, the agent adds, changes and removes entries."""
    # (the screen freezes it in its first load: under load, writes made before that were frozen too)
    await wait_for(pilot, lambda: pilot.app.frozen_snapshot is not None, what="the frozen snapshot")
    memory = pilot.app.home.memory
    memory.add("memory", "Release notes live in docs/CHANGES.md", AGENT)
    memory.replace("memory", "Postgres 16", "Staging database is Postgres 17 since November", AGENT)
    memory.remove("memory", "CI runs on 2 cores", AGENT)
    await settle(pilot)


def stage_proposals(home) -> None:
    home.config_path.write_text("memory:\n  write_approval: true\n", encoding="utf-8")
    home.reload_config()
    home.memory.add("memory", "Project deploys with make release from main", AGENT)
    home.memory.replace(
        "memory", "Postgres 16", "Staging runs Postgres 17", ToolContext(actor="review", origin=BACKGROUND_REVIEW)
    )
    home.clock.advance(420)


@pytest.mark.parametrize(("size", "theme"), SHOTS)
def test_memory_screen(snap_compare, seeded, tmp_path, size, theme):
    """Marks, gauges and the focus ring must read as well in the light theme as in the dark one."""

    async def themed(pilot):
        pilot.app.theme = theme
        await diverge(pilot)

    assert snap_compare(shell_app(seeded, tmp_path), terminal_size=size, run_before=themed)


@pytest.mark.parametrize(("size", "theme"), SHOTS)
def test_approvals_screen(snap_compare, seeded, tmp_path, size, theme):
    stage_proposals(seeded)

    async def open_approvals(pilot):
        pilot.app.theme = theme
        await pilot.press("4")
        await settle(pilot)

    assert snap_compare(shell_app(seeded, tmp_path), terminal_size=size, run_before=open_approvals)


@pytest.mark.parametrize(("size", "theme"), SHOTS)
def test_help_screen(snap_compare, seeded, tmp_path, size, theme):
    async def open_help(pilot):
        pilot.app.theme = theme
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)

    assert snap_compare(shell_app(seeded, tmp_path), terminal_size=size, run_before=open_help)


def test_palette_with_a_query(snap_compare, seeded, tmp_path):
    """On Approvals the palette finds the Memory screen's actions too, named with it, after its own."""
    stage_proposals(seeded)

    async def search(pilot):
        await pilot.press("4")
        await settle(pilot)
        await pilot.press("ctrl+p", *"re")
        hits = pilot.app.screen.query_one(OptionList).options
        await wait_for(pilot, lambda: any("Memory: Refreeze" in str(o.prompt) for o in hits), what="the hits")
        await settle(pilot)

    assert snap_compare(shell_app(seeded, tmp_path), terminal_size=(80, 24), run_before=search)


def test_snapshots_are_stored_under_the_top_level_folder():
    from pathlib import Path

    folder = Path(__file__).resolve().parent.parent / "snapshots" / "test_snapshots_shell"
    assert sorted(p.name for p in folder.glob("*.svg")) == sorted(
        ["test_palette_with_a_query.svg"]
        + [
            f"test_{name}[{size}-{theme}].svg"
            for name in ("memory_screen", "approvals_screen", "help_screen")
            for size in ("80x24", "120x40")
            for theme in ("dark", "light")
        ]
    )
