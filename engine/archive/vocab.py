"""The archive's vocabulary: every word of the word index with the number of messages holding it.

Search as you type needs prefixes from the first letter, but Hermes's ``messages_fts``
has no prefix index: ``the*`` makes FTS5 merge the whole doclist of every term starting
with ``the`` (hundreds of milliseconds at 1M messages). With this table a prefix becomes
an OR of whole words, which FTS5 walks lazily newest first and stops after one page:
all the words with that prefix when there are at most ``EXPAND`` of them (the same
matches as ``prefix*``), else the ``EXPAND`` most frequent (a first page, marked as
such in the plan; the next keystroke narrows it).

It lives in workbench.db beside the bigram index and is filled by the same refresh
(cjk.py), so both follow state.db by message id. Counts only grow (a deleted message
keeps its words counted): they choose and order expansions, they never decide a hit.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections import Counter
from collections.abc import Iterable

from .query import CJK_CHAR

TABLE = "archive_vocab"
EXPAND = 16  # words a prefix typed so far expands into (FTS5 walks each: 16 cost a few ms)
EXACT = 64  # an explicit ``prefix*`` with more words than this is left to FTS5's own prefix query
MAX_WORD = 32  # longer tokens (hashes, encoded blobs) are never typed as prefixes

SCHEMA = f"CREATE TABLE IF NOT EXISTS {TABLE} (term TEXT PRIMARY KEY, docs INTEGER NOT NULL) WITHOUT ROWID;"

_TOKEN = re.compile(r"[^\W_]+")  # unicode61: runs of letters and digits, everything else separates


def fold(text: str) -> str:
    """Lower case without diacritics, as unicode61 (remove_diacritics) reads text."""
    text = text.lower()
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def split(text: str) -> list[str]:
    """The words of a text in order, as unicode61 splits it."""
    return _TOKEN.findall(fold(text))


def words(text: str) -> set[str]:
    """The distinct words of a text as the word index holds them (CJK runs left to the bigram index)."""
    return {w for w in split(text) if len(w) <= MAX_WORD and not CJK_CHAR.search(w)}


def add(conn: sqlite3.Connection, texts: Iterable[str]) -> None:
    """Inside a write transaction: count the words of these messages (once per message)."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(words(text))
    conn.executemany(
        f"INSERT INTO {TABLE} (term, docs) VALUES (?, ?) ON CONFLICT(term) DO UPDATE SET docs = docs + excluded.docs",
        counts.items(),
    )


def expand(conn: sqlite3.Connection, prefix: str, limit: int = EXPAND) -> tuple[list[str], bool]:
    """The most frequent words starting with ``prefix`` and whether they are all of them."""
    prefix = fold(prefix)
    rows = conn.execute(
        f"SELECT term FROM {TABLE} WHERE term >= ? AND term < ? ORDER BY docs DESC LIMIT ?",
        (prefix, prefix + "\U0010ffff", limit + 1),
    ).fetchall()
    return [r[0] for r in rows[:limit]], len(rows) <= limit
