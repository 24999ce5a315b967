"""Curated memory: write latency (fsync + journal), snapshot cost, 8-process contention.

Every write takes the flock, re-reads the file, scans, journals (begin + commit),
writes a temp file, fsyncs it and renames it, so latency is dominated by fsync.
"""

from __future__ import annotations

import multiprocessing
import time

from engine import open_home
from engine.tools import ToolContext
from tests.bench.common import Report, children_peak_rss_mb, scratch_dir, timed

WRITES = 200
WORKERS = 8
PER_WORKER = 40


def _fact(i: int) -> str:
    return f"Fact {i:04d}: the deploy target for service {i} is staging-{i % 7}, owned by team {i % 5}"


def _home(folder):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text("memory:\n  memory_char_limit: 1000000\n  user_char_limit: 1000000\n")
    return open_home(folder)


def _timed_writes(call, count: int) -> list[float]:
    samples = []
    for i in range(count):
        with timed() as t:
            result = call(i)
        assert result["success"], result
        samples.append(t[0])
    return samples


def _contender(root: str, worker: int, start) -> None:
    home = open_home(root)
    start.wait()
    for i in range(PER_WORKER):
        home.memory.add("memory", f"worker {worker} {_fact(i)}", ToolContext(actor="agent"))
    home.close()


def run(report: Report) -> None:
    with scratch_dir("memory") as folder:
        home = _home(folder / "single")
        mem = home.memory
        ctx = ToolContext(actor="user")
        adds = _timed_writes(lambda i: mem.add("memory", _fact(i), ctx), WRITES)
        replaces = _timed_writes(lambda i: mem.replace("memory", f"Fact {i:04d}:", _fact(i) + " (v2)", ctx), WRITES)
        snaps = []
        for _ in range(50):
            with timed() as t:
                mem.snapshot().block("memory")
            snaps.append(t[0])
        removes = _timed_writes(lambda i: mem.remove("memory", f"Fact {i:04d}:", ctx), WRITES)
        report.latencies(f"add ({WRITES} entries, fsync + journal)", adds, target="< 20 ms")
        report.latencies("replace (whole entry)", replaces, target="< 20 ms")
        report.latencies("remove", removes, target="< 20 ms")
        report.latencies(f"snapshot + render ({WRITES} entries, threat scan)", snaps)
        home.close()

        root = folder / "contended"
        _home(root).close()
        ctx_mp = multiprocessing.get_context("fork")
        start = ctx_mp.Event()
        procs = [ctx_mp.Process(target=_contender, args=(str(root), w, start)) for w in range(WORKERS)]
        for proc in procs:
            proc.start()
        time.sleep(0.2)  # let every process open its home before the gun
        began = time.perf_counter()
        start.set()
        for proc in procs:
            proc.join()
        elapsed = time.perf_counter() - began
        home = open_home(root)
        entries = set(home.memory.entries("memory"))
        expected = {f"worker {w} {_fact(i)}" for w in range(WORKERS) for i in range(PER_WORKER)}
        report.figure(f"{WORKERS} processes x {PER_WORKER} adds on one file", WORKERS * PER_WORKER / elapsed,
                      "writes/s")
        report.figure("lost updates", len(expected - entries), "", target="0")
        report.figure("failed processes", sum(1 for p in procs if p.exitcode != 0), "", target="0")
        home.close()
    report.memory()
    report.figure("peak RSS (worker processes)", children_peak_rss_mb(), "MB")
