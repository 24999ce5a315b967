"""Runs the one configured external memory provider for a session, failing open.

At most one external provider is active (``memory.provider`` in config.yaml); adding a
second is refused, like Hermes. Every call into the provider is guarded: a provider
that raises or hangs costs a warning (passed to ``on_warning``, which the runner shows
in the transcript), never a turn.

Prefetch runs once per turn on a thread of its own, joined with a timeout; a provider
still stuck from an earlier turn is skipped. Everything after the turn (``sync_turn``
then ``queue_prefetch``, mirrored memory writes, compression and session-boundary
hooks) goes to one FIFO worker thread, so hooks run in the order they happened and
the next turn never waits for them. ``shutdown`` drains that queue with a bound, then
calls the provider's own ``shutdown`` with a bound too.
"""

from __future__ import annotations

import inspect
import logging
import re
import threading
import time
from collections.abc import Callable
from typing import Any

from ..textsafety import quoted
from ..worker import SerialWorker
from .base import MemoryProvider
from .fence import build_memory_context_block

log = logging.getLogger(__name__)

PREFETCH_TIMEOUT_S = 8.0
HOOK_STUCK_S = 5.0  # a hook running longer than this is reported (once) when more work queues behind it
DRAIN_TIMEOUT_S = 5.0
# Nothing worth recalling for: empty input, slash commands and bare acknowledgements.
_TRIVIAL_RE = re.compile(
    r"^\s*(?:/\S.*|(?:yes|no|ok|okay|k|thanks|thank you|thx|hi|hello|hey|continue|go on|"
    r"lgtm|sure|done|cool|great)[\s.!?]*)?$",
    re.IGNORECASE | re.DOTALL,
)
CORE_TOOLS = frozenset({"memory", "session_search", "skills_list", "skill_view", "skill_manage"})


def is_trivial(query: str) -> bool:
    return bool(_TRIVIAL_RE.match(query))


def refusal(refused: str, active: str) -> str:
    """Why a second external provider is not added."""
    return (
        f"Refused memory provider {quoted(refused)}: {quoted(active)} is already active, and only one external memory "
        "provider can run at a time. Pick one with memory.provider in config.yaml."
    )


def _accepts(function: Callable[..., Any], name: str) -> bool:
    """Whether ``function`` takes a keyword ``name`` (or ``**kwargs``): older providers get older calls."""
    try:
        params = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == name or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


