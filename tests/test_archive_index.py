"""Correctness of our own archive indexes on randomised data: the vocabulary's prefix
expansion against FTS5's own prefix query, and CJK (also inside tool-call arguments
stored the way Hermes stores them, ``json.dumps`` defaults) against a substring scan
that decodes the JSON independently."""

from __future__ import annotations

import json
import random
import re
import shutil
import sqlite3
import unicodedata
from pathlib import Path

import pytest

from engine import FixedClock, open_home

LATIN = [
    "serve",
    "server",
    "service",
    "servo",
    "the",
    "then",
    "there",
    "them",
    "theory",
    "thesis",
    "data",
    "database",
    "deploy",
    "depot",
    "delta",
    "t",
    "th",
    "café",
    "cafe",
    "zebra",
    "session_search",
    "x1y2",
]
CJK = list("数据库迁移部署服务器半夜日志") + ["デプロイ", "サーバー", "ログ"]
HALF_WIDTH = re.compile("[\uff61-\uff9f]+")
# each katakana the corpus uses as half-width text ("デ": "ﾃﾞ"), for a third of its messages (not those
# with ﾟ: プ stays full-width, so a word mixes both widths, ﾃﾞプﾛｲ)
NARROW = {
    unicodedata.normalize("NFKC", half): half
    for half in [chr(c) for c in range(0xFF66, 0xFF9E)] + [chr(c) + "\uff9e" for c in range(0xFF66, 0xFF9E)]
    if len(unicodedata.normalize("NFKC", half)) == 1
}


def _narrow(text: str) -> str:
    return "".join(NARROW.get(char, char) for char in text)


def _folded(text: str) -> str:
    """Half-width katakana as NFKC makes them, in lower case: what the search compares."""
    return HALF_WIDTH.sub(lambda run: unicodedata.normalize("NFKC", run.group()), text).lower()


