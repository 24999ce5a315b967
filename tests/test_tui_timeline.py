"""The Timeline screen under Pilot: groups, filters, opening the source, reverting rows and groups."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys

import pytest
from textual.widgets import Input, Static, TextArea

from engine.approvals.records import PendingStore
from engine.diffs import WHITESPACE_ONLY
from engine.journal import Journal
from engine.skills.manage import skill_manage_tool
from engine.timeline import Timeline, detail_lines, summarize
from engine.tools import ToolContext
from tests.hermes_support import write_from_another_process
from tests.screens_seed import open_mode, screen_text
from tests.test_curator_consolidate import library as library  # (a fixture, for the consolidation test)
from tests.test_curator_consolidate import staged_plan
from tests.test_skills_support import write_skill
from tests.test_timeline import AGENT, REVIEW, found_after_a_pin, found_in_order, learn
from tests.tui_support import (
    KANA,
    LateFirstAnswer,
    drawn_in,
    footer_keys,
    footer_labels,
    make_app,
    parted,
    settle,
    wait_for,
)
from widgets.hanging_text import HangingText
from widgets.timeline_list import TimelineList
from workbench.screens import timeline as timeline_screen
from workbench.screens.approvals import ApprovalsScreen
from workbench.screens.dialogs import ConfirmDialog, ReadDialog
from workbench.screens.memory import MemoryScreen
from workbench.screens.skills import SkillsScreen
from workbench.screens.timeline import TimelineScreen

pytestmark = pytest.mark.anyio


def shown(screen) -> list[str]:
    """The 'what' column, top to bottom."""
    table = screen.query_one(TimelineList)
    return [str(table.get_row_at(i)[3]) for i in range(table.row_count)]


async def cursor_to(pilot, screen, text: str) -> None:
    table = screen.query_one(TimelineList)
    table.focus()
    table.move_cursor(row=next(i for i, what in enumerate(shown(screen)) if text in what))
    await settle(pilot)


async def focused_table(pilot) -> tuple[TimelineScreen, TimelineList]:
    """The Timeline opened, its table focused."""
    screen = await open_mode(pilot, "6", TimelineScreen)
    table = screen.query_one(TimelineList)
    table.focus()
    return screen, table


async def two_arrive_above(pilot, home, table) -> int:
    """The cursor two rows down, then two agent writes above it, counted: the id of the row it is on."""
    await pilot.press("down", "down")
    await settle(pilot)
    watched = table.current[0].id
    for n in range(2):
        home.memory.add("memory", f"arrived below the top {n}", ToolContext(actor="agent"))
    await wait_for(pilot, lambda: "2 new above" in str(table.border_title), what="the count")
    return watched


async def test_groups_collapse_and_filters_narrow_as_you_type(home, tmp_path):
    learn(home)
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        assert shown(screen) == [
            "MEMORY + 'Hand-written note'",
            "▾ background review (2 rows): 2 memory entries added",
            "  MEMORY + 'Deploys go through staging'",
            "  USER + 'Prefers short answers'",
            "MEMORY + 'Project uses Postgres 16'",
        ]
        await cursor_to(pilot, screen, "background review")
        await pilot.press("space")
        await settle(pilot)
        assert shown(screen)[1:] == [
            "▸ background review (2 rows): 2 memory entries added",
            "MEMORY + 'Project uses Postgres 16'",
        ]
        await pilot.press("slash", *"actor:agent")
        await settle(pilot)
        assert shown(screen) == ["MEMORY + 'Project uses Postgres 16'"]
        screen.query_one("#timeline-search").value = "target:user"  # a group's title counts the rows shown, of all
        await settle(pilot)
        assert shown(screen) == ["▸ background review (1 of 2 rows shown): 1 memory entry added"]
        await cursor_to(pilot, screen, "background review")
        await pilot.press("space")
        await settle(pilot)
        assert shown(screen) == [
            "▾ background review (1 of 2 rows shown): 1 memory entry added",
            "  USER + 'Prefers short answers'",
        ]
        screen.query_one("#timeline-search").value = "staging"
        await settle(pilot)
        assert shown(screen) == [
            "▾ background review (1 of 2 rows shown): 1 memory entry added",
            "  MEMORY + 'Deploys go through staging'",
        ]


async def test_space_and_g_are_dimmed_where_they_cannot_act(home, tmp_path):
    """space Fold and g Message showed on every row; off a group space did nothing, and g on a row no
    message wrote said "This row did not come from a session message."; on a folded group space read
    Fold, where it unfolds: now Unfold."""
    learn(home)
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        for text, space, g in (
            ("Hand-written note", False, False),  # a person's write: no group, no message
            ("background review", True, False),  # a group's header
            ("Deploys go through staging", True, True),  # in the group, from the review's message
            ("Project uses Postgres 16", False, True),  # the agent's, from message 3
        ):
            await cursor_to(pilot, screen, text)
            assert await footer_keys(pilot, "space", "g") == {"space": space, "g": g}, text
        await cursor_to(pilot, screen, "background review")
        assert await footer_labels(pilot, "space") == {"space": "Fold"}
        await pilot.press("space")
        await wait_for(pilot, lambda: shown(screen)[1].startswith("▸ background review"), what="the group folded")
        assert await footer_labels(pilot, "space") == {"space": "Unfold"}
        await pilot.press("space")
        await wait_for(pilot, lambda: shown(screen)[1].startswith("▾ background review"), what="unfolded")
        assert await footer_labels(pilot, "space") == {"space": "Fold"}
        await cursor_to(pilot, screen, "Hand-written note")
        await pilot.press("space")  # dimmed, it said nothing when pressed: it says why
        await settle(pilot)
        assert screen.query_one("#status").display is False and len(shown(screen)) == 5
        assert [n.message for n in pilot.app._notifications][-1].startswith("This row is in no group: space folds")
        # g, dimmed there, said nothing at all (a trial took it for broken): it says why it opens nothing
        await pilot.press("g")
        await wait_for(pilot, lambda: "did not come from a session message" in status_of(screen), what="why")
        assert status_of(screen).startswith("Row ") and len(shown(screen)) == 5
        await cursor_to(pilot, screen, "background review")
        await pilot.press("g")
        await wait_for(pilot, lambda: status_of(screen).startswith("This is a group's header"), what="the header's")


async def test_g_on_an_outside_write_whose_turn_is_not_stored_yet_says_so(home, tmp_path):
    """g on a young outside write said it "did not come from a session message" while Hermes may
    still store the turn that made it (it stores a turn when the turn ends)."""
    learn(home)
    home.archive.create_session("20261130_090000_hermes", source="cli")  # a Hermes session not ended yet
    memory = home.memories_dir / "MEMORY.md"
    memory.write_text(memory.read_text(encoding="utf-8") + "\n§\nWritten by Hermes moments ago", encoding="utf-8")
    home.memory.catch_up()  # (journaled as outside, actor external, at the clock's "now")
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        await wait_for(pilot, lambda: any("moments ago" in what for what in shown(screen)), what="the outside row")
        await cursor_to(pilot, screen, "moments ago")
        await pilot.press("g")
        await wait_for(pilot, lambda: "not in state.db yet" in status_of(screen), what="why g opens nothing yet")
        assert "did not come from" not in status_of(screen)
        home.clock.advance(3600)  # past the time Hermes may store its turn: now it surely has none
        await pilot.press("g")
        await wait_for(pilot, lambda: "no Hermes call stored in state.db wrote it" in status_of(screen), what="why")
        assert "not in state.db yet" not in status_of(screen)


async def test_g_on_a_quiet_write_no_session_could_store_says_no_call_wrote_it(home, tmp_path):
    """g on a young outside write said "not in state.db yet: Hermes stores a turn when it ends" though
    no session that could store a turn was open (Hermes's memory tool run with no session, a hand
    edit): no stored call wrote it, and none will."""
    learn(home)
    for sid in home.archive.conn().execute("SELECT id FROM sessions WHERE ended_at IS NULL").fetchall():
        home.archive.end_session(sid[0], "cli_close")
    memory = home.memories_dir / "MEMORY.md"
    memory.write_text(memory.read_text(encoding="utf-8") + "\n§\nWritten quietly just now", encoding="utf-8")
    home.memory.catch_up()
    home.clock.advance(60)  # a session begun after the write (not a compression's next segment) made none of it
    home.archive.create_session("20261130_120100_later", source="cli")
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        said = await g_on(pilot, "quietly", "no Hermes call stored in state.db wrote it")
        assert "not in state.db yet" not in said and "memory tool run with no session" in said


async def test_g_on_a_first_look_says_no_message_made_it_while_a_session_is_open(home, tmp_path):
    """g on a file's first look (the entries already there) said "not in state.db yet" while a session
    was open: no call made a first look, so none will be stored for it."""
    home.archive.create_session("20261130_110000_open", source="cli", started_at=home.clock.now() - 3600)
    memory = home.memories_dir / "MEMORY.md"
    memory.parent.mkdir(parents=True, exist_ok=True)
    memory.write_text("Written before the workbench looked", encoding="utf-8")
    home.memory.catch_up()  # (its first look: a "seen" row, actor external)
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        said = await g_on(pilot, "first look", "did not come from a session message")
        assert "not in state.db yet" not in said


async def test_g_on_a_decision_made_here_says_no_message_made_it_while_a_session_is_open(home, tmp_path):
    """g on a proposal's rejection made in the CLI, while a session was open, said "not in state.db yet:
    Hermes stores a turn when it ends": no turn makes a person's decision, so none will be stored."""
    learn(home)
    (home.root / "config.yaml").write_text("memory:\n  write_approval: true\n")
    home.reload_config()
    home.memory.add("memory", "Waiting for review", ToolContext(actor="agent"))
    home.approvals.reject(home.approvals.list()[0].id)
    home.archive.create_session("20261130_110000_open", source="cli")  # a session not ended yet
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        said = await g_on(pilot, "rejected memory", "did not come from a session message")
        assert "not in state.db yet" not in said


