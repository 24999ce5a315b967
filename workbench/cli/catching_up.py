"""Journaling what happened outside since a workbench process last looked, before a command lists what it
knows (``timeline``, ``memory show``, ``pending list|show``): the TUI's watcher does it as things change."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from engine.archive import outside as sessions_outside
from engine.errors import WorkbenchError
from engine.home import Home, open_home
from engine.memory import TARGETS

from .fit import tell


def catch_up(home: Home, targets: Sequence[str] | None = None) -> None:
    """Journal what happened outside since a workbench process last looked, first: Hermes's memory
    writes and skill changes, the proposals it staged and decided, the sessions it archived or
    deleted (``targets``: only the edits of those memory files, for a memory listing). A step that
    cannot (a lock held past the busy timeout) is a warning on stderr; the listing still comes."""
    steps = [("memory edits", lambda: home.memory.catch_up(TARGETS if targets is None else targets))]
    if targets is None:
        steps += [
            ("skill changes", home.skills.outside.record),
            ("proposals", home.approvals.catch_up),
            ("sessions", lambda: sessions_outside.catch_up(home)),
        ]
    missed: dict[str, list[str]] = {}  # why: the steps it stopped (one damaged file stops them all)
    for what, step in steps:
        try:
            step()
        except (WorkbenchError, OSError, sqlite3.Error) as exc:
            missed.setdefault(exc.message if isinstance(exc, WorkbenchError) else home.explain(exc), []).append(what)
    for reason, whats in missed.items():
        listed = ", ".join(whats[:-1]) + " and " + whats[-1] if len(whats) > 1 else whats[0]
        tell(f"warning: outside {listed} not caught up ({reason}); the listing may miss them")


def catch_up_if_journaled(home: Home, targets: Sequence[str] | None = None) -> None:
    """``catch_up`` for a command that only reads (``home`` opened read-only): in a home a workbench
    already journals, what changed outside is journaled first, a first look at a file included, so the
    listing says what the TUI would and a later outside edit is told apart from it; a home no workbench
    has journaled is left exactly as it is (such a command creates no file in it), as is one whose
    workbench.db cannot be read, even deep in its rows (the command says it shows without the journal)."""
    journal = home.journal

    def readable() -> bool:
        journal.query(limit=1)  # (damage deep in its rows shows only once they are read)
        return True

    if journal.problem() is None and journal.exists() and journal.read_or(readable, False):
        writable = open_home(home.root, create=False)
        try:
            catch_up(writable, targets)
        finally:
            writable.close()
