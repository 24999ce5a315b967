"""One rule for destructive one-key actions on every screen: ask first, with "No" focused, so a
stray enter (or n, or esc) changes nothing."""

from __future__ import annotations

import pytest

from engine.tools import ToolContext
from tests.screens_seed import seed_skills
from tests.tui_support import make_app, settle, wait_for
from workbench.screens.dialogs import ConfirmDialog, EditDialog

pytestmark = pytest.mark.anyio

USER = ToolContext(actor="user")
AGENT = ToolContext(actor="agent", session_id="s-1")

# (mode key, keys that reach the action, the key itself, words the question holds)
DESTRUCTIVE = (
    ("1", ("l",), "d", "Remove this"),
    ("1", ("l",), "u", "Undo"),
    ("3", (), "a", "Archive"),
    ("3", (), "c", "Run the curator"),
    ("4", (), "a", "Approve"),
    ("4", (), "r", "Reject"),
    ("4", (), "A", "Approve all"),
    ("4", (), "R", "Reject all"),
    ("6", (), "r", "Revert"),
)


@pytest.fixture
def busy(home):
    """A home with something for every destructive key: entries with history, a proposal, skills."""
    seed_skills(home)
    home.config_path.write_text("memory:\n  write_approval: true\n", encoding="utf-8")
    home.reload_config()
    assert home.memory.add("memory", "Deploys on Fridays", AGENT).get("staged")
    home.config_path.write_text("", encoding="utf-8")
    home.reload_config()
    home.memory.add("memory", "Uses Postgres 16", USER)  # the newest row: the Timeline's r has a change to revert
    return home


def state(home) -> tuple:
    return (
        home.memory.entries("memory"),
        [r.id for r in home.approvals.list()],
        [(s.name, s.state) for s in home.skills.list(include_archived=True)],
        len(home.curator.ledger()),
        len(home.journal.query(limit=100_000, include_pending=True)),
    )


@pytest.mark.parametrize(("mode", "reach", "key", "question"), DESTRUCTIVE, ids=lambda v: str(v))
async def test_a_destructive_key_asks_first_and_a_stray_enter_changes_nothing(
    busy, tmp_path, mode, reach, key, question
):
    if key == "c":  # (the curator asks only about a plan: tomato-care, made by a review, is due to go stale)
        busy.clock.advance(45 * 86400)
    app = make_app(busy, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(mode)
        await settle(pilot)
        await pilot.press(*reach)
        await settle(pilot)
        before = state(busy)
        await pilot.press(key)
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the confirmation")
        assert question.lower() in app.screen.question.lower()
        assert app.focused is not None and app.focused.id == "no", "No has the focus"
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmDialog) and state(busy) == before


async def test_discarding_a_draft_from_the_cancel_button_closes_the_editor(busy, tmp_path):
    """The Cancel button's handler runs in the editor's own message pump; the answer's callback
    used to return the editor's dismiss, which Textual then awaited there and raised ScreenError."""
    app = make_app(busy, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("1")
        await settle(pilot)
        await pilot.press("a", *"half a thought")
        await wait_for(pilot, lambda: isinstance(app.screen, EditDialog), what="the editor")
        app.screen.query_one("#cancel").press()
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: not isinstance(app.screen, (EditDialog, ConfirmDialog)), what="the editor closed")
        assert app.return_code is None and app.is_running


async def test_esc_on_a_changed_draft_asks_and_an_unchanged_one_closes(busy, tmp_path):
    app = make_app(busy, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("1")
        await settle(pilot)
        await pilot.press("a", "escape")  # nothing typed: nothing to lose, no question
        await settle(pilot)
        assert not isinstance(app.screen, (EditDialog, ConfirmDialog))
        await pilot.press("a", *"half a thought", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the confirmation")
        assert app.focused.id == "no"
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, EditDialog) and app.screen.draft == "half a thought"
