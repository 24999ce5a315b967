"""Skill changes made outside the workbench (a Hermes agent, an editor), journaled as ``external``.

Memory edits no workbench process made are journaled entry by entry; this does the same
for skills, one row per SKILL.md created, edited, removed, archived (moved into the archive
folder, as Hermes's curator does) or restored (back where the journal last saw its skill
archived, as Hermes's ``restore_skill`` moves it), and per skill pinned or unpinned in ``.usage.json``
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

What a look saw is kept in workbench.db (``skills_seen``, with the journal row it had
read up to and the pins), so a process's first look compares with the last look of any
workbench process: a skill Hermes changed while none watched is journaled when the TUI
next opens, or ``workbench timeline`` next runs. Such a row is dated by the file's mtime
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
RESTORED = "restored"  # a SKILL.md back where the journal last saw its skill archived (Hermes's restore_skill)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS skills_seen (
    path TEXT PRIMARY KEY, name TEXT NOT NULL, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, sha TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS skills_seen_mark (
    one INTEGER PRIMARY KEY CHECK (one = 1), journal_id INTEGER NOT NULL, pins TEXT NOT NULL, at REAL NOT NULL
);
"""


@dataclass(frozen=True)
class _Seen:
    name: str
    stamp: tuple[int, int]  # mtime_ns, size
    sha: str


class OutsideChanges:
    def __init__(self, home: Home):
        self.home = home
        self._seen: dict[str, _Seen] | None = None  # SKILL.md path (relative to skills/) -> what it held
        self._pins: set[str] = set()  # the skills .usage.json said were pinned
        self._journal_mark = 0  # the newest journal row already looked at
        self._lock = threading.Lock()  # the watcher's thread and a screen's worker may both ask

    def record(self) -> list[int]:
        """Journal each skill created, edited or removed outside the workbench since the last call; their row ids."""
        if self.home.read_only:  # a read-only home is never written, so nothing is journaled
            return []
        with self._lock:
            mark = self._settled_mark()
            kept = self._kept() if self._seen is None else None  # a first look goes on from the last one kept
            looked_at: float | None = None
            if kept is not None:
                self._seen, self._pins, self._journal_mark, looked_at = kept
            now, pins = self._scan(), self.home.skills.usage.pinned()
            pins = self._pins if pins is None else pins  # unreadable for now: no pin judged
            if self._seen is None:  # the first look in this home: the baseline
                self._keep(now, pins, mark)
                self._seen, self._pins, self._journal_mark = now, pins, mark
                return []
            found_later = looked_at is not None and looked_at < self.home.clock.now() - 1
            ours, roots = self._journaled(self._journal_mark)
            prefix = self.home.skills.ledger.rel(self.home.skills_dir)
            before = self._seen
            changes: list[tuple[str, str, _Seen | None, _Seen | None]]  # (change, path, before, now)
            changes = [
                (RESTORED if self._last_archived(now[rel].name) else CREATED, rel, None, now[rel])
                for rel in now.keys() - before.keys()
            ]
            changes += [
                (EDITED, rel, before[rel], now[rel])
                for rel in now.keys() & before.keys()
                if now[rel].sha != before[rel].sha
            ]
            gone = before.keys() - now.keys()
            archived = {s.name for s in self.home.skills.scanner.archived()} if gone else set()
            changes += [
                (ARCHIVED if before[rel].name in archived else REMOVED, rel, before[rel], None) for rel in gone
            ]  # (Hermes's curator archives a skill by moving its folder into the archive)
            changes += [  # a pin set or cleared in .usage.json (Hermes's `skills pin`), on a skill still here
                (PINNED if seen.name in pins else UNPINNED, rel, seen, seen)
                for rel, seen in now.items()
                if rel in before and (seen.name in pins) != (before[rel].name in self._pins)
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
                later = (mtime, looked_at) if found_later and looked_at is not None else None
                row = self._journal(change, rel, shown.name, sha, later)
                if row is not None:
                    ids.append(row)
            self._keep(now, pins, mark)
            self._seen, self._pins, self._journal_mark = now, pins, mark  # once journaled: a failed append is retried
            return ids

    def _last_archived(self, name: str) -> bool:
        """Whether the newest journal row of skill ``name`` archived it (here or outside)."""
        row = (
            self.home.journal.connection()
            .execute(
                "SELECT action, CASE WHEN json_valid(detail) THEN json_extract(detail, '$.change') END FROM journal "
                "WHERE subsystem = 'skills' AND target = ? AND status = 'done' ORDER BY id DESC LIMIT 1",
                (name,),
            )
            .fetchone()
        )
        return row is not None and (row[0] == "archive" or tuple(row) == ("external", ARCHIVED))

    def _kept(self) -> tuple[dict[str, _Seen], set[str], int, float] | None:
        """The last look any workbench process kept: what it saw, the pins, the journal row it had read
        up to and when it looked (None before the first look in this home, which makes the tables)."""
        conn = self.home.journal.connection()
        try:
            mark = conn.execute("SELECT journal_id, pins, at FROM skills_seen_mark").fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise
            conn.executescript(_SCHEMA)
            return None
        if mark is None:
            return None
        seen = {
            path: _Seen(name, (mtime_ns, size), sha)
            for path, name, mtime_ns, size, sha in conn.execute("SELECT * FROM skills_seen")
        }
        pins = json_value(mark[1], [])
        return seen, {p for p in pins if isinstance(p, str)} if isinstance(pins, list) else set(), mark[0], mark[2]

    def _keep(self, now: dict[str, _Seen], pins: set[str], mark: int) -> None:
        """Keep this look for the next process's first one: the files whose stamp or hash moved, and the mark."""
        before = self._seen or {}
        if self._seen is not None and before == now and pins == self._pins and mark == self._journal_mark:
            return  # (a look runs on every change under skills/: the kept one is still this one)
        with self.home.journal.transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO skills_seen VALUES (?, ?, ?, ?, ?)",
                [(rel, s.name, *s.stamp, s.sha) for rel, s in now.items() if before.get(rel) != s],
            )
            conn.executemany("DELETE FROM skills_seen WHERE path = ?", [(rel,) for rel in before.keys() - now.keys()])
            conn.execute(
                "INSERT OR REPLACE INTO skills_seen_mark VALUES (1, ?, ?, ?)",
                (mark, json.dumps(sorted(pins)), self.home.clock.now()),
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

    def _scan(self) -> dict[str, _Seen]:
        scanner = self.home.skills.scanner
        seen = self._seen or {}
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
        (begun, done or abandoned) after row ``after``: a pending row keeps its roots under ``resume``."""
        rows = self.home.journal.connection().execute(
            "SELECT target, json_extract(detail, '$.absorbed'), "
            "coalesce(json_extract(detail, '$.roots'), json_extract(detail, '$.resume.roots')) "
            "FROM journal WHERE id > ? AND subsystem = 'skills' AND action != 'external'",
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
