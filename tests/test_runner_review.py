"""Background review: nudge counters, review actor/origin, skill proposals, approval staging."""

from __future__ import annotations

import threading

from engine.models import OfflineModel
from engine.models.base import Model, ModelReply, ToolCall
from engine.runner import AgentSession, RequestLog


def _config(home, text: str) -> None:
    home.config_path.write_text(text, encoding="utf-8")
    home.reload_config()


def test_memory_review_fires_every_nudge_interval_and_saves_as_review(home):
    _config(home, "memory:\n  nudge_interval: 2\nskills:\n  creation_nudge_interval: 0\n")
    seen = []
    session = AgentSession(home, OfflineModel(), on_event=seen.append)
    first = session.run_turn("I usually deploy on Tuesdays after the standup")
    assert first.review is None and home.memory.entries("user") == []
    second = session.run_turn("hello")
    assert second.review is not None and second.review.triggers == ["memory"]
    assert home.memory.entries("user") == ["User usually deploys on Tuesdays after the standup."]
    entry = home.journal.query(subsystem="memory")[0]
    assert (entry.actor, entry.session_id) == ("review", session.id)
    kinds = [e.kind for e in seen]
    assert kinds[-3:] == ["review_started", "tool_result", "review_finished"]
    assert seen[-1].actor == seen[-2].actor == "review"
    assert seen[-1].data["writes"] == 1
    assert seen[-1].data["summary"] == "User profile + \u201cUser usually deploys on Tuesdays after the standup.\u201d"
    assert seen[-1].data["line"].endswith("\u2014 Why: a habit the user described.")
    # the review reuses the session's exact prefix (prompt + tools), and stores nothing
    log = RequestLog(home)
    assert set(log.prefix_hashes(session.id, "review")) == set(log.prefix_hashes(session.id, "turn"))
    assert not any("Review the conversation" in m.text for m in home.archive.messages(session.id))
    assert session.run_turn("hi").review is None  # counter restarted


def test_memory_tool_use_resets_the_memory_nudge(home):
    _config(home, "memory:\n  nudge_interval: 2\nskills:\n  creation_nudge_interval: 0\n")
    session = AgentSession(home, OfflineModel())
    session.run_turn("hello")
    assert session.run_turn("remember that I like green tea").review is not None  # fired at turn start
    session.run_turn("remember that I like black tea")
    assert session.turns_since_memory == 0


def _routine_twice(home, approval: bool):
    _config(
        home,
        "memory:\n  nudge_interval: 0\nskills:\n  creation_nudge_interval: 4\n"
        f"  write_approval: {'true' if approval else 'false'}\n",
    )
    session = AgentSession(home, OfflineModel())
    first = session.run_turn("prepare the billing release")
    assert [c["name"] for c in first.tool_calls] == ["skills_list", "session_search"] and first.review is None
    second = session.run_turn("prepare the billing release for the hotfix")
    return session, second.review


def test_repeated_multi_step_requests_become_a_skill(home):
    session, review = _routine_twice(home, approval=False)
    assert review.triggers == ["skills"]
    created = [a for a in review.actions if a["name"] == "skill_manage"]
    assert created[0]["arguments"]["name"] == "prepare-billing-release" and created[0]["result"]["success"] is True
    assert review.summary == "Skill 'prepare-billing-release' created"
    info = home.skills.get("prepare-billing-release")
    assert info.name == "prepare-billing-release"
    third = session.run_turn("prepare the billing release")  # now the skill is found and followed
    assert [c["name"] for c in third.tool_calls] == ["skills_list", "skill_view", "session_search"]
    assert "session_search" in third.assistant or "Search past sessions" in third.assistant


def test_with_skills_write_approval_the_proposal_waits_in_the_queue(home):
    _, review = _routine_twice(home, approval=True)
    assert review.staged and home.approvals.count("skills") == 1
    assert review.summary == "1 proposal waiting for approval"
    assert [s.name for s in home.skills.list()] == []
    record = home.approvals.get(review.staged[0])
    assert record.origin == "background_review"


class Greedy(Model):
    """During a review, tries a tool the review may not use, then gives up."""

    name = "greedy"

    def complete(self, messages, tools):
        if not messages[-1]["content"].startswith("Review the conversation above"):
            return ModelReply(content="ok")
        return ModelReply(tool_calls=[ToolCall("r1", "session_search", {"query": "x"})])


def test_review_tools_are_restricted_and_failures_stay_out_of_the_turn(home):
    _config(home, "memory:\n  nudge_interval: 1\n")
    result = AgentSession(home, Greedy()).run_turn("hello")
    assert result.status == "done" and result.assistant == "ok"
    denied = result.review.actions[0]["result"]
    assert denied["success"] is False and "denied tool 'session_search'" in denied["error"]


