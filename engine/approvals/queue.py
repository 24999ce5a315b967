"""The approval queue: stage memory and skill writes, then approve, edit or reject them.

Stores decide *whether* to stage with ``should_stage`` and hand over the replay payload
with ``stage``. Approval replays the payload through the owning store's
``apply_staged`` (with all its guards: a replace or remove is pinned to the entry it
targeted when staged, so a stale proposal is refused, never misapplied). A record is
deleted only after its write is on disk; a failed approval leaves it pending.
"""

from __future__ import annotations

import builtins
import dataclasses
import json
import logging
import secrets
import sqlite3
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import approval_gate, lock_waits
from ..clock import shown_time
from ..errors import ReadOnlyError, WorkbenchError
from ..events import PendingChanged
from ..fileio import crash_point
from ..journal import tagged
from ..memory.format import Usage
from ..memory.ops import staged_operations, too_long
from ..memory.targets import FILE_NAMES
from ..textsafety import flat_line, inline, quoted
from ..tools import AlreadyWaiting
from ..values import iso_time
from .labels import detail_summary
from .outside import cited_rows, outcome
from .outside_skills import removes_present
from .preview import Seen, memory_view, proposed_texts, refusal_now, seen_entries, skill_view
from .records import (
    KINDS,
    ORIGINS,
    SUBSYSTEMS,
    PendingRecord,
    PendingStore,
    RecordProblem,
    Scan,
    check_id,
    check_subsystem,
    is_pending_id,
    proposer,
    record_from_dict,
)
from .sources import staging_message

if TYPE_CHECKING:
    from ..home import Home
    from ..journal import JournalEntry
    from ..skills.library import SkillLibrary

log = logging.getLogger(__name__)

PROPOSED_SHOWN = 20  # texts a refused memory proposal shows in place of its diff
NOT_APPLIED = "Not applied, still pending: "  # how both skins say an approval was refused (before its reason)
SHOWN_REFUSED = (
    "its question showed it refused, so it stays pending as that said; approving it now could change "
    "what the question never showed. Look at it again."
)
# What a bulk decision returns: the outcomes that succeeded (under "approved" or "rejected") and "failed".
BulkOutcome = dict[str, Any]  # done (by key), failed and gone (lists); group; cancelled, not_decided


class UnusableRecord(WorkbenchError):
    """A pending record file exists but cannot be parsed (details: path, subsystem, problem)."""


class NoSuchRecord(WorkbenchError):
    """No pending record has this id (never staged, or decided meanwhile, here or by Hermes)."""

    def __init__(self, pending_id: str):
        super().__init__(f"No pending write with id '{pending_id}'. See `workbench pending list`.")


@dataclasses.dataclass
class DryRun:
    """Memory, by target, as approving the proposals previewed through it so far would leave it
    (``ApprovalQueue.preview``'s ``batch``): only targets one of them would change are here. Skills
    are not simulated: ``skills`` names, by skill, the earlier proposal in the run that changes it,
    so one judged alone against the skill as it is now can say so."""

    entries: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    skills: dict[str, str] = dataclasses.field(default_factory=dict)


def _readable_now(pending_id: str) -> WorkbenchError:
    return WorkbenchError(
        f"Pending record {pending_id} reads as a record now (fixed or replaced since it was read): look at it "
        "before deciding. Nothing was changed."
    )


@dataclasses.dataclass(frozen=True)
class PendingGrowth:
    """What the pending adds to one memory store would add if approved (a gauge's ``+N pending``)."""

    chars: int = 0  # of the adds approving would apply, each with its delimiter
    count: int = 0  # those adds
    refused: int = 0  # pending adds approving would refuse (the threat scan, say): not in ``chars``
    refused_chars: int = 0  # what those would have added


