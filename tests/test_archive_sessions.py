"""Session rows: upsert, end, titles, counters, archive, prune, delete, journal and events."""

from __future__ import annotations

import contextlib
import sqlite3

import pytest

from engine.archive import sanitize_title
from engine.errors import SessionGrew, WorkbenchError
from engine.events import MessageStored, SessionChanged


def test_create_is_an_upsert_that_never_overwrites(home):
    archive = home.archive
    first = archive.create_session("s1", source="cli", model="model-a")
    again = archive.create_session("s1", source="telegram", model="model-b", system_prompt="prompt", cwd="/tmp")
    assert first.source == again.source == "cli"
    assert again.model == "model-a" and again.system_prompt == "prompt"
    assert archive.session_count() == 1


def test_generated_ids_have_hermes_shape(home):
    session = home.archive.create_session()
    assert session.id.startswith("20261130_120000_") and len(session.id) == 22


def test_unknown_field_and_missing_parent_are_refused(home):
    with pytest.raises(WorkbenchError, match="Unknown session field"):
        home.archive.create_session("s1", colour="red")
    with pytest.raises(WorkbenchError, match="does not exist"):
        home.archive.create_session("s2", parent_session_id="ghost")
    assert home.archive.session_count() == 0


def test_end_first_reason_wins_and_is_journaled(home, clock):
    archive = home.archive
    archive.create_session("s1")
    events = []
    home.bus.subscribe(events.append, SessionChanged)
    assert archive.end_session("s1", "user_exit") is True
    clock.advance(10)
    assert archive.end_session("s1", "compression") is False
    session = archive.get_session("s1")
    assert session.end_reason == "user_exit" and session.ended_at is not None
    assert [(e.action, e.session_id) for e in events] == [("ended", "s1")]
    [entry] = home.journal.query(subsystem="sessions")
    assert (entry.action, entry.target, entry.after, events[0].journal_id) == ("end", "s1", "user_exit", entry.id)


def test_reopen_clears_the_end_so_a_resumed_session_can_end_again(home, clock):
    archive = home.archive
    archive.create_session("s1")
    assert archive.reopen_session("s1") is False  # live already: nothing to do, nothing journaled
    archive.end_session("s1", "cli_close")
    events = []
    home.bus.subscribe(events.append, SessionChanged)
    assert archive.reopen_session("s1") is True
    session = archive.get_session("s1")
    assert (session.ended_at, session.end_reason) == (None, None)
    assert [e.action for e in events] == ["reopened"]
    entry = home.journal.query(subsystem="sessions")[0]
    assert (entry.action, entry.before, entry.id) == ("reopen", "cli_close", events[0].journal_id)
    clock.advance(5)
    assert archive.end_session("s1", "user_exit") is True and archive.get_session("s1").end_reason == "user_exit"
    with pytest.raises(WorkbenchError, match="No session"):
        archive.reopen_session("nope")


def test_system_prompt_update_replaces_the_snapshot_and_is_journaled(home):
    archive = home.archive
    archive.create_session("s1", system_prompt="old prompt")
    events = []
    home.bus.subscribe(events.append, SessionChanged)
    assert archive.update_system_prompt("s1", "new prompt") is True
    assert archive.get_session("s1").system_prompt == "new prompt"
    assert archive.update_system_prompt("s1", "new prompt") is False  # unchanged: no row, no event
    [entry] = [e for e in home.journal.query(subsystem="sessions") if e.action == "system_prompt"]
    assert entry.detail["chars_before"] == 10 and entry.detail["sha256_before"] != entry.detail["sha256_after"]
    assert [(e.action, e.journal_id) for e in events] == [("prompt_updated", entry.id)]
    # a create never overwrites it (first writer wins), the update does
    assert archive.create_session("s1", system_prompt="other").system_prompt == "new prompt"
    for bad in ("", None):
        with pytest.raises(WorkbenchError, match="non-empty"):
            archive.update_system_prompt("s1", bad)
    with pytest.raises(WorkbenchError, match="No session"):
        archive.update_system_prompt("nope", "x")
    assert archive.get_session("s1").system_prompt == "new prompt"


