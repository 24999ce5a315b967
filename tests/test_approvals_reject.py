"""Rejecting proposals: the record goes, the journal keeps all of it."""

from __future__ import annotations

import json

import pytest

from engine import open_home
from engine.errors import ReadOnlyError, WorkbenchError
from engine.events import PendingChanged
from engine.tools import FOREGROUND
from tests.cli_support import completed


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


def test_a_rejection_is_undone_from_the_journal_exactly_as_it_was(home):
    record = home.approvals.stage(
        subsystem="memory",
        action="add",
        summary="add to memory: User likes tea",
        origin=FOREGROUND,
        payload={"action": "add", "target": "memory", "content": "User likes tea"},
        session_id="s1",
        message_id=7,
    )
    home.approvals.reject(record.id)
    seen = []
    home.bus.subscribe(seen.append, PendingChanged)
    result = home.approvals.restore(record.id)
    assert result["success"] and "waits for approval again" in result["message"]
    assert home.approvals.get(record.id) == record  # same id, payload, origin, age, actor, session and message
    [row] = home.journal.query(subsystem="approvals", target=record.id, limit=1)
    assert (row.action, row.actor, row.status) == ("restore", "user", "done") and row.detail[
        "payload"
    ] == record.payload
    assert [(e.action, e.pending_id, e.journal_id) for e in seen] == [("restored", record.id, row.id)]
    assert home.approvals.approve(record.id)["success"]
    assert "User likes tea" in home.memory.entries("memory")


def test_restoring_is_refused_when_anything_happened_since_and_changes_nothing(home):
    record = _stage(home, "User likes tea")
    with pytest.raises(WorkbenchError, match="no rejection"):
        home.approvals.restore(record.id)  # still pending: never rejected
    home.approvals.reject(record.id)
    first_reject = home.journal.query(subsystem="approvals", target=record.id, limit=1)[0].id
    home.approvals.restore(record.id)
    with pytest.raises(WorkbenchError, match="changed after that rejection"):
        home.approvals.restore(record.id, journal_id=first_reject)  # restored already
    home.approvals.approve(record.id)
    with pytest.raises(WorkbenchError, match="changed after that rejection"):
        home.approvals.restore(record.id, journal_id=first_reject)
    assert home.approvals.list() == [] and home.approvals.restore_problem(record.id, first_reject)
    with pytest.raises(WorkbenchError, match="Invalid pending id"):
        home.approvals.restore("../../etc")


def test_a_rejected_unusable_file_is_not_rebuilt_but_pointed_to(home):
    broken = home.pending_dir / "memory" / "0badc0de.json"
    broken.write_bytes(b'{"id": "0badc0de", "payload": \xff')
    home.approvals.reject("0badc0de")
    with pytest.raises(WorkbenchError, match="unreadable file when it was rejected"):
        home.approvals.restore("0badc0de")
    assert not broken.exists() and home.approvals.list() == []


def test_the_row_that_dropped_an_unreadable_file_says_so_and_shows_its_text(home):
    """The Timeline said "rejected memory proposal 0badc0de: " (nothing after the colon), and the bytes
    kept to copy back by hand could be read only with sqlite: `timeline show` prints them now."""
    from engine.timeline import Timeline
    from tests.test_curator_cli import wb

    broken = home.pending_dir / "memory" / "0badc0de.json"
    broken.write_bytes(b'{"id": "0badc0de", "content": "tea\x1b[31m", \xff')
    row_id = home.approvals.reject("0badc0de")["message"].rpartition("row ")[2].rstrip(".")
    [row] = [r for r in Timeline(home).page(limit=10) if r.action == "reject"]
    assert str(row.id) == row_id
    assert row.summary.startswith("dropped unreadable memory record 0badc0de: not UTF-8 text (byte 0xff")
    home.close()
    code, data = wb(home.root, "timeline", "show", row_id)
    assert code == 0 and data["kept_text"] == '{"id": "0badc0de", "content": "tea\x1b[31m", \\xff'
    shown = completed("--home", str(home.root), "timeline", "show", row_id)
    assert shown.returncode == 0 and "\x1b" not in shown.stdout
    assert shown.stdout.endswith(
        'kept in this row (--json gives it as kept):\n{"id": "0badc0de", "content": "tea␛[31m", \\xff\n'
    )


