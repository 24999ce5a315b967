"""A banner over the Memory columns while the live file no longer round-trips: why, and the key.

The screen sets it with ``show(title, reasons)`` (plain strings, from the engine's
diagnosis: a few words each); no reasons hide it. A click asks for the repair flow, as
the key does. The key comes first, then the causes, then the title: a narrow terminal cuts
the title, which says in general words what the causes say with their figures ("entry 5 is
27,866 chars over the limit" after a long far-over title was cut at 80 columns).
"""

from __future__ import annotations

from textual.events import Click
from textual.message import Message

from .literal import WholeStatic, assemble

KEY_HINT = "r: repair"


class DriftBanner(WholeStatic):
    """The key, every cause in short and the title."""

    DEFAULT_CSS = """
    DriftBanner { height: auto; max-height: 2; padding: 0 1; background: $warning 20%; color: $foreground; }
    """

    class RepairRequested(Message):
        """The user clicked the banner: open the repair flow."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.title = ""
        self.reasons: list[str] = []

    def on_mount(self) -> None:
        self.display = False

    def show(self, title: str, reasons: list[str]) -> None:
        self.title, self.reasons = title, list(reasons)
        self.display = bool(reasons)
        self.update(
            assemble(("⚠ ", "bold $warning"), (KEY_HINT + "  ", "bold"), "; ".join(reasons), (" — " + title, "bold"))
            if reasons
            else ""
        )

    def on_click(self, event: Click) -> None:
        event.stop()
        self.post_message(self.RepairRequested())
