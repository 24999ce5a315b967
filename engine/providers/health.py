"""The configured memory provider, for ``workbench doctor``: one the workbench does not run is named."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..health import CHECKS, Finding
from . import configured_note

if TYPE_CHECKING:
    from ..home import Home


def check_provider(home: Home) -> list[Finding]:
    if home.config_refused:  # the config finding says why; its settings are only the defaults here
        return []
    note = configured_note(home)
    return [Finding("provider", note.severity, note.what, note.advice)] if note else []


CHECKS.append(check_provider)
