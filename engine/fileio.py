"""Crash-safe file primitives shared by every store that owns files.

Locks are separate ``<file>.lock`` files taken with ``flock`` (the same protocol Hermes
uses, so a real Hermes agent and the workbench exclude each other). Writes go to a temp
file in the same folder, are fsynced, then atomically replace the target: a reader or a
crash sees the old file or the new one, never a partial one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
from pathlib import Path
from typing import Iterator


def lock_path_for(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive flock on ``<path>.lock`` (mode 0600, never through a symlink)."""
    lock = lock_path_for(path)
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, tmp_prefix: str = ".tmp_") -> None:
    """Write ``data`` to ``path`` via temp file + fsync + rename; the temp is removed on failure."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=tmp_prefix, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            with contextlib.suppress(OSError):
                os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str, tmp_prefix: str = ".tmp_") -> None:
    atomic_write_bytes(path, text.encode("utf-8"), tmp_prefix)


def atomic_write_json(path: Path, value, tmp_prefix: str = ".tmp_") -> None:
    text = json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    atomic_write_text(path, text, tmp_prefix)
