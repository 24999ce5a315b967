"""The session_search agent tool: discover, scroll, read, browse, and its refusals."""

from __future__ import annotations

import json

import pytest

from engine import open_home
from engine.archive.session_search import SESSION_SEARCH_SCHEMA, session_search_tool
from engine.tools import ToolContext
from tests.cli_support import ran


@pytest.fixture
def archive_home(home):
    archive = home.archive
    archive.create_session("old", source="cli", title="Payments outage")
    archive.append_messages(
        "old",
        [
            {"role": "user", "content": "the payments service keeps timing out"},
            {"role": "assistant", "content": "raised the gateway timeout to 30s"},
        ]
        + [{"role": "user" if i % 2 else "assistant", "content": f"filler {i}"} for i in range(40)],
    )
    archive.end_session("old", "compression")
    archive.create_session("old2", source="cli", parent_session_id="old")
    archive.append_messages("old2", [{"role": "user", "content": "payments still timing out after the change"}])
    archive.create_session("helper", source="subagent", parent_session_id="old2")
    archive.append_message("helper", "user", "payments subtask from a delegate")
    archive.create_session("now", source="cli", title="Current work")
    archive.append_message("now", "user", "what did we do about payments?")
    return home


def call(home, current=None, **args):
    return session_search_tool(home, args, ToolContext(session_id=current))


def test_schema_is_a_plain_function_schema():
    assert SESSION_SEARCH_SCHEMA["name"] == "session_search"
    assert set(SESSION_SEARCH_SCHEMA["parameters"]["properties"]) >= {
        "query",
        "limit",
        "session_id",
        "around_message_id",
        "window",
    }


def test_discover_groups_by_root_skips_current_lineage_and_hidden_sources(archive_home):
    result = call(archive_home, current="now", query="payments")
    assert result["success"] and result["mode"] == "discover"
    [entry] = result["results"]  # old and old2 share a root; helper is a hidden delegate; now is current
    assert entry["session_id"] in {"old", "old2"} and entry["title"] == "Payments outage"
    assert "«payments»" in entry["snippet"].lower()
    assert any(m.get("anchor") for m in entry["messages"])
    if entry["session_id"] == "old2":
        assert entry["parent_session_id"] == "old"
    nothing = call(archive_home, current="old2", query="payments")
    assert [r["session_id"] for r in nothing["results"]] == ["now"]


def test_discover_title_match_comes_first_with_bookends(archive_home):
    result = call(archive_home, current="now", query="Payments outage", limit=2)
    first = result["results"][0]
    assert first["matched_role"] == "session_title" and first["session_id"] == "old"
    assert first["bookend_end"] and all(m["role"] in ("user", "assistant") for m in first["bookend_end"])


def test_scroll_read_and_browse(archive_home):
    anchor = archive_home.archive.messages("old")[10].id
    scroll = call(archive_home, current="now", session_id="old", around_message_id=anchor, window=2)
    assert scroll["mode"] == "scroll" and [m["id"] for m in scroll["messages"]] == list(range(anchor - 2, anchor + 3))
    assert scroll["messages"][2]["anchor"] is True and scroll["messages_before"] == anchor - 3
    read = call(archive_home, session_id="old")
    assert read["truncated"] and read["message_count"] == 42 and len(read["messages"]) == 30
    assert "first 20 + last 10" in read["message"]
    browse = call(archive_home, current="now")
    assert browse["mode"] == "browse" and [r["session_id"] for r in browse["results"]] == ["old2"]
    assert browse["results"][0]["preview"].startswith("the payments service")


