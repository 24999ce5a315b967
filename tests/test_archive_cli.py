"""`workbench sessions ...` through real subprocesses: exact JSON fields and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from engine import open_home


def wb(home_dir, *args):
    proc = subprocess.run([sys.executable, "-m", "workbench", *args, "--home", str(home_dir), "--json"],
                          capture_output=True, text=True, timeout=60)
    return proc.returncode, (json.loads(proc.stdout) if proc.stdout.strip() else None), proc.stderr


@pytest.fixture
def home_dir(tmp_path, clock):
    home = open_home(tmp_path / "h", clock=clock)
    archive = home.archive
    archive.create_session("root_1", source="cli", title="Migration night")
    archive.append_messages("root_1", [{"role": "user", "content": "run the database migration tonight"},
                                       {"role": "assistant", "content": "半夜执行数据库迁移"}])
    archive.end_session("root_1", "compression")
    archive.create_session("child_1", source="cli", parent_session_id="root_1", title="Migration night #2")
    archive.append_message("child_1", "user", "migration finished, check the error log")
    home.close()
    return tmp_path / "h"


def test_list_search_show_lineage_json(home_dir):
    code, data, _ = wb(home_dir, "sessions", "list")
    assert code == 0 and [s["id"] for s in data["sessions"]] == ["child_1", "root_1"]
    assert set(data["sessions"][0]) >= {"id", "title", "source", "started_at", "ended_at", "end_reason",
                                        "message_count", "parent_session_id"}

    code, data, _ = wb(home_dir, "sessions", "search", "migration")
    assert code == 0 and data["count"] == 1  # both sessions share one lineage root
    [hit] = data["results"]
    assert set(hit) >= {"session_id", "root_id", "title", "source", "when", "snippet", "match_message_id"}
    assert hit["root_id"] == "root_1" and "«" in hit["snippet"]

    code, data, _ = wb(home_dir, "sessions", "search", "数据库", "--role", "assistant")
    assert code == 0 and [r["match_message_id"] for r in data["results"]] == [2]

    code, data, _ = wb(home_dir, "sessions", "show", "root_1", "--around", "2", "--window", "1")
    assert code == 0 and data["session"]["id"] == "root_1"
    assert [m["id"] for m in data["messages"]] == [1, 2]
    assert set(data["messages"][0]) >= {"id", "role", "content", "tool_name", "tool_calls", "timestamp"}

    code, data, _ = wb(home_dir, "sessions", "lineage", "child_1")
    assert code == 0 and data == {"root_id": "root_1", "chain": ["root_1", "child_1"],
                                  "children": {"root_1": ["child_1"]}}


def test_refusals_and_usage_errors(home_dir):
    code, data, _ = wb(home_dir, "sessions", "show", "nope")
    assert code == 1 and data["success"] is False and "sessions list" in data["error"]
    code, data, _ = wb(home_dir, "sessions", "search", '"unbalanced AND (')
    assert code == 0 and data["count"] == 0
    code, _, err = wb(home_dir, "sessions", "show")
    assert code == 2 and "usage" in err.lower()
