"""Memory writes the session archive records: an agent's own ``memory`` tool calls.

A real Hermes agent writes MEMORY.md / USER.md itself and never touches our journal,
but it stores each assistant message with its tool calls, and each tool result, in
state.db. So an entry that a successful ``memory`` add or replace (alone or inside a
batch) produced was written by that assistant message: that is its provenance when the
journal has none. A successful remove is a write too (a transcript lists it), but it
leaves no entry, so only adds and replaces (``WRITING_ACTIONS``) give an origin.

Arguments are decoded as JSON, never matched as text: Hermes stores tool calls with
``json.dumps`` (non-ASCII as ``\\uXXXX``), and the arguments inside are a JSON string of
their own. A call counts only when its tool result says it succeeded and was applied
(not staged for approval, not refused).

``ArchiveWrites`` finds them through the archive's word index instead of reading
every message, and keeps what it found for as long as state.db is unchanged. It also
finds the removes that took an entry out, for that entry's history.
"""

from __future__ import annotations

import bisect
import contextlib
import logging
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ..db import busy_wait, database_stamp
from ..errors import WorkbenchError
from ..values import decoded_calls, json_object
from .format import TARGETS
from .ops import ALREADY_THERE

if TYPE_CHECKING:
    from ..archive.models import Message
    from ..home import Home

log = logging.getLogger(__name__)
Call = TypeVar("Call")

TOOL = "memory"
WORD_LOOKUPS = 64  # texts ``preload`` looks up one by one in the word index; past it, one read of all writes
WRITING_ACTIONS = ("add", "replace")  # the actions that leave an entry (its origin)
REMOVE = "remove"
TAKING_ACTIONS = (REMOVE, "replace")  # the actions that take out the entry holding their ``old_text``
LOOK_MESSAGES = 2_000  # the archive's newest messages a look at an outside edit reads Hermes's calls from
LOOK_CALLS = 200  # of those, the newest messages with memory calls it reads
STAMPED_BEFORE_S = 60.0  # how long before its tool ran Hermes may have stamped a call's message (then its tools run)
STAMPED_AFTER_S = 60.0  # how long after its tool ran Hermes may stamp the call's message (0.19.0 stores it then)
HERMES_SLACK_S = 600.0  # how long after a file change Hermes may still store the turn that made it


@dataclass(frozen=True)
class ArchiveWrite:
    """One entry text an agent's memory tool call wrote (or removed), and where."""

    target: str
    text: str  # for a remove, the entry it took out as far as known (else its ``old_text``)
    action: str  # "add", "replace" or "remove"
    session_id: str
    message_id: int  # the assistant message holding the call
    at: float
    old_text: str | None = None  # a replace's or remove's: Hermes takes out the one entry holding it
    index: int = 0  # its place among the memory changes its message stored (with the message: its key)
    stored: int = 0  # the id of its tool result, stored once the tool had run (0: not known)
    ran_by: float | None = None  # its tool result's time: the tool ran no later (Hermes stamps it after, or as stored)


def memory_calls(tool_calls: Any) -> list[tuple[int, str | None, dict]]:
    """(position, call id, decoded arguments) of each ``memory`` call in a message's tool calls."""
    return [
        (position, call_id, arguments)
        for position, call_id, name, arguments in decoded_calls(tool_calls)
        if name == TOOL and isinstance(arguments, dict)
    ]


def changes(arguments: dict) -> list[tuple[str, str, str, str | None]]:
    """(target, action, text, old_text) of each add, replace and remove of the call, in order.

    ``text`` is the entry an add or replace writes, or a remove's ``old_text`` (the only
    text a remove names). Both are stripped, as Hermes strips them.
    """
    target = arguments.get("target") or "memory"
    if target not in TARGETS:
        return []
    operations = arguments.get("operations")
    ops = operations if isinstance(operations, list) and operations else [arguments]
    out = []
    for op in ops:
        if not isinstance(op, dict):
            continue
        action, content, old = op.get("action"), op.get("content"), op.get("old_text")
        old_text = old.strip() if isinstance(old, str) and old.strip() else None
        if action in WRITING_ACTIONS and isinstance(content, str) and content.strip():
            out.append((target, action, content.strip(), old_text))
        elif action == REMOVE and old_text is not None:
            out.append((target, action, old_text, old_text))
    return out


def written_texts(arguments: dict) -> list[tuple[str, str, str]]:
    """(target, action, entry text) for each entry the call's arguments would write (adds and replaces)."""
    return [(target, action, text) for target, action, text, _ in changes(arguments) if action in WRITING_ACTIONS]


