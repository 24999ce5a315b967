"""Hermes's stored memory calls replayed on the file the journal last left: the catch-up's first step.

A look that finds MEMORY.md or USER.md changed outside knows two files, the journal's last one and
the one on disk; between them Hermes's agent may have added a note and removed it again, which no
difference between the two shows. Hermes stores each memory call and its result in state.db, so the
look applies the calls made since, in their stored order, to the journal's file, each matched to the
entry it names as Hermes's tool matches it: every call that applies is a row of its own, the agent's.
Only what the replay cannot explain (its result against the file on disk) is an outside edit.

A call is replayed once: its row keeps its key (session, message id and ``call``, its place among
the message's memory changes), and a look notes how far it read state.db (``calls_read``, the newest
message id), so a call whose result was stored by then was weighed already and is never replayed
again, whether it applied then or not. A call a look journaled as an outside edit before Hermes stored
its turn is not replayed either: the row it made is credited to it (``credit``).
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .archive_writes import REMOVE, STAMPED_AFTER_S, STAMPED_BEFORE_S, ArchiveWrite
from .ops import follows_key, preceding, succeeding
from .rebuild import SUBSYSTEM


@dataclass(frozen=True)
class Step:
    """One call as it applied: the entry it took out (``before``) and the one it wrote (``after``)."""

    call: ArchiveWrite
    before: str | None
    after: str | None
    index: int  # the entry's place: in the entries before the step for a remove, after it otherwise
    entries: tuple[str, ...]  # the entries just before the step (a remove's neighbours, for its undo)

    @property
    def action(self) -> str:
        return "add" if self.before is None else "remove" if self.after is None else "replace"


def replay(
    entries: Sequence[str], calls: Sequence[ArchiveWrite], born: Mapping[str, float] | None = None
) -> tuple[list[Step], list[str]]:
    """The steps of ``calls`` that apply to ``entries``, in turn, and the entries they leave.

    As Hermes's tool applies them: an add of an entry already there writes nothing; a replace or remove
    takes the first entry holding its ``old_text``, and fails when none does or when several different
    ones do. A call that fails here was applied to another file than this one (a hand edit came
    between): it is skipped, and the file on disk, not the replay, says what is there. So is one that
    would take an entry ``born`` says was written after the call ran (``ran_by``): a note the user added
    in the workbench after Hermes's remove, holding the text it names, was not what that remove took out.
    """
    born = born or {}
    working = list(entries)
    steps: list[Step] = []
    for call in calls:
        if call.action == "add":
            if call.text not in working:
                steps.append(Step(call, None, call.text, len(working), tuple(working)))
                working.append(call.text)
            continue
        found = [i for i, entry in enumerate(working) if call.old_text and call.old_text in entry]
        if not found or len({working[i] for i in found}) > 1:
            continue
        at, before = found[0], working[found[0]]
        if call.ran_by is not None and born.get(before, call.ran_by) > call.ran_by:
            continue
        if call.action == REMOVE:
            steps.append(Step(call, before, None, at, tuple(working)))
            del working[at]
        elif before != call.text:
            steps.append(Step(call, before, call.text, at, tuple(working)))
            working[at] = call.text
    return steps, working


def unweighed(
    conn: sqlite3.Connection, target: str, calls: Sequence[ArchiveWrite], entries: Sequence[str] = ()
) -> tuple[list[ArchiveWrite], dict[str, float], list[Credit]]:
    """Of ``calls``, those no earlier look weighed: stored after the newest look's ``calls_read``, without
    a journal row of their own (one statement, on the rows of their sessions), and not journaled as an
    outside edit (``_done_outside``); when the rows read wrote each entry they wrote (``replay``'s
    ``born``); and the outside rows to credit to the calls that made them (``_done_outside``). A message
    the workbench's own runner wrote memory from has rows with its session and message but no ``call``:
    its calls were journaled as they ran, and replaying them would make each a second time. ``entries``: the
    file the journal last left (``_done_outside``)."""
    if not calls:
        return [], {}, []
    read_to, outside, born = recent(conn, target, min(call.at for call in calls))
    fresh = [call for call in calls if read_to is None or call.stored > read_to]
    sessions = sorted({call.session_id for call in fresh})
    if not sessions:
        return fresh, born, []
    marks = ", ".join("?" * len(sessions))
    done = set(
        map(
            tuple,
            conn.execute(
                f"SELECT session_id, message_id, json_extract(detail, '$.call') FROM journal "
                f"WHERE session_id IN ({marks}) AND subsystem = ? AND target = ? AND message_id IS NOT NULL "
                "AND json_valid(detail)",
                (*sessions, SUBSYSTEM, target),
            ),
        )
    )
    fresh = [
        call
        for call in fresh
        if (call.session_id, call.message_id, call.index) not in done
        and (call.session_id, call.message_id, None) not in done
    ]
    left, credits = _done_outside(fresh, outside, born, entries)
    return left, born, credits


@dataclass(frozen=True)
class Outside:
    """An ``external`` row a look journaled: what a call stored since may have made."""

    id: int
    at: float  # when the change was made, as near as the file told (its mtime)
    action: str
    before: str | None
    after: str | None
    not_before: float | None  # found later: the change came after the journal's row of this time
    edit: str | None  # the look's key, on each of its rows when it found several changes (one outside edit)


@dataclass(frozen=True)
class Credit:
    """The outside rows the call that made them explains: they become that call's (``credit``)."""

    rows: tuple[Outside, ...]
    call: ArchiveWrite


