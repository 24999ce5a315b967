"""Search: routing, grouping, snippets, CJK recall against a substring scan, and hostile queries."""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import sqlite3
import time
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import FixedClock, open_home
from engine.archive import MARK_CLOSE, MARK_OPEN
from engine.archive.filters import SearchFilters, read_filters
from engine.archive.query import parse
from engine.errors import BadSearchFilter
from tests.archive_support import copy_database
from tests.cli_support import completed

CHINESE = ["部署", "服务器", "数据库", "迁移", "半夜", "日志", "数据", "回滚", "配置", "超时", "的", "了"]
JAPANESE = ["デプロイ", "サーバー", "データベース", "ログ", "ロールバック", "設定", "の", "は", "です"]
ENGLISH = ["deploy", "server", "database", "migration", "log", "timeout", "rollback", "the", "config", "yaml"]
CJK_QUERIES = [
    "部署",
    "数据",
    "日志",
    "半夜",
    "数据库迁",
    "据库迁移",
    "服务器部",
    "ログ",
    "デプ",
    "デプロイ",
    "ーバー",
    "データベ",
    "の設",
    "迁移的",
]


def _sentence(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.35:
        return "".join(rng.choice(CHINESE) for _ in range(rng.randint(3, 10)))
    if kind < 0.6:
        return "".join(rng.choice(JAPANESE) for _ in range(rng.randint(3, 10)))
    words = [rng.choice(ENGLISH) for _ in range(rng.randint(3, 10))]
    if kind < 0.85:  # mixed
        words.insert(rng.randint(0, len(words)), "".join(rng.choice(CHINESE + JAPANESE) for _ in range(3)))
    return " ".join(words)


def build(home, seed: int = 7, sessions: int = 40) -> None:
    rng = random.Random(seed)
    archive = home.archive
    for s in range(sessions):
        sid = f"s{s:03d}"
        parent = f"s{s - 1:03d}" if s % 4 and s else None
        if parent:
            archive.end_session(parent, "compression")
        archive.create_session(sid, source=rng.choice(["cli", "telegram", "subagent"]), parent_session_id=parent)
        turn = []
        for _ in range(rng.randint(4, 12)):
            role = rng.choice(["user", "assistant", "tool"])
            message = {"role": role, "content": _sentence(rng)}
            if role == "assistant" and rng.random() < 0.3:
                args = {"command": _sentence(rng)}
                message["tool_calls"] = [
                    {
                        "id": "c",
                        "type": "function",
                        "function": {"name": "terminal", "arguments": json.dumps(args, ensure_ascii=False)},
                    }
                ]
            if role == "tool":
                message["tool_name"] = rng.choice(["terminal", "read_file"])
            turn.append(message)
        archive.append_messages(sid, turn)


def substring_scan(path, needle: str) -> set[int]:
    conn = sqlite3.connect(path)
    rows = conn.execute(
        "SELECT id, COALESCE(content,'') || ' ' || COALESCE(tool_name,'') || ' ' || COALESCE(tool_calls,'')"
        " FROM messages WHERE active = 1 OR compacted = 1"
    ).fetchall()
    conn.close()
    return {mid for mid, text in rows if folded(needle) in folded(text)}


def folded(text: str) -> str:
    """As the CJK path compares text: half-width katakana as NFKC makes them, in lower case."""
    return re.sub("[\uff61-\uff9f]+", lambda run: unicodedata.normalize("NFKC", run.group()), text).lower()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus") / "home"
    home = open_home(folder, clock=FixedClock(1796040000.0))
    build(home)
    yield home
    home.close()


@pytest.mark.parametrize("query", CJK_QUERIES)
def test_cjk_queries_find_every_message_a_substring_scan_finds(corpus, query):
    expected = substring_scan(corpus.state_db_path, query)
    assert expected, f"corpus should contain {query}"
    assert set(corpus.archive.iter_matches(query)) == expected
    hits = corpus.archive.search(query, limit=1000)
    found = {corpus.archive.message(m).session_id for m in expected}
    assert {h.session_id for h in hits} <= found
    chains = {corpus.archive.chain_of(sid).head.id for sid in found}
    assert [h.segments[0] for h in hits if h.session_id in h.segments] == [h.segments[0] for h in hits]
    assert {h.segments[0] for h in hits} == chains and len(hits) == len(chains)  # one per tree row, every row
    per_lineage = corpus.archive.search(query, limit=1000, per="lineage")
    roots = {corpus.archive.root_of(sid) for sid in found}
    assert {h.root_id for h in per_lineage} == roots and len(per_lineage) == len(roots)  # as session_search groups
    assert all(f"{MARK_OPEN}{query}{MARK_CLOSE}" in h.snippet for h in hits if h.role != "tool")
    assert all(h.plan.startswith("bigram") for h in hits)


@pytest.mark.parametrize("query", ["的", "ロ", "库"])
def test_one_character_cjk_queries_use_the_index_and_find_every_match(corpus, query):
    expected = substring_scan(corpus.state_db_path, query)
    assert expected, f"corpus should contain {query}"
    assert set(corpus.archive.iter_matches(query)) == expected  # pairs it starts, or the run end it is
    assert {h.plan for h in corpus.archive.search(query, limit=50)} == {"bigram:ranked"}


@pytest.fixture(scope="module")
def hermes_only_copy(corpus, tmp_path_factory):
    """The corpus's state.db alone, as a home that never had our index (no workbench.db)."""
    folder = tmp_path_factory.mktemp("hermes_only")
    copy_database(corpus.state_db_path, folder / "state.db")
    return folder


@pytest.mark.parametrize(
    ("query", "source"),
    # (katakana may be written half-width, so Hermes's trigram table cannot narrow by them: a scan does)
    [("部署", "like"), ("数据库迁", "trigram"), ("デプロイ", "like"), ("ログ", "like"), ("的", "like")],
)
def test_cjk_recall_without_our_index_uses_trigram_or_scan(corpus, hermes_only_copy, query, source):
    ro = open_home(hermes_only_copy, read_only=True, clock=FixedClock(1796040000.0))
    try:
        assert not ro.archive.bigram_index.available()
        assert set(ro.archive.iter_matches(query)) == substring_scan(corpus.state_db_path, query)
        plan = ro.archive.search(query)[0].plan
        assert plan.split(":")[0] == source
    finally:
        ro.close()
    assert not (hermes_only_copy / "workbench.db").exists()


def test_rows_written_by_another_process_are_indexed_or_scanned(tmp_path, clock):
    home = open_home(tmp_path / "h", clock=clock)
    build(home, seed=3, sessions=6)
    assert set(home.archive.iter_matches("半夜")) == substring_scan(home.state_db_path, "半夜")
    # a Hermes process appends rows behind our back
    conn = sqlite3.connect(home.state_db_path)
    conn.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s000', 'user', '今天半夜回滚', 1)"
    )
    conn.commit()
    new_id = conn.execute("SELECT max(id) FROM messages").fetchone()[0]
    conn.close()
    ro = open_home(home.root, read_only=True, clock=clock)  # cannot extend the index: scans the gap
    assert new_id in set(ro.archive.iter_matches("半夜"))
    ro.close()
    assert new_id in set(home.archive.iter_matches("半夜"))  # writable: indexed on the next search
    assert home.archive.bigram_index.high_water() == new_id
    home.close()


