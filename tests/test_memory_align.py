"""Frozen beside live, entry by entry: the rows the Memory screen draws (engine/memory/align.py)."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.memory import history
from engine.memory.align import ADDED, CHANGED, MOVED, REMOVED, UNCHANGED, Row, align
from engine.tools import ToolContext
from tests.hermes_support import MEMORY_TURNS
from tests.test_hermes_catch_up import HERMES_LATE

AGENT = ToolContext(actor="agent", session_id="s-1")


def shown(frozen: list[str], live: list[str], links: dict[str, str] | None = None) -> list[tuple]:
    """Each row as (status, frozen text or None, live text or None)."""
    return [
        (row.status, None if row.frozen is None else frozen[row.frozen], None if row.live is None else live[row.live])
        for row in align(frozen, live, links)
    ]


def test_rows_pair_the_same_entry_and_leave_blank_slots():
    frozen = ["User likes tea", "Project uses uv", "Old fact to drop", "CI has 2 cores"]
    live = ["User likes green tea", "Project uses uv", "Brand new", "CI has 2 cores"]
    assert shown(frozen, live) == [
        (CHANGED, "User likes tea", "User likes green tea"),
        (UNCHANGED, "Project uses uv", "Project uses uv"),
        (REMOVED, "Old fact to drop", None),
        (ADDED, None, "Brand new"),
        (UNCHANGED, "CI has 2 cores", "CI has 2 cores"),
    ]
    assert align([], []) == []
    assert align(["a"], []) == [Row(REMOVED, 0, None)] and align([], ["a"]) == [Row(ADDED, None, 0)]


def test_a_journal_link_pairs_an_edit_that_looks_nothing_like_its_predecessor():
    frozen = ["Deploys on Fridays", "Uses Postgres"]
    live = ["Release day moved: ask Ana", "Uses Postgres"]
    assert shown(frozen, live)[:2] == [
        (REMOVED, "Deploys on Fridays", None),
        (ADDED, None, "Release day moved: ask Ana"),
    ]
    assert shown(frozen, live, {"Deploys on Fridays": "Release day moved: ask Ana"})[0] == (
        CHANGED,
        "Deploys on Fridays",
        "Release day moved: ask Ana",
    )


def test_the_journal_link_wins_over_a_closer_look_alike():
    frozen = ["Staging runs Postgres 16"]
    live = ["Staging runs Postgres 16.1", "Staging moved to managed Postgres"]
    links = {"Staging runs Postgres 16": "Staging moved to managed Postgres"}
    assert shown(frozen, live, links) == [
        (ADDED, None, "Staging runs Postgres 16.1"),
        (CHANGED, "Staging runs Postgres 16", "Staging moved to managed Postgres"),
    ]


def test_a_reordered_entry_takes_two_rows_marked_moved():
    assert shown(["a", "b"], ["b", "a"]) == [(MOVED, "a", None), (UNCHANGED, "b", "b"), (MOVED, None, "a")]


def test_successors_follow_the_journal_to_what_is_live_now(home):
    memory = home.memory
    for text in ("Deploys on Fridays", "Uses Postgres 16", "Temporary note"):
        memory.add("memory", text, AGENT)
    memory.replace("memory", "Fridays", "Deploys on Thursdays", AGENT)
    memory.replace("memory", "Thursdays", "Release day moved: ask Ana", AGENT)
    memory.remove("memory", "Temporary", AGENT)
    frozen = ["Deploys on Fridays", "Uses Postgres 16", "Temporary note"]
    assert history.successors(memory, "memory", frozen) == {
        "Deploys on Fridays": "Release day moved: ask Ana",  # two rewrites, followed forward
        "Uses Postgres 16": "Uses Postgres 16",  # untouched
        "Temporary note": None,  # removed
    }
    assert history.successor(memory, "memory", "Deploys on Fridays") == "Release day moved: ask Ana"
    links = history.successors(memory, "memory", frozen)
    assert shown(frozen, memory.entries("memory"), links) == [
        (CHANGED, "Deploys on Fridays", "Release day moved: ask Ana"),
        (UNCHANGED, "Uses Postgres 16", "Uses Postgres 16"),
        (REMOVED, "Temporary note", None),
    ]


def test_successors_of_no_entry_read_no_journal_rows(home):
    """The Memory screen asks on every reload what became of the snapshot's entries gone from the file,
    since the snapshot was taken: up to 20,000 journal rows (about 120 ms of CPU for 6,000), read even
    when none was gone, as after most of Hermes's writes."""
    memory = home.memory
    since = home.clock.now() - 1
    for n in range(3):
        memory.add("memory", f"Loop note {n}", AGENT)
    statements: list[str] = []
    home.journal.connection().set_trace_callback(statements.append)
    try:
        assert history.successors(memory, "memory", [], since) == {}
    finally:
        home.journal.connection().set_trace_callback(None)
    assert not [sql for sql in statements if "FROM journal" in sql]
    assert history.successors(memory, "memory", ["Loop note 1"], since) == {"Loop note 1": "Loop note 1"}


