"""Input is never lost and the focus is always visible: Run input rules, Memory columns, dialogs."""

from __future__ import annotations

import pytest
from textual.widgets import Button, Input, Select, TextArea
from textual.widgets._select import SelectCurrent

from engine.tools import ToolContext
from tests.screens_seed import open_mode, seed_sessions, seed_skills
from tests.tui_support import make_app, settle, wait_for
from widgets.entry_list import EntryList
from widgets.gauge import CapacityGauge
from widgets.header import WorkbenchHeader
from widgets.transcript import Transcript
from workbench.screens import base as base_screen
from workbench.screens.dialogs import ConfirmDialog, EditDialog
from workbench.screens.memory import MemoryScreen
from workbench.screens.run import RunScreen
from workbench.screens.skills import SkillsScreen
from workbench.screens.timeline import TimelineScreen

pytestmark = pytest.mark.anyio


def focused_id(app) -> str | None:
    return app.focused.id if app.focused is not None else None


async def test_the_message_box_has_the_focus_after_every_run_action(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "5", RunScreen)
        assert focused_id(app) == "run-input"
        await pilot.press(*"hello", "enter")
        await wait_for(pilot, lambda: screen.session_id is not None and not screen.running, what="turn finished")
        await settle(pilot)
        assert focused_id(app) == "run-input"
        first = screen.session_id
        screen.query_one(Transcript).focus()
        await pilot.press("ctrl+l")
        await settle(pilot)
        assert focused_id(app) == "run-input" and screen.session_id is None
        screen.query_one(Transcript).focus()
        await pilot.press("ctrl+o")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert focused_id(app) == "run-input"
        model = screen.query_one("#run-model", Select)
        model.focus()
        model.value = "scripted"
        await settle(pilot)
        assert focused_id(app) == "run-input"
        assert first


async def test_printable_keys_typed_in_other_panes_reach_the_message_box(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "5", RunScreen)
        box = screen.query_one("#run-input", Input)
        screen.query_one(Transcript).focus()
        await pilot.press(*"hello")  # h, e, l, o: none of them is a transcript key
        assert box.value == "hello" and app.focused is box
        screen.query_one("#run-model", Select).focus()
        await pilot.press("x", "y")
        assert box.value == "helloxy" and app.focused is box
        screen.query_one(Transcript).focus()
        await pilot.press("j")  # a transcript key stays a transcript key
        assert box.value == "helloxy" and app.focused is screen.query_one(Transcript)
        model = screen.query_one("#run-model", Select)
        model.focus()
        await pilot.press("enter")  # the dropdown opens
        await settle(pilot)
        assert model.expanded
        await pilot.press("z", "q")  # matches no model: typed into the box, the dropdown closes
        await settle(pilot)
        assert box.value == "helloxyzq" and app.focused is box and not model.expanded
        assert model.value == "offline"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_digits_typed_in_the_message_box_are_text_and_esc_leaves_it(home, tmp_path, size):
    app = make_app(home, tmp_path)
    async with app.run_test(size=size) as pilot:
        screen = await open_mode(pilot, "5", RunScreen)
        box = screen.query_one("#run-input", Input)
        await pilot.press(*"deploy 2.7.3 at 16:05", "1", "2")
        assert box.value == "deploy 2.7.3 at 16:0512" and app.screen is screen and app.focused is box
        keys = footer(app)
        assert "Leave box (then 1-6)" in keys.get("escape", "") and keys["escape"].endswith("|shown")
        assert footer_right_edge(app, "escape") <= size[0], "the way out of the box is on screen"
        await pilot.press("escape")
        await settle(pilot)
        assert app.focused is screen.query_one(Transcript) and box.value == "deploy 2.7.3 at 16:0512"
        assert "escape" not in footer(app)  # idle and away from the box: esc has nothing to do
        await pilot.press("3")
        await settle(pilot)
        assert type(app.screen).__name__ == "SkillsScreen"
        await pilot.press("5")
        await settle(pilot)
        assert app.focused is box, "coming back, the message box has the focus again"
        await pilot.press("tab", "4")  # tab leaves the box too
        await settle(pilot)
        assert type(app.screen).__name__ == "ApprovalsScreen"


