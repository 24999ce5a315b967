"""Memory providers: extra memory systems beside MEMORY.md / USER.md, one at a time.

``memory.provider`` in config.yaml names the active one (empty: none). Built in:
``local``, a fact store in workbench.db plus recall from this home's session archive.
Third-party providers are Python packages that declare an entry point in the
``memory_workbench.providers`` group; its name is the provider's name and it loads to a
``MemoryProvider`` subclass or any callable that takes the ``Home`` and returns one::

    [project.entry-points."memory_workbench.providers"]
    mynotes = "mynotes.provider:MyNotesProvider"

A built-in name wins over an entry point with the same name. Only one provider runs:
naming several (a list, or commas) keeps the first and refuses the rest.

config.yaml is Hermes's too, so ``memory.provider`` may name one of Hermes's own memory
provider plugins, which Hermes runs and the workbench does not: ``hermes_provider``
says where Hermes finds it and ``configured_note`` says so in one sentence, for
``providers list`` (both skins), ``doctor`` and ``workbench run``.
"""

from __future__ import annotations

import importlib.metadata
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..textsafety import quoted
from .base import MemoryProvider
from .local import LocalProvider
from .manager import refusal

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "memory_workbench.providers"
BUILTIN: dict[str, Callable[[Any], MemoryProvider]] = {"local": LocalProvider}

# Hermes 0.19's bundled memory provider plugins (``plugins/memory/<name>/`` in its package).
# Hermes also loads a user plugin from ``$HERMES_HOME/plugins/<name>/`` whose ``__init__.py``
# mentions ``MemoryProvider`` or ``register_memory_provider``; a bundled name wins a clash.
HERMES_BUNDLED = frozenset(
    {"byterover", "hindsight", "holographic", "honcho", "mem0", "openviking", "retaindb", "supermemory"}
)
WITHOUT_ONE = "MEMORY.md and USER.md only, no provider recall or tools"


@dataclass(frozen=True)
class ProviderSource:
    name: str
    source: str  # "built-in", or "entry point <module:attr> (<distribution>)"
    load: Callable[[], Callable[[Any], MemoryProvider]]


def _built_in(name: str, factory: Callable[[Any], MemoryProvider]) -> ProviderSource:
    return ProviderSource(name, "built-in", lambda: factory)


def installed_providers(warnings: list[str] | None = None) -> dict[str, ProviderSource]:
    """Every provider that could be chosen, by name: built-ins first, then entry points."""
    found = {name: _built_in(name, factory) for name, factory in BUILTIN.items()}
    for point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        name = point.name.strip().lower()
        dist = getattr(point.dist, "name", None)
        source = f"entry point {point.value}" + (f" ({dist})" if dist else "")
        if name in found:
            text = (
                f"Ignored memory provider {source}: the name {quoted(name)} is already taken by {found[name].source}."
            )
            log.warning(text)
            if warnings is not None:
                warnings.append(text)
            continue
        found[name] = ProviderSource(name, source, point.load)
    return found


def configured_names(home) -> list[str]:
    """The provider names ``memory.provider`` holds (a string, comma-separated names or a list)."""
    raw = home.config.raw("memory.provider")
    items = raw if isinstance(raw, list) else str(raw or "").split(",")
    return [name for name in (str(item).strip().lower() for item in items) if name]


def configured_providers(home, warnings: list[str]) -> list[MemoryProvider]:
    """The provider ``memory.provider`` picks (at most one); every problem is appended to ``warnings``."""
    names = configured_names(home)
    if not names:
        return []
    first, *others = names
    warnings.extend(refusal(other, first) for other in others)
    installed = installed_providers(warnings)
    source = installed.get(first)
    if source is None and hermes_provider(home, first):
        note = configured_note(home)
        warnings.append(f"{note.what if note else first} See `workbench providers list`.")
        return []
    if source is None:
        warnings.append(
            f"Unknown memory.provider {quoted(first)} (installed: {', '.join(sorted(installed))}); "
            "continuing without one. See `workbench providers list`."
        )
        return []
    try:
        provider = source.load()(home)
    except Exception as exc:  # a broken plugin must not stop the session
        warnings.append(
            f"Memory provider {quoted(first)} ({source.source}) could not be loaded: {type(exc).__name__}: "
            f"{exc}; continuing without one."
        )
        return []
    if not isinstance(provider, MemoryProvider):
        warnings.append(
            f"Memory provider {quoted(first)} ({source.source}) did not return a MemoryProvider; "
            "continuing without one."
        )
        return []
    return [provider]


def hermes_provider(home, name: str) -> str | None:
    """Where Hermes finds a memory provider plugin called ``name``, in words, or None when it has none."""
    if name in HERMES_BUNDLED:
        return f"a memory provider bundled with Hermes (plugins/memory/{name}/ in Hermes's package)"
    if not name or name.startswith(("_", ".")) or "/" in name or "\\" in name:
        return None
    init = Path(home.root) / "plugins" / name / "__init__.py"
    try:
        with open(init, encoding="utf-8", errors="replace") as handle:
            head = handle.read(8192)  # as much as Hermes reads to tell a memory provider plugin
    except (OSError, ValueError):  # not there, unreadable, or a name no path can hold (a NUL)
        return None
    if "register_memory_provider" in head or "MemoryProvider" in head:
        return f"a Hermes memory provider plugin in this home (plugins/{name}/)"
    return None


@dataclass(frozen=True)
class ProviderNote:
    """What ``memory.provider`` means here when the workbench runs no provider from it.

    ``severity`` is doctor's: ``info`` for one of Hermes's plugins (right for Hermes),
    ``warning`` for a name neither program has; ``what`` says what it is and what runs
    instead, ``advice`` what to do.
    """

    name: str
    severity: str
    what: str
    advice: str

    @property
    def text(self) -> str:
        return f"{self.what} {self.advice}"


def configured_note(home) -> ProviderNote | None:
    """The note on a configured provider the workbench does not run; None when it runs it or none is set."""
    names = configured_names(home)
    if not names or names[0] in installed_providers():
        return None
    name = names[0]
    where = hermes_provider(home, name)
    if where:
        return ProviderNote(
            name,
            "info",
            f"memory.provider is {quoted(name)}: {where}, which Hermes loads and the workbench does not. "
            f"Workbench sessions run without a memory provider: {WITHOUT_ONE}.",
            "Nothing to change: Hermes needs the setting as it is.",
        )
    return ProviderNote(
        name,
        "warning",
        f"memory.provider is {quoted(name)}, which neither the workbench nor Hermes has (Hermes bundles "
        f"{', '.join(sorted(HERMES_BUNDLED))}; a plugin of that name would be plugins/{name}/ in this home), "
        f"so both run without a memory provider: {WITHOUT_ONE}.",
        "Fix the name in config.yaml (`local` is the workbench's own), or remove it.",
    )


def provider_listing(home) -> list[dict[str, Any]]:
    """``{name, active, source}`` for every installed provider, the configured one marked active."""
    names = configured_names(home)
    active = names[0] if names else None
    return [
        {"name": s.name, "active": s.name == active, "source": s.source}
        for s in sorted(installed_providers().values(), key=lambda s: (s.source != "built-in", s.name))
    ]


__all__ = [
    "BUILTIN",
    "ENTRY_POINT_GROUP",
    "HERMES_BUNDLED",
    "LocalProvider",
    "MemoryProvider",
    "ProviderNote",
    "ProviderSource",
    "configured_names",
    "configured_note",
    "configured_providers",
    "hermes_provider",
    "installed_providers",
    "provider_listing",
]
