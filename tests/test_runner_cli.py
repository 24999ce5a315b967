"""`workbench run` and `workbench scenarios list` through the real CLI entry point."""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import sqlite3
import subprocess
import threading
import time

from engine import open_home
from tests.hermes_support import workbench_cmd
from workbench.cli import main


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_run_messages_json_and_continue_the_session(tmp_path, capsys):
    home = str(tmp_path / "h")
    code, out, _ = _run(
        capsys, "run", "--home", home, "--json", "-m", "remember that I prefer dark mode", "-m", "what do I prefer?"
    )
    assert code == 0
    data = json.loads(out)
    assert [t["user"] for t in data["turns"]] == ["remember that I prefer dark mode", "what do I prefer?"]
    assert data["turns"][0]["tool_calls"][0]["name"] == "memory"
    assert data["memory_writes"] == [
        {"by": "agent", "action": "add", "target": "user", "content": "User prefers dark mode."}
    ]
    assert data["staged"] == [] and data["sessions"] == [data["session_id"]]
    assert len(data["prefix_hashes"][data["session_id"]]) == 1  # one prompt prefix for the whole session
    code, out, _ = _run(capsys, "sessions", "show", data["session_id"], "--home", home, "--json")
    assert json.loads(out)["session"]["end_reason"] == "cli_close"  # a run ends its session, as Hermes's CLI does
    # --session takes an id, a unique id prefix or a title; the ended session is reopened and continued
    for name in (data["session_id"], data["session_id"][:17], "remember that I prefer dark mode"):
        code, out, _ = _run(capsys, "run", "--home", home, "--json", "--session", name, "-m", "hello")
        assert code == 0 and json.loads(out)["session_id"] == data["session_id"]
    code, out, _ = _run(capsys, "sessions", "show", data["session_id"], "--home", home, "--json")
    shown = json.loads(out)
    assert [m["role"] for m in shown["messages"]].count("user") == 5
    assert shown["session"]["end_reason"] == "cli_close"  # reopened, continued, ended again
    code, out, _ = _run(capsys, "sessions", "list", "--home", home, "--json")
    assert len(json.loads(out)["sessions"]) == 1  # continued, never forked


def test_run_prints_a_readable_transcript(tmp_path, capsys):
    code, out, _ = _run(capsys, "run", "--home", str(tmp_path / "h"), "-m", "we use pytest", "-m", "hi")
    assert code == 0
    assert "you> we use pytest" in out and '-> memory(action="add", target="memory"' in out
    assert "agent> Got it. Saved to memory" in out and "1 memory write," in out
    code, out, _ = _run(capsys, "run", "--home", str(tmp_path / "h"), "-m", "hi \x1b[2J\x1b]0;title\x07 there")
    assert code == 0 and "you> hi ␛[2J␛]0;title␇ there" in out and "\x1b" not in out  # escapes shown, never obeyed


def test_run_counts_the_proposals_waiting_not_each_time_one_was_proposed(tmp_path, capsys):
    home = tmp_path / "h"
    home.mkdir()
    (home / "config.yaml").write_text("memory:\n  write_approval: true\n")
    code, out, _ = _run(capsys, "run", "--home", str(home), "-m", "we use pytest", "-m", "we use pytest")
    assert code == 0 and out.count("<- memory: staged for approval") == 2
    assert out.rstrip().endswith("0 memory writes, 1 staged for approval")  # one proposal to approve
    assert len(open_home(home).approvals.list()) == 1


def test_scenario_run_and_listing(tmp_path, capsys):
    home = str(tmp_path / "h")
    code, out, _ = _run(capsys, "scenarios", "list", "--home", home, "--json")
    assert code == 0 and {s["name"] for s in json.loads(out)["scenarios"]} >= {"demo", "smoke"}
    code, out, _ = _run(capsys, "run", "--home", home, "--scenario", "smoke", "--json")
    data = json.loads(out)
    assert code == 0 and len(data["turns"]) == 4 and len(data["memory_writes"]) == 2


