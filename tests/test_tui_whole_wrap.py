"""Text Textual folds itself (a transcript message, a dialog's note) parted what a reader sees as one:
half-width ﾃﾞ is a letter and a voiced mark, and the fold at a line's end started the next line with the
mark alone; ``<U+202E>`` (a shown bidi override) read as two symbols. Drawn through ``WholeWrap``, each
line starts with a whole grapheme and a whole symbol, at every width."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Static

from tests.tui_support import FOLDS, parted, settle
from widgets.literal import WholeWrap, literal
from widgets.transcript import Transcript, TranscriptItem

pytestmark = pytest.mark.anyio


class Shown(App):
    def compose(self) -> ComposeResult:
        yield Transcript()
        yield Static(WholeWrap(literal(FOLDS)), id="note")


@pytest.mark.parametrize("width", range(24, 44, 3))
async def test_a_folded_line_never_starts_inside_a_grapheme_or_a_symbol(width):
    app = Shown()
    async with app.run_test(size=(width, 40)) as pilot:
        app.query_one(Transcript).set_items([TranscriptItem(role="user", content=FOLDS)])
        await settle(pilot)
        lines = [strip.text for strip in app.screen._compositor.render_strips()]
        shown = "".join(lines)
        assert "ﾃﾞﾌﾟﾛｲ" in shown and "<U+202E>" in shown, lines  # (both drawn, folded over lines)
        assert not parted(lines), (width, lines)
