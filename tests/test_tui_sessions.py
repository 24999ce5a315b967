"""The Sessions screen: lazy lineage tree, search as you type (CJK too), transcript markers, jumps."""

from __future__ import annotations

import itertools
import random
import re
import sqlite3
import subprocess
import threading

import pytest
from rich.cells import cell_len
from textual import events
from textual.widgets import ContentSwitcher, Input

from engine import open_home
from engine.db import in_app_words
from engine.tools import ToolContext
from tests.archive_support import copy_database, restore_in_another_process, retitle_in_another_process
from tests.hermes_support import workbench_cmd
from tests.lock_support import holding_write_lock
from tests.screens_seed import (
    BRANCH,
    DELEGATE,
    GARDEN,
    GARDEN_2,
    HOSTILE_TITLE,
    TOKYO,
    open_mode,
    screen_text,
    seed_sessions,
)
from tests.tui_support import (
    LateFirstAnswer,
    cursor_on,
    footer_keys,
    footer_labels,
    landed_on,
    make_app,
    settle,
    wait_for,
)
from widgets.entry_list import EntryList
from widgets.lineage_tree import LineageTree, MoreRoots, SessionNode
from widgets.search_results import STALE_AFTER, Hit, SearchResults, excerpt, header_prompt, hit_prompt
from widgets.transcript import NO_ENTRIES, NO_ENTRY, NO_WRITES, Transcript, TranscriptItem, render_item
from workbench.app import ScreenCommands
from workbench.messages import JumpToMessage
from workbench.screens.base import clauses
from workbench.screens.help import HelpScreen
from workbench.screens.sessions import ROOTS_PAGE, SEARCH_LIMIT, SearchDone, SessionsScreen, list_hit

pytestmark = pytest.mark.anyio


async def open_sessions(pilot) -> SessionsScreen:
    return await open_mode(pilot, "2", SessionsScreen)


async def searched(pilot, query: str) -> tuple[SessionsScreen, SearchResults]:
    """Sessions opened and ``query`` typed in its search box, once its answer is in."""
    screen = await open_sessions(pilot)
    await pilot.press("slash", *query)
    results = screen.query_one(SearchResults)
    await wait_for(pilot, lambda: results.query == query, what="the search's answer")
    return screen, results


async def on_the_garden_row(pilot):
    """Open Sessions with the cursor on the garden chain's row, the tree focused: (screen, tree, row)."""
    screen = await open_sessions(pilot)
    tree = screen.query_one(LineageTree)
    garden = tree.node_for(GARDEN)
    tree.focus()
    tree.move_cursor(garden)
    return screen, tree, garden


async def show_first_segment(pilot, screen: SessionsScreen) -> None:
    """The garden chain opens at its latest segment (#2): step back to #1 with ``[``."""
    await wait_for(pilot, lambda: screen.shown_session == GARDEN_2, what="the chain's latest segment")
    screen.query_one(LineageTree).focus()
    await pilot.press("left_square_bracket")
    await wait_for(
        pilot, lambda: screen.shown_session == GARDEN and screen.query_one(Transcript).items, what="garden transcript"
    )


async def test_a_e_and_d_are_dimmed_until_the_transcript_shows_a_session(home, tmp_path):
    """a Archive, e Rename and D Delete showed with no session in the transcript, each then saying
    "Pick a session first"."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_sessions(pilot)  # an empty home: no session to show
        assert await footer_keys(pilot, "a", "e", "D") == {"a": False, "e": False, "D": False}
        await pilot.press("a", "e", "D")
        await settle(pilot)
        assert screen.query_one("#status").display is False and app.screen is screen
        seed_sessions(home)
        screen.reload()
        await wait_for(pilot, lambda: screen.shown_session is not None, what="a session shown")
        assert await footer_keys(pilot, "a", "e", "D") == {"a": True, "e": True, "D": True}


async def test_tree_lists_roots_and_loads_children_only_on_expand(home, tmp_path):
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_sessions(pilot)
        tree = screen.query_one(LineageTree)
        roots = [node.data.id for node in tree.root.children]
        assert roots == [GARDEN, TOKYO]  # newest first; children are not roots
        garden = tree.node_for(GARDEN)
        assert garden.allow_expand and not garden.children and not tree.is_loaded(GARDEN)
        tree.move_cursor(garden)
        await pilot.press("space")
        await wait_for(pilot, lambda: tree.is_loaded(GARDEN), what="children loaded")
        assert garden.data.ids == (GARDEN, GARDEN_2)  # the compression continuation is a segment of the row
        kinds = {node.data.id: node.data.kind for node in garden.children}
        assert kinds == {BRANCH: "branch", DELEGATE: "delegate"}
        assert garden.data.wrote and not tree.node_for(BRANCH).data.wrote
        assert not tree.node_for(BRANCH).allow_expand
        # titles are literal: markup-looking text shows as typed (cut to leave room for the segments and size)
        assert HOSTILE_TITLE[:15] + "…  #1 → #2  5 msgs · live│" in screen_text(app)


def tree_rows(tree: LineageTree) -> list[tuple[tuple[str, ...], SessionNode]]:
    """(ids of the row above, or () for a root) and the data of every session row in the loaded tree."""
    out, stack = [], list(tree.root.children)
    while stack:
        node = stack.pop()
        if isinstance(node.data, SessionNode):
            above = node.parent.data.ids if isinstance(node.parent.data, SessionNode) else ()
            out.append((above, node.data))
            stack.extend(node.children)
    return out


def tree_relations(tree: LineageTree, archive) -> list[tuple[str, str]]:
    """(parent id or "", session id) of every link the tree shows: a chain's consecutive segments, and each
    row's first segment under the row of its parent's chain."""
    out = []
    for above, row in tree_rows(tree):
        out += itertools.pairwise(row.ids)
        parent = archive.get_session(row.id).parent_session_id
        assert (parent in above) if above else parent is None, (row.id, parent, above)
        out.append((parent or "", row.id))
    return sorted(out)


async def expand_everything(pilot, tree: LineageTree) -> None:
    while pending := [
        n for _, row in tree_rows(tree) if (n := tree.node_for(row.id)).allow_expand and not tree.is_loaded(row.id)
    ]:
        for node in pending:
            node.expand()
        await wait_for(pilot, lambda: all(tree.is_loaded(n.data.id) for n in pending), what="children")


async def test_every_parent_relation_appears_exactly_once_with_its_kind(home, tmp_path):
    seed_sessions(home)
    archive = home.archive
    archive.create_session("20261129_130000_gggggg", source="cli", parent_session_id=GARDEN_2, title="third part")
    archive.create_session(
        "20261129_140000_hhhhhh",
        source="subagent",
        parent_session_id=BRANCH,
        title="helper",
        model_config={"_delegate_from": BRANCH},
    )
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_sessions(pilot)
        tree = screen.query_one(LineageTree)
        await expand_everything(pilot, tree)

        def stored() -> list[tuple[str, str]]:
            rows = archive.conn().execute("SELECT parent_session_id, id FROM sessions").fetchall()
            return sorted((row[0] or "", row[1]) for row in rows)

        assert tree_relations(tree, archive) == stored()
        kinds = {row.id: row.kind for _, row in tree_rows(tree)}
        assert GARDEN_2 not in kinds and kinds[BRANCH] == "branch" and kinds[DELEGATE] == "delegate"
        assert kinds["20261129_140000_hhhhhh"] == "delegate" and kinds[TOKYO] == "root"
        assert kinds["20261129_130000_gggggg"] == "child"  # GARDEN_2 was not compressed: its child nests
        text = screen_text(app)
        # wrote memory: marked before the title, never cut off; a long title is cut to leave room for the segments
        # and the size and state (the date gives way first, in this 44-cell pane)
        assert "● ✎ " + HOSTILE_TITLE[:15] + "…  #1 → #2  5 msgs · live│" in text and "⑂ Garden branch · branch" in text
        assert "↳ Look up compani… · delegate  0 msgs · live" in text and "◦ third part · child" in text
        # a child arriving live under a loaded parent, then a reload: still exactly once each
        archive.create_session("20261129_150000_iiiiii", source="cli", parent_session_id=TOKYO, title="Tokyo 2")
        await wait_for(
            pilot,
            lambda: tree.node_for("20261129_150000_iiiiii") is not None or tree.node_for(TOKYO).allow_expand,
            what="the live child",
        )
        await expand_everything(pilot, tree)
        assert tree_relations(tree, archive) == stored()
        await pilot.press("ctrl+r")
        await settle(pilot)
        await expand_everything(pilot, tree)
        assert tree_relations(tree, archive) == stored()


async def test_roots_come_a_page_at_a_time(home, tmp_path):
    seed_sessions(home, extra_roots=ROOTS_PAGE + 5)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        tree = screen.query_one(LineageTree)
        assert tree.root_count == ROOTS_PAGE
        more = tree.root.children[-1]
        assert isinstance(more.data, MoreRoots)
        tree.move_cursor(more)
        await pilot.press("enter")
        await wait_for(pilot, lambda: tree.root_count == ROOTS_PAGE + 7, what="second page")
        assert not any(isinstance(node.data, MoreRoots) for node in tree.root.children)


async def test_paged_roots_stay_whole_as_roots_come_and_go(home, tmp_path):
    """Pages were read by offset, and only the newest page was read again on a change: a root archived
    on the first page made the next page skip one, and a branch among the older roots paged in, left a
    root when its parent was archived, showed only after a reload."""
    seed_sessions(home, extra_roots=ROOTS_PAGE + 5)
    archive, clock = home.archive, home.clock
    clock.set(clock.now() - 86400 * 30)  # older than every seeded root: on the second page
    archive.create_session("oldparent", source="cli", title="Old parent")
    archive.end_session("oldparent", "branched")
    archive.create_session(
        "oldbranch",
        source="cli",
        title="Old branch",
        parent_session_id="oldparent",
        model_config={"_branched_from": "oldparent"},
    )
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        tree = screen.query_one(LineageTree)
        await wait_for(pilot, lambda: tree.root_count == ROOTS_PAGE, what="the first page")
        total = len(archive.root_ids())
        archive.set_archived("20261101_000003_ffffff")  # one of the first page goes, no branch left a root
        await wait_for(pilot, lambda: tree.root_count == ROOTS_PAGE - 1, what="the archived root gone")
        tree.move_cursor(tree.root.children[-1])
        await pilot.press("enter")
        await wait_for(pilot, lambda: not tree.more_roots, what="the second page")
        assert sorted(tree.root_ids) == sorted(archive.root_ids()) and tree.root_count == total - 1
        archive.set_archived("oldparent")
        await wait_for(pilot, lambda: "oldbranch" in tree.root_ids, what="the old branch listed as a root")
        assert "oldparent" not in tree.root_ids and tree.root_ids[-1] == "oldbranch"


async def test_rows_paged_in_follow_what_another_process_changes(home, tmp_path):
    """Below the newest page, only missing roots were added on a change: a root there that Hermes
    renamed or wrote to kept its old title and count until a reload."""
    import sqlite3

    seed_sessions(home, extra_roots=ROOTS_PAGE + 5)
    old = "20261101_000203_ffffff"
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        tree = screen.query_one(LineageTree)
        await wait_for(pilot, lambda: tree.root_count == ROOTS_PAGE, what="the first page")
        tree.move_cursor(tree.root.children[-1])
        await pilot.press("enter")
        await wait_for(pilot, lambda: tree.node_for(old) is not None, what="the second page")
        with sqlite3.connect(home.state_db_path) as conn:  # Hermes, in its own process
            conn.execute("UPDATE sessions SET title = 'Ancient tomato plan', message_count = 7 WHERE id = ?", (old,))
        row = tree.node_for(old)
        await wait_for(pilot, lambda: row.data.title == "Ancient tomato plan", timeout=10, what="the row renamed")
        assert row.data.message_count == 7 and "Ancient tomato plan" in str(row.label)


async def test_a_prune_by_another_process_leaves_no_more_row_and_counts_the_roots_left(home, tmp_path):
    """Hermes pruned most sessions while the tree was open: the title still read `28+ roots` over a
    "more" row whose enter only dropped the `+`, though every root left was listed."""
    import sqlite3

    seed_sessions(home, extra_roots=ROOTS_PAGE + 60)
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        tree = screen.query_one(LineageTree)
        await wait_for(pilot, lambda: tree.more_roots, what="the first page")
        with sqlite3.connect(home.state_db_path) as conn:  # Hermes's prune_sessions, in its own process
            conn.execute("DELETE FROM sessions WHERE id LIKE '20261101_%' AND substr(id, 10, 6) >= '000026'")
        left = home.archive.root_ids()
        await wait_for(
            pilot,
            lambda: tree.border_title == f"{len(left)} roots · by start",
            timeout=10,
            what="count",  # (80 columns)
        )
        assert tree.root_ids == left and not tree.more_roots


async def test_a_state_db_restored_from_a_backup_is_what_the_tree_shows_next(home, tmp_path):
    """A backup renamed over state.db while the screen is open: the watcher's reload reads the restored file
    (the app's pool threads' connections stayed on the old one, so the tree listed it for good)."""
    seed_sessions(home)
    backup, kept = tmp_path / "backup.db", home.archive.root_ids()
    copy_database(home.state_db_path, backup)
    home.archive.create_session("20261203_090000_abcdef", source="cli", title="Written after the backup")
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        tree = screen.query_one(LineageTree)
        await wait_for(pilot, lambda: "20261203_090000_abcdef" in tree.root_ids, what="the session after the backup")
        restore_in_another_process(backup, home.state_db_path)
        await wait_for(
            pilot, lambda: "20261203_090000_abcdef" not in tree.root_ids, timeout=10, what="the restored archive"
        )
        assert tree.root_ids == kept


async def test_search_as_you_type_finds_cjk_and_highlights_the_match(home, tmp_path):
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        await pilot.press("slash")
        await pilot.press(*"ラーメン")
        results = screen.query_one(SearchResults)
        await wait_for(pilot, lambda: results.hits, what="search hits")
        assert screen.query_one(ContentSwitcher).current == "sessions-results"
        (hit,) = results.hits.values()
        assert hit.session_id == TOKYO and hit.snippet[hit.spans[0][0] : hit.spans[0][1]] == "ラーメン"
        assert hit.why.startswith("CJK bigram index, ")  # how it was found, in words
        assert "ラーメン" in screen_text(app) and "«" not in screen_text(app)  # markers become styling
        # enter opens the hit's session with the matching message under the cursor
        await pilot.press("enter")
        transcript = screen.query_one(Transcript)
        await wait_for(
            pilot,
            lambda: cursor_on(transcript, hit.message_id),
            what="transcript at the hit",
        )
        await pilot.press("escape")
        await settle(pilot)
        assert screen.query_one(Input).value == "" and screen.query_one(ContentSwitcher).current == "sessions-tree"


async def test_esc_says_what_it_does_clear_a_search_or_back_to_the_tree(home, tmp_path):
    """esc read Clear with no search to clear (tmux, the Hermes home at 80x24): on the tree, where it did
    nothing, and from the transcript, where it goes back to the tree. It reads Clear while a search is
    set, Tree away from the tree, and is not offered on the tree."""
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_sessions(pilot)
        assert await footer_labels(pilot, "escape") == {}
        screen.transcript.focus()
        assert await footer_labels(pilot, "escape") == {"escape": "Tree"}
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.focused, LineageTree)
        await pilot.press("slash", *"tomatoes")
        await wait_for(pilot, lambda: screen.query_one(SearchResults).hits, what="search hits")
        await pilot.press("enter")  # (the results take the focus, the hit's session opens)
        assert await footer_labels(pilot, "escape") == {"escape": "Clear"}
        await pilot.press("escape")
        await settle(pilot)
        assert screen.search_box.value == "" and isinstance(app.focused, LineageTree)
        assert await footer_labels(pilot, "escape") == {}


async def test_help_lists_the_keys_of_the_panes_sessions_shows(home, tmp_path):
    """Sessions' help listed / esc a e D only: the lineage tree's [ ] l h, and while searching the
    results' l h, were in no help at all (they live on the panes, not the screen)."""
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)

        async def listed() -> dict[str, str]:
            await pilot.press("f1")  # (? would be typed in the search box)
            await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
            keys = dict(app.screen.sections[0].keys)
            await pilot.press("escape")
            await settle(pilot)
            return keys

        keys = await listed()
        for shown, said in (
            ("right, l", "Expand"),
            ("left, h", "Collapse"),
            ("[", "Earlier segment"),
            ("]", "Later segment"),
            ("/", "Search"),
            ("D", "Delete"),
            ("ctrl+r", "Reload"),
        ):
            assert keys.get(shown) == said, (shown, keys)
        await pilot.press("slash", *"tomatoes")
        await wait_for(pilot, lambda: screen.query_one(SearchResults).hits, what="search hits")
        keys = await listed()
        assert keys.get("right, l") == "Expand hits" and keys.get("left, h") == "Fold hits"
        assert "[" not in keys  # (the tree is not shown while the results are)


