"""A word wider than its line (a path, a skill's name, an id) was folded at the line's edge, in both skins:
at 60 columns the Approvals queue read ``rerender-invoice-pd`` / ``f,`` and the diff's header
``billing/rerender-invoice/SKI`` / ``LL.md``, and ``memory show`` at 40 columns
``tests/test_invoices.py::test_round`` / ``ing``. The one rule both skins fold by (``fold_end``) now ends such
a line after the word's last ``-``, ``/``, ``_``, ``⏎`` or run of ``:`` (before a run it would split: the
Memory pane at 60 columns read ``tests/test_invoices.py:`` / ``:test_rounding``) where the line keeps more
than half of its cells."""

from __future__ import annotations

import itertools

import pytest
from textual.content import Content

from engine.textsafety import cells, fold_end
from widgets.literal import wrap
from workbench.cli.fit import wrapped


@pytest.mark.parametrize(
    ("line", "rest", "kept"),
    [
        ("billing/rerender-invoice/SKI", "LL.md", "billing/rerender-invoice/"),  # a path: after its last /
        ("rerender-invoice-pd", "f,", "rerender-invoice-"),  # a name of many -: after the last one
        ("tests/test_invoices.py::test_round", "ing", "tests/test_invoices.py::test_"),
        ("tests/test_invoices.py::te", "st_rounding", "tests/test_invoices.py::"),  # a run of : after its last
        ("tests/test_invoices.py:", ":test_rounding", "tests/test_invoices.py"),  # (never inside it: before)
        ("region:eu-west:primary-db", "-2", "region:eu-west:primary-"),
        ("region:eu-west:primar", "y-db", "region:eu-west:"),
        ("20261207_183145_84", "266e", "20261207_183145_"),  # a Hermes session id
        ("triage-invoice-export⏎desc", "ription:", "triage-invoice-export⏎"),  # a line break shown on one line
        ("see https://example.com/docs/ref", "erence", "see https://example.com/docs/"),  # (the word's joint)
        ("日本語日本-abcd", "efg", "日本語日本-"),  # (cells, not characters: CJK takes two)
        ("ﾃﾞﾌﾟﾛｲ-deploy", "ment", "ﾃﾞﾌﾟﾛｲ-"),
        ("x<U+202E>-abcd", "ef", "x<U+202E>-"),  # (a shown symbol is whole before the joint)
        ("abcdefgh-ijklmno", "pqr", "abcdefgh-"),  # (9 of 16 cells: more than half)
    ],
)
def test_a_fold_inside_a_word_ends_after_its_last_joint(line, rest, kept):
    assert fold_end(line, rest) == kept


@pytest.mark.parametrize(
    ("line", "rest"),
    [
        ("a-bcdefghijk", "lmn"),  # its only joint near the start: `a-` alone would leave the line nearly empty
        ("some words here-and", " there"),  # a fold at a space stays
        ("abc-日本語日本語", "日本"),  # beside CJK, which parts between any two characters
        ("deploy-ﾃﾞﾌﾟﾛｲﾃﾞ", "ﾌﾟ"),
        ("abcdefg-\u0301hijk", "lm"),  # a - with a mark drawn on it is no joint: the mark would start a line
        ("billing/", "rerender"),  # (already after a joint)
        ("a::bcdefghijk", "lm"),  # (a run of : near the start)
        ("a:", ":bcdef"),  # (before the run would keep one cell of two)
    ],
)
def test_a_fold_stays_where_no_joint_keeps_most_of_the_line(line, rest):
    assert fold_end(line, rest) == line


@pytest.mark.parametrize(
    ("line", "rest", "kept"),
    [
        ("a", "-b", "a"),  # width 1: nothing to move to
        ("-a", "bc", "-a"),  # width 2: one cell of two is not more than half
        ("a-b", "cd", "a-"),  # width 3: two of three are
        ("-", "abc", "-"),
    ],
)
def test_at_one_to_three_cells_a_fold_never_empties_a_line(line, rest, kept):
    assert fold_end(line, rest) == kept


def test_cjk_punctuation_still_goes_down_with_the_character_before_it():
    """The kinsoku rule after the joint's: a ``。`` never starts a line, a ``「`` never ends one."""
    assert fold_end("deploy-staging手順", "。次") == "deploy-staging手"
    assert fold_end("abcdefgh-ijk「", "確認」") == "abcdefgh-ijk"


FOLDED = {  # a word, and a width at which it is folded: the lines of ``see WORD end``
    "billing/rerender-invoice/SKILL.md": (28, ["see", "billing/rerender-invoice/", "SKILL.md end"]),
    "rerender-invoice-pdf,": (19, ["see", "rerender-invoice-", "pdf, end"]),
    "tests/test_invoices.py::test_rounding": (34, ["see", "tests/test_invoices.py::test_", "rounding end"]),
    "https://staging.ledger.internal/healthz/deep-check": (
        36,
        ["see", "https://staging.ledger.internal/", "healthz/deep-check end"],
    ),
    "triage-invoice-export⏎description:⏎ﾃﾞﾌﾟﾛｲ-手順。-xy": (
        24,
        ["see", "triage-invoice-export⏎", "description:⏎ﾃﾞﾌﾟﾛｲ-手", "順。-xy end"],  # (。 takes 順 down)
    ),
    "a-b-c-d-e-f-g-h-i-j": (5, ["see", "a-b-", "c-d-", "e-f-", "g-h-", "i-j", "end"]),
    "tests/test_invoices.py::TestRounding::test_half_even": (
        23,
        ["see", "tests/test_invoices.py", "::TestRounding::test_", "half_even end"],  # (never `py:` / `:Test`)
    ),
}


@pytest.mark.parametrize(("word", "folded"), FOLDED.items(), ids=list(FOLDED))
def test_both_skins_fold_a_word_alike_at_every_width(word, folded):
    """The TUI's ``wrap`` (Textual's fold, moved by ``fold_end``) and the CLI's ``wrapped`` (its chop, moved
    by the same rule) give the same lines, each within the width, none losing a character: a word folded at
    a joint starts a line in both (the CLI's shorter first piece went on after ``see``). Blank lines and the
    spaces at a line's ends aside, which Textual keeps, and widths of one cell, where Textual parts ﾃﾞ."""
    text = f"see {word} end"
    width, lines = folded
    assert wrapped(text, width) == lines
    for width in range(2, cells(text) + 2):
        tui = [line.plain.strip() for line in wrap(Content(text), width) if line.plain.strip()]
        cli = wrapped(text, width)
        assert tui == cli, (width, tui, cli)
        assert all(cells(line) <= width for line in cli), (width, cli)
        assert "".join(cli).replace(" ", "") == text.replace(" ", ""), (width, cli)
        assert not any(a.endswith(":") and b.startswith(":") for a, b in itertools.pairwise(cli)), (width, cli)


def test_a_word_that_ends_in_an_opening_bracket_is_not_parted_from_it():
    """A word that fits its line is whole in both skins though it ends in ``（`` or ``「``: the CLI's chop
    asked where a line with nothing after it folds, moved the bracket down, and (a word in pieces starts a
    line) printed ``note`` and ``（`` on lines of their own; the TUI moved it down at a space fold."""
    assert fold_end("note（", "") == "note（"
    folded = {
        ("Hermes said: see the note（ and more text here", 30): ["Hermes said: see the note（", "and more text here"],
        ("see the note「", 20): ["see the note「"],
    }
    for (text, width), lines in folded.items():
        assert wrapped(text, width) == lines
        assert [line.plain.strip() for line in wrap(Content(text), width)] == lines
