"""An injectable clock, so tests and snapshots can pin time."""

from __future__ import annotations

import time
from datetime import UTC, datetime


def shown_time(value: float | str | None, spec: str = "%Y-%m-%d %H:%M") -> str | None:
    """A time as people read it: epoch seconds or an ISO-8601 text, in this machine's time zone (``TZ``),
    as Hermes's own CLI shows times and names its sessions. What is stored and ``--json`` keep ISO-8601
    UTC. None for no time a calendar can show."""
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value) if isinstance(value, str) else datetime.fromtimestamp(float(value), UTC)
        return moment.astimezone().strftime(spec)  # (a naive ISO text is read as local, as Python reads it)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def stamped(value: float | str | None, *, seconds: bool = False) -> str | None:
    """A time that stands alone in a text (no column of times around it to say the zone): local, the
    zone named (``2026-11-30 21:00 JST``); a stored text no calendar can read is shown as stored."""
    spec = "%Y-%m-%d %H:%M:%S %Z" if seconds else "%Y-%m-%d %H:%M %Z"
    return shown_time(value, spec) or (value if isinstance(value, str) else None)


def zone_name() -> str:
    """This machine's time zone as times are shown in it now (``JST``, ``UTC``)."""
    return datetime.now().astimezone().tzname() or "local time"


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


def days(count: float) -> str:
    """A number of days as words: ``1 day``, ``0.5 days``, ``30 days`` (for every skin, and the journal's summaries)."""
    return f"{count:g} day" + ("" if count == 1 else "s")
