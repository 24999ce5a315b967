"""Finding skills on disk: ``skills/[category/...]name/SKILL.md`` and ``skills/.archive/<dir>/``.

Scanning skips metadata and tool folders (Hermes's list), never descends into a
skill's own folders, and caches each parsed SKILL.md by (mtime, size) so rebuilding
the index of a large library only re-reads what changed.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .frontmatter import description_of, parse_frontmatter

EXCLUDED_DIRS = {".git", ".github", ".hub", ".archive", ".venv", "venv", "node_modules", "site-packages",
                 "__pycache__", ".tox", ".nox", ".pytest_cache", ".mypy_cache", ".ruff_cache"}
ARCHIVE_DIR = ".archive"


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


class Scanner:
    def __init__(self, skills_dir: Path):
        self.skills_dir = skills_dir
        self._cache: dict[Path, tuple[int, int, dict[str, Any], str]] = {}
        self._lock = threading.Lock()

    def parse(self, skill_md: Path) -> tuple[dict[str, Any], str] | None:
        try:
            stat = skill_md.stat()
        except OSError:
            return None
        with self._lock:
            cached = self._cache.get(skill_md)
        if cached and cached[:2] == (stat.st_mtime_ns, stat.st_size):
            return cached[2], cached[3]
        try:
            text = skill_md.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        meta, body = parse_frontmatter(text)
        description = description_of(meta, body)
        with self._lock:
            self._cache[skill_md] = (stat.st_mtime_ns, stat.st_size, meta, description)
        return meta, description

    def _found(self, folder: Path, parts: tuple[str, ...], archived: bool) -> Found | None:
        parsed = self.parse(folder / "SKILL.md")
        if parsed is None:
            return None
        meta, description = parsed
        name = str(meta.get("name") or "").strip() or folder.name
        category = None if archived or len(parts) < 2 else "/".join(parts[:-1])
        rel = "/".join(((ARCHIVE_DIR,) if archived else ()) + parts)
        return Found(name, folder.name, rel, category, folder, meta, description, archived)

    def active(self) -> list[Found]:
        found: list[Found] = []
        seen: set[str] = set()
        stack: list[tuple[Path, tuple[str, ...]]] = [(self.skills_dir, ())]
        while stack:
            folder, parts = stack.pop()
            real = os.path.realpath(folder)
            if real in seen:  # a symlink loop
                continue
            seen.add(real)
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name, reverse=True)
            except OSError:
                continue
            for entry in entries:
                if entry.name in EXCLUDED_DIRS or entry.name.startswith(".") or not entry.is_dir():
                    continue
                child, child_parts = Path(entry.path), parts + (entry.name,)
                if os.path.isfile(os.path.join(entry.path, "SKILL.md")):
                    skill = self._found(child, child_parts, archived=False)
                    if skill:
                        found.append(skill)
                else:
                    stack.append((child, child_parts))
        return sorted(found, key=lambda f: f.rel)

    def archived(self) -> list[Found]:
        root = self.skills_dir / ARCHIVE_DIR
        try:
            entries = sorted(os.scandir(root), key=lambda e: e.name)
        except OSError:
            return []
        found = []
        for entry in entries:
            if entry.is_dir() and os.path.isfile(os.path.join(entry.path, "SKILL.md")):
                skill = self._found(Path(entry.path), (entry.name,), archived=True)
                if skill:
                    found.append(skill)
        return found


def bundled_names(skills_dir: Path) -> set[str]:
    """Names in ``.bundled_manifest`` (``name:hash`` lines, or plain names in the old format)."""
    try:
        lines = (skills_dir / ".bundled_manifest").read_text(encoding="utf-8").splitlines()
    except OSError:
        return set()
    return {line.split(":", 1)[0].strip() for line in lines if line.strip() and not line.startswith("#")}


def hub_names(skills_dir: Path) -> tuple[set[str], set[str]]:
    """(installed names, install paths relative to skills/) from ``.hub/lock.json``."""
    try:
        data = json.loads((skills_dir / ".hub" / "lock.json").read_text(encoding="utf-8"))
        installed = data.get("installed") or {}
    except (OSError, ValueError, AttributeError):
        return set(), set()
    if not isinstance(installed, dict):
        return set(), set()
    paths = {str(v.get("install_path")).strip("/") for v in installed.values() if isinstance(v, dict) and v.get("install_path")}
    return set(installed), paths
