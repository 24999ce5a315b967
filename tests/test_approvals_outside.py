"""Proposals Hermes staged and then approved or rejected itself, told apart from the journal.

Hermes applies an approved memory write (stripped, as its store does) and only then drops
the record; a rejection just drops it. The workbench sees a record gone with no decision of
its own and must journal what happened: ``approve`` when an outside edit since staging is
its change, ``reject`` when memory shows none of it, ``close`` when it cannot tell. A skill
proposal is read from the library the same way: its file as proposed, or untouched since.
"""

from __future__ import annotations

import json
import os
import shutil
import time

import pytest

from engine.approvals.outside import citing_approvals
from engine.memory.format import serialize
from engine.skills.manage import skill_manage_tool
from engine.timeline import Timeline
from engine.tools import ToolContext
from tests.hermes_support import hermes_record

USER = ToolContext(actor="user")


def _seed(home, *entries):
    for entry in entries:
        assert home.memory.add("memory", entry, USER)["success"]


def _stage(home, clock, pid, payload):
    hermes_record(home, pid, payload, created_at=clock.now() - 60)
    home.approvals.catch_up()
    [row] = home.journal.query(subsystem="approvals", target=pid)
    assert row.action == "stage"


def _hermes_decides(home, pid, entries=None):
    """What Hermes's /memory approve (``entries``: the file it then holds) or reject does on disk."""
    if entries is not None:
        home.memory.path("memory").write_text(serialize(entries), encoding="utf-8")
    (home.pending_dir / "memory" / f"{pid}.json").unlink()


def _decision(home, pid):
    home.approvals.catch_up()
    newest, *_ = home.journal.query(subsystem="approvals", target=pid)
    return newest.action, newest.actor, newest.detail.get("applied_rows"), newest.detail["why"]


def _outside_row(home, text):
    [row] = [r for r in home.journal.query(subsystem="memory", actor="external") if text in (r.after, r.before)]
    return row.id


def test_an_approved_add_is_told_from_its_stripped_entry(home, clock):
    _seed(home, "User likes tea")
    _stage(home, clock, "0000aa01", {"action": "add", "target": "memory", "content": "  Kettle descales monthly \n"})
    _hermes_decides(home, "0000aa01", ["User likes tea", "Kettle descales monthly"])
    action, actor, cited, why = _decision(home, "0000aa01")
    assert (action, actor) == ("approve", "external")
    assert cited == [_outside_row(home, "Kettle descales monthly")] and f"row {cited[0]}" in why
    approval = home.journal.query(subsystem="approvals", target="0000aa01", limit=1)[0]
    [refused] = Timeline(home).preview(str(approval.id))["refused"]
    assert refused["error"].endswith(f"(revert the change it led to: row {cited[0]})")  # the row to revert


def test_a_rejection_beside_other_outside_writes_is_a_rejection(home, clock):
    _seed(home, "User likes tea")
    _stage(home, clock, "0000aa02", {"action": "add", "target": "memory", "content": "Kettle descales monthly"})
    _hermes_decides(home, "0000aa02", ["User likes tea", "Cups live in the left cupboard"])  # the agent wrote this
    assert _decision(home, "0000aa02")[:3] == ("reject", "external", None)
    # how it was told is on the Timeline row (its detail line, `--json`), not only in the journal
    [row] = [r for r in Timeline(home).page(subsystem="approvals") if r.action == "reject"]
    assert row.why == "it left the queue outside the workbench without its change reaching memory"
    assert row.to_dict()["why"] == row.why
    assert all(r.why is None for r in Timeline(home).page() if r.action != "reject")


def test_a_proposal_memory_already_held_cannot_be_told(home, clock):
    """Hermes accepts a duplicate add as a no-op: approved or rejected, the file is the same."""
    _seed(home, "User likes tea", "Kettle descales monthly")
    _stage(home, clock, "0000aa03", {"action": "add", "target": "memory", "content": "Kettle descales monthly"})
    _hermes_decides(home, "0000aa03")
    action, _, cited, why = _decision(home, "0000aa03")
    assert (action, cited) == ("close", None) and "no outside edit since wrote it" in why
    closed = home.journal.query(subsystem="approvals", target="0000aa03", limit=1)[0]
    [refused] = Timeline(home).preview(str(closed.id))["refused"]
    assert refused["error"].endswith("with no change seen: nothing to revert")  # not "the change it led to"


def test_two_identical_proposals_approved_get_one_edit_between_them(home, clock):
    _seed(home, "User likes tea")
    for pid in ("0000aa04", "0000aa05"):
        _stage(home, clock, pid, {"action": "add", "target": "memory", "content": "Kettle descales monthly"})
    _hermes_decides(home, "0000aa04", ["User likes tea", "Kettle descales monthly"])
    _hermes_decides(home, "0000aa05")  # the second is a duplicate: Hermes writes nothing
    home.approvals.catch_up()
    first, second = (_decision(home, pid) for pid in ("0000aa04", "0000aa05"))
    assert first[:3] == ("approve", "external", [_outside_row(home, "Kettle descales monthly")])
    assert second[:3] == ("close", "external", None)


