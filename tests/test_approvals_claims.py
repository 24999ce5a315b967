"""A pending record's own ``action`` and ``summary`` are claims; approving applies its payload.

Anything with file tools (an agent under prompt injection) can rewrite a record Hermes staged so
its summary says one thing and its payload does another. Every label is derived from the payload,
and a record whose claims contradict it is named and refused until it is rejected. Records the
real Hermes Agent 0.19.0 stages (each kind) never read as such.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from textual.widgets import OptionList, Static

from engine import open_home
from engine.approvals.labels import claim_problem
from engine.skills.manage import skill_manage_tool
from engine.timeline import Timeline
from engine.tools import ToolContext
from tests.hermes_support import workbench_cmd
from tests.tui_support import make_app, settle, wait_for
from workbench.screens.dialogs import ConfirmDialog

pytestmark = pytest.mark.slow

USER = ToolContext(actor="user")
GATES = "memory:\n  write_approval: true\nskills:\n  write_approval: true\n"


def _skill(name: str) -> str:
    return f"---\nname: {name}\ndescription: Notes on {name}\n---\n\nStep one.\nStep two.\n"


HERMES_STAGES_EACH_KIND = """
import json
from tools.memory_tool import load_on_disk_store, memory_tool
from tools.skill_manager_tool import skill_manage
store = load_on_disk_store()
out = [json.loads(memory_tool(store=store, **c)) for c in [
    dict(action="add", target="memory", content="CI runs on GitHub Actions"),
    dict(action="replace", target="memory", old_text="tea", content="User likes green tea"),
    dict(action="remove", target="user", old_text="Sam"),
    dict(target="memory", operations=[dict(action="add", content="x"), dict(action="remove", old_text="tea")]),
]]
out += [json.loads(skill_manage(**c)) for c in [
    dict(action="create", name="gamma", content=%r),
    dict(action="edit", name="beta-logs", content=%r),
    dict(action="patch", name="beta-logs", old_string="Step one.", new_string="Step 1."),
    dict(action="write_file", name="beta-logs", file_path="references/x.md", file_content="notes"),
    dict(action="remove_file", name="beta-logs", file_path="references/y.md"),
    dict(action="delete", name="delta-renamed"),
]]
print(json.dumps(out))
"""


def _home(tmp_path):
    root = tmp_path / "home"
    home = open_home(root)
    assert home.memory.add("memory", "User likes tea", USER)["success"]
    assert home.memory.add("user", "Name is Sam", USER)["success"]
    for name in ("beta-logs", "delta-renamed"):
        assert skill_manage_tool(home, {"action": "create", "name": name, "content": _skill(name)}, USER)["success"]
    home.config_path.write_text(GATES, encoding="utf-8")
    home.close()
    return root


def _staged_by_hermes(hermes, root):
    code = HERMES_STAGES_EACH_KIND % (_skill("gamma"), _skill("beta-logs") + "More.\n")
    results = hermes.json(root, code)
    assert all(r.get("staged") for r in results), results
    return [r["pending_id"] for r in results]


def _only(root, keep: str) -> None:
    """Drop every pending record but ``keep`` (Hermes's own delete of the same skill among them)."""
    for path in [*(root / "pending" / "skills").iterdir(), *(root / "pending" / "memory").iterdir()]:
        if path.stem != keep:
            path.unlink()


def _forge(root, pending_id: str, new_id: str, payload: dict) -> dict:
    """A copy of a Hermes record under ``new_id`` whose payload alone is changed (as a file tool can)."""
    folder = root / "pending" / "skills"
    record = json.loads((folder / f"{pending_id}.json").read_text(encoding="utf-8"))
    forged = {**record, "id": new_id, "payload": payload}
    (folder / f"{new_id}.json").write_text(json.dumps(forged), encoding="utf-8")
    return record


def _timeline(home, target: str) -> list[str]:
    return [row.summary for row in Timeline(home).page(subsystem="approvals") if row.target == target]


def _workbench(root, *args):
    return subprocess.run(
        workbench_cmd(*args, "--home", str(root)), capture_output=True, text=True, timeout=60, check=False
    )


def test_what_hermes_stages_is_labelled_as_it_says_and_never_flagged(hermes, tmp_path):
    root = _home(tmp_path)
    ids = _staged_by_hermes(hermes, root)
    home = open_home(root)
    try:
        records = {r.id: r for r in home.approvals.list()}
        assert sorted(records) == sorted(ids)
        for record in records.values():
            assert record.claim_problem is None, (record.claimed_summary, record.summary)
            assert record.action == record.claimed_action
            if record.subsystem == "skills":  # worded as Hermes words it, from the payload alone
                assert record.summary == record.claimed_summary
        outcome = home.approvals.approve_all("memory")
        assert not outcome["failed"] and len(outcome["approved"]) == 4
    finally:
        home.close()


def test_a_record_whose_payload_was_swapped_shows_what_it_does_and_is_refused(hermes, tmp_path):
    root = _home(tmp_path)
    staged = _staged_by_hermes(hermes, root)[7]  # the write_file
    _only(root, staged)
    claimed = _forge(root, staged, "bbbb0001", {"action": "delete", "name": "delta-renamed"})
    assert claimed["summary"] == "write references/x.md in 'beta-logs'" and claimed["action"] == "write_file"

    listed = _workbench(root, "pending", "list", "--subsystem", "skills")
    row = next(line for line in listed.stdout.splitlines() if line.startswith("  bbbb0001"))
    assert row.endswith("delete skill 'delta-renamed'"), listed.stdout
    assert "⚠ Its record says “write_file: write references/x.md in 'beta-logs'”" in listed.stdout
    data = json.loads(_workbench(root, "pending", "show", "bbbb0001", "--json").stdout)
    assert (data["action"], data["summary"]) == ("delete", "delete skill 'delta-renamed'")
    assert data["error"] == data["claim_problem"] and "would delete skill 'delta-renamed'" in data["error"]
    shown = _workbench(root, "pending", "show", "bbbb0001").stdout
    assert shown.startswith("# Pending skills write bbbb0001: delete skill 'delta-renamed'\n")
    assert "would fail: Its record says" in shown

    approved = _workbench(root, "pending", "approve", "all", "--subsystem", "skills", "--json")
    outcome = json.loads(approved.stdout)
    failed = {item["id"]: item["error"] for item in outcome["failed"]}
    assert approved.returncode != 0 and failed["bbbb0001"] == data["claim_problem"]
    assert (root / "skills" / "delta-renamed" / "SKILL.md").is_file()  # never deleted
    assert [item["summary"] for item in outcome["approved"]] == ["write references/x.md in 'beta-logs'"]

    home = open_home(root)
    try:
        assert [r.id for r in home.approvals.list()] == ["bbbb0001"]  # refused, so still pending
        summaries = _timeline(home, "bbbb0001")
        assert any(
            s.startswith("staged skills proposal bbbb0001 in Hermes: delete skill 'delta-renamed'") for s in summaries
        )
        assert not any("references/x.md" in s for s in summaries), summaries
        assert home.approvals.reject("bbbb0001")["success"]
        assert "rejected skills proposal bbbb0001: delete skill 'delta-renamed'" in _timeline(home, "bbbb0001")
    finally:
        home.close()


def test_a_claim_quoted_in_a_refusal_keeps_its_line_break():
    """The refusal quoted a record's claim with its line break folded into a space (``“write: notes daily”``),
    where every summary shows ⏎: the claim read as other text than the record holds."""
    said = claim_problem("write_file", "write\nnotes daily", "delete_file", "delete references/x.md")
    assert said is not None and said.startswith("Its record says “write_file: write⏎notes daily”"), said


def test_a_memory_record_claiming_an_add_over_a_remove_is_refused(tmp_path):
    root = _home(tmp_path)
    folder = root / "pending" / "memory"
    folder.mkdir(parents=True, exist_ok=True)
    record = {
        "id": "cccc0001",
        "subsystem": "memory",
        "action": "add",
        "summary": "add to memory: likes jazz",
        "origin": "foreground",
        "created_at": 1.0,
        "payload": {"action": "remove", "target": "memory", "old_text": "tea"},
    }
    (folder / "cccc0001.json").write_text(json.dumps(record), encoding="utf-8")
    stale = {**record, "id": "cccc0002", "payload": {"action": "remove", "target": "memory", "old_text": "jazz"}}
    (folder / "cccc0002.json").write_text(json.dumps(stale), encoding="utf-8")
    home = open_home(root)
    try:
        error = home.approvals.preview("cccc0002")["error"]  # both reasons it is refused, the lie first
        assert error.startswith("Its record says") and "Besides: " in error and "jazz" in error.split("Besides: ")[1]
        pending = home.approvals.get("cccc0001")
        assert (pending.action, pending.summary) == ("remove", "remove from memory: tea")
        result = home.approvals.approve("cccc0001")
        assert not result["success"] and "“add: add to memory: likes jazz”" in result["error"]
        assert home.memory.entries("memory") == ["User likes tea"]
        assert json.loads((folder / "cccc0001.json").read_text(encoding="utf-8")) == record  # left as it was
    finally:
        home.close()


@pytest.mark.anyio
async def test_the_tui_shows_what_a_swapped_record_does_and_refuses_it(hermes, tmp_path):
    root = _home(tmp_path)
    staged = _staged_by_hermes(hermes, root)[7]
    _only(root, staged)
    _forge(root, staged, "00000001", {"action": "delete", "name": "delta-renamed"})
    (root / "pending" / "skills" / f"{staged}.json").unlink()
    home = open_home(root)
    app = make_app(home, tmp_path)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("4")
            await settle(pilot)
            queue = app.screen.query_one("#queue", OptionList)
            row = str(queue.get_option_at_index(0).prompt)
            assert row.startswith("skill  delete") and "delete skill 'delta-renamed'" in row
            assert "⚠ not what it says" in row and "references/x.md" not in row
            title = str(app.screen.query_one("#proposal-title", Static).content)
            assert title.startswith("skills delete 00000001")
            warnings = app.screen.query_one("#proposal-warnings", Static)
            await wait_for(pilot, lambda: "Its record says" in str(warnings.content), what="the refusal")
            await pilot.press("a")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
            body = app.screen.detail
            assert body.startswith("delete skill 'delta-renamed'") and "Would be refused now" in body
            await pilot.press("y")
            await settle(pilot)
            assert (root / "skills" / "delta-renamed" / "SKILL.md").is_file()
            assert [r.id for r in home.approvals.list()] == ["00000001"]
    finally:
        home.close()
