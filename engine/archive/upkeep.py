"""Index upkeep in idle time: catch the CJK index and vocabulary up (and upgrade it from version 3:
``BigramIndex.fold_step``), and merge FTS5 segments.

FTS5 answers a query by reading every segment of its index; a table Hermes rebuilt (or
one fed by many small transactions) holds many, and search is then up to twice as slow.
A whole ``optimize`` rewrites the index in one transaction (tens of seconds at 1M,
holding the write lock). ``upkeep`` instead runs ``merge`` steps of ``MERGE_PAGES``
pages, each its own short transaction that gives up at once when the database is busy,
until the time budget is spent or no index has a merge to do (``merges.merge_due``: each
level keeps at most one segment). The TUI calls it on an idle timer; ``doctor`` reports
the segment counts.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ..counts import counted
from ..db import busy_wait, is_corrupt
from ..errors import WorkbenchError
from ..health import CHECKS, FIXES, Finding
from .cjk import TABLE as BIGRAM_TABLE
from .merges import merge_due, restore_setting, segments, set_setting, structure
from .search import SearchMixin

if TYPE_CHECKING:
    from ..home import Home

MERGE_PAGES = 8  # leaf pages written per merge step: a few milliseconds of write lock
BUDGET_S = 0.05
FRAGMENTED = 8  # segments from which doctor suggests letting the TUI idle, if its steps would merge them
# Leaf pages (4 MB) below which an index is read in a blink however split: a fresh Hermes home's 40
# messages, one segment per turn, made doctor say "needs attention" (exit 1) about nothing.
SMALL_INDEX_PAGES = 1000
QUICK_BUSY_MS = 20


SEARCH_STEP_S = 0.5  # a search the upgrade does not concern waits this long at most for its steps


class CommitWitness(Protocol):
    """Whoever follows state.db's commits (the TUI's watcher), told of the merges' own so it can leave them
    out: a merge changes no session or message, and each one reloaded the Sessions screen's tree.

    ``before`` is asked inside the merge's transaction, before it writes: what the witness sees now, or None
    when it has a change not yet reported (nothing may then be left out). A witness that answered holds its
    reports of the database until ``after(seen, alone)``, which always follows, the merge failed or not (a
    look between the merge's commit and its ``after`` took the merge for another process's change). ``alone``
    when no other connection can have committed since (SQLite's ``data_version`` on the merge's own connection
    moves only with other connections' commits, and it is read again under the write lock): the witness may
    then take what it sees as seen, if it is still at ``seen``; otherwise it reports what it sees."""

    def before(self) -> object | None: ...

    def after(self, seen: object, alone: bool) -> None: ...


@dataclass(frozen=True)
class SearchUpgrade:
    """What ``upgrade_before_search`` did: whether the query waited on the upgrade, and what is left."""

    whole: bool  # the query holds a term width folding changes: it scans what the upgrade has not reached
    left: tuple[int, int] | None  # as ``BigramIndex.unfolded`` (None: the upgrade is done)

    @property
    def slow(self) -> bool:
        """Whether the search that follows scans the messages the upgrade has not reached (correct, slower)."""
        return self.whole and self.left is not None


class UpkeepMixin(SearchMixin):
    def _fts_indexes(self) -> list[tuple[sqlite3.Connection, str]]:
        found = [
            (self.conn(), t)
            for t, present in (("messages_fts", self.caps.fts), ("messages_fts_trigram", self.caps.trigram))
            if present
        ]
        ours = self.bigram_index.connection()
        if ours is not None:
            found.append((ours, BIGRAM_TABLE))
        return found

    def fragmentation(self) -> dict[str, int]:
        """Segments per FTS5 index (1: fully merged)."""
        return {table: n for conn, table in self._fts_indexes() if (n := segments(conn, table)) is not None}

    def merge_work(self) -> list[str]:
        """The indexes idle steps would still merge (``merges.merge_due``); empty: settled."""
        return [table for conn, table in self._fts_indexes() if merge_due(structure(conn, table))]

    def index_pages(self) -> dict[str, int]:
        """Leaf pages per FTS5 index (its size, as its structure record counts it)."""
        return {
            table: sum(map(sum, (level.pages for level in levels)))
            for conn, table in self._fts_indexes()
            if (levels := structure(conn, table)) is not None
        }

    def upkeep(self, budget_s: float = BUDGET_S, witness: CommitWitness | None = None) -> dict[str, int]:
        """Bounded index work for idle time; returns the steps run per index (empty: nothing left to do).

        Never waits for a lock: a busy database ends the step, and the next call resumes. Never
        writes to a damaged state.db (``vet``: SQLite's check of it runs before the first step), nor
        creates one: a home gets its archive from its first session. ``witness``: told of each merge
        of state.db's own (``CommitWitness``).
        """
        if self.read_only or not self.home.state_db_path.exists() or self.vet() is not None:
            return {}
        try:
            return self._upkeep_steps(budget_s, witness)
        except sqlite3.DatabaseError as exc:  # damage the check could not see yet (it came since)
            self.noticed(exc)
            raise

    def upgrade_index(self, budget_s: float | None = None) -> tuple[int, int] | None:
        """Steps of the CJK index's upgrade from version 3 (``BigramIndex.fold_step``) for up to ``budget_s``
        (None: to its end), for a command: it has no idle time, and without steps a home used only from the
        command line stayed on the slow scan for good. Returns what is left, as ``unfolded`` (None: done)."""
        index = self.bigram_index
        if self.read_only or self.vet() is not None:
            return index.unfolded()
        if index.replaced():  # another state.db: no step applies; rebuilt whole for it, which ends the upgrade
            index.refresh(wait=budget_s is None)  # (as the search after it would: a bounded one never waits)
        deadline = None if budget_s is None else time.monotonic() + budget_s
        while (deadline is None or time.monotonic() < deadline) and index.fold_step():
            pass
        return index.unfolded()

    def upgrade_before_search(
        self, query: str, *, prefix: bool = False, most_s: float | None = None, first: Callable[[], None] | None = None
    ) -> SearchUpgrade | None:
        """Steps of the CJK index's upgrade from version 3 before a search that has no idle time of its own
        (a command, the agent's ``session_search`` in ``workbench run``): all of them when ``query`` would
        otherwise scan what it has not reached (``waits_on_upgrade``: the scan costs more than the upgrade),
        for up to ``most_s`` seconds (None: to the end; a turn of the agent is not held long), ``first()``
        called before; else ``SEARCH_STEP_S`` of them at most. None when no upgrade is under way (a home
        with no workbench.db has no index to upgrade: looking would create one)."""
        if not self.home.workbench_db_path.exists() or self.bigram_index.unfolded() is None:
            return None
        whole = self.waits_on_upgrade(query, prefix=prefix)
        if whole and first is not None:
            first()
        step = SEARCH_STEP_S if most_s is None else min(most_s, SEARCH_STEP_S)
        return SearchUpgrade(whole, self.upgrade_index(most_s if whole else step))

    def _upkeep_steps(self, budget_s: float, witness: CommitWitness | None) -> dict[str, int]:
        deadline = time.monotonic() + budget_s
        steps: dict[str, int] = {}
        index = self.bigram_index
        if index.refresh(max_rows=1, wait=False):  # one batch; it may spend the whole budget
            steps[f"{BIGRAM_TABLE} rows"] = 1  # work was done, so the caller comes back for the merges
        else:
            while time.monotonic() < deadline and index.fold_step():  # the upgrade from version 3, if any
                steps[f"{BIGRAM_TABLE} folded"] = steps.get(f"{BIGRAM_TABLE} folded", 0) + 1
        archive = self.conn()  # state.db: its WAL is checkpointed only when writes say so
        for conn, table in self._fts_indexes():
            while merge_due(structure(conn, table)):  # at least one step per index, so every call progresses
                started = time.perf_counter()
                told = witness if conn is archive else None
                merged, before = _merge_step(conn, table, told)
                if told is not None and before is not None:
                    _alone_since(conn, before, told)
                if not merged:
                    break
                if conn is archive:
                    self._wrote(conn, time.perf_counter() - started)
                steps[table] = steps.get(table, 0) + 1
                if time.monotonic() >= deadline:
                    break
        return steps


def _merge_step(
    conn: sqlite3.Connection, table: str, witness: CommitWitness | None
) -> tuple[bool, tuple[int, object] | None]:
    """One ``merge`` of MERGE_PAGES pages in its own transaction; False when busy or nothing was done. With
    it, once committed, the connection's ``data_version`` and what ``witness`` saw before the merge wrote
    (None: nothing to leave out; a witness asked is told ``after`` here if the merge failed)."""
    try:
        with busy_wait(conn, QUICK_BUSY_MS):
            conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError:
        return False, None
    before = seen = None
    try:
        if witness is not None and (seen := witness.before()) is not None:
            before = (conn.execute("PRAGMA data_version").fetchone()[0], seen)
        merged = merge_due(structure(conn, table)) and _carry(conn, table)  # read inside: no writer comes between
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        with contextlib.suppress(sqlite3.Error):  # (damage may have ended the transaction already)
            conn.execute("ROLLBACK")
        if witness is not None and seen is not None:
            witness.after(seen, alone=False)
        if is_corrupt(exc):
            raise  # the file is damaged: said, and no step follows (``upkeep``)
        return False, None
    return merged, before


def _alone_since(conn: sqlite3.Connection, before: tuple[int, object], witness: CommitWitness) -> None:
    """Tell ``witness`` whether its view now holds this connection's commits only: under the write lock
    again, ``data_version`` as the merge found it means no other connection committed since. It is told
    whatever happens (another writer holding the lock: not alone, its commit is reported with the merge's),
    and told alone before the lock is let go: a commit coming between would be taken for the merge's."""
    version, seen = before
    told = False
    try:
        with busy_wait(conn, QUICK_BUSY_MS):
            conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("PRAGMA data_version").fetchone()[0] == version:
                told = True
                witness.after(seen, alone=True)
        finally:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
    except sqlite3.OperationalError:
        pass  # (another writer holds the lock: its commit, if any, is reported with the merge's)
    finally:
        if not told:
            witness.after(seen, alone=False)


def _carry(conn: sqlite3.Connection, table: str) -> bool:
    """A positive ``merge`` with ``usermerge`` 2 for this step only: the file's own value (its
    automerge may be off) is put back before the commit, so other connections never see it.
    True when the merge wrote something (the settings' own rows are not counted)."""
    row = conn.execute(f"SELECT v FROM {table}_config WHERE k = 'usermerge'").fetchone()
    set_setting(conn, table, "usermerge", 2)
    before = conn.total_changes
    conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('merge', ?)", (MERGE_PAGES,))
    merged = conn.total_changes - before >= 2  # the command's own row, then the pages it wrote
    restore_setting(conn, table, "usermerge", row[0] if row else None)
    return merged


def check_fragmentation(home: Home) -> list[Finding]:
    if not home.state_db_path.exists():
        return []
    try:
        counts, work, pages = home.archive.fragmentation(), home.archive.merge_work(), home.archive.index_pages()
    except (sqlite3.Error, WorkbenchError):
        return []  # an unreadable database is the database check's finding
    split = {  # only what idling would merge, and only where it is large enough to matter
        t: n for t, n in counts.items() if n >= FRAGMENTED and t in work and pages.get(t, 0) >= SMALL_INDEX_PAGES
    }
    if not split:
        reasons = ", ".join(_unmerged(table, n, pages.get(table, 0)) for table, n in counts.items())
        return (
            [
                Finding(
                    "archive",
                    "info",
                    f"Search indexes need no merging: {reasons}.",
                )
            ]
            if counts
            else []
        )
    return [
        Finding(
            "archive",
            "warning",
            "Search indexes are fragmented ("
            + ", ".join(f"{t} {n} segments" for t, n in split.items())
            + "), which makes search up to twice as slow.",
            "Leave the workbench TUI open and idle for a while: it merges them in small steps.",
        )
    ]


def _unmerged(table: str, n: int, size: int) -> str:
    """Why an index of ``n`` segments and ``size`` pages needs no merging, its own reason each ("fewer than
    8" beside "13" read as a contradiction)."""
    if n < FRAGMENTED:
        return f"{table} {counted(n, 'segment')}"
    if size < SMALL_INDEX_PAGES:
        return f"{table} {n} segments but {size:,} pages (under {SMALL_INDEX_PAGES:,}), read in a blink"
    return f"{table} {n} segments, which no merge step would shrink"


UPGRADE_REPAIR = "archive-cjk-upgrade"


def upgrade_line(left: tuple[int, int] | None) -> str:
    """How far the CJK index's upgrade from version 3 is (``left``: what ``upgrade_index`` left), said the
    same by every command that runs its steps and by doctor."""
    if left is None:
        return "The CJK search index is upgraded (half-width katakana now find full-width and back)."
    first, last = left
    return (
        f"The CJK search index is being upgraded for half-width katakana: {(first - 1) / max(1, last):.0%} done "
        f"({first - 1:,} of {last:,} message ids looked through); until it ends, searches for katakana also scan "
        "the messages not reached yet (correct, but slower)."
    )


REPLACED = (
    "state.db holds fewer messages than the CJK search index was built from (another state.db was put in its "
    "place, or its newest messages deleted)"
)


def check_upgrade(home: Home) -> list[Finding]:
    if not home.state_db_path.exists():
        return []
    try:
        index = home.archive.bigram_index
        left, replaced = index.unfolded(), index.replaced()
    except (sqlite3.Error, WorkbenchError):
        return []  # an unreadable database is the database check's finding
    if left is None:
        return []
    if replaced:  # (no step of the upgrade applies to another archive: "0% done" read as work under way)
        what = f"{REPLACED}: its upgrade for half-width katakana cannot go on, and katakana searches scan instead."
        fix = "Run `workbench doctor --fix` to rebuild the index for it now (seconds per 100,000 messages)."
        return [Finding("archive", "warning", what, fix, UPGRADE_REPAIR)]
    fix = (
        "Run `workbench doctor --fix` to finish it now (seconds per 100,000 messages); each "
        "`workbench sessions search` takes it a step further, and finishes it before searching for katakana."
    )
    return [Finding("archive", "warning", upgrade_line(left), fix, UPGRADE_REPAIR)]


def repair_upgrade(home: Home) -> str:
    replaced = not home.archive.read_only and home.archive.bigram_index.replaced()  # (``upgrade_index`` rebuilds)
    left = home.archive.upgrade_index()
    if replaced and left is None:
        return f"workbench.db: {REPLACED}, so the index was rebuilt for it."
    if left is not None:
        raise WorkbenchError(
            upgrade_line(left) + " workbench.db is busy or read-only; run `workbench doctor --fix` again."
        )
    return "workbench.db: " + upgrade_line(None)


CHECKS.append(check_fragmentation)
CHECKS.append(check_upgrade)
FIXES[UPGRADE_REPAIR] = repair_upgrade
