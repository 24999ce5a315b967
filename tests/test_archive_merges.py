"""Turn writes leave FTS5's merging to idle time, and leave the tables' own settings as they were."""

from __future__ import annotations

import random
import sqlite3

import pytest

from engine import FixedClock, open_home
from engine.archive import merges, turn_checks
from engine.archive.merges import segments

TABLES = ("messages_fts", "messages_fts_trigram")


@pytest.fixture(autouse=True)
def deep(monkeypatch):
    """These small indexes take the path of a deep one (FTS5 keeps shallow ones to itself), from
    their first turn (a stream reads the depth every ``DEPTH_EVERY`` turns)."""
    monkeypatch.setattr(merges, "FTS5_LEVELS", 0)
    monkeypatch.setattr(turn_checks, "DEPTH_EVERY", 1)


def _home(tmp_path):
    home = open_home(tmp_path / "home", clock=FixedClock(1796040000.0))
    home.archive.create_session("s")
    return home


def _settings(path) -> dict[str, dict[str, object]]:
    """Each table's config as another process (Hermes) reads it after our commits."""
    other = sqlite3.connect(path)
    try:
        return {t: dict(other.execute(f"SELECT k, v FROM {t}_config")) for t in TABLES}
    finally:
        other.close()


def _turn(i: int) -> list[dict]:
    """A question and a long answer: enough index pages that FTS5's own automerge would merge every few turns."""
    words = " ".join(f"w{(i * 7919 + k * 104729) % 5000}" for k in range(3000))
    return [{"role": "user", "content": f"question word{i} about 数据库{i}"}, {"role": "assistant", "content": words}]


def test_turns_keep_every_level_merged_and_the_settings_read_back_unchanged(tmp_path):
    home = _home(tmp_path)
    archive, conn = home.archive, home.archive.conn()
    for i in range(60):
        archive.append_messages("s", _turn(i))
        for table in TABLES:  # a level is merged from START_SEGMENTS on, while new turns add to the one below
            assert all(len(level.pages) <= merges.START_SEGMENTS + 2 for level in merges.structure(conn, table))
    assert all(settings == {"version": 4} for settings in _settings(home.state_db_path).values())
    matched = conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'question'").fetchone()[0]
    assert matched == 60
    assert {h.match_message_id for h in archive.search("word17")} == {35}
    assert [h.match_message_id for h in archive.search("数据库17")] == [35]
    home.close()


@pytest.mark.parametrize("outside_commit", [True, False])
def test_a_stream_reads_the_depth_again_after_another_programs_commit(tmp_path, monkeypatch, outside_commit):
    """A stream reads its indexes' depth every ``DEPTH_EVERY`` turns, and at once after another
    connection commits (Hermes rebuilt or filled the index): from then on the turns merge it themselves."""
    monkeypatch.setattr(turn_checks, "DEPTH_EVERY", 16)
    monkeypatch.setattr(merges, "SMALL_LEVEL_PAGES", 0)  # every level counts as large: left to idle upkeep
    monkeypatch.setattr(merges, "FTS5_LEVELS", 100)
    home = _home(tmp_path)
    archive, conn = home.archive, home.archive.conn()
    archive.append_messages("s", _turn(0))  # shallow: FTS5 merges it
    monkeypatch.setattr(merges, "FTS5_LEVELS", 0)  # now it counts as deep
    if outside_commit:
        other = sqlite3.connect(home.state_db_path)
        other.execute("UPDATE sessions SET title = 'renamed elsewhere' WHERE id = 's'")
        other.commit()
        other.close()
    for i in range(1, 15):
        archive.append_messages("s", _turn(i))
    counts = {t: segments(conn, t) for t in TABLES}
    if outside_commit:  # every turn after the commit left its segment to idle upkeep
        assert counts == {t: 15 for t in TABLES}
    else:  # the stream read the depth again only after 16 turns: FTS5 merged these meanwhile
        assert all(n < 8 for n in counts.values()), counts
    home.close()


