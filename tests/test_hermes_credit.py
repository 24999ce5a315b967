"""A change Hermes Agent 0.19.0's memory tool made (its own code, in its own process), journaled as an
outside edit by a look that came before Hermes stored the turn, is credited to the call once it is stored.

Before, the call stored later found its work already journaled and was skipped, and the row stayed
``external`` with no session for good: the journal never named Hermes's session for its own change.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from subprocess import PIPE

import pytest

import workbench.app
from engine import open_home
from engine.clock import FixedClock
from engine.events import MemoryChanged
from engine.memory.format import read_as_hermes
from engine.tools import ToolContext
from tests.cli_support import printed
from tests.hermes_support import MEMORY_TURNS, workbench_cmd, write_from_another_process
from tests.screens_seed import open_mode
from tests.test_hermes_replay import ADD, DROP, LATE, NOTE, SEED, history, looked_at_seed
from tests.test_tui_timeline import cursor_to
from tests.tui_support import make_app, settle, wait_for
from widgets.entry_list import EntryList
from widgets.timeline_list import TimelineList
from workbench.screens.memory import MemoryScreen
from workbench.screens.timeline import TimelineScreen

pytestmark = pytest.mark.slow  # Hermes's code runs in its own processes

DROP_SEED = {"action": "remove", "old_text": "Deploys on"}


def rows(root: Path) -> list[tuple]:
    """The memory journal's rows past the first look, as stored: (id, actor, action, session, message, credited)."""
    with sqlite3.connect(root / "workbench.db") as db:
        found = db.execute(
            "SELECT id, actor, action, session_id, message_id, detail FROM journal "
            "WHERE subsystem = 'memory' AND action != 'seen' ORDER BY id"
        ).fetchall()
    return [(*row[:5], "credited" in json.loads(row[5] or "{}")) for row in found]


def hermes_tool(hermes, root: Path, call: dict) -> tuple:
    """Hermes's memory tool runs ``call`` (writing MEMORY.md at once); its turn is not stored yet."""
    return call, hermes.json(root, f"STEP, CALL = 'tool', {call!r}\n" + LATE)


def store_turn(hermes, root: Path, said: list) -> list[int]:
    """Hermes stores the turn that made the calls ``said``: the assistant message ids, in order."""
    return hermes.json(root, f"STEP, SAID = 'store', {said!r}\n" + LATE)


def test_the_outside_row_is_credited_to_the_call_once_its_turn_is_stored(hermes, tmp_path):
    root = looked_at_seed(tmp_path)
    said = [hermes_tool(hermes, root, ADD[1])]
    history(root)  # a look before Hermes stored the turn: an outside add, no session
    ((row_id, *outside),) = rows(root)
    assert outside == ["external", "add", None, None, False]
    (added,) = store_turn(hermes, root, said)
    # two workbench processes look at once: the row is credited once, and nothing else is journaled
    looks = [
        subprocess.Popen(workbench_cmd("memory", "history", "--home", str(root)), stdout=subprocess.DEVNULL)
        for _ in "ab"
    ]
    assert [look.wait(60) for look in looks] == [0, 0]
    assert rows(root) == [(row_id, "agent", "add", "s-late", added, True)]
    shown = printed("memory", "history", "--home", str(root))
    # (a look that came more than a second after Hermes's write, as under load, says so first: `(found …; `)
    assert re.search(
        rf"agent +add +memory  session s-late msg {added} \((found [^;]+; )?"
        r"credited to session s-late when its turn was stored\)",
        shown,
    ), shown
    row = json.loads(printed("timeline", "show", str(row_id), "--home", str(root), "--json"))["row"]
    assert (row["actor"], row["session_id"], row["message_id"]) == ("agent", "s-late", added)
    assert "credited to session s-late when its turn was stored: Hermes's memory add call" in row["why"]
    assert rows(root) == [(row_id, "agent", "add", "s-late", added, True)]
    printed("memory", "undo", str(row_id), "--home", str(root))  # undo keeps working on the row
    assert (root / "memories" / "MEMORY.md").read_text(encoding="utf-8") == SEED


