"""One recorded change to the skills tree: blobs, journal, the mutation, usage, ledger, event.

Skill writes (``skill_manage``) and Curator moves share this path so that every change
is journaled before it happens, is rolled back from the ledger the same way, and is
announced on the bus only once it is on disk.

A change is all or nothing: the mutation, its usage record and its ledger row either
all land, or every step that ran is undone (a move is moved back, written files get
their saved bytes back, the usage record and the ledger row are restored) and the
journal row says ``abandoned`` with why. Only then is the error raised.

A process killed part way leaves its journal row ``pending``, with what is needed to
settle it (``resume``: the roots, the hashes of their files, the usage record before).
``reconcile`` runs on the next open, under the skills lock: a change whose ledger row
was written is rolled forward; any other is rolled back from the saved blobs (a move is
moved back, a trashed folder is put back) and marked ``abandoned``.
"""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import shutil
import sqlite3
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..curator.ledger import Ledger
from ..errors import WorkbenchError
from ..events import SkillChanged
from ..fileio import crash_point
from .outside import Scope
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


@contextlib.contextmanager
def looked_around(home, names: Iterable[str], roots: Iterable[str] = ()) -> Iterator[Scope]:
    """Around each change of ours, a look for outside ones (``outside.record``) at what it touches (the
    skills ``names``, the home-relative ``roots``): those made before it are journaled as theirs
    first, and the kept look then moves past ours, so an outside change after it (Hermes patching a
    skill the CLI just pinned, with no TUI watching) is not taken for ours. The change sets the
    scope's ``row`` once its journal row is begun. A change that fails takes no look after it."""
    scope = Scope(frozenset(names), tuple(roots))
    _look_outside(home, scope)
    yield scope
    _look_outside(home, scope)


def _look_outside(home, scope: Scope) -> None:
    try:
        home.skills.outside.record(scope)
    except (WorkbenchError, OSError, sqlite3.Error) as exc:  # the change itself goes ahead
        log.warning("outside skill changes not looked at: %s", _reason(exc))


def record_change(home, ledger: Ledger, change: Change) -> Recorded:
    if change.usage is not None:  # refused before any step, rather than rolled back after its files moved
        home.skills.usage.check()
    names = [change.skill, *change.evidence.get("absorbed", ())]  # (a consolidation's skills)
    with looked_around(home, names, [ledger.rel(root) for root in change.roots]) as scope:
        return _record_change(home, ledger, change, scope)


def _record_change(home, ledger: Ledger, change: Change, scope: Scope) -> Recorded:
    try:
        before = ledger.snapshot(change.roots)
        if change.keep_blobs:
            ledger.save_blobs(before)  # fail closed: nothing is removed before its content is saved
    except (OSError, WorkbenchError) as exc:
        raise SkillError(
            f"Could not {change.action} skill '{change.skill}': saving its current files failed "
            f"({_reason(exc)}). Nothing was changed; check free space and permissions."
        ) from exc
    resume = {
        "roots": list(scope.roots),
        "files": ledger.hashes(before),
        "usage": change.usage is not None,
        "usage_before": home.skills.usage.load().get(change.skill) if change.usage else None,
    }
    journal_id = home.journal.begin(
        "skills",
        change.action,
        change.skill,
        actor=change.actor,
        before=_text(before, change.text_file),
        session_id=change.session_id,
        message_id=change.message_id,
        detail={**change.evidence, "resume": resume},
    )
    scope.row = journal_id
    undos: list[Undo] = []
    try:
        if change.undo is None:
            undos.append(_revert(home, ledger, change.roots, before))  # also covers a mutation that failed half way
        change.mutate()
        if change.undo is not None:
            undos.append(change.undo)
        if change.usage is not None:
            undos.append(change.usage())
        crash_point("skills-mutated")
        after = ledger.snapshot(change.roots)
        entry = ledger.append(
            actor=_LEDGER_ACTOR.get(change.actor, change.actor),
            action=change.action,
            skill=change.skill,
            before=before,
            after=after,
            evidence={**change.evidence, "journal_id": journal_id},
        )
        undos.append(lambda: ledger.retract(entry.id))
        crash_point("skills-ledgered")
        home.journal.commit(  # the roots stay: the outside-change check knows these files are ours (outside.py)
            journal_id,
            after=_text(after, change.text_file),
            detail={**change.evidence, "ledger_id": entry.id, "roots": resume["roots"]},
        )
    except (OSError, WorkbenchError, sqlite3.Error) as exc:
        _roll_back(home, journal_id, change, undos, exc)
    if change.cleanup is not None:
        try:
            change.cleanup()
        except OSError:
            log.warning(
                "could not finish removing a trashed folder of %s; it stays hidden under skills/",
                change.skill,
                exc_info=True,
            )
    home.bus.publish(
        SkillChanged(
            actor=change.actor,
            session_id=change.session_id,
            journal_id=journal_id,
            name=change.skill,
            action=change.action,
        )
    )
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
        raise SkillError(
            f"{note} See `workbench skills list` and journal row {journal_id}; free some space and "
            "run the action again."
        )
    home.journal.abandon(journal_id, f"rolled back: {_reason(exc)}")
    # (a refusal says its own cause: only a failed file operation points at space and permissions)
    hint = "" if isinstance(exc, WorkbenchError) else " Check free space and permissions, then retry."
    raise SkillError(f"{what} Every step was rolled back, so nothing was changed.{hint}")