async def test_a_transcript_whose_session_a_new_search_leaves_out_says_so(home, tmp_path):
    """A trial: after opening a hit, a new query's hits were all of other sessions while the transcript
    kept the one opened, with nothing saying it was not among them (previews follow the cursor in the
    list, not each refresh while typing)."""
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sessions(pilot)
        await pilot.press("slash", *"ラーメン")
        results = screen.query_one(SearchResults)
        await wait_for(pilot, lambda: results.hits, what="search hits")
        await pilot.press("enter")
        transcript = screen.query_one(Transcript)
        await wait_for(pilot, lambda: screen.wanted_session == TOKYO and transcript.items, what="the hit opened")
        assert "not a hit: enter opens" not in str(transcript.border_subtitle)
        await pilot.press("slash", *["backspace"] * 4, *"tomatoes")
        await wait_for(pilot, lambda: "not a hit: enter opens" in str(transcript.border_subtitle), what="the note")
        await pilot.press("enter")  # the highlighted hit opens: the note goes
        await wait_for(pilot, lambda: screen.wanted_session != TOKYO, what="the hit's session")
        assert "not a hit: enter opens" not in str(transcript.border_subtitle)


@pytest.mark.parametrize("archived", [False, True])
async def test_esc_after_opening_a_hit_keeps_it_shown_with_the_cursor_on_its_row(home, tmp_path, archived):
    """esc out of a search showed the row under the cursor again, not the hit just opened, as if the place
    was lost: the tree's cursor now goes to the hit's row. A hit the tree does not list (a conversation
    archived whole) cannot be revealed: the transcript then goes back to the cursor's row, never left on a
    session the cursor is not on."""
    seed_sessions(home)
    if archived:
        home.archive.set_archived(TOKYO, True)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sessions(pilot)
        tree = screen.query_one(LineageTree)
        await wait_for(pilot, lambda: screen.shown_session is not None, what="the newest session shown")
        before = screen.shown_session
        assert before != TOKYO
        await pilot.press("slash", *"ラーメン")
        await wait_for(pilot, lambda: screen.query_one(SearchResults).hits, what="search hits")
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.shown_session == TOKYO, what="the hit opened")
        await pilot.press("escape")
        expected = before if archived else TOKYO
        await wait_for(
            pilot,
            lambda: (
                screen.query_one(ContentSwitcher).current == "sessions-tree"
                and screen.shown_session == expected
                and tree.cursor_node is tree.node_for(expected)
            ),
            what="the transcript and the cursor on one session",
        )
        await settle(pilot)
        assert screen.shown_session == tree.picked(tree.cursor_node.data) == expected


async def test_a_search_with_no_hits_does_not_say_the_transcript_is_not_a_hit(home, tmp_path):
    """A query matching nothing put "not a hit: enter opens the highlighted one" on the transcript's
    border, though no hit was there to open; the results' own line says nothing matched."""
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        transcript = screen.query_one(Transcript)
        await wait_for(pilot, lambda: screen.shown_session is not None and transcript.items, what="a session shown")
        await pilot.press("slash", *"zzyzxqq")
        results = screen.query_one(SearchResults)
        await wait_for(pilot, lambda: results.query == "zzyzxqq" and not results.hits, what="no hits")
        await settle(pilot)
        assert "not a hit" not in str(transcript.border_subtitle) and "not a hit" not in screen_text(app)


async def test_full_width_letters_find_their_half_width_words(home, tmp_path):
    """``ＰＤＦ report`` found nothing, though the last word typed (a prefix) found ``PDF`` alone; now each
    full-width word finds its half-width one, as `sessions search` does (``Token.fts``)."""
    home.archive.create_session("pdf", source="cli", title="Reports")
    home.archive.append_messages(
        "pdf", [{"role": "user", "content": "The PDF report is ready"}, {"role": "user", "content": "pdfplumber"}]
    )
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        _, results = await searched(pilot, "ＰＤＦ report")
        (hit,) = results.hits.values()
        assert [hit.snippet[start:end] for start, end in hit.spans] == ["PDF", "report"]


@pytest.mark.parametrize("size", [(120, 40), (80, 24), (60, 20)])
async def test_the_results_title_says_how_they_were_found_in_words_it_shows_whole(home, tmp_path, size):
    """A user trial at 120 columns: the title read `2 sessions · via CJK bigram index, best m…`, cut by
    its border inside a word. It drops how the results are ordered, then the index, until what is left
    fits; the count of sessions always stays."""
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=size) as pilot:
        _, results = await searched(pilot, "ラーメン")
        count, why = "1 session", f" · via {results.why}"
        forms = [count + why[: len(why) - len(cut)] for cut in ["", ", best match", why]]
        fits = [form for form in forms if cell_len(form) <= results.size.width - 6]
        assert results.why == "CJK bigram index, best match" and fits, (results.why, results.size)
        assert results.border_title == fits[0], (results.border_title, size)


async def test_a_not_with_nothing_before_it_is_said_over_the_results_not_searched_for(home, tmp_path):
    """Typing ``NOT tomatoes`` listed the tomato sessions; now nothing is searched and the row says why."""
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen, results = await searched(pilot, "NOT tomatoes")
        assert results.hits == {} and results.unsearched and "'NOT tomatoes'" in results.unsearched
        await settle(pilot)
        text = screen_text(app)  # wrapped to the list's width (it never wraps its rows)
        assert "Nothing was searched. Left" in text and "│ out 'NOT tomatoes': NOT only" in text
        assert "No messages match" not in text  # (nothing was searched: no answer that nothing matches)
        assert results.border_title == "nothing searched"
        await pilot.press(*" AND plant")  # NOT b AND c: c without b
        await wait_for(pilot, lambda: results.query == "NOT tomatoes AND plant", what="the search's answer")
        assert results.hits == {} and results.note is None and results.unsearched is None  # (plant has tomatoes too)
        await pilot.press("ctrl+u", *"plant")
        await wait_for(pilot, lambda: results.query == "plant" and results.hits, what="search hits")
        assert results.note is None and "Left out" not in screen_text(app)


async def test_punctuation_alone_says_nothing_was_searched_as_the_cli_does(home, tmp_path):
    """``(((`` said "No messages match '((('" while the CLI said nothing was searched, and why."""
    seed_sessions(home)
    said = home.archive.nothing_searched("(((", prefix=True)
    assert said and said.startswith("Nothing was searched: the query holds no word")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen, results = await searched(pilot, "(((")
        await settle(pilot)
        text = screen_text(app)  # wrapped to the list's width
        assert results.unsearched == said and "Nothing was searched: the query" in text
        assert "No messages match" not in text and results.hits == {}
        assert results.border_title == "nothing searched"
        await pilot.press("ctrl+u", *"tomatoes")  # a word again: searched, and its hits listed
        await wait_for(pilot, lambda: results.query == "tomatoes" and results.hits, what="search hits")
        assert "Nothing was searched" not in screen_text(app) and results.border_title != "nothing searched"


async def test_cjk_punctuation_alone_says_nothing_was_searched_as_ascii_punctuation_does(home, tmp_path):
    """``(`` said punctuation is not searched, but ``「`` said "No messages match '「'"."""
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        await pilot.press("slash")
        screen.query_one("#sessions-search", Input).value = "「"  # (as an input method enters it)
        results = screen.query_one(SearchResults)
        await wait_for(pilot, lambda: results.query == "「", what="the search's answer")
        await settle(pilot)
        assert results.unsearched == home.archive.nothing_searched("(", prefix=True)
        assert "No messages match" not in screen_text(app) and results.border_title == "nothing searched"
        screen.query_one("#sessions-search", Input).value = "「 東京"  # a CJK word beside it is searched as before
        await wait_for(pilot, lambda: results.query == "「 東京" and results.hits, what="its hits")
        assert results.unsearched is None
        hits = dict(results.hits)
        screen.query_one("#sessions-search", Input).value = "「東京"  # typed against it: found nothing, taken literally
        await wait_for(pilot, lambda: results.query == "「東京", what="its answer")
        await settle(pilot)
        assert results.hits == hits and results.unsearched is None


async def test_half_width_katakana_find_the_full_width_text(home, tmp_path):
    """``ﾗｰﾒﾝ`` said "No messages match" (and to retype it full-width): the messages hold ラーメン."""
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        await pilot.press("slash")
        screen.query_one("#sessions-search", Input).value = "ﾗｰﾒﾝ"
        results = screen.query_one(SearchResults)
        await wait_for(pilot, lambda: results.query == "ﾗｰﾒﾝ" and results.hits, what="its hits")
        assert {hit.session_id for hit in results.best.values()} == {TOKYO}
        await wait_for(  # (the hits are drawn a refresh after they land: the screen said the last answer)
            pilot,
            lambda: "No messages match" not in screen_text(app) and "ラーメン" in screen_text(app),
            what="the hits on the screen",
        )


async def test_a_column_filter_typed_as_in_fts5_is_said_over_the_results(home, tmp_path):
    """``source:cli`` searched the words source and cli with no word of it on the screen (``role:`` is
    a filter now: test_role_and_sort_words_filter_the_search_as_the_clis_flags_do)."""
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_sessions(pilot)
        await pilot.press("slash", *"source:cli tomatoes")
        results = screen.query_one(SearchResults)
        await wait_for(pilot, lambda: results.query == "source:cli tomatoes", what="the search's answer")
        assert results.note and results.note.startswith("'source:' is no filter here")
        await settle(pilot)
        text = screen_text(app)  # wrapped to the list's width
        assert "'source:' is no filter here: 'source' was" in text and "No messages match 'source:cli" in text
        await pilot.press("ctrl+u", *"tomatoes")
        await wait_for(pilot, lambda: results.query == "tomatoes" and results.hits, what="search hits")
        assert results.note is None


async def test_a_prefix_searched_by_its_commonest_words_says_so_and_counts_with_a_plus(home, tmp_path):
    """The title said "likeliest words only (type on to narrow)" past what a column shows, and
    the count read as exact."""
    from engine.archive.search import PARTIAL_NOTE
    from tests.test_archive_search import PA_WORDS

    home.archive.create_session("s", title="Words")
    home.archive.append_messages("s", [{"role": "user", "content": f"a {word} here"} for word in PA_WORDS])
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        await pilot.press("slash", "p", "a")
        results = screen.query_one(SearchResults)
        await wait_for(pilot, lambda: results.query == "pa" and results.counts, what="hits and counts")
        assert results.note == PARTIAL_NOTE and "likeliest" not in str(results.border_title)
        await settle(pilot)
        text = screen_text(app)
        assert "Only the commonest words" in text and "16+ matches" in text
        await pilot.press("t")
        await wait_for(pilot, lambda: results.query == "pat" and results.counts, what="hits and counts")
        await settle(pilot)
        assert results.note is None and "1 match" in screen_text(app) and "Only the" not in screen_text(app)


async def search_for(pilot, text: str) -> tuple[SessionsScreen, SearchResults]:
    """Open the Sessions screen and type ``text`` into the search box until its hits are shown."""
    screen, results = await searched(pilot, text)
    await wait_for(pilot, lambda: results.query == text and results.hits, what="search hits")
    return screen, results


async def test_typing_in_the_search_box_relays_out_nothing_and_long_text_scrolls(home, tmp_path, monkeypatch):
    """Each key repaints the box alone (Input's virtual_size is a layout reactive in Textual),
    and text longer than the box still scrolls so that the cursor's end is shown."""
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        await pilot.press("slash", "r")
        await settle(pilot)
        layouts = []
        monkeypatch.setattr(type(screen), "_refresh_layout", lambda self, *a, **k: layouts.append(a))
        box = screen.query_one("#sessions-search", Input)
        await pilot.press(
            *"amen and a much longer query than the box can hold, typed on and on past its edge to the end"
        )
        await settle(pilot)
        assert layouts == []
        assert box.value.endswith("past its edge to the end") and box.scroll_x > 0
        box_row = screen_text(app).splitlines()[2]  # inside the box's top and bottom borders
        assert "past its edge to the end" in box_row and "ramen and" not in box_row


async def test_a_stale_search_result_is_never_shown(home, tmp_path):
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen, results = await search_for(pilot, "tomatoes")
        screen.post_message(SearchDone("toma", []))  # an older, slower query finishing late
        await settle(pilot)
        assert [h.root_id for h in results.hits.values()] == [GARDEN]


async def test_transcript_marks_the_message_that_wrote_memory(home, tmp_path):
    ids = seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_sessions(pilot)
        transcript = screen.query_one(Transcript)
        await show_first_segment(pilot, screen)
        marked = [item.id for item in transcript.items if item.writes]
        assert marked == [ids["call"]]
        assert transcript.items[1].writes == ("memory add (user): Grows tomatoes",)
        transcript.focus()
        await pilot.press("home", "w")
        assert transcript.current.id == ids["call"]
        text = screen_text(app)
        assert "✎ wrote" in text and "[bold]tomatoes[/]" in text and '"target": "user"' in text


