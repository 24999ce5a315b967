"""Usage figures in Hermes's session columns: what an API reported, never our estimates."""

from __future__ import annotations

import json
import sqlite3
import subprocess

from engine.runner.session import reported_usage
from tests.hermes_support import workbench_cmd

USAGE = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "api_call_count",
    "estimated_cost_usd",
    "actual_cost_usd",
    "cost_status",
)


def test_offline_and_scripted_runs_leave_hermes_usage_columns_empty(tmp_path):
    home = tmp_path / "home"
    for args in (
        ["--message", "remember that I prefer tabs", "--message", "thanks"],
        ["--scenario", "smoke", "--model", "scripted", "--yes"],  # (the home holds the first run now)
    ):
        done = subprocess.run(
            workbench_cmd("run", "--home", str(home), "--json", *args), capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["turns"]
    state = sqlite3.connect(home / "state.db")
    rows = state.execute(f"SELECT model, {', '.join(USAGE)} FROM sessions ORDER BY model").fetchall()
    assert [r[0] for r in rows] == ["offline", "scripted"]
    assert [r[1:] for r in rows] == [(0, 0, 0, 0, 0, 0, None, None, None)] * 2  # hermes insights sees no spend
    assert state.execute("SELECT count(*) FROM session_model_usage").fetchone()[0] == 0
    ids = [r[0] for r in state.execute("SELECT id FROM sessions")]
    state.close()
    ours = sqlite3.connect(home / "workbench.db")  # our estimate of every request stays in our own log
    estimates = dict(
        ours.execute(
            "SELECT session_id, sum(estimated_tokens) FROM runner_requests WHERE purpose = 'turn' GROUP BY session_id"
        )
    )
    ours.close()
    assert set(estimates) == set(ids) and all(v > 1000 for v in estimates.values())


def test_reported_usage_becomes_hermes_counters():
    assert reported_usage({}) == {} and reported_usage(None) == {}
    assert reported_usage({"prompt_tokens": 900, "completion_tokens": 5}) == {
        "input_tokens": 900,
        "output_tokens": 5,
        "api_call_count": 1,
    }
    # the cached part of the prompt is counted apart, as Hermes does; junk values count nothing
    assert reported_usage(
        {
            "prompt_tokens": 1000,
            "completion_tokens": 40,
            "prompt_tokens_details": {"cached_tokens": 600},
            "completion_tokens_details": {"reasoning_tokens": 30},
        }
    ) == {
        "input_tokens": 400,
        "cache_read_tokens": 600,
        "output_tokens": 40,
        "reasoning_tokens": 30,
        "api_call_count": 1,
    }
    assert reported_usage({"prompt_tokens": "lots", "completion_tokens": -3, "total_tokens": 9}) == {
        "api_call_count": 1
    }
