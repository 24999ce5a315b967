"""Completing an old archive's layout atomically, keeping FTS whole on the write path, doctor's check and repair."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest

from engine import open_home
from engine.archive import schema
from engine.archive.health import REPAIR, check
from engine.errors import WorkbenchError
from engine.health import CHECKS, FIXES
from tests.archive_support import fts_state, old_workbench_archive, schema_of

HERMES_REFILL = (
    "INSERT INTO messages_fts(rowid, content) SELECT id, COALESCE(content, '') || ' ' || "
    "COALESCE(tool_name, '') || ' ' || COALESCE(tool_calls, '') FROM messages"
)


def raw(path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=0)
    return conn


def test_old_layout_is_completed_in_one_transaction_with_progress(tmp_path, clock, monkeypatch):
    folder = old_workbench_archive(tmp_path / "h", sessions=5, per_session=10)
    monkeypatch.setattr(schema, "BACKFILL_CHUNK", 20)
    home = open_home(folder, clock=clock)
    seen = []

    def progress(step, done, total):
        other = raw(folder / "state.db")
        # another connection meanwhile: sees the old layout, and cannot write
        names = {r[0] for r in other.execute("SELECT name FROM sqlite_master")}
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            other.execute("BEGIN IMMEDIATE")
        other.close()
        seen.append((step, done, total, "messages_fts_trigram" in names))

    home.archive.progress = progress
    assert [s.id for s in home.archive.list_sessions()] == [f"old_{i}" for i in range(4, -1, -1)]
    assert seen == [("indexing messages_fts_trigram", n, 50, False) for n in (20, 40, 50)]
    conn = raw(folder / "state.db")
    assert schema.layout_gaps(conn).complete
    assert fts_state(folder / "state.db") == {
        "messages": 50,
        "triggers": 6,
        "messages_fts": 50,
        "messages_fts_trigram": 50,
    }
    hits = conn.execute(
        "SELECT rowid FROM messages_fts_trigram WHERE messages_fts_trigram MATCH '数据库迁移'"
    ).fetchall()
    expected = conn.execute(
        "SELECT id FROM messages WHERE content LIKE '%数据库迁移%' OR tool_calls LIKE '%数据库迁移%'"
    )
    assert sorted(hits) == expected.fetchall() and len(hits) == 15  # texts and tool-call arguments
    [entry] = home.journal.query(subsystem="sessions")
    assert entry.action == "complete-layout" and entry.actor == "user"
    assert (
        "FTS tables: messages_fts_trigram" in entry.detail["done"]
        and "columns: messages.api_content" in entry.detail["done"]
    )
    home.close()
    after = schema_of(folder / "state.db")
    again = open_home(folder, clock=clock)
    again.archive.append_message("old_0", "user", "新的消息")
    assert schema_of(folder / "state.db") == after  # complete now: never touched again
    assert [e.action for e in again.journal.query(subsystem="sessions")] == ["complete-layout"]
    again.close()


def test_a_completion_stopped_half_way_leaves_the_archive_as_it_was(tmp_path, clock, monkeypatch):
    folder = old_workbench_archive(tmp_path / "h", sessions=3, per_session=10)
    before = schema_of(folder / "state.db")
    monkeypatch.setattr(schema, "BACKFILL_CHUNK", 10)
    home = open_home(folder, clock=clock)

    def stop(step, done, total):
        if done >= 20:
            raise KeyboardInterrupt

    home.archive.progress = stop
    with pytest.raises(KeyboardInterrupt):
        home.archive.list_sessions()
    assert schema_of(folder / "state.db") == before
    assert fts_state(folder / "state.db")["messages_fts_trigram"] is None
    assert [e.status for e in home.journal.query(subsystem="sessions", include_pending=True)] == ["abandoned"]
    home.archive.progress = None
    assert len(home.archive.list_sessions()) == 3  # the next open completes it
    assert fts_state(folder / "state.db")["messages_fts_trigram"] == 30
    home.close()


def test_what_cannot_be_created_is_reported_once_not_retried(tmp_path, clock):
    folder = old_workbench_archive(tmp_path / "h")
    conn = raw(folder / "state.db")
    conn.execute("DROP INDEX idx_sessions_title_unique")
    conn.execute("UPDATE sessions SET title = 'Same title'")  # what the unique index would refuse
    conn.close()
    home = open_home(folder, clock=clock)
    home.archive.list_sessions()
    [entry] = home.journal.query(subsystem="sessions")
    assert any("idx_sessions_title_unique (sessions share a title" in line for line in entry.detail["done"])
    assert fts_state(folder / "state.db")["messages_fts_trigram"] == 12
    home.close()
    again = open_home(folder, clock=clock)
    again.archive.list_sessions()
    assert len(again.journal.query(subsystem="sessions")) == 1  # not retried
    assert [f.severity for f in check(again)] == ["info"]
    again.close()


def test_other_schema_versions_are_left_to_hermes(tmp_path, clock):
    folder = old_workbench_archive(tmp_path / "h", version=21)
    before = schema_of(folder / "state.db")
    home = open_home(folder, clock=clock)
    home.archive.append_message("old_0", "user", "written into a version 21 archive")
    assert [h.session_id for h in home.archive.search("written")] == ["old_0"]
    home.close()
    assert schema_of(folder / "state.db") == before
    assert [f.severity for f in check(home)] == ["info"]  # doctor: Hermes upgrades it on its next open


def test_an_append_never_lands_between_the_statements_of_a_rebuild(home):
    """Hermes's rebuild empties messages_fts, then refills it from messages, in two statements."""
    archive = home.archive
    archive.create_session("s1")
    archive.append_messages("s1", [{"role": "user", "content": f"deploy step {i}"} for i in range(20)])
    rebuild = raw(home.state_db_path)
    rebuild.execute("DELETE FROM messages_fts")  # the rebuild's first statement
    archive.append_message("s1", "user", "written in between")
    with pytest.raises(sqlite3.IntegrityError):
        rebuild.execute(HERMES_REFILL)  # its second one now fails, and changes nothing
    rebuild.close()
    assert fts_state(home.state_db_path) == {
        "messages": 21,
        "triggers": 6,
        "messages_fts": 21,
        "messages_fts_trigram": 21,
    }
    assert len(list(archive.iter_matches("deploy"))) == 20 and len(list(archive.iter_matches("between"))) == 1
    assert [e.action for e in home.journal.query(subsystem="sessions")] == ["repair-index"]


