"""The demo explains itself: a narration line driven by engine events, off outside the demo."""

from __future__ import annotations

import threading

import pytest

from engine.demo import seed_demo_home
from engine.events import MemoryChanged, PendingChanged, RunnerEvent
from tests.tui_support import make_app, settle, wait_for
from widgets.narration import NarrationLine, Narrator, Story

pytestmark = pytest.mark.anyio


async def test_the_demo_narrates_what_happens_and_f3_hides_it(home, tmp_path):
    seed_demo_home(home)
    app = make_app(home, tmp_path, demo_speed=0)
    said: list[Story] = []
    async with app.run_test(size=(100, 30)) as pilot:
        app.watch(app, "narration", lambda story: said.append(story) if story else None, init=False)
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
        assert app.narration is None and not line.display
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
        assert app.narration is None and not app.screen.query_one(NarrationLine).display


async def test_the_demo_tells_its_whole_story(home, tmp_path):
    seed_demo_home(home)
    app = make_app(home, tmp_path, demo_speed=0)
    async with app.run_test(size=(80, 24)) as pilot:
        story = {"full:memory", "drift", "compression", "skill"}
        await wait_for(
            pilot, lambda: story <= (app._narrator.said if app._narrator else set()), timeout=60, what="every line"
        )
        line = app.screen.query_one(NarrationLine)
        assert line.display and str(line.content).startswith("f3 ✕")  # the way to hide it is never cut


def test_a_proposed_skill_is_told_by_who_proposed_it():
    def told(actor: str) -> Story | None:
        return Narrator(lambda target: (0, 2200)).line(
            PendingChanged(actor=actor, subsystem="skills", pending_id="0a0a0a0a", action="staged"), True
        )

    assert told("review").away == "The review proposed a skill change: press 4 to approve it."
    assert told("review").on("approvals") == "The review proposed a skill change: approve it here."
    assert told("curator").away.startswith("The Curator proposed") and told("agent").away.startswith("The agent")


async def test_the_demo_flushes_before_its_compression_and_a_review_learns_the_name_on_its_thread(home, tmp_path):
    """Issue 13's demo: in the TUI, a flush precedes the compression, and a background review, on
    the review thread rather than the demo's turn thread, learns the user's name while the header says so."""
    seed_demo_home(home)
    events: list[tuple[str, str, str, dict]] = []  # (kind, actor, thread, data) as the engine published them
    home.bus.subscribe(lambda e: events.append((e.kind, e.actor, threading.current_thread().name, e.data)), RunnerEvent)
    app = make_app(home, tmp_path, demo_speed=0)
    statuses: list[str] = []
    # watched from the start: a watch set once the app runs missed the first "reviewing…" under load
    app.watch_review_status = lambda text: statuses.append(text)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(
            pilot, lambda: any(k == "session_rotated" for k, *_ in events), timeout=60, what="the compression"
        )
        kinds = [kind for kind, *_ in events]
        assert kinds.index("flush_finished") < kinds.index("session_rotated")
        flushed = next(data for kind, _, _, data in events if kind == "flush_finished")
        assert "User prefers small batches with pauses over one big run for backfills." in flushed["saved"]
        learned = [
            (thread, data)
            for kind, actor, thread, data in events
            if kind == "review_finished" and actor == "review" and "User's name is Maya." in data["summary"]
        ]
        assert learned, "no review learned the user's name"
        review_thread = learned[0][0]
        turn_threads = {thread for kind, _, thread, _ in events if kind == "turn_finished"}
        assert review_thread not in turn_threads  # the review ran beside the turns, not inside one
        assert "reviewing\u2026" in statuses
        assert any(s.startswith("review: User profile + \u201cUser's name is Maya.\u201d") for s in statuses)
        assert "User's name is Maya." in home.memory.entries("user")
        app._demo_cancel.set()


async def test_a_story_says_press_n_only_away_from_screen_n(home, tmp_path):
    """The drift line said "press 1 to compare them" on screen 1 itself: there it now says what to look at."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.narration = Narrator(lambda target: (0, 2200)).line(MemoryChanged(actor="agent", target="memory"), True)
        await settle(pilot)
        assert str(app.screen.query_one(NarrationLine).content).endswith("live memory: compare the columns.")
        await pilot.press("2")
        await settle(pilot)
        assert str(app.screen.query_one(NarrationLine).content).endswith("live memory: press 1 to compare them.")


async def test_a_story_about_waiting_approvals_goes_once_none_wait(home, tmp_path):
    """'The agent proposed a skill change: approve it here.' stayed after approve-all left 0 pending."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        staged = home.approvals.stage(
            subsystem="memory",
            action="add",
            summary="add to MEMORY: Deploys run on Fridays",
            origin="foreground",
            payload={"action": "add", "target": "memory", "content": "Deploys run on Fridays"},
            actor="agent",
        )
        app.narration = Narrator(lambda target: (0, 2200)).line(
            PendingChanged(actor="agent", subsystem="memory", pending_id=staged.id, action="staged"), True
        )
        await wait_for(pilot, lambda: app.pending_count == 1, what="one pending")
        assert app.narration is not None  # still true: one waits
        assert home.approvals.approve(staged.id)["success"]
        await wait_for(pilot, lambda: app.pending_count == 0, what="none pending")
        await settle(pilot)
        assert app.narration is None and not app.screen.query_one(NarrationLine).display


async def test_the_narration_stops_when_the_demo_ends_and_its_last_line_goes(home, tmp_path):
    """The last story line stayed up for good after the demo finished, and later changes (the
    user's own) went on being narrated as if the demo still played."""
    seed_demo_home(home)
    app = make_app(home, tmp_path, demo_speed=0)
    app.NARRATION_LINGER = 3
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: any(n.title == "Demo finished" for n in app._notifications), timeout=60)
        await settle(pilot)
        last = app.narration
        used, limit = home.memory.usage("user").chars, home.memory.limit("user")
        filler = " ".join(["User likes green tea"] * ((int(limit * 0.9) - used) // 21))
        result = home.memory.add("user", filler, None)  # USER passing 80%: a story the demo never tells
        assert result["success"], result
        await settle(pilot)
        assert app.narration == last and "full:user" not in app._narrator.said  # not told after the demo
        line = app.screen.query_one(NarrationLine)
        await wait_for(pilot, lambda: app.narration is None and not line.display, what="the last line to go")
