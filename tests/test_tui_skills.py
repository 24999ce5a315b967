"""The Skills screen: fuzzy filter, files shown literally, curator actions through the screen."""

from __future__ import annotations

import re
import threading

import pytest
from rich.cells import cell_len
from textual.widgets import Input, OptionList, Static
from textual.widgets._footer import FooterKey

from engine.clock import shown_time
from engine.demo import seed_demo_home
from engine.skills.manage import skill_manage_tool
from engine.skills.usage import SHARED_WITH_OLD, parse_iso
from engine.tools import BACKGROUND_REVIEW
from tests.screens_seed import open_mode, screen_text, seed_skills
from tests.test_skills_support import ctx, skill_md
from tests.tui_support import drawn_in, footer_keys, footer_labels, make_app, settle, wait_for
from widgets.code_view import CodeView, highlight_file
from widgets.skill_list import SkillList, SkillRow, fuzzy_filter
from widgets.skill_meta import SkillMeta, meta_lines
from widgets.timeline_list import TimelineList
from workbench.screens.dialogs import ConfirmDialog
from workbench.screens.help import HelpScreen
from workbench.screens.skills import DaysDialog, LedgerDialog, SkillsScreen, shown_part
from workbench.screens.timeline import TimelineScreen

pytestmark = pytest.mark.anyio
# the dry run's line for seed_skills's tomato-care 45 days on: the change, and why the rule decides it
STALE_TOMATO = "mark stale  tomato-care (unused since it was made 45 days ago; the stale limit is 30 days)"
DAY = 86400


async def open_skills(pilot) -> SkillsScreen:
    return await open_mode(pilot, "3", SkillsScreen)


def names(screen) -> list[str]:
    return [skill.name for skill in screen.query_one(SkillList).rows_by_key.values()]


def state_of(home, name: str) -> str:
    return next(i.state for i in home.skills.list(include_archived=True) if i.name == name)


async def select(pilot, screen, name: str) -> None:
    table = screen.query_one(SkillList)
    table.focus()
    table.move_cursor(row=table.get_row_index(table.key_of(name)))
    await settle(pilot)
    assert screen.current.name == name


async def files_of(pilot, screen, name: str, count: int) -> tuple[OptionList, list[str]]:
    """Select skill ``name``, wait for its Files list to hold ``count`` rows: the list and what each row shows."""
    await select(pilot, screen, name)
    files = screen.query_one("#skills-files", OptionList)
    await wait_for(pilot, lambda: files.option_count == count, what="the files")
    return files, [str(files.get_option_at_index(i).prompt) for i in range(files.option_count)]