class ApprovalQueue:
    def __init__(self, home: Home):
        self.home = home
        self.store = PendingStore(home.pending_dir, home.links)

    # -- the gate -----------------------------------------------------------------
    def should_stage(self, subsystem: str, action: str, origin: str, operations: Sequence[dict] | None = None) -> bool:
        """``approval_gate.should_stage`` under this home's settings."""
        return approval_gate.should_stage(self.home.config, subsystem, action, origin, operations)

    # -- staging ------------------------------------------------------------------
    def stage(
        self,
        *,
        subsystem: str,
        action: str,
        summary: str,
        origin: str,
        payload: dict[str, Any],
        actor: str = "agent",
        session_id: str | None = None,
        message_id: int | None = None,
        base: str | None = None,
        once: bool = False,
    ) -> PendingRecord:
        """Write a pending record (atomically, journaled) and announce it; ``base``: what a skill write
        that replaces or removes found (``skills.library.base_of``), which approving checks. ``once``: raise
        ``AlreadyWaiting`` instead when the same write waits, asked under the queue's lock so two processes
        proposing it at once stage it once."""
        check_subsystem(subsystem)
        if self.home.read_only:
            raise ReadOnlyError("This home is open read-only; nothing can be staged.")
        if origin not in ORIGINS:
            raise WorkbenchError(f"Unknown origin {origin!r}; expected one of: {', '.join(ORIGINS)}.")
        if not isinstance(payload, dict):
            raise WorkbenchError("A staged write needs its replay payload as a mapping.")
        try:  # the payload must survive the round trip through JSON unchanged
            payload = json.loads(json.dumps(payload, ensure_ascii=False))
        except (TypeError, ValueError) as exc:
            raise WorkbenchError(f"The staged payload cannot be stored as JSON: {exc}.") from None
        record = PendingRecord(
            id=self.store.new_id(),
            subsystem=subsystem,
            claimed_action=action,
            claimed_summary=summary,
            origin=origin,
            created_at=self.home.clock.now(),
            payload=payload,
            actor=actor,
            session_id=session_id,
            message_id=message_id,
            base=base,
        )
        journal = self.home.journal
        with self.store.links.lock(self.store.folder(subsystem)):  # so a settling pass never sees it half done
            same = self.waiting(subsystem, payload, base) if once else None
            if same is not None:
                raise AlreadyWaiting(same.id)
            entry = journal.begin(
                "approvals",
                "stage",
                record.id,
                actor=actor,
                after=record.summary,
                session_id=session_id,
                message_id=message_id,
                detail=_detail(record),
            )
            try:
                self.store.write(record)
            except OSError as exc:
                journal.abandon(entry, f"could not write the pending record: {exc}")
                raise WorkbenchError(f"Could not stage the write (it was not saved): {exc.strerror or exc}.") from None
            journal.commit(entry)
        self._announce(record, "staged", actor, entry)
        return record

    def catch_up(self) -> builtins.list[int]:
        """Journal what happened in the queue outside the workbench that no row says yet: each record
        Hermes staged (``_staged_outside``), and each staged record that left the queue with no
        decision of ours (approved or rejected in Hermes: ``_decided_outside``)."""
        if self.home.read_only:
            return []
        return self._staged_outside() + self._decided_outside()

    def _staged_outside(self) -> builtins.list[int]:
        """A ``stage`` row for each record Hermes staged, dated when found (``detail.outside``),
        at the message whose call staged it when state.db holds it already.

        Under the subsystem's folder lock, with the records read again: a decision of ours in
        flight, or another process catching up, is never journaled twice. The lookups in state.db
        are made before the lock, so a slow archive never holds up a decision."""
        ids: builtins.list[int] = []
        for subsystem in ("memory", "skills"):
            fresh = self._unjournaled(subsystem)
            if not fresh:
                continue
            sourced = {record.id: self._sourced(record) for record in fresh}
            with self.store.links.lock(self.store.folder(subsystem)):
                for record in self._unjournaled(subsystem):
                    try:
                        ids += self._journal_staging(sourced.get(record.id) or record)
                    except Exception as exc:  # one record no rule expected never stops the others, or the caller
                        log.warning("could not journal pending write %s that Hermes staged: %s", record.id, exc)
        return ids

    def _journal_staging(self, record: PendingRecord) -> builtins.list[int]:
        """The ``stage`` row of a record Hermes staged, dated when the workbench found it, so the Timeline's
        times read newest first in its order; when Hermes made it is its ``created_at`` (under its folder's lock);
        for a skill delete or remove_file, whether what it removes was there then (``present``), since
        Hermes stages one without looking."""
        detail = {**_detail(record), "outside": True}
        if record.subsystem == "skills" and (present := removes_present(self.home, record.payload)) is not None:
            detail["present"] = present
        return self.home.journal.append_all(
            "approvals",
            record.id,
            [{"action": "stage", "after": record.summary, "detail": detail}],
            actor=record.actor,
            session_id=record.session_id,
            message_id=record.message_id,
        )

    def _staged_first(self, record: PendingRecord) -> None:
        """A record Hermes staged that no row names yet gets its ``stage`` row before a decision's, so
        the Timeline never shows a decision on a proposal it never saw staged (under the lock)."""
        if record.by_hermes and not self.home.journal.targets("approvals", [record.id]):
            self._journal_staging(record)

    def _unjournaled(self, subsystem: str) -> builtins.list[PendingRecord]:
        """The records Hermes staged in ``subsystem`` that no journal row names yet."""
        hermes = [record for record in self.scan(subsystem).records if record.by_hermes]
        if not hermes:
            return []
        named = set(self.home.journal.targets("approvals", [record.id for record in hermes]))
        return [record for record in hermes if record.id not in named]

    def _decided_outside(self) -> builtins.list[int]:
        """An ``approve``, ``reject`` or ``close`` row (actor ``external``, ``detail.outside``) for each
        record the journal last saw staged whose file is gone with no decision of ours: Hermes
        approved or rejected it (or someone deleted it); which one, ``outside.outcome`` tells. Hermes
        writes an approved change before it drops the record, so memory's outside edits are
        journaled first, as evidence. Under each folder's lock, so a decision of ours in flight
        (its row begun first) is never taken for one made outside. A row that cannot be
        settled (a journal damaged by hand, a record no rule expected) is logged and left for
        the next pass, and the others are settled all the same."""
        journal, ids = self.home.journal, []
        if not journal.exists():
            return []
        for subsystem in ("memory", "skills"):
            gone = set(self._gone(subsystem))
            if not gone:
                continue
            self._catch_up(subsystem)
            claimed = set(cited_rows(journal.connection()))
            with self.store.links.lock(self.store.folder(subsystem)):
                # gone before memory was caught up (a record gone since is settled next time, with its evidence),
                # and still gone with no decision of ours
                for row_id in [row_id for row_id in self._gone(subsystem) if row_id in gone]:
                    staged = journal.get(row_id)
                    if staged is None:
                        continue
                    try:
                        ids.append(self._close_outside(staged, claimed))
                    except Exception as exc:  # one record that cannot be judged never stops the others, or the caller
                        log.warning("could not journal how pending write %s left the queue: %s", staged.target, exc)
        return ids

    def _gone(self, subsystem: str) -> builtins.list[int]:
        """The journal rows that last staged a record of ``subsystem`` whose file is gone."""
        found = []
        for row_id, target in self.home.journal.connection().execute(_OPEN_STAGINGS, (subsystem,)).fetchall():
            if not isinstance(target, str) or not is_pending_id(target):
                continue  # (a row not ours names no record)
            path = self.store.path_for(subsystem, target)
            if not path.exists() and not path.is_symlink():
                found.append(row_id)
        return found

    def _catch_up(self, subsystem: str) -> None:
        """The subsystem's outside changes journaled first, as evidence the approvals can cite (skills:
        where a watching process has seen the library before); failing that, the files as they are now
        tell what they can."""
        try:
            self.home.memory.catch_up() if subsystem == "memory" else self.home.skills.outside.record()
        except (WorkbenchError, OSError, sqlite3.Error) as exc:
            log.warning("could not journal outside %s changes before reading decisions: %s", subsystem, exc)

    def _close_outside(self, staged: JournalEntry, claimed: set[int]) -> int:
        """Journal how the record ``staged`` left the queue outside the workbench (``claimed``: the
        outside memory rows approvals cite already, this one's added)."""
        action, why, evidence = outcome(self.home, staged, claimed)
        summary = detail_summary(staged.detail) or staged.detail.get("summary")
        # the proposer staged it first: a restore since (a rejection reverted) is the user's row, not theirs
        stagings = self.home.journal.query(
            subsystem="approvals", target=staged.target, actions=("stage",), limit=1, oldest_first=True
        )
        proposed_by = stagings[0].actor if stagings else staged.actor
        row = self.home.journal.append(
            "approvals",
            action,
            staged.target,
            actor="external",
            before=summary if isinstance(summary, str) else staged.after,
            session_id=staged.session_id,
            message_id=staged.message_id,
            detail={
                **{key: value for key, value in staged.detail.items() if key in RECORD_FIELDS},
                "outside": True,
                "why": why,
                "proposed_by": proposer(proposed_by, staged.detail.get("staged_by")),
                **({"applied_rows": evidence} if evidence else {}),
            },
        )
        claimed.update(evidence)  # (only once cited: a row that failed to append claims nothing)
        return row

    # -- reading ------------------------------------------------------------------
    def scan(self, subsystem: str | None = None) -> Scan:
        """Records (oldest first) and, apart, the files that are not usable records (never deleted)."""
        return self.store.scan(subsystem)

    def list(self, subsystem: str | None = None) -> list[PendingRecord]:
        """Pending records, oldest first (unusable files are skipped; see ``problems``)."""
        return self.scan(subsystem).records

    def waiting(self, subsystem: str, payload: dict[str, Any], base: str | None = None) -> PendingRecord | None:
        """A pending record (staged by us or Hermes) that would apply just this write: proposing it again
        (a review after the agent, a second review of the same turns) gets that record back."""
        same = _same_write(payload)
        return next((r for r in self.list(subsystem) if _same_write(r.payload) == same and r.base == base), None)

    def pending_growth(self, target: str) -> PendingGrowth:
        """What the pending memory adds to ``target`` would add, each judged as its preview judges it:
        one approving would refuse for what it says (a threat its scan blocks, an entry longer than the
        whole store) is counted apart, never as growth, since it would add nothing; one refused only
        because the store has no room for it yet is growth, the overflow a gauge shows before anyone
        approves it."""
        chars = count = refused = refused_chars = 0
        limit = self.home.memory.limit(target)
        for record in self.list("memory"):
            payload = record.payload
            if payload.get("target", "memory") != target or payload.get("action") != "add":
                continue
            content = str(payload.get("content", "")).strip()
            size = len(content) + 3  # (with its "\n§\n")
            try:
                preview = self.preview(record.id)
            except WorkbenchError:  # decided meanwhile: it adds nothing
                continue
            # (over the limit: a budget; no room made lets one longer than the whole store in)
            blocked = bool(preview["error"]) and (preview.get("budget") is None or too_long(content, limit))
            if blocked:
                refused, refused_chars = refused + 1, refused_chars + size
            else:
                chars, count = chars + size, count + 1
        return PendingGrowth(chars, count, refused, refused_chars)

    def problems(self, subsystem: str | None = None) -> builtins.list[RecordProblem]:
        return self.scan(subsystem).problems

    def empty_note(self, subsystem: str | None = None) -> str:
        """What an empty queue (of ``subsystem``'s writes, when given) says: which gates are on, so
        what is queued for approval (or, with none on, what always is)."""
        subsystems = (subsystem,) if subsystem else SUBSYSTEMS
        nothing = f"No pending {KINDS[subsystem]} writes." if subsystem else "Nothing waits for approval."
        on = [s for s in subsystems if self.home.config.bool(f"{s}.write_approval")]
        if on:
            gates = " and ".join(f"{s}.write_approval" for s in on)
            kinds = " and ".join(KINDS[s] for s in on)
            verb = "is" if len(on) == 1 else "are"
            return f"{nothing} {gates} {verb} on: the agent's {kinds} writes are queued for approval."
        always = (
            "a background review's memory replace or remove, and " if "memory" in subsystems else ""
        ) + "any write the threat scan finds suspicious"
        gates = " or ".join(f"{s}.write_approval" for s in subsystems)
        return f"{nothing} Writes are queued for approval with {gates} on in config.yaml; always queued: {always}."

    def count(self, subsystem: str | None = None) -> int:
        return len(self.list(subsystem))

    def get(self, pending_id: str) -> PendingRecord:
        """The record with this id; a clear error if there is none or it is unusable."""
        if isinstance(pending_id, str) and not is_pending_id(pending_id):  # a file `pending list` names, no id?
            named = [p for p in self.problems() if Path(p.path).name in (pending_id, f"{pending_id}.json")]
            if named and (refusal := named[0].reject_refusal):
                raise WorkbenchError(f"{inline(named[0].path)} is no pending record: {refusal} Nothing was changed.")
        found = self.store.find(check_id(pending_id))
        if found is None:
            raise NoSuchRecord(pending_id)
        subsystem, path = found
        try:
            return self.store.read(path, subsystem)
        except ValueError as exc:
            problem = self.store.problem(path, subsystem, str(exc))
            remedy = problem.reject_refusal or (
                f"Fix it by hand, or drop it with `workbench pending reject {pending_id}` (its bytes stay in "
                "the journal)."
            )
            raise UnusableRecord(
                f"Pending record {inline(str(path))} cannot be used ({exc}); it was left untouched. {remedy}",
                path=str(path),
                subsystem=subsystem,
                problem=str(exc),
            ) from None

    # -- reviewing ----------------------------------------------------------------
    def preview(self, pending_id: str, edit: str | None = None, *, batch: DryRun | None = None) -> dict[str, Any]:
        """What approving would do, changing nothing: before/after, a line diff, and for
        memory the budget afterwards and near-duplicate warnings.

        ``batch``: a dry run of approving several in order (approve all's question, previewing
        them oldest first as ``approve_all`` applies them): a memory proposal is judged against
        memory as the ones previewed through it before would leave it, not the live file, and
        what it would leave is kept there for the next (one that would be refused leaves it as
        it was, as approving it would). Nothing is written.

        A proposal that would be refused now (a stale pin, an over-full store) carries
        the refusal in ``error`` instead of a diff (a record whose claims contradict its payload
        carries ``claim_problem`` there, beside its diff) (and a memory one, in ``proposed``, the
        entry texts it asks to write). ``targets`` names the live entry each
        memory replace or remove hits (or that it is gone or ambiguous).
        """
        record = self.get(pending_id)
        preview = self._preview(record, edit, batch)
        if preview["error"] and (cannot := _edit_cannot_help(record, preview)) is not None:
            preview["edit_refusal"] = cannot
        skill = record.payload.get("name") if record.subsystem == "skills" else None
        if batch is not None and isinstance(skill, str):
            if preview["error"] and skill in batch.skills:
                preview["after_earlier"] = batch.skills[skill]  # judged alone: that one changes the skill first
            elif not preview["error"]:  # (one refused itself changes nothing)
                batch.skills.setdefault(skill, record.id)
        return preview

    def _preview(self, record: PendingRecord, edit: str | None, batch: DryRun | None) -> dict[str, Any]:
        sourced = self._sourced(record)  # (a record Hermes wrote names no session: its staging call does)
        view: dict[str, Any] = {
            **_brief(record),
            "origin": record.origin,
            "created_at": record.created_iso,
            "time_known": record.time_known,
            "actor": record.actor,
            "staged_by": record.staged_by,
            "session_id": sourced.session_id,
            "message_id": sourced.message_id,
            "payload": record.payload,
            "edit": edit,
            "error": None,
            "diff": [],
            "duplicates": [],
            "budget": None,
            "targets": [],
        }
        assumed = {"assumed": batch.entries} if batch is not None and record.subsystem == "memory" else {}
        try:
            staged = self._owner(record).preview_staged(
                record.payload, edited_content=edit, **_staging(record), **assumed
            )
        except WorkbenchError as exc:
            return {**view, "error": _refusals(record, _refusal(record, exc.message, self.home.skills))}
        if record.subsystem == "memory":
            self._date_hits(record, staged)
        if staged.get("error"):  # no diff: for memory, the texts it asks to write stand in for it
            proposed = proposed_texts(record.payload, edit) if record.subsystem == "memory" else []
            refused = {
                **view,
                "error": _refusals(record, _refusal(record, str(staged["error"]), self.home.skills)),
                "targets": staged.get("targets", []),
                "proposed": proposed[:PROPOSED_SHOWN],  # a refused batch may hold thousands
                "proposed_count": len(proposed),
            }
            if staged.get("path"):  # where a skill proposal is aimed, known though approving is refused
                refused["path"] = staged["path"]
            if staged.get("size_after") is not None:  # over capacity: the store it would make, and the one it meets
                refused["budget"] = Usage(staged["size_after"], staged["limit"]).to_dict()
                refused["before"] = list(staged["before_entries"])
            return refused
        if record.subsystem == "memory":
            threshold = self.home.memory.duplicate_threshold()
            limit = self.home.memory.limit(staged["target"])
            view.update(memory_view(staged, record.payload, edit, limit, threshold))
            if batch is not None and not record.claim_problem:  # (refused whatever it would write)
                batch.entries[staged["target"]] = list(staged["after_entries"])
        else:
            view.update(skill_view(staged))
        return {**view, "error": record.claim_problem}  # refused whatever it would write: the diff shows what

    # -- decisions a killed process left half made ------------------------------------
    def reconcile(self) -> builtins.list[int]:
        """Settle ``pending`` approval rows: a decision whose effect is on disk is rolled forward, else abandoned.

        An approval is on disk when its store journaled the write for that record (the
        record file is then removed if it is still there); a rejection when the file is
        gone; a staging when it is there.
        """
        journal = self.home.journal
        rows = journal.pending("approvals")
        for row in rows:
            subsystem = row.detail.get("subsystem")
            if subsystem not in ("memory", "skills"):
                journal.abandon(row.id, "interrupted; found on the next open")
                continue
            getattr(self.home, subsystem)  # that store settles its own interrupted writes first
            with self.store.links.lock(self.store.folder(subsystem)):
                path = self.store.path_for(subsystem, row.target)
                gone = not path.exists() and not path.is_symlink()
                if row.action == "approve" and journal.applied(subsystem, row.target):
                    self.store.links.unlink(path, missing_ok=True, sealed=self.store.root)
                    journal.commit(row.id)
                elif (row.action == "reject" and gone) or (row.action in ("stage", "restore") and not gone):
                    journal.commit(row.id)
                else:
                    journal.abandon(row.id, "interrupted before it took effect; the record is still pending")
        return [row.id for row in rows]

    # -- deciding -----------------------------------------------------------------
    def approve(
        self,
        pending_id: str,
        *,
        edit: str | None = None,
        actor: str = "user",
        seen: Seen | None = None,
        anyway: bool = False,
    ) -> dict[str, Any]:
        """Apply a pending write through its store's guards; on success the record goes.

        ``edit`` replaces the proposed text (edit-then-approve). ``seen``: what the approver was
        shown (``preview.seen_in``): a memory write whose entry changed since, or a skill delete
        whose folder did, is refused, not applied to what is there now. With nothing shown, a
        memory write that hits an entry surely written after it was staged is refused too, and
        one that hits an entry changed after that check (``_checked_unseen``), unless ``anyway``.
        A refusal (say, the pinned entry changed since staging) keeps the record pending and is
        returned as ``{"success": False, "error": ...}``.
        Unknown or invalid ids raise.
        """
        self._check_writable()
        record = self.get(pending_id)
        with self.store.links.lock(self.store.folder(record.subsystem)):
            record = self._sourced(self.get(pending_id))  # another process may have decided it meanwhile
            self._staged_first(record)
            journal = self.home.journal
            entry = journal.begin(
                "approvals",
                "approve",
                record.id,
                actor=actor,
                **_journal_fields(record),
                after=edit,
                detail={**_detail(record), "edited": edit},
            )
            try:
                if record.claim_problem:  # (never applied: what was shown of it is not what it does)
                    raise WorkbenchError(record.claim_problem)
                if seen is not None and seen.refused:  # never applied: it may now hit what was never shown
                    raise WorkbenchError(refusal_now(self._preview(record, edit, None)) or SHOWN_REFUSED)
                if seen is None and not anyway:
                    seen = self._checked_unseen(record, edit)
                with lock_waits.inner_waits_cancellable():  # (a cancelled wait abandons this row, below)
                    result = self._owner(record).apply_staged(
                        record.payload,
                        actor=actor,
                        edited_content=edit,
                        pending_id=record.id,
                        session_id=record.session_id,
                        message_id=record.message_id,
                        proposed_by=record.proposer,
                        **_shown_to(record.subsystem, seen),
                        **_staging(record),
                    )
                error = None if result.get("success") else str(result.get("error") or "the write was refused")
            except lock_waits.WaitCancelled as exc:  # (asked for by the skin): nothing was applied
                journal.abandon(entry, exc.message)
                raise
            except KeyboardInterrupt:
                if (wait := lock_waits.interrupted()) is not None:  # stopped before the store's lock was taken
                    journal.abandon(entry, lock_waits.describe_interrupted(wait))
                raise
            except WorkbenchError as exc:
                result, error = exc.to_dict(), exc.message
            if error is not None:
                cannot = _edit_cannot_help(record, self._preview(record, None, None)) if edit is not None else None
                error = cannot or _refusal(record, error, self.home.skills)
                journal.abandon(entry, error)
                failed_id = journal.append(
                    "approvals",
                    "approve_failed",
                    record.id,
                    actor=actor,
                    **_journal_fields(record),
                    after=edit,
                    detail={**_detail(record), "edited": edit, "error": error},
                )
                self._announce(record, "failed", actor, failed_id)
                return {**_brief(record), "success": False, "error": error, "result": result}
            crash_point("approval-applied")
            self.store.delete(record)
            changed = journal.applied(record.subsystem, record.id)  # False: it read so already (a duplicate add)
            journal.commit(entry, detail={**_detail(record), "edited": edit, "result": result, "changed": changed})
        self._announce(record, "approved", actor, entry)
        message = result.get("message") or "Applied."
        return {
            **_brief(record),
            "success": True,
            "edited": edit is not None,
            "changed": changed,
            "message": message,
            "result": result,
        }

    def reject(self, pending_id: str, *, actor: str = "user", unreadable: bool | None = None) -> dict[str, Any]:
        """Drop a pending write. The journal keeps the whole record, so nothing is lost. ``unreadable``:
        whether the person was asked about an unreadable file (True) or a record (False): one that is
        the other now (fixed, or broken, since) is refused; None (the CLI's id) takes either."""
        self._check_writable()
        try:
            record = self.get(pending_id)
        except UnusableRecord as unusable:
            if unreadable is False:
                raise WorkbenchError(
                    f"Pending record {pending_id} cannot be read now (it changed since it was shown: "
                    f"{unusable.details['problem']}): look at it again before deciding. Nothing was changed."
                ) from None
            return self._reject_unusable(pending_id, unusable, actor)
        if unreadable:
            raise _readable_now(pending_id)
        with self.store.links.lock(self.store.folder(record.subsystem)):
            record = self._sourced(self.get(pending_id))
            self._staged_first(record)
            journal = self.home.journal
            entry = journal.begin(
                "approvals",
                "reject",
                record.id,
                actor=actor,
                **_journal_fields(record),
                detail=_detail(record),
            )
            self.store.delete(record)
            journal.commit(entry)
        self._announce(record, "rejected", actor, entry)
        return {
            **_brief(record),
            "success": True,
            "message": f"Rejected pending {record.subsystem} write '{record.id}'.",
        }

    def restore(self, pending_id: str, *, journal_id: int | None = None, actor: str = "user") -> dict[str, Any]:
        """Undo a rejection: put the record back in the queue exactly as it was, from the journal
        row that rejected it (``journal_id``, else the newest). Refused, changing nothing, when
        anything happened to that id since (restored, staged or decided again)."""
        self._check_writable()
        row, record = self._rejected(pending_id, journal_id)
        journal = self.home.journal
        with self.store.links.lock(self.store.folder(record.subsystem)):
            row, record = self._rejected(pending_id, journal_id)  # re-read under the lock
            entry = journal.begin(
                "approvals",
                "restore",
                pending_id,
                actor=actor,
                after=record.summary,
                session_id=record.session_id,
                message_id=record.message_id,
                detail={**_detail(record), "restored_from": row.id, "undo_of": row.id},
            )
            try:
                self.store.write(record)
            except OSError as exc:
                journal.abandon(entry, f"could not write the pending record: {exc}")
                raise WorkbenchError(
                    f"Could not restore the proposal (nothing changed): {exc.strerror or exc}."
                ) from None
            journal.commit(entry)
        self._announce(record, "restored", actor, entry)
        return {
            **_brief(record),
            "success": True,
            "message": f"Restored pending {record.subsystem} write '{record.id}'; it waits for approval again.",
        }

    def restore_problem(self, pending_id: str, journal_id: int | None = None) -> str | None:
        """Why ``restore`` would be refused now (None: it would restore); writes nothing."""
        try:
            self._rejected(pending_id, journal_id)
        except WorkbenchError as exc:
            return exc.message
        return None

    def _rejected(self, pending_id: str, journal_id: int | None) -> tuple[JournalEntry, PendingRecord]:
        """The journal row of the rejection to undo and the record it rebuilds, or WorkbenchError."""
        check_id(pending_id)
        journal = self.home.journal
        newest = next(iter(journal.query(subsystem="approvals", target=pending_id, limit=1)), None)
        row = journal.get(journal_id) if journal_id is not None else newest
        if row is None or (row.subsystem, row.action, row.target, row.status) != (
            "approvals",
            "reject",
            pending_id,
            "done",
        ):
            raise WorkbenchError(
                f"The journal holds no rejection of pending write '{pending_id}'"
                + (f" in row {journal_id}" if journal_id is not None else "")
                + f"; see `workbench timeline --target {pending_id}`."
            )
        if newest is not None and newest.id != row.id:
            raise WorkbenchError(
                f"Pending write '{pending_id}' changed after that rejection (journal row {newest.id}: "
                f"{newest.action}); nothing was changed."
            )
        subsystem = row.detail.get("subsystem")
        if "raw" in row.detail or subsystem not in ("memory", "skills"):
            raise WorkbenchError(
                f"Pending write '{pending_id}' was an unreadable file when it was rejected; its text is in journal "
                f"row {row.id} (`workbench timeline --target {pending_id}`) to restore by hand."
            )
        if self.store.find(pending_id) is not None:
            raise WorkbenchError(f"Pending write '{pending_id}' is in the queue already; nothing was changed.")
        staged = journal.first("approvals", pending_id, "stage")
        data = {
            **row.detail,
            "id": pending_id,
            **({"actor": staged.actor} if staged is not None else {}),  # none staged here: Hermes's record
            "session_id": row.session_id,
            "message_id": row.message_id,
        }
        try:
            return row, record_from_dict(data, pending_id, subsystem)
        except ValueError as exc:
            raise WorkbenchError(f"Journal row {row.id} cannot rebuild pending write '{pending_id}': {exc}.") from None

    def _reject_unusable(self, pending_id: str, unusable: UnusableRecord, actor: str) -> dict[str, Any]:
        """Drop a record file that cannot be parsed, keeping its exact text in the journal row."""
        path, subsystem = Path(unusable.details["path"]), unusable.details["subsystem"]
        with self.store.links.lock(self.store.folder(subsystem)):
            problem = self.store.problem(path, subsystem, unusable.details["problem"])
            if refusal := problem.reject_refusal:
                why = refusal[:1].lower() + refusal[1:]  # (a sentence of its own elsewhere)
                raise WorkbenchError(
                    f"Pending record {inline(str(path))} cannot be rejected: {why} Nothing was changed."
                )
            try:
                raw, own = self.store.raw(path)
            except FileNotFoundError:
                raise NoSuchRecord(pending_id) from None
            except (OSError, WorkbenchError) as exc:
                reason = exc.message if isinstance(exc, WorkbenchError) else exc.strerror
                raise WorkbenchError(
                    f"Pending record {inline(str(path))} cannot be read ({reason}); nothing was changed."
                ) from exc
            # (read once, so the bytes judged are the bytes kept: fixed since they were shown, a record is
            # rejected as one, and seen first)
            if own and self.store.parses(raw, pending_id, subsystem):
                raise _readable_now(pending_id)
            entry = self.home.journal.begin(
                "approvals",
                "reject",
                pending_id,
                actor=actor,
                detail={
                    "subsystem": subsystem,
                    "unusable": unusable.details["problem"],
                    "raw": raw.decode("utf-8", errors="backslashreplace"),
                },
            )
            self.store.links.unlink(path, sealed=self.store.root)
            self.home.journal.commit(entry)
        self.home.bus.publish(
            PendingChanged(actor=actor, journal_id=entry, subsystem=subsystem, pending_id=pending_id, action="rejected")
        )
        return {
            **_unusable_brief(problem),
            "success": True,
            "message": f"Dropped unusable pending {subsystem} record '{pending_id}'; its text is kept in journal "
            f"row {entry}.",
        }

    def approve_all(
        self,
        subsystem: str | None = None,
        *,
        actor: str = "user",
        only: Sequence[str] | None = None,
        seen: dict[str, Seen] | None = None,
        anyway: bool = False,
    ) -> BulkOutcome:
        """Approve every pending record, oldest first; failures stay pending. ``only``: the ids a
        question listed (one staged since it was asked waits for its own answer; ``gone``: those
        decided elsewhere meanwhile); ``seen``: by id, what it showed of each; ``anyway``: as
        ``approve`` takes it."""
        seen = seen or {}
        return self._decide_all(
            subsystem,
            lambda rid: self.approve(rid, actor=actor, seen=seen.get(rid), anyway=anyway),
            "approved",
            only,
            actor=actor,
        )

    def reject_all(
        self,
        subsystem: str | None = None,
        *,
        actor: str = "user",
        only: Sequence[str] | None = None,
        unreadable: bool = False,
        shown_unreadable: Collection[str] | None = None,
    ) -> BulkOutcome:
        """Reject every pending record, oldest first. ``unreadable``: the unusable record files that
        can be rejected go too, after them (each dropped as ``reject`` drops one, its bytes journaled);
        without it they are left as they are (``pending reject all``, which lists nothing first).
        ``shown_unreadable``: the ids of ``only`` a question listed as unreadable files (the rest as
        records): one that is the other now (fixed, or broken, since) is refused, as ``reject`` does."""

        def decide(rid: str) -> dict[str, Any]:
            asked = None if shown_unreadable is None else rid in shown_unreadable
            return self.reject(rid, actor=actor, unreadable=asked)

        return self._decide_all(subsystem, decide, "rejected", only, actor=actor, unreadable=unreadable)

    def _decide_all(
        self, subsystem, decide, done_key: str, only: Sequence[str] | None, *, actor: str, unreadable: bool = False
    ) -> BulkOutcome:
        """Each record of the queue (or of ``only``) decided by ``decide``. Every row the decisions write
        (the approvals, the changes they make) carries one ``bulk`` tag: the Timeline lists them as one
        group (``approve-all:ID``, ``reject-all:ID``) that one revert takes back."""
        done: list[dict[str, Any]] = []
        failed: list[dict[str, Any]] = []
        scan = self.scan(subsystem)
        items = [(r.id, _brief(r)) for r in scan.records]
        if unreadable:
            items += [(p.id, _unusable_brief(p)) for p in scan.problems if p.id and p.reject_refusal is None]
        items = [(pid, brief) for pid, brief in items if only is None or pid in only]
        stopped: dict[str, Any] = {}
        bulk = f"{'approve' if done_key == 'approved' else 'reject'}-all:{secrets.token_hex(4)}"
        with tagged(actor, bulk=bulk):
            for number, (pid, brief) in enumerate(items):
                try:
                    outcome = decide(pid)
                except lock_waits.WaitCancelled as exc:  # (asked for by the skin): this one and the rest stay pending
                    stopped = {"cancelled": exc.message, "not_decided": [item[0] for item in items[number:]]}
                    break
                except WorkbenchError as exc:  # e.g. decided by another process meanwhile
                    outcome = {**brief, "success": False, "error": exc.message}
                (done if outcome["success"] else failed).append(outcome)
        gone = [pid for pid in only or () if pid not in {item[0] for item in items}]
        # the unreadable files a decision of the whole queue did not take, each named and why (``left_said``)
        left = [] if only is not None else [p for p in scan.problems if not unreadable or p.reject_refusal is not None]
        unread = [{"path": p.path, "id": p.id, "error": p.error, "message": p.left_said} for p in left]
        return {
            done_key: done,
            "failed": failed,
            # the Timeline group of the rows written: reverting it (``Timeline.revert``) is the undo of them all
            **({"group": bulk} if done else {}),
            **({"gone": gone} if only is not None else {"left_unreadable": unread}),
            **stopped,
        }

    # -- helpers ------------------------------------------------------------------
    def _date_hits(self, record: PendingRecord, staged: dict[str, Any]) -> None:
        """For each target a write Hermes staged hits by ``old_text`` alone (no pinned entry): when
        the entry it hits now was written after the proposal was staged, say by whom and when
        (``written_after``), since it cannot be the entry the proposal was made against. An
        outside edit found late is known only to lie between the journal's row before it
        (``not_before``) and the file's mtime: ``surely`` False when staging fell in between."""
        from ..memory.history import with_calls  # (here: memory.history imports the approvals package)

        journal = self.home.journal
        for hit in staged.get("targets") or []:
            if hit.get("pinned") is not None or hit.get("entry") is None:
                continue
            rows = journal.about("memory", staged["target"], hit["entry"], limit=20)
            newer = next((r for r in rows if r.after == hit["entry"] and r.at > record.created_at), None)
            if newer is not None:
                newer = with_calls(self.home.memory, [newer])[0]  # a Hermes call's row: the agent's, as history says
                earliest = newer.detail.get("not_before")
                hit["written_after"] = {
                    "at": iso_time(newer.at),
                    "actor": newer.actor,
                    "event_id": newer.id,
                    "surely": not isinstance(earliest, (int, float)) or earliest > record.created_at,
                    "proposal": newer.detail.get("pending_id"),  # written by approving that one (or None)
                }

    def _checked_unseen(self, record: PendingRecord, edit: str | None) -> Seen | None:
        """The entries a memory write approved unseen (the command line shows nothing first) hits, to
        pin them as a question's are (one changed before the write takes the lock is refused, not
        replaced); refused now when one was written after staging: a replace or remove Hermes staged
        names no entry, so the one its words hit now may be a user's newer edit, which it would
        overwrite unasked. Outside writes are journaled first, so Hermes's own are dated too. A hit
        only perhaps written after (found late), or written by approving another proposal (the agent
        staged this one on top of it), is left to apply, as Hermes would."""
        if record.subsystem != "memory":
            return None
        self.home.memory.catch_up()
        try:
            staged = self.home.memory.preview_staged(record.payload, edited_content=edit)
        except WorkbenchError:
            return None  # (refused when applied, with its own reason)
        self._date_hits(record, staged)
        targets = staged.get("targets") or []
        hit = next((t for t in targets if _rewritten(t.get("written_after"))), None)
        if hit is None:
            return Seen(seen_entries(targets), checked=True)
        newer = hit["written_after"]
        reason = (
            f"op {hit['op']} {hit['action']} hits “{flat_line(hit['entry'], 160)}”, written after this was staged "
            f"({shown_time(newer['at']) or newer['at']}, {newer['actor']}, event {newer['event_id']}): it may not be "
            "the entry the proposal meant."
        )
        raise WorkbenchError(  # (``reason`` and ``anyway``: a skin that shows the entry words its own remedy)
            f"{reason} See it with `workbench pending show {record.id}`; apply it to that entry all the same "
            f"with `workbench pending approve {record.id} --anyway`, or drop it with "
            f"`workbench pending reject {record.id}`.",
            reason=reason,
            anyway=True,
        )

    def _sourced(self, record: PendingRecord) -> PendingRecord:
        """The record with the session and message that staged it: a record Hermes wrote names
        neither, so they come from the staging call's result in state.db (``sources``), and its
        decision is journaled at that message like one of ours, never as a write from nowhere."""
        if record.session_id is not None or record.message_id is not None:
            return record
        found = staging_message(self.home, record.subsystem, record.id)
        return record if found is None else dataclasses.replace(record, session_id=found[0], message_id=found[1])

    def _owner(self, record: PendingRecord):
        """The store that replays this record (``home.memory`` or ``home.skills``)."""
        return getattr(self.home, record.subsystem)

    def _check_writable(self) -> None:
        if self.home.read_only:
            raise ReadOnlyError("This home is open read-only; pending writes cannot be approved or rejected.")

    def _announce(self, record: PendingRecord, action: str, actor: str, journal_id: int | None) -> None:
        self.home.bus.publish(
            PendingChanged(
                actor=actor,
                session_id=record.session_id,
                journal_id=journal_id,
                subsystem=record.subsystem,
                pending_id=record.id,
                action=action,
            )
        )


