"""A read-only or full disk is reported as such, and no write command claims success on one.

The disks are real: a small tmpfs mounted for the test (needs root, as in the project's
containers), remounted read-only or filled to the last block. Without root only the
read-only home (opened with ``read_only``) is exercised.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess

import pytest

from engine import open_home
from engine.errors import ReadOnlyError
from workbench.cli import main

WRITES = [
    ["sessions", "reindex"],
    ["memory", "add", "--target", "memory", "A new fact about the disk."],
    ["run", "--model", "offline", "-m", "hello"],
    ["skills", "archive", "write-release-notes"],
    ["curator", "run"],
]


def cli(root, *argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        status = main(["--home", str(root), *argv, "--json"])
    return status, json.loads(out.getvalue())


@pytest.fixture
def seeded(demo_root, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CONFIG_DIR", str(tmp_path / "config"))
    return demo_root


def test_reindex_of_a_read_only_home_is_refused(seeded):
    home = open_home(seeded, read_only=True)
    try:
        with pytest.raises(ReadOnlyError):
            home.archive.bigram_index.rebuild()
    finally:
        home.close()


@pytest.fixture
def disk(tmp_path, seeded):
    """A 2 MB tmpfs holding a copy of the seeded home; unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "disk"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], check=True)
    shutil.copytree(seeded, mount / "home")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.mark.parametrize("argv", WRITES, ids=lambda a: " ".join(a[:2]))
def test_a_read_only_mount_is_named_and_nothing_claims_success(disk, argv):
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    status, answer = cli(disk / "home", *argv)
    assert status == 1 and answer["success"] is False
    assert "read-only" in answer["error"].lower() and "Move it aside" not in answer["error"]


@pytest.mark.parametrize("argv", WRITES, ids=lambda a: " ".join(a[:2]))
def test_a_full_disk_is_named_and_nothing_claims_success(disk, argv):
    fd = os.open(disk / "fill", os.O_WRONLY | os.O_CREAT)
    with contextlib.suppress(OSError):
        while True:
            os.write(fd, b"\0" * 4096)
    os.close(fd)
    status, answer = cli(disk / "home", *argv)
    assert status == 1 and answer["success"] is False
    assert "full" in answer["error"] and "Move it aside" not in answer["error"]