async def g_on(pilot, row_text: str, expect: str) -> str:
    """On the Timeline, g on the row showing ``row_text``: the status line once it says ``expect``."""
    screen = await open_mode(pilot, "6", TimelineScreen)
    await wait_for(pilot, lambda: any(row_text in what for what in shown(screen)), what=row_text)
    await cursor_to(pilot, screen, row_text)
    await pilot.press("g")
    await wait_for(pilot, lambda: expect in status_of(screen), what=expect)
    return status_of(screen)


def status_of(screen) -> str:
    return str(screen.query_one("#status", Static).content) if screen.query_one("#status").display else ""


async def test_enter_opens_the_entry_in_memory_the_skill_and_the_proposal(home, tmp_path):
    learn(home)
    for name in ("alpha-notes", "beta-notes"):
        write_skill(home, name)
    home.curator.pin("beta-notes")
    (home.root / "config.yaml").write_text("memory:\n  write_approval: true\n")
    home.reload_config()
    home.memory.add("memory", "Waiting for review", ToolContext(actor="agent"))
    home.memory.add("memory", "Also waiting", ToolContext(actor="agent"))
    first = home.approvals.list()[0].id
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        await cursor_to(pilot, screen, f"staged memory proposal {first}")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ApprovalsScreen), what="Approvals")
        await wait_for(
            pilot,
            lambda: pilot.app.screen.current is not None and pilot.app.screen.current.id == first,
            what="the proposal selected",
        )
        screen = await open_mode(pilot, "6", TimelineScreen)
        await cursor_to(pilot, screen, "pinned skill 'beta-notes'")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, SkillsScreen), what="Skills")
        await wait_for(
            pilot,
            lambda: pilot.app.screen.current is not None and pilot.app.screen.current.name == "beta-notes",
            what="the skill selected",
        )
        screen = await open_mode(pilot, "6", TimelineScreen)
        await cursor_to(pilot, screen, "Project uses Postgres 16")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, MemoryScreen), what="Memory")
        await settle(pilot)
        live = pilot.app.screen.query_one("#live-list")
        await wait_for(
            pilot,
            lambda: live.current is not None and live.current.text == "Project uses Postgres 16",
            what="the entry selected in Memory",
        )


@pytest.mark.parametrize(
    ("read", "row", "then"),
    [
        ((Journal, "get"), "Project uses Postgres 16", "MEMORY + 'Hand-written note'"),
        ((PendingStore, "find"), "staged memory proposal", "MEMORY + 'Hand-written note'"),
    ],
    ids=["memory entry", "proposal"],
)
async def test_enter_reads_off_the_ui_thread_and_a_late_answer_for_a_row_left_opens_nothing(
    home, tmp_path, monkeypatch, read, row, then
):
    """Enter read the journal (a memory row) or the pending folder (a proposal's row) on the UI thread,
    so a slow read froze every key. It reads in a worker now: keys work while it reads, and its answer,
    come after the cursor moved on, opens nothing; enter on the row the cursor is on opens that one."""
    learn(home)
    (home.root / "config.yaml").write_text("memory:\n  write_approval: true\n")
    home.reload_config()
    home.memory.add("memory", "Waiting for review", ToolContext(actor="agent"))
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        await cursor_to(pilot, screen, row)
        held = LateFirstAnswer(monkeypatch, *read)
        await pilot.press("enter")
        await wait_for(pilot, held.started.is_set, what="the read under way")
        table = screen.query_one(TimelineList)
        table.move_cursor(row=shown(screen).index(then))  # (the UI answers while the read is held)
        await wait_for(pilot, lambda: table.current[0] is not None and table.current[0].summary == then)
        await held.release(pilot, "timeline-open")
        assert pilot.app.screen is screen
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, MemoryScreen), what="Memory")
        live = pilot.app.screen.query_one("#live-list")
        await wait_for(
            pilot, lambda: live.current is not None and live.current.text == "Hand-written note", what="the entry"
        )


HERMES_ARCHIVES_THEN_MAKES_AGAIN = """
import json
import re
import sqlite3
from tools.skill_usage import archive_skill
from tools.skill_manager_tool import skill_manage
import sys
content = "---\\nname: %s\\ndescription: Made again\\n---\\n# %s\\n\\nSteps.\\n"
for name in sys.argv[1:]:
    if name.startswith("archive:"):
        assert archive_skill(name[8:])[0]
    else:
        assert json.loads(skill_manage("create", name, content=content % (name, name), category="devops"))["success"]
print(json.dumps(True))
"""


def hermes_does(hermes, home, *steps: str) -> None:
    code = HERMES_ARCHIVES_THEN_MAKES_AGAIN.replace("sys.argv[1:]", repr(list(steps)))
    assert hermes.json(home.root, code) is True
    home.skills.outside.record()


@pytest.mark.slow  # Hermes's own archive and skill_manage in its own process
async def test_enter_on_an_archive_row_opens_the_archived_copy_not_the_skill_made_anew(home, tmp_path, hermes):
    """The trial: enter on "skill 'git-rebase' archived outside the workbench" (Hermes's archive) and on
    "archived skill 'trial8-backup'" (ours) opened the active skill Hermes had made again under the name."""
    write_skill(home, "git-rebase", category="devops")
    write_skill(home, "trial8-backup", category="misc")
    home.skills.outside.record()
    hermes_does(hermes, home, "archive:git-rebase")
    home.curator.archive("trial8-backup")
    hermes_does(hermes, home, "git-rebase", "trial8-backup")
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        for row, copy in (
            ("skill 'git-rebase' archived outside", ".archive/git-rebase"),
            ("archived skill 'trial8-backup'", ".archive/trial8-backup"),
            ("skill 'git-rebase' created outside", "devops/git-rebase"),
        ):
            screen = await open_mode(pilot, "6", TimelineScreen)
            await cursor_to(pilot, screen, row)
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(pilot.app.screen, SkillsScreen), what="Skills")
            skills = pilot.app.screen
            await wait_for(pilot, lambda: skills.current is not None and skills.current.path == copy, what=copy)
    # the CLI names what enter opens
    rows = {summarize(entry).split(" (")[0]: entry.id for entry in home.journal.query(subsystem="skills")}
    outside = rows["skill 'git-rebase' archived outside the workbench"]
    text = cli(home, "timeline", "show", str(outside))
    assert "opens: the archived copy in skills/.archive/git-rebase" in text
    assert "`workbench skills show .archive/git-rebase`" in text
    ours = json.loads(cli(home, "timeline", "show", str(rows["archived skill 'trial8-backup'"]), "--json"))
    assert ours["row"]["opens"] == ".archive/trial8-backup"


def cli(home, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "workbench", *args, "--home", str(home.root)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


async def revert_question(pilot, screen, text: str) -> str:
    """``r`` on the row showing ``text``: the confirmation's detail."""
    await cursor_to(pilot, screen, text)
    await pilot.press("r")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ConfirmDialog), what="confirmation")
    return pilot.app.screen.detail


async def test_revert_a_row_and_a_review_group_after_confirming_and_refuse_what_changed(home, tmp_path):
    learn(home)
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        await cursor_to(pilot, screen, "Hand-written note")
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ConfirmDialog), what="confirmation")
        assert "remove 'Hand-written note' from MEMORY" in pilot.app.screen.detail
        await pilot.press("y")
        await settle(pilot)
        await wait_for(pilot, lambda: "revert of row 4" in shown(screen)[0], what="the revert on the timeline")
        assert "Hand-written note" not in home.memory.entries("memory")
        assert screen.query_one(TimelineList).current[0].id == 4  # (the row reverted keeps the cursor)
        undo = next(row.id for row in screen.rows if row.summary.startswith("revert of row 4"))
        # the row it undid is marked, dimmed, and its detail line names the undo
        assert [w for w in shown(screen) if "Hand-written note" in w] == [
            "revert of row 4: MEMORY − 'Hand-written note'",
            "↶ MEMORY + 'Hand-written note'",
        ]
        await cursor_to(pilot, screen, "↶ MEMORY + 'Hand-written note'")
        assert f"↶ reverted by row {undo}" in str(screen.query_one("#timeline-detail").render())
        home.memory.replace("memory", "Deploys go through staging", "Deploys go to prod", ToolContext(actor="user"))
        await settle(pilot)
        detail = await revert_question(pilot, screen, "background review")
        assert "will revert row 2 (USER + 'Prefers short answers')" in detail
        assert (
            "will refuse row 3 (MEMORY + 'Deploys go through staging')" in detail and "no longer in MEMORY.md" in detail
        )
        await pilot.press("y")
        await settle(pilot)
        assert home.memory.entries("user") == [] and "Deploys go to prod" in home.memory.entries("memory")
        status = str(screen.query_one("#status").render())
        assert "Reverted 1 change. Refused: row 3: the entry it wrote is no longer in MEMORY.md" in status
        assert "Nothing was changed" not in status and "Cannot undo row" not in status  # (1 change was)


