"""Session rows: create (upsert), end, titles, counters, archive flag, prune and delete."""

from __future__ import annotations

import json
import re
import secrets
import sqlite3
import time
from collections.abc import Iterable
from typing import Any, NamedTuple

from ..db import is_corrupt
from ..errors import SessionGrew, SessionLive, TitleChanged, UnusableTitle, WorkbenchError
from ..events import SessionChanged
from ..textsafety import flat_line, quoted, whole, without_escape_sequences
from ..values import number_in
from . import outside
from .core import changes_archive, in_chunks
from .filters import named_words
from .lineage import LineageMixin
from .models import NUMBERED_TITLE, Chain, Session, content_text, decode_content, prompt_digest
from .query import like_escape

PREVIEW_CHARS = 60  # of an untitled session's first user message, in lists
PRUNE_NAMED = 10  # sessions a prune's question names before "and N more"
PRUNE_DAYS = (0, 36_500)  # what a prune's "older than N days" may be: none to a hundred years


def prune_terms(text: str) -> tuple[float, str | None]:
    """A prune asked for in one line, ``90`` or ``90 source:cli`` (the CLI's ``--days`` and ``--source``):
    the days and the source, else ValueError in words saying what the line takes."""
    rest, named = named_words(text.strip(), ("source",))
    sources = list(dict.fromkeys(value for _, value in named))
    if len(sources) > 1 or "" in sources:
        raise ValueError("give one source after source: (90 source:cli), or none for every source")
    return number_in(rest, *PRUNE_DAYS, "a number of days"), (sources[0] if sources else None)


def from_source(source: str | None) -> str:
    """`` from cli`` for a prune kept to a source, as its words say it, else nothing."""
    return f" from {source}" if source else ""


def titled(title: str | None, preview: str | None) -> str | None:
    """A session's title, else the start of its first user message in quotes (``previews``): what a
    list shows where the title goes, since Hermes titles few of its sessions."""
    return title or (f"“{preview}”" if preview else None)


MAX_TITLE_LENGTH = 100
_LAID_OUT = re.compile(r"[\s⏎⇥]+")  # what a preview shows of a message's layout, or a person typed for it


def _spaced(text: str) -> str:
    """``text`` with each run of spaces, line breaks and their symbols read as one space."""
    return _LAID_OUT.sub(" ", text).strip()


# What lists of sessions (``sessions list``, the Sessions tree) are ordered by, newest first, and the time
# they show: when a session started (Hermes's own `sessions list` orders by it too), not when it was
# last active, so a session started early that is still being written to is listed by its start.
LISTED_BY = "start"


class _FlippedMeanwhile(Exception):
    """``set_archived`` found every session already flipped when it came to write: its row is abandoned."""


UNCHECKED = object()  # ``set_title(was=...)`` not given: rename whatever the title is now
_INVISIBLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffc]")
# Columns an upsert fills only while they are still empty (the first writer wins).
_FILL_ONLY = (
    "model",
    "model_config",
    "system_prompt",
    "parent_session_id",
    "session_key",
    "chat_id",
    "chat_type",
    "thread_id",
    "cwd",
    "profile_name",
    "user_id",
    "display_name",
    "git_branch",
    "git_repo_root",
)
_TOKEN_COLUMNS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "api_call_count",
)


def sanitize_title(title: str | None) -> str | None:
    """Drop terminal escape sequences whole (a title pasted in colour keeps its words, not ``[34m``),
    then control, zero-width and bidi characters; collapse whitespace; None when empty."""
    if title is None:
        return None
    cleaned = " ".join(_INVISIBLE.sub("", without_escape_sequences(str(title))).split())
    if not cleaned:
        return None
    if len(cleaned) > MAX_TITLE_LENGTH:
        raise UnusableTitle(f"Title too long ({len(cleaned)} chars, max {MAX_TITLE_LENGTH}). Shorten it.")
    return cleaned


class DeleteMark(NamedTuple):
    """What a delete takes, as its question showed it (``SessionsMixin.delete_mark``)."""

    messages: int  # the session's message count, which the question says
    sessions: tuple[str, ...]  # it and the delegate sessions it started, sorted
    rows: int  # the messages they hold
    newest: int  # their newest message row


def shown_previews(texts: dict[str, str], width: int = PREVIEW_CHARS) -> dict[str, str]:
    """``SessionsMixin.first_messages`` as a list shows them: their start on one line (``flat_line``)."""
    return {sid: shown for sid, text in texts.items() if (shown := flat_line(text, width))}


def stored_previews(texts: dict[str, str], width: int = PREVIEW_CHARS) -> dict[str, str]:
    """``SessionsMixin.first_messages``' first ``width`` characters as stored, never part of a grapheme
    (``whole``), line breaks and control characters as they are: what ``--json`` gives a program, which
    makes them safe itself."""
    return {sid: start for sid, text in texts.items() if (start := whole(text[:width], text[width:])[0])}


