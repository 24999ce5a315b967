"""Odd but legal files and interrupted operations: nothing is lost, the journal tells the truth.

CRLF memory files are drift (never a wipe) with a journaled, undoable repair; a write
removes at most the one entry it names whatever the file's bytes; a full disk while
archiving rolls every step back; a writer killed between its rename and its journal
commit is settled on the next open.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import sqlite3
import subprocess
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine.fileio
from engine import open_home
from engine.health import CHECKS, FIXES
from engine.memory.rebuild import SNAPSHOT_EVERY
from engine.skills.validation import SkillError
from engine.tools import ToolContext
from tests.hermes_support import workbench_cmd
from tests.journal_support import assert_files_rebuild

CRLF_FILE = b"alpha fact\r\n\xc2\xa7\r\nbeta fact\r\n\xc2\xa7\r\ngamma fact"


def user() -> ToolContext:
    return ToolContext(actor="user")


# -- CRLF memory files ------------------------------------------------------------------
def test_a_crlf_file_is_edited_entry_by_entry_as_hermes_reads_it(home):
    """Replace and remove read a CRLF file's entries apart, as Hermes does, and touch only the one
    named (they were refused until the file was normalised); the journal replays to the file."""
    path = home.memory.path("memory")
    path.write_bytes(CRLF_FILE)
    assert home.memory.remove("memory", "alpha", user())["success"]
    assert home.memory.replace("memory", "beta", "Beta, rewritten", user())["success"]
    assert path.read_bytes() == "Beta, rewritten\n§\ngamma fact".encode()
    assert [(r.action, r.before) for r in home.memory.history("memory")[:2]] == [
        ("replace", "beta fact"),
        ("remove", "alpha fact"),
    ]
    assert_files_rebuild(home)


def test_a_crlf_file_with_a_merged_paste_is_still_refused_and_never_wiped(home):
    path = home.memory.path("memory")
    data = b"alpha fact\r\n\xc2\xa7\r\nbeta fact\r\n \xc2\xa7 \r\ngamma fact"
    path.write_bytes(data)
    removed = home.memory.remove("memory", "gamma", user())
    assert removed["success"] is False and "round-trip" in removed["error"]
    assert path.read_bytes() == data
    findings = [f for check in CHECKS for f in check(home) if f.repair == "memory-line-endings"]
    assert [(f.area, f.severity) for f in findings] == [("memory", "info")] and "MEMORY.md uses CRLF" in findings[
        0
    ].what


def test_an_add_to_a_crlf_file_writes_it_back_as_hermes_add_does(home):
    """Hermes reads the old entries apart (line endings translated) and writes the file back with LF;
    so does our add, and says so: before, it appended LF to CRLF and read the old entries as one."""
    path = home.memory.path("memory")
    path.write_bytes(CRLF_FILE)
    added = home.memory.add("memory", "delta fact", user())
    assert added["success"] and added["entry_count"] == 4
    assert "had CRLF line endings: it was written back with LF" in added["line_endings"]
    assert path.read_bytes() == "alpha fact\n§\nbeta fact\n§\ngamma fact\n§\ndelta fact".encode()
    assert home.memory.entries("memory") == ["alpha fact", "beta fact", "gamma fact", "delta fact"]
    assert [(r.action, r.after) for r in home.memory.history("memory")[:1]] == [("add", "delta fact")]
    assert_files_rebuild(home)
    assert "line_endings" not in home.memory.add("user", "plain file", user())


def test_an_add_to_a_file_with_a_byte_order_mark_says_it_wrote_the_file_without_it(home):
    path = home.memory.path("memory")
    path.write_bytes("\ufeffalpha fact\n§\nbeta fact".encode())
    added = home.memory.add("memory", "gamma fact", user())
    assert "started with a byte-order mark" in added["byte_order_mark"]
    assert path.read_bytes() == "alpha fact\n§\nbeta fact\n§\ngamma fact".encode()
    assert "byte_order_mark" not in home.memory.add("memory", "delta fact", user())


def test_normalising_line_endings_is_journaled_and_undoable(home):
    path = home.memory.path("memory")
    path.write_bytes(CRLF_FILE)
    assert FIXES["memory-line-endings"](home).startswith("Normalised line endings of MEMORY.md (undo: ")
    assert home.memory.entries("memory") == ["alpha fact", "beta fact", "gamma fact"]
    assert b"\r" not in path.read_bytes()
    [row] = [r for r in home.memory.history("memory") if r.action == "repair"]
    assert row.actor == "user" and row.before.encode() == CRLF_FILE
    assert home.memory.remove("memory", "alpha", user())["success"], "a normalised file is a normal file"
    assert not home.memory.undo(row.id)["success"], "undo is refused once the file changed again"
    home.memory.add("memory", "alpha fact", user())
    path.write_bytes(CRLF_FILE.replace(b"\r", b""))
    home.memory.record_external_change("memory")
    path.write_bytes(CRLF_FILE)
    FIXES["memory-line-endings"](home)
    newest = home.memory.history("memory")[0]
    undone = home.memory.undo(newest.id)
    assert undone["success"], undone
    assert path.read_bytes() == CRLF_FILE
    assert FIXES["memory-line-endings"](home).startswith("Normalised line endings of MEMORY.md (undo: ")


def user_entries(raw: str) -> list[str]:
    """Entries as a person (and Hermes) reads the file: CRLF and a lone CR are line ends, and
    every line that shows only '§' splits it."""
    groups, current = [], []
    for line in raw.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line.strip() == "§":
            groups.append(current)
            current = []
        else:
            current.append(line)
    groups.append(current)
    return [text for text in ("\n".join(g).strip() for g in groups) if text]


PIECES = st.one_of(
    st.text(alphabet="abcxyz \t", min_size=1, max_size=8),
    st.sampled_from(["\n§\n", "\r\n§\r\n", "\n§\r\n", "\r\n§\n", "\n", "\r\n", "\n\n§\n\n", "\n § \n", "§", "\r"]),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bom=st.booleans(), pieces=st.lists(PIECES, max_size=14), data=st.data())
def test_a_write_never_removes_more_than_the_entry_it_names(home, bom, pieces, data):
    """A BOM is only drawn at the start, where it is one (a lone U+FEFF written first would become one)."""
    raw = ("\ufeff" if bom else "") + "".join(pieces)
    path = home.memory.path("memory")
    path.write_bytes(raw.encode("utf-8"))
    before = user_entries(raw)
    action = data.draw(st.sampled_from(["add", "remove", "replace"]))
    candidates = [e[:n] for e in before for n in (1, len(e))] or ["a"]
    old = data.draw(st.sampled_from(candidates)).strip() or "a"
    if action == "add":
        result = home.memory.add("memory", "brand new", user())
    elif action == "remove":
        result = home.memory.remove("memory", old, user())
    else:
        result = home.memory.replace("memory", old, "brand new", user())
    after_raw = path.read_bytes().decode("utf-8")
    if not result["success"]:
        assert after_raw == raw, "a refused write changed the file"
    after = user_entries(after_raw)
    lost = [e for e in dict.fromkeys(before) if e not in after]
    assert len(lost) <= (0 if action == "add" else 1), (raw, action, old, after_raw)
    if lost:
        assert old in lost[0]


# -- a full disk while archiving, restoring, purging, rolling back ----------------------------
SKILL = "---\nname: tea\ndescription: Brew tea.\n---\nSteep for three minutes.\n"


def disk_full(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.fixture
def tea(home):
    home.skills.manage({"action": "create", "name": "tea", "category": "kitchen", "content": SKILL})
    home.skills.usage.set_fields("tea", created_by="agent", use_count=3)
    return home


def state(home):
    """Everything an archive changes: where the folder is, the usage record, the ledger, the journal."""
    tree = sorted(p.relative_to(home.skills_dir).as_posix() for p in home.skills_dir.rglob("SKILL.md"))
    return tree, home.skills.usage.load().get("tea"), [e.id for e in home.curator.ledger()]


@pytest.mark.parametrize("failing", ["usage", "ledger"])
def test_a_full_disk_while_archiving_changes_nothing_and_the_journal_says_so(tea, monkeypatch, failing):
    home = tea
    before = state(home)
    if failing == "usage":
        monkeypatch.setattr(engine.fileio, "_write_all", disk_full)  # every atomic write: the usage record first
    else:
        monkeypatch.setattr("engine.curator.ledger.append_bytes", disk_full)
    with pytest.raises(SkillError, match="No space left on device.*Every step was rolled back"):
        home.curator.archive("tea")
    monkeypatch.undo()
    assert state(home) == before
    row = home.journal.query(subsystem="skills", include_pending=True, limit=1)[0]
    assert (row.action, row.status) == ("archive", "abandoned") and "rolled back" in row.detail["reason"]
    assert not list(home.skills_dir.rglob(".trash-*"))
    # once there is room again, archive and restore put the skill back in its category folder
    home.curator.archive("tea")
    restored = home.curator.restore("tea")
    assert restored["restored_to"] == str(home.skills_dir / "kitchen" / "tea")


def test_a_full_disk_while_purging_or_rolling_back_leaves_everything_in_place(tea, monkeypatch):
    home = tea
    archived = home.curator.archive("tea")
    home.clock.advance(40 * 86400)
    assert [c["name"] for c in home.curator.purge(days=1, dry_run=True)["candidates"]] == ["tea"]
    before = state(home)
    monkeypatch.setattr("engine.curator.ledger.append_bytes", disk_full)
    with pytest.raises(SkillError, match="Could not purge skill 'tea'.*rolled back"):
        home.curator.purge(days=1)
    assert state(home) == before and not list(home.skills_dir.rglob(".trash-*"))
    with pytest.raises(SkillError, match="Could not rollback skill 'tea'.*rolled back"):
        home.curator.rollback(archived["ledger_id"])
    assert state(home) == before
    monkeypatch.undo()
    assert home.curator.rollback(archived["ledger_id"])["success"]
    tree, record, _ = state(home)
    assert tree == ["kitchen/tea/SKILL.md"] and record["state"] == "active" and record["use_count"] == 3


# -- a curator ledger row may only name skill files ----------------------------------------
@pytest.mark.parametrize("victim", ["memories/MEMORY.md", "config.yaml"])
def test_a_tampered_ledger_row_outside_skills_is_refused_and_changes_nothing(tea, victim):
    home = tea
    home.memory.add("memory", "Precious fact", user())
    (home.root / "config.yaml").write_text("memory:\n  memory_char_limit: 2200\n")
    target = home.root / victim
    kept = target.read_bytes()
    row = {
        "id": "tampered0001",
        "ts": "2026-11-30T12:00:00+00:00",
        "actor": "curator",
        "action": "patch",
        "skill": "tea",
        "evidence": {},
        "before": [],
        "after": [{"path": victim, "sha256": __import__("hashlib").sha256(kept).hexdigest()}],
    }
    with open(home.skills.ledger.path, "a") as handle:
        handle.write(json.dumps(row) + "\n")
    rows = len(home.journal.query(limit=1000, include_pending=True))
    proc = subprocess.run(
        workbench_cmd("curator", "rollback", "tampered0001", "--home", str(home.root), "--json"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    out = json.loads(proc.stdout)
    assert proc.returncode == 1 and out["success"] is False and "Traceback" not in proc.stderr
    assert f"Ledger path '{victim}' is outside skills/" in out["error"]
    assert target.read_bytes() == kept
    assert len(home.journal.query(limit=1000, include_pending=True)) == rows


# -- a writer killed between its rename and its journal commit -----------------------------------
def pending_rows(home):
    conn = sqlite3.connect(home.workbench_db_path)
    try:
        return conn.execute("SELECT id, action FROM journal WHERE status = 'pending'").fetchall()
    finally:
        conn.close()


def kill_at(point: str, tmp_path, argv: list[str]) -> None:
    """Run ``argv`` until it pauses at ``point`` (``engine.fileio.crash_point``), then SIGKILL it."""
    marker = tmp_path / f"paused-{point}"
    env = {**os.environ, "WORKBENCH_CRASH_POINT": point, "WORKBENCH_CRASH_MARKER": str(marker)}
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            if marker.exists() or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert marker.exists(), f"the process never reached {point} (rc {proc.poll()})"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()


def killed_add(tmp_path, text: str, *before: str):
    """A home where `workbench memory add TEXT` was killed after its rename, before its journal commit
    (after adds of ``before``)."""
    root = tmp_path / "home"
    home = open_home(root)
    for entry in before:
        assert home.memory.add("memory", entry, user())["success"]
    home.close()
    kill_at("memory-renamed", tmp_path, workbench_cmd("memory", "add", "--target", "memory", text, "--home", str(root)))
    return root


def test_a_write_killed_after_its_rename_is_rolled_forward_on_the_next_open(tmp_path):
    root = killed_add(tmp_path, "Survives the kill")
    home = open_home(root)
    assert (root / "memories" / "MEMORY.md").read_text() == "Survives the kill"
    [(row_id, action)] = pending_rows(home)
    history = subprocess.run(
        workbench_cmd("memory", "history", "--home", str(root), "--json"), capture_output=True, text=True, timeout=60
    )
    events = json.loads(history.stdout)["events"]
    assert [(e["id"], e["action"]) for e in events] == [(row_id, "add")]
    assert pending_rows(home) == []
    undo = subprocess.run(
        workbench_cmd("memory", "undo", str(row_id), "--home", str(root), "--json"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert undo.returncode == 0 and json.loads(undo.stdout)["success"], undo.stdout
    assert (root / "memories" / "MEMORY.md").read_text() == ""
    home.close()


def test_the_next_writer_settles_a_killed_write_and_keeps_the_file_it_left(tmp_path):
    """The journal commit comes after the lock is released: a live writer finds the dead one's
    pending row, rolls it forward, and keeps its file's snapshot for telling outside edits apart."""
    home = open_home(killed_add(tmp_path, "Killed before its commit"))
    [(killed, _)] = pending_rows(home)
    assert home.journal.file_text(home.journal.get(killed).detail["file_sha"]) is None  # never kept by its writer
    assert home.memory.add("memory", "Written next", user())["success"]
    assert pending_rows(home) == []
    rows = home.memory.history("memory", limit=10)
    assert [(r.id == killed, r.action, r.after, r.actor) for r in rows] == [
        (False, "add", "Written next", "user"),
        (True, "add", "Killed before its commit", "user"),
    ]
    path = home.memory.path("memory")
    path.write_text(path.read_text().replace("Written next", "Edited outside"))
    assert home.memory.add("memory", "Third", user())["success"]
    external = {(r.action, r.before, r.after) for r in home.memory.history("memory", limit=10) if r.actor == "external"}
    assert external == {("remove", "Written next", None), ("add", None, "Edited outside")}
    assert_files_rebuild(home)  # from the one snapshot still needed
    home.close()


