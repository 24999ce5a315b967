"""The MemoryProvider interface: an extra memory system beside MEMORY.md / USER.md.

A provider may contribute a block to the system prompt, recall text for each user
message (sent inside the ``<memory-context>`` fence), its own tools, and hooks that
hear about finished turns, built-in memory writes and session boundaries. Every hook
has a harmless default so a provider implements only what it needs.

When each runs (see ``MemoryManager``): ``initialize`` when a session starts;
``system_prompt_block`` when the prompt is built; ``prefetch`` once at the start of
each turn, with a bounded wait (answer from a cache if you can); after a finished
turn, ``sync_turn`` and then ``queue_prefetch`` (warm the next turn's recall) on the
manager's worker thread, in turn order; ``on_memory_write`` for committed built-in
writes; ``on_pre_compress`` before a compression summarises turns away,
``on_session_end`` after it and when a session ends; ``on_session_switch`` when the
conversation moves to another session (reason ``compression``, ``new_session`` or
``resume``); ``shutdown`` once at the end. Third-party providers register in the
``memory_workbench.providers`` entry-point group (see ``engine.providers``).
"""

from __future__ import annotations

from typing import Any


class MemoryProvider:
    name = "provider"

    def is_available(self) -> bool:
        """Whether it can run here (config and dependencies only; no network)."""
        return True

    def initialize(self, session_id: str, **context: Any) -> None:
        """Called once when a session starts (context: home, platform, parent_session_id, ...)."""

    def system_prompt_block(self) -> str:
        """Static text for the system prompt (frozen with it), or ``""``."""
        return ""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Recall for this user message, or ``""``; the runner fences it."""
        return ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Background, after a turn: prepare recall for the next one."""

    def sync_turn(self, user: str, assistant: str, *, session_id: str = "", messages: list | None = None) -> None:
        """A turn finished (not called for interrupted turns); runs on the manager's worker thread."""

    def tool_schemas(self) -> list[dict[str, Any]]:
        return []

    def handle_tool_call(self, name: str, args: dict[str, Any], **context: Any) -> dict[str, Any]:
        """One of its tools was called (context: session_id, message_id of the calling message)."""
        return {"success": False, "error": f"Provider {self.name!r} has no tool {name!r}."}

    def on_memory_write(self, action: str, target: str, content: str, metadata: dict[str, Any]) -> None:
        """A built-in memory write was committed (never called for staged writes)."""

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> None:
        """The middle of the conversation is about to be summarised away."""

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """A session ended (also before a compression rotates it)."""

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", reason: str = "") -> None:
        """The conversation continues in another session (reason: compression, new_session or resume)."""

    def shutdown(self) -> None:
        """Release resources at the end of the run."""
