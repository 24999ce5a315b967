"""The Approvals screen on records Hermes staged (``old_text`` only, no pinned entry)."""

from __future__ import annotations

import json

import pytest
from textual.widgets import OptionList, Static

from engine.tools import ToolContext
from tests.tui_support import make_app, settle, wait_for

pytestmark = pytest.mark.anyio


def hermes_record(home, pid: str, created_at: float, payload: dict) -> None:
    """A record exactly as Hermes 0.19.0's ``stage_write`` lays it out."""
    record = {"id": pid, "subsystem": "memory", "action": payload["action"], "summary": f"{payload['action']} (hermes)",
              "origin": "foreground", "created_at": created_at, "payload": payload}
    folder = home.pending_dir / "memory"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{pid}.json").write_text(json.dumps(record, ensure_ascii=False, indent=2), encoding="utf-8")


def text_of(app, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).content)


async def test_hermes_batch_shows_the_entries_it_hits_and_an_ambiguous_remove_is_refused(home, tmp_path):
    for entry in ("User likes tea", "Project uses uv", "Deploys on Fridays"):
        home.memory.add("memory", entry, ToolContext(actor="user"))
    hermes_record(home, "0000aaaa", 1.0, {"action": "batch", "target": "memory", "operations": [
        {"action": "replace", "old_text": "tea", "content": "User likes green tea"},
        {"action": "remove", "old_text": "uv"}, {"action": "add", "content": "CI on GitHub"}]})
    hermes_record(home, "0000bbbb", 2.0, {"action": "remove", "target": "memory", "content": None, "old_text": "s"})
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("4")
        await settle(pilot)
        await wait_for(pilot, lambda: "+ User likes green tea" in text_of(app, "#proposal-diff"), what="batch diff")
        diff = text_of(app, "#proposal-diff")
        assert "- User likes tea" in diff and "- Project uses uv" in diff and "+ CI on GitHub" in diff
        assert text_of(app, "#proposal-warnings") == ""
        await pilot.press("down")
        await wait_for(pilot, lambda: "Would be refused" in text_of(app, "#proposal-warnings"), what="refusal")
        assert "now matches 3 different entries in MEMORY.md" in text_of(app, "#proposal-warnings")
        await pilot.press("up")
        await settle(pilot)
        await pilot.press("a")
        await wait_for(pilot, lambda: app.screen.query_one("#queue", OptionList).option_count == 1, what="approved")
    assert home.memory.entries("memory") == ["User likes green tea", "Deploys on Fridays", "CI on GitHub"]
    assert [r.id for r in home.approvals.list()] == ["0000bbbb"]
