"""Show user- and agent-written text literally: never parsed as markup.

``[bold]x[/]`` or ``<memory-context>`` in an entry must appear exactly as written, so
every widget builds its text with these helpers (Content objects, not markup strings).
"""

from __future__ import annotations

from textual.content import Content

Part = tuple[str, str] | str


def literal(text: str | None, style: str = "") -> Content:
    """``text`` as Content, styled as a whole but never interpreted."""
    return Content.styled(text or "", style) if style else Content(text or "")


def assemble(*parts: Part) -> Content:
    """Join literal pieces, each optionally styled: ``assemble(("+ ", "$mark-added"), entry)``."""
    return Content.assemble(*parts)


def one_line(text: str | None, limit: int = 80) -> str:
    """A single-line preview: newlines shown as ⏎, cut with … past ``limit`` characters."""
    flat = (text or "").replace("\r\n", "\n").replace("\n", " ⏎ ").replace("\t", " ")
    return flat if len(flat) <= limit else flat[: max(0, limit - 1)] + "…"


def age(seconds: float) -> str:
    """Compact age: 45s, 12m, 3h, 5d."""
    seconds = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
