"""A backup of state.db renamed over it while this process runs (a user's restore, a sync tool, Hermes writing
a new file and renaming it into place).

Every thread's connection stayed on the file it opened. Its reads showed the old archive for as long as the
thread lived (a pool thread of the TUI: for good). Its writes were worse than lost: the -wal and -shm beside
the path are the new file's now, so a page the old connection changed, read from the old file, went into the
new file's WAL and replaced that page of the restored archive (the old file's rows spliced into the backup).
"""

from __future__ import annotations

import contextlib
import sqlite3
from concurrent.futures import ThreadPoolExecutor

import pytest

from engine.archive.merges import segments
from engine.errors import WorkbenchError
from engine.models import OfflineModel
from engine.runner import AgentSession
from tests.archive_support import copy_database, old_workbench_archive, restore_in_another_process


def _on_disk(path) -> tuple[list[str], list[str], list[str]]:
    """The sessions' titles, the messages and SQLite's check of ``path``, as a fresh reader sees them."""
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        return (
            [row[0] for row in conn.execute("SELECT title FROM sessions ORDER BY started_at")],
            [row[0] for row in conn.execute("SELECT content FROM messages ORDER BY id")],
            [row[0] for row in conn.execute("PRAGMA integrity_check")],
        )


@pytest.fixture
def backup(home, tmp_path, clock):
    """A backup taken after one session, then a session the backup does not hold: the file to restore."""
    home.archive.create_session("kept", source="cli", title="Kept in the backup")
    home.archive.append_message("kept", "user", "Said before the backup")
    copy = tmp_path / "backup.db"
    copy_database(home.state_db_path, copy)
    clock.advance(60)
    home.archive.create_session("gone", source="cli", title="Written after the backup")
    home.archive.append_message("gone", "user", "Said after the backup")
    return copy


def test_a_pool_thread_reads_and_searches_the_restored_archive(home, backup):
    titles = lambda: [s.title for s in home.archive.list_sessions()]  # noqa: E731
    with ThreadPoolExecutor(max_workers=1) as pool:  # a pool thread that read before, idle meanwhile
        assert pool.submit(titles).result() == ["Written after the backup", "Kept in the backup"]
        restore_in_another_process(backup, home.state_db_path)
        assert pool.submit(titles).result() == ["Kept in the backup"]
        assert pool.submit(home.archive.messages, "kept").result()[0].content == "Said before the backup"
        found = pool.submit(home.archive.search, "said").result()
        assert [hit.session_id for hit in found] == ["kept"]


WRITES = {
    "a turn": lambda archive: archive.append_message("kept", "assistant", "Said after the restore"),
    "a title": lambda archive: archive.set_title("kept", "Retitled after the restore"),
}


@pytest.mark.parametrize("write", WRITES)
def test_a_write_after_the_restore_goes_into_the_restored_file_alone(home, backup, write):
    restore_in_another_process(backup, home.state_db_path)
    WRITES[write](home.archive)  # on this thread's connection, opened before the restore
    titles, messages, check = _on_disk(home.state_db_path)
    assert check == ["ok"]
    assert "Written after the backup" not in titles and "Said after the backup" not in messages  # nothing spliced
    if write == "a turn":
        assert (titles, messages) == (["Kept in the backup"], ["Said before the backup", "Said after the restore"])
    else:
        assert (titles, messages) == (["Retitled after the restore"], ["Said before the backup"])


def test_idle_merges_after_the_restore_merge_the_restored_file(home, tmp_path):
    """The idle upkeep's merge steps write on the archive's connection: into the restored file's index."""
    home.archive.create_session("s", source="cli", model="m")
    home.archive.conn().execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('automerge', 0)")
    for i in range(12):  # one segment per transaction
        home.archive.append_messages("s", [{"role": "user", "content": f"deploy step {i} word{j}"} for j in range(20)])
    backup = tmp_path / "backup.db"
    copy_database(home.state_db_path, backup)
    home.archive.upkeep(budget_s=5.0)  # the old file merged: its index pages differ from the backup's
    restore_in_another_process(backup, home.state_db_path)
    with contextlib.closing(sqlite3.connect(home.state_db_path)) as fresh:
        split = segments(fresh, "messages_fts")
    assert split is not None and split > 1
    assert home.archive.upkeep(budget_s=5.0).get("messages_fts")
    with contextlib.closing(sqlite3.connect(home.state_db_path)) as fresh:
        assert segments(fresh, "messages_fts") < split
        assert [row[0] for row in fresh.execute("PRAGMA integrity_check")] == ["ok"]
        assert fresh.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'deploy'").fetchone()[0] == 240


def test_the_background_checkpoint_copies_into_the_restored_file(home, backup, tmp_path):
    """The WAL checkpoint thread's connection is the restored file's too: what it copies lands in that file,
    not in the old one (whose copy marked the new file's frames as copied, and the next WAL restart dropped
    them)."""
    checkpoints = home.archive._checkpoints
    assert checkpoints is not None
    for i in range(checkpoints.EVERY):  # the thread's connection opened on the old file
        home.archive.append_message("kept", "user", f"Before the restore {i}")
    assert checkpoints.settle()
    restore_in_another_process(backup, home.state_db_path)
    said = [f"After the restore {i}" for i in range(checkpoints.EVERY)]
    for text in said:  # (the thread is woken once in every EVERY writes: at least once among these)
        home.archive.append_message("kept", "assistant", text)
    assert checkpoints.settle()
    alone = tmp_path / "file-alone.db"  # the file's own pages, without the WAL beside it
    alone.write_bytes(home.state_db_path.read_bytes())
    _, messages, check = _on_disk(alone)
    assert check == ["ok"]
    assert messages[0] == "Said before the backup" and len(messages) > 1
    assert messages[1:] == said[: len(messages) - 1]  # the writes up to the checkpoint's wake, in the file


