"""The automatic pass: Hermes's gates on a fixed clock; archive names, archived_at and archive rollback."""

from __future__ import annotations

import json
import os

from engine.curator.schedule import HOUR
from tests.test_skills_support import tree_state, write_skill
from workbench.cli import main

DAY = 86400


def configure(home, text):
    (home.root / "config.yaml").write_text(text)
    home.reload_config()


def last_run(home, when):
    state = home.skills_dir / ".curator_state"
    state.write_text(json.dumps({"last_run_at": when, "paused": False}))


def test_first_check_seeds_the_state_and_waits_one_interval(home, clock, capsys):
    """Before the first check, status gave "now + 168 h" as the next pass, a time that moved on with
    every look; after it, the seed read as a pass ("last pass", "last run: 12:00")."""
    before = home.curator.status()
    assert before["next"]["next_at"] is None and before["next"]["reason"].startswith("never run: the first check")
    clock.advance(HOUR)
    assert home.curator.status()["next"] == before["next"]  # nothing counted from now
    assert home.curator.maybe_run() is None
    state = json.loads((home.skills_dir / ".curator_state").read_text())
    assert state["last_run_at"] == "2026-11-30T13:00:00+00:00" and "run_count" not in state
    status = home.curator.status()
    assert status["seeded_only"] and status["next"] == {
        "due": False,
        "next_at": "2026-12-07T13:00:00+00:00",
        "reason": "the first pass was deferred at 2026-11-30 13:00 UTC; the next is due 168 h later.",
    }
    assert main(["curator", "status", "--home", str(home.root)]) == 0
    shown = capsys.readouterr().out
    assert "last run: never (the first pass was deferred at 2026-11-30 13:00 UTC)" in shown
    assert "automatic consolidation off" in shown
    state.update(run_count=1, last_run_summary="auto: 0 archived")  # a pass ran: its time is a last run
    (home.skills_dir / ".curator_state").write_text(json.dumps(state))
    assert not home.curator.status()["seeded_only"]
    assert home.curator.status()["next"]["reason"].startswith("last pass 2026-11-30 13:00 UTC")


def test_a_due_pass_waits_for_idle_and_never_runs_during_a_turn(home, clock):
    write_skill(home, "old")
    home.skills.usage.set_fields("old", created_by="agent", last_used_at="2026-01-01T00:00:00+00:00")
    last_run(home, "2026-11-20T00:00:00+00:00")
    home.journal.append("memory", "add", "memory", actor="agent", after="x")  # activity just now
    assert home.curator.maybe_run() is None
    assert home.curator.due().to_dict() == {
        "due": False,
        "next_at": "2026-11-30T14:00:00+00:00",
        "reason": "due, waiting for 2 h without activity (last activity 2026-11-30 12:00 UTC).",
    }
    clock.advance(2 * HOUR)
    assert home.curator.maybe_run(busy=True) is None
    assert "agent turn is running" in home.curator.due(busy=True).reason
    assert (home.skills_dir / "old").exists()
    report = home.curator.maybe_run()
    assert report["archived"] == ["old"] and not (home.skills_dir / "old").exists()
    assert json.loads((home.skills_dir / ".curator_state").read_text())["last_run_at"] == "2026-11-30T14:00:00+00:00"
    assert home.curator.maybe_run() is None  # the next one is an interval away


def test_pause_resume_and_disabled(home, clock):
    last_run(home, "2026-11-01T00:00:00+00:00")
    assert home.curator.pause() == {"success": True, "paused": True, "message": "Curator paused."}
    assert json.loads((home.skills_dir / ".curator_state").read_text())["paused"] is True
    assert home.curator.maybe_run() is None and home.curator.status()["next"]["reason"].startswith("paused")
    assert home.curator.resume()["paused"] is False
    assert home.curator.due().due
    configure(home, "curator:\n  enabled: false\n")
    assert not home.curator.due().due and "curator.enabled is off" in home.curator.due().reason


def test_a_due_pass_with_consolidate_on_stages_a_plan(home, clock):
    for name, text in (
        ("csv-clean", "Clean a CSV file of bad rows"),
        ("csv-cleanup", "Clean up a CSV file of bad rows"),
    ):
        write_skill(home, name, description=text, body=f"# {name}\nDrop empty rows.\n")
        home.skills.usage.set_fields(name, created_by="agent")
    configure(home, "curator:\n  consolidate: true\n")
    last_run(home, "2026-11-01T00:00:00+00:00")
    report = home.curator.maybe_run()
    assert report["consolidation"]["staged"]
    assert [r.action for r in home.approvals.list()] == ["consolidate"]


def test_restore_finds_every_archive_folder_form(home):
    archive = home.skills_dir / ".archive"
    for folder, name in (
        ("alpha-20260714093000", "alpha"),
        ("beta-2026-07-14", "beta"),
        ("gamma-2026-07-14-093000", "gamma"),
        ("delta", "delta"),
    ):
        write_skill(home, folder)
        (home.skills_dir / folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\n---\nbody\n")
        os.makedirs(archive, exist_ok=True)
        os.rename(home.skills_dir / folder, archive / folder)
        assert home.curator.restore(name)["success"], folder
        assert (home.skills_dir / name / "SKILL.md").is_file()


def test_purge_measures_age_from_archived_at(home, clock):
    archive = home.skills_dir / ".archive"
    write_skill(home, "july")
    os.makedirs(archive)
    os.rename(home.skills_dir / "july", archive / "july")  # archived by Hermes in July; the folder's mtime is today
    home.skills.usage.set_fields("july", state="archived", archived_at="2026-07-01T00:00:00+00:00")
    write_skill(home, "today")
    home.curator.archive("today")
    assert [c["name"] for c in home.curator.purge(30, dry_run=True)["candidates"]] == ["july"]


def test_rolling_back_an_archive_restores_the_previous_state(home, clock):
    write_skill(home, "tired")
    home.skills.usage.set_fields("tired", state="stale", use_count=3)
    before = home.skills.usage.load()["tired"]
    tree = tree_state(home.skills_dir / "tired")
    archived = home.curator.archive("tired")
    assert home.skills.usage.load()["tired"]["archive_dir"] == "tired"
    home.curator.rollback(archived["ledger_id"])
    assert home.skills.usage.load()["tired"] == before  # stale stays stale; archive-only keys are gone
    assert tree_state(home.skills_dir / "tired") == tree
