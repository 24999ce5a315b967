"""Sessions archived, unarchived or deleted outside the workbench become Timeline rows.

Another process (Hermes's ``set_session_archived``, ``delete_session`` or a prune) writes
state.db directly; the workbench notices the sessions table differs from what it last saw
and journals each change once, actor ``external``, while its own changes never read as
outside ones. The real Hermes does the same in ``test_archive_hermes.py``.
"""

from __future__ import annotations

import sqlite3

import pytest

from engine.archive import outside
from engine.timeline import Timeline, describe_group
from tests.tui_support import make_app, wait_for

IDS = ["s1", "s1b", "s2", "s3", "s4"]


def _seeded(home):
    archive = home.archive
    for sid in ("s1", "s2", "s3", "s4"):
        archive.create_session(sid, source="cli", title=f"Talk {sid}")
        archive.append_messages(sid, [{"role": "user", "content": f"hello from {sid}"}])
    archive.create_session("s1b", parent_session_id="s1")
    archive.end_session("s1", "compression")  # s1 -> s1b is one compression chain
    return archive


def _elsewhere(home, *statements):
    """What another process does to state.db: plain SQL, nothing of ours."""
    with sqlite3.connect(home.state_db_path) as conn:
        for statement in statements:
            conn.execute(statement)


def test_outside_archive_and_delete_are_journaled_once_and_ours_never(home):
    archive = _seeded(home)
    assert outside.catch_up(home) == []  # the first look records what is there
    _elsewhere(
        home,
        "UPDATE sessions SET archived = 1 WHERE id IN ('s1', 's1b')",
        "DELETE FROM messages WHERE session_id IN ('s3', 's4')",
        "DELETE FROM sessions WHERE id IN ('s3', 's4')",
    )
    archive.set_archived("s2")  # ours, meanwhile: journaled as ours only
    written = outside.catch_up(home)
    assert len(written) == 3 and outside.catch_up(home) == []
    timeline = Timeline(home)
    rows = timeline.page(subsystem="sessions", actor="external")
    assert [r.summary for r in rows] == [
        "deleted session 'Talk s4', 1 message",
        "deleted session 'Talk s3', 1 message",
        "archived session 'Talk s1' with 1 more of its conversation: hidden from lists and session_search",
    ]
    deletes = rows[:2]
    assert deletes[0].group == deletes[1].group and deletes[0].group.startswith("outside:")
    assert describe_group(deletes) == "outside the workbench (2 rows): 2 sessions deleted"
    assert [r.actor for r in timeline.page(subsystem="sessions", target="s2")] == ["user"]
    assert timeline.revert(str(rows[2].id))["success"]  # unarchived by us: not outside
    archive.delete_session("s2", live=True)
    assert outside.catch_up(home) == []
    assert not archive.get_session("s1").archived and not archive.get_session("s1b").archived


def test_a_change_of_ours_a_kill_left_unnoted_is_not_taken_for_an_outside_one(home, monkeypatch):
    archive = _seeded(home)
    outside.catch_up(home)
    monkeypatch.setattr(outside, "note_archived", lambda *args: None)  # killed between its change and its note
    archive.set_archived("s2")
    assert outside.catch_up(home) == []
    assert [r.actor for r in Timeline(home).page(subsystem="sessions", target="s2")] == ["user"]


def test_a_large_prune_a_kill_left_unnoted_is_not_taken_for_outside_deletes(home, clock, monkeypatch):
    """The prune row named only its first 200 sessions: killed before its note, the rest were
    journaled as deleted by another process."""
    archive = home.archive
    for n in range(250):
        archive.create_session(f"old{n:03}", source="cli")
        archive.end_session(f"old{n:03}", "user_exit")
    clock.advance(40 * 86400)
    outside.catch_up(home)
    monkeypatch.setattr(outside, "note_deleted", lambda *args: None)  # killed between its change and its note
    assert archive.prune(30) == 250
    assert outside.catch_up(home) == []
    assert [r.actor for r in Timeline(home).page(subsystem="sessions")] == ["user"]


