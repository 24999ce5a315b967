"""state.db shared with the real Hermes Agent 0.19.0: its SessionDB, its search, its writes, in its own process."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest

from engine import open_home
from tests.archive_support import fts_state, old_workbench_archive, schema_of
from tests.cli_support import completed
from tests.hermes_support import MEMORY_TURNS

# Hermes's SessionDB opened on HERMES_HOME/state.db, with a spy on its FTS rebuild path.
OPEN = """
import json, os, sys
from pathlib import Path
import hermes_state
rebuilds = []
_rebuild = hermes_state.SessionDB._rebuild_fts_indexes
def _spy(cursor, **kwargs):
    rebuilds.append(kwargs)
    return _rebuild(cursor, **kwargs)
hermes_state.SessionDB._rebuild_fts_indexes = staticmethod(_spy)
path = Path(os.environ["HERMES_HOME"]) / "state.db"
try:
    db = hermes_state.SessionDB(path)
except Exception as exc:
    db, error = None, f"{type(exc).__name__}: {exc}"
else:
    error = None
def ids(query):
    return sorted(r["id"] for r in db.search_messages(query, limit=100000))
"""

# Hermes starting a titled session, as its CLI does on the first message.
DEPLOY = """
db.create_session("d1", "cli", model="m")
db.set_session_title("d1", "Deploy API")
db.append_message("d1", "user", "deploy the API")
"""

QUERIES = ["deploy", "rollout", "kubectl", "zebra", "数据库迁移", "部署", "ロールアウト"]


def hermes_search(hermes, home, queries) -> dict:
    return hermes.json(
        home,
        OPEN
        + textwrap.dedent(f"""
        print(json.dumps({{"error": error, "rebuilds": len(rebuilds), "trigram": db._trigram_available if db else None,
                          "hits": {{q: ids(q) for q in {queries!r}}}}}))
        """),
    )


def our_hits(folder, queries) -> dict:
    home = open_home(folder, read_only=True)
    try:
        return {q: sorted(home.archive.iter_matches(q)) for q in queries}
    finally:
        home.close()


def workbench_home(folder):
    home = open_home(folder)
    archive = home.archive
    archive.create_session("wb1", title="Billing deploy")
    calls = [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "terminal", "arguments": json.dumps({"cmd": "kubectl rollout status"})},
        }
    ]
    archive.append_messages(
        "wb1",
        [
            {"role": "user", "content": "Please deploy the billing service"},
            {"role": "assistant", "content": None, "tool_calls": calls},
            {"role": "tool", "content": '{"exit": 0}', "tool_name": "terminal", "tool_call_id": "c1"},
            {"role": "assistant", "content": "部署完成了，数据库迁移也好了"},
        ],
    )
    archive.create_session("wb2")
    archive.append_messages(
        "wb2",
        [
            {"role": "user", "content": "the zebra crossed the rollout"},
            {"role": "assistant", "content": "ロールアウトはデプロイ済みです"},
        ],
    )
    home.close()


def test_hermes_opens_a_home_we_created_without_rebuilding_and_finds_our_messages(hermes, tmp_path):
    folder = tmp_path / "home"
    workbench_home(folder)
    before, counts = schema_of(folder / "state.db"), fts_state(folder / "state.db")
    assert counts == {"messages": 6, "triggers": 6, "messages_fts": 6, "messages_fts_trigram": 6}
    result = hermes_search(hermes, folder, QUERIES)
    assert (result["error"], result["rebuilds"], result["trigram"]) == (None, 0, True)
    assert schema_of(folder / "state.db") == before  # Hermes found nothing to add or reshape
    assert fts_state(folder / "state.db") == counts
    assert result["hits"]["数据库迁移"] == [4]  # Hermes's trigram table, written by our appends
    assert result["hits"]["ロールアウト"] == [6] and result["hits"]["kubectl"] == [2]
    assert result["hits"] == our_hits(folder, QUERIES)


def layout(path) -> dict:
    """Every object's definition: tables by their columns, the rest by their SQL without whitespace."""
    conn = sqlite3.connect(path)
    try:
        out = {}
        for kind, name, sql in conn.execute("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"):
            if kind == "table" and not (sql or "").upper().startswith("CREATE VIRTUAL"):
                out[name] = [tuple(r) for r in conn.execute(f'PRAGMA table_info("{name}")')]
            else:
                out[name] = "".join((sql or "").split()).lower().replace("ifnotexists", "")
        return out
    finally:
        conn.close()


