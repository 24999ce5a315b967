"""Helpers shared by the benchmarks: timing, percentiles, peak memory, a scratch folder."""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path


def percentile(samples: list[float], pct: float) -> float:
    """Nearest-rank percentile (pct in 0..100) of a non-empty list."""
    ordered = sorted(samples)
    rank = max(0, min(len(ordered) - 1, round(pct / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MB (Linux reports KB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def children_peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


ROWS: list[tuple[str, str, str, str, str, str]] = []  # every figure of the run: the closing table

# Where a Hermes figure comes from, as the closing table's Hermes column says it.
REFERENCE = "ref."  # shared/reference/search-benchmark.md
THIS_RUN = "this run"  # Hermes's own code (tests/hermes_support.HERMES_VERSION), measured beside ours
SOURCES = {
    REFERENCE: "the reference figures of shared/reference/search-benchmark.md: Hermes's SessionDB at upstream "
    "614dc194e (schema 22) on the same workload, 2 vCPU, 24 GB, SQLite 3.40.1; that page gives no date",
    THIS_RUN: "hermes-agent {version}'s own code from its venv, run in this bench on the same machine, "
    "interleaved with ours",
}


class Report:
    """Collects figures, prints each as it comes and keeps it for the closing table."""

    def __init__(self, section: str):
        self.section = section
        self.values: dict[str, float] = {}
        print(f"\n== {section} ==", flush=True)

    def figure(
        self,
        name: str,
        value: float,
        unit: str = "",
        target: str = "",
        hermes: float | None = None,
        source: str = REFERENCE,
    ) -> None:
        """``hermes``: Hermes's figure for the same measure, from ``source`` (a key of ``SOURCES``)."""
        self.values[name] = value
        shown = _shown(value)
        line = f"  {name:<52} {shown:>14} {unit}"
        if target:
            line += f"   (target {target})"
        print(line, flush=True)
        ratio = f"{value / hermes:,.2f}x" if hermes else ""
        theirs = f"{_shown(hermes)} ({source})" if hermes else ""
        ROWS.append((self.section, name, f"{shown} {unit}".strip(), target, theirs, ratio))

    def latencies(
        self,
        name: str,
        samples_s: list[float],
        target: str = "",
        hermes: tuple[float, float] | None = None,
        source: str = REFERENCE,
    ) -> tuple[float, float]:
        p50 = percentile(samples_s, 50) * 1000
        p95 = percentile(samples_s, 95) * 1000
        self.figure(f"{name} p50", p50, "ms", target, hermes=hermes[0] if hermes else None, source=source)
        self.figure(f"{name} p95", p95, "ms", hermes=hermes[1] if hermes else None, source=source)
        return p50, p95

    def ratio(self, name: str, numerator: float, denominator: float, target: str = "") -> None:
        self.figure(name, numerator / denominator if denominator else float("inf"), "x", target)

    def note(self, text: str) -> None:
        print(f"  {text}", flush=True)

    def memory(self) -> None:
        self.figure("peak RSS (this process)", peak_rss_mb(), "MB")


def _shown(value: float) -> str:
    return f"{value:,.3f}" if isinstance(value, float) and abs(value) < 1000 else f"{value:,.0f}"


def print_table() -> None:
    """Every figure of the run in one table, with the machine it ran on."""
    load = os.getloadavg()
    print(
        f"\n== all figures: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, "
        f"{_memory_gb():.0f} GB, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}, "
        f"peak RSS {peak_rss_mb():,.0f} MB (children {children_peak_rss_mb():,.0f} MB) =="
    )
    print("| bench | figure | value | goal | Hermes | ours / Hermes |")
    print("|---|---|---|---|---|---|")
    for row in ROWS:
        print("| " + " | ".join(cell.replace("|", "/") for cell in row) + " |")
    used = sorted({source for source in SOURCES for row in ROWS if row[4].endswith(f"({source})")})
    if used:
        from tests.hermes_support import HERMES_VERSION

        print("\nHermes column: " + "; ".join(f"({s}) {SOURCES[s].format(version=HERMES_VERSION)}" for s in used) + ".")


def _memory_gb() -> float:
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open("/proc/meminfo") as info:
            return int(info.readline().split()[1]) / 1024 / 1024
    return 0.0


@contextlib.contextmanager
def timed() -> Iterator[list[float]]:
    """``with timed() as t: ...`` then ``t[0]`` is the elapsed seconds."""
    box: list[float] = []
    start = time.perf_counter()
    try:
        yield box
    finally:
        box.append(time.perf_counter() - start)


@contextlib.contextmanager
def scratch_dir(name: str) -> Iterator[Path]:
    """A temp folder removed afterwards (set BENCH_KEEP=1 to keep it)."""
    folder = Path(tempfile.mkdtemp(prefix=f"wb-bench-{name}-"))
    try:
        yield folder
    finally:
        if not os.environ.get("BENCH_KEEP"):
            shutil.rmtree(folder, ignore_errors=True)


def mean(samples: list[float]) -> float:
    return statistics.fmean(samples) if samples else 0.0
