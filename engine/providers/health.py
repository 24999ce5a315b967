"""The configured memory provider, for ``workbench doctor``: one the workbench does not run is named,
and so is one only the workbench runs (Hermes then runs without a provider on the same home)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..health import CHECKS, Finding
from ..textsafety import quoted
from . import HERMES_BUNDLED, WITHOUT_ONE, configured_names, configured_note, hermes_provider

if TYPE_CHECKING:
    from ..home import Home


def check_provider(home: Home) -> list[Finding]:
    if home.config_refused:  # the config finding says why; its settings are only the defaults here
        return []
    note = configured_note(home)
    if note:
        return [Finding("provider", note.severity, note.what, note.advice)]
    names = configured_names(home)
    if not names or hermes_provider(home, names[0]):
        return []
    return [
        Finding(
            "provider",
            "info",
            f"memory.provider is {quoted(names[0])}: the workbench's own, which Hermes does not have, so Hermes's "
            f"sessions on this home run without a memory provider: {WITHOUT_ONE}.",
            "Nothing to change unless Hermes should use one too: it bundles "
            f"{', '.join(sorted(HERMES_BUNDLED))} (a plugin in plugins/NAME/ of this home also counts).",
        )
    ]


CHECKS.append(check_provider)