def _strings(value) -> list[str]:
    """Every string inside decoded JSON, argument strings decoded once more when they are JSON."""
    if isinstance(value, str):
        try:
            inner = json.loads(value)
        except ValueError:
            return [value]
        return [value, *_strings(inner)] if isinstance(inner, (dict, list)) else [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def decoded_scan(path, needle: str) -> set[int]:
    conn = sqlite3.connect(path)
    found = set()
    for mid, content, tool_name, calls in conn.execute("SELECT id, content, tool_name, tool_calls FROM messages"):
        texts = [content or "", tool_name or ""] + (_strings(json.loads(calls)) if calls else [])
        if any(_folded(needle) in _folded(t) for t in texts):
            found.add(mid)
    conn.close()
    return found


def _text(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(1, 8)):
        if rng.random() < 0.3:
            parts.append("".join(rng.choices(CJK, k=rng.randint(1, 5))))
        else:
            parts.append(rng.choice(LATIN))
    return " ".join(parts)


def _message(rng: random.Random, n: int) -> dict:
    """A third of the messages (content and tool-call arguments) written half-width: ﾃﾞﾌﾟﾛｲ, ｻｰﾊﾞｰ, ﾛｸﾞ."""
    return _wide_message(rng, n, _narrow if n % 3 == 0 else str)


def _wide_message(rng: random.Random, n: int, shape=str) -> dict:
    if rng.random() < 0.4:
        args = {"query": shape(_text(rng)), "limit": 3}
        hermes = rng.random() < 0.6
        arguments = json.dumps(args) if hermes and rng.random() < 0.5 else json.dumps(args, ensure_ascii=False)
        calls = [{"id": f"c{n}", "type": "function", "function": {"name": "session_search", "arguments": arguments}}]
        return {
            "role": "assistant",
            "content": None if rng.random() < 0.5 else shape(_text(rng)),
            "tool_calls": json.dumps(calls) if hermes else calls,
        }  # a string is stored as Hermes wrote it
    return {"role": rng.choice(["user", "assistant"]), "content": shape(_text(rng))}


@pytest.fixture(scope="module", params=[1, 2])
def corpus(request, tmp_path_factory):
    rng = random.Random(request.param)
    folder = tmp_path_factory.mktemp("index") / "home"
    home = open_home(folder, clock=FixedClock(1796040000.0))
    for s in range(12):
        home.archive.create_session(f"s{s}")
        home.archive.append_messages(f"s{s}", [_message(rng, s * 100 + i) for i in range(25)])
    home.archive.bigram_index.refresh()
    home.archive.create_session("late")  # (its messages are past the index: the scan of the gap finds them)
    home.archive.append_messages("late", [_message(rng, 9000 + i) for i in range(25)])
    yield home, rng
    home.close()


def test_cjk_recall_equals_a_decoding_substring_scan(corpus):
    home, rng = corpus
    queries = {"".join(rng.choices(CJK, k=rng.randint(1, 3))) for _ in range(30)} | {
        "数据库",
        "迁",
        "ログ",
        "数据库迁移",
        "ﾃﾞﾌﾟﾛｲ",
        "デプロイ",
        "ﾃﾞﾌﾟ",
        "サーバ",
        "ｰﾊﾞ",
    }
    found_any = False
    for query in sorted(queries):
        expected = decoded_scan(home.state_db_path, query)
        found_any = found_any or bool(expected)
        assert set(home.archive.iter_matches(query)) == expected, query
    assert found_any


def test_escaped_tool_call_arguments_are_found_and_shown_decoded(corpus):
    home, _ = corpus
    escaped = [
        mid
        for mid, calls in home.archive.conn().execute("SELECT id, tool_calls FROM messages")
        if calls and "\\u6570\\u636e" in calls
    ]
    assert escaped, "the corpus holds Hermes-escaped CJK arguments"
    assert set(escaped) <= set(home.archive.iter_matches("数据"))
    hits = home.archive.search("数据", limit=50)
    assert hits and all("\\u" not in h.snippet for h in hits)


RECALL_QUERIES = ["ﾃﾞﾌﾟﾛｲ", "デプロイ", "ﾃﾞﾌﾟ", "サーバ", "ｰﾊﾞ", "ログ", "数据库", "迁", "イ数"]


def _as_version_3(home) -> None:
    """The home's bigram index as version 3 left it: half-width katakana paired as written, not folded."""
    from engine.archive.cjk import TABLE, grams
    from engine.archive.query import CJK_CHAR, searchable_text

    index = home.archive.bigram_index
    index.refresh()
    rows = home.archive.conn().execute("SELECT id, content, tool_name, tool_calls FROM messages").fetchall()
    texts = [(r[0], searchable_text(*r[1:])) for r in rows]
    conn = sqlite3.connect(home.workbench_db_path)
    with conn:
        conn.execute(f"INSERT INTO {TABLE}({TABLE}) VALUES ('delete-all')")
        conn.executemany(
            f"INSERT INTO {TABLE}(rowid, grams) VALUES (?, ?)",
            [(mid, " ".join(grams(text))) for mid, text in texts if CJK_CHAR.search(text)],
        )
        conn.execute(f"UPDATE {TABLE}_state SET value = '3' WHERE key = 'version'")
    conn.close()


def _index_terms(home) -> set[tuple]:
    """Every (pair, message id, position) the bigram index holds."""
    conn = sqlite3.connect(home.workbench_db_path)
    conn.execute("CREATE VIRTUAL TABLE temp.terms USING fts5vocab(main, archive_cjk, instance)")
    terms = set(conn.execute("SELECT term, doc, offset FROM temp.terms"))
    conn.close()
    return terms


def _upgrading(tmp_path, monkeypatch, seed: int):
    """A home whose index is of version 3, with 25 messages past it, the upgrade in steps of a few rows."""
    from engine.archive import cjk

    monkeypatch.setattr(cjk, "FOLD_SCAN", 40)
    monkeypatch.setattr(cjk, "FOLD_ROWS", 6)
    rng = random.Random(seed)
    home = open_home(tmp_path / "home", clock=FixedClock(1796040000.0))
    for s in range(8):
        home.archive.create_session(f"s{s}")
        home.archive.append_messages(f"s{s}", [_message(rng, s * 100 + i) for i in range(25)])
    _as_version_3(home)
    home.archive.create_session("late")
    home.archive.append_messages("late", [_message(rng, 9000 + i) for i in range(25)])
    return home


@pytest.mark.parametrize("seed", [1, 2])
def test_an_index_of_version_3_is_upgraded_in_place_with_recall_whole_at_every_step(tmp_path, monkeypatch, seed):
    """Only the pairs of text holding half-width katakana changed from version 3, so its upgrade re-indexes
    those messages alone, in bounded steps; until it ends, searches scan them. It ends as a rebuild would."""
    from engine.archive.query import HALF_WIDTH_KANA, searchable_text

    home = _upgrading(tmp_path, monkeypatch, seed)
    index = home.archive.bigram_index
    narrow = {
        mid
        for mid, *values in home.archive.conn().execute("SELECT id, content, tool_name, tool_calls FROM messages")
        if HALF_WIDTH_KANA.search(searchable_text(*values))
    }
    assert any(
        json.dumps("ﾃ")[1:-1] in (calls or "")
        for (calls,) in home.archive.conn().execute("SELECT tool_calls FROM messages")
    ), "half-width katakana escaped in tool-call JSON, as Hermes stores them"
    index.refresh()  # (the late messages, folded: what a search does first)
    before = _index_terms(home)
    steps = 0
    while True:
        for query in RECALL_QUERIES:
            assert set(home.archive.iter_matches(query)) == decoded_scan(home.state_db_path, query), (steps, query)
        if not index.fold_step():
            break
        steps += 1
        assert steps < 100
    assert steps > 3 and index.unfolded() is None and index.current()
    upgraded = _index_terms(home)
    assert {doc for _, doc, _ in before ^ upgraded} <= narrow  # no other message was re-indexed
    index.rebuild()
    assert _index_terms(home) == upgraded
    home.close()


def test_a_search_leaves_the_upgrade_to_idle_upkeep_which_resumes_after_a_restart(tmp_path, monkeypatch):
    """A search on an index of version 3 rebuilt it whole before answering (9 s and 14 s on a 120k-message
    home, the first CJK searches after upgrading). Now it answers at once, scanning what is not folded yet."""
    home = _upgrading(tmp_path, monkeypatch, 3)
    index = home.archive.bigram_index
    assert set(home.archive.iter_matches("ﾃﾞﾌﾟﾛｲ")) == decoded_scan(home.state_db_path, "ﾃﾞﾌﾟﾛｲ") != set()
    assert index.unfolded() == (1, 200) and index.high_water() == 225  # the late messages indexed, folded
    assert index.fold_step() and index.fold_step()
    first, last = index.unfolded()
    assert 1 < first <= last == 200
    home.close()  # (each step is its own transaction: a kill between two is this)
    home = open_home(tmp_path / "home", clock=FixedClock(1796040000.0))
    index = home.archive.bigram_index
    assert index.unfolded() == (first, last)
    while home.archive.upkeep(budget_s=0.01):
        pass
    assert index.unfolded() is None
    upgraded = _index_terms(home)
    index.rebuild()
    assert _index_terms(home) == upgraded
    home.close()


def _native_prefix(home, prefix: str) -> set[int]:
    rows = home.archive.conn().execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?", (prefix + "*",))
    return {r[0] for r in rows}


@pytest.mark.parametrize(
    "prefix",
    [
        "s",
        "se",
        "serv",
        "servi",
        "t",
        "th",
        "the",
        "them",
        "d",
        "da",
        "caf",
        "z",
        "x1",
        "ser",
        "therm",
        "session_s",
        "session_search",
        "c",
    ],
)
def test_a_typed_prefix_matches_what_fts5_prefix_query_matches(corpus, prefix):
    home, _ = corpus
    expected = _native_prefix(home, prefix)
    got = set(home.archive.iter_matches(prefix + "*"))  # an explicit prefix: the exact expansion or FTS5's own
    assert got == expected
    hits = home.archive.search(prefix, prefix=True, limit=50)
    assert {h.match_message_id for h in hits} <= expected
    assert all(re.search(r"prefix", h.plan) for h in hits)
    if hits and hits[0].plan.endswith(":prefix"):  # every word of the prefix was expanded: the same newest hits
        newest = sorted(expected, reverse=True)
        assert hits[0].match_message_id == newest[0]


def test_prefix_plan_reads_words_the_vocabulary_has_not_counted(corpus):
    home, _ = corpus
    home.archive.append_messages("late", [{"role": "user", "content": "servaltine arrived"}])
    blocker = sqlite3.connect(home.root / "workbench.db")
    blocker.execute("BEGIN IMMEDIATE")  # the refresh a search tries gives up at once
    try:
        hits = home.archive.search("servalt", prefix=True)
        assert home.archive.bigram_index.high_water() < max(_native_prefix(home, "servalt"))
    finally:
        blocker.rollback()
        blocker.close()
    assert [h.session_id for h in hits] == ["late"] and hits[0].plan == "fts:newest:prefix"


def test_idle_upkeep_merges_every_index_in_bounded_steps_and_doctor_reports_it(tmp_path, monkeypatch):
    from engine.archive import upkeep
    from engine.doctor import examine

    monkeypatch.setattr(upkeep, "MERGE_PAGES", 2)  # this small index then needs several steps
    monkeypatch.setattr(upkeep, "SMALL_INDEX_PAGES", 50)  # and is large enough for doctor to name

    home = open_home(tmp_path / "frag", clock=FixedClock(1796040000.0))
    archive = home.archive
    archive.create_session("s")
    archive.conn().execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('automerge', 0)")
    rng = random.Random(7)
    pool = [f"w{n}" for n in range(3000)]
    for i in range(40):  # one transaction each: one new segment each, of a few pages
        archive.append_messages(
            "s",
            [_message(rng, i)] + [{"role": "user", "content": " ".join(rng.choices(pool, k=300))} for _ in range(10)],
        )
    queries = ["serv*", "the", "数据", "deploy", "ログ"]
    before = {q: [h.match_message_id for h in archive.search(q, limit=50)] for q in queries}
    assert archive.fragmentation()["messages_fts"] >= 8
    assert any(f.area == "archive" and f.severity == "warning" and "fragmented" in f.what for f in examine(home))
    calls, steps = 0, 0
    while done := archive.upkeep(budget_s=0.01):
        calls, steps = calls + 1, steps + sum(done.values())
        assert calls < 500
    assert steps > 2  # several small merges, not one optimize
    assert archive.merge_work() == [] and max(archive.fragmentation().values()) <= 3
    assert {q: [h.match_message_id for h in archive.search(q, limit=50)] for q in queries} == before
    assert not any(f.area == "archive" and f.severity == "warning" for f in examine(home))
    [said] = [f.what for f in examine(home) if f.area == "archive"]  # (it said "merged" of 7 segments)
    assert said.startswith("Search indexes need no merging: messages_fts ")
    assert re.search(r"messages_fts (1 segment|[2-8] segments),", said) and "(s)" not in said, said


def test_doctor_says_why_each_index_needs_no_merging(tmp_path):
    """A fresh Hermes home's 40 one-turn segments are small: doctor said "each has fewer than 8 segments
    ...: messages_fts 13 segment(s)", which read as a contradiction. Each index now has its own reason."""
    from engine.doctor import examine

    home = open_home(tmp_path / "fresh", clock=FixedClock(1796040000.0))
    home.archive.create_session("s")
    home.archive.conn().execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('automerge', 0)")
    for i in range(12):  # one transaction each: one new segment each, of a page or so
        home.archive.append_messages("s", [{"role": "user", "content": f"turn {i} about the deploy"}])
    assert home.archive.fragmentation()["messages_fts"] >= 8
    [said] = [f.what for f in examine(home) if f.area == "archive"]
    segments = home.archive.fragmentation()["messages_fts"]
    assert f"messages_fts {segments} segments but " in said and "pages (under 1,000), read in a blink" in said
    assert "fewer than" not in said
    home.close()
    home.close()


def test_idle_merges_keep_the_wal_small(tmp_path, monkeypatch):
    """The archive's connections never checkpoint by themselves, so idle merge steps must count
    as writes: a TUI left open on the 1M bench archive (its indexes mid-merge, as built) once
    grew a 5.3 GB state.db-wal, which the next opener then had to read back before anyone
    (Hermes included) could use the database. Here: 30 MB without checkpoints, 2-5 MB with."""
    from engine.archive import upkeep
    from engine.db import Checkpointer

    monkeypatch.setattr(upkeep, "MERGE_PAGES", 4)
    monkeypatch.setattr(Checkpointer, "EVERY", 4)
    monkeypatch.setattr(Checkpointer, "RESTART_FRAMES", 100)  # about 400 KB of pages
    home = open_home(tmp_path / "idle", clock=FixedClock(1796040000.0))
    archive = home.archive
    archive.create_session("s")
    for table in ("messages_fts", "messages_fts_trigram"):
        archive.conn().execute(f"INSERT INTO {table}({table}, rank) VALUES ('automerge', 0)")
    rng = random.Random(7)
    pool = [f"w{n}" for n in range(3000)]
    for _ in range(60):
        archive.append_messages(
            "s", [{"role": "user", "content": " ".join(rng.choices(pool, k=300))} for _ in range(10)]
        )
    archive.conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    wal = archive.path.with_name(archive.path.name + "-wal")
    restarts, peak = archive._checkpoints.restarts, 0
    while archive.upkeep(budget_s=0.01):
        assert archive._checkpoints.settle()  # under load the thread lags by seconds (19 MB in a CI run)
        peak = max(peak, wal.stat().st_size)
    assert archive.merge_work() == [] and max(archive.fragmentation().values()) <= 3
    assert archive._checkpoints.restarts > restarts
    assert peak < 16 * 2**20  # (8.9 MB seen on a loaded machine: still far below the 30 MB it would be)
    home.close()


def test_upkeep_merges_even_while_the_cjk_index_catches_up_for_many_calls(tmp_path):
    """Rows another writer added (Hermes, or a soak of CLI runs) leave our CJK index behind: each
    catch-up batch may spend a whole idle step, and upkeep must still report work until the merges
    are done (a 2,000-turn soak once ended with fragmented indexes because it did not)."""
    home = open_home(tmp_path / "lag", clock=FixedClock(1796040000.0))
    archive = home.archive
    archive.create_session("s")
    archive.conn().execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('automerge', 0)")
    other = sqlite3.connect(home.state_db_path, isolation_level=None)
    for i in range(30):  # one transaction each, as another process would write them
        other.execute("BEGIN IMMEDIATE")
        other.executemany(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', ?, ?)",
            [(f"message {i}-{k} 数据库 deploy", 1796040000.0 + i) for k in range(150)],
        )
        other.execute("COMMIT")
    other.close()
    assert archive.fragmentation()["messages_fts"] >= 8
    calls = 0
    while archive.upkeep(budget_s=0.0001):  # every call's budget goes to one CJK batch at first
        calls += 1
        assert calls < 2000
    assert archive.merge_work() == [] and max(archive.fragmentation().values()) <= 3
    assert len(archive.search("数据库", limit=5000)) >= 1
    home.close()


def test_upkeep_gives_up_at_once_when_the_archive_is_busy(tmp_path):
    home = open_home(tmp_path / "busy", clock=FixedClock(1796040000.0))
    archive = home.archive
    archive.create_session("s")
    archive.conn().execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('automerge', 0)")
    for i in range(10):
        archive.append_messages("s", [{"role": "user", "content": f"message {i}"}])
    segments = archive.fragmentation()["messages_fts"]
    blocker = sqlite3.connect(home.state_db_path)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        assert "messages_fts" not in archive.upkeep()
    finally:
        blocker.rollback()
        blocker.close()
    assert archive.fragmentation()["messages_fts"] == segments
    home.close()


def test_upkeep_on_a_home_with_no_state_db_creates_none(tmp_path):
    """The TUI's idle upkeep opened state.db for its merges, so a home whose first session had not come
    yet got an empty archive two seconds after the app started (and doctor's report changed under it)."""
    home = open_home(tmp_path / "new", clock=FixedClock(1796040000.0))
    assert home.archive.upkeep() == {}
    assert not home.state_db_path.exists()
    home.close()


@pytest.mark.parametrize("interleaved", [False, True])
def test_grouping_finds_every_session_whether_sessions_interleave_or_not(tmp_path, interleaved):
    home = open_home(tmp_path / "group", clock=FixedClock(1796040000.0))
    archive = home.archive
    rng = random.Random(3)
    names = [f"s{i}" for i in range(30)]
    for name in names:
        archive.create_session(name)
    order = [n for n in names for _ in range(12)]
    if interleaved:
        rng.shuffle(order)
    for name in order:  # a common word everywhere, a rarer one in some sessions only
        archive.append_messages(
            name, [{"role": "user", "content": "the plan" + (" thermos" if name[-1] in "37" else "")}]
        )
    for query, prefix in (("the", False), ("th", True), ("thermos", False), ("ther", True)):
        hits = archive.search(query, limit=100, prefix=prefix)
        expected = (
            {n for n in names if query.startswith("the") and (query == "the" or n[-1] in "37")}
            if not prefix
            else ({n for n in names} if query == "th" else {n for n in names if n[-1] in "37"})
        )
        assert {h.session_id for h in hits} == expected, (query, interleaved)
    home.close()


WRITER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)  # as Hermes's SessionDB writes: a row, its triggers
for line in sys.stdin:
    conn.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', ?, 0)", (line,))
    print("ok", flush=True)