def reconcile(home, ledger: Ledger, usage) -> list[int]:
    """With the skills lock held: settle every ``pending`` skills row left by a process that died mid-change."""
    rows = home.journal.pending("skills")
    if not rows:
        return []
    written = {e.evidence.get("journal_id"): e for e in ledger.entries() if e.evidence.get("journal_id")}
    for row in rows:
        resume = row.detail.get("resume") or {}
        roots = [home.root / rel for rel in resume.get("roots", [])]
        entry = written.get(row.id)
        if entry is not None:  # every step ran; only the commit is missing
            _drop_trash(roots, put_back=False)
            detail = {k: v for k, v in row.detail.items() if k != "resume"}
            home.journal.commit(row.id, detail={**detail, "ledger_id": entry.id, "roots": resume.get("roots", [])})
            continue
        try:
            _undo_interrupted(home, ledger, usage, row.target, row.detail, roots, resume)
        except (OSError, WorkbenchError) as exc:
            home.journal.abandon(row.id, f"interrupted, and rolling it back on the next open failed: {_reason(exc)}")
            continue
        home.journal.abandon(row.id, "interrupted before its ledger row; rolled back on the next open")
    return [row.id for row in rows]


def _undo_interrupted(
    home, ledger: Ledger, usage, name: str, detail: dict[str, Any], roots: list[Path], resume: dict[str, Any]
) -> None:
    source, dest = detail.get("from"), detail.get("to")
    if isinstance(source, str) and isinstance(dest, str):  # a move: move it back if it happened
        source_path, dest_path = ledger.skills_dir / source, ledger.skills_dir / dest
        if dest_path.exists() and not source_path.exists():
            source_path.parent.mkdir(parents=True, exist_ok=True)
            os.rename(dest_path, source_path)
            remove_empty_parents(dest_path.parent, ledger.skills_dir)
    else:
        _drop_trash(roots, put_back=True)
        files = {}
        for rel, digest in (resume.get("files") or {}).items():
            data = ledger.blob(digest)
            if data is None:
                raise SkillError(f"the saved copy of {rel} is missing")
            files[rel] = data
        _revert(home, ledger, roots, files)()
    if resume.get("usage"):  # the usage step may have run: put the record back as it was
        old = resume.get("usage_before")

        def back(records, now):
            if old is None:
                records.pop(name, None)
            else:
                records[name] = old

        usage.update(back)


def _drop_trash(roots: list[Path], *, put_back: bool) -> None:
    """Hidden ``.trash-*`` copies of ``roots``: put back where the root is gone (``put_back``), else deleted."""
    for root in roots:
        for trash in root.parent.glob(f"{TRASH_PREFIX}*-{glob.escape(root.name)}"):
            if put_back and not root.exists():
                os.rename(trash, root)
            else:
                shutil.rmtree(trash, ignore_errors=True)


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
