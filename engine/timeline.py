"""The timeline: every change to what the agent knows, from the journal, grouped and revertable.

Rows are journal rows of the knowledge subsystems (memory, skills, approvals, curator,
providers) that were applied, newest first, paged by id so a history of any length
opens at once. Rows that belong together share a ``group``: one background review
(``review:<session>:<message>``), one Curator pass (``curator:<run>``) and one
consolidation with its staging and approval (``consolidation:<pending id>``).

``revert`` undoes a row or a whole group through the owning store's own guards
(memory undo, ledger rollback, pin/unpin; a SKILL.md edited or removed outside gets its text before back,
through the same plan and write as a skill edit or create of ours), newest first; what changed since is refused
with the store's reason and everything else still goes. Each revert is itself a journal
row, so it shows on the timeline and can be reverted in turn. ``preview`` lists exactly
what a revert would change, and what it would refuse, without writing.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import math
import re
import secrets
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from functools import cache, lru_cache, wraps
from itertools import islice
from typing import TYPE_CHECKING, Any, TypeVar

from . import lock_waits
from .approvals.labels import detail_summary
from .approvals.outside import cited_rows, citing_approvals
from .approvals.records import is_pending_id, proposed
from .approvals.sources import staged_at, staged_in_sessions
from .archive.query import HALF_FORMS, fold_widths, like_escape
from .clock import days, shown_time, stamped
from .counts import counted
from .curator.ledger import sha256
from .diffs import line_diff
from .errors import WorkbenchError
from .journal import ACTORS, LOOK_AT_NOTHING, JournalEntry, _row, tagged
from .memory.credit import credited_note
from .memory.history import (
    HERMES_AGENT,
    HERMES_SLACK_S,
    AlreadyUndone,
    external_rows_of,
    first_look,
    hermes_call,
    shown_actor,
    undo_problem,
)
from .skills.archive_calls import TOOL as SKILL_TOOL
from .skills.archive_calls import hermes_skill_call
from .skills.outside import ARCHIVED, CREATED, EDITED, HERMES_PASS, RECORD_ONLY, REMOVED, STATE_CHANGES
from .skills.threats import flagged, warning_message
from .skills.validation import SkillError
from .textsafety import apart, cut, flat_line, inline, quoted, visible
from .textsafety import cells as cells_of
from .tools import ToolContext
from .values import clock_time, half_width, iso_time, number_value, row_id, text_value, typed_number

if TYPE_CHECKING:
    from .skills.discovery import Found
    from .skills.library import SkillLibrary

SUBSYSTEMS = ("memory", "skills", "approvals", "curator", "providers", "sessions")
# Of the archive's changes, those that change what the agent can recall (session_search, lists):
# a title, a reopened session or a new system prompt does not.
SESSION_ACTIONS = ("archive", "unarchive", "delete", "prune")
FILES = {"memory": "MEMORY", "user": "USER"}
MAX_FILTER = 1000  # characters a filter may hold: no id, name or phrase is near that long
# outside changes of several rows at once are one group (of skills: the lifecycle changes one look found, as a
# Hermes curator pass makes them, ``outside._LIFECYCLE``)
OUTSIDE_GROUPED = ("memory", "sessions", "skills")
_RELATIVE = re.compile(r"^\s*([^\s+-]+?)\s*([smhdw])\s*$")  # the number: ``typed_number``, unsigned
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_RECORDS = {
    ("approvals", "stage"),
    ("approvals", "approve"),
    ("approvals", "approve_failed"),
    ("approvals", "restore"),
    ("approvals", "close"),
    ("curator", "run"),
    ("curator", "pause"),
    ("curator", "resume"),
    *(("skills", action) for action in RECORD_ONLY),
}


# A Curator's stale mark or reactivation is its reading of a skill's activity, taken afresh on every pass.
_READINGS = {("skills", "mark_stale"), ("skills", "reactivate")}
_READING = (
    "the Curator's reading of the skill's activity, taken afresh on every pass: put back, it would last only "
    "until the next one (use the skill, or pin it, to keep it active)"
)

_INDEXED: set = set()  # workbench.db files this process has given the actor index

# A group's parts in words ("2 memory entries added, 1 proposal staged"): what each subsystem's
# rows are about (one, many), and each action in the past tense.
_NOUNS = {
    "memory": ("memory entry", "memory entries"),
    "skills": ("skill", "skills"),
    "approvals": ("proposal", "proposals"),
    "providers": ("fact", "facts"),
    "sessions": ("session", "sessions"),
}
_FILE_NOUNS = ("skill file", "skill files")
_PAST = {
    "add": "added",
    "remove": "removed",
    "replace": "replaced",
    "undo": "undone",
    "stage": "staged",
    "approve": "approved",
    "approve_failed": "failed to apply",
    "reject": "rejected",
    "consolidate": "consolidated",
    "rollback": "rolled back",
    "edit": "rewritten",
    "write_file": "written",
    "remove_file": "removed",
    "external": "changed outside",
    "create": "created",
    "patch": "patched",
    "delete": "deleted",
    "archive": "archived",
    "restore": "restored",
    "close": "closed",
    "unarchive": "unarchived",
    "prune": "pruned",
    "purge": "purged",
    "pin": "pinned",
    "unpin": "unpinned",
    "mark_stale": "marked stale",
    "reactivate": "reactivated",
}
# A skill row's verb in its summary ("wrote a file in skill 'x'"): the past tense, worded for a skill.
_SKILL_VERBS = {
    **_PAST,
    "edit": "rewrote",
    "write_file": "wrote a file in",
    "remove_file": "removed a file from",
    "consolidate_refused": "refused a consolidation plan for",
}


_OUTSIDE = "changed outside the workbench, which saved nothing of it to put back"
# what a person runs instead, for an outside change a command of ours takes back (its ``change``)
_OUTSIDE_WAYS = {
    "archived": ("archived", "restore", "brings it back from the archive", "r"),
    "pinned": ("pinned", "unpin", "unpins it", "p"),
    "unpinned": ("unpinned", "pin", "pins it again", "p"),
}


def _outside_skill_refusal(entry: JournalEntry, skills: SkillLibrary) -> str:
    """Why an outside skill change is not reverted, and, for a creation, an archive or a pin, the command
    that takes it back (a skill made outside is archived: the workbench deletes no skill)."""
    if not entry.detail.get("file") and entry.detail.get("change") == CREATED:
        # the very skill created, by the folder the row names (its SKILL.md): another active skill of that
        # name is not it, and makes the bare name ambiguous (the command then names the folder)
        path = str(entry.detail.get("path") or "")
        folder = path.removesuffix("/SKILL.md") if path.endswith("/SKILL.md") else None
        try:
            found = skills.find(entry.target) if folder is None else skills.at(folder, entry.target)
        except WorkbenchError:
            where = f" in skills/{folder}" if folder else ""
            return f"{_OUTSIDE}; it is no active skill{where} now, so nothing is left to take out of use"
        return (
            f"created outside the workbench, which saved nothing of it to put back; to take it out of use, "
            f"archive it: `{skills.command('archive', found)}` (or a in Skills; restorable)"
        )
    way = None if entry.detail.get("file") else _OUTSIDE_WAYS.get(str(entry.detail.get("change")))
    if way is None:
        return _OUTSIDE
    done, command, does, key = way
    return (
        f"{done} outside the workbench, which saved nothing of it to put back; "
        f"`{skills.command(command, entry.target)}` {does} (or {key} in Skills)"
    )


class TimelineError(WorkbenchError):
    """A bad row or group reference, or a filter that cannot be read."""


# how a person asks for a removed skill's SKILL.md alone, in either skin
SKILL_MD_ONLY = "`workbench revert {row} --skill-md-only`, or r on the Timeline, which asks, brings it back alone"


def lost_files(lost: list[str] | None) -> str:
    """What a SKILL.md brought back alone leaves out, in words."""
    if lost is None:
        return "which support files it had is not known, and none comes back"
    return f"{', '.join(visible(f) for f in lost)} {'is' if len(lost) == 1 else 'are'} lost (no copy was kept)"


def _offered(plan: dict[str, Any]) -> dict[str, Any]:
    """What a refused row's plan offers instead (``skill_md_only``: its SKILL.md alone), for its refusal."""
    return {"skill_md_only": plan["skill_md_only"]} if "skill_md_only" in plan else {}


class SupportFilesLost(TimelineError):
    """A skill removed outside with support files no copy was kept of: only its SKILL.md can come back,
    which a revert does when asked to (``skill_md_only``). ``lost``: those files (None: not known)."""

    def __init__(self, message: str, lost: list[str] | None):
        super().__init__(message, lost=lost)
        self.lost = lost


class MalformedReference(TimelineError):
    """A reference that names no row or group by its form (the CLI's usage error, not a missing row)."""


@dataclass
class _Lookups:
    """What one listing's sources share: the staging call of each Hermes proposal, and which outside
    approval cites each outside memory edit (read once, when first wanted)."""

    staged: dict[tuple[Any, str], Source | None] = field(default_factory=dict)
    citing: dict[int, int] | None = None
    approvals: dict[int, JournalEntry | None] = field(default_factory=dict)  # those rows, by id


WHY_CHARS = 500  # of a row's why, on one line (it may quote a record's text)
FOUND_LATE_S = 1.0  # an outside change seen this long after it was made is marked as found later (``found_at``)
# the rows journaled before such a row that its mark looks at: it is marked only when one of them is stamped after
# it, so it sits above a newer-stamped row (the rows shown near it; a page's worth)
OVERTAKES_WITHIN = 200
SUMMARY_CHARS = 55  # characters of each version a rewrite's summary shows, around where they differ
MIN_APART_CHARS = 12  # fewest a row fitted to a narrow list keeps of each (``Row.fitted``)


@dataclass(frozen=True)
class Row:
    id: int
    group: str | None
    at: float
    actor: str
    subsystem: str
    action: str
    target: str
    summary: str
    session_id: str | None
    message_id: int | None
    source: Source | None = None  # an outside memory edit's Hermes call (``Timeline.with_sources``)
    revert_of: str | None = None  # the group a ``revert:`` group's row helped revert
    reverted_by: int | None = None  # the row that undid this one (unless it was undone in turn)
    why: str | None = None  # how a decision made outside the workbench was told, or why an approval was refused
    # an outside skill row's change (its action is ``external`` whatever happened, as the journal keeps it):
    # created, edited, removed, archived, restored, pinned or unpinned; and for a support file, its path in the skill
    change: str | None = None
    file: str | None = None
    # how the workbench knows of a change it did not make: the look that found it (``_found``; the
    # ``why`` both skins' detail gives such a row, with the Hermes call behind it when known: ``why_line``)
    found: str | None = None
    # when a look found an outside change made before it (its ``at``, the file's time): rows are listed by id,
    # in the order the workbench learned of them, so such a row sits above older-stamped rows (``found_later``)
    found_at: float | None = None
    overtakes: bool = False  # it is listed above a row stamped after it (``Timeline._marked``): the mark says why
    hermes_pass: bool = False  # an outside skill row credited to a pass of Hermes's own curator
    versions: tuple[str, str] | None = None  # a memory rewrite's texts, before and after (``fitted`` cuts them)

    @property
    def when(self) -> str:
        return iso_time(self.at) or "(no valid time)"

    @property
    def found_later(self) -> str | None:
        """Both skins' mark of a row listed where it was found above a row stamped after it, not where its time
        would put it (one whose place its time would give too needs no mark: every catch-up row had one)."""
        if self.found_at is None or not self.overtakes:
            return None
        made = "staged" if (self.subsystem, self.action) == ("approvals", "stage") else "made"
        return f"found {self._found_time('%H:%M:%S', '%Y-%m-%d %H:%M:%S')}, {made} before"

    @property
    def found_later_short(self) -> str | None:
        """``found_later`` where a narrow list has no room for it whole: when it was found, to the minute."""
        return None if self.found_later is None else f"found {self._found_time('%H:%M', '%m-%d %H:%M')}"

    def _found_time(self, same_day: str, other_day: str) -> str:
        """When the row was found, with its date only when that is not the day of its time."""
        day = shown_time(self.found_at, "%Y-%m-%d") == shown_time(self.at, "%Y-%m-%d")
        return shown_time(self.found_at, same_day if day else other_day) or "?"

    @property
    def by(self) -> str:
        """Who the row is shown as made by (both skins' actor column, ``by`` in JSON): an outside memory
        edit or skill change whose Hermes call was found (``source``) is the agent's, as ``memory history``
        and the entry's origin name it (``memory.history.shown_actor``); else the journaled actor."""
        called = self.source if self.source is not None and self.source.via == "archive" else None
        return shown_actor(self.actor, called if _hermes_call_may_be_behind(self) else None)

    @property
    def session(self) -> str | None:
        """The session the change came from: the journal's, else (an outside memory edit) the one its
        Hermes call was found in."""
        return self.session_id or (self.source.session_id if self.source is not None else None)

    def fitted(self, cells: int) -> str:
        """The summary in ``cells`` where it can be: cut at its end, a rewrite's lost what the entry became
        (``MEMORY 'old text' → '…``), so its two versions are cut around where they differ until it fits."""
        if self.versions is None or cells_of(self.summary) <= cells:
            return self.summary
        return _fitted(self.summary, self.versions, cells)

    def to_dict(self) -> dict[str, Any]:
        shown = {
            key: value for key, value in asdict(self).items() if key not in ("found", "overtakes", "versions")
        }  # (``why_line``
        # says the one, ``found_at`` always the other's time)
        found_at = iso_time(self.found_at) if self.found_at is not None else None
        return {**shown, "at": self.when, "found_at": found_at, "session": self.session, "by": self.by}


@dataclass(frozen=True)
class Source:
    """Where a row's change came from (``Timeline.source``)."""

    session_id: str
    message_id: int | None
    via: str  # "journal": the row names it; "archive": the Hermes call that wrote its entry; "staged": staged it
    call: str | None = None  # (via "archive") the call's action: a replace Hermes made of the last entry
    # in a file is journaled as a remove and an add (the same on disk), and both rows name it
    tool: str = "memory"  # (via "archive") the tool called: memory, or skill_manage for a skill change

    @classmethod
    def named_by(cls, row: Row) -> Source | None:
        """The message a row names itself (no lookup: cheap enough for the UI thread)."""
        return cls(row.session_id, row.message_id, "journal") if row.session_id else None

    def describe(self) -> str:
        where = f"session {inline(self.session_id)}" + (
            f" · message {self.message_id}" if self.message_id is not None else ""
        )
        if self.via == "archive":
            return f"{where} (Hermes's {self.tool} {self.call or 'tool'} call, from the archive)"
        return f"{where} (the Hermes tool call that staged it, from the archive)" if self.via == "staged" else where


