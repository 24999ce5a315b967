"""A turn state.db would not take as its conversation was left: kept in workbench.db, stored once later.

Real parts: real SQLite files, a separate process holding state.db's write lock, the CLI
run as a process of its own, and processes killed part way through the late store. Where
a command only sets the scene or its words are the point, it runs in this process.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import time
from unittest import mock

import pytest

from engine import open_home
from engine.conversation import Conversation
from engine.events import KeptStored, RunnerEvent
from engine.kept import STORED_LATER
from engine.models import OfflineModel
from engine.runner import AgentSession
from tests.cli_support import completed
from tests.conftest import FIXED_NOW
from tests.hermes_support import workbench_cmd
from tests.lock_support import holding_write_lock

BUSY = {**os.environ, "WORKBENCH_BUSY_TIMEOUT": "0.3"}


def with_state_db(root):
    home = open_home(root)
    home.archive.list_sessions()  # state.db exists, so the other process locks it rather than makes it
    home.close()
    return root


def workbench(*args: str, env=BUSY) -> subprocess.CompletedProcess:
    return subprocess.run(workbench_cmd(*args), capture_output=True, text=True, timeout=120, env=env)


def here(*args: str, busy_timeout: str = "0.3") -> subprocess.CompletedProcess:
    """``workbench`` answered as above but run in this process (``tests/cli_support.py``)."""
    with mock.patch.dict(os.environ, {"WORKBENCH_BUSY_TIMEOUT": busy_timeout}):
        return completed(*args)


def kept_rows(root) -> list[dict]:
    with sqlite3.connect(root / "workbench.db") as conn:
        try:
            rows = conn.execute("SELECT session_id, end_reason, unstored FROM kept_messages ORDER BY id").fetchall()
        except sqlite3.OperationalError:
            return []
    return [{"session_id": sid, "end_reason": end, **json.loads(unstored)} for sid, end, unstored in rows]


def stored(root, session_id: str) -> tuple[tuple, list[tuple]]:
    """The session's row and its messages, as state.db holds them."""
    with sqlite3.connect(root / "state.db") as conn:
        session = conn.execute(
            "SELECT title, source, model, started_at, end_reason, message_count, system_prompt IS NOT NULL, "
            "input_tokens, output_tokens FROM sessions WHERE id = ?",
            (session_id,),
        ).fetchone()
        messages = conn.execute(
            "SELECT role, content, timestamp FROM messages WHERE session_id = ? ORDER BY id", (session_id,)
        ).fetchall()
    return session, messages


@contextlib.contextmanager
def state_db_locked(root):
    """state.db's write lock held by another process meanwhile."""
    holder = holding_write_lock(root / "state.db")
    try:
        yield
    finally:
        holder.kill()
        holder.wait()


