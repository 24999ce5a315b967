"""Soak: many offline turns while other processes edit, decide and get killed, then audit the home.

``python -m tests.soak --turns 2000`` (``make soak``). Offline turns run as separate
``workbench run`` processes across many sessions (a small context window forces
compressions, a nudge interval of 2 forces background reviews, write approval stages
memory and skill writes, and ``curator run`` passes run between turns). Meanwhile one
process edits memory through the CLI, one approves and rejects pending writes, and a
random share of the turn processes is killed with SIGKILL and the next one goes on.

Afterwards the home is opened once, as the next process would (which settles a write a
kill interrupted), and audited: the last applied journal row of each memory file holds
exactly what is on disk, no entry is duplicated, ``doctor`` is clean, ``integrity_check``
is ok for both databases and the FTS indexes hold exactly the messages table's rows.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from engine import FixedClock, open_home
from engine.demo import seed_demo_home
from engine.memory.format import ENTRY_DELIMITER, FILE_NAMES

CONFIG = """memory:
  write_approval: true
  nudge_interval: 2
skills:
  write_approval: true
model:
  context_length: 2500
compression:
  threshold: 0.5
curator:
  enabled: true
"""
MESSAGES = [
    "Remember that the staging cluster is k8s-{n}.",
    "My name is Sam {n}.",
    "search my sessions for postgres",
    "Forget the note about k8s-{n}.",
    "How do I deploy to staging?",
    "Remember that I prefer tabs (note {n}).",
    "What do you remember about me?",
    "Make a skill for rotating the {n} certificates.",
]


def workbench(home: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "workbench", "--home", str(home), *args, "--json"],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def editor(home: Path, stop: threading.Event, stats: dict) -> None:
    """Adds and removes its own memory entries through the CLI."""
    n = 0
    while not stop.is_set():
        n += 1
        text = f"Editor note {n} about the soak."
        stats["edits"] += workbench(home, "memory", "add", "--target", "memory", text).returncode == 0
        if n % 2 == 0:
            workbench(home, "memory", "remove", "--target", "memory", "--old", f"Editor note {n - 1} ")
        time.sleep(0.2)


def decider(home: Path, stop: threading.Event, stats: dict) -> None:
    """Approves about two thirds of the pending writes and rejects the rest."""
    rng = random.Random(7)
    while not stop.is_set():
        listing = workbench(home, "pending", "list")
        try:
            records = json.loads(listing.stdout).get("pending", [])
        except ValueError:
            records = []
        for record in records[:5]:
            verb = "approve" if rng.random() < 0.67 else "reject"
            stats[verb] += workbench(home, "pending", verb, record["id"]).returncode == 0
        time.sleep(0.3)


def soak(turns: int, kill_share: float = 0.15, seed: int = 1, home: Path | None = None) -> dict:
    rng = random.Random(seed)
    home = home or Path(tempfile.mkdtemp(prefix="soak-")) / "home"
    seeded = open_home(home, clock=FixedClock(1796040000.0))
    seed_demo_home(seeded)
    seeded.close()
    (home / "config.yaml").write_text(CONFIG)
    stats = {
        "turns": 0,
        "runs": 0,
        "killed": 0,
        "failed_runs": 0,
        "edits": 0,
        "approve": 0,
        "reject": 0,
        "curator_runs": 0,
        "sessions": 0,
    }
    stop = threading.Event()
    helpers = [threading.Thread(target=f, args=(home, stop, stats), daemon=True) for f in (editor, decider)]
    for helper in helpers:
        helper.start()
    started = time.monotonic()
    sessions: list[str] = []
    while stats["turns"] < turns:
        k = rng.randint(2, 6)
        argv = [sys.executable, "-m", "workbench", "--home", str(home), "run", "--model", "offline", "--json"]
        if sessions and rng.random() < 0.6:
            argv += ["--session", rng.choice(sessions)]
        for _ in range(k):
            argv += ["-m", rng.choice(MESSAGES).format(n=rng.randint(1, 50))]
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if rng.random() < kill_share:
            time.sleep(rng.uniform(0.05, 1.5))
            process.send_signal(signal.SIGKILL)
            process.wait()
            stats["killed"] += 1
        else:
            out, _ = process.communicate(timeout=300)
            try:
                answer = json.loads(out)
            except ValueError:
                answer = {}
            if process.returncode == 0 and answer.get("session_id"):
                sessions.append(answer["session_id"])
                stats["turns"] += len(answer.get("turns", []))
            else:
                stats["failed_runs"] += 1
        stats["runs"] += 1
        if stats["runs"] % 10 == 0:
            stats["curator_runs"] += workbench(home, "curator", "run").returncode == 0
    stop.set()
    for helper in helpers:
        helper.join(timeout=120)
    stats["seconds"] = round(time.monotonic() - started, 1)
    stats["sessions"] = len(set(sessions))
    return {"home": str(home), "stats": stats, "audit": audit(home)}


def idle_upkeep(root) -> None:
    """What the TUI does in idle time after the writers stop: merge the search indexes in bounded steps."""
    from engine import open_home

    home = open_home(root)
    try:
        for _ in range(200):  # each call is about 50 ms of work; a soak's few thousand rows need a handful
            if not home.archive.upkeep():
                break
    finally:
        home.close()


def audit(home: Path) -> dict:
    """What must hold after the soak (each key a finding; all zero or ok when the home is sound).

    The home is opened once first, as the next process would: a memory write, an approval or
    an archive change a kill interrupted is settled by the next process that opens that store (the last turn
    may have been killed, with nothing opening the home after it)."""
    opened = open_home(home)
    opened.memory, opened.approvals, opened.archive  # noqa: B018  (opening each store settles its interrupted writes)
    opened.close()
    found: dict = {}
    journal = sqlite3.connect(home / "workbench.db")
    for target, name in FILE_NAMES.items():
        path = home / "memories" / name
        text = path.read_bytes().decode("utf-8") if path.exists() else ""  # bytes as they are: no newline translation
        entries = [e for e in text.split(ENTRY_DELIMITER) if e.strip()]
        found[f"{name} duplicated entries"] = len(entries) - len(set(entries))
        # The newest done row that records the file a change left: its sha256 (older journals: the text).
        last = journal.execute(
            "SELECT json_extract(detail, '$.file_sha'), json_extract(detail, '$.file_after') FROM journal "
            "WHERE subsystem = 'memory' AND target = ? AND status = 'done' AND "
            "coalesce(json_extract(detail, '$.file_sha'), json_extract(detail, '$.file_after')) IS NOT NULL "
            "ORDER BY id DESC LIMIT 1",
            (target,),
        ).fetchone()
        if last is None:
            found[f"{name} has no journaled file state"] = int(bool(entries))
        else:
            sha, file_after = last
            left = sha == hashlib.sha256(text.encode("utf-8")).hexdigest() if sha else file_after == text
            found[f"{name} differs from its last journaled change"] = int(not left)
    found["journal rows left pending"] = journal.execute(
        "SELECT count(*) FROM journal WHERE status = 'pending'"
    ).fetchone()[0]
    found["workbench.db integrity"] = journal.execute("PRAGMA integrity_check").fetchone()[0]
    journal.close()
    state = sqlite3.connect(home / "state.db")
    found["state.db integrity"] = state.execute("PRAGMA integrity_check").fetchone()[0]
    found["messages"] = state.execute("SELECT count(*) FROM messages").fetchone()[0]
    for table in ("messages_fts", "messages_fts_trigram"):
        found[f"{table} rows missing"] = state.execute(
            f"SELECT count(*) FROM messages WHERE id NOT IN (SELECT rowid FROM {table})"
        ).fetchone()[0]
        found[f"{table} rows extra"] = state.execute(
            f"SELECT count(*) FROM {table} WHERE rowid NOT IN (SELECT id FROM messages)"
        ).fetchone()[0]
    state.close()
    idle_upkeep(home)
    doctor = workbench(home, "doctor")
    report = json.loads(doctor.stdout)
    found["doctor ok"] = report.get("ok")
    found["doctor problems"] = [
        f["what"] for f in report.get("findings", []) if f.get("severity") not in ("info", "ok")
    ]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(json.dumps(soak(args.turns, seed=args.seed), indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
