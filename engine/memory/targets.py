"""The memory targets (stores): one row each, and everything else derives from the rows.

The store, the memory tool's schema, the prompt builder, the offline model, the
background review, the file watcher and both skins read the targets from here, so
adding one is a row: its config defaults (a char limit, and on) are part of it.

``TARGETS`` and the ``FILE_NAMES`` / ``BLOCK_TITLES`` / ``LABELS`` / ``SHORT_NAMES`` / ``HEADINGS``
mappings are live views of the registry, in registration order, not copies.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class MemoryTarget:
    name: str  # the tool's ``target`` value
    file: str  # the file in memories/
    title: str  # the heading of its block in the system prompt
    label: str  # the store in words, for messages ("user profile")
    short: str  # the store in one word, for titles ("USER")
    limit_key: str  # config key of its char limit
    enabled_key: str  # config key that puts it in the prompt and lets the agent write it (default: on)
    default_limit: int  # chars, when config.yaml sets none
    about: str = ""  # the store for a person reading the CLI (``title`` is addressed to the agent); else ``label``

    @property
    def heading(self) -> str:
        """What ``memory show`` heads the store with: its file and what it is, to a human
        (``MEMORY.md (the agent's notes)``); the prompt block keeps Hermes's ``title``."""
        return f"{self.file} ({self.about or self.label})"


REGISTRY: dict[str, MemoryTarget] = {
    t.name: t
    for t in (
        MemoryTarget(
            "memory",
            "MEMORY.md",
            "MEMORY (your personal notes)",
            "memory",
            "MEMORY",
            "memory.memory_char_limit",
            "memory.memory_enabled",
            2200,  # Hermes's default
            "the agent's notes",
        ),
        MemoryTarget(
            "user",
            "USER.md",
            "USER PROFILE (who the user is)",
            "user profile",
            "USER",
            "memory.user_char_limit",
            "memory.user_profile_enabled",
            1375,  # Hermes's default
            "the agent's profile of you",
        ),
    )
}


def target(name: str) -> MemoryTarget:
    return REGISTRY[name]


def target_defaults() -> dict[str, int | bool]:
    """The config defaults the rows hold (``engine.config.default_value`` reads them)."""
    defaults: dict[str, int | bool] = {}
    for row in REGISTRY.values():
        defaults[row.limit_key] = row.default_limit
        defaults[row.enabled_key] = True
    return defaults


def next_target(name: str) -> str:
    """The target after ``name``, wrapping round (the Memory screen's ``t`` key)."""
    names = list(REGISTRY)
    return names[(names.index(name) + 1) % len(names)] if name in REGISTRY else names[0]


class _Names(Sequence[str]):
    def __getitem__(self, index):
        return list(REGISTRY)[index]

    def __len__(self) -> int:
        return len(REGISTRY)

    def __iter__(self) -> Iterator[str]:
        return iter(list(REGISTRY))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in REGISTRY

    def __repr__(self) -> str:
        return repr(tuple(REGISTRY))


class _Field(Mapping[str, str]):
    def __init__(self, field: str):
        self._field = field

    def __getitem__(self, name: str) -> str:
        return getattr(REGISTRY[name], self._field)

    def __iter__(self) -> Iterator[str]:
        return iter(list(REGISTRY))

    def __len__(self) -> int:
        return len(REGISTRY)


TARGETS = _Names()
FILE_NAMES = _Field("file")
BLOCK_TITLES = _Field("title")
LABELS = _Field("label")
SHORT_NAMES = _Field("short")
HEADINGS = _Field("heading")
