"""What every agent tool receives besides its arguments: who is calling, from where.

The runner builds one ``ToolContext`` per tool call; stores use it to journal the actor,
session and message, and to decide whether a write must be staged for approval.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FOREGROUND = "foreground"
BACKGROUND_REVIEW = "background_review"
FLUSH = "flush"  # the memory flush that runs before a compression


@dataclass
class ToolContext:
    actor: str = "agent"  # agent | review | curator | user | external (journal actors)
    session_id: str | None = None
    message_id: int | None = None  # the assistant message that made the tool call, when known
    origin: str = FOREGROUND  # FOREGROUND, BACKGROUND_REVIEW or FLUSH (approval gate input)
    turn_state: dict[str, Any] = field(default_factory=dict)  # per-turn counters, reset by the runner each turn


# Where a staged write is reviewed, for a tool result to say: the workbench's ways, not Hermes's
# `/memory pending` slash command, which no workbench screen or command answers to.
REVIEW_WHERE = "on the workbench's Approvals screen (key 4) or with `workbench pending list`"


class AlreadyWaiting(Exception):
    """Staging with ``once`` found the same write waiting (``pending_id``): one proposal to approve, not two."""

    def __init__(self, pending_id: str):
        super().__init__(pending_id)
        self.pending_id = pending_id


def already_waiting(pending_id: str) -> dict[str, Any]:
    """A tool's result for a write proposed again while the same one waits: one proposal to approve."""
    return {
        "success": True,
        "staged": True,
        "pending_id": pending_id,
        "message": f"The same write already waits for approval ({pending_id}), so it was not staged again. "
        f"Not yet saved — review it {REVIEW_WHERE}.",
    }