@pytest.mark.parametrize(
    "call",
    [
        {"action": "replace", "old_text": "Fridays", "content": "Deploys on Mondays"},
        {"action": "remove", "old_text": "Deploys on"},
    ],
    ids=["replace", "remove"],
)
def test_a_replace_or_remove_is_credited_too(hermes, tmp_path, call):
    root = looked_at_seed(tmp_path)
    said = [hermes_tool(hermes, root, call)]
    history(root)
    (made,) = store_turn(hermes, root, said)
    history(root)
    assert [row[1:] for row in rows(root)] == [("agent", call["action"], "s-late", made, True)]
    printed("memory", "undo", str(rows(root)[0][0]), "--home", str(root))
    assert (root / "memories" / "MEMORY.md").read_text(encoding="utf-8") == SEED


def test_a_hand_edit_made_before_the_call_stays_outside(hermes, tmp_path):
    """A person typed the note Hermes later adds, and took it out again, each seen by a look; Hermes's add
    (seen too) is credited, the person's rows, made before the call, stay theirs."""
    root = looked_at_seed(tmp_path)
    path = root / "memories" / "MEMORY.md"
    write_from_another_process(path, SEED + "\n§\n" + NOTE)
    history(root)
    write_from_another_process(path, SEED)
    history(root)
    said = [hermes_tool(hermes, root, ADD[1])]
    history(root)
    (added,) = store_turn(hermes, root, said)
    history(root)
    assert [row[1:] for row in rows(root)] == [
        ("external", "add", None, None, False),
        ("external", "remove", None, None, False),
        ("agent", "add", "s-late", added, True),
    ]


def test_a_look_announces_the_credit_and_reads_the_calls_once_per_change_of_state_db(hermes, tmp_path):
    """The TUI's watcher looks whenever state.db changes: each look reads Hermes's calls only when state.db
    changed since this process last read them, and the workbench's own writes never read them."""
    root = looked_at_seed(tmp_path)
    said = [hermes_tool(hermes, root, ADD[1])]
    history(root)
    home = open_home(root)
    try:
        heard: list[MemoryChanged] = []
        home.bus.subscribe(heard.append, MemoryChanged)
        statements: list[str] = []
        home.archive.conn().set_trace_callback(statements.append)

        def reads() -> int:
            found = [s for s in statements if "instr(tool_calls" in s]
            statements.clear()
            return len(found)

        (added,) = store_turn(hermes, root, said)
        assert home.memory.record_external_change("memory") is True
        assert [(e.actor, e.action, e.session_id, e.journal_id) for e in heard] == [
            ("agent", "credit", "s-late", rows(root)[0][0])
        ]
        assert reads() == 1
        assert home.memory.record_external_change("memory") is False
        home.memory.add("memory", "A note of ours")
        assert reads() == 0
    finally:
        home.close()
    assert [row[1:] for row in rows(root)] == [
        ("agent", "add", "s-late", added, True),
        ("user", "add", None, None, False),
    ]


def test_a_credited_row_leaves_the_outside_edit_it_was_found_in(hermes, tmp_path):
    """One look found Hermes's add beside a person's edit: one outside group. Once credited, the add is no
    longer in it, so reverting the group takes back the person's edit only."""
    root = looked_at_seed(tmp_path)
    said = [hermes_tool(hermes, root, ADD[1])]
    path = root / "memories" / "MEMORY.md"
    write_from_another_process(path, path.read_text(encoding="utf-8").replace("Fridays", "Mondays"))
    history(root)
    with sqlite3.connect(root / "workbench.db") as db:
        (group,) = {json.loads(d)["edit"] for (d,) in db.execute("SELECT detail FROM journal WHERE action != 'seen'")}
    store_turn(hermes, root, said)
    history(root)
    printed("revert", f"outside:{group}", "--home", str(root))
    assert path.read_text(encoding="utf-8") == SEED + "\n§\n" + NOTE


