"""The Approvals screen on records Hermes staged (``old_text`` only, no pinned entry)."""

from __future__ import annotations

import pytest
from textual.widgets import Button, OptionList, Static, TextArea

from engine.skills.manage import skill_manage_tool
from engine.tools import ToolContext
from tests.hermes_support import hermes_record
from tests.screens_seed import screen_text
from tests.test_approvals_hermes import BREW, HERMES_STAGES_THEN_PATCHES
from tests.tui_support import drawn, footer_keys, make_app, settle, wait_for
from widgets.gauge import CapacityGauge
from workbench.screens.dialogs import ConfirmDialog, EditDialog

pytestmark = pytest.mark.anyio


def text_of(app, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).content)


async def edit_proposal(pilot, line: str) -> EditDialog:
    """Approvals, once the diff shows ``line``; then e: the edit-then-approve box."""
    await pilot.press("4")
    await wait_for(pilot, lambda: line in text_of(pilot.app, "#proposal-diff"), what="the diff")
    await pilot.press("e")
    await wait_for(  # (composed: on a loaded machine the box is the screen a moment before its parts are)
        pilot, lambda: isinstance(pilot.app.screen, EditDialog) and pilot.app.screen.query("#error"), what="the editor"
    )
    return pilot.app.screen


async def test_hermes_batch_shows_the_entries_it_hits_and_an_ambiguous_remove_is_refused(home, tmp_path, clock):
    for entry in ("User likes tea", "Project uses uv", "Deploys on Fridays"):
        home.memory.add("memory", entry, ToolContext(actor="user"))
    hermes_record(
        home,
        "0000aaaa",
        {
            "action": "batch",
            "target": "memory",
            "operations": [
                {"action": "replace", "old_text": "tea", "content": "User likes green tea"},
                {"action": "remove", "old_text": "uv"},
                {"action": "add", "content": "CI on GitHub"},
            ],
        },
        created_at=clock.now() + 1,  # staged after the entries were written (else the preview flags every hit)
        summary="batch (hermes)",
    )
    hermes_record(
        home,
        "0000bbbb",
        {"action": "remove", "target": "memory", "content": None, "old_text": "s"},
        created_at=clock.now() + 2,
    )
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("4")
        await settle(pilot)
        await wait_for(pilot, lambda: "+ User likes green tea" in text_of(app, "#proposal-diff"), what="batch diff")
        diff = text_of(app, "#proposal-diff")
        assert text_of(app, "#proposal-info").startswith("from agent, staged by Hermes · ")
        queue = app.screen.query_one("#queue", OptionList)
        # its own summary is not what it does in words: the payload's is shown
        assert "\nagent · Hermes · apply 3 op(s) to memory: - replace: tea -> User likes green tea⏎- remove" in str(
            queue.get_option_at_index(0).prompt
        )
        assert "- User likes tea" in diff and "- Project uses uv" in diff and "+ CI on GitHub" in diff
        assert text_of(app, "#proposal-warnings") == ""
        await pilot.press("down")
        await wait_for(pilot, lambda: "Would be refused" in text_of(app, "#proposal-warnings"), what="refusal")
        assert "now matches 3 different entries in MEMORY.md" in text_of(app, "#proposal-warnings")
        await pilot.press("up")
        await settle(pilot)
        await pilot.press("A")  # (its question said "Approve all 2 …?" with no word of the refusal)
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
        assert app.screen.question == "Approve all 2 pending writes? (1 of them would be refused now and stay pending)"
        await pilot.press("n")
        await settle(pilot)
        await pilot.press("a", "y")  # approvals ask first
        await wait_for(pilot, lambda: app.screen.query_one("#queue", OptionList).option_count == 1, what="approved")
        await pilot.press("a")  # the ambiguous remove: the question says it would be refused
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
        assert "⚠ Would be refused now, and stay pending: " in app.screen.detail
        await pilot.press("y")  # refused, said once
        await wait_for(pilot, lambda: "still pending" in text_of(app, "#status"), what="the refusal")
        assert text_of(app, "#status").startswith("Not applied, still pending: this remove targets 's'")
    assert home.memory.entries("memory") == ["User likes green tea", "Deploys on Fridays", "CI on GitHub"]
    assert [r.id for r in home.approvals.list()] == ["0000bbbb"]


