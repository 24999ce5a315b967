"""A session transcript: roles, tool calls and results, and which messages wrote memory.

A Line-API scroll view (like Textual's ``Log``) so a long session scrolls without one
widget per message. Messages are laid out by a cheap height estimate and rendered
(once per width) only when they come into view, so a 2,000-message session opens at
once; a cursor marks one message (for "jump to message" and keyboard navigation). All text is shown
literally: agent and user text is wrapped in ``Content``, never parsed as markup.
Tool-call arguments and tool results that are JSON are pretty-printed and highlighted
with Pygments (through ``textual.highlight``, so colours follow the theme).

While a transcript streams (the Run screen), ``follow`` keeps the newest message in
view; when the user has scrolled away, new messages are counted as unseen instead of
yanking the view.
"""

from __future__ import annotations

import re
import textwrap
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len
from rich.segment import Segment
from textual.binding import Binding
from textual.content import Content
from textual.geometry import Region, Size
from textual.highlight import highlight
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.visual import Visual

from engine.clock import shown_time
from engine.textsafety import clipped, readable_json

from .literal import WholeWrap, visible

GUTTER = 2
FULL_TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")  # a header's time as ``when`` writes it
# What w and m say when they have nothing to go to (dimmed in the footer, and said when pressed)
NO_WRITES = "No message in this session wrote memory or skills."
NO_ENTRIES = "No message in this session wrote a memory entry."
NO_ENTRY = "This message wrote no memory entry (w jumps to the next one that wrote something)."

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
    mark: str = "wrote"  # the header tag when there are writes ("staged" when they all await approval)
    entries: tuple[tuple[str, str], ...] = ()  # (target, text) of the memory entries it wrote, newest last
    note: str = ""  # said under its content, apart from it (``engine.db.stored_advice_note``)


def sanitize(text: str) -> str:
    """Make text safe to show: control characters become visible replacement marks."""
    return visible(text.expandtabs(4))


def _json_text(value: Any) -> str | None:
    """Pretty JSON if ``value`` is (or parses as) a JSON object or array (the engine's reading of it)."""
    pretty = readable_json(value)
    return None if pretty is None else clipped(sanitize(pretty))


def _call_parts(call: Any) -> tuple[str, Any]:
    """Name and arguments of a tool call in OpenAI (``function``) or flat form."""
    if not isinstance(call, dict):
        return "?", call
    function = call.get("function") if isinstance(call.get("function"), dict) else call
    return str(function.get("name") or "?"), function.get("arguments", function.get("args", ""))


def when(timestamp: float | None) -> str:
    if timestamp is None:
        return ""
    return shown_time(timestamp, "%Y-%m-%d %H:%M:%S") or "?"


def _parts(item: TranscriptItem, highlighted: bool = True, width: int | None = None) -> list[Content]:
    """The message's lines as Content: header, body, tool calls, write markers (JSON highlighted or plain).
    The header keeps to one line of ``width`` where it can: its time drops the year, then the day, when
    the whole would not fit (at 80 columns the Sessions transcript cut ``✎ wrote`` in two)."""

    def block(value: Any) -> Content:
        pretty = _json_text(value)
        if pretty is None:
            return Content(clipped(sanitize(str(value))))
        return highlight(pretty, language="json") if highlighted else Content(pretty)

    header: list[Any] = [(item.role, ROLE_STYLES.get(item.role, "bold"))]
    if item.role == "tool" and item.tool_name:
        header.append((f" ← {sanitize(item.tool_name)}", "$text-secondary"))
    stamp = when(item.timestamp) if item.timestamp is not None else None
    rest: list[Any] = []
    if item.id is not None:
        rest.append((f"  #{item.id}", "$text-muted"))
    if item.writes:
        rest.append((f"  ✎ {item.mark}", "bold $text-warning"))
    if stamp is not None:
        if width is not None and FULL_TIME.match(stamp):  # the year, then the day, go where it would not fit
            room = width - sum(cell_len(text) for text, _ in [*header, *rest]) - 2
            stamp = next((short for short in (stamp, stamp[5:], stamp[11:]) if cell_len(short) <= room), stamp[11:])
        header.append((f"  {stamp}", "$text-muted"))
    parts = [Content.assemble(*header, *rest)]
    if item.content:
        parts.append(block(item.content))
    if item.note:
        parts.append(Content.styled(f"note: {sanitize(item.note)}", "italic $text-muted"))
    for call in item.tool_calls:
        name, arguments = _call_parts(call)
        parts.append(Content.assemble(("→ call ", "$text-accent"), (sanitize(name), "bold $text-accent")))
        if arguments not in ("", None, {}, "{}"):
            parts.append(block(arguments))
    for write in item.writes:
        parts.append(Content.assemble(("✎ ", "bold $text-warning"), (sanitize(write), "$text-warning")))
    return parts


