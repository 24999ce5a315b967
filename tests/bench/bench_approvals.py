"""Approval queue: staging latency, listing a large backlog, preview and approval cost.

Nothing expires pending records (as in Hermes), so a queue can grow large; the TUI
header counts it on every PendingChanged event, which makes ``count`` the hot path.
"""

from __future__ import annotations

from engine import open_home
from engine.tools import ToolContext
from tests.bench.common import Report, scratch_dir, timed

BACKLOG = 2_000
APPROVALS = 200
AGENT = ToolContext(actor="agent")


def _fact(i: int) -> str:
    return f"Fact {i:05d}: service {i} deploys to staging-{i % 7} and is owned by team {i % 5}"


def run(report: Report) -> None:
    with scratch_dir("approvals") as folder:
        (folder / "config.yaml").write_text("memory:\n  write_approval: on\n  memory_char_limit: 1000000\n")
        home = open_home(folder)
        stage_samples = []
        for i in range(BACKLOG):
            with timed() as t:
                result = home.memory.add("memory", _fact(i), AGENT)
            assert result.get("staged"), result
            stage_samples.append(t[0])
        report.latencies(f"stage one memory write (memory tool, {BACKLOG:,} staged)", stage_samples)

        fresh = open_home(folder)
        with timed() as cold:
            records = fresh.approvals.list()  # a fresh process's first look: parses every file
        fresh.close()
        assert len(records) == BACKLOG
        report.figure(f"list {BACKLOG:,} pending records, cold", cold[0] * 1000, "ms")
        count_samples = []
        for _ in range(20):
            with timed() as t:
                home.approvals.count()
            count_samples.append(t[0])
        report.latencies(f"count with {BACKLOG:,} pending, warm (unchanged files reused)", count_samples)
        report.ratio("cold list vs warm count", cold[0], sorted(count_samples)[len(count_samples) // 2])

        preview_samples = []
        for record in records[:APPROVALS]:
            with timed() as t:
                view = home.approvals.preview(record.id)
            assert view["error"] is None, view
            preview_samples.append(t[0])
        report.latencies("preview (diff, budget, near-duplicates)", preview_samples)

        approve_samples = []
        for record in records[:APPROVALS]:
            with timed() as t:
                assert home.approvals.approve(record.id)["success"]
            approve_samples.append(t[0])
        report.latencies(f"approve one (memory grows to {APPROVALS} entries)", approve_samples)

        with timed() as t:
            outcome = home.approvals.reject_all()
        report.figure(f"reject all {len(outcome['rejected']):,} remaining", t[0], "s")
        report.ratio(
            "reject-all time per record vs one approve",
            t[0] / len(outcome["rejected"]),
            sorted(approve_samples)[len(approve_samples) // 2],
        )
        report.memory()
        home.close()