def run_while_locked(root, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    """`workbench run --json ARGS`, in this process, with state.db's write lock held by another process
    throughout."""
    with state_db_locked(root):
        proc = here("--home", str(root), "--json", "run", *args)
    return proc, json.loads(proc.stdout)


def test_a_run_under_a_held_lock_keeps_its_turn_and_the_next_command_stores_it_once(tmp_path):
    """The turn ran, storing failed, the end failed again, the refusal was printed and the turn was gone."""
    root = with_state_db(tmp_path / "home")
    with state_db_locked(root):  # (a process of its own: its exit status)
        proc = workbench("--home", str(root), "--json", "run", "--message", "hello there")
    out = json.loads(proc.stdout)
    assert proc.returncode == 1
    sid = out["session_id"]
    assert out["success"] is False and out["kept_messages"] == 2
    assert "2 messages of session" in out["error"] and "kept in workbench.db" in out["error"]
    assert out["error"].endswith(f"They are kept in workbench.db. {STORED_LATER}")
    assert [t["status"] for t in out["turns"]] == ["done"]
    (kept,) = kept_rows(root)
    assert kept["session_id"] == sid and kept["end_reason"] == "cli_close" and len(kept["rows"]) == 2
    assert stored(root, sid) == (None, []), "nothing of it in state.db yet"

    listing = workbench("--home", str(root), "--json", "sessions", "list")  # a read-only command stores them too
    assert listing.returncode == 0 and sid in listing.stdout
    assert kept_rows(root) == []
    session, messages = stored(root, sid)
    said = [row["timestamp"] for row in kept["rows"]]
    # (started when its id was made, just before its first message: the time the id spells)
    assert session[:6] == ("hello there", "cli", "offline", kept["started_at"], "cli_close", 2)
    assert kept["started_at"] <= said[0]
    assert session[6] == 1, "its system prompt is stored"
    assert [(role, at) for role, _, at in messages] == [("user", said[0]), ("assistant", said[1])]
    assert messages[0][1] == "hello there"
    workbench("--home", str(root), "doctor")
    assert len(stored(root, sid)[1]) == 2, "stored once"


def test_the_late_store_leaves_state_db_as_an_unbusy_store_would_have(tmp_path, clock, monkeypatch):
    """The same turn in two homes, one whose state.db was busy as it ended: after the late store the
    session rows (title, start, prompt, tokens, end) and the messages are the same."""
    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "0.3")

    class Reporting(OfflineModel):  # an API that reports usage: the token counters are stored once
        def complete(self, messages, tools):
            reply = super().complete(messages, tools)
            reply.usage = {"prompt_tokens": 120, "completion_tokens": 8}
            return reply

    def end_a_turn(root, locked: bool):
        clock.set(FIXED_NOW)
        home = open_home(with_state_db(root), clock=clock)
        session = AgentSession(home, Reporting(), session_id="20261130_120000_aaaaaa")
        try:
            with state_db_locked(root) if locked else contextlib.nullcontext():
                session.run_turn("hello, what can you do?")
                session.run_turn("thanks")
                clock.advance(30)
                return session.end("cli_close")
        finally:
            home.close()

    def everything(root):
        with sqlite3.connect(root / "state.db") as conn:
            return conn.execute("SELECT * FROM sessions").fetchall(), conn.execute("SELECT * FROM messages").fetchall()

    assert end_a_turn(tmp_path / "calm", locked=False) is None
    kept = end_a_turn(tmp_path / "busy", locked=True)
    assert kept is not None and kept.messages == 4
    open_home(tmp_path / "busy", clock=clock).close()  # the next open stores them
    assert everything(tmp_path / "busy") == everything(tmp_path / "calm")
    session, _ = stored(tmp_path / "busy", "20261130_120000_aaaaaa")
    assert session[4:6] == ("cli_close", 4) and session[7:] == (240, 16), "two requests' tokens, counted once"


def test_two_processes_settling_at_once_store_once(tmp_path):
    root = with_state_db(tmp_path / "home")
    proc, out = run_while_locked(root, "--message", "first", "--message", "second")
    assert out["kept_messages"] == 4
    procs = [subprocess.Popen(workbench_cmd("--home", str(root), "sessions", "list"), env=BUSY) for _ in range(4)]
    for each in procs:
        assert each.wait(120) == 0
    assert kept_rows(root) == []
    _, messages = stored(root, out["session_id"])
    assert [content for _, content, _ in messages if content in ("first", "second")] == ["first", "second"]
    assert len(messages) == 4


def test_a_store_paused_before_it_forgot_its_row_is_left_alone_then_finished_once(tmp_path):
    """While one process stores (paused after state.db took the messages and the session's end, before
    workbench.db forgot them) another finds the store under way and leaves it; killed there, the
    next process finishes it without storing anything twice."""
    root = with_state_db(tmp_path / "home")
    _, out = run_while_locked(root, "--message", "hello there")
    sid = out["session_id"]
    marker = tmp_path / "paused-kept-stored"
    env = {**BUSY, "WORKBENCH_CRASH_POINT": "kept-stored", "WORKBENCH_CRASH_MARKER": str(marker)}
    paused = subprocess.Popen(workbench_cmd("--home", str(root), "sessions", "list"), env=env)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and paused.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists()
        assert workbench("--home", str(root), "sessions", "list").returncode == 0
        assert len(stored(root, sid)[1]) == 2 and len(kept_rows(root)) == 1
    finally:
        paused.kill()
        paused.wait(10)
    assert workbench("--home", str(root), "sessions", "list").returncode == 0
    assert kept_rows(root) == []
    session, messages = stored(root, sid)
    assert len(messages) == 2 and session[4:6] == ("cli_close", 2)