def footer(app) -> dict[str, str]:
    """key -> "description|shown" for the keys the footer draws."""
    from textual.widgets._footer import FooterKey

    return {key.key: f"{key.description}|shown" for key in app.screen.query(FooterKey) if key.region.width}


def footer_right_edge(app, key: str) -> int:
    from textual.widgets._footer import FooterKey

    return next(k.region.right for k in app.screen.query(FooterKey) if k.key == key)


async def test_a_resumed_session_gets_the_next_turn(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "5", RunScreen)
        await pilot.press(*"first words", "enter")
        await wait_for(pilot, lambda: screen.session_id is not None and not screen.running, what="turn finished")
        first = screen.session_id
        await pilot.press("ctrl+l")
        await pilot.press(*"another session", "enter")
        await wait_for(pilot, lambda: screen.session_id not in (None, first) and not screen.running, what="turn 2")
        await settle(pilot)
        await pilot.press("ctrl+o")
        await settle(pilot)
        await pilot.press(*first, "enter")
        await wait_for(pilot, lambda: screen.session_id == first, what="resumed")
        await settle(pilot)
        assert focused_id(app) == "run-input"
        await pilot.press(*"back again", "enter")
        await wait_for(pilot, lambda: not screen.running, what="turn 3")
        await settle(pilot)
        users = [m.content for m in home.archive.messages(first) if m.role == "user"]
        assert users == ["first words", "back again"]


async def test_memory_columns_are_reached_with_arrows_and_hl_and_the_detail_follows(home, tmp_path):
    home.memory.add("memory", "Frozen only entry")
    home.memory.add("memory", "Kept entry")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_mode(pilot, "1", MemoryScreen)
        home.memory.remove("memory", "Frozen only entry", None)
        home.memory.add("memory", "Live only entry", None)
        await settle(pilot)
        assert focused_id(app) == "live-list"
        await pilot.press("left")
        await settle(pilot)
        assert focused_id(app) == "frozen-list" and screen.detail.entry == "Frozen only entry"
        await pilot.press("l")
        await settle(pilot)
        assert focused_id(app) == "live-list"
        await pilot.press("down")
        await settle(pilot)
        assert screen.detail.entry == screen.query_one("#live-list", EntryList).current.text
        await pilot.press("h")  # rows: Frozen only | blank, Kept | Kept, blank | Live only
        await settle(pilot)
        assert focused_id(app) == "frozen-list"
        assert screen.detail.entry == screen.query_one("#frozen-list", EntryList).current.text == "Kept entry"
        await pilot.press("down")  # a blank slot: the detail shows the row's entry on the other side
        await settle(pilot)
        assert screen.query_one("#frozen-list", EntryList).current.blank and screen.detail.entry == "Live only entry"
        await pilot.press("up")
        await settle(pilot)
        for key in ("a", "d", "u"):  # closing any dialog gives the focus back where it was
            await pilot.press(key)
            await settle(pilot)
            await pilot.press("escape")
            await settle(pilot)
            assert app.screen is screen and focused_id(app) == "frozen-list", key


async def test_conflict_buttons_keep_mine_first_and_the_focus_is_unmistakable(home, tmp_path):
    home.memory.add("memory", "Old wording")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        await open_mode(pilot, "1", MemoryScreen)
        await pilot.press("e")
        await settle(pilot)
        dialog = app.screen
        home.memory.replace("memory", "Old wording", "Their wording", None)
        dialog.query_one(TextArea).text = "My wording"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert dialog.conflict is not None
        shown = [b.id for b in dialog.query(Button) if b.display]
        assert shown == ["keep-mine", "take-theirs", "cancel"]
        order = []
        for _ in range(3):
            await pilot.press("tab")
            order.append(focused_id(app))
        assert order == ["keep-mine", "take-theirs", "cancel"]
        focused, other = dialog.query_one("#cancel", Button), dialog.query_one("#take-theirs", Button)
        assert focused.styles.border_top != other.styles.border_top  # a ring, not only a shade
        assert "reverse" in str(focused.styles.text_style)


