"""Built-in scenarios and demo seeding leave exactly the expected memory, messages and lineage."""

from __future__ import annotations

import threading
import time

import pytest

from engine import open_home
from engine.demo import seed_demo_home
from engine.errors import WorkbenchError
from engine.scenarios import consent_needed, list_scenarios, load_scenario, parse_scenario, run_scenario


def test_builtin_scenarios_load():
    names = {s.name: s for s in list_scenarios()}
    assert {"demo", "smoke"} <= set(names)
    assert names["demo"].summary()["sessions"] == 4


def test_smoke_leaves_exactly_the_expected_state(home):
    kinds = []
    result = run_scenario(home, "smoke", speed=0, on_event=lambda e: kinds.append(e.kind))
    assert [t.status for t in result.turns] == ["done"] * 4
    assert home.memory.entries("memory") == ["The workbench runs headless in CI (smoke scenario)."]
    assert home.memory.entries("user") == ["User's name is Sam."]
    assert result.turns[2].assistant == "From what I remember: User's name is Sam."
    (session_id,) = result.session_ids
    stored = home.archive.messages(session_id)
    assert [m.role for m in stored] == (
        ["user", "assistant", "tool", "assistant"] * 2
        + ["user", "assistant"]
        + ["user", "assistant", "tool", "assistant"]
    )
    assert stored[1].tool_calls[0]["id"] == "s1t1_call_1_1"  # the scripted call, exactly as written
    row = home.archive.get_session(session_id)
    assert (row.title, row.end_reason, row.parent_session_id) == ("Smoke test", "user_exit", None)
    assert home.archive.lineage(session_id).chain == [session_id]
    assert kinds.count("turn_finished") == 4 and home.approvals.count() == 0


def test_demo_seed_is_idempotent(home, tmp_path):
    first = seed_demo_home(home)
    assert first == {"memory": 11, "sessions": 3, "skills": 2, "consolidation": 1}
    assert seed_demo_home(home) == {"memory": 0, "sessions": 0, "skills": 0, "consolidation": 0}
    sessions = home.archive.list_sessions()
    assert any(s.title == "发票导出金额问题" for s in sessions)
    assert all(s.started_at < home.clock.now() - 86400 for s in sessions)  # dated in the past
    assert [h.title for h in home.archive.search("四舍五入")] == ["发票导出金额问题"]
    home.clock.advance(10 * 86400 + 3600)  # seeded another day: each id spells its start, as Hermes's do
    other = open_home(tmp_path / "later", clock=home.clock)
    seed_demo_home(other)
    assert seed_demo_home(other)["sessions"] == 0  # (its ids differ from the first home's: still found)
    for session in other.archive.list_sessions():
        assert session.id[:15] == time.strftime("%Y%m%d_%H%M%S", time.gmtime(session.started_at))
    other.close()