def test_a_turn_leaves_a_large_level_to_idle_upkeep_until_it_is_full(tmp_path, monkeypatch):
    monkeypatch.setattr(merges, "SMALL_LEVEL_PAGES", 0)  # every level counts as large
    home = _home(tmp_path)
    archive, conn = home.archive, home.archive.conn()
    for i in range(15):  # FTS5's own automerge (4) would have merged these
        archive.append_messages("s", _turn(i))
    assert {t: segments(conn, t) for t in TABLES} == {t: 15 for t in TABLES}
    finished = set()
    bound = 16 + 16 // merges.PACE + 2  # a level of 16 is merged at PACE pages per page written, so it ends
    for i in range(15, 40):  # before a quarter as many segments more arrive (and a step's rounding)
        archive.append_messages("s", _turn(i))
        counts = {t: segments(conn, t) for t in TABLES}
        assert all(n <= bound for n in counts.values()), counts
        finished |= {t for t, n in counts.items() if n < 16}
    assert finished == set(TABLES)  # the full level (the file's crisismerge) was merged, by the turns
    before = [h.match_message_id for h in archive.search("question", limit=50)]
    while archive.upkeep(budget_s=0.05):
        pass
    assert archive.merge_work() == [] and all(segments(conn, t) <= 3 for t in TABLES)
    assert [h.match_message_id for h in archive.search("question", limit=50)] == before
    home.close()


def test_a_step_of_a_wide_merge_is_charged_the_pages_it_wrote(tmp_path, monkeypatch):
    """A ``merge`` step writes whole doclists: asked for one page, it writes many. The turns that
    follow pay that back before the next step, so the turns merge at their pace, not a step each."""
    monkeypatch.setattr(merges, "STEP_PAGES", 1)
    monkeypatch.setattr(merges, "SMALL_LEVEL_PAGES", 0)
    conn = sqlite3.connect(tmp_path / "fts.db", isolation_level=None)
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(content)")
    conn.execute("INSERT INTO t(t, rank) VALUES ('automerge', 0)")
    conn.execute("INSERT INTO t(t, rank) VALUES ('crisismerge', 1999)")
    for _ in range(16):  # a full level of segments, each holding a long doclist of the same term
        conn.execute("INSERT INTO t(content) VALUES (?)", (" ".join(["alpha"] * 20000),))
    levels = merges.structure(conn, "t")
    assert (levels[0].merging, len(levels[0].pages)) == (0, 16)
    owed: dict[str, int] = {}
    merges._merge_small_levels(conn, "t", 4, 16, owed, flushed=15)  # the last segment was this turn's
    after = merges.structure(conn, "t")
    wrote = sum(after[1].pages)
    assert wrote > merges.MAX_STEPS * 2  # one step wrote far more than the page it was asked for
    assert owed["t"] == merges.PACE * levels[0].pages[-1] - wrote
    merges._merge_small_levels(conn, "t", 4, 16, owed, flushed=16)  # a turn that wrote nothing: no step
    assert merges.structure(conn, "t") == after
    conn.close()


def test_the_level_chosen_is_the_one_fts5_merges_next(tmp_path):
    """``next_merge`` mirrors FTS5's choice: after a ``merge`` step nothing below the level it named
    has changed, that level or its output has, and nothing changes when it names none."""
    conn = sqlite3.connect(tmp_path / "fts.db", isolation_level=None)
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(content)")
    conn.execute("INSERT INTO t(t, rank) VALUES ('automerge', 0)")
    conn.execute("INSERT INTO t(t, rank) VALUES ('crisismerge', 1999)")
    rng = random.Random(11)
    checked = set()
    for _ in range(300):
        conn.execute("BEGIN")
        for _ in range(rng.choice([1, 1, 2, 40])):
            conn.execute(
                "INSERT INTO t(content) VALUES (?)", (" ".join(f"w{rng.randrange(4000)}" for _ in range(200)),)
            )
        conn.execute("COMMIT")
        if rng.random() < 0.6:
            continue
        before = merges.structure(conn, "t")
        assert merges.depth(conn, "t") == len(before)  # the quick read of the record's first value
        chosen = merges.next_merge(before, 4)
        conn.execute("INSERT INTO t(t, rank) VALUES ('merge', ?)", (rng.choice([1, 4, 16]),))
        after = merges.structure(conn, "t")
        changed = next((n for n, (a, b) in enumerate(zip(before, after, strict=False)) if a != b), None)
        if changed is None and len(after) != len(before):
            changed = min(len(before), len(after))  # only a new level, above the one merged
        if chosen is None:
            assert changed is None, (before, after)
        else:  # the merged level, or only its output (the level above) when no input page was used up
            assert changed == chosen or (changed == chosen + 1 and after[chosen].merging), (before, after)
        checked.add("none" if chosen is None else "unfinished" if before[chosen].merging else "most")
    conn.execute("INSERT INTO t(t) VALUES ('optimize')")
    merged = merges.structure(conn, "t")
    assert merges.next_merge(merged, 4) is None
    conn.execute("INSERT INTO t(t, rank) VALUES ('merge', 16)")
    assert merges.structure(conn, "t") == merged
    assert checked == {"unfinished", "most"}  # both branches of the choice were compared
    conn.close()


