"""AND / OR / NOT in CJK and mixed CJK + English searches, read as FTS5 reads them, checked against substrings."""

from __future__ import annotations

import itertools
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import FixedClock, open_home
from engine.archive import MARK_CLOSE, MARK_OPEN
from tests.archive_support import copy_database

NOW = 1796040000.0
MESSAGES = [
    "東京で会議があります",  # 1
    "東京は晴れです",  # 2
    "上海的服务器已经部署",  # 3
    "the qa team moved to 上海",  # 4
    "qa report moved nowhere",  # 5
    "部署回滚计划 deploy done",  # 6
    "大阪の会議は東京から",  # 7
    "nothing here",  # 8
]


def _visible_texts(db: Path) -> dict[int, str]:
    conn = sqlite3.connect(db)
    rows = conn.execute(
        "SELECT id, COALESCE(content,'') || ' ' || COALESCE(tool_name,'') || ' ' || COALESCE(tool_calls,'')"
        " FROM messages WHERE active = 1 OR compacted = 1"
    ).fetchall()
    conn.close()
    return {mid: text.lower() for mid, text in rows}


def _split(tokens: list[str], op: str) -> list[list[str]]:
    parts: list[list[str]] = [[]]
    for token in tokens:
        if token == op:
            parts.append([])
        else:
            parts[-1].append(token)
    return parts


def brute(query: str, text: str) -> bool:
    """FTS5's reading, as substrings: OR loosest, then AND, then NOT; terms side by side bind tightest."""

    def group(words: list[str]) -> bool:
        return all(w.lower() in text for w in words)

    def negated(part: list[str]) -> bool:
        first, *excluded = _split(part, "NOT")
        return group(first) and not any(group(g) for g in excluded)

    return any(all(negated(p) for p in _split(alt, "AND")) for alt in _split(query.split(), "OR"))


def expected(db: Path, query: str) -> set[int]:
    return {mid for mid, text in _visible_texts(db).items() if brute(query, text)}


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    home = open_home(tmp_path_factory.mktemp("boolean") / "home", clock=FixedClock(NOW))
    home.archive.create_session("s1", title="One")
    home.archive.append_messages("s1", [{"role": "user", "content": t} for t in MESSAGES[:4]])
    home.archive.create_session("s2", title="Two")
    home.archive.append_messages("s2", [{"role": "assistant", "content": t} for t in MESSAGES[4:]])
    home.archive.bigram_index.refresh()  # (built here, not by whichever test searches first: xdist may split them)
    yield home
    home.close()


@pytest.fixture(scope="module")
def hermes_only(small, tmp_path_factory):
    """The same state.db alone, opened read-only: no bigram index, Hermes's trigram table or a scan."""
    folder = tmp_path_factory.mktemp("boolean_ro")
    copy_database(small.state_db_path, folder / "state.db")
    home = open_home(folder, read_only=True, clock=FixedClock(NOW))
    yield home
    home.close()


@pytest.mark.parametrize(
    "query, ids",
    [
        ("東京 OR 上海", {1, 2, 3, 4, 7}),
        ("東京 NOT 会議", {2}),
        ("東京 AND 会議", {1, 7}),
        ("東京 会議", {1, 7}),
        ("qa OR 上海", {3, 4, 5}),
        ("moved OR 上海", {3, 4, 5}),
        ("上海 NOT qa", {3}),
        ("qa NOT 上海", {5}),
        ("部署 OR 会議", {1, 3, 6, 7}),
        ("部署 NOT 服务器", {6}),
        ("部署 AND deploy", {6}),
        ("deploy OR 晴れ", {2, 6}),
        ("東京 NOT 会議 大阪", {1, 2}),  # NOT excludes the group: messages with both 会議 and 大阪
        ("東京 NOT 会議 AND 晴れ", {2}),
        ("東京 OR 上海 NOT qa", {1, 2, 3, 7}),
        ("上海 OR nothing OR 大阪", {3, 4, 7, 8}),
    ],
)
def test_cjk_and_mixed_boolean_queries(small, hermes_only, query, ids):
    assert expected(small.state_db_path, query) == ids  # the test's own reading of the query
    for home in (small, hermes_only):
        assert set(home.archive.iter_matches(query)) == ids, home.archive.bigram_index.available()
        hits = home.archive.search(query, limit=20, sort="newest")
        assert {h.root_id for h in hits} == {home.archive.message(m).session_id for m in ids}
        assert all(h.match_message_id in ids for h in hits)
        found = {sid: [h.match_message_id for h in home.archive.session_hits(query, sid)] for sid in ("s1", "s2")}
        assert set(found["s1"]) | set(found["s2"]) == ids
        assert home.archive.match_counts(query, ["s1", "s2"]) == {sid: len(found[sid]) for sid in found}