async def test_the_add_editor_gauge_counts_pending_writes(home, tmp_path):
    home.config_path.write_text("memory:\n  write_approval: true\n", encoding="utf-8")
    home.reload_config()
    home.memory.add("memory", "Proposed by the agent", ToolContext(actor="agent"))  # staged, not written
    assert home.approvals.count() == 1
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await open_mode(pilot, "1", MemoryScreen)
        live = screen.query_one("#live-gauge", CapacityGauge)
        assert live.ghost == len("Proposed by the agent") + 3
        await pilot.press("a")
        await settle(pilot)
        gauge = app.screen.query_one("#draft-budget", CapacityGauge)
        assert gauge.ghost == live.ghost and f"+{live.ghost}" in gauge.caption()


def ring(widget) -> tuple:
    """What draws a pane's edge (a Select draws it on its current-value box)."""
    target = widget.query_one(SelectCurrent) if isinstance(widget, Select) else widget
    styles = target.styles
    return styles.border_top, styles.border_left, styles.outline_top


@pytest.mark.parametrize("theme", ["workbench-dark", "workbench-light"])
async def test_every_focusable_pane_shows_a_focus_ring(home, tmp_path, theme):
    seed_skills(home)
    seed_sessions(home)
    home.memory.add("memory", "An entry")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        app.theme = theme
        missing = []
        for mode, key, _ in app.mode_tabs():
            await pilot.press(key)
            await settle(pilot)
            chain = list(app.screen.focus_chain)
            assert len(chain) >= 2, mode
            for index, widget in enumerate(chain):
                widget.focus()
                await settle(pilot)
                focused = ring(widget)
                chain[index - 1].focus()
                await settle(pilot)
                if ring(widget) == focused:
                    missing.append(f"{mode}: {widget!r}")
        assert missing == []


