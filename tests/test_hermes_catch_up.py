"""The look that catches up with memory edits made while no workbench watched, on a home Hermes Agent
0.19.0's own code writes (its own process): what state.db's stored memory calls say decides how a gone
entry and a new one are journaled, before any rule that guesses from the texts.

A Hermes loop adds a note and removes an older one; with the workbench closed, the look found the old
note gone and a new, similar one at the end of the file, and journaled a replace that never happened,
credited to Hermes's add call.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from engine import open_home
from engine.timeline import Source, Timeline, describe_group
from tests.cli_support import printed
from tests.hermes_support import MEMORY_TURNS, write_from_another_process
from tests.screens_seed import open_mode
from tests.tui_support import make_app, wait_for
from widgets.timeline_list import TimelineList
from workbench.screens.timeline import TimelineScreen

pytestmark = pytest.mark.slow  # Hermes's code runs in its own processes

OLD, NEW = "Loop note 71 at 10:00:00: 部署は金曜日に行う", "Loop note 125 at 10:05:00: 部署は金曜日に行う"

# STEP is prepended. "first" adds the old note in a turn; "next" adds the new note in a turn and then
# removes the old one, in a turn when STORED (else through the tool alone, as the trial's loop does).
HERMES_LOOP = (
    MEMORY_TURNS
    + r"""
if STEP == "first":
    db.create_session("s-live", source="cli", model="m")
    turn("s-live", "old", {"action": "add", "content": OLD})
else:
    turn("s-live", "new", {"action": "add", "content": NEW})
    if STORED:
        turn("s-live", "drop", {"action": "remove", "old_text": "Loop note 71"})
    else:
        assert json.loads(memory_tool(store=store, action="remove", old_text="Loop note 71"))["success"]
print(json.dumps(ids))
"""
)


def history(root):
    """The memory rows ``memory history`` lists (it catches up first), oldest first."""
    events = json.loads(printed("memory", "history", "--home", str(root), "--json"))["events"]
    return [(e["actor"], e["action"], e["before"], e["after"], e["message_id"]) for e in reversed(events)]


def looked_at_seed(tmp_path):
    """A home whose MEMORY.md a workbench process has looked at (its first look)."""
    root = tmp_path / "home"
    write_from_another_process(root / "memories" / "MEMORY.md", "Project uses PostgreSQL\n§\nDeploys on Fridays")
    assert history(root)[0][:2] == ("external", "seen")
    return root


@pytest.mark.parametrize("stored", [False, True], ids=["remove-unstored", "remove-stored"])
def test_hermess_add_and_remove_seen_at_once_are_an_add_and_a_remove(hermes, tmp_path, stored):
    root = looked_at_seed(tmp_path)
    first = hermes.json(root, f"STEP, STORED, OLD, NEW = 'first', {stored}, {OLD!r}, {NEW!r}\n" + HERMES_LOOP)
    history(root)  # the workbench looks between Hermes's rounds
    ids = hermes.json(root, f"STEP, STORED, OLD, NEW = 'next', {stored}, {OLD!r}, {NEW!r}\n" + HERMES_LOOP)
    assert history(root)[1:] == [  # in Hermes's order: its add replayed, then what took the old note out
        ("agent", "add", None, OLD, first["old"]),
        ("agent", "add", None, NEW, ids["new"]),
        ("agent" if stored else "external", "remove", OLD, None, ids["drop"] if stored else None),
    ]
    shown = printed("timeline", "--home", str(root))
    assert "→" not in shown  # no replace, on the Timeline either
    (added,) = [line for line in shown.splitlines() if "+ 'Loop note 125" in line]
    assert " agent " in added and added.endswith("(session s-live)")  # the replayed call's row, in its session


async def loop_notes_on_timeline(root, tmp_path, arrived) -> list[tuple[str, str]]:
    """(actor, what) of the rows about loop notes on the Timeline of a TUI opened on ``root`` (its watcher
    catching up as it starts), newest first, once ``arrived`` says they are there."""
    home = open_home(root)
    try:
        async with make_app(home, tmp_path, watch_files=True).run_test(size=(120, 40)) as pilot:
            screen = await open_mode(pilot, "6", TimelineScreen)
            table = screen.query_one(TimelineList)

            def notes():
                cells = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
                return [(row[1], row[3].strip()) for row in cells if "Loop note" in row[3]]

            await wait_for(pilot, lambda: arrived(notes()), what="the catch-up")
            return notes()
    finally:
        home.close()


@pytest.mark.anyio
async def test_the_tui_opened_after_hermess_rounds_shows_an_add_and_a_remove(hermes, tmp_path):
    """The TUI's watcher catches up as it starts: the Timeline read `agent … 'Loop note 71' → 'Loop note 125'`."""
    root = looked_at_seed(tmp_path)
    hermes.json(root, f"STEP, STORED, OLD, NEW = 'first', False, {OLD!r}, {NEW!r}\n" + HERMES_LOOP)
    history(root)
    hermes.json(root, f"STEP, STORED, OLD, NEW = 'next', False, {OLD!r}, {NEW!r}\n" + HERMES_LOOP)
    notes = await loop_notes_on_timeline(root, tmp_path, lambda notes: any("Loop note 125" in n for _, n in notes))
    assert [(actor, note.split(" at ")[0]) for actor, note in notes] == [
        ("external", "MEMORY − 'Loop note 71"),
        ("agent", "MEMORY + 'Loop note 125"),
        ("agent", "MEMORY + 'Loop note 71"),
    ]


