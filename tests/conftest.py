"""Shared fixtures: a fresh home in a temp folder, with a fixed clock."""

from __future__ import annotations

import compileall
import gc
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from engine import FixedClock, open_home
from engine.demo import seed_demo_home

# Times people read are in the machine's zone (``engine.clock.shown_time``): the suite pins UTC, so
# screens and snapshots read the same on every machine (and in every process the tests start).
os.environ["TZ"] = "UTC"
time.tzset()

# The CLI fits its listings to COLUMNS, else the terminal, else 80 (workbench/cli/fit.py): the suite's
# CLI runs, in this process and in the processes it starts, read whole rows as a wide terminal shows
# them; tests/test_cli_width.py gives its own widths. (Textual's screens take their size from Pilot.)
os.environ["COLUMNS"] = "1000"

# Temp folders (tmp_path, tempfile) go on a RAM-backed file system when the machine has one and
# TMPDIR does not name another place. The suite's homes are real files either way, and every
# fsync is still made, but on a shared disk each fsync of a commit or an atomic write waited
# on everyone else's writeback: test_threat_corpus.py took 60 s of wall time for 14 s of CPU.
# Set before pytest picks its base temp folder (xdist's workers inherit it).
_RAM_TEMP = "/dev/shm"
if not os.environ.get("TMPDIR") and os.path.isdir(_RAM_TEMP) and os.access(_RAM_TEMP, os.W_OK | os.X_OK):
    os.environ["TMPDIR"] = _RAM_TEMP
    tempfile.tempdir = None  # (gettempdir() reads TMPDIR again)


def pytest_configure(config) -> None:
    """Write the package's bytecode once, in the controller, before any test runs.

    The suite starts hundreds of CLI and writer processes. Where the environment sets
    PYTHONDONTWRITEBYTECODE (as these machines do), import never caches bytecode, so each
    of those processes compiled every module it imported from source: about 0.25 s of a
    0.65 s `workbench memory show`. compileall writes the caches anyway; imports then read
    them, and a file edited later is simply compiled again in memory.
    """
    if hasattr(config, "workerinput"):  # an xdist worker: the controller has done it
        return
    root = Path(__file__).resolve().parent.parent
    for package in ("engine", "workbench", "widgets", "tests"):
        compileall.compile_dir(root / package, quiet=1)


@pytest.hookimpl(wrapper=True)
def pytest_collection(session):
    """Let pytest keep the test modules it rewrote (``tests/__pycache__/*-pytest-*.pyc``).

    Each worker collects the whole suite, and collecting is mostly pytest rewriting the
    asserts of ~150 test modules and compiling them again: about 10 s of CPU per worker.
    pytest always reads a rewritten module it kept, but keeps none while
    ``sys.dont_write_bytecode`` is set (PYTHONDONTWRITEBYTECODE). Lifted for collection
    only, the next run's workers read them back (a file edited since is rewritten again:
    the cache is keyed on its mtime and size, written atomically by pytest).
    """
    saved = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = saved


# 2026-11-30T12:00:00Z: every test sees the same "now" unless it moves the clock.
FIXED_NOW = 1796040000.0


@pytest.fixture(autouse=True)
def _config_dir(tmp_path_factory):
    """The workbench's own settings, crash files and kept drafts go to a temp folder of each test's own,
    never the user's real one (a test that crashes the CLI on purpose left files in
    ~/.config/memory-workbench/crashes), nor one another test wrote to (doctor lists kept drafts)."""
    saved = os.environ.get("WORKBENCH_CONFIG_DIR")
    os.environ["WORKBENCH_CONFIG_DIR"] = str(tmp_path_factory.mktemp("config"))
    yield
    if saved is None:
        os.environ.pop("WORKBENCH_CONFIG_DIR", None)
    else:
        os.environ["WORKBENCH_CONFIG_DIR"] = saved


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(FIXED_NOW)


@pytest.fixture
def home(tmp_path, clock):
    h = open_home(tmp_path / "home", clock=clock)
    yield h
    h.close()


@pytest.fixture(scope="session")
def _demo_template(tmp_path_factory):
    root = tmp_path_factory.mktemp("demo") / "home"
    home = open_home(root, clock=FixedClock(FIXED_NOW))
    seed_demo_home(home)
    home.close()
    return root


