"""The header on every screen: mode tabs, pending approvals, running session, review, home.

Tabs are clickable (posts ``ModeClicked``), as is the pending count (``PendingClicked``).
Tabs keep their names as long as the line allows; a long home path or session id is
shortened to its end first. ``review`` is "reviewing…" while a background review runs,
then its result line (cut first when space is short).
"""

from __future__ import annotations

from textual.content import Content
from textual.events import Click
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from .literal import assemble


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
        """(text, style, click target) pieces, left to right; the pending count always fits.

        Tabs keep their names; when the line is too narrow the rest gives way first (the
        review line, the home, then the word "session" and the session id, shortened to
        their telling ends, then the id to a ``●`` that says a session runs), and the tabs
        lose the spaces around them. Only below 80 columns, to keep a running session in
        view, do the other tabs' names shrink (to three letters, then to the key)."""
        width = self.size.width
        parts: list[tuple[str, str, str | None]] = []
        for tabs, glyph in (
            ("full", False),
            ("tight", False),
            ("full", True),
            ("tight", True),
            ("short", False),
            ("short", True),
        ):
            tab_parts = self._tabs(tabs)
            parts = tab_parts + self._status(width - sum(len(text) for text, _, _ in tab_parts), glyph)
            fits = sum(len(text) for text, _, _ in parts) <= width
            shows_session = self.session is None or any(style.startswith("bold $success") for _, style, _ in parts)
            if fits and shows_session:
                return parts
        tab_parts = self._tabs("key")
        return tab_parts + self._status(width - sum(len(text) for text, _, _ in tab_parts), True)

    def _tabs(self, names: str) -> list[tuple[str, str, str | None]]:
        parts: list[tuple[str, str, str | None]] = [(" ", "", None)]
        for mode, key, label in self.modes:
            if mode == self.active:
                parts.append((f" {key} {label} ", "bold reverse $accent", f"mode:{mode}"))
            else:
                shown = {"full": f" {key} {label} ", "tight": f"{key} {label}", "short": f" {key} {label[:3]} "}.get(
                    names, f" {key} "
                )
                if names == "tight" and parts[-1][2] not in (None, f"mode:{self.active}"):
                    shown = " " + shown  # one space between two plain tabs; the active one has its own
                parts.append((shown, "$text-muted", f"mode:{mode}"))
        return parts

    def _status(self, room: int, glyph: bool = False) -> list[tuple[str, str, str | None]]:
        """Pending count, Curator, session, review and home in ``room`` columns (the count is never
        cut; the review line is cut first, then the home, then the session id; with ``glyph``
        the id may give way to a ``●``)."""
        pending = [
            ("  │ ", "$text-muted", None),
            (f"{self.pending} pending", "bold $warning" if self.pending else "$text-muted", "pending"),
        ]
        if self.curator:
            pending.append((f" │ {self.curator}", "$text-muted", "mode:timeline"))
        session_style = "bold $success" if self.session else "$text-muted"
        left = room - sum(len(text) for text, _, _ in pending)
        home = self.home_label
        home_room = min(len(home), 12) + 3  # a home shorter than this is not worth showing
        fitting = []
        forms = ((" │ session ", None), (" │ ", None), (" │ ", 8)) + (((" ", 0),) if glyph else ())
        for label, keep_session in forms:
            session = self.session or ("none" if "session" in label else "no session")
            if keep_session == 0:
                shown = "●" if self.session else ""
            elif keep_session is None or not self.session or len(session) <= keep_session + 1:
                shown = session  # (only an id is cut: a cut "no session" read "… session", as if one ran)
            else:
                shown = "…" + session[-keep_session:]
            middle = [(label, "$text-muted", None), (shown, session_style, None)] if shown else []
            after = left - sum(len(text) for text, _, _ in middle)
            if after >= home_room and keep_session != 0:
                review = self.review
                if review and after - home_room - 3 >= 13:
                    if len(review) > after - home_room - 3:
                        review = review[: after - home_room - 4] + "…"
                    middle += [(" │ ", "$text-muted", None), (review, "bold $accent", None)]
                    after -= len(review) + 3
                if len(home) > after - 3:
                    home = "…" + home[-(after - 4) :]
                return pending + middle + [(" │ ", "$text-muted", None), (home, "", None)]
            if after >= 0:
                fitting.append(middle)
        return pending + (fitting[0] if fitting else [])

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
