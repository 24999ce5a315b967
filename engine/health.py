"""Findings about a home's health, for ``workbench doctor``.

Each part that owns files contributes a check: a function ``(home) -> list[Finding]``
listed in ``CHECKS`` below. A finding says what is wrong and how to fix it; one that
``doctor --fix`` can repair safely names the repair, run through ``FIXES``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .home import Home

SEVERITIES = ("info", "warning", "error")


@dataclass(frozen=True)
class Finding:
    """One observation: ``area`` (archive, memory, ...), ``severity``, ``what`` and ``fix``.

    ``repair`` names an entry of ``FIXES`` when ``doctor --fix`` can repair it safely.
    Only warnings and errors need attention; info lines (links, sizes) are reported.
    """

    area: str
    severity: str
    what: str
    fix: str = ""
    repair: str = ""

    @property
    def needs_attention(self) -> bool:
        return self.severity != "info"

    def to_dict(self) -> dict:
        return asdict(self)


Check = Callable[["Home"], list[Finding]]
Repair = Callable[["Home"], str]

# Filled by the parts that own files; doctor runs every check, then --fix every named repair.
CHECKS: list[Check] = []
FIXES: dict[str, Repair] = {}
# Repairs that read settings from config.yaml (a memory write reads the char limits): not run on a
# home whose config.yaml was not taken (``Home.config_refused``), whose settings are only defaults.
NEEDS_CONFIG: set[str] = set()


def _links(home: Home) -> list[Finding]:
    from .fileio import check_links
    from .home_health import lock_files

    # a linked lock file is the files check's: its one fix is removing it, not repointing it
    return check_links(home, skip={Path(entry.path).relative_to(home.root).as_posix() for entry in lock_files(home)})


def _line_endings(home: Home) -> list[Finding]:
    from .memory.repair import check_line_endings

    return check_line_endings(home)


def _normalize_line_endings(home: Home) -> str:
    from .memory.repair import normalise_all

    return normalise_all(home)


def _marks(home: Home) -> list[Finding]:
    from .memory.repair import check_marks

    return check_marks(home)


def _unmark(home: Home) -> str:
    from .memory.repair import unmark_all

    return unmark_all(home)


def _mend(home: Home) -> str:
    from .memory.repair import mend_all

    return mend_all(home)


def _unspace(home: Home) -> str:
    from .memory.repair import unspace_all

    return unspace_all(home)


CHECKS += [_links, _line_endings, _marks]
FIXES["memory-line-endings"] = _normalize_line_endings
FIXES["memory-bom"] = _unmark
FIXES["memory-spacing"] = _unspace
FIXES["memory-encoding"] = _mend  # (reads no setting: its text is the file's, whatever the limits)
NEEDS_CONFIG.update({"memory-line-endings", "memory-bom", "memory-spacing"})
