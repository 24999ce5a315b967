"""A state.db known to be damaged is left as it is: no idle merges, no layout completion, no WAL
checkpoint into it, and every write (the user's too) is refused with doctor's salvage advice, so
that `sqlite3 state.db .recover` later finds what the damage left. A healthy home still merges."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from engine import FixedClock, open_home
from engine.db import DatabaseDamaged
from tests.cli_support import ran
from tests.hermes_support import workbench_cmd
from tests.tui_support import footer_keys, make_app, settle, wait_for

PAGE = 4096
DAMAGES = ("sessions", "messages_fts_data")  # the repro's page (the sessions table's root), and the index's


def _fragmented(root: Path) -> Path:
    """A home whose search index holds many segments (one per turn), so idle upkeep has merges to do."""
    home = open_home(root, clock=FixedClock(1796040000.0))
    archive = home.archive
    archive.create_session("s1", source="cli", title="Garden plans")
    for table in ("messages_fts", "messages_fts_trigram"):
        archive.conn().execute(f"INSERT INTO {table}({table}, rank) VALUES ('automerge', 0)")
    rng = random.Random(7)
    pool = [f"w{n}" for n in range(3000)]
    for _ in range(12):  # one transaction each: one new segment each
        archive.append_messages("s1", [{"role": "user", "content": " ".join(rng.choices(pool, k=300))}])
    assert archive.merge_work()
    home.close()
    return root


def _damaged(tmp_path: Path, table: str) -> Path:
    """A copy of a fragmented home whose WAL holds a committed write not yet in state.db, and one
    of whose pages (``table``'s root, or a leaf of the search index's) is overwritten with 0xff,
    as the user trial's repro did."""
    source = tmp_path / "source"
    if not source.exists():
        _fragmented(source)
    writer = sqlite3.connect(source / "state.db", isolation_level=None)
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("INSERT INTO state_meta (key, value) VALUES ('left', 'in the wal')")
    root = tmp_path / "damaged"
    shutil.copytree(source, root)  # while the writer is open: the copy's WAL keeps the frames
    writer.close()
    assert (root / "state.db-wal").stat().st_size > 0
    reader = sqlite3.connect(f"file:{root / 'state.db'}?mode=ro", uri=True)
    if table == "sessions":
        page = reader.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    else:  # a leaf: its schema and root still read, so the archive opens and the damage is met later
        page = reader.execute(
            "SELECT max(pageno) FROM dbstat WHERE name = ? AND pagetype = 'leaf'", (table,)
        ).fetchone()[0]
    reader.close()
    assert page
    with open(root / "state.db", "r+b") as file:
        file.seek((page - 1) * PAGE)
        file.write(b"\xff" * PAGE)
    return root


def _digest(root: Path) -> dict[str, str | None]:
    """state.db and its WAL, byte for byte (the -shm is an index of the WAL any reader may rebuild)."""
    found = {}
    for name in ("state.db", "state.db-wal"):
        path = root / name
        found[name] = hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None
    return found


@pytest.fixture(params=DAMAGES)
def damaged(request, tmp_path) -> Path:
    return _damaged(tmp_path, request.param)


@pytest.mark.anyio
async def test_the_tui_opened_and_quit_leaves_a_damaged_state_db_and_its_wal_as_they_were(
    damaged, tmp_path, monkeypatch
):
    from workbench import app as app_module

    monkeypatch.setattr(app_module, "UPKEEP_SECONDS", 0.05)  # idle steps come at once, if they come
    before = _digest(damaged)
    home = open_home(damaged)
    app = make_app(home, tmp_path)

    def warned() -> bool:
        return any("is damaged" in said and ".recover" in said for said in app.problems)

    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: warned() or _digest(damaged) != before, what="the warning, or a write")
        upkeep = [w for w in app.workers if w.group == "upkeep"]
        await wait_for(pilot, lambda: all(w.is_finished for w in upkeep) or not warned(), what="upkeep to give up")
        await pilot.press("ctrl+q")
    home.close()
    assert _digest(damaged) == before
    assert warned()


