"""The watcher's looks leave out the index upkeep's own commits, which reloaded the Memory screen's entry
history and the Sessions screen's tree every 2 s: at workbench.db it counts the commits that change the
journal, whoever makes them; at state.db the merges tell it of theirs (``CommitWitness``)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys

from engine import open_home
from engine.archive import upkeep
from engine.journal import CHANGES
from tests.archive_support import copy_database, retitle_in_another_process
from workbench.watch import SESSION_FILES, _Commits, _FileStamps


def _messages(home, count: int) -> None:
    home.archive.create_session("cjk", source="cli", model="m")
    home.archive.append_messages("cjk", [{"role": "user", "content": f"記憶の索引 {i} 番目"} for i in range(count)])


def test_the_index_upkeep_commits_no_journal_change_and_every_journal_write_does(home, wb):
    home.memory.add("memory", "CI has 2 cores")
    _messages(home, 40)
    path = home.journal.path
    every, journal = _Commits(path), _Commits(path, CHANGES)
    try:
        before, counted = every.count(), journal.count()
        assert home.archive.bigram_index.refresh() > 0  # the CJK index, written to workbench.db
        assert every.count() != before, "the upkeep did commit to workbench.db"
        assert journal.count() == counted

        assert wb("memory", "add", "Deploys run make deploy").returncode == 0  # another process's write
        assert journal.count() != counted
        counted = journal.count()

        pending = home.journal.begin("memory", "add", "memory", actor="user", after="x")
        assert journal.count() != counted  # a row begun
        counted = journal.count()
        home.journal.commit(pending)
        assert journal.count() != counted  # and settled
        counted = journal.count()

        with contextlib.closing(sqlite3.connect(path)) as other, other:  # a credit: a done row rewritten
            other.execute("UPDATE journal SET actor = 'agent', session_id = 's1' WHERE id = 1")
        assert journal.count() != counted
        counted = journal.count()
        with contextlib.closing(sqlite3.connect(path)) as other, other:
            other.execute("DELETE FROM journal WHERE id = 1")
        assert journal.count() != counted
    finally:
        every.close()
        journal.close()


def test_a_journal_without_the_counter_counts_each_commit(tmp_path):
    """A workbench.db an older version made (no trigger yet): nothing is missed."""
    path = tmp_path / "workbench.db"
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("CREATE TABLE journal (id INTEGER PRIMARY KEY AUTOINCREMENT, status TEXT)")
    journal = _Commits(path, CHANGES)
    try:
        counted = journal.count()
        assert counted is not None
        with contextlib.closing(sqlite3.connect(path)) as conn, conn:
            conn.execute("CREATE TABLE other (x)")
        assert journal.count() != counted
    finally:
        journal.close()


def test_a_workbench_db_created_after_the_watch_began_is_counted(tmp_path, clock):
    path = tmp_path / "workbench.db"
    journal = _Commits(path, CHANGES)
    try:
        assert journal.count() is None
        home = open_home(tmp_path, clock=clock)
        try:
            home.memory.add("memory", "First note")
            counted = journal.count()
            assert counted is not None
            home.memory.add("memory", "Second note")
            assert journal.count() != counted
        finally:
            home.close()
    finally:
        journal.close()


def _fragmented(home) -> None:
    """A state.db whose message index the upkeep has merges to do: one segment per transaction."""
    home.archive.create_session("s", source="cli", model="m")
    home.archive.conn().execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('automerge', 0)")
    for i in range(12):
        home.archive.append_messages("s", [{"role": "user", "content": f"deploy step {i} word{j}"} for j in range(20)])


def _sessions_stamps(home) -> _FileStamps:
    return _FileStamps([home.root / name for name in sorted(SESSION_FILES)], database=home.state_db_path)


def test_the_merges_of_state_db_are_left_out_and_another_process_s_change_is_not(home):
    _fragmented(home)
    home.archive.bigram_index.refresh()  # (workbench.db's own index: only state.db's merges are left)
    every, stamps = _Commits(home.state_db_path), _sessions_stamps(home)
    try:
        before = every.count()
        steps = home.archive.upkeep(budget_s=1.0, witness=stamps)
        assert steps.get("messages_fts"), steps
        assert every.count() != before, "the merges did commit to state.db"
        assert stamps.changed() is False
        retitle_in_another_process(home.state_db_path)
        assert stamps.changed() is True
    finally:
        every.close()
        stamps.close()


def test_the_archive_s_checkpoint_of_state_db_is_no_change_and_the_next_commit_is(home):
    """The archive's thread copies the WAL into state.db every ``Checkpointer.EVERY`` writes: a checkpoint
    changes the file's size and mtime but no data, and the watcher reported it, one extra Sessions reload
    per 40 writes of a turn."""
    home.archive.create_session("s", source="cli", model="m")
    stamps = _sessions_stamps(home)
    try:
        before = home.state_db_path.stat()
        checkpoints = home.archive._checkpoints
        for i in range(checkpoints.EVERY):  # (each a write of its own, as a turn's messages are)
            home.archive.append_messages("s", [{"role": "user", "content": f"step {i}"}])
        assert stamps.changed() is True  # the writes
        assert checkpoints.settle() and checkpoints.checkpoints >= 1
        after = home.state_db_path.stat()
        assert (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns), "the copy wrote state.db"
        assert stamps.changed() is False
        retitle_in_another_process(home.state_db_path)
        assert stamps.changed() is True
    finally:
        stamps.close()


def _merged_by_hand(conn, stamps) -> tuple:
    """One merge step as the upkeep makes it, the watcher asked before it writes: what ``_alone_since`` takes."""
    conn.execute("BEGIN IMMEDIATE")
    version, seen = conn.execute("PRAGMA data_version").fetchone()[0], stamps.before()
    assert seen is not None
    conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('merge', 8)")
    conn.execute("COMMIT")
    return version, seen


def test_a_commit_after_the_merge_s_is_reported(home):
    """Another connection's commit between the merge's and the watcher's next look is never taken for the
    merge's own: the merge's connection sees it under the write lock, and nothing is left out. The watcher's
    looks wait until the merge tells, then report it once."""
    _fragmented(home)
    stamps = _sessions_stamps(home)
    conn = home.archive.conn()
    try:
        version, seen = _merged_by_hand(conn, stamps)
        retitle_in_another_process(home.state_db_path)
        assert stamps.changed() is False  # held: the merge has not told yet
        upkeep._alone_since(conn, (version, seen), stamps)
        assert stamps.changed() is True
        assert stamps.changed() is False
    finally:
        stamps.close()


def test_a_state_db_put_in_its_place_after_the_merge_s_commit_is_reported(home, tmp_path):
    """The merge's connection stays on the file it opened, whose data_version no other writer moves once
    another file is put in its place (a backup restored): that file is not the merge's to leave out."""
    _fragmented(home)
    stamps = _sessions_stamps(home)
    conn = home.archive.conn()
    restored = home.root / "restored.db"
    copy_database(home.state_db_path, restored)
    try:
        version, seen = _merged_by_hand(conn, stamps)
        os.replace(restored, home.state_db_path)  # (another process's rename: no lock of the old file's held)
        upkeep._alone_since(conn, (version, seen), stamps)
        assert stamps.changed() is True
    finally:
        stamps.close()