@pytest.mark.parametrize(
    "query, with_index, without",
    [
        ("東京 OR 上海", "bigram:ranked", "like:newest"),
        ("moved OR 上海", "bigram+trigram:ranked", "trigram+like:ranked"),
        ("qa OR 上海", "bigram+like:ranked", "like:newest"),
        ("qa NOT 上海", "like:newest", "like:newest"),
        ("部署 OR 服务器", "bigram:ranked", "trigram+like:ranked"),
    ],
)
def test_each_alternative_is_read_from_a_source_that_narrows_it(small, hermes_only, query, with_index, without):
    assert {h.plan for h in small.archive.search(query)} == {with_index}
    assert {h.plan for h in hermes_only.archive.search(query)} == {without}


def test_marks_only_what_was_searched_for(small):
    [hit] = small.archive.search("東京 NOT 会議")
    assert hit.snippet == f"{MARK_OPEN}東京{MARK_CLOSE}は晴れです"
    query = "会議 NOT 晴れ OR 上海 NOT 大阪"
    snippets = {h.match_message_id: h.snippet for s in ("s1", "s2") for h in small.archive.session_hits(query, s)}
    assert snippets == {
        1: f"東京で{MARK_OPEN}会議{MARK_CLOSE}があります",
        3: f"{MARK_OPEN}上海{MARK_CLOSE}的服务器已经部署",
        4: f"the qa team moved to {MARK_OPEN}上海{MARK_CLOSE}",
        7: f"大阪の{MARK_OPEN}会議{MARK_CLOSE}は東京から",  # 大阪 is only excluded from the other alternative
    }
    [english] = small.archive.search("report NOT team")
    assert english.snippet == f"qa {MARK_OPEN}report{MARK_CLOSE} moved nowhere"


def test_rows_no_index_holds_yet_follow_the_operators(small, tmp_path):
    """Rows another program appended (above the index's high-water mark) are scanned with the same reading."""
    folder = tmp_path / "copy"
    folder.mkdir()
    for name in ("state.db", "workbench.db"):
        copy_database(small.root / name, folder / name)
    conn = sqlite3.connect(folder / "state.db")
    conn.executemany(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s2', 'user', ?, ?)",
        [("上海で会議", NOW), ("東京 qa", NOW), ("会議だけ", NOW)],
    )
    conn.commit()
    conn.close()
    ro = open_home(folder, read_only=True, clock=FixedClock(NOW))
    try:
        assert ro.archive.bigram_index.available()
        for query in ("東京 OR 上海", "会議 NOT 東京", "qa OR 上海 NOT 服务器", "会議 NOT 上海 大阪"):
            assert set(ro.archive.iter_matches(query)) == expected(folder / "state.db", query), query
    finally:
        ro.close()


# Each of A, B, C as an English word and as a Japanese word: the CJK path must read the operators
# exactly as FTS5 reads them for English.
WORDS = {"A": ("alpha", "東京"), "B": ("bravo", "会議"), "C": ("charlie", "大阪")}
SHAPES = [
    "A OR B",
    "A AND B",
    "A B",
    "A NOT B",
    "A OR B NOT C",
    "A NOT B OR C",
    "A NOT B C",
    "A NOT B AND C",
    "A NOT B NOT C",
    "A C NOT B",
    "A B OR C",
    "A OR B C",
    "A AND B OR C",
    "A OR B AND C",
]


