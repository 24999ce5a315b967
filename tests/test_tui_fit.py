"""The app fits the terminal: 80x24 keeps tab names, 8 skill rows, gauge captions; resizes keep
the place; screenshots land in a folder that exists."""

from __future__ import annotations

import pytest
from textual.widgets._footer import FooterKey

from engine.demo import seed_demo_home
from tests.screens_seed import open_mode, screen_text, seed_skills
from tests.tui_support import footer_keys, make_app, settle, wait_for
from widgets.entry_list import EntryList
from widgets.gauge import CapacityGauge
from widgets.header import WorkbenchHeader
from widgets.narration import Story
from widgets.skill_list import SkillList
from workbench import app as app_module
from workbench.screens.memory import MemoryScreen
from workbench.screens.sessions import SessionsScreen
from workbench.screens.skills import SkillsScreen

pytestmark = pytest.mark.anyio


async def test_at_80x24_the_header_keeps_every_tab_name(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        line = app.screen.query_one(WorkbenchHeader).render().plain
        assert len(line) <= 80 and "0 pending" in line
        for name in [label for _, _, label in app.mode_tabs()]:  # no session runs: every name fits
            assert name in line
        await pilot.resize_terminal(60, 20)  # narrower still: the other tabs shrink, the count stays
        await settle(pilot)
        line = app.screen.query_one(WorkbenchHeader).render().plain
        assert len(line) <= 60 and "1 Memory" in line and " 2 Ses " in line and "0 pending" in line


async def test_with_no_session_the_header_never_cuts_no_session_into_a_session(home, tmp_path):
    """At some widths the placeholder was cut like an id: "… session", which reads as a session running."""
    app = make_app(home, tmp_path, label="/tmp/trial-home-9")
    async with app.run_test(size=(80, 24)) as pilot:
        for width in range(80, 131):
            await pilot.resize_terminal(width, 24)
            await pilot.pause()
            line = app.screen.query_one(WorkbenchHeader).render().plain
            assert "… session" not in line and "…session" not in line, (width, line)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_every_screens_header_names_the_home_at_80_columns_too(home, tmp_path, size):
    """At 80x24 the header showed only "N pending": which home was being edited could not be seen."""
    app = make_app(home, tmp_path, label="~/.hermes")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        for running in (None, "20261205_145736_a1b2c3d4"):
            app.running_session = running
            for key in "123456":
                await pilot.press(key)
                await settle(pilot)
                line = app.screen.query_one(WorkbenchHeader).render().plain
                assert len(line) <= size[0] and "0 pending" in line, (key, line)
                if size[0] == 80:  # the session's id gives way first, to a ● that says one runs
                    assert line.endswith("│ .hermes" if running is None else "● .hermes"), (key, line)
                else:
                    assert line.endswith("│ ~/.hermes") and (running is None or running in line), (key, line)
                if key == "5":
                    await pilot.press("escape")  # out of the message box, where a digit is text


async def test_the_header_keeps_a_running_sessions_id_whole_where_tight_tabs_make_room(home, tmp_path):
    """A user trial at 120 columns: the header showed the demo's session as `…0_6fbeb3`, cut into its time, and
    a cut id names nothing to copy. It is whole where tight tabs and the home's last folders make room, and
    cut to its random part where they cannot."""
    app = make_app(home, tmp_path, label="/tmp/flat28/demo")
    app.running_session = "20261207_183030_6fbeb3"
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        line = app.screen.query_one(WorkbenchHeader).render().plain
        assert len(line) <= 120 and "│ 20261207_183030_6fbeb3 │ /tmp/flat28/demo" in line, line
        assert "1 Memory 2 Sessions" in line  # (the tabs' outer spaces made the room)
        await pilot.resize_terminal(110, 40)
        await settle(pilot)
        line = app.screen.query_one(WorkbenchHeader).render().plain
        assert len(line) <= 110 and line.endswith("│ …6fbeb3 │ /tmp/flat28/demo"), line


def numbered_skills(home, count: int) -> None:
    for number in range(count):
        name = f"skill-{number:02d}"
        content = f"---\nname: {name}\ndescription: number {number}\n---\n# s\n"
        home.skills.manage({"action": "create", "name": name, "content": content}, None)


async def test_at_80x24_the_skills_table_shows_eight_rows_and_the_last_used_column(home, tmp_path):
    numbered_skills(home, 12)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_mode(pilot, "3", SkillsScreen)
        text = screen_text(app)
        assert "activity" in text
        assert sum(f"skill-{n:02d}" in text for n in range(12)) >= 8


def gauge_line(gauge: CapacityGauge) -> str:
    return gauge.render().plain


async def test_the_gauge_caption_is_never_cut(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "1", MemoryScreen)
        gauge = screen.query_one("#live-gauge", CapacityGauge)
        gauge.used, gauge.limit, gauge.ghost = 2100, 2200, 400
        for width in (80, 60, 40, 30, 20):
            await pilot.resize_terminal(width, 24)
            await settle(pilot)
            line = gauge_line(gauge)
            assert len(line) <= gauge.size.width
            assert line.rstrip().endswith(("(over by 300)", "+400 pending", "over", "95%")), (width, line)
        await pilot.resize_terminal(120, 24)
        await settle(pilot)
        assert gauge_line(gauge).endswith("2,100/2,200 95% +400 pending (over by 300)")


async def test_resizing_keeps_the_selection(home, tmp_path):
    seed_demo_home(home)
    seed_skills(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_mode(pilot, "1", MemoryScreen)
        live = screen.query_one("#live-list", EntryList)
        live.highlighted = len(live.rows) - 1
        chosen = live.current.text
        await pilot.resize_terminal(80, 24)
        await settle(pilot)
        assert live.current.text == chosen
        offset = live.scroll_offset.y
        await pilot.resize_terminal(100, 30)
        await settle(pilot)
        assert live.current.text == chosen and live.scroll_offset.y <= offset
        skills = await open_mode(pilot, "3", SkillsScreen)
        table = skills.query_one(SkillList)
        table.move_cursor(row=table.row_count - 1)
        name = skills.current.name
        await pilot.resize_terminal(80, 24)
        await settle(pilot)
        assert skills.current.name == name


async def test_a_screenshot_lands_in_a_folder_that_exists_and_says_where(home, tmp_path, monkeypatch):
    downloads = tmp_path / "no" / "such" / "Downloads"
    monkeypatch.setattr(app_module.platformdirs, "user_downloads_path", lambda: downloads)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        app.action_screenshot()
        await wait_for(pilot, lambda: list(downloads.glob("*.svg")), what="the screenshot")
        await wait_for(pilot, lambda: any(str(downloads) in n.message for n in app._notifications), what="notice")
        blocked = tmp_path / "file"
        blocked.write_text("not a folder")
        app.action_screenshot(path=str(blocked / "sub"))
        fallback = tmp_path / "screenshots"
        await wait_for(pilot, lambda: list(fallback.glob("*.svg")), what="the fallback screenshot")


# The actions each screen's footer must show at 80 columns (by key), whatever has the focus on arrival,
# left of the palette's key; help (? or f1) lists the rest, so it is on every screen.
MAIN_ACTIONS = {
    "1": ("t", "a", "e", "d", "u", "question_mark"),
    "2": ("slash", "question_mark"),
    "3": ("slash", "d", "c", "a", "p", "l", "question_mark"),  # (on an archived skill r Restore takes a's place)
    "4": ("a", "r", "e", "A", "question_mark"),
    "5": ("ctrl+l", "ctrl+o", "ctrl+g", "escape", "f1"),  # in the message box, ? is text: f1 is said
    "6": ("slash", "space", "g", "r", "question_mark"),
}


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_footer_shows_each_screens_main_actions(home, tmp_path, size):
    from textual.widgets._footer import FooterKey

    seed_demo_home(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=size) as pilot:
        for key, wanted in MAIN_ACTIONS.items():
            await pilot.press(key)
            await settle(pilot)
            keys = app.screen.query(FooterKey)
            drawn = {k.key: k.region for k in keys if not k.has_class("-command-palette")}
            palette = min(k.region.x for k in keys if k.has_class("-command-palette"))
            for action_key in wanted:
                region = drawn.get(action_key)
                assert region is not None and region.width and region.right <= palette, (key, action_key, region)
            if key == "5":
                await pilot.press("escape")  # out of the message box, where a digit is text


# At 60 columns: the keys kept, each whole (help lists the rest), by the keys pressed to get there.
MAIN_AT_60 = [
    ("1", ("t", "a", "e", "d", "question_mark")),
    ("2", ("slash", "question_mark")),
    ("3", ("slash", "d", "c", "question_mark")),
    ("4", ("a", "r", "e", "question_mark")),
    ("5", ("escape", "f1")),  # in its message box, where digits are text: esc is the way to the other screens
    ("escape", ("question_mark",)),  # (Run, out of the box)
    ("6", ("slash", "question_mark")),
]


async def test_at_60_columns_no_footer_key_is_cut_and_each_screen_keeps_its_main_ones(home, tmp_path):
    """At 60x20 the footer's last key ran under the palette's and was cut mid-word (``? H``, ``esc Cl``,
    ``n N``, ``esc Leave box (then``): keys give way whole now, help and a screen's ``FOOTER_FIRST`` last."""
    from textual.widgets._footer import FooterKey, KeyGroup

    def footer(screen) -> tuple[str, list[str]]:
        """The footer's line as drawn, and each key it shows as it would read whole."""
        line = screen._compositor.render_strips()[-1].text
        keys = [k for k in screen.query(FooterKey) if not k.has_class("-command-palette")]
        shown = [k for k in keys if k.display and not (isinstance(k.parent, KeyGroup) and not k.parent.display)]
        return line, [f"{k.key_display} {k.description}".strip() for k in shown if k.description]

    seed_demo_home(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(60, 20)) as pilot:
        for key, wanted in MAIN_AT_60:
            await pilot.press(key)
            await settle(pilot)
            await wait_for(pilot, lambda: all(said in footer(app.screen)[0] for said in footer(app.screen)[1]))
            assert set(await footer_keys(pilot, *wanted)) == set(wanted), (key, footer(app.screen)[0])


@pytest.mark.parametrize("asked", [False, True])
async def test_a_footer_left_unfitted_is_fitted_by_the_next_layout_and_then_settles(home, tmp_path, asked):
    """Clean-clone runs at load 5-8 (the landing run at d563383e too): Approvals at 60 columns read
    `… A Approve all  ? H` for 30 s, a fit lost between a change and its layout, or run before the keys
    shown again were laid out (measured as no width, all kept). Every layout of the screen fits the
    footer now, so the layout the keys cause mends it; a fit that changes nothing lays nothing out."""
    from widgets.fitted_footer import FittedFooter

    seed_demo_home(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.press("4")
        await settle(pilot)
        footer = app.screen.query_one(FittedFooter)
        line = lambda: app.screen._compositor.render_strips()[-1].text  # noqa: E731
        assert "? Help" in line() and not all(child.display for child in footer.children), line()
        for child in footer.children:
            child.display = True  # (every key shown: as a resize does, or a lost fit leaves them)
        if asked:
            footer._fit()  # (before the layout that measures them)
        fitted = lambda: "? Help" in line() and not all(c.display for c in footer.children)  # noqa: E731
        await wait_for(pilot, lambda: fitted() and not app.screen._layout_required, timeout=10, what="a fit")
        shown = [child.display for child in footer.children]
        changed = []
        fit = footer._fit
        footer._fit = lambda: (fit(), changed.append([c.display for c in footer.children] != shown))
        for _ in range(5):
            await pilot.pause()
        assert not any(changed) and fitted(), (changed, line())


async def test_a_screen_opened_before_the_app_is_ready_gets_a_fitted_footer(home, tmp_path):
    """5 pressed as the app opened (tmux, 60x20): Run's footer read ``^l New  ^o Resume  ^g Play  esc
    Leave box (then▏^p palette`` for good, its keys fitted while none was laid out yet. They are fitted
    once the screen is laid out now: ^o and ^g give way whole, esc and f1 stay."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.press("5")  # (no settling first: Memory's first reads still under way)
        await settle(pilot)
        line = lambda: app.screen._compositor.render_strips()[-1].text  # noqa: E731
        await wait_for(pilot, lambda: "esc Leave box (then 1-6)" in line(), what="the footer fitted")
        assert "^o" not in line() and "f1 Help" in line()


async def test_footer_keys_are_those_a_user_sees(home, tmp_path):
    """``footer_keys`` counted the keys the fitted footer hides (^o Resume and ^g Play on Run at 60
    columns, dropped whole for esc, the way out of its box): a test could find a key no one can see."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.press("5")
        keys = ("ctrl+l", "ctrl+o", "ctrl+g", "escape", "f1")
        assert await footer_keys(pilot, *keys) == {"ctrl+l": True, "escape": True, "f1": True}
        await pilot.resize_terminal(120, 40)
        assert set(await footer_keys(pilot, *keys)) == set(keys)


async def test_a_bindings_refresh_that_changes_no_key_keeps_the_footers_keys(home, tmp_path):
    """The footer made its keys anew at every focus move and ``refresh_bindings`` (about 40 times in an
    app's first seconds), though most changed none of them: a third of an app start's work. The same
    keys stay now, and a change (p: the facts view's one key) is still shown."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        keys = list(app.screen.query(FooterKey))
        assert {k.key for k in keys} >= {"t", "a", "e", "u"}
        app.screen.refresh_bindings()
        await footer_keys(pilot)
        assert all(a is b for a, b in zip(app.screen.query(FooterKey), keys, strict=True))
        await pilot.press("p")
        assert await footer_keys(pilot, "t", "a", "escape") == {"escape": True}


async def test_at_80x24_the_skill_files_keep_a_row_under_the_narration(home, tmp_path):
    description = "How to triage an invoice export that rounds amounts wrongly, as done each time it was asked"
    home.skills.manage(
        {"action": "create", "name": "triage", "content": f"---\nname: triage\ndescription: {description}\n---\n# t\n"},
        None,
    )
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.narration = Story("The review proposed a skill: press 4 to approve it (f3 hides this).")
        screen = await open_mode(pilot, "3", SkillsScreen)
        await wait_for(pilot, lambda: screen.current is not None, what="a skill selected")
        files = screen.query_one("#skills-files")
        await wait_for(pilot, lambda: files.option_count >= 1, what="the files listed")
        assert files.content_region.height >= 1 and files.region.bottom <= 23  # above the footer
        assert "SKILL.md" in screen_text(app)


async def test_resizing_keeps_the_scroll_position_and_the_selected_row_in_view(home, tmp_path):
    numbered_skills(home, 30)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "3", SkillsScreen)
        table = screen.query_one(SkillList)
        table.move_cursor(row=20)
        await settle(pilot)
        name, top = screen.current.name, table.scroll_offset.y
        assert top > 0, "row 20 is below the first screenful: the table scrolled"
        for size in ((120, 40), (80, 24), (100, 30), (80, 24)):
            await pilot.resize_terminal(*size)
            await settle(pilot)
            assert screen.current.name == name, size
            first = table.scroll_offset.y
            last = first + table.scrollable_content_region.height - 2  # the column names take a line
            assert first <= table.cursor_row <= last, (size, first, table.cursor_row)
        assert table.scroll_offset.y == top, "back at 80x24 the view is where it was"


async def test_with_the_transcript_focused_the_footer_keeps_its_keys_and_help(home, tmp_path):
    """At 80x24 the Sessions footer with the transcript focused ended 'esc Clear search  ^▏': help was lost."""
    from textual.widgets._footer import FooterKey

    from widgets.transcript import Transcript

    seed_demo_home(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("2")
        await settle(pilot)
        app.screen.query_one(Transcript).focus()
        await settle(pilot)
        keys = app.screen.query(FooterKey)
        drawn = {k.key: k.region for k in keys if not k.has_class("-command-palette")}
        palette = min(k.region.x for k in keys if k.has_class("-command-palette"))
        for action_key in ("w", "f", "m", "slash", "escape", "question_mark"):
            region = drawn.get(action_key)
            assert region is not None and region.width and region.right <= palette, (action_key, region)


async def test_at_80x24_archived_copies_of_one_name_leave_the_last_used_column_in_view(home, tmp_path):
    """`k8s-rollout k8s-rollout-20261205234653` (the name and the archived copy's folder) widened the
    skill column past `uses` and `last used`, and a sideways scrollbar took a row."""
    from tests.test_skills_support import write_skill

    numbered_skills(home, 12)
    write_skill(home, "k8s-rollout", category="devops")
    home.curator.archive("k8s-rollout")
    write_skill(home, "k8s-rollout", category="devops")
    home.clock.advance(61)
    home.curator.archive("k8s-rollout")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_mode(pilot, "3", SkillsScreen)
        table = screen.query_one(SkillList)
        text = screen_text(app)
        assert "activity" in text and not table.show_horizontal_scrollbar
        assert sum(f"skill-{n:02d}" in text for n in range(12)) >= 8
        assert sum(column.get_render_width(table) for column in table.columns.values()) <= table.size.width
        copy = next(key for key in table.rows_by_key if key.startswith(".archive/k8s-rollout-"))
        cell = str(table.get_row(copy)[0])
        assert cell.startswith("k8s-rollout (…") and cell.endswith(copy[-5:] + ")")  # its stamp's end
        await pilot.resize_terminal(160, 30)  # room again: the folder whole
        await wait_for(pilot, lambda: str(table.get_row(copy)[0]) == f"k8s-rollout ({copy})", what="whole")
        assert "…" not in str(table.get_row(copy)[0])


async def test_the_lineage_tree_gives_a_title_half_its_row_before_the_date(home, tmp_path):
    """At 120 columns ``Flaky rounding…`` kept 12 cells and ``2 msgs · ended · 2026-11-30`` the rest: the
    date now gives way first, and at 80 the size, while the title would have less than half the row."""
    seed_demo_home(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_mode(pilot, "2", SessionsScreen)
        await wait_for(pilot, lambda: screen.tree.root_count == 3, what="the demo's three sessions")
        for width, height in ((120, 40), (80, 24)):
            await pilot.resize_terminal(width, height)
            await settle(pilot)
            rows = [line.split("│")[1] for line in screen_text(app).splitlines() if "│●" in line]
            assert "● Flaky rounding test  " in rows[0] and "● 发票导出金额问题  " in rows[1], (width, rows)
            assert "● Postgres 16 upgrade" in rows[2], (width, rows)