async def test_the_write_mark_stays_whole_on_its_header_line_at_80_columns(home, tmp_path):
    """At 80 columns the Sessions transcript's header ``assistant  2026-… #N  ✎ wrote`` wrapped, leaving
    ``✎`` at the end of one line and ``wrote`` alone on the next: the time drops its year there."""
    ids = seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        transcript = screen.query_one(Transcript)
        await show_first_segment(pilot, screen)
        transcript.focus()
        await pilot.press("home", "w")
        await settle(pilot)
        [header] = [line for line in screen_text(app).splitlines() if f"#{ids['call']}" in line]
        assert "✎ wrote" in header, header
        assert not any(line.strip(" │▌") == "wrote" for line in screen_text(app).splitlines())
    async with make_app(home, tmp_path).run_test(size=(120, 40)) as pilot:  # with room: the whole time
        screen = await open_sessions(pilot)
        await show_first_segment(pilot, screen)
        [header] = [line for line in screen_text(pilot.app).splitlines() if f"#{ids['call']}" in line]
        assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  #\d+  ✎ wrote", header), header


async def test_w_is_dimmed_in_a_session_where_no_message_wrote_anything_and_says_why(home, tmp_path):
    """w Next write showed on every transcript, and in one with no write it said so in a warning; dimmed,
    w and m then did nothing at all when pressed (user trial: the keys seemed broken): they say why."""
    home.archive.create_session("s-plain", title="Just talk")
    home.archive.append_messages(
        "s-plain", [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    )
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        transcript = screen.query_one(Transcript)
        await wait_for(pilot, lambda: screen.shown_session == "s-plain" and transcript.items, what="the transcript")
        transcript.focus()
        assert await footer_keys(pilot, "w", "m") == {"w": False, "m": False}
        await pilot.press("w", "m")
        await settle(pilot)
        said = [n.message for n in app._notifications]
        assert said == [NO_WRITES, NO_ENTRIES] and transcript.cursor == len(transcript.items) - 1
        assert await footer_keys(pilot, "w", "m") == {"w": False, "m": False}  # (still dimmed)


async def test_m_on_a_marked_message_opens_the_memory_entry_it_wrote(home, tmp_path):
    seed_sessions(home)  # the call message journaled "Grows tomatoes" into USER
    home.memory.add("user", "Likes mornings")
    home.memory.add("user", "Grows tomatoes")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        transcript = screen.query_one(Transcript)
        await show_first_segment(pilot, screen)
        transcript.focus()
        await pilot.press("home")  # the question wrote nothing: m is dimmed, and says why
        assert await footer_keys(pilot, "w", "m") == {"w": True, "m": False}
        await pilot.press("m")
        await settle(pilot)
        assert app.current_mode == "sessions" and [n.message for n in app._notifications] == [NO_ENTRY]
        await pilot.press("w")
        assert await footer_keys(pilot, "w", "m") == {"w": True, "m": True}
        await pilot.press("m")  # the marked message: to its entry
        await wait_for(pilot, lambda: app.current_mode == "memory", what="the Memory screen")
        live = app.screen.query_one("#live-list", EntryList)
        await wait_for(
            pilot,
            lambda: live.current is not None and live.current.text == "Grows tomatoes" and app.screen.focused is live,
            what="the entry selected",
        )
        assert app.screen.target == "user"
        await wait_for(
            pilot,
            lambda: app.screen.detail is not None and app.screen.detail.entry == "Grows tomatoes",
            what="its history and origin",
        )
        home.memory.remove("user", "Grows tomatoes")  # gone since: the screen says so instead
        app.action_goto("sessions")
        await settle(pilot)
        await pilot.press("m")
        await wait_for(pilot, lambda: "no longer in USER" in screen_text(app), what="the explanation")


async def test_jump_to_message_from_another_screen_reveals_the_child_session(home, tmp_path):
    ids = seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.current_mode == "memory"
        app.post_message(JumpToMessage(GARDEN_2, ids["later"]))
        await landed_on(pilot, ids["later"], "jumped message under the cursor")
        screen = app.screen
        tree = screen.query_one(LineageTree)
        await wait_for(
            pilot,
            lambda: tree.cursor_node is not None and tree.cursor_node.data.id == GARDEN,
            what="its chain's row under the cursor",
        )
        assert tree.picked(tree.cursor_node.data) == GARDEN_2  # the segment the jump landed in


async def test_a_live_refresh_after_a_jump_keeps_the_jumped_message(home, tmp_path):
    """Follow is on, but the reader was sent to an early message: a refresh of that session (here an
    agent's memory write tied to a later message) must not move the cursor to the newest one."""
    ids = seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.post_message(JumpToMessage(GARDEN, ids["question"]))
        transcript = await landed_on(pilot, ids["question"], "jumped message under the cursor")
        assert transcript.follow
        before = transcript.items[-1]
        ctx = ToolContext(actor="agent", session_id=GARDEN, message_id=ids["answer"])
        assert home.memory.add("user", "Waters them every morning", ctx)["success"]
        await wait_for(pilot, lambda: transcript.items[-1] != before, what="the refreshed transcript")
        await settle(pilot)
        assert transcript.current.id == ids["question"]


async def test_a_transcript_load_that_answers_after_a_newer_one_is_dropped(home, tmp_path, monkeypatch):
    """A live refresh read the session before its newest message, then answered after the load
    that saw it: the older answer must not take the message away again."""
    from workbench.screens import sessions as sessions_module

    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        transcript = screen.query_one(Transcript)
        await show_first_segment(pilot, screen)
        late = LateFirstAnswer(monkeypatch, sessions_module, "session_items")
        screen.load_transcript(GARDEN, None)
        await wait_for(pilot, late.started.is_set, what="the first load reading")
        home.archive.append_message(GARDEN, "user", "one more thing")
        await wait_for(pilot, lambda: transcript.items[-1].content == "one more thing", what="the newer load")
        await late.release(pilot, "transcript")  # the older load answers last, without the new message
        assert transcript.items[-1].content == "one more thing"


@pytest.mark.parametrize(("key", "asked"), [("x", "Export session"), ("D", "Delete session")])
async def test_a_key_pressed_while_the_picked_sessions_transcript_loads_acts_on_that_session(
    home, tmp_path, monkeypatch, key, asked
):
    """Seen on a Hermes home: the cursor moved to another session and x pressed at once asked to export the
    session shown before (its transcript still up while the picked one loaded), the question then sitting
    over the picked session's transcript; D asked to delete the wrong one the same way."""
    from workbench.screens import sessions as sessions_module

    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen, tree, _ = await on_the_garden_row(pilot)
        await wait_for(pilot, lambda: screen.shown_session == GARDEN_2, what="the garden chain shown")
        late = LateFirstAnswer(monkeypatch, sessions_module, "session_items")
        tree.move_cursor(tree.node_for(TOKYO))
        await wait_for(pilot, late.started.is_set, what="the Tokyo transcript loading")
        assert screen.shown_session == GARDEN_2  # (still up while the picked one loads)
        await pilot.press(key)
        await wait_for(pilot, lambda: asked in screen_text(app), what="the question")
        assert f"{asked} {TOKYO} (東京の旅)" in screen_text(app)
        await late.release(pilot, "transcript")
        await pilot.press("escape" if key == "x" else "n")
        await settle(pilot)
        assert home.archive.get_session(TOKYO) is not None and home.archive.get_session(GARDEN_2) is not None


async def test_a_key_pressed_while_the_first_picked_transcript_loads_acts_on_it(home, tmp_path, monkeypatch):
    """With no transcript up yet, x on the session just picked said "Pick a session first", though a
    row was picked: only a session shown counted."""
    from workbench.screens import sessions as sessions_module

    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        late = LateFirstAnswer(monkeypatch, sessions_module, "session_items")
        await pilot.press("2")  # (not open_sessions, which waits for the transcript)
        await wait_for(pilot, late.started.is_set, what="the first transcript loading")
        screen = app.screen
        picked = screen.wanted_session
        assert screen.shown_session is None and picked is not None
        screen.query_one(LineageTree).focus()
        await pilot.press("x")
        await wait_for(pilot, lambda: "Export session" in screen_text(app), what="the question")
        assert f"Export session {picked}" in screen_text(app)
        await late.release(pilot, "transcript")
        await pilot.press("escape")


async def test_as_label_while_the_picked_sessions_transcript_loads_is_the_picked_ones(
    home, clock, tmp_path, monkeypatch
):
    """From an archived search hit (a: Unarchive) down to a listed one, the footer's a still read Unarchive
    while the listed one's transcript loaded, and a then said "is listed already" of the session it acted
    on: the label is the picked row's, as the key is."""
    from workbench.screens import sessions as sessions_module

    ids = ["20261130_150000_00000a", "20261130_150100_00000b"]
    for n, sid in enumerate(ids):
        clock.advance(60)
        home.archive.create_session(sid, source="cli", title=f"Session {n}")
        home.archive.append_message(sid, "user", f"kettle talk number {n}")
    home.archive.set_archived(ids[1])
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        screen, results = await searched(pilot, "kettle")
        await pilot.press("down")
        await wait_for(pilot, lambda: screen.shown_session == ids[1], what="the archived hit shown")
        assert await footer_labels(pilot, "a") == {"a": "Unarchive"}
        late = LateFirstAnswer(monkeypatch, sessions_module, "session_items")
        await pilot.press("down")
        await wait_for(pilot, late.started.is_set, what="the listed hit's transcript loading")
        assert screen.shown_session == ids[1] and results.current.session_id == ids[0]
        assert await footer_labels(pilot, "a", settled=False) == {"a": "Archive"}
        await pilot.press("a")  # (it has not ended: asked first)
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "ConfirmDialog", what="the archive question")
        assert app.screen.question == f"Archive session {ids[0]} (Session 0)?"
        await pilot.press("n")
        await late.release(pilot, "transcript")
        assert await footer_labels(pilot, "a") == {"a": "Archive"}
        # a jump from another screen says nothing of the conversation: a waits for the transcript's read
        late = LateFirstAnswer(monkeypatch, sessions_module, "session_items")
        screen.post_message(JumpToMessage(ids[1], None))
        await wait_for(pilot, late.started.is_set, what="the jumped-to transcript loading")
        assert await footer_labels(pilot, "a", settled=False) == {}
        await pilot.press("a")

        def said() -> list[str]:
            return [n.message for n in app._notifications if n.message.startswith("Wait for the session's")]

        await wait_for(pilot, said, what="the notice")
        assert said() == ["Wait for the session's transcript: a archives it, or lists it again if it is archived."]
        await late.release(pilot, "transcript")
        assert await footer_labels(pilot, "a") == {"a": "Unarchive"} and home.archive.get_session(ids[1]).archived


async def test_as_label_on_a_conversation_archived_in_part_says_it_archives_the_rest(
    home, clock, tmp_path, monkeypatch
):
    """Hermes archived the first segment of a three-segment chain only. Its search hit (marked archived)
    made a read Unarchive while its transcript loaded, and a then listed that segment again; once loaded,
    a read Archive on a transcript titled "archived", and archived the two segments still listed. Now a
    waits for the read on an archived hit, and on every segment of that chain reads Archive rest."""
    from workbench.screens import sessions as sessions_module

    ids = ["20261130_150000_00000a", "20261130_150100_00000b", "20261130_150200_00000c"]
    for n, sid in enumerate(ids):
        clock.advance(60)
        home.archive.create_session(
            sid, source="cli", title="Kettle chat" if n == 0 else None, parent_session_id=ids[n - 1] if n else None
        )
        home.archive.append_message(sid, "user", f"kettle talk {'one two three'.split()[n]}")
        home.archive.end_session(sid, "compression" if n < 2 else "user_exit")
    home.archive.set_archived(ids[0], only=[ids[0]])  # as Hermes's own archive of one session leaves it
    app = make_app(home, tmp_path)
    async with app.run_test(size=(130, 30)) as pilot:
        screen, results = await searched(pilot, "one")
        await settle(pilot)
        late = LateFirstAnswer(monkeypatch, sessions_module, "session_items")
        await pilot.press("down")
        await wait_for(pilot, late.started.is_set, what="the archived hit's transcript loading")
        assert results.current.archived and await footer_labels(pilot, "a", settled=False) == {}
        await late.release(pilot, "transcript")
        assert str(screen.transcript.border_title).startswith("Transcript · archived · ")
        assert await footer_labels(pilot, "a") == {"a": "Archive rest"}
        for word, sid in (("two", ids[1]), ("three", ids[2])):  # the segments still listed say it too
            await pilot.press("escape", "slash", *word, "down")
            await wait_for(pilot, lambda sid=sid: screen.shown_session == sid, what=f"segment {word}")
            assert await footer_labels(pilot, "a") == {"a": "Archive rest"}
        await pilot.press("a")
        await wait_for(pilot, lambda: all(home.archive.get_session(s).archived for s in ids), what="the rest archived")
        assert await footer_labels(pilot, "a") == {"a": "Unarchive"}


async def test_a_growing_session_keeps_the_readers_place(home, tmp_path):
    ids = seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        transcript = screen.query_one(Transcript)
        await show_first_segment(pilot, screen)
        transcript.focus()
        await pilot.press("home", "f")  # reading the first message, follow off
        home.archive.append_message(GARDEN, "user", "one more thing")
        await wait_for(pilot, lambda: len(transcript.items) == 5, what="new message arrived")
        assert transcript.current.id == ids["question"] and transcript.unseen == 1
        await pilot.press("f")  # follow on: to the newest
        assert transcript.is_vertical_scroll_end and transcript.unseen == 0


async def test_a_jump_to_a_message_stays_on_it_as_the_session_grows(home, tmp_path):
    """g on a Timeline row of a session Hermes was writing opened its message, and Hermes's next message moved
    the cursor to the newest: the whole session fitted in view, which following took for reading its end."""
    ids = seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 50)) as pilot:
        screen = await open_sessions(pilot)
        transcript = screen.query_one(Transcript)
        screen.post_message(JumpToMessage(GARDEN, ids["question"]))
        await wait_for(pilot, lambda: cursor_on(transcript, ids["question"]), what="the jump")
        assert transcript.follow and transcript.is_vertical_scroll_end  # (all four messages in view)
        home.archive.append_message(GARDEN, "user", "one more thing")
        await wait_for(pilot, lambda: len(transcript.items) == 5, what="new message arrived")
        assert transcript.current.id == ids["question"] and transcript.unseen == 1


async def test_a_new_session_appears_live(home, tmp_path):
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        tree = screen.query_one(LineageTree)
        before = tree.root_count
        assert str(tree.border_title) == f"{before} roots · by start"  # (the pane's name gives way at 80 columns)
        home.archive.create_session("20261130_130000_999999", source="cli", title="Fresh one")
        await wait_for(pilot, lambda: tree.node_for("20261130_130000_999999") is not None, what="new root")
        assert tree.root.children[0].data.id == "20261130_130000_999999"
        assert str(tree.border_title) == f"{before + 1} roots · by start"  # the count keeps up with the rows
        await pilot.resize_terminal(120, 30)
        await wait_for(pilot, lambda: str(tree.border_title) == f"Lineage · {before + 1} roots · by start", what="name")