def recent(conn: sqlite3.Connection, target: str, since: float) -> tuple[int | None, list[Outside], dict[str, float]]:
    """The rows of ``target`` that can bear on calls made from ``since`` on, read newest first back to the
    first not replayed that is dated a minute before it (a replayed row is dated by its call, the others,
    ours too, about when made; an older look read no call made since): how far the newest look among them
    read state.db (its last row's ``calls_read``: a write of ours since notes none, and a call that look
    skipped, read again, was applied to the write's file), the ``external`` rows dated since, or as long
    before as Hermes may stamp a call after its tool ran (``STAMPED_AFTER_S``; one credited to its call is
    the agent's), and when each entry they wrote was written (the newest row writing it)."""
    read_to: int | None = None
    outside: list[Outside] = []
    born: dict[str, float] = {}
    for row_id, at, actor, read, replayed, action, before, after, not_before, edit in conn.execute(
        "SELECT id, at, actor, CASE WHEN json_valid(detail) THEN json_extract(detail, '$.calls_read') END, "
        "CASE WHEN json_valid(detail) THEN json_extract(detail, '$.call') END IS NOT NULL, action, before, after, "
        "CASE WHEN json_valid(detail) THEN json_extract(detail, '$.not_before') END, "
        "CASE WHEN json_valid(detail) THEN json_extract(detail, '$.edit') END "
        "FROM journal WHERE subsystem = ? AND target = ? AND status = 'done' ORDER BY id DESC",
        (SUBSYSTEM, target),
    ):
        if read_to is None and isinstance(read, int):
            read_to = read
        if not isinstance(at, (int, float)) or (not replayed and at < since - max(STAMPED_BEFORE_S, STAMPED_AFTER_S)):
            break
        if actor == "external" and at >= since - STAMPED_AFTER_S:
            bound = not_before if isinstance(not_before, (int, float)) else None
            outside.append(Outside(row_id, at, action, before, after, bound, edit if isinstance(edit, str) else None))
        if isinstance(after, str):
            born.setdefault(after, at)
    return read_to, outside, born


def _done_outside(
    calls: Sequence[ArchiveWrite], outside: list[Outside], born: Mapping[str, float], entries: Sequence[str]
) -> tuple[list[ArchiveWrite], list[Credit]]:
    """Of ``calls``, those whose work none of the ``outside`` rows journaled since the call was made: a look
    that came before Hermes stored its turn (it stores a turn once it ends) journaled what the call did as
    an outside edit, and the call, stored since, must not do it again. A row answers one call: the entry
    it wrote is the one an add or replace wrote, the entry it took out holds a remove's ``old_text``, or a
    replace's whose text was an entry already (``_kept``). The rows that are exactly the call's change, made
    while the call ran, are credited to it (``_made_by``). A row dated before the call (``_stamped_after``)
    answers it only when it is the one such row left."""
    rows = list(outside)
    left, credits = [], []
    for call in calls:
        doing = [row for row in reversed(rows) if _did(call, row, _kept(call, row, born, entries))]
        found = next((row for row in doing if row.at >= call.at), None) or _stamped_after(call, doing)
        if found is None:
            left.append(call)
            continue
        made = _made_by(call, found, rows)
        for row in {found, *made}:
            rows.remove(row)
        if made:
            credits.append(Credit(made, call))
    return left, credits


def _stamped_after(call: ArchiveWrite, doing: Sequence[Outside]) -> Outside | None:
    """The row among ``doing`` (the rows left that did ``call``'s work, oldest first) that a call Hermes
    stamped after its tool ran made: Hermes 0.19.0 stores a call with its result, once its tool wrote the
    file, so a look in between dated the row before the call. Only when it is the one such row dated within
    ``STAMPED_AFTER_S`` before the call: with two (a person's identical change and Hermes's, a minute
    apart), which was Hermes's is a guess, and a person's change must never be the agent's."""
    near = [row for row in doing if call.at - STAMPED_AFTER_S <= row.at < call.at]
    return near[0] if len(near) == 1 else None


