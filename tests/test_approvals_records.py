"""The pending store and the gate: layout, staging, listing, hostile ids, malformed files."""

from __future__ import annotations

import json

import pytest

from engine import open_home
from engine.errors import ReadOnlyError, WorkbenchError
from engine.events import PendingChanged
from engine.tools import BACKGROUND_REVIEW, FOREGROUND
from tests.hermes_support import hermes_record


def _stage(home, subsystem="memory", action="add", **payload):
    return home.approvals.stage(
        subsystem=subsystem,
        action=action,
        summary=f"{action} to {subsystem}: x",
        origin=FOREGROUND,
        payload={"action": action, **payload},
        session_id="s1",
        message_id=7,
    )


def test_stage_writes_hermes_layout_and_journals_and_announces(home):
    seen = []
    home.bus.subscribe(seen.append, PendingChanged)
    record = _stage(home, target="memory", content="User likes tea")
    path = home.pending_dir / "memory" / f"{record.id}.json"
    on_disk = json.loads(path.read_text())
    assert on_disk["id"] == record.id and len(record.id) == 8 and int(record.id, 16) >= 0
    for key in ("id", "subsystem", "action", "summary", "origin", "created_at", "payload"):
        assert key in on_disk
    assert on_disk["payload"] == {"action": "add", "target": "memory", "content": "User likes tea"}
    assert on_disk["created_at"] == home.clock.now() and on_disk["origin"] == "foreground"
    [row] = home.journal.query(subsystem="approvals")
    assert (row.action, row.target, row.session_id, row.message_id) == ("stage", record.id, "s1", 7)
    assert row.detail["payload"]["content"] == "User likes tea"
    assert seen == [
        PendingChanged(
            actor="agent", session_id="s1", journal_id=row.id, subsystem="memory", pending_id=record.id, action="staged"
        )
    ]
    assert not list(path.parent.glob(".tmp_*"))


def test_records_survive_reopening_and_list_oldest_first(tmp_path, clock):
    home = open_home(tmp_path / "h", clock=clock)
    first = _stage(home, "skills", "create", name="a")
    clock.advance(5)
    second = _stage(home, "memory", "add", target="user", content="b")
    home.close()
    again = open_home(tmp_path / "h", clock=clock)
    assert [r.id for r in again.approvals.list()] == [first.id, second.id]
    assert [r.id for r in again.approvals.list("skills")] == [first.id]
    assert again.approvals.get(second.id) == second
    assert again.approvals.count() == 2
    again.close()


def test_hermes_written_record_without_our_extra_keys_loads(home):
    record = {
        "id": "0a1b2c3d",
        "subsystem": "memory",
        "action": "remove",
        "summary": "remove from memory: x",
        "origin": "background_review",
        "created_at": 1.5,
        "payload": {"action": "remove", "target": "memory", "old_text": "x", "matched_entry": "x y"},
    }
    (home.pending_dir / "memory" / "0a1b2c3d.json").write_text(json.dumps(record))
    loaded = home.approvals.get("0a1b2c3d")
    assert loaded.origin == BACKGROUND_REVIEW and loaded.session_id is None
    assert (loaded.actor, loaded.staged_by) == ("review", "hermes")  # Hermes's review proposed it, not our agent
    assert loaded.payload["matched_entry"] == "x y"
    record.update(id="0a1b2c3e", origin="foreground")
    (home.pending_dir / "memory" / "0a1b2c3e.json").write_text(json.dumps(record))
    foreground = home.approvals.get("0a1b2c3e")
    assert (foreground.actor, foreground.staged_by) == ("agent", "hermes")
    record.update(id="0a1b2c3f", session_id=True, message_id="7")  # (found by the fuzz test: a bool crashed show)
    (home.pending_dir / "memory" / "0a1b2c3f.json").write_text(json.dumps(record))
    odd = home.approvals.get("0a1b2c3f")
    assert (odd.session_id, odd.message_id) == (None, None)


def test_records_we_stage_say_so_and_keep_saying_so_after_a_reject_and_restore(home):
    ours = home.approvals.stage(
        subsystem="memory",
        action="add",
        summary="s",
        origin=BACKGROUND_REVIEW,
        actor="review",
        payload={"action": "add", "target": "memory", "content": "Uses Postgres"},
    )
    assert json.loads((home.pending_dir / "memory" / f"{ours.id}.json").read_text())["staged_by"] == "workbench"
    payload = {"action": "add", "target": "memory", "content": "Deploys on Fridays"}
    hermes_record(home, "0a1b2c3d", payload, origin="background_review")
    assert home.approvals.get("0a1b2c3d").created_at == home.clock.now()  # (staged now, as the helper dates it)
    for record in (ours, home.approvals.get("0a1b2c3d")):
        home.approvals.reject(record.id)
        home.approvals.restore(record.id)
    back = {r.id: (r.actor, r.staged_by) for r in home.approvals.list()}
    assert back == {ours.id: ("review", "workbench"), "0a1b2c3d": ("review", "hermes")}


@pytest.mark.parametrize(
    "bad",
    [
        "../../etc",
        "0A1B2C3D",
        "0a1b2c3",
        "0a1b2c3d4",
        "0a1b2c3g",
        "",
        "0a1b/c3d",
        "0a1b2c3d.json",
        " 0a1b2c3d",
        "0a1b2c3d\n",
        None,
    ],
)
def test_hostile_or_malformed_ids_are_refused(home, bad):
    with pytest.raises(WorkbenchError, match="Invalid pending id"):
        home.approvals.get(bad)