class _LookingWitness:
    """The watcher's stamps, with a look of the watcher's between each merge's commit and its ``after``:
    the moment a poll can fall on (the merge has committed, the upkeep has not yet told)."""

    def __init__(self, stamps: _FileStamps):
        self.stamps, self.looks = stamps, []

    def before(self):
        return self.stamps.before()

    def after(self, seen, alone) -> None:
        self.looks.append(self.stamps.changed())
        self.stamps.after(seen, alone)


def test_a_look_between_a_merge_s_commit_and_its_after_reports_nothing(home):
    """A look then took the merge's commit for another process's change: one Sessions tree read more (the
    idle-merge test of the Sessions screen failed now and then on a loaded machine)."""
    _fragmented(home)
    home.archive.bigram_index.refresh()
    stamps = _sessions_stamps(home)
    witness = _LookingWitness(stamps)
    try:
        steps = home.archive.upkeep(budget_s=1.0, witness=witness)
        assert steps.get("messages_fts"), steps
        assert witness.looks and not any(witness.looks)
        assert stamps.changed() is False
        retitle_in_another_process(home.state_db_path)
        assert stamps.changed() is True
    finally:
        stamps.close()


def test_a_merge_that_cannot_tell_whether_it_was_alone_ends_the_hold(home):
    """Another writer holds the lock after the merge's commit: the merge cannot know, so its commit and
    whatever came with it are reported, and the next merge may hold the looks again."""
    _fragmented(home)
    stamps = _sessions_stamps(home)
    conn = home.archive.conn()
    try:
        version, seen = _merged_by_hand(conn, stamps)
        with contextlib.closing(sqlite3.connect(home.state_db_path, isolation_level=None)) as other:
            other.execute("BEGIN IMMEDIATE")
            upkeep._alone_since(conn, (version, seen), stamps)
            other.execute("ROLLBACK")
        assert stamps.changed() is True
        assert stamps.before() is not None
    finally:
        stamps.close()


