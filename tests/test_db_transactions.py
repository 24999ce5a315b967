"""Write transactions nest: an inner one joins the outer commit and undoes only itself on error."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from engine.clock import FixedClock
from engine.db import connect, write_transaction
from engine.errors import WorkbenchError
from engine.journal import Journal

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def conn(tmp_path):
    conn = connect(tmp_path / "t.db")
    conn.execute("CREATE TABLE t (v TEXT)")
    yield conn
    conn.close()


def _values(tmp_path) -> list[str]:
    other = connect(tmp_path / "t.db")  # another connection sees only what was committed
    try:
        return [row[0] for row in other.execute("SELECT v FROM t ORDER BY rowid")]
    finally:
        other.close()


def test_inner_work_commits_with_the_outer_transaction(conn, tmp_path):
    with write_transaction(conn):
        conn.execute("INSERT INTO t VALUES ('outer')")
        with write_transaction(conn):
            conn.execute("INSERT INTO t VALUES ('inner')")
        assert _values(tmp_path) == []  # nothing is committed before the outer commit
    assert _values(tmp_path) == ["outer", "inner"]
    assert not conn.in_transaction


def test_a_failed_inner_part_is_undone_alone(conn, tmp_path):
    with write_transaction(conn):
        conn.execute("INSERT INTO t VALUES ('kept')")
        with pytest.raises(RuntimeError), write_transaction(conn):
            conn.execute("INSERT INTO t VALUES ('undone')")
            raise RuntimeError("inner failure")
        conn.execute("INSERT INTO t VALUES ('after')")
    assert _values(tmp_path) == ["kept", "after"]


def test_a_failed_outer_transaction_undoes_the_inner_work(conn, tmp_path):
    with pytest.raises(RuntimeError), write_transaction(conn):
        with write_transaction(conn):
            conn.execute("INSERT INTO t VALUES ('inner')")
        raise RuntimeError("outer failure")
    assert _values(tmp_path) == []
    assert not conn.in_transaction


def test_a_failed_commit_is_rolled_back_and_the_next_write_stands_alone(conn, tmp_path):
    """A COMMIT that fails (here a deferred foreign key; a full disk in life) leaves no transaction open."""
    conn.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
    conn.execute("CREATE TABLE child (pid INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)")
    with pytest.raises(sqlite3.IntegrityError), write_transaction(conn):
        conn.execute("INSERT INTO child VALUES (42)")
        conn.execute("INSERT INTO t VALUES ('lost with it')")
    assert not conn.in_transaction
    with write_transaction(conn):
        conn.execute("INSERT INTO t VALUES ('later')")
    assert _values(tmp_path) == ["later"]  # committed, not a savepoint of a transaction left open


def test_a_transaction_opened_elsewhere_is_never_joined(conn, tmp_path):
    conn.execute("BEGIN")
    conn.execute("INSERT INTO t VALUES ('someone else')")
    with pytest.raises(WorkbenchError, match="transaction"), write_transaction(conn):
        conn.execute("INSERT INTO t VALUES ('mine')")
    conn.execute("ROLLBACK")
    assert _values(tmp_path) == []


def test_a_write_lock_held_by_this_process_is_not_blamed_on_another(home, monkeypatch):
    """Inside the app, a background task (another connection of the same process) can hold
    workbench.db; the refusal said "another process" then, sending the user to look for one."""
    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "0.3")
    home.memory.add("memory", "first", None)
    task = sqlite3.connect(home.root / "workbench.db", isolation_level=None)
    task.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(WorkbenchError) as refused:
            home.memory.add("memory", "second", None)
    finally:
        task.execute("ROLLBACK")
        task.close()
    assert "another task of this workbench" in refused.value.message and "process" not in refused.value.message
    assert home.memory.entries("memory") == ["first"]


def test_threads_opening_a_new_database_together_all_get_a_connection(tmp_path):
    """A TUI's workers opening a new home's workbench.db at once: one of them turning it to WAL made
    another's open fail at once with "busy" (SQLite's busy handler does not wait there), shown as
    "Something went wrong" over the Timeline."""
    failures = []
    for trial in range(60):
        journal = Journal(tmp_path / f"{trial}.db", FixedClock(0))
        start = threading.Barrier(4)

        def open_one(journal=journal, start=start):
            start.wait()
            try:
                journal.connection().execute("SELECT count(*) FROM journal").fetchone()
            except Exception as exc:  # noqa: BLE001 - any failure, of any type, is what this test looks for
                failures.append(f"{type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=open_one) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        journal.close()
    assert failures == []


def test_a_connection_opened_while_all_are_closed_is_not_kept(tmp_path):
    """A worker's connection opened just as close_all ran (a file being replaced) was kept: it held the
    unlinked workbench.db, so its thread read a database gone from disk and told everyone it was sound
    (a CI run: quitting offered to keep messages in a workbench.db that was a folder by then)."""
    from engine.db import ThreadConnections

    opened, closed_all = threading.Event(), threading.Event()

    def slow_look(conn):  # the worker has its connection, and close_all runs before it is registered
        if not closed_all.is_set():
            opened.set()
            closed_all.wait(5)

    path = tmp_path / "w.db"
    with contextlib.closing(connect(path)) as first:
        first.execute("CREATE TABLE old_file (v)")
    conns = ThreadConnections(path, on_connect=slow_look)
    got: list[sqlite3.Connection] = []
    worker = threading.Thread(target=lambda: got.append(conns.get()))
    worker.start()
    assert opened.wait(5)
    conns.close_all()
    for name in ("w.db", "w.db-wal", "w.db-shm"):  # the file replaced, as a test or a person may
        (tmp_path / name).unlink(missing_ok=True)
    with contextlib.closing(connect(path)) as second:
        second.execute("CREATE TABLE new_file (v)")
    closed_all.set()
    worker.join(5)
    [conn] = got
    tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master")]
    assert tables == ["new_file"]  # a fresh one, opened after the close, on the file there now
    conns.close_all()
    with pytest.raises(sqlite3.ProgrammingError):  # and it is one close_all reaches
        conn.execute("SELECT 1")


def test_a_connection_registered_as_close_all_ends_is_the_threads_next_one(tmp_path):
    """close_all reset the threads' store after letting go of its lock: a get() registering in
    between put its connection on the store then thrown away, so its thread opened a second one and
    the first stayed open, out of reach (found in review)."""
    from engine.db import ThreadConnections

    go, registered = threading.Event(), threading.Event()

    class Watched(ThreadConnections):
        @property
        def _local(self):
            return self.__dict__["_store"]

        @_local.setter
        def _local(self, value):
            if "_store" in self.__dict__:  # close_all's reset: let a worker register just before it
                go.set()
                registered.wait(0.5)
            self.__dict__["_store"] = value

    conns = Watched(tmp_path / "w.db")
    got: list[sqlite3.Connection] = []
    closed = threading.Event()

    def worker():
        go.wait(5)
        got.append(conns.get())
        registered.set()
        closed.wait(5)
        got.append(conns.get())  # its thread's connection still

    thread = threading.Thread(target=worker)
    thread.start()
    conns.close_all()
    closed.set()
    thread.join(5)
    assert got[0] is got[1] and len(conns._all) == 1  # none opened twice, none left out of reach
    conns.close_all()


CLOSE_UNDER_A_QUERY = """
import sys, threading
from pathlib import Path
from engine.db import ThreadConnections

