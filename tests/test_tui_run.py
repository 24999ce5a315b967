"""The Run screen: typed turns and scenarios stream into the transcript; other screens follow live."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from rich.cells import cell_len
from textual.app import App
from textual.widgets import Footer, Input, OptionList, Select, Static

from engine import lock_waits, open_home
from engine.events import RunnerEvent
from engine.kept import STORED_LATER, of_session
from engine.models import OfflineModel
from engine.runner import AgentSession
from engine.runner.session import live_uncompressed
from engine.scenarios import run_scenario
from engine.textsafety import visible
from tests.lock_support import holding_flock, holding_write_lock
from tests.screens_seed import GARDEN, GARDEN_2, TOKYO, open_mode, play_scenario, screen_text, seed_sessions
from tests.tui_support import LateFirstAnswer, footer_labels, make_app, settle, wait_for
from widgets.entry_list import EntryList
from widgets.header import WorkbenchHeader
from widgets.lineage_tree import LineageTree
from widgets.run_status import RunStatus
from widgets.transcript import Transcript, TranscriptItem
from workbench.screens.dialogs import ConfirmDialog
from workbench.screens.resume import ResumeDialog
from workbench.screens.run import PLACEHOLDER, TURN_FAILED_SEE_TRANSCRIPT, RunScreen, runner_item
from workbench.screens.sessions import SessionsScreen

pytestmark = pytest.mark.anyio


async def open_run(pilot) -> RunScreen:
    return await open_mode(pilot, "5", RunScreen)


async def test_a_typed_turn_writes_memory_and_the_memory_screen_shows_it(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "User prefers dark mode." not in screen_text(app)  # the Memory screen, before
        screen = await open_run(pilot)
        await send_turn(pilot, screen, "remember that I prefer dark mode")
        await settle(pilot)
        items = screen.query_one(Transcript).items
        assert [i.role for i in items][:2] == ["user", "assistant"] and items[0].content.startswith("remember")
        assert any(i.writes for i in items)  # the tool-calling message carries its write marker
        assert home.memory.read("user").entries == ["User prefers dark mode."]
        screen.query_one(Transcript).focus()  # (the message box has focus, where keys would type)
        await pilot.press("home", "w", "m")  # the marked message leads to the entry it wrote
        await wait_for(pilot, lambda: app.current_mode == "memory", what="the Memory screen")
        live = app.screen.query_one("#live-list", EntryList)
        await wait_for(
            pilot,
            lambda: live.current is not None and live.current.text == "User prefers dark mode.",
            what="the entry selected",
        )
        assert app.screen.target == "user" and "User prefers dark mode." in screen_text(app)
        app.action_goto("sessions")
        await settle(pilot)
        assert app.screen.query_one(LineageTree).node_for(screen.session_id) is not None


async def test_a_write_waiting_for_approval_is_marked_as_staged(home, tmp_path):
    home.config_path.write_text("memory:\n  write_approval: true\n", encoding="utf-8")
    home.reload_config()
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_run(pilot)
        await send_turn(pilot, screen, "remember that I prefer dark mode")
        await wait_for(pilot, lambda: any(i.writes for i in screen.query_one(Transcript).items), what="marker")
        (marked,) = [i for i in screen.query_one(Transcript).items if i.writes]
        assert marked.mark == "staged" and marked.writes[0].startswith("staged for approval")
        assert home.memory.read("user").entries == [] and app.pending_count == 1


async def test_a_scenario_streams_events_into_the_transcript(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_run(pilot)
        transcript = screen.query_one(Transcript)
        streamed: list[str] = []
        append = transcript.append

        def recording_append(item):  # each runner event adds its item as it arrives
            streamed.append(item.role)
            append(item)

        transcript.append = recording_append
        await play_scenario(pilot, screen)
        roles = [i.role for i in screen.query_one(Transcript).items]
        # grew event by event, every item of every turn, not once at the end (a turn's end reaches the
        # screen after its runner events, through the app's queue, even under load)
        assert streamed == roles, (streamed, roles)
        assert roles.count("user") == 4 and all(i.id is not None for i in screen.query_one(Transcript).items)
        assert any("headless in CI" in e for e in home.memory.read("memory").entries)
        app.action_goto("memory")  # the Memory screen shows what the scenario saved
        await settle(pilot)
        assert "The workbench runs headless in CI" in screen_text(app)


async def test_a_reload_that_answers_after_a_newer_one_is_dropped(home, tmp_path, monkeypatch):
    """Each turn's end reloads the transcript; on a busy machine the reload of an earlier turn
    can answer after the last one's. The snapshot of a finished scenario once showed only its
    first turns that way: the newer reload must win, whichever answers last."""
    from workbench.screens import run as run_module

    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_run(pilot)
        await play_scenario(pilot, screen)
        transcript = screen.query_one(Transcript)
        full = [item.id for item in transcript.items]
        late = LateFirstAnswer(monkeypatch, run_module, "session_items", stale=lambda items: items[:3])
        screen.load_session(screen.session_id)
        await wait_for(pilot, late.started.is_set, what="the first reload reading")
        screen.load_session(screen.session_id)
        await settle(pilot)
        await late.release(pilot, "run-reload")  # the earlier reload answers last
        assert [item.id for item in transcript.items] == full


async def test_an_idle_run_screen_watches_a_run_elsewhere_then_typing_starts_its_own(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_run(pilot)
        player = threading.Thread(target=run_scenario, args=(home, "smoke"), kwargs={"speed": 0})  # like the demo
        player.start()
        player.join()
        await wait_for(
            pilot,
            lambda: screen.watching and len(screen.query_one(Transcript).items) > 2,
            what="watching the other run",
        )
        await settle(pilot)
        watched = screen.session_id
        assert "watching a run elsewhere" in screen_text(app)
        await pilot.press(*"hello", "enter")
        await wait_for(
            pilot, lambda: not screen.running and screen.session_id not in (None, watched), what="own session"
        )
        assert not screen.watching and screen.query_one(Transcript).items[0].content == "hello"
        assert [m.content for m in home.archive.messages(watched)][-1] != "hello"  # never typed into the other run


async def test_cancel_stops_a_running_scenario(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_run(pilot)
        screen.speed = 0.02  # the smoke scenario's pauses become long: time to cancel
        screen.query_one("#run-scenario", Select).value = "smoke"
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: screen.running, what="scenario started")
        started = time.monotonic()
        await pilot.press("escape")
        await wait_for(pilot, lambda: not screen.running, timeout=10, what="cancelled")
        assert time.monotonic() - started < 5
        assert home.memory.read("memory").entries == []  # stopped before the first write


async def test_a_scenario_asks_before_it_changes_a_real_home(home, tmp_path):
    """ctrl+g played `smoke` on a real home and replaced "User's name is Kenji" without a word; its session
    was stored as source `cli` though played in the TUI. Now it asks first, naming what changes; `n`
    plays nothing, `y` plays it, and its session's source is `tui` as a typed session's is."""
    home.memory.add("user", "User's name is Kenji")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_run(pilot)
        screen.speed = 0
        screen.query_one("#run-scenario", Select).value = "smoke"
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
        assert "not a demo home" in app.screen.detail and "headless in CI" in app.screen.detail
        assert "replaced by 'User's name is Sam.'" in app.screen.detail  # the offline model's write, named
        await pilot.press("n")
        await settle(pilot)
        assert not screen.running and home.archive.session_count() == 0
        assert home.memory.entries("user") == ["User's name is Kenji"] and home.memory.entries("memory") == []
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question again")
        await pilot.press("y")
        await wait_for(pilot, lambda: screen.session_id is not None and not screen.running, timeout=20, what="played")
        assert home.memory.entries("user") == ["User's name is Sam."]
        (session,) = home.archive.list_sessions()
        assert session.source == "tui"


async def test_the_scenarios_question_says_an_add_the_full_store_would_refuse(home, tmp_path):
    """The question promised the smoke note on a MEMORY.md too full for it; it says the store's limit
    would refuse it, in the words the CLI's refusal uses (``consent_needed``)."""
    limit = home.memory.limit("memory")
    home.memory.add("memory", "n" * (limit - 20))
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_run(pilot)
        screen.query_one("#run-scenario", Select).value = "smoke"
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
        assert f"to MEMORY.md would be refused: MEMORY.md is {limit - 20:,}/{limit:,} chars" in app.screen.detail
        await pilot.press("n")
        await settle(pilot)
        assert home.memory.entries("memory") == ["n" * (limit - 20)] and home.archive.session_count() == 0


async def send_turn(pilot, screen: RunScreen, text: str) -> None:
    """Type ``text`` in the message box, send it, and wait for its turn to finish."""
    await pilot.press(*text, "enter")
    await wait_for(pilot, lambda: screen.session_id is not None and not screen.running, what="the turn")


async def resumed(pilot, screen: RunScreen, session_id: str) -> None:
    """ctrl+o, the session chosen, Enter: wait until its agent is open (and the session reopened)."""
    await resume_by(pilot, session_id)
    await pilot.press("enter")
    await wait_for(
        pilot,
        lambda: screen.agent is not None and screen._opening is None and screen._switch is None,
        what="the resume",
    )
    await settle(pilot)


async def resume_by(pilot, text: str) -> ResumeDialog:
    app = pilot.app
    await pilot.press("ctrl+o")
    await wait_for(pilot, lambda: isinstance(app.screen, ResumeDialog), what="resume picker")
    picker = app.screen
    await pilot.press(*text)
    await settle(pilot)
    return picker


async def test_resume_picker_filters_and_accepts_an_id_prefix_or_title(home, tmp_path):
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_run(pilot)
        picker = await resume_by(pilot, "東京")  # a title, filtered as typed
        listed = picker.query_one("#resume-list", OptionList)
        assert [listed.get_option_at_index(i).id for i in range(listed.option_count)] == [TOKYO]
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.session_id == TOKYO, what="resumed by title")
        picker = await resume_by(pilot, "no-such-session")
        await pilot.press("enter")  # nothing listed: the engine's resolver answers, in place
        await wait_for(pilot, lambda: "No session matches 'no-such-session'" in screen_text(app), what="refusal")
        assert app.screen is picker
        await pilot.press("escape")
        await settle(pilot)
        picker = await resume_by(pilot, "20261129_")  # the start of several ids: the list says which
        assert picker.query_one("#resume-list", OptionList).option_count == 4
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen and app.focused is screen.query_one("#run-input")


async def test_resume_continues_a_stored_session(home, tmp_path):
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_run(pilot)
        await resume_by(pilot, GARDEN_2[:-2])  # a unique prefix
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is screen and screen.query_one(Transcript).items, what="resumed")
        assert screen.session_id == GARDEN_2
        assert screen.query_one(Transcript).items[0].content == "What should I plant next to tomatoes?"
        screen.query_one("#run-input").focus()
        await pilot.press(*"thanks", "enter")
        await wait_for(
            pilot,
            lambda: not screen.running and len(screen.query_one(Transcript).items) > 2,
            what="turn in the resumed session",
        )
        assert screen.session_id == GARDEN_2
        assert [m.content for m in home.archive.messages(GARDEN_2)][:2] == [
            "What should I plant next to tomatoes?",
            "thanks",
        ]


async def test_r_on_sessions_resumes_the_session_picked_there_on_run(home, tmp_path):
    """A session found on the Sessions screen (a Hermes one, say) could only be talked in by going to Run,
    pressing ctrl+o and typing its id or title again. R there resumes it on Run, as ctrl+o would."""
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        sessions = await open_mode(pilot, "2", SessionsScreen)
        tree = sessions.query_one(LineageTree)
        tree.focus()
        tree.move_cursor(tree.node_for(TOKYO))
        await wait_for(pilot, lambda: sessions.shown_session == TOKYO, what="the Tokyo transcript")
        await pilot.press("R")
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen), what="the Run screen")
        screen = app.screen
        await wait_for(pilot, lambda: screen.agent is not None and screen._opening is None, what="the resume")
        assert screen.session_id == TOKYO and app.focused is screen.query_one("#run-input")

        def thanked() -> bool:
            return [m.content for m in home.archive.messages(TOKYO) if m.role == "user"][-1:] == ["thanks"]

        await pilot.press(*"thanks", "enter")
        await wait_for(pilot, lambda: thanked() and not screen.running, what="the turn, in that session")


