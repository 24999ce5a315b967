"""The real TUI in a real terminal (a pty): when the terminal goes away, the app quits.

Under ``make run`` the session leader is make, which keeps SIGHUP to itself, so closing
the window (or killing tmux) used to leave the app running unseen, Textual's input
thread spinning on end-of-file. The parent here plays make's part: it leads the pty's
session, catches SIGHUP and waits for its child, the workbench.
"""

from __future__ import annotations

import errno
import os
import pty
import select
import sys
import threading
import time
from contextlib import closing

import pytest
from textual.drivers._writer_thread import MAX_QUEUED_WRITES, WriterThread

from engine import open_home

PARENT = """
import signal, subprocess, sys
signal.signal(signal.SIGHUP, lambda *_: None)  # as make does: the hang-up stops here
child = subprocess.Popen([sys.executable, "-m", "workbench", "--home", sys.argv[1]])
open(sys.argv[2], "w").write(str(child.pid))
sys.exit(child.wait())
"""


def _read_until(fd: int, wanted: bytes, seconds: float) -> bytes:
    seen, deadline = bytearray(), time.monotonic() + seconds
    while wanted not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:
                break
    return bytes(seen)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie has exited; only its parent has not reaped it yet
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_the_app_quits_when_its_terminal_hangs_up(tmp_path):
    open_home(tmp_path / "home").close()
    pid_file = tmp_path / "child.pid"
    env = {**os.environ, "WORKBENCH_CONFIG_DIR": str(tmp_path / "config"), "COLUMNS": "80", "LINES": "24"}
    parent, master = pty.fork()
    if parent == 0:  # the child: session leader of the pty, like make under tmux
        os.execve(sys.executable, [sys.executable, "-c", PARENT, str(tmp_path / "home"), str(pid_file)], env)
    try:
        drawn = _read_until(master, b"Memory", 60)
        assert b"Memory" in drawn, drawn[-500:]
        child = int(pid_file.read_text())
        os.close(master)  # the window closes
        deadline = time.monotonic() + 30
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(child), "the workbench kept running after its terminal went away"
    finally:
        for pid in (parent, *([int(pid_file.read_text())] if pid_file.exists() else [])):
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        os.waitpid(parent, 0)


def test_a_session_typed_in_ends_when_the_terminal_hangs_up(tmp_path):
    """SIGHUP (a closed window, a killed tmux) ended the process at once by default, so the session
    being typed in stayed open in state.db (no ended_at), never prunable; it now ends as on ctrl+q."""
    home = tmp_path / "home"
    open_home(home).close()
    env = {**os.environ, "WORKBENCH_CONFIG_DIR": str(tmp_path / "config"), "COLUMNS": "100", "LINES": "30"}
    child, master = pty.fork()
    if child == 0:  # the workbench leads the pty's session: the hang-up is its own
        os.execve(sys.executable, [sys.executable, "-m", "workbench", "--home", str(home)], env)
    try:
        assert b"Memory" in _read_until(master, b"Memory", 60)
        os.write(master, b"5")
        assert b"enter sends" in _read_until(master, b"enter sends", 60)  # the Run screen's box, focused
        time.sleep(1)
        os.write(master, b"hello there\r")
        deadline = time.monotonic() + 120
        sessions: list = []
        while time.monotonic() < deadline and not sessions:
            _read_until(master, b"\0", 0.5)  # keep the pty drained while the turn runs
            if (home / "state.db").exists():
                with closing(open_home(home, read_only=True)) as look:  # a fresh look each time
                    sessions = look.archive.list_sessions()
        [session] = sessions
        state = open_home(home, read_only=True)
        while time.monotonic() < deadline and not any(
            m.role == "assistant" for m in state.archive.messages(session.id)
        ):
            _read_until(master, b"\0", 0.5)  # the turn's reply: a running turn is cancelled, not ended
        time.sleep(0.5)
        os.close(master)  # the window closes: SIGHUP
        _, status = os.waitpid(child, 0)
        child = 0
        assert os.WIFEXITED(status), "killed by the hang-up instead of quitting"
        ended = state.archive.get_session(session.id)
        assert ended.ended_at is not None and ended.end_reason == "cli_close"
        state.close()
    finally:
        if child:
            os.kill(child, 9)
            os.waitpid(child, 0)