def test_a_session_deleted_after_its_messages_were_kept_stays_deleted(tmp_path, caplog):
    """Its first turn was stored; the next was kept; then it was deleted (in Hermes, say). Storing the
    kept turn would bring part of a deleted conversation back where the agent recalls it."""
    root = with_state_db(tmp_path / "home")
    first = here("--home", str(root), "--json", "run", "--message", "hello there")
    sid = json.loads(first.stdout)["session_id"]
    _, out = run_while_locked(root, "--session", sid, "--message", "my new secret")
    assert out["kept_messages"] == 2
    with sqlite3.connect(root / "state.db") as conn:  # deleted by another program
        conn.execute("DELETE FROM messages WHERE session_id = ?", (sid,))
        conn.execute("DELETE FROM sessions WHERE id = ?", (sid,))
    with sqlite3.connect(root / "workbench.db") as conn:  # a watching TUI saw it go: a delete row says so
        conn.execute(
            "INSERT INTO journal (at, actor, subsystem, action, target, detail) VALUES (?, 'external', 'sessions', "
            "'delete', ?, ?)",
            (time.time(), sid, json.dumps({"deleted": [sid]})),
        )
    open_home(root).close()
    assert kept_rows(root) == []
    assert stored(root, sid) == (None, [])
    assert "were not stored: the session was deleted after they were kept" in caplog.text


def test_a_session_gone_with_no_row_saying_it_was_deleted_is_made_again_for_its_kept_turn(tmp_path, caplog):
    """state.db put back from a backup that predates the session: its kept turn was dropped as if the
    session had been deleted on purpose."""
    root = with_state_db(tmp_path / "home")
    first = here("--home", str(root), "--json", "run", "--message", "hello there")
    sid = json.loads(first.stdout)["session_id"]
    _, out = run_while_locked(root, "--session", sid, "--message", "my new secret")
    assert out["kept_messages"] == 2
    with sqlite3.connect(root / "state.db") as conn:  # as a backup from before the session has it
        conn.execute("DELETE FROM messages WHERE session_id = ?", (sid,))
        conn.execute("DELETE FROM sessions WHERE id = ?", (sid,))
    open_home(root).close()
    assert kept_rows(root) == []
    session, messages = stored(root, sid)
    assert session is not None and [content for role, content, _ in messages if role == "user"] == ["my new secret"]
    assert f"Session {sid} is not in state.db; it is made again for its kept messages" in caplog.text


def test_doctor_names_what_is_kept_while_state_db_is_still_busy(tmp_path):
    root = with_state_db(tmp_path / "home")
    _, out = run_while_locked(root, "--message", "hello there")
    with state_db_locked(root):
        started = time.monotonic()
        proc = here("--home", str(root), "--json", "doctor", busy_timeout="60")
        took = time.monotonic() - started
    (finding,) = [f for f in json.loads(proc.stdout)["findings"] if "kept in workbench.db" in f["what"]]
    assert finding["severity"] == "warning" and f"2 messages of session {out['session_id']}" in finding["what"]
    assert finding["fix"] == "They are stored automatically when state.db is free; run any workbench command."
    assert len(kept_rows(root)) == 1 and took < 30, "a busy state.db leaves them kept; the open did not wait"
    free = here("--home", str(root), "--json", "doctor")  # state.db free: doctor reports, it does not store
    assert any("kept in workbench.db" in f["what"] for f in json.loads(free.stdout)["findings"])
    assert len(kept_rows(root)) == 1 and stored(root, out["session_id"]) == (None, [])


