"""The Timeline's actor filter lists what the actor column shows: a memory edit real Hermes Agent 0.19.0
made through a ``memory`` tool call state.db stores once the turn ends, after the workbench's look journaled
it ``external``, is the agent's once the call is stored (the next look credits the row to it,
``memory.credit``), so ``actor:agent`` finds it and ``actor:external`` does not, page by page."""

from __future__ import annotations

import json

import pytest

import engine.timeline
from engine import open_home
from engine.memory.history import hermes_call
from engine.timeline import Timeline
from tests.cli_support import printed as workbench
from tests.hermes_support import MEMORY_TURNS

pytestmark = pytest.mark.slow  # Hermes's code runs in its own process

CALLED = [f"Called fact {n:02}" for n in range(8)]  # each written by a memory tool call stored after the look
QUIET = [f"Quiet fact {n:02}" for n in range(8)]  # each by Hermes's memory tool with no turn stored

HERMES = (
    MEMORY_TURNS
    + r"""
if STEP == "start":
    db.create_session("s-many", source="cli", model="m")
    turn("s-many", "seed", {"action": "add", "target": "memory", "content": "Seed fact"})
elif STEP == "many":  # the tools run; their turn is not stored yet
    import time
    for n in range(8):
        call = {"action": "add", "target": "memory", "content": f"Called fact {n:02}"}
        ids[f"called{n}"] = [call, time.time(), memory_tool(store=store, **call)]
        memory_tool(store=store, action="add", target="memory", content=f"Quiet fact {n:02}")
else:  # the turn stored once it ended, each call's message stamped when it ran
    for name, (call, at, result) in SAID.items():
        db.append_message("s-many", "user", name, timestamp=at)
        wire = {"id": "call_" + name, "type": "function", "function": {"name": "memory", "arguments": json.dumps(call)}}
        ids[name] = db.append_message("s-many", "assistant", None, tool_calls=[wire], timestamp=at)
        db.append_message("s-many", "tool", result, tool_name="memory", tool_call_id=wire["id"])
print(json.dumps(ids))
"""
)


@pytest.fixture(scope="module")
def written(hermes, tmp_path_factory):
    """A home whose MEMORY.md Hermes's code wrote in a session, the workbench looking after each step."""
    root = tmp_path_factory.mktemp("hermes-actor")
    said = {}
    for step in ("start", "many"):
        said = hermes.json(root, f"STEP, SAID = {step!r}, {said!r}\n" + HERMES)
        workbench("timeline", "--home", str(root))
    hermes.json(root, f"STEP, SAID = 'stored', {said!r}\n" + HERMES)
    workbench("timeline", "--home", str(root))  # (its look credits the rows to the calls stored since)
    return root


def summaries(rows) -> list[str]:
    return [row["summary"] if isinstance(row, dict) else row.summary for row in rows]


CALLED_ROWS = [f"MEMORY + '{text}'" for text in reversed(CALLED)]  # newest first
OUTSIDE_ROWS = [*(f"MEMORY + '{text}'" for text in reversed(QUIET)), "MEMORY first look: 1 entry already there"]


def cli_pages(root, actor: str, limit: int) -> list[dict]:
    """Every row ``workbench timeline --actor`` lists, page by page (``--before`` the last one's id)."""
    found, before = [], []
    while True:
        args = ["--json", "--actor", actor, "--limit", str(limit), *before]
        page = json.loads(workbench("timeline", "--home", str(root), *args))["rows"]
        assert len(page) <= limit
        found += page
        if len(page) < limit:
            return found
        before = ["--before", str(page[-1]["id"])]


def test_the_cli_actor_filter_lists_the_actor_each_row_is_shown_as(written):
    agent = cli_pages(written, "agent", 3)  # full pages of three while more rows are the agent's
    assert summaries(agent) == CALLED_ROWS
    assert {(row["actor"], row["by"]) for row in agent} == {("agent", "agent")}
    outside = cli_pages(written, "external", 3)
    assert summaries(outside) == OUTSIDE_ROWS
    assert {row["by"] for row in outside} == {"external"}
    text = workbench("timeline", "--home", str(written), "--actor", "agent", "--limit", "2")
    assert [line.split()[3] for line in text.splitlines() if line.startswith(" ") and "MEMORY" in line] == [
        "agent",
        "agent",
    ]
    assert "Older: " in text  # (six more of the agent's are left)