class SessionsMixin(LineageMixin):
    def new_session_id(self) -> str:
        """``YYYYMMDD_HHMMSS_<6 hex>`` in local time, as Hermes spells its ids."""
        return time.strftime("%Y%m%d_%H%M%S", time.localtime(self.clock.now())) + "_" + secrets.token_hex(3)

    def create_session(
        self,
        session_id: str | None = None,
        *,
        source: str = "workbench",
        model: str | None = None,
        title: str | None = None,
        parent_session_id: str | None = None,
        system_prompt: str | None = None,
        actor: str = "agent",
        started_at: float | None = None,
        **extra: Any,
    ) -> Session:
        """Create a session, or fill the still-empty fields of an existing one (never overwrites).
        ``started_at``: when it began, if before now (its first message, stored late)."""
        session_id = session_id or self.new_session_id()
        values: dict[str, Any] = {
            "model": model,
            "system_prompt": system_prompt,
            "parent_session_id": parent_session_id,
        }
        for key, value in extra.items():
            if key in ("id", "source", "started_at", "title") or not self.caps.has("sessions", key):
                raise WorkbenchError(f"Unknown session field {key!r}; it is not a column of this state.db.")
            values[key] = json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else value
        # an older Hermes schema may lack a column (system_prompt before v5...): what it has no place for is not stored
        values = {k: v for k, v in values.items() if v is not None and self.caps.has("sessions", k)}
        conn = self.conn()
        with self._write():
            if (
                parent_session_id
                and parent_session_id != session_id
                and not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (parent_session_id,)).fetchone()
            ):
                raise WorkbenchError(f"Parent session {quoted(parent_session_id)} does not exist; create it first.")
            created = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None
            columns = ["id", "source", "started_at", *values]
            updates = [f"{c} = COALESCE(sessions.{c}, excluded.{c})" for c in values if c in _FILL_ONLY] or ["id = id"]
            conn.execute(
                f"INSERT INTO sessions ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) "
                f"ON CONFLICT(id) DO UPDATE SET {', '.join(updates)}",
                (session_id, source, self.clock.now() if started_at is None else started_at, *values.values()),
            )
        if created:
            self._publish(
                SessionChanged(
                    action="created", session_id=session_id, actor=actor, parent_session_id=parent_session_id
                )
            )
        session = self._session_or_fail(session_id)
        if title and session.title is None:
            self.set_title(session_id, title, actor=actor)
            session = self._session_or_fail(session_id)
        return session

    def get_session(self, session_id: str) -> Session | None:
        row = self.conn().execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return self._session(row) if row else None

    def resolve_session(self, text: str, *, exact: bool = False) -> Session | None:
        """A session by exact id, else a unique id prefix, else its title (its newest ``title #N``
        continuation first, as Hermes resumes by title); ``exact``: by whole id or exact title only."""
        text = (text or "").strip()
        if not text:
            return None
        found = self.get_session(text)
        if found is not None or exact:
            return found or self._titled(text, unique=exact)
        rows = (
            self.conn()
            .execute("SELECT * FROM sessions WHERE id LIKE ? ESCAPE '\\' LIMIT 2", (like_escape(text) + "%",))
            .fetchall()
        )
        if len(rows) == 1:
            return self._session(rows[0])
        return self.resolve_title(text) if not rows else None

    def find_session(self, text: str, *, exact: bool = False) -> Session:
        """``resolve_session``, or a WorkbenchError that says why nothing matched (the CLI and the
        TUI's resume picker both answer with it). ``exact`` for a delete, which cannot be undone: the
        prefix of a session just deleted is the start of another's id, and a title the start of its
        continuations' (``title #2``); such a prefix is refused naming the ids it starts."""
        session = self.resolve_session(text, exact=exact)
        started = self.ids_with_prefix(text, limit=5) if session is None and exact else []
        if started:
            raise WorkbenchError(
                f"No session has the id {quoted(text)}; it is the start of {', '.join(started)}"
                f"{', ...' if len(started) == 5 else ''}. Give the whole id: a delete cannot be undone.",
                candidates=started,
            )
        if session is None:
            candidates = self.ids_with_prefix(text, limit=5)
            if len(candidates) > 1:
                raise WorkbenchError(
                    f"{quoted(text)} is the start of several session ids ({', '.join(candidates)}"
                    f"{', ...' if len(candidates) == 5 else ''}); give more of the id.",
                    candidates=candidates,
                )
            from .. import kept  # (a session whose only messages wait in workbench.db is not here yet)

            waiting = kept.of_session(self.home, text.strip())
            if waiting is not None:
                raise WorkbenchError(
                    f"Session {waiting.session_id} is not in state.db yet: its {waiting.count} are kept in "
                    f"workbench.db ({kept.cause(waiting.why)}). {kept.when_stored(self.home)}"
                )
            close = self.titles_containing(text)
            named = ", ".join(f"{quoted(title)} ({sid})" for sid, title in close)
            hint = f" Titles holding it: {named}; give the id or the whole title." if close else ""
            by = "by whole id or exact title" if exact else "by id, unique id prefix or title"
            shown = self.previewed_as(text) if not close else []
            if len(shown) == 1:  # copied from a list's title column, where an untitled session shows its start
                raise WorkbenchError(
                    f"No session matches {quoted(text)} ({by}): that is how lists show untitled session {shown[0]} "
                    f"(the start of its first message, not a title). Give its id, {shown[0]}, or name it "
                    f"with `workbench sessions rename {shown[0]} TITLE`.",
                    close_matches=shown,
                )
            raise WorkbenchError(
                f"No session matches {quoted(text)} ({by}).{hint} Sessions are named by id, or by a title set "
                "with `workbench sessions rename`: `workbench sessions search TEXT` finds one by its words, "
                "`workbench sessions list` shows the ids.",
                close_matches=[sid for sid, _ in close],
            )
        return session

    def titles_containing(self, text: str, limit: int = 5) -> list[tuple[str, str]]:
        """(id, title) of the newest sessions whose title holds ``text`` (any case): what a person who
        typed part of a title meant, offered when nothing matched exactly."""
        text = (text or "").strip()
        if not text:
            return []
        rows = self.conn().execute(
            "SELECT id, title FROM sessions WHERE title LIKE ? ESCAPE '\\' ORDER BY started_at DESC LIMIT ?",
            (f"%{like_escape(text)}%", limit),
        )
        return [(str(sid), str(title)) for sid, title in rows]

    def previewed_as(self, text: str, limit: int = 20) -> list[str]:
        """The untitled sessions a list shows as ``text`` (``previews``; its quotes optional): what a
        person who copied a list's title column meant. Cheap: one index look-up per untitled session
        for its first user message, and only the few that start so are read whole."""
        shown = _spaced(text or "").removeprefix("“").removesuffix("”").strip()
        words = shown.removesuffix("…").split()
        if not words:
            return []
        # A list shows the message's line breaks and tabs as ⏎ and ⇥ and a run of spaces as one (a person may
        # type spaces for them), so the words are looked for with anything between them, then each preview is
        # compared whole, all of them read as one space.
        rows = self.conn().execute(
            "SELECT id FROM sessions s WHERE coalesce(s.title, '') = '' AND ltrim((SELECT content FROM messages m "
            "WHERE m.session_id = s.id AND m.role = 'user' ORDER BY m.timestamp, m.id LIMIT 1), ' ' || char(9, 10)) "
            "LIKE ? ESCAPE '\\' ORDER BY started_at DESC LIMIT ?",
            ("%".join(like_escape(word) for word in words) + "%", limit),
        )
        ids = [str(r[0]) for r in rows]
        previews = self.previews(ids)
        return [sid for sid in ids if _spaced(previews.get(sid, "")) == shown]

    def ids_with_prefix(self, prefix: str, limit: int = 5) -> list[str]:
        """Session ids starting with ``prefix`` (to explain an ambiguous short id)."""
        prefix = (prefix or "").strip()
        if not prefix:
            return []
        rows = self.conn().execute(
            "SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' ORDER BY id LIMIT ?",
            (like_escape(prefix) + "%", max(0, limit)),
        )
        return [r["id"] for r in rows]

    def roots_read(self, limit: int = 50) -> tuple[list[Chain], str | None]:
        """The first page of ``root_chains``, and None; or, when state.db is damaged where the lineage is
        read, the sessions ``list_sessions`` (what ``workbench sessions list`` prints) can still read, each
        a chain of its own, and what ``damaged_listing`` says of them: the Sessions screen shows what the
        CLI shows, not only that the archive cannot be read. Damage there too raises, as ever."""
        try:
            return self.root_chains(limit=limit), None
        except sqlite3.DatabaseError as exc:
            if not is_corrupt(exc):
                raise
            self.noticed(exc)
            sessions = self.list_sessions(limit=limit)
            note = self.damaged_listing(len(sessions))
            if note is None:  # (not state.db's damage: workbench.db's, say) as it was
                raise
            return [Chain((session,), "root") for session in sessions], note

    def listing_damage(self, listed: int, limit: int) -> str | None:
        """What ``damaged_listing`` says of a listing of ``listed`` sessions, when the lineage the Sessions
        screen reads its roots by (``root_sessions``, the first ``limit``) meets damage; else None. The two
        skins agree on what they read, and a listing pays one indexed read for it, not the whole-file check
        of a state.db that may hold gigabytes (``workbench doctor`` makes that)."""
        try:
            self.root_sessions(
                limit
            )  # (the tree's read of its roots; not their chains, which it reads as it shows them)
        except sqlite3.DatabaseError as exc:
            if not is_corrupt(exc):
                raise
            self.vet(again=True, quiet=True)  # (said once, by the listing's warning)
            return self.damaged_listing(listed)
        return None

    def damaged_listing(self, listed: int) -> str | None:
        """When state.db is damaged (SQLite's ``quick_check``, once per process: ``vet``), what a listing of
        ``listed`` sessions read from it is, in words both skins say beside it; else None."""
        damage = self.vet(quiet=True)
        if damage is None:
            return None
        count = f"{listed} session{'s' * (listed != 1)}"
        return (
            f"state.db is damaged: the {count} listed are what SQLite could still read (others may be missing "
            f"or incomplete, and none can be changed). {damage}"
        )

    def list_sessions(
        self, limit: int = 50, offset: int = 0, source: str | None = None, include_archived: bool = False
    ) -> list[Session]:
        """Newest first by start time (``LISTED_BY``), as the Sessions tree lists its roots."""
        where, args = [], []
        if source is not None:
            where.append("source = ?")
            args.append(source)
        if not include_archived and self.caps.has("sessions", "archived"):
            where.append("archived = 0")
        sql = "SELECT * FROM sessions" + (f" WHERE {' AND '.join(where)}" if where else "")
        sql += " ORDER BY started_at DESC, rowid DESC LIMIT ? OFFSET ?"
        return [self._session(r) for r in self.conn().execute(sql, (*args, max(0, limit), max(0, offset)))]

    def heading(self, session: Session) -> str | None:
        """What a session shown on its own is called (a transcript, ``sessions show``): its own title
        (Hermes numbers a chain's continuations ``X #2``); an untitled segment of a titled compression
        chain by the chain's title, as the tree and a search hit name it, with its place
        (``X · segment 1 of 2``); else the start of its first user message in quotes (None: nothing)."""
        if session.title:
            return session.title
        try:
            chain = self.chain_of(session.id)
        except WorkbenchError:  # deleted meanwhile: named as a session of its own
            chain = None
        if chain is not None and len(chain.segments) > 1 and chain.title and session.id in chain.ids:
            return f"{chain.title} · segment {chain.ids.index(session.id) + 1} of {len(chain.segments)}"
        return titled(None, self.previews([session.id]).get(session.id))

    def previews(self, session_ids: list[str], width: int = PREVIEW_CHARS) -> dict[str, str]:
        """The start of each session's first user message, on one line (``flat_line``: a line break as ⏎):
        what a list shows for a session with no title (Hermes titles few of its own)."""
        return shown_previews(self.first_messages(session_ids), width)

    def first_messages(self, session_ids: list[str]) -> dict[str, str]:
        """Each session's first user message as stored, its outer spaces stripped (none for a session with
        no such message, or an empty one): what ``shown_previews`` and ``stored_previews`` start from."""
        if not session_ids:
            return {}
        rows = self.conn().execute(  # each session's index walked from its start to its first user message
            "SELECT s.value, (SELECT content FROM messages WHERE session_id = s.value AND role = 'user' "
            "ORDER BY timestamp, id LIMIT 1) FROM json_each(?) s",
            (json.dumps(session_ids),),
        )
        texts = {row[0]: content_text(decode_content(row[1])).strip() for row in rows if row[1] is not None}
        return {sid: text for sid, text in texts.items() if text}

    def hit_previews(self, hits: Iterable[Any]) -> dict[str, str]:
        """What each untitled search hit shows for a title, by its session: the preview of its chain's
        first segment, as the tree titles the chain's row (a later segment's first message is no name)."""
        heads = {hit.session_id: (hit.segments or (hit.session_id,))[0] for hit in hits if not hit.title}
        previews = self.previews(list(dict.fromkeys(heads.values())))
        return {sid: previews[head] for sid, head in heads.items() if head in previews}

    def session_count(self) -> int:
        return self.conn().execute("SELECT count(*) FROM sessions").fetchone()[0]

    def end_session(self, session_id: str, reason: str, *, actor: str = "agent") -> bool:
        """End a live session; the first reason wins (False when it had already ended)."""
        self._session_or_fail(session_id)
        conn = self.conn()
        with self._write():
            changed = conn.execute(
                "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
                (self.clock.now(), reason, session_id),
            ).rowcount
        if changed:
            jid = self.home.journal.append(
                "sessions", "end", session_id, actor=actor, after=reason, session_id=session_id
            )
            self._publish(SessionChanged(action="ended", session_id=session_id, actor=actor, journal_id=jid))
        return bool(changed)

    @changes_archive
    def reopen_session(self, session_id: str, *, actor: str = "agent") -> bool:
        """Clear ``ended_at``/``end_reason`` so a resumed session is live again (False when it was live)."""
        session = self._session_or_fail(session_id)
        if session.ended_at is None:
            return False
        with self.journaled("reopen", session_id, actor=actor, before=session.end_reason) as entry:
            with self._write() as conn:
                changed = conn.execute(
                    "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ? AND ended_at IS NOT NULL",
                    (session_id,),
                ).rowcount
        if changed:
            self._publish(SessionChanged(action="reopened", session_id=session_id, actor=actor, journal_id=entry.id))
        return bool(changed)

    @changes_archive
    def update_system_prompt(self, session_id: str, prompt: str, *, actor: str = "agent") -> bool:
        """Replace the stored prompt snapshot (after a compaction rebuilt it).

        False when unchanged, or when this (older) schema has no column for it.
        """
        if not isinstance(prompt, str) or not prompt:
            raise WorkbenchError("A system prompt must be non-empty text.")
        before = self._session_or_fail(session_id).system_prompt
        if before == prompt or not self.caps.has("sessions", "system_prompt"):
            return False
        detail = {
            "chars_before": len(before or ""),
            "chars_after": len(prompt),
            "sha256_before": prompt_digest(before),
            "sha256_after": prompt_digest(prompt),
        }
        with self.journaled("system_prompt", session_id, actor=actor, detail=detail) as entry:
            with self._write() as conn:
                conn.execute("UPDATE sessions SET system_prompt = ? WHERE id = ?", (prompt, session_id))
        self._publish(SessionChanged(action="prompt_updated", session_id=session_id, actor=actor, journal_id=entry.id))
        return True

    @changes_archive
    def set_title(
        self, session_id: str, title: str | None, *, actor: str = "user", was: object = UNCHECKED
    ) -> str | None:
        """Set (or with an empty title, clear) a unique title; returns the stored title.

        A title held by a compression ancestor moves to this session (as Hermes does);
        any other holder is a refusal. ``was``: the title the rename was asked against (a box
        showed it); when another process has changed it since, ``TitleChanged``, and nothing is written.
        """
        clean = sanitize_title(title)
        session = self._session_or_fail(session_id)
        conn = self.conn()
        with self.journaled(
            "title", session_id, actor=actor, before=session.title, after=clean, detail={"title": clean}
        ) as entry:
            with self._write():
                now = conn.execute("SELECT title FROM sessions WHERE id = ?", (session_id,)).fetchone()
                if now is None:
                    raise WorkbenchError(f"Session {session_id} was deleted meanwhile; nothing was renamed.")
                conflict = was is not UNCHECKED and now["title"] not in (was, clean)  # (to this very title: none)
                if conflict:
                    shown = f"'{flat_line(now['title'], 60)}'" if now["title"] else "no title"
                    raise TitleChanged(
                        f"Session {session_id} was renamed meanwhile, by another process (Hermes, say), to {shown}. "
                        "Save again to replace it with yours, or cancel to keep it.",
                        title=now["title"],
                    )
                if clean is not None:
                    holder = conn.execute(
                        "SELECT id FROM sessions WHERE title = ? AND id != ?", (clean, session_id)
                    ).fetchone()
                    if holder:
                        if holder["id"] not in self._compression_ancestors(session_id):
                            raise UnusableTitle(
                                f"Title '{clean}' is already in use by session {holder['id']}. Choose another title.",
                                holder=holder["id"],
                            )
                        conn.execute("UPDATE sessions SET title = NULL WHERE id = ?", (holder["id"],))
                conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (clean, session_id))
        self._publish(SessionChanged(action="titled", session_id=session_id, actor=actor, journal_id=entry.id))
        return clean

    def title_to_take(self, session_id: str, title: str | None) -> str | None:
        """The earlier segment (a compression ancestor) a rename of ``session_id`` to ``title`` takes that
        title from, leaving it untitled as Hermes does, if one holds it: a rename says so."""
        clean = sanitize_title(title)
        if clean is None:
            return None
        holder = (
            self.conn().execute("SELECT id FROM sessions WHERE title = ? AND id != ?", (clean, session_id)).fetchone()
        )
        return holder["id"] if holder and holder["id"] in self._compression_ancestors(session_id) else None

    def _compression_ancestors(self, session_id: str) -> set[str]:
        """Ancestors reached through parents that ended by compression."""
        found, current = set(), session_id
        for _ in range(100):
            row = (
                self.conn()
                .execute(
                    "SELECT p.id, p.end_reason FROM sessions c JOIN sessions p ON p.id = c.parent_session_id "
                    "WHERE c.id = ?",
                    (current,),
                )
                .fetchone()
            )
            if row is None or row["end_reason"] != "compression" or row["id"] in found or row["id"] == session_id:
                break
            found.add(row["id"])
            current = row["id"]
        return found

    def next_lineage_title(self, parent_title: str) -> str:
        """``X`` -> ``X #2`` -> ``X #3``: the next free numbered title of a lineage."""
        match = NUMBERED_TITLE.match(parent_title)
        base = match.group(1) if match else parent_title
        rows = (
            self.conn()
            .execute(
                "SELECT title FROM sessions WHERE title = ? OR title LIKE ? ESCAPE '\\'",
                (base, like_escape(base) + " #%"),
            )
            .fetchall()
        )
        if not rows:
            return base
        numbers = [1]
        for row in rows:
            numbered = NUMBERED_TITLE.match(row["title"])
            if numbered and numbered.group(1) == base:
                numbers.append(int(numbered.group(2)))
        return f"{base} #{max(numbers) + 1}"

    def resolve_title(self, title: str) -> Session | None:
        """The newest ``title #N`` variant, else the exact title, else None."""
        base = title.strip()
        row = (
            self.conn()
            .execute(
                "SELECT * FROM sessions WHERE title LIKE ? ESCAPE '\\' ORDER BY started_at DESC LIMIT 1",
                (like_escape(base) + " #%",),
            )
            .fetchone()
        )
        return self._session(row) if row else self._titled(base)

    def _titled(self, title: str, *, unique: bool = False) -> Session | None:
        """The session with exactly this title. Hermes keeps titles unique, but leaves duplicates when
        its repair of the unique index fails: ``unique`` refuses them, naming each (a delete's)."""
        rows = self.conn().execute("SELECT * FROM sessions WHERE title = ? LIMIT 5", (title.strip(),)).fetchall()
        if unique and len(rows) > 1:
            ids = [str(row["id"]) for row in rows]
            named = ", ".join(ids) + (", ..." if len(ids) == 5 else "")
            raise WorkbenchError(
                f"Several sessions have the title {quoted(title.strip())} ({named}); give the id of the one you mean.",
                candidates=ids,
            )
        return self._session(rows[0]) if rows else None

    def update_token_counts(
        self,
        session_id: str,
        *,
        absolute: bool = False,
        model: str | None = None,
        estimated_cost_usd: float | None = None,
        **counts: int,
    ) -> None:
        """Add (or with ``absolute``, set) token and API-call counters."""
        unknown = set(counts) - set(_TOKEN_COLUMNS)
        if unknown:
            raise WorkbenchError(
                f"Unknown token counter(s): {', '.join(sorted(unknown))}; use {', '.join(_TOKEN_COLUMNS)}."
            )
        sets: list[str] = []
        args: list[object] = []
        for column, value in counts.items():
            if self.caps.has("sessions", column):
                sets.append(f"{column} = ?" if absolute else f"{column} = COALESCE({column}, 0) + ?")
                args.append(int(value or 0))
        if estimated_cost_usd is not None and self.caps.has("sessions", "estimated_cost_usd"):
            sets.append(
                "estimated_cost_usd = ?" if absolute else "estimated_cost_usd = COALESCE(estimated_cost_usd, 0) + ?"
            )
            args.append(float(estimated_cost_usd))
        if model:
            sets.append("model = COALESCE(model, ?)")
            args.append(model)
        if not sets:
            return
        self._session_or_fail(session_id)
        with self._write() as conn:
            conn.execute(f"UPDATE sessions SET {', '.join(sets)} WHERE id = ?", (*args, session_id))

    @changes_archive
    def set_archived(
        self,
        session_id: str,
        archived: bool = True,
        *,
        actor: str = "user",
        only: list[str] | None = None,
        if_ended: bool = False,
    ) -> int:
        """Archive (hide from lists) or restore a session with its whole conversation (``conversation_family``);
        returns how many sessions changed. A conversation already so changes nothing and is not journaled. The row names
        the sessions it flipped, so a revert flips exactly those back (``only``: what a row names, even
        a row journaled when the family was reckoned otherwise) and no others.

        With ``if_ended`` an archive of sessions one of which has not ended is refused (``SessionLive``,
        nothing changed; ``live_archive_warning`` says why), checked again inside the write, as a delete
        is: Hermes goes on writing to an archived session, and the segment its next compression starts
        is not archived. Restoring is never refused."""
        self._require("sessions", "archived")
        self._session_or_fail(session_id)
        family = self.conversation_family(session_id) if only is None else list(dict.fromkeys(only))
        chain = sorted((sid for sid, flag in self._archived_of(family).items() if flag != archived), key=family.index)
        if not chain:
            return 0
        refuse_live = if_ended and archived
        if refuse_live:
            self._refuse_live_archive(session_id, chain)
        conversation = self.chain_of(chain[0])  # the row is named by the first chain it flips, archive or revert
        marks = ", ".join("?" * len(chain))
        try:
            with self.journaled(
                "archive" if archived else "unarchive",
                chain[0],  # keyed to the conversation's first session it flips, as it is named, not the row pressed
                actor=actor,
                after=str(int(archived)),
                detail={"sessions": chain, **self._archive_name(conversation, chain)},
            ) as entry:
                with self._write() as conn:
                    if refuse_live:
                        self._refuse_live_archive(session_id, chain)  # (resumed since it was read)
                    flipped = {
                        sid
                        for (sid,) in conn.execute(
                            f"UPDATE sessions SET archived = ? WHERE id IN ({marks}) AND archived != ? RETURNING id",
                            (int(archived), *chain, int(archived)),
                        ).fetchall()
                    }
                    if not flipped:
                        raise _FlippedMeanwhile("another program made the same change meanwhile; nothing changed")
                if len(flipped) < len(chain):  # (another program flipped the rest between our look and our write)
                    chain = [sid for sid in chain if sid in flipped]
                    entry.updates["detail"] = {"sessions": chain, **self._archive_name(conversation, chain)}
        except _FlippedMeanwhile:
            return 0
        outside.note_archived(self.home, chain, archived)
        self._publish(
            SessionChanged(
                action="archived" if archived else "unarchived", session_id=session_id, actor=actor, journal_id=entry.id
            )
        )
        return len(chain)

    def live_delete_warning(self, session_id: str) -> str | None:
        """Why deleting ``session_id`` may not last, in words for the user: it, or a delegate session
        the delete takes with it, has not ended (None when all have, or it is gone)."""
        return _live_warning(session_id, self._live_among(self.deleted_with(session_id)))

    def live_archive_warning(self, session_id: str) -> str | None:
        """Why archiving ``session_id``'s conversation may not last, in words for the user: a session it
        would hide has not ended (None when all have, or it is gone)."""
        if self.get_session(session_id) is None or not self.caps.has("sessions", "archived"):
            return None
        family = self.conversation_family(session_id)
        hidden = [sid for sid, flag in self._archived_of(family).items() if not flag]
        return _live_archive_warning(session_id, self._live_among(sorted(hidden, key=family.index)))

    def _refuse_live_archive(self, session_id: str, hidden: list[str]) -> None:
        if warning := _live_archive_warning(session_id, self._live_among(hidden)):
            raise SessionLive(warning, session_id=session_id)

    def _refuse_live(self, session_id: str, doomed: list[str]) -> None:
        if warning := _live_warning(session_id, self._live_among(doomed)):
            raise SessionLive(warning, session_id=session_id)

    def deleted_with(self, session_id: str) -> list[str]:
        """The sessions a delete of ``session_id`` takes: it, and the delegate sessions it started."""
        return [session_id, *self._delegate_descendants(session_id)]

    def delete_mark(self, session_id: str) -> DeleteMark:
        """What a delete of ``session_id`` would take, as a question shows it. A delete given it
        (``shown``) is refused when it changed: Hermes appended, or rewrote the messages in place (its
        compaction deletes and inserts them again)."""
        row = self.conn().execute("SELECT message_count FROM sessions WHERE id = ?", (session_id,)).fetchone()
        doomed = self.deleted_with(session_id)
        rows, newest = 0, 0
        for chunk, marks in in_chunks(doomed):
            sql = f"SELECT count(*), coalesce(max(id), 0) FROM messages WHERE session_id IN ({marks})"
            count, top = self.conn().execute(sql, chunk).fetchone()
            rows, newest = rows + count, max(newest, top)
        return DeleteMark(row[0] if row else 0, tuple(sorted(doomed)), rows, newest)  # (sorted: walks vary)

    def _refuse_changed(self, session_id: str, shown: DeleteMark) -> None:
        now = self.delete_mark(session_id)
        if now == shown:
            return
        count, was = now.messages, shown.messages
        what = (
            f"has {count} message{'s' * (count != 1)} now, not the {was} you were asked about"
            if count != was
            else "changed since you were asked about it (its messages were rewritten, or its delegate sessions)"
        )
        raise SessionGrew(f"Session {session_id} {what}: another process wrote to it meanwhile. Nothing was deleted.")

    def turn_may_follow(self, at: float, slack: float) -> bool:
        """Whether a turn that changed something at ``at`` may still be stored: Hermes stores a turn when
        it ends, in a session it created as it began, so only a session that has not ended and began by
        then (a compression's next segment, which goes on its parent's turn: ``slack`` seconds later at
        most) can bring one. False when state.db cannot be read or has no sessions table (no turn of it
        can be found either)."""
        child = (
            "OR (parent_session_id IS NOT NULL AND started_at <= ?)"
            if self.caps.has("sessions", "parent_session_id")
            else ""
        )
        try:
            found = self.conn().execute(
                f"SELECT 1 FROM sessions WHERE ended_at IS NULL AND (started_at <= ? {child}) LIMIT 1",
                (at, at + slack) if child else (at,),
            )
            return found.fetchone() is not None
        except (WorkbenchError, sqlite3.Error):
            return False

    def _live_among(self, ids: list[str]) -> list[str]:
        live: list[str] = []
        for chunk, marks in in_chunks(ids):
            sql = f"SELECT id FROM sessions WHERE id IN ({marks}) AND ended_at IS NULL"
            live.extend(row[0] for row in self.conn().execute(sql, chunk))
        return sorted(live, key=ids.index)

    @changes_archive
    def delete_session(
        self, session_id: str, *, actor: str = "user", live: bool = False, shown: DeleteMark | None = None
    ) -> bool:
        """Delete a session and its messages; delegate children go too, other children are orphaned.

        A session that has not ended (or a delegate of it) is refused (``SessionLive``, nothing
        changed) unless ``live``: a Hermes still running it would write to it again, and its next
        message would bring back a session of that one message. ``shown``: its ``delete_mark`` when the
        person who said yes was asked; one that changed since (Hermes wrote meanwhile) is refused,
        checked in the delete's transaction, so nothing they were not asked about goes."""
        session = self.get_session(session_id)
        if session is None:
            return False
        doomed = self.deleted_with(session_id)
        if not live:
            self._refuse_live(session_id, doomed)
        with self.journaled(
            "delete",
            session_id,
            actor=actor,
            before=session.title,
            detail={"deleted": doomed, "message_count": session.message_count, **self.named(session_id, session.title)},
        ) as entry:
            with self._write():
                if not live:
                    self._refuse_live(session_id, doomed)  # (reopened since it was read)
                if shown is not None:
                    self._refuse_changed(session_id, shown)
                self._delete_rows(doomed)
        outside.note_deleted(self.home, doomed)
        self._publish(
            SessionChanged(
                action="deleted",
                session_id=session_id,
                actor=actor,
                journal_id=entry.id,
                parent_session_id=session.parent_session_id,
            )
        )
        return True

    def _archive_name(self, conversation: Chain, flipped: list[str]) -> dict[str, str]:
        """How an archive row names what it flipped: the conversation by its title, or, when its first
        segment is not among them (a segment Hermes added since), the first it flipped by its own."""
        if conversation.head.id in flipped:
            return self.named(conversation.head.id, conversation.title)
        first = self.get_session(flipped[0])
        return self.named(flipped[0], first.title if first else None)

    def named(self, session_id: str, title: str | None) -> dict[str, str]:
        """How a journal row names a session besides its id (the Timeline's summary shows it, as the
        tree does): its ``title``, else the start of its first user message (``preview``)."""
        if title:
            return {"title": title}
        preview = self.previews([session_id]).get(session_id)
        return {"preview": preview} if preview else {}

    def _delegate_descendants(self, session_id: str) -> list[str]:
        found: list[str] = []
        frontier, seen = [session_id], {session_id}
        while frontier:
            current = frontier.pop()
            for row in self.conn().execute("SELECT * FROM sessions WHERE parent_session_id = ?", (current,)):
                child = self._session(row)
                if child.is_delegate and child.id not in seen:
                    seen.add(child.id)
                    found.append(child.id)
                    frontier.append(child.id)
        return found

    def _delete_rows(self, ids: list[str]) -> None:
        """Inside a write transaction: orphan surviving children, then remove messages and rows."""
        conn = self.conn()
        for chunk, marks in in_chunks(ids):
            conn.execute(
                f"UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id IN ({marks}) "
                f"AND id NOT IN ({marks})",
                (*chunk, *chunk),
            )
            conn.execute(f"DELETE FROM messages WHERE session_id IN ({marks})", chunk)
            if "session_model_usage" in self.caps.tables:
                conn.execute(f"DELETE FROM session_model_usage WHERE session_id IN ({marks})", chunk)
            conn.execute(f"DELETE FROM sessions WHERE id IN ({marks})", chunk)

    def prunable(self, older_than_days: float, source: str | None = None) -> list[str]:
        """The ended sessions started more than ``older_than_days`` ago (of ``source``), newest first:
        what ``prune`` would delete."""
        if older_than_days < 0:
            raise WorkbenchError("older_than_days must be zero or more.")
        cutoff = self.clock.now() - older_than_days * 86400
        sql = "SELECT id FROM sessions WHERE ended_at IS NOT NULL AND started_at < ?"
        args: list[object] = [cutoff]
        if source is not None:
            sql += " AND source = ?"
            args.append(source)
        return [r["id"] for r in self.conn().execute(sql + " ORDER BY started_at DESC", args)]

    def labelled(self, ids: list[str]) -> list[dict]:
        """Each session's id, title, first message's start as stored (``stored_previews``), and its label as
        lists show it (``titled``)."""
        texts = self.first_messages(ids)
        previews, stored = shown_previews(texts), stored_previews(texts)
        named = []
        for session_id in ids:
            session = self.get_session(session_id)
            title, preview = (session.title if session else None), previews.get(session_id)
            label = titled(title, preview) or ""
            named.append({"id": session_id, "title": title, "preview": stored.get(session_id), "label": label})
        return named

    def prune_listing(self, ids: list[str], shown: int = PRUNE_NAMED) -> str:
        """The sessions a prune would delete, in words for a question: the first ``shown`` named by id
        and label, then how many more (``a (Tea talk), b and 3 more``)."""
        named = [
            f"{n['id']} ({flat_line(n['label'], 40)})" if n["label"] else n["id"] for n in self.labelled(ids[:shown])
        ]
        more = f" and {len(ids) - shown:,} more" if len(ids) > shown else ""
        return ", ".join(named) + more

    def prune_warnings(self, older_than_days: float, source: str | None, ids: list[str]) -> list[str]:
        """What a prune of ``ids`` (``prunable``'s) does to sessions that have not ended, in words for the
        user, the one wording the dry run, the confirmation and the prune give: an ended segment of a
        compression chain whose later segment is live is pruned, which cuts the start off a conversation
        a running Hermes may still be writing (the rest stays, as a root); a live session is never
        pruned, however old."""
        live = [r[0] for r in self.conn().execute("SELECT id FROM sessions WHERE ended_at IS NULL ORDER BY started_at")]
        doomed, warnings, seen, told = set(ids), [], set(), set()
        for live_id in live:
            chain = [segment.id for segment in self.chain_of(live_id).segments]
            taken = [sid for sid in chain if sid in doomed]
            if taken and chain[0] not in seen:
                seen.add(chain[0])
                rest = [sid for sid in chain if sid not in doomed]
                warnings.append(_live_prune_warning(taken, live_id, rest[0]))
                told.add(live_id)
        cutoff = self.clock.now() - older_than_days * 86400
        sql = "SELECT id FROM sessions WHERE ended_at IS NULL AND started_at < ?"  # (as prunable asks)
        sql += " AND source = ?" if source is not None else ""
        old = [
            r[0]
            for r in self.conn().execute(
                sql + " ORDER BY started_at", [cutoff, *([source] if source is not None else [])]
            )
            if r[0] not in told  # (its chain's warning says it)
        ]
        if old:
            listed = ", ".join(old[:10]) + (f" and {len(old) - 10:,} more" if len(old) > 10 else "")
            one = len(old) == 1
            warnings.append(
                f"Not pruned: {listed} {'has' if one else 'have'} not ended (live), so a running Hermes may still "
                f"be writing to {'it' if one else 'them'}: prune takes only ended sessions, however old."
            )
        return warnings

    @changes_archive
    def prune(
        self, older_than_days: float, source: str | None = None, *, actor: str = "user", among: list[str] | None = None
    ) -> int:
        """Delete ended sessions started more than ``older_than_days`` ago; their children are orphaned.
        With ``among`` (the ids a question named), only those of them still prunable: one ended or
        started since the question was asked is never taken unasked."""
        ids = self.prunable(older_than_days, source)
        if among is not None:
            asked = set(among)
            ids = [session_id for session_id in ids if session_id in asked]
        if not ids:
            return 0
        # every id, however many: a kill before the note leaves the row to say these were ours
        detail = {"older_than_days": older_than_days, "source": source, "count": len(ids), "deleted": ids}
        with self.journaled("prune", "*", actor=actor, detail=detail) as entry:
            with self._write():
                # read again in the delete's transaction: one Hermes resumed since the read above stays
                still = set(self.prunable(older_than_days, source))
                if len(gone := [session_id for session_id in ids if session_id in still]) < len(ids):
                    ids = gone
                    entry.updates["detail"] = {**detail, "count": len(ids), "deleted": ids}
                self._delete_rows(ids)
        outside.note_deleted(self.home, ids)
        self._publish(SessionChanged(action="pruned", actor=actor, journal_id=entry.id))
        return len(ids)