def test_a_live_writer_settles_a_write_killed_since_its_own_last_write(tmp_path):
    """A process that wrote the store before another process's writer was killed after its rename
    does not take the journal to be as it left it: its next write rolls the killed one forward."""
    root = tmp_path / "home"
    home = open_home(root)
    assert home.memory.add("memory", "Written first", user())["success"]
    assert home.memory.add("memory", "Written second", user())["success"]
    argv = workbench_cmd("memory", "add", "--target", "memory", "Killed between", "--home", str(root))
    kill_at("memory-renamed", tmp_path, argv)
    [(killed, _)] = pending_rows(home)
    assert home.memory.add("memory", "Written next", user())["success"]
    assert pending_rows(home) == []
    rows = home.memory.history("memory", limit=10)
    assert [(r.id == killed, r.after, r.status) for r in rows] == [
        (False, "Written next", "done"),
        (True, "Killed between", "done"),
        (False, "Written second", "done"),
        (False, "Written first", "done"),
    ]
    assert not [r for r in rows if r.actor == "external"], "the killed write is its own row, not an outside edit"
    assert_files_rebuild(home)
    home.close()


def test_a_killed_write_rebuilt_from_the_rows_before_it_keeps_no_snapshot_of_its_own(tmp_path):
    """Settled forward, a killed write that its writer meant to rebuild from an earlier snapshot
    stays one: only that snapshot is kept, and the file it left still rebuilds."""
    home = open_home(killed_add(tmp_path, "Killed third", "First", "Second"))
    [(killed, _)] = pending_rows(home)
    assert home.journal.get(killed).detail["depth"] == 2
    assert home.memory.add("memory", "Written next", user())["success"]
    assert pending_rows(home) == []
    assert_files_rebuild(home)
    home.close()


