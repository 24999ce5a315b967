"""``skills/.usage.json``: per-skill usage and curator state, Hermes's sidecar format.

Read-modify-write happens under the cross-process lock ``.usage.json.lock`` and the file
is replaced atomically, so a Hermes agent and the workbench can both bump counters
without losing each other's updates. A missing file reads as empty. A corrupt one (a
trailing comma, not UTF-8, not an object) reads as empty too, as Hermes reads it, but
``problem`` says why so every view can warn, and no write replaces it: the pins, counts
and ``created_by`` marks in it would be lost (Hermes's own next write would drop them).
Fields of the wrong type (a hand edit) read as their defaults, so one bad value never
breaks a listing or a Curator run.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeGuard

from ..clock import Clock
from ..fileio import LinkPolicy, UnsafePath
from ..values import count_value, iso_time, json_error
from .validation import SkillError

STATES = ("active", "stale", "archived")
COUNTERS = ("use_count", "view_count", "patch_count")
STAMPS = ("last_used_at", "last_viewed_at", "last_patched_at", "created_at", "archived_at")
USAGE = (*COUNTERS, "last_used_at", "last_viewed_at", "last_patched_at")  # what a copy's use left in its record


def iso(ts: float) -> str:
    """ISO-8601 UTC; a moment past the calendar (a huge interval from config.yaml) says so."""
    return iso_time(ts) or "(beyond year 9999)"


def parse_iso(value: Any) -> float | None:
    """Epoch seconds of an ISO timestamp (naive means UTC), or None when absent or unreadable."""
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.timestamp()
    except (ValueError, OverflowError):  # not a date, or one (year 1, say) with no epoch seconds
        return None


def default_record(now_iso: str) -> dict[str, Any]:
    return {
        "created_by": None,
        "use_count": 0,
        "view_count": 0,
        "patch_count": 0,
        "last_used_at": None,
        "last_viewed_at": None,
        "last_patched_at": None,
        "created_at": now_iso,
        "state": "active",
        "pinned": False,
        "archived_at": None,
    }


def origin_fields(folder: str, archived_at: str) -> dict[str, Any]:
    """The usage fields saying where a skill was archived from: ``folder`` (its path under skills/),
    stamped with the ``archived_at`` of that archive, which Hermes's own archive and restore rewrite
    but never these: see ``archived_origin``."""
    return {"archived_from": folder, "archived_from_at": archived_at}


def _older_copy(found: Any, record: dict[str, Any]) -> dict[str, Any] | None:
    """``archived_copies[found.dir_name]`` when it is a well-formed entry (a hand edit may be anything)."""
    entry = _copy_entry(found, record)
    return entry if isinstance(entry.get("archived_from"), str) else None


def archived_origin(found: Any, record: dict[str, Any]) -> str | None:
    """Where an archived copy (``found``) was archived from, when its record says so for this very copy:
    its ``archive_dir`` and the archive it was stamped with. After Hermes restores a skill we archived
    (flat) and archives it again, the stale ``archived_from`` we wrote is not trusted: that copy comes
    from the top level, as Hermes would restore it. A record written before the stamp was kept is
    trusted while ``archived_at`` is in whole seconds, as we write it (Hermes's has microseconds).

    The record is keyed by name, so it names one copy; an older copy of the same name keeps its own
    folder in ``archived_copies`` (folder under .archive/ -> ``archived_from``, ``archived_at``), a key
    Hermes keeps and ignores, moved there when a later archive or restore rewrites the record."""
    if not found.archived:
        return None
    if record.get("archive_dir") != found.dir_name:
        older = _older_copy(found, record)
        return older["archived_from"] if older else None
    origin, archived_at = record.get("archived_from"), record.get("archived_at")
    if not isinstance(origin, str):
        return None
    if "archived_from_at" in record:
        return origin if archived_at is not None and record["archived_from_at"] == archived_at else None
    return origin if isinstance(archived_at, str) and "." not in archived_at else None


def copy_origins(record: dict[str, Any] | None, copies: Iterable[Any], leaving: str | None = None) -> dict | None:
    """``archived_copies`` for a record about to be rewritten: every archived copy of its name in ``copies``
    (but the folder ``leaving`` the archive) whose origin or use counts the record holds now, so none loses
    its folder, nor its counts to the copy the record will be about (``copy_usage``)."""
    record = record or {}
    copies = list(copies)
    own = record_copy(copies[0].name, record, copies) if copies else None
    kept = {}
    for found in copies:
        if found.dir_name == leaving:
            continue
        origin = archived_origin(found, record)
        entry = _copy_entry(found, record)
        current = own is not None and own.dir_name == found.dir_name
        usage = {key: record.get(key) for key in USAGE} if current else entry.get("usage")
        if origin is None and usage is None:
            continue
        at = record.get("archived_at") if current else entry.get("archived_at")
        kept[found.dir_name] = {"archived_from": origin, "archived_at": at, **({"usage": usage} if usage else {})}
    return dict(sorted(kept.items())) or None


def _copy_entry(found: Any, record: dict[str, Any]) -> dict[str, Any]:
    """``archived_copies[found.dir_name]`` when it is an object, else {} (a hand edit may be anything)."""
    copies = record.get("archived_copies")
    entry = copies.get(found.dir_name) if isinstance(copies, dict) else None
    return entry if isinstance(entry, dict) else {}


# Why an archived copy's or a skill made anew's counts may not be its own alone (Hermes keeps one record a name)
SHARED_WITH_NEW = "may include those of the skill made anew under its name (Hermes keeps one usage record a name)"
SHARED_WITH_OLD = "may include those of the archived copy of its name (Hermes keeps one usage record a name)"
NOT_KEPT = "are not known: the name's usage record is another copy's now"


def copy_usage(found: Any, record: dict[str, Any] | None, archived: list[Any], anew: bool) -> tuple[dict, str | None]:
    """The usage an archived copy ``found`` shows, and why its counts may not be its own alone. The record
    is keyed by name: it is this copy's when it says so (``record_copy``), though a skill made anew under the
    name (``anew``, Hermes keeps the copy's record) bumps it once used; else the counts kept for this copy
    when the record moved on (``archived_copies``), else none are known."""
    if record is None:
        return {}, None
    own = record_copy(found.name, record, [f for f in archived if f.name == found.name])
    if own is not None and own.dir_name == found.dir_name:
        return record, SHARED_WITH_NEW if anew and _used_since_archive(record) else None
    usage = _copy_entry(found, record).get("usage")
    kept = {key: usage.get(key) for key in USAGE} if isinstance(usage, dict) else None
    return {**record, **(kept or dict.fromkeys(USAGE))}, None if kept else NOT_KEPT


def _used_since_archive(record: dict[str, Any]) -> bool:
    archived = parse_iso(record.get("archived_at"))
    moments = (parse_iso(record.get(k)) for k in ("last_used_at", "last_viewed_at", "last_patched_at"))
    return any(m is not None and (archived is None or m > archived) for m in moments)


def older_copy_archived_at(found: Any, record: dict[str, Any]) -> Any:
    """When an older copy (see ``archived_origin``) was archived, as its ``archived_copies`` entry says."""
    return (_older_copy(found, record) or {}).get("archived_at")


def _sane(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with known fields of the wrong type replaced by their defaults (unknown keys kept)."""
    clean = dict(record)
    for key in COUNTERS:
        clean[key] = max(0, count_value(record.get(key) or 0))
    for key in STAMPS:
        if not isinstance(record.get(key), str):
            clean[key] = None
    if record.get("state") not in STATES:
        clean["state"] = "active"
    clean["pinned"] = _pinned(record)
    if not isinstance(record.get("created_by"), str):
        clean["created_by"] = None
    return clean


def _pinned(record: dict[str, Any]) -> bool:
    return str(record.get("pinned")).strip().lower() in ("true", "yes", "1")


def last_activity(record: dict[str, Any]) -> float | None:
    """Latest of last used / viewed / patched (creation is not activity)."""
    parsed = (parse_iso(record.get(k)) for k in ("last_used_at", "last_viewed_at", "last_patched_at"))
    moments = [m for m in parsed if m is not None]
    return max(moments) if moments else None


ARCHIVE_SLACK = 5.0  # seconds between Hermes's move of a folder into .archive/ and the archived_at it stamps
_STAMPED = re.compile(r"-(\d{14})$")  # Hermes names a second copy of a name .archive/<name>-YYYYmmddHHMMSS


def record_copy(name: str, record: dict[str, Any] | None, archived: Iterable[Any]) -> Any:
    """The archived copy (of ``archived``, found skills under .archive/) an active skill ``name``'s record
    is about, when it says archived: the folder its ``archive_dir`` names (ours and the workbench's
    archives write it), else, with none named (Hermes's own archive writes none), the copy of that name
    archived when the record says (``archived_at``); None when the record says otherwise or no such copy
    is left (the skill was moved back by hand).

    Hermes archives a name twice as ``.archive/<name>`` and ``.archive/<name>-<UTC stamp>``, so an older
    copy may stay when the newer one (the record's) was moved back by hand: that copy is not the record's,
    and the skill was not made anew. A copy's archive time is its folder's stamp, else the time the folder
    last changed (a move into .archive/ changes it: its ctime, never earlier than the move); one archived
    more than ``ARCHIVE_SLACK`` before the record's ``archived_at`` is an older archive's. Of the copies
    left, the one archived last is the record's."""
    if record is None or record.get("state") != "archived":
        return None
    named = record.get("archive_dir")
    if named:
        return next((f for f in archived if f.dir_name == named), None)
    copies = [f for f in archived if f.name == name]
    at = parse_iso(record.get("archived_at"))
    if at is None or not copies:
        return copies[0] if copies else None
    timed = [(when, f) for f in copies if (when := archived_when(f)) is None or when >= at - ARCHIVE_SLACK]
    return max(timed, key=lambda pair: -math.inf if pair[0] is None else pair[0])[1] if timed else None


def archived_when(found: Any) -> float | None:
    """When an archived copy was moved into .archive/, as far as can be told: the UTC stamp Hermes puts in
    a second copy's folder name, else its folder's ctime (a move sets it; a later change only makes it
    later); None when neither can be read."""
    stamp = _STAMPED.search(found.dir_name)
    if stamp:
        try:
            return datetime.strptime(stamp.group(1), "%Y%m%d%H%M%S").replace(tzinfo=UTC).timestamp()
        except ValueError:  # (14 digits that are no time: a name of its own)
            pass
    try:
        return found.path.stat().st_ctime
    except OSError:
        return None


def made_anew(record: dict[str, Any] | None, name: str, archived: Iterable[Any]) -> TypeGuard[dict[str, Any]]:
    """Whether an active skill's record is an archived copy's (``record_copy``): Hermes's create under an
    archived name keeps that copy's record, state archived, so its counts and stamps are the old copy's
    until the new one is used."""
    return record_copy(name, record, archived) is not None


def since_made(record: dict[str, Any]) -> dict[str, Any]:
    """What a record ``made_anew`` says of the new skill: the stamps after the archive (a use of the
    new one bumps the same record), the counts only once it has some (they then include the old
    copy's), no creation time (the record's is the old copy's) and its pin and creator as they are."""
    archived = parse_iso(record.get("archived_at"))
    later = {
        k: record.get(k)
        for k in ("last_used_at", "last_viewed_at", "last_patched_at")
        if archived is None or (parse_iso(record.get(k)) or 0) > archived
    }
    counts = {k: record.get(k) for k in COUNTERS} if any(later.values()) else {}
    return {
        **default_record(""),
        **counts,
        **later,
        "created_at": None,
        "pinned": record.get("pinned"),
        "created_by": record.get("created_by"),
    }


class UsageUnreadable(SkillError):
    """The usage file holds something other than usage records: a write now would lose them all."""


def _decoded(data: bytes) -> tuple[dict[str, Any], str | None]:
    """(the JSON object in ``data``, or {} and why there is none, in words a person can act on)."""
    try:
        parsed = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return {}, f"is not UTF-8 (byte {exc.start})"
    except json.JSONDecodeError as exc:
        return {}, f"is not valid JSON: {json_error(exc)}"
    except (ValueError, RecursionError):  # nested past Python's stack
        return {}, "is nested too deeply to read"
    if not isinstance(parsed, dict):
        return {}, f"holds a JSON {type(parsed).__name__}, not an object of skills"
    return parsed, None


_REFUSED = "Writing it now would lose every skill's pin, use counts and who made it"


def _refuse_if(problem: str | None, refused: str = _REFUSED) -> None:
    """``UsageUnreadable`` when the file read had a ``problem`` (see ``UsageStore.check``)."""
    if problem:
        raise UsageUnreadable(
            f"{problem}. {refused}: fix it (`workbench doctor` names it), or move it aside to start "
            "afresh, then try again. Nothing was changed."
        )


class UsageStore:
    def __init__(self, path: Path, clock: Clock, links: LinkPolicy):
        self.path = path
        self.clock = clock
        self.links = links

    @property
    def label(self) -> str:
        """The file as messages name it (``skills/.usage.json``)."""
        return f"{self.path.parent.name}/{self.path.name}"

    def _parsed(self) -> tuple[dict[str, Any], str | None]:
        """(the file's JSON object, or {} and why it is not one)."""
        try:
            data = self.links.read_bytes(self.path)
        except (OSError, UnsafePath):  # missing, or a link the policy refuses (doctor names it)
            return {}, None
        return _decoded(data)

    def _records(self) -> tuple[dict[str, dict[str, Any]], str | None]:
        """(the records, sanitised; the problem when the file cannot be read, see ``problem``)."""
        parsed, why = self._parsed()
        return {str(k): _sane(v) for k, v in parsed.items() if isinstance(v, dict)}, self._said(why)

    def load(self) -> dict[str, dict[str, Any]]:
        return self._records()[0]

    def problem(self) -> str | None:
        """Why the file cannot be read as usage records (``skills/.usage.json is not valid JSON: ...``),
        or None: what every view says while it reads the file as empty."""
        return self._said(self._parsed()[1])

    def _said(self, why: str | None) -> str | None:
        return why and f"{self.label} {why}"

    def check(self, refused: str = _REFUSED) -> None:
        """Refuse (``UsageUnreadable``, saying ``refused``) while the file cannot be read: a write would
        replace every skill's pin, counts and maker with the one record it sets."""
        _refuse_if(self.problem(), refused)

    def backups(self) -> list[Path]:
        """Copies of an unreadable usage file kept before it was replaced (``.usage.json.corrupt.<time>``,
        made by earlier workbench versions): the pins and counts they hold were not carried over."""
        return sorted(self.path.parent.glob(f"{self.path.name}.corrupt.*"))

    def pinned(self, names: Iterable[str] | None = None) -> set[str] | None:
        """The skills pinned (of ``names`` only, if given: no other record is looked at), or None while
        the file is not a JSON object (an editor mid-save): it says nothing."""
        marks = self.marks(names)
        return None if marks is None else marks[0]

    def marks(self, names: Iterable[str] | None = None) -> tuple[set[str], dict[str, str]] | None:
        """From one read: the skills pinned, and each one's lifecycle state other than ``active`` (of
        ``names`` only, if given), as every view reads it (a state Hermes does not know reads as
        active); None while the file is not a JSON object (an editor mid-save): it says nothing."""
        parsed, bad = self._parsed()
        if bad:
            return None
        pins, states = set(), {}
        for name in parsed if names is None else names:
            record = parsed.get(name)
            if not isinstance(record, dict):
                continue
            if _pinned(record):
                pins.add(name)
            if (state := _sane(record)["state"]) != "active":
                states[name] = state
        return pins, states

    def update(self, change: Callable[[dict[str, dict[str, Any]], str], None]) -> dict[str, dict[str, Any]]:
        """Apply ``change(records, now_iso)`` under the lock and write the result atomically; refused
        (``UsageUnreadable``) while the file cannot be read, so its records are never replaced."""
        with self.links.lock(self.path):
            records, problem = self._records()
            _refuse_if(problem)  # (as just read: a second read could differ)
            change(records, iso(self.clock.now()))
            self.links.write_json(self.path, records)
            return records

    def change_one(self, name: str, change: Callable[[dict[str, dict[str, Any]], str], object]) -> Callable[[], None]:
        """``update`` with a change to ``name``'s record alone; returns how to put that record back.

        A multi-step operation (archive, restore, purge) calls the returned undo when a
        later step fails, so the usage record never disagrees with the skills tree.
        """
        saved: dict[str, Any] = {}

        def apply(records, now):
            saved["record"] = copy.deepcopy(records.get(name))
            change(records, now)

        self.update(apply)

        def undo() -> None:
            def back(records, now):
                if saved["record"] is None:
                    records.pop(name, None)
                else:
                    records[name] = saved["record"]

            self.update(back)

        return undo

    def _bump(
        self, name: str, *counters: tuple[str, str], reactivating: Callable[[], None] | None = None
    ) -> Callable[[], None]:
        """Count activity; ``reactivating`` is called (under the lock, before the file is written) when the
        activity makes a stale skill active again, for its caller to journal that first."""

        def change(records, now):
            record = records.setdefault(name, default_record(now))
            for counter, stamp in counters:
                record[counter] = int(record.get(counter) or 0) + 1
                record[stamp] = now
            if record.get("state") == "stale":  # activity reactivates a stale skill
                if reactivating is not None:
                    reactivating()
                record["state"] = "active"

        return self.change_one(name, change)

    def bump_use(self, name: str, reactivating: Callable[[], None] | None = None) -> Callable[[], None]:
        return self._bump(name, ("use_count", "last_used_at"), reactivating=reactivating)

    def bump_view(self, name: str, reactivating: Callable[[], None] | None = None) -> Callable[[], None]:
        """A view counts as a use too (current Hermes)."""
        return self._bump(
            name, ("view_count", "last_viewed_at"), ("use_count", "last_used_at"), reactivating=reactivating
        )

    def bump_patch(self, name: str) -> Callable[[], None]:
        return self._bump(name, ("patch_count", "last_patched_at"))

    def set_fields(self, name: str, **fields: Any) -> Callable[[], None]:
        return self.change_one(name, lambda records, now: records.setdefault(name, default_record(now)).update(fields))
