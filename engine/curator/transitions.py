"""The deterministic lifecycle rule: one decision per skill, from its usage record and "now".

Pure functions of (record, now, policy) so the whole transition table is testable
with a fixed clock. Order follows Hermes: pinned is never touched; a skill without a
record is seeded first; never-used skills keep a grace period from creation; then
archive, stale, and reactivation by activity.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..skills.usage import last_activity, parse_iso

DAY = 86400.0
SEED, ARCHIVE, STALE, REACTIVATE = "seed", "archive", "stale", "reactivate"
# Why nothing is decided on an unreadable .usage.json: read as empty (as Hermes reads it) no skill is
# agent-made, pinned or ever used, so a pass would skip the agent's skills and age the pinned ones.
UNJUDGED = (
    "The Curator did not run: that file says which skills the agent made, which are pinned and when each was last used"
)


@dataclass(frozen=True)
class Policy:
    stale_after_days: int
    archive_after_days: int

    @classmethod
    def from_config(cls, config) -> Policy:
        stale, archive = config.int("curator.stale_after_days"), config.int("curator.archive_after_days")
        if stale < 1 or archive < stale:
            raise ConfigError(
                f"curator.stale_after_days ({stale}) must be at least 1 and no more than "
                f"curator.archive_after_days ({archive}). Fix config.yaml."
            )
        return cls(stale, archive)


def anchor_of(record: dict[str, Any], now: float) -> float:
    """Last activity, else creation, else now. A restore is no activity, as in Hermes 0.19.0 (its
    ``restore_skill`` stamps nothing, and its curator reads only use, view and patch): a skill restored
    after long disuse is archived again by the next pass, ours or Hermes's, unless it is used or pinned.
    Counting ``restored_at`` kept it here while Hermes's curator, on the same home, archived it."""
    for moment in (last_activity(record), parse_iso(record.get("created_at"))):
        if moment is not None:
            return moment
    return now


def decide(record: dict[str, Any] | None, now: float, policy: Policy) -> str | None:
    """``seed``, ``archive``, ``stale``, ``reactivate`` or None (leave it)."""
    if record is None:
        return SEED
    if record.get("pinned"):
        return None
    anchor = anchor_of(record, now)
    stale_cutoff = now - policy.stale_after_days * DAY
    state = record.get("state") or "active"
    if int(record.get("use_count") or 0) == 0 and anchor > stale_cutoff:  # never used: grace from creation
        return REACTIVATE if state == "stale" else None
    if anchor <= now - policy.archive_after_days * DAY and state != "archived":
        return ARCHIVE
    if anchor <= stale_cutoff and state == "active":
        return STALE
    if anchor > stale_cutoff and state == "stale":
        return REACTIVATE
    return None
