"""Crash-safe file primitives and the one link policy for every file in the home.

Locks are separate ``<file>.lock`` files taken with ``flock`` (the same protocol Hermes
uses, so a real Hermes agent and the workbench exclude each other). Writes go to a temp
file beside the real target, are fsynced, then atomically replace it: a reader or a
crash sees the old file or the new one, never a partial one.

Every file of a home is read and written through ``LinkPolicy`` (``home.links``). A link
the user made for their own file (a dotfiles ``MEMORY.md``, a moved ``state.db``) is
followed and written through, so the link survives; any other link is refused with a
message naming it. The rules, in ``docs/reliability.md``:

1. A link is followed only to a regular file or a folder (never a FIFO, a device or a
   socket), owned by the home's owner and writable by no one else.
2. Inside a skill's folder, a link that leaves that folder is never followed.
3. Below ``pending/``, no link is ever followed.
4. A dangling link is refused (nothing is created through it).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import stat
import tempfile
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from . import lock_waits
from .errors import WorkbenchError
from .textsafety import shell_word

# Tool caches and checkouts, never the user's data: no listing of a home descends into them.
TOOL_DIRS = frozenset(
    {
        ".git",
        ".venv",
        "venv",
        "node_modules",
        "site-packages",
        "__pycache__",
        ".tox",
        ".nox",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
    }
)
UNLISTED_DIRS = TOOL_DIRS | {"hermes-agent"}  # the link listing skips a Hermes checkout too


class UnsafePath(WorkbenchError):
    """A path the link policy will not read or write (a refused link, a FIFO, a device)."""


def lock_path_for(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


@contextlib.contextmanager
def file_lock(path: Path, *, wait: bool = True) -> Iterator[None]:
    """Hold an exclusive flock on ``<path>.lock`` (mode 0600, never through a symlink).

    ``wait=False``: raise ``BlockingIOError`` at once when another holder has it. Otherwise the
    wait has no time limit, as Hermes's; inside ``lock_waits.cancellable`` it polls and may end
    with ``lock_waits.WaitCancelled`` (before the lock is taken: nothing was written).
    """
    lock = lock_path_for(path)
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW
    try:
        fd = os.open(lock, flags, 0o600)
    except FileNotFoundError:  # its folder is made only when missing: a mkdir per lock was most of its cost
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, flags, 0o600)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) != 0o600:  # (another program's lock file, made with its umask)
            os.fchmod(fd, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not wait:
                raise
            with lock_waits.waiting(lock) as waited:  # (said by the skins once it lasts)
                if waited.cancellable:
                    _wait_or_cancel(fd, waited)
                else:
                    fcntl.flock(fd, fcntl.LOCK_EX)  # (the default: one blocking call, no polling)
        try:
            with lock_waits.holding():
                yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _wait_or_cancel(fd: int, wait: lock_waits.Wait) -> None:
    """A cancellable wait: try the lock until it is taken or the wait is cancelled, a millisecond after
    the first try, then each pause twice the one before up to ``POLL_S``: a lock held for one write
    (Hermes's, about a millisecond) is taken a millisecond or two after it is let go, not up to
    ``POLL_S`` after, and a cancel is still seen within ``POLL_S``."""
    pause = lock_waits.FIRST_POLL_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if wait.stopped():
                raise wait.cancelled_error() from None
            time.sleep(pause)
            pause = min(pause * 2, lock_waits.POLL_S)
            continue
        if wait.take():
            return
        fcntl.flock(fd, fcntl.LOCK_UN)  # cancelled just before it was taken: nothing is written
        raise wait.cancelled_error()


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    """The one write primitive of atomic writes (tests patch it to simulate a full disk)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


_TEMP_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC  # (mkstemp's own)


def _temp_file(folder: Path, prefix: str) -> tuple[int, str]:
    """A new temp file ``<folder>/<prefix>XXXXXXXX.tmp``, mode 0600, opened for writing, as
    ``tempfile.mkstemp`` makes one (8 random characters, never an existing name or a link), without its
    per-call setup (a lock, a pid check, an abspath): half its cost, in every memory write's lock."""
    for _ in range(tempfile.TMP_MAX):
        name = os.path.join(folder, f"{prefix}{os.urandom(4).hex()}.tmp")
        try:
            return os.open(name, _TEMP_FLAGS, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "No usable temporary file name found", os.fspath(folder))


FS_IOC_GETFLAGS = 0x80086601  # Linux: a file's attribute flags (``lsattr``)
FS_IMMUTABLE_FL, FS_APPEND_FL = 0x10, 0x20


def _attribute_flags(folder: Path) -> int:
    """The folder's Linux attribute flags (0 where they cannot be read: another system, another file system)."""
    import array

    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return 0
    try:
        flags = array.array("l", [0])
        fcntl.ioctl(fd, FS_IOC_GETFLAGS, flags, True)
        return int(flags[0])
    except OSError:
        return 0
    finally:
        os.close(fd)


def write_blocker(folder: Path) -> str | None:
    """Why no file can be written into ``folder`` (an existing folder), looked at without writing: a
    read-only mount, an immutable or append-only attribute (which root's writes meet too, where they
    pass over permissions), or permissions that refuse this user; None when none of those is so."""
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return "it is on a file system mounted read-only (remount it read-write)"
    except OSError:
        return None
    flags = _attribute_flags(folder)
    path = shell_word(str(folder))  # (a home path with a space: the commands still run when pasted)
    if flags & FS_IMMUTABLE_FL:
        return f"it has the immutable attribute (`lsattr -d {path}` shows i; `chattr -i {path}` as root clears it)"
    if flags & FS_APPEND_FL:
        return f"it has the append-only attribute (`lsattr -d {path}` shows a; `chattr -a {path}` clears it)"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"its permissions do not let this user write in it (`ls -ld {path}`; chmod u+w, or chown it)"
    return None


def write_failure_hint(folder: Path) -> str:
    """The next step after a write into ``folder`` failed for lack of permission: what stops it, when that
    can be seen (``write_blocker``), else what to check."""
    blocker = write_blocker(folder)
    if blocker is not None:
        return f"The folder {folder} cannot be written: {blocker}."
    return (
        f"Check that {folder} can be written: its permissions (`ls -ld`), an immutable attribute (`lsattr -d`), "
        "or a read-only mount; `workbench doctor` checks it."
    )


def atomic_write_bytes(path: Path, data: bytes, tmp_prefix: str = ".tmp_", *, sync_folder: bool = True) -> None:
    """Write ``data`` to ``path`` via temp file + fsync + rename; the temp is removed on failure.

    ``path`` must not be a link (replacing one would detach it): a file in the home is
    written through ``LinkPolicy.write_bytes``, which resolves the link first.
    ``sync_folder``: also fsync the folder, so the rename itself is on disk when this returns
    (memory writes skip it, as Hermes does: their journal settles a rename lost to a power cut).
    """
    if os.path.islink(path):
        raise UnsafePath(
            f"{path} is a link; it is written through only by the home's link policy. Nothing was written."
        )
    try:
        fd, tmp = _temp_file(path.parent, tmp_prefix)
    except FileNotFoundError:  # the folder is made only when missing (as for a lock file)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _temp_file(path.parent, tmp_prefix)
    try:
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if sync_folder:
        _fsync_dir(path.parent)


def append_bytes(path: Path, data: bytes) -> int:
    """Append ``data`` to ``path`` (a regular file, never through a link) and fsync; returns the size before."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        start = os.fstat(fd).st_size
        try:
            _write_all(fd, data)
            os.fsync(fd)
        except BaseException:
            os.ftruncate(fd, start)  # never leave a torn line behind
            raise
        return start
    finally:
        os.close(fd)


def atomic_write_text(path: Path, text: str, tmp_prefix: str = ".tmp_") -> None:
    atomic_write_bytes(path, text.encode("utf-8"), tmp_prefix)


def json_bytes(value, indent: int | None = 2) -> bytes:
    """UTF-8 JSON, keys sorted, and a newline: a file of ours, or one line of a JSONL file (``indent``
    None). A value holding a lone surrogate (read from a ``\\ud800`` escape another program wrote)
    is written with escapes, as it was read, since UTF-8 cannot hold it."""
    try:
        return (json.dumps(value, ensure_ascii=False, indent=indent, sort_keys=True) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(value, ensure_ascii=True, indent=indent, sort_keys=True) + "\n").encode("ascii")


def atomic_write_json(path: Path, value, tmp_prefix: str = ".tmp_") -> None:
    atomic_write_bytes(path, json_bytes(value), tmp_prefix)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file or folder"


def read_regular(path: Path) -> bytes:
    """The bytes of ``path``, which must be a regular file and not a link (never blocks on a FIFO)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        mode = info.st_mode
        if not stat.S_ISREG(mode):
            raise UnsafePath(
                f"{path} is {_kind(mode)}, not a regular file; it is never read. Replace it with a regular file."
            )
        # plain reads sized by the stat (a buffered file object adds three seeks and stats per read)
        chunks = [os.read(fd, info.st_size + 1)]
        while chunks[-1]:  # until end of file, should it have grown
            chunks.append(os.read(fd, 65536))
        return b"".join(chunks)
    finally:
        os.close(fd)


def contained(path: str | Path, root: str | Path) -> bool:
    """True when the real ``path`` (links resolved, even if it does not exist yet) lies inside the real ``root``."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class HomeLink:
    """One link found in the home: where it is, where it points, and whether the policy follows it."""

    path: str  # relative to the home
    points_to: str  # the real target (links resolved)
    followed: bool
    reason: str = ""  # why it is refused

    def to_dict(self) -> dict:
        return asdict(self)


class LinkPolicy:
    """Resolves paths of one home under the link rules; reads and writes through them."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._kept_root: tuple[str, int, int] | None = None  # real path, st_dev, st_ino

    def _real_root(self) -> str:
        """The home folder's real path, kept once it exists, as long as that path is still the same folder.

        Every read and write resolves through it, so the walk up the home's path is done once.
        Repointing a link to the home leaves the folder where it was, and so do the open
        databases; a folder moved (and the link set to its new place) is followed, as the
        databases follow it. One stat tells the two apart.
        """
        if self._kept_root is not None:
            path, device, inode = self._kept_root
            with contextlib.suppress(OSError):
                info = os.stat(path)
                if (info.st_dev, info.st_ino) == (device, inode):
                    return path
        real = os.path.realpath(self.root)
        self._kept_root = None
        with contextlib.suppress(OSError):
            info = os.stat(real)
            if stat.S_ISDIR(info.st_mode):
                self._kept_root = (real, info.st_dev, info.st_ino)
        return real

    @property
    def owner(self) -> int:
        """The uid that owns the home folder (this process's when it does not exist yet)."""
        try:
            return os.stat(self.root).st_uid
        except OSError:
            return os.getuid()

    def target_problem(self, target: str) -> str | None:
        """Why a link to ``target`` may not be followed (rule 1 and 4), or None."""
        try:
            info = os.stat(target)
        except FileNotFoundError:
            return "does not exist"
        except OSError as exc:
            return f"cannot be inspected ({exc.strerror or exc})"
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
            return f"is {_kind(info.st_mode)}"
        if info.st_uid != self.owner:
            return f"is owned by uid {info.st_uid}, not by the home's owner (uid {self.owner})"
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return f"can be written by others (mode {stat.S_IMODE(info.st_mode):o})"
        return None

    def _refusal(self, shown: Path, target: str, why: str) -> UnsafePath:
        return UnsafePath(
            f"{shown} is a link to {target}, which {why}. The workbench follows a link only to a regular file or "
            "folder that the home's owner owns and no one else can write, never out of a skill's folder and never "
            "below pending/. Replace the link with the file itself (or fix the target), then retry; nothing was "
            "read or written through it.",
            link=str(shown),
            points_to=target,
        )

    def resolve(self, path: Path, *, inside: Path | None = None, sealed: Path | None = None) -> Path:
        """The real path to use for ``path`` (a path in the home), every link on the way checked.

        ``inside``: a skill's folder the result must stay in (rule 2). ``sealed``: a folder
        below which no link is followed at all (rule 3). Raises ``UnsafePath``. (Plain
        string work: every file read in the home passes here.)
        """
        root, text = os.fspath(self.root), os.path.normpath(os.fspath(path))
        if text != root and not text.startswith(root.rstrip(os.sep) + os.sep):
            raise UnsafePath(f"{path} is outside the home {self.root}; refusing to touch it.")
        parts = text[len(root) :].strip(os.sep).split(os.sep) if text != root else []
        current = self._real_root()
        deepest_link = 0
        for depth in range(1, len(parts) + 1):
            current, followed = self._step(current, parts, depth, sealed)
            if followed:
                deepest_link = depth
        if inside is not None and not self._stays_inside(
            text, os.path.normpath(os.fspath(inside)), deepest_link, current
        ):
            raise self._refusal(Path(path), current, f"is outside the skill's folder {inside}")
        return Path(current)

    def _step(self, current: str, parts: list[str], depth: int, sealed: Path | None) -> tuple[str, bool]:
        """One step of a walk: ``parts[depth - 1]`` in the real folder ``current`` (``parts``: the path's
        components below the home); a link there is checked (rules 1, 3 and 4) and followed. Returns the
        real path and whether a link was followed."""
        step = os.path.join(current, parts[depth - 1])
        if not os.path.islink(step):
            return step, False
        shown = self.root.joinpath(*parts[:depth])
        target = os.path.realpath(step)
        if sealed is not None and Path(sealed) in shown.parents:
            raise self._refusal(shown, target, f"is below {sealed}, where no link is ever followed")
        problem = self.target_problem(target)
        if problem:
            raise self._refusal(shown, target, problem)
        return target, True

    def resolve_child(self, path: Path, real_parent: Path) -> Path:
        """``resolve(path)`` for a ``path`` whose folder this policy has just resolved to ``real_parent``
        (``resolve(path.parent)``, no scope): only the last step is checked, the walk to the folder is
        not done again. A write that locks and writes files of one folder resolves the folder once."""
        text, root = os.path.normpath(os.fspath(path)), os.fspath(self.root)
        parts = text[len(root) :].strip(os.sep).split(os.sep)
        if not text.startswith(root.rstrip(os.sep) + os.sep) or parts[-1] in ("", ".", ".."):
            raise UnsafePath(f"{path} is outside the home {self.root}; refusing to touch it.")
        return Path(self._step(os.fspath(real_parent), parts, len(parts), None)[0])

    def _stays_inside(self, text: str, inside: str, deepest_link: int, real: str) -> bool:
        """Rule 2; without a link below ``inside``, a path under it lexically is under it for real (no realpath)."""
        root = os.fspath(self.root)
        if text.startswith(inside + os.sep) and (inside == root or inside.startswith(root + os.sep)):
            if deepest_link <= len(inside[len(root) :].strip(os.sep).split(os.sep)) - (inside == root):
                return True
        return contained(real, inside)

    def resolve_file(self, path: Path, **scope) -> Path:
        """``resolve``, refusing a path that exists but is not a regular file (for databases and config)."""
        real = self.resolve(path, **scope)
        with contextlib.suppress(FileNotFoundError):
            mode = os.stat(real).st_mode
            if not stat.S_ISREG(mode):
                raise UnsafePath(f"{path} is {_kind(mode)}, not a regular file; it is never opened. Move it aside.")
        return real

    # -- reading and writing through the policy -------------------------------------
    def lock(self, path: Path, *, wait: bool = True, **scope):
        """``file_lock`` for ``path``: its lock sits beside ``path`` (where Hermes puts it), in the real folder."""
        return file_lock(self.resolve(Path(path).parent, **scope) / Path(path).name, wait=wait)

    def read_bytes(self, path: Path, **scope) -> bytes:
        return read_regular(self.resolve(path, **scope))

    def read_text(self, path: Path, encoding: str = "utf-8", **scope) -> str:
        return self.read_bytes(path, **scope).decode(encoding)

    def write_bytes(
        self, path: Path, data: bytes, tmp_prefix: str = ".tmp_", *, sync_folder: bool = True, **scope
    ) -> Path:
        """Atomically replace the real file behind ``path`` (a link survives); returns the real path."""
        real = self.resolve(path, **scope)
        atomic_write_bytes(real, data, tmp_prefix, sync_folder=sync_folder)
        return real

    def write_text(
        self, path: Path, text: str, tmp_prefix: str = ".tmp_", *, sync_folder: bool = True, **scope
    ) -> Path:
        return self.write_bytes(path, text.encode("utf-8"), tmp_prefix, sync_folder=sync_folder, **scope)

    def write_json(self, path: Path, value, tmp_prefix: str = ".tmp_", **scope) -> Path:
        return self.write_bytes(path, json_bytes(value), tmp_prefix, **scope)

    def unlink(self, path: Path, *, missing_ok: bool = False, **scope) -> None:
        """Remove ``path`` itself (a link is removed, never its target); its folder goes through the policy."""
        folder = self.resolve(Path(path).parent, **scope)
        try:
            os.unlink(folder / Path(path).name)
        except FileNotFoundError:
            if not missing_ok:
                raise

    # -- the listing doctor shows -----------------------------------------------------
    def _verdict(self, shown: Path, target: str) -> str:
        """Why the link at ``shown`` (home path) is refused, in its context, or ''."""
        rel = shown.relative_to(self.root)
        if rel.parts[0] == "pending" and len(rel.parts) > 1:
            return "is below pending/, where no link is ever followed"
        if rel.parts[0] == "skills":
            for folder in list(shown.parents)[: len(rel.parts) - 2]:  # skill folders between skills/ and the link
                if os.path.isfile(os.path.join(folder, "SKILL.md")) and not contained(target, folder):
                    return f"leaves the skill's folder {folder.relative_to(self.root)}"
        return self.target_problem(target) or ""

    def links(self) -> list[HomeLink]:
        """Every link in the home (inside followed folder links too), in path order."""
        found: list[HomeLink] = []
        seen: set[str] = set()
        stack = [(os.path.realpath(self.root), self.root)]
        while stack:
            real, shown = stack.pop()
            if real in seen:
                continue
            seen.add(real)
            try:
                entries = list(os.scandir(real))
            except OSError:
                continue
            for entry in entries:
                here = shown / entry.name
                if entry.is_symlink():
                    target = os.path.realpath(entry.path)
                    reason = self._verdict(here, target)
                    found.append(HomeLink(here.relative_to(self.root).as_posix(), target, not reason, reason))
                    if not reason and os.path.isdir(target):
                        stack.append((target, here))
                elif entry.is_dir(follow_symlinks=False) and entry.name not in UNLISTED_DIRS:
                    stack.append((entry.path, here))
        return sorted(found, key=lambda link: link.path)


# Links whose refusal stops a whole part of the home from working (an error, not a warning).
CORE_LINKS = {
    "memories",
    "memories/MEMORY.md",
    "memories/USER.md",
    "skills",
    "pending",
    "state.db",
    "workbench.db",
    "config.yaml",
    "skills/.usage.json",
    "skills/.curator_ledger.jsonl",
}


def check_links(home, skip: Collection[str] = ()) -> list:
    """The ``links`` check of ``workbench doctor``: every link in the home, followed or refused, but
    those at the home paths in ``skip`` (another check's to judge)."""
    from .health import Finding

    findings = []
    for link in home.links.links():
        if link.path in skip:
            continue
        if link.followed:
            findings.append(Finding("links", "info", f"{link.path} -> {link.points_to} (followed)"))
        else:
            findings.append(
                Finding(
                    "links",
                    "error" if link.path in CORE_LINKS else "warning",
                    f"{link.path} -> {link.points_to} is refused: it {link.reason}; nothing is read or written "
                    f"through it.",
                    f"Replace {home.root / link.path} with the file or folder itself, or point it at a regular file or "
                    "folder the home's owner owns and only they can write (inside the skill's folder for skill files; "
                    "never a link below pending/).",
                )
            )
    return findings


# -- leftovers of interrupted writes --------------------------------------------------
TEMP_AGE_SECONDS = 3600  # a live write holds its temp file for milliseconds
TEMP_MAX_BYTES = 1_048_576


def remove_stale_temps(
    folder: Path, prefix: str, redundant: Callable[[bytes], bool], older_than: float = TEMP_AGE_SECONDS
) -> list[str]:
    """Delete ``<prefix>*.tmp`` files left by interrupted writes whose bytes are kept elsewhere.

    Only regular files (never links) owned by us, older than the bound, and for which
    ``redundant(bytes)`` says another file or the journal holds the same content; any
    other leftover stays for ``doctor`` to report and move aside, so nothing is lost.
    """
    removed: list[str] = []
    cutoff = time.time() - older_than
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if not (entry.name.startswith(prefix) and entry.name.endswith(".tmp")):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if not (
                stat.S_ISREG(info.st_mode)
                and info.st_uid == os.getuid()
                and info.st_mtime < cutoff
                and info.st_size <= TEMP_MAX_BYTES
            ):
                continue
            if redundant(read_regular(Path(entry.path))):
                os.unlink(entry.path)
                removed.append(entry.path)
        except (OSError, UnsafePath):
            continue
    return removed


def crash_point(name: str) -> None:
    """Pause here forever when ``WORKBENCH_CRASH_POINT`` names this point (tests kill the process there)."""
    if os.environ.get("WORKBENCH_CRASH_POINT") == name:
        marker = os.environ.get("WORKBENCH_CRASH_MARKER")
        if marker:
            Path(marker).write_text(str(os.getpid()))
        while True:
            time.sleep(60)
