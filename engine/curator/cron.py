"""The skills Hermes's cron jobs name (``cron/jobs.json``).

A job loads its skills when it fires, and only a firing counts as a use, so a job that fires less
often than the archive window, or one paused, would have its skills aged out from under it: the
Curator never ages a skill a job names (as Hermes's does), and a consolidation points the jobs
naming an absorbed skill at its umbrella.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..fileio import UnsafePath


def jobs_path(home) -> Path:
    return home.root / "cron" / "jobs.json"


def load_jobs(home) -> tuple[Any, list[Any]] | None:
    """(the file's JSON, its list of jobs), or None when there is no jobs file we can read: Hermes's own
    form ``{"jobs": [...]}`` and the bare list it repairs are both read."""
    try:
        data = json.loads(home.links.read_text(jobs_path(home), "utf-8-sig"))
    except (OSError, ValueError, RecursionError, UnsafePath):
        return None
    jobs = data.get("jobs") if isinstance(data, dict) else data
    return (data, jobs) if isinstance(jobs, list) else None


def skills_of(job: dict[str, Any]) -> list[str]:
    """The skills a job names, in order and once each: its ``skills`` (a list or one name), else the
    single ``skill`` older jobs carry. A value of another kind names nothing (it never hides the rest)."""
    listed = job.get("skills")
    raw = listed if listed is not None else job.get("skill")
    items = raw if isinstance(raw, list) else [raw]
    names: list[str] = []
    for item in items:
        text = str(item).strip() if isinstance(item, str | int) else ""
        if text and text not in names:
            names.append(text)
    return names


def _names(job: Any) -> list[str]:
    """The skill names a job's entry names, as Hermes compares them with skills' (a leading ``/`` dropped)."""
    return [name.lstrip("/") for name in skills_of(job) if name.lstrip("/")] if isinstance(job, dict) else []


def _jobs(home) -> list[Any]:
    loaded = load_jobs(home)
    return loaded[1] if loaded else []


def named_skills(home) -> frozenset[str]:
    """Every skill name a job names, paused and disabled jobs included (resuming one must find them)."""
    return frozenset(name for job in _jobs(home) for name in _names(job))


def jobs_naming(home, skill: str) -> list[str]:
    """The jobs (by name, else id) that name ``skill``: archiving it leaves them running without it."""
    return [str(job.get("name") or job.get("id") or "unnamed") for job in _jobs(home) if skill in _names(job)]
