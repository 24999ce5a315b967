"""The CJK index's upgrade from version 3, for commands: the TUI runs its steps in idle time, a command
has none, so a command that searches runs them itself (``upgrade_before_search``, the engine's rule) and
says how far it is (on stderr: ``--json`` keeps stdout to its one document)."""

from __future__ import annotations

import sys

from engine.archive.upkeep import upgrade_line
from engine.home import Home

from .fit import tell


def upgrade_before_search(home: Home, query: str, *, prefix: bool = False) -> None:
    """The upgrade's steps before a search for ``query``, if one is under way, and how far it is."""

    def first() -> None:
        tell("note: upgrading the CJK search index first (once; quicker than the scan it spares)")
        sys.stderr.flush()

    done = home.archive.upgrade_before_search(query, prefix=prefix, first=first)
    if done is not None:
        tell(f"note: {upgrade_line(done.left)}")
