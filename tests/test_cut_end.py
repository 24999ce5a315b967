"""A cut to fit (``engine.textsafety.cut_cells``, which the CLI's rows and the TUI's lists both make, the
engine's ``cut`` for fixed-width summaries, all ending with ``engine.textsafety.cut_end``) never ends inside what
a reader sees as one thing: a control character's symbol (``ab<U+202…`` read as U+0202, ``\\x9…`` as
another byte) or a grapheme (half of 👩🏽‍💻 left its joiner before the …); nor does a tail (``widgets.literal.tail``,
an id's end) start inside one."""

from __future__ import annotations

import pytest
import regex
from rich.cells import cell_len

from engine.textsafety import around, clipped, cut_cells, shown_spans, visible
from engine.textsafety import cells as engine_cells
from engine.textsafety import cut as engine_cut
from widgets.diff_view import diff_content
from widgets.entry_list import EntryRow, row_lines
from widgets.literal import hanging, literal, tail, wrapped
from workbench.cli.fit import fit_row
from workbench.cli.fit import wrapped as cli_wrapped

HOSTILE = [
    "x" * 5 + "\x1b[31m" + "数据库迁移" * 3,
    "ab\u202ecdefghijklmnop qrst",
    "Loop note 186\u202e: the deploy script",
    "x\x9bxxxxxxxxxx 1234567 and more",
    "team 👩🏽\u200d💻👩🏽\u200d💻👩🏽\u200d💻 rocks",
    "cafe\u0301\u0301 cafe\u0301 cafe\u0301 xyz",
    "flag 🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f here",
]
SYMBOL = regex.compile(r"<U\+[0-9A-F]{4,6}>|\\x[0-9a-f]{2}")


def wholes(shown: str) -> set[int]:
    """Where ``shown`` may be cut: between graphemes, and outside every symbol."""
    ends = {found.end() for found in regex.finditer(r"\X", shown)} | {0}
    inside = {i for found in SYMBOL.finditer(shown) for i in range(found.start() + 1, found.end())}
    return ends - inside


def cells_word_cut(text: str, width: int) -> str:
    return cut_cells(text, width, words=True)


def word_cut(text: str, width: int) -> str:
    return engine_cut(text, width, words=True)


@pytest.mark.parametrize(
    "cut", [cut_cells, engine_cut, word_cut, cells_word_cut], ids=["cells", "engine", "words", "cells-words"]
)
@pytest.mark.parametrize("text", HOSTILE)
def test_a_cut_never_ends_inside_a_symbol_or_a_grapheme(cut, text):
    shown = visible(text)
    for width in range(2, len(shown) + 2):
        kept = cut(shown, width).removesuffix("…")
        assert shown.startswith(kept) and len(kept) in wholes(shown), (width, kept)


@pytest.mark.parametrize(
    "text", [*HOSTILE, "ﾃﾞﾌﾟﾛｲ ｽﾃｰｼﾞ", "한글 조합", "漢字 かな ｶﾅ", "é ȅ ñ", "step 1️⃣ #️⃣ ‼️ ↔️ ℹ️ ❤️ 20°️C ©️"]
)
def test_the_engine_counts_cells_as_the_terminal_draws_them(text):
    """The engine may not import Rich, so it has its own count of cells (``engine_cells``): it must agree with
    the one Rich and Textual draw by, or a cut line would overrun a row or leave a gap."""
    shown = visible(text)
    assert engine_cells(shown) == cell_len(shown)
    for width in range(2, cell_len(shown) + 2):
        assert cell_len(cut_cells(shown, width)) <= width


def test_vs16_widens_the_emoji_rich_widens_and_nothing_else():
    """VS16 turns a text-style emoji into a wide one (1️⃣, ↔️), not any symbol: counted for every "So" character,
    the keycaps were a cell short and ``°️`` a cell long, so a cut line overran its row or left a gap."""
    emoji = regex.compile(r"\p{Emoji}")
    for ch in (chr(code) for code in range(0x20, 0x30000)):
        if emoji.match(ch) and engine_cells(ch) == cell_len(ch):
            assert engine_cells(ch + "\ufe0f") == cell_len(ch + "\ufe0f"), hex(ord(ch))
    assert engine_cells("20°\ufe0fC") == cell_len("20°\ufe0fC") == 4


