"""The app shell: modes, header, help, palette, themes remembered, engine events bridged."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time

import pytest
from textual import work
from textual.actions import parse as parse_action
from textual.events import Key
from textual.widgets import OptionList
from textual.widgets._toast import Toast
from textual.worker import WorkerState

from engine.events import RunnerEvent
from engine.tools import ToolContext
from tests.hermes_support import write_from_another_process
from tests.tui_support import FOLDS, drawn, drawn_in, landed_on, make_app, parted, settle, wait_for
from widgets.entry_list import EntryList
from widgets.header import WorkbenchHeader
from widgets.transcript import Transcript
from workbench.app import MODES, ScreenCommands, WorkbenchApp, screen_actions
from workbench.bridge import EngineEvent
from workbench.cli import main, tui_cmds
from workbench.messages import ShowEntry
from workbench.problems import TITLE_TAIL as TAIL
from workbench.problems import headline
from workbench.screens.dialogs import ConfirmDialog
from workbench.screens.help import HelpScreen, shown_key
from workbench.settings import load_settings
from workbench.watch import HomeWatcher, classify

pytestmark = pytest.mark.anyio


def enable_approval(home) -> None:
    home.config_path.write_text("memory:\n  write_approval: true\n", encoding="utf-8")
    home.reload_config()


async def test_keys_switch_modes_and_the_header_follows(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.current_mode == "memory"
        await pilot.press("4")
        await settle(pilot)
        assert app.current_mode == "approvals"
        header = app.screen.query_one(WorkbenchHeader)
        assert header.active == "approvals" and header.home_label == "demo-home"
        await pilot.press("1")
        await settle(pilot)
        assert app.current_mode == "memory"
        for mode, key, _ in [("sessions", "2", ""), ("skills", "3", ""), ("run", "5", "")]:
            if mode not in MODES:  # a key for a screen that is not there does nothing
                await pilot.press(key)
                await settle(pilot)
                assert app.current_mode == "memory"


async def test_ctrl_c_says_which_key_quits_in_plain_words(home, tmp_path):
    """A trial: ctrl+c outside a text box showed Textual's notice with its markup as typed:
    `Press [b]ctrl+q[/b] to quit the app`."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+c")
        await settle(pilot)
        said = [(n.title, n.message) for n in app._notifications]
        assert said == [("Do you want to quit?", "Press ctrl+q to quit the workbench.")]
        assert app.is_running


async def test_a_key_typed_just_after_ctrl_q_quits_cleanly(home, tmp_path):
    """ctrl+q then a, typed fast in a terminal: the a opened the Add box as the screens closed, and the
    workbench stopped "on an unexpected error" (NoMatches '#conflict' on EditDialog), exit status 1."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.post_message(Key("ctrl+q", None))
        app.post_message(Key("a", "a"))  # (queued behind ctrl+q, as a terminal delivers them)
        await pilot.pause()
    assert app.return_code == 0  # (and run_test raised no error of the app's on leaving)


async def test_a_key_that_comes_as_the_app_shuts_down_is_dropped(home, tmp_path):
    """Textual's run_test shuts the app down while its message loop still runs: a mode key that came
    meanwhile switched to a mode whose screens were already closed, and the app ended on "No screens on
    stack" (test_tui_mash in a whole-suite run). Keys that come once the shutdown began are dropped."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        for key in "23":  # (three modes with screens, closed one by one)
            await pilot.press(key)
            await settle(pilot)
        prune = app._prune

        async def prune_then_keys(*args, **kwargs):  # keys arrive between the closing of two modes
            await prune(*args, **kwargs)
            for key in "123":
                app.post_message(Key(key, key))
            await asyncio.sleep(0.05)

        app._prune = prune_then_keys
    assert app.return_code in (0, None)  # (and run_test raised no error of the app's on leaving)


