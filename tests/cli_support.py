"""The workbench CLI run in this process: for tests whose subject is the words it prints."""

from __future__ import annotations

import contextlib
import io
import logging
import subprocess

from workbench.cli import main
from workbench.crash import OneLineLog


def ran(*args: str) -> tuple[int, str, str]:
    """``workbench ARGS`` run here, as a separate process would run it: its exit status, stdout and stderr
    (about 0.2 s of CPU less than a new interpreter importing the package again)."""
    for handler in logging.getLogger().handlers:  # a new process has said no warning yet
        if isinstance(handler, OneLineLog):
            handler.said.clear()
            handler.causes.clear()
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(args))
        except SystemExit as exc:  # (argparse's --help ends the process: its status, as the interpreter gives it)
            status = 0 if exc.code is None else exc.code
    return status, out.getvalue(), err.getvalue()


def printed(*args: str) -> str:
    """What ``workbench ARGS`` prints on stdout; it must succeed (its stderr is the failure's message)."""
    status, out, err = ran(*args)
    assert status == 0, err
    return out


def completed(*args: str) -> subprocess.CompletedProcess:
    """``ran`` answered as ``subprocess.run`` answers, for tests written against a process's result."""
    return subprocess.CompletedProcess(["workbench", *args], *ran(*args))
