"""Skill changes made outside the workbench (a Hermes agent, an editor), journaled as ``external``.

Memory edits no workbench process made are journaled entry by entry; this does the same
for skills, one row per SKILL.md created, edited, removed, archived (moved into the archive
folder, as Hermes's curator does) or restored (its name gone from the archive since the last
look, as Hermes's ``restore_skill`` moves it out), and per skill pinned or unpinned in ``.usage.json``
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
journal row it had read up to, the pins, the archive's names and when), so a process's
first look compares with the last look of any workbench process: a skill Hermes changed
while none watched is journaled when the TUI next opens, or ``workbench timeline`` next runs.
Each change of ours takes a look before and after it (``changes.look_outside``), so an
outside change made after ours, with no TUI between, is not taken for ours. Such a row is dated by the file's mtime
where there is one (never before that last look, nor after now) and notes when it was
seen (``seen_at``) and that it came after the last look (``not_before``). Only the very
first look in a home takes the baseline alone (before it, no one knows what changed).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..curator.ledger import sha256
from ..fileio import UnsafePath
from ..values import json_value

if TYPE_CHECKING:
    from ..home import Home

CREATED, EDITED, REMOVED, ARCHIVED, PINNED, UNPINNED = "created", "edited", "removed", "archived", "pinned", "unpinned"
# skills rows that record a Curator's decision: they touch no file and no pin (nor can they be reverted)
RECORD_ONLY = ("consolidate_refused", "mark_stale", "reactivate")
RESTORED = "restored"  # a SKILL.md whose name left the archive since the last look (Hermes's restore_skill)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS skills_looked (
    path TEXT PRIMARY KEY, name TEXT NOT NULL, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, sha TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS skills_look (
    one INTEGER PRIMARY KEY CHECK (one = 1), journal_id INTEGER NOT NULL, pins TEXT NOT NULL,
    archived TEXT NOT NULL, at REAL NOT NULL
);
"""


@dataclass(frozen=True)
class _Seen:
    name: str
    stamp: tuple[int, int]  # mtime_ns, size
    sha: str


@dataclass(frozen=True)
class _Look:
    """What one look saw: each active SKILL.md (path relative to skills/), the skills pinned, the
    name of each copy in the archive (a name archived twice is there twice), the journal row it had
    read up to, and when it looked."""

    seen: dict[str, _Seen]
    pins: frozenset[str]
    archived: tuple[str, ...]
    mark: int
    at: float

    def restored(self, name: str, now: _Look) -> bool:
        """Whether a copy of ``name`` left the archive between this look and ``now``."""
        return self.archived.count(name) > now.archived.count(name)


def _names(raw: str) -> list[str]:
    values = json_value(raw, [])
    return [v for v in values if isinstance(v, str)] if isinstance(values, list) else []


