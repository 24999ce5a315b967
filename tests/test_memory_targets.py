"""One registry of memory targets: a target added as one row (its defaults included) is everywhere."""

from __future__ import annotations

import json

import pytest

from engine.memory import targets
from engine.memory.targets import MemoryTarget, next_target
from engine.memory.tool import memory_tool, memory_tool_schema
from engine.runner.prompt import build_system_prompt
from engine.tools import ToolContext
from workbench.cli import main
from workbench.watch import classify

NOTES = MemoryTarget(
    "notes",
    "NOTES.md",
    "PROJECT NOTES (what this project is)",
    "project notes",
    "NOTES",
    "memory.notes_char_limit",
    "memory.notes_enabled",
    500,
)


@pytest.fixture
def notes(monkeypatch):
    monkeypatch.setitem(targets.REGISTRY, "notes", NOTES)  # the row is all it takes


def test_the_two_hermes_targets_in_order():
    assert list(targets.TARGETS) == ["memory", "user"] and targets.FILE_NAMES["user"] == "USER.md"
    assert next_target("memory") == "user" and next_target("user") == "memory"


def test_a_third_target_reaches_store_tool_schema_prompt_watcher_and_memory_show(home, notes, capsys):
    assert next_target("user") == "notes" and next_target("notes") == "memory"  # the `t` key cycles through it
    result = home.memory.add("notes", "The repo uses uv", ToolContext(actor="agent"))
    assert result["success"] and result["usage"] == "3% — 16/500 chars"
    assert (home.memories_dir / "NOTES.md").read_text() == "The repo uses uv"
    assert memory_tool_schema(home)["function"]["parameters"]["properties"]["target"]["enum"] == [
        "memory",
        "user",
        "notes",
    ]
    prompt = build_system_prompt(home)
    assert "PROJECT NOTES (what this project is) [3% — 16/500 chars]" in prompt and "The repo uses uv" in prompt
    assert home.memory.snapshot().entries["notes"] == ("The repo uses uv",)
    assert classify(home, [str(home.memories_dir / "NOTES.md")]) == {"notes"}
    assert main(["memory", "show", "--home", str(home.root), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["notes"]["entries"] == ["The repo uses uv"] and shown["notes"]["limit"] == 500
    assert main(["memory", "show", "--target", "notes", "--home", str(home.root)]) == 0
    assert capsys.readouterr().out.startswith("NOTES.md (project notes)\n")  # (its label, with no words of its own)
    home.config_path.write_text("memory:\n  notes_enabled: false\n", encoding="utf-8")
    home.reload_config()
    assert "PROJECT NOTES" not in build_system_prompt(home)
    refused = memory_tool(home, {"action": "add", "target": "notes", "content": "x"}, ToolContext(actor="agent"))
    assert refused["success"] is False and "NOTES.md writes are disabled" in refused["error"]
