"""What a short command loads: work it never uses is left undone (every script's `workbench` call pays
for its start; docs/development.md, "Benchmarks", has the CPU figures). Each test runs the real entry
point in a process of its own and asks, as it exits, what that process made."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Run as ``python -m workbench``; at exit, what the command made is printed as one JSON line on stderr.
_PROBE = """
import atexit, json, runpy, sys

def said():
    rules = getattr(sys.modules.get("engine.safety.rules"), "ALL_RULES", [])
    made = [name for rule in rules for name in ("source", "gate", "pattern") if name in vars(rule)]
    sys.stderr.write(json.dumps({"rules_made": made, "modules": sorted(sys.modules)}) + "\\n")

atexit.register(said)
sys.argv = ["workbench", *sys.argv[1:]]
runpy.run_module("workbench", run_name="__main__")
"""


def _made(home, *args: str) -> dict:
    """What ``workbench --home HOME ARGS`` made, run in a process of its own; it must succeed."""
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, "--home", str(home), *args], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("command", [("pending", "list"), ("sessions", "list"), ("timeline",)])
def test_a_command_that_scans_nothing_makes_no_threat_rules(demo_root, command):
    """Folding the threat rules' patterns and indexing their gates is done on the first scan, not on
    import: these commands (in a journaled home, which catches up first) never scan."""
    assert _made(demo_root, *command)["rules_made"] == []


def test_a_scan_makes_the_rules_it_needs(demo_root):
    """``memory show`` scans each entry, so the rules are made then (the probe above sees them)."""
    assert _made(demo_root, "memory", "show")["rules_made"]


@pytest.mark.parametrize("command", [("pending", "list"), ("memory", "show")])
def test_a_listing_loads_no_fuzzy_matcher(demo_root, command):
    """rapidfuzz is loaded on the first comparison of two entries (``engine.memory.similar.score``), not
    with the memory store every listing opens."""
    assert "rapidfuzz" not in _made(demo_root, *command)["modules"]


@pytest.mark.parametrize("words", [("--help",), ("memroy",)])
def test_the_list_of_commands_imports_no_command(tmp_path, words):
    """``workbench --help`` and a mistyped command list every command from ``COMMANDS`` alone: no
    command's module (each imports the engine parts its handlers use) is loaded for it."""
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, "--home", str(tmp_path / "home"), *words], capture_output=True, text=True
    )
    assert "pending" in result.stdout + result.stderr  # (the list, on stdout for help, with the error otherwise)
    modules = json.loads(result.stderr.strip().splitlines()[-1])["modules"]
    assert [m for m in modules if m.endswith("_cmds")] == []


def test_a_session_listing_loads_no_agent(demo_root):
    """``sessions list`` reads ``engine.runner.claims`` only: the runner's session, with the models and
    memory providers it brings, loads when something names it (``engine.runner.AgentSession``)."""
    modules = _made(demo_root, "sessions", "list")["modules"]
    assert [m for m in modules if m in ("engine.runner.session", "engine.models", "engine.providers")] == []