def test_half_width_katakana_inside_japanese_text_is_found_and_an_older_index_is_rebuilt(tmp_path, clock):
    """``今日はﾗｰﾒﾝを食べた`` is one token to the word index, and half-width katakana was not CJK
    to the router, so ﾗｰﾒﾝ found nothing; an index built before it was CJK is rebuilt. Either width finds
    both (``ﾗｰﾒﾝ`` found only what was written half-width, ``ラーメン`` only full-width)."""
    from engine.archive.cjk import TABLE

    home = open_home(tmp_path / "h", clock=clock)
    archive = home.archive
    archive.create_session("s", title="Food")
    texts = ["今日はﾗｰﾒﾝを食べた", "ﾃｽﾄ ﾒｯｾｰｼﾞ", "全角のラーメンです", "plain words", "ﾃﾞﾌﾟﾛｲ完了", "本番にデプロイ"]
    archive.append_messages("s", [{"role": "user", "content": t} for t in texts])
    for query in ("ﾗｰﾒﾝ", "ﾗｰ", "ﾗ", "ﾒｯｾｰｼﾞ", "ラーメン", "ﾃﾞﾌﾟﾛｲ", "デプロイ", "ﾃﾞ", "デ"):
        assert set(archive.iter_matches(query)) == substring_scan(home.state_db_path, query) != set(), query
        assert {h.plan for h in archive.search(query)} == {"bigram:ranked"}, query
    assert set(archive.iter_matches("ラーメン")) == set(archive.iter_matches("ﾗｰﾒﾝ")) == {1, 3}
    assert set(archive.iter_matches("デプロイ")) == {5, 6}
    (hit,) = archive.search("デプロイ", limit=1)
    assert "«ﾃﾞﾌﾟﾛｲ»" in hit.snippet or "«デプロイ»" in hit.snippet, hit.snippet  # marked as written
    conn = sqlite3.connect(home.workbench_db_path)
    with conn:  # an index of version 2 (emptied here): rebuilt whole, folded (version 3 is upgraded in place)
        conn.execute(f"UPDATE {TABLE}_state SET value = '2' WHERE key = 'version'")
        conn.execute(f"INSERT INTO {TABLE}({TABLE}) VALUES ('delete-all')")
    conn.close()
    assert set(archive.iter_matches("ﾗｰﾒﾝ")) == {1, 3}  # (rebuilt folded)
    home.close()


def test_mixed_latin_and_cjk_query_requires_both(corpus):
    expected = substring_scan(corpus.state_db_path, "数据") & substring_scan(corpus.state_db_path, "deploy")
    assert set(corpus.archive.iter_matches("数据 deploy")) == expected


def test_search_as_you_type_past_the_first_word_finds_what_the_words_find(tmp_path, clock):
    """The last word typed is expanded into whole words ORed in parentheses, which FTS5 refuses
    right after another term unless joined by AND: every query of two plain words found nothing."""
    archive = open_home(tmp_path / "h", clock=clock).archive
    texts = ["the error log shows a timeout", "log error: the rollout failed", "What's the safest path?"]
    for n, text in enumerate(texts):
        archive.create_session(f"s{n}", title=f"S{n}")
        archive.append_messages(f"s{n}", [{"role": "user", "content": text}])

    def typed(text: str) -> set[int]:
        return {h.match_message_id for h in archive.search(text, prefix=True, limit=50)}

    assert typed("safest path") == typed("safest pa") == typed("safest p") == {3}
    assert typed("error lo") == {1, 2} and typed("log timeo") == {1} and typed("the rollout fa") == {2}
    assert typed("failed OR timeo") == {1, 2} and typed("error NOT timeo") == {2}


def test_a_not_with_nothing_before_it_is_left_out_and_said_never_searched_for(tmp_path, clock, capsys):
    """``NOT timeout`` searched for timeout, and ``error AND NOT timeout`` for both words: the very
    messages the user excluded. Now the first is left out with a note, the second reads as ``error NOT timeout``."""
    from engine.archive.session_search import session_search_tool
    from workbench.cli import main

    home = open_home(tmp_path / "h", clock=clock)
    archive = home.archive
    texts = ["the error log shows a timeout", "error: the rollout failed", "a timeout again"]
    for n, text in enumerate(texts):
        archive.create_session(f"s{n}", title=f"S{n}")
        archive.append_messages(f"s{n}", [{"role": "user", "content": text}])

    def found(text: str, prefix: bool = False) -> set[int]:
        return {h.match_message_id for h in archive.search(text, prefix=prefix, limit=50)}

    assert found("NOT timeout") == set() and found("NOT timeo", prefix=True) == set()
    assert "'NOT timeout'" in archive.search_note("NOT timeout") and archive.search_note("error NOT timeout") is None
    assert found("error AND NOT timeout") == found("error NOT timeout") == {2}
    assert found("rollout OR NOT timeout") == {2} and "'NOT timeout'" in archive.search_note("rollout OR NOT timeout")
    assert found("NOT error AND timeout") == found("timeout NOT error") == {3}  # excludes from what follows
    assert archive.search_note("NOT error AND timeout") is None
    assert session_search_tool(home, {"query": "NOT timeout"})["note"] == archive.search_note("NOT timeout")
    assert "note" not in session_search_tool(home, {"query": "timeout"})
    home.close()
    assert main(["--home", str(tmp_path / "h"), "sessions", "search", "NOT timeout"]) == 2  # nothing left to search
    said = capsys.readouterr()
    assert "error: Nothing was searched. Left out 'NOT timeout'" in said.err and "no matches" not in said.out + said.err
    assert main(["--home", str(tmp_path / "h"), "--json", "sessions", "search", "timeout"]) == 0
    assert json.loads(capsys.readouterr().out)["note"] is None