async def test_an_identical_notice_takes_the_place_of_the_one_shown(home, tmp_path):
    """Approve pressed five times on an empty queue stacked five `Nothing waits for approval.` notices
    over the screen (user trial): one is shown, the newest, with its full time left."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await pilot.press("4")
        await settle(pilot)
        await pilot.press("a", "a", "r", "a", "r")
        await settle(pilot)
        said = [n.message for n in app._notifications]
        assert said == ["Nothing waits for approval."]
        assert len(app.screen.query(Toast)) == 1
        app.notify("Something else.")
        await settle(pilot)
        assert len(app.screen.query(Toast)) == 2, "a different notice still stacks"


async def test_a_notice_a_dialog_withdraws_is_not_left_drawn_under_it(home, tmp_path):
    """A dialog takes down the information notices said before it, but Textual refreshed only the top
    screen's: the notice stayed drawn on the Memory screen, seen through the Remove dialog's backdrop
    until the dialog closed (tmux, 120x40)."""
    home.memory.add("memory", "Uses Postgres 16", ToolContext(actor="user"))
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+c")  # "Press ctrl+q to quit the workbench."
        await settle(pilot)
        memory = app.screen
        assert len(memory.query(Toast)) == 1
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmDialog)
        assert not app._notifications and not memory.query(Toast)


async def test_clicking_a_tab_switches_mode(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        header = app.screen.query_one(WorkbenchHeader)
        plain = header.render().plain
        await pilot.click(WorkbenchHeader, offset=(plain.index("Approvals"), 0))
        await settle(pilot)
        assert app.current_mode == "approvals"


async def test_the_footer_draws_its_keys_without_restyling_them(home, tmp_path, monkeypatch):
    """Each footer key was styled as it mounted, then twice more (compact on, then off, as the footer
    bound it): two style passes per key at every focus move, for keys that look the same."""
    from textual.app import App
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    restyled = []
    restyle = FooterKey.update_node_styles
    monkeypatch.setattr(
        FooterKey, "update_node_styles", lambda key, *a, **k: restyled.append(key) or restyle(key, *a, **k)
    )
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for mode in "2341":
            await pilot.press(mode)
            await settle(pilot)
        await pilot.pause()
        keys = list(app.screen.query(FooterKey))
        assert {key.key for key in keys} >= {"a", "e", "ctrl+p"} and not restyled
        for key in keys:  # as before: the keys the footer binds are not compact, the palette's is
            palette = key.has_class("-command-palette")
            assert key.compact is palette and key.has_class("-compact") is palette

    class CompactFooter(App):  # a compact footer's keys are compact
        BINDINGS = [("a", "bell", "Add")]

        def compose(self):
            yield Footer(compact=True)

    async with CompactFooter().run_test() as pilot:

        def added() -> list[FooterKey]:
            return [key for key in pilot.app.screen.query(FooterKey) if key.key == "a"]

        await wait_for(pilot, added, what="the footer's key")  # (the footer composes its keys after a refresh)
        (add,) = added()
        assert add.compact and add.has_class("-compact")


async def test_help_lists_every_key_of_every_screen(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        listed = {
            (s.title, key, desc)
            for s in app.screen.sections
            for keys, descs in s.keys
            for key in keys.split(", ")
            for desc in descs.split(" / ")
        }
        owners = [(cls.TITLE_TEXT, cls) for cls in MODES.values()] + [
            ("Transcript (Sessions and Run)", Transcript),
            ("Everywhere", WorkbenchApp),
        ]
        memory = app.screen_stack[0]

        def works(title, action):  # the current screen lists only what works in its view (check_action)
            _, name, parameters = parse_action(action)
            return title != "Memory" or memory.check_action(name, parameters) is not False

        wanted = [
            (title, shown_key(key), desc)
            for title, cls in owners
            for key, desc, action in screen_actions(cls)
            if works(title, action)
        ]
        assert len(wanted) > 30
        assert ("Memory", "esc", "Back from facts") not in listed  # (it works in the facts view only)
        assert [row for row in wanted if row not in listed] == []  # every described binding, with its key
        assert app.screen.sections[0].title == "Memory"  # the current screen comes first
        for section in app.screen.sections:  # each key once per section ("n/N" names two keys)
            keys = [key for shown, _ in section.keys for key in re.split(r", |(?<=.)/(?=.)", shown)]
            assert len(keys) == len(set(keys)), (section.title, section.keys)
        [run] = [section for section in app.screen.sections if section.title == "Run"]
        assert ("esc", "Cancel / Leave box (then 1-6)") in run.keys  # one key, two contexts: one row
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, HelpScreen)


async def test_palette_offers_the_current_screens_actions(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.press(*"Memory: Add")
        await wait_for(
            pilot,
            lambda: any("Memory: Add" in str(o.prompt) for o in app.screen.query_one(OptionList).options),
            what="palette hit",
        )


async def test_palette_leaves_out_what_the_footer_dims(home, tmp_path):
    """With nothing pending the footer dims a and r, but the palette offered them, to do nothing."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("4")
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.press(*"Approvals")
        await wait_for(
            pilot,
            lambda: any("Go to Approvals" in str(o.prompt) for o in app.screen.query_one(OptionList).options),
            what="palette hit",
        )
        await settle(pilot)
        offered = [str(o.prompt) for o in app.screen.query_one(OptionList).options]
        assert not [o for o in offered if o.startswith(("Approvals: Approve", "Approvals: Reject"))], offered
        assert not [o for o in offered if o.startswith("Approvals: Stop waiting")], offered  # (nothing waits)


async def palette_hits(pilot, query: str, first: str) -> list[str]:
    """Open the palette, type ``query`` and wait for the hit ``first``: the hits' titles in order."""
    await pilot.press("ctrl+p")
    await pilot.press(*query)
    options = pilot.app.screen.query_one(OptionList).options
    await wait_for(pilot, lambda: any(first in str(o.prompt) for o in options), what=f"palette hit {first}")
    await settle(pilot)
    return [str(o.prompt).split("\n")[0] for o in pilot.app.screen.query_one(OptionList).options]


async def test_palette_finds_other_screens_actions_and_runs_them_there(home, tmp_path):
    """On Approvals, "refreeze" found nothing: the palette listed only the current screen's actions."""
    home.memory.add("memory", "Deploys go out from main", ToolContext(actor="user"))
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        frozen = app.frozen_snapshot
        assert frozen is not None
        await pilot.press("4")
        await settle(pilot)
        hits = await palette_hits(pilot, "refreeze", "Memory: Refreeze")
        assert hits[0] == "Memory: Refreeze", hits
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.current_mode == "memory", what="the Memory screen")
        await wait_for(pilot, lambda: app.frozen_snapshot is not frozen, what="the snapshot refrozen")
        await settle(pilot)
        assert "Snapshot refrozen" in drawn(app)


