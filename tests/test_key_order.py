"""Keys reach a text box in the order they were typed, however busy the screen around it is.

Textual inserts a printable key in the box's own queue, but runs a binding (backspace, the
arrows, ctrl+z) only once the key has bubbled through every ancestor's queue to the app: a
screen busy drawing results kept a backspace back until the letters typed after it were in
(``oolong``, two backspaces, ``tulip`` gave ``oolontuli``: seen in tmux on a loaded machine).
"""

from __future__ import annotations

import asyncio

import pytest
from textual import events

from tests.tui_support import make_app, sessions_search_box, settle, wait_for

pytestmark = pytest.mark.anyio


def keys(*names: str) -> list[events.Key]:
    return [events.Key(n, n if len(n) == 1 else None) for n in names]


async def test_a_backspace_is_applied_before_the_letters_typed_after_it(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        box = await sessions_search_box(pilot)
        box.value = "oolong"
        box.cursor_position = 6

        async def busy() -> None:  # the screen's queue is slow (a big redraw, a heavy handler)
            await asyncio.sleep(0.5)

        app.screen.call_later(busy)
        for key in keys("backspace", "backspace", *"tulip"):
            app.post_message(key)
        await asyncio.sleep(0.8)  # the busy screen done, and every key with it
        await settle(pilot)
        assert box.value == "oolotulip"


async def test_the_editor_takes_keys_in_order_too(home, tmp_path):
    from textual.widgets import TextArea

    home.memory.add("memory", "keep me")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("1")
        await settle(pilot)
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.focused, TextArea), what="the editor")
        area = app.focused
        area.load_text("abc")
        area.move_cursor((0, 3))

        async def busy() -> None:
            await asyncio.sleep(0.5)

        app.screen.call_later(busy)
        for key in keys("backspace", "left", *"xy"):
            app.post_message(key)
        await asyncio.sleep(0.8)
        await settle(pilot)
        assert area.text == "axyb"
