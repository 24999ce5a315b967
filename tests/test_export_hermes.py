"""`workbench sessions export` as a faithful copy: Hermes 0.19.0's own ``import_sessions`` reads it
back into the rows Hermes wrote, column for column (found in a user trial: reasoning, most columns
and the times' fractions were lost, and Hermes imported the session at the import's time)."""

from __future__ import annotations

import json
import subprocess

from tests.hermes_support import workbench_cmd

# Hermes writes a session the way its agent loop and gateway do, every optional column filled.
HERMES_WRITES = r"""
import json
from hermes_state import SessionDB

db = SessionDB()
db.create_session("trial", source="telegram", model="m-1", model_config={"temperature": 0.2, "max_tokens": 900},
                  system_prompt="You are terse.", user_id="u-7", chat_id="c-1", chat_type="dm", cwd="/work/proj",
                  profile_name="default")
db.set_session_title("trial", "Why is the sky blue")
db.append_message("trial", "user", "Why is the sky blue?", platform_message_id="tg-41")
call = {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": "{\"q\": \"sky\"}"}}
db.append_message("trial", "assistant", None, tool_calls=[call], reasoning="look it up first",
                  finish_reason="tool_calls", token_count=7)
db.append_message("trial", "tool", "Rayleigh scattering \u8bf4\u660e", tool_name="search", tool_call_id="call_1",
                  effect_disposition="read_only")
db.append_message("trial", "assistant", "Rayleigh scattering.", reasoning="short wavelengths scatter more",
                  reasoning_content="blue light, 450 nm", reasoning_details=[{"type": "summary", "text": "blue"}],
                  codex_reasoning_items=[{"id": "rs_1", "summary": []}], codex_message_items=[{"id": "msg_1"}],
                  finish_reason="stop", token_count=12, observed=True, api_content="Rayleigh scattering!")
db.update_token_counts("trial", input_tokens=120, output_tokens=30, cache_read_tokens=64, cache_write_tokens=8,
                       reasoning_tokens=17, estimated_cost_usd=0.0012345678901, actual_cost_usd=0.00125,
                       cost_status="final", cost_source="provider", pricing_version="2026-11",
                       billing_provider="openrouter", billing_base_url="https://openrouter.ai/api/v1",
                       billing_mode="metered", api_call_count=2)
db._execute_write(lambda conn: conn.execute(
    "UPDATE sessions SET git_branch = 'main', git_repo_root = '/work/proj' WHERE id = 'trial'"))
db.end_session("trial", "user_exit")
print(json.dumps({"export": db.export_session("trial")}))
"""

HERMES_IMPORTS = r"""
import json
from hermes_state import SessionDB

db = SessionDB()
result = db.import_sessions([json.load(open(PATH, encoding="utf-8"))])
print(json.dumps(result))
"""

HERMES_ROWS = r"""
import json
from hermes_state import SessionDB

db = SessionDB()
conn = db._conn
session = dict(conn.execute("SELECT * FROM sessions WHERE id = 'trial'").fetchone())
messages = [dict(r) for r in conn.execute("SELECT * FROM messages WHERE session_id = 'trial' ORDER BY id")]
print(json.dumps({"session": session, "messages": messages}))
"""

# What Hermes's import restores (the rest is live runtime state it resets on purpose: gateway
# routing, handoff, rewind; see SessionDB.import_sessions).
IMPORTED_SESSION_COLUMNS = (
    "id source user_id model model_config system_prompt started_at ended_at end_reason message_count "
    "tool_call_count input_tokens output_tokens cache_read_tokens cache_write_tokens reasoning_tokens cwd "
    "git_branch git_repo_root billing_provider billing_base_url billing_mode estimated_cost_usd actual_cost_usd "
    "cost_status cost_source pricing_version title api_call_count archived"
).split()


def _import(hermes, root, document: dict) -> dict:
    path = root.parent / f"{root.name}.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    result = hermes.json(root, HERMES_IMPORTS.replace("PATH", repr(str(path))))
    assert result["ok"] and result["imported"] == 1, result
    return hermes.json(root, HERMES_ROWS)


def test_hermes_imports_our_json_export_into_the_rows_it_wrote(hermes, tmp_path):
    origin, ours, theirs = tmp_path / "origin", tmp_path / "ours", tmp_path / "theirs"
    for root in (origin, ours, theirs):
        root.mkdir()
    hermes_export = hermes.json(origin, HERMES_WRITES)["export"]
    original = hermes.json(origin, HERMES_ROWS)

    out = tmp_path / "trial.json"
    command = workbench_cmd("sessions", "export", "trial", "--home", str(origin))
    printed = subprocess.run(command, capture_output=True, timeout=60)
    assert printed.returncode == 0, printed.stderr
    written = subprocess.run([*command, "-o", str(out)], capture_output=True, timeout=60)
    assert written.returncode == 0, written.stderr
    assert out.read_bytes() == printed.stdout  # the same bytes either way, the final newline included
    exported = json.loads(out.read_text(encoding="utf-8"))

    # every column, as stored: numbers stay numbers, times keep their fractions
    assert {k: exported[k] for k in original["session"]} == original["session"]
    assert exported["started_at_iso"].endswith("+00:00") and exported["inactive_messages"] == []
    stripped = [{k: m[k] for k in original["messages"][0]} for m in exported["messages"]]
    for mine, stored in zip(stripped, original["messages"], strict=True):
        assert {k: v for k, v in mine.items() if k not in ("content", "tool_calls")} == {
            k: v for k, v in stored.items() if k not in ("content", "tool_calls")
        }
    assert exported["messages"][3]["reasoning"] == "short wavelengths scatter more"
    assert exported["messages"][1]["tool_calls"][0]["id"] == "call_1"

    mine, reference = _import(hermes, ours, exported), _import(hermes, theirs, hermes_export)
    assert mine == reference  # Hermes restores from our file exactly what it restores from its own
    for column in IMPORTED_SESSION_COLUMNS:
        assert mine["session"][column] == original["session"][column], column
    assert mine["session"]["ended_at"] is not None and mine["session"]["end_reason"] == "user_exit"
    assert len(mine["messages"]) == len(original["messages"]) == 4
    for got, stored in zip(mine["messages"], original["messages"], strict=True):
        assert {k: v for k, v in got.items() if k != "id"} == {k: v for k, v in stored.items() if k != "id"}
