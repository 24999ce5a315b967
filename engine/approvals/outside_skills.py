"""How a skill proposal that left the queue outside the workbench left it, read from the library.

Hermes's ``/skills approve`` replays the staged ``skill_manage`` call and then deletes the
record; ``reject`` only deletes it. No workbench process watches every skill write, so the
evidence is the library as it is now: the file the proposal writes holds what it proposed
(approved), or has not been touched since the proposal was staged (rejected). Anything
else (a skill rewritten by hand since, a name two skills share) is closed: not known.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..fileio import UnsafePath
from ..skills.validation import SkillError, check_support_path

if TYPE_CHECKING:
    from pathlib import Path

    from ..home import Home

APPROVE, REJECT, CLOSE = "approve", "reject", "close"


def skill_outcome(home: Home, payload: dict[str, Any], since: float, left: str) -> tuple[str, str]:
    """The decision row's action and why, for a staged ``skill_manage`` call ``payload`` staged at
    ``since``; ``left`` opens the why ("it left the queue outside the workbench")."""
    action, name = payload.get("action"), payload.get("name")
    if not isinstance(name, str) or not name.strip():
        return CLOSE, f"{left}; it names no skill, so whether it was applied is not known"
    try:
        home.links.resolve(home.skills_dir)
    except UnsafePath as exc:
        return CLOSE, f"{left}; the library cannot be read to tell whether it was applied: {exc.message}"
    found = home.skills.scanner.named(name)
    if len(found) > 1:
        return CLOSE, f"{left}; {len(found)} skills are called '{name}', so whether it was applied is not known"
    skill = found[0].path if found else None
    if action == "create":
        if skill is None:
            return REJECT, f"{left} without creating skill '{name}'"
        return _wrote(home, skill / "SKILL.md", payload.get("content"), since, left, "SKILL.md")
    if action == "delete":
        if skill is None:
            return APPROVE, f"{left}, and skill '{name}' is gone from the library"
        return _untouched(skill / "SKILL.md", since, left, f"skill '{name}' is still in the library")
    if skill is None:
        return CLOSE, f"{left}; skill '{name}' is not in the library, so whether it was applied is not known"
    if action == "edit":
        return _wrote(home, skill / "SKILL.md", payload.get("content"), since, left, "SKILL.md")
    try:
        rel = check_support_path(payload.get("file_path") or "SKILL.md", name)
    except SkillError as exc:
        return CLOSE, f"{left}; {exc.message}"
    if action == "write_file":
        return _wrote(home, skill / rel, payload.get("file_content"), since, left, rel)
    if action == "remove_file":
        if _stat(skill / rel) is None:
            return APPROVE, f"{left}, and {rel} is gone from skill '{name}'"
        return _untouched(skill / rel, since, left, f"{rel} is still in skill '{name}'")
    if action == "patch":
        return _patched(home, skill / rel, payload, since, left, rel)
    return CLOSE, f"{left}; whether it was applied is not known"


def _wrote(home: Home, path: Path, proposed: Any, since: float, left: str, label: str) -> tuple[str, str]:
    """Approved when ``path`` holds exactly the text proposed; rejected when it is not there or
    untouched since staging."""
    if isinstance(proposed, str) and _text(home, path) == proposed:
        return APPROVE, f"{left}, and {label} holds the text it proposed"
    if _stat(path) is None:
        return REJECT, f"{left} without writing {label}"
    return _untouched(path, since, left, f"{label} does not hold the text it proposed")


def _patched(home: Home, path: Path, payload: dict[str, Any], since: float, left: str, label: str) -> tuple[str, str]:
    """Approved when ``path`` was written since staging, holds the new text, and holds the old text
    only inside it (a patch that appends keeps its old text in its new; Hermes matches the old text
    loosely, but writes the new text as given)."""
    old, new, text = payload.get("old_string"), payload.get("new_string"), _text(home, path)
    if (
        isinstance(old, str)
        and isinstance(new, str)
        and text is not None
        and old
        and new in text
        and text.count(old) == text.count(new) * new.count(old)
        and not _older(path, since)
    ):
        return APPROVE, f"{left}, and {label} holds its new text in place of the old"
    return _untouched(path, since, left, f"{label} does not show its change")


def _untouched(path: Path, since: float, left: str, what: str) -> tuple[str, str]:
    """Rejected when ``path`` is there and was last written before the proposal was staged; else closed."""
    if _older(path, since):
        return REJECT, f"{left}: {what}, unchanged since it was staged"
    return CLOSE, f"{left}; {what}, and it changed since, so whether it was applied is not known"


def _older(path: Path, since: float) -> bool:
    found = _stat(path)
    return found is not None and found.st_mtime < since


def _stat(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _text(home: Home, path: Path) -> str | None:
    """The file's text, read under the home's link policy; None when missing, refused or not UTF-8."""
    try:
        return home.links.read_bytes(path).decode("utf-8")
    except (OSError, UnsafePath, UnicodeDecodeError):
        return None
