"""A Timeline page filtered by ``actor:agent`` looks up each outside memory write's Hermes call, so it
reads candidates batch after batch; with no bound, 100,000 hand edits and no agent row were all read for
one empty page. Each page now reads at most ``EXAMINED`` rows and says how far it read, with the way to
read on: ``Older:`` in the CLI (``stopped`` in --json), ``m`` on the Timeline screen. Counts, not seconds."""

from __future__ import annotations

import json

import pytest
from textual.widgets import Input, Static

from engine.timeline import Timeline
from tests.screens_seed import open_mode
from tests.tui_support import footer_keys, make_app, settle, wait_for
from widgets.timeline_list import TimelineList
from workbench.screens.timeline import TimelineScreen

EXAMINED = 5000  # engine.timeline.EXAMINED, as the notes say it
HAND_EDITS = 2 * EXAMINED + 500  # after the agent's one row: two full pages of reading, and a bit


def journal(home) -> None:
    """The agent's one write, then ``HAND_EDITS`` outside ones (each a candidate for actor:agent)."""
    home.journal.append_all("memory", "memory", [{"action": "add", "after": "The agent's note"}], actor="agent")
    edits = [{"action": "add", "after": f"Hand note {n}", "detail": {"index": 0}} for n in range(HAND_EDITS)]
    home.journal.append_all("memory", "memory", edits, actor="external")


def test_a_page_reads_at_most_so_many_candidates_and_says_where_it_stopped(home):
    journal(home)
    timeline = Timeline(home)
    newest = HAND_EDITS + 1
    assert timeline.page(actor="agent", limit=50) == []
    assert timeline.reach is not None and (timeline.reach.examined, timeline.reach.oldest_id) == (
        EXAMINED,
        newest - EXAMINED + 1,
    )
    assert timeline.reach.note(0).startswith(f"None of the 5,000 rows read (down to row {newest - EXAMINED + 1:,})")
    assert timeline.page(actor="agent", limit=50, before_id=timeline.reach.oldest_id) == []
    [row] = timeline.page(actor="agent", limit=50, before_id=timeline.reach.oldest_id)
    assert row.summary == 'MEMORY + "The agent\'s note"' and timeline.reach is None  # read to the start: no more
    assert len(timeline.page(actor="external", limit=50)) == 50 and timeline.reach is None  # a page that filled


def test_the_cli_says_how_far_it_read_and_its_older_command_reads_on(home, cli):
    journal(home)
    home.close()
    data = json.loads(cli("timeline", "--actor", "agent", "--json").stdout)
    stopped = data["stopped"]  # (the listing's catch-up journals a first look at MEMORY.md: one row more)
    assert data["rows"] == [] and stopped["examined"] == EXAMINED and stopped["oldest_id"] > HAND_EDITS - EXAMINED
    first = cli("timeline", "--actor", "agent")
    *_, note, older = first.stdout.splitlines()
    assert first.returncode == 0 and note == stopped["note"]
    assert note.startswith(f"None of the 5,000 rows read (down to row {stopped['oldest_id']:,})")
    assert older == f"Older: workbench timeline --actor agent --before {stopped['oldest_id']}"
    second = cli(*older.split()[2:])
    assert second.stdout.startswith("None of the 5,000 rows read") and "The agent's note" not in second.stdout
    third = cli(*second.stdout.splitlines()[-1].split()[2:])
    assert "The agent's note" in third.stdout and "rows read" not in third.stdout and "Older:" not in third.stdout


@pytest.mark.anyio
async def test_the_timeline_screen_says_how_far_it_read_and_m_reads_on(home, tmp_path):
    """The list asks for older rows as its cursor nears the end: with an agent row on the first page, it
    asked again and again past the reach, so the screen read every row after all. Only m reads on."""
    journal(home)
    home.journal.append_all("memory", "memory", [{"action": "add", "after": "The agent's newest"}], actor="agent")
    async with make_app(home, tmp_path).run_test(size=(100, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        screen.query_one("#timeline-search", Input).value = "actor:agent"
        detail = lambda: str(screen.query_one("#timeline-detail", Static).render())  # noqa: E731
        await wait_for(pilot, lambda: screen.reach is not None, timeout=60, what="the first page")
        first, newest = screen.reach.oldest_id, HAND_EDITS + 2
        assert [r.id for r in screen.rows] == [newest]
        assert screen.table.border_subtitle == f"read down to row {first:,} · m reads on"  # (the status line fades)
        screen.query_one(TimelineList).focus()
        await settle(pilot)
        await pilot.press("down", "up")  # (the cursor on the last row: the list asks for more)
        await settle(pilot)
        assert screen.reach is not None and screen.reach.oldest_id == first, "read on with no m"
        await pilot.press("m")
        await wait_for(pilot, lambda: screen.reach.oldest_id < first, timeout=60, what="page two")
        assert f"None of the 5,000 rows read (down to row {first - EXAMINED:,})" in detail() + status(screen)
        await pilot.press("m")
        await wait_for(pilot, lambda: [r.id for r in screen.rows] == [newest, 1], timeout=60, what="the agent's row")
        assert screen.reach is None and screen.table.border_subtitle == ""


def status(screen) -> str:
    return str(screen.query_one("#status", Static).render())


@pytest.mark.anyio
@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_page_that_stopped_with_no_rows_shows_only_keys_that_act(home, tmp_path, size):
    """The footer still offered space Fold and g Message (and r Revert) over an empty list that stopped
    at its read bound: keys that do nothing there. It shows m More, which reads on, and not those."""
    journal(home)
    async with make_app(home, tmp_path).run_test(size=size) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        acting = ("space", "g", "r", "m")
        assert set(await footer_keys(pilot, *acting)) == {"space", "g", "r"}  # (rows listed: they act)
        screen.query_one("#timeline-search", Input).value = "actor:agent"
        await wait_for(pilot, lambda: screen.reach is not None, timeout=60, what="the first page")
        screen.query_one(TimelineList).focus()
        assert screen.rows == [] and await footer_keys(pilot, *acting) == {"m": True}
        for _ in range(2):  # (two more pages read: the agent's row is on the last)
            await pilot.press("m")
            await wait_for(pilot, lambda: not screen.loading_more, timeout=60, what="the next page")
        assert screen.rows
        assert await footer_keys(pilot, *acting) == {"space": False, "g": False, "r": True}