def applied(result: Any) -> bool:
    """Whether a memory tool result says the write landed (not refused, not only staged, not an add that
    found its entry there: of two sessions adding one fact, that call wrote nothing, whichever was said first)."""
    data = json_object(result)
    return (
        isinstance(data, dict)
        and data.get("success") is True
        and not data.get("staged")
        and data.get("message") != ALREADY_THERE
    )


class ToolResults:
    """Where each tool result of a run of messages is, so a call finds its own in log time:
    read for every assistant message of a long session, a scan of the rest each time was
    quadratic (6 s for ``sessions show`` of a 20,000-message session)."""

    def __init__(self, rows: list[Any]):
        self.rows = rows
        self.tools = [i for i, m in enumerate(rows) if m.role == "tool"]
        self.by_id: dict[Any, list[int]] = {}
        for i in self.tools:
            self.by_id.setdefault(rows[i].tool_call_id, []).append(i)

    def for_call(self, i: int, call_id: str | None, position: int, *, adjacent: bool = False) -> Any:
        """The result of message ``i``'s call: the first later tool message with its id, else (a call
        stored without one) the ``position``-th tool message after ``i`` (only those right after it
        when ``adjacent``)."""
        if call_id is not None:
            later = self.by_id.get(call_id, [])
            k = bisect.bisect_right(later, i)
            if k < len(later):
                return self.rows[later[k]]
            return None
        k = bisect.bisect_right(self.tools, i) + position
        if k >= len(self.tools) or (adjacent and self.tools[k] != i + 1 + position):
            return None
        return self.rows[self.tools[k]]


def writes_in(messages: Iterable[Any]) -> dict[int, list[ArchiveWrite]]:
    """The applied memory writes of a run of archive messages (one session's), removes included, by message id.

    For a transcript: each assistant message's calls matched with the tool results that
    follow it (by call id, or by position when the stored call has none). Hermes's result
    does not say which entry a remove took out, so it is the one entry that earlier writes
    of these messages left holding the call's ``old_text``, else the ``old_text`` itself.
    """
    rows = list(messages)
    results = ToolResults(rows)
    out: dict[int, list[ArchiveWrite]] = {}
    left: list[tuple[str, str]] = []  # (target, entry) the writes so far left, oldest first
    for i, message in enumerate(rows):
        if message.role != "assistant" or not message.tool_calls:
            continue
        ordinal = 0  # each change's place among all the message's memory changes, applied or not
        for position, call_id, arguments in memory_calls(message.tool_calls):
            result = results.for_call(i, call_id, position)
            made = changes(arguments)
            ordinal += len(made)
            if result is None or not applied(result.content):
                continue
            for index, (target, action, text, old_text) in enumerate(made, ordinal - len(made)):
                taken = {entry for t, entry in left if t == target and old_text is not None and old_text in entry}
                if len(taken) == 1:  # the entry a replace or remove took out
                    entry = taken.pop()
                    left.remove((target, entry))
                    text = entry if action == REMOVE else text
                if action in WRITING_ACTIONS:
                    left.append((target, text))
                out.setdefault(message.id, []).append(
                    ArchiveWrite(
                        target,
                        text,
                        action,
                        message.session_id,
                        message.id,
                        message.timestamp,
                        old_text,
                        index,
                        result.id,
                        result.timestamp,
                    )
                )
    return out