async def test_a_row_revert_refusal_says_its_reason_once(home, tmp_path):
    """ "Nothing to revert: row 4 (…): Cannot undo row 4: … Nothing was changed." said it twice."""
    learn(home)
    home.memory.replace("memory", "Hand-written note", "Hand-written note, edited", ToolContext(actor="user"))
    [edit] = home.journal.about("memory", "memory", "Hand-written note, edited")
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        await cursor_to(pilot, screen, "MEMORY + 'Hand-written note'")
        row = screen.query_one(TimelineList).current[0].id
        await pilot.press("r")
        status = screen.query_one("#status")
        await wait_for(pilot, lambda: "Cannot revert" in str(status.render()), what="the refusal")
        assert str(status.render()).strip() == (  # (a refusal, not "Nothing to revert": there is, once row EDIT is)
            f"Cannot revert: row {row} (MEMORY + 'Hand-written note'): the entry it wrote is no longer in "
            f"MEMORY.md: row {edit.id} (user replace) changed it since; revert that row first."
        )


async def test_a_group_revert_names_the_rows_it_leaves_each_in_its_own_clause(home, tmp_path):
    """Record rows in a group were missing from the question, and when nothing else was left
    their reasons ran together: "Nothing to revert. 5: a record … 6: a record …"."""
    learn(home)
    home.journal.append("approvals", "stage", "memory", actor="review", session_id="s1", message_id=7)
    for action in ("pause", "resume"):
        home.journal.append("curator", action, "curator", actor="curator", detail={"run": "r1"})
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        detail = await revert_question(pilot, screen, "background review")
        assert "will revert row 2 (USER + 'Prefers short answers')" in detail
        assert "will leave row 5 (" in detail and "a proposal staged for review, not a change" in detail
        await pilot.press("n")
        await settle(pilot)
        await cursor_to(pilot, screen, "Curator pass")
        await pilot.press("r")
        status = screen.query_one("#status")
        await wait_for(pilot, lambda: "Nothing to revert" in str(status.render()), what="the refusal")
        text = str(status.render())
        assert text.startswith("Nothing to revert: row 7 (") and "led to); row 6 (" in text  # (not "will leave")
        await revert_question(pilot, screen, "background review")
        await pilot.press("y")
        await settle(pilot)
        text = str(status.render())  # what it left, as the question said (it said only what it reverted)
        assert text.startswith("Reverted 2 changes. Left 1: 5: a proposal staged for review, not a change")
        assert ".;" not in text and " ".join(text.split()).endswith(".")  # (one sentence, its own stop)


async def test_a_consolidation_group_revert_says_its_records_change_went_with_it(library, tmp_path):
    """After "Reverted 1 change." the status said of the group's approval and staging rows "revert the
    change it led to": the change this very revert took back."""
    library.approvals.approve(staged_plan(library))
    async with make_app(library, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        detail = await revert_question(pilot, screen, "consolidation (3 rows)")
        await pilot.press("y")
        status = screen.query_one("#status")
        await wait_for(pilot, lambda: "Reverted" in str(status.render()), what="the revert")
        text = " ".join(str(status.render()).split())
    assert text == (
        "Reverted 1 change. Left 2: 2: a record of a decision, not a change: the change it led to (row 3) is in "
        "this revert; 1: a proposal staged, not a change: the change it led to (row 3) is in this revert."
    ), detail


async def test_a_skill_written_by_another_program_appears_on_the_timeline(home, tmp_path):
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        await wait_for(pilot, lambda: home.skills.outside._last is not None, what="the baseline")
        text = "---\nname: standup\ndescription: Daily notes\n---\n\nThree lines.\n"
        write_from_another_process(home.skills_dir / "standup" / "SKILL.md", text)
        await wait_for(
            pilot,
            lambda: any("skill 'standup' created outside the workbench" in what for what in shown(screen)),
            what="the outside change on the timeline",
        )


async def test_a_support_file_written_by_another_program_appears_on_the_timeline(home, tmp_path):
    """A file Hermes's write_file adds to a skill never reached the Timeline: only SKILL.md was looked at."""
    write_skill(home, "beta-logs", category="devops")
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(160, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        await wait_for(pilot, lambda: home.skills.outside._last is not None, what="the baseline")
        write_from_another_process(home.skills_dir / "devops" / "beta-logs" / "scripts" / "run.sh", "tail -f x\n")
        wanted = "file 'scripts/run.sh' of skill 'beta-logs' created outside the workbench"
        await wait_for(pilot, lambda: any(wanted in what for what in shown(screen)), what="the file's row")
        await cursor_to(pilot, screen, wanted)
        detail = str(screen.query_one("#timeline-detail").render())
        assert "skills external (created) · target beta-logs" in detail
        assert "(devops/beta-logs/scripts/run.sh)" in detail
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: (
                isinstance(pilot.app.screen, SkillsScreen)
                and pilot.app.screen.current is not None
                and pilot.app.screen.current.name == "beta-logs"
            ),
            what="its skill selected",
        )


async def test_the_cursor_keeps_its_row_as_new_changes_arrive_and_the_title_counts_them(home, tmp_path):
    """The cursor stays on its row, the first one included (it followed new changes from there, so a key
    pressed next acted on a row the user had not chosen), and the title says how many arrived above,
    until the cursor goes back to the top."""
    for n in range(3):
        home.memory.add("memory", f"older fact {n}", ToolContext(actor="user"))
    async with make_app(home, tmp_path).run_test(size=(80, 24)) as pilot:
        screen, table = await focused_table(pilot)
        top = table.current[0].id
        home.memory.add("memory", "arrived while on top", ToolContext(actor="agent"))
        await wait_for(pilot, lambda: "arrived while on top" in shown(screen)[0], what="the new row")
        await wait_for(pilot, lambda: "1 new above" in str(table.border_title), what="the count")
        assert table.current[0].id == top and table.cursor_row == 1
        await pilot.press("home")
        await settle(pilot)
        assert "new above" not in str(table.border_title)
        watched = await two_arrive_above(pilot, home, table)
        assert table.current[0].id == watched
        await pilot.press("home")
        await settle(pilot)
        assert table.cursor_row == 0 and "new above" not in str(table.border_title)


async def test_rows_arriving_under_a_revert_question_leave_the_cursor_on_the_row_asked_about(home, tmp_path):
    """r on the first row, then a group written while its question was open: the cursor and the detail
    pane moved to the new group, under the dialog that named the row chosen (user trial)."""
    for n in range(3):
        home.memory.add("memory", f"older fact {n}", ToolContext(actor="user"))
    async with make_app(home, tmp_path).run_test(size=(80, 24)) as pilot:
        screen, table = await focused_table(pilot)
        chosen = table.current[0].id
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ConfirmDialog), what="the question")
        assert f"will revert row {chosen} " in pilot.app.screen.detail
        for n in "ab":  # one group of two rows, as a background review writes them
            home.memory.add("memory", f"group fact {n}", REVIEW)
        await settle(pilot)
        assert table.current[0].id == chosen
        await pilot.press("n")  # no: the screen catches up on what arrived, the cursor kept on its row
        await wait_for(pilot, lambda: any("group fact" in what for what in shown(screen)), what="the new rows")
        await settle(pilot)
        assert table.current[0].id == chosen
        assert f"row {chosen}" in str(screen.query_one("#timeline-detail").render())


async def test_a_summary_too_long_for_the_table_ends_with_an_ellipsis_at_its_edge(home, tmp_path):
    """It was cut mid-word at the table's edge with no sign ('MEMORY + 'Hand-added: the billing da')."""
    entry = "Hand-added: the billing dashboard lives at grafana.internal/d/billing, owned by the payments team"
    home.memory.add("memory", entry, ToolContext(actor="user"))
    async with make_app(home, tmp_path).run_test(size=(80, 24)) as pilot:
        await open_mode(pilot, "6", TimelineScreen)
        line = next(line for line in screen_text(pilot.app).splitlines() if "Hand-added" in line)
        assert line.rstrip(" │").endswith("…") and len(line) <= 80
        await pilot.resize_terminal(200, 24)  # room enough: whole again
        await settle(pilot)
        assert f"MEMORY + '{entry}'" in screen_text(pilot.app)


