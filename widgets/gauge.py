"""A capacity gauge: chars used of a limit, coloured at 80% and 100%.

An optional ghost segment shows what pending proposals (or an open draft) would add, so
an overflow is visible before anyone approves it.
"""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

WARN_AT = 0.8


class CapacityGauge(Widget):
    """``used`` / ``limit`` characters, plus ``ghost`` characters that may follow. Until its screen
    sets ``used`` (a 10 MB file takes a second or two to read) it says it is loading: a made-up
    figure (it said ``0/1 0%``) would read as a fact."""

    DEFAULT_CSS = """
    CapacityGauge { height: 1; width: 1fr; }
    """

    used: reactive[int | None] = reactive(None)  # None: not known yet
    limit: reactive[int] = reactive(1)
    ghost: reactive[int] = reactive(0)
    ghost_label: reactive[str] = reactive("pending")  # what the ghost counts, said after its +N
    note: reactive[str] = reactive("")  # said last, first to give way: pending adds that are not counted

    def __init__(
        self,
        used: int | None = None,
        limit: int = 1,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ):
        super().__init__(name=name, id=id, classes=classes)
        self.set_reactive(CapacityGauge.used, used)
        self.set_reactive(CapacityGauge.limit, limit)

    @property
    def level(self) -> str:
        """ok, warn (>= 80%) or full (>= 100%) for the current fill."""
        ratio = self.used / self.limit if self.limit > 0 else 1.0
        return "full" if ratio >= 1 else "warn" if ratio >= WARN_AT else "ok"

    def caption(self, room: int | None = None) -> str:
        """``used/limit pct%`` (``+N pending``: what pending writes add, and by how much that overflows;
        then the ``note``); given ``room``, the longest form that fits: the note, the overflow, then the
        numbers give way first."""
        pct = min(100, int(self.used / self.limit * 100)) if self.limit > 0 else 0
        after = self.used + self.ghost
        ghost = f" +{self.ghost:,} {self.ghost_label}".rstrip() if self.ghost else ""
        over = f" (over by {after - self.limit:,})" if after > self.limit else ""
        note = f" · {self.note}" if self.note else ""
        forms = [
            f"{self.used:,}/{self.limit:,} {pct}%{ghost}{over}{note}",
            f"{self.used:,}/{self.limit:,} {pct}%{ghost}{over}",
            f"{self.used:,}/{self.limit:,} {pct}%{ghost}",
            f"{pct}%{ghost}{' · over' if over else ''}",
            f"{pct}%",
        ]
        return next((form for form in forms if room is None or len(form) <= room), forms[-1])

    def _cells(self, width: int) -> tuple[int, int]:
        """The bar's filled and ghost cells: rounded down, so two gauges of one fill a column apart in
        width (the frozen and the live side) draw the same, and a bar never shows more than there is;
        anything at all fills one cell."""
        limit = max(1, self.limit)

        def cells(chars: int) -> int:
            return min(width, max(1, width * chars // limit)) if chars > 0 else 0

        filled = cells(self.used)
        if self.ghost <= 0 or filled >= width:
            return filled, 0
        return filled, max(1, cells(self.used + self.ghost) - filled)  # (a pending write always shows)

    def render(self) -> Content:
        if self.used is None:
            return Content.styled("loading…", "$text-muted")
        caption = " " + self.caption(max(0, self.size.width - 5))  # at least a 4-cell bar beside it
        width = max(0, self.size.width - len(caption))
        filled, ghost = self._cells(width)
        empty = width - filled - ghost
        colour = {"ok": "$gauge-ok", "warn": "$gauge-warn", "full": "$gauge-full"}[self.level]
        return Content.assemble(
            ("█" * filled, colour),
            ("▒" * ghost, "$gauge-ghost"),
            ("░" * empty, "$text-muted"),
            (caption, f"bold {colour}"),
        )