async def test_approve_all_never_applies_what_its_question_showed_refused(home, tmp_path, clock):
    """Hermes's remove of 'e' matched two entries, so approve all's question said it would be refused and
    stay pending; another writer removed one of them before y, and the remove then deleted the other,
    an entry the question never named (a user's trial)."""
    for entry in ("User likes PostgreSQL", "User deploys with make"):
        home.memory.add("memory", entry, ToolContext(actor="user"))
    hermes_record(
        home, "0000eeee", {"action": "remove", "target": "memory", "old_text": "e"}, created_at=clock.now() + 1
    )
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("4")
        await settle(pilot)
        await pilot.press("A")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
        assert "(1 of them would be refused now and stay pending)" in app.screen.question
        home.memory.remove("memory", "PostgreSQL", ToolContext(actor="user"))  # meanwhile, elsewhere
        await pilot.press("y")
        await wait_for(pilot, lambda: "still pending" in text_of(app, "#status"), what="the outcome")
        assert "its question showed it refused" in text_of(app, "#status")
    assert home.memory.entries("memory") == ["User deploys with make"]
    assert [r.id for r in home.approvals.list()] == ["0000eeee"]


async def test_edit_then_approve_a_hermes_replace_budgets_it_as_a_replace(home, tmp_path, clock):
    for entry in ("User likes tea!", "Project uses uv"):
        home.memory.add("memory", entry, ToolContext(actor="user"))
    hermes_record(
        home,
        "0000cccc",
        {"action": "replace", "target": "memory", "content": "User likes coffee", "old_text": "tea"},
        created_at=clock.now() + 1,  # staged after the entries were written (else saving asks first)
    )
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await edit_proposal(pilot, "+ User likes coffee")
        assert dialog.query_one(TextArea).text == "User likes coffee"
        # (the box shows only the new text; a quoted sentence with its own stop takes no second: “tea!”.)
        assert dialog.hint.startswith("It replaces “User likes tea!” ")
        assert str(dialog.query_one("#save", Button).label) == "Approve (ctrl+s)"  # (it said Save)
        assert dialog.query_one("#draft-budget", CapacityGauge).used == len("User likes coffee\n§\nProject uses uv")
        dialog.query_one(TextArea).text = "User likes black coffee"
        await pilot.press("ctrl+s")
        await settle(pilot)
    assert home.memory.entries("memory") == ["User likes black coffee", "Project uses uv"]
    assert home.approvals.count() == 0


def _remove_hitting_a_rewritten_entry(home, clock, pid: str) -> None:
    """A Hermes remove staged, then the entry it hits rewritten by hand two minutes later."""
    home.memory.add("memory", "The build cache lives in /var/cache/ci, cleaned weekly", ToolContext(actor="user"))
    hermes_record(
        home, pid, {"action": "remove", "target": "memory", "old_text": "build cache"}, created_at=clock.now()
    )
    clock.advance(120)
    home.memory.replace(
        "memory", "cleaned weekly", "The build cache lives in /var/cache/ci3 now", ToolContext(actor="user")
    )


async def test_a_hermes_remove_hitting_an_entry_written_after_staging_is_flagged(home, tmp_path, clock):
    _remove_hitting_a_rewritten_entry(home, clock, "0000dddd")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("4")
        await settle(pilot)
        await wait_for(pilot, lambda: "written after" in text_of(app, "#proposal-warnings"), what="the warning")
        warning = text_of(app, "#proposal-warnings")
        assert "Remove hits an entry written after this was staged (user," in warning
        assert "The build cache lives in /var/cache/ci3 now" in warning
        await pilot.press("a")  # the question repeats it: at 80x24 the dialog covers the pane
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
        assert "⚠ Remove hits an entry written after this was staged (user," in app.screen.detail
        assert app.screen.detail.endswith("The build cache lives in /var/cache/ci3 now")
        await pilot.press("n")


