"""Atomic writes and lock files."""

import os
import stat

from engine.fileio import atomic_write_text, file_lock, lock_path_for


def test_atomic_write_replaces_and_leaves_no_temp(tmp_path):
    target = tmp_path / "f.md"
    atomic_write_text(target, "one")
    atomic_write_text(target, "two", tmp_prefix=".mem_")
    assert target.read_text() == "two"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.md"]


def test_lock_file_is_private_and_not_followed_through_symlinks(tmp_path):
    target = tmp_path / "MEMORY.md"
    lock = lock_path_for(target)
    lock.write_text("")
    os.chmod(lock, 0o644)
    with file_lock(target):
        pass
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600
    lock.unlink()
    (tmp_path / "elsewhere").write_text("")
    lock.symlink_to(tmp_path / "elsewhere")
    try:
        with file_lock(target):
            raise AssertionError("a symlinked lock file must be refused")
    except OSError:
        pass
