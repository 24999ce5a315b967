"""Workers hand results to the UI as Messages; engine events merge into one reload per screen,
and a hidden screen reloads once when it is shown again (workbench/screens/base.py)."""

from __future__ import annotations

import ast
import dataclasses
import threading
from pathlib import Path

import pytest

from engine.skills.manage import skill_manage_tool
from engine.tools import ToolContext
from tests.screens_seed import open_mode
from tests.tui_support import LateFirstAnswer, make_app, settle, wait_for
from widgets.entry_list import EntryList
from workbench.screens.approvals import ApprovalsScreen, QueueLoaded
from workbench.screens.base import StatusReport
from workbench.screens.memory import MemoryLoaded, MemoryScreen
from workbench.screens.skills import SkillsScreen

ROOT = Path(__file__).resolve().parent.parent
AGENT = ToolContext(actor="agent", session_id="s1")
BREW = "---\nname: brew\ndescription: How to brew tea\n---\n\nBoil water.\n"

pytestmark = pytest.mark.anyio


def live_texts(screen: MemoryScreen) -> list[str]:
    return [row.text for row in screen.query_one("#live-list", EntryList).rows]


def count_reads(screen) -> list[str]:
    """Wrap the screen's worker-side read: one item per load that actually ran."""
    calls: list[str] = []
    read = screen._read

    def counted(target: str):
        calls.append(target)
        return read(target)

    screen._read = counted
    return calls


def count_reloads(screen) -> list[None]:
    """Wrap the screen's ``reload``: one item per reload started (a load worker may still be
    superseded by a newer one; this counts the requests that were not merged)."""
    calls: list[None] = []
    reload = screen.reload

    def counted() -> None:
        calls.append(None)
        reload()

    screen.reload = counted
    return calls


def handled(screen) -> list[tuple[object, int]]:
    """Every message the screen has handled, with the thread that handled it."""
    seen: list[tuple[object, int]] = []
    screen.message_signal.subscribe(
        screen, lambda message: seen.append((message, threading.get_ident())), immediate=True
    )
    return seen


async def test_a_workers_result_arrives_as_a_dataclass_message_on_the_ui_thread(home, tmp_path):
    home.memory.add("memory", "Likes tea")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        ui_thread = threading.get_ident()
        seen = handled(screen)
        screen.reload()
        await settle(pilot)
        loads = [(m, thread) for m, thread in seen if isinstance(m, MemoryLoaded)]
        assert len(loads) == 1 and dataclasses.is_dataclass(loads[0][0])
        assert loads[0][1] == ui_thread
        assert [row.text for row in loads[0][0].view.live] == ["Likes tea"] == live_texts(screen)

        screen._remove("memory", "Likes tea")  # a write worker reports its outcome the same way
        await settle(pilot)
        reports = [m for m, thread in seen if isinstance(m, StatusReport) and thread == ui_thread]
        assert [(m.text, m.error) for m in reports] == [("Entry removed.", False)]
        assert home.memory.entries("memory") == []


async def test_events_while_a_screen_is_hidden_cause_one_reload_when_it_is_shown(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        memory = app.screen
        await pilot.press("4")
        await settle(pilot)
        reads, reloads = count_reads(memory), count_reloads(memory)
        for n in range(6):  # six writes, each its own engine event, while Memory is hidden
            home.memory.add("memory", f"Written while hidden {n}", ToolContext(actor="agent"))
            await settle(pilot)
        assert reads == [] and reloads == [] and memory.stale
        assert live_texts(memory) == []  # it still shows what it showed

        await pilot.press("1")
        await settle(pilot)
        assert reads == ["memory"] and len(reloads) == 1, "one reload on showing, not one per event"
        assert not memory.stale
        assert live_texts(memory) == [f"Written while hidden {n}" for n in range(6)]

        await pilot.press("4")  # nothing happened meanwhile: showing it again rereads nothing
        await pilot.press("1")
        await settle(pilot)
        assert reads == ["memory"]


async def test_a_burst_of_engine_events_merges_into_one_reload(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("4")
        await settle(pilot)
        approvals = app.screen
        assert isinstance(approvals, ApprovalsScreen)
        seen, reloads = handled(approvals), count_reloads(approvals)
        for n in range(20):  # written on the UI thread: all 20 events queue before the app runs again
            home.memory.add("memory", f"Burst {n}", ToolContext(actor="agent"))
        await settle(pilot)
        assert len(reloads) == 1, "20 reload requests merged into one"
        assert sum(isinstance(m, QueueLoaded) for m, _ in seen) == 1
        assert home.memory.entries("memory") == [f"Burst {n}" for n in range(20)]

        await pilot.press("1")
        await settle(pilot)
        memory = app.screen
        reads, reloads = count_reads(memory), count_reloads(memory)
        for n in range(20):
            home.memory.add("memory", f"Second burst {n}", ToolContext(actor="agent"))
        await settle(pilot)
        assert reads == ["memory"] and len(reloads) == 1
        assert live_texts(memory)[-1] == "Second burst 19"


def test_no_worker_calls_back_with_call_from_thread():
    """The idiom is the only path: a ``call_from_thread`` in the UI code fails here."""
    found = []
    for path in [*(ROOT / "workbench").rglob("*.py"), *(ROOT / "widgets").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "call_from_thread":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


def test_exclusive_workers_answer_through_post_result():
    """A newer run cancels an older one, whose thread still answers: only ``post_result``
    checks, on arrival, that its run was not superseded (``messages.ResultsFromWorkers``)."""
    found = []
    for path in [*(ROOT / "workbench").rglob("*.py"), *(ROOT / "widgets").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef) or not any(
                isinstance(d, ast.Call) and any(k.arg == "exclusive" for k in d.keywords) for d in node.decorator_list
            ):
                continue
            found += [
                f"{path.relative_to(ROOT)}:{call.lineno}"
                for call in ast.walk(node)
                if isinstance(call, ast.Attribute) and call.attr == "post_message"
            ]
    assert found == []


async def test_an_older_skills_load_answering_last_is_dropped(home, tmp_path, monkeypatch):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_mode(pilot, "3", SkillsScreen)
        late = LateFirstAnswer(monkeypatch, home.skills, "list")
        screen.load_skills()
        await wait_for(pilot, late.started.is_set, what="the first load reading")
        home.skills.manage({"action": "create", "name": "brew", "content": BREW}, None)  # its event reloads
        await wait_for(pilot, lambda: screen.skill_list.key_of("brew") is not None, what="the newer load")
        await late.release(pilot, "skills")  # the load from before the skill existed answers last
        assert screen.skill_list.key_of("brew") is not None


async def test_an_older_pending_count_answering_last_is_dropped(home, tmp_path, monkeypatch):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        late = LateFirstAnswer(monkeypatch, home.approvals, "count")
        app.refresh_pending()
        await wait_for(pilot, late.started.is_set, what="the first count reading")
        home.config_path.write_text("skills:\n  write_approval: true\n")
        home.reload_config()
        staged = skill_manage_tool(home, {"action": "create", "name": "brew", "content": BREW}, AGENT)
        assert staged["staged"]
        await wait_for(pilot, lambda: app.pending_count == 1, what="the newer count")
        await late.release(pilot, "pending-count")  # the count from before the proposal answers last
        assert app.pending_count == 1