def _short(text: str | None, width: int = 120) -> str:
    """An entry's text on one line (its line breaks as ⏎, ``flat_line``), cut to ``width``."""
    return cut(flat_line(text), width)


def _quoted(text: str | None, width: int = 120) -> str:
    """An entry's text in a summary: on one line, cut, its control characters shown as symbols
    (as every screen shows them, never as Python escapes), in quotes it does not hold."""
    shown = visible(_short(text, width))
    quote = '"' if "'" in shown and '"' not in shown else "'"
    return f"{quote}{shown}{quote}"


def _apart(old: str | None, new: str | None, width: int) -> tuple[str, str]:
    """Two versions of an entry, quoted, where they differ (``textsafety.apart``), on one line as ``_short``
    puts them (a change to a line break still shows)."""
    old_shown, new_shown = apart(old, new, width)
    return _quoted(old_shown, width), _quoted(new_shown, width)


@lru_cache(maxsize=1024)
def _fitted(summary: str, versions: tuple[str, str], cells: int) -> str:
    """``Row.fitted``: the most of each version that fits (found by halving: a list redraws every row), down
    to ``MIN_APART_CHARS``; where even that does not fit, the summary as it is, cut at its end as any."""
    old, new = versions
    wide = inline(" → ".join(_apart(old, new, SUMMARY_CHARS)))
    if wide not in summary:  # (a summary of another form)
        return summary

    def at(chars: int) -> str:
        return summary.replace(wide, inline(" → ".join(_apart(old, new, chars))), 1)

    low, high = MIN_APART_CHARS, SUMMARY_CHARS - 1  # (the widest that fits)
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if cells_of(at(middle)) <= cells else (low, middle - 1)
    fitted = at(low)
    return fitted if cells_of(fitted) <= cells else summary  # (none fits: two stubs would say less)


def _versions(entry: JournalEntry) -> tuple[str, str] | None:
    """A memory rewrite's two texts (a replace, or an undo that replaced), which its summary shows both of."""
    rewrite = entry.action == "replace" or (entry.action == "undo" and entry.detail.get("op") == "replace")
    if entry.subsystem != "memory" or not rewrite or entry.before is None or entry.after is None:
        return None
    return entry.before, entry.after


def summarize(entry: JournalEntry) -> str:
    """What one row did, in one line (an approved proposal's row names its proposer, a revert the row
    it took back)."""
    return _proposed(_reverting(entry, _summary(entry)), entry.detail)


def _reverting(entry: JournalEntry, did: str) -> str:
    """A row that took another back, whatever its kind (a revert, memory's undo, a rollback, a pin set
    back, a session unarchived, a proposal restored): ``revert of row N:`` then what it did, as a row
    of its kind reads; any other row as it reads. Every such row names the one it took back
    (``undo_of``), or, for a memory write Hermes made that has no row, its call."""
    detail = entry.detail
    undone = detail.get("undo_of")
    if type(undone) is int:
        return f"revert of row {undone}: {did}"
    session, message = detail.get("undo_of_session"), detail.get("undo_of_message")
    if isinstance(session, str):  # a Hermes write known from the archive alone: no row to name
        return f"revert of the Hermes call in session {inline(session)} · message {message}: {did}"
    return f"revert: {did}" if (entry.subsystem, entry.action) == ("memory", "undo") else did


def _proposed(said: str, detail: dict[str, Any]) -> str:
    """``said``, naming the proposer a row's (or its approval's) detail gives."""
    proposer = detail.get("proposed_by")
    if not isinstance(proposer, str) or not proposer:
        return said
    return f"{said} ({proposed(visible(proposer), detail.get('edited') is True)})"


def _summary(entry: JournalEntry) -> str:
    detail, action, target = entry.detail, entry.action, entry.target
    if entry.subsystem == "memory":
        where = FILES.get(target, target)
        op = detail.get("op") if action == "undo" else action
        if action == "undo":  # what it did to the file (``_reverting`` names what it took back)
            return _summary(replace(entry, action=op)) if op in ("add", "remove", "replace") else f"{where} {op}"
        if action == "add":
            return f"{where} + {_quoted(entry.after)}"
        if action == "remove":
            return f"{where} − {_quoted(entry.before)}"
        if action == "replace":
            before, after = _apart(entry.before, entry.after, SUMMARY_CHARS)
            return f"{where} {before} → {after}"
        if action == "external":
            return f"{where} edited outside the workbench"
        if action == "repair":
            return f"{where} repaired: {detail.get('label', 'the whole file rewritten')}"
        if action == "seen":
            return f"{where} {first_look(entry)}"
        return f"{where} {action}"
    if entry.subsystem == "skills":
        if action == "external":
            inside = detail.get("file")  # a support file's row: the skill itself stayed
            what = f"file '{inside}' of skill '{target}'" if isinstance(inside, str) else f"skill '{target}'"
            files = detail.get("files")  # (a removal's: the support files the skill had, gone or not)
            beside = f"; it had {', '.join(map(str, files))}" if isinstance(files, list) and files else ""
            by = "by Hermes's curator" if detail.get(HERMES_PASS) else "outside the workbench"
            return f"{what} {detail.get('change', 'changed')} {by} ({detail.get('path', '')}{beside})"
        if action == "consolidate":
            return f"consolidated {', '.join(detail.get('absorbed') or [])} into skill '{target}'"
        if action == "rollback":
            return (
                f"rolled back {detail.get('rolled_back_action', 'a change')} of skill '{target}' "
                f"(ledger {detail.get('rolled_back')})"
            )
        # (an earlier version journaled a pin of a skill pinned already)
        unchanged = (
            " (already so: nothing changed)" if action in ("pin", "unpin") and entry.before == entry.after else ""
        )
        return f"{_SKILL_VERBS.get(action, action)} skill '{target}'{unchanged}"
    if entry.subsystem == "approvals":
        if action == "reject" and isinstance(detail.get("unusable"), str):  # (a file no record could be read from)
            return f"dropped unreadable {detail.get('subsystem', '')} record {target}: {_short(detail['unusable'], 90)}"
        verb = {
            "stage": "staged",
            "approve": "approved",
            "approve_failed": "approval failed:",
            "reject": "rejected",
            "restore": "restored",
            "close": "closed",
        }
        what = detail_summary(detail) or detail.get("summary") or entry.before or entry.after or ""  # what it does
        where = (" in Hermes" if action == "stage" else " outside the workbench") if detail.get("outside") else ""
        unchanged = " (already so: nothing changed)" if action == "approve" and detail.get("changed") is False else ""
        edited = " (edited before approval)" if action == "approve" and isinstance(detail.get("edited"), str) else ""
        return (
            f"{verb.get(action, action)} {detail.get('subsystem', '')} proposal {target}{where}: "
            f"{flat_line(what, 90)}{edited}{unchanged}"  # (a summary on one line as Approvals shows it)
        )
    if entry.subsystem == "providers":
        fact = f"{target} fact {detail.get('fact_id')}"
        if action == "fact_add":
            return f"{fact} + {_quoted(entry.after)}"
        if action == "fact_forget":
            return f"{fact} − {_quoted(entry.before)}"
        return f"{fact} {_quoted(entry.before, 55)} → {_quoted(entry.after, 55)}"
    if entry.subsystem == "sessions":
        return _session_summary(entry)
    if entry.subsystem == "curator":
        if action == "run":
            return f"Curator pass: {(entry.after or 'no changes').removeprefix('auto: ')}"  # (Hermes's form)
        return f"Curator {'paused' if action == 'pause' else 'resumed' if action == 'resume' else action}"
    return f"{entry.subsystem} {action} {target}"


def _session_summary(entry: JournalEntry) -> str:
    """An archive change that changes what can be recalled, in words; the session by its title (or
    its first message) where the row has one, as the tree shows it (the session column has its id)."""
    detail, action = entry.detail, entry.action
    name = _session_name(entry)
    if action in ("archive", "unarchive"):
        chain = detail.get("sessions")
        more = len(chain) - 1 if isinstance(chain, list) else 0
        rest = f" with {more} more of its conversation" if more > 0 else ""
        if action == "archive":
            return f"archived session {name}{rest}: hidden from lists and session_search"
        return f"unarchived session {name}{rest}: listed and searchable again"
    if action == "delete":
        count = detail.get("message_count")
        messages = f", {count} message{'s' * (count != 1)}" if type(count) is int else ""
        return f"deleted session {name}{messages}"
    if action == "prune":
        count, days_old = detail.get("count"), detail.get("older_than_days")
        number = isinstance(days_old, (int, float)) and not isinstance(days_old, bool)
        older = days(days_old) if number and isinstance(days_old, (int, float)) else f"{days_old} days"
        what = f"{count} ended session{'s' * (count != 1)}" if type(count) is int else "the ended sessions"
        return f"pruned {what} older than {older}"
    if action == "title":
        return f"renamed session {entry.target}: {_quoted(entry.before, 55)} → {_quoted(entry.after, 55)}"
    return f"sessions {action} {entry.target}"


def _named_sessions(table: str) -> str:
    """SQL for the sessions a ``sessions`` row of ``table`` (an alias of journal) names in its detail,
    as a ``json_each`` source: those an archive change flipped, or those a delete or prune removed."""
    return (
        f"json_each(CASE WHEN json_valid({table}.detail) THEN {table}.detail ELSE '{{}}' END, "
        f"CASE WHEN {table}.action IN ('archive', 'unarchive') THEN '$.sessions' ELSE '$.deleted' END)"
    )


def _flipped(entry: JournalEntry) -> list[str]:
    """The sessions an archive or unarchive row flipped (its target alone in a row without them)."""
    chain = entry.detail.get("sessions")
    return [sid for sid in chain if isinstance(sid, str)] if isinstance(chain, list) else [entry.target]


def _session_name(entry: JournalEntry) -> str:
    title = entry.detail.get("title") or (entry.before if entry.action == "delete" else None)
    preview = entry.detail.get("preview")
    if isinstance(title, str) and title:
        return _quoted(title, 60)
    if isinstance(preview, str) and preview:
        return f"“{visible(_short(preview, 60))}”"
    return entry.target


def group_of(entry: JournalEntry) -> str | None:
    detail = entry.detail
    if isinstance(detail.get("revert"), str):  # the rows one revert of a group wrote
        return f"revert:{detail['revert']}"
    if isinstance(detail.get("bulk"), str):  # the rows one approve all or reject all wrote
        return detail["bulk"]
    if entry.subsystem == "approvals" and detail.get("action") == "consolidate":
        return f"consolidation:{entry.target}"
    if entry.subsystem == "skills" and entry.action in ("consolidate", "consolidate_refused"):
        key = detail.get("pending_id") or detail.get("ledger_id") or entry.id
        return f"consolidation:{key}"
    if detail.get("run") and entry.actor == "curator":
        return f"curator:{detail['run']}"
    if entry.actor == "review" and entry.session_id:
        return f"review:{entry.session_id}:{entry.message_id if entry.message_id is not None else '-'}"
    if entry.actor == "external" and entry.subsystem in OUTSIDE_GROUPED and isinstance(detail.get("edit"), str):
        return f"outside:{detail['edit']}"
    return None


def _listed(*, indexed: bool) -> tuple[list[str], list[Any]]:
    """The conditions every listed row meets, and their arguments (``indexed``: let the subsystem
    index serve them, when a subsystem filter narrows the rows)."""
    where = [
        "status = 'done'",
        f"{'' if indexed else '+'}subsystem IN ({', '.join('?' * len(SUBSYSTEMS))})",
        f"NOT ({LOOK_AT_NOTHING})",
        f"(subsystem != 'sessions' OR action IN ({', '.join('?' * len(SESSION_ACTIONS))}))",
    ]
    return where, [*SUBSYSTEMS, *SESSION_ACTIONS]


def detail_lines(row: Row, source: Source | None = None, *, opens: str = "") -> list[str]:
    """One row as both skins detail it (the Timeline screen's detail pane, ``workbench timeline show``):
    its id, time (the zone named), actor, what it did and its target; the summary; the row that undid
    it; ``why`` (how a decision made outside was told); where it came from (``source``: the message
    the row names, or the Hermes call a lookup found, ``Timeline.source``; by default the one the row
    carries or names), with ``opens`` after it when that is a Hermes call found in the archive (the
    TUI's "g opens it"); and its group."""
    source = source or row.source or Source.named_by(row)
    lines = [
        f"row {row.id} · {stamped(row.at, seconds=True) or row.when} · {replace(row, source=source).by} · "
        f"{row.subsystem} {row.action}"
        + (f" ({inline(row.change)})" if row.change else "")
        + f" · target {inline(row.target)}",  # (a folder name may hold a line break)
        row.summary,
    ]
    if row.reverted_by is not None:
        lines.append(f"↶ reverted by row {row.reverted_by}")
    why = why_line(row, source)
    if why:
        lines.append(f"why: {why}")
    if source is not None:
        lines.append(source.describe() + (opens if source.via == "archive" else ""))
    if row.group:
        lines.append(f"group {row.group}")
    return lines


def why_line(row: Row, source: Source | None = None) -> str | None:
    """A row's ``why`` as both skins' detail gives it: how a decision made outside was told, or why an
    approval was refused (``Row.why``); else, for a change the workbench found rather than made, the look
    that found it (``Row.found``) and, for an outside memory write, the Hermes call behind it when one
    is known (``source``, by default the one the row carries). Only what the journal and state.db say."""
    if row.why:
        return row.why
    if row.found is None:
        return None
    source = source or row.source
    if not row.session_id and _outside_skill(row) and source is not None:
        return f"{row.found}; Hermes's {source.tool} {source.call} call in {_where(source)} made it"
    if row.session_id or not _hermes_memory_write(row):
        return row.found
    if source is None:
        return f"{row.found}; the file does not say who made it"
    if source.via == "archive":
        did = "took it out" if row.action == "remove" else "wrote it"
        return f"{row.found}; Hermes's memory {source.call or 'tool'} call in {_where(source)} {did}"
    # (no call wrote it: the approval outside the workbench that cites it, ``Timeline.source``)
    return f"{row.found}; it is the change of a proposal approved outside the workbench, staged in {_where(source)}"


