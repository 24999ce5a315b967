"""A database emptied (or removed) with its -wal left beside it, as a failed ``sqlite3 .recover`` or
restore leaves it: SQLite deletes that -wal, and every change it holds, as soon as any connection
opens the database, so nothing of ours opens it, and doctor says what to do."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from engine import open_home
from engine.db import DatabaseDamaged
from tests.cli_support import ran

NAMES = ("state.db", "state.db-wal", "state.db-shm")

HERMES_WRITES = """
import os
from hermes_state import SessionDB
db = SessionDB()
db._conn.execute("PRAGMA wal_autocheckpoint=0")
db.create_session("h1", "cli")
for n in range(40):
    db.append_message("h1", "user", f"note {n} about the billing rollout")
os._exit(0)  # as a process killed mid-run: no close, so the -wal stays
"""


@pytest.fixture
def stranded(hermes, tmp_path) -> Path:
    """A home Hermes wrote, whose state.db was then emptied with its -wal (and -shm) left beside it."""
    root = tmp_path / "home"
    root.mkdir()
    hermes.run(root, HERMES_WRITES)
    assert (root / "state.db-wal").stat().st_size > 0
    (root / "state.db").write_bytes(b"")
    return root


def _digest(root: Path) -> dict[str, str | None]:
    return {
        name: hashlib.sha256(path.read_bytes()).hexdigest() if (path := root / name).exists() else None
        for name in NAMES
    }


def test_reads_and_doctor_leave_an_empty_state_db_and_its_wal_as_they_were(stranded):
    before = _digest(stranded)
    for command in (("sessions", "list"), ("sessions", "search", "billing"), ("memory", "show"), ("doctor", "--fix")):
        status, out, err = ran("--home", str(stranded), *command)
        assert _digest(stranded) == before, command
        assert "Traceback" not in out + err
    assert status == 1
    assert "state.db is empty (0 bytes), but state.db-wal beside it holds" in out
    assert "copy state.db-wal somewhere safe" in out
    status, out, err = ran("--home", str(stranded), "sessions", "list")
    assert status == 1 and "state.db-wal beside it holds" in err  # not "no sessions"


def test_opening_the_archive_for_writing_refuses_and_changes_nothing(stranded):
    """What the TUI and a run do: a writable open made SQLite delete the -wal and write a new layout."""
    before = _digest(stranded)
    home = open_home(stranded)
    try:
        with pytest.raises(DatabaseDamaged, match=r"state\.db-wal beside it holds [\d,]+ bytes"):
            home.archive.list_sessions()
        with pytest.raises(DatabaseDamaged):
            home.archive.create_session("s2", source="cli")
    finally:
        home.close()
    assert _digest(stranded) == before


def test_a_missing_state_db_beside_its_wal_is_not_created(stranded):
    (stranded / "state.db").unlink()
    before = _digest(stranded)
    status, out, _ = ran("--home", str(stranded), "doctor")
    assert status == 1 and "state.db is missing, but state.db-wal beside it holds" in out
    home = open_home(stranded)
    try:
        with pytest.raises(DatabaseDamaged):
            home.archive.list_sessions()
    finally:
        home.close()
    assert _digest(stranded) == before
