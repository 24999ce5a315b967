"""The home: one folder in Hermes's layout, and the one object every part hangs off.

``open_home`` creates the layout on first use (unless read-only) and returns a ``Home``
holding the config, the clock, the journal and the event bus. Each store (memory,
archive, skills, curator, approvals) is built lazily on first access, so a command that
only reads memory never opens state.db.
"""

from __future__ import annotations

import copy
import logging
import os
import pwd
import stat
import threading
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import platformdirs

from .clock import Clock
from .config import Config
from .counts import counted
from .db import DatabaseDamaged, home_error, is_corrupt
from .errors import ConfigError, HomeError, WorkbenchError
from .events import ConfigChanged, EventBus, KeptStored
from .fileio import LinkPolicy, UnsafePath, contained
from .journal import Journal

if TYPE_CHECKING:  # the stores import Home themselves, so they load lazily below
    from .approvals import ApprovalQueue
    from .archive import SessionArchive
    from .curator.run import Curator
    from .memory.store import MemoryStore
    from .skills.library import SkillLibrary

log = logging.getLogger(__name__)

APP_NAME = "memory-workbench"
CONFIG_BOUND = ("config", "memory", "approvals", "skills", "curator")  # what a ``with_config`` view rebuilds
ARCHIVE_UNREADABLE = "The session archive cannot be read."  # (what a failed read of state.db starts with)


def resolve_home(explicit: str | os.PathLike | None = None) -> Path:
    """``--home``, else ``$WORKBENCH_HOME``, else ``$HERMES_HOME``, else the platform data folder."""
    for candidate in (explicit, os.environ.get("WORKBENCH_HOME"), os.environ.get("HERMES_HOME")):
        if candidate:
            try:
                path = Path(candidate).expanduser()
            except RuntimeError:  # "~nouser/x": never a folder named "~nouser" in the current directory
                path = Path("~")
            if str(path).startswith("~"):
                raise HomeError(f"{candidate} names a user whose home folder is unknown here. Give the full path.")
            return _without_dots(path.absolute())
    return Path(platformdirs.user_data_dir(APP_NAME))


def _without_dots(path: Path) -> Path:
    """``path`` with no ``..`` in it, meaning what the system means by it (a link before a ``..`` is
    followed first), the links after the last ``..`` kept as they are: every path below is compared
    with the root as text, so ``--home ../h`` was refused as outside itself."""
    parts = path.parts
    if ".." not in parts:
        return path
    last = len(parts) - 1 - parts[::-1].index("..")
    return Path(os.path.realpath(Path(*parts[: last + 1]))).joinpath(*parts[last + 1 :])


# Folders of a Hermes home that a --home given one folder too deep names (``~/.hermes/memories``).
_HOME_PARTS = ("memories", "skills", "sessions", "logs", "cron", "pending", "hooks")


def home_above(root: Path) -> Path | None:
    """The Hermes home ``root`` is a part of, when ``--home`` named one of its folders rather than the
    home (``~/.hermes/memories``): opened, it read as an empty home (doctor: all good) and got a home's
    folders inside Hermes's own. None when ``root`` is no such folder (or was used as a home already)."""
    if root.name not in _HOME_PARTS or any(
        (root / name).exists() for name in ("state.db", "config.yaml", "workbench.db")
    ):
        return None
    parent = root.parent
    if root.name == "memories" and any((root / name).is_file() for name in ("MEMORY.md", "USER.md")):
        return parent  # (a home keeps these in memories/ below it, never at its top)
    # a Hermes home: its memories/ folder and one of its own files (a config.yaml alone is any project's)
    if (parent / "memories").is_dir() and any(
        (parent / name).is_file() for name in ("state.db", "config.yaml", "SOUL.md")
    ):
        return parent
    return None