def test_the_same_edit_by_hand_is_still_paired_as_a_replace(hermes, tmp_path):
    """No call explains it (Hermes's add of the old note came before the look): the look's own rule, a
    similar entry in the last one's place."""
    root = looked_at_seed(tmp_path)
    hermes.json(root, f"STEP, STORED, OLD, NEW = 'first', True, {OLD!r}, {NEW!r}\n" + HERMES_LOOP)
    history(root)
    memory_md = root / "memories" / "MEMORY.md"
    write_from_another_process(memory_md, memory_md.read_text(encoding="utf-8").replace(OLD, NEW))
    assert history(root)[-1] == ("external", "replace", OLD, NEW, None)


# Holds state.db's write lock in exclusive locking mode (no reader gets in, WAL or not) until stdin closes.
HOLD_LOCK = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA locking_mode=EXCLUSIVE")
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()
"""


def test_a_locked_state_db_leaves_the_look_to_its_own_rule(hermes, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "0.2")  # (opening the archive still waits that long: not the point)
    root = looked_at_seed(tmp_path)
    hermes.json(root, f"STEP, STORED, OLD, NEW = 'first', True, {OLD!r}, {NEW!r}\n" + HERMES_LOOP)
    history(root)
    hermes.json(root, f"STEP, STORED, OLD, NEW = 'next', True, {OLD!r}, {NEW!r}\n" + HERMES_LOOP)
    gc.collect()  # (the connections of the commands run in this process, which would keep the lock out)
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(HOLD_LOCK), str(root / "state.db")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(sqlite3.OperationalError):  # (a reader is indeed kept out)
            sqlite3.connect(root / "state.db", timeout=0).execute("SELECT count(*) FROM messages").fetchone()
        home = open_home(root)
        try:
            home.memory.catch_up()
            (row,) = home.journal.query(subsystem="memory", limit=1)
        finally:
            home.close()
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert (row.action, row.before, row.after) == ("replace", OLD, NEW)  # paired as a hand edit is


# Hermes stores a turn once it ends, so a watcher may see the file change before the call is in state.db:
# STEP "tool" runs the memory call CALL (its message stamped first), STEP "store" stores the turn afterwards.
HERMES_LATE = (
    MEMORY_TURNS
    + r"""
import time
call = CALL
if STEP == "tool":
    stamp = time.time()
    ids = {"stamp": stamp, "result": memory_tool(store=store, **call)}