def test_titles_are_sanitised_unique_and_numbered(home):
    archive = home.archive
    archive.create_session("a")
    archive.create_session("b")
    assert archive.set_title("a", "  Deploy\u200b   plan\x07 ") == "Deploy plan"
    with pytest.raises(WorkbenchError, match="already in use by session a"):
        archive.set_title("b", "Deploy plan")
    assert archive.get_session("b").title is None
    assert archive.next_lineage_title("Deploy plan") == "Deploy plan #2"
    archive.set_title("b", "Deploy plan #2")
    assert archive.next_lineage_title("Deploy plan #2") == "Deploy plan #3"
    assert archive.next_lineage_title("100%_done") == "100%_done"  # LIKE wildcards are literal
    assert archive.set_title("a", "   ") is None and archive.get_session("a").title is None
    with pytest.raises(WorkbenchError, match="too long"):
        archive.set_title("a", "x" * 101)
    assert sanitize_title("\u202eabc\ufeff") == "abc"
    assert sanitize_title("\x1b[34mBlue\x1b[0m talk") == "Blue talk"  # the CLI's rename as the TUI's box
    assert archive.resolve_title("Deploy plan").id == "b"  # the newest numbered variant


def test_a_rename_asked_against_an_old_title_is_refused_and_writes_nothing(home):
    from engine.errors import TitleChanged

    archive = home.archive
    archive.create_session("s1", title="Cups talk")
    archive.set_title("s1", "Hermes title")  # meanwhile, elsewhere
    rows = len(home.journal.query(subsystem="sessions"))
    with pytest.raises(TitleChanged, match="renamed meanwhile.*to 'Hermes title'") as refused:
        archive.set_title("s1", "Mine", was="Cups talk")
    assert refused.value.title == "Hermes title" and archive.get_session("s1").title == "Hermes title"
    assert len(home.journal.query(subsystem="sessions")) == rows
    assert archive.set_title("s1", "Mine", was="Hermes title") == "Mine"
    archive.set_title("s1", "Same")  # meanwhile, elsewhere, to the very title asked for: nothing to ask
    assert archive.set_title("s1", "Same", was="Mine") == "Same"


def test_title_moves_from_a_compression_ancestor(home):
    archive = home.archive
    archive.create_session("p", title="Research")
    archive.end_session("p", "compression")
    archive.create_session("c", parent_session_id="p")
    assert archive.set_title("c", "Research") == "Research"
    assert archive.get_session("p").title is None


def test_token_counts_add_or_set(home):
    archive = home.archive
    archive.create_session("s1")
    archive.update_token_counts("s1", input_tokens=10, output_tokens=5, model="m")
    archive.update_token_counts("s1", input_tokens=1)
    session = archive.get_session("s1")
    assert (session.input_tokens, session.output_tokens, session.model) == (11, 5, "m")
    archive.update_token_counts("s1", input_tokens=3, absolute=True)
    assert archive.get_session("s1").input_tokens == 3
    with pytest.raises(WorkbenchError, match="Unknown token counter"):
        archive.update_token_counts("s1", bogus=1)


def test_archive_hides_the_whole_compression_chain(home):
    archive = home.archive
    archive.create_session("p")
    archive.end_session("p", "compression")
    archive.create_session("c", parent_session_id="p")
    archive.create_session("other")
    assert archive.set_archived("c", True) == 2
    assert [s.id for s in archive.list_sessions()] == ["other"]
    assert len(archive.list_sessions(include_archived=True)) == 3
    archive.set_archived("p", False)
    assert len(archive.list_sessions()) == 3


def test_archiving_a_branch_leaves_its_parent_listed(home):
    archive = home.archive
    archive.create_session("p")
    archive.end_session("p", "branched")
    archive.create_session("b", parent_session_id="p")
    assert archive.set_archived("b", True) == 1
    assert [(s.id, s.archived) for s in archive.list_sessions(include_archived=True)] == [("b", True), ("p", False)]
    assert [s.id for s in archive.root_sessions()] == ["p"]


