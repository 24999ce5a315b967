"""The offline and scripted models on plain message lists (no home needed)."""

from __future__ import annotations

import json

import pytest

from engine import open_home
from engine.memory.format import render_block
from engine.models import OfflineModel, ScriptedModel
from engine.models.base import MEMORY_REVIEW_PROMPT, SKILL_REVIEW_PROMPT
from engine.models.offline import frozen_entries
from engine.models.phrasing import declarative, slug
from engine.providers.fence import build_memory_context_block
from tests.cli_support import ran

FACTS = ["The API runs on port 8080.", "Deploys happen on Fridays."]
SYSTEM = (
    f"You are helpful.\n\n{render_block('memory', FACTS, 2200)}\n\n"
    f"{render_block('user', ['User prefers tabs.'], 1375)}\n\n"
    "## Skills\n<available_skills>\n  devops:\n    - deploy-app: Deploy the app to production\n"
    "</available_skills>\n\nConversation started: today"
)


def first_call(text: str, system: str = SYSTEM):
    reply = OfflineModel().complete([{"role": "system", "content": system}, {"role": "user", "content": text}], [])
    return reply.tool_calls[0] if reply.tool_calls else reply.content


@pytest.mark.parametrize(
    "text, name, args",
    [
        (
            "remember that the staging DB is read-only on weekends",
            "memory",
            {"action": "add", "target": "memory", "content": "The staging DB is read-only on weekends."},
        ),
        (
            "Remember that I prefer dark mode",
            "memory",
            {"action": "add", "target": "user", "content": "User prefers dark mode."},
        ),
        (
            "my name is Ada Lovelace",
            "memory",
            {"action": "add", "target": "user", "content": "User's name is Ada Lovelace."},
        ),
        ("we use pytest", "memory", {"action": "add", "target": "memory", "content": "The team uses pytest."}),
        (
            "forget that deploys happen on fridays",
            "memory",
            {"action": "remove", "target": "memory", "old_text": "Deploys happen on Fridays."},
        ),
        (
            "forget that I prefer tabs",
            "memory",
            {"action": "remove", "target": "user", "old_text": "User prefers tabs."},
        ),
        ("what did we discuss about the billing migration?", "session_search", {"query": "billing migration"}),
        ("how do I deploy the app?", "skills_list", {}),
        ("prepare the quarterly report", "skills_list", {}),
        ("update the deploy-app skill: check the dashboards", "skill_view", {"name": "deploy-app"}),
    ],
)
def test_plain_requests_become_the_right_tool_call(text, name, args):
    call = first_call(text)
    assert (call.name, call.arguments) == (name, args)


@pytest.mark.parametrize(
    "text, target, content",
    [
        ("请记住：我喜欢乌龙茶", "user", "我喜欢乌龙茶。"),
        ("记住我们每周四部署", "memory", "我们每周四部署。"),
        ("請記住，部署在週四。", "memory", "部署在週四。"),
        ("覚えておいて：私は緑茶が好き", "user", "私は緑茶が好き。"),
        ("締め切りは金曜日だと覚えておいてください。", "memory", "締め切りは金曜日だ。"),
        ("私はvimを使うって覚えてね", "user", "私はvimを使う。"),
        ("本番DBは読み取り専用を記憶して", "memory", "本番DBは読み取り専用。"),
    ],
)
def test_a_chinese_or_japanese_request_to_remember_is_a_memory_add(text, target, content):
    """ "请记住：我喜欢乌龙茶" got a chat answer and wrote nothing, while "remember that ..." was saved."""
    call = first_call(text)
    assert (call.name, call.arguments) == ("memory", {"action": "add", "target": target, "content": content})


def test_answers_come_from_memory_and_recall_and_are_deterministic():
    assert first_call("which port does the API run on?") == "From what I remember: The API runs on port 8080."
    fenced = "anything about kafka?\n\n" + build_memory_context_block("- Kafka lag fires on rebalance")
    assert first_call(fenced) == "From our earlier sessions: Kafka lag fires on rebalance"
    assert first_call("what's the weather on Mars?").startswith("I don't have anything about that")
    assert first_call("hello").startswith("Hello!")
    assert first_call("a statement") == first_call("a statement")