def test_a_killed_write_that_was_to_keep_a_snapshot_releases_the_old_one_when_settled(tmp_path):
    """The write after SNAPSHOT_EVERY linked ones keeps its file and releases the old base in its
    commit; killed before it, the settling does both."""
    home = open_home(killed_add(tmp_path, "Killed", *(f"fact {i}" for i in range(SNAPSHOT_EVERY + 1))))
    [(killed, _)] = pending_rows(home)
    assert "depth" not in home.journal.get(killed).detail
    assert home.memory.add("memory", "Written next", user())["success"]
    assert_files_rebuild(home)  # one snapshot: the killed write's
    home.close()


def test_a_write_killed_before_its_rename_is_abandoned_on_the_next_open(tmp_path):
    """Killed once its pending rows are committed, before the file is written: the store still
    holds the old file, and the next open marks the row abandoned, so nothing claims a change
    that never happened and the next write sees no outside edit."""
    root = tmp_path / "home"
    home = open_home(root)
    assert home.memory.add("memory", "Already there", user())["success"]
    home.close()
    kill_at(
        "memory-journaled",
        tmp_path,
        workbench_cmd("memory", "add", "--target", "memory", "Never renamed", "--home", str(root)),
    )
    assert (root / "memories" / "MEMORY.md").read_text() == "Already there"
    home = open_home(root)
    [(killed, action)] = pending_rows(home)
    assert action == "add"
    _ = home.memory  # the store settles interrupted writes when it opens
    row = home.journal.get(killed)
    assert row.status == "abandoned" and "interrupted" in row.detail["reason"]
    assert home.journal.file_text(row.detail["file_sha"]) is None
    assert [r.after for r in home.memory.history("memory", limit=10)] == ["Already there"]
    assert home.memory.add("memory", "Next", user())["success"]
    assert home.memory.entries("memory") == ["Already there", "Next"]
    assert [r.actor for r in home.memory.history("memory", limit=10)] == ["user", "user"]  # no outside edit seen
    home.close()


