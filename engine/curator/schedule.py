"""When the next automatic Curator pass is due, and why (Hermes's gates).

A pass is due when the curator is enabled, not paused (``paused`` in
``skills/.curator_state``, the flag Hermes keeps), ``curator.interval_hours`` have
passed since ``last_run_at``, no agent turn is running, and the home has been idle for
``curator.min_idle_hours``. As in Hermes, a home that was never curated is not curated
on the first check: that check seeds ``last_run_at`` and the first pass waits one
interval. ``check`` is a pure function of its inputs so the rule is testable with a
fixed clock; ``Curator.maybe_run`` applies it.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import PurePath
from typing import Any

from ..clock import stamped
from ..errors import ConfigError, WorkbenchError
from ..skills.usage import iso, parse_iso

HOUR = 3600.0


@dataclass(frozen=True)
class Schedule:
    enabled: bool
    interval_hours: float
    min_idle_hours: float
    consolidate: bool

    @classmethod
    def from_config(cls, config) -> Schedule:
        interval, idle = config.float("curator.interval_hours"), config.float("curator.min_idle_hours")
        if interval <= 0 or idle < 0:
            raise ConfigError(
                f"curator.interval_hours ({interval:g}) must be above 0 and curator.min_idle_hours "
                f"({idle:g}) at least 0. Fix config.yaml."
            )
        return cls(config.bool("curator.enabled"), interval, idle, config.bool("curator.consolidate"))


@dataclass(frozen=True)
class Due:
    due: bool
    reason: str
    next_at: float | None  # when the next pass may run (None: not scheduled at all)
    seed: bool = False  # never run: record ``last_run_at`` now so the first pass waits one interval

    def to_dict(self) -> dict[str, Any]:
        return {"due": self.due, "reason": self.reason, "next_at": iso(self.next_at) if self.next_at else None}


def seeded_only(state: dict[str, Any]) -> bool:
    """Whether ``last_run_at`` is a first check's seed (Hermes's and ours: no pass counted, and the
    "deferred first run" summary both write), which is no pass."""
    count = state.get("run_count")
    return not (isinstance(count, int) and count > 0) and str(state.get("last_run_summary") or "").startswith(
        "deferred first run"
    )


def dry_run_summary(state: dict[str, Any]) -> dict[str, Any] | None:
    """What the last summary describes when it is a dry run's, which Hermes records ("dry-run auto: …") without
    moving ``last_run_at``: that time is the last real pass's, not the summary's. The dry run's own time is in the
    name of the report folder it wrote (``logs/curator/20261206-191733``, UTC), when that folder is its and not
    an older pass's (its report failed); None when the summary is a real pass's."""
    if not str(state.get("last_run_summary") or "").startswith("dry-run "):
        return None
    report = state.get("last_report_path")
    named = re.fullmatch(r"(\d{8}-\d{6})(?:-\d+)?", PurePath(report).name) if isinstance(report, str) else None
    at = datetime.strptime(named[1], "%Y%m%d-%H%M%S").replace(tzinfo=UTC).timestamp() if named else None
    last = parse_iso(state.get("last_run_at"))
    return {"at": iso(at) if at is not None and (last is None or at >= int(last) + 1) else None}


def check(
    schedule: Schedule, state: dict[str, Any], now: float, *, last_activity: float | None, busy: bool = False
) -> Due:
    """Whether a pass should start at ``now``; ``last_activity`` is the home's latest change or message."""
    if not schedule.enabled:
        return Due(False, "curator.enabled is off in config.yaml; no automatic passes.", None)
    if state.get("paused"):
        return Due(False, "paused: no automatic passes until `workbench curator resume` lifts it.", None)
    last = parse_iso(state.get("last_run_at"))
    if last is None:  # (no time to give yet: one counted from now would move on with every look)
        return Due(
            False,
            "never run: the first check, a Hermes gateway's or the workbench TUI's a minute after it opens, "
            f"records its time; the first pass comes one interval ({schedule.interval_hours:g} h) after it.",
            None,
            seed=True,
        )
    next_at = last + schedule.interval_hours * HOUR
    if now < next_at:
        what = "the first pass was deferred at" if seeded_only(state) else "last pass"
        return Due(False, f"{what} {stamped(last)}; the next is due {schedule.interval_hours:g} h later.", next_at)
    if busy:
        return Due(False, "due, but an agent turn is running; it runs once the home is idle.", next_at)
    idle_until = (last_activity or 0.0) + schedule.min_idle_hours * HOUR
    if now < idle_until:
        since = stamped(last_activity) if last_activity is not None else "none recorded"
        return Due(
            False,
            f"due, waiting for {schedule.min_idle_hours:g} h without activity (last activity {since}).",
            idle_until,
        )
    return Due(True, "due: the interval has passed and the home is idle.", next_at)


def last_activity(home) -> float | None:
    """The latest change anyone but the Curator made (journal) or message stored (state.db)."""
    queries = (
        (
            home.workbench_db_path,
            lambda: home.journal.connection(),
            "SELECT max(at) FROM journal WHERE actor != 'curator' AND subsystem != 'curator' AND status = 'done'",
        ),
        (home.state_db_path, lambda: home.archive.conn(), "SELECT max(timestamp) FROM messages"),
    )
    found = []
    for path, connect, sql in queries:
        if not path.exists():
            continue
        try:
            row = connect().execute(sql).fetchone()
        except (sqlite3.Error, WorkbenchError):  # an unreadable database does not block curation; doctor reports it
            continue
        found.append(row[0] if row else None)
    moments = [float(m) for m in found if isinstance(m, (int, float))]
    return max(moments) if moments else None