class ArchiveWrites:
    """Finds the archived memory writes of given entries in one home's state.db.

    Each entry is looked up once per version of the file (its size and mtime, and its
    WAL's): the word index narrows the search to messages holding ``memory`` and the
    entry's ASCII words (those survive Hermes's escaping unchanged), then their tool
    calls are decoded and checked. An entry with no such word (all CJK, say) is found in
    a map of every archived memory write, built once per version.
    """

    def __init__(self, home: Home):
        self.home = home
        self._lock = threading.Lock()
        self._version: tuple | None = None
        self._found: dict[tuple[str, str], list[ArchiveWrite]] = {}
        self._every: dict[tuple[str, str], list[ArchiveWrite]] | None = None
        self._takings: list[ArchiveWrite] | None = None
        self._calls: dict[int, Any] = {}
        self._named: dict[str, frozenset[str]] = {}
        self._read_since: tuple[tuple, float, list[Message]] | None = None  # ``since``'s read: stamp, bound, messages

    def newest(self, target: str, text: str, after: float | None = None) -> ArchiveWrite | None:
        """The newest applied write of exactly ``text`` to ``target``, later than ``after``.

        None as well when state.db is missing or unusable: provenance then falls back, it never fails.
        """
        return next((w for w in reversed(self._safe_writes(target, text)) if after is None or w.at > after), None)

    def preload(self, target: str, texts: Sequence[str]) -> None:
        """Ready the writes of many texts at once, for ``newest`` and ``between`` to answer from: past
        ``WORD_LOOKUPS`` texts, one read of every archived memory write instead of a word-index query
        per text (a file of 50,000 entries asked 50,000 of them)."""
        if len(texts) <= WORD_LOOKUPS:
            return

        def read() -> list[ArchiveWrite]:
            if self._fresh():
                every = self._every_write()
                for text in texts:
                    self._found.setdefault((target, text), every.get((target, text), []))
            return []

        self._safe(read)

    def between(self, target: str, text: str, after: float, until: float) -> list[ArchiveWrite]:
        """The applied writes of exactly ``text`` to ``target`` in ``(after, until]``, oldest first
        (none as well when state.db is unusable)."""
        return [w for w in self._safe_writes(target, text) if after < w.at <= until]

    def takings(self, target: str, after: float, until: float) -> list[ArchiveWrite]:
        """The applied removes and replaces from ``target`` in ``(after, until]``, oldest first: each
        took out the one entry holding its ``old_text`` (none when state.db is unusable)."""
        return [
            w
            for w in self._safe(self._all_takings)
            if w.target == target and w.old_text is not None and after < w.at <= until
        ]

    def in_sessions(self, low: str, high: str | None = None) -> list[ArchiveWrite]:
        """The applied writes and removes of the session ``low``, or of every session id in
        ``[low, high)``, oldest first (none when state.db is unusable)."""

        def read() -> list[ArchiveWrite]:
            conn = self.home.archive.conn()
            where = "session_id = ?" if high is None else "session_id >= ? AND session_id < ?"
            rows = conn.execute(
                f"SELECT id, session_id, tool_calls, timestamp FROM messages WHERE {where} AND role = 'assistant' "
                f"AND tool_calls IS NOT NULL AND instr(tool_calls, '{TOOL}') > 0 ORDER BY id",
                (low,) if high is None else (low, high),
            ).fetchall()
            return list(self._read(conn, rows, (*WRITING_ACTIONS, REMOVE)))

        return self._safe(read)

    def stamp(self) -> tuple:
        """state.db's ``database_stamp`` with this process's connection to it open: opening it makes its WAL,
        and a stamp taken before that said at the next look that state.db had changed since (a second read
        of Hermes's calls for nothing)."""
        if database_stamp(self.home.state_db_path)[0] is not None:  # (opening it would create it)
            with contextlib.suppress(WorkbenchError, sqlite3.Error):  # (``since`` says why it cannot read)
                self.home.archive.conn()
        return database_stamp(self.home.state_db_path)

    def newest_result(self) -> int | None:
        """The id of the newest memory tool result among state.db's newest ``LOOK_MESSAGES`` messages (0:
        none), without waiting on its lock; None when it cannot be read. A call is credited or replayed
        only with its result, so a look for a credit is due only once this changed."""
        if database_stamp(self.home.state_db_path)[0] is None:  # (opening it would create it)
            return None
        try:
            conn = self.home.archive.conn()
            with busy_wait(conn, 0):
                return self.home.archive.newest_result(TOOL, LOOK_MESSAGES)
        except (WorkbenchError, sqlite3.Error):
            return None

    def since(self, target: str, after: float, reach: float | None = None) -> tuple[list[ArchiveWrite], int | None]:
        """The applied memory calls on ``target`` made after ``after`` (their messages stamped at most
        ``STAMPED_BEFORE_S`` before it), in their stored order, and the newest message id read (None when
        none was): what a look at the file since the journal's row at ``after`` replays (``replay``). Read
        from the archive's newest ``LOOK_MESSAGES`` messages (their newest ``LOOK_CALLS`` memory calls),
        never waiting on state.db's lock: none when it is locked, missing or unusable, and the look
        journals the difference by its own rules. Read once per version of state.db, back to ``reach``
        too (the other file's ``after``): a look at both files after one change of state.db (the TUI's
        watcher) reads it once."""
        stamp = self.stamp()
        if stamp[0] is None:  # (opening it would create it)
            return [], None
        bound = after - STAMPED_BEFORE_S
        read = self._read_since
        if read is None or read[0] != stamp or read[1] > bound:
            lowest = bound if reach is None else min(after, reach) - STAMPED_BEFORE_S
            try:
                conn = self.home.archive.conn()
                with busy_wait(conn, 0):
                    read = (stamp, lowest, self.home.archive.recent_calls(TOOL, lowest, LOOK_MESSAGES, LOOK_CALLS))
            except (WorkbenchError, sqlite3.Error) as exc:
                log.info("an outside edit is journaled without Hermes's calls: %s: %s", self.home.state_db_path, exc)
                return [], None
            self._read_since = read
        messages = [m for m in read[2] if m.role != "assistant" or m.timestamp > bound]
        if not any(m.role == "assistant" for m in messages):
            return [], None
        sessions: dict[str, list[Message]] = {}
        for message in messages:
            sessions.setdefault(message.session_id, []).append(message)
        found = [w for run in sessions.values() for ws in writes_in(run).values() for w in ws if w.target == target]
        return sorted(found, key=lambda w: (w.message_id, w.index)), max(m.id for m in messages)

    def call_of(self, row_id: int, find: Callable[[], Call]) -> Call:
        """``find()``'s answer for journal row ``row_id``, kept while state.db is unchanged: the call
        behind a row (a memory write's, or a skill change's: ``skills.archive_calls``) depends only on the
        archive and the journal rows before it, which never change (a timeline page or session filter
        resolves the same rows again and again)."""
        return self.call_among(row_id, lambda: {row_id: find()})

    def call_among(self, row_id: int, find: Callable[[], dict[int, Call]]) -> Call:
        """``call_of`` where one search answers several rows (``find()``: each row's call, ``row_id``'s among
        them), every answer kept."""
        with self._lock:
            self._fresh()
            if row_id in self._calls:
                return self._calls[row_id]
            version = self._version
        found = find()
        with self._lock:
            if self._version == version:
                self._calls.update(found)
        return found[row_id]

    def named_by(self, tool: str) -> frozenset[str]:
        """The ``name`` every call of ``tool`` in state.db gives, read once a version: a row of a name no call
        gives has no call behind it, answered without the window's queries (an ``actor:agent`` page passes
        over many such rows, as ``history._ever_called`` does for memory). Empty when state.db cannot be read."""
        with self._lock:
            try:
                if not self._fresh():
                    return frozenset()
                if tool not in self._named:
                    rows = self.calls_of(self.home.archive.conn(), self.home.archive.caps.fts, tool, [])
                    self._named[tool] = frozenset(
                        arguments["name"]
                        for row in rows
                        for _, _, name, arguments in decoded_calls(row["tool_calls"])
                        if name == tool and isinstance(arguments, dict) and isinstance(arguments.get("name"), str)
                    )
                return self._named[tool]
            except (WorkbenchError, sqlite3.Error) as exc:
                self._unreadable(exc)
                return frozenset()

    def _safe_writes(self, target: str, text: str) -> list[ArchiveWrite]:
        return self._safe(lambda: self._writes(target, text))

    def _safe(self, read: Callable[[], list[ArchiveWrite]]) -> list[ArchiveWrite]:
        with self._lock:
            try:
                return read()
            except (WorkbenchError, sqlite3.Error) as exc:
                self._unreadable(exc)
                return []

    def _unreadable(self, exc: WorkbenchError | sqlite3.Error) -> None:
        """Say that provenance goes without Hermes's calls, in the archive's words for why: the file, and
        for damage the salvage advice (it said only "database disk image is malformed")."""
        log.warning("Provenance is shown without Hermes's tool calls. %s", self.home.archive_unreadable(exc))

    # -- reading the archive ----------------------------------------------------------
    def _fresh(self) -> bool:
        """Forget what was found in an older version of state.db; False when there is none (lock held)."""
        version = database_stamp(self.home.state_db_path)
        if version != self._version:
            self._version, self._found, self._every, self._takings, self._calls = version, {}, None, None, {}
            self._named = {}
        return version[0] is not None

    def _all_takings(self) -> list[ArchiveWrite]:
        """Every applied remove and replace in the archive, oldest first, read once per version (lock held)."""
        if not self._fresh():
            return []
        if self._takings is None:
            conn = self.home.archive.conn()
            rows = {row["id"]: row for action in TAKING_ACTIONS for row in self._rows(conn, [action])}
            self._takings = list(self._read(conn, [rows[i] for i in sorted(rows)], TAKING_ACTIONS))
        return self._takings

    def _writes(self, target: str, text: str) -> list[ArchiveWrite]:
        """Oldest first (lock held)."""
        if not self._fresh():
            return []
        key = (target, text)
        if key not in self._found:
            conn = self.home.archive.conn()
            terms = ascii_terms(text)
            if terms and self.home.archive.caps.fts:
                self._found[key] = [w for w in self._read(conn, self._rows(conn, terms)) if (w.target, w.text) == key]
            else:
                self._found[key] = self._every_write().get(key, [])
        return self._found[key]

    def _every_write(self) -> dict[tuple[str, str], list[ArchiveWrite]]:
        """Every applied write in the archive by (target, text), oldest first, read once per version (lock
        held, ``_fresh`` called)."""
        if self._every is None:
            self._every = {}
            conn = self.home.archive.conn()
            for write in self._read(conn, self._rows(conn, [])):
                self._every.setdefault((write.target, write.text), []).append(write)
        return self._every

    def _rows(self, conn: sqlite3.Connection, terms: list[str]) -> list[sqlite3.Row]:
        return self.calls_of(conn, self.home.archive.caps.fts, TOOL, terms)

    @staticmethod
    def calls_of(conn: sqlite3.Connection, fts: bool, tool: str, terms: list[str]) -> list[sqlite3.Row]:
        """Assistant rows with tool calls naming ``tool`` (and holding ``terms``), oldest first."""
        columns = "m.id, m.session_id, m.tool_calls, m.timestamp"
        where = "m.role = 'assistant' AND m.tool_calls IS NOT NULL"
        if fts:
            match = " AND ".join(f'"{term}"' for term in [tool, *terms])
            return conn.execute(
                f"SELECT {columns} FROM messages_fts f JOIN messages m ON m.id = f.rowid "
                f"WHERE messages_fts MATCH ? AND {where} ORDER BY m.id",
                (match,),
            ).fetchall()
        return conn.execute(
            f"SELECT {columns} FROM messages m WHERE {where} AND instr(m.tool_calls, ?) > 0 ORDER BY m.id", (tool,)
        ).fetchall()

    def _read(
        self, conn: sqlite3.Connection, rows: list[sqlite3.Row], actions: tuple[str, ...] = WRITING_ACTIONS
    ) -> Iterable[ArchiveWrite]:
        """The applied ``actions`` of these rows' memory calls (each checked against its stored tool result)."""
        for row in rows:
            for position, call_id, arguments in memory_calls(row["tool_calls"]):
                found = [change for change in changes(arguments) if change[1] in actions]
                if found and applied(self.result(conn, row["session_id"], row["id"], position, call_id)):
                    for target, action, text, old_text in found:
                        yield ArchiveWrite(
                            target, text, action, row["session_id"], row["id"], row["timestamp"] or 0.0, old_text
                        )

    @staticmethod
    def result(
        conn: sqlite3.Connection, session_id: str, message_id: int, position: int, call_id: str | None
    ) -> str | None:
        """A call's stored tool result: by call id, or by position among the results after its message."""
        if call_id is not None:
            row = conn.execute(
                "SELECT content FROM messages WHERE session_id = ? AND id > ? AND role = 'tool' "
                "AND tool_call_id = ? ORDER BY id LIMIT 1",
                (session_id, message_id, call_id),
            ).fetchone()
        else:
            row = conn.execute(
                "SELECT content FROM messages WHERE session_id = ? AND id > ? AND role = 'tool' "
                "ORDER BY id LIMIT 1 OFFSET ?",
                (session_id, message_id, position),
            ).fetchone()
        return None if row is None else row[0]


def ascii_terms(text: str, most: int = 6) -> list[str]:
    """The entry's words that appear unchanged in any JSON encoding of it, longest first.

    A run of ASCII letters and digits between ASCII spaces or punctuation is stored as
    is, whatever escaping (``\\u00e9``, ``\\n``) its neighbours get; a run touching a
    non-ASCII or control character may be glued to an escape, so it is left out.
    """
    found = []
    for match in _WORD.finditer(text):
        before = text[match.start() - 1] if match.start() else " "
        after = text[match.end()] if match.end() < len(text) else " "
        if _boundary(before) and _boundary(after):
            found.append(match.group().lower())
    return sorted(set(found), key=lambda w: (-len(w), w))[:most]


_WORD = re.compile(r"[A-Za-z0-9]+")


def _boundary(char: str) -> bool:
    return " " <= char <= "~" and not char.isalnum()
