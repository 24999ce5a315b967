"""A workbench.db that cannot be read (truncated, not SQLite, a folder): the files are still shown,
every screen and command that needs the journal names workbench.db and says what to do, and every
write is refused, changing nothing."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from engine.errors import WorkbenchError
from engine.home import open_home
from engine.tools import FOREGROUND
from tests.cli_support import ran
from tests.hermes_support import workbench_cmd
from tests.test_skills_support import write_skill
from tests.tui_support import drawn, make_app, settle, wait_for

DAMAGES = ("truncated", "random bytes", "folder")


def _healthy_home(root: Path) -> Path:
    home = open_home(root)
    home.memory.add("memory", "Ledger runs on Postgres 16")
    write_skill(home, "deploy-staging", "devops")
    home.approvals.stage(
        subsystem="memory",
        action="add",
        summary="add to memory: Prefers tea",
        origin=FOREGROUND,
        payload={"action": "add", "target": "memory", "content": "Prefers tea"},
    )
    home.archive.create_session("20261129_090000_aaaaaa", source="cli", title="Garden plans")
    home.archive.append_message("20261129_090000_aaaaaa", "user", "I grow tomatoes on the balcony")
    for n in range(40):  # a journal of some pages, so a third of it cuts through its tables
        home.memory.add("user", f"fact number {n} " + "x" * 200)
        home.memory.remove_exact("user", f"fact number {n} " + "x" * 200)
    home.close()
    return root


def _damage(root: Path, how: str) -> None:
    db = root / "workbench.db"
    for extra in ("workbench.db-wal", "workbench.db-shm"):
        (root / extra).unlink(missing_ok=True)
    if how == "truncated":
        os.truncate(db, db.stat().st_size // 3)
    elif how == "random bytes":
        db.write_bytes(os.urandom(60_000))
    else:
        db.unlink()
        db.mkdir()


def _damaged_deep(root: Path) -> Path:
    """A home whose workbench.db reads fine up to its schema and is torn in every table."""
    _healthy_home(root)
    db = root / "workbench.db"
    for extra in ("workbench.db-wal", "workbench.db-shm"):
        (root / extra).unlink(missing_ok=True)
    pages = db.stat().st_size // 4096
    with open(db, "r+b") as file:
        for page in range(2, pages):  # every page but the schema's: the journal's rows and indexes
            file.seek(page * 4096)
            file.write(os.urandom(4096))
    return root


@pytest.fixture(params=DAMAGES)
def damaged(request, tmp_path) -> Path:
    root = _healthy_home(tmp_path / "home")
    _damage(root, request.param)
    return root


def test_the_files_are_still_read_and_every_write_is_refused_naming_workbench_db(damaged):
    home = open_home(damaged)
    try:
        problem = home.journal.problem()
        assert problem and str(damaged / "workbench.db") in problem
        assert home.memory.entries("memory") == ["Ledger runs on Postgres 16"]
        assert [s.name for s in home.skills.list()] == ["deploy-staging"]
        assert [r.summary for r in home.approvals.list()] == ["add to memory: Prefers tea"]
        before = (damaged / "memories" / "MEMORY.md").read_bytes()
        with pytest.raises(WorkbenchError, match="workbench.db"):
            home.memory.add("memory", "Prefers tea")
        with pytest.raises(WorkbenchError, match="workbench.db"):
            home.approvals.approve(home.approvals.list()[0].id)
        assert (damaged / "memories" / "MEMORY.md").read_bytes() == before
        assert len(home.approvals.list()) == 1
    finally:
        home.close()


def test_the_cli_lists_what_is_on_disk_and_names_workbench_db_when_it_refuses(damaged):
    listed = subprocess.run(
        workbench_cmd("--home", str(damaged), "skills", "list"), capture_output=True, text=True, timeout=60
    )
    assert listed.returncode == 0 and "deploy-staging" in listed.stdout
    assert "warning: shown without the journal:" in listed.stderr and "workbench.db" in listed.stderr
    shown = subprocess.run(
        workbench_cmd("--home", str(damaged), "memory", "show"), capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 0 and "Ledger runs on Postgres 16" in shown.stdout
    added = subprocess.run(
        workbench_cmd("--home", str(damaged), "--json", "memory", "add", "Prefers tea"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert added.returncode == 1 and "Traceback" not in added.stderr
    error = json.loads(added.stdout)["error"]
    assert str(damaged / "workbench.db") in error and "a file in" not in error


@pytest.mark.parametrize(
    "command, shows",
    [
        (("memory", "show"), "Ledger runs on Postgres 16"),
        (("skills", "list"), "deploy-staging"),
        (("sessions", "show", "20261129_090000_aaaaaa"), "I grow tomatoes on the balcony"),
    ],
)
def test_reading_commands_show_the_files_when_the_damage_is_deep_in_a_table(tmp_path, command, shows):
    """Its first page read fine, so the commands read on, met the torn page in the journal and
    stopped: `memory show` and `skills list` printed only the error, though nothing they list is in it."""
    root = _damaged_deep(tmp_path / "home")
    done = subprocess.run(workbench_cmd("--home", str(root), *command), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and shows in done.stdout, done.stderr
    assert done.stderr.startswith(f"warning: shown without the journal: {root / 'workbench.db'} could not be read")


@pytest.mark.anyio
async def test_every_screen_says_workbench_db_cannot_be_read_and_still_shows_the_files(damaged, tmp_path):
    home = open_home(damaged)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        for key, shows in (
            ("1", "Ledger runs on Postgres 16"),
            ("2", "I grow tomatoes on the balcony"),  # the tree and the transcript (write markers need no journal)
            ("3", "deploy-staging"),
            ("4", "Prefers tea"),
        ):
            await pilot.press(key)
            await settle(pilot)
            banner = app.screen.query_one("#journal-problem")
            await wait_for(pilot, lambda b=banner: b.display, what="the workbench.db banner")
            assert "workbench.db" in str(banner.render())
            await wait_for(pilot, lambda s=shows: s in drawn(app), what=shows)
            if key == "1":  # an entry's story needs the journal: why it cannot be told, in its place
                await wait_for(pilot, lambda: "came from cannot be told:" in drawn(app), what="the detail")
        assert not [n.message for n in app._notifications if n.title.startswith("Something went wrong")]
    home.close()


def test_damage_deep_in_a_table_leaves_the_files_shown_and_is_then_said_by_problem(tmp_path):
    """The first page read fine, so ``problem`` said nothing; a store settling as it opened met the
    torn page and raised, so even reading MEMORY.md failed."""
    root = _damaged_deep(tmp_path / "home")
    db = root / "workbench.db"
    home = open_home(root)
    try:
        assert home.memory.entries("memory") == ["Ledger runs on Postgres 16"]
        with pytest.raises(WorkbenchError, match="workbench.db"):
            home.memory.add("memory", "Prefers tea")
        problem = home.journal.problem()
        assert problem and str(db) in problem and "could not be read as an SQLite database" in problem
    finally:
        home.close()


def test_a_turn_is_refused_before_it_starts_naming_workbench_db(damaged):
    """A turn ran, then could not be stored: the session row was made in state.db without its
    title or messages and left open, and quitting asked to drop messages state.db never refused."""
    from engine.conversation import Conversation
    from engine.models import OfflineModel

    home = open_home(damaged)
    try:
        sessions = [s.id for s in home.archive.list_sessions()]
        conversation = Conversation(home, OfflineModel())
        with pytest.raises(WorkbenchError, match="workbench.db"):
            conversation.run_turn("hello there")
        assert conversation.agent.unstored == 0
        assert [s.id for s in home.archive.list_sessions()] == sessions
    finally:
        home.close()


@pytest.mark.anyio
async def test_the_run_screen_refuses_a_turn_and_keeps_the_message_in_the_box(damaged, tmp_path):
    from textual.widgets import Input

    from widgets.transcript import Transcript
    from workbench.screens.run import TURN_FAILED_SEE_TRANSCRIPT

    home = open_home(damaged)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("5")
        await settle(pilot)
        await pilot.press(*"hello there", "enter")
        box = app.screen.query_one("#run-input", Input)
        await wait_for(pilot, lambda: not app.screen.running and box.value == "hello there", what="the message back")
        transcript = app.screen.query_one(Transcript)
        await wait_for(
            pilot,
            lambda: any(
                item.content.startswith("turn error: ") and "workbench.db" in item.content for item in transcript.items
            ),
            what="the refusal, whole in the transcript",
        )
        assert TURN_FAILED_SEE_TRANSCRIPT in [n.message for n in app._notifications]
    home.close()


def test_a_hand_edited_row_is_no_damage_to_the_whole_journal(tmp_path):
    """A row whose detail is not JSON made one journal call fail; that marked workbench.db damaged for
    the rest of the process, so every agent turn was refused with advice to throw the history away."""
    import sqlite3

    root = _healthy_home(tmp_path / "home")
    with sqlite3.connect(root / "workbench.db") as conn:
        conn.execute("UPDATE journal SET detail = '{not json' WHERE id = (SELECT max(id) FROM journal)")
    home = open_home(root)
    try:
        with pytest.raises(WorkbenchError, match="workbench.db"):
            home.journal.applied("memory", "abcd1234")  # a journal call that meets the row
        assert home.journal.problem() is None
    finally:
        home.close()


def test_damage_met_by_a_memory_writes_own_journal_rows_names_workbench_db(tmp_path, monkeypatch):
    """A memory write's rows go into its own open transaction: SQLite's error there came out bare (no
    file named), and the damage was not remembered for the next call."""
    import sqlite3

    from engine.journal import Journal

    home = open_home(tmp_path / "home")
    try:

        def torn(*args, **kwargs):
            error = sqlite3.DatabaseError("database disk image is malformed")
            error.sqlite_errorcode = sqlite3.SQLITE_CORRUPT
            raise error

        monkeypatch.setattr(Journal, "_execute", torn)
        with pytest.raises(WorkbenchError, match=str(home.root / "workbench.db")):
            home.memory.add("memory", "Prefers tea")
        assert home.journal.problem() and "could not be read as an SQLite database" in home.journal.problem()
        assert home.memory.entries("memory") == []
    finally:
        monkeypatch.undo()
        home.close()


def test_a_folder_in_place_of_workbench_db_is_seen_even_with_the_files_stamp(tmp_path, monkeypatch):
    """A verdict on workbench.db is kept while its stamp stands. A folder made in its place within one
    tick of the coarse clock file times use can take the file's inode, size (4096) and mtime: the
    folder then passed for the sound file (a flaky TUI test). The kind of file is in the stamp too."""
    import os

    from engine import db as engine_db
    from engine.tools import ToolContext

    home = open_home(tmp_path / "h")
    home.memory.add("memory", "a fact", ToolContext(actor="user"))  # (workbench.db made)
    journal = home.journal
    journal.close()  # (its WAL checkpointed and gone, as between a TUI's writes)
    assert journal.problem() is None  # (a verdict kept for this stamp)
    journal.close()
    path = home.root / "workbench.db"
    was = os.stat(path)
    for name in ("workbench.db", "workbench.db-wal", "workbench.db-shm"):
        (home.root / name).unlink(missing_ok=True)
    path.mkdir()
    real_stat = os.stat

    def as_the_file_was(name, *args, **kwargs):
        info = real_stat(name, *args, **kwargs)
        if str(name) != str(path):
            return info
        fields = list(info)
        fields[1], fields[6] = was.st_ino, was.st_size  # st_ino and st_size as the file's, and its mtime
        return os.stat_result(fields, {"st_mtime_ns": was.st_mtime_ns})

    monkeypatch.setattr(engine_db.os, "stat", as_the_file_was)
    assert "workbench.db" in (journal.problem() or "")


def test_timeline_s_catch_up_on_a_damaged_workbench_db_names_it_and_says_what_to_do(tmp_path):
    """`workbench timeline` warned "outside memory edits not caught up (database disk image is malformed)",
    then the same for skill changes and proposals: no file named, no advice. One warning now names the
    steps it stopped, in the words a journal call's error has (``Journal.noticed``)."""
    root = _damaged_deep(tmp_path / "home")
    code, _, err = ran("--home", str(root), "timeline")
    warnings = [line for line in err.splitlines() if line.startswith("warning: outside")]
    [error] = [line for line in err.splitlines() if line.startswith("error: ")]  # (the listing's own, as before)
    assert code == 1 and "Traceback" not in err
    assert error.startswith(f"error: {root / 'workbench.db'} could not be read as an SQLite database (") and (
        "(`sqlite3 OLD .recover` salvages rows)." in error
    )
    assert warnings == [
        "warning: outside memory edits, skill changes, proposals and sessions not caught up "
        f"({error.removeprefix('error: ')}); the listing may miss them"
    ], err
