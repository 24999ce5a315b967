"""A notice's size (Textual's Toast: 60 cells, at most half the screen's), for text fitted to its lines."""

from __future__ import annotations

TOAST_WIDTH = 60  # a notice's width in cells
TOAST_FRAME = 4  # its border and padding


def toast_room(screen_width: int) -> int:
    """The cells a line of a notice holds on a screen ``screen_width`` wide."""
    return min(TOAST_WIDTH, screen_width // 2) - TOAST_FRAME