async def test_esc_asked_of_a_run_screen_not_composed_yet_is_taken_quietly(home, tmp_path):
    """R on Sessions opens the Run screen; an esc still queued in a box of the screen left asked the new
    one, before it was composed, whether esc leaves its message box: it looked the box up and stopped
    the app (NoMatches, in a random-keys run). Unanswerable yet, it is no."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)):
        fresh = RunScreen()
        assert fresh.check_action("leave_input", ()) is False


async def test_the_header_names_a_resumed_session_at_once(home, tmp_path):
    """After a resume the status line named the session while the header read `session none`
    until its first turn."""
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_run(pilot)
        header = screen.query_one(WorkbenchHeader)
        await resume_by(pilot, GARDEN_2)
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.session_id == GARDEN_2, what="resumed")
        assert app.running_session == header.session == GARDEN_2  # (set with the screen's own, not later)
        await pilot.pause()
        assert GARDEN_2 in header.render().plain and GARDEN_2 in screen_text(app).splitlines()[0]
        await pilot.press("ctrl+l")  # a new session: the header stops naming it
        await wait_for(pilot, lambda: header.session is None, what="the header cleared")


async def send_with_openai(pilot, text: str):
    """Type ``text`` on the Run screen with the openai model chosen; returns once its turn ended."""
    screen = await open_run(pilot)
    screen.query_one("#run-model", Select).value = "openai"
    screen.query_one("#run-input").focus()
    await pilot.press(*text, "enter")
    await wait_for(pilot, lambda: not screen.running, timeout=15, what="turn ended")
    await settle(pilot)
    return screen


async def test_a_failing_model_is_reported_not_fatal(home, tmp_path):
    home.config_path.write_text(
        "model:\n  base_url: http://127.0.0.1:9/v1\n  name: none\n  max_retries: 0\n  timeout: 1\n", encoding="utf-8"
    )
    home.reload_config()
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await send_with_openai(pilot, "hello")
        assert screen.session_id is not None
        assert "failed" in screen_text(app)  # said in place; the app is still running
        assert screen.query_one(Transcript).items[0].content == "hello"  # the user's words were kept
        assert screen.query_one("#run-input", Input).value == ""  # stored: not offered twice


class HalfwayStream:
    """A chat-completions endpoint that streams the first piece of its answer, then waits for the test."""

    def __init__(self):
        self.rest = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for piece in ("Hel", "lo there."):
                    chunk = {"choices": [{"index": 0, "delta": {"content": piece}}]}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                    outer.rest.wait(10)
                self.wfile.write(b"data: [DONE]\n\n")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.rest.set()
        self.server.shutdown()
        self.server.server_close()

    @classmethod
    def serving(cls, home) -> HalfwayStream:
        """An endpoint that home's config.yaml names, streaming (model.stream: true)."""
        endpoint = cls()
        home.config_path.write_text(
            f"model:\n  base_url: {endpoint.base_url}\n  name: m\n  api_key_env: ''\n  stream: true\n", encoding="utf-8"
        )
        home.reload_config()
        return endpoint


async def half_answered(pilot):
    """On Run with the openai model, "hi" sent and the first piece of its streamed answer shown: the
    screen, and a reader of the transcript's (role, content) rows."""
    screen = await open_run(pilot)
    screen.query_one("#run-model", Select).value = "openai"
    screen.query_one("#run-input").focus()
    await pilot.press("h", "i", "enter")
    transcript = screen.query_one(Transcript)
    shown = lambda: [(i.role, i.content) for i in transcript.items]  # noqa: E731
    await wait_for(pilot, lambda: shown() == [("user", "hi"), ("assistant", "Hel")], what="the first piece")
    return screen, shown


async def test_a_streamed_answer_shows_as_it_is_written(home, tmp_path):
    """A trial: with model.stream on, Run showed nothing of the answer until all of it had come."""
    endpoint = HalfwayStream.serving(home)
    app = make_app(home, tmp_path)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            screen, shown = await half_answered(pilot)
            endpoint.rest.set()  # the rest of the answer: the same row grows, and becomes the stored answer
            await wait_for(pilot, lambda: not screen.running, timeout=15, what="turn ended")
            await settle(pilot)
            assert shown() == [("user", "hi"), ("assistant", "Hello there.")]
    finally:
        endpoint.close()


async def test_a_burst_of_streamed_pieces_is_shown_together(home, tmp_path):
    """Each streamed piece re-measured and redrew the whole answer so far: pieces come faster than frames,
    and a long answer left the screen further behind with each one. A burst now shows once, whole."""
    from engine.events import RunnerEvent

    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_run(pilot)
        transcript = screen.query_one(Transcript)
        showings = []
        for name in ("replace", "append"):
            shown = getattr(transcript, name)
            setattr(transcript, name, lambda *args, shown=shown: (showings.append(args), shown(*args)))
        for _ in range(200):  # (no session yet: the screen shows what streams in)
            screen.engine_event(RunnerEvent(kind="assistant_delta", data={"text": "word "}))
        await wait_for(pilot, lambda: showings, what="the streamed answer")
        assert [(i.role, i.content) for i in transcript.items] == [("assistant", "word " * 200)]
        assert len(showings) == 1


async def test_esc_on_a_streamed_answer_leaves_a_line_saying_the_turn_was_stopped(home, tmp_path):
    """After esc the partial answer went at the reread (it is not stored, rightly) and no line said the
    turn was cut: only the bar said "stopped (esc)". A reread keeps the line, as a failed turn's."""
    endpoint = HalfwayStream.serving(home)
    app = make_app(home, tmp_path)
    stopped = ("system", "turn stopped (esc): its partial answer was not kept")
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            screen, shown = await half_answered(pilot)
            await pilot.press("escape")
            await wait_for(pilot, lambda: not screen.running, timeout=15, what="turn stopped")
            # the reread from state.db (the partial answer gone) keeps the line as the turn's last
            await wait_for(pilot, lambda: shown() == [("user", "hi"), stopped], what="the reread")
            assert [(m.role, m.content) for m in home.archive.messages(screen.session_id)] == [("user", "hi")]
            assert "turn stopped (esc): its partial answer was not kept" in screen_text(app)
    finally:
        endpoint.close()


async def test_the_model_menu_starts_at_the_model_config_names(home, tmp_path):
    """`workbench run` used config.yaml's model.backend, the Run screen's menu began at offline whatever
    it said: a home set up for an OpenAI-compatible endpoint ran the offline model in the TUI."""
    home.config_path.write_text(
        "model:\n  backend: OpenAI\n  base_url: http://127.0.0.1:9/v1\n  name: none\n  max_retries: 0\n  timeout: 1\n",
        encoding="utf-8",
    )
    home.reload_config()
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_run(pilot)
        assert screen.model_name == "openai"
        await send_turn(pilot, screen, "hello")
        await wait_for(
            pilot,
            lambda: any(
                i.content.startswith("turn error: Cannot connect to the model")
                for i in screen.query_one(Transcript).items
            ),
            what="the configured endpoint's failure",
        )


async def test_a_configured_model_that_is_none_starts_the_menu_at_offline_and_says_so(home, tmp_path):
    home.config_path.write_text('model:\n  backend: "gpt\\u202e"\n', encoding="utf-8")  # (a real U+202E)
    home.reload_config()
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_run(pilot)
        assert screen.model_name == "offline"
        said = [n.message for n in app._notifications]
        assert any("model.backend in config.yaml is 'gpt<U+202E>', not one of offline" in m for m in said), said
        assert not any("\u202e" in m for m in said)  # (shown as a symbol, never as the override itself)


async def test_a_failed_turn_whose_reason_is_in_the_transcript_gets_a_one_line_notice(home, tmp_path):
    """At 80x24 the whole reason, said again in a 30 s notice, covered half the transcript whose last
    line already gave it; and the reread of the session as the turn ended took that line away."""
    home.config_path.write_text(
        "model:\n  base_url: http://127.0.0.1:9/v1\n  name: none\n  max_retries: 0\n  timeout: 1\n", encoding="utf-8"
    )
    home.reload_config()
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await send_with_openai(pilot, "hello")
        await wait_for(pilot, lambda: screen._shown_look is not None, what="the session reread")
        await settle(pilot)
        items = screen.query_one(Transcript).items
        assert [i.content for i in items[:1]] == ["hello"]
        assert items[-1].role == "system" and items[-1].content.startswith("turn error: Cannot connect to the model")
        said = [(n.title, n.message) for n in app._notifications]
        assert ("", TURN_FAILED_SEE_TRANSCRIPT) in said
        assert not any("Cannot connect" in message for _, message in said)  # (said once, in the transcript)
        await pilot.press("h", "i", "enter")  # the next turn: the old failure's line goes, its own comes
        await wait_for(pilot, lambda: not screen.running, timeout=15, what="turn ended")
        await settle(pilot)
        items = screen.query_one(Transcript).items
        assert [i.content[:11] for i in items] == ["hello", "hi", "turn error:"]


async def test_a_long_failure_fits_the_bar_cut_and_the_transcript_says_it_whole(home, tmp_path):
    """No endpoint, at 60x20: the reason wrapped a word a line in the bar's 8 cells ("failed:", "No",
    "endpoint"), the session line pushed out, and said whole only in a notice gone after 30 s (no session,
    so no transcript line). The bar's selects yield below 80 columns, the state is cut with … above the
    session line, and the transcript's line says the reason whole, whichever the width."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(60, 20)) as pilot:
        screen = await send_with_openai(pilot, "hello openai")
        status = screen.query_one("#run-status")
        for size in ((60, 20), (80, 24)):
            await pilot.resize_terminal(*size)
            await settle(pilot)
            rows = screen_text(app).splitlines()[status.region.y : status.region.bottom]
            drawn = [row[status.region.x : status.region.right].strip() for row in rows]
            assert drawn[0].startswith("failed: No endpoint") and drawn[1].endswith("…"), drawn
            assert drawn[2].startswith("new session"), drawn
        [line] = screen.query_one(Transcript).items
        assert line.content.startswith("turn error: No endpoint configured for the openai model.")
        assert line.content.endswith("`workbench run` also takes --base-url.")
        said = [(n.title, n.message) for n in app._notifications]
        assert ("", TURN_FAILED_SEE_TRANSCRIPT) in said  # (a notice with it whole covered the transcript)
        assert not any("No endpoint" in message for _, message in said)


async def test_the_message_box_hint_reads_whole_at_60_and_80_columns(home, tmp_path):
    """The hint ran on past the box: at 80 columns it ended "then 1-6 switch", at 60 "esc leaves the box,"
    (tmux, the Hermes home). It is short enough for 60 columns now; the footer's esc says the rest."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(60, 20)) as pilot:
        screen = await open_run(pilot)
        box = screen.query_one("#run-input", Input)
        for size in ((60, 20), (80, 24)):
            await pilot.resize_terminal(*size)
            await settle(pilot)
            assert PLACEHOLDER in screen_text(app).splitlines()[box.region.y + 1], size


class StatusApp(App):
    CSS = "RunStatus { width: 21; padding: 0 1; }"  # the Run bar's status at 60 columns

    def compose(self):
        yield RunStatus()


async def test_an_id_in_the_run_status_state_shows_its_tail_never_pieces():
    """While a switch ends the session left, the state named it whole: at 60 columns its id wrapped
    into pieces ("20261207" / "_011218_"), pushing the session line out of the bar (19 cells there
    now, the selects yielding)."""
    app = StatusApp()
    async with app.run_test(size=(60, 20)) as pilot:
        status = app.query_one(RunStatus)
        status.show("ending session 20261207_011218_c0ccf5…", "", "20261207_011300_9a1b2c")
        await pilot.pause()
        drawn = [line.strip() for line in screen_text(app).splitlines() if line.strip()]
        assert drawn == ["ending session", "…207_011218_c0ccf5…", "…1207_011300_9a1b2c"]


@pytest.mark.parametrize("bar", [21, 30])  # the status's width at 60 and 80 columns
async def test_a_failure_holding_controls_and_cjk_keeps_to_the_bars_lines(bar):
    """The state's long word was measured in characters before it was shown: an escape's symbols and
    CJK's two cells made it wider than the bar, so it wrapped mid-word and pushed the session line out."""
    reason = "x" * 30 + "\x1b[31m" + "数据库迁移" * 20
    app = StatusApp()
    async with app.run_test(size=(60, 20)) as pilot:
        status = app.query_one(RunStatus)
        status.styles.width = bar
        status.show("failed: " + reason, "", "20261207_011300_9a1b2c")
        await pilot.pause()
        drawn = [line.rstrip() for line in screen_text(app).splitlines()[:3]]
        assert drawn[0].strip() == "failed:" and drawn[2].strip().endswith("_011300_9a1b2c"), drawn
        assert drawn[1].strip().startswith("…") and drawn[1].strip().endswith("迁移"), drawn
        assert all(cell_len(line) <= bar - 1 for line in drawn), drawn  # (a padding cell each side)


class TranscriptApp(App):
    def compose(self):
        yield Transcript()
        yield Footer()