"""


def test_idle_merges_beside_another_writer_keep_the_index_shallow_and_readable(tmp_path, monkeypatch):
    """Another program writing a message between idle steps (Hermes beside an open TUI) once made
    every step gather all segments into a new top level, starting the merge over: 216 levels and
    248 segments within a minute on the 1M archive, and after about 900 steps on a small one the
    index read as 'database disk image is malformed', to Hermes's writes too. Steps now carry on
    the merge under way, and gather only once the small segments add up."""
    import subprocess
    import sys

    from engine.archive import merges, upkeep

    monkeypatch.setattr(upkeep, "MERGE_PAGES", 2)  # merges span many steps, so writes fall inside them
    home = open_home(tmp_path / "beside", clock=FixedClock(1796040000.0))
    archive = home.archive
    archive.create_session("s")
    rng = random.Random(3)
    pool = [f"w{n}" for n in range(4000)]
    for _ in range(12):
        archive.append_messages(
            "s", [{"role": "user", "content": " ".join(rng.choices(pool, k=400))} for _ in range(5)]
        )
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(home.state_db_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    conn, deepest, widest = archive.conn(), 0, 0
    try:
        for _ in range(300):
            archive.upkeep(budget_s=0.0)  # one step per index
            writer.stdin.write(" ".join(rng.choices(pool, k=50)) + "\n")
            writer.stdin.flush()
            assert writer.stdout.readline() == "ok\n"  # the other program's write went in
            deepest = max(deepest, *(len(merges.structure(conn, t)) for t in ("messages_fts", "messages_fts_trigram")))
            widest = max(widest, *archive.fragmentation().values())
    finally:
        writer.stdin.close()
        writer.wait(timeout=30)
    assert deepest <= 16 and widest <= 24  # before: 600 levels; 16 segments is FTS5's own crisismerge bound
    while archive.upkeep(budget_s=0.05):
        pass
    assert archive.merge_work() == []
    contents = [row[0] for row in conn.execute("SELECT content FROM messages")]
    for table in ("messages_fts", "messages_fts_trigram"):
        conn.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")  # raises if it is not
    words = conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'w17'").fetchone()[0]
    pieces = conn.execute("SELECT count(*) FROM messages_fts_trigram WHERE messages_fts_trigram MATCH 'w17'").fetchone()
    assert words == sum("w17" in c.split() for c in contents) > 0
    assert pieces[0] == sum("w17" in c for c in contents)
    home.close()


def test_a_hit_in_tool_call_arguments_reads_as_the_call_not_as_json(tmp_path):
    """Hermes stores arguments as JSON inside JSON: a quote in them read ``\\\\\\"`` in the excerpt."""
    from engine import open_home

    home = open_home(tmp_path / "h")
    home.archive.create_session("s", title="Tulips")
    arguments = {"action": "add", "target": "user", "content": 'Plants tulip bulbs: "every spring", 数据'}
    call = {"id": "c1", "type": "function", "function": {"name": "memory", "arguments": json.dumps(arguments)}}
    home.archive.append_messages("s", [{"role": "assistant", "content": None, "tool_calls": [call]}])
    [hit] = home.archive.search("bulbs")
    assert hit.snippet.replace("«", "").replace("»", "") == (
        'memory: action=add target=user content=Plants tulip bulbs: "every spring", 数据'
    )
    home.close()


