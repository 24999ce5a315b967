"""Health of the home as a whole: config.yaml, both databases, left-over temp and lock files.

Repairs never delete anything: a value Hermes misreads is rewritten in place only where
the rest of config.yaml stays byte for byte the same, and a left-over temp file is moved
to ``logs/doctor/<time>/``. Both are journaled before they happen.
"""

from __future__ import annotations

import fnmatch
import os
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from .config import Config
from .counts import counted
from .db import (
    foreign_wal_advice,
    foreign_wal_message,
    integrity_problems,
    is_corrupt,
    on_read_only_mount,
    salvage_advice,
    sound_without_wal,
    stranded_wal,
    stranded_wal_advice,
    stranded_wal_message,
)
from .errors import ConfigError, WorkbenchError
from .fileio import TEMP_AGE_SECONDS, UnsafePath, write_blocker
from .health import CHECKS, FIXES, NEEDS_CONFIG, Finding
from .textsafety import quoted
from .yamltext import check_bounds, load_yaml

if TYPE_CHECKING:
    from .home import Home

# Temp files of interrupted atomic writes, by the names Hermes's mkstemp and our atomic_write_bytes
# give them (8 random characters): ``.<prefix>_XXXXXXXX.tmp`` (ours: .mem_, .tmp_; Hermes's: .mem_,
# .usage_, .config_, ...), ``.<file>.tmp.XXXXXXXX`` (Hermes's skill files) and ``<id>.json.tmp``
# (Hermes's pending records).
TEMP_PATTERNS = (".*_????????.tmp", ".*.tmp.????????", "????????.json.tmp")
ORPHAN_AGE = 600.0  # seconds; no write of either program keeps its temp file this long
ASIDE = Path("logs") / "doctor"
KIND_WORDS = {"int": "a whole number", "float": "a number", "bool": "true or false", "seconds": "a number of seconds"}


# -- config.yaml ----------------------------------------------------------------------
# What a config.yaml that was not taken costs doctor (it checks the rest with the defaults).
REFUSED_FIX = (
    "Fix config.yaml where it says, or move it aside to use the defaults. Until then every other workbench "
    "command refuses this home. Doctor checked the rest with the default settings, leaving out what needs "
    "the real ones (the memory char limits), and `--fix` makes no repair that reads them."
)


def check_config(home: Home) -> list[Finding]:
    if home.config_refused:
        return [Finding("config", "error", home.config_refused, REFUSED_FIX)]
    try:
        config = home.config
    except ConfigError as exc:
        return [Finding("config", "error", exc.message, "Fix config.yaml there, or move it aside to use the defaults.")]
    findings = [
        Finding(
            "config", "error", exc.message, f"Write {KIND_WORDS[kind]} there, or delete the line to use the default."
        )
        for _, kind, exc in config.unusable()
    ]
    findings += [
        Finding("config", "warning", s.what("config.yaml"), f"In config.yaml, {s.fix}.") for s in config.substitutions()
    ]
    spans = _value_spans(_config_text(home))
    for misread in config.hermes_misreads():
        where = f"config.yaml line {misread.line}" if misread.line else "config.yaml"
        findings.append(
            Finding(
                "config",
                "warning",
                f"{where}: {misread.key} is {quoted(misread.value)}; {misread.effect}.",
                f"In {where}, {misread.fix}.",
                repair="config.rewrite" if misread.key in spans else "",
            )
        )
    return findings


def _config_text(home: Home) -> str:
    """config.yaml exactly as stored (BOM and line endings kept), or "" without one."""
    try:
        return home.links.read_bytes(home.config_path).decode("utf-8")
    except (OSError, UnicodeDecodeError, UnsafePath):
        return ""


def _value_spans(text: str) -> dict[str, tuple[int, int]]:
    """Where each plain one-line scalar value sits in ``text`` (character offsets)."""
    try:
        check_bounds(text)
        root = yaml.compose(text)
    except yaml.YAMLError:
        return {}
    spans: dict[str, tuple[int, int]] = {}

    def walk(node, prefix: str) -> None:
        if not isinstance(node, yaml.MappingNode):
            return
        for key_node, value_node in node.value:
            key = f"{prefix}{key_node.value}"
            if isinstance(value_node, yaml.ScalarNode):
                start, end = value_node.start_mark, value_node.end_mark
                if start.line == end.line and value_node.style in (None, "'", '"'):
                    spans[key] = (start.index, end.index)
            walk(value_node, key + ".")

    walk(root, "")
    return spans