def test_a_message_sent_with_ctrl_q_quits_at_once_and_ends_the_session(tmp_path):
    """A trial: enter and ctrl+q typed together in a session already talked in left a blank terminal
    for a minute, then the session open in state.db: Textual dropped the turn's worker at the quit
    before it ran, and the close waited for that worker, which would never say it was done, for its
    60 s bound, then gave up ending the session. The close now waits only for the worker before it."""
    home = tmp_path / "home"
    open_home(home).close()
    env = {**os.environ, "WORKBENCH_CONFIG_DIR": str(tmp_path / "config"), "COLUMNS": "100", "LINES": "30"}
    child, master = pty.fork()
    if child == 0:
        os.execve(sys.executable, [sys.executable, "-m", "workbench", "--home", str(home)], env)
    try:
        assert b"Memory" in _read_until(master, b"Memory", 60)
        os.write(master, b"5")
        assert b"enter sends" in _read_until(master, b"enter sends", 60)
        time.sleep(1)
        os.write(master, b"hello there\r")
        assert b"Hello" in _read_until(master, b"Hello", 60)  # the first turn's reply
        time.sleep(1)
        os.write(master, b"remember that I drink decaf\r\x11")  # enter, then ctrl+q at once
        deadline = time.monotonic() + 30  # (the bug waited 60 s)
        while _alive(child) and time.monotonic() < deadline:
            _read_until(master, b"\0", 0.2)
        assert not _alive(child), "the quit still waits for a turn that never ran"
        _, status = os.waitpid(child, 0)
        child = 0
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        with closing(open_home(home, read_only=True)) as look:
            [session] = look.archive.list_sessions()
            assert session.end_reason == "cli_close" and session.ended_at is not None
    finally:
        if child:
            os.kill(child, 9)
            os.waitpid(child, 0)


def test_quitting_the_demo_leaves_no_wal_behind(tmp_path):
    """A trial: after ctrl+q in `workbench demo` megabytes of workbench.db-wal and state.db-wal stayed
    beside the databases: the process ended with its connections open (state.db's checkpoint thread's, once
    the demo had written 40 times), and SQLite copies a -wal into its database and deletes it only as the
    last connection to it closes. The demo's home is closed at the quit now (`workbench`'s as every command's)."""
    home = tmp_path / "home"
    env = {**os.environ, "WORKBENCH_CONFIG_DIR": str(tmp_path / "config"), "COLUMNS": "100", "LINES": "30"}
    child, master = pty.fork()
    if child == 0:
        os.execve(sys.executable, [sys.executable, "-m", "workbench", "demo", "--speed", "3", "--home", str(home)], env)
    try:
        assert b"Memory" in _read_until(master, b"Memory", 60)
        deadline, stored = time.monotonic() + 120, 0
        while stored <= 40 and time.monotonic() < deadline:  # (40 writes start state.db's checkpoint thread)
            _read_until(master, b"\0", 0.5)  # (the pty drained as the demo plays)
            with closing(open_home(home, read_only=True)) as look:
                stored = sum(session.message_count for session in look.archive.list_sessions())
        assert stored > 40 and (home / "state.db-wal").stat().st_size and (home / "workbench.db-wal").stat().st_size
        os.write(master, b"\x11")  # ctrl+q
        deadline = time.monotonic() + 60
        while _alive(child) and time.monotonic() < deadline:
            _read_until(master, b"\0", 0.2)
        _, status = os.waitpid(child, 0)
        child = 0
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        assert sorted(path.name for path in home.glob("*.db*")) == ["state.db", "state.db.lock", "workbench.db"]
    finally:
        if child:
            os.kill(child, 9)
            os.waitpid(child, 0)