def test_a_home_used_only_from_the_command_line_upgrades_its_index_and_says_how_far(tmp_path, monkeypatch):
    """Only the TUI's idle upkeep ran the upgrade, so a home used from the command line alone kept scanning
    every katakana search through the messages not upgraded (on 200,000 messages, 140 s a search where
    the whole upgrade takes 16 s) and nothing said so, doctor included. Now doctor reports it and
    `--fix` finishes it; a search takes it a step further, and finishes it first when it would scan."""
    from tests.cli_support import ran

    home = _upgrading(tmp_path, monkeypatch, 4)
    root = str(home.root)
    home.close()
    status, out, _ = ran("doctor", "--home", root)
    assert status == 1 and "The CJK search index is being upgraded for half-width katakana: 0% done" in out
    status, out, err = ran("sessions", "search", "server", "--home", root, "--json")
    assert status == 0 and json.loads(out)["count"] and "note: The CJK search index is" in err
    home = open_home(root, clock=FixedClock(1796040000.0))
    assert home.archive.bigram_index.unfolded() != (1, 200)  # a step further at least
    _as_version_3(home)
    expected = decoded_scan(home.state_db_path, "ﾃﾞﾌﾟﾛｲ")
    home.close()
    status, out, err = ran("sessions", "search", "ﾃﾞﾌﾟﾛｲ", "--home", root, "--json", "--limit", "500")
    assert status == 0 and {r["match_message_id"] for r in json.loads(out)["results"]} <= expected != set()
    assert "upgrading the CJK search index first" in err and "search index is upgraded" in err
    home = open_home(root, clock=FixedClock(1796040000.0))
    assert home.archive.bigram_index.unfolded() is None
    assert set(home.archive.iter_matches("ﾃﾞﾌﾟﾛｲ")) == expected
    _as_version_3(home)
    home.close()
    status, out, _ = ran("doctor", "--fix", "--home", root)
    assert "workbench.db: The CJK search index is upgraded" in out and "being upgraded" not in out
    home = open_home(root, clock=FixedClock(1796040000.0))
    assert home.archive.bigram_index.unfolded() is None
    home.close()