class Home:
    """Paths, settings and shared services of one home folder."""

    def __init__(self, root: Path, *, read_only: bool = False, clock: Clock | None = None):
        self.root = root
        self.read_only = read_only
        self.clock = clock or Clock()
        self.bus = EventBus()
        self.created = False  # this open made the folder: a new, empty home (a mistyped path, say)
        # Why config.yaml was not taken when the home opened (``open_home(config_defaults=True)``, for
        # doctor): the defaults are in use instead. None when it was taken.
        self.config_refused: str | None = None
        # What ``store_kept`` stored and no skin has said yet (``take_kept_stored``); shared with views.
        self._kept_stored: list[str] = []
        self._kept_stored_guard = threading.Lock()

    # -- layout -------------------------------------------------------------------
    @property
    def memories_dir(self) -> Path:
        return self.root / "memories"

    @property
    def skills_dir(self) -> Path:
        return self.root / "skills"

    @property
    def pending_dir(self) -> Path:
        return self.root / "pending"

    @property
    def state_db_path(self) -> Path:
        return self.root / "state.db"

    @property
    def workbench_db_path(self) -> Path:
        return self.root / "workbench.db"

    @property
    def config_path(self) -> Path:
        return self.root / "config.yaml"

    def refuse_inside(self, path: Path) -> None:
        """A file the user names for output (an export) is never one of the home's own: ``--force``
        over ``state.db`` or ``MEMORY.md`` would destroy what Hermes and the workbench keep there, and so
        would one in a folder a followed link of the home points to (``skills`` kept elsewhere)."""
        roots: list[str | Path] = [self.root, *(link.points_to for link in self.links.links() if link.followed)]
        if any(contained(path, root) for root in roots):
            raise WorkbenchError(
                f"{path} is inside the Hermes home ({self.root}), whose files Hermes and the workbench keep; "
                "write the export to a file outside it. Nothing was written.",
                path=str(path),
            )

    def create_layout(self) -> None:
        for folder in (
            self.root,
            self.memories_dir,
            self.skills_dir,
            self.pending_dir / "memory",
            self.pending_dir / "skills",
        ):
            folder.mkdir(parents=True, exist_ok=True)

    # -- shared services ----------------------------------------------------------
    @cached_property
    def links(self) -> LinkPolicy:
        """The link policy every file of this home is read and written through."""
        return LinkPolicy(self.root)

    @cached_property
    def config(self) -> Config:
        return Config.load(self.links.resolve_file(self.config_path))

    def reload_config(self) -> Config:
        self.__dict__.pop("config", None)
        return self.config

    def refresh_config(self) -> ConfigChanged | None:
        """Take config.yaml as it is now, if its settings changed (another program or an editor wrote it).

        A file that cannot be used (malformed YAML, a value of the wrong kind) is not taken:
        the settings in use stay, and the event says why. What is read at each write or turn
        (the approval gate, the limits, nudges, compression) follows at once; the model and
        the provider, chosen when a session starts, from the next session. Announced on the
        bus; None when nothing changed.
        """
        try:
            new = Config.load(self.links.resolve_file(self.config_path))
            problems = new.unusable()
        except (ConfigError, UnsafePath) as exc:
            return self._announce(ConfigChanged(actor="external", error=exc.message))
        if problems:
            more = f" ({counted(len(problems) - 1, 'more value')} cannot be read either.)" if len(problems) > 1 else ""
            return self._announce(ConfigChanged(actor="external", error=problems[0][2].message + more))
        in_use = self.__dict__.get("config") or Config({})  # none when the file it opened with was unusable
        keys = tuple(new.changed_keys(in_use))
        self.__dict__["config"] = new
        return self._announce(ConfigChanged(actor="external", keys=keys)) if keys else None

    def _announce(self, event: ConfigChanged) -> ConfigChanged:
        self.bus.publish(event)
        return event

    @cached_property
    def journal(self) -> Journal:
        """A workbench.db the link policy refuses (a folder, a foreign link) still gives a journal, one whose
        every use raises that refusal: the stores go on showing their files (``_can_settle``)."""
        try:
            return Journal(self.links.resolve_file(self.workbench_db_path), self.clock, self.read_only)
        except UnsafePath as exc:
            return Journal(self.workbench_db_path, self.clock, self.read_only, refused=exc.message)

    def _can_settle(self) -> bool:
        """Whether a store may settle its interrupted changes as it opens. Not on a read-only home, nor
        while workbench.db cannot be read: the store then still shows its files (memory, skills, the
        queue) and each write it tries is refused, naming workbench.db."""
        return not self.read_only and self.journal.problem() is None

    def _settle(self, reconcile: Callable[[], object]) -> None:
        """``reconcile`` a store as it opens; damage found deep in workbench.db (past the first page
        ``problem`` reads) leaves it unsettled and still showing its files, as above."""
        if not self._can_settle():
            return
        try:
            reconcile()
        except DatabaseDamaged as exc:
            log.warning("%s", exc.message)

    def store_kept(self) -> None:
        """Store into state.db the messages workbench.db keeps for it (it was busy as their conversation
        was left: ``engine.kept``), if it takes a write at once; never waits or fails, and what it does
        not take stays kept for the next open. A read-only open stores them too, through a writable
        home of its own: being stored is all they wait for."""
        from . import kept

        if not kept.waiting(self):
            return
        notes: list[str] = []
        if not self.read_only:
            self._settle(lambda: notes.extend(kept.store_kept(self)))
        else:
            writer = Home(self.root, clock=self.clock)
            try:
                writer.store_kept()
                notes = writer.take_kept_stored()
            finally:
                writer.close()
        if notes:
            with self._kept_stored_guard:
                self._kept_stored.extend(notes)
            self.bus.publish(KeptStored())

    def take_kept_stored(self) -> list[str]:
        """What ``store_kept`` stored since this was last asked, in ``kept.stored_note``'s words: the user
        was told those messages were kept in workbench.db, and each skin says once that they landed (the
        CLI on stderr, the TUI in a notice); asking takes them, so none is said twice."""
        with self._kept_stored_guard:
            notes, self._kept_stored[:] = list(self._kept_stored), []
        return notes

    # -- stores (each part adds its lazy property below) -------------------------
    @cached_property
    def archive(self) -> SessionArchive:
        from .archive import SessionArchive

        archive = SessionArchive(self)
        if not self.read_only:
            archive.settle()  # a change killed part way is settled first
        return archive

    @cached_property
    def approvals(self) -> ApprovalQueue:
        from .approvals import ApprovalQueue

        queue = ApprovalQueue(self)
        self._settle(lambda: self.journal.pending("approvals") and queue.reconcile())  # a decision killed part way
        return queue

    @cached_property
    def memory(self) -> MemoryStore:
        from .memory.store import MemoryStore

        store = MemoryStore(self)
        self._settle(store.reconcile)  # a write killed between its rename and its journal commit is settled first
        return store

    @cached_property
    def skills(self) -> SkillLibrary:
        from .skills.library import SkillLibrary

        library = SkillLibrary(self)
        self._settle(library.reconcile)  # a change killed part way is rolled forward or back first
        return library

    @cached_property
    def curator(self) -> Curator:
        from .curator.run import Curator

        return Curator(self)

    def with_config(self, overrides: dict[str, Any], given_by: str | None = None) -> Home:
        """This home with some settings overridden in memory (a scenario's), for one session.

        The view shares the files, the journal, the archive, the clock and the bus, but has
        its own config and its own stores reading it; this home, and every other thread
        using it, keeps its settings. config.yaml is never touched. ``given_by`` names where the
        settings came from, in what a bad one's refusal says (``Config.overlay``).
        """
        view = copy.copy(self)
        view.__dict__ = {k: v for k, v in self.__dict__.items() if k not in CONFIG_BOUND}
        view.__dict__.update(
            config=self.config.overlay(overrides, given_by), journal=self.journal, archive=self.archive
        )
        view.memory.__dict__["_seen"] = self.memory._seen  # one process: what it wrote is seen, whichever store wrote
        return view

    def explain(self, exc: BaseException) -> str:
        """What both skins say for an SQLite or OS error no store turned into one of its own. Damage met
        after the archive was opened is checked for in state.db (SQLite's check of it, once): if it is
        there, the archive writes nothing more and the message names state.db and how to recover it;
        else in workbench.db, whose message names it and says what to do (``Journal.noticed``)."""
        archive = self.__dict__.get("archive")
        if archive is not None and is_corrupt(exc) and archive.vet(again=True, quiet=True) is not None:
            return archive.damage
        return self.journal.noticed(exc) or home_error(exc, self.root)

    def archive_unreadable(self, exc: BaseException) -> str:
        """What a read of state.db that failed is said as, in both skins and in a warning: the words the
        Sessions tree and the CLI use, with the salvage advice when the error is damage (a damaged page
        the opening checks missed, too)."""
        said = exc.in_app if isinstance(exc, WorkbenchError) else self.explain(exc)
        return f"{ARCHIVE_UNREADABLE} {said}"

    def close(self) -> None:
        """Close every database connection this home opened (all threads); the journal's last, since a damaged
        workbench.db's read-only guard must close after every other connection to it (``mark_damaged``)."""
        for name in sorted(self.__dict__, key=lambda name: name == "journal"):
            closer = getattr(self.__dict__[name], "close", None)
            if callable(closer) and name != "bus":
                closer()

    def __repr__(self) -> str:
        return f"Home({str(self.root)!r}{', read_only=True' if self.read_only else ''})"


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _shut_out(root: Path) -> str | None:
    """Why this user cannot open an existing home at ``root`` (None when it can, or it does not exist yet).

    Names the first folder on the way that this user may not enter (or, for the home
    itself, read), its owner and its mode, so the fix is plain.
    """
    for folder in [*reversed(root.parents), root]:
        wanted = os.R_OK | os.X_OK if folder == root else os.X_OK
        if os.access(folder, wanted):
            continue
        try:
            info = folder.stat()
        except OSError:
            return None  # not there yet (creating it says what goes wrong, if anything)
        if not stat.S_ISDIR(info.st_mode):
            return None  # a file where a folder should be has its own message
        return (
            f"The home {root} cannot be read by this user ({_user(os.getuid())}): {folder} belongs to "
            f"{_user(info.st_uid)} with mode {info.st_mode & 0o7777:04o}. Run the workbench as its owner, give this "
            "user access to it, or choose another --home. Nothing was changed."
        )
    return None


