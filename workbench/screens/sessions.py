"""The Sessions screen: lineage tree, search as you type, and the transcript.

Every archive read runs in a thread worker and comes back as a Message, so the UI never
waits on SQLite. Roots load a page at a time and children on expand (a 20,000-session
home opens at once). A keystroke starts a search at once when none is running; keys
typed while one runs are coalesced into one search of the newest text when it ends, and
a result whose query no longer matches the box is never shown. Other screens open a message here
by posting ``workbench.messages.JumpToMessage`` to the app.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field

from textual import on, work
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import ContentSwitcher, Input
from textual.worker import get_current_worker

from engine.archive.models import Chain, SearchHit
from engine.archive.search import COUNT_CAP
from engine.archive.sessions import LISTED_BY, titled
from engine.db import stored_advice_note
from engine.errors import BadSearchFilter, WorkbenchError
from engine.events import Event, MemoryChanged, MessageStored, SessionChanged, SkillChanged
from engine.home import ARCHIVE_UNREADABLE
from engine.runner.claims import unbacked_claims
from engine.session_writes import Write, approved_outside, session_writes, session_wrote
from engine.textsafety import flat_line
from widgets.lineage_tree import LineageTree, SessionNode
from widgets.search_box import SearchBox
from widgets.search_results import Hit, SearchResults
from widgets.transcript import Transcript, TranscriptItem

from ..messages import JumpToMessage
from .session_actions import HELP as ACTIONS_HELP
from .session_actions import SessionActions
from .session_prune import HELP as PRUNE_HELP
from .session_prune import SessionPrune

ROOTS_PAGE = 200
SEARCH_LIMIT = 50  # rows (compression chains) listed per query, the best first
UNBACKED_NOTE = "unbacked claim: it says it saved or will remember, but this turn wrote nothing"
TRANSCRIPT_LIMIT = 2000  # messages shown at once; longer sessions show a window
PLAN_INDEXES = {"fts": "word index", "bigram": "CJK bigram index", "trigram": "trigram index", "like": "substring scan"}
PLAN_ORDERS = {
    "ranked": "best match",
    "newest": "newest first",
    "oldest": "oldest first",
    "prefix": "",
    "prefix-top": "",  # said in the note over the results (search_note), which the title would cut
}


# -- worker results ---------------------------------------------------------------------
@dataclass
class RootsLoaded(Message):
    after: tuple[float | None, str] | None  # the last root listed before this page (None: the first page)
    nodes: list[SessionNode]
    more: bool  # older roots remain
    error: str | None = None  # the archive could not be read (said in place of the transcript)
    unlisted: int = 0  # with no roots: the sessions the tree does not list (archived), if any
    damaged: str | None = None  # state.db damaged: the roots are what could be read (``Archive.roots_read``)


@dataclass
class ChildrenLoaded(Message):
    session_id: str
    nodes: list[SessionNode]


@dataclass
class SearchDone(Message):
    query: str
    hits: list[Hit]
    error: str | None = None
    note: str | None = None
    again: bool = False  # the same query searched again because the archive changed
    unsearched: str | None = None  # why nothing was searched (``nothing_searched``): no hits, and no "no match"


@dataclass
class CountsDone(Message):
    query: str
    counts: dict[str, int]
    titles: dict[str, str] = field(default_factory=dict)  # what untitled sessions show instead (``titled``)


@dataclass
class SessionHitsLoaded(Message):
    query: str
    session_id: str
    hits: list[Hit]


@dataclass
class TranscriptLoaded(Message):
    session_id: str
    title: str
    items: list[TranscriptItem]
    select_id: int | None
    gone: bool = False  # state.db no longer holds the session (deleted here or by another process)
    archived: bool = False  # the tree no longer lists it, but a/e/D still act on it
    archived_share: str = "none"  # how much of its conversation is archived (a: Archive, Archive rest, Unarchive)


@dataclass
class SessionRefreshed(Message):
    node: SessionNode
    parent_id: str | None


@dataclass
class ChildrenSynced(Message):
    """A listed row's children as state.db holds them now."""

    session_id: str
    children: list[SessionNode]


@dataclass
class SessionsGone(Message):
    """Sessions deleted, or archived, since the tree listed them."""

    session_ids: list[str]


@dataclass
class ArchiveFlags(Message):
    """Whether each segment of a chain that changed is archived now (for the search results' mark)."""

    archived: dict[str, bool]


@dataclass
class LineageLoaded(Message):
    session_id: str
    chain: list[str]  # first segments of the chains above the session's, root first
    children: dict[str, list[SessionNode]]
    # From esc out of a search: where the tree cannot show the session (an archived conversation, a root
    # past the roots listed), the transcript goes back to the row under the cursor instead.
    or_cursor: bool = False


