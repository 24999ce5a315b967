"""The Sessions screen's P: prune old ended sessions after naming them, as ``sessions prune`` does."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Static

from engine import open_home
from tests.screens_seed import open_mode, screen_text
from tests.tui_support import make_app, settle, wait_for
from workbench.screens.sessions import SessionsScreen

pytestmark = pytest.mark.anyio


def aged(home, clock) -> None:
    """old_a ended and old_b live, both started 100 days before now; new_c ended today."""
    archive = home.archive
    archive.create_session("old_a", title="Kettle talk")
    archive.append_message("old_a", "user", "how long to steep 煎茶?")
    archive.end_session("old_a", "done")
    archive.create_session("old_b", title="Teapot talk")
    clock.advance(100 * 86400)
    archive.create_session("new_c")
    archive.end_session("new_c", "done")


async def asked(pilot, days: str) -> None:
    """P, then ``days`` entered in its box."""
    await pilot.press("P")
    await wait_for(pilot, lambda: pilot.app.screen.__class__.__name__ == "LineDialog", what="the days box")
    pilot.app.screen.query_one(Input).value = days
    await pilot.press("enter")
    await settle(pilot)


async def one_asked_about(pilot) -> None:
    """A prune of what is older than 90 days asked, its question naming one session."""
    await asked(pilot, "90")
    await wait_for(pilot, lambda: "Prune 1 ended session?" in screen_text(pilot.app), what="the question")


async def test_p_names_what_a_prune_takes_and_deletes_it_on_yes(home, clock, tmp_path):
    """The TUI had no prune: old sessions could only be cleared with ``workbench sessions prune``."""
    aged(home, clock)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_mode(pilot, "2", SessionsScreen)
        await one_asked_about(pilot)
        # the question's words, unwrapped (a wrapped line hangs under its first words: ``widgets.literal.hanging``)
        text = " ".join(" ".join(str(said.render()) for said in app.screen.query(Static)).split())
        assert "started more than 90 days ago, with their messages: old_a (Kettle talk)." in text
        assert "old_b has not ended (live)" in text and "new_c" not in text  # (prune_warnings: it stays)
        assert "cannot be undone" in text
        await pilot.press("y")
        await wait_for(pilot, lambda: home.archive.get_session("old_a") is None, what="the prune")
        assert {s.id for s in home.archive.list_sessions()} == {"old_b", "new_c"}
        status = screen.query_one("#status")
        await wait_for(pilot, lambda: "Pruned 1 session." in str(status.render()), what="the notice")
        [row] = [e for e in home.journal.query(subsystem="sessions") if e.action == "prune"]
        assert row.actor == "user" and row.detail["deleted"] == ["old_a"]


async def test_a_days_value_it_cannot_take_is_asked_again_and_nothing_goes(home, clock, tmp_path):
    """Only digits 0-9 are days: 1_0 and Arabic-Indic digits were read as 10 (Python's float() syntax)."""
    aged(home, clock)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_mode(pilot, "2", SessionsScreen)
        await asked(pilot, "ninety")
        for typed, said in (
            ("ninety", "'ninety' is not a number of days: type it with the digits 0-9"),
            ("1_0", "'1_0' is not a number of days"),  # (float() read these as 10: a prune of 10 days asked)
            ("١٠", "'١٠' is not a number of days"),
            ("inf", "'inf' is not a number of days"),
            ("99999999999", "99999999999 is out of range"),
            ("-1", "-1 is out of range"),
        ):
            app.screen.query_one(Input).value = typed
            await pilot.press("enter")
            await wait_for(pilot, lambda said=said: said in screen_text(app), what=said)
            assert app.screen.__class__.__name__ == "LineDialog" and app.screen.query_one(Input).value == typed
        await pilot.press("escape")
        await asked(pilot, "365")
        assert "No ended session is older than 365 days; nothing to prune." in screen_text(app)
        assert len(home.archive.list_sessions()) == 3


async def test_only_the_sessions_the_question_named_are_pruned(home, clock, tmp_path):
    """A session that ended while the question was open was pruned unasked; one resumed meanwhile is
    left, and the notice says so."""
    aged(home, clock)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_mode(pilot, "2", SessionsScreen)
        await one_asked_about(pilot)
        hermes = open_home(home.root)
        try:
            hermes.archive.end_session("old_b", "done")  # Hermes ends the old live one meanwhile
            await pilot.press("y")
            await wait_for(pilot, lambda: home.archive.get_session("old_a") is None, what="the prune")
            assert home.archive.get_session("old_b") is not None
            await one_asked_about(pilot)  # old_b, ended now
            hermes.archive.reopen_session("old_b")  # and resumes it before the answer
        finally:
            hermes.close()
        await pilot.press("y")
        status = screen.query_one("#status")
        said = "Pruned 0 sessions. 1 of those asked about had been resumed or deleted meanwhile."
        await wait_for(pilot, lambda: said in str(status.render()), what="the notice")
        assert home.archive.get_session("old_b").ended_at is None


async def test_source_after_the_days_prunes_that_sources_sessions_only(home, clock, tmp_path):
    """P had no way to give the CLI's --source: ``90 source:telegram`` now keeps the prune to it."""
    archive = home.archive
    for session_id, source in (("old_cli", "cli"), ("old_tg", "telegram")):
        archive.create_session(session_id, source=source)
        archive.end_session(session_id, "done")
    clock.advance(100 * 86400)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "2", SessionsScreen)
        await asked(pilot, "90 source:telegram source:cli")
        said = "give one source after source: (90 source:cli), or none for every source."
        error = app.screen.query_one("#line-error", Static)
        await wait_for(pilot, lambda: str(error.render()) == said, what="the refusal")
        app.screen.query_one(Input).value = "90 source:nowhere"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is screen, what="the days box closed")
        status = screen.query_one("#status")
        nothing = "No ended session from nowhere is older than 90 days; nothing to prune."
        await wait_for(pilot, lambda: nothing in str(status.render()), what="the notice")
        await asked(pilot, "90 Source:telegram")
        await wait_for(pilot, lambda: "Prune 1 ended session from telegram?" in screen_text(app), what="the question")
        await pilot.press("y")
        await wait_for(pilot, lambda: archive.get_session("old_tg") is None, what="the prune")
        assert archive.get_session("old_cli") is not None
        [row] = [e for e in home.journal.query(subsystem="sessions") if e.action == "prune"]
        assert row.detail["source"] == "telegram" and row.detail["deleted"] == ["old_tg"]