def test_every_write_is_refused_with_the_salvage_advice_and_nothing_is_checkpointed(damaged):
    before = _digest(damaged)
    home = open_home(damaged)
    try:
        archive = home.archive
        assert archive.vet() is not None and archive.upkeep() == {}
        for write in (
            lambda: archive.append_message("s1", "user", "one more"),
            lambda: archive.set_title("s1", "Renamed"),
            lambda: archive.create_session("s2", source="cli"),
        ):
            with pytest.raises(DatabaseDamaged, match=r"state\.db is damaged .*Nothing was written.*\.recover"):
                write()
    finally:
        home.close()
    assert _digest(damaged) == before


def test_damage_met_by_a_write_refuses_the_next_ones_and_the_close_does_not_checkpoint(tmp_path):
    """Without the check (a CLI command): the write that meets the damage fails, and nothing after
    it, not even the connections' close, writes to the file."""
    root = _damaged(tmp_path, "messages_fts_data")
    before = _digest(root)
    home = open_home(root)
    try:
        archive = home.archive
        assert archive.get_session("s1") is not None  # reading what can be read is fine
        with pytest.raises(sqlite3.DatabaseError):
            archive.append_message("s1", "user", "one more")  # the index's damaged page is met
        assert archive.damage is not None
        with pytest.raises(DatabaseDamaged, match=r"\.recover"):
            archive.set_title("s1", "Renamed")
    finally:
        home.close()
    assert _digest(root) == before


def test_the_cli_reads_and_doctor_fix_leave_a_damaged_state_db_as_it_was(damaged):
    before = _digest(damaged)
    env = {**os.environ, "WORKBENCH_BUSY_TIMEOUT": "1"}
    for command in (("sessions", "list"), ("sessions", "search", "w1"), ("doctor",), ("doctor", "--fix")):
        done = subprocess.run(
            workbench_cmd("--home", str(damaged), *command), capture_output=True, text=True, timeout=120, env=env
        )
        said = done.stderr + done.stdout
        assert "Traceback" not in said
        assert _digest(damaged) == before, command
        if done.returncode:  # a command that met the damage names state.db and how to recover it
            assert "state.db" in said and ".recover" in said, said
    assert ".recover" in done.stdout  # doctor's advice


@pytest.mark.anyio
async def test_damage_is_said_in_one_line_and_whole_in_help(tmp_path):
    """At 80x24 the damage warning (15 lines) and the failed follow of state.db's change stacked over
    the screen (user trial): now the newest problem is one line in place of the one before, and help
    (``?``) has every problem whole."""
    from textual.widgets import Static
    from textual.widgets._toast import Toast

    from workbench.screens.help import HelpScreen

    root = _damaged(tmp_path, "sessions")
    home = open_home(root)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_for(pilot, lambda: any("is damag" in n.message for n in app._notifications), what="the damage")
        for part in ("skills", "sessions"):  # two at once, as the watcher's follows fail together
            logging.getLogger("engine.watch").warning(
                "could not follow the outside change to %s: %s", part, sqlite3.DatabaseError(f"{part} malformed")
            )
        await settle(pilot)
        [toast] = app.screen.query(Toast)
        assert [n.message for n in app._notifications] == ["could not follow the outside change…"]
        assert toast.size.height <= 4, "a title and one line, in its frame"
        await pilot.press("2")
        await settle(pilot)
        assert len(app.screen.query(Toast)) == 1, "not stacked on another screen either"
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        shown = " ".join(str(s.render()) for s in app.screen.query(Static))
        assert "Problems said, newest first" in shown and "state.db .recover" in shown
        assert shown.index("change to sessions") < shown.index("change to skills") < shown.index(".recover")
    home.close()


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("size", "line"),
    [((80, 24), "workbench doctor: state.db is damag…"), ((120, 40), "workbench doctor: state.db is damaged")],
)
async def test_the_damage_notice_says_what_to_do_first(tmp_path, size, line):
    """At 80 columns the damage's line read ``state.db is damaged (SQLite's chec…``: SQLite's words took
    the room and nothing said what to do. The line now names doctor first, with no aside in parentheses."""
    root = _damaged(tmp_path, "sessions")
    home = open_home(root)
    app = make_app(home, tmp_path)
    async with app.run_test(size=size, notifications=True) as pilot:
        await wait_for(pilot, lambda: any("is damag" in n.message for n in app._notifications), what="the damage")
        assert [n.message for n in app._notifications] == [line]
        assert any("SQLite" in said and "`workbench doctor`" in said for said in app.problems)  # (help: whole)
    home.close()


