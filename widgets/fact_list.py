"""The ``local`` memory provider's facts, each with the stored message it came from.

A row is the fact (with how many near-duplicates merged into it) and, under it, its
source: the message's role and text, or what made it when no message is recorded (a
mirrored built-in memory write, a fact added outside a session). ``g`` or Enter on a
row with a source posts ``FactList.SourceWanted``; the highlight stays on the same fact
across refreshes.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from engine.textsafety import flat_line

from .cursor_in_view import CursorInView
from .literal import WholeWrap, assemble, literal


@dataclass(frozen=True)
class FactRow:
    id: int
    content: str
    origin: str  # "tool" or "memory:<target>"
    merged: int = 0
    session_id: str | None = None
    message_id: int | None = None
    source_role: str | None = None  # the stored message's, when it still exists
    source_text: str | None = None
    source_calls: tuple[str, ...] = ()  # the tool calls the message made (a fact's write is one of them)

    @property
    def has_source(self) -> bool:
        return self.session_id is not None


def _said(row: FactRow, width: int) -> str:
    if row.source_text:
        return flat_line(row.source_text, max(10, width - 20))
    return f"(tool call: {', '.join(row.source_calls)})" if row.source_calls else "(no text)"


def _source(row: FactRow, width: int) -> Content:
    if row.source_role is not None:
        return assemble(
            ("    from ", "$text-muted"),
            (f"#{row.message_id} {row.source_role}: ", "$secondary"),
            (_said(row, width), "$text-muted"),
        )
    made = "a mirrored memory write" if row.origin.startswith("memory:") else "the fact_add tool"
    where = f"in session {row.session_id}, message not stored" if row.session_id else "outside any session"
    return assemble(("    from ", "$text-muted"), (f"{made} ({where})", "$text-muted italic"))


def fact_content(row: FactRow, width: int = 80) -> Content:
    merged = [(f"  (merged ×{row.merged})", "$text-muted")] if row.merged else []
    head = assemble((f"{row.id:>4}  ", "bold $accent"), flat_line(row.content, max(10, width - 8)), *merged)
    return Content("\n").join([head, _source(row, width)])


class FactList(CursorInView, OptionList):
    """Facts in id order; posts ``SourceWanted`` for the highlighted fact's source message."""

    DEFAULT_CSS = """
    FactList, FactList:focus { height: 1fr; border: none; padding: 0; }
    """
    BINDINGS = [Binding("g", "source", "Source", id="facts.source")]

    class SourceWanted(Message):
        def __init__(self, row: FactRow) -> None:
            super().__init__()
            self.row = row

    def __init__(self, *, empty_text: str, id: str | None = None, classes: str | None = None):
        super().__init__(id=id, classes=classes)
        self.rows: list[FactRow] = []
        self.empty_text = empty_text

    @property
    def current(self) -> FactRow | None:
        index = self.highlighted
        return self.rows[index] if self.rows and index is not None and index < len(self.rows) else None

    def set_rows(self, rows: list[FactRow]) -> None:
        """Replace the rows, keeping the highlight on the same fact where it still exists."""
        if rows == self.rows and self.option_count:
            return
        before = self.current
        self.rows = list(rows)
        if not rows:
            self.set_options([Option(WholeWrap(literal(self.empty_text, "$text-muted")), disabled=True)])
            return
        width = self.size.width or 80
        self.set_options([Option(fact_content(row, width)) for row in rows])
        ids = [row.id for row in rows]
        self.highlighted = ids.index(before.id) if before is not None and before.id in ids else 0

    def action_source(self) -> None:
        if self.current is not None:
            self.post_message(self.SourceWanted(self.current))

    def _on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_source()
