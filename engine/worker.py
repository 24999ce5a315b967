"""One daemon thread running jobs strictly in the order they were queued.

The runner uses one for background reviews and one for memory-provider hooks: the turn
that queues a job never waits for it, jobs never overlap or reorder, and ``drain``
lets the CLI, tests and shutdown wait (with a bound) for everything queued so far.
A job that raises is logged; the next one still runs.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)


class SerialWorker:
    def __init__(self, name: str):
        self.name = name
        self._jobs: queue.Queue[Callable[[], None] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False
        self.busy_since: float | None = None  # monotonic start of the job running now

    def submit(self, job: Callable[[], None]) -> bool:
        """Queue ``job``; False (not queued) once the worker is closed."""
        with self._lock:
            if self._closed:
                return False
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
            self._jobs.put(job)
            return True

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:  # close()'s stop: counted as done, so pending() ends at 0
                self._jobs.task_done()
                return
            self.busy_since = time.monotonic()
            try:
                job()
            except Exception:
                log.exception("%s: a background job failed", self.name)
            finally:
                self.busy_since = None
                self._jobs.task_done()
            del job  # an idle thread keeps nothing of its last job (its closure holds a whole session)

    def pending(self) -> int:
        """Jobs queued or running."""
        return self._jobs.unfinished_tasks

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until every job queued so far has run; False when ``timeout`` passed first."""
        done = threading.Event()
        if not self.submit(done.set):
            return self.pending() == 0
        return done.wait(timeout)

    def close(self, timeout: float | None = None) -> bool:
        """Stop taking jobs, let the queued ones run (bounded by ``timeout``), then stop the thread.

        True when every job ran, and then the thread is gone on return, so a closed worker
        never outlives its owner; a job still running after ``timeout`` is left to finish on
        its own. The stop is queued under the lock that ``submit`` takes, so no job can slip
        in behind it.
        """
        with self._lock:
            thread = self._thread
            if not self._closed and thread is not None:  # one stop only: a second would stay pending
                self._jobs.put(None)
            self._closed = True
        if thread is None:
            return True
        if thread is threading.current_thread():  # a job closing its own worker: it is still running
            return False
        thread.join(timeout)
        return not thread.is_alive()
