"""Curated memory: MEMORY.md (agent notes) and USER.md (user profile), Hermes-compatible."""

from .format import (
    BLOCK_TITLES,
    ENTRY_DELIMITER,
    FILE_NAMES,
    TARGETS,
    Usage,
    parse_entries,
    render_block,
    serialize,
)
from .snapshot import MemorySnapshot
from .store import MemoryFileUnreadable, MemoryStore

__all__ = [
    "BLOCK_TITLES",
    "ENTRY_DELIMITER",
    "FILE_NAMES",
    "MemoryFileUnreadable",
    "MemorySnapshot",
    "MemoryStore",
    "TARGETS",
    "Usage",
    "parse_entries",
    "render_block",
    "serialize",
]
