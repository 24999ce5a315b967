"""Skills at scale: a library of 2,000 skills (index build, listing, view, Curator runs)."""

from __future__ import annotations

import json
import os
import time

from engine import FixedClock, open_home
from engine.skills.usage import default_record, iso
from tests.bench.common import Report, scratch_dir, timed

SKILLS = 2000
CATEGORIES = 40
NOW = 1796040000.0
DAY = 86400


def _build(root) -> None:
    """2,000 agent-created skills in 40 categories; a third idle enough to go stale, a sixth to be archived."""
    skills = root / "skills"
    records = {}
    for i in range(SKILLS):
        name = f"skill-{i:04d}"
        folder = skills / f"cat-{i % CATEGORIES:02d}" / name
        (folder / "references").mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Procedure number {i} for a recurring class of task, with pitfalls "
            f"and checks\nmetadata:\n  hermes:\n    tags: [bench, n{i % 7}]\n---\n# {name}\n\n"
            + "1. Step with enough words to look like a real instruction line.\n"
            * 30
        )
        (folder / "references" / "notes.md").write_text("notes\n" * 50)
        idle_days = (0, 5, 20, 45, 2, 16)[i % 6]
        record = default_record(iso(NOW - 60 * DAY))
        record.update(created_by="agent", use_count=3, last_used_at=iso(NOW - idle_days * DAY))
        records[name] = record
    (skills / ".usage.json").write_text(json.dumps(records))
    past = time.time() - 3600  # a library that exists already: its folders were not touched a moment ago
    for folder in [skills, *skills.iterdir(), *skills.glob("*/*")]:
        os.utime(folder, (past, past))


def _each(call, step: int) -> list[float]:
    """Seconds ``call`` takes for every ``step``-th skill name."""
    seconds = []
    for i in range(0, SKILLS, step):
        with timed() as one:
            call(f"skill-{i:04d}")
        seconds.append(one[0])
    return seconds


def run(report: Report) -> None:
    with scratch_dir("skills") as root:
        with timed() as build:
            _build(root)
        report.figure("library build (2,000 skills on disk)", build[0], "s")
        home = open_home(root, clock=FixedClock(NOW))
        with timed() as cold:
            text = home.skills.index_text()
        with timed() as warm:
            home.skills.index_text()
        report.figure("skills index build, cold (parse every SKILL.md)", cold[0] * 1000, "ms", "< 2000 ms")
        report.figure("skills index build, warm (mtime cache)", warm[0] * 1000, "ms", "< 300 ms")
        report.figure("skills index size", len(text), "chars")
        with timed() as listing:
            home.skills.list(include_archived=True)
        report.figure("skills list (with usage and provenance)", listing[0] * 1000, "ms")
        report.latencies("skill_view (records a view)", _each(home.skills.view, 100))
        report.latencies("skill lookup by name (no library walk)", _each(home.skills.find, 50))
        with timed() as walk:
            home.skills.scanner.active()
        report.figure("  for comparison: one full library walk", walk[0] * 1000, "ms")
        with timed() as dry:
            preview = home.curator.run(dry_run=True)
        report.figure("curator dry run", dry[0] * 1000, "ms", "< 2000 ms")
        with timed() as real:
            result = home.curator.run()
        report.figure("curator run (moves, ledger, journal, report)", real[0], "s")
        report.figure("  marked stale", len(result.marked_stale))
        report.figure("  archived", len(result.archived))
        report.figure("  run time per archived skill", real[0] * 1000 / max(1, len(result.archived)), "ms")
        assert len(preview.archived) == len(result.archived)
        with timed() as again:
            home.curator.run()
        report.figure("curator run with nothing to do", again[0] * 1000, "ms")
        report.memory()
        home.close()
