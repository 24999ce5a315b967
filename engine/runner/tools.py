"""The agent's tools: schemas for the model, and a dispatcher that never lets one crash.

Built-in tools come from the parts that own them (memory, session archive, skills);
the active memory provider may add its own. Every call returns a dict: a refused or
crashing tool becomes ``{"success": false, "error": ...}`` that the model reads and
can react to, so one broken tool never ends a session.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import WorkbenchError
from ..tools import ToolContext

log = logging.getLogger(__name__)

ToolFunction = Callable[[Any, dict[str, Any], ToolContext], dict[str, Any]]
REVIEW_TOOLS = ("memory", "skills_list", "skill_view", "skill_manage")


@dataclass(frozen=True)
class Tool:
    name: str
    schema: dict[str, Any]  # {"name", "description", "parameters"}
    run: ToolFunction


def _plain(schema: dict[str, Any]) -> dict[str, Any]:
    return schema.get("function", schema) if schema.get("type") == "function" else schema


def builtin_tools(home) -> list[Tool]:
    """The built-in tools, imported from the parts that own them (no memory tool when memory is off)."""
    from ..archive.session_search import SESSION_SEARCH_SCHEMA, session_search_tool
    from ..memory.tool import memory_tool, memory_tool_schema
    from ..skills.manage import (
        SKILL_MANAGE_SCHEMA,
        SKILL_VIEW_SCHEMA,
        SKILLS_LIST_SCHEMA,
        skill_manage_tool,
        skill_view_tool,
        skills_list_tool,
    )

    memory_on = home.memory.enabled("memory") or home.memory.enabled("user")
    pairs = ([(memory_tool_schema(home), memory_tool)] if memory_on else []) + [
        (SESSION_SEARCH_SCHEMA, session_search_tool),
        (SKILLS_LIST_SCHEMA, skills_list_tool),
        (SKILL_VIEW_SCHEMA, skill_view_tool),
        (SKILL_MANAGE_SCHEMA, skill_manage_tool),
    ]
    return [Tool(_plain(schema)["name"], _plain(schema), run) for schema, run in pairs]


class ToolRegistry:
    """The tools one session offers, in a fixed order (their schemas are part of the cached prefix)."""

    def __init__(self, home, tools: list[Tool], *, allowed: tuple[str, ...] | None = None, denied_message: str = ""):
        self.home = home
        self._tools = {tool.name: tool for tool in tools}
        self._allowed = allowed
        self._denied_message = denied_message

    def names(self) -> list[str]:
        return list(self._tools)

    def api_schemas(self) -> list[dict[str, Any]]:
        return [{"type": "function", "function": tool.schema} for tool in self._tools.values()]

    def restricted(self, allowed: tuple[str, ...], denied_message: str) -> ToolRegistry:
        """Same schemas (so the request prefix stays cache-identical), but only ``allowed`` may run."""
        return ToolRegistry(self.home, list(self._tools.values()), allowed=allowed, denied_message=denied_message)

    def only(self, names: tuple[str, ...]) -> ToolRegistry:
        """Just the named tools (a narrower request, such as the memory flush)."""
        return ToolRegistry(self.home, [tool for name, tool in self._tools.items() if name in names])

    def dispatch(self, name: str, args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        tool = self._tools.get(name)
        if self._allowed is not None and name not in self._allowed:
            return {"success": False, "error": self._denied_message.format(tool=name)}
        if tool is None:
            return {"success": False, "error": f"Unknown tool {name!r}. Available tools: {', '.join(self._tools)}."}
        try:
            result = tool.run(self.home, args, ctx)
        except WorkbenchError as exc:
            return exc.to_dict()
        except Exception as exc:  # a crashing tool is reported to the model, never fatal
            log.exception("tool %s crashed", name)
            return {"success": False, "error": f"Tool {name!r} failed: {type(exc).__name__}: {exc}"}
        if not isinstance(result, dict):
            return {"success": False, "error": f"Tool {name!r} returned {type(result).__name__}, not a result object."}
        return result