def _where(source: Source) -> str:
    return f"session {inline(source.session_id)}" + (
        f" · message {source.message_id}" if source.message_id is not None else ""
    )


def _hermes_call_may_be_behind(row: Row) -> bool:
    """An outside row a Hermes tool call may have made: a memory write, or a skill change (``skill_manage``)."""
    return _hermes_memory_write(row) or (_outside_skill(row) and not row.session_id)


def _hermes_memory_write(row: Row) -> bool:
    """An outside memory row of an entry added, replaced or removed: a Hermes call may be behind it."""
    return row.actor == "external" and row.subsystem == "memory" and row.action in ("add", "replace", "remove")


def _one_replace(row: Row) -> tuple[str, str, int | None] | None:
    """For one half of a replace Hermes made that the look found as a removed and an added entry (the
    texts too unlike to pair on disk: ``format.entry_changes``), the call both halves name; else None. Only
    the call tells: on disk, the last entry removed beside an append looks the same."""
    source = row.source
    if row.action not in ("add", "remove") or not _hermes_memory_write(row) or source is None:
        return None
    if source.via != "archive" or source.call != "replace":
        return None
    return row.target, source.session_id, source.message_id


MIXED = "mixed"  # a group header's actor when its rows have more than one


def group_head(rows: list[Row]) -> tuple[str, str | None]:
    """A group header's actor and session: those every row of it shares, else ``MIXED`` and none. The
    newest row's stood for all: Hermes's add found beside a remove no call explains read as all the
    agent's, in its session."""
    actors, sessions = {row.by for row in rows}, {row.session for row in rows}
    return (actors.pop() if len(actors) == 1 else MIXED), (sessions.pop() if len(sessions) == 1 else None)


def describe_group(rows: list[Row], total: int | None = None) -> str:
    """What a group did, in one line; ``total``: how many rows the group holds when a filter shows fewer."""
    group = rows[0].group or ""
    kind = group.partition(":")[0]
    counts: dict[tuple[str, str], int] = {}
    for row in rows:
        # an outside skill row by what happened ("2 skills marked stale outside"), not "changed outside"
        action = (
            f"{row.change}{'' if row.hermes_pass else ' outside'}" if _outside_skill(row) and row.change else row.action
        )
        counts[row.subsystem, action] = counts.get((row.subsystem, action), 0) + 1
    # a remove and an add one Hermes replace call made are one replace, said as one of ours is
    halves: dict[tuple[str, str, int | None], list[str]] = {}
    for row in rows:
        if (call := _one_replace(row)) is not None:
            halves.setdefault(call, []).append(row.action)
    for actions in halves.values():
        paired = min(actions.count("add"), actions.count("remove"))
        for action, change in (("add", -paired), ("remove", -paired), ("replace", paired)):
            counts["memory", action] = counts.get(("memory", action), 0) + change
    counts = {key: n for key, n in counts.items() if n}
    parts = ", ".join(_part(subsystem, action, n) for (subsystem, action), n in sorted(counts.items()))
    if kind == "outside":
        title = f"outside edit of {FILES[rows[0].target]}" if rows[0].target in FILES else "outside the workbench"
        if all(row.hermes_pass for row in rows):
            title = "Hermes's curator pass"
        sessions = {row.source.session_id for row in rows if row.by != row.actor and row.source is not None}
        if len(sessions) == 1 and all(row.by != row.actor for row in rows):  # every row Hermes's, in one session
            title = f"Hermes's edit of {FILES.get(rows[0].target, rows[0].target)} in session {inline(sessions.pop())}"
    elif kind == "revert" and rows[0].revert_of:
        title = f"revert of {flat_line(rows[0].revert_of, 60)}"
    else:
        title = {
            "review": "background review",
            "curator": "Curator pass",
            "revert": "revert of a group",
            "approve-all": "approve all",
            "reject-all": "reject all",
        }.get(kind, kind)
    shown = len(rows)
    if total is not None and total > shown:  # a filter hides some: a revert of the group takes them all
        return f"{title} ({shown} of {total} rows shown): {parts}"
    return f"{title} ({shown} row{'s' * (shown != 1)}): {parts}"


def _part(subsystem: str, action: str, count: int) -> str:
    """``2 memory entries added``; a subsystem or action without words keeps its name."""
    nouns = _FILE_NOUNS if action in ("write_file", "remove_file") else _NOUNS.get(subsystem, (subsystem, subsystem))
    return f"{count} {nouns[count != 1]} {_PAST.get(action, action)}"


def parse_since(text: str, now: float) -> float:
    """``2h``, ``3d``, ``30m``, ``1w`` ago, or an ISO date/time (in the machine's zone when none is given,
    as the listings show times)."""
    match = _RELATIVE.match(half_width(text or ""))  # (``３ｄ`` typed in full width, as ``１０d`` is)
    if match:
        with contextlib.suppress(ValueError):  # (not digits: not an age, so perhaps a date)
            return now - typed_number(match.group(1), "an age") * _UNITS[match.group(2)]
    try:
        moment = datetime.fromisoformat(str(text).strip().replace("Z", "+00:00"))
    except ValueError:
        raise TimelineError(
            f"--since {quoted(text)} is not a time: give an age such as 2h, 3d or 1w, or an ISO date "
            "such as 2026-11-30 or 2026-11-30T12:00."
        ) from None
    return moment.timestamp()  # (a naive one is local time)


_FILTER_KEYS = {
    "actor": "actor",
    "subsystem": "subsystem",
    "sub": "subsystem",
    "target": "target",
    "session": "session_id",
    "group": "group",
}
_FILTER_CHOICES = {"actor": ACTORS, "subsystem": SUBSYSTEMS}  # a value outside these matches no row ever


def filter_value(name: str, value: str) -> str:
    """``value`` for the ``name`` filter (``actor``, ``subsystem``), refused when no row can have it: a
    typo (or ``actor:hermes``, whose changes are ``external`` or, a stored call's memory edit, ``agent``)
    would otherwise just match nothing.
    Both skins ask here, so the box and the CLI's options refuse alike."""
    choices = _FILTER_CHOICES.get(name)
    if choices is None or value in choices:
        return value
    hint = (
        " (changes made outside the workbench are external, save a memory edit a stored Hermes call made: agent)"
        if name == "actor"
        else ""
    )
    raise TimelineError(f"{name}: {quoted(value)} is not one of {', '.join(choices)}{hint}.")


def preview_lines(preview: dict[str, Any]) -> list[str]:
    """What a revert would do, one line a row in the order it goes (newest first), for either skin
    to prefix with "would" or "will"."""
    return _revert_lines(preview["changes"], preview["refused"], preview["skipped"], ("revert", "refuse", "leave"))


def unrevertable_lines(preview: dict[str, Any]) -> list[str]:
    """Why a revert that would change nothing changes nothing, one line a row (``row ID (its summary):
    why``): said as it stands, not as what a revert "will" do."""
    return _newest_first(
        [
            *(
                (r["id"], f"row {r['id']} ({r['summary']}): {row_reason(r['id'], r['error'])}")
                for r in preview["refused"]
            ),
            *((s["id"], f"row {s['id']} ({s['summary']}): {s['reason']}") for s in preview["skipped"]),
        ]
    )


def outcome_lines(result: dict[str, Any]) -> list[str]:
    """What a revert did, one line a row in the order it went (newest first), worded as its preview."""
    return _revert_lines(result["reverted"], result["refused"], result["skipped"], ("reverted", "refused", "left"))


def row_reason(row_id: int, error: str) -> str:
    """A row's refusal as its line says it, after ``row ID (its summary):``: a memory undo's refusal is a
    whole message (``Cannot undo row 135: <why>. Nothing was changed.``, as ``memory undo`` says it), which
    there named the row twice and, in a group whose other rows were reverted, said nothing changed."""
    reason = str(error).removeprefix(f"Cannot undo row {row_id}: ")
    if reason != error:
        reason = reason.removesuffix(" Nothing was changed.").rstrip().removesuffix(".")
    return reason


def _revert_lines(changed: list, refused: list, skipped: list, verbs: tuple[str, str, str]) -> list[str]:
    """``VERB row ID (its summary): what reverting it does`` (or why it is refused or left) for each row."""
    change, refuse, leave = verbs
    return _newest_first(
        [
            *((c["id"], f"{change} row {c['id']} ({c['summary']}): {c['undo']}") for c in changed),
            *(
                (r["id"], f"{refuse} row {r['id']} ({r['summary']}): {row_reason(r['id'], r['error'])}")
                for r in refused
            ),
            *((s["id"], f"{leave} row {s['id']} ({s['summary']}): {s['reason']}") for s in skipped),
        ]
    )


def _detail_at(path: str) -> str:
    """SQL for a value in a row's detail, NULL for a detail damaged by hand (json_extract would raise)."""
    return f"CASE WHEN json_valid(detail) THEN json_extract(detail, '{path}') END"


# -- searching what a summary shows ------------------------------------------------------
# A search finds a row by what it holds (target, action, before, after, a proposal's summary) and by
# what its summary shows: the summary's own words ("skill 'x' pinned outside the workbench") and the
# values it shows from the row's detail. Summarizing every row in Python would cost about a second
# on 100,000 rows, so SQL narrows them first, and ``page`` checks what is left against its summary.
# The rows kept: those whose detail (its JSON text) holds the search text, and those of the kinds
# (subsystem, action) whose wording could show part of it. Which kinds: ``_wording`` summarizes
# probes, rows of each kind in each shape ``_summary`` words differently, whose own values are a mark
# (what is left between the marks is wording), and notes the detail keys a piece of wording needs
# (" outside the workbench" needs ``outside``): a kind whose only wording the text touches needs a key
# is kept where its detail has that key. Wording with no letters (" ", "' → '") joins two values: a
# kind touched only there is kept where the row holds every word of the text.
_OWN = "\ue000"  # a probe's stand-in for a row's own value (a private-use character: never in wording)
_ACTION = "\ue001"  # a probe's stand-in for an action no summary words in its own way
_DIGITS = re.compile(r"\d+")
_WORDS = re.compile(r"[^\W\d_]+")  # (numbers are left out: a summary shows some it counted itself)
# what a row holds that a search may find (its target, action, before and after, a proposal's summary)
_STORED = (
    "(target LIKE ? ESCAPE '\\' OR action LIKE ? ESCAPE '\\' OR before LIKE ? ESCAPE '\\' "
    f"OR after LIKE ? ESCAPE '\\' OR {_detail_at('$.summary')} LIKE ? ESCAPE '\\')"
)
# a word of a search, in anything a row holds
_HOLDS_WORD = (
    "("
    + " OR ".join(f"{column} LIKE ? ESCAPE '\\'" for column in ("target", "action", "before", "after", "detail"))
    + ")"
)
Kind = tuple[str, str | None]  # (subsystem, action); action None: any action not probed by name


def _net() -> dict[str, Any]:
    """A detail with every key some summary reads (each kind is probed with it, and with it less each key)."""
    own = _OWN
    return {
        "op": own,
        "label": own,
        "entries": [own, own],
        "file": own,
        "change": own,
        "path": own,
        "files": [own, own],
        "absorbed": [own, own],
        "rolled_back_action": own,
        "rolled_back": own,
        "fact_id": own,
        "sessions": [own, own],
        "title": own,
        "message_count": 2,
        "count": 2,
        "older_than_days": 3,
        "outside": True,
        "subsystem": own,
        "summary": own,
        "edited": own,
        "changed": False,
        "proposed_by": own,
    }


def _nets() -> tuple[dict[str, Any], ...]:
    """The net, as a row reads on its own and as a revert reads it (of a row, of a Hermes call); each
    also without ``proposed_by``, whose " (proposed by …)" at the end would otherwise glue the last
    words of every summary to it (a search for "3 entries" missed "first look: 3 entries already there")."""
    net = _net()
    shapes = (net, {**net, "undo_of": 1}, {**net, "undo_of_session": _OWN, "undo_of_message": 1})
    return *shapes, *(_less(shape, "proposed_by") for shape in shapes)


def _probe_details(subsystem: str) -> list[dict[str, Any]]:
    """Details in the other shapes ``_summary`` words a ``subsystem`` row differently."""
    own = _OWN
    if subsystem == "memory":
        return [
            {},
            *({"op": op, "undo_of": 1} for op in ("add", "remove", "replace", own)),
            *({"op": op, "undo_of_session": own, "undo_of_message": 1} for op in ("add", own)),
            {"entries": [own]},
        ]
    if subsystem == "skills":
        return [
            {},
            {"change": own, "path": own},
            {"change": own, "path": own, HERMES_PASS: own},
            {"file": own, "change": own, "path": own},
        ]
    if subsystem == "sessions":
        return [{}, {"preview": own, "message_count": 1, "sessions": [own]}]
    if subsystem != "approvals":
        return [{}]
    plan = {"absorbed": [{"name": own}], "umbrella": {"name": own}}
    skill_payloads = [
        {"action": action, "name": own, "content": own, "file_path": own, "old_string": own, "new_string": own}
        for action in ("create", "edit", "patch", "write_file", "remove_file", "delete", own)
    ] + [{"action": "consolidate", "name": own, "plan": plan}]
    memory_payloads = [
        {"action": action, "target": target, "content": own, "old_text": own}
        for action in ("add", "replace", "remove", own)
        for target in ("memory", "user", own)
    ] + [{"target": target, "operations": [{"action": own, "content": own}]} for target in ("memory", "user", own)]
    return [
        {},
        {"edited": True, "proposed_by": own},
        *({"subsystem": "skills", "payload": payload} for payload in skill_payloads),
        *({"subsystem": "memory", "payload": payload} for payload in memory_payloads),
    ]


def _probe_actions() -> tuple[str, ...]:
    """Every action some summary words in its own way (any other shows as it is stored)."""
    named = ("external", "repair", "seen", "undo", "rollback", "title", "run", "pause", "resume")
    return tuple(dict.fromkeys([*_PAST, *_SKILL_VERBS, *named, "fact_add", "fact_forget", "fact_update"]))


@cache
def _worded(subsystem: str) -> tuple[str, ...]:
    """The actions a ``subsystem`` row's summary words in its own way: the others show their name where
    an action not probed by name shows its own."""
    own = _OWN

    def said(action: str, detail: dict[str, Any]) -> str:
        entry = JournalEntry(0, 0.0, "agent", subsystem, action, own, own, own, None, None, detail)
        return summarize(entry)

    return tuple(
        action
        for action in _probe_actions()
        if any(said(action, detail) != said(_ACTION, detail).replace(_ACTION, action) for detail in (_net(), {}))
    )


