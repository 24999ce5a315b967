"""Skill changes made outside the workbench (a Hermes agent, an editor), journaled as ``external``.

Memory edits no workbench process made are journaled entry by entry; this does the same
for skills, one row per SKILL.md created, edited, removed, archived (moved into the archive
folder, as Hermes's curator does) or restored (its name gone from the archive since the last
look, as Hermes's ``restore_skill`` moves it out; a categorised skill archived and restored between
two looks, which Hermes puts back flat, is both, ``_round_trips``), and per skill pinned or unpinned in ``.usage.json``
(Hermes's ``skills pin``), and per skill whose lifecycle ``state`` changed there (Hermes's curator marking it
stale or reactivating it: ``STATE_CHANGES``; several state changes, archives and restores in one look share
an ``edit`` in their detail, one ``outside:`` group on the Timeline, as a curator pass is one), and per
support file created, edited or removed under references/,
templates/, scripts/ or assets/ (Hermes's ``write_file`` and ``remove_file``; a skill created, removed,
archived or restored is one row, its files with it), so the Timeline can say
what a background process changed. ``record`` compares the active skills' SKILL.md
files with what it saw last time (by hash; a file whose size and mtime did not move is
not read again). A change is ours, not outside, when some workbench process journaled a
change of that skill (under its old or new name) or of that file (under one of the
change's ``roots``: a rollback names one skill but may restore or remove others) since
the last look: every skill change journals its row, with its roots, before it touches a
file, and the look after a row still pending reads it again once it is committed, so a
change in progress is never taken for an outside one.
Two workbenches watching one home journal an outside change once: a row is not written
again when the newest one for that file says the same.

What a look saw is kept in workbench.db (``skills_looked``, and in ``skills_look`` the
journal row it had read up to, the pins, the archive's names and when; the archive folder's mtime
in ``skills_look_archive``; its support files in ``skills_looked_files``, and in ``skills_look_files``
the row and time of the look that kept them, which an earlier version's look leaves behind: a file
change is ours when journaled after the older of the two rows), so a process's
first look compares with the last look of any workbench process: a skill Hermes changed
while none watched is journaled when the TUI next opens, or ``workbench timeline`` next runs.
Each change of ours takes a look before and after it (``changes.looked_around``), so an
outside change made after ours, with no TUI between, is not taken for ours; those looks read
only what the change touches (``_record_scoped``), so a change costs about the same in a
library of 50 skills as of 1,000, and leave the rest to the next full look. Such a row is dated by the file's mtime
where there is one (never before that last look, nor after now) and notes when it was
seen (``seen_at``) and that it came after the last look (``not_before``). Only the very
first look in a home takes the baseline alone (before it, no one knows what changed).

A look also keeps the text of each active SKILL.md it hashes, one copy per distinct text
(``skills_looked_texts``), and an outside edit's or removal's row names the hash the file had
(``was``; a removal, the support files last seen with it, ``files``), so the Timeline can show
what it changed and put its text back (``Timeline.outside_texts``). A look kept by an earlier
version kept hashes alone: the next look reads each file whose text it lacks, once.
"""

from __future__ import annotations

import functools
import json
import os
import secrets
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..curator.ledger import sha256
from ..fileio import UnsafePath
from ..values import json_value
from .discovery import ARCHIVE_DIR, Found
from .usage import parse_iso
from .validation import ALLOWED_SUBDIRS

if TYPE_CHECKING:
    from ..home import Home

CREATED, EDITED, REMOVED, ARCHIVED, PINNED, UNPINNED = "created", "edited", "removed", "archived", "pinned", "unpinned"
# a skill's lifecycle state set outside in .usage.json (Hermes's curator: ``apply_automatic_transitions``), by
# the state it was given; a state no view knows reads as active
STATE_CHANGES = {"stale": "marked stale", "active": "reactivated", "archived": "marked archived"}
# skills rows that record a Curator's decision: they touch no file and no pin (nor can they be reverted)
RECORD_ONLY = ("consolidate_refused", "mark_stale", "reactivate")
RESTORED = "restored"  # a SKILL.md whose name left the archive since the last look (Hermes's restore_skill)
# the changes of one look that are one group when several arrive together (a Hermes curator pass)
_LIFECYCLE = (*STATE_CHANGES.values(), ARCHIVED, RESTORED)
# the changes Hermes's curator makes on its own (``apply_automatic_transitions``), credited to a pass of it found
# since the last look: its ``.curator_state`` time, in the row's detail under this key
HERMES_PASS = "hermes_curator_pass"
_PASS_MAKES = (*STATE_CHANGES.values(), ARCHIVED)
_PASS_SLACK = 60.0  # seconds: a pass that began just before the last look may have moved skills after it
# the skills rows that make a change of that skill or file ours (``_journaled``)
_OURS = f"subsystem = 'skills' AND action NOT IN ('external', {', '.join(repr(a) for a in RECORD_ONLY)})"