@pytest.mark.anyio
async def test_the_open_tui_credits_the_row_when_state_db_alone_changes(hermes, tmp_path):
    """The watcher journals Hermes's write as it lands; once the turn is stored (state.db changes, MEMORY.md
    does not), the Timeline shown and the entry's history name the call's session."""
    root = looked_at_seed(tmp_path)
    home = open_home(root)
    try:
        async with make_app(home, tmp_path, watch_files=True).run_test(size=(120, 40)) as pilot:
            screen = await open_mode(pilot, "6", TimelineScreen)
            table = screen.query_one(TimelineList)

            def note_row() -> list[str]:
                cells = [[str(cell).strip() for cell in table.get_row_at(i)] for i in range(table.row_count)]
                return next((row for row in cells if NOTE[:12] in row[3]), [])

            said = [hermes_tool(hermes, root, ADD[1])]
            await wait_for(pilot, lambda: note_row()[1:2] == ["external"], timeout=10, what="the watcher's look")
            (added,) = store_turn(hermes, root, said)
            await wait_for(pilot, lambda: note_row()[1:2] == ["agent"], timeout=10, what="the credit")
            credited = "credited to session s-late when its turn was stored"
            await cursor_to(pilot, screen, NOTE[:12])
            detail = screen.query_one("#timeline-detail")
            await wait_for(pilot, lambda: credited in str(detail.render()), what="the row's why")
            memory = await open_mode(pilot, "1", MemoryScreen)
            live = memory.query_one("#live-list", EntryList)
            live.focus()
            live.highlighted = [r.text for r in live.rows].index(NOTE)
            shown = memory.query_one("#detail-text")
            await wait_for(pilot, lambda: f"({credited})" in str(shown.content), what="the entry's history")
    finally:
        home.close()
    assert [row[1:] for row in rows(root)] == [("agent", "add", "s-late", added, True)]


@pytest.mark.anyio
async def test_an_open_timeline_shows_the_credit_of_a_row_whose_call_it_found(hermes, tmp_path):
    """The Timeline found the stored call behind the outside row (shown as the agent's, from the archive)
    before a look credited it: the row no longer awaited its call, so it kept saying no more than that."""
    root = looked_at_seed(tmp_path)
    said = [hermes_tool(hermes, root, ADD[1])]
    history(root)
    store_turn(hermes, root, said)
    home = open_home(root)
    try:
        async with make_app(home, tmp_path).run_test(size=(120, 40)) as pilot:
            screen = await open_mode(pilot, "6", TimelineScreen)
            await cursor_to(pilot, screen, NOTE[:12])
            detail = screen.query_one("#timeline-detail")
            assert "(Hermes's memory add call, from the archive)" in str(detail.render())
            assert home.memory.record_external_change("memory") is True  # the look credits the row
            credited = "credited to session s-late when its turn was stored"
            await wait_for(pilot, lambda: credited in str(detail.render()), what="the row's why")
    finally:
        home.close()


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("search", "later"), [("", 11 * 60), ("actor:external", 0)], ids=["eleven-minutes-on", "actor-external"]
)
async def test_an_open_timeline_shows_a_credit_however_old_the_row_under_its_filter(hermes, tmp_path, search, later):
    """The Timeline read credits again only for rows of the last ten minutes (a TUI left open across them
    kept showing the row as an outside edit), and put a credited row back in the list as it is now, under
    an ``actor:external`` filter too, where it no longer belongs."""
    root = looked_at_seed(tmp_path)
    said = [hermes_tool(hermes, root, ADD[1])]
    history(root)
    clock = FixedClock(time.time())
    home = open_home(root, clock=clock)
    try:
        async with make_app(home, tmp_path).run_test(size=(120, 40)) as pilot:
            screen = await open_mode(pilot, "6", TimelineScreen)
            await pilot.press("slash", *search, "enter")
            await settle(pilot)  # the filtered page shown (the first page, unfiltered, has the row as well)
            table = screen.query_one(TimelineList)

            def note_row() -> list[str]:
                cells = [[str(cell).strip() for cell in table.get_row_at(i)] for i in range(table.row_count)]
                return next((row for row in cells if NOTE[:12] in row[3]), [])

            await wait_for(pilot, lambda: note_row()[1:2] == ["external"], what="the outside row")
            (added,) = store_turn(hermes, root, said)
            clock.advance(later)  # (eleven minutes: the row is older than Hermes's slack when the look credits it)
            assert home.memory.record_external_change("memory") is True
            credited = [] if search else ["agent"]
            await wait_for(pilot, lambda: note_row()[1:2] == credited, what="the credit shown")
    finally:
        home.close()
    assert [row[1:] for row in rows(root)] == [("agent", "add", "s-late", added, True)]


