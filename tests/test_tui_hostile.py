"""A hostile-text corpus in every place a person or the agent writes, on every screen.

Markup-looking text, fences, action links, terminal escapes, bidi overrides, CJK and very
long lines go into memory entries (written to the file directly, as another editor
would), a session title, messages and tool arguments, a skill's description and body, a
pending proposal and a typed Run message. Every screen must open without a crash or an
error, and show the text exactly as written (a markup tag that disappeared would be a
styled leak; an ESC byte on screen would reach the terminal).
"""

from __future__ import annotations

import sqlite3

import pytest
from textual import events
from textual.widgets import Input

from engine.memory.format import serialize
from engine.tools import ToolContext
from tests.screens_seed import screen_text
from tests.tui_support import make_app, sessions_search_box, settle, wait_for
from widgets.transcript import Transcript
from workbench.app import WorkbenchApp

pytestmark = pytest.mark.anyio

SESSION = "20261129_090000_aaaaaa"
MARKUP = "[bold]x[/] [@click=app.quit]quit[/] [link=https://example.com]l[/link]"
FENCE = "<memory-context>fence</memory-context>"
ESCAPES = "esc\x1b[2Jclear\x07bell\x9b31m"
BIDI = "bidi \u202eoverride\u202c end"
CJK = "部署 デプロイ 全角テキスト"
CORPUS = (MARKUP, FENCE, ESCAPES, BIDI, CJK)
# How each piece must look on screen (controls shown, never sent).
SHOWN = (
    "[bold]x[/] [@click=app.quit]quit[/]",
    "<memory-context>fence",
    "␛[2Jclear␇bell\\x9b31m",
    "bidi <U+202E>override<U+202C> end",
    "部署 デプロイ",
)
LONG = "long " * 4000


class RecordingApp(WorkbenchApp):
    """Remembers every error the app reported (a worker failure is shown as one)."""

    errors: list[str]

    def notify(self, message, *, severity="information", **kwargs) -> None:
        if severity == "error":
            self.errors.append(str(message))
        super().notify(message, severity=severity, **kwargs)


RAW_TITLE = "Deploy \x1b]0;PWNED\x07 now \x1b[2J\x1b]52;c;aGk=\x07"


def seed(home) -> None:
    home.memory.path("memory").write_text(serialize(["w" * 300 + " " + "x" * 300, *CORPUS]), encoding="utf-8")
    archive = home.archive
    archive.create_session(SESSION, source="cli", title=f"[bold]x[/] {FENCE} {BIDI} 部署")
    archive.create_session("hostile-title", source="cli")
    with sqlite3.connect(home.state_db_path) as raw:  # as Hermes or a hand edit could write it: no sanitising
        raw.execute(
            "UPDATE sessions SET title = ?, started_at = started_at - 86400 WHERE id = 'hostile-title'", (RAW_TITLE,)
        )
    category = home.skills_dir / "zcat\x1b[2J"
    (category / "zz-esc-skill").mkdir(parents=True)
    (category / "zz-esc-skill" / "SKILL.md").write_text("---\nname: zz-esc-skill\ndescription: d\n---\nbody\n")
    call = {"id": "c1", "type": "function", "function": {"name": "memory", "arguments": f'{{"content": "{MARKUP}"}}'}}
    archive.append_message(SESSION, "user", LONG)
    archive.append_message(SESSION, "assistant", "", tool_calls=[call])
    for text in CORPUS:
        archive.append_message(SESSION, "assistant", text)
    skill = home.skills_dir / "hostile" / "odd-skill"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        f"---\nname: odd-skill\ndescription: '{MARKUP} {FENCE} {CJK}'\n---\n# odd\n\n" + "\n".join(CORPUS) + "\n",
        encoding="utf-8",
    )
    home.config_path.write_text("memory:\n  write_approval: true\n", encoding="utf-8")
    home.reload_config()
    staged = home.memory.add("user", f"{MARKUP} {CJK}", ToolContext(actor="agent"))
    assert staged.get("success") is not False, staged


