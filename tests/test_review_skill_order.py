"""The offline review's skill changes, in Hermes's order of preference, from fixed transcripts.

Each transcript asks "prepare the billing release" twice, answered both times by the same
three-step tool sequence (skills_list, session_search, terminal); what differs is which
skills exist and whether one was viewed while answering. The review runs for real (the
offline model, the restricted tools, the skill library and its guards).
"""

from __future__ import annotations

import itertools
import json
import threading

from engine.models import OfflineModel
from engine.models.skill_changes import UMBRELLA_MAX_LINES
from engine.runner import AgentSession
from engine.runner.review import run_review
from engine.tools import BACKGROUND_REVIEW, ToolContext

REVIEW = ToolContext(actor="review", origin=BACKGROUND_REVIEW)  # what makes a skill curator-managed
UMBRELLA = (
    "---\nname: release-process\ndescription: Cut, tag and announce releases of our services\n---\n"
    "# Release process\n\n## Steps\n1. Tag the release.\n2. Announce it in the team channel.\n"
)
VIEWED = (
    "---\nname: billing-release-checklist\ndescription: Checklist for billing releases\n---\n"
    "# Billing release checklist\n\n1. Freeze the ledger migrations.\n2. Tag the release.\n"
)


def _long_umbrella() -> str:
    steps = "".join(f"{n}. Check release gate {n}.\n" for n in range(1, UMBRELLA_MAX_LINES))
    return UMBRELLA.replace("1. Tag the release.\n2. Announce it in the team channel.\n", steps)


def _transcript(home, *, view: str | None = None) -> list[dict]:
    """Two requests for the same routine, each answered by skills_list, [skill_view,] session_search, terminal."""
    ids = (f"call_{n:04d}" for n in itertools.count(1))
    messages: list[dict] = [{"role": "system", "content": "You are a helpful agent."}]
    for request in ("prepare the billing release", "prepare the billing release for the hotfix"):
        calls = [("skills_list", {}, home.skills.skills_list())]
        if view:
            calls.append(("skill_view", {"name": view}, home.skills.view(view, record=False)))
        calls += [
            ("session_search", {"query": "billing release"}, {"success": True, "results": []}),
            ("terminal", {"command": "git tag billing-v2"}, {"success": True, "output": "tagged billing-v2"}),
        ]
        messages.append({"role": "user", "content": request})
        for name, args, result in calls:
            call_id = next(ids)
            function = {"name": name, "arguments": json.dumps(args)}
            messages.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"id": call_id, "type": "function", "function": function}],
                }
            )
            messages.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(result, default=str)})
        messages.append({"role": "assistant", "content": "The billing release is prepared."})
    return messages


def _review(home, conversation: list[dict]):
    session = AgentSession(home, OfflineModel())
    try:
        return run_review(session, conversation, memory=False, skills=True, stop=threading.Event())
    finally:
        session.close()


def _skill_calls(result) -> list[tuple[str, str | None, str | None]]:
    return [
        (a["name"], a["arguments"].get("action"), a["arguments"].get("name"))
        for a in result.actions
        if a["name"].startswith("skill")
    ]


def test_a_skill_viewed_in_the_session_is_patched_before_any_umbrella(home):
    for content in (UMBRELLA, VIEWED):
        assert home.skills.manage({"action": "create", "name": content.split()[2], "content": content}, REVIEW)[
            "success"
        ]
    result = _review(home, _transcript(home, view="billing-release-checklist"))
    assert _skill_calls(result) == [
        ("skill_view", None, "billing-release-checklist"),
        ("skill_manage", "patch", "billing-release-checklist"),
    ]
    assert result.error is None and len(result.writes) == 1
    patched = home.skills.view("billing-release-checklist", record=False)["content"]
    assert patched.endswith(
        "2. Tag the release.\n3. Check earlier work with session_search before starting (it was needed each time).\n"
    )
    assert home.skills.view("release-process", record=False)["content"] == UMBRELLA
    assert result.summary == "Skill 'billing-release-checklist' patched"
    assert "left out a step it took (session_search)" in result.line