def test_cjk_operators_read_as_fts5_reads_english(tmp_path, clock):
    home = open_home(tmp_path / "h", clock=clock)
    archive = home.archive
    subsets = [s for n in range(4) for s in itertools.combinations("ABC", n)]
    archive.create_session("en")
    english = archive.append_messages(
        "en", [{"role": "user", "content": " ".join(["x", *(WORDS[w][0] for w in s)])} for s in subsets]
    )
    archive.create_session("ja")
    japanese = archive.append_messages(
        "ja", [{"role": "user", "content": "、".join(["x", *(WORDS[w][1] for w in s)])} for s in subsets]
    )
    for shape in SHAPES:
        in_english = " ".join(WORDS[t][0] if t in WORDS else t for t in shape.split())
        in_japanese = " ".join(WORDS[t][1] if t in WORDS else t for t in shape.split())
        by_fts = {subsets[english.index(m)] for m in archive.iter_matches(in_english)}
        by_bigrams = {subsets[japanese.index(m)] for m in archive.iter_matches(in_japanese)}
        assert by_bigrams == by_fts, shape
        assert {h.plan for h in archive.search(in_japanese)} == {"bigram:ranked"}
    home.close()


CJK_TERMS = ["東京", "会議", "の", "上海", "数据", "数据库", "部署", "データ"]
LATIN_TERMS = ["qa", "moved", "move", "Deploy", "ab"]
TERM = st.sampled_from(CJK_TERMS + LATIN_TERMS)


@st.composite
def queries(draw) -> str:
    terms = draw(st.lists(TERM, min_size=1, max_size=5))
    if not any(t in CJK_TERMS for t in terms):  # English alone is a word query for FTS5, not a substring one
        terms[draw(st.integers(0, len(terms) - 1))] = draw(st.sampled_from(CJK_TERMS))
    ops = draw(
        st.lists(st.sampled_from(["", "AND", "OR", "NOT", "AND NOT"]), min_size=len(terms) - 1, max_size=len(terms) - 1)
    )
    parts = ["NOT", draw(TERM), "AND", terms[0]] if draw(st.booleans()) else [terms[0]]  # NOT b AND c: c NOT b
    for op, term in zip(ops, terms[1:], strict=True):
        parts += [op, term] if op else [term]
    return " ".join(parts)


MESSAGE = st.lists(TERM, max_size=5).flatmap(
    lambda words: st.lists(st.sampled_from(["", " ", "、"]), min_size=len(words), max_size=len(words)).map(
        lambda seps: "".join(w + s for w, s in zip(words, seps, strict=True)) or "空"
    )
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(MESSAGE, min_size=1, max_size=8), st.lists(queries(), min_size=1, max_size=4), st.booleans())
def test_boolean_queries_equal_a_substring_evaluation(texts, query_list, trigram_only):
    with tempfile.TemporaryDirectory() as folder:
        home = open_home(Path(folder) / "h", clock=FixedClock(NOW))
        try:
            home.archive.create_session("s")
            home.archive.append_messages("s", [{"role": "user", "content": t} for t in texts])
            if trigram_only:  # no bigram index: Hermes's trigram table, or a scan
                home.close()
                for stale in (Path(folder) / "h").glob("workbench.db*"):
                    stale.unlink()
                home = open_home(Path(folder) / "h", read_only=True, clock=FixedClock(NOW))
            for query in query_list:
                assert set(home.archive.iter_matches(query)) == expected(home.state_db_path, query), query
        finally:
            home.close()


def test_a_plan_read_from_several_sources_names_each_on_the_screen():
    from workbench.screens.sessions import explain_plan

    assert explain_plan("bigram+like:ranked") == "CJK bigram index + substring scan, best match"
    assert explain_plan("fts:ranked") == "word index, best match"