def test_a_query_past_the_cap_says_what_was_left_out(tmp_path, clock, capsys):
    """``乌龙 `` x700 then ``zzzzqqq`` was cut at 2,048 characters without a word: the hits for the
    first words read as hits for all of them. Now the note says so, and a word the cap splits is not
    searched as another word."""
    from engine.archive.query import parse
    from workbench.cli import main

    home = open_home(tmp_path / "h", clock=clock)
    home.archive.create_session("s1")
    home.archive.append_messages("s1", [{"role": "user", "content": "我喜欢乌龙茶 zz"}])
    archive = home.archive
    long = "乌龙 " * 700 + "zzzzqqq"
    assert [h.session_id for h in archive.search(long)] == ["s1"]
    note = archive.search_note(long)
    assert note.startswith("Only the first 2,048 characters of a search are searched; this one has 2,107")
    assert note.endswith(" 乌龙 乌龙 zzzzqqq'. Shorten it to search all of it.")
    split = "x " * 1022 + "zzzzqqq"  # the cap falls inside zzzzqqq: zzzz is not searched in its place
    assert parse(split).terms[-1] == "x" and "'zzzzqqq'" in archive.search_note(split)
    assert archive.search_note("乌龙 " * 682 + "   ") is None  # (only spaces past the cap)
    home.close()
    assert main(["--home", str(tmp_path / "h"), "--json", "sessions", "search", long]) == 0
    assert json.loads(capsys.readouterr().out)["note"] == note
    assert main(["--home", str(tmp_path / "h"), "sessions", "search", long]) == 0
    assert capsys.readouterr().out.startswith(f"note: {note}\n")


def test_a_query_of_operators_alone_says_so_and_how_to_find_the_word(home):
    """``NOT`` alone answered "No messages match 'NOT'" while ``not`` found messages."""
    home.archive.create_session("s1")
    home.archive.append_messages("s1", [{"role": "user", "content": "do not deploy on fridays or weekends"}])
    archive = home.archive
    for query in ("NOT", "OR", "AND OR"):
        assert archive.search(query) == [] and "in capitals" in archive.search_note(query)
    assert "'or', '\"OR\"'" in archive.search_note("OR")
    assert archive.search_note("OR AND NOT").startswith(
        "Nothing was searched: OR, AND and NOT in capitals are operators"
    )
    assert {h.session_id for h in archive.search("or")} == {"s1"} and archive.search_note("or") is None
    assert archive.search_note('"OR"') is None and archive.search_note("") is None


def test_near_reads_as_the_words_it_groups_as_a_dangling_operator_is_dropped(home):
    """``NEAR(rotate`` and ``NEAR(rotate postgres)`` searched for the word NEAR as well and found nothing,
    while ``rotate AND`` found rotate: NEAR is now read as its words, and the note says proximity is not."""
    archive = home.archive
    archive.create_session("en")
    archive.append_messages("en", [{"role": "user", "content": "How do I rotate the postgres password?"}])
    archive.create_session("zh")
    archive.append_messages("zh", [{"role": "user", "content": "我喜欢喝乌龙茶，我住在上海"}])
    for query in ("NEAR(rotate", "NEAR(rotate postgres)", "NEAR(rotate postgres, 5)", "rotate NEAR postgres"):
        assert [h.session_id for h in archive.search(query)] == ["en"], query
        assert archive.search_note(query).startswith("NEAR is not searched as such: its words were searched")
    for query in ("NEAR(乌龙", "NEAR(乌龙 上海)", "NEAR(乌龙 上海, 3)"):
        assert [h.session_id for h in archive.search(query)] == ["zh"], query
    assert [h.session_id for h in archive.search("NEAR(rot", prefix=True)] == ["en"]
    assert archive.search("NEAR(") == [] and "NEAR in capitals is an operator" in archive.search_note("NEAR(")
    assert archive.search_note("rotate") is None and archive.search_note('"NEAR" rotate') is None


def test_punctuation_typed_against_a_word_is_not_searched_as_part_of_it(wb, home):
    """``「東京`` said no matches where ``東京`` found the message: the bracket was searched as text, which no
    index holds as part of a word (a tokenizer splits there). Now the text beside it is searched, from the CLI
    and the Sessions screen alike (one parse), and punctuation alone still searches nothing."""
    home.archive.create_session("zh")
    home.archive.append_messages("zh", [{"role": "user", "content": "我下周要去東京出差，酒店在新宿"}])
    home.archive.create_session("en")
    home.archive.append_messages("en", [{"role": "user", "content": "Meeting notes: deploy the app"}])
    home.close()
    for query, found in [
        ("「東京", "zh"),
        ("[東京", "zh"),
        ("東京。", "zh"),
        ("「東京」出差", "zh"),
        ("deploy。", "en"),
    ]:
        data = json.loads(wb("sessions", "search", query, "--json").stdout)
        assert [hit["session_id"] for hit in data["results"]] == [found], query
    assert [t.text for t in parse("「東京」出差 C# .net…").tokens] == ["東京", "出差", "C#", ".net"]
    assert [t.text for t in parse("v1.2 it's").tokens] == ["v1.2", "it's"], "punctuation inside stays"
    refused = wb("sessions", "search", "「")
    assert refused.returncode == 2 and "Nothing was searched" in refused.stderr