def test_archiving_takes_every_continuation_of_the_conversation(home, clock):
    archive = home.archive
    archive.create_session("p")
    archive.end_session("p", "compression")
    for child in ("c1", "c2"):  # a retried compression leaves two continuations
        clock.advance(1)
        archive.create_session(child, parent_session_id="p")
    assert archive.set_archived("c2", True) == 3
    assert archive.list_sessions() == [] and archive.root_sessions() == []


def test_a_conversation_continued_after_archiving_is_listed_again(home, clock):
    archive = home.archive
    archive.create_session("p")
    archive.end_session("p", "compression")
    archive.create_session("c", parent_session_id="p")
    archive.create_session("other")
    archive.set_archived("p", True)
    assert [s.id for s in archive.root_sessions()] == ["other"]
    archive.end_session("c", "compression")  # Hermes compresses the archived conversation and goes on
    clock.advance(1)
    archive.create_session("d", parent_session_id="c")
    assert {s.id for s in archive.root_sessions()} == {"p", "other"}
    assert archive.listed_roots(["p", "other"]) == {"p", "other"}
    assert archive.root_chains()[-1].ids == ("p", "c", "d")
    archive.set_archived("d", True)  # archiving it again hides all of it
    assert [s.id for s in archive.root_sessions()] == ["other"]


def parent_and_child(home, clock, reason: str, child: str):
    """Session ``p`` ended with ``reason`` and, a second later, ``child`` beneath it; the archive."""
    archive = home.archive
    archive.create_session("p")
    archive.end_session("p", reason)
    clock.advance(1)
    archive.create_session(child, parent_session_id="p")
    return archive


def test_a_branch_of_an_archived_conversation_is_listed_as_a_root(home, clock):
    """Archiving a parent hid its live branch with it: the tree lists children only under their parent."""
    archive = parent_and_child(home, clock, "branched", "b")
    archive.create_session("d", source="subagent", parent_session_id="p")  # a delegate stays out of sight
    archive.set_archived("p")
    assert [s.id for s in archive.root_sessions()] == ["b"]
    assert archive.chain_path("b") == ["b"]  # where the tree finds it
    archive.set_archived("b")
    assert archive.root_sessions() == []
    archive.set_archived("p", False)
    assert [s.id for s in archive.root_sessions()] == ["p"] and archive.chain_path("b") == ["p", "b"]
    assert [c.id for c in archive.children_of("p")] == ["d"]  # the archived branch leaves the tree
    assert archive.root_chains()[0].child_count == 1 and archive.root_sessions()[0].child_count == 1


def test_a_branch_of_an_archived_conversation_continued_since_stays_beneath_it(home, clock):
    archive = parent_and_child(home, clock, "compression", "c")
    archive.create_session("b", parent_session_id="p", model_config={"_branched_from": "p"})
    archive.set_archived("p")
    archive.set_archived("b", False)
    assert [s.id for s in archive.root_sessions()] == ["b"]
    archive.end_session("c", "compression")  # Hermes goes on with the conversation: it is listed again
    archive.create_session("c2", parent_session_id="c")
    assert [s.id for s in archive.root_sessions()] == ["p"]
    assert [chain.ids for chain in archive.chain_children("p")] == [("b",)]


@pytest.mark.parametrize("reason", ["compression", "branched"])
def test_a_tool_session_is_neither_a_continuation_nor_a_root_of_its_own(home, clock, reason):
    """A session a tool started (source ``tool``, which Hermes keeps out of its lists) beneath a
    compressed segment was labelled a continuation; beneath another, it became a root when its
    conversation was archived. Like a delegate, it is its parent's and is archived with it (as
    Hermes's own archive does beneath a compressed segment), never a branch of it."""
    archive = parent_and_child(home, clock, reason, "c")
    archive.create_session("t", source="tool", parent_session_id="p")
    archive.create_session("d", source="subagent", parent_session_id="p")
    assert {c.id: c.kind for c in archive.children_of("p")}["t"] == "tool"
    assert archive.tip_of("p") == ("c" if reason == "compression" else "p")
    family = ["p", "c", "t", "d"] if reason == "compression" else ["p", "t", "d"]  # (never the branch)
    assert archive.conversation_family("p") == family
    assert archive.set_archived("t") == len(family)  # from its row: the conversation it belongs to
    row = home.journal.query(subsystem="sessions", limit=1)[0]
    assert (row.target, row.detail["sessions"]) == ("p", family)  # keyed and named as the conversation
    assert archive.set_archived("t", False) == len(family)
    archive.set_archived("p")
    assert "t" not in {s.id for s in archive.root_sessions()}
    assert archive.get_session("t").archived and archive.get_session("d").archived
    assert (reason == "branched") == ("c" in {s.id for s in archive.root_sessions()})
    archive.set_archived("p", False)
    assert "t" in {chain.head.id for chain in archive.chain_children(archive.chain_of("p").head.id)}


