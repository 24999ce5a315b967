"""Messages: order, tool calls, windows, in-place compaction and rewind; lineage walks."""

from __future__ import annotations

import itertools
import json
import sqlite3
import subprocess
import sys

import pytest

from engine.db import Checkpointer, connect, write_transaction
from engine.errors import WorkbenchError


def _conversation(archive, session_id, n, word="step"):
    archive.create_session(session_id)
    return archive.append_messages(
        session_id,
        [
            {"role": "user" if i % 2 == 0 else "assistant", "content": f"{word} {i}", "timestamp": 100.0 - i}
            for i in range(n)
        ],
    )


def test_insertion_order_not_timestamp_and_tool_calls_round_trip(home):
    archive = home.archive
    ids = _conversation(archive, "s1", 4)  # timestamps go backwards; order must not
    assert [m.id for m in archive.messages("s1")] == ids
    calls = [{"id": "c", "type": "function", "function": {"name": "memory", "arguments": '{"note": "记住这个"}'}}]
    mid = archive.append_message("s1", "assistant", None, tool_calls=calls, finish_reason="tool_calls")
    stored = archive.message(mid)
    assert stored.tool_calls == calls and stored.finish_reason == "tool_calls" and stored.content is None
    raw = (
        sqlite3.connect(home.state_db_path)
        .execute("SELECT tool_calls FROM messages WHERE id = ?", (mid,))
        .fetchone()[0]
    )
    assert "记住这个" in raw  # stored unescaped so CJK arguments are searchable
    assert [h.match_message_id for h in archive.search("记住")] == [mid]
    multimodal = [{"type": "text", "text": "look at this"}, {"type": "image_url", "image_url": {"url": "x"}}]
    mm = archive.append_message("s1", "user", multimodal)
    assert archive.message(mm).content == multimodal and archive.message(mm).text == "look at this"
    assert [m.id for m in archive.messages("s1", limit=2, offset=1)] == ids[1:3]


@pytest.mark.parametrize("layout", ["hermes", "plain ids"])
def test_an_append_returns_the_ids_its_rows_were_stored_under(home, layout):
    """In Hermes's layout (AUTOINCREMENT ids) an append takes its ids from the last one SQLite reports;
    elsewhere from RETURNING. Either way, across statements of 200 rows, after rows at the end were
    deleted (an AUTOINCREMENT id is never used twice) and after another program's append."""
    path = home.state_db_path
    home.archive.create_session("s0")  # (the archive and its layout exist)
    if layout == "plain ids":  # an archive of another program, whose ids are a plain rowid
        home.close()
        conn = sqlite3.connect(path)
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'messages'").fetchone()[0]
        plain = sql.replace("AUTOINCREMENT", "")
        assert plain != sql
        conn.execute("PRAGMA writable_schema = ON")
        conn.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'messages'", (plain,))
        conn.commit()
        conn.close()
        from engine import open_home

        home = open_home(home.root, clock=home.clock)
    archive = home.archive
    assert archive.caps.rising_ids is (layout == "hermes")
    archive.create_session("s1")
    first = archive.append_messages("s1", [{"role": "user", "content": f"m {i}"} for i in range(450)])
    other = sqlite3.connect(path)
    other.execute("DELETE FROM messages WHERE id > ?", (first[-3],))
    other.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s1', 'user', 'x', 1)")
    other.commit()
    other.close()
    second = archive.append_messages("s1", [{"role": "user", "content": f"n {i}"} for i in range(5)])
    stored = [m.id for m in archive.messages("s1")]
    assert stored == [*first[:-2], stored[-6], *second] and len(set(stored)) == len(stored)
    assert [archive.message(i).text for i in second] == [f"n {i}" for i in range(5)]
    home.close()


def test_window_around_a_message(home):
    archive = home.archive
    ids = _conversation(archive, "s1", 10)
    shown, before, after = archive.message_window(ids[5], 2)
    assert [m.id for m in shown] == ids[3:8] and (before, after) == (3, 2)
    assert [m.id for m in archive.messages_around(ids[0], 1)] == ids[:2]
    assert archive.messages_around(999_999) == []


