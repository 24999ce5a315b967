"""One entry's story: where it came from, what happened to it since, and taking it back.

An entry's origin is found, in this order of trust:

* ``journal``: the newest journal row that wrote exactly this text (a workbench write,
  the agent's or a person's, with its session and message), unless it was taken away
  after that and is back (an entry taken away and still gone came from the write
  before its removal);
* ``archive``: the newest applied ``memory`` tool call in state.db that wrote it (how a
  real Hermes agent's writes are traced; also preferred over a journaled *external*
  edit, which only says that something outside wrote it);
* ``before``: neither knows, so the entry was already there when the workbench first
  saw the file (the date of that first look, or else the file's last change).

Undo takes back the newest change of an entry, only when it still applies: a journal
row through its inverse, an archive add by removing the entry it wrote. The Memory
screen and ``workbench memory`` both use this module.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from functools import cache
from typing import TYPE_CHECKING, Any

from ..approvals.outside import citing_approval
from ..approvals.records import approved_by, proposed
from ..approvals.sources import staged_at
from ..clock import shown_time
from ..diffs import DiffLine, line_diff, shown_diff, whitespace_only
from ..errors import WorkbenchError
from ..journal import JournalEntry
from ..textsafety import flat_line, quoted
from ..values import iso_time
from . import ops, repair
from .archive_writes import HERMES_SLACK_S, REMOVE, TAKING_ACTIONS, WRITING_ACTIONS
from .credit import credited_note
from .format import FILE_NAMES, read_as_hermes, split_pieces
from .ops import Outcome, Refusal, refuse
from .rebuild import LEFT_ROW
from .store import SUBSYSTEM, _Plan, _scan, _Writer
from .targets import TARGETS

if TYPE_CHECKING:
    from .archive_writes import ArchiveWrite
    from .store import MemoryStore

# Journal actions that rewrote the whole file (``normalize``: older line-ending repairs).
WHOLE_FILE = (repair.ACTION, "normalize")
HERMES_AGENT = "agent"  # the actor a Hermes agent's memory tool call is shown as (``shown_actor``)
SINCE_ROWS = 20_000  # the memory rows since a snapshot ``successors`` reads at most (a day of Hermes's writes)
UNDO_LINES = 200  # of a whole-file undo's diff, shown in its question (a 10 MB file's undo changes 50,000)


@dataclass(frozen=True)
class Origin:
    """Who wrote an entry, in which session and message, when, and how we know (``via``)."""

    via: str
    actor: str | None  # None for "before": nobody is known
    at: float | None
    session_id: str | None = None
    message_id: int | None = None
    journal_id: int | None = None
    action: str | None = None  # the write that produced it: add, replace, undo, ...
    proposed_by: str | None = None  # an approved proposal's proposer (the actor is its approver)
    edited: bool = False  # that proposal, edited by its approver before approving it

    def to_dict(self) -> dict[str, Any]:
        return {
            "actor": self.actor,
            "proposed_by": self.proposed_by,
            "edited": self.edited,
            "session_id": self.session_id,
            "message_id": self.message_id,
            "at": iso(self.at),
            "via": self.via,
        }

    def who(self) -> str:
        """The writer as people read it: an approved proposal names its proposer after its approver."""
        return approved_by(self.actor or "unknown", self.proposed_by, self.edited)

    def describe(self) -> str:
        """One line for people: ``agent · 2026-11-30 12:00 · session s1 · message 7 (archive)``."""
        return " · ".join(self.phrases())

    def phrases(self) -> list[str]:
        """``describe``'s parts, each one a line never breaks inside (``session s1``, ``message 7``: a
        terminal that broke one left the word on a line and its id or number on the next)."""
        if self.via == "before":
            return [f"present before {when(self.at)}" if self.at is not None else "present before the workbench saw it"]
        if self.via == "unknown":
            return ["unknown: the journal (workbench.db) cannot be read"]
        if self.via == "outside":
            return ["external", when(self.at), "written outside the workbench, not journaled yet"]
        parts = [self.who(), when(self.at)]
        if self.session_id:
            parts.append(f"session {self.session_id}")
        if self.message_id is not None:
            parts.append(f"message {self.message_id}")
        if self.via == "archive":
            parts[-1] += " (from the archive)"
        return parts


def iso(at: float | None) -> str | None:
    return iso_time(at)


def when(at: float | None) -> str:
    return shown_time(at) or "unknown"


# -- origins -------------------------------------------------------------------------
def origin(
    memory: MemoryStore,
    target: str,
    entry: str,
    rewrites: list[_Rewrite] | None = None,
    live: Collection[str] | None = None,
    left: Collection[str] | None = None,
    rows: list[JournalEntry] | None = None,
    seen: Callable[[], float | None] | None = None,
) -> Origin:
    """``live``: the file's entries, when the caller has read them (else read here if needed); ``left``:
    the entries the journal last left the file with (``MemoryStore.journaled_entries``), likewise;
    ``rows``: the journal rows about ``entry`` (``Journal.about``), likewise."""
    if rows is None:
        rows = memory.home.journal.about(SUBSYSTEM, target, entry)
    writer = next((r for r in rows if r.after == entry), None)
    removals = [r for r in rows if r.before == entry and r.after != entry]
    gone = removals[0] if removals else None
    if (
        gone is not None
        and (writer is None or gone.id > writer.id)
        and entry not in (memory.read(target).entries if live is None else live)
    ):
        # taken away and still gone (a removed entry's detail): its origin as it was just before
        # that removal, the same rules over the writes since the removal before it (if any)
        prior = removals[1] if len(removals) > 1 else None
        if writer is not None and prior is not None and prior.id > writer.id:
            writer = None
        written = memory.archive_writes.between(target, entry, prior.at if prior else float("-inf"), gone.at)
        found = written[-1] if written else None
    else:
        if writer is not None and gone is not None and gone.id > writer.id:
            writer = None  # taken away after that write: whatever brought it back is the origin
        found = memory.archive_writes.newest(target, entry, after=gone.at if gone else None)
    if writer is not None and writer.actor != "external" and (found is None or writer.at >= found.at):
        return _from_row(writer)
    if found is not None:
        return Origin("archive", HERMES_AGENT, found.at, found.session_id, found.message_id, action=found.action)
    if writer is not None:
        return _approved_outside(memory, writer) or _from_row(writer)
    made = next((r.row for r in (_rewrites(memory, target) if rewrites is None else rewrites) if r.made(entry)), None)
    if made is not None:
        return _from_row(made)
    if entry in (memory.read(target).entries if live is None else live):
        journaled = memory.journaled_entries(target) if left is None else left
        if journaled is not None and entry not in journaled:  # on disk, not where the journal last left the file
            return Origin("outside", "external", memory.changed_at(target))
    return Origin("before", None, first_seen(memory, target) if seen is None else seen())


def entries_from(memory: MemoryStore, session_ids: set[str]) -> list[str]:
    """The live entries (both stores) whose origin is a message of one of ``session_ids``: deleting those
    sessions leaves them naming no message (what a delete's question warns of)."""
    found: list[str] = []
    for target in TARGETS:
        try:
            entries = memory.entries(target)
        except WorkbenchError:  # (a store that cannot be read is no reason to refuse a delete: it is not named)
            continue
        pairs = zip(entries, origins(memory, target, entries), strict=True)
        found += [entry for entry, came in pairs if came.session_id in session_ids]
    return found


def cited_note(cited: list[str] | tuple[str, ...]) -> str:
    """What a delete of sessions does to the memory entries that came from them (``entries_from``), in
    words both skins say before it."""
    shown = ", ".join(f"“{flat_line(entry, 40)}”" for entry in cited[:2]) + (", …" if len(cited) > 2 else "")
    one = len(cited) == 1
    they, these = ("it", "entry") if one else ("they", "entries")
    return (
        f"{len(cited)} memory {these} came from it ({shown}): {they} {'stays' if one else 'stay'}, but the "
        f"message {they} came from cannot be opened any more, and {'its' if one else 'their'} origin may read "
        '"present before".'
    )


@dataclass(frozen=True)
class _Rewrite:
    """A repair (or the undo of one): it rewrote the whole file, so no entry-level row names what it made."""

    row: JournalEntry
    before: frozenset[str]
    after: frozenset[str]

    def made(self, entry: str) -> bool:
        """A piece it split off, trimmed or normalised: in the file it left, not in the one it found."""
        return entry in self.after and entry not in self.before


def _rewrites(memory: MemoryStore, target: str) -> list[_Rewrite]:
    """The newest repairs of ``target`` and their undos, newest first, with the entries of both files."""
    rows = memory.home.journal.query(subsystem=SUBSYSTEM, target=target, actions=(*WHOLE_FILE, "undo"), limit=20)
    return [
        _Rewrite(row, frozenset(read_as_hermes(row.before or "")), frozenset(read_as_hermes(row.after or "")))
        for row in rows
        if row.action != "undo" or row.detail.get("op") in WHOLE_FILE
    ]


def origins(memory: MemoryStore, target: str, entries: list[str]) -> list[Origin]:
    """``origin`` of each entry, in the same order (the repairs read and parsed once for all of them).
    Unknown for all while workbench.db cannot be read: the entries are still listed."""

    def read() -> list[Origin]:
        rewrites, live = _rewrites(memory, target), set(memory.read(target).entries)
        journaled = memory.journaled_entries(target)
        left = None if journaled is None else set(journaled)
        # one query and one archive read for all of them: a lookup each was 17 ms a query on a journal
        # that had journaled a 50,000-entry file (and a set, not a list, to look an entry up in)
        rows = memory.home.journal.about_all(SUBSYSTEM, target, entries)
        memory.archive_writes.preload(target, entries)
        seen = cache(lambda: first_seen(memory, target))  # (asked once, not for each entry present before)
        return [origin(memory, target, entry, rewrites, live, left, rows.get(entry, []), seen) for entry in entries]

    return memory.home.journal.read_or(read, [Origin("unknown", None, None) for _ in entries])


def shown_actor(actor: str, call: object | None) -> str:
    """Who a journal row's change is shown as made by, one label everywhere (an entry's history, the
    Timeline, ``workbench memory history`` and ``timeline``): an ``external`` row whose Hermes ``memory``
    tool call state.db holds (``call``: what ``hermes_call`` found for it) is the agent's, as the origin
    of the entry it wrote says (``origin``: ``agent``, from the archive); any other row its journaled
    actor. The journal keeps ``external``; the Timeline's actor filters go by this label too."""
    return HERMES_AGENT if actor == "external" and call is not None else actor


def hermes_call(memory: MemoryStore, row: JournalEntry) -> ArchiveWrite | None:
    """The Hermes ``memory`` tool call behind an ``external`` add, replace or remove row, if state.db has it.

    A Hermes agent never writes our journal: its writes are journaled as ``external`` when
    a workbench process next sees the file. The call wrote exactly the row's entry after
    the journal last recorded the file (before that the entry was not new). Its message's
    time is not the write's, though: Hermes stamps the assistant message before its tools
    run, and may store it only once the turn ends, after the watcher saw the file change.
    So the window reaches ``HERMES_SLACK_S`` past both ends, and the calls in it that
    earlier external rows of the same entry explain are skipped, in order: two calls of
    one message, or an entry Hermes wrote, a person took out and then put back by hand,
    each get the call that is theirs (the hand-made one none). A remove row's call is a
    remove or replace whose ``old_text`` the removed entry holds.
    """
    removed = row.action == "remove"
    text = row.before if removed else row.after
    if (
        row.subsystem != SUBSYSTEM
        or row.actor != "external"
        or row.action not in ("add", "replace", "remove")
        or not text
        or not _ever_called(memory, row.target, text, removed)
    ):
        return None
    return memory.archive_writes.call_of(row.id, lambda: _call_behind(memory, row, text, removed))


def _ever_called(memory: MemoryStore, target: str, text: str, removed: bool) -> bool:
    """Whether any applied Hermes call could be behind a row of ``text``: one that wrote it, or (a
    removal) took out an entry holding its ``old_text``. The archive's writes are read once a version,
    so a row no call ever made (a hand edit) is answered without the journal queries ``_call_behind``
    makes for its window (an ``actor:agent`` page passes over many of them)."""
    ever = (float("-inf"), float("inf"))
    if removed:
        return any(w.old_text and w.old_text in text for w in memory.archive_writes.takings(target, *ever))
    return bool(memory.archive_writes.between(target, text, *ever))


def _call_behind(memory: MemoryStore, row: JournalEntry, text: str, removed: bool) -> ArchiveWrite | None:
    conn = memory.home.journal.connection()
    # the journal's last recording of the file before this row (rows record it in time order)
    last = conn.execute(
        f"SELECT at FROM journal WHERE {LEFT_ROW} AND id < ? ORDER BY id DESC LIMIT 1", (SUBSYSTEM, row.target, row.id)
    ).fetchone()
    after = last[0] if last else None
    since = (float("-inf") if after is None else after) - HERMES_SLACK_S
    until = row.at + HERMES_SLACK_S
    if removed:
        return _removal_call(memory, row, text, since, until)
    (explained,) = conn.execute(
        "SELECT count(*) FROM journal WHERE subsystem = ? AND target = ? AND actor = 'external' AND status = 'done' "
        "AND action IN ('add', 'replace') AND after = ? AND id < ? AND at > ?",
        (SUBSYSTEM, row.target, text, row.id, since),
    ).fetchone()
    ours = _journaled_calls(memory, row.target, since)
    calls = [c for c in memory.archive_writes.between(row.target, text, since, until) if _key(c) not in ours]
    return calls[explained] if explained < len(calls) else None


def _journaled_calls(memory: MemoryStore, target: str, since: float) -> set[tuple[str, int]]:
    """(session, message) of the calls since ``since`` whose writes a workbench journaled as its own:
    its runner stores its sessions in state.db as Hermes does, but such a call is the agent's row,
    never the one behind an outside edit (a person putting an entry back by hand)."""
    rows = memory.home.journal.connection().execute(
        "SELECT DISTINCT session_id, message_id FROM journal WHERE subsystem = ? AND target = ? AND status = 'done' "
        "AND actor != 'external' AND session_id IS NOT NULL AND message_id IS NOT NULL AND at > ?",
        (SUBSYSTEM, target, since - HERMES_SLACK_S),
    )
    return {(session_id, message_id) for session_id, message_id in rows}


def _key(write: ArchiveWrite) -> tuple[str, int]:
    return write.session_id, write.message_id


def external_rows_of(memory: MemoryStore, low: str, high: str | None = None) -> list[int]:
    """Ids of the ``external`` rows whose Hermes call (``hermes_call``) is in the session ``low``, or in
    any session whose id is in ``[low, high)``: a Hermes session's writes carry no session id in the
    journal, so a session filter finds them through the calls its messages made. One pass over the
    outside rows since the first of those calls; only those holding a call's text are resolved."""
    writes = memory.archive_writes.in_sessions(low, high)
    if not writes:
        return []
    calls = {(w.session_id, w.message_id) for w in writes}
    written = {(w.target, w.text) for w in writes if w.action != REMOVE}
    removed = [(w.target, w.old_text) for w in writes if w.action in TAKING_ACTIONS and w.old_text]
    rows = memory.home.journal.query(
        subsystem=SUBSYSTEM,
        actor="external",
        actions=(*WRITING_ACTIONS, REMOVE),
        since=min(w.at for w in writes) - HERMES_SLACK_S,
        limit=2**62,
    )
    found = []
    for row in rows:
        if row.action == REMOVE:
            if not any(t == row.target and old in (row.before or "") for t, old in removed):
                continue
        elif (row.target, row.after) not in written:
            continue
        call = hermes_call(memory, row)
        if call is not None and (call.session_id, call.message_id) in calls:
            found.append(row.id)
    return sorted(found)


def _removal_call(
    memory: MemoryStore, row: JournalEntry, entry: str, since: float, until: float
) -> ArchiveWrite | None:
    """The Hermes remove or replace behind an ``external`` remove row (a replace reworded past
    pairing is journaled as a remove and an add). One call takes out one entry, so the window's
    removes and replaces are handed to the rows that took an entry out in order, each to the
    first row whose entry holds its ``old_text`` (a replace row only a replace: a remove never
    rewrites): a person's later removal of another entry holding the same words gets none (it is
    theirs)."""
    ours = _journaled_calls(memory, row.target, since)
    removes = [w for w in memory.archive_writes.takings(row.target, since, until) if _key(w) not in ours]
    earlier = memory.home.journal.connection().execute(
        "SELECT action, before FROM journal WHERE subsystem = ? AND target = ? AND actor = 'external' "
        "AND status = 'done' AND action IN ('remove', 'replace') AND id < ? AND at > ? ORDER BY id",
        (SUBSYSTEM, row.target, row.id, since),
    )
    used: set[int] = set()
    for action, before in earlier:
        taken = next(
            (
                i
                for i, w in enumerate(removes)
                if i not in used and action in (REMOVE, w.action) and (w.old_text or "") in (before or "")
            ),
            None,
        )
        if taken is not None:
            used.add(taken)
    mine = next((w for i, w in enumerate(removes) if i not in used and (w.old_text or "") in entry), None)
    return None if mine is None else replace(mine, text=entry)


def _approved_outside(memory: MemoryStore, row: JournalEntry) -> Origin | None:
    """An outside write a Hermes approval made (its ``approve`` row cites it): approved outside,
    proposed by whoever staged it, at the call that staged it (the approval's, else state.db's)."""
    if row.actor != "external" or not memory.home.journal.exists():
        return None
    approval_id = citing_approval(memory.home.journal.connection(), row.id)
    approval = memory.home.journal.get(approval_id) if approval_id is not None else None
    if approval is None:
        return None
    session, message = staged_at(memory.home, approval) or (None, None)
    proposer = approval.detail.get("proposed_by")
    return Origin(
        "journal",
        row.actor,
        row.at,
        session,
        message,
        row.id,
        row.action,
        proposer if isinstance(proposer, str) else None,
    )


def _from_row(row: JournalEntry) -> Origin:
    restored = row.detail.get("restored") if row.action == "undo" else None
    if isinstance(restored, dict):  # an undo that put an entry back: who wrote it before it was taken away
        try:
            return replace(Origin(**restored), journal_id=row.id)
        except TypeError:  # a detail damaged by hand: the undo itself is the origin
            pass
    proposer = row.detail.get("proposed_by")
    return Origin(
        "journal",
        row.actor,
        row.at,
        row.session_id,
        row.message_id,
        row.id,
        row.action,
        proposer if isinstance(proposer, str) else None,
        isinstance(proposer, str) and row.detail.get("edited") is True,
    )


def first_look(row: JournalEntry) -> str:
    """What a ``seen`` row records, in words: the entries already there when the workbench first looked."""
    entries = row.detail.get("entries")
    count = len(entries) if isinstance(entries, list) else 0
    if not count:
        return "first look: no entries yet"
    return f"first look: {count:,} {'entry' if count == 1 else 'entries'} already there"


def first_seen(memory: MemoryStore, target: str) -> float | None:
    """When the workbench first saw this store's file (else its last change on disk)."""
    seen = memory.home.journal.first(SUBSYSTEM, target, "seen")
    return seen.at if seen is not None else memory.changed_at(target)


# -- history and successors ----------------------------------------------------------
def entry_history(memory: MemoryStore, target: str, entry: str, limit: int = 8) -> list[JournalEntry]:
    """The journal rows that wrote or took away exactly this entry, newest first, then, when a
    replace wrote it, those of the entry it replaced, back to where the chain began (a person's
    edit kept as a new entry after another writer removed the one they were editing goes on to
    that one: its add names it, ``edit_of``); for an entry no longer in the file, also what became
    of it, to the row that removed it.

    An ``external`` row names no message, so it gets the session and message of the Hermes
    tool call behind it when state.db has that call (a Hermes remove included).
    """
    rows: list[JournalEntry] = []
    listed: set[int] = set()
    text: str | None = entry
    older_than: int | None = None
    while text is not None and len(rows) < limit:
        found = memory.home.journal.about(SUBSYSTEM, target, text, limit - len(rows), before_id=older_than)
        # a row that took the chain's text away and wrote the one before it (an undo of a replace)
        # is found by both texts: it is listed once
        rows += [row for row in found if row.id not in listed]
        listed.update(row.id for row in found)
        first = next((r for r in reversed(found) if r.after == text), None)  # its oldest write
        made_from = _written_from(first) if first is not None else None
        text, older_than = (
            (made_from, first.id) if first is not None and made_from not in (None, text) else (None, None)
        )
    if entry not in memory.entries(target):  # gone: what became of it, to the row that took it away
        rows = sorted([*_what_became_of(memory, target, entry, limit, rows), *rows], key=lambda r: r.id, reverse=True)
    return with_calls(memory, rows[:limit])


def _written_from(row: JournalEntry) -> str | None:
    """The entry ``row`` made this one from: the one a replace rewrote, or the one a person was
    editing when another writer removed it and they kept their draft (an add naming it ``edit_of``)."""
    if row.before is not None:
        return row.before
    edited = row.detail.get("edit_of") if row.action == "add" else None
    return edited if isinstance(edited, str) and edited else None


def _what_became_of(
    memory: MemoryStore, target: str, entry: str, limit: int, known: list[JournalEntry]
) -> list[JournalEntry]:
    """The rows after ``entry``'s last write (found among ``known``, its history newest first) that
    rewrote it, then what it became, and so on, to the row that removed it (a story of the entry
    that left the file), leaving out the rows ``known`` holds already."""
    seen = {row.id for row in known}
    rows: list[JournalEntry] = []
    text: str | None = entry
    since = max((row.id for row in known if row.after == entry), default=0)  # its last write
    while text is not None and len(rows) < limit:
        later = memory.home.journal.about(SUBSYSTEM, target, text, 1000, after_id=since)  # (oldest first)
        row = next((r for r in later if r.before == text and r.after != text), None)  # the first that took it away
        if row is None:
            break
        if row.id not in seen:
            rows.append(row)
        text, since = row.after, row.id
    return rows


def with_calls(memory: MemoryStore, rows: list[JournalEntry]) -> list[JournalEntry]:
    """``rows``, each ``external`` one with the session and message of the Hermes call behind it, when
    state.db has that call (the journal names none for an outside edit), or, for the write Hermes's
    approval of a proposal made, of the call that staged it (as ``memory show`` names it)."""
    return [_with_call(memory, row) if row.actor == "external" else row for row in rows]


def _with_call(memory: MemoryStore, row: JournalEntry) -> JournalEntry:
    call = hermes_call(memory, row)
    if call is not None:
        return replace(row, actor=shown_actor(row.actor, call), session_id=call.session_id, message_id=call.message_id)
    approved = _approved_outside(memory, row)
    if approved is not None and approved.session_id is not None:
        return replace(row, session_id=approved.session_id, message_id=approved.message_id)
    return row


def successor(memory: MemoryStore, target: str, entry: str) -> str | None:
    """What became of ``entry``: its rewrites followed forward, if the result is still live (else None)."""
    return successors(memory, target, [entry]).get(entry)


def successors(
    memory: MemoryStore, target: str, entries: list[str], since: float | None = None
) -> dict[str, str | None]:
    """What the journal says became of each of ``entries``, from one read of it: the live entry
    its rewrites lead to, or None when it (or what it became) was removed. ``since``: when the
    entries were last all there (a snapshot's time): every row after it is read (up to
    ``SINCE_ROWS``), else the last 500, so a removal older than Hermes's last 500 writes is
    still known. Entries it cannot account for are left out (all of them while workbench.db
    cannot be read). None asked, none read: the Memory screen asks on every reload, mostly of none."""
    if not entries or memory.home.journal.problem() is not None:
        return {}
    current: dict[str, str | None] = {entry: entry for entry in entries}
    held = dict(current)  # the text each chain last had, which a later add or undo can put back
    rows = (
        memory.history(target, limit=500)
        if since is None
        else memory.home.journal.query(subsystem=SUBSYSTEM, target=target, since=since, limit=SINCE_ROWS)
    )
    for row in reversed(rows):
        for entry, now in current.items():
            if now is None and row.after is not None and held[entry] in (row.after, row.detail.get("edit_of")):
                current[entry] = held[entry] = row.after  # removed, then put back (or an edit of it kept: Keep mine)
            elif now is not None and row.before == now and row.after != now:
                current[entry] = row.after if row.after is not None else _replaced_by(memory, row, rows)
                if current[entry] is not None:  # (a removal keeps the text it had)
                    held[entry] = current[entry]
    live = set(memory.entries(target))
    return {entry: now for entry, now in current.items() if now is None or now in live}


def _replaced_by(memory: MemoryStore, removal: JournalEntry, rows: list[JournalEntry]) -> str | None:
    """The entry one Hermes replace call put in place of the entry an outside look found removed (the
    texts too unlike to pair on disk, so the look journaled a removal and an add): that add's text,
    when state.db shows the same call behind both; else None (a removal it is)."""
    edit = removal.detail.get("edit")
    if removal.actor != "external" or edit is None:
        return None
    halves = [r for r in rows if r.action == "add" and r.actor == "external" and r.detail.get("edit") == edit]
    call = hermes_call(memory, removal) if halves else None
    if call is None or call.action != "replace":
        return None
    # the very call: a message may hold several (a replace and an add), each found for its own row
    key = (call.session_id, call.message_id, "replace", call.old_text)
    return next(
        (
            r.after
            for r in halves
            if (c := hermes_call(memory, r)) and (c.session_id, c.message_id, c.action, c.old_text) == key
        ),
        None,
    )


# -- undo ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Undo:
    """The newest change of one entry, which can be taken back now."""

    question: str
    now: str | None
    back_to: str | None
    event_id: int | None = None  # a journal row, undone through its inverse
    origin: Origin | None = None  # or an archive add, undone by removing the entry
    entry: str = ""
    target: str = "memory"
    diff: tuple[DiffLine | None, ...] = ()  # a whole-file undo: the lines it changes, in context (None: a gap)
    whitespace_only: bool = False  # those lines differ only in whitespace (``diffs.WHITESPACE_ONLY`` says so)
    more: int = 0  # lines past ``UNDO_LINES`` the undo changes too, not in ``diff``


@dataclass(frozen=True)
class EntryStory:
    entry: str
    origin: Origin
    history: list[JournalEntry] = field(default_factory=list)
    undo: Undo | None = None
    why_no_undo: str = ""


def action_word(row: JournalEntry) -> str:
    """What an entry's history calls a row's action: a row a Timeline revert wrote (of one row or of a
    group) is a ``revert``, as the Timeline names it (``revert of row N``); the Memory screen's ``u`` (and
    ``memory undo``) an ``undo``; any other row its action."""
    if row.action == "undo" and (
        row.detail.get("timeline_revert") is True or isinstance(row.detail.get("revert"), str)
    ):
        return "revert"
    return row.action


def row_notes(row: JournalEntry) -> list[str]:
    """What a history row says after its action, the same in ``memory history`` and the Memory screen's
    detail: the row it takes back, the proposer of an approved write (else it reads as the approver's own),
    when a later look found it, its late credit, a first look's count and a repair's label."""
    detail = row.detail
    word = action_word(row)
    notes = (
        [f"{'reverts' if word == 'revert' else 'undoes'} #{detail['undo_of']}"]
        if detail.get("undo_of") is not None
        else []
    )
    if isinstance(detail.get("proposed_by"), str):
        notes.append(proposed(detail["proposed_by"], detail.get("edited") is True))
    if iso_time(detail.get("seen_at")):
        notes.append(f"found {when(detail['seen_at'])}")
    if credited := credited_note(row):
        notes.append(credited)
    if row.action == "seen":
        notes.append(first_look(row))
    if row.action == repair.ACTION and isinstance(detail.get("label"), str):
        notes.append(detail["label"])
    return notes


def entry_named(memory: MemoryStore, target: str, text: str) -> str:
    """The entry ``text`` names for a look at its story: a live entry or one the journal knows by
    that exact text, else the one live entry holding it, else (none live does) the one journaled
    entry holding it; ``WorkbenchError`` when none or several do."""
    if not text:
        raise WorkbenchError("Name the entry: --entry takes its text or a part of it, not an empty string.")
    entries = memory.entries(target)  # as `memory show` lists them
    if text in entries or memory.home.journal.about(SUBSYSTEM, target, text, limit=1):
        return text
    found = list(dict.fromkeys(e for e in entries if text in e))
    if not found:  # none live: one the journal knows (taken away since) holding it
        found = memory.home.journal.texts_holding(SUBSYSTEM, target, text, (*WRITING_ACTIONS, REMOVE), limit=6)
    if len(found) == 1:
        return found[0]
    name = FILE_NAMES[target]
    if not found:
        raise WorkbenchError(_none_holds(name, text), target=target, matches=0)
    raise WorkbenchError(
        f"{'Several' if len(found) > 5 else len(found)} entries of {name} hold {quoted(text)}; give more of the one "
        "you mean: " + "; ".join(ops.preview(e) for e in found[:5]),
        target=target,
    )


def entry_in_either(memory: MemoryStore, text: str) -> tuple[str, str]:
    """(target, entry) for ``entry_named`` with no store given: the store whose entry it names, when
    exactly one has one; ``WorkbenchError`` when neither or both do (naming what each said)."""
    found, refusals = [], []
    for target in TARGETS:
        try:
            found.append((target, entry_named(memory, target, text)))
        except WorkbenchError as exc:
            refusals.append(exc)
    several = [exc for exc in refusals if exc.details.get("matches") != 0]  # (an empty text, or several in one)
    if len(found) == 1 and not several:
        return found[0]
    if several and not found:
        raise several[0]
    if several:
        raise WorkbenchError(f"{several[0].message} ({FILE_NAMES[found[0][0]]} has one too: add --target.)")
    if found:
        raise WorkbenchError(
            f"Both stores have an entry that is or holds {quoted(text)}; add --target memory or --target user: "
            + "; ".join(f"{FILE_NAMES[t]}: {ops.preview(e)}" for t, e in found),
        )
    raise WorkbenchError(_none_holds(" or ".join(FILE_NAMES[t] for t in TARGETS), text))


def _none_holds(names: str, text: str) -> str:
    """The refusal when no entry of the store (or of either, said once) is or holds ``text``."""
    return (
        f"No entry of {names}, live or journaled, is or holds {quoted(text)}. "
        "`workbench memory show` lists the entries, `workbench memory history` the changes."
    )


def story(memory: MemoryStore, target: str, entry: str, limit: int = 8) -> EntryStory:
    """Origin, history and the undo on offer for one entry (live, or removed since the snapshot)."""
    found = origin(memory, target, entry)
    rows = entry_history(memory, target, entry, limit)
    offer, why = _offer(memory, target, entry, found, rows)
    return EntryStory(entry, found, rows, offer, why)


def _offer(
    memory: MemoryStore, target: str, entry: str, found: Origin, rows: list[JournalEntry]
) -> tuple[Undo | None, str]:
    whole = _whole_file_offer(memory, target, entry)
    if whole is not None:
        return whole, ""
    newest = rows[0] if rows else None
    if newest is None and found.action in WHOLE_FILE and found.journal_id is not None:
        newest = memory.home.journal.get(found.journal_id)  # a repair made it: its row holds the whole file
    if found.via == "archive" and (newest is None or newest.at < (found.at or 0)):
        if found.action != "add":
            return None, (
                "Hermes's replace does not record the whole entry it replaced, so there is nothing exact to go back to."
            )
        question = f"Undo the add by session {found.session_id}, message {found.message_id}: remove this entry?"
        return Undo(question, entry, None, origin=found, entry=entry, target=target), ""
    if newest is None:
        return None, "No recorded change of this entry to undo."
    problem = undo_problem(memory, newest)
    if problem:
        return None, str(problem)
    question = (
        f"Undo row {newest.id}: {newest.actor} {newest.action} at {when(newest.at)}?"  # (the status: Undid row N)
    )
    return Undo(question, newest.after, newest.before, event_id=newest.id, entry=entry, target=target), ""


def _whole_file_offer(memory: MemoryStore, target: str, entry: str) -> Undo | None:
    """When the file's newest change is a repair (or its undo) that can still be taken back, that is
    what undo offers for every entry: a repair rewrote the file, not one entry."""
    rows = memory.history(target, limit=1)
    row = rows[0] if rows else None
    if row is None or (row.action if row.action != "undo" else row.detail.get("op")) not in WHOLE_FILE:
        return None
    if undo_problem(memory, row) is not None:
        return None
    what = row.detail.get("label") or row.action
    again = "redo the repair" if row.action == "undo" else f"{FILE_NAMES[target]} goes back to its exact bytes before"
    question = f"Undo row {row.id}: {row.actor} {what} at {when(row.at)}? ({again})"
    lines = line_diff(row.after or "", row.before or "")
    shown = shown_diff(lines)
    past = [line for line in shown[UNDO_LINES:] if line is not None and line[0] != " "]
    return Undo(
        question,
        "the whole file as it is now",
        "the whole file as it was",
        event_id=row.id,
        entry=entry,
        target=target,
        diff=tuple(shown[:UNDO_LINES]),
        whitespace_only=whitespace_only(lines),
        more=len(past),
    )


def _since(memory: MemoryStore, row: JournalEntry) -> str:
    """What became of the entry ``row`` wrote, after the file's name: the newest row since that took it
    away (a Hermes replace the workbench caught up with, a hand edit), which is reverted first."""
    later = next(
        (
            r
            for r in memory.home.journal.about(SUBSYSTEM, row.target, row.after or "")
            if r.id > row.id and r.before == row.after
        ),
        None,
    )
    if later is None:
        return " (it was changed or removed since)"
    kind = later.detail.get("op", later.action) if later.action == "undo" else later.action
    if later.after:
        return f": row {later.id} ({later.actor} {kind}) changed it since; revert that row first"
    return f": row {later.id} ({later.actor} {kind}) took it out since"


class AlreadyUndone(Refusal):
    """An undo refused because the row was undone already, or the file holds what its undo would
    leave: a group's revert skips the row for ``reason``; named alone, it is refused."""

    def __init__(self, row_id: int, reason: str):
        super().__init__({"error": f"Cannot undo row {row_id}: {reason}. Nothing was changed."})
        self.reason = reason


def undo_problem(memory: MemoryStore, row: JournalEntry) -> Refusal | None:
    """Why undoing ``row`` would be refused right now (None: it would apply); its ``str`` is the error."""
    try:
        plan = _inverse(memory, row)
        state = memory.read(row.target)
        limit = memory.limit(row.target)
        memory._guard(row.target, state, limit, plan.drift_guard, backup=False)
        plan.op(list(state.entries), limit)
    except Refusal as refusal:
        return refusal
    return None


def apply_undo(memory: MemoryStore, offer: Undo, actor: str = "user") -> dict[str, Any]:
    """Take back what ``offer`` describes, through the normal guards (itself journaled)."""
    if offer.event_id is not None:
        return undo(memory, offer.event_id, actor)
    source = offer.origin
    if source is None:
        raise ValueError("An undo offer names a journal row or an archive add; this one names neither.")
    entry = offer.entry
    try:
        memory._check_writable()
        plan = _Plan(
            "remove",
            lambda entries, limit: ops.remove(entries, entry, pin=entry),
            {},
            entry,
            journal_action="undo",
            extra_detail={"op": "remove", "undo_of_message": source.message_id, "undo_of_session": source.session_id},
        )
        outcome = memory._apply(offer.target, plan, _Writer(actor))
    except Refusal as refusal:
        return refusal.result
    result = memory._success(offer.target, outcome)
    result["message"] = undone(f"the add by message {source.message_id}", "add", outcome)
    return result


UNDONE = {  # what undoing a row of each kind did, said after "Undid row N (a replace): "
    "add": "the entry it added is gone again",
    "remove": "the entry it removed is back",
    "replace": "the entry is back as it was",
}


def undone(what: str, kind: str, outcome: Outcome) -> str:
    """One sentence for an undo done: ``Undid row 55 (a replace): the entry is back as it was.``"""
    if not outcome.changes:  # (a replace back to the text the entry already held)
        effect = "it already read so, so nothing changed"
    else:  # (a repair's: "MEMORY.md is back as it was before the repair.")
        effect = UNDONE.get(kind) or outcome.message.rstrip(".")
    return f"Undid {what}: {effect}."


def undo(memory: MemoryStore, event_id: Any, actor: str = "user") -> dict[str, Any]:
    """Apply the inverse of one journal event through the normal guards (itself journaled)."""
    try:
        memory._check_writable()
        row = _undoable(memory, event_id)
        plan = _inverse(memory, row)
        if plan.action in ("add", "replace"):  # putting an entry back: it keeps who wrote it before it went
            was = origin(memory, row.target, plan.detail)  # (read when applying, not when an undo is only offered)
            plan.extra_detail["restored"] = {key: value for key, value in vars(was).items() if key != "journal_id"}
        outcome = memory._apply(row.target, plan, _Writer(actor, detail={"undo_of": row.id}))
    except Refusal as refusal:
        return refusal.said_to(actor)
    result = memory._success(row.target, outcome)
    kind = row.detail.get("op", row.action) if row.action == "undo" else row.action
    article = "an" if row.action[:1] in ("a", "e", "i", "o", "u") else "a"
    result["message"] = undone(f"row {row.id} ({article} {row.action})", kind, outcome)
    result["undone_event"] = row.id
    return result


def _undoable(memory: MemoryStore, event_id: Any) -> JournalEntry:
    try:
        number = int(event_id)
    except (TypeError, ValueError):
        raise refuse(f"A row id must be a number, got {quoted(event_id)}. See `workbench memory history`.") from None
    row = memory.home.journal.get(number)
    if row is None or row.subsystem != SUBSYSTEM:
        raise refuse(f"No memory journal row {number}. See `workbench memory history` for row ids.")
    if row.status != "done":
        raise refuse(f"Row {number} was never applied (status: {row.status}); there is nothing to undo.")
    return row


def _inverse(memory: MemoryStore, row: JournalEntry) -> _Plan:
    if (undone := memory.home.journal.undone_by([row.id]).get(row.id)) is not None:
        raise AlreadyUndone(row.id, f"row {undone} undid it already")
    kind = row.detail.get("op", row.action) if row.action == "undo" else row.action
    if row.target not in FILE_NAMES:  # a hand-edited row
        raise refuse(f"Cannot undo row {row.id}: it names no memory file ({quoted(row.target)}). Nothing was changed.")
    file_name = FILE_NAMES[row.target]
    extra = {"op": kind}

    def gone() -> Refusal:
        """(Under the lock.) The entry ``row`` wrote is not in the file: which later row took it away."""
        return refuse(
            f"Cannot undo row {row.id}: the entry it wrote is no longer in {file_name}{_since(memory, row)}. "
            "Nothing was changed."
        )

    def one_copy() -> None:
        """(Under the lock.) Refuse to take out an entry the file holds twice: another writer wrote its
        text again since (a Hermes replace to an entry's exact text), and the write would take out both."""
        if split_pieces(memory.read(row.target).raw).count(row.after or "") > 1:
            raise refuse(
                f"Cannot undo row {row.id}: {file_name} holds '{ops.preview(row.after or '')}' twice (another "
                "writer wrote it again since), and undoing would take out both copies. Nothing was changed: "
                "edit or remove the entry by hand."
            )

    if kind == "add":

        def op(entries: list[str], limit: int) -> Outcome:
            if row.after not in entries:
                raise gone()
            one_copy()
            return ops.remove(entries, row.after, pin=row.after)

        extra["op"] = "remove"
        return _Plan("remove", op, {}, row.after or "", journal_action="undo", extra_detail=extra)
    if kind == "remove":
        text = row.before or ""
        _scan(text)

        def op(entries: list[str], limit: int) -> Outcome:
            if text in entries:
                raise AlreadyUndone(row.id, f"the entry it removed is already back in {file_name}")
            outcome = ops.add(entries, text, limit)
            outcome.entries.insert(ops.restore_at(entries, row.detail), outcome.entries.pop())
            return outcome

        extra["op"] = "add"
        return _Plan("add", op, {}, text, drift_guard=False, journal_action="undo", extra_detail=extra)
    if kind == "replace":
        old = row.before or ""
        _scan(old)

        def op(entries: list[str], limit: int) -> Outcome:
            if row.after not in entries:
                raise gone()
            if old in entries and old != row.after:  # (another writer wrote it again since)
                raise refuse(
                    f"Cannot undo row {row.id}: {file_name} holds '{ops.preview(old)}' again (entry "
                    f"{entries.index(old) + 1}), so putting it back would store it twice. Nothing was changed."
                )
            one_copy()
            return ops.replace(entries, row.after, old, limit, pin=row.after)

        return _Plan("replace", op, {}, old, journal_action="undo", extra_detail=extra)
    if kind in WHOLE_FILE and "kept" in row.detail:  # (the journal holds text, not the bytes it replaced)
        raise refuse(
            f"Cannot undo row {row.id}: {repair.kept_note(file_name, row.detail['kept'])} Nothing was changed."
        )
    if kind in WHOLE_FILE:  # a repair: the file goes back to its exact bytes before, if untouched since

        def op(entries: list[str], limit: int) -> Outcome:
            if repair.file_text(memory, row.target) != (row.after or ""):
                raise refuse(
                    f"Cannot undo row {row.id}: {file_name} changed again after that repair. Nothing was changed."
                )
            outcome = Outcome(
                read_as_hermes(row.before or ""),
                f"{file_name} is back as it was before the repair.",
                [ops.Change(kind, row.after, row.before)],
            )
            outcome.text = row.before or ""
            return outcome

        return _Plan(kind, op, {}, "", drift_guard=False, journal_action="undo", extra_detail=extra)
    if kind == "seen":
        raise refuse(
            f"Cannot undo row {row.id}: it records what {file_name} held when the workbench first saw "
            "it, so there is no earlier state to go back to. Nothing was changed."
        )
    raise refuse(f"Event {row.id} ({row.action}) cannot be undone.")
