"""The memory journal keeps entry-level rows and only the file snapshots it still needs."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import FixedClock, open_home
from engine.health import FIXES
from engine.journal import content_hash
from engine.memory import history
from engine.memory.format import serialize
from engine.memory.rebuild import SNAPSHOT_EVERY
from engine.tools import ToolContext
from tests.journal_support import assert_files_rebuild, kept_snapshots

_TEXT = st.text(st.sampled_from("ab §\n\t"), min_size=1, max_size=6)


def _home(tmp_path):
    return open_home(tmp_path / "h", clock=FixedClock(1796040000.0))


def _files(home) -> list[str]:
    return kept_snapshots(home)


def test_writes_keep_a_snapshot_only_every_so_often_and_every_file_rebuilds(tmp_path):
    home = _home(tmp_path)
    ctx = ToolContext(actor="user")
    kept = set()
    for i in range(2 * SNAPSHOT_EVERY + 5):
        assert home.memory.add("memory", f"fact {i}", ctx)["success"]
        kept.update(kept_snapshots(home))
        assert_files_rebuild(home)
    assert home.memory.add("user", "prefers tea", ctx)["success"]
    assert home.memory.replace("memory", "fact 3", "fact three", ctx)["success"]
    assert home.memory.remove("memory", "fact 7", ctx)["success"]
    assert_files_rebuild(home)
    assert len(kept) == 3  # the first write's, then one every SNAPSHOT_EVERY writes
    rows = home.memory.history("memory", limit=100)
    assert all("file_after" not in r.detail and r.detail["file_sha"] for r in rows if r.action != "seen")
    # snapshots at adds 0, 33 and 66; adds 67 and 68, the replace and the remove are replayed on the last
    assert rows[0].detail["depth"] == 4
    assert rows[1].before == "fact 3" and rows[1].after == "fact three"


def test_an_outside_edit_is_journaled_from_the_rebuilt_file(tmp_path):
    """Another process (no memory of what was written) diffs against the file rebuilt from the rows."""
    home = _home(tmp_path)
    ctx = ToolContext(actor="user")
    for word in ("alpha", "beta", "gamma", "delta"):
        home.memory.add("memory", word, ctx)
    home.memory.replace("memory", "beta", "beta two", ctx)
    home.close()
    path = home.memory.path("memory")
    path.write_text(path.read_text().replace("gamma", "epsilon"))
    other = _home(tmp_path)
    assert other.memory.add("memory", "zeta", ctx)["success"]
    external = [r for r in other.memory.history("memory", limit=10) if r.actor == "external"]
    assert [(r.action, r.before, r.after) for r in external] == [("replace", "gamma", "epsilon")]
    assert_files_rebuild(other)  # the outside edit keeps its file: the next writes build on it
    other.close()


def test_a_write_whose_rows_do_not_give_its_file_keeps_a_snapshot(tmp_path):
    """Normalising line endings rewrites the whole text, here with its final line break, which no
    entry holds: its row cannot be replayed, so its file is kept whole."""
    home = _home(tmp_path)
    ctx = ToolContext(actor="user")
    home.memory.add("memory", "alpha", ctx)
    home.memory.add("memory", "beta", ctx)
    path = home.memory.path("memory")
    path.write_bytes(b"alpha\r\n\xc2\xa7\r\nbeta\r\n")
    assert FIXES["memory-line-endings"](home).startswith("Normalised line endings of MEMORY.md")
    raw = home.memory.read("memory").raw
    assert raw == "alpha\n§\nbeta\n" and kept_snapshots(home) == [content_hash(raw)]
    assert home.memory.add("memory", "gamma", ctx)["success"]
    assert_files_rebuild(home)


def _external(home, after_id: int = 0) -> set[tuple]:
    rows = home.memory.history("memory", limit=50)
    return {(r.action, r.before, r.after) for r in rows if r.actor == "external" and r.id > after_id}


def test_a_hand_reordering_never_breaks_the_rebuild(tmp_path):
    """Reordering entries by hand changes no entry, so no row is journaled; the next write keeps
    its file whole, and a later hand edit is journaled as exactly what it changed."""
    home = _home(tmp_path)
    ctx = ToolContext(actor="user")
    for word in ("alpha", "beta", "gamma", "delta"):
        home.memory.add("memory", word, ctx)
    path = home.memory.path("memory")
    path.write_text("gamma\n§\nalpha\n§\nbeta\n§\ndelta")
    assert home.memory.add("memory", "epsilon", ctx)["success"]
    assert_files_rebuild(home)
    home.close()
    path.write_text(path.read_text().replace("beta", "beta (edited)"))
    other = _home(tmp_path)
    other.memory.record_external_change("memory")
    assert {text for row in _external(other) for text in row[1:] if text} == {"beta", "beta (edited)"}
    other.close()


def test_a_leading_byte_order_mark_inside_an_entry_never_breaks_the_rebuild(tmp_path):
    """Two BOM files joined by hand: once the first entry goes, the file starts with U+FEFF, which
    reading back drops; that write keeps its file whole."""
    home = _home(tmp_path)
    ctx = ToolContext(actor="user")
    home.memory.add("memory", "seed", ctx)
    path = home.memory.path("memory")
    path.write_bytes("\ufeffalpha\n§\n\ufeffbeta".encode())
    home.memory.record_external_change("memory")
    assert home.memory.remove("memory", "alpha", ctx)["success"]
    removed = home.memory.history("memory", limit=1)[0].id
    assert_files_rebuild(home)
    home.close()
    path.write_bytes(path.read_bytes() + "\n§\ngamma".encode())
    other = _home(tmp_path)
    other.memory.record_external_change("memory")
    assert _external(other, after_id=removed) == {("add", None, "gamma")}
    other.close()


def test_a_snapshot_the_other_file_shows_but_does_not_build_on_is_released(tmp_path):
    """MEMORY.md's first snapshot holds what USER.md holds now, yet USER.md is rebuilt from its own
    base: once MEMORY.md keeps a newer snapshot, the old one goes."""
    home = _home(tmp_path)
    ctx = ToolContext(actor="user")
    home.memory.add("user", "likes tea", ctx)
    home.memory.add("user", "lives in Oslo", ctx)
    adds = [{"action": "add", "content": "likes tea"}, {"action": "add", "content": "lives in Oslo"}]
    assert home.memory.batch("memory", adds, ctx)["success"]
    for i in range(SNAPSHOT_EVERY + 1):
        home.memory.add("memory", f"fact {i}", ctx)
    home.memory.add("user", "one more", ctx)
    assert_files_rebuild(home)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["add", "replace", "remove", "batch", "reorder by hand", "paste by hand"]), _TEXT, _TEXT
        ),
        max_size=45,
    )
)
def test_any_sequence_of_writes_rebuilds_exactly_in_a_fresh_process(tmp_path_factory, writes):
    """Adds, replaces, removes and batches of arbitrary text (duplicates, a bare §, spaces), between
    hand edits that change no entry (a reordering, a pasted copy of an entry): after each write, a
    store that never saw the writes rebuilds the file from the journal byte for byte."""
    root = tmp_path_factory.mktemp("h")
    writer = open_home(root, clock=FixedClock(1796040000.0))
    ctx = ToolContext(actor="user")
    path = writer.memory.path("memory")
    for action, first, second in writes:
        state = writer.memory.read("memory")
        entries = state.entries
        old = entries[len(first) % len(entries)] if entries else first
        if action == "add":
            writer.memory.add("memory", first, ctx)
        elif action == "replace":
            writer.memory.replace("memory", old, second, ctx)
        elif action == "remove":
            writer.memory.remove("memory", old, ctx)
        elif action == "batch":
            operations = [  # the replace changes what was just added: their order matters
                {"action": "add", "content": first},
                {"action": "replace", "old_text": first, "content": second},
            ]
            writer.memory.batch("memory", operations, ctx)
        else:  # the same entries, in another order or with a copy above the original
            edited = entries[1:] + entries[:1] if action == "reorder by hand" else [old, *entries]
            path.write_text(serialize(edited), encoding="utf-8")
            continue
        if writer.memory.read("memory").raw == state.raw:  # nothing written (an entry already there...)
            continue  # so a hand reordering before it is still not journaled: it changes no entry
        fresh = open_home(root, clock=FixedClock(1796040000.0))
        assert_files_rebuild(fresh)
        fresh.close()
    writer.close()


def test_a_journal_written_with_whole_files_still_detects_outside_edits(tmp_path):
    home = _home(tmp_path)
    ctx = ToolContext(actor="user")
    home.memory.add("memory", "alpha", ctx)
    raw = home.memory.read("memory").raw
    conn = home.journal.connection()
    conn.execute("DELETE FROM journal_files")  # as an older workbench left it: the file inside the row
    conn.execute("UPDATE journal SET detail = ? WHERE subsystem = 'memory'", (json.dumps({"file_after": raw}),))
    conn.commit()
    home.memory.path("memory").write_text(raw.replace("alpha", "omega"))
    assert home.memory.add("memory", "beta", ctx)["success"]
    external = [r for r in home.memory.history("memory", limit=10) if r.actor == "external"]
    assert {(r.before, r.after) for r in external} == {("alpha", None), (None, "omega")}


def test_identical_files_share_one_snapshot_that_neither_write_drops(tmp_path):
    home = _home(tmp_path)
    ctx = ToolContext(actor="user")
    home.memory.add("memory", "same", ctx)
    home.memory.add("user", "same", ctx)
    assert home.memory.add("memory", "more", ctx)["success"]
    user_raw = home.memory.read("user").raw
    assert content_hash(user_raw) in _files(home)
    home.memory.path("user").write_text(user_raw.replace("same", "changed"))
    assert home.memory.add("user", "another", ctx)["success"]
    external = [r for r in home.memory.history("user", limit=10) if r.actor == "external"]
    assert {(r.before, r.after) for r in external} == {("same", None), (None, "changed")}


def test_a_late_commit_keeps_what_a_newer_write_needs_and_nothing_it_released(tmp_path):
    """commit_all runs after the lock: a newer writer may have begun (here: a write back to the
    file before), so the late commit neither drops that file's snapshot nor keeps its own."""
    home = _home(tmp_path)
    journal = home.journal
    before, mine = "alpha", "alpha\n§\nbeta"
    journal.append(
        "memory", "seen", "memory", actor="external", snapshot=before, detail={"file_sha": content_hash(before)}
    )
    [late] = journal.begin_all(
        "memory",
        "memory",
        [{"action": "add", "after": "beta", "detail": {"file_sha": content_hash(mine)}}],
        actor="user",
    )
    [newer] = journal.begin_all(
        "memory",
        "memory",
        [{"action": "remove", "before": "beta", "detail": {"file_sha": content_hash(before)}}],
        actor="user",
    )
    journal.commit_all([late], snapshot=mine, release=(content_hash(before),))
    assert journal.get(late).status == "done" and journal.get(newer).status == "pending"
    assert _files(home) == [content_hash(before)]
    journal.commit_all([newer], snapshot=before, release=(content_hash(mine),))
    assert _files(home) == [content_hash(before)]
    journal.commit_all([late])  # committing again (the next writer settled it first) changes nothing
    assert journal.get(late).status == "done"