def test_an_approved_entry_edited_before_anyone_looked_is_not_called_rejected(home, clock):
    _seed(home, "User likes tea")
    _stage(home, clock, "0000aa06", {"action": "add", "target": "memory", "content": "Kettle descales monthly"})
    _hermes_decides(home, "0000aa06", ["User likes tea", "Kettle descales monthly with vinegar"])
    action, _, _, why = _decision(home, "0000aa06")
    assert action == "close" and "edited outside since in a way close to it" in why


def test_removes_and_batches_are_told_apart_too(home, clock):
    _seed(home, "User likes tea", "Old laptop runs Debian 11", "Deploys on Fridays")
    _stage(home, clock, "0000aa07", {"action": "remove", "target": "memory", "old_text": " Debian "})
    _stage(home, clock, "0000aa08", {"action": "remove", "target": "memory", "old_text": "Fridays"})
    batch = {"action": "add", "content": "CI runs on GitHub Actions"}, {"action": "remove", "old_text": "tea"}
    _stage(home, clock, "0000aa09", {"action": "batch", "target": "memory", "operations": list(batch)})
    _hermes_decides(home, "0000aa07", ["User likes tea", "Deploys on Fridays"])
    _hermes_decides(home, "0000aa08")
    assert _decision(home, "0000aa07")[:3] == ("approve", "external", [_outside_row(home, "Old laptop runs Debian 11")])
    assert _decision(home, "0000aa08")[0] == "reject"
    _hermes_decides(home, "0000aa09", ["Deploys on Fridays", "CI runs on GitHub Actions"])
    action, _, cited, _ = _decision(home, "0000aa09")
    assert action == "approve" and cited == [
        _outside_row(home, "CI runs on GitHub Actions"),
        _outside_row(home, "User likes tea"),
    ]


def test_a_remove_rejected_while_hermes_rewrote_its_entry_is_not_called_approved(home, clock):
    """Hermes rewrote the entry a remove proposal hits (keeping its words) and then rejected the proposal:
    the rewrite was taken for the remove, so the rejection was journaled as an approval citing it."""
    _seed(home, "User likes tea", "Backups run nightly at 04:00 JST")
    _stage(home, clock, "0000aa0c", {"action": "remove", "target": "memory", "old_text": "Backups run"})
    _hermes_decides(home, "0000aa0c", ["User likes tea", "Backups run nightly at 05:00 JST"])
    action, _, cited, _ = _decision(home, "0000aa0c")
    assert action != "approve" and cited is None
    rewrite = _outside_row(home, "Backups run nightly at 05:00 JST")
    assert "proposed by" not in next(r.summary for r in Timeline(home).page() if r.id == rewrite)


def test_a_remove_rejected_after_hermes_rewrote_its_entry_past_pairing_is_not_called_approved(home, clock):
    """Hermes rewrote the entry a remove proposal hits into text too different to pair, journaled as a
    remove and an add in one edit, then rejected the proposal: the remove row was taken for it."""
    _seed(home, "User likes tea", "Backups run hourly at :15 via cron")
    _stage(home, clock, "0000aa0d", {"action": "remove", "target": "memory", "old_text": "Backups run hourly"})
    _hermes_decides(home, "0000aa0d", ["User likes tea", "Nightly backups moved to 03:00"])
    action, _, cited, _ = _decision(home, "0000aa0d")
    assert action != "approve" and cited is None
    # and a batch Hermes approved is still told from its edit of two rows
    _stage(
        home,
        clock,
        "0000aa0e",
        {
            "action": "batch",
            "target": "memory",
            "operations": [
                {"action": "add", "content": "Kettle descales monthly"},
                {"action": "remove", "old_text": "tea"},
            ],
        },
    )
    _hermes_decides(home, "0000aa0e", ["Nightly backups moved to 03:00", "Kettle descales monthly"])
    action, _, cited, _ = _decision(home, "0000aa0e")
    assert action == "approve" and len(cited) == 2


def test_an_outside_approval_names_the_edit_it_was_told_from_on_the_timeline(home, clock):
    _seed(home, "User likes tea")
    _stage(home, clock, "0000aa0a", {"action": "add", "target": "memory", "content": "Kettle descales monthly"})
    _hermes_decides(home, "0000aa0a", ["User likes tea", "Kettle descales monthly"])
    home.approvals.catch_up()
    edit = _outside_row(home, "Kettle descales monthly")
    approval = home.journal.query(subsystem="approvals", target="0000aa0a", limit=1)[0]
    assert citing_approvals(home.journal.connection()) == {edit: approval.id}