@pytest.mark.parametrize(
    "outside",
    ["DELETE FROM messages_fts", "DROP TRIGGER messages_fts_insert", "DROP TRIGGER messages_fts_trigram_insert"],
)
@pytest.mark.parametrize("refused_between", [False, True])
def test_a_stream_of_turns_sees_what_another_program_does_to_the_index(home, outside, refused_between):
    """A stream's turns stop checking the index's ends once they have shown their inserts keep it
    whole; a commit by another connection brings the check back, for as long as it takes to show
    that again: a trigger dropped between two turns is seen after the next one, and restored. An
    append refused meanwhile (no such session) inserted nothing, so it shows nothing."""
    archive = home.archive
    archive.create_session("s1")
    for i in range(4):
        archive.append_messages("s1", [{"role": "user", "content": f"deploy step {i}"}])
    other = raw(home.state_db_path)
    other.execute(outside)
    other.close()
    if refused_between:
        with pytest.raises(WorkbenchError, match="No session"):
            archive.append_messages("nope", [{"role": "user", "content": "lost"}])
    for i in range(4, 8):
        archive.append_messages("s1", [{"role": "user", "content": f"deploy step {i}"}])
    assert fts_state(home.state_db_path) == {
        "messages": 8,
        "triggers": 6,
        "messages_fts": 8,
        "messages_fts_trigram": 8,
    }
    assert len(list(archive.iter_matches("deploy"))) == 8
    assert [e.action for e in home.journal.query(subsystem="sessions")] == ["repair-index"]


