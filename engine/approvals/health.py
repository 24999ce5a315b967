"""Pending records that cannot be used, for ``workbench doctor`` (the queue skips them)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..health import CHECKS, Finding
from .records import is_pending_id

if TYPE_CHECKING:
    from ..home import Home


def check_pending(home: Home) -> list[Finding]:
    scan = home.approvals.scan()
    findings = []
    for problem in scan.problems:
        path = Path(problem.path)
        rel = path.relative_to(home.root)
        drop = (
            f"or drop it with `workbench pending reject {path.stem}` (its text stays in the journal)"
            if is_pending_id(path.stem)
            else "or move it out of the pending folder"
        )
        findings.append(
            Finding(
                "pending",
                "error",
                f"{rel} is not a usable pending record ({problem.error}); it "
                "waits for no one and blocks nothing, but it is never shown for review.",
                f"Fix it by hand, {drop}.",
            )
        )
    if scan.records:
        findings.append(
            Finding("pending", "info", f"{len(scan.records)} write(s) wait for review (`workbench pending list`).")
        )
    return findings


CHECKS.append(check_pending)