def test_a_lone_surrogate_in_a_hand_made_record_is_journaled_not_a_crash(tmp_path):
    """JSON such as "\\ud800" in a pending record decodes to text SQLite cannot store as UTF-8
    (found by the file fuzz: `pending approve` exited 70). The detail keeps it exactly, escaped;
    the display columns show U+FFFD."""
    home = open_home(tmp_path / "home", clock=FixedClock(1796040000.0))
    journal = home.journal
    row = journal.append(
        "approvals", "approve", "0fd46b3b", actor="user", before="bad \ud800 summary", detail={"action": "\ud800"}
    )
    entry = journal.get(row)
    assert entry.detail == {"action": "\ud800"}
    assert entry.before == "bad \ufffd summary"
    pending = journal.begin("approvals", "approve", "x", actor="user", detail={"summary": "\udfff"})
    journal.commit(pending, after="\udc80", detail={"summary": "\udfff", "done": True})
    assert journal.get(pending).detail == {"summary": "\udfff", "done": True}
    assert journal.get(pending).after == "\ufffd"
    odd = journal.append("approvals", "stage", "y", actor="user", session_id=True, before=None)  # not text: as before
    assert journal.get(odd).session_id == "1"  # read back as text, as the column is
    home.close()


def test_a_file_saved_with_crlf_keeps_every_entry_and_its_writer(tmp_path):
    """An editor saving CRLF changes no entry as a person (and Hermes) reads it: nothing is journaled,
    so no entry is reported removed, and after the line endings are normalised each entry still
    names who wrote it."""
    home = _home(tmp_path)
    home.memory.add("memory", "user entry one", ToolContext(actor="user"))
    home.memory.add("memory", "agent entry", ToolContext(actor="agent", session_id="s-1", message_id=3))
    path = home.memory.path("memory")
    rows = len(home.memory.history("memory", limit=50))
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    home.memory.record_external_change("memory")
    assert len(home.memory.history("memory", limit=50)) == rows
    assert FIXES["memory-line-endings"](home).startswith("Normalised line endings of MEMORY.md")
    origins = history.origins(home.memory, "memory", home.memory.entries("memory"))
    assert [(o.actor, o.session_id) for o in origins] == [("user", None), ("agent", "s-1")]
    path.write_text(path.read_text(encoding="utf-8").replace("\n", "\r\n") + "\r\n§\r\nadded in an editor")
    home.memory.record_external_change("memory")
    assert _external(home) == {("add", None, "added in an editor")}


