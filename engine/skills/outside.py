"""Skill changes made outside the workbench (a Hermes agent, an editor), journaled as ``external``.

Memory edits no workbench process made are journaled entry by entry; this does the same
for skills, one row per SKILL.md created, edited, removed, archived (moved into the archive
folder, as Hermes's curator does) or restored (its name gone from the archive since the last
look, as Hermes's ``restore_skill`` moves it out; a categorised skill archived and restored between
two looks, which Hermes puts back flat, is both, ``_round_trips``), and per skill pinned or unpinned in ``.usage.json``
(Hermes's ``skills pin``), so the Timeline can say
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
in ``skills_look_archive``), so a process's
first look compares with the last look of any workbench process: a skill Hermes changed
while none watched is journaled when the TUI next opens, or ``workbench timeline`` next runs.
Each change of ours takes a look before and after it (``changes.looked_around``), so an
outside change made after ours, with no TUI between, is not taken for ours; those looks read
only what the change touches (``_record_scoped``), so a change costs about the same in a
library of 50 skills as of 1,000, and leave the rest to the next full look. Such a row is dated by the file's mtime
where there is one (never before that last look, nor after now) and notes when it was
seen (``seen_at``) and that it came after the last look (``not_before``). Only the very
first look in a home takes the baseline alone (before it, no one knows what changed).
"""

from __future__ import annotations

import functools
import json
import os
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..curator.ledger import sha256
from ..fileio import UnsafePath
from ..values import json_value
from .discovery import ARCHIVE_DIR, Found

if TYPE_CHECKING:
    from ..home import Home

CREATED, EDITED, REMOVED, ARCHIVED, PINNED, UNPINNED = "created", "edited", "removed", "archived", "pinned", "unpinned"
# skills rows that record a Curator's decision: they touch no file and no pin (nor can they be reverted)
RECORD_ONLY = ("consolidate_refused", "mark_stale", "reactivate")
RESTORED = "restored"  # a SKILL.md whose name left the archive since the last look (Hermes's restore_skill)
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
)


@dataclass(frozen=True)
class _Seen:
    name: str
    stamp: tuple[int, int]  # mtime_ns, size
    sha: str