def test_a_file_put_in_place_that_is_no_archive_is_refused_and_left_as_it_is(home, tmp_path):
    """Another program's database renamed to state.db: looked at read-only before any thread connects to it,
    as opening looks, so no write and no setting of ours (WAL mode) touches it."""
    home.archive.create_session("kept", source="cli", title="Kept")
    other = tmp_path / "other.db"
    with contextlib.closing(sqlite3.connect(other)) as conn:  # (rollback journal: opening it for WAL writes)
        conn.execute("CREATE TABLE notes (body TEXT)")
        conn.execute("INSERT INTO notes VALUES ('not an archive')")
        conn.commit()
    before = other.read_bytes()
    restore_in_another_process(other, home.state_db_path)
    with pytest.raises(WorkbenchError, match="not a session archive .* It was not modified"):
        home.archive.append_message("kept", "user", "Said after the swap")
    with pytest.raises(WorkbenchError, match="not a session archive"):
        home.archive.list_sessions()
    assert home.state_db_path.read_bytes() == before


def test_the_runner_s_next_turn_goes_into_the_restored_archive(home, tmp_path):
    """A `workbench run` session going on across a restore: its next turn is stored in the restored file, after
    the messages the backup holds, and the turn the restore undid is not written back."""
    session = AgentSession(home, OfflineModel())
    try:
        session.run_turn("First question, kept in the backup")
        backup = tmp_path / "backup.db"
        copy_database(home.state_db_path, backup)
        session.run_turn("Second question, after the backup")
        restore_in_another_process(backup, home.state_db_path)
        session.run_turn("Third question, after the restore")
    finally:
        session.close()
    with contextlib.closing(sqlite3.connect(f"file:{home.state_db_path}?mode=ro", uri=True)) as conn:
        users = [row[0] for row in conn.execute("SELECT content FROM messages WHERE role = 'user' ORDER BY id")]
        assert [row[0] for row in conn.execute("PRAGMA integrity_check")] == ["ok"]
    assert users == ["First question, kept in the backup", "Third question, after the restore"]


FIRST_CALLS = {  # each read the layout before it had its connection: the old file's
    "a turn": lambda archive: archive.append_message("old_0", "user", "Said after the restore: 数据库迁移"),
    "a listing": lambda archive: archive.list_sessions(),
}


@pytest.mark.parametrize("first", FIRST_CALLS)
def test_a_backup_of_an_older_layout_is_read_and_written_as_it_is(home, tmp_path, first):
    """A backup from before the layout gained the trigram table, messages.api_content and sessions.archived:
    the first call after the restore already uses that file's layout (it built its statement from the old
    file's, naming a table or column the restored file lacks), and so does every call after it."""
    home.archive.create_session("new", source="cli", title="Written with the complete layout")
    old = old_workbench_archive(tmp_path / "old", sessions=1, per_session=6) / "state.db"
    with contextlib.closing(sqlite3.connect(old)) as conn:
        conn.execute("ALTER TABLE sessions DROP COLUMN archived")
    restore_in_another_process(old, home.state_db_path)
    FIRST_CALLS[first](home.archive)
    assert not home.archive.caps.trigram and not home.archive.caps.has("sessions", "archived")
    home.archive.append_message("old_0", "user", "Said after the restore about the rollback")
    assert [hit.session_id for hit in home.archive.search("rollback")] == ["old_0"]
    assert {hit.session_id for hit in home.archive.search("数据库迁移")} == {"old_0"}
    assert [s.id for s in home.archive.list_sessions()] == ["old_0"]
    _, messages, check = _on_disk(home.state_db_path)
    assert check == ["ok"] and messages[-1] == "Said after the restore about the rollback"


@pytest.mark.parametrize("put", ["an empty file", "no file"])
def test_an_archive_emptied_in_its_place_is_made_as_opening_makes_one(home, tmp_path, put):
    """state.db replaced by an empty file (a reset), or deleted with a thread yet to connect: every call
    failed with SQLite's "no such table: sessions" until the workbench restarted; opening makes Hermes's
    layout in such a file, and so does the look at it."""
    home.archive.create_session("old", source="cli", title="Before the reset")
    empty = tmp_path / "empty.db"
    empty.touch()
    restore_in_another_process(empty, home.state_db_path)
    if put == "no file":
        home.state_db_path.unlink()
    with ThreadPoolExecutor(max_workers=1) as pool:  # a thread with no connection yet
        assert pool.submit(home.archive.list_sessions).result() == []
    assert home.archive.list_sessions() == []
    home.archive.create_session("new", source="cli", title="After the reset")
    titles, _, check = _on_disk(home.state_db_path)
    assert check == ["ok"] and titles == ["After the reset"]
