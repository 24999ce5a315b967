"""The pending store: one JSON file per staged write, in Hermes's own layout.

``<home>/pending/{memory,skills}/<id>.json`` with ``id`` (8 lowercase hex), ``subsystem``,
``action``, ``summary``, ``origin``, ``created_at`` (epoch seconds) and ``payload`` (the
keyword arguments that replay the write). We add ``actor``, ``session_id`` and
``message_id`` and ``staged_by``; Hermes ignores keys it does not know. A record's ``action``
and ``summary`` are kept as it claims them, but approving applies its payload, so what it is
shown to do is derived from that (``labels``). A record Hermes
wrote lacks them: it loads as staged by Hermes, by the review when its origin is
``background_review`` and by the agent otherwise. Records are plain files, so they
survive restarts.

A file that cannot be read as a record is reported as a problem (``RecordProblem``) and
skipped, never deleted unless someone rejects it: it may be a newer Hermes format or someone's
hand edit.
"""

from __future__ import annotations

import json
import os
import re
import threading
import uuid
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from ..approval_gate import SUBSYSTEMS, check_subsystem
from ..errors import WorkbenchError
from ..fileio import LinkPolicy, UnsafePath
from ..journal import ACTORS
from ..safety import assess
from ..textsafety import inline, quoted
from ..tools import BACKGROUND_REVIEW, FLUSH, FOREGROUND
from ..values import MAX_JSON_DEPTH, clock_time, iso_time, json_depth, json_error
from .labels import claim_problem, describe, payload_action, shown_summary

ORIGINS = (FOREGROUND, BACKGROUND_REVIEW, FLUSH, "curator")  # curator: a consolidation plan
_ID = re.compile(r"[0-9a-f]{8}")
# How both skins name an origin: the agent's own turn, or the background review after it.
ORIGIN_LABELS = {FOREGROUND: "agent", BACKGROUND_REVIEW: "review"}
# What each subsystem's writes are, in words ("3 skill writes").
KINDS = {"memory": "memory", "skills": "skill"}


def proposed(proposer: str, edited: bool = False) -> str:
    """Who proposed a write a person approved, in words (``proposed by agent``), and whether the
    approver edited it first (``proposed by agent, edited before approval``): the one wording of
    ``approved_by``, the Timeline and ``memory history``."""
    return f"proposed by {proposer}" + (", edited before approval" if edited else "")


def approved_by(approver: str, proposed_by: str | None, edited: bool = False) -> str:
    """A writer as people read it: what an approved proposal wrote names its proposer after its approver
    (``user (approved, proposed by agent)``), and says so when the approver edited it first."""
    if proposed_by and proposed_by != approver:
        return f"{approver} (approved, {proposed(proposed_by, edited)})"
    return approver


def proposer(actor: str, staged_by: object) -> str:
    """A proposer's name: its actor, ``Hermes`` before it when a Hermes agent staged the record."""
    return f"Hermes {actor}" if staged_by == "hermes" else actor


_TEXT_KEYS = ("content", "new_text", "new_string", "file_content")  # a payload's keys that hold texts it writes
_ON_DISK = {"claimed_action": "action", "claimed_summary": "summary"}  # the fields' keys in a record file


