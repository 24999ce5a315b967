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
from ..skills.usage import older_copy_archived_at, parse_iso
from ..skills.validation import SkillError, name_problem

RESTORE_USAGE = "Give the skill's name, its folder name under skills/.archive/, or .archive/FOLDER."
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

    An exact dated folder name wins alone; else, after an exact folder, every timestamped copy of it,
    newest first: one of the skill that folder holds (archived again) or declaring ``name``, never
    another skill whose folder had the same last part (``x[/]`` in ``.archive/]-<ts>`` is no copy
    of the skill in ``.archive/]``).
    """
    exact = [f for f in archived if f.dir_name == name]
    if exact and _SUFFIX.match(name):
        return exact
    same = {name, *(f.name for f in exact)} if exact else None
    dated = [
        f
        for f in archived
        if f not in exact
        and (
            f.name == name
            or (_SUFFIX.match(f.dir_name) and base_name(f.dir_name) == name and (same is None or f.name in same))
        )
    ]
    return exact + sorted(dated, key=lambda f: _stamp_of(f.dir_name), reverse=True)


def restore_matches(archived: list[Found], name: object) -> list[Found]:
    """The archived copies ``skills restore NAME`` may mean (it restores one only when there is one):
    ``.archive/FOLDER`` or an exact folder name that very copy, else ``candidates``. A skill's own name
    counts even where it could not be a folder's (``[bold red]evil[/]``, whose folder was
    ``[bold red]evil[/]`` on disk and is ``.archive/]`` now): restore takes every name archive does.
    A NAME archive refuses too (``..``, an absolute path), or one with "/" no copy declares, is a
    ``SkillError``."""
    folder = name.removeprefix(f"{ARCHIVE_DIR}/") if isinstance(name, str) else name
    if not isinstance(folder, str) or not folder.strip():
        raise SkillError(RESTORE_USAGE)
    if folder != name:
        if "/" in folder:
            raise SkillError(RESTORE_USAGE)
        return [f for f in archived if f.dir_name == folder]
    if name_problem(name) or ("/" in name and not any(f.name == name for f in archived)):
        raise SkillError(RESTORE_USAGE)  # (archive refuses the same names: ``name_problem``)
    return candidates(archived, name)


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
    if archived_at := parse_iso(older_copy_archived_at(found, record)):  # an older copy of the name
        return archived_at
    stamp = _stamp_of(found.dir_name)
    if stamp:
        return datetime.strptime(stamp, "%Y%m%d%H%M%S").replace(tzinfo=UTC).timestamp()
    return found.path.stat().st_mtime
