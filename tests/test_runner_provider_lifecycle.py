"""Providers through their whole lifecycle: hook order, the FIFO worker, bounded prefetch, plugins, CLI."""

from __future__ import annotations

import json
import threading

from engine.models import OfflineModel
from engine.providers import configured_providers, provider_listing
from engine.providers.base import MemoryProvider
from engine.runner import AgentSession
from tests.test_runner_compression import _chat, _squeeze
from tests.test_runner_session import Recording


def _config(home, text: str) -> None:
    home.config_path.write_text(text, encoding="utf-8")
    home.reload_config()


class Recorder(MemoryProvider):
    """Writes down every hook it hears, with the thread it ran on."""

    name = "recorder"

    def __init__(self):
        self.log: list[tuple] = []

    def _note(self, *entry):
        self.log.append((*entry, threading.current_thread().name))

    def initialize(self, session_id, **context):
        self._note("initialize", session_id)

    def prefetch(self, query, *, session_id=""):
        self._note("prefetch", query)
        return f"- recalled for {query}"

    def queue_prefetch(self, query, *, session_id=""):
        self._note("queue_prefetch", query)

    def sync_turn(self, user, assistant, *, session_id="", messages=None):
        self._note("sync_turn", user, len(messages or []))

    def on_memory_write(self, action, target, content, metadata):
        self._note("on_memory_write", action, content, metadata.get("write_origin"))

    def on_pre_compress(self, messages):
        self._note("on_pre_compress", len(messages))

    def on_session_end(self, messages):
        self._note("on_session_end", len(messages))

    def on_session_switch(self, new_session_id, *, parent_session_id="", reason=""):
        self._note("on_session_switch", reason)

    def shutdown(self):
        self._note("shutdown")

    def hooks(self):
        return [entry[0] for entry in self.log]


def test_every_hook_fires_at_its_moment_in_order(home):
    provider = Recorder()
    session = AgentSession(home, OfflineModel(), provider=provider)
    first_id = session.id
    session.run_turn("remember that the staging cluster is in Frankfurt")
    _chat(session, 3)
    _squeeze(home, session)
    session.run_turn("what did we discuss about invoices?")  # compressed into a child first
    _config(home, "")
    child_id = session.switch_session()  # /new
    session.run_turn("what did we discuss about the staging cluster?")
    session.switch_session(child_id)  # /resume
    session.end()
    hooks = provider.hooks()
    # The FIFO worker's hooks keep turn order; the next turn's prefetch may come before the
    # worker catches up (a turn never waits for it), so order is checked per thread.
    on_worker = [entry for entry in provider.log if entry[-1] == "mem-sync"]
    order = [entry[0] for entry in on_worker]
    assert hooks[:2] == ["initialize", "prefetch"]
    assert order[:3] == ["on_memory_write", "sync_turn", "queue_prefetch"]
    assert on_worker[0][1:4] == ("add", "The staging cluster is in Frankfurt.", "foreground")
    assert on_worker[2][1] == "remember that the staging cluster is in Frankfurt"
    compress_at = order.index("on_pre_compress")
    assert order[compress_at : compress_at + 3] == ["on_pre_compress", "on_session_end", "on_session_switch"]
    switches = [entry[1] for entry in provider.log if entry[0] == "on_session_switch"]
    assert switches == ["compression", "new_session", "resume"]
    assert hooks[-2:] == ["on_session_end", "shutdown"] and hooks.count("initialize") == 1
    # after-turn hooks ran on the one worker thread, in turn order; prefetch ran on its own bounded thread
    worker = {
        entry[-1]
        for entry in provider.log
        if entry[0] in ("sync_turn", "queue_prefetch", "on_memory_write", "on_pre_compress", "on_session_switch")
    }
    assert worker == {"mem-sync"}
    synced = [entry[1] for entry in provider.log if entry[0] == "sync_turn"]
    assert synced[0].startswith("remember that") and synced[-1] == "what did we discuss about the staging cluster?"
    assert first_id != child_id


class Slow(Recorder):
    """sync_turn blocks until released; prefetch blocks while ``hang`` is set."""

    def __init__(self):
        super().__init__()
        self.release, self.hang, self.synced = threading.Event(), threading.Event(), []

    def sync_turn(self, user, assistant, *, session_id="", messages=None):
        self.release.wait(10)
        self.synced.append(user)

    def prefetch(self, query, *, session_id=""):
        if self.hang.is_set():
            self.release.wait(10)
        return super().prefetch(query, session_id=session_id)


def test_sync_runs_in_turn_order_and_never_blocks_the_next_turn(home):
    provider = Slow()
    session = AgentSession(home, OfflineModel(), provider=provider)
    turns = ["first question about tea", "second question about coffee", "third question about water"]
    for text in turns:  # each turn returns while the first sync_turn is still blocked
        assert session.run_turn(text).status == "done"
    assert provider.synced == [] and session.manager.flush_pending(0.01) is False
    provider.release.set()
    assert session.manager.flush_pending(10) is True
    assert provider.synced == turns
    session.close()


