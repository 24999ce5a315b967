"""The audit ledger: ``skills/.curator_ledger.jsonl`` plus content-addressed blobs.

Each row names the files a change touched, with their SHA-256 before and after
(unchanged files dropped). Content that a change removed is saved first as
``<home>/.curator_backups/blobs/<sha256>``, so ``rollback`` can put back exactly what
that change altered. Paths are stored relative to the home, so a moved home still
rolls back; absolute paths (as a Hermes agent may write) are accepted when they lie
inside the home. A row may only name files under ``skills/`` (or the cron jobs file),
checked after resolving links: a tampered row naming ``MEMORY.md`` or ``config.yaml``
is refused before anything is touched.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..clock import Clock, shown_time
from ..fileio import LinkPolicy, UnsafePath, append_bytes, contained, json_bytes, read_regular
from ..skills.usage import iso
from ..skills.validation import SkillError
from ..textsafety import cells, cut, folder_beside, quoted, visible

SKIP_FILES = (".lock", ".tmp")
CRON_JOBS = "cron/jobs.json"  # the one file outside skills/ a ledger row may name
_SHA256 = re.compile(r"[0-9a-f]{64}")


SKILL_CELLS = 32  # a skill name wider than this is cut in a ledger listing's column
EMPTY = (
    "The ledger is empty. It lists the changes the workbench made in skills/ (curator passes, reviews, skill "
    "writes), which can be rolled back; changes Hermes or an editor made are not in it (the Timeline has "
    "those it saw)."
)
"""Both skins' empty ledger: on a home Hermes's own curator had archived skills in, "The ledger is empty."
alone left the user looking for those archives in the wrong place."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def columns(entries: Iterable[LedgerEntry]) -> list[tuple[str, str, str, str]]:
    """Each entry's (time, action, skill, actor), the first three padded to the widest shown (in cells), so a
    listing's columns line up in either skin (a skill name is cut to ``SKILL_CELLS``; one the listing
    shows in two folders comes with its folder, by ``skill_label``); a control character or lone
    surrogate is padded as the symbol it is shown as."""
    entries = list(entries)
    rows = [
        (visible(e.when), visible(e.action), _label(e.skill, folder), visible(e.shown_actor))
        for e, folder in zip(entries, _named_folders(entries), strict=True)
    ]
    widths = [max((cells(row[i]) for row in rows), default=0) for i in range(3)]

    def padded(text: str, i: int) -> str:  # by cells: a CJK name takes two a character
        return text + " " * (widths[i] - cells(text))

    return [(padded(when, 0), padded(action, 1), padded(skill, 2), actor) for when, action, skill, actor in rows]


def ledger_line(entry: LedgerEntry, shown: tuple[str, str, str, str]) -> str:
    """An entry on one line as both skins list it, its ``columns`` ``shown``: the id first, as a refused
    rollback names it."""
    when, action, skill, actor = shown
    return f"{entry.id}  {when}  {action}  {skill}  by {actor}"


def one_line_each(entries: list[LedgerEntry], shown: list[tuple[str, str, str, str]], width: int) -> bool:
    """Whether every entry, its ``columns`` ``shown``, fits ``width`` cells on one line (``ledger_line``); else
    both skins give every entry alike two lines, its id, time and action, then its skill and who: at 60 and
    80 columns a row of 89 cells wrapped into what read as the next row."""
    return all(cells(visible(ledger_line(e, row))) <= width for e, row in zip(entries, shown, strict=True))


def shortened(entries: Iterable[LedgerEntry]) -> list[str | None]:
    """Each entry's skill as ``skill_label`` names it whole where its column (``columns``) shortens or
    cuts it, else None: a skin with a line to spare under the row shows it there, so the folder, a path a
    user may copy, is never read cut."""
    from ..skills.library import skill_label  # (the library reads the ledger)

    entries = list(entries)
    shown: list[str | None] = []
    for entry, folder in zip(entries, _named_folders(entries), strict=True):
        whole = visible(skill_label(entry.skill, folder))
        shown.append(None if _label(entry.skill, folder) == whole else whole)
    return shown


def _named_folders(entries: list[LedgerEntry]) -> list[str | None]:
    """Each entry's folder where its label names one: the listing shows its skill in two folders."""
    folders: dict[str, set[str]] = {}
    for entry in entries:  # (a support file's entry names no SKILL.md, so no folder: not another one)
        folders.setdefault(entry.skill, set()).update(filter(None, [entry.folder]))
    return [e.folder if len(folders[e.skill]) > 1 else None for e in entries]


