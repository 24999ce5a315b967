"""The turn loop: frozen prompt, fence on the API copy only, persistence, tools, events, cancel."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from engine import open_home
from engine.errors import WorkbenchError
from engine.models import OfflineModel, ScriptedModel
from engine.models.base import Model, ModelReply, ToolCall
from engine.providers.base import MemoryProvider
from engine.runner import AgentSession, RequestLog
from engine.runner.tools import Tool, ToolRegistry, builtin_tools
from engine.tools import ToolContext
from tests.lock_support import holding_write_lock

ROOT = Path(__file__).resolve().parent.parent


class Recording(Model):
    """Wraps a model and keeps a copy of every request it was sent."""

    def __init__(self, inner: Model):
        self.inner, self.name, self.calls = inner, inner.name, []

    def complete(self, messages, tools):
        self.calls.append([dict(m) for m in messages])
        return self.inner.complete(messages, tools)

    def summarise(self, messages):
        return self.inner.summarise(messages)


class Recall(MemoryProvider):
    name = "recall-test"

    def prefetch(self, query, *, session_id=""):
        return f"- RECALLED-FACT about {query[:12]}"


def test_system_prompt_is_byte_identical_across_turns_despite_memory_writes(home):
    home.memory.add("memory", "The repo lives at ~/src/app.")
    model = Recording(OfflineModel())
    session = AgentSession(home, model)
    for text in ("remember that I prefer dark mode", "my name is Ada", "we use pytest", "what do I prefer?"):
        assert session.run_turn(text).status == "done"
    prompts = {call[0]["content"] for call in model.calls}
    assert len(prompts) == 1
    prompt = prompts.pop()
    assert "The repo lives at ~/src/app." in prompt
    assert "dark mode" not in prompt and "Ada" not in prompt  # written mid-session: on disk, not in the prompt
    assert home.memory.entries("user") == ["User prefers dark mode.", "User's name is Ada."]
    hashes = RequestLog(home).prefix_hashes(session.id)
    assert len(hashes) == len(model.calls) >= 7 and len(set(hashes)) == 1
    assert home.archive.get_session(session.id).system_prompt == prompt
    fresh = AgentSession(home, OfflineModel()).system_prompt
    assert "User prefers dark mode." in fresh and fresh != prompt


class Notes(MemoryProvider):
    name = "notes"

    def system_prompt_block(self):
        return "## Provider notes\nThe notes provider is active."


def test_prompt_order_and_context_file(home, tmp_path):
    home.memory.add("memory", "Deploys go through CI.")
    home.memory.add("user", "User is Ada.")
    home.skills.manage(
        {
            "action": "create",
            "name": "ship-it",
            "content": "---\nname: ship-it\ndescription: Ship the app\n---\n# Ship\n1. Go.\n",
        },
        ToolContext(actor="user"),
    )
    work = tmp_path / "work"
    work.mkdir()
    (work / "AGENTS.md").write_text("Run make test before committing.", encoding="utf-8")
    prompt = AgentSession(home, OfflineModel(), cwd=work, provider=Notes()).system_prompt
    order = [
        prompt.index(marker)
        for marker in (
            "You are a helpful assistant",
            "## Using your memory",
            "MEMORY (your personal notes)",
            "USER PROFILE (who the user is)",
            "## Provider notes",
            "- ship-it: Ship the app",
            "## AGENTS.md",
            "Conversation started: Monday, November 30, 2026",
        )
    ]
    assert order == sorted(order)
    assert "Run make test before committing." in prompt


def test_recall_is_fenced_on_the_api_copy_and_never_stored(home):
    model = Recording(OfflineModel())
    session = AgentSession(home, model, provider=Recall())
    session.run_turn("remember that I prefer tea")
    session.run_turn("hello again")
    last_request = model.calls[-1]
    users = [m["content"] for m in last_request if m["role"] == "user"]
    assert users[0] == "remember that I prefer tea"  # earlier turns are sent as stored
    assert users[1].startswith("hello again\n\n<memory-context>\n") and "RECALLED-FACT" in users[1]
    stored = [m.text for m in home.archive.messages(session.id) if m.role == "user"]
    assert stored == ["remember that I prefer tea", "hello again"]
    raw = home.state_db_path.read_bytes() + home.state_db_path.with_name("state.db-wal").read_bytes()
    assert b"RECALLED-FACT" not in raw and b"<memory-context>\n" not in raw and b"NOT new user input" not in raw
    session.close()


def test_session_row_is_created_on_first_write_with_prompt_and_title(home):
    session = AgentSession(home, OfflineModel())
    assert home.archive.get_session(session.id) is None
    session.run_turn("hello there, let's plan the billing migration")
    row = home.archive.get_session(session.id)
    assert row.title == "hello there, let's plan the billing migration"
    assert row.system_prompt == session.system_prompt and row.model == "offline" and row.source == "cli"
    other = AgentSession(home, OfflineModel())
    other.run_turn("hello there, let's plan the billing migration")
    assert home.archive.get_session(other.id).title == "hello there, let's plan the billing migration #2"


def test_events_describe_the_turn(home):
    seen = []
    session = AgentSession(home, OfflineModel(), on_event=seen.append)
    bus = []
    home.bus.subscribe(bus.append)
    session.run_turn("remember that we deploy on Fridays")
    kinds = [e.kind for e in seen]
    assert kinds == [
        "turn_started",
        "assistant_message",
        "message_stored",
        "tool_called",
        "tool_result",
        "assistant_message",
        "message_stored",
        "turn_finished",
    ]
    called = seen[3]
    assert called.data["name"] == "memory" and called.data["arguments"]["target"] == "memory"
    assert seen[4].data["success"] is True and seen[-1].data["status"] == "done"
    assert all(e.session_id == session.id for e in seen)
    assert [e.kind for e in bus if hasattr(e, "kind")] == kinds


def test_memory_writes_name_the_session_and_message(home):
    session = AgentSession(home, OfflineModel())
    session.run_turn("remember that the staging DB is read-only on weekends")
    entry = home.journal.query(subsystem="memory")[0]
    assistant = [m for m in home.archive.messages(session.id) if m.role == "assistant" and m.tool_calls][0]
    assert (entry.actor, entry.session_id, entry.message_id) == ("agent", session.id, assistant.id)


def test_a_crashing_tool_is_reported_and_the_session_goes_on(home):
    def explode(home, args, ctx):
        raise RuntimeError("kaboom")

    model = ScriptedModel()
    session = AgentSession(home, model)
    session.tools = ToolRegistry(
        home, builtin_tools(home) + [Tool("explode", {"name": "explode", "parameters": {}}, explode)]
    )
    model.play(
        [
            {
                "tool_calls": [
                    {"name": "explode", "args": {}},
                    {"name": "nope", "args": {}},
                    {"name": "memory", "args": {"action": "add", "target": "bogus", "content": "x"}},
                ]
            },
            {"answer": "Recovered."},
        ]
    )
    result = session.run_turn("try the tools")
    assert result.status == "done" and result.assistant == "Recovered."
    errors = [c["result"]["error"] for c in result.tool_calls]
    assert errors[0] == "Tool 'explode' failed: RuntimeError: kaboom"
    assert errors[1].startswith("Unknown tool 'nope'")
    assert "bogus" in errors[2]
    fed_back = [json.loads(m["content"]) for m in session.messages if m["role"] == "tool"]
    assert [f["success"] for f in fed_back] == [False, False, False]
    model.play(None)
    assert session.run_turn("hello").status == "done"


def test_iteration_limit_ends_the_turn_with_a_note(home):
    home.config_path.write_text("agent:\n  max_iterations: 3\n", encoding="utf-8")
    home.reload_config()
    model = ScriptedModel()
    model.play([{"tool_calls": [{"name": "skills_list", "args": {}}]}] * 5)
    session = AgentSession(home, model)
    result = session.run_turn("loop forever")
    assert result.status == "iteration_limit" and "Stopped after 3 model calls" in result.assistant
    roles = [m.role for m in home.archive.messages(session.id)]
    assert roles == ["user"] + ["assistant", "tool"] * 3 + ["assistant"]


def test_a_cancelled_turn_is_persisted_and_every_call_answered(home):
    model = ScriptedModel()
    model.play(
        [
            {
                "tool_calls": [
                    {"name": "memory", "args": {"action": "add", "target": "user", "content": "X."}},
                    {"name": "skills_list", "args": {}},
                ]
            }
        ]
    )
    seen = []

    def on_event(event):
        seen.append(event)
        if event.kind == "assistant_message":  # a stop lands after the model asked for its calls
            session.cancel()

    session = AgentSession(home, model, on_event=on_event)
    result = session.run_turn("save X please")
    assert result.status == "cancelled"
    stored = home.archive.messages(session.id)
    assert [m.role for m in stored] == ["user", "assistant", "tool", "tool"]
    assert all(json.loads(m.content)["error"] == "Interrupted before this tool ran." for m in stored[2:])
    assert home.memory.entries("user") == []  # nothing ran after the cancel
    assert "cancelled" in [e.kind for e in seen]
    model2 = ScriptedModel()
    model2.play([{"answer": "back"}])
    session.model = model2
    assert session.run_turn("are you there?").assistant == "back"  # the next turn runs normally


class Blocking(Model):
    """Answers only once the test lets it go, as a model endpoint that does not answer."""

    name = "blocking"

    def __init__(self):
        self.entered, self.release = threading.Event(), threading.Event()

    def complete(self, messages, tools):
        self.entered.set()
        self.release.wait(60)
        return ModelReply(content="Here is the slow answer.")


def test_esc_leaves_a_model_call_at_once(home):
    """A trial: esc on Run said "cancelling…" until the model answered (model.timeout, then each retry)."""
    model = Blocking()
    seen = []
    session = AgentSession(home, model, on_event=seen.append)
    worker = threading.Thread(target=lambda: seen.append(session.run_turn("think slowly")))
    worker.start()
    assert model.entered.wait(5)
    session.cancel()  # from another thread, while the model is thinking
    worker.join(20)
    ended_first = not worker.is_alive()  # (looked at before the model is let go)
    model.release.set()
    worker.join(5)
    assert ended_first and seen[-1].status == "cancelled"
    assert [m.role for m in home.archive.messages(session.id)] == ["user"]


class AnswersAsCancelled(Model):
    """Its answer arrives just as esc is pressed."""

    name = "late"

    def complete(self, messages, tools):
        self.session.cancel()
        return ModelReply(content="Here is the late answer.")


def test_an_answer_that_comes_after_a_cancel_is_dropped(home):
    """esc as the model answered stopped nothing: its late answer was stored and the turn said done."""
    model = AnswersAsCancelled()
    seen = []
    session = model.session = AgentSession(home, model, on_event=seen.append)
    result = session.run_turn("think slowly")
    assert result.status == "cancelled" and result.assistant == ""
    assert [m.role for m in home.archive.messages(session.id)] == ["user"]
    assert "assistant_message" not in [e.kind for e in seen]


CTRL_C_UNDER_A_CALL = """
import os, signal, threading
from engine.runner.leavable import Left, unless_stopped