@dataclass(frozen=True)
class PendingRecord:
    id: str
    subsystem: str
    claimed_action: str  # the file's ``action`` and ``summary``: what it says, not what it does
    claimed_summary: str
    origin: str
    created_at: float
    payload: dict[str, Any]
    actor: str = "agent"
    session_id: str | None = None
    message_id: int | None = None
    staged_by: str = "workbench"  # or "hermes": which program wrote the record
    base: str | None = None  # what a skill write that replaces or removes found when staged (ours only)

    @property
    def action(self) -> str:
        """The action approving applies: its payload's, whatever the record claims."""
        return payload_action(self.payload)

    @cached_property
    def described(self) -> str:
        """What approving does, in words, from its payload alone."""
        return describe(self.subsystem, self.payload)

    @property
    def summary(self) -> str:
        """What approving does, in words: the file's own summary only where it says just that."""
        return shown_summary(self.claimed_summary, self.described)

    @cached_property
    def claim_problem(self) -> str | None:
        """Why the record's claimed action or summary contradicts its payload, or None when they agree."""
        return claim_problem(self.claimed_action, self.claimed_summary, self.action, self.described)

    @cached_property
    def flags(self) -> list[str]:
        """The threat scan's reasons for the texts it would write (recomputed, never read from the file;
        once per record: a batch may hold 100,000 operations, and its preview, listing and approval each
        name them). Each distinct text is assessed once."""
        operations = self.payload.get("operations")
        items = (
            [self.payload, *(op for op in operations if isinstance(op, dict))]
            if isinstance(operations, list)
            else [self.payload]
        )
        texts = dict.fromkeys(text for item in items for key in _TEXT_KEYS if isinstance(text := item.get(key), str))
        return list(dict.fromkeys(reason for text in texts for reason in assess(text).reasons))

    @property
    def by_hermes(self) -> bool:
        return self.staged_by == "hermes"

    @property
    def proposer(self) -> str:
        """Who proposed it, as the write its approval makes names them (``Hermes agent``)."""
        return proposer(self.actor, self.staged_by)

    @property
    def origin_label(self) -> str:
        """The origin in people's words (``review``, not ``background_review``)."""
        return ORIGIN_LABELS.get(self.origin, self.origin)

    @property
    def time_known(self) -> bool:
        """Whether ``created_at`` is a time a clock could have written (``clock_time``, the Timeline's rule
        for such a record's row too)."""
        return clock_time(self.created_at) is not None

    def age(self, now: float) -> float | None:
        """Seconds since it was staged, or None where its time is not known (``time_known``)."""
        return max(0.0, now - self.created_at) if self.time_known else None

    @property
    def created_iso(self) -> str:
        return datetime.fromtimestamp(self.created_at, UTC).isoformat(timespec="seconds")

    def to_dict(self) -> dict[str, Any]:
        """The record file's JSON: its claims under Hermes's keys, as written. Its payload is shared, not
        copied (``asdict`` copied a 100,000-operation batch deeply, twice an approval, only to dump it)."""
        return {_ON_DISK.get(item.name, item.name): getattr(self, item.name) for item in fields(self)}


# What Hermes 0.19's own queue (``tools/write_approval.py``: ``json.loads`` of each ``*.json``'s UTF-8
# text, links followed, sorted by ``created_at``) makes of an unusable record file, in words.
HERMES_SEES = {
    "lists": "Hermes 0.19 still reads it (it holds a JSON object): its own queue lists it, and its approve "
    "would replay whatever payload it holds; rejecting it here takes it out of Hermes's queue too.",
    "breaks": "Hermes 0.19 reads it as JSON that is not an object, and its own pending list stops with an "
    "error while it is there; rejecting it here mends that.",
    "follows": "Hermes 0.19 follows the link and reads what it points to; the workbench never does.",
    "skips": "Hermes 0.19 cannot read it either and skips it.",
    "unnamed": "Hermes 0.19 reads it as a record with no id, and its /memory pending list stops with an error "
    "while it is there; moving it out mends that.",
}


