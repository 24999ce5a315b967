"""The real Hermes Agent, in a venv of its own, run as a separate process.

Compatibility tests run Hermes's own code (``hermes-agent`` from PyPI, the version
pinned below) against homes the workbench wrote, with ``HERMES_HOME`` set, the way a
user runs both programs side by side. The venv is built once and cached outside the
checkout (``$WORKBENCH_HERMES_VENV`` or ``~/.cache/memory-workbench/hermes-agent-<ver>``),
under a file lock so parallel test workers build it once. When the package cannot be
installed (no registry reachable) the dependent tests are skipped with the reason
printed, never silently.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import textwrap
import venv
from dataclasses import dataclass
from pathlib import Path

from engine.approvals.labels import describe

HERMES_VERSION = "0.19.0"
_PROBE = "import hermes_state, tools.memory_tool, tools.write_approval; print('ok')"


def venv_dir() -> Path:
    override = os.environ.get("WORKBENCH_HERMES_VENV")
    if override:
        return Path(override)
    return Path.home() / ".cache" / "memory-workbench" / f"hermes-agent-{HERMES_VERSION}"


def _python(folder: Path) -> Path:
    return folder / "bin" / "python"


def _usable(folder: Path) -> bool:
    py = _python(folder)
    if not py.exists():
        return False
    probe = subprocess.run([py, "-c", _PROBE], capture_output=True, text=True, timeout=120)
    return probe.returncode == 0 and probe.stdout.strip() == "ok"


def ensure_hermes_venv() -> tuple[Path | None, str]:
    """Return (python, "") for a working Hermes venv, or (None, why it cannot be had)."""
    folder = venv_dir()
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _usable(folder):
            return _python(folder), ""
        venv.EnvBuilder(with_pip=True, clear=True).create(folder)
        install = subprocess.run(
            [_python(folder), "-m", "pip", "install", "--quiet", f"hermes-agent=={HERMES_VERSION}"],
            capture_output=True,
            text=True,
            timeout=900,
        )
        if install.returncode != 0:
            tail = (install.stderr or install.stdout).strip().splitlines()[-3:]
            return None, f"pip install hermes-agent=={HERMES_VERSION} failed: {' | '.join(tail)}"
        if not _usable(folder):
            return None, f"hermes-agent=={HERMES_VERSION} installed but its modules do not import"
        return _python(folder), ""


@dataclass
class Hermes:
    """Runs snippets of Python inside the Hermes venv with HERMES_HOME pointing at a home."""

    python: Path

    def env(self, home: Path, extra: dict | None = None) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKBENCH_", "PYTEST", "COV_"))}
        env.update({"HERMES_HOME": str(home), "HOME": str(home.parent), "PYTHONDONTWRITEBYTECODE": "1"})
        env.pop("PYTHONPATH", None)
        env.update(extra or {})
        return env

    def run(
        self, home: Path, code: str, *, timeout: float = 120, extra_env: dict | None = None
    ) -> subprocess.CompletedProcess:
        """Run ``code`` (dedented) in Hermes's venv; raise with its stderr when it fails."""
        proc = subprocess.run(
            [str(self.python), "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=self.env(home, extra_env),
            cwd=str(home),
        )
        if proc.returncode != 0:
            raise AssertionError(f"Hermes snippet failed (rc {proc.returncode}):\n{proc.stderr[-4000:]}")
        return proc

    def json(self, home: Path, code: str, **kwargs):
        """Run ``code`` and parse the last stdout line as JSON (print one line of JSON last)."""
        out = self.run(home, code, **kwargs).stdout.strip().splitlines()
        return json.loads(out[-1])

    def answers(self, folder: Path, imports: str, questions: list[tuple[Path, str]]) -> list:
        """Each question's ``code`` run on its home, as ``json`` runs it, by one Hermes process: its
        ``imports`` (say ``run_agent``'s 1 s) are paid once and each question runs in a fork of it.

        Every home is moved in turn to ``folder/hermes`` (then back), the one HERMES_HOME of the
        process, so the paths Hermes's modules fix on import (``run_agent``'s .env, the skills
        folder, state.db) name the home each question reads, as in a process of its own."""
        place = folder / "hermes"
        proc = subprocess.run(
            [str(self.python), "-c", _ANSWERS],
            input=json.dumps(
                {"imports": textwrap.dedent(imports), "questions": [[str(h), textwrap.dedent(c)] for h, c in questions]}
            ),
            capture_output=True,
            text=True,
            timeout=120 + 60 * len(questions),
            env=self.env(place),
            cwd=str(folder),
        )
        if proc.returncode != 0:
            raise AssertionError(f"Hermes questions failed (rc {proc.returncode}):\n{proc.stderr[-4000:]}")
        return json.loads(proc.stdout)

    def popen(self, home: Path, code: str, **kwargs) -> subprocess.Popen:
        return subprocess.Popen(
            [str(self.python), "-c", textwrap.dedent(code)],
            env=self.env(home),
            cwd=str(home),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            **kwargs,
        )


# Hermes's memory tool and SessionDB as its agent loop uses them, for scripts run in its venv:
# ``turn`` stores a user message, the assistant message with one ``memory`` call, the tool's
# own result and a reply, in order; ``ids`` maps each turn's name to its assistant message.
# With ``between`` (a function) it stores them as Hermes 0.19.0's loop does: the tool runs first,
# then ``between`` (a look, say), then the call and its result, each stamped as it is stored.
MEMORY_TURNS = r"""
import json
from hermes_state import SessionDB
from tools.memory_tool import MemoryStore, memory_tool

store = MemoryStore()
store.load_from_disk()
db = SessionDB()
ids = {}

def turn(session, name, arguments, user=None, between=None):
    db.append_message(session, "user", name if user is None else user)
    call = {"id": "call_" + name, "type": "function",
            "function": {"name": "memory", "arguments": json.dumps(arguments)}}
    if between is not None:
        result = memory_tool(store=store, **arguments)
        between()
    ids[name] = db.append_message(session, "assistant", None, tool_calls=[call])
    if between is None:
        result = memory_tool(store=store, **arguments)
    db.append_message(session, "tool", result, tool_name="memory", tool_call_id=call["id"])
    db.append_message(session, "assistant", "Done.")
    assert json.loads(result)["success"], result
"""


# ``Hermes.answers``'s process: each question forked from one that has made the imports, its stdout's
# last line read as JSON; a question that fails stops the rest, with its traceback on stderr.
_ANSWERS = r"""
import json, os, sys, tempfile, traceback
asked = json.load(sys.stdin)
place = os.environ["HERMES_HOME"]
said = []
for n, (home, code) in enumerate(asked["questions"]):
    os.rename(home, place)
    if n == 0:
        exec(compile(asked["imports"], "<imports>", "exec"), {})
    out = tempfile.TemporaryFile(mode="w+")
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.chdir(place)
            os.dup2(out.fileno(), 1)
            exec(compile(code, f"<question {n}>", "exec"), {"__name__": "__main__"})
            status = 0
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    os.rename(place, home)
    if status != 0:
        sys.exit(f"question {n} (on {home}) failed")
    out.seek(0)
    said.append(json.loads(out.read().strip().splitlines()[-1]))
print(json.dumps(said))
"""


def workbench_cmd(*args: str) -> list[str]:
    """The workbench CLI as a separate process, from the suite's own interpreter."""
    return [sys.executable, "-m", "workbench", *args]


def write_from_another_process(path: Path, text: str) -> None:
    """``path`` written (its folder made) by a separate process, as an editor or another program would."""
    code = (
        "import pathlib, sys; p = pathlib.Path(sys.argv[1]); p.parent.mkdir(parents=True, exist_ok=True); "
        "p.write_text(sys.argv[2], encoding='utf-8')"
    )
    subprocess.run([sys.executable, "-c", code, str(path), text], check=True)


def hermes_record(
    home,
    pid: str,
    payload: dict,
    *,
    created_at: float | None = None,
    origin: str = "foreground",
    summary: str | None = None,
    subsystem: str = "memory",
) -> Path:
    """A pending record (memory's unless ``subsystem`` says) laid out as Hermes 0.19.0's ``stage_write``
    writes it: no pinned entry, no actor, session or message of ours. ``home``: an open home;
    ``summary``: the payload in words unless given, as Hermes words it; ``created_at``: the home clock's now
    unless given (a default of 1.0 dated a test's proposal 1970, unnoticed)."""
    record = {
        "id": pid,
        "subsystem": subsystem,
        "action": payload["action"],
        "summary": describe(subsystem, payload) if summary is None else summary,
        "origin": origin,
        "created_at": home.clock.now() if created_at is None else created_at,
        "payload": payload,
    }
    folder = home.pending_dir / subsystem
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{pid}.json"
    path.write_text(json.dumps(record, ensure_ascii=False, indent=2), encoding="utf-8")
    return path