def hermes_writes(hermes, folder) -> None:
    hermes.run(
        folder,
        OPEN
        + """
db.create_session("h1", "cli", model="hermes-4-70b")
db.append_message("h1", "user", "Please deploy the billing service")
db.append_message("h1", "assistant", None, tool_calls=[{"id": "c1", "type": "function",
    "function": {"name": "terminal", "arguments": json.dumps({"cmd": "kubectl rollout status 数据库迁移"})}}])
db.append_message("h1", "tool", '{"exit": 0}', tool_name="terminal", tool_call_id="c1")
db.append_message("h1", "assistant", "部署完成了，数据库迁移也好了")
db.create_session("h2", "telegram")
db.append_message("h2", "user", "the zebra crossed the rollout")
db.append_message("h2", "assistant", "ロールアウトはデプロイ済みです")
db.end_session("h1", "compression")
db.close()
""",
    )


def test_an_archive_written_by_hermes_opens_unchanged_and_searches_as_hermes_and_more(hermes, tmp_path):
    folder = tmp_path / "hermes"
    folder.mkdir()
    hermes_writes(hermes, folder)
    before = schema_of(folder / "state.db")
    home = open_home(folder)
    archive = home.archive
    assert [s.id for s in archive.list_sessions()] == ["h2", "h1"]
    archive.append_message("h2", "user", "one more rollout from the workbench")
    ours = {q: sorted(archive.iter_matches(q)) for q in QUERIES}
    assert [e.action for e in home.journal.query(subsystem="sessions")] == []  # nothing completed or repaired
    home.close()
    assert schema_of(folder / "state.db") == before  # byte-identical schema after our open and write
    theirs = hermes_search(hermes, folder, QUERIES)["hits"]
    # Hermes stored the tool call with json.dumps defaults (\u escapes): we find its CJK, Hermes does not
    assert ours["数据库迁移"] == [2, 4] and theirs["数据库迁移"] == [4]
    assert {q: h for q, h in theirs.items() if q != "数据库迁移"} == {
        q: h for q, h in ours.items() if q != "数据库迁移"
    }
    assert ours["rollout"] == [2, 5, 7] and ours["部署"] == [4]


def test_our_new_layout_is_hermes_layout(hermes, tmp_path):
    (tmp_path / "hermes").mkdir()
    hermes.run(tmp_path / "hermes", OPEN + "db.close()")
    open_home(tmp_path / "ours").archive.list_sessions()
    assert layout(tmp_path / "ours" / "state.db") == layout(tmp_path / "hermes" / "state.db")


APPENDER = """
import json, sys, time
from pathlib import Path
from engine import open_home
folder = Path(sys.argv[1])
home = open_home(folder)
home.archive.create_session("live", source="cli")
ids, n = [], 0
while not (folder / "stop").exists():
    ids += home.archive.append_messages("live", [
        {"role": "user", "content": f"concurrent write {n} 并发写入测试"},
        {"role": "assistant", "content": f"acknowledged concurrent turn {n}"}])
    n += 1
    print(n, flush=True)
    time.sleep(0.002)
home.close()
print(json.dumps(ids), flush=True)
"""


