"""The lifecycle rule as a table with a fixed clock, and full runs over a real library."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from engine import ConfigError
from engine.curator.transitions import Policy, decide, reason
from engine.skills.usage import default_record, iso
from tests.conftest import FIXED_NOW
from tests.hermes_support import workbench_cmd
from tests.test_skills_support import tree_state, write_skill

DAY = 86400
POLICY = Policy(stale_after_days=30, archive_after_days=90)  # Hermes 0.19.0's defaults


def ago(days: float) -> str:
    return iso(FIXED_NOW - days * DAY)


def record(created=200, used=None, viewed=None, patched=None, uses=1, state="active", pinned=False, restored=None):
    r = default_record(ago(created))
    r.update(
        use_count=uses,
        state=state,
        pinned=pinned,
        last_used_at=ago(used) if used is not None else None,
        last_viewed_at=ago(viewed) if viewed is not None else None,
        last_patched_at=ago(patched) if patched is not None else None,
        restored_at=ago(restored) if restored is not None else None,
    )
    return r


@pytest.mark.parametrize(
    "rec, expected",
    [
        (None, "seed"),  # no record yet: seeded, left alone this pass
        (record(used=1), None),  # recently used
        (record(used=29.9), None),  # just inside the stale window
        (record(used=30), "stale"),  # exactly at the stale cutoff
        (record(used=45), "stale"),
        (record(used=45, state="stale"), None),  # already stale
        (record(used=90), "archive"),  # exactly at the archive cutoff
        (record(used=120, state="stale"), "archive"),
        (record(used=1, state="stale"), "reactivate"),  # activity reactivates
        (record(used=100, viewed=2, state="stale"), "reactivate"),  # a view is activity
        (record(used=100, patched=3), None),  # a patch is activity
        (record(used=120, pinned=True), None),  # pinned: never touched
        (record(used=120, pinned=True, state="stale"), None),
        (record(created=5, uses=0), None),  # never used, young: grace
        (record(created=5, uses=0, state="stale"), "reactivate"),  # grace also lifts a stale mark
        (record(created=45, uses=0), "stale"),  # never used, grace over
        (record(created=100, uses=0), "archive"),
        (record(used=100, restored=1), "archive"),  # a restore is no activity (Hermes 0.19.0)
        (record(used=45, restored=1), "stale"),
        (record(used=100, state="archived"), None),  # archived stays archived
    ],
)
def test_transition_table(rec, expected):
    assert decide(rec, FIXED_NOW, POLICY) == expected


@pytest.mark.parametrize(
    ("rec", "policy", "said"),
    [
        (record(used=45, viewed=50), POLICY, "last used 45 days ago; the stale limit is 30 days"),
        (record(used=120, patched=95), POLICY, "last patched 95 days ago; the archive limit is 90 days"),
        (record(created=31, uses=0), POLICY, "unused since it was made 31 days ago; the stale limit is 30 days"),
        (record(used=1, state="stale"), POLICY, "last used 1 day ago; within the stale limit of 30 days"),
        (record(viewed=20), Policy(14, 60), "last viewed 20 days ago; the stale limit is 14 days"),
        # (it said "last patched 0 days ago" of a skill Hermes patched an hour before)
        (
            record(used=45, patched=0.04, state="stale"),
            POLICY,
            "last patched under a day ago; within the stale limit of 30 days",
        ),
    ],
)
def test_each_decision_says_why_against_the_configured_limit(rec, policy, said):
    """A dry run listed `mark stale nginx-reload` without saying why; the rule now says it, from the same
    record and limits it decided by (the latest of use, view and patch, else the making)."""
    assert reason(decide(rec, FIXED_NOW, policy), rec, FIXED_NOW, policy) == said


def test_policy_comes_from_config_and_is_checked(home):
    assert Policy.from_config(home.config) == POLICY
    home.config_path.write_text("curator:\n  stale_after_days: 40\n  archive_after_days: 30\n")
    with pytest.raises(ConfigError, match="stale_after_days"):
        Policy.from_config(home.reload_config())


def _library(home):
    """Managed skills in each situation, plus a user-owned one that is never managed."""
    for name in ("fresh", "idle", "ancient", "pinned", "young-unused", "stale-again", "users-own"):
        write_skill(home, name, category="auto" if name != "users-own" else None)
    records = {
        "fresh": record(used=2),
        "idle": record(used=45),
        "ancient": record(used=100),
        "pinned": record(used=400, pinned=True),
        "young-unused": record(created=3, uses=0),
        "stale-again": record(used=1, state="stale"),
        "users-own": record(used=400),
    }
    for name, r in records.items():
        r["created_by"] = None if name == "users-own" else "agent"
    (home.skills_dir / ".usage.json").write_text(json.dumps(records))


def test_dry_run_reports_and_changes_nothing(home):
    _library(home)
    before = tree_state(home.root)
    report = home.curator.run(dry_run=True)
    assert (report.marked_stale, report.archived, report.reactivated) == (("idle",), ("ancient",), ("stale-again",))
    assert report.dry_run and report.report_path is None and report.checked == 6
    assert report.headline == (
        "Curator dry run: would mark 1 stale, archive 1, reactivate 1 (6 agent-made skills checked); "
        "nothing was changed."
    )
    assert tree_state(home.root) == before
    # each change says why (a user trial: `mark stale nginx-reload` left the reader to guess), here on the
    # test's clock; the CLI's process runs on the real one, some days later
    assert report.outcome()[1:4] == [
        "  would mark stale: idle (last used 45 days ago; the stale limit is 30 days)",
        "  would archive: ancient (last used 100 days ago; the archive limit is 90 days)",
        "  would reactivate: stale-again (last used 1 day ago; within the stale limit of 30 days)",
    ]
    shown = subprocess.run(
        workbench_cmd("curator", "run", "--dry-run", "--home", str(home.root)), capture_output=True, text=True
    )
    assert shown.returncode == 0, shown.stderr
    lines = [re.sub(r"\d+ days? ago", "N days ago", line) for line in shown.stdout.splitlines()[1:4]]
    assert lines == [
        "  would mark stale: idle (last used N days ago; the stale limit is 30 days)",
        "  would archive: ancient (last used N days ago; the archive limit is 90 days)",
        "  would reactivate: stale-again (last used N days ago; within the stale limit of 30 days)",
    ], shown.stdout  # never "archived: ancient", as if it had been
    assert tree_state(home.root) == before


def test_run_applies_transitions_and_writes_a_report(home):
    _library(home)
    report = home.curator.run()
    assert (report.marked_stale, report.archived, report.reactivated) == (("idle",), ("ancient",), ("stale-again",))
    states = {s.name: s.state for s in home.skills.list(include_archived=True)}
    assert states == {
        "fresh": "active",
        "idle": "stale",
        "ancient": "archived",
        "pinned": "active",
        "young-unused": "active",
        "stale-again": "active",
        "users-own": "active",
    }
    assert (home.skills_dir / ".archive" / "ancient" / "SKILL.md").exists()
    run = json.loads((home.root / "logs" / "curator" / "20261130-120000" / "run.json").read_text())
    assert run["auto_transitions"] == {"checked": 6, "marked_stale": 1, "archived": 1, "reactivated": 1, "seeded": 0}
    assert "ancient" in (home.root / "logs" / "curator" / "20261130-120000" / "REPORT.md").read_text()
    status = home.curator.status()
    assert status["run_count"] == 1 and status["last_run_summary"] == "auto: 1 marked stale, 1 archived, 1 reactivated"
    assert status["counts"] == {"active": 5, "stale": 1, "archived": 1} and status["pinned"] == ["pinned"]
    actions = {(r.action, r.target, r.actor) for r in home.journal.query(subsystem="skills")}
    assert actions == {
        ("archive", "ancient", "curator"),
        ("mark_stale", "idle", "curator"),
        ("reactivate", "stale-again", "curator"),
    }
    second = home.curator.run()
    assert (second.marked_stale, second.archived, second.reactivated) == ((), (), ())
    assert (home.root / "logs" / "curator" / "20261130-120000-2" / "run.json").exists()


def test_manage_all_brings_user_skills_in_and_seeds_missing_records(home, clock):
    write_skill(home, "no-record")
    _library(home)
    home.config_path.write_text("curator:\n  manage_all: true\n")
    home.reload_config()
    report = home.curator.run()
    assert "users-own" in report.archived and report.seeded == ("no-record",)
    clock.advance(31 * DAY)
    assert set(home.curator.run(dry_run=True).marked_stale) == {"fresh", "no-record", "stale-again", "young-unused"}


def test_a_pass_under_manage_all_counts_local_skills_not_agent_made_ones(home):
    """With `curator.manage_all` a dry run checked the user's own skills and called them agent-made,
    while the Skills table listed each as the user's (a trial's Curate said "5 agent-made skills")."""
    _library(home)
    assert "agent-made skills checked" in home.curator.run(dry_run=True).headline
    home.config_path.write_text("curator:\n  manage_all: true\n")
    home.reload_config()
    report = home.curator.run(dry_run=True)
    assert "agent-made" not in report.headline
    assert f"({report.checked} local skills checked)" in report.headline
    assert report.checked > sum(s.provenance == "agent" for s in home.skills.list())


def test_bundled_and_hub_skills_are_never_curated(home):
    _library(home)
    (home.skills_dir / ".bundled_manifest").write_text("ancient:0\n")
    home.config_path.write_text("curator:\n  manage_all: true\n")
    home.reload_config()
    assert "ancient" not in home.curator.run().archived


def test_a_skill_moved_back_by_hand_is_treated_as_active(home):
    _library(home)
    records = json.loads((home.skills_dir / ".usage.json").read_text())
    records["idle"]["state"] = "archived"
    (home.skills_dir / ".usage.json").write_text(json.dumps(records))
    assert home.curator.run().marked_stale == ("idle",)
    assert home.skills.get("idle").state == "stale"


def test_a_pass_reads_as_people_say_it_and_hermes_state_keeps_its_own_form(home):
    """The TUI's toast and `curator run` said `auto: no changes`, Hermes's state-file form."""
    report = home.curator.run(dry_run=True)
    assert report.summary == "dry-run auto: no changes"
    assert report.headline == "Curator dry run: nothing to change (0 agent-made skills checked)."
    home.curator.run(dry_run=False)
    from engine.timeline import Timeline

    [row] = Timeline(home).page(subsystem="curator", limit=1)
    assert row.summary == "Curator pass: no changes"  # the journal keeps Hermes's "auto: no changes"


def test_reverting_a_pass_says_why_its_stale_marks_stay(home):
    """`revert curator:…` left a stale mark with "a record of a decision, not a change", which reads as
    if the mark could not be undone by mistake; it is re-derived from inactivity on every pass."""
    from engine.timeline import Timeline

    _library(home)
    home.curator.run()
    timeline = Timeline(home)
    [stale] = [r for r in timeline.page(subsystem="skills") if r.action == "mark_stale"]
    [reactivated] = [r for r in timeline.page(subsystem="skills") if r.action == "reactivate"]
    for row in (stale, reactivated):
        [refused] = timeline.preview(str(row.id))["refused"]
        assert refused["error"].startswith("the Curator's reading of the skill's activity, taken afresh on every pass")
        assert "pin it" in refused["error"]
    assert home.skills.get("idle").state == "stale"


HERMES_TRANSITIONS = """
import json
from datetime import datetime, timezone
from agent.curator import apply_automatic_transitions
from tools.skill_usage import load_usage
counts = apply_automatic_transitions(now=datetime.fromtimestamp(%r, timezone.utc))
print(json.dumps([counts, {name: record["state"] for name, record in load_usage().items()}]))
"""


@pytest.mark.slow  # Hermes's own curator in its own process
def test_a_restore_ages_a_skill_as_hermess_curator_ages_it(home, hermes, tmp_path):
    """Ours counted ``restored_at`` as activity and kept a skill restored after long disuse, which
    Hermes's curator (it reads only use, view and patch) archived on the same home at its next pass."""
    records = {
        "long-idle": record(used=100, restored=1),
        "idle": record(used=45, restored=1),
        "never-used": record(created=200, uses=0, restored=1),
        "fresh": record(used=2, restored=1),
    }
    for name, r in records.items():
        write_skill(home, name, category="auto")
        r["created_by"] = "agent"
    (home.skills_dir / ".usage.json").write_text(json.dumps(records))
    twin = tmp_path / "twin"
    shutil.copytree(home.root, twin)  # the same home, for Hermes's pass to change
    ours = home.curator.run(dry_run=True)
    counts, states = hermes.json(twin, HERMES_TRANSITIONS % FIXED_NOW)
    assert counts == {"checked": 4, "marked_stale": 1, "archived": 2, "reactivated": 0, "seeded": 0}
    assert {name for name, state in states.items() if state == "archived"} == set(ours.archived)
    assert {name for name, state in states.items() if state == "stale"} == set(ours.marked_stale)
    assert (set(ours.archived), set(ours.marked_stale)) == ({"long-idle", "never-used"}, {"idle"})