@dataclass(frozen=True)
class RecordProblem:
    """A file in a pending folder that is not a usable record (left untouched until it is rejected)."""

    path: str
    error: str  # why it cannot be used, in words
    subsystem: str | None = None  # the folder it lies in (None: that folder itself cannot be read)
    id: str | None = None  # the pending id its name gives (None: its name is no id, so no command can name it)
    folder: bool = False  # a folder named like a record
    hermes: str = "skips"  # what Hermes 0.19's queue makes of it (``HERMES_SEES``)

    @property
    def name(self) -> str:
        return Path(self.path).name

    @property
    def reject_refusal(self) -> str | None:
        """Why rejecting cannot drop it (None: it can): the one wording of both skins and ``reject``."""
        where = f"pending/{self.subsystem}/" if self.subsystem else "the pending folder"
        if self.subsystem is None:
            return f"{self.error} Nothing in it can be rejected until that is fixed."
        if self.folder:
            return (
                f"It is a folder, not a file: rejecting never deletes a folder (it may hold anything). Look "
                f"inside, then move it out of {where} by hand."
            )
        if self.id is None:
            return (
                "Its name is not a pending id (8 lowercase hex characters), so it is no proposal, and no "
                f"approval or rejection can name it. Move it out of {where} by hand."
            )
        return None

    @property
    def left_said(self) -> str:
        """Why a decision of the whole queue that lists nothing first (``pending approve all``, ``pending
        reject all``) left this file as it is, and how to drop it: said under its outcome."""
        how = self.reject_refusal or (
            f"Drop it with `workbench pending reject {self.id}` (its bytes stay in the journal), or fix it by hand."
        )
        return f"Left as it is: {inline(self.path)} cannot be read ({inline(self.error)}). {how}"

    @property
    def remedy(self) -> str:
        """What can be done about it, and what Hermes makes of it, in words (both skins say it)."""
        hermes = HERMES_SEES.get(self.hermes, HERMES_SEES["skips"])
        if (refusal := self.reject_refusal) is not None:
            return f"{refusal}\n{hermes}"
        removes = "the link (never what it points to)" if self.hermes == "follows" else "the file"
        return "\n".join(
            [
                "It cannot be approved: there is no write in it to apply.",
                f"Rejecting it removes {removes} and keeps its exact bytes in the journal row; restore does not "
                "rebuild it, but `workbench timeline show ROW` prints them, to copy back by hand.",
                "Or fix it by hand: once it reads as a record, it is listed as a proposal again.",
                hermes,
            ]
        )

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "error": self.error, "id": self.id, "subsystem": self.subsystem}


@dataclass
class Scan:
    records: list[PendingRecord] = field(default_factory=list)
    problems: list[RecordProblem] = field(default_factory=list)


def is_pending_id(text: str) -> bool:
    return bool(_ID.fullmatch(text))


def check_id(pending_id: object) -> str:
    """Return ``pending_id`` if it is exactly 8 lowercase hex digits; refuse anything else.

    This is what keeps an id from naming any file outside the pending folders.
    """
    if not isinstance(pending_id, str) or not _ID.fullmatch(pending_id):
        raise WorkbenchError(
            f"Invalid pending id {quoted(pending_id)}: ids are 8 lowercase hex characters "
            "(see `workbench pending list`)."
        )
    return pending_id


