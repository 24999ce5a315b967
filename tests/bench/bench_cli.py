"""CLI start: the CPU of one short command in a process of its own, and the modules it imports.

Every script's `workbench` call, and each of the suite's CLI processes, pays this. CPU (user + sys of
the child), not wall time: the figure is the process's own work, whatever else the machine runs. A
small seeded home (the demo's), closed; the package's bytecode is written first, as the suite does.
"""

from __future__ import annotations

import compileall
import resource
import statistics
import subprocess
import sys
from pathlib import Path

from engine import FixedClock, open_home
from engine.demo import seed_demo_home
from tests.bench.common import Report, scratch_dir

RUNS = 10  # each command's figure is the median of this many processes
COMMANDS = [
    ("pending", "list"),
    ("memory", "show"),
    ("skills", "list"),
    ("sessions", "list"),
    ("timeline",),
    ("--help",),
]
ROOT = Path(__file__).resolve().parents[2]
# Counts the modules loaded when the command ends: python -c PROBE ARGS runs `workbench ARGS`.
_PROBE = """
import atexit, runpy, sys
atexit.register(lambda: sys.stderr.write(f"\\nmodules {len(sys.modules)}\\n"))
sys.argv = ["workbench", *sys.argv[1:]]
runpy.run_module("workbench", run_name="__main__")
"""


def _cpu(argv: list[str]) -> float:
    """Seconds of CPU (user + sys) the process running ``argv`` used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _modules(home: Path, command: tuple[str, ...]) -> int:
    probe = [sys.executable, "-c", _PROBE, "--home", str(home), *command]
    err = subprocess.run(probe, capture_output=True, text=True, check=False).stderr
    return int(err.rsplit("modules ", 1)[1])


def run(report: Report) -> None:
    for package in ("engine", "workbench", "widgets", "themes"):
        compileall.compile_dir(ROOT / package, quiet=1)
    with scratch_dir("cli") as folder:
        home = folder / "home"
        demo = open_home(home, clock=FixedClock(1_780_000_000.0))
        seed_demo_home(demo)
        demo.close()
        report.figure("python -c pass (the interpreter alone)", _median([sys.executable, "-c", "pass"]) * 1000, "ms")
        for command in COMMANDS:
            name = " ".join(command)
            argv = [sys.executable, "-m", "workbench", "--home", str(home), *command]
            report.figure(f"workbench {name}: process CPU, median of {RUNS}", _median(argv) * 1000, "ms")
            report.figure(f"workbench {name}: modules imported", _modules(home, command))


def _median(argv: list[str]) -> float:
    return statistics.median(_cpu(argv) for _ in range(RUNS))