@pytest.mark.parametrize("as_json", [False, True])
def test_what_the_run_says_is_plain_and_shows_control_characters_as_symbols(tmp_path, as_json):
    root = with_state_db(tmp_path / "home")
    with state_db_locked(root):
        proc = workbench("--home", str(root), *(["--json"] if as_json else []), "run", "--message", "hi\x1b[31m there")
    assert proc.returncode == 1 and "\x1b" not in proc.stdout + proc.stderr
    if not as_json:
        assert "error: 2 messages of session" in proc.stderr and "kept in workbench.db" in proc.stderr
    (kept,) = kept_rows(root)
    assert kept["rows"][0]["content"] == "hi\x1b[31m there", "kept as it was said"


def test_a_session_switched_away_from_while_state_db_is_busy_is_kept_and_ended_later(home, clock, monkeypatch):
    """ctrl+l (or a resume) after a turn state.db did not take: the switch failed, and the turn with it."""
    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "0.3")
    home.archive.list_sessions()
    conversation = Conversation(home, OfflineModel())
    heard = []
    home.bus.subscribe(lambda event: heard.append(event) if event.kind == "messages_kept" else None, RunnerEvent)
    with state_db_locked(home.root):
        conversation.run_turn("hello there")
        left = conversation.id
        assert conversation.switch_session() != left, "it goes on in a new session"
    assert [event.data["messages"] for event in heard] == [2] and heard[0].session_id == left
    assert "kept in workbench.db" in heard[0].data["text"]
    conversation.run_turn("and now?")  # (state.db is free: the new session stores as usual)
    open_home(home.root, clock=clock).close()
    assert [m.content for m in home.archive.messages(left)][:1] == ["hello there"]
    assert home.archive.get_session(left).end_reason == "new_session"  # as Hermes's /new ends it, once stored
    conversation.end()


def test_the_next_turn_state_db_takes_stores_what_a_switch_kept(home, clock, monkeypatch):
    """What a switch kept while state.db was busy waited for the next start of the workbench, though
    the same agent's next turn showed state.db taking writes again."""
    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "0.3")
    home.archive.list_sessions()
    conversation = Conversation(home, OfflineModel())
    heard = []
    home.bus.subscribe(heard.append, KeptStored)
    with state_db_locked(home.root):
        conversation.run_turn("hello there")
        left = conversation.id
        conversation.switch_session()
    assert kept_rows(home.root) and home.archive.get_session(left) is None
    conversation.run_turn("and now?")
    assert not kept_rows(home.root)
    assert [m.content for m in home.archive.messages(left)][:1] == ["hello there"]
    assert heard and home.take_kept_stored() == [
        f"2 messages of session {left} kept in workbench.db are stored in state.db now."
    ]
    conversation.end()


def test_a_scenario_stops_at_the_end_of_a_session_state_db_did_not_take(tmp_path):
    root = with_state_db(tmp_path / "home")
    proc, out = run_while_locked(root, "--scenario", "smoke")
    assert proc.returncode == 1 and out["kept_messages"] > 0 and "kept in workbench.db" in out["error"]
    here("--home", str(root), "sessions", "list")
    assert kept_rows(root) == []


