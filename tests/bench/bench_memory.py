"""Curated memory: write latency (fsync + journal), snapshot cost, 8-process contention,
journal growth; beside Hermes's own MemoryStore when its venv is built.

Every write scans the text, takes the flock, re-reads the file, journals the change
(pending), writes a temp file, fsyncs it, renames it and, still under the lock, marks the
rows done; latency is dominated by the fsync. Our adds, Hermes's and a floor's (the flock,
re-read and fsynced rename alone) run interleaved in rounds, and the contention runs
alternate, so all see the same machine load.
"""

from __future__ import annotations

import inspect
import multiprocessing
import os
import subprocess
import sys
import time

from engine import open_home
from engine.fileio import atomic_write_bytes, file_lock
from engine.memory.format import ENTRY_DELIMITER
from engine.tools import ToolContext
from tests.bench.common import THIS_RUN, Report, children_peak_rss_mb, percentile, scratch_dir, timed
from tests.bench.hermes_bench import hermes, result, run_json, start

WRITES = 200
WORKERS = 8
PER_WORKER = 40
ROUNDS = 4
CONTENTION_ROUNDS = 2
GROWTH_WRITES = int(os.environ.get("BENCH_JOURNAL_WRITES", "10000"))

HERMES_ADDS = """
import json, time
from tools.memory_tool import MemoryStore
{written}
store = MemoryStore(memory_char_limit=10**6, user_char_limit=10**6)
store.load_from_disk()
samples, cpu, written = [], [], 0
for i in range({first}, {first} + {count}):
    b, c, t = _written(), time.process_time(), time.perf_counter()
    assert store.add("memory", "Fact %04d: the deploy target for service %d is staging-%d, owned by team %d"
                     % (i, i, i % 7, i % 5))["success"]
    samples.append(time.perf_counter() - t)
    cpu.append(time.process_time() - c)
    written += _written() - b
print(json.dumps([samples, cpu, written]))
"""

HERMES_CONTENDER = """
import json, os, time
from tools.memory_tool import MemoryStore
store = MemoryStore(memory_char_limit=10**6, user_char_limit=10**6)
store.load_from_disk()
while not os.path.exists("go"):
    time.sleep(0.001)
began = time.time()
for i in range({count}):
    store.add("memory", "worker {worker} Fact %04d: the deploy target for service %d is staging-%d, owned by team %d"
              % (i, i, i % 7, i % 5))
print(json.dumps([began, time.time()]))
"""


def _fact(i: int) -> str:
    return f"Fact {i:04d}: the deploy target for service {i} is staging-{i % 7}, owned by team {i % 5}"


def _home(folder):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text("memory:\n  memory_char_limit: 1000000\n  user_char_limit: 1000000\n")
    return open_home(folder)


def _floor_add(folder, text: str) -> dict:
    """The least an add can be and keep Hermes's guarantees: the flock, a re-read, and an fsynced
    temp file renamed over the store (no scan, no journal, no checks)."""
    path = folder / "MEMORY.md"
    with file_lock(path):
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        atomic_write_bytes(path, (old + ENTRY_DELIMITER + text if old else text).encode(), ".mem_", sync_folder=False)
    return {"success": True}


def _written() -> int:
    """Bytes this process has sent to the disk so far (``write_bytes``: page-cache pages dirtied, counted,
    not timed; none on tmpfs)."""
    with open("/proc/self/io") as io:
        return int(next(line for line in io if line.startswith("write_bytes")).split()[1])


def _our_adds(mem, first: int, count: int, ctx: ToolContext) -> tuple[list[float], list[float], int]:
    """``count`` adds from fact ``first``: each one's wall and CPU seconds (this process's, all threads),
    and the bytes they wrote, as ``HERMES_ADDS`` counts Hermes's."""
    samples, cpu, written = [], [], 0
    for i in range(first, first + count):
        b, c, t = _written(), time.process_time(), time.perf_counter()
        assert mem.add("memory", _fact(i), ctx)["success"]
        samples.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        written += _written() - b
    return samples, cpu, written