def test_compaction_archives_rows_that_search_still_finds(home):
    archive = home.archive
    ids = _conversation(archive, "s1", 10, word="zeppelin")
    archive.append_message("s1", "user", "the flamingo detail in the middle", timestamp=50.0)
    archive.append_messages("s1", [{"role": "assistant", "content": f"tail {i}"} for i in range(2)])
    live_count = archive.compact_in_place("s1", keep_head=2, keep_tail=2, summary="Summary: we discussed zeppelins")
    assert live_count == 5
    live = archive.messages("s1")
    assert [m.content for m in live] == [
        "zeppelin 0",
        "zeppelin 1",
        "Summary: we discussed zeppelins",
        "tail 0",
        "tail 1",
    ]
    assert all(m.id > ids[-1] for m in live)  # fresh rows, still in order
    assert archive.get_session("s1").message_count == 5
    everything = archive.messages("s1", include_archived=True)
    assert len(everything) == 13 + 5 and sum(m.compacted for m in everything) == 13
    hit = archive.search("flamingo")[0]
    assert archive.message(hit.match_message_id).compacted  # found although no live load shows it
    assert "flamingo" not in " ".join(m.text for m in live)
    [entry] = home.journal.query(subsystem="sessions", target="s1")
    assert entry.action == "compact" and entry.detail["archived"] == 13
    with pytest.raises(WorkbenchError, match="Nothing to compact"):
        archive.compact_in_place("s1", keep_head=3, keep_tail=2, summary="x")


def test_rewind_hides_rows_from_loads_and_search(home):
    archive = home.archive
    ids = _conversation(archive, "s1", 6, word="walrus")
    assert archive.rewind("s1", ids[2]) == 4
    assert [m.id for m in archive.messages("s1")] == ids[:2]
    assert {h.match_message_id for h in archive.search("walrus")} <= set(ids[:2])
    assert set(archive.iter_matches("walrus")) == set(ids[:2])
    with pytest.raises(WorkbenchError, match="not a live user message"):
        archive.rewind("s1", ids[1])  # an assistant row
    row = sqlite3.connect(home.state_db_path).execute("SELECT rewind_count FROM sessions WHERE id='s1'").fetchone()
    assert row == (1,)


# -- lineage -------------------------------------------------------------------------------
def _chain(archive, *ids):
    archive.create_session(ids[0], title="Long task")
    for parent, child in itertools.pairwise(ids):
        archive.end_session(parent, "compression")
        archive.create_session(
            child, parent_session_id=parent, title=archive.next_lineage_title(archive.get_session(parent).title)
        )


def test_three_step_compression_chain_resolves_root_and_tip(home):
    archive = home.archive
    _chain(archive, "r", "c1", "c2", "c3")
    archive.create_session("branch", parent_session_id="c1", model_config={"_branched_from": "c1"})
    archive.create_session("helper", parent_session_id="c2", source="subagent")
    for sid in ("r", "c1", "c2", "c3", "branch", "helper"):
        assert archive.root_of(sid) == "r"
    for sid in ("r", "c1", "c2", "c3"):
        assert archive.tip_of(sid) == "c3"
    assert archive.tip_of("branch") == "branch"
    lineage = archive.lineage("c1")
    assert lineage.chain == ["r", "c1", "c2", "c3"]
    assert lineage.children == {"r": ["c1"], "c1": ["c2", "branch"], "c2": ["c3", "helper"]}
    assert archive.lineage("branch").chain == ["r", "c1", "branch"]
    assert [archive.get_session(s).title for s in lineage.chain] == [
        "Long task",
        "Long task #2",
        "Long task #3",
        "Long task #4",
    ]
    kinds = {s.id: (s.kind, s.child_count) for s in archive.children_of("c1")}
    assert kinds == {"c2": ("compression", 2), "branch": ("branch", 0)}
    assert {s.id: s.kind for s in archive.children_of("c2")}["helper"] == "delegate"
    roots = archive.root_sessions()
    assert [(s.id, s.child_count) for s in roots] == [("r", 1)]