# the archive folder's mtime at the look kept (``at``: that look's; a version that keeps no mtime moves the
# look's own ``at`` on, so its look reads as one whose mtime is not known): a table of its own, as a look
# kept by an earlier version still reads and an earlier version still writes ``skills_look`` as it did
_ARCHIVE_SCHEMA = """
CREATE TABLE IF NOT EXISTS skills_look_archive (
    one INTEGER PRIMARY KEY CHECK (one = 1), at REAL NOT NULL, mtime_ns INTEGER NOT NULL
);
"""
# each active skill's support files at the look that kept them, and that look's mark and time: tables of their
# own, which an earlier version neither reads (it takes every ``skills_looked`` row for a SKILL.md) nor moves on
_FILES_SCHEMA = """
CREATE TABLE IF NOT EXISTS skills_looked_files (
    skill TEXT NOT NULL, path TEXT NOT NULL, name TEXT NOT NULL, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL,
    sha TEXT NOT NULL, PRIMARY KEY (skill, path)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS skills_look_files (
    one INTEGER PRIMARY KEY CHECK (one = 1), journal_id INTEGER NOT NULL, at REAL NOT NULL
);
"""
# the skills whose lifecycle state was not ``active`` at the look kept ({name: state}, as JSON): a table of its own,
# which an earlier version neither reads nor moves on (a look kept before it: states not known, a baseline)
_STATES_SCHEMA = """
CREATE TABLE IF NOT EXISTS skills_look_states (one INTEGER PRIMARY KEY CHECK (one = 1), states TEXT NOT NULL);
"""
# the text of each SKILL.md a look hashed, by that hash (one copy per distinct text), so an outside edit's or
# removal's row (its ``sha`` and ``was``) can show and put back what it changed (``texts``): a text no look keeps
# and no outside row names is dropped (``_keep_entries``). A table of its own, which an earlier version neither
# reads nor writes (a look it kept leaves texts unknown: they are read again, once, by the next look of ours)
_TEXTS_SCHEMA = """
CREATE TABLE IF NOT EXISTS skills_looked_texts (sha TEXT PRIMARY KEY, text BLOB NOT NULL) WITHOUT ROWID;
"""
MAX_TEXT = 1 << 20  # bytes of a SKILL.md a look keeps the text of (Hermes refuses one far smaller)
_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS skills_looked (
    path TEXT PRIMARY KEY, name TEXT NOT NULL, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, sha TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS skills_look (
    one INTEGER PRIMARY KEY CHECK (one = 1), journal_id INTEGER NOT NULL, pins TEXT NOT NULL,
    archived TEXT NOT NULL, at REAL NOT NULL
);
"""
    + _ARCHIVE_SCHEMA
    + _FILES_SCHEMA
    + _STATES_SCHEMA
    + _TEXTS_SCHEMA
)


@dataclass(frozen=True)
class _Seen:
    name: str
    stamp: tuple[int, int]  # mtime_ns, size
    sha: str


@dataclass(frozen=True)
class _File(_Seen):
    skill: str  # its skill's SKILL.md, as ``_Look.seen`` keys it

    def inside(self, rel: str) -> str:
        """Its path ``rel`` (under skills/) in its skill's folder, as Hermes's ``file_path`` names it."""
        return rel[len(self.skill) - len("SKILL.md") :]


@dataclass(frozen=True)
class _Look:
    """What one look saw: each active SKILL.md (path relative to skills/), the skills pinned, the
    name of each copy in the archive (a name archived twice is there twice), the journal row it had
    read up to, when it looked, and the archive folder's mtime (0: no archive; None: not known, a
    look kept before it was kept); each active skill's support files (path relative to skills/),
    and the (mark, time) of the look that last kept those (None: none did, a look kept by an earlier
    version; an earlier version's look moves ``mark`` and ``at`` on alone)."""

    seen: dict[str, _Seen]
    pins: frozenset[str]
    archived: tuple[str, ...]
    mark: int
    at: float
    archive_stamp: int | None = None
    files: dict[str, _File] = field(default_factory=dict)
    files_look: tuple[int, float] | None = None
    states: dict[str, str] | None = None  # the skills not ``active`` in .usage.json (None: not known)


@dataclass
class Scope:
    """One change of ours, for the looks around it (``changes.looked_around``): the skills it names
    (their pins are its to set), its roots (home-relative, as its journal row keeps them), its row
    once begun; and from the look before it, the names of the archive's copies under its roots and
    the row after which that look took a change for ours."""

    names: frozenset[str]
    roots: tuple[str, ...]
    row: int | None = None
    copies: tuple[str, ...] | None = None
    mark: int | None = None


def _names(raw: str) -> list[str]:
    values = json_value(raw, [])
    return [v for v in values if isinstance(v, str)] if isinstance(values, list) else []


class OutsideChanges:
    def __init__(self, home: Home):
        self.home = home
        self._last: _Look | None = None  # this process's last look
        self._lock = threading.Lock()  # the watcher's thread and a screen's worker may both ask
        self._texts: dict[str, bytes] = {}  # the SKILL.md texts read since the last keep, by hash
        self._kept_shas: set[str] | None = None  # the hashes whose text a look kept (``_kept_hashes``)

    def texts(self, shas: Iterable[str]) -> dict[str, bytes]:
        """The SKILL.md texts a look kept, of those hashes (a hash whose text is not known is left out)."""
        wanted = sorted({sha for sha in shas if isinstance(sha, str)})
        if not wanted:
            return {}
        rows = self._kept_rows(
            "SELECT sha, text FROM skills_looked_texts WHERE sha IN (SELECT value FROM json_each(?))",
            json.dumps(wanted),
        )
        return {sha: bytes(text) for sha, text in rows}

    def _kept_hashes(self) -> set[str]:
        """The hashes whose text a look kept: read once, then kept so by ``_keep_entries`` (the watcher looks
        on every change under skills/, and a look that changed nothing should not ask workbench.db)."""
        if self._kept_shas is None:
            self._kept_shas = {sha for (sha,) in self._kept_rows("SELECT sha FROM skills_looked_texts")}
        return self._kept_shas

    def _kept_rows(self, sql: str, *params: str) -> list[tuple]:
        """Rows of ``skills_looked_texts``; none before a look of this version made it."""
        if not self.home.journal.exists():
            return []
        try:
            return self.home.journal.connection().execute(sql, params).fetchall()
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise
            return []

    def record(self, scope: Scope | None = None) -> list[int]:
        """Journal each skill created, edited or removed outside the workbench since the last call; their row ids.
        ``scope``: a look before or after that change of ours, at what it touches only where it can
        (``_record_scoped``)."""
        if self.home.read_only:  # a read-only home is never written, so nothing is journaled
            return []
        with self._lock:
            try:
                if scope is not None and scope.row is None:  # before the change: what its roots hold in the archive
                    scope.copies = self._copies(scope.roots)
                ids = None if scope is None else self._record_scoped(scope)
                return self._record_full(scope) if ids is None else ids
            except BaseException:
                self._kept_shas = None  # (a keep rolled back: what is kept is read again)
                raise

    def _record_full(self, scope: Scope | None) -> list[int]:
        last = self._last or self._kept()  # a first look goes on from the last one any process kept
        found_later = self._found_later(last)
        now = self._look(last)
        ids = []
        if last is not None:
            since = self._since(last, scope)
            moved = None not in (last.archive_stamp, now.archive_stamp) and last.archive_stamp != now.archive_stamp
            ids = self._journal_changes(
                last, now.seen, now.pins, lambda: now.archived, since, found_later, moved, now.states
            )
            ids += self._journal_files(last, now.seen, now.files, since, found_later)
        if scope is not None and scope.row is None:
            scope.mark = now.mark if last is None else last.mark
        self._keep(last, now)
        self._last = now  # once journaled and kept: a failed step is retried from the same last look
        return ids

    @staticmethod
    def _since(last: _Look, scope: Scope | None) -> int:
        """The row after which a skills row makes a change ours: for the look after a change of ours, no
        later than where the look before it compared from (another process may have moved the kept
        look past our row meanwhile), as a look after a look of its own always did."""
        return last.mark if scope is None or scope.mark is None else min(last.mark, scope.mark)

    def _found_later(self, last: _Look | None) -> bool:
        """Whether a change found now was made while no workbench process watched (a first look in this
        process, on a look kept a while ago)."""
        return self._last is None and last is not None and last.at < self.home.clock.now() - 1

    def _look(self, last: _Look | None) -> _Look:
        mark = self._settled_mark()  # first: a change of ours committed during the scan is after it, so ours
        marks = self.home.skills.usage.marks()  # (one read of .usage.json for both)
        pins, states = marks if marks is not None else (None, last.states if last else None)  # unreadable: as before
        stamp = self._archive_stamp()  # before the archive is listed: a move in or out meanwhile moves it on
        seen, files = self._scan(last)
        at = self.home.clock.now()
        return _Look(
            seen,
            frozenset(pins) if pins is not None else last.pins if last else frozenset(),  # unreadable: as before
            tuple(sorted(s.name for s in self.home.skills.scanner.archived())),
            mark,
            at,
            stamp,
            files,
            (mark, at),
            states,
        )

    def _archive_stamp(self) -> int | None:
        """The archive folder's mtime (a copy moved in or out moves it), 0 when there is no archive, None
        when it cannot be told."""
        try:
            return os.stat(self.home.skills_dir / ARCHIVE_DIR, follow_symlinks=False).st_mtime_ns
        except FileNotFoundError:
            return 0
        except (OSError, ValueError):
            return None

    def _record_scoped(self, scope: Scope) -> list[int] | None:
        """A look at only what one change of ours touches, seeing there what a full look would; None when
        only a full look will do: no look kept yet (the first takes the baseline), a path only a walk can
        tell (``Scanner.under``), or, after the change, another row that makes a change ours between the
        kept mark and now (the next full look must still read it, and this look does not take in its
        change), or support files no look kept yet (the next full look takes their baseline). It compares
        and keeps the SKILL.md files at, under or holding the change's roots, every file last seen
        declaring one of their names or the change's, those skills' support files, and those names' pins. All else
        stays as last seen, for the next full look to compare: other pins, the archive but for the
        copies this change moved in or out (under its roots, before and after it), and the time of the
        last look (the earliest a change still to find may date from)."""
        last = self._last or self._kept(entries=False)
        row = scope.row  # (set: this is the look after the change)
        if last is None or last.files_look is None or (row is not None and scope.copies is None):
            return None
        mark = self._settled_mark()
        if row is not None and self._others(last.mark, mark, row):
            return None
        window = self._window(last, scope)
        if window is None:
            return None
        before, now, names, skills = window
        if last is self._last:
            files_before = {rel: f for rel, f in last.files.items() if f.skill in before or f.skill in now}
        else:
            files_before = self._kept_files(self.home.journal.connection(), before.keys() | now.keys())
        files = self._files_all(skills, files_before)
        marks = self.home.skills.usage.marks(names)
        pins = None if marks is None else frozenset(marks[0])
        scanner = self.home.skills.scanner
        archived = functools.cache(lambda: tuple(sorted(s.name for s in scanner.archived())))
        now_pins = last.pins if pins is None else (last.pins - names) | pins
        states = None if marks is None else marks[1]
        since, found_later = self._since(last, scope), self._found_later(last)
        seen = replace(last, seen=before, files=files_before)
        ids = self._journal_changes(
            seen, now, now_pins, archived, since, found_later, False, _merged(last.states, names, states)
        )
        ids += self._journal_files(seen, now, files, since, found_later)
        moved: Counter[str] = Counter()
        if row is None:
            scope.mark = last.mark
        else:
            moved.update(self._copies(scope.roots))
            moved.subtract(scope.copies or ())
        self._keep_window(
            last,
            (before, now),
            (files_before, files),
            names,
            (pins, states),
            moved,
            None if row is None else (mark, row),
        )
        return ids

    def _window(
        self, last: _Look, scope: Scope
    ) -> tuple[dict[str, _Seen], dict[str, _Seen], frozenset[str], list[Found]] | None:
        """(as last seen, as now) each active SKILL.md the scope reaches: of the skills at, under or
        holding its roots, and those seen last declaring a name it or they declare; those names, and
        the skills found now. None when only a walk can tell which files those are."""
        prefix = self.home.skills.ledger.rel(self.home.skills_dir)
        if any(root == prefix or prefix.startswith(f"{root}/") for root in scope.roots):
            return None  # the whole library
        rels = [root[len(prefix) + 1 :] for root in scope.roots if root.startswith(f"{prefix}/")]
        before: dict[str, _Seen] = {}
        now: dict[str, _Seen] = {}
        names = scope.names
        skills: dict[str, Found] = {}
        while True:
            before |= self._kept_entries(last, rels, ())
            for rel in rels:
                found = self.home.skills.scanner.under(rel)
                if found is None:
                    return None
                now |= self._seen_all(found, before)
                skills |= {skill.rel: skill for skill in found}
            names |= {s.name for s in (*before.values(), *now.values())}
            rels = [rel for rel in self._kept_entries(last, (), names) if rel not in before]
            if not rels:
                return before, now, names, list(skills.values())

    def _kept_entries(self, last: _Look, rels: Iterable[str], names: Iterable[str]) -> dict[str, _Seen]:
        """What ``last`` saw of the SKILL.md files at, under or holding ``rels``, or declaring one of
        ``names``: from this process's look, else from the look kept in workbench.db."""
        rels, names = list(rels), set(names)
        exact = {*rels, *(f"{rel.rsplit('/', n)[0]}/SKILL.md" for rel in rels for n in range(1, rel.count("/") + 1))}
        below = tuple(f"{rel}/" for rel in rels)
        if last is self._last:
            return {rel: s for rel, s in last.seen.items() if s.name in names or rel in exact or rel.startswith(below)}
        query = (
            "SELECT * FROM skills_looked WHERE name IN (SELECT value FROM json_each(?)) "
            "OR path IN (SELECT value FROM json_each(?))"
        )
        query += " OR (path > ? AND path < ?)" * len(below)  # ('0' follows '/')
        values = [json.dumps(sorted(names)), json.dumps(sorted(exact))] + [v for b in below for v in (b, f"{b[:-1]}0")]
        rows = self.home.journal.connection().execute(query, values)
        return {path: _Seen(name, (mtime_ns, size), sha) for path, name, mtime_ns, size, sha in rows}

    def _copies(self, roots: Iterable[str]) -> tuple[str, ...]:
        """The names of the archive's copies at or under ``roots`` (home-relative)."""
        archive = f"{self.home.skills.ledger.rel(self.home.skills_dir)}/{ARCHIVE_DIR}"
        if any(root == archive or archive.startswith(f"{root}/") for root in roots):
            folders = None  # the whole archive
        else:
            folders = {root[len(archive) + 1 :].split("/")[0] for root in roots if root.startswith(f"{archive}/")}
            if not folders:
                return ()
        return tuple(sorted(s.name for s in self.home.skills.scanner.archived(folders)))

    def _journal_changes(
        self,
        last: _Look,
        now: dict[str, _Seen],
        pins: frozenset[str],
        archived: Callable[[], tuple[str, ...]],
        since: int,
        found_later: bool,
        archive_moved: bool = False,
        states: dict[str, str] | None = None,
    ) -> list[int]:
        """Journal what differs between ``last`` and ``now`` (the SKILL.md files, the ``pins`` and the
        lifecycle ``states`` now) that no workbench process journaled after row ``since``; ``archived``,
        the archive's names now, is read only if needed. ``archive_moved``: whether a copy went into or
        out of the archive since ``last`` (``_round_trips``). A state is compared only where both looks
        know it; its change is ours when any skills row of ours names the skill (``_stated``), our
        Curator's stale marks and reactivations too, as they journal the change themselves. Several
        lifecycle changes (state, archive, restore) in one look are one group, as a Curator pass is. A
        change of ours that touched its folder (``_theirs``) makes a state change ours too."""
        theirs = self._theirs(since)
        stated = self._stated(since) if last.states is not None and states is not None else None

        def restated(rel: str, old: _Seen | None, new: _Seen | None) -> str | None:
            """The state ``new`` was given outside since ``old`` (its change's words), or None: not when
            a change of ours touched the skill's folder (a rollback puts back the usage records of the
            skills it restores) or named it."""
            if stated is None or old is None or new is None or {old.name, new.name} & stated:
                return None
            if not theirs(rel, old, new):
                return None
            assert last.states is not None and states is not None
            state = states.get(new.name, "active")
            return STATE_CHANGES.get(state) if state != last.states.get(old.name, "active") else None

        before = last.seen
        changed = []
        for rel in sorted(now.keys() | before.keys()):
            old, new = before.get(rel), now.get(rel)
            edited = old is not None and new is not None and new.sha != old.sha
            pinned = old is not None and new is not None and (new.name in pins) != (old.name in last.pins)
            state = restated(rel, old, new)
            if old is not None and new is not None and not edited and not pinned and state is None:
                continue
            if theirs(rel, old, new):
                changed.append(rel)
        trips = self._round_trips(before, now, changed) if archive_moved else {}
        gone_in = set(trips.values())
        planned: list[tuple[str, str, _Seen, str | None, float | None, dict]] = []
        for rel in changed:
            if rel in gone_in:
                continue  # said just before the copy that came back out
            for one in (trips[rel], rel) if rel in trips else (rel,):
                old, new = before.get(one), now.get(one)
                if new is None:  # (Hermes's curator archives a skill by moving its folder into the archive)
                    assert old is not None
                    unpinned = old.name in last.pins and old.name not in pins  # in the same look: said first
                    gone = ARCHIVED if one in gone_in or old.name in archived() else REMOVED
                    changes = [UNPINNED] * unpinned + [gone]
                elif old is None:  # back from the archive (Hermes's restore_skill moves its copy out), else new
                    restored = one in trips or last.archived.count(new.name) > archived().count(new.name)
                    pinned = new.name in pins and new.name not in last.pins  # in the same look: said after
                    changes = [RESTORED if restored else CREATED] + [PINNED] * pinned
                else:  # a pin set or cleared in .usage.json (Hermes's `skills pin`), on a skill still here
                    edited = new.sha != old.sha
                    pinned = (new.name in pins) != (old.name in last.pins)
                    state = restated(one, old, new)  # (Hermes's curator marking it stale, or reactivating it)
                    changes = [EDITED] * edited + [PINNED if new.name in pins else UNPINNED] * pinned
                    changes += [state] if state is not None else []
                for change in changes:
                    shown = new or old
                    assert shown is not None  # every change has a before, a now, or both
                    sha = new.sha if new and change in (CREATED, RESTORED, EDITED) else None
                    # (a copy back from a round trip kept its mtime: it says nothing of when)
                    dated = new and change in (CREATED, RESTORED, EDITED) and one not in trips
                    mtime = new.stamp[0] / 1e9 if new and dated else None
                    planned.append((change, one, shown, sha, mtime, _was(last, one, old, change)))
        lifecycle = [p for p in planned if p[0] in _LIFECYCLE]
        edit = secrets.token_hex(4) if len(lifecycle) > 1 else None
        credit = self._hermes_pass(last.at) if any(p[0] in _PASS_MAKES for p in planned) else None
        ids = []
        for change, one, shown, sha, mtime, was in planned:
            group = edit if change in _LIFECYCLE else None
            if credit is not None and change in _PASS_MAKES:
                was = {**was, HERMES_PASS: credit}
            when = (mtime, last.at) if found_later else None
            row = self._journal(change, one, shown.name, sha, since, when, None, group, was)
            if row is not None:
                ids.append(row)
        return ids

    def _hermes_pass(self, since: float) -> str | None:
        """When Hermes's own curator made a pass since the look at ``since`` (its ``skills/.curator_state``
        says when) and no pass of ours came after it: that pass's time, so the stale marks and archives this
        look found are credited to it, not to an unknown writer; else None. The pass may have begun just
        before that look, but it writes its state once its changes are made: a state written before that
        look is of a pass whose changes that look found, and credits nothing it finds now."""
        path = self.home.skills_dir / ".curator_state"
        try:
            state = json.loads(self.home.links.read_text(path))
            written = path.stat().st_mtime
        except (OSError, ValueError, RecursionError, UnsafePath):
            return None
        ran = state.get("last_run_at") if isinstance(state, dict) else None
        at = parse_iso(ran)
        if at is None or written <= since or not since - _PASS_SLACK <= at <= self.home.clock.now():
            return None
        ours = self.home.journal.connection().execute(  # (our Curator's pass journals a run row as it writes the state)
            "SELECT 1 FROM journal WHERE subsystem = 'curator' AND action = 'run' AND at >= ? LIMIT 1", (at - 1,)
        )
        return None if ours.fetchone() is not None else str(ran)

    def _journal_files(
        self, last: _Look, now: dict[str, _Seen], files: dict[str, _File], since: int, found_later: bool
    ) -> list[int]:
        """Journal each support file created, edited or removed (``files``: as now) that no workbench
        process journaled after row ``since``, nor after the look that kept ``last.files``, of a skill
        whose SKILL.md is where it was (a skill created, removed, archived or restored is one row, its
        files with it). Nothing before a look kept them: that look is their baseline."""
        if last.files_look is None:
            return []
        mark, looked_at = last.files_look
        since = min(since, mark)
        theirs = self._theirs(since)
        ids = []
        for rel in sorted(files.keys() | last.files.keys()):
            old, new = last.files.get(rel), files.get(rel)
            shown = new or old
            assert shown is not None  # (a key of one or the other)
            if (old and new and old.sha == new.sha) or shown.skill not in last.seen or shown.skill not in now:
                continue
            if not theirs(rel, old, new):
                continue
            change = CREATED if old is None else REMOVED if new is None else EDITED
            dated = (new.stamp[0] / 1e9 if new else None, looked_at) if found_later else None
            row = self._journal(change, rel, shown.name, new.sha if new else None, since, dated, shown.inside(rel))
            if row is not None:
                ids.append(row)
        return ids

    def _theirs(self, since: int) -> Callable[[str, _Seen | None, _Seen | None], bool]:
        """Whether a file (path under skills/; as last seen, as now) changed outside: no workbench
        process journaled, after row ``since``, a change of its skill (by a name it had: a rename
        journals the old one) or of a root at or above it."""
        ours, roots = self._journaled(since)
        prefix = self.home.skills.ledger.rel(self.home.skills_dir)

        def theirs(rel: str, old: _Seen | None, new: _Seen | None) -> bool:
            if {seen.name for seen in (old, new) if seen} & ours:
                return False
            path = f"{prefix}/{rel}"  # home-relative, as journaled roots are
            return not any(path == root or path.startswith(f"{root}/") for root in roots)

        return theirs

    @staticmethod
    def _round_trips(before: dict[str, _Seen], now: dict[str, _Seen], changed: list[str]) -> dict[str, str]:
        """The skills archived and restored between two looks, as Hermes does it (restored path: the path
        it had): its ``archive_skill`` moves ``<category>/<name>/`` to ``.archive/<name>/`` and its
        ``restore_skill`` moves that to ``<name>/``, never back into the category. A SKILL.md gone from a
        category's folder and one of the same name and content come at ``<folder>/SKILL.md``, seen in a
        look after which a copy moved into or out of the archive, made that trip; the same move by hand
        leaves the archive alone, and reads as removed and created. Two that could be either: neither."""
        gone = [rel for rel in changed if rel not in now and rel.count("/") >= 2]
        came = {rel for rel in changed if rel not in before and rel.count("/") == 1}
        trips: dict[str, list[str]] = {}
        for rel in gone:
            back = f"{rel.split('/')[-2]}/SKILL.md"
            if back in came and (now[back].name, now[back].sha) == (before[rel].name, before[rel].sha):
                trips.setdefault(back, []).append(rel)
        return {back: rels[0] for back, rels in trips.items() if len(rels) == 1}

    def _kept(self, entries: bool = True) -> _Look | None:
        """The last look any workbench process kept (None before the first look in this home, which
        makes the tables); without its ``entries`` (``_kept_entries`` reads those a scoped look needs)."""
        conn = self.home.journal.connection()
        query = (
            "SELECT look.journal_id, pins, archived, look.at, archive.mtime_ns, files.journal_id, files.at "
            "FROM skills_look AS look LEFT JOIN skills_look_archive AS archive ON archive.at = look.at "
            "LEFT JOIN skills_look_files AS files ON files.one = 1"
        )
        try:
            row = conn.execute(query).fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise
            # no look yet, or one kept by a version that kept no archive mtime or support files: not known
            conn.executescript(_SCHEMA)
            row = conn.execute(query).fetchone()
        if row is None:
            return None
        seen = {
            path: _Seen(name, (mtime_ns, size), sha)
            for path, name, mtime_ns, size, sha in (conn.execute("SELECT * FROM skills_looked") if entries else ())
        }
        files = self._kept_files(conn, None) if entries else {}
        files_look = None if row[5] is None else (row[5], row[6])
        pins, archived = frozenset(_names(row[1])), tuple(sorted(_names(row[2])))
        return _Look(seen, pins, archived, row[0], row[3], row[4], files, files_look, self._kept_states(conn))

    @staticmethod
    def _kept_states(conn: sqlite3.Connection) -> dict[str, str] | None:
        """The states the look kept in workbench.db saw (None: none kept, as by an earlier version)."""
        try:
            row = conn.execute("SELECT states FROM skills_look_states").fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise
            conn.execute(_STATES_SCHEMA)  # (not executescript: it would commit a transaction the caller has open)
            return None
        values = json_value(row[0], None) if row else None
        if not isinstance(values, dict):
            return None
        return {k: v for k, v in values.items() if isinstance(k, str) and isinstance(v, str)}

    @staticmethod
    def _kept_files(conn: sqlite3.Connection, skills: Iterable[str] | None) -> dict[str, _File]:
        """The support files the look kept in workbench.db saw, of the ``skills`` (SKILL.md paths) or all."""
        query = "SELECT path, name, mtime_ns, size, sha, skill FROM skills_looked_files"
        rows = (
            conn.execute(query)
            if skills is None
            else conn.execute(f"{query} WHERE skill IN (SELECT value FROM json_each(?))", (json.dumps(sorted(skills)),))
        )
        return {path: _File(name, (mtime_ns, size), sha, skill) for path, name, mtime_ns, size, sha, skill in rows}

    def _keep(self, last: _Look | None, now: _Look) -> None:
        """Keep this look for the next process's first one: the files whose stamp or hash moved, the
        pins, the archive's names, the mark and the time (a later change is dated no earlier). A look
        that found all as kept writes nothing: its time is then the last look's, an earlier bound."""
        before = last.seen if last else {}
        files_look = last.files_look if last else None
        if (
            last is not None
            and files_look is not None
            and (
                before,
                last.pins,
                last.archived,
                last.mark,
                last.archive_stamp,
                last.files,
                files_look[0],
                last.states,
            )
            == (now.seen, now.pins, now.archived, now.mark, now.archive_stamp, now.files, now.mark, now.states)
        ):
            if not self._texts:  # (texts read again, where an earlier version kept their hashes alone, are kept)
                return  # (the watcher looks on every change under skills/: the kept look still says it all)
        with self.home.journal.transaction() as conn:
            self._keep_entries(conn, before, now.seen)
            if files_look is None:  # (none kept: the table holds nothing a look of ours kept)
                conn.execute("DELETE FROM skills_looked_files")
            self._keep_files(conn, last.files if last is not None and files_look is not None else {}, now.files)
            conn.execute("INSERT OR REPLACE INTO skills_look_files VALUES (1, ?, ?)", (now.mark, now.at))
            conn.execute(
                "INSERT OR REPLACE INTO skills_look VALUES (1, ?, ?, ?, ?)",
                (now.mark, json.dumps(sorted(now.pins)), json.dumps(now.archived), now.at),
            )
            if now.archive_stamp is not None:
                conn.execute("INSERT OR REPLACE INTO skills_look_archive VALUES (1, ?, ?)", (now.at, now.archive_stamp))
            if now.states is not None:
                conn.execute(_STATES_SCHEMA)
                conn.execute("INSERT OR REPLACE INTO skills_look_states VALUES (1, ?)", (json.dumps(now.states),))

    def _keep_window(
        self,
        last: _Look,
        skill_mds: tuple[dict[str, _Seen], dict[str, _Seen]],
        files: tuple[dict[str, _File], dict[str, _File]],
        names: frozenset[str],
        usage: tuple[frozenset[str] | None, dict[str, str] | None],
        moved: Counter[str],
        passed: tuple[int, int] | None,
    ) -> None:
        """Keep what a scoped look saw: its SKILL.md and support files (each as last seen, as now),
        which of ``names`` are pinned and their states not active (``usage``; None: the usage file said
        nothing), the copies its change
        ``moved`` into the archive (or out: negative), and after the change the new mark and the
        change's row, ``passed``; all else as kept. The look kept in workbench.db may be another
        process's: its mark moves only where no other row lies between, and the support files' mark
        with it only where they were at one (an earlier version's look moves the first alone)."""
        (before, now), (files_before, files_now), (pins, states) = skill_mds, files, usage

        def merged(kept_pins: frozenset[str], archived: Iterable[str]) -> tuple[frozenset[str], tuple[str, ...]]:
            copies = Counter(archived)
            copies.update(moved)
            return kept_pins if pins is None else (kept_pins - names) | pins, tuple(sorted(copies.elements()))

        new_pins, archived = merged(last.pins, last.archived)
        mark = last.mark if passed is None else passed[0]
        new_states = _merged(last.states, names, states)
        if (before, last.pins, last.archived, last.mark, files_before, last.states) == (
            now,
            new_pins,
            archived,
            mark,
            files_now,
            new_states,
        ) and not self._texts:
            return
        with self.home.journal.transaction() as conn:
            self._keep_entries(conn, before, now)
            self._keep_files(conn, files_before, files_now)
            was, kept_pins, kept_archived = conn.execute(
                "SELECT journal_id, pins, archived FROM skills_look"
            ).fetchone()
            kept = passed[0] if passed is not None and passed[0] > was and not self._others(was, *passed) else was
            kept_pins, kept_archived = merged(frozenset(_names(kept_pins)), _names(kept_archived))
            conn.execute(
                "UPDATE skills_look SET journal_id = ?, pins = ?, archived = ?",
                (kept, json.dumps(sorted(kept_pins)), json.dumps(kept_archived)),
            )
            conn.execute("UPDATE skills_look_files SET journal_id = ? WHERE journal_id = ?", (kept, was))
            kept_states = _merged(self._kept_states(conn), names, states)
            if kept_states is not None:
                conn.execute("UPDATE skills_look_states SET states = ?", (json.dumps(kept_states),))
        if self._last is not None:
            seen = {rel: s for rel, s in self._last.seen.items() if rel not in before} | now
            kept_files = {rel: f for rel, f in self._last.files.items() if rel not in files_before} | files_now
            files_look = self._last.files_look
            if files_look is not None and files_look[0] == last.mark:
                files_look = (mark, files_look[1])
            self._last = _Look(
                seen, new_pins, archived, mark, last.at, last.archive_stamp, kept_files, files_look, new_states
            )

    @staticmethod
    def _keep_files(conn: sqlite3.Connection, before: dict[str, _File], now: dict[str, _File]) -> None:
        """The support files whose stamp or hash moved since ``before``, and those gone."""
        conn.executemany(
            "INSERT OR REPLACE INTO skills_looked_files VALUES (?, ?, ?, ?, ?, ?)",
            [(f.skill, rel, f.name, *f.stamp, f.sha) for rel, f in now.items() if before.get(rel) != f],
        )
        conn.executemany(
            "DELETE FROM skills_looked_files WHERE skill = ? AND path = ?",
            [(before[rel].skill, rel) for rel in before.keys() - now.keys()],
        )

    def _keep_entries(self, conn: sqlite3.Connection, before: dict[str, _Seen], now: dict[str, _Seen]) -> None:
        """The files whose stamp or hash moved since ``before``, and those gone; the text of each kept (once
        per hash), and a text dropped when no file kept and no outside row names its hash any longer."""
        conn.execute(_TEXTS_SCHEMA)  # (not executescript: it would commit the caller's transaction)
        conn.executemany(
            "INSERT OR REPLACE INTO skills_looked VALUES (?, ?, ?, ?, ?)",
            [(rel, s.name, *s.stamp, s.sha) for rel, s in now.items() if before.get(rel) != s],
        )
        conn.executemany("DELETE FROM skills_looked WHERE path = ?", [(rel,) for rel in before.keys() - now.keys()])
        kept, read = self._kept_hashes(), {s.sha for s in now.values() if s.sha in self._texts}
        conn.executemany(
            "INSERT OR IGNORE INTO skills_looked_texts VALUES (?, ?)", [(sha, self._texts[sha]) for sha in sorted(read)]
        )
        kept |= read
        self._texts.clear()
        left = {s.sha for rel, s in before.items() if now.get(rel) != s} - {s.sha for s in now.values()}
        for sha in sorted(left):
            dropped = conn.execute(
                "DELETE FROM skills_looked_texts WHERE sha = ?1 "
                "AND NOT EXISTS (SELECT 1 FROM skills_looked WHERE sha = ?1) "
                "AND NOT EXISTS (SELECT 1 FROM journal WHERE subsystem = 'skills' AND action = 'external' "
                "AND instr(detail, ?1) > 0)",
                (sha,),
            )
            gone = (
                dropped.rowcount
                or not conn.execute("SELECT 1 FROM skills_looked_texts WHERE sha = ?", (sha,)).fetchone()
            )
            if gone:  # (dropped here, or already by another workbench process)
                kept.discard(sha)

    def _journal(
        self,
        change: str,
        rel: str,
        name: str,
        sha: str | None,
        since: int,
        found_later: tuple[float | None, float] | None,
        inside: str | None = None,
        edit: str | None = None,
        was: dict | None = None,
    ) -> int | None:
        """One external row, unless another workbench process watching this home journaled the same one
        after row ``since``, where this look's baseline was taken: one from before it was in that baseline
        already, so this is a change of its own (Hermes pinning again after we unpinned). ``found_later``:
        (the file's mtime, if it has one, and the last look) for a change made while none watched;
        ``inside``: a support file's path in the skill's folder (``file`` in the row); ``edit``: the
        group of the look's lifecycle changes it is one of (``edit`` in the row, as an outside memory edit's);
        ``was``: what an edited or removed SKILL.md was (``_was``)."""
        journal = self.home.journal
        with journal.transaction() as conn:
            said = conn.execute(
                "SELECT 1 FROM journal WHERE subsystem = 'skills' AND action = 'external' AND id > ? "
                "AND json_extract(detail, '$.path') = ? AND json_extract(detail, '$.change') = ? "
                "AND json_extract(detail, '$.sha') IS ? LIMIT 1",
                (since, rel, change, sha),
            ).fetchone()
            if said is not None:
                return None
            detail: dict = {"change": change, "path": rel, "sha": sha, **({"file": inside} if inside else {})}
            if edit is not None:
                detail["edit"] = edit
            detail.update(was or {})
            at = None
            if found_later is not None:
                now, (mtime, looked_at) = self.home.clock.now(), found_later
                at = now if mtime is None else min(now, max(mtime, looked_at))
                detail.update(seen_at=now, not_before=looked_at)
            rows = [{"action": "external", "detail": detail}]
            return journal.append_all("skills", name, rows, actor="external", at=at)[0]

    def _seen_all(self, skills: Iterable[Found], seen: dict[str, _Seen]) -> dict[str, _Seen]:
        """The SKILL.md of each of ``skills``, hashed only when its stamp moved since ``seen``."""
        scanner = self.home.skills.scanner
        kept = self._kept_hashes()
        found: dict[str, _Seen] = {}
        for skill in skills:
            skill_md = skill.path / "SKILL.md"
            rel = f"{skill.rel}/SKILL.md"
            stamp = scanner.stamp(skill_md)  # the walk just stat'ed it: no second stat per skill
            if stamp is None:
                continue
            old = seen.get(rel)
            unchanged = _Seen(skill.name, stamp, old.sha) if old and old.stamp == stamp else None
            if unchanged and (unchanged.sha in kept or unchanged.sha in self._texts or stamp[1] > MAX_TEXT):
                found[rel] = unchanged
                continue
            try:  # (read again, once, where an earlier version's look kept its hash alone)
                data = self.home.links.read_bytes(skill_md)
            except (OSError, UnsafePath):  # gone meanwhile, or a link the policy refuses: not a skill to report,
                if unchanged:  # unless only its text was wanted: its stamp says it is as the last look saw it
                    found[rel] = unchanged
                continue
            sha = sha256(data)
            if len(data) <= MAX_TEXT:
                self._texts[sha] = data
            found[rel] = _Seen(skill.name, stamp, sha)
        return found

    def _scan(self, last: _Look | None) -> tuple[dict[str, _Seen], dict[str, _File]]:
        """Each active SKILL.md and support file, each hashed only when its stamp moved since ``last``."""
        active = self.home.skills.scanner.active()
        return self._seen_all(active, last.seen if last else {}), self._files_all(active, last.files if last else {})

    def _files_all(self, skills: Iterable[Found], seen: dict[str, _File]) -> dict[str, _File]:
        """The support files of each of ``skills`` (``_support_files``), hashed only when a stamp moved
        since ``seen``: a look stats each file, and reads only those that changed."""
        found: dict[str, _File] = {}
        for skill in skills:
            key = f"{skill.rel}/SKILL.md"
            for inside, stamp in _support_files(skill.path):
                rel = f"{skill.rel}/{inside}"
                old = seen.get(rel)
                try:
                    sha = (
                        old.sha
                        if old and old.stamp == stamp
                        else sha256(self.home.links.read_bytes(skill.path / inside, inside=skill.path))
                    )
                except (OSError, UnsafePath):  # gone meanwhile, or a link out of the skill: not its file
                    continue
                found[rel] = _File(skill.name, stamp, sha, key)
        return found

    def _settled_mark(self) -> int:
        """The newest journal row, or just below the oldest skills row still pending: a change in
        progress is looked at again (its row is updated in place when it commits)."""
        newest, pending = (
            self.home.journal.connection()
            .execute(
                "SELECT (SELECT max(id) FROM journal), "
                "(SELECT min(id) FROM journal WHERE subsystem = 'skills' AND status = 'pending')"
            )
            .fetchone()
        )
        return min(newest or 0, pending - 1) if pending else newest or 0

    def _journaled(self, after: int) -> tuple[set[str], set[str]]:
        """The skills (names) and files (home-relative roots) some workbench process journaled a change of
        (begun, done or abandoned) after row ``after``: a pending row keeps its roots under ``resume``.
        A Curator's stale mark or reactivation touches neither files nor pins, so it makes no change ours
        (an outside edit of that skill since is still outside)."""
        rows = self.home.journal.connection().execute(
            "SELECT target, json_extract(detail, '$.absorbed'), "
            "coalesce(json_extract(detail, '$.roots'), json_extract(detail, '$.resume.roots')) "
            f"FROM journal WHERE id > ? AND {_OURS}",
            (after,),
        )
        names: set[str] = set()
        roots: set[str] = set()
        for target, absorbed, touched in rows:
            names.add(target)
            for raw, into in ((absorbed, names), (touched, roots)):
                values = json_value(raw, [])
                if isinstance(values, list):
                    into.update(v for v in values if isinstance(v, str) and v)
        return names, roots

    def _stated(self, after: int) -> set[str]:
        """The skills (names) any skills row of ours names after row ``after`` (pending ones too): a state
        change of theirs in .usage.json is ours, our Curator's stale marks and reactivations among them
        (journaled before the usage file is written), and a use, patch or restore that reactivates one."""
        rows = self.home.journal.connection().execute(
            "SELECT target, json_extract(detail, '$.absorbed') FROM journal "
            "WHERE id > ? AND subsystem = 'skills' AND action != 'external'",
            (after,),
        )
        names: set[str] = set()
        for target, absorbed in rows:
            names.add(target)
            values = json_value(absorbed, [])
            if isinstance(values, list):
                names.update(v for v in values if isinstance(v, str) and v)
        return names

    def _others(self, after: int, upto: int, row: int) -> bool:
        """Whether a row other than ``row`` that makes a change ours lies in (``after``, ``upto``]."""
        return (
            self.home.journal.connection()
            .execute(
                f"SELECT 1 FROM journal WHERE id > ? AND id <= ? AND id != ? AND {_OURS} LIMIT 1", (after, upto, row)
            )
            .fetchone()
            is not None
        )


def _was(last: _Look, rel: str, old: _Seen | None, change: str) -> dict:
    """What an edited or removed SKILL.md was, for its row: its hash (``was``: the text a look kept under it
    shows and puts back what changed, ``OutsideChanges.texts``), and for a removal, the support files the
    last look saw in its folder (``files``; none when that look kept none: not known)."""
    if old is None or change not in (EDITED, REMOVED):
        return {}
    if change == EDITED:
        return {"was": old.sha}
    files = None if last.files_look is None else sorted(f.inside(p) for p, f in last.files.items() if f.skill == rel)
    return {"was": old.sha, **({"files": files} if files is not None else {})}


def _merged(kept: dict[str, str] | None, names: Iterable[str], states: dict[str, str] | None) -> dict[str, str] | None:
    """``kept`` states with those of ``names`` as ``states`` says (None: the usage file said nothing, so as
    kept); None while no look kept any (the next full look takes their baseline)."""
    if kept is None or states is None:
        return kept
    return {name: state for name, state in kept.items() if name not in names} | states


def _support_files(folder: Path) -> list[tuple[str, tuple[int, int]]]:
    """Each file (path in ``folder``, stamp) under a skill's support folders, the only ones Hermes's
    ``skill_manage`` writes (``write_file``, ``remove_file``): references/, templates/, scripts/ and
    assets/, at any depth. Hidden names (a write's temporary file among them) are left out, and a
    folder link is not followed (it may lead out of the skill, or round)."""
    try:
        with os.scandir(folder) as entries:
            stack = [(e.path, e.name) for e in entries if e.name in ALLOWED_SUBDIRS and e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    found = []
    while stack:
        path, inside = stack.pop()
        try:
            with os.scandir(path) as entries:
                listed = [e for e in entries if not e.name.startswith(".")]
        except OSError:
            continue
        for entry in listed:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, f"{inside}/{entry.name}"))
                elif entry.is_file():
                    stat = entry.stat()
                    found.append((f"{inside}/{entry.name}", (stat.st_mtime_ns, stat.st_size)))
            except OSError:  # gone meanwhile
                continue
    return found
