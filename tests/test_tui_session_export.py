"""The Sessions screen's x: the session shown written to a file, by the rules ``sessions export -o`` keeps."""

from __future__ import annotations

import json

import pytest
from textual.widgets import Input

from tests.screens_seed import open_mode, screen_text
from tests.tui_support import footer_labels, make_app, settle, wait_for
from workbench.screens.sessions import SessionsScreen

pytestmark = pytest.mark.anyio

SID = "20261130_150000_00000e"


def seeded(home) -> None:
    home.archive.create_session(SID, source="cli", title="Kettle talk")
    home.archive.append_message(SID, "user", "how long to steep 煎茶?")
    home.archive.append_message(SID, "assistant", "About a minute.")


async def the_box(pilot, screen: SessionsScreen, *, key: str = "x"):
    """The session shown, then ``key`` pressed: the export's file box, open."""
    app = pilot.app
    await wait_for(pilot, lambda: screen.shown_session == SID, what="the session shown")
    await pilot.press(key)
    await wait_for(pilot, lambda: app.screen.__class__.__name__ == "LineDialog", what="the export's file box")
    return app.screen


async def write_to(pilot, name: str) -> None:
    box = pilot.app.screen
    box.query_one(Input).value = name
    await pilot.press("enter")
    await settle(pilot)


async def test_x_writes_the_session_shown_as_markdown_to_the_file_named(home, tmp_path, monkeypatch):
    """The Sessions screen could archive, rename and delete a session but not export it: a user had
    to leave the app for ``sessions export``. x writes what that command writes, starting at ~/ID.md."""
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    (tmp_path / "user").mkdir()
    seeded(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_mode(pilot, "2", SessionsScreen)
        box = await the_box(pilot, screen)
        assert box.query_one(Input).value == f"~/{SID}.md"
        assert f"Export session {SID} (Kettle talk) to" in screen_text(app)
        await pilot.press("enter")
        written = tmp_path / "user" / f"{SID}.md"
        await wait_for(pilot, written.exists, what="the export written")
        assert written.read_text(encoding="utf-8") == home.archive.export_session(SID, "markdown")
        status = screen.query_one("#status")
        await wait_for(pilot, lambda: f"to {written} (Markdown)." in str(status.render()), what="the notice")
        assert app.screen is screen


async def test_a_json_name_writes_json_and_an_existing_file_is_replaced_only_on_yes(home, tmp_path):
    seeded(home)
    target = tmp_path / "out.json"
    target.write_text("mine\n", encoding="utf-8")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_mode(pilot, "2", SessionsScreen)
        await the_box(pilot, screen)
        await write_to(pilot, str(target))
        await wait_for(pilot, lambda: "Replace the file?" in screen_text(app), what="the question")
        assert "out.json exists. Yes replaces it with session" in screen_text(app)
        await pilot.press("n")
        await settle(pilot)
        assert target.read_text(encoding="utf-8") == "mine\n" and app.screen is screen
        await the_box(pilot, screen)
        await write_to(pilot, str(target))
        await wait_for(pilot, lambda: "Replace the file?" in screen_text(app), what="the question again")
        await pilot.press("y")
        await wait_for(pilot, lambda: target.read_text(encoding="utf-8") != "mine\n", what="replaced")
        assert json.loads(target.read_text(encoding="utf-8")) == json.loads(home.archive.export_session(SID))


async def test_a_refused_name_is_asked_again_with_why_and_nothing_is_written(home, tmp_path):
    """Inside the home (over state.db, say), in no folder, or empty: the box again, name kept, the reason under it."""
    seeded(home)
    state_db = home.state_db_path
    before = state_db.read_bytes()
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_mode(pilot, "2", SessionsScreen)
        await the_box(pilot, screen)
        for name, said in (
            (str(state_db), "is inside the Hermes home"),
            (str(tmp_path / "nowhere" / "x.md"), "(no such folder)"),
            ("  ", "Name the file to write the export to."),
        ):
            await write_to(pilot, name)
            await wait_for(pilot, lambda said=said: said in screen_text(app), what=said)
            box = app.screen
            assert box.__class__.__name__ == "LineDialog" and box.query_one(Input).value == name
            assert said in str(box.query_one("#line-error").render())
        assert state_db.read_bytes() == before and not (tmp_path / "nowhere").exists()


async def footer_line(pilot) -> str:
    await footer_labels(pilot)  # (settled, and the footer redrawn)
    return screen_text(pilot.app).splitlines()[-1]


async def test_x_is_listed_where_the_footer_has_room_and_answers_at_any_width(home, tmp_path):
    """At 80 columns x Export pushed ? Help out of the footer: it is listed from 90 columns (and,
    with the transcript's own keys beside it, from 120), and pressed it works at any width."""
    seeded(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_mode(pilot, "2", SessionsScreen)
        await wait_for(pilot, lambda: screen.shown_session == SID, what="the session shown")
        assert "x Export  / Search  ? Help" in await footer_line(pilot)  # (esc: nothing to do on the tree)
        screen.transcript.focus()
        assert "m Entry  a Archive  e Rename  D Delete  x Export  / Search  esc Tree  ? Help" in await footer_line(
            pilot
        )
        await pilot.resize_terminal(119, 40)
        line = await footer_line(pilot)
        assert "? Help" in line and "Export" not in line and "Archive" not in line
        await pilot.resize_terminal(80, 24)
        screen.query_one("LineageTree").focus()
        line = await footer_line(pilot)
        assert "D Delete  / Search  ? Help" in line and "Export" not in line
        await the_box(pilot, screen)


async def test_a_name_without_a_folder_is_said_with_the_folder_it_went_to(home, tmp_path, monkeypatch):
    """A name with no folder lands in the folder the workbench was started from, which the app shows
    nowhere; the notice said ``to talk.md`` alone, so the file could not be found. It names the folder."""
    started = tmp_path / "started-here"
    started.mkdir()
    monkeypatch.chdir(started)
    seeded(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_mode(pilot, "2", SessionsScreen)
        await the_box(pilot, screen)
        await write_to(pilot, "talk.md")
        await wait_for(pilot, (started / "talk.md").exists, what="the export written")
        status = screen.query_one("#status")
        await wait_for(pilot, lambda: "(Markdown)." in str(status.render()), what="the notice")
        assert f"to {started / 'talk.md'} (Markdown)." in str(status.render()).replace("\n", " ")