def test_doctor_reports_a_wiped_index_and_repairs_it(home):
    archive = home.archive
    archive.create_session("s1")
    archive.append_messages("s1", [{"role": "user", "content": f"deploy step {i} 部署"} for i in range(30)])
    archive.close()
    conn = raw(home.state_db_path)
    conn.execute("DELETE FROM messages_fts WHERE rowid <= 25")  # what a failed rebuild leaves: only later rows
    conn.execute("DELETE FROM messages_fts_trigram WHERE rowid = 12")  # a hole in the middle: ends still match
    conn.close()
    before = schema_of(home.state_db_path)
    assert check in CHECKS and FIXES[REPAIR]
    found = check(home)
    assert [(f.area, f.severity, f.repair) for f in found] == [("archive", "error", REPAIR)] * 2
    assert "messages_fts holds 5 rows for 30 messages" in found[0].what
    assert "messages_fts_trigram holds 29 rows" in found[1].what
    assert schema_of(home.state_db_path) == before  # a check changes nothing
    report = FIXES[REPAIR](home)
    assert "FTS tables rebuilt: messages_fts, messages_fts_trigram" in report
    assert check(home) == []
    assert len(list(archive.iter_matches("deploy"))) == 30
    assert [e.action for e in home.journal.query(subsystem="sessions")] == ["repair-index"]


def test_doctor_reports_an_incomplete_layout_without_touching_it(tmp_path, clock):
    folder = old_workbench_archive(tmp_path / "h")
    before = schema_of(folder / "state.db")
    home = open_home(folder, clock=clock)
    [finding] = check(home)
    assert (finding.severity, finding.repair) == ("warning", REPAIR)
    assert "messages_fts_trigram" in finding.what and "messages.api_content" in finding.what
    assert schema_of(folder / "state.db") == before
    assert "FTS tables: messages_fts_trigram" in FIXES[REPAIR](home)
    assert check(home) == [] and schema.layout_gaps(raw(folder / "state.db")).complete
    home.close()


def test_doctor_on_a_missing_foreign_or_damaged_archive(tmp_path, clock):
    home = open_home(tmp_path / "h", clock=clock)
    assert [f.severity for f in check(home)] == ["info"]
    conn = sqlite3.connect(home.state_db_path)
    conn.execute("CREATE TABLE notes (x)")
    conn.close()
    [finding] = check(home)
    assert finding.severity == "error" and finding.repair == "" and "not a session archive" in finding.what
    home.state_db_path.write_bytes(b"not a database" * 300)
    assert check(home) == []  # damage is the database check's finding (engine.home_health), not reported twice
    assert home.state_db_path.read_bytes() == b"not a database" * 300
    home.close()


# Hermes storing a message meanwhile: its row and, by the triggers, its index rows in one commit
_HERMES_STORES = (
    "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
    "c.execute(\"INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s1', 'user', 'more', 2e9)\")"
)


def test_doctor_counts_the_index_and_the_messages_in_one_snapshot(home, monkeypatch):
    """The messages and each index were counted in statements of their own: a message Hermes stored between
    them (any doctor run while Hermes works) was reported as an index missing rows, an error whose fix needs
    Hermes stopped."""
    home.archive.create_session("s1")
    home.archive.append_messages("s1", [{"role": "user", "content": f"deploy step {i}"} for i in range(5)])
    counted = schema.fts_rows

    def hermes_stores_first(conn, table):
        if table == "messages_fts":  # after the messages were counted
            subprocess.run([sys.executable, "-c", _HERMES_STORES, str(home.state_db_path)], check=True)
        return counted(conn, table)

    monkeypatch.setattr(schema, "fts_rows", hermes_stores_first)
    assert check(home) == []
    assert fts_state(home.state_db_path)["messages"] == 6  # (it did store it)
