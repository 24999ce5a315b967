"""Files the workbench keeps for a person outside any home (crash tracebacks, drafts kept by the editor's
"Take theirs"): how they are named, which there are, and doctor's word on the drafts, so a draft a passing
notice named can be found again. The folder is the skins' (their settings folder); this names no path. A
draft's home is the subfolder it is kept in (``home_drafts``), so a draft stays the person's text, whole."""

from __future__ import annotations

import contextlib
import hashlib
import re
from pathlib import Path

from .clock import shown_time
from .health import Finding

DRAFT = "draft"  # the kind of a draft's file: ``draft-<time>-<random>.txt``
# Kept files of one kind stay as new ones come: the newest KEEP_NEWEST however old (the last few are what a
# person comes back for), then those younger than KEEP_DAYS, up to KEEP_MOST in all (a crash loop never fills
# the folder).
KEEP_NEWEST = 10
KEEP_DAYS = 30
KEEP_MOST = 100


def kept_files(folder: Path, kind: str) -> list[tuple[float, Path]]:
    """(mtime, path) of each file of ``kind`` kept in ``folder`` (``<kind>-YYYYmmdd-HHMMSS-<random>.txt``),
    newest first; none when the folder is missing or cannot be read. Other files there are not theirs."""
    named = re.compile(rf"{re.escape(kind)}-\d{{8}}-\d{{6}}-.+\.txt", re.ASCII)
    files = []
    with contextlib.suppress(OSError):  # (no folder yet, or unreadable: nothing kept that can be shown)
        for path in folder.iterdir():
            with contextlib.suppress(OSError):  # (gone meanwhile)
                if named.fullmatch(path.name) and path.is_file():
                    files.append((path.stat().st_mtime, path))
    return sorted(files, reverse=True)


def home_drafts(folder: Path, root: Path) -> Path:
    """The subfolder of ``folder`` that keeps the drafts of the home at ``root``, named from a hash of its
    resolved path: one folder serves every home of a person, and each home's doctor counts only its own.
    Drafts loose in ``folder`` were kept before drafts recorded their home: of an unknown home."""
    return folder / f"home-{hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]}"


def drafts_findings(folder: Path, root: Path) -> list[Finding]:
    """Doctor's info lines on the drafts "Take theirs" kept in ``folder``: the home at ``root``'s, and those
    of an unknown home, loose in ``folder`` (none said when there are none): how many, the newest and where,
    as both skins' doctor says it. Those of an unknown home may be this home's, so they are named, never moved."""
    pruned = f"the newest {KEEP_NEWEST} stay, and older ones go after {KEEP_DAYS} days."
    found = [
        _drafts_finding(home_drafts(folder, root), "on this home", f"Open one to copy back what you need; {pruned}"),
        _drafts_finding(
            folder,
            "of an unknown home (kept before drafts recorded their home; it may be another's)",
            "Open one to see whose it is and copy back what you need; these stay until you delete them.",
        ),
    ]
    return [finding for finding in found if finding is not None]


def _drafts_finding(folder: Path, whose: str, fix: str) -> Finding | None:
    drafts = kept_files(folder, DRAFT)
    if not drafts:
        return None
    count = len(drafts)
    mtime, newest = drafts[0]
    return Finding(
        "drafts",
        "info",
        f"{count} draft{'s' * (count != 1)} kept by the editor's Take theirs (your text where theirs was "
        f"taken) {whose}, the newest {newest.name} of {shown_time(mtime, '%Y-%m-%d %H:%M')}, in {folder}.",
        fix,
    )
