"""The soak (tests/soak.py) at a size the suite can afford: about 100 turns, with
kills, edits, approvals and rejections running alongside, then the full audit."""

from engine import open_home
from engine.tools import ToolContext
from tests.soak import audit, soak


def test_a_small_soak_leaves_the_home_whole(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CONFIG_DIR", str(tmp_path / "config"))
    result = soak(100, kill_share=0.2, seed=3, home=tmp_path / "home")
    stats, audit = result["stats"], result["audit"]
    assert stats["turns"] >= 100 and stats["failed_runs"] == 0
    assert stats["approve"] + stats["reject"] > 0 and stats["edits"] > 0
    problems = audit.pop("doctor problems")
    assert audit.pop("doctor ok") is True and problems == [], problems
    assert audit.pop("workbench.db integrity") == "ok" and audit.pop("state.db integrity") == "ok"
    assert audit.pop("messages") > 0
    assert audit == {key: 0 for key in audit}, audit


def test_the_audit_sees_a_memory_file_that_differs_from_the_journal(tmp_path, monkeypatch):
    """The audit must be able to fail: an entry appended behind the journal's back is a finding."""
    monkeypatch.setenv("WORKBENCH_CONFIG_DIR", str(tmp_path / "config"))
    home = open_home(tmp_path / "home")
    home.archive.create_session("s")  # the audit reads state.db too
    home.memory.add("memory", "The staging cluster is k8s-7.", ToolContext(actor="user"))
    home.close()
    assert audit(tmp_path / "home")["MEMORY.md differs from its last journaled change"] == 0
    memory = tmp_path / "home" / "memories" / "MEMORY.md"
    memory.write_bytes(memory.read_bytes() + "\n§\nSneaked in.".encode())
    assert audit(tmp_path / "home")["MEMORY.md differs from its last journaled change"] == 1
