"""Live means live whoever writes: another workbench process changes memory while the TUI is open.

``workbench memory add/replace/remove`` runs as a real separate process on the same home.
The Memory screen's live column, the Approvals budget preview and an open editor must all
follow within a second (each deadline below leaves room for a loaded machine; no timing
is asserted beyond that).
"""

from __future__ import annotations

import subprocess

import pytest
from textual.widgets import Static, TextArea

from engine.tools import ToolContext
from tests.hermes_support import workbench_cmd
from tests.tui_support import make_app, settle, wait_for
from widgets.entry_list import EntryList
from widgets.gauge import CapacityGauge
from workbench.screens.dialogs import ConfirmDialog, EditDialog

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

DEADLINE = 2.0  # seconds after the other process exits; the watcher reports within about 0.3 s


def other_process(home, *args: str) -> None:
    done = subprocess.run(
        workbench_cmd("memory", *args, "--home", str(home.root), "--json"), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr


def live_texts(screen) -> list[str]:
    return [row.text for row in screen.query_one("#live-list", EntryList).rows if row.mark != "-"]


@pytest.fixture
def gated(home):
    home.config_path.write_text("memory:\n  write_approval: true\n", encoding="utf-8")
    home.reload_config()
    home.memory.add("memory", "Uses Postgres 16", ToolContext(actor="user"))
    home.memory.add("memory", "Deploys on Fridays at noon", ToolContext(actor="user"))
    staged = home.memory.add("memory", "Prefers small pull requests", ToolContext(actor="agent", session_id="s-1"))
    assert staged.get("staged"), staged
    return home


async def test_another_process_writing_reaches_memory_approvals_and_the_open_editor(gated, tmp_path):
    home = gated
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("4")  # Approvals: the budget preview of the staged add
        await settle(pilot)
        approvals = app.screen
        budget = approvals.query_one("#budget", CapacityGauge)
        base = len("Uses Postgres 16\n§\nDeploys on Fridays at noon\n§\nPrefers small pull requests")
        await wait_for(pilot, lambda: budget.display and budget.used == base, what="the budget preview")
        await pilot.press("1")
        await settle(pilot)
        memory = app.screen

        other_process(home, "add", "--target", "memory", "Written from another shell")
        await wait_for(
            pilot,
            lambda: "Written from another shell" in live_texts(memory),
            timeout=DEADLINE,
            what="the other process's add in the live column",
        )
        grown = base + len("\n§\nWritten from another shell")
        assert approvals.stale and budget.used == base, "hidden, Approvals only marks itself stale"
        await pilot.press("4")  # shown again: it catches up once
        await wait_for(pilot, lambda: budget.used == grown, timeout=DEADLINE, what="the Approvals budget preview")
        assert not approvals.stale
        await pilot.press("1")
        await settle(pilot)
        assert home.memory.history(limit=1)[0].actor == "user", "journaled once, by the process that wrote it"

        list_ = memory.query_one("#live-list", EntryList)
        list_.focus()
        list_.highlighted = live_texts(memory).index("Deploys on Fridays at noon")
        await settle(pilot)
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, EditDialog), what="the editor")
        dialog = app.screen
        note = dialog.query_one("#on-disk", Static)
        assert not note.display
        other_process(home, "replace", "--old", "Fridays", "Deploys on Thursdays at noon.")
        await wait_for(pilot, lambda: note.display, timeout=DEADLINE, what="the editor's on-disk warning")
        assert "Changed on disk since you opened it" in str(note.content)
        # (a quoted sentence that ends in its own stop takes no second one after the quote)
        assert "to “Deploys on Thursdays at noon.” Saving will show" in str(note.content)
        await wait_for(
            pilot,
            lambda: "Deploys on Thursdays at noon." in live_texts(memory),
            timeout=DEADLINE,
            what="the live column under the editor",
        )
        dialog.query_one(TextArea).text = "Deploys on Fridays at 1pm"
        gauge = dialog.query_one("#draft-budget")
        # measured as Keep mine would leave the store: the draft in place of the other writer's entry
        now = home.memory.entries("memory")
        drafted = [("Deploys on Fridays at 1pm" if e == "Deploys on Thursdays at noon." else e) for e in now]
        await wait_for(pilot, lambda: gauge.used == len("\n§\n".join(drafted)), what="the gauge following the draft")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: dialog.conflict is not None, what="the conflict instead of an overwrite")
        assert "Deploys on Thursdays at noon." in home.memory.entries("memory")
        await pilot.press("escape")
        await settle(pilot)

        other_process(home, "remove", "--old", "another shell")
        await wait_for(
            pilot,
            lambda: "Written from another shell" not in live_texts(memory),
            timeout=DEADLINE,
            what="the other process's removal",
        )
        assert isinstance(app.screen, ConfirmDialog)  # escape on a changed draft asks first
        await pilot.press("y")  # discard it and close the editor
        await wait_for(pilot, lambda: app.screen is memory, what="the editor closed")
        await pilot.press("4")
        await wait_for(
            pilot,
            lambda: budget.used == base - len("Fridays") + len("Thursdays."),
            timeout=DEADLINE,
            what="the budget after the removal",
        )