class SlowReview(Model):
    """Answers turns at once; in a review, waits until released, then saves one memory entry."""

    name = "slow-review"

    def __init__(self):
        self.in_review, self.release = threading.Event(), threading.Event()

    def complete(self, messages, tools):
        last = messages[-1]
        if last["role"] == "user" and last["content"].startswith("Review the conversation above"):
            self.in_review.set()
            self.release.wait(5)
            return ModelReply(
                tool_calls=[
                    ToolCall(
                        "r1", "memory", {"action": "add", "target": "memory", "content": "Reviewed in the background."}
                    )
                ]
            )
        return ModelReply(content="ok")


def test_background_review_runs_after_the_turn_on_its_own_thread(home):
    _config(home, "memory:\n  nudge_interval: 1\nskills:\n  creation_nudge_interval: 0\n")
    model = SlowReview()
    seen = []
    session = AgentSession(home, model, background_review=True, on_event=seen.append)
    result = session.run_turn("hello")
    assert result.status == "done" and result.review is None  # the answer did not wait for the review
    assert model.in_review.wait(5) and session.wait_for_review(0.05) is False
    model.release.set()
    assert session.wait_for_review(5) is True
    assert home.memory.entries("memory") == ["Reviewed in the background."]
    assert [e.kind for e in seen if e.actor == "review"][-2:] == ["review_finished", "review_settled"]
    assert session.reviews_under_way() == []  # (review_settled: its thread let go of it)
    session.close()


def test_a_new_turn_never_waits_for_a_review_still_running(home):
    _config(home, "memory:\n  nudge_interval: 1\nskills:\n  creation_nudge_interval: 0\n")
    model = SlowReview()
    finished = []
    session = AgentSession(
        home, model, background_review=True, on_event=lambda e: e.kind == "review_finished" and finished.append(e.data)
    )
    first = session.run_turn("hello")
    assert model.in_review.wait(5)
    second = session.run_turn("next question")  # runs while the first review is still blocked in its model call
    assert second.status == "done" and session.reviewing and finished == [] and first.review is None
    model.release.set()
    assert session.wait_for_review(10) is True and not session.reviewing
    assert [f["writes"] for f in finished] == [1, 0]  # both ran, in turn order; the second's add was a duplicate
    assert first.review.writes and second.review.actions  # each turn's result carries its review once it ended
    assert home.memory.entries("memory") == ["Reviewed in the background."]
    session.close()


def test_ending_or_closing_a_session_stops_its_review_thread(home):
    """An agent that is done keeps no thread: an idle one would hold its last review (a whole
    session) and the stderr it was started under (in the TUI, the app) for the process's life."""
    _config(home, "memory:\n  nudge_interval: 1\nskills:\n  creation_nudge_interval: 0\n")
    for finish in ("end", "close"):
        session = AgentSession(home, OfflineModel(), background_review=True)
        assert session.run_turn("remember that the release freeze starts on the 28th").status == "done"
        thread = session._reviews._thread
        assert thread is not None and thread.is_alive()
        getattr(session, finish)()
        thread.join(5)
        assert not thread.is_alive(), finish
        assert not session.reviewing


def test_a_turn_that_ends_after_the_quit_dropped_the_reviews_has_its_review_said_not_done(home, caplog):
    """ctrl+q while a Run turn waited for its model: the quit dropped the reviews under way (none yet), the
    turn ended after, and its review, not queued, left "warning: background review not queued: session …
    was already ended or closed" on the terminal. Now it is noted as the quit's other dropped reviews are:
    the next start says "Review not done" for that session."""
    from engine.runner import background, dropped

    _config(home, "memory:\n  nudge_interval: 1\nskills:\n  creation_nudge_interval: 0\n")
    session = AgentSession(home, OfflineModel(), background_review=True)
    assert background.drop(home) == []  # (the quit, while the turn below still waits for its model)
    assert session.run_turn("remember that the release freeze starts on the 28th").status == "done"
    assert dropped.take(home) == [session.id]
    assert "not queued" not in caplog.text
    session.close()


def _transcript(home, model=None, *, skills: int = 0) -> tuple[AgentSession, list]:
    """A fixed five-turn session: who the user is, a correction, a repeated three-step routine."""
    _config(home, f"memory:\n  nudge_interval: 5\nskills:\n  creation_nudge_interval: {skills}\n")
    seen = []
    session = AgentSession(home, model or OfflineModel(), on_event=seen.append, background_review=True)
    for text in (
        "Hi, I'm Lin and I work on the billing service",
        "By the way, I'm a site reliability engineer",
        "prepare the billing release",
        "no, use tabs in the release notes",
        "prepare the billing release for the hotfix",
    ):
        assert session.run_turn(text).status == "done"
    assert session.wait_for_review(10)
    return session, seen