def test_a_mark_against_a_latin_word_is_searched_with_it_beside_cjk(home):
    """A query holding CJK searches each term as a substring. ``C# 编程`` had its ``#`` left off as punctuation
    against a word, so it searched ``C`` and found every message with a c in it beside 编程 (``cloud``)."""
    texts = {"cs": "C#编程入门", "cloud": "cloud 编程笔记", "dotnet": ".net 编程", "network": "network 编程"}
    for session_id, text in texts.items():
        home.archive.create_session(session_id)
        home.archive.append_messages(session_id, [{"role": "user", "content": text}])
    assert [hit.session_id for hit in home.archive.search("C# 编程")] == ["cs"]
    assert [hit.session_id for hit in home.archive.search(".net 编程")] == ["dotnet"]
    assert {hit.session_id for hit in home.archive.search("编程.")} == set(texts)


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ("NEAR(", "Nothing was searched: NEAR in capitals is an operator"),
        ("OR AND", "Nothing was searched: OR and AND in capitals are operators"),
        ("(((", "Nothing was searched: the query holds no word to look for (punctuation is not searched)."),
        # CJK and full-width punctuation as ASCII's: "「" said "No messages match '「'"
        ("「", "Nothing was searched: the query holds no word to look for (punctuation is not searched)."),
        ("（。、！…～」", "Nothing was searched: the query holds no word to look for (punctuation is not searched)."),
    ],
)
def test_a_query_with_nothing_to_search_is_refused_not_answered_no_matches(home, query, said):
    """``sessions search 'NEAR('`` printed "Nothing was searched" and then "no matches", exit 0: a query with
    no word to look for is refused as an empty one is (exit 2), saying why and how to search, and no more."""
    home.archive.create_session("s1")
    home.archive.append_messages("s1", [{"role": "user", "content": "rotate the near replica"}])
    assert home.archive.nothing_searched("near") is None and home.archive.nothing_searched('"NEAR"') is None
    home.close()
    proc = completed("sessions", "search", query, "--home", str(home.root))
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr
    assert f"workbench sessions search: error: {said}" in proc.stderr and "no matches" not in proc.stderr
    proc = completed("sessions", "search", query, "--json", "--home", str(home.root))
    data = json.loads(proc.stdout)
    assert proc.returncode == 2 and data["success"] is False and data["usage"] is True
    assert data["error"].startswith(said)


PA_WORDS = "pack page paint pale palm pan panel pant paper park part pass past path pause pave pay".split()


def test_a_prefix_answered_from_its_commonest_words_says_so(tmp_path, clock, capsys, monkeypatch):
    """A typed prefix with more completions than are searched (``prefix-top``) said so only in a
    plan name the Sessions title cut off, and its match counts read as exact."""
    from engine.archive.search import PARTIAL_NOTE
    from workbench.cli import main

    home = open_home(tmp_path / "h", clock=clock)
    archive = home.archive
    archive.create_session("s", title="Words")
    archive.append_messages("s", [{"role": "user", "content": f"a {word} here"} for word in PA_WORDS])
    hits = archive.search("pa", prefix=True)
    assert hits and all(hit.partial for hit in hits)
    assert archive.search_note("pa", hits, prefix=True) == PARTIAL_NOTE
    full = archive.search("pat", prefix=True)
    assert full and not any(hit.partial for hit in full) and archive.search_note("pat", full, prefix=True) is None
    combined = archive.search_note("NOT x OR pa", hits, prefix=True)
    assert combined.startswith("Left out 'NOT x'") and combined.endswith(PARTIAL_NOTE)
    # excluded, a prefix is never cut to its commonest words: every pa… word is left out
    for n, text in enumerate([*(f"release {word}" for word in PA_WORDS), "release plain"]):
        archive.create_session(f"r{n}", title=f"R{n}")
        archive.append_messages(f"r{n}", [{"role": "user", "content": text}])
    kept = archive.search("release NOT pa", prefix=True, limit=50)
    assert [h.session_id for h in kept] == [f"r{len(PA_WORDS)}"] and not any(h.partial for h in kept)
    monkeypatch.setattr("engine.archive.vocab.EXACT", 8)  # more words than that: FTS5's own pa*
    kept = archive.search("release NOT pa", prefix=True, limit=50)
    assert [h.session_id for h in kept] == [f"r{len(PA_WORDS)}"] and not any(h.partial for h in kept)
    home.close()
    assert main(["--home", str(tmp_path / "h"), "sessions", "search", "pa", "--prefix"]) == 0
    assert capsys.readouterr().out.startswith(f"note: {PARTIAL_NOTE}")


def test_typing_reads_not_over_the_terms_after_it_as_fts5_does(tmp_path, clock):
    """``a NOT b c`` is a NOT (b c) to FTS5; the plan for a typed prefix joined terms with AND, which
    made it (a NOT b) AND c: typed, 'deploy NOT fail rollback' found only one of the three."""
    archive = open_home(tmp_path / "h", clock=clock).archive
    for n, text in enumerate(["deploy ok", "deploy fail", "deploy rollback", "deploy fail rollback"]):
        archive.create_session(f"s{n}", title=f"S{n}")
        archive.append_messages(f"s{n}", [{"role": "user", "content": text}])

    def found(text: str, prefix: bool) -> set[str]:
        return {h.session_id for h in archive.search(text, prefix=prefix, limit=50)}

    assert found("deploy NOT fail rollback", False) == {"s0", "s1", "s2"}
    assert found("deploy NOT fail rollback", True) == {"s0", "s1", "s2"}
    assert found("deploy NOT fail rollb", True) == {"s0", "s1", "s2"}
    assert found("deploy NOT fail AND rollb", True) == {"s2"}  # AND binds looser than NOT


def test_words_phrases_prefixes_tool_names_and_roles(tmp_path, clock):
    home = open_home(tmp_path / "h", clock=clock)
    archive = home.archive
    archive.create_session("a", title="Alpha")
    archive.append_messages(
        "a",
        [
            {"role": "user", "content": "the error log shows a timeout"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "1",
                        "type": "function",
                        "function": {"name": "skill_view", "arguments": '{"name": "k8s-rollout"}'},
                    }
                ],
            },
            {"role": "tool", "content": "{}", "tool_name": "skill_view", "tool_call_id": "1"},
            {"role": "assistant", "content": "log error: the rollout failed"},
        ],
    )
    assert [h.match_message_id for h in archive.search('"error log"')] == [1]
    assert {m for m in archive.iter_matches("error log")} == {1, 4}
    assert set(archive.iter_matches("timeo", prefix=True)) == {1}
    assert set(archive.iter_matches("timeo*")) == {1}
    assert set(archive.iter_matches("timeo")) == set()
    assert set(archive.iter_matches("skill_view")) == {2, 3}
    assert set(archive.iter_matches("k8s-rollout")) == {2}
    assert [h.role for h in archive.search("skill_view", role="tool")] == ["tool"]
    [hit] = archive.search("timeout")
    assert hit.snippet == f"the error log shows a {MARK_OPEN}timeout{MARK_CLOSE}"
    assert hit.to_dict().keys() >= {"session_id", "root_id", "title", "source", "when", "snippet", "match_message_id"}
    home.close()


