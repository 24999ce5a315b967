"""A rollback restores or removes skills it does not name: the outside-change check must still know them as ours.

Rolling back a consolidation journals one row for the umbrella, yet puts the absorbed
skills back (and rolling that back removes them again). A watcher looking at the library
meanwhile, from this or another process, must journal none of it as ``external``, while
a person's own change made in the same session still is.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from engine import open_home
from tests.hermes_support import workbench_cmd
from tests.test_curator_consolidate import MERGE, REBASE, agent_skill
from tests.test_skills_outside import _outside_rows
from tests.test_skills_support import write_skill

# What the TUI's watcher does on each batch of changes, in a loop, until the stop file appears.
WATCHER = """
import pathlib, sys, time
from engine import open_home
home = open_home(sys.argv[1])
stop, looks, n = pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3]), 0
while not stop.exists():
    home.skills.outside.record()
    n += 1
    looks.write_text(str(n))
    time.sleep(0.01)
home.skills.outside.record()
home.close()
"""


@pytest.fixture
def consolidated(home):
    """Two agent-made git skills consolidated into 'git' (approved), and one unrelated skill."""
    agent_skill(home, "git-rebase", description="Rebase a git branch onto main safely", body=REBASE)
    agent_skill(home, "git-merge", description="Merge a git branch into main safely", body=MERGE)
    agent_skill(home, "pdf-extract", description="Extract tables from PDF files", body="# Extract\nUse pdfplumber.\n")
    proposed = home.curator.consolidation.propose()
    assert proposed["staged"], proposed
    applied = home.approvals.approve(proposed["pending_id"])["result"]
    assert applied["success"] and not (home.skills_dir / "git-merge").exists()
    return home, applied["ledger_id"]


def cli(home, *args: str) -> dict:
    done = subprocess.run(
        workbench_cmd(*args, "--home", str(home.root), "--json"), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_rolling_back_a_consolidation_and_that_rollback_is_never_outside(consolidated):
    home, ledger_id = consolidated
    other = open_home(home.root)  # a TUI on the same home: its own look, the same journal
    try:
        assert other.skills.outside.record() == []  # the baseline: the umbrella, no git-merge / git-rebase
        rolled = home.curator.rollback(ledger_id)
        assert (home.skills_dir / "git-merge" / "SKILL.md").exists()
        assert other.skills.outside.record() == []  # the absorbed skills came back: ours
        home.curator.rollback(rolled["ledger_id"])  # re-applied: they are archived again
        assert other.skills.outside.record() == [] and _outside_rows(home) == []
    finally:
        other.close()


def wait_for_looks(looks, more: int) -> None:
    """Until the watcher has finished ``more`` looks after now (the second began after this call)."""
    start = int(looks.read_text() or 0) if looks.exists() else 0
    deadline = time.monotonic() + 60
    while (int(looks.read_text() or 0) if looks.exists() else 0) < start + more:
        assert time.monotonic() < deadline, "the watcher process stopped looking"
        time.sleep(0.02)


@pytest.mark.slow  # a watcher process looking throughout two CLI rollbacks
def test_a_watcher_process_looking_throughout_cli_rollbacks_journals_only_a_persons_changes(consolidated, tmp_path):
    home, ledger_id = consolidated
    stop, looks = tmp_path / "stop", tmp_path / "looks"
    watcher = subprocess.Popen([sys.executable, "-c", WATCHER, str(home.root), str(stop), str(looks)])
    try:
        wait_for_looks(looks, 2)
        rolled = cli(home, "curator", "rollback", ledger_id)  # the absorbed skills come back
        wait_for_looks(looks, 2)
        cli(home, "curator", "rollback", rolled["ledger_id"])  # and go again
        wait_for_looks(looks, 2)
        assert _outside_rows(home) == []
        shutil.rmtree(home.skills_dir / "pdf-extract")  # a person's own changes are still outside ones
        write_skill(home, "standup", category="notes", description="Daily notes", body="Three lines.\n")
        wait_for_looks(looks, 2)
    finally:
        stop.touch()
        watcher.wait(60)
    assert watcher.returncode == 0
    assert sorted(row[1:] for row in _outside_rows(home)) == [
        ("pdf-extract", "removed", "pdf-extract/SKILL.md"),
        ("standup", "created", "notes/standup/SKILL.md"),
    ]


@pytest.mark.slow  # the rollback runs in its own process, paused part way, then killed
@pytest.mark.parametrize(
    ("point", "look_part_way"), [("skills-mutated", True), ("skills-ledgered", True), ("skills-ledgered", False)]
)
def test_a_look_while_a_rollback_is_part_way_or_settled_after_a_kill_finds_nothing_outside(
    consolidated, tmp_path, point, look_part_way
):
    """Paused after its files moved (its row still pending), then killed and settled on the next open:
    rolled back from ``skills-mutated``, rolled forward (its row committed by the opener) from
    ``skills-ledgered``."""
    home, ledger_id = consolidated
    assert home.skills.outside.record() == []  # the baseline
    marker = tmp_path / "paused"
    env = {**os.environ, "WORKBENCH_CRASH_POINT": point, "WORKBENCH_CRASH_MARKER": str(marker)}
    argv = workbench_cmd("curator", "rollback", ledger_id, "--home", str(home.root))
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "the rollback never reached " + point
            time.sleep(0.05)
        assert (home.skills_dir / "git-merge" / "SKILL.md").exists()
        if look_part_way:
            assert home.skills.outside.record() == []  # mid-change: the pending row's roots are ours
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    settled = open_home(home.root)
    try:
        assert settled.skills.reconcile() == [] and not home.journal.pending("skills")  # settled on opening
    finally:
        settled.close()
    assert (home.skills_dir / "git-merge").exists() is (point == "skills-ledgered")
    assert home.skills.outside.record() == [] and _outside_rows(home) == []
