"""An archive change killed part way (a title, an archive flag, a delete, a compaction...) is
settled by the next process that opens the archive: its journal row says ``done`` exactly when
state.db holds the change, and a change still running in another process is left alone."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from engine import open_home
from tests.hermes_support import workbench_cmd
from tests.test_reliability import kill_at


def seeded(tmp_path):
    """A home with an ended session ``s1`` of four messages (two user turns) and a live ``s2``."""
    root = tmp_path / "home"
    home = open_home(root)
    archive = home.archive
    archive.create_session("s1", title="Kettle talk")
    archive.append_messages(
        "s1",
        [
            {"role": "user", "content": "first question"},
            {"role": "assistant", "content": "first answer"},
            {"role": "user", "content": "second question"},
            {"role": "assistant", "content": "second answer"},
        ],
    )
    archive.end_session("s1", "user_exit")
    archive.create_session("s2")
    home.close()
    return root


def row_of(root, action: str) -> tuple[str, dict]:
    home = open_home(root)
    try:
        home.archive  # noqa: B018  (opening the archive settles what a kill left)
        row = home.journal.query(subsystem="sessions", actions=(action,), include_pending=True, limit=1)[0]
        return row.status, row.detail
    finally:
        home.close()


def pending(root) -> list[str]:
    return [action for (action,) in state(root, "SELECT action FROM journal WHERE status = 'pending'", "workbench.db")]


def state(root, sql: str, name: str = "state.db"):
    conn = sqlite3.connect(root / name)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


CLI_CHANGES = [
    ("title", ["sessions", "rename", "s1", "Tea talk"], "SELECT title FROM sessions WHERE id = 's1'", [("Tea talk",)]),
    ("archive", ["sessions", "archive", "s1"], "SELECT archived FROM sessions WHERE id = 's1'", [(1,)]),
    ("delete", ["sessions", "delete", "s1", "--yes"], "SELECT id FROM sessions WHERE id = 's1'", []),
]


@pytest.mark.parametrize(("action", "argv", "sql", "changed"), CLI_CHANGES, ids=[c[0] for c in CLI_CHANGES])
@pytest.mark.parametrize("point", ["archive-journaled", "archive-changed"])
def test_a_cli_change_killed_part_way_is_settled_as_what_state_db_holds(tmp_path, action, argv, sql, changed, point):
    root = seeded(tmp_path)
    before = state(root, sql)
    kill_at(point, tmp_path, workbench_cmd(*argv, "--home", str(root)))
    reached = point == "archive-changed"
    assert state(root, sql) == (changed if reached else before)
    status, detail = row_of(root, action)
    assert status == ("done" if reached else "abandoned")
    assert ("settled" in detail) == reached and ("reason" in detail) != reached
    assert pending(root) == []


ENGINE_CHANGES = {
    "reopen": ("home.archive.reopen_session('s1')", "SELECT ended_at IS NULL FROM sessions WHERE id = 's1'"),
    "system_prompt": (
        "home.archive.update_system_prompt('s1', 'You are a tea expert.')",
        "SELECT system_prompt FROM sessions WHERE id = 's1'",
    ),
    "compact": (
        "home.archive.compact_in_place('s1', 1, 0, 'summary of the talk')",
        "SELECT count(*) FROM messages WHERE session_id = 's1' AND active = 1",
    ),
    "rewind": (
        "home.archive.rewind('s1', [m.id for m in home.archive.messages('s1') if m.role == 'user'][1])",
        "SELECT count(*) FROM messages WHERE session_id = 's1' AND active = 1",
    ),
    "prune": ("home.archive.prune(0)", "SELECT count(*) FROM sessions"),
}


@pytest.mark.parametrize("action", sorted(ENGINE_CHANGES))
@pytest.mark.parametrize("point", ["archive-journaled", "archive-changed"])
def test_an_engine_change_killed_part_way_is_settled_as_what_state_db_holds(tmp_path, action, point):
    root = seeded(tmp_path)
    call, sql = ENGINE_CHANGES[action]
    before = state(root, sql)
    script = f"from engine import open_home\nhome = open_home({str(root)!r})\n{call}\n"
    kill_at(point, tmp_path, [sys.executable, "-c", script])
    reached = point == "archive-changed"
    assert (state(root, sql) != before) == reached
    status, _ = row_of(root, action)
    assert status == ("done" if reached else "abandoned")


def test_a_change_still_running_elsewhere_is_left_pending_until_its_process_is_gone(tmp_path):
    root = seeded(tmp_path)
    marker = tmp_path / "paused-archive-changed"
    env_point = {"WORKBENCH_CRASH_POINT": "archive-changed", "WORKBENCH_CRASH_MARKER": str(marker)}
    proc = subprocess.Popen(
        workbench_cmd("sessions", "rename", "s1", "Tea talk", "--home", str(root)),
        env={**os.environ, **env_point},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(600):
            if marker.exists():
                break
            time.sleep(0.05)
        assert marker.exists()
        assert row_of(root, "title")[0] == "pending", "a live change's row is its own"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    assert row_of(root, "title")[0] == "done"


def test_a_row_that_does_not_say_what_it_meant_is_settled_as_unknown_never_as_done(tmp_path):
    root = seeded(tmp_path)
    home = open_home(root)
    home.journal.begin("sessions", "compact", "s1", actor="user", detail={"archived": 4})  # no last_live_id
    home.close()
    status, detail = row_of(root, "compact")
    assert status == "abandoned" and "no longer shows whether" in detail["reason"]


def test_an_interrupted_change_never_blocks_a_read_only_open(tmp_path):
    root = seeded(tmp_path)
    kill_at("archive-journaled", tmp_path, workbench_cmd("sessions", "rename", "s1", "Tea", "--home", str(root)))
    home = open_home(root, read_only=True)
    assert [s.id for s in home.archive.list_sessions()] == ["s2", "s1"]
    home.close()
    assert pending(root) == ["title"]