async def test_palette_row_actions_elsewhere_switch_and_say_what_to_select(home, tmp_path):
    """Undo acts on the selected entry: from Approvals the palette switches to Memory and says so,
    without asking about a row the user never chose."""
    home.memory.add("memory", "Deploys go out from main", ToolContext(actor="user"))
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("4")
        await settle(pilot)
        hits = await palette_hits(pilot, "undo", "Memory: Undo")
        assert "Memory: Undo" in hits, hits
        await pilot.press(*["down"] * hits.index("Memory: Undo"), "enter")
        await wait_for(pilot, lambda: app.current_mode == "memory", what="the Memory screen")
        await settle(pilot)
        assert isinstance(app.screen, MODES["memory"])  # no question opened
        assert "Select an entry, then press u (Undo)." in [n.message for n in app._notifications]


async def test_palette_action_refused_in_a_view_the_screen_kept_says_how_to_leave_it(home, tmp_path):
    """Memory left in its facts view: the palette's "Memory: Add" from Approvals switched there and said
    only "a (Add) does nothing on Memory now.", though esc (Back from facts) is all it takes."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("p", "4")
        await settle(pilot)
        hits = await palette_hits(pilot, "memory add", "Memory: Add")
        await pilot.press(*["down"] * hits.index("Memory: Add"), "enter")
        said = "a (Add) does nothing on Memory now: press esc (Back from facts) first."
        await wait_for(pilot, lambda: said in [n.message for n in app._notifications], what="the way out said")
        assert isinstance(app.screen, MODES["memory"])


async def test_palette_action_elsewhere_left_before_its_screen_read_runs_nowhere(home, tmp_path, monkeypatch):
    """ "Memory: Add" from Approvals waits for Memory's reload; the user went back to Approvals meanwhile:
    the Add box must not open over Approvals, a screen it has nothing to do with."""
    app = make_app(home, tmp_path)
    gate, reading = threading.Event(), threading.Event()
    read = MODES["memory"]._read

    def held_read(screen, target):
        reading.set()
        gate.wait(30)
        return read(screen, target)

    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        monkeypatch.setattr(MODES["memory"], "_read", held_read)
        home.memory.add("memory", "Written while Approvals was shown", ToolContext(actor="user"))  # Memory: stale
        await settle(pilot)
        hits = await palette_hits(pilot, "memory add", "Memory: Add")
        await pilot.press(*["down"] * hits.index("Memory: Add"), "enter")
        await wait_for(pilot, reading.is_set, what="Memory's reload under way")
        await pilot.press("4")
        await wait_for(pilot, lambda: app.current_mode == "approvals", what="back on Approvals")
        gate.set()
        await wait_for(pilot, lambda: not [w for w in app.workers if w.group == "palette-elsewhere"], what="done")
        await settle(pilot)
        assert isinstance(app.screen, MODES["approvals"]), app.screen


async def test_palette_ranks_the_current_screens_actions_first(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("3")
        await settle(pilot)
        hits = await palette_hits(pilot, "edit", "Skills: Edit")
        assert hits[0] == "Skills: Edit" and {"Memory: Edit", "Approvals: Edit"} <= set(hits), hits
        assert not [hit for hit in hits if hit.startswith("Skills: ")][1:], hits  # no twin from "elsewhere"
        await pilot.press("escape")
        await settle(pilot)
        elsewhere = [title for title, _, _ in ScreenCommands(app.screen)._elsewhere()]
        assert "Memory: Refreeze" in elsewhere and "Timeline: Revert" in elsewhere
        for left_out in ("Memory: Back from facts", "Approvals: Stop waiting", "Run: Cancel", "Skills: Filter"):
            assert left_out not in elsewhere  # esc leaves a view's state, a screen not shown has none; Skills is here


async def test_theme_choice_is_remembered_between_runs(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert app.theme == "workbench-dark"
        app.theme = "workbench-light"
        await settle(pilot)
    assert load_settings(tmp_path / "tui-settings.json")["theme"] == "workbench-light"
    again = make_app(home, tmp_path)
    async with again.run_test() as pilot:
        assert again.theme == "workbench-light"
        again.theme = "nord"  # Textual's own themes keep our stylesheet valid
        await settle(pilot)
    assert load_settings(tmp_path / "tui-settings.json")["theme"] == "nord"


async def test_unknown_saved_theme_falls_back(home, tmp_path):
    (tmp_path / "tui-settings.json").write_text('{"theme": "no-such-theme"}', encoding="utf-8")
    app = make_app(home, tmp_path)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert app.theme == "workbench-dark"


async def test_pending_count_follows_staging_from_another_thread(home, tmp_path):
    enable_approval(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.pending_count == 0
        writer = threading.Thread(target=home.memory.add, args=("memory", "staged fact", ToolContext(actor="agent")))
        writer.start()
        writer.join()
        await wait_for(pilot, lambda: app.screen.query_one(WorkbenchHeader).pending == 1, what="header count")
        assert "1 pending" in app.screen.query_one(WorkbenchHeader).render().plain


async def test_config_written_by_another_program_is_taken_and_said(home, tmp_path):
    """Turning the approval gate on in config.yaml while the workbench runs gates the next agent write."""
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        write_from_another_process(home.config_path, "memory:\n  write_approval: true\n")
        await wait_for(
            pilot, lambda: any("memory.write_approval" in n.message for n in app._notifications), what="note"
        )
        assert home.memory.add("memory", "gated now", ToolContext(actor="agent")).get("staged") is True
        await wait_for(pilot, lambda: app.pending_count == 1, what="pending count")
        write_from_another_process(home.config_path, "memory: [oops\n")
        await wait_for(pilot, lambda: any("was not taken" in n.message for n in app._notifications), what="refusal")
        refusal = next(n for n in app._notifications if "was not taken" in n.message)
        assert refusal.severity == "warning" and "malformed YAML" in refusal.message
        assert home.config.bool("memory.write_approval") is True  # the settings in use stay


async def test_a_config_taken_takes_down_the_refusal_of_the_one_before(home, tmp_path):
    """A config.yaml fixed a moment after a bad one: 'config.yaml was not taken … The settings in use stay
    as they were.' stayed up beside the new limit it had just taken (user trial)."""
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        write_from_another_process(home.config_path, "memory:\n  memory_char_limit: lots\n")
        await wait_for(pilot, lambda: any("was not taken" in n.message for n in app._notifications), what="refusal")
        write_from_another_process(home.config_path, "memory:\n  memory_char_limit: 500\n")
        await wait_for(pilot, lambda: any("config.yaml changed" in n.message for n in app._notifications), what="note")
        assert not [n for n in app._notifications if "was not taken" in n.message]
        assert home.memory.limit("memory") == 500