async def test_rows_a_cleared_filter_brings_back_are_not_counted_as_new(home, tmp_path):
    """Clearing a search with the cursor lower down read "49 new above" though nothing arrived."""
    for n in range(6):
        home.memory.add("memory", f"fact {n}", ToolContext(actor="user" if n % 2 else "agent"))
    async with make_app(home, tmp_path).run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        table = screen.query_one(TimelineList)
        await pilot.press("slash", *"actor:agent", "enter")
        await wait_for(pilot, lambda: len(screen.rows) == 3, what="the filtered rows")
        table.focus()
        await pilot.press("down", "down")
        await settle(pilot)
        screen.query_one("#timeline-search", Input).value = ""
        await wait_for(pilot, lambda: len(screen.rows) == 6, what="every row back")
        await settle(pilot)
        assert table.cursor_row != 0 and "new above" not in str(table.border_title)
        home.memory.add("memory", "arrived meanwhile", ToolContext(actor="agent"))  # a real arrival still counts
        await wait_for(pilot, lambda: "1 new above" in str(table.border_title), what="the count")


async def test_rows_a_filter_hides_are_not_counted_as_new_above(home, tmp_path):
    """Hermes's writes arrived above the cursor, then a search for the user's rows: the title read
    "134 new above (home)" over a list with 5 rows above the cursor (user trial)."""
    for n in range(3):
        home.memory.add("memory", f"user fact {n}", ToolContext(actor="user"))
    async with make_app(home, tmp_path).run_test(size=(80, 24)) as pilot:
        screen, table = await focused_table(pilot)
        watched = await two_arrive_above(pilot, home, table)
        screen.query_one("#timeline-search", Input).value = "actor:user"  # (pasted: no prefix hides the row)
        await wait_for(pilot, lambda: len(screen.rows) == 3, what="the user's rows")
        await settle(pilot)
        assert table.current[0].id == watched and "new above" not in str(table.border_title)
        home.memory.add("memory", "user fact arrived", ToolContext(actor="user"))  # one it lists still counts
        await wait_for(pilot, lambda: "1 new above" in str(table.border_title), what="the count")


async def test_a_group_filter_that_is_not_a_group_shows_no_rows_and_says_why(home, tmp_path):
    """group:zzz made the engine raise in the worker, unseen: the old rows stayed under the new
    filter, and r on them reverted what the box did not ask for."""
    learn(home)
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        await wait_for(pilot, lambda: len(shown(screen)) >= 4, what="the rows")
        await pilot.press("slash", *"group:zzz")
        await wait_for(pilot, lambda: not screen.rows, what="the rows gone")
        detail = str(screen.query_one("#timeline-detail").render())
        assert "'zzz' is not a timeline row or group" in detail
        await pilot.press("ctrl+u", *"group:review:s1:7")
        await wait_for(pilot, lambda: len(screen.rows) == 2, what="the review's rows")


async def test_a_revert_question_never_opens_over_the_screen_the_user_went_to(home, tmp_path, monkeypatch):
    """r, then 4 before the preview came back: the question opened over Approvals, where y would
    have reverted a Timeline row the user no longer saw."""
    import time

    from engine.timeline import Timeline

    preview = Timeline.preview
    monkeypatch.setattr(Timeline, "preview", lambda self, ref: (time.sleep(0.5), preview(self, ref))[1])
    learn(home)
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        await cursor_to(pilot, screen, "Hand-written note")
        await pilot.press("r", "4")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ApprovalsScreen), what="Approvals")
        await pilot.pause(0.8)  # the preview has come back by now
        await settle(pilot)
        assert isinstance(pilot.app.screen, ApprovalsScreen)
        assert not any(isinstance(s, ConfirmDialog) for s in pilot.app.screen_stack)
        assert any("Not asked: you left Timeline" in str(n.message) for n in pilot.app._notifications)


@pytest.mark.parametrize("size", [(80, 24), (100, 30)])
async def test_a_long_summary_never_pushes_the_session_out_of_view(home, tmp_path, size):
    ctx = ToolContext(actor="agent", session_id="20261204_022919_dacddb", message_id=3)
    home.memory.add("memory", "Hotfix branches are cut from the latest release tag, never from main, " * 3, ctx)
    async with make_app(home, tmp_path).run_test(size=size) as pilot:
        await open_mode(pilot, "6", TimelineScreen)
        row = next(line for line in screen_text(pilot.app).splitlines() if "MEMORY + 'Hotfix" in line)  # (the table's)
        assert "…022919_dacddb" in row.split("MEMORY")[0]  # the session's distinct end, before the summary


async def test_a_deleted_session_row_says_there_is_nothing_to_open_and_an_archived_one_opens(home, tmp_path):
    from workbench.screens.sessions import SessionsScreen

    for sid in ("s1", "s2"):
        home.archive.create_session(sid, title=f"Talk {sid}")
        home.archive.append_messages(sid, [{"role": "user", "content": f"hello from {sid}"}])
    home.archive.delete_session("s2", live=True)
    home.archive.set_archived("s1")
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        await cursor_to(pilot, screen, "deleted session 'Talk s2'")
        await pilot.press("enter")
        await settle(pilot)
        assert "nothing left to open" in str(screen.query_one("#status").render())
        await cursor_to(pilot, screen, "archived session 'Talk s1'")
        await pilot.press("g")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, SessionsScreen), what="Sessions")


async def test_the_status_line_never_hides_the_row_it_speaks_of(home, tmp_path):
    """At 80x24, r on a low row that cannot be reverted said so in a three-line status that pushed
    the row itself off the bottom of the list."""
    for n in range(30):
        home.archive.create_session(f"s{n:02}", title=f"Talk {n}")
        home.archive.delete_session(f"s{n:02}", live=True)
    async with make_app(home, tmp_path).run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        table = screen.query_one(TimelineList)
        await wait_for(pilot, lambda: table.row_count == 30, what="the rows")
        table.focus()
        shown = table.scrollable_content_region.height - 1  # under the header
        table.move_cursor(row=shown - 1)  # the lowest row in view
        await settle(pilot)
        await pilot.press("r")
        await wait_for(pilot, lambda: "Cannot revert" in screen_text(pilot.app), what="the refusal")
        await settle(pilot)
        top, height = table.scroll_offset.y, table.scrollable_content_region.height - 1
        assert top <= table.cursor_row < top + height


async def test_columns_are_as_wide_as_their_cells_as_soon_as_rows_are_shown(home, tmp_path):
    """DataTable measures new rows when idle: a Timeline first shown in a terminal after other
    screens' work was once drawn at the headers' widths ("2026  curat  ▾ Cu") until the next show."""
    from rich.cells import cell_len

    learn(home)
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        table = screen.query_one(TimelineList)
        rows = list(table.rows_by_key.values())
        for column in table.columns.values():  # as a table that never measured a row
            column.content_width = 0
        table.show(rows, {}, set())  # and, before any idle turn, the widths are known
        widest = max(cell_len(r.summary) for r in rows)
        assert table.columns["what"].get_render_width(table) >= widest
        assert table.columns["when"].get_render_width(table) >= 16


async def test_a_group_filtered_down_says_how_many_rows_it_holds(home, tmp_path):
    """Under `subsystem:memory` a review group of a memory add and a staged proposal read "(1 row)",
    though reverting it acts on both."""
    learn(home)
    home.journal.append("approvals", "stage", "memory", actor="review", session_id="s1", message_id=7)
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        whole = next(w for w in shown(screen) if "background review" in w)
        assert "(3 rows)" in whole
        await pilot.press("slash", *"actor:review subsystem:approvals")
        await wait_for(pilot, lambda: any("1 of 3 rows shown" in w for w in shown(screen)), what="the group's size")


async def test_summaries_are_cut_where_the_scrollbar_their_rows_bring_leaves_room(tmp_path):
    """On the demo home at 80x24 the summaries ran two cells under the scrollbar their own rows
    brought, which took its cells after the room was measured: the … marking each cut was hidden."""
    from engine import open_home
    from engine.demo import seed_demo_home

    home = open_home(tmp_path / "h")
    seed_demo_home(home)
    async with make_app(home, tmp_path).run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        assert screen.query_one(TimelineList).show_vertical_scrollbar
        lines = [line for line in screen_text(pilot.app).splitlines() if "wrote a file in skill 'rerender" in line]
        assert lines and all(line.rstrip(" │▁▂▃▄▅▆▇█").endswith("…") for line in lines)


async def test_the_session_column_is_narrow_while_no_row_names_a_session(home, tmp_path):
    """At 80 columns the session column kept 14 cells for rows that all showed `-`."""
    learn(home)  # a review's rows, in session s1
    async with make_app(home, tmp_path).run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        table = screen.query_one(TimelineList)
        assert table.columns["session"].width == TimelineList.SESSION_CHARS
        await pilot.press("slash", *"actor:user")  # none of these names a session
        await wait_for(pilot, lambda: table.shown[0] and not any(r.session for r in table.shown[0]), what="user rows")
        await settle(pilot)
        assert table.columns["session"].width == len("session")


