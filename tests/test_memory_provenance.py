"""Where entries came from: the journal, an agent's tool calls in state.db, or "present before"."""

from __future__ import annotations

import json
import sqlite3
import subprocess

from engine import open_home
from engine.memory import history
from engine.memory.archive_writes import memory_calls, written_texts
from engine.timeline import summarize
from engine.tools import ToolContext
from tests.hermes_support import workbench_cmd

USER = ToolContext(actor="user")


def put(home, target: str, text: str) -> None:
    home.memory.path(target).parent.mkdir(parents=True, exist_ok=True)
    home.memory.path(target).write_text(text, encoding="utf-8")


def agent_turn(home, session: str, arguments: dict, result: dict, *, call_id: str = "call_1", at: float = 1000.0):
    """Store one memory tool call the way Hermes's loop does: the assistant message, then the tool result."""
    if home.archive.get_session(session) is None:
        home.archive.create_session(session, source="cli")
    call = {"id": call_id, "type": "function", "function": {"name": "memory", "arguments": json.dumps(arguments)}}
    assistant = home.archive.append_message(session, "assistant", None, tool_calls=[call], timestamp=at)
    home.archive.append_message(
        session, "tool", json.dumps(result), tool_name="memory", tool_call_id=call_id, timestamp=at + 1
    )
    return assistant


OK = {"success": True, "done": True}


def test_decoding_reads_escaped_arguments_and_batches_not_raw_text():
    raw = json.dumps(
        [
            {
                "name": "memory",
                "arguments": json.dumps({"action": "add", "target": "user", "content": "  Likes café ☕  "}),
            },
            {"id": "c2", "function": {"name": "terminal", "arguments": "{}"}},
        ]
    )
    assert "\\u00e9" in raw  # stored with escapes: a raw text match would miss it
    ((position, call_id, arguments),) = memory_calls(raw)
    assert (position, call_id) == (0, None)
    assert written_texts(arguments) == [("user", "add", "Likes café ☕")]
    batch = {
        "target": "memory",
        "operations": [
            {"action": "remove", "old_text": "x"},
            {"action": "replace", "old_text": "y", "content": "new y"},
            {"action": "add", "content": "z"},
        ],
    }
    assert written_texts(batch) == [("memory", "replace", "new y"), ("memory", "add", "z")]
    assert (
        memory_calls("not json") == [] and written_texts({"action": "add", "target": "elsewhere", "content": "x"}) == []
    )


def test_origins_come_from_the_archive_when_the_journal_has_none(home):
    put(home, "memory", "Deploys on Fridays\n§\nstaged only\n§\nrefused\n§\nwritten by hand\n§\nbatched")
    older = agent_turn(home, "s-old", {"action": "add", "content": "Deploys on Fridays"}, OK, at=1000)
    newer = agent_turn(
        home,
        "s-new",
        {"action": "replace", "old_text": "Deploys", "content": "Deploys on Fridays"},
        OK,
        call_id="call_2",
        at=2000,
    )
    agent_turn(home, "s-new", {"action": "add", "content": "staged only"}, {**OK, "staged": True}, call_id="c3")
    agent_turn(home, "s-new", {"action": "add", "content": "refused"}, {"success": False, "error": "no"}, call_id="c4")
    batch = agent_turn(home, "s-new", {"operations": [{"action": "add", "content": "batched"}]}, OK, call_id="c5")
    home.memory.record_external_change("memory")  # the workbench's first look at the file
    found = history.origins(home.memory, "memory", home.memory.entries("memory"))
    assert [o.via for o in found] == ["archive", "before", "before", "before", "archive"]
    assert (found[0].session_id, found[0].message_id, found[0].actor) == ("s-new", newer, "agent")
    assert older < newer and found[4].message_id == batch
    seen = home.journal.first("memory", "memory", "seen")
    assert found[1].at == seen.at and found[1].to_dict() == {
        "actor": None,
        "proposed_by": None,
        "edited": False,
        "session_id": None,
        "message_id": None,
        "at": "2026-11-30T12:00:00+00:00",
        "via": "before",
    }


def test_a_removal_since_the_archived_write_and_a_later_journal_write_win(home):
    put(home, "memory", "fact")
    agent_turn(home, "s-1", {"action": "add", "content": "fact"}, OK, at=1000)
    assert history.origin(home.memory, "memory", "fact").via == "archive"
    home.memory.remove("memory", "fact", USER)  # journal: taken away after that message (clock: FIXED_NOW)
    home.memory.add("memory", "fact", ToolContext(actor="agent", session_id="ours", message_id=9))
    now = history.origin(home.memory, "memory", "fact")
    assert (now.via, now.actor, now.session_id, now.message_id) == ("journal", "agent", "ours", 9)
    home.memory.remove("memory", "fact", USER)
    put(home, "memory", "fact")  # back by hand: the old archived add happened before the removal
    home.memory.record_external_change("memory")
    back = history.origin(home.memory, "memory", "fact")
    assert (back.via, back.actor) == ("journal", "external")