LOOSE_MATCH = (
    " Hermes's own `/skills approve {id}` finds old_string loosely (spacing, indentation, escapes) in {file} "
    "as it reads now, and may still apply it; the workbench applies only the exact text, so approve it there "
    "or reject it."
)
LOOSE_MANY = (
    " Hermes's own `/skills approve {id}` would refuse it too: matching loosely (spacing, indentation, escapes), "
    "it finds old_string in {count} places in {file} as it reads now, and applies a patch found once. Neither can "
    "apply it: reject it (`workbench pending reject {id}`, or r in Approvals), and stage the change again with "
    "old_string copied from the current text."
)
LOOSE_NONE = (
    " Neither can apply it: Hermes's own `/skills approve {id}`, which finds old_string loosely (spacing, "
    "indentation, escapes, similar lines), does not find it in {file} as it reads now either, so the text it "
    "patches was changed or removed since it was staged. Reject it (`workbench pending reject {id}`, or r in "
    "Approvals), and stage the change again against the current text if it is still wanted."
)


CREATE_TAKEN = (
    " A create never writes over a skill: reject it (`workbench pending reject {id}`, or r in Approvals), and "
    "stage the change again as an edit or patch of that skill if it is still wanted."
)


EDIT_CANNOT_HELP = (
    "An edit cannot make this patch apply: it changes only the text the patch writes, and the text it "
    "replaces, {old}, is not in {file} as it reads now. Reject it (r in Approvals, or "
    "`workbench pending reject {id}`); to make the change now, edit the skill itself (e on the Skills "
    "screen, or `workbench skills edit {name}`)."
)