async def test_sessions_written_by_another_process_show_up(home, tmp_path):
    seed_sessions(home)
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        other = open_home(home.root)  # another writer (a real Hermes, say): its events never reach this app
        other.archive.create_session("20261130_140000_0a0a0a", source="cli", title="Written elsewhere")
        other.close()
        tree = screen.query_one(LineageTree)
        await wait_for(
            pilot,
            lambda: tree.node_for("20261130_140000_0a0a0a") is not None,
            timeout=10,
            what="root from another process",
        )


async def test_sessions_deleted_or_archived_leave_the_tree_live(home, tmp_path):
    """The tree only ever added rows: a session deleted or archived while it was open stayed, with
    its old message count, and a deleted one's orphaned child stayed nested under it."""
    ids = ["20261130_150000_00000a", "20261130_150100_00000b", "20261130_150200_00000c"]
    for n, sid in enumerate(ids):
        home.archive.create_session(sid, source="cli", title=f"Session {n}")
        home.archive.append_message(sid, "user", f"hello {n}")
    home.archive.create_session("20261130_150300_0000cc", source="cli", title="Child", parent_session_id=ids[2])
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sessions(pilot)
        tree = screen.query_one(LineageTree)
        await wait_for(pilot, lambda: all(tree.node_for(i) is not None for i in ids), what="the roots")
        before = tree.root_count
        assert home.archive.delete_session(ids[0], live=True)  # this process: its event names the session
        await wait_for(pilot, lambda: tree.node_for(ids[0]) is None, what="the deleted row to go")
        other = open_home(home.root)  # another process (a Hermes, say): its changes reach us as a file change
        other.archive.set_archived(ids[1])
        other.archive.delete_session(ids[2], live=True)
        other.close()
        await wait_for(
            pilot, lambda: tree.node_for(ids[1]) is None and tree.node_for(ids[2]) is None, timeout=10, what="rows"
        )
        await wait_for(pilot, lambda: tree.node_for("20261130_150300_0000cc") is not None, timeout=10, what="orphan")
        orphan = tree.node_for("20261130_150300_0000cc")
        assert orphan.parent is tree.root and tree.root_count == before - 2
        assert str(tree.border_title).endswith(f" {before - 2} root{'s' * (before - 2 != 1)} · by start")


async def test_an_archived_conversation_hermes_continues_comes_back(home, tmp_path):
    """A segment compressed out of an archived chain stayed hidden: the chain's head was archived."""
    head, middle, tip = "20261130_150000_0000p1", "20261130_150100_0000p2", "20261130_150200_0000p3"
    home.archive.create_session(head, source="cli", title="Long talk")
    home.archive.end_session(head, "compression")
    home.archive.create_session(middle, source="cli", parent_session_id=head)
    home.archive.create_session("20261130_150500_0000zz", source="cli", title="Other")
    home.archive.set_archived(head)
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sessions(pilot)
        tree = screen.query_one(LineageTree)
        await wait_for(pilot, lambda: tree.root_count == 1, what="the listed root")
        assert tree.node_for(head) is None
        other = open_home(home.root)  # Hermes, compressing the conversation it still runs
        other.archive.end_session(middle, "compression")
        other.archive.create_session(tip, source="cli", parent_session_id=middle)
        other.close()
        await wait_for(pilot, lambda: tree.node_for(tip) is not None, timeout=10, what="the continued chain")
        assert tree.node_for(tip).data.ids == (head, middle, tip) and tree.root_count == 2


def branched(home, clock, parent: str, *branches: str) -> None:
    """A titled session ended by /branch, and its branches a minute apart, each titled by its id's end."""
    home.archive.create_session(parent, source="cli", title=f"Plan {parent[-2:]}")
    home.archive.end_session(parent, "branched")
    for sid in branches:
        clock.advance(60)
        home.archive.create_session(sid, source="cli", title=f"Branch {sid[-2:]}", parent_session_id=parent)


async def with_branches_open(pilot, parent: str, child: str) -> tuple[SessionsScreen, LineageTree]:
    """Sessions, with the cursor on ``parent``'s row and the row opened until ``child`` shows beneath it."""
    screen = await open_sessions(pilot)
    tree = screen.query_one(LineageTree)
    await wait_for(pilot, lambda: tree.node_for(parent) is not None, what="the parent")
    tree.move_cursor(tree.node_for(parent))
    await pilot.press("right")
    await wait_for(pilot, lambda: tree.node_for(child) is not None, what="the branches")
    return screen, tree


async def test_archiving_a_parent_keeps_its_branch_in_the_tree_and_an_archived_branch_leaves(home, clock, tmp_path):
    """A branch went with its archived parent and never came back, while a branch archived alone
    stayed beneath its parent."""
    parent, branch, other = "20261130_150000_0000p1", "20261130_150100_0000b1", "20261130_150200_0000b2"
    branched(home, clock, parent, branch, other)
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(100, 30)) as pilot:
        screen, tree = await with_branches_open(pilot, parent, other)
        other_process = open_home(home.root)
        other_process.archive.set_archived(other)
        await wait_for(pilot, lambda: tree.node_for(other) is None, timeout=10, what="the archived branch to go")
        assert tree.node_for(branch) is not None
        tree.move_cursor(tree.node_for(parent))
        await wait_for(pilot, lambda: screen.shown_session == parent, what="the parent shown")
        await pilot.press("a")
        await wait_for(pilot, lambda: tree.node_for(parent) is None, what="the parent archived")
        await wait_for(pilot, lambda: tree.node_for(branch) is not None, what="its branch, a root now")
        assert tree.node_for(branch).parent is tree.root and tree.node_for(other) is None
        other_process.archive.set_archived(parent, False)
        other_process.close()
        await wait_for(pilot, lambda: tree.node_for(parent) is not None, timeout=10, what="the parent back")
        await wait_for(pilot, lambda: tree.node_for(branch) is None, timeout=10, what="the branch beneath it")
        assert tree.root_count == 1


async def test_a_rename_against_a_title_hermes_changed_meanwhile_asks_again(home, tmp_path):
    """Hermes's new title was overwritten without a word: the box still showed the old one."""
    sid = "20261130_150000_00000a"
    home.archive.create_session(sid, source="cli", title="Cups talk")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sessions(pilot)
        await wait_for(pilot, lambda: screen.shown_session == sid, what="the session shown")
        await pilot.press("e")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "LineDialog", what="the rename box")
        other = open_home(home.root)
        other.archive.set_title(sid, "Hermes title")  # Hermes, while the box is open
        other.close()
        app.screen.query_one(Input).value = "Mine"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "was renamed meanwhile" in screen_text(app), what="the question again")
        assert home.archive.get_session(sid).title == "Hermes title"
        assert app.screen.query_one(Input).value == "Mine"
        assert f"Rename session {sid} (Hermes title)" in screen_text(app)
        await pilot.press("enter")  # asked against the title it has now: saved
        await wait_for(pilot, lambda: home.archive.get_session(sid).title == "Mine", what="renamed")


async def test_a_rename_while_state_db_is_busy_keeps_the_box_and_names_who_to_wait_for(home, tmp_path, monkeypatch):
    """The busy error advised WORKBENCH_BUSY_TIMEOUT, which a running TUI cannot take, and the rename
    box was gone with the draft: it stays, saying to try again once the holder (named) finishes."""
    sid = "20261130_150000_00000b"
    home.archive.create_session(sid, source="cli", title="Cups talk")
    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "0.2")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_sessions(pilot)
        await wait_for(pilot, lambda: screen.shown_session == sid, what="the session shown")
        await pilot.press("e")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "LineDialog", what="the rename box")
        holder = holding_write_lock(home.state_db_path)
        try:
            app.screen.query_one(Input).value = "Tea talk"
            await pilot.press("enter")
            await wait_for(pilot, lambda: "is busy" in screen_text(app), what="the busy error")
            await settle(pilot)
            box = app.screen
            assert box.__class__.__name__ == "LineDialog" and box.query_one(Input).value == "Tea talk"
            said = str(box.query_one("#line-error").render())
            assert f"Try again once process {holder.pid} (" in said and "WORKBENCH_BUSY_TIMEOUT" not in said
            assert home.archive.get_session(sid).title == "Cups talk"
        finally:
            holder.kill()
            holder.wait()
        await pilot.press("enter")  # the holder is done: the same draft is saved
        await wait_for(pilot, lambda: home.archive.get_session(sid).title == "Tea talk", what="renamed")


def test_the_cli_keeps_the_busy_timeout_advice(home, monkeypatch):
    """The CLI's words still say how to wait longer (a new command reads WORKBENCH_BUSY_TIMEOUT)."""
    from engine.db import DatabaseBusyError

    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "0.2")  # (before state.db's connection, which reads it)
    home.archive.create_session("s_busy", source="cli", title="Cups talk")
    holder = holding_write_lock(home.state_db_path)
    try:
        with pytest.raises(DatabaseBusyError) as raised:
            home.archive.set_title("s_busy", "Tea talk")
    finally:
        holder.kill()
        holder.wait()
    assert "set WORKBENCH_BUSY_TIMEOUT (seconds) to wait longer" in raised.value.message
    assert f"Try again once process {holder.pid} (" in raised.value.in_app
    assert "WORKBENCH_BUSY_TIMEOUT" not in raised.value.in_app
    # carried as plain text (a decision's or a tool's ``error``), its words become the app's the same
    # way, alone or joined as clauses with others (each loses its full stop there)
    assert in_app_words(raised.value.message) == raised.value.in_app
    joined = clauses([raised.value.message, "x: other words", raised.value.message])
    assert in_app_words(joined) == clauses([raised.value.in_app, "x: other words", raised.value.in_app])
    assert in_app_words("Nothing busy here.") == "Nothing busy here."


async def test_a_on_an_archived_segment_of_a_continued_conversation_archives_it(home, clock, tmp_path):
    """a toggled the flag of the segment shown: on the archived first segment of a conversation Hermes
    continued, it listed the whole chain again instead of hiding it; the status named the segment."""
    head, middle, tip = "20261130_150000_0000m1", "20261130_150100_0000m2", "20261130_150200_0000m3"
    home.archive.create_session(head, source="cli")
    home.archive.append_message(head, "user", "会議の議事録をまとめて")
    home.archive.end_session(head, "compression")
    clock.advance(60)
    home.archive.create_session(middle, source="cli", parent_session_id=head)
    home.archive.append_message(middle, "user", "続き")
    home.archive.set_archived(head)
    home.archive.end_session(middle, "compression")  # Hermes goes on
    clock.advance(60)
    home.archive.create_session(tip, source="cli", parent_session_id=middle)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sessions(pilot)
        tree = screen.query_one(LineageTree)
        await wait_for(pilot, lambda: tree.node_for(head) is not None, what="the continued conversation")
        tree.move_cursor(tree.node_for(head))
        await pilot.press("left_square_bracket", "left_square_bracket")
        await wait_for(pilot, lambda: screen.shown_session == head, what="its archived first segment shown")
        await pilot.press("a")  # (its tip has not ended: asked first)
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "ConfirmDialog", what="the archive question")
        assert app.screen.detail.startswith(f"Session {head}'s conversation holds {tip}, which has not ended")
        await pilot.press("y")
        await wait_for(pilot, lambda: home.archive.get_session(tip).archived, what="the conversation archived")
        assert home.archive.get_session(head).archived and home.archive.get_session(middle).archived
        await wait_for(
            pilot,
            lambda: "Archived “会議の議事録をまとめて”, 1 session of its conversation: hidden" in screen_text(app),
            what="the chain named as its row is",
        )


async def with_branches_archived_elsewhere(pilot, home, parent: str, *branches: str):
    """Sessions with ``parent``'s branches open, then another process archiving them all: the screen,
    its tree and that other process's home, once the rows and the parent's arrow are gone."""
    screen, tree = await with_branches_open(pilot, parent, branches[-1])
    other = open_home(home.root)
    for sid in branches:
        other.archive.set_archived(sid)
    await wait_for(
        pilot, lambda: all(tree.node_for(sid) is None for sid in branches), timeout=10, what="the branches gone"
    )
    await wait_for(pilot, lambda: not tree.node_for(parent).allow_expand, timeout=10, what="no arrow left")
    return screen, tree, other


async def test_children_another_process_lists_again_come_back_and_the_cursor_follows_a_branch(home, clock, tmp_path):
    """A branch unarchived by Hermes never came back under its open parent, whose arrow stayed after
    its last child went; and the cursor left a branch that became a root when its parent was archived."""
    parent, first, second = "20261130_150000_0000q0", "20261130_150100_0000q1", "20261130_150200_0000q2"
    branched(home, clock, parent, first, second)
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(100, 30)) as pilot:
        screen, tree, other = await with_branches_archived_elsewhere(pilot, home, parent, first, second)
        for sid in (first, second):
            other.archive.set_archived(sid, False)
        await wait_for(
            pilot,
            lambda: tree.node_for(second) is not None and tree.node_for(first) is not None,
            timeout=10,
            what="both back",
        )
        assert tree.node_for(second).parent is tree.node_for(parent) and tree.node_for(parent).allow_expand
        await settle(pilot)  # (the tree numbers its lines as it draws: a row added since has none yet)
        tree.move_cursor(tree.node_for(second))
        await wait_for(pilot, lambda: screen.shown_session == second, what="the branch shown")
        other.archive.set_archived(parent)
        other.close()
        await wait_for(
            pilot,
            lambda: tree.node_for(second) is not None and tree.node_for(second).parent is tree.root,
            timeout=10,
            what="the branch a root",
        )
        await wait_for(pilot, lambda: tree.cursor_node is tree.node_for(second), what="the cursor with it")
        await wait_for(pilot, lambda: screen.shown_session == second, what="its transcript still shown")


async def test_an_open_rows_children_and_arrow_are_read_in_one_snapshot(home, clock, tmp_path, monkeypatch):
    """Another process listed a parent's branches again between the refresh's read of its children
    (none) and of its row (two): the row got its arrow back but lost its loaded mark, so the
    branches never came back under it (seen as a flaky CI failure under load)."""
    parent, first, second = "20261130_150000_0000r0", "20261130_150100_0000r1", "20261130_150200_0000r2"
    branched(home, clock, parent, first, second)
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(100, 30)) as pilot:
        _screen, tree, other = await with_branches_archived_elsewhere(pilot, home, parent, first, second)
        read_roots = home.archive.root_chains

        def listed_again_meanwhile(*args, **kwargs):
            monkeypatch.setattr(home.archive, "root_chains", read_roots)  # (once)
            for sid in (first, second):
                other.archive.set_archived(sid, False)
            return read_roots(*args, **kwargs)

        monkeypatch.setattr(home.archive, "root_chains", listed_again_meanwhile)
        other.archive.set_title(parent, "Plan r0, renamed")  # (the change that starts the refresh)
        await wait_for(
            pilot,
            lambda: tree.node_for(first) is not None and tree.node_for(second) is not None,
            timeout=10,
            what="both back",
        )
        assert tree.node_for(first).parent is tree.node_for(parent)
        other.close()