else:
    db.create_session("hermes-late", source="cli", model="m")
    db.append_message("hermes-late", "user", "reword it", timestamp=SAID["stamp"])
    wire = {"id": "call_late", "type": "function", "function": {"name": "memory", "arguments": json.dumps(call)}}
    ids = {"late": db.append_message("hermes-late", "assistant", None, tool_calls=[wire], timestamp=SAID["stamp"])}
    db.append_message("hermes-late", "tool", SAID["result"], tool_name="memory", tool_call_id="call_late")
print(json.dumps(ids))
"""
)


REWORD = {"action": "replace", "old_text": "Fridays", "content": "Quarterly audits in March"}


def test_a_replace_whose_call_was_stored_after_the_look_still_reads_as_one(hermes, tmp_path):
    """The look could not know (no call yet): a remove beside an add, as on disk. Once the call is stored,
    the Timeline sums the two up as the one replace it names."""
    root = looked_at_seed(tmp_path)
    said = hermes.json(root, f"STEP, CALL = 'tool', {REWORD!r}\n" + HERMES_LATE)
    assert [row[:2] for row in history(root)[1:]] == [("external", "remove"), ("external", "add")]
    ids = hermes.json(root, f"STEP, CALL, SAID = 'store', {REWORD!r}, {said!r}\n" + HERMES_LATE)
    home = open_home(root, read_only=True)
    try:
        timeline = Timeline(home)
        halves = timeline.with_sources(timeline.page(actor="agent"))
        assert (
            describe_group(halves) == "Hermes's edit of MEMORY in session hermes-late (2 rows): 1 memory entry replaced"
        )
        assert {timeline.source(row) for row in halves} == {Source("hermes-late", ids["late"], "archive", "replace")}
        # the halves without their call (no lookup made): the rows alone cannot tell
        assert "replaced" not in describe_group([dataclasses.replace(r, source=None) for r in halves])
    finally:
        home.close()


# Hermes removes note 7 and adds note 71 (a look journals both), then replaces note 71 with unlike text.
STALE_REMOVE = (
    MEMORY_TURNS
    + r"""
if STEP == "first":
    db.create_session("s-live", source="cli", model="m")
    for name, arguments in [
        ("add7", {"action": "add", "content": "Loop note 7 about the build"}),
        ("drop7", {"action": "remove", "old_text": "Loop note 7"}),
        ("add71", {"action": "add", "content": "Loop note 71 about the cache"}),
    ]:
        turn("s-live", name, arguments)
else:
    turn("s-live", "swap", {"action": "replace", "old_text": "Loop note 71", "content": "Deploys go out on Fridays"})
print(json.dumps(ids))
"""
)


def test_a_remove_the_last_look_saw_leaves_hermess_later_replace_one_replace(hermes, tmp_path):
    """The calls a look weighs go back a minute before the journal's last row: Hermes's remove of
    "Loop note 7", already journaled, matched note 71 too, and Hermes's replace of note 71 within that
    minute was journaled as a remove and an add."""
    root = looked_at_seed(tmp_path)
    hermes.json(root, "STEP = 'first'\n" + STALE_REMOVE)
    history(root)  # the workbench looks between Hermes's rounds
    ids = hermes.json(root, "STEP = 'next'\n" + STALE_REMOVE)
    assert history(root)[-1] == (
        "agent",
        "replace",
        "Loop note 71 about the cache",
        "Deploys go out on Fridays",
        ids["swap"],
    )


def test_an_edit_by_hand_after_hermess_remove_of_a_shorter_note_stays_a_replace(hermes, tmp_path):
    """Hermes's remove of "Loop note 7" (its entry known from the add before it) matched note 71 by its
    words alone, so an edit of note 71 by hand within the minute was split into a remove and an add."""
    root = looked_at_seed(tmp_path)
    hermes.json(root, "STEP = 'first'\n" + STALE_REMOVE)
    history(root)
    path = root / "memories" / "MEMORY.md"
    edited = "Loop note 71 about the cache, cleared weekly"
    write_from_another_process(path, path.read_text(encoding="utf-8").replace("Loop note 71 about the cache", edited))
    assert history(root)[-1] == ("external", "replace", "Loop note 71 about the cache", edited, None)
