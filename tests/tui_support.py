"""Helpers for the TUI tests: a deterministic app on a test home, and waiting for workers."""

from __future__ import annotations

import asyncio
import re
import threading
import time

from textual.worker import WorkerState

from workbench.app import WorkbenchApp

# Never-ending workers that waiting must skip.
BACKGROUND_GROUPS = {"watch", "demo", "upkeep"}
# How often a wait looks again: a worker's answer or a condition is seen within this much of it
# (Pilot's idle waits take steps as long, tests/conftest.py).
POLL = 0.005
# Text a fold parts where it folds by cells: half-width ﾃﾞ (a letter and its voiced mark, one to a reader),
# and a shown bidi override (``<U+202E>``), each run long enough to fall on a line's end at any width.
KANA = "ﾃﾞﾌﾟﾛｲ" * 9  # (what a memory entry may hold: its scan refuses a bidi override)
FOLDS = f"deploy {KANA} then " + "x\u202e" * 9 + " done"
_MARKS = "\uff9e\uff9f"  # the half-width voiced and semi-voiced marks
_HALF_SYMBOL = re.compile(r"^[0-9A-F+U]*>|<U?\+?[0-9A-F]{0,4}$")  # the start or the end of a parted <U+202E>


def make_app(home, tmp_path, app_class: type[WorkbenchApp] = WorkbenchApp, **options) -> WorkbenchApp:
    """The app on ``home`` with a fixed label and theme, settings in ``tmp_path``, no watcher."""
    options.setdefault("watch_files", False)
    options.setdefault("label", "demo-home")
    app = app_class(home, settings_file=tmp_path / "tui-settings.json", **options)
    app.animation_level = "none"
    return app


async def settle(pilot, timeout: float = 5.0) -> None:
    """Wait until no foreground worker runs and the message queues are drained."""
    app = pilot.app
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        await pilot.pause()
        busy = [
            w
            for w in app.workers
            if w.group not in BACKGROUND_GROUPS and w.state in (WorkerState.PENDING, WorkerState.RUNNING)
        ]
        if not busy:
            await pilot.pause()
            return
        await asyncio.sleep(POLL)
    raise AssertionError(f"workers still running after {timeout}s: {busy}")


def cursor_on(transcript, message_id) -> bool:
    """Whether the transcript's cursor rests on message ``message_id`` (for ``wait_for``)."""
    return transcript.current is not None and transcript.current.id == message_id


async def landed_on(pilot, message_id, what: str = "the message under the cursor"):
    """After a jump: wait for the Sessions screen, then for ``message_id`` under its transcript's
    cursor; returns the transcript."""
    from widgets.transcript import Transcript

    app = pilot.app
    await wait_for(pilot, lambda: app.current_mode == "sessions", what="the Sessions screen")
    transcript = app.screen.query_one(Transcript)
    await wait_for(pilot, lambda: cursor_on(transcript, message_id), what=what)
    return transcript


async def sessions_search_box(pilot):
    """The Sessions screen's search box, focused with ``/`` as a user would."""
    from textual.widgets import Input

    await pilot.press("2", "/")
    await settle(pilot)
    box = pilot.app.focused
    assert isinstance(box, Input)
    return box


async def wait_for(pilot, condition, timeout: float = 30.0, what: str = "condition") -> None:
    """Pause until ``condition()`` is true (checked on the UI loop). The limit only ends a failing wait, so it is
    generous: a clean-clone run at load 5-8 took longer than 5 s over a paste's few events."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; the screen showed:\n{drawn(pilot.app)}")
        await pilot.pause(POLL)


def drawn(app) -> str:
    """What the app's screen draws now, line by line, and the workers still going (for failures)."""
    lines = [strip.text.rstrip() for strip in app.screen._compositor.render_strips()]
    busy = [f"{worker.group}:{worker.state.name}" for worker in app.workers if not worker.is_finished]
    return "\n".join(lines + [f"workers running: {', '.join(busy) or 'none'}"])


def drawn_in(widget) -> list[str]:
    """The lines ``widget`` draws on its screen now (its region of the screen), as text."""
    region = widget.region
    strips = widget.screen._compositor.render_strips()
    return [strip.crop(region.x, region.right).text for strip in strips[region.y : region.bottom]]


def parted(lines: list[str]) -> list[str]:
    """The lines of ``lines`` (stripped of a frame's edges) that start or end inside ﾃﾞ or ``<U+202E>``."""
    inner = [line.strip(" │╭╮╰╯─▌▎┃▊▔▁") for line in lines]
    return [line for line in inner if line and (line[0] in _MARKS or _HALF_SYMBOL.search(line))]


class LateFirstAnswer:
    """Replaces ``name`` in ``module`` (a read a load worker makes) so that its first call
    answers last: it reads, then waits until ``release()``, and returns ``stale(result)``.
    The next calls answer at once; ``started`` is set once the first call has read."""

    def __init__(self, monkeypatch, module, name: str, stale=lambda result: result):
        self.started, self._go = threading.Event(), threading.Event()
        read = getattr(module, name)

        def late_first(*args, **kwargs):
            result = read(*args, **kwargs)
            if self.started.is_set():
                return result
            self.started.set()
            self._go.wait(10)
            return stale(result)

        monkeypatch.setattr(module, name, late_first)

    async def release(self, pilot, group: str) -> None:
        """Let the first call answer, and wait until every worker of ``group`` has ended."""
        self._go.set()
        await wait_for(pilot, lambda: not [w for w in pilot.app.workers if w.group == group], what=f"{group} done")
        await settle(pilot)


async def shown_footer_keys(pilot, settled: bool = True) -> list:
    """The footer's keys a user sees: those ``FittedFooter`` keeps once fitted (it hides, whole, a key or
    a group of keys that does not fit left of the palette's key)."""
    from textual.widgets._footer import FooterKey

    await (settle(pilot) if settled else pilot.pause())
    await pilot.pause()  # (the footer redraws its keys after the screen says they changed)
    await pilot.pause()  # (and fits them after that redraw)
    return [k for k in pilot.app.screen.query(FooterKey) if k.display and k.parent.display]


async def footer_keys(pilot, *keys: str) -> dict[str, bool]:
    """Of ``keys``, those the footer shows, each with whether it is enabled (a dimmed one does nothing)."""
    return {k.key: not k.has_class("-disabled") for k in await shown_footer_keys(pilot) if k.key in keys}


async def footer_labels(pilot, *keys: str, settled: bool = True) -> dict[str, str]:
    """Of ``keys``, those the footer shows, each with its label (what it will do to the selection);
    ``settled=False`` reads them while a worker is held."""
    return {k.key: k.description for k in await shown_footer_keys(pilot, settled) if k.key in keys}