def test_a_restore_a_killed_process_left_half_done_is_settled_by_what_is_on_disk(home):
    record = _stage(home, "User likes tea")
    home.approvals.reject(record.id)
    entry = home.journal.begin("approvals", "restore", record.id, actor="user", detail={"subsystem": "memory"})
    assert home.approvals.reconcile() == [entry]  # killed before the record was written
    assert home.journal.get(entry).status == "abandoned" and home.approvals.list() == []
    assert home.approvals.restore(record.id)["success"]  # the rejection is still the newest done row
    home.approvals.reject(record.id)
    entry = home.journal.begin("approvals", "restore", record.id, actor="user", detail={"subsystem": "memory"})
    home.approvals.store.write(record)  # killed after the write, before the commit
    assert home.approvals.reconcile() == [entry]
    assert home.journal.get(entry).status == "done" and [r.id for r in home.approvals.list()] == [record.id]


def test_the_timeline_reverts_a_rejection_and_the_cli_restores_one(home):
    from engine.timeline import Timeline
    from tests.test_curator_cli import wb

    record = _stage(home, "User likes tea")
    home.approvals.reject(record.id)
    timeline = Timeline(home)
    [row] = [r for r in timeline.page(limit=10) if r.action == "reject"]
    assert "rejected memory proposal" in row.summary
    assert timeline.preview(row.id)["changes"][0]["undo"] == f"put proposal {record.id} back in the queue"
    outcome = timeline.revert(row.id)
    assert outcome["success"] and [r.id for r in home.approvals.list()] == [record.id]
    assert timeline.preview(row.id)["refused"], "a second revert of the same rejection is refused"
    home.approvals.reject(record.id)
    home.close()
    code, data = wb(home.root, "pending", "restore", record.id)
    assert code == 0 and data["success"] and data["id"] == record.id
    code, data = wb(home.root, "pending", "restore", record.id)
    assert code == 1 and "no rejection" in data["error"]  # the newest row is the restore


def test_a_folder_named_like_a_record_is_named_and_never_deleted(home):
    folder = home.pending_dir / "memory" / "2badc0de.json"
    (folder / "notes").mkdir(parents=True)
    (folder / "notes" / "keep.txt").write_text("someone's notes")
    [problem] = home.approvals.problems()
    assert (problem.id, problem.subsystem, problem.folder, problem.error) == (
        "2badc0de",
        "memory",
        True,
        "it is a folder, not a file",
    )
    assert "never deletes a folder" in problem.reject_refusal
    with pytest.raises(WorkbenchError, match="cannot be rejected: it is a folder, not a file") as refused:
        home.approvals.reject("2badc0de")  # (it said "No pending write with id", as if there were none)
    assert "Nothing was changed" in refused.value.message
    assert (folder / "notes" / "keep.txt").read_text() == "someone's notes"
    assert home.journal.query(subsystem="approvals") == []
    outcome = home.approvals.reject_all(unreadable=True)
    assert outcome["rejected"] == [] and folder.is_dir()


def test_reject_all_drops_the_unreadable_files_only_when_asked(home):
    record = _stage(home, "User likes tea")
    broken = home.pending_dir / "memory" / "0badc0de.json"
    broken.write_bytes(b'{"id": "0badc0de", "payload": \xff')
    nameless = home.pending_dir / "memory" / "notes.json"
    nameless.write_text("{}")
    assert home.approvals.reject_all()["rejected"][0]["id"] == record.id  # (`pending reject all`)
    assert broken.exists()
    record = _stage(home, "User likes coffee")
    outcome = home.approvals.reject_all(only=[record.id, "0badc0de"], unreadable=True)
    assert [(r["id"], r.get("unusable", False)) for r in outcome["rejected"]] == [
        (record.id, False),
        ("0badc0de", True),
    ]
    assert not broken.exists() and nameless.exists()  # (no id names it: moved by hand, never guessed)
    [row] = home.journal.query(subsystem="approvals", target="0badc0de", limit=1)
    assert row.action == "reject" and row.detail["raw"] == '{"id": "0badc0de", "payload": \\xff'


