"""A list of memory entries, each marked added (+), changed (~), removed (−), moved (↕) or unchanged.

Refreshing keeps the highlight on the same entry text when it still exists, so live
updates never move the user's place. Two lists can be twins (the Memory screen's frozen
and live columns): row ``i`` of one stands beside row ``i`` of the other, as tall as the
taller of the two, and moving or scrolling one moves the other with it. A row with no
text is a blank slot: its entry is on the other side only.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from engine.textsafety import clipped

from .cursor_in_view import CursorInView
from .literal import WholeWrap, assemble, literal, wrap

MARKS = {
    "+": ("+", "bold $mark-added"),
    "~": ("~", "bold $mark-changed"),
    "-": ("−", "bold $mark-removed"),
    "↕": ("↕", "bold $mark-changed"),
    "": (" ", ""),
}


@dataclass(frozen=True)
class EntryRow:
    """One entry as shown: its text, its mark, and the text it replaced (for ``~``)."""

    text: str
    mark: str = ""
    previous: str | None = None
    threats: tuple[str, ...] = ()  # what the threat scan found in it (⚠ before it, the names under it)

    @property
    def blank(self) -> bool:
        """A slot with no entry (entries are never empty): the row's entry is in the twin only."""
        return not self.text


def row_content(row: EntryRow, width: int | None = None) -> Content:
    """The mark, then the text; given a ``width``, wrapped with a hanging indent so each
    entry's lines stand apart from the next entry's mark."""
    return Content("\n").join(row_lines(row, width))


def row_lines(row: EntryRow, width: int | None = None) -> list[Content]:
    """``row_content`` line by line (one line when no ``width`` is given)."""
    symbol, style = MARKS.get(row.mark, MARKS[""])
    body = assemble(
        *([("⚠ ", "bold $warning")] if row.threats else []),
        (clipped(row.text), "strike $text-muted" if row.mark == "-" else ""),
    )
    mark = Content.styled(symbol + " ", style) if style else Content(symbol + " ")
    flag = Content.styled("⚠ threat: " + ", ".join(row.threats), "bold $text-error") if row.threats else None
    if width is None or width < 8:
        return [mark + body + (Content(" ") + flag if flag else Content(""))]
    first, *rest = wrap(body, width) or [Content("")]
    flagged = wrap(flag, width) if flag else []
    return [mark + first, *(Content("  ") + line for line in [*rest, *flagged])]


class EntryList(CursorInView, OptionList):
    """Entries in order; posts ``EntryList.Highlighted`` with the row under the cursor."""

    DEFAULT_CSS = """
    EntryList, EntryList:focus { height: 1fr; border: none; padding: 0; }
    """

    class Highlighted(Message):
        def __init__(self, entry_list: EntryList, row: EntryRow | None) -> None:
            super().__init__()
            self.entry_list = entry_list
            self.row = row

        @property
        def control(self) -> EntryList:
            return self.entry_list

    def __init__(self, *, empty_text: str = "(no entries)", id: str | None = None, classes: str | None = None):
        super().__init__(id=id, classes=classes)
        self.rows: list[EntryRow] = []
        self.empty_text = empty_text
        self.twin: EntryList | None = None  # the list shown beside this one, row for row
        self._width = 0  # the text width the options were wrapped to
        self._shown: list[tuple[str, tuple]] = []  # the options as set: text and styles
        self._empty_shown: str | None = None  # the empty text as set (a new one is set even with no row changed)

    @property
    def current(self) -> EntryRow | None:
        index = self.highlighted
        return self.rows[index] if self.rows and index is not None and index < len(self.rows) else None

    def set_rows(self, rows: list[EntryRow]) -> None:
        """Replace the rows, keeping the highlight on the same entry text where possible.

        Rows that are all blank slots show the empty text: there is nothing to line up.
        """
        if all(row.blank for row in rows):
            rows = []
        if rows == self.rows and self.option_count and (rows or self._empty_shown == self.empty_text):
            self._refill()  # the twin's rows may have changed how tall each row must be
            return  # nothing else changed: keep the user's place as it is
        before = self.current
        index = self.highlighted or 0
        self.rows = list(rows)
        if not rows:
            self._shown, self._empty_shown = [], self.empty_text
            self.set_options([Option(WholeWrap(literal(self.empty_text, "$text-muted")), disabled=True)])
            self.post_message(self.Highlighted(self, None))
            return
        self._fill()
        if before is not None and not before.blank:
            texts = [r.text for r in rows]
            if before.text in texts:
                index = texts.index(before.text)
            elif before.mark != "-" and any(r.previous == before.text for r in rows):
                index = next(i for i, r in enumerate(rows) if r.previous == before.text)
        self.highlighted = min(index, len(rows) - 1)
        if twin := self._partner():
            twin._refill()
            self._share_cursor(twin)
        self.call_after_refresh(self.scroll_to_highlight)  # the row may have moved out of view
        self.post_message(self.Highlighted(self, self.current))

    def _partner(self) -> EntryList | None:
        """The twin, when it shows as many rows as this list (both set from one alignment)."""
        twin = self.twin
        return twin if twin is not None and self.rows and len(twin.rows) == len(self.rows) else None

    def _leads(self) -> bool:
        return self.is_mounted and self.screen.focused is self

    def _share_cursor(self, twin: EntryList) -> None:
        """After both lists changed, the one with the focus (else this one) sets the row for both."""
        leader, follower = (twin, self) if twin._leads() else (self, twin)
        follower.highlighted = leader.highlighted

    def _text_width(self) -> int:
        """Room for the text: less the mark column and a scrollbar (kept free whether shown or
        not, so showing one never re-wraps a line past the indent)."""
        return self.size.width - self.styles.scrollbar_size_vertical - 2

    def _fill(self) -> None:
        """Set the options: each row wrapped to the width, padded to its twin row's height."""
        self._width = self._text_width()
        lines = [row_lines(row, self._width) for row in self.rows]
        if twin := self._partner():
            width = twin._text_width()
            for mine, theirs in zip(lines, twin.rows, strict=True):
                mine.extend([Content("")] * (len(row_lines(theirs, width)) - len(mine)))
        prompts = [Content("\n").join(row) for row in lines]
        shown = [(prompt.plain, tuple(prompt.spans)) for prompt in prompts]
        if shown != self._shown:
            self._shown = shown
            self.set_options([Option(prompt) for prompt in prompts])

    def _refill(self) -> None:
        """Re-wrap the rows in place (new width, or the twin's heights changed), keeping the cursor."""
        if self.rows:
            index = self.highlighted
            self._fill()
            self.highlighted = index

    def on_resize(self) -> None:
        if self.rows and self._text_width() != self._width:
            self._refill()
            if twin := self._partner():
                twin._refill()

    def watch_highlighted(self, highlighted: int | None) -> None:
        super().watch_highlighted(highlighted)
        if (twin := self._partner()) and self._leads():
            twin.highlighted = highlighted

    def on_focus(self) -> None:
        """The focused list leads; a focus given before the cursor moved (a jump) still carries it over."""
        if twin := self._partner():
            twin.highlighted = self.highlighted

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if (twin := self._partner()) and twin.scroll_y != new_value:
            twin.scroll_y = new_value

    def _on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self.post_message(self.Highlighted(self, self.current))
