"""state.db compatibility: Hermes's own DDL, older and newer schemas, corrupt and foreign files, read-only homes."""

from __future__ import annotations

import json
import sqlite3

import pytest

from engine import open_home
from engine.archive import schema
from engine.archive.schema import HERMES_DDL, SCHEMA_VERSION
from engine.errors import ReadOnlyError, WorkbenchError


def hermes_database(path, ddl: str = HERMES_DDL, version: int = SCHEMA_VERSION) -> sqlite3.Connection:
    """A state.db as Hermes makes it: its DDL run by plain sqlite3, rows written with Hermes's own SQL."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(ddl)
    conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
    return conn


def hermes_write(conn, session_id, messages, *, parent=None, end_reason=None, title=None, source="cli", started=1.7e9):
    conn.execute(
        "INSERT INTO sessions (id, source, started_at, parent_session_id, title, end_reason, ended_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (session_id, source, started, parent, title, end_reason, started + 60 if end_reason else None),
    )
    for i, (role, content, *tool) in enumerate(messages):
        conn.execute(
            "INSERT INTO messages (session_id, role, content, tool_name, tool_calls, timestamp) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (session_id, role, content, tool[0] if tool else None, tool[1] if len(tool) > 1 else None, started + i),
        )
        conn.execute("UPDATE sessions SET message_count = message_count + 1 WHERE id = ?", (session_id,))


def schema_of(path) -> list[tuple]:
    conn = sqlite3.connect(path)
    rows = sorted(conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall(), key=lambda r: (r[0], r[1]))
    conn.close()
    return rows


@pytest.fixture
def hermes_home(tmp_path, clock):
    conn = hermes_database(tmp_path / "hermes" / "state.db")
    calls = json.dumps(
        [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "terminal", "arguments": '{"cmd": "kubectl rollout status"}'},
            }
        ]
    )
    hermes_write(
        conn,
        "root1",
        [
            ("user", "Please deploy the billing service"),
            ("assistant", None, None, calls),
            ("tool", '{"exit": 0}', "terminal"),
            ("assistant", "部署完成了，数据库迁移也好了"),
        ],
        end_reason="compression",
        title="Billing deploy",
    )
    hermes_write(
        conn,
        "child1",
        [("user", "continue the rollout"), ("assistant", "ロールアウトはデプロイ済みです")],
        parent="root1",
        title="Billing deploy #2",
        started=1.7e9 + 100,
    )
    conn.close()
    home = open_home(tmp_path / "hermes", clock=clock)
    yield home
    home.close()


def test_database_created_by_hermes_ddl_opens_and_searches(hermes_home):
    before = schema_of(hermes_home.state_db_path)
    archive = hermes_home.archive
    assert [s.id for s in archive.list_sessions()] == ["child1", "root1"]
    assert archive.caps.version == SCHEMA_VERSION and archive.caps.fts and archive.caps.trigram
    hits = archive.search("deploy")
    assert [(h.session_id, h.root_id) for h in hits] == [("root1", "root1")]
    assert "«deploy»" in hits[0].snippet
    assert [h.match_message_id for h in archive.search("kubectl")] == [2]  # tool-call arguments are indexed
    assert [h.match_message_id for h in archive.search("terminal", role="tool")] == [3]
    assert {h.session_id for h in archive.search("部署")} == {"root1"}
    assert {h.session_id for h in archive.search("デプロイ")} == {"child1"}
    assert archive.lineage("child1").chain == ["root1", "child1"]
    assert archive.tip_of("root1") == "child1"
    # our writes go through Hermes's own triggers and keep its FTS tables in step
    archive.append_message("child1", "user", "zebra crossing")
    conn = sqlite3.connect(hermes_home.state_db_path)
    assert conn.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'zebra'").fetchall() == [(7,)]
    assert conn.execute(
        "SELECT rowid FROM messages_fts_trigram WHERE messages_fts_trigram MATCH 'ebra'"
    ).fetchall() == [(7,)]
    conn.close()
    assert schema_of(hermes_home.state_db_path) == before  # nothing of Hermes's was reshaped or added


def test_new_home_gets_hermes_complete_layout(tmp_path, clock):
    home = open_home(tmp_path / "h", clock=clock)
    home.archive.create_session("s1")
    conn = sqlite3.connect(home.state_db_path)
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert {
        "sessions",
        "messages",
        "messages_fts",
        "messages_fts_trigram",
        "state_meta",
        "schema_version",
        "session_model_usage",
        "idx_sessions_title_unique",
        "idx_messages_session_active",
    } <= names
    triggers = conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'messages_fts%'")
    assert triggers.fetchone()[0] == 6
    assert schema.layout_gaps(conn).complete
    assert "api_content" in {r[1] for r in conn.execute("PRAGMA table_info(messages)")}
    assert conn.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    ours = home.archive.conn()
    assert ours.execute("PRAGMA foreign_keys").fetchone()[0] == 1  # a message can never point at no session
    with pytest.raises(sqlite3.IntegrityError):
        ours.execute("INSERT INTO messages (session_id, role, timestamp) VALUES ('missing', 'user', 0)")
    home.close()


OLD_SCHEMA = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT, parent_session_id TEXT,
    started_at REAL NOT NULL, ended_at REAL, end_reason TEXT, message_count INTEGER DEFAULT 0, title TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL,
    content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL);
CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='id');
CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content); END;
"""


