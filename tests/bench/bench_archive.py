"""Session archive benchmark: ingest, size, search latency against the raw FTS5 floor, CJK recall.

Workload and Hermes's figures: shared/reference/search-benchmark.md. The 1M-message
archive is built once under ./bench-data/archive-1m and reused (tests/bench/archive_data.py);
BENCH_ARCHIVE_SESSIONS=4000 runs the 200k-message variant instead. BENCH_ARCHIVE_QUICK=1
measures ingest alone (BENCH_ARCHIVE_TURNS turns, default 8,000) without building it.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import sqlite3
import time

from engine import FixedClock, open_home
from engine.archive import schema
from engine.archive.cjk import TABLE as BIGRAM_TABLE
from engine.archive.query import bigram_match, parse
from engine.archive.session_search import session_search_tool
from engine.db import connect
from engine.tools import ToolContext
from tests.bench.archive_data import DEFAULT_PATH, SESSIONS, Workload, build_bench_archive
from tests.bench.common import percentile, scratch_dir, timed

QUERIES = ["deploy", "database migration", '"error log"', "serv*", "session_search", "memory", "部署", "数据库迁移",
           "半夜", "デプロイ", "kubernetes rollout", "timeout", "skill_view", "zebra", "the", "config yaml", "数据",
           "日志", "rollback", "pytest"]
CJK_QUERIES = [q for q in QUERIES if parse(q).cjk]
RUNS = 5
INGEST_TURNS = 4000
QUICK_TURNS = 8000  # about 37,000 messages
DOCS_INGEST = ("2,254 msgs/s into an empty archive, 1,967 msgs/s into the 1M archive, "
               "turn write p99 20 ms, slowest 482 ms (load average 6.8)")


def _sizes(root) -> tuple[int, int]:
    state = sum(os.path.getsize(root / n) for n in ("state.db", "state.db-wal") if (root / n).exists())
    ours = sum(os.path.getsize(root / n) for n in ("workbench.db", "workbench.db-wal") if (root / n).exists())
    return state, ours


def _turns(count: int) -> list[list[dict]]:
    work = Workload(seed=99)
    call_id = itertools.count(10_000_000)
    return [work.turn(call_id) for _ in range(count)]


def _ingest(report, home_dir, turns, label: str) -> tuple[float, float]:
    """Per-turn transactions through the archive API: rate, time per message and per turn, worst write."""
    home = open_home(home_dir, clock=FixedClock(1796040000.0))
    archive = home.archive
    archive.create_session("ingest_probe")
    writes, total = [], sum(len(t) for t in turns)
    cpu = time.process_time()
    with timed() as elapsed:
        for turn in turns:
            start = time.perf_counter()
            archive.append_messages("ingest_probe", turn)
            writes.append(time.perf_counter() - start)
    cpu = time.process_time() - cpu
    home.close()
    rate = total / elapsed[0]
    report.figure(f"ingest {label}", rate, "msgs/s")
    report.figure(f"  per message {label}", elapsed[0] / total * 1e6, "us")
    report.figure(f"  per message CPU {label}", cpu / total * 1e6, "us")
    report.figure(f"  turn write p50 {label}", percentile(writes, 50) * 1000, "ms")
    report.figure(f"  turn write p99 {label}", percentile(writes, 99) * 1000, "ms")
    report.figure(f"  turn write p99.9 {label}", percentile(writes, 99.9) * 1000, "ms")
    report.figure(f"  slowest turn write {label}", max(writes) * 1000, "ms", "< 100")
    return rate, cpu / total * 1e6


def _raw_ingest(folder, turns, ddl: str) -> tuple[float, float]:
    """The floor for a layout: the same rows, one multi-row INSERT per turn, no per-message Python."""
    folder.mkdir(parents=True)
    conn = connect(folder / "state.db")
    conn.executescript(ddl)
    conn.execute("INSERT INTO sessions (id, source, started_at) VALUES ('floor', 'cli', 0)")
    columns = ("role", "content", "tool_calls", "tool_name", "tool_call_id", "timestamp")
    rows = [[("floor", m["role"], m.get("content"), json.dumps(m["tool_calls"], ensure_ascii=False)
              if m.get("tool_calls") else None, m.get("tool_name"), m.get("tool_call_id"), 1796040000.0) for m in t]
            for t in turns]
    placeholders = "(" + ", ".join("?" * (len(columns) + 1)) + ")"
    total = sum(len(r) for r in rows)
    cpu = time.process_time()
    with timed() as elapsed:
        for turn in rows:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(f"INSERT INTO messages (session_id, {', '.join(columns)}) VALUES "
                         f"{', '.join([placeholders] * len(turn))}", [v for row in turn for v in row])
            conn.execute("COMMIT")
    cpu = time.process_time() - cpu
    conn.close()
    return total / elapsed[0], cpu / total * 1e6


def ingest_figures(report, turns, big_root=None) -> None:
    """Ingest with Hermes's complete layout next to its raw SQLite floor and the figures docs had before."""
    total = sum(len(t) for t in turns)
    report.note(f"ingest workload: {len(turns):,} turns, {total:,} messages ({total / len(turns):.1f} per turn)")
    with scratch_dir("archive") as scratch:
        ours, ours_cpu = _ingest(report, scratch / "empty", turns, "into an empty archive")
        floor, floor_cpu = _raw_ingest(scratch / "floor", turns, schema.HERMES_DDL)
        bare, bare_cpu = _raw_ingest(scratch / "bare", turns, schema.TABLES_SQL + schema.FTS_SQL)
        report.figure("raw SQLite floor, complete layout", floor, "msgs/s")
        report.figure("  per message CPU, floor", floor_cpu, "us")
        report.ratio("ingest / floor (complete layout)", ours, floor, ">= 0.9")
        report.ratio("ingest / floor in CPU time", floor_cpu, ours_cpu, ">= 0.9")
        report.figure("floor without the trigram table", bare, "msgs/s")
        report.figure("  trigram table's cost per message (CPU)", floor_cpu - bare_cpu, "us")
        report.note(f"before (no trigram table, docs/archive.md): {DOCS_INGEST}")
        if big_root is not None:
            big = scratch / "big"
            big.mkdir()
            for name in ("state.db", "workbench.db"):
                shutil.copy(big_root / name, big / name)
            _ingest(report, big, turns, "into the bench archive")
    report.note(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


def _floor(home, query: str) -> tuple[sqlite3.Connection, str, str]:
    """The raw FTS5 MATCH ... ORDER BY rank LIMIT 20 on the index this query is routed to."""
    parsed = parse(query)
    if parsed.cjk:
        conn = home.journal.connection()
        return conn, f"SELECT rowid FROM {BIGRAM_TABLE} WHERE {BIGRAM_TABLE} MATCH ? ORDER BY rank LIMIT 20", \
            bigram_match([t.lower() for t in parsed.terms])
    return home.archive.conn(), "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rank LIMIT 20", \
        parsed.fts()


def _substring_scan(conn, needles: list[str]) -> dict[str, set[int]]:
    """One streamed pass over every visible message (never the whole archive in memory)."""
    found: dict[str, set[int]] = {n: set() for n in needles}
    cursor = conn.execute("SELECT id, COALESCE(content,'') || ' ' || COALESCE(tool_name,'') || ' ' || "
                          "COALESCE(tool_calls,'') FROM messages WHERE active = 1 OR compacted = 1")
    for mid, text in cursor:
        for needle in needles:
            if needle in text:
                found[needle].add(mid)
    return found


def run(report) -> None:
    if os.environ.get("BENCH_ARCHIVE_QUICK"):  # ingest only, no 1M archive to build (a few minutes)
        ingest_figures(report, _turns(int(os.environ.get("BENCH_ARCHIVE_TURNS", QUICK_TURNS))))
        report.memory()
        return
    sessions = int(os.environ.get("BENCH_ARCHIVE_SESSIONS", SESSIONS))  # e.g. 4000: the 200k-message variant
    root = build_bench_archive(DEFAULT_PATH if sessions == SESSIONS else DEFAULT_PATH.with_name(f"archive-{sessions}s"),
                               sessions=sessions)
    state_bytes, our_bytes = _sizes(root)
    home = open_home(root)
    archive = home.archive
    messages = archive.conn().execute("SELECT count(*) FROM messages").fetchone()[0]
    report.figure("sessions", archive.session_count())
    report.figure("messages", messages)
    report.figure("state.db bytes per message", state_bytes / messages, "B", "<= 1,000 (reference goal)")
    report.figure("CJK bigram index (workbench.db) bytes per message", our_bytes / messages, "B")

    # -- search latency vs the raw MATCH floor --------------------------------------------------
    ours: list[float] = []
    floor: list[float] = []
    ours_cpu: list[float] = []
    floor_cpu: list[float] = []
    for query in QUERIES:
        archive.search(query)  # warm caches once, untimed
        conn, sql, expr = _floor(home, query)
        conn.execute(sql, (expr,)).fetchall()
        mine, raw = [], []
        for _ in range(RUNS):
            cpu = time.process_time()
            with timed() as t:
                hits = archive.search(query, limit=20)
            mine.append(t[0])
            ours_cpu.append(time.process_time() - cpu)
            cpu = time.process_time()
            with timed() as t:
                conn.execute(sql, (expr,)).fetchall()
            raw.append(t[0])
            floor_cpu.append(time.process_time() - cpu)
        ours += mine
        floor += raw
        report.note(f"{query:<22} ours p50 {percentile(mine, 50) * 1000:8.2f} ms   floor p50 "
                    f"{percentile(raw, 50) * 1000:8.2f} ms   {len(hits):>2} lineages   plan {hits[0].plan if hits else '-'}")
    p50, p95 = report.latencies("search (20 queries x 5, limit 20)", ours, "p50 < 30 ms, p95 < 150 ms")
    f50, f95 = report.latencies("raw FTS5 MATCH ORDER BY rank LIMIT 20 (floor)", floor)
    report.ratio("search / floor at p50", p50, f50, "<= 2")
    report.ratio("search / floor at p95", p95, f95, "<= 2")
    # CPU time of this process: the same comparison, unaffected by other load on the machine
    c50, c95 = report.latencies("search CPU time", ours_cpu)
    g50, g95 = report.latencies("floor CPU time", floor_cpu)
    report.ratio("search / floor CPU at p50", c50, g50)
    report.ratio("search / floor CPU at p95", c95, g95)
    report.note(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")

    tool_times = []
    for query in ["deploy", "数据库迁移", "kubernetes rollout", "zebra", "the"]:
        for _ in range(3):
            with timed() as t:
                result = session_search_tool(home, {"query": query, "limit": 3}, ToolContext(session_id="bench_00000"))
            tool_times.append(t[0])
            assert result["success"], result
    report.latencies("session_search tool (5 queries x 3)", tool_times)

    # -- CJK recall against a substring scan --------------------------------------------------
    with timed() as t:
        expected = _substring_scan(archive.conn(), CJK_QUERIES)
    report.note(f"substring scan of {messages:,} messages for {len(CJK_QUERIES)} CJK queries took {t[0]:.1f} s")
    found_total = expected_total = 0
    for query in CJK_QUERIES:
        got = set(archive.iter_matches(query))
        hit = len(got & expected[query])
        found_total += hit
        expected_total += len(expected[query])
        extra = len(got - expected[query])
        report.note(f"{query:<8} recall {hit}/{len(expected[query])}  false hits {extra}")
    report.figure("CJK recall vs substring scan", 100.0 * found_total / max(1, expected_total), "%", "100")
    home.close()

    # -- ingest ---------------------------------------------------------------------------
    ingest_figures(report, _turns(INGEST_TURNS), root)
    report.memory()
