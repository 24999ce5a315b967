"""Quitting the app never waits, on a blank terminal, for a worker's thread still busy."""

from __future__ import annotations

import threading

from textual import work
from textual.app import App

from workbench.exit_threads import run_until_quit


def test_the_app_ends_while_a_worker_thread_still_waits():
    """ctrl+q while a Run turn waited for its model left the terminal blank until the model answered:
    asyncio.run joined the thread workers' executor before App.run returned, so after_exit's "Waiting for
    the agent's turn…" line came only after that wait. run_until_quit returns with the thread still busy;
    the thread still ends its work."""
    release, finished, returned = threading.Event(), threading.Event(), threading.Event()

    class Busy(App):
        def on_mount(self) -> None:
            self.hold()

        @work(thread=True)
        def hold(self) -> None:
            self.call_from_thread(self.exit)
            release.wait()  # (a model call still waited for)
            finished.set()

    def run() -> None:
        run_until_quit(Busy(), headless=True)
        returned.set()

    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    try:
        assert returned.wait(30), "the app's end waited for the busy thread"
        assert not finished.is_set()
    finally:
        release.set()
    assert finished.wait(30)
    runner.join(30)
