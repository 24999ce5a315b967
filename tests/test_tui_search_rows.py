"""Search hit rows on the Sessions screen keep their whole match: the head gives way, never the match."""

from __future__ import annotations

import pytest
from rich.cells import cell_len

from tests.screens_seed import open_mode
from tests.tui_support import make_app, settle, wait_for
from widgets.search_results import Hit, SearchResults, hit_prompt
from workbench.screens.sessions import SessionsScreen

TEA = "Tea or coffee? I really like coffee, 我喜欢喝绿茶."  # the match at the snippet's end
MEETING = '{"result": {"text": "明日に会議がある"}}'  # a Hermes tool result
SNIPPETS = [
    (TEA, "绿茶"),
    ("…" + TEA + "…", "绿茶"),  # the archive's own ellipses around its snippet
    (TEA + " And more text after it, " * 3, "绿茶"),
    (MEETING, "会議"),
    ("x" * 60 + "数据库迁移" + "y" * 60, "数据库迁移"),
    ("x" * 30 + "数据库迁移计划" + "y" * 30, "数据库迁移计划"),  # 14 cells: at 80x24 the role gives way
    ("前後の文脈" * 8 + "我喜欢喝绿茶", "我喜欢喝绿茶"),  # a long CJK match, CJK before it
    ("\u202e\x9b" * 6 + "coffee, 绿茶 ok", "绿茶"),  # controls shown as longer symbols before the match
]
ROLES = [("user", 9), ("assistant", 1234567), ("\x1b]0;owned\x07" + "x" * 40, 12), ("tool", None)]


def matched(prompt) -> list[str]:
    """The styled ranges of a row (its match), as text."""
    return [prompt.plain[span.start : span.end] for span in prompt.spans if "warning" in str(span.style)]


@pytest.mark.parametrize(("snippet", "match"), SNIPPETS)
@pytest.mark.parametrize(("role", "message_id"), ROLES)
@pytest.mark.parametrize("indent", ["  ", "    "])
def test_a_hit_row_shows_its_whole_match_at_every_width(snippet, match, role, message_id, indent):
    """``user  …fee, 我喜欢喝绿…`` at 80x24: a match at the end of the snippet lost its last
    character to a closing ``…`` it did not need. The head (id, then role) gives way instead."""
    start = snippet.index(match)
    hit = Hit("s", "s", None, message_id, snippet, spans=((start, start + len(match)),), role=role)
    for width in range(len(indent) + 2 + cell_len(match) + 2, 80):  # down to the role's initial and the match
        prompt = hit_prompt(hit, width, indent)
        assert cell_len(prompt.plain) <= width, (width, prompt.plain)
        assert matched(prompt)[:1] == [match], (width, prompt.plain)
        assert not any(c in prompt.plain for c in "\x1b\x07\x9b\u202e"), prompt.plain  # shown as symbols


@pytest.mark.anyio
@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_unfolded_hits_keep_their_whole_match_on_screen(home, tmp_path, size):
    """Unfolded, 40 hits bring a scrollbar that narrows the list by two cells without a resize:
    rows cut for the wider list were cropped at the right, and a match at their end with them."""
    session = "20261101_000001_aaaaaa"
    home.archive.create_session(session, source="cli", title="Tea talk")
    for n in range(40):
        home.archive.append_message(session, "assistant" if n % 2 else "user", f"Round {n}. {TEA}")
    app = make_app(home, tmp_path)
    async with app.run_test(size=size) as pilot:
        screen = await open_mode(pilot, "2", SessionsScreen)
        await pilot.press("slash", *"绿茶")
        results = screen.query_one(SearchResults)
        await wait_for(pilot, lambda: results.query == "绿茶" and results.hits, what="search hits")
        await pilot.press("tab", "right")
        await wait_for(pilot, lambda: results.expanded.get(session), what="the session's hits")
        await settle(pilot)
        assert results.show_vertical_scrollbar
        rows = [results.render_line(y).text for y in range(1, results.size.height)]
        assert len(rows) > 10 and all(row.startswith(("    u", "    a")) for row in rows)
        assert all("我喜欢喝绿茶" in row for row in rows), rows
