"""Agent runner: offline-model throughput with persistence, and the engine's overhead per turn.

1,000 turns in one session with the default compression and review settings, so the
figures include storing every message in state.db, journaling memory writes,
recording each request's prefix hash, the automatic compressions into child sessions
and the background reviews the nudges start. The model's own thinking time is timed
separately so the engine's share per turn can be read off.
"""

from __future__ import annotations

import time

from engine import open_home
from engine.models import OfflineModel
from engine.runner import AgentSession
from engine.runner.tools import ToolRegistry
from tests.bench.common import Report, scratch_dir, timed

TURNS = 1_000
MESSAGES = [
    "hello",
    "remember that service {i} deploys from the release-{i} branch",
    "what did we discuss about service {j}?",
    "how do I deploy to staging?",
    "prepare the weekly status report",
    "what do I prefer for answers?",
    "I prefer short answers with code first",
    "thanks",
]


class TimedModel(OfflineModel):
    """The offline model, keeping the total time spent inside it."""

    def __init__(self):
        self.seconds = 0.0
        self.calls = 0

    def complete(self, messages, tools):
        start = time.perf_counter()
        try:
            return super().complete(messages, tools)
        finally:
            self.seconds += time.perf_counter() - start
            self.calls += 1

    def summarise(self, messages):
        start = time.perf_counter()
        try:
            return super().summarise(messages)
        finally:
            self.seconds += time.perf_counter() - start


def run(report: Report) -> None:
    with scratch_dir("runner") as folder:
        (folder / "config.yaml").write_text("memory:\n  memory_char_limit: 100000\n", encoding="utf-8")
        home = open_home(folder)
        from engine.demo import seed_demo_home

        seed_demo_home(home)
        model = TimedModel()
        session = AgentSession(home, model)
        tool_time = [0.0]
        dispatch = ToolRegistry.dispatch

        def timed_dispatch(registry, name, args, ctx):
            start = time.perf_counter()
            try:
                return dispatch(registry, name, args, ctx)
            finally:
                tool_time[0] += time.perf_counter() - start

        ToolRegistry.dispatch = timed_dispatch  # every tool call, the reviews' included
        samples, statuses = [], {}
        with timed() as total:
            for i in range(TURNS):
                text = MESSAGES[i % len(MESSAGES)].format(i=i, j=max(0, i - 40))
                with timed() as one:
                    result = session.run_turn(text)
                samples.append(one[0])
                statuses[result.status] = statuses.get(result.status, 0) + 1
        session.close()
        ToolRegistry.dispatch = dispatch
        assert statuses == {"done": TURNS}, statuses
        stored = home.archive.conn().execute("SELECT count(*) FROM messages").fetchone()[0]
        report.figure(
            f"offline turns per second ({TURNS:,} turns, persisted)", TURNS / total[0], "turns/s", target=">= 20"
        )
        report.latencies("one turn", samples)
        report.figure("model calls per turn", model.calls / TURNS, "calls")
        report.figure("model time per turn", model.seconds / TURNS * 1000, "ms")
        report.figure("engine overhead per turn (turn minus model)", (total[0] - model.seconds) / TURNS * 1000, "ms")
        report.figure("  of which tools (memory, skills, search; reviews too)", tool_time[0] / TURNS * 1000, "ms")
        runner_only = total[0] - model.seconds - tool_time[0]
        report.figure(
            "  of which runner (persist, prompts, records, compressions)",
            runner_only / TURNS * 1000,
            "ms",
            target="<= 10 ms",
        )
        report.ratio("engine share of turn time", total[0] - model.seconds, total[0])
        report.figure("messages stored", stored, "rows")
        report.figure("compressions into child sessions", session.rotations, "")
        report.memory()
        home.close()
