"""The ``memory`` agent tool: its OpenAI function schema and its dispatcher.

The dispatcher follows Hermes's order (availability, ``new_text`` alias, target,
batch, then single-operation validation) so a model trained on Hermes gets the same
answers. Only ``target`` is schema-required; a missing ``old_text`` is answered at run
time with the current entries so the model can recover in one step.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from ..approvals.rejected import batch_refusal, refusal
from ..tools import ToolContext
from .format import FILE_NAMES, TARGETS, Usage
from .ops import REPLACE_HINT

if TYPE_CHECKING:
    from ..home import Home

ACTIONS = ("add", "replace", "remove")

_DESCRIPTION = (
    "Save durable facts to persistent memory. Memory is loaded into the system prompt of every FUTURE session "
    "(this session's prompt stays as it was), so keep it small, dense and true.\n"
    "Change several entries in ONE call with an `operations` array: the character limit is checked on the final "
    "result, and one batch completes the update.\n"
    "TARGETS: 'user' = who the user is (name, role, preferences, communication style). 'memory' = your notes "
    "(environment facts, project conventions, tool quirks, lessons learned).\n"
    "SAVE only what matters in EVERY session, written as declarative facts ('User prefers concise answers'), not "
    "instructions. SKIP trivial or easily re-discovered facts, raw data dumps, task progress, completed-work logs "
    "and temporary TODO state; reusable procedures belong in a skill.\n"
    "'replace' and 'remove' find an entry by `old_text`, a short unique substring of it. For 'replace', `content` "
    "is the COMPLETE new entry: the whole matched entry is overwritten.\n"
    "IF FULL: an add is refused and the current entries are shown; reissue it as one batch that removes or "
    "shortens entries and adds the new one together."
)

MEMORY_TOOL_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "memory",
        "description": _DESCRIPTION,
        "parameters": {
            "type": "object",
            "properties": {
                "action": {
                    "type": "string",
                    "enum": list(ACTIONS),
                    "description": "One change. Omit when using `operations`.",
                },
                "target": {
                    "type": "string",
                    "enum": list(TARGETS),
                    "description": "'memory' for your notes, 'user' for the user profile.",
                },
                "content": {
                    "type": "string",
                    "description": "The entry text (add), or the COMPLETE new entry (replace).",
                },
                "old_text": {
                    "type": "string",
                    "description": "Short unique substring of the entry to replace or remove.",
                },
                "new_text": {"type": "string", "description": "Alias of `content`."},
                "operations": {
                    "type": "array",
                    "description": "Several changes applied all-or-nothing, checked against the limit at the end.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "action": {"type": "string", "enum": list(ACTIONS)},
                            "content": {"type": "string"},
                            "old_text": {"type": "string"},
                            "new_text": {"type": "string"},
                        },
                        "required": ["action"],
                    },
                },
            },
            "required": ["target"],
        },
    },
}


def memory_tool_schema(home: Home) -> dict[str, Any]:
    """The schema advertising only the targets enabled in config."""
    schema = copy.deepcopy(MEMORY_TOOL_SCHEMA)
    enabled = [t for t in TARGETS if home.memory.enabled(t)]
    schema["function"]["parameters"]["properties"]["target"]["enum"] = enabled or list(TARGETS)
    return schema


def _error(message: str, **extra: Any) -> dict[str, Any]:
    return {"success": False, "error": message, **extra}


def memory_tool(home: Home, args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    store = home.memory
    enabled = {t: store.enabled(t) for t in TARGETS}
    if not any(enabled.values()):
        return _error("Memory is not available. It may be disabled in config or this environment.")
    if not isinstance(args, dict):
        return _error("The memory tool takes an object of named arguments.")
    content = args.get("content")
    if content is None and args.get("new_text") is not None:
        content = args["new_text"]
    target = args.get("target") or "memory"
    if target not in TARGETS:
        return _error(f"Invalid memory target '{target}'. Use 'memory' or 'user'.")
    if not enabled[target]:
        return _error(f"Built-in {FILE_NAMES[target]} writes are disabled in memory config.", target=target)
    operations = args.get("operations")
    if operations:
        return batch_refusal(home, target, operations) or store.batch(target, operations, ctx)
    action = args.get("action")
    if not action:
        return _error(
            "Missing required parameter: give either 'action' (add, replace or remove) for one change, "
            "or 'operations' (a list of {action, content?, old_text?}) for several."
        )
    if action not in ACTIONS:
        return _error(f"Unknown action '{action}'. Use: add, replace, remove")
    if action == "add":
        if not content:
            return _error("Content is required for 'add' action.")
        return refusal(home, "add", target, str(content)) or store.add(target, content, ctx)
    old_text = args.get("old_text")
    if not old_text:
        state = store.read(target)
        hint = REPLACE_HINT if action == "replace" else ""
        return _error(
            f"'{action}' needs old_text -- a short unique substring of the entry to {action}. None was "
            f"provided. Reissue the {action} with old_text set to part of one of the current_entries "
            f"below.{hint}",
            current_entries=state.entries,
            usage=Usage.of(state.entries, store.limit(target)).short,
        )
    if action == "replace":
        if not content:
            return _error("content is required for 'replace' action.")
        if refused := refusal(home, "replace", target, str(content), str(old_text)):
            return refused
        result = store.replace(target, old_text, content, ctx)
        result.pop("new_entry", None)  # the model's own text: no echo (Hermes keeps a success terse)
        return result
    return store.remove(target, old_text, ctx)
