"""The Doctor dialog: `workbench doctor`'s checks and report, from the TUI's command palette."""

from __future__ import annotations

import pytest
from textual.widgets import OptionList

from engine.doctor import render, run_doctor
from engine.kept_files import home_drafts
from tests.screens_seed import screen_text
from tests.tui_support import make_app, settle, wait_for
from workbench.screens.doctor import DoctorDialog

pytestmark = pytest.mark.anyio


async def test_the_palette_runs_the_doctor_and_shows_its_report(home, tmp_path):
    """Health was the CLI's alone: in the TUI, ctrl+p "doctor" found nothing, and a user whose USER.md
    could not be read (not UTF-8) had to leave the app to learn why both programs refuse to write it."""
    user_md = home.memories_dir / "USER.md"
    user_md.parent.mkdir(parents=True, exist_ok=True)
    user_md.write_bytes(b"Likes tea\n\xc2\xa7\nbroken \xff\xfe bytes")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p", *"doctor")
        await wait_for(
            pilot,
            lambda: any("Doctor: check the home" in str(o.prompt) for o in app.screen.query_one(OptionList).options),
            what="the palette's Doctor",
        )
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DoctorDialog), what="the Doctor dialog")
        dialog = app.screen
        await wait_for(pilot, lambda: "USER.md is not valid UTF-8" in screen_text(app), what="the report")
        shown = dialog.query_one("#doctor-report").text
        assert shown == render(run_doctor(home).to_dict())  # (the CLI's report, of the home as it is now)
        assert "1 finding needs attention" in shown
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, DoctorDialog)


async def test_the_doctor_dialog_lists_the_drafts_take_theirs_kept(home, tmp_path):
    """The drafts the editor's "Take theirs" kept were named only by the notice as it kept one; then it
    counted every home's drafts: it counts this home's, and another home's not at all."""
    from workbench.crash import keep_text
    from workbench.settings import drafts_dir

    app = make_app(home, tmp_path)
    drafts = drafts_dir(app.settings_file)
    kept = keep_text("my words", home_drafts(drafts, home.root), "draft")  # (as Take theirs keeps one)
    elsewhere = keep_text("other words", home_drafts(drafts, tmp_path / "another-home"), "draft")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.push_screen(DoctorDialog(home))
        await wait_for(pilot, lambda: isinstance(app.screen, DoctorDialog), what="the Doctor dialog")
        said = lambda: "".join(r.text for r in app.screen.query("#doctor-report"))  # noqa: E731
        await wait_for(pilot, lambda: "kept by the editor" in said(), what="the drafts line")
        shown = said()
        assert (
            "1 draft kept by the editor's Take theirs (your text where theirs was taken) on this home, the newest "
            f"{kept.name}" in shown
        )
        assert elsewhere.name not in shown and "unknown home" not in shown
        assert shown == render(run_doctor(home, drafts=drafts).to_dict())


def goes_on_under(lines: list[str], start: str, text: str) -> bool:
    """Whether the line after the one holding ``start`` (a finding's mark and area, or a fix's label) goes on
    under ``text``, the first words after it, as the CLI prints the report (the last line holding it: the
    dialog is over the screen)."""
    at = max(i for i, line in enumerate(lines) if start in line)
    column = lines[at].index(start + text)
    after = lines[at + 1]
    return after[column : column + len(start)].strip() == "" and after[column + len(start)] != " "


async def test_a_finding_that_wraps_goes_on_under_its_own_text(home, tmp_path):
    """At 60 columns a finding's wrapped lines began at the dialog's left edge, under its bullet and the
    report's head, so one finding read as several; then 2 cells in from its mark, under its area, while its
    fix went on 3 cells left of its own text: each goes on under its text now, as `workbench doctor` prints."""
    from workbench.crash import keep_text
    from workbench.settings import drafts_dir

    app = make_app(home, tmp_path)
    keep_text("my words", drafts_dir(app.settings_file), "draft")  # (a finding long enough to wrap)
    async with app.run_test(size=(60, 30)) as pilot:
        await settle(pilot)
        app.push_screen(DoctorDialog(home))
        await wait_for(pilot, lambda: "kept by the editor" in screen_text(app), what="the drafts line")
        lines = screen_text(app).splitlines()
        assert goes_on_under(lines, "· drafts   ", "1 draft"), "\n".join(lines)
        assert goes_on_under(lines, "fix: ", "Open one"), "\n".join(lines)