MEMORY_EDIT_CANNOT_HELP = (
    "An edit cannot make this {kind} apply: it changes only the text it writes, and the entry {which}, {old}, "
    "is not in {file} now (removed or rewritten since it was staged). Reject it (r in Approvals, or "
    "`workbench pending reject {id}`); to write its text anyway, add it as an entry of its own (a on the "
    "Memory screen, or `workbench memory add --target {target} TEXT`)."
)


AMBIGUOUS_EDIT_CANNOT_HELP = (
    "An edit cannot make this {kind} apply: it changes only the text it writes, and the text {which}, {old}, "
    "is in {count} entries of {file} now, so it names none of them. Reject it (r in Approvals, or "
    "`workbench pending reject {id}`); to make the change anyway, make it on the entry you mean (the Memory "
    "screen, or `workbench memory {command}`, OLD being text only that entry holds)."
)


def _edit_cannot_help(record: PendingRecord, preview: dict[str, Any]) -> str | None:
    """Why edit-then-approve is refused, and what helps instead, where approving is refused for what no
    edit changes (an edit changes only the text a proposal writes): a skill patch whose old text is not in
    its file now, a memory replace or remove whose entry is gone or whose text is in several entries (unless an
    earlier text of its batch, which an edit may change, decides what it finds); None where an edit may help."""
    payload, error = record.payload, str(preview.get("error") or "")
    if record.subsystem == "skills":
        if record.action != "patch" or not error.startswith("Could not find old_string"):
            return None
        old, name, file = payload.get("old_string"), payload.get("name"), payload.get("file_path")
        return EDIT_CANNOT_HELP.format(
            old=quoted(flat_line(old, 60)) if isinstance(old, str) else "old_string",
            file=inline(file) if isinstance(file, str) and file else "SKILL.md",
            id=record.id,
            name=inline(name) if isinstance(name, str) else "NAME",
        )
    stuck = next((t for t in preview.get("targets") or [] if t.get("status") in ("gone", "ambiguous")), None)
    if stuck is None or not error:
        return None
    earlier = staged_operations(payload)[: stuck["op"] - 1]
    if any(isinstance(op, dict) and op.get("action") in ("add", "replace") for op in earlier):
        return None  # (what it finds follows an earlier text of the batch, which an edit may change)
    verb = "replaces" if stuck["action"] == "replace" else "removes"
    target = inline(str(payload.get("target")))  # (one the store knows: it resolved the targets)
    named = {
        "kind": record.action,
        "which": f"its operation {stuck['op']} {verb}" if record.action == "batch" else f"it {verb}",
        "file": FILE_NAMES.get(target, target),
        "id": record.id,
        "target": target,
    }
    if stuck["status"] == "ambiguous":
        old = quoted(flat_line(stuck["old_text"], 60))
        return AMBIGUOUS_EDIT_CANNOT_HELP.format(
            **named,
            old=old,
            count=len(stuck["matches"]),
            command=f"{stuck['action']} --target {target} --old OLD" + (" NEW" if stuck["action"] == "replace" else ""),
        )
    old = quoted(flat_line(stuck["pinned"] if stuck.get("pinned") is not None else stuck["old_text"], 60))
    return MEMORY_EDIT_CANNOT_HELP.format(**named, old=old)