async def test_streaming_keeps_the_readers_place_and_counts_unseen_messages():
    """(The footer's f read Follow while following, where it stops following: now Unfollow.)"""
    app = TranscriptApp()
    async with app.run_test(size=(40, 12)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.set_items([TranscriptItem("user", f"message {n}", id=n) for n in range(20)])
        await pilot.pause()
        assert transcript.is_vertical_scroll_end  # following: the newest message is in view
        transcript.append(TranscriptItem("assistant", "streamed while following"))
        await pilot.pause()
        assert transcript.is_vertical_scroll_end and transcript.unseen == 0
        transcript.focus()
        await pilot.press("home")  # the reader scrolls back to read
        await pilot.pause()
        transcript.append(TranscriptItem("assistant", "arrives while reading"))
        transcript.append(TranscriptItem("assistant", "and another"))
        await pilot.pause()
        assert transcript.scroll_y == 0 and transcript.cursor == 0 and transcript.unseen == 2
        assert "↓ 2 new" in str(transcript.border_subtitle)
        assert await footer_labels(pilot, "f") == {"f": "Unfollow"}
        await pilot.press("f")  # follow off
        assert not transcript.follow and await footer_labels(pilot, "f") == {"f": "Follow"}
        await pilot.press("f")  # then on again: jumps to the newest, count cleared
        await pilot.pause()
        assert transcript.follow and transcript.is_vertical_scroll_end and transcript.unseen == 0
        assert await footer_labels(pilot, "f") == {"f": "Unfollow"}


async def test_a_compression_moves_the_run_to_the_child_session(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_run(pilot)
        screen.running, screen.session_id = True, "20261130_120000_00000a"
        screen.engine_event(RunnerEvent(kind="turn_started", session_id="20261130_120000_00000a", data={"user": "hi"}))
        screen.engine_event(
            RunnerEvent(
                kind="session_rotated",
                session_id="20261130_120000_00000b",
                data={"old_session_id": "20261130_120000_00000a", "new_session_id": "20261130_120000_00000b"},
            )
        )
        screen.engine_event(
            RunnerEvent(
                kind="assistant_message", session_id="20261130_120000_00000b", data={"content": "[b]still here[/]"}
            )
        )
        await pilot.pause()
        assert screen.session_id == "20261130_120000_00000b"
        assert [i.content for i in screen.query_one(Transcript).items] == ["hi", "[b]still here[/]"]
        assert "continues 20261130_120000_00000a" in screen_text(app)
        screen.running = False


async def test_a_long_transcript_renders_only_what_is_in_view_and_lands_on_jumps():
    words = "wrapping words of uneven length " * 9
    items = [
        TranscriptItem(
            "tool" if n % 4 == 3 else "user",
            f'{{"output": "{words}"}}' if n % 4 == 3 else f"message {n}: {words[: n % 200]}",
            id=n,
        )
        for n in range(1500)
    ]
    app = TranscriptApp()
    async with app.run_test(size=(60, 16)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.set_items(items)
        await pilot.pause()
        rendered = sum(strips is not None for strips in transcript._rendered)
        assert rendered < 20  # the newest few, not 1,500
        assert "message 1498" in screen_text(app) or "#1499" in screen_text(app)
        assert transcript.select_message(700)
        await pilot.pause()
        await pilot.pause()
        assert "message 700:" in screen_text(app)  # estimates corrected on the way, the target still in view
        await pilot.press("end")
        await pilot.pause()
        assert transcript.is_vertical_scroll_end and transcript.cursor == 1499


def test_runner_events_become_literal_transcript_rows():
    row = runner_item(RunnerEvent(kind="tool_called", data={"name": "memory", "arguments": {"content": "[b]x[/]"}}))
    assert row.role == "assistant" and row.tool_calls[0]["arguments"] == {"content": "[b]x[/]"}
    assert runner_item(RunnerEvent(kind="turn_started", data={"user": "hi"})).content == "hi"
    assert runner_item(RunnerEvent(kind="message_stored", data={})) is None


async def test_quitting_ends_the_typed_session_as_the_cli_does(home, tmp_path):
    app = make_app(home, tmp_path)
    async with app.run_test() as pilot:
        await settle(pilot)
        screen = await open_run(pilot)
        await send_turn(pilot, screen, "remember that I prefer dark mode")
        session_id = screen.session_id
        assert home.archive.get_session(session_id).ended_at is None  # open while the app runs
    ended = home.archive.get_session(session_id)
    assert ended.ended_at is not None and ended.end_reason == "cli_close"


async def test_closing_help_leaves_the_focus_where_it_was(home, tmp_path):
    """esc leaves the message box, ? and esc show and close help: a number then switches screens."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_run(pilot)
        box = screen.query_one("#run-input")
        assert screen.focused is box
        await pilot.press("escape")
        await settle(pilot)
        left_to = screen.focused
        assert left_to is not box
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: app.screen is not screen, what="help")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, what="help closed")
        await settle(pilot)
        assert screen.focused is left_to
        await pilot.press("6")
        await wait_for(pilot, lambda: app.current_mode == "timeline", what="the Timeline")
        assert box.value == ""
        await pilot.press("5")
        await wait_for(pilot, lambda: app.current_mode == "run", what="back on Run")
        await settle(pilot)
        assert screen.focused is box  # back from another mode: typing goes to the box again


async def test_the_bar_keeps_the_session_id_on_one_line_its_tail_where_narrow(home, tmp_path):
    """At 60x20 the id wrapped into cut pieces ("20261207" / "_004856_") and its tail was hidden."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(60, 20)) as pilot:
        screen = await open_run(pilot)
        await send_turn(pilot, screen, "hello")
        status = screen.query_one("#run-status")
        for size in ((60, 20), (80, 24), (120, 40)):
            await pilot.resize_terminal(*size)
            await settle(pilot)
            top = status.region.y
            rows = [line.rstrip() for line in screen_text(app).splitlines()[top : top + status.region.height]]
            drawn = [row[status.region.x :].strip() for row in rows]
            assert drawn[0] == "idle"
            shown = drawn[1]
            assert shown.lstrip("…") and screen.session_id.endswith(shown.lstrip("…")), drawn
            assert len(shown) >= 8 and not any(drawn[2:]), drawn  # its distinct tail, never wrapped on
            if size != (60, 20):
                assert shown == screen.session_id  # shown whole where it fits


async def test_a_model_with_no_endpoint_says_why_in_the_bar_and_keeps_the_message(home, tmp_path):
    """At 80x24 the bar cut the reason after "Set model.base_url in", and the typed message was gone."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await send_with_openai(pilot, "hello openai")
        status = str(screen.query_one("#run-status", Static).render())
        assert "failed: No endpoint configured for the openai…" in " ".join(status.split())  # (whole below)
        assert screen.query_one("#run-input", Input).value == "hello openai"  # never stored: not lost
        assert screen.query_one(Transcript).items[-1].content.endswith("`workbench run` also takes --base-url.")


async def test_deleting_the_session_run_talks_in_says_so_and_the_next_message_starts_a_new_one(home, tmp_path):
    """Run stayed on the deleted session: every message failed ("No session with id"), ctrl+l too."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        screen = await open_run(pilot)
        await send_turn(pilot, screen, "remember that I prefer dark mode")
        deleted = screen.session_id
        await pilot.press("escape")  # (out of the message box, where a digit types)
        sessions = await open_mode(pilot, "2", SessionsScreen)
        tree = sessions.query_one(LineageTree)
        await wait_for(pilot, lambda: tree.node_for(deleted) is not None, what="its row")
        tree.focus()
        tree.move_cursor(tree.node_for(deleted))
        await wait_for(pilot, lambda: sessions.shown_session == deleted, what="its transcript")
        await pilot.press("D")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
        assert "It is the session Run talks in: your next message there starts a new session." in app.screen.detail
        await pilot.press("y")
        await wait_for(pilot, lambda: home.archive.get_session(deleted) is None, what="the delete")
        await open_run(pilot)
        await pilot.press(*"what do I prefer", "enter")
        await wait_for(pilot, lambda: not screen.running and screen.session_id != deleted, what="a new session")
        said = f"Session {deleted} was deleted; this message starts a new session."
        assert any(n.message == said for n in app._notifications)
        assert home.archive.messages(screen.session_id)[0].content == "what do I prefer"
        assert app.running_session == screen.session_id  # the header names the new one


async def test_a_burst_typed_from_the_transcript_all_goes_into_the_message_box(home, tmp_path):
    """The first unbound key moves the focus to the box, but the focus moves only after the keys already
    queued: typing "fix my wifi now" fast there made f, m and w act on the transcript ("ix y ii no")."""
    from textual import events

    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = await open_run(pilot)
        await pilot.press("escape")  # out of the box: the transcript has the focus
        await settle(pilot)
        assert app.focused is screen.query_one(Transcript)
        for ch in "i am fine with wifi":  # one burst, as a terminal delivers fast typing
            app.post_message(events.Key(ch if ch != " " else "space", ch))
        await settle(pilot)
        assert screen.query_one("#run-input", Input).value == "i am fine with wifi"


async def test_a_turn_state_db_did_not_take_stays_on_screen_and_quitting_asks_first(home, tmp_path, monkeypatch, clock):
    """With state.db's write lock held by another process as a turn ended, the transcript was
    replaced by its empty stored copy with no word said; quitting then hung and the turn was lost.
    Now it stays, a warning says so, ctrl+q tries again and asks, and once the lock is gone the
    turn is stored at the time it was said."""
    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "0.3")
    home.archive.list_sessions()  # state.db exists, so the other process locks it rather than makes it
    said_at = clock.now()
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_run(pilot)
        holder = holding_write_lock(home.state_db_path)
        try:
            await send_turn(pilot, screen, "hello while locked")
            await wait_for(
                pilot,
                lambda: any("not saved yet" in (n.title or "") for n in app._notifications),
                what="the warning",
            )
            await settle(pilot)
            items = screen.query_one(Transcript).items
            assert [i.content for i in items[:1]] == ["hello while locked"], "the transcript stays"
            assert home.archive.get_session(screen.session_id) is None
            clock.advance(600)
            await pilot.press("ctrl+q", "ctrl+q")  # the second is the same quit: one store, one question
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
            await settle(pilot)
            assert app.screen.question == (
                "2 messages are not in state.db yet (busy). Quit and keep them in workbench.db to store later?"
            )
            assert STORED_LATER in app.screen.detail  # (doctor's and the CLI's words: engine.kept.when_stored)
            assert sum(isinstance(s, ConfirmDialog) for s in app.screen_stack) == 1
            await pilot.press("n")
            await settle(pilot)
        finally:
            holder.kill()
            holder.wait()
        await pilot.press("ctrl+q")  # the lock is gone: stored, then quits
        await wait_for(pilot, lambda: not app.is_running, what="the quit")
    stored = home.archive.messages(screen.session_id)
    assert [(m.role, m.content) for m in stored][:1] == [("user", "hello while locked")] and len(stored) == 2
    assert {m.timestamp for m in stored} == {said_at}, "stored at the time it was said"


async def test_quitting_keeps_what_state_db_did_not_take_without_waiting_for_it_again(
    home, tmp_path, monkeypatch, clock
):
    """y to "Quit without saving …?" dropped the turn for good (and once waited out the busy state.db
    again). Now y keeps it in workbench.db at once, and the next open stores it as it was said."""
    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "0.3")
    home.archive.list_sessions()
    said_at = clock.now()
    app = make_app(home, tmp_path)
    holder = holding_write_lock(home.state_db_path)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            screen = await open_run(pilot)
            await send_turn(pilot, screen, "hello while locked")
            await pilot.press("ctrl+q")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
            assert "keep them in workbench.db" in app.screen.question
            session = screen.agent.agent
            tries = []
            monkeypatch.setattr(session, "flush", lambda: tries.append(1))
            await pilot.press("y")
            await wait_for(pilot, lambda: not app.is_running, what="the quit")
        assert tries == [], "no second try at storing once the user chose to keep them"
    finally:
        holder.kill()
        holder.wait()
    assert home.archive.get_session(screen.session_id) is None
    clock.advance(600)
    open_home(home.root, clock=clock).close()  # the next start stores them
    stored = home.archive.messages(screen.session_id)
    assert [(m.role, m.content, m.timestamp) for m in stored][:1] == [("user", "hello while locked", said_at)]
    assert len(stored) == 2 and {m.timestamp for m in stored} == {said_at}
    assert home.archive.get_session(screen.session_id).end_reason == "cli_close"


def _folder_for_workbench_db(home) -> None:
    """workbench.db gone, a folder in its place. The app's workers open their own connections: one opened
    between the close and the unlink held the unlinked file and kept the messages there (a CI run), and
    one opened between the unlink and the mkdir made a new file; so until the folder stands, again, and
    every connection held meanwhile is closed after it."""
    for _ in range(100):
        home.journal.close()
        for name in ("workbench.db", "workbench.db-wal", "workbench.db-shm"):
            (home.root / name).unlink(missing_ok=True)
        try:
            (home.root / "workbench.db").mkdir()
            break
        except FileExistsError:
            continue
    home.journal.close()


async def test_quitting_when_workbench_db_cannot_keep_them_either_asks_to_drop_them(home, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "0.3")
    home.archive.list_sessions()
    app = make_app(home, tmp_path)
    holder = holding_write_lock(home.state_db_path)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            screen = await open_run(pilot)
            await send_turn(pilot, screen, "hello while locked")
            _folder_for_workbench_db(home)
            await pilot.press("ctrl+q")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
            assert app.screen.question == "Quit without saving 2 messages?"
            assert "Nor can workbench.db keep them" in app.screen.detail
            await pilot.press("y")
            await wait_for(pilot, lambda: not app.is_running, what="the quit")
    finally:
        holder.kill()
        holder.wait()
    assert home.archive.get_session(screen.session_id) is None


async def test_a_session_left_while_state_db_refuses_it_is_kept_and_said_so(home, tmp_path, monkeypatch, clock):
    """ctrl+l after a turn state.db did not take: the switch at the next message failed on the busy
    store, so that message failed too and the first turn stayed unstored."""
    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "0.3")
    home.archive.list_sessions()
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_run(pilot)
        holder = holding_write_lock(home.state_db_path)
        try:
            await send_turn(pilot, screen, "hello while locked")
            left = screen.session_id
            await pilot.press("ctrl+l", *"and a new one", "enter")
            await wait_for(
                pilot, lambda: any(n.title == "Kept for later" for n in app._notifications), what="the notice"
            )
            await wait_for(pilot, lambda: not screen.running, what="the second turn")
            (notice,) = [n for n in app._notifications if n.title == "Kept for later"]
            assert f"2 messages of session {left}" in notice.message and screen.session_id != left
        finally:
            holder.kill()
            holder.wait()
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: not app.is_running, what="the quit")
    open_home(home.root, clock=clock).close()
    assert [m.content for m in home.archive.messages(left)][:1] == ["hello while locked"]
    assert [m.content for m in home.archive.messages(screen.session_id)][:1] == ["and a new one"]