@pytest.mark.anyio
async def test_a_healthy_home_still_gets_its_idle_merges(tmp_path, monkeypatch):
    from workbench import app as app_module

    monkeypatch.setattr(app_module, "UPKEEP_SECONDS", 0.05)
    root = _fragmented(tmp_path / "healthy")
    home = open_home(root)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: home.archive.merge_work() == [], timeout=30, what="the idle merges")
        assert home.archive.damage is None
        assert not any("is damaged" in said for said in app.problems)
        await pilot.press("ctrl+q")
    home.close()


def test_a_damaged_state_db_lacking_part_of_the_layout_is_not_completed_as_it_opens(tmp_path):
    """Opening completes a layout Hermes left partial, a write nobody asked for: not into a damaged file."""
    source = _fragmented(tmp_path / "source")
    conn = sqlite3.connect(source / "state.db", isolation_level=None)
    conn.execute("DROP INDEX idx_sessions_title_unique")
    conn.close()
    root = _damaged(tmp_path, "messages_fts_data")
    before = _digest(root)
    home = open_home(root)
    try:
        assert home.archive.get_session("s1") is not None  # read as it is
        assert home.archive.completed is None and home.archive.damage is not None
    finally:
        home.close()
    assert _digest(root) == before


def test_a_turn_on_a_state_db_known_to_be_damaged_is_refused_before_it_starts(damaged):
    from engine.conversation import Conversation
    from engine.models import OfflineModel

    before = _digest(damaged)
    home = open_home(damaged)
    try:
        assert home.archive.vet() is not None
        conversation = Conversation(home, OfflineModel())
        with pytest.raises(DatabaseDamaged, match=r"state\.db is damaged .*\.recover"):
            conversation.run_turn("hello there")
        assert conversation.agent.unstored == 0  # nothing ran, so nothing waits to be stored
    finally:
        home.close()
    assert _digest(damaged) == before


@pytest.mark.anyio
async def test_the_run_screen_refuses_a_message_on_a_damaged_state_db_and_keeps_it_in_the_box(damaged, tmp_path):
    from textual.widgets import Input

    from widgets.transcript import Transcript

    home = open_home(damaged)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: home.archive.damage is not None, what="the check at start")
        await pilot.press("5")
        await settle(pilot)
        await pilot.press(*"hello there", "enter")
        box = app.screen.query_one("#run-input", Input)
        await wait_for(pilot, lambda: not app.screen.running and box.value == "hello there", what="the message back")
        transcript = app.screen.query_one(Transcript)
        await wait_for(  # (read where it stays: a notice expires, and a slow run outlived one)
            pilot,
            lambda: any(
                item.content.startswith("turn error: ") and "state.db is damaged" in item.content
                for item in transcript.items
            ),
            what="the refusal, whole in the transcript",
        )
    home.close()


def test_damage_in_workbench_db_does_not_mark_a_sound_state_db_damaged(tmp_path):
    """Idle upkeep also writes workbench.db's CJK index; SQLite's 'malformed' from there was taken for
    state.db's, and every later write to a sound state.db was refused with advice to rebuild it (found
    in review). Only state.db's own check marks it damaged."""
    root = tmp_path / "home"
    home = open_home(root)
    home.archive.create_session("s", source="cli")
    home.archive.append_messages("s", [{"role": "user", "content": f"第{i}次数据库迁移 " * 20} for i in range(300)])
    home.archive.bigram_index.refresh()
    home.close()
    db = root / "workbench.db"
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        roots = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name LIKE 'archive_cjk%' AND rootpage"
        ).fetchall()
        size = conn.execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(db.read_bytes())
    for (page,) in roots:
        data[(page - 1) * size : page * size] = b"\xa5" * size
    db.write_bytes(bytes(data))
    home = open_home(root)
    try:
        home.archive.append_messages("s", [{"role": "user", "content": "新的数据库"}])  # (work for the index)
        with pytest.raises(sqlite3.DatabaseError):
            home.archive.upkeep()
        assert home.archive.damage is None
        home.archive.create_session("t", source="cli")  # state.db still takes writes
    finally:
        home.close()


