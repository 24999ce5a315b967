"""One similarity rule for near-duplicates and closest entries, shared by every skin."""

from engine.memory.similar import closest, near_duplicates, score
from engine.tools import ToolContext


def test_near_duplicates_score_exact_and_near_and_skip_what_the_proposal_replaces():
    existing = ["Deploys run on Fridays at noon", "The API listens on port 8080"]
    found = near_duplicates(["Deploys run on Fridays at noon.", "The API listens on port 8080"], existing, 90)
    assert [(d["existing"], d["exact"]) for d in found] == [
        ("Deploys run on Fridays at noon", False),
        ("The API listens on port 8080", True),
    ]
    assert found[1]["score"] == 100.0 and 90 <= found[0]["score"] < 100
    assert near_duplicates(["The API listens on port 8080"], existing, 90, ignore=existing) == []
    assert near_duplicates(["Something else entirely"], existing, 90) == []


def test_closest_ranks_by_the_same_score_and_drops_what_is_not_close():
    entries = ["Deploys run on Mondays", "Deploys run on Fridays at noon", "The API listens on port 8080"]
    assert closest("Deploys run on Fridays at noon.", entries, n=2) == entries[1::-1]
    assert closest("qqqq", entries) == [] and closest("x", []) == []


def test_a_text_inside_a_longer_one_or_in_another_order_counts_as_alike():
    assert score("User likes tea", "User likes tea and coffee") == 100.0
    assert score("on Fridays deploys run", "deploys run on Fridays") == 100.0
    assert score("Port 8080", "Port 9090") < 90


def test_the_approval_preview_flags_by_the_configured_threshold(home):
    home.config_path.write_text("memory:\n  write_approval: true\n", encoding="utf-8")
    home.reload_config()
    home.memory.add("memory", "Deploys run on Fridays at noon")
    staged = home.memory.add("memory", "Deploys run on Fridays at noon.", ToolContext(actor="agent"))
    preview = home.approvals.preview(staged["pending_id"])
    assert [d["existing"] for d in preview["duplicates"]] == ["Deploys run on Fridays at noon"]
    assert home.memory.duplicate_threshold() == 90.0
    home.config_path.write_text("memory:\n  write_approval: true\napprovals:\n  duplicate_threshold: 99.5\n")
    home.reload_config()
    assert home.approvals.preview(staged["pending_id"])["duplicates"] == []


def test_the_agent_path_merges_facts_by_the_same_rule_and_setting(home):
    from engine.providers.facts import FactStore

    facts = FactStore(home)
    first = facts.add("The billing service deploys from the release branch")
    assert facts.add("the billing service deploys from the release branch on Tuesdays")["merged_into"] == first["id"]
    home.config_path.write_text("approvals:\n  duplicate_threshold: 99.5\n", encoding="utf-8")
    home.reload_config()
    assert "merged_into" not in facts.add("The billing service deploys from the release branch, then tags it")
