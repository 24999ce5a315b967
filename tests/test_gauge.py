"""The capacity gauge's bar: the same fill draws the same on gauges a column apart in width."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult

from widgets.gauge import CapacityGauge

pytestmark = pytest.mark.anyio


class _Two(App):
    CSS = "#a { width: 57; } #b { width: 58; }"  # bars of 45 and 46 cells beside " 72/2,200 3%"

    def compose(self) -> ComposeResult:
        yield CapacityGauge(72, 2200, id="a")
        yield CapacityGauge(72, 2200, id="b")


async def test_the_frozen_and_live_gauges_of_one_fill_draw_alike():
    """72 of 2,200 chars (3%) drew one block on the Memory screen's frozen side and two on the live
    side, whose column is one cell wider (user trial): the fill was rounded, 1.47 and 1.5 cells."""
    app = _Two()
    async with app.run_test(size=(80, 5)) as pilot:
        await pilot.pause()
        bars = [str(app.query_one(f"#{name}", CapacityGauge).render()).count("█") for name in "ab"]
    assert bars == [1, 1]


async def test_a_bar_never_shows_more_than_is_used_and_any_use_shows():
    app = _Two()
    async with app.run_test(size=(80, 5)) as pilot:
        gauge = app.query_one("#a", CapacityGauge)
        gauge.used, gauge.limit = 1, 2200  # a single character still shows
        await pilot.pause()
        assert str(gauge.render()).count("█") == 1
        gauge.used, gauge.ghost = 2199, 5  # nearly full (never drawn full), with a pending write over the limit
        await pilot.pause()
        drawn = str(gauge.render())
        filled, ghost, bar = drawn.count("█"), drawn.count("▒"), sum(drawn.count(c) for c in "█▒░")
        assert (filled, ghost) == (bar - 1, 1)
        gauge.used, gauge.ghost = 1000, 3  # a pending write too small for a cell of its own still shows
        await pilot.pause()
        assert str(gauge.render()).count("▒") == 1


async def test_a_gauge_says_it_is_loading_until_it_has_a_figure():
    """The Memory screen's gauges read 0/1 0% for the seconds a 10 MB file took to list: a figure
    nobody measured. Until its screen sets one, a gauge says it is loading."""
    app = _Two()
    async with app.run_test(size=(80, 5)) as pilot:
        fresh = CapacityGauge(id="c")
        await app.mount(fresh)
        await pilot.pause()
        assert str(fresh.render()) == "loading…"
        fresh.used, fresh.limit = 72, 2200
        await pilot.pause()
        assert str(fresh.render()).endswith(" 72/2,200 3%")