def test_a_session_hermes_resumed_before_the_late_store_is_left_as_hermes_has_it(tmp_path, hermes, caplog):
    """The late store appended the kept turn to a session Hermes had resumed meanwhile (Hermes reads a
    session in insertion order, so it read as said after Hermes's turn, perhaps between a tool call
    and its result) and then ended it under Hermes."""
    root = with_state_db(tmp_path / "home")
    first = here("--home", str(root), "--json", "run", "--message", "hello there")
    sid = json.loads(first.stdout)["session_id"]
    _, out = run_while_locked(root, "--session", sid, "--message", "and a second turn")
    assert out["kept_messages"] == 2
    time.sleep(0.05)  # Hermes's next message is said after the kept ones
    hermes.run(
        root,
        f"""
        from hermes_state import SessionDB
        db = SessionDB()
        db.reopen_session({sid!r})
        db.append_message({sid!r}, "user", "back in Hermes")
        """,
    )
    open_home(root).close()  # the late store
    assert kept_rows(root) == []
    session, messages = stored(root, sid)
    assert session[4] is None, "the session Hermes goes on with stays open"
    assert [content for role, content, _ in messages if role == "user"] == ["hello there", "back in Hermes"]
    with sqlite3.connect(root / "state.db") as conn:
        [(child, reason)] = conn.execute(
            "SELECT id, end_reason FROM sessions WHERE parent_session_id = ?", (sid,)
        ).fetchall()
    child_session, child_messages = stored(root, child)
    assert [content for role, content, _ in child_messages if role == "user"] == ["and a second turn"]
    assert reason == "cli_close" and len(child_messages) == 2
    assert f"stored as session {child}, a child of it" in caplog.text


def test_a_late_store_that_fails_part_way_leaves_nothing_half_written(tmp_path, monkeypatch):
    """Each step was its own transaction: a failure after the session row was made left Hermes an
    empty titled session (and a busy state.db met between steps was waited out, step by step)."""
    from engine.archive import SessionArchive

    root = with_state_db(tmp_path / "home")
    _, out = run_while_locked(root, "--message", "hello there")
    sid = out["session_id"]

    def broken(self, session_id, rows):
        raise sqlite3.OperationalError("disk I/O error")

    with monkeypatch.context() as patched:
        patched.setattr(SessionArchive, "append_messages", broken)
        open_home(root).close()
    assert stored(root, sid) == (None, []), "the session row went with the failed append"
    assert len(kept_rows(root)) == 1
    open_home(root).close()
    assert len(stored(root, sid)[1]) == 2 and kept_rows(root) == []


@pytest.mark.parametrize(("message", "calls"), [("hello there", False), ("remember that I like jazz", True)])
def test_what_a_run_under_a_held_lock_says_is_true_of_its_turn(tmp_path, message, calls):
    """It said "Nothing was changed. Retry when it is done" of a turn it kept (retrying would say it
    twice), and "the turn need not be run again" of one whose memory call never ran."""
    root = with_state_db(tmp_path / "home")
    proc, out = run_while_locked(root, "--message", message)
    assert proc.returncode == 1 and out["kept_messages"] >= 2
    assert "Retry when it is done" not in out["error"] and "need not be run again" not in out["error"]
    # a memory call answered "Not run" is to be asked for again; a plain turn needs nothing again
    assert out["error"].startswith("The turn stopped before its tool calls ran") is calls
    assert ("ask for those calls again once state.db is free" in out["error"]) is calls
    assert "kept in workbench.db. They are stored automatically when state.db is free" in out["error"]


def test_a_session_whose_messages_are_all_kept_is_named_as_waiting_not_unknown(tmp_path):
    """`sessions show ID` of the session the run had just said was kept answered "No session matches"."""
    root = with_state_db(tmp_path / "home")
    _, out = run_while_locked(root, "--message", "kept only")
    sid = out["session_id"]
    with state_db_locked(root):  # still busy: nothing stores it, and the lookup says why it is not there
        shown = here("--home", str(root), "--json", "sessions", "show", sid[:-2])
    error = json.loads(shown.stdout)["error"]
    assert shown.returncode == 1 and error.startswith(f"Session {sid} is not in state.db yet: its 2 messages are kept")
    assert "stored automatically when state.db is free" in error