def test_an_archived_add_is_undone_by_removing_its_entry_and_a_replace_is_not_offered(home):
    put(home, "memory", "added by hermes\n§\nreplaced by hermes")
    agent_turn(home, "s-1", {"action": "add", "content": "added by hermes"}, OK)
    agent_turn(home, "s-1", {"action": "replace", "old_text": "x", "content": "replaced by hermes"}, OK, call_id="c2")
    replaced = history.story(home.memory, "memory", "replaced by hermes")
    assert replaced.undo is None and "does not record" in replaced.why_no_undo
    added = history.story(home.memory, "memory", "added by hermes")
    assert added.undo is not None and added.undo.event_id is None
    undone = history.apply_undo(home.memory, added.undo)
    assert undone["success"] and home.memory.entries("memory") == ["replaced by hermes"]
    assert undone["message"] == f"Undid the add by message {added.origin.message_id}: the entry it added is gone again."
    (row,) = home.memory.history(limit=1)
    assert (row.action, row.detail["undo_of_message"]) == ("undo", added.origin.message_id)
    said = summarize(row)  # it read "undo of row None: …" (now every revert reads "revert of …")
    assert (
        said
        == f"revert of the Hermes call in session s-1 · message {added.origin.message_id}: MEMORY − 'added by hermes'"
    )


def test_undo_of_an_external_edit_is_offered_only_while_it_applies(home):
    home.memory.add("memory", "one", USER)
    put(home, "memory", "one\n§\ntwo apples")
    home.memory.record_external_change("memory")
    offer = history.story(home.memory, "memory", "two apples").undo
    assert offer is not None and offer.back_to is None
    put(home, "memory", "one\n§\ntwo apples, edited")  # changed again: the add of "two" no longer applies
    home.memory.record_external_change("memory")
    (edit, add_row) = home.memory.history(limit=2)
    assert (edit.action, edit.before, edit.after) == ("replace", "two apples", "two apples, edited")
    assert history.story(home.memory, "memory", "two apples, edited").undo.back_to == "two apples"
    assert "no longer in MEMORY.md" in str(history.undo_problem(home.memory, add_row))


def test_each_entry_is_looked_up_once_per_file_version_through_the_word_index(home):
    put(home, "memory", "Deploys on Fridays\n§\nLikes café ☕\n§\n東京に住む")
    agent_turn(home, "s-1", {"action": "add", "content": "Deploys on Fridays"}, OK)
    agent_turn(home, "s-1", {"action": "add", "content": "Likes café ☕"}, OK, call_id="c2")
    agent_turn(home, "s-1", {"action": "add", "content": "東京に住む"}, OK, call_id="c3")
    statements = []
    home.archive.conn().set_trace_callback(statements.append)

    def searches():
        found = [s for s in statements if s.startswith("SELECT m.id")]
        statements.clear()
        return found

    assert [o.via for o in history.origins(home.memory, "memory", home.memory.entries("memory"))] == ["archive"] * 3
    deploys, cafe, tokyo = searches()
    assert '\'"memory" AND "deploys" AND "fridays" AND "on"\'' in deploys
    assert '"likes"' in cafe and "caf" not in cafe, "a word next to an escaped character is left out"
    assert "MATCH '\"memory\"'" in tokyo, "no ASCII word: every memory call, decoded once"
    history.origins(home.memory, "memory", home.memory.entries("memory"))
    assert searches() == [], "unchanged file: nothing is read again"
    agent_turn(home, "s-2", {"action": "add", "content": "Deploys on Fridays"}, OK, call_id="c4")
    assert history.origin(home.memory, "memory", "Deploys on Fridays").session_id == "s-2"
    assert len(searches()) == 1


