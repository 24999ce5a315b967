"""A home this user may not read, and a home named after an unknown user: a clear error, exit 1.

The suite runs as root, which reads everything, so the unreadable case runs the real CLI
as ``nobody`` (through ``setpriv`` or ``runuser``) against a 0700 home owned by root.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from engine import open_home
from engine.tools import ToolContext
from tests.hermes_support import workbench_cmd

ROOT = Path(__file__).resolve().parent.parent
NOBODY = 65534
CASES = [  # (command, under --json)
    (["memory", "show"], False),
    (["memory", "add", "Likes tea"], True),
    (["sessions", "list"], True),
    (["doctor"], False),
]


def _as_nobody() -> list[str] | None:
    """The argv prefix that runs a command as nobody, or None when this machine has no way to."""
    if shutil.which("setpriv"):
        return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    if shutil.which("runuser"):
        return ["runuser", "-u", "nobody", "--"]
    return None


def _interpreter(prefix: list[str]) -> list[str] | None:
    """A Python nobody can start that imports the workbench (the suite's own may sit in root's home)."""
    paths = os.pathsep.join([*site.getsitepackages(), str(ROOT)])
    env = ["env", "HOME=/tmp", f"PYTHONPATH={paths}"]
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for python in dict.fromkeys([sys.executable, shutil.which(version) or "", f"/usr/bin/{version}"]):
        if python and subprocess.run([*prefix, *env, python, "-c", "import workbench.cli"]).returncode == 0:
            return [*prefix, *env, python, "-m", "workbench"]
    return None


@pytest.fixture(scope="module")
def nobody() -> list[str]:
    if os.geteuid() != 0:
        pytest.skip("needs root, to run the CLI as another user against a root-owned home")
    prefix = _as_nobody()
    if prefix is None:
        pytest.skip("neither setpriv nor runuser is installed, so the CLI cannot run as another user")
    command = _interpreter(prefix)
    if command is None:
        pytest.skip(f"no Python {sys.version_info.major}.{sys.version_info.minor} that nobody may run is installed")
    return command


@pytest.fixture
def shared_tmp():
    """A folder everyone may enter (pytest's own tmp folders are closed to other users)."""
    folder = Path(tempfile.mkdtemp(prefix="wb-access-", dir="/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def _root_home(folder: Path) -> Path:
    home = folder / "home"
    opened = open_home(home)
    opened.memory.add("memory", "Prefers tabs", ToolContext(actor="user"))
    opened.close()
    return home


def _snapshot(home: Path) -> dict[str, bytes]:
    return {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file()}


def _assert_refused(result, home: Path, blocker: Path, as_json: bool) -> None:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    text = json.loads(result.stdout)["error"] if as_json else result.stderr
    assert f"The home {home} cannot be read by this user (nobody)" in text
    assert f"{blocker} belongs to root with mode 0700" in text
    if as_json:
        assert json.loads(result.stdout)["success"] is False


@pytest.mark.parametrize(("command", "as_json"), CASES, ids=lambda c: " ".join(c) if isinstance(c, list) else str(c))
def test_a_home_this_user_cannot_read_is_refused_clearly(nobody, shared_tmp, command, as_json):
    home = _root_home(shared_tmp)
    home.chmod(0o700)
    before = _snapshot(home)
    argv = [*nobody, *(["--json"] if as_json else []), "--home", str(home), *command]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    _assert_refused(result, home, home, as_json)
    assert _snapshot(home) == before


def test_a_home_behind_a_folder_this_user_cannot_enter_names_that_folder(nobody, shared_tmp):
    home = _root_home(shared_tmp)
    shared_tmp.chmod(0o700)
    try:
        result = subprocess.run(
            [*nobody, "--json", "--home", str(home), "memory", "show"], capture_output=True, text=True
        )
    finally:
        shared_tmp.chmod(0o755)
    _assert_refused(result, home, shared_tmp, as_json=True)


def test_an_unreadable_home_from_the_environment_is_refused_the_same_way(nobody, shared_tmp):
    home = _root_home(shared_tmp)
    home.chmod(0o700)
    env_prefix = [*nobody[: nobody.index("env") + 1], f"WORKBENCH_HOME={home}", *nobody[nobody.index("env") + 1 :]]
    result = subprocess.run([*env_prefix, "--json", "sessions", "list"], capture_output=True, text=True)
    _assert_refused(result, home, home, as_json=True)


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_home_named_after_an_unknown_user_is_refused_and_nothing_is_created(tmp_path, as_json):
    env = {**os.environ, "WORKBENCH_HOME": "~nouser/x"}
    env.pop("HERMES_HOME", None)
    argv = workbench_cmd(*(["--json"] if as_json else []), "memory", "add", "Likes tea")
    result = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stdout + result.stderr
    message = json.loads(result.stdout)["error"] if as_json else result.stderr
    assert "~nouser/x names a user whose home folder is unknown here. Give the full path." in message
    assert list(tmp_path.iterdir()) == []
