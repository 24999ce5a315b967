"""Hermes's memory calls replayed on a file as its tool applies them (``engine.memory.replay``)."""

from __future__ import annotations

from engine.memory.archive_writes import ArchiveWrite
from engine.memory.replay import replay


def _call(action, text, old_text=None, message_id=1):
    return ArchiveWrite("memory", text, action, "s", message_id, 0.0, old_text)


def _steps(entries, calls):
    steps, left = replay(entries, calls)
    return [(s.action, s.before, s.after, s.index) for s in steps], left


def test_an_add_and_its_remove_are_two_steps_and_leave_the_file_as_it_was():
    calls = [_call("add", "Loop note 7"), _call("remove", "Loop note 7", "note 7", 2)]
    assert _steps(["Kept"], calls) == (
        [("add", None, "Loop note 7", 1), ("remove", "Loop note 7", None, 1)],
        ["Kept"],
    )


def test_each_call_takes_the_entry_holding_its_text_as_hermes_matches_it():
    entries = ["Deploys on Fridays", "Loop note 71 about the cache"]
    calls = [_call("replace", "Deploys on Mondays", "Fridays"), _call("remove", "cache", "the cache")]
    assert _steps(entries, calls) == (
        [
            ("replace", "Deploys on Fridays", "Deploys on Mondays", 0),
            ("remove", "Loop note 71 about the cache", None, 1),
        ],
        ["Deploys on Mondays"],
    )


def test_a_call_hermess_tool_would_have_failed_on_this_file_is_skipped():
    entries = ["Loop note 71", "Loop note 72"]
    skipped = [
        _call("remove", "Typed by hand", "Typed by hand"),  # no entry holds it
        _call("replace", "Loop note", "Loop note"),  # two different entries hold it
        _call("add", "Loop note 71"),  # already there: Hermes writes nothing
        _call("replace", "Loop note 72", "note 72"),  # (writes what is there: no change)
    ]
    assert _steps(entries, skipped) == ([], entries)