class PendingStore:
    """Reads and writes record files under ``<home>/pending``."""

    def __init__(self, root: Path, links: LinkPolicy):
        self.root = root
        self.links = links  # no link below pending/ is ever followed
        self._cache: dict[str, tuple[tuple[int, int, int], PendingRecord | ValueError]] = {}
        self._cache_lock = threading.Lock()

    def folder(self, subsystem: str) -> Path:
        return self.root / check_subsystem(subsystem)

    def path_for(self, subsystem: str, pending_id: str) -> Path:
        return self.folder(subsystem) / f"{check_id(pending_id)}.json"

    def new_id(self) -> str:
        """A fresh id not used by any record of either subsystem."""
        while True:
            candidate = uuid.uuid4().hex[:8]
            if not any(self.path_for(s, candidate).exists() for s in SUBSYSTEMS):
                return candidate

    def write(self, record: PendingRecord) -> Path:
        path = self.path_for(record.subsystem, record.id)
        self.links.write_json(path, record.to_dict(), sealed=self.root)
        return path

    def delete(self, record: PendingRecord) -> None:
        """Remove a record's file; already gone (say, decided by Hermes itself) is fine."""
        self.links.unlink(self.path_for(record.subsystem, record.id), missing_ok=True, sealed=self.root)

    def raw(self, path: Path) -> tuple[bytes, bool]:
        """A record file's bytes for the journal, and whether they are the file's own: a link's are its
        target's name, never its target's content (the link is looked at once, so the two agree)."""
        if path.is_symlink():
            return f"(a link to {os.readlink(path)}, never followed)".encode(), False
        return self.links.read_bytes(path, sealed=self.root), True

    def read(self, path: Path, subsystem: str) -> PendingRecord:
        """Parse one record file; raises ``ValueError`` saying what is wrong with it."""
        try:
            raw = self.links.read_bytes(path, sealed=self.root)
        except UnsafePath as exc:
            if path.is_dir() and not path.is_symlink():
                raise ValueError("it is a folder, not a file") from None
            # (said of "it": the path is shown beside it, and a hostile name is said once)
            message = exc.message
            raise ValueError("it" + message[len(str(path)) :] if message.startswith(f"{path} ") else message) from None
        except OSError as exc:
            raise ValueError(f"it cannot be read ({exc.strerror or exc})") from None
        found = _parsed(raw, path.stem, subsystem)
        if isinstance(found, ValueError):
            raise ValueError(str(found)) from None
        return found

    @classmethod
    def parses(cls, raw: bytes, pending_id: str, subsystem: str) -> bool:
        """Whether a record file's bytes are a usable record."""
        try:
            cls.parse(raw, pending_id, subsystem)
        except ValueError:
            return False
        return True

    @staticmethod
    def parse(raw: bytes, pending_id: str, subsystem: str) -> PendingRecord:
        """A record file's bytes as a record; raises ``ValueError`` saying what is wrong with them."""
        try:
            data = json.loads(raw.decode("utf-8-sig"))
        except UnicodeDecodeError as exc:
            raise ValueError(f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})") from None
        except json.JSONDecodeError as exc:
            raise ValueError(f"not valid JSON ({json_error(exc)})") from None
        except RecursionError:  # nested past Python's stack
            raise ValueError(f"nested more than {MAX_JSON_DEPTH} levels deep: not a record") from None
        if json_depth(data) > MAX_JSON_DEPTH:  # later dumps and walks would overflow the stack
            raise ValueError(f"nested more than {MAX_JSON_DEPTH} levels deep: not a record")
        return record_from_dict(data, pending_id, subsystem)

    def find(self, pending_id: str) -> tuple[str, Path] | None:
        """The subsystem and path of the record file with this id, if one exists (a folder or a link
        named so too: each is an unusable record, to be named, never taken for none)."""
        for subsystem in SUBSYSTEMS:
            path = self.path_for(subsystem, check_id(pending_id))
            if path.exists() or path.is_symlink():
                return subsystem, path
        return None

    def problem(self, path: Path, subsystem: str | None, error: str) -> RecordProblem:
        """What is known of an unusable record file: its id, whether it is a folder, whether Hermes reads it."""
        folder = path.is_dir() and not path.is_symlink()
        return RecordProblem(
            str(path),
            error,
            subsystem,
            path.stem if path.suffix == ".json" and is_pending_id(path.stem) else None,
            folder,
            "skips" if folder or subsystem is None else self._hermes_sees(path),
        )

    def _hermes_sees(self, path: Path) -> str:
        """What Hermes 0.19's ``list_pending`` makes of the file (``json.loads`` of its UTF-8 text): a JSON
        object it lists (and may approve; one with no id breaks its ``/memory pending`` list), other JSON
        it fails on, else it skips it (``HERMES_SEES``). A link is never followed here: Hermes follows it."""
        if path.is_symlink():
            return "follows"
        try:
            data = json.loads(self.links.read_bytes(path, sealed=self.root).decode("utf-8"))
        except (OSError, WorkbenchError, ValueError, RecursionError):
            return "skips"
        if not isinstance(data, dict):
            return "breaks"
        return "lists" if "id" in data else "unnamed"  # (its list prints each record's ``r['id']``)

    def scan(self, subsystem: str | None = None) -> Scan:
        """Every record (oldest first) plus the files that could not be used."""
        result = Scan()
        seen: dict[str, tuple[tuple[int, int, int], PendingRecord | ValueError]] = {}
        for name in (check_subsystem(subsystem),) if subsystem else SUBSYSTEMS:
            try:
                entries = sorted(
                    os.scandir(self.links.resolve(self.root / name, sealed=self.root)), key=lambda e: e.name
                )
            except UnsafePath as exc:
                result.problems.append(RecordProblem(str(self.root / name), exc.message))
                continue
            except OSError:  # the folder does not exist (yet)
                continue
            for entry in entries:
                if entry.name.startswith(".") or not entry.name.endswith(".json"):
                    continue
                loaded = self._load(entry, name)
                seen[entry.path] = loaded
                if isinstance(loaded[1], ValueError):
                    result.problems.append(self.problem(Path(entry.path), name, str(loaded[1])))
                else:
                    result.records.append(loaded[1])
        with self._cache_lock:
            if subsystem is None:
                self._cache = seen
            else:
                self._cache.update(seen)
        result.records.sort(key=lambda r: (r.created_at, r.id))
        return result

    def _load(self, entry: os.DirEntry, subsystem: str) -> tuple[tuple[int, int, int], PendingRecord | ValueError]:
        """A record file parsed, or reused from the last scan while the file is unchanged.

        Records are written by atomic rename, so a changed record has a new inode.
        """
        try:
            stat = entry.stat()
            key = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        except OSError:
            key = (0, 0, 0)
        cached = self._cache.get(entry.path)
        if cached is not None and cached[0] == key and key != (0, 0, 0):
            return cached
        try:
            return key, self.read(Path(entry.path), subsystem)
        except ValueError as exc:
            return key, exc


