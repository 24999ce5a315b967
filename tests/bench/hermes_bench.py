"""Hermes's own code in the bench, when its venv (tests/hermes_support.py) is already built."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

from tests.hermes_support import Hermes, _python, venv_dir


def hermes() -> Hermes | None:
    """The cached Hermes venv, or None (the bench never installs it: `make test` does)."""
    python = _python(venv_dir())
    return Hermes(python) if python.exists() else None


def run_json(runner: Hermes, home: Path, code: str, timeout: float = 600):
    return runner.json(home, textwrap.dedent(code), timeout=timeout)


def start(runner: Hermes, home: Path, code: str) -> subprocess.Popen:
    return runner.popen(home, textwrap.dedent(code))


def result(proc: subprocess.Popen, timeout: float = 600):
    out, err = proc.communicate(timeout=timeout)
    if proc.returncode != 0:
        raise SystemExit(f"a Hermes bench process failed:\n{err[-2000:]}")
    return json.loads(out.strip().splitlines()[-1])