def _did(call: ArchiveWrite, row: Outside, kept: bool) -> bool:
    """Whether ``row`` did ``call``'s work; ``kept``: the call is a replace whose text was an entry already,
    so that all it did was take out the entry holding its ``old_text`` (``_kept``)."""
    if call.action == REMOVE or kept:
        return (
            row.after is None and row.before is not None and call.old_text is not None and call.old_text in row.before
        )
    return row.after == call.text


def _kept(call: ArchiveWrite, row: Outside, born: Mapping[str, float], entries: Sequence[str]) -> bool:
    """Whether ``call`` is a replace whose text was an entry before ``row`` and still is: Hermes's replace into
    an entry already there leaves the file holding it twice, read as once (Hermes too reads it so), so a
    look finds only the entry holding its ``old_text`` gone. Told from a person's removal of the text the
    replace wrote (after it, before that look: the same row) by the file the journal left (``entries``)
    holding the text, written by no row since ``row`` (``born``: when the newest row writing it was made)."""
    return call.action == "replace" and call.text in entries and born.get(call.text, -math.inf) < row.at


def _made_by(call: ArchiveWrite, row: Outside, rows: Sequence[Outside]) -> tuple[Outside, ...]:
    """The rows that are ``call``'s change and no other, ``row`` (which did its work, dated no earlier than
    the call) among them, oldest first; none when they are not. Made before the call's result was stored
    (``ran_by``; for a row found later, the look before it came first): a person's edit made after Hermes's
    call is never credited to it. The same action on the same entry (a replace's ``old_text`` in the entry
    it took out), or a replace the look found as a remove of the entry holding its ``old_text`` and the
    add of its text (``entry_changes``: the last entry rewritten into an unlike one, or beside other
    changes), both of that look's outside edit, or found as that remove alone when its text was an entry
    already (``_kept``: it is then the change). A remove of the entry holding its ``old_text`` is the call's
    only when it is the one such remove of its look: with two (a person took out the other before Hermes's
    remove ran, which then matched one entry alone), which was Hermes's is a guess, and none is credited."""
    made_from = row.at if row.not_before is None else row.not_before
    if call.ran_by is not None and made_from > call.ran_by:
        return ()
    if row.action == call.action == "replace":
        return (row,) if call.old_text and call.old_text in (row.before or "") else ()
    if row.action == call.action == "add":
        return (row,)
    removed = _removes_of(call, row, rows)
    if len(removed) != 1:
        return ()
    if row.action in (call.action, REMOVE):  # (a replace found by its remove alone: its text was kept, ``_kept``)
        return (row,)
    return (removed[0], row) if (call.action, row.action) == ("replace", "add") else ()


def _removes_of(call: ArchiveWrite, row: Outside, rows: Sequence[Outside]) -> list[Outside]:
    """Of ``rows``, the removes of an entry holding ``call``'s ``old_text`` that ``row``'s look found: those
    of its outside edit, or ``row`` itself when it is that look's one change."""
    if row.edit is None:
        return [row] if row.action == REMOVE else []
    return [
        other
        for other in rows
        if other.edit == row.edit and other.action == REMOVE and call.old_text and call.old_text in (other.before or "")
    ]


def rows_of(steps: Sequence[Step], now: float) -> list[dict[str, Any]]:
    """The journal rows of replayed steps: each the agent's, in its call's session and message, dated by
    its call (one found more than a second later says when, as an outside edit does). Each step is a row of
    its own, a batch's too: the Timeline lists and reverts each alone (its outside groups are ``external``
    rows'), and they share their message."""
    rows = []
    for step in steps:
        call = step.call
        detail: dict[str, Any] = {"index": step.index, "call": call.index}
        if step.after is None:  # where an undo puts it back
            detail["follows"] = [follows_key(e) for e in preceding(list(step.entries), step.index)]
            detail["precedes"] = [follows_key(e) for e in succeeding(list(step.entries), step.index)]
        at = min(call.at, now)
        if at < now - 1:
            detail["seen_at"] = now
        rows.append(
            {
                "action": step.action,
                "before": step.before,
                "after": step.after,
                "detail": detail,
                "actor": "agent",
                "session_id": call.session_id,
                "message_id": call.message_id,
                "at": at,
            }
        )
    return rows