@pytest.mark.parametrize("text", HOSTILE)
def test_a_huge_text_shown_cut_ends_whole_and_counts_the_rest(text):
    """``clipped`` (a memory entry of megabytes, a transcript body) cuts where the others do, and says
    how many characters it left out of the text it was given."""
    shown = visible(text)
    for limit in range(1, len(shown)):
        kept, _, note = clipped(shown, limit).partition("\n… (")
        assert shown.startswith(kept) and len(kept) in wholes(shown), (limit, kept)
        assert note == f"{len(shown) - len(kept):,} more characters)"


@pytest.mark.parametrize("text", HOSTILE)
def test_a_tail_fits_its_cells_and_starts_whole(text):
    """``tail`` (an id's end, a word too wide for the Run bar) counted characters of the text as shown: a
    CJK tail took twice its room, and one could start inside a symbol (``202E>…``)."""
    shown = visible(text)
    for cells in range(2, len(shown) + 2):
        ending = tail(text, cells)
        rest = ending.removeprefix("…")
        assert cell_len(ending) <= cells and shown.endswith(rest), (cells, ending)
        assert len(shown) - len(rest) in wholes(shown), (cells, ending)


@pytest.mark.parametrize("text", [*HOSTILE, "love ❤️❤️❤️❤️❤️❤️ love", "x ﾃﾞﾌﾟﾛｲ ｽﾃｰｼﾞ 👩\u200d💻👩\u200d💻 y"])
def test_a_search_excerpt_fits_its_cells_and_is_cut_between_graphemes(text):
    """``around`` (both skins' search excerpt) counted a character at a time: ❤️ took one cell where it draws
    in two, so the excerpt ran past its row, and a cut parted 👩‍💻 after its joiner or ﾃﾞ before its mark."""
    shown, spans = shown_spans(text, ((0, 4),))
    for room in range(4, cell_len(shown) + 2):
        piece, _ = around(shown, spans, room)
        kept = piece.removeprefix("…").removesuffix("…")
        start = shown.index(kept)
        assert cell_len(piece) <= room, (room, piece)
        assert start in wholes(shown) and start + len(kept) in wholes(shown), (room, piece)


def line_starts(shown: str, lines: list[str]) -> list[int]:
    """Where each of ``lines`` (``shown`` wrapped: in order, the spaces at a break dropped) starts in it."""
    starts, at = [], 0
    for line in lines:
        at = shown.index(line.strip(), at)
        starts.append(at)
        at += len(line.strip())
    return starts


WRAPS = {
    "entry row": lambda text, width: [line.plain[2:] for line in row_lines(EntryRow(text), width)],
    "wrapped": lambda text, width: [line.plain for line in wrapped(text, width, 10_000)],
    "hanging": lambda text, width: [line.plain for line in hanging(text, width + 2)],  # (its lines after the first)
    "diff": lambda text, width: [line[2:] for line in diff_content([("+", text)], width=width + 2).plain.split("\n")],
    "cli": cli_wrapped,  # (the CLI's sentences and ⚠ lines: ``folded``)
}


@pytest.mark.parametrize("wrap", WRAPS.values(), ids=WRAPS)
@pytest.mark.parametrize("text", ["ビルド→テスト→ステージング→本番。ﾃﾞﾌﾟﾛｲは金曜日に禁止。", *HOSTILE])
def test_a_wrapped_line_never_starts_inside_a_symbol_or_a_grapheme(wrap, text):
    """A user trial: a memory entry Hermes wrote in Japanese, half-width ﾃﾞﾌﾟﾛｲ in it, wrapped on the Memory
    screen at 80 columns as `…本番。ﾃ` and `ﾞﾌﾟﾛｲは…`: Textual folds a long word by cells, and the voiced
    mark started a line on its own."""
    shown = visible(text)
    for width in range(8, literal(shown).cell_length + 2):
        lines = wrap(text, width)
        assert "".join(lines).replace(" ", "") == shown.replace(" ", ""), width
        assert set(line_starts(shown, lines)) <= wholes(shown), (width, lines)


@pytest.mark.parametrize(
    ("text", "width", "shown"),
    [
        ("add to user profile: ユーザーはﾃﾞﾌﾟﾛｲ前に必ず確認を求める。", 32, "add to user profile: ユーザーは…"),
        ("migrate数据库迁移必须先备份 then", 18, "migrate数据库迁移…"),
        ("remove from memory: Staging incident", 30, "remove from memory: Staging…"),
    ],
)
def test_a_word_cut_parts_cjk_text_between_any_two_characters(text, width, shown):
    """A user trial: at 80 columns `pending list` listed a proposal Hermes staged as `add to user profile:…`
    and `timeline` its approval as `USER +…`: the word cut took the CJK run, written without spaces, for one
    word and went back to before it, so nothing of the entry was shown. A Latin word is still kept whole
    (the last case)."""
    assert cut_cells(text, width, words=True) == shown


