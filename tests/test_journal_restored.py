"""A backup of workbench.db restored over it while this process runs: each thread's connection went on
reading the old file, and a write went to the old file, which nobody reads again (lost at exit)."""

from __future__ import annotations

import contextlib
import sqlite3
from concurrent.futures import ThreadPoolExecutor

from engine.tools import ToolContext
from tests.archive_support import restore_in_another_process


def _rows_on_disk(path) -> list[str]:
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        return [row[0] for row in conn.execute("SELECT after FROM journal ORDER BY id")]


def test_after_a_restore_every_thread_reads_and_writes_the_restored_file(home, tmp_path):
    home.memory.add("memory", "Kept in the backup", ToolContext(actor="user"))
    path, backup = home.journal.path, tmp_path / "backup.db"
    with contextlib.closing(sqlite3.connect(path)) as live, contextlib.closing(sqlite3.connect(backup)) as copy:
        live.backup(copy)
    home.memory.add("memory", "Written after the backup", ToolContext(actor="user"))
    with ThreadPoolExecutor(max_workers=1) as pool:  # a pool thread that read before, idle meanwhile
        assert pool.submit(lambda: len(home.memory.history("memory"))).result() == 2
        restore_in_another_process(backup, path)
        assert [row.after for row in pool.submit(home.memory.history, "memory").result()] == ["Kept in the backup"]
    home.journal.append("memory", "add", "memory", actor="user", after="Written after the restore")
    assert _rows_on_disk(path) == ["Kept in the backup", "Written after the restore"]