def test_a_failed_approval_does_not_hide_the_record_leaving_later(home, clock):
    """A refused approval of ours leaves the record pending; when Hermes then drops it, that is journaled."""
    _seed(home, "User likes tea")
    _stage(home, clock, "0000aa0b", {"action": "remove", "target": "memory", "old_text": "coffee"})
    assert not home.approvals.approve("0000aa0b")["success"]  # no entry holds "coffee"
    _hermes_decides(home, "0000aa0b")
    assert _decision(home, "0000aa0b")[:2] == ("close", "external")


def test_a_journal_row_damaged_by_hand_does_not_stop_the_others_being_settled(home, clock):
    _seed(home, "User likes tea")
    _stage(home, clock, "0000aa0c", {"action": "add", "target": "memory", "content": "Kettle descales monthly"})
    _stage(home, clock, "0000aa0d", {"action": "add", "target": "memory", "content": "Cups live left"})
    conn = home.journal.connection()
    with conn:  # a summary that is no text, and a payload that is no mapping
        conn.execute(
            "UPDATE journal SET detail = json_set(detail, '$.summary', json('{\"a\": 1}'), '$.payload', 42) "
            "WHERE target = '0000aa0c'"
        )
    _hermes_decides(home, "0000aa0c")
    _hermes_decides(home, "0000aa0d")
    assert _decision(home, "0000aa0c")[:2] == ("close", "external")
    assert _decision(home, "0000aa0d")[0] == "reject"


def test_a_decision_of_ours_made_while_catching_up_is_not_journaled_twice(home, clock, monkeypatch):
    """The workbench rejects a record Hermes staged between the catch-up's first look and its lock."""
    hermes_record(home, "0000aa0e", {"action": "add", "target": "memory", "content": "Kettle"}, created_at=clock.now())
    sourced = type(home.approvals)._sourced

    def decided_meanwhile(queue, record):
        monkeypatch.setattr(type(queue), "_sourced", sourced)
        queue.reject(record.id)
        return sourced(queue, record)

    monkeypatch.setattr(type(home.approvals), "_sourced", decided_meanwhile)
    home.approvals.catch_up()
    home.approvals.catch_up()
    rows = home.journal.query(subsystem="approvals", target="0000aa0e")
    assert [(r.action, r.actor) for r in rows] == [("reject", "user"), ("stage", "agent")]  # each once
    assert json.loads(json.dumps(rows[0].detail))["payload"]["content"] == "Kettle"


def test_a_listing_looks_up_each_hermes_proposal_once(home, clock, monkeypatch):
    """A proposal's staged and decided rows name the same call: state.db is read once for both."""
    import engine.approvals.sources as sources

    _seed(home, "User likes tea")
    _stage(home, clock, "0000aa0f", {"action": "add", "target": "memory", "content": "Kettle descales monthly"})
    _hermes_decides(home, "0000aa0f")
    home.approvals.catch_up()
    looked_up = []
    real = sources.staging_message
    monkeypatch.setattr(sources, "staging_message", lambda *args: looked_up.append(args[1:]) or real(*args))
    timeline = Timeline(home)
    rows = timeline.with_sources(timeline.page(subsystem="approvals"))
    assert [r.action for r in rows] == ["reject", "stage"]
    assert looked_up == [("memory", "0000aa0f")]


def test_a_record_approved_while_memory_was_caught_up_waits_for_its_evidence(home, clock, monkeypatch):
    """Hermes approving a second record between the memory catch-up and the folder lock: judged then,
    its edit was not journaled yet and memory already held its text, so it was closed for good."""
    _seed(home, "User likes tea")
    _stage(home, clock, "0000ab01", {"action": "add", "target": "memory", "content": "Kettle descales monthly"})
    _stage(home, clock, "0000ab02", {"action": "add", "target": "memory", "content": "Cups live left"})
    _hermes_decides(home, "0000ab01")  # rejected
    queue = home.approvals
    real = type(queue)._catch_up

    def and_meanwhile_hermes_approves(self, subsystem):
        real(self, subsystem)
        _hermes_decides(home, "0000ab02", ["User likes tea", "Cups live left"])

    monkeypatch.setattr(type(queue), "_catch_up", and_meanwhile_hermes_approves)
    queue.catch_up()
    assert [r.action for r in home.journal.query(subsystem="approvals", target="0000ab02")] == ["stage"]
    monkeypatch.setattr(type(queue), "_catch_up", real)
    assert _decision(home, "0000ab02")[0] == "approve"
    assert _decision(home, "0000ab01")[0] == "reject"