def _lineage_damaged(tmp_path: Path) -> Path:
    """A home whose state.db's parent index (what the Sessions tree reads its roots by) is overwritten, as
    the user trial damaged a copy in the middle: the sessions table itself still reads."""
    root = tmp_path / "lineage-damaged"
    home = open_home(root, clock=FixedClock(1796040000.0))
    for n in range(3):
        home.archive.create_session(f"s{n}", source="cli", title=f"Talk {n}")
    home.close()
    return _overwrite_root(root, "idx_sessions_parent")


def _overwrite_root(root: Path, name: str) -> Path:
    """``root``'s state.db, its WAL checkpointed, with the root page of table or index ``name`` overwritten."""
    db = sqlite3.connect(root / "state.db", isolation_level=None)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0]
    db.close()
    with open(root / "state.db", "r+b") as f:
        f.seek((page - 1) * PAGE)
        f.write(b"\xde\xad" * (PAGE // 2))
    return root


def test_sessions_list_on_a_damaged_state_db_warns_and_says_what_it_read(tmp_path):
    """It printed the list with exit 0 and no word of the damage, while the TUI said only "cannot be read"."""
    root = _lineage_damaged(tmp_path)
    done = subprocess.run(workbench_cmd("sessions", "list", "--home", str(root)), capture_output=True, text=True)
    assert done.returncode == 0 and "Talk 0" in done.stdout and "Traceback" not in done.stderr
    [warning] = [line for line in done.stderr.splitlines() if line.startswith("warning: ")]
    assert warning.startswith(
        "warning: state.db is damaged: the 3 sessions listed are what SQLite could still read (others may be "
        "missing or incomplete, and none can be changed)."
    )
    assert "sqlite3 state.db .recover" in warning
    as_json = subprocess.run(
        workbench_cmd("sessions", "list", "--home", str(root), "--json"), capture_output=True, text=True
    )
    assert json.loads(as_json.stdout)["warning"].startswith("state.db is damaged: the 3 sessions listed")


async def _tree_listing(pilot, roots: int):
    """The Sessions screen (2) opened, once its tree lists ``roots`` roots: the tree."""
    from widgets.lineage_tree import LineageTree
    from workbench.screens.sessions import SessionsScreen

    await pilot.press("2")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, SessionsScreen), what="Sessions")
    tree = pilot.app.screen.query_one(LineageTree)
    await wait_for(pilot, lambda: tree.root_count == roots, what="the sessions read")
    await settle(pilot)
    return tree


@pytest.mark.anyio
async def test_the_sessions_screen_lists_what_a_damaged_state_db_could_read(tmp_path):
    """The screen showed only "The session archive cannot be read" and still offered a, e and D."""
    root = _lineage_damaged(tmp_path)
    home = open_home(root)
    try:
        async with make_app(home, tmp_path).run_test(size=(80, 24)) as pilot:
            tree = await _tree_listing(pilot, 3)
            assert "state.db damaged" in str(tree.border_title)
            assert pilot.app.screen.damaged.startswith("state.db is damaged: the 3 sessions listed")
    finally:
        home.close()


def _messages_damaged(tmp_path: Path) -> Path:
    """A home whose messages table's root page is overwritten, as a truncated copy of a live state.db
    was: the sessions (the tree's roots) still read, the first user message of each (its title) does not."""
    root = tmp_path / "messages-damaged"
    home = open_home(root, clock=FixedClock(1796040000.0))
    for n in range(3):
        home.archive.create_session(f"s{n}", source="cli")  # untitled: the tree names it by its first message
        home.archive.append_messages(f"s{n}", [{"role": "user", "content": f"Talk {n}"}])
    home.close()
    return _overwrite_root(root, "messages")