@pytest.fixture(scope="module")
def old_archive(tmp_path_factory):
    """6,000 messages in the old layout: enough for Hermes's rebuild to take a while."""
    return old_workbench_archive(tmp_path_factory.mktemp("old") / "home", sessions=200, per_session=30)


@pytest.mark.slow
@pytest.mark.parametrize("trial", range(5))
def test_hermes_first_open_of_an_old_archive_while_we_append(hermes, old_archive, tmp_path, trial):
    """Trial 0 starts both at once; the others open Hermes after our 1st..4th turn.

    The workbench of before (no layout completion) fails this: Hermes rebuilds, one of
    our appends lands between its statements, and the trigram table keeps a few rows.
    """
    template = old_archive
    folder = tmp_path / "home"
    shutil.copytree(template, folder)
    writer = subprocess.Popen([sys.executable, "-c", APPENDER, str(folder)], stdout=subprocess.PIPE, text=True)
    try:
        if trial:
            for _ in range(trial):
                assert writer.stdout.readline().strip(), "the appender stopped"
        opened = hermes.json(
            folder,
            OPEN
            + """
print(json.dumps({"error": error, "rebuilds": len(rebuilds)}))
""",
        )
        time.sleep(0.05)
        if not trial:  # on a loaded machine Hermes can finish before our first turn: let two land
            for _ in range(2):
                assert writer.stdout.readline().strip(), "the appender stopped"
    finally:
        (folder / "stop").touch()
        out, _ = writer.communicate(timeout=60)
    assert writer.returncode == 0
    appended = json.loads(out.strip().splitlines()[-1])
    assert len(appended) >= 2 * max(trial, 1)
    if trial:  # we completed the layout before our first write: Hermes had nothing to rebuild
        assert opened == {"error": None, "rebuilds": 0}
    state = fts_state(folder / "state.db")
    assert state["messages"] == 6000 + len(appended) and state["triggers"] == 6
    assert state["messages_fts"] == state["messages_fts_trigram"] == state["messages"]
    queries = ["concurrent", "并发写入", "deploy", "数据库迁移"]
    theirs = hermes_search(hermes, folder, queries)
    assert theirs["error"] is None and theirs["rebuilds"] == 0
    ours = our_hits(folder, queries)
    assert theirs["hits"] == ours
    assert set(ours["concurrent"]) == set(appended)
    assert set(ours["并发写入"]) == set(appended[::2])  # every user message of ours
    assert ours["deploy"] == substring_ids(folder, "deploy") and len(ours["deploy"]) == 1000  # the old rows, all found
    assert ours["数据库迁移"] == substring_ids(folder, "数据库迁移") and len(ours["数据库迁移"]) == 2000


def substring_ids(folder, needle) -> list[int]:
    conn = sqlite3.connect(folder / "state.db")
    try:
        return [
            r[0]
            for r in conn.execute(
                "SELECT id FROM messages WHERE instr(content, ?) OR instr(tool_calls, ?) ORDER BY id", (needle, needle)
            )
        ]
    finally:
        conn.close()