conns = ThreadConnections(Path(sys.argv[1]))
inside, done = threading.Event(), []

def count(_):
    inside.set()  # (SQLite calls this from inside the statement)
    return 1

def reader():
    conn = conns.get()
    conn.create_function("count_one", 1, count)
    sql = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 400000) "
           "SELECT sum(count_one(x)) FROM c")
    done.extend(conn.execute(sql).fetchone()[0] for _ in range(5))

thread = threading.Thread(target=reader)
thread.start()
inside.wait(5)
conns.close_all()  # (a home closed as an app exits, its workers still reading)
thread.join()
print(done)
"""


def test_closing_all_while_another_thread_is_inside_a_query_lets_it_finish(tmp_path):
    """close_all closed every thread's connection, one still inside a statement too: the process died
    inside SQLite (segfaults in CI: a test's home closed as its app exited, a worker still reading). A
    connection in another thread's hands is now left to that thread."""
    ran = subprocess.run(
        [sys.executable, "-c", CLOSE_UNDER_A_QUERY, str(tmp_path / "w.db")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert (ran.returncode, ran.stdout.strip()) == (0, str([400000] * 5)), ran.stderr[-2000:]


def test_a_connection_left_to_its_thread_is_closed_at_its_next_get_or_its_end(tmp_path):
    """What close_all leaves to a thread still using it is closed by that thread's next get (which
    opens it a fresh one), or by any later get or close_all once that thread has ended."""
    from engine.db import ThreadConnections

    conns = ThreadConnections(tmp_path / "w.db")
    asked, go = threading.Event(), threading.Event()
    got: list[sqlite3.Connection] = []

    def worker(again: bool):
        got.append(conns.get())
        asked.set()
        go.wait(5)
        if again:
            got.append(conns.get())

    def close_all_under(again: bool) -> threading.Thread:
        asked.clear(), go.clear()
        thread = threading.Thread(target=worker, args=(again,))
        thread.start()
        assert asked.wait(5)
        conns.close_all()
        got[-1].execute("SELECT 1")  # left open: its thread may be inside a statement
        go.set()
        thread.join(5)

    close_all_under(again=True)
    first, fresh = got
    assert fresh is not first and fresh.execute("SELECT 1").fetchone()[0] == 1
    with pytest.raises(sqlite3.ProgrammingError):  # closed by its own thread's next get
        first.execute("SELECT 1")
    close_all_under(again=False)  # (closes fresh at once: its thread has ended)
    ended = got[-1]
    ended.execute("SELECT 1")  # its thread ended after close_all: the next get anywhere closes it
    mine = conns.get()
    for conn in (fresh, ended):
        with pytest.raises(sqlite3.ProgrammingError):
            conn.execute("SELECT 1")
    conns.close_all()
    with pytest.raises(sqlite3.ProgrammingError):  # this thread's own is closed at once
        mine.execute("SELECT 1")


def test_a_step_that_does_not_wait_does_not_say_it_waited(conn, tmp_path):
    """A write that never waits (``wait=False``: storing kept messages at a command's start, say) said
    "(waited 5 s) ... or set WORKBENCH_BUSY_TIMEOUT to wait longer" though it took no time at all."""
    from engine.db import DatabaseBusyError
    from tests.lock_support import holding_write_lock

    holder = holding_write_lock(tmp_path / "t.db")
    try:
        with pytest.raises(DatabaseBusyError) as busy, write_transaction(conn, wait=False):
            conn.execute("INSERT INTO t VALUES ('x')")
    finally:
        holder.kill()
        holder.wait()
    said = busy.value.message
    assert said.startswith(f"t.db is busy: process {holder.pid} (")
    assert said.endswith("holds its write lock (not waited for: this step is tried again later). Nothing was changed.")
    assert _values(tmp_path) == []


def test_a_wait_of_no_time_by_the_users_timeout_still_says_how_to_wait_longer(tmp_path):
    """WORKBENCH_BUSY_TIMEOUT=0 makes every wait none: that is not a step tried again later, and the
    advice to raise the timeout is what such a user needs."""
    from engine.db import busy_error

    said = busy_error(tmp_path / "t.db", 0).message
    assert "(waited 0 s)" in said and "set WORKBENCH_BUSY_TIMEOUT" in said and "tried again later" not in said


def test_a_file_renamed_in_as_a_connection_opens_is_followed_at_the_next_get(tmp_path):
    """Which file a thread's connection is on was read after it opened: a file renamed into place between the
    two (a restore) was taken for the connection's, so that thread kept the old file for good."""
    from engine.db import ThreadConnections

    path, backup = tmp_path / "w.db", tmp_path / "backup.db"
    for file, table in ((path, "old_file"), (backup, "new_file")):
        with contextlib.closing(connect(file)) as made:
            made.execute(f"CREATE TABLE {table} (v)")

    def restored_meanwhile(conn):  # just after this connection opened the old file
        if backup.exists():
            os.replace(backup, path)

    conns = ThreadConnections(path, on_connect=restored_meanwhile, follow=True)
    first = conns.get()
    assert [row[0] for row in first.execute("SELECT name FROM sqlite_master")] == ["old_file"]
    assert [row[0] for row in conns.get().execute("SELECT name FROM sqlite_master")] == ["new_file"]
    conns.close_all()
