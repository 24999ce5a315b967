"""``workbench doctor``: every part's health checks, and with ``--fix`` their safe repairs.

Check modules register their checks and repairs in ``engine.health`` when imported;
``CHECK_MODULES`` lists them, so adding a part's checks is one line here. A repair runs
only for a finding that names it, and the home is examined again afterwards, so the
findings reported are what is still wrong.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .counts import counted
from .errors import WorkbenchError
from .health import CHECKS, FIXES, NEEDS_CONFIG, Finding
from .kept_files import drafts_findings

if TYPE_CHECKING:
    from pathlib import Path

    from .home import Home

CHECK_MODULES = (
    "engine.home_health",
    "engine.archive.health",
    "engine.memory.health",
    "engine.approvals.health",
    "engine.skills.health",
    "engine.archive.upkeep",
    "engine.kept",
    "engine.providers.health",
)


NOT_WITHOUT_CONFIG = (
    "not run: it depends on settings in config.yaml, which could not be read (see the config finding); "
    "nothing was changed by it. Fix config.yaml, then run `workbench doctor --fix` again"
)


@dataclass
class Report:
    findings: list[Finding]
    repairs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Nothing needs attention (info lines do not count)."""
        return not any(f.needs_attention for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "findings": [f.to_dict() for f in self.findings], "repairs": self.repairs}


def load_checks() -> None:
    for name in CHECK_MODULES:
        importlib.import_module(name)


def examine(home: Home) -> list[Finding]:
    """Run every registered check; a check that breaks is itself a finding, never fatal."""
    load_checks()
    findings: list[Finding] = []
    for check in CHECKS:
        try:
            findings.extend(check(home))
        except Exception as exc:  # a diagnostic tool reports its own failures and carries on
            findings.append(
                Finding(
                    "doctor",
                    "error",
                    f"The check {check.__module__}.{check.__name__} could not run: "
                    f"{getattr(exc, 'message', None) or exc}.",
                    "The other checks ran; fix what they report and run doctor again.",
                )
            )
    return findings


def run_doctor(home: Home, fix: bool = False, drafts: Path | None = None) -> Report:
    """The findings; with ``fix``, each named repair made, in rounds: a repair can uncover what another
    mends (a file that is not UTF-8 gets its byte-order mark and line-ending findings only once its bytes
    are replaced), so the home is examined again after each round and the repairs new findings name run
    too, each at most once, so one run makes all it can. ``drafts``: the skin's folder of drafts kept by
    "Take theirs" (not the home's), said as info lines when it holds any of this home's or of an unknown
    home (``kept_files.drafts_findings``)."""
    findings = examine(home)
    repairs: list[dict[str, Any]] = []
    tried: set[str] = set()
    while fix and (names := [n for n in dict.fromkeys(f.repair for f in findings if f.repair) if n not in tried]):
        tried.update(names)
        repairs += [_repair(home, name) for name in names]
        findings = examine(home)
    kept = drafts_findings(drafts, home.root) if drafts is not None else []
    return Report(findings + kept, repairs)


def _repair(home: Home, name: str) -> dict[str, Any]:
    """One named repair, as a report's row: what it did, or why it did not."""
    if home.config_refused and name in NEEDS_CONFIG:  # its settings would be the defaults, not the user's
        return {"repair": name, "success": False, "error": NOT_WITHOUT_CONFIG}
    try:
        return {"repair": name, "success": True, "message": FIXES[name](home)}
    except WorkbenchError as exc:
        return {"repair": name, "success": False, "error": exc.message}
    except OSError as exc:
        return {"repair": name, "success": False, "error": f"{exc.strerror or exc}; nothing more was changed"}
    except Exception as exc:  # as for checks: reported, never fatal
        return {"repair": name, "success": False, "error": f"the repair broke ({exc}); nothing more was changed by it"}


MARKS = {"error": "✗", "warning": "!", "info": "·"}
LABEL = re.compile(r" *(\S \S+ +|fix: )?")
"""A report line's indent and label (a finding's mark and area, or a fix's ``fix:``): each skin wraps the
rest under the text's start, so a finding's lines read as one, right of its area."""


def needing_attention(count: int) -> str:
    """``1 finding needs attention``, ``3 findings need attention``: the report's last line and the CLI's
    error say it alike."""
    return f"{counted(count, 'finding')} {'needs' if count == 1 else 'need'} attention"


def render(data: dict) -> str:
    """A report (``Report.to_dict``) as lines to read: what was fixed, then the findings, worst first, each
    with its fix; `workbench doctor` prints it and the TUI's Doctor dialog shows it."""
    lines = [
        ("fixed: " if r["success"] else "could not fix: ") + (r.get("message") or r.get("error", ""))
        for r in data["repairs"]
    ]
    findings = data["findings"]
    attention = [f for f in findings if f["severity"] != "info"]
    lines.append(f"doctor: {needing_attention(len(attention))}" if attention else "doctor: all good")
    for finding in sorted(findings, key=lambda f: ("error", "warning", "info").index(f["severity"])):
        what = finding["what"].replace("\n", "\n" + " " * 13)  # (a YAML error's lines stay in its column)
        lines.append(f"  {MARKS[finding['severity']]} {finding['area']:<8} {what}")
        if finding["fix"]:
            lines.append(f"    {'':<8} fix: {finding['fix']}")
    if any(f["repair"] for f in attention):
        lines.append("`workbench doctor --fix` repairs the ones it can safely; the rest say what to do.")
    return "\n".join(lines)  # shown through each skin's one text-safety policy
