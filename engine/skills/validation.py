"""Hermes's limits and path rules for skill writes, each with an actionable message.

Every check here runs before anything touches the disk, so a refusal leaves the skills
tree byte-identical.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import WorkbenchError
from ..fileio import contained

MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
MAX_SKILL_CONTENT_CHARS = 100_000
MAX_SKILL_FILE_BYTES = 1_048_576
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
ALLOWED_SUBDIRS = ("assets", "references", "scripts", "templates")


class SkillError(WorkbenchError):
    """A skill operation was refused; nothing was written."""


class OldStringMissing(SkillError):
    """A patch's old_string is not in the file it names (``label``: ``SKILL.md`` or the support file)."""

    def __init__(self, message: str, label: str, **details):
        super().__init__(message, **details)
        self.label = label


def not_utf8(what: object, exc: UnicodeDecodeError) -> str:
    """``what`` is not UTF-8, and where: the start of every message about such a file."""
    return f"{what} is not UTF-8 text (byte {exc.start} is {exc.object[exc.start : exc.start + 1]!r})"


def check_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        raise SkillError("Skill name is required.")
    if len(name) > MAX_NAME_LENGTH:
        raise SkillError(f"Skill name exceeds {MAX_NAME_LENGTH} characters.")
    if not NAME_RE.match(name):
        raise SkillError(
            f"Invalid skill name '{name}'. Use lowercase letters, numbers, hyphens, dots, and underscores. "
            "Must start with a letter or digit."
        )
    return name


def check_category(category: Any) -> str | None:
    """None for no category; a single directory name otherwise."""
    if category is None:
        return None
    if not isinstance(category, str):
        raise SkillError("Category must be a string.")
    category = category.strip()
    if not category:
        return None
    if len(category) > MAX_NAME_LENGTH:
        raise SkillError(f"Category exceeds {MAX_NAME_LENGTH} characters.")
    if "/" in category or "\\" in category or not NAME_RE.match(category):
        raise SkillError(
            f"Invalid category '{category}'. Use lowercase letters, numbers, hyphens, dots, and underscores. "
            "Categories must be a single directory name."
        )
    return category


def content_size_problem(text: str, label: str) -> str | None:
    """Why ``text`` is too long for a skill file (None when it fits): a write's refusal, a listing's warning."""
    if len(text) > MAX_SKILL_CONTENT_CHARS:
        return (
            f"{label} content is {len(text):,} characters (limit: {MAX_SKILL_CONTENT_CHARS:,}). Consider "
            "splitting into a smaller SKILL.md with supporting files in references/ or templates/."
        )
    return None


def check_content_size(text: str, label: str) -> None:
    problem = content_size_problem(text, label)
    if problem:
        raise SkillError(problem)


def check_file_size(text: str) -> None:
    size = len(text.encode("utf-8"))
    if size > MAX_SKILL_FILE_BYTES:
        raise SkillError(
            f"File content is {size:,} bytes (limit: {MAX_SKILL_FILE_BYTES:,} bytes / 1 MiB). "
            "Consider splitting into smaller files."
        )
    check_content_size(text, "File")


def check_relative(path: Any, what: str = "Path") -> PurePosixPath:
    """A relative POSIX path with no ``..`` component (absolute and drive paths refused)."""
    if not isinstance(path, str) or not path.strip():
        raise SkillError(f"{what} is required.")
    if any(ord(c) < 32 or ord(c) == 127 for c in path):  # a NUL no file call takes; a newline no person reads
        raise SkillError(f"{what} must not hold control characters.")
    if path.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", path):
        raise SkillError(f"{what} '{path}' must be a relative path within the skill; absolute paths are not allowed.")
    parts = PurePosixPath(path.replace("\\", "/"))
    if ".." in parts.parts:
        raise SkillError("Path traversal ('..') is not allowed.")
    return parts


def check_support_path(file_path: Any, skill_name: str) -> str:
    """A supporting-file path for write_file / remove_file / patch: ``SKILL.md`` or under an allowed folder."""
    parts = check_relative(file_path, "file_path")
    if str(parts) in ("SKILL.md", f"{skill_name}/SKILL.md"):
        return "SKILL.md"
    if parts.parts[0] not in ALLOWED_SUBDIRS:
        raise SkillError(f"File must be under one of: {', '.join(ALLOWED_SUBDIRS)}. Got: '{file_path}'")
    if len(parts.parts) < 2:
        raise SkillError("Provide a file path, not just a directory. Example: 'references/myfile.md'")
    return str(parts)


def check_inside(path: Path, root: Path, label: str) -> None:
    """Refuse ``path`` when a link takes it out of ``root``, saying where to and what to do instead."""
    if not contained(path, root):
        raise SkillError(
            f"{label} escapes its folder through a symlink (to {os.path.realpath(path)}); refusing to follow it "
            f"outside {root}: nothing there is moved or written through it. To manage it here, replace the link "
            "with the folder or file itself; to drop it from the library, remove the link."
        )


def name_problem(name: Any) -> str | None:
    """Why ``find`` refuses to look ``name`` up (None: it may): it must name a place inside skills/."""
    if not isinstance(name, str) or not name.strip():
        return "Skill name is required."
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return "Skill name must be a relative path within the skills directory."
    if ".." in name.replace("\\", "/").split("/"):
        return "Skill name cannot contain '..' path traversal components."
    return None