@pytest.mark.anyio
async def test_a_change_of_state_db_alone_looks_only_while_a_row_awaits_its_credit(hermes, tmp_path):
    """Hermes writes state.db after every model call, and the watcher ran the memory looks on each change:
    each took the memory lock (Hermes's own write waited) and read Hermes's calls again, about 100 ms a
    look in a long session. Now such a change looks only while an outside row may still be credited."""
    root = looked_at_seed(tmp_path)
    said = [hermes_tool(hermes, root, ADD[1])]
    history(root)  # journaled as an outside edit: it awaits its call
    store_turn(hermes, root, said)
    home = open_home(root)
    try:
        app = make_app(home, tmp_path)
        async with app.run_test(size=(120, 40)):
            assert await asyncio.to_thread(calls_read_on_state_db_change, app) >= 1  # the credit's look
            assert [row[1] for row in rows(root)] == ["agent"]
            with sqlite3.connect(root / "state.db") as db:  # Hermes stores another step: nothing awaits now
                db.execute("UPDATE sessions SET title = 'next step' WHERE id = 's-late'")
            assert await asyncio.to_thread(calls_read_on_state_db_change, app) == 0
    finally:
        home.close()


def calls_read_on_state_db_change(app) -> int:
    """The watcher thread's step for a change of state.db alone: the reads of Hermes's calls it made."""
    statements: list[str] = []
    app.home.archive.conn().set_trace_callback(statements.append)
    app._external_change({"sessions"})
    return sum("instr(tool_calls" in s for s in statements)


# a step of a Hermes session that calls no memory tool: a reply, a terminal command and its result
CHAT = r"""
import json
from hermes_state import SessionDB
db = SessionDB()
if not db.get_session("s-chat"):
    db.create_session("s-chat", source="cli", model="m")
db.append_message("s-chat", "user", "list the files")
call = {"id": "call_ls", "type": "function", "function": {"name": "terminal", "arguments": '{"command": "ls"}'}}
db.append_message("s-chat", "assistant", None, tool_calls=[call])
db.append_message("s-chat", "tool", "README.md", tool_name="terminal", tool_call_id="call_ls")
"""


@pytest.mark.anyio
async def test_a_hand_edit_is_looked_at_again_only_when_hermes_stores_a_memory_result(hermes, tmp_path):
    """A note typed by hand awaits its credit as a Hermes call's would: every change of state.db for ten
    minutes (a Hermes session chatting, each model call) ran a look that took the memory lock and read
    Hermes's calls again, for nothing. Now a look runs only once a memory tool result was stored since."""
    root = looked_at_seed(tmp_path)
    path = root / "memories" / "MEMORY.md"
    write_from_another_process(path, SEED + "\n§\nTyped by hand")
    history(root)  # an outside add: it may be a Hermes call whose turn is not stored yet
    home = open_home(root)
    try:
        app = make_app(home, tmp_path)
        async with app.run_test(size=(120, 40)):
            hermes.run(root, CHAT)
            assert await asyncio.to_thread(calls_read_on_state_db_change, app) >= 1  # (nothing known yet)
            for _ in "ab":
                hermes.run(root, CHAT)
                assert await asyncio.to_thread(calls_read_on_state_db_change, app) == 0
            said = [hermes_tool(hermes, root, ADD[1])]
            store_turn(hermes, root, said)
            assert await asyncio.to_thread(calls_read_on_state_db_change, app) >= 1
    finally:
        home.close()
    assert [row[1:3] for row in rows(root)] == [("external", "add"), ("agent", "add")]


REWORDED = {"action": "replace", "old_text": "Fridays", "content": "Release train leaves each Monday at noon"}