async def test_fuzzy_filter_narrows_the_library(home, tmp_path):
    seed_skills(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_skills(pilot)
        assert names(screen) == ["docker-prune", "git-rebase", "tomato-care"]
        await pilot.press("slash", *"gti rbase")  # typos still find it
        await settle(pilot)
        assert names(screen) == ["git-rebase"]
        assert str(screen.query_one(SkillList).border_title) == "1 of 3 skills"  # (it said "1 skill")
        await pilot.press("enter")
        await settle(pilot)
        assert screen.current.name == "git-rebase"
        files = screen.query_one("#skills-files", OptionList)
        listed = [files.get_option_at_index(i).id for i in range(files.option_count)]
        assert listed == ["SKILL.md", "references/flags.md"]
        screen.query_one(Input).value = ""  # clearing the filter brings every skill back
        await settle(pilot)
        assert len(names(screen)) == 3


async def test_a_skill_whose_skill_md_does_not_parse_is_marked_and_says_why(home, tmp_path):
    """Only doctor named it; the screen listed it like any other, its guessed description shown."""
    seed_skills(home)
    (home.skills_dir / "loose").mkdir()
    (home.skills_dir / "loose" / "SKILL.md").write_text("---\nname: loose\ndescription: [oops\n---\nBody\n")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_skills(pilot)
        await select(pilot, screen, "loose")
        text = screen_text(app)
        assert "⚠ loose" in text and "⚠ git-rebase" not in text
        assert "⚠ does not parse" in text  # and where, first, under the file and in the details at 80 columns
        assert "╰─ ⚠ Line 4, column 1: did not find expected '… ─╯" in text
        assert "Line 4, column 1: did" in " ".join(drawn_in(screen.query_one(SkillMeta)))
        await select(pilot, screen, "git-rebase")
        assert "does not parse" not in screen_text(app)


async def test_skill_files_are_shown_literally_and_linked_files_open(home, tmp_path):
    seed_skills(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_skills(pilot)
        await select(pilot, screen, "git-rebase")
        await wait_for(pilot, lambda: screen.shown == ("git-rebase", "SKILL.md"), what="SKILL.md shown")
        text = screen_text(app)
        assert "[red]Never[/] force." in text and "<memory-context>" in text
        files = screen.query_one("#skills-files", OptionList)
        files.focus()
        await pilot.press("down")
        await wait_for(pilot, lambda: screen.shown == ("git-rebase", "references/flags.md"), what="linked file")
        assert "`--onto` moves a range." in screen_text(app)
        views = next(i.view_count for i in home.skills.list() if i.name == "git-rebase")
        assert views == 0  # looking in the UI is not the agent using the skill


async def test_file_names_in_a_skill_never_drive_the_terminal(home, tmp_path):
    """A support file Hermes wrote as `references/\x1b[2Jevil.md` cleared the terminal when its skill was
    opened: the files list and the code pane's title drew the name raw."""
    seed_skills(home)
    refs = home.skills.find("git-rebase").path / "references"
    for name in ("\x1b[2Jevil.md", "\u202egpj.md", "new\nline.md"):
        (refs / name).write_text("hostile name\n")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_skills(pilot)
        files, shown = await files_of(pilot, screen, "git-rebase", 5)
        assert "references/␛[2Jevil.md" in shown and "references/<U+202E>gpj.md" in shown, shown
        assert "references/new⏎line.md" in shown
        files.focus()
        files.highlighted = next(i for i, text in enumerate(shown) if "evil" in text)
        await wait_for(pilot, lambda: screen.shown == ("git-rebase", "references/\x1b[2Jevil.md"), what="the file")
        text = screen_text(app)
        assert "references/␛[2Jevil.md" in text and "\x1b" not in text and "\u202e" not in text


async def test_a_file_whose_name_holds_control_characters_says_so_not_that_a_path_was_typed(home, tmp_path):
    """Selecting it said `file_path must not hold control characters.`, as if the user had typed a bad path."""
    seed_skills(home)
    refs = home.skills.find("git-rebase").path / "references"
    (refs / "bad\x1b]0;PWNED\x07\x1b[2Jname.md").write_text("never shown\n")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_skills(pilot)
        await select(pilot, screen, "git-rebase")
        files = screen.query_one("#skills-files", OptionList)
        await wait_for(pilot, lambda: files.option_count == 3, what="the files")
        files.focus()
        files.highlighted = next(i for i in range(3) if "PWNED" in str(files.get_option_at_index(i).prompt))
        await wait_for(pilot, lambda: screen.shown and "PWNED" in screen.shown[1], what="the file")
        text = screen_text(app)
        assert "This file's name holds control characters" in text and "Rename the file to view it." in text
        assert "file_path must not" not in text and "never shown" not in text
        assert "\x1b" not in text and "\x07" not in text


async def test_a_huge_skill_md_says_where_the_pane_cut_it_and_that_it_is_too_long(home, tmp_path):
    """A 5 MB SKILL.md stopped at 400,000 characters mid-phrase, with no notice, and nothing said it
    was fifty times the limit a write allows."""
    seed_skills(home)
    (home.skills_dir / "huge").mkdir()
    line = "Water the tomatoes before noon, never after. " * 2 + "\n"
    (home.skills_dir / "huge" / "SKILL.md").write_text("---\nname: huge\ndescription: d\n---\n" + line * 55_000)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_skills(pilot)
        await select(pilot, screen, "huge")
        await wait_for(pilot, lambda: screen.shown == ("huge", "SKILL.md"), what="SKILL.md shown")
        notice = "SKILL.md content is 5,005,034 characters (limit: 100,000)"  # under the file
        marks = (notice, "⚠ huge", "⚠ too long")  # (drawn by workers of their own, beside the pane and in the list)
        await wait_for(pilot, lambda: all(mark in screen_text(app) for mark in marks), what="its marks")
        text = screen_text(app)
        assert "⚠ huge" in text and "⚠ too long" in text and "does not parse" not in text
        screen.query_one(CodeView).focus()
        await pilot.press("end")
        await settle(pilot)
        text = screen_text(app)
        assert "⋯ Cut here: this pane shows the first 399,979 of 5,005,034 characters." in text
    shown = shown_part((home.skills_dir / "huge" / "SKILL.md").read_text(), "skills/huge/SKILL.md")
    assert shown.endswith("never after. \n\n" + shown.rsplit("\n\n", 1)[1])  # whole lines, then the notice
    assert shown.endswith("characters. Read it whole in an editor:\nskills/huge/SKILL.md")


async def test_columns_fit_their_cells_as_soon_as_the_skills_are_shown(home, tmp_path):
    """DataTable widens columns for new rows only when it is next idle: on a busy machine the list was
    seen five seconds after it was filled still cut at the headers' widths ("⚠ hug", "activ")."""
    seed_skills(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_skills(pilot)
        table = screen.query_one(SkillList)
        await wait_for(pilot, lambda: table.row_count > 0, what="the skills")
        rows = list(table.rows_by_key.values())
        for column in table.columns.values():  # as a table that never measured a row
            column.content_width = 0
        table.show(rows)  # and, before any idle turn, the widths are known
        assert table.columns["skill"].content_width == max(len(row.name) for row in rows)
        assert table.columns["state"].content_width == len("active")
        assert table.columns["activity"].content_width >= len("never")


HERMES_PATCHES = """
import json
from tools.skill_usage import bump_patch, get_record
bump_patch("tomato-care")
print(json.dumps(get_record("tomato-care")["last_patched_at"]))
"""


@pytest.mark.slow  # Hermes's own skill_usage code in its own process
async def test_the_table_dates_a_skill_by_its_last_activity_as_the_curator_ages_it(home, tmp_path, hermes):
    """Hermes patched a skill last used 48 days ago: the table said ``stale`` beside ``last used`` 48 days
    back, and after a pass ``active`` beside the same date, though the Curator (ours and Hermes's, whose
    ``curator status`` says ``last_activity``) ages a skill by its last use, view or patch."""
    seed_skills(home)
    home.skills.usage.set_fields("tomato-care", state="stale", use_count=2, last_used_at="2026-10-20T10:00:00+00:00")
    patched = hermes.json(home.root, HERMES_PATCHES)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        table = (await open_skills(pilot)).query_one(SkillList)
        await wait_for(pilot, lambda: table.row_count > 0, what="the skills")
        cell = str(table.get_cell(table.key_of("tomato-care"), "activity"))
        assert cell == shown_time(parse_iso(patched), "%Y-%m-%d") and cell != "2026-10-20"
        assert str(table.get_cell(table.key_of("docker-prune"), "activity")) == "never"


async def test_two_active_folders_declaring_one_name_open_each_its_own(home, tmp_path):
    """Two folders whose SKILL.md declare the same name listed as identical rows, and opening one said
    "Ambiguous skill name: use the category/name path", which a flat skill has no way to follow."""
    for folder, body in (("twin-a", "First twin."), ("twin-b", "Second twin.")):
        (home.skills_dir / folder).mkdir(parents=True)
        (home.skills_dir / folder / "SKILL.md").write_text(f"---\nname: twin\ndescription: d\n---\n\n{body}\n")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_skills(pilot)
        table = screen.query_one(SkillList)
        await wait_for(pilot, lambda: len(table.rows_by_key) == 2, what="both rows")
        assert sorted(str(table.get_cell(path, "skill")) for path in table.rows_by_key) == [
            "twin (twin-a)",
            "twin (twin-b)",
        ]
        table.focus()
        for path, body in (("twin-a", "First twin."), ("twin-b", "Second twin.")):
            table.move_cursor(row=table.get_row_index(path))
            await wait_for(pilot, lambda p=path: screen.shown == (p, "SKILL.md"), what="its SKILL.md")
            text = screen_text(app)
            assert body in text and "Ambiguous" not in text


async def test_a_key_that_cannot_act_on_the_selected_skill_is_not_offered_and_says_why(home, tmp_path):
    """r Restore showed on an active skill, and pressing it said "Could not restore …: No archived skill
    named …"; a and p showed on an archived one, which the engine refuses as well. Now r takes a's
    place on an archived skill (with p Unpin, a dimmed r did not leave ? Help room at 80 columns);
    p, dimmed there, said nothing when pressed (a trial took it for broken): it says why. The footer
    offered p Pin there, dimmed, a key that cannot act on the row: it leaves it, and p still says why."""
    seed_skills(home)
    home.curator.archive("docker-prune")
    app = make_app(home, tmp_path, watch_files=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        screen = await open_skills(pilot)
        active = next(name for name in names(screen) if state_of(home, name) == "active")
        await select(pilot, screen, active)
        assert await footer_keys(pilot, "a", "r", "p") == {"a": True, "p": True}
        await pilot.press("r")
        await settle(pilot)
        assert not app._notifications and state_of(home, active) == "active"
        await select(pilot, screen, "docker-prune")
        assert await footer_keys(pilot, "a", "r", "p") == {"r": True}
        await pilot.press("p", "a")  # (a is hidden there: r is in its place)
        await settle(pilot)
        assert [n.message for n in app._notifications] == [
            "Skill 'docker-prune' is archived: restore it first (r), then pin it."
        ]
        assert not isinstance(app.screen, ConfirmDialog) and state_of(home, "docker-prune") == "archived"
        await pilot.press("r")
        await wait_for(pilot, lambda: screen.current.state == "active", what="the restored row")
        assert await footer_keys(pilot, "a", "r", "p") == {"a": True, "p": True}  # the same row, now active


async def test_c_curate_is_in_the_footer_at_80_columns_even_beside_unpin(home, tmp_path):
    """c was in help only, at any width; then from 81 columns only, beside p Unpin (a user trial at 80
    columns did not find it). At 80 the footer leaves out the key that does nothing to the pinned skill
    selected (a, which is refused there): c keeps its place, and a still says how to unpin it."""
    seed_skills(home)
    home.curator.pin("tomato-care")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_skills(pilot)
        await select(pilot, screen, "tomato-care")
        assert await footer_labels(pilot, "c", "p") == {"c": "Curate", "p": "Unpin"}
        for width, shown in ((120, {"a": "Archive"}), (81, {"a": "Archive"}), (80, {})):  # (FOOTER_ROOM)
            await pilot.resize_terminal(width, 40)
            assert await footer_labels(pilot, "c", "p") == {"c": "Curate", "p": "Unpin"}, width
            assert await footer_labels(pilot, "a") == shown, width
            keys = app.screen.query(FooterKey)
            drawn = {k.key: k.region for k in keys if not k.has_class("-command-palette")}
            palette = min(k.region.x for k in keys if k.has_class("-command-palette"))
            assert all(region.right <= palette for region in drawn.values()), (width, drawn, palette)
        await pilot.press("a")  # left out of the footer, a still says why the pinned skill is not archived
        await wait_for(pilot, lambda: any("unpin" in n.message for n in app._notifications), what="the refusal")
        assert not isinstance(app.screen, ConfirmDialog)
        await pilot.press("c")  # (its dry run first: a pinned skill and user skills, nothing to change)
        await wait_for(
            pilot, lambda: any("nothing to change" in n.message for n in app._notifications), what="the answer"
        )


async def test_archive_and_restore_through_the_screen(home, tmp_path):
    """p read Pin on a pinned skill too, where it unpins: the footer now says what p will do."""
    seed_skills(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_skills(pilot)
        await select(pilot, screen, "docker-prune")
        await pilot.press("a")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog) and state_of(home, "docker-prune") == "active"  # asks first
        await pilot.press("y")
        await wait_for(
            pilot, lambda: screen.current is not None and screen.current.state == "archived", what="archived row"
        )
        assert await footer_labels(pilot, "a", "r", "p") == {"r": "Restore"}  # (p cannot act: not offered)
        assert state_of(home, "docker-prune") == "archived"
        await pilot.press("r")
        await wait_for(
            pilot, lambda: screen.current is not None and screen.current.state == "active", what="restored row"
        )
        assert state_of(home, "docker-prune") == "active"
        assert await footer_labels(pilot, "a", "r", "p") == {"a": "Archive", "p": "Pin"}
        await pilot.press("p")
        await wait_for(pilot, lambda: screen.current.pinned, what="pinned row")
        assert await footer_labels(pilot, "a", "r", "p", "c", "question_mark") == {
            "p": "Unpin",  # (a, refused on a pinned skill, leaves its place to c at 80 columns)
            "c": "Curate",
            "question_mark": "Help",
        }
        keys = app.screen.query(FooterKey)
        palette = min(k.region.x for k in keys if k.has_class("-command-palette"))
        assert [k.region.right <= palette for k in keys if k.key == "question_mark"] == [True]  # ? Help whole at 80
        await pilot.press("a")  # pinned: refused before any question, which a yes would only have refused
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmDialog) and state_of(home, "docker-prune") == "active"
        said = [n.message for n in app._notifications if "is pinned; unpin it first" in n.message]
        assert said == [
            "Skill 'docker-prune' is pinned; unpin it first (`workbench skills unpin docker-prune`, or p in Skills)."
        ]
        await pilot.press("p")
        await wait_for(pilot, lambda: not screen.current.pinned, what="unpinned row")
        assert await footer_labels(pilot, "p") == {"p": "Pin"}


async def test_dry_run_then_apply_exactly_that_plan(home, tmp_path):
    seed_skills(home)
    home.clock.advance(45 * DAY)  # tomato-care (made by a review) goes stale; user skills are never touched
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_skills(pilot)
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="plan dialog")
        assert app.screen.detail.split("\n\n")[0] == STALE_TOMATO
        assert state_of(home, "tomato-care") == "active"  # a dry run changes nothing
        await pilot.press("y")
        await wait_for(pilot, lambda: state_of(home, "tomato-care") == "stale", what="plan applied")
        await wait_for(
            pilot,
            lambda: (
                [s.state for s in screen.query_one(SkillList).rows_by_key.values() if s.name == "tomato-care"]
                == ["stale"]
            ),
            what="list refreshed",
        )


async def test_the_run_question_says_where_each_kind_of_change_is_recorded(home, tmp_path):
    """It said "every change is in the ledger", but a pass's stale mark is on the Timeline only."""
    from engine.timeline import Timeline

    seed_skills(home)
    home.clock.advance(45 * DAY)  # tomato-care (made by a review) goes stale
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_skills(pilot)
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
        said = app.screen.detail
        assert app.screen.question == "Run the curator now? It would make 1 change, exactly this one:"
        assert said.startswith(STALE_TOMATO + "\n\n")  # (what it would do, before anything is done)
        assert "every change is in the ledger" not in said
        assert "Every change it makes is on the Timeline. Those that move or write files" in said
        assert "are also in the ledger, where they can be rolled back." in said
        await pilot.press("y")
        await wait_for(pilot, lambda: state_of(home, "tomato-care") == "stale", what="the pass")
    assert [e.action for e in home.curator.ledger() if e.skill == "tomato-care"] == ["create"]  # no stale mark
    rows = Timeline(home).page(target="tomato-care")
    assert any(r.actor == "curator" and "stale" in r.action for r in rows), rows


async def test_a_dry_run_with_nothing_to_change_says_why_as_the_cli_does(home, tmp_path):
    """The screen said only "the curator would change nothing"; the CLI adds how many skills it checked."""

    seed_skills(home)  # nothing is old enough yet
    said = home.curator.run(dry_run=True).outcome()
    assert said == ["Curator dry run: nothing to change (1 agent-made skill checked)."]
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await open_skills(pilot)
        await pilot.press("d")
        await wait_for(
            pilot,
            lambda: any(n.message == said[0] for n in app._notifications),
            what="the dry run's outcome, in the engine's words",
        )


async def test_a_dry_run_with_nothing_to_change_names_the_merges_awaiting_review(home, tmp_path):
    from workbench.screens.skills import PlanReady

    seed_skills(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_skills(pilot)
        report = home.curator.run(dry_run=True)
        waiting = "1 consolidation it proposed awaits review in Approvals: merge \x1b[2J"
        screen.post_message(PlanReady([], report.outcome(waiting)))
        await wait_for(
            pilot,
            lambda: any("nothing to change (1 agent-made skill checked)." in n.message for n in app._notifications),
            what="the note",
        )
        assert any(n.message.endswith("awaits review in Approvals: merge ␛[2J") for n in app._notifications)


async def test_purge_asks_first_and_rollback_brings_it_back(home, tmp_path):
    seed_skills(home)
    home.curator.archive("docker-prune")
    home.clock.advance(100 * DAY)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_skills(pilot)
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, DaysDialog), what="days dialog")
        assert app.screen.query_one(Input).value == "90"  # curator.archive_after_days
        for refused in ("0", "99999999999999999999", "1.5", "abc"):  # the engine's rule, refused in place
            app.screen.query_one(Input).value = ""
            await pilot.press(*refused, "enter")  # typed: the box drops no character ("1.5" was read as 15)
            assert app.screen.query_one(Input).value == refused
            said = "0 days is refused: Hermes reads" if refused == "0" else "from 1 to 36,500"
            assert isinstance(app.screen, DaysDialog) and said in screen_text(app)
        app.screen.query_one(Input).value = "35"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="purge confirmation")
        assert "docker-prune" in app.screen.detail
        await pilot.press("n")  # refusing changes nothing
        await settle(pilot)
        assert state_of(home, "docker-prune") == "archived"
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, DaysDialog), what="days dialog")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="purge confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: "docker-prune" not in names(screen), what="purged")
        await pilot.press("l")
        await wait_for(pilot, lambda: isinstance(app.screen, LedgerDialog), what="ledger")
        assert app.screen.entries[0].action == "purge"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="rollback confirmation")
        assert re.fullmatch(r"Roll back purge of docker-prune \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\)\?", app.screen.question)
        # what it will put back, file by file, as the Timeline's revert question says
        assert "restore skills/.archive/docker-prune/SKILL.md" in app.screen.detail.splitlines()
        await pilot.press("y")
        await wait_for(pilot, lambda: "docker-prune" in names(screen), what="rolled back")
        assert state_of(home, "docker-prune") == "archived"


