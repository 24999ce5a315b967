"""Memory providers: extra memory systems beside MEMORY.md / USER.md, one at a time.

``memory.provider`` in config.yaml names the active one (empty: none). Built in:
``local``, which recalls from this home's own session archive.
"""

from __future__ import annotations

import logging

from .base import MemoryProvider
from .local import LocalRecallProvider

log = logging.getLogger(__name__)

PROVIDERS = {"local": LocalRecallProvider}


def load_configured_provider(home) -> MemoryProvider | None:
    """The provider named by ``memory.provider``; unknown names are skipped with a warning."""
    name = home.config.str("memory.provider").strip().lower()
    if not name:
        return None
    factory = PROVIDERS.get(name)
    if factory is None:
        log.warning("Unknown memory.provider %r (known: %s); continuing without one.", name, ", ".join(PROVIDERS))
        return None
    return factory(home)


__all__ = ["LocalRecallProvider", "MemoryProvider", "PROVIDERS", "load_configured_provider"]
