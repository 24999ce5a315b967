"""The editor's document keeps each symbol tied to its hidden character through every edit.

Checked against a model of the rule: the text is a row of pieces, each a plain character or
a symbol standing for a character; an edit removes the pieces it covers (a symbol it covers
in part is gone with its character, what it did not cover of the symbol's text stays as
plain text) and inserts what was typed as plain characters, hidden ones as new symbols.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.textsafety import visible
from tests.test_cli_text_safety import DRIVERS, hostile
from widgets.symbol_editor import SymbolDocument

Piece = tuple[str, str]  # (shown, real): a plain character is (c, c)


def pieces(text: str) -> list[Piece]:
    out: list[Piece] = []
    for character in text:  # (flags are not in the texts below: a flag is several characters shown as one)
        out.append((visible(character), character))
    return out


def edit(model: list[Piece], first: int, last: int, typed: str) -> list[Piece]:
    """The rule, on pieces: what ``replace_range`` over shown indexes ``first:last`` must leave."""
    before: list[Piece] = []
    after: list[Piece] = []
    at = 0
    for shown, real in model:
        start, end = at, at + len(shown)
        at = end
        if end <= first:
            before.append((shown, real))
        elif start >= last:
            after.append((shown, real))
        elif shown != real:  # a symbol the edit touches: gone, its uncovered text stays as plain text
            before += [(c, c) for c in shown[: max(0, first - start)]]
            after = [(c, c) for c in shown[max(0, last - start) :]] + after
    return before + pieces(typed) + after


def real(model: list[Piece]) -> str:
    return "".join(r for _, r in model)


def copied(model: list[Piece], first: int, last: int) -> str:
    """The rule for a copy of shown indexes ``first:last``: a symbol wholly inside is its character,
    the covered part of one cut into is its text."""
    out, at = [], 0
    for shown, real_text in model:
        start, end = at, at + len(shown)
        at = end
        if first <= start and end <= last:
            out.append(real_text)
        elif start < last and end > first:
            out.append(shown[max(0, first - start) : last - start])
    return "".join(out)


no_flags = hostile.filter(lambda t: visible(t) == "".join(visible(c) for c in t))
typed_text = st.text(st.sampled_from([*"ab<>U+0␛ ", *DRIVERS[:4], "\u200b", "\n"]), max_size=6)


@settings(max_examples=300, deadline=None)
@given(no_flags, st.lists(st.tuples(st.integers(0, 400), st.integers(0, 400), typed_text), max_size=6))
def test_every_edit_keeps_exactly_the_symbols_it_did_not_touch(text, edits):
    """Typed text is never lost, a symbol left whole always saves as its character, one an edit
    touches never does, hidden characters typed in become symbols, and a copy or cut takes each
    whole symbol as its character."""
    document, model = SymbolDocument(text), pieces(text)
    assert document.text == visible(text) and document.real == text
    for a, b, typed in edits:
        size = len(document.text)
        first, last = sorted((min(a, size), min(b, size)))
        locate = document.get_location_from_index
        assert document.real_between(first, last) == copied(model, first, last)
        document.replace_range(locate(first), locate(last), typed)
        assert document.replaced_real == copied(model, first, last)  # what a cut copies
        model = edit(model, first, last, typed)
        assert document.text == "".join(s for s, _ in model)
        assert document.real == real(model), (text, edits)


def test_an_undo_puts_back_the_symbols_an_edit_took_out():
    document = SymbolDocument("a\u200bb")
    locate = document.get_location_from_index
    taken = document.replace_range(locate(1), locate(9), "")  # the symbol deleted
    assert document.real == "ab"
    document.replace_range(locate(1), locate(1), taken.replaced_text)  # the same text pasted: as typed
    assert document.real == "a<U+200B>b"
    document.replace_range(locate(1), locate(9), "")
    document.restoring = True  # as SymbolTextArea.undo sets it
    document.replace_range(locate(1), locate(1), taken.replaced_text)  # what TextArea's undo does
    assert document.real == "a\u200bb"


def test_a_line_separator_is_a_symbol_not_a_line_break_the_save_would_write():
    """U+2028 in an entry opened as two lines: saving untouched wrote a newline in its place."""
    text = "one\u2028two\u2029three\x85four"
    document = SymbolDocument(text)
    assert document.text == "one<U+2028>two<U+2029>three\\x85four" and document.real == text


def test_an_undo_puts_back_a_symbol_an_edit_cut_into():
    """Typing over part of a symbol, then undoing, left the symbol's text as plain text: saved, the
    real character was gone and ``<U+00AD>`` written in its place."""
    document = SymbolDocument("hy\u00adphen")
    locate = document.get_location_from_index
    typed = document.replace_range(locate(2), locate(5), "X")  # "<U+" of "<U+00AD>" typed over
    assert document.real == "hyX00AD>phen"
    document.restoring = True
    document.replace_range(locate(2), locate(3), typed.replaced_text)  # what TextArea's undo does
    assert document.text == "hy<U+00AD>phen" and document.real == "hy\u00adphen"
