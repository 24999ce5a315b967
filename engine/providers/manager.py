"""Runs the one configured external memory provider for a session, failing open.

At most one external provider is active (``memory.provider`` in config.yaml); adding a
second is refused, like Hermes. Every call into the provider is guarded: a provider
that raises or hangs costs a warning, never a turn. Prefetch runs on a worker thread
with a timeout, and a provider still stuck from an earlier turn is skipped.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any, Callable

from .base import MemoryProvider
from .fence import build_memory_context_block

log = logging.getLogger(__name__)

PREFETCH_TIMEOUT_S = 8.0
# Nothing worth recalling for: empty input, slash commands and bare acknowledgements.
_TRIVIAL_RE = re.compile(r"^\s*(?:/\S.*|(?:yes|no|ok|okay|k|thanks|thank you|thx|hi|hello|hey|continue|go on|"
                         r"lgtm|sure|done|cool|great)[\s.!?]*)?$", re.IGNORECASE | re.DOTALL)
CORE_TOOLS = frozenset({"memory", "session_search", "skills_list", "skill_view", "skill_manage"})


def is_trivial(query: str) -> bool:
    return bool(_TRIVIAL_RE.match(query))


class MemoryManager:
    def __init__(self, prefetch_timeout: float = PREFETCH_TIMEOUT_S) -> None:
        if prefetch_timeout <= 0:
            raise ValueError("prefetch_timeout must be > 0")
        self.prefetch_timeout = prefetch_timeout
        self.provider: MemoryProvider | None = None
        self._tool_names: set[str] = set()
        self._stuck: threading.Thread | None = None
        self.warnings: list[str] = []

    def add_provider(self, provider: MemoryProvider) -> bool:
        if self.provider is not None:
            self._warn(f"Rejected memory provider {provider.name!r}: external provider {self.provider.name!r} is "
                       "already registered. Only one external memory provider is allowed at a time; choose it with "
                       "memory.provider in config.yaml.")
            return False
        if not self._guard("is_available", provider.is_available, default=False):
            self._warn(f"Memory provider {provider.name!r} is not available here; continuing without it.")
            return False
        self.provider = provider
        self._tool_names = set()
        for schema in self._guard("tool_schemas", provider.tool_schemas, default=[]):
            schema = schema.get("function", schema)
            name = schema.get("name")
            if not isinstance(name, str) or name in CORE_TOOLS:
                self._warn(f"Ignored provider tool {name!r}: missing name or clashes with a built-in tool.")
                continue
            self._tool_names.add(name)
        return True

    # -- guarded calls --------------------------------------------------------------
    def _warn(self, text: str) -> None:
        log.warning(text)
        self.warnings.append(text)

    def _guard(self, hook: str, call: Callable[..., Any], *args: Any, default: Any = None, **kwargs: Any) -> Any:
        try:
            return call(*args, **kwargs)
        except Exception as exc:  # a provider must never break a turn
            self._warn(f"Memory provider {getattr(self.provider, 'name', '?')!r} failed in {hook}: {exc}")
            return default

    def call(self, hook: str, *args: Any, **kwargs: Any) -> None:
        """Fan a lifecycle hook out to the provider, if any."""
        if self.provider is not None:
            self._guard(hook, getattr(self.provider, hook), *args, **kwargs)

    # -- prompt, recall, tools ------------------------------------------------------
    def system_prompt_block(self) -> str:
        return self._guard("system_prompt_block", self.provider.system_prompt_block, default="") if self.provider else ""

    def recall_fence(self, query: str, session_id: str) -> str:
        """The fenced recall for this user message ('' when nothing was recalled or in time)."""
        if self.provider is None or is_trivial(query):
            return ""
        if self._stuck is not None and self._stuck.is_alive():
            return ""
        box: list[str] = []
        worker = threading.Thread(target=lambda: box.append(self._guard(
            "prefetch", self.provider.prefetch, query, session_id=session_id, default="") or ""),
            name=f"memory-prefetch-{self.provider.name}", daemon=True)
        worker.start()
        worker.join(self.prefetch_timeout)
        if worker.is_alive():
            self._stuck = worker
            self._warn(f"Memory provider {self.provider.name!r} prefetch timed out after {self.prefetch_timeout:g}s.")
            return ""
        return build_memory_context_block(box[0] if box else "")

    def tool_schemas(self) -> list[dict[str, Any]]:
        if self.provider is None:
            return []
        schemas = self._guard("tool_schemas", self.provider.tool_schemas, default=[])
        return [s.get("function", s) for s in schemas if s.get("function", s).get("name") in self._tool_names]

    def handles(self, name: str) -> bool:
        return name in self._tool_names

    def handle_tool_call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        if self.provider is None or name not in self._tool_names:
            return {"success": False, "error": f"No memory provider handles tool {name!r}."}
        try:
            return self.provider.handle_tool_call(name, args)
        except Exception as exc:
            return {"success": False, "error": f"Memory tool {name!r} failed: {exc}"}

    def notify_memory_write(self, args: dict[str, Any], result: dict[str, Any], metadata: dict[str, Any]) -> None:
        """Mirror committed built-in memory writes; staged or failed ones never reach the provider."""
        if self.provider is None or result.get("success") is not True or result.get("staged"):
            return
        operations = args.get("operations") if isinstance(args.get("operations"), list) else [args]
        for op in operations:
            action = op.get("action")
            if action in ("add", "replace", "remove"):
                self.call("on_memory_write", action, args.get("target") or "memory",
                          op.get("content") or op.get("new_text") or "", {**metadata, "old_text": op.get("old_text")})

    def shutdown(self) -> None:
        self.call("shutdown")
