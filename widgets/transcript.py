"""A session transcript: roles, tool calls and results, and which messages wrote memory.

A Line-API scroll view (like Textual's ``Log``) so a long session scrolls without one
widget per message. Every message is rendered once per width into strips; a cursor
marks one message (for "jump to message" and keyboard navigation). All text is shown
literally: agent and user text is wrapped in ``Content``, never parsed as markup.
Tool-call arguments and tool results that are JSON are pretty-printed and highlighted
with Pygments (through ``textual.highlight``, so colours follow the theme).

While a transcript streams (the Run screen), ``follow`` keeps the newest message in
view; when the user has scrolled away, new messages are counted as unseen instead of
yanking the view.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterable

from rich.segment import Segment
from textual.binding import Binding
from textual.content import Content
from textual.geometry import Size
from textual.highlight import highlight
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.visual import Visual

MAX_BODY_CHARS = 6000  # longer bodies are cut in the view (the archive keeps them whole)
GUTTER = 2
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")

ROLE_STYLES = {
    "user": "bold $text-success",
    "assistant": "bold $text-primary",
    "tool": "bold $text-secondary",
    "system": "bold $text-warning",
}


@dataclass(frozen=True)
class TranscriptItem:
    """One message as the transcript shows it (built by screens from engine rows or runner events)."""

    role: str
    content: str = ""
    id: int | None = None
    tool_name: str | None = None
    tool_calls: tuple[Any, ...] = ()
    timestamp: float | None = None
    writes: tuple[str, ...] = ()  # human descriptions of the memory/skill writes this message made


def sanitize(text: str) -> str:
    """Make text safe to show: control characters become visible replacement marks."""
    return _CONTROL.sub("\ufffd", text.expandtabs(4))


def _clip(text: str) -> str:
    if len(text) <= MAX_BODY_CHARS:
        return text
    return text[:MAX_BODY_CHARS] + f"\n… ({len(text) - MAX_BODY_CHARS:,} more characters)"


def _json_block(text: str | dict | list) -> Content | None:
    """Pretty, highlighted JSON if ``text`` is (or parses as) a JSON object or array."""
    value: Any = text
    if isinstance(text, str):
        stripped = text.strip()
        if not stripped or stripped[0] not in "[{":
            return None
        try:
            value = json.loads(stripped)
        except ValueError:
            return None
    if not isinstance(value, (dict, list)):
        return None
    return highlight(_clip(sanitize(json.dumps(value, indent=2, ensure_ascii=False))), language="json")


def _call_parts(call: Any) -> tuple[str, Any]:
    """Name and arguments of a tool call in OpenAI (``function``) or flat form."""
    if not isinstance(call, dict):
        return "?", call
    function = call.get("function") if isinstance(call.get("function"), dict) else call
    return str(function.get("name") or "?"), function.get("arguments", function.get("args", ""))


def when(timestamp: float | None) -> str:
    if timestamp is None:
        return ""
    return datetime.fromtimestamp(timestamp, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def render_item(item: TranscriptItem) -> Content:
    """The whole message as one Content: header, body, tool calls and write markers."""
    header: list[Any] = [(item.role, ROLE_STYLES.get(item.role, "bold"))]
    if item.role == "tool" and item.tool_name:
        header.append((f" ← {sanitize(item.tool_name)}", "$text-secondary"))
    if item.timestamp is not None:
        header.append((f"  {when(item.timestamp)}", "$text-muted"))
    if item.id is not None:
        header.append((f"  #{item.id}", "$text-muted"))
    if item.writes:
        header.append(("  ✎ wrote", "bold $text-warning"))
    parts = [Content.assemble(*header)]
    if item.content:
        parts.append(_json_block(item.content) or Content(_clip(sanitize(item.content))))
    for call in item.tool_calls:
        name, arguments = _call_parts(call)
        parts.append(Content.assemble(("→ call ", "$text-accent"), (sanitize(name), "bold $text-accent")))
        if arguments not in ("", None, {}, "{}"):
            parts.append(_json_block(arguments) or Content(_clip(sanitize(str(arguments)))))
    for write in item.writes:
        parts.append(Content.assemble(("✎ ", "bold $text-warning"), (sanitize(write), "$text-warning")))
    return Content("\n").join(parts)


class Transcript(ScrollView, can_focus=True):
    """Messages of one session, with a message cursor, follow mode and an unseen count."""

    DEFAULT_CSS = """
    Transcript {
        background: $surface;
        overflow-y: scroll;
        overflow-x: hidden;
        border: round $primary 40%;
        &:focus { border: round $primary; }
    }
    Transcript > .transcript--cursor { background: $boost; }
    Transcript > .transcript--gutter { color: $accent; }
    """
    COMPONENT_CLASSES = {"transcript--cursor", "transcript--gutter"}
    BINDINGS = [
        Binding("down,j", "cursor(1)", "Next msg", show=False),
        Binding("up,k", "cursor(-1)", "Prev msg", show=False),
        Binding("home,g", "cursor_to(0)", "First", show=False),
        Binding("end,G", "cursor_to(-1)", "Last", show=False),
        Binding("w", "next_write", "Next write", tooltip="Jump to the next message that wrote memory or skills"),
        Binding("f", "toggle_follow", "Follow", tooltip="Keep the newest message in view while it streams"),
    ]

    cursor: reactive[int] = reactive(-1, init=False)
    follow: reactive[bool] = reactive(True, init=False)
    unseen: reactive[int] = reactive(0, init=False)

    class Highlighted(Message):
        """The message cursor moved to ``item`` (None when the transcript is empty)."""

        def __init__(self, transcript: "Transcript", item: TranscriptItem | None) -> None:
            super().__init__()
            self.transcript = transcript
            self.item = item

        @property
        def control(self) -> "Transcript":
            return self.transcript

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.items: list[TranscriptItem] = []
        self._rendered: list[list[Strip] | None] = []
        self._starts: list[int] = []
        self._width = 0
        self._theme: str | None = None  # the theme the cached renders were made with
        self._placeholder = "No session selected."

    # -- data in -------------------------------------------------------------------
    def set_items(self, items: Iterable[TranscriptItem], *, placeholder: str | None = None,
                  select_id: int | None = None) -> None:
        """Replace every message; put the cursor on ``select_id`` (or the last message)."""
        self.items = list(items)
        if placeholder is not None:
            self._placeholder = placeholder
        self._rendered = [None] * len(self.items)
        self.unseen = 0
        self._layout()
        index = self.index_of(select_id) if select_id is not None else None
        if index is None:
            index = len(self.items) - 1 if self.follow else (0 if self.items else -1)
        self.set_reactive(Transcript.cursor, index)
        self._show_cursor(center=select_id is not None)
        self.post_message(self.Highlighted(self, self.current))

    def append(self, item: TranscriptItem) -> None:
        """Add a message at the end (streaming); keeps the view unless following."""
        was_at_end = self.is_vertical_scroll_end or not self.items
        self.items.append(item)
        self._rendered.append(None)
        self._layout()
        self._after_growth(was_at_end)

    def replace(self, index: int, item: TranscriptItem) -> None:
        """Re-render one message in place (e.g. an assistant reply that grows while streaming)."""
        was_at_end = self.is_vertical_scroll_end
        self.items[index] = item
        self._rendered[index] = None
        self._layout()
        if index == len(self.items) - 1 and self.follow and was_at_end:
            self.scroll_end(animate=False, immediate=True, x_axis=False)

    def set_placeholder(self, text: str) -> None:
        self._placeholder = text
        self.refresh()

    def index_of(self, message_id: int | None) -> int | None:
        for index, item in enumerate(self.items):
            if item.id == message_id and message_id is not None:
                return index
        return None

    def select_message(self, message_id: int) -> bool:
        """Move the cursor to a message and scroll it into the middle of the view."""
        index = self.index_of(message_id)
        if index is None:
            return False
        self.cursor = index
        self._show_cursor(center=True)
        return True

    @property
    def current(self) -> TranscriptItem | None:
        return self.items[self.cursor] if 0 <= self.cursor < len(self.items) else None

    # -- actions -------------------------------------------------------------------
    def action_cursor(self, step: int) -> None:
        if self.items:
            self.cursor = max(0, min(len(self.items) - 1, (self.cursor if self.cursor >= 0 else 0) + step))
            self._show_cursor()

    def action_cursor_to(self, index: int) -> None:
        if self.items:
            self.cursor = index % len(self.items)
            self._show_cursor()

    def action_next_write(self) -> None:
        count = len(self.items)
        for step in range(1, count + 1):
            index = (self.cursor + step) % count
            if self.items[index].writes:
                self.cursor = index
                self._show_cursor(center=True)
                return
        self.notify("No message in this session wrote memory or skills.", severity="warning")

    def action_toggle_follow(self) -> None:
        self.follow = not self.follow

    def watch_follow(self, follow: bool) -> None:
        if follow and self.items:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
            self.unseen = 0
        self._update_subtitle()

    def watch_unseen(self) -> None:
        self._update_subtitle()

    def watch_cursor(self) -> None:
        self.refresh()
        self.post_message(self.Highlighted(self, self.current))

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if self.unseen and self.is_vertical_scroll_end:
            self.unseen = 0

    def _update_subtitle(self) -> None:
        parts = [] if self.follow else ["follow off (f)"]
        if self.unseen:
            parts.insert(0, f"↓ {self.unseen} new")
        self.border_subtitle = " · ".join(parts)

    def _after_growth(self, was_at_end: bool) -> None:
        if self.follow and was_at_end:
            self.set_reactive(Transcript.cursor, len(self.items) - 1)
            self.scroll_end(animate=False, immediate=True, x_axis=False)
            self.refresh()
        else:
            self.unseen += 1

    def _show_cursor(self, center: bool = False) -> None:
        if not (0 <= self.cursor < len(self._starts)):
            self.refresh()
            return
        top = self._starts[self.cursor]
        bottom = self._end_of(self.cursor)
        height = self.scrollable_content_region.height or self.size.height
        if center:
            self.scroll_to(y=max(0, top - height // 3), animate=False, immediate=True)
        elif top < self.scroll_y:
            self.scroll_to(y=top, animate=False, immediate=True)
        elif bottom > self.scroll_y + height:
            self.scroll_to(y=max(top, bottom - height), animate=False, immediate=True)
        self.refresh()

    # -- layout and rendering ------------------------------------------------------
    def _end_of(self, index: int) -> int:
        return self._starts[index + 1] if index + 1 < len(self._starts) else self.virtual_size.height

    def _strips(self, index: int) -> list[Strip]:
        strips = self._rendered[index]
        if strips is None:
            width = max(1, self._width - GUTTER)
            strips = Visual.to_strips(self, render_item(self.items[index]), width, None, self.visual_style)
            strips.append(Strip.blank(width))  # one blank line between messages
            self._rendered[index] = strips
        return strips

    def _layout(self) -> None:
        """Recompute where every message starts (renders messages not yet rendered at this width)."""
        width = self.scrollable_content_region.width
        if width != self._width:
            self._width = width
            self._rendered = [None] * len(self.items)
        if width <= 0:
            return
        starts, y = [], 0
        for index in range(len(self.items)):
            starts.append(y)
            y += len(self._strips(index))
        self._starts = starts
        self.virtual_size = Size(width, y)
        self.refresh()

    def on_resize(self) -> None:
        self._layout()
        self._show_cursor()

    def notify_style_update(self) -> None:
        """Re-render messages after a theme change (not on every focus change: that would be costly)."""
        super().notify_style_update()
        theme = self.app.theme
        if theme != self._theme:
            self._theme = theme
            if self._width:
                self._width = -1
                self._layout()

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        line = int(self.scroll_offset.y) + y
        if not self.items:
            if y == 0:
                return Strip([Segment(f"  {self._placeholder}", self.rich_style)]).extend_cell_length(width, self.rich_style)
            return Strip.blank(width, self.rich_style)
        if not self._starts or line >= self.virtual_size.height:
            return Strip.blank(width, self.rich_style)
        index = bisect_right(self._starts, line) - 1
        strips = self._strips(index)
        strip = strips[line - self._starts[index]] if line - self._starts[index] < len(strips) else Strip.blank(width)
        selected = index == self.cursor
        gutter_style = self.get_component_rich_style("transcript--gutter")
        gutter = Strip([Segment("▌ " if selected and line - self._starts[index] < len(strips) - 1 else "  ", gutter_style)])
        row = Strip.join([gutter, strip]).extend_cell_length(width, self.rich_style).crop(0, width)
        if selected:
            row = row.apply_style(self.get_component_rich_style("transcript--cursor"))
        return row.apply_style(self.rich_style)
