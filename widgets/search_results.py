"""Search hits grouped by session, the matched span highlighted, one "why" per hit.

An OptionList (virtualised, fast for hundreds of rows). Group headers are disabled
rows; each hit row shows the role, message id and snippet, with what matched shown
literally and styled (the snippet itself is never parsed as markup).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from engine.textsafety import visible

from .transcript import sanitize

MATCH_STYLE = "bold $text-warning underline"


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


def split_marked(snippet: str, start_mark: str, end_mark: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    """Strip plain-text match markers from a snippet, returning the text and the marked ranges."""
    text, spans, position = [], [], 0
    rest = snippet
    while True:
        start = rest.find(start_mark)
        end = rest.find(end_mark, start + len(start_mark)) if start >= 0 else -1
        if start < 0 or end < 0:
            text.append(rest)
            break
        text.append(rest[:start])
        position += start
        matched = rest[start + len(start_mark) : end]
        text.append(matched)
        spans.append((position, position + len(matched)))
        position += len(matched)
        rest = rest[end + len(end_mark) :]
    return "".join(text), tuple(spans)


def hit_prompt(hit: Hit) -> Content:
    """Two lines: ``role #id  via <why>``, then the snippet with the matched ranges styled (all literal)."""
    body = Content(sanitize(hit.snippet).replace("\n", " "))
    for start, end in hit.spans:
        body = body.stylize(MATCH_STYLE, start, end)
    head = Content.assemble(
        ("  ", ""),
        (hit.role or "message", "$text-secondary"),
        (f" #{hit.message_id}" if hit.message_id is not None else "", "$text-muted"),
        (f"  via {hit.why}" if hit.why else "", "$text-muted italic"),
    )
    return Content("\n").join([head, Content("  ") + body])


class SearchResults(OptionList):
    """Hits grouped under their session (lineage root first, in the archive's order)."""

    DEFAULT_CSS = """
    SearchResults { background: $surface; border: round $primary 40%; }
    SearchResults:focus { border: round $primary; }
    SearchResults.-stale { text-opacity: 60%; }
    """

    class HitHighlighted(Message):
        def __init__(self, hit: Hit) -> None:
            super().__init__()
            self.hit = hit

    class HitChosen(Message):
        def __init__(self, hit: Hit) -> None:
            super().__init__()
            self.hit = hit

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.hits: dict[str, Hit] = {}
        self.query = ""  # the query whose hits are shown

    def show(self, query: str, hits: list[Hit]) -> None:
        """Replace the list with the hits for ``query``."""
        groups: dict[str, list[Hit]] = {}
        for hit in hits:
            groups.setdefault(hit.session_id, []).append(hit)
        options: list[Option] = []
        self.hits = {}
        for session_id, group in groups.items():
            title = visible(" ".join((group[0].title or session_id).split()))
            header = Content.assemble(
                ("● ", "bold $text-primary"),
                (title, "bold"),
                (f"  {len(group)} hit{'s' * (len(group) != 1)}", "$text-muted"),
            )
            options.append(Option(header, id=f"s:{session_id}", disabled=True))
            for number, hit in enumerate(group):
                key = f"h:{session_id}:{hit.message_id}:{number}"
                self.hits[key] = hit
                options.append(Option(hit_prompt(hit), id=key))
        self.clear_options()
        self.add_options(options)
        self.query = query
        self.remove_class("-stale")
        count = len(self.hits)
        sessions = len(groups)
        plural = "s" * (count != 1), "s" * (sessions != 1)
        self.border_title = f"{count} hit{plural[0]} in {sessions} session{plural[1]}" if query else ""
        if not hits and query:
            self.add_option(Option(Content.styled(f"No messages match {query!r}.", "$text-muted"), disabled=True))
        if self.hits:
            self.highlighted = 1

    @property
    def current(self) -> Hit | None:
        option = self.highlighted_option
        return self.hits.get(option.id or "") if option is not None else None

    def mark_stale(self) -> None:
        """Dim the old results while a newer search runs."""
        self.add_class("-stale")

    def _on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        hit = self.hits.get(event.option_id or "")
        if hit is not None:
            self.post_message(self.HitHighlighted(hit))

    def _on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        hit = self.hits.get(event.option_id or "")
        if hit is not None:
            self.post_message(self.HitChosen(hit))
