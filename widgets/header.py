"""The header on every screen: mode tabs, pending approvals, running session, review, home.

Tabs are clickable (posts ``ModeClicked``), as is the pending count (``PendingClicked``).
Tabs keep their names as long as the line allows, and from 80 columns the home is always
shown (cut from the left when it must be); a running session's id, which users copy, stays whole
while tight tabs and the home's last folders make room for it, then gives way before the home. ``review`` is
"reviewing…" while a background review runs, then its result line: the home gives way to it down to
its last folders, and it is cut first when space is shorter still.
"""

from __future__ import annotations

from textual.content import Content
from textual.events import Click
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from .literal import assemble


def short_home(home: str, room: int) -> str | None:
    """``home`` in ``room`` columns: whole, else its last folders after ``…/``, else its last folder
    alone, else that folder's end after ``…``; None below 4 columns ("" for no home)."""
    if not home:
        return ""
    if room < 4:
        return None
    if len(home) <= room:
        return home
    parts = home.rstrip("/").split("/")
    for start in range(1, len(parts)):
        tail = "…/" + "/".join(parts[start:])
        if len(tail) <= room:
            return tail
    last = parts[-1]
    return last if len(last) <= room else "…" + last[-(room - 1) :]


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
        """(text, style, click target) pieces, left to right; the pending count and the home always fit.

        Tabs keep their names; when the line is too narrow the rest gives way first: the review
        line, the Curator's note, the word "session", the session id (to its telling end, then to a
        ``●`` that says a session runs), then the home (to its last folders, its last folder, then
        that folder's end), while the tabs lose the spaces around them. A review line is kept, though,
        where the session id's shorter forms and the home's last folders leave it 13 columns. Only below 80 columns do
        the other tabs' names shrink (to three letters, then to the key)."""
        width = self.size.width
        tries = [(0, "full"), (0, "tight"), (1, "full"), (1, "tight"), (2, "full"), (2, "tight")]
        tries += [(2, "short"), (3, "short"), (2, "key"), (3, "key")]  # (below 80 columns only)
        # a session's id whole first (users copy it: a cut one names nothing), tight tabs and the home's last
        # folders making room for it, then as before
        tries = [(least, tabs, True) for least, tabs in tries[:4]] + [(least, tabs, False) for least, tabs in tries]
        for least, tabs, whole in tries:
            tab_parts = self._tabs(tabs)
            status = self._status(width - sum(len(text) for text, _, _ in tab_parts), least, whole)
            if status is not None:
                return tab_parts + status
        return self._tabs("key") + self._pending()

    def _tabs(self, names: str) -> list[tuple[str, str, str | None]]:
        parts: list[tuple[str, str, str | None]] = [] if names == "tight" else [(" ", "", None)]
        for mode, key, label in self.modes:
            if mode == self.active:
                parts.append((f" {key} {label} ", "bold reverse $accent", f"mode:{mode}"))
            else:
                shown = {"full": f" {key} {label} ", "tight": f"{key} {label}", "short": f" {key} {label[:3]} "}.get(
                    names, f" {key} "
                )
                if names == "tight" and parts and parts[-1][2] != f"mode:{self.active}":
                    shown = " " + shown  # one space between two plain tabs; the active one has its own
                parts.append((shown, "$text-muted", f"mode:{mode}"))
        return parts

    def _pending(self) -> list[tuple[str, str, str | None]]:
        return [
            (" │ ", "$text-muted", None),
            (f"{self.pending} pending", "bold $warning" if self.pending else "$text-muted", "pending"),
        ]

    def _sessions(self, whole: bool = False) -> list[list[tuple[str, str, str | None]]]:
        """The session's forms, longest first; the last, ``[]``, leaves a running one to the ``●`` before the home
        (``whole``: only those that show a running one's id whole)."""
        session = self.session
        if not session:
            return [
                [(" │ session ", "$text-muted", None), ("none", "$text-muted", None)],
                [(" │ no session", "$text-muted", None)],
                [],
            ]
        forms = [[(" │ session ", "$text-muted", None)], [(" │ ", "$text-muted", None)]]
        shown = [[*form, (session, "bold $success", None)] for form in forms]
        if whole:
            return shown
        if len(session) > 9:  # its telling end: a Hermes id's random part, not a cut into its time (…0_6fbeb3)
            end = session[-8:].rpartition("_")[2] or session[-8:]
            shown.append([(" │ ", "$text-muted", None), ("…" + end, "bold $success", None)])
        return [*shown, []]

    def _status(self, room: int, least: int, whole: bool = False) -> list[tuple[str, str, str | None]] | None:
        """Pending count, Curator, session, review and home in ``room`` columns, or None when the home
        does not fit as ``least`` allows (0: whole; 1: its last folders, 16 characters or more; 2:
        at least its last 4 characters; 3: not at all, below 80 columns), or (``whole``) the session's id
        whole and the review line do not. The count is never cut; a session gives way before the home."""
        home = self.home_label
        shortest = (len(home), min(len(home), 16), min(len(home), 4), min(len(home), 4))[least]
        for curator in ([(f" │ {self.curator}", "$text-muted", "mode:timeline")], []) if self.curator else ([],):
            head = self._pending() + curator
            unreviewed = None  # the first line that fits without the review, if no shorter session form fits it
            for session in self._sessions(whole):
                left = room - sum(len(text) for text, _, _ in head + session)
                glyph = self.session and not session  # the last form: ● before the home stands for the session
                shown = short_home(home, left - 3)
                if shown is None or len(shown) < shortest or left < (2 if glyph else 0):
                    continue
                review = []
                # the review is what a quit may wait on: the home gives way to it, to its last folders
                brief = short_home(home, max(left - 6 - len(self.review), min(len(home), 16, left - 3)))
                after = left - 3 - len(brief or "")
                if self.review and brief is not None and after - 3 >= 13:  # (shorter says nothing)
                    text = self.review if len(self.review) <= after - 3 else self.review[: after - 4] + "…"
                    review = [(" │ ", "$text-muted", None), (text, "bold $accent", None)]
                    shown = short_home(home, left - 3 - 3 - len(text)) or brief
                sep = (
                    [(" ", "", None), ("●", "bold $success", None), (" ", "", None)]
                    if glyph
                    else [(" │ ", "$text-muted", None)]
                )
                line = head + session + review + (sep + [(shown, "", None)] if home else sep[:2] if glyph else [])
                if self.review and not review:
                    unreviewed = unreviewed or line
                    continue
                return line
            if unreviewed is not None and not whole:  # (the review is kept before the id is whole)
                return unreviewed
        if least < 3:
            return None
        glyph = [(" ", "", None), ("●", "bold $success", None)] if self.session else []
        status = self._pending() + glyph  # narrower than 80 columns: the home gives way to the tabs' names
        return status if sum(len(text) for text, _, _ in status) <= room else None

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
