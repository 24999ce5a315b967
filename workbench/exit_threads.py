"""Running the app so that quitting never waits, on a blank terminal, for a thread still busy.

Textual runs thread workers in asyncio's default executor, which ``asyncio.run`` (``App.run``) joins
as it ends: a Run turn still waiting for its model at ctrl+q kept the terminal blank, with no word,
until the model answered (up to ``model.timeout``), and ``after_exit``'s "Waiting for the agent's
turn…" line came only after that wait. Here the loop ends without joining them; Python still joins
them as the process exits (``concurrent.futures``' own hook), after ``after_exit`` has said what it
waits for, so no session end or store is cut short.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from textual.app import App


class _LeavingExecutor(ThreadPoolExecutor):
    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        super().shutdown(wait=False, cancel_futures=cancel_futures)


def run_until_quit(app: App, **options: Any) -> Any:
    """``app.run(**options)``, except that its end does not wait for the threads of its workers."""
    with asyncio.Runner() as runner:
        runner.get_loop().set_default_executor(_LeavingExecutor())
        return runner.run(app.run_async(**options))