async def test_a_skill_written_meanwhile_appears_live(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_skills(pilot)
        assert names(screen) == [] and "No skills in this home yet" in screen_text(app)
        writer = threading.Thread(target=seed_skills, args=(home,))
        writer.start()
        writer.join()
        await wait_for(pilot, lambda: len(names(screen)) == 3, what="skills listed live")


async def test_a_skill_deleted_elsewhere_leaves_the_cursor_on_the_next_one(home, tmp_path):
    """After Hermes deleted the selected skill the cursor jumped to the top row (a user's trial)."""
    import shutil

    seed_skills(home)
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_skills(pilot)
        listed = names(screen)
        await select(pilot, screen, listed[1])
        folder = next(s.path for s in home.skills.list() if s.name == listed[1])
        shutil.rmtree(home.skills_dir / folder)
        await wait_for(pilot, lambda: len(names(screen)) == len(listed) - 1, what="the skill gone")
        await wait_for(pilot, lambda: screen.current is not None and screen.current.name == listed[2], what="next")


def test_fuzzy_filter_ranks_name_matches_first():
    rows = [SkillRow("deploy", description="ship the git tag"), SkillRow("git-tag"), SkillRow("cooking")]
    assert [r.name for r in fuzzy_filter(rows, "git")][:2] == ["git-tag", "deploy"]
    assert fuzzy_filter(rows, "  ") == rows


def test_a_skill_md_is_shown_line_for_line_around_its_closing_dashes():
    """The blank line after the closing --- was dropped, so the preview did not match the file."""
    text = "---\nname: x\n---  \n\nBody"
    assert highlight_file("SKILL.md", text).plain.rstrip("\n") == text


def test_frontmatter_is_highlighted_as_yaml_and_text_stays_literal():
    content = highlight_file("SKILL.md", "---\nname: x\n---\n# Title [bold]x[/]\n")
    assert content.plain == "---\nname: x\n---\n# Title [bold]x[/]"
    assert content.spans  # highlighted


def test_typos_in_a_name_find_the_skill_and_name_hits_come_first():
    skills = [
        SkillRow("write-release-notes", None, "Release notes; deploy notes for the staging team"),
        SkillRow("deploy-k8s", "devops", "Roll out to the cluster"),
        SkillRow("tomato-care", "garden", "Water tomatoes"),
    ]
    for typo in ("deploi", "depoly", "deply"):
        found = [s.name for s in fuzzy_filter(skills, typo)]
        assert found and found[0] == "deploy-k8s", (typo, found)
    assert [s.name for s in fuzzy_filter(skills, "deploy")][:2] == ["deploy-k8s", "write-release-notes"]
    assert [s.name for s in fuzzy_filter(skills, "tomato")] == ["tomato-care"]


async def test_the_filter_finds_a_misspelt_skill_on_the_screen(home, tmp_path):
    seed_demo_home(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_skills(pilot)
        await pilot.press("slash", *"deply", "enter")
        await settle(pilot)
        assert names(screen)[0] == "deploy-staging" and screen.current.name == "deploy-staging"


async def test_the_screen_reads_skill_files_only_through_the_library_view(home, tmp_path):
    seed_skills(home)
    (home.root / "secret.txt").write_text("TOP SECRET", encoding="utf-8")
    folder = next(home.skills_dir.rglob("git-rebase"))
    (folder / "references" / "blob.md").write_bytes(b"\xff\xfe\x00binary")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_skills(pilot)
        await select(pilot, screen, "git-rebase")
        await wait_for(pilot, lambda: screen.shown == ("git-rebase", "SKILL.md"), what="SKILL.md shown")
        screen.load_file(screen.current, "../../secret.txt")  # what a hostile file list could ask for
        await wait_for(pilot, lambda: screen.shown == ("git-rebase", "../../secret.txt"), what="the refusal")
        text = screen_text(app)
        assert "TOP SECRET" not in text and "Path traversal ('..') is not allowed." in text  # the library's refusal
        screen.load_file(screen.current, "references/blob.md")
        await wait_for(pilot, lambda: screen.shown == ("git-rebase", "references/blob.md"), what="the binary file")
        assert "[Binary file: blob.md" in screen_text(app)


@pytest.mark.parametrize(
    ("key", "screen_class", "box", "listed"),
    [("3", SkillsScreen, "#skills-filter", SkillList), ("6", TimelineScreen, "#timeline-search", TimelineList)],
)
async def test_escape_in_a_filter_box_empties_it_and_goes_back_to_the_list(
    home, tmp_path, key, screen_class, box, listed
):
    """Escape leaves the box (keys typed next are commands again, not text), as in Sessions."""
    seed_skills(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, key, screen_class)
        await pilot.press("slash", *"invo")
        await settle(pilot)
        field = screen.query_one(box, Input)
        assert field.has_focus and field.value == "invo"
        await pilot.press("escape")
        await settle(pilot)
        assert field.value == "" and isinstance(app.focused, listed)
        await pilot.press("1")  # a command again: switches to Memory
        await wait_for(pilot, lambda: app.current_mode == "memory", what="the Memory screen")
        assert field.value == ""


async def test_home_and_end_go_to_the_first_and_last_skill(home, tmp_path):
    """Home moved nothing, so home, down, down, p pinned the skill two below the one in view."""
    seed_skills(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_skills(pilot)
        table = screen.query_one(SkillList)
        await wait_for(pilot, lambda: table.row_count == 3, what="the skills")
        table.focus()
        await pilot.press("end")
        assert table.cursor_row == 2
        await pilot.press("home")
        assert table.cursor_row == 0


async def test_an_outcome_notice_does_not_stay_over_the_dialog_opened_next(home, tmp_path):
    """p then l at 80x24: "Skill '…' pinned." stayed over the ledger's last rows for its five seconds."""
    seed_skills(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        screen = await open_skills(pilot)
        await select(pilot, screen, "docker-prune")
        await pilot.press("p")
        await wait_for(pilot, lambda: [n for n in app._notifications if "pinned" in n.message], what="the outcome")
        app.notify("A warning stays.", severity="warning")
        await pilot.press("l")
        await wait_for(pilot, lambda: isinstance(app.screen, LedgerDialog), what="the ledger")
        assert [n.message for n in app._notifications] == ["A warning stays."]


async def test_the_ledger_names_a_review_as_the_timeline_does(home, tmp_path):
    """Hermes's ledger calls a background review ``curator``; the Timeline calls it ``review``."""
    skill_manage_tool(
        home, {"action": "create", "name": "x", "content": skill_md("x")}, ctx(origin=BACKGROUND_REVIEW, actor="review")
    )
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_skills(pilot)
        await pilot.press("l")
        await wait_for(pilot, lambda: isinstance(app.screen, LedgerDialog), what="ledger")
        await settle(pilot)
        assert "create  x  by review (ledger: curator)" in screen_text(app)
        [entry] = home.skills.ledger.entries()
        assert f"{entry.id}  {entry.when}  create" in screen_text(app)  # as a refused rollback names it


LONG_NAME = "kubernetes-cluster-upgrade-and-rollback-runbook-for-prod-v2-final"[:64]


async def test_a_long_name_in_the_detail_pane_is_cut_with_an_ellipsis_and_the_state_wraps_between_parts(home, tmp_path):
    """At 120x40 the pane beside the files is 28 cells: a 64-character name keeps one line, cut
    with …, when the state line (pinned) wraps too; it used to wrap mid-word and lose its end
    (and the description) under the pane's four lines without a mark."""
    description = "Upgrade a Kubernetes cluster node pool by node pool, with a rollback plan at each step"
    result = home.skills.manage(
        {"action": "create", "name": LONG_NAME, "category": "devops", "content": skill_md(LONG_NAME, description)},
        ctx(actor="agent"),
    )
    assert result.get("success"), result
    assert home.curator.pin(LONG_NAME)["success"]
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_skills(pilot)
        await select(pilot, screen, LONG_NAME)
        region = screen.query_one("#skills-meta").content_region
        rows = screen_text(app).splitlines()[region.y : region.y + region.height]
        shown = [row[region.x : region.x + region.width].rstrip() for row in rows]
        assert region.width == 28 and len(shown) == 4
        assert shown[0] == LONG_NAME[:27] + "…"
        skill = screen.current
        state = f"active · pinned · {skill.provenance} · 0 uses"
        assert len(state) > 28 and " · ".join(shown[1:3]) == state  # broken between its parts, not inside one
        assert shown[3].endswith("…") and description.startswith(shown[3][:-1])
        assert screen.query_one("#skills-files", OptionList).region.y == region.y + region.height


def test_the_detail_pane_fits_every_part_in_cells_and_marks_each_cut():
    row = SkillRow("日本語のスキル名がとても長い場合のテストです", description="説明 " * 40, provenance="user")
    lines = [line.plain for line in meta_lines(row, 28)]
    assert lines[0] == "日本語のスキル名がとても長…" and cell_len(lines[0]) == 27  # a wide character is never halved
    assert lines[1] == "active · user · 0 uses" and lines[3].endswith("…") and len(lines) == 4
    assert all(cell_len(line) <= 28 for line in lines)
    short = meta_lines(SkillRow("git-rebase", description="Rebase a branch", provenance="agent"), 28)
    assert [line.plain for line in short] == ["git-rebase", "active · agent · 0 uses", "Rebase a branch"]
    approved = meta_lines(SkillRow("brew", "x", "Tea", provenance="user", proposed_by="Hermes review"), 28)
    assert [line.plain for line in approved] == ["brew", "active · user · 0 uses", "proposed by Hermes review", "Tea"]
    shared = meta_lines(SkillRow("brew", description="Tea", provenance="user", uses_note=SHARED_WITH_OLD), 28)
    assert shared[2].plain == "its counts may include…"  # prose: cut before a word (was `thos…`)
    hostile = meta_lines(SkillRow("x", description="[bold]y[/] \x1b[31m"), 28)
    assert hostile[2].plain == "[bold]y[/] ␛[31m"  # literal, never markup or an escape


async def test_an_archived_copy_sharing_an_active_skills_name_is_its_own_row(home, tmp_path):
    """Hermes made a skill again under the name of one archived: the screen keyed rows by name and
    the app quit on DuplicateKey, at every start; an archived copy showed the active skill's text."""
    from tests.test_skills_support import write_skill

    write_skill(home, "deploy-staging", body="# Old way\nscp the build.\n")
    home.curator.archive("deploy-staging")
    write_skill(home, "deploy-staging", body="# New way\nhelm upgrade.\n")
    home.curator.archive("deploy-staging")
    write_skill(home, "deploy-staging", body="# Newest way\nargo sync.\n")
    rows = [(i.state, i.path) for i in home.skills.list(include_archived=True) if i.name == "deploy-staging"]
    assert sorted(state for state, _ in rows) == ["active", "archived", "archived"]
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_skills(pilot)
        table = screen.query_one(SkillList)
        await wait_for(pilot, lambda: len(table.rows_by_key) == 3, what="three rows of one name")
        # the copies told apart by their folders, as `skills list --all` names them (``skill_label``)
        shown = {path: (str(table.get_cell(path, "skill")), str(table.get_cell(path, "state"))) for _, path in rows}
        dated = next(path for state, path in rows if path.startswith(".archive/deploy-staging-"))
        assert shown == {
            "deploy-staging": ("deploy-staging", "active"),
            ".archive/deploy-staging": ("deploy-staging (.archive/deploy-staging)", "archived"),
            dated: (f"deploy-staging ({dated})", "archived"),
        }, shown
        table.focus()
        for state, path in rows:
            table.move_cursor(row=table.get_row_index(path))
            await wait_for(pilot, lambda p=path: screen.current.path == p, what="the row")
            body = "argo sync" if state == "active" else None
            if body is None:  # each archived copy shows its own SKILL.md, never the active one's
                await wait_for(pilot, lambda: screen.shown is not None and screen.shown[0] == path, what="its text")
                shown = screen_text(app)
                assert "argo sync" not in shown and ("scp the build" in shown or "helm upgrade" in shown)
        table.move_cursor(row=table.get_row_index(rows[-1][1] if rows[-1][0] == "archived" else rows[1][1]))
        await settle(pilot)
        await pilot.press("r")  # restoring a copy while a skill of its name is active: refused, said, no crash
        await wait_for(
            pilot,
            lambda: any(
                "Could not restore deploy-staging: A skill named 'deploy-staging' is already active" in n.message
                for n in app._notifications
            ),
            what="the refusal",
        )
        assert await footer_keys(pilot, "a", "r", "p") == {"r": True}  # pin, archive cannot act on a copy
        await pilot.press("p", "a", "y")  # nothing happens: never the live skill of its name
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmDialog)
    live = [i for i in home.skills.list(include_archived=True) if i.name == "deploy-staging" and i.state == "active"]
    assert len(live) == 1 and not live[0].pinned


async def test_a_rollback_the_ledger_would_refuse_says_why_without_asking(home, tmp_path):
    """The question asked first and the refusal came after y; now it lists the files a rollback puts
    back, and says at once why one would be refused."""
    from tests.test_skills_support import write_skill

    write_skill(home, "deploy", body="# Deploy\nStep one.\n")
    for old, new in (("one", "two"), ("two", "three")):  # (not back to one: that reads as undone already)
        home.skills.manage(
            {"action": "patch", "name": "deploy", "old_string": f"Step {old}.", "new_string": f"Step {new}."}
        )
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_skills(pilot)
        await pilot.press("l")
        await wait_for(pilot, lambda: isinstance(app.screen, LedgerDialog), what="ledger")
        await pilot.press("down", "enter")  # an older patch: a later one changed the same file since
        toasts = lambda: [str(n.message) for n in app._notifications]  # noqa: E731
        await wait_for(pilot, lambda: any("Could not roll back patch of deploy" in t for t in toasts()), what="why")
        assert not isinstance(app.screen, ConfirmDialog)
        assert any("Roll back the later entries first" in t for t in toasts())


async def test_files_no_linked_group_lists_are_shown_too_and_open(home, tmp_path):
    """A file Hermes left in a skill's folder where no linked group lists it (`references/notes.txt`,
    a name with control characters and no `.md`) was in no list: the folder's delete removed it unseen."""
    seed_skills(home)
    folder = home.skills.find("git-rebase").path
    (folder / "references" / "notes.txt").write_text("kept by hand\n")
    (folder / "references" / "n\x1b[31mame").write_text("hostile\n")
    (folder / "README").write_text("read me\n")
    (folder / ".cache").mkdir()
    (folder / ".cache" / "x.md").write_text("hidden, and a delete removes it too\n")
    agent_view = home.skills.view("git-rebase", record=False)
    assert agent_view["other_files"] == [".cache/x.md", "README", "references/n\x1b[31mame", "references/notes.txt"]
    assert "other_files" not in home.skills.view("git-rebase"), "the agent's view is Hermes's"
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_skills(pilot)
        files, shown = await files_of(pilot, screen, "git-rebase", 6)
        assert shown[:2] == ["SKILL.md", "references/flags.md"]
        assert shown[2:] == [
            ".cache/x.md  not linked",
            "README  not linked",
            "references/n␛[31mame  not linked",
            "references/notes.txt  not linked",
        ]
        files.focus()
        files.highlighted = 5
        await wait_for(pilot, lambda: screen.shown == ("git-rebase", "references/notes.txt"), what="the file")
        assert "kept by hand" in screen_text(app)
        files.highlighted = 4
        await wait_for(pilot, lambda: screen.shown and "31m" in screen.shown[1], what="the hostile one")
        text = screen_text(app)
        assert "This file's name holds control characters" in text and "\x1b" not in text


HOSTILE = '---\nname: clear-screen\ndescription: "Clears \\x1b[2J and \\x1b]0;x\\x07 now \u202e"\n---\n\nDo it.\n'


async def test_a_skill_the_prompt_index_would_block_is_marked_and_says_why(home, tmp_path):
    """A description holding ESC, BEL and a bidi override (as Hermes's skill_manage creates it) was refused
    when staged, yet listed as any other skill: no ⚠, and its line in every prompt silently blocked."""
    seed_skills(home)
    (home.skills_dir / "clear-screen").mkdir()
    (home.skills_dir / "clear-screen" / "SKILL.md").write_text(HOSTILE, encoding="utf-8")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_skills(pilot)
        await select(pilot, screen, "clear-screen")
        await wait_for(pilot, lambda: screen.shown == ("clear-screen", "SKILL.md"), what="SKILL.md shown")
        text = screen_text(app)
        assert "⚠ clear-screen" in text and "⚠ git-rebase" not in text
        assert "⚠ blocked in index" in text and "invisible_unicode_U+001B" in text
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text  # (symbols, never the bytes)
        await select(pilot, screen, "git-rebase")
        assert "blocked in index" not in screen_text(app)


async def test_a_very_long_skill_name_leaves_the_other_columns_in_view(home, tmp_path):
    """A 120-character skill name pushed category, state, pin, provenance and uses off the table
    even at 120 columns (user trial); the name is cut with … and the detail pane holds it whole."""
    from tests.test_skills_support import write_skill
    from widgets.skill_list import NAME_CELLS

    long_name = "deploy-" + "x" * 113
    write_skill(home, long_name, "devops")
    write_skill(home, "git-rebase")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_skills(pilot)
        table = screen.query_one(SkillList)
        await wait_for(pilot, lambda: table.row_count == 2, what="the rows")
        assert table.columns["skill"].content_width == NAME_CELLS
        cells = [str(cell) for cell in table.get_row(table.key_of(long_name))]
        assert cells[0].endswith("…") and cells[1:3] == ["devops", "active"]
        assert sum(column.get_render_width(table) for column in table.columns.values()) <= table.size.width


async def test_help_says_what_p_does_to_the_selected_skill(home, tmp_path):
    """Help listed "p Pin / Unpin" and "a Archive", "r Restore" whatever was selected; on the screen
    the user is on it lists what the footer shows (check_action): Unpin on a pinned skill."""
    seed_skills(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_skills(pilot)
        await select(pilot, screen, "docker-prune")
        await pilot.press("p")
        await wait_for(pilot, lambda: screen.current.pinned, what="pinned row")
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        skills = app.screen.sections[0]
        assert skills.title == "Skills"
        assert ("p", "Unpin") in skills.keys and ("a", "Archive") in skills.keys
        assert [row for row in skills.keys if row[0] in ("p", "r")] == [("p", "Unpin")]


async def test_a_ledger_rollback_that_would_make_two_active_skills_of_one_name_says_why(home, tmp_path):
    """The question said only "restore skills/devops/k8s-rollout/SKILL.md", then "Rolled back", and two
    active `k8s-rollout` were left; now it refuses as `r Restore` does, without asking."""
    from tests.test_skills_support import tree_state, write_skill

    write_skill(home, "k8s-rollout", category="ops")
    home.curator.archive("k8s-rollout")
    write_skill(home, "k8s-rollout", category="devops")
    home.clock.advance(61)
    home.curator.archive("k8s-rollout", actor="curator")
    home.curator.restore(".archive/k8s-rollout")
    before = tree_state(home.skills_dir)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_skills(pilot)
        await pilot.press("l")
        await wait_for(pilot, lambda: isinstance(app.screen, LedgerDialog), what="ledger")
        assert [(e.action, e.skill) for e in app.screen.entries[:2]] == [("restore", "k8s-rollout")] + [
            ("archive", "k8s-rollout")
        ]
        await pilot.press("down", "enter")  # the Curator's archive of the second copy
        toasts = lambda: [str(n.message) for n in app._notifications]  # noqa: E731
        await wait_for(pilot, lambda: any("Could not roll back archive" in t for t in toasts()), what="why")
        assert not isinstance(app.screen, ConfirmDialog)
        assert any(
            "A skill named 'k8s-rollout' is already active at" in t
            and "archive or rename it before restoring skills/devops/k8s-rollout" in t
            for t in toasts()
        )
    assert tree_state(home.skills_dir) == before


@pytest.mark.parametrize("size", [(120, 40), (60, 20)])
async def test_a_ledger_row_whose_column_shortens_the_folder_shows_it_whole_beneath(home, tmp_path, size):
    """A user trial: an archive and restore were listed as `pdf-extract (documents/…)` and `pdf-extract
    (.archive)` and nowhere whole, a folder the user may want to copy. The column keeps its width (the
    CLI's too); the whole label is on a line under the row."""
    from tests.test_skills_support import write_skill

    write_skill(home, "pdf-extract", category="documents")
    home.curator.archive("pdf-extract")
    home.curator.restore("pdf-extract")
    app = make_app(home, tmp_path)
    async with app.run_test(size=size) as pilot:
        await open_skills(pilot)
        await pilot.press("l")
        await wait_for(pilot, lambda: isinstance(app.screen, LedgerDialog), what="ledger")
        await settle(pilot)
        shown = screen_text(app)
        wide = size == (120, 40)  # (at 60 columns no row fits: each entry is two lines, the folder whole)
        assert wide == ("pdf-extract (documents/…)" in shown and "pdf-extract (.archive)" in shown)  # the column
        for whole in ("pdf-extract (.archive/pdf-extract)", "pdf-extract (documents/pdf-extract)"):
            beneath = f"▊   {whole} " if wide else f"▊     {whole}  by "  # on a line of its own under its row
            assert beneath in shown, (whole, shown)


async def test_two_active_skills_of_one_name_are_told_apart_by_folder_as_the_cli_does(home, tmp_path):
    """Two active `k8s-rollout` in two folders showed as two identical rows (the CLI named the folders)."""
    from tests.test_skills_support import write_skill

    write_skill(home, "k8s-rollout", category="devops", body="# Devops\nhelm.\n")
    write_skill(home, "k8s-rollout", body="# Flat\nkubectl.\n")
    labels = sorted(s.label for s in home.skills.list())
    assert labels == ["k8s-rollout (devops/k8s-rollout)", "k8s-rollout (k8s-rollout)"]  # the engine's rule
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_skills(pilot)
        table = screen.query_one(SkillList)
        await wait_for(pilot, lambda: table.row_count == 2, what="the rows")
        assert sorted(str(table.get_cell(key, "skill")) for key in table.rows_by_key) == labels
        table.focus()
        table.move_cursor(row=table.get_row_index("devops/k8s-rollout"))
        await wait_for(pilot, lambda: "helm." in screen_text(app), what="its file")
        assert "devops/k8s-rollout/SKILL.md" in screen_text(app)  # the file's border names the folder whole


def test_a_label_cut_to_a_narrow_column_keeps_what_tells_its_folder_apart():
    from widgets.skill_list import name_cell

    def cell(path: str, cells: int) -> str:
        archived = path.startswith(".archive/")
        row = SkillRow(name="k8s-rollout", path=path, folder=path, state="archived" if archived else "active")
        return name_cell(row, cells).plain

    assert cell("devops/k8s-rollout", 40) == "k8s-rollout (devops/k8s-rollout)"  # the engine's label, whole
    assert cell("devops/k8s-rollout", 22) == "k8s-rollout (devops/…)"  # the name it repeats given way
    assert cell("devops/k8s-rollout", 20) == "k8s-rollout (devop…)"
    assert cell("k8s-rollout", 20) == "k8s-rollout (…)"
    assert cell(".archive/k8s-rollout-20261206000751", 20) == "k8s-rollout (…00751)"  # its stamp's end
    assert cell(".archive/k8s-rollout", 20) == "k8s-rollout (…)"  # the state column says archived


async def test_the_title_counts_archived_copies_apart_and_80_columns_mark_them(home, tmp_path):
    """The title said ``3 skills`` with the archived copy counted as a skill (``skills list`` prints 2, ``curator
    status`` ``2 active … 1 archived``), and at 80 columns the copy read ``pg-rotate (…)`` with room to spare."""
    from tests.test_skills_support import write_skill

    write_skill(home, "pg-rotate", body="# Old\nrotate.\n")
    home.curator.archive("pg-rotate")
    write_skill(home, "pg-rotate", body="# New\nrotate v2.\n")
    write_skill(home, "git-rebase", body="# Rebase\n")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_skills(pilot)
        table = screen.query_one(SkillList)
        await wait_for(pilot, lambda: len(table.rows_by_key) == 3, what="the rows")
        await settle(pilot)
        assert str(table.border_title) == "2 skills · 1 archived"
        assert str(table.get_cell(".archive/pg-rotate", "skill")) == "pg-rotate (.archive)"
        assert str(table.get_cell("pg-rotate", "skill")) == "pg-rotate"
        await pilot.press("slash", *"rebase")
        await settle(pilot)
        assert str(table.border_title) == "1 of 2 skills · 0 of 1 archived"


async def test_help_says_how_the_provenance_words_map_to_hermess(home, tmp_path):
    """The screen says `user` of a skill `hermes curator usage` calls `agent` (its word for neither bundled
    nor hub): its help says why, in the words of `skills list --help`."""
    seed_skills(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_skills(pilot)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
        said = " ".join(" ".join(section.text for section in app.screen.sections).split())
        assert "user = a local skill the agent did not make. `hermes curator usage` lists both as `agent`" in said


async def test_a_filter_moves_the_cursor_to_its_best_match_and_esc_on_the_list_clears_it(home, tmp_path):
    """`/ pg-rot` with nofront selected listed pg-rotate first but left the cursor and the detail pane on
    nofront (still listed, second); and with the list focused, esc did nothing and no key said how to clear."""
    for name, category, description in (
        ("nofront", "misc", "A skill with no front matter trick"),
        ("pg-rotate", "devops", "Rotate postgres credentials"),
    ):
        content = f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nSteps.\n"
        result = home.skills.manage({"action": "create", "name": name, "category": category, "content": content}, ctx())
        assert result.get("success"), result
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_skills(pilot)
        await select(pilot, screen, "nofront")
        assert "escape" not in await footer_keys(pilot, "escape")  # no filter: nothing to clear
        await pilot.press("slash", *"pg-rot", "enter")
        await settle(pilot)
        assert names(screen) == ["pg-rotate", "nofront"]
        assert screen.current.name == "pg-rotate"
        assert screen.query_one(SkillMeta).skill.name == "pg-rotate"  # the detail pane with it
        await wait_for(pilot, lambda: screen.shown == ("pg-rotate", "SKILL.md"), what="pg-rotate's SKILL.md")
        assert screen.focused is screen.query_one(SkillList)
        assert await footer_labels(pilot, "escape") == {"escape": "Clear"}
        await pilot.press("down")  # nofront, then esc: every skill again, the cursor kept on it
        await pilot.press("escape")
        await settle(pilot)
        assert screen.query_one("#skills-filter", Input).value == ""
        assert sorted(names(screen)) == ["nofront", "pg-rotate"]
        assert screen.current.name == "nofront"
        assert screen.focused is screen.query_one(SkillList)
        assert "escape" not in await footer_keys(pilot, "escape")


async def test_esc_clear_fits_the_footer_beside_unpin_at_any_width(home, tmp_path):
    """esc Clear, shown while a filter is set, takes the place of / Filter where both do not fit beside
    p Unpin, c Curate and ? Help (at 80 columns ? Help was cut to ? Hel); / still focuses the filter."""
    seed_skills(home)
    home.curator.pin("tomato-care")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_skills(pilot)
        await pilot.press("slash", *"tomato", "enter")
        await settle(pilot)
        assert screen.current.name == "tomato-care"
        for width, listed in ((120, True), (92, True), (91, False), (82, False), (81, False), (80, False)):
            await pilot.resize_terminal(width, 24)
            shown = await footer_labels(pilot, "slash", "escape", "p", "question_mark")
            assert shown == {"escape": "Clear", "p": "Unpin", "question_mark": "Help"} | (
                {"slash": "Filter"} if listed else {}
            ), width
            keys = app.screen.query(FooterKey)
            drawn = {k.key: k.region for k in keys if not k.has_class("-command-palette")}
            palette = min(k.region.x for k in keys if k.has_class("-command-palette"))
            assert all(region.right <= palette for region in drawn.values()), (
                width,
                sorted((r.right, k) for k, r in drawn.items()),
                palette,
            )
        await pilot.press("slash")
        await settle(pilot)
        assert screen.focused is screen.query_one("#skills-filter", Input)


async def test_the_table_names_the_proposer_of_a_skill_approved_into_the_library(home, tmp_path):
    """The table said "user" for a skill approved from a Hermes proposal, where `skills list` says "user
    (approved, proposed by Hermes agent)": the table says the engine's words, cut at PROVENANCE_CELLS (the
    detail pane has them whole), never only "user"."""
    payload = {"action": "create", "name": "brew", "content": skill_md("brew", "Brew tea")}
    assert home.skills.apply_staged(payload, proposed_by="Hermes agent")["success"]
    [listed] = home.skills.list()
    assert listed.owner == "user (approved, proposed by Hermes agent)"
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_skills(pilot)
        table = screen.query_one(SkillList)
        assert str(table.get_cell(table.key_of("brew"), "provenance")) == "user (approved, proposed by H…"
        assert "brew" in screen_text(app) and "activity" in screen_text(app)  # the row still fits


def deploys_beside_a_proposed_skill(home) -> None:
    """deploy-stage and deploy-staging, told apart by their ends only, beside a skill approved from a Hermes
    proposal, whose provenance (``user (approved, proposed by Hermes agent)``) is long."""
    for name in ("deploy-stage", "deploy-staging"):
        assert home.skills.manage({"action": "create", "name": name, "content": skill_md(name, "Deploy")}, ctx())[
            "success"
        ]
    payload = {"action": "create", "name": "brew", "content": skill_md("brew", "Brew tea")}
    assert home.skills.apply_staged(payload, proposed_by="Hermes agent")["success"]


async def names_read_whole(pilot):
    """Skills, once its table names deploy-stage and deploy-staging whole: the table, and a cell's text by
    skill name and column."""
    table = (await open_skills(pilot)).query_one(SkillList)
    cell = lambda name, column: str(table.get_cell(table.key_of(name), column))  # noqa: E731
    await wait_for(pilot, lambda: cell("deploy-staging", "skill") == "deploy-staging", what="whole names")
    assert cell("deploy-stage", "skill") == "deploy-stage"
    return table, cell


async def test_at_60x20_the_list_yields_rows_so_skill_md_is_readable(home, tmp_path):
    """At 60x20 the list kept its 8 rows for 4 skills and SKILL.md got 2 lines (``---``, ``name:``), the
    Files pane none. Below 24 rows the list keeps 4 rows (it scrolls), SKILL.md 6 lines and the files
    their pane; names stay whole; at 80x24 the list has its 8 rows again."""
    deploys_beside_a_proposed_skill(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(60, 20)) as pilot:
        table, cell = await names_read_whole(pilot)
        screen = pilot.app.screen
        code = screen.query_one(CodeView)
        await wait_for(pilot, lambda: "description:" in str(code.query_one("#code", Static).render()), what="SKILL.md")
        assert code.scrollable_content_region.height == 6 and table.scrollable_content_region.height == 5
        assert screen.query_one("#skills-files").region.height >= 3  # (its one file in view)
        await pilot.resize_terminal(80, 24)
        await settle(pilot)
        assert table.scrollable_content_region.height == 9  # (the column names and 8 rows)


async def test_a_long_provenance_gives_way_to_the_names_at_80_columns(home, tmp_path):
    """With a skill approved from a Hermes proposal beside deploy-stage and deploy-staging, the table at 80
    columns cut every name to ``depl…`` (the two alike) while the provenance kept its 30 cells: the
    names keep their room now, and the provenance (whole in the detail pane) is cut instead."""
    deploys_beside_a_proposed_skill(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        _, cell = await names_read_whole(pilot)
        assert cell("brew", "provenance").startswith("user (approved") and cell("brew", "provenance").endswith("…")
        assert "activity" in screen_text(app)  # every column still in view


async def test_the_filter_reads_text_a_cjk_input_method_typed_in_full_or_half_width(home, tmp_path):
    """``ｇｉｔ`` (full-width, as a Japanese input method types Latin) and ``ﾃﾞﾌﾟﾛｲ`` (half-width katakana)
    left the library empty, where ``git`` and ``デプロイ`` find git-rebase and the skill described in Japanese."""
    seed_skills(home)
    content = skill_md("ship-it", "本番デプロイの手順")
    assert home.skills.manage({"action": "create", "name": "ship-it", "content": content}, ctx())["success"]
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_skills(pilot)
        box = screen.query_one("#skills-filter", Input)
        for typed, found in (("ｇｉｔ", "git-rebase"), ("ﾃﾞﾌﾟﾛｲ", "ship-it"), ("デプロイ", "ship-it")):
            box.value = typed
            await wait_for(pilot, lambda found=found: names(screen)[:1] == [found], what=f"{found} for {typed}")


async def test_at_60_columns_the_provenance_gives_way_so_names_can_be_told_apart(home, tmp_path):
    """At 60x20 the table cut every name to ``depl…`` (deploy-stage and deploy-staging alike) and ``last used``
    to ``last us``: the provenance, which the detail pane repeats, gives way to the names now, and comes back,
    its cells filled, where the table is wide enough again."""
    deploys_beside_a_proposed_skill(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(60, 20)) as pilot:
        table, cell = await names_read_whole(pilot)
        assert [key.value for key in table.columns] == ["skill", "category", "state", "pin", "uses", "activity"]
        assert "activity" in screen_text(app)  # every column shown is in view
        await pilot.resize_terminal(100, 24)
        await wait_for(pilot, lambda: "provenance" in [key.value for key in table.columns], what="the provenance")
        assert cell("brew", "provenance") == "user (approved, proposed by H…"
        assert cell("deploy-staging", "skill") == "deploy-staging" and "activity" in screen_text(app)


async def test_the_ledger_gives_each_entry_two_lines_where_a_row_does_not_fit_and_one_where_all_do(home, tmp_path):
    """A user trial at 60x20: each row wrapped at its spaces, `triage-invoice-export  by review (ledger:` /
    `curator)` on lines that read as rows of their own. Where a row does not fit, every entry is on two
    lines as `curator ledger` prints them, the skill and who under the id, time and action; widened, one."""
    for name in ("triage-invoice-export", "deploy-staging"):
        skill_manage_tool(
            home,
            {"action": "create", "name": name, "content": skill_md(name)},
            ctx(origin=BACKGROUND_REVIEW, actor="review"),
        )
    entries = home.curator.ledger()
    app = make_app(home, tmp_path)
    async with app.run_test(size=(60, 20)) as pilot:
        await open_skills(pilot)
        await pilot.press("l")
        await wait_for(pilot, lambda: isinstance(app.screen, LedgerDialog), what="ledger")
        listing = app.screen.query_one(OptionList)
        await wait_for(pilot, lambda: listing.option_count == 2, what="the entries")
        await settle(pilot)
        shown = screen_text(app)
        for entry, option in zip(entries, listing.options, strict=True):
            head, *below = option.prompt.plain.split("\n")
            assert head == f"{entry.id}  {entry.when}  create"
            assert below[0].startswith(f"    {entry.skill}  by review")  # the skill whole, under its row
            assert all(line.startswith("      ") for line in below[1:])  # a continuation deeper still
            assert f"▊ {head} " in shown, shown
            # who, muted as on one line, folded or not (it was drawn as the skill's name was)
            prompt = option.prompt
            muted = "".join(prompt.plain[s.start : s.end] for s in prompt.spans if s.style == "$text-muted")
            by = "\n".join(below).split(f"{entry.skill}  ", 1)[1]
            assert "".join(muted.split()) == "".join(f"{entry.id}{entry.when}{by}".split()), (muted, by)
        await pilot.resize_terminal(140, 40)
        await wait_for(pilot, lambda: "\n" not in listing.options[0].prompt.plain, what="one line an entry")
        for entry, option in zip(entries, listing.options, strict=True):
            assert option.prompt.plain.startswith(f"{entry.id}  {entry.when}  create  {entry.skill}")


@pytest.mark.slow  # Hermes's own archive code in its own process
async def test_an_empty_ledger_says_where_a_skill_hermes_archived_is(home, hermes, tmp_path):
    """On a home Hermes's curator had archived skills in, `l` and `workbench curator ledger` said only "The
    ledger is empty.", and the user looked there for the archive to undo. Both say what the ledger holds and
    that what Hermes changed is not in it (the Timeline has what the workbench saw of it)."""
    from tests.test_curator_cli import wb
    from tests.test_skills_support import write_skill

    write_skill(home, "old-ftp-upload", category="ops")
    code = "import json\nfrom tools.skill_usage import archive_skill\n"
    (archived, _) = hermes.json(home.root, code + 'print(json.dumps(list(archive_skill("old-ftp-upload"))))')
    assert archived and (home.skills_dir / ".archive" / "old-ftp-upload" / "SKILL.md").is_file()
    said = "changes Hermes or an editor made are not in it (the Timeline has those it saw)"
    status, out = wb(home.root, "curator", "ledger")
    assert status == 0 and out["entries"] == []
    assert said in " ".join(ran_text(home.root, "curator", "ledger").split())
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await open_mode(pilot, "3", SkillsScreen)
        await pilot.press("l")
        await wait_for(pilot, lambda: isinstance(app.screen, LedgerDialog), what="the ledger")
        shown = lambda: " ".join(" ".join(str(s.content).split()) for s in app.screen.query(Static))  # noqa: E731
        await wait_for(pilot, lambda: said in shown(), what="where Hermes's archive is")


def ran_text(root, *args: str) -> str:
    """What ``workbench --home ROOT ARGS`` prints as text."""
    from tests.cli_support import ran

    status, out, err = ran("--home", str(root), *args)
    assert status == 0 and "Traceback" not in err, err
    return out