async def test_escape_on_a_changed_draft_asks_before_throwing_it_away(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_mode(pilot, "1", MemoryScreen)
        await pilot.press("a")
        await settle(pilot)
        editor = app.screen
        await pilot.press("escape")  # unchanged: closes at once
        await settle(pilot)
        assert app.screen is screen
        await pilot.press("a", *"half a thought", "escape")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("n")  # keep editing: the draft is still there
        await settle(pilot)
        assert isinstance(app.screen, EditDialog) and app.screen.draft == "half a thought"
        await pilot.press("escape", "y")
        await settle(pilot)
        assert app.screen is screen and home.memory.entries("memory") == []
        assert editor is not app.screen


async def test_curator_run_asks_first(home, tmp_path):
    seed_skills(home)
    home.clock.advance(45 * 86400)  # tomato-care (made by a review) is due to go stale: c has a plan to ask about
    before = home.curator.ledger()
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_mode(pilot, "3", SkillsScreen)
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
        await pilot.press("n")
        await settle(pilot)
        assert home.curator.ledger() == before and home.curator.status()["last_run_at"] is None


async def test_a_status_message_clears_by_itself(home, tmp_path, monkeypatch):
    monkeypatch.setattr(base_screen, "STATUS_SECONDS", 0.05)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_mode(pilot, "1", MemoryScreen)
        screen.show_status("Snapshot refrozen.")
        status = screen.query_one("#status")
        assert status.display
        await wait_for(pilot, lambda: not status.display, what="the status cleared")


async def test_a_status_message_clears_on_the_next_key(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "1", MemoryScreen)
        screen.show_status("Snapshot refrozen.")
        status = screen.query_one("#status")
        await pilot.pause()
        assert status.display
        await pilot.press("down")
        assert not status.display
        await pilot.press("u")  # an action that answers in the status line says its own thing
        await settle(pilot)
        assert status.display and "Snapshot" not in str(status.content)


async def test_a_key_a_text_box_takes_clears_the_status_too(home, tmp_path):
    """The status line cleared on a key that bubbled to the screen, so not on one a search box or a
    priority binding took (a backspace typed in the box, ``/``)."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        status = screen.query_one("#status")
        for keys in (["slash"], ["backspace"]):  # (the box has the focus after the first)
            screen.show_status("Reverted row 3.")
            await pilot.pause()
            assert status.display
            await pilot.press(*keys)
            assert not status.display, keys


async def test_a_new_session_or_model_ends_the_previous_one_and_the_header_follows(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_mode(pilot, "5", RunScreen)
        header = screen.query_one(WorkbenchHeader)
        await pilot.press(*"hello", "enter")
        await wait_for(pilot, lambda: screen.session_id is not None and not screen.running, what="turn finished")
        first = screen.session_id
        assert header.session == first
        await pilot.press("ctrl+l")
        assert app.running_session is None  # at once, not at the next turn
        await settle(pilot)
        assert header.session is None
        await pilot.press(*"second", "enter")
        await wait_for(pilot, lambda: screen.session_id not in (None, first) and not screen.running, what="turn 2")
        await settle(pilot)
        assert home.archive.get_session(first).end_reason == "new_session"  # left as Hermes's /new leaves it
        second = screen.session_id
        screen.query_one("#run-model", Select).value = "scripted"
        await settle(pilot)
        assert home.archive.get_session(second).end_reason == "cli_close"
        assert screen.session_id is None and header.session is None and focused_id(app) == "run-input"


@pytest.mark.parametrize("arrives", ["as keys", "as a paste"])
@pytest.mark.parametrize(
    "mode, box",
    [("2", "#sessions-search"), ("3", "#skills-filter"), ("6", "#timeline-search")],
)
async def test_text_that_arrives_at_once_after_slash_lands_in_the_box(home, tmp_path, mode, box, arrives):
    """Typed fast over ssh, "/plant" reaches the app in one read: "/" focused the box only after
    the keys behind it had been handed to the list, so they were lost (or ran its keys). Pasted,
    it is one bracketed event to the focused widget, and over a list it went nowhere."""
    from textual import events

    seed_sessions(home)
    seed_skills(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(mode)
        await settle(pilot)
        assert not isinstance(app.focused, Input)
        if arrives == "as keys":
            for character in "/pl/ant":  # the second / is typed into the box as text
                app.post_message(events.Key("slash" if character == "/" else character, character))
        else:
            app.post_message(events.Paste("/pl/ant"))
        await settle(pilot)
        assert app.screen.query_one(box, Input).value == "pl/ant" and focused_id(app) == box[1:]


def esc_and(app, key: str) -> None:
    """Esc and ``key`` arriving in one read (a quick typist, or ssh): posted together, not one by one."""
    from textual import events

    app.post_message(events.Key("escape", "\x1b"))
    app.post_message(events.Key(key, key))


@pytest.mark.parametrize(
    "mode, box, then",
    [("5", "#run-input", ("1", "MemoryScreen")), ("2", "#sessions-search", ("3", "SkillsScreen"))],
)
async def test_esc_and_a_digit_arriving_at_once_leave_the_box_and_switch(home, tmp_path, mode, box, then):
    """Esc to leave a box and a digit to switch screens, typed fast (one read): the screen's Esc moved
    the focus only after the digit had been handed to the box, which typed it."""

    seed_sessions(home)
    app = make_app(home, tmp_path)
    digit, screen_name = then
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(mode)
        await settle(pilot)
        if mode == "2":
            await pilot.press("slash")
        await pilot.press(*"dep")
        await settle(pilot)
        typed = app.screen.query_one(box, Input)
        assert app.focused is typed and typed.value == "dep"
        esc_and(app, digit)
        await settle(pilot)
        assert type(app.screen).__name__ == screen_name
        assert digit not in typed.value


async def test_esc_and_a_digit_at_once_in_an_editor_switch_or_touch_nothing(home, tmp_path):
    """In an editor, Esc and a digit in one read: unchanged, the editor closed and the digit was lost
    (no switch); changed, the digit was typed into the draft behind the "discard?" question."""

    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_mode(pilot, "1", MemoryScreen)
        await pilot.press("a")
        await settle(pilot)
        assert isinstance(app.screen, EditDialog)
        esc_and(app, "4")
        await settle(pilot)
        assert type(app.screen).__name__ == "ApprovalsScreen", "closed, then switched"
        await pilot.press("1", "a", *"half a thought")
        await settle(pilot)
        esc_and(app, "7")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog), "a changed draft still asks"
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, EditDialog) and app.screen.draft == "half a thought"
