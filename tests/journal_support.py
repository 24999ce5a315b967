"""What the memory journal must always be able to do: give back the file it last left."""

from __future__ import annotations

from engine.memory.format import TARGETS
from engine.memory.rebuild import base_of, left_of, rebuild


def kept_snapshots(home) -> list[str]:
    return sorted(r[0] for r in home.journal.connection().execute("SELECT sha FROM journal_files"))


def rebuilt(home, target: str) -> str | None:
    """The text the journal says ``target`` was last left as (None: no row says)."""
    conn = home.journal.connection()
    left = left_of(conn, target)
    return rebuild(conn, target, left, home.journal.file_text) if left else None


def assert_files_rebuild(home) -> None:
    """Each journaled file rebuilds to exactly what is on disk, and the only snapshots kept are
    the ones those rebuilds start from (one per file, or one for both when they are the same)."""
    conn = home.journal.connection()
    bases = set()
    for target in TARGETS:
        left = left_of(conn, target)
        if left is not None:
            assert rebuilt(home, target) == home.memory.read(target).raw, target
            bases.add(base_of(conn, target, left))
    assert kept_snapshots(home) == sorted(bases)
