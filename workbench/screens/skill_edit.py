"""The Skills screen's hand edit of a SKILL.md: the editor dialog Memory uses, saving through the
engine's one rule (``engine.skills.hand_edit``), as ``workbench skills edit`` does.

A save refused because another writer changed the file since it opened shows their version beside
the draft (Keep mine saves the draft over it, Take theirs closes): the draft is never lost.
"""

from __future__ import annotations

from dataclasses import replace

from engine.errors import WorkbenchError
from engine.skills.hand_edit import ChangedSinceOpened, Opened, open_skill_md, save_skill_md

from .dialogs import Conflict, DiskCheck, EditDialog, Outcome

HINT = "Checked as the agent's edit is (frontmatter, this skill's name, size, threat scan); the Timeline can revert it."


class SkillEdit:
    """One hand edit of a SKILL.md, opened on ``opened``; re-based only when the user keeps theirs/mine."""

    def __init__(self, library, opened: Opened):
        self.library = library
        self.opened = opened
        self.said = ""  # what the save said, for the screen's status line

    def dialog(self) -> EditDialog:
        return EditDialog(
            f"Edit {self.opened.path}",
            self.opened.text,
            self.submit,
            rebase=self.rebase,
            hint=HINT,
            recheck=self.recheck,
            what="SKILL.md",
        )

    def recheck(self) -> DiskCheck:
        """Worker thread, as skills change: whether the file is still the version the draft is based on."""
        try:
            now = open_skill_md(self.library, self.opened.rel).text  # (by its folder: a name may be shared)
        except WorkbenchError as exc:
            return DiskCheck(f"{self.opened.path} cannot be read now: {exc.in_app}")
        if now == self.opened.text:
            return DiskCheck(None)
        return DiskCheck(  # (theirs: a conflict shown follows it, so Keep mine is based on what it shows)
            "Changed on disk since you opened it: another writer changed SKILL.md. "
            "Saving will show what changed first.",
            theirs=(now,),
        )

    def submit(self, text: str) -> Outcome:
        """Worker thread: save over exactly the version opened; another writer's shows as a conflict."""
        try:
            result = save_skill_md(self.library, self.opened, text)
        except ChangedSinceOpened as exc:
            if exc.current is None:  # (gone: nothing to keep the draft over)
                return exc.in_app
            return Conflict(self.opened.text, exc.current, whole_file=True)
        except WorkbenchError as exc:
            return exc.in_app
        self.said = " ".join(part for part in (result["message"], result.get("warning")) if part)
        return None

    def rebase(self, conflict: Conflict) -> None:
        self.opened = replace(self.opened, text=conflict.theirs)