HERMES_ADDS = """
import json
from tools.memory_tool import load_on_disk_store, memory_tool
print(memory_tool(store=load_on_disk_store(), action="add", target="memory", content=%r))
"""


@pytest.mark.parametrize(("point", "ours"), [("memory-renamed", "done"), ("memory-journaled", "abandoned")])
def test_a_killed_write_hermes_wrote_over_before_it_was_settled_keeps_its_writer(tmp_path, hermes, point, ours):
    """Killed after its rename, a write whose file Hermes's next add wrote over (Hermes takes our lock
    but settles none of our rows) matched the file no more: it was abandoned, and its entry was
    journaled with Hermes's as one outside edit. Its change still shows in the file, so it is
    settled done, and only Hermes's entry is external; killed before the rename, it is abandoned."""
    root = tmp_path / "home"
    home = open_home(root)
    assert home.memory.add("memory", "Written first", user())["success"]
    home.close()
    kill_at(point, tmp_path, workbench_cmd("memory", "add", "--target", "memory", "Killed write", "--home", str(root)))
    added = hermes.run(root, HERMES_ADDS % "Hermes wrote next")
    assert json.loads(added.stdout.splitlines()[-1])["success"], added.stdout
    history = subprocess.run(
        workbench_cmd("memory", "history", "--home", str(root), "--json"), capture_output=True, text=True, timeout=60
    )
    events = json.loads(history.stdout)["events"]
    shown = [(e["actor"], e["action"], e["after"]) for e in events]
    if ours == "done":
        assert shown == [
            ("external", "add", "Hermes wrote next"),
            ("user", "add", "Killed write"),
            ("user", "add", "Written first"),
        ]
    else:
        assert shown == [("external", "add", "Hermes wrote next"), ("user", "add", "Written first")]
    home = open_home(root)
    journaled = sqlite3.connect(home.workbench_db_path)
    rows = journaled.execute("SELECT actor, status FROM journal WHERE after = 'Killed write' ORDER BY id").fetchall()
    journaled.close()
    assert rows == [("user", ours)]
    assert_files_rebuild(home)
    home.close()