def test_usage_errors_exit_2(tmp_path, capsys):
    home = str(tmp_path / "h")
    assert _run(capsys, "run", "--home", home)[0] == 2
    assert _run(capsys, "run", "--home", home, "--model", "scripted", "-m", "x")[0] == 2
    assert _run(capsys, "run", "--home", home, "--scenario", "smoke", "-m", "x")[0] == 2
    assert _run(capsys, "run", "--home", home, "--session", "x", "--title", "T", "-m", "x")[0] == 2
    assert main(["run", "--home", home, "--model", "bogus", "-m", "x"]) == 2  # argparse rejects it while parsing


def test_refusals_exit_1_with_an_actionable_error(tmp_path, capsys):
    home = str(tmp_path / "h")
    code, out, _ = _run(capsys, "run", "--home", home, "--json", "--session", "nope", "-m", "x")
    assert code == 1 and "No session matches 'nope'" in json.loads(out)["error"]
    homed = open_home(home)  # part of a title finds nothing, but names the sessions whose title holds it
    homed.archive.create_session("s-open", source="cli", title="Postgres password rotation")
    homed.close()
    code, out, _ = _run(capsys, "run", "--home", home, "--json", "--session", "postgres", "-m", "x")
    refused = json.loads(out)
    assert code == 1 and refused["close_matches"] == ["s-open"]
    assert (
        "Titles holding it: 'Postgres password rotation' (s-open); give the id or the whole title." in refused["error"]
    )
    code, out, _ = _run(capsys, "run", "--home", home, "--json", "--scenario", "missing")
    assert code == 1 and "Built-in scenarios" in json.loads(out)["error"]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code, out, _ = _run(
        capsys,
        "run",
        "--home",
        home,
        "--json",
        "--model",
        "openai",
        "--base-url",
        f"http://127.0.0.1:{port}/v1",
        "--model-name",
        "m",
        "-m",
        "hello",
    )
    data = json.loads(out)
    assert code == 1 and data["success"] is False and "Cannot connect" in data["error"]
    assert data["turns"][0]["status"] == "error"  # the user's message is still stored


def test_openai_streaming_prints_the_answer_as_it_arrives(tmp_path, capsys):
    from tests.test_models_openai import FakeEndpoint

    endpoint = FakeEndpoint()
    try:
        endpoint.stream({"content": "Hel"}, {"content": "lo there."})
        code, out, _ = _run(
            capsys,
            "run",
            "--home",
            str(tmp_path / "h"),
            "--model",
            "openai",
            "--stream",
            "--base-url",
            endpoint.base_url,
            "--model-name",
            "m",
            "--api-key-env",
            "",
            "-m",
            "hi",
        )
    finally:
        endpoint.close()
    assert code == 0 and "agent> Hello there.\n" in out and out.count("Hello there.") == 1


def _stored_sessions(home) -> int:
    with contextlib.closing(sqlite3.connect(home / "state.db")) as db:
        return db.execute("SELECT count(*) FROM sessions").fetchone()[0]


