"""A person's rewrite of a skill's SKILL.md: the one rule the CLI's ``skills edit`` and the Skills
screen's editor share.

The text is checked as the agent's ``edit`` is (frontmatter, Hermes's size limit, the threat scan),
and its name must stay the skill's: the folder, the usage record and every command go by it. The
editor was opened on one version of the file; under the skills lock the file is read again, and a
version changed meanwhile (by Hermes, an editor, another workbench) is refused with what changed, so
the person's text is never written over theirs, nor theirs lost. The write is the library's own
(journal first, atomic replace), journaled as the user's, so the Timeline shows it and can revert it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..diffs import changed_lines
from ..tools import ToolContext
from .frontmatter import validate_skill_md
from .threats import warning_message
from .validation import SkillError


class ChangedSinceOpened(SkillError):
    """The SKILL.md an editor opened was changed by another writer before it was saved."""

    def __init__(self, message: str, current: str | None, changes: list[str]):
        super().__init__(message, current=current, changes=changes)
        self.current = current  # the file now (None: it is gone)


@dataclass(frozen=True)
class Opened:
    """A skill's SKILL.md as an editor opens it: the version a save is checked against."""

    name: str
    rel: str  # its folder under skills/: the save finds this very skill, though another shares its name
    path: str  # the file, relative to the home, for the person to see
    text: str


def open_skill_md(library, name: str) -> Opened:
    """The SKILL.md of the active skill ``name`` to edit; refused for one no edit may change (bundled,
    hub-installed, archived: restore it first), before any editor opens."""
    try:
        found = library.find(name)
    except SkillError as missing:
        if "available_skills" in missing.details:  # (no active skill answers to it: an archived one may)
            library.refuse_archived(name, "edit")
        raise
    library.check_writable(found, "edit", ToolContext(actor="user"))
    text = library.read_text(found.path / "SKILL.md", found.path)
    return Opened(found.name, found.rel, library.ledger.rel(found.path / "SKILL.md"), text)


def save_skill_md(library, opened: Opened, content: str) -> dict[str, Any]:
    """Write ``content`` as the SKILL.md ``opened`` was, as the user; refused, writing nothing, when it
    is not a valid SKILL.md for this skill, is dangerous, or the file changed since it was opened."""
    if content == opened.text:
        return {"success": True, "unchanged": True, "message": _unchanged(library, opened)}
    meta = validate_skill_md(content)
    named = str(meta.get("name") or "").strip()
    if named != opened.name:
        raise SkillError(
            f"The frontmatter names the skill '{named}', but this is '{opened.name}': its folder, usage record "
            f"and commands go by that name, so keep `name: {opened.name}`; nothing was saved."
        )
    ctx = ToolContext(actor="user")
    try:
        plan = library.plan({"action": "edit", "name": opened.rel, "content": content}, ctx)
    except SkillError as missing:
        if "available_skills" in missing.details:  # (its folder holds no active skill now: gone since it opened)
            raise changed_since(opened, None) from None
        raise

    if plan.before != opened.text:  # (said before the lock is waited for, when it is plain already)
        raise changed_since(opened, plan.before)

    def unchanged() -> None:  # under the skills lock, just before the write
        target = plan.text_file
        current = library.read_text(target, target.parent) if target.is_file() else None
        if current != opened.text:
            raise changed_since(opened, current)

    result = library.execute(replace(plan, precondition=unchanged), ctx)
    if plan.flags is not None:
        result["warning"] = warning_message(plan.flags)
    return result


def _unchanged(library, opened: Opened) -> str:
    """Why a draft left as it opened saves nothing, true to the file now: another writer may have changed
    or removed it meanwhile ("SKILL.md is as it was" was said of a skill Hermes had just deleted)."""
    file = library.ledger.root / opened.path
    current = library.read_text(file, file.parent) if file.is_file() else None
    if current is None:
        return f"No change to save, and {opened.path} was removed since you opened it (archived, deleted or moved)."
    if current != opened.text:
        return (
            f"No change to save; {opened.path} was changed since you opened it and is left as the other writer made it."
        )
    return "No change to save: SKILL.md is as it was."


def changed_since(opened: Opened, current: str | None) -> ChangedSinceOpened:
    """The refusal of a save whose file another writer changed: what changed, as diff lines."""
    if current is None:
        return ChangedSinceOpened(
            f"{opened.path} was removed since you opened it (the skill was archived, deleted or moved); "
            "nothing was saved.",
            None,
            [],
        )
    changes = changed_lines(opened.text, current)
    return ChangedSinceOpened(
        f"{opened.path} changed since you opened it (Hermes, an editor or another workbench wrote it); nothing "
        "was saved. What changed on disk (- as you opened it, + now):\n" + "\n".join(changes),
        current,
        changes,
    )
