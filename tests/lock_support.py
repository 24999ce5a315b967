"""Another process holding a database's write lock, for the tests of what a busy database does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def holding_write_lock(database: Path) -> subprocess.Popen:
    """A process with ``database``'s write lock (``BEGIN IMMEDIATE``) until it is killed."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, time\n"
            f"conn = sqlite3.connect({str(database)!r}, isolation_level=None)\n"
            "conn.execute('BEGIN IMMEDIATE')\n"
            "print('held', flush=True)\n"
            "time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def holding_flock(lock: Path) -> subprocess.Popen:
    """A process holding ``lock``'s flock (as Hermes does for each memory write) until its stdin is
    closed; returns once it holds it."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys\n"
            f"f = open({str(lock)!r}, 'a')\n"
            "fcntl.flock(f, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\n"
            "sys.stdin.read()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder
