"""Hypothesis over every CLI command's arguments: no traceback, no crash, JSON stays JSON.

Each example builds an argv for one subcommand (walked from the real parser, so a new
command is fuzzed without touching this file) with hostile values: FTS syntax, path
traversal, huge and non-finite numbers, surrogates, control characters, CJK, empty
strings. ``main`` must answer with 0, 1 or 2 (70 means an internal error: its saved
traceback fails the test) and, under ``--json``, exactly one JSON document.
``FUZZ_EXAMPLES`` raises the count (``make fuzz``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import FixedClock, open_home
from engine.demo import seed_demo_home
from workbench.cli import build_parser, main

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "100"))
# The TUI, and the model backend that would reach for the network, are not fuzzed here.
SKIPPED = {("demo",), ("tui",)}
NETWORK_OPTIONS = {"--base-url", "--model-name", "--api-key-env", "--stream"}

HOSTILE = [
    "",
    " ",
    "-1",
    "0",
    "1",
    "2",
    "1e999",
    "nan",
    "inf",
    "-inf",
    "99999999999999999999999",
    "0x10",
    "../../etc/passwd",
    "/etc/passwd",
    "..",
    ".",
    "~",
    "~nouser/x",
    "*",
    "**",
    '"',
    '"unbalanced',
    "AND",
    "OR NOT",
    "NEAR(a b)",
    "a:b",
    "col:value",
    "(",
    ")",
    "{",
    "[bold]x[/]",
    "<memory-context>",
    "§",
    "\n§\n",
    "\x1b]0;PWNED\x07",
    "\u202e",
    "\ud800",
    "\udcff",
    "数据库迁移",
    "部署",
    "東京",
    "ラーメン",
    "a" * 5000,
    "deploy-k8s",
    "memory",
    "user",
    "all",
    "root_1",
    "2026",
    "--json",
    "-",
]


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))
            return
    if path and path not in SKIPPED:
        yield path, parser


COMMANDS = list(_commands(build_parser()))
text_values = st.one_of(st.sampled_from(HOSTILE), st.text(st.characters(blacklist_characters="\x00"), max_size=40))


@st.composite
def argv_for(draw, command):
    path, parser = command
    argv = list(path)
    for action in parser._actions:
        if action.dest in ("help", "home", "json") or set(action.option_strings) & NETWORK_OPTIONS:
            continue
        if not action.option_strings:  # positional: usually given, sometimes left out
            if draw(st.integers(0, 9)):
                argv.append(draw(st.sampled_from(list(action.choices)) if action.choices else text_values))
            continue
        if not draw(st.booleans()):
            continue
        flag = action.option_strings[-1]
        if action.nargs == 0:
            argv.append(flag)
        elif action.choices and draw(st.integers(0, 4)):
            argv += [flag, draw(st.sampled_from(list(action.choices)))]
        elif action.dest == "model":
            argv += [flag, draw(st.sampled_from(["offline", "scripted"]))]
        else:
            argv += [flag, draw(text_values)]
    if path == ("run",) and "--message" not in argv and "--scenario" not in argv:
        argv += ["--message", draw(text_values)]
    return argv


@pytest.fixture(scope="module")
def fuzz_home(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz") / "home"
    home = open_home(root, clock=FixedClock(1796040000.0))
    seed_demo_home(home)
    home.close()
    return root


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(path) for path, _ in COMMANDS])
def test_no_argument_ends_in_a_traceback(command, fuzz_home, tmp_path_factory, monkeypatch):
    crashes = tmp_path_factory.mktemp("crashes")
    monkeypatch.setenv("WORKBENCH_CONFIG_DIR", str(crashes))
    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "2")

    @settings(
        max_examples=max(EXAMPLES // 10, 5),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(argv=argv_for(command), as_json=st.booleans())
    def check(argv, as_json):
        full = ["--home", str(fuzz_home), *argv, *(["--json"] if as_json else [])]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(full)
        saved = sorted((crashes / "crashes").glob("*.txt")) if (crashes / "crashes").exists() else []
        assert status in (0, 1, 2), (full, status, saved[-1].read_text()[-1500:] if saved else err.getvalue()[-2000:])
        assert "Traceback" not in out.getvalue() + err.getvalue(), full
        if as_json and out.getvalue().strip():
            json.loads(out.getvalue())  # exactly one document

    check()