@pytest.fixture
def demo_root(_demo_template, tmp_path):
    """A closed demo home at ``tmp_path/home``, as ``seed_demo_home`` leaves it on the fixed clock: seeded
    once per worker and copied for each test (seeding takes about 0.1 s, a copy a few ms)."""
    root = tmp_path / "home"
    shutil.copytree(_demo_template, root)
    return root


@pytest.fixture
def wb(tmp_path):
    """The ``workbench`` command in a process of its own, on the home ``tmp_path/home`` (WORKBENCH_HOME);
    whatever it says, never a traceback. (A module's own ``wb`` is taken before this one.)"""
    env = {**os.environ, "WORKBENCH_HOME": str(tmp_path / "home")}

    def run(*args):
        result = subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True, env=env)
        assert "Traceback" not in result.stderr
        return result

    return run


@pytest.fixture
def cli(tmp_path, monkeypatch):
    """The same command on the same home as ``wb``, answered the same way, but run in this process
    (``tests/cli_support.py``): for a test whose subject is what it says rather than the process."""
    from tests.cli_support import completed

    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    return completed


@pytest.fixture(scope="session")
def hermes():
    """The real Hermes Agent (tests/hermes_support.py); skipped, with the reason printed, if it cannot be installed."""
    from tests.hermes_support import Hermes, ensure_hermes_venv

    python, why = ensure_hermes_venv()
    if python is None:
        print(f"\n[hermes] compatibility tests skipped: {why}")
        pytest.skip(f"real Hermes Agent unavailable: {why}")
    return Hermes(python)


def pytest_sessionfinish(session) -> None:
    """Collect the session's garbage before xdist reports this worker finished.

    Each app a TUI test runs freezes the heap once drawn and unfreezes it on unmount
    (``WorkbenchApp.on_mount``), so the cyclic garbage of hundreds of apps waits in the
    oldest generation until the end: over a million objects, a 2-5 s collection. pytest
    makes five full passes while unconfiguring, which is after xdist's hook has told the
    controller this worker is done, and execnet interrupts a worker still busy 5 s after
    that: the KeyboardInterrupt warning that ended some runs. Collected here, each pass
    after it takes about 0.3 s.
    """
    gc.collect()


# -- argparse's message lookups ------------------------------------------------------------
# Every in-process ``workbench.cli.main`` builds the whole parser, and argparse asks gettext
# for each of its ~1,200 strings; each ask walks the locale variables, normalises the locale
# and looks for a .mo file on disk: half of the 13 ms a parser takes, paid on every CLI call the
# threat corpus, the CLI fuzzers and the CLI tests make. The answer depends only on the
# arguments and those variables (and on .mo files no test writes), so it is kept per key;
# a test that sets LANGUAGE or LC_ALL gets its own answer. Subprocesses are unaffected.
import functools  # noqa: E402
import gettext  # noqa: E402

_LOCALE_VARS = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
_gettext_find = gettext.find


@functools.cache
def _find_once(domain, localedir, languages, all, env):
    found = _gettext_find(domain, localedir, None if languages is None else list(languages), all)
    return tuple(found) if isinstance(found, list) else found


def _find(domain, localedir=None, languages=None, all=False):
    env = tuple(os.environ.get(name) for name in _LOCALE_VARS)
    found = _find_once(domain, localedir, None if languages is None else tuple(languages), all, env)
    return list(found) if isinstance(found, tuple) else found


gettext.find = _find


@pytest.fixture
def anyio_backend() -> str:
    """Async tests (``pytest.mark.anyio``, e.g. Textual Pilot tests) run on asyncio."""
    return "asyncio"


# -- TUI snapshots: store SVGs under the top-level snapshots/<test module>/ folder --------
# pytest-textual-snapshot has no option for this; snap_compare looks the extension class
# up at call time, so a subclass with another dirname is swapped in. The path keeps the
# tests folder as a literal prefix ("tests/../snapshots/...") so that syrupy still
# recognises which snapshots belong to the tests selected on the command line.
import pytest_textual_snapshot as _pts  # noqa: E402

SNAPSHOT_ROOT = Path(__file__).resolve().parent.parent / "snapshots"


class RootSVGExtension(_pts.SVGImageExtension):
    @classmethod
    def dirname(cls, *, test_location) -> str:
        tests_dir = Path(test_location.filepath).parent
        return str(tests_dir / os.path.relpath(SNAPSHOT_ROOT, tests_dir) / test_location.basename)


_pts.SVGImageExtension = RootSVGExtension

# Textual reads NO_COLOR when an app starts (and would render monochrome); snapshots and
# colour assertions must not depend on the environment the suite runs in.
os.environ.pop("NO_COLOR", None)


