"""What a pending write will do, in words, from its payload alone.

Approving replays a record's ``payload`` (Hermes's own ``/skills approve`` does too); its ``action``
and ``summary`` are only what the file claims, and anything that can write a file can make them say
something else. So every label is derived here from the payload, and a record whose claims
contradict it is named (``claim_problem``) so that approving it is refused.
"""

from __future__ import annotations

import re
from typing import Any

from ..memory.store import staged_summary
from ..skills.frontmatter import parse_frontmatter
from ..textsafety import cut, flat_line

CONSOLIDATE = "consolidate"  # a curator plan's action (``curator.consolidate``)


def size_text(text: str) -> str:
    """A SKILL.md's size as a gist gives it (``812 chars``, ``3 KB``)."""
    return f"{len(text) // 1024 + 1} KB" if len(text) >= 1024 else f"{len(text)} chars"


def skill_gist(action: str, name: str, label: str, *, content: str = "", added: int = 0, removed: int = 0) -> str:
    """One line for a skill write, in Hermes's ``skill_gist`` wording (``label``: the file it writes)."""
    if action in ("create", "edit") and content:
        verb = "create" if action == "create" else "rewrite"
        meta, _ = parse_frontmatter(content)
        description = str(meta.get("description") or "").strip().strip("'\"").strip()
        about = f" — {cut(description, 140, words=True)}" if description else ""  # (Hermes's cuts inside a word)
        return f"{verb} '{name}'{about} ({size_text(content)})"
    if action == "patch":
        return f"patch '{name}' {label} (+{added}/-{removed} lines)"
    if action == "write_file":
        return f"write {label} in '{name}'"
    if action == "remove_file":
        return f"remove {label} from '{name}'"
    if action == "delete":
        return f"delete skill '{name}'"
    return f"{action} '{name}'"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _lines(text: str) -> int:
    return text.count("\n") + 1 if text else 0


def payload_action(payload: dict[str, Any]) -> str:
    """The action approving applies: the payload's (``(none)`` when it names none)."""
    return _text(payload.get("action")) or "(none)"


def skill_summary(payload: dict[str, Any]) -> str:
    """A skill payload in words: what approving it would write, to which skill."""
    action, name = payload_action(payload), _text(payload.get("name"))
    plan = payload.get("plan")
    if action == CONSOLIDATE and isinstance(plan, dict):
        absorbed, umbrella = plan.get("absorbed"), plan.get("umbrella")
        names = (
            ", ".join(_text(a.get("name")) for a in absorbed if isinstance(a, dict))
            if isinstance(absorbed, list)
            else ""
        )
        umbrella = umbrella if isinstance(umbrella, dict) else {}
        return f"consolidate {names} into '{_text(umbrella.get('name')) or name}'"
    file_path = _text(payload.get("file_path"))
    old, new = _text(payload.get("old_string")), _text(payload.get("new_string"))
    return skill_gist(
        action,
        name,
        file_path or "SKILL.md",
        content=_text(payload.get("content")),
        added=_lines(new),
        removed=_lines(old),
    )


def describe(subsystem: str, payload: dict[str, Any]) -> str:
    """What approving a record of ``subsystem`` with this payload does, in one line of words."""
    return staged_summary(payload) if subsystem == "memory" else skill_summary(payload)


_COUNTS = re.compile(r" \(\+\d+/-\d+ lines\)$")  # a patch gist's tail: the workbench's count its diff


def shown_summary(claimed: str, described: str) -> str:
    """The record's own summary where it says just what its payload does (a patch's line counts
    aside: the workbench's count the diff the reviewer sees), else the payload's in words."""
    if claimed == described or (_COUNTS.search(claimed) and _COUNTS.sub("", claimed) == _COUNTS.sub("", described)):
        return claimed
    return described


_WORD = re.compile(r"\w+")


def _verb(summary: str) -> str:
    found = _WORD.match(summary.lstrip())
    return found.group() if found else ""


def claim_problem(claimed_action: str, claimed_summary: str, action: str, summary: str) -> str | None:
    """Why a record's own ``action`` or ``summary`` contradicts what its payload does (None: they agree).

    The summary is free text (its tail differs between writers), so its first word, the verb (or the
    action itself), is what must agree: ``write …`` over a payload that deletes is a lie."""
    verb = _verb(claimed_summary)
    if claimed_action == action and (not verb or verb in (_verb(summary), action)):
        return None
    said = flat_line(f"{claimed_action}: {claimed_summary}" if claimed_summary.strip() else claimed_action, 160)
    return (
        f"Its record says “{said}”, but approving applies its payload, which would {flat_line(summary, 160)}. "
        "The file was changed after it was staged, or not written by Hermes: reject it."
    )


def detail_summary(detail: dict[str, Any]) -> str | None:
    """What a journal row's copy of a record (its ``detail``) does, in words; None when it holds no payload."""
    payload, claimed = detail.get("payload"), detail.get("summary")
    if not isinstance(payload, dict):
        return None
    return shown_summary(claimed if isinstance(claimed, str) else "", describe(str(detail.get("subsystem")), payload))