def test_a_write_that_never_reached_the_disk_is_marked_abandoned_and_old_temps_are_cleaned(tmp_path):
    root = tmp_path / "home"
    home = open_home(root)
    home.memory.add("memory", "On disk", user())
    row = home.journal.begin(
        "memory",
        "add",
        "memory",
        actor="user",
        after="Never written",
        detail={"file_after": "On disk\n§\nNever written"},
    )
    memories = root / "memories"
    old, fresh, foreign = memories / ".mem_old.tmp", memories / ".mem_fresh.tmp", memories / ".mem_foreign.tmp"
    old.write_text("On disk\n§\nNever written")  # the interrupted write's temp: the journal row keeps its text
    fresh.write_text("On disk\n§\nNever written")  # as young as a live write's
    foreign.write_text("someone's only copy")  # not ours to drop: doctor reports it and moves it aside
    for path in (old, foreign):
        os.utime(path, (time.time() - 7200,) * 2)
    (memories / ".mem_link.tmp").symlink_to(old)
    home.close()
    home = open_home(root)
    _ = home.memory  # the store settles interrupted writes when it opens
    entry = home.journal.get(row)
    assert entry.status == "abandoned" and "interrupted" in entry.detail["reason"]
    assert entry.detail["file_after"] == "On disk\n§\nNever written"
    assert not old.exists() and fresh.exists() and foreign.exists() and (memories / ".mem_link.tmp").is_symlink()
    assert home.memory.entries("memory") == ["On disk"]
    home.close()


