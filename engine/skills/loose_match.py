"""Where Hermes's own patch would find a skill patch's ``old_string``: how many places its loose
matching (``tools/fuzzy_match.py`` in Hermes 0.19.0, which ``skill_manage``'s patch and so
``/skills approve`` use) takes for it in a file's text, found as Hermes finds them.

The workbench applies a patch only where ``old_string`` is found exactly (so the diff shown is
what is written). When it is not, whether Hermes's approval would still apply it decides what a
refusal can advise: approve it in Hermes, or reject it, since neither can. Hermes tries its
strategies in order and the first that finds anything decides; this does the same, counting
places only (the text Hermes would write is not predicted: it re-indents and unescapes).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from difflib import SequenceMatcher

# Hermes's UNICODE_MAP: typographic characters and their ASCII stand-ins
_UNICODE = {
    "\u201c": '"',
    "\u201d": '"',
    "\u2018": "'",
    "\u2019": "'",
    "\u2014": "--",
    "\u2013": "-",
    "\u2026": "...",
    "\u00a0": " ",
}


def _ascii(text: str) -> str:
    for char, stand_in in _UNICODE.items():
        text = text.replace(char, stand_in)
    return text


def _exact(text: str, pattern: str) -> int:
    return text.count(pattern) if pattern else 0


def _windows(lines: list[str], size: int) -> range:
    return range(len(lines) - size + 1)


def _by_lines(text: str, pattern: str, norm: Callable[[str], str]) -> int:
    """Blocks of whole lines equal to the pattern's lines once each line is normalised."""
    wanted = [norm(line) for line in pattern.split("\n")]
    lines = [norm(line) for line in text.split("\n")]
    return sum(lines[i : i + len(wanted)] == wanted for i in _windows(lines, len(wanted)))


def _line_trimmed(text: str, pattern: str) -> int:
    return _by_lines(text, pattern, str.strip)


def _whitespace_collapsed(text: str, pattern: str) -> int:
    def collapse(s: str) -> str:
        return re.sub(r"[ \t]+", " ", s)

    return _exact(collapse(text), collapse(pattern))


def _indentation_free(text: str, pattern: str) -> int:
    return _by_lines(text, pattern, str.lstrip)


def _unescaped(text: str, pattern: str) -> int:
    plain = pattern.replace("\\n", "\n").replace("\\t", "\t").replace("\\r", "\r")
    return 0 if plain == pattern else _exact(text, plain)


def _ends_trimmed(text: str, pattern: str) -> int:
    """Blocks equal to the pattern once their first and last lines (only) are stripped."""

    def ends(lines: list[str]) -> list[str]:
        lines = list(lines)
        lines[0] = lines[0].strip()
        if len(lines) > 1:
            lines[-1] = lines[-1].strip()
        return lines

    wanted = ends(pattern.split("\n"))
    lines = text.split("\n")
    return sum(ends(lines[i : i + len(wanted)]) == wanted for i in _windows(lines, len(wanted)))


def _typographic(text: str, pattern: str) -> int:
    plain_text, plain_pattern = _ascii(text), _ascii(pattern)
    if (plain_text, plain_pattern) == (text, pattern):
        return 0
    return _exact(plain_text, plain_pattern) or _line_trimmed(plain_text, plain_pattern)


def _anchored(text: str, pattern: str) -> int:
    """Blocks whose first and last lines match the pattern's (stripped, typographic characters as
    ASCII) and whose lines between are similar enough: half alike for a lone candidate, else 70%."""
    wanted = _ascii(pattern).split("\n")
    if len(wanted) < 2:
        return 0
    lines = _ascii(text).split("\n")
    first, last, size = wanted[0].strip(), wanted[-1].strip(), len(wanted)
    found = [i for i in _windows(lines, size) if lines[i].strip() == first and lines[i + size - 1].strip() == last]
    _within(len(found) * size)
    threshold = 0.5 if len(found) == 1 else 0.7
    middle = "\n".join(wanted[1:-1])

    def alike(i: int) -> float:
        return 1.0 if size <= 2 else SequenceMatcher(None, "\n".join(lines[i + 1 : i + size - 1]), middle).ratio()

    return sum(alike(i) >= threshold for i in found)


# the most line comparisons the two similarity strategies make (each a ``SequenceMatcher``, about 0.1 ms):
# past it the count is not known (``TooLarge``), rather than a preview waiting seconds for it
LINE_PAIRS = 5_000


class TooLarge(Exception):
    """The file and the pattern are too large to judge a similarity strategy within ``LINE_PAIRS``."""


def _within(pairs: int) -> None:
    if pairs > LINE_PAIRS:
        raise TooLarge


def _similar_lines(text: str, pattern: str) -> int:
    """Blocks where at least half the lines are 80% alike the pattern's, line for line (stripped)."""
    wanted = [line.strip() for line in pattern.split("\n")]
    lines = [line.strip() for line in text.split("\n")]
    _within(len(_windows(lines, len(wanted))) * len(wanted))

    def alike(i: int) -> bool:
        block = lines[i : i + len(wanted)]  # (a window as long as the pattern)
        close = sum(SequenceMatcher(None, p, c).ratio() >= 0.8 for p, c in zip(wanted, block, strict=True))
        return close >= len(wanted) * 0.5

    return sum(alike(i) for i in _windows(lines, len(wanted)))


_STRATEGIES = (
    _exact,
    _line_trimmed,
    _whitespace_collapsed,
    _indentation_free,
    _unescaped,
    _ends_trimmed,
    _typographic,
    _anchored,
    _similar_lines,
)


def loose_matches(text: str, old_string: str) -> int | None:
    """How many places Hermes's patch takes for ``old_string`` in ``text``: the count of the first of
    its strategies that finds any (exact; lines trimmed; runs of spaces and tabs as one; indentation
    ignored; ``\\n``, ``\\t``, ``\\r`` unescaped; first and last lines trimmed; typographic quotes,
    dashes and spaces as ASCII; a block anchored on its first and last lines; half its lines alike),
    0 when none does, None when a similarity strategy would take too long to tell (``LINE_PAIRS``).
    Hermes applies a patch found once (or, with ``replace_all``, found at all)."""
    if not old_string:
        return 0
    try:
        for strategy in _STRATEGIES:
            count = strategy(text, old_string)
            if count:
                return count
    except TooLarge:
        return None
    return 0