def test_unknown_id_is_a_clear_error(home):
    with pytest.raises(WorkbenchError, match="No pending write with id 'deadbeef'"):
        home.approvals.get("deadbeef")


def _deep(levels: int) -> list:
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


def test_malformed_record_files_are_reported_skipped_and_kept(home):
    good = _stage(home, content="ok", target="memory")
    folder = home.pending_dir / "memory"
    bad_files = {
        "11111111.json": "{not json",
        "22222222.json": json.dumps(["a list"]),
        "33333333.json": json.dumps({"id": "44444444", "payload": {}, "action": "add", "created_at": 1}),
        "55555555.json": json.dumps({"id": "55555555", "action": "add", "created_at": 1}),
        "notanid.json": json.dumps({"id": "notanid"}),
        "66666666.json": b"\xff\xfe\x00garbage",
        "77777777.json": "[" * 100_000,  # past Python's stack when decoded (found by the file fuzz)
        "88888888.json": json.dumps({"id": "88888888", "payload": {"a": _deep(80)}}),
        # an actor the journal takes no row of made every catch-up, and so `workbench timeline`, fail
        "99999999.json": json.dumps(
            {"id": "99999999", "action": "add", "created_at": 1, "staged_by": "hermes", "actor": "bogus", "payload": {}}
        ),
    }
    for name, content in bad_files.items():
        (folder / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    assert [r.id for r in home.approvals.list()] == [good.id]
    problems = {p.path.rsplit("/", 1)[-1]: p.error for p in home.approvals.problems()}
    assert set(problems) == set(bad_files)
    assert problems["11111111.json"].endswith(
        "not valid JSON (Expecting property name enclosed in double quotes at line 1 column 2)"
    )
    assert "does not match the file name" in problems["33333333.json"]
    assert "payload" in problems["55555555.json"]
    assert "nested more than" in problems["77777777.json"] and "nested more than" in problems["88888888.json"]
    assert "actor 'bogus' is not one of" in problems["99999999.json"]
    assert home.approvals.catch_up() == [] and home.approvals.count() == 1  # the catch-up carries on
    for name in bad_files:
        assert (folder / name).exists()
    with pytest.raises(WorkbenchError, match="left untouched"):
        home.approvals.get("11111111")


def test_gate_follows_config_and_the_background_delete_gate(home):
    gate = home.approvals.should_stage
    assert not gate("memory", "add", FOREGROUND)
    assert not gate("skills", "create", BACKGROUND_REVIEW)
    assert not gate("memory", "add", BACKGROUND_REVIEW)
    assert gate("memory", "replace", BACKGROUND_REVIEW) and gate("memory", "remove", BACKGROUND_REVIEW)
    assert not gate("memory", "replace", FOREGROUND)
    assert gate("memory", "batch", BACKGROUND_REVIEW, operations=[{"action": "add"}, {"action": "remove"}])
    assert not gate("memory", "batch", BACKGROUND_REVIEW, operations=[{"action": "add"}])
    assert gate("memory", "batch", BACKGROUND_REVIEW)
    home.config_path.write_text("memory:\n  write_approval: 'approve'\nskills:\n  write_approval: 'on'\n")
    home.reload_config()
    assert gate("memory", "add", FOREGROUND) and gate("skills", "patch", FOREGROUND)
    with pytest.raises(WorkbenchError, match="Unknown subsystem"):
        gate("../x", "add", FOREGROUND)


def test_stage_refuses_bad_input_and_writes_nothing(home, tmp_path):
    with pytest.raises(WorkbenchError, match="Unknown subsystem"):
        home.approvals.stage(subsystem="etc", action="add", summary="", origin=FOREGROUND, payload={})
    with pytest.raises(WorkbenchError, match="Unknown origin"):
        home.approvals.stage(subsystem="memory", action="add", summary="", origin="cron", payload={})
    with pytest.raises(WorkbenchError, match="JSON"):
        home.approvals.stage(subsystem="memory", action="add", summary="", origin=FOREGROUND, payload={"x": object()})
    assert home.approvals.count() == 0 and not home.journal.query(subsystem="approvals", include_pending=True)
    _stage(home, content="x", target="memory")
    home.close()
    read_only = open_home(home.root, read_only=True)
    with pytest.raises(ReadOnlyError):
        _stage(read_only, content="y", target="memory")
    assert read_only.approvals.count() == 1
    read_only.close()


def test_listing_notices_records_changed_or_removed_since_the_last_scan(home):
    record = _stage(home, content="v1", target="memory")
    other = _stage(home, content="x", target="memory")
    assert home.approvals.count() == 2
    path = home.pending_dir / "memory" / f"{record.id}.json"
    data = json.loads(path.read_text())
    data["summary"] = "edited by hand, longer than before"
    path.write_text(json.dumps(data))  # in place: same inode
    assert {r.id: r.claimed_summary for r in home.approvals.list()}[record.id] == "edited by hand, longer than before"
    path.write_text("{")
    assert [r.id for r in home.approvals.list()] == [other.id] and len(home.approvals.problems()) == 1
    path.unlink()
    assert home.approvals.count() == 1 and home.approvals.problems() == []
