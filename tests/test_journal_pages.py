"""What a memory write costs workbench.db, page by page: the journal's indexes touch only rows they hold."""

from __future__ import annotations

import sqlite3

from engine import FixedClock, open_home
from engine.tools import ToolContext
from tests.journal_pages import wal_pages

# every index of the journal on its session column, with its definition
_SESSION_INDEXES = (
    "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'journal' AND sql LIKE '%(session_id)%'"
)


def _one_write_pages(home, write) -> list[list[str]]:
    """The pages each workbench.db commit of ``write`` put in the WAL (emptied first)."""
    home.journal.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    write()
    return wal_pages(home.journal.path)


def test_a_write_of_no_session_touches_no_session_index_page(tmp_path):
    """A person's edit has no session: its rows stay out of the session index, so its commits write one
    page fewer; an agent's rows are in it and found by their session through it."""
    home = open_home(tmp_path / "h", clock=FixedClock(1796040000.0))
    person, agent = ToolContext(actor="user"), ToolContext(actor="agent", session_id="s1", message_id=7)
    for i in range(40):  # past the first pages (the first write also makes the tables)
        assert home.memory.add("memory", f"fact {i}", person if i % 2 else agent)["success"]
    ((session_index, _),) = home.journal.connection().execute(_SESSION_INDEXES).fetchall()
    by_person = _one_write_pages(home, lambda: home.memory.add("memory", "a person's fact", person))
    by_agent = _one_write_pages(home, lambda: home.memory.add("memory", "an agent's fact", agent))
    assert [session_index in pages for pages in by_person] == [False, False]  # its rows, then their commit
    assert session_index in by_agent[0]
    assert sum(map(len, by_person)) == sum(map(len, by_agent)) - 1
    rows = home.journal.query(session_id="s1", limit=100)
    assert [r.after for r in rows[:2]] == ["an agent's fact", "fact 38"] and len(rows) == 21
    assert all(r.session_id == "s1" for r in rows)
    plan = home.journal.connection().execute("EXPLAIN QUERY PLAN SELECT 1 FROM journal WHERE session_id = ?", ("s1",))
    assert session_index in " ".join(r[3] for r in plan)
    home.close()


def test_a_journal_made_with_the_full_session_index_loses_it_and_keeps_its_rows(tmp_path):
    """A workbench.db an earlier version made indexes every row's session, NULL too: opened for writing,
    that index gives way to the one of sessions named, and every row is still found by its session."""
    root = tmp_path / "h"
    home = open_home(root, clock=FixedClock(1796040000.0))
    assert home.memory.add("memory", "an agent's fact", ToolContext(actor="agent", session_id="s1"))["success"]
    assert home.memory.add("memory", "a person's fact", ToolContext(actor="user"))["success"]
    home.close()
    with sqlite3.connect(root / "workbench.db") as conn:
        for name, _ in conn.execute(_SESSION_INDEXES).fetchall():
            conn.execute(f"DROP INDEX {name}")
        conn.execute("CREATE INDEX idx_journal_session ON journal(session_id)")  # as versions before made it
    reopened = open_home(root)
    assert [r.after for r in reopened.journal.query(session_id="s1")] == ["an agent's fact"]
    indexes = dict(reopened.journal.connection().execute(_SESSION_INDEXES).fetchall())
    assert list(indexes) == ["idx_journal_sessions"] and indexes["idx_journal_sessions"].endswith(
        "WHERE session_id IS NOT NULL"
    )
    reopened.close()


def test_a_session_found_by_its_end_is_looked_up_in_the_session_index(tmp_path):
    """The index of sessions named serves only a query SQLite can tell names one: ``session_id LIKE ?``
    alone does not imply NOT NULL to its planner, so the Timeline's lookup of an id's end (``…27beb3``)
    read every journal row, before and after texts included, where the full index was scanned before."""
    from engine.timeline import Timeline

    home = open_home(tmp_path / "h", clock=FixedClock(1796040000.0))
    for sid in ("20261204_155739_27beb3", None):
        assert home.memory.add("memory", f"from {sid}", ToolContext(actor="agent", session_id=sid))["success"]
    conn = home.journal.connection()
    said: list[str] = []
    conn.set_trace_callback(said.append)
    rows = Timeline(home).page(session_id="…155739_27beb3")
    conn.set_trace_callback(None)
    assert [r.session_id for r in rows] == ["20261204_155739_27beb3"]
    by_end = [sql for sql in said if "session_id LIKE" in sql and "FROM journal" in sql]
    assert by_end
    for sql in by_end:
        plan = " ".join(r[3] for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
        assert "idx_journal_sessions" in plan, plan
    home.close()