@pytest.mark.parametrize("bound", [None, 0.0], ids=["time-enough", "no-time"])
def test_the_agents_session_search_upgrades_the_index_first_within_a_bound_and_says_so(tmp_path, monkeypatch, bound):
    """`workbench run`'s agent searched with session_search on an index of version 3 without a step of its
    upgrade: each katakana search scanned every message not upgraded, the turn waiting, and the result did
    not say why. Now the tool runs the command's rule (``upgrade_before_search``), bounded, and a result
    that still scanned says so."""
    from engine.archive import session_search

    if bound is not None:
        monkeypatch.setattr(session_search, "UPGRADE_S", bound)
    home = _upgrading(tmp_path, monkeypatch, 4)
    try:
        expected = decoded_scan(home.state_db_path, "ﾃﾞﾌﾟﾛｲ")
        found = session_search.session_search_tool(home, {"query": "ﾃﾞﾌﾟﾛｲ", "limit": 10})
        assert found["success"] and found["count"] and {r["match_message_id"] for r in found["results"]} <= expected
        note = found.get("note") or ""
        if bound is None:
            assert home.archive.bigram_index.unfolded() is None and "upgraded" not in note
        else:
            assert home.archive.bigram_index.unfolded() is not None
            assert "The CJK search index is being upgraded for half-width katakana: 0% done" in note
            assert "(correct, but slower)" in note
    finally:
        home.close()