async def test_the_resume_picker_shows_an_untitled_session_by_its_first_message(home, tmp_path):
    """Every untitled session (most of Hermes's) read "(untitled)" in the picker; the Sessions screen
    shows the start of its first user message."""
    home.archive.create_session("untitled-1", source="cli")
    home.archive.append_messages(
        "untitled-1",
        [{"role": "user", "content": "How do I repot a fig?"}, {"role": "assistant", "content": "Gently."}],
    )
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_run(pilot)
        picker = await resume_by(pilot, "repot")  # what it shows is what the filter reads
        listed = picker.query_one("#resume-list", OptionList)
        assert [listed.get_option_at_index(i).id for i in range(listed.option_count)] == ["untitled-1"]
        assert "“How do I repot a fig?”" in str(listed.get_option_at_index(0).prompt)
        assert "(untitled)" not in screen_text(app)


async def test_a_message_sent_as_the_session_switches_keeps_the_time_it_was_typed(home, tmp_path, monkeypatch, clock):
    """A message sent while ctrl+l's switch still stores the old session (5 s on a busy state.db) waits
    for it, and was stamped when that wait ended, not when it was typed."""
    from engine.conversation import Conversation

    switch, typed = Conversation.switch_session, threading.Event()

    def slow_switch(self, *args, **kwargs):
        typed.wait(10)
        clock.advance(5)  # the wait on a busy state.db, as the switch stores what is left
        return switch(self, *args, **kwargs)

    monkeypatch.setattr(Conversation, "switch_session", slow_switch)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_run(pilot)
        await send_turn(pilot, screen, "first")
        first = screen.session_id
        await pilot.press("ctrl+l")
        typed_at = clock.now()
        await pilot.press(*"second", "enter")
        typed.set()
        await wait_for(pilot, lambda: screen.session_id not in (None, first) and not screen.running, what="second")
        [said] = [m for m in home.archive.messages(screen.session_id) if m.role == "user"]
    assert said.content == "second" and said.timestamp == typed_at
    assert home.archive.get_session(first).end_reason == "new_session"


async def test_resuming_a_session_whose_last_turn_still_waits_says_so(home, tmp_path, monkeypatch):
    """Resumed while its last turn was kept in workbench.db (state.db still busy), the transcript and
    the agent went on without that turn, and nothing said so."""
    import json
    import subprocess
    import sys

    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "0.3")
    home.close()
    cli = [sys.executable, "-m", "workbench", "--home", str(home.root), "--json", "run"]
    first = subprocess.run([*cli, "--message", "hello there"], capture_output=True, text=True, timeout=120)
    sid = json.loads(first.stdout)["session_id"]
    holder = holding_write_lock(home.state_db_path)
    try:
        kept = subprocess.run([*cli, "--session", sid, "--message", "a later turn"], capture_output=True, text=True)
        assert json.loads(kept.stdout)["kept_messages"] == 2
        app = make_app(home, tmp_path)
        async with app.run_test(size=(100, 30)) as pilot:
            await open_run(pilot)
            await resume_by(pilot, sid)
            await pilot.press("enter")
            await wait_for(
                pilot, lambda: any(n.title == "Not shown yet" for n in app._notifications), what="the notice"
            )
            (notice,) = [n for n in app._notifications if n.title == "Not shown yet"]
            assert notice.message.startswith("2 messages of this session are kept in workbench.db")
            assert notice.message.endswith(STORED_LATER)
    finally:
        holder.kill()
        holder.wait()


async def test_resuming_a_compressed_segment_shows_its_newest_one_and_a_deletion_is_said_at_once(home, tmp_path):
    """ctrl+o on a segment compression ended showed that segment, and the first message went to its
    newest one; and a session deleted on Sessions stayed shown on Run and named in the header."""
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_run(pilot)
        header = screen.query_one(WorkbenchHeader)
        await resume_by(pilot, GARDEN)
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.session_id == GARDEN_2, what="its newest segment")
        assert header.session == GARDEN_2
        await pilot.pause()
        assert GARDEN_2 in str(screen.query_one("#run-status").render())  # the status line names it too
        assert any(f"Session {GARDEN} was continued after compression" in str(n.message) for n in app._notifications)
        await wait_for(pilot, lambda: screen.query_one(Transcript).items, what="its transcript")
        assert screen.query_one(Transcript).items[0].content == "What should I plant next to tomatoes?"
        assert home.archive.delete_session(GARDEN_2, live=True)  # as the Sessions screen's D does
        await wait_for(pilot, lambda: header.session is None, what="the header cleared")
        assert f"Session {GARDEN_2} (deleted: your next message starts a new session)" in screen_text(app)
        await send_turn(pilot, screen, "hello after the deletion")  # as it says (it failed: no agent yet)
        assert screen.session_id not in (GARDEN, GARDEN_2)
        assert home.archive.messages(screen.session_id)[0].content == "hello after the deletion"


async def test_a_session_left_for_a_new_or_another_one_ends_at_once_as_hermes_ends_it(home, tmp_path):
    """ctrl+l and ctrl+o left the session open until the next message (the picker and `sessions list`
    showed it live, and quitting first ended it with `cli_close`). Now it ends as the switch is made,
    as Hermes's /new (`new_session`) and /resume (`resumed_other`) end it."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_run(pilot)
        await send_turn(pilot, screen, "hello")
        first = screen.session_id
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: home.archive.get_session(first).ended_at is not None, what="the end")
        assert home.archive.get_session(first).end_reason == "new_session" and screen.session_id is None
        await send_turn(pilot, screen, "hello again")
        second = screen.session_id
        await resume_by(pilot, first)
        await pilot.press("enter")
        await wait_for(pilot, lambda: home.archive.get_session(second).ended_at is not None, what="the end")
        assert home.archive.get_session(second).end_reason == "resumed_other" and screen.session_id == first
        screen._resume(first)  # the one it is in (the picker's enter on it): said, and nothing ends
        await settle(pilot)
        assert any(n.message == f"Already in session {first}." for n in app._notifications)
        assert home.archive.get_session(first).ended_at is None  # reopened by the resume, as Hermes's /resume
        screen.query_one("#run-input").focus()
        await send_turn(pilot, screen, "back")
        assert home.archive.get_session(first).ended_at is None
        assert [s.id for s in home.archive.list_sessions()] == [second, first]


async def test_quitting_right_after_ctrl_l_leaves_the_session_ended_as_new_session(home, tmp_path):
    """The session left stayed open until the next message, so quitting first ended it with `cli_close`
    (Hermes's /new has ended it with `new_session` by then); the new session is never made."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_run(pilot)
        await send_turn(pilot, screen, "hello")
        first = screen.session_id
        await pilot.press("ctrl+l", "ctrl+q")
        await wait_for(pilot, lambda: not app.is_running, what="the quit")
    assert home.archive.get_session(first).end_reason == "new_session"
    assert [s.id for s in home.archive.list_sessions()] == [first]


async def test_ctrl_l_while_a_turn_runs_does_nothing_and_the_turn_is_kept_whole(home, tmp_path, monkeypatch):
    """ctrl+l and ctrl+o wait for the turn (esc cancels it): a session is never ended under a turn
    still adding to it."""
    from engine.runner.session import AgentSession

    request, gate, asked = AgentSession.request, threading.Event(), threading.Event()
    gate.set()

    def held(self, *args, **kwargs):
        asked.set()
        gate.wait(10)
        return request(self, *args, **kwargs)

    monkeypatch.setattr(AgentSession, "request", held)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_run(pilot)
        await send_turn(pilot, screen, "hello")
        first = screen.session_id
        gate.clear()
        asked.clear()
        await pilot.press(*"and a second turn", "enter")
        await wait_for(pilot, asked.is_set, what="the turn asking the model")
        await pilot.press("ctrl+l", "ctrl+o")
        await pilot.pause()
        assert screen.running and screen.session_id == first and not isinstance(app.screen, ResumeDialog)
        # dimmed, they said nothing when pressed: now each says why (the second in place of the first)
        assert [n.message for n in app._notifications] == ["A turn is running; wait for it or cancel it (esc)."]
        gate.set()
        await wait_for(pilot, lambda: not screen.running, what="the turn")
        await settle(pilot)
        session = home.archive.get_session(first)
        assert session.ended_at is None and screen.session_id == first
        said = [(m.role, m.content) for m in home.archive.messages(first) if m.role == "user"]
        assert said == [("user", "hello"), ("user", "and a second turn")]
        assert home.archive.messages(first)[-1].role == "assistant"  # its answer too


@pytest.mark.parametrize("then", ["message", "quit"])
async def test_ctrl_l_on_a_locked_state_db_says_so_and_the_end_comes_later(home, tmp_path, monkeypatch, then):
    """With state.db locked by another process, the end ctrl+l makes cannot be written: a notice says
    so (no traceback), the session stays as it was, and the next message (or the quit) ends it with
    `new_session`, not `cli_close`."""
    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "0.3")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_run(pilot)
        await send_turn(pilot, screen, "hello")
        first = screen.session_id
        holder = holding_write_lock(home.state_db_path)
        try:
            await pilot.press("ctrl+l")
            title = f"Session {first} was not ended yet"
            await wait_for(pilot, lambda: any(n.title == title for n in app._notifications), what="the notice")
            (notice,) = [n for n in app._notifications if n.title == title]
            assert notice.message.startswith("state.db is busy") and "Traceback" not in notice.message
            assert "until your next message ends it" in notice.message
            assert home.archive.get_session(first).ended_at is None and screen.session_id is None
            if then == "message":  # still locked: the turn fails before taking it, and the switch stays owed
                await pilot.press(*"and now", "enter")
                await wait_for(pilot, lambda: not screen.running, what="the failed turn")
                assert screen.query_one("#run-input", Input).value == "and now"
        finally:
            holder.kill()
            holder.wait()
        if then == "message":
            screen.query_one("#run-input", Input).value = ""
            await send_turn(pilot, screen, "and now")
            assert screen.session_id != first
            assert [m.content for m in home.archive.messages(first) if m.role == "user"] == ["hello"]
        else:
            await pilot.press("ctrl+q")
            await wait_for(pilot, lambda: not app.is_running, what="the quit")
    assert home.archive.get_session(first).end_reason == "new_session"


async def test_hermes_reads_the_session_left_as_ended_and_its_own_ends_stay(home, tmp_path, hermes):
    """Hermes's own SessionDB (another process) reads the session ctrl+l and ctrl+o left as ended, with
    the reason its /new and /resume write, before any new message. A session Hermes ended meanwhile
    keeps Hermes's end and time; one Hermes deleted is not made again."""
    read = (
        "import json\nfrom hermes_state import SessionDB\nrow = SessionDB().get_session({sid!r})\n"
        'print(json.dumps(row and [row["end_reason"], row["ended_at"]]))\n'
    )
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_run(pilot)
        await send_turn(pilot, screen, "hello")
        first = screen.session_id
        await pilot.press("ctrl+l")
        await settle(pilot)
        assert hermes.json(home.root, read.format(sid=first))[0] == "new_session"
        await send_turn(pilot, screen, "hello again")
        second = screen.session_id
        await resume_by(pilot, first)
        await pilot.press("enter")
        await settle(pilot)
        assert hermes.json(home.root, read.format(sid=second))[0] == "resumed_other"
        screen.query_one("#run-input").focus()
        await send_turn(pilot, screen, "back")  # (first is live again)
        ended_by_hermes = hermes.json(
            home.root,
            f"from hermes_state import SessionDB\nSessionDB().end_session({first!r}, 'cron_complete')\n"
            + read.format(sid=first),
        )
        await pilot.press("ctrl+l")
        await settle(pilot)
        assert hermes.json(home.root, read.format(sid=first)) == ended_by_hermes
        assert ended_by_hermes[0] == "cron_complete"
        await send_turn(pilot, screen, "one more")
        third = screen.session_id
        hermes.run(home.root, f"from hermes_state import SessionDB; SessionDB().delete_session({third!r})")
        await pilot.press("ctrl+l")
        await settle(pilot)
        assert not any(n.severity == "error" for n in app._notifications)
        assert hermes.json(home.root, read.format(sid=third)) is None
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: not app.is_running, what="the quit")
    assert home.archive.get_session(third) is None