def test_an_unreadable_file_fixed_before_its_reject_is_not_dropped_as_unreadable(home, monkeypatch):
    """The unreadable file was read before the folder's lock was taken: one fixed by hand (the remedy
    the screen suggests) in between was dropped as "unusable" all the same, its proposal never seen,
    and `restore` then refused it as an unreadable file. And the TUI's question about an unreadable
    row rejected what the file held when it had been fixed while the question was open."""
    record = _stage(home, "User likes tea")
    path = home.pending_dir / "memory" / f"{record.id}.json"
    good = path.read_bytes()
    path.write_bytes(b"{ broken")
    looked = home.approvals.store.problem

    def fixed_meanwhile(*args, **kwargs):  # (called under the lock, after the first read)
        path.write_bytes(good)
        return looked(*args, **kwargs)

    monkeypatch.setattr(home.approvals.store, "problem", fixed_meanwhile)
    with pytest.raises(WorkbenchError, match="reads as a record now") as refused:
        home.approvals.reject(record.id)
    assert refused.value.message.endswith("Nothing was changed.")
    monkeypatch.undo()
    assert path.read_bytes() == good and [r.id for r in home.approvals.list()] == [record.id]
    with pytest.raises(WorkbenchError, match="reads as a record now"):  # asked about it as unreadable
        home.approvals.reject(record.id, unreadable=True)
    assert [r.id for r in home.approvals.list()] == [record.id]
    assert home.approvals.reject(record.id)["success"]  # (asked about as the proposal it is)


def test_the_bytes_an_unreadable_reject_judges_are_the_bytes_it_keeps(home, monkeypatch):
    """Under the lock the file was parsed, then read again for the journal: fixed in between, its good
    record was kept as "unusable" bytes and its file deleted, its proposal never seen."""
    record = _stage(home, "User likes tea")
    path = home.pending_dir / "memory" / f"{record.id}.json"
    good = path.read_bytes()
    path.write_bytes(b"{ broken")
    read = home.approvals.store.raw

    def fixed_just_before(where):  # (the fix lands between the file's check and the read the journal keeps)
        path.write_bytes(good)
        return read(where)

    monkeypatch.setattr(home.approvals.store, "raw", fixed_just_before)
    with pytest.raises(WorkbenchError, match="reads as a record now"):
        home.approvals.reject(record.id)
    monkeypatch.undo()
    assert path.read_bytes() == good and [r.id for r in home.approvals.list()] == [record.id]
    assert not [row for row in home.journal.query(subsystem="approvals", limit=20) if row.action == "reject"]


def test_reject_all_refuses_what_changed_kind_since_its_question(home):
    """R's question lists each id as a record or as an unreadable file; a file fixed by hand before the
    answer was rejected as a record nobody saw, and a record that broke was dropped as unreadable,
    which u cannot put back. Given what the question showed, each is refused, as r refuses it."""
    record = _stage(home, "User likes tea")
    path = home.pending_dir / "memory" / f"{record.id}.json"
    good = path.read_bytes()
    broken = home.pending_dir / "memory" / "0badc0de.json"
    broken.write_bytes(b"{ broken")
    shown = {"0badc0de"}  # as the question listed them; then each changes kind
    path.write_bytes(b"{ broken too")
    fixed = json.loads(good)
    fixed["id"] = "0badc0de"
    broken.write_text(json.dumps(fixed))
    outcome = home.approvals.reject_all(only=[record.id, "0badc0de"], unreadable=True, shown_unreadable=shown)
    assert outcome["rejected"] == []
    errors = {f["id"]: f["error"] for f in outcome["failed"]}
    assert "cannot be read now (it changed since it was shown" in errors[record.id]
    assert "reads as a record now" in errors["0badc0de"]
    assert path.read_bytes() == b"{ broken too" and broken.exists()


def test_pending_reject_all_names_the_unreadable_file_it_left_and_how_to_drop_it(home):
    """It printed only "Rejected 0 pending write(s)." and left the file unnamed."""
    (home.pending_dir / "memory").mkdir(parents=True, exist_ok=True)
    broken = home.pending_dir / "memory" / "0badc0de.json"
    broken.write_bytes(b"{broken")
    home.close()
    done = completed("pending", "reject", "all", "--home", str(home.root))
    assert done.returncode == 0 and "Rejected 0 pending writes." in done.stdout
    assert (
        f"Left as it is: {broken} cannot be read (not valid JSON" in done.stdout
        and "Drop it with `workbench pending reject 0badc0de` (its bytes stay in the journal)" in done.stdout
    )
    assert broken.exists()  # (reject all lists nothing first: it never drops a file nobody saw)