def test_a_failed_merge_step_ends_the_hold(home, monkeypatch):
    _fragmented(home)
    stamps = _sessions_stamps(home)

    def broken(conn, table):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(upkeep, "_carry", broken)
    try:
        assert upkeep._merge_step(home.archive.conn(), "messages_fts", stamps) == (False, None)
        retitle_in_another_process(home.state_db_path)
        assert stamps.changed() is True
    finally:
        stamps.close()


def test_a_hold_never_ended_stops_holding(home, monkeypatch):
    """A writer that never tells ``after`` (a bug, a thread killed) cannot silence the watcher for good."""
    import workbench.watch

    _fragmented(home)
    stamps = _sessions_stamps(home)
    monkeypatch.setattr(workbench.watch, "HOLD_S", 0.0)  # (as if it had passed)
    try:
        assert stamps.before() is not None
        retitle_in_another_process(home.state_db_path)
        assert stamps.changed() is True
        assert stamps.before() is not None
    finally:
        stamps.close()


def test_a_change_not_yet_reported_is_never_left_out(home):
    _fragmented(home)
    stamps = _sessions_stamps(home)
    try:
        retitle_in_another_process(home.state_db_path)
        home.archive.upkeep(budget_s=1.0, witness=stamps)
        assert stamps.changed() is True
    finally:
        stamps.close()


def test_a_merge_after_the_watch_ended_opens_nothing(home):
    """The upkeep may still hold the watcher's stamps as the watch ends: asking them then reopened the
    watcher's connection to state.db, which nothing closed again."""
    _fragmented(home)
    stamps = _sessions_stamps(home)
    stamps.close()
    home.archive.upkeep(budget_s=1.0, witness=stamps)
    assert stamps.commits._conn is None


def test_a_credit_while_an_older_journal_gains_its_counter_is_counted(tmp_path, clock):
    """A workbench.db an older version made gets the counter and its triggers on this version's first open for
    writing: a credit committed between the two (the watcher looking then) bumped no counter it could see."""
    from engine.journal import Journal

    home = open_home(tmp_path, clock=clock)
    home.memory.add("memory", "First note")
    path = home.journal.path
    home.close()
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:  # (as an older version left it)
        conn.executescript(
            "DROP TRIGGER journal_row_changed; DROP TRIGGER journal_row_deleted; DROP TABLE journal_changes;"
        )
    journal, looked, credited = _Commits(path, CHANGES), [], []

    def credit() -> bool:
        with contextlib.closing(sqlite3.connect(path, timeout=0)) as other:
            try:
                with other:
                    other.execute("UPDATE journal SET actor = 'agent', session_id = 's1' WHERE id = 1")
            except sqlite3.OperationalError:  # (the migration holds the write lock: it comes after)
                return False
        return True

    def between(statement: str) -> None:  # the watcher's look, then another process's credit, before a trigger
        if statement.lstrip().startswith("CREATE TRIGGER") and not looked:
            looked.append(journal.count())
            credited.append(credit())

    try:
        with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as migrating:
            migrating.set_trace_callback(between)
            Journal._ensure_schema(migrating)
        assert looked, "the migration created the triggers"
        if not credited[0]:
            assert credit()
        assert journal.count() != looked[0]
    finally:
        journal.close()


_RETITLE_NOW = (
    "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], timeout=0); "
    "c.execute('UPDATE sessions SET title = ?', ('Turned',)); c.commit()"
)


class _WritingWitness:
    """The watcher's stamps, with another process's commit tried (never waiting) as each ``after`` begins."""

    def __init__(self, stamps: _FileStamps, state_db):
        self.stamps, self.state_db, self.landed = stamps, state_db, []

    def before(self):
        return self.stamps.before()

    def after(self, seen, alone) -> None:
        done = subprocess.run([sys.executable, "-c", _RETITLE_NOW, str(self.state_db)], capture_output=True)
        self.landed.append(done.returncode == 0)
        self.stamps.after(seen, alone)


def test_a_commit_as_the_merge_tells_its_after_is_reported(home):
    """The merge's connection must still hold the write lock while the witness takes what it sees as the
    merge's: a Hermes turn committed once the lock was let go, before the witness looked, was taken for
    the merge's own and never reported (the Sessions tree a turn behind until Hermes's next commit)."""
    _fragmented(home)
    home.archive.bigram_index.refresh()
    stamps = _sessions_stamps(home)
    witness = _WritingWitness(stamps, home.state_db_path)
    try:
        steps = home.archive.upkeep(budget_s=1.0, witness=witness)
        assert steps.get("messages_fts"), steps
        if not any(witness.landed):  # (the lock held: the commit comes once the merges are done)
            retitle_in_another_process(home.state_db_path, "Turned")
        assert stamps.changed() is True
    finally:
        stamps.close()
