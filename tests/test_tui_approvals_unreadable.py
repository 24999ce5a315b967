"""Unreadable pending record files on the Approvals screen: a row each, their pane, their keys."""

from __future__ import annotations

import json

import pytest
from textual.widgets import OptionList, Static

from engine.tools import ToolContext
from tests.screens_seed import screen_text
from tests.tui_support import footer_keys, make_app, settle, wait_for
from workbench.screens.dialogs import ConfirmDialog, EditDialog

pytestmark = pytest.mark.anyio

HOSTILE = "bad\x1b[31mred\u202eevil.json"  # a file name is anyone's text: an escape, a bidi override


@pytest.fixture
def queue(home):
    """One readable proposal, then an undecodable record, a folder named like one and a hostile name."""
    home.config_path.write_text("memory:\n  write_approval: true\n", encoding="utf-8")
    home.reload_config()
    staged = home.memory.add("memory", "Uses Postgres 16", ToolContext(actor="agent"))
    folder = home.pending_dir / "memory"
    (folder / "0badc0de.json").write_bytes(b'{"id": "0badc0de", "payload": \xff')
    (folder / "2badc0de.json").mkdir()
    (folder / HOSTILE).write_text('{"id": "x"}')
    home.staged_id = staged["pending_id"]
    return home


def text_of(app, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).content)


def rows(app) -> list[str]:
    queue = app.screen.query_one("#queue", OptionList)
    return [str(queue.get_option_at_index(i).prompt) for i in range(queue.option_count)]


async def open_row(pilot, index: int) -> None:
    await pilot.press("4")
    await settle(pilot)
    pilot.app.screen.query_one("#queue", OptionList).highlighted = index
    await settle(pilot)


async def question(pilot, what: str) -> str:
    """The screen's text once a question's dialog is shown and drawn: read as soon as it was pushed, the
    dialog had not been laid out yet and the screen read '' (a clean-clone run at load 10)."""
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog) and screen_text(app).strip() != "", what=what)
    return screen_text(app)