def assert_literal(app, *pieces: str) -> None:
    text = screen_text(app)
    assert "\x1b" not in text and "\u202e" not in text
    missing = [piece for piece in pieces if piece not in text]
    assert missing == [], f"not shown literally on {app.current_mode}: {missing}"


async def test_hostile_text_everywhere_never_crashes_or_styles_a_screen(home, tmp_path):
    seed(home)
    app = make_app(home, tmp_path, app_class=RecordingApp)
    app.errors = []
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert_literal(app, *SHOWN[:-1])  # Memory: the live entries (beside their taller [BLOCKED] lines)...
        await pilot.press("end")
        await settle(pilot)
        assert_literal(app, SHOWN[-1])  # ...and, scrolled down, the last one
        await pilot.press("2")  # Sessions: the title in the tree, the messages in the transcript
        await wait_for(pilot, lambda: len(app.screen.query_one(Transcript).items) == 7, what="the transcript")
        await settle(pilot)
        assert_literal(app, "[bold]x[/] [@click", *SHOWN)
        # a raw title is shown as symbols, never obeyed (cut at half its row, the date giving way to it)
        assert "│● Deploy ␛]0;PWNED␇ now…  0 msgs · live       │" in screen_text(app)
        await pilot.press("slash", *"部署")  # search: the snippet with the match highlighted
        await wait_for(pilot, lambda: "デプロイ" in screen_text(app), what="the CJK hit")
        assert_literal(app, "部署 デプロイ")
        await pilot.press("escape")
        await pilot.press("3")  # Skills: the description in the list, SKILL.md highlighted
        await wait_for(pilot, lambda: "odd-skill" in screen_text(app), what="the skill")
        await settle(pilot)
        assert_literal(app, "[bold]x[/] [@click=app.quit]quit[/]", "<memory-context>fence", "␛[2Jclear")
        assert "zcat␛[2J" in screen_text(app)  # a hostile category folder name too
        await pilot.press("4")  # Approvals: the staged proposal and its diff
        await settle(pilot)
        assert_literal(app, "[bold]x[/] [@click=app.quit]quit[/]")
        await pilot.press("5")  # Run: a typed message is a message, not markup
        await settle(pilot)
        run = app.screen
        run.query_one(Input).value = MARKUP
        await pilot.press("enter")
        await wait_for(pilot, lambda: run.session_id is not None and not run.running, what="the turn")
        await settle(pilot)
        assert_literal(app, "[bold]x[/] [@click=app.quit]quit[/]")
        app.screen.query_one(Transcript).focus()
        for key in ("home", "w", "end"):
            await pilot.press(key)
        await settle(pilot)
        assert app.is_running and app.return_code is None
    assert app.errors == []


async def open_editor(pilot, key: str):
    """On the Memory screen, ``e`` (edit the live column's entry) or ``a`` (add): the dialog and its text area."""
    from widgets.entry_list import EntryList
    from widgets.symbol_editor import SymbolTextArea
    from workbench.screens.dialogs import EditDialog

    app = pilot.app
    await settle(pilot)
    app.screen.query_one("#live-list", EntryList).focus()
    await pilot.press(key)
    await wait_for(pilot, lambda: isinstance(app.screen, EditDialog), what="the editor")
    return app.screen, app.screen.query_one(SymbolTextArea)