def test_an_archived_branch_hermes_goes_on_compressing_is_back_beneath_its_parent(home, clock):
    archive = parent_and_child(home, clock, "branched", "b")
    archive.set_archived("b")
    assert archive.children_of("p") == [] and archive.root_sessions()[0].child_count == 0
    archive.end_session("b", "compression")  # Hermes, still running the branch
    archive.create_session("b2", parent_session_id="b")
    assert [c.id for c in archive.children_of("p")] == ["b"] and archive.root_sessions()[0].child_count == 1
    assert archive.shown(["b"]) == {"b"} and archive.chain_path("b2") == ["p", "b"]


def test_prune_removes_only_old_ended_sessions_and_orphans_children(home, clock):
    archive = home.archive
    archive.create_session("old_ended")
    archive.append_message("old_ended", "user", "ancient deploy")
    archive.end_session("old_ended", "done")
    archive.create_session("old_open")
    clock.advance(100 * 86400)
    archive.create_session("child", parent_session_id="old_ended")
    assert archive.prune(90) == 1
    assert {s.id for s in archive.list_sessions()} == {"old_open", "child"}
    assert archive.get_session("child").parent_session_id is None
    assert archive.search("ancient") == []
    assert archive.prune(90) == 0
    [entry] = [e for e in home.journal.query(subsystem="sessions") if e.action == "prune"]
    assert entry.detail["count"] == 1 and entry.detail["deleted"] == ["old_ended"]


def test_a_session_resumed_as_a_prune_begins_is_left_whole(home, clock, monkeypatch):
    """The prune read what to delete, then deleted it by id: a session Hermes resumed in between (while
    the journal row was written) lost its messages. The ids are read again in the delete's transaction."""
    archive = home.archive
    for session_id in ("old_a", "old_b"):
        archive.create_session(session_id)
        archive.append_message(session_id, "user", f"ancient {session_id}")
        archive.end_session(session_id, "done")
    clock.advance(100 * 86400)
    read = type(archive).prunable
    calls = []

    def prunable(self, *args, **kwargs):
        found = read(self, *args, **kwargs)
        if not calls:  # the read before the journal row: Hermes (which takes no lock of ours) resumes old_b
            with contextlib.closing(sqlite3.connect(home.state_db_path)) as hermes, hermes:
                hermes.execute("UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = 'old_b'")
        calls.append(found)
        return found

    monkeypatch.setattr(type(archive), "prunable", prunable)
    assert archive.prune(90) == 1
    assert archive.get_session("old_a") is None
    assert archive.get_session("old_b").ended_at is None and archive.search("ancient") != []
    [entry] = [e for e in home.journal.query(subsystem="sessions") if e.action == "prune"]
    assert entry.detail["deleted"] == ["old_a"] and entry.detail["count"] == 1


def test_delete_removes_delegates_and_orphans_other_children(home):
    archive = home.archive
    archive.create_session("parent")
    archive.create_session(
        "delegate", source="subagent", parent_session_id="parent", model_config={"_delegate_from": "parent"}
    )
    archive.create_session("grand_delegate", source="subagent", parent_session_id="delegate")
    archive.create_session("branch", parent_session_id="parent", model_config={"_branched_from": "parent"})
    archive.append_message("delegate", "user", "delegated work")
    assert archive.delete_session("parent", live=True) is True
    assert {s.id for s in archive.list_sessions()} == {"branch"}
    assert archive.get_session("branch").parent_session_id is None
    assert archive.delete_session("parent", live=True) is False
    [entry] = [e for e in home.journal.query(subsystem="sessions") if e.action == "delete"]
    assert set(entry.detail["deleted"]) == {"parent", "delegate", "grand_delegate"}