async def test_collapsed_groups_give_their_summaries_the_scrollbars_cells_back(home, tmp_path):
    """The room was measured as if every group's rows were shown, and a scrollbar about to go kept
    its cells: with the groups folded, summaries were cut two cells early."""
    for n in range(12):
        ctx = ToolContext(actor="review", session_id="s1", message_id=n)
        for part in range(2):
            home.memory.add("memory", f"Review {n} learned fact {part} about the deploy pipeline", ctx)
    async with make_app(home, tmp_path).run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        table = screen.query_one(TimelineList)
        assert table.show_vertical_scrollbar
        expanded = table.what_cells
        groups = {row.group for row in screen.rows}
        table.show(screen.rows, screen.titles, groups)  # every group folded: 13 lines fit
        await settle(pilot)
        assert table.what_cells == expanded + table.styles.scrollbar_size_vertical
        assert not table.show_vertical_scrollbar


async def test_older_pages_still_load_after_a_reload_cancelled_one(home, tmp_path):
    """A live reload or a search, started while an older page loaded, cancelled it (one worker
    group); the screen still thought it was loading, and never asked for an older page again."""
    for n in range(5):
        home.memory.add("memory", f"fact {n}", ToolContext(actor="user"))
    async with make_app(home, tmp_path).run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        screen.loading_more = True  # an older page asked for, whose worker the reload below cancels
        screen.reload()
        await settle(pilot)
        assert not screen.loading_more


async def test_a_failed_approval_row_says_why_in_the_detail_pane(home, tmp_path):
    """An edit-then-approve refused for its missing frontmatter left an `approval failed` row with no
    word of why, though the refusal was known when it was journaled."""
    home.config_path.write_text("skills:\n  write_approval: true\n", encoding="utf-8")
    home.reload_config()
    content = "---\nname: tidy-logs\ndescription: Rotate old logs\n---\n# Tidy logs\n"
    assert skill_manage_tool(home, {"action": "create", "name": "tidy-logs", "content": content}, ToolContext()).get(
        "staged"
    )
    async with make_app(home, tmp_path).run_test(size=(80, 24)) as pilot:
        await pilot.press("4")
        await settle(pilot)
        await pilot.press("e")
        await wait_for(pilot, lambda: pilot.app.screen.query(TextArea), what="the editor")
        pilot.app.screen.query_one(TextArea).text = "# Tidy logs\nno frontmatter\n"
        await pilot.press("ctrl+s")
        await wait_for(
            pilot, lambda: "frontmatter" in str(pilot.app.screen.query_one("#error").render()), what="the refusal"
        )
        await pilot.press("escape", "y")  # (the draft is discarded)
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ApprovalsScreen), what="the queue")
        screen = await open_mode(pilot, "6", TimelineScreen)
        await cursor_to(pilot, screen, "approval failed")
        detail = str(screen.query_one("#timeline-detail").render())
        assert "\nwhy: SKILL.md must start with YAML frontmatter (---)." in detail


async def test_the_detail_line_keeps_a_target_with_a_line_break_on_its_line(home, tmp_path):
    """A skill folder named with a line break split the selected row's first detail line in two."""
    home.journal.append("skills", "external", "two\nlines", actor="external", after="skill 'two⏎lines' edited")
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        await wait_for(pilot, lambda: screen.query_one(TimelineList).row_count > 0, what="the row")
        detail = str(screen.query_one("#timeline-detail").render())
        assert detail.splitlines()[0].endswith("· skills external · target two⏎lines")


@pytest.mark.parametrize("typed", ["actor:hermes", "subsystem:bogus"])
async def test_an_actor_or_subsystem_no_row_can_have_is_refused_as_the_cli_refuses_it(home, tmp_path, typed):
    """`actor:bogus` said only that no change matched, while `timeline --actor bogus` listed the actors."""
    from tests.test_curator_cli import wb

    learn(home)
    name, value = typed.split(":")
    code, refused = wb(home.root, "timeline", f"--{name}", value)
    assert code == 2 and refused["error"].startswith(f"{name}: '{value}' is not one of ")
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        await open_mode(pilot, "6", TimelineScreen)
        await pilot.press("slash", *typed)
        said = " ".join(refused["error"].split())  # (as the status line wraps it, each line indented)
        await wait_for(pilot, lambda: said in " ".join(screen_text(pilot.app).split()), what="refusal")


async def test_a_filtered_view_fits_its_summaries_to_the_columns_it_shows(home, tmp_path):
    """The actor column kept the width 'external' gave it before a filter left only 'user' rows, so the
    summaries, fitted to the rows shown, ran past the table's edge with no … (user trial)."""
    entry = "Hand-added: the billing dashboard lives at grafana.internal/d/billing, owned by the payments team"
    home.memory.add("memory", entry, ToolContext(actor="user"))
    memory = home.memories_dir / "MEMORY.md"
    memory.write_text(memory.read_text(encoding="utf-8") + "\n§\nWritten by hand outside", encoding="utf-8")
    home.memory.catch_up()  # (journaled as outside, actor external)
    async with make_app(home, tmp_path).run_test(size=(80, 24)) as pilot:
        await open_mode(pilot, "6", TimelineScreen)
        await wait_for(pilot, lambda: "external" in screen_text(pilot.app), what="the outside row")
        await pilot.press("/", *"actor:user", "enter")
        await wait_for(pilot, lambda: "external" not in screen_text(pilot.app), what="the filtered view")
        line = next(line for line in screen_text(pilot.app).splitlines() if "Hand-added" in line)
        assert line.rstrip(" │").endswith("…") and len(line) <= 80


async def test_a_long_skill_diff_leaves_the_list_its_rows_at_80x24(home, tmp_path):
    """At 80x24 a long outside diff (up to 10 rows) under a long detail left the list 1-3 rows (a trial)."""
    write_skill(home, "beta-logs")
    home.skills.outside.record()
    skill_md = home.skills_dir / "beta-logs" / "SKILL.md"
    steps = "".join(f"Step {n}: check the log.\n\n\n\n\n" for n in range(8))
    write_from_another_process(skill_md, skill_md.read_text(encoding="utf-8") + steps)
    home.skills.outside.record()
    async with make_app(home, tmp_path).run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        await cursor_to(pilot, screen, "skill 'beta-logs' edited")  # (the column cuts the rest at 80)
        diff = screen.query_one("#timeline-diff")
        await wait_for(pilot, lambda: "+ Step 0" in str(diff.render()), what="the diff")
        await settle(pilot)
        assert diff.region.height <= 6 and screen.query_one(TimelineList).region.height >= 6


async def test_an_outside_skill_edit_of_trailing_spaces_shows_them(home, tmp_path):
    """A patch that only added trailing spaces showed two lines alike, ``- last`` and ``+ last``."""
    write_skill(home, "beta-logs")
    home.skills.outside.record()
    skill_md = home.skills_dir / "beta-logs" / "SKILL.md"
    text = skill_md.read_text(encoding="utf-8")
    write_from_another_process(skill_md, text.rstrip("\n") + "\t \n")
    home.skills.outside.record()
    last = text.rstrip("\n").splitlines()[-1]
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        await cursor_to(pilot, screen, "skill 'beta-logs' edited outside the workbench")
        diff = screen.query_one("#timeline-diff")
        await wait_for(pilot, lambda: f"+ {last}→·" in str(diff.render()), what="the marked diff")
        assert WHITESPACE_ONLY in str(diff.render()) and f"- {last}\n" in str(diff.render())


async def test_an_outside_skill_edit_shows_its_diff_and_reverts_after_confirming(home, tmp_path):
    write_skill(home, "beta-logs")
    home.skills.outside.record()
    skill_md = home.skills_dir / "beta-logs" / "SKILL.md"
    before = skill_md.read_text(encoding="utf-8")
    write_from_another_process(skill_md, before + "Then tail [bold]the log[/bold].\n")
    home.skills.outside.record()
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        await cursor_to(pilot, screen, "skill 'beta-logs' edited outside the workbench")
        diff = screen.query_one("#timeline-diff")
        await wait_for(pilot, lambda: "+ Then tail [bold]the log[/bold]." in str(diff.render()), what="the diff")
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ConfirmDialog), what="the question")
        assert "put the text of skill 'beta-logs' (beta-logs/SKILL.md) back" in pilot.app.screen.detail
        await pilot.press("y")
        await wait_for(pilot, lambda: skill_md.read_text(encoding="utf-8") == before, what="the text put back")