def test_what_is_drawn_after_the_terminal_went_away_never_holds_the_quit():
    """Textual's output thread ended at the first write to a closed terminal, its queue (30 writes)
    filled with the frames drawn after, and the quit's ``stop`` waited for ever: a workbench whose tmux
    was killed while it was busy lived on. Now every write and the stop return."""
    import workbench.app  # noqa: F401  (importing the app applies widgets.textual_fixes)

    master, slave = os.openpty()
    writer = WriterThread(open(slave, "w", encoding="utf-8"))
    writer.start()
    os.close(master)  # the window closes
    done = threading.Event()

    def frames() -> None:
        for _ in range(MAX_QUEUED_WRITES * 3):
            writer.write("frame " * 1000)
        writer.stop()
        done.set()

    threading.Thread(target=frames, daemon=True).start()
    assert done.wait(30), "the writes after the hang-up, or the stop, waited for ever"
    assert not writer.is_alive()


class FailingOnce:
    """A terminal whose first write fails with ``code``; it keeps what it is given after. Its descriptor is a
    pipe's, made non-blocking, as another program sharing a terminal may leave it."""

    def __init__(self, code: int):
        self.code, self.failed, self.written = code, False, []
        self.read_end, self.fd = os.pipe()
        os.set_blocking(self.fd, False)

    def write(self, text: str) -> None:
        if not self.failed:
            self.failed = True
            raise OSError(self.code, os.strerror(self.code))
        self.written.append(text)

    def flush(self) -> None:
        pass

    def fileno(self) -> int:
        return self.fd

    def close(self) -> None:
        os.close(self.read_end)
        os.close(self.fd)


def _frames_then_stop(writer: WriterThread) -> bool:
    """More frames than the writer's queue holds, then its stop: whether they all returned (never waited for ever)."""
    done = threading.Event()

    def frames() -> None:
        for n in range(MAX_QUEUED_WRITES * 3):
            writer.write(f"frame {n}")
        writer.stop()
        done.set()

    threading.Thread(target=frames, daemon=True).start()
    return done.wait(30)


@pytest.mark.parametrize("code", [errno.EIO, errno.EPIPE, errno.EBADF, errno.ENXIO], ids=errno.errorcode.get)
def test_a_terminal_gone_is_written_to_no_more_and_never_holds_the_quit(code):
    import workbench.app  # noqa: F401  (importing the app applies widgets.textual_fixes)

    terminal = FailingOnce(code)
    writer = WriterThread(terminal)
    writer.start()
    assert _frames_then_stop(writer), "the writes after the failure, or the stop, waited for ever"
    assert terminal.written == [] and not writer.is_alive()
    terminal.close()


@pytest.mark.parametrize("code", [errno.EAGAIN, errno.EINTR], ids=errno.errorcode.get)
def test_a_write_that_would_block_or_was_interrupted_is_not_the_end_of_the_screen(code):
    """After any OSError the output thread wrote nothing more, so a terminal another program had made
    non-blocking (EAGAIN) froze the screen while the app ran on. The frames after it are written, and the
    terminal is made blocking again (a write then waits for room)."""
    import workbench.app  # noqa: F401

    terminal = FailingOnce(code)
    writer = WriterThread(terminal)
    writer.start()
    assert _frames_then_stop(writer), "the writes after the failure, or the stop, waited for ever"
    assert terminal.written == [f"frame {n}" for n in range(1, MAX_QUEUED_WRITES * 3)]
    assert os.get_blocking(terminal.fd)
    terminal.close()


class FlushFailingOnce(FailingOnce):
    """A terminal whose first flush fails with ``code``: with no frame queued, the flush after the stop's end mark."""

    def write(self, text: str) -> None:
        self.written.append(text)

    def flush(self) -> None:
        if not self.failed:
            self.failed = True
            raise OSError(self.code, os.strerror(self.code))


@pytest.mark.parametrize("code", [errno.EIO, errno.EAGAIN], ids=errno.errorcode.get)
def test_a_failure_of_the_last_flush_never_holds_the_quit(code):
    """The stop's end mark is taken before that flush: the guard waited for another (given up) or ran the
    writer again (tried again), and the quit's join waited for ever."""
    import workbench.app  # noqa: F401  (importing the app applies widgets.textual_fixes)

    terminal = FlushFailingOnce(code)
    writer = WriterThread(terminal)
    writer.start()
    stopped = threading.Thread(target=writer.stop, daemon=True)
    stopped.start()
    stopped.join(30)
    assert not stopped.is_alive(), "the stop waited for ever"
    assert terminal.failed and not writer.is_alive()
    terminal.close()