def rewrite_config(home: Home) -> str:
    """Write each misread value as the plain YAML the workbench already reads it as.

    Only the value's own characters change; the result is checked to parse to the same
    settings (but for those values) before it replaces config.yaml.
    """
    text = _config_text(home)
    config = home.reload_config()
    if config.settings() != (load_yaml(text) or {}):
        raise WorkbenchError("config.yaml changed while doctor was reading it; nothing was written. Run doctor again.")
    misreads = {m.key: m for m in config.hermes_misreads()}
    spans = {key: span for key, span in _value_spans(text).items() if key in misreads}
    if not spans:
        return "Nothing in config.yaml to rewrite."
    new = text
    for key, (start, end) in sorted(spans.items(), key=lambda item: item[1], reverse=True):
        new = new[:start] + misreads[key].literal + new[end:]
    expected = config.overlay({key: misreads[key].ours for key in spans})
    try:
        rewritten = Config(load_yaml(new) or {}, home.config_path)
    except yaml.YAMLError:
        rewritten = None
    if rewritten is None or rewritten.settings() != expected.settings() or rewritten.hermes_misreads():
        raise WorkbenchError(
            "config.yaml could not be rewritten without changing other settings; it was left "
            "as it is. Edit the values by hand as the findings say."
        )
    if _config_text(home) != text:
        raise WorkbenchError("config.yaml changed while doctor was fixing it; nothing was written. Run doctor again.")
    journal = home.journal
    entry = journal.begin(
        "config", "doctor_rewrite", "config.yaml", actor="user", before=text, after=new, detail={"keys": sorted(spans)}
    )
    try:
        home.links.write_bytes(home.config_path, new.encode("utf-8"))  # a linked config.yaml stays a link
    except (OSError, UnsafePath) as exc:
        journal.abandon(entry, str(exc))
        raise
    journal.commit(entry)
    home.reload_config()
    return f"Rewrote {', '.join(sorted(spans))} in config.yaml as plain YAML (journal row {entry})."


# -- databases ------------------------------------------------------------------------
def check_databases(home: Home) -> list[Finding]:
    findings = []
    for path in (home.state_db_path, home.workbench_db_path):
        if size := stranded_wal(path):
            findings.append(Finding("database", "error", stranded_wal_message(path, size), stranded_wal_advice(path)))
            continue
        if not path.exists():
            continue
        try:
            problems = integrity_problems(path) or ["ok"]
        except sqlite3.DatabaseError as exc:
            if not is_corrupt(exc):  # (a lock, the disk: the file may be sound)
                findings.append(
                    Finding("database", "error", f"{path.name} cannot be read as SQLite ({exc}).", salvage_advice(path))
                )
                continue
            problems, damage = [str(exc)], str(exc)
            what = f"{path.name} cannot be read as SQLite ({exc})."
        else:
            damage = f"SQLite's check reports: {problems[0]}"
            what = f"{path.name}: integrity_check reports {counted(len(problems), 'problem')}, first: {problems[0]}"
        if problems == ["ok"]:
            findings.append(Finding("database", "info", f"{path.name}: integrity_check ok."))
            continue
        if sound_without_wal(path):
            found = Finding("database", "error", foreign_wal_message(path, problems[0]), foreign_wal_advice(path))
        else:
            found = Finding("database", "error", what, salvage_advice(path))
        findings.append(found)
        if path == home.state_db_path:  # nothing more is written to it (a repair neither)
            home.archive.mark_damaged(damage, quiet=True)
    return findings


# -- left-over temp and lock files ------------------------------------------------------
def _candidates(home: Home):
    """Files either program writes atomically next to: the home's top level, memories/,
    pending/*, and the whole skills tree (links to folders are never followed)."""
    stack = [
        (home.root, False),
        (home.memories_dir, False),
        (home.pending_dir / "memory", False),
        (home.pending_dir / "skills", False),
        (home.skills_dir, True),
    ]
    while stack:
        folder, deep = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                yield entry
            elif deep:
                stack.append((Path(entry.path), True))