@lru_cache(maxsize=32)
def _parsed(raw: bytes, pending_id: str, subsystem: str) -> PendingRecord | ValueError:
    """``PendingStore.parse``'s answer, kept for the same bytes: a command reads a record up to three times,
    from two homes (a read-only one, and the one that catches up), and the TUI lists a record before it
    previews it, yet the process parses it once (a 100,000-operation batch's parse takes seconds, hashing
    and comparing its bytes a few ms)."""
    try:
        return PendingStore.parse(raw, pending_id, subsystem)
    except ValueError as exc:
        return exc


def _staged_by(data: dict) -> str:
    """Which program wrote a record: ours carry ``actor`` (and ``staged_by``), Hermes's neither."""
    if "staged_by" in data:
        return "hermes" if data["staged_by"] == "hermes" else "workbench"
    return "workbench" if "actor" in data else "hermes"


def record_from_dict(data: Any, stem: str, subsystem: str) -> PendingRecord:
    """A record from its JSON form (a file's, or the journal's copy); ValueError says what is wrong."""
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    if not _ID.fullmatch(stem):
        raise ValueError("file name is not an 8-hex-character pending id")
    if data.get("id") != stem:
        raise ValueError(f"id {quoted(data.get('id'))} does not match the file name {quoted(stem)}")
    if data.get("subsystem", subsystem) != subsystem:
        raise ValueError(f"subsystem {quoted(data.get('subsystem'))} does not match its folder {quoted(subsystem)}")
    payload = data.get("payload")
    if not isinstance(payload, dict):
        raise ValueError("payload is missing or not an object")
    try:  # the payload is replayed and journaled: it must be strict JSON text
        json.dumps(payload, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except ValueError as exc:  # NaN or Infinity, a lone surrogate (UnicodeEncodeError)
        raise ValueError(f"payload is not strict JSON ({exc})") from None
    action = data.get("action", payload.get("action"))
    if not isinstance(action, str) or not action:
        raise ValueError("action is missing")
    created_at = data.get("created_at")
    if isinstance(created_at, bool) or not isinstance(created_at, (int, float)):
        raise ValueError("created_at is missing or not a number")
    if iso_time(created_at) is None:
        raise ValueError(f"created_at {quoted(created_at)} is not a time (epoch seconds between years 1 and 9999)")
    message_id = data.get("message_id")
    if isinstance(message_id, int) and not -(2**63) <= message_id < 2**63:
        raise ValueError(f"message_id {quoted(message_id)} is beyond what state.db can hold")
    actor = data.get("actor") or ("review" if data.get("origin") == BACKGROUND_REVIEW else "agent")
    if actor not in ACTORS:  # (the journal takes no other, and would refuse the record's every row)
        raise ValueError(f"actor {quoted(actor)} is not one of {', '.join(ACTORS)}")
    return PendingRecord(
        id=stem,
        subsystem=subsystem,
        claimed_action=action,
        claimed_summary=str(data.get("summary") or ""),
        origin=str(data.get("origin") or FOREGROUND),
        created_at=float(created_at),
        payload=payload,
        actor=actor,
        session_id=data["session_id"] if isinstance(data.get("session_id"), str) else None,  # (else none named)
        message_id=message_id if isinstance(message_id, int) and not isinstance(message_id, bool) else None,
        staged_by=_staged_by(data),
        base=data["base"] if isinstance(data.get("base"), str) else None,
    )