def test_hits_group_by_root_and_skip_the_current_lineage(corpus):
    archive = corpus.archive
    hits = archive.search("deploy", limit=100, per="lineage")
    assert len({h.root_id for h in hits}) == len(hits)
    some_root = hits[0].root_id
    tip = archive.tip_of(some_root)
    skipped = archive.search("deploy", limit=100, exclude_lineage_of=tip, per="lineage")
    assert some_root not in {h.root_id for h in skipped} and len(skipped) == len(hits) - 1
    rows = archive.search("deploy", limit=100)  # per tree row: the lineage's delegates are rows of their own
    assert len({h.segments for h in rows}) == len(rows) > len(hits)
    assert some_root not in {h.root_id for h in archive.search("deploy", limit=100, exclude_lineage_of=tip)}
    paged = archive.search("deploy", limit=2, offset=1)
    assert [h.segments for h in paged] == [h.segments for h in rows[1:3]]
    assert all(h.source != "subagent" for h in archive.search("deploy", limit=100, exclude_sources=["subagent"]))
    newest = archive.search("deploy", limit=100, sort="newest")
    assert [h.match_message_id for h in newest] == sorted((h.match_message_id for h in newest), reverse=True)


HOSTILE_TOKENS = [
    '"',
    "'",
    "*",
    "-",
    ".",
    ":",
    "(",
    ")",
    "{",
    "}",
    "^",
    "+",
    "AND",
    "OR",
    "NOT",
    "NEAR",
    "NEAR(",
    "deploy",
    "数据",
    "的",
    "%",
    "_",
    "\\",
    "\x00",
    "col:",
    "-x",
    "a.b",
    "x*y",
    '""',
    "\u200b",
    "🙂",
    "/",
    "日志*",
    "NOT NOT",
    "AND (",
    ") OR",
    "^deploy",
    "#",
    "@",
    "[",
    "]",
]


# The two properties below run a few hundred examples in `make test` and FUZZ_EXAMPLES (5,000 by
# default) in `make fuzz`; the queries that once broke the parser are parametrised cases of their own.
FUZZ_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "0"))


@settings(max_examples=FUZZ_EXAMPLES or 200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.one_of(st.sampled_from(HOSTILE_TOKENS), st.text(max_size=6)), max_size=6).map(" ".join), st.booleans()
)
def test_any_text_is_a_safe_query(corpus, query, prefix):
    hits = corpus.archive.search(query, prefix=prefix, limit=5)
    assert all(isinstance(h.snippet, str) and h.match_message_id > 0 for h in hits)
    concat = "".join(query.split())
    assert isinstance(corpus.archive.search(concat, limit=3), list)
    assert all(isinstance(i, int) for i in itertools.islice(corpus.archive.iter_matches(query), 3))


_WORDS = ["a", "b", "c", "d"]
_DOCS = [" ".join(combo) for n in range(5) for combo in itertools.combinations(_WORDS, n)]


