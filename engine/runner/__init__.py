"""The headless agent runner: sessions, turns, tools, compression and background review.

Its session and request log load when first named here (``engine.runner.AgentSession``), not with
the package: a session listing reads ``engine.runner.claims`` alone, and importing the session with
it brought the models and providers too (about 50 ms of CPU in every ``sessions`` command).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .records import RequestLog
    from .session import AgentSession, TurnResult

__all__ = ["AgentSession", "RequestLog", "TurnResult"]
_HOMES = {"AgentSession": ".session", "TurnResult": ".session", "RequestLog": ".records"}


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_HOMES[name], __name__), name)
