"""The header's review indicator: "reviewing…" while a background review runs, then its result line."""

from __future__ import annotations

import threading

import pytest

from engine.models import OfflineModel
from tests.screens_seed import open_mode
from tests.tui_support import make_app, wait_for
from widgets.header import WorkbenchHeader
from workbench.screens.run import RunScreen

pytestmark = pytest.mark.anyio


class HeldReview(OfflineModel):
    """The offline model, whose review waits until the test lets it go."""

    def __init__(self):
        self.in_review, self.release = threading.Event(), threading.Event()

    def complete(self, messages, tools):
        if str(messages[-1].get("content", "")).startswith("Review the conversation above"):
            self.in_review.set()
            self.release.wait(10)
        return super().complete(messages, tools)


async def test_a_typed_turn_is_reviewed_on_its_thread_and_the_header_says_so(home, tmp_path, monkeypatch):
    home.config_path.write_text(
        "memory:\n  nudge_interval: 1\nskills:\n  creation_nudge_interval: 0\n", encoding="utf-8"
    )
    home.reload_config()
    model = HeldReview()
    monkeypatch.setattr("workbench.screens.run.make_model", lambda home, name: model)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(160, 24)) as pilot:
        screen = await open_mode(pilot, "5", RunScreen)
        await pilot.press(*"Hi, I'm Lin and I work on the billing service", "enter")
        await wait_for(pilot, lambda: screen.session_id is not None and not screen.running, what="the answer")
        header = screen.query_one(WorkbenchHeader)
        await wait_for(pilot, lambda: header.review == "reviewing\u2026", what="reviewing…")
        assert model.in_review.is_set() and home.memory.entries("user") == []  # the answer came first
        model.release.set()
        await wait_for(
            pilot,
            lambda: header.review.startswith("review: User profile + \u201cUser's name is Lin.\u201d"),
            what="the review's result line",
        )
        assert "the user gave their name" in header.review and "reviewing" not in header.render().plain
        assert home.memory.entries("user") == ["User's name is Lin.", "User works on the billing service."]


async def test_a_new_session_in_the_run_screen_keeps_the_agent_and_tells_the_provider(home, tmp_path, monkeypatch):
    from tests.test_runner_provider_lifecycle import Recorder

    provider = Recorder()
    monkeypatch.setattr("engine.runner.session.configured_providers", lambda home, warnings: [provider])
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 24)) as pilot:
        screen = await open_mode(pilot, "5", RunScreen)
        await pilot.press(*"remember that the office is in Leeds", "enter")
        await wait_for(pilot, lambda: screen.session_id is not None and not screen.running, what="first turn")
        first_id, agent = screen.session_id, screen.agent.agent  # the Conversation's AgentSession
        await pilot.press("ctrl+l", *"what did we discuss about Leeds?", "enter")
        await wait_for(
            pilot,
            lambda: screen.session_id not in (None, first_id) and not screen.running,
            what="a turn in the new session",
        )
        assert screen.agent.agent is agent and agent.manager.flush_pending(5)
        hooks = provider.hooks()
        assert hooks.count("initialize") == 1
        assert [e[1] for e in provider.log if e[0] == "on_session_switch"] == ["new_session"]
        assert hooks.index("on_session_end") < hooks.index("on_session_switch")