def test_a_compression_chain_hermes_wrote_is_one_row_like_hermes_own_list(hermes, tmp_path):
    """Hermes rotates on compression as its agent does (end 'compression', a child, the next ``#N`` title):
    our chains are its logical conversations, tip for tip, and the branch and delegate nest under them."""
    folder = tmp_path / "hermes"
    folder.mkdir()
    listed = hermes.json(
        folder,
        OPEN
        + DEPLOY
        + """
import time
for old, new in (("d1", "d2"), ("d2", "d3")):
    time.sleep(0.01)
    title = db.get_session_title(old)
    db.end_session(old, "compression")
    db.create_session(new, "cli", model="m", model_config={"max_iterations": 90}, parent_session_id=old)
    db.set_session_title(new, db.get_next_title_in_lineage(title))
    db.append_message(new, "user", f"continue in {new}")
db.create_session("b1", "cli", model_config={"_branched_from": "d2"}, parent_session_id="d2")
db.create_session("h1", "subagent", model_config={"_delegate_from": "d3"}, parent_session_id="d3")
db.create_session("solo", "telegram")
rows = db.list_sessions_rich(limit=50)
print(json.dumps({"rows": [[r.get("_lineage_root_id", r["id"]), r["id"]] for r in rows],
                  "tip": db.get_compression_tip("d1"), "titles": [db.get_session_title(s) for s in ("d2", "d3")]}))
db.close()
""",
    )
    assert listed["titles"] == ["Deploy API #2", "Deploy API #3"]
    home = open_home(folder, read_only=True)
    try:
        archive = home.archive
        chains = {chain.head.id: chain for chain in archive.root_chains()}
        assert set(chains) == {"d1", "solo"}
        deploy = chains["d1"]
        assert deploy.ids == ("d1", "d2", "d3") and deploy.title == "Deploy API" and deploy.tip.id == listed["tip"]
        assert ["d1", deploy.tip.id] in listed["rows"]  # Hermes lists the chain once, as its tip
        assert [(c.ids, c.kind) for c in archive.chain_children("d1")] == [(("b1",), "branch"), (("h1",), "delegate")]
        assert archive.chain_path("h1") == ["d1", "h1"] and archive.chain_of("d2").ids == deploy.ids
    finally:
        home.close()


def test_a_cjk_search_first_in_a_home_hermes_wrote_leaves_every_read_working(hermes, tmp_path):
    """The search's index made workbench.db with no journal in it, and every read-only command
    then failed with "no such table: journal", advising to move a sound database aside."""
    folder = tmp_path / "hermes"
    folder.mkdir()
    hermes_writes(hermes, folder)
    found = completed("--home", str(folder), "--json", "sessions", "search", "数据库迁移")
    assert found.returncode == 0 and json.loads(found.stdout)["count"] == 1, found.stdout + found.stderr
    assert (folder / "workbench.db").exists()
    for command in (["memory", "show"], ["timeline"], ["sessions", "show", "h1"], ["pending", "list"]):
        shown = completed("--home", str(folder), "--json", *command)
        assert shown.returncode == 0, (command, shown.stdout, shown.stderr)
        assert json.loads(shown.stdout)


def searched(folder, query: str) -> list[dict]:
    """The results of ``workbench sessions search QUERY --json`` on ``folder`` (run in this process)."""
    result = completed("--home", str(folder), "--json", "sessions", "search", query)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["results"]


def test_an_emoji_hermes_stored_is_found_by_searching_for_it(hermes, tmp_path):
    """Seen on a Hermes home: ``sessions search 🚀`` said "no matches" beside a message holding 🚀, as did
    the Sessions screen. The word index drops symbols as it drops spaces; a symbol is a substring now, found
    in the text and in the tool call Hermes stored with ``json.dumps`` defaults (``\\ud83c\\udf89``)."""
    folder = tmp_path / "hermes"
    folder.mkdir()
    hermes.run(
        folder,
        MEMORY_TURNS
        + """
db.create_session("rocket", source="cli", model="m")
db.append_message("rocket", "user", "Deploy 🚀 rocket tonight")
db.create_session("party", source="cli", model="m")
turn("party", "party", {"action": "add", "content": "Team party 🎉 on Friday"})
db.create_session("plain", source="cli", model="m")
db.append_message("plain", "user", "a rocket without the emoji")
""",
    )

    def found(query: str) -> list[tuple[str, str]]:
        return [(hit["session_id"], hit["snippet"]) for hit in searched(folder, query)]

    assert found("🚀") == [("rocket", "Deploy «🚀» rocket tonight")]
    assert [session for session, _ in found("🎉")] == ["party"]  # (the memory call, as stored, and its result)
    assert [session for session, _ in found("rocket 🚀")] == ["rocket"]  # (both terms, not rocket alone)
    assert found("✓") == []


