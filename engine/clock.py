"""An injectable clock, so tests and snapshots can pin time."""

from __future__ import annotations

import time
from datetime import UTC, datetime


class Clock:
    """Wall-clock time; subclass or use FixedClock where determinism matters."""

    def now(self) -> float:
        return time.time()

    def iso(self) -> str:
        return datetime.fromtimestamp(self.now(), UTC).isoformat(timespec="seconds")


class FixedClock(Clock):
    """A clock that only moves when told to."""

    def __init__(self, start: float):
        self._now = float(start)

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds

    def set(self, when: float) -> None:
        self._now = float(when)
