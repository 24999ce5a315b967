"""The built-in `local` provider: recall from earlier sessions in state.db, fenced, never stored."""

from __future__ import annotations

import pytest

from engine.errors import WorkbenchError
from engine.models import OfflineModel
from engine.providers import LocalProvider, configured_providers
from engine.runner import AgentSession
from engine.tools import ToolContext
from tests.test_runner_session import Recording


def _earlier_session(home) -> str:
    earlier = AgentSession(home, OfflineModel(), title="Kafka consumer lag")
    earlier.run_turn("the kafka consumer lag alert fires when partitions rebalance")
    earlier.end()
    return earlier.id


def test_config_selects_the_local_provider(home):
    warnings = []
    assert configured_providers(home, warnings) == [] and warnings == []
    home.config_path.write_text("memory:\n  provider: local\n", encoding="utf-8")
    home.reload_config()
    [chosen] = configured_providers(home, warnings)
    assert isinstance(chosen, LocalProvider) and warnings == []
    home.config_path.write_text("memory:\n  provider: mem0-cloud\n", encoding="utf-8")
    home.reload_config()
    assert configured_providers(home, warnings) == []  # unknown: warned about, skipped
    assert warnings == [
        "Unknown memory.provider 'mem0-cloud' (installed: local); continuing without one. "
        "See `workbench providers list`."
    ]


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
    session.close()


def test_the_local_fact_store_merges_near_duplicates_and_recalls_by_words(home):
    from engine.providers.facts import FactStore

    facts = FactStore(home)
    first = facts.add("The billing service deploys from the release branch")
    merged = facts.add("the billing service deploys from the release branch on Tuesdays")
    assert merged["merged_into"] == first["id"] and merged["content"].endswith("on Tuesdays")
    other = facts.add("Grafana dashboards live in the observability folder")
    assert [f.id for f in facts.all()] == [first["id"], other["id"]] and facts.all()[0].merged == 1
    assert [f.id for f in facts.search("when does billing deploy?")] == [first["id"]]
    assert facts.search("kubernetes") == []
    assert facts.forget(text="grafana dashboards folder")["removed"] == other["id"]
    with pytest.raises(WorkbenchError, match="No fact matches"):
        facts.forget(text="completely unrelated sentence about llamas")
    assert FactStore(home).all()[0].content == merged["content"]  # another instance reads the same table


def test_local_provider_tools_and_mirrors_reach_the_facts_with_their_source(home, capsys):
    import json

    from engine.providers.facts import list_facts
    from workbench.cli import main

    home.config_path.write_text("memory:\n  provider: local\n", encoding="utf-8")
    home.reload_config()
    model = Recording(OfflineModel())
    session = AgentSession(home, model)
    assert {"fact_add", "fact_search", "fact_forget", "recall"} <= set(session.tools.names())
    session.run_turn("remember that the billing service deploys from the release branch")
    session.manager.flush_pending(5)
    [fact] = list_facts(home)
    assert (
        fact["content"] == "The billing service deploys from the release branch." and fact["origin"] == "memory:memory"
    )
    source = fact["source_message"]
    assert source["session_id"] == session.id and source["role"] == "assistant"
    added = session.tools.dispatch(
        "fact_add",
        {"content": "Invoices are numbered per year"},
        ToolContext(session_id=session.id, message_id=source["id"]),
    )
    assert added["success"] and list_facts(home)[1]["source_message"]["id"] == source["id"]
    model.calls.clear()
    session.run_turn("how are invoices numbered these days?")
    assert "## Facts kept by the local provider\n- Invoices are numbered per year" in model.calls[0][-1]["content"]
    assert session.tools.dispatch("fact_forget", {}, ToolContext())["success"] is False
    session.close()
    assert main(["--home", str(home.root), "providers", "facts", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["count"] == 2 and shown["facts"][0]["source_message"]["id"] == source["id"]


def test_providers_facts_shows_a_line_break_in_its_source_message_as_a_symbol(home, cli):
    """`providers facts` quoted a fact's source message with its line breaks folded into spaces (and cut at
    60 characters inside a word): a message of two lines read as one. It shows them as ⏎, as every preview does,
    and cuts before a word."""
    from engine.providers.facts import FactStore

    home.archive.create_session("s1", source="cli")
    said = "Invoices are numbered per year\nand reset each January; the prefix is the billing entity code"
    message = home.archive.append_message("s1", "user", said)
    FactStore(home).add("Invoices are numbered per year", session_id="s1", message_id=message, actor="user")
    home.close()
    out = cli("providers", "facts").stdout.splitlines()
    assert out[1] == f"      from #{message} user: Invoices are numbered per year⏎and reset each January; the…", out
