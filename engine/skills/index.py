"""The skills index block of the system prompt (Hermes's current rendering).

Categories sorted, names sorted within each, descriptions cut to 60 characters
(57 + "..."). Flat skills are listed under ``general`` rather than under their own
name (Hermes's quirk), so the block reads as a real grouping.

Every name, description and category note passes the threat scan as the block is
rendered (whole, before it is cut to length): a dangerous one is shown as a
``[BLOCKED: …]`` line instead, whoever wrote the file.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..safety import Verdict, assess, blocked_line

DESC_LIMIT = 60

HEADER = """## Skills
Before replying, scan the skills below. If a skill matches or is even partially relevant to your task, you MUST load it with skill_view(name) and follow its instructions.
If a skill has issues, fix it with skill_manage(action='patch').
After difficult/iterative tasks, offer to save as a skill with skill_manage(action='create')."""

FOOTER = "Only proceed without loading a skill if genuinely none are relevant to the task."
REMEDY = "Hidden from this index; fix or delete the skill."


def short(description: str) -> str:
    text = description.strip().strip("'\"")
    return text if len(text) <= DESC_LIMIT else text[: DESC_LIMIT - 3] + "..."


def _guard(text: str, what: str) -> str | None:
    """``None`` when ``text`` may be shown, else the blocked line that replaces it."""
    verdict = assess(text)
    return blocked_line(what, verdict, REMEDY) if verdict.dangerous else None


def blocked_in_index(name: str, description: str) -> tuple[str, Verdict] | None:
    """What of a skill the index shows as ``[BLOCKED: …]`` instead ("skill name", or "skill description"
    when the name may be shown), and the scan's verdict; None when its line is shown as written. The
    one rule: the index renders by it, and the Skills screen, ``skills list`` and doctor flag by it."""
    verdict = assess(name)
    if verdict.dangerous:
        return "skill name", verdict
    verdict = assess(f"{name}\n{description}")
    return ("skill description", verdict) if verdict.dangerous else None


def index_problem(name: str, description: str) -> str | None:
    """Why a skill's line in the skills index (in every system prompt) is blocked, in words naming the
    threat patterns and the fix; None when it is shown as written."""
    blocked = blocked_in_index(name, description)
    if blocked is None:
        return None
    what, verdict = blocked
    return (
        f"Its {'name' if what == 'skill name' else 'description'} holds threat pattern(s) {', '.join(verdict.ids)}: "
        "every system prompt's skills index shows a [BLOCKED] line in its place. "
        f"Rewrite the {'name' if what == 'skill name' else 'description'} in its SKILL.md without them "
        "(control characters, escape sequences and bidi overrides are never needed there), or delete the skill."
    )


def _skill_line(name: str, description: str) -> str:
    blocked = blocked_in_index(name, description)
    if blocked is not None:
        what, verdict = blocked
        line = blocked_line(what, verdict, REMEDY)
        return f"    - {line}" if what == "skill name" else f"    - {name}: {line}"
    note = short(description)
    return f"    - {name}: {note}" if note else f"    - {name}"


def _category_line(category: str, description: str) -> str:
    shown = "[BLOCKED category name]" if _guard(category, "category") else category
    note = _guard(f"{category}\n{description}", "category description") or short(description)
    return f"  {shown}: {note}" if note else f"  {shown}:"


def render_index(skills: Iterable[tuple[str, str, str]], category_descriptions: dict[str, str]) -> str:
    """``skills``: (category, name, description). Returns "" when there are none; first name wins."""
    grouped: dict[str, dict[str, str]] = {}
    seen: set[str] = set()
    for category, name, description in sorted(skills):
        if name in seen:
            continue
        seen.add(name)
        grouped.setdefault(category, {})[name] = description
    if not grouped:
        return ""
    lines = [HEADER, "", "<available_skills>"]
    for category in sorted(grouped):
        lines.append(_category_line(category, category_descriptions.get(category, "")))
        lines.extend(_skill_line(name, description) for name, description in sorted(grouped[category].items()))
    lines += ["</available_skills>", "", FOOTER]
    return "\n".join(lines)
