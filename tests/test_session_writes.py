"""Which message wrote what: one engine query for the transcript markers and `sessions show`."""

from __future__ import annotations

import json
import subprocess
import sys

from engine.session_writes import Write, session_writes, session_wrote


def _call(call_id: str, action: str, target: str, content: str) -> list[dict]:
    arguments = json.dumps({"action": action, "target": target, "content": content})
    return [{"id": call_id, "type": "function", "function": {"name": "memory", "arguments": arguments}}]


def _seed(home) -> dict[str, int]:
    """A workbench-run message (journaled) and a Hermes-run one (only its tool call in state.db)."""
    archive = home.archive
    archive.create_session("s1", source="cli", title="Writes")
    ids = {"ours": archive.append_message("s1", "assistant", "", tool_calls=_call("c1", "add", "user", "Likes tea"))}
    archive.append_message("s1", "tool", '{"success": true}', tool_name="memory", tool_call_id="c1")
    ids["hermes"] = archive.append_message("s1", "assistant", "", tool_calls=_call("c2", "add", "memory", "Uses uv"))
    archive.append_message("s1", "tool", '{"success": true}', tool_name="memory", tool_call_id="c2")
    ids["refused"] = archive.append_message("s1", "assistant", "", tool_calls=_call("c3", "add", "memory", "No"))
    archive.append_message("s1", "tool", '{"success": false, "error": "full"}', tool_name="memory", tool_call_id="c3")
    home.journal.append(
        "memory", "add", "user", actor="agent", after="Likes tea", session_id="s1", message_id=ids["ours"]
    )
    home.journal.append(
        "approvals",
        "stage",
        "memory",
        actor="review",
        after="Deploys on Friday",
        session_id="s1",
        message_id=ids["ours"],
    )
    return ids


def test_journal_rows_and_hermes_tool_calls_give_each_message_its_writes(home):
    ids = _seed(home)
    writes = session_writes(home, "s1", home.archive.messages("s1"))
    assert set(writes) == {ids["ours"], ids["hermes"]}  # a refused call wrote nothing
    ours = writes[ids["ours"]]
    assert [(w.subsystem, w.action, w.target, w.text, w.staged) for w in ours] == [
        ("memory", "add", "user", "Likes tea", False),
        ("approvals", "stage", "memory", "Deploys on Friday", True),
    ]
    assert [w.summary for w in ours] == ["memory add (user)", "staged for approval (memory) by review"]
    assert [w.entry for w in ours] == [("user", "Likes tea"), None] and ours[0].journal_id is not None
    assert writes[ids["hermes"]] == [Write("memory", "add", "memory", "agent", "Uses uv")]
    assert session_wrote(home, "s1") and not session_wrote(home, "nope")


def test_sessions_show_json_gives_every_message_its_writes(home):
    ids = _seed(home)
    home.close()
    argv = [sys.executable, "-m", "workbench", "sessions", "show", "s1", "--home", str(home.root)]
    data = json.loads(subprocess.run([*argv, "--json"], capture_output=True, text=True, check=True).stdout)
    by_id = {m["id"]: m["writes"] for m in data["messages"]}
    assert [w["text"] for w in by_id[ids["ours"]]] == ["Likes tea", "Deploys on Friday"]
    assert by_id[ids["hermes"]] == [
        {
            "subsystem": "memory",
            "action": "add",
            "target": "memory",
            "actor": "agent",
            "text": "Uses uv",
            "staged": False,
            "journal_id": None,
        }
    ]
    assert by_id[ids["refused"]] == []
    text = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    assert "    ↳ memory add (user): Likes tea" in text and "    ↳ memory add (memory): Uses uv" in text


def test_a_hermes_call_with_no_row_beside_one_credited_is_still_listed(home):
    """A Hermes batch replaced an entry (a look found the replace split in two, which no call is credited
    with) and added one (credited to its call once the turn was stored): the message's journal row hid
    the replace, which its archived call still shows."""
    batch = {
        "operations": [
            {"action": "replace", "old_text": "Tea", "content": "Coffee"},
            {"action": "add", "content": "Uses uv"},
        ]
    }
    home.archive.create_session("s1", source="cli")
    wire = [{"id": "c1", "type": "function", "function": {"name": "memory", "arguments": json.dumps(batch)}}]
    message = home.archive.append_message("s1", "assistant", "", tool_calls=wire)
    home.archive.append_message("s1", "tool", '{"success": true}', tool_name="memory", tool_call_id="c1")
    detail = {"index": 1, "call": 1, "credited": {"at": 1.0}}
    home.journal.append(
        "memory", "add", "memory", actor="agent", after="Uses uv", session_id="s1", message_id=message, detail=detail
    )
    writes = session_writes(home, "s1", home.archive.messages("s1"))[message]
    assert [(w.action, w.text, w.journal_id is not None) for w in writes] == [
        ("add", "Uses uv", True),
        ("replace", "Coffee", False),
    ]


def test_sessions_show_gives_a_writes_line_breaks_as_symbols(home, cli):
    """`sessions show` printed a write's text under its message with its line breaks folded into spaces: a
    Hermes-staged replace read `old: Works in JST new: Works in JST (UTC+9)`, one text. It shows them as ⏎,
    as `pending show` and every preview do."""
    archive = home.archive
    archive.create_session("s1", source="cli", title="Writes")
    message = archive.append_message("s1", "assistant", "", tool_calls=_call("c1", "add", "user", "Likes tea"))
    text = "old: Works in JST\nnew: Works in JST (UTC+9)"
    home.journal.append("approvals", "stage", "user", actor="agent", after=text, session_id="s1", message_id=message)
    home.close()
    shown = cli("sessions", "show", "s1").stdout.splitlines()
    assert "    ↳ staged for approval (user): old: Works in JST⏎new: Works in JST (UTC+9)" in shown, shown