def test_a_key_variable_named_but_not_set_is_refused_and_a_local_server_needs_none(tmp_path, capsys, monkeypatch):
    """``--api-key-env UNSET_VAR`` ran on with no key and said nothing. A named variable that is not set
    is a usage error (from config.yaml a refusal), before anything runs or is stored; with no variable
    named, an endpoint that needs no key (a local server) is still asked, with no key."""
    from tests.test_models_openai import FakeEndpoint

    monkeypatch.delenv("WB_UNSET_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # (model.api_key_env's default)
    home = tmp_path / "h"
    endpoint = FakeEndpoint()
    try:
        endpoint.answer("Hello.")
        asked = ("run", "--home", str(home), "--model", "openai", "--base-url", endpoint.base_url, "--model-name", "m")
        code, _, err = _run(capsys, *asked, "--api-key-env", "WB_UNSET_KEY", "-m", "hi")
        assert code == 2 and "$WB_UNSET_KEY is not set, and --api-key-env names it" in err
        assert not home.exists() and endpoint.requests == []  # nothing run, nothing stored
        home.mkdir()
        (home / "config.yaml").write_text("model:\n  api_key_env: WB_UNSET_KEY\n", encoding="utf-8")
        code, out, _ = _run(capsys, *asked, "--json", "-m", "hi")
        assert (
            code == 1
            and "$WB_UNSET_KEY is not set, and model.api_key_env in config.yaml names it" in json.loads(out)["error"]
        )
        assert endpoint.requests == [] and _stored_sessions(home) == 0
        (home / "config.yaml").unlink()
        code, out, err = _run(capsys, *asked, "-m", "hi")
    finally:
        endpoint.close()
    assert code == 0 and "agent> Hello." in out, err
    [request] = endpoint.requests
    assert _stored_sessions(home) == 1
    assert "Authorization" not in request["headers"]


def test_run_waits_for_its_background_reviews_before_it_exits(tmp_path):
    home = tmp_path / "h"
    home.mkdir()
    (home / "config.yaml").write_text(
        "memory:\n  nudge_interval: 1\nskills:\n  creation_nudge_interval: 0\n", encoding="utf-8"
    )
    # its own process: it must wait for the review thread before it prints and exits
    done = subprocess.run(
        workbench_cmd(
            "run", "--home", str(home), "--json", "-m", "Hi, I'm Lin and I work on the billing service", "-m", "thanks"
        ),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    saved = {"by": "review", "action": "add", "target": "user", "content": "User's name is Lin."}
    assert saved in data["memory_writes"]
    assert (home / "memories" / "USER.md").read_text(encoding="utf-8").startswith("User's name is Lin.")


def test_a_run_closes_its_databases_and_leaves_no_wal_behind(tmp_path):
    """A long run (past the 40 writes that start state.db's checkpoint thread) ended with its connections
    open, that thread's among them, so SQLite never copied the -wal in and deleted it: state.db-wal and
    -shm stayed beside state.db. The CLI closes the home once the command is done."""
    home = tmp_path / "h"
    open_home(home).close()
    done = subprocess.run(
        workbench_cmd("run", "--home", str(home), "--scenario", "demo"), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert sorted(path.name for path in home.glob("*.db*")) == ["state.db", "state.db.lock", "workbench.db"]
    with contextlib.closing(open_home(home, read_only=True)) as look:  # (the writes are in the files)
        assert sum(session.message_count for session in look.archive.list_sessions()) > 40


def test_ctrl_c_mid_turn_says_where_what_was_said_is(tmp_path):
    """A trial: ctrl+c while the model thought exited 130 with nothing said, though the message was kept."""
    from tests.test_models_openai import FakeEndpoint

    endpoint = FakeEndpoint()
    endpoint.holds[0] = threading.Event()  # the model thinks until the test lets it go
    home = tmp_path / "h"
    args = ("--model", "openai", "--base-url", endpoint.base_url, "--model-name", "m", "--api-key-env", "")
    try:
        process = subprocess.Popen(
            workbench_cmd("run", "--home", str(home), *args, "-m", "slow question"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        while not endpoint.requests:
            assert process.poll() is None, process.stderr.read()
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    finally:
        endpoint.holds[0].set()
        endpoint.close()
    session_id = json.loads(subprocess.check_output(workbench_cmd("sessions", "list", "--home", str(home), "--json")))[
        "sessions"
    ][0]["id"]
    assert process.returncode == 130 and "Traceback" not in err
    assert (
        f"interrupted: the turn stopped, and no answer to it was stored. What was said is stored in session "
        f"{session_id}: go on with `workbench run --session {session_id} -m TEXT`." in err
    )


def test_run_into_an_archived_session_says_it_stays_archived(tmp_path, capsys):
    """`run --session ID` into an archived session went on silently: its messages went into a session the
    lists and session_search hide. Now a note on stderr says it is archived, stays so, and how to list it."""
    home = str(tmp_path / "h")
    code, out, _ = _run(capsys, "run", "--home", home, "--json", "-m", "hello")
    session_id = json.loads(out)["session_id"]
    assert _run(capsys, "sessions", "archive", session_id, "--home", home)[0] == 0
    code, out, err = _run(capsys, "run", "--home", home, "--json", "--session", session_id, "-m", "again")
    assert code == 0 and json.loads(out)["session_id"] == session_id
    assert f"note: Session {session_id} is archived: it stays so" in err
    assert f"workbench sessions archive {session_id} --undo" in err
    code, out, _ = _run(capsys, "sessions", "show", session_id, "--home", home, "--json")
    assert json.loads(out)["session"]["archived"] is True  # not unarchived behind the user's back
    code, out, err = _run(capsys, "run", "--home", home, "--json", "-m", "a new one")
    assert "archived" not in err


def _sessions(capsys, home: str) -> list[dict]:
    code, out, _ = _run(capsys, "sessions", "list", "--home", home, "--json")
    assert code == 0
    return json.loads(out)["sessions"]


def test_a_title_state_db_cannot_take_is_refused_before_the_turn(tmp_path, capsys):
    home = str(tmp_path / "h")
    _run(capsys, "sessions", "list", "--home", home)  # (the home made)
    # run: once the turn was played, its store failed on the title and the messages stayed out of state.db
    code, out, _ = _run(capsys, "run", "--home", home, "--json", "--title", "t" * 101, "-m", "hello")
    assert code == 1 and "Title too long (101 chars, max 100)" in json.loads(out)["error"]
    assert "turns" not in json.loads(out) and _sessions(capsys, home) == []
    scenario = tmp_path / "titled.yaml"  # a scenario: refused before its first session plays
    scenario.write_text(f"sessions:\n  - turns: [{{user: hello}}]\n  - title: {'t' * 120}\n    turns: [{{user: hi}}]\n")
    code, out, _ = _run(capsys, "run", "--home", home, "--json", "--scenario", str(scenario))
    assert code == 1 and "sessions[1]: 'title': Title too long (120 chars" in json.loads(out)["error"]
    assert _sessions(capsys, home) == []


def test_a_numbered_title_past_the_limit_never_keeps_the_turn_out(tmp_path, capsys):
    home = str(tmp_path / "h")
    for _ in range(2):  # the second is 'ttt… #2', 103 characters: its messages were kept out of state.db
        code, _, err = _run(capsys, "run", "--home", home, "--title", "t" * 100, "-m", "hello")
        assert code == 0, err
    sessions = _sessions(capsys, home)
    assert [s["message_count"] for s in sessions] == [2, 2]
    assert [s["title"] for s in sessions] == [None, "t" * 100]  # (newest first: it has none, rather than no turn)
    code, out, _ = _run(capsys, "doctor", "--home", home, "--json")
    assert not [f for f in json.loads(out)["findings"] if "kept in workbench.db" in f["what"]]


def test_run_into_a_session_that_had_ended_says_it_reopens_it(tmp_path, capsys):
    """`run --session ID` into a session Hermes had ended reopened it and ended it `cli_close` without a
    word; now a note on stderr says it had ended, how, and that it is reopened and ended again."""
    home = str(tmp_path / "h")
    code, out, _ = _run(capsys, "run", "--home", home, "--json", "-m", "hello")
    session_id = json.loads(out)["session_id"]
    opened = open_home(home)
    try:
        opened.archive.reopen_session(session_id)
        assert opened.archive.end_session(session_id, "user_exit")
    finally:
        opened.close()
    code, out, err = _run(capsys, "run", "--home", home, "--session", session_id, "-m", "again")
    assert code == 0
    said = f"note: Session {session_id} had ended (user_exit): it is reopened here, and leaving it here ends it again."
    assert said in err
    code, out, err = _run(capsys, "run", "--home", home, "--json", "-m", "a new one")
    assert "reopened" not in err
