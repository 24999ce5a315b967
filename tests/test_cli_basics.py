"""The CLI contract's common parts: exit codes, --json, --home placement."""

import json
import subprocess
import sys

import pytest

from workbench.cli import main


def run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True, env=env)


def test_unknown_command_is_usage_error():
    result = run("frobnicate")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr


def test_malformed_config_is_a_clear_refusal(tmp_path):
    (tmp_path / "config.yaml").write_text("memory: [\n")
    result = run("--json", "--home", str(tmp_path))
    assert result.returncode == 1
    payload = json.loads(result.stdout)
    assert payload["success"] is False and "config.yaml" in payload["error"]
    assert "Traceback" not in result.stderr


def test_home_is_a_file_is_refused_without_traceback(tmp_path):
    (tmp_path / "file").write_text("x")
    result = run("--home", str(tmp_path / "file"))
    assert result.returncode == 1
    assert "is a file" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("words", [[], ["tui"]], ids=["bare", "tui"])
def test_workbench_alone_or_tui_opens_the_tui_on_the_home(tmp_path, monkeypatch, words):
    """Users guess `workbench tui`; it opens the same TUI as `workbench` alone."""
    import workbench.app

    opened = []
    monkeypatch.setattr(workbench.app, "run_app", lambda home, **kw: opened.append(home.root))
    assert main([*words, "--home", str(tmp_path / "h")]) in (0, None)
    assert opened == [(tmp_path / "h").resolve()]
