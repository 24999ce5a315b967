"""Which b-trees of workbench.db a write's commits put pages of into the WAL (its frames, read back)."""

from __future__ import annotations

import sqlite3
import struct
from pathlib import Path

_WAL_HEADER, _FRAME_HEADER = 32, 24


def wal_pages(db: Path) -> list[list[str]]:
    """The WAL's transactions, oldest first: each the names (table or index) of the pages it wrote."""
    wal = Path(f"{db}-wal").read_bytes()
    if len(wal) < _WAL_HEADER:
        return []
    page_size = struct.unpack(">I", wal[8:12])[0]
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        names = dict(conn.execute("SELECT pageno, name FROM dbstat"))
    commits: list[list[str]] = []
    pages: list[str] = []
    for at in range(_WAL_HEADER, len(wal) - _FRAME_HEADER - page_size + 1, _FRAME_HEADER + page_size):
        page, size_after = struct.unpack(">II", wal[at : at + 8])
        pages.append(names.get(page, f"page {page}"))
        if size_after:  # (a commit's last frame)
            commits.append(pages)
            pages = []
    return commits