def test_prefetch_times_out_and_the_turn_goes_on_without_it(home):
    _config(home, "memory:\n  provider_timeout: 0.05\n")
    provider, seen, model = Slow(), [], Recording(OfflineModel())
    provider.hang.set()
    session = AgentSession(home, model, provider=provider, on_event=seen.append)
    result = session.run_turn("hello there, what about the tea?")
    assert result.status == "done"
    assert "memory-context" not in model.calls[0][-1]["content"]  # failed open: no recall this turn
    warnings = [e.data["message"] for e in seen if e.kind == "warning"]
    assert len(warnings) == 1 and "prefetch timed out after 0.05s" in warnings[0]
    provider.release.set()
    session.close()


class Broken(Recorder):
    def sync_turn(self, user, assistant, *, session_id="", messages=None):
        raise RuntimeError("backend unreachable")


def test_a_raising_provider_costs_a_warning_not_a_turn(home):
    seen = []
    session = AgentSession(home, OfflineModel(), provider=Broken(), on_event=seen.append)
    assert session.run_turn("remember that the cache is warm").status == "done"
    assert session.manager.flush_pending(5)
    assert [e.data["message"] for e in seen if e.kind == "warning"] == [
        "Memory provider 'recorder' failed in sync_turn: RuntimeError: backend unreachable"
    ]
    assert session.run_turn("and the next turn still runs").status == "done"
    session.close()


def test_staged_writes_are_not_mirrored_committed_ones_are(home):
    _config(home, "memory:\n  write_approval: true\n")
    provider = Recorder()
    session = AgentSession(home, OfflineModel(), provider=provider)
    session.run_turn("remember that the VPN rotates keys monthly")
    assert home.approvals.count("memory") == 1
    _config(home, "")
    session.run_turn("remember that the VPN is WireGuard")
    session.close()
    assert [entry[2] for entry in provider.log if entry[0] == "on_memory_write"] == ["The VPN is WireGuard."]


PLUGIN = """
from engine.providers.base import MemoryProvider


class NotesProvider(MemoryProvider):
    name = "notes"

    def __init__(self, home):
        self.home = home

    def prefetch(self, query, *, session_id=""):
        return "- notes plugin recall"


class JournalProvider(NotesProvider):
    name = "journal"
"""


def _install_plugin(tmp_path, monkeypatch) -> None:
    """A distribution on a temp path, found by importlib.metadata as an installed one would be."""
    site = tmp_path / "site"
    info = site / "wb_notes_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "wb_notes_plugin.py").write_text(PLUGIN, encoding="utf-8")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: wb-notes-plugin\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[memory_workbench.providers]\nnotes = wb_notes_plugin:NotesProvider\n"
        "journal = wb_notes_plugin:JournalProvider\n"
        "local = wb_notes_plugin:NotesProvider\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(site))


def test_entry_point_providers_are_discovered_and_a_second_one_refused(home, tmp_path, monkeypatch, capsys):
    from workbench.cli import main

    _install_plugin(tmp_path, monkeypatch)
    _config(home, "memory:\n  provider: [notes, journal]\n")
    warnings = []
    [provider] = configured_providers(home, warnings)
    assert type(provider).__name__ == "NotesProvider" and provider.home is home
    assert warnings[0] == (
        "Refused memory provider 'journal': 'notes' is already active, and only one external "
        "memory provider can run at a time. Pick one with memory.provider in config.yaml."
    )
    assert "the name 'local' is already taken by built-in" in warnings[1]  # a built-in name wins
    seen, model = [], Recording(OfflineModel())
    session = AgentSession(home, model, on_event=seen.append)
    session.run_turn("what about the notes?")
    assert "- notes plugin recall" in model.calls[0][-1]["content"]
    assert any("Refused memory provider 'journal'" in e.data["message"] for e in seen if e.kind == "warning")
    session.close()
    assert main(["--home", str(home.root), "providers", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["providers"]
    assert listed == provider_listing(home)
    assert {(p["name"], p["active"]) for p in listed} == {("local", False), ("notes", True), ("journal", False)}
    assert [p["source"] for p in listed if p["name"] == "notes"] == [
        "entry point wb_notes_plugin:NotesProvider (wb-notes-plugin)"
    ]
    assert listed[0] == {"name": "local", "active": False, "source": "built-in"}


class HangingStart(Recorder):
    def __init__(self):
        super().__init__()
        self.release = threading.Event()

    def initialize(self, session_id, **context):
        self.release.wait(10)


def test_a_provider_that_hangs_on_start_costs_a_warning(home):
    _config(home, "memory:\n  provider_timeout: 0.05\n")
    provider, seen = HangingStart(), []
    session = AgentSession(home, OfflineModel(), provider=provider, on_event=seen.append)
    assert [e.data["message"] for e in seen if e.kind == "warning"] == [
        "Memory provider 'recorder' initialize did not return within 0.05s; the session goes on."
    ]
    assert session.run_turn("hello").status == "done"
    provider.release.set()
    session.close()
