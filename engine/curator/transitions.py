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


def reason(decision: str, record: dict[str, Any], now: float, policy: Policy) -> str:
    """Why ``decide`` decided ``decision`` (stale, archive or reactivate), in words a dry run shows beside
    the skill: how long since its last activity (use, view or patch), else since it was made, against
    the limit it passed or is back within (``curator.stale_after_days``, ``curator.archive_after_days``)."""
    ago = _ago(now - anchor_of(record, now))
    moment = last_activity(record)
    if moment is None:
        since = f"unused since it was made {ago}"
    else:
        done = next(word for word, key in _ACTIVITY if parse_iso(record.get(key)) == moment)
        since = f"last {done} {ago}"
    if decision == ARCHIVE:
        return f"{since}; the archive limit is {_days(policy.archive_after_days * DAY)}"
    if decision == STALE:
        return f"{since}; the stale limit is {_days(policy.stale_after_days * DAY)}"
    return f"{since}; within the stale limit of {_days(policy.stale_after_days * DAY)}"


_ACTIVITY = (("used", "last_used_at"), ("viewed", "last_viewed_at"), ("patched", "last_patched_at"))


def _days(seconds: float) -> str:
    days = int(seconds // DAY)
    return f"{days} day{'s' * (days != 1)}"


def _ago(seconds: float) -> str:
    """How long ago, in whole days: a skill Hermes patched an hour ago read "last patched 0 days ago"."""
    return "under a day ago" if seconds < DAY else f"{_days(seconds)} ago"