def test_an_untitled_session_deleted_outside_is_named_by_its_first_message(home):
    """Hermes titles few sessions: one it deleted was named by its id alone, while a delete of ours
    names it by its first message."""
    archive = home.archive
    archive.create_session("quiet", source="cli")
    outside.catch_up(home)  # seen before its first message: read at the next look
    archive.append_message("quiet", "user", "Remember my kettle descales monthly")
    outside.catch_up(home)
    with home.journal.transaction() as conn:  # a workbench.db from before previews were kept
        conn.execute("DROP TABLE sessions_seen_preview")
    archive.create_session("later", source="cli")
    archive.append_message("later", "user", "What is the wifi password?")
    outside.catch_up(home)
    _elsewhere(home, "DELETE FROM messages", "DELETE FROM sessions")
    outside.catch_up(home)
    rows = Timeline(home).page(subsystem="sessions", actor="external")
    assert sorted(r.summary for r in rows) == [
        "deleted session “Remember my kettle descales monthly”, 1 message",
        "deleted session “What is the wifi password?”, 1 message",
    ]


def test_a_branch_and_its_parent_archived_outside_are_two_rows(home):
    """Flipped sessions were grouped by lineage, a branch with the parent it came from, though
    only compression makes one conversation of them."""
    archive = _seeded(home)
    archive.end_session("s2", "branched")
    archive.create_session("s2b", source="cli", title="Branch of s2", parent_session_id="s2")
    outside.catch_up(home)
    _elsewhere(home, "UPDATE sessions SET archived = 1 WHERE id IN ('s2', 's2b', 's1', 's1b')")
    outside.catch_up(home)
    assert sorted(_outside_actions(home)) == [("archive", "s1"), ("archive", "s2"), ("archive", "s2b")]


def test_the_first_message_of_a_session_gone_is_not_kept(home):
    archive = home.archive
    for sid in ("quiet", "mine"):
        archive.create_session(sid, source="cli")
        archive.append_message(sid, "user", f"first words of {sid}")
    outside.catch_up(home)
    archive.delete_session("mine", live=True)
    _elsewhere(home, "DELETE FROM messages WHERE session_id = 'quiet'", "DELETE FROM sessions WHERE id = 'quiet'")
    outside.catch_up(home)
    assert [r.summary for r in Timeline(home).page(subsystem="sessions", actor="external")] == [
        "deleted session “first words of quiet”, 1 message"
    ]
    assert home.journal.connection().execute("SELECT count(*) FROM sessions_seen_preview").fetchone()[0] == 0


def test_a_read_only_home_or_one_without_sessions_journals_nothing(home, tmp_path):
    from engine import open_home

    assert outside.catch_up(home) == []  # no state.db yet: nothing made
    assert not home.state_db_path.exists()
    _seeded(home)
    home.close()
    reader = open_home(home.root, read_only=True)
    try:
        assert outside.catch_up(reader) == []
    finally:
        reader.close()


@pytest.mark.anyio
async def test_the_tui_journals_what_another_process_archived_while_it_runs(home, tmp_path):
    _seeded(home)
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: _seen(home), timeout=10, what="the first look at the sessions")
        _elsewhere(home, "UPDATE sessions SET archived = 1 WHERE id = 's4'")
        await wait_for(
            pilot,
            lambda: [r.action for r in home.journal.query(subsystem="sessions", actor="external")] == ["archive"],
            timeout=10,
            what="the outside archive journaled",
        )


def _seen(home) -> bool:
    try:
        return home.journal.connection().execute("SELECT count(*) FROM sessions_seen").fetchone()[0] == len(IDS)
    except sqlite3.OperationalError:
        return False


def _outside_actions(home):
    return [(r.action, r.target) for r in home.journal.query(subsystem="sessions", actor="external")]


def test_an_outside_change_after_one_of_ours_to_the_same_session_is_still_journaled(home):
    """A rename of ours, or our own archive, once hid every later outside change to that session."""
    archive = _seeded(home)
    outside.catch_up(home)
    archive.set_title("s3", "Renamed by us")
    _elsewhere(home, "DELETE FROM messages WHERE session_id = 's3'", "DELETE FROM sessions WHERE id = 's3'")
    outside.catch_up(home)
    assert _outside_actions(home) == [("delete", "s3")]
    archive.set_archived("s2")
    _elsewhere(home, "UPDATE sessions SET archived = 0 WHERE id = 's2'")  # Hermes undoes ours: the table as marked
    outside.catch_up(home)
    assert _outside_actions(home)[0] == ("unarchive", "s2")


