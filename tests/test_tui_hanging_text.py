"""A dialog's list (``HangingText``) is wrapped once, by ``hanging``: each line it makes fits the width, so
Textual has nothing to fold again, and what is drawn is every character of the text, in order."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult

from tests.tui_support import drawn_in, settle
from widgets.hanging_text import HangingText
from widgets.literal import hanging

pytestmark = pytest.mark.anyio

TEXTS = {
    "tab": "key:\tvalue one two three four five six seven",  # Textual spaced the tab out after it was measured
    "deep": " " * 30 + "an item indented past the width",  # its text had no cells left beside the indent
    "cjk": "- " + "x" * 20 + "漢字かな交じりの文 and more words",  # a wide character at the line's end
    "exact": "y" * 24 + "\n  - " + "z" * 20,  # lines just at the width
}


class Listed(App):
    CSS = "HangingText { width: 24; }"

    def compose(self) -> ComposeResult:
        for key, text in TEXTS.items():
            yield HangingText(text, id=key)


def words(text: str) -> list[str]:
    return "".join(text.split()).replace("\t", "")


@pytest.mark.parametrize("width", [3, 8, 13, 24, 40])
def test_every_line_fits_and_no_character_is_lost(width):
    for text in TEXTS.values():
        lines = [line.plain for line in hanging(text, width)]
        assert all(line.cell_length <= max(width, 2) for line in hanging(text, width)), (width, lines)
        assert words("".join(lines)) == words(text), (width, lines)


async def test_what_is_drawn_is_what_hanging_made():
    app = Listed()
    async with app.run_test(size=(40, 40)) as pilot:
        await settle(pilot)
        for key, text in TEXTS.items():
            widget = app.query_one(f"#{key}", HangingText)
            drawn = [line.rstrip() for line in drawn_in(widget)]
            assert drawn == [line.plain for line in hanging(text, 24)], (key, drawn)
            assert words("".join(drawn)) == words(text), (key, drawn)
