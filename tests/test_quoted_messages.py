"""Every message quotes a value from data or from the user one way: in single quotes, control characters
and bidi overrides as symbols (``textsafety.quoted``), never as Python's repr (``'\\x1b[31mred\\u202e'``)."""

from __future__ import annotations

import json

import pytest

from engine.textsafety import quote_ending, quoted
from tests.cli_support import ran

HOSTILE = "\x1b[31mred\u202e"
SHOWN = "'␛[31mred<U+202E>'"


def test_a_quoted_value_shows_symbols_and_keeps_its_own_quotes_and_backslashes():
    assert quoted(HOSTILE) == SHOWN
    assert quoted("it's") == "'it's'"  # (repr: "it's")
    assert quoted("C:\\Users\\sam") == "'C:\\Users\\sam'"  # (repr doubled each backslash)
    assert quoted("two\nlines\tand a tab") == "'two⏎lines⇥and a tab'"
    assert quoted(5) == "5" and quoted(None) == "None"  # (a number read is told from a typed '5')


def test_a_quoted_sentence_ending_in_its_own_stop_takes_no_second():
    """The editor's note read `…changed this entry to “Deploys to stage.”.`: two full stops."""
    assert quote_ending("Deploys to stage") == "“Deploys to stage”."
    for said in ("Deploys to stage.", "Deploys to stage!", "Deploys to stage?"):
        assert quote_ending(said) == f"“{said}”"


def _said(*argv: str) -> str:
    """What ``workbench ARGS`` answers, on stdout and stderr, and the error of its --json answer."""
    status, out, err = ran(*argv)
    _, doc, _ = ran(*argv, "--json")
    assert status != 0
    return out + err + json.loads(doc)["error"]


@pytest.mark.parametrize(
    "argv",
    [
        ["sessions", "show", HOSTILE],  # a session id
        ["sessions", "delete", HOSTILE, "--yes"],
        ["pending", "show", HOSTILE],  # a pending id
        ["revert", HOSTILE],  # a timeline row or group
        ["memory", "undo", HOSTILE],  # a journal row id (argparse says what the type said)
        ["memory", "history", "--entry", HOSTILE],  # an entry's text
        ["run", "--scenario", HOSTILE],  # a scenario's name
        ["timeline", "--since", HOSTILE],
        ["timeline", "--actor", HOSTILE],
    ],
)
def test_a_refusal_quotes_what_was_typed_with_symbols(home, argv):
    said = _said("--home", str(home.root), *argv)
    assert SHOWN in said, said
    assert "\\x1b" not in said and "\\u202e" not in said and "\x1b" not in said and "\u202e" not in said


def test_a_search_that_finds_nothing_quotes_the_query_with_symbols(home):
    status, out, _ = ran("--home", str(home.root), "sessions", "search", HOSTILE)
    assert status == 0 and out == f"no matches for {SHOWN}\n"


def test_a_config_value_is_quoted_with_symbols(home):
    home.config_path.write_text('model:\n  timeout: "\\e[31mred\\u202e"\n', encoding="utf-8")
    status, out, _ = ran("--home", str(home.root), "doctor")
    assert status == 1 and f"model.timeout must be a number, got {SHOWN}." in out, out


@pytest.mark.parametrize(
    "argv",
    [
        ["memory", "history", "--target", HOSTILE],  # argparse's invalid choice
        ["memory", "show", f"--json={HOSTILE}"],  # argparse's ignored explicit argument
        [HOSTILE],  # a command no parser has
    ],
)
def test_argparse_errors_quote_what_was_typed_with_symbols(home, argv):
    status, _, err = ran("--home", str(home.root), *argv)
    assert status == 2 and SHOWN in err, err
    assert "\\x1b" not in err and "\\u202e" not in err


def test_a_mistyped_choice_is_quoted_as_typed_and_the_likely_one_named(home):
    status, _, err = ran("--home", str(home.root), "memory", "history", "--target", "us'er")
    assert status == 2 and "invalid choice: 'us'er' (choose from 'memory', 'user'). Did you mean 'user'?" in err, err


def test_a_long_typed_word_holding_an_escape_is_cut_where_a_message_quotes_it(home):
    """A word past 200 characters is repeated cut; one holding an escape was quoted whole, its symbols
    being no longer the word as typed that the cut looked for."""
    long = "a" * 300 + HOSTILE
    said = _said("--home", str(home.root), "sessions", "show", long)
    assert "a" * 200 not in said and "(309 characters in all)" in said, said


@pytest.mark.parametrize(
    "argv",
    [["memory", "remove", "--target", "memory", "--old"], ["curator", "rollback"], ["sessions", "show"]],
)
def test_a_typed_value_with_a_line_break_is_quoted_on_one_line(home, argv):
    """`memory remove` and `curator rollback` quoted with symbols but kept a line break, which split the
    message into what read as two lines of output."""
    said = _said("--home", str(home.root), *argv, "two\nlines")
    assert "'two⏎lines'" in said and "two\nlines" not in said, said