async def test_a_proposal_that_would_be_refused_still_shows_what_it_asks_to_write(home, tmp_path, clock):
    """Hermes's scan lets ESC through, the workbench's refuses it: the diff is then empty, so the
    pane and `pending show` name the text itself (they showed the summary and "(no change)")."""
    from engine.textsafety import visible
    from workbench.cli.pending_cmds import render_preview

    hermes_record(home, "0000eeee", {"action": "add", "target": "memory", "content": "Colour \x1b[31mred\x1b[0m logs"})
    shown = visible(render_preview(home.approvals.preview("0000eeee")))  # as the CLI prints it
    assert "would fail: Blocked" in shown and "it asks to write: Colour ␛[31mred␛[0m logs" in shown
    many = [{"action": "add", "content": f"fact {n} \x07"} for n in range(30)]
    hermes_record(home, "0000ffff", {"action": "batch", "target": "memory", "operations": many})
    batch = home.approvals.preview("0000ffff")
    assert (len(batch["proposed"]), batch["proposed_count"]) == (20, 30)
    assert "it asks to write: fact 19 \x07\n  and 10 more texts\n" in render_preview(batch)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("4")
        await settle(pilot)
        await wait_for(pilot, lambda: "It asks to write" in text_of(app, "#proposal-warnings"), what="the text")
        assert "It asks to write: Colour ␛[31mred␛[0m logs" in text_of(app, "#proposal-warnings")


async def test_a_refused_proposal_of_megabytes_shows_its_start(home, tmp_path, clock):
    """A Hermes record asking to add 1 MB (a staged paste) held the Approvals screen for half a minute
    drawing all of it under "It asks to write:", and `pending show` printed all of it: both show its
    start and how many characters more (the record keeps it whole; `--json` gives it)."""
    from workbench.cli.pending_cmds import render_preview

    big = " ".join(["tail"] * 200_000)
    hermes_record(home, "0000abcd", {"action": "add", "target": "memory", "content": big})
    more = f"… ({len(big) - 6000:,} more characters)"
    assert f"it asks to write: {big[:6000]}\n{more}" in render_preview(home.approvals.preview("0000abcd"))
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("4")
        await wait_for(pilot, lambda: "It asks to write" in text_of(app, "#proposal-warnings"), 30, "the text")
        assert more in text_of(app, "#proposal-warnings") and len(text_of(app, "#proposal-warnings")) < 10_000


def stage_alexandra_chen(home, clock) -> None:
    """The user's entry `Name: Alexandra`, and a minute later Hermes's staged replace of it."""
    home.memory.add("user", "Name: Alexandra", ToolContext(actor="user"))
    clock.advance(60)
    hermes_record(
        home,
        "0000abcd",
        {"action": "replace", "target": "user", "content": "Name: Alexandra Chen", "old_text": "Alexandra"},
        created_at=clock.now(),
    )


async def test_edit_then_approve_asks_again_when_hermes_wrote_the_entry_meanwhile(home, tmp_path, clock):
    """Hermes replaced the entry a staged replace hits while the edit box was open: saving approved
    at once and overwrote Hermes's newer entry, with only "the target changed" said."""
    stage_alexandra_chen(home, clock)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await edit_proposal(pilot, "+ Name: Alexandra Chen")
        clock.advance(60)
        newer = "Name: Alexandra Smith (married, use Smith)"
        path = home.memory.path("user")
        path.write_text(newer, encoding="utf-8")  # Hermes's own write, as its MemoryStore leaves the file
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "Save again" in str(dialog.query_one("#error", Static).content), what="warning")
        said = str(dialog.query_one("#error", Static).content)
        assert "Replace hits an entry written after this was staged" in said and newer in said
        assert home.memory.entries("user") == [newer] and home.approvals.count() == 1
        await pilot.press("ctrl+s")  # asked and answered: approved with the edit
        await wait_for(pilot, lambda: home.approvals.count() == 0, what="the approval")
    assert home.memory.entries("user") == ["Name: Alexandra Chen"]