@pytest.mark.parametrize(
    "args, error",
    [
        ({"session_id": "ghost"}, "session_id not found: ghost"),
        ({"session_id": "old", "around_message_id": "abc"}, "scroll requires integer around_message_id"),
        (
            {"session_id": "old", "around_message_id": "99999999999999999999999"},
            "scroll requires integer around_message_id",
        ),
        ({"session_id": "old", "around_message_id": "²"}, "scroll requires integer around_message_id"),
        ({"session_id": "old", "around_message_id": 999}, "around_message_id 999 not in session_id old"),
        ({"session_id": "now", "around_message_id": 1}, "scroll rejected: anchor lives in the current session lineage"),
    ],
)
def test_refusals_are_tool_errors(archive_home, args, error):
    result = call(archive_home, current="now", **args)
    assert result["success"] is False and result["error"].startswith(error)


def test_no_match_and_odd_arguments(archive_home):
    assert call(archive_home, query="nonexistentword")["message"] == "No matching sessions found."
    assert call(archive_home, query='"((', limit="lots")["count"] == 0
    assert call(archive_home, query="payments", limit=99)["success"]


def test_cron_lineages_come_after_the_others(home):
    archive = home.archive
    archive.create_session("cron_run", source="cron")
    archive.append_message("cron_run", "assistant", "nightly backup backup backup finished")
    archive.create_session("chat", source="cli")
    archive.append_message("chat", "user", "how does the nightly backup work, and where do the many many logs go?")
    assert archive.search("backup")[0].session_id == "cron_run"  # the better BM25 match
    assert [r["session_id"] for r in call(home, query="backup", limit=1)["results"]] == ["chat"]
    assert [r["session_id"] for r in call(home, query="backup", limit=2)["results"]] == ["chat", "cron_run"]


def test_role_and_sort_words_filter_as_the_workbench_search_reads_them(archive_home):
    """The tool's note told the agent to write role:user apart from its words, which the tool then
    searched as words: it reads them as the search box and the CLI do (``filters``), beside role_filter."""
    found = call(archive_home, current="now", query="role:assistant timeout")
    assert [r["matched_role"] for r in found["results"]] == ["assistant"] and "note" not in found
    assert [r["matched_role"] for r in call(archive_home, current="now", query="timing role:user")["results"]] == [
        "user"
    ]
    assert call(archive_home, current="now", query="timeout", role_filter="user,bogus") == {
        "success": False,
        "error": "no message has the role 'bogus'; a role filter takes one of: assistant, system, tool, user",
    }
    assert call(archive_home, current="now", query="role:user")["mode"] == "browse"  # (no word to look for)
    assert call(archive_home, current="now", query="payments sort:oldest", sort="newest")["success"] is False


def test_hermes_stored_tool_call_arguments_read_as_their_letters_in_the_result(home):
    """Hermes stores a call's arguments with json.dumps defaults (``\\u6570``); the result, JSON again,
    showed them escaped twice (``\\\\u6570``) to the model and on the Run screen. The agent's turn here
    is the real runner's, with the offline model, and the result is read as state.db keeps it."""
    arguments = json.dumps({"action": "add", "target": "memory", "content": "数据库每天凌晨三点备份"})
    stored = json.dumps([{"id": "call_1", "type": "function", "function": {"name": "memory", "arguments": arguments}}])
    home.archive.create_session("s-zh", source="cli", title="数据库迁移")
    home.archive.append_message("s-zh", "user", "请记住数据库备份时间")
    home.archive.append_message("s-zh", "assistant", None, tool_calls=stored)
    assert "\\u6570" in home.archive.conn().execute("SELECT tool_calls FROM messages").fetchall()[1][0]
    home.close()
    code, out, err = ran("--home", str(home.root), "run", "--message", "what did we discuss about 数据库每天", "--json")
    assert code == 0, err
    session_id = json.loads(out)["session_id"]
    reopened = open_home(home.root)
    try:
        result = next(m.content for m in reopened.archive.messages(session_id) if m.role == "tool")
    finally:
        reopened.close()
    assert "\\u" not in result
    (hit,) = json.loads(result)["results"]
    (call,) = next(m for m in hit["messages"] if m.get("anchor"))["tool_calls"]
    assert call["function"]["arguments"] == json.dumps(json.loads(arguments), ensure_ascii=False)
    assert "数据库每天凌晨三点备份" in call["function"]["arguments"]