async def test_each_unreadable_file_has_a_row_and_a_pane_and_the_title_fits(queue, tmp_path):
    app = make_app(queue, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_row(pilot, 1)
        listed = rows(app)
        assert len(listed) == 4 and "Uses Postgres 16" in listed[0]
        assert listed[1].startswith("memory unreadable") and "0badc0de · not UTF-8 text (byte 0xff" in listed[1]
        assert "2badc0de · it is a folder, not a file" in listed[2]
        assert "bad␛[31mred<U+202E>evil.json · " in listed[3]  # shown, never obeyed
        assert "Pending (1) · 3 unreadable" in screen_text(app).splitlines()[1]  # whole, at 80 columns
        assert "\x1b" not in screen_text(app)
        assert text_of(app, "#proposal-title") == "unreadable memory record 0badc0de"
        assert text_of(app, "#proposal-info") == "file pending/memory/0badc0de.json"
        pane = text_of(app, "#proposal-warnings")
        assert pane.startswith("Cannot be used: not UTF-8 text (byte 0xff at offset 30)")
        assert "It cannot be approved" in pane and "keeps its exact bytes in the journal row" in pane
        assert "Hermes 0.19 cannot read it either" in pane and pane.endswith(
            "Press r to reject it (u does not put it back)."
        )
        assert app.screen.query_one("#proposal-diff").lines is None and not app.screen.query_one("#budget").display
        await pilot.press("down")
        await settle(pilot)
        assert "never deletes a folder" in text_of(app, "#proposal-warnings")
        await pilot.press("down")
        await settle(pilot)
        assert "Its name is not a pending id" in text_of(app, "#proposal-warnings")
        assert "␛" in text_of(app, "#proposal-title") and "\x1b" not in text_of(app, "#proposal-info")
        assert "cannot be read" not in text_of(app, "#status")  # (no a or e was pressed: nothing refused)


async def test_approve_is_refused_saying_why_and_reject_drops_it_keeping_its_bytes(queue, tmp_path):
    broken = queue.pending_dir / "memory" / "0badc0de.json"
    app = make_app(queue, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_row(pilot, 1)
        assert await footer_keys(pilot, "a", "r", "e", "A") == {"a": False, "r": True, "e": False, "A": True}
        await pilot.press("a")
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmDialog)
        status = text_of(app, "#status")
        assert status.startswith("Not approved: 0badc0de cannot be read (not UTF-8 text") and "press r" in status
        await pilot.press("e")  # (it said "Not approved" for e too, which approves nothing until saved)
        await settle(pilot)
        status = text_of(app, "#status")
        assert status.startswith("Not opened for editing: 0badc0de cannot be read (not UTF-8 text"), status
        assert "so there is nothing to edit" in status and "press r" in status
        assert broken.exists() and queue.approvals.count() == 1
        await pilot.press("r")
        assert "Reject unreadable memory record 0badc0de?" in await question(pilot, "the question")
        await pilot.press("y")
        await wait_for(pilot, lambda: len(rows(app)) == 3, what="the row to go")
        assert not broken.exists()
        [row] = queue.journal.query(subsystem="approvals", target="0badc0de", limit=1)
        assert row.action == "reject" and row.detail["raw"] == '{"id": "0badc0de", "payload": \\xff'
        assert "Dropped unusable pending memory record '0badc0de'" in text_of(app, "#status")
        assert "Press u" not in text_of(app, "#status") and not app.screen.rejected  # (u cannot rebuild it)
        assert "2badc0de" in text_of(app, "#proposal-title")  # the next one takes its row


async def test_reject_on_a_folder_says_why_and_changes_nothing(queue, tmp_path):
    app = make_app(queue, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_row(pilot, 2)
        assert await footer_keys(pilot, "a", "r") == {"a": False, "r": False}
        await pilot.press("r")
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmDialog)
        assert text_of(app, "#status").startswith("It is a folder, not a file: rejecting never deletes a folder")
        assert (queue.pending_dir / "memory" / "2badc0de.json").is_dir()
        assert queue.journal.query(subsystem="approvals", actions=("reject",)) == []


async def test_approve_all_leaves_them_and_reject_all_counts_them_in(queue, tmp_path):
    app = make_app(queue, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_row(pilot, 0)
        await pilot.press("A")
        text = await question(pilot, "approve all's question")
        assert "Approve all 1 pending write?" in text
        assert "Left as they are: 3 unreadable files, which cannot be approved" in text
        await pilot.press("n")
        await settle(pilot)
        await pilot.press("R")
        text = await question(pilot, "reject all's question")
        assert "Reject all 2 pending writes, 1 unreadable file among them?" in text
        assert "0badc0de  unreadable · not UTF-8 text" in text
        assert "Left as they are: 2 unreadable files rejecting cannot take" in text
        await pilot.press("y")
        await wait_for(pilot, lambda: len(rows(app)) == 2, what="the rows to go")
        status = text_of(app, "#status")
        assert (
            status
            == "Rejected 2. 1 unreadable file dropped, each kept in its journal row. Press u to put the proposal back."
        )
        assert app.screen.rejected == [queue.staged_id]  # u puts back the proposal, not the dropped file
        assert queue.approvals.count() == 0 and len(queue.approvals.problems()) == 2
        await pilot.press("u")  # (the group's revert: the dropped file is left, not a failure to report)
        await wait_for(pilot, lambda: text_of(app, "#status").startswith("Put back"), what="u")
        assert text_of(app, "#status") == "Put back 1: waiting for approval again."
        assert [r.id for r in queue.approvals.list()] == [queue.staged_id]


async def test_a_queue_of_only_unreadable_files_dims_approve_all_and_says_why(home, tmp_path):
    (home.pending_dir / "memory").mkdir(parents=True, exist_ok=True)
    (home.pending_dir / "memory" / "1badc0de.json").write_text("[1, 2]")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_row(pilot, 0)
        assert "Pending (0) · 1 unreadable" in screen_text(app)
        assert "Hermes 0.19 reads it as JSON that is not an object" in text_of(app, "#proposal-warnings")
        assert await footer_keys(pilot, "a", "r", "A") == {"a": False, "r": True, "A": False}
        await pilot.press("A")
        await settle(pilot)
        assert text_of(app, "#status").startswith("Nothing readable to approve: 1 unreadable file cannot")


async def test_the_rows_follow_files_another_process_adds_fixes_and_removes(home, tmp_path):
    folder = home.pending_dir / "memory"
    folder.mkdir(parents=True, exist_ok=True)
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("4")
        await settle(pilot)
        (folder / "3badc0de.json").write_text('{"id": "3badc0de"')  # a writer cut short
        await wait_for(pilot, lambda: any("3badc0de · not valid JSON" in r for r in rows(app)), what="its row")
        fixed = {
            "id": "3badc0de",
            "action": "add",
            "summary": "add to memory: Fixed by hand",
            "created_at": home.clock.now(),
            "payload": {"action": "add", "target": "memory", "content": "Fixed by hand"},
        }
        (folder / "3badc0de.tmp").write_text(json.dumps(fixed))
        (folder / "3badc0de.tmp").rename(folder / "3badc0de.json")
        await wait_for(pilot, lambda: any("Fixed by hand" in r for r in rows(app)), what="it to read as a proposal")
        assert text_of(app, "#queue-title") == "Pending (1)"
        await wait_for(pilot, lambda: "Fixed by hand" in text_of(app, "#proposal-info"), what="its preview")
        (folder / "4badc0de.json").write_text("{")
        await wait_for(pilot, lambda: text_of(app, "#queue-title") == "Pending (1) · 1 unreadable", what="another")
        (folder / "4badc0de.json").unlink()
        await wait_for(pilot, lambda: len(rows(app)) == 1, what="its row to go")


async def test_a_reject_refused_meanwhile_says_why_not_that_it_was_decided_elsewhere(queue, tmp_path):
    broken = queue.pending_dir / "memory" / "0badc0de.json"
    app = make_app(queue, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_row(pilot, 1)
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
        broken.unlink()
        broken.mkdir()  # someone put a folder there while the question was open
        await pilot.press("y")
        await settle(pilot)
        status = " ".join(text_of(app, "#status").split())  # (cut to the status line's rows: whole in a notice)
        said = " ".join(n.message for n in app._notifications)
        assert status.startswith("Not rejected, nothing changed: Pending record") and "decided elsewhere" not in status
        assert "cannot be rejected: it is a folder, not a file" in said and broken.is_dir()


async def test_a_file_that_changed_while_its_question_was_open_is_told_with_the_verb_asked(queue, tmp_path):
    """`a` on a proposal whose file broke while the question was open said "Not rejected"; `r` on an
    unreadable row whose file was fixed meanwhile said "Not applied, still pending"; and `r` on a
    proposal whose file broke meanwhile dropped it as unreadable, asking nothing more, with no `u`."""
    folder = queue.pending_dir / "memory"
    staged = folder / f"{queue.staged_id}.json"
    good = staged.read_bytes()
    app = make_app(queue, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        for key, answer in (("a", "Not applied, still pending: "), ("r", "Not rejected, nothing changed: ")):
            await open_row(pilot, 0)
            await pilot.press(key)
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
            staged.write_bytes(b"{ broken")
            await pilot.press("y")
            await wait_for(pilot, lambda: text_of(app, "#status").startswith(answer), what=f"{key}'s refusal")
            assert staged.read_bytes() == b"{ broken"
            staged.write_bytes(good)
            await wait_for(pilot, lambda: "Uses Postgres 16" in rows(app)[0], what="the proposal back")
        await open_row(pilot, 1)  # 0badc0de, unreadable: fixed while its question is open
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
        fixed = json.loads(good)
        fixed.update(id="0badc0de")
        (folder / "0badc0de.json").write_text(json.dumps(fixed))
        await pilot.press("y")
        await wait_for(pilot, lambda: "reads as a record now" in text_of(app, "#status"), what="the refusal")
        assert text_of(app, "#status").startswith("Not rejected, nothing changed: ")
        assert (folder / "0badc0de.json").exists()


async def test_with_only_files_rejecting_cannot_take_r_and_a_say_so(home, tmp_path):
    """Left with a folder named like a record and notes.json: `R` did nothing and said nothing, and `A`
    said "r rejects the highlighted one, R all of them", neither of which can be."""
    folder = home.pending_dir / "memory"
    (folder / "2badc0de.json").mkdir(parents=True)
    (folder / "notes.json").write_text('{"note": "my notes"}')
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_row(pilot, 0)
        await pilot.press("R")
        await wait_for(pilot, lambda: text_of(app, "#status").startswith("Nothing can be rejected"), what="R")
        assert "2 unreadable files rejecting cannot take" in text_of(app, "#status")
        await pilot.press("A")
        await wait_for(pilot, lambda: "Nor can they be rejected" in text_of(app, "#status"), what="A")
        assert "R all of them" not in text_of(app, "#status")
    assert folder.joinpath("2badc0de.json").is_dir() and folder.joinpath("notes.json").exists()


async def test_reject_all_of_one_unreadable_file_asks_of_that_file(home, tmp_path):
    """With only an unreadable file queued, R asked "Reject all 1 pending write, 1 unreadable file among them?"."""
    (home.pending_dir / "memory").mkdir(parents=True, exist_ok=True)
    (home.pending_dir / "memory" / "0badc0de.json").write_bytes(b"{broken")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_row(pilot, 0)
        await pilot.press("R")
        text = await question(pilot, "reject all's question")
        assert "Reject the unreadable file?" in text and "among them" not in text


def two_staged_the_first_to_break(home) -> str:
    """Two memory adds staged, oldest first; the id of the first, which ``breaks`` breaks."""
    home.config_path.write_text("memory:\n  write_approval: true\n", encoding="utf-8")
    home.reload_config()
    broken = home.memory.add("memory", "A", ToolContext(actor="agent"))["pending_id"]
    home.clock.advance(1)  # (the queue is oldest first)
    home.memory.add("memory", "B", ToolContext(actor="agent"))
    return broken


def breaks(home, pending_id: str) -> None:
    """Its record half written, after the queue read it (no watcher here to tell the screen)."""
    (home.pending_dir / "memory" / f"{pending_id}.json").write_text('{"id": broken')


async def test_e_on_a_proposal_whose_file_broke_after_the_queue_read_it_says_it_opens_no_editor(home, tmp_path):
    """`e` on such a proposal said "Not approved: …", though `e` opens an editor and approves only on save:
    it says the editor was not opened, and why."""
    broken = two_staged_the_first_to_break(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_row(pilot, 1)
        breaks(home, broken)
        await pilot.press("up", "e")
        said = f"Not opened for editing: {broken} cannot be read (not valid JSON"
        await wait_for(pilot, lambda: said in screen_text(app), what="why it cannot be edited")
        assert "so there is nothing to edit" in " ".join(screen_text(app).split())
        assert not isinstance(app.screen, (ConfirmDialog, EditDialog))


async def test_a_on_a_proposal_whose_file_broke_after_the_queue_read_it_says_why_not(home, tmp_path):
    """A record broken after the queue listed it (an editor, a half-written copy) failed its preview, and
    `a` on it then asked "Approve memory add …?" as if there were a write to apply, over a warning with
    the CLI's advice. Now no question is asked: the status line says why it cannot be approved and what
    to do, and the row becomes the broken file's, whose pane says the rest."""
    broken = two_staged_the_first_to_break(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_row(pilot, 1)
        breaks(home, broken)
        await pilot.press("up", "a")
        said = f"Not approved: {broken} cannot be read (not valid JSON"
        await wait_for(pilot, lambda: said in screen_text(app), what="why it cannot be approved")
        assert "press r to reject it" in screen_text(app) and not isinstance(app.screen, ConfirmDialog)
        assert app.screen.current_problem.id == broken  # (its row: the file's own, r drops it)
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the reject question")
        assert app.screen.question.startswith(f"Reject unreadable memory record {broken}?")
