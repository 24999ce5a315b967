"""The TUI on the bench archive (1,000,000 messages; BENCH_ARCHIVE_SESSIONS=4000: 200k): launch, live update, memory.

One function per figure, each taking the report and the bench home folder:
launch to the first screen being interactive (in-process, and a cold process as
``textual serve`` or a terminal would start it), and an engine write on another thread
to the Memory screen showing it. Peak memory is this process's (the archive is built
in a child process so its cost is not counted here).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from engine import open_home
from engine.tools import ToolContext
from tests.bench.bench_archive import QUERIES
from tests.bench.common import Report, scratch_dir
from tests.bench.workload import SESSIONS, build_bench_archive, default_path

LAUNCHES = 5
WRITES = 50
SIZE = (120, 40)


def _bench_home() -> Path:
    """The shared 1M-message home, built in a child process if it is missing."""
    sessions = int(os.environ.get("BENCH_ARCHIVE_SESSIONS", SESSIONS))
    path = default_path(sessions)
    if not (path / "build.json").exists():
        child = multiprocessing.get_context("spawn").Process(
            target=build_bench_archive, args=(path,), kwargs={"sessions": sessions}
        )
        child.start()
        child.join()
        if child.exitcode != 0:
            raise SystemExit("building the benchmark archive failed")
    return build_bench_archive(path, sessions=sessions, progress=False)


def _app(home, settings: Path):
    from workbench.app import WorkbenchApp

    app = WorkbenchApp(home, watch_files=False, settings_file=settings)
    app.animation_level = "none"
    return app


async def _until(condition, timeout: float = 30.0) -> None:
    deadline = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("the screen never showed the expected state")
        await asyncio.sleep(0.001)


def figure_launch_to_interactive(report: Report, root: Path) -> None:
    """From constructing the app to the Memory screen showing its entries (in-process)."""
    from workbench.screens.memory import MemoryScreen

    samples = []
    with scratch_dir("tui") as scratch:
        for _ in range(LAUNCHES):
            home = open_home(root)

            async def launch() -> float:
                started = time.perf_counter()
                app = _app(home, scratch / "settings.json")
                async with app.run_test(size=SIZE):
                    await _until(lambda: isinstance(app.screen, MemoryScreen) and app.screen.view is not None)
                    return time.perf_counter() - started

            samples.append(asyncio.run(launch()))
            home.close()
    report.latencies("launch to Memory screen interactive (in-process)", samples, target="< 1,000 ms")


def figure_cold_process_launch(report: Report, root: Path) -> None:
    """A fresh ``python -m workbench`` (imports included) until its first frame shows the live column."""
    with scratch_dir("tui-cold") as scratch:
        env = {
            **os.environ,
            "TEXTUAL_DRIVER": "textual.drivers.web_driver:WebDriver",
            "COLUMNS": "120",
            "ROWS": "40",
            "WORKBENCH_CONFIG_DIR": str(scratch),
        }
        started = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-m", "workbench", "--home", str(root)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        seen = bytearray()
        while b"(next session)" not in seen and (chunk := process.stdout.read1(65536)):
            seen.extend(chunk)
        elapsed = time.perf_counter() - started
        process.terminate()
        process.communicate(timeout=30)
    report.figure("cold process launch to first Memory frame", elapsed * 1000, "ms", target="< 2,000 ms")


def figure_write_to_memory_screen(report: Report, root: Path) -> None:
    """An engine write on another thread until the live column lists the new entry."""
    from widgets.entry_list import EntryList

    home = open_home(root)
    memory_file = home.memories_dir / "MEMORY.md"
    original = memory_file.read_bytes() if memory_file.exists() else None
    ctx = ToolContext(actor="agent", session_id="bench-tui")
    samples = []

    async def measure() -> None:
        with scratch_dir("tui-write") as scratch:
            app = _app(home, scratch / "settings.json")
            async with app.run_test(size=SIZE):
                await _until(lambda: app.screen.view is not None)
                live = app.screen.query_one("#live-list", EntryList)
                for i in range(WRITES):
                    text = f"bench fact {i}: the staging cluster restarts at 0{i % 10}:00"
                    done = threading.Event()
                    stamp: list[float] = []

                    def write() -> None:
                        stamp.append(time.perf_counter())
                        assert home.memory.add("memory", text, ctx)["success"]
                        done.set()

                    threading.Thread(target=write).start()
                    await _until(lambda: any(row.text == text for row in live.rows))
                    samples.append(time.perf_counter() - stamp[0])
                    await _until(done.is_set)
                    home.memory.remove("memory", text, ctx)
                    await _until(lambda: all(row.text != text for row in live.rows))

    try:
        asyncio.run(measure())
    finally:
        if original is None:
            memory_file.unlink(missing_ok=True)
        else:
            memory_file.write_bytes(original)
        home.close()
    report.latencies("engine write to Memory screen showing it", samples, target="< 250 ms")


SEARCH_QUERIES = QUERIES  # the 20 spec queries, typed from their first letter


def figure_search_keystroke_to_results(report: Report, root: Path) -> None:
    """Sessions screen: each keystroke typed into the search box until a frame shows that text's hits.

    The clock stops at the first frame the screen renders after ``SearchResults.show``
    ran for the text in the box (the headless driver renders every frame and only skips
    writing it to a terminal), not when the widget's attributes change, and not early for
    a key that leaves the stripped text as it was (a space): the screen searches again for
    it and the sample waits for that search's results to be drawn.
    """
    from widgets.lineage_tree import LineageTree
    from widgets.search_results import SearchResults
    from workbench.screens.sessions import SEARCH_LIMIT

    home = open_home(root)
    samples = []

    async def measure() -> None:
        with scratch_dir("tui-search") as scratch:
            app = _app(home, scratch / "settings.json")
            async with app.run_test(size=SIZE) as pilot:
                await _until(lambda: app.screen.view is not None)
                await pilot.press("2")
                await _until(
                    lambda: (
                        app.current_mode == "sessions"
                        and app.screen.is_mounted
                        and any(tree.root_count for tree in app.screen.query(LineageTree))
                    )
                )
                results = app.screen.query_one(SearchResults)
                box = app.screen.query_one("#sessions-search")
                shown: list[tuple[float, str]] = []  # when show() ran, for which text
                frames: list[float] = []  # when a frame of the screen was rendered
                show, display = results.show, app._display

                def timed_show(query, hits, note=None) -> None:
                    show(query, hits, note)
                    shown.append((time.perf_counter(), query))

                def timed_display(screen, renderable) -> None:
                    display(screen, renderable)
                    frames.append(time.perf_counter())

                results.show, app._display = timed_show, timed_display

                def drawn(count: int, wanted: str) -> float | None:
                    """The first frame after a show() of ``wanted`` that came after the key."""
                    hit = next((t for t, q in shown[count:] if q == wanted), None)
                    return next((f for f in frames if f >= hit), None) if hit is not None else None

                for query in SEARCH_QUERIES:
                    box.value = ""
                    box.focus()
                    await pilot.pause()
                    for typed in range(1, len(query) + 1):
                        wanted, count = query[:typed].strip(), len(shown)
                        started = time.perf_counter()
                        # Pilot.press also waits for the app to go idle; time the frame, not that wait.
                        press = asyncio.ensure_future(pilot.press(query[typed - 1]))
                        await _until(lambda: drawn(count, wanted) is not None)  # noqa: B023 (called at once)
                        samples.append(drawn(count, wanted) - started)
                        await press
                        del frames[:-1]

    def engine_only() -> list[float]:
        """The same searches without the UI, to show what the screen adds."""
        timings = []
        for query in SEARCH_QUERIES:
            for typed in range(1, len(query) + 1):
                started = time.perf_counter()
                home.archive.search(query[:typed].strip(), limit=SEARCH_LIMIT, prefix=True)
                timings.append(time.perf_counter() - started)
        return timings

    try:
        engine_only()  # warm the page cache so both measurements start alike
        asyncio.run(measure())
        engine = engine_only()
    finally:
        home.close()
    report.note(f"search queries typed one key at a time: {', '.join(SEARCH_QUERIES)}")
    ui_p50, _ = report.latencies("keystroke in search box to results shown", samples, target="p95 < 50 ms")
    engine_p50, _ = report.latencies("the same searches, engine only", engine, target="p95 < 30 ms")
    report.figure("search: what the screen adds at p50", ui_p50 - engine_p50, "ms")


def run(report: Report) -> None:
    root = _bench_home()
    report.note(f"home: {root}; terminal {SIZE[0]}x{SIZE[1]}")
    figure_launch_to_interactive(report, root)
    figure_cold_process_launch(report, root)
    figure_write_to_memory_screen(report, root)
    figure_search_keystroke_to_results(report, root)
    report.memory()
