"""A wait for a lock another process holds, cancelled before the lock is taken: nothing is written.

The TUI runs its saves inside ``lock_waits.cancellable`` (esc on a waiting save, its quit); a real
other process holds the lock here (``holding_flock``), as Hermes does for each of its writes.
"""

from __future__ import annotations

import threading
import time

import pytest

from engine import lock_waits
from engine.fileio import file_lock
from engine.tools import ToolContext
from tests.lock_support import holding_flock

AGENT = ToolContext(actor="agent", session_id="s1", message_id=3)


def in_thread(call):
    """Run ``call`` in a thread; returns the thread and what it returned or raised."""
    outcome: dict = {}

    def run():
        try:
            outcome["result"] = call()
        except Exception as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def wait_until_waiting(lock, thread) -> lock_waits.Wait:
    for _ in range(1_000):  # (bounded: at most 10 s)
        found = [wait for wait in lock_waits.under_way() if wait.lock == lock]
        if found:
            return found[0]
        assert thread.is_alive(), "the write ended without waiting"
        time.sleep(0.01)
    raise AssertionError(f"nothing waits for {lock}")


def journal_rows(home) -> list[tuple[str, str, str]]:
    conn = home.journal.connection()
    return [tuple(row) for row in conn.execute("SELECT subsystem, action, status FROM journal ORDER BY id")]


@pytest.mark.parametrize("how", ["event", "quit"])
def test_a_cancelled_wait_writes_nothing_and_leaves_no_pending_row(home, how):
    assert home.memory.add("memory", "First fact")["success"]
    path = home.memories_dir / "MEMORY.md"
    lock = path.with_name("MEMORY.md.lock")
    before, rows = path.read_bytes(), journal_rows(home)
    cancel = threading.Event()
    holder = holding_flock(lock)
    try:

        def add():
            with lock_waits.cancellable(cancel):
                return home.memory.add("memory", "Second fact")

        thread, outcome = in_thread(add)
        wait = wait_until_waiting(lock, thread)
        assert wait.cancellable
        if how == "event":
            cancel.set()  # the editor's esc
        else:
            assert lock_waits.cancel(lock_waits.under_way()) == [wait]  # the TUI's quit
        thread.join(timeout=10)
        assert not thread.is_alive()
        error = outcome.get("error")
        assert isinstance(error, lock_waits.WaitCancelled), outcome
        assert error.lock == lock and any(h.startswith(f"{holder.pid} (python") for h in error.holders)
        assert error.message == (
            f"Cancelled while waiting for {lock} (process {', '.join(error.holders)} held it): "
            "nothing was written, nothing changed."
        )
        assert path.read_bytes() == before
        assert journal_rows(home) == rows and home.journal.pending("memory") == []
        assert lock_waits.under_way() == []
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert home.memory.add("memory", "Second fact")["success"]  # free again: the same write goes through
    assert home.memory.entries("memory") == ["First fact", "Second fact"]


def test_a_set_cancel_never_stops_a_write_that_gets_its_lock(home, tmp_path):
    """Cancel applies only to a wait: a free lock is taken and the write runs to its end, and a lock
    waited for while this thread holds another is waited for without limit."""
    cancel = threading.Event()
    cancel.set()
    with lock_waits.cancellable(cancel):
        assert home.memory.add("memory", "Written all the same")["success"]
        with file_lock(tmp_path / "outer"), lock_waits.waiting(tmp_path / "inner.lock") as inner:
            assert not inner.cancellable  # (a blocking wait: the write holding "outer" goes on)
        with lock_waits.waiting(tmp_path / "first.lock") as first:
            assert first.cancellable
    with lock_waits.waiting(tmp_path / "outside.lock") as outside:
        assert not outside.cancellable  # no scope: the one blocking flock call, as before
    assert home.memory.entries("memory") == ["Written all the same"]


def test_a_cancelled_approval_stays_pending_with_its_row_abandoned(home):
    """An approval waits for the memory lock while it holds the queue's: a cancel there abandons its
    row (never left pending) and the proposal stays in the queue, the file untouched."""
    home.config_path.write_text("memory:\n  write_approval: true\n")
    home.reload_config()
    staged = home.memory.add("memory", "User likes tea", AGENT)
    assert staged["staged"], staged
    path = home.memories_dir / "MEMORY.md"
    lock = path.with_name("MEMORY.md.lock")
    cancel = threading.Event()
    holder = holding_flock(lock)
    try:

        def approve():
            with lock_waits.cancellable(cancel):
                return home.approvals.approve(staged["pending_id"])

        thread, outcome = in_thread(approve)
        wait_until_waiting(lock, thread)
        cancel.set()
        thread.join(timeout=10)
        assert isinstance(outcome.get("error"), lock_waits.WaitCancelled), outcome
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert not path.exists() or home.memory.entries("memory") == []
    assert [r.id for r in home.approvals.list()] == [staged["pending_id"]]
    assert home.journal.pending("approvals") == [] and home.journal.pending("memory") == []
    assert ("approvals", "approve", "abandoned") in journal_rows(home)
    assert home.approvals.approve(staged["pending_id"])["success"]
    assert home.memory.entries("memory") == ["User likes tea"]