def _journal_reads(home, write) -> list[str]:
    """The SELECTs ``write()`` makes on this thread's workbench.db connection."""
    statements: list[str] = []
    conn = home.journal.connection()
    conn.set_trace_callback(statements.append)
    try:
        write()
    finally:
        conn.set_trace_callback(None)
    return [s for s in statements if s.lstrip().upper().startswith("SELECT")]


def test_a_write_after_this_process_s_own_reads_nothing_the_journal_already_told_it(tmp_path):
    """Once a process has written a store, and nothing has written workbench.db since, its next write
    of that store finds no pending rows and its own file as the last one left without asking SQLite;
    any other write in between, here or in another process, makes it read both again, in one SELECT."""
    home = _home(tmp_path)
    ctx = ToolContext(actor="user")
    assert home.memory.add("memory", "first", ctx)["success"]
    assert _journal_reads(home, lambda: home.memory.add("memory", "second", ctx)) == []
    assert _journal_reads(home, lambda: home.memory.add("memory", "third", ctx)) == []
    home.memory.add("user", "prefers tea", ctx)  # the same connection wrote: the next write reads again
    assert len(_journal_reads(home, lambda: home.memory.add("memory", "fourth", ctx))) == 1
    other = _home(tmp_path)
    assert other.memory.add("memory", "from another connection", ctx)["success"]
    other.close()
    assert len(_journal_reads(home, lambda: home.memory.add("memory", "fifth", ctx))) == 1
    assert _journal_reads(home, lambda: home.memory.add("memory", "sixth", ctx)) == []
    path = home.memory.path("memory")
    path.write_text(path.read_text().replace("third", "third, edited"))  # the file, not the journal
    assert home.memory.add("memory", "seventh", ctx)["success"]
    external = [(r.action, r.before, r.after) for r in home.memory.history("memory", limit=20) if r.actor == "external"]
    assert external == [("replace", "third", "third, edited")]
    assert home.memory.entries("memory") == [
        "first",
        "second",
        "third, edited",
        "fourth",
        "from another connection",
        "fifth",
        "sixth",
        "seventh",
    ]
    assert_files_rebuild(home)
    home.close()


