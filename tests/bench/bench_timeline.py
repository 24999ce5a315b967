"""The timeline on 100,000 journal rows: engine pages, and the Timeline screen opening and paging.

The journal is written straight into a scratch ``workbench.db`` (memory writes by the
agent, reviews in groups of three, user edits, skill changes and approvals), which is
what a long-lived home accumulates. Figures: the first page and a filtered page from the
engine; the TUI from pressing 6 to the first rows shown; the cursor running to the end
of the first page until the next page is loaded.
"""

from __future__ import annotations

import asyncio
import json
import time

from engine import open_home
from tests.bench.common import Report, scratch_dir

ROWS = 100_000
SIZE = (120, 40)
REPEATS = 5


def _fill(home) -> None:
    conn = home.journal.connection()
    rows = []
    base = 1_780_000_000.0
    for i in range(ROWS):
        kind = i % 10
        if kind < 3:
            row = (
                "review",
                "memory",
                "add",
                "memory",
                None,
                f"fact {i}: the build runs on runner {i % 7}",
                f"s{i // 30}",
                i // 3,
                json.dumps({"origin": "background_review"}),
            )
        elif kind < 7:
            row = ("agent", "memory", "add", "user", None, f"preference {i}", f"s{i // 30}", i, None)
        elif kind == 7:
            row = ("user", "memory", "replace", "memory", f"old {i}", f"new {i}", None, None, None)
        elif kind == 8:
            row = (
                "agent",
                "skills",
                "patch",
                f"skill-{i % 50}",
                None,
                None,
                f"s{i // 30}",
                i,
                json.dumps({"ledger_id": f"l{i}"}),
            )
        else:
            row = (
                "user",
                "approvals",
                "approve",
                f"{i:08x}"[-8:],
                f"patch skill-{i % 50}",
                None,
                None,
                None,
                json.dumps({"subsystem": "skills", "summary": f"patch skill-{i % 50}"}),
            )
        rows.append((base + i, *row))
    with conn:
        conn.executemany(
            "INSERT INTO journal (at, actor, subsystem, action, target, before, after, session_id, "
            "message_id, detail, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'done')",
            rows,
        )


def _times(call) -> list[float]:
    samples = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return samples


def run(report: Report) -> None:
    from engine.timeline import Timeline
    from widgets.timeline_list import TimelineList
    from workbench.app import WorkbenchApp
    from workbench.screens.timeline import PAGE

    with scratch_dir("timeline") as scratch:
        home = open_home(scratch / "home")
        started = time.perf_counter()
        _fill(home)
        report.note(f"{ROWS:,} journal rows written in {time.perf_counter() - started:.1f} s")
        timeline = Timeline(home)
        report.latencies("engine: first page (200 rows, group titles aside)", _times(lambda: timeline.page()))
        report.latencies("engine: actor:user page", _times(lambda: timeline.page(actor="user")))
        report.latencies("engine: text search 'runner 3' page", _times(lambda: timeline.page(text="runner 3")))
        # words only summaries show ("pinned ... outside the workbench"), and a text no row shows: every row read
        report.latencies("engine: text search 'pinned' (no row shows it)", _times(lambda: timeline.page(text="pinned")))
        report.latencies("engine: text search 'zzz' (no row holds it)", _times(lambda: timeline.page(text="zzz")))
        # wording every skill row shows, and a name none holds: no skill row's summary is made to find that out
        report.latencies('engine: text search "skill \'zzz" (no row)', _times(lambda: timeline.page(text="skill 'zzz")))
        report.latencies("engine: a page 99,000 rows down", _times(lambda: timeline.page(before_id=1_000)))

        opened, paged = [], []

        async def measure() -> None:
            app = WorkbenchApp(home, watch_files=False, settings_file=scratch / "settings.json")
            app.animation_level = "none"
            async with app.run_test(size=SIZE) as pilot:
                for _ in range(REPEATS):
                    await pilot.press("1")
                    start = time.perf_counter()
                    await pilot.press("6")
                    while not (
                        app.current_mode == "timeline"
                        and app.screen.query(TimelineList)
                        and app.screen.query_one(TimelineList).row_count
                    ):
                        await asyncio.sleep(0.001)
                    opened.append(time.perf_counter() - start)
                    screen = app.screen
                    table = screen.query_one(TimelineList)
                    loaded = len(screen.rows)
                    start = time.perf_counter()
                    table.move_cursor(row=table.row_count - 1)
                    while len(screen.rows) < loaded + PAGE:
                        await asyncio.sleep(0.001)
                    paged.append(time.perf_counter() - start)
                    screen.rows = []  # the next repeat opens from scratch
                    await app.switch_mode("memory")
                    app.remove_mode("timeline")
                    app.add_mode("timeline", type(screen))

        asyncio.run(measure())
        report.latencies("TUI: key 6 to first timeline rows shown", opened, target="< 1,000 ms")
        report.latencies("TUI: cursor at the end to next page shown", paged)
        home.close()
