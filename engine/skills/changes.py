"""One recorded change to the skills tree: blobs, journal, the mutation, ledger, event.

Skill writes (``skill_manage``) and Curator moves share this path so that every change
is journaled before it happens, is rolled back from the ledger the same way, and is
announced on the bus only once it is on disk.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..curator.ledger import Ledger
from ..events import SkillChanged
from .validation import SkillError

log = logging.getLogger(__name__)

# Journal actors -> the ledger's (Hermes knows curator | agent | user).
_LEDGER_ACTOR = {"review": "curator", "external": "user"}


@dataclass
class Change:
    """What to do and how to describe it; ``text_file`` (home-relative) feeds the journal's before/after."""

    action: str
    skill: str
    actor: str
    roots: list[Path]
    mutate: Callable[[], None]
    text_file: str | None = None
    keep_blobs: bool = True  # False for pure moves: the content survives at the destination
    session_id: str | None = None
    message_id: int | None = None
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Recorded:
    journal_id: int
    ledger_id: str | None


def _text(files: dict[str, bytes], rel: str | None) -> str | None:
    data = files.get(rel) if rel else None
    return data.decode("utf-8", "replace") if data is not None else None


def record_change(home, ledger: Ledger, change: Change) -> Recorded:
    before = ledger.snapshot(change.roots)
    if change.keep_blobs:
        ledger.save_blobs(before)  # fail closed: nothing is removed before its content is saved
    journal_id = home.journal.begin(
        "skills", change.action, change.skill, actor=change.actor, before=_text(before, change.text_file),
        session_id=change.session_id, message_id=change.message_id, detail=change.evidence or None)
    try:
        change.mutate()
    except SkillError as exc:
        home.journal.abandon(journal_id, exc.message)
        raise
    except OSError as exc:
        home.journal.abandon(journal_id, str(exc))
        raise SkillError(f"Could not {change.action} skill '{change.skill}': {exc.strerror or exc}. "
                         "Check the folder's permissions and free space.")
    after = ledger.snapshot(change.roots)
    ledger_id = None
    try:
        ledger_id = ledger.append(actor=_LEDGER_ACTOR.get(change.actor, change.actor), action=change.action,
                                  skill=change.skill, before=before, after=after, evidence=change.evidence).id
    except OSError:  # the ledger is an audit trail, never a gate (as in Hermes)
        log.exception("ledger append failed for %s %s", change.action, change.skill)
    home.journal.commit(journal_id, after=_text(after, change.text_file),
                        detail={**change.evidence, "ledger_id": ledger_id})
    home.bus.publish(SkillChanged(actor=change.actor, session_id=change.session_id, journal_id=journal_id,
                                  name=change.skill, action=change.action))
    return Recorded(journal_id, ledger_id)


def remove_empty_parents(path: Path, stop: Path) -> None:
    """Remove now-empty folders from ``path`` upwards, never ``stop`` itself or anything above it."""
    while path != stop and stop in path.parents:
        try:
            path.rmdir()
        except OSError:
            return
        path = path.parent
