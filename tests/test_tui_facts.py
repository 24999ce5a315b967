"""The Memory screen's facts view: the local provider's facts with their source messages (Pilot)."""

from __future__ import annotations

import threading

import pytest

from engine.models import OfflineModel
from engine.providers.facts import FactStore
from engine.runner import AgentSession
from tests.screens_seed import screen_text
from tests.tui_support import footer_keys, landed_on, make_app, settle, wait_for
from widgets.fact_list import FactList
from workbench.app import ScreenCommands
from workbench.messages import JumpToMessage
from workbench.screens.help import HelpScreen
from workbench.screens.memory import MemoryScreen
from workbench.screens.memory_facts import EMPTY, FactsPane

pytestmark = pytest.mark.anyio


def local_provider(home) -> None:
    home.config_path.write_text("memory:\n  provider: local\n", encoding="utf-8")
    home.reload_config()


def session_with_facts(home) -> str:
    """A real offline session whose memory writes the local provider mirrors into facts."""
    local_provider(home)
    session = AgentSession(home, OfflineModel())
    try:
        session.run_turn("remember that the ledger runs on Postgres 16")
        session.run_turn("remember that invoices are rendered by the docs-renderer service")
        return session.id
    finally:
        session.close()


def facts_list(app) -> FactList:
    return app.screen.query_one("#facts-list", FactList)


async def show_facts(pilot) -> FactList:
    await settle(pilot)
    await pilot.press("p")
    await settle(pilot)
    listing = facts_list(pilot.app)
    assert pilot.app.screen.query_one(FactsPane).display and listing.has_focus
    return listing


async def test_facts_are_listed_with_their_source_and_g_opens_it_on_sessions(home, tmp_path):
    session_id = session_with_facts(home)
    stored = {m.id: m for m in home.archive.messages(session_id)}
    messages = []
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40), message_hook=messages.append) as pilot:
        listing = await show_facts(pilot)
        assert [r.content for r in listing.rows] == [
            "The ledger runs on Postgres 16.",
            "Invoices are rendered by the docs-renderer service.",
        ]
        second = listing.rows[1]
        assert second.session_id == session_id and stored[second.message_id].role == "assistant"
        text = screen_text(app)
        assert "Provider facts 2 facts · memory.provider is local" in text
        assert f"from #{second.message_id} assistant: (tool call: memory)" in text
        assert not app.screen.query_one("#memory-columns").display
        await pilot.press("down", "g")
        await landed_on(pilot, second.message_id, "the fact's source message under the cursor")
        jumps = [(m.session_id, m.message_id) for m in messages if isinstance(m, JumpToMessage)]
        assert jumps[0] == (session_id, second.message_id)