def _turn(messages, model=None):
    """Run the model's tool loop on its own, answering every call with a canned result."""
    model = model or OfflineModel()
    results = {
        "skills_list": {"success": True, "skills": [{"name": "deploy-app", "description": "Deploy the app"}]},
        "skill_view": {"success": True, "content": "---\nname: deploy-app\n---\n# Deploy\n1. Build.\n2. Ship."},
        "session_search": {"success": True, "results": []},
    }
    while True:
        reply = model.complete(messages, [])
        messages.append(reply.to_message())
        if not reply.tool_calls:
            return reply.content, [c["function"]["name"] for m in messages for c in m.get("tool_calls") or []]
        for call in reply.tool_calls:
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call.id,
                    "content": json.dumps(results.get(call.name, {"success": True})),
                }
            )


def test_howto_loads_the_matching_skill_and_follows_it():
    answer, calls = _turn(
        [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "how do I deploy the app?"}]
    )
    assert calls == ["skills_list", "skill_view"] and answer == "Following the deploy-app skill:\n1. Build.\n2. Ship."


def test_narrow_searches_are_retried_with_one_word():
    answer, calls = _turn([{"role": "user", "content": "what did we discuss about the postgres upgrade?"}])
    assert calls == ["session_search", "session_search"] and "couldn't find" in answer


def test_review_proposes_habits_and_a_skill_for_repeated_routines():
    conversation = [{"role": "system", "content": SYSTEM}]
    for text in (
        "prepare the quarterly report",
        "I usually work from the Berlin office on Mondays",
        "prepare the quarterly report for finance",
    ):
        conversation.append({"role": "user", "content": text})
        _turn(conversation)
    review = conversation + [{"role": "user", "content": MEMORY_REVIEW_PROMPT + "\n\n" + SKILL_REVIEW_PROMPT}]
    answer, calls = _turn(review)
    made = [m for m in review[len(conversation) :] for c in m.get("tool_calls") or []]
    args = [json.loads(c["function"]["arguments"]) for m in made for c in m["tool_calls"]]
    assert args[0] == {
        "action": "add",
        "target": "user",
        "content": "User usually works from the Berlin office on Mondays.",
    }
    assert args[-1]["action"] == "create" and args[-1]["name"] == "prepare-quarterly-report"
    assert "Learned from 2 repeated requests" in args[-1]["content"]
    assert answer.startswith("Why: a habit the user described") and "2-step tool sequence" in answer


def test_summaries_are_extractive():
    messages = [
        {"role": "user", "content": "plan the migration"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "1", "type": "function", "function": {"name": "session_search", "arguments": '{"query": "x"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "1", "content": "{}"},
        {"role": "assistant", "content": "Do it in batches."},
        {"role": "user", "content": "and the rollback?"},
    ]
    summary = OfflineModel().summarise(messages)
    assert summary.startswith("## Goal\nand the rollback?")
    assert "- plan the migration" in summary and "1. session_search" in summary and "- Do it in batches." in summary


def test_phrasing_helpers():
    assert declarative("I usually deploy on Tuesdays") == ("user", "User usually deploys on Tuesdays.")
    assert declarative("our CI is GitHub Actions") == ("memory", "The team's CI is GitHub Actions.")
    assert slug("Triage the invoice export errors!") == "triage-invoice-export-errors"
    assert frozen_entries(SYSTEM) == [
        ("memory", "The API runs on port 8080."),
        ("memory", "Deploys happen on Fridays."),
        ("user", "User prefers tabs."),
    ]


def test_scripted_model_plays_then_falls_back():
    model = ScriptedModel()
    model.play(
        [
            {"tool_calls": [{"name": "memory", "args": {"action": "add", "target": "memory", "content": "X."}}]},
            {"answer": "Done."},
        ],
        label="t1_",
    )
    messages = [{"role": "user", "content": "go"}]
    first = model.complete(messages, [])
    assert first.tool_calls[0].id == "t1_call_1_1" and first.tool_calls[0].arguments["content"] == "X."
    messages += [first.to_message(), {"role": "tool", "tool_call_id": "t1_call_1_1", "content": "{}"}]
    assert model.complete(messages, []).content == "Done."
    messages += [{"role": "assistant", "content": "Done."}, {"role": "user", "content": "hello"}]
    model.play(None)
    assert model.complete(messages, []).content.startswith("Hello!")  # unscripted: the offline model answers


@pytest.mark.parametrize(
    "text", ["I'm a bit confused about the rollout", "I like that idea", "check what I prefer", "forget it"]
)
def test_vague_statements_write_nothing(text):
    assert isinstance(first_call(text), str)


def test_recap_lists_what_the_model_knows():
    assert first_call("what do you know about me?") == "Here is what I have:\n- User prefers tabs."
    assert first_call("What's in your memory?").count("\n- ") == 3


def test_recap_lists_an_entry_the_history_adds_again_once():
    """A resumed Hermes session: its frozen prompt held an entry whose add call is in the history too,
    and the recap listed it twice (user trial)."""
    call = {
        "id": "c1",
        "type": "function",
        "function": {
            "name": "memory",
            "arguments": json.dumps({"action": "add", "target": "memory", "content": FACTS[0]}),
        },
    }
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "please add that"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "tool_name": "memory", "content": json.dumps({"success": True})},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "what do you remember about the project?"},
    ]
    assert OfflineModel().complete(messages, []).content == f"Here is what I have:\n- {FACTS[0]}\n- {FACTS[1]}"


def test_the_scripted_model_never_plays_its_script_to_a_flush():
    from engine.models.base import FLUSH_PROMPT

    model = ScriptedModel()
    model.play([{"tool_calls": [{"name": "skill_manage", "args": {"action": "delete", "name": "x"}}]}], label="t1_")
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "we use Renovate for updates"},
        {"role": "user", "content": FLUSH_PROMPT},
    ]
    reply = model.complete(messages, [])
    assert [c.arguments for c in reply.tool_calls] == [
        {"action": "add", "target": "memory", "content": "The team uses Renovate for updates."}
    ]


def test_a_new_name_takes_the_old_ones_place():
    """A new name ("my name is Sam") was added beside "Name: Alexandra Chen": the profile held two."""
    user_block = render_block("user", ["User prefers tabs."], 1375)
    named = SYSTEM.replace(user_block, render_block("user", ["Name: Alexandra Chen", "User prefers tabs."], 1375))
    call = first_call("my name is Sam", named)
    assert (call.name, call.arguments) == (
        "memory",
        {"action": "replace", "target": "user", "old_text": "Name: Alexandra Chen", "content": "User's name is Sam."},
    )
    assert first_call("my name is Sam").arguments["action"] == "add"  # no name yet: added
    same = SYSTEM.replace(user_block, render_block("user", ["User's name is Sam."], 1375))
    assert (
        first_call("my name is Sam", same)
        == "I know that already; your user profile says: \u201cUser's name is Sam.\u201d"
    )


def test_another_team_takes_the_old_ones_place_as_a_name_does():
    """ "I work on the search team" was added beside "User works on the payments team (backend).": the
    profile held two teams. The review's rule (``learning.changed``) is the one said here too."""
    user_block = render_block("user", ["User prefers tabs."], 1375)
    old = "User works on the payments team (backend)."
    teamed = SYSTEM.replace(user_block, render_block("user", [old, "User prefers tabs."], 1375))
    call = first_call("I work on the search team", teamed)
    assert call.arguments == {
        "action": "replace",
        "target": "user",
        "old_text": old,
        "content": "User works on the search team.",
    }
    assert first_call("I work on the billing service", teamed).arguments["action"] == "add"  # another subject


@pytest.mark.parametrize(
    ("memory", "said", "replaced"),
    [
        ("User's editor is vim.", "my editor is emacs", "User's editor is emacs."),
        ("User's editor is vim.", "I use emacs now", "User uses emacs now."),
        ("User uses vim.", "I use emacs now", "User uses emacs now."),
        ("User's shell is zsh.", "my shell is fish", "User's shell is fish."),
        ("User's OS is macOS.", "my operating system is Linux", "User's operating system is Linux."),
        ("User's timezone is CET.", "my time zone is PST", "User's time zone is PST."),
        ("User's preferred language is German.", "my language is French", "User's language is French."),
        ("User's role is backend engineer.", "my role is tech lead", "User's role is tech lead."),
        ("User's location is Berlin.", "my city is Lisbon", "User's city is Lisbon."),
        ("User's pronouns are she/her.", "my pronouns are they/them", "User's pronouns are they/them."),
    ],
)
def test_another_value_of_a_one_value_fact_replaces_it(memory, said, replaced):
    """ "User's editor is vim." in memory, then "I use emacs now" or "my editor is emacs", became an add
    beside the old fact: the changed-fact rule knew only name, team and employer."""
    user_block = render_block("user", ["User prefers tabs."], 1375)
    known = SYSTEM.replace(user_block, render_block("user", [memory, "User prefers tabs."], 1375))
    call = first_call(said, known)
    assert call.arguments == {"action": "replace", "target": "user", "old_text": memory, "content": replaced}