def test_a_proposal_rejected_here_restored_then_approved_in_hermes_names_its_proposer(home, clock):
    """The restore row (the user's) was read as the staging: the approval said 'proposed by Hermes user'."""
    _seed(home, "User likes tea")
    _stage(home, clock, "0000aa09", {"action": "add", "target": "memory", "content": "Kettle descales monthly"})
    assert home.approvals.reject("0000aa09")["success"]
    rejected = home.journal.query(subsystem="approvals", target="0000aa09", limit=1)[0]
    assert Timeline(home).revert(str(rejected.id))["success"]  # back in the queue
    _hermes_decides(home, "0000aa09", ["User likes tea", "Kettle descales monthly"])
    home.approvals.catch_up()
    newest = home.journal.query(subsystem="approvals", target="0000aa09", limit=1)[0]
    assert (newest.action, newest.detail["proposed_by"]) == ("approve", "Hermes agent")


@pytest.mark.parametrize("decide", ["approve", "reject"])
def test_a_hermes_proposal_decided_before_any_catch_up_keeps_its_stage_row(home, clock, decide):
    """Staged by Hermes and decided here before anything caught up: the Timeline showed the decision
    on a proposal it never saw staged, as the record was gone by the next catch-up."""
    hermes_record(home, "0000ac01", {"action": "add", "target": "memory", "content": "Kettle descales monthly"})
    assert getattr(home.approvals, decide)("0000ac01")["success"]
    home.approvals.catch_up()
    rows = home.journal.query(subsystem="approvals", target="0000ac01", oldest_first=True)
    assert [(r.action, r.actor, r.detail.get("outside")) for r in rows] == [
        ("stage", "agent", True),
        (decide, "user", None),
    ]


def test_a_decision_made_outside_after_a_restore_names_no_row_undone(home, clock):
    """Hermes rejecting a proposal the user had rejected and put back copied the restore row's
    detail, its undo_of with it: the Timeline marked the first rejection undone by Hermes's."""
    _seed(home, "User likes tea")
    _stage(home, clock, "0000aa09", {"action": "add", "target": "memory", "content": "Kettle descales monthly"})
    home.approvals.reject("0000aa09")
    home.approvals.restore("0000aa09")
    reject, restore = (
        home.journal.query(subsystem="approvals", target="0000aa09", actions=(a,))[0] for a in ("reject", "restore")
    )
    _hermes_decides(home, "0000aa09")
    action, actor, _, _ = _decision(home, "0000aa09")
    [outside] = home.journal.query(subsystem="approvals", target="0000aa09", limit=1)
    assert (action, actor) == ("reject", "external") and "undo_of" not in outside.detail
    marks = {row.id: row.reverted_by for row in Timeline(home).page(target="0000aa09")}
    assert marks[reject.id] == restore.id and marks[outside.id] is None


BREW = "---\nname: brew\ndescription: How to brew tea\n---\n\nBoil water.\nSteep for 3 minutes.\n"


def _decide_skills_outside(home, proposals: dict[str, dict], staged_at: float) -> dict[str, tuple[str, str]]:
    """Hermes staged ``proposals`` at ``staged_at`` and decided them: the (action, why) journaled for each."""
    for pid, payload in proposals.items():
        hermes_record(home, pid, payload, created_at=staged_at, subsystem="skills")
    home.approvals.catch_up()  # journaled as staged
    for pid in proposals:
        (home.pending_dir / "skills" / f"{pid}.json").unlink()
    home.approvals.catch_up()
    rows = home.journal.query(subsystem="approvals", actions=("approve", "reject", "close"), limit=100)
    return {row.target: (row.action, row.detail["why"]) for row in rows if row.target in proposals}


def _brew(home, *, age: float = 3600):
    """Skill ``brew``, last written ``age`` seconds ago, with a support file as old."""
    assert home.skills.manage({"action": "create", "name": "brew", "content": BREW})["success"]
    water = home.skills_dir / "brew" / "references" / "water.md"
    water.parent.mkdir()
    water.write_text("Soft water.\n")
    old = time.time() - age
    for path in (home.skills_dir / "brew" / "SKILL.md", water, water.parent):
        os.utime(path, (old, old))
    return home.skills_dir / "brew" / "SKILL.md"