def lock_files(home: Home):
    """The lock files either program takes: those beside the files they guard, and skills/.locks/*.
    The files check judges them, a link among them too (a lock is never taken through a link)."""
    return (entry for entry in _candidates(home) if entry.name.endswith(".lock"))


def orphaned_temp_files(home: Home) -> list[Path]:
    now = home.clock.now()
    found = []
    for entry in _candidates(home):
        if entry.is_symlink() or not any(fnmatch.fnmatchcase(entry.name, p) for p in TEMP_PATTERNS):
            continue
        try:
            if now - entry.stat(follow_symlinks=False).st_mtime >= ORPHAN_AGE:
                found.append(Path(entry.path))
        except OSError:
            continue
    return sorted(found)


def check_leftovers(home: Home) -> list[Finding]:
    memory = home.memory  # opening a writable store deletes its old leftovers that hold nothing new: say so
    findings = [
        Finding(
            "files",
            "info",
            f"{Path(path).relative_to(home.root)} was left over from an interrupted write and held nothing new "
            "(a memory file or the journal has the same bytes): the workbench deleted it.",
        )
        for path in memory.temps_removed
        if Path(path).is_relative_to(home.root)
    ]
    read_only = on_read_only_mount(home.root)  # (then no repair can run: none is offered)
    for path in orphaned_temp_files(home):
        rel = path.relative_to(home.root)
        if memory.holds_nothing_new(path):  # the memory store drops it on its own: say so
            try:
                due = time.time() - path.stat().st_mtime >= TEMP_AGE_SECONDS  # (the store goes by this clock)
            except OSError:
                continue
            findings.append(
                Finding(
                    "files",
                    "info",
                    f"{rel} is left over from an interrupted write, and holds nothing new (a memory file or "
                    "the journal has the same bytes).",
                    "`workbench doctor --fix`, or the workbench's next start or memory write, deletes it."
                    if due
                    else f"The workbench deletes it once it is {TEMP_AGE_SECONDS // 3600} hour old, at its next "
                    f"start or memory write; `workbench doctor --fix` moves it to {ASIDE}/<time>/ now.",
                    repair="" if due or read_only else "files.move_aside",
                )
            )
            continue
        findings.append(
            Finding(
                "files",
                "warning",
                f"{rel} is left over from an interrupted write.",
                f"`workbench doctor --fix` moves it to {ASIDE}/<time>/ (nothing is deleted); look "
                "inside in case it holds a write you want back.",
                repair="" if read_only else "files.move_aside",
            )
        )
    if read_only:  # (then no lock file is writable, and removing one is no fix)
        findings.append(
            Finding(
                "files",
                "warning",
                f"The home {home.root} is on a file system mounted read-only: the workbench reads and searches "
                "it, but every write (memory, approvals, the session archive, skills) is refused.",
                "Mount it read-write to change anything in it; reading needs nothing.",
            )
        )
    for entry in lock_files(home):
        rel = Path(entry.path).relative_to(home.root)
        on_read_only = read_only or on_read_only_mount(Path(entry.path).parent)  # (a folder mounted apart)
        if entry.is_symlink() or (not on_read_only and not os.access(entry.path, os.W_OK)):
            why = "is a symlink" if entry.is_symlink() else "is not writable"
            findings.append(
                Finding(
                    "files",
                    "error",
                    f"{rel} {why}, so it is never used as a lock and every write to {rel.with_suffix('')} is refused.",
                    f"Remove it (a lock file holds no data; the next write makes a new one): rm {entry.path}",
                )
            )
        elif Path(entry.path).parent.name != ".locks" and not os.path.lexists(entry.path[: -len(".lock")]):
            # skills/.locks/* guard a whole folder (the library, the ledger), not a file of that name
            findings.append(Finding("files", "info", f"{rel} locks a file that no longer exists (harmless)."))
    return findings


