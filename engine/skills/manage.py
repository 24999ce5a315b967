"""The agent's skill tools: ``skills_list``, ``skill_view`` and ``skill_manage``.

Each takes ``(home, args, ctx)`` and returns a JSON-ready dict; a refusal is
``{"success": false, "error": ...}``, never an exception. ``skill_manage`` validates
first, then asks the approval queue whether to stage, so a write that would be refused
is never queued.
"""

from __future__ import annotations

from typing import Any

from ..approvals.labels import skill_gist
from ..approvals.preview import diff_stats
from ..diffs import line_diff
from ..errors import WorkbenchError
from ..tools import BACKGROUND_REVIEW, REVIEW_WHERE, AlreadyWaiting, ToolContext, already_waiting
from .library import ACTIONS, Plan, base_of

PAYLOAD_KEYS = (
    "action",
    "name",
    "content",
    "category",
    "file_path",
    "file_content",
    "old_string",
    "new_string",
    "replace_all",
    "absorbed_into",
)

SKILLS_LIST_SCHEMA = {
    "name": "skills_list",
    "description": "List the available skills (name, description, category). Use skill_view(name) to load one.",
    "parameters": {
        "type": "object",
        "properties": {"category": {"type": "string", "description": "Only skills in this category."}},
    },
}

SKILL_VIEW_SCHEMA = {
    "name": "skill_view",
    "description": (
        "Load a skill: without file_path, its SKILL.md and the list of linked files; with file_path, "
        "one linked file such as 'references/api.md'."
    ),
    "parameters": {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string", "description": "Skill name or category/name path."},
            "file_path": {"type": "string", "description": "A linked file inside the skill, e.g. 'references/api.md'."},
        },
    },
}

SKILL_MANAGE_SCHEMA = {
    "name": "skill_manage",
    "description": (
        "Create, update or delete a skill (procedural memory: how to do a class of task). Create one after a complex "
        "task succeeded (5+ tool calls), after overcoming errors, when the user corrected your approach, or "
        "when asked. "
        "Prefer 'patch' for small fixes to an existing skill; 'edit' rewrites SKILL.md entirely. Confirm with the user "
        "before create or delete. SKILL.md needs YAML frontmatter with name and description, then a body. Supporting "
        "files go under references/, templates/, scripts/ or assets/. Pinned skills cannot be deleted."
    ),
    "parameters": {
        "type": "object",
        "required": ["action", "name"],
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS)},
            "name": {
                "type": "string",
                "description": "Skill name: lowercase letters, digits, '.', '_' or '-', at most 64.",
            },
            "content": {"type": "string", "description": "Full SKILL.md text (create, edit)."},
            "category": {"type": "string", "description": "Optional category folder (create only)."},
            "old_string": {"type": "string", "description": "Exact text to replace; must match once (patch)."},
            "new_string": {"type": "string", "description": "Replacement text; empty string deletes (patch)."},
            "replace_all": {"type": "boolean", "default": False, "description": "Replace every match (patch)."},
            "file_path": {
                "type": "string",
                "description": "Supporting file, e.g. 'references/api.md' (write_file, remove_file, patch).",
            },
            "file_content": {"type": "string", "description": "Content of the supporting file (write_file)."},
            "absorbed_into": {"type": "string", "description": "Umbrella skill that absorbed this one (delete)."},
        },
    },
}


def _call(fn, *args) -> dict[str, Any]:
    try:
        return fn(*args)
    except WorkbenchError as exc:
        return exc.to_dict()


def skills_list_tool(home, args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return _call(home.skills.skills_list, (args or {}).get("category"))


def skill_view_tool(home, args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """A successful view also marks the served file as read for this turn (read-before-write)."""
    args = args or {}
    result = _call(home.skills.view, args.get("name"), args.get("file_path"))
    if result.get("success"):
        ctx.turn_state.setdefault("skills_read", set()).add((result["name"], result.get("file", "SKILL.md")))
    return result


def gist(plan: Plan) -> str:
    """One line for the approval queue (Hermes's ``skill_gist`` wording); a patch's lines are counted
    as the reviewer's diff shows them, not as the patch's strings."""
    stats = diff_stats(line_diff(plan.before or "", plan.after or "")) if plan.action == "patch" else {}
    return skill_gist(
        plan.action,
        plan.name,
        plan.label,
        content=plan.after or "",
        added=stats.get("added", 0),
        removed=stats.get("removed", 0),
    )


def _read_before_write(plan: Plan, ctx: ToolContext) -> None:
    """A background review must have viewed the exact file it overwrites (Hermes's guard)."""
    if plan.before is None or plan.action == "create":
        return
    label = "SKILL.md" if plan.action == "delete" else plan.label
    if (plan.name, label) not in ctx.turn_state.get("skills_read", set()):
        raise WorkbenchError(
            f"Refusing background curator {plan.action} for skill '{plan.name}': the current {label} content has not "
            "been loaded in this review turn. Call skill_view(name) for SKILL.md, or skill_view(name, file_path=...) "
            "for a supporting file, then retry the write using the content just returned.",
            _read_before_write_required=True,
        )


def skill_manage_tool(home, args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """Validate, then stage for approval or apply; every write journaled, ledgered and announced."""
    args = {k: v for k, v in (args or {}).items() if k in PAYLOAD_KEYS and v is not None}
    try:
        plan = home.skills.plan(args, ctx)
        if ctx.origin == BACKGROUND_REVIEW:
            _read_before_write(plan, ctx)
        suspicious = plan.flags is not None and ctx.actor != "user"
        if suspicious or home.approvals.should_stage("skills", plan.action, ctx.origin):
            summary = gist(plan)
            try:
                record = home.approvals.stage(
                    subsystem="skills",
                    action=plan.action,
                    summary=summary,
                    origin=ctx.origin,
                    payload=args,
                    actor=ctx.actor,
                    session_id=ctx.session_id,
                    message_id=ctx.message_id,
                    base=base_of(plan),
                    once=True,
                )
            except AlreadyWaiting as same:  # one proposal to approve, not one per time it was proposed
                return already_waiting(same.pending_id)
            if suspicious:
                return {
                    "success": True,
                    "staged": True,
                    "pending_id": record.id,
                    "gist": summary,
                    "flags": plan.flags.reasons,
                    "message": f"Staged for the user's approval because {plan.flags.where} looks suspicious: "
                    f"{'; '.join(plan.flags.reasons)}. Not yet saved.",
                }
            return {
                "success": True,
                "staged": True,
                "pending_id": record.id,
                "gist": summary,
                "message": f"Staged for approval (skills.write_approval is on). Not yet saved — "
                f"review it {REVIEW_WHERE}.",
            }
        return home.skills.apply(plan, ctx)
    except WorkbenchError as exc:
        return exc.to_dict()
