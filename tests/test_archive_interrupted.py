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

from engine import FixedClock, open_home
from engine.doctor import run_doctor
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
    archive.create_session("s3")
    archive.set_archived("s3")
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
    ("unarchive", ["sessions", "archive", "s3", "--undo"], "SELECT archived FROM sessions WHERE id = 's3'", [(0,)]),
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
    assert [s.id for s in home.archive.list_sessions()] == ["s2", "s1"]  # (s3 is archived)
    home.close()
    assert pending(root) == ["title"]


def settle_rows(root, rows: list[tuple[str, str, dict]]) -> list[tuple[str, str]]:
    """Begin ``rows`` (action, target, detail) as a killed process leaves them; open the archive; their
    (status, reason or settled note)."""
    home = open_home(root)
    ids = [
        home.journal.begin("sessions", action, target, actor="user", detail=detail) for action, target, detail in rows
    ]
    home.close()
    home = open_home(root)
    try:
        home.archive.list_sessions()  # opening settles, and reading still works
        found = [home.journal.get(i) for i in ids]
        return [(row.status, row.detail.get("reason") or row.detail.get("settled", "")) for row in found]
    finally:
        home.close()


@pytest.mark.parametrize(
    "detail",
    [{"last_live_id": 2**70}, {"last_live_id": True}, {"last_live_id": "3"}, {"last_live_id": [1]}],
    ids=["past-sqlite", "a-flag", "text", "a-list"],
)
def test_a_hostile_detail_is_settled_as_unknown_and_never_breaks_opening_the_archive(tmp_path, detail):
    [(status, reason)] = settle_rows(seeded(tmp_path), [("compact", "s1", detail)])
    assert status == "abandoned" and "no longer shows whether" in reason


def test_a_row_whose_detail_is_not_json_is_settled_and_the_rows_after_it_too(tmp_path):
    root = seeded(tmp_path)
    home = open_home(root)
    bad = home.journal.begin("sessions", "compact", "s1", actor="user")
    home.journal.connection().execute("UPDATE journal SET detail = '{not json' WHERE id = ?", (bad,))
    good = home.journal.begin("sessions", "reopen", "s1", actor="user")
    home.close()
    home = open_home(root)
    home.archive  # noqa: B018
    assert [home.journal.get(i).status for i in (bad, good)] == ["abandoned", "abandoned"]  # s1 is still ended
    home.close()


def test_a_title_row_from_before_titles_were_journaled_first_is_unknown_either_way(tmp_path):
    """Such a row had ``after`` written only at its commit: NULL while pending, which says nothing."""
    root = seeded(tmp_path)
    results = settle_rows(root, [("title", "s2", {}), ("title", "s1", {})])  # s2 untitled, s1 titled
    assert [status for status, _ in results] == ["abandoned", "abandoned"]
    assert all("no longer shows whether" in reason for _, reason in results)


def test_layout_and_index_rebuild_rows_are_settled_from_what_state_db_shows(tmp_path):
    root = seeded(tmp_path)
    results = settle_rows(
        root,
        [
            ("repair-index", "*", {}),
            ("rebuild-deep-index", "*", {"levels": {"messages_fts": 900}}),
            ("rebuild-deep-index", "*", {"levels": {"no_such_table": 900}}),
            ("rebuild-deep-index", "*", {"levels": {"messages_fts_data WHERE 1; --": 900}}),
        ],
    )
    assert [status for status, _ in results] == ["done", "done", "abandoned", "abandoned"]
    conn = sqlite3.connect(root / "state.db")
    conn.execute("DROP TRIGGER messages_fts_insert")  # a layout with a gap: the completion did not happen
    conn.close()
    assert settle_rows(root, [("complete-layout", "*", {})])[0][0] == "abandoned"


def test_a_change_waits_for_another_holder_of_the_lock_as_long_as_a_busy_database_then_is_refused(
    tmp_path, monkeypatch
):
    from engine.db import DatabaseBusyError
    from engine.fileio import file_lock

    root = seeded(tmp_path)
    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "0.3")
    home = open_home(root)
    with file_lock(root / "state.db"):  # another holder (another open file: flock excludes it as another process)
        started = time.monotonic()
        with pytest.raises(DatabaseBusyError, match="another process is changing it"):
            home.archive.set_title("s1", "Tea talk")
        assert time.monotonic() - started < 5
    assert home.archive.get_session("s1").title == "Kettle talk"
    assert home.archive.set_title("s1", "Tea talk") == "Tea talk"  # once it is free
    home.close()


def test_settling_inside_a_change_of_this_thread_leaves_that_change_alone(tmp_path):
    root = seeded(tmp_path)
    home = open_home(root)
    archive = home.archive
    with archive.changing():
        row = home.journal.begin("sessions", "reopen", "s1", actor="user")
        assert archive.settle() == []
        assert home.journal.get(row).status == "pending"
        home.journal.commit(row)
    home.close()


def test_a_damaged_journal_does_not_stop_the_archive_from_being_read(tmp_path):
    root = seeded(tmp_path)
    (root / "workbench.db").write_bytes(b"this is not a database" * 100)
    for name in ("workbench.db-wal", "workbench.db-shm"):
        (root / name).unlink(missing_ok=True)
    home = open_home(root)
    assert [s.id for s in home.archive.list_sessions()] == ["s2", "s1"]
    home.close()


def test_doctor_names_a_change_a_kill_left_pending_and_fix_settles_it(tmp_path):
    """A read-only look (doctor, a listing) never settles; doctor says so, and --fix does."""
    root = seeded(tmp_path)
    kill_at("archive-changed", tmp_path, workbench_cmd("sessions", "rename", "s1", "Tea talk", "--home", str(root)))
    later = FixedClock(time.time() + 120)  # past the minute any live change takes
    home = open_home(root, read_only=True, clock=later)
    [finding] = [f for f in run_doctor(home).findings if f.area == "journal"]
    home.close()
    assert finding.severity == "warning" and "(sessions: 1)" in finding.what and finding.repair == "journal.settle"
    assert pending(root) == ["title"]
    home = open_home(root, clock=later)
    report = run_doctor(home, fix=True)
    home.close()
    assert pending(root) == [] and not [f for f in report.findings if f.area == "journal" and f.needs_attention]
    assert [r["repair"] for r in report.repairs if r["success"]] == ["journal.settle"]  # --fix says what it did


def test_doctor_fix_reports_settling_a_memory_write_the_checks_settled_first(tmp_path, home):
    """Opening the memory store writable settles its rows, so a check that read memory settled the
    row before the settle step ran and --fix said nothing at all: 'repairs: []', 'all good'."""
    home.memory.add("memory", "Uses Postgres", None)
    row = home.journal.begin("memory", "add", "memory", actor="user", after="Uses MySQL")
    root = home.root
    home.close()
    home = open_home(root, clock=FixedClock(time.time() + 120))
    report = run_doctor(home, fix=True)
    assert [r["repair"] for r in report.repairs if r["success"]] == ["journal.settle"]
    assert home.journal.get(row).status == "abandoned"
    home.close()