def test_show_json_lists_origins_parallel_to_entries(home, tmp_path):
    put(home, "user", "Name is Ada\n§\nLikes tea")
    agent_turn(home, "s-1", {"action": "add", "target": "user", "content": "Likes tea"}, OK)
    home.close()
    out = subprocess.run(
        workbench_cmd("memory", "show", "--home", str(home.root), "--target", "user", "--json"),
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(out.stdout)
    assert data["entries"] == ["Name is Ada", "Likes tea"]
    assert [o["via"] for o in data["origins"]] == ["before", "archive"]
    assert data["origins"][1]["session_id"] == "s-1" and data["origins"][1]["actor"] == "agent"
    text = subprocess.run(
        workbench_cmd("memory", "show", "--home", str(home.root), "--target", "user"),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "↳ present before" in text and "↳ agent · " in text and "session s-1 · message 1 (from the archive)" in text


def test_without_the_word_index_the_tool_calls_are_still_found(home):
    put(home, "memory", "Deploys on Fridays")
    agent_turn(home, "s-1", {"action": "add", "content": "Deploys on Fridays"}, OK)
    home.close()
    with sqlite3.connect(home.state_db_path) as db:  # an archive whose FTS tables are gone
        for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
            db.execute(f"DROP TRIGGER {name}")
        db.execute("DROP TABLE messages_fts")
        db.execute("DROP TABLE IF EXISTS messages_fts_trigram")
    reopened = open_home(home.root, read_only=True)
    assert not reopened.archive.caps.fts
    found = history.origin(reopened.memory, "memory", "Deploys on Fridays")
    assert (found.via, found.session_id) == ("archive", "s-1")
    reopened.close()


def test_history_of_one_entry_gives_its_origin_and_changes(home):
    put(home, "user", "Likes tea")
    agent_turn(home, "s-1", {"action": "add", "target": "user", "content": "Likes tea"}, OK)
    home.close()
    run = subprocess.run(
        workbench_cmd(
            "memory", "history", "--home", str(home.root), "--target", "user", "--entry", "Likes tea", "--json"
        ),
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(run.stdout)
    assert data["origin"]["via"] == "archive" and data["origin"]["session_id"] == "s-1" and data["events"] == []


def test_an_entry_history_follows_its_rewrites_back_to_where_it_began(home):
    """Twelve replaces later, an entry's history still reaches the add that began it (the CLI's
    `history --entry` and the Memory screen's detail pane read it)."""
    ctx = ToolContext(actor="user")
    home.memory.add("memory", "fact: version 0", ctx)
    home.memory.add("memory", "unrelated", ctx)
    for n in range(1, 13):
        assert home.memory.replace("memory", f"fact: version {n - 1}", f"fact: version {n}", ctx)["success"]
    rows = history.entry_history(home.memory, "memory", "fact: version 12", limit=20)
    assert [(r.action, r.before, r.after) for r in rows] == [
        ("replace", f"fact: version {n - 1}", f"fact: version {n}") for n in range(12, 0, -1)
    ] + [("add", None, "fact: version 0")]
    assert len(history.entry_history(home.memory, "memory", "fact: version 12")) == 8  # the default bound


def test_an_entry_history_lists_an_undone_replace_once(home):
    """From a user trial: after a replace and its undo, the entry's history (`history --entry`, the
    Memory screen's pane) listed the replace twice, found once by each of its two texts."""
    put(home, "user", "User prefers terse answers")  # written by Hermes: no journal row wrote it
    assert home.memory.replace("user", "User prefers terse", "User prefers terse answers always", USER)["success"]
    replaced = home.memory.history("user", limit=1)[0]
    assert home.memory.undo(replaced.id)["success"]
    rows = history.entry_history(home.memory, "user", "User prefers terse answers", limit=20)
    assert [(r.action, r.after) for r in rows] == [
        ("undo", "User prefers terse answers"),
        ("replace", "User prefers terse answers always"),
    ]
    assert len({r.id for r in rows}) == len(rows)
    story = history.story(home.memory, "user", "User prefers terse answers")
    assert [r.id for r in story.history] == [r.id for r in rows]


def test_a_draft_kept_after_another_writer_removed_its_entry_has_that_entrys_past(home):
    """From a user trial: Hermes removed an entry while the user edited it; "Keep mine" added the
    draft back, and its history (`history --entry`, the Memory screen's pane) held only that add,
    not the entry's earlier add and the outside removal the draft was kept over."""
    from tests.hermes_support import write_from_another_process

    assert home.memory.add("memory", "Keep this", USER)["success"]
    path = home.memory.path("memory")
    write_from_another_process(path, "Keep this\n§\nVictim entry, first version")  # Hermes adds it
    assert home.memory.record_external_change("memory")
    write_from_another_process(path, "Keep this")  # and removes it while the user edits it
    assert home.memory.record_external_change("memory")
    kept = home.memory.add_edit_of("memory", "Victim entry, first version", "Victim entry, as I edited it")
    assert kept["success"] and home.memory.entries("memory") == ["Keep this", "Victim entry, as I edited it"]
    named = history.entry_named(home.memory, "memory", "Victim entry")  # the live entry holding it
    rows = history.story(home.memory, "memory", named).history
    assert [(r.actor, r.action, r.before, r.after) for r in rows] == [
        ("user", "add", None, "Victim entry, as I edited it"),
        ("external", "remove", "Victim entry, first version", None),
        ("external", "add", None, "Victim entry, first version"),
    ]
    assert history.origin(home.memory, "memory", named).actor == "user"  # the draft is the user's
    run = subprocess.run(
        workbench_cmd("memory", "history", "--home", str(home.root), "--entry", "Victim entry", "--json"),
        capture_output=True,
        text=True,
        check=True,
    )
    assert [e["id"] for e in json.loads(run.stdout)["events"]] == [r.id for r in rows]


def test_an_entry_put_back_by_hand_is_not_credited_to_the_workbench_agent_that_first_wrote_it(home):
    """The workbench's own runner stores its sessions in state.db too; its call is journaled as the
    agent's already, so an outside edit that writes the same text later is a person's, not that call's."""
    from engine.models import ScriptedModel
    from engine.runner import AgentSession

    model = ScriptedModel()
    session = AgentSession(home, model)

    def turn(args):
        model.play([{"tool_calls": [{"name": "memory", "args": {"target": "memory", **args}}]}, {"answer": "Done."}])
        [call] = session.run_turn("please").tool_calls
        assert call["result"]["success"]

    turn({"action": "add", "content": "Kettle"})
    for text in ("", "Kettle"):  # taken out by hand, put back by hand
        put(home, "memory", text)
        home.memory.record_external_change("memory")
    turn({"action": "remove", "old_text": "Ket"})
    for text in ("Kettle", ""):  # put back by hand once more, then taken out by hand
        put(home, "memory", text)
        home.memory.record_external_change("memory")
    outside = home.journal.query(subsystem="memory", actor="external", actions=("add", "remove"))
    assert len(outside) == 4
    assert [history.hermes_call(home.memory, row) for row in outside] == [None] * 4


def test_an_entry_put_back_by_an_undo_keeps_who_wrote_it(home):
    """Undoing a removal (or reverting an emptied file) made every entry it put back read as the
    user's own, and g no longer led to the Hermes call that wrote it."""
    put(home, "memory", "added by hermes\n§\nkept")
    agent_turn(home, "s-1", {"action": "add", "content": "added by hermes"}, OK)
    written = history.origin(home.memory, "memory", "added by hermes")
    assert (written.via, written.session_id) == ("archive", "s-1")
    assert home.memory.remove("memory", "added by hermes", USER)["success"]
    [removal] = home.memory.history(limit=1)
    assert home.memory.undo(removal.id)["success"]
    back = history.origin(home.memory, "memory", "added by hermes")
    assert (back.via, back.actor, back.session_id, back.message_id) == ("archive", "agent", "s-1", written.message_id)
    [undo] = home.memory.history(limit=1)
    assert back.journal_id == undo.id
    assert home.memory.undo(undo.id)["success"] and home.memory.undo(home.memory.history(limit=1)[0].id)["success"]
    again = history.origin(home.memory, "memory", "added by hermes")  # an undo of the undo of the undo
    assert (again.via, again.session_id, again.message_id) == ("archive", "s-1", written.message_id)


def test_an_entry_a_replace_took_away_keeps_who_wrote_it_when_an_undo_puts_it_back(home):
    """From a new-user trial: undoing a replace made the entry it put back read 'user · 18:37', its
    'approved, proposed by agent', session and message lost (an undone removal kept them)."""
    home.memory.add("memory", "Billing dashboard is grafana/billing", ToolContext(actor="agent", session_id="s-9"))
    written = history.origin(home.memory, "memory", "Billing dashboard is grafana/billing")
    assert (written.actor, written.session_id) == ("agent", "s-9")
    assert home.memory.replace("memory", "Billing dashboard", "Billing dashboard moved", USER)["success"]
    [replaced] = home.memory.history(limit=1)
    assert home.memory.undo(replaced.id)["success"]
    back = history.origin(home.memory, "memory", "Billing dashboard is grafana/billing")
    assert (back.actor, back.session_id, back.at) == ("agent", "s-9", written.at)
    assert back.journal_id == home.memory.history(limit=1)[0].id  # (the undo row, as for a removal)


def test_an_outside_replace_row_never_takes_a_remove_call_from_the_remove_row(home, monkeypatch):
    """Calls are handed to the rows that took an entry out in order, by substring: a replace row
    whose old entry held a remove call's old_text took that call, and the remove row it belonged
    to was left with none (as if a person had taken the entry out)."""
    from engine.memory.archive_writes import ArchiveWrite

    t = home.clock.now()
    home.journal.append_all(
        "memory", "memory", [{"action": "replace", "before": "cache cold", "after": "cache cold v2"}], actor="external"
    )
    [removed] = home.journal.append_all(
        "memory", "memory", [{"action": "remove", "before": "cache warm"}], actor="external"
    )
    remove_call = ArchiveWrite("memory", "cache", "remove", "s-1", 11, t, "cache")
    replace_call = ArchiveWrite("memory", "cache cold v2", "replace", "s-1", 12, t, "cache cold")
    monkeypatch.setattr(home.memory.archive_writes, "takings", lambda *_: [remove_call, replace_call])
    found = history.hermes_call(home.memory, home.journal.get(removed))
    assert (found.session_id, found.message_id, found.action) == ("s-1", 11, "remove")