def test_a_write_commits_its_rows_after_the_rename_in_one_statement(tmp_path):
    """The commit after the rename is a single UPDATE in its own transaction when it keeps and
    releases no snapshot; a write that keeps one still does all of it in one transaction."""
    home = _home(tmp_path)
    ctx = ToolContext(actor="user")
    statements: list[str] = []
    conn = home.journal.connection()
    assert home.memory.add("memory", "first", ctx)["success"]
    conn.set_trace_callback(statements.append)
    assert home.memory.add("memory", "second", ctx)["success"]
    traced = [s.split(" (")[0].split(" WHERE")[0] for s in statements]
    # (SQLite's trace says an UPDATE again as it enters the journal's trigger, whose WHEN then writes nothing)
    assert [s for i, s in enumerate(traced) if not i or s != traced[i - 1]] == [
        "BEGIN IMMEDIATE",
        "PRAGMA data_version",
        "INSERT INTO journal",
        "COMMIT",
        "UPDATE journal SET status = 'done'",
    ]
    for i in range(SNAPSHOT_EVERY):  # up to the write that keeps its file
        statements.clear()
        assert home.memory.add("memory", f"fact {i}", ctx)["success"]
    assert statements[-1] == "COMMIT" and any(s.startswith("INSERT OR IGNORE INTO journal_files") for s in statements)
    conn.set_trace_callback(None)
    rows = home.journal.query(subsystem="memory", limit=100, include_pending=True)
    assert {r.status for r in rows} == {"done"}
    assert_files_rebuild(home)
    home.close()