def test_a_session_deleted_and_another_made_in_its_rowid_is_seen(home, clock):
    archive = _seeded(home)
    archive.create_session("s9", source="cli")  # the newest rowid
    outside.catch_up(home)
    _elsewhere(home, "DELETE FROM sessions WHERE id = 's9'")
    clock.advance(60)
    archive.create_session("s10", source="cli")  # same count, and SQLite reuses the freed rowid
    rowids = dict(sqlite3.connect(home.state_db_path).execute("SELECT id, rowid FROM sessions").fetchall())
    assert rowids["s10"] == len(rowids)
    outside.catch_up(home)
    assert _outside_actions(home) == [("delete", "s9")]


def test_timeline_lists_with_a_warning_when_the_archive_is_locked_past_the_busy_timeout(home, tmp_path):
    import os
    import subprocess

    from tests.hermes_support import workbench_cmd

    _seeded(home)
    with home.archive.changing():  # another workbench process mid-change, for longer than the timeout
        listed = subprocess.run(
            workbench_cmd("timeline", "--home", str(home.root), "--json"),
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "WORKBENCH_BUSY_TIMEOUT": "0.2"},
        )
    assert listed.returncode == 0 and "Traceback" not in listed.stderr
    assert "warning: outside sessions not caught up (" in listed.stderr
    assert "the listing may miss them" in listed.stderr and "rows" in listed.stdout


def test_an_outside_archive_row_is_found_by_every_session_it_flipped(home):
    """Keyed to the chain's first session, Hermes's archive of a chain was missed by `session:` on the others."""
    _seeded(home)
    outside.catch_up(home)
    _elsewhere(home, "UPDATE sessions SET archived = 1 WHERE id IN ('s1', 's1b')")
    outside.catch_up(home)
    timeline = Timeline(home)
    [row] = timeline.page(subsystem="sessions", session_id="s1b")
    assert (row.action, row.target) == ("archive", "s1")
    assert [r.id for r in timeline.page(session_id="s1")] == [row.id]
    assert timeline.page(subsystem="sessions", session_id="s2") == []


def _racing(archive, monkeypatch, *statements):
    """Another program's change landing between our look at the flags and our write."""
    write = archive._write

    def raced():
        _elsewhere(archive.home, *statements)
        return write()

    monkeypatch.setattr(archive, "_write", raced)


def test_a_flip_another_program_made_between_our_look_and_our_write_is_not_named_ours(home, monkeypatch):
    archive = _seeded(home)
    outside.catch_up(home)
    _racing(archive, monkeypatch, "UPDATE sessions SET archived = 1 WHERE id = 's1b'")
    assert archive.set_archived("s1") == 1
    monkeypatch.undo()
    ours = home.journal.query(subsystem="sessions", actor="user")
    assert [r.detail["sessions"] for r in ours] == [["s1"]]
    outside.catch_up(home)
    assert _outside_actions(home) == [("archive", "s1b")]
    assert Timeline(home).revert(str(ours[0].id))["success"]
    assert not archive.get_session("s1").archived and archive.get_session("s1b").archived


def test_an_archive_another_program_made_whole_meanwhile_changes_nothing_of_ours(home, monkeypatch):
    archive = _seeded(home)
    outside.catch_up(home)
    _racing(archive, monkeypatch, "UPDATE sessions SET archived = 1 WHERE id IN ('s1', 's1b')")
    assert archive.set_archived("s1") == 0
    monkeypatch.undo()
    assert [r.status for r in home.journal.query(subsystem="sessions", actor="user", include_pending=True)] == [
        "abandoned"
    ]
    assert Timeline(home).page(subsystem="sessions", actor="user") == []
    outside.catch_up(home)
    assert _outside_actions(home) == [("archive", "s1")]
