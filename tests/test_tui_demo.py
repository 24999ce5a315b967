"""The demo explains itself: a narration line driven by engine events, off outside the demo."""

from __future__ import annotations

import pytest

from engine.demo import seed_demo_home
from tests.tui_support import make_app, settle, wait_for
from widgets.narration import NarrationLine

pytestmark = pytest.mark.anyio


async def test_the_demo_narrates_what_happens_and_f3_hides_it(home, tmp_path):
    seed_demo_home(home)
    app = make_app(home, tmp_path, demo_speed=0)
    said: list[str] = []
    async with app.run_test(size=(100, 30)) as pilot:
        app.watch(app, "narration", lambda text: said.append(text) if text else None, init=False)
        # the demo plays on its own thread and may narrate before the watcher above is attached
        await wait_for(
            pilot,
            lambda: app._narrator is not None and "drift" in app._narrator.said,
            timeout=30,
            what="the drift line",
        )
        line = app.screen.query_one(NarrationLine)
        await wait_for(pilot, lambda: line.display and "press" in str(line.content), what="the line shown")
        await pilot.press("f3")
        await settle(pilot)
        assert app.narration == "" and not line.display
        count = len(said)
        home.memory.add("memory", "A note after hiding", None)
        await settle(pilot)
        assert len(said) == count  # hidden for good


async def test_no_narration_outside_the_demo(home, tmp_path):
    seed_demo_home(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        for _ in range(3):
            home.memory.add("memory", "x" * 500, None)
        await settle(pilot)
        assert app.narration == "" and not app.screen.query_one(NarrationLine).display
