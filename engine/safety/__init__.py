"""The threat scan for every text that can reach a system prompt (see docs/threat-scan.md)."""

from .prompt import BLOCKED_PREFIX, blocked_line, guard_lines
from .rules import DANGEROUS, SUSPICIOUS
from .scan import ADVICE, CLEAN, LEVELS, MAX_SCAN_CHARS, Finding, Verdict, assess

__all__ = [
    "ADVICE",
    "CLEAN",
    "DANGEROUS",
    "SUSPICIOUS",
    "LEVELS",
    "MAX_SCAN_CHARS",
    "Finding",
    "Verdict",
    "assess",
    "BLOCKED_PREFIX",
    "blocked_line",
    "guard_lines",
]