def test_what_is_kept_on_a_damaged_state_db_is_said_to_wait_for_its_recovery(tmp_path):
    """Doctor said kept messages are "stored automatically when state.db is free" of a damaged
    state.db, which the workbench never writes: they wait for it to be recovered or restored."""
    root = with_state_db(tmp_path / "home")
    here("--home", str(root), "--json", "run", "--message", "hello there")  # (a messages table with a page)
    _, out = run_while_locked(root, "--message", "kept only")
    sid = out["session_id"]
    with sqlite3.connect(root / "state.db") as conn:  # all in state.db itself: the page below is its last word
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'messages'").fetchone()[0]
    with open(root / "state.db", "r+b") as file:
        file.seek((page - 1) * 4096)
        file.write(b"\xff" * 4096)
    before = (root / "state.db").read_bytes()
    proc = here("--home", str(root), "--json", "doctor")
    (finding,) = [f for f in json.loads(proc.stdout)["findings"] if "kept in workbench.db" in f["what"]]
    assert "when state.db is free" not in finding["fix"]
    assert finding["fix"].startswith("state.db is damaged, and nothing is written to a damaged state.db")
    assert "sqlite3 state.db .recover" in finding["fix"] and "restore it from a backup" in finding["fix"]
    shown = here("--home", str(root), "--json", "sessions", "show", sid)
    error = json.loads(shown.stdout)["error"]
    assert error.startswith(f"Session {sid} is not in state.db yet") and "state.db is damaged" in error
    assert "when state.db is free" not in error
    assert len(kept_rows(root)) == 1 and (root / "state.db").read_bytes() == before


def test_kept_messages_stored_later_are_said_once_by_the_command_that_stores_them(tmp_path):
    """The run under a held lock said "They are kept in workbench.db"; the run that later stored them said
    nothing, so the user never learned they landed. It says so once, on stderr; the next command does not."""
    root = with_state_db(tmp_path / "home")
    proc, out = run_while_locked(root, "--message", "hello there")
    sid = out["session_id"]
    assert proc.returncode == 1 and out["kept_messages"] == 2

    later = workbench("--home", str(root), "run", "--message", "and now")
    assert later.returncode == 0, later.stderr
    notes = [line for line in later.stderr.splitlines() if "stored in state.db now" in line]
    assert notes == [f"note: 2 messages of session {sid} kept in workbench.db are stored in state.db now."]
    assert len(stored(root, sid)[1]) == 2
    again = workbench("--home", str(root), "sessions", "list")
    assert again.returncode == 0 and "stored in state.db now" not in again.stderr


@pytest.mark.anyio
async def test_the_tui_says_once_that_kept_messages_were_stored_at_its_start_and_at_a_turn(tmp_path):
    """The TUI stores kept messages as the home opens and as its agent opens a session; it never said so."""
    from tests.screens_seed import open_mode
    from tests.tui_support import make_app, settle, wait_for
    from workbench.screens.run import RunScreen

    root = with_state_db(tmp_path / "home")
    first = run_while_locked(root, "--message", "hello there")[1]["session_id"]
    second = run_while_locked(root, "--message", "hello again")[1]["session_id"]

    def said(app) -> list[str]:
        return [n.message for n in app._notifications if n.title == "Stored in state.db"]

    home = open_home(root)  # (as `workbench tui` opens it: the first ones are stored now)
    assert len(stored(root, first)[1]) == 2
    run_while_locked(root, "--message", "hello once more")  # kept while this home is open: a turn stores it
    third = kept_rows(root)[0]["session_id"]
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert said(app) == [
            f"2 messages of session {first} kept in workbench.db are stored in state.db now.",
            f"2 messages of session {second} kept in workbench.db are stored in state.db now.",
        ]
        screen = await open_mode(pilot, "5", RunScreen)
        await pilot.press(*"a new turn", "enter")  # its agent stores what is kept as it opens
        await wait_for(pilot, lambda: len(said(app)) == 3, what="the third notice")
        await wait_for(pilot, lambda: screen.session_id is not None and not screen.running, what="the turn")
        assert said(app)[2] == f"2 messages of session {third} kept in workbench.db are stored in state.db now."
    assert len(stored(root, third)[1]) == 2
    home.close()