async def test_deleting_a_live_session_run_resumed_says_hermes_may_still_write_to_it(home, tmp_path):
    """D on a session Hermes had not ended, resumed on Run, said only "It is the session Run talks in",
    leaving out that Hermes's next message would create it again (said for any other live session)."""
    home.archive.create_session("s-open", source="cli", title="Rotate the postgres password")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_run(pilot)
        await resumed(pilot, screen, "s-open")
        await pilot.press("escape")  # (out of the message box, where a digit types)
        sessions = await open_mode(pilot, "2", SessionsScreen)
        tree = sessions.query_one(LineageTree)
        await wait_for(pilot, lambda: tree.node_for("s-open") is not None, what="its row")
        tree.focus()
        tree.move_cursor(tree.node_for("s-open"))
        await wait_for(pilot, lambda: sessions.shown_session == "s-open", what="its transcript")
        await pilot.press("D")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
        assert app.screen.detail.startswith("Session s-open has not ended (it is live): a running Hermes may")
        assert "It is the session Run talks in: your next message there starts a new session." in app.screen.detail
        await pilot.press("n")


async def test_resuming_a_session_deleted_after_it_was_picked_says_so_as_the_resume_is_made(home, tmp_path):
    """The switch is made as the resume is chosen: a session deleted since the picker listed it is said
    then (the session left still ends), and the next message starts a new session."""
    seed_sessions(home)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_run(pilot)
        await send_turn(pilot, screen, "hello")
        first = screen.session_id
        await resume_by(pilot, TOKYO)
        assert home.archive.delete_session(TOKYO, live=True)
        await pilot.press("enter")
        said = f"Session {TOKYO} was deleted; your next message starts a new session."
        await wait_for(pilot, lambda: any(n.message == said for n in app._notifications), what="the notice")
        await settle(pilot)
        assert screen.session_id is None and "New session" in screen_text(app)
        assert home.archive.get_session(first).end_reason == "resumed_other"
        screen.query_one("#run-input").focus()
        await send_turn(pilot, screen, "where now?")
        assert screen.session_id not in (first, TOKYO) and home.archive.get_session(TOKYO) is None


async def scenario_waiting(pilot, name: str, lock) -> None:
    """The scenario ``name`` played on Run at full speed, until one of its writes waits for ``lock``."""
    screen = await open_run(pilot)
    screen.speed = 0
    screen.query_one("#run-scenario", Select).value = name
    await pilot.press("ctrl+g")
    await wait_for(pilot, lambda: _waiting_on(lock), timeout=20, what=f"a write of {name} waiting")


def _waiting_on(lock) -> list[lock_waits.Wait]:
    return [wait for wait in lock_waits.under_way() if wait.lock == lock]


def _ended(home, session_id: str, timeout: float = 15.0):
    """The session once its end is stored (the turn's thread ends it after the app has gone)."""
    deadline = time.monotonic() + timeout
    while (session := home.archive.get_session(session_id)).ended_at is None and time.monotonic() < deadline:
        time.sleep(0.05)
    return session


async def test_quitting_while_a_turn_waits_for_a_lock_ends_the_session(home, tmp_path, hermes):
    """ctrl+q while the agent's memory write waited for another process's lock quit (no question: the
    agent's write is not a save of the user's) and cancelled the wait, but left the session open in
    state.db: the quit skipped the end of a session whose turn still ran, and nothing ended it after.
    Now the turn's thread ends it once the turn has stopped, with `cli_close` as after any quit, and
    the transcript stored keeps the cancelled write as cancelled."""
    user = home.memories_dir / "USER.md"
    lock = user.with_name("USER.md.lock")
    before = user.read_bytes() if user.exists() else b""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_run(pilot)
        await send_turn(pilot, screen, "hello")
        session_id = screen.session_id
        holder = holding_flock(lock)
        try:
            await pilot.press(*"remember that I drink decaf", "enter")
            await wait_for(pilot, lambda: _waiting_on(lock), timeout=10, what="the agent's write waiting")
            await pilot.press("ctrl+q")
            await wait_for(pilot, lambda: not app.is_running, timeout=10, what="the quit, without a question")
        finally:
            holder.stdin.close()
            holder.wait(timeout=30)
    session = _ended(home, session_id)
    assert (session.ended_at is not None, session.end_reason) == (True, "cli_close")
    read = (
        "import json\nfrom hermes_state import SessionDB\nrow = SessionDB().get_session({sid!r})\n"
        'print(json.dumps([row["end_reason"], row["ended_at"] is not None]))\n'
    )
    assert hermes.json(home.root, read.format(sid=session_id)) == ["cli_close", True]  # as Hermes reads it
    said = [(m.role, m.content) for m in home.archive.messages(session_id)]
    assert [content for role, content in said if role == "user"] == ["hello", "remember that I drink decaf"]
    (result,) = [content for role, content in said if role == "tool"]
    assert f"Cancelled while waiting for {lock}" in result and "nothing was written" in result
    assert (user.read_bytes() if user.exists() else b"") == before  # the write waiting was never made


async def _esc_on_a_lock_wait(pilot, screen, lock, keys, says: str, stopped_title: str):
    """``keys`` start a write that waits on ``lock`` (held by another process): the wait is said, with
    ``says`` in it, then esc stops it and the status says so. Returns the wait's notice and the one
    titled ``stopped_title``, which begins with the write that was not made."""
    app = pilot.app
    await pilot.press(*keys)
    await wait_for(pilot, lambda: _waiting_on(lock), timeout=10, what="the write waiting")
    waiting = lambda: [n for n in app._notifications if n.title == "Waiting for a lock"]  # noqa: E731
    await wait_for(pilot, waiting, what="the wait said")
    (notice,) = waiting()
    assert says in notice.message
    await pilot.press("escape")
    await wait_for(pilot, lambda: not screen.running, timeout=10, what="it to stop")
    await settle(pilot)
    assert str(screen.query_one("#run-status", Static).render()).startswith("stopped (esc)")
    (stopped,) = [n for n in app._notifications if n.title == stopped_title]
    assert stopped.message.startswith(f"The agent's write was not made: Cancelled while waiting for {lock}")
    return notice, stopped


async def test_esc_stops_a_turn_whose_memory_write_waits_for_a_lock(home, tmp_path):
    """esc while the agent's memory write waited for another process's lock only said `cancelling…`
    for the whole hold; then the write landed and the turn ended with no word. Now esc ends that wait:
    nothing is written, the tool result says it was cancelled, the turn stops as a stopped turn does
    and the screen says so."""
    user = home.memories_dir / "USER.md"
    lock = user.with_name("USER.md.lock")
    before, rows = (user.read_bytes() if user.exists() else b""), home.memory.history("user")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_run(pilot)
        holder = holding_flock(lock)
        try:
            keys = (*"remember that I drink decaf", "enter")
            notice, stopped = await _esc_on_a_lock_wait(
                pilot, screen, lock, keys, "Esc stops the agent's turn", "Turn stopped"
            )
            assert "Esc stops a save" not in notice.message and "nothing was written" in stopped.message
            assert not [n for n in app._notifications if n.title in ("Waiting for a lock", "Lock free")]
            tools = [i for i in screen.query_one(Transcript).items if i.role == "tool"]
            assert len(tools) == 1 and f"Cancelled while waiting for {lock}" in tools[0].content
        finally:
            holder.stdin.close()
            holder.wait(timeout=30)
        await settle(pilot)
        assert (user.read_bytes() if user.exists() else b"") == before  # not made once the lock is free either
        assert home.memory.history("user") == rows  # nothing journaled
        said = [(m.role, m.content) for m in home.archive.messages(screen.session_id)]
        assert [role for role, _ in said] == ["user", "assistant", "tool"]  # stopped: no answer after it
        assert f"Cancelled while waiting for {lock}" in said[-1][1]


async def test_a_quit_before_the_screen_heard_a_turn_end_ends_the_session_as_the_owed_switch_would(home, tmp_path):
    """The turn hands an owed switch (ctrl+l whose end state.db refused) to the screen in its TurnEnded;
    a quit between the turn's end and that message ended the session `cli_close` instead of as the
    switch asked (found in review). The hand-over carries it, so the close ends it so."""
    from workbench.screens.run import Switch

    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_run(pilot)
        await send_turn(pilot, screen, "hello")
        session_id = screen.session_id
        assert screen._turn is not None and screen._switch is None
        screen._turn.owed = Switch(None)  # the window: the worker's turn_over gave it, TurnEnded not heard
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: not app.is_running, timeout=10, what="the quit")
    assert _ended(home, session_id).end_reason == "new_session"


HERMES_ROW = (
    "import json\nfrom hermes_state import SessionDB\nrow = SessionDB().get_session({sid!r})\n"
    'print(json.dumps([row["ended_at"] is not None, row["end_reason"]]))\n'
)


async def test_a_session_resumed_is_reopened_at_once_and_ended_again_as_it_is_left(home, tmp_path, hermes):
    """ctrl+o before any message opened no agent: the session resumed stayed ended (the picker, the
    Sessions list and Hermes showed it so while it was in use) until its first write, and left untouched
    (ctrl+l, ctrl+o to another, the quit) nothing ended it again. Now it is reopened at once, as Hermes's
    /resume reopens it, and ended as it is left with the reason Hermes gives that way of leaving."""
    seed_sessions(home)
    home.archive.end_session(TOKYO, "cli_close")
    home.archive.end_session(GARDEN_2, "user_exit")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_run(pilot)
        await resume_by(pilot, TOKYO)
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.agent is not None and screen._opening is None, what="the agent")
        assert home.archive.get_session(TOKYO).ended_at is None
        assert hermes.json(home.root, HERMES_ROW.format(sid=TOKYO)) == [False, None]  # live, as Hermes reads it
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: home.archive.get_session(TOKYO).ended_at is not None, what="the end")
        assert home.archive.get_session(TOKYO).end_reason == "new_session"
        await resume_by(pilot, TOKYO)
        await pilot.press("enter")
        await wait_for(pilot, lambda: home.archive.get_session(TOKYO).ended_at is None, what="reopened again")
        await resume_by(pilot, GARDEN_2)
        await pilot.press("enter")
        await wait_for(pilot, lambda: home.archive.get_session(TOKYO).ended_at is not None, what="the end")
        assert home.archive.get_session(TOKYO).end_reason == "resumed_other"
        assert home.archive.get_session(GARDEN_2).ended_at is None
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: not app.is_running, timeout=10, what="the quit")
    assert hermes.json(home.root, HERMES_ROW.format(sid=GARDEN_2)) == [True, "cli_close"]
    assert [m.role for m in home.archive.messages(TOKYO)] == ["user", "assistant"]  # nothing written in it


async def test_resuming_a_live_session_warns_first_and_leaving_it_does_not_end_it(home, tmp_path):
    """A session Hermes has not ended (listed "live" in the picker) was written into and ended without a
    word. Now resuming it says another Hermes may be writing to it, and ctrl+l leaves it live (and takes
    that notice down: it stayed up, saying your messages go into a session already left)."""
    home.archive.create_session("s-open", source="cli", title="Rotate the postgres password")
    seed_sessions(home)
    home.archive.end_session(TOKYO, "cli_close")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_run(pilot)
        await resume_by(pilot, "s-open")
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: [n for n in app._notifications if n.title == "Resumed a live session"], what="the warning"
        )
        (notice,) = [n for n in app._notifications if n.title == "Resumed a live session"]
        assert notice.message.startswith("Session s-open has not ended (it is live): another Hermes may be writing")
        await pilot.press("f1")  # a dialog over Run: the notice drew over its text and buttons
        await wait_for(pilot, lambda: app.screen is not screen, what="the help")
        assert not [n for n in app._notifications if n.title == "Resumed a live session"]
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, what="back on Run")
        await send_turn(pilot, screen, "hello")
        # read before the message was sent, it no longer covers the transcript's last lines, the answer
        assert not [n for n in app._notifications if n.title == "Resumed a live session"]
        title = str(screen.query_one(Transcript).border_title)  # what stays true is still said
        assert title == "Session s-open (live: another Hermes may write to it too; never ended here)"
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: screen._switch is None and screen._ending is None, what="the switch")
        await settle(pilot)
        row = home.archive.get_session("s-open")
        assert (row.ended_at, row.message_count) == (None, 2)  # written to, never ended here
        app.clear_notifications()
        await resume_by(pilot, TOKYO)  # an ended one: reopened, with no warning
        await pilot.press("enter")
        await wait_for(pilot, lambda: home.archive.get_session(TOKYO).ended_at is None, what="reopened")
        await settle(pilot)
        assert not [n for n in app._notifications if n.title == "Resumed a live session"]
        await resume_by(pilot, "s-open")  # from a session: the switch says it too
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: [n for n in app._notifications if n.title == "Resumed a live session"], what="the warning"
        )
        await pilot.press("ctrl+l")  # left: "your messages go into it" is no longer so, and the notice goes
        await wait_for(pilot, lambda: screen._switch is None and screen._ending is None, what="the switch")
        await settle(pilot)
        assert not [n for n in app._notifications if n.title == "Resumed a live session"]
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: not app.is_running, timeout=10, what="the quit")
    assert home.archive.get_session("s-open").ended_at is None  # the quit does not end it either
    assert home.archive.get_session(TOKYO).end_reason == "resumed_other"


