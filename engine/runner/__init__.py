"""The headless agent runner: sessions, turns, tools, compression and background review."""

from __future__ import annotations

from .records import RequestLog
from .session import AgentSession, TurnResult

__all__ = ["AgentSession", "RequestLog", "TurnResult"]
