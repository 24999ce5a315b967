"""Turn writes leave FTS5's merging to idle time, and leave the tables' own settings as they were."""

from __future__ import annotations

import sqlite3

from engine import FixedClock, open_home
from engine.archive.upkeep import segments

TABLES = ("messages_fts", "messages_fts_trigram")


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


def test_each_turn_adds_one_segment_and_the_setting_reads_back_unchanged(tmp_path):
    home = _home(tmp_path)
    archive, conn = home.archive, home.archive.conn()
    before = {t: segments(conn, t) for t in TABLES}
    for i in range(12):  # FTS5's own automerge (4) would have merged these by the fourth
        archive.append_messages("s", _turn(i))
    assert {t: segments(conn, t) for t in TABLES} == {t: before[t] + 12 for t in TABLES}
    assert all(s.get("automerge", 4) == 4 for s in _settings(home.state_db_path).values())
    for i in range(12):
        assert {h.match_message_id for h in archive.search(f"word{i}")} == {2 * i + 1}
    home.close()


def test_a_level_that_fills_up_is_still_merged_at_once(tmp_path):
    home = _home(tmp_path)
    archive, conn = home.archive, home.archive.conn()
    for i in range(40):
        archive.append_messages("s", _turn(i))
        assert all(segments(conn, t) <= 16 for t in TABLES)  # FTS5's crisismerge, left as it is
    matched = conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'question'").fetchone()[0]
    assert matched == 40
    home.close()


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