def test_demo_scenario_shows_every_feature(home):
    home.config_path.write_text("memory:\n  nudge_interval: 7\n", encoding="utf-8")
    home.reload_config()
    seen = []
    result = run_scenario(home, "demo", speed=0, on_event=seen.append, background_review=True)
    assert all(t.status == "done" for t in result.turns) and len(result.turns) == 28
    # sessions and lineage: one compression child, parents ended with "compression"
    rows = [home.archive.get_session(i) for i in result.session_ids]
    assert [r.title for r in rows] == [
        "Ledger hotfix",
        "Currency backfill migration",
        "Currency backfill migration #2",
        "Weekly check-in",
        "Approval mode",
    ]
    assert [r.end_reason for r in rows] == ["user_exit", "compression", "user_exit", "user_exit", "user_exit"]
    assert rows[2].parent_session_id == rows[1].id
    assert [r.message_count for r in rows] == [28, 18, 17, 46, 14]
    # a background review learned the user's name; a flush saved a preference just before the compression
    assert "User's name is Maya." in home.memory.entries("user")
    named = next(e for e in home.journal.query(subsystem="memory", actor="review") if e.after == "User's name is Maya.")
    assert named.session_id == rows[0].id
    kinds = [e.kind for e in seen if e.session_id in (rows[1].id, rows[2].id)]
    assert kinds.index("flush_finished") < kinds.index("session_rotated")
    [flushed] = [
        e for e in home.journal.query(subsystem="memory", limit=500) if (e.detail or {}).get("origin") == "flush"
    ]
    assert (flushed.actor, flushed.session_id) == ("agent", rows[1].id)
    assert flushed.after == "User prefers small batches with pauses over one big run for backfills."
    assert flushed.after in rows[2].system_prompt and flushed.after not in rows[1].system_prompt
    # memory: past 80 % and different from what the first session froze
    usage = home.memory.usage("memory")
    assert usage.chars / usage.limit > 0.8
    assert "Hotfix branches are cut from the latest release tag" not in rows[0].system_prompt
    assert "Hotfix branches are cut from the latest release tag" in rows[2].system_prompt  # rebuilt on compression
    assert not any("docker compose up db redis" in e for e in home.memory.entries("memory"))
    assert "User usually checks the Sentry dashboard before standup at 9:30 CET." in home.memory.entries("user")
    assert home.journal.query(subsystem="memory", actor="review")  # written by the background review
    # provenance: every memory write the runner made (agent or review, committed or staged) names a stored
    # message of the session that made it
    writes = [
        e for actor in ("agent", "review") for e in home.journal.query(subsystem="memory", actor=actor, limit=500)
    ]
    origins = writes + [p for p in home.approvals.list() if p.subsystem == "memory"]
    assert len(writes) >= 10 and {e.actor for e in writes} == {"agent", "review"}
    for origin in origins:
        message = home.archive.message(origin.message_id) if origin.message_id else None
        assert message is not None and message.session_id == origin.session_id, origin
    for target in ("memory", "user"):
        for entry in home.memory.entries(target):
            [newest, *_] = home.memory.provenance(target, entry)
            assert newest.actor == "user" or home.archive.message(newest.message_id).session_id == newest.session_id
    # search of an earlier session
    search = next(t for t in result.turns if t.user.startswith("what did we discuss about the Postgres"))
    assert "Postgres 16 upgrade plan" in search.assistant
    cjk = next(t for t in result.turns if "发票导出" in t.user)
    assert "发票导出金额问题" in cjk.assistant  # the Chinese session, found through the CJK index
    # a skill created by review from a repeated request, then patched
    skill = home.skills.view("triage-invoice-export", record=False)
    assert "Compare the Sentry release tag with the deployed version first." in skill["content"]
    # approval mode: the writes wait in the queue
    assert sorted((p.subsystem, p.action) for p in home.approvals.list()) == [
        ("memory", "add"),
        ("skills", "consolidate"),
        ("skills", "create"),
        ("skills", "patch"),
    ]
    [plan] = [p for p in home.approvals.list() if p.action == "consolidate"]  # seeded; still verifies
    assert home.approvals.preview(plan.id)["error"] is None
    assert "announce the deploy" not in home.skills.view("deploy-staging", record=False)["content"]
    # the scenario's config was an in-memory overlay, now gone
    assert home.config.int("memory.nudge_interval") == 7 and home.config.bool("skills.write_approval") is False
    assert home.config_path.read_text(encoding="utf-8") == "memory:\n  nudge_interval: 7\n"


class RecordingEvent(threading.Event):
    """A cancel event that records each pacing wait instead of sleeping."""

    def __init__(self):
        super().__init__()
        self.waits = []

    def wait(self, timeout=None):
        self.waits.append(timeout)
        return self.is_set()


def test_speed_scales_every_delay(home):
    cancel = RecordingEvent()
    run_scenario(home, "smoke", speed=2, cancel=cancel)  # smoke: turn_delay 0.5, step_delay 0.2
    turn_waits = [w for w in cancel.waits if w == 0.25]
    step_waits = [w for w in cancel.waits if w == 0.1]
    assert len(turn_waits) == 4 and len(step_waits) >= 8 and set(cancel.waits) == {0.25, 0.1}
    quiet = RecordingEvent()
    run_scenario(home, "smoke", speed=0, cancel=quiet, consent=True)  # (the first run made it not new)
    assert quiet.waits == []  # speed 0: no delays at all


def test_cancel_stops_the_run_after_the_current_turn(home):
    cancel = threading.Event()
    stop_after_first = lambda event: event.kind == "turn_finished" and cancel.set()  # noqa: E731
    result = run_scenario(home, "smoke", speed=0, on_event=stop_after_first, cancel=cancel)
    assert result.cancelled and len(result.turns) == 1 and len(result.session_ids) == 1
    assert home.archive.get_session(result.session_ids[0]).end_reason == "user_exit"
    early = threading.Event()
    early.set()
    assert run_scenario(home, "smoke", speed=0, cancel=early, consent=True).session_ids == []  # nothing stored


