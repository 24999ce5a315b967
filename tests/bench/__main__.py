"""Run every benchmark, or those named: ``python -m tests.bench [memory archive ...]``."""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
import time

import tests.bench as package
from tests.bench.common import Report, print_table


def main(argv: list[str]) -> int:
    names = sorted(
        m.name[len("bench_") :] for m in pkgutil.iter_modules(package.__path__) if m.name.startswith("bench_")
    )
    chosen = [n for n in names if not argv or n in argv]
    unknown = [n for n in argv if n not in names]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; available: {', '.join(names)}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    for name in chosen:
        module = importlib.import_module(f"tests.bench.bench_{name}")
        # Each section starts with the disk flushed: the archive's leaves gigabytes of writeback
        # (its 1M copy, written and deleted) that would land in the next section's fsyncs.
        os.sync()
        module.run(Report(name))
    print_table()
    print(f"\nall benchmarks done in {time.perf_counter() - start:,.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
