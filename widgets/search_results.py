"""Search hits grouped by session: how many messages matched, archived marked, hits expandable.

An OptionList (virtualised). Each session is one row: a header line (title, how many
of its messages match, ``archived``) over its best hit. ``enter`` or ``right`` unfolds
it into every hit with its excerpt (``left`` or ``enter`` on the header folds it back;
a session with a single match opens on ``enter``), and ``enter`` on a hit opens that
message. What matched is shown literally and styled (a
snippet is never parsed as markup). How the query was answered is said once, in the
border title, since every hit of one search comes from the same plan.

Typing redraws this list on every keystroke, so it is kept cheap: one ``set_options``
per change inside one batched update, one option per folded session with excerpts cut
to the pane's width around the match (nothing to wrap), and old results dimmed only
when a search takes long enough for the reader to notice.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style as RichStyle
from textual.binding import Binding
from textual.cache import LRUCache
from textual.content import Content
from textual.message import Message
from textual.strip import Strip
from textual.style import Style
from textual.timer import Timer
from textual.visual import RenderOptions
from textual.widget import Widget
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from engine.textsafety import around, flat_line, quoted, shown_spans, start_in

from .cursor_in_view import CursorInView
from .literal import literal, wrap
from .transcript import sanitize

MATCH_STYLE = "bold $text-warning underline"
STALE_AFTER = 0.25  # seconds a search may run before the old results are dimmed
MIN_EXCERPT = 14  # cells a narrow list keeps for an excerpt (7 CJK characters) by shortening its head
ROLE_CELLS = 12  # a role longer than this (hostile data) is cut
MIN_TITLE = 8  # cells a session's title keeps in a header before its count loses the word "matches"
TITLE_MARGIN = 6  # cells of the top border a title leaves to the corners and the spaces around it


@dataclass(frozen=True)
class Hit:
    """One search hit as the list shows it (built by the screen from archive hits)."""

    session_id: str
    root_id: str
    title: str | None
    message_id: int | None
    snippet: str
    spans: tuple[tuple[int, int], ...] = ()  # matched character ranges within ``snippet``
    role: str = ""
    why: str = ""
    archived: bool = False  # the session is archived
    partial: bool = False  # found from the commonest completions only: its session's count is a lower bound
    segments: tuple[str, ...] = ()  # the compression chain the row stands for (its tree row): counted together


def _rows(content: Content, width: int) -> Content:
    """Content already cut to ``width`` needs no wrap pass to be measured (only once a width is known)."""
    return Rows(content.plain, list(content.spans)) if width else content


class Rows(Content):
    """Content cut to the list's width beforehand: its height is its line count, each line one strip.

    OptionList measures every option on every update by wrapping it, and draws it through
    Content's wrap, divide and align passes, then the visual's link and selection passes.
    These lines never wrap and hold no links, so the measure is a count of lines and
    ``SearchResults`` draws them with ``strips``: each line cut at its spans' edges into
    segments whose styles are combined once per set of spans. While typing a search, that
    drawing was about half of a keystroke's frame.
    """

    def get_height(self, rules, width: int) -> int:
        return self.plain.count("\n") + 1

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Strip]:
        return self.strips(width, style, options.get_style)[:height] if width else []

    def strips(
        self, width: int, style: Style, get_style: Callable[[str | Style], Style], meta: dict | None = None
    ) -> list[Strip]:
        """Each line as one strip of exactly ``width`` cells (padded in ``style``), ``meta`` on every segment."""
        spans = [(span.start, span.end, get_style(span.style)) for span in self.spans]
        over = RichStyle.from_meta(meta) if meta else None
        combined: dict[tuple[int, ...], RichStyle] = {}
        strips, start = [], 0
        for line in self.plain.split("\n"):
            end = start + len(line)
            cuts = sorted({start, end, *(edge for a, b, _ in spans for edge in (a, b) if start < edge < end)})
            segments = []
            for a, b in itertools.pairwise(cuts):
                covering = tuple(i for i, (low, high, _) in enumerate(spans) if low <= a and b <= high)
                rich = combined.get(covering)
                if rich is None:
                    piece = style
                    for i in covering:  # later spans are drawn over earlier ones
                        piece += spans[i][2]
                    rich = combined[covering] = piece.rich_style if over is None else over + piece.rich_style
                segments.append(Segment(self.plain[a:b], rich))
            strip = Strip(segments)
            if strip.cell_length > width:
                strip = strip.crop(0, width)
            if strip.cell_length < width:
                pad = style.rich_style if over is None else over + style.rich_style
                strip = Strip([*strip, Segment(" " * (width - strip.cell_length), pad)], width)
            strips.append(strip)
            start = end + 1
        return strips


def _literal(hit: Hit) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The snippet on one line, control characters shown as symbols, its spans moved to match."""
    return shown_spans(hit.snippet, hit.spans, sanitize)