def test_a_compression_chain_is_one_row_and_other_children_nest(home):
    archive = home.archive
    _chain(archive, "r", "c1", "c2", "c3")
    archive.create_session("branch", parent_session_id="c1", model_config={"_branched_from": "c1"})
    archive.create_session("helper", parent_session_id="c2", source="subagent")
    _chain_under(archive, "branch", "branch2")  # a branch compressed in turn: a chain of its own
    archive.create_session("later", title="Another task")
    chains = archive.root_chains()
    assert [(c.ids, c.kind, c.child_count) for c in chains] == [
        (("later",), "root", 0),
        (("r", "c1", "c2", "c3"), "root", 2),
    ]
    deploy = chains[1]
    assert (deploy.title, deploy.head.id, deploy.tip.id) == ("Long task", "r", "c3")
    children = archive.chain_children("c2")  # any segment names the chain
    assert [(c.ids, c.kind) for c in children] == [(("branch", "branch2"), "branch"), (("helper",), "delegate")]
    for sid in ("r", "c1", "c2", "c3"):
        assert archive.chain_of(sid).ids == ("r", "c1", "c2", "c3")
    assert archive.chain_of("branch2").ids == ("branch", "branch2") and archive.chain_of("branch2").kind == "branch"
    assert archive.chain_path("branch2") == ["r", "branch"] and archive.chain_path("c3") == ["r"]
    assert archive.chain_of("helper").to_dict()["segments"] == ["helper"]


def _chain_under(archive, parent, child):
    archive.end_session(parent, "compression")
    archive.create_session(child, parent_session_id=parent)


def test_a_second_continuation_of_one_segment_nests_instead_of_joining(home):
    """Two children continue one compressed parent (a retried rotation): the chain takes one, the other nests."""
    archive, clock = home.archive, home.clock
    _chain(archive, "r", "c1")
    archive.end_session("c1", "compression")
    clock.advance(60)
    archive.create_session("c1_retry", parent_session_id="r")
    chain = archive.chain_of("r")
    assert chain.ids == ("r", "c1") and chain.child_count == 1
    assert [(c.ids, c.kind) for c in archive.chain_children("r")] == [(("c1_retry",), "compression")]
    assert archive.chain_of("c1_retry").ids == ("c1_retry",) and archive.chain_path("c1_retry") == ["r", "c1_retry"]


def test_walks_survive_a_parent_cycle(home):
    archive = home.archive
    _chain(archive, "a", "b")
    conn = archive.conn()
    conn.execute("UPDATE sessions SET parent_session_id = 'b' WHERE id = 'a'")  # hand-edited database
    assert archive.root_of("a") in {"a", "b"}
    assert archive.tip_of("a") in {"a", "b"}
    lineage = archive.lineage("b")
    assert set(lineage.chain) == {"a", "b"} and len(lineage.chain) == 2
    assert archive.root_sessions() == []
    assert set(archive.chain_of("a").ids) == {"a", "b"} and len(archive.chain_path("b")) <= 2


def test_the_lineage_of_a_parent_loop_names_each_session_once_and_says_where_it_loops(home, cli, monkeypatch):
    """Both ended by compression and each the other's parent, `sessions lineage b` printed
    `chain: a -> b -> a` (the walk up and the walk on met again) and nothing said why. The chain names
    each session once and ``loops_to`` (and the text) name the root's own parent, below it."""
    from tests.test_curator_cli import wb

    archive = home.archive
    _chain(archive, "a", "b")
    archive.end_session("b", "compression")
    archive.create_session("kid", parent_session_id="b")
    archive.conn().execute("UPDATE sessions SET parent_session_id = 'b' WHERE id = 'a'")  # hand-edited
    lineage = archive.lineage("b")
    assert (lineage.root_id, lineage.chain, lineage.loops_to) == ("a", ["a", "b"], "b")  # (was a, b, a)
    assert archive.lineage("a").chain == ["b", "a"]
    code, out = wb(home.root, "sessions", "lineage", "b")
    assert code == 0 and out["chain"] == ["a", "b"] and out["loops_to"] == "b"
    monkeypatch.setenv("COLUMNS", "200")
    lines = cli("sessions", "lineage", "b", "--home", str(home.root)).stdout.splitlines()
    assert lines[0] == "chain: a -> b" and lines[1:4] == ["a", "  b", "    kid"]
    assert lines[4] == (
        "(the parent of a is b, below it: state.db's parent ids form a loop, so the root shown is where the "
        "walk up stopped)"
    )
    archive.create_session("alone")
    assert archive.lineage("alone").loops_to is None


