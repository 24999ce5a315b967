"""The skills index block of the system prompt (Hermes's current rendering).

Categories sorted, names sorted within each, descriptions cut to 60 characters
(57 + "..."). Flat skills are listed under ``general`` rather than under their own
name (Hermes's quirk), so the block reads as a real grouping.
"""

from __future__ import annotations

from typing import Iterable

DESC_LIMIT = 60

HEADER = """## Skills
Before replying, scan the skills below. If a skill matches or is even partially relevant to your task, you MUST load it with skill_view(name) and follow its instructions.
If a skill has issues, fix it with skill_manage(action='patch').
After difficult/iterative tasks, offer to save as a skill with skill_manage(action='create')."""

FOOTER = "Only proceed without loading a skill if genuinely none are relevant to the task."


def short(description: str) -> str:
    text = description.strip().strip("'\"")
    return text if len(text) <= DESC_LIMIT else text[:DESC_LIMIT - 3] + "..."


def render_index(skills: Iterable[tuple[str, str, str]], category_descriptions: dict[str, str]) -> str:
    """``skills``: (category, name, description). Returns "" when there are none; first name wins."""
    grouped: dict[str, dict[str, str]] = {}
    seen: set[str] = set()
    for category, name, description in sorted(skills):
        if name in seen:
            continue
        seen.add(name)
        grouped.setdefault(category, {})[name] = short(description)
    if not grouped:
        return ""
    lines = [HEADER, "", "<available_skills>"]
    for category in sorted(grouped):
        note = short(category_descriptions.get(category, ""))
        lines.append(f"  {category}: {note}" if note else f"  {category}:")
        for name, description in sorted(grouped[category].items()):
            lines.append(f"    - {name}: {description}" if description else f"    - {name}")
    lines += ["</available_skills>", "", FOOTER]
    return "\n".join(lines)