@dataclass(frozen=True)
class _Look:
    """What one look saw: each active SKILL.md (path relative to skills/), the skills pinned, the
    name of each copy in the archive (a name archived twice is there twice), the journal row it had
    read up to, when it looked, and the archive folder's mtime (0: no archive; None: not known, a
    look kept before it was kept)."""

    seen: dict[str, _Seen]
    pins: frozenset[str]
    archived: tuple[str, ...]
    mark: int
    at: float
    archive_stamp: int | None = None


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

    def record(self, scope: Scope | None = None) -> list[int]:
        """Journal each skill created, edited or removed outside the workbench since the last call; their row ids.
        ``scope``: a look before or after that change of ours, at what it touches only where it can
        (``_record_scoped``)."""
        if self.home.read_only:  # a read-only home is never written, so nothing is journaled
            return []
        with self._lock:
            if scope is not None and scope.row is None:  # before the change: what its roots hold in the archive
                scope.copies = self._copies(scope.roots)
            ids = None if scope is None else self._record_scoped(scope)
            return self._record_full(scope) if ids is None else ids

    def _record_full(self, scope: Scope | None) -> list[int]:
        last = self._last or self._kept()  # a first look goes on from the last one any process kept
        found_later = self._found_later(last)
        now = self._look(last)
        ids = []
        if last is not None:
            since = self._since(last, scope)
            moved = None not in (last.archive_stamp, now.archive_stamp) and last.archive_stamp != now.archive_stamp
            ids = self._journal_changes(last, now.seen, now.pins, lambda: now.archived, since, found_later, moved)
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
        pins = self.home.skills.usage.pinned()
        stamp = self._archive_stamp()  # before the archive is listed: a move in or out meanwhile moves it on
        return _Look(
            self._scan(last.seen if last else {}),
            frozenset(pins) if pins is not None else last.pins if last else frozenset(),  # unreadable: as before
            tuple(sorted(s.name for s in self.home.skills.scanner.archived())),
            mark,
            self.home.clock.now(),
            stamp,
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
        change). It compares and keeps the SKILL.md files at, under or holding the change's roots, every
        file last seen declaring one of their names or the change's, and those names' pins. All else
        stays as last seen, for the next full look to compare: other pins, the archive but for the
        copies this change moved in or out (under its roots, before and after it), and the time of the
        last look (the earliest a change still to find may date from)."""
        last = self._last or self._kept(entries=False)
        row = scope.row  # (set: this is the look after the change)
        if last is None or (row is not None and scope.copies is None):
            return None
        mark = self._settled_mark()
        if row is not None and self._others(last.mark, mark, row):
            return None
        window = self._window(last, scope)
        if window is None:
            return None
        before, now, names = window
        pinned = self.home.skills.usage.pinned(names)
        pins = None if pinned is None else frozenset(pinned)
        scanner = self.home.skills.scanner
        archived = functools.cache(lambda: tuple(sorted(s.name for s in scanner.archived())))
        now_pins = last.pins if pins is None else (last.pins - names) | pins
        since = self._since(last, scope)
        ids = self._journal_changes(replace(last, seen=before), now, now_pins, archived, since, self._found_later(last))
        moved: Counter[str] = Counter()
        if row is None:
            scope.mark = last.mark
        else:
            moved.update(self._copies(scope.roots))
            moved.subtract(scope.copies or ())
        self._keep_window(last, before, now, names, pins, moved, None if row is None else (mark, row))
        return ids

    def _window(self, last: _Look, scope: Scope) -> tuple[dict[str, _Seen], dict[str, _Seen], frozenset[str]] | None:
        """(as last seen, as now) each active SKILL.md the scope reaches: of the skills at, under or
        holding its roots, and those seen last declaring a name it or they declare; and those names.
        None when only a walk can tell which files those are."""
        prefix = self.home.skills.ledger.rel(self.home.skills_dir)
        if any(root == prefix or prefix.startswith(f"{root}/") for root in scope.roots):
            return None  # the whole library
        rels = [root[len(prefix) + 1 :] for root in scope.roots if root.startswith(f"{prefix}/")]
        before: dict[str, _Seen] = {}
        now: dict[str, _Seen] = {}
        names = scope.names
        while True:
            before |= self._kept_entries(last, rels, ())
            for rel in rels:
                found = self.home.skills.scanner.under(rel)
                if found is None:
                    return None
                now |= self._seen_all(found, before)
            names |= {s.name for s in (*before.values(), *now.values())}
            rels = [rel for rel in self._kept_entries(last, (), names) if rel not in before]
            if not rels:
                return before, now, names

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
    ) -> list[int]:
        """Journal what differs between ``last`` and ``now`` (the files, and the ``pins`` now) that no
        workbench process journaled after row ``since``; ``archived``, the archive's names now, is read
        only if needed. ``archive_moved``: whether a copy went into or out of the archive since ``last``
        (``_round_trips``)."""
        ours, roots = self._journaled(since)
        prefix = self.home.skills.ledger.rel(self.home.skills_dir)
        before = last.seen
        changed = []
        for rel in sorted(now.keys() | before.keys()):
            old, new = before.get(rel), now.get(rel)
            edited = old is not None and new is not None and new.sha != old.sha
            pinned = old is not None and new is not None and (new.name in pins) != (old.name in last.pins)
            if old is not None and new is not None and not edited and not pinned:
                continue
            if {seen.name for seen in (old, new) if seen} & ours:  # ours (a rename journals the old name)
                continue
            path = f"{prefix}/{rel}"  # home-relative, as journaled roots are
            if any(path == root or path.startswith(f"{root}/") for root in roots):
                continue
            changed.append(rel)
        trips = self._round_trips(before, now, changed) if archive_moved else {}
        gone_in = set(trips.values())
        ids = []
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
                    changes = [EDITED] * edited + [PINNED if new.name in pins else UNPINNED] * pinned
                for change in changes:
                    shown = new or old
                    assert shown is not None  # every change has a before, a now, or both
                    sha = new.sha if new and change not in (PINNED, UNPINNED) else None
                    # (a copy back from a round trip kept its mtime: it says nothing of when)
                    dated = new and change in (CREATED, RESTORED, EDITED) and one not in trips
                    mtime = new.stamp[0] / 1e9 if new and dated else None
                    row = self._journal(change, one, shown.name, sha, (mtime, last.at) if found_later else None)
                    if row is not None:
                        ids.append(row)
        return ids

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
            "SELECT journal_id, pins, archived, look.at, archive.mtime_ns FROM skills_look AS look "
            "LEFT JOIN skills_look_archive AS archive ON archive.at = look.at"
        )
        try:
            row = conn.execute(query).fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise
            if "skills_look_archive" in str(exc):  # a look kept before the archive's mtime was: not known
                conn.executescript(_ARCHIVE_SCHEMA)
                row = conn.execute(query).fetchone()
            else:
                conn.executescript(_SCHEMA)
                return None
        if row is None:
            return None
        seen = {
            path: _Seen(name, (mtime_ns, size), sha)
            for path, name, mtime_ns, size, sha in (conn.execute("SELECT * FROM skills_looked") if entries else ())
        }
        return _Look(seen, frozenset(_names(row[1])), tuple(sorted(_names(row[2]))), row[0], row[3], row[4])

    def _keep(self, last: _Look | None, now: _Look) -> None:
        """Keep this look for the next process's first one: the files whose stamp or hash moved, the
        pins, the archive's names, the mark and the time (a later change is dated no earlier). A look
        that found all as kept writes nothing: its time is then the last look's, an earlier bound."""
        before = last.seen if last else {}
        if last is not None and (before, last.pins, last.archived, last.mark, last.archive_stamp) == (
            now.seen,
            now.pins,
            now.archived,
            now.mark,
            now.archive_stamp,
        ):
            return  # (the watcher looks on every change under skills/: the kept look still says it all)
        with self.home.journal.transaction() as conn:
            self._keep_entries(conn, before, now.seen)
            conn.execute(
                "INSERT OR REPLACE INTO skills_look VALUES (1, ?, ?, ?, ?)",
                (now.mark, json.dumps(sorted(now.pins)), json.dumps(now.archived), now.at),
            )
            if now.archive_stamp is not None:
                conn.execute("INSERT OR REPLACE INTO skills_look_archive VALUES (1, ?, ?)", (now.at, now.archive_stamp))

    def _keep_window(
        self,
        last: _Look,
        before: dict[str, _Seen],
        now: dict[str, _Seen],
        names: frozenset[str],
        pins: frozenset[str] | None,
        moved: Counter[str],
        passed: tuple[int, int] | None,
    ) -> None:
        """Keep what a scoped look saw: its files, which of ``names`` are pinned (None: the usage file
        said nothing), the copies its change ``moved`` into the archive (or out: negative), and after
        the change the new mark and the change's row, ``passed``; all else as kept. The look kept in
        workbench.db may be another process's: its mark moves only where no other row lies between."""

        def merged(kept_pins: frozenset[str], archived: Iterable[str]) -> tuple[frozenset[str], tuple[str, ...]]:
            copies = Counter(archived)
            copies.update(moved)
            return kept_pins if pins is None else (kept_pins - names) | pins, tuple(sorted(copies.elements()))

        new_pins, archived = merged(last.pins, last.archived)
        mark = last.mark if passed is None else passed[0]
        if (before, last.pins, last.archived, last.mark) == (now, new_pins, archived, mark):
            return
        with self.home.journal.transaction() as conn:
            self._keep_entries(conn, before, now)
            kept, kept_pins, kept_archived = conn.execute(
                "SELECT journal_id, pins, archived FROM skills_look"
            ).fetchone()
            if passed is not None and passed[0] > kept and not self._others(kept, *passed):
                kept = passed[0]
            kept_pins, kept_archived = merged(frozenset(_names(kept_pins)), _names(kept_archived))
            conn.execute(
                "UPDATE skills_look SET journal_id = ?, pins = ?, archived = ?",
                (kept, json.dumps(sorted(kept_pins)), json.dumps(kept_archived)),
            )
        if self._last is not None:
            seen = {rel: s for rel, s in self._last.seen.items() if rel not in before} | now
            self._last = _Look(seen, new_pins, archived, mark, last.at, last.archive_stamp)

    @staticmethod
    def _keep_entries(conn: sqlite3.Connection, before: dict[str, _Seen], now: dict[str, _Seen]) -> None:
        """The files whose stamp or hash moved since ``before``, and those gone."""
        conn.executemany(
            "INSERT OR REPLACE INTO skills_looked VALUES (?, ?, ?, ?, ?)",
            [(rel, s.name, *s.stamp, s.sha) for rel, s in now.items() if before.get(rel) != s],
        )
        conn.executemany("DELETE FROM skills_looked WHERE path = ?", [(rel,) for rel in before.keys() - now.keys()])

    def _journal(
        self, change: str, rel: str, name: str, sha: str | None, found_later: tuple[float | None, float] | None
    ) -> int | None:
        """One external row, unless another workbench process watching this home journaled the same one.
        ``found_later``: (the file's mtime, if it has one, and the last look) for a change made while
        none watched."""
        journal = self.home.journal
        with journal.transaction() as conn:
            last = conn.execute(
                "SELECT json_extract(detail, '$.change'), json_extract(detail, '$.sha') FROM journal "
                "WHERE subsystem = 'skills' AND action = 'external' AND json_extract(detail, '$.path') = ? "
                "ORDER BY id DESC LIMIT 1",
                (rel,),
            ).fetchone()
            if last is not None and tuple(last) == (change, sha):
                return None
            detail: dict = {"change": change, "path": rel, "sha": sha}
            at = None
            if found_later is not None:
                now, (mtime, looked_at) = self.home.clock.now(), found_later
                at = now if mtime is None else min(now, max(mtime, looked_at))
                detail.update(seen_at=now, not_before=looked_at)
            rows = [{"action": "external", "detail": detail}]
            return journal.append_all("skills", name, rows, actor="external", at=at)[0]

    def _scan(self, seen: dict[str, _Seen]) -> dict[str, _Seen]:
        """Each active SKILL.md, hashed only when its stamp moved since ``seen``."""
        return self._seen_all(self.home.skills.scanner.active(), seen)

    def _seen_all(self, skills: Iterable[Found], seen: dict[str, _Seen]) -> dict[str, _Seen]:
        """The SKILL.md of each of ``skills``, hashed only when its stamp moved since ``seen``."""
        scanner = self.home.skills.scanner
        found: dict[str, _Seen] = {}
        for skill in skills:
            skill_md = skill.path / "SKILL.md"
            rel = f"{skill.rel}/SKILL.md"
            stamp = scanner.stamp(skill_md)  # the walk just stat'ed it: no second stat per skill
            if stamp is None:
                continue
            old = seen.get(rel)
            try:
                sha = old.sha if old and old.stamp == stamp else sha256(self.home.links.read_bytes(skill_md))
            except (OSError, UnsafePath):  # gone meanwhile, or a link the policy refuses: not a skill to report
                continue
            found[rel] = _Seen(skill.name, stamp, sha)
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
