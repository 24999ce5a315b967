"""Atomic writes and lock files."""

import errno
import os
import stat
import threading

import pytest

import engine.fileio
from engine.fileio import (
    LinkPolicy,
    UnsafePath,
    append_bytes,
    atomic_write_bytes,
    atomic_write_text,
    file_lock,
    lock_path_for,
    read_regular,
    remove_stale_temps,
)


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


# -- the link policy and the primitives under it --------------------------------------------


@pytest.fixture
def policy(tmp_path):
    (tmp_path / "home").mkdir()
    return LinkPolicy(tmp_path / "home")


def test_write_through_keeps_the_link_and_puts_the_temp_beside_the_target(policy, tmp_path):
    target = tmp_path / "real" / "notes.md"
    target.parent.mkdir()
    target.write_text("old")
    os.chmod(target, 0o640)
    link = policy.root / "notes.md"
    link.symlink_to(target)
    assert policy.write_text(link, "new") == target
    assert link.is_symlink() and target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640, "the target keeps its mode"
    with pytest.raises(UnsafePath, match="is a link"):
        atomic_write_bytes(link, b"detach")  # the bare primitive never replaces a link
    assert link.is_symlink()


def test_resolve_checks_every_link_on_the_way(policy, tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    (policy.root / "memories").symlink_to(folder)
    assert policy.resolve(policy.root / "memories" / "MEMORY.md") == folder / "MEMORY.md"
    os.chmod(folder, 0o775)
    with pytest.raises(UnsafePath, match="can be written by others .mode 775."):
        policy.resolve(policy.root / "memories" / "MEMORY.md")
    os.chmod(folder, 0o755)
    (policy.root / "pending").mkdir()
    (policy.root / "pending" / "memory").symlink_to(folder)
    with pytest.raises(UnsafePath, match="where no link is ever followed"):
        policy.resolve(policy.root / "pending" / "memory" / "x.json", sealed=policy.root / "pending")
    skill = policy.root / "skills" / "tea"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").symlink_to(folder / "elsewhere.md")
    (folder / "elsewhere.md").write_text("x")
    with pytest.raises(UnsafePath, match="outside the skill's folder"):
        policy.resolve(skill / "SKILL.md", inside=skill)
    with pytest.raises(UnsafePath, match="outside the home"):
        policy.resolve(tmp_path / "other")


def test_reading_a_fifo_or_a_device_never_blocks(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    finished = threading.Event()
    errors = []

    def read():
        for path in (fifo, "/dev/zero"):
            try:
                read_regular(path)
            except UnsafePath as exc:
                errors.append(exc.message)
        finished.set()

    threading.Thread(target=read, daemon=True).start()
    assert finished.wait(10)
    assert "is a FIFO" in errors[0] and "is a device" in errors[1]


def test_append_leaves_no_torn_line_when_the_disk_fills(tmp_path, monkeypatch):
    path = tmp_path / "ledger.jsonl"
    append_bytes(path, b'{"id": 1}\n')
    calls = []

    def half_then_full(fd, data):
        calls.append(len(data))
        os.write(fd, data[:3])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(engine.fileio, "_write_all", half_then_full)
    with pytest.raises(OSError):
        append_bytes(path, b'{"id": 2}\n')
    assert calls and path.read_bytes() == b'{"id": 1}\n'


def test_only_our_old_temp_files_whose_bytes_are_kept_elsewhere_are_removed(tmp_path):
    old, fresh, other, unique = (tmp_path / n for n in (".mem_a.tmp", ".mem_b.tmp", ".usage_c.tmp", ".mem_d.tmp"))
    for path in (old, fresh, other):
        path.write_text("kept")
    unique.write_text("only copy")
    for path in (old, other, unique):
        os.utime(path, (1, 1))
    (tmp_path / ".mem_link.tmp").symlink_to(other)
    assert remove_stale_temps(tmp_path, ".mem_", lambda data: data == b"kept") == [str(old)]
    assert fresh.exists() and other.exists() and unique.exists() and (tmp_path / ".mem_link.tmp").is_symlink()


def test_the_listing_names_every_link_with_its_verdict(policy, tmp_path):
    folder = tmp_path / "dots"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("x")
    (policy.root / "memories").symlink_to(folder)
    (folder / "USER.md").symlink_to("/dev/null")
    (policy.root / "loop").symlink_to(policy.root)
    listed = {link.path: link for link in policy.links()}
    assert listed["memories"].followed and listed["memories"].points_to == str(folder)
    assert not listed["memories/USER.md"].followed and listed["memories/USER.md"].reason == "is a device"
    assert listed["loop"].followed, "a loop back into the home is listed once, not walked forever"


def test_an_atomic_write_never_opens_a_temp_name_that_exists(tmp_path, monkeypatch):
    """The temp file is ``<prefix><8 random hex digits>.tmp`` (a name doctor's patterns know), mode
    0600, made with O_EXCL: a name already taken, even by a link, is passed over for the next one."""
    target = tmp_path / "MEMORY.md"
    target.write_bytes(b"old")
    target.chmod(0o644)
    (tmp_path / ".mem_00000001.tmp").write_bytes(b"someone else's")
    (tmp_path / ".mem_00000002.tmp").symlink_to(tmp_path / "elsewhere")
    draws = iter([b"\x00\x00\x00\x01", b"\x00\x00\x00\x02", b"\x00\x00\x00\x03"])
    monkeypatch.setattr(engine.fileio.os, "urandom", lambda n: next(draws))
    written = []
    real_write = engine.fileio._write_all

    def write_all(fd, data):
        written.append((os.readlink(f"/proc/self/fd/{fd}"), stat.S_IMODE(os.fstat(fd).st_mode)))
        real_write(fd, data)

    monkeypatch.setattr(engine.fileio, "_write_all", write_all)
    atomic_write_bytes(target, b"new", ".mem_", sync_folder=False)
    assert written == [(str(tmp_path / ".mem_00000003.tmp"), 0o600)]
    assert target.read_bytes() == b"new" and stat.S_IMODE(target.stat().st_mode) == 0o644
    assert (tmp_path / ".mem_00000001.tmp").read_bytes() == b"someone else's"
    assert (tmp_path / ".mem_00000002.tmp").is_symlink() and not (tmp_path / "elsewhere").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".mem_00000001.tmp", ".mem_00000002.tmp", "MEMORY.md"]