def test_export_session_and_lineage(home):
    archive = home.archive
    _chain(archive, "r", "c")
    archive.append_message("r", "user", "first part")
    archive.append_message(
        "c",
        "assistant",
        "second part",
        tool_calls=[{"id": "t", "type": "function", "function": {"name": "todo", "arguments": "{}"}}],
    )
    single = json.loads(archive.export_session("c"))
    assert single["id"] == "c" and [m["content"] for m in single["messages"]] == ["second part"]
    whole = json.loads(archive.export_lineage("c"))
    assert [seg["id"] for seg in whole["segments"]] == ["r", "c"] and whole["message_count"] == 2
    markdown = archive.export_lineage("r", "markdown")
    assert "# Long task #2" in markdown and "```tool-call todo" in markdown and "first part" in markdown
    with pytest.raises(WorkbenchError, match="Unknown export format"):
        archive.export_session("c", "pdf")


def test_json_export_keeps_stored_values_and_lists_archived_rows_apart(home):
    """Hermes's import stores each of ``messages`` as live: the rows compaction archived follow apart,
    flagged, and every value is as stored (the time's fraction, the raw model_config text)."""
    archive = home.archive
    archive.create_session("k", source="cli", model_config={"temperature": 0.5})
    for i, role in enumerate(("user", "assistant", "user", "assistant")):
        archive.append_message("k", role, f"turn {i}", timestamp=1796463188.5822749 + i)
    archive.compact_in_place("k", keep_head=1, keep_tail=1, summary="summary of the middle")
    doc = json.loads(archive.export_session("k"))
    assert [m["content"] for m in doc["messages"]] == ["turn 0", "summary of the middle", "turn 3"]
    assert [(m["content"], m["active"], m["compacted"]) for m in doc["inactive_messages"]] == [
        (f"turn {i}", 0, 1) for i in range(4)
    ]
    assert doc["inactive_messages"][0]["timestamp"] == 1796463188.5822749
    assert (
        doc["inactive_messages"][0]["timestamp_iso"] == "2026-12-05T09:33:08+00:00"
    )  # (the number keeps the fraction)
    assert json.loads(doc["model_config"]) == {"temperature": 0.5} and isinstance(doc["started_at"], float)
    assert json.loads(archive.export_lineage("k")) == doc  # (a lineage of one session is that session)


WRITER = """
import sys
from engine import open_home
home = open_home(sys.argv[1])
for i in range(40):
    home.archive.append_messages("shared", [{"role": "user", "content": f"{sys.argv[2]} {i}"},
                                            {"role": "assistant", "content": "ok"}])
home.close()
"""


def test_two_processes_append_to_one_session(home):
    home.archive.create_session("shared")
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(home.root), name]) for name in ("alpha", "beta")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    messages = home.archive.messages("shared")
    assert len(messages) == 160 and home.archive.get_session("shared").message_count == 160
    for name in ("alpha", "beta"):  # each writer's turns stay in order and whole
        mine = [m for m in messages if m.text.startswith(name)]
        assert [m.text for m in mine] == [f"{name} {i}" for i in range(40)]
        for m in mine:
            assert messages[messages.index(m) + 1].text == "ok"


def test_a_session_whose_parent_is_gone_is_a_root(home):
    """Another tool may delete a parent row without orphaning its children: they must stay visible."""
    archive = home.archive
    _chain(archive, "a", "b")
    conn = archive.conn()
    conn.execute("PRAGMA foreign_keys=OFF")
    conn.execute("DELETE FROM sessions WHERE id = 'a'")  # as a foreign tool without our orphaning would
    conn.execute("PRAGMA foreign_keys=ON")
    assert [s.id for s in archive.root_sessions()] == ["b"]
    assert archive.root_of("b") == "b" and archive.lineage("b").chain == ["b"]


def _stream_until_restart(archive, after_each=lambda: None) -> int:
    """Turn writes without a pause until the writer has started the WAL over; returns how many."""
    archive.create_session("stream")
    for n in range(3000):  # up to some 100 MB of WAL frames
        archive.append_messages("stream", [{"role": "user", "content": f"turn {n} " + "payload words " * 150}])
        after_each()
        if archive._checkpoints.restarts:
            return n + 1
    pytest.fail("the WAL never started over")


