"""YAML from files a person or another program wrote, read with bounds.

Config files and SKILL.md frontmatter are data, not programs: aliases (the "billion
laughs" bomb), nesting deeper than any real file needs, and very large documents are
refused before anything is built, with a ``yaml.YAMLError`` so that every caller's
existing "malformed YAML" message applies.
"""

from __future__ import annotations

from typing import Any

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_CHARS = 1_000_000
MAX_DEPTH = 50


class YAMLRefused(yaml.YAMLError):
    """The document is well-formed but outside what we read (alias, depth, size)."""

    def __init__(self, problem: str):
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = None


def check_bounds(text: str, *, max_chars: int = MAX_CHARS, max_depth: int = MAX_DEPTH) -> None:
    """Raise ``YAMLRefused`` for aliases, deep nesting or size; ``yaml.YAMLError`` if malformed."""
    if len(text) > max_chars:
        raise YAMLRefused(f"{len(text):,} characters is more than the {max_chars:,} read")
    depth = 0
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, yaml.AliasEvent):
            raise YAMLRefused("aliases (*name) are not accepted; write the value out in full")
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            if event.anchor is not None:
                raise YAMLRefused("anchors (&name) are not accepted; write the value out in full")
            depth += 1
            if depth > max_depth:
                raise YAMLRefused(f"nested more than {max_depth} levels deep")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
        elif isinstance(event, yaml.ScalarEvent) and event.anchor is not None:
            raise YAMLRefused("anchors (&name) are not accepted; write the value out in full")


def load_yaml(text: str, **bounds: int) -> Any:
    """``safe_load`` of ``text`` after ``check_bounds``."""
    check_bounds(text, **bounds)
    try:
        return yaml.load(text, Loader=_LOADER)
    except (ValueError, OverflowError) as exc:  # a scalar YAML cannot build, e.g. the date 2026-13-45
        raise YAMLRefused(f"a value cannot be read ({exc}); quote it") from None
