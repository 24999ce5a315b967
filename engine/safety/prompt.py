"""Prompt-build-time guarding: dangerous text becomes a ``[BLOCKED: …]`` line.

Every text that reaches a system prompt passes here when the prompt is built, whatever
wrote it and whenever: memory entries, skill names and descriptions, category
descriptions, SOUL.md and AGENTS.md. Nothing in the text can exempt itself: a line that
already starts with ``[BLOCKED:`` is scanned like any other.
"""

from __future__ import annotations

from .scan import Verdict, assess

BLOCKED_PREFIX = "[BLOCKED:"


def blocked_line(what: str, verdict: Verdict, remedy: str) -> str:
    """``[BLOCKED: <what> contained threat pattern(s): <ids>. <remedy>]``."""
    return f"{BLOCKED_PREFIX} {what} contained threat pattern(s): {', '.join(verdict.ids)}. {remedy}]"


def guard_lines(text: str, what: str, remedy: str) -> str:
    """A file's text with each dangerous line replaced by a blocked line.

    When the danger spans lines (an HTML comment, a payload split in two), no single
    line shows it, and the whole text is replaced instead.
    """
    if not assess(text).dangerous:
        return text
    lines, kept = [], []
    for number, line in enumerate(text.split("\n"), 1):
        verdict = assess(line)
        lines.append(blocked_line(f"{what} line {number}", verdict, remedy) if verdict.dangerous else line)
        kept += [] if verdict.dangerous else [line]
    rest = assess("\n".join(kept))
    return blocked_line(what, rest, remedy) if rest.dangerous else "\n".join(lines)