def test_skill_proposals_decided_outside_are_judged_by_the_library_and_never_read_outside_it(home, tmp_path):
    """How a skill proposal left the queue outside is read from the library as it is now: a proposal
    whose file nobody touched since was rejected, one whose file changed in some other way, or whose
    target nothing shows was there, is not known, and a hostile path in a record is never followed."""
    _brew(home)
    secret = tmp_path / "secret.txt"
    secret.write_text("the secret")
    (home.skills_dir / "brew" / "references" / "leak.md").symlink_to(secret)  # a link out of the skill
    edited = BREW.replace("3 minutes", "4 minutes")
    decided = _decide_skills_outside(
        home,
        {
            "00000001": {"action": "edit", "name": "brew", "content": edited},  # rejected: brew untouched
            "00000002": {"action": "patch", "name": "brew", "file_path": "../../../etc/passwd", "old_string": "r"},
            "00000003": {"action": "write_file", "name": "brew", "file_path": "references/../../x", "file_content": ""},
            "00000004": {"action": "create", "name": "../outside", "content": BREW},
            "00000005": {"action": "remove_file", "name": "brew", "file_path": "references/never.md"},  # never there
            "00000006": {"action": "write_file", "name": "brew", "file_path": "references/\x00x", "file_content": ""},
            "00000007": {
                "action": "write_file",
                "name": "brew",
                "file_path": "references/leak.md",
                "file_content": "the secret",
            },
            "00000008": {"action": "edit", "name": "brew", "content": BREW},  # a no-op, rejected: never rewritten
            "00000009": {"action": "delete", "name": "never-made"},  # nothing shows it was there
            "0000000a": {"action": "create", "name": "nope'\n 9999  fake row\n", "content": BREW},
        },
        time.time(),
    )
    assert {pid: action for pid, (action, _) in decided.items()} == {
        "00000001": "reject",
        "00000002": "close",
        "00000003": "close",
        "00000004": "reject",
        "00000005": "reject",  # never there when staged
        "00000006": "close",
        "00000007": "close",
        "00000008": "reject",
        "00000009": "reject",
        "0000000a": "reject",
    }
    assert decided["00000001"][1].endswith(
        "SKILL.md does not hold the text it proposed, and it is unchanged since it was staged"
    )
    assert "Path traversal ('..') is not allowed." in decided["00000002"][1]
    assert "Path traversal ('..') is not allowed." in decided["00000003"][1]
    assert "must not hold control characters" in decided["00000006"][1]
    assert "is outside the skill's folder" in decided["00000007"][1]  # refused: neither read nor stat'ed
    assert "\n" not in decided["0000000a"][1]  # a name from the record never breaks a line
    [row] = [r for r in Timeline(home).page(subsystem="approvals") if r.target == "0000000a" and r.why]
    assert "\n" not in row.why
    # a proposal whose file changed since in some other way: not known
    brew = home.skills_dir / "brew" / "SKILL.md"
    hermes_record(
        home,
        "0000000b",
        {"action": "edit", "name": "brew", "content": edited},
        created_at=time.time(),
        subsystem="skills",
    )
    home.approvals.catch_up()
    brew.write_text(BREW + "Stir.\n")
    (home.pending_dir / "skills" / "0000000b.json").unlink()
    home.approvals.catch_up()
    [row] = home.journal.query(subsystem="approvals", target="0000000b", actions=("close",), limit=1)
    assert "it changed since, so whether it was applied is not known" in row.detail["why"]


def test_removals_decided_outside_are_told_by_what_was_there_and_what_left_since(home):
    """A delete or remove_file whose target is gone was approved when it was there when staged (Hermes
    stages one without looking; the workbench notes it when it first sees the record; one the
    workbench staged was checked then). One whose target was never there was rejected, and a delete
    whose skill was archived meanwhile (Hermes's approval removes the folder; its curator archives
    it) is not known."""
    _brew(home)
    for name in ("steep", "pour", "mull"):
        assert home.skills.manage({"action": "create", "name": name, "content": BREW.replace("brew", name)})["success"]
    now = time.time()
    hermes = {
        "000000c1": {"action": "remove_file", "name": "brew", "file_path": "references/water.md"},
        "000000c2": {"action": "delete", "name": "steep"},
        "000000c3": {"action": "delete", "name": "never-made"},
        "000000c4": {"action": "delete", "name": "mull"},  # the curator archives it meanwhile
    }
    for pid, payload in hermes.items():
        hermes_record(home, pid, payload, created_at=now, subsystem="skills")
    home.approvals.catch_up()
    home.config_path.write_text("skills:\n  write_approval: true\n")
    home.reload_config()
    agent = ToolContext(actor="agent")
    ours = [skill_manage_tool(home, {"action": "delete", "name": "pour"}, agent)["pending_id"]]
    (home.skills_dir / "brew" / "references" / "tea.md").write_text("Green.\n")
    ours.append(
        skill_manage_tool(home, {"action": "remove_file", "name": "brew", "file_path": "references/tea.md"}, agent)[
            "pending_id"
        ]
    )
    time.sleep(0.01)  # the removals come after the staging, as Hermes's approvals do
    for rel in ("references/water.md", "references/tea.md"):
        (home.skills_dir / "brew" / rel).unlink()
    for name in ("steep", "pour"):  # what Hermes's approval of a delete does (it archives only in a review)
        shutil.rmtree(home.skills_dir / name)
    assert home.curator.archive("mull")["success"]
    for pid in [*hermes, *ours]:
        (home.pending_dir / "skills" / f"{pid}.json").unlink()
    home.approvals.catch_up()
    decided = {
        row.target: row.action
        for row in home.journal.query(subsystem="approvals", actions=("approve", "reject", "close"), limit=10)
    }
    assert decided == {
        "000000c1": "approve",
        "000000c2": "approve",
        "000000c3": "reject",
        "000000c4": "close",
        ours[0]: "approve",
        ours[1]: "approve",
    }