async def test_with_no_facts_the_view_says_how_they_appear_and_p_goes_back(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        listing = await show_facts(pilot)
        assert listing.rows == []
        text = " ".join(screen_text(app).split())
        assert "memory.provider is not local: no new facts are kept" in text
        assert "No provider facts yet. They appear when config.yaml sets memory.provider: local" in text
        assert EMPTY.startswith("No provider facts yet")
        await pilot.press("g")  # nothing to jump to: nothing happens, nothing breaks
        await pilot.press("p")
        await settle(pilot)
        assert app.screen.query_one("#memory-columns").display and not app.screen.query_one(FactsPane).display
        assert app.screen.query_one("#live-list").has_focus


async def test_the_facts_view_names_a_provider_hermes_runs(home, tmp_path):
    """memory.provider: honcho (a Hermes plugin) read as plain "not local", as if nothing were set."""
    home.config_path.write_text("memory:\n  provider: honcho\n", encoding="utf-8")
    home.reload_config()
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await show_facts(pilot)
        text = " ".join(screen_text(app).split())
        assert "memory.provider is honcho, Hermes's own: no new facts are kept · g: source message" in text


async def test_the_facts_view_shows_and_runs_none_of_the_columns_keys(home, tmp_path):
    """In the facts view the footer still listed t/a/e/d/u/n, and a opened "Add to MEMORY" over the facts;
    the palette offered "Memory: Facts" there, where p goes back."""
    columns_keys = ("t", "a", "e", "d", "u", "n", "N", "f", "r")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert set(await footer_keys(pilot, *columns_keys)) >= {"t", "a", "e", "d", "u", "n"}
        await show_facts(pilot)
        assert await footer_keys(pilot, *columns_keys) == {}
        target = app.screen.target
        for key in columns_keys:
            await pilot.press(key)
            await settle(pilot)
            assert isinstance(app.screen, MemoryScreen), key  # no editor, question or repair opened
        assert app.screen.query_one(FactsPane).display and app.screen.target == target
        # the way back is in the footer (at 80 columns the view's title, which says "p", is cut)
        assert await footer_keys(pilot, "escape") == {"escape": True}
        offered = [title for title, _, _ in ScreenCommands(app.screen)._commands() if title.startswith("Memory: ")]
        assert offered == ["Memory: Back from facts"]
        await pilot.press("escape")
        await settle(pilot)
        assert not app.screen.query_one(FactsPane).display and await footer_keys(pilot, "escape") == {}
        await show_facts(pilot)
        await pilot.press("p")  # back: the columns' keys are back
        assert set(await footer_keys(pilot, *columns_keys)) >= {"t", "a", "e", "d", "u", "n"}
        await pilot.press("a")
        await wait_for(pilot, lambda: not isinstance(app.screen, MemoryScreen), what="the add box")


async def test_a_fact_kept_meanwhile_appears_live_and_the_highlight_stays(home, tmp_path):
    local_provider(home)
    FactStore(home).add("The on-call rota lives in PagerDuty.", session_id=None)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        listing = await show_facts(pilot)
        assert listing.highlighted == 0
        writer = threading.Thread(target=lambda: FactStore(home).add("Deploys need two approvals."))
        writer.start()
        writer.join()
        await wait_for(pilot, lambda: len(listing.rows) == 2, what="the new fact")
        assert listing.highlighted == 0 and listing.current.content == "The on-call rota lives in PagerDuty."
        FactStore(home).forget(fact_id=listing.rows[0].id, actor="user")
        await wait_for(pilot, lambda: [r.content for r in listing.rows] == ["Deploys need two approvals."])


async def test_a_fact_without_a_session_says_so_instead_of_jumping(home, tmp_path):
    FactStore(home).add("Kept by hand, outside any session.")
    messages = []
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40), message_hook=messages.append) as pilot:
        await show_facts(pilot)
        await pilot.press("g")
        await settle(pilot)
        assert app.current_mode == "memory"
        assert not any(isinstance(m, JumpToMessage) for m in messages)
        assert "Fact 1 has no recorded source message: it was kept outside any session." in screen_text(app)
        assert "from the fact_add tool (outside any session)" in screen_text(app)


async def test_hostile_fact_text_is_shown_literally(home, tmp_path):
    FactStore(home).add("Team [bold]ledger[/] uses <memory-context> \x1b]0;PWNED\x07 tags")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await show_facts(pilot)
        text = screen_text(app)
        assert "Team [bold]ledger[/] uses <memory-context> ␛]0;PWNED" in text
        assert "\x1b" not in text


async def test_help_in_the_facts_view_lists_only_the_keys_that_work_there(home, tmp_path):
    """``?`` in the facts view listed t, a, e, d, u, n… (the columns' keys, which do nothing there)
    under "Memory"; it lists what the view's footer offers: g (the fact list), p and esc back."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await show_facts(pilot)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        first = app.screen.sections[0]
        assert first.title == "Memory: provider facts"
        assert first.keys == [("g", "Source"), ("esc", "Back from facts"), ("p", "Back from facts")]
        assert "g or enter opens a fact's source message" in first.text
        shown = " ".join(screen_text(app).split())
        assert "Memory: provider facts" in shown and "Target" not in shown.split("Skills")[0]
        await pilot.press("escape", "p", "question_mark")  # back on the columns: their keys, not facts_back
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help again")
        first = app.screen.sections[0]
        assert first.title == "Memory" and ("t", "Target") in first.keys and ("a", "Add") in first.keys
        assert ("p", "Facts") in first.keys and not [row for row in first.keys if row[1] == "Back from facts"]
