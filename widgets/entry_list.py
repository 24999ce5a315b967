"""A list of memory entries, each marked added (+), changed (~), removed (−) or unchanged.

Refreshing keeps the highlight on the same entry text when it still exists, so live
updates never move the user's place.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from .literal import assemble

MARKS = {
    "+": ("+", "bold $mark-added"),
    "~": ("~", "bold $mark-changed"),
    "-": ("−", "bold $mark-removed"),
    "": (" ", ""),
}


@dataclass(frozen=True)
class EntryRow:
    """One entry as shown: its text, its mark, and the text it replaced (for ``~``)."""

    text: str
    mark: str = ""
    previous: str | None = None
    threats: tuple[str, ...] = ()  # what the threat scan found in it (⚠ before it, the names under it)


def row_content(row: EntryRow, width: int | None = None) -> Content:
    """The mark, then the text; given a ``width``, wrapped with a hanging indent so each
    entry's lines stand apart from the next entry's mark."""
    symbol, style = MARKS.get(row.mark, MARKS[""])
    body = assemble(
        *([("⚠ ", "bold $warning")] if row.threats else []), (row.text, "strike $text-muted" if row.mark == "-" else "")
    )
    mark = Content.styled(symbol + " ", style) if style else Content(symbol + " ")
    flag = Content.styled("⚠ threat: " + ", ".join(row.threats), "bold $text-error") if row.threats else None
    if width is None or width < 8:
        return mark + body + (Content(" ") + flag if flag else Content(""))
    first, *rest = body.wrap(width) or [Content("")]
    flagged = flag.wrap(width) if flag else []
    return Content("\n").join([mark + first, *(Content("  ") + line for line in [*rest, *flagged])])


class EntryList(OptionList):
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
        self._width = 0  # the text width the options were wrapped to

    @property
    def current(self) -> EntryRow | None:
        index = self.highlighted
        return self.rows[index] if self.rows and index is not None and index < len(self.rows) else None

    def set_rows(self, rows: list[EntryRow]) -> None:
        """Replace the rows, keeping the highlight on the same entry text where possible."""
        if rows == self.rows and self.option_count:
            return  # nothing changed: keep the widget (and the user's place) as it is
        before = self.current
        index = self.highlighted or 0
        self.rows = list(rows)
        if not rows:
            self.set_options([Option(Content.styled(self.empty_text, "$text-muted"), disabled=True)])
            self.post_message(self.Highlighted(self, None))
            return
        self._fill()
        if before is not None:
            texts = [r.text for r in rows]
            if before.text in texts:
                index = texts.index(before.text)
            elif before.mark != "-" and any(r.previous == before.text for r in rows):
                index = next(i for i, r in enumerate(rows) if r.previous == before.text)
        self.highlighted = min(index, len(rows) - 1)
        self.call_after_refresh(self.scroll_to_highlight)  # the row may have moved out of view
        self.post_message(self.Highlighted(self, self.current))

    def _text_width(self) -> int:
        """Room for the text: less the mark column and a scrollbar (kept free whether shown or
        not, so showing one never re-wraps a line past the indent)."""
        return self.size.width - self.styles.scrollbar_size_vertical - 2

    def _fill(self) -> None:
        self._width = self._text_width()
        self.set_options([Option(row_content(row, self._width)) for row in self.rows])

    def on_resize(self) -> None:
        if self.rows and self._text_width() != self._width:
            index = self.highlighted
            self._fill()
            self.highlighted = index

    def _on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self.post_message(self.Highlighted(self, self.current))