@pytest.mark.parametrize("typed", [None, "Typed by hand"], ids=["alone", "beside-a-hand-edit"])
def test_a_replace_a_look_found_as_a_remove_and_an_add_is_credited_with_both(hermes, tmp_path, typed):
    """Hermes rewrote the last entry into an unlike one: a look cannot tell that from a remove and an add, so
    it journals those, and both stayed ``external`` for good. Now both are the call's; a note a person
    appended before the same look stays theirs."""
    root = looked_at_seed(tmp_path)
    said = [hermes_tool(hermes, root, REWORDED)]
    path = root / "memories" / "MEMORY.md"
    if typed:
        write_from_another_process(path, path.read_text(encoding="utf-8") + "\n§\n" + typed)
    history(root)
    hand = [("external", "add", None, None, False)] if typed else []
    found = [("external", "remove", None, None, False), ("external", "add", None, None, False), *hand]
    assert [row[1:] for row in rows(root)] == found
    (made,) = store_turn(hermes, root, said)
    history(root)
    assert [row[1:] for row in rows(root)] == [
        ("agent", "remove", "s-late", made, True),
        ("agent", "add", "s-late", made, True),
        *hand,
    ]
    for row_id in [row[0] for row in rows(root)][:2]:  # each names the call it is half of
        why = json.loads(printed("timeline", "show", str(row_id), "--home", str(root), "--json"))["row"]["why"]
        assert (
            f"credited to session s-late when its turn was stored: Hermes's memory replace call in session s-late · message {made}"
            in why
        )
    for row_id in reversed([row[0] for row in rows(root)]):  # each row's undo still works on it
        printed("memory", "undo", str(row_id), "--home", str(root))
    assert path.read_text(encoding="utf-8") == SEED


def test_a_note_typed_by_hand_as_hermess_pending_call_is_not_credited_to_it(hermes, tmp_path):
    """A person types the very note Hermes's call adds, after Hermes stamped the call's message and before
    its tool ran: Hermes's add finds it there and writes nothing (its result says so), so the call made no
    change to credit, and the person's row stays theirs."""
    root = looked_at_seed(tmp_path)
    typed_at = time.time()
    write_from_another_process(root / "memories" / "MEMORY.md", SEED + "\n§\n" + NOTE)
    history(root)
    call, result = hermes_tool(hermes, root, ADD[1])
    assert json.loads(result["result"])["message"] == "Entry already exists (no duplicate added)."
    store_turn(hermes, root, [(call, {**result, "at": typed_at - 5})])  # (the message stamped before it)
    history(root)
    assert [row[1:] for row in rows(root)] == [("external", "add", None, None, False)]


def test_a_remove_a_look_found_beside_another_of_its_text_is_credited_to_neither(hermes, tmp_path):
    """A person took out one of two notes holding the text Hermes's remove names, then Hermes's remove took
    out the other (the one left matching), and one look found both gone: the person's, listed first, was
    credited to Hermes's call and Hermes's own stayed outside. Which was Hermes's no row can tell."""
    root = tmp_path / "home"
    path = root / "memories" / "MEMORY.md"
    typed = "Loop note 7, typed by hand"
    write_from_another_process(path, typed + "\n§\n" + SEED + "\n§\n" + NOTE)
    assert history(root) == []
    write_from_another_process(path, SEED + "\n§\n" + NOTE)
    said = [hermes_tool(hermes, root, {"action": "remove", "old_text": "Loop note 7"})]
    assert path.read_text(encoding="utf-8") == SEED
    history(root)
    store_turn(hermes, root, said)
    history(root)
    assert [row[1:3] for row in rows(root)] == [("external", "remove"), ("external", "remove")]


@pytest.mark.anyio
async def test_an_actor_agent_timeline_lists_a_row_credited_while_it_is_open(hermes, tmp_path):
    """Under ``actor:agent`` the outside row is not listed; an agent row journaled after it is. Once a look
    credited the outside row to Hermes's call, a live reload asked only for rows newer than those shown
    and the credited row, older, appeared only after a reload by hand."""
    root = looked_at_seed(tmp_path)
    said = [hermes_tool(hermes, root, ADD[1])]
    history(root)  # the outside row, awaiting its call
    home = open_home(root)
    try:
        async with make_app(home, tmp_path).run_test(size=(120, 40)) as pilot:
            screen = await open_mode(pilot, "6", TimelineScreen)
            await pilot.press("slash", *"actor:agent", "enter")
            home.memory.add("memory", "Ours: the runner's note", ToolContext(actor="agent", session_id="s-ours"))
            table = screen.query_one(TimelineList)

            def listed() -> list[str]:
                return [str(table.get_row_at(i)[3]).strip() for i in range(table.row_count)]

            await wait_for(pilot, lambda: any("Ours" in cell for cell in listed()), what="our agent row")
            assert not any(NOTE[:12] in cell for cell in listed())
            store_turn(hermes, root, said)
            assert home.memory.record_external_change("memory") is True  # the look credits the row
            await wait_for(pilot, lambda: any(NOTE[:12] in cell for cell in listed()), what="the credited row")
    finally:
        home.close()


