"""Where archived skills go and how they are found again.

``skills/.archive/<folder>`` (categories flattened, as in Hermes); a name already taken
there gets ``-YYYYMMDDHHMMSS`` (UTC). Lookup takes the exact folder name, a dated form
(Hermes's ``-YYYYMMDDHHMMSS``, or a hyphenated date such as ``-2026-07-14`` or
``-2026-07-14-093000`` that other tools write), or a copy whose SKILL.md carries the
name, so restoring ``git`` never picks up ``git-helpers``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from ..skills.discovery import ARCHIVE_DIR, Found
from ..skills.usage import parse_iso
from ..skills.validation import SkillError

_SUFFIX = re.compile(r"^(?P<base>.+?)-(?P<ts>\d{14}|\d{4}-\d{2}-\d{2}(?:[-T_]?\d{2}-?\d{2}-?\d{2})?)$")


def stamp(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).strftime("%Y%m%d%H%M%S")


def destination(archive_dir: Path, dir_name: str, now: float) -> Path:
    dest = archive_dir / dir_name
    if not dest.exists():
        return dest
    while (archive_dir / f"{dir_name}-{stamp(now)}").exists():  # two archives of one name within a second
        now += 1
    return archive_dir / f"{dir_name}-{stamp(now)}"


def base_name(dir_name: str) -> str:
    match = _SUFFIX.match(dir_name)
    return match.group("base") if match else dir_name


def candidates(archived: list[Found], name: str) -> list[Found]:
    """Archived copies answering to ``name``.

    An exact folder name wins alone; else every timestamped copy, newest first.
    """
    exact = [f for f in archived if f.dir_name == name]
    if exact and _SUFFIX.match(name):
        return exact
    dated = [
        f
        for f in archived
        if f not in exact and ((_SUFFIX.match(f.dir_name) and base_name(f.dir_name) == name) or f.name == name)
    ]
    return exact + sorted(dated, key=lambda f: _stamp_of(f.dir_name), reverse=True)


def restore_matches(archived: list[Found], name: object) -> list[Found]:
    """The archived copies ``skills restore NAME`` may mean (it restores one only when there is one):
    ``.archive/FOLDER`` or an exact folder name that very copy, else ``candidates``. A NAME that
    cannot name a folder of the archive is a ``SkillError``."""
    folder = name.removeprefix(f"{ARCHIVE_DIR}/") if isinstance(name, str) else name
    if not isinstance(folder, str) or not folder.strip() or "/" in folder or ".." in folder:
        raise SkillError("Give the skill's name, its folder name under skills/.archive/, or .archive/FOLDER.")
    exact = [f for f in archived if f.dir_name == folder]
    return exact if folder != name else candidates(archived, folder)


def _stamp_of(dir_name: str) -> str:
    """The dated suffix as bare digits, so the two dated forms sort together ("" when undated)."""
    match = _SUFFIX.match(dir_name)
    return re.sub(r"\D", "", match.group("ts")).ljust(14, "0") if match else ""


def archived_time(found: Found, record: dict | None) -> float:
    """When a copy was archived.

    The record's time for the copy it names, else the folder's timestamp, else its mtime.
    """
    record = record or {}
    names_this_copy = record.get("archive_dir") in (found.dir_name, None)  # Hermes records no folder
    if names_this_copy and (archived_at := parse_iso(record.get("archived_at"))):
        return archived_at
    stamp = _stamp_of(found.dir_name)
    if stamp:
        return datetime.strptime(stamp, "%Y%m%d%H%M%S").replace(tzinfo=UTC).timestamp()
    return found.path.stat().st_mtime