def move_aside(home: Home) -> str:
    """Move every orphaned temp file under ``logs/doctor/<time>/``, keeping its path."""
    orphans = orphaned_temp_files(home)
    stamp = datetime.fromtimestamp(home.clock.now(), UTC).strftime("%Y%m%d-%H%M%S")
    folder = home.root / ASIDE / stamp
    journal = home.journal
    for path in orphans:
        rel = path.relative_to(home.root)
        dest = folder / rel
        entry = journal.begin(
            "files", "move_aside", str(rel), actor="user", detail={"to": str(dest.relative_to(home.root))}
        )
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.rename(path, dest)
        except OSError as exc:
            journal.abandon(entry, str(exc))
            raise
        journal.commit(entry)
    return f"Moved {counted(len(orphans), 'left-over temp file')} to {ASIDE / stamp}."


# -- journal rows a killed process left pending -------------------------------------
STUCK_AFTER = 60.0  # seconds; every journaled change commits far sooner than this


def _stuck(home: Home) -> dict[str, int]:
    """Pending journal rows older than ``STUCK_AFTER``, by subsystem."""
    journal = home.journal
    if not journal.path.exists() or not journal.exists():
        return {}
    rows = journal.connection().execute(
        "SELECT subsystem, count(*) FROM journal WHERE status = 'pending' AND at < ? GROUP BY subsystem",
        (home.clock.now() - STUCK_AFTER,),
    )
    return dict(rows.fetchall())


def check_pending(home: Home) -> list[Finding]:
    """A change a killed process left half journaled: settled the next time its store opens in a
    writable home, which a read-only look (doctor, a listing) never does."""
    try:
        stuck = _stuck(home)
    except (WorkbenchError, sqlite3.Error):
        return []  # (an unreadable workbench.db is check_databases's finding)
    if not stuck:
        return []
    counts = ", ".join(f"{name}: {n}" for name, n in sorted(stuck.items()))
    return [
        Finding(
            "journal",
            "warning",
            f"{counted(sum(stuck.values()), 'journal row')} still pending after a minute ({counts}): changes a "
            "process was killed in the middle of, so the journal does not yet say whether they took effect.",
            "Run `workbench doctor --fix` (or open the home with the workbench) to settle them: each is marked done "
            "or abandoned as the files show.",
            repair="journal.settle",
        )
    ]


def settle_pending(home: Home) -> str:
    """Open every store's settling of what a killed process left (each under its own lock). The
    other checks may have settled some already (a writable store settles when it opens), so the
    message says what is left, not how many this step did."""
    home.memory.reconcile()
    home.skills.reconcile()
    home.approvals.reconcile()
    home.archive.settle()
    left = sum(_stuck(home).values())
    if left:
        return (
            f"Settled the interrupted journal rows but {left}: another process holds that store's lock "
            "(retry when it is done)."
        )
    return "Settled the interrupted journal rows, each marked done or abandoned as the files show."


CHECKS.extend([check_config, check_databases, check_leftovers])
CHECKS.insert(0, check_pending)  # first: a check that opens a writable store settles its rows
FIXES.update({"config.rewrite": rewrite_config, "files.move_aside": move_aside, "journal.settle": settle_pending})
NEEDS_CONFIG.add("config.rewrite")


# -- folders both programs write ----------------------------------------------------
def check_writable_folders(home: Home) -> list[Finding]:
    """The memories and skills folders, where every memory and skill write goes: one that cannot be
    written (a read-only mount, an immutable attribute root's writes meet too, permissions) makes every
    add fail, Hermes's as well as ours (``fileio.write_blocker``, looked at without writing)."""
    findings = []
    for area, folder, writes in (
        ("memory", home.memories_dir, "every memory write (add, replace, remove, Hermes's too) fails"),
        ("skills", home.skills_dir, "every skill write and Curator change fails"),
    ):
        if not folder.is_dir():
            continue
        blocker = write_blocker(folder)
        if blocker is not None:
            findings.append(
                Finding(
                    area,
                    "error",
                    f"{folder} cannot be written: {blocker}; {writes}.",
                    "Make it writable as said in brackets, then run `workbench doctor` again.",
                )
            )
    return findings


CHECKS.append(check_writable_folders)  # (after the config check: the folders are those config.yaml names)
