"""Skills at scale: a library of 2,000 skills (index build, listing, view, Curator runs), and one
skill change (patch, pin, archive) in libraries of 500 and 1,000."""

from __future__ import annotations

import json
import os
import time

from engine import FixedClock, open_home
from engine.skills.usage import default_record, iso
from tests.bench.common import Report, scratch_dir, timed

SKILLS = 2000
CATEGORIES = 40
CHANGES = 15  # of each kind, timed one by one in each library of ``SINGLE``
SINGLE = (500, 1000)
NOW = 1796040000.0
DAY = 86400


def _build(root, count: int = SKILLS) -> None:
    """``count`` agent-created skills in 40 categories; a third idle enough to go stale, a sixth to be archived."""
    skills = root / "skills"
    records = {}
    for i in range(count):
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


def _one_by_one(call, names: list[str]) -> list[float]:
    seconds = []
    for name in names:
        with timed() as one:
            assert call(name)["success"]
        seconds.append(one[0])
    return seconds


def _single_changes(report: Report, count: int) -> None:
    """Each change looks for outside ones before and after it, at what it touches only: it should cost
    about the same in a library of 500 as of 1,000 (a full look, printed beside, grows with it)."""
    with scratch_dir(f"skills-{count}") as root:
        _build(root, count)
        home = open_home(root, clock=FixedClock(NOW))
        home.skills.outside.record()  # the look kept (a TUI's, or the last `workbench` run's)
        step = count // (2 * CHANGES)
        names = [f"skill-{i:04d}" for i in range(0, count, step)]
        pinned, archived = names[0::2][:CHANGES], names[1::2][:CHANGES]

        def patch(name: str) -> dict:
            return home.skills.manage(
                {"action": "patch", "name": name, "old_string": f"# {name}\n", "new_string": f"# {name} (v2)\n"}
            )

        report.latencies(f"patch one skill, {count:,} skills", _one_by_one(patch, pinned))
        report.latencies(f"pin one skill, {count:,} skills", _one_by_one(home.curator.pin, pinned))
        report.latencies(f"archive one skill, {count:,} skills", _one_by_one(home.curator.archive, archived))
        with timed() as look:
            home.skills.outside.record()
        report.figure(f"  for comparison: one full look for outside changes, {count:,} skills", look[0] * 1000, "ms")
        home.close()


def run(report: Report) -> None:
    for count in SINGLE:
        _single_changes(report, count)
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