def _refusal(record: PendingRecord, error: str, skills: SkillLibrary) -> str:
    """``error``, with what to do where approving again cannot help: a create whose name a skill took since
    it was staged; a patch Hermes staged whose text is not found as written, with what Hermes's own
    approval would do with it (``SkillLibrary.hermes_patch_finds``): apply it there, when its loose
    matching finds the text where it applies a patch, else that neither can."""
    if record.subsystem == "skills" and record.action == "create" and error.startswith("A skill named "):
        return error + CREATE_TAKEN.format(id=record.id)
    if not (record.by_hermes and record.subsystem == "skills" and error.startswith("Could not find old_string")):
        return error
    found = skills.hermes_patch_finds(record.payload)
    if found is None:  # (the file cannot be read now, or is too large to tell soon: not known)
        return error + LOOSE_MATCH.format(id=record.id, file="the file")
    count, label = found
    if count == 1 or (count and record.payload.get("replace_all")):
        return error + LOOSE_MATCH.format(id=record.id, file=label)
    return error + (LOOSE_MANY if count else LOOSE_NONE).format(id=record.id, file=label, count=count)


def _refusals(record: PendingRecord, error: str) -> str:
    """Why approving is refused: a record that lies about its payload first, then what else refuses it."""
    return f"{record.claim_problem} Besides: {error}" if record.claim_problem else error


