"""The session lineage tree: roots, and beneath them branches, delegates and other children.

A compression chain (a session, the continuation it was compressed into, and so on) is
one row listing its segments, ``Deploy API  #1 → #2 → #3``: highlighting the row opens
its latest segment, ``[`` / ``]`` pick an earlier or later one (underlined in the row).
Children of every segment nest beneath the row.

Loaded lazily so a home with tens of thousands of sessions opens at once: roots come a
page at a time (a "more…" row asks for the next page), and a node's children are asked
for only when it is expanded (a "loading…" row shows meanwhile). The widget never reads
the archive itself; it posts ``ChildrenWanted`` / ``MoreRootsWanted`` and the screen
answers with ``set_children`` / ``add_roots`` from a thread worker.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode, UnknownNodeID

from engine.clock import shown_time
from engine.counts import msgs
from engine.textsafety import flat_line

from .cursor_in_view import CursorInView
from .literal import cut_cells

KIND_GLYPHS = {"root": "●", "compression": "⤷", "branch": "⑂", "delegate": "↳", "tool": "◇", "child": "◦"}


@dataclass(frozen=True)
class SessionNode:
    """What one tree row shows about a session (built by the screen from archive rows)."""

    id: str
    title: str | None = None
    kind: str = "root"  # root / compression / branch / delegate / tool / child
    child_count: int = 0
    message_count: int = 0
    started_at: float | None = None
    wrote: bool = False  # the session (any segment) wrote memory or skills
    segments: tuple[str, ...] = ()  # a compression chain's session ids, first to latest (empty: just ``id``)
    state: str = ""  # ``Chain.state``: live (not ended) or ended, as every list says it

    @property
    def ids(self) -> tuple[str, ...]:
        return self.segments or (self.id,)


@dataclass(frozen=True)
class MoreRoots:
    """Data of the "more…" row: the (started_at, id) of the last root listed, where the next page begins."""

    after: tuple[float | None, str]


LOADING = object()  # data of a "loading…" placeholder row


SEGMENTS_SHOWN = 6  # a longer chain shows its first, last and picked segments with … between


def segment_numbers(count: int, picked: int) -> list[int | None]:
    """Segment numbers (0-based) a row shows, None for an elided run: all of a short chain, else the ends and
    the picked one with its neighbours."""
    if count <= SEGMENTS_SHOWN:
        return list(range(count))
    keep = {0, count - 1, picked - 1, picked, picked + 1}
    shown: list[int | None] = []
    for number in range(count):
        if number in keep:
            shown.append(number)
        elif shown[-1] is not None:
            shown.append(None)
    return shown


MIN_TITLE = 12  # the fewest cells of title kept before the date, then the size, give way


def _ancestors(node: TreeNode) -> list[TreeNode]:
    found = []
    while node.parent is not None:
        node = node.parent
        found.append(node)
    return found


def _neighbour(node: TreeNode) -> TreeNode | None:
    """The row the cursor goes to when ``node`` goes: the next sibling, else the one before, else the parent."""
    parent = node.parent
    siblings = list(parent.children) if parent is not None else []
    index = siblings.index(node) if node in siblings else -1
    rest = siblings[index + 1 :] + siblings[:index][::-1]
    return next((n for n in rest if isinstance(n.data, SessionNode)), None) or (
        parent if parent is not None and isinstance(parent.data, SessionNode) else None
    )


def session_label(node: SessionNode, picked: int | None = None, width: int | None = None) -> Text:
    """A literal one-line label: kind glyph, write marker, title (or id), segments, kind, size and state, start date.

    ``picked`` is the segment the transcript shows (underlined; default the latest).
    ``width``: the cells the row has. The title is what a user reads, so it keeps at least
    half of the room (never less than ``MIN_TITLE``, never more than it needs): where the size
    and date would leave it less, the date goes first, then the size (the state stays while
    it fits). Without a width the title is cut at a fixed length.
    """
    title = flat_line(node.title or node.id)  # a hostile title never reaches the terminal, nor a line break
    head = Text(f"{KIND_GLYPHS.get(node.kind, '•')} ", style="bold")
    if node.wrote:
        head.append("✎ ", style="bold")
    count = len(node.ids)
    chain = Text()
    if count > 1:
        picked = count - 1 if picked is None else picked
        chain.append("  ")
        for place, number in enumerate(segment_numbers(count, picked)):
            if place:
                chain.append(" → ", style="dim")
            if number is None:
                chain.append("…", style="dim")
            else:
                chain.append(f"#{number + 1}", style="bold underline" if number == picked else "")
    if node.kind != "root":
        chain.append(f" · {node.kind}", style="italic")
    size = f"  {node.message_count} {msgs(node.message_count)}" + (f" · {node.state}" if node.state else "")
    date = "" if node.started_at is None else " · " + (shown_time(node.started_at, "%Y-%m-%d") or "?")
    if width is None:
        room = 48 if count == 1 else 20  # a chain's segments must fit beside its title in a narrow pane
        details = size + date
    else:
        free = width - head.cell_len - chain.cell_len
        keep = min(cell_len(title), max(MIN_TITLE, free - free // 2))
        state = f"  {node.state}" if node.state else ""  # (what is left last: whether it is live)
        details = next((d for d in (size + date, size, state) if free - cell_len(d) >= keep), "")
        room = max(free - cell_len(details), 1)
    label = head
    label.append(cut_cells(title, room, words=True))  # (a title is prose; an id has no word to cut before)
    label.append_text(chain)
    label.append(details, style="dim")
    return label


class LineageTree(CursorInView, Tree):
    """A lazily loaded tree of sessions; data of each row is a ``SessionNode`` (one per compression chain)."""

    DEFAULT_CSS = """
    LineageTree { background: $surface; border: round $primary 40%; }
    LineageTree:focus { border: round $primary; }
    """
    BINDINGS = [
        Binding("right,l", "expand_or_enter", "Expand", show=False),
        Binding("left,h", "collapse_or_parent", "Collapse", show=False),
        Binding("left_square_bracket", "segment(-1)", "Earlier segment", key_display="[", show=False),
        Binding("right_square_bracket", "segment(1)", "Later segment", key_display="]", show=False),
    ]

    class ChildrenWanted(Message):
        """A node was expanded for the first time: load the children of ``session_id``'s chain."""

        def __init__(self, session_id: str) -> None:
            super().__init__()
            self.session_id = session_id

    class MoreRootsWanted(Message):
        """The "more…" row was chosen: load the roots listed after ``after`` (see ``MoreRoots``)."""

        def __init__(self, after: tuple[float | None, str]) -> None:
            super().__init__()
            self.after = after

    class SessionHighlighted(Message):
        """The cursor rests on a row, or picked another segment of it: show ``segment``."""

        def __init__(self, session: SessionNode, segment: str) -> None:
            super().__init__()
            self.session = session
            self.segment = segment

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__("sessions", id=id, classes=classes)
        self.show_root = False
        self.guide_depth = 2
        self._by_id: dict[str, TreeNode] = {}  # every segment's id -> its chain's row
        self._loaded: set[str] = set()  # rows (by first segment) whose children are loaded
        self._picked: dict[str, str] = {}  # row (by first segment) -> the segment picked with [ / ]
        self._followed: str | None = None  # the cursor's session, whose row went with its parent's (it may come back)
        self.root_count = 0

    # -- data in -------------------------------------------------------------------
    def show_roots(self, roots: list[SessionNode], *, more: bool) -> None:
        """Replace the tree with the first page of roots."""
        self.clear()
        self._by_id.clear()
        self._loaded.clear()
        self._picked.clear()
        self.root_count = 0
        self.add_roots(roots, more=more)

    def add_roots(self, roots: list[SessionNode], *, more: bool) -> None:
        """Append a page of roots (those listed already, live meanwhile, are skipped); ``more``: older
        ones remain, paged in after the last listed."""
        for child in list(self.root.children):
            if isinstance(child.data, MoreRoots):
                child.remove()
        for session in roots:
            if not any(i in self._by_id for i in session.ids):
                self._add(self.root, session)
                self.root_count += 1
        last = self.last_root
        if more and last is not None:
            self.root.add_leaf(Text("… more sessions (enter)", style="italic dim"), data=MoreRoots(last))

    @property
    def last_root(self) -> tuple[float | None, str] | None:
        """The (started_at, id) of the last root listed: where the next page of roots begins."""
        rows = [child.data for child in self.root.children if isinstance(child.data, SessionNode)]
        return (rows[-1].started_at, rows[-1].id) if rows else None

    @property
    def more_roots(self) -> bool:
        """Whether older roots remain to load (the "more" row is there)."""
        return any(isinstance(child.data, MoreRoots) for child in self.root.children)

    def set_children(self, session_id: str, children: list[SessionNode]) -> None:
        """Fill a row's children (replacing its "loading…" row)."""
        node = self._by_id.get(session_id)
        if node is None:
            return
        for child in list(node.children):
            self._forget(child)
        node.remove_children()
        for child in children:
            self._add(node, child)
        self._loaded.add(node.data.id)
        if not children:
            node.allow_expand = False
        self.call_after_refresh(self._show_children, node)

    def sync_children(self, session_id: str, children: list[SessionNode]) -> None:
        """Bring a loaded row's children up to date (another process archived, listed again or deleted
        some): new rows added, gone ones removed, the rest refreshed in place, expanded or not."""
        node = self._by_id.get(session_id)
        if node is None or node.data.id not in self._loaded:
            return
        wanted = {child.id for child in children}
        for row in list(node.children):
            if isinstance(row.data, SessionNode) and row.data.id not in wanted:
                self.remove_session(row.data.id)
        for child in children:
            row = next((self._by_id[i] for i in child.ids if i in self._by_id), None)
            if row is not None and row.parent is not node:  # listed elsewhere (a root until its parent came back)
                self.remove_session(row.data.id)
                row = None
            if row is None:
                self._add(node, child)
            else:
                self.update_session(child, row)
        node.allow_expand = bool(node.children)

    @property
    def loaded_ids(self) -> list[str]:
        """The rows whose children are listed (by first segment)."""
        return [session_id for session_id in self._loaded if session_id in self._by_id]

    def add_session(self, session: SessionNode, parent_id: str | None) -> None:
        """A session or chain appeared or changed: a root in its place (``_root_place``), a child under
        its parent if loaded.

        A chain that grew takes over the rows of its new segments (a continuation first
        listed as a child of the segment before it); a root listed as a child until now (a branch
        whose parent was archived) leaves that row for one among the roots.
        """
        rows = list(dict.fromkeys(self._by_id[i] for i in session.ids if i in self._by_id))
        if parent_id is None and rows and rows[0].parent is not self.root:  # a branch whose parent was archived
            cursor = self.cursor_node
            for row in rows:
                if cursor is not None and (cursor is row or row in _ancestors(cursor)):
                    self._followed = session.id  # the cursor goes with it
                self._forget(row)
                row.remove()
            rows = []
        if rows:
            for row in rows[1:]:
                self.root_count -= row.parent is self.root
                self._forget(row)
                row.remove()
            self.update_session(session, rows[0])
            return
        if parent_id is None:
            place = self._root_place(session)
            if place is not None:
                node = self._add(self.root, session, before=place)
                self.root_count += 1
                if self._followed in session.ids:  # the cursor's row, back as a root: the cursor with it
                    self._followed = None
                    self.call_after_refresh(self._land, node)
                elif self.cursor_node is None:  # (a session started after the last row went, say)
                    self.call_after_refresh(self._land, node)
            return
        parent = self._by_id.get(parent_id)
        if parent is None:
            return
        if parent.data.id in self._loaded:
            self._add(parent, session)
        parent.allow_expand = True

    def _root_place(self, session: SessionNode) -> int | None:
        """Where a root goes among those listed, newest first as they were listed (a new session on
        top, an unarchived one where it started); None when it is older than every listed root and
        more are still to page in, which will bring it."""
        started = session.started_at
        for index, node in enumerate(self.root.children):
            if isinstance(node.data, MoreRoots):
                return None
            listed = node.data.started_at if isinstance(node.data, SessionNode) else None
            if started is None or listed is None or listed <= started:
                return index
        return len(self.root.children)

    def update_session(self, session: SessionNode, node: TreeNode | None = None) -> None:
        """Refresh one row (a session grew, got a title or wrote memory; a chain gained a segment)."""
        node = node or next((self._by_id[i] for i in session.ids if i in self._by_id), None)
        if node is None:
            return
        old = node.data
        shown = self.picked(old) if isinstance(old, SessionNode) else None
        node.data = session
        for segment in old.ids:  # a segment the chain lost (its middle one deleted, say) is no longer this row's
            if segment not in session.ids and self._by_id.get(segment) is node:
                del self._by_id[segment]
        for segment in session.ids:
            self._by_id[segment] = node
        if old.id != session.id:
            self._loaded.discard(old.id)
            self._picked.pop(old.id, None)
        if self._picked.get(session.id) not in session.ids:
            self._picked.pop(session.id, None)
        if node is self.cursor_node and shown in session.ids and self.picked(session) != shown:
            # The chain grew under the cursor (Hermes compressed it on): the row keeps the segment the
            # transcript shows underlined, and ] goes on to the new one.
            self._picked[session.id] = shown
        if old.ids != session.ids and session.id in self._loaded:  # the new segments' children belong here too
            if node.is_expanded:
                self.post_message(self.ChildrenWanted(session.id))
            else:
                self._loaded.discard(session.id)
                for child in list(node.children):
                    self._forget(child)
                node.remove_children()
        node.set_label(self._label(session))
        if session.child_count and not node.allow_expand:
            node.allow_expand = True
            self._loaded.discard(session.id)
        elif not session.child_count and not node.children:  # its last child went: no arrow left
            node.allow_expand = False

    def remove_session(self, session_id: str) -> None:
        """Take away the row of ``session_id``'s chain (deleted or archived elsewhere), its children with it."""
        node = self._by_id.get(session_id)
        if node is None:
            return
        cursor = self.cursor_node
        held = cursor is not None and (cursor is node or node in _ancestors(cursor))
        target = _neighbour(node) if held else None
        if held and cursor is not node and isinstance(cursor.data, SessionNode):  # (a branch may come back a root)
            self._followed = cursor.data.id
        self.root_count -= node.parent is self.root
        self._forget(node)
        node.remove()
        if held:
            self.call_after_refresh(self._land, target)

    def _land(self, target: TreeNode | None) -> None:
        """The cursor's row went: put the cursor on the row beside it and say so, so the transcript
        follows (the tree itself posts nothing when the cursor's line stays the same)."""
        if target is not None:
            try:
                self.get_node_by_id(target.id)
            except UnknownNodeID:  # removed in the same pass
                target = None
        target = target or next((n for n in self.root.children if isinstance(n.data, SessionNode)), None)
        self.move_cursor(target)
        if target is not None and isinstance(target.data, SessionNode):
            self.post_message(self.SessionHighlighted(target.data, self.picked(target.data)))

    @property
    def root_segments(self) -> dict[str, tuple[str, ...]]:
        """Every top-level row: its first segment -> the segments it lists."""
        return {child.data.id: child.data.ids for child in self.root.children if isinstance(child.data, SessionNode)}

    @property
    def root_ids(self) -> list[str]:
        """The first segment of every top-level row."""
        return list(self.root_segments)

    def node_for(self, session_id: str) -> TreeNode | None:
        """The row of ``session_id``'s chain."""
        return self._by_id.get(session_id)

    def is_loaded(self, session_id: str) -> bool:
        node = self._by_id.get(session_id)
        return node is not None and node.data.id in self._loaded

    def picked(self, session: SessionNode) -> str:
        """The segment a row shows: the one picked with [ / ], else the latest."""
        return self._picked.get(session.id) or session.ids[-1]

    def reveal(self, session_id: str) -> bool:
        """Expand the ancestors of a (loaded) session's row, pick its segment and put the cursor on it."""
        node = self._by_id.get(session_id)
        if node is None:
            return False
        self._pick(node, session_id)
        parent = node.parent
        while parent is not None and parent is not self.root:
            parent.expand()
            parent = parent.parent
        self.call_after_refresh(self.move_cursor, node)  # line numbers are rebuilt on the next refresh
        return True

    def _add(self, parent: TreeNode, session: SessionNode, before: int | None = None) -> TreeNode:
        node = parent.add(self._label(session), data=session, before=before, allow_expand=session.child_count > 0)
        for segment in session.ids:
            self._by_id[segment] = node
        return node

    def _label(self, session: SessionNode, width: int | None = None) -> Text:
        return session_label(session, session.ids.index(self.picked(session)), width)

    def render_label(self, node: TreeNode, base_style: Style, style: Style) -> Text:
        """A session's label fitted to the cells its row has (the tree redraws its lines on a resize)."""
        session = node.data
        width = self.scrollable_content_region.width
        if isinstance(session, SessionNode) and width:
            depth, parent = 0, node.parent
            while parent is not None and parent is not self.root:
                depth, parent = depth + 1, parent.parent
            prefix = cell_len(self.ICON_NODE) if node.allow_expand else 0
            # what render_label draws (its cached lines know the width they were drawn at)
            node._label = self._label(session, width - depth * self.guide_depth - prefix)
        return super().render_label(node, base_style, style)

    def _pick(self, node: TreeNode, segment: str) -> None:
        session = node.data
        if segment in session.ids and segment != self.picked(session):
            self._picked[session.id] = segment
            node.set_label(self._label(session))

    def _forget(self, node: TreeNode) -> None:
        """Drop a row about to be removed (and the rows beneath it) from the maps."""
        for child in node.children:
            self._forget(child)
        session = node.data
        if isinstance(session, SessionNode):
            for segment in session.ids:
                if self._by_id.get(segment) is node:
                    del self._by_id[segment]
            self._loaded.discard(session.id)
            self._picked.pop(session.id, None)

    # -- keys ----------------------------------------------------------------------
    def action_expand_or_enter(self) -> None:
        """Expand the row; on an expanded row, step to its first child."""
        node = self.cursor_node
        if node is None or not node.allow_expand:
            return
        if not node.is_expanded:
            node.expand()
        elif node.children:
            self.move_cursor(node.children[0])

    def action_collapse_or_parent(self) -> None:
        """Collapse the row; on a collapsed (or leaf) row, step to its parent."""
        node = self.cursor_node
        if node is None:
            return
        if node.is_expanded:
            node.collapse()
        elif node.parent is not None and node.parent is not self.root:
            self.move_cursor(node.parent)

    def action_segment(self, step: int) -> None:
        """Show the chain's previous (-1) or next (+1) segment, stopping at either end."""
        node = self.cursor_node
        session = node.data if node is not None else None
        if not isinstance(session, SessionNode) or len(session.ids) < 2:
            return
        index = session.ids.index(self.picked(session)) + step
        if 0 <= index < len(session.ids):
            self._pick(node, session.ids[index])
            self.post_message(self.SessionHighlighted(session, session.ids[index]))

    def _show_children(self, node: TreeNode) -> None:
        """Scroll so an expanded row's children are in view (the row itself stays on screen)."""
        if node.is_expanded and node.children and node.line >= 0:
            self.scroll_to_node(node.children[-1], animate=False)
            self.scroll_to_node(node, animate=False)

    # -- events --------------------------------------------------------------------
    def _on_tree_node_expanded(self, event: Tree.NodeExpanded) -> None:
        session = event.node.data
        if isinstance(session, SessionNode) and session.id not in self._loaded and not event.node.children:
            event.node.add_leaf(Text("loading…", style="italic dim"), data=LOADING)
            self.post_message(self.ChildrenWanted(session.id))
        self.call_after_refresh(self._show_children, event.node)

    def _on_tree_node_selected(self, event: Tree.NodeSelected) -> None:
        if isinstance(event.node.data, MoreRoots):
            event.stop()
            event.node.set_label(Text("loading…", style="italic dim"))
            self.post_message(self.MoreRootsWanted(event.node.data.after))

    def _on_tree_node_highlighted(self, event: Tree.NodeHighlighted) -> None:
        if isinstance(event.node.data, SessionNode):
            self.post_message(self.SessionHighlighted(event.node.data, self.picked(event.node.data)))