def test_a_setting_of_the_files_own_is_put_back_and_off_stays_off(tmp_path):
    home = _home(tmp_path)
    conn = home.archive.conn()
    conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('automerge', 9)")
    conn.execute("INSERT INTO messages_fts_trigram(messages_fts_trigram, rank) VALUES ('automerge', 0)")
    home.archive.append_messages("s", _turn(1))
    settings = _settings(home.state_db_path)
    assert settings["messages_fts"]["automerge"] == 9
    assert settings["messages_fts_trigram"]["automerge"] == 0
    home.close()


def test_a_setting_fts5_would_refuse_is_left_alone_and_the_turn_is_stored(tmp_path):
    home = _home(tmp_path)
    conn = home.archive.conn()
    conn.execute("INSERT INTO messages_fts_config (k, v) VALUES ('automerge', 'often')")  # written by hand
    ids = home.archive.append_messages("s", _turn(1))
    assert len(ids) == 2
    assert _settings(home.state_db_path)["messages_fts"]["automerge"] == "often"
    assert [h.match_message_id for h in home.archive.search("word1")] == [ids[0]]
    home.close()


def test_hermes_writes_and_searches_an_archive_our_deferred_turns_left_unmerged(hermes, tmp_path):
    from tests.test_archive_hermes import OPEN

    home = _home(tmp_path)
    for i in range(10):
        home.archive.append_messages("s", _turn(i))
    home.close()
    result = hermes.json(
        tmp_path / "home",
        OPEN
        + """
db.create_session("h1", "cli")
for i in range(10):
    db.append_message("h1", "user", "hermes question %d about 数据库%d" % (i, i))
print(json.dumps({"error": error, "rebuilds": len(rebuilds), "ours": ids("word3"), "cjk": ids("数据库3"),
                  "theirs": len(ids("hermes"))}))
""",
    )
    assert (result["error"], result["rebuilds"]) == (None, 0)
    assert result["ours"] == [7] and result["theirs"] == 10
    assert len(result["cjk"]) == 2  # our turn's question and Hermes's own, through its trigram table
    conn = sqlite3.connect(tmp_path / "home" / "state.db")
    for table in TABLES:
        conn.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")  # raises on a damaged index
    conn.close()
    assert all(s.get("automerge", 4) == 4 for s in _settings(tmp_path / "home" / "state.db").values())


def test_shallow_or_unreadable_or_crowded_indexes_are_left_to_fts5(monkeypatch):
    monkeypatch.setattr(merges, "FTS5_LEVELS", 8)
    level = merges.Level(0, (3, 3))
    assert not merges._ours([level] * 8)  # FTS5's own merging is smooth at this depth
    assert merges._ours([level] * 9)
    assert not merges._ours(None)  # a structure we cannot read: nothing of ours would bound it
    assert not merges._ours([merges.Level(0, (1,) * 8)] * 9)  # 72 segments: FTS5's own rules again


def test_a_setting_fts5_refuses_midway_leaves_the_other_as_the_file_had_it(tmp_path, monkeypatch):
    home = _home(tmp_path)
    home.archive.append_messages("s", _turn(0))  # the index now has a structure (and a level) to go by
    monkeypatch.setattr(merges, "NO_CRISIS", -1)  # FTS5 refuses this crisismerge after automerge was set to 0
    home.archive.append_messages("s", _turn(1))
    assert all(settings == {"version": 4} for settings in _settings(home.state_db_path).values())
    assert [h.match_message_id for h in home.archive.search("word1")] == [3]
    home.close()


def test_idle_steps_merge_the_top_level_only_once_the_small_segments_add_up():
    """Below the top a level of two segments is merged at once; at the top that rewrites the
    whole index, so a small segment waits there until the others hold a quarter of the largest."""
    Level = merges.Level
    assert merges.merge_due([Level(0, (3, 4)), Level(0, ()), Level(0, (9000,))])  # a low level: at once
    assert not merges.merge_due([Level(0, ()), Level(0, (9000, 40))])  # the top, 40 pages beside 9,000
    assert not merges.merge_due([Level(0, (5,)), Level(0, (9000, 1000, 1000))])
    assert merges.merge_due([Level(0, ()), Level(0, (9000, 1500, 1000))])  # 2,500: past a quarter
    assert merges.merge_due([Level(0, ()), Level(2, (9000, 40))])  # a merge under way goes on
    assert not merges.merge_due([Level(0, (7,)), Level(0, (9000,))]) and not merges.merge_due(None)