def test_writes_without_a_pause_still_let_the_wal_start_over(home, monkeypatch):
    """A stream of turn writes keeps racing the thread's PASSIVE checkpoints, which never rewind
    the WAL (a 1M-message build left a 52 GB file); once the thread finds it past RESTART_FRAMES,
    a write starts it over, and the writes after it reuse the file instead of growing it."""
    monkeypatch.setattr(Checkpointer, "RESTART_FRAMES", 500)  # about 2 MB of pages
    archive = home.archive
    wal = archive.path.with_name(archive.path.name + "-wal")
    n = _stream_until_restart(archive) - 1
    size = wal.stat().st_size
    assert size >= 500 * 4096  # the frames that made the thread call for a restart
    for m in range(10):  # a few hundred frames: written from the start of the file again
        archive.append_messages("stream", [{"role": "user", "content": f"after {m} " + "payload words " * 150}])
    assert wal.stat().st_size == size
    count = archive.conn().execute("SELECT count(*) FROM messages WHERE session_id = 'stream'").fetchone()[0]
    assert count == n + 11
    home.archive.close()


def test_a_slow_write_leaves_a_due_restart_to_the_next_write_once(tmp_path):
    """A turn that already spent long on its own work (a merge step) does not also start the WAL
    over; the next write does, even when it is slow too, so a stream still restarts."""
    path = tmp_path / "x.db"
    conn = connect(path)
    conn.execute("CREATE TABLE t (x)")
    checkpoints = Checkpointer(path)
    checkpoints.adopt(conn)

    def write(spent: float) -> int:
        with write_transaction(conn):
            conn.execute("INSERT INTO t VALUES (1)")
        checkpoints.wrote(conn, spent)
        return checkpoints.restarts

    checkpoints._overgrown = True  # as the thread leaves it after a copy that left too much
    assert write(0.05) == 0  # slow: left to the next write
    assert write(0.05) == 1  # slow too, but it was left once already
    assert write(0.05) == 1  # nothing due any more
    checkpoints._overgrown = True
    assert write(0.001) == 2  # a quick write restarts at once
    checkpoints.close()
    conn.close()


def test_a_wal_grown_past_its_keep_size_is_cut_back_after_a_restart(home, monkeypatch):
    """A restart keeps the file's size for reuse, up to WAL_KEEP_BYTES: a WAL a long-held reader
    let grow is given back to the disk at the first commit after the writer starts it over."""
    monkeypatch.setattr(Checkpointer, "RESTART_FRAMES", 500)
    monkeypatch.setattr(Checkpointer, "WAL_KEEP_BYTES", 2**20)  # below the 2 MB the restart waits for
    archive = home.archive
    wal = archive.path.with_name(archive.path.name + "-wal")
    sizes: list[int] = []  # the WAL's size after each write (a thread's copy that caught up may let the
    # writer start it over, and cut it back, a write before the restart the test waits for: CI saw it once)
    _stream_until_restart(archive, lambda: sizes.append(wal.stat().st_size))
    assert max(sizes) > 2**20
    archive.append_messages("stream", [{"role": "user", "content": "the first turn after the restart"}])
    assert wal.stat().st_size <= 2**20
    home.archive.close()


def test_turn_writes_leave_wal_checkpoints_to_a_thread_of_their_own(home):
    """No commit checkpoints the WAL on the write path; a thread copies it back in the background."""
    archive = home.archive
    archive.create_session("busy")
    for turn in range(Checkpointer.EVERY * 2):
        archive.append_messages("busy", [{"role": "user", "content": f"turn {turn} " + "words " * 200}])
    assert archive.conn().execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    checkpoints = archive._checkpoints
    assert checkpoints.settle()  # the thread's copies are done (bounded wait; no timing asserted)
    assert checkpoints.checkpoints >= 1  # two wakes in quick succession may share one copy
    reader = sqlite3.connect(archive.path)
    assert (
        reader.execute("SELECT count(*) FROM messages WHERE session_id = 'busy'").fetchone()[0]
        == 2 * Checkpointer.EVERY
    )
    reader.close()
    home.archive.close()
    assert checkpoints._thread is not None and not checkpoints._thread.is_alive()  # closing stops it
    assert (
        len(home.archive.messages("busy")) == 2 * Checkpointer.EVERY
    )  # the archive reopens (with a checkpointer of its own)