async def test_why_an_edited_approval_waits_shows_in_a_small_terminal(home, tmp_path, clock):
    """At 60x20 the editor's least height pushed what the save met below the box: ctrl+s seemed to do
    nothing."""
    stage_alexandra_chen(home, clock)
    clock.advance(60)
    home.memory.path("user").write_text("Name: Alexandra Smith", encoding="utf-8")  # Hermes's own write
    app = make_app(home, tmp_path)
    async with app.run_test(size=(60, 20)) as pilot:
        dialog = await edit_proposal(pilot, "+ Name: Alexandra Chen")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "Save again" in str(dialog.query_one("#error", Static).content), what="warning")
        await settle(pilot)
        assert "Nothing was approved." in drawn(app) and "Replace hits an entry" in drawn(app)
        assert home.approvals.count() == 1


@pytest.mark.parametrize("keys", [("a",), ("A",)])
async def test_an_entry_rewritten_while_approval_is_asked_is_never_replaced_unseen(home, tmp_path, clock, keys):
    """A Hermes replace names its entry by a few words only; while the question was open Hermes
    rewrote the entry, the words still matched, and y replaced the new text, which nobody was shown."""
    home.memory.add("memory", "Backups run nightly at 03:00 JST", ToolContext(actor="user"))
    payload = {
        "action": "replace",
        "target": "memory",
        "old_text": "Backups run nightly",
        "content": "Backups at 01:00",
    }
    hermes_record(home, "0000cccc", payload, created_at=clock.now() + 1)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("4")
        await wait_for(pilot, lambda: "Backups at 01:00" in text_of(app, "#proposal-diff"), what="the diff")
        await pilot.press(*keys)
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
        assert "replace hits: Backups run nightly at 03:00 JST" in app.screen.detail
        if keys == ("A",):  # the queue row's mark for what Hermes staged
            assert app.screen.detail.startswith("0000cccc  Hermes · ")
            assert app.screen.question == "Approve all 1 pending write?"
        home.memory.replace("memory", "03:00", "Backups run nightly at 05:00 JST (moved)", ToolContext(actor="user"))
        await pilot.press("y")
        await settle(pilot)
        assert home.memory.entries("memory") == ["Backups run nightly at 05:00 JST (moved)"]
        assert [r.id for r in home.approvals.list()] == ["0000cccc"]  # it still waits
        await wait_for(pilot, lambda: "changed while you were asked" in text_of(app, "#status"), what="why")


async def test_approve_all_warns_of_an_entry_written_after_staging_once(home, tmp_path, clock):
    """The question listed the hit entry's warning twice: the target line's and the caution's."""
    _remove_hitting_a_rewritten_entry(home, clock, "0000eeee")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("4")
        await settle(pilot)
        for key in ("a", "A"):
            await pilot.press(key)
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
            detail = app.screen.detail
            assert detail.count("written after this was staged") == 1, detail
            assert "op 1 remove hits: The build cache lives in /var/cache/ci3 now" in detail
            await pilot.press("n")
            await settle(pilot)


