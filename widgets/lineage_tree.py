"""The session lineage tree: roots, and beneath them compression children, branches and delegates.

Loaded lazily so a home with tens of thousands of sessions opens at once: roots come a
page at a time (a "more…" row asks for the next page), and a node's children are asked
for only when it is expanded (a "loading…" row shows meanwhile). The widget never reads
the archive itself; it posts ``ChildrenWanted`` / ``MoreRootsWanted`` and the screen
answers with ``set_children`` / ``add_roots`` from a thread worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from engine.textsafety import visible

KIND_GLYPHS = {"root": "●", "compression": "⤷", "branch": "⑂", "delegate": "↳", "child": "◦"}


@dataclass(frozen=True)
class SessionNode:
    """What one tree row shows about a session (built by the screen from archive rows)."""

    id: str
    title: str | None = None
    kind: str = "root"  # root / compression / branch / delegate / child
    child_count: int = 0
    message_count: int = 0
    started_at: float | None = None
    wrote: bool = False  # the session wrote memory or skills


@dataclass(frozen=True)
class MoreRoots:
    """Data of the "more…" row: the offset of the next page of roots."""

    offset: int


LOADING = object()  # data of a "loading…" placeholder row


def session_label(node: SessionNode) -> Text:
    """A literal one-line label: kind glyph, write marker, title (or id), kind, size, start date.

    What matters most comes first, so a narrow pane cuts only the size and date.
    """
    title = visible(" ".join((node.title or node.id).split()))  # a hostile title never reaches the terminal
    label = Text(f"{KIND_GLYPHS.get(node.kind, '•')} ", style="bold")
    if node.wrote:
        label.append("✎ ", style="bold")
    label.append(title if len(title) <= 48 else title[:47] + "…")
    if node.kind != "root":
        label.append(f" · {node.kind}", style="italic")
    details = f"  {node.message_count} msg"
    if node.started_at is not None:
        details += " · " + datetime.fromtimestamp(node.started_at, UTC).strftime("%Y-%m-%d")
    label.append(details, style="dim")
    return label


class LineageTree(Tree):
    """A lazily loaded tree of sessions; data of each row is a ``SessionNode``."""

    DEFAULT_CSS = """
    LineageTree { background: $surface; border: round $primary 40%; }
    LineageTree:focus { border: round $primary; }
    """
    BINDINGS = [
        Binding("right,l", "expand_or_enter", "Expand", show=False),
        Binding("left,h", "collapse_or_parent", "Collapse", show=False),
    ]

    class ChildrenWanted(Message):
        """A node was expanded for the first time: load the children of ``session_id``."""

        def __init__(self, session_id: str) -> None:
            super().__init__()
            self.session_id = session_id

    class MoreRootsWanted(Message):
        """The "more…" row was chosen: load the roots page at ``offset``."""

        def __init__(self, offset: int) -> None:
            super().__init__()
            self.offset = offset

    class SessionHighlighted(Message):
        """The cursor rests on a session row."""

        def __init__(self, session: SessionNode) -> None:
            super().__init__()
            self.session = session

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__("sessions", id=id, classes=classes)
        self.show_root = False
        self.guide_depth = 2
        self._by_id: dict[str, TreeNode] = {}
        self._loaded: set[str] = set()
        self.root_count = 0

    # -- data in -------------------------------------------------------------------
    def show_roots(self, roots: list[SessionNode], *, more_offset: int | None) -> None:
        """Replace the tree with the first page of roots."""
        self.clear()
        self._by_id.clear()
        self._loaded.clear()
        self.root_count = 0
        self.add_roots(roots, more_offset=more_offset)

    def add_roots(self, roots: list[SessionNode], *, more_offset: int | None) -> None:
        """Append a page of roots; ``more_offset`` is where the next page starts (None: no more)."""
        for child in list(self.root.children):
            if isinstance(child.data, MoreRoots):
                child.remove()
        for session in roots:
            self._add(self.root, session)
        self.root_count += len(roots)
        if more_offset is not None:
            self.root.add_leaf(Text("… more sessions (enter)", style="italic dim"), data=MoreRoots(more_offset))

    def set_children(self, session_id: str, children: list[SessionNode]) -> None:
        """Fill a node's children (replacing its "loading…" row)."""
        node = self._by_id.get(session_id)
        if node is None:
            return
        node.remove_children()
        for child in children:
            self._add(node, child)
        self._loaded.add(session_id)
        if not children:
            node.allow_expand = False
        self.call_after_refresh(self._show_children, node)

    def add_session(self, session: SessionNode, parent_id: str | None) -> None:
        """A session appeared: a new root goes on top; a child goes under its parent if loaded."""
        if session.id in self._by_id:
            self.update_session(session)
            return
        if parent_id is None:
            self._add(self.root, session, before=0)
            self.root_count += 1
            return
        parent = self._by_id.get(parent_id)
        if parent is None:
            return
        if parent_id in self._loaded:
            self._add(parent, session)
        parent.allow_expand = True

    def update_session(self, session: SessionNode) -> None:
        """Refresh one row's label (a session grew, got a title or wrote memory)."""
        node = self._by_id.get(session.id)
        if node is not None:
            node.data = session
            node.set_label(session_label(session))
            if session.child_count and not node.allow_expand:
                node.allow_expand = True
                self._loaded.discard(session.id)

    def node_for(self, session_id: str) -> TreeNode | None:
        return self._by_id.get(session_id)

    def is_loaded(self, session_id: str) -> bool:
        return session_id in self._loaded

    def reveal(self, session_id: str) -> bool:
        """Expand the ancestors of a (loaded) row and put the cursor on it."""
        node = self._by_id.get(session_id)
        if node is None:
            return False
        parent = node.parent
        while parent is not None and parent is not self.root:
            parent.expand()
            parent = parent.parent
        self.call_after_refresh(self.move_cursor, node)  # line numbers are rebuilt on the next refresh
        return True

    def _add(self, parent: TreeNode, session: SessionNode, before: int | None = None) -> None:
        node = parent.add(session_label(session), data=session, before=before, allow_expand=session.child_count > 0)
        self._by_id[session.id] = node

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
            self.post_message(self.MoreRootsWanted(event.node.data.offset))

    def _on_tree_node_highlighted(self, event: Tree.NodeHighlighted) -> None:
        if isinstance(event.node.data, SessionNode):
            self.post_message(self.SessionHighlighted(event.node.data))
