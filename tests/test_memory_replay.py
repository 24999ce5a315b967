"""Hermes's memory calls replayed on a file as its tool applies them (``engine.memory.replay``)."""

from __future__ import annotations

import gc
import json
from pathlib import Path

from engine.home import Home
from engine.memory.archive_writes import ArchiveWrite, ArchiveWrites
from engine.memory.replay import replay, unweighed
from tests.cli_support import printed


def _call(action, text, old_text=None, message_id=1):
    return ArchiveWrite("memory", text, action, "s", message_id, 0.0, old_text)


def _steps(entries, calls):
    steps, left = replay(entries, calls)
    return [(s.action, s.before, s.after, s.index) for s in steps], left


def test_an_add_and_its_remove_are_two_steps_and_leave_the_file_as_it_was():
    calls = [_call("add", "Loop note 7"), _call("remove", "Loop note 7", "note 7", 2)]
    assert _steps(["Kept"], calls) == (
        [("add", None, "Loop note 7", 1), ("remove", "Loop note 7", None, 1)],
        ["Kept"],
    )


def test_each_call_takes_the_entry_holding_its_text_as_hermes_matches_it():
    entries = ["Deploys on Fridays", "Loop note 71 about the cache"]
    calls = [_call("replace", "Deploys on Mondays", "Fridays"), _call("remove", "cache", "the cache")]
    assert _steps(entries, calls) == (
        [
            ("replace", "Deploys on Fridays", "Deploys on Mondays", 0),
            ("remove", "Loop note 71 about the cache", None, 1),
        ],
        ["Deploys on Mondays"],
    )


def test_a_call_hermess_tool_would_have_failed_on_this_file_is_skipped():
    entries = ["Loop note 71", "Loop note 72"]
    skipped = [
        _call("remove", "Typed by hand", "Typed by hand"),  # no entry holds it
        _call("replace", "Loop note", "Loop note"),  # two different entries hold it
        _call("add", "Loop note 71"),  # already there: Hermes writes nothing
        _call("replace", "Loop note 72", "note 72"),  # (writes what is there: no change)
    ]
    assert _steps(entries, skipped) == ([], entries)


def test_the_runners_own_memory_calls_are_not_replayed(tmp_path: Path) -> None:
    """The workbench's own runner stores its turns in state.db as Hermes does, and journals each memory
    write as it runs: a look after it must not replay those calls as the agent's a second time (an add
    and a remove within a minute came back as two more rows)."""
    (tmp_path / "home" / "memories").mkdir(parents=True)
    (tmp_path / "home" / "memories" / "USER.md").write_text("User prefers tea.", encoding="utf-8")
    home = str(tmp_path / "home")
    printed("memory", "show", "--home", home)  # the first look
    printed("run", "--home", home, "-m", "remember that my favourite fruit is mango", "-m", "forget my favourite fruit")
    events = json.loads(printed("memory", "history", "--home", home, "--target", "user", "--json"))["events"]
    rows = [(e["actor"], e["action"], e["message_id"] is not None) for e in reversed(events)]
    assert rows[-2:] == [("agent", "add", True), ("agent", "remove", True)]
    assert [r[:2] for r in rows].count(("agent", "add")) == 1


def test_hermes_calls_are_read_for_an_unchanged_file_by_a_look_once_and_never_by_a_write(
    tmp_path: Path, monkeypatch
) -> None:
    """Reading Hermes's recent calls costs milliseconds in a busy archive: a write under the lock must not
    pay it for a file as the journal left it, and a look pays it once per change of state.db."""
    (tmp_path / "memories").mkdir()
    (tmp_path / "memories" / "MEMORY.md").write_text("Project uses PostgreSQL", encoding="utf-8")
    printed("run", "--home", str(tmp_path), "-m", "hello there")  # a state.db changed just now
    gc.collect()  # (the run's connections closed: its WAL is gone, so the first read opens state.db afresh)
    home = Home(tmp_path)
    home.memory.record_external_change("memory")  # the first look
    reads = []
    real = ArchiveWrites.since
    monkeypatch.setattr(ArchiveWrites, "since", lambda self, *a: reads.append(a) or real(self, *a))
    home.memory.add("memory", "Deploys on Fridays")
    home.memory.remove("memory", "Deploys on Fridays")
    assert reads == []
    home.memory.record_external_change("memory")
    home.memory.record_external_change("memory")
    assert len(reads) == 1