def test_restoring_a_long_idle_skill_says_the_next_pass_archives_it_again(home):
    _library(home)
    assert home.curator.archive("ancient")["success"]
    message = home.curator.restore("ancient")["message"]
    assert "A restore is not activity" in message and "archives it again" in message
    assert home.curator.run(dry_run=True).archived == ("ancient",)
    assert home.curator.archive("fresh")["success"]
    assert "not activity" not in home.curator.restore("fresh")["message"]  # used two days ago: it stays


HERMES_CRON_JOBS = """
import json
from cron.jobs import create_job, pause_job
paused = create_job("Weekly digest", "0 9 * * 1", name="digest", skills=["ancient", "/idle"])
create_job("Check", "every 2h", name="check", skill="young-unused")
pause_job(paused["id"])
print(json.dumps(True))
"""


@pytest.mark.slow  # Hermes's own cron jobs and curator, each in its own process
def test_skills_a_cron_job_names_are_never_aged_as_hermess_curator_leaves_them(home, hermes, tmp_path):
    """A job fires rarely, or is paused, and only a firing counts as a use: our pass archived a skill a
    Hermes cron job names, which Hermes's own pass leaves alone, and the job then ran without it."""
    _library(home)
    assert hermes.json(home.root, HERMES_CRON_JOBS)  # jobs.json as Hermes writes it
    twin = tmp_path / "twin"
    shutil.copytree(home.root, twin)
    ours = home.curator.run(dry_run=True)
    counts, states = hermes.json(twin, HERMES_TRANSITIONS % FIXED_NOW)
    assert (ours.archived, ours.marked_stale, ours.reactivated) == ((), (), ("stale-again",))
    assert ours.kept_for_cron == ("ancient", "idle")  # what it would have aged, said (the young one: nothing)
    assert counts["archived"] == counts["marked_stale"] == 0 and counts["reactivated"] == 1
    assert states["ancient"] == states["idle"] == "active"
    report = home.curator.run()
    assert report.archived == () and home.skills.get("ancient").state == "active"