def test_demo_refuses_a_bad_speed(tmp_path, capsys):
    assert main(["demo", "--home", str(tmp_path / "h"), "--speed", "0"]) == 2
    assert "--speed must be a positive number" in capsys.readouterr().err


def test_app_holds_the_home_it_was_given(home, tmp_path):
    app = WorkbenchApp(home, settings_file=tmp_path / "s.json", watch_files=False)
    assert app.home is home and app.home_label.endswith("home")


def test_runs_under_the_web_driver_that_textual_serve_uses(home):
    """`textual serve "workbench --home DIR"` runs the app with Textual's WebDriver on pipes."""
    home.memory.add("memory", "served [bold]literally[/]")
    env = {
        **os.environ,
        "TEXTUAL_DRIVER": "textual.drivers.web_driver:WebDriver",
        "COLUMNS": "100",
        "ROWS": "30",
        "WORKBENCH_CONFIG_DIR": str(home.root / "cfg"),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "workbench", "--home", str(home.root)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    seen = bytearray()

    def read() -> None:
        while b"literally" not in seen and (chunk := process.stdout.read1(65536)):
            seen.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=30)
    process.terminate()
    _, errors = process.communicate(timeout=10)
    assert b"served [bold]literally[/]" in bytes(seen), errors.decode(errors="replace")[-2000:]


async def test_demo_plays_in_the_app_and_the_screens_follow(home, tmp_path):
    events, threads = [], []
    home.bus.subscribe(
        lambda e: isinstance(e, RunnerEvent) and threads.append((e.kind, threading.current_thread().name))
    )
    app = make_app(home, tmp_path, demo_speed=0)  # 0: no pauses between steps
    async with app.run_test(size=(120, 40), message_hook=events.append) as pilot:

        def demo_done() -> bool:
            return all(w.state == WorkerState.SUCCESS for w in app.workers if w.group == "demo")

        await wait_for(pilot, demo_done, timeout=60, what="the demo scenario")
        await settle(pilot)
        runner_events = [m.event for m in events if isinstance(m, EngineEvent) and isinstance(m.event, RunnerEvent)]
        assert {"turn_started", "tool_called", "turn_finished"} <= {e.kind for e in runner_events}
        assert any(m.snapshot is not None for m in events if isinstance(m, EngineEvent))
        assert app.running_session is None  # every demo session ended
        # the review learned the user's name on its own thread; a flush ran just before the compression
        assert "User's name is Maya." in home.memory.entries("user")
        assert {name for kind, name in threads if kind.startswith("review_")} == {"bg-review"}
        kinds = [kind for kind, _ in threads]
        assert kinds.index("flush_finished") < kinds.index("session_rotated")
        header = app.screen.query_one(WorkbenchHeader)
        assert header.review.startswith("review: ")
        assert header.pending == home.approvals.count() > 0
        live = [row.text for row in app.screen.query_one("#live-list", EntryList).rows if row.mark != "-"]
        assert live == home.memory.entries("memory")
        assert any(row.actor == "agent" for row in home.memory.history("memory"))
        # provenance, one key away: every entry the runner wrote jumps (g) to its message in Sessions
        jumped = 0
        for target in ("memory", "user"):
            for entry in home.memory.entries(target):
                origin = home.memory.provenance(target, entry)[0]
                if origin.actor not in ("agent", "review"):
                    continue
                app.action_goto("memory")
                await settle(pilot)
                screen = app.screen
                screen.post_message(ShowEntry(target, entry))
                await wait_for(pilot, lambda: screen.detail is not None and screen.detail.entry == entry, what="entry")
                await pilot.press("g")
                await landed_on(pilot, origin.message_id, f"the message of {entry!r}")
                jumped += 1
        assert jumped >= 3