async def test_a_timeline_revert_is_a_revert_in_the_memory_history_too(home, tmp_path):
    """The Memory screen's history called the row a Timeline revert wrote "undo" while the Timeline
    called it "revert of row N": both say revert now (the Memory screen's own u stays an undo)."""
    home.memory.add("memory", "Deploys go through staging", ToolContext(actor="agent"))
    home.memory.replace("memory", "Deploys go through staging", "Deploys go to prod", ToolContext(actor="agent"))
    async with make_app(home, tmp_path).run_test(size=(120, 40)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        await cursor_to(pilot, screen, "Deploys go to prod")
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ConfirmDialog), what="confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: "revert of row" in shown(screen)[0], what="the revert on the timeline")
        assert home.memory.entries("memory") == ["Deploys go through staging"]
        memory = await open_mode(pilot, "1", MemoryScreen)
        detail = memory.query_one("#detail-text", Static)
        await wait_for(pilot, lambda: "replace" in str(detail.content), what="the entry's history")
        lines = str(detail.content).splitlines()
        assert any(" revert " in line and "Deploys go through staging" in line for line in lines), lines
        assert not any(" undo " in line for line in lines), lines
        await pilot.press("u")  # the Memory screen's own undo of the entry's newest change stays an undo
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ConfirmDialog), what="the undo question")
        await pilot.press("y")
        await wait_for(pilot, lambda: " undo " in str(detail.content), what="the undo in the history")


async def test_a_skill_removed_with_its_support_files_is_offered_back_as_its_skill_md_alone(home, tmp_path):
    """F11: `r` on such a removal only said it was refused; now it asks, naming what stays lost."""
    from tests.test_skills_outside import removed_with_support_files

    removed_with_support_files(home)
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        assert "references/team.md is lost (no copy was kept)" in await revert_question(
            pilot, screen, "removed outside"
        )
        await pilot.press("y")
        await settle(pilot)
        await wait_for(pilot, lambda: (home.skills_dir / "standup" / "SKILL.md").exists(), what="the SKILL.md")
    assert [p.name for p in (home.skills_dir / "standup").iterdir()] == ["SKILL.md"]


async def test_a_change_found_later_but_listed_in_its_place_has_no_mark(home, clock, tmp_path):
    """The mark showed on every catch-up row, also one with no newer-stamped row under it."""
    found_in_order(home, clock)
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        assert shown(screen)[0] == "MEMORY + 'Coffee at nine'"


async def test_a_change_found_after_newer_rows_says_so_in_the_list(home, clock, tmp_path):
    """The list is by id (the CLI's order): the outside edit found after the pin sits above it, and says
    when it was found after its summary (a long summary gives way to it; the detail says it too)."""
    found_after_a_pin(home, clock)
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        rows = shown(screen)
        assert rows[0] == "MEMORY + 'Coffee at nine' · ↳ found 12:01:05, made before" and "pinned skill" in rows[1]


async def test_a_proposal_hermes_staged_before_the_workbench_looked_shows_hermes_time(home, clock, tmp_path):
    """Its row showed when the workbench found it: a proposal Hermes staged an hour before read as staged
    just now. It shows Hermes's time (its record's ``created_at``), listed where it was found, marked so."""
    from engine.clock import shown_time, stamped
    from tests.hermes_support import hermes_record

    home.memory.add("memory", "Tea at four", ToolContext(actor="user"))
    staged = clock.now() - 3600
    hermes_record(
        home, "0000aa01", {"action": "add", "target": "memory", "content": "Coffee at nine"}, created_at=staged
    )
    clock.advance(5)
    home.approvals.catch_up()  # (as the app's watcher does when it starts)
    async with make_app(home, tmp_path).run_test(size=(160, 30)) as pilot:  # (room for the mark)
        screen = await open_mode(pilot, "6", TimelineScreen)
        table = screen.query_one(TimelineList)
        found = shown_time(clock.now(), "%H:%M:%S")
        assert shown(screen)[0] == (
            f"staged memory proposal 0000aa01 in Hermes: add to memory: Coffee at nine · ↳ found {found}, staged before"
        )
        assert str(table.get_row_at(0)[0]) == shown_time(staged, table.shape.when)
        assert f"Hermes staged it at {stamped(staged, seconds=True)}" in str(
            screen.query_one("#timeline-detail").render()
        )


async def test_a_proposal_hermes_stamped_in_1970_shows_when_it_was_found(home, clock, tmp_path):
    """A record whose `created_at` is 0 (Hermes's clock was wrong) was listed as staged in 1970. Its row
    shows when the workbench found it, unmarked, and the detail says the record's time is impossible."""
    from engine.clock import shown_time
    from tests.hermes_support import hermes_record

    hermes_record(home, "0000aa03", {"action": "add", "target": "memory", "content": "Lunch at one"}, created_at=0)
    clock.advance(5)
    home.approvals.catch_up()
    async with make_app(home, tmp_path).run_test(size=(160, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        table = screen.query_one(TimelineList)
        assert shown(screen)[0] == "staged memory proposal 0000aa03 in Hermes: add to memory: Lunch at one"
        assert str(table.get_row_at(0)[0]) == shown_time(clock.now(), table.shape.when)
        detail = " ".join(str(screen.query_one("#timeline-detail").render()).split())
        assert "its record holds an impossible time (created_at 0, not after 1970 began" in detail


@pytest.mark.parametrize(
    ("size", "spec", "after"), [((120, 40), "%H:%M:%S", ", staged before"), ((80, 24), "%H:%M", "")]
)
async def test_a_long_summary_gives_way_to_the_found_later_mark(home, clock, tmp_path, size, spec, after):
    """A long summary was cut where the list ends and took the mark with it: a row dated an hour before the
    rows under it, with nothing saying why, looked misordered. Its tail gives way to the mark, short when
    narrow (the detail says it whole). At 80 columns the mark counts toward the year and session giving way:
    they kept their room and left `staged memory… · ↳ found 22:06`."""
    from engine.clock import shown_time
    from tests.hermes_support import hermes_record

    home.memory.add("memory", "Tea at four", ToolContext(actor="user"))
    long = "Staging DB lives on db-stage-2 since the November migration, " * 3
    hermes_record(
        home, "0000aa02", {"action": "add", "target": "memory", "content": long}, created_at=clock.now() - 3600
    )
    clock.advance(5)
    home.approvals.catch_up()
    found = f"found {shown_time(clock.now(), spec)}{after}"
    async with make_app(home, tmp_path).run_test(size=size) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        table = screen.query_one(TimelineList)
        what = str(table.get_row_at(0)[-1])
        assert what.startswith("staged memory proposal 0000aa02") and what.endswith(f"… · ↳ {found}"), what
        assert "Tea at four" in str(table.get_row_at(1)[-1])


async def test_a_cut_summary_never_ends_inside_a_number(home, tmp_path):
    """The list cut summaries anywhere (`Loop note 18…` for note 186), as the CLI did: both now leave a
    number whole or out (``engine.textsafety.cut_end``)."""
    import re

    full = [
        f"Loop {n} retried 1870 times, 18800 waits, 189 pages, 1900 alerts, 19100 logs and 1920 runs"
        for n in (186, 187)
    ]
    for text in full:
        home.memory.add("memory", text, ToolContext(actor="user"))
    async with make_app(home, tmp_path).run_test(size=(80, 24)) as pilot:
        await open_mode(pilot, "6", TimelineScreen)
        cuts = []
        for columns in range(60, 141, 3):
            await pilot.resize_terminal(columns, 24)
            await settle(pilot)
            cuts += re.findall(r"(Loop [^…│]*)…", screen_text(pilot.app))
        assert len(cuts) > 20
        for kept in cuts:
            assert any(t.startswith(kept) and not (kept[-1].isdigit() and t[len(kept)].isdigit()) for t in full), kept


async def test_enter_on_a_decided_proposal_lists_its_rows_here(home, tmp_path):
    """Enter on a decided proposal's row first opened an empty Approvals screen with nothing to say why, then
    one that said "its Timeline rows say how it was decided": the person was sent away from the rows it
    pointed to. It stays on the Timeline now, filtered to that proposal's rows."""
    (home.root / "config.yaml").write_text("memory:\n  write_approval: true\n")
    home.reload_config()
    home.memory.add("memory", "Waiting for review", ToolContext(actor="agent"))
    home.memory.add("memory", "Another proposal", ToolContext(actor="agent"))
    decided, other = (record.id for record in home.approvals.list())
    assert home.approvals.approve(decided)["success"]
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        await cursor_to(pilot, screen, f"approved memory proposal {decided}")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "is no longer pending" in status_of(screen), what="the status")
        assert pilot.app.screen is screen
        assert screen.query_one("#timeline-search", Input).value == f"target:{decided}"
        await wait_for(pilot, lambda: all(decided in what for what in shown(screen)), what="its rows")
        assert any(f"approved memory proposal {decided}" in what for what in shown(screen))
        assert not any(other in what for what in shown(screen))


def listed_rows(app) -> int:
    """How many of the list's rows are drawn (each starts with its date)."""
    return sum(1 for line in screen_text(app).splitlines() if line[:3].startswith("│ ") and line[2].isdigit())


async def test_at_60x20_the_list_keeps_its_rows_beside_a_long_detail_and_a_status(home, tmp_path):
    """At 60x20 an eight-line detail left the list 4 rows, and a four-line status none (its header alone)."""
    said = ToolContext(session_id="20261130_120000_4f9a2c", message_id=7)  # the detail names its message too
    for n in range(12):
        home.memory.add("memory", f"Fact {n}: " + "the deploy runbook lives in the ops wiki, " * 4, said)
    async with make_app(home, tmp_path).run_test(size=(60, 20)) as pilot:
        screen, _ = await focused_table(pilot)
        assert listed_rows(pilot.app) >= 8
        detail = screen_text(pilot.app).splitlines()[-2]  # cut where its pane ends, and saying so
        assert detail.rstrip().endswith("…"), detail
        screen.show_status("A status of four lines: " + "it says what happened and what to do next. " * 4)
        await settle(pilot)
        assert screen.query_one("#status", Static).size.height == 4
        assert listed_rows(pilot.app) >= 4


async def test_v_reads_a_detail_its_short_pane_cuts_whole_and_is_offered_only_then(home, tmp_path):
    """At 60x20 the detail keeps 4 lines: an outside edit's ``why:`` (how the workbench found it) was cut
    away behind a …, and no key there read the rest."""
    memory = home.memories_dir / "MEMORY.md"
    memory.write_text("Hand note 0", encoding="utf-8")
    assert home.memory.record_external_change("memory")  # (the file's first look)
    memory.write_text("Hand note 0\n§\nThe release train leaves on Thursdays; " + "a hand-written note, " * 6)
    assert home.memory.record_external_change("memory")
    async with make_app(home, tmp_path).run_test(size=(60, 20)) as pilot:
        screen, _ = await focused_table(pilot)
        row, _ = screen.table.current
        whole = "\n".join(detail_lines(row, opens=" · g opens it"))
        assert "\nwhy: " in whole and "why:" not in screen_text(pilot.app)  # (cut away here)
        assert await footer_labels(pilot, "v") == {"v": "Detail"}
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ReadDialog), what="the whole detail")
        assert pilot.app.screen.query_one(HangingText).text == whole
        await pilot.press("escape")
        await wait_for(pilot, lambda: pilot.app.screen is screen, what="the Timeline again")
        await pilot.resize_terminal(120, 40)  # room for all of it: nothing to offer
        await settle(pilot)
        assert "why:" in screen_text(pilot.app) and await footer_labels(pilot, "v") == {}