def _another_state_db_under_an_upgrade(tmp_path, monkeypatch) -> Path:
    """A home whose CJK index was being upgraded from version 3, another home's one-message state.db (a
    half-width katakana message in session x) copied over its state.db; the home's folder."""
    home = _upgrading(tmp_path, monkeypatch, 3)
    root = home.root
    home.close()
    other = open_home(tmp_path / "other", clock=FixedClock(1796040000.0))
    other.archive.create_session("x")
    other.archive.append_messages("x", [{"role": "user", "content": "ﾃﾞﾌﾟﾛｲ the other server"}])
    other.close()
    for suffix in ("-wal", "-shm"):
        (root / f"state.db{suffix}").unlink(missing_ok=True)
    shutil.copyfile(tmp_path / "other" / "state.db", root / "state.db")
    return root


def test_the_agents_search_of_a_state_db_put_in_place_of_one_being_upgraded_says_no_upgrade(tmp_path, monkeypatch):
    """session_search on another state.db copied over the one whose index was being upgraded told the agent
    "being upgraded …: 0% done …, searches for katakana also scan …", though the search itself rebuilt the
    index for that archive, which ended the upgrade. The upgrade's look now rebuilds it first."""
    from engine.archive import session_search

    home = open_home(_another_state_db_under_an_upgrade(tmp_path, monkeypatch), clock=FixedClock(1796040000.0))
    try:
        found = session_search.session_search_tool(home, {"query": "ﾃﾞﾌﾟﾛｲ", "limit": 10})
        assert found["success"] and [r["session_id"] for r in found["results"]] == ["x"]
        assert "upgraded" not in (found.get("note") or "")
        assert home.archive.bigram_index.unfolded() is None
    finally:
        home.close()