@pytest.mark.anyio
async def test_the_sessions_screen_says_so_when_damage_stops_it_naming_the_sessions(tmp_path):
    """The roots read, their titles did not: the tree stayed empty, saying only "No session selected."."""
    from workbench.screens.sessions import SessionsScreen

    home = open_home(_messages_damaged(tmp_path))
    try:
        async with make_app(home, tmp_path).run_test(size=(80, 24)) as pilot:
            await pilot.press("2")
            await wait_for(pilot, lambda: isinstance(pilot.app.screen, SessionsScreen), what="Sessions")
            transcript = pilot.app.screen.transcript
            await wait_for(pilot, lambda: "cannot be read" in transcript._placeholder, what="the explanation")
            assert "state.db is damaged" in transcript._placeholder and ".recover" in transcript._placeholder
            # (a, e, D and x were offered, dimmed, and said "Pick a session first" where none can be picked)
            assert await footer_keys(pilot, "a", "e", "D", "x") == {}
    finally:
        home.close()


@pytest.mark.parametrize("table", ["sessions", "messages_fts_data"])
def test_a_run_whose_calls_damage_stopped_says_damaged_not_busy(tmp_path, table):
    """`run --message` on a damaged state.db said "ask for those calls again once state.db is free": it is
    damaged, not busy, and waiting frees nothing."""
    root = _damaged(tmp_path, table)
    done = subprocess.run(
        workbench_cmd("run", "--message", "remember that I like jazz", "--home", str(root), "--json"),
        capture_output=True,
        text=True,
    )
    error = json.loads(done.stdout)["error"]
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "once state.db is free" not in error and "state.db is damaged" in error


def test_sessions_list_on_a_sound_state_db_makes_no_whole_file_check(tmp_path, monkeypatch, capsys):
    """The listing's damage warning first ran SQLite's quick_check over the whole of state.db on every
    `sessions list`: seconds on a Hermes archive of a million messages. A sound one pays one indexed read."""
    from engine.archive import core
    from workbench.cli import main

    root = tmp_path / "sound"
    home = open_home(root, clock=FixedClock(1796040000.0))
    home.archive.create_session("s0", source="cli", title="Talk 0")
    home.close()

    def whole_file_check(*_args, **_kwargs):
        raise AssertionError("a listing ran the whole-file check")

    monkeypatch.setattr(core, "integrity_problems", whole_file_check)
    assert main(["sessions", "list", "--home", str(root)]) == 0
    shown = capsys.readouterr()
    assert "Talk 0" in shown.out and "warning" not in shown.err


def _children_damaged(tmp_path: Path) -> Path:
    """Titled roots (the tree lists them without reading messages), each with an untitled branch, which the
    tree names by its first user message: the messages table's root page is overwritten."""
    root = tmp_path / "children-damaged"
    home = open_home(root, clock=FixedClock(1796040000.0))
    for n in range(2):
        home.archive.create_session(f"r{n}", source="cli", title=f"Root {n}")
        home.archive.create_session(f"b{n}", source="branch", parent_session_id=f"r{n}")
        home.archive.append_messages(f"b{n}", [{"role": "user", "content": f"Branch talk {n}"}])
    home.close()
    return _overwrite_root(root, "messages")


def _status(pilot) -> str:
    return str(pilot.app.screen.query_one("#status").render())


@pytest.mark.anyio
@pytest.mark.parametrize("how", ["expand", "jump"])
async def test_the_sessions_screen_says_so_when_damage_stops_a_branch_or_a_jump_loading(tmp_path, how):
    """Opening a root's branches (right) or jumping to a branch from another screen read the branches' titles
    outside any handling: the worker ended silently, the row stayed closed, no word of the damage."""
    from workbench.messages import JumpToMessage

    home = open_home(_children_damaged(tmp_path))
    try:
        async with make_app(home, tmp_path).run_test(size=(100, 30)) as pilot:
            tree = await _tree_listing(pilot, 2)
            screen, shown = pilot.app.screen, []
            show_status = screen.show_status
            # every line the status shows: a jump's transcript load says its own "Session b0 cannot be read"
            # in the same line, and the later of the two stays
            screen.show_status = lambda text, **kw: (shown.append(str(text)), show_status(text, **kw))[1]
            if how == "expand":
                tree.focus()
                await pilot.press("right")
            else:
                pilot.app.post_message(JumpToMessage("b0", None))
            said = lambda: [t for t in shown if "The session archive cannot be read." in t]  # noqa: E731
            await wait_for(pilot, said, what="the damage")
            assert "state.db is damaged" in said()[0]
    finally:
        home.close()