@pytest.mark.anyio
async def test_an_open_timeline_shows_a_credit_another_process_made(hermes, tmp_path, monkeypatch):
    """A second workbench process, open on the home, credits the outside row; the TUI's own look does not (its
    clock is past the ten minutes a row awaits its credit). The watcher did not watch workbench.db: the open
    Timeline showed the row as an outside edit until the user reloaded (or its own index upkeep happened to
    write state.db after the credit, which it is kept from here). A note a command adds is listed live too."""
    async with credited_elsewhere(hermes, tmp_path, monkeypatch) as (pilot, credit):
        screen = await open_mode(pilot, "6", TimelineScreen)
        table = screen.query_one(TimelineList)

        def row_of(text: str) -> list[str]:
            cells = [[str(cell).strip() for cell in table.get_row_at(i)] for i in range(table.row_count)]
            return next((row for row in cells if text in row[3]), [])

        await wait_for(pilot, lambda: row_of(NOTE[:12])[1:2] == ["external"], what="the outside row")
        await credit()
        await wait_for(pilot, lambda: row_of(NOTE[:12])[1:2] == ["agent"], timeout=10, what="the credit")
        command = workbench_cmd("memory", "add", "--target", "user", "--home", str(pilot.app.home.root), "Prefers tea")
        await asyncio.to_thread(subprocess.run, command, check=True, stdout=subprocess.DEVNULL)
        await wait_for(pilot, lambda: row_of("Prefers tea")[1:2] == ["user"], timeout=10, what="the CLI's row")


@pytest.mark.anyio
async def test_the_memory_screen_shows_a_credit_another_process_made(hermes, tmp_path, monkeypatch):
    """The entry's history on the Memory screen, shown while another process credits its row, says so."""
    async with credited_elsewhere(hermes, tmp_path, monkeypatch) as (pilot, credit):
        memory = await open_mode(pilot, "1", MemoryScreen)
        live = memory.query_one("#live-list", EntryList)
        live.focus()
        live.highlighted = [r.text for r in live.rows].index(NOTE)
        shown = memory.query_one("#detail-text")
        await wait_for(pilot, lambda: "origin external" in str(shown.content), what="the entry's history")
        await credit()
        credited = "(credited to session s-late when its turn was stored)"
        await wait_for(pilot, lambda: credited in str(shown.content), timeout=10, what="the credit")


@contextlib.asynccontextmanager
async def credited_elsewhere(hermes, tmp_path: Path, monkeypatch):
    """The TUI (watching) on a home where Hermes's add was journaled as an outside edit, and ``credit()``, which
    stores Hermes's turn and has a second workbench process credit the row once the TUI has followed that
    change of state.db. The TUI's own look never credits it: its clock is past the ten minutes a row awaits
    its credit, and its index upkeep (which wrote state.db, waking the screens by chance) waits."""
    monkeypatch.setattr(workbench.app, "UPKEEP_SECONDS", 3600)
    root = looked_at_seed(tmp_path)
    said = [hermes_tool(hermes, root, ADD[1])]
    history(root)
    home = open_home(root, clock=FixedClock(time.time() + 11 * 60))
    try:
        app = make_app(home, tmp_path, watch_files=True)
        reported: list[set[str]] = []
        follow = app._external_change
        app._external_change = lambda kinds: (reported.append(kinds), follow(kinds))
        with other_workbench(root) as other:
            async with app.run_test(size=(120, 40)) as pilot:
                await asyncio.to_thread(look, other)  # (its first: state.db opened, the turn not stored yet)

                async def credit() -> None:
                    reported.clear()
                    store_turn(hermes, root, said)
                    await wait_for(pilot, lambda: {"sessions"} in reported, what="the watcher's report of state.db")
                    await settle(pilot)  # (the screens' reloads for it done)
                    assert await asyncio.to_thread(look, other) == "True"

                yield pilot, credit
    finally:
        home.close()