def test_message_events_and_counters(home):
    archive = home.archive
    archive.create_session("s1")
    stored = []
    home.bus.subscribe(stored.append, MessageStored)
    calls = [
        {"id": "a", "type": "function", "function": {"name": "terminal", "arguments": "{}"}},
        {"id": "b", "type": "function", "function": {"name": "read_file", "arguments": "{}"}},
    ]
    ids = archive.append_messages(
        "s1",
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": calls},
            {"role": "tool", "content": "ok", "tool_name": "terminal", "tool_call_id": "a"},
        ],
    )
    assert [(e.message_ids, e.message_id, e.role) for e in stored] == [(tuple(ids), ids[-1], "tool")]  # one per turn
    assert ids == sorted(ids) and len(set(ids)) == 3
    assert [m.id for m in archive.messages("s1")] == ids
    session = archive.get_session("s1")
    assert (session.message_count, session.tool_call_count) == (3, 2)  # tool results add no calls
    assert home.journal.query(subsystem="sessions") == []  # appends are not journaled


def test_bad_messages_are_refused_and_nothing_is_stored(home):
    archive = home.archive
    archive.create_session("s1")
    with pytest.raises(WorkbenchError, match="needs a role"):
        archive.append_messages("s1", [{"role": "user", "content": "ok"}, {"content": "no role"}])
    with pytest.raises(WorkbenchError, match="Unknown message field"):
        archive.append_messages("s1", [{"role": "user", "colour": "red"}])
    with pytest.raises(WorkbenchError, match="No session"):
        archive.append_message("ghost", "user", "x")
    assert archive.messages("s1") == [] and archive.get_session("s1").message_count == 0


def test_a_page_of_roots_goes_on_after_the_last_listed_however_many_came_or_went(home, clock):
    """Pages were read by offset: a root archived above the page boundary made the next page skip
    one, a new root on top made it repeat one. Ties in start time are ordered by rowid."""
    archive = home.archive
    for n in range(6):
        archive.create_session(f"r{n}")
        clock.advance(1 if n % 2 else 0)  # r0, r1 start together, as r2, r3 do
    first = archive.root_sessions(limit=3)
    assert [s.id for s in first] == ["r5", "r4", "r3"]
    key = (first[-1].started_at, first[-1].id)
    archive.set_archived("r4")
    archive.create_session("new")
    assert [s.id for s in archive.root_sessions(limit=3, after=key)] == ["r2", "r1", "r0"]
    archive.delete_session("r3", live=True)  # the last listed, gone: its tie (r2) is listed again, nothing skipped
    assert [s.id for s in archive.root_sessions(limit=3, after=key)] == ["r2", "r1", "r0"]
    r1 = archive.get_session("r1")
    assert archive.root_ids(after=(first[0].started_at, "r5"), down_to=(r1.started_at, "r1")) == ["r2", "r1"]
    assert archive.root_ids() == ["new", "r5", "r2", "r1", "r0"]


def test_a_chain_stamp_changes_exactly_when_its_row_would(home, clock):
    archive = home.archive
    archive.create_session("p", title="Plan")
    archive.create_session("q")
    rows = {"p": ("p",), "q": ("q",)}
    first = archive.chain_stamps(rows)
    assert archive.chain_stamps(rows) == first and set(first) == {"p", "q"}
    archive.append_message("q", "user", "hello")
    archive.end_session("p", "compression")
    archive.create_session("p2", parent_session_id="p")  # a new segment: the row grows
    now = archive.chain_stamps(rows)
    assert now["p"] != first["p"] and now["q"] != first["q"]
    archive.set_title("q", "Renamed")
    assert archive.chain_stamps(rows)["q"] != now["q"] and archive.chain_stamps(rows)["p"] == now["p"]
    assert archive.chain_stamps({"gone": ("gone",)}) == {"gone": ((None, 0),)}


