"""The curated memory store: MEMORY.md and USER.md of one home.

Every write takes the target's flock (``MEMORY.md.lock``, the same protocol Hermes
uses), re-reads the file under it, checks the unreadable and drift guards, applies a
pure operation from ``ops``, journals the change (row begun before, committed after),
writes a temp file (``.mem_*``) that is fsynced and atomically renamed, and only then
publishes ``MemoryChanged``. A second process writing at the same time waits for the
lock and merges with what the first one wrote; nothing is lost.

Writes by the agent pass the approval gate (``home.approvals``): a write that must wait
is validated and pinned to the entry it targets, then staged instead of applied.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from dataclasses import replace as _dc_replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import approval_gate
from ..config import MEMORY_LIMIT_KEYS
from ..db import database_stamp
from ..errors import WorkbenchError
from ..events import MemoryChanged
from ..fileio import (
    TEMP_MAX_BYTES,
    UnsafePath,
    atomic_write_bytes,
    crash_point,
    file_lock,
    lock_path_for,
    read_regular,
    remove_stale_temps,
    write_failure_hint,
)
from ..journal import JournalEntry, Mark, content_hash, mark, mark_after
from ..safety import Verdict, assess
from ..textsafety import quoted
from ..tools import BACKGROUND_REVIEW, REVIEW_WHERE, AlreadyWaiting, ToolContext, already_waiting
from . import encoding, ops, similar, targets
from . import replay as replaying
from .archive_writes import STAMPED_BEFORE_S, ArchiveWrites
from .credit import awaiting, credit
from .format import (
    BOM,
    FILE_NAMES,
    TARGETS,
    Usage,
    appended_entries,
    breaks_delimiter,
    entry_changes,
    has_crlf,
    has_drift,
    kept_before,
    line_endings,
    misread_at,
    normalise_line_endings,
    read_as_hermes,
    serialize,
    split_pieces,
)
from .ops import Outcome, Refusal, StalePin, follows_key, preceding, preview, refuse, succeeding
from .rebuild import SUBSYSTEM, Left, base_of, left_of, left_unless_pending, rebuild, replay, replays
from .snapshot import MemorySnapshot
from .threats import refusal_message, warning_message

if TYPE_CHECKING:
    from ..home import Home

log = logging.getLogger(__name__)

_BOM_BYTES = BOM.encode()

TMP_PREFIX = ".mem_"
MAX_CONSOLIDATION_FAILURES = 3
FAILURES_KEY = "memory_consolidation_failures"
SAVED_NOTE = "Write saved. This update is complete — do not repeat it."
REWRITE_GRACE_S = 1.0  # how long a file emptied just now is given to be written again (``_wait_out_rewrite``)


class MemoryFileUnreadable(WorkbenchError):
    """MEMORY.md or USER.md exists but cannot be read (permissions, encoding)."""


@dataclass(frozen=True)
class FileState:
    data: bytes | None  # None when the file does not exist (or could not be read)
    raw: str  # decoded text, BOM removed ("" when missing)
    entries: list[str]  # as Hermes reads them: line endings translated (``format.read_as_hermes``)
    error: str | None = None
    not_utf8: bytes | None = (
        None  # the bytes of a file that is not valid UTF-8 (``error`` says so): its repair reads them
    )

    @property
    def bom(self) -> bool:
        """Whether the file starts with a byte-order mark (``raw`` has it dropped)."""
        return (self.data or b"").startswith(_BOM_BYTES)

    @cached_property
    def sha(self) -> str:
        """``content_hash(raw)``, from the bytes read when they are exactly ``raw`` in UTF-8 (no byte-order mark)."""
        return _sha_of(self.data) if self.data is not None and not self.bom else content_hash(self.raw)

    def encode(self, text: str) -> bytes:
        """``text`` in UTF-8. An add's text is this file's with an entry appended: only that end is
        encoded (a store holding a '§' is not ASCII, and encoding it whole cost 19 us per 25 KB)."""
        if self.data is not None and not self.bom and text.startswith(self.raw):
            return self.data + text[len(self.raw) :].encode("utf-8")
        return text.encode("utf-8")


# The last byte strings ``_sha_of`` hashed, each with its SHA-256 state: a write hashes the file it
# read (mostly the one it wrote last) and the file it writes (mostly that one with an entry appended).
_HASHED: list[tuple[bytes, Any]] = []


def _sha_of(data: bytes) -> str:
    """``content_hash`` of the text whose UTF-8 bytes are ``data``: hashed on from the longest of the last
    bytes hashed that it starts with (compared byte for byte, so never from a stale state)."""
    kept = max((k for k in _HASHED if data.startswith(k[0])), key=lambda k: len(k[0]), default=None)
    if kept is None:
        hasher = hashlib.sha256(data)
    else:
        hasher = kept[1].copy()
        hasher.update(memoryview(data)[len(kept[0]) :])
    _HASHED[:] = [*_HASHED[-1:], (data, hasher)]
    return hasher.hexdigest()


# The last files ``_read_file`` read (bytes, text, entries): a write reads the file it wrote last, or that
# one with entries appended (an add, by this process or another), whose entries need no reading again.
_READ: list[tuple[bytes, str, tuple[str, ...]]] = []


def _decoded_on(head: bytes, head_text: str, data: bytes) -> str:
    """``data.decode("utf-8-sig")`` for ``data`` that starts with ``head``, whose decoding is ``head_text``:
    only the rest is decoded (a file another add extended, decoded whole, cost 6 µs per 15 KB). A whole
    decoding ends on a character, so the rest starts on one and decodes as it would in place; an error
    in it names the byte a whole decoding names (counted after a byte-order mark, as "utf-8-sig" does)."""
    try:
        return head_text + data[len(head) :].decode("utf-8")
    except UnicodeDecodeError as exc:
        skipped = len(head) - (len(_BOM_BYTES) if head.startswith(_BOM_BYTES) else 0)
        raise UnicodeDecodeError(exc.encoding, data, exc.start + skipped, exc.end + skipped, exc.reason) from None


def _read_file(real: Path) -> FileState:
    """The memory file at ``real``, a path the link policy resolved."""
    try:
        data = read_regular(real)
    except FileNotFoundError:
        return FileState(None, "", [])
    except UnsafePath as exc:
        return FileState(None, "", [], exc.message)
    except OSError as exc:
        return FileState(None, "", [], exc.strerror or str(exc))
    kept = max((k for k in _READ if data.startswith(k[0])), key=lambda k: len(k[0]), default=None)
    if kept is not None and len(kept[0]) == len(data):  # the same bytes (compared whole): the same reading
        return FileState(data, kept[1], list(kept[2]))
    try:
        raw = data.decode("utf-8-sig") if kept is None else _decoded_on(kept[0], kept[1], data)
    except UnicodeDecodeError as exc:
        return FileState(None, "", [], f"it is not valid UTF-8 (byte {exc.start})", data)
    entries = None if kept is None else appended_entries(kept[1], kept[2], raw)
    state = FileState(data, raw, read_as_hermes(raw) if entries is None else entries)
    if data:
        _READ[:] = [*_READ[-1:], (data, raw, tuple(state.entries))]
    return state


def _left_file(detail: dict, raw: str) -> bool:
    """Whether a journal row's write left the file as ``raw`` (its hash; the text itself in older rows)."""
    return detail.get("file_sha") == content_hash(raw) if "file_sha" in detail else detail.get("file_after") == raw


def _refuse_misread(target: str, entries: list[str]) -> None:
    """Refuse a write whose entries would not read back as written: an entry ending in a line holding
    only '§' (a stray delimiter left by an edit) would take the next entry's first line."""
    index = misread_at(entries)
    if index is None:
        return
    shown = preview(" ".join(entries[index].split()))
    raise refuse(
        f"Refusing to write {FILE_NAMES[target]}: entry {index + 1} ('{shown}') ends with a line holding only "
        "'§', so an entry after it would be read with that line at its start, and this one without it. Drop "
        f"that stray line first: `workbench memory repair --target {target}` (r on the Memory screen) offers "
        "it. Nothing was changed."
    )


@dataclass(frozen=True)
class _Writer:
    """Who a write is journaled as."""

    actor: str
    session_id: str | None = None
    message_id: int | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, ctx: ToolContext) -> _Writer:
        return cls(ctx.actor, ctx.session_id, ctx.message_id, {"origin": ctx.origin})