async def test_the_editor_shows_invisible_characters_as_symbols_and_saves_them_back(home, tmp_path):
    """A symbol left in place is saved as its character (the store then judges it); backspace
    deletes it whole, and with it the character. Before, ``<U+200B>`` was written as text, and
    one backspace left ``<U+200B`` to be saved."""
    from textual.widgets import Static

    (home.root / "memories").mkdir(parents=True, exist_ok=True)
    home.memory.path("memory").write_text("zero\u200bwidth space", encoding="utf-8")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        dialog, area = await open_editor(pilot, "e")
        assert area.text == "zero<U+200B>width space"
        hint = " ".join(str(s.content) for s in dialog.query(Static) if "hint" in s.classes)
        assert "control or invisible characters" in hint and "backspace deletes a symbol whole" in hint
        await pilot.press("end", *", typo fixed", "ctrl+s")
        error = dialog.query_one("#error", Static)
        await wait_for(pilot, lambda: "U+200B" in str(error.content), what="the store's refusal")
        assert app.screen is dialog and home.memory.entries("memory") == ["zero\u200bwidth space"]
        await pilot.press("home", *["right"] * 12, "backspace")  # the cursor just after the symbol
        assert area.text == "zerowidth space, typo fixed" and dialog.draft == area.text
        await pilot.press("ctrl+z")  # undo brings the symbol back, still standing for the character
        assert dialog.draft == "zero\u200bwidth space, typo fixed"
        await pilot.press("ctrl+y")
        assert dialog.draft == "zerowidth space, typo fixed"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.screen is not dialog, what="the save")
        assert home.memory.entries("memory") == ["zerowidth space, typo fixed"]


async def test_the_editor_tells_a_literal_symbol_from_the_character_it_stands_for(home, tmp_path):
    """The text holds a literal ␛ beside a real ESC. Symbols were turned back by their text, so
    either both became ESC or neither did (the real one then saved as text); and Esc asked
    "Discard your changes?" on an untouched draft."""
    from workbench.screens.memory import MemoryScreen

    original = "drawn as ␛ here, real \x1b[0m there"
    (home.root / "memories").mkdir(parents=True, exist_ok=True)
    home.memory.path("memory").write_text(original, encoding="utf-8")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        dialog, area = await open_editor(pilot, "e")
        assert area.text == "drawn as ␛ here, real ␛[0m there" and dialog.draft == original
        await pilot.press("end", *", and more")
        assert dialog.draft == original + ", and more"
        await pilot.press(*["backspace"] * len(", and more"), "escape")
        await settle(pilot)
        assert isinstance(app.screen, MemoryScreen)  # closed, no "Discard your changes?" over it
        assert home.memory.entries("memory") == [original]


async def test_hidden_characters_pasted_into_an_editor_show_as_symbols(home, tmp_path):
    """A pasted zero-width space drew as nothing, so the store's refusal named a character the
    user could not find; an ESC drew as a garbled ^[. A paste is one edit: ctrl+z takes it back."""
    home.memory.add("memory", "keep me")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        dialog, area = await open_editor(pilot, "a")
        app.post_message(events.Paste("zero\u200bwidth and \x1b[1mbold"))  # as a terminal sends it
        await wait_for(pilot, lambda: "<U+200B>" in area.text, what="the symbols")
        assert area.text == "zero<U+200B>width and ␛[1mbold"
        assert dialog.draft == "zero\u200bwidth and \x1b[1mbold"  # what the symbols stand for is what is saved
        await pilot.press("ctrl+s")
        error = dialog.query_one("#error")
        await wait_for(pilot, lambda: "U+200B" in str(error.render()), what="the store's refusal")
        await pilot.press("ctrl+z")
        assert area.text == ""
        await pilot.press("ctrl+y")
        assert dialog.draft == "zero\u200bwidth and \x1b[1mbold"
        await pilot.press("home", *["right"] * 12, "backspace", *["right"] * 11, "backspace", "ctrl+s")
        await wait_for(pilot, lambda: app.screen is not dialog, what="the save")
        assert home.memory.entries("memory") == ["keep me", "zerowidth and [1mbold"]


async def test_joiners_typed_in_the_editor_are_saved_as_pasted_ones_are(home, tmp_path):
    """A typed ZWNJ or ZWJ was dropped (TextArea inserts only ``str.isprintable`` keys): the Persian
    word was saved misspelt and 👨‍👩‍👧 as three emoji, where the same text pasted kept them."""
    from textual._xterm_parser import XTermParser

    word, family = "میخو‌اهم", "👨‍👩‍👧"
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        dialog, area = await open_editor(pilot, "a")
        for key in XTermParser().feed(f"{word} {family}"):  # keystrokes as the terminal sends them
            app.post_message(key)
        await wait_for(pilot, lambda: area.text.endswith("👧"), what="the typing")
        assert dialog.draft == f"{word} {family}"
        assert "<U+200C>" in area.text  # typed alone, it shows as a symbol: never invisible in the editor
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.screen is not dialog, what="the save")
        assert home.memory.entries("memory") == [f"{word} {family}"]