def _pieces_shown(subsystem: str, action: str | None, target: str, detail: dict) -> set[str]:
    """A probe's pieces of wording, casefolded (numbers count as values). Its before and after are the
    same: a pin of a skill pinned already says so after what any pin says, and a search that touches
    the shorter summary touches that one too."""
    own = _OWN
    entry = JournalEntry(0, 0.0, "agent", subsystem, action or own, target, own, own, None, None, detail)
    shown = _DIGITS.sub(own, inline(summarize(entry))).casefold()
    return {piece for piece in shown.split(own) if piece}


@cache
def _wording() -> dict[Kind, dict[str, frozenset[str]]]:
    """Each kind's pieces of wording, each with the detail keys it needs (none: any row of the kind
    may show it). Made once per process."""
    own = _OWN
    found: dict[Kind, dict[str, frozenset[str]]] = {}
    for subsystem in SUBSYSTEMS:
        for action in (*_worded(subsystem), None):
            needs: dict[str, frozenset[str]] = {}
            for target in (*FILES, own) if subsystem == "memory" else (own,):  # (a memory row shows its file)
                for detail in (*_nets(), *_probe_details(subsystem)):
                    lacking = {key: _pieces_shown(subsystem, action, target, _less(detail, key)) for key in detail}
                    for piece in _pieces_shown(subsystem, action, target, detail):
                        needed = frozenset(key for key, pieces in lacking.items() if piece not in pieces)
                        needs[piece] = needs[piece] & needed if piece in needs else needed
            found[subsystem, action] = needs
    return found


def _less(detail: dict[str, Any], key: str) -> dict[str, Any]:
    return {name: value for name, value in detail.items() if name != key}


def _touches(text: str, piece: str) -> bool:
    """Whether a summary with ``piece`` of wording could show ``text`` through it: one holds the other,
    or they overlap at an end (the rest of ``text`` a value beside it)."""
    if text in piece or piece in text:
        return True
    size = min(len(text), len(piece))
    at = text.find(piece[-1], 0, size - 1)  # text starts with an end of piece: ends where piece ends
    while at != -1:
        if piece.endswith(text[: at + 1]):
            return True
        at = text.find(piece[-1], at + 1, size - 1)
    at = text.find(piece[0], len(text) - size + 1)  # text ends with a start of piece
    while at != -1:
        if piece.startswith(text[at:]):
            return True
        at = text.find(piece[0], at + 1)
    return False


def _forms(text: str) -> tuple[str, ...]:
    """A search's text as typed, with its widths folded as the archive's search folds them (full-width
    ASCII as ASCII, half-width katakana as full-width) and with its katakana in half width: ``ﾃﾞﾌﾟﾛｲ``
    found no row of Hermes's ``デプロイ`` entry, which Sessions finds; a row holding any form is found."""
    folded = fold_widths(text)
    return tuple(dict.fromkeys((text, folded, "".join(HALF_FORMS.get(char, char) for char in folded))))


def _shows(row: Row, forms: tuple[str, ...]) -> bool:
    summary = row.summary.casefold()
    return any(form.casefold() in summary for form in forms)


@lru_cache(maxsize=64)  # (the next page of a search asks again)
def _shown_clause(text: str) -> tuple[str, tuple[Any, ...]]:
    """SQL for the rows whose summary may show ``text`` beyond their stored fields (``page`` checks
    each): a detail holding it, or a kind whose wording it touches (see above)."""
    wanted = text.casefold()
    found = list(dict.fromkeys(_WORDS.findall(wanted)))
    words = [f"%{like_escape(word)}%" for word in found]
    kept: dict[tuple[str, str, tuple[Any, ...]], list[str]] = {}  # (subsystem, gate, its args) -> actions
    for (subsystem, action), pieces in _wording().items():
        # A word in none of the kind's wording comes from a value, so a row showing it holds it (ASCII words
        # only: LIKE folds no other case): "skill 'zzz" then reads no skill row's summary in Python.
        valued = [f"%{like_escape(w)}%" for w in found if w.isascii() and not any(w in piece for piece in pieces)]
        gates: set[tuple[str, tuple[Any, ...]]] = set()
        for piece, needed in pieces.items():
            if not _touches(wanted, piece) or (action is None and not _WORDS.search(piece)):
                continue  # (two values side by side in a row of an action no summary words: not looked for)
            gate = ["instr(detail, ?) > 0" for _ in needed]
            gate_args = [f'"{key}"' for key in sorted(needed)]
            held = words if not _WORDS.search(piece) else valued  # (joining two values: the row holds every word)
            gate += [_HOLDS_WORD for _ in held]
            gate_args += [word for word in held for _ in range(5)]
            gates.add((" AND ".join(gate) or "1", tuple(gate_args)))
        if ("1", ()) in gates:  # (any row of the kind)
            gates = {("1", ())}
        for condition, condition_args in gates:
            kept.setdefault((subsystem, condition, condition_args), []).append(action or "")
    clauses, args = ["detail LIKE ? ESCAPE '\\'"], [f"%{like_escape(text)}%"]
    for (subsystem, condition, condition_args), actions in kept.items():
        probed = _worded(subsystem)
        named = [action for action in actions if action]
        which, which_args = [], list(named)
        if named:
            which.append(f"action IN ({', '.join('?' * len(named))})")
        if len(named) < len(actions):  # (and the actions not probed by name)
            which.append(f"action NOT IN ({', '.join('?' * len(probed))})")
            which_args += probed
        clauses.append(f"(subsystem = ? AND ({' OR '.join(which)}) AND {condition})")
        args += [subsystem, *which_args, *condition_args]
    return f"({' OR '.join(clauses)})", tuple(args)


# A proposal Hermes staged: its row's actor is its proposer (the agent, the review), but Hermes wrote it,
# so ``actor:external`` (what Hermes did) finds it too.
_STAGED_OUTSIDE = f"(subsystem = 'approvals' AND action = 'stage' AND {_detail_at('$.outside')} = 1)"
# The time a row shows (``Row.at``), what ``since`` selects by: a proposal Hermes staged well before the workbench
# found it shows its record's ``created_at`` (``_hermes_staged_at``; ``clock_time``: a number, not a boolean, after
# 1970 began)
_CREATED_AT = _detail_at("$.created_at")
_SHOWN_AT = (
    f"CASE WHEN {_STAGED_OUTSIDE} AND CASE WHEN json_valid(detail) THEN json_type(detail, '$.created_at') END "
    f"IN ('integer', 'real') AND {_CREATED_AT} < at - {FOUND_LATE_S} AND {_CREATED_AT} > 0 "
    f"THEN {_CREATED_AT} ELSE at END"
)
# An outside memory write a Hermes call may be behind: listed as ``external`` or as the agent's, as its
# actor column shows it (``Row.by``), so ``actor:agent`` and ``actor:external`` decide it row by row.
_CALLED_OUTSIDE = (
    "(actor = 'external' AND (subsystem = 'memory' AND action IN ('add', 'replace', 'remove') "
    "OR subsystem = 'skills' AND action = 'external'))"
)
SHOWN_FILTERED = (HERMES_AGENT, "external")
SHOWN_BATCH = 1000  # rows read at a time while those filters look up each outside write's call
# The most candidate rows one page of those filters reads: 100,000 hand edits of MEMORY.md, none of them the
# agent's, were all read (each with its Hermes call looked up) for one empty page of ``actor:agent``.
EXAMINED = 5000
UNCREDITED_MOST = 1000  # outside rows a filtered Timeline watches for a credit (``Timeline.uncredited``)


@dataclass(frozen=True)
class Reach:
    """How far a page of ``actor:agent`` or ``actor:external`` read before ``EXAMINED`` stopped it short:
    older rows were not read, and the next page starts below ``oldest_id``."""

    actor: str
    examined: int
    oldest_id: int

    def note(self, found: int) -> str:
        """What the page says under its rows, in both skins (each adds how to read on)."""
        return (
            f"{f'{found:,}' if found else 'None'} of the {self.examined:,} rows read (down to row {self.oldest_id:,}) "
            f"{'are' if found > 1 else 'is'} actor:{self.actor}'s; a page reads at most {EXAMINED:,}, so older rows "
            "were not read yet."
        )


def _noted(records: Iterable[sqlite3.Row], read: list[int]) -> Iterator[sqlite3.Row]:
    """``records``, each one's id added to ``read`` as it is read."""
    for record in records:
        read.append(record["id"])
        yield record


def _shortfall(changed: list, refused: list, *, preview: bool) -> dict[str, str]:
    """The ``error`` of a revert (or of its preview) that does not change everything it names; none when it does."""
    if not changed and not refused:
        return {"error": "Nothing in it changes what the agent knows, so there is nothing to revert."}
    if not refused:
        return {}
    if preview:
        rest = f"the other {len(changed)} would be reverted" if changed else "nothing would change"
        return {"error": f"{counted(len(refused), 'row')} would be refused (see 'refused'); {rest}."}
    rest = f"the other {len(changed)} were reverted" if changed else "nothing was changed"
    return {"error": f"{counted(len(refused), 'row')} could not be reverted (see 'refused'); {rest}."}


def _newest_first(lines: list[tuple[int, str]]) -> list[str]:
    return [text for _, text in sorted(lines, key=lambda line: -line[0])]


def _undoing(entry: JournalEntry) -> str:
    """What reverting a memory row will do to the file, in words (a revert is the memory store's undo)."""
    where = FILES.get(entry.target, entry.target)
    action = entry.detail.get("op") if entry.action == "undo" else entry.action
    if action == "add":
        return f"remove {_quoted(entry.after, 60)} from {where}"
    if action == "remove":
        return f"put {_quoted(entry.before, 60)} back in {where}"
    if action == "replace":
        after, before = _apart(entry.after, entry.before, 45)
        return f"change {after} back to {before} in {where}"
    return f"put {where} back as it was before row {entry.id}"


def _why(entry: JournalEntry) -> str | None:
    """How a decision made outside the workbench was told, or why an approval was refused (its
    journal row keeps the refusal as ``error``), on one line as a summary is (``flat_line``)."""
    if entry.detail.get("outside"):
        why = entry.detail.get("why")
    elif (entry.subsystem, entry.action) == ("approvals", "approve_failed"):
        why = entry.detail.get("error")
    else:
        return None
    return flat_line(why, WHY_CHARS) if isinstance(why, str) else None


# how a look found each outside skill change (``skills.outside``): what it compared, and what it saw
_SKILL_LOOKS = {
    "created": "the skills folder with the workbench's last look: {path} is new since",
    "edited": "{path} with the text the workbench's last look saw (by its hash)",
    "removed": "the skills folder with the workbench's last look: {path} is gone since",
    "archived": "the skills folder with the workbench's last look: {path} is gone since, its name in the archive",
    "restored": "the skills folder with the workbench's last look: {path} is back, its name out of the archive",
    "pinned": "the pins in skills/.usage.json with the workbench's last look",
    "unpinned": "the pins in skills/.usage.json with the workbench's last look",
}


def _call_action(entry: JournalEntry) -> str:
    """The action of the Hermes call behind an agent memory row: a credited row's call's (``memory.credit``:
    a replace the look found as a remove and an add made both rows), else the row's own."""
    credited = entry.detail.get("credited")
    made = credited.get("action") if isinstance(credited, dict) else None
    return made if made in ("add", "replace", "remove") else entry.action


def _found(entry: JournalEntry) -> str | None:
    """How the workbench knows of a change it did not make, from its row alone: the look that found it
    (an outside memory, skill or session row, a proposal Hermes staged) or a memory file's first look;
    None for a change the workbench made (it journaled that as it made it)."""
    detail, action = entry.detail, entry.action
    if entry.subsystem == "approvals":
        if action != "stage" or not detail.get("outside"):
            return None
        found = f"found in Hermes's pending proposals with no journal row at {stamped(entry.at, seconds=True)}: "
        made = detail.get("created_at")
        if isinstance(made, (int, float)) and not isinstance(made, bool) and made <= 0:  # (``clock_time``)
            return (
                f"{found}Hermes staged it, not the workbench, but its record holds an impossible time (created_at "
                f"{str(made).removesuffix('.0')}, not after 1970 began: Hermes's clock was wrong), so the row shows "
                "when it was found"
            )
        return f"{found}Hermes staged it at {stamped(made, seconds=True) or '(no valid time)'}, not the workbench"
    name = f"{FILES.get(entry.target, entry.target)}.md"
    if entry.subsystem == "memory" and entry.actor == "agent" and isinstance(detail.get("call"), int):
        session = inline(entry.session_id or "")
        call = f"Hermes's memory {_call_action(entry)} call in session {session} · message {entry.message_id}"
        if credited := credited_note(entry):  # (``memory.credit``: journaled as an outside edit first)
            return f"found by comparing {name} with the last version the workbench saw; {credited}: {call}"
        # (``memory.replay``: the catch-up applied the call to the file it last saw)
        return f"{call}, stored in state.db, replayed on the {name} the workbench last saw"
    if entry.actor != "external":
        return None
    if entry.subsystem == "memory":
        if action == "seen":
            return (
                f"the workbench's first look at {name}: the entries already there, kept as the baseline to compare "
                "with (who wrote them is not journaled)"
            )
        found = f"found by comparing {name} with the last version the workbench saw"
    elif entry.subsystem == "skills":
        change, path = detail.get("change"), flat_line(str(detail.get("path", "")), 120)
        if isinstance(detail.get("file"), str):
            state = {"created": "new", "edited": "changed", "removed": "gone"}.get(str(change), "changed")
            found = (
                f"found by comparing the skill's support files with the workbench's last look: {path} is {state} since"
            )
        elif change in STATE_CHANGES.values():
            found = "found by comparing the states in skills/.usage.json with the workbench's last look"
        else:
            look = _SKILL_LOOKS.get(str(change), "the skills folder with the workbench's last look")
            found = "found by comparing " + look.format(path=path)
        if pass_at := stamped(detail.get(HERMES_PASS), seconds=True):
            found += f"; Hermes's curator made a pass at {pass_at} (skills/.curator_state), which this is credited to"
    elif entry.subsystem == "sessions":
        if action == "delete":
            found = "found by comparing state.db with the workbench's last look: the session is gone since"
        else:
            found = "found by comparing the sessions' archived flags in state.db with the workbench's last look"
    else:
        return "journaled as a change made outside the workbench"
    seen, after = detail.get("seen_at"), detail.get("not_before")
    if isinstance(seen, (int, float)) and isinstance(after, (int, float)):  # found at a later look
        found += f"; seen {stamped(seen, seconds=True)}, made after {stamped(after, seconds=True)}"
    return found


