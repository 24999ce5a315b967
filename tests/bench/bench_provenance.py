"""Entry origins on a large archive: the first look, a repeat, and a look after one new turn.

The archive is the benchmark workload (its own folder, as it gets extra turns; its
memory tool calls carry results that did not apply, as noise), plus twenty applied
Hermes-style memory adds spread through it. ``origins`` of the twenty entries is timed
cold (one word-index search per entry), warm (the file is unchanged: nothing is read)
and after one more turn (searched again), next to decoding every message that has tool
calls, which is what a lookup without the index would cost.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from engine import open_home
from engine.memory import history
from engine.memory.archive_writes import memory_calls
from engine.memory.format import serialize
from tests.bench.common import Report
from tests.bench.workload import build_bench_archive

SESSIONS = int(os.environ.get("BENCH_PROVENANCE_SESSIONS", "4000"))  # 20,000: the full 1M-message workload
ENTRIES = 20


def _turn(archive, session: str, content: str, call_id: str) -> None:
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "memory", "arguments": json.dumps({"action": "add", "content": content})},
    }
    archive.append_messages(
        session,
        [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {
                "role": "tool",
                "content": json.dumps({"success": True, "done": True}),
                "tool_name": "memory",
                "tool_call_id": call_id,
            },
        ],
    )


def run(report: Report) -> None:
    root = build_bench_archive(Path("bench-data") / f"provenance-{SESSIONS}", sessions=SESSIONS)
    home = open_home(root)
    archive = home.archive
    messages = archive.conn().execute("SELECT count(*) FROM messages").fetchone()[0]
    report.figure("archive messages", messages)
    sessions = [
        row[0]
        for row in archive.conn().execute(f"SELECT id FROM sessions ORDER BY id LIMIT {ENTRIES} OFFSET {SESSIONS // 2}")
    ]
    entries = [f"Provenance bench fact {i}" for i in range(ENTRIES)]
    already = archive.conn().execute("SELECT count(*) FROM messages WHERE tool_call_id LIKE 'prov_%'").fetchone()[0]
    if not already:
        for i, (session, entry) in enumerate(zip(sessions, entries, strict=True)):
            _turn(archive, session, entry, f"prov_{i}")
    home.memory.path("memory").write_text(serialize(entries), encoding="utf-8")

    fresh = open_home(root)  # a new process's cache
    started = time.perf_counter()
    found = history.origins(fresh.memory, "memory", entries)
    cold = time.perf_counter() - started
    assert all(o.via == "archive" for o in found), found
    started = time.perf_counter()
    history.origins(fresh.memory, "memory", entries)
    warm = time.perf_counter() - started
    _turn(fresh.archive, sessions[0], entries[0], f"prov_new_{time.time_ns()}")
    started = time.perf_counter()
    again = history.origins(fresh.memory, "memory", entries)
    incremental = time.perf_counter() - started
    assert again[0].message_id > found[0].message_id

    started = time.perf_counter()
    decoded = sum(
        len(memory_calls(row[0]))
        for row in fresh.archive.conn().execute("SELECT tool_calls FROM messages WHERE tool_calls IS NOT NULL")
    )
    scan = time.perf_counter() - started
    report.figure(f"origins of {ENTRIES} entries, first look", cold * 1000, "ms")
    report.figure(f"origins of {ENTRIES} entries, file unchanged", warm * 1000, "ms")
    report.figure(f"origins of {ENTRIES} entries, after one new turn", incremental * 1000, "ms")
    report.figure(f"for scale: decode every tool call ({decoded:,} memory calls)", scan * 1000, "ms")
    fresh.close()
    home.close()
