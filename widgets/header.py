"""The header on every screen: mode tabs, pending approvals, running session, review, home.

Tabs are clickable (posts ``ModeClicked``), as is the pending count (``PendingClicked``).
Below ``WIDE`` columns only the active tab shows its label; the others show their key,
and a long home path or session id is shortened to its end. ``review`` is "reviewing…"
while a background review runs, then its result line (cut first when space is short).
"""

from __future__ import annotations

from textual.content import Content
from textual.events import Click
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from .literal import assemble

WIDE = 110


class WorkbenchHeader(Widget):
    """One line of status; data in by attributes, clicks out as messages."""

    DEFAULT_CSS = """
    WorkbenchHeader { height: 1; width: 1fr; background: $panel; color: $foreground; }
    """

    modes: reactive[tuple[tuple[str, str, str], ...]] = reactive(())  # (mode, key, label)
    active: reactive[str] = reactive("")
    home_label: reactive[str] = reactive("")
    session: reactive[str | None] = reactive(None)
    pending: reactive[int] = reactive(0)
    review: reactive[str] = reactive("")
    curator: reactive[str] = reactive("")  # the last automatic Curator pass ("" until one ran)

    class ModeClicked(Message):
        def __init__(self, mode: str) -> None:
            super().__init__()
            self.mode = mode

    class PendingClicked(Message):
        """The user clicked the pending-approval count."""

    def _parts(self) -> list[tuple[str, str, str | None]]:
        """(text, style, click target) pieces, left to right; the pending count always fits."""
        width = self.size.width
        parts: list[tuple[str, str, str | None]] = [(" ", "", None)]
        for mode, key, label in self.modes:
            if mode == self.active:
                parts.append((f" {key} {label} ", "bold reverse $accent", f"mode:{mode}"))
            else:
                parts.append((f" {key} {label} " if width >= WIDE else f" {key} ", "$text-muted", f"mode:{mode}"))
        parts.append(("  │ ", "$text-muted", None))
        parts.append((f"{self.pending} pending", "bold $warning" if self.pending else "$text-muted", "pending"))
        if self.curator:
            parts.append((f" │ {self.curator}", "$text-muted", "mode:timeline"))
        parts.append((" │ session ", "$text-muted", None))
        session_at = len(parts)
        parts.append((self.session or "none", "bold $success" if self.session else "$text-muted", None))
        parts.append((" │ ", "$text-muted", None))
        review_at = len(parts)
        if self.review:
            parts.append((self.review, "bold $accent", None))
            parts.append((" │ ", "$text-muted", None))
        parts.append((self.home_label, "", None))
        # Too wide: cut the review line, shorten the home, then the session id, keeping their ends (the telling part).
        if self.review:
            over = sum(len(text) for text, _, _ in parts) - width
            text, style, _ = parts[review_at]
            if over > 0:
                parts[review_at] = (text[:max(12, len(text) - over - 1)] + "…", style, None)
        for index, keep in ((len(parts) - 1, 12), (session_at, 8)):
            over = sum(len(text) for text, _, _ in parts) - width
            text, style, target = parts[index]
            if over > 0 and len(text) > keep:
                parts[index] = ("…" + text[-max(keep, len(text) - over - 1):], style, target)
        return parts

    def render(self) -> Content:
        return assemble(*[(text, style) for text, style, _ in self._parts()])

    def on_click(self, event: Click) -> None:
        x = 0
        for text, _, target in self._parts():
            if x <= event.x < x + len(text) and target:
                if target == "pending":
                    self.post_message(self.PendingClicked())
                else:
                    self.post_message(self.ModeClicked(target.split(":", 1)[1]))
                return
            x += len(text)