def test_an_edit_kept_after_another_writer_removed_its_entry_is_one_change(home):
    """A trial: after Keep mine (the entry removed meanwhile, the draft added back as an edit of it) the
    columns showed `−` and `+`; the add's row names the entry it is an edit of."""
    memory = home.memory
    memory.add("memory", "CI has 2 cores", AGENT)
    memory.add("memory", "Deploys on Fridays", AGENT)
    frozen = memory.entries("memory")
    memory.remove("memory", "Fridays", AGENT)  # another writer, while the editor was open
    assert memory.add_edit_of("memory", "Deploys on Fridays", "Deploys on Thursdays")["success"]
    links = history.successors(memory, "memory", ["Deploys on Fridays"])
    assert links == {"Deploys on Fridays": "Deploys on Thursdays"}
    assert shown(frozen, memory.entries("memory"), links) == [
        (UNCHANGED, "CI has 2 cores", "CI has 2 cores"),
        (CHANGED, "Deploys on Fridays", "Deploys on Thursdays"),
    ]


def test_a_removal_and_an_unrelated_look_alike_add_stay_two_rows(home):
    """The journal says the old entry was removed and the new one added: similar text does not
    make them one change (it did: the trial saw a `~` for a removal beside someone's add)."""
    memory = home.memory
    memory.add("memory", "CI has 2 cores", AGENT)
    memory.add("memory", "Staging runs Postgres 16", AGENT)
    frozen = memory.entries("memory")
    memory.remove("memory", "Staging runs", AGENT)
    memory.add("memory", "Staging runs Postgres 16.1 now", AGENT)
    live = memory.entries("memory")
    assert shown(frozen, live) == [  # with no journal to ask, similarity pairs them
        (UNCHANGED, "CI has 2 cores", "CI has 2 cores"),
        (CHANGED, "Staging runs Postgres 16", "Staging runs Postgres 16.1 now"),
    ]
    links = history.successors(memory, "memory", [e for e in frozen if e not in live])
    assert links == {"Staging runs Postgres 16": None}
    assert shown(frozen, live, links) == [
        (UNCHANGED, "CI has 2 cores", "CI has 2 cores"),
        (REMOVED, "Staging runs Postgres 16", None),
        (ADDED, None, "Staging runs Postgres 16.1 now"),
    ]


def test_an_entry_removed_and_put_back_before_the_snapshot_still_pairs_with_its_rewrite(home):
    """A removal the journal knows, undone later, leaves the chain alive: the rewrite after it is a ~."""
    memory = home.memory
    memory.add("memory", "Staging runs Postgres 16", AGENT)
    assert memory.remove("memory", "Staging", AGENT)["success"]
    assert memory.undo(memory.history("memory", limit=1)[0].id)["success"]
    frozen = memory.entries("memory")
    memory.replace("memory", "Postgres 16", "Staging moved to managed Postgres", AGENT)
    links = history.successors(memory, "memory", frozen)
    assert links == {"Staging runs Postgres 16": "Staging moved to managed Postgres"}
    assert shown(frozen, memory.entries("memory"), links) == [
        (CHANGED, "Staging runs Postgres 16", "Staging moved to managed Postgres")
    ]


def test_an_outside_edit_journaled_as_a_replace_still_pairs(home):
    """A hand edit is journaled by similarity (one replace), so it reads as one change."""
    memory = home.memory
    memory.add("memory", "Staging runs Postgres 16", AGENT)
    frozen = memory.entries("memory")
    path = memory.path("memory")
    path.write_text(path.read_text().replace("16", "17"))
    memory.record_external_change("memory")
    links = history.successors(memory, "memory", frozen)
    assert links == {"Staging runs Postgres 16": "Staging runs Postgres 17"}
    assert shown(frozen, memory.entries("memory"), links) == [
        (CHANGED, "Staging runs Postgres 16", "Staging runs Postgres 17")
    ]


# -- properties ---------------------------------------------------------------------------------------------------
_texts = st.text(alphabet="abcde ", min_size=1, max_size=6)
_lists = st.lists(_texts, max_size=9)
_unique = st.lists(_texts, max_size=9, unique=True)  # as a parsed file holds them


def _lcs(a: list[str], b: list[str]) -> int:
    best = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in reversed(range(len(a))):
        for j in reversed(range(len(b))):
            best[i][j] = best[i + 1][j + 1] + 1 if a[i] == b[j] else max(best[i + 1][j], best[i][j + 1])
    return best[0][0]