@contextlib.contextmanager
def other_workbench(root: Path):
    """A workbench process that stays open on ``root`` (as a second TUI would, its connections held): each
    target written to its stdin is looked at (``record_external_change``), and whether news was found printed."""
    code = (
        "import sys; from engine import open_home; home = open_home(sys.argv[1])\n"
        "for line in sys.stdin: print(home.memory.record_external_change(line.strip()), flush=True)"
    )
    process = subprocess.Popen([sys.executable, "-c", code, str(root)], stdin=PIPE, stdout=PIPE, text=True)
    try:
        yield process
    finally:
        process.stdin.close()
        process.wait(30)


def look(other: subprocess.Popen) -> str:
    """The ``other_workbench``'s look at MEMORY.md: whether it found news."""
    other.stdin.write("memory\n")
    other.stdin.flush()
    return other.stdout.readline().strip()


@pytest.mark.parametrize("after", ["kept", "taken-out-by-hand"])
def test_a_replace_into_an_entry_already_there_is_credited_with_its_remove(hermes, tmp_path, after):
    """Hermes's replace wrote the text of another entry: the file holds it twice, read as once (as Hermes
    reads it), so a look found only the entry holding its ``old_text`` removed, and that row stayed
    ``external`` for good. Now it is the call's. A replace whose new entry a person took out before the look
    (the same row) is not: the text is no entry of the file the journal left."""
    root = looked_at_seed(tmp_path)
    path = root / "memories" / "MEMORY.md"
    if after == "kept":
        call = {"action": "replace", "old_text": "Fridays", "content": "Project uses PostgreSQL"}
    else:
        call = {"action": "replace", "old_text": "Fridays", "content": "Deploys on Mondays"}
    said = [hermes_tool(hermes, root, call)]
    if after != "kept":
        write_from_another_process(path, "Project uses PostgreSQL")
    assert history(root) == [("external", "remove", "Deploys on Fridays", None, None)]
    (made,) = store_turn(hermes, root, said)
    history(root)
    kept = after == "kept"
    assert [row[1:] for row in rows(root)] == [
        ("agent", "remove", "s-late", made, True) if kept else ("external", "remove", None, None, False)
    ]
    printed("memory", "undo", str(rows(root)[0][0]), "--home", str(root))
    assert read_as_hermes(path.read_text(encoding="utf-8")) == ["Project uses PostgreSQL", "Deploys on Fridays"]


def test_two_identical_removes_are_each_credited_with_the_row_it_made(hermes, tmp_path):
    """Hermes's remove of "Loop note" took out its note; a person then typed another note holding those words,
    and the same remove, called again, took that one out; a look saw each change. Once the turn is stored,
    each call is credited with the row it made, the first call with the older row, not the other's; the
    person's add stays theirs."""
    root = tmp_path / "home"
    path = root / "memories" / "MEMORY.md"
    write_from_another_process(path, SEED + "\n§\n" + NOTE)
    assert history(root) == []
    drop = {"action": "remove", "old_text": "Loop note"}
    said = [hermes_tool(hermes, root, drop)]
    history(root)
    typed = "Loop note 8, typed by hand"
    write_from_another_process(path, SEED + "\n§\n" + typed)
    history(root)
    said.append(hermes_tool(hermes, root, drop))
    history(root)
    first, second = store_turn(hermes, root, said)
    history(root)
    with sqlite3.connect(root / "workbench.db") as db:
        found = db.execute(
            "SELECT actor, action, before, message_id FROM journal WHERE subsystem = 'memory' AND action != 'seen' "
            "ORDER BY id"
        ).fetchall()
    assert found == [
        ("agent", "remove", NOTE, first),
        ("external", "add", None, None),
        ("agent", "remove", typed, second),
    ]