def test_sessions_hermes_archives_and_deletes_are_timeline_rows(hermes, tmp_path):
    """Hermes's own set_session_archived and delete_session change what can be recalled, yet left
    no Timeline row: the workbench only journaled its own archive changes."""
    folder = tmp_path / "hermes"
    folder.mkdir()
    hermes.json(
        folder,
        OPEN
        + DEPLOY
        + """
db.end_session("d1", "compression")
db.create_session("d2", "cli", model="m", parent_session_id="d1")
db.append_message("d2", "user", "continue")
db.create_session("solo", "telegram")
db.set_session_title("solo", "Quick question")
db.append_message("solo", "user", "what time is it")
print(json.dumps({}))
""",
    )
    first = completed("timeline", "--home", str(folder), "--json")
    assert first.returncode == 0 and json.loads(first.stdout)["rows"] == []  # the first look journals nothing
    hermes.json(
        folder,
        OPEN
        + """
print(json.dumps([db.set_session_archived("d2", True), db.delete_session("solo")]))
""",
    )
    listed = completed("timeline", "--subsystem", "sessions", "--home", str(folder), "--json")
    rows = json.loads(listed.stdout)["rows"]
    assert [(r["actor"], r["action"], r["target"], r["summary"]) for r in rows] == [
        ("external", "delete", "solo", "deleted session 'Quick question', 1 message"),
        (
            "external",
            "archive",
            "d1",
            "archived session 'Deploy API' with 1 more of its conversation: hidden from lists and session_search",
        ),
    ]
    revert = completed("revert", str(rows[1]["id"]), "--home", str(folder), "--json")
    assert json.loads(revert.stdout)["success"]
    home = open_home(folder, read_only=True)
    try:
        assert [s.archived for s in map(home.archive.get_session, ("d1", "d2"))] == [False, False]
    finally:
        home.close()


def test_one_archive_of_hermes_is_one_row_with_the_tool_session_it_took(hermes, tmp_path):
    """Hermes's archive of a conversation's first segment takes every session below a compressed
    one, a tool session too: the outside look made that tool session a second row of its own."""
    folder = tmp_path / "hermes"
    folder.mkdir()
    setup = """
db.end_session("d1", "compression")
db.create_session("d2", "cli", model="m", parent_session_id="d1")
db.create_session("t1", "tool", model="m", parent_session_id="d1")
db.append_message("t1", "user", "tool run")
print(json.dumps({}))
"""
    hermes.json(folder, OPEN + DEPLOY + setup)
    assert completed("timeline", "--home", str(folder)).returncode == 0
    archived = hermes.json(folder, OPEN + 'print(json.dumps(db.set_session_archived("d1", True)))')
    assert archived is True
    listed = completed("timeline", "--subsystem", "sessions", "--home", str(folder), "--json")
    rows = json.loads(listed.stdout)["rows"]
    assert [(r["action"], r["target"], r["summary"]) for r in rows] == [
        (
            "archive",
            "d1",
            "archived session 'Deploy API' with 2 more of its conversation: hidden from lists and session_search",
        )
    ]
    revert = completed("revert", str(rows[0]["id"]), "--home", str(folder), "--json")
    assert json.loads(revert.stdout)["success"]
    home = open_home(folder, read_only=True)
    try:
        assert [home.archive.get_session(s).archived for s in ("d1", "d2", "t1")] == [False, False, False]
    finally:
        home.close()


