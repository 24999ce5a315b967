"""The Curator: lifecycle runs, archive / restore / pin / purge, and rollback from the ledger.

Only curator-managed skills (``created_by: agent``, or every local skill with
``curator.manage_all``) are moved by a run; bundled and hub skills never are. Every
file change goes through ``record_change`` (journal + ledger + event), so any archive,
restore, purge or skill write can be rolled back by its ledger id.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property, partial
from pathlib import Path
from typing import Any

from .. import lock_waits
from ..counts import counted
from ..errors import ConfigError, ReadOnlyError, WorkbenchError
from ..events import SkillChanged
from ..fileio import UnsafePath
from ..skills.changes import Change, Undo, looked_around, record_change, remove_empty_parents, remove_tree_later
from ..skills.discovery import ARCHIVE_DIR, Found
from ..skills.frontmatter import read_frontmatter
from ..skills.library import READ_ONLY_PROVENANCE, skill_command, skill_label
from ..skills.usage import archived_origin, copy_origins, default_record, iso, made_anew, origin_fields
from ..skills.validation import SkillError, check_inside
from ..textsafety import inline, quoted
from ..values import typed_whole
from .archive import archived_time, base_name, destination, restore_matches
from .cron import jobs_naming, named_skills
from .ledger import LedgerEntry
from .schedule import Due, Schedule, check, dry_run_summary, last_activity, seeded_only
from .transitions import ARCHIVE, DAY, REACTIVATE, SEED, STALE, UNJUDGED, Policy, decide, reason

# Where a curator change is recorded, as every question about one says: the ledger holds file changes
# only (what `curator rollback` can undo), so a pass's stale marks and reactivations, which change
# `.usage.json` alone, are on the Timeline (every change is) and never in `curator ledger`.
WHERE_RECORDED = (
    "Every change it makes is on the Timeline. Those that move or write files (archives, restores, purges, "
    "consolidations, skill writes) are also in the ledger, where they can be rolled back"
)

PURGE_DAYS = (1, 36_500)  # a purge's age bound, in whole days: at least one, at most a hundred years
# 0 is refused, not read as "everything" (as `sessions prune --days 0` is): Hermes reads it as purging turned off
NO_ZERO_DAYS = (
    "0 days is refused: Hermes reads a purge's 0 as purging turned off (curator.archive_ttl_days: 0), not as "
    f"every archived skill; give {PURGE_DAYS[0]} to purge every skill archived a day or more ago."
)


def purge_days_problem(days: Any) -> str | None:
    """Why ``days`` cannot bound a purge (None when it can): the one rule the CLI and the TUI apply."""
    low, high = PURGE_DAYS
    if days == 0 and not isinstance(days, bool):
        return NO_ZERO_DAYS
    if isinstance(days, bool) or not isinstance(days, int) or not low <= days <= high:
        return (
            f"The number of days must be a whole number from {low} to {high:,} (got {quoted(days)}); purge only "
            "removes skills archived longer ago than that."
        )
    return None


def purge_days_typed(text: str) -> int:
    """The days a person typed (``curator purge --days``, the Skills screen's purge box), read and checked
    by the one rule, ``purge_days_problem``: ValueError with its words when they cannot bound a purge."""
    try:
        days: int | str = typed_whole(text, "a number of days")
    except ValueError:  # (no number, or not in plain digits: the rule says what it must be)
        days = text
    problem = purge_days_problem(days)
    if problem:
        raise ValueError(problem)
    return int(days)


@dataclass(frozen=True)
class CuratorReport:
    marked_stale: tuple[str, ...]
    archived: tuple[str, ...]
    reactivated: tuple[str, ...]
    dry_run: bool
    seeded: tuple[str, ...] = ()
    checked: int = 0
    manage_all: bool = False  # curator.manage_all: every local skill was checked, not the agent's alone
    started_at: str = ""
    duration_seconds: float = 0.0
    report_path: str | None = None
    errors: tuple[str, ...] = ()
    plan: tuple[tuple[str, str], ...] = ()  # (decision, folder under skills/) of every change, as previewed
    kept_for_cron: tuple[str, ...] = ()  # skills it would have aged, kept because a cron job names them
    reasons: dict[str, str] = field(default_factory=dict)  # why each change, by the name the lists give

    def with_reason(self, name: str) -> str:
        """``name`` as the report lists it: in a dry run's (a question before a pass) with why the rule
        decided its change, as both skins show it; a pass's report names the skills alone."""
        why = self.reasons.get(name) if self.dry_run else None
        return f"{inline(name)} ({why})" if why else inline(name)

    @property
    def summary(self) -> str:
        parts = [
            f"{len(items)} {label}"
            for items, label in (
                (self.marked_stale, "marked stale"),
                (self.archived, "archived"),
                (self.reactivated, "reactivated"),
            )
            if items
        ]
        return ("dry-run auto: " if self.dry_run else "auto: ") + (", ".join(parts) or "no changes")

    @property
    def headline(self) -> str:
        """The pass as people read it (``summary`` keeps Hermes's form, for its state file); a dry
        run says what it would do, never that it did it."""
        changes = self.summary.split(": ", 1)[1]
        pass_ = "Curator dry run" if self.dry_run else "Curator pass"
        kind = "local" if self.manage_all else "agent-made"
        checked = f"{self.checked} {kind} skill{'s' * (self.checked != 1)} checked"
        if changes == "no changes":
            return f"{pass_}: nothing to change ({checked})."
        if self.dry_run:
            counts = (
                ("mark {} stale", self.marked_stale),
                ("archive {}", self.archived),
                ("reactivate {}", self.reactivated),
            )
            would = [text.format(len(items)) for text, items in counts if items]
            return f"{pass_}: would {', '.join(would)} ({checked}); nothing was changed."
        return f"{pass_}: {changes} ({checked})."

    def outcome(self, awaiting: str | None = None) -> list[str]:
        """The pass (or dry run) as both skins tell it: the headline (which says why nothing would change:
        how many managed skills were checked), the skills by change, the report's path, and
        ``awaiting`` (``Curator.awaiting_review``: its proposals still pending), names shown inline."""
        would = "would " if self.dry_run else ""
        lines = [self.headline]
        lines += [
            f"  {would}{label}: {', '.join(map(self.with_reason, names))}" for label, names in self.changes() if names
        ]
        if self.report_path:
            lines.append(f"  report: {inline(self.report_path)}")
        if awaiting:
            lines.append(f"  {awaiting}")
        return lines

    def changes(self) -> list[tuple[str, tuple[str, ...]]]:
        """(what, the skills) for each change, worded for this pass: done, or for a dry run to be done."""
        words = (
            ("mark stale", "marked stale"),
            ("archive", "archived"),
            ("reactivate", "reactivated"),
            ("keep, as cron jobs name them", "kept, as cron jobs name them"),
        )
        found = (self.marked_stale, self.archived, self.reactivated, self.kept_for_cron)
        return [(would if self.dry_run else did, items) for (would, did), items in zip(words, found, strict=True)]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.update({k: list(v) for k, v in data.items() if isinstance(v, tuple)})
        data["summary"] = self.summary
        return data


@dataclass
class _Pass:
    """Decisions of one run, by name."""

    decisions: dict[str, list[Found]] = field(default_factory=dict)
    shared: frozenset[str] = frozenset()  # names two active skills declare (in two folders)
    reasons: dict[str, str] = field(default_factory=dict)  # why each change, by the skill's label

    def add(self, decision: str, found: Found, why: str = "") -> None:
        self.decisions.setdefault(decision, []).append(found)
        if why:
            self.reasons[self.label(found)] = why

    def label(self, found: Found) -> str:
        """A skill as every list names it (``skill_label``): a name two active skills share comes with its
        folder (``archived: k8s-rollout (devops/k8s-rollout), k8s-rollout (k8s-rollout)``)."""
        return skill_label(found.name, found.rel if found.name in self.shared else None)

    def names(self, decision: str) -> tuple[str, ...]:
        """The skills of one decision, each by its ``label``."""
        return tuple(self.label(f) for f in self.decisions.get(decision, []))

    def plan(self) -> tuple[tuple[str, str], ...]:
        """Every change by folder (two folders may declare one name): what a preview promises."""
        return tuple(sorted((d, f.rel) for d in (STALE, ARCHIVE, REACTIVATE) for f in self.decisions.get(d, [])))


class _PinUnchanged(Exception):
    """The pin was already as asked when ``.usage.json`` was read under its lock."""


def _set_pinned(name: str, pinned: bool, records: dict[str, dict[str, Any]], now: str) -> None:
    """Set ``name``'s pin in ``records`` (a ``UsageStore.update`` change); ``_PinUnchanged`` if it is so."""
    record = records.setdefault(name, default_record(now))
    if bool(record.get("pinned")) == pinned:
        raise _PinUnchanged
    record["pinned"] = pinned


def pinned_refusal(name: str, asked: str) -> str:
    """Why a pinned skill is not archived (the Skills screen says it before asking, from the row's pin);
    ``asked``: what ``skills unpin`` takes for it (``SkillLibrary.command_arg``: its folder when its name
    does not pick it out)."""
    return f"Skill '{name}' is pinned; unpin it first (`{skill_command('unpin', asked)}`, or p in Skills)."


def _pin_unchanged(name: str, pinned: bool) -> dict[str, Any]:
    """A pin or unpin that found the skill so already: said, and journaled nowhere (nothing to revert)."""
    state = "already pinned" if pinned else "not pinned"
    return {
        "success": True,
        "changed": False,
        "message": f"Skill '{name}' is {state}; nothing changed.",
        "name": name,
        "pinned": pinned,
    }


class PlanChanged(WorkbenchError):
    """A run told to apply a previewed plan found another one due: nothing applied; ``report`` is the new
    dry run, to be shown and asked about again."""

    def __init__(self, report: CuratorReport):
        super().__init__(
            "The skills changed since the dry run, so nothing was applied; the curator would now: "
            f"{report.summary.split(': ', 1)[1]}.",
            plan=[list(p) for p in report.plan],
        )
        self.report = report


class Curator:
    def __init__(self, home):
        self.home = home
        self.skills = home.skills
        self.state_path = home.skills_dir / ".curator_state"
        self.reports_dir = home.root / "logs" / "curator"

    def awaiting_review(self) -> str | None:
        """The curator's own proposals still pending, in words: a dry run that changes nothing should
        not read as if the curator had nothing going (its merges wait in Approvals)."""
        staged = [r for r in self.home.approvals.list("skills") if r.origin == "curator"]
        if not staged:
            return None
        which = "; ".join(r.summary for r in staged[:3]) + ("; …" if len(staged) > 3 else "")
        many = len(staged) > 1
        count = f"{len(staged)} consolidations it proposed await" if many else "1 consolidation it proposed awaits"
        return f"{count} review in Approvals: {which}"

    @cached_property
    def consolidation(self):
        """Plans, verifies and applies umbrella merges (``engine.curator.consolidate``)."""
        from .consolidate import Consolidator

        return Consolidator(self)

    # -- helpers ----------------------------------------------------------------------
    def _writable(self) -> None:
        if self.home.read_only:
            raise ReadOnlyError("This home is open read-only; nothing was changed.")

    def _managed(self, provenance: str) -> bool:
        if provenance in READ_ONLY_PROVENANCE:
            return False
        return provenance == "agent" or self.home.config.bool("curator.manage_all")

    def _refuse_read_only(self, found: Found, provenance: str, verb: str) -> None:
        if provenance in READ_ONLY_PROVENANCE:
            label = "hub-installed" if provenance == "hub" else "bundled"
            raise SkillError(f"Skill '{found.name}' is {label}; the Curator never {verb}s {label} skills.")

    def _state(self) -> dict[str, Any]:
        try:
            data = json.loads(self.home.links.read_text(self.state_path))
        except (OSError, ValueError, RecursionError, UnsafePath):
            return {}
        return data if isinstance(data, dict) else {}

    def _announce(self, name: str, action: str, actor: str, journal_id: int | None = None) -> None:
        self.home.bus.publish(SkillChanged(actor=actor, journal_id=journal_id, name=name, action=action))

    # -- archive / restore -------------------------------------------------------------
    def _refuse_active_clash(self, name: str, then: str, leaving: frozenset[Path] = frozenset()) -> None:
        """The one rule for bringing a skill back (a restore, a ledger rollback): never a second active skill
        answering to ``name`` (``leaving``: skill folders the change itself rewrites or removes). Call it under
        the skills lock, so a skill of that name made meanwhile is found."""
        clash = [f for f in self.skills.scanner.active() if name in (f.name, f.dir_name) and f.path not in leaving]
        if clash:
            raise SkillError(
                f"A skill named '{name}' is already active at {clash[0].path}; archive or rename it before {then}. "
                "Nothing was changed.",
                active_at=str(clash[0].path),
            )

    def _refuse_rollback_clash(self, writes: dict[str, bytes], deletes: list[str]) -> None:
        """``_refuse_active_clash`` for every active skill a rollback's ``writes`` would bring back."""
        ledger = self.skills.ledger
        leaving = frozenset(ledger.resolve(rel).parent for rel in deletes if Path(rel).name == "SKILL.md")
        for rel in sorted(writes):
            folder = ledger.resolve(rel).parent
            if Path(rel).name != "SKILL.md" or not folder.is_relative_to(self.skills.dir):
                continue
            if ARCHIVE_DIR in folder.relative_to(self.skills.dir).parts or folder == self.skills.dir:
                continue
            meta = read_frontmatter(writes[rel].decode("utf-8", errors="replace"))[0]
            name = str(meta.get("name") or "").strip() or folder.name
            self._refuse_active_clash(name, f"restoring {ledger.rel(folder)}", leaving | {folder})

    def rollback_files(self, entry: LedgerEntry) -> list[str]:
        """What rolling ``entry`` back does, a file a line; raises as ``rollback`` would refuse (the
        question a person is asked says so before asking)."""
        writes, deletes = self.skills.ledger.rollback_plan(entry)
        self._refuse_rollback_clash(writes, deletes)
        return self.skills.ledger.rollback_files(entry)

    def _move(
        self,
        found: Found,
        action: str,
        actor: str,
        evidence: dict[str, Any],
        plan: Callable[[], tuple[Path, dict[str, Any]]],
        check: Callable[[], None] | None = None,
    ) -> tuple[Path, str | None]:
        """Move a skill folder to where ``plan`` says and set the usage fields it gives: both, with their
        ledger row, or neither. ``check`` (may refuse), then ``plan``, run under the skills lock: the
        destination and the fields come from the folders and the usage record as they are then, so a
        move another process made meanwhile (an archive of another copy of the name) is never written
        over. Returns the destination and the ledger row."""
        check_inside(found.path, self.skills.dir, f"Skill folder '{found.rel}'")
        with self.skills.write_lock():
            if check is not None:
                check()
            dest, fields = plan()
            try:
                self.home.links.resolve(dest.parent)  # never into a folder behind a refused link (.archive/)
            except UnsafePath as exc:
                raise SkillError(exc.message) from None
            to = dest.relative_to(self.skills.dir).as_posix()

            def mutate() -> None:
                dest.parent.mkdir(parents=True, exist_ok=True)
                if dest.exists():  # (another program, one that takes no skills lock, made it just now)
                    raise SkillError(f"skills/{to} was made meanwhile by another program; run it again")
                os.rename(found.path, dest)
                remove_empty_parents(found.path.parent, self.skills.dir)

            def undo() -> None:
                found.path.parent.mkdir(parents=True, exist_ok=True)
                os.rename(dest, found.path)
                remove_empty_parents(dest.parent, self.skills.dir)

            return dest, record_change(
                self.home,
                self.skills.ledger,
                Change(
                    action=action,
                    skill=found.name,
                    actor=actor,
                    roots=[found.path, dest],
                    mutate=mutate,
                    undo=undo,
                    usage=lambda: self.skills.usage.set_fields(found.name, **fields),
                    keep_blobs=False,
                    evidence={
                        "from": found.rel,
                        "to": to,
                        **evidence,
                        "usage": self._usage_change(found.name, fields),
                    },
                ),
            ).ledger_id

    def _archive_found(
        self, found: Found, actor: str, now: float, evidence: dict[str, Any], check: Callable[[], None] | None = None
    ) -> tuple[Path, str | None]:
        def plan() -> tuple[Path, dict[str, Any]]:
            dest = destination(self.skills.archive_dir, found.dir_name, now)
            return dest, self._archived_fields(found, dest, now)

        return self._move(found, "archive", actor, evidence, plan, check)

    def _usage_change(self, name: str, fields: dict[str, Any]) -> dict[str, Any]:
        """The usage record before and after ``fields`` are set: a rollback sets exactly those keys back."""
        record = self.skills.usage.load().get(name)
        return {
            "before": {name: record},
            "after": {name: {**(record or default_record(iso(self.home.clock.now()))), **fields}},
        }

    def _copies(self, name: str) -> list[Found]:
        return [f for f in self.skills.scanner.archived() if f.name == name]

    def _archived_fields(self, found: Found, dest: Path, now: float) -> dict[str, Any]:
        """The record says where this archive came from; copies archived before keep theirs
        (``archived_copies``), as the record is keyed by name and names the newest copy."""
        archived_at = iso(now)
        record = self.skills.usage.load().get(found.name)
        return {
            "state": "archived",
            "archived_at": archived_at,
            "archive_dir": dest.name,
            **origin_fields(found.rel, archived_at),
            "archived_copies": copy_origins(record, self._copies(found.name)),
        }

    def archive(self, name: str, actor: str = "user", folder: str | None = None) -> dict[str, Any]:
        """Move an active skill to ``skills/.archive/`` (refuses pinned, bundled and hub skills).

        ``folder`` (its path under skills/, as a person was asked about it): that very skill or a
        refusal, never another folder the name finds once that one is gone.
        """
        self._writable()
        try:
            found = self.skills.find(name) if folder is None else self.skills.at(folder, name)
        except SkillError:
            if folder is None and any(name in (f.name, f.dir_name, f.rel) for f in self.skills.scanner.archived()):
                raise SkillError(
                    f"Skill '{name}' is already archived; `{self.skills.command('restore', name)}` brings it back."
                ) from None
            raise
        if found.archived:  # (a folder under .archive/, as a person named it)
            raise SkillError(f"Skill '{found.name}' is already archived in skills/{found.rel}; nothing was changed.")
        record = self.skills.usage.load().get(found.name)
        self._refuse_read_only(found, self.skills.provenance_of()(found, record), "archive")

        def unpinned() -> None:  # (again under the skills lock, which a pin of ours takes too)
            if (self.skills.usage.load().get(found.name) or {}).get("pinned"):
                raise SkillError(pinned_refusal(found.name, self.skills.command_arg("unpin", found)))

        unpinned()
        now = self.home.clock.now()
        dest, ledger_id = self._archive_found(found, actor, now, {}, unpinned)
        jobs = jobs_naming(self.home, found.name)
        left = f" Cron job(s) {', '.join(map(repr, jobs))} name it and run without it until it is restored." * bool(
            jobs
        )
        return {
            "success": True,
            "message": f"Skill '{found.name}' archived to {dest}.{left}",
            "name": found.name,
            "archived_to": str(dest),
            "ledger_id": ledger_id,
        }

    def restore(self, name: str, actor: str = "user") -> dict[str, Any]:
        """Put an archived skill back where it was archived from (flat when unknown)."""
        self._writable()
        archived = self.skills.scanner.archived()
        matches = restore_matches(archived, name)
        if not matches:
            raise SkillError(
                f"No archived skill named '{name}' in {self.skills.archive_dir}.",
                available_archived=sorted({f.name for f in archived} | {f.dir_name for f in archived}),
            )
        if len(matches) > 1:
            raise SkillError(
                f"Ambiguous restore: {len(matches)} archived copies of '{name}' exist. Restore one by its folder: "
                + "; ".join(f"`{self.skills.command('restore', m)}`" for m in matches)
                + ".",
                matches=[m.dir_name for m in matches],
            )
        found = matches[0]
        records = self.skills.usage.load()
        record = records.get(found.name) or {}
        self._refuse_read_only(found, self.skills.provenance_of()(found, record), "restore")
        seen: dict[str, Any] = {}

        def plan() -> tuple[Path, dict[str, Any]]:  # (again under the lock: as the record and the folders are then)
            seen["record"] = record = self.skills.usage.load().get(found.name) or {}
            dest = self.skills.dir / (archived_origin(found, record) or base_name(found.dir_name))
            check_inside(dest, self.skills.dir, f"Restore destination '{dest}'")
            self._refuse_active_clash(found.name, "restoring this copy")  # (first: why dest is taken)
            if dest.exists():
                raise SkillError(f"destination already exists: {dest}. Move it aside or archive it first.")
            seen["fields"] = fields = {
                "state": "active",
                "archived_at": None,
                "archive_dir": None,
                "archived_from": None,
                "archived_from_at": None,
                "archived_copies": copy_origins(record, self._copies(found.name), leaving=found.dir_name),
                "restored_at": iso(self.home.clock.now()),
            }
            return dest, fields

        plan()  # (refused before the lock is waited for, when it would be)
        dest, ledger_id = self._move(found, "restore", actor, {}, plan)
        record, fields = seen["record"], seen["fields"]
        return {
            "success": True,
            "message": f"Skill '{found.name}' restored to {dest}.{self._aged_again(found, record, fields)}",
            "name": found.name,
            "restored_to": str(dest),
            "ledger_id": ledger_id,
        }

    def _aged_again(self, found: Found, record: dict[str, Any], fields: dict[str, Any]) -> str:
        """What the next Curator pass does to a skill just restored, when it is not to stay: a restore is
        no activity (``transitions.anchor_of``), so one idle past the archive window goes back."""
        if not self._managed(self.skills.provenance_of()(found, record)):
            return ""
        try:
            decision = decide({**record, **fields}, self.home.clock.now(), Policy.from_config(self.home.config))
        except ConfigError:  # (the pass itself says what to fix)
            return ""
        verb = {ARCHIVE: "archives it again", STALE: "marks it stale"}.get(decision or "")
        if verb is None:
            return ""
        return (
            f" A restore is not activity (as in Hermes): unless it is used or pinned first, the next "
            f"Curator pass (ours or Hermes's) {verb}."
        )

    # -- pin -----------------------------------------------------------------------------
    def _set_pin(self, name: str, pinned: bool) -> dict[str, Any]:
        self._writable()
        found = self.skills.find_any(name)
        if found.archived:  # an archived skill is out of the Curator's reach already: say what to do
            verb = "pin" if pinned else "unpin"
            active = next((f for f in self.skills.scanner.active() if f.name == found.name), None)
            if active is not None:  # (its restore would clash: the name's one usage record is the active one's)
                raise SkillError(
                    f"Skill '{found.name}' in skills/{found.rel} is an archived copy: the name's pin is the active "
                    f"skill's, in skills/{active.rel} (`{self.skills.command(verb, active)}`). Nothing was changed."
                )
            raise SkillError(
                f"Skill '{found.name}' is archived: restore it first (`{self.skills.command('restore', found)}`, "
                f"or r in Skills), then {verb} it. Nothing was changed."
            )
        self.skills.usage.check()  # (before its journal row, which would otherwise be begun and abandoned)
        record = self.skills.usage.load().get(found.name)
        self._refuse_read_only(found, self.skills.provenance_of()(found, record), "pin")
        verb = "pin" if pinned else "unpin"
        if bool((record or {}).get("pinned")) == pinned:  # as asked already (Hermes's pin, or ours): no row
            return _pin_unchanged(found.name, pinned)
        # pending until written: a look at the pins meanwhile knows the change is ours. Under the skills
        # lock, so an archive or a Curator pass, which read the pin under it, never archives it meanwhile.
        try:
            with self.skills.write_lock():
                if not (found.path / "SKILL.md").is_file():  # archived (or moved) while it waited for the lock
                    raise SkillError(
                        f"Skill '{found.name}' left skills/{found.rel} while the {verb} waited (archived or moved "
                        "by another process). Nothing was changed."
                    )
                with (
                    looked_around(self.home, [found.name], [self.skills.ledger.rel(found.path)]) as scope,
                    self.home.journal.recording(
                        "skills", verb, found.name, actor="user", before=str(not pinned), after=str(pinned)
                    ) as row,
                ):
                    scope.row = row.id
                    self.skills.usage.update(partial(_set_pinned, found.name, pinned))
        except _PinUnchanged:  # set so meanwhile (Hermes, under the lock): its row abandoned, as nothing changed
            return _pin_unchanged(found.name, pinned)
        self._announce(found.name, verb, "user", row.id)
        return {
            "success": True,
            "changed": True,
            "message": f"Skill '{found.name}' {verb}ned.",
            "name": found.name,
            "pinned": pinned,
        }

    def pin(self, name: str) -> dict[str, Any]:
        """Pinned skills are never marked stale, archived or deleted."""
        return self._set_pin(name, True)

    def unpin(self, name: str) -> dict[str, Any]:
        return self._set_pin(name, False)

    # -- runs ----------------------------------------------------------------------------
    @lock_waits.one_operation()  # (never stopped half done by a cancelled wait)
    def run(
        self, dry_run: bool = False, now: float | None = None, expected: tuple[tuple[str, str], ...] | None = None
    ) -> CuratorReport:
        """Apply the lifecycle rule to every managed skill; a dry run only reports.

        ``expected`` (a dry run's ``plan``, as a person saw it): apply exactly that, or, when the rule
        now decides anything else, raise ``PlanChanged`` with the new dry run and change nothing.
        """
        if not dry_run:
            self._writable()
        self.skills.usage.check(refused=UNJUDGED)
        started = time.perf_counter()
        now = self.home.clock.now() if now is None else now
        policy = Policy.from_config(self.home.config)
        records = self.skills.usage.load()
        classify = self.skills.provenance_of()
        active = self.skills.scanner.active()
        archived = self.skills.scanner.archived()
        decided = _Pass(shared=frozenset(name for name, n in Counter(f.name for f in active).items() if n > 1))
        checked = 0
        cron_named = named_skills(self.home)
        kept_for_cron = []
        for found in active:
            record = records.get(found.name)
            if not self._managed(classify(found, record)):
                continue
            checked += 1
            if record and record.get("state") == "archived":
                if made_anew(record, found.name, archived):  # the record is that copy's: its age is unknown
                    continue
                record = {**record, "state": "active"}  # moved back by hand: its folder says active
            decision = decide(record, now, policy)
            if found.name in cron_named:  # in use while a job names it, fired lately or not: left as it is
                kept_for_cron += [found.name] * (decision in (STALE, ARCHIVE))
            elif decision:
                decided.add(decision, found, reason(decision, record, now, policy) if decision != SEED else "")

        def report_of(dry: bool, errors: tuple[str, ...] = ()) -> CuratorReport:
            return CuratorReport(
                marked_stale=decided.names(STALE),
                archived=decided.names(ARCHIVE),
                reactivated=decided.names(REACTIVATE),
                dry_run=dry,
                seeded=decided.names(SEED),
                checked=checked,
                manage_all=self.home.config.bool("curator.manage_all"),
                started_at=iso(now),
                duration_seconds=round(time.perf_counter() - started, 3),
                errors=errors,
                plan=decided.plan(),
                kept_for_cron=tuple(kept_for_cron),
                reasons={n: decided.reasons[n] for d in (STALE, ARCHIVE, REACTIVATE) for n in decided.names(d)},
            )

        if dry_run:
            return report_of(True)
        if expected is not None and set(map(tuple, expected)) != set(decided.plan()):
            raise PlanChanged(report_of(True))
        report = report_of(False, tuple(self._apply(decided, now, iso(now), policy)))
        report = replace(report, report_path=str(self._write_report(report, policy).absolute()))
        self._save_state(report, now)
        self.home.journal.append(
            "curator",
            "run",
            "pass",
            actor="curator",
            after=report.summary,
            detail={"run": iso(now), "report_path": report.report_path},
        )
        return report

    def _apply(self, decided: _Pass, now: float, run_id: str, policy: Policy) -> list[str]:
        """Archive (each a recorded move), then one usage update for every state change (rows carry ``run``)."""
        fields: dict[str, dict[str, Any]] = {}
        errors = []
        for found in decided.decisions.get(ARCHIVE, []):  # each archive sets its own usage record

            def still_due(name: str = found.name) -> None:  # (under the skills lock, which a pin of ours takes)
                record = self.skills.usage.load().get(name)
                if record is None:  # (another program forgot it: its age is not known now)
                    raise SkillError("its usage record went since the pass began; left as it is")
                if decide({**record, "state": "active"}, now, policy) != ARCHIVE:
                    raise SkillError(
                        f"{'pinned' if record.get('pinned') else 'used'} since the pass began; left as it is"
                    )

            try:
                self._archive_found(found, "curator", now, {"reason": "inactive", "run": run_id}, still_due)
            except (SkillError, OSError) as exc:
                errors.append(f"{found.name}: {exc}")
                decided.decisions[ARCHIVE] = [f for f in decided.decisions[ARCHIVE] if f is not found]
        for found in decided.decisions.get(STALE, []):
            fields[found.name] = {"state": "stale"}
        for found in decided.decisions.get(REACTIVATE, []):
            fields[found.name] = {"state": "active"}

        def change(records, now_iso):
            for found in decided.decisions.get(SEED, []):
                records.setdefault(found.name, default_record(now_iso))
            for name, values in fields.items():
                records.setdefault(name, default_record(now_iso)).update(values)

        # journaled first, pending until the usage file is written: a look at the states meanwhile (the
        # watcher's, another process's) knows the change is ours, never an outside one (``outside._stated``)
        begun = [
            (
                found.name,
                action,
                self.home.journal.begin("skills", action, found.name, actor="curator", detail={"run": run_id}),
            )
            for decision, action in ((STALE, "mark_stale"), (REACTIVATE, "reactivate"))
            for found in decided.decisions.get(decision, [])
        ]
        try:
            if fields or decided.decisions.get(SEED):
                self.skills.usage.update(change)
        except BaseException as exc:
            for _name, _action, journal_id in begun:
                self.home.journal.abandon(journal_id, str(exc) or type(exc).__name__)
            raise
        for name, action, journal_id in begun:
            self.home.journal.commit(journal_id)
            self._announce(name, action, "curator", journal_id)
        return errors

    def _report_dir(self, now: float) -> Path:
        base = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now))
        folder, count = self.reports_dir / base, 1
        while folder.exists():
            count += 1
            folder = self.reports_dir / f"{base}-{count}"
        return folder

    def _write_report(self, report: CuratorReport, policy: Policy) -> Path:
        folder = self._report_dir(self.home.clock.now())
        folder.mkdir(parents=True)
        data = {
            "started_at": report.started_at,
            "duration_seconds": report.duration_seconds,
            "model": None,
            "provider": None,
            "auto_transitions": {
                "checked": report.checked,
                "marked_stale": len(report.marked_stale),
                "archived": len(report.archived),
                "reactivated": len(report.reactivated),
                "seeded": len(report.seeded),
            },
            "archived": list(report.archived),
            "consolidated": [],
            "pruned": list(report.archived),
            "state_transitions": [{"name": n, "to": "stale"} for n in report.marked_stale]
            + [{"name": n, "to": "active"} for n in report.reactivated],
            "llm_summary": report.summary,
            "llm_error": None,
            "errors": list(report.errors),
            "settings": asdict(policy),
        }
        self.home.links.write_json(folder / "run.json", data)
        lines = [
            f"# Curator run {report.started_at}",
            "",
            "## Auto-transitions (pure, no LLM)",
            "",
            f"- checked: {report.checked}",
            f"- summary: {report.summary}",
            "",
        ]
        for title, names in (
            ("Archived", report.archived),
            ("Marked stale", report.marked_stale),
            ("Reactivated", report.reactivated),
            ("Errors", report.errors),
        ):
            if names:
                lines += [f"## {title}", ""] + [f"- {n}" for n in names[:50]]
                lines += [f"- … and {len(names) - 50} more"] if len(names) > 50 else []
                lines.append("")
        lines += [
            "## Recovery",
            "",
            "`workbench skills restore NAME` brings an archived skill back; "
            "`workbench curator rollback LEDGER_ID` undoes one recorded change.",
            "",
        ]
        self.home.links.write_text(folder / "REPORT.md", "\n".join(lines))
        return folder

    def _save_state(self, report: CuratorReport, now: float) -> None:
        with self.home.links.lock(self.state_path):
            state = self._state()
            state.update(
                {
                    "last_run_at": iso(now),
                    "run_count": int(state.get("run_count") or 0) + 1,
                    "last_run_summary": report.summary,
                    "last_report_path": report.report_path,
                    "last_run_duration_seconds": report.duration_seconds,
                }
            )
            self.home.links.write_json(self.state_path, state)

    def status(self) -> dict[str, Any]:
        """State counts (all skills and curator-managed ones), pinned skills, last run, settings."""
        skills = self.skills.list(include_archived=True)
        counts = {s: 0 for s in ("active", "stale", "archived")}
        managed = dict(counts)
        hermes = dict(counts)  # as `hermes curator status` counts: see ``counts_line``
        for info in skills:
            counts[info.state] += 1
            if self._managed(info.provenance):
                managed[info.state] += 1
            if info.provenance == "agent" and info.state != "archived":
                hermes[info.state] += 1
        state = self._state()
        config = self.home.config
        schedule = Schedule.from_config(config)
        return {
            "success": True,
            "enabled": config.bool("curator.enabled"),
            "paused": bool(state.get("paused")),
            "next": self.due().to_dict(),
            "counts": counts,
            "managed": managed,
            "hermes_counts": hermes,
            "pinned": sorted({s.name for s in skills if s.pinned}),  # (a record, and its pin, is a name's)
            "usage_problem": self.skills.usage_warning(),
            "policy_problem": self._policy_problem(),
            "run_count": int(state.get("run_count") or 0),
            "seeded_only": seeded_only(state),  # ``last_run_at`` is a first check's seed, not a pass
            "last_run_at": state.get("last_run_at"),
            "last_run_summary": state.get("last_run_summary"),
            "last_summary_dry_run": dry_run_summary(state),  # a Hermes dry run's summary: not last_run_at's pass
            "last_report_path": state.get("last_report_path"),
            "settings": {
                "stale_after_days": config.int("curator.stale_after_days"),
                "archive_after_days": config.int("curator.archive_after_days"),
                "manage_all": config.bool("curator.manage_all"),
                "interval_hours": schedule.interval_hours,
                "min_idle_hours": schedule.min_idle_hours,
                "consolidate": schedule.consolidate,
            },
        }

    def _policy_problem(self) -> str | None:
        """Why the aging settings stop every pass of ours (``stale after -5 d``), said where they are shown:
        status listed them as if they applied, while Hermes 0.19.0 runs with them as written."""
        try:
            Policy.from_config(self.home.config)
        except ConfigError as exc:
            return (
                f"{exc.message} Until then no Curator pass of the workbench runs; Hermes 0.19.0's Curator runs "
                "with it as written."
            )
        return None

    # -- schedule ------------------------------------------------------------------------
    def _set_paused(self, paused: bool) -> dict[str, Any]:
        self._writable()
        with self.home.links.lock(self.state_path):
            state = self._state()
            was = bool(state.get("paused"))
            state["paused"] = paused
            self.home.links.write_json(self.state_path, state)
        verb = "paused" if paused else "resumed"
        if was != paused:
            self.home.journal.append(
                "curator", "pause" if paused else "resume", "schedule", actor="user", before=str(was), after=str(paused)
            )
        return {
            "success": True,
            "paused": paused,
            "message": f"Curator {verb}." if was != paused else f"Curator was already {verb}.",
        }

    def pause(self) -> dict[str, Any]:
        """Stop automatic passes (``paused`` in ``.curator_state``, which Hermes honours too)."""
        return self._set_paused(True)

    def resume(self) -> dict[str, Any]:
        return self._set_paused(False)

    def due(self, now: float | None = None, busy: bool = False) -> Due:
        now = self.home.clock.now() if now is None else now
        return check(
            Schedule.from_config(self.home.config),
            self._state(),
            now,
            last_activity=last_activity(self.home),
            busy=busy,
        )

    def maybe_run(self, busy: bool = False) -> dict[str, Any] | None:
        """Run a due pass (lifecycle, then consolidation when ``curator.consolidate``); None when not due.

        ``busy`` is True while an agent turn runs: a pass never starts then.
        """
        if self.home.read_only:
            return None
        now = self.home.clock.now()
        due = self.due(now, busy)
        if due.seed:
            with self.home.links.lock(self.state_path):
                state = self._state()
                if not state.get("last_run_at"):
                    state.update(
                        last_run_at=iso(now),
                        last_run_summary="deferred first run: seeded, the first pass waits one interval",
                    )
                    self.home.links.write_json(self.state_path, state)
            return None
        if not due.due or self.skills.usage.problem():  # (waits for the file to be fixed: Skills and doctor say so)
            return None
        report = self.run(now=now).to_dict()
        if Schedule.from_config(self.home.config).consolidate:
            try:
                report["consolidation"] = self.consolidation.propose()
            except WorkbenchError as exc:  # the lifecycle pass stands; the plan's refusal is reported
                report["consolidation"] = exc.to_dict()
        return report

    # -- purge and rollback ----------------------------------------------------------------
    @lock_waits.one_operation()  # (never stopped half done by a cancelled wait)
    def purge(self, days: int, dry_run: bool = False, only: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """Delete archived copies archived at least ``days`` ago, each only after its files are saved as blobs.

        ``only`` (the ``candidates`` of a dry run a person was shown): purge none but those, each
        still at its path under its name and still old enough; the rest are named in ``skipped``,
        and copies that became old enough since are left for the next preview (``waiting``).
        """
        problem = purge_days_problem(days)
        if problem:
            raise SkillError(problem)
        if not dry_run:
            self._writable()
        now = self.home.clock.now()
        records = self.skills.usage.load()
        archived = self.skills.scanner.archived()
        due = [f for f in archived if archived_time(f, records.get(f.name)) <= now - days * DAY]
        candidates_ = [{"name": f.name, "path": f.rel} for f in due]
        if dry_run:
            return {"success": True, "dry_run": True, "purged": [], "candidates": candidates_, "days": days}
        skipped: list[dict[str, Any]] = []
        waiting = 0
        if only is not None:
            listed = {(c.get("path"), c.get("name")) for c in only}
            waiting = sum((f.rel, f.name) not in listed for f in due)
            present = {(f.rel, f.name) for f in archived}
            skipped = [
                {
                    **c,
                    "reason": "no longer old enough"
                    if (c.get("path"), c.get("name")) in present
                    else "restored or deleted",
                }
                for c in only
                if {"name": c.get("name"), "path": c.get("path")} not in candidates_
            ]
            due = [f for f in due if (f.rel, f.name) in listed]
        purged = []
        for found in due:
            mutate, undo, cleanup = remove_tree_later(found.path, self.skills.dir)
            evidence: dict[str, Any] = {"ttl_days": days, "path": found.rel}
            with self.skills.write_lock():
                ledger_id = record_change(
                    self.home,
                    self.skills.ledger,
                    Change(
                        action="purge",
                        skill=found.name,
                        actor="user",
                        roots=[found.path],
                        mutate=mutate,
                        undo=undo,
                        cleanup=cleanup,
                        usage=partial(self._resync, found.name, kept=evidence),
                        keep_blobs=True,
                        evidence=evidence,
                    ),
                ).ledger_id
            purged.append({"name": found.name, "path": found.rel, "ledger_id": ledger_id})
        notes = [f"Not purged, {c['reason']} since the preview: {c['path']}." for c in skipped]
        if waiting:
            notes.append(
                f"{counted(waiting, 'more archived skill')} became old enough since the preview; "
                "purge again to see them."
            )
        return {
            "success": True,
            "dry_run": False,
            "purged": purged,
            "candidates": candidates_,
            "skipped": skipped,
            "waiting": waiting,
            "days": days,
            "message": "\n".join(
                [
                    f"Purged {counted(len(purged), 'archived skill')}. Ledger entries recorded; "
                    "`workbench curator rollback LEDGER_ID` brings one back.",
                    *notes,
                ]
            ),
        }

    def _resync(self, name: str, extra: dict[str, Any] | None = None, kept: dict[str, Any] | None = None) -> Undo:
        """Make ``name``'s usage state match where it now lives (after a purge or rollback), plus ``extra``.

        A record dropped because no copy is left goes into ``kept`` (the purge's ledger evidence, read
        under the usage lock), so rolling the purge back puts it back whole: who made it, when, its counts.
        """
        active = {f.name for f in self.skills.scanner.active()}
        archived = {f.name: f for f in self.skills.scanner.archived()}
        now = self.home.clock.now()

        def change(records, now_iso):
            record = records.get(name)
            if name in active:
                if record is None or record.get("state") == "archived":
                    records.setdefault(name, default_record(now_iso)).update(state="active", archived_at=None)
            elif name in archived:
                found = archived[name]
                if record is None or record.get("state") != "archived":
                    records.setdefault(name, default_record(now_iso)).update(
                        state="archived", archived_at=iso(now), archive_dir=found.dir_name
                    )
            else:
                dropped = records.pop(name, None)
                if dropped is not None and kept is not None:
                    kept["usage"] = {"before": {name: dropped}, "after": {name: None}}
            if extra and name in records:
                records[name].update(extra, archived_from_at=records[name].get("archived_at"))

        return self.skills.usage.change_one(name, change)

    def rollback(self, ledger_id: str) -> dict[str, Any]:
        """Undo exactly what one ledger entry changed; refused if those files changed since."""
        self._writable()
        ledger = self.skills.ledger
        entry = ledger.get(ledger_id)

        usage = _usage_evidence(entry.evidence.get("usage"))

        def mutate() -> None:
            for rel, data in writes.items():
                self.home.links.write_bytes(ledger.resolve(rel), data)
            for rel in deletes:
                target = ledger.resolve(rel)
                self.home.links.unlink(target)
                remove_empty_parents(target.parent, self.skills.dir)

        # a rolled-back restore is archived again: a later restore goes back to the same folder (older entries)
        extra = (
            {"archived_from": entry.evidence.get("to"), "archive_dir": Path(str(entry.evidence.get("from"))).name}
            if entry.action == "restore"
            else None
        )

        def set_usage() -> Undo:
            if usage:  # the entry says exactly which usage keys it set: set those back
                return self.skills.usage.change_one(entry.skill, lambda records, now: revert_usage(records, usage))
            return self._resync(entry.skill, extra)

        with self.skills.write_lock():
            writes, deletes = ledger.rollback_plan(entry)
            self._refuse_rollback_clash(writes, deletes)
            if entry.action == "purge" and any(f.name == entry.skill for f in self.skills.scanner.active()):
                usage = None  # the name is an active skill's again: the record is its, and stays
            paths = sorted(set(writes) | set(deletes))
            evidence = {"rolled_back": entry.id, "rolled_back_action": entry.action}
            if type(entry.evidence.get("journal_id")) is int:  # so that row is marked undone, whoever rolls back
                evidence["undo_of"] = entry.evidence["journal_id"]
            if usage:  # rolling this rollback back re-applies the usage change
                evidence["usage"] = {"before": usage.get("after") or {}, "after": usage.get("before") or {}}
            recorded = record_change(
                self.home,
                ledger,
                Change(
                    action="rollback",
                    skill=entry.skill,
                    actor="user",
                    roots=[ledger.resolve(p) for p in paths],
                    mutate=mutate,
                    usage=set_usage,
                    evidence=evidence,
                ),
            )
        self.skills.scanner.forget_layout()
        return {
            "success": True,
            "message": f"Rolled back {entry.action} of '{entry.skill}' (ledger {entry.id}).",
            "ledger_id": recorded.ledger_id,
            "restored": sorted(writes),
            "removed": sorted(deletes),
        }

    def ledger(self, limit: int = 50) -> list[LedgerEntry]:
        """Newest first, each with the actor of the journal row it names (``shown_actor``)."""
        entries = list(reversed(self.skills.ledger.entries()))[:limit]
        named = {e.id: e.evidence["journal_id"] for e in entries if type(e.evidence.get("journal_id")) is int}
        journal = self.home.journal
        if not named or not journal.exists():
            return entries
        rows = journal.connection().execute(
            "SELECT id, actor FROM journal WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(named.values())),),
        )
        actors = dict(rows.fetchall())
        return [replace(e, journal_actor=actors.get(named[e.id])) if e.id in named else e for e in entries]


def _usage_evidence(usage: Any) -> dict[str, Any] | None:
    """A ledger row's usage change, if it has the shape we write (before/after records by name)."""
    if not isinstance(usage, dict):
        return None
    for side in ("before", "after"):
        records = usage.get(side) or {}
        if not isinstance(records, dict) or not all(isinstance(r, dict) or r is None for r in records.values()):
            return None
    return usage


def revert_usage(records: dict[str, dict[str, Any]], usage: dict[str, Any]) -> None:
    """Set back every usage key a change set (``usage``: before/after records by name); others stay.

    A record the change created goes; one it replaced wholesale comes back; otherwise only
    the keys that differ between before and after are restored (or removed if they were
    absent), so counters bumped since are kept.
    """
    before, after = usage.get("before") or {}, usage.get("after") or {}
    for name in sorted(set(before) | set(after)):
        old, new, current = before.get(name), after.get(name), records.get(name)
        if old is None:
            records.pop(name, None)
        elif new is None or current is None:
            records[name] = dict(old)
        else:
            for key in set(old) | set(new):
                if old.get(key, KeyError) != new.get(key, KeyError):
                    if key in old:
                        current[key] = old[key]
                    else:
                        current.pop(key, None)


def counts_lines(status: dict[str, Any]) -> tuple[str, str]:
    """``curator status``'s skill counts, and how they relate to ``hermes curator status``'s, in two lines.

    Ours count every skill the library lists (bundled, hub and user-owned ones too; ``archived``: the
    copies in ``skills/.archive``), and say how many of those the Curator ages (curator-managed: made by
    the agent, ``created_by: agent``, or every local one with ``curator.manage_all``). Hermes 0.19.0's
    ``agent_created_report`` counts only skills whose usage record says the agent made them, and walks
    the live tree, leaving out the copies in ``.archive`` (so its ``archived`` is 0 here): ``hermes_counts``
    is that, so the two can be compared number by number."""
    counts, managed, hermes = status["counts"], status["managed"], status["hermes_counts"]

    def three(c: dict[str, int]) -> str:
        return f"{c['active']} active, {c['stale']} stale, {c['archived']} archived"

    return (
        f"skills: {three(counts)}, all skills (bundled, hub and user-owned too); "
        f"{sum(managed.values())} curator-managed, the ones the Curator ages: {three(managed)}",
        f"hermes: `hermes curator status` says {sum(hermes.values())} agent-created ({three(hermes)}): "
        "only skills the agent made, the archived ones (in skills/.archive) left out",
    )