def test_the_offline_review_learns_who_the_user_is_and_a_repeated_workflow(home):
    session, seen = _transcript(home, skills=7)
    assert home.memory.entries("user") == [
        "User's name is Lin.",
        "User works on the billing service.",
        "User is a site reliability engineer.",
        "User wants the agent to use tabs in the release notes.",
    ]
    finished = [e.data for e in seen if e.kind == "review_finished"]
    assert len(finished) == 1 and finished[0]["triggers"] == ["memory", "skills"]
    skill = [a for a in finished[0]["actions"] if a["name"] == "skill_manage"][0]["arguments"]
    assert skill["action"] == "create" and skill["name"] == "prepare-billing-release"
    assert "skills_list -> session_search" in skill["content"]
    line = finished[0]["line"]
    assert (
        line.startswith("User profile + \u201cUser's name is Lin.\u201d")
        and "Skill 'prepare-billing-release' created" in line
    )
    assert "the user gave their name" in line and "the user corrected how the agent works" in line
    assert "3-step" not in line and "2-step tool sequence answered a request made 2 times" in line
    assert not any("Review the conversation" in (m.text or "") for m in home.archive.messages(session.id))
    session.close()


def test_a_review_patches_the_skill_that_was_viewed_instead_of_creating_one(home):
    from engine.tools import ToolContext

    body = (
        "---\nname: prepare-billing-release\ndescription: Prepare a billing release\n---\n"
        "# Prepare a billing release\n\n## Steps\n1. Tag the release.\n2. Write the notes.\n"
    )
    assert home.skills.manage(
        {"action": "create", "name": "prepare-billing-release", "content": body},
        ToolContext(actor="agent", origin="background_review"),
    )["success"]
    session, seen = _transcript(home, skills=8)
    finished = [e.data for e in seen if e.kind == "review_finished"][-1]
    names = [(a["name"], a["arguments"].get("action")) for a in finished["actions"] if a["name"].startswith("skill")]
    assert names == [("skill_view", None), ("skill_manage", "patch")]
    content = home.skills.view("prepare-billing-release")["content"]
    assert "3. Check earlier work with session_search before starting" in content
    assert "Skill 'prepare-billing-release' patched" in finished["line"]
    session.close()


def test_a_review_told_another_name_proposes_it_in_place_of_the_old_one(home):
    """ "User's name is Tomas." shares most words with "User's name is Maya.": it was skipped as known."""
    from engine.tools import ToolContext

    _config(home, "memory:\n  nudge_interval: 1\nskills:\n  creation_nudge_interval: 0\n")
    assert home.memory.add("user", "User's name is Maya.", ToolContext(actor="user"))["success"]
    session = AgentSession(home, OfflineModel())
    review = session.run_turn("Hi, I'm Tomas").review
    [record] = home.approvals.list("memory")  # a review may only add: its replace waits for approval
    assert record.payload["action"] == "replace" and record.payload["content"] == "User's name is Tomas."
    assert record.payload["matched_entry"] == "User's name is Maya." and "another name" in review.line
    home.approvals.approve(record.id)
    assert home.memory.entries("user") == ["User's name is Tomas."]
    assert session.run_turn("Hi, I'm Tomas").review.staged == []  # known now: nothing to propose
    session.close()


def test_a_review_told_another_team_proposes_it_and_skips_the_team_memory_gives(home):
    """ "User works on the search team." was skipped next to "User works on the payments team (backend).":
    the words of the subject ("User works on the … team") counted it as known, as the name's once did."""
    from engine.tools import ToolContext

    _config(home, "memory:\n  nudge_interval: 1\nskills:\n  creation_nudge_interval: 0\n")
    old = "User works on the payments team (backend)."
    assert home.memory.add("user", old, ToolContext(actor="user"))["success"]
    session = AgentSession(home, OfflineModel())
    assert session.run_turn("Hi, I work on the payments team").review.line == "Nothing to save."  # known: skipped
    review = session.run_turn("Hi, I work on the search team").review
    [record] = home.approvals.list("memory")  # a changed fact: a replace, which waits for approval
    assert record.payload["action"] == "replace" and record.payload["content"] == "User works on the search team."
    assert record.payload["matched_entry"] == old and "the user named another team" in review.line
    home.approvals.reject(record.id)
    session.close()
    session = AgentSession(home, OfflineModel())
    review = session.run_turn("Hi, I work on the billing service").review  # another subject: an add
    assert home.memory.entries("user") == [old, "User works on the billing service."] and review.staged == []
    session.close()