async def test_a_live_session_left_uncompressed_says_so_in_a_notice(home, tmp_path):
    """Past the compression threshold, a live session resumed here is not compressed (it would end it):
    the transcript's warning line went when the finished turn reloaded it from state.db, unread."""
    hermes = AgentSession(home, OfflineModel(), title="Hermes's live one")
    for n in range(4):
        hermes.run_turn(f"prepare the weekly report number {n}")  # not ended: live
    home.config_path.write_text("model:\n  context_length: 200\ncompression:\n  threshold: 1.0\n", encoding="utf-8")
    home.reload_config()
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_run(pilot)
        await resumed(pilot, screen, hermes.id)
        app.clear_notifications()
        await send_turn(pilot, screen, "hello")
        notices = [n for n in app._notifications if n.title == "Not compressed"]
        assert [n.message for n in notices] == [live_uncompressed(hermes.id)]
    assert home.archive.get_session(hermes.id).ended_at is None


@pytest.mark.parametrize("then", ["send", "quit"])
async def test_a_message_or_a_quit_while_the_resumed_session_opens_goes_on_with_its_agent(
    home, tmp_path, monkeypatch, then
):
    """The agent of a session resumed before any turn is opened in a worker: a message sent meanwhile
    waits for it and goes on with it (never a second agent), and a quit meanwhile ends the session
    once it is open, as any quit does."""
    from workbench.screens import run as run_module

    seed_sessions(home)
    home.archive.end_session(TOKYO, "user_exit")
    release, opened = threading.Event(), []
    resuming = run_module.Conversation.resuming

    def slow(*args, **kwargs):
        release.wait(30)
        opened.append(resuming(*args, **kwargs))
        return opened[-1]

    monkeypatch.setattr(run_module.Conversation, "resuming", slow)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_run(pilot)
        await resume_by(pilot, TOKYO)
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen._opening is not None, what="the opening")
        assert "resuming…" in str(screen.query_one("#run-status", Static).render())
        if then == "send":
            screen.query_one("#run-input").focus()
            await pilot.press(*"hello again", "enter")
            await wait_for(pilot, lambda: screen.running, what="the turn queued")
            release.set()
            await wait_for(pilot, lambda: not screen.running and screen._opening is None, what="the turn")
            assert len(opened) == 1 and screen.agent is opened[0] and screen.session_id == TOKYO
            said = [m.content for m in home.archive.messages(TOKYO) if m.role == "user"]
            assert said == ["東京でラーメンを食べたい", "hello again"]
            assert home.archive.get_session(TOKYO).ended_at is None
        else:
            await pilot.press("ctrl+q")
            await wait_for(pilot, lambda: not app.is_running, timeout=10, what="the quit")
    if then == "quit":
        release.set()  # it opens (and reopens the session) after the app has gone, then ends it
        deadline = time.monotonic() + 15
        while home.archive.get_session(TOKYO).end_reason != "cli_close" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert home.archive.get_session(TOKYO).end_reason == "cli_close" and len(opened) == 1
    else:
        assert home.archive.get_session(TOKYO).end_reason == "cli_close"


async def test_esc_stops_a_scenario_whose_write_waits_for_a_lock(home, tmp_path):
    """esc while a scenario's memory write waited for another process's lock said `cancelling…` for the
    whole hold (the write was not in a cancellable scope, as a typed turn's is); then it landed and the
    scenario stopped with no word of it. Now esc ends that wait: nothing is written, the scenario stops
    there, and the status and a notice say what was not done."""
    memory = home.memories_dir / "MEMORY.md"
    lock = memory.with_name("MEMORY.md.lock")
    before = memory.read_bytes() if memory.exists() else b""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_run(pilot)
        screen.speed = 0
        screen.query_one("#run-scenario", Select).value = "smoke"
        holder = holding_flock(lock)
        try:
            says = "Esc stops the scenario, and a write of it waiting here is not made"
            _, stopped = await _esc_on_a_lock_wait(pilot, screen, lock, ("ctrl+g",), says, "Scenario stopped")
            assert "The rest of the scenario smoke was not played." in stopped.message
        finally:
            holder.stdin.close()
            holder.wait(timeout=30)
        await settle(pilot)
        assert (memory.read_bytes() if memory.exists() else b"") == before  # not made once the lock is free
        said = [(m.role, m.content) for m in home.archive.messages(screen.session_id)]
        assert [role for role, _ in said] == ["user", "assistant", "tool"]  # stopped there: nothing after it
        assert f"Cancelled while waiting for {lock}" in said[-1][1]
        assert home.archive.get_session(screen.session_id).end_reason == "user_exit"  # ended as the scenario ends


async def test_quitting_while_a_scenario_waits_for_a_lock_does_not_hang(home, tmp_path):
    """ctrl+q while a scenario's write waited for another process's lock: the quit must not wait for the
    lock, nothing of the write is made, and the scenario's session is ended as the scenario ends it."""
    memory = home.memories_dir / "MEMORY.md"
    lock = memory.with_name("MEMORY.md.lock")
    before = memory.read_bytes() if memory.exists() else b""
    app = make_app(home, tmp_path)
    holder = holding_flock(lock)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await scenario_waiting(pilot, "smoke", lock)
            await pilot.press("ctrl+q")
            await wait_for(pilot, lambda: not app.is_running, timeout=10, what="the quit")
        (session,) = home.archive.list_sessions()
        session = _ended(home, session.id)
        assert session.end_reason == "user_exit" and not _waiting_on(lock)
        assert [m.role for m in home.archive.messages(session.id)] == ["user", "assistant", "tool"]
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert (memory.read_bytes() if memory.exists() else b"") == before


async def test_a_resumed_live_session_shows_hermes_messages_and_its_end_elsewhere_is_said(home, tmp_path, hermes):
    """Resumed live on Run, a session Hermes then answered in and ended (`cli_close`) showed neither, and
    the next message was stored past the end without a word. Now Hermes's answer shows when stored, and
    the message says the end and reopens the session (the engine's rule, ``_follow_outside``): in the
    transcript's title, before it is sent and after, with no notice over the answer."""
    from tests.test_runner_session import SESSION_SCRIPT

    hermes.run(home.root, SESSION_SCRIPT + "db.create_session('h-live2', 'cli')\nsay('h-live2', 'user', 'hi')\n")
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_run(pilot)
        await resumed(pilot, screen, "h-live2")
        hermes.run(
            home.root,
            SESSION_SCRIPT
            + "say('h-live2', 'assistant', 'Hello from Hermes.')\ndb.end_session('h-live2', 'cli_close')\n",
        )
        transcript = screen.query_one(Transcript)
        await wait_for(
            pilot,
            lambda: any(item.content == "Hello from Hermes." for item in transcript.items),
            timeout=10,
            what="Hermes's answer in the transcript",
        )
        # the title said "live" until the next message; the end is said as soon as it is read
        ended = "Session h-live2 (ended elsewhere (cli_close): your next message reopens it here)"
        await wait_for(pilot, lambda: str(transcript.border_title) == ended, timeout=10, what="the end in the title")
        await send_turn(pilot, screen, "are you there")
        await settle(pilot)
        assert not app._notifications  # (a notice covered the answer's last lines at 80x24)
        reopened = "Session h-live2 (reopened here: Hermes had ended it (cli_close))"  # ours now, and said
        assert str(screen.query_one(Transcript).border_title) == reopened
        row = home.archive.get_session("h-live2")
        assert (row.ended_at, row.end_reason) == (None, None)  # reopened, not written past its end
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: screen._switch is None and screen._ending is None, what="the switch")
        await resumed(pilot, screen, "h-live2")  # ended by us as it was left: back in it, our end said, not Hermes's
        assert str(transcript.border_title) == "Session h-live2 (reopened here: it had ended (new_session))"
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: not app.is_running, timeout=10, what="the quit")
    assert home.archive.get_session("h-live2").end_reason == "cli_close"  # ours to end: the quit ended it


async def test_the_title_says_what_the_next_message_does_once_hermes_ends_or_compresses_our_session(
    home, tmp_path, hermes
):
    """A session of ours that Hermes then ended, or compressed, kept its plain title until the next
    message said so: the title now says it as soon as the reread finds it (reopen, or go on in the
    continuation)."""
    from tests.test_runner_session import SESSION_SCRIPT

    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_run(pilot)
        await send_turn(pilot, screen, "hello")
        sid, transcript = screen.session_id, screen.query_one(Transcript)
        hermes.run(home.root, SESSION_SCRIPT + f"db.end_session({sid!r}, 'cli_close')\n")
        ended = f"Session {sid} (ended elsewhere (cli_close): your next message reopens it here)"
        await wait_for(pilot, lambda: str(transcript.border_title) == ended, timeout=10, what="the end said")
        await send_turn(pilot, screen, "still here")
        assert str(transcript.border_title) == f"Session {sid} (reopened here: Hermes had ended it (cli_close))"
        compress = (
            f"db.end_session({sid!r}, 'compression')\ndb.create_session('h-child', 'cli', parent_session_id={sid!r})\n"
        )
        hermes.run(home.root, SESSION_SCRIPT + compress)
        compressed = f"Session {sid} (compressed elsewhere: your next message goes on in its continuation)"
        await wait_for(pilot, lambda: str(transcript.border_title) == compressed, timeout=10, what="the compression")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: not app.is_running, timeout=10, what="the quit")


async def test_a_live_warning_that_arrives_under_a_dialog_raises_no_notice_over_it(home, tmp_path):
    """The warning comes from a worker (the agent opening, a switch): with a dialog opened meanwhile its
    notice covered the dialog's buttons at 80x24, and nothing took it down (review)."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_run(pilot)
        await pilot.press("f1")
        await wait_for(pilot, lambda: app.screen is not screen, what="the help")
        screen._warn_live("Session x has not ended (it is live): another Hermes may be writing to it.")
        await settle(pilot)
        assert not [n for n in app._notifications if n.title == "Resumed a live session"]


async def test_an_end_read_before_the_agent_reopened_the_session_is_not_said_as_hermes(home, tmp_path):
    """Resuming reads the transcript while the agent reopens the session in another worker: a read that
    saw the old end and arrived after the reopen titled it "ended elsewhere (...)" (a CI run)."""
    from workbench.screens.run import SessionReloaded

    home.archive.create_session("s-ended", source="cli", title="Kettle talk")
    home.archive.append_message("s-ended", "user", "how long to steep?")
    home.archive.end_session("s-ended", "new_session")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_run(pilot)
        await resumed(pilot, screen, "s-ended")
        transcript = screen.query_one(Transcript)
        look = (home.clock.now(), "new_session", "Kettle talk", 1, 1)  # the row as it was before the reopen
        screen.post_message(SessionReloaded("s-ended", list(transcript.items), look, screen._opened_count - 1))
        await settle(pilot)
        assert str(transcript.border_title) == "Session s-ended (reopened here: it had ended (new_session))"
        screen.post_message(SessionReloaded("s-ended", list(transcript.items), look, screen._opened_count))
        await settle(pilot)  # (read after it: an end that came since, said)
        assert "ended elsewhere (new_session)" in str(transcript.border_title)


async def test_an_end_read_while_the_agent_is_switching_back_into_the_session_is_not_said(home, tmp_path):
    """ctrl+l then ctrl+o back: the transcript is read while another worker reopens the session; a read
    that saw our own end from leaving and arrived before the switch was heard titled it "ended
    elsewhere (new_session)" for good (a CI run)."""
    from workbench.screens.run import SessionReloaded

    home.archive.create_session("s-back", source="cli", title="Kettle talk")
    home.archive.append_message("s-back", "user", "how long to steep?")
    home.archive.end_session("s-back", "cli_close")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_run(pilot)
        await resumed(pilot, screen, "s-back")
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: screen._switch is None and screen._ending is None, what="the switch")
        agent, switch_session = screen.agent, screen.agent.switch_session
        transcript = screen.query_one(Transcript)
        look = (home.clock.now(), "new_session", "Kettle talk", 1, 1)  # the row before the switch reopens it

        def switching(target):  # the read, begun before the reopen, is heard before the switch is
            opened = screen._opened_count
            switch_session(target)
            screen.post_message(SessionReloaded("s-back", list(transcript.items), look, opened))

        agent.switch_session = switching
        await resumed(pilot, screen, "s-back")
        assert str(transcript.border_title) == "Session s-back (reopened here: it had ended (new_session))"
        row = home.archive.get_session("s-back")
        assert (row.ended_at, row.end_reason) == (None, None)


async def _send_into_a_busy_store(pilot, screen: RunScreen, text: str) -> None:
    """Send ``text`` and wait until the turn's answer is said: its store, before its tool call runs, then
    waits for state.db's write lock, which another process holds."""
    await pilot.press(*text, "enter")
    await wait_for(
        pilot,
        lambda: screen.agent is not None and screen.agent.agent.messages[-1]["role"] == "assistant",
        what="the answer, whose store waits",
    )


