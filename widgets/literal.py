"""Show user- and agent-written text literally: never parsed, never obeyed by the terminal.

``[bold]x[/]`` or ``<memory-context>`` in an entry must appear exactly as written, so
every widget builds its text with these helpers (Content objects, not markup strings).
Control characters are made visible too: an ESC sequence hidden in a memory file
(``\\x1b[2J``) would otherwise reach the terminal and clear or restyle the screen, so
C0 controls show as their Unicode control pictures (``␛``) and C1 controls as ``\\x9b``.
Bidirectional overrides and isolates (U+202A-202E, U+2066-2069) show as ``<U+202E>``:
a terminal that honours them would display text in another order than it is stored.
Newlines and tabs are kept.
"""

from __future__ import annotations

import re

from textual.content import Content

Part = tuple[str, str] | str

_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _picture(match: re.Match) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)
    if code > 0xFF:
        return f"<U+{code:04X}>"
    return "\u2421" if code == 0x7F else f"\\x{code:02x}"


def visible(text: str | None) -> str:
    """``text`` with every control character (but newline and tab) shown, not executed."""
    return _CONTROLS.sub(_picture, text or "")


def literal(text: str | None, style: str = "") -> Content:
    """``text`` as Content, styled as a whole but never interpreted."""
    return Content.styled(visible(text), style) if style else Content(visible(text))


def assemble(*parts: Part) -> Content:
    """Join literal pieces, each optionally styled: ``assemble(("+ ", "$mark-added"), entry)``."""
    return Content.assemble(*[(visible(p[0]), p[1]) if isinstance(p, tuple) else visible(p) for p in parts])


def one_line(text: str | None, limit: int = 80) -> str:
    """A single-line preview: newlines shown as ⏎, cut with … past ``limit`` characters."""
    flat = visible(text).replace("\r\n", "\n").replace("\n", " ⏎ ").replace("\t", " ")
    return flat if len(flat) <= limit else flat[: max(0, limit - 1)] + "…"


def age(seconds: float) -> str:
    """Compact age: 45s, 12m, 3h, 5d."""
    seconds = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