def test_doctor_fix_rebuilds_the_index_of_a_state_db_put_in_place_of_the_one_it_was_upgrading(tmp_path, monkeypatch):
    """With another, smaller state.db copied over the one whose CJK index was being upgraded (while a TUI had
    the home open), `doctor --fix` said "workbench.db is busy or read-only; run `workbench doctor --fix`
    again", and again at every run: no step of the upgrade applies to another archive. It rebuilds the
    index for the archive state.db holds now, and says so."""
    from tests.cli_support import ran

    root = _another_state_db_under_an_upgrade(tmp_path, monkeypatch)
    status, out, _ = ran("doctor", "--home", str(root))  # (it said "0% done", as if the upgrade went on)
    assert "state.db holds fewer messages than the CJK search index was built from" in out and "0% done" not in out
    assert "Run `workbench doctor --fix` to rebuild the index for it now" in out
    status, out, _ = ran("doctor", "--fix", "--home", str(root))
    assert "fixed: workbench.db: state.db holds fewer messages than the CJK search index was built from" in out
    assert "busy or read-only" not in out and "being upgraded" not in out
    home = open_home(root, clock=FixedClock(1796040000.0))
    assert home.archive.bigram_index.unfolded() is None and not home.archive.bigram_index.replaced()
    assert [hit.session_id for hit in home.archive.search("ﾃﾞﾌﾟﾛｲ")] == ["x"]
    home.close()


