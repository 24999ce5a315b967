"""Who proposed a write Hermes staged, once the workbench approves it (real Hermes Agent 0.19.0).

Hermes's pending records name no session or message; the tool result its agent loop
stores in state.db says the call was staged, with the pending id. Approved in the
workbench, the write must be journaled as the user's approval of that Hermes message
(as records the workbench stages are), so provenance, `g`, the Timeline and
`sessions show` name the message instead of a bare ``user`` write.
"""

from __future__ import annotations

import copy
import json
import shutil

import pytest

from engine import open_home
from engine.memory import history
from engine.skills.manage import skill_manage_tool
from engine.tools import ToolContext
from tests.cli_support import completed

pytestmark = pytest.mark.slow  # Hermes's code runs in its own process

BREW = "---\nname: brew\ndescription: How to brew tea\n---\n\nBoil water.\nSteep for 3 minutes.\n"

# Hermes's memory and skill tools with the gate on (no interactive prompt: they stage),
# stored in state.db the way its agent loop stores a turn.
HERMES_STAGES_IN_A_SESSION = r"""
import json
from hermes_state import SessionDB
from tools.memory_tool import load_on_disk_store, memory_tool
from tools.skill_manager_tool import skill_manage
store = load_on_disk_store()
db = SessionDB()
db.create_session("en-stage", source="cli", model="m")
out = {}

def turn(name, tool, arguments, run, call_id=True):
    db.append_message("en-stage", "user", "please remember " + name)
    call = {"type": "function", "function": {"name": tool, "arguments": json.dumps(arguments)}}
    if call_id:
        call["id"] = "call_" + name
    message = db.append_message("en-stage", "assistant", None, tool_calls=[call])
    result = run(**arguments)
    db.append_message("en-stage", "tool", result, tool_name=tool, tool_call_id=call.get("id"))
    db.append_message("en-stage", "assistant", "Staged for your approval.")
    out[name] = {"message_id": message, "pending_id": json.loads(result)["pending_id"]}

memory = lambda **a: memory_tool(store=store, **a)
turn("office", "memory", {"action": "add", "target": "user", "content": "東京オフィスは渋谷にある"}, memory)
turn("tea", "memory", {"action": "replace", "target": "memory", "old_text": "tea",
                       "content": "User likes green tea"}, memory)
turn("batch", "memory", {"target": "memory", "operations": [
    {"action": "add", "content": "CI runs on GitHub Actions"},
    {"action": "remove", "old_text": "Debian"}]}, memory, call_id=False)
turn("brew", "skill_manage", {"action": "patch", "name": "brew", "old_string": "3 minutes",
                              "new_string": "5 minutes"}, skill_manage)
print(json.dumps(out))
"""

# The same staging, but the turn never reaches state.db (approved before Hermes stored it).
HERMES_STAGES_UNSTORED = """
import json
from tools.memory_tool import load_on_disk_store, memory_tool
print(memory_tool(store=load_on_disk_store(), action="add", target="memory", content="Uses Zellij"))
"""


@pytest.fixture(scope="module")
def _staged_template(hermes, tmp_path_factory):
    root = tmp_path_factory.mktemp("staged") / "home"
    home = open_home(root)
    user = ToolContext(actor="user")
    for entry in ("User likes tea", "Old laptop runs Debian 11"):
        assert home.memory.add("memory", entry, user)["success"]
    assert skill_manage_tool(home, {"action": "create", "name": "brew", "content": BREW}, user)["success"]
    home.config_path.write_text("memory:\n  write_approval: true\nskills:\n  write_approval: true\n")
    home.close()
    return root, hermes.json(root, HERMES_STAGES_IN_A_SESSION)


@pytest.fixture
def staged(_staged_template, tmp_path):
    """A home whose Hermes session en-stage staged four writes (three memory, one skill), with the ids
    Hermes gave them: staged once per module (a Hermes process), copied for each test (its files name
    no path of their own)."""
    template, ids = _staged_template
    root = tmp_path / "home"
    shutil.copytree(template, root)
    return root, copy.deepcopy(ids)


