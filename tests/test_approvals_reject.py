"""Rejecting proposals: the record goes, the journal keeps all of it."""

from __future__ import annotations

import pytest

from engine import open_home
from engine.errors import ReadOnlyError, WorkbenchError
from engine.events import PendingChanged
from engine.tools import FOREGROUND


def _stage(home, content, subsystem="memory"):
    return home.approvals.stage(
        subsystem=subsystem,
        action="add",
        summary=f"add to memory: {content}",
        origin=FOREGROUND,
        payload={"action": "add", "target": "memory", "content": content},
    )


def test_reject_deletes_the_record_and_journals_the_payload(home):
    record = _stage(home, "User likes tea")
    seen = []
    home.bus.subscribe(seen.append, PendingChanged)
    result = home.approvals.reject(record.id)
    assert result["success"] and result["id"] == record.id
    assert not (home.pending_dir / "memory" / f"{record.id}.json").exists()
    [row] = home.journal.query(subsystem="approvals", target=record.id, limit=1)
    assert (row.action, row.actor, row.status) == ("reject", "user", "done")
    assert row.detail["payload"] == record.payload and row.detail["summary"] == record.summary
    assert [e.action for e in seen] == ["rejected"] and seen[0].journal_id == row.id
    with pytest.raises(WorkbenchError, match="No pending write"):
        home.approvals.reject(record.id)


def test_reject_all_drops_everything_in_scope(home):
    keep = _stage(home, "a skill", subsystem="skills")
    drop = [_stage(home, f"fact {i}") for i in range(3)]
    outcome = home.approvals.reject_all("memory")
    assert sorted(r["id"] for r in outcome["rejected"]) == sorted(r.id for r in drop)
    assert outcome["failed"] == []
    assert [r.id for r in home.approvals.list()] == [keep.id]


def test_read_only_home_cannot_decide(home):
    record = _stage(home, "x")
    home.close()
    read_only = open_home(home.root, read_only=True)
    with pytest.raises(ReadOnlyError):
        read_only.approvals.reject(record.id)
    assert read_only.approvals.get(record.id) == record
    read_only.close()


def test_an_unusable_record_is_rejected_only_by_id_and_its_bytes_stay_in_the_journal(home):
    good = _stage(home, "User likes tea")
    broken = home.pending_dir / "memory" / "0badc0de.json"
    broken.write_bytes(b'{"id": "0badc0de", "payload": \xff')
    with pytest.raises(WorkbenchError, match="pending reject 0badc0de"):
        home.approvals.approve("0badc0de")
    assert home.approvals.reject_all()["rejected"][0]["id"] == good.id
    assert broken.exists(), "reject all only drops records it can read"
    seen = []
    home.bus.subscribe(seen.append, PendingChanged)
    result = home.approvals.reject("0badc0de")
    assert result["success"] and not broken.exists()
    [row] = home.journal.query(subsystem="approvals", target="0badc0de", limit=1)
    assert (row.action, row.status) == ("reject", "done")
    assert row.detail["raw"] == '{"id": "0badc0de", "payload": \\xff' and "0xff" in row.detail["unusable"]
    assert [(e.action, e.pending_id) for e in seen] == [("rejected", "0badc0de")]
    assert home.approvals.problems() == []
