"""The benchmark archive, built from the reference workload (shared/bench/gen_workload.py).

The generator is a development tool kept beside the repository, never copied into it:
it is imported at run time from ``<repo>/../shared/bench`` (or ``$BENCH_WORKLOAD_DIR``).
``build_bench_archive(path, sessions=...)`` writes its sessions through the archive API
in per-turn transactions, checks the workload digest (the 400-session prefix always, the
whole workload at 20,000 sessions), and adds rows of our own that the generator lacks:
CJK inside tool-call arguments, half written the way Hermes writes them (``json.dumps``
defaults, so ``\\uXXXX`` escapes) and half the way we write them (raw UTF-8). A finished
build is marked with ``build.json`` and reused.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path
from types import ModuleType

from engine import FixedClock, open_home

WORKLOAD_VERSION = 3  # 3: both kinds of CJK tool-call rows (2 lacked the escaped ones; upgraded in place)
SESSIONS = 20_000  # 1,000,000 messages; 4,000 sessions are the 200k variant
DIGESTS = {
    400: "bd8a3a2f4f472fb3cc5422dc9194e8bd1a853e5341e4f1a11fa114488d427569",
    20_000: "15fe0acacc5fae9cefb5502016dd75b426a04ac8dfae4ffa2b36c41282efed2b",
}
EXTRA_EVERY = 50  # two sessions of CJK tool-call arguments (ours, Hermes's way) after every 50 workload sessions
REPO = Path(__file__).resolve().parents[2]


def default_path(sessions: int) -> Path:
    return Path("bench-data") / ("archive-1m" if sessions == SESSIONS else f"archive-{sessions}s")


def generator() -> ModuleType:
    """gen_workload from the shared folder beside the repository (or $BENCH_WORKLOAD_DIR)."""
    folder = Path(os.environ.get("BENCH_WORKLOAD_DIR") or REPO.parent / "shared" / "bench")
    if not (folder / "gen_workload.py").exists():
        raise SystemExit(
            f"the reference workload generator is missing: no gen_workload.py in {folder}; "
            "set BENCH_WORKLOAD_DIR to the folder that holds it"
        )
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return importlib.import_module("gen_workload")


def turns(messages: list[dict]) -> list[list[dict]]:
    """A session's messages cut into turns, each starting at a user message."""
    cut: list[list[dict]] = []
    for message in messages:
        if message["role"] == "user" or not cut:
            cut.append([])
        cut[-1].append(message)
    return cut


def cjk_argument_session(gen: ModuleType, index: int, start: float, hermes: bool) -> list[dict]:
    """Tool calls whose arguments hold CJK, stored as we store them or as Hermes does (escaped)."""
    rng = random.Random(f"cjk-args:{index}:{hermes}")
    words = gen.Gen(rng)
    messages, stamp = [], start
    for call_no in range(5):
        text = words.cjk_sentence("zh" if rng.random() < 0.6 else "ja")
        name, args = rng.choice(
            [
                ("session_search", {"query": text[:6], "limit": 3}),
                ("memory", {"action": "add", "target": "memory", "content": text}),
                ("web_search", {"query": text}),
            ]
        )
        call_id = f"cjk_{'h' if hermes else 'w'}{index:05d}_{call_no}"
        arguments = json.dumps(args) if hermes and call_no % 2 else json.dumps(args, ensure_ascii=False)
        calls = [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]
        stamp += rng.uniform(1, 30)
        messages.append({"role": "user", "content": words.sentence(5, 12), "timestamp": stamp})
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "timestamp": stamp + 1,
                "finish_reason": "tool_calls",
                "tool_calls": json.dumps(calls) if hermes else calls,
            }
        )
        messages.append(
            {
                "role": "tool",
                "tool_name": name,
                "tool_call_id": call_id,
                "timestamp": stamp + 2,
                "content": json.dumps({"success": True}),
            }
        )
    return messages


def _add_cjk_session(archive, gen: ModuleType, index: int, start: float, hermes: bool) -> int:
    sid = f"cjk_args_{'hermes' if hermes else 'ours'}_{index:05d}"
    archive.create_session(sid, source="cli", model="bench")
    messages = cjk_argument_session(gen, index, start, hermes)
    for turn in turns(messages):
        archive.append_messages(sid, turn)
    return len(messages)


def _upgrade_from_2(root: Path, info: dict) -> None:
    """A version-2 build wrote only our kind of CJK tool-call rows: add Hermes's kind at the end."""
    gen = generator()
    home = open_home(root)
    added = sum(
        _add_cjk_session(home.archive, gen, index, gen.BASE_TS, True)
        for index in range(EXTRA_EVERY - 1, info["sessions"], EXTRA_EVERY)
    )
    home.close()
    (root / "build.json").write_text(
        json.dumps({**info, "workload": WORKLOAD_VERSION, "messages": info["messages"] + added}, indent=2)
    )


def build_bench_archive(
    path: str | os.PathLike | None = None, *, sessions: int = SESSIONS, progress: bool = True
) -> Path:
    """Build (or reuse) the benchmark home at ``path``; returns the home folder."""
    root = Path(path or default_path(sessions))
    marker = root / "build.json"
    if marker.exists():
        info = json.loads(marker.read_text())
        if info.get("workload") == 2 and info.get("sessions") == sessions:
            _upgrade_from_2(root, info)
            info = json.loads(marker.read_text())
        if info.get("workload") == WORKLOAD_VERSION and info.get("sessions") == sessions:
            return root
    gen = generator()
    shutil.rmtree(root, ignore_errors=True)
    clock = FixedClock(gen.BASE_TS)
    home = open_home(root, clock=clock)
    archive = home.archive
    digest = hashlib.sha256()
    written, started = 0, time.perf_counter()
    for index, (meta, messages) in enumerate(gen.iter_sessions(sessions)):
        digest.update(json.dumps(meta, sort_keys=True, ensure_ascii=False).encode())
        for message in messages:
            digest.update(json.dumps(message, sort_keys=True, ensure_ascii=False).encode())
        if index + 1 in DIGESTS and digest.hexdigest() != DIGESTS[index + 1]:
            raise SystemExit(
                f"gen_workload.py does not produce the reference workload ({index + 1} sessions: "
                f"digest {digest.hexdigest()}, expected {DIGESTS[index + 1]})"
            )
        clock.set(meta["started_at"])
        archive.create_session(
            meta["session_id"], source=meta["source"], model=meta["model"], system_prompt=meta["system_prompt"]
        )
        for turn in turns(messages):
            archive.append_messages(meta["session_id"], turn)
        written += len(messages)
        if (index + 1) % EXTRA_EVERY == 0:
            for hermes in (False, True):
                written += _add_cjk_session(archive, gen, index, meta["started_at"] + 3600, hermes)
        if progress and (index + 1) % 1000 == 0:
            rate = written / (time.perf_counter() - started)
            print(f"  built {index + 1:,} sessions / {written:,} messages ({rate:,.0f} msgs/s)", flush=True)
    ingest_s = time.perf_counter() - started
    index_started = time.perf_counter()
    archive.bigram_index.refresh()
    index_s = time.perf_counter() - index_started
    home.close()
    marker.write_text(
        json.dumps(
            {
                "workload": WORKLOAD_VERSION,
                "sessions": sessions,
                "messages": written,
                "digest_checked": max(n for n in DIGESTS if n <= sessions) if sessions >= 400 else 0,
                "ingest_seconds": ingest_s,
                "index_seconds": index_s,
            },
            indent=2,
        )
    )
    return root