def render_item(item: TranscriptItem, width: int | None = None) -> Content:
    """The whole message as one highlighted Content (to be drawn ``width`` cells wide)."""
    return Content("\n").join(_parts(item, width=width))


def estimate_height(item: TranscriptItem, width: int) -> int:
    """Lines the message will take at ``width`` (exact for lines that fit; wrapped lines may take one more).

    Cheap (no highlighting, no wrapping), so a long session is laid out at once and only
    the messages in view are really rendered.
    """
    plain = "\n".join(part.plain for part in _parts(item, highlighted=False, width=width))
    return sum(max(1, -(-cell_len(line) // width)) for line in plain.split("\n")) + 1  # + the blank separator


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
        # f says what it will do: one of the two is hidden (check_action), as follow is on or off
        Binding("f", "follow", "Follow", tooltip="Keep the newest message in view while it streams"),
        Binding("f", "unfollow", "Unfollow", tooltip="Stop following: new messages are counted, the view stays"),
        Binding("m", "open_entry", "Entry", tooltip="Open the memory entry this message wrote"),
    ]

    class EntryWanted(Message):
        """The reader asked for the memory entry a message wrote (the app opens the Memory screen on it)."""

        def __init__(self, target: str, text: str) -> None:
            super().__init__()
            self.target = target
            self.text = text

    cursor: reactive[int] = reactive(-1, init=False)
    follow: reactive[bool] = reactive(True, init=False)
    unseen: reactive[int] = reactive(0, init=False)
    elsewhere: reactive[bool] = reactive(False, init=False)  # its session is not among a search's hits shown

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.items: list[TranscriptItem] = []
        self._rendered: list[list[Strip] | None] = []  # per message, at the current width; None until in view
        self._heights: list[int] = []  # per message: real once rendered, estimated before
        self._starts: list[int] = []
        self._width = 0
        self._theme: str | None = None  # the theme the cached renders were made with
        self._placeholder = "No session selected."

    # -- data in -------------------------------------------------------------------
    def set_items(
        self, items: Iterable[TranscriptItem], *, placeholder: str | None = None, select_id: int | None = None
    ) -> None:
        """Replace every message; put the cursor on ``select_id`` (or the last message)."""
        self.items = list(items)
        if placeholder is not None:
            self._placeholder = placeholder
        self._rendered = [None] * len(self.items)
        self._heights = []
        self.unseen = 0
        self._layout()
        index = self.index_of(select_id) if select_id is not None else None
        if index is None:
            index = len(self.items) - 1 if self.follow else (0 if self.items else -1)
        self.set_reactive(Transcript.cursor, index)
        self._show_cursor(center=select_id is not None)
        self.refresh_bindings()

    def append(self, item: TranscriptItem) -> None:
        """Add a message at the end (streaming); keeps the view and the cursor unless following from the newest
        message (a short session is all in view with the cursor on any of its messages: a jump's, say)."""
        was_at_end = (self.is_vertical_scroll_end or not self.items) and self.cursor >= len(self.items) - 1
        self.items.append(item)
        self._rendered.append(None)
        self._layout()
        self._after_growth(was_at_end)
        if item.writes:
            self.refresh_bindings()  # (w has a message to go to)

    def replace(self, index: int, item: TranscriptItem) -> None:
        """Show ``item`` in place of message ``index`` (an answer growing as it streams in), following it when
        the view follows the newest line."""
        was_at_end = self.is_vertical_scroll_end
        self.items[index] = item
        self._rendered[index] = None
        if index < len(self._heights):
            self._heights[index] = estimate_height(item, max(1, self._width - GUTTER))
        self._restart()
        if self.follow and was_at_end:
            self.scroll_end(animate=False, immediate=True, x_axis=False)

    def set_placeholder(self, text: str) -> None:
        """What the empty transcript says (an error may quote a path or SQLite's words: shown, never obeyed)."""
        self._placeholder = sanitize(text)
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
        self.notify(NO_WRITES, severity="warning")

    def action_open_entry(self) -> None:
        item = self.current
        if item is None or not item.entries:
            self.notify(self.explain_dimmed("open_entry", ()) or NO_ENTRY, severity="warning", markup=False)
            return
        target, text = item.entries[-1]
        self.post_message(self.EntryWanted(target, text))

    def explain_dimmed(self, action: str, parameters: tuple) -> str | None:
        """Why ``w`` or ``m``, dimmed (``check_action``), does nothing here: said when pressed (the app's
        ``run_action``), never silence."""
        if action == "next_write":
            return NO_WRITES if self.items else "No session is shown: it has no messages to jump between."
        if action == "open_entry":
            if self.current is None:
                return "No message is selected: j/k move between messages."
            return NO_ENTRY if any(item.entries for item in self.items) else NO_ENTRIES
        return None

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        """``m`` is dimmed on a message that wrote no memory entry, ``w`` while no message of the
        session wrote memory or skills: pressed, each says so in a warning (``explain_dimmed``). ``f`` reads Unfollow
        while following, Follow while not."""
        if action in ("follow", "unfollow"):
            return (action == "unfollow") == self.follow
        if action == "open_entry":
            item = self.current
            return True if item is not None and item.entries else None
        if action == "next_write":
            return True if any(item.writes for item in self.items) else None
        return True

    def watch_cursor(self) -> None:
        self.refresh_bindings()  # (m: whether this message wrote an entry)

    def action_follow(self) -> None:
        self.follow = True

    def action_unfollow(self) -> None:
        self.follow = False

    def watch_follow(self, follow: bool) -> None:
        self.refresh_bindings()  # (f: Follow, or Unfollow)
        if follow and self.items:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
            self.unseen = 0
        self._update_subtitle()

    def watch_unseen(self) -> None:
        self._update_subtitle()

    def watch_elsewhere(self) -> None:
        self._update_subtitle()

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if self.unseen and self.is_vertical_scroll_end:
            self.unseen = 0

    def _update_subtitle(self) -> None:
        parts = [] if self.follow else ["follow off (f)"]
        if self.elsewhere:
            parts.insert(0, "not a hit: enter opens the highlighted one")
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
        self._strips(self.cursor)
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
        """The message's rendered lines; rendering corrects its estimated height (keeping the view still)."""
        strips = self._rendered[index]
        if strips is None:
            width = max(1, self._width - GUTTER)
            shown = WholeWrap(render_item(self.items[index], width))
            strips = Visual.to_strips(self, shown, width, None, self.visual_style)
            strips.append(Strip.blank(width))  # one blank line between messages
            self._rendered[index] = strips
            delta = len(strips) - self._heights[index]
            if delta:
                self._heights[index] = len(strips)
                above, at_end = self._starts[index] < self.scroll_y, self.is_vertical_scroll_end
                self._restart()
                if above:  # a message above the view grew or shrank: move with it so the view does not jump
                    self.set_scroll(None, self.scroll_y + delta)
                elif at_end and self.follow:  # keep following the newest line
                    self.set_scroll(None, self.max_scroll_y)
        return strips

    def _layout(self) -> None:
        """Lay every message out by its estimated height; only messages in view get rendered."""
        width = self.scrollable_content_region.width
        if width != self._width:
            self._width = width
            self._rendered = [None] * len(self.items)
            self._heights = []
        if width <= 0:
            return
        for index in range(len(self._heights), len(self.items)):
            self._heights.append(estimate_height(self.items[index], max(1, width - GUTTER)))
        self._restart()

    def _restart(self) -> None:
        """Recompute where each message starts from the heights."""
        starts, y = [], 0
        for height in self._heights:
            starts.append(y)
            y += height
        self._starts = starts
        self.virtual_size = Size(self._width, y)
        self.refresh()

    def render_lines(self, crop: Region) -> list[Strip]:
        # Render the messages in view first, so their real heights are known before lines are drawn.
        line, bottom = int(self.scroll_y) + crop.y, int(self.scroll_y) + crop.bottom
        while self._starts and line < min(bottom, self.virtual_size.height):
            index = bisect_right(self._starts, line) - 1
            self._strips(index)
            line = self._starts[index] + self._heights[index]
        return super().render_lines(crop)

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
        if not self.items:  # the placeholder, wrapped: an empty state is read in full at any width
            lines = textwrap.wrap(self._placeholder, max(width - 3, 10))
            if y < len(lines):
                return Strip([Segment(f"  {lines[y]}", self.rich_style)]).crop_extend(0, width, self.rich_style)
            return Strip.blank(width, self.rich_style)
        if not self._starts or line >= self.virtual_size.height:
            return Strip.blank(width, self.rich_style)
        index = bisect_right(self._starts, line) - 1
        strips = self._strips(index)
        strip = strips[line - self._starts[index]] if line - self._starts[index] < len(strips) else Strip.blank(width)
        selected = index == self.cursor
        gutter_style = self.get_component_rich_style("transcript--gutter")
        mark = "▌ " if selected and line - self._starts[index] < len(strips) - 1 else "  "  # not on the blank line
        gutter = Strip([Segment(mark, gutter_style)])
        row = Strip.join([gutter, strip]).extend_cell_length(width, self.rich_style).crop(0, width)
        if selected:
            row = row.apply_style(self.get_component_rich_style("transcript--cursor"))
        return row.apply_style(self.rich_style)