# -- Longest tests first -------------------------------------------------------------------
# With ``-n 2`` xdist hands tests out in collection order, so a minute-long test collected
# near the end (the soak is in test_soak.py, after most of the suite) keeps one worker busy
# after the other has run out: the whole run waits for it. Run first, the longest ones
# overlap the rest of the suite on the other worker. Node-id prefixes, longest first
# (``--durations=80`` of a full run, 2026-12-06); the order of every other test is unchanged.
LONGEST_FIRST = (
    "tests/test_soak.py::test_a_small_soak_leaves_the_home_whole",
    "tests/test_tui_mash.py::test_random_keys_never_stop_the_app",
    "tests/test_hermes_provenance.py::test_a_hermes_agent_turn_shows_live_with_its_origin_message",
    # the whole file, together: its Hermes tests share one Hermes process (a module fixture)
    "tests/test_config_hermes.py::",
    "tests/test_fuzz_files.py::",
    "tests/test_tui_app.py::test_demo_plays_in_the_app_and_the_screens_follow",
    "tests/test_hostile_files.py::test_a_100000_operation_batch_is_refused_when_staged_and_when_approved",
    "tests/test_timeline_reach.py::test_the_timeline_screen_says_how_far_it_read_and_m_reads_on",
    "tests/test_tui_focus.py::test_every_focusable_pane_shows_a_focus_ring",
    "tests/test_threat_corpus.py::test_benign_texts_are_never_refused_and_rarely_flagged",
    # Under a second each when a worker starts, 10-23 s late in a run: each parses all of workbench/
    # and widgets/ (a million AST nodes) while the worker's heap is large.
    "tests/test_tui_reloads.py::test_no_worker_calls_back_with_call_from_thread",
    "tests/test_tui_reloads.py::test_exclusive_workers_answer_through_post_result",
)


def _first_rank(nodeid: str) -> int:
    for rank, prefix in enumerate(LONGEST_FIRST):
        if nodeid.startswith(prefix):
            return rank
    return len(LONGEST_FIRST)


def pytest_collection_modifyitems(config, items) -> None:
    """Move the longest tests to the front, longest first (a stable sort: nothing else moves)."""
    items.sort(key=lambda item: _first_rank(item.nodeid))


# -- Textual's CSS, parsed once per process ------------------------------------------------
# Each app has its own Stylesheet, and each parses every widget's DEFAULT_CSS and ours again:
# at start, and once more (in a new Stylesheet, with an empty cache) on the first visit to each
# screen and at every theme change. Parsing is a function of the text, where it was read from
# and the theme's variables, so the rule sets are kept per process, keyed on all of them; they
# are only read afterwards (their values are copied into each node's styles). About a tenth of
# a TUI test's CPU was tokenizing and parsing the same CSS again.
from textual.css.stylesheet import Stylesheet as _Stylesheet  # noqa: E402

_parse_rules = _Stylesheet._parse_rules
_PARSED_CSS: dict[tuple, list] = {}


def _parse_rules_once(self, css, read_from, is_default_rules=False, tie_breaker=0, scope=""):
    key = (css, read_from, is_default_rules, tie_breaker, scope, tuple(sorted(self._variables.items())))
    rules = _PARSED_CSS.get(key)
    if rules is None:
        rules = _PARSED_CSS[key] = _parse_rules(self, css, read_from, is_default_rules, tie_breaker, scope)
    return rules


_Stylesheet._parse_rules = _parse_rules_once


# -- Pilot's idle waits in 5 ms steps --------------------------------------------------------
# Every ``pilot.press`` waits twice for the app to go idle, and every ``pilot.pause()`` once:
# Textual sleeps in steps of 20 ms and calls the app idle after a step in which the process
# used under 1 ms of CPU (a twentieth of it). Each wait therefore took at least 20 ms even
# when the key's work was long done: 8 to 10 such waits a TUI test, about a sixth of the TUI
# tests' wall time. The steps are 5 ms, the idle share stays a twentieth; pending messages
# are still waited for first (``Pilot._wait_for_screen``), and a test that needs a worker's
# answer waits for it by name (``tests/tui_support.py``: ``settle``, ``wait_for``).
import textual._wait as _textual_wait  # noqa: E402

_textual_wait.SLEEP_GRANULARITY = 0.005
_textual_wait.SLEEP_IDLE = _textual_wait.SLEEP_GRANULARITY / 20.0
