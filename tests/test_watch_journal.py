"""The watcher's look at workbench.db counts the commits that change the journal, whoever makes them,
and not the index upkeep's beside them (which reloaded the Memory screen's entry history every 2 s)."""

from __future__ import annotations

import contextlib
import sqlite3

from engine import open_home
from engine.journal import CHANGES
from workbench.watch import _Commits


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