def _timed_writes(call, count: int) -> list[float]:
    samples = []
    for i in range(count):
        with timed() as t:
            result = call(i)
        assert result["success"], result
        samples.append(t[0])
    return samples


def _contender(root: str, worker: int, start, spans) -> None:
    """One of the contending processes: its adds' first start and last end go to ``spans``
    (wall clock, as Hermes's contenders report theirs: interpreter start and exit are not counted).

    Before the gun each makes one agent write to the other store (USER.md): what a running agent has
    done before it contends, and what Hermes's contenders do before theirs (its store loaded from disk,
    its patterns compiled at import). A process's first write opens workbench.db and its journal's
    schema, reads config.yaml and settles the store (10-45 ms a process, 8 of them on 2 cores at the
    gun): that is the "first agent add" figure, not this one."""
    home = open_home(root)
    home.memory.add("user", f"worker {worker} is ready", ToolContext(actor="agent"))
    start.wait()
    spans[2 * worker] = time.time()
    for i in range(PER_WORKER):
        home.memory.add("memory", f"worker {worker} {_fact(i)}", ToolContext(actor="agent"))
    spans[2 * worker + 1] = time.time()
    home.close()


FIRST_WRITE = """
import json, sys, time
from engine import open_home
from engine.tools import ToolContext
home = open_home(sys.argv[1])
home.memory.entries("memory")  # the store opened and settled: what is timed is the add alone
began = time.perf_counter()
assert home.memory.add("memory", "Fact 0001: the deploy target for service 1 is staging-1, owned by team 1",
                       ToolContext(actor="agent"))["success"]
print(json.dumps(time.perf_counter() - began))
"""


def _fresh_process_first_write(folder) -> float:
    """Seconds of the first agent add in a new process (its imports and the rules' compiles included),
    the median of three: what the warm contenders no longer pay, kept in sight."""
    samples = []
    for n in range(3):
        _home(folder / str(n)).close()
        done = subprocess.run([sys.executable, "-c", FIRST_WRITE, str(folder / str(n))], capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"the first-write process failed:\n{done.stderr[-2000:]}")
        samples.append(float(done.stdout.strip().splitlines()[-1]))
    return sorted(samples)[1]


def _first_agent_write(folder) -> None:
    """An agent's first write imports the approval gate and compiles the threat rules its text
    reaches (tens of ms once per process); a running agent has paid that before it contends.
    Done here, before the fork, so the contenders start as warm as Hermes's, whose patterns
    compile at import before their gun."""
    home = _home(folder)
    home.memory.add("memory", f"worker 0 {_fact(0)}", ToolContext(actor="agent"))
    home.close()


def _our_contention(root) -> tuple[float, int, int]:
    """Our store in 8 forked processes on one file: seconds from the first add to the last,
    lost updates, failed processes."""
    _home(root).close()
    _first_agent_write(root.with_name(root.name + "-warm"))
    ctx_mp = multiprocessing.get_context("fork")
    start_gun, spans = ctx_mp.Event(), ctx_mp.Array("d", 2 * WORKERS)
    procs = [ctx_mp.Process(target=_contender, args=(str(root), w, start_gun, spans)) for w in range(WORKERS)]
    for proc in procs:
        proc.start()
    time.sleep(2.0)  # every process has opened its home before the gun (as long as Hermes's get)
    start_gun.set()
    for proc in procs:
        proc.join()
    home = open_home(root)
    entries = set(home.memory.entries("memory"))
    home.close()
    expected = {f"worker {w} {_fact(i)}" for w in range(WORKERS) for i in range(PER_WORKER)}
    failed = sum(1 for p in procs if p.exitcode != 0)
    return max(spans[1::2]) - min(spans[0::2]), len(expected - entries), failed


