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


def hold_the_screen(app) -> list[bool]:
    """Keep the screen's queue busy for half a second (a big redraw, a heavy handler); the list
    returned holds ``True`` once the screen is free again."""
    freed: list[bool] = []

    async def busy() -> None:
        await asyncio.sleep(0.5)
        freed.append(True)

    app.screen.call_later(busy)
    return freed


async def test_a_backspace_is_applied_before_the_letters_typed_after_it(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        box = await sessions_search_box(pilot)
        box.value = "oolong"
        box.cursor_position = 6

        freed = hold_the_screen(app)
        for key in keys("backspace", "backspace", *"tulip"):
            app.post_message(key)
        await wait_for(pilot, lambda: freed, what="the busy screen")
        await settle(pilot)  # (and every key queued behind it)
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

        freed = hold_the_screen(app)
        for key in keys("backspace", "left", *"xy"):
            app.post_message(key)
        await wait_for(pilot, lambda: freed, what="the busy screen")
        await settle(pilot)
        assert area.text == "axyb"