class SessionsScreen(SessionActions, SessionPrune):
    AUTO_FOCUS = "LineageTree"
    TITLE_TEXT = "Sessions"
    SELECTS = {"listed_session": "a session", "session": "a session"}
    SEARCH_BOX = "sessions-search"
    HELP = (
        "The lineage tree lists root sessions; a compression chain is one row (Deploy API  #1 → #2 → #3) that "
        "opens its latest segment, [ and ] show an earlier or later one. Expand a row (right or l; left or h "
        "collapses or goes to the parent) to see its branches and delegates (✎ marks sessions that wrote "
        "memory or skills). Type in the search box to search "
        "every message (CJK included); hits are grouped by session, enter opens one. A word of its own that "
        "starts role: or sort: filters, as the CLI's --role and --sort do: role:user 東京 searches the user's "
        "messages only (role:user,tool more roles), sort:oldest or sort:newest orders by time; a role no message "
        "has says which there are. The transcript shows "
        "roles, tool calls and results; ✎ marks messages that wrote memory or skills. In the transcript: j/k "
        "(or arrows) move between messages, w jumps to the next message that wrote something, m opens the "
        "memory entry it wrote, f toggles follow." + ACTIONS_HELP + PRUNE_HELP
    )
    FOOTER_FIRST = ("slash",)  # where the footer is narrow (60 columns): before the session's own keys
    BINDINGS = [
        Binding("slash", "focus_search", "Search", key_display="/", priority=True),
        # short, and reload in help only: at 80 columns the transcript's keys come first in the footer
        # esc says what it does (check_action): Clear while a search is set, else Tree away from the tree
        Binding("escape", "clear_search('search')", "Clear", tooltip="Clear the search and go back to the tree"),
        Binding("escape", "clear_search('tree')", "Tree", tooltip="Move the focus back to the tree"),
        Binding("ctrl+r", "reload", "Reload", show=False),
    ]
    DEFAULT_CSS = """
    SessionsScreen #sessions-search { margin: 0 0; border: tall $primary 40%; }
    SessionsScreen #sessions-search:focus { border: tall $primary; }
    SessionsScreen #sessions-body { height: 1fr; }
    SessionsScreen #sessions-left { width: 2fr; min-width: 28; }
    SessionsScreen #sessions-left > * { height: 1fr; }
    SessionsScreen Transcript { width: 3fr; }
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.shown_session = None
        self.wanted_session = None
        self._searching: str | None = None  # the query of the search in flight (one at a time)
        self._box_held = False  # the search box holds text (esc reads Clear)
        self._reveal: LineageLoaded | None = None  # a jump that arrived before the roots did
        # What engine events changed since the last reload (merged in a burst, kept while hidden).
        self._changed: set[str] = set()  # sessions whose tree rows to refresh
        self._roots_changed = False  # another process changed state.db
        self._transcript_changed = False  # the shown session grew or wrote something
        self._results_changed = False  # the archive changed under the search results shown
        self._stamps: dict[str, tuple] = {}  # rows below the newest page of roots: how they were last drawn

    def compose_body(self) -> Iterable[Widget]:
        yield SearchBox(placeholder="search messages (/) · filters: role:user sort:oldest", id="sessions-search")
        with Horizontal(id="sessions-body"):
            with ContentSwitcher(initial="sessions-tree", id="sessions-left"):
                yield LineageTree(id="sessions-tree")
                yield SearchResults(id="sessions-results", cap=COUNT_CAP)
            yield Transcript(id="sessions-transcript")
        yield self.status_line()  # what archive, rename and delete did (session_actions)

    def on_mount(self) -> None:
        self.query_one(LineageTree).border_title = "Lineage"
        self.query_one(Transcript).border_title = "Transcript"
        self.load_roots()

    @property
    def tree(self) -> LineageTree:
        return self.query_one(LineageTree)

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    # -- actions -------------------------------------------------------------------
    def action_focus_search(self) -> None:
        self.focus_box()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        """esc read Clear with no search to clear, also on the tree, where it does nothing: it is offered as
        Clear while the box holds a search, as Tree where the focus is elsewhere, and not at all on the tree."""
        if action != "clear_search" or not self.is_mounted:
            return super().check_action(action, parameters)
        searching = bool(self.search_box.value)
        if parameters == ("search",):
            return searching
        return not searching and not isinstance(self.focused, LineageTree)

    def action_clear_search(self, _: str = "") -> None:
        """Back to the tree, its cursor on the session the transcript shows (a hit just opened: esc showed
        the row under the cursor instead, as if the place was lost), else the transcript on the cursor's row:
        a, e, D and x act on the row under the cursor, and it is the one shown."""
        search = self.query_one("#sessions-search", Input)
        if search.value:
            search.value = ""
        self.tree.focus()
        node = self.tree.cursor_node
        cursor = self.tree.picked(node.data) if node is not None and isinstance(node.data, SessionNode) else None
        if self.wanted_session is not None and self.wanted_session != cursor:
            self.load_lineage(self.wanted_session, or_cursor=True)
        else:
            self._show_cursor_row()

    def _show_cursor_row(self) -> None:
        node = self.tree.cursor_node
        if node is not None and isinstance(node.data, SessionNode):
            segment = self.tree.picked(node.data)
            if segment != self.wanted_session:
                self.load_transcript(segment, None, archived="none")  # (the tree lists no conversation archived whole)

    def action_reload(self) -> None:
        self.load_roots()
        if self.shown_session:
            self.load_transcript(self.shown_session, self.transcript.current.id if self.transcript.current else None)

    # -- tree ----------------------------------------------------------------------
    @work(thread=True, exit_on_error=False, group="roots")
    def load_roots(self, after: tuple[float | None, str] | None = None) -> None:
        try:
            damaged = None
            if after is None:  # (damaged where the lineage is read: what could be read, as `sessions list`)
                chains, damaged = self.home.archive.roots_read(limit=ROOTS_PAGE + 1)
            else:
                chains = self.home.archive.root_chains(limit=ROOTS_PAGE + 1, after=after)
            unlisted = self.home.archive.session_count() if not chains and after is None else 0
            nodes = self._tree_nodes(chains[:ROOTS_PAGE])  # (reads messages too: damage there is said as well)
        except WorkbenchError as exc:  # a damaged or foreign state.db: said where the sessions would be
            self.post_message(RootsLoaded(after, [], False, exc.in_app))
            return
        except (sqlite3.Error, OSError) as exc:  # a damaged page the opening checks missed: as the CLI says it
            self.post_message(RootsLoaded(after, [], False, self.home.explain(exc)))
            return
        if after is not None:  # an older page: a change to its rows is found by their stamps (refresh_roots)
            with contextlib.suppress(WorkbenchError):
                self._stamps.update(self.home.archive.chain_stamps({c.head.id: c.ids for c in chains[:ROOTS_PAGE]}))
        self.post_message(RootsLoaded(after, nodes, len(chains) > ROOTS_PAGE, unlisted=unlisted, damaged=damaged))

    @on(RootsLoaded)
    def _roots_loaded(self, message: RootsLoaded) -> None:
        if message.after is None and self.unreadable != bool(message.error):
            self.unreadable = bool(message.error)
            self.refresh_bindings()
        if message.error:
            self.transcript.set_placeholder(f"{ARCHIVE_UNREADABLE} {message.error}")
            return
        if message.after is None:
            self.damaged = message.damaged
            if message.damaged:
                self.show_status(message.damaged, error=True)
            self.tree.show_roots(message.nodes, more=message.more)
            if self._reveal is not None:
                self._lineage_loaded(self._reveal)
            elif message.nodes and self.wanted_session is None:
                self.tree.move_cursor(self.tree.node_for(message.nodes[0].id))  # open the newest session at once
            elif message.unlisted:
                count = f"{message.unlisted} session{'s' * (message.unlisted != 1)}"
                self.transcript.set_placeholder(
                    f"The tree lists none of the {count} in this home: archived ones are hidden. Search (/) "
                    "still finds them, and a on one lists it again."
                )
            elif not message.nodes:
                self.transcript.set_placeholder(
                    "No sessions in this home yet: talk to the agent on the Run screen (5), or play a scenario there."
                )
        else:
            self.tree.add_roots(message.nodes, more=message.more)
        self._count_roots()

    damaged: str | None = None  # state.db is damaged: the tree lists what could be read (``RootsLoaded``)

    def _count_roots(self) -> None:
        tree = self.tree
        more = "+" if tree.more_roots else ""
        roots = f"{tree.root_count}{more} root{'s' * (tree.root_count != 1 or bool(more))}"
        listed = f"{roots} · by {LISTED_BY}"  # (newest first; the date each row shows)
        if self.damaged:  # (what could be read of a damaged state.db: flat, newest first)
            listed = f"{roots} · ⚠ state.db damaged: what could be read"
        # the pane's name gives way first, so a narrow pane (80 columns) keeps the order whole
        tree.border_title = f"Lineage · {listed}" if len(listed) + 14 <= tree.size.width else listed

    def on_resize(self) -> None:
        if self.tree.root_count or self.tree.more_roots:
            self.call_after_refresh(self._count_roots)

    @on(LineageTree.MoreRootsWanted)
    def _more_roots(self, message: LineageTree.MoreRootsWanted) -> None:
        self.load_roots(message.after)

    @on(LineageTree.ChildrenWanted)
    def _children_wanted(self, message: LineageTree.ChildrenWanted) -> None:
        self.load_children(message.session_id)

    @work(thread=True, exit_on_error=False)
    def load_children(self, session_id: str) -> None:
        with self.archive_read():
            children = self.home.archive.chain_children(session_id)
            self.post_message(ChildrenLoaded(session_id, self._tree_nodes(children)))

    @on(ChildrenLoaded)
    def _children_loaded(self, message: ChildrenLoaded) -> None:
        self.tree.set_children(message.session_id, message.nodes)

    @on(LineageTree.SessionHighlighted)
    def _session_highlighted(self, message: LineageTree.SessionHighlighted) -> None:
        # Only the reader moving the cursor opens a session; a programmatic move (a jump's
        # reveal, a live update) must not replace the transcript being read.
        if message.segment != self.wanted_session and (self.tree.has_focus or self.wanted_session is None):
            self.load_transcript(message.segment, None, archived="none")  # (the tree lists none archived whole)

    def _tree_nodes(self, chains: Iterable[Chain]) -> list[SessionNode]:
        """Tree rows for compression chains (runs in a worker: asks the journal who wrote memory)."""
        chains = list(chains)
        previews = self.home.archive.previews([chain.head.id for chain in chains if not chain.title])
        approved = approved_outside(self.home)  # read once for every row
        return [
            SessionNode(
                id=chain.head.id,
                title=titled(chain.title, previews.get(chain.head.id)),
                kind=chain.kind,
                child_count=chain.child_count,
                message_count=chain.message_count,
                started_at=chain.head.started_at,
                wrote=any(session_wrote(self.home, segment, approved) for segment in chain.ids),
                segments=chain.ids if len(chain.ids) > 1 else (),
                state=chain.state,
            )
            for chain in chains
        ]

    # -- search --------------------------------------------------------------------
    @on(Input.Changed, "#sessions-search")
    def _search_changed(self, event: Input.Changed) -> None:
        if bool(event.value) != self._box_held:  # (esc: Clear while there is a search, Tree or nothing without;
            self._box_held = bool(event.value)  # rebound only then, so a key typed relays out nothing)
            self.refresh_bindings()
        query = event.value.strip()
        switcher = self.query_one(ContentSwitcher)
        if not query:  # a search still running finishes unseen (its result no longer matches the box)
            switcher.current = "sessions-tree"
            self.transcript.elsewhere = False
            self.query_one(SearchResults).show("", [])  # the next first letter opens an empty list: less to draw
            return
        # The results take the tree's place when they arrive (_search_done): one relayout and one frame per key.
        self.query_one(SearchResults).mark_stale()
        self.workers.cancel_group(self, "counts")  # counts of the old text would be dropped anyway
        if self._searching is None:
            self._start_search(query)
        # else: the search in flight finishes first, then the newest text is searched (keys coalesce)

    @on(Input.Submitted, "#sessions-search")
    def _search_submitted(self) -> None:
        results = self.query_one(SearchResults)
        hit = results.current
        if self.query_one(ContentSwitcher).current == "sessions-results" and hit is not None:
            results.focus()  # (with no hit the box keeps focus, so typing goes on refining)
            self.load_transcript(hit.session_id, hit.message_id)

    def _start_search(self, query: str, again: bool = False) -> None:
        self._searching = query
        self.search(query, again)

    @work(thread=True, exit_on_error=False, group="search")
    def search(self, query: str, again: bool = False) -> None:
        rows, error, note, unsearched = [], None, None, None
        try:  # the hits alone: their sessions' match counts follow (count_matches), so no key waits for them
            archive = self.home.archive
            filters = archive.search_filters(query)  # role: and sort: words, as the CLI reads them
            words = filters.text
            if unsearched := archive.nothing_searched(words, prefix=True):  # (the CLI's words: not "no match")
                return
            hits = archive.search(  # (one more than shown: whether others matched)
                words, limit=SEARCH_LIMIT + 1, prefix=True, role=filters.roles, sort=filters.sort
            )
            rows, note = [list_hit(hit) for hit in hits], archive.search_note(words, hits[:SEARCH_LIMIT], prefix=True)
        except BadSearchFilter as exc:  # a bad filter searches nothing, and says what it takes
            unsearched = exc.message
        except WorkbenchError as exc:  # e.g. the archive stayed busy: said, and the next key searches again
            error = exc.in_app
        except (sqlite3.Error, OSError) as exc:  # a damaged page the opening checks missed: as the CLI says it
            error = self.home.explain(exc)
        finally:
            self.post_message(SearchDone(query, rows, error, note, again, unsearched))

    @on(SearchDone)
    def _search_done(self, message: SearchDone) -> None:
        self._searching = None
        current = self.query_one("#sessions-search", Input).value.strip()
        if not current:
            return
        if message.query != current:
            self._start_search(current)  # typed on meanwhile: never show stale hits, search the newest text
            return
        self.query_one(ContentSwitcher).current = "sessions-results"
        more = len(message.hits) > SEARCH_LIMIT  # (the best rows only: refining the search finds the rest)
        hits = message.hits[:SEARCH_LIMIT]
        results = self.query_one(SearchResults)  # a failed search says so there, in place of the hits, never "no match"
        results.show(
            message.query,
            hits,
            message.note,
            more=more,
            again=message.again,
            error=message.error,
            unsearched=message.unsearched,
        )
        shown = {h.session_id for h in hits} | {sid for h in hits for sid in h.segments}
        # ("not a hit: enter opens the highlighted one": with no hits there is none to open, and the
        # results already say nothing matched)
        self.transcript.elsewhere = bool(hits) and self.wanted_session is not None and self.wanted_session not in shown
        if hits:
            rows = {h.session_id: h.segments or (h.session_id,) for h in hits}
            self.count_matches(message.query, rows, [h for h in hits if not h.title])
        self._search_again()

    @work(thread=True, exclusive=True, exit_on_error=False, group="counts")
    def count_matches(self, query: str, rows: dict[str, tuple[str, ...]], untitled: list[SearchHit]) -> None:
        """After the hits are on screen (a key typed meanwhile stops it): what the untitled hits show for
        a title (their chain's first user message, as the tree does), then each row's match count, over
        every segment of its chain (``rows``: a row's session -> its chain's sessions)."""
        worker = get_current_worker()
        with self.archive_read():  # (damage is said; busy is not: the next key counts again)
            try:
                if untitled:
                    previews = self.home.archive.hit_previews(untitled)
                    titles = {sid: titled(None, preview) or sid for sid, preview in previews.items()}
                    self.post_result(CountsDone(query, {}, titles))
                filters = self.home.archive.search_filters(query)
                counted = self.home.archive.match_counts(
                    filters.text,
                    [sid for segments in rows.values() for sid in segments],
                    prefix=True,
                    role=filters.roles,
                    cap=COUNT_CAP,
                    stop=lambda: worker.is_cancelled,
                )
            except WorkbenchError:  # (busy)
                return  # the header keeps its "…"; the next key counts again
            counts = {
                row: min(COUNT_CAP, sum(counted[sid] for sid in segments))
                for row, segments in rows.items()
                if all(sid in counted for sid in segments)  # (a row not counted to the end keeps its "…")
            }
            self.post_result(CountsDone(query, counts))

    @on(CountsDone)
    def _counts_done(self, message: CountsDone) -> None:
        # Drawn only while no newer search runs: a redraw must never hold up the next key's results.
        if self._searching is None and self.query_one("#sessions-search", Input).value.strip() == message.query:
            results = self.query_one(SearchResults)
            results.set_titles(message.query, message.titles)
            results.set_counts(message.query, message.counts)

    @on(SearchResults.HitsWanted)
    def _hits_wanted(self, message: SearchResults.HitsWanted) -> None:
        best = self.query_one(SearchResults).best.get(message.session_id)
        self.load_session_hits(message.query, message.session_id, best.segments if best else ())

    @work(thread=True, exit_on_error=False, group="session-hits")
    def load_session_hits(self, query: str, session_id: str, segments: tuple[str, ...] = ()) -> None:
        """Every hit of a row: of each segment of its chain, newest first."""
        hits: list[Hit] = []
        with self.archive_read():
            filters = self.home.archive.search_filters(query)
            found = self.home.archive.session_hits(
                filters.text, list(segments or (session_id,)), prefix=True, role=filters.roles
            )
            hits = [list_hit(h) for h in found]
        self.post_message(SessionHitsLoaded(query, session_id, hits))

    @on(SessionHitsLoaded)
    def _session_hits_loaded(self, message: SessionHitsLoaded) -> None:
        self.query_one(SearchResults).set_session_hits(message.query, message.session_id, message.hits)

    @on(SearchResults.HitHighlighted)
    def _hit_highlighted(self, message: SearchResults.HitHighlighted) -> None:
        # Previews follow the reader's cursor in the list, not every refresh while typing; coming back to
        # the list keeps the place read in a transcript already showing that session.
        if message.arrived and message.hit.session_id == self.wanted_session:
            return
        if self.query_one(SearchResults).has_focus:
            self.load_transcript(message.hit.session_id, message.hit.message_id, archived=hit_share(message.hit))

    @on(SearchResults.HitChosen)
    def _hit_chosen(self, message: SearchResults.HitChosen) -> None:
        self.load_transcript(message.hit.session_id, message.hit.message_id, archived=hit_share(message.hit))
        self.transcript.focus()

    # -- transcript ----------------------------------------------------------------
    def load_transcript(self, session_id: str, select_id: int | None, archived: str | None = None) -> None:
        """Show a session (the newest request wins; older loads are dropped); ``archived`` as ``pick`` takes it."""
        self.pick(session_id, archived)
        self.transcript.elsewhere = False
        self._load_transcript(session_id, select_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="transcript")
    def _load_transcript(self, session_id: str, select_id: int | None) -> None:
        try:
            with self.home.archive.one_snapshot():  # (the session row and its messages agree)
                session = self.home.archive.get_session(session_id)
                if get_current_worker().is_cancelled:  # superseded already: skip reading the messages
                    return
                title = self._transcript_title(session_id, session)
                items = session_items(self.home, session_id, select_id) if session else []
                archived = bool(session and session.archived)
                share = self.home.archive.archived_share(session_id) if session else "none"  # (a's label)
        except WorkbenchError as exc:
            self.report(f"Session {session_id} cannot be read: {exc.in_app}", error=True)
            return
        except (sqlite3.Error, OSError) as exc:  # a damaged page (state.db damaged: the tree lists what it read)
            self.report(f"Session {session_id} cannot be read: {self.home.explain(exc)}", error=True)
            return
        self.post_result(
            TranscriptLoaded(
                session_id, title, items, select_id, gone=session is None, archived=archived, archived_share=share
            )
        )

    def _transcript_title(self, session_id: str, session) -> str:
        if session is None:
            return f"{session_id} (deleted)"
        return self.home.archive.heading(session) or session.id

    @on(TranscriptLoaded)
    def _transcript_loaded(self, message: TranscriptLoaded) -> None:
        if message.session_id != self.wanted_session:
            return
        transcript = self.transcript
        live = message.select_id is None and message.session_id == self.shown_session
        known = len(transcript.items)
        mark = "archived · " if message.archived else ""  # before the title, which a narrow border cuts
        transcript.border_title = Content(f"Transcript · {mark}{flat_line(message.title, 60)}")  # (renamed, say)
        self.shown_session = message.session_id
        self.picked_archived = message.archived_share
        self.refresh_bindings()  # (a, e, D and x act on it; a reads Archive or Unarchive, archived here or elsewhere)
        if live and message.items[:known] == transcript.items:
            for item in message.items[known:]:  # the session grew: append, so place, follow and unseen count hold
                transcript.append(item)
            return
        keep = message.select_id
        at_newest = transcript.follow and transcript.cursor == len(transcript.items) - 1
        if live and transcript.current and not at_newest:
            keep = transcript.current.id  # a live refresh keeps the reader's place (a jump's message too)
        empty = (
            "This session was deleted: state.db holds nothing of it any more."
            if message.gone
            else "This session has no messages."
        )
        transcript.set_items(message.items, placeholder=empty, select_id=keep)

    # -- jump from other screens ---------------------------------------------------
    @on(JumpToMessage)
    def _jump(self, message: JumpToMessage) -> None:
        message.stop()  # handled here; it must not bubble back to the app (which re-posts it)
        self.query_one("#sessions-search", Input).value = ""
        self.query_one(ContentSwitcher).current = "sessions-tree"
        self.load_transcript(message.session_id, message.message_id)
        self.load_lineage(message.session_id)
        self.transcript.focus()

    @work(thread=True, exit_on_error=False)
    def load_lineage(self, session_id: str, or_cursor: bool = False) -> None:
        archive = self.home.archive
        with self.archive_read(), archive.one_snapshot():
            path = archive.chain_path(session_id)[:-1]  # the chains above the session's own
            children = {ancestor: self._tree_nodes(archive.chain_children(ancestor)) for ancestor in path}
            self.post_message(LineageLoaded(session_id, path, children, or_cursor))

    @on(LineageLoaded)
    def _lineage_loaded(self, message: LineageLoaded) -> None:
        if message.or_cursor and message.session_id != self.wanted_session:
            return  # another session was picked meanwhile
        root = message.chain[0] if message.chain else message.session_id
        if self.tree.node_for(root) is None:
            if message.or_cursor:
                self._show_cursor_row()
            else:
                self._reveal = message  # retried when the first page of roots arrives
            return
        self._reveal = None
        for ancestor in message.chain:
            if not self.tree.is_loaded(ancestor):
                self.tree.set_children(ancestor, message.children[ancestor])
        self.wanted_session = message.session_id  # the reveal must not reload another transcript
        if not self.tree.reveal(message.session_id) and message.or_cursor:
            self._show_cursor_row()

    # -- live updates --------------------------------------------------------------
    def engine_event(self, event: Event) -> None:
        shown = self.shown_session if self.shown_session == self.wanted_session else None  # never over a newer pick
        if isinstance(event, SessionChanged) and event.session_id:
            self._changed.add(event.session_id)
            self._transcript_changed |= event.session_id == shown  # its title, say
            # a deleted session's other children are roots now, as are an archived one's branches
            self._roots_changed |= event.action in ("deleted", "archived", "unarchived")
        elif isinstance(event, SessionChanged):  # another process changed state.db: new roots on top, reread
            self._roots_changed = True
            self._transcript_changed = bool(shown)
        elif isinstance(event, (MessageStored, MemoryChanged, SkillChanged)) and shown and event.session_id == shown:
            self._transcript_changed = True
        elif not isinstance(event, MessageStored):
            return
        # new messages anywhere may match the search shown: its hits and counts are read again
        self._results_changed |= isinstance(event, (MessageStored, SessionChanged))
        self.request_reload()

    def reload(self) -> None:
        """Apply what the engine events since the last reload changed."""
        changed, self._changed = self._changed, set()
        for session_id in changed:
            self.refresh_session(session_id)
        if self._roots_changed:
            self._roots_changed = False
            self.refresh_roots(
                self.tree.root_segments, self.tree.loaded_ids, self.tree.last_root if self.tree.more_roots else None
            )
        shown = self.shown_session if self.shown_session == self.wanted_session else None
        if self._transcript_changed and shown:
            self.load_transcript(shown, None)
        self._transcript_changed = False
        self._search_again()

    def _search_again(self) -> None:
        """The query shown searched again when the archive changed under its results; while a search
        runs (it may have read the archive before the change), once it is done (``_search_done``)."""
        query = self.query_one("#sessions-search", Input).value.strip()
        if not self._results_changed or self._searching is not None:
            return
        self._results_changed = False
        if query and self.query_one(ContentSwitcher).current == "sessions-results":
            self._start_search(query, again=True)

    @work(thread=True, exclusive=True, exit_on_error=False, group="live-roots")
    def refresh_roots(
        self, listed: dict[str, tuple[str, ...]], loaded: list[str], down_to: tuple[float | None, str] | None
    ) -> None:
        """New roots on top; the roots another process deleted or archived go; and the children of each
        open row are read again (every child row is beneath one): those gone leave, those listed again come.

        The newest page of roots is read again whole; below it, down to the last root paged in
        (``down_to``, None: every root is listed), the roots the tree lacks (a branch whose parent was
        archived, say) and the rows whose stamp changed (``chain_stamps``: renamed, grown). All of it is
        read in one snapshot: an open row's children and its arrow agree when another process writes
        meanwhile."""
        archive = self.home.archive
        with self.archive_read(), archive.one_snapshot():
            gone = sorted(set(listed) - archive.listed_roots(list(listed)))
            if gone:
                self.post_result(SessionsGone(gone))
            for session_id in loaded:
                with contextlib.suppress(WorkbenchError):  # (gone meanwhile: SessionsGone takes its row)
                    self.post_result(ChildrenSynced(session_id, self._tree_nodes(archive.chain_children(session_id))))
            chains = archive.root_chains(limit=ROOTS_PAGE)
            if len(chains) == ROOTS_PAGE and len(listed) > ROOTS_PAGE:  # (older roots paged in)
                head = chains[-1].head
                beyond = archive.root_ids(after=(head.started_at, head.id), down_to=down_to)
                older = {sid: listed[sid] for sid in beyond if sid in listed}
                stamps = archive.chain_stamps(older)
                changed = [sid for sid, stamp in stamps.items() if self._stamps.get(sid, stamp) != stamp]
                self._stamps.update(stamps)  # (merged: a page loading meanwhile adds its own)
                for sid in beyond:
                    if sid not in listed or sid in changed:
                        with contextlib.suppress(WorkbenchError):  # (deleted meanwhile: the next refresh drops it)
                            chains.append(archive.chain_of(sid))
            for node in reversed(self._tree_nodes(chains)):
                self.post_result(SessionRefreshed(node, None))
            if down_to is not None and len(chains) < ROOTS_PAGE:  # every root fits the newest page now (a prune)
                self.post_result(RootsLoaded(down_to, [], more=False))  # so the "more" row goes

    @work(thread=True, exit_on_error=False, group="live")
    def refresh_session(self, session_id: str) -> None:
        archive = self.home.archive
        with self.archive_read(), archive.one_snapshot():
            try:
                chain = archive.chain_of(session_id)
            except WorkbenchError:  # deleted
                self.post_result(SessionsGone([session_id]))
                return
            # (the whole conversation: archiving flips its delegates and tool sessions too, each a search row)
            self.post_result(ArchiveFlags(archive.archive_flags(session_id)))
            root = bool(archive.listed_roots([chain.head.id]))  # (a branch of an archived conversation too)
            if not root and (chain.kind == "root" or not archive.shown([chain.head.id])):  # archived
                self.post_result(SessionsGone([chain.head.id]))
                return
            parent = None if root else chain.head.parent_session_id
            self.post_message(SessionRefreshed(self._tree_nodes([chain])[0], parent))

    @on(SessionsGone)
    def _sessions_gone(self, message: SessionsGone) -> None:
        for session_id in message.session_ids:
            self.tree.remove_session(session_id)
        self._count_roots()

    @on(ChildrenSynced)
    def _children_synced(self, message: ChildrenSynced) -> None:
        self.tree.sync_children(message.session_id, message.children)

    @on(ArchiveFlags)
    def _archive_flags(self, message: ArchiveFlags) -> None:
        self.query_one(SearchResults).set_archived(message.archived)

    @on(SessionRefreshed)
    def _session_refreshed(self, message: SessionRefreshed) -> None:
        cursor = self.tree.cursor_node
        was = cursor.data if cursor is not None and isinstance(cursor.data, SessionNode) else None
        self.tree.add_session(message.node, message.parent_id)
        self._count_roots()  # a new root on top, or a chain that took over another root's row
        grown = message.node.ids
        if (
            was is not None
            and self.transcript.follow
            and was.ids[-1] == self.wanted_session
            and was.ids[-1] in grown
            and grown[-1] != was.ids[-1]
        ):  # the conversation read at its end went on in a new segment (Hermes compressed it): follow it there
            self.tree.reveal(grown[-1])
            self.load_transcript(grown[-1], None)


def hit_share(hit: Hit) -> str | None:
    """What a search hit says of how much of its conversation is archived: a listed session's is not
    archived whole (a archives it); an archived one's may be archived whole or in part, where a does
    opposite things, so its transcript's read says (an archived hit read Unarchive, and a unarchived it,
    on a conversation Hermes had archived only in part, until the read turned a into Archive)."""
    return None if hit.archived else "none"


def list_hit(hit: SearchHit) -> Hit:
    """A result row from an archive hit: its matches become styled ranges (« » in the text stay text)."""
    return Hit(
        session_id=hit.session_id,
        root_id=hit.root_id,
        title=hit.title,
        message_id=hit.match_message_id,
        snippet=hit.excerpt,
        spans=hit.marks,
        role=hit.role,
        why=explain_plan(hit.plan),
        archived=hit.archived,
        partial=hit.partial,
        segments=hit.segments,
    )


def explain_plan(plan: str) -> str:
    """The archive's search plan in words: ``fts:ranked`` -> ``word index, best match``; the sources
    of an OR query read from several, ``bigram+like``, each named (``CJK bigram index + substring scan``)."""
    indexes, *orders = plan.split(":")
    sources = " + ".join(PLAN_INDEXES.get(index, index) for index in indexes.split("+"))
    return ", ".join(filter(None, (sources, *(PLAN_ORDERS.get(o, o) for o in orders))))


def session_items(home, session_id: str, around: int | None = None) -> list[TranscriptItem]:
    """A session's transcript rows with write markers (runs in a worker).

    A very long session shows its last ``TRANSCRIPT_LIMIT`` messages, or that many
    around ``around`` when jumping to an older message.
    """
    archive = home.archive
    count = archive.live_message_count(session_id)
    if count <= TRANSCRIPT_LIMIT:
        messages = archive.messages(session_id)
    elif around is not None:
        messages = archive.messages_around(around, TRANSCRIPT_LIMIT // 2)
    else:
        messages = archive.messages(session_id, offset=count - TRANSCRIPT_LIMIT)
    found = session_writes(home, session_id, messages)
    claims = set(unbacked_claims(messages))
    items = []
    for message in messages:
        writes = found.get(message.id, [])
        notes = [describe_write(w) for w in writes] + ([UNBACKED_NOTE] if message.id in claims else [])
        mark = "wrote" if any(not w.staged for w in writes) else "unbacked claim" if message.id in claims else "staged"
        items.append(transcript_item(message, notes, mark, [w.entry for w in writes if w.entry is not None]))
    return items


def describe_write(write: Write) -> str:
    """One line saying what a write changed, e.g. ``memory add (memory): User likes tea``."""
    return f"{write.summary}: {flat_line(write.text, 70)}"


def transcript_item(
    message, writes: Iterable[str] = (), mark: str = "wrote", entries: Iterable[tuple[str, str]] = ()
) -> TranscriptItem:
    """A transcript row from an archive message (multimodal content shown as its JSON)."""
    content = message.content
    if content is not None and not isinstance(content, str):
        content = json.dumps(content, ensure_ascii=False)
    return TranscriptItem(
        role=message.role,
        content=content or "",
        id=message.id,
        tool_name=message.tool_name,
        tool_calls=tuple(message.tool_calls or ()),
        timestamp=message.timestamp,
        writes=tuple(writes),
        mark=mark,
        entries=tuple(entries),
        note=stored_advice_note(content or "") if message.role == "tool" else "",
    )