def _talks_damaged(tmp_path: Path) -> Path:
    """Ended sessions with messages (read by the workers that look a session up), one untitled (named by
    its first message), the messages table's root page overwritten."""
    root = tmp_path / "talks-damaged"
    home = open_home(root, clock=FixedClock(1796040000.0))
    for n in range(2):
        home.archive.create_session(f"r{n}", source="cli", title=f"Root {n}" if n == 0 else None)  # (r1: named by
        home.archive.append_messages(f"r{n}", [{"role": "user", "content": f"Talk {n}"}])  # its first message)
        home.archive.end_session(f"r{n}", "user_exit")
    home.close()
    return _overwrite_root(root, "messages")


WORKERS = {  # the screen's key, and the worker called as its key or event calls it
    "delete": ("2", lambda screen: screen._look("delete", "r0")),
    "archive": ("2", lambda screen: screen._look("archive", "r0")),
    "prune": ("2", lambda screen: screen._look_prune("0.0001")),
    "run-load": ("5", lambda screen: screen.load_session("r0", at_tip=True)),
    "run-gone": ("5", lambda screen: screen.check_gone("r0", reload=True)),
    "run-resume-list": ("5", lambda screen: screen.open_resume()),
}


@pytest.mark.anyio
@pytest.mark.parametrize("worker", WORKERS)
async def test_damage_met_by_a_worker_looking_a_session_up_is_said_with_the_advice(tmp_path, worker):
    """The Sessions screen's delete, archive and prune questions, and the Run screen's transcript loads and
    resume list, read state.db outside any handling of an SQLite error: on damage the worker ended with a
    bare "Something went wrong: DatabaseError: database disk image is malformed", no question, no advice."""
    key, call = WORKERS[worker]
    home = open_home(_talks_damaged(tmp_path))
    try:
        async with make_app(home, tmp_path).run_test(size=(100, 30)) as pilot:
            await pilot.press(key)
            await settle(pilot)
            screen, shown = pilot.app.screen, []
            show_status = screen.show_status  # (the Sessions screen's status line cuts it: see it whole)
            screen.show_status = lambda text, **kw: (shown.append(str(text)), show_status(text, **kw))[1]
            call(screen)
            said = lambda: [  # noqa: E731
                text
                for text in shown + [n.message for n in pilot.app._notifications]
                if "archive cannot be read" in text
            ]
            await wait_for(pilot, said, what="the damage said")
            assert "state.db is damaged" in said()[0] and ".recover" in said()[0]
            assert not [n for n in pilot.app._notifications if "DatabaseError" in n.message]
    finally:
        home.close()


@pytest.mark.anyio
async def test_damage_met_looking_up_a_session_to_resume_is_said_with_the_advice(tmp_path):
    """The resume dialog's lookup said SQLite's bare words ("database disk image is malformed")."""
    from workbench.screens.resume import ResumeDialog

    root = tmp_path / "titles-damaged"
    home = open_home(root, clock=FixedClock(1796040000.0))
    home.archive.create_session("r0", source="cli", title="Root 0")
    home.close()
    home = open_home(_overwrite_root(root, "idx_sessions_title_unique"))  # (a title is looked up by it)
    try:
        async with make_app(home, tmp_path).run_test(size=(100, 30)) as pilot:
            dialog = ResumeDialog([], home.archive.find_session, {})
            pilot.app.push_screen(dialog)
            await settle(pilot)
            await pilot.press(*"Root 1", "enter")
            error = dialog.query_one("#resume-error")
            await wait_for(pilot, lambda: error.display, what="the lookup's answer")
            shown = str(error.render())
            assert shown.startswith("The session archive cannot be read.") and ".recover" in shown, shown
    finally:
        home.close()


