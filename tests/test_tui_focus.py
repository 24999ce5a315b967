"""Input is never lost and the focus is always visible: Run input rules, Memory columns, dialogs."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Select

from tests.screens_seed import open_mode
from tests.tui_support import make_app, settle, wait_for
from widgets.transcript import Transcript
from workbench.screens.run import RunScreen

pytestmark = pytest.mark.anyio


def focused_id(app) -> str | None:
    return app.focused.id if app.focused is not None else None


async def test_the_message_box_has_the_focus_after_every_run_action(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "5", RunScreen)
        assert focused_id(app) == "run-input"
        await pilot.press(*"hello", "enter")
        await wait_for(pilot, lambda: screen.session_id is not None and not screen.running, what="turn finished")
        await settle(pilot)
        assert focused_id(app) == "run-input"
        first = screen.session_id
        screen.query_one(Transcript).focus()
        await pilot.press("ctrl+l")
        await settle(pilot)
        assert focused_id(app) == "run-input" and screen.session_id is None
        screen.query_one(Transcript).focus()
        await pilot.press("ctrl+o")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert focused_id(app) == "run-input"
        model = screen.query_one("#run-model", Select)
        model.focus()
        model.value = "scripted"
        await settle(pilot)
        assert focused_id(app) == "run-input"
        assert first


async def test_printable_keys_typed_in_other_panes_reach_the_message_box(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "5", RunScreen)
        box = screen.query_one("#run-input", Input)
        screen.query_one(Transcript).focus()
        await pilot.press(*"hello")  # h, e, l, o: none of them is a transcript key
        assert box.value == "hello" and app.focused is box
        screen.query_one("#run-model", Select).focus()
        await pilot.press("x", "y")
        assert box.value == "helloxy" and app.focused is box
        screen.query_one(Transcript).focus()
        await pilot.press("j")  # a transcript key stays a transcript key
        assert box.value == "helloxy" and app.focused is screen.query_one(Transcript)


async def test_a_resumed_session_gets_the_next_turn(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "5", RunScreen)
        await pilot.press(*"first words", "enter")
        await wait_for(pilot, lambda: screen.session_id is not None and not screen.running, what="turn finished")
        first = screen.session_id
        await pilot.press("ctrl+l")
        await pilot.press(*"another session", "enter")
        await wait_for(pilot, lambda: screen.session_id not in (None, first) and not screen.running, what="turn 2")
        await settle(pilot)
        await pilot.press("ctrl+o")
        await settle(pilot)
        await pilot.press("ctrl+a", "ctrl+k", *first, "ctrl+s")
        await wait_for(pilot, lambda: screen.session_id == first, what="resumed")
        await settle(pilot)
        assert focused_id(app) == "run-input"
        await pilot.press(*"back again", "enter")
        await wait_for(pilot, lambda: not screen.running, what="turn 3")
        await settle(pilot)
        users = [m.content for m in home.archive.messages(first) if m.role == "user"]
        assert users == ["first words", "back again"]