@pytest.fixture(scope="module")
def bare_fts():
    """Every set of four words, in a plain FTS5 table: the reading FTS5 itself gives an expression."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
    conn.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)", enumerate(_DOCS, 1))
    yield conn
    conn.close()


@settings(max_examples=FUZZ_EXAMPLES or 300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from([*_WORDS, "AND", "OR", "NOT", "-", "*"]), max_size=9).map(" ".join), st.booleans())
def test_every_operator_sequence_is_an_expression_fts5_takes_and_reads_as_the_clauses_do(bare_fts, query, prefix):
    """``NOT AND x`` left a bare NOT behind (``x NOT``), which FTS5 refuses: the search found nothing."""
    from engine.archive.query import parse

    parsed = parse(query, prefix=prefix)
    if parsed.empty:
        return
    expr = parsed.fts()
    found = {row[0] for row in bare_fts.execute("SELECT rowid FROM t WHERE t MATCH ?", (expr,))}  # never refused
    if not any(t.prefix for t in parsed.tokens):  # (the substring reading of a prefix is wider than a word's)
        clauses = parsed.clauses()
        assert found == {n for n, doc in enumerate(_DOCS, 1) if any(c.holds(doc.split()) for c in clauses)}, expr


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("C++", "C"),
        ("hello AND", "hello"),
        ("OR world", "world"),
        ("***", ""),
        ("deploy*", "deploy*"),
        ("**deploy", "deploy"),
        ("TODO: fix", "TODO fix"),
        ("chat-send", '"chat-send"'),
        ("my-app.config", '"my-app.config"'),
        ('"unterminated', "unterminated"),
        ("(problem", "problem"),
        ("x^y", "x y"),
        ('"exact phrase" foo-bar', '"exact phrase" "foo-bar"'),
        ("NOT", ""),
        ("foo NOT", "foo"),
        ("NOT foo", ""),  # not "foo": said by the search's note instead
        ("foo AND NOT bar", "foo NOT bar"),
        ("foo OR NOT bar", "foo"),
        ("NOT bar AND foo", "foo NOT bar"),
        ("NOT AND foo", "foo"),  # a NOT with no term is dropped, not left dangling after foo
        ("x OR NOT AND foo", "x OR foo"),
        ("a AND OR b", "a AND b"),
        ("NEAR(a b)", "a b"),
        ("NEAR(a b, 5) OR c", "a b OR c"),
        ('near "NEAR"', 'near "NEAR"'),
        ("it's", '"it\'s"'),
    ],
)
def test_sanitiser_follows_hermes_and_never_leaves_syntax(raw, expected):
    from engine.archive import sanitize_fts_query

    assert sanitize_fts_query(raw) == expected


@pytest.mark.parametrize(
    "raw", ["ＰＤＦ report", "report ＰＤＦ", "ＰＤＦ OR x y", "x NOT ＰＤＦ report", '"ＰＤＦ report" y']
)
def test_the_sanitiser_gives_fts5_an_expression_it_takes_for_full_width_words(raw):
    """A full-width word is searched as ``(ＰＤＦ OR PDF)``, which FTS5 refuses beside another term. The search
    joined such runs with AND, but the engine's ``sanitize_fts_query`` kept joining terms with spaces:
    ``(ＰＤＦ OR PDF) report`` is ``fts5: syntax error near "report"``, for a function promising any text."""
    from engine.archive import sanitize_fts_query

    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(content)")
    conn.executemany("INSERT INTO t VALUES (?)", [("The PDF report is ready",), ("ＰＤＦ report y",)])
    expr = sanitize_fts_query(raw)
    assert expr == parse(raw).fts()
    conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", (expr,)).fetchone()
    found = conn.execute("SELECT content FROM t WHERE t MATCH ?", (sanitize_fts_query("ＰＤＦ report"),)).fetchall()
    assert {row[0] for row in found} == {"The PDF report is ready", "ＰＤＦ report y"}


def test_search_does_not_wait_for_a_busy_workbench_db(tmp_path, clock):
    home = open_home(tmp_path / "h", clock=clock)
    build(home, seed=5, sessions=3)
    expected = substring_scan(home.state_db_path, "日志")
    assert set(home.archive.iter_matches("日志")) == expected  # builds the index
    new_id = home.archive.append_message("s000", "user", "新的日志")  # not indexed yet
    blocker = sqlite3.connect(home.workbench_db_path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another process holds workbench.db's write lock
    try:
        start = time.perf_counter()
        found = set(home.archive.iter_matches("日志"))
        assert time.perf_counter() - start < 2.0
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert found == expected | {new_id}  # the unindexed row was scanned instead
    assert home.archive.bigram_index.high_water() < new_id
    assert new_id in set(home.archive.iter_matches("日志")) and home.archive.bigram_index.high_water() == new_id
    home.close()


def _sessions_of(archive, ids) -> dict[int, str]:
    marks = ", ".join("?" * len(ids))
    return dict(archive.conn().execute(f"SELECT id, session_id FROM messages WHERE id IN ({marks})", list(ids)))


@pytest.mark.parametrize(
    "query, prefix",
    [("deploy", False), ("the config", False), ("dep", True), ("部署", False), ("数据库迁", False), ("デ", True)],
)
def test_match_counts_and_session_hits_agree_with_every_match(corpus, query, prefix):
    archive = corpus.archive
    every = list(archive.iter_matches(query, prefix=prefix))
    owner = _sessions_of(archive, every)
    expected: dict[str, list[int]] = {}
    for mid in every:  # newest first
        expected.setdefault(owner[mid], []).append(mid)
    sessions = sorted(expected)[:12] + ["no-such-session"]
    assert archive.match_counts(query, sessions, prefix=prefix) == {s: len(expected.get(s, [])) for s in sessions}
    assert archive.match_counts(query, sessions, prefix=prefix, cap=2) == {
        s: min(2, len(expected.get(s, []))) for s in sessions
    }
    busiest = max(expected, key=lambda s: len(expected[s]))
    hits = archive.session_hits(query, busiest, prefix=prefix)
    assert [h.match_message_id for h in hits] == expected[busiest]
    assert all(h.session_id == busiest and MARK_OPEN in h.snippet for h in hits)


def test_counts_keep_to_each_session_when_sessions_interleave(tmp_path, clock):
    """Two agents writing at once interleave their ids: counts never take the other session's messages;
    archived sessions are counted and marked, rewound messages are not."""
    home = open_home(tmp_path / "home", clock=clock)
    archive = home.archive
    for sid in ("a", "b", "far"):
        archive.create_session(sid)
    first = {}
    for turn in range(6):
        for sid in ("a", "b"):
            ids = archive.append_messages(
                sid, [{"role": "user", "content": f"walrus {sid} {turn}"}, {"role": "assistant", "content": "ok"}]
            )
            first.setdefault(sid, ids[0])
    for _ in range(3000):  # far away: a separate index walk
        archive.append_message("far", "assistant", "filler words only")
    archive.append_message("far", "user", "one walrus at the end")
    archive.set_archived("b")
    assert archive.match_counts("walrus", ["a", "b", "far"]) == {"a": 6, "b": 6, "far": 1}
    archive.rewind("a", first["a"])  # the whole of a's conversation leaves search
    assert archive.match_counts("walrus", ["a", "b", "far"]) == {"a": 0, "b": 6, "far": 1}
    pages = 0

    def stop_after(n: int):
        def stop() -> bool:
            nonlocal pages
            pages += 1
            return pages > n

        return stop

    exact = {"a": 0, "b": 6, "far": 1}
    assert archive.match_counts("walrus", ["far", "a", "b"], stop=stop_after(0)) == {}  # stopped before a page
    pages = 0
    assert archive.match_counts("walrus", ["far", "a", "b"], stop=stop_after(100)) == exact
    pages = 0
    assert archive.match_counts("walrus", ["far", "a", "b"], stop=stop_after(1)).items() <= exact.items()
    hits = archive.session_hits("walru", "b", prefix=True)
    assert len(hits) == 6 and all(h.archived and h.session_id == "b" for h in hits)
    assert {h.session_id: h.archived for h in archive.search("walrus", limit=5)} == {"b": True, "far": False}
    home.close()


def test_roles_other_writers_store_are_known_and_a_typo_is_not(home):
    """Hermes writes any role a provider sends ("developer", "unknown"): such a role filters like
    Hermes's own; a role no message has is what the CLI calls a mistake."""
    session = home.archive.create_session(source="cli")
    home.archive.append_message(session.id, "developer", "you are terse")
    assert home.archive.absent_roles(["developer", "tool", "bogus"]) == ["bogus"]
    assert home.archive.roles() == ["assistant", "developer", "system", "tool", "user"]
    assert [h.role for h in home.archive.search("terse", role="developer")] == ["developer"]


