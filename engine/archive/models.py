"""The archive's value types: small frozen dataclasses whose ``to_dict`` is the CLI's JSON."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..textsafety import around, shown_spans
from ..values import iso_time, json_value, text_value

# Snippets mark the matched text with these two characters. They are plain text (not
# Textual/Rich markup), readable in JSON and terminals, and rare in real messages.
MARK_OPEN = "\u00ab"  # «
MARK_CLOSE = "\u00bb"  # »
Marks = tuple[tuple[int, int], ...]  # character ranges of the matches in an excerpt
_MARKED = re.compile(f"{MARK_OPEN}([^{MARK_OPEN}{MARK_CLOSE}]*){MARK_CLOSE}")


def _marked(text: str, marks: Marks) -> str:
    """``text`` with « » round each of its ``marks``."""
    parts, done = [], 0
    for start, end in marks:
        parts += [text[done:start], MARK_OPEN, text[start:end], MARK_CLOSE]
        done = end
    return "".join(parts) + text[done:]


def unmarked(snippet: str) -> str:
    """A snippet's text without the marks round its matches, for an answer that quotes it (a pair of
    « » the text holds itself goes too: in a snippet the two cannot be told apart)."""
    return _MARKED.sub(r"\1", snippet)


# Multimodal content is stored by Hermes as this prefix followed by JSON.
JSON_CONTENT_PREFIX = "\x00json:"

# A compression continuation's title: ``Deploy API #3`` (the lineage's base title and the number).
NUMBERED_TITLE = re.compile(r"^(.*?) #(\d+)$")


def chain_title(titles: list[str | None] | tuple[str | None, ...]) -> str | None:
    """A compression chain's title from its segments' titles, first to latest: the first titled
    segment's, without the ``#N`` Hermes numbers continuations with. One rule for the tree's row
    and a search hit in any segment of it."""
    for index, title in enumerate(titles):
        if title:
            numbered = NUMBERED_TITLE.match(title)
            return numbered.group(1) if numbered and index else title
    return None


def iso(ts: float | None) -> str | None:
    """Epoch seconds as an ISO-8601 UTC string (None stays None)."""
    return iso_time(ts)


def prompt_digest(text: str | None) -> str | None:
    """Short fingerprint of a system prompt for the journal (prompts are too big to copy into every row)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16] if text is not None else None


def decode_content(raw: Any) -> Any:
    """Hermes's stored content: text, or a list/dict behind the JSON sentinel."""
    raw = text_value(raw)
    if isinstance(raw, str) and raw.startswith(JSON_CONTENT_PREFIX):
        decoded = parse_json(raw[len(JSON_CONTENT_PREFIX) :], raw)
        return decoded if isinstance(decoded, (str, list, dict)) else raw
    return raw


