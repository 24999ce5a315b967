"""The built-in `local` provider: recall from earlier sessions in state.db, fenced, never stored."""

from __future__ import annotations

from engine.models import OfflineModel
from engine.providers import LocalRecallProvider, load_configured_provider
from engine.runner import AgentSession
from tests.test_runner_session import Recording


def _earlier_session(home) -> str:
    earlier = AgentSession(home, OfflineModel(), title="Kafka consumer lag")
    earlier.run_turn("the kafka consumer lag alert fires when partitions rebalance")
    earlier.end()
    return earlier.id


def test_config_selects_the_local_provider(home):
    assert load_configured_provider(home) is None
    home.config_path.write_text("memory:\n  provider: local\n", encoding="utf-8")
    home.reload_config()
    assert isinstance(load_configured_provider(home), LocalRecallProvider)
    home.config_path.write_text("memory:\n  provider: mem0-cloud\n", encoding="utf-8")
    home.reload_config()
    assert load_configured_provider(home) is None  # unknown: warned about, skipped


def test_local_recall_reaches_the_model_not_the_archive(home):
    earlier_id = _earlier_session(home)
    home.config_path.write_text("memory:\n  provider: local\n", encoding="utf-8")
    home.reload_config()
    model = Recording(OfflineModel())
    session = AgentSession(home, model)
    result = session.run_turn("why does the consumer lag alert keep firing?")
    sent = model.calls[0][-1]["content"]
    assert "## Recalled from earlier sessions" in sent and "Kafka consumer lag" in sent
    assert result.assistant.startswith("From our earlier sessions:")
    stored = home.archive.messages(session.id)[0].text
    assert stored == "why does the consumer lag alert keep firing?"
    model.calls.clear()
    session.run_turn("why does the consumer lag alert keep firing?")  # its own session is never recalled
    assert model.calls[0][-1]["content"].count("Kafka consumer lag") == 1
    assert "recall" in session.tools.names()
    found = session.manager.handle_tool_call("recall", {"query": "rebalance"})
    assert found["success"] and [r["session_id"] for r in found["results"]] == [earlier_id]
    assert session.manager.handle_tool_call("recall", {"query": " "})["success"] is False
