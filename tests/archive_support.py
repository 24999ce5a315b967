"""Archives as other programs left them, for the archive's layout and compatibility tests."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from engine.archive import schema

# What workbench releases before the complete layout created: no trigram table (and its
# three triggers), no messages.api_content.
OLD_WORKBENCH_DDL = schema.TABLES_SQL.replace(",\n    api_content TEXT", "") + schema.FTS_SQL
assert OLD_WORKBENCH_DDL.count("api_content") == 0

TEXTS = [
    "Please deploy the billing service",
    "部署完成了，数据库迁移也好了",
    "ロールアウトはデプロイ済みです",
    "the zebra crossed the log",
    "回滚计划已经准备好",
    "kubectl rollout status finished",
]


def old_workbench_archive(
    folder: Path, sessions: int = 2, per_session: int = 6, version: int = schema.SCHEMA_VERSION
) -> Path:
    """A home whose state.db has the old workbench layout, with messages written through its triggers."""
    folder.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(folder / "state.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(OLD_WORKBENCH_DDL)
    conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
    calls = json.dumps(
        [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "terminal", "arguments": '{"cmd": "数据库迁移 --check"}'},
            }
        ],
        ensure_ascii=False,
    )
    conn.execute("BEGIN")
    for s in range(sessions):
        sid = f"old_{s}"
        conn.execute(
            "INSERT INTO sessions (id, source, started_at, title) VALUES (?, 'cli', ?, ?)",
            (sid, 1.7e9 + s * 1000, f"Old session {s}"),
        )
        for i in range(per_session):
            role, tool_calls = ("assistant", calls) if i % 3 == 1 else ("user", None)
            conn.execute(
                "INSERT INTO messages (session_id, role, content, tool_calls, timestamp) VALUES (?, ?, ?, ?, ?)",
                (sid, role, f"{TEXTS[i % len(TEXTS)]} #{s}-{i}", tool_calls, 1.7e9 + s * 1000 + i),
            )
        conn.execute("UPDATE sessions SET message_count = ? WHERE id = ?", (per_session, sid))
    conn.execute("COMMIT")
    conn.close()
    return folder


def schema_of(path: Path) -> list[tuple]:
    conn = sqlite3.connect(path)
    rows = sorted(conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall(), key=lambda r: (r[0], r[1]))
    conn.close()
    return rows


def fts_state(path: Path) -> dict:
    """Row counts of messages and both FTS tables, and the FTS trigger count, read by plain sqlite3."""
    conn = sqlite3.connect(path)
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        state = {
            "messages": conn.execute("SELECT count(*) FROM messages").fetchone()[0],
            "triggers": sum(
                1 for n in names if n.startswith("messages_fts") and n.endswith(("_insert", "_delete", "_update"))
            ),
        }
        for table in ("messages_fts", "messages_fts_trigram"):
            state[table] = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] if table in names else None
        return state
    finally:
        conn.close()


def _varint(n: int) -> bytes:
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    return bytes(reversed(out))


def deepen_fts(db, table: str, levels: int) -> None:
    """Give ``table`` a structure record of ``levels`` empty levels, the shape the old idle steps left
    (each gathered every segment into a new level above the last)."""
    conn = sqlite3.connect(db, isolation_level=None)
    block = conn.execute(f"SELECT block FROM {table}_data WHERE id = 10").fetchone()[0]
    record = block[:4] + _varint(levels) + _varint(0) + _varint(9) + b"\x00\x00" * levels
    conn.execute(f"UPDATE {table}_data SET block = ? WHERE id = 10", (record,))
    conn.close()


def copy_database(source: Path, target: Path) -> None:
    """A consistent copy of one SQLite file (SQLite's backup: the WAL's pages included)."""
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


_RETITLE = (
    "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
    "c.execute('UPDATE sessions SET title = ?', (sys.argv[2],)); c.commit()"
)


def retitle_in_another_process(state_db: Path, title: str = "Renamed") -> None:
    """Every session of ``state_db`` renamed by a separate process: a change no process of ours made."""
    subprocess.run([sys.executable, "-c", _RETITLE, str(state_db), title], check=True)


# as a careful restore does it: the live file's WAL copied in and emptied first, so none of it is read
# over the restored file, then the backup renamed into its place
_RESTORE = (
    "import os, sqlite3, sys; c = sqlite3.connect(sys.argv[2]); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); "
    "c.close(); os.replace(sys.argv[1], sys.argv[2])"
)


def restore_in_another_process(backup: Path, database: Path) -> None:
    """``backup`` renamed over ``database`` by a separate process, as a user's restore or a sync tool does."""
    subprocess.run([sys.executable, "-c", _RESTORE, str(backup), str(database)], check=True)
