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


# A process holding a memory file's flock (as Hermes does for each write) for 2.5 s: it prints a line
# once it holds it. argv[1]: the lock file.
HOLD_FLOCK = (
    "import fcntl, sys, time; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); print(flush=True); "
    "time.sleep(2.5)"
)