def test_an_unviewed_umbrella_skill_is_updated_instead_of_creating_one(home):
    assert home.skills.manage({"action": "create", "name": "release-process", "content": UMBRELLA}, REVIEW)["success"]
    result = _review(home, _transcript(home))
    assert _skill_calls(result) == [
        ("skills_list", None, None),
        ("skill_view", None, "release-process"),
        ("skill_manage", "patch", "release-process"),
    ]
    content = home.skills.view("release-process", record=False)["content"]
    assert content.startswith(UMBRELLA.rstrip())
    assert "\n\n## Prepare billing release\n\nLearned from 2 repeated requests" in content
    assert "skills_list -> session_search -> terminal" in content
    assert [s.name for s in home.skills.list()] == ["release-process"]
    assert result.summary == "Skill 'release-process' patched"
    assert "the release-process skill is the umbrella for billing release" in result.line


def test_a_long_umbrella_gets_a_support_file_and_a_pointer(home):
    long_umbrella = _long_umbrella()
    assert home.skills.manage({"action": "create", "name": "release-process", "content": long_umbrella}, REVIEW)[
        "success"
    ]
    result = _review(home, _transcript(home))
    assert _skill_calls(result) == [
        ("skills_list", None, None),
        ("skill_view", None, "release-process"),
        ("skill_manage", "write_file", "release-process"),
        ("skill_manage", "patch", "release-process"),
    ]
    reference = home.skills.view("release-process", "references/prepare-billing-release.md", record=False)
    assert reference["content"].startswith("# Prepare billing release\n\nLearned from 2 repeated requests")
    content = home.skills.view("release-process", record=False)["content"]
    assert content == long_umbrella + "- Prepare billing release: see references/prepare-billing-release.md\n"
    assert [s.name for s in home.skills.list()] == ["release-process"]
    assert result.summary == (
        "Skill 'release-process' + references/prepare-billing-release.md \u00b7 Skill 'release-process' patched"
    )
    assert (
        "already long, so the procedure for a request made 2 times went to references/prepare-billing-release.md"
        in result.line
    )


def test_with_no_skill_about_the_subject_a_three_step_workflow_becomes_a_new_skill(home):
    others = {
        "tomato-care": "Grow tomatoes",
        "billing-dashboards": "Charts of billing metrics",  # shares "billing", but is not about releases
    }
    for name, description in others.items():
        content = f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n\n1. Look first.\n"
        assert home.skills.manage({"action": "create", "name": name, "content": content}, REVIEW)["success"]
    result = _review(home, _transcript(home))
    assert _skill_calls(result) == [("skills_list", None, None), ("skill_manage", "create", "prepare-billing-release")]
    created = home.skills.view("prepare-billing-release", record=False)["content"]
    assert "tool sequence: skills_list -> session_search -> terminal" in created
    # the whole sentence: the index shortens descriptions when it lists them, the file keeps it
    assert home.skills.get("prepare-billing-release").description == (
        "How to prepare billing release, as done each time it was asked"
    )
    assert "the same 3-step tool sequence answered a request made 2 times" in result.line
    assert all(home.skills.view(name, record=False)["content"].endswith("1. Look first.\n") for name in others)


def test_with_write_approval_the_new_skill_is_a_proposal_in_the_queue(home):
    home.config_path.write_text("skills:\n  write_approval: true\n")
    home.reload_config()
    result = _review(home, _transcript(home))
    assert _skill_calls(result) == [("skills_list", None, None), ("skill_manage", "create", "prepare-billing-release")]
    assert result.writes == [] and len(result.staged) == 1
    record = home.approvals.get(result.staged[0])
    assert (record.subsystem, record.action, record.origin) == ("skills", "create", BACKGROUND_REVIEW)
    assert "skills_list -> session_search -> terminal" in record.payload["content"]
    assert home.skills.list() == [] and result.summary == "1 proposal waiting for approval"


def test_a_second_review_of_the_same_turns_proposes_the_skill_once(home):
    home.config_path.write_text("skills:\n  write_approval: true\n")
    home.reload_config()
    first = _review(home, _transcript(home))
    again = _review(home, _transcript(home))  # the next review reads the same requests: the create still waits
    assert again.staged == first.staged and len(home.approvals.list("skills")) == 1
    assert "already waits for approval" in again.actions[-1]["result"]["message"]


def test_an_umbrella_that_already_covers_the_routine_is_left_alone(home):
    covered = UMBRELLA + "\n## Prepare billing release\n1. Freeze the ledger first.\n"
    assert home.skills.manage({"action": "create", "name": "release-process", "content": covered}, REVIEW)["success"]
    result = _review(home, _transcript(home))
    assert _skill_calls(result) == [("skills_list", None, None), ("skill_view", None, "release-process")]
    assert result.writes == [] and result.summary == "Nothing to save."
    assert home.skills.view("release-process", record=False)["content"] == covered
