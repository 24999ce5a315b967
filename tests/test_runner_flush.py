"""The memory flush before a compression: one memory-only call whose writes reach the rebuilt prompt."""

from __future__ import annotations

from engine.models import OfflineModel
from engine.models.base import FLUSH_PROMPT, ModelError
from engine.runner import AgentSession, RequestLog
from tests.test_runner_compression import _chat, _squeeze
from tests.test_runner_session import Recording

INTRO = "Hi, I'm Lin and I work on the billing service"


def _talk(home, model, **kwargs) -> AgentSession:
    seen = kwargs.pop("seen", [])
    session = AgentSession(home, model, title="Billing", on_event=seen.append, **kwargs)
    assert session.run_turn(INTRO).status == "done"
    _chat(session, 4)
    return session


def test_the_flush_saves_before_the_compression_and_the_child_prompt_has_it(home):
    seen, model = [], Recording(OfflineModel())
    session = _talk(home, model, seen=seen)
    assert home.memory.entries("user") == []  # the greeting turn itself saved nothing
    parent_id = session.id
    _squeeze(home, session)
    assert session.run_turn("what did we discuss about invoices?").status == "done"
    assert session.id != parent_id
    last_stored = home.archive.messages(parent_id)[-1]  # the question that triggered the compression
    assert last_stored.text == "what did we discuss about invoices?"
    assert home.memory.entries("user") == ["User's name is Lin.", "User works on the billing service."]
    # the flush ran first, then the compression whose fresh snapshot holds its writes
    kinds = [e.kind for e in seen]
    assert kinds.index("flush_started") < kinds.index("flush_finished") < kinds.index("session_rotated")
    assert "User's name is Lin." in home.archive.get_session(session.id).system_prompt
    assert "User's name is Lin." not in home.archive.get_session(parent_id).system_prompt
    # one request, offering only the memory tool, over the part about to be summarised plus the note
    flush_request = next(call for call in model.calls if call[-1]["content"] == FLUSH_PROMPT)
    assert flush_request[0]["role"] == "system" and flush_request[1]["content"] == INTRO
    assert "what did we discuss about invoices?" not in [m.get("content") for m in flush_request]
    assert len(RequestLog(home).prefix_hashes(parent_id, "flush")) == 1
    entries = [e for e in home.journal.query(subsystem="memory") if e.action == "add"]
    assert {(e.actor, e.session_id, e.message_id, e.detail.get("origin")) for e in entries} == {
        ("agent", parent_id, last_stored.id, "flush")
    }
    finished = next(e for e in seen if e.kind == "flush_finished").data
    assert finished["saved"] == home.memory.entries("user") and "saved 2 entries" in finished["summary"]


def test_the_flush_also_runs_before_an_in_place_compaction_and_the_kept_row_gets_it(home):
    seen = []
    session = _talk(home, OfflineModel(), seen=seen)
    session_id = session.id
    _squeeze(home, session, in_place="true")
    assert session.run_turn("what did we discuss about invoices?").status == "done"
    assert session.id == session_id  # compacted in place: the same row
    kinds = [e.kind for e in seen]
    assert kinds.index("flush_finished") < kinds.index("session_rotated")
    assert next(e for e in seen if e.kind == "session_rotated").data["in_place"] is True
    assert home.memory.entries("user") == ["User's name is Lin.", "User works on the billing service."]
    assert "User's name is Lin." in home.archive.get_session(session_id).system_prompt  # the rebuilt prompt


def test_the_flush_can_be_turned_off(home):
    home.config_path.write_text("compression:\n  flush_memories: false\n", encoding="utf-8")
    home.reload_config()
    seen = []
    session = _talk(home, OfflineModel(), seen=seen)
    _squeeze(home, session, flush_memories="false")
    parent_id = session.id
    session.run_turn("what did we discuss about invoices?")
    assert session.id != parent_id and home.memory.entries("user") == []
    assert not any(e.kind.startswith("flush") for e in seen)


def test_no_flush_when_the_turn_is_interrupted(home):
    seen = []
    session = _talk(home, OfflineModel(), seen=seen)
    session.cancel()  # a stop arrives just as a compression starts
    assert session.maybe_compress(force=True) is True
    assert home.memory.entries("user") == [] and not any(e.kind.startswith("flush") for e in seen)


class BrokenFlush(OfflineModel):
    """The offline model, except that the flush request fails."""

    def complete(self, messages, tools):
        if messages[-1]["content"] == FLUSH_PROMPT:
            raise ModelError("the endpoint is down")
        return super().complete(messages, tools)


def test_a_failing_flush_never_blocks_the_compression(home):
    seen = []
    session = _talk(home, BrokenFlush(), seen=seen)
    parent_id = session.id
    _squeeze(home, session)
    assert session.run_turn("what did we discuss about invoices?").status == "done"
    assert session.id != parent_id and home.archive.get_session(parent_id).end_reason == "compression"
    finished = next(e for e in seen if e.kind == "flush_finished").data
    assert finished["error"] == "the endpoint is down" and home.memory.entries("user") == []


def test_the_offline_flush_saves_only_what_is_new_and_stable():
    system = {"role": "system", "content": "You are helpful."}
    messages = [
        system,
        {"role": "user", "content": "I prefer tabs. I'm picking up the hotfix today."},
        {"role": "assistant", "content": "Okay."},
        {"role": "user", "content": "my password is hunter2, and we use Renovate for dependency updates"},
        {"role": "user", "content": FLUSH_PROMPT},
    ]
    reply = OfflineModel().complete(messages, [])
    added = [c.arguments for c in reply.tool_calls]
    assert added == [
        {"action": "add", "target": "user", "content": "User prefers tabs."},
        {"action": "add", "target": "memory", "content": "The team uses Renovate for dependency updates."},
    ]
    assert reply == OfflineModel().complete(messages, [])  # deterministic
