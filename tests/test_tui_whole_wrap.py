"""Text Textual folds itself (a transcript message, a dialog's note) parted what a reader sees as one:
half-width ﾃﾞ is a letter and a voiced mark, and the fold at a line's end started the next line with the
mark alone; ``<U+202E>`` (a shown bidi override) read as two symbols. Drawn through ``WholeWrap``, each
line starts with a whole grapheme and a whole symbol, at every width."""

from __future__ import annotations

import re

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Static

from tests.tui_support import settle
from widgets.literal import WholeWrap, literal
from widgets.transcript import Transcript, TranscriptItem

pytestmark = pytest.mark.anyio

TEXT = "deploy " + "ﾃﾞﾌﾟﾛｲ" * 9 + " then " + "x\u202e" * 9 + " done"
MARKS = "\uff9e\uff9f"  # the half-width voiced and semi-voiced marks
HALF_SYMBOL = re.compile(r"^[0-9A-F+U]*>|<U?\+?[0-9A-F]{0,4}$")  # the start or the end of a parted <U+202E>
EDGES = " │╭╮╰╯─▌▎┃"


class Shown(App):
    def compose(self) -> ComposeResult:
        yield Transcript()
        yield Static(WholeWrap(literal(TEXT)), id="note")


def inner(line: str) -> str:
    return line.strip(EDGES)


@pytest.mark.parametrize("width", range(24, 44, 3))
async def test_a_folded_line_never_starts_inside_a_grapheme_or_a_symbol(width):
    app = Shown()
    async with app.run_test(size=(width, 40)) as pilot:
        app.query_one(Transcript).set_items([TranscriptItem(role="user", content=TEXT)])
        await settle(pilot)
        lines = [inner(strip.text) for strip in app.screen._compositor.render_strips()]
        shown = "".join(lines)
        assert "ﾃﾞﾌﾟﾛｲ" in shown and "<U+202E>" in shown, lines  # (both drawn, folded over lines)
        for line in filter(None, lines):
            assert line[0] not in MARKS and not HALF_SYMBOL.search(line), (width, lines)
