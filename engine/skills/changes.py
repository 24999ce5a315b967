"""One recorded change to the skills tree: blobs, journal, the mutation, usage, ledger, event.

Skill writes (``skill_manage``) and Curator moves share this path so that every change
is journaled before it happens, is rolled back from the ledger the same way, and is
announced on the bus only once it is on disk.

A change is all or nothing: the mutation, its usage record and its ledger row either
all land, or every step that ran is undone (a move is moved back, written files get
their saved bytes back, the usage record and the ledger row are restored) and the
journal row says ``abandoned`` with why. Only then is the error raised.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..curator.ledger import Ledger
from ..errors import WorkbenchError
from ..events import SkillChanged
from .validation import SkillError

log = logging.getLogger(__name__)

# Journal actors -> the ledger's (Hermes knows curator | agent | user).
_LEDGER_ACTOR = {"review": "curator", "external": "user"}
TRASH_PREFIX = ".trash-"  # a folder being deleted waits here (hidden from every listing) until the commit

Undo = Callable[[], None]


@dataclass
class Change:
    """What to do and how to describe it; ``text_file`` (home-relative) feeds the journal's before/after.

    ``undo`` reverses a successful ``mutate`` exactly (a move back); without one, the files
    under ``roots`` are put back from the snapshot taken before. ``usage`` applies the
    usage-record update that belongs to the change and returns how to reverse it;
    ``cleanup`` runs once the change is committed (deleting a trashed folder).
    """

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
    undo: Undo | None = None
    usage: Callable[[], Undo] | None = None
    cleanup: Callable[[], None] | None = None


@dataclass(frozen=True)
class Recorded:
    journal_id: int
    ledger_id: str | None


def _text(files: dict[str, bytes], rel: str | None) -> str | None:
    data = files.get(rel) if rel else None
    return data.decode("utf-8", "replace") if data is not None else None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, WorkbenchError):
        return exc.message
    if isinstance(exc, OSError):
        return str(exc.strerror or exc)
    return str(exc) or type(exc).__name__


def _revert(home, ledger: Ledger, roots: list[Path], before: dict[str, bytes]) -> Undo:
    """How to put the files under ``roots`` back to ``before`` (rewrite changed ones, remove new ones)."""
    def undo() -> None:
        now = ledger.snapshot(roots)
        for rel, data in before.items():
            if now.get(rel) != data:
                home.links.write_bytes(home.root / rel, data)
        for rel in now.keys() - before.keys():
            home.links.unlink(home.root / rel, missing_ok=True)
            remove_empty_parents((home.root / rel).parent, ledger.skills_dir)
    return undo


def record_change(home, ledger: Ledger, change: Change) -> Recorded:
    try:
        before = ledger.snapshot(change.roots)
        if change.keep_blobs:
            ledger.save_blobs(before)  # fail closed: nothing is removed before its content is saved
    except (OSError, WorkbenchError) as exc:
        raise SkillError(f"Could not {change.action} skill '{change.skill}': saving its current files failed "
                         f"({_reason(exc)}). Nothing was changed; check free space and permissions.")
    journal_id = home.journal.begin(
        "skills", change.action, change.skill, actor=change.actor, before=_text(before, change.text_file),
        session_id=change.session_id, message_id=change.message_id, detail=change.evidence or None)
    undos: list[Undo] = []
    try:
        if change.undo is None:
            undos.append(_revert(home, ledger, change.roots, before))  # also covers a mutation that failed half way
        change.mutate()
        if change.undo is not None:
            undos.append(change.undo)
        if change.usage is not None:
            undos.append(change.usage())
        after = ledger.snapshot(change.roots)
        entry = ledger.append(actor=_LEDGER_ACTOR.get(change.actor, change.actor), action=change.action,
                              skill=change.skill, before=before, after=after, evidence=change.evidence)
        undos.append(lambda: ledger.retract(entry.id))
        home.journal.commit(journal_id, after=_text(after, change.text_file),
                            detail={**change.evidence, "ledger_id": entry.id})
    except (OSError, WorkbenchError, sqlite3.Error) as exc:
        _roll_back(home, journal_id, change, undos, exc)
    if change.cleanup is not None:
        try:
            change.cleanup()
        except OSError:
            log.warning("could not finish removing a trashed folder of %s; it stays hidden under skills/",
                        change.skill, exc_info=True)
    home.bus.publish(SkillChanged(actor=change.actor, session_id=change.session_id, journal_id=journal_id,
                                  name=change.skill, action=change.action))
    return Recorded(journal_id, entry.id)


def _roll_back(home, journal_id: int, change: Change, undos: list[Undo], exc: BaseException) -> None:
    """Undo the steps that ran (newest first), mark the journal row, and raise what the person must know."""
    failed = []
    for undo in reversed(undos):
        try:
            undo()
        except (OSError, WorkbenchError, sqlite3.Error) as undo_exc:
            failed.append(_reason(undo_exc))
    what = f"Could not {change.action} skill '{change.skill}': {_reason(exc)}."
    if failed:
        note = f"{what} Rolling it back also failed ({'; '.join(failed)}); the skills tree may be part way."
        home.journal.abandon(journal_id, note)
        raise SkillError(f"{note} See `workbench skills list` and journal row {journal_id}; free some space and "
                         "run the action again.")
    home.journal.abandon(journal_id, f"rolled back: {_reason(exc)}")
    raise SkillError(f"{what} Every step was rolled back, so nothing was changed. Check free space and "
                     "permissions, then retry.")


def remove_tree_later(folder: Path, stop: Path) -> tuple[Callable[[], None], Undo, Callable[[], None]]:
    """(mutate, undo, cleanup) deleting ``folder`` all or nothing: move it to a hidden name beside it
    (same filesystem, so atomic), and delete that only once the change is committed."""
    trash = folder.with_name(f"{TRASH_PREFIX}{uuid.uuid4().hex[:8]}-{folder.name}")

    def cleanup() -> None:
        shutil.rmtree(trash)
        remove_empty_parents(folder.parent, stop)
    return lambda: os.rename(folder, trash), lambda: os.rename(trash, folder), cleanup


def remove_empty_parents(path: Path, stop: Path) -> None:
    """Remove now-empty folders from ``path`` upwards, never ``stop`` itself or anything above it."""
    while path != stop and stop in path.parents:
        try:
            path.rmdir()
        except OSError:
            return
        path = path.parent
