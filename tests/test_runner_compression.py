"""Compression: boundaries keep tool pairs whole; rotation makes a child session; in-place keeps one."""

from __future__ import annotations

from engine.models import OfflineModel
from engine.runner import AgentSession
from engine.runner.compression import PROMPT_NOTE, SUMMARY_PREFIX, boundaries, compact, plan


def _pair(n: int) -> list[dict]:
    call = {"id": f"c{n}", "type": "function", "function": {"name": "skills_list", "arguments": "{}"}}
    return [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{n}", "content": "{}" + "x" * 400},
    ]


def _conversation(turns: int) -> list[dict]:
    messages = []
    for n in range(turns):
        messages += [
            {"role": "user", "content": f"request {n} " + "y" * 300},
            *_pair(n),
            {"role": "assistant", "content": f"answer {n}"},
        ]
    return messages


def test_boundaries_never_split_a_tool_call_from_its_results():
    messages = _conversation(6)
    for first in range(0, 6):
        for budget in (0, 50, 100, 200, 400, 800):
            cut = boundaries(messages, first, budget)
            if cut is None:
                continue
            head_end, tail_start = cut
            assert messages[head_end]["role"] != "tool" and messages[tail_start]["role"] != "tool"
            assert tail_start <= max(i for i, m in enumerate(messages) if m["role"] == "user")
            assert tail_start - head_end >= 2


def test_compact_summarises_the_middle_extractively():
    messages = _conversation(5)
    done = compact(messages, OfflineModel(), plan(messages, protect_first_n=2, tail_budget=150))
    assert done.head == messages[: len(done.head)] and done.tail == messages[len(messages) - len(done.tail) :]
    assert done.dropped == len(messages) - len(done.head) - len(done.tail)
    text = done.summary["content"]
    assert text.startswith(SUMMARY_PREFIX) and "## Goal" in text and "skills_list" in text
    assert done.summary["role"] != done.tail[0]["role"] or done.head[-1]["role"] == done.summary["role"]
    assert plan(messages[:4], protect_first_n=3, tail_budget=10) is None


def _chat(session: AgentSession, n: int) -> None:
    for i in range(n):
        assert session.run_turn(f"prepare the weekly report number {i}").status == "done"


def _squeeze(home, session: AgentSession, **extra) -> None:
    """Make the budget just smaller than the current context, so the next request compresses."""
    lines = [f"model:\n  context_length: {session.context_tokens() - 1}", "compression:\n  threshold: 1.0"]
    lines += [f"  {k}: {v}" for k, v in extra.items()]
    home.config_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    home.reload_config()


def test_compression_rotates_into_a_child_whose_parent_ended_with_compression(home):
    seen = []
    session = AgentSession(home, OfflineModel(), title="Weekly reports", on_event=seen.append)
    session.run_turn("remember that the weekly report goes to finance on Mondays")
    _chat(session, 4)
    parent_id, old_prompt, had = session.id, session.system_prompt, len(session.messages)
    _squeeze(home, session)
    result = session.run_turn("what did we discuss about invoices?")
    assert result.status == "done" and session.id != parent_id and result.session_id == session.id
    parent, child = home.archive.get_session(parent_id), home.archive.get_session(session.id)
    assert parent.end_reason == "compression" and child.ended_at is None
    assert child.parent_session_id == parent_id
    assert (parent.title, child.title) == ("Weekly reports", "Weekly reports #2")
    assert home.archive.lineage(session.id).chain == [parent_id, session.id]
    assert "finance on Mondays" not in old_prompt
    assert "finance on Mondays" in child.system_prompt and child.system_prompt.endswith(PROMPT_NOTE)
    stored = home.archive.messages(session.id)
    assert sum(1 for m in stored if m.text.startswith(SUMMARY_PREFIX)) == 1
    ids = {c["id"] for m in stored for c in (m.tool_calls or [])}
    assert all(m.tool_call_id in ids for m in stored if m.role == "tool")
    assert [m.role for m in stored[-4:]] == ["user", "assistant", "tool", "assistant"]
    assert stored[-4].text == "what did we discuss about invoices?"
    rotated = [e for e in seen if e.kind == "session_rotated"]
    assert len(rotated) == 1 and rotated[0].data["old_session_id"] == parent_id
    assert rotated[0].data["dropped"] > 0 and rotated[0].data["in_place"] is False
    assert len(home.archive.messages(parent_id)) == had + 1  # the parent keeps everything, up to the new question


def test_in_place_compaction_keeps_the_session_and_archives_old_rows(home):
    session = AgentSession(home, OfflineModel())
    session.run_turn("remember that the weekly report goes to finance on Mondays")
    _chat(session, 5)
    old_prompt = home.archive.get_session(session.id).system_prompt
    before = len(home.archive.messages(session.id))
    _squeeze(home, session, in_place="true")
    session_id = session.id
    session.run_turn("hello again")
    assert session.id == session_id and home.archive.get_session(session_id).end_reason is None
    # the rebuilt prompt (fresh memory snapshot + compaction note) is what the row now holds
    stored_prompt = home.archive.get_session(session_id).system_prompt
    assert "finance on Mondays" not in old_prompt and stored_prompt == session.system_prompt
    assert "finance on Mondays" in stored_prompt and stored_prompt.endswith(PROMPT_NOTE)
    [entry] = [e for e in home.journal.query(subsystem="sessions") if e.action == "system_prompt"]
    assert entry.session_id == session_id and entry.detail["chars_after"] == len(stored_prompt)
    assert AgentSession(home, OfflineModel(), session_id=session_id).system_prompt == stored_prompt  # resumes with it
    live = home.archive.messages(session_id)
    assert len(live) < before and sum(1 for m in live if m.text.startswith(SUMMARY_PREFIX)) == 1
    assert [m["content"] for m in session.messages] == [m.content for m in live]
    archived = home.archive.messages(session_id, include_archived=True)
    assert any(m.compacted and "weekly report number 2" in m.text for m in archived)


def test_a_live_session_resumed_here_is_never_ended_by_a_compression(home):
    """Resumed while Hermes was writing to it, it was ended 'compression' by our turn: Hermes went on
    appending to an ended session, and the conversation moved to a child (user trial)."""
    hermes = AgentSession(home, OfflineModel(), title="Hermes's live one")
    _chat(hermes, 4)  # not ended: live, as a running Hermes leaves its session
    seen = []
    session = AgentSession(home, OfflineModel(), session_id=hermes.id, on_event=seen.append)
    assert session.live_before
    _squeeze(home, session)
    for text in ("what did we discuss about invoices?", "and about reports?"):
        assert session.run_turn(text).status == "done" and session.id == hermes.id
    row = home.archive.get_session(hermes.id)
    assert row.ended_at is None and home.archive.lineage(hermes.id).chain == [hermes.id]
    said = [e.data["message"] for e in seen if e.kind == "warning"]
    assert said == [
        f"Not compressed: session {hermes.id} has not ended (it is live: another Hermes may be "
        "writing to it), and compressing it would end it. Its context goes on growing; start a new "
        "session for a compressed one."
    ]  # (once, not every turn)