async def test_the_header_names_the_session_whose_call_staged_a_hermes_record(home, tmp_path, clock):
    """Hermes's record names no session; the call that staged it, stored in state.db, does (as the
    Timeline and `pending show` say it)."""
    hermes_record(home, "0000cccc", {"action": "add", "target": "user", "content": "Drinks green tea"})
    call = {"id": "call_1", "type": "function", "function": {"name": "memory", "arguments": "{}"}}
    home.archive.create_session("h-stage-2", source="cli")
    home.archive.append_messages(
        "h-stage-2",
        [
            {"role": "user", "content": "remember I drink green tea"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {
                "role": "tool",
                "tool_name": "memory",
                "tool_call_id": "call_1",
                "content": '{"success": true, "staged": true, "pending_id": "0000cccc"}',
            },
        ],
    )
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("4")
        await wait_for(pilot, lambda: "session h-stage-2" in text_of(app, "#proposal-info"), what="the session")
        assert text_of(app, "#proposal-info").startswith("from agent, staged by Hermes · ")


async def test_a_cjk_proposal_s_queue_row_is_cut_by_its_width_on_screen(home, tmp_path, clock):
    """A proposal's gist was cut at 120 characters: in Japanese, 240 cells, so at 60x20 one row filled
    the queue and the next proposal could not be seen."""
    for pid in ("0000abcd", "0000abce"):
        content = "長い記憶のエントリ" * 30
        hermes_record(home, pid, {"action": "add", "target": "memory", "content": content}, created_at=clock.now())
    app = make_app(home, tmp_path)
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.press("4")
        await wait_for(pilot, lambda: "if approved:" in drawn(app), what="the queue")  # (its pane's title)
        await settle(pilot)
        rows = [line for line in drawn(app).splitlines() if line.startswith("│ memory add")]
        assert len(rows) == 2


async def test_the_draft_of_a_proposal_that_would_be_refused_shows_at_60x20(home, tmp_path, clock):
    """The box's note that the proposal would be refused as it stands (Hermes staged an ESC) took nine
    lines at 60x20 and pushed the draft out of view: there was nothing to edit on screen."""
    content = "Prefers \x1b]0;PWNED\x07 titles and draft-7f3 oolong"
    hermes_record(home, "0000abcd", {"action": "add", "target": "user", "content": content}, created_at=clock.now())
    app = make_app(home, tmp_path)
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.press("4")
        await wait_for(pilot, lambda: "Would be refused" in text_of(app, "#proposal-warnings"), what="the proposal")
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, EditDialog) and app.screen.query("#error"), what="box")
        await settle(pilot)
        shown = drawn(app)
        assert "As it stands it would be refused" in shown
        assert "draft-7f3" in shown


async def test_edit_then_approve_says_when_only_other_entries_changed(home, tmp_path, clock, hermes):
    """Hermes adding an entry of its own while an edit-then-approve box was open read "the target changed":
    as if the entry the proposal replaces had been rewritten. It names what changed: other entries."""
    stage_alexandra_chen(home, clock)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await edit_proposal(pilot, "+ Name: Alexandra Chen")
        note = dialog.query_one("#on-disk", Static)
        said = hermes.json(
            home.root,
            """
            from tools.memory_tool import MemoryStore, memory_tool
            store = MemoryStore()
            store.load_from_disk()
            print(memory_tool(store=store, action="add", target="user", content="Prefers short answers"))
            """,
        )
        assert said["success"], said
        home.memory.catch_up()  # (what the file watcher does on Hermes's write)
        await wait_for(pilot, lambda: note.display, what="the editor's on-disk note")
        assert "other USER entries changed" in str(note.content), note.content
        assert "the target changed" not in str(note.content)
        home.memory.replace("user", "Name: Alexandra", "Name: Alexandra Smith", ToolContext(actor="user"))
        await wait_for(pilot, lambda: "an entry it changes was rewritten" in str(note.content), what="the entry's note")