def test_the_engine_pages_by_the_shown_actor_batch_after_batch(written, monkeypatch):
    monkeypatch.setattr(engine.timeline, "SHOWN_BATCH", 1, raising=False)  # a batch a row: pages span many batches
    home = open_home(written)
    try:
        timeline = Timeline(home)
        for actor, expected in (("agent", CALLED_ROWS), ("external", OUTSIDE_ROWS)):
            found, before = [], None
            while page := timeline.page(actor=actor, limit=2, before_id=before):
                assert len(page) == 2 or len(found) + len(page) == len(expected)
                found += timeline.with_sources(page)
                before = page[-1].id
            assert summaries(found) == expected
            assert {row.by for row in found} == {actor}
        # with search text too: the box's ``actor:agent fact 0`` and ``actor:external quiet``
        assert summaries(timeline.page(actor="agent", text="fact 0", limit=3)) == CALLED_ROWS[:3]
        assert summaries(timeline.page(actor="external", text="called", limit=3)) == []
        assert summaries(timeline.page(actor="external", text="quiet", limit=20)) == OUTSIDE_ROWS[:-1]
    finally:
        home.close()


WINDOW = "SELECT at FROM journal WHERE"  # the journal's last recording of the file before a row


def test_a_row_no_hermes_call_wrote_is_told_without_querying_its_window(written, tmp_path):
    """An ``actor:agent`` page passes over every hand edit newer than its rows: each is answered from the
    archive's writes (read once), not by the journal queries a call's window takes. (The called row is
    made outside again, as it was before the look that credited it: its call's window is read.)"""
    import shutil
    import sqlite3

    root = tmp_path / "copy"
    shutil.copytree(written, root)
    with sqlite3.connect(root / "workbench.db") as db:
        db.execute(
            "UPDATE journal SET actor = 'external', session_id = NULL, message_id = NULL WHERE after = ?",
            (CALLED[3],),
        )
    home = open_home(root)
    try:
        quiet = [r for r in home.journal.query(subsystem="memory", actor="external") if r.after == QUIET[3]]
        called = [r for r in home.journal.query(subsystem="memory", actor="external") if r.after == CALLED[3]]
        statements: list[str] = []
        home.journal.connection().set_trace_callback(statements.append)
        assert hermes_call(home.memory, quiet[0]) is None
        assert not [s for s in statements if s.startswith(WINDOW)]
        assert hermes_call(home.memory, called[0]) is not None  # (a call's window is still read)
        assert [s for s in statements if s.startswith(WINDOW)]
    finally:
        home.journal.connection().set_trace_callback(None)
        home.close()


def _skills_edited_by_hand(root, count: int):
    """A home whose ``count`` skills were each edited outside (no call behind any), and one skill_manage
    call in state.db, of another skill, as the workbench's agent stores its turns."""
    from engine.tools import ToolContext

    home = open_home(root)
    for n in range(count):
        content = f"---\nname: hand-{n:02}\ndescription: Kept by hand\n---\n\nSteps.\n"
        home.skills.manage({"action": "create", "name": f"hand-{n:02}", "content": content}, ToolContext(actor="user"))
    home.skills.outside.record()
    for n in range(count):
        path = root / "skills" / f"hand-{n:02}" / "SKILL.md"
        path.write_text(path.read_text() + "Edited by hand.\n")
    home.skills.outside.record()
    home.archive.create_session("s-agent", source="cli", model="m")
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "skill_manage", "arguments": '{"action": "create", "name": "other"}'},
    }
    home.archive.append_message("s-agent", "assistant", None, tool_calls=[call])
    return home


def test_an_agent_page_past_skills_edited_by_hand_reads_no_window_per_row(tmp_path):
    """An ``actor:agent`` page ran a journal query and a full-text search for each outside skill row; a
    skill no ``skill_manage`` call ever named is now answered from the names the calls give, read once."""
    counted = []
    for count in (3, 12):
        home = _skills_edited_by_hand(tmp_path / f"home-{count}", count)
        try:
            statements: list[str] = []
            home.journal.connection().set_trace_callback(statements.append)
            home.archive.conn().set_trace_callback(statements.append)
            assert Timeline(home).page(actor="agent", limit=50) == []
            counted.append(len(statements))
        finally:
            home.journal.connection().set_trace_callback(None)
            home.archive.conn().set_trace_callback(None)
            home.close()
    assert counted[0] == counted[1], counted  # as many statements for 12 rows as for 3
