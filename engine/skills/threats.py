"""The threat scan applied to skill writes: what a SKILL.md puts in the skills index.

The index shows a skill's name and description in every system prompt, so a write
that would put dangerous text there is refused on every path (the agent's tool, an
approval, the CLI), and a suspicious one is staged for approval when the agent makes it.
"""

from __future__ import annotations

from ..safety import ADVICE, Verdict, assess
from .frontmatter import description_of, parse_frontmatter
from .validation import SkillError


def prompt_text(plan) -> str | None:
    """The name, description and category the write would put in the index, or None."""
    if plan.label != "SKILL.md" or plan.after is None:
        return None
    meta, body = parse_frontmatter(plan.after)
    parts = [str(meta.get("name") or plan.name), description_of(meta, body), str(plan.result.get("category") or "")]
    return "\n".join(p for p in parts if p)


def check_plan(plan) -> Verdict | None:
    """Refuse a dangerous write; return the verdict of a suspicious one (None when clean)."""
    text = prompt_text(plan)
    if text is None:
        return None
    verdict = assess(text)
    if verdict.dangerous:
        first = verdict.worst.id
        raise SkillError(
            f"Blocked: the skill's name or description matches threat pattern '{first}'. They are "
            f"shown in every system prompt's skills index. Why: {'; '.join(verdict.reasons)}. {ADVICE}",
            flags=verdict.reasons,
        )
    return verdict if verdict.suspicious else None