async def test_an_empty_home_says_what_to_do(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        assert screen.query_one(LineageTree).root_count == 0
        assert "No sessions in this home yet" in screen_text(app)
        await pilot.press("slash", *"anything")
        results = screen.query_one(SearchResults)
        await wait_for(pilot, lambda: results.query == "anything", what="empty search answered")
        assert "No messages match" in screen_text(app)


def test_guillemets_in_stored_text_stay_text_and_only_the_match_is_styled(home):
    """The archive's snippet marks matches with « »; text that holds « » of its own (the demo
    agent writes them) once showed as ``««发票»导出»``, its own marks taken for matches."""
    session = home.archive.create_session(source="cli")
    home.archive.append_message(session.id, "user", "导出 «发票» 和 «invoice» 的 totals")
    [hit] = home.archive.search("发票")
    row = list_hit(hit)
    assert row.snippet == "导出 «发票» 和 «invoice» 的 totals"
    assert [row.snippet[a:b] for a, b in row.spans] == ["发票"]
    assert hit.snippet == "导出 ««发票»» 和 «invoice» 的 totals"  # the CLI and tools keep the marked form
    [hit] = home.archive.search("invoice")
    assert [hit.excerpt[a:b] for a, b in hit.marks] == ["invoice"]


def test_hostile_text_renders_literally():
    item = TranscriptItem(
        "tool",
        "[bold]x[/] <memory-context>\x1b[31m [@click=app.quit]y[/]",
        tool_name="[red]t[/]",
        tool_calls=({"function": {"name": "memory", "arguments": "{not json"}},),
    )
    content = render_item(item)
    assert "[bold]x[/] <memory-context>␛[31m [@click=app.quit]y[/]" in content.plain  # as on every screen
    assert "[red]t[/]" in content.plain and "{not json" in content.plain
    assert not any("click" in str(span.style) for span in content.spans)  # no action smuggled in


async def test_tree_keys_expand_collapse_and_scroll_the_children_into_view(home, tmp_path):
    seed_sessions(home, extra_roots=30)
    for number in range(30):  # every old root gets two compression children
        root = f"20261101_{number:06d}_ffffff"
        for child in (1, 2):
            home.archive.create_session(
                f"20261102_{number:06d}_{child}fffff",
                source="cli",
                parent_session_id=root,
                title=f"Old session {number} #{child + 1}",
            )
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen, tree, garden = await on_the_garden_row(pilot)
        await pilot.press("l")
        await wait_for(pilot, lambda: tree.is_loaded(GARDEN) and garden.is_expanded, what="expanded")
        await pilot.press("right")  # on an expanded row: into its first child
        await settle(pilot)
        assert tree.cursor_node.parent is garden
        await pilot.press("left")  # a leaf: back to its parent
        await settle(pilot)
        assert tree.cursor_node is garden
        await pilot.press("h")  # an expanded row: collapse
        await settle(pilot)
        assert not garden.is_expanded and tree.cursor_node is garden
        last_visible = tree.scroll_offset.y + tree.scrollable_content_region.height - 1
        bottom = next(node for node in tree.root.children if node.line == last_visible)
        tree.move_cursor(bottom)
        await settle(pilot)
        await pilot.press("right")
        await wait_for(pilot, lambda: bottom.children and tree.is_loaded(bottom.data.id), what="children loaded")
        await settle(pilot)
        top, height = tree.scroll_offset.y, tree.scrollable_content_region.height
        assert all(top <= child.line < top + height for child in bottom.children)
        assert top <= bottom.line < top + height


GARDEN_3 = "20261129_150000_a3a3a3"
BRANCH_2 = "20261129_160000_c2c2c2"


def compress(home, parent: str, child: str) -> int:
    """What a compression does to the archive: end the parent, continue in a child with the next ``#N`` title."""
    archive = home.archive
    archive.end_session(parent, "compression")
    title = archive.next_lineage_title(archive.get_session(parent).title or "Garden plans")
    archive.create_session(child, source="cli", parent_session_id=parent, title=title)
    return archive.append_message(child, "user", f"carry on in {child}")


def underlined(label) -> list[str]:
    """The segment numbers a row label underlines (the one the transcript shows)."""
    return [label.plain[span.start : span.end] for span in label.spans if "underline" in str(span.style)]


async def test_a_compression_chain_is_one_row_that_opens_its_latest_segment(home, tmp_path):
    seed_sessions(home)
    compress(home, GARDEN_2, GARDEN_3)
    compress(home, BRANCH, BRANCH_2)  # a compressed branch: a chain of its own, nested under the garden row
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_sessions(pilot)
        tree = screen.query_one(LineageTree)
        garden = tree.node_for(GARDEN)
        assert [node.data.id for node in tree.root.children] == [GARDEN, TOKYO]
        assert garden.data.ids == (GARDEN, GARDEN_2, GARDEN_3) and garden.data.message_count == 6
        assert tree.node_for(GARDEN_3) is garden and "#1 → #2 → #3" in screen_text(app)
        await wait_for(pilot, lambda: screen.shown_session == GARDEN_3, what="the latest segment")
        assert underlined(garden.label) == ["#3"]
        tree.focus()
        await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: screen.shown_session == GARDEN_2, what="the segment before")
        assert underlined(garden.label) == ["#2"] and "Garden plans #2" in str(screen.transcript.border_title)
        await pilot.press("left_square_bracket", "left_square_bracket")  # the first segment, and no further
        await wait_for(pilot, lambda: screen.shown_session == GARDEN, what="the first segment")
        await pilot.press("right_square_bracket", "right_square_bracket", "right_square_bracket")
        await wait_for(pilot, lambda: screen.shown_session == GARDEN_3, what="back to the latest")
        assert underlined(garden.label) == ["#3"]
        await pilot.press("l")
        await wait_for(pilot, lambda: tree.is_loaded(GARDEN), what="the chain's children")
        assert [(n.data.ids, n.data.kind) for n in garden.children] == [
            ((BRANCH, BRANCH_2), "branch"),
            ((DELEGATE,), "delegate"),
        ]
        await pilot.press("l")  # into the first child: the branch chain opens at its latest segment
        await wait_for(pilot, lambda: screen.shown_session == BRANCH_2, what="the branch's latest segment")
        await pilot.press("h")
        await settle(pilot)
        assert tree.cursor_node is garden and screen.shown_session == GARDEN_3  # the row's pick is kept


async def test_a_chain_that_compresses_again_live_stays_one_row(home, tmp_path):
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen, tree, garden = await on_the_garden_row(pilot)
        await pilot.press("l")
        await wait_for(pilot, lambda: tree.is_loaded(GARDEN), what="children")
        home.archive.create_session(  # a delegate of the segment about to be compressed: it must nest
            "20261129_140000_hhhhhh", source="subagent", parent_session_id=GARDEN_2, title="helper"
        )
        compress(home, GARDEN_2, GARDEN_3)  # the running agent compresses again
        await wait_for(pilot, lambda: garden.data.ids == (GARDEN, GARDEN_2, GARDEN_3), what="the chain grown")
        await settle(pilot)
        assert "#1 → #2 → #3" in screen_text(app)
        rows = [node.data.ids for node in garden.children]
        assert rows == [(BRANCH,), (DELEGATE,), ("20261129_140000_hhhhhh",)]
        assert tree.node_for(GARDEN_3) is garden and tree.root_count == 2


@pytest.mark.parametrize("follow", [True, False])
async def test_the_transcript_goes_on_with_a_conversation_compressed_while_it_is_read(home, tmp_path, follow):
    """Hermes compressed the session shown: the row underlined the new segment while the transcript
    stayed on the old one, and ] did nothing. Following (the default), the transcript goes on to the
    new segment; with follow off, the row keeps the segment shown underlined and ] goes on."""
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen, tree, garden = await on_the_garden_row(pilot)
        await wait_for(pilot, lambda: screen.shown_session == GARDEN_2, what="the chain's latest segment")
        screen.transcript.follow = follow
        carried = compress(home, GARDEN_2, GARDEN_3)
        await wait_for(pilot, lambda: garden.data.ids == (GARDEN, GARDEN_2, GARDEN_3), what="the chain grown")
        if follow:
            await wait_for(pilot, lambda: cursor_on(screen.transcript, carried), what="the new segment shown")
            assert underlined(tree._label(garden.data)) == ["#3"] and tree.picked(garden.data) == GARDEN_3
            return
        await settle(pilot)
        assert screen.shown_session == GARDEN_2 and underlined(tree._label(garden.data)) == ["#2"]
        await pilot.press("right_square_bracket")
        await wait_for(pilot, lambda: screen.shown_session == GARDEN_3, what="] to the new segment")


def test_a_label_fits_its_width_cutting_the_title_then_the_date_then_the_size():
    """A title is cut before a word it would split (``Postgres 16 upgra…`` was), an id where it must; it
    keeps half the row (the larger half) before the date, then the size, give way."""
    from widgets.lineage_tree import session_label

    node = SessionNode(id="a", title="Postgres 16 upgrade plan for the ledger", message_count=4, started_at=1795000000)
    assert session_label(node).plain == "● Postgres 16 upgrade plan for the ledger  4 msgs · 2026-11-18"
    assert session_label(node, width=44).plain == "● Postgres 16 upgrade…  4 msgs · 2026-11-18"
    assert session_label(node, width=28).plain == "● Postgres 16…  4 msgs"  # the date gives way first
    assert session_label(node, width=16).plain == "● Postgres 16…"  # then the size; never a word's start
    live = SessionNode(id="a", title="Postgres 16 upgrade plan for the ledger", message_count=4, state="live")
    assert session_label(live, width=29).plain == "● Postgres 16 upgrade…  live"  # half the row for the title
    assert session_label(live, width=37).plain == "● Postgres 16 upgrade…  4 msgs · live"
    short = SessionNode(id="a", title="Flaky rounding test", message_count=2, started_at=1795000000, state="ended")
    assert session_label(short, width=44).plain == "● Flaky rounding test  2 msgs · ended"  # whole, not the date
    assert session_label(live, width=20).plain == "● Postgres 16…  live"  # the state outlasts the size
    cjk = SessionNode(id="b", title="发票导出金额问题和退款流程", message_count=4, started_at=1795000000)
    label = session_label(cjk, width=40)  # wide characters count two cells each: 26 of them whole
    assert label.plain == "● 发票导出金额问题和退款流程  4 msgs" and label.cell_len == 36
    label = session_label(cjk, width=48)
    assert label.plain == "● 发票导出金额问题和退款流…  4 msgs · 2026-11-18" and label.cell_len == 48


def test_the_tree_counts_messages_in_the_words_the_cli_uses():
    """The tree said ``0 msg`` and ``5 msg`` where ``sessions list`` said ``5 msgs``: one rule now
    (``engine.counts``), in both skins."""
    from widgets.lineage_tree import session_label

    for count, said in ((0, "0 msgs"), (1, "1 msg"), (5, "5 msgs")):
        node = SessionNode(id="a", title="Tea", message_count=count, state="ended")
        assert session_label(node).plain == f"● Tea  {said} · ended"


def test_a_long_chain_shows_its_ends_and_the_picked_segment():
    from widgets.lineage_tree import segment_numbers, session_label

    assert segment_numbers(4, 3) == [0, 1, 2, 3]
    assert segment_numbers(30, 29) == [0, None, 28, 29]
    assert segment_numbers(30, 10) == [0, None, 9, 10, 11, None, 29]
    node = SessionNode(id="a", title="Deploy API", segments=tuple(f"s{i}" for i in range(30)))
    label = session_label(node, 10)
    assert "Deploy API  #1 → … → #10 → #11 → #12 → … → #30" in label.plain and underlined(label) == ["#11"]


def option_index(results: SearchResults, session_id: str) -> int:
    """Where a session's row (folded) or header (unfolded) is in the list."""
    return next(i for i, o in enumerate(results.options) if (o.id or "").split(":")[1] == session_id)


async def test_results_count_each_sessions_matches_mark_archived_and_unfold_into_every_hit(home, tmp_path):
    seed_sessions(home)
    archive = home.archive
    tokyo = [archive.append_message(TOKYO, "user", f"tomatoes at the Tokyo market, day {n}") for n in range(3)]
    archive.set_archived(TOKYO)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_sessions(pilot)
        await pilot.press("slash", *"tomatoes")
        results = screen.query_one(SearchResults)
        await wait_for(
            pilot,
            lambda: results.query == "tomatoes" and results.counts.keys() == results.best.keys(),
            timeout=15,
            what="every count",
        )
        # the garden chain's best hit is in its newest segment; its row counts both segments' matches (3 + 1)
        assert results.counts == {GARDEN_2: 4, TOKYO: 3} and results.best[TOKYO].archived
        text = screen_text(app)
        assert (
            "東京の旅  3 matches  · archived" in text and "Garden [bold]plans[/] <memory…  4 matches" in text
        )  # (the chain's)
        assert "via word index" in text  # how the hits were found, said once
        results.focus()
        results.highlighted = option_index(results, TOKYO)
        await pilot.press("right")  # unfold: every hit of the session, newest first
        await wait_for(pilot, lambda: results.expanded.get(TOKYO), timeout=15, what="the session's hits")
        shown = [hit.message_id for hit in results.hits.values() if hit.session_id == TOKYO]
        assert shown == tokyo[::-1]
        assert all(f"day {n}" in screen_text(app) for n in range(3))
        await pilot.press("down", "down", "enter")  # the second hit: opened at its message
        transcript = screen.query_one(Transcript)
        await wait_for(
            pilot,
            lambda: cursor_on(transcript, tokyo[1]),
            what="the transcript at the chosen hit",
        )
        assert screen.focused is transcript
        results.focus()
        await pilot.press("left")  # fold it back, the cursor on the session
        await settle(pilot)
        assert TOKYO not in results.expanded and results.current.session_id == TOKYO
        await pilot.press("enter")  # enter unfolds too
        await wait_for(pilot, lambda: results.expanded.get(TOKYO), what="unfolded by enter")
        await pilot.press("enter")  # on the header: folds
        await settle(pilot)
        assert TOKYO not in results.expanded
        results.highlighted = option_index(results, GARDEN_2)
        await pilot.press("enter")  # the chain's row unfolds into the hits of both its segments, newest first
        await wait_for(pilot, lambda: results.expanded.get(GARDEN_2), what="the chain's hits")
        assert [hit.session_id for hit in results.expanded[GARDEN_2]] == [GARDEN_2, GARDEN, GARDEN, GARDEN]