def test_a_skill_proposal_is_not_judged_through_a_refused_skills_link(home, tmp_path):
    """With skills/ a link the workbench does not follow, the library is not read: not known, not rejected."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    elsewhere.chmod(0o777)  # anyone can write there: the link is never followed
    if home.skills_dir.is_dir():
        home.skills_dir.rmdir()
    home.skills_dir.symlink_to(elsewhere)
    hermes_record(home, "00000007", {"action": "create", "name": "brew", "content": BREW}, subsystem="skills")
    home.approvals.catch_up()
    (home.pending_dir / "skills" / "00000007.json").unlink()
    home.approvals.catch_up()
    [row] = home.journal.query(subsystem="approvals", target="00000007", actions=("close", "reject"), limit=1)
    assert row.action == "close" and "the library cannot be read" in row.detail["why"], row.detail["why"]


def test_a_patch_whose_new_text_holds_its_old_one_is_told_by_where_the_old_text_is_left(home):
    """A patch that appends (its old text inside its new) was always closed: its old text never leaves."""
    deploy = "---\nname: deploy\ndescription: Deploy\n---\n\n1. kubectl apply\n2. kubectl rollout status\n"
    assert home.skills.manage({"action": "create", "name": "deploy", "content": deploy})["success"]
    skill_md = home.skills_dir / "deploy" / "SKILL.md"
    old = time.time() - 3600
    os.utime(skill_md, (old, old))
    now = time.time()
    appends = {"action": "patch", "name": "deploy", "old_string": "2. kubectl rollout status"}
    proposals = {
        "00000011": {**appends, "new_string": "2. kubectl rollout status\n3. Watch the logs"},
        "00000012": {
            "action": "patch",
            "name": "deploy",
            "old_string": "kubectl",
            "new_string": "kubectl --context prod",
        },
    }
    for pid, payload in proposals.items():
        hermes_record(home, pid, payload, created_at=now, subsystem="skills")
    home.approvals.catch_up()
    # Hermes approves the first; someone edits the file by hand, keeping one bare `kubectl`
    skill_md.write_text(
        deploy.replace("status\n", "status\n3. Watch the logs\n").replace("1. kubectl", "1. kubectl -n web")
    )
    for pid in proposals:
        (home.pending_dir / "skills" / f"{pid}.json").unlink()
    home.approvals.catch_up()
    decided = {
        row.target: row.action
        for row in home.journal.query(subsystem="approvals", actions=("approve", "reject", "close"), limit=10)
    }
    assert decided == {"00000011": "approve", "00000012": "close"}
    # replace_all: every `kubectl` is inside the new text
    hermes_record(home, "00000013", proposals["00000012"] | {"replace_all": True}, created_at=now, subsystem="skills")
    home.approvals.catch_up()
    skill_md.write_text(skill_md.read_text().replace("kubectl", "kubectl --context prod"))
    (home.pending_dir / "skills" / "00000013.json").unlink()
    home.approvals.catch_up()
    [row] = home.journal.query(subsystem="approvals", target="00000013", actions=("approve", "close"), limit=1)
    assert row.action == "approve", row.detail["why"]


def _staged_by_hermes_review(home, pid: str, payload: dict) -> None:
    """A skill proposal Hermes's background review staged a moment ago, journaled as staged."""
    hermes_record(home, pid, payload, created_at=home.clock.now() - 1, origin="background_review", subsystem="skills")
    home.approvals.catch_up()


def test_a_skill_change_hermes_approved_is_cited_and_names_its_proposer(home):
    """With the library watched, Hermes's approval of a review's create was journaled as a bare
    `skill 'x' created outside the workbench`, tied to nothing (a memory write approved outside
    names its proposer)."""
    home.skills.outside.record()  # a watching process's baseline
    content = BREW.replace("brew", "steep")
    _staged_by_hermes_review(home, "000000d1", {"action": "create", "name": "steep", "content": content})
    (home.skills_dir / "steep").mkdir()
    (home.skills_dir / "steep" / "SKILL.md").write_text(content)  # what Hermes's approval writes
    (home.pending_dir / "skills" / "000000d1.json").unlink()
    home.approvals.catch_up()
    [approval] = home.journal.query(subsystem="approvals", target="000000d1", actions=("approve",))
    [created] = home.journal.query(subsystem="skills", target="steep", actions=("external",))
    assert approval.detail["applied_rows"] == [created.id] and created.detail["change"] == "created"
    timeline = Timeline(home)
    [row] = [r for r in timeline.with_sources(timeline.page(subsystem="skills")) if r.id == created.id]
    assert row.summary == "skill 'steep' created outside the workbench (steep/SKILL.md) (proposed by Hermes review)"
    [refused] = timeline.preview(str(approval.id))["refused"]
    assert refused["error"].endswith(
        f"(its change, row {created.id}, was made outside the workbench and cannot be reverted here)"
    )