def _steps_weighing_a_fresh_call(root: Path, rows_of_ours: int) -> int:
    """SQLite's instructions (its progress handler called at each) to weigh one fresh Hermes call in a journal holding
    ``rows_of_ours`` memory rows the workbench's own agent journaled an hour ago, under a look's lock."""
    root.mkdir()
    home = Home(root)
    try:
        hour_ago = home.clock.now() - 3600
        rows = [{"action": "add", "after": f"Note {n}", "detail": {"index": n}} for n in range(rows_of_ours)]
        home.journal.append_all("memory", "memory", rows, actor="agent", session_id="ours", message_id=1, at=hour_ago)
        call = ArchiveWrite("memory", "Hermes's note", "add", "hermes", 7, home.clock.now(), None, 0, 8)
        conn = home.journal.connection()
        steps = []
        conn.set_progress_handler(lambda: steps.append(1) and 0, 1)
        assert unweighed(conn, "memory", [call])[0] == [call]
        conn.set_progress_handler(None, 0)
        return len(steps)
    finally:
        home.close()


def test_weighing_hermes_calls_reads_no_further_back_than_the_minute_before_them(tmp_path: Path) -> None:
    """Whether an outside row journaled a fresh call's work was read from every memory row the workbench's own
    agent ever journaled (its rows were never a reason to stop): 0.2 s under the lock, with 100,000 of them."""
    few = _steps_weighing_a_fresh_call(tmp_path / "few", 10)
    many = _steps_weighing_a_fresh_call(tmp_path / "many", 5000)
    assert many < few * 2


def test_an_outside_row_is_credited_only_to_the_call_that_can_have_made_it(tmp_path: Path) -> None:
    """A call whose work a look journaled as an outside edit is credited with that row only when the row is
    exactly its change, made before its result was stored: not a row found later whose change came after
    that (a person's, made once the call had run), nor the add half of a replace the look split in two."""
    home = Home(tmp_path)
    try:
        now = home.clock.now()
        rows = [
            {"action": "add", "after": "Exact", "detail": {"index": 0}, "at": now},
            {"action": "add", "after": "Late", "detail": {"index": 1, "seen_at": now, "not_before": now - 5}},
            {"action": "add", "after": "Half", "detail": {"index": 2}, "at": now},
        ]
        home.journal.append_all("memory", "memory", rows, actor="external", at=now - 1)
        calls = [
            ArchiveWrite("memory", "Exact", "add", "s", 1, now - 2, None, 0, 9, now + 1),
            ArchiveWrite("memory", "Late", "add", "s", 1, now - 20, None, 1, 9, now - 10),
            ArchiveWrite("memory", "Half", "replace", "s", 1, now - 2, "Old", 2, 9, now + 1),
        ]
        left, _, credits = unweighed(home.journal.connection(), "memory", calls)
        assert left == []  # (each did its work: none is replayed)
        assert [(credit.rows[0].after, credit.call.index) for credit in credits] == [("Exact", 0)]
    finally:
        home.close()


def test_a_look_at_both_files_reads_hermess_calls_once_per_change_of_state_db(tmp_path: Path) -> None:
    """The TUI's watcher looks at MEMORY.md and USER.md whenever state.db changes: the second look read
    Hermes's recent calls again (its journal's last row older than the first's, so further back)."""
    (tmp_path / "memories").mkdir()
    (tmp_path / "memories" / "MEMORY.md").write_text("Project uses PostgreSQL", encoding="utf-8")
    (tmp_path / "memories" / "USER.md").write_text("User prefers tea.", encoding="utf-8")
    home = Home(tmp_path)
    try:
        home.memory.catch_up()  # the first looks
        home.memory.add("memory", "Deploys on Fridays")  # (MEMORY's last row is the newer)
        printed("run", "--home", str(tmp_path), "-m", "remember that my favourite fruit is mango")
        statements: list[str] = []
        home.archive.conn().set_trace_callback(statements.append)
        for target in ("memory", "user"):
            home.memory.record_external_change(target)
        assert len([s for s in statements if "instr(tool_calls" in s]) == 1
    finally:
        home.close()
