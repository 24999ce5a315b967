"""Finding skills on disk: ``skills/[category/...]name/SKILL.md`` and ``skills/.archive/<dir>/``.

Scanning skips metadata and tool folders (Hermes's list), never descends into a
skill's own folders, and caches each parsed SKILL.md by (mtime, size) so rebuilding
the index of a large library only re-reads what changed.

Looking one skill up by name does not walk the library: each walk remembers its layout
(every folder it descended into, with that folder's mtime and which of its subfolders
hold a SKILL.md, plus the frontmatter names that differ from folder names), and a
lookup probes ``<folder>/<name>/SKILL.md`` in those folders only. A folder whose mtime
moved (or is too recent to trust, mtimes being coarse) is listed again; only when its
subfolders really changed is the library walked again. A lookup that finds nothing walks
too, so a miss is always the truth.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..fileio import TOOL_DIRS, LinkPolicy, UnsafePath
from .frontmatter import description_of, read_frontmatter
from .validation import content_size_problem, not_utf8

EXCLUDED_DIRS = TOOL_DIRS | {".github", ".hub", ".archive"}
ARCHIVE_DIR = ".archive"
RACY_NS = 2_000_000_000  # a folder changed this recently may change again without its mtime moving


@dataclass(frozen=True)
class Found:
    """A skill folder and its parsed SKILL.md."""

    name: str  # frontmatter name, else the folder name
    dir_name: str
    rel: str  # relative to skills/, POSIX ("devops/foo", ".archive/foo")
    category: str | None  # parent folders joined by "/", None for a flat skill
    path: Path
    meta: dict[str, Any]
    description: str
    archived: bool
    problem: str | None = None  # why its SKILL.md fails the rule writes pass (listed anyway, as Hermes does)
    too_long: bool = False  # that problem is only its length (it parses), so it is not called broken


@dataclass(frozen=True)
class _Folder:
    """One folder the last walk descended into."""

    mtime_ns: int
    subfolders: frozenset[str]  # every subfolder a walk would look at
    skills: frozenset[str]  # those of them that held a SKILL.md


@dataclass
class _Layout:
    """What the last walk saw: scanned folders (by parts), and frontmatter names that differ from folders."""

    folders: dict[tuple[str, ...], _Folder]
    aliases: dict[str, list[str]]  # frontmatter name -> rels, where it differs from the folder name
    linked: bool = False  # a folder link was followed: a folder may be reached by two paths (``under``)


def _skips(name: str) -> bool:
    return name in EXCLUDED_DIRS or name.startswith(".")


class Scanner:
    """Walks the library under the home's link policy: a refused link is never descended into or read."""

    def __init__(self, skills_dir: Path, links: LinkPolicy):
        self.skills_dir = skills_dir
        self.links = links
        self._cache: dict[Path, tuple[int, int, dict[str, Any], str, str | None, bool]] = {}
        self._lock = threading.Lock()
        self._layout: _Layout | None = None

    def _is_dir(self, entry: os.DirEntry | Path) -> bool:
        """A folder, or a link to one that the policy follows."""
        if not entry.is_dir():
            return False
        return not entry.is_symlink() or self.links.target_problem(os.path.realpath(entry)) is None

    def _subfolders(self, entries: list[os.DirEntry]) -> frozenset[str]:
        return frozenset(e.name for e in entries if not _skips(e.name) and self._is_dir(e))

    def parse(self, skill_md: Path) -> tuple[dict[str, Any], str, str | None, bool] | None:
        """Frontmatter, description, strict-rule problem (``read_frontmatter``, then the length a write
        allows) of a SKILL.md (or DESCRIPTION.md) and whether that problem is its length; None when
        missing or refused."""
        try:
            stat = skill_md.stat()
        except OSError:
            return None
        with self._lock:
            cached = self._cache.get(skill_md)
        if cached and cached[:2] == (stat.st_mtime_ns, stat.st_size):
            return cached[2:]
        try:
            data = self.links.read_bytes(skill_md, inside=skill_md.parent)
        except (OSError, UnsafePath):  # a link out of the skill's folder is never read
            return None
        too_long = False
        try:
            text = data.decode("utf-8")
            meta, body, problem = read_frontmatter(text)
            if problem is None:
                problem = content_size_problem(text, skill_md.name)
                too_long = problem is not None
        except UnicodeDecodeError as exc:  # listed, so it can be found and fixed; Hermes leaves it out
            meta, body, _ = read_frontmatter(data.decode("utf-8", errors="replace"))
            problem = f"{not_utf8(skill_md.name, exc)}: Hermes leaves it out of its skills; save it as UTF-8."
        description = description_of(meta, body)
        with self._lock:
            self._cache[skill_md] = (stat.st_mtime_ns, stat.st_size, meta, description, problem, too_long)
        return meta, description, problem, too_long

    def stamp(self, skill_md: Path) -> tuple[int, int] | None:
        """(mtime_ns, size) of a SKILL.md as the last walk that parsed it saw it; None if none did."""
        with self._lock:
            cached = self._cache.get(skill_md)
        return cached[:2] if cached else None

    def _found(self, folder: Path, parts: tuple[str, ...], archived: bool) -> Found | None:
        parsed = self.parse(folder / "SKILL.md")
        if parsed is None:
            return None
        meta, description, problem, too_long = parsed
        name = str(meta.get("name") or "").strip() or folder.name
        category = None if archived or len(parts) < 2 else "/".join(parts[:-1])
        rel = "/".join(((ARCHIVE_DIR,) if archived else ()) + parts)
        return Found(name, folder.name, rel, category, folder, meta, description, archived, problem, too_long)

    def _refused(self, folder: Path) -> bool:
        try:
            self.links.resolve(folder)
        except UnsafePath:
            return True
        return False

    def active(self) -> list[Found]:
        return self._walk()[0]

    def _walk(self) -> tuple[list[Found], _Layout]:
        """The active skills, sorted, and the layout they were found in (remembered for ``_fresh_layout``)."""
        if self._refused(self.skills_dir):  # skills/ is a link the policy does not follow: no library
            self._layout = _Layout({}, {})
            return [], self._layout
        found, folders, linked = self._descend(self.skills_dir, ())
        aliases: dict[str, list[str]] = {}
        for skill in found:
            if skill.name != skill.dir_name:
                aliases.setdefault(skill.name, []).append(skill.rel)
        self._layout = _Layout(folders, aliases, linked)
        return sorted(found, key=lambda f: f.rel), self._layout

    def _descend(
        self, start: Path, start_parts: tuple[str, ...]
    ) -> tuple[list[Found], dict[tuple[str, ...], _Folder], bool]:
        """The skills below ``start`` (``start_parts`` under skills/), the folders descended into, and
        whether a folder link was followed."""
        found: list[Found] = []
        folders: dict[tuple[str, ...], _Folder] = {}
        linked = False
        seen: set[str] = set()
        stack: list[tuple[Path, tuple[str, ...]]] = [(start, start_parts)]
        while stack:
            folder, parts = stack.pop()
            real = os.path.realpath(folder)
            if real in seen:  # a symlink loop
                continue
            seen.add(real)
            try:
                mtime = os.stat(folder).st_mtime_ns  # before listing: a change during the walk shows next time
                entries = sorted(os.scandir(folder), key=lambda e: e.name, reverse=True)
            except OSError:
                continue
            subfolders = self._subfolders(entries)
            linked = linked or any(e.name in subfolders and e.is_symlink() for e in entries)
            skills = frozenset(n for n in subfolders if os.path.isfile(folder / n / "SKILL.md"))
            folders[parts] = _Folder(mtime, subfolders, skills)
            for child_name in sorted(subfolders, reverse=True):
                child, child_parts = folder / child_name, parts + (child_name,)
                if child_name in skills:
                    skill = self._found(child, child_parts, archived=False)
                    if skill:
                        found.append(skill)
                else:
                    stack.append((child, child_parts))
        return found, folders, linked

    def under(self, rel: str) -> list[Found] | None:
        """The active skills whose folder holds ``rel`` (a path under skills/) or lies at or below it, as a
        walk lists them, without walking the library. None when only a walk can tell: ``rel`` is the
        whole library, no walk has run, or a folder link is on the way or was followed by the last walk
        (a folder reached by two paths is listed once, under whichever the walk took first)."""
        parts = tuple(rel.split("/"))
        if any(_skips(part) for part in parts):  # (the archive, a tool's folder): never walked
            return []
        layout = self._layout
        if not rel or layout is None or layout.linked or () not in layout.folders:
            return None
        folder = self.skills_dir
        for depth, part in enumerate(parts):
            if depth and os.path.isfile(folder / "SKILL.md"):  # a skill holding rel: a walk goes no deeper
                skill = self._found(folder, parts[:depth], archived=False)
                return [skill] if skill else []
            folder = folder / part
            if os.path.islink(folder):
                return None
        if not os.path.isdir(folder):
            return []
        if os.path.isfile(folder / "SKILL.md"):
            skill = self._found(folder, parts, archived=False)
            return [skill] if skill else []
        found, _, linked = self._descend(folder, parts)
        return None if linked else found

    def strays(self) -> list[str]:
        """Folders (under skills/, by rel, the topmost of each) holding no SKILL.md at any depth and no
        category's DESCRIPTION.md: neither Hermes nor the workbench lists anything in them (a skill that
        lost its SKILL.md, a folder made by hand), and nothing in them reaches the agent."""
        found, layout = self._walk()
        held = {tuple(skill.rel.split("/")[:depth]) for skill in found for depth in range(skill.rel.count("/") + 1)}
        return sorted(
            "/".join(parts)
            for parts in layout.folders
            if parts
            and parts not in held
            and (len(parts) == 1 or parts[:-1] in held)
            and not os.path.isfile(self.skills_dir.joinpath(*parts, "DESCRIPTION.md"))
        )

    def forget_layout(self) -> None:
        """Drop the remembered layout (after a write of our own that may rename a skill)."""
        self._layout = None

    def named(self, name: str) -> list[Found]:
        """Active skills whose path, folder name or frontmatter name is ``name``, sorted by path."""
        layout = self._fresh_layout()
        if "/" in name:
            *parent, leaf = name.split("/")
            probes = [(tuple(parent), leaf)]
        else:
            probes = [(parts, name) for parts in layout.folders]
        candidates = {
            parts + (leaf,)
            for parts, leaf in probes
            if parts in layout.folders and leaf in layout.folders[parts].skills
        }
        candidates.update(tuple(rel.split("/")) for rel in layout.aliases.get(name, ()))
        found = [
            f
            for parts in sorted(candidates)
            if (f := self._found(self.skills_dir.joinpath(*parts), parts, archived=False))
        ]
        matches = [f for f in found if name in (f.rel, f.dir_name, f.name)]
        if matches:
            return matches
        return [f for f in self.active() if name in (f.rel, f.dir_name, f.name)]  # a miss is always checked

    def _fresh_layout(self) -> _Layout:
        """The remembered layout, checked folder by folder; walks again when subfolders changed."""
        layout = self._layout
        if layout is None:
            return self._walk()[1]
        trusted_before = time.time_ns() - RACY_NS
        for parts, seen in list(layout.folders.items()):
            folder = self.skills_dir.joinpath(*parts)
            try:
                now = os.stat(folder).st_mtime_ns
                if now == seen.mtime_ns and now < trusted_before:
                    continue
                if parts and os.path.isfile(folder / "SKILL.md"):  # the folder became a skill itself
                    raise OSError
                listed = self._subfolders(list(os.scandir(folder)))
            except OSError:
                listed = None
            if listed != seen.subfolders:  # (a skill losing SKILL.md fails its probe; a folder gaining one, above)
                return self._walk()[1]
            layout.folders[parts] = _Folder(now, seen.subfolders, seen.skills)
        return layout

    def archived(self, folders: Iterable[str] | None = None) -> list[Found]:
        """The archived copies, sorted by folder; ``folders``: only those in these folders of the archive."""
        root = self.skills_dir / ARCHIVE_DIR
        if self._refused(root):
            return []
        entries: list[os.DirEntry] | list[Path]
        try:
            entries = (
                sorted(os.scandir(root), key=lambda e: e.name)
                if folders is None
                else [root / name for name in sorted(set(folders))]
            )
        except OSError:
            return []
        found = []
        for entry in entries:
            if entry.name.startswith("."):  # a folder being deleted (``.trash-*``) is no longer archived
                continue
            if self._is_dir(entry) and os.path.isfile(os.path.join(entry, "SKILL.md")):
                skill = self._found(Path(entry), (entry.name,), archived=True)
                if skill:
                    found.append(skill)
        return found


def bundled_names(skills_dir: Path, links: LinkPolicy) -> set[str]:
    """Names in ``.bundled_manifest`` (``name:hash`` lines, or plain names in the old format)."""
    try:
        lines = links.read_text(skills_dir / ".bundled_manifest").splitlines()
    except (OSError, UnicodeDecodeError, UnsafePath):
        return set()
    return {line.split(":", 1)[0].strip() for line in lines if line.strip() and not line.startswith("#")}


def hub_names(skills_dir: Path, links: LinkPolicy) -> tuple[set[str], set[str]]:
    """(installed names, install paths relative to skills/) from ``.hub/lock.json``."""
    try:
        data = json.loads(links.read_text(skills_dir / ".hub" / "lock.json"))
        installed = data.get("installed") or {}
    except (OSError, ValueError, RecursionError, AttributeError, UnsafePath):
        return set(), set()
    if not isinstance(installed, dict):
        return set(), set()
    paths = {
        str(v.get("install_path")).strip("/")
        for v in installed.values()
        if isinstance(v, dict) and v.get("install_path")
    }
    return set(installed), paths
