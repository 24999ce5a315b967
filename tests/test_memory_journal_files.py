"""The memory journal keeps entry-level rows and only the file snapshots it still needs."""

from __future__ import annotations

import json

from engine import FixedClock, open_home
from engine.journal import content_hash
from engine.tools import ToolContext


def _home(tmp_path):
    return open_home(tmp_path / "h", clock=FixedClock(1796040000.0))


def _files(home) -> list[str]:
    return [r[0] for r in home.journal.connection().execute("SELECT sha FROM journal_files")]


def test_many_writes_keep_one_snapshot_per_target(tmp_path):
    home = _home(tmp_path)
    ctx = ToolContext(actor="user")
    for i in range(30):
        assert home.memory.add("memory", f"fact {i}", ctx)["success"]
    assert home.memory.add("user", "prefers tea", ctx)["success"]
    assert home.memory.replace("memory", "fact 3", "fact three", ctx)["success"]
    memory_raw = home.memory.read("memory").raw
    assert sorted(_files(home)) == sorted({content_hash(memory_raw), content_hash(home.memory.read("user").raw)})
    rows = home.memory.history("memory", limit=100)
    assert all("file_after" not in r.detail and r.detail["file_sha"] for r in rows if r.action != "seen")
    assert rows[0].before == "fact 3" and rows[0].after == "fact three"


def test_an_outside_edit_is_journaled_from_the_kept_snapshot(tmp_path):
    home = _home(tmp_path)
    ctx = ToolContext(actor="user")
    home.memory.add("memory", "alpha", ctx)
    home.memory.add("memory", "beta", ctx)
    path = home.memory.path("memory")
    path.write_text(path.read_text().replace("beta", "gamma"))
    assert home.memory.add("memory", "delta", ctx)["success"]
    external = [r for r in home.memory.history("memory", limit=10) if r.actor == "external"]
    assert {(r.action, r.before, r.after) for r in external} == {("remove", "beta", None), ("add", None, "gamma")}
    assert _files(home) == [content_hash(home.memory.read("memory").raw)]


def test_a_journal_written_with_whole_files_still_detects_outside_edits(tmp_path):
    home = _home(tmp_path)
    ctx = ToolContext(actor="user")
    home.memory.add("memory", "alpha", ctx)
    raw = home.memory.read("memory").raw
    conn = home.journal.connection()
    conn.execute("DELETE FROM journal_files")  # as an older workbench left it: the file inside the row
    conn.execute("UPDATE journal SET detail = ? WHERE subsystem = 'memory'", (json.dumps({"file_after": raw}),))
    conn.commit()
    home.memory.path("memory").write_text(raw.replace("alpha", "omega"))
    assert home.memory.add("memory", "beta", ctx)["success"]
    external = [r for r in home.memory.history("memory", limit=10) if r.actor == "external"]
    assert {(r.before, r.after) for r in external} == {("alpha", None), (None, "omega")}


def test_identical_files_share_one_snapshot_that_neither_write_drops(tmp_path):
    home = _home(tmp_path)
    ctx = ToolContext(actor="user")
    home.memory.add("memory", "same", ctx)
    home.memory.add("user", "same", ctx)
    assert home.memory.add("memory", "more", ctx)["success"]
    user_raw = home.memory.read("user").raw
    assert content_hash(user_raw) in _files(home)
    home.memory.path("user").write_text(user_raw.replace("same", "changed"))
    assert home.memory.add("user", "another", ctx)["success"]
    external = [r for r in home.memory.history("user", limit=10) if r.actor == "external"]
    assert {(r.before, r.after) for r in external} == {("same", None), (None, "changed")}


def test_a_late_commit_keeps_what_a_newer_write_needs_and_nothing_it_released(tmp_path):
    """commit_all runs after the lock: a newer writer may have begun (here: a write back to the
    file before), so the late commit neither drops that file's snapshot nor keeps its own."""
    home = _home(tmp_path)
    journal = home.journal
    before, mine = "alpha", "alpha\n§\nbeta"
    journal.append(
        "memory", "seen", "memory", actor="external", snapshot=before, detail={"file_sha": content_hash(before)}
    )
    [late] = journal.begin_all(
        "memory",
        "memory",
        [{"action": "add", "after": "beta", "detail": {"file_sha": content_hash(mine)}}],
        actor="user",
    )
    [newer] = journal.begin_all(
        "memory",
        "memory",
        [{"action": "remove", "before": "beta", "detail": {"file_sha": content_hash(before)}}],
        actor="user",
    )
    journal.commit_all([late], snapshot=mine, release=(content_hash(before),))
    assert journal.get(late).status == "done" and journal.get(newer).status == "pending"
    assert _files(home) == [content_hash(before)]
    journal.commit_all([newer], snapshot=before, release=(content_hash(mine),))
    assert _files(home) == [content_hash(before)]
    journal.commit_all([late])  # committing again (the next writer settled it first) changes nothing
    assert journal.get(late).status == "done"


def test_a_lone_surrogate_in_a_hand_made_record_is_journaled_not_a_crash(tmp_path):
    """JSON such as "\\ud800" in a pending record decodes to text SQLite cannot store as UTF-8
    (found by the file fuzz: `pending approve` exited 70). The detail keeps it exactly, escaped;
    the display columns show U+FFFD."""
    home = open_home(tmp_path / "home", clock=FixedClock(1796040000.0))
    journal = home.journal
    row = journal.append(
        "approvals", "approve", "0fd46b3b", actor="user", before="bad \ud800 summary", detail={"action": "\ud800"}
    )
    entry = journal.get(row)
    assert entry.detail == {"action": "\ud800"}
    assert entry.before == "bad \ufffd summary"
    pending = journal.begin("approvals", "approve", "x", actor="user", detail={"summary": "\udfff"})
    journal.commit(pending, after="\udc80", detail={"summary": "\udfff", "done": True})
    assert journal.get(pending).detail == {"summary": "\udfff", "done": True}
    assert journal.get(pending).after == "\ufffd"
    odd = journal.append("approvals", "stage", "y", actor="user", session_id=True, before=None)  # not text: as before
    assert journal.get(odd).session_id == "1"  # read back as text, as the column is
    home.close()
