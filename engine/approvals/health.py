"""Pending records that cannot be used, for ``workbench doctor`` (the queue skips them)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..counts import counted
from ..health import CHECKS, Finding

if TYPE_CHECKING:
    from ..home import Home


def check_pending(home: Home) -> list[Finding]:
    scan = home.approvals.scan()
    findings = []
    for problem in scan.problems:
        path = Path(problem.path)
        rel = path.relative_to(home.root)
        drop = (
            f"Fix it by hand, or drop it with `workbench pending reject {problem.id}` (its text stays in the journal)."
            if problem.reject_refusal is None
            else problem.reject_refusal
        )
        findings.append(
            Finding(
                "pending",
                "error",
                f"{rel} is not a usable pending record ({problem.error}); it waits for no one and blocks "
                "nothing, and the Approvals screen lists it as unreadable, to reject.",
                drop,
            )
        )
    if scan.records:
        findings.append(
            Finding(
                "pending",
                "info",
                f"{counted(len(scan.records), 'write')} {'waits' if len(scan.records) == 1 else 'wait'} for review "
                "(`workbench pending list`).",
            )
        )
    return findings


CHECKS.append(check_pending)