class OutsideChanges:
    def __init__(self, home: Home):
        self.home = home
        self._last: _Look | None = None  # this process's last look
        self._lock = threading.Lock()  # the watcher's thread and a screen's worker may both ask

    def record(self) -> list[int]:
        """Journal each skill created, edited or removed outside the workbench since the last call; their row ids."""
        if self.home.read_only:  # a read-only home is never written, so nothing is journaled
            return []
        with self._lock:
            last = self._last or self._kept()  # a first look goes on from the last one any process kept
            found_later = self._last is None and last is not None and last.at < self.home.clock.now() - 1
            now = self._look(last)
            ids = [] if last is None else self._journal_changes(last, now, found_later)  # (none: the baseline)
            self._keep(last, now)
            self._last = now  # once journaled and kept: a failed step is retried from the same last look
            return ids

    def _look(self, last: _Look | None) -> _Look:
        mark = self._settled_mark()  # first: a change of ours committed during the scan is after it, so ours
        pins = self.home.skills.usage.pinned()
        return _Look(
            self._scan(last.seen if last else {}),
            frozenset(pins) if pins is not None else last.pins if last else frozenset(),  # unreadable: as before
            tuple(sorted(s.name for s in self.home.skills.scanner.archived())),
            mark,
            self.home.clock.now(),
        )

    def _journal_changes(self, last: _Look, now: _Look, found_later: bool) -> list[int]:
        ours, roots = self._journaled(last.mark)
        prefix = self.home.skills.ledger.rel(self.home.skills_dir)
        before = last.seen
        changes: list[tuple[str, str, _Seen | None, _Seen | None]]  # (change, path, before, now)
        changes = [  # back from the archive (Hermes's restore_skill moves its copy out), else new
            (RESTORED if last.restored(now.seen[rel].name, now) else CREATED, rel, None, now.seen[rel])
            for rel in now.seen.keys() - before.keys()
        ]
        changes += [
            (EDITED, rel, before[rel], now.seen[rel])
            for rel in now.seen.keys() & before.keys()
            if now.seen[rel].sha != before[rel].sha
        ]
        changes += [  # (Hermes's curator archives a skill by moving its folder into the archive)
            (ARCHIVED if before[rel].name in now.archived else REMOVED, rel, before[rel], None)
            for rel in before.keys() - now.seen.keys()
        ]
        changes += [  # a pin set or cleared in .usage.json (Hermes's `skills pin`), on a skill still here
            (PINNED if seen.name in now.pins else UNPINNED, rel, seen, seen)
            for rel, seen in now.seen.items()
            if rel in before and (seen.name in now.pins) != (before[rel].name in last.pins)
        ]
        ids = []
        for change, rel, old, new in sorted(changes, key=lambda c: c[1]):
            if {seen.name for seen in (old, new) if seen} & ours:  # ours (a rename journals the old name)
                continue
            path = f"{prefix}/{rel}"  # home-relative, as journaled roots are
            if any(path == root or path.startswith(f"{root}/") for root in roots):
                continue
            shown = new or old
            assert shown is not None  # every change has a before, a now, or both
            sha = new.sha if new and change not in (PINNED, UNPINNED) else None
            mtime = new.stamp[0] / 1e9 if new and change in (CREATED, RESTORED, EDITED) else None
            row = self._journal(change, rel, shown.name, sha, (mtime, last.at) if found_later else None)
            if row is not None:
                ids.append(row)
        return ids

    def _kept(self) -> _Look | None:
        """The last look any workbench process kept (None before the first look in this home, which
        makes the tables)."""
        conn = self.home.journal.connection()
        try:
            row = conn.execute("SELECT journal_id, pins, archived, at FROM skills_look").fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise
            conn.executescript(_SCHEMA)
            return None
        if row is None:
            return None
        seen = {
            path: _Seen(name, (mtime_ns, size), sha)
            for path, name, mtime_ns, size, sha in conn.execute("SELECT * FROM skills_looked")
        }
        return _Look(seen, frozenset(_names(row[1])), tuple(sorted(_names(row[2]))), row[0], row[3])

    def _keep(self, last: _Look | None, now: _Look) -> None:
        """Keep this look for the next process's first one: the files whose stamp or hash moved, the
        pins, the archive's names, the mark and the time (a later change is dated no earlier). A look
        that found all as kept writes nothing: its time is then the last look's, an earlier bound."""
        before = last.seen if last else {}
        if last is not None and (before, last.pins, last.archived, last.mark) == (
            now.seen,
            now.pins,
            now.archived,
            now.mark,
        ):
            return  # (the watcher looks on every change under skills/: the kept look still says it all)
        with self.home.journal.transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO skills_looked VALUES (?, ?, ?, ?, ?)",
                [(rel, s.name, *s.stamp, s.sha) for rel, s in now.seen.items() if before.get(rel) != s],
            )
            conn.executemany(
                "DELETE FROM skills_looked WHERE path = ?", [(rel,) for rel in before.keys() - now.seen.keys()]
            )
            conn.execute(
                "INSERT OR REPLACE INTO skills_look VALUES (1, ?, ?, ?, ?)",
                (now.mark, json.dumps(sorted(now.pins)), json.dumps(now.archived), now.at),
            )

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
        scanner = self.home.skills.scanner
        found: dict[str, _Seen] = {}
        for skill in scanner.active():
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
            "SELECT target, action, json_extract(detail, '$.absorbed'), "
            "coalesce(json_extract(detail, '$.roots'), json_extract(detail, '$.resume.roots')) "
            "FROM journal WHERE id > ? AND subsystem = 'skills' AND action != 'external'",
            (after,),
        )
        names: set[str] = set()
        roots: set[str] = set()
        for target, action, absorbed, touched in rows:
            if action in RECORD_ONLY:
                continue
            names.add(target)
            for raw, into in ((absorbed, names), (touched, roots)):
                values = json_value(raw, [])
                if isinstance(values, list):
                    into.update(v for v in values if isinstance(v, str) and v)
        return names, roots
