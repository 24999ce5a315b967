"""The learning loop under load: background reviews on their thread and a slow memory provider attached.

300 offline turns on a seeded home with a memory review every 2 turns and a skill
review every 6 iterations, run three ways: reviews inline and no provider (the
baseline), reviews on the review thread with a provider whose hooks are slow
(``sync_turn`` 20 ms, ``queue_prefetch`` 5 ms, ``prefetch`` 2 ms), and the same
with the provider's prefetch hanging past a 50 ms timeout. The figures show what a
turn costs when its reviews and provider hooks run beside it, and how long after a
turn's answer its review's result line arrives (queue wait included).
"""

from __future__ import annotations

import logging
import threading
import time

from engine import open_home
from engine.demo import seed_demo_home
from engine.models import OfflineModel
from engine.providers.base import MemoryProvider
from engine.runner import AgentSession
from tests.bench.common import Report, percentile, scratch_dir, timed

TURNS = 300
MESSAGES = [
    "Hi, I'm Lin and I work on the billing service",
    "prepare the weekly status report",
    "no, use tabs in the report tables",
    "what did we discuss about service {i}?",
    "I usually check the dashboards at 9",
    "prepare the weekly status report again",
    "remember that service {i} deploys from the release-{i} branch",
    "thanks",
]


class SlowProvider(MemoryProvider):
    name = "slow"

    def __init__(self, hang: bool = False):
        self.hang, self.synced = hang, 0

    def prefetch(self, query, *, session_id=""):
        time.sleep(0.2 if self.hang else 0.002)
        return "- a recalled fact"

    def queue_prefetch(self, query, *, session_id=""):
        time.sleep(0.005)

    def sync_turn(self, user, assistant, *, session_id="", messages=None):
        time.sleep(0.02)
        self.synced += 1


def _run(folder, *, background: bool, provider: MemoryProvider | None, timeout: float = 8.0):
    extra = f"  provider_timeout: {timeout}\n"
    (folder / "config.yaml").write_text(
        "memory:\n  memory_char_limit: 100000\n  user_char_limit: 100000\n"
        f"  nudge_interval: 2\n{extra}skills:\n  creation_nudge_interval: 6\n",
        encoding="utf-8",
    )
    home = open_home(folder)
    seed_demo_home(home)
    stored: dict[int, float] = {}  # message id -> when it reached state.db (the answer, for a turn's last one)
    lags: list[float] = []
    lock = threading.Lock()

    def on_event(event):
        with lock:
            if event.kind == "message_stored":
                stored.update((message_id, time.perf_counter()) for message_id in event.data["message_ids"])
            elif event.kind == "review_finished" and event.data.get("message_id") in stored:
                lags.append(time.perf_counter() - stored[event.data["message_id"]])

    session = AgentSession(home, OfflineModel(), provider=provider, background_review=background, on_event=on_event)
    samples = []
    with timed() as total:
        for i in range(TURNS):
            with timed() as one:
                result = session.run_turn(MESSAGES[i % len(MESSAGES)].format(i=i))
            samples.append(one[0])
            assert result.status == "done", result.error
    with timed() as drain:
        session.close()  # waits for the queued reviews, then drains the provider's hooks
    home.close()
    return TURNS / total[0], samples, lags, drain[0]


def run(report: Report) -> None:
    logging.getLogger("engine.providers").setLevel(logging.ERROR)  # the hanging run warns on every turn
    for label, background, provider, timeout in (
        ("inline reviews, no provider (baseline)", False, None, 8.0),
        ("reviews on their thread, slow provider", True, SlowProvider(), 8.0),
        ("reviews on their thread, prefetch hangs (50 ms timeout)", True, SlowProvider(hang=True), 0.05),
    ):
        with scratch_dir("loop") as folder:
            rate, samples, lags, drain = _run(folder, background=background, provider=provider, timeout=timeout)
        report.note(label)
        report.figure("  turns per second", rate, "turns/s", target=">= 10" if background else "")
        report.latencies("  one turn", samples)
        if background and lags:
            report.figure("  reviews run", len(lags), "")
            report.figure("  answer -> review result p50", percentile(lags, 50) * 1000, "ms")
            report.figure("  answer -> review result p95", percentile(lags, 95) * 1000, "ms")
        report.figure("  close (queued reviews + provider hooks)", drain * 1000, "ms")
        if provider is not None:
            report.figure("  provider sync_turn calls", provider.synced, "", target=f"== {TURNS}")
    report.memory()
