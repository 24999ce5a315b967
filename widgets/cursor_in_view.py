"""Lists whose cursor stays on screen when they are made shorter.

Textual keeps a list's scroll offset when its height shrinks (a status line appearing under
it, a terminal made smaller), so the row under the cursor, the one a message is about,
can end up below the bottom edge. Mixed in before the Textual class, ``CursorInView``
scrolls the cursor back into view after each resize.
"""

from __future__ import annotations

from textual import events
from textual.widgets import DataTable, OptionList, Tree


class CursorInView:
    def on_resize(self, event: events.Resize) -> None:
        self.call_after_refresh(_cursor_into_view, self)  # type: ignore[attr-defined]


def _cursor_into_view(widget: object) -> None:
    if isinstance(widget, DataTable):
        if widget.row_count:
            widget._scroll_cursor_into_view()
    elif isinstance(widget, OptionList):
        widget.scroll_to_highlight()
    elif isinstance(widget, Tree) and widget.cursor_node is not None:
        widget.scroll_to_node(widget.cursor_node, animate=False)


class CursorList(CursorInView, OptionList):
    """A plain ``OptionList`` whose highlight stays in view (the approval queue)."""
