"""``loose_matches`` counts the places Hermes's own patch takes for an old_string, as Hermes 0.19.0's
``tools/fuzzy_match.py`` finds them (checked here against that code, run in Hermes's own process)."""

from __future__ import annotations

import pytest

from engine.skills.loose_match import loose_matches

TEXT = (
    "---\nname: brew\ndescription: How to brew tea\n---\n\n"
    "Boil water.\n    Steep for 3 minutes.\nPour \u201cslowly\u201d \u2014 then wait.\n"
    "Serve.\nServe.\nStir, taste, and add milk if wanted.\nDone.\n"
)
CASES = [
    "Steep for 3 minutes.",  # exact
    "  Steep for 3 minutes.  \nPour",  # no exact: lines trimmed? (a part of a line is no whole line)
    "Steep for 3 minutes.\nPour \u201cslowly\u201d \u2014 then wait.",  # lines trimmed
    "Steep  for 3   minutes.",  # spaces collapsed
    "Boil water.\n  Steep for 3 minutes.",  # indentation ignored
    "Boil water.\\n    Steep",  # escapes
    'Pour "slowly" -- then wait.',  # typographic characters as ASCII
    "Serve.",  # twice
    "Boil water.\nSteep for four minutes.\nPour slowly then wait.",  # anchored on first and last lines
    "Stir, taste, and add milk if you like.",  # a similar line
    "Chill the pot overnight.",  # gone
    "Boil water.\nSomething else entirely.\nNothing alike at all here.\nDone.",  # anchors too far apart
]

HERMES_COUNTS = """
import json
from tools.fuzzy_match import fuzzy_find_and_replace
out = []
for old in %r:
    _, count, _, error = fuzzy_find_and_replace(%r, old, "NEW", replace_all=True)
    out.append(0 if error else count)
print(json.dumps(out))
"""


@pytest.mark.slow  # Hermes's own matching in its own process
def test_loose_matches_counts_what_hermes_fuzzy_matching_finds(hermes, tmp_path):
    expected = hermes.json(tmp_path, HERMES_COUNTS % (CASES, TEXT))
    assert [loose_matches(TEXT, old) for old in CASES] == expected
    assert {0, 1, 2} <= set(expected)  # the cases cover none, once and more than once


def test_an_empty_old_string_is_found_nowhere():
    assert loose_matches(TEXT, "") == 0


def test_a_file_too_large_to_judge_soon_is_not_judged():
    """A review: a 3,000-line SKILL.md and a 20-line old_string found nowhere took 6 s to judge (each
    window of lines compared line by line), on every preview of the refused patch. Past ``LINE_PAIRS``
    the count is not known, and the refusal's advice says so instead."""
    text = "\n".join(f"step {i}: run the thing number {i} carefully" for i in range(3000))
    pattern = "\n".join(f"a line nothing like the others, {i}" for i in range(20))
    assert loose_matches(text, pattern) is None
    assert loose_matches(text, "step 7: run the thing number 7 carefully") == 1  # (found before any budget)