async def test_quitting_while_a_turn_waits_for_a_busy_state_db_quits_at_once_and_keeps_it(home, tmp_path, monkeypatch):
    """ctrl+q while a turn's store waited for state.db (another process held its write lock) left the
    terminal blank for two busy timeouts: the turn's thread waited out its store, then the session's
    end, in SQLite's busy handler, which no quit could end. Now the quit ends both waits: what state.db
    did not take is kept in workbench.db at once, and said once the terminal is back."""
    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "300")  # (waited out, the turn's thread outlives the test)
    home.archive.list_sessions()
    app = make_app(home, tmp_path)
    holder = holding_write_lock(home.state_db_path)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            screen = await open_run(pilot)
            await _send_into_a_busy_store(pilot, screen, "remember that I drink decaf")
            session_id = screen.agent.id
            await pilot.press("ctrl+q")
            await wait_for(pilot, lambda: not app.is_running, what="the quit, without a question")
        turn = screen.after_exit()  # (the turn's thread or the close ended the session, whichever came second)
        assert turn is None or turn.finished.wait(30), "the turn's thread ended with the quit"
        said: list[str] = []
        app.after_exit(said.append)
    finally:
        holder.kill()
        holder.wait()
    (note,) = [text for text in said if text.startswith("note: ")]
    assert f"3 messages of session {session_id} could not be stored in state.db" in note
    assert "kept in workbench.db" in note and STORED_LATER in note
    held = of_session(home, session_id)
    assert held is not None and held.messages == 3 and held.why.startswith("state.db is busy")
    open_home(home.root).close()  # the next start stores them, and ends the session as the quit does
    assert [m.role for m in home.archive.messages(session_id)] == ["user", "assistant", "tool"]
    assert home.archive.get_session(session_id).end_reason == "cli_close"


async def test_esc_ends_a_turns_wait_for_a_busy_state_db(home, tmp_path, monkeypatch):
    """esc while a turn's store waited for state.db said `cancelling…` for the whole busy timeout: the wait
    was SQLite's own. Now esc ends it: the turn stops (`stopped (esc)`), its messages stay on screen, not
    saved yet, and the next message stores them once state.db is free."""
    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "300")
    home.archive.list_sessions()
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_run(pilot)
        holder = holding_write_lock(home.state_db_path)
        try:
            await _send_into_a_busy_store(pilot, screen, "remember that I drink decaf")
            await pilot.press("escape")
            await wait_for(pilot, lambda: not screen.running, timeout=30, what="the turn to stop")
            await settle(pilot)
            assert str(screen.query_one("#run-status", Static).render()).startswith("stopped (esc)")
            (warning,) = [n for n in app._notifications if "not saved yet" in (n.title or "")]
            assert warning.title == "3 messages not saved yet" and "wait was cancelled" in warning.message
            assert screen.unstored == 3 and home.archive.get_session(screen.session_id) is None
        finally:
            holder.kill()
            holder.wait()
        await send_turn(pilot, screen, "hello")
        roles = [m.role for m in home.archive.messages(screen.session_id)]
        assert roles[:3] == ["user", "assistant", "tool"] and roles[3:] == ["user", "assistant"]


async def test_resuming_an_archived_session_says_so_and_marks_the_title(home, tmp_path):
    """ctrl+o with an archived session's id typed resumed it with the title `Session ID` and no word:
    messages then went into a session the Sessions tree, `sessions list` and session_search hide. Now a
    notice says it is archived and stays so, and the title is marked `archived · ` while it is shown."""
    seed_sessions(home)
    home.archive.set_archived(TOKYO)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_run(pilot)
        await resume_by(pilot, TOKYO)  # (the picker hides it: the typed id goes to the engine's resolver)
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.agent is not None and screen._opening is None, what="resumed")
        await settle(pilot)
        assert str(screen.query_one(Transcript).border_title).startswith(f"archived · Session {TOKYO} (live")
        # Live and archived: one notice (two stacked covered the transcript and the message box at 80x24)
        (notice,) = list(app._notifications)
        assert notice.title == "Resumed a live, archived session"
        assert notice.message.startswith(f"Session {TOKYO} is live (another Hermes may be writing to it) and archived")
        await pilot.press("ctrl+l")
        await settle(pilot)
        assert str(screen.query_one(Transcript).border_title) == "New session"
        await resume_by(pilot, GARDEN_2)
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.session_id == GARDEN_2 and screen._switch is None, what="switched")
        await settle(pilot)
        assert str(screen.query_one(Transcript).border_title).startswith(f"Session {GARDEN_2} (live")
        await resume_by(pilot, TOKYO)  # (a switch from a session this time, not an opening)
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.session_id == TOKYO and screen._switch is None, what="switched back")
        await settle(pilot)
        assert str(screen.query_one(Transcript).border_title).startswith(f"archived · Session {TOKYO} (live")
    assert home.archive.get_session(TOKYO).archived  # it stays archived


async def test_the_store_a_quit_tries_first_asks_at_once_and_the_kept_turn_is_said_after_exit(
    home, tmp_path, monkeypatch
):
    """ctrl+q after a turn state.db did not take tried the store once more for the whole busy timeout (5 s,
    here 300) before the question came, nothing moving on screen meanwhile; y then quit saying nothing of
    what it kept. Now the try gives up as a quit ends a turn's busy wait (after a quarter of a second),
    the question comes at once, and what y kept is said once the terminal is back."""
    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "0.3")
    home.archive.list_sessions()
    app = make_app(home, tmp_path)
    holder = holding_write_lock(home.state_db_path)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await open_run(pilot)
            await send_turn(pilot, screen, "hello while locked")
            assert screen.unstored == 2
            monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "300")  # (read at each wait: the old try waited it out)
            await pilot.press("ctrl+q")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), timeout=30, what="the question")
            assert app.screen.question.startswith("2 messages are not in state.db yet (busy).")
            await pilot.press("y")
            await wait_for(pilot, lambda: not app.is_running, what="the quit")
        said: list[str] = []
        app.after_exit(said.append)
    finally:
        holder.kill()
        holder.wait()
    (note,) = said
    assert note.startswith(f"note: 2 messages of session {screen.session_id} could not be stored in state.db")
    assert "They are kept in workbench.db." in note
    open_home(home.root).close()  # the next start stores them
    assert [m.content for m in home.archive.messages(screen.session_id)][:1] == ["hello while locked"]


@pytest.mark.parametrize("first_second", [False, True])
def test_ctrl_c_while_the_exit_waits_for_a_turn_leaves_at_once_and_says_so(home, tmp_path, monkeypatch, first_second):
    """After the terminal came back, the exit waited for a turn still in a model request with no end
    but ctrl+c, and that only moved the wait to the interpreter's exit (which joins the worker's
    thread), whose second ctrl+c printed a traceback. ctrl+c now leaves at once, saying what it left."""
    from types import SimpleNamespace

    import workbench.app as app_module

    class Stuck(threading.Event):
        def wait(self, timeout=None):
            if timeout is None or first_second:  # (ctrl+c during the first second's wait too)
                raise KeyboardInterrupt
            return False

    left: list[int] = []

    def leave(code: int) -> None:
        left.append(code)
        raise SystemExit(code)

    monkeypatch.setattr(app_module.os, "_exit", leave)
    app = make_app(home, tmp_path)
    turn = SimpleNamespace(finished=Stuck(), note=None)
    app.run_screen = SimpleNamespace(after_exit=lambda: turn, exit_note=None)
    said: list[str] = []
    with pytest.raises(SystemExit):
        app.after_exit(said.append)
    assert left == [130]
    waiting = "Waiting for the agent's turn to stop and its session to end… (ctrl+c leaves without waiting)"
    left_now = "Left without waiting: its session stays open in state.db, as a killed workbench leaves it."
    assert said == ([left_now] if first_second else [waiting, left_now])


async def test_a_quit_while_a_turn_waits_to_begin_leaves_at_once(home, tmp_path):
    """A trial: enter then ctrl+q at once left the terminal on "Waiting for the agent's turn to stop…"
    for good: the turn's thread waited for the worker before it (an opening, a switch), which the quit
    meant would never run, and the exit waited for the turn. The quit now stops a turn that has not
    begun, its message given back, and the exit does not wait."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_run(pilot)
        screen._idle = threading.Event()  # the worker before the turn: one the quit keeps from ever running
        await pilot.press(*"remember that I drink decaf", "enter")
        await wait_for(pilot, lambda: screen.running, what="the turn, waiting for the worker before it")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: not app.is_running, what="the quit")
    said: list[str] = []
    exiting = threading.Thread(target=app.after_exit, args=(said.append,), daemon=True)
    exiting.start()
    exiting.join(timeout=10)
    assert not exiting.is_alive(), f"the exit still waits for the turn: {said}"
    assert not home.archive.list_sessions()  # the message never run, so no session was made


def test_a_turn_whose_screen_closed_before_it_began_is_not_run():
    from workbench.screens.run import Handover

    turn = Handover()
    assert turn.close() is False and turn.left_running is False  # (nothing for the exit to wait for)
    assert turn.begin() is False
    late = Handover()
    assert late.begin() is True and late.close() is True and late.left_running is True


async def test_a_stored_tool_result_keeps_the_busy_advice_and_says_whose_it_is(home, tmp_path):
    """A tool result stored when state.db was busy tells the agent to set WORKBENCH_BUSY_TIMEOUT; the Run
    transcript showed that to the app's user as if meant for them, where the app's own words say to try
    again. The result stays as the model read it, with a note under it saying whose advice it is."""
    session = "20261130_090000_0b05y1"
    error = (
        "state.db is busy: process 4242 (python hermes) holds its write lock (waited 5 s). Nothing was changed. "
        "Retry when it is done, or set WORKBENCH_BUSY_TIMEOUT (seconds) to wait longer."
    )
    stored = json.dumps({"success": False, "error": error})
    call = {"id": "call_1", "type": "function", "function": {"name": "session_search", "arguments": "{}"}}
    home.archive.create_session(session, source="cli", title="A busy turn")
    home.archive.append_message(session, "user", "what did we say about tea?")
    home.archive.append_message(session, "assistant", "", tool_calls=[call])
    home.archive.append_message(session, "tool", stored, tool_name="session_search", tool_call_id="call_1")
    home.archive.end_session(session, "cli_close")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_run(pilot)
        await resumed(pilot, screen, session)
        assert "note: the busy advice above is the agent's, as stored" in screen_text(app)
        [tool] = [item for item in screen.query_one(Transcript).items if item.role == "tool"]
        assert tool.content == stored, "as the model read it"
        note = tool.note
    live = runner_item(RunnerEvent(kind="tool_result", session_id=session, data={"name": "memory", "preview": stored}))
    assert live is not None and (live.content, live.note) == (stored, note)
    calm = runner_item(RunnerEvent(kind="tool_result", session_id=session, data={"name": "memory", "preview": "{}"}))
    assert calm is not None and calm.note == ""


async def test_resuming_a_session_that_had_ended_says_it_is_reopened_here(home, tmp_path):
    """Resuming an ended session reopened it (and ends it again when left) with the title saying nothing;
    `run --session` now says it too, in the engine's words (``Conversation.reopened_note``)."""
    home.archive.create_session("s-ended", source="cli", title="Earlier")
    home.archive.append_messages("s-ended", [{"role": "user", "content": "hi"}])
    assert home.archive.end_session("s-ended", "user_exit")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_run(pilot)
        await resumed(pilot, screen, "s-ended")
        title = str(screen.query_one(Transcript).border_title)
        assert title == "Session s-ended (reopened here: it had ended (user_exit))"
        assert home.archive.get_session("s-ended").ended_at is None


@contextlib.contextmanager
def slow_review(home):
    """An OpenAI-compatible endpoint whose answer to the first background review waits until the yielded
    event is set (the turn's own answer comes at once); every turn is reviewed."""
    from tests.test_models_openai import FakeEndpoint

    endpoint = FakeEndpoint()
    answered = threading.Event()
    endpoint.holds[1] = answered  # request 0 is the turn's; the review's waits until the test lets it
    endpoint.answer("Noted.")
    endpoint.answer(tool_calls=[("c1", "memory", {"action": "add", "target": "user", "content": "User drinks tea."})])
    endpoint.answer("Saved the user's tea.")  # (the review's last answer, after its write)
    home.config_path.write_text(
        f"model:\n  backend: openai\n  base_url: {endpoint.base_url}\n  name: m\n  api_key_env: ''\n"
        "memory:\n  nudge_interval: 1\nskills:\n  creation_nudge_interval: 0\n",
        encoding="utf-8",
    )
    home.reload_config()
    try:
        yield endpoint, answered
    finally:
        answered.set()
        endpoint.close()


async def review_under_way(pilot, endpoint) -> RunScreen:
    """A turn sent on Run; returns once its background review waits for the model."""
    screen = await open_run(pilot)
    await send_turn(pilot, screen, "I like bancha")
    await wait_for(pilot, lambda: len(endpoint.requests) == 2, what="the review's model call")
    return screen


async def asked_about_review(pilot, endpoint) -> RunScreen:
    """``review_under_way``, then ctrl+q: returns once the question about the review is up."""
    screen = await review_under_way(pilot, endpoint)
    await pilot.press("ctrl+q")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ConfirmDialog), what="the question")
    return screen


def review_over(session, answered: threading.Event) -> None:
    """The model answers after all; wait for the dropped review's thread (its worker is closed: drain will
    not wait for it)."""
    answered.set()
    deadline = time.monotonic() + 10
    while session.reviewing and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not session.reviewing


