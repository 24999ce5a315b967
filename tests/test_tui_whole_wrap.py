"""Text Textual folds itself (a transcript message, a dialog's note) parted what a reader sees as one:
half-width ﾃﾞ is a letter and a voiced mark, and the fold at a line's end started the next line with the
mark alone; ``<U+202E>`` (a shown bidi override) read as two symbols. Drawn through ``WholeWrap``, each
line starts with a whole grapheme and a whole symbol, at every width."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Static

from engine import open_home
from tests.tui_support import FOLDS, drawn_in, make_app, parted, settle, wait_for
from widgets.code_view import CodeView
from widgets.entry_list import EntryList
from widgets.fact_list import FactList
from widgets.literal import WholeStatic, WholeWrap, literal
from widgets.transcript import Transcript, TranscriptItem
from workbench.screens.dialogs import ConfirmDialog

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


class Statics(App):
    """A WholeStatic given its text at construction, one given it by ``update``, and a file's view."""

    def compose(self) -> ComposeResult:
        yield WholeStatic(literal(FOLDS), id="built")
        yield WholeStatic("", id="updated")
        yield CodeView()


@pytest.mark.parametrize("width", range(24, 44, 3))
async def test_data_text_in_a_static_or_a_file_view_never_folds_inside_a_grapheme_or_a_symbol(width):
    """Statics showing data (an error quoting a name, a warning quoting an entry, a skill's file) were left to
    Textual's fold: ``WholeStatic`` folds by ``wrap`` however its text was set."""
    app = Statics()
    async with app.run_test(size=(width, 60)) as pilot:
        app.query_one("#updated", WholeStatic).update(literal(FOLDS))
        app.query_one(CodeView).show("SKILL.md", FOLDS)
        await settle(pilot)
        for widget in (app.query_one("#built"), app.query_one("#updated"), app.query_one("#code")):
            lines = drawn_in(widget)
            assert "<U+202E>" in "".join(lines) and not parted(lines), (widget.id, lines)


async def test_a_question_quoting_data_never_folds_inside_a_grapheme_or_a_symbol():
    """A question quotes what it is about (an entry, a title): it was folded by Textual, by cells."""
    for width in range(40, 64, 5):
        app = Statics()
        async with app.run_test(size=(width, 30)) as pilot:
            app.push_screen(ConfirmDialog(f"Remove {FOLDS}?"))
            await settle(pilot)
            lines = drawn_in(app.screen.query_one(".dialog-title"))
            assert "<U+202E>" in "".join(lines) and not parted(lines), (width, lines)


async def test_a_string_given_to_a_whole_static_is_never_markup():
    app = Statics()
    async with app.run_test(size=(40, 20)) as pilot:
        app.query_one("#updated", WholeStatic).update("[bold]x[/] [link=y]z[/]")
        await settle(pilot)
        assert drawn_in(app.query_one("#updated"))[0].rstrip() == "[bold]x[/] [link=y]z[/]"


async def test_at_60_columns_a_name_or_path_wider_than_its_line_folds_after_a_joint(demo_root, tmp_path):
    """A user trial at 60x20: the demo's consolidation read ``rerender-invoice-pd`` / ``f,`` in the Approvals
    queue and ``billing/rerender-invoice/SKI`` / ``LL.md`` in its diff's header, folded at the line's edge.
    Each folds after its last ``-`` or ``/`` now (``fold_end``), the name's end and the file whole below."""
    home = open_home(demo_root)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.press("4")
        await wait_for(pilot, lambda: "SKILL.md" in str(app.screen.query_one("#proposal-title").content), what="it")
        await settle(pilot)
        queue = [line.strip(" │") for line in drawn_in(app.screen.query_one("#queue"))]
        diff = [line.strip() for line in drawn_in(app.screen.query_one("#proposal-diff"))]
        assert queue[queue.index("consolidate") + 1 :][:4] == [
            "rerender-invoice-",
            "pdf,",
            "rerender-invoice-",
            "pdfs into",
        ], queue
        assert diff[diff.index("=== create") + 1 :][:2] == ["billing/rerender-invoice/", "SKILL.md"], diff
    home.close()


class EmptyLists(App):
    """An entry list and a facts list with no rows: each shows its empty text, here one holding data."""

    def compose(self) -> ComposeResult:
        yield EntryList(empty_text=f"(could not be read: {FOLDS})", id="entries")
        yield FactList(empty_text=f"No facts: {FOLDS}", id="facts")

    def on_mount(self) -> None:
        self.query_one(EntryList).set_rows([])
        self.query_one(FactList).set_rows([])


@pytest.mark.parametrize("width", range(24, 44, 3))
async def test_an_empty_lists_text_folds_as_its_rows_do(width):
    """The empty text of the Memory screen's entry lists and of the facts list was folded by Textual's own
    wrap (the rows by ``wrap``): at 60x20 a store that could not be read showed ``…/h/memorie`` / ``s/USER.md``,
    and a symbol or ﾃﾞ could be parted at any width. It is drawn through ``WholeWrap`` now, as control
    characters' symbols (``literal``)."""
    app = EmptyLists()
    async with app.run_test(size=(width, 40)) as pilot:
        await settle(pilot)
        for widget in (app.query_one(EntryList), app.query_one(FactList)):
            lines = drawn_in(widget)
            assert "<U+202E>" in "".join(lines) and not parted(lines), (widget.id, lines)


async def test_a_whole_static_folds_its_text_once_while_it_is_redrawn(monkeypatch):
    """Each draw of a WholeStatic made a new WholeWrap, which folded the whole text again: a SKILL.md cut at
    400,000 characters took 0.27 s a frame to scroll. The fold is kept while the text and width stay."""
    import widgets.literal

    folds: list[int] = []
    fold = widgets.literal.wrap
    monkeypatch.setattr(widgets.literal, "wrap", lambda content, width: folds.append(width) or fold(content, width))
    app = Statics()
    async with app.run_test(size=(40, 20)) as pilot:
        static = app.query_one("#updated", WholeStatic)
        static.update(literal(FOLDS))
        await settle(pilot)
        assert "<U+202E>" in "".join(drawn_in(static))
        folds.clear()
        for _ in range(3):
            static.refresh(layout=True)
            await pilot.pause()
        assert folds == [] and "<U+202E>" in "".join(drawn_in(static))
        static.update(literal("new words"))  # (new text: folded anew, and drawn)
        await settle(pilot)
        assert folds and drawn_in(static)[0].rstrip() == "new words"
