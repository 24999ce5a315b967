"""How a skill proposal that left the queue outside the workbench left it, read from the library.

Hermes's ``/skills approve`` replays the staged ``skill_manage`` call and then deletes the
record; ``reject`` only deletes it. No workbench process watches every skill write, so the
evidence is the library as it is now, read under the home's link policy: the file the
proposal writes holds what it proposed and was written since it was staged (approved: an
approval always rewrites it), or has not been touched since (rejected). Anything else (a
skill rewritten by hand since, a name two skills share, a path the policy refuses, a thing
to delete that nothing shows was there) is closed: not known. A Curator consolidation plan, which
Hermes cannot apply, is judged by its umbrella and the skills it absorbs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..fileio import UnsafePath, read_regular
from ..skills.validation import SkillError, check_support_path
from ..textsafety import flat_line, one_line

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from ..home import Home

APPROVE, REJECT, CLOSE = "approve", "reject", "close"
NAME_CHARS = 60  # of a skill's name in a why (it comes from the record)
REFUSAL_CHARS = 400  # of a refusal in a why (it quotes the record's path)


@dataclass(frozen=True)
class _File:
    """A file a proposal writes or removes, as the library holds it now."""

    label: str  # as the why names it
    mtime: float | None  # None: not there
    text: str | None  # None: not there, or not UTF-8

    def older_than(self, since: float) -> bool:
        return self.mtime is not None and self.mtime < since


def skill_outcome(
    home: Home, payload: dict[str, Any], since: float, left: str, present: bool | None = None
) -> tuple[str, str]:
    """The decision row's action and why, for a staged ``skill_manage`` call ``payload`` staged at
    ``since``; ``left`` opens the why ("it left the queue outside the workbench"). ``present``: for a
    delete or remove_file, whether what it removes was there when the workbench saw it staged."""
    action, name = payload.get("action"), payload.get("name")
    if not isinstance(name, str) or not name.strip():
        return CLOSE, f"{left}; it names no skill, so whether it was applied is not known"
    shown = flat_line(name, NAME_CHARS)
    try:
        home.links.resolve(home.skills_dir)
    except UnsafePath as exc:
        return CLOSE, f"{left}; the library cannot be read to tell whether it was applied: {exc.message}"
    if action == "consolidate":
        return _consolidated(home, payload.get("plan"), left)
    found = home.skills.scanner.named(name)
    if len(found) > 1:
        return CLOSE, f"{left}; {len(found)} skills are called '{shown}', so whether it was applied is not known"
    skill = found[0].path if found else None
    if skill is None:
        if action == "create":
            return REJECT, f"{left} without creating skill '{shown}'"
        if action == "delete" and _archived_since(home, name, since):  # Hermes's approval deletes, never archives
            return (
                CLOSE,
                f"{left}; skill '{shown}' was archived since (by a curator, say), so whether it was applied "
                "is not known",
            )
        if action == "delete" and (present or _removed_since(home, name, since)):
            return APPROVE, f"{left}, and skill '{shown}' has left the library since it was staged"
        if action == "delete" and present is False:
            return REJECT, f"{left}: skill '{shown}' was not in the library when it was staged"
        return CLOSE, f"{left}; skill '{shown}' is not in the library, so whether it was applied is not known"
    try:
        rel = check_support_path(payload.get("file_path") or "SKILL.md", name)
        file = _look(home, skill, "SKILL.md" if action in ("create", "edit", "delete") else rel)
    except (SkillError, UnsafePath) as exc:
        why = one_line(exc.message, REFUSAL_CHARS)
        return CLOSE, f"{left}; the workbench does not read its path, so whether it was applied is not known: {why}"
    if action in ("create", "edit"):
        return _wrote(file, payload.get("content"), since, left)
    if action == "write_file":
        return _wrote(file, payload.get("file_content"), since, left)
    if action == "patch":
        return _patched(file, payload, since, left)
    if action == "delete":
        return _untouched(file, since, left, f"skill '{shown}' is still in the library")
    if action == "remove_file":
        if file.mtime is not None:
            return _untouched(file, since, left, f"{rel} is still in skill '{shown}'")
        if present or _changed_since(skill, rel, since):
            return APPROVE, f"{left}, and {rel} has left skill '{shown}' since it was staged"
        if present is False:
            return REJECT, f"{left}: {rel} was not in skill '{shown}' when it was staged"
        return CLOSE, f"{left}; {rel} is not in skill '{shown}', so whether it was applied is not known"
    return CLOSE, f"{left}; whether it was applied is not known"


def _consolidated(home: Home, plan: Any, left: str) -> tuple[str, str]:
    """A Curator consolidation plan, judged by its umbrella and the skills it absorbs. Hermes's
    ``/skills approve`` fails on one (its ``skill_manage`` knows no ``consolidate``) and keeps the
    record, so one gone from the queue was rejected or dropped by hand: rejected when the umbrella is
    not in the library and every absorbed skill is still active and unchanged since it was planned
    (and staged); else closed, saying what the library shows."""
    try:
        name, proposed = str(plan["umbrella"]["name"]), plan["umbrella"]["skill_md"]
        absorbed = [(str(item["name"]), home.curator.consolidation.as_planned(item)) for item in plan["absorbed"]]
    except (KeyError, TypeError, AttributeError, ValueError):
        return CLOSE, f"{left}; its plan cannot be read, so whether it was applied is not known"
    names, umbrella = _quoted(skill for skill, _ in absorbed), _quoted([name])
    found = home.skills.scanner.named(name)
    if not found:
        if all(planned for _, planned in absorbed):
            return (
                REJECT,
                f"{left} without consolidating: skill {umbrella} is not in the library and {names} are still "
                "active and unchanged since it was staged",
            )
        return (
            CLOSE,
            f"{left}; skill {umbrella} is not in the library, but "
            f"{_quoted(skill for skill, planned in absorbed if not planned)} changed or left since it was staged, "
            "so how it was decided is not known",
        )
    try:
        holds = len(found) == 1 and _look(home, found[0].path, "SKILL.md").text == proposed
    except UnsafePath:
        holds = False
    archived = {copy.name for copy in home.skills.scanner.archived()} - {f.name for f in home.skills.scanner.active()}
    if holds and all(skill in archived for skill, _ in absorbed):
        return (
            CLOSE,
            f"{left}; the library shows it made (skill {umbrella} holds the text it proposed, {names} are "
            "archived), but Hermes cannot apply a consolidation, so how it was made is not known",
        )
    return (
        CLOSE,
        f"{left}; skill {umbrella} is in the library, but not as it proposed with {names} archived, so how it "
        "was decided is not known",
    )


def _quoted(names: Iterable[str]) -> str:
    """Skill names from a record, each quoted on one line: 'a', 'b'."""
    return ", ".join(f"'{flat_line(name, NAME_CHARS)}'" for name in names)


def removes_present(home: Home, payload: dict[str, Any]) -> bool | None:
    """For a skill delete or remove_file: whether what it removes is there now (None for any other
    write, or when the library cannot tell)."""
    action, name = payload.get("action"), payload.get("name")
    if action not in ("delete", "remove_file") or not isinstance(name, str) or not name.strip():
        return None
    try:
        home.links.resolve(home.skills_dir)
        found = home.skills.scanner.named(name)
        if len(found) > 1:
            return None
        if action == "delete" or not found:
            return bool(found)
        rel = check_support_path(payload.get("file_path"), name)
        return _look(home, found[0].path, rel).mtime is not None
    except (SkillError, UnsafePath):
        return None


def _look(home: Home, skill: Path, rel: str) -> _File:
    """``rel`` in the skill's folder, never through a link out of it (``UnsafePath`` when refused)."""
    real = home.links.resolve(skill / rel, inside=skill)
    try:
        mtime = os.stat(real).st_mtime
    except (OSError, ValueError):  # missing (a name holding NUL is refused before it gets here)
        return _File(rel, None, None)
    try:
        return _File(rel, mtime, read_regular(real).decode("utf-8"))
    except (OSError, UnsafePath, UnicodeDecodeError):  # a folder, a FIFO, not UTF-8: never the proposed text
        return _File(rel, mtime, None)