def test_role_and_sort_words_are_filters_and_a_bad_value_says_what_it_takes(home):
    """The TUI's search box had no role or sort filter (its note sent people to the CLI's --role): one
    reader now takes ``role:`` and ``sort:`` words and the CLI's flags alike, and refuses bad values."""
    archive, clock = home.archive, home.clock
    for name in ("old", "new"):
        session = archive.create_session(name, source="cli")
        archive.append_message(session.id, "user", "the kettle whistles")
        archive.append_message(session.id, "assistant", "the kettle is on")
        clock.advance(60)
    filters = archive.search_filters('Role:assistant kettle sort:OLDEST "role:user"', roles=["tool,user"])
    assert filters == SearchFilters('kettle "role:user"', ("tool", "user", "assistant"), "oldest")
    assert read_filters("kettle") == SearchFilters("kettle")
    assert read_filters('role:user NOT kettle "x NOT role:tool"') == SearchFilters(
        'NOT kettle "x NOT role:tool"', ("user",)
    )
    only = archive.search_filters("role:assistant kettle")
    hits = archive.search(only.text, role=only.roles, sort="oldest", per="lineage")
    assert [(h.session_id, h.role) for h in hits] == [("old", "assistant"), ("new", "assistant")]
    assert archive.match_counts("kettle", ["old"], role=only.roles) == {"old": 1}
    assert archive.match_counts("kettle", ["old"]) == {"old": 2}
    assert [h.role for h in archive.session_hits("kettle", "new", role=["user"])] == ["user"]
    takes = "a role filter takes one of: assistant, system, tool, user"
    refusals = {
        "role:bogus kettle": f"no message has the role 'bogus'; {takes}",
        "role: kettle": f"role: names no role; {takes}",
        "sort:best kettle": "sort: takes newest or oldest, not 'best' (without it, the best match first)",
        "sort:newest sort:oldest kettle": "two orders given (sort:newest and sort:oldest): keep one",
        "kettle NOT role:user tea": "role:user after NOT: a filter is for the whole search, not a word of it; "
        "put it apart from AND, OR and NOT (to leave a role out, name the ones to keep)",
        '"on" OR Sort:oldest tea': "Sort:oldest after OR: a filter is for the whole search, not a word of it; "
        "put it apart from AND, OR and NOT (to leave a role out, name the ones to keep)",
    }
    for query, said in refusals.items():
        with pytest.raises(BadSearchFilter) as refused:
            archive.search_filters(query)
        assert refused.value.message == said


def test_a_role_typed_letter_by_letter_reads_the_messages_table_once(home):
    """``role:u``, ``role:us``... each looked up a role no message has, and listed the roles there
    are, by reading every message: on a large archive, each keystroke. The roles found are kept
    until a message is added, and a role of another program's still counts once stored."""
    archive = home.archive
    session = archive.create_session("s", source="cli")
    archive.append_message(session.id, "user", "the kettle whistles")
    reads: list[str] = []
    archive.conn().set_trace_callback(lambda sql: reads.append(sql) if "DISTINCT role" in sql else None)
    try:
        for typed in ("role:u", "role:us", "role:use"):
            with pytest.raises(BadSearchFilter):
                archive.search_filters(f"{typed} kettle")
        assert len(reads) == 1
        archive.append_message(session.id, "narrator", "the kettle sings")
        assert archive.search_filters("role:narrator kettle").roles == ("narrator",)
        assert len(reads) == 2
    finally:
        archive.conn().set_trace_callback(None)


def test_while_another_process_writes_a_role_typed_reads_only_the_messages_added(home):
    """The roles kept were read again from the whole table whenever a message had been added: while
    Hermes writes, every keystroke of ``role:u…`` after a new message read every message. Now only the
    rows above the newest id read last are (a range of the primary key), and a new role among them counts."""
    archive = home.archive
    session = archive.create_session("s", source="cli")
    archive.append_message(session.id, "user", "the kettle whistles")
    hermes = open_home(home.root)  # (another writer, on its own connection, as Hermes is)
    reads: list[str] = []
    archive.conn().set_trace_callback(lambda sql: reads.append(sql) if "DISTINCT role" in sql else None)
    try:
        for n, typed in enumerate(("role:u", "role:us", "role:use", "role:user_")):
            hermes.archive.append_message(session.id, "assistant", f"the kettle boils, take {n}")
            with pytest.raises(BadSearchFilter):
                archive.search_filters(f"{typed} kettle")
        full = [sql for sql in reads if "WHERE" not in sql]
        assert len(full) == 1 and len(reads) == 4, reads
        hermes.archive.append_message(session.id, "narrator", "the kettle sings")
        assert archive.search_filters("role:narrator kettle").roles == ("narrator",)
        assert len(reads) == 5 and "WHERE id >" in reads[-1]
        plan = " ".join(row[3] for row in archive.conn().execute(f"EXPLAIN QUERY PLAN {reads[-1]}"))
        assert "INTEGER PRIMARY KEY (rowid>?)" in plan, plan
    finally:
        archive.conn().set_trace_callback(None)
        hermes.close()


def test_typed_prefixes_after_a_word_find_what_fts5s_own_prefix_query_finds(corpus):
    """Recall of the vocabulary plan for queries of several words, typed letter by letter: the
    sessions found are FTS5's own ``w1 w2*`` answer (all of it when every word of the prefix was
    expanded, a part when only the likeliest were)."""
    import random
    import re

    archive = corpus.archive
    rows = archive.conn().execute("SELECT content FROM messages WHERE content IS NOT NULL ORDER BY id").fetchall()
    rng = random.Random(7)
    pairs = []
    for (content,) in rng.sample(rows, 40):
        words = re.findall(r"\b[a-z]{3,}\b", content.lower())
        if len(words) >= 2:
            start = rng.randrange(len(words) - 1)
            pairs.append((words[start], words[start + 1]))
    assert len(pairs) >= 10
    checked = 0
    for first, second in pairs[:15]:
        for cut in range(1, len(second) + 1):
            typed = f"{first} {second[:cut]}"
            hits = archive.search(typed, prefix=True, limit=1000)
            found = {h.root_id for h in hits}
            native = {archive.root_of(archive.message(m).session_id) for m in archive.iter_matches(f"{typed}*")}
            if cut >= 3 or (hits and hits[0].plan.endswith(":prefix")):  # (1-2 letters: FTS5's own needs 3)
                if hits and hits[0].partial:
                    assert found <= native, typed
                else:
                    assert found == native, typed
                checked += 1
            assert found, typed  # the words of a stored message are always found
    assert checked >= 30


def test_a_live_branch_of_an_archived_conversation_is_its_own_hit(home):
    """The tree lists such a branch as a root of its own: search grouped it by lineage, so its hit
    was folded into the archived parent's, named and counted as the parent."""
    archive = home.archive
    archive.create_session("p", title="Bike trip")
    archive.append_message("p", "user", "plan the Nara route by bike")
    archive.end_session("p", "branched")
    archive.create_session("b", title="Nara route", parent_session_id="p")
    archive.append_message("b", "user", "Nara route: deer park first")
    archive.create_session("b2", parent_session_id="b")  # the branch went on compressed
    archive.end_session("b", "compression")
    archive.append_message("b2", "user", "Nara again, after compression")
    assert [h.root_id for h in archive.search("Nara", per="lineage")] == ["p"]  # one lineage while p is listed
    archive.set_archived("p")
    found = {h.session_id: (h.root_id, h.title, h.archived) for h in archive.search("Nara")}
    assert found["p"] == ("p", "Bike trip", True)
    assert len(found) == 2 and found.get("b", found.get("b2"))[0] == "b"
    assert [h.root_id for h in archive.session_hits("Nara", "b2")] == ["b"]
    # session_search keeps Hermes's lineage: one hit for p's lineage, none from the branch's own
    assert [h.root_id for h in archive.search("Nara", per="lineage")] == ["p"]
    assert archive.search("Nara", per="lineage", exclude_lineage_of="b2") == []
    archive.set_archived("b")  # the branch archived too: back in its lineage
    assert {h.root_id for h in archive.search("Nara")} == {"p"}