def test_watcher_classifies_changes_even_for_a_relative_home(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    from engine import open_home

    home = open_home("relative-home")
    root = (tmp_path / "relative-home").resolve()
    changed = [
        root / "memories" / "MEMORY.md",
        root / "memories" / "USER.md.lock",
        root / "skills" / "x" / "SKILL.md",
        root / "pending" / "memory" / "0a1b2c3d.json",
        root / "state.db-wal",
        root / "workbench.db-wal",
        root / "memories" / ".mem_123.tmp",
    ]
    assert classify(home, map(str, changed)) == {"memory", "skills", "skill files", "pending", "sessions"}
    assert classify(home, [str(root / "memories" / "USER.md")]) == {"user"}
    ledger = [root / "skills" / ".curator_ledger.jsonl"]
    assert classify(home, map(str, ledger)) == {"skills"}  # the list refreshes; nothing to compare
    usage = [root / "skills" / ".usage.json"]  # use counts, and pins Hermes sets: OutsideChanges compares them
    assert classify(home, map(str, usage)) == {"skills", "skill files"}


def test_watcher_reports_what_another_process_changed(home):
    seen: list[set[str]] = []
    watcher = HomeWatcher(home, seen.append)
    thread = threading.Thread(target=watcher.run)
    thread.start()
    try:
        time.sleep(0.3)  # let the watch start
        (home.skills_dir / "new-skill").mkdir()
        (home.pending_dir / "skills" / "0a1b2c3d.json").write_text("{}", encoding="utf-8")
        (home.root / "state.db").write_bytes(b"")
        home.config_path.write_text("memory:\n  write_approval: true\n", encoding="utf-8")
        wanted = {"skills", "pending", "sessions", "config"}
        deadline = time.monotonic() + 5
        while not wanted <= set().union(*seen) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        watcher.stop()
        thread.join(timeout=5)
    assert wanted <= set().union(*seen)
    assert not thread.is_alive()


def test_demo_never_seeds_a_home_that_holds_other_data(home, tmp_path, capsys, monkeypatch):
    from engine.demo import holds_other_data, seed_demo_home
    from engine.scenarios import run_scenario

    home.memory.add("memory", "My real note")
    before = (home.memories_dir / "MEMORY.md").read_bytes()
    monkeypatch.setattr(tui_cmds, "has_terminal", lambda: True)
    assert main(["demo", "--home", str(home.root), "--json"]) == 1
    assert "not the demo's" in capsys.readouterr().out
    assert (home.memories_dir / "MEMORY.md").read_bytes() == before

    from engine import open_home

    demo = open_home(tmp_path / "demo")
    assert not holds_other_data(demo)  # a new home
    seed_demo_home(demo)
    run_scenario(demo, "demo", speed=0)
    assert not holds_other_data(demo)  # a demo home is reused
    demo.close()


async def test_each_screen_hears_an_engine_event_once(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        for mode in ("memory", "approvals"):
            screen = next(s for s in app.engine_events._subscriptions if app.mode_of(s) == mode)
            assert len(app.engine_events._subscriptions[screen]) == 1, mode


async def test_a_long_home_gives_way_to_the_review_in_the_header(home, tmp_path):
    """At 120 columns a long home path left no room for "reviewing…", the one place the header says a quit
    waits for a review (trial18): the home now shortens to its last folders for it."""
    label = "/a/very/long/path/to/somebody/else/.hermes/profiles/work/with/more/folders/home4"
    app = make_app(home, tmp_path, label=label)
    async with app.run_test(size=(120, 24)) as pilot:
        await settle(pilot)
        app.running_session = "20261130_071812_cb1b9a"
        app.review_status = "reviewing…, then quit (ctrl+q: ask)"
        await settle(pilot)
        shown = app.screen.query_one(WorkbenchHeader).render().plain
        assert len(shown) <= 120 and "│ reviewing…, then quit" in shown and shown.endswith("/home4")
        app.review_status = ""
        await settle(pilot)
        shown = app.screen.query_one(WorkbenchHeader).render().plain  # (the id whole: the home to its last folders)
        assert shown.endswith("│ 20261130_071812_cb1b9a │ …/more/folders/home4"), shown


async def test_header_keeps_the_pending_count_at_80_columns(home, tmp_path):
    app = make_app(home, tmp_path, label="/a/very/long/path/to/somebody/else/.hermes/profiles/work")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.running_session = "20261130_071812_cb1b9a"
        app.pending_count = 12
        await settle(pilot)
        shown = app.screen.query_one(WorkbenchHeader).render().plain
        assert len(shown) <= 80 and shown.endswith("12 pending ● …/work")  # ● a session runs, in …/work
        for name in [label for _, _, label in app.mode_tabs()]:  # a running session never costs a tab its name
            assert name in shown
        await pilot.click(WorkbenchHeader, offset=(shown.index("6 Timeline") + 3, 0))  # tabs still click
        await settle(pilot)
        assert app.current_mode == "timeline"
        await pilot.resize_terminal(90, 24)  # the home keeps its place before the session's id has one
        await settle(pilot)
        shown = app.screen.query_one(WorkbenchHeader).render().plain
        assert len(shown) <= 90 and shown.endswith("● …/work") and "4 Approvals" in shown
        await pilot.resize_terminal(110, 24)  # room for the home again: shortened to its end
        await settle(pilot)
        shown = app.screen.query_one(WorkbenchHeader).render().plain
        assert len(shown) <= 110 and "12 pending" in shown and shown.endswith("files/work")


def test_demo_fresh_sets_a_played_demo_aside_and_never_a_real_home(home, tmp_path, capsys, monkeypatch):
    from engine import open_home
    from engine.demo import seed_demo_home
    from workbench.cli.tui_cmds import set_aside

    demo = open_home(tmp_path / "demo")
    seed_demo_home(demo)
    demo.memory.add("memory", "a note made while exploring the demo")
    set_aside(demo)
    previous = tmp_path / "demo.previous"
    assert not (tmp_path / "demo").exists()
    assert "a note made while exploring the demo" in (previous / "memories" / "MEMORY.md").read_text()
    capsys.readouterr()
    for n in (2, 3):  # set aside again: the one before is kept, never deleted (it was once)
        seed_demo_home(again := open_home(tmp_path / "demo"))
        set_aside(again)
        older = tmp_path / f"demo.previous-{n}"
        assert f"kept as {older}" in capsys.readouterr().err
    assert (
        "a note made while exploring the demo"
        in (older.parent / "demo.previous-2" / "memories" / "MEMORY.md").read_text()
    )
    assert (tmp_path / "demo.previous" / "memories" / "MEMORY.md").exists() and not (tmp_path / "demo").exists()

    home.memory.add("memory", "My real note")
    before = (home.memories_dir / "MEMORY.md").read_bytes()
    monkeypatch.setattr(tui_cmds, "has_terminal", lambda: True)
    assert main(["demo", "--fresh", "--home", str(home.root), "--json"]) == 1
    assert "not a demo home" in capsys.readouterr().out
    assert (home.memories_dir / "MEMORY.md").read_bytes() == before


def test_watcher_follows_a_linked_memory_file_to_its_target(home, tmp_path):
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "MEMORY.md").write_text("Seeded")
    home.memory.path("memory").symlink_to(dotfiles / "MEMORY.md")
    seen: list[set[str]] = []
    watcher = HomeWatcher(home, seen.append)
    assert dotfiles in watcher.watched_paths()
    thread = threading.Thread(target=watcher.run)
    thread.start()
    try:
        time.sleep(0.3)  # let the watch start
        seen.clear()
        assert home.memory.add("memory", "Written through the link", ToolContext(actor="user"))["success"]
        deadline = time.monotonic() + 5
        while "memory" not in set().union(*seen) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        watcher.stop()
        thread.join(timeout=5)
    assert "memory" in set().union(*seen), "a write at the link's target reaches the live view"


def test_config_yaml_is_reported_only_once_it_stops_changing(tmp_path):
    """An editor that truncates, then writes: the empty file in between is never reported (it would be
    taken as "every setting at its default", turning the approval gate off)."""
    from workbench.watch import _FileStamps

    config = tmp_path / "config.yaml"
    config.write_text("memory:\n  write_approval: true\n", encoding="utf-8")
    stamps = _FileStamps([config], settled=True)
    config.write_text("", encoding="utf-8")  # caught part way
    assert stamps.changed() is False
    config.write_text("memory:\n  write_approval: true\n  nudge_interval: 5\n", encoding="utf-8")
    assert stamps.changed() is False  # moved again since the last look
    assert stamps.changed() is True and stamps.changed() is False  # settled: reported once


async def test_a_failing_outside_step_is_logged_and_the_screens_still_hear(home, tmp_path, monkeypatch, caplog):
    import sqlite3

    from engine.events import SkillChanged

    def locked():
        raise sqlite3.OperationalError("database is locked")

    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        heard = []
        monkeypatch.setattr(app, "post_message", lambda message: heard.append(message) or True)
        monkeypatch.setattr(home.skills.outside, "record", locked)
        app._external_change({"skills", "skill files", "memory"})
    assert any(isinstance(m, EngineEvent) and isinstance(m.event, SkillChanged) for m in heard)
    # (SQLite's own words explained, with the app's advice: no variable only a new command reads)
    assert "could not follow the outside change to skills: home is busy: another process holds" in caplog.text
    assert "WORKBENCH_BUSY_TIMEOUT" not in caplog.text


async def test_a_home_made_by_opening_it_is_said_at_start(tmp_path, monkeypatch):
    """`workbench --home <typo>` opened a new, empty home with no word of it."""
    from engine import open_home
    from workbench import app as app_module

    opened: list[WorkbenchApp] = []
    monkeypatch.setattr(app_module.WorkbenchApp, "run", lambda self: opened.append(self))
    monkeypatch.setattr(tui_cmds, "has_terminal", lambda: True)
    typo = tmp_path / "hermse"
    assert main(["--home", str(typo)]) == 0  # the CLI opens the TUI on the home it just made
    [app] = opened
    assert app.new_home
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        [note] = [n for n in app._notifications if n.title == "New home"]
        assert f"{typo} did not exist" in note.message and "--home" in note.message
    app.home.close()
    again = open_home(typo)
    assert not again.created
    again.close()


async def test_a_warning_the_engine_logs_is_a_notification_said_once(home, tmp_path):
    """Textual captures stderr while it draws, so a logged warning was lost in the TUI; the CLI's
    stderr handler steps aside meanwhile (a logged exception is saved once, not once per handler)."""
    import logging

    from workbench.crash import OneLineLog, crash_dir, log_to_stderr_in_one_line

    log_to_stderr_in_one_line()  # as main() does before it opens the TUI
    root = logging.getLogger()
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert [h for h in root.handlers if isinstance(h, OneLineLog)] == [app._log]
        for _ in range(2):
            logging.getLogger("engine.memory.archive_writes").warning(
                "cannot read %s: %s", "state.db\x1b[2J", "damaged"
            )
        before = set(crash_dir().glob("*")) if crash_dir().exists() else set()
        try:
            raise ZeroDivisionError("in a worker")
        except ZeroDivisionError:
            logging.getLogger("engine.worker").exception("a background job failed")
        await settle(pilot)
        assert app.problems.count("cannot read state.db␛[2J: damaged") == 1, app.problems
        assert len(set(crash_dir().glob("*")) - before) == 1
    handlers = [h for h in root.handlers if isinstance(h, OneLineLog)]
    assert app._log not in handlers and len(handlers) == 1  # the CLI's is back


def test_a_second_commit_to_state_db_in_one_mtime_tick_is_still_seen(tmp_path):
    """After a checkpoint SQLite writes the WAL again from its start (its size stays), and two commits
    can fall in one mtime tick: the watcher's size-and-mtime stamp missed the second, and the Sessions
    tree stayed as the first left it (a branch Hermes unarchived never came back)."""
    import os
    import sqlite3

    from workbench.watch import SESSION_FILES, _FileStamps

    conn = sqlite3.connect(tmp_path / "state.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE t (x INTEGER)")
    for i in range(20):
        conn.execute("INSERT INTO t VALUES (?)", (i,))
    conn.execute("PRAGMA wal_checkpoint(RESTART)")  # the next commit writes the WAL from its start again
    conn.execute("INSERT INTO t VALUES (100)")
    files = [tmp_path / name for name in sorted(SESSION_FILES)]
    wal = tmp_path / "state.db-wal"
    before = os.stat(wal)
    plain, counted = _FileStamps(files), _FileStamps(files, database=tmp_path / "state.db")
    conn.execute("UPDATE t SET x = 101 WHERE x = 100")
    os.utime(wal, ns=(before.st_atime_ns, before.st_mtime_ns))  # within the same mtime tick
    assert os.stat(wal).st_size == before.st_size
    assert plain.changed() is False, "what this guards against: size and mtime alone miss it"
    assert counted.changed() is True and counted.changed() is False
    reader = sqlite3.connect(tmp_path / "state.db", isolation_level=None)
    for _ in range(3):  # readers move their marks in the -shm file: no change to report (a reload storm)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM t").fetchone()
        reader.execute("COMMIT")
    assert counted.changed() is False
    counted.close()
    reader.close()
    conn.close()


_TAKES_ALL = """
import fcntl, sys
with open(sys.argv[1], "r+b") as shm:
    try:
        fcntl.lockf(shm, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        print("held")
    else:
        print("taken")
"""


def test_the_watchers_look_at_a_locked_state_db_neither_waits_nor_reports_a_change(tmp_path):
    """A writer holding state.db (rollback journal) made the watcher's look wait SQLite's default 5 s,
    then close its connection, which read as a change and lost the count (found in review)."""
    from workbench.watch import _Commits

    path = tmp_path / "state.db"
    with contextlib.closing(sqlite3.connect(path)) as first:
        first.execute("CREATE TABLE t (v)")
        first.commit()
    commits = _Commits(path)
    before = commits.count()
    writer = sqlite3.connect(path, isolation_level=None)
    try:
        writer.execute("BEGIN EXCLUSIVE")
        writer.execute("INSERT INTO t VALUES (1)")
        assert commits.count() == before  # (at once: no wait on the writer's lock)
        writer.execute("COMMIT")
        assert commits.count() != before  # the commit, seen on the same connection
    finally:
        writer.close()
        commits.close()


def test_the_watchers_look_at_state_db_keeps_this_process_s_sqlite_locks(tmp_path):
    """The watcher read the -shm file's header with open() and close(), and closing any descriptor of a
    file drops every POSIX lock the process holds on it, SQLite's own among them. A Hermes that opened
    state.db then found the -shm unlocked, took itself for its only user and truncated it under our
    connections' map of it: the test process died of SIGBUS (a `-n 3` run of the TUI tests)."""
    import sqlite3
    import subprocess
    import sys

    from workbench.watch import SESSION_FILES, _FileStamps

    conn = sqlite3.connect(tmp_path / "state.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE t (x INTEGER)")
    shm = tmp_path / "state.db-shm"

    def another_process() -> str:
        probe = subprocess.run([sys.executable, "-c", _TAKES_ALL, str(shm)], capture_output=True, text=True, timeout=60)
        assert probe.returncode == 0, probe.stderr
        return probe.stdout.strip()

    assert another_process() == "held"  # our connection's lock: nobody else may think it is alone
    stamps = _FileStamps([tmp_path / name for name in sorted(SESSION_FILES)], database=tmp_path / "state.db")
    conn.execute("INSERT INTO t VALUES (1)")
    assert stamps.changed() is True
    stamps.close()
    assert another_process() == "held"
    assert conn.execute("SELECT x FROM t").fetchall() == [(1,)]
    conn.close()


async def test_a_screen_worker_that_fails_unexpectedly_is_said_not_swallowed(home, tmp_path, monkeypatch):
    """Textual tells only the screen when its worker fails: an error no worker caught (a disk error
    under the Timeline's read) left the screen as it was, with nothing said."""
    from engine.timeline import Timeline
    from tests.screens_seed import open_mode
    from workbench.screens.timeline import TimelineScreen

    def failing(self, **_):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(Timeline, "page", failing)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_mode(pilot, "6", TimelineScreen)
        await wait_for(
            pilot,
            lambda: any(
                n.title.startswith("Something went wrong") and "Input/output error" in n.message
                for n in app._notifications
            ),
            what="the failure said",
        )


class _FailingApp(WorkbenchApp):
    """The app with a worker of its own that fails as an engine call can."""

    @work(thread=True, exit_on_error=False, group="failing")
    def fail(self, error: Exception) -> None:
        raise error


async def test_an_app_worker_that_fails_is_said_once(home, tmp_path):
    """Textual runs the app's own worker handler and the screens' shared one both: each failure of an
    app worker was said twice (found in review)."""
    app = make_app(home, tmp_path, app_class=_FailingApp)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.fail(OSError(5, "disk gone"))
        await wait_for(pilot, lambda: any("disk gone" in n.message for n in app._notifications), what="said")
        await settle(pilot)
        assert [n.title for n in app._notifications if "disk gone" in n.message] == [f"Something went wrong{TAIL}"]


async def test_a_failure_is_said_unless_a_warning_said_it_just_before(home, tmp_path):
    """A failure whose error a warning had named was never said again, however much later it came."""
    app = make_app(home, tmp_path, app_class=_FailingApp)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        logging.getLogger("engine.upkeep").warning("upkeep stopped: %s", sqlite3.OperationalError("database is locked"))
        app.fail(sqlite3.OperationalError("database is locked"))  # the same problem, just said
        await settle(pilot)
        said = lambda: [n.title for n in app._notifications if "database is locked" in n.message]  # noqa: E731
        assert said() == [f"Warning{TAIL}"]
        app._log.causes["database is locked"] -= 61  # a minute on: the same error is news again
        app.fail(sqlite3.OperationalError("database is locked"))
        await wait_for(pilot, lambda: said() == [f"Something went wrong{TAIL}"], what="the later failure said")
        assert app.problems == ["OperationalError: database is locked", "upkeep stopped: database is locked"]


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_a_status_too_long_for_its_lines_ends_in_an_ellipsis_and_is_said_whole(home, tmp_path, size):
    """A group revert's refusals ran past the status line's four lines and were cut mid-sentence with no
    sign (user trial): the advice at the end was lost. At 60 columns the cut lines ran 32 cells, under
    the notice from the 29th on, which hid ``(whole in the notice)`` (tmux: r on a staged row)."""
    from textual.widgets import Static

    reasons = "; ".join(f"row {n}: marked stale outside the workbench, so pin it to keep it" for n in range(8))
    app = make_app(home, tmp_path)
    width = size[0]
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        app.screen.show_status(f"Nothing to revert: {reasons}. Use it or pin it.", error=True)
        await pilot.pause()
        shown = str(app.screen.query_one("#status", Static).content)
        assert len(shown.splitlines()) == 4 and shown.endswith("… (whole in the notice)")
        last = shown.splitlines()[-1].removesuffix("… (whole in the notice)")  # cut before a word, not in it
        assert f"{last} " in reasons or width < 80, (last, shown)  # (at 60 columns 4 cells: no word fits)
        # each line keeps left of the notice, which covers the right half of the bottom rows
        assert max(len(line) for line in shown.splitlines()) <= width - width // 2 - 2
        [notice] = [n for n in app._notifications if n.message.startswith("Nothing to revert")]
        assert notice.message.endswith("Use it or pin it.")
        app.screen.show_status("Saved.")
        await pilot.pause()
        assert str(app.screen.query_one("#status", Static).content) == "Saved."


@pytest.mark.parametrize("width", range(40, 90, 4))
async def test_the_status_line_never_folds_inside_a_grapheme_or_a_shown_symbol(home, tmp_path, width):
    """The status line was left to Textual's fold, by cells: an error carrying data (a name holding ﾃﾞ or a
    bidi override) could start a line with the voiced mark alone, or with ``202E>``."""
    from textual.widgets import Static

    app = make_app(home, tmp_path)
    async with app.run_test(size=(width, 24)) as pilot:
        await settle(pilot)
        app.screen.show_status(f"Not saved: {FOLDS}.", error=True)
        await pilot.pause()
        lines = drawn_in(app.screen.query_one("#status", Static))
        assert "ﾃﾞﾌﾟﾛｲ" in "".join(lines) and not parted(lines), lines  # (cut at 56 columns and less)


async def test_every_notice_shows_control_characters_as_symbols(home, tmp_path):
    """Run's notices passed session ids and state.db's error texts to notify as they were (found in
    review): a session id holding an escape sequence reached the terminal. Every notice is made safe
    in one place, whoever calls it, and is never markup."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.screen.notify("Session s-\x1b[2J\x1b]0;pwned\x07 was deleted [b]bold[/b]", title="Gone \u202e")
        await pilot.pause()
        [notice] = [n for n in app._notifications if n.title.startswith("Gone")]
        assert notice.message == "Session s-␛[2J␛]0;pwned␇ was deleted [b]bold[/b]" and not notice.markup
        assert "\x1b" not in notice.title and "\u202e" not in notice.title


def test_a_problems_line_leads_with_a_command_only_when_it_is_the_step_to_take(tmp_path):
    """A command named only in an aside (a pointer, not the step) led the line as if it were:
    ``workbench memory history: MEMORY.md changed since``."""
    pointer = "MEMORY.md changed since it was read (see `workbench memory history`). Reload it."
    step = f"{tmp_path}/state.db is damaged (SQLite's check: page 3). Run `workbench doctor`."
    assert headline(pointer, tmp_path, 200) == "MEMORY.md changed since it was read"
    assert headline(step, tmp_path, 200) == "workbench doctor: state.db is damaged"