def test_proposals_approved_together_or_past_pairing_are_still_approvals(home, clock):
    """Counting only edits wholly made of a proposal's changes turned two approvals seen in one look,
    and a replace whose text changed past pairing (a remove and an add), into "closed"."""
    _seed(home, "User likes tea", "Backups run nightly at 04:00 JST")
    _stage(home, clock, "0000ab01", {"action": "add", "target": "memory", "content": "Kettle descales monthly"})
    _stage(home, clock, "0000ab02", {"action": "add", "target": "memory", "content": "Cups live in the left cupboard"})
    replace = {
        "action": "replace",
        "target": "memory",
        "old_text": "Backups run nightly",
        "content": "Vault path kv/ci",
    }
    _stage(home, clock, "0000ab03", replace)
    _hermes_decides(home, "0000ab01", ["User likes tea", "Backups run nightly at 04:00 JST", "Kettle descales monthly"])
    _hermes_decides(
        home,
        "0000ab02",
        [
            "User likes tea",
            "Backups run nightly at 04:00 JST",
            "Kettle descales monthly",
            "Cups live in the left cupboard",
        ],
    )
    _hermes_decides(
        home,
        "0000ab03",
        ["User likes tea", "Vault path kv/ci", "Kettle descales monthly", "Cups live in the left cupboard"],
    )
    home.approvals.catch_up()  # all three seen in one look
    assert [_decision(home, pid)[0] for pid in ("0000ab01", "0000ab02", "0000ab03")] == ["approve"] * 3


def test_a_hand_edit_before_hermes_approves_a_skill_edit_is_not_cited_as_it(home):
    """The approval cited the oldest edited row since staging: the user's own hand edit, which the
    Timeline then labelled as proposed by the review."""
    (home.skills_dir / "brew").mkdir(parents=True)
    skill_md = home.skills_dir / "brew" / "SKILL.md"
    skill_md.write_text(BREW)
    home.skills.outside.record()  # a watching process's baseline
    proposed = BREW + "\nRinse the pot.\n"
    _staged_by_hermes_review(home, "000000e1", {"action": "edit", "name": "brew", "content": proposed})
    skill_md.write_text(BREW + "\nMy own note.\n")  # the user's, seen by the watcher
    [hand] = home.skills.outside.record()
    skill_md.write_text(proposed)  # Hermes's approval
    (home.pending_dir / "skills" / "000000e1.json").unlink()
    home.approvals.catch_up()
    [approval] = home.journal.query(subsystem="approvals", target="000000e1", actions=("approve",))
    [approved] = approval.detail["applied_rows"]
    assert approved != hand and home.journal.get(approved).detail["change"] == "edited"
    timeline = Timeline(home)
    rows = {r.id: r.summary for r in timeline.with_sources(timeline.page(subsystem="skills"))}
    assert "proposed by" not in rows[hand] and rows[approved].endswith("(proposed by Hermes review)")


def test_a_hand_edit_before_hermes_approves_a_skill_patch_is_not_cited_as_it(home):
    """A patch approval cited the oldest edited row since staging, the user's hand edit, as its change."""
    (home.skills_dir / "brew").mkdir(parents=True)
    skill_md = home.skills_dir / "brew" / "SKILL.md"
    skill_md.write_text(BREW)
    home.skills.outside.record()  # a watching process's baseline
    patch = {"action": "patch", "name": "brew", "old_string": "3 minutes", "new_string": "4 minutes"}
    hermes_record(home, "000000e2", patch, created_at=home.clock.now() - 1, subsystem="skills")
    home.approvals.catch_up()
    skill_md.write_text(BREW + "\nMy own note.\n")  # the user's, seen by the watcher
    [hand] = home.skills.outside.record()
    skill_md.write_text((BREW + "\nMy own note.\n").replace("3 minutes", "4 minutes"))  # Hermes's approval
    (home.pending_dir / "skills" / "000000e2.json").unlink()
    home.approvals.catch_up()
    [approval] = home.journal.query(subsystem="approvals", target="000000e2", actions=("approve",))
    [approved] = approval.detail["applied_rows"]
    assert approved != hand and home.journal.get(approved).detail["change"] == "edited"