def encode_content(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    return JSON_CONTENT_PREFIX + json.dumps(content, ensure_ascii=False)


def content_text(content: Any) -> str:
    """Plain text of any content (multimodal parts joined), for previews and snippets."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return " ".join(parts) if parts else "[multimodal content]"
    return json.dumps(content, ensure_ascii=False)


parse_json = json_value


@dataclass(frozen=True)
class Session:
    id: str
    source: str
    title: str | None = None
    model: str | None = None
    parent_session_id: str | None = None
    started_at: float | None = None
    ended_at: float | None = None
    end_reason: str | None = None
    message_count: int = 0
    tool_call_count: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    archived: bool = False
    model_config: dict | None = None
    system_prompt: str | None = field(default=None, repr=False)
    child_count: int | None = None  # filled by tree queries (root_sessions, children_of)
    kind: str | None = None  # relation to the parent: compression, branch, delegate or child

    @property
    def state(self) -> str:
        """How every list marks it: ``live`` while it has not ended (Hermes may still be writing to
        it, and may go on), ``ended`` once it has (``ended_at`` set, whatever the reason)."""
        return "live" if self.ended_at is None else "ended"

    @property
    def is_delegate(self) -> bool:
        return bool(self.model_config and self.model_config.get("_delegate_from")) or self.source == "subagent"

    def to_dict(self) -> dict[str, Any]:
        data = {
            "id": self.id,
            "title": self.title,
            "source": self.source,
            "model": self.model,
            "started_at": iso(self.started_at),
            "ended_at": iso(self.ended_at),
            "end_reason": self.end_reason,
            "message_count": self.message_count,
            "tool_call_count": self.tool_call_count,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "parent_session_id": self.parent_session_id,
            "archived": self.archived,
        }
        if self.child_count is not None:
            data["child_count"] = self.child_count
        if self.kind is not None:
            data["kind"] = self.kind
        return data


@dataclass(frozen=True)
class Message:
    id: int
    session_id: str
    role: str
    content: Any
    timestamp: float
    tool_calls: list | None = None
    tool_name: str | None = None
    tool_call_id: str | None = None
    token_count: int | None = None
    finish_reason: str | None = None
    active: bool = True
    compacted: bool = False

    @property
    def text(self) -> str:
        return content_text(self.content)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "session_id": self.session_id,
            "role": self.role,
            "content": self.content,
            "tool_name": self.tool_name,
            "tool_calls": self.tool_calls,
            "tool_call_id": self.tool_call_id,
            "timestamp": iso(self.timestamp),
            "token_count": self.token_count,
            "finish_reason": self.finish_reason,
            "active": self.active,
            "compacted": self.compacted,
        }


@dataclass(frozen=True)
class SearchHit:
    """The best match of one tree row (a compression chain) or lineage: ``excerpt`` with its matches at ``marks``
    (character ranges). ``snippet`` marks them with « » for the CLI and the tools; a screen
    styles ``marks`` instead, since stored text can hold « » of its own."""

    session_id: str
    root_id: str
    title: str | None
    source: str
    timestamp: float
    excerpt: str
    marks: Marks
    match_message_id: int
    role: str
    rank: float
    plan: str  # how the hits were found and ordered (see search.py)
    archived: bool = False  # the session is archived (hidden from lists, still searched)
    segments: tuple[str, ...] = ()  # the compression chain holding the session, first to latest: its tree row

    @property
    def when(self) -> str | None:
        return iso(self.timestamp)

    @property
    def partial(self) -> bool:
        """Found while typing from the commonest words the last one may become, not all of them:
        a match count of its plan is a lower bound."""
        return self.plan.endswith(":prefix-top")

    @property
    def snippet(self) -> str:
        return _marked(self.excerpt, self.marks)

    def snippet_in(self, room: int) -> str:
        """The snippet as shown, on one line in at most ``room`` cells around its first match, marked with « »
        (a listing's line: the Sessions screen cuts its excerpt so too, ``around``)."""
        text, marks = shown_spans(self.excerpt, self.marks)
        return _marked(*around(text, marks, max(room - 2 * len(marks), 4)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "root_id": self.root_id,
            "title": self.title,
            "source": self.source,
            "when": self.when,
            "snippet": self.snippet,
            "match_message_id": self.match_message_id,
            "role": self.role,
            "rank": self.rank,
            "plan": self.plan,
            "archived": self.archived,
            "segments": list(self.segments),
        }


@dataclass(frozen=True)
class Chain:
    """One conversation split by compressions: a session and its continuations, first segment to latest.

    A parent that ended with ``compression`` continues in one child (``Session.kind``
    ``compression``); the chain follows those links. Its other children (branches,
    delegates, a second continuation) are ``child_count`` and each heads a chain of its own.
    """

    segments: tuple[Session, ...]
    kind: str  # the first segment's relation to its parent: root, compression, branch, delegate or child
    child_count: int = 0  # children of any segment that are not the next segment

    @property
    def head(self) -> Session:
        return self.segments[0]

    @property
    def tip(self) -> Session:
        return self.segments[-1]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(s.id for s in self.segments)

    @property
    def title(self) -> str | None:
        """The lineage's title (``chain_title``)."""
        return chain_title([segment.title for segment in self.segments])

    @property
    def message_count(self) -> int:
        return sum(s.message_count for s in self.segments)

    @property
    def state(self) -> str:
        """The conversation's state: its latest segment's (``Session.state``), where it goes on."""
        return self.tip.state

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.head.id,
            "title": self.title,
            "kind": self.kind,
            "segments": list(self.ids),
            "child_count": self.child_count,
            "message_count": self.message_count,
            "started_at": iso(self.head.started_at),
        }


@dataclass(frozen=True)
class Lineage:
    root_id: str
    chain: list[str]  # root .. the asked session .. its compression tip
    children: dict[str, list[str]]
    loops_to: str | None = None  # the root's own parent, below it: parent ids edited into a loop

    def to_dict(self) -> dict[str, Any]:
        return {
            "root_id": self.root_id,
            "chain": list(self.chain),
            "children": {k: list(v) for k, v in self.children.items()},
            "loops_to": self.loops_to,
        }