async def test_a_symbol_copied_or_cut_in_the_editor_pastes_back_as_its_character(home, tmp_path):
    """Copying ``<U+200B>`` copied the eight characters of its symbol, so pasting it saved that text
    where the entry held a zero-width space; a copy now takes the character, and pasted it is a symbol again."""
    from textual.widgets.text_area import Selection

    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        dialog, area = await open_editor(pilot, "a")
        area.load_text("")
        app.post_message(events.Paste("a\u200bb\x1bc"))
        await wait_for(pilot, lambda: area.text == "a<U+200B>b␛c", what="the symbols")
        area.selection = Selection((0, 1), (0, 9))  # the whole <U+200B>
        await pilot.press("ctrl+c")
        assert app.clipboard == "\u200b"
        await pilot.press("end", "ctrl+v")
        assert area.text == "a<U+200B>b␛c<U+200B>" and dialog.draft == "a\u200bb\x1bc\u200b"
        area.selection = Selection((0, 9), (0, 11))  # b␛
        await pilot.press("ctrl+x")
        assert app.clipboard == "b\x1b" and dialog.draft == "a\u200bc\u200b"
        await pilot.press("home", "ctrl+v")
        assert dialog.draft == "b\x1ba\u200bc\u200b"
        area.selection = Selection((0, 3), (0, 6))  # "<U+" of a symbol: only its text
        await pilot.press("ctrl+c")
        assert app.clipboard == "<U+"
        area.selection = Selection((0, 0), (0, 0))
        await pilot.press("ctrl+x")  # nothing selected: the line, as TextArea cuts it
        assert app.clipboard.startswith("b\x1ba\u200bc\u200b") and dialog.draft == ""
        app.post_message(events.Paste("one\r\ntwo\rthree"))  # line breaks as terminals send them
        await wait_for(pilot, lambda: "three" in area.text, what="the paste")
        assert dialog.draft == "one\ntwo\nthree"


async def test_a_paste_into_a_search_box_shows_its_control_characters_as_symbols(home, tmp_path):
    """An Input draws its text raw: a pasted ESC sequence (which a paste now carries whole) or a C1
    CSI would reach the terminal from the search box."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        box = await sessions_search_box(pilot)
        app.post_message(events.Paste("\x1b[2Jdeploy\x9b1m \u202eevil"))
        await wait_for(pilot, lambda: "deploy" in box.value, what="the paste")
        assert box.value == "␛[2Jdeploy\\x9b1m <U+202E>evil"
        assert all(ch not in segment.text for segment in box.render_line(0) for ch in "\x1b\x9b\u202e")
        box.value = ""
        tree = app.screen.query_one("#sessions-tree")
        tree.focus()  # a paste over the list goes on to the box (focus moves on the next loop: waited for)
        await wait_for(pilot, lambda: app.focused is tree, timeout=30, what="the list focused")
        app.post_message(events.Paste("/\x1b[31mred"))
        await wait_for(pilot, lambda: "red" in box.value, timeout=30, what="the paste passed on")
        assert box.value == "␛[31mred"
        box.focus()
        box.value = ""
        app.post_message(events.Paste("oolong\ttea\r"))  # terminals send a pasted line break as CR
        await wait_for(pilot, lambda: "oolong" in box.value, what="the line")
        assert box.value == "oolong tea"
        box.value = ""
        app.copy_to_clipboard("x\x1b[2Jy\nsecond line")  # as the editor copies a symbol: its character
        await pilot.press("ctrl+v")
        assert box.value == "x␛[2Jy"