def _hermes_contention(runner, root) -> tuple[float, int]:
    """Hermes's MemoryStore in 8 processes on one file: seconds from the first add to the last, lost updates."""
    root.mkdir(parents=True)
    (root / "memories").mkdir()
    procs = [start(runner, root, HERMES_CONTENDER.format(count=PER_WORKER, worker=w)) for w in range(WORKERS)]
    time.sleep(2.0)  # every interpreter up and waiting
    (root / "go").touch()
    spans = [result(p) for p in procs]
    elapsed = max(e for _, e in spans) - min(b for b, _ in spans)
    text = (root / "memories" / "MEMORY.md").read_text()
    lost = sum(1 for w in range(WORKERS) for i in range(PER_WORKER) if f"worker {w} {_fact(i)}" not in text)
    return elapsed, lost


def _journal_growth(report: Report, folder) -> None:
    """Adds and replaces into a store kept full: what each write costs workbench.db."""
    folder.mkdir()
    home = open_home(folder)
    mem, ctx = home.memory, ToolContext(actor="user")
    i = 0
    while mem.add("memory", f"Fact {i:05d}: deploys of service {i:05d} go through staging", ctx)["success"]:
        i += 1
    home.journal.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def size() -> int:
        return sum(os.path.getsize(folder / n) for n in ("workbench.db", "workbench.db-wal") if (folder / n).exists())

    before, oldest = size(), 0
    with timed() as t:
        for n in range(GROWTH_WRITES):
            if n % 2:
                done = mem.replace(
                    "memory",
                    f"Fact {oldest:05d}:",  # same length: the store stays as full
                    f"Fact {oldest:05d}: deploys of service {oldest:05d} go through stagin{n % 10}",
                    ctx,
                )
                assert done["success"], done
            else:
                mem.remove("memory", f"Fact {oldest:05d}:", ctx)
                oldest += 1
                assert mem.add("memory", f"Fact {i:05d}: deploys of service {i:05d} go through staging", ctx)["success"]
                i += 1
    home.journal.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    grown = (size() - before) / 1e6
    report.figure(f"workbench.db growth, {GROWTH_WRITES:,} adds and replaces into a full store", grown, "MB", "< 5")
    report.note(f"({GROWTH_WRITES * 1.5:,.0f} journaled writes incl. the removes making room, {t[0]:.0f} s)")
    home.close()


WAL_ADDS = 100  # (well short of the 4 MB at which a write checkpoints: the WAL holds every frame they wrote)


def _wal_pages(report: Report, folder) -> None:
    """Pages each add writes to workbench.db's WAL (a frame is a page and 24 bytes), counted, not timed:
    a person's add (no session, as the bench's adds) and an agent's (its rows also in the session index)."""
    home = _home(folder)
    conn = home.journal.connection()
    for who, ctx in (
        ("a person's", ToolContext(actor="user")),
        ("an agent's", ToolContext(actor="agent", session_id="s")),
    ):
        for i in range(50):  # past the first pages (the first write makes the tables)
            assert home.memory.add("user", f"{who} {_fact(i)}", ctx)["success"]
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        for i in range(WAL_ADDS):
            assert home.memory.add("user", f"{who} more {_fact(i)}", ctx)["success"]
        frames = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        report.figure(
            f"workbench.db WAL pages per add, {who}",
            frames / WAL_ADDS,
            "",
            "<= 6.5" if ctx.actor == "user" else "<= 7.7",
        )
        report.note(
            f"({frames * (page + 24) / WAL_ADDS / 1024:.1f} KiB an add, written out again at the next checkpoint)"
        )
    home.close()