def test_archiving_an_unknown_session_is_refused_and_a_row_naming_none_changes_nothing(home):
    from engine.errors import WorkbenchError

    home.archive.create_session("s1")
    with pytest.raises(WorkbenchError, match="ghost"):
        home.archive.set_archived("ghost")
    assert home.archive.set_archived("s1", only=[]) == 0 and not home.archive.get_session("s1").archived


def test_a_chain_stamp_follows_the_children_its_row_shows(home, clock):
    archive = home.archive
    archive.create_session("p")
    archive.end_session("p", "branched")
    archive.create_session("b", parent_session_id="p", model_config={"_branched_from": "p"})
    before = archive.chain_stamps({"p": ("p",)})
    archive.set_archived("b")  # the branch leaves p's row: its arrow goes
    assert archive.chain_stamps({"p": ("p",)}) != before and archive.root_sessions()[0].child_count == 0


def test_an_archive_if_ended_looks_again_inside_its_write(home, monkeypatch):
    """A session resumed between the look and the write is refused there, as a delete is: nothing
    archived, nothing journaled."""
    from engine.errors import SessionLive

    archive = home.archive
    archive.create_session("s1", source="cli")
    archive.append_message("s1", "user", "hello")
    archive.end_session("s1", "cli_close")
    assert archive.live_archive_warning("s1") is None
    write = archive._write

    def resumed_first():  # Hermes resumes it just before our write takes the lock
        archive.conn().execute("UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = 's1'")
        archive.conn().commit()
        return write()

    monkeypatch.setattr(archive, "_write", resumed_first)
    with pytest.raises(SessionLive, match="Session s1 has not ended"):
        archive.set_archived("s1", True, if_ended=True)
    monkeypatch.undo()
    assert not archive.get_session("s1").archived
    assert "archive" not in {row.action for row in home.journal.query(subsystem="sessions")}
    assert archive.set_archived("s1", True) == 1  # (without if_ended: as before, for a revert)


def test_a_delete_refuses_a_session_changed_since_it_was_asked_about(home):
    """D compared only the session's message count: Hermes's compaction rewrites messages in place
    (deletes and inserts them, the count set to the new total), and a delegate session the delete
    takes along was not looked at at all. What the question showed is compared whole now."""
    import sqlite3

    archive = home.archive
    archive.create_session("talk", source="cli")
    archive.append_messages("talk", [{"role": "user", "content": "one"}, {"role": "assistant", "content": "two"}])
    archive.create_session("helper", source="subagent", parent_session_id="talk")
    archive.append_message("helper", "user", "look it up")
    asked = archive.delete_mark("talk")
    assert asked[:3] == (2, ("helper", "talk"), 3)
    with sqlite3.connect(home.state_db_path) as conn:  # a rewrite in place, as Hermes's compaction makes
        (first,) = conn.execute("SELECT min(id) FROM messages WHERE session_id = 'talk'").fetchone()
        conn.execute("DELETE FROM messages WHERE id = ?", (first,))
    archive.append_message("talk", "user", "one, summarised")
    with sqlite3.connect(home.state_db_path) as conn:  # (Hermes sets the count to the new total)
        conn.execute("UPDATE sessions SET message_count = 2 WHERE id = 'talk'")
    assert archive.get_session("talk").message_count == 2  # the count the question showed
    with pytest.raises(SessionGrew, match="changed since you were asked about it") as refused:
        archive.delete_session("talk", live=True, shown=asked)
    assert refused.value.message.endswith("another process wrote to it meanwhile. Nothing was deleted.")
    asked = archive.delete_mark("talk")
    archive.append_message("helper", "assistant", "found it")  # its delegate grew
    with pytest.raises(SessionGrew, match="changed since you were asked"):
        archive.delete_session("talk", live=True, shown=asked)
    asked = archive.delete_mark("talk")
    archive.append_message("talk", "assistant", "three")
    with pytest.raises(SessionGrew, match="has 3 messages now, not the 2 you were asked about"):
        archive.delete_session("talk", live=True, shown=asked)
    assert [m.content for m in archive.messages("helper")] == ["look it up", "found it"]
    assert archive.delete_session("talk", live=True, shown=archive.delete_mark("talk"))
    assert archive.get_session("talk") is None and archive.get_session("helper") is None