async def test_a_detail_cut_at_a_summary_that_goes_on_ends_in_one_ellipsis(home, tmp_path):
    """At 60x20 the demo's staged skill read ``— Month-end invoice run checklist for the ledger service……``:
    the summary's own … (its description goes on) and the pane's cut."""
    home.config_path.write_text("skills:\n  write_approval: true\n", encoding="utf-8")
    home.reload_config()
    description = "Month-end invoice run checklist for the ledger service"
    content = f"---\nname: month-end-close\ndescription: {description}\n---\n# Close\n1. Pause the backfill.\n"
    create = {"action": "create", "name": "month-end-close", "category": "billing", "content": content}
    assert skill_manage_tool(home, create, ToolContext(session_id="20261130_120000_a1b2c3", message_id=7)).get("staged")
    async with make_app(home, tmp_path).run_test(size=(60, 20)) as pilot:
        screen, _ = await focused_table(pilot)
        detail = str(screen.query_one("#timeline-detail").render())
        assert screen.detail_cut and detail.endswith("…") and "……" not in detail, detail


async def test_a_filtered_timeline_watches_only_the_newest_outside_rows_for_a_credit(home, tmp_path, monkeypatch):
    """The set of outside rows a filtered Timeline watches grew by each live reload's, with no bound while
    the TUI stayed open: it keeps the newest ``UNCREDITED_MOST`` (3 here)."""
    monkeypatch.setattr(timeline_screen, "UNCREDITED_MOST", 3, raising=False)
    memory = home.memories_dir / "MEMORY.md"
    memory.write_text("Hand note 0", encoding="utf-8")
    assert home.memory.record_external_change("memory")  # (the file's first look: no edit yet)
    async with make_app(home, tmp_path).run_test(size=(120, 40)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        await pilot.press("slash", *"actor:agent", "enter")
        await settle(pilot)
        for n in range(1, 7):  # six edits by hand, each reloading the list live
            memory.write_text("\n§\n".join(f"Hand note {k}" for k in range(n + 1)), encoding="utf-8")
            assert home.memory.record_external_change("memory")
            newest = Timeline(home).uncredited(0)[0]
            await wait_for(pilot, lambda newest=newest: newest in screen.uncredited, what="the edit watched")
        outside = Timeline(home).uncredited(0)
        assert len(outside) > 3 and screen.uncredited == set(outside[:3])


async def test_the_search_hint_reads_whole_or_ends_with_an_ellipsis_never_on_a_comma(home, tmp_path):
    """At 60 columns the hint showed the first line Textual wrapped it to: `…subsystem:skills,`."""
    async with make_app(home, tmp_path).run_test(size=(60, 20)) as pilot:
        await open_mode(pilot, "6", TimelineScreen)
        hint = screen_text(pilot.app).splitlines()[2].strip("▊▎ ")
        assert hint == "search (/): words, actor:review, subsystem:skills, …"
        await pilot.resize_terminal(120, 20)
        await settle(pilot)
        hint = screen_text(pilot.app).splitlines()[2].strip("▊▎ ")
        assert hint == "search (/): words, actor:review, subsystem:skills, target:, session:"


async def test_at_60_columns_the_year_and_the_session_column_give_way_to_the_summaries(home, tmp_path):
    """At 60 columns the summaries had 13 to 17 cells (`staged skills pr…`) beside the year and the session
    column, which the detail pane names whole anyway."""
    said = ToolContext(session_id="20261130_120000_4f9a2c", message_id=7)
    home.memory.add("memory", "The deploy runbook lives in the ops wiki under Platform", said)
    async with make_app(home, tmp_path).run_test(size=(60, 20)) as pilot:
        await open_mode(pilot, "6", TimelineScreen)

        def row_line() -> str:
            return next(line for line in screen_text(pilot.app).splitlines() if "MEMORY +" in line)

        assert row_line().startswith("│ 11-30 12:00  agent  MEMORY + 'The deploy runbook lives")
        await pilot.resize_terminal(100, 20)  # room enough: the year and the session are back
        await settle(pilot)
        assert row_line().startswith("│ 2026-11-30 12:00  agent  …120000_4f9a2c  MEMORY + 'The deploy runbook")


async def test_a_commit_to_workbench_db_that_leaves_the_journal_as_shown_redraws_nothing(home, tmp_path, monkeypatch):
    """The watcher follows the journal's commits (another process's credit), and a commit may leave the rows
    shown as they were: each redrew the whole list for nothing (review19: 65 ms of CPU a time, on every commit of
    the TUI's own index upkeep then, which the watcher has since left out)."""
    for text in ("One note", "Two notes", "Three notes"):
        home.memory.add("memory", text)
    live_pages, drawn = [], []
    page, show = Timeline.page, TimelineList.show
    monkeypatch.setattr(Timeline, "page", lambda self, **kw: (live_pages.append(kw["after_id"]), page(self, **kw))[1])
    monkeypatch.setattr(TimelineList, "show", lambda self, *a, **kw: (drawn.append(a[0]), show(self, *a, **kw))[1])
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        await wait_for(pilot, lambda: any("Three notes" in what for what in shown(screen)), what="the rows")
        await settle(pilot)
        live_pages.clear()
        before = len(drawn)
        other = sqlite3.connect(home.journal.path)  # (another connection: a journal row rewritten as it was)
        with other:
            other.execute("UPDATE journal SET detail = detail WHERE id = 1")
        other.close()
        await wait_for(pilot, lambda: any(after is not None for after in live_pages), what="the live reload")
        await settle(pilot)
        assert len(drawn) == before
        home.memory.add("memory", "Four notes")  # a change still shows
        await wait_for(pilot, lambda: any("Four notes" in what for what in shown(screen)), what="the new row")


async def test_a_cut_summary_or_group_title_ends_before_the_word_it_would_split(home, tmp_path):
    """At 80 columns the list cut prose inside a word (`MEMORY + 'Hotfix branches are cut f…`, a group's
    `1 memo…`); it is cut before that word now, as the CLI's listings cut it (``cut_cells`` with ``words``)."""
    home.memory.add("memory", "Hotfix branches are cut from the latest release tag, never from main.", AGENT)
    for n in ("one", "two"):
        home.memory.add("memory", f"Reviewed note {n} about the staging deploy pipeline and its owners", REVIEW)
    async with make_app(home, tmp_path).run_test(size=(240, 24)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        table = screen.query_one(TimelineList)
        whole = {key: str(table.get_row(key)[-1]) for key in table.rows}
        cuts = []
        for columns in range(60, 121, 3):
            await pilot.resize_terminal(columns, 24)
            await settle(pilot)
            for key in table.rows:
                what = str(table.get_row(key)[-1])
                if what.endswith("…"):
                    cuts.append((what[:-1], whole[key]))
        assert len(cuts) > 40 and any(full.lstrip().startswith("▾") for _, full in cuts), cuts
        for kept, full in cuts:
            assert full.startswith(kept) and full[len(kept)] == " ", (kept, full)


@pytest.mark.parametrize("columns", range(60, 100, 5))
async def test_the_detail_never_folds_inside_a_grapheme(home, tmp_path, columns):
    """The detail pane was left to Textual's fold by cells where it fit: a summary holding half-width ﾃﾞ
    started a line with the voiced mark alone."""
    assert home.memory.add("memory", f"Deploy with {KANA * 2} first", AGENT)["success"]  # (longer than a line)
    async with make_app(home, tmp_path).run_test(size=(columns, 30)) as pilot:
        detail = (await open_mode(pilot, "6", TimelineScreen)).query_one("#timeline-detail", Static)
        await wait_for(pilot, lambda: "ﾃﾞﾌﾟﾛｲ" in "".join(drawn_in(detail)), what="the row's detail")
        assert not parted(drawn_in(detail)), drawn_in(detail)


async def test_a_line_break_in_a_summary_shows_as_on_approvals(home, tmp_path):
    """The Timeline showed a staged entry's line break as a space (``Tea: green``) and Approvals as ⏎
    (``Tea:⏎green``): the same proposal read two ways. Both show ⏎ now, as every one-line summary does."""
    from textual.widgets import OptionList

    home.memory.add("memory", "Kettle:\nDescale weekly", ToolContext(actor="user"))
    home.config_path.write_text("memory:\n  write_approval: true\n", encoding="utf-8")
    home.reload_config()
    home.memory.add("memory", "Tea:\ngreen", AGENT)
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        await wait_for(pilot, lambda: len(shown(screen)) == 2, what="the rows")
        assert any(what.endswith("add to memory: Tea:⏎green") for what in shown(screen)), shown(screen)
        assert "MEMORY + 'Kettle:⏎Descale weekly'" in shown(screen)
        approvals = await open_mode(pilot, "4", ApprovalsScreen)
        queue = approvals.query_one("#queue", OptionList)
        await wait_for(pilot, lambda: queue.option_count == 1, what="the queue")
        assert str(queue.get_option_at_index(0).prompt).endswith("add to memory: Tea:⏎green")


def held_page(monkeypatch, held) -> tuple:
    """The first Timeline page read whose arguments ``held`` picks waits for the first event returned; the
    second is set once it waits (a write, or another load, can then come between it and its answer)."""
    import threading

    release, reading = threading.Event(), threading.Event()
    page = Timeline.page

    def slow_page(self, **kw):
        if held(kw) and not reading.is_set():
            reading.set()
            release.wait(30)
        return page(self, **kw)

    monkeypatch.setattr(Timeline, "page", slow_page)
    return release, reading


async def test_a_live_reload_while_a_filter_is_read_never_splices_into_the_unfiltered_rows(home, tmp_path, monkeypatch):
    """A write arriving while a typed filter's first page was read: the live reload asked for the rows newer
    than those shown (the unfiltered ones), which cancelled the first page, so the filtered newer rows were
    spliced on top of every unfiltered row and the list stayed unfiltered under the filter."""
    learn(home)
    release, reading = held_page(monkeypatch, lambda kw: kw.get("actor") == "agent" and kw.get("after_id") is None)
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        assert len(shown(screen)) == 5
        screen.query_one("#timeline-search", Input).value = "actor:agent"
        await wait_for(pilot, reading.is_set, what="the filter's first page read")
        home.memory.add("memory", "An agent note written meanwhile", ToolContext(actor="agent"))
        screen.reload()  # (what the write's event asks for)
        await settle(pilot)
        release.set()
        await wait_for(
            pilot,
            lambda: (
                shown(screen) == ["MEMORY + 'An agent note written meanwhile'", "MEMORY + 'Project uses Postgres 16'"]
            ),
            what="the filtered rows only",
        )


async def test_a_line_break_in_a_revert_title_a_why_or_a_path_shows_as_in_a_summary(home, tmp_path, clock):
    """A reverted group's title (`revert of …`), a row's `why` and the path an outside skill change names folded
    a line break into a space, so a session id, a skill's name or a file's of two lines read as one; they show ⏎
    now, as every one-line summary does (``flat_line``)."""
    from tests.hermes_support import hermes_record

    review = ToolContext(actor="review", session_id="s\n1", message_id=7)
    for entry in ("Deploys go through staging", "Prefers short answers"):
        assert home.memory.add("memory", entry, review)["success"]
    assert Timeline(home).revert("review:s\n1:7")["success"]
    folder = write_skill(home, "brew")
    home.skills.outside.record()
    (folder / "references").mkdir()
    (folder / "references" / "new\nline.md").write_text("# Notes\n", encoding="utf-8")
    home.skills.outside.record()
    home.config_path.write_text("skills:\n  write_approval: true\n", encoding="utf-8")
    home.reload_config()
    payload = {"action": "patch", "name": "br\new", "old_string": "Boil.", "new_string": "Heat."}
    hermes_record(home, "0000bb01", payload, created_at=clock.now(), subsystem="skills")
    assert not home.approvals.approve("0000bb01")["success"]
    async with make_app(home, tmp_path).run_test(size=(120, 40)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        assert "▾ revert of review:s⏎1:7 (2 rows): 2 memory entries undone" in shown(screen), "\n".join(shown(screen))
        await cursor_to(pilot, screen, "approval failed")
        assert "why: Skill 'br⏎ew' not found." in str(screen.query_one("#timeline-detail").render())
        await cursor_to(pilot, screen, "of skill 'brew' created outside")
        detail = str(screen.query_one("#timeline-detail").render())
        assert "support files with the workbench's last look: brew/references/new⏎line.md is new since" in detail


async def test_a_session_id_with_a_line_break_shows_whole_in_its_column(home, tmp_path):
    """The session column drew `s` for a session `s⏎1`, a cell showing only the id's first line, where the
    detail line below names it `s⏎1`: the column shows the id as the detail does."""
    assert home.memory.add("memory", "Deploys go through staging", ToolContext(actor="agent", session_id="s\n1"))
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        await wait_for(pilot, lambda: shown(screen) == ["MEMORY + 'Deploys go through staging'"], what="the row")
        [row] = [line for line in screen_text(pilot.app).splitlines() if line.startswith("│ 20")]  # (the table's)
        assert re.search(r" agent +s⏎1 +MEMORY \+ ", row), row
        assert "session s⏎1" in str(screen.query_one("#timeline-detail").render())


@pytest.mark.parametrize("size", [(120, 30), (100, 24)])
async def test_a_rewrite_cut_to_the_list_keeps_both_versions_where_they_differ(home, tmp_path, size):
    """A user trial, Hermes rewriting its own entries: the list read `MEMORY '[L869-124] replaced 数据库迁移
    r159' → '[L869-124] replaced…` at 120 columns. Cut at its end, a replace's summary lost what the entry
    became. Both versions are cut around where they differ now, so both show (at 80 columns, a few
    characters of each around the change: the column has 34 cells)."""
    home.memory.add("memory", "[L869-124] replaced 数据库迁移 r159", AGENT)
    home.memory.replace("memory", "数据库迁移 r159", "[L869-124] replaced grafana r187", AGENT)
    async with make_app(home, tmp_path).run_test(size=size) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        await wait_for(pilot, lambda: len(screen.rows) == 2, what="the rows")
        [what] = [what for what in shown(screen) if "→" in what]
        assert "数据库迁移 r159'" in what and "grafana r187'" in what, what
        assert screen.rows[0].summary.endswith("→ '[L869-124] replaced grafana r187'")  # (the CLI's, whole)


@pytest.mark.parametrize("held", ["live reload", "older page"])
async def test_an_older_page_and_a_live_reload_asked_together_both_come(home, tmp_path, monkeypatch, held):
    """One page is read at a time (one worker group), so each cancelled the other: the cursor nearing the
    list's end while a write's live reload was read, and the write's row never showed (until another write
    came); a write while an older page was read (`m`, or the cursor near the end), and it never came."""
    monkeypatch.setattr(timeline_screen, "PAGE", 30)  # (the cursor on the first row is not near its end)
    for n in range(32):
        home.memory.add("memory", f"fact {n}", ToolContext(actor="user"))
    asked = "after_id" if held == "live reload" else "before_id"
    release, reading = held_page(monkeypatch, lambda kw: kw.get(asked) is not None)
    newest = "MEMORY + 'fact written meanwhile'"
    async with make_app(home, tmp_path).run_test(size=(120, 30)) as pilot:
        screen = await open_mode(pilot, "6", TimelineScreen)
        assert len(shown(screen)) == 30
        if held == "older page":
            screen._more()  # (what the cursor nearing the end asks for)
            await wait_for(pilot, reading.is_set, what="the older page read")
        home.memory.add("memory", "fact written meanwhile", ToolContext(actor="user"))
        if held == "live reload":
            await wait_for(pilot, reading.is_set, what="the write's live reload read")
            screen._more()
            await settle(pilot)
        else:
            await wait_for(pilot, lambda: newest in shown(screen), what="the write's live reload")
        release.set()
        both = [newest, "MEMORY + 'fact 31'", "MEMORY + 'fact 1'", "MEMORY + 'fact 0'"]
        await wait_for(pilot, lambda: shown(screen)[:2] + shown(screen)[-2:] == both, what="both pages")
        assert len(shown(screen)) == 33 and not screen.loading_more