def _unusable_brief(problem: RecordProblem) -> dict[str, Any]:
    """An unusable record as a decision's outcome names it (``reject`` returns the same keys)."""
    return {
        "id": problem.id,
        "subsystem": problem.subsystem,
        "action": "unknown",
        "summary": f"unusable record ({problem.error})",
        "unusable": True,
    }


def _brief(record: PendingRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "subsystem": record.subsystem,
        "action": record.action,
        "summary": record.summary,
        "claim_problem": record.claim_problem,
        "flags": record.flags,
    }


# The newest staging (or restore) of each record of a subsystem with nothing after it: records the
# journal says are still in the queue.
_OPEN_STAGINGS = (
    "SELECT s.id, s.target FROM journal AS s WHERE s.subsystem = 'approvals' AND s.action IN ('stage', 'restore') "
    "AND s.status = 'done' AND CASE WHEN json_valid(s.detail) THEN json_extract(s.detail, '$.subsystem') END = ? "
    "AND NOT EXISTS (SELECT 1 FROM journal AS d WHERE d.subsystem = 'approvals' AND d.target = s.target "
    "AND d.id > s.id AND d.status != 'abandoned' AND d.action != 'approve_failed') ORDER BY s.id"
)


def _shown_to(subsystem: str, seen: Seen | None) -> dict[str, Any]:
    """The part of ``seen`` the subsystem's ``apply_staged`` checks, as its keyword."""
    if seen is None:
        return {}
    if subsystem == "memory" and seen.entries:
        return {"seen": seen.entries, "checked": seen.checked}
    if subsystem == "skills" and seen.folder is not None:
        return {"folder_stamp": seen.folder}
    return {}