# Hermes's turns stored as its 0.19.0 loop stores them (``MEMORY_TURNS``'s ``between``): each tool runs,
# then the workbench looks (``LOOK``, another process), and only then are the call and its result stored,
# stamped then, after the row the look journaled. EDITS: the texts a person saves MEMORY.md as, each seen
# by a look, after each tool ran and before its turn was stored (BEFORE: before the first turn).
LOOKED_LATE = (
    MEMORY_TURNS
    + r"""
import pathlib, subprocess
path = pathlib.Path(store._path_for("memory"))

def edit_and_look(edits):
    def run():
        subprocess.run(LOOK, check=True, stdout=subprocess.DEVNULL)
        for text in edits:
            path.write_text(text, encoding="utf-8")
            subprocess.run(LOOK, check=True, stdout=subprocess.DEVNULL)
    return run

db.create_session("s-live", source="cli", model="m")
edit_and_look(BEFORE)()
for name, arguments in TURNS:
    turn("s-live", name, arguments, between=edit_and_look(EDITS))
print(json.dumps(ids))
"""
)


def hermes_stores_late(hermes, root: Path, turns, edits=(), before=()) -> dict:
    """Hermes runs ``turns``, each stored after a look at the tool's write (and ``edits``): their message ids."""
    look = workbench_cmd("memory", "history", "--home", str(root))
    return hermes.json(
        root,
        f"LOOK, TURNS, EDITS, BEFORE = {look!r}, {list(turns)!r}, {list(edits)!r}, {list(before)!r}\n" + LOOKED_LATE,
    )


@pytest.mark.parametrize(
    "call",
    [ADD[1], {"action": "replace", "old_text": "Fridays", "content": "Deploys on Mondays"}, DROP_SEED],
    ids=["add", "replace", "remove"],
)
def test_a_call_hermes_stored_after_a_look_at_its_write_is_credited(hermes, tmp_path, call):
    """Hermes 0.19.0 stamps a call's message when it stores it, after its tool wrote the file: a look in
    between journaled the change as an outside edit dated before the call, and it stayed `external` with no
    session for good, while the Timeline and `memory show` named the call."""
    root = looked_at_seed(tmp_path)
    ids = hermes_stores_late(hermes, root, [("late", call)])
    ((row_id, *outside),) = rows(root)
    assert outside == ["external", call["action"], None, None, False]
    with sqlite3.connect(root / "workbench.db") as db:
        (made_at,) = db.execute("SELECT at FROM journal WHERE id = ?", (row_id,)).fetchone()
    with sqlite3.connect(root / "state.db") as db:
        (stamped,) = db.execute("SELECT timestamp FROM messages WHERE id = ?", (ids["late"],)).fetchone()
    assert made_at < stamped  # (the order of the report: the row is dated before its call)
    history(root)
    assert rows(root) == [(row_id, "agent", call["action"], "s-live", ids["late"], True)]
    shown = json.loads(printed("memory", "history", "--home", str(root), "--json"))["events"][0]
    assert (shown["actor"], shown["session_id"], shown["message_id"]) == ("agent", "s-live", ids["late"])


def test_hermess_identical_adds_stored_late_are_each_credited_with_their_own_row(hermes, tmp_path):
    """Hermes adds a note, removes it and adds it again, each turn stored after a look: each row is its
    call's, the second add's too (the first add's row, already the agent's, is not a second candidate)."""
    root = looked_at_seed(tmp_path)
    ids = hermes_stores_late(hermes, root, [ADD, ("drop", DROP[1]), ("again", ADD[1])])
    history(root)
    assert [row[1:] for row in rows(root)] == [
        ("agent", "add", "s-live", ids["add"], True),
        ("agent", "remove", "s-live", ids["drop"], True),
        ("agent", "add", "s-live", ids["again"], True),
    ]


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_persons_identical_add_near_a_call_stored_late_is_never_credited_to_it(hermes, tmp_path, when):
    """A person typed Hermes's note by hand and took it out again within the minute of Hermes's add, before
    its tool ran or after (before its turn was stored); a look saw each change. Which add row was Hermes's is
    a guess: none is credited, and the person's rows stay theirs."""
    root = looked_at_seed(tmp_path)
    typed = [SEED + "\n§\n" + NOTE, SEED] if when == "before" else [SEED, SEED + "\n§\n" + NOTE]
    ids = hermes_stores_late(hermes, root, [ADD], **({"before": typed} if when == "before" else {"edits": typed}))
    assert ids["add"]
    history(root)
    assert [row[1:] for row in rows(root)] == [
        ("external", "add", None, None, False),
        ("external", "remove", None, None, False),
        ("external", "add", None, None, False),
    ]