def test_a_latin_search_from_the_command_line_leaves_a_home_without_workbench_db_so(tmp_path):
    """Looking for an index upgrade before a search created workbench.db, with an empty CJK index, in a
    home only Hermes had used, where a search for English words had written nothing."""
    from tests.cli_support import ran

    home = open_home(tmp_path / "home")
    home.archive.create_session("s1")
    home.archive.append_messages("s1", [{"role": "user", "content": "deploy the server"}])
    home.close()
    for path in (tmp_path / "home").glob("workbench.db*"):
        path.unlink()
    status, out, err = ran("sessions", "search", "deploy", "--home", str(tmp_path / "home"))
    assert status == 0 and "deploy" in out and not err
    assert not (tmp_path / "home" / "workbench.db").exists()


def test_the_agents_session_search_scans_a_bounded_part_of_what_the_upgrade_has_not_reached(tmp_path, monkeypatch):
    """With the upgrade's bounded steps spent and much left, the agent's search scanned every message the
    upgrade had not reached, without bound (about 0.7 ms each: minutes on a large home), the turn waiting.
    Now it scans the newest ``UNFOLDED_MOST`` of them, and its result says it may be incomplete."""
    from engine.archive import session_search

    monkeypatch.setattr(session_search, "UPGRADE_S", 0.0)
    monkeypatch.setattr(session_search, "UNFOLDED_MOST", 20)
    home = open_home(tmp_path / "home", clock=FixedClock(1796040000.0))
    try:
        home.archive.create_session("old")
        home.archive.append_messages("old", [{"role": "user", "content": "ﾃﾞﾌﾟﾛｲ the old server"}])
        home.archive.create_session("filler")
        home.archive.append_messages("filler", [{"role": "user", "content": f"note {i}"} for i in range(40)])
        _as_version_3(home)
        found = session_search.session_search_tool(home, {"query": "デプロイ", "limit": 10})
        assert found["success"] and found["results"] == []  # (the old message is past the bound)
        assert "This search scanned only the newest 20 of them" in found["note"]
        assert "results may be incomplete" in found["note"] and "among the 21 older message ids" in found["note"]
        monkeypatch.setattr(session_search, "UNFOLDED_MOST", 41)  # all of them: found, and nothing said of a cut
        found = session_search.session_search_tool(home, {"query": "デプロイ", "limit": 10})
        assert [r["session_id"] for r in found["results"]] == ["old"] and "incomplete" not in found["note"]
    finally:
        home.close()