def test_older_schema_opens_reads_and_refuses_missing_features_clearly(tmp_path, clock):
    conn = hermes_database(tmp_path / "old" / "state.db", OLD_SCHEMA, version=6)
    hermes_write(conn, "s1", [("user", "old deploy notes"), ("assistant", "半夜部署")], end_reason=None, title=None)
    conn.close()
    before = schema_of(tmp_path / "old" / "state.db")
    home = open_home(tmp_path / "old", clock=clock)
    archive = home.archive
    assert archive.caps.version == 6 and not archive.caps.trigram
    assert [m.content for m in archive.messages("s1")] == ["old deploy notes", "半夜部署"]
    assert [h.session_id for h in archive.search("deploy")] == ["s1"]
    assert [h.session_id for h in archive.search("部署")] == ["s1"]
    archive.append_message("s1", "user", "more")
    with pytest.raises(WorkbenchError, match="no messages.active"):
        archive.rewind("s1", 1)
    assert archive.lineage("s1").chain == ["s1"]
    exported = json.loads(archive.export_session("s1"))  # the columns this file has, no more
    assert [m["content"] for m in exported["messages"]] == ["old deploy notes", "半夜部署", "more"]
    assert "active" not in exported["messages"][0] and exported["started_at"] == 1.7e9
    # the agent runs on it too: what the old schema has no column for (system_prompt) is simply not stored
    from engine.models import OfflineModel
    from engine.runner import AgentSession

    fresh = AgentSession(home, OfflineModel())
    assert fresh.run_turn("remember that I prefer tabs").error is None and archive.get_session(fresh.id) is not None
    archive.end_session("s1", "cli_close")
    resumed = AgentSession(home, OfflineModel(), session_id="s1")
    assert resumed.run_turn("hello again").error is None
    assert archive.get_session("s1").end_reason is None and archive.messages("s1")[-2].content == "hello again"
    home.close()
    assert schema_of(tmp_path / "old" / "state.db") == before


def test_newer_schema_with_extra_columns_and_tables_opens(tmp_path, clock):
    newer = (
        HERMES_DDL
        + """
        ALTER TABLE sessions ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
        CREATE TABLE system_prompts (hash TEXT PRIMARY KEY, prompt TEXT);"""
    )
    conn = hermes_database(tmp_path / "new" / "state.db", newer, version=26)
    hermes_write(conn, "s1", [("user", "future deploy")])
    conn.close()
    home = open_home(tmp_path / "new", clock=clock)
    assert home.archive.caps.version == 26
    assert [h.session_id for h in home.archive.search("deploy")] == ["s1"]
    home.archive.append_message("s1", "assistant", "ok")
    assert home.archive.get_session("s1").message_count == 2
    assert json.loads(home.archive.export_session("s1"))["pinned"] == 0  # a column we do not know is exported too
    home.close()


@pytest.mark.parametrize("payload", [b"this is not a database at all" * 100, b"SQLite format 3\x00" + b"\xff" * 4000])
def test_corrupt_state_db_is_refused_clearly_and_left_untouched(tmp_path, clock, payload):
    folder = tmp_path / "h"
    folder.mkdir()
    (folder / "state.db").write_bytes(payload)
    home = open_home(folder, clock=clock)
    with pytest.raises(WorkbenchError, match="not a usable session archive"):
        home.archive.list_sessions()
    assert (folder / "state.db").read_bytes() == payload
    assert not (folder / "state.db-wal").exists()


def test_foreign_sqlite_file_is_refused_and_untouched(tmp_path, clock):
    folder = tmp_path / "h"
    folder.mkdir()
    conn = sqlite3.connect(folder / "state.db")
    conn.execute("CREATE TABLE notes (x)")
    conn.commit()
    conn.close()
    before = (folder / "state.db").read_bytes()
    home = open_home(folder, clock=clock)
    with pytest.raises(WorkbenchError, match="not a session archive"):
        home.archive.search("x")
    assert (folder / "state.db").read_bytes() == before


def test_read_only_home_reads_and_refuses_writes(hermes_home, tmp_path, clock):
    hermes_home.close()
    before = (hermes_home.state_db_path).read_bytes()
    ro = open_home(hermes_home.root, read_only=True, clock=clock)
    assert ro.archive.get_session("root1").title == "Billing deploy"
    assert {h.session_id for h in ro.archive.search("数据库")} == {"root1"}  # no index of ours: trigram path
    assert {h.session_id for h in ro.archive.search("部署")} == {"root1"}  # 2 characters: substring scan
    with pytest.raises(ReadOnlyError):
        ro.archive.append_message("root1", "user", "x")
    with pytest.raises(ReadOnlyError):
        ro.archive.set_title("root1", "renamed")
    ro.close()
    assert hermes_home.state_db_path.read_bytes() == before


def test_read_only_home_without_archive_is_empty(tmp_path, clock):
    open_home(tmp_path / "h").close()
    ro = open_home(tmp_path / "h", read_only=True, clock=clock)
    assert ro.archive.list_sessions() == [] and ro.archive.search("anything") == []
    assert not (tmp_path / "h" / "state.db").exists()


def test_a_home_we_create_is_left_as_it_is_by_hermes_ddl(home):
    """Hermes's start-up DDL (all IF NOT EXISTS) finds every object it declares already there."""
    archive = home.archive
    archive.create_session("ours", title="Made by the workbench")
    archive.append_message("ours", "user", "rollout of the 数据库迁移 finished")
    home.close()
    before = schema_of(home.state_db_path)
    conn = sqlite3.connect(home.state_db_path, isolation_level=None)
    conn.executescript(HERMES_DDL)
    assert conn.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'rollout'").fetchall() == [(1,)]
    assert conn.execute(
        "SELECT rowid FROM messages_fts_trigram WHERE messages_fts_trigram MATCH '数据库迁移'"
    ).fetchall() == [(1,)]
    conn.close()
    assert schema_of(home.state_db_path) == before