def _found_at(entry: JournalEntry) -> float | None:
    """When a look found an outside change, if well after it was made (``Row.found_at``)."""
    seen = entry.detail.get("seen_at")
    if isinstance(seen, (int, float)) and not isinstance(seen, bool) and seen - entry.at > FOUND_LATE_S:
        return float(seen)
    return None


def _hermes_staged_at(entry: JournalEntry) -> float | None:
    """When Hermes staged a proposal its ``stage`` row found (its record's ``created_at``), if well before
    the row, which is journaled when the workbench found it: the time the row shows, as an outside
    change's is the time it was made (its row's time is then its ``found_at``)."""
    if (entry.subsystem, entry.action) != ("approvals", "stage") or not entry.detail.get("outside"):
        return None
    made = clock_time(entry.detail.get("created_at"))
    return made if made is not None and entry.at - made > FOUND_LATE_S else None


def _outside_change(entry: JournalEntry) -> dict[str, str | None]:
    """What an outside skill row says happened (``Row.change``, ``Row.file``), from its detail."""
    if (entry.subsystem, entry.action) != ("skills", "external"):
        return {}
    return {"change": text_value(entry.detail.get("change")), "file": text_value(entry.detail.get("file"))}


def _outside_state_refusal(row: Row, skills: SkillLibrary) -> str | None:
    """Why an outside change of a skill's lifecycle state (Hermes's curator) is not put back, and what
    to do instead (a stale mark's depends on whether the skill is pinned now, which its usage says);
    None for any other row."""
    if row.change == STATE_CHANGES["stale"]:
        keep = (
            "It is pinned now, so no later pass marks it again; a use makes it active"
            if row.target in (skills.usage.pinned([row.target]) or ())
            else f"To keep it active, use it or pin it (`{skills.command('pin', row.target)}`, or p in Skills)"
        )
        return (
            f"marked stale outside the workbench (Hermes's Curator reads each skill's activity afresh on every "
            f"pass): put back, it would last only until the next pass. {keep}"
        )
    if row.change == STATE_CHANGES["active"]:
        return (
            f"reactivated outside the workbench (a use since, or Hermes's Curator reading its activity): the next "
            f"Curator pass marks it stale again if it stays unused; to take it out of use now, archive it "
            f"(`{skills.command('archive', row.target)}`, or a in Skills)"
        )
    if row.change == STATE_CHANGES["archived"]:
        return (
            "marked archived outside the workbench while its folder stayed: the Curator reads it as active; "
            f"to archive it, `{skills.command('archive', row.target)}` (or a in Skills)"
        )
    return None


def _name_free(skills: Any, *names: str) -> None:
    """Refuse a removed skill made again under a name an active skill answers to since (its frontmatter
    ``name`` or its folder's): two would answer to it, and finding it by name would fail as ambiguous."""
    for found in skills.scanner.active():
        taken = {found.name, found.dir_name} & set(names)
        if taken:
            raise TimelineError(
                f"skill '{visible(sorted(taken)[0])}' is taken since by the skill at {visible(found.rel)}; "
                "made again, two skills would answer to that name"
            )


def opens_line(found: Found, skills: SkillLibrary) -> str:
    """The skill a row opens (``Timeline.skill_opened``), by its folder, and the command that shows it."""
    where = "the archived copy in" if found.archived else "the skill in"
    return (
        f"opens: {where} skills/{inline(found.rel)} (enter on the Timeline selects it on Skills; "
        f"`{skills.command('show', found)}`)"
    )


def _folders_named(row: Row, detail: dict[str, Any]) -> list[str]:
    """The folders (under skills/) a skills row names as the skill it is about, most telling first: where
    an archive or restore moved it, where an outside creation or edit saw its SKILL.md or file."""
    folders = [detail.get("to")] if row.action in ("archive", "restore") else []
    path, inside = detail.get("path"), detail.get("file")
    if row.action == "external" and isinstance(path, str) and row.change != ARCHIVED:
        tail = f"/{inside}" if isinstance(inside, str) else "/SKILL.md"
        folders.append(path.removesuffix(tail) if path.endswith(tail) else None)
    return [folder for folder in folders if isinstance(folder, str) and folder]


def _outside_skill(row: Row) -> bool:
    return (row.subsystem, row.action) == ("skills", "external")


def has_skill_diff(row: Row) -> bool:
    """An outside edit or removal of a SKILL.md itself: a row that shows its line diff when the looks kept its
    text before (``Timeline.skill_diff``), and says so when they did not. Both skins ask, without a read."""
    return _outside_skill(row) and not row.file and row.change in (EDITED, REMOVED)


def _found_in_archive(row: Row) -> bool:
    """Rows whose session only state.db can tell: an outside memory edit or skill change, a proposal Hermes
    staged."""
    if row.session_id:
        return False
    return (row.actor == "external" and row.subsystem in ("memory", "skills")) or row.subsystem == "approvals"


def awaits_source(row: Row, now: float) -> bool:
    """A row only state.db can name the session of, listed without one while its turn may still be
    stored (Hermes stores a turn when it ends, often after a watcher journaled its writes)."""
    return may_find_source(row) and now - row.at < HERMES_SLACK_S


def may_find_source(row: Row) -> bool:
    """A row listed without the Hermes call a later look may find behind it, whatever its age: its turn
    may have been stored while the Timeline was not shown (a call stamped up to ``HERMES_SLACK_S`` after
    the row is its). Cheap to ask again: the archive's answers are kept while state.db is unchanged."""
    return row.source is None and _made_by_a_call(row)


def awaits_credit(row: Row) -> bool:
    """An outside memory edit listed: a look may credit it to its Hermes call (``memory.credit``), whether
    the Timeline found that call already (its source) or not, and however old it is (a look credits a call
    whenever it reads one stored since: the turn may have been long, the Timeline open for hours)."""
    return _hermes_memory_write(row) and not row.session_id


def _made_by_a_call(row: Row) -> bool:
    """A row state.db may hold the Hermes call of: an outside add, replace or remove (not a first look,
    which no call made), an outside skill change, a proposal Hermes staged (its stage row: a decision on
    it, made later by a person, is no call's, though it may show the staging call it found)."""
    staged = (row.subsystem, row.action) == ("approvals", "stage")
    return not row.session_id and (_hermes_call_may_be_behind(row) or staged)


def source_may_come(row: Row, now: float, turn_may_follow: bool) -> bool:
    """A row listed without a source whose Hermes turn may still be stored: young (``awaits_source``),
    while a session that could store it is open (``Archive.turn_may_follow``)."""
    return awaits_source(row, now) and turn_may_follow


def unsourced(row: Row, now: float, turn_may_follow: bool) -> str:
    """Why ``row`` has no session message to open, as both skins say it. Only a young row found in
    state.db's calls (``awaits_source``) while a session that may store its turn is open (``Archive.
    turn_may_follow``) is "not in state.db yet"; an older one, or one no session could be behind (a
    quiet write: Hermes's memory tool run with no session stored, or an edit by hand), no stored call
    made."""
    if source_may_come(row, now, turn_may_follow):
        return f"Row {row.id}'s session message is not in state.db yet: Hermes stores a turn when it ends."
    if _made_by_a_call(row):
        taken = row.action == "remove" or row.change == REMOVED
        did = "staged it" if row.subsystem == "approvals" else "took it out" if taken else "wrote it"
        how = {
            "approvals": "",
            "skills": " (Hermes's skill_manage run with no session stored, its curator, or an edit by hand)",
        }.get(row.subsystem, " (Hermes's memory tool run with no session stored, or an edit by hand)")
        return f"Row {row.id}: no Hermes call stored in state.db {did}{how}, so there is no session message to open."
    return f"Row {row.id} did not come from a session message: there is none to open."


def parse_filter(query: str) -> dict[str, str]:
    """A search box's text as ``page`` filters: ``actor:review target:user postgres`` (the rest is free text)."""
    filters: dict[str, str] = {}
    words = []
    for word in (query or "").split():
        key, sep, value = word.partition(":")
        name = _FILTER_KEYS.get(key.lower()) if sep else None
        if name is None:
            words.append(word)
        elif not value:  # (a key with nothing after it yet, as typed, filters nothing)
            continue
        elif filters.get(name, value) != value:
            raise TimelineError(f"{key.lower()}: is given twice; the timeline filters by one {key.lower()} at a time.")
        else:
            filters[name] = filter_value(name, value)
    if words:
        filters["text"] = " ".join(words)
    return filters


_T = TypeVar("_T")


def _reads_the_journal(method: Callable[..., _T]) -> Callable[..., _T]:
    """A Timeline read of workbench.db on the journal's connection: SQLite's own errors ("database disk image
    is malformed", which name no file) are raised as the journal's own calls raise them, naming workbench.db,
    and damage is remembered (``Journal.problem``). Its reads of state.db handle their own errors."""

    @wraps(method)
    def call(self: Timeline, *args: Any, **kwargs: Any) -> _T:
        return self.home.journal.reading(lambda: method(self, *args, **kwargs))

    return call