def test_a_malformed_cron_job_hides_no_other_jobs_skills(home):
    """A job whose skills are not a list of names names nothing, and the other jobs' skills stay kept
    (Hermes's own reading gives up on the whole file at such a job, and protects nothing)."""
    _library(home)
    (home.root / "cron").mkdir()
    jobs = [{"skills": 7}, {"skills": [{"x": 1}, None]}, "not a job", {"skill": " ancient "}, {"skills": "idle"}]
    (home.root / "cron" / "jobs.json").write_text(json.dumps({"jobs": jobs}))
    assert home.curator.run(dry_run=True).kept_for_cron == ("ancient", "idle")
    (home.root / "cron" / "jobs.json").write_text("{not json")
    assert home.curator.run(dry_run=True).archived == ("ancient",)  # unreadable: no job is known to need it


def test_a_dry_run_names_what_it_keeps_for_cron_and_an_archive_what_it_leaves_without(home):
    from workbench.screens.skills import plan_lines

    _library(home)
    (home.root / "cron").mkdir()
    (home.root / "cron" / "jobs.json").write_text(json.dumps({"jobs": [{"skills": ["ancient"]}]}))
    report = home.curator.run(dry_run=True)
    assert plan_lines(report)[-1] == "keep        ancient (a cron job names it)"
    assert report.to_dict()["kept_for_cron"] == ["ancient"]
    assert home.curator.archive("ancient")["message"].endswith(
        "Cron job(s) 'unnamed' name it and run without it until it is restored."
    )
    assert "Cron" not in home.curator.archive("idle")["message"]
