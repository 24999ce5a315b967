"""A backup copied over a database (``cp backup.db workbench.db``) while the old file's -wal stays beside it.

SQLite does not tell a -wal from another copy of the database: nothing in the -wal names the file it
belongs to, so its pages are read over whatever file stands beside it, and the next checkpoint copies them
in for good. These tests show that with SQLite's real behaviour, then what doctor and our writes do.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from engine import open_home
from engine.db import DatabaseDamaged
from engine.errors import WorkbenchError
from engine.tools import ToolContext
from tests.cli_support import ran
from tests.hermes_support import workbench_cmd

# The workbench journaling in a process that dies before it closes (killed, the machine off): its last
# changes stay in workbench.db-wal, not yet copied into the file.
JOURNAL_THEN_DIE = """
import os, sys
from engine import open_home
home = open_home(sys.argv[1])
for n in range(int(sys.argv[2])):
    home.journal.append("memory", "add", "memory", actor="user", after=f"late note {n}")
os._exit(0)
"""

HERMES_WRITES = """
import os
from hermes_state import SessionDB
db = SessionDB()
db._conn.execute("PRAGMA wal_autocheckpoint=0")
db.create_session(first, "cli")
for n in range(count):
    db.append_message(first, "user", f"note {n} of {first} about the billing rollout " + "x" * 200)
if last == "die":
    os._exit(0)  # as a process killed mid-run: no close, so the -wal stays
db._conn.execute("DELETE FROM messages WHERE id % 3 = 0")
db.close()
"""


def _hermes_writes(first: str, count: int, last: str) -> str:
    """Hermes storing session ``first`` with ``count`` messages, then closing (``last``: "close") or dying."""
    return f"first, count, last = {first!r}, {count}, {last!r}" + HERMES_WRITES


def _digest(*paths: Path) -> list[str | None]:
    return [hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else None for p in paths]


def _rows(path: Path, sql: str, uri: str = "mode=ro") -> list:
    with contextlib.closing(sqlite3.connect(f"file:{path}?{uri}", uri=True)) as conn:
        return conn.execute(sql).fetchall()


@pytest.fixture
def journal_restored(tmp_path) -> Path:
    """A home whose workbench.db was put back from a backup by ``cp`` while the -wal of a later state stayed."""
    root = tmp_path / "home"
    home = open_home(root, create=True)
    home.memory.add("memory", "Kept in the backup", ToolContext(actor="user"))
    home.archive.create_session("s", source="cli")
    home.archive.append_message("s", "user", "部署完成了")
    assert home.archive.search("部署")  # (the CJK search index is kept in workbench.db)
    home.close()
    shutil.copyfile(root / "workbench.db", tmp_path / "backup.db")  # (closed: the whole journal is in the file)
    home = open_home(root)
    for n in range(300):  # the file moves on past the backup: new pages, copied in at close
        home.journal.append("memory", "add", "memory", actor="user", after=f"note {n} " + "x" * 300)
    home.close()
    subprocess.run([sys.executable, "-c", JOURNAL_THEN_DIE, str(root), "20"], check=True)
    assert (root / "workbench.db-wal").stat().st_size > 0
    shutil.copyfile(tmp_path / "backup.db", root / "workbench.db")  # cp backup.db workbench.db
    return root


def test_sqlite_reads_the_old_wal_over_the_restored_journal(journal_restored):
    """What SQLite itself does: the file alone is the sound backup, but any reader gets the -wal's pages
    over it, pages of a later state of the journal that point at pages the backup does not have."""
    db = journal_restored / "workbench.db"
    assert _rows(db, "PRAGMA quick_check", "immutable=1") == [("ok",)]  # the file alone (the -wal not read)
    assert _rows(db, "SELECT count(*) FROM journal", "immutable=1") == [(1,)]
    with pytest.raises(sqlite3.DatabaseError, match="malformed"):
        _rows(db, "PRAGMA integrity_check")


# A process that writes and dies before it closes: every page it changed stays in the -wal.
WRITE_THEN_DIE = """
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA wal_autocheckpoint=0")
conn.execute("INSERT INTO notes VALUES ('written after the backup')")
os._exit(0)
"""


@pytest.mark.parametrize("page_size", [4096, 1024])
def test_sqlite_reads_the_old_wal_over_a_restored_copy_of_any_page_size(tmp_path, page_size):
    """The other cases, with SQLite alone: a -wal that holds every page it changed (its file never copied
    into since) makes an older copy put back with the same page size read as the later state, the restore
    undone without a word of damage (doctor cannot see it either); a -wal of 4096-byte pages is read over a
    file of 1024-byte pages just the same, as damage."""
    db = tmp_path / "notes.db"
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as conn:
        conn.execute(f"PRAGMA page_size={page_size}")
        conn.execute("CREATE TABLE notes (body TEXT)")
        conn.execute("INSERT INTO notes VALUES ('in the backup')")
    shutil.copyfile(db, tmp_path / "backup.db")
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as conn:
        conn.execute("PRAGMA page_size=4096")
        conn.execute("VACUUM")  # (the live file's pages are 4096 bytes from here on)
        conn.execute("PRAGMA journal_mode=WAL")
    subprocess.run([sys.executable, "-c", WRITE_THEN_DIE, str(db)], check=True)
    shutil.copyfile(tmp_path / "backup.db", db)  # cp backup.db notes.db
    assert _rows(db, "SELECT body FROM notes", "immutable=1") == [("in the backup",)]  # the file alone
    if page_size == 4096:  # the later state, whole: nothing tells it from the file's own
        assert _rows(db, "SELECT body FROM notes") == [("in the backup",), ("written after the backup",)]
        assert _rows(db, "PRAGMA integrity_check") == [("ok",)]
    else:  # the -wal's 4096-byte pages read into a file of 1024-byte pages: rows of nothing, a damaged page
        assert _rows(db, "SELECT body FROM notes") == [(None,), (None,)]
        assert "corruption" in _rows(db, "PRAGMA integrity_check")[0][0]


def test_doctor_says_the_wal_is_not_the_restored_file_s_and_changes_nothing(journal_restored):
    files = [journal_restored / name for name in ("workbench.db", "workbench.db-wal")]
    before = _digest(*files)
    status, out, err = ran("--home", str(journal_restored), "doctor")
    assert status == 1 and "Traceback" not in out + err
    assert "workbench.db alone is sound, but read with workbench.db-wal beside it" in out
    assert "move workbench.db-wal and workbench.db-shm aside" in out
    assert _digest(*files) == before


def test_damage_in_the_file_itself_is_not_blamed_on_its_own_wal(tmp_path):
    """An index of workbench.db that no longer matches its table (damage in the file, which quick_check does
    not look for), with the file's own -wal beside it: doctor named the -wal foreign (the file alone passed
    a lighter check than the one that failed) and told the user to move aside the journal's latest rows."""
    root = tmp_path / "home"
    home = open_home(root, create=True)
    home.memory.add("memory", "Kept", ToolContext(actor="user"))
    home.close()
    with contextlib.closing(sqlite3.connect(root / "workbench.db", isolation_level=None)) as conn:
        conn.execute("PRAGMA writable_schema=ON")  # the index's entries no longer the ones its definition gives
        conn.execute(
            "UPDATE sqlite_master SET sql = 'CREATE INDEX idx_journal_target ON journal(id, subsystem, target)' "
            "WHERE name = 'idx_journal_target'"
        )
    assert "missing from index" in _rows(root / "workbench.db", "PRAGMA integrity_check")[0][0]
    subprocess.run([sys.executable, "-c", JOURNAL_THEN_DIE, str(root), "5"], check=True)  # its own -wal
    status, out, err = ran("--home", str(root), "doctor")
    assert status == 1 and "Traceback" not in out + err
    assert "workbench.db: integrity_check reports" in out and "alone is sound" not in out