def _workbench(root, *args):
    """What the CLI prints, run in this process: its words about Hermes's records are the subject."""
    proc = completed(*args, "--home", str(root))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def _block(text: str, message_id: int) -> list[str]:
    """The lines `sessions show` prints for one message: its own and the ``↳`` lines under it."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"#{message_id} "))
    rest = lines[start + 1 :]
    return [lines[start], *rest[: next((i for i, line in enumerate(rest) if line.startswith("#")), len(rest))]]


def test_sessions_show_lists_the_writes_hermes_staged_before_and_after_approval(staged):
    root, ids = staged
    for name in ("office", "tea", "batch", "brew"):
        block = _block(_workbench(root, "sessions", "show", "en-stage"), ids[name]["message_id"])
        assert any(f"↳ staged for approval ({ids[name]['pending_id']})" in line for line in block), block
    assert "add to user profile: 東京オフィスは渋谷にある" in "\n".join(
        _block(_workbench(root, "sessions", "show", "en-stage"), ids["office"]["message_id"])
    )

    _workbench(root, "pending", "approve", ids["office"]["pending_id"])
    _workbench(root, "pending", "approve", "all")
    shown = _workbench(root, "sessions", "show", "en-stage")
    office = _block(shown, ids["office"]["message_id"])
    assert office[1].startswith(f"    ↳ staged for approval ({ids['office']['pending_id']})"), office
    assert "    ↳ memory add (user) by user: 東京オフィスは渋谷にある" in office
    tea = _block(shown, ids["tea"]["message_id"])
    assert "    ↳ memory replace (memory) by user: User likes green tea" in tea
    assert f"staged for approval ({ids['tea']['pending_id']})" in tea[1]


def test_pending_show_names_the_session_and_message_that_staged_a_hermes_record(staged):
    """Hermes's record names no session: `pending show` (and the TUI's header, from the same preview)
    finds it from the staging call, as the Timeline does, before any decision rewrites the record."""
    root, ids = staged
    office = ids["office"]
    shown = json.loads(_workbench(root, "pending", "show", office["pending_id"], "--json"))
    assert (shown["session_id"], shown["message_id"]) == ("en-stage", office["message_id"])
    text = _workbench(root, "pending", "show", office["pending_id"])
    assert f"by Hermes   in session en-stage (message {office['message_id']})" in text.splitlines()[1]


def test_an_approved_hermes_write_names_its_message_in_provenance_journal_and_timeline(staged):
    root, ids = staged
    assert json.loads(_workbench(root, "pending", "approve", "all", "--json"))["failed"] == []

    data = json.loads(_workbench(root, "memory", "show", "--json"))
    office = data["user"]["origins"][data["user"]["entries"].index("東京オフィスは渋谷にある")]
    assert (office["actor"], office["proposed_by"], office["session_id"], office["message_id"], office["via"]) == (
        "user",
        "Hermes agent",  # Hermes staged it (its record has no actor of ours)
        "en-stage",
        ids["office"]["message_id"],
        "journal",
    )
    memory = dict(zip(data["memory"]["entries"], data["memory"]["origins"], strict=True))
    assert [(memory[e]["session_id"], memory[e]["message_id"]) for e in memory] == [
        ("en-stage", ids["tea"]["message_id"]),
        ("en-stage", ids["batch"]["message_id"]),
    ]
    text = _workbench(root, "memory", "show")
    assert f"session en-stage · message {ids['office']['message_id']}" in text
    assert "user (approved, proposed by Hermes agent)" in text  # the Memory screen's detail says the same

    home = open_home(root)
    try:
        rows = home.journal.query(subsystem="memory", actions=("add", "replace", "remove"), limit=10)
        approved = {r.after or r.before: r for r in rows if r.detail.get("pending_id")}
        for text_, name in (
            ("東京オフィスは渋谷にある", "office"),
            ("User likes green tea", "tea"),
            ("CI runs on GitHub Actions", "batch"),
            ("Old laptop runs Debian 11", "batch"),
        ):
            row = approved[text_]
            assert (row.actor, row.session_id, row.message_id) == ("user", "en-stage", ids[name]["message_id"])
            assert (row.detail["proposed_by"], row.detail["pending_id"]) == ("Hermes agent", ids[name]["pending_id"])
        [skill] = home.journal.query(subsystem="skills", actions=("patch",), limit=1)
        assert (skill.actor, skill.session_id, skill.message_id) == ("user", "en-stage", ids["brew"]["message_id"])
        for name in ids:
            [decision] = home.journal.query(subsystem="approvals", target=ids[name]["pending_id"], limit=1)
            assert (decision.action, decision.session_id, decision.message_id) == (
                "approve",
                "en-stage",
                ids[name]["message_id"],
            )
        story = history.story(home.memory, "user", "東京オフィスは渋谷にある")  # what `g` on the Memory screen reads
        assert (story.origin.session_id, story.origin.message_id) == ("en-stage", ids["office"]["message_id"])
    finally:
        home.close()

    timeline = json.loads(_workbench(root, "timeline", "--subsystem", "memory", "--json"))["rows"]
    [replace] = [r for r in timeline if r["action"] == "replace"]
    assert (replace["actor"], replace["session_id"], replace["message_id"]) == (
        "user",
        "en-stage",
        ids["tea"]["message_id"],
    )


def test_a_hermes_record_whose_turn_is_not_stored_is_approved_without_a_guessed_message(hermes, staged):
    root, ids = staged
    pending_id = json.loads(hermes.run(root, HERMES_STAGES_UNSTORED).stdout.strip().splitlines()[-1])["pending_id"]
    _workbench(root, "pending", "approve", pending_id)
    home = open_home(root)
    try:
        [row] = home.journal.query(subsystem="memory", actions=("add",), limit=1)
        assert (row.after, row.actor, row.session_id, row.message_id) == ("Uses Zellij", "user", None, None)
        assert row.detail["pending_id"] == pending_id
    finally:
        home.close()


def test_a_rejected_hermes_record_names_its_message_and_keeps_it_when_restored_and_approved(staged):
    root, ids = staged
    tea = ids["tea"]
    _workbench(root, "pending", "reject", tea["pending_id"])
    _workbench(root, "pending", "restore", tea["pending_id"])
    _workbench(root, "pending", "approve", tea["pending_id"])
    home = open_home(root)
    try:
        decisions = home.journal.query(subsystem="approvals", target=tea["pending_id"], limit=5)
        assert [(r.action, r.session_id, r.message_id) for r in decisions] == [
            (action, "en-stage", tea["message_id"]) for action in ("approve", "restore", "reject", "stage")
        ]
        [row] = home.journal.query(subsystem="memory", actions=("replace",), limit=1)
        assert (row.actor, row.session_id, row.message_id) == ("user", "en-stage", tea["message_id"])
    finally:
        home.close()
