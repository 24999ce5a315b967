"""Whether a write waits for approval: the rule each store asks before an agent's write.

Apart from the approval queue (``engine.approvals``), which an agent's first write in a process
imported (the records, the curator's ledger, ``uuid``: about 17 ms) and settled only to ask this."""

from __future__ import annotations

from collections.abc import Sequence

from .config import Config
from .errors import WorkbenchError
from .tools import BACKGROUND_REVIEW

SUBSYSTEMS = ("memory", "skills")
DESTRUCTIVE_MEMORY_ACTIONS = ("replace", "remove")


def check_subsystem(subsystem: object) -> str:
    if subsystem not in SUBSYSTEMS:
        raise WorkbenchError(f"Unknown subsystem {subsystem!r}; expected one of: {', '.join(SUBSYSTEMS)}.")
    return subsystem


def should_stage(
    config: Config, subsystem: str, action: str, origin: str, operations: Sequence[dict] | None = None
) -> bool:
    """True when this write must wait for approval instead of being applied.

    Staged when ``<subsystem>.write_approval`` is on, and always for a memory
    replace/remove (or a batch holding one) from an unattended background review
    (Hermes's delete gate). Pass a batch's ``operations``; a background batch given
    without them is staged, since it cannot be shown to be add-only.
    """
    check_subsystem(subsystem)
    if config.bool(f"{subsystem}.write_approval"):
        return True
    if subsystem != "memory" or origin != BACKGROUND_REVIEW:
        return False
    if action == "batch":
        if operations is None:
            return True
        return any(isinstance(op, dict) and op.get("action") in DESTRUCTIVE_MEMORY_ACTIONS for op in operations)
    return action in DESTRUCTIVE_MEMORY_ACTIONS