def test_a_write_to_the_mixed_journal_is_refused_and_changes_nothing(journal_restored):
    files = [journal_restored / name for name in ("workbench.db", "workbench.db-wal")]
    before = _digest(*files)
    home = open_home(journal_restored)
    try:
        with pytest.raises(WorkbenchError, match="workbench.db"):
            home.memory.add("memory", "Written after the restore", ToolContext(actor="user"))
        with pytest.raises(DatabaseDamaged, match="malformed"):  # the journal's own write, once it knows
            home.journal.append("memory", "add", "memory", actor="user", after="Journaled after the restore")
        with pytest.raises(DatabaseDamaged, match="workbench.db"):  # a write of a table the damage spared
            with home.journal.transaction() as conn:  # (another part's: the skills' look keeps its own)
                conn.execute("CREATE TABLE spared (v)")
    finally:
        home.close()
    assert _digest(*files) == before


@pytest.mark.parametrize("command", [["timeline"], ["memory", "show"], ["memory", "add", "After the restore"]])
def test_a_command_that_meets_the_mixed_journal_leaves_its_files_as_they_are(journal_restored, command):
    """Each a process of its own, closing as the CLI does (at exit): what it meets says the journal is damaged,
    and no write of another part (the skills' look, kept in workbench.db) goes in after it."""
    files = [journal_restored / name for name in ("workbench.db", "workbench.db-wal")]
    before = _digest(*files)
    done = subprocess.run(workbench_cmd("--home", str(journal_restored), *command), capture_output=True, text=True)
    assert "Traceback" not in done.stdout + done.stderr
    assert "workbench.db could not be read" in done.stdout + done.stderr
    assert _digest(*files) == before


def test_the_search_index_in_the_mixed_journal_is_left_as_it_is(journal_restored):
    """The CJK search index lives in workbench.db on connections of its own: a search after a journal call met
    the damage wrote the index into it, and a connection of its, closed after the journal's, copied the -wal
    into the file and deleted it (the changes doctor says to keep)."""
    files = [journal_restored / name for name in ("workbench.db", "workbench.db-wal")]
    before = _digest(*files)
    home = open_home(journal_restored)
    try:
        assert [hit.session_id for hit in home.archive.search("部署")] == ["s"]  # its connection, before
        with pytest.raises(WorkbenchError, match="workbench.db"):
            home.memory.add("memory", "Written after the restore", ToolContext(actor="user"))
        home.archive.append_message("s", "user", "回滚计划已经准备好")
        assert [hit.session_id for hit in home.archive.search("回滚")] == ["s"]  # (scanned: no index)
    finally:
        home.close()
    assert _digest(*files) == before


def test_doctor_finds_hermes_s_old_wal_beside_a_restored_state_db(hermes, tmp_path):
    root = tmp_path / "home"
    root.mkdir()
    hermes.run(root, _hermes_writes("s1", 40, "close"))
    shutil.copyfile(root / "state.db", tmp_path / "backup.db")
    hermes.run(root, _hermes_writes("s2", 200, "close"))  # the file moves on past the backup
    hermes.run(root, _hermes_writes("s3", 20, "die"))
    shutil.copyfile(tmp_path / "backup.db", root / "state.db")
    files = [root / name for name in ("state.db", "state.db-wal")]
    before = _digest(*files)
    status, out, err = ran("--home", str(root), "doctor")
    assert status == 1 and "Traceback" not in out + err
    assert "state.db alone is sound, but read with state.db-wal beside it" in out
    assert _digest(*files) == before