def _wrote(file: _File, proposed: Any, since: float, left: str) -> tuple[str, str]:
    """Approved when the file holds exactly the text proposed and was written since staging (an
    approval always rewrites it); rejected when it is not there or untouched since."""
    if file.mtime is None:
        return REJECT, f"{left} without writing {file.label}"
    if isinstance(proposed, str) and file.text == proposed and not file.older_than(since):
        return APPROVE, f"{left}, and {file.label} holds the text it proposed"
    return _untouched(file, since, left, f"{file.label} does not hold the text it proposed")


def _patched(file: _File, payload: dict[str, Any], since: float, left: str) -> tuple[str, str]:
    """Approved when the file was written since staging, holds the new text, and holds the old text
    only inside it (a patch that appends keeps its old text in its new; Hermes matches the old text
    loosely, but writes the new text as given)."""
    old, new, text = payload.get("old_string"), payload.get("new_string"), file.text
    if (
        isinstance(old, str)
        and isinstance(new, str)
        and text is not None
        and old
        and new in text
        and text.count(old) == text.count(new) * new.count(old)
        and not file.older_than(since)
    ):
        return APPROVE, f"{left}, and {file.label} holds its new text in place of the old"
    return _untouched(file, since, left, f"{file.label} does not show its change")


def _untouched(file: _File, since: float, left: str, what: str) -> tuple[str, str]:
    """Rejected when the file is there and was last written before the proposal was staged; else closed."""
    if file.older_than(since):
        return REJECT, f"{left}: {what}, and it is unchanged since it was staged"
    return CLOSE, f"{left}; {what}, and it changed since, so whether it was applied is not known"


def _archived_since(home: Home, name: str, since: float) -> bool:
    """Whether a copy of skill ``name`` was moved into the archive after ``since`` (a move stamps its
    folder's change time): Hermes's approval of a delete removes the folder, its curator archives it."""
    return any(copy.name == name and _changed_at(copy.path) >= since for copy in home.skills.scanner.archived())


def _removed_since(home: Home, name: str, since: float) -> bool:
    """Whether a watching process journaled skill ``name`` removed after ``since`` (the skill itself:
    a support file's row names its ``file``)."""
    rows = home.journal.query(subsystem="skills", target=name, actions=("external",), since=since, limit=20)
    return any(row.detail.get("change") == "removed" and "file" not in row.detail for row in rows)


def _changed_since(skill: Path, rel: str, since: float) -> bool:
    """Whether the folder ``rel`` was removed from (its nearest folder still in the skill) changed
    after ``since``: removing a file stamps its folder."""
    folder = (skill / rel).parent
    while folder != skill and not folder.is_dir():
        folder = folder.parent
    return _changed_at(folder) >= since


def _changed_at(path: Path) -> float:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return 0.0
    return max(info.st_mtime, info.st_ctime)