async def test_old_results_dim_only_when_a_search_is_slow(home, tmp_path):
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        _, results = await search_for(pilot, "tomatoes")
        hits = list(results.best.values())
        results.mark_stale()
        results.show("tomatoes", hits)  # answered at once: never dimmed, even by a timer already running
        await pilot.pause(STALE_AFTER + 0.2)
        assert not results.has_class("-stale")
        results.mark_stale()  # a search that takes long: dimmed until it answers
        await wait_for(pilot, lambda: results.has_class("-stale"), what="dimmed")
        results.show("tomatoes", hits)
        assert not results.has_class("-stale")


def test_an_excerpt_keeps_the_match_and_fits_the_cells():
    text = "x" * 100 + " 数据库迁移 done " + "y" * 100
    hit = Hit("s", "s", None, 1, text, spans=((101, 106),))
    piece, spans = excerpt(hit, 30)
    assert piece.startswith("…") and piece.endswith("…") and cell_len(piece) <= 30
    assert [piece[a:b] for a, b in spans] == ["数据库迁移"]


@pytest.mark.parametrize("seed", range(40))
def test_an_excerpt_shows_its_whole_first_match_whatever_the_widths_around_it(seed):
    """CJK before a match takes two cells a character: the window is found in cells, so the
    match is never cut off behind the ellipsis (it was, for 数据库迁移 after CJK text)."""
    rng = random.Random(seed)
    pieces = ["数据网络", "的监控", "deploy ", "x", "回滚的的问题", "ok "]
    before = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 40)))
    after = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 40)))
    match = rng.choice(["数据库迁移", "timeout", "デプロイ"])
    hit = Hit("s", "s", None, 1, before + match + after, spans=((len(before), len(before) + len(match)),))
    room = rng.randrange(16, 60)
    piece, spans = excerpt(hit, room)
    assert cell_len(piece) <= room
    assert [piece[a:b] for a, b in spans[:1]] == [match]


@pytest.mark.parametrize(
    ("role", "width", "head"),
    [
        ("user", 60, "  user #1234567  "),
        ("user", 28, "  user  "),  # an 80x24 list: the id goes first
        ("assistant", 28, "  assistant  "),
        ("assistant", 24, "  a "),  # then all but the role's initial
        ("\x1b]0;owned\x07" + "x" * 40, 60, "  ␛]0;owned␇xx #1234567  "),  # hostile: shown as symbols, cut
    ],
)
def test_a_narrow_list_shortens_the_head_so_a_cjk_match_stays_whole(role, width, head):
    """An 80x24 list is 28 cells wide, and ``assistant #1234567`` (a 1M archive's ids) once left
    it room for ``…数`` alone: the head gives way before the excerpt falls under 14 cells."""
    hit = Hit("s", "s", None, 1234567, "x" * 60 + "数据库迁移" + "y" * 60, spans=((60, 65),), role=role)
    prompt = hit_prompt(hit, width)
    assert prompt.plain.startswith(head + "…")
    assert cell_len(prompt.plain) <= width
    assert [prompt.plain[span.start : span.end] for span in prompt.spans if span.start >= len(head)] == ["数据库迁移"]


@pytest.mark.parametrize("sessions", [3, 30], ids=["fits", "overflows"])
async def test_the_first_results_are_cut_once_to_the_width_the_list_gets(home, tmp_path, monkeypatch, sessions):
    """Hidden behind the tree, the list has no width; its first rows are cut to the width it is
    about to get (less the scrollbar only when they overflow), not wrapped and then rebuilt."""
    for number in range(sessions):
        home.archive.create_session(f"20261101_{number:06d}_eeeeee", source="cli", title=f"Pump notes {number}")
        home.archive.append_message(f"20261101_{number:06d}_eeeeee", "user", f"the pump station {number} needs oil")
    app = make_app(home, tmp_path)
    widths: list[int] = []
    render = SearchResults._render

    def recording(self, **kwargs):
        render(self, **kwargs)
        widths.append(self._cut_width)

    monkeypatch.setattr(SearchResults, "_render", recording)
    async with app.run_test(size=(80, 24)) as pilot:
        screen, results = await search_for(pilot, "pump")
        await settle(pilot)
        assert len(results.best) == sessions
        assert results.show_vertical_scrollbar == (sessions == 30)
        assert widths and set(widths) == {results.scrollable_content_region.width}


async def test_rows_cut_to_a_wrong_width_while_hidden_are_cut_again_once_shown(home, tmp_path, monkeypatch):
    """The width a hidden list takes is a forecast; the list checks it once it is laid out."""
    for number in range(30):
        home.archive.create_session(f"20261101_{number:06d}_dddddd", source="cli", title=f"Valve notes {number}")
        home.archive.append_message(f"20261101_{number:06d}_dddddd", "user", f"the valve {number} leaks")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen, results = await search_for(pilot, "valve")
        await settle(pilot)
        right = results.scrollable_content_region.width
        await pilot.press("ctrl+u")  # the tree takes the pane back; the list is hidden
        await settle(pilot)
        wrong = right - 7  # a forecast that missed (the terminal resized meanwhile, say)
        monkeypatch.setattr(SearchResults, "_row_width", lambda self: self.scrollable_content_region.width or wrong)
        await pilot.press(*"valve")
        await wait_for(pilot, lambda: results.query == "valve" and results.hits, what="search hits")
        await settle(pilot)
        assert results._cut_width == results.scrollable_content_region.width == right


async def test_an_archive_sqlite_cannot_open_is_explained_where_the_sessions_would_be(home, tmp_path):
    """A search index the old idle merges took past 2,000 levels makes FTS5 refuse the table: the
    screen says so, with the fix, for as long as it is shown (not a toast that fades to an empty tree)."""
    from tests.archive_support import deepen_fts

    home.archive.create_session("s", source="cli")
    home.archive.append_messages("s", [{"role": "user", "content": "deploy notes"}])
    home.close()
    deepen_fts(home.state_db_path, "messages_fts", 2001)
    async with make_app(open_home(home.root), tmp_path).run_test(size=(120, 40)) as pilot:
        await pilot.press("2")
        await settle(pilot)
        transcript = pilot.app.screen.query_one(Transcript)
        await wait_for(pilot, lambda: "cannot be read" in transcript._placeholder, what="the explanation")
        assert "2,001 levels" in transcript._placeholder and "workbench doctor --fix" in transcript._placeholder


def seed_tomatoes_in_tokyo(home) -> None:
    """The seeded sessions, with two messages about tomatoes in the Tokyo one too."""
    seed_sessions(home)
    for n in range(2):
        home.archive.append_message(TOKYO, "user", f"tomatoes at the Tokyo market, day {n}")


async def test_unfolding_or_folding_a_session_below_the_first_keeps_the_cursor_on_it(home, tmp_path):
    """Right on the third session of '東京 OR 上海' unfolded it but put the cursor (and the
    transcript) on the first: the unfolded session's row had a new id the cursor could not follow."""
    seed_tomatoes_in_tokyo(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen, results = await search_for(pilot, "tomatoes")
        await wait_for(pilot, lambda: len(results.best) == 2, what="two sessions")
        second = list(results.best)[1]
        results.focus()
        results.highlighted = option_index(results, second)
        await pilot.press("right")
        await wait_for(pilot, lambda: results.expanded.get(second), timeout=15, what="the session's hits")
        await settle(pilot)
        assert results.current is not None and results.current.session_id == second
        assert results.highlighted_option.id == f"s:{second}"
        await pilot.press("left")
        await settle(pilot)
        assert second not in results.expanded and results.current.session_id == second


async def test_down_in_the_search_box_goes_on_to_the_results_and_previews_the_hit(home, tmp_path):
    """With one hit the cursor is already on it, so arriving in the list must preview it (no key moves it)."""
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        await pilot.press("slash")
        screen.query_one("#sessions-search", Input).value = "ラーメン"
        results = screen.query_one(SearchResults)
        await wait_for(pilot, lambda: results.query == "ラーメン" and results.hits, what="search hits")
        assert list(results.best) == [TOKYO]
        assert screen.wanted_session != TOKYO, "typing alone does not preview"
        await pilot.press("down")
        await settle(pilot)
        assert screen.focused is results and screen.query_one("#sessions-search").value == "ラーメン"
        await wait_for(pilot, lambda: screen.shown_session == TOKYO, what="the hit's session shown")
        transcript = screen.query_one(Transcript)
        await wait_for(pilot, lambda: len(transcript.items) == 2, what="its messages")
        transcript.focus()
        elsewhere = 1 - transcript.cursor  # the other message than the hit's
        transcript.cursor = elsewhere
        results.focus()  # back in the list: the place read in the transcript stays
        await settle(pilot)
        assert transcript.cursor == elsewhere and screen.shown_session == TOKYO


async def test_an_untitled_session_shows_the_start_of_its_first_user_message(home, tmp_path):
    """Hermes titles few sessions: the tree and the transcript showed only the session id."""
    home.archive.create_session("20261201_090000_abc123", source="cli")
    home.archive.append_messages(
        "20261201_090000_abc123",
        [{"role": "user", "content": "Plan the tulip beds"}, {"role": "assistant", "content": "Sure."}],
    )
    app = make_app(home, tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:  # (a pane wide enough for the title, size, state and date)
        screen = await open_sessions(pilot)
        tree = screen.query_one(LineageTree)
        await wait_for(pilot, lambda: tree.root.children, what="the tree")
        assert "“Plan the tulip beds”" in str(tree.root.children[0].label)
        await wait_for(
            pilot,
            lambda: "“Plan the tulip beds”" in str(screen.query_one(Transcript).border_title),
            what="the transcript's title",
        )
        await pilot.press("slash", *"tulip")
        results = screen.query_one(SearchResults)
        await wait_for(pilot, lambda: results.query == "tulip" and results.hits, what="search hits")
        await wait_for(
            pilot,
            lambda: "▸ “Plan the tulip beds”  1 match" in screen_text(app),
            what="the search row named as the tree names it",
        )


async def test_the_transcript_title_follows_a_rename_here_or_by_another_process(home, tmp_path):
    sid = "20261130_150000_00000a"
    home.archive.create_session(sid, source="cli", title="Kettle talk")
    home.archive.append_message(sid, "user", "how long to steep?")
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sessions(pilot)
        transcript = screen.query_one(Transcript)

        def titled(text: str):
            return lambda: str(transcript.border_title) == f"Transcript · {text}"

        await wait_for(pilot, titled("Kettle talk"), what="the transcript")
        home.archive.set_title(sid, "Tea talk")  # this process
        await wait_for(pilot, titled("Tea talk"), what="the title after a rename here")
        other = open_home(home.root)  # another process: its change reaches us as a file change
        other.archive.set_title(sid, "Steeping times")
        other.close()
        await wait_for(pilot, titled("Steeping times"), timeout=10, what="the title after a rename elsewhere")


async def test_at_80_columns_the_footer_lists_a_e_d_unless_the_transcript_fills_it(home, tmp_path):
    """Below 110 columns the footer left out a, e and D whatever had the focus, with 40 columns free
    beside the tree's keys (a user's trial); only the transcript's own keys fill it."""
    home.archive.create_session("s-1", source="cli", title="Kettle talk")
    home.archive.append_message("s-1", "user", "how long to steep?")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        tree = screen.query_one(LineageTree)
        await wait_for(pilot, lambda: tree.node_for("s-1") is not None, what="the row")
        tree.move_cursor(tree.node_for("s-1"))
        await wait_for(pilot, lambda: screen.shown_session == "s-1", what="the session shown")
        tree.focus()
        assert await footer_labels(pilot, "a", "e", "D") == {"a": "Archive", "e": "Rename", "D": "Delete"}
        screen.transcript.focus()
        assert await footer_labels(pilot, "a", "e", "D") == {}


async def test_the_shown_session_is_archived_renamed_and_deleted_from_the_sessions_screen(home, clock, tmp_path):
    """docs/tui.md spoke of sessions archived 'here', but the screen had no key to do it: a, e and D
    act on the session the transcript shows, through the archive's own calls, each a Timeline row. The
    footer's a read Archive on an archived session too, where it lists it again: now Unarchive."""
    ids = ["20261130_150000_00000a", "20261130_150100_00000b", "20261130_150200_00000c"]
    for n, sid in enumerate(ids):
        clock.advance(60)
        home.archive.create_session(sid, source="cli", title=f"Session {n}")
        home.archive.append_message(sid, "user", f"kettle talk number {n}")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:  # (the footer lists a from 110)
        screen = await open_sessions(pilot)
        tree = screen.query_one(LineageTree)
        await wait_for(pilot, lambda: [n.data.id for n in tree.root.children] == ids[::-1], what="the roots")
        tree.move_cursor(tree.node_for(ids[1]))
        await wait_for(pilot, lambda: screen.shown_session == ids[1], what="the middle session shown")
        assert await footer_labels(pilot, "a") == {"a": "Archive"}
        await pilot.press("a")  # it has not ended: asked first, as D asks
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "ConfirmDialog", what="the archive question")
        assert app.screen.question == "Archive session 20261130_150100_00000b (Session 1)?"
        assert app.screen.detail.startswith(f"Session {ids[1]} has not ended (it is live): a running Hermes may")
        assert "is not archived" in app.screen.detail and "Yes archives it anyway" in app.screen.detail
        await pilot.press("y")
        await wait_for(pilot, lambda: tree.node_for(ids[1]) is None, what="the archived row to go")
        assert home.archive.get_session(ids[1]).archived
        assert "Archived session 20261130_150100_00000b (Session 1): hidden from lists" in screen_text(app)
        # the transcript follows the cursor to the row below, so a second key acts on what is under it
        await wait_for(pilot, lambda: screen.shown_session == ids[0], what="the transcript to follow the cursor")
        assert tree.cursor_node is tree.node_for(ids[0])
        await pilot.press("slash", *"number 1", "down")  # search still finds it: open it there, a lists it again
        await wait_for(pilot, lambda: screen.shown_session == ids[1], what="the archived session from search")
        results = screen.query_one(SearchResults)
        assert results.current.archived and str(screen.transcript.border_title).startswith("Transcript · archived · ")
        assert await footer_labels(pilot, "a") == {"a": "Unarchive"}
        offered = [title for title, _, _ in ScreenCommands(screen)._commands() if title.startswith("Sessions: ")]
        assert [t for t in offered if "rchive" in t] == ["Sessions: Unarchive"]  # the palette too, once
        await pilot.press("a")
        await wait_for(pilot, lambda: not home.archive.get_session(ids[1]).archived, what="unarchived")
        await wait_for(pilot, lambda: not results.current.archived, what="the result's mark to follow")
        await wait_for(pilot, lambda: "archived" not in str(screen.transcript.border_title), what="the title's")
        assert await footer_labels(pilot, "a") == {"a": "Archive"}
        await pilot.press("escape")
        await wait_for(pilot, lambda: tree.node_for(ids[1]) is not None, what="the row back")
        assert [n.data.id for n in tree.root.children] == ids[::-1]  # where it started, not on top
        # back in the tree, the transcript is the row's under the cursor again, as the keys act on it
        await wait_for(pilot, lambda: screen.shown_session == tree.picked(tree.cursor_node.data), what="it")
        tree.focus()
        tree.move_cursor(tree.node_for(ids[2]))
        await wait_for(pilot, lambda: screen.shown_session == ids[2], what="the newest session shown")
        await pilot.press("e")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "LineDialog", what="the rename dialog")
        await pilot.press(*["backspace"] * 9, *"Session 0", "enter")  # another session's title: refused
        await wait_for(pilot, lambda: "already in use by session" in screen_text(app), what="the refusal")
        assert app.screen.__class__.__name__ == "LineDialog"  # asked again, the draft kept
        assert app.screen.query_one(Input).value == "Session 0"
        await pilot.press("backspace")  # the refusal was about "Session 0": an edit takes it away
        await wait_for(pilot, lambda: "already in use by session" not in screen_text(app), what="the refusal gone")
        await pilot.press(*["backspace"] * 8, *"Kettle plans", "enter")
        await wait_for(pilot, lambda: home.archive.get_session(ids[2]).title == "Kettle plans", what="renamed")
        await pilot.press("D")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "ConfirmDialog", what="the delete question")
        assert app.screen.question == "Delete session 20261130_150200_00000c (Kettle plans) and its 1 message?"
        live = f"Session {ids[2]} has not ended (it is live): a running Hermes may still be writing to it"
        assert app.screen.detail.startswith(live) and "Yes deletes it anyway." in app.screen.detail
        await pilot.press("n")
        await settle(pilot)
        assert home.archive.get_session(ids[2]) is not None  # no: nothing happens
        home.archive.end_session(ids[2], "user_exit")
        await pilot.press("D")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "ConfirmDialog", what="asked again")
        assert "has not ended" not in app.screen.detail  # ended: asked as before
        home.archive.reopen_session(ids[2])  # Hermes resumes it while the question is open: refused, said
        await pilot.press("y")
        await wait_for(pilot, lambda: "Nothing was deleted:" in screen_text(app), what="the refusal")
        assert f"Session {ids[2]} has not ended (it is live)" in screen_text(app)
        assert home.archive.get_session(ids[2]).message_count == 1
        await pilot.press("D")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "ConfirmDialog", what="asked again")
        assert app.screen.detail.startswith(live)
        # Hermes writes to it while the question is open: yes deleted that message too, never asked about
        home.archive.append_message(ids[2], "assistant", "written while the question was open")
        await pilot.press("y")
        grew = f"Session {ids[2]} has 2 messages now, not the 1 you were asked about"
        await wait_for(pilot, lambda: grew in screen_text(app), what="the refusal")
        assert "Nothing was deleted. D asks again." in screen_text(app)
        assert home.archive.get_session(ids[2]).message_count == 2
        await pilot.press("D")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "ConfirmDialog", what="asked again")
        assert app.screen.question.endswith("and its 2 messages?")
        assert "memory entry came from it" not in app.screen.detail  # (none did)
        await pilot.press("y")
        await wait_for(pilot, lambda: tree.node_for(ids[2]) is None, what="the deleted row to go")
        assert home.archive.get_session(ids[2]) is None
        screen.load_transcript(ids[2], None)  # shown again (a jump to it, say): it says it was deleted
        await wait_for(pilot, lambda: "This session was deleted: state.db holds nothing" in screen_text(app), what="it")
    rows = home.journal.query(subsystem="sessions", limit=6)  # (less the end and reopen made above)
    actions = [(r.action, r.actor) for r in rows if r.actor == "user"]
    assert actions == [("delete", "user"), ("title", "user"), ("unarchive", "user"), ("archive", "user")]