def test_the_review_never_saves_task_progress_todos_or_secrets(home):
    _config(home, "memory:\n  nudge_interval: 3\nskills:\n  creation_nudge_interval: 0\n")
    session = AgentSession(home, OfflineModel())
    session.run_turn("I'm picking up the ledger hotfix today")
    session.run_turn("I need to rerun the failed export later, todo after lunch")
    review = session.run_turn("my api key is sk-live1234567890 and I prefer short answers").review
    assert home.memory.entries("user") == ["User prefers short answers."] and home.memory.entries("memory") == []
    assert review.writes and "sk-live" not in review.line


class Boaster(Model):
    """Claims to remember without ever calling a tool, except when asked to save for real."""

    name = "boaster"

    def complete(self, messages, tools):
        last = messages[-1]
        if last["role"] == "tool":
            return ModelReply(content="Saved to memory.")
        if "really" in str(last.get("content")):
            return ModelReply(
                tool_calls=[ToolCall("w1", "memory", {"action": "add", "target": "memory", "content": "Tea is green."})]
            )
        return ModelReply(content="Sure, I'll remember that.")


def test_unbacked_claims_are_flagged_marked_and_counted(home, capsys):
    import json

    from workbench.cli import main

    seen = []
    session = AgentSession(home, Boaster(), on_event=seen.append)
    first = session.run_turn("tea is green")
    second = session.run_turn("really save that tea is green")
    assert first.unbacked_claim is True and second.unbacked_claim is False
    assert [e.data["text"] for e in seen if e.kind == "unbacked_claim"] == ["Sure, I'll remember that."]
    session.end()
    stored = home.archive.messages(session.id)
    claim_id = next(m.id for m in stored if m.text == "Sure, I'll remember that.")
    assert main(["--home", str(home.root), "sessions", "show", session.id, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["unbacked_claims"] == {"count": 1, "message_ids": [claim_id]}
    assert main(["--home", str(home.root), "sessions", "show", session.id]) == 0
    marked = [line for line in capsys.readouterr().out.splitlines() if "unbacked claim" in line]
    assert len(marked) == 1 and marked[0].startswith(f"#{claim_id} assistant")
    from workbench.screens.sessions import UNBACKED_NOTE, session_items  # the Sessions transcript marks it too

    items = {item.id: item for item in session_items(home, session.id)}
    assert items[claim_id].mark == "unbacked claim" and UNBACKED_NOTE in items[claim_id].writes
    assert sum(1 for item in items.values() if item.mark == "unbacked claim") == 1


def test_a_review_told_another_editor_proposes_the_change_and_skips_the_one_memory_gives(home):
    """A one-value fact said in passing (the turn saves nothing of it) was proposed beside the old one:
    "I'm on Linux now" next to "User's OS is macOS.". The review now proposes a replace, skips the value
    memory gives, and adds a fact of another kind."""
    from engine.tools import ToolContext

    _config(home, "memory:\n  nudge_interval: 1\nskills:\n  creation_nudge_interval: 0\n")
    old = "User's OS is macOS."
    assert home.memory.add("user", old, ToolContext(actor="user"))["success"]
    session = AgentSession(home, OfflineModel())
    assert session.run_turn("thanks! I'm on macOS").review.line == "Nothing to save."  # known
    review = session.run_turn("thanks! I'm on Linux now").review
    [record] = home.approvals.list("memory")
    assert record.payload["action"] == "replace" and record.payload["content"] == "User uses Linux now."
    assert record.payload["matched_entry"] == old and "the user gave another operating system" in review.line
    home.approvals.approve(record.id)
    review = session.run_turn("thanks! I switched to fish").review  # another kind: an add
    assert home.memory.entries("user") == ["User uses Linux now.", "User uses fish."] and review.staged == []
    session.close()


def test_a_changed_fact_the_user_rejected_is_not_proposed_again(home):
    """Rejected, the review's replace of "User's OS is macOS." by "User uses Linux now." waited again after
    the next turn: the conversation still said it, and the next review proposed the same replace."""
    from engine.tools import ToolContext

    _config(home, "memory:\n  nudge_interval: 1\n  write_approval: true\nskills:\n  creation_nudge_interval: 0\n")
    assert home.memory.add("user", "User's OS is macOS.", ToolContext(actor="user"))["success"]
    session = AgentSession(home, OfflineModel())
    session.run_turn("thanks! I'm on Linux now")
    [record] = home.approvals.list("memory")
    assert record.payload["action"] == "replace"
    home.approvals.reject(record.id)
    review = session.run_turn("thanks, that is all").review
    assert home.approvals.list("memory") == [] and "1 not proposed again" in review.line
    session.close()