def _label(skill: str, folder: str | None) -> str:
    """A skill as its ledger column names it (``skill_label``), in ``SKILL_CELLS``: a folder that would not fit
    first gives way where it repeats the name (``pdf-extract (documents/…)``, ``pdf-extract (.archive)``, then an
    archived copy's marker, ``pdf-extract (…-20261207091500)``), as the Skills table's does, so the part that
    tells two folders apart stays in view; then the label is cut with …."""
    from ..skills.library import skill_label  # (the library reads the ledger)

    label = skill_label(skill, folder)
    for shorter in (folder_beside(folder, skill, archive=True), folder_beside(folder, skill)) if folder else ():
        if len(visible(label)) <= SKILL_CELLS:
            break
        label = skill_label(skill, shorter)
    return cut(visible(label), SKILL_CELLS)


@dataclass(frozen=True)
class FileRef:
    path: str
    sha256: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "sha256": self.sha256}


@dataclass(frozen=True)
class LedgerEntry:
    id: str
    ts: str
    actor: str
    action: str
    skill: str
    evidence: dict[str, Any] = field(default_factory=dict)
    before: tuple[FileRef, ...] = ()
    after: tuple[FileRef, ...] = ()
    journal_actor: str | None = None  # the actor of the journal row it names (never written to the file)

    @property
    def when(self) -> str:
        """Its time as listings show it: ``2026-12-04 18:07`` (local time)."""
        return shown_time(self.ts) or self.ts[:16].replace("T", " ")

    @property
    def folder(self) -> str | None:
        """The skill's folder under skills/ as the change found it (its SKILL.md before, else after); of a
        change to several skills' (a consolidation: the absorbed ones and the umbrella), the one named for
        the skill, an archived copy's stamp aside: the umbrella's was listed as an absorbed skill's."""
        folders = [
            ref.path[len("skills/") : -len("/SKILL.md")]
            for ref in (*self.before, *self.after)
            if ref.path.startswith("skills/") and ref.path.endswith("/SKILL.md")
        ]
        own = re.compile(re.escape(self.skill) + r"(-\d{14})?")
        return next((f for f in folders if own.fullmatch(f.rpartition("/")[2])), folders[0] if folders else None)

    @property
    def shown_actor(self) -> str:
        """Who made the change in the Timeline's words, the ledger's (Hermes's) in brackets where they
        differ: a background review is ``curator`` in Hermes's ledger, ``review`` in the journal."""
        if self.journal_actor and self.journal_actor != self.actor:
            return f"{self.journal_actor} (ledger: {self.actor})"
        return self.actor

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "ts": self.ts,
            "actor": self.actor,
            "action": self.action,
            "skill": self.skill,
            "evidence": self.evidence,
            "before": [f.to_dict() for f in self.before],
            "after": [f.to_dict() for f in self.after],
        }

    @classmethod
    def from_dict(cls, row: Any) -> LedgerEntry:
        """A row as written by us or Hermes; ``ValueError`` for one of the wrong shape (a hand edit)."""
        if not isinstance(row, dict) or not isinstance(row.get("id"), str) or not row["id"]:
            raise ValueError("not a ledger row")
        evidence = row.get("evidence") or {}
        if not isinstance(evidence, dict):
            raise ValueError("evidence is not an object")
        return cls(
            id=row["id"],
            ts=_text(row.get("ts")),
            actor=_text(row.get("actor")),
            action=_text(row.get("action")),
            skill=_text(row.get("skill")),
            evidence=evidence,
            before=_refs(row.get("before")),
            after=_refs(row.get("after")),
        )


def _text(value: Any) -> str:
    if value is None or isinstance(value, (str, int)) and not isinstance(value, bool):
        return "" if value is None else str(value)
    raise ValueError("a text field holds a list, an object or a flag")


def _refs(value: Any) -> tuple[FileRef, ...]:
    """File references: each a path and a SHA-256 in hex (which is also what keeps a blob name a file name)."""
    if not value:
        return ()
    if not isinstance(value, list):
        raise ValueError("file references are not a list")
    refs = []
    for ref in value:
        if (
            not isinstance(ref, dict)
            or not isinstance(ref.get("path"), str)
            or not _SHA256.fullmatch(str(ref.get("sha256")))
        ):
            raise ValueError("a file reference is not a path and a SHA-256")
        refs.append(FileRef(ref["path"], ref["sha256"]))
    return tuple(refs)