@settings(max_examples=300, deadline=None)
@given(_lists, _lists, st.data())
def test_every_entry_appears_exactly_once_in_order_and_statuses_fit(frozen, live, data):
    links = data.draw(
        st.dictionaries(st.sampled_from(frozen), st.sampled_from(live)) if frozen and live else st.just({})
    )
    rows = align(frozen, live, links)
    assert [r.frozen for r in rows if r.frozen is not None] == list(range(len(frozen)))
    assert [r.live for r in rows if r.live is not None] == list(range(len(live)))
    for row in rows:
        assert row.frozen is not None or row.live is not None
        both = row.frozen is not None and row.live is not None
        assert both == (row.status in (UNCHANGED, CHANGED))
        if row.status == UNCHANGED:
            assert frozen[row.frozen] == live[row.live]
        if row.status == CHANGED:
            assert frozen[row.frozen] not in live and live[row.live] not in frozen
        if row.status == ADDED:
            assert live[row.live] not in frozen
        if row.status == REMOVED:
            assert frozen[row.frozen] not in live


@settings(max_examples=300, deadline=None)
@given(_unique, _unique)
def test_unchanged_pairs_line_up_as_many_as_the_orders_allow(frozen, live):
    rows = align(frozen, live)
    assert sum(r.status == UNCHANGED for r in rows) == _lcs(frozen, live)
    if all(e in live for e in frozen) and [e for e in live if e in frozen] == frozen:  # only additions
        assert all(r.status in (UNCHANGED, ADDED) for r in rows)


@settings(max_examples=200, deadline=None)
@given(_unique, st.data())
def test_entries_edited_in_place_each_stay_on_their_predecessors_row(frozen, data):
    """The agent's replace keeps an entry's place: with the journal's links every edit pairs up."""
    edited = data.draw(st.sets(st.sampled_from(range(len(frozen))) if frozen else st.nothing()))
    live = [f"{text}#{i}" if i in edited else text for i, text in enumerate(frozen)]
    links = {frozen[i]: live[i] for i in edited}
    rows = align(frozen, live, links)
    assert [(r.frozen, r.live) for r in rows] == [(i, i) for i in range(len(frozen))]
    assert [r.status for r in rows] == [CHANGED if i in edited else UNCHANGED for i in range(len(frozen))]


@pytest.mark.slow  # Hermes's own memory tool and SessionDB in their own process
def test_a_replace_hermes_made_past_pairing_is_followed_to_its_new_text(home, hermes, clock):
    """A trial: an editor opened on the last entry, which Hermes then replaced with unlike text, said
    "another writer removed this entry". Hermes stores a turn once it ends, so the look the TUI's watcher
    makes may come first and, with no call to say otherwise, journal a removal and an add (the texts too
    unlike to pair); the call stored since says it was replaced, and what by."""
    memory = home.memory
    assert memory.add("memory", "Kettle descales monthly", AGENT)["success"]
    assert memory.add("memory", "Prefers pytest over unittest", AGENT)["success"]
    call = {"action": "replace", "target": "memory", "content": "Owns a cat called Miso", "old_text": "pytest over"}
    said = hermes.json(home.root, f"STEP, CALL = 'tool', {call!r}\n" + HERMES_LATE)
    clock.advance(time.time() - clock.now())  # (the look's time against state.db's, stamped by Hermes)
    memory.catch_up()  # the look the TUI's watcher makes: a removal and an add
    assert [(r.action, r.actor) for r in memory.history("memory", limit=2)] == [
        ("add", "external"),
        ("remove", "external"),
    ]
    hermes.json(home.root, f"STEP, CALL, SAID = 'store', {call!r}, {said!r}\n" + HERMES_LATE)
    assert history.successor(memory, "memory", "Prefers pytest over unittest") == "Owns a cat called Miso"


@pytest.mark.slow  # Hermes's own memory tool and SessionDB in their own process
def test_of_two_calls_in_one_message_the_replace_is_the_one_followed(home, hermes, clock):
    """A review: one Hermes message replaced an entry and added another; the removal half was followed
    to the other call's add, so an editor's Keep mine would have re-based onto an unrelated entry."""
    memory = home.memory
    assert memory.add("memory", "Kettle descales monthly", AGENT)["success"]
    assert memory.add("memory", "Prefers pytest over unittest", AGENT)["success"]
    calls = [
        {"action": "add", "target": "memory", "content": "Drinks oolong at noon"},
        {"action": "replace", "target": "memory", "content": "Owns a cat called Miso", "old_text": "pytest over"},
    ]
    script = (
        MEMORY_TURNS
        + 'db.create_session("s-tea", source="cli", model="m")\n'
        + 'db.append_message("s-tea", "user", "two")\n'
        + f"args = {calls!r}\n"
        + "calls = [{'id': f'call_{i}', 'type': 'function', 'function': {'name': 'memory', "
        + "'arguments': json.dumps(a)}} for i, a in enumerate(args)]\n"
        + 'db.append_message("s-tea", "assistant", None, tool_calls=calls)\n'
        + "for i, a in enumerate(args):\n"
        + '    db.append_message("s-tea", "tool", memory_tool(store=store, **a), tool_name="memory", '
        + "tool_call_id=f'call_{i}')\n"
        + "print(json.dumps(ids))\n"
    )
    hermes.json(home.root, script)
    clock.advance(time.time() - clock.now())
    memory.catch_up()
    assert history.successor(memory, "memory", "Prefers pytest over unittest") == "Owns a cat called Miso"
