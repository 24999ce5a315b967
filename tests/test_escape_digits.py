"""Esc followed at once by a digit reaches the app as the two keys pressed, not an Option character."""

from __future__ import annotations

import pytest
from textual._xterm_parser import XTermParser

from tests.test_paste_escapes import described, parsed
from widgets.escape_digits import KeyParser


def test_textual_alone_reads_esc_and_a_digit_as_an_option_character():
    """What this guards against: Esc then 1 in one read typed ``¡``."""
    assert described(parsed(XTermParser(), ["\x1b1"])) == [("key", "inverted_exclamation_mark")]


@pytest.mark.parametrize("digit", list("0123456789"))
def test_esc_and_a_digit_in_one_read_are_two_keys(digit):
    assert described(parsed(KeyParser(), [f"\x1b{digit}"])) == [("key", "escape"), ("key", digit)]


def test_other_sequences_read_as_before():
    assert described(parsed(KeyParser(), ["\x1b[A", "x", "\x1bb"])) == [
        ("key", "up"),
        ("key", "x"),
        ("key", "ctrl+left"),
    ]