def _rewritten(newer: dict[str, Any] | None) -> bool:
    """Whether a hit's ``written_after`` is surely a rewrite made after staging, not an approval's write."""
    return bool(newer and newer["surely"] and newer["proposal"] is None)


def _staging(record: PendingRecord) -> dict[str, Any]:
    """When a skills record was staged and what it found, for its store to check approving against."""
    return {"staging": (record.created_at, record.base)} if record.subsystem == "skills" else {}


def _journal_fields(record: PendingRecord) -> dict[str, Any]:
    """The journal columns every row about a record fills the same way."""
    return {"before": record.summary, "session_id": record.session_id, "message_id": record.message_id}


# What the journal keeps of a record (``_detail``); a decision made outside copies these from the
# row that queued it, never that row's own links (a restore's ``undo_of``, a revert group's tags).
RECORD_FIELDS = ("subsystem", "action", "origin", "summary", "created_at", "payload", "staged_by", "base")


def _detail(record: PendingRecord) -> dict[str, Any]:
    """What the journal keeps of a record: enough to recreate it, its claims as its file made them."""
    data = record.to_dict()
    return {field: data[field] for field in RECORD_FIELDS}


def _same_write(payload: dict[str, Any]) -> dict[str, Any]:
    """What a payload writes, for comparing two: unset keys left out (Hermes's ``old_text: null`` on an
    add) and text without the blanks around it."""
    return {
        key: value.strip() if isinstance(value, str) else value for key, value in payload.items() if value is not None
    }