async def test_questions_name_an_untitled_session_by_its_first_message_and_a_chain_segment_as_one(
    home, clock, tmp_path
):
    """The delete question named an untitled session by its id alone, and on a compression chain's row
    did not say that only the segment shown goes (while a archives the whole chain); a control
    character pasted into the rename box was saved as its display symbol."""
    first, second = "20261130_150000_00000a", "20261130_150100_00000b"
    home.archive.create_session(first, source="cli", title="Tea chat")
    home.archive.append_message(first, "user", "How long do I steep oolong?")
    home.archive.end_session(first, "compression")
    clock.advance(60)
    home.archive.create_session(second, source="cli", parent_session_id=first)
    home.archive.append_message(second, "user", "And green tea?")
    home.archive.end_session(second, "cli_close")  # (ended: a asks nothing, as before)
    home.memory.add("memory", "Steeps green tea cooler", ToolContext(actor="agent", session_id=second))
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sessions(pilot)
        await wait_for(pilot, lambda: screen.shown_session == second, what="the chain's latest segment shown")
        assert str(screen.tree.border_title) == "Lineage · 1 root · by start"  # not "1 roots"
        await pilot.press("D")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "ConfirmDialog", what="the delete question")
        assert app.screen.question == f"Delete session {second} (“And green tea?”) and its 1 message?"
        assert "segment 2 of the 2 in its compression chain: only this one goes" in app.screen.detail
        # (memory that came from it stays, naming a message that will be gone: said before yes)
        assert "1 memory entry came from it (“Steeps green tea cooler”): it stays" in app.screen.detail
        await pilot.press("n")
        await pilot.press("e")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "LineDialog", what="the rename dialog")
        assert (
            app.screen.question
            == f"Rename session {second} (“And green tea?”), segment 2 of the 2 in its compression chain "
            "(the tree's row shows the chain as 'Tea chat')"
        )
        app.post_message(events.Paste("Tea\x1b[2J \u202etimes\x07"))
        await wait_for(pilot, lambda: "times" in app.screen.query_one(Input).value, what="the paste")
        assert app.screen.query_one(Input).value == "Tea times"  # the ESC sequence whole, not just its ESC
        await pilot.press("enter")
        await wait_for(pilot, lambda: home.archive.get_session(second).title == "Tea times", what="renamed")
        await pilot.press("a")  # the whole chain goes, and the message says so, by the row's title
        await wait_for(pilot, lambda: home.archive.get_session(first).archived, what="the chain archived")
        await wait_for(
            pilot,
            lambda: "Archived 'Tea chat', 2 sessions of its conversation: hidden" in screen_text(app),
            what="the chain named",
        )


async def delete_the_one_root(pilot) -> tuple[SessionsScreen, LineageTree]:
    """Open Sessions on its one root, ``solo``, and delete it with D then y."""
    screen = await open_sessions(pilot)
    await wait_for(pilot, lambda: screen.shown_session == "solo", what="the root shown")
    await pilot.press("D")
    await wait_for(pilot, lambda: pilot.app.screen.__class__.__name__ == "ConfirmDialog", what="the question")
    await pilot.press("y")
    return screen, screen.query_one(LineageTree)


async def test_deleting_the_only_root_moves_the_cursor_to_its_orphaned_child(home, tmp_path):
    """The tree was left with no cursor and the transcript on the deleted session, so e said the
    session was no longer in state.db."""
    home.archive.create_session("solo", source="cli", title="Parent chat")
    home.archive.append_message("solo", "user", "hello")
    home.archive.create_session("kid", source="cli", title="Branch talk", parent_session_id="solo")
    home.archive.append_message("kid", "user", "a branch")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen, tree = await delete_the_one_root(pilot)
        await wait_for(pilot, lambda: screen.shown_session == "kid", what="the orphan shown")
        assert tree.cursor_node is tree.node_for("kid") and tree.node_for("solo") is None


async def test_after_the_last_row_goes_the_next_new_session_takes_the_cursor(home, tmp_path):
    home.archive.create_session("solo", source="cli", title="Only chat")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen, tree = await delete_the_one_root(pilot)
        await wait_for(pilot, lambda: tree.node_for("solo") is None, what="the row to go")
        await settle(pilot)
        home.archive.create_session("next", source="cli", title="A new chat")  # an agent starts one
        await wait_for(pilot, lambda: screen.shown_session == "next", what="the new session shown")
        assert tree.cursor_node is tree.node_for("next")


def test_a_narrow_results_list_keeps_the_archived_mark_whole():
    """At 80 columns the header of an archived session read '▸ Lisb…  2 matches  · archiv'."""
    hit = Hit("lis1", "lis1", "Lisbon trip planning for the spring", 7, "Lisbon", archived=True)
    narrow = header_prompt(hit, 2, 100, False, 28).plain
    assert narrow.endswith("  2  · archived") and cell_len(narrow) <= 28 and narrow.startswith("▸ Lisbon")
    wide = header_prompt(hit, 2, 100, False, 70).plain
    assert wide == "▸ Lisbon trip planning for the spring  2 matches  · archived"
    assert header_prompt(hit, 2, 100, False, 0).plain == wide  # no width known yet: nothing cut


def test_a_title_and_a_role_from_data_show_their_line_breaks_as_symbols():
    """A tree row's title and a search hit's title and role folded a line break into a space, the one place in
    either skin that hid it: two titles alike but for it read the same. They show it as ⏎, a tab as ⇥."""
    from widgets.lineage_tree import session_label

    node = SessionNode(id="a", title="Deploy plan\nstep two\tnow", message_count=2, started_at=1795000000)
    assert session_label(node).plain == "● Deploy plan⏎step two⇥now  2 msgs · 2026-11-18"
    hit = Hit("s1", "s1", "Deploy plan\nstep two", 7, "plan", role="tool\nuser")
    assert header_prompt(hit, 1, 100, False, 0).plain == "▸ Deploy plan⏎step two  1 match"
    assert hit_prompt(hit, 0).plain == "  tool⏎user #7  plan"


async def test_a_wide_footer_offers_the_session_keys_and_they_work_at_any_width(home, tmp_path):
    """a, e and D were in help only, for want of room at 80 columns, even where the footer had plenty."""
    sid = "20261130_150000_00000a"
    home.archive.create_session(sid, source="cli", title="Kettle talk")
    home.archive.append_message(sid, "user", "the kettle descales monthly")
    home.archive.end_session(sid, "cli_close")  # (ended: a archives at once)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_sessions(pilot)
        await wait_for(pilot, lambda: screen.shown_session == sid, what="the session shown")
        await pilot.press("tab")  # the transcript's keys too: all fit
        await wait_for(pilot, lambda: "a Archive  e Rename  D Delete" in screen_text(app), what="the wide footer")
        assert "w Next write" in screen_text(app)
        await pilot.resize_terminal(80, 24)
        await wait_for(pilot, lambda: "e Rename" not in screen_text(app), what="the keys to leave the footer")
        await pilot.press("e")
        await wait_for(pilot, lambda: "Rename session" in screen_text(app), what="the rename question")
        await pilot.press("escape")
        await pilot.resize_terminal(120, 30)
        await wait_for(pilot, lambda: "e Rename" in screen_text(app), what="the keys back")
        await pilot.press("a")
        await wait_for(pilot, lambda: home.archive.get_session(sid).archived, what="archived from the footer's key")


async def test_a_home_whose_sessions_are_all_archived_says_so_not_that_it_has_none(home, tmp_path):
    for sid in ("s1", "s2"):
        home.archive.create_session(sid, source="cli", title=f"Talk {sid}")
        home.archive.set_archived(sid)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        await wait_for(pilot, lambda: "archived ones are hidden" in screen_text(app), what="the hint")
        assert screen.transcript._placeholder.startswith("The tree lists none of the 2 sessions in this home")


async def test_a_rename_that_fails_for_the_session_says_why_and_does_not_ask_again(home, tmp_path):
    """Any failed rename opened the box again, a session deleted meanwhile included, and the status
    line never said why."""
    home.archive.create_session("solo", source="cli", title="Only chat")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        await wait_for(pilot, lambda: screen.shown_session == "solo", what="the session shown")
        await pilot.press("e")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "LineDialog", what="the rename dialog")
        other = open_home(home.root)  # deleted by another process while the box is open
        other.archive.delete_session("solo", live=True)
        other.close()
        await pilot.press("x", "enter")
        await wait_for(pilot, lambda: "solo" in str(screen.query_one("#status").render()), what="why")
        assert app.screen is screen and "Renamed" not in str(screen.query_one("#status").render())


async def test_a_chain_whose_middle_segment_another_process_deletes_keeps_both_halves(home, clock, tmp_path):
    """Hermes deleted s_f2 of s_f1 → s_f2 → s_f3: the row became s_f3's alone and s_f1 vanished until a
    reload (the row still answered for s_f3, so the orphaned tip took it over)."""
    archive = home.archive
    for n, sid in enumerate(("s_f1", "s_f2", "s_f3")):
        clock.advance(60)
        archive.create_session(
            sid, source="cli", title="Chain F" if n == 0 else None, parent_session_id=None if n == 0 else f"s_f{n}"
        )
        archive.append_message(sid, "user", f"chain f {n}")
        if n < 2:
            archive.end_session(sid, "compression")
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sessions(pilot)
        tree = screen.query_one(LineageTree)
        await wait_for(pilot, lambda: tree.node_for("s_f1") is not None, what="the chain")
        assert tree.node_for("s_f1").data.ids == ("s_f1", "s_f2", "s_f3") and tree.root_count == 1
        other = open_home(home.root)  # another process, as Hermes's delete_session
        other.archive.delete_session("s_f2", live=True)
        other.close()
        await wait_for(
            pilot,
            lambda: tree.node_for("s_f3") is not None and tree.node_for("s_f3") is not tree.node_for("s_f1"),
            timeout=10,
            what="both halves as roots",
        )
        assert tree.node_for("s_f1").data.ids == ("s_f1",) and tree.root_count == 2


@pytest.mark.parametrize("sessions", [SEARCH_LIMIT, SEARCH_LIMIT + 1])
async def test_the_results_say_when_more_rows_matched_than_are_listed(home, tmp_path, sessions):
    """The list holds the 50 best rows: the header said "50 sessions" with more left unsaid."""
    for n in range(sessions):
        home.archive.create_session(f"w{n:03d}", source="cli", title=f"Walrus talk {n}")
        home.archive.append_message(f"w{n:03d}", "user", f"the walrus number {n}")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        _, results = await search_for(pilot, "walrus")
        assert len(results.best) == SEARCH_LIMIT
        more = sessions > SEARCH_LIMIT
        assert str(results.border_title).startswith(f"{SEARCH_LIMIT}{'+' * more} sessions · via")


def walrus_conversation(home):
    """A conversation ``p`` ('Walrus plans') with a delegate ``d``, both mentioning walruses; the archive."""
    archive = home.archive
    archive.create_session("p", source="cli", title="Walrus plans")
    archive.append_message("p", "user", "count the walrus colony")
    archive.create_session("d", source="subagent", parent_session_id="p")
    archive.append_message("d", "user", "subagent: walrus census")
    return archive