@pytest.mark.parametrize(
    "data, problem",
    [
        ({"sessions": []}, "'sessions' must be a non-empty list"),
        ({"sessions": [{"turns": [{"user": ""}]}]}, "sessions[0].turns[0]: needs a non-empty 'user'"),
        ({"sessions": [{"turns": [{"user": "x", "script": [{"oops": 1}]}]}]}, "script[0]: each step needs"),
        ({"sessions": [{"turns": [{"user": "x"}]}], "pacing": {"turn_delay": -1}}, "'pacing' takes non-negative"),
        ({"sessions": [{"turns": [{"user": "x"}]}], "seed": "prod"}, "unknown seed 'prod'"),
    ],
)
def test_bad_scenarios_are_refused_with_where_and_why(data, problem):
    with pytest.raises(WorkbenchError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        parse_scenario(data, "bad.yaml")


def test_unknown_scenario_lists_the_builtin_ones():
    with pytest.raises(WorkbenchError, match="Built-in scenarios: demo, smoke"):
        load_scenario("nope")


def test_a_scenario_file_can_be_played_by_path(home, tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text(
        "name: mine\nsessions:\n  - title: Mine\n    turns:\n      - user: we use ruff for linting\n", encoding="utf-8"
    )
    result = run_scenario(home, str(path), speed=0)
    assert result.name == "mine" and home.memory.entries("memory") == ["The team uses ruff for linting."]


def test_the_demo_scenario_never_seeds_a_home_that_holds_other_data(home, capsys):
    """'run --scenario demo' on a real home added the demo's eleven entries, sessions and skills,
    journaled as the user's own; 'workbench demo' already refused such a home."""
    from tests.test_curator_cli import wb

    home.memory.add("memory", "Real fact: the NAS is at 10.0.0.5")
    skills_before = {s.name for s in home.skills.list(include_archived=True)}
    with pytest.raises(WorkbenchError, match="not the demo's; nothing was changed"):
        run_scenario(home, "demo", speed=0)
    assert home.memory.entries("memory") == ["Real fact: the NAS is at 10.0.0.5"] and home.memory.entries("user") == []
    assert home.archive.session_count() == 0
    assert {s.name for s in home.skills.list(include_archived=True)} == skills_before
    code, out = wb(home.root, "run", "--scenario", "demo")
    assert code == 1 and home.archive.session_count() == 0
    assert "another scenario" not in out["error"] and "--yes" not in out["error"]  # no way to play it here
    code, out = wb(home.root, "run", "--scenario", "demo", "--yes")  # nor with consent: its seed is the demo's
    assert code == 1 and home.archive.session_count() == 0
    run_scenario(home, "smoke", speed=0, consent=True)  # a scenario without the demo's seed plays here, if agreed


def test_a_scenario_changes_a_real_home_only_with_consent(home, capsys):
    """Playing `smoke` on a real home replaced "User's name is Kenji" with "User's name is Sam." and added a
    CI note without a word (`run --scenario smoke`, and the TUI's ctrl+g). Now the engine refuses it there
    unless the user agreed (the CLI's --yes), and says what it would change."""
    from engine.scenarios import ConsentNeeded, consent_needed
    from tests.test_curator_cli import wb

    home.memory.add("user", "User's name is Kenji")
    smoke = load_scenario("smoke")
    assert smoke.writes == ("memory", "skills")
    changes = consent_needed(home, smoke)
    assert changes is not None and "not a demo home" in changes
    assert "MEMORY.md gets 'The workbench runs headless in CI (smoke scenario).'" in changes  # named
    # what its turns lead the offline model to write is named too (it named only the scripted note)
    assert "USER.md has 'User's name is Kenji' replaced by 'User's name is Sam.'" in changes
    with pytest.raises(ConsentNeeded, match="nothing was changed"):
        run_scenario(home, "smoke", speed=0)
    code, out = wb(home.root, "run", "--scenario", "smoke")
    assert code == 1 and "Add --yes to play it here anyway" in out["error"]
    assert home.memory.entries("user") == ["User's name is Kenji"] and home.memory.entries("memory") == []
    assert home.archive.session_count() == 0
    code, out = wb(home.root, "run", "--scenario", "smoke", "--yes")
    assert code == 0 and home.memory.entries("user") == ["User's name is Sam."]
    (session,) = home.archive.list_sessions()
    assert session.source == "cli"


def test_a_scenario_asks_nothing_of_a_demo_or_new_home(home, tmp_path):
    assert consent_needed_of(home) is None  # a new home: nothing of the user's to change
    demo = open_home(tmp_path / "demo")
    seed_demo_home(demo)
    assert consent_needed_of(demo) is None
    result = run_scenario(demo, "smoke", speed=0, source="tui")
    assert {demo.archive.get_session(sid).source for sid in result.session_ids} == {"tui"}


def test_the_consent_question_names_the_offline_models_writes_found_by_a_dry_run(home):
    """The smoke scenario's question named only its scripted note; its "my name is Sam" turn makes the
    offline model add "User's name is Sam." to USER.md too. The dry run finds it, and writes nothing."""
    home.memory.add("memory", "The NAS is at 10.0.0.5")
    changes = consent_needed_of(home)
    assert "USER.md gets 'User's name is Sam.'" in changes
    assert home.memory.entries("user") == [] and home.memory.entries("memory") == ["The NAS is at 10.0.0.5"]
    assert home.archive.session_count() == 0
    result = run_scenario(home, "smoke", speed=0, consent=True)  # what it foresaw is what it does
    assert [t.status for t in result.turns] == ["done"] * 4
    assert home.memory.entries("user") == ["User's name is Sam."]


def test_the_consent_question_says_which_write_the_stores_limit_would_refuse(home):
    """On a MEMORY.md 20 chars short of its limit the question still promised "MEMORY.md gets 'The
    workbench runs headless in CI…'", an add the store then refused. It now says the add would be
    refused and why, in the engine's words the CLI and the TUI both show; the writes that fit are named
    as before, and what it says is what playing it does."""
    from tests.test_curator_cli import wb

    limit = home.memory.limit("memory")
    home.memory.add("memory", "n" * (limit - 20))
    home.memory.add("user", "User's name is Kenji")
    said = (
        "adding 'The workbench runs headless in CI (smoke scenario).' to MEMORY.md would be refused: "
        f"MEMORY.md is {limit - 20:,}/{limit:,} chars"
    )
    changes = consent_needed_of(home)
    assert said in changes and "MEMORY.md gets" not in changes
    assert "USER.md has 'User's name is Kenji' replaced by 'User's name is Sam.'" in changes  # it fits
    code, out = wb(home.root, "run", "--scenario", "smoke")
    assert code == 1 and said in " ".join(out["error"].split())
    assert home.memory.entries("memory") == ["n" * (limit - 20)] and home.archive.session_count() == 0
    result = run_scenario(home, "smoke", speed=0, consent=True)
    calls = [c for t in result.turns for c in t.tool_calls if c["arguments"].get("target") == "memory"]
    assert calls and calls[0]["result"]["success"] is False  # refused, as foreseen
    assert home.memory.entries("memory") == ["n" * (limit - 20)]
    assert home.memory.entries("user") == ["User's name is Sam."]


def test_the_consent_question_uses_the_scenarios_limits_and_says_a_replace_would_match_nothing(home, tmp_path):
    """A scenario whose config gives MEMORY.md a 60-char limit was foreseen against the home's 2,200 (its
    add promised, then refused as it played), and a replace whose text no entry holds was named as if it
    would happen. The question now plays each session's writes under its own settings and says why a
    write would be refused; what it says is what playing it does."""
    home.memory.add("memory", "The NAS is at 10.0.0.5")
    home.memory.add("user", "User's name is Kenji")
    path = tmp_path / "tight.yaml"
    path.write_text(
        "name: tight\n"
        "sessions:\n"
        "  - title: Tight\n"
        "    config: {memory.memory_char_limit: 60}\n"
        "    turns:\n"
        "      - user: note the CI runner\n"
        "        script:\n"
        "          - tool_calls:\n"
        "              - {name: memory, args: {action: add, target: memory, content: The CI runner is a 2-core VM "
        "on the shared rack kept by ops}}\n"
        "              - {name: memory, args: {action: replace, target: user, old_text: Hiro, content: Hiro is the "
        "user's manager}}\n"
        "          - answer: Noted.\n",
        encoding="utf-8",
    )
    changes = consent_needed(home, load_scenario(str(path)))
    assert (
        "adding 'The CI runner is a 2-core VM on the shared rack kept by ops' to MEMORY.md would be refused: "
        "MEMORY.md is 22/60 chars (the limit the scenario sets)"
    ) in changes
    assert (
        "replacing 'Hiro' by 'Hiro is the user's manager' in USER.md would be refused: no entry of USER.md holds 'Hiro'"
    ) in changes
    assert "has 'Hiro' replaced" not in changes and "MEMORY.md gets" not in changes
    result = run_scenario(home, str(path), speed=0, consent=True)
    results = [c["result"] for t in result.turns for c in t.tool_calls]
    assert [r["success"] for r in results] == [False, False]  # refused, as foreseen
    assert home.memory.entries("memory") == ["The NAS is at 10.0.0.5"]
    assert home.memory.entries("user") == ["User's name is Kenji"]


def test_the_consent_question_says_an_add_of_an_entry_the_store_holds_changes_nothing(home):
    """Played a second time on a trial home, `smoke` was asked about as "MEMORY.md gets 'The workbench runs
    headless in CI (smoke scenario).'", an entry MEMORY.md held already: the add then saved nothing. It says
    the store holds it already; what it says is what playing it does."""
    note = "The workbench runs headless in CI (smoke scenario)."
    home.memory.add("memory", note)
    home.memory.add("user", "User's name is Kenji")
    changes = consent_needed_of(home)
    assert f"MEMORY.md holds '{note}' already, so it stays as it is" in changes and "MEMORY.md gets" not in changes
    run_scenario(home, "smoke", speed=0, consent=True)
    assert home.memory.entries("memory") == [note]


def test_a_store_over_a_scenarios_limit_is_warned_of_in_the_figures_the_question_uses(home, tmp_path, caplog):
    """With `config: {memory.memory_char_limit: 300}` on a MEMORY.md of 1,050 chars, `run --scenario` warned
    "exceeds its char limit on load: 1050/300 chars" above a question that said "MEMORY.md is 1,050/300
    chars": one figure written two ways in one answer."""
    home.memory.add("memory", "n" * 1050)
    path = tmp_path / "tight.yaml"
    path.write_text(
        "name: tight\nconfig: {memory.memory_char_limit: 300}\nsessions:\n  - title: T\n    turns:\n"
        "      - user: note the CI runner\n        script:\n          - tool_calls:\n"
        "              - {name: memory, args: {action: add, target: memory, content: The CI runner is a VM}}\n"
        "          - answer: Noted.\n",
        encoding="utf-8",
    )
    with caplog.at_level("WARNING"):
        changes = consent_needed(home, load_scenario(str(path)))
    assert "MEMORY.md is 1,050/300 chars (the limit the scenario sets)" in changes
    assert "MEMORY.md exceeds its char limit on load: 1,050/300 chars." in caplog.text, caplog.text


def test_a_bad_value_in_a_scenarios_config_is_said_to_be_the_scenarios(home, tmp_path):
    """`config: {memory.memory_char_limit: abc}` in a scenario was refused as
    "HOME/config.yaml: memory.memory_char_limit must be a whole number", on a home with no config.yaml:
    the user was sent to a file that does not hold it. The refusal names the scenario; nothing changes."""
    from tests.test_curator_cli import wb

    home.memory.add("memory", "The NAS is at 10.0.0.5")
    path = tmp_path / "typo.yaml"
    path.write_text(
        "name: typo\nconfig: {memory.memory_char_limit: abc}\nsessions:\n  - title: T\n    turns:\n"
        "      - user: we use ruff for linting\n",
        encoding="utf-8",
    )
    said = "the 'typo' scenario's config: memory.memory_char_limit must be a whole number, got 'abc'."
    for consent in ((), ("--yes",)):  # (foreseeing its writes for the question, and playing it)
        code, out = wb(home.root, "run", "--scenario", str(path), *consent)
        assert code == 1 and " ".join(out["error"].split()) == said, out
    assert home.memory.entries("memory") == ["The NAS is at 10.0.0.5"] and home.archive.session_count() == 0
    assert not home.config_path.exists()


def consent_needed_of(home):
    from engine.scenarios import consent_needed

    return consent_needed(home, load_scenario("smoke"))


def test_a_home_that_holds_only_skills_of_its_own_is_not_the_demos(tmp_path):
    """A new Hermes install holds skills before any memory or session."""
    from engine import open_home
    from engine.demo import holds_other_data

    home = open_home(tmp_path / "h")
    assert not holds_other_data(home)
    assert home.skills.manage(
        {
            "action": "create",
            "name": "brew",
            "content": "---\nname: brew\ndescription: Brew coffee\n---\nGrind 3 scoops.\n",
        }
    )["success"]
    assert holds_other_data(home)
    with pytest.raises(WorkbenchError, match="not the demo's"):
        run_scenario(home, "demo", speed=0)
    home.close()