async def test_edit_then_approve_of_an_add_too_long_to_approve_follows_other_writes(home, tmp_path):
    """Shortening an add too long for the store is what edit-then-approve is for; its preview (a refusal)
    names no target, so a write of another entry while the box was open raised KeyError in the box's
    look at the disk: no note, and a budget measured against the file as it was."""
    home.memory.add("memory", "User likes PostgreSQL", ToolContext(actor="user"))
    hermes_record(home, "0000bbbb", {"action": "add", "target": "memory", "content": "Long note " * 300})
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("4")
        await wait_for(pilot, lambda: "would be refused" in text_of(pilot.app, "#proposal-title"), what="the pane")
        await pilot.press("e")
        await wait_for(
            pilot, lambda: isinstance(pilot.app.screen, EditDialog) and pilot.app.screen.query("#error"), what="the box"
        )
        note = pilot.app.screen.query_one("#on-disk", Static)
        home.memory.add("memory", "Deploys on Fridays", ToolContext(actor="user"))
        await wait_for(pilot, lambda: note.display, what="the box's on-disk note")
        assert "other MEMORY entries changed" in str(note.content), note.content


def stale_hermes_patch(home, hermes) -> str:
    """A skill patch Hermes staged and then made stale by patching the text it replaces itself: its id."""
    assert skill_manage_tool(home, {"action": "create", "name": "brew", "content": BREW}, ToolContext(actor="user"))[
        "success"
    ]
    home.config_path.write_text("skills:\n  write_approval: true\n", encoding="utf-8")
    pid, done = hermes.json(home.root, HERMES_STAGES_THEN_PATCHES % ("Steep for 3 minutes.", "Pour, wait, drink."))
    assert done is True
    return pid


async def e_refused(home, tmp_path, warning: str) -> str:
    """Approvals on the first proposal, whose pane warns ``warning``: e is dimmed, and pressed opens no
    editor; what it says."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("4")
        await wait_for(pilot, lambda: warning in text_of(app, "#proposal-warnings"), what="the refusal")
        assert await footer_keys(pilot, "a", "e") == {"a": True, "e": False}
        await pilot.press("e")
        await settle(pilot)
        assert not isinstance(app.screen, EditDialog)
        [said] = [n.message for n in app._notifications]
    return said


async def test_e_on_a_hermes_patch_whose_text_hermes_changed_says_no_edit_can_help(home, hermes, tmp_path):
    """e on a skill patch whose old text Hermes changed after staging it opened an editor of the new text
    alone, which could never make it apply: the save then said to reject it. e is dimmed and says why."""
    pid = stale_hermes_patch(home, hermes)
    said = await e_refused(home, tmp_path, "Could not find old_string")
    assert said.startswith(
        "An edit cannot make this patch apply: it changes only the text the patch writes, and the text it "
        "replaces, 'Steep for 3 minutes.', is not in SKILL.md as it reads now. Reject it (r in Approvals, "
        f"or `workbench pending reject {pid}`)"
    ), said
    assert home.approvals.get(pid).payload["new_string"] == "Steep for 3 minutes, covered."


def cli_edit_refused_alike(home, pid: str, said: str) -> None:
    """`pending approve ID --edit` refuses in the words e said, and the proposal stays pending."""
    from tests.cli_support import ran

    status, _, err = ran("pending", "approve", pid, "--edit", "Works in CET", "--home", str(home.root))
    assert (status, err.strip()) == (1, f"error: Not applied, still pending: {said}"), err
    assert home.approvals.get(pid) is not None


HERMES_STAGES_THEN_REMOVES = """
import json
from tools import write_approval
from tools.memory_tool import load_on_disk_store, memory_tool
store = load_on_disk_store()
write_approval.write_approval_enabled = lambda subsystem: True
staged = json.loads(memory_tool(store=store, action="replace", target="user", old_text="JST",
                                content="Works in JST (UTC+9), usually 10:00-19:00"))["pending_id"]