@pytest.mark.parametrize(
    ("memory", "said"),
    [
        ("User's editor is vim.", "my shell is fish"),  # another kind
        ("User uses vim.", "I use Postgres for the ledger"),  # not a tool of one kind
        ("User uses Postgres.", "I use Redis"),  # two things used, both kept
        ("User likes vim.", "my editor is emacs"),  # a liking is not which editor
        ("User uses emacs.", "I use vim for quick edits"),  # a second editor for something: not the editor
        ("User uses vim for quick edits.", "I use emacs now"),
    ],
)
def test_other_facts_beside_a_one_value_fact_stay_adds(memory, said):
    user_block = render_block("user", ["User prefers tabs."], 1375)
    known = SYSTEM.replace(user_block, render_block("user", [memory, "User prefers tabs."], 1375))
    assert first_call(said, known).arguments["action"] == "add"


@pytest.mark.parametrize(
    ("memory", "said"),
    [
        ("User's editor is vim.", "I use vim"),  # the same value in other words
        ("User's editor is vim.", "my editor is vim"),  # the entry itself
        ("User prefers tabs over spaces.", "I prefer tabs over spaces"),
    ],
)
def test_a_turn_finds_known_what_the_review_finds_known(home, memory, said):
    """With "User's editor is vim." in memory, "I use vim" made the turn add "User uses vim." beside it,
    while the review skipped it as known: both now ask one rule (``learning.already_known``)."""
    from engine.models.learning import findings

    home.memory.add("user", memory)
    home.close()
    code, out, err = ran("--home", str(home.root), "run", "--message", said, "--json")
    assert code == 0, err
    (turn,) = json.loads(out)["turns"]
    assert turn["tool_calls"] == [] and turn["assistant"] == (
        f"I know that already; your user profile says: \u201c{memory}\u201d"
    )
    assert open_home(home.root).memory.entries("user") == [memory]
    assert findings([{"role": "user", "content": said}], [memory]) == []  # the review's answer, the same


def test_a_recalled_session_is_quoted_without_the_snippets_match_marks(home):
    """The answer to "what did we discuss about X" quoted the search's snippet with its « » round the match:
    the marks show the model where the hit is (Hermes's own are >>> <<<), and a model's answer leaves them out."""
    home.archive.create_session("s-db", source="cli", title="Database move")
    home.archive.append_message("s-db", "user", "the nightly database backup runs at three")
    home.close()
    code, out, err = ran(
        "--home", str(home.root), "run", "--message", "what did we discuss about the database backup?", "--json"
    )
    assert code == 0, err
    (turn,) = json.loads(out)["turns"]
    assert turn["tool_calls"][0]["name"] == "session_search"
    assert "Database move" in turn["assistant"] and "nightly database backup runs at three" in turn["assistant"]
    assert "«" not in turn["assistant"] and "»" not in turn["assistant"]


def test_a_review_tells_a_new_preference_from_one_memory_holds():
    """ "User prefers tabs." was skipped as known next to "User prefers dark mode.": "User prefers", the
    words every preference begins with, were two of its three keywords."""
    from engine.models.learning import findings

    def kept(text: str, known: str) -> list[str]:
        return [f.entry for f in findings([{"role": "user", "content": text}], [known])]

    assert kept("Hi, I prefer tabs", "User prefers dark mode.") == ["User prefers tabs."]
    assert kept("Hi, we use pnpm", "The team uses Renovate for updates.") == ["The team uses pnpm."]
    assert kept("Hi, I prefer dark mode", "User prefers dark mode.") == []  # known: skipped
    assert kept("Hi, we use pnpm", "The team uses pnpm for packages.") == []