@dataclass(frozen=True)
class _Wrote:
    """What a write left the journal as: while workbench.db keeps its ``mark`` (nothing wrote it since,
    in any connection), the target has no pending rows and ``left`` is the file the journal last left,
    so the next write of this process need not read either again. ``base``: the hash of the snapshot
    that file is rebuilt from (its own when it kept one), when this process knows it without reading
    the rows back (None: it does not)."""

    mark: Mark
    left: Left
    base: str | None = None


@dataclass
class _Plan:
    """A validated write: the operation to run under the lock and how to stage or replay it."""

    action: str
    op: Callable[[list[str], int], Outcome]
    payload: dict[str, Any]
    detail: str  # what the approval summary shows
    drift_guard: bool = True
    journal_action: str | None = None  # e.g. "undo"; default: each change's own action
    extra_detail: dict[str, Any] = field(default_factory=dict)
    flags: Verdict | None = None  # a suspicious verdict: staged for the agent, a warning for the user
    not_utf8: bool = False  # a repair: a file that is not UTF-8 is read as ``encoding.shown`` (its op judges it)


def _as_hermes_freezes(state: FileState) -> list[str]:
    """The entries a session's prompt gets, as Hermes reads the file: line endings translated
    (so a CRLF file is its entries, not one entry full of U+000D that its scan would block),
    and a leading byte-order mark kept in entry 1 (whose scan then blocks it as invisible)."""
    if not state.bom:
        return state.entries
    return list(dict.fromkeys(split_pieces(normalise_line_endings(BOM + state.raw))))