def test_hits_are_one_per_tree_row_and_a_row_lists_every_segment_s_matches(home):
    """Grouped by lineage, a branch's hit hid its parent conversation's (reachable nowhere in the
    results), a row's hits were its best session's alone (a chain's other segments missing), and a
    delegate's hit wore the title of the root it hangs from."""
    archive = home.archive
    archive.create_session("d1", title="Deploy API")
    archive.append_message("d1", "user", "deploy the API: first try")
    archive.end_session("d1", "compression")
    archive.create_session("d2", title="Deploy API #2", parent_session_id="d1")
    archive.append_message("d2", "user", "deploy again after compression")
    archive.end_session("d2", "branched")
    archive.create_session("hb", title="Helm branch", parent_session_id="d2", model_config={"_branched_from": "d2"})
    archive.append_message("hb", "user", "deploy with helm")
    archive.create_session("dg", source="subagent", parent_session_id="d2")
    archive.append_message("dg", "user", "subagent: deploy checklist")
    hits = {h.segments: h for h in archive.search("deploy")}
    assert set(hits) == {("d1", "d2"), ("hb",), ("dg",)}
    assert hits[("d1", "d2")].title == "Deploy API" and hits[("hb",)].title == "Helm branch"
    assert hits[("dg",)].title is None  # its own first message names it, never the root's title
    assert {h.root_id for h in hits.values()} == {"d1"}
    every = archive.session_hits("deploy", ["d1", "d2"])
    assert [h.session_id for h in every] == ["d2", "d1"]  # newest first, across the chain
    assert [h.session_id for h in archive.session_hits("deploy", ["d1", "d2"], limit=1)] == ["d2"]
    assert archive.match_counts("deploy", ["d1", "d2", "hb"]) == {"d1": 1, "d2": 1, "hb": 1}


def test_fts_syntax_read_as_words_is_said_lower_case_near_and_column_filters(home):
    """``near(a b)`` (FTS5's NEAR is case-sensitive: a syntax error there) searched the word near too,
    and ``content:word`` or ``role:user`` (FTS5 column filters) searched both words, with no note; a
    URL's ``http:`` or a time's ``10:30`` is text, and gets none."""
    archive = home.archive
    archive.create_session("en")
    archive.append_messages("en", [{"role": "user", "content": "How do I rotate the postgres password?"}])
    assert archive.search("near(rotate postgres)") == []  # (near is searched as a word, and no message has it)
    assert archive.search_note("near(rotate postgres)") == (
        "'near(' in lower case is no operator: 'near' was read as a word too (FTS5's NEAR is in capitals)."
    )
    assert "'near(' in lower case" in archive.search_note("Near (rotate postgres")
    assert archive.search("content:rotate") == []  # both words are needed: content is no word of it
    assert archive.search_note("content:rotate") == (
        "'content:' is no column filter here: 'content' was read as a word too (a message's text is the one "
        "column searched); leave it out."
    )
    assert [h.session_id for h in archive.search("rotate")] == ["en"]
    assert archive.search_note('Content:"rotate the"').startswith("'Content:' is no column filter here")
    assert archive.search_note("role:user") == (
        "'role:' is no filter here: 'role' was read as a word too. "
        "To search one role, write role:user apart from other text (the CLI's --role user)."
    )
    assert archive.search_note("rotate session:abc source:cli") == (
        "'session:' and 'source:' are no filters here: 'session' and 'source' were read as words too."
    )
    for text in (
        "http://example.org/role:user",
        "meet at 10:30",
        "TODO:fix",
        '"role:user"',
        "near the office",
        "nearby(x)",
        "NEAR(rotate postgres)",  # (its own note, about proximity)
        "content:",  # (still being typed)
        "a.role:user",
    ):
        note = archive.search_note(text) or ""
        assert "filter" not in note and "lower case" not in note, text


def test_half_width_katakana_are_folded_without_our_index_too(tmp_path):
    """A read-only home never indexed reads Hermes's trigram table or scans: a prefilter on the text as
    stored narrows only by what reads the same in either width, and the check folds."""
    home = open_home(tmp_path / "h")
    home.archive.create_session("s")
    texts = ["本番にデプロイした", "ﾃﾞﾌﾟﾛｲ完了です", "ｻｰﾊﾞｰ再起動 ok"]
    home.archive.append_messages("s", [{"role": "user", "content": t} for t in texts])
    home.close()
    (home.root / "workbench.db").unlink(missing_ok=True)
    reader = open_home(home.root, read_only=True)
    for query, plan in [("ﾃﾞﾌﾟﾛｲ", "like"), ("デプロイ完了", "like"), ("サーバー再起動", "trigram")]:
        assert set(reader.archive.iter_matches(query)) == substring_scan(reader.state_db_path, query) != set()
        assert {h.plan.split(":")[0] for h in reader.archive.search(query)} == {plan}, query
    reader.close()


def test_half_width_katakana_find_the_full_width_text_and_back_in_the_cli(home):
    """``ﾀﾜｰ`` found nothing where the message says ``タワー`` (only a hint to retype it), and the reverse."""
    home.archive.create_session("jp")
    home.archive.append_messages("jp", [{"role": "user", "content": "東京タワーに行きたい"}])
    home.archive.create_session("hw")
    home.archive.append_messages("hw", [{"role": "user", "content": "ﾀﾜｰの予約"}])
    home.close()
    for query in ("ﾀﾜｰ", "タワー"):
        proc = completed("sessions", "search", query, "--json", "--home", str(home.root))
        found = json.loads(proc.stdout)
        assert sorted(r["session_id"] for r in found["results"]) == ["hw", "jp"] and "hint" not in found, query
    proc = completed("sessions", "search", "ﾀﾜｰ", "--home", str(home.root))
    assert proc.returncode == 0 and "東京«タワー»に行きたい" in proc.stdout and "«ﾀﾜｰ»の予約" in proc.stdout
