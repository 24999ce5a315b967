"""The conversation lifecycle: open or resume by id, prefix or title; turns; switches; always an end reason."""

from __future__ import annotations

from engine.conversation import Conversation
from engine.events import RunnerEvent
from engine.models import make_model
from engine.scenarios import run_scenario
from engine.tools import ToolContext


def test_a_conversation_resumes_by_title_and_ends_with_a_reason(home):
    first = Conversation(home, make_model(home, "offline"), title="Kitchen")
    first.run_turn("remember that the kettle is blue")
    first.end()
    assert home.archive.get_session(first.id).end_reason == "cli_close"
    again = Conversation(home, make_model(home, "offline"), session="Kitchen")
    assert again.id == first.id
    assert again.run_turn("thanks").session_id == first.id and home.archive.get_session(first.id).ended_at is None
    again.end("user_exit")
    again.end("ignored")  # ending twice changes nothing
    assert home.archive.get_session(first.id).end_reason == "user_exit"


def test_switching_session_ends_the_one_left_at_once_as_hermes_ends_it(home):
    """A switch ends the session left there and then, with the reason Hermes's /new (``new_session``)
    or /resume (``resumed_other``) writes; quitting still writes ``cli_close``."""
    conversation = Conversation(home, make_model(home, "offline"))
    conversation.run_turn("hello")
    first = conversation.id
    second = conversation.switch_session()
    assert second != first and home.archive.get_session(first).end_reason == "new_session"
    assert home.archive.get_session(second) is None, "a session never written is not made"
    assert conversation.switch_session() != second and home.archive.get_session(second) is None  # nor ended
    conversation.run_turn("hello again")
    third = conversation.id
    assert conversation.switch_session(first) == first  # resuming reopens it at once, as Hermes's /resume
    assert home.archive.get_session(third).end_reason == "resumed_other"
    assert home.archive.get_session(first).ended_at is None
    conversation.run_turn("back")
    assert home.archive.get_session(first).ended_at is None
    assert conversation.switch_session(first) == first  # the session it is in: nothing ends
    assert home.archive.get_session(first).ended_at is None
    conversation.end()
    assert home.archive.get_session(first).end_reason == "cli_close"


def test_a_session_left_that_was_ended_or_deleted_meanwhile_stays_so(home, clock):
    """Another program (Hermes) ended or deleted the session before the switch left it: its end and
    time stay as they were, a deleted one is not made again, and the switch goes on."""
    conversation = Conversation(home, make_model(home, "offline"))
    conversation.run_turn("hello")
    ended = conversation.id
    home.archive.end_session(ended, "cron_complete")
    before = home.archive.get_session(ended)
    clock.advance(60)
    assert conversation.switch_session() != ended
    after = home.archive.get_session(ended)
    assert (after.end_reason, after.ended_at) == ("cron_complete", before.ended_at)
    conversation.run_turn("another")
    deleted = conversation.id
    assert home.archive.delete_session(deleted, actor="user", live=True)
    assert conversation.switch_session(ended) == ended
    assert home.archive.get_session(deleted) is None


def test_a_scenario_overlay_reaches_its_sessions_only_never_the_home(home, tmp_path):
    scenario = tmp_path / "gate.yaml"
    scenario.write_text(
        "name: gate\nconfig:\n  memory.write_approval: true\nsessions:\n  - title: Gated\n"
        "    turns:\n      - user: remember that the office is in Leeds\n",
        encoding="utf-8",
    )
    seen: list[bool] = []

    def on_event(event) -> None:  # the scenario's own thread; every other user of ``home`` keeps its settings
        seen.append(home.config.bool("memory.write_approval"))

    result = run_scenario(home, str(scenario), speed=0, on_event=on_event, model=make_model(home, "offline"))
    assert seen and not any(seen) and not home.config.bool("memory.write_approval")
    assert home.memory.entries("memory") == [] and len(home.approvals.list()) == 1  # staged under the overlay
    assert home.archive.get_session(result.session_ids[0]).end_reason == "user_exit"
    assert "staged" not in home.memory.add("memory", "Agent note", ToolContext(actor="agent"))  # the home's own gate


def test_a_session_deleted_while_talking_in_it_gives_way_to_a_new_one(home):
    """Deleting the session Run talks in (Sessions, D) made every later message fail to store ("No
    session with id ..."), and ctrl+l and resuming failed the same way: the session left was stored
    and ended first."""
    events = []
    home.bus.subscribe(events.append)
    talking = Conversation(home, make_model(home, "offline"))
    talking.run_turn("remember that I like green tea")
    deleted = talking.id
    assert home.archive.delete_session(deleted, actor="user", live=True)
    result = talking.run_turn("what do I like?")
    assert result.status == "done" and result.session_id != deleted
    assert home.archive.get_session(deleted) is None  # what it held is not stored again
    assert [(m.role, m.content) for m in home.archive.messages(result.session_id)][0] == ("user", "what do I like?")
    said = [e.data["message"] for e in events if getattr(e, "kind", None) == "warning"]
    assert f"Session {deleted} was deleted; this message starts a new session." in said
    for leave in (lambda c: c.switch_session(), lambda c: c.end()):  # ctrl+l, and quitting
        other = Conversation(home, make_model(home, "offline"))
        other.run_turn("a note")
        gone = other.id
        home.archive.delete_session(gone, actor="user", live=True)
        leave(other)  # (it raised "No session with id")
        assert home.archive.get_session(gone) is None


def test_switching_to_a_session_deleted_since_it_was_chosen_starts_a_new_one(home):
    """Run's resume picker chose a session another program then deleted: the switch failed, and the
    message sent again went into the session the user had left. Nor may an id another session's
    starts with or a title stand in for it."""
    left = Conversation(home, make_model(home, "offline"))
    left.run_turn("hello")
    home.archive.create_session("u17", source="cli")
    home.archive.create_session("u170", source="cli", title="u17")  # its id starts so, and its title is that
    home.archive.delete_session("u17", live=True)
    first, said = left.id, []
    home.bus.subscribe(lambda e: said.append(e.data.get("message")), RunnerEvent)
    new = left.switch_session("u17")
    assert new not in (first, "u17", "u170")
    assert [m for m in said if m and "deleted" in m] == [
        "Session u17 was deleted; your next message starts a new session."
    ]
    assert left.run_turn("hi again").session_id == new
    assert home.archive.get_session("u170").message_count == 0
    assert home.archive.get_session(first).message_count == 2 and home.archive.get_session(first).ended_at