def _text(value: Any, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise refuse(f"'{name}' must be a string, got {type(value).__name__}.")
    return value.strip()


def _scan(text: str, prefix: str = "") -> Verdict:
    """Refuse text that cannot be stored as one entry, or that the threat scan calls dangerous."""
    if breaks_delimiter(text):
        raise refuse(
            prefix + "Content contains the entry delimiter (a line holding only '§' between other lines, or "
            "at its start or end), so it would be read back as several entries. Write it as one entry "
            "without a line that is only '§' (a '§' inside a line is fine), or add each part as its own "
            "entry. Nothing was changed."
        )
    verdict = assess(text)
    if verdict.dangerous:
        raise refuse(prefix + refusal_message(verdict))
    return verdict


def _flags(*verdicts: Verdict) -> Verdict | None:
    """The suspicious verdicts of a write merged into one, or None when all are clean."""
    findings = tuple(f for v in verdicts if v.suspicious for f in v.findings)
    return Verdict("suspicious", findings) if findings else None


def _op_words(op: dict[str, Any], single: bool = False) -> str:
    """One write's text as Hermes's summary words it: a replace gives both texts, so the entry it
    changes is named (``old: …`` / ``new: …`` alone, ``old -> new`` in a batch)."""
    action, old, new = op.get("action", "?"), ops.op_text(op, "old_text"), ops.op_text(op, "content")
    if single:
        return f"old: {old}\nnew: {new}" if action == "replace" else old if action == "remove" else new
    if action == "replace":
        return f"- replace: {old} -> {new}"
    return f"- {action}: {old if action == 'remove' else new}"


def _joined_head(lines: Iterable[str], size: int) -> str:
    """``"\n".join(lines)[:size]``, taking only the lines that reach into it: a batch whose first 120
    characters Hermes's summary gives may hold 100,000 operations."""
    taken: list[str] = []
    length = -1  # (no line break before the first)
    for line in lines:
        if length >= size:
            break
        taken.append(line)
        length += 1 + len(line)
    return "\n".join(taken)[:size]


def staged_summary(payload: dict[str, Any]) -> str:
    """A staged memory write in words, as Hermes 0.19's memory tool words its record's ``summary``
    (``add to user profile: ...``, a replace's old and new text, a batch's ops one per line), so a
    record either wrote reads the same; also how ``sessions show`` names a write Hermes staged."""
    named = payload.get("target")
    where = targets.LABELS.get(named if isinstance(named, str) and named else "memory", "memory")
    operations = payload.get("operations")
    if isinstance(operations, list):
        ops_as_hermes = (op or {} for op in operations)  # (Hermes's ``op = op or {}``: a falsy op reads "?")
        detail = _joined_head((_op_words(op) for op in ops_as_hermes if isinstance(op, dict)), 120)
        return f"apply {len(operations)} op(s) to {where}: {detail}"
    action = payload.get("action")
    verb = {"add": "add to", "replace": "replace in", "remove": "remove from"}.get(str(action), str(action))
    return f"{verb} {where}: {_op_words(payload, single=True)[:120]}"


def _choices() -> str:
    return " or ".join(f"'{name}'" for name in TARGETS)


class MemoryStore:
    def __init__(self, home: Home):
        self.home = home
        self.temps_removed: list[str] = []  # leftovers ``reconcile`` deleted (their bytes kept elsewhere), for doctor
        self._paths: tuple[Path | None, Path, dict[str, Path]] = (None, Path(), {})  # (root, memories, files)

    def _layout(self) -> tuple[Path, dict[str, Path]]:
        """The memories folder and each target's file in the home, as the home names them (not resolved):
        built once per home root, not on every write."""
        root, folder, files = self._paths
        if root is not self.home.root:
            folder = self.home.memories_dir
            files = {target: folder / name for target, name in FILE_NAMES.items()}
            self._paths = (self.home.root, folder, files)
        return folder, files

    # -- files and settings ---------------------------------------------------------
    def path(self, target: str) -> Path:
        return self._layout()[1][target]

    def limit(self, target: str) -> int:
        return self.home.config.int(targets.target(target).limit_key)

    def enabled(self, target: str) -> bool:
        return self.home.config.bool(targets.target(target).enabled_key)

    def duplicate_threshold(self) -> float:
        """The similarity score (0-100) at which an entry counts as a near-duplicate."""
        return self.home.config.float(similar.THRESHOLD_KEY)

    def read(self, target: str) -> FileState:
        """The file as it is now (no lock: writes are atomic renames, so it is whole)."""
        real = self._real(target)
        return real if isinstance(real, FileState) else _read_file(real)

    def _real(self, target: str, folder: Path | None = None) -> Path | FileState:
        """The real path of ``target``'s file, every link on the way checked by the link policy (a write
        resolves it once, for its read and its rename), or the unreadable state a refused link gives.
        ``folder``: the memories folder as the policy resolved it for this write's lock (``_lock_in``);
        only the file's own step is checked then."""
        try:
            if folder is not None:
                return self.home.links.resolve_child(self.path(target), folder)
            return self.home.links.resolve(self.path(target))
        except UnsafePath as exc:
            return FileState(None, "", [], exc.message)
        except OSError as exc:
            return FileState(None, "", [], exc.strerror or str(exc))

    def entries(self, target: str) -> list[str]:
        """The live entries on disk, as Hermes reads them (a CRLF file's line endings translated);
        raises ``MemoryFileUnreadable`` for an unreadable file."""
        return self._readable(target).entries

    def _readable(self, target: str) -> FileState:
        self._check_target_or_raise(target)
        state = self.read(target)
        if state.error:
            said = f"Cannot read {self.path(target)}: {state.error.rstrip('.')}."
            if state.not_utf8 is None:
                fix = app_fix = "Fix the file (permissions, encoding UTF-8, or the link)"
            else:
                fix, app_fix = encoding.advice(target), "r on the Memory screen repairs it, keeping a copy"
            raise MemoryFileUnreadable(
                f"{said} {fix}; nothing was changed.", in_app=f"{said} {app_fix}; nothing was changed.", target=target
            )
        return state

    def usage(self, target: str) -> Usage:
        return Usage.of(self.entries(target), self.limit(target))

    def snapshot(self) -> MemorySnapshot:
        """Freeze both stores as a new session's system prompt would show them."""
        raw, errors, limits = {}, {}, {}
        for target in TARGETS:
            state = self.read(target)
            limits[target] = self.limit(target)
            raw[target], errors[target] = _as_hermes_freezes(state), state.error
            if state.error:
                log.warning(
                    "%s could not be read (%s); it is left out of the snapshot.", self.path(target), state.error
                )
            elif (usage := Usage.of(state.entries, limits[target])).chars > limits[target]:
                log.warning(  # (its figures as every other message gives them: 1,050/300, not 1050/300)
                    "%s exceeds its char limit on load: %s chars. Entries stay loaded; further additions "
                    "are blocked until it is back under the limit.",
                    FILE_NAMES[target],
                    usage.short,
                )
        enabled = {t: self.enabled(t) for t in TARGETS}
        return MemorySnapshot.build(raw, limits, enabled, errors, self.home.clock.now(), self._withheld(raw))

    def _withheld(self, raw: dict[str, list[str]]) -> str | None:
        """Why Hermes would inject no memory block: a quoted limit of a store that has entries
        fails its block rendering, which drops both blocks."""
        broken = {m.key: m for m in self.home.config.hermes_misreads() if m.breaks_memory}
        for target, key in MEMORY_LIMIT_KEYS.items():
            if key in broken and raw[target]:
                return f"No memory block: {broken[key].message(self.home.config.path)}"
        return None

    # -- tool operations ------------------------------------------------------------
    def add(self, target: str, content: Any, ctx: ToolContext | None = None) -> dict[str, Any]:
        return self._run(ctx, target, lambda: self._plan_add(content))

    def replace(self, target: str, old_text: Any, content: Any, ctx: ToolContext | None = None) -> dict[str, Any]:
        return self._run(ctx, target, lambda: self._plan_replace(old_text, content))

    def remove(self, target: str, old_text: Any, ctx: ToolContext | None = None) -> dict[str, Any]:
        return self._run(ctx, target, lambda: self._plan_remove(old_text))

    def batch(self, target: str, operations: Any, ctx: ToolContext | None = None) -> dict[str, Any]:
        return self._run(ctx, target, lambda: self._plan_batch(operations, target))

    def replace_exact(self, target: str, entry: str, content: Any) -> dict[str, Any]:
        """A person's edit of exactly ``entry``, the version they saw: refused (nothing
        written) if it is no longer in the file, so a concurrent rewrite is never overwritten.
        Journaled as a user edit with the tool's validation, never through the gate."""
        return self._edit(target, lambda: self._plan_replace(entry, content, pin=entry))

    def add_edit_of(self, target: str, entry: str, content: Any) -> dict[str, Any]:
        """A person's edit of ``entry`` kept after another writer removed the entry meanwhile (the
        editor's "Keep mine"): ``content`` added as a new entry, journaled as the user's add naming
        the entry it is an edit of (``edit_of``), so its history goes on to that entry's past."""
        if not isinstance(entry, str) or not entry:
            raise ValueError("add_edit_of names the entry the draft was an edit of.")
        return self._edit(target, lambda: _dc_replace(self._plan_add(content), extra_detail={"edit_of": entry}))

    def remove_exact(self, target: str, entry: str) -> dict[str, Any]:
        """A person's removal of exactly ``entry`` (refused if it is no longer there)."""
        return self._edit(target, lambda: self._plan_remove(entry, pin=entry))

    def _edit(self, target: str, prepare: Callable[[], _Plan]) -> dict[str, Any]:
        try:
            self._check_target(target)
            self._check_writable()
            plan = prepare()
            limit = self.limit(target)  # read once: the write checks against it and its result reports it
            outcome = self._apply(target, plan, _Writer.of(ToolContext(actor="user")), limit=limit)
        except StalePin:  # (its own message speaks of a staged write and a pending record)
            return {
                "success": False,
                "error": f"{FILE_NAMES[target]} no longer holds this entry as you saw it: another writer changed "
                "or removed it meanwhile. Nothing was changed.",
            }
        except Refusal as refusal:
            return refusal.said_to("user")
        return self._success(target, outcome, limit)

    def elsewhere(self, target: str, old_text: str) -> str | None:
        """The other store, when ``old_text`` is in none of ``target``'s entries but in one of its
        (a person's replace or remove sent to the wrong store: what to suggest instead); else None."""
        other = next(t for t in TARGETS if t != target)
        return other if ops.holds(self.read(other).entries, old_text) else None

    def _plan_add(self, content: Any) -> _Plan:
        text = _text(content, "content")
        if not text:
            raise refuse("Content cannot be empty.")
        verdict = _scan(text)
        return _Plan(
            "add",
            lambda entries, limit: ops.add(entries, text, limit),
            {"action": "add", "content": text},
            text,
            drift_guard=False,
            flags=_flags(verdict),
        )

    def _plan_replace(self, old_text: Any, content: Any, pin: str | None = None) -> _Plan:
        old, new = _text(old_text, "old_text"), _text(content, "content")
        if not old and pin is None:
            raise refuse("old_text cannot be empty.")
        if not new:
            raise refuse("new_content cannot be empty. Use 'remove' to delete entries.")
        verdict = _scan(new)
        return _Plan(
            "replace",
            lambda entries, limit: ops.replace(entries, old, new, limit, pin),
            {"action": "replace", "old_text": old, "content": new},
            new,
            flags=_flags(verdict),
        )

    def _plan_remove(self, old_text: Any, pin: str | None = None) -> _Plan:
        old = _text(old_text, "old_text")
        if not old and pin is None:
            raise refuse("old_text cannot be empty.")
        return _Plan(
            "remove",
            lambda entries, limit: ops.remove(entries, old, pin),
            {"action": "remove", "old_text": old},
            pin or old,
        )

    def _plan_batch(self, operations: Any, target: str) -> _Plan:
        if not isinstance(operations, list):
            raise refuse("operations must be a list of {action, content?, old_text?} objects.")
        if not operations:
            raise refuse("operations list is empty.")
        ops.check_batch_size(operations)
        clean: list[dict[str, Any]] = []
        verdicts = []
        for i, op in enumerate(operations, 1):
            op = op if isinstance(op, dict) else {}
            item = {
                "action": op.get("action"),
                "content": ops.op_text(op, "content"),
                "old_text": ops.op_text(op, "old_text"),
            }
            if isinstance(op.get("matched_entry"), str):
                item["matched_entry"] = op["matched_entry"]
            if item["action"] in ("add", "replace") and item["content"]:
                verdicts.append(_scan(item["content"], f"Operation {i}: "))
            clean.append(item)
        summary = "; ".join(f"{op['action']} {op['content'] or op['old_text']}" for op in clean)
        return _Plan(
            "batch",
            lambda entries, limit: ops.batch(entries, clean, limit, target),
            {"action": "batch", "operations": clean},
            summary,
            flags=_flags(*verdicts),
        )

    def _run(self, ctx: ToolContext | None, target: str, prepare: Callable[[], _Plan]) -> dict[str, Any]:
        """Validate, then stage (when the gate says so) or apply; count consolidation failures."""
        ctx = ctx or ToolContext(actor="user")
        try:
            self._check_target(target)
            self._check_writable()
            plan = prepare()
            writer = _Writer.of(ctx)
            limit = self.limit(target)  # read once: the write checks against it and its result reports it
            if self._must_stage(ctx, plan):
                outcome = self._apply(target, plan, writer, dry_run=True, limit=limit)
                if outcome.changes:
                    result = self._stage(ctx, target, plan, outcome)
                    ctx.turn_state[FAILURES_KEY] = 0
                    return result
            else:
                outcome = self._apply(target, plan, writer, limit=limit)
        except Refusal as refusal:
            return self._refused(refusal, ctx, target)
        ctx.turn_state[FAILURES_KEY] = 0
        result = self._success(target, outcome, limit)
        if plan.flags is not None and outcome.changes:
            result.update(warning=warning_message(plan.flags), flags=plan.flags.reasons)
        return result

    def _refused(self, refusal: Refusal, ctx: ToolContext, target: str) -> dict[str, Any]:
        if ctx.actor == "user":  # a person's edit: no consolidation count, and words for a person
            result = refusal.said_to("user")
            old = refusal.old_text if isinstance(refusal, ops.NoMatch) else None
            other = self.elsewhere(target, old) if old is not None else None
            if other is not None:  # sent to the wrong store, likely: say which one holds it
                result["error"] = (
                    f"No entry of {FILE_NAMES[target]} holds '{old}', but {FILE_NAMES[other]} does: "
                    f"use --target {other}."
                )
                result["other_target"] = other
            return result
        if not refusal.counts:
            return refusal.result
        failures = int(ctx.turn_state.get(FAILURES_KEY, 0)) + 1
        ctx.turn_state[FAILURES_KEY] = failures
        if failures > MAX_CONSOLIDATION_FAILURES:
            return {
                "success": False,
                "done": True,
                "error": f"Memory consolidation failed {failures} times this turn. Stop retrying memory calls — "
                "leave memory unchanged for now and continue with your reply to the user. The fact can "
                "be saved in a later turn.",
            }
        return refusal.result

    def _success(self, target: str, outcome: Outcome, limit: int | None = None) -> dict[str, Any]:
        """The result of a write; ``limit``: the char limit it was made under (else read now)."""
        limit = self.limit(target) if limit is None else limit
        usage = Usage(outcome.chars, limit) if outcome.chars is not None else Usage.of(outcome.entries, limit)
        return {
            "success": True,
            "done": True,
            "target": target,
            "usage": usage.text,
            "entry_count": len(outcome.entries),
            "message": outcome.message,
            **outcome.extras,
            "note": SAVED_NOTE,
        }

    # -- the approval gate ----------------------------------------------------------
    def _must_stage(self, ctx: ToolContext, plan: _Plan) -> bool:
        """The user is the approver, so only agent-side writes can be staged; suspicious ones always are."""
        if ctx.actor == "user":
            return False
        if plan.flags is not None:
            return True
        operations = plan.payload.get("operations")
        return approval_gate.should_stage(self.home.config, SUBSYSTEM, plan.action, ctx.origin, operations)

    def _stage(self, ctx: ToolContext, target: str, plan: _Plan, outcome: Outcome) -> dict[str, Any]:
        payload = {**plan.payload, "target": target}
        if plan.action in ("replace", "remove"):
            payload["matched_entry"] = outcome.changes[0].before
        elif plan.action == "batch":
            payload["operations"] = [
                {**op, "matched_entry": outcome.pins[i]} if i in outcome.pins else op
                for i, op in enumerate(payload["operations"], 1)
            ]
        approval_on = self.home.config.bool("memory.write_approval")
        try:
            record = self.home.approvals.stage(
                subsystem=SUBSYSTEM,
                action=plan.action,
                summary=staged_summary(payload),
                origin=ctx.origin,
                payload=payload,
                actor=ctx.actor,
                session_id=ctx.session_id,
                message_id=ctx.message_id,
                once=True,
            )
        except AlreadyWaiting as same:  # one proposal to approve, not one per time it was proposed
            return already_waiting(same.pending_id)
        except WorkbenchError as exc:
            if not approval_on and ctx.origin == BACKGROUND_REVIEW and plan.flags is None:
                raise refuse(
                    "Background review may not delete memory entries ('replace'/'remove', including in a "
                    "batch); 'add' is still available."
                ) from exc
            raise refuse(f"The write could not be staged for approval, so it was not saved: {exc.message}") from exc
        if plan.flags is not None:
            return {
                "success": True,
                "staged": True,
                "pending_id": record.id,
                "flags": plan.flags.reasons,
                "message": f"Staged for the user's approval because the text looks suspicious: "
                f"{'; '.join(plan.flags.reasons)}. Not yet saved. If this is a plain fact, rewrite it "
                "without instructions to the assistant, commands or links; otherwise leave it out.",
            }
        if approval_on:
            return {
                "success": True,
                "staged": True,
                "pending_id": record.id,
                "message": f"Staged for approval (memory.write_approval is on). Not yet saved — "
                f"review it {REVIEW_WHERE}.",
            }
        return {
            "success": True,
            "staged": True,
            "proposal_staged": True,
            "pending_id": record.id,
            "additions_saved": 0,
            "message": f"Background review may not change or delete memory entries on its own. The proposed "
            f"{plan.action} was staged for your approval — review it {REVIEW_WHERE} (approve to apply, "
            "reject to drop).",
        }

    def apply_staged(
        self,
        payload: dict[str, Any],
        *,
        actor: str = "user",
        edited_content: str | None = None,
        pending_id: str | None = None,
        session_id: str | None = None,
        message_id: int | None = None,
        proposed_by: str | None = None,
        seen: dict[int, str] | None = None,
        checked: bool = False,
    ) -> dict[str, Any]:
        """Replay a staged write through every guard (never the gate: this is the approval).

        The payload holds only Hermes's replay keywords (so Hermes can approve our records
        too); who proposed it, and in which session and message, comes from the record.
        ``seen``: the entries the approver was shown its replaces and removes hit (by operation
        number), or with ``checked`` those an approval that showed nothing found them to hit when
        it checked them; one changed since is refused, never replaced unseen.
        """
        try:
            self._check_writable()
            if seen:
                payload = ops.pin_seen(payload, seen)
            target, plan = self._staged_plan(payload, edited_content)
            writer = _Writer(
                actor,
                session_id,
                message_id,
                {"pending_id": pending_id, "proposed_by": proposed_by, "edited": edited_content is not None},
            )
            limit = self.limit(target)  # read once: the write checks against it and its result reports it
            outcome = self._apply(target, plan, writer, limit=limit)
        except StalePin as stale:
            if stale.entry not in (seen or {}).values():  # (a pin of its own: changed since it was staged)
                return stale.result
            return {
                "success": False,
                "error": f"{FILE_NAMES[target]} changed {'as it was approved' if checked else 'while you were asked'}"
                f": an entry this write would change is no longer as it was {'checked' if checked else 'shown'}. "
                "Nothing was approved; the proposal still waits, look at it again.",
            }
        except Refusal as refusal:
            return refusal.said_to(actor)  # (a person approving reads the words for a person)
        return self._success(target, outcome, limit)

    def preview_staged(
        self,
        payload: dict[str, Any],
        edited_content: str | None = None,
        assumed: Mapping[str, list[str]] | None = None,
    ) -> dict[str, Any]:
        """What approving would do, computed from the live files without writing anything.

        ``targets`` says which live entry each replace or remove hits now (or that it is
        gone or ambiguous), so a write Hermes staged without naming its entry can be judged.
        ``assumed``: by target, the entries to judge it against in place of the live file's
        (what approving the proposals before it in one batch would leave; the file's drift
        checks still read the file).
        """
        named = payload.get("target")
        target = named if isinstance(named, str) and named in TARGETS else "memory"
        state = self.read(target)
        limit = self.limit(target)
        current = list((assumed or {}).get(target, state.entries))
        after, error, targets, size_after, rewrites = current, None, [], None, []
        try:
            ops.check_batch_size(ops.staged_operations(payload))
            targets = ops.resolve_targets(current, ops.staged_operations(payload))
            target, plan = self._staged_plan(payload, edited_content)
            self._guard(target, state, limit, plan.drift_guard, backup=False)
            outcome = plan.op(list(current), limit)
            after = outcome.entries
            rewrites = [[c.before, c.after] for c in outcome.changes if c.before is not None and c.after is not None]
        except Refusal as refusal:
            error = refusal.said_to("user")["error"]  # a preview is for the person deciding
            size_after = refusal.size_after
        usage = Usage.of(after, limit)
        return {
            "target": target,
            "before_entries": list(current),
            "after_entries": list(after),
            "usage_after": usage.text,
            "percent_after": usage.percent,
            "error": error,
            "targets": [t.to_dict() for t in targets],
            "limit": limit,
            "size_after": size_after,  # refused as over capacity: what the store would have held
            "rewrites": rewrites,  # [before, after] of each entry a replace rewrites in its place
        }

    def _staged_plan(self, payload: dict[str, Any], edited: str | None) -> tuple[str, _Plan]:
        if not isinstance(payload, dict):
            raise refuse("The staged write has no usable payload; reject it.")
        target = payload.get("target") or "memory"
        self._check_target(target)
        action = payload.get("action")
        if edited is not None and action == "batch":
            payload, edited = {**payload, "operations": ops.edit_batch(payload.get("operations"), edited)}, None
        if edited is not None and action not in ("add", "replace"):
            raise refuse(f"Only an add, a replace or a batch can be edited before approval, not a {action}.")
        if action == "add":
            return target, self._plan_add(payload.get("content") if edited is None else edited)
        if action not in ("replace", "remove", "batch"):
            raise refuse(f"The staged write has an unknown action {quoted(action)}; reject it.")
        plan = self._pinned_plan(target, payload, edited)  # validates the record now
        if all(
            isinstance(op.get("matched_entry"), str)
            for op in ops.staged_operations(payload)
            if isinstance(op, dict) and op.get("action") in ("replace", "remove")
        ):
            return target, plan
        return target, _dc_replace(plan, op=self._resolving_op(target, payload, edited))

    def _pinned_plan(self, target: str, payload: dict[str, Any], edited: str | None) -> _Plan:
        action, pin = payload["action"], payload.get("matched_entry")
        pin = pin if isinstance(pin, str) else None
        if action == "replace":
            return self._plan_replace(
                payload.get("old_text"), payload.get("content") if edited is None else edited, pin
            )
        if action == "remove":
            return self._plan_remove(payload.get("old_text"), pin)
        return self._plan_batch(payload.get("operations"), target)

    def _resolving_op(
        self, target: str, payload: dict[str, Any], edited: str | None
    ) -> Callable[[list[str], int], Outcome]:
        """For a write staged without its entry (as Hermes stages them): under the lock,
        find each ``old_text``'s entry by Hermes's substring rule, refuse if one is gone or
        ambiguous, and apply the write pinned to the entries found."""

        def op(entries: list[str], limit: int) -> Outcome:
            targets = ops.resolve_targets(entries, ops.staged_operations(payload))
            unresolved = [t for t in targets if t.entry is None]
            if unresolved:
                raise refuse(
                    ops.unresolved_message(
                        unresolved,
                        FILE_NAMES[target],
                        payload["action"] == "batch",
                        lambda text: FILE_NAMES[other] if (other := self.elsewhere(target, text)) else None,
                    )
                )
            return self._pinned_plan(target, ops.pin_targets(payload, targets), edited).op(entries, limit)

        return op

        # -- the write path -------------------------------------------------------------

    def _apply(
        self, target: str, plan: _Plan, writer: _Writer, *, dry_run: bool = False, limit: int | None = None
    ) -> Outcome:
        """Run ``plan`` on the file under its lock; write, journal and announce the result. ``limit``: the
        target's char limit as the caller read it for this write (else read here)."""
        limit = self.limit(target) if limit is None else limit
        lock, folder = self._lock_in(target)
        with lock:
            real = self._real(target, folder)  # resolved once: the file read is the file replaced, beside its lock
            state = real if isinstance(real, FileState) else _read_file(real)
            if plan.not_utf8 and state.not_utf8 is not None:  # (what it journals as the file before)
                shown = encoding.shown(state.not_utf8).removeprefix(BOM)
                state = FileState(None, shown, read_as_hermes(shown))
            try:
                self._guard(target, state, limit, plan.drift_guard, backup=True)
                # A file holding CRs is read and written back as Hermes does: line endings translated, LF out,
                # so it comes out as Hermes's write leaves it.
                outcome = plan.op(list(state.entries), limit)
                if outcome.changes and outcome.text is None:
                    _refuse_misread(target, outcome.entries)
            except Refusal:
                self._settle(target, state)  # (a write that writes nothing still settles a dead writer's rows)
                raise
            if dry_run or not outcome.changes:
                self._settle(target, state)
                return outcome
            if outcome.text is None:  # (its size is the reply's usage: the entries are joined once)
                text = serialize(outcome.entries)
                outcome.chars = len(text)
            else:
                text = outcome.text
            if has_crlf(state.raw) and not has_crlf(text):  # (a whole-file repair or undo may keep them)
                outcome.extras["line_endings"] = (
                    f"{FILE_NAMES[target]} had {line_endings(state.raw)} line endings: it was written back with "
                    "LF, as Hermes's own write does."
                )
            if (
                state.bom and not text.startswith(BOM) and "repair" not in plan.extra_detail
            ):  # (a repair says what it did itself)
                outcome.extras["byte_order_mark"] = (
                    f"{FILE_NAMES[target]} started with a byte-order mark, which Hermes reads into entry 1 and "
                    "blocks from its prompt: it was written without it."
                )
            left = text.removeprefix(BOM)  # what reading the file back gives (``FileState.raw``)
            data = state.encode(text)
            # the rows a dead writer left settled, the reads and the pending rows: one transaction, one commit
            wrote, journal = self._wrote.pop(target, None), self.home.journal
            with journal.transaction() as conn:
                found = journal.reading(lambda: mark(conn))
                last: Left | None
                base: str | None = None  # the snapshot ``last``'s file is rebuilt from, when known
                if wrote is not None and wrote.mark == found:  # as this process's last write of it left it
                    last, base = wrote.left, wrote.base  # (no pending rows: committed; the file it left is the last)
                else:
                    pending, last = journal.reading(lambda: left_unless_pending(conn, target))  # (one statement)
                    if pending:
                        self._settle(target, state, conn)
                        last = left_of(conn, target)
                external = self._journal_external(target, state, last, looking=False)
                if external is not None or last is None:  # rows of an outside edit (or a first look) came first
                    last, base = left_of(conn, target), None
                link = self._link(last, state, outcome, text)
                if last is not None and last.depth == 0:
                    base = last.sha  # (it kept its own)
                release = () if link else self._releasable(target, keeping=left, mine=last, base=base)
                sha = _sha_of(data.removeprefix(_BOM_BYTES))
                at = self.home.clock.now()
                journal_ids = self._begin(conn, target, sha, outcome, writer, plan, link, at)
            began = mark_after(conn, found)
            crash_point("memory-journaled")  # a death here leaves pending rows the next writer abandons
            assert isinstance(real, Path)  # a refused link reads as an unreadable file, which the guard refused
            self._write(target, real, data, journal_ids)
            self._seen[target], self._seen_bom[target] = left, data.startswith(_BOM_BYTES)
            # Still under the lock, so memory writers never meet on workbench.db's write lock (where SQLite's
            # busy handler sleeps a millisecond or more while this lock is held); a crash here leaves the rows
            # pending, and the next writer settles them.
            crash_point("memory-renamed")
            ended = self.home.journal.commit_all(
                journal_ids, snapshot=None if link else left, release=release, since=began
            )
            if ended is not None:  # nothing else wrote workbench.db meanwhile: the next write may trust this
                self._wrote[target] = _Wrote(
                    ended, Left(journal_ids[-1], sha, None, link or 0, at), base if link else sha
                )
        if external is not None:
            self.home.bus.publish(external)
        single = outcome.changes[0] if len(outcome.changes) == 1 and plan.journal_action != "undo" else None
        self.home.bus.publish(
            MemoryChanged(
                actor=writer.actor,
                session_id=writer.session_id,
                journal_id=journal_ids[-1],
                target=target,
                action=plan.journal_action or plan.action,
                before=single.before if single else state.raw,
                after=single.after if single else text,
            )
        )
        return outcome

    @staticmethod
    def _link(last: Left | None, state: FileState, outcome: Outcome, text: str) -> int | None:
        """The write's depth when its file can be rebuilt from the journal (``rebuild``), so it keeps
        no snapshot of its own; None when it must keep one. It can when it read exactly the file
        the journal last left (not one reordered by hand, which journals no entry change), writes
        the serialized entries and nothing else (no text of its own, no leading U+FEFF, which
        reading back drops), and its rows, replayed on the entries it read, give the ones it writes."""
        if last is None or outcome.text is not None or text.startswith(BOM):
            return None
        link = last.link()
        if link is None or state.sha != last.sha:
            return None
        changes = [(c.before, c.after, c.index) for c in outcome.changes]
        return link if replays(state.entries, changes, outcome.entries) else None

    def _begin(
        self,
        conn: sqlite3.Connection,
        target: str,
        sha: str,
        outcome: Outcome,
        writer: _Writer,
        plan: _Plan,
        link: int | None,
        at: float,
    ) -> list[int]:
        """Inside the write's transaction on ``conn``: journal the changes as pending rows naming the new
        file's hash ``sha``, which settling compares with the file if the writer dies before it commits
        them (``_settle``), and ``link``: how many writes after the last kept snapshot it is (None: it
        keeps one)."""
        rows = []
        chain = {"depth": link} if link else {}
        for index, change in enumerate(outcome.changes, 1):
            detail = {**writer.detail, **plan.extra_detail, "file_sha": sha, **chain}
            if plan.action == "batch":
                detail.update(batch=True, op_index=index)
            if change.index is not None:
                detail.update(
                    index=change.index,
                    follows=[follows_key(e) for e in change.follows],
                    precedes=[follows_key(e) for e in change.precedes],
                )
            rows.append(
                {
                    "action": plan.journal_action or change.action,
                    "before": change.before,
                    "after": change.after,
                    "detail": detail,
                }
            )
        return self.home.journal.begin_all(
            SUBSYSTEM,
            target,
            rows,
            actor=writer.actor,
            session_id=writer.session_id,
            message_id=writer.message_id,
            within=conn,
            at=at,
        )

    def _write(self, target: str, real: Path, data: bytes, journal_ids: list[int]) -> None:
        """Under the lock, once the pending rows are committed: write the file (a failure abandons them).

        ``real``: the path the file was read from, as the link policy resolved it under this lock.
        The file is fsynced before its rename, as Hermes does; the folder is not (see
        docs/reliability.md): the journal's settling handles either outcome of a power cut.
        """
        try:
            atomic_write_bytes(real, data, TMP_PREFIX, sync_folder=False)
        except (OSError, UnsafePath) as exc:
            for row_id in journal_ids:
                self.home.journal.abandon(row_id, str(exc))
            reason = exc.message if isinstance(exc, UnsafePath) else f"{exc.strerror or exc}. Nothing was changed."
            if isinstance(exc, OSError) and exc.errno in (errno.EPERM, errno.EACCES, errno.EROFS):
                reason += " " + write_failure_hint(real.parent)  # (what stops it, the next step)
            raise refuse(f"Failed to write memory file {self.path(target)}: {reason}") from exc

    def _locked(self, target: str) -> contextlib.ExitStack:
        """The target's flock, taken now; a lock file that cannot be used is a refusal."""
        return self._lock_in(target)[0]

    def _lock_in(self, target: str) -> tuple[contextlib.ExitStack, Path]:
        """``_locked``, and the memories folder as the link policy resolved it for the lock (as
        ``LinkPolicy.lock`` does): a write finds its file in that same folder (``_real``), walking
        the home's path to it once."""
        stack = contextlib.ExitStack()
        # (first in, so last out: a checkpoint of workbench.db that is due runs once the lock is let go)
        stack.callback(self.home.journal.checkpoint_if_due)
        try:
            folder = self.home.links.resolve(self._layout()[0])
            stack.enter_context(file_lock(folder / FILE_NAMES[target]))
        except UnsafePath as exc:
            raise refuse(f"Cannot lock {lock_path_for(self.path(target))}: {exc.message}") from exc
        except OSError as exc:
            raise refuse(
                f"Cannot lock {lock_path_for(self.path(target))}: {exc.strerror or exc} (a symlinked or "
                "unwritable lock file is never used). Nothing was changed."
            ) from exc
        return stack, folder

    def _guard(self, target: str, state: FileState, limit: int, drift_guard: bool, *, backup: bool) -> None:
        file_name = FILE_NAMES[target]
        if state.error:
            raise refuse(
                f"Refusing to write {file_name}: the file exists on disk but could not be read "
                f"({state.error}). Treating an unreadable file as empty and saving would wipe existing "
                "memory, so the write is refused. Nothing was changed — "
                + (
                    f"fix the file's permissions or encoding (UTF-8) at {self.path(target)}, then retry."
                    if state.not_utf8 is None
                    else f"for {self.path(target)}, {encoding.advice(target)}; then retry."
                ),
                file=str(self.path(target)),
            )
        if not drift_guard or not has_drift(state.raw, limit):
            return
        if not backup:
            raise refuse(
                f"{file_name} has content that wouldn't round-trip through the memory tool (edited by hand "
                "or by another tool); this write would be refused until that drift is resolved: "
                f"`workbench memory repair --target {target}` (r on the Memory screen) lists the repairs."
            )
        saved = self._backup(target, state.data or b"")
        raise refuse(
            f"Refusing to write {file_name}: file on disk has content that wouldn't round-trip through the memory "
            "tool (likely added by the patch tool, a shell append, a manual edit, or a concurrent session). A "
            f"snapshot was saved to {saved}. Resolve the drift first — either rewrite the file as a clean §-delimited "
            "list of entries, or move the extra content out — then retry. This guard exists to prevent silent data "
            "loss (issue #26045).",
            drift_backup=saved,
            remediation="Open the .bak file, integrate the missing entries into the memory tool one at a time via "
            "memory(action=add, content=...), then remove or rewrite the original file to a clean state.",
        )

    def _backup(self, target: str, data: bytes) -> str:
        """Copy the drifted file to ``<FILE>.bak.<unix time>``, as Hermes's drift guard names it."""
        try:
            return str(self.keep_copy(target, data, "bak"))
        except (OSError, UnsafePath):
            return f"{self._copy_name(target, 'bak')} (BACKUP FAILED — file unchanged on disk)"

    def keep_copy(self, target: str, data: bytes, kind: str) -> Path:
        """Copy ``data`` (the file's bytes) to ``<FILE>.<kind>.<unix time>`` beside it, synced to disk (a new
        name if that one holds other bytes); Hermes reads only the file. Raises ``OSError``, ``UnsafePath``."""
        base = self._copy_name(target, kind)
        candidate, n = base, 0
        while candidate.exists() and candidate.read_bytes() != data:
            n += 1
            candidate = base.with_name(f"{base.name}.{n}")
        if not candidate.exists():
            self.home.links.write_bytes(candidate, data, TMP_PREFIX)
        return candidate

    def _copy_name(self, target: str, kind: str) -> Path:
        return self.path(target).with_name(f"{FILE_NAMES[target]}.{kind}.{int(self.home.clock.now())}")

    def _check_target(self, target: Any) -> None:
        if target not in TARGETS:
            raise refuse(f"Invalid memory target '{target}'. Use {_choices()}.")

    def _check_target_or_raise(self, target: Any) -> None:
        if target not in TARGETS:
            raise WorkbenchError(f"Invalid memory target '{target}'. Use {_choices()}.")

    def _check_writable(self) -> None:
        if self.home.read_only:
            raise refuse("This home is open read-only; nothing was written.")

    # -- interrupted writes and line endings ------------------------------------------
    def reconcile(self) -> list[int]:
        """Settle both files' interrupted writes and drop stale temp files they hold; returns the rows settled."""
        settled: list[int] = []
        for target in TARGETS:
            if self.home.journal.pending(SUBSYSTEM, target):
                try:
                    lock = self._locked(target)
                except Refusal:
                    continue
                with lock:
                    settled += self._settle(target)
        folders = set()
        for target in TARGETS:
            with contextlib.suppress(UnsafePath):
                folders.add(self.home.links.resolve(self.path(target)).parent)
        for folder in folders:
            self.temps_removed += remove_stale_temps(folder, TMP_PREFIX, self._kept_elsewhere)
        return settled

    def holds_nothing_new(self, path: Path) -> bool:
        """Whether ``path`` is a temp file of ours whose bytes a memory file or the journal holds:
        ``reconcile`` removes such a leftover once it is an hour old (doctor says so)."""
        if not (path.name.startswith(TMP_PREFIX) and path.name.endswith(".tmp")):
            return False
        try:
            return path.stat().st_size <= TEMP_MAX_BYTES and self._kept_elsewhere(read_regular(path))
        except (OSError, UnsafePath):
            return False

    def _kept_elsewhere(self, data: bytes) -> bool:
        """True when a memory file or a journal row already holds these bytes (a leftover temp adds nothing)."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return any(self.read(t).raw == text for t in TARGETS) or self.home.journal.holds_file(SUBSYSTEM, text)

    def _settle(
        self, target: str, state: FileState | None = None, within: sqlite3.Connection | None = None
    ) -> list[int]:
        """With the lock held: a ``pending`` row here belongs to a writer that died mid-write.

        Its change is on disk when the file holds exactly what the row meant to write, or
        still shows in a file Hermes wrote over it (``_written_over``): rolled forward,
        ``done``; otherwise it never got there (``abandoned``).
        ``state``: the file as read under this lock (else it is read here); ``within``: the
        journal transaction the caller has open (``Journal.pending``).
        """
        journal = self.home.journal
        rows = journal.pending(SUBSYSTEM, target, within=within)
        if not rows:
            return []
        state = state or self.read(target)
        readable = state.error is None and state.raw is not None
        matched = {row.id for row in rows if readable and _left_file(row.detail, state.raw)}
        # (rebuilt only when the file is not the one they name: a plain crash after the rename needs none)
        written_over = None if len(matched) == len(rows) else self._written_over(target, rows, state, within)
        for row in rows:
            left = state.raw if row.id in matched else written_over
            if left is not None:
                # The file it left, unless it is rebuilt from an earlier one: its writer died before keeping
                # it, and before releasing the snapshot the one before was rebuilt from.
                if row.detail.get("depth"):
                    journal.commit(row.id)
                else:
                    journal.commit(row.id, snapshot=left, release=self._releasable(target, keeping=left))
            else:
                journal.abandon(row.id, "interrupted before the file was written; found on the next open")
        return [row.id for row in rows]

    def _written_over(
        self, target: str, rows: list[JournalEntry], state: FileState, within: sqlite3.Connection | None
    ) -> str | None:
        """The file a dead writer's ``rows`` left, when another writer wrote over it before they were
        settled (Hermes takes our lock but settles none of our rows) and their change still shows:
        each entry they wrote is in the file and each they removed is gone. None when it does not
        (the write never reached the file), or when the rows do not rebuild the exact file they name.
        (Hermes making the very same change meanwhile would read as ours: the entries are the same.)"""
        shas = {row.detail.get("file_sha") for row in rows}
        if state.error is not None or state.raw is None or len(shas) != 1:
            return None
        last = left_of(within or self.home.journal.connection(), target)
        earlier = read_as_hermes(self._file_text(target, last)) if last else []
        entries = replay(earlier, [(row.before, row.after, row.detail.get("index")) for row in rows])
        if entries is None:
            return None
        text = serialize(entries)
        if content_hash(text) not in shas:
            return None
        now, wrote = set(state.entries), {row.after for row in rows if row.after is not None}
        gone = {row.before for row in rows if row.before is not None} - set(entries)
        return text if (wrote or gone) and wrote <= now and not gone & now else None

    # -- journal: history, provenance, undo, external edits ------------------------
    def history(self, target: str | None = None, limit: int = 50) -> list[JournalEntry]:
        """Memory journal rows, newest first."""
        return self.home.journal.query(subsystem=SUBSYSTEM, target=target, limit=limit)

    def provenance(self, target: str, entry_text: str) -> list[JournalEntry]:
        """The journal rows that wrote this exact entry (newest first), external edits included.

        ``history.origin`` goes further: Hermes's own tool calls, or "present before".
        """
        return self.home.journal.writers_of(SUBSYSTEM, target, entry_text)

    @cached_property
    def archive_writes(self) -> ArchiveWrites:
        """The memory writes Hermes's tool calls in state.db record (this process's cache)."""
        return ArchiveWrites(self.home)

    def undo(self, event_id: Any, actor: str = "user") -> dict[str, Any]:
        """Apply the inverse of one journal event through the normal guards (see ``history.undo``)."""
        from .history import undo

        return undo(self, event_id, actor)

    def record_external_change(self, target: str) -> bool:
        """Catch up with the file on disk: journal what no workbench process journaled, and
        announce (``MemoryChanged``) any content this process has not seen yet.

        The TUI's file watcher calls this, so a write by Hermes, an editor or another
        workbench process reaches the screens; every write also journals outside edits
        first, under the lock, so they are journaled even when nobody was watching.
        Returns whether a change was announced.
        """
        self._check_target_or_raise(target)
        if self.home.read_only:
            return False
        left = left_of(self.home.journal.connection(), target)
        if left is None and self._first_look_at_nothing(target):
            return False
        if left is not None and left.sha == content_hash("") and not self.path(target).exists():
            return False  # still no file: nothing to catch up, and no lock file to leave behind
        if left is not None and left.sha != content_hash(""):
            self._wait_out_rewrite(target)
        try:
            lock = self._locked(target)
        except Refusal:
            return False
        with lock:
            self._settle(target)
            state = self.read(target)
            event = self._journal_external(target, state, left_of(self.home.journal.connection(), target))
            seen = state.raw == self._seen.get(target) and state.bom == self._seen_bom.get(target, state.bom)
            if event is None and (state.error or seen):
                return False
            self._seen[target], self._seen_bom[target] = state.raw, state.bom
            if event is None:  # another workbench process wrote it (its row names this file), or a reformat
                last = self._last_row(target)
                if last is not None and not _left_file(last.detail, state.raw):
                    last = None  # same entries, other bytes (line endings, blank lines): nobody's write to credit
                event = MemoryChanged(
                    actor=last.actor if last else "external",
                    session_id=last.session_id if last else None,
                    journal_id=last.id if last else None,
                    target=target,
                    action=last.action if last else "external",
                    after=state.raw,
                )
        self.home.bus.publish(event)
        return True

    def look_for_credit(self, target: str) -> bool:
        """The look a change of state.db alone calls for (the TUI's watcher): ``record_external_change`` while
        an outside row of ``target`` may still be credited to the Hermes call stored since (``credit``), and
        a memory tool result was stored since this process last looked so (``newest_result``), else nothing.
        Hermes writes state.db after every model call of a turn, and each such look took the memory lock, so
        Hermes's own write waited, and read its calls again (100 ms a look in a long session): for ten
        minutes after a note typed by hand, which no call will ever be stored for."""
        if self.home.read_only or not self.home.journal.exists():
            return False
        if not awaiting(self.home.journal.connection(), target, self.home.clock.now()):
            return False
        newest = self.archive_writes.newest_result()
        if newest is not None and newest == self._results_looked.get(target):
            return False
        looked = self.record_external_change(target)
        self._results_looked[target] = newest
        return looked

    def _wait_out_rewrite(self, target: str) -> None:
        """A file that held entries and was emptied just now may be rewritten in place (``cmd > MEMORY.md``,
        an editor that truncates first): give its writer up to ``REWRITE_GRACE_S`` to fill it, so that
        only what really changed is journaled, not every entry removed and added back. A file still
        empty after that was emptied, and is journaled so."""
        deadline = time.monotonic() + REWRITE_GRACE_S
        while time.monotonic() < deadline:
            try:
                info = self.path(target).stat()
            except OSError:
                return
            if info.st_size or time.time() - info.st_mtime > REWRITE_GRACE_S:
                return
            time.sleep(0.05)

    def _first_look_at_nothing(self, target: str) -> bool:
        """A first look at a store with no entries (no file yet, or an empty one): journal that as an
        empty ``seen`` baseline, so the entries Hermes writes next are outside adds, not "present before",
        and take no lock (none is needed to note an absence: no lock file left behind). False when the
        file holds entries (or cannot be read): those are seen under the lock. Hermes's calls are weighed
        before the file is read: with no lock, one stored after that read may have written it since."""
        weighed = self.archive_writes.newest_result()
        state = self.read(target)
        if state.error or state.entries:
            return False
        with self.home.journal.transaction():  # another process's first look or write may come first
            if left_of(self.home.journal.connection(), target) is None:
                self._journal_first_look(target, state, weighed)
        return True

    def journaled_entries(self, target: str) -> list[str] | None:
        """The entries of the file as the journal last left it (None: never journaled): what differs on
        disk was written outside since and is not journaled yet (a read-only look, such as ``memory show``)."""
        if not self.home.journal.exists():
            return None
        left = left_of(self.home.journal.connection(), target)
        text = None if left is None else self._left_text(target, left)
        return None if text is None else read_as_hermes(text)

    def size(self, target: str) -> int:
        """The file's size in bytes (0 when it is not there)."""
        try:
            return self.path(target).stat().st_size
        except OSError:
            return 0

    def changed_at(self, target: str) -> float | None:
        """When the file last changed on disk (its mtime), if it is there."""
        try:
            return self.path(target).stat().st_mtime
        except OSError:
            return None

    def catch_up(self, targets: Sequence[str] = TARGETS) -> None:
        """Journal what changed outside in ``targets`` since a workbench process last looked (Hermes,
        an editor), as the TUI's watcher does: for a command that reads the journal with no TUI open."""
        for target in targets:
            self.record_external_change(target)

    @cached_property
    def _wrote(self) -> dict[str, _Wrote]:
        """Per target, what this process's last write of it left the journal as (``_apply``)."""
        return {}

    @cached_property
    def _calls_weighed(self) -> dict[str, tuple]:
        """Per target, state.db's stamp when this process last read Hermes's calls for it (``_replay``)."""
        return {}

    @cached_property
    def _results_looked(self) -> dict[str, int | None]:
        """Per target, the newest memory tool result when this process last looked for a credit."""
        return {}

    @cached_property
    def _seen(self) -> dict[str, str]:
        """Per target, the file content this process last wrote or announced."""
        return {}

    @cached_property
    def _seen_bom(self) -> dict[str, bool]:
        """Per target, whether that content started with a byte-order mark (``FileState.raw`` drops it, and
        a change of the mark alone, a repair in another process, must still reach the screens)."""
        return {}

    def _journal_first_look(self, target: str, state: FileState, weighed: int | None) -> None:
        """The first time any workbench process sees a file: its entries recorded as ``seen`` (present before
        that moment), not as an edit, with the newest memory tool result stored by then (``weighed``, as a
        look's ``calls_read``). The file already holds what every call stored by then wrote, so no later look
        replays those calls on it: replayed, Hermes's add of a note it reworded before the first look wrote
        the old wording again, and the look after journaled an outside edit removing it."""
        detail: dict[str, Any] = {"file_sha": state.sha, "entries": state.entries}
        if weighed is not None:
            detail["calls_read"] = weighed
        self.home.journal.append(SUBSYSTEM, "seen", target, actor="external", snapshot=state.raw, detail=detail)

    def _journal_external(
        self, target: str, state: FileState, left: Left | None, *, looking: bool = True
    ) -> MemoryChanged | None:
        """With the lock held: journal, entry by entry, how the file differs from what the journal last left:
        first each Hermes memory call stored since, replayed on that file (``replay``: the agent's rows), then
        what the replay does not explain, as ``external`` rows.

        The first time any workbench process sees a file holding entries, that is its baseline
        (``_journal_first_look``, under the lock: a call stored by then wrote the file first); a store
        with none is seen without the lock (``_first_look_at_nothing``; a write's own rows are its baseline).

        Hermes's calls are read for a file as the journal left it only on a look (``looking``), never
        under a write: that read costs milliseconds in an archive the agent is busy in, and a write
        must not pay it each time for what only a look has to find.
        """
        if state.error:
            return None
        if left is None:
            if state.entries:
                self._journal_first_look(target, state, self.archive_writes.newest_result())
            return None
        same = left.sha == state.sha
        if same and not (looking and self._calls_stored_since(target, left)):
            return None
        before = state.raw if same else self._file_text(target, left)
        # as a person and Hermes read both (line endings translated): a file saved with CRLF
        # changes no entry, rather than merging them all into one
        earlier, later = read_as_hermes(before), read_as_hermes(state.raw)
        steps, replayed, read_to, credits = self._replay(target, left, earlier)
        changes = entry_changes(replayed, later)  # what the replay of Hermes's calls does not explain
        now = self.home.clock.now()
        credited = credit(self.home.journal, target, credits, now)
        if not changes and not steps:
            return self._credited(target, credited, state)
        rows = replaying.rows_of(steps, now) + self._outside_rows(target, left, replayed, later, changes, now)
        rows[-1]["detail"]["file_sha"] = state.sha
        if read_to is not None:
            rows[-1]["detail"]["calls_read"] = read_to
        ids = self.home.journal.append_all(
            SUBSYSTEM,
            target,
            rows,
            actor="external",
            snapshot=state.raw,
            release=self._releasable(target, keeping=state.raw),
        )
        return MemoryChanged(
            actor="external", journal_id=ids[-1], target=target, action="external", before=before, after=state.raw
        )

    def _calls_stored_since(self, target: str, left: Left) -> bool:
        """Whether state.db changed since the calls the journal's last row could weigh, and since this
        process last read them (a stat, no read): Hermes may have added an entry and taken it out again,
        leaving the file as it was."""
        stamp = database_stamp(self.home.state_db_path)
        if stamp == self._calls_weighed.get(target):
            return False
        return any(s[2] / 1e9 > left.at - STAMPED_BEFORE_S for s in stamp if s is not None)

    def _replay(
        self, target: str, left: Left, earlier: list[str]
    ) -> tuple[list[replaying.Step], list[str], int | None, list[replaying.Credit]]:
        """Hermes's memory calls since the journal's last row that no look weighed yet, replayed on
        ``earlier`` (``replay``): their steps, the entries they leave, how far state.db was read, and the
        outside rows those calls made (``unweighed``)."""
        stamp = self.archive_writes.stamp()
        other = left_of(self.home.journal.connection(), next(t for t in TARGETS if t != target))
        calls, read_to = self.archive_writes.since(target, left.at, other.at if other else None)
        self._calls_weighed[target] = stamp  # (what a look at an unchanged file need not read again)
        if not calls:
            return [], earlier, read_to, []
        fresh, born, credits = replaying.unweighed(self.home.journal.connection(), target, calls, earlier)
        steps, replayed = replaying.replay(earlier, fresh, born)
        return steps, replayed, read_to, credits

    def _credited(self, target: str, credited: list[int], state: FileState) -> MemoryChanged | None:
        """The change the screens hear of when a look credited outside rows to Hermes's calls and journaled
        nothing new: the newest row credited, now the agent's (None when none was)."""
        row = self.home.journal.get(credited[-1]) if credited else None
        if row is None:
            return None
        return MemoryChanged(
            actor=row.actor,
            session_id=row.session_id,
            journal_id=row.id,
            target=target,
            action="credit",
            before=state.raw,
            after=state.raw,
        )

    def _outside_rows(
        self, target: str, left: Left, earlier: list[str], later: list[str], changes: list, now: float
    ) -> list[dict[str, Any]]:
        """The rows of an outside edit: ``changes``, how ``later`` differs from ``earlier``, entry by entry."""
        if not changes:
            return []
        # each removed or added entry's slot between the entries both keep (an index counts the
        # other list's entries too): an add in a remove's slot may be its rewrite (``approvals.outside``)
        slots = {"remove": kept_before(earlier, set(later)), "add": kept_before(later, set(earlier))}
        rows: list[dict[str, Any]] = [
            {"action": action, "before": old, "after": new, "detail": {"index": index}}
            for action, old, new, index in changes
        ]
        for row in rows:
            if row["action"] in slots:
                row["detail"]["slot"] = slots[row["action"]].get(
                    row["before"] if row["action"] == "remove" else row["after"]
                )
        for row in rows:
            if row["action"] == "remove":
                index = row["detail"]["index"]
                row["detail"]["follows"] = [follows_key(e) for e in preceding(earlier, index)]
                row["detail"]["precedes"] = [follows_key(e) for e in succeeding(earlier, index)]
        if len(rows) > 1:  # one edit (a file emptied, a paste of several entries): one Timeline group, one revert
            edit = secrets.token_hex(4)
            for row in rows:
                row["detail"]["edit"] = edit
        at = self._edited_at(target, left, now)
        for row in rows:
            row["at"] = at
            if at < now - 1:  # found later than it was made: the rows say when it was seen, and that the
                row["detail"].update(seen_at=now, not_before=left.at)  # change came after the journal's last row
        return rows

    def _edited_at(self, target: str, left: Left, now: float) -> float:
        """When an outside edit was made, as near as the file tells: its mtime (the last edit's,
        when several are found at once), never before the journal's last row about it nor
        after ``now`` (a copied or touched file's mtime can be anything)."""
        mtime = self.changed_at(target)
        return now if mtime is None else min(now, max(mtime, left.at))

    def _file_text(self, target: str, left: Left) -> str:
        """The text of the file the journal last left ``target`` as (for diffing an outside edit)."""
        text = self._left_text(target, left)
        if text is None:  # a journal damaged by hand: diff from nothing rather than fail the write
            log.warning("memory journal: cannot rebuild the %s file row %s left", target, left.id)
        return text or ""

    def _left_text(self, target: str, left: Left) -> str | None:
        """That text, or None when a journal damaged by hand cannot rebuild it."""
        if left.text is not None:
            return left.text
        seen = self._seen.get(target)
        if seen is not None and content_hash(seen) == left.sha:
            return seen
        journal = self.home.journal
        return rebuild(journal.connection(), target, left, journal.file_text)

    def _releasable(
        self, target: str, keeping: str, *, mine: Left | None = None, base: str | None = None
    ) -> tuple[str, ...]:
        """The snapshot ``target``'s last file is rebuilt from, once a write keeps ``keeping`` instead:
        none when that is the same text, or when the other target still builds on it. ``base``: that
        snapshot's hash for ``mine``, the file the journal last left, when the caller knows both (a
        write of this process on its own last one): the rows back to it are then not read again."""
        conn = self.home.journal.connection()
        other_target = next(t for t in TARGETS if t != target)
        if base is None or mine is None:
            mine = left_of(conn, target)
            if mine is None:
                return ()
            base = base_of(conn, target, mine)
        other = left_of(conn, other_target)
        if base == content_hash(keeping) or (other and base == base_of(conn, other_target, other)):
            return ()
        return (base,)

    def _last_row(self, target: str) -> JournalEntry | None:
        """The newest journaled write (from any workbench process) that recorded the file it left."""
        left = left_of(self.home.journal.connection(), target)
        return self.home.journal.get(left.id) if left else None