async def test_a_delegates_result_is_marked_archived_with_its_conversation(home, tmp_path):
    """Archiving takes the delegates a conversation started, each a result row of its own: their
    rows kept no `· archived` mark until the next search."""
    archive = walrus_conversation(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        _, results = await search_for(pilot, "walrus")
        await wait_for(pilot, lambda: set(results.best) == {"p", "d"}, what="both rows")
        assert not results.best["d"].archived
        archive.set_archived("p")
        await wait_for(pilot, lambda: results.best["d"].archived and results.best["p"].archived, what="both marked")


async def test_archiving_from_a_delegates_row_names_the_conversation_it_takes(home, tmp_path):
    """Archiving a delegate takes the conversation that started it: the status named the delegate."""
    archive = walrus_conversation(home)
    for sid in ("d", "p"):
        archive.end_session(sid, "cli_close")  # (ended: a archives at once)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_sessions(pilot)
        tree = screen.query_one(LineageTree)
        tree.focus()
        tree.move_cursor(tree.node_for("p"))
        await pilot.press("l")
        await wait_for(pilot, lambda: tree.is_loaded("p") and tree.node_for("d") is not None, what="the delegate")
        await settle(pilot)
        tree.move_cursor(tree.node_for("d"))
        await wait_for(pilot, lambda: screen.shown_session == "d", what="the delegate shown")
        await pilot.press("a")
        await wait_for(pilot, lambda: archive.get_session("p").archived, what="the conversation archived")
        await wait_for(
            pilot,
            lambda: "Archived 'Walrus plans', 2 sessions of its conversation" in screen_text(app),
            what="the conversation named",
        )


async def test_search_results_follow_messages_stored_while_they_are_shown(home, tmp_path):
    """Hermes stored two more matching messages while the results were shown: the transcript grew,
    but the row kept saying `2 matches` and a session with a first match never showed."""
    seed_tomatoes_in_tokyo(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen, results = await search_for(pilot, "tomatoes")
        await wait_for(pilot, lambda: results.counts.get(TOKYO) == 2, what="the count")
        results.focus()
        results.highlighted = option_index(results, TOKYO)
        await pilot.press("right")
        await wait_for(pilot, lambda: len(results.expanded.get(TOKYO) or []) == 2, timeout=15, what="its hits")
        assert set(results.best) == {TOKYO, GARDEN_2}
        await pilot.press("down", "down")  # onto Tokyo's older hit: its transcript shows
        older = results.current
        assert older is not None and older.session_id == TOKYO and older.message_id != results.best[TOKYO].message_id
        await wait_for(pilot, lambda: screen.shown_session == TOKYO, what="its transcript")
        home.archive.append_message(TOKYO, "assistant", "more tomatoes arrive on Friday")
        home.archive.append_message(DELEGATE, "user", "the tomatoes need staking")  # its first match
        await wait_for(pilot, lambda: results.counts.get(TOKYO) == 3, timeout=15, what="the new count")
        await wait_for(pilot, lambda: len(results.expanded.get(TOKYO) or []) == 3, timeout=15, what="the new hit")
        await settle(pilot)
        assert set(results.best) == {TOKYO, GARDEN_2, DELEGATE}
        assert results.current is not None and results.current.message_id == older.message_id  # the cursor stayed
        assert screen.shown_session == TOKYO


async def test_a_search_that_matches_nothing_says_so_within_the_pane(home, tmp_path):
    """`No messages match '…'` ran off the pane's edge at 80 columns: the query is cut with … instead."""
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        query = '"foo* OR ( nothing here matches at all in this archive'
        await pilot.press("slash")
        screen.query_one("#sessions-search", Input).value = query
        results = screen.query_one(SearchResults)
        await wait_for(pilot, lambda: results.query == query, what="the empty result")
        await settle(pilot)
        [line] = [line for line in screen_text(app).splitlines() if "No messages match" in line]
        assert "…" in line and "…." not in line and line.rstrip().endswith("│"), line
        narrow = line[line.index("No messages") : line.index("…")]
        await pilot.resize_terminal(160, 30)  # wider: cut again to the new width
        await settle(pilot)
        [line] = [line for line in screen_text(app).splitlines() if "No messages match" in line]
        assert len(line[line.index("No messages") : line.index("…")]) > len(narrow) + 20, line


def damage_table(home, table: str) -> None:
    """Overwrite the first page of ``table`` in state.db with 0xff bytes, as a bad disk sector would."""
    home.close()
    with sqlite3.connect(home.state_db_path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        [root] = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    conn.close()
    with open(home.state_db_path, "r+b") as handle:
        handle.seek((root - 1) * size)
        handle.write(b"\xff" * size)


# messages: SQLite's own error, past the opening checks; messages_fts_data: the archive's refusal
@pytest.mark.parametrize("table", ["messages", "messages_fts_data"])
async def test_a_search_of_a_damaged_state_db_says_it_failed_not_that_nothing_matched(home, tmp_path, table):
    """The list said "No messages match 'garden'" while a toast said the search failed: a result the
    search never produced. It says the failure, in the CLI's words, and no toast repeats it."""
    seed_sessions(home)
    damage_table(home, table)
    cli = subprocess.run(
        workbench_cmd("sessions", "search", "--prefix", "garden", "--home", str(home.root)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert cli.returncode == 1 and cli.stderr.startswith("error: ")
    said = cli.stderr.removeprefix("error: ").strip()
    app = make_app(open_home(home.root, clock=home.clock), tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_sessions(pilot)
        await pilot.press("slash", *"garden")
        results = screen.query_one(SearchResults)
        await wait_for(pilot, lambda: results.query == "garden", what="the search's answer")
        await settle(pilot)
        assert results.error == said  # the CLI's words (a damaged file: with how to recover, or doctor)
        assert results.border_title == "search failed"
        text = " ".join(screen_text(app).replace("│", " ").split())
        assert "Search failed:" in text and "No messages match" not in text
        assert not [n for n in app._notifications if n.title == "Search failed"]


async def test_a_damaged_state_db_is_said_once_at_start_up_not_by_each_part_that_reads_it(home, tmp_path, monkeypatch):
    """At 80x24 a toast from memory provenance, one from following an outside change and one from the
    idle index upkeep, each with the same long message, covered most of the screen: said once now."""
    import workbench.app

    seed_sessions(home)
    (home.memories_dir / "MEMORY.md").write_text("User likes tea", encoding="utf-8")  # as Hermes wrote it: whence?
    damage_table(home, "messages_fts_data")
    monkeypatch.setattr(workbench.app, "UPKEEP_SECONDS", 0.05)
    app = make_app(open_home(home.root, clock=home.clock), tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(
            pilot,
            lambda: all(w.is_finished for w in app.workers if w.group == "upkeep"),
            what="the index upkeep to fail on the damaged state.db",
        )
        await settle(pilot)
        said = [problem for problem in app.problems if "is not a usable session archive" in problem]
        assert len(said) == 1, said


async def test_a_chain_segment_s_transcript_wears_the_chain_title_and_its_place(home, tmp_path):
    """Segment 1 of a chain Hermes titled on segment 2 showed its first message as the transcript's
    title, while the tree and a search hit in it said the chain's title (user trial)."""
    first, second = "20261130_090000_c1c1c1", "20261130_100000_c2c2c2"
    home.archive.create_session(first, source="cli")
    home.archive.append_message(first, "user", "我们讨论一下数据库迁移的计划")
    home.archive.end_session(first, "compression")
    home.archive.create_session(second, source="cli", parent_session_id=first, title="数据库迁移")
    home.archive.append_message(second, "user", "carry on")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_sessions(pilot)
        screen.load_transcript(first, None)
        await wait_for(
            pilot,
            lambda: str(screen.transcript.border_title) == "Transcript · 数据库迁移 · segment 1 of 2",
            what="the chain's title on segment 1",
        )


async def test_each_row_says_whether_its_conversation_is_live_or_ended_as_hermes_ends_it(home, tmp_path):
    """Every row had the same `●`, which never changed when Hermes ended the session: a row now says
    `live` (not ended) or `ended` (``Chain.state``, the rule `sessions list` uses), kept up to date."""
    home.archive.create_session("20261130_160000_00000a", source="cli", title="Talk")
    home.archive.append_message("20261130_160000_00000a", "user", "hello")
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_sessions(pilot)
        tree = screen.query_one(LineageTree)
        await wait_for(pilot, lambda: tree.node_for("20261130_160000_00000a") is not None, what="the root")
        row = tree.node_for("20261130_160000_00000a")
        assert "1 msg · live" in str(row.label)
        other = open_home(home.root)  # Hermes ends it
        other.archive.end_session("20261130_160000_00000a", "cli_close")
        other.close()
        await wait_for(
            pilot,
            lambda: "1 msg · ended" in str(tree.node_for("20261130_160000_00000a").label),
            timeout=10,
            what="the row marked ended",
        )


async def test_search_as_you_type_picks_the_best_cjk_hit_the_cli_picks(home, tmp_path):
    """渋谷 showed `assistant #16` (the newest match) in the TUI and `user #15` (the best ranked) in
    `sessions search`: typing made every search newest first, though a CJK substring matches the
    same whether it is typed whole or not. Both skins now show the hit the engine ranks best."""
    home.archive.create_session("s-ja", source="cli")
    first = home.archive.append_message("s-ja", "user", "私は渋谷で働いています")
    home.archive.append_message(
        "s-ja", "assistant", "ユーザーは東京の渋谷で働いている。渋谷は大きい街ですが、ほかの話もたくさんあります。"
    )
    cli = subprocess.run(
        workbench_cmd("--home", str(home.root), "sessions", "search", "渋谷", "--json"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    import json

    (best,) = json.loads(cli.stdout)["results"]
    assert best["match_message_id"] == first and best["role"] == "user"
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 24)) as pilot:
        screen = await open_sessions(pilot)
        await pilot.press("slash")
        await pilot.press(*"渋谷")
        results = screen.query_one(SearchResults)
        await wait_for(pilot, lambda: results.hits, what="search hits")
        (hit,) = results.hits.values()
        assert (hit.message_id, hit.role) == (first, "user")


async def test_an_untitled_chains_search_row_is_named_as_its_tree_row(home, tmp_path):
    """A trial: an untitled compression chain read “Plan the kaf…” in the tree, but its search row (and
    `sessions search`) was named by the first message of the segment that matched, a later one."""
    archive = home.archive
    archive.create_session("c-1", source="cli")
    archive.append_messages("c-1", [{"role": "user", "content": "Plan the kafka migration"}])
    archive.end_session("c-1", "compression")
    archive.create_session("c-2", source="cli", parent_session_id="c-1")
    archive.append_messages("c-2", [{"role": "user", "content": "and kafka topics retention"}])
    [hit] = archive.search("retention")
    assert hit.session_id == "c-2" and archive.hit_previews([hit]) == {"c-2": "Plan the kafka migration"}
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        _, results = await search_for(pilot, "retention")
        await wait_for(pilot, lambda: results.best["c-2"].title == "“Plan the kafka migration”", what="the name")


async def test_role_and_sort_words_filter_the_search_as_the_clis_flags_do(home, tmp_path):
    """The search box had no role or sort filter and its note sent people to the CLI's --role: now
    ``role:`` and ``sort:`` words filter the hits and their counts, and a bad value searches nothing."""
    seed_sessions(home)
    salad = home.archive.create_session(source="cli", title="Salad").id  # (newer than the garden chain)
    home.archive.append_message(salad, "user", "Sliced tomatoes with basil")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen, results = await searched(pilot, "role:assistant ラーメン")
        await wait_for(pilot, lambda: results.counts, what="the match counts")
        assert [(hit.session_id, hit.role) for hit in results.best.values()] == [(TOKYO, "assistant")]
        assert results.counts == {TOKYO: 1}  # (the user's message matches too, and is not counted)
        await pilot.press("ctrl+u", *"role:bogus ラーメン")
        await wait_for(pilot, lambda: results.query == "role:bogus ラーメン", what="the search's answer")
        assert results.hits == {} and results.border_title == "nothing searched"
        assert results.unsearched == (
            "no message has the role 'bogus'; a role filter takes one of: assistant, system, tool, user"
        )
        await settle(pilot)
        assert "one of: assistant, system," in screen_text(app)  # (wrapped to the list's width)
        await pilot.press("ctrl+u", *"sort:oldest tomatoes")
        await wait_for(pilot, lambda: results.query == "sort:oldest tomatoes" and results.hits, what="search hits")
        oldest = [hit.message_id for hit in results.best.values()]  # (each row's first match in time)
        await pilot.press("ctrl+u", *"sort:newest tomatoes")
        await wait_for(pilot, lambda: results.query == "sort:newest tomatoes" and results.hits, what="search hits")
        newest = [hit.message_id for hit in results.best.values()]
        assert len(oldest) == 2 and oldest == sorted(oldest) and newest == sorted(newest, reverse=True)


async def test_the_idle_merges_of_state_db_leave_the_tree_unread(home, tmp_path, monkeypatch):
    """The TUI's idle upkeep merges state.db's message index, a commit every 2 s while it has merges to do,
    and the watcher took each for another process's change: the Sessions screen read its tree again each
    time (a home of 100,000 messages: 27 times a minute, 15 s of CPU a minute against 4 on another screen)."""
    import workbench.app
    from engine.archive.lineage import LineageMixin

    home.archive.create_session("s", source="cli", model="m")
    home.archive.conn().execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('automerge', 0)")
    for i in range(12):  # one segment each: merges to do
        home.archive.append_messages("s", [{"role": "user", "content": f"deploy step {i} word{j}"} for j in range(20)])
    home.archive.bigram_index.refresh()  # (workbench.db's own index, built: only state.db's merges are left)
    assert home.archive.merge_work()
    reads, ready = [], threading.Event()
    chains, upkeep = LineageMixin.root_chains, home.archive.upkeep
    monkeypatch.setattr(LineageMixin, "root_chains", lambda self, **kw: (reads.append(1), chains(self, **kw))[1])
    # Held until all is shown; the witness is then asked again: the app's first call, made before the watch
    # ran under load, named none, and its merges counted as another process's (one run in three).
    monkeypatch.setattr(
        home.archive,
        "upkeep",
        lambda **kw: (ready.wait(), upkeep(**{**kw, "witness": app._watcher.witness("sessions")}))[1],
    )
    monkeypatch.setattr(workbench.app, "UPKEEP_SECONDS", 0.05)
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(120, 30)) as pilot:
        await open_sessions(pilot)
        await wait_for(pilot, lambda: app._watcher.witness("sessions") is not None, what="the watch")
        stamps = app._watcher.witness("sessions")
        looks, changed = [], stamps.changed
        monkeypatch.setattr(stamps, "changed", lambda: (looks.append(1), changed())[1])
        await wait_for(pilot, lambda: len(looks) >= 2, what="the watcher's first looks")
        await settle(pilot)
        before = len(reads)
        ready.set()
        await wait_for(pilot, lambda: not home.archive.merge_work(), what="the merges", timeout=30)
        seen = len(looks)
        await wait_for(pilot, lambda: len(looks) >= seen + 2, what="the watcher's looks since")
        await settle(pilot)
        assert len(reads) == before
        retitle_in_another_process(home.state_db_path)
        await wait_for(pilot, lambda: len(reads) > before, what="the tree read again")
