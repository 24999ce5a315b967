"""The serial worker: jobs in order on one daemon thread, and nothing kept once they ran."""

from __future__ import annotations

import functools
import gc
import threading
import time
import weakref

from engine.worker import SerialWorker


class Payload:
    """Stands for what a review job's closure holds: the session, its home, the app."""


def test_an_idle_worker_keeps_nothing_of_its_last_job():
    worker = SerialWorker("test-worker")
    payload = Payload()
    kept = weakref.ref(payload)
    assert worker.submit(functools.partial(id, payload))
    del payload  # only the queued job holds it now
    deadline = time.monotonic() + 5
    while kept() is not None and time.monotonic() < deadline:  # the thread lets go once the job has run
        time.sleep(0.01)
        gc.collect()
    assert kept() is None and worker.pending() == 0  # waiting for the next job, it holds nothing of the last
    assert worker.close(5)


def test_a_closed_worker_stops_its_thread_and_counts_nothing_pending():
    worker = SerialWorker("test-worker")
    ran = []
    for n in range(3):
        assert worker.submit(functools.partial(ran.append, n))
    thread = worker._thread
    assert worker.close(5) and ran == [0, 1, 2]
    assert not thread.is_alive() and worker.pending() == 0  # gone when close returns: nothing outlives the owner
    assert worker.close(5) and worker.pending() == 0  # closing again changes nothing
    assert not worker.submit(functools.partial(ran.append, 3)) and ran == [0, 1, 2]


def test_closing_past_a_job_that_is_still_running_does_not_wait_for_it():
    worker = SerialWorker("test-worker")
    release = threading.Event()
    assert worker.submit(release.wait)
    started = time.monotonic()
    assert worker.close(0.05) is False  # the job still runs: close says so and returns
    assert time.monotonic() - started < 2 and worker._thread.is_alive()
    release.set()
    worker._thread.join(5)
    assert not worker._thread.is_alive() and worker.pending() == 0  # the stop queued behind it ended the thread