class Ledger:
    def __init__(self, home_root: Path, skills_dir: Path, clock: Clock, links: LinkPolicy):
        self.root = home_root
        self.skills_dir = skills_dir
        self.links = links
        self.path = skills_dir / ".curator_ledger.jsonl"
        self.blobs_dir = home_root / ".curator_backups" / "blobs"
        self._lock = skills_dir / ".locks" / "ledger"
        self.clock = clock

    # -- files ----------------------------------------------------------------------
    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def resolve(self, rel: str) -> Path:
        """The home path of a ledger path (ours are home-relative; Hermes may write absolute ones).

        Refuses, before anything is touched, a path outside ``skills/`` and the cron jobs
        file once links are resolved, and one behind a link the policy does not follow.
        """
        try:
            spellable = b"\0" not in os.fsencode(rel)
        except UnicodeEncodeError:  # a lone surrogate no file name can spell (\udc80-\udcff spell bytes)
            spellable = False
        if not spellable:  # (a hand edit)
            raise SkillError(
                f"Ledger path '{rel}' is not a file name this system can hold; this row may have been edited by "
                "hand. Nothing was changed."
            )
        path = Path(rel)
        for base in (self.root, Path(os.path.realpath(self.root))):
            if path.is_absolute() and path.is_relative_to(base):
                path = path.relative_to(base)
        allowed = f"Ledger rows may only name files under {self.skills_dir} or {self.root / CRON_JOBS}"
        if path.is_absolute() or ".." in path.parts:
            raise SkillError(
                f"Ledger path '{rel}' is outside the home; refusing to touch it. {allowed}. Nothing was changed."
            )
        home_path = self.root / path
        try:
            real = self.links.resolve(home_path)
        except UnsafePath as exc:
            raise SkillError(f"Ledger path '{rel}': {exc.message}") from None
        if not (contained(real, self.skills_dir) or str(real) == os.path.realpath(self.root / CRON_JOBS)):
            raise SkillError(
                f"Ledger path '{rel}' is outside skills/ (it resolves to {real}); refusing to touch "
                f"it. {allowed}; this row may have been edited by hand. Nothing was changed."
            )
        return home_path

    def snapshot(self, roots: Iterable[Path]) -> dict[str, bytes]:
        """Home-relative path -> content of every regular file under ``roots`` (symlinks skipped)."""
        files: dict[str, bytes] = {}
        for root in roots:
            if root.is_symlink():
                continue
            if root.is_file():
                self._take(files, root)
                continue
            for folder, dirs, names in os.walk(root):
                dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
                for name in names:
                    path = Path(folder, name)
                    if not name.endswith(SKIP_FILES) and not path.is_symlink():
                        self._take(files, path)
        return files

    def _take(self, files: dict[str, bytes], path: Path) -> None:
        try:
            files[self.rel(path)] = read_regular(self.links.resolve(path))
        except UnsafePath:  # a FIFO or a device has no content to keep
            pass

    @staticmethod
    def hashes(files: dict[str, bytes]) -> dict[str, str]:
        return {path: sha256(data) for path, data in files.items()}

    def save_blobs(self, files: dict[str, bytes]) -> None:
        """Store each content under its hash (existing blobs are kept); raises if one cannot be saved."""
        for data in files.values():
            blob = self.blobs_dir / sha256(data)
            if not blob.exists():
                self.links.write_bytes(blob, data)

    def blob(self, digest: str) -> bytes | None:
        path = self.blobs_dir / digest
        try:
            data = self.links.read_bytes(path)
        except (OSError, UnsafePath):
            return None
        return data if sha256(data) == digest else None

    # -- rows -----------------------------------------------------------------------
    def append(
        self,
        *,
        actor: str,
        action: str,
        skill: str,
        before: dict[str, bytes],
        after: dict[str, bytes],
        evidence: dict[str, Any] | None = None,
    ) -> LedgerEntry:
        """Record the delta between two snapshots (paths whose content did not change are dropped)."""
        before_refs, after_refs = self.hashes(before), self.hashes(after)
        changed = {p for p in before_refs.keys() | after_refs.keys() if before_refs.get(p) != after_refs.get(p)}
        entry = LedgerEntry(
            id=uuid.uuid4().hex[:12],
            ts=iso(self.clock.now()),
            actor=actor,
            action=action,
            skill=skill,
            evidence=evidence or {},
            before=tuple(FileRef(p, before_refs[p]) for p in sorted(changed & before_refs.keys())),
            after=tuple(FileRef(p, after_refs[p]) for p in sorted(changed & after_refs.keys())),
        )
        line = json_bytes(entry.to_dict(), indent=None)  # (a usage record read with a lone surrogate keeps it)
        with self.links.lock(self._lock):
            append_bytes(self.links.resolve_file(self.path), line)
        return entry

    def retract(self, entry_id: str) -> None:
        """Remove the row just appended for a change that was then rolled back (only if it is the last one)."""
        with self.links.lock(self._lock):
            real = self.links.resolve_file(self.path)
            data = read_regular(real)
            lines = data.splitlines(keepends=True)
            if lines and json.loads(lines[-1]).get("id") == entry_id:
                os.truncate(real, len(data) - len(lines[-1]))

    def entries(self) -> list[LedgerEntry]:
        """Every readable row, oldest first (a torn or foreign line is skipped)."""
        try:
            lines = self.links.read_text(self.path).splitlines()
        except (OSError, UnicodeDecodeError, UnsafePath):
            return []
        rows = []
        for line in lines:
            try:
                rows.append(LedgerEntry.from_dict(json.loads(line)))
            except (ValueError, RecursionError):  # not JSON, or not a row (JSONDecodeError is a ValueError)
                continue
        return rows

    def get(self, entry_id: str) -> LedgerEntry:
        for entry in self.entries():
            if entry.id == entry_id:
                return entry
        raise SkillError(f"No ledger entry with id {quoted(entry_id)}. List them with `workbench curator ledger`.")

    # -- rollback -------------------------------------------------------------------
    @staticmethod
    def _undone(rows: list[LedgerEntry]) -> set[str]:
        """Ids of the entries of ``rows`` a rollback among them undid."""
        return {e.evidence["rolled_back"] for e in rows if isinstance(e.evidence.get("rolled_back"), str)}

    def _live_rollbacks_of(self, entry_id: str) -> list[str]:
        """Ids of the rollbacks of ``entry_id`` that were not themselves rolled back."""
        rows = self.entries()
        undone = self._undone(rows)
        return [e.id for e in rows if e.evidence.get("rolled_back") == entry_id and e.id not in undone]

    def _later_writers(self, entry: LedgerEntry, paths: list[str]) -> tuple[list[str], list[str]]:
        """(ids of the entries after ``entry``, not rolled back, that left one of ``paths`` as it is now:
        to roll back first; the paths none left so, changed outside the ledger)."""
        rows = self.entries()
        undone = self._undone(rows)
        ids = [e.id for e in rows]
        later = [e for e in rows[ids.index(entry.id) + 1 if entry.id in ids else len(rows) :] if e.id not in undone]
        now = {}
        for path in paths:
            data = self._current(self.resolve(path))
            now[path] = None if data is None else sha256(data)
        writers: dict[str, str] = {}  # path -> the newest later entry that left it as it is
        for e in later:
            left = {ref.path: ref.sha256 for ref in e.after}
            for path in paths:
                if left.get(path, None if path in {ref.path for ref in e.before} else "") == now[path]:
                    writers[path] = e.id
        return list(dict.fromkeys(writers.values())), [path for path in paths if path not in writers]

    def _current(self, path: Path) -> bytes | None:
        """A file's content now, None when it is missing, a link or not a regular file."""
        if path.is_symlink():
            return None
        try:
            return self.links.read_bytes(path)
        except (OSError, UnsafePath):
            return None

    def _added_to_made(self, entry: LedgerEntry) -> list[str]:
        """Files added since into a skill folder ``entry`` made (a create's, a consolidation's umbrella):
        rolling it back removes its SKILL.md and would leave them in a folder that is no skill. Those it was
        written beside (a SKILL.md put back where its support files stayed, ``beside``) were there before."""
        before, beside = {ref.path for ref in entry.before}, set(entry.evidence.get("beside", ()))
        made = {
            str(Path(ref.path).parent)
            for ref in entry.after
            if Path(ref.path).name == "SKILL.md" and ref.path not in before
        }
        kept = {ref.path for ref in entry.after} | beside
        present = self.snapshot(self.resolve(folder) for folder in sorted(made))
        return sorted(path for path in present if path not in kept)

    def _as_before(self, entry: LedgerEntry) -> bool:
        """Whether ``entry``'s files are now as they were before it: each it changed holds its earlier
        content again, and each it added is gone (a skill it archived restored by hand)."""
        before = {ref.path: ref.sha256 for ref in entry.before}
        for path in before.keys() | {ref.path for ref in entry.after}:
            data = self._current(self.resolve(path))
            if (None if data is None else sha256(data)) != before.get(path):
                return False
        return True

    def rollback_files(self, entry: LedgerEntry) -> list[str]:
        """What rolling ``entry`` back does, a file a line (``restore …``, ``remove …``); raises as
        ``rollback_plan`` does when it would be refused."""
        writes, deletes = self.rollback_plan(entry)
        return [f"restore {path}" for path in sorted(writes)] + [f"remove {path}" for path in sorted(deletes)]

    def rollback_plan(self, entry: LedgerEntry) -> tuple[dict[str, bytes], list[str]]:
        """(files to write back, files to delete) to undo ``entry``; fails closed without touching anything.

        The files the entry produced must still be exactly as it left them (otherwise a
        later change would be lost), and every earlier content must be available: from
        its blob, or from a file of the entry that still holds it (an archive is a move).
        """
        after = {ref.path: ref.sha256 for ref in entry.after}
        changed_since = []
        current: dict[str, bytes] = {}
        for ref in entry.after:
            path = self.resolve(ref.path)
            data = self._current(path)
            if data is None or sha256(data) != ref.sha256:
                changed_since.append(ref.path)
            else:
                current[ref.sha256] = data
        for ref in entry.before:
            path = self.resolve(ref.path)
            if ref.path not in after and path.exists() and sha256(self._current(path) or b"") != ref.sha256:
                changed_since.append(ref.path)
        changed_since += self._added_to_made(entry)
        undone = self._live_rollbacks_of(entry.id)
        if undone:  # (its files may read as it left them again: a later entry did the same, and is what to undo)
            again = [] if changed_since else self._later_writers(entry, sorted(after))[0]
            redo = (
                f"A later entry left its files as it did: roll back {', '.join(again)} instead."
                if again
                else f"To redo it, roll back {undone[-1]}."
            )
            raise SkillError(
                f"Ledger entry {entry.id} was already rolled back by {undone[-1]}; nothing was changed. {redo}",
                rolled_back_by=undone[-1],
                changed=changed_since,
                later=again,
            )
        if changed_since and self._as_before(entry):  # (restored by hand, say: rolling back later entries is wrong)
            later = self._later_writers(entry, sorted({ref.path for ref in entry.before}))[0]
            by = f" (by ledger entry {', '.join(later)})" if later else " (outside the ledger: Hermes, an editor)"
            raise SkillError(
                f"Ledger entry {entry.id} is undone already: its files are as they were before it{by}. "
                "Nothing to roll back; nothing was changed.",
                changed=changed_since,
                later=[],
            )
        if changed_since:
            later, outside = self._later_writers(entry, changed_since)
            advice = [f"Roll back the later entries first: {', '.join(later)}."] if later else []
            if outside:
                advice.append(
                    f"No later ledger entry left {', '.join(outside)} as it is: it was changed outside the "
                    "workbench (Hermes, an editor), which saved nothing of it to put back. To roll back anyway, "
                    "keep a copy of what you want from it, put it back as this entry left it (or remove it if "
                    "this entry added it), then retry."
                )
            raise SkillError(
                f"Cannot roll back ledger entry {entry.id}: these files changed after it, and rolling back "
                f"would lose that work: {', '.join(changed_since)}. {' '.join(advice)}",
                changed=changed_since,
                later=later,
            )
        writes: dict[str, bytes] = {}
        missing = []
        for ref in entry.before:
            data = self.blob(ref.sha256) or current.get(ref.sha256)
            if data is None:
                missing.append(ref.path)
            else:
                writes[ref.path] = data
        if missing:
            raise SkillError(
                f"Cannot roll back ledger entry {entry.id}: the saved content of {', '.join(missing)} "
                f"is missing from {self.blobs_dir}. Nothing was changed.",
                missing=missing,
            )
        deletes = [path for path in after if path not in writes]
        return writes, deletes