async def said_at_start(home, tmp_path) -> list[tuple[str, str]]:
    """The notices a new app on ``home`` shows once started."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        return [(n.title, n.message) for n in app._notifications]


async def test_quitting_while_a_background_review_waits_for_its_model_asks_and_drops_it(home, tmp_path):
    """ctrl+q while a review's model call ran left the terminal blank until the model answered (up to its
    timeout), then exited 0 with the review lost and no word said. Now the quit names the review and
    asks; n stays, y quits without waiting for the model, the exit says the review was stopped, and its
    answer, when it comes, writes nothing; the next start says it again."""
    from engine.runner.review import dropped_note

    app = make_app(home, tmp_path)
    with slow_review(home) as (endpoint, answered):
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await review_under_way(pilot, endpoint)
            session = screen.agent.agent
            question = f"A background review of session {screen.session_id} is still running. Quit and drop it?"
            await pilot.press("ctrl+q")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
            assert app.screen.question == question
            assert "n stays here and lets it finish." in app.screen.detail
            await pilot.press("n")  # stays: the review goes on
            await settle(pilot)
            assert app.is_running and not isinstance(app.screen, ConfirmDialog) and session.reviewing
            await pilot.press("ctrl+q")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question again")
            await pilot.press("y")
            await wait_for(pilot, lambda: not app.is_running, what="the quit, the model still silent")
            assert not answered.is_set()
        assert app.quit_note == dropped_note([screen.session_id])  # (printed as the app exits)
        review_over(session, answered)  # its late answer writes nothing
        assert home.memory.read("user").entries == [] and home.approvals.list() == []
        assert home.archive.get_session(screen.session_id).end_reason == "cli_close"
        note = ("Review not done", dropped_note([screen.session_id]))
        assert note in await said_at_start(home, tmp_path)  # (the exit's line is easily lost)
        assert note not in await said_at_start(home, tmp_path)  # once


async def test_an_exit_no_one_was_asked_about_never_waits_for_a_review(home, tmp_path):
    """A hang-up or a closed terminal while a review waited for its model kept the process until the model
    answered (up to 60 s), and the review, stopped, was lost unsaid. Now it is dropped at once, and the
    next start says so."""
    from engine.runner.review import dropped_note

    app = make_app(home, tmp_path)
    with slow_review(home) as (endpoint, answered):
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await review_under_way(pilot, endpoint)
            session = screen.agent.agent
            app.exit(return_code=1, message="The terminal went away; the workbench quit.")
            await wait_for(pilot, lambda: not app.is_running, what="the exit, the model still silent")
            assert not answered.is_set()
        review_over(session, answered)
        assert ("Review not done", dropped_note([screen.session_id])) in await said_at_start(home, tmp_path)


async def test_a_review_that_ends_while_the_quit_asks_is_saved_and_not_said_dropped(home, tmp_path):
    """y to the question after the review had ended meanwhile would have said "The background review of
    session  was stopped" (naming none) of a review that did its work."""
    app = make_app(home, tmp_path)
    with slow_review(home) as (endpoint, answered):
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await asked_about_review(pilot, endpoint)
            await review_lands(pilot, screen, answered)
            await pilot.press("y")
            await wait_for(pilot, lambda: not app.is_running, what="the quit")
        assert app.quit_note is None and home.memory.read("user").entries == ["User drinks tea."]
        assert not any(title == "Review not done" for title, _ in await said_at_start(home, tmp_path))


async def test_quitting_while_a_scenario_s_review_runs_asks_about_it_too(demo_root, tmp_path):
    """A review a scenario started (ctrl+g: its sessions are the scenario's, not the screen's) was dropped
    at quit with no question and no word, its write lost: here the demo's first review, whose write of
    the user's name waits for USER.md's lock, which another process holds. Now the quit asks about it as
    about any other, and y says it was dropped."""
    from engine.runner.review import dropped_note

    home = open_home(demo_root)
    lock = home.memories_dir / "USER.md.lock"
    before = home.memory.read("user").entries
    holder = holding_flock(lock)
    app = make_app(home, tmp_path)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await scenario_waiting(pilot, "demo", lock)
            reviewed = app.running_session
            await pilot.press("ctrl+q")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
            assert reviewed in app.screen.question
            await pilot.press("y")
            await wait_for(pilot, lambda: not app.is_running, timeout=10, what="the quit")
        assert app.quit_note == dropped_note([reviewed])
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
        home.close()
    assert open_home(demo_root).memory.read("user").entries == before


async def test_quit_when_done_waits_for_a_turn_sent_meanwhile(home, tmp_path):
    """w to the question, then a message sent on Run while the review ran: when the review landed the
    app quit by itself in the middle of that turn, its answer and its own review never shown (a "review
    not queued" log line on the terminal after). Now the wait lasts until that turn is over too."""
    from engine.runner import background

    app = make_app(home, tmp_path)
    with slow_review(home) as (endpoint, answered):
        turn_answered = threading.Event()
        endpoint.holds[2] = turn_answered  # the second turn's model call waits until the test lets it
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await asked_about_review(pilot, endpoint)
            await pilot.press("w")
            await wait_for(pilot, lambda: "then quit" in app.review_status, what="the wait in the header")
            await pilot.press(*"I like sencha", "enter")
            await wait_for(pilot, lambda: len(endpoint.requests) == 3, what="the second turn's model call")
            answered.set()
            await wait_for(pilot, lambda: not background.under_way(home), what="the first review's end")
            await three_polls(pilot)  # (several looks of the wait)
            assert app.is_running and screen.running
            endpoint.answer("Noted again.")
            endpoint.answer("Nothing to save.")  # (the second turn's review)
            turn_answered.set()
            await wait_for(pilot, lambda: not app.is_running, timeout=10, what="the quit once all is done")
        answers = [m.content for m in home.archive.messages(screen.session_id) if m.role == "assistant"]
        assert answers[-1] == "Noted again."
        assert len(endpoint.requests) == 5 and home.memory.read("user").entries == ["User drinks tea."]


async def test_quit_when_done_says_at_exit_that_the_review_failed(home, tmp_path):
    """w to the question, then the review's model call failed: the app quit by itself at once, its notice
    of the failure gone with it, and the terminal said nothing, as if the review had landed. Now the exit
    says it failed, and why."""
    from engine.runner.review import failed_note

    app = make_app(home, tmp_path)
    with slow_review(home) as (endpoint, answered):
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await asked_about_review(pilot, endpoint)
            endpoint.replies[:] = []
            endpoint.fail(400, "model m is not loaded")
            await pilot.press("w")
            await wait_for(pilot, lambda: "then quit" in app.review_status, what="the wait in the header")
            answered.set()
            await wait_for(pilot, lambda: not app.is_running, timeout=10, what="the quit once the review ended")
        error = "The model endpoint answered 400: model m is not loaded"
        assert app.quit_note == failed_note(screen.session_id, error)
        assert "failed: The model endpoint answered 400: model m is not loaded. Nothing" in app.quit_note
        assert home.memory.read("user").entries == []


async def test_quit_when_done_waits_for_the_review_then_quits_by_itself(home, tmp_path):
    """n to the review question left the user watching for its end to press ctrl+q again. w now stays
    until the review has landed, says so in the header, and quits by itself: nothing is dropped."""
    app = make_app(home, tmp_path)
    with slow_review(home) as (endpoint, answered):
        async with app.run_test(size=(80, 24)) as pilot:
            await asked_about_review(pilot, endpoint)
            await pilot.press("w")
            await wait_for(pilot, lambda: "then quit" in app.review_status, what="the wait in the header")
            said = ("Quit when done", "The workbench quits once the background review is done. ctrl+q asks again.")
            await wait_for(pilot, lambda: said in [(n.title, n.message) for n in app._notifications], what="its notice")
            assert app.is_running
            answered.set()
            await wait_for(pilot, lambda: not app.is_running, timeout=10, what="the quit once reviewed")
        assert app.quit_note is None and home.memory.read("user").entries == ["User drinks tea."]


async def test_quit_when_done_waits_on_the_reviews_end_not_on_a_timer(home, tmp_path):
    """The wait looked every 0.2 s whether the reviews were done, for as long as a model took. It now looks
    when a review's thread lets go of it (its ``review_settled`` event) or a Run turn ends: no timer."""
    app = make_app(home, tmp_path)
    with slow_review(home) as (endpoint, answered):
        async with app.run_test(size=(80, 24)) as pilot:
            await asked_about_review(pilot, endpoint)
            timers: list[tuple] = []
            every = app.set_interval
            app.set_interval = lambda *args, **kwargs: timers.append(args) or every(*args, **kwargs)
            await pilot.press("w")
            await wait_for(pilot, lambda: "then quit" in app.review_status, what="the wait in the header")
            assert app.is_running
            answered.set()
            await wait_for(pilot, lambda: not app.is_running, timeout=10, what="the quit once reviewed")
        assert timers == [] and app.quit_note is None and home.memory.read("user").entries == ["User drinks tea."]


async def test_ctrl_q_during_the_wait_asks_again_and_n_ends_the_wait(home, tmp_path):
    """The wait w chose is the user's to take back: ctrl+q asks again, and n stays for good."""
    app = make_app(home, tmp_path)
    with slow_review(home) as (endpoint, answered):
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await asked_again(pilot, endpoint)
            session = screen.agent.agent
            await pilot.press("n")
            header = screen.query_one(WorkbenchHeader)
            await wait_for(pilot, lambda: header.review == "reviewing\u2026", what="the wait's words gone")
            answered.set()
            await wait_for(pilot, lambda: not session.reviewing, what="the review's end")
            await three_polls(pilot)  # the wait w began would have quit by then
            assert app.is_running and home.memory.read("user").entries == ["User drinks tea."]


async def asked_again(pilot, endpoint) -> RunScreen:
    """``asked_about_review``, w (the header says the wait), then ctrl+q: returns once it asks again."""
    screen = await asked_about_review(pilot, endpoint)
    await pilot.press("w")
    header = screen.query_one(WorkbenchHeader)
    await wait_for(pilot, lambda: header.review == "reviewing\u2026, then quit (ctrl+q: ask)", what="the wait")
    await pilot.press("ctrl+q")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ConfirmDialog), what="the question again")
    return screen


async def review_lands(pilot, screen: RunScreen, answered: threading.Event) -> None:
    """The model answers the review held by ``slow_review``: returns once the review has ended."""
    answered.set()
    await wait_for(pilot, lambda: not screen.agent.agent.reviewing, what="the review's end")


LOOK_S = 0.2  # how often the "Quit when done" wait used to look whether the reviews were done


async def three_polls(pilot) -> None:
    """Three of the old wait's looks' worth of the app's own timers, in turn (or until the app quits)."""
    polls: list[int] = []
    pilot.app.set_interval(LOOK_S, lambda: polls.append(1))
    await wait_for(pilot, lambda: len(polls) >= 3 or not pilot.app.is_running, what="three polls' time")


@pytest.mark.parametrize("answer", ["y", "w", "n"])
async def test_a_review_ending_while_the_quit_asks_again_leaves_the_question_to_the_user(home, tmp_path, answer):
    """During a "Quit when done" wait ctrl+q asks again; when the review ended while that question was
    open, the wait's poll quit the app under it. Now the question stays, a notice says the review is
    done, and the answer decides: y or w quits (nothing dropped, nothing said dropped), n stays."""
    app = make_app(home, tmp_path)
    with slow_review(home) as (endpoint, answered):
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await asked_again(pilot, endpoint)
            await review_lands(pilot, screen, answered)
            await three_polls(pilot)  # the wait would have quit by then
            assert app.is_running and isinstance(app.screen, ConfirmDialog)
            said = ("Quit when done", "The background review is done. y or w quits now; n stays.")
            assert said in [(n.title, n.message) for n in app._notifications]
            await pilot.press(answer)
            if answer == "n":
                await settle(pilot)
                assert app.is_running and not isinstance(app.screen, ConfirmDialog)
                assert "then quit" not in app.review_status
                assert said not in [(n.title, n.message) for n in app._notifications]
            else:
                await wait_for(pilot, lambda: not app.is_running, timeout=10, what="the quit")
        assert app.quit_note is None and home.memory.read("user").entries == ["User drinks tea."]


async def test_the_reopened_title_shows_a_hostile_end_reason_as_symbols(home, tmp_path):
    """The end reason is state.db's text (Hermes or anyone writes it): the Run title put it raw, an escape
    sequence and a bidi override included."""
    reason = "user_exit\x1b[31m\u202eevil"
    home.archive.create_session("s-ended", source="cli", title="Earlier")
    home.archive.append_messages("s-ended", [{"role": "user", "content": "hi"}])
    assert home.archive.end_session("s-ended", reason)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_run(pilot)
        await resumed(pilot, screen, "s-ended")
        title = str(screen.query_one(Transcript).border_title)
        assert title == f"Session s-ended (reopened here: it had ended ({visible(reason)}))"


async def test_the_exit_line_shows_control_characters_and_bidi_as_symbols(home, tmp_path, capsys):
    """The line a quit prints once the terminal is back (``quit_note``) may name a session state.db
    holds: Textual prints it as is, so an escape sequence in it drove the terminal."""
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.quit_note = "The background review of session s-\x1b]0;PWNED\x07\u202e was stopped at quit."
        await pilot.press("ctrl+q")
    err = capsys.readouterr().err
    assert "The background review of session s-" in err, err
    assert "\x1b" not in err and "\u202e" not in err and "\x07" not in err
