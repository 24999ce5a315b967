"""Helpers shared by the skills and curator tests, plus tests of the helpers' own guarantees."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from engine.tools import ToolContext


def skill_md(
    name: str, description: str = "Does a useful thing", body: str = "# Steps\nDo it.\n", extra: str = ""
) -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}"


def write_skill(home, name: str, category: str | None = None, files: dict[str, str] | None = None, **md) -> Path:
    """Put a skill on disk directly (as a person or another tool would)."""
    folder = home.skills_dir / category / name if category else home.skills_dir / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(skill_md(name, **md), encoding="utf-8")
    for rel, text in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    return folder


def tree_state(root: Path) -> dict[str, str]:
    """Every path under ``root`` with its kind and content hash (locks ignored): byte-identity checks."""
    state = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            rel = path.relative_to(root).as_posix()
            if name.endswith(".lock") or name == ".locks":  # lock files are not content
                continue
            if path.is_symlink():
                state[rel] = "link:" + os.readlink(path)
            elif path.is_dir():
                state[rel] = "dir"
            else:
                state[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state


def ctx(**kwargs) -> ToolContext:
    return ToolContext(**{"session_id": "s-1", "message_id": 7, **kwargs})


def test_tree_state_sees_content_changes(tmp_path):
    (tmp_path / "a").write_text("x")
    before = tree_state(tmp_path)
    (tmp_path / "a").write_text("y")
    assert tree_state(tmp_path) != before


def test_write_skill_is_listed(home):
    write_skill(home, "demo", category="tools", files={"references/api.md": "# API"})
    [info] = home.skills.list()
    assert (info.name, info.category, info.path) == ("demo", "tools", "tools/demo")