def excerpt(
    hit: Hit, room: int, literal: tuple[str, tuple[tuple[int, int], ...]] | None = None
) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The snippet cut to ``room`` cells around its first match (spans moved to match), as ``sessions search``
    cuts it (``around``); ``literal``: ``_literal(hit)``, when the caller has it."""
    return around(*(literal or _literal(hit)), room)


def _head(hit: Hit, width: int, indent: str, literal: tuple[str, tuple[tuple[int, int], ...]]) -> str:
    """``role #id`` before a hit's excerpt; in a narrow list ``role``, then its initial, so
    that the excerpt keeps ``MIN_EXCERPT`` cells, or more for a long match (its cells and the
    two ``…``): a 7-digit id took most of an 80x24 row."""
    role = start_in(flat_line(hit.role or "message") or "?", ROLE_CELLS)
    number = f" #{hit.message_id}" if hit.message_id is not None else ""
    heads = (f"{indent}{role}{number}  ", f"{indent}{role}  ", f"{indent}{role[0]} ")
    text, matches = literal
    first, last = matches[0] if matches else (0, 0)
    need = max(MIN_EXCERPT, cell_len(text[first:last]) + 2)
    return next((head for head in heads if not width or width - cell_len(head) >= need), heads[-1])


@lru_cache(maxsize=1024)
def hit_prompt(hit: Hit, width: int = 0, indent: str = "  ") -> Content:
    """``role #id`` then the excerpt, its matched ranges styled (all literal). Kept for the
    redraws of one search (its counts arriving, a session unfolded), which show the same hits."""
    literal = _literal(hit)
    head = _head(hit, width, indent, literal)
    room = max(2, width - cell_len(head)) if width else 10**6  # one line: nothing to wrap
    text, spans = excerpt(hit, room, literal)
    body = Content(text)
    for start, end in spans:
        body = body.stylize(MATCH_STYLE, start, end)
    return Content.assemble((head, "$text-muted"), body)


@lru_cache(maxsize=1024)
def header_prompt(hit: Hit, count: int | None, cap: int, expanded: bool, width: int = 0) -> Content:
    """``▸ Title  12 matches · archived``: the count is ``…`` until it arrives, ``100+`` at the cap
    or when only some completions of the last word were counted."""
    title = flat_line(hit.title or hit.session_id)
    more = count is not None and (count >= cap or hit.partial)
    number = "…" if count is None else f"{count}{'+' * more}"
    matches = f"  {number} match{'es' * (count != 1 or more)}"
    archived = "  · archived" if hit.archived else ""
    room = width - 2 - len(matches) - len(archived) - 1  # the title gives way, never the count or the mark
    if width and room < MIN_TITLE:  # a narrow list: the count without its word, so the mark still shows whole
        matches = f"  {number}"
        room = width - 2 - len(matches) - len(archived) - 1
    if width and cell_len(title) > room:
        title = start_in(title, max(4, room - 1)) + "…"
    return Content.assemble(
        ("▾ " if expanded else "▸ ", "bold $text-primary"),
        (title, "bold"),
        (matches, "$text-muted"),
        (archived, "$text-warning"),
    )


def _wrapped(text: Content, width: int) -> Content:
    """A sentence in a list that never wraps, broken into lines of ``width`` (whole until a width is known)."""
    return Content("\n").join(wrap(text, width)) if width > 0 else text


def _nothing_matches(query: str, width: int) -> Content:
    """One line, the query cut with … to fit (a line that wrapped as it grew would lay the list out
    again on every key typed)."""
    said = literal(f"No messages match {quoted(query)}.", "$text-muted")
    return said.truncate(width, ellipsis=True) if width > 0 and said.cell_length > width else said


class SearchResults(CursorInView, OptionList):
    """Hits grouped under their session (the archive's order: best lineage first)."""

    DEFAULT_CSS = """
    SearchResults { background: $surface; border: round $primary 40%; text-wrap: nowrap; text-overflow: clip; }
    SearchResults:focus { border: round $primary; }
    SearchResults.-stale { text-opacity: 60%; }
    """
    BINDINGS = [
        Binding("right,l", "expand", "Expand hits", show=False),
        Binding("left,h", "collapse", "Fold hits", show=False),
    ]

    class HitHighlighted(Message):
        def __init__(self, hit: Hit, arrived: bool = False) -> None:
            super().__init__()
            self.hit = hit
            self.arrived = arrived  # the list was focused (its cursor did not move)

    class HitChosen(Message):
        def __init__(self, hit: Hit) -> None:
            super().__init__()
            self.hit = hit

    class HitsWanted(Message):
        """A session was expanded for the first time: load every hit of ``session_id`` for ``query``."""

        def __init__(self, query: str, session_id: str) -> None:
            super().__init__()
            self.query = query
            self.session_id = session_id

    def __init__(self, *, id: str | None = None, classes: str | None = None, cap: int = 100) -> None:
        super().__init__(id=id, classes=classes)
        self.hits: dict[str, Hit] = {}  # option id -> the hit it shows
        self.query = ""  # the query whose hits are shown
        self.why = ""
        self.note: str | None = None  # why part of the query was not searched (engine's words)
        self.error: str | None = None  # why the search shown failed (engine's words)
        self.unsearched: str | None = None  # why nothing was searched for the query shown (engine's words)
        self.cap = cap  # a count this high means "this many or more"
        self.best: dict[str, Hit] = {}  # session -> its best hit, in the archive's order
        self.counts: dict[str, int] = {}
        self.expanded: dict[str, list[Hit] | None] = {}  # session -> every hit (None: loading)
        self._stale_timer: Timer | None = None
        self._shown = 0  # results shown so far
        self._cut_width = 0  # the width the rows were last cut to
        self._count = ""  # the title's count of sessions (``1 session``, ``50+ sessions``)
        self._drawn: LRUCache[tuple, list[Strip]] = LRUCache(maxsize=1024)  # rows drawn lately, by what they show

    # -- data in -------------------------------------------------------------------
    def show(
        self,
        query: str,
        hits: list[Hit],
        note: str | None = None,
        *,
        more: bool = False,
        again: bool = False,
        error: str | None = None,
        unsearched: str | None = None,
    ) -> None:
        """Replace the list with the hits for ``query``, under ``note`` if the engine gave one;
        their counts follow (``set_counts``). ``more``: others matched beyond those listed (``50+``).
        ``again``: the same query searched again (the archive changed), so the cursor, the counts
        and the unfolded sessions' hits are kept until new ones come (their hits are asked for again).
        ``error``: the search failed (the engine's words), said in place of the hits: a list that says
        "no messages match" would claim a result the search never produced. ``unsearched``: why nothing
        was searched (punctuation alone, a NOT with nothing before it; the engine's words, as the CLI
        says them), said in place of the hits, likewise never "no messages match"."""
        again = again and query == self.query
        unfolded = {sid: hits for sid, hits in self.expanded.items() if again}
        self.note = note
        self.error = error
        self.unsearched = unsearched
        self.best = {}
        for hit in hits:
            self.best.setdefault(hit.session_id, hit)
        self.query = query
        self.why = hits[0].why if hits else ""
        self.counts = self.counts if again else {}
        self.expanded = {sid: hits for sid, hits in unfolded.items() if sid in self.best}
        for session_id in self.expanded:
            self.post_message(self.HitsWanted(query, session_id))
        self._shown += 1
        self._not_stale()
        self._render(highlight_first=not again)
        sessions = len(self.best)
        self._count = f"{sessions}{'+' * more} session{'s' * (sessions != 1 or more)}"
        self._fit_title()

    def _fit_title(self) -> None:
        """The title in the widest form its border shows whole (it cut ``best match`` to ``best m…``):
        how the hits were ordered gives way first, then the indexes read; the count of sessions stays."""
        if not self.query or self.error or self.unsearched:
            self.border_title = ("search failed" if self.error else "nothing searched") if self.query else ""
            return
        parts = self.why.split(", ") if self.why else []  # (the indexes, then the order: ``explain_plan``)
        forms = [f"{self._count} · via {', '.join(parts[:kept])}" for kept in range(len(parts), 0, -1)]
        room = self.size.width - TITLE_MARGIN
        self.border_title = next((form for form in forms if cell_len(form) <= room), self._count)

    def set_counts(self, query: str, counts: dict[str, int]) -> None:
        """How many messages of each listed session match (ignored when another query is shown)."""
        if query == self.query and not counts.items() <= self.counts.items():
            self.counts.update(counts)
            self._render()

    def set_titles(self, query: str, titles: dict[str, str]) -> None:
        """What untitled sessions show for a title (ignored when another query is shown)."""
        named = {sid: titles[sid] for sid, hit in self.best.items() if sid in titles and not hit.title}
        if query == self.query and named:
            self.best = {sid: replace(hit, title=named[sid]) if sid in named else hit for sid, hit in self.best.items()}
            self._render()

    def set_archived(self, flags: dict[str, bool]) -> None:
        """Sessions archived or listed again since the search ran: their ``· archived`` mark follows."""
        changed = {sid: flag for sid, flag in flags.items() if sid in self.best and self.best[sid].archived != flag}
        if changed:
            self.best = {sid: replace(hit, archived=changed.get(sid, hit.archived)) for sid, hit in self.best.items()}
            for sid in changed.keys() & self.expanded.keys():
                hits = self.expanded[sid]
                self.expanded[sid] = None if hits is None else [replace(h, archived=changed[sid]) for h in hits]
            self._render()

    def set_session_hits(self, query: str, session_id: str, hits: list[Hit]) -> None:
        """Every hit of an expanded session (ignored when the query changed or it was folded meanwhile)."""
        if query == self.query and session_id in self.expanded:
            self.expanded[session_id] = hits
            self._render()

    @property
    def current(self) -> Hit | None:
        """The highlighted hit (on a session's header: its best hit)."""
        option = self.highlighted_option
        if option is None or option.id is None:
            return None
        return self.hits.get(option.id) or self.best.get(option.id.removeprefix("s:"))

    def mark_stale(self) -> None:
        """A newer search runs: dim the old results if it takes long enough to notice."""
        if self._stale_timer is None:
            shown = self._shown
            # a timer that fires as the results arrive must not dim them: it checks nothing was shown since
            self._stale_timer = self.set_timer(STALE_AFTER, lambda: self._shown == shown and self.add_class("-stale"))

    # -- keys ----------------------------------------------------------------------
    def action_expand(self) -> None:
        session_id = self._session_at_cursor()
        if session_id is not None and session_id not in self.expanded:
            self.expanded[session_id] = None
            self._render(highlight=self._first_row(session_id))
            self.post_message(self.HitsWanted(self.query, session_id))

    def action_collapse(self) -> None:
        session_id = self._session_at_cursor()
        if session_id is not None and session_id in self.expanded:
            del self.expanded[session_id]
            self._render(highlight=self._first_row(session_id))

    def _first_row(self, session_id: str) -> str:
        """The id of a session's first row, which folding or unfolding it keeps the cursor on."""
        if session_id in self.expanded:
            return f"s:{session_id}"
        return f"h:{session_id}:{self.best[session_id].message_id}:best"

    # -- internals -----------------------------------------------------------------
    def _session_at_cursor(self) -> str | None:
        option = self.highlighted_option
        if option is None or option.id is None:
            return None
        hit = self.hits.get(option.id)
        return hit.session_id if hit else option.id.removeprefix("s:")

    def _not_stale(self) -> None:
        if self._stale_timer is not None:
            self._stale_timer.stop()
            self._stale_timer = None
        self.remove_class("-stale")

    def _render(self, *, highlight_first: bool = False, highlight: str | None = None) -> None:
        """Rebuild the options in one ``set_options``, keeping the highlighted row where it still exists."""
        previous = self.highlighted_option.id if self.highlighted_option is not None else None
        width = self._cut_width = self._row_width()
        options: list[Option] = []
        self.hits = {}
        if self.note and self.query:
            options.append(Option(_wrapped(literal(self.note, "$warning"), width), disabled=True))
        for session_id, best in self.best.items():
            expanded = session_id in self.expanded
            header = header_prompt(best, self.counts.get(session_id), self.cap, expanded, width)
            if not expanded:  # header and best hit in one option: half the rows to measure and draw
                key = f"h:{session_id}:{best.message_id}:best"
                self.hits[key] = best
                options.append(Option(_rows(Content("\n").join([header, hit_prompt(best, width)]), width), key))
                continue
            options.append(Option(_rows(header, width), f"s:{session_id}"))
            rows = self.expanded[session_id]
            if rows is None:
                options.append(Option(Content.styled("    loading…", "$text-muted italic"), disabled=True))
                continue
            for hit in rows:
                key = f"h:{session_id}:{hit.message_id}:hit"  # (by message: a new hit above moves no key)
                self.hits[key] = hit
                options.append(Option(_rows(hit_prompt(hit, width, "    "), width), key))
        if self.error and self.query:
            options.append(Option(_wrapped(literal(f"Search failed: {self.error}", "$error"), width), disabled=True))
        elif self.unsearched and self.query:
            options.append(Option(_wrapped(literal(self.unsearched, "$warning"), width), disabled=True))
        elif not self.best and self.query:
            options.append(Option(_nothing_matches(self.query, width), disabled=True))
        wanted = highlight or (None if highlight_first else previous)
        index = next((i for i, o in enumerate(options) if wanted and o.id == wanted), None)
        if index is None:
            index = next((i for i, o in enumerate(options) if not o.disabled), None)
        with self.app.batch_update():
            self.set_options(options)
            if index is not None:
                self.highlighted = index

    def _row_width(self) -> int:
        """The width rows are cut to. Hidden behind the tree until results arrive, the list has no
        width yet; it takes the one it is about to get (its container's, less its border and, when
        the rows overflow, its scrollbar), so the first results are built once instead of being
        measured by wrapping and rebuilt when the list is shown."""
        width = self.scrollable_content_region.width
        container = self.parent.content_region if isinstance(self.parent, Widget) else None
        if width or not container:
            return width
        gutter = self.styles.gutter
        lines = sum(self._lines_of(session_id) for session_id in self.best)
        scrollbar = self.styles.scrollbar_size_vertical if lines > container.height - gutter.height else 0
        return max(0, container.width - gutter.width - scrollbar)

    def _lines_of(self, session_id: str) -> int:
        """Rows a session takes: header and best hit, or header and its hits (one "loading…" row while they load)."""
        if session_id not in self.expanded:
            return 2
        rows = self.expanded[session_id]
        return 1 + (1 if rows is None else len(rows))

    def _on_resize(self) -> None:
        """Also sent when the list is shown, so a width forecast while hidden is checked here."""
        super()._on_resize()
        self._fit_title()
        if (self.best or self.note or self.query) and self.scrollable_content_region.width != self._cut_width:
            self._render()  # excerpts are cut to the width, a note wrapped to it, "no messages match" cut

    def watch_show_vertical_scrollbar(self) -> None:
        """Hits unfolded past the list's height bring a scrollbar, which narrows the rows without a
        resize: they are cut again, or the strips would crop their ends (and a match there)."""
        if self.best and self.scrollable_content_region.width not in (0, self._cut_width):
            self._render()

    def _get_option_render(self, option: Option, style: Style) -> list[Strip]:
        """A row's strips straight from ``Rows.strips``, kept by what the row shows: a search that
        lists the same rows again (its counts arriving, a longer prefix) draws none of them twice."""
        prompt = option.prompt
        if not isinstance(prompt, Rows) or self.text_selection is not None:  # a selection is drawn by Textual
            return super()._get_option_render(option, style)
        width = self.scrollable_content_region.width - self._get_left_gutter_width()
        index = self._option_to_index[option]
        key = (prompt.plain, tuple(prompt.spans), style, width, index)
        strips = self._drawn.get(key)
        if strips is None:
            strips = self._drawn[key] = prompt.strips(width, style, self._get_style, {"option": index})
        return strips

    def on_focus(self) -> None:
        """Arriving in the list previews its highlighted hit: with one hit, no key moves the cursor."""
        if self.current is not None:
            self.post_message(self.HitHighlighted(self.current, arrived=True))

    def _on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        hit = self.hits.get(event.option_id or "") or self.best.get((event.option_id or "").removeprefix("s:"))
        if hit is not None:
            self.post_message(self.HitHighlighted(hit))

    def _on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """``enter``: a folded session with more than one match unfolds, a header folds, a hit opens."""
        option_id = event.option_id or ""
        hit = self.hits.get(option_id)
        if option_id.startswith("s:"):
            self.action_collapse()
        elif hit is not None and option_id.endswith(":best") and self.counts.get(hit.session_id) != 1:
            self.action_expand()
        elif hit is not None:
            self.post_message(self.HitChosen(hit))
