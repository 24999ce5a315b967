"""Real processes writing the same memory file: no lost update, no torn file."""

import multiprocessing
import os
import random
import re
import signal
import time

import pytest

from engine import open_home
from engine.tools import ToolContext
from tests.journal_support import assert_files_rebuild

pytestmark = pytest.mark.slow
CTX = multiprocessing.get_context("fork")
BIG = 100_000


def _writer(root: str, worker: int, count: int, start) -> None:
    home = open_home(root)
    start.wait()
    for i in range(count):
        result = home.memory.add(
            "memory", f"worker {worker} fact {i}", ToolContext(actor="agent", session_id=f"w{worker}")
        )
        assert result["success"], result
    home.close()


def _contend(tmp_path, workers: int, count: int) -> None:
    root = tmp_path / "home"
    root.mkdir()
    (root / "config.yaml").write_text("memory:\n  memory_char_limit: 100000\n")
    seeding = open_home(root)
    seeding.memory.add("memory", "seed entry", ToolContext(actor="user"))
    seeding.close()  # SQLite state must never be open across fork, even on another connection
    start = CTX.Event()
    procs = [CTX.Process(target=_writer, args=(str(root), w, count, start)) for w in range(workers)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    home = open_home(root)
    entries = home.memory.entries("memory")
    expected = {"seed entry"} | {f"worker {w} fact {i}" for w in range(workers) for i in range(count)}
    assert set(entries) == expected and len(entries) == len(expected), "an update was lost"
    assert len(home.memory.history(limit=1000)) == 1 + workers * count
    conn = home.journal.connection()
    assert conn.execute("SELECT count(*) FROM journal WHERE status != 'done'").fetchone()[0] == 0
    # commits race after the lock, yet the journal rebuilds the file left behind, from one snapshot
    assert_files_rebuild(home)
    for w in range(workers):  # each process's own writes keep their order
        mine = [e for e in entries if e.startswith(f"worker {w} ")]
        assert mine == [f"worker {w} fact {i}" for i in range(count)]
    home.close()


def test_two_processes_lose_nothing(tmp_path):
    _contend(tmp_path, 2, 15)


def test_eight_processes_lose_nothing(tmp_path):
    _contend(tmp_path, 8, 8)


def _rewriter(root: str, wrote) -> None:
    home = open_home(root)
    ctx = ToolContext(actor="agent")
    generation = 0
    while True:
        generation += 1
        home.memory.replace("memory", "gen ", f"gen {os.getpid()}.{generation} " + "x" * BIG, ctx)
        wrote.set()


def test_sigkill_mid_write_leaves_the_old_or_the_new_file(tmp_path):
    root = tmp_path / "home"
    root.mkdir()
    (root / "config.yaml").write_text("memory:\n  memory_char_limit: 1000000\n")
    home = open_home(root)
    home.memory.add("memory", "gen 0 " + "x" * BIG, ToolContext(actor="user"))
    path = home.memory.path("memory")
    home.close()  # no SQLite state may be open across fork
    whole = re.compile(rf"gen [\d.]+ x{{{BIG}}}")
    rng = random.Random(7)
    generations = set()
    for _ in range(6):
        wrote = CTX.Event()
        proc = CTX.Process(target=_rewriter, args=(str(root), wrote))
        proc.start()
        assert wrote.wait(30)
        time.sleep(rng.uniform(0.0, 0.2))
        os.kill(proc.pid, signal.SIGKILL)
        proc.join(10)
        text = path.read_text(encoding="utf-8")
        assert whole.fullmatch(text), f"torn file: {len(text)} chars"
        generations.add(text.split()[1])
    assert len(generations) > 1, "the writer never got to write"
    # the lock died with the process: the next write goes through at once
    home = open_home(root)
    assert home.memory.add("memory", "after the crash", ToolContext(actor="user"))["success"]
    home.close()


def test_threads_of_one_process_exclude_each_other_too(tmp_path):
    import threading

    home = open_home(tmp_path / "home")
    errors = []

    def work(t: int) -> None:
        for i in range(10):
            result = home.memory.add("user", f"thread {t} note {i}", ToolContext(actor="agent"))
            if not result["success"]:
                errors.append(result)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(home.memory.entries("user")) == 40
    home.close()


FOREIGN_WRITER = r"""
import fcntl, os, sys, time
path, count = sys.argv[1], int(sys.argv[2])

def ours():  # the workbench's entries in the file (an atomic replace: never read half written)
    try:
        return open(path, encoding="utf-8").read().count("workbench fact")
    except FileNotFoundError:
        return 0

def more_than(seen):  # wait (bounded) until the workbench wrote again: the writers must overlap
    deadline = time.monotonic() + 30
    while ours() <= seen and time.monotonic() < deadline:
        time.sleep(0.001)
    return ours()

seen = more_than(0)  # (on a RAM disk 60 writes took less than the workbench's first add)
for i in range(count):
    if i and i % 10 == 0:
        seen = more_than(seen)
    with open(path + ".lock", "a+") as lock:  # Hermes's protocol: flock the sidecar, re-read, atomic replace
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            raw = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
            entries = [e.strip() for e in raw.split("\n§\n") if e.strip()] + [f"hermes fact {i}"]
            with open(path + ".hermes.tmp", "w", encoding="utf-8") as out:
                out.write("\n§\n".join(entries))
                out.flush()
                os.fsync(out.fileno())
            os.replace(path + ".hermes.tmp", path)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
"""


def test_a_foreign_writer_using_hermes_locking_loses_nothing_and_neither_do_we(tmp_path, home):
    """A process that shares no code with us (as a Hermes agent would) writes the same file at the same time."""
    import subprocess
    import sys

    path = home.memory.path("memory")
    path.parent.mkdir(parents=True, exist_ok=True)
    home.config_path.write_text("memory:\n  memory_char_limit: 100000\n")
    home.reload_config()
    foreign = subprocess.Popen([sys.executable, "-c", FOREIGN_WRITER, str(path), "60"])
    ours = 0
    while foreign.poll() is None or ours < 25:  # keep writing for as long as the other process does
        assert home.memory.add("memory", f"workbench fact {ours}", ToolContext(actor="user"))["success"]
        ours += 1
    assert foreign.wait(60) == 0
    entries = home.memory.entries("memory")
    expected = {f"hermes fact {i}" for i in range(60)} | {f"workbench fact {i}" for i in range(ours)}
    assert set(entries) == expected and len(entries) == len(expected), "an update was lost"
    first, last = entries.index("hermes fact 0"), entries.index("hermes fact 59")
    assert any(e.startswith("workbench") for e in entries[first:last]), "the two writers never overlapped"