def test_an_operation_of_several_locked_steps_is_not_stopped_after_its_first(tmp_path):
    """A cancel (the TUI's quit) could end a Curator pass between two archives, its error saying nothing
    was written (found in review): once an operation's first step took its lock, its waits block."""
    first, second = tmp_path / "first", tmp_path / "second"
    cancel = threading.Event()
    holder = holding_flock(second.with_name("second.lock"))
    steps: list[str] = []

    def operation():
        with lock_waits.cancellable(cancel), lock_waits.one_operation():
            with file_lock(first):
                steps.append("first")
            with file_lock(second):
                steps.append("second")

    try:
        thread, outcome = in_thread(operation)
        for _ in range(1_000):  # (bounded: at most 10 s) its first step done, its second waiting
            if steps:
                break
            time.sleep(0.01)
        cancel.set()
        time.sleep(0.3)
        assert thread.is_alive() and steps == ["first"]  # still waiting: it finishes what it began
        assert not [w for w in lock_waits.under_way() if w.cancellable]  # (one a quit could not cancel either)
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    thread.join(timeout=10)
    assert steps == ["first", "second"] and "error" not in outcome

    cancel.clear()
    holder = holding_flock(first.with_name("first.lock"))  # its first wait may still be cancelled
    try:
        thread, outcome = in_thread(operation)
        wait_until_waiting(first.with_name("first.lock"), thread)
        cancel.set()
        thread.join(timeout=10)
        assert isinstance(outcome.get("error"), lock_waits.WaitCancelled)
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)


@pytest.mark.parametrize("asked", [True, False])
def test_a_wait_of_an_agent_turn_is_cancellable_but_not_asked_about(home, asked):
    """A person's save is asked about at quit (``Wait.asked``); an agent's turn, which the TUI runs with
    ``asked=False``, is cancelled by its own stop without a question."""
    path = home.memories_dir / "MEMORY.md"
    lock = path.with_name("MEMORY.md.lock")
    stop = threading.Event()
    holder = holding_flock(lock)
    try:

        def add():
            with lock_waits.cancellable(stop, asked=asked):
                return home.memory.add("memory", "A fact")

        thread, outcome = in_thread(add)
        wait = wait_until_waiting(lock, thread)
        assert wait.cancellable and wait.asked is asked
        stop.set()  # the Run screen's esc
        thread.join(timeout=10)
        assert isinstance(outcome.get("error"), lock_waits.WaitCancelled), outcome
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert home.memory.entries("memory") == []


def test_each_thread_s_wait_state_starts_from_the_defaults_without_a_lookup_that_fails(tmp_path):
    """What a thread's waits go by (the locks it holds, its cancel events, its operation) is its own and
    starts empty in a new thread, even while another thread holds a lock inside a cancellable scope;
    the empty defaults are the state's class's, so a write's two waits on workbench.db read them
    without raising and catching an ``AttributeError`` each time (about 3 us a wait)."""
    state = type(lock_waits._thread)
    assert {"cancel", "asked", "held", "operation", "interrupted"} <= set(vars(state))
    seen: list[tuple] = []
    stop = threading.Event()
    with lock_waits.cancellable(stop), file_lock(tmp_path / "f"):
        assert lock_waits.cancel_events() == ()  # (it holds a lock: its waits are not cancelled)
        other = threading.Thread(
            target=lambda: seen.append((lock_waits.cancel_events(), lock_waits._bound(), lock_waits.interrupted()))
        )
        other.start()
        other.join()
    assert seen == [((), False, None)]
    with lock_waits.cancellable(stop):
        assert lock_waits.cancel_events() == (stop,)


def test_a_cancellable_wait_tries_again_after_a_millisecond_then_backs_off(tmp_path, monkeypatch):
    """A cancellable wait (the TUI's saves and agent turns) polls the lock: its first pause is a
    millisecond, not ``POLL_S``, so a lock held for one short write is taken soon after it is let go;
    each pause after is twice the one before, never past ``POLL_S`` (a cancel is seen within it).
    The pauses are read as asked for, not timed."""
    import types

    import engine.fileio as fileio

    pauses: list[float] = []

    def recorded(seconds: float) -> None:
        pauses.append(seconds)
        time.sleep(seconds)

    monkeypatch.setattr(fileio, "time", types.SimpleNamespace(sleep=recorded))
    lock = tmp_path / "MEMORY.md.lock"
    holder = holding_flock(lock)
    taken = threading.Event()

    def wait() -> None:
        with lock_waits.cancellable(threading.Event()), file_lock(tmp_path / "MEMORY.md"):
            taken.set()

    try:
        thread, outcome = in_thread(wait)
        wait_until_waiting(lock, thread)
        for _ in range(1_000):  # (bounded: at most 10 s) until the pauses have reached POLL_S
            if len(pauses) >= 8 or not thread.is_alive():
                break
            time.sleep(0.01)
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    thread.join(timeout=10)
    assert taken.is_set() and "error" not in outcome, outcome
    assert pauses[0] == 0.001
    assert all(later == min(2 * earlier, lock_waits.POLL_S) for earlier, later in zip(pauses, pauses[1:], strict=False))
    assert max(pauses) == lock_waits.POLL_S


def test_a_cli_run_in_this_process_leaves_no_listener_to_its_lock_waits(cli):
    """``main`` says a lasting wait on its stderr; once it returns, later waits in the same process
    (the next test's, through the ``cli`` fixture) are not said there again, once for each run."""
    before = list(lock_waits._listeners)
    assert cli("memory", "add", "--json", "Project uses uv").returncode == 0
    assert cli("memory", "show").returncode == 0
    assert lock_waits._listeners == before