class Timeline:
    def __init__(self, home):
        self.home = home
        self.reach: Reach | None = None  # set by each ``page``: where a shown-actor filter stopped short

    def _conn(self):
        journal = self.home.journal
        conn = journal.connection()
        if not self.home.read_only and self.home.workbench_db_path not in _INDEXED and journal.problem() is None:
            conn.execute("CREATE INDEX IF NOT EXISTS idx_journal_actor ON journal(actor, id)")  # actor filters page
            _INDEXED.add(self.home.workbench_db_path)
        return conn

    def _row(self, entry: JournalEntry) -> Row:
        outside, found_at, staged = _outside_change(entry), _found_at(entry), _hermes_staged_at(entry)
        return Row(
            entry.id,
            group_of(entry),
            entry.at if staged is None else staged,
            entry.actor,
            entry.subsystem,
            entry.action,
            entry.target,
            inline(summarize(entry)),  # (a skill's folder name may hold a line break)
            entry.session_id,
            entry.message_id,
            revert_of=text_value(entry.detail.get("revert_of")),
            why=_why(entry),
            change=outside.get("change"),
            file=outside.get("file"),
            found=_found(entry),
            found_at=found_at if staged is None else entry.at,
            hermes_pass=bool(outside) and bool(entry.detail.get(HERMES_PASS)),
            versions=_versions(entry),
        )

    def _marked(self, rows: list[Row]) -> list[Row]:
        """``rows``, each found-later one marked ``overtakes`` when a row journaled before it (among the
        ``OVERTAKES_WITHIN`` just before it) is stamped after it: listed by id, it then sits above a
        newer-stamped row. Rows no listing shows (a session's title, a look that found nothing) do not
        count: nothing shown is out of order. One query for the page (one per row made a page of them five
        times slower): the stamps from ``OVERTAKES_WITHIN`` listed rows before each run of found-later rows
        to its last."""
        found = sorted(row.id for row in rows if row.found_at is not None)
        if not found:
            return rows
        runs = [[found[0], found[0]]]  # (first, last) ids of found-later rows less than a window apart
        for mid in found[1:]:
            if mid - runs[-1][1] > OVERTAKES_WITHIN:
                runs.append([mid, mid])
            runs[-1][1] = mid
        where, args = _listed(indexed=False)
        listed = " AND ".join(where)
        look = (
            f"SELECT id, at FROM journal WHERE id < ? AND {listed} AND id >= coalesce("
            f"(SELECT id FROM journal WHERE id < ? AND {listed} ORDER BY id DESC LIMIT 1 OFFSET ?), 0)"
        )
        stamps = (
            self._conn()
            .execute(
                " UNION ".join([look] * len(runs)) + " ORDER BY id",
                [v for first, last in runs for v in (last, *args, first, *args, OVERTAKES_WITHIN - 1)],
            )
            .fetchall()
        )
        ids = [mid for mid, _ in stamps]
        ats = [-math.inf if (at := number_value(stamp)) is None else at for _, stamp in stamps]  # (``at`` may be text)

        def overtakes(row: Row) -> bool:
            end = bisect.bisect_left(ids, row.id)
            return max(ats[max(0, end - OVERTAKES_WITHIN) : end], default=-math.inf) > row.at

        return [replace(row, overtakes=True) if row.found_at is not None and overtakes(row) else row for row in rows]

    @_reads_the_journal
    def page(
        self,
        *,
        before_id: int | None = None,
        after_id: int | None = None,
        limit: int = 200,
        since: float | None = None,
        actor: str | None = None,
        subsystem: str | None = None,
        target: str | None = None,
        session_id: str | None = None,
        text: str | None = None,
        group: str | None = None,
    ) -> list[Row]:
        """Up to ``limit`` rows older than ``before_id`` / newer than ``after_id`` (newest first), matching every
        filter given."""
        for name, value in (("search text", text), ("session id", session_id), ("target", target), ("group", group)):
            if value and len(value) > MAX_FILTER:  # (SQLite's LIKE refuses a pattern past 50,000 bytes)
                raise TimelineError(
                    f"The {name} is too long ({len(value):,} characters; at most {MAX_FILTER:,}). Nothing was searched."
                )
        # (a blank group is refused, journal or not: as no filter, a revert of it would undo every row)
        grouped = self._group_clause(group) if group is not None else None
        if not self.home.journal.exists():
            return []
        # "+subsystem": without a subsystem filter, walk ids newest first instead of sorting an index's rows
        where, args = _listed(indexed=bool(subsystem))
        for column, value in (("subsystem", subsystem), ("target", target)):
            if value:
                where.append(f"{column} = ?")
                args.append(value)
        if actor:  # (a proposal Hermes staged is its proposer's and Hermes's doing: both filters find it)
            # and an outside memory write may be shown as the agent's: a candidate for either, kept below
            called = f" OR ? = '{HERMES_AGENT}' AND {_CALLED_OUTSIDE}"
            where.append(f"(actor = ? OR ? = 'external' AND {_STAGED_OUTSIDE}{called})")
            args += [actor, actor, actor]
        if session_id:
            clause, extra = self._session_clause(self._ended_by(session_id))
            where.append(clause)
            args += extra
        if before_id is not None:
            where.append("id < ?")
            args.append(before_id)
        if after_id is not None:
            where.append("id > ?")
            args.append(after_id)
        if since is not None:  # (a row shows its journaled time or an earlier one: ``at`` keeps the index's help)
            where.append(f"at >= ? AND {_SHOWN_AT} >= ?")
            args += [since, since]
        stored, stored_args = "1", []  # (every row matches when no text is searched)
        forms = _forms(text) if text else ()
        if forms:  # what a row holds, or the words its summary shows (``_shown_clause``): checked below
            stored = f"({' OR '.join([_STORED] * len(forms))})"
            stored_args = [f"%{like_escape(form)}%" for form in forms for _ in range(5)]
            shown = [_shown_clause(form) for form in forms]
            where.append(f"({stored} OR {' OR '.join(clause for clause, _ in shown)})")
            args += [*stored_args, *(arg for _, more in shown for arg in more)]
        if grouped is not None:
            where.append(grouped[0])
            args += grouped[1]
        self.reach = None
        if actor in SHOWN_FILTERED:  # read in batches until ``limit`` rows are shown as ``actor``'s
            sql = f"SELECT *, {stored} AS stored FROM journal WHERE {' AND '.join(where)} AND id < ? ORDER BY id DESC"
            found = self._batches(sql, [*stored_args, *args], min(max(limit, SHOWN_BATCH), EXAMINED))
            read: list[int] = []  # the ids of the candidates read, up to ``EXAMINED``
            rows = list(islice(self._shown_as(_noted(islice(found, EXAMINED), read), forms, actor), limit))
            if len(rows) < limit and len(read) == EXAMINED and next(found, None) is not None:
                self.reach = Reach(actor, EXAMINED, read[-1])
        elif text:  # rows read newest first until ``limit`` of them show it (SQLite steps the query lazily)
            sql = f"SELECT *, {stored} AS stored FROM journal WHERE {' AND '.join(where)} ORDER BY id DESC"
            rows = list(islice(self._showing(self._conn().execute(sql, (*stored_args, *args)), forms), limit))
        else:
            sql = f"SELECT * FROM journal WHERE {' AND '.join(where)} ORDER BY id DESC LIMIT ?"
            rows = [self._row(_row(r)) for r in self._conn().execute(sql, (*args, limit))]
        undone = self.home.journal.undone_by([row.id for row in rows])
        return [replace(row, reverted_by=undone[row.id]) if row.id in undone else row for row in self._marked(rows)]

    def _batches(self, sql: str, args: list[Any], size: int) -> Iterator[sqlite3.Row]:
        """The records ``sql`` (ending ``id < ?``, newest first) finds, read ``size`` at a time: each batch
        is read whole before its rows are looked up (a lookup queries the same connection)."""
        below = 2**63 - 1
        while True:
            batch = self._conn().execute(f"{sql} LIMIT ?", (*args, below, size)).fetchall()
            yield from batch
            if len(batch) < size:
                return
            below = batch[-1]["id"]

    def _shown_as(self, found: Iterable[sqlite3.Row], forms: tuple[str, ...], actor: str) -> Iterator[Row]:
        """The rows of ``found`` (what ``page``'s actor clause found) listed as ``actor``'s, and showing
        one of ``forms`` when given (``_showing``): an outside memory write whose Hermes call state.db holds is
        the agent's, not external (``shown_actor``, the rule its actor column follows). Its call is looked up
        once (``hermes_call`` keeps it for ``with_sources``, which lists the row)."""
        for record in found:
            entry = _row(record)
            row = self._row(entry)
            if forms and not record["stored"] and not _shows(row, forms):
                continue
            if not _hermes_call_may_be_behind(row) or shown_actor(row.actor, self._call(entry)) == actor:
                yield row

    def _call(self, entry: JournalEntry) -> object | None:
        """The Hermes call behind an outside row: a skill change's ``skill_manage``, a memory write's ``memory``."""
        return (
            hermes_skill_call(self.home, entry) if entry.subsystem == "skills" else hermes_call(self.home.memory, entry)
        )

    def _showing(self, found: Iterable[sqlite3.Row], forms: tuple[str, ...]) -> Iterator[Row]:
        """The rows of ``found`` whose stored fields hold one of ``forms`` (``stored``), or whose summary
        shows one."""
        for record in found:
            row = self._row(_row(record))
            if record["stored"] or _shows(row, forms):
                yield row

    def _session_clause(self, text: str) -> tuple[str, list[Any]]:
        """Rows of the session with id ``text`` when there is one, else of every session whose id starts
        with it: a range, so the session index serves it (``s1`` is s1's alone even when s10 exists).
        Hermes's own memory writes name no session here: they are the rows its calls in the session made."""
        exact = self._conn().execute("SELECT 1 FROM journal WHERE session_id = ? LIMIT 1", (text,)).fetchone()
        if exact or self._archived(text):
            clause, args, high = "session_id = ?", [text], None
        else:
            high = text + "\U0010ffff"
            clause, args = "session_id >= ? AND session_id < ?", [text, high]
        # an archive change keyed to its chain's first session names the others it flipped in its detail
        named = "value = ?" if high is None else "value >= ? AND value < ?"
        clause = (
            f"({clause} OR (subsystem = 'sessions' AND action IN ('archive', 'unarchive', 'delete') AND EXISTS ("
            f"SELECT 1 FROM {_named_sessions('journal')} WHERE {named})))"
        )
        args = [*args, *args]
        outside = external_rows_of(self.home.memory, text, high)
        staged = staged_in_sessions(self.home, text, high)  # Hermes's proposals and what became of them
        # and those the journal names the session for (kept when Hermes deletes the session)
        proposals = {
            t
            for (t,) in self._conn().execute(
                f"SELECT DISTINCT target FROM journal WHERE subsystem = 'approvals' AND {clause}", args
            )
        }
        if staged:
            clause = (
                f"({clause} OR (subsystem = 'approvals' AND session_id IS NULL "
                "AND target IN (SELECT value FROM json_each(?))))"
            )
            args = [*args, json.dumps(staged)]
        if proposals or staged:  # the memory writes Hermes's approvals of them made
            outside += cited_rows(self._conn(), sorted(proposals.union(staged)))
        if not outside:
            return clause, args
        return f"({clause} OR id IN (SELECT value FROM json_each(?)))", [*args, json.dumps(outside)]

    def _ended_by(self, text: str) -> str:
        """``text``, or the one session id it ends when no id is or starts with it: the session column
        shows an id's end (``…155739_27beb3``), so that end finds the session as its start does."""
        text = text.removeprefix("…")  # (pasted from the column, its mark included)
        conn, high = self._conn(), text + "\U0010ffff"
        if conn.execute(
            "SELECT 1 FROM journal WHERE session_id >= ? AND session_id < ? LIMIT 1", (text, high)
        ).fetchone():
            return text
        pattern = "%" + like_escape(text)
        ended = {
            r[0]
            for r in conn.execute(
                "SELECT DISTINCT session_id FROM journal WHERE session_id IS NOT NULL "
                "AND session_id LIKE ? ESCAPE '\\'",
                (pattern,),
            )
        }
        if self.home.state_db_path.exists():
            try:
                archive = self.home.archive.conn()
                if archive.execute("SELECT 1 FROM sessions WHERE id >= ? AND id < ? LIMIT 1", (text, high)).fetchone():
                    return text
                ended |= {
                    r[0] for r in archive.execute("SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\'", (pattern,))
                }
            except (WorkbenchError, sqlite3.Error):
                pass
        return ended.pop() if len(ended) == 1 else text

    def _archived(self, session_id: str) -> bool:
        if not self.home.state_db_path.exists():
            return False
        try:
            return self.home.archive.get_session(session_id) is not None
        except (WorkbenchError, sqlite3.Error):
            return False

    @staticmethod
    def _group_clause(group: str) -> tuple[str, list[Any]]:
        kind, _, key = group.partition(":")
        if kind == "review" and key:
            session, _, message = key.rpartition(":")
            if message == "-":
                return "actor = 'review' AND session_id = ? AND message_id IS NULL", [session]
            if session and row_id(message) is not None:
                return "actor = 'review' AND session_id = ? AND message_id = ?", [session, row_id(message)]
        if kind == "curator" and key:
            return f"actor = 'curator' AND {_detail_at('$.run')} = ?", [key]
        if kind == "outside" and key:
            subsystems = ", ".join(f"'{name}'" for name in OUTSIDE_GROUPED)
            return f"actor = 'external' AND subsystem IN ({subsystems}) AND {_detail_at('$.edit')} = ?", [key]
        if kind == "revert" and key:
            return f"{_detail_at('$.revert')} = ?", [key]
        if kind in ("approve-all", "reject-all") and key:
            return f"{_detail_at('$.bulk')} = ?", [group]
        if kind == "consolidation" and key:
            return (
                f"((subsystem = 'approvals' AND target = ? AND {_detail_at('$.action')} = 'consolidate') OR "
                "(subsystem = 'skills' AND action IN ('consolidate', 'consolidate_refused') AND "
                f"({_detail_at('$.pending_id')} = ? OR {_detail_at('$.ledger_id')} = ? "
                "OR CAST(id AS TEXT) = ?)))",
                [key, key, key, key],
            )
        raise MalformedReference(
            f"{quoted(group)} is not a timeline row or group: give a row id (a number) or a group such as "
            "review:SESSION:MESSAGE, curator:RUN, consolidation:ID, outside:EDIT, revert:ID, approve-all:ID "
            "or reject-all:ID "
            "(see `workbench timeline`)."
        )

    @_reads_the_journal
    def group_sizes(self, groups: Iterable[str]) -> dict[str, int]:
        """How many rows each group holds as ``page`` lists them, whatever filter showed some of them."""
        if not self.home.journal.exists():
            return {}
        sizes = {}
        where, args = _listed(indexed=False)
        for group in dict.fromkeys(groups):
            clause, extra = self._group_clause(group)
            sql = f"SELECT count(*) FROM journal WHERE {' AND '.join(where)} AND {clause}"
            sizes[group] = self._conn().execute(sql, (*args, *extra)).fetchone()[0]
        return sizes

    def rows_of(self, ref: str | int) -> list[Row]:
        """The rows a reference names: one row by id, or every row of a group (newest first)."""
        text = str(ref).strip()
        wanted = row_id(text)  # (a number typed as every other: full-width digits too)
        if wanted is not None or (text.isascii() and text.isdigit()):
            rows = self.page(before_id=wanted + 1, limit=1) if wanted is not None and wanted < 2**63 - 1 else []
            if not rows or rows[0].id != wanted:
                raise TimelineError(f"No timeline row {text}. See `workbench timeline` for row ids.")
            return rows
        rows = self.page(group=text, limit=100_000)
        if not rows:
            raise TimelineError(
                f"No timeline group {quoted(text)}. `workbench timeline` shows a row's group in brackets after "
                "its summary ([outside:…], [revert:…])."
            )
        return rows

    # -- where a row came from --------------------------------------------------------
    def with_sources(self, rows: list[Row]) -> list[Row]:
        """``rows``, each outside memory edit with the Hermes call that wrote it and each proposal
        Hermes staged with the call that staged it (``source``): the journal names no session for
        those (Hermes's records name none), so a listing would show none. The lookups a listing
        repeats (a proposal's staged and decided rows, which approval cites an edit) are made once."""
        lookups = _Lookups()
        return [
            self._sourced(self._approved(r, lookups), lookups)
            if _outside_skill(r)
            else self._sourced(r, lookups)
            if _found_in_archive(r)
            else r
            for r in rows
        ]

    def sources_found(self, rows: Iterable[Row]) -> dict[int, Source]:
        """By row id, the sources found now for ``rows`` (listed without one: ``may_find_source``)."""
        lookups = _Lookups()
        found = {row.id: self.source(row, lookups) for row in rows}
        return {row_id: source for row_id, source in found.items() if source is not None}

    @_reads_the_journal
    def uncredited(self, above: int, below: int | None = None) -> list[int]:
        """The ids of the outside memory rows a look may still credit (``awaits_credit``) from ``above`` on
        (below ``below``): those a filter left off a page (``actor:agent``) may be listed once credited. The
        newest ``UNCREDITED_MOST`` of them: a long run of hand edits costs no more than that on each reload."""
        return [
            row_id
            for (row_id,) in self._conn().execute(
                "SELECT id FROM journal WHERE actor = 'external' AND id >= ? AND id < ? AND subsystem = 'memory' "
                "AND action IN ('add', 'replace', 'remove') AND session_id IS NULL ORDER BY id DESC LIMIT ?",
                (above, below if below is not None else 2**63 - 1, UNCREDITED_MOST),
            )
        ]

    @_reads_the_journal
    def credited(self, ids: Iterable[int], **filters: str | None) -> dict[int, Row | None]:
        """By row id, those of ``ids`` (rows that ``awaits_credit``) credited since to the Hermes call that
        made them (``memory.credit``): each as the Timeline lists it now under ``filters`` (``page``'s), or
        None when it does not match them (an ``actor:external`` list). One read of the journal by id; the
        pages only for rows credited."""
        ids = list(ids)
        if not ids:
            return {}
        found = (
            self._conn()
            .execute(
                "SELECT id FROM journal WHERE id IN (SELECT value FROM json_each(?)) AND session_id IS NOT NULL",
                (json.dumps(ids),),
            )
            .fetchall()
        )
        listed = {
            row_id: next((row for row in self.page(before_id=row_id + 1, limit=1, **filters) if row.id == row_id), None)
            for (row_id,) in found
        }
        sourced = {row.id: row for row in self.with_sources([row for row in listed.values() if row is not None])}
        return {row_id: sourced.get(row_id) for row_id in listed}

    def _approved(self, row: Row, lookups: _Lookups) -> Row:
        """An outside skill change a proposal's approval in Hermes made, naming that proposal's proposer."""
        approval = self._citing(row.id, lookups)
        return replace(row, summary=_proposed(row.summary, approval.detail)) if approval is not None else row

    def _sourced(self, row: Row, lookups: _Lookups) -> Row:
        """``row`` with its source, and for a memory write a proposal's approval outside the workbench
        made, that proposal's proposer (as a write approved here names it)."""
        row = replace(row, source=self.source(row, lookups))
        approval = self._citing(row.id, lookups) if row.subsystem == "memory" else None
        return replace(row, summary=_proposed(row.summary, approval.detail)) if approval is not None else row

    def _citing(self, row_id: int, lookups: _Lookups) -> JournalEntry | None:
        """The outside approval whose change the outside memory or skill row ``row_id`` is."""
        if lookups.citing is None:
            lookups.citing = citing_approvals(self._conn())
        approval = lookups.citing.get(row_id)
        if approval is None:
            return None
        if approval not in lookups.approvals:
            lookups.approvals[approval] = self.home.journal.get(approval)
        return lookups.approvals[approval]

    def source(self, row: Row, lookups: _Lookups | None = None) -> Source | None:
        """The session message behind a row: the one it names, or, for an outside memory edit,
        the Hermes tool call that wrote its entry (``memory.history.hermes_call``) or the call that
        staged the proposal whose approval in Hermes wrote it, or, for a proposal Hermes staged, the
        call whose result staged it (``approvals.sources``), else None."""
        if named := Source.named_by(row):
            return named
        if not _found_in_archive(row):
            return None
        entry = self.home.journal.get(row.id)
        if entry is None:
            return None
        lookups = lookups or _Lookups()
        if row.subsystem == "approvals":
            key = (entry.detail.get("subsystem"), row.target)
            if key not in lookups.staged:
                found = staged_at(self.home, entry)
                lookups.staged[key] = Source(found[0], found[1], "staged") if found else None
            return lookups.staged[key]
        if row.subsystem == "skills":
            made = hermes_skill_call(self.home, entry)
            return Source(made.session_id, made.message_id, "archive", made.action, SKILL_TOOL) if made else None
        call = hermes_call(self.home.memory, entry)
        if call is not None:
            return Source(call.session_id, call.message_id, "archive", call.action)
        cited_by = self._citing(entry.id, lookups)
        return self.source(self._row(cited_by), lookups) if cited_by is not None else None

    # -- reverting --------------------------------------------------------------------
    def _entry(self, row: Row) -> JournalEntry:
        entry = self.home.journal.get(row.id)
        if entry is None:
            raise TimelineError(f"Timeline row {row.id} is gone from the journal.")
        return entry

    def _plan_one(self, row: Row, skill_md_only: bool = False) -> dict[str, Any]:
        """How this row would be reverted: ``{"id", "summary", "undo"}`` plus ``refused`` or ``skip`` reasons
        (``skill_md_only``: a skill removed outside comes back as its SKILL.md alone, ``_remade``)."""
        entry = self._entry(row)
        item: dict[str, Any] = {"id": row.id, "summary": row.summary}
        if (row.subsystem, row.action) == ("approvals", "approve") and entry.detail.get("changed") is False:
            return {**item, "skip": "an approval that changed nothing (it read so already): nothing to revert"}
        if (row.subsystem, row.action) == ("approvals", "close"):
            return {
                **item,
                "skip": "a proposal that left the queue outside the workbench with no change seen: nothing to revert",
            }
        applied = entry.detail.get("applied_rows")
        if row.subsystem == "approvals" and isinstance(applied, list) and applied:
            rows = f"row{'s' * (len(applied) != 1)} {', '.join(str(r) for r in applied)}"
            if entry.detail.get("subsystem") == "skills":  # an outside skill change saves nothing to put back
                return {
                    **item,
                    "skip": f"a record of a decision, not a change (its change, {rows}, was made "
                    "outside the workbench and cannot be reverted here)",
                }
            return {**item, "skip": f"a record of a decision, not a change (revert the change it led to: {rows})"}
        if (row.subsystem, row.action) in _READINGS:
            return {**item, "skip": _READING}
        if (row.subsystem, row.action) == ("approvals", "stage"):
            return {**item, "skip": self._staged_skip(row)}
        if (row.subsystem, row.action) in _RECORDS:
            return {**item, "skip": "a record of a decision, not a change (revert the change it led to)"}
        if (row.subsystem, row.action) == ("approvals", "reject") and "raw" in entry.detail:
            return {**item, "skip": f"an unreadable file dropped: its text is kept in row {row.id}, to restore by hand"}
        if (row.subsystem, row.action) == ("approvals", "reject"):
            refusal = self.home.approvals.restore_problem(row.target, row.id)
            return {
                **item,
                "undo": f"put proposal {row.target} back in the queue",
                **({"refused": refusal} if refusal else {}),
            }
        if row.subsystem == "memory":
            refusal = undo_problem(self.home.memory, entry)
            if isinstance(refusal, AlreadyUndone):  # (a row named alone still says so as a refusal)
                return {**item, "skip": f"{refusal.reason}: nothing to revert"}
            return {**item, "undo": _undoing(entry), **({"refused": str(refusal)} if refusal else {})}
        if row.action == "external" and row.subsystem == "skills":
            texts = self.outside_texts(entry)
            undone = self.home.journal.undone_by([entry.id]).get(entry.id) if texts is not None else None
            if undone is not None:
                return {**item, "skip": f"row {undone} undid it already: nothing to revert"}
            if texts is not None:
                return {**item, **self._outside_text_plan(entry, *texts, skill_md_only=skill_md_only)}
            refused = _outside_state_refusal(row, self.home.skills) or _outside_skill_refusal(entry, self.home.skills)
            return {**item, "refused": refused}
        if row.subsystem == "skills" and row.action in ("pin", "unpin"):
            return {**item, **self._pin_plan(entry)}
        if row.subsystem == "providers":
            return {**item, **self._fact_plan(entry)}
        if row.subsystem == "sessions":
            return {**item, **self._session_plan(entry)}
        ledger_id = entry.detail.get("ledger_id")
        if row.subsystem == "skills" and ledger_id:
            try:
                ledger = self.home.skills.ledger
                files = self.home.curator.rollback_files(ledger.get(ledger_id))
            except WorkbenchError as exc:
                return {**item, "undo": f"put its files back as they were (ledger {ledger_id})", "refused": exc.message}
            return {
                **item,
                "undo": f"put its files back as they were (ledger {ledger_id}): " + ("; ".join(files) or "no files"),
                "ledger_id": ledger_id,
            }
        return {**item, "refused": f"{row.subsystem} {row.action} rows cannot be reverted"}

    def _left_with_their_change(self, rows: list[Row], skipped: list[dict[str, Any]], reverted: set[int]) -> None:
        """A group's approval and staging rows whose proposal's change (the rows that applied it) this very
        revert takes back say so, rather than "revert the change it led to", the one just reverted."""
        by_id = {row.id: row for row in rows}
        for item in skipped:
            change = self._change_of(by_id[item["id"]]) if reverted else []
            if change and set(change) <= reverted:
                said = f"row{'s' * (len(change) != 1)} {', '.join(map(str, change))}"
                what = "a record of a decision" if by_id[item["id"]].action == "approve" else "a proposal staged"
                item["reason"] = f"{what}, not a change: the change it led to ({said}) is in this revert"

    def _change_of(self, row: Row) -> list[int]:
        """The rows that applied the proposal an approval or staging row names (none for any other row)."""
        if (row.subsystem, row.action) not in (("approvals", "approve"), ("approvals", "stage")):
            return []
        detail = self._entry(row).detail
        subsystem, cited = detail.get("subsystem"), detail.get("applied_rows")
        if isinstance(cited, list):  # (an approval outside the workbench cites its changes)
            return [r for r in cited if isinstance(r, int)]
        return self.home.journal.applying(subsystem, row.target) if isinstance(subsystem, str) else []

    def _staged_skip(self, row: Row) -> str:
        """Why a staging row is not reverted (a proposal waiting is no change, and no decision either) and
        what drops it: a reject while it waits, else what was decided since."""
        if not is_pending_id(row.target):  # (no row of ours names anything else)
            return "a proposal staged for review, not a change: nothing to revert"
        staged = f"a proposal staged for review, not a change: proposal {row.target}"
        if self.home.approvals.store.find(row.target) is not None:
            return (
                f"{staged} still waits in the queue; to drop it, reject it: `workbench pending reject {row.target}` "
                "(or r in Approvals)"
            )
        later = self.home.journal.query(
            subsystem="approvals", target=row.target, actions=("approve", "reject", "close"), limit=1
        )
        decided = later[0] if later and later[0].id > row.id else None
        if decided is None:
            return f"{staged} is no longer in the queue: nothing to revert"
        if decided.action == "approve" and decided.detail.get("changed") is False:
            return f"{staged} was approved since (row {decided.id}), which changed nothing: nothing to revert"
        if decided.action == "approve":
            return f"{staged} was approved since (row {decided.id}): revert the change it led to"
        if decided.action == "reject":
            return (
                f"{staged} was rejected since: nothing to revert (reverting row {decided.id} puts it back in the queue)"
            )
        return f"{staged} left the queue outside the workbench since (row {decided.id}): nothing to revert"

    # -- a SKILL.md changed outside -----------------------------------------------------
    def outside_texts(self, entry: JournalEntry) -> tuple[str, str | None] | None:
        """What an outside edit or removal of a SKILL.md changed: (its text before, its text after; None for a
        removal), from the texts the looks kept; None for any other row, or when the text before is not
        known (a look before a version that kept texts, a first look) or is not UTF-8."""
        detail = entry.detail
        if (entry.subsystem, entry.action) != ("skills", "external") or detail.get("file"):
            return None
        change, was, sha = detail.get("change"), detail.get("was"), detail.get("sha")
        if (
            change not in (EDITED, REMOVED)
            or not isinstance(was, str)
            or (change == EDITED and not isinstance(sha, str))
        ):
            return None
        texts = self.home.skills.outside.texts([was, sha] if change == EDITED else [was])
        try:
            before = texts[was].decode("utf-8")
            after = texts[sha].decode("utf-8") if change == EDITED else None
        except (KeyError, UnicodeDecodeError):
            return None
        return before, after

    def skill_opened(self, row: Row) -> Found | None:
        """The skill a skills row opens (Enter on the Timeline; ``timeline show`` names it): the very folder
        the row names while it still holds that skill (the copy an archive moved, the folder a creation or
        edit was seen in), else the skill its name finds now (the active one before archived copies).
        An archive Hermes made (seen from outside, its folder unrecorded) opens the archived copy of that
        name archived last by the time the row was seen: never the active skill Hermes made anew under it.
        None when nothing answers to the row's name any more."""
        if row.subsystem != "skills":
            return None
        skills = self.home.skills
        entry = self.home.journal.get(row.id)
        detail = entry.detail if entry is not None else {}
        for folder in _folders_named(row, detail):
            try:
                return skills.at(folder, row.target)
            except SkillError:
                continue
        if row.action == "external" and row.change == ARCHIVED:
            copy = self._archived_copy(row, detail)
            if copy is not None:
                return copy
        try:
            return skills.find_any(row.target)
        except SkillError:
            return None

    def _archived_copy(self, row: Row, detail: dict[str, Any]) -> Found | None:
        """The archived copy of ``row.target`` an outside archive row is about: the one archived last by
        the time the row was seen (Hermes's record and dated folders say when), else the newest."""
        from .curator.archive import archived_time, candidates

        skills = self.home.skills
        try:
            copies = candidates(skills.scanner.archived(), row.target)
        except SkillError:
            return None
        if not copies:
            return None
        record = skills.usage.load().get(row.target)
        seen_at = detail.get("seen_at")
        seen = float(seen_at) if isinstance(seen_at, (int, float)) else row.at
        dated = sorted(((archived_time(copy, record), copy) for copy in copies), key=lambda pair: pair[0])
        before = [copy for when, copy in dated if when <= seen + HERMES_SLACK_S]
        return (before or [dated[-1][1]])[-1]

    def skill_diff(self, row: Row) -> list[tuple[str, str]] | None:
        """The line diff of an outside SKILL.md edit (before → after), or of a removal (every line removed);
        None for any other row, or when what it changed is not known (``outside_texts``)."""
        texts = self.outside_texts(self._entry(row)) if has_skill_diff(row) else None
        return None if texts is None else line_diff(texts[0], texts[1] or "")

    def _outside_text_plan(
        self, entry: JournalEntry, before: str, after: str | None, skill_md_only: bool = False
    ) -> dict[str, Any]:
        """Reverting an outside SKILL.md edit (its text before written back, if it still reads as the edit
        left it) or removal (its SKILL.md made again where it was, ``_remade``): planned as our own edit or
        create would be, threat scan included (``_outside_write``)."""
        path = str(entry.detail.get("path", ""))
        if after is None:
            undo = f"recreate skill '{entry.target}' at {path} as it was before it was removed"
        else:
            undo = f"put the text of skill '{entry.target}' ({path}) back as it was before the outside edit"
        try:
            plan = self._outside_write(entry, before, after, skill_md_only=skill_md_only)
        except SupportFilesLost as exc:  # (what asking for SKILL.md alone would leave out: said, and offered)
            return {"undo": undo, "refused": exc.message, "skill_md_only": {"lost": exc.lost}}
        except WorkbenchError as exc:
            return {"undo": undo, "refused": exc.message}
        lost = plan.evidence.get("lost_support_files")
        if lost is not None:
            undo = f"{undo}, its SKILL.md alone: {lost_files(lost)}"
        return {"undo": undo if plan.flags is None else f"{undo} ({flagged(plan.flags)})"}

    def _outside_write(
        self,
        entry: JournalEntry,
        before: str,
        after: str | None,
        ctx: ToolContext | None = None,
        skill_md_only: bool = False,
    ) -> Any:
        """The plan that puts ``before`` back (an edit of the skill, or a create where it was), checked as any
        skill write is (validation, threat scan), refused unless the skill still reads ``after`` (or, for a
        removal, ``_remade``); under the write lock, checked again before it writes."""
        skills, path = self.home.skills, str(entry.detail.get("path", ""))
        ctx = ctx or ToolContext(actor="user")
        if after is None:
            return self._remade(entry, before, ctx, skill_md_only)
        try:
            found = skills.find(entry.target)
        except SkillError:
            raise TimelineError(f"skill '{entry.target}' is gone since the outside edit; nothing to put back") from None
        if f"{found.rel}/SKILL.md" != path:
            raise TimelineError(f"skill '{entry.target}' is no longer at {visible(path)} (it is at {found.rel})")
        plan = skills.plan({"action": "edit", "name": found.name, "content": before}, ctx)
        skill_md, expected = found.path / "SKILL.md", entry.detail.get("sha")

        def unchanged() -> None:
            try:
                now = sha256(self.home.links.read_bytes(skill_md))
            except OSError as exc:
                raise TimelineError(f"{visible(path)} cannot be read ({exc.strerror or exc})") from None
            if now != expected:
                raise TimelineError(
                    f"{visible(path)} has changed since the outside edit: putting its earlier text back would lose "
                    "that later change"
                )

        unchanged()
        plan.precondition = unchanged
        return plan

    def _remade(self, entry: JournalEntry, before: str, ctx: ToolContext, skill_md_only: bool = False) -> Any:
        """The plan that makes a removed SKILL.md again where it was: in a free folder, or beside the support
        files it had when they are all still there (only its SKILL.md was deleted); refused when some are gone
        (no copy of them was kept) or which it had is not known (``SupportFilesLost``), unless asked for its
        SKILL.md alone (``skill_md_only``: the plan's evidence names the files left out,
        ``lost_support_files``), or when its folder or name is taken (checked again under the write lock)."""
        skills, path = self.home.skills, str(entry.detail.get("path", ""))
        parts, listed = path.split("/"), entry.detail.get("files")
        if len(parts) not in (2, 3) or parts[-1] != "SKILL.md":
            raise TimelineError(f"{visible(path)} is not where a skill's SKILL.md can be made again")
        known = isinstance(listed, list)
        if not known and not skill_md_only:
            raise SupportFilesLost(
                "removed outside the workbench when the last look, an earlier version's, noted no support files: "
                f"which it had is not known; only its SKILL.md can come back ({SKILL_MD_ONLY.format(row=entry.id)})",
                None,
            )
        files = [str(f) for f in listed] if isinstance(listed, list) else []
        folder, rel = skills.dir.joinpath(*parts[:-1]), "/".join(parts[:-1])

        def there() -> list[str]:
            """The support files gone (checked, with the folder, again under the write lock)."""
            try:
                missing = [f for f in files if not (folder / f).is_file()]
                # (a folder left empty, its SKILL.md alone deleted, is free: the file goes back in it)
                kept = [f for f in files if f not in missing]
                taken = not kept and (folder.is_symlink() or (folder.exists() and any(folder.iterdir())))
            except OSError as exc:
                raise TimelineError(f"{visible(rel)} cannot be read ({exc.strerror or exc})") from None
            if missing and not skill_md_only:
                raise SupportFilesLost(
                    "removed outside the workbench with support files the workbench kept no copy of "
                    f"({', '.join(visible(f) for f in missing)}); only its SKILL.md can come back "
                    f"({SKILL_MD_ONLY.format(row=entry.id)})",
                    missing,
                )
            if taken:
                raise TimelineError(f"{visible(rel)} is taken since the outside removal")
            return missing

        missing = there()
        args = {"action": "create", "name": parts[-2], "content": before}
        if len(parts) == 3:
            args["category"] = parts[0]
        plan = skills.plan(args, ctx, beside_files=folder.is_dir())
        if skill_md_only and (missing or not known):
            plan.evidence["lost_support_files"] = missing if known else None

        def free() -> None:
            there()
            _name_free(skills, plan.name, parts[-2])

        free()
        plan.precondition = free
        return plan

    def _revert_outside(self, entry: JournalEntry, actor: str, skill_md_only: bool = False) -> dict[str, Any]:
        texts = self.outside_texts(entry)
        if texts is None:  # (planned a moment ago: the looks dropped the text meanwhile)
            return {"success": False, "error": _OUTSIDE}
        ctx = ToolContext(actor=actor)
        plan = self._outside_write(entry, *texts, ctx, skill_md_only=skill_md_only)
        result = self.home.skills.execute(plan, ctx)
        message = f"{result.get('message', '')} (as it was before row {entry.id})".strip()
        if "lost_support_files" in plan.evidence:
            result["lost_support_files"] = lost = plan.evidence["lost_support_files"]
            message = f"{message} Its SKILL.md alone: {lost_files(lost)}."
        if plan.flags is not None:
            result["warning"] = warning_message(plan.flags)
            message = f"{message} {result['warning']}"
        return {**result, "message": message}

    def _pin_plan(self, entry: JournalEntry) -> dict[str, Any]:
        """Reverting a pin or unpin: setting the pin the row found (its ``before``), never a toggle; nothing
        when the row changed nothing (an earlier version journaled a pin of a pinned skill), refused unless
        the skill is still as the row left it with no later pin change of it (ours or Hermes's) since."""
        target, pinned = entry.target, entry.action == "pin"
        before = {"True": True, "False": False}.get(str(entry.before))
        if before is None:  # (every version wrote it: a hand-edited row)
            return {
                "undo": f"{'unpin' if pinned else 'pin'} skill '{target}'",
                "refused": f"the row does not say whether '{target}' was pinned before it; "
                f"`{self.home.skills.command('unpin' if pinned else 'pin', target)}` sets it by hand",
            }
        if before == pinned:
            return {
                "skip": f"a{'' if pinned else 'n'} {entry.action} that changed nothing (the skill was "
                f"{entry.action}ned already): nothing to revert"
            }
        plan: dict[str, Any] = {"undo": f"{'pin' if before else 'unpin'} skill '{target}'"}
        newer = (
            self._conn()
            .execute(
                "SELECT id, action, json_extract(detail, '$.change'), json_extract(detail, '$.undo_of') "
                "FROM journal WHERE subsystem = 'skills' "
                "AND target = ? AND id > ? AND status = 'done' AND ((action IN ('pin', 'unpin') "
                "AND before IS NOT after) OR (action = 'external' AND json_extract(detail, '$.change') "
                "IN ('pinned', 'unpinned'))) ORDER BY id LIMIT 1",
                (target, entry.id),
            )
            .fetchone()
        )
        if newer is not None and newer[3] == entry.id:
            return {**plan, "refused": f"row {newer[0]} undid it already"}
        if newer is not None:
            return {**plan, "refused": f"row {newer[0]} ({newer[2] or newer[1]}) changed the pin of '{target}' since"}
        now = self.home.skills.usage.pinned([target])
        if now is None:
            problem = self.home.skills.usage.problem() or "skills/.usage.json cannot be read"
            return {**plan, "refused": problem}
        if (target in now) == before:
            return {**plan, "refused": f"'{target}' is {'pinned' if before else 'not pinned'} already"}
        return plan

    def _session_plan(self, entry: JournalEntry) -> dict[str, Any]:
        """Reverting an archive or unarchive: the other, refused unless the session is still as the
        row left it with no later archive change of ours (a revert never undoes a newer decision)."""
        if entry.action not in ("archive", "unarchive"):
            return {"refused": "its messages were deleted from state.db; nothing was kept to put back"}
        target, archive = entry.target, entry.action == "unarchive"
        plan: dict[str, Any] = {"undo": f"{'archive' if archive else 'unarchive'} session {target}"}
        members = _flipped(entry)
        newer = (  # a later archive change to any session of the chain, by us or (journaled) by Hermes
            self._conn()
            .execute(
                "SELECT j.id, j.action FROM journal AS j WHERE j.subsystem = 'sessions' AND j.id > ? "
                "AND j.status = 'done' AND j.action IN ('archive', 'unarchive', 'delete', 'prune') "
                f"AND (j.target IN (SELECT value FROM json_each(?)) OR EXISTS (SELECT 1 FROM {_named_sessions('j')} "
                "AS named WHERE named.value IN (SELECT value FROM json_each(?)))) ORDER BY j.id LIMIT 1",
                (entry.id, json.dumps(members), json.dumps(members)),
            )
            .fetchone()
        )
        try:
            session = self.home.archive.get_session(target) if self.home.state_db_path.exists() else None
        except WorkbenchError as exc:
            return {**plan, "refused": exc.message}
        if session is None:
            return {**plan, "refused": f"session {inline(target)} is no longer in state.db"}
        if newer is not None:
            return {**plan, "refused": f"row {newer[0]} ({newer[1]}) changed session {inline(target)} since"}
        if session.archived == archive:
            return {**plan, "refused": f"session {inline(target)} is {'archived' if archive else 'listed'} already"}
        return plan

    def _fact_plan(self, entry: JournalEntry) -> dict[str, Any]:
        """Reverting a local-provider fact change: forget an added fact, keep a forgotten one
        again, or restore the wording a merge or reword replaced; refused if it changed since."""
        fact_id = entry.detail.get("fact_id")
        current = self._facts.holds(fact_id) if isinstance(fact_id, int) else None
        if entry.action == "fact_forget":
            return {"undo": f"keep the fact {quoted(entry.before)} again"}
        if current is None:
            return {"undo": f"forget fact {fact_id}", "refused": f"fact {fact_id} is gone already"}
        if current.content != entry.after:
            return {
                "undo": f"forget fact {fact_id}",
                "refused": f"fact {fact_id} has changed since; it now reads {quoted(current.content)}",
            }
        if entry.action == "fact_add":
            return {"undo": f"forget fact {fact_id}"}
        return {"undo": f"restore fact {fact_id} to {quoted(entry.before)}"}

    @property
    def _facts(self):
        from .providers.facts import FactStore  # the provider package loads the runner's tools

        return FactStore(self.home)

    def preview(self, ref: str | int, skill_md_only: bool = False) -> dict[str, Any]:
        """Exactly what ``revert(ref)`` would change, what it would refuse and what it leaves; writes nothing.
        A refused row whose skill's SKILL.md alone could come back carries ``skill_md_only``: ``{lost}``."""
        rows = self.rows_of(ref)
        single = len(rows) == 1 and row_id(str(ref)) is not None  # a row named alone is refused, as revert does
        planned = [self._plan_one(row, skill_md_only) for row in rows]
        preview: dict[str, Any] = {
            "ref": str(ref),
            "changes": [p for p in planned if "undo" in p and "refused" not in p],
            "refused": [
                {"id": p["id"], "summary": p["summary"], "error": p.get("refused") or p["skip"]} | _offered(p)
                for p in planned
                if "refused" in p or (single and "skip" in p)
            ],
            "skipped": [
                {"id": p["id"], "summary": p["summary"], "reason": p["skip"]}
                for p in planned
                if "skip" in p and not single
            ],
        }
        self._left_with_their_change(rows, preview["skipped"], {c["id"] for c in preview["changes"]})
        return {**preview, **_shortfall(preview["changes"], preview["refused"], preview=True)}

    @lock_waits.one_operation()  # (never stopped half done by a cancelled wait)
    def revert(self, ref: str | int, actor: str = "user", skill_md_only: bool = False) -> dict[str, Any]:
        """Revert a row or a group, newest first, through each store's guards (``skill_md_only``: a skill
        removed outside with support files no copy was kept of comes back as its SKILL.md alone)."""
        rows = self.rows_of(ref)
        single = len(rows) == 1 and row_id(str(ref)) is not None
        reverted: list[dict[str, Any]] = []
        refused: list[dict[str, Any]] = []
        skipped: list[dict[str, Any]] = []
        # a group's revert is one group too (one row, one revert, as the undo of that row); every row a
        # revert writes names the row it undoes (``undo_of``, as memory's own undo does), so that row is marked
        # (and says it came from here: the Memory screen's history names it a revert, as this list does)
        group = {"timeline_revert": True} | ({} if single else {"revert": secrets.token_hex(4), "revert_of": str(ref)})
        for row in rows:
            plan = self._plan_one(row, skill_md_only)
            if "skip" in plan:
                (refused if single else skipped).append(
                    {"id": row.id, "summary": row.summary, ("error" if single else "reason"): plan["skip"]}
                )
                continue
            if "refused" in plan:
                refused.append({"id": row.id, "summary": row.summary, "error": plan["refused"]} | _offered(plan))
                continue
            earlier = set(self.home.journal.undos_of(row.id))
            with tagged(actor, **group, undo_of=row.id):
                result = self._apply(row, plan, actor, skill_md_only)
            if result.get("success"):
                reverted.append(
                    {
                        "id": row.id,
                        "summary": row.summary,
                        "undo": plan["undo"],
                        "message": result.get("message", ""),
                        # the rows this revert wrote for it (a revert is rows of its own: reverting them takes it back)
                        "rows": [new for new in self.home.journal.undos_of(row.id) if new not in earlier],
                    }
                )
            else:
                refused.append({"id": row.id, "summary": row.summary, "error": str(result.get("error"))})
        self._left_with_their_change(rows, skipped, {item["id"] for item in reverted})
        written = [new for item in reverted for new in item["rows"]]
        outcome = {
            "success": bool(reverted) and not refused,
            "ref": str(ref),
            # what takes this revert back: its own group, or the one row it wrote (None: it wrote none)
            "undo_ref": (f"revert:{group['revert']}" if "revert" in group else str(written[0]))
            if written and ("revert" in group or len(written) == 1)
            else None,
            "reverted": reverted,
            "refused": refused,
            "skipped": skipped,
        }
        return {**outcome, **_shortfall(reverted, refused, preview=False)}

    def _revert_fact(self, entry: JournalEntry, actor: str) -> dict[str, Any]:
        fact_id = entry.detail["fact_id"]
        if entry.action == "fact_forget":
            return self._facts.add(entry.before, session_id=entry.session_id, message_id=entry.message_id, actor=actor)
        if entry.action == "fact_add":
            return self._facts.forget(fact_id=fact_id, actor=actor)
        return self._facts.reword(fact_id, entry.after or "", entry.before or "", actor=actor)

    def _apply(self, row: Row, plan: dict[str, Any], actor: str, skill_md_only: bool = False) -> dict[str, Any]:
        try:
            if row.subsystem == "memory":
                return self.home.memory.undo(row.id, actor=actor)
            if row.action in ("pin", "unpin"):  # the pin the row found, as its plan read it
                found = self._entry(row).before == "True"
                result = (self.home.curator.pin if found else self.home.curator.unpin)(row.target)
                if result.get("changed") is False:  # set so meanwhile: nothing reverted
                    return {"success": False, "error": result["message"]}
                return result
            if row.subsystem == "providers":
                return self._revert_fact(self._entry(row), actor)
            if row.subsystem == "approvals":
                return self.home.approvals.restore(row.target, journal_id=row.id, actor=actor)
            if _outside_skill(row):
                return self._revert_outside(self._entry(row), actor, skill_md_only)
            if row.subsystem == "sessions":
                changed = self.home.archive.set_archived(
                    row.target, row.action == "unarchive", actor=actor, only=_flipped(self._entry(row))
                )
                undone = "unarchived" if row.action == "archive" else "archived again"
                return {"success": True, "message": f"{counted(changed, 'session')} {undone}."}
            return self.home.curator.rollback(plan["ledger_id"])
        except WorkbenchError as exc:
            return exc.to_dict()