def run(report: Report) -> None:
    runner = hermes()
    with scratch_dir("memory") as folder:
        home = _home(folder / "single")
        mem = home.memory
        ctx = ToolContext(actor="user")
        adds, theirs, floor, cpu, their_cpu, written, their_written = [], [], [], [], [], 0, 0
        (folder / "hermes" / "memories").mkdir(parents=True)
        (folder / "floor").mkdir()
        for r in range(ROUNDS):  # interleaved: ours, the floor's, then Hermes's, on the same machine load
            first = r * WRITES // ROUNDS
            wall, spent, wrote = _our_adds(mem, first, WRITES // ROUNDS, ctx)
            adds, cpu, written = adds + wall, cpu + spent, written + wrote
            floor += _timed_writes(lambda i: _floor_add(folder / "floor", _fact(first + i)), WRITES // ROUNDS)
            if runner:
                code = HERMES_ADDS.format(first=first, count=WRITES // ROUNDS, written=inspect.getsource(_written))
                wall, spent, wrote = run_json(runner, folder / "hermes", code)
                theirs, their_cpu, their_written = theirs + wall, their_cpu + spent, their_written + wrote
        replaces = _timed_writes(lambda i: mem.replace("memory", f"Fact {i:04d}:", _fact(i) + " (v2)", ctx), WRITES)
        snaps = []
        for _ in range(50):
            with timed() as t:
                mem.snapshot().block("memory")
            snaps.append(t[0])
        removes = _timed_writes(lambda i: mem.remove("memory", f"Fact {i:04d}:", ctx), WRITES)
        hermes_add = (percentile(theirs, 50) * 1000, percentile(theirs, 95) * 1000) if theirs else None
        p50, _ = report.latencies(
            f"add ({WRITES} entries, fsync + journal)", adds, "<= Hermes p50", hermes_add, THIS_RUN
        )
        f50, _ = report.latencies("floor: flock, re-read, fsynced rename (same entries, interleaved)", floor)
        report.figure("add p50 above the floor, ours", (p50 - f50) * 1000, "us")
        if hermes_add:
            report.figure("add p50 above the floor, Hermes", (hermes_add[0] - f50) * 1000, "us")
        report.figure(
            "add CPU time p50 (user + system, no wait)",
            percentile(cpu, 50) * 1e6,
            "us",
            "<= Hermes",
            percentile(their_cpu, 50) * 1e6 if theirs else None,
            THIS_RUN,
        )
        report.figure(  # (beside the p50: work an add does only now and then, a checkpoint, shows here)
            "add CPU time mean (user + system, no wait)",
            sum(cpu) / len(cpu) * 1e6,
            "us",
            "<= Hermes",
            sum(their_cpu) / len(their_cpu) * 1e6 if theirs else None,
            THIS_RUN,
        )
        report.figure(
            "add bytes written (write_bytes, memory file + workbench.db)",
            written / len(adds) / 1024,
            "KiB",
            hermes=their_written / len(theirs) / 1024 if theirs else None,
            source=THIS_RUN,
        )
        report.latencies("replace (whole entry)", replaces, target="< 20 ms")
        report.latencies("remove", removes, target="< 20 ms")
        report.latencies(f"snapshot + render ({WRITES} entries, threat scan)", snaps)
        home.close()

        # contention: ours and Hermes's alternate, CONTENTION_ROUNDS each, on the same machine load
        first = _fresh_process_first_write(folder / "first-write")
        report.figure("first agent add in a new process (imports and rule compiles included)", first * 1000, "ms")
        writes, ours_s, theirs_s, lost, failed, theirs_lost = 0, 0.0, 0.0, 0, 0, 0
        for r in range(CONTENTION_ROUNDS):
            elapsed, missing, bad = _our_contention(folder / f"contended-{r}")
            writes, ours_s, lost, failed = writes + WORKERS * PER_WORKER, ours_s + elapsed, lost + missing, failed + bad
            if runner:
                elapsed, missing = _hermes_contention(runner, folder / f"hermes-contended-{r}")
                theirs_s, theirs_lost = theirs_s + elapsed, theirs_lost + missing
        ours = writes / ours_s
        rate = writes / theirs_s if runner else None
        report.figure(
            f"{WORKERS} processes x {PER_WORKER} adds on one file ({CONTENTION_ROUNDS} runs)",
            ours,
            "writes/s",
            ">= 0.9x Hermes",
            rate,
            THIS_RUN,
        )
        report.figure("lost updates", lost, "", target="0")
        report.figure("failed processes", failed, "", target="0")
        if rate:
            report.figure("Hermes: lost updates", theirs_lost)
        else:
            report.note("Hermes venv not built (make test builds it): no Hermes figures")
        _wal_pages(report, folder / "wal")
        _journal_growth(report, folder / "growth")
    report.memory()
    report.figure("peak RSS (worker processes)", children_peak_rss_mb(), "MB")
