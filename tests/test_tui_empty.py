"""On an empty home every screen says, in full, what would appear there and how to make it happen."""

from __future__ import annotations

import pytest

from tests.tui_support import drawn_in, make_app, settle, wait_for
from workbench.screens.timeline import empty_state

pytestmark = pytest.mark.anyio

# (mode key, the widget holding the empty state, what it says)
EMPTY_STATES = (
    ("1", "#live-list", "(no entries; press a to add)"),
    ("2", "#sessions-transcript", "No sessions in this home yet: talk to the agent on the Run screen (5)"),
    ("3", "#skills-code", "No skills in this home yet. The agent writes them with skill_manage"),
    ("4", "#queue", "Nothing waits for approval. Writes are queued for approval with memory.write_approval"),
    ("5", "#run-transcript", "Type a message below, or pick a scenario and press ctrl+g."),
    ("6", "#timeline-detail", empty_state("")),
)


def words_in(app, selector: str) -> str:
    """The text drawn inside one widget's region, its lines joined with single spaces."""
    drawn = " ".join(drawn_in(app.screen.query_one(selector)))
    return " ".join("".join(" " if ch in "│╭╮╰╯─▕▊▎▔▁▌" else ch for ch in drawn).split())


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_every_screen_of_an_empty_home_says_what_would_be_there(home, tmp_path, size):
    app = make_app(home, tmp_path)
    async with app.run_test(size=size) as pilot:
        for key, selector, text in EMPTY_STATES:
            await pilot.press(key)
            await wait_for(pilot, lambda: text in words_in(app, selector), what=f"{text!r} on screen {key}")
            if key == "5":
                await pilot.press("escape")  # out of the message box, where a digit is text


async def test_a_timeline_search_that_finds_nothing_says_how_to_see_everything(home, tmp_path):
    home.memory.add("memory", "Uses Postgres 16", None)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("6")
        await settle(pilot)
        assert "Postgres" in words_in(app, "#timeline-list")
        await pilot.press("slash", *"nothing-like-it")
        await settle(pilot)
        assert "No change matches 'nothing-like-it'; clear the search" in words_in(app, "#timeline-detail")