@pytest.mark.anyio
async def test_damage_deep_in_workbench_db_met_by_the_timeline_is_said_with_the_advice(tmp_path):
    """A workbench.db whose journal leaf is damaged (its first pages read, so the app opens it): the Timeline's
    load ended with a bare "Something went wrong: DatabaseError: database disk image is malformed", and
    `workbench timeline` said "a file in HOME could not be read": engine.timeline reads the journal on its
    own connection, outside the journal's calls that name workbench.db."""
    from tests.cli_support import ran
    from workbench.screens.timeline import TimelineScreen

    root = tmp_path / "journal-damaged"
    home = open_home(root, clock=FixedClock(1796040000.0))
    for n in range(20):
        home.memory.add("memory", f"fact number {n} " + "x" * 30)
    home.close()
    db = sqlite3.connect(root / "workbench.db", isolation_level=None)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = db.execute("SELECT max(pageno) FROM dbstat WHERE name = 'journal' AND pagetype = 'leaf'").fetchone()[0]
    db.close()
    with open(root / "workbench.db", "r+b") as file:
        file.seek((page - 1) * PAGE)
        file.write(b"\xde\xad" * (PAGE // 2))
    home = open_home(root)
    try:
        async with make_app(home, tmp_path).run_test(size=(120, 40)) as pilot:
            await pilot.press("6")
            await wait_for(pilot, lambda: isinstance(pilot.app.screen, TimelineScreen), what="Timeline")
            detail = pilot.app.screen.query_one("#timeline-detail")
            await wait_for(pilot, lambda: "could not be read" in str(detail.render()), what="the damage said")
            said = " ".join(str(detail.render()).split())
            assert "workbench.db could not be read as an SQLite database" in said and "workbench doctor" in said
            assert not [n for n in pilot.app._notifications if "DatabaseError" in n.message]
    finally:
        home.close()
    status, _, err = ran("--home", str(root), "timeline")
    assert status == 1 and f"error: {root / 'workbench.db'} could not be read as an SQLite database" in err, err


def test_provenance_that_cannot_read_a_damaged_state_db_names_it_and_gives_the_salvage_advice(tmp_path):
    """`memory show` warned "memory provenance cannot read …/state.db: database disk image is malformed", with
    no word of what to do: it now says it as the archive's damage is said everywhere (``Home.archive_unreadable``)."""
    root = tmp_path / "home"
    home = open_home(root, clock=FixedClock(1796040000.0))
    arguments = json.dumps({"action": "add", "target": "memory", "content": "Deploys go out on Tuesdays"})
    call = {"id": "call_0", "type": "function", "function": {"name": "memory", "arguments": arguments}}
    home.archive.create_session("hermes-1", source="cli")
    home.archive.append_messages(
        "hermes-1",
        [
            {"role": "user", "content": "Note when deploys go out"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "content": '{"success": true}', "tool_name": "memory", "tool_call_id": "call_0"},
        ],
    )
    home.close()
    (root / "memories" / "MEMORY.md").write_text(
        "Deploys go out on Tuesdays\n", encoding="utf-8"
    )  # (as Hermes wrote it)
    _overwrite_root(root, "messages")
    code, out, err = ran("memory", "show", "--target", "memory", "--home", str(root))
    assert code == 0 and "Deploys go out on Tuesdays" in out and "Traceback" not in err
    [warning] = [line for line in err.splitlines() if line.startswith("warning: Provenance")]
    assert warning.startswith(
        "warning: Provenance is shown without Hermes's tool calls. The session archive cannot be read. "
        f"{root / 'state.db'} is damaged ("
    )
    assert "`sqlite3 state.db .recover | sqlite3 state-recovered.db`" in warning


@pytest.mark.anyio
async def test_an_outside_change_the_tui_cannot_follow_on_a_damaged_state_db_is_said_with_the_advice(tmp_path):
    """The TUI said "could not follow the outside change to sessions: database disk image is malformed":
    SQLite's own words, naming no file. It says it as every failed read of the archive is said."""
    import asyncio

    root = _messages_damaged(tmp_path)
    home = open_home(root)
    app = make_app(home, tmp_path)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await asyncio.to_thread(app._external_change, {"sessions"})  # (the watcher's thread, as a change calls it)
            said = lambda: [p for p in app.problems if "could not follow the outside change to sessions" in p]  # noqa: E731
            await wait_for(pilot, said, what="the warning")
            [line] = said()
            assert f"{root / 'state.db'} is damaged (" in line and "sqlite3 state.db .recover" in line, line
    finally:
        home.close()
