"""The approval queue: stage memory and skill writes, then approve, edit or reject them.

Stores decide *whether* to stage with ``should_stage`` and hand over the replay payload
with ``stage``. Approval replays the payload through the owning store's
``apply_staged`` (with all its guards: a replace or remove is pinned to the entry it
targeted when staged, so a stale proposal is refused, never misapplied). A record is
deleted only after its write is on disk; a failed approval leaves it pending.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Sequence

from ..errors import ReadOnlyError, WorkbenchError
from ..events import PendingChanged
from ..tools import BACKGROUND_REVIEW
from .records import ORIGINS, PendingRecord, PendingStore, RecordProblem, check_id, check_subsystem

if TYPE_CHECKING:
    from ..home import Home

DESTRUCTIVE_MEMORY_ACTIONS = ("replace", "remove")


class ApprovalQueue:
    def __init__(self, home: "Home"):
        self.home = home
        self.store = PendingStore(home.pending_dir)

    # -- the gate -----------------------------------------------------------------
    def should_stage(self, subsystem: str, action: str, origin: str,
                     operations: Sequence[dict] | None = None) -> bool:
        """True when this write must wait for approval instead of being applied.

        Staged when ``<subsystem>.write_approval`` is on, and always for a memory
        replace/remove (or a batch holding one) from an unattended background review
        (Hermes's delete gate). Pass a batch's ``operations``; a background batch given
        without them is staged, since it cannot be shown to be add-only.
        """
        check_subsystem(subsystem)
        if self.home.config.bool(f"{subsystem}.write_approval"):
            return True
        if subsystem != "memory" or origin != BACKGROUND_REVIEW:
            return False
        if action == "batch":
            if operations is None:
                return True
            return any(isinstance(op, dict) and op.get("action") in DESTRUCTIVE_MEMORY_ACTIONS for op in operations)
        return action in DESTRUCTIVE_MEMORY_ACTIONS

    # -- staging ------------------------------------------------------------------
    def stage(self, *, subsystem: str, action: str, summary: str, origin: str, payload: dict[str, Any],
              actor: str = "agent", session_id: str | None = None, message_id: int | None = None) -> PendingRecord:
        """Write a pending record (atomically, journaled) and announce it."""
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
            id=self.store.new_id(), subsystem=subsystem, action=action, summary=summary, origin=origin,
            created_at=self.home.clock.now(), payload=payload, actor=actor, session_id=session_id,
            message_id=message_id,
        )
        journal = self.home.journal
        entry = journal.begin("approvals", "stage", record.id, actor=actor, after=summary, session_id=session_id,
                              message_id=message_id, detail=_detail(record))
        try:
            self.store.write(record)
        except OSError as exc:
            journal.abandon(entry, f"could not write the pending record: {exc}")
            raise WorkbenchError(f"Could not stage the write (it was not saved): {exc.strerror or exc}.") from None
        journal.commit(entry)
        self._announce(record, "staged", actor, entry)
        return record

    # -- reading ------------------------------------------------------------------
    def list(self, subsystem: str | None = None) -> list[PendingRecord]:
        """Pending records, oldest first (unusable files are skipped; see ``problems``)."""
        return self.store.scan(subsystem).records

    def problems(self, subsystem: str | None = None) -> list[RecordProblem]:
        """Files in the pending folders that are not usable records (never deleted)."""
        return self.store.scan(subsystem).problems

    def count(self, subsystem: str | None = None) -> int:
        return len(self.list(subsystem))

    def get(self, pending_id: str) -> PendingRecord:
        """The record with this id; a clear error if there is none or it is unusable."""
        found = self.store.find(check_id(pending_id))
        if found is None:
            raise WorkbenchError(f"No pending write with id '{pending_id}'. See `workbench pending list`.")
        subsystem, path = found
        try:
            return self.store.read(path, subsystem)
        except ValueError as exc:
            raise WorkbenchError(f"Pending record {path} cannot be used ({exc}); it was left untouched. "
                                 "Fix or remove the file by hand.") from None

    # -- helpers ------------------------------------------------------------------
    def _announce(self, record: PendingRecord, action: str, actor: str, journal_id: int | None) -> None:
        self.home.bus.publish(PendingChanged(actor=actor, session_id=record.session_id, journal_id=journal_id,
                                             subsystem=record.subsystem, pending_id=record.id, action=action))


def _detail(record: PendingRecord) -> dict[str, Any]:
    """What the journal keeps of a record: enough to recreate it."""
    return {"subsystem": record.subsystem, "action": record.action, "origin": record.origin,
            "summary": record.summary, "created_at": record.created_at, "payload": record.payload}