def _live_warning(session_id: str, live: list[str]) -> str | None:
    """The one wording, for both skins, of deleting a session that has not ended."""
    if not live:
        return None
    if session_id in live:
        what = f"Session {session_id} has not ended (it is live)"
    else:
        what = f"Session {session_id} started delegate session {live[0]}, which has not ended (it is live)"
    return (
        f"{what}: a running Hermes may still be writing to it, and its next message would create it again, "
        "holding only that message."
    )


def _live_prune_warning(taken: list[str], live: str, kept: str) -> str:
    """The one wording, for the dry run and the prune alike, of pruning part of a conversation still written."""
    one = len(taken) == 1
    return (
        f"{', '.join(taken)} {'is an ended segment' if one else 'are ended segments'} of a conversation still "
        f"being written: its segment {live} has not ended (it is live), so a running Hermes may still be writing "
        f"to it. Pruning takes {'that segment' if one else 'those segments'}, the conversation's earlier part; "
        f"{kept} stays, as a root, holding only its own messages."
    )


def _live_archive_warning(session_id: str, live: list[str]) -> str | None:
    """The one wording, for both skins, of archiving a conversation a session of which has not ended.
    Hermes 0.19 appends to an archived session as to any (it stays archived), and the segment it starts
    when it compresses one is not archived: our lists show the conversation again, Hermes's hides it."""
    if not live:
        return None
    if session_id in live:
        what = f"Session {session_id} has not ended (it is live)"
    else:
        what = f"Session {session_id}'s conversation holds {live[0]}, which has not ended (it is live)"
    return (
        f"{what}: a running Hermes may still be writing to it. Archived, it is hidden from lists while "
        "Hermes goes on writing; and when Hermes compresses it, the new segment is not archived, so the "
        "workbench lists the conversation again while Hermes's own list still hides it."
    )