def test_a_chain_hermes_titled_on_its_second_segment_is_found_under_that_title_from_either(hermes, tmp_path):
    """Hermes titled the continuation, not the first segment: a hit in the first segment came back
    untitled (the CLI quoting its first message instead) while one in the second wore the title the
    tree gives the whole chain."""
    folder = tmp_path / "hermes"
    folder.mkdir()
    hermes.run(
        folder,
        OPEN
        + """
db.create_session("hz-chain-1", "cli", model="m")
db.append_message("hz-chain-1", "user", "我们讨论一下数据库迁移的计划")
db.append_message("hz-chain-1", "assistant", "データベースの移行ですね")
db.end_session("hz-chain-1", "compression")
db.create_session("hz-chain-2", "cli", model="m", parent_session_id="hz-chain-1")
db.set_session_title("hz-chain-2", "数据库迁移")
db.append_message("hz-chain-2", "user", "继续迁移")
db.close()
""",
    )
    home = open_home(folder, read_only=True)
    try:
        (chain,) = home.archive.root_chains()
        assert chain.ids == ("hz-chain-1", "hz-chain-2") and chain.title == "数据库迁移"
    finally:
        home.close()
    for query, segment in (("データ", "hz-chain-1"), ("继续", "hz-chain-2")):
        (hit,) = searched(folder, query)
        assert (hit["session_id"], hit["title"]) == (segment, "数据库迁移")
        assert hit["segments"] == ["hz-chain-1", "hz-chain-2"]
        shown = completed("--home", str(folder), "sessions", "search", query)
        assert shown.returncode == 0 and f"{segment}  " in shown.stdout and "数据库迁移\n" in shown.stdout
        assert "“" not in shown.stdout  # no quoted first message in place of the title


def test_archiving_a_live_session_is_refused_without_force_as_hermes_goes_on_writing_to_it(hermes, tmp_path):
    """`sessions archive` hid a session Hermes had not ended, saying nothing. Hermes writes on to it
    (it stays archived, hidden while in use), and the segment its next compression starts is not
    archived: the workbench then lists the conversation again while Hermes's own list hides it. So it
    is refused, nothing changed, unless --force, as a delete of a live session is."""
    folder = tmp_path / "hermes"
    folder.mkdir()
    hermes.json(folder, OPEN + DEPLOY + "print(json.dumps({}))")

    def archive(*flags):
        done = completed("sessions", "archive", "d1", *flags, "--home", str(folder), "--json")
        return done.returncode, json.loads(done.stdout)

    state = (folder / "state.db").read_bytes()
    code, doc = archive()
    assert code == 1 and doc["error"].startswith("Session d1 has not ended (it is live): a running Hermes may")
    assert doc["error"].endswith("Nothing was archived: end it in Hermes first, or add --force to archive it anyway.")
    assert (folder / "state.db").read_bytes() == state
    assert archive("--force") == (0, {"success": True, "session_id": "d1", "archived": True, "changed": 1})
    seen = hermes.json(
        folder,
        OPEN
        + """
db.append_message("d1", "assistant", "deploying")
after_append = db.get_session("d1")["archived"]
db.end_session("d1", "compression")
db.create_session("d2", "cli", model="m", parent_session_id="d1")
db.append_message("d2", "user", "continue")
print(json.dumps({"after_append": after_append, "d2": db.get_session("d2")["archived"],
                  "hermes_lists": [r["id"] for r in db.list_sessions_rich(limit=50)]}))
""",
    )
    assert seen == {"after_append": 1, "d2": 0, "hermes_lists": []}  # what the warning says
    home = open_home(folder, read_only=True)
    try:
        assert [chain.ids for chain in home.archive.root_chains()] == [("d1", "d2")]  # listed again here
        assert home.archive.live_archive_warning("d1").startswith("Session d1's conversation holds d2, which")
        assert home.archive.live_archive_warning("d2") is not None
    finally:
        home.close()
    code, doc = archive()  # d2 is live now: refused again
    assert code == 1 and "holds d2, which has not ended" in doc["error"]
    hermes.json(folder, OPEN + 'db.end_session("d2", "user_exit")\nprint(json.dumps({}))')
    assert archive() == (0, {"success": True, "session_id": "d1", "archived": True, "changed": 1})  # all ended
    assert archive("--undo")[0] == 0  # (restoring is never refused)