def open_home(
    path: str | os.PathLike | None = None,
    *,
    read_only: bool = False,
    create: bool = True,
    clock: Clock | None = None,
    store_kept: bool = True,
    config_defaults: bool = False,
) -> Home:
    """Open (and, unless read-only or ``create`` is false, create) the home at ``path`` or the
    resolved default; ``Home.created`` says whether this made it, for the skins to say so.
    ``store_kept=False``: leave messages kept for state.db as they are (doctor reports them).

    ``create=False``: a command that writes only to what a home already holds (a search
    extending its index, a session renamed) refuses a folder that is not there.

    ``config_defaults=True`` (doctor, the tool for a broken home): a config.yaml that cannot be
    taken does not refuse the home; it opens with the default settings and ``Home.config_refused``
    says why. Every other caller refuses, with that message."""
    root = resolve_home(path)
    shut = _shut_out(root)
    if shut:
        raise HomeError(shut)
    if root.exists() and not root.is_dir():
        raise HomeError(f"{root} is a file, not a home folder. Pass --home with a folder path.")
    if (above := home_above(root)) is not None:  # (making a home there would put folders in Hermes's own)
        raise HomeError(
            f"{root} is the {root.name}/ folder of the Hermes home {above}, not a home: pass --home {above}. "
            "Nothing was created."
        )
    if (read_only or not create) and not root.is_dir():  # (reading one, as doctor does, creates none)
        raise HomeError(f"{root} does not exist; this command works on an existing home only. Check --home.")
    home = Home(root, read_only=read_only, clock=clock)
    if not read_only:
        home.created = not root.exists()
        try:
            home.create_layout()
        except OSError as exc:
            raise HomeError(
                f"Cannot create the home at {root}: {exc.strerror or exc}. Choose a writable --home."
            ) from exc
    try:
        _ = home.config  # fail early, with a clear message, on a malformed config.yaml
    except (ConfigError, UnsafePath) as exc:
        if not config_defaults:
            raise
        home.config_refused = exc.message
        home.__dict__["config"] = Config({}, home.config_path)
    if store_kept:
        home.store_kept()
    return home
