"""The CJK index's upgrade from version 3, for commands: the TUI runs its steps in idle time, a command
has none, so a command that searches runs them itself and says how far it is (on stderr: ``--json`` keeps
stdout to its one document)."""

from __future__ import annotations

import sys

from engine.archive.upkeep import upgrade_line
from engine.home import Home

STEP_BUDGET_S = 0.5  # a search the upgrade does not concern waits this long at most


def upgrade_before_search(home: Home, query: str, *, prefix: bool = False) -> None:
    """Steps of the upgrade, if one is under way: all of them when ``query`` would otherwise scan what it
    has not reached (``waits_on_upgrade``: the scan costs more), else ``STEP_BUDGET_S`` of them."""
    archive = home.archive
    if not home.workbench_db_path.exists() or archive.bigram_index.unfolded() is None:
        return  # (a home with no workbench.db has no index to upgrade: looking would create one)
    whole = archive.waits_on_upgrade(query, prefix=prefix)
    if whole:
        sys.stderr.write("note: upgrading the CJK search index first (once; quicker than the scan it spares)\n")
        sys.stderr.flush()
    sys.stderr.write(f"note: {upgrade_line(archive.upgrade_index(None if whole else STEP_BUDGET_S))}\n")