class MemoryManager:
    def __init__(
        self, prefetch_timeout: float = PREFETCH_TIMEOUT_S, on_warning: Callable[[str], None] | None = None
    ) -> None:
        if prefetch_timeout <= 0:
            raise ValueError("prefetch_timeout must be > 0")
        self.prefetch_timeout = prefetch_timeout
        self.on_warning = on_warning
        self.provider: MemoryProvider | None = None
        self._tool_names: set[str] = set()
        self._stuck: threading.Thread | None = None
        self._worker = SerialWorker("mem-sync")
        self._current_hook = ""
        self._reported_stuck: float | None = None
        self.warnings: list[str] = []

    def add_provider(self, provider: MemoryProvider) -> bool:
        if self.provider is not None:
            self._warn(refusal(provider.name, self.provider.name))
            return False
        if not self._guard("is_available", provider.is_available, default=False, provider=provider):
            self._warn(f"Memory provider {quoted(provider.name)} is not available here; continuing without it.")
            return False
        self.provider = provider
        self._tool_names = set()
        for schema in self._guard("tool_schemas", provider.tool_schemas, default=[]):
            schema = schema.get("function", schema)
            name = schema.get("name")
            if not isinstance(name, str) or name in CORE_TOOLS:
                self._warn(f"Ignored provider tool {quoted(name)}: missing name or clashes with a built-in tool.")
                continue
            self._tool_names.add(name)
        return True

    # -- guarded calls --------------------------------------------------------------
    def _warn(self, text: str) -> None:
        log.warning(text)
        self.warnings.append(text)
        if self.on_warning is not None:
            try:
                self.on_warning(text)
            except Exception:
                log.exception("on_warning callback failed")

    def _guard(
        self,
        hook: str,
        call: Callable[..., Any],
        *args: Any,
        default: Any = None,
        provider: MemoryProvider | None = None,
        **kwargs: Any,
    ) -> Any:
        try:
            return call(*args, **kwargs)
        except Exception as exc:  # a provider must never break a turn
            name = getattr(provider or self.provider, "name", "?")
            self._warn(f"Memory provider {quoted(name)} failed in {hook}: {type(exc).__name__}: {exc}")
            return default

    def call(self, hook: str, *args: Any, **kwargs: Any) -> None:
        """Run a hook now (``initialize``) and wait for it at most the prefetch timeout; failures become warnings."""
        if self.provider is None:
            return
        worker = threading.Thread(
            target=self._guard,
            args=(hook, getattr(self.provider, hook), *args),
            kwargs=kwargs,
            name=f"memory-{hook}-{self.provider.name}",
            daemon=True,
        )
        worker.start()
        worker.join(self.prefetch_timeout)
        if worker.is_alive():
            self._warn(
                f"Memory provider {quoted(self.provider.name)} {hook} did not return within "
                f"{self.prefetch_timeout:g}s; the session goes on."
            )

    def call_later(self, hook: str, *args: Any, **kwargs: Any) -> None:
        """Queue a hook on the worker thread, after everything queued before it."""
        if self.provider is None:
            return
        self._report_stuck(self.provider)

        def job() -> None:
            self._current_hook = hook
            self._guard(hook, getattr(self.provider, hook), *args, **kwargs)

        if not self._worker.submit(job):
            self._warn(f"Memory provider {quoted(self.provider.name)}: {hook} arrived after shutdown and was dropped.")

    def _report_stuck(self, provider: MemoryProvider) -> None:
        since = self._worker.busy_since
        if since is not None and time.monotonic() - since > HOOK_STUCK_S and self._reported_stuck != since:
            self._reported_stuck = since
            self._warn(
                f"Memory provider {quoted(provider.name)} has been stuck in {self._current_hook} for "
                f"{time.monotonic() - since:.0f}s; its later hooks wait behind it (turns go on)."
            )

    def flush_pending(self, timeout: float | None = None) -> bool:
        """Wait until every queued hook has run; False when ``timeout`` passed first."""
        return self._worker.drain(timeout)

    # -- prompt, recall, tools ------------------------------------------------------
    def system_prompt_block(self) -> str:
        return (
            self._guard("system_prompt_block", self.provider.system_prompt_block, default="") if self.provider else ""
        )

    def recall_fence(self, query: str, session_id: str) -> str:
        """The fenced recall for this user message ('' when nothing was recalled or in time)."""
        provider = self.provider
        if provider is None or is_trivial(query):
            return ""
        if self._stuck is not None and self._stuck.is_alive():
            return ""
        box: list[str] = []
        worker = threading.Thread(
            target=lambda: box.append(
                self._guard("prefetch", provider.prefetch, query, session_id=session_id, default="") or ""
            ),
            name=f"memory-prefetch-{provider.name}",
            daemon=True,
        )
        worker.start()
        worker.join(self.prefetch_timeout)
        if worker.is_alive():
            self._stuck = worker
            self._warn(
                f"Memory provider {quoted(provider.name)} prefetch timed out after {self.prefetch_timeout:g}s; "
                "this turn goes on without its recall."
            )
            return ""
        return build_memory_context_block(box[0] if box else "")

    def sync_turn(self, user: str, assistant: str, *, session_id: str, messages: list[dict[str, Any]]) -> None:
        """After a finished turn: ``sync_turn`` then ``queue_prefetch``, queued in turn order."""
        if self.provider is None:
            return
        extra = {"messages": messages} if _accepts(self.provider.sync_turn, "messages") else {}
        self.call_later("sync_turn", user, assistant, session_id=session_id, **extra)
        if not is_trivial(user):
            self.call_later("queue_prefetch", user, session_id=session_id)

    def tool_schemas(self) -> list[dict[str, Any]]:
        if self.provider is None:
            return []
        schemas = self._guard("tool_schemas", self.provider.tool_schemas, default=[])
        return [s.get("function", s) for s in schemas if s.get("function", s).get("name") in self._tool_names]

    def handles(self, name: str) -> bool:
        return name in self._tool_names

    def handle_tool_call(self, name: str, args: dict[str, Any], **context: Any) -> dict[str, Any]:
        if self.provider is None or name not in self._tool_names:
            return {"success": False, "error": f"No memory provider handles tool {name!r}."}
        try:
            if context and _accepts(self.provider.handle_tool_call, "session_id"):
                return self.provider.handle_tool_call(name, args, **context)
            return self.provider.handle_tool_call(name, args)
        except Exception as exc:
            return {"success": False, "error": f"Memory tool {name!r} failed: {exc}"}

    def notify_memory_write(self, args: dict[str, Any], result: dict[str, Any], metadata: dict[str, Any]) -> None:
        """Mirror committed built-in memory writes; staged or failed ones never reach the provider."""
        if self.provider is None or result.get("success") is not True or result.get("staged"):
            return
        listed = args.get("operations")
        operations = listed if isinstance(listed, list) else [args]
        for op in operations:
            action = op.get("action")
            if action in ("add", "replace", "remove"):
                self.call_later(
                    "on_memory_write",
                    action,
                    args.get("target") or "memory",
                    op.get("content") or op.get("new_text") or "",
                    {**metadata, "old_text": op.get("old_text")},
                )

    def shutdown(self) -> None:
        """Drain the queued hooks (bounded), then the provider's own ``shutdown`` (bounded); idempotent."""
        if self.provider is None:
            return
        provider, left = self.provider, 0
        if not self._worker.close(DRAIN_TIMEOUT_S):
            left = self._worker.pending()
            self._warn(
                f"Memory provider {quoted(provider.name)} did not finish its queued hooks within "
                f"{DRAIN_TIMEOUT_S:g}s; {left} left behind."
            )
        closer = threading.Thread(
            target=self._guard,
            args=("shutdown", provider.shutdown),
            daemon=True,
            name=f"memory-shutdown-{provider.name}",
        )
        closer.start()
        closer.join(DRAIN_TIMEOUT_S)
        if closer.is_alive():
            self._warn(f"Memory provider {quoted(provider.name)} shutdown did not return within {DRAIN_TIMEOUT_S:g}s.")
        self.provider = None