@pytest.mark.parametrize("point", ["skills-mutated", "skills-ledgered"])
def test_an_archive_killed_part_way_is_rolled_back_or_forward_on_the_next_open(tmp_path, clock, point):
    root = tmp_path / "home"
    home = open_home(root, clock=clock)
    home.skills.manage({"action": "create", "name": "tea", "category": "kitchen", "content": SKILL})
    home.skills.usage.set_fields("tea", use_count=3)
    before = state(home)
    home.close()
    kill_at(point, tmp_path, workbench_cmd("skills", "archive", "tea", "--home", str(root)))
    home = open_home(root, clock=clock)
    [(_, action)] = pending_rows(home)
    assert action == "archive"
    _ = home.skills  # the library settles interrupted changes when it opens
    row = home.journal.query(subsystem="skills", include_pending=True, limit=1)[0]
    if point == "skills-mutated":  # moved and usage set, no ledger row: everything goes back
        assert row.status == "abandoned" and "rolled back on the next open" in row.detail["reason"]
        assert state(home) == before
    else:  # every step ran: the commit is all that was missing
        tree, record, ledger = state(home)
        assert row.status == "done" and row.detail["ledger_id"] == ledger[0]
        assert tree == [f".archive/{record['archive_dir']}/SKILL.md"] and record["archived_from"] == "kitchen/tea"
        assert home.curator.restore("tea")["restored_to"] == str(home.skills_dir / "kitchen" / "tea")
    assert pending_rows(home) == []
    home.close()


def test_a_delete_killed_after_trashing_the_folder_puts_it_back(tmp_path, clock):
    root = tmp_path / "home"
    home = open_home(root, clock=clock)
    home.skills.manage({"action": "create", "name": "tea", "category": "kitchen", "content": SKILL})
    (home.skills_dir / "kitchen" / "tea" / "scripts").mkdir()
    script = home.skills_dir / "kitchen" / "tea" / "scripts" / "brew.sh"
    script.write_text("echo brew")
    os.chmod(script, 0o755)
    before = state(home)
    home.close()
    code = (
        "import sys; from engine import open_home; "
        "open_home(sys.argv[1]).skills.manage({'action': 'delete', 'name': 'tea'})"
    )
    kill_at("skills-mutated", tmp_path, [workbench_cmd()[0], "-c", code, str(root)])
    assert list((root / "skills" / "kitchen").glob(".trash-*")), "killed with the folder in the trash"
    home = open_home(root, clock=clock)
    _ = home.skills  # the library settles interrupted changes when it opens
    assert state(home) == before
    assert os.stat(script).st_mode & 0o111, "the folder itself came back, modes and all"
    assert not list((root / "skills" / "kitchen").glob(".trash-*"))
    home.close()


def test_an_approval_killed_after_its_write_is_settled_and_never_applied_twice(tmp_path, clock):
    root = tmp_path / "home"
    home = open_home(root, clock=clock)
    record = home.approvals.stage(
        subsystem="memory",
        action="add",
        summary="add to memory: Staged fact",
        origin="foreground",
        payload={"action": "add", "target": "memory", "content": "Staged fact"},
    )
    home.close()
    kill_at("approval-applied", tmp_path, workbench_cmd("pending", "approve", record.id, "--home", str(root)))
    assert (root / "pending" / "memory" / f"{record.id}.json").exists(), "killed before the record went"
    home = open_home(root, clock=clock)
    assert home.approvals.list() == []
    row = home.journal.query(subsystem="approvals", include_pending=True, limit=1)[0]
    assert (row.action, row.status) == ("approve", "done")
    assert home.memory.entries("memory") == ["Staged fact"]
    assert pending_rows(home) == []
    home.close()
