"""The local provider's facts are on the timeline, with their source, and revert through it."""

from __future__ import annotations

from engine.providers.facts import FactStore
from engine.providers.local import LocalProvider
from engine.timeline import Timeline


def _fact_rows(home):
    return [row for row in Timeline(home).page() if row.subsystem == "providers"]


def test_an_agent_fact_is_a_timeline_row_with_its_message_and_reverts(home):
    home.archive.create_session("s1", source="cli")
    message = home.archive.append_message("s1", "assistant", "noting it")
    provider = LocalProvider(home)
    provider.initialize("s1")
    added = provider.handle_tool_call(
        "fact_add", {"content": "The VPN gateway is vpn-2.internal"}, session_id="s1", message_id=message
    )
    assert added["success"]
    [row] = _fact_rows(home)
    assert (row.actor, row.action, row.session_id, row.message_id) == ("agent", "fact_add", "s1", message)
    assert row.summary == f"local fact {added['id']} + 'The VPN gateway is vpn-2.internal'"

    outcome = Timeline(home).revert(row.id)
    assert outcome["success"], outcome
    assert FactStore(home).all() == []
    undo = _fact_rows(home)[0]  # the revert is on the timeline too, by the user, and can itself be reverted
    assert (undo.actor, undo.action) == ("user", "fact_forget")
    assert Timeline(home).revert(undo.id)["success"]
    assert [f.content for f in FactStore(home).all()] == ["The VPN gateway is vpn-2.internal"]


def test_a_merge_reverts_to_the_old_wording_and_a_changed_fact_is_refused(home):
    store = FactStore(home)
    first = store.add("Deploys go out on Thursdays")
    merged = store.add("Deploys go out on Thursdays after the QA sign-off")
    assert merged["merged_into"] == first["id"]
    merge_row = next(r for r in _fact_rows(home) if r.action == "fact_merge")
    preview = Timeline(home).preview(merge_row.id)
    assert preview["changes"][0]["undo"] == f"restore fact {first['id']} to 'Deploys go out on Thursdays'"
    assert Timeline(home).revert(merge_row.id)["success"]
    assert [f.content for f in store.all()] == ["Deploys go out on Thursdays"]

    add_row = next(r for r in _fact_rows(home) if r.action == "fact_add")
    store.reword(first["id"], "Deploys go out on Thursdays", "Deploys go out on Fridays")
    refused = Timeline(home).revert(add_row.id)
    assert not refused["success"] and "has changed since" in refused["refused"][0]["error"]
    assert [f.content for f in store.all()] == ["Deploys go out on Fridays"]


def test_a_failed_fact_write_leaves_no_journal_row(home):
    store = FactStore(home)
    store.add("One fact")
    try:
        store.add("x" * 10_000)
    except Exception as exc:  # refused before anything is written
        assert "at most" in str(exc)
    assert [r.action for r in _fact_rows(home)] == ["fact_add"]