def test_workbench_db_is_checkpointed_after_the_memory_lock_and_its_wal_stays_bounded(tmp_path, monkeypatch):
    """SQLite's own checkpoint would copy the WAL into workbench.db inside a commit about every 130 adds,
    with the memory file's lock held (every other writer waiting); it runs once the lock is let go
    instead, and the WAL still never grows far past SQLite's usual 1,000 pages. In WAL mode only a
    checkpoint writes the database file itself, so its bytes are compared as each lock is taken and let go."""
    import contextlib

    import engine.memory.store as store_module

    root = tmp_path / "h"
    root.mkdir()
    (root / "config.yaml").write_text("memory:\n  memory_char_limit: 1000000\n")
    home = open_home(root, clock=FixedClock(1796040000.0))
    ctx = ToolContext(actor="user")
    assert home.memory.add("memory", "first", ctx)["success"]
    db, wal = root / "workbench.db", root / "workbench.db-wal"
    locked_writes: list[int] = []
    real_lock = store_module.file_lock

    @contextlib.contextmanager
    def watched_lock(path):
        with real_lock(path):
            taken = db.read_bytes()
            yield
            if db.read_bytes() != taken:
                locked_writes.append(len(taken))

    monkeypatch.setattr(store_module, "file_lock", watched_lock)
    size, wal_sizes = db.stat().st_size, []
    for i in range(320):
        fact = f"Fact {i:04d}: the deploy target for service {i} is staging-{i % 7}, owned by team {i % 5}"
        assert home.memory.add("memory", fact, ctx)["success"]
        wal_sizes.append(wal.stat().st_size)
    assert locked_writes == []
    assert db.stat().st_size > size  # checkpoints ran (after the lock)
    assert max(wal_sizes) < home.journal.WAL_CHECKPOINT_BYTES + (1 << 20)
    assert len(home.memory.entries("memory")) == 321
    assert_files_rebuild(home)
    home.close()


def test_a_process_keeping_a_snapshot_on_its_own_writes_reads_no_rows_back(tmp_path):
    """A write that keeps a snapshot releases the one the file was rebuilt from. When this process's
    own writes made the chain since that snapshot (nothing else wrote workbench.db), it knows which
    one that is and reads none of the chain's rows back for it; after another connection's write it
    reads them, and either way exactly the snapshots the files rebuild from are kept."""
    home, other = _home(tmp_path), open_home(tmp_path / "h")
    ctx = ToolContext(actor="user")
    assert home.memory.add("user", "a user fact", ctx)["success"]
    statements: list[str] = []
    home.journal.connection().set_trace_callback(statements.append)

    def keeping_write(fact: str) -> list[str]:
        statements.clear()
        assert home.memory.add("memory", fact, ctx)["success"]
        return list(statements) if any("INTO journal_files" in s for s in statements) else []

    kept = [s for i in range(2 * SNAPSHOT_EVERY + 3) if (s := keeping_write(f"fact {i}"))]
    assert len(kept) == 3  # the first write and each one SNAPSHOT_EVERY writes after the one before
    for written in kept:
        assert not any(s.startswith("SELECT detail, before, after FROM journal") for s in written), written
    assert_files_rebuild(home)
    assert len(kept_snapshots(home)) == 2  # one for each file

    assert other.memory.add("memory", "from another connection", ctx)["success"]
    later = [s for i in range(SNAPSHOT_EVERY + 1) if (s := keeping_write(f"later fact {i}"))]
    assert len(later) == 1 and any(s.startswith("SELECT detail, before, after FROM journal") for s in later[0])
    assert_files_rebuild(home)
    assert len(kept_snapshots(home)) == 2
    other.close()
    home.close()