write_approval.write_approval_enabled = lambda subsystem: False  # (then Hermes removes the entry itself, ungated)
done = json.loads(memory_tool(store=load_on_disk_store(), action="remove", target="user", old_text="JST"))["success"]
print(json.dumps([staged, done]))
"""


async def test_e_on_a_hermes_replace_whose_entry_hermes_removed_says_no_edit_can_help(home, hermes, tmp_path):
    """e on a memory replace whose entry Hermes removed after staging it opened the editor, its hint saying
    it would be refused as it stands: no edit of the new text could make it apply, so the typing was wasted.
    e is dimmed and says why and what helps, in the words `pending approve --edit` refuses with."""
    assert home.memory.add("user", "Works in JST", ToolContext(actor="user"))["success"]
    pid, done = hermes.json(home.root, HERMES_STAGES_THEN_REMOVES)
    assert done is True and home.memory.entries("user") == []
    said = await e_refused(home, tmp_path, "matches no entry")
    assert said == (
        "An edit cannot make this replace apply: it changes only the text it writes, and the entry it replaces, "
        "'JST', is not in USER.md now (removed or rewritten since it was staged). Reject it (r in Approvals, or "
        f"`workbench pending reject {pid}`); to write its text anyway, add it as an entry of its own (a on the "
        "Memory screen, or `workbench memory add --target user TEXT`)."
    ), said
    cli_edit_refused_alike(home, pid, said)
    assert home.memory.entries("user") == []


HERMES_STAGES_THEN_ADDS = """
import json
from tools import write_approval
from tools.memory_tool import load_on_disk_store, memory_tool
write_approval.write_approval_enabled = lambda subsystem: True
staged = json.loads(memory_tool(store=load_on_disk_store(), action="replace", target="user", old_text="JST",
                                content="Works in JST (UTC+9), usually 10:00-19:00"))["pending_id"]
write_approval.write_approval_enabled = lambda subsystem: False  # (then Hermes adds a second JST entry, ungated)
done = json.loads(memory_tool(store=load_on_disk_store(), action="add", target="user",
                              content="Standups at 09:30 JST"))["success"]
print(json.dumps([staged, done]))
"""


async def test_e_on_a_hermes_replace_whose_text_is_in_several_entries_says_no_edit_can_help(home, hermes, tmp_path):
    """e on a memory replace whose old text is in several entries now opened the editor, its hint saying it
    would be refused: an edit changes only the new text, never which entry it names, so the typing was
    wasted. e is dimmed and says why and what helps, in the words `pending approve --edit` refuses with."""
    assert home.memory.add("user", "Works in JST", ToolContext(actor="user"))["success"]
    pid, done = hermes.json(home.root, HERMES_STAGES_THEN_ADDS)
    assert done is True and len(home.memory.entries("user")) == 2
    said = await e_refused(home, tmp_path, "now matches 2")
    assert said == (
        "An edit cannot make this replace apply: it changes only the text it writes, and the text it replaces, "
        "'JST', is in 2 entries of USER.md now, so it names none of them. Reject it (r in Approvals, or "
        f"`workbench pending reject {pid}`); to make the change anyway, make it on the entry you mean (the Memory "
        "screen, or `workbench memory replace --target user --old OLD NEW`, OLD being text only that entry holds)."
    ), said
    cli_edit_refused_alike(home, pid, said)
    assert len(home.memory.entries("user")) == 2


async def test_e_pressed_before_the_preview_waits_for_it_and_then_says_no_edit_can_help(home, hermes, tmp_path):
    """e on a stale Hermes patch before its preview was read (as for a moment after the cursor moves) opened
    the editor, since only the preview knows the old text is gone: the typing was wasted, the save refused.
    It waits for the preview, as `a` does, then says no edit can help."""
    stale_hermes_patch(home, hermes)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("4")
        screen = app.screen
        await wait_for(pilot, lambda: screen.preview is not None, what="the preview")
        screen.preview = None
        await pilot.press("e")
        await settle(pilot)
        assert not isinstance(app.screen, EditDialog)
        assert "Reading what approving it would change: the editor follows." in screen_text(app)
        screen.load_preview(screen.current.id)
        await wait_for(
            pilot,
            lambda: "An edit cannot make this patch apply" in screen_text(app),
            what="the refusal",
        )
        assert not isinstance(app.screen, EditDialog)
