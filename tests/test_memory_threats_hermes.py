"""Which entries Hermes 0.19's own load-time scan blocks, against what the workbench says of it:
the workbench blocks more characters than Hermes looks for, and lets a few through that Hermes
blocks (a ZWJ in an emoji, a ZWNJ in a Persian word). Runs Hermes's code in its own venv."""

from __future__ import annotations

import json

import pytest

from engine.memory.threats import HERMES_BLOCKS, HERMES_PASSES, hermes_only_blocks, hermes_verdict
from engine.safety import assess

pytestmark = pytest.mark.slow

ENTRIES = {
    "escape": "Colour codes \x1b[31mred\x1b[0m in logs",
    "bell": "Ring the bell\x07 on deploy",
    "rlm": "Hebrew note \u05e9\u05dc\u05d5\u05dd\u200f here",
    "tags": "Tagged \U000e0041\U000e0042 text",
    "zwsp": "zero\u200bwidth",
    "override": "flip \u202etext",
    "emoji": "Team mascot is \U0001f469\u200d\U0001f4bb",
    "persian": "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 tea",
    "plain": "Deploys go through staging",
}

HERMES = """
import json
from tools.memory_tool import MemoryStore
store = MemoryStore()
print(json.dumps(store._sanitize_entries_for_snapshot(json.loads({entries!r}), "MEMORY.md")))
"""


def test_what_hermes_blocks_is_what_the_workbench_says_it_blocks(hermes, tmp_path):
    names = list(ENTRIES)
    shown = hermes.json(tmp_path, HERMES.format(entries=json.dumps([ENTRIES[n] for n in names])))
    blocked_by_hermes = {name for name, text in zip(names, shown, strict=True) if text.startswith("[BLOCKED:")}
    assert blocked_by_hermes == {"zwsp", "override", "emoji", "persian"}
    for name in names:
        verdict = assess(ENTRIES[name])
        if verdict.dangerous:
            expected = HERMES_BLOCKS if name in blocked_by_hermes else HERMES_PASSES
            assert hermes_verdict(verdict) == expected, name
        assert bool(hermes_only_blocks(ENTRIES[name])) == (name in blocked_by_hermes and not verdict.dangerous), name
    assert hermes_only_blocks(ENTRIES["emoji"]) == ["U+200D"] and hermes_only_blocks(ENTRIES["persian"]) == ["U+200C"]