def test_a_timeline_row_at_80_columns_shows_the_cjk_entry_it_added():
    """The same trial's row as `timeline` fits it (its session on the next line): `USER +…` before."""
    head = "     52  2026-12-07 09:17:04  user     "
    summary = "USER + 'ユーザーはﾃﾞﾌﾟﾛｲ前に必ず確認を求める。' (proposed by Hermes agent)"
    row, ids = fit_row(head, summary, "  (session s-live)", 80, " " * 9, free_first=True)
    assert row == head + "USER + 'ユーザーはﾃﾞﾌﾟﾛｲ前に必ず確認を求…"
    assert ids == "         (session s-live)"


@pytest.mark.parametrize("wrap", WRAPS.values(), ids=WRAPS)
def test_a_wrapped_line_never_starts_with_closing_nor_ends_with_opening_cjk_punctuation(wrap):
    """A user trial: at 120 columns the Memory screen showed Hermes's Japanese entry as `…ﾃﾞﾌﾟﾛｲは金曜日に禁止`
    with its `。` alone on the next line. The character before it now goes down with it (`禁止。` → `止。`).
    Nor does a line end with opening punctuation: a transcript read `…テスト。「` / `確認」を求める。`."""
    text = "デプロイ手順: ビルド→テスト→ステージング→本番。ﾃﾞﾌﾟﾛｲは金曜日に禁止。次、確認（必須）」。「確認」を求める。"
    broken = 0
    for width in range(8, literal(text).cell_length + 2):
        lines = wrap(text, width)
        assert "".join(lines).replace(" ", "") == text.replace(" ", ""), width
        assert not any(line.strip()[:1] in "。、）」" for line in lines[1:]), (width, lines)
        assert not any(line.rstrip()[-1:] in "（「" for line in lines[:-1]), (width, lines)
        broken += len(lines) > 1
    assert broken


def test_entries_named_in_advice_and_in_an_approvals_question_are_cut_before_a_word():
    """A user trial: approving all of Hermes's proposals at 99% asked about `… Largest entries: 85 chars: User's
    repo uses rebase-only merges (gi…` and `op 1 remove hits: … held the lock 12 m…`, cut at a fixed number of
    characters inside a word. They are cut before the word now, as summaries are."""
    from engine.approvals.preview import target_line
    from engine.memory.ops import room_advice

    rebase = "User's repo uses rebase-only merges (git pull --rebase); never merge commits on main."
    advice = room_advice([rebase, "x" * 2100], "one more entry", 2200)
    assert "85 chars: User's repo uses rebase-only merges…" in advice
    incident = "Staging incident 2026-11: long migration held the lock 12 minutes."
    hit = {"op": 1, "action": "remove", "status": "hits", "entry": incident}
    assert (
        target_line(hit, 60, warn=False)
        == "op 1 remove hits: Staging incident 2026-11: long migration held the lock 12…"
    )


def test_a_path_is_broken_only_after_a_slash_and_a_name_wider_than_a_line_keeps_its_own():
    from engine.textsafety import path_lines

    path = "/root/.config/memory-workbench/drafts/draft-20261207-160744-dg4kbzba.txt"
    assert path_lines(path, 80) == [path]
    assert path_lines(path, 56) == ["/root/.config/memory-workbench/drafts/", "draft-20261207-160744-dg4kbzba.txt"]
    assert path_lines(path, 20) == [
        "/root/.config/",
        "memory-workbench/",
        "drafts/",
        "draft-20261207-160744-dg4kbzba.txt",
    ]
    assert path_lines("草稿/下書き.txt", 6) == ["草稿/", "下書き.txt"]  # (wide characters count two cells)


def test_a_text_cut_to_its_lines_ends_in_one_ellipsis_where_its_last_line_had_one():
    """At 60x20 the Timeline's detail ended ``for the ledger service……``: its summary's own … and the cut's."""
    text = "staged skills proposal 6c38efd8\n— Month-end checklist for the ledger service…\nwhy: the agent staged it"
    assert [line.plain for line in wrapped(text, 58, 2)] == [
        "staged skills proposal 6c38efd8",
        "— Month-end checklist for the ledger service…",
    ]