def test_removes_approved_beside_an_agents_append_in_one_look_are_approvals(home, clock):
    """A remove's index (in the old file) and an add's (in the new) were compared as if one place: the
    second of two approved removes, seen beside the agent's append, read as a rewrite and was closed."""
    _seed(home, "User likes tea", "Backups run nightly at 04:00 JST", "Cups live in the left cupboard")
    _stage(home, clock, "0000ad01", {"action": "remove", "target": "memory", "old_text": "User likes tea"})
    _stage(home, clock, "0000ad02", {"action": "remove", "target": "memory", "old_text": "Backups run nightly"})
    _hermes_decides(home, "0000ad01", ["Backups run nightly at 04:00 JST", "Cups live in the left cupboard"])
    _hermes_decides(home, "0000ad02", ["Cups live in the left cupboard", "Kettle descales monthly"])  # + an append
    home.approvals.catch_up()  # all of it in one look
    assert [_decision(home, pid)[0] for pid in ("0000ad01", "0000ad02")] == ["approve", "approve"]


@pytest.mark.parametrize("rewrite", ["extends it", "rewords it"])
def test_every_row_of_an_approved_batch_names_its_proposer(home, clock, rewrite):
    """Hermes approved a batch (remove A, replace B, add C): its replace was journaled as a remove and
    an add, and only the add named the proposal and its proposer."""
    from engine.timeline import Timeline

    _seed(home, "User likes jazz", "User uses metric units", "User prefers oolong tea")
    new_b = "User prefers oolong tea, no sugar" if rewrite == "extends it" else "Green tea only, never black"
    operations = [
        {"action": "remove", "old_text": "metric units"},
        {"action": "add", "content": "Batch add: likes hiking"},
        {"action": "replace", "old_text": "oolong", "content": new_b},
    ]
    _stage(home, clock, "0000ba01", {"action": "batch", "target": "memory", "operations": operations})
    _hermes_decides(home, "0000ba01", ["User likes jazz", new_b, "Batch add: likes hiking"])
    action, _, applied, _ = _decision(home, "0000ba01")
    outside = [r for r in home.journal.query(subsystem="memory", actor="external")]
    assert action == "approve" and sorted(applied) == sorted(r.id for r in outside)
    if rewrite == "extends it":
        assert sorted((r.action, r.before, r.after) for r in outside) == sorted(
            [
                ("remove", "User uses metric units", None),
                ("replace", "User prefers oolong tea", new_b),
                ("add", None, "Batch add: likes hiking"),
            ],
            key=str,
        )
    timeline = Timeline(home)
    rows = timeline.with_sources(timeline.page(subsystem="memory", actor="external"))
    assert rows and all(r.summary.endswith("(proposed by Hermes agent)") for r in rows), [r.summary for r in rows]


def test_a_batch_removing_an_entry_and_adding_a_longer_one_is_still_an_approval(home, clock):
    """Hermes's batch removed "User lives in Berlin" and added a longer entry holding it: journaled as
    one replace (an extension), the remove found no row of its own and the decision read `close`."""
    _seed(home, "User likes tea", "User lives in Berlin")
    longer = "User lives in Berlin; works remotely for a Danish shipping firm, prefers async standups"
    operations = [{"action": "remove", "old_text": "User lives in Berlin"}, {"action": "add", "content": longer}]
    _stage(home, clock, "0000bb01", {"action": "batch", "target": "memory", "operations": operations})
    _hermes_decides(home, "0000bb01", ["User likes tea", longer])
    action, _, applied, why = _decision(home, "0000bb01")
    [row] = [r for r in home.journal.query(subsystem="memory", actor="external")]
    assert (row.action, row.before, row.after) == ("replace", "User lives in Berlin", longer)
    assert action == "approve" and applied == [row.id], why


def test_a_support_files_outside_row_is_never_taken_for_its_skills_own_change(home):
    """Support files' outside rows share the skill's name and change words: a delete Hermes approved
    cited a file's removal as the skill's, and a file removed read as the skill removed."""
    from engine.approvals.outside import _skill_rows
    from engine.approvals.outside_skills import _removed_since

    skill = "---\nname: brew\ndescription: How to brew tea\n---\n\nBoil water.\n"
    assert home.skills.manage({"action": "create", "name": "brew", "content": skill})["success"]
    made = {"action": "write_file", "name": "brew", "file_path": "references/a.md", "file_content": "x\n"}
    assert home.skills.manage(made)["success"]
    home.skills.outside.record()  # the baseline
    since = home.clock.now() - 1
    (home.skills_dir / "brew" / "references" / "a.md").unlink()  # Hermes's remove_file
    assert home.skills.outside.record()
    assert not _removed_since(home, "brew", since)
    shutil.rmtree(home.skills_dir / "brew")  # Hermes's delete
    removed = home.skills.outside.record()
    assert _skill_rows(home, {"action": "delete", "name": "brew"}, since, set()) == removed
    assert _removed_since(home, "brew", since)