interrupted, finished, seen = threading.Event(), threading.Event(), []

def call(leaving):
    os.kill(os.getpid(), signal.SIGINT)  # ctrl+c while the model thinks (the caller is the main thread)
    interrupted.wait(5)
    try:
        leaving.unless_left(seen.append, "late piece")  # a streamed piece that comes after it
    except Left:
        seen.append("left")
    finished.set()

try:
    unless_stopped(call, threading.Event())
except KeyboardInterrupt:
    interrupted.set()
    finished.wait(5)
print(seen)
"""


def test_ctrl_c_leaves_a_model_call_as_esc_does(tmp_path):
    """ctrl+c in `workbench run` raised KeyboardInterrupt out of the wait for the model call without
    leaving it: a streamed answer went on printing its pieces as the run ended the session and said
    it was interrupted. Any way out of the wait now leaves the call."""
    ran = subprocess.run(
        [sys.executable, "-c", CTRL_C_UNDER_A_CALL],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert (ran.returncode, ran.stdout.strip()) == (0, "['left']"), ran.stderr[-2000:]


class Failing(Model):
    name = "failing"

    def complete(self, messages, tools):
        raise RuntimeError("backend exploded")


def test_a_model_failure_keeps_the_user_message(home):
    seen = []
    session = AgentSession(home, Failing(), on_event=seen.append)
    result = session.run_turn("important words")
    assert result.status == "error" and "backend exploded" in result.error
    assert [m.text for m in home.archive.messages(session.id)] == ["important words"]
    kinds = [e.kind for e in seen]
    assert kinds[-3:] == ["error", "message_stored", "turn_finished"]


class Interrupted(Model):
    """Makes one tool call, then the person presses Ctrl-C while the model thinks again."""

    name = "interrupted"

    def complete(self, messages, tools):
        if messages[-1]["role"] == "tool":
            raise KeyboardInterrupt
        return ModelReply(tool_calls=[ToolCall("c1", "memory", {"action": "add", "target": "user", "content": "Y."})])


def test_ctrl_c_mid_turn_still_stores_everything_said(home):
    session = AgentSession(home, Interrupted())
    with pytest.raises(KeyboardInterrupt):
        session.run_turn("save Y and explain")
    stored = home.archive.messages(session.id)
    assert [m.role for m in stored] == ["user", "assistant", "tool"] and stored[0].text == "save Y and explain"
    [write] = home.journal.query(subsystem="memory", actor="agent")
    assert write.message_id == stored[1].id  # the stored call that made it


def test_resume_keeps_the_stored_prompt_and_history(home):
    first = AgentSession(home, OfflineModel())
    first.run_turn("remember that I like short answers")
    prompt = first.system_prompt
    home.memory.add("memory", "Changed after the session started.")
    model = Recording(OfflineModel())
    resumed = AgentSession(home, model, session_id=first.id)
    assert resumed.system_prompt == prompt and len(resumed.messages) == 4
    resumed.run_turn("what do I like?")
    assert model.calls[0][0]["content"] == prompt
    assert model.calls[0][1]["content"] == "remember that I like short answers"
    assert len(home.archive.messages(first.id)) == 6


HERMES_ROW = (
    "import json\nfrom hermes_state import SessionDB\nrow = SessionDB().get_session({sid!r})\n"
    'print(json.dumps([row["ended_at"], row["end_reason"]]))\n'
)


def _reopens(home, session_id: str) -> list[str]:
    return [
        entry.actor
        for entry in home.journal.query(subsystem="sessions", session_id=session_id, limit=50)
        if entry.action == "reopen"
    ]


def test_resuming_an_ended_session_reopens_it_at_once_as_hermes_resume_does(home, hermes):
    """A resumed session was reopened only at its first write: resumed and left untouched, or while
    its first turn was still to come, the Sessions list, the picker and Hermes showed it ended while
    it was in use. Hermes's /resume reopens it at once (``SessionDB.reopen_session``); so does this,
    journaled once, and leaving it ends it again with the reason of that way of leaving."""
    first = AgentSession(home, OfflineModel())
    first.run_turn("remember that I like short answers")
    first.end("cli_close")
    resumed = AgentSession(home, OfflineModel(), session_id=first.id)
    row = home.archive.get_session(first.id)
    assert (row.ended_at, row.end_reason, resumed.reopen_owed) == (None, None, None)
    assert hermes.json(home.root, HERMES_ROW.format(sid=first.id)) == [None, None]  # live, as Hermes reads it
    assert _reopens(home, first.id) == ["agent"]
    resumed.end("cli_close")  # left with nothing written: ended again, as Hermes's CLI ends it on exit
    ended_at, reason = hermes.json(home.root, HERMES_ROW.format(sid=first.id))
    assert ended_at is not None and reason == "cli_close"
    again = AgentSession(home, OfflineModel(), session_id=first.id)
    again.run_turn("hello again")  # the first write reopens nothing more
    row = home.archive.get_session(first.id)
    assert (row.ended_at, row.end_reason) == (None, None) and row.message_count == 6
    assert home.archive.lineage(first.id).chain == [first.id]  # same session, no new child
    assert _reopens(home, first.id) == ["agent", "agent"]  # one per resume
    again.end("user_exit")
    assert home.archive.get_session(first.id).end_reason == "user_exit"


def test_a_reopen_state_db_refuses_at_resume_is_made_by_the_first_write_once(tmp_path, monkeypatch, caplog):
    """Resumed while another process held state.db's write lock, the session cannot be reopened at once:
    it is owed (and said), the first write makes it, once; left with nothing written it keeps the end
    it had (this agent never took it up), never ended again."""
    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "0.3")
    home = open_home(tmp_path / "home")
    first = AgentSession(home, OfflineModel())
    first.run_turn("hello there")
    first.end("cli_close")
    before = home.archive.get_session(first.id)
    holder = holding_write_lock(home.state_db_path)
    try:
        idle = AgentSession(home, OfflineModel(), session_id=first.id)
        waiting = AgentSession(home, OfflineModel(), session_id=first.id)
    finally:
        holder.kill()
        holder.wait()
    assert idle.reopen_owed is not None and "busy" in idle.reopen_owed
    assert f"Session {first.id} was resumed but not reopened yet" in caplog.text
    row = home.archive.get_session(first.id)
    assert (row.ended_at, row.end_reason) == (before.ended_at, "cli_close") and _reopens(home, first.id) == []
    idle.end("resumed_other")  # never reopened: left as it was
    row = home.archive.get_session(first.id)
    assert (row.ended_at, row.end_reason) == (before.ended_at, "cli_close")
    waiting.run_turn("and now?")  # its first write reopens it
    assert home.archive.get_session(first.id).ended_at is None and _reopens(home, first.id) == ["agent"]
    waiting.run_turn("once more")
    waiting.end("cli_close")
    assert home.archive.get_session(first.id).end_reason == "cli_close" and _reopens(home, first.id) == ["agent"]
    home.close()


def test_an_owed_reopen_is_kept_with_the_messages_state_db_refused(tmp_path, monkeypatch):
    """State.db busy at the resume and still at the end: the messages are kept in workbench.db with the
    reopen they need, and the next workbench process that finds it free reopens, stores and ends it."""
    from engine import kept

    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "0.3")
    home = open_home(tmp_path / "home")
    first = AgentSession(home, OfflineModel())
    first.run_turn("hello there")
    first.end("cli_close")
    holder = holding_write_lock(home.state_db_path)
    try:
        resumed = AgentSession(home, OfflineModel(), session_id=first.id)
        resumed.run_turn("a turn state.db will not take")
        held = resumed.end("cli_close")
    finally:
        holder.kill()
        holder.wait()
    assert held is not None and held.messages == 2 and resumed.reopen_owed is not None
    assert home.archive.get_session(first.id).end_reason == "cli_close" and _reopens(home, first.id) == []
    kept.store_kept(home)
    row = home.archive.get_session(first.id)
    assert row.end_reason == "cli_close" and row.message_count == 4 and _reopens(home, first.id) == ["agent"]
    assert kept.kept(home) == []
    home.close()


def test_a_resume_that_cannot_read_what_is_kept_says_so_not_that_some_wait(tmp_path, monkeypatch):
    """workbench.db unreadable at the resume: the reopen is owed (what it keeps is not known to be
    stored), and the reason says that, not that messages of the session are kept there (found in review)."""
    from engine import kept

    home = open_home(tmp_path / "home")
    first = AgentSession(home, OfflineModel())
    first.run_turn("hello there")
    first.end("cli_close")
    assert home.archive.get_session(first.id).end_reason == "cli_close"

    def unreadable(_home):
        raise sqlite3.DatabaseError("file is not a database")

    monkeypatch.setattr(kept, "kept", unreadable)
    resumed = AgentSession(home, OfflineModel(), session_id=first.id)
    assert resumed.reopen_owed.startswith("workbench.db cannot be read (file is not a database)")
    home.close()


def test_a_session_whose_kept_messages_still_wait_is_reopened_by_its_first_write(tmp_path, monkeypatch):
    """Resumed while messages of it kept in workbench.db still wait (state.db was busy as the resume
    stored them, free a moment later), a reopen at once would be undone by their late store, which
    ends the session with the end it was kept with: the conversation would then write into an ended
    session. The reopen is owed to the first write, which comes after that store."""
    from engine import kept

    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "0.3")
    home = open_home(tmp_path / "home")
    first = AgentSession(home, OfflineModel())
    first.run_turn("hello there")
    holder = holding_write_lock(home.state_db_path)
    try:
        first.run_turn("a turn state.db will not take")
        assert first.end("cli_close") is not None
    finally:
        holder.kill()
        holder.wait()
    monkeypatch.setattr(home, "store_kept", lambda: None)  # busy again at the resume's own store of them
    resumed = AgentSession(home, OfflineModel(), session_id=first.id)
    assert resumed.reopen_owed == "messages of it kept in workbench.db are not stored in state.db yet"
    assert home.archive.get_session(first.id).ended_at is None  # (never ended: the end was kept with them)
    kept.store_kept(home)  # another workbench process stores them, and ends the session as kept
    assert home.archive.get_session(first.id).end_reason == "cli_close"
    resumed.run_turn("and now?")
    row = home.archive.get_session(first.id)
    assert (row.ended_at, row.end_reason) == (None, None)  # its first write reopened it after that
    said = [m.content for m in home.archive.messages(first.id) if m.role == "user"]
    assert said == ["hello there", "a turn state.db will not take", "and now?"]
    resumed.end("cli_close")
    assert home.archive.get_session(first.id).end_reason == "cli_close"
    home.close()


def test_resuming_a_session_whose_first_user_message_has_no_content_goes_on(home):
    """A user row with NULL content (another program's) crashed the next turn's store with a KeyError
    (found by the state.db fuzz test): it is resumed, and titled by what there is."""
    home.archive.create_session("gateway_2", source="telegram")
    home.archive.append_messages(
        "gateway_2", [{"role": "user", "content": "x"}, {"role": "assistant", "content": "hi"}]
    )
    home.archive.conn().execute("UPDATE messages SET content = NULL WHERE session_id = 'gateway_2' AND role = 'user'")
    resumed = AgentSession(home, OfflineModel(), session_id="gateway_2")
    resumed.run_turn("hello again")
    stored = home.archive.messages("gateway_2")
    assert len(stored) == 4 and stored[2].content == "hello again" and stored[3].role == "assistant"


def test_resuming_a_bare_row_stores_the_prompt_it_uses(home):
    home.archive.create_session("gateway_1", source="telegram")  # pre-created elsewhere, without a prompt
    home.archive.append_message("gateway_1", "user", "hello from the gateway")
    resumed = AgentSession(home, OfflineModel(), session_id="gateway_1")
    resumed.run_turn("and again")
    assert home.archive.get_session("gateway_1").system_prompt == resumed.system_prompt
    again = AgentSession(home, OfflineModel(), session_id="gateway_1")
    assert again.system_prompt == resumed.system_prompt  # the next resume keeps the same cached prefix


def test_token_estimate_is_chars_over_four_unless_usage_is_reported(home):
    session = AgentSession(home, OfflineModel())
    session.run_turn("hello")
    estimate = session.context_tokens()
    chars = len(session.system_prompt) + sum(len(m["content"]) for m in session.messages)
    assert chars // 4 < estimate < (chars + 20000) // 4  # tool schemas are counted too
    session.last_usage = (5000, len(session.messages))
    assert session.context_tokens() == 5000
    row = home.archive.get_session(session.id)
    assert (row.input_tokens, row.output_tokens) == (0, 0)  # no usage reported: estimates stay out of Hermes's columns


class Echoing(Model):
    """A model that repeats its recall back (a leak the runner must not store)."""

    name = "echo"

    def complete(self, messages, tools):
        return ModelReply(content="Answer.\n" + messages[-1]["content"].split("\n\n", 1)[-1])


def test_an_echoed_fence_is_stripped_and_trivial_prompts_skip_recall(home):
    model = Recording(Echoing())
    session = AgentSession(home, model, provider=Recall())
    result = session.run_turn("tell me about the release")
    assert result.assistant == "Answer."
    assert "RECALLED-FACT" not in home.archive.messages(session.id)[-1].text
    session.run_turn("thanks!")
    assert model.calls[-1][-1]["content"] == "thanks!"  # no recall for an acknowledgement
    session.close()


def test_soul_md_is_the_identity_and_a_full_memory_is_explained(home):
    (home.root / "SOUL.md").write_text("You are Hermes, a terse engineering assistant.\n", encoding="utf-8")
    home.config_path.write_text("memory:\n  memory_char_limit: 60\n", encoding="utf-8")
    home.reload_config()
    session = AgentSession(home, OfflineModel())
    assert session.system_prompt.startswith("You are Hermes, a terse engineering assistant.\n\n## Using your memory")
    session.run_turn("remember that the staging server is at 10.0.0.5 behind the VPN")
    full = session.run_turn("remember that the production server is at 10.0.0.9 behind the VPN too")
    assert full.assistant.startswith("Your memory is full (") and "The staging server is at 10.0.0.5" in full.assistant
    assert home.memory.entries("memory") == ["The staging server is at 10.0.0.5 behind the VPN."]


def test_a_foreign_history_with_broken_tool_pairs_is_repaired_for_the_api(home):
    archive = home.archive
    archive.create_session("crashed", source="cli", title="Crashed run")
    call = {"id": "x1", "type": "function", "function": {"name": "skills_list", "arguments": "{}"}}
    archive.append_messages(
        "crashed",
        [
            {"role": "user", "content": "list skills"},
            {"role": "assistant", "content": "", "tool_calls": [call]},  # the run died before the result
            {"role": "tool", "content": "{}", "tool_call_id": "ghost"},  # a result whose call is gone
            {"role": "user", "content": "hello?"},
        ],
    )
    model = Recording(OfflineModel())
    session = AgentSession(home, model, session_id="crashed")
    session.run_turn("are you there")
    sent = model.calls[0][1:]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "user", "user"]
    assert sent[2]["tool_call_id"] == "x1" and "No result was recorded" in sent[2]["content"]
    assert len(home.archive.messages("crashed")) == 6  # the stored history itself is left as it was


def test_an_empty_message_is_refused_before_anything_is_stored(home):
    session = AgentSession(home, OfflineModel())
    for text in ("", "   \n"):
        with pytest.raises(WorkbenchError, match="non-empty user message"):
            session.run_turn(text)
    assert home.archive.get_session(session.id) is None


def test_memory_off_means_no_memory_tool_and_no_blocks(home):
    home.memory.add("memory", "Hidden when memory is off.")
    home.config_path.write_text("memory:\n  memory_enabled: false\n  user_profile_enabled: false\n", encoding="utf-8")
    home.reload_config()
    session = AgentSession(home, OfflineModel())
    assert "memory" not in session.tools.names() and "Hidden when memory is off." not in session.system_prompt
    result = session.run_turn("remember that I like tea")
    assert result.tool_calls == [] and "the memory tool is not available" in result.assistant
    assert session.turns_since_memory == 0  # no memory nudges without the tool


def test_a_turn_whose_calls_state_db_cannot_store_first_runs_none_and_answers_each(home, monkeypatch, clock):
    """With state.db locked by another process, the assistant message asking to write memory could
    not be stored before its call ran: the call was later stored with no result (shown as if it
    ran, though memory never got it), the store was waited for twice, and the session's start was
    the time it was finally stored, after its own messages."""
    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "0.3")
    home.archive.list_sessions()  # state.db exists, so the other process locks it rather than makes it

    class Slow(Recording):  # the model takes 5 s to answer
        def complete(self, messages, tools):
            clock.advance(5)
            return super().complete(messages, tools)

    session = AgentSession(home, Slow(OfflineModel()))
    said = clock.now()
    stores = []
    flush = session.flush
    monkeypatch.setattr(session, "flush", lambda: stores.append(1) or flush())
    holder = holding_write_lock(home.state_db_path)
    try:
        result = session.run_turn("remember that I like jazz")
    finally:
        holder.kill()
        holder.wait()
    assert result.status == "error" and "busy" in result.error and len(stores) == 1, "tried once, not twice"
    assert home.memory.entries("user") == [], "the call never ran"
    call, answer = session.messages[-2:]
    assert call["tool_calls"] and answer["role"] == "tool"
    error = json.loads(answer["content"])["error"]
    assert error.startswith("Not run: the message asking for this call was not stored yet when the call was due")
    # stored and sent to the model: the holder by pid and program, never its command line (it can hold secrets)
    program = os.path.basename(sys.executable)
    assert f"process {holder.pid} ({program})" in error
    assert "import sqlite3" not in error and str(home.state_db_path) not in error
    clock.advance(60)
    session.flush()
    stored = home.archive.messages(session.id)
    assert [(m.role, m.timestamp) for m in stored] == [("user", said), ("assistant", said + 5), ("tool", said + 5)]
    assert home.archive.get_session(session.id).started_at == said


def test_two_stores_at_once_store_each_message_once_with_its_time(home, monkeypatch, clock):
    """A quit's retry and a turn both flushed while state.db was slow: both stored the same pending
    messages (twice in state.db, and the unstored count went negative), and a message said during a
    store lost its time."""
    import threading
    import time

    session = AgentSession(home, OfflineModel())
    session._say({"role": "user", "content": "first"})
    first_at = clock.now()
    append = home.archive.append_messages
    entered = threading.Event()

    def slow(session_id, messages):
        entered.set()
        time.sleep(0.3)  # state.db slow to take them: the other store and a new message come meanwhile
        return append(session_id, messages)

    monkeypatch.setattr(home.archive, "append_messages", slow)
    other = threading.Thread(target=session.flush)
    other.start()
    assert entered.wait(5)
    clock.advance(30)
    session._say({"role": "user", "content": "said during the store"})
    clock.advance(30)  # stored later still
    session.flush()
    other.join()
    stored = home.archive.messages(session.id)
    assert [(m.content, m.timestamp) for m in stored] == [("first", first_at), ("said during the store", first_at + 30)]
    assert session.unstored == 0


def test_a_new_sessions_started_at_is_the_time_its_id_spells(home, clock):
    """The TUI made the id at ctrl+l (`20261205_120736_8338c8`) but the row started when the first message
    was sent (12:14:50). Hermes's ids spell when the session was made, and its /new makes the row with
    the id; ours now start their row at the id's time, however late the first message comes."""
    import time as _time

    session = AgentSession(home, OfflineModel())
    made = clock.now()
    clock.advance(7 * 60 + 14)  # the first message, minutes later
    assert session.run_turn("hello").status == "done"
    row = home.archive.get_session(session.id)
    assert row.started_at == made
    assert session.id[:15] == _time.strftime("%Y%m%d_%H%M%S", _time.localtime(row.started_at))
    assert home.archive.messages(session.id)[0].timestamp == clock.now()  # the message keeps its own time
    clock.advance(60)
    session.switch_session(None)  # ctrl+l: the next id, made now
    made = clock.now()
    clock.advance(90)
    assert session.run_turn("again").status == "done"
    assert home.archive.get_session(session.id).started_at == made


def test_a_live_session_resumed_is_written_to_but_never_ended_here(home, capsys):
    """`run --session s-open` (a Hermes session not ended, "live" in the picker) wrote into it and then
    ended it `cli_close` without a word, though Hermes may still run it. Now a warning comes first, and
    leaving it does not end it: this agent did not reopen it, so it is not its to end."""
    from engine.conversation import Conversation
    from tests.test_curator_cli import wb

    home.archive.create_session("s-open", source="cli", title="Rotate the postgres password")  # Hermes's, live
    talk = Conversation(home, OfflineModel(), session="s-open")
    assert talk.live_warning is not None and "s-open" in talk.live_warning
    assert "another Hermes may be writing to it" in talk.live_warning
    talk.run_turn("hello")
    talk.end()
    row = home.archive.get_session("s-open")
    assert (row.ended_at, row.end_reason, row.message_count) == (None, None, 2)
    code, out = wb(home.root, "run", "--session", "s-open", "-m", "again")
    assert code == 0 and home.archive.get_session("s-open").ended_at is None
    assert "warning: Session s-open has not ended (it is live): another Hermes may be writing to it." in (
        capsys.readouterr().err
    )
    home.archive.end_session("s-open", "user_exit")  # ended: a resume reopens it, and leaving ends it again
    talk = Conversation(home, OfflineModel(), session="s-open")
    assert talk.live_warning is None
    talk.end()
    assert home.archive.get_session("s-open").end_reason == "cli_close"


def test_a_live_session_hermes_ends_meanwhile_is_reopened_and_said_never_written_past(home, hermes):
    """Resumed live (Hermes running it), the session got an answer and an end from Hermes; the next turn
    stored its messages after that end, the row still ended `cli_close`, and said nothing; the model never
    saw Hermes's answer. Now the turn first takes up what Hermes appended, says the end, reopens the
    session (journaled) and, being this agent's to end now, ends it again when it is left."""
    from engine.conversation import Conversation

    hermes.run(home.root, SESSION_SCRIPT + "db.create_session('h-live2', 'cli')\nsay('h-live2', 'user', 'hi')\n")
    events = []
    talk = Conversation(home, OfflineModel(), session="h-live2", on_event=events.append)
    assert talk.live_warning is not None
    hermes.run(
        home.root,
        SESSION_SCRIPT + "say('h-live2', 'assistant', 'Hello from Hermes.')\ndb.end_session('h-live2', 'cli_close')\n",
    )
    talk.run_turn("are you there")
    said = [e.data for e in events if e.kind == "warning" and e.data.get("ended_elsewhere")]
    assert len(said) == 1 and "was ended elsewhere (cli_close)" in said[0]["message"]
    assert talk.live_warning is None  # this agent's now: leaving ends it
    assert hermes.json(home.root, HERMES_ROW.format(sid="h-live2")) == [None, None]  # live again
    assert _reopens(home, "h-live2") == ["agent"]
    stored = [(m.role, m.content) for m in home.archive.messages("h-live2")]
    assert stored[:3] == [("user", "hi"), ("assistant", "Hello from Hermes."), ("user", "are you there")]
    assert {"role": "assistant", "content": "Hello from Hermes."} in talk.agent.messages  # the model saw it
    talk.end()
    assert hermes.json(home.root, HERMES_ROW.format(sid="h-live2"))[1] == "cli_close"


SESSION_SCRIPT = (  # Hermes's SessionDB, as its agent loop stores a session's messages
    "from hermes_state import SessionDB\ndb = SessionDB()\n\n"
    "def say(s, role, text):\n    db.append_message(s, role, text)\n\n"
)


class _HermesMidTurn(OfflineModel):
    """While our model answers, Hermes (another process, the same session) stores a message."""

    def __init__(self, hermes, root, sid):
        super().__init__()
        self.hermes, self.root, self.sid, self.done = hermes, root, sid, False

    def complete(self, messages, tools):
        if not self.done and any(m.get("content") == "first of ours" for m in messages):
            self.done = True
            self.hermes.run(self.root, SESSION_SCRIPT + f"say({self.sid!r}, 'assistant', 'HERMES MID-TURN')\n")
        return super().complete(messages, tools)


def test_a_message_hermes_stores_during_our_turn_joins_the_history(home, hermes):
    """Its id is below those of our turn, stored at the turn's end: a catch-up past our newest id
    never saw it (found in review)."""
    from engine.conversation import Conversation

    hermes.run(home.root, SESSION_SCRIPT + "db.create_session('h-mid', 'cli')\nsay('h-mid', 'user', 'hi')\n")
    talk = Conversation(home, _HermesMidTurn(hermes, home.root, "h-mid"), session="h-mid")
    talk.run_turn("first of ours")
    talk.run_turn("second of ours")
    assert "HERMES MID-TURN" in [m.get("content") for m in talk.agent.messages]
    assert sorted(talk.agent.message_ids) == [m.id for m in home.archive.messages("h-mid")]


def test_hermes_compressing_a_live_session_moves_us_to_its_child(home, hermes):
    """Hermes ended the session we resumed live with `compression` and went on in a child: our next
    message reopened the parent, cleared its end and wrote into it, and leaving ended it `cli_close`,
    so Hermes's lineage lost the link (found in review). It goes to the child now, said."""
    from engine.conversation import Conversation

    hermes.run(home.root, SESSION_SCRIPT + "db.create_session('h-c', 'cli')\nsay('h-c', 'user', 'hi')\n")
    events = []
    talk = Conversation(home, OfflineModel(), session="h-c", on_event=events.append)
    talk.run_turn("one")
    hermes.run(
        home.root,
        SESSION_SCRIPT
        + "db.end_session('h-c', 'compression')\n"
        + "db.create_session('h-c2', 'cli', parent_session_id='h-c')\nsay('h-c2', 'user', 'continued in child')\n",
    )
    talk.run_turn("two")
    warnings = [str(e.data.get("message")) for e in events if e.kind == "warning"]
    assert any("compressed elsewhere" in w and "goes on in h-c2" in w for w in warnings), warnings
    talk.end()
    assert hermes.json(home.root, HERMES_ROW.format(sid="h-c"))[1] == "compression"
    assert [m.content for m in home.archive.messages("h-c")][-1] != "two"
    assert "two" in [m.content for m in home.archive.messages("h-c2")]


def test_hermes_compacting_a_live_session_in_place_reloads_the_history(home, hermes):
    """Hermes compacted the session in place (old rows inactive, a summary added): the model saw the
    old turns and the summary that replaces them (found in review). The history is read again."""
    from engine.conversation import Conversation

    hermes.run(home.root, SESSION_SCRIPT + "db.create_session('h-i', 'cli')\nsay('h-i', 'user', 'hi')\n")
    talk = Conversation(home, OfflineModel(), session="h-i")
    talk.run_turn("one")
    summary = "SUMMARY of hi/one"
    hermes.run(
        home.root, SESSION_SCRIPT + f"db.archive_and_compact('h-i', [{{'role': 'user', 'content': {summary!r}}}])\n"
    )
    talk.run_turn("two")
    seen = [m.get("content") for m in talk.agent.messages if m["role"] != "system"]
    assert "hi" not in seen and "one" not in seen and seen[0] == summary, seen
