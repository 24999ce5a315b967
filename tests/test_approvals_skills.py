"""Approving skill proposals against the real skill library (SKILL.md files, journal, ledger)."""

from __future__ import annotations

import pytest

from engine.approvals.preview import seen_in
from engine.skills.manage import skill_manage_tool
from engine.tools import ToolContext
from tests.test_skills_support import tree_state

AGENT = ToolContext(actor="agent", session_id="s1")
USER = ToolContext(actor="user")
SKILL = "---\nname: brew\ndescription: How to brew tea\n---\n\nBoil water.\nSteep for 3 minutes.\n"


def approval_on(home):
    home.config_path.write_text("skills:\n  write_approval: true\n")
    home.reload_config()


def staged(home, **args):
    result = skill_manage_tool(home, args, AGENT)
    assert result["success"] and result["staged"], result
    return result["pending_id"]


def skill_md(home):
    return home.skills_dir / "brew" / "SKILL.md"


def test_staged_create_previews_and_applies_on_approval(home):
    approval_on(home)
    pid = staged(home, action="create", name="brew", content=SKILL)
    assert not skill_md(home).exists()
    view = home.approvals.preview(pid)
    assert view["error"] is None and view["name"] == "brew" and view["file"] == "SKILL.md"
    assert view["before_text"] is None and view["after_text"] == SKILL
    assert view["diff"] == [("+", line) for line in SKILL.splitlines()]
    result = home.approvals.approve(pid)
    assert result["success"] and skill_md(home).read_text() == SKILL
    assert home.approvals.count() == 0
    [row] = home.journal.query(subsystem="approvals", target=pid, limit=1)
    assert row.action == "approve"


def test_a_create_whose_name_a_skill_took_since_says_to_reject_it(home):
    """Approving it said only "A skill named 'brew' already exists at …": approving again never helps."""
    approval_on(home)
    pid = staged(home, action="create", name="brew", content=SKILL)
    home.config_path.write_text("")  # approval off: the user makes the skill meanwhile
    home.reload_config()
    assert skill_manage_tool(home, {"action": "create", "name": "brew", "content": SKILL}, USER)["success"]
    advice = (
        f" A create never writes over a skill: reject it (`workbench pending reject {pid}`, or r in Approvals), "
        "and stage the change again as an edit or patch of that skill if it is still wanted."
    )
    assert home.approvals.preview(pid)["error"].endswith("brew." + advice)
    result = home.approvals.approve(pid)
    assert (
        not result["success"]
        and result["error"] == f"A skill named 'brew' already exists at {skill_md(home).parent}.{advice}"
    )
    assert home.approvals.count() == 1


def test_edit_then_approve_a_patch_and_a_stale_patch_is_kept(home):
    approval_on(home)
    home.approvals.approve(staged(home, action="create", name="brew", content=SKILL))
    pid = staged(home, action="patch", name="brew", old_string="3 minutes", new_string="4 minutes")
    stale = staged(home, action="patch", name="brew", old_string="Boil water.", new_string="Boil fresh water.")
    view = home.approvals.preview(pid, edit="5 minutes")
    assert ("-", "Steep for 3 minutes.") in view["diff"] and ("+", "Steep for 5 minutes.") in view["diff"]
    assert home.approvals.approve(pid, edit="5 minutes")["success"]
    assert "Steep for 5 minutes." in skill_md(home).read_text()
    home.skills.manage(
        {"action": "patch", "name": "brew", "old_string": "Boil water.", "new_string": "Heat."},
        USER,
    )
    before = skill_md(home).read_bytes()
    failed = home.approvals.approve(stale)
    assert not failed["success"] and "Could not find old_string" in failed["error"]
    assert skill_md(home).read_bytes() == before and home.approvals.get(stale).action == "patch"
    assert "Could not find old_string" in home.approvals.preview(stale)["error"]


def test_reject_all_leaves_the_library_untouched(home):
    approval_on(home)
    staged(home, action="create", name="brew", content=SKILL)
    outcome = home.approvals.reject_all("skills")
    assert len(outcome["rejected"]) == 1 and not skill_md(home).exists()
    [row] = home.journal.query(subsystem="approvals", limit=1)
    assert row.action == "reject" and row.detail["payload"]["content"] == SKILL


def test_a_patch_summary_counts_the_lines_its_diff_shows(home):
    """The queue's line for a patch once counted the patch's strings (+2/-1 for a line added after a
    kept one) while the preview beside it showed one added line: both now count the file's diff."""
    skill_manage_tool(home, {"action": "create", "name": "brew", "content": SKILL}, AGENT)
    approval_on(home)
    pid = staged(home, action="patch", name="brew", old_string="Boil water.", new_string="Boil water.\nWarm the pot.")
    view = home.approvals.preview(pid)
    assert [line for line in view["diff"] if line[0] != " "] == [("+", "Warm the pot.")]
    assert home.approvals.get(pid).summary == "patch 'brew' SKILL.md (+1/-0 lines)"


def test_a_long_description_in_a_create_summary_ends_before_a_word_and_says_it_goes_on(home):
    """Hermes's gist keeps a description's first 140 characters, cut inside a word and with nothing to
    say so: ``…mail the finance te (188 chars)`` read as the whole description."""
    approval_on(home)
    about = (
        "Re-render each invoice PDF of a billing period after a template fix, then check the totals "
        "against the ledger export and mail the finance team"
    )
    content = f"---\nname: brew\ndescription: {about}\n---\n\nBoil water.\n"
    pid = staged(home, action="create", name="brew", content=content)
    summary = home.approvals.get(pid).summary
    assert summary == f"create 'brew' — {about[:137]}… ({len(content)} chars)", summary
    assert summary.endswith("mail the finance… (188 chars)")


def test_a_skill_approved_from_a_review_is_the_users_and_names_its_proposer(home):
    """Approving replays the write as the user's, as Hermes's approve does (its curator leaves the skill
    alone): the listing said `user` and nothing else, as if the user had written it, edited or not."""
    from engine.approvals.records import BACKGROUND_REVIEW
    from engine.timeline import summarize

    approval_on(home)
    review = ToolContext(actor="review", session_id="s1", origin=BACKGROUND_REVIEW)
    for name, edit in (("brew", None), ("steep", SKILL.replace("brew", "steep") + "Stir.\n")):
        result = skill_manage_tool(
            home, {"action": "create", "name": name, "content": SKILL.replace("brew", name)}, review
        )
        assert home.approvals.approve(result["pending_id"], edit=edit)["success"]
    home.skills.manage({"action": "create", "name": "mine", "content": SKILL.replace("brew", "mine")})
    skills = {s.name: s for s in home.skills.list()}
    assert {n: (s.provenance, s.created_by, s.proposed_by) for n, s in skills.items()} == {
        "brew": ("user", None, "review"),
        "steep": ("user", None, "review"),
        "mine": ("user", None, None),
    }
    assert skills["steep"].owner == "user (approved, proposed by review)" and skills["mine"].owner == "user"
    [row] = home.journal.query(subsystem="skills", target="steep", limit=1)
    assert (row.detail["proposed_by"], row.detail["edited"]) == ("review", True)
    assert summarize(row).endswith("(proposed by review, edited before approval)")
    steep, brew = home.journal.query(subsystem="approvals", actions=("approve",), limit=2)
    assert summarize(steep).endswith("(edited before approval)") and "edited" not in summarize(brew)
    # the user deletes it and writes their own under that name: no longer a proposal's
    home.skills.manage({"action": "delete", "name": "brew"})
    home.skills.manage({"action": "create", "name": "brew", "content": SKILL})
    assert {s.name: s.proposed_by for s in home.skills.list()}["brew"] is None


def test_an_empty_queue_says_which_gates_are_on(home, capsys):
    """It asked for write_approval to be turned on even when it was."""
    from workbench.cli import main

    assert home.approvals.empty_note() == (
        "Nothing waits for approval. Writes are queued for approval with memory.write_approval or "
        "skills.write_approval on in config.yaml; always queued: a background review's memory replace or "
        "remove, and any write the threat scan finds suspicious."
    )
    assert home.approvals.empty_note("skills") == (
        "No pending skill writes. Writes are queued for approval with skills.write_approval on in config.yaml; "
        "always queued: any write the threat scan finds suspicious."
    )
    approval_on(home)
    assert home.approvals.empty_note() == (
        "Nothing waits for approval. skills.write_approval is on: the agent's skill writes are queued for approval."
    )
    home.config_path.write_text("skills:\n  write_approval: true\nmemory:\n  write_approval: true\n")
    home.reload_config()
    note = "memory.write_approval and skills.write_approval are on: the agent's memory and skill writes are queued"
    assert note in home.approvals.empty_note()
    assert main(["pending", "list", "--home", str(home.root)]) == 0
    assert note in capsys.readouterr().out
    # a filter speaks of its own subsystem (other writes may be waiting)
    home.memory.add("memory", "Tea at four", ToolContext(actor="agent"))
    assert main(["pending", "list", "--subsystem", "skills", "--home", str(home.root)]) == 0
    assert capsys.readouterr().out.strip() == (
        "No pending skill writes. skills.write_approval is on: the agent's skill writes are queued for approval."
    )


def test_deciding_all_of_a_listed_few_says_which_were_decided_elsewhere(home):
    approval_on(home)
    first = staged(home, action="create", name="brew", content=SKILL)
    second = staged(home, action="create", name="steep", content=SKILL.replace("brew", "steep"))
    home.approvals.reject(first)  # another process, meanwhile
    result = home.approvals.approve_all(only=[first])
    assert (result["approved"], result["failed"], result["gone"]) == ([], [], [first])
    assert [r.id for r in home.approvals.list()] == [second]  # not listed: left for its own answer


def test_a_staged_delete_lists_every_file_it_removes(home):
    """Approving a delete removed the skill's support files too, but its diff showed only SKILL.md."""
    assert home.skills.manage({"action": "create", "name": "brew", "content": SKILL})["success"]
    refs = home.skills_dir / "brew" / "references"
    refs.mkdir()
    for name in ("water.md", "new\nline.md"):
        (refs / name).write_text("notes\n")
    approval_on(home)
    pid = staged(home, action="delete", name="brew")
    diff = home.approvals.preview(pid)["diff"]
    assert diff[:3] == [
        (" ", "=== delete SKILL.md"),
        (" ", "=== delete references/new⏎line.md"),
        (" ", "=== delete references/water.md"),
    ]
    assert ("-", "Steep for 3 minutes.") in diff
    for n in range(250):  # a folder of thousands would fill the diff: the first 200, then a count
        (refs / f"n{n:03d}.md").write_text("x\n")
    diff = home.approvals.preview(pid)["diff"]
    headers = [line for kind, line in diff if line.startswith("===")]
    assert len(headers) == 201 and headers[-1] == "=== and 53 more files"


@pytest.mark.parametrize("change", ["a file added", "a file edited", "a file removed"])
def test_a_delete_approved_against_what_was_shown_refuses_a_changed_folder(home, change):
    """Approving a delete removed a file written into the folder while the question was open (the
    question listed only the files there before)."""
    assert home.skills.manage({"action": "create", "name": "brew", "content": SKILL})["success"]
    refs = home.skills_dir / "brew" / "references"
    refs.mkdir()
    (refs / "water.md").write_text("soft water\n")
    approval_on(home)
    pid = staged(home, action="delete", name="brew")
    seen = seen_in(home.approvals.preview(pid))
    assert seen.folder is not None
    if change == "a file added":
        (refs / "new.md").write_text("precious\n")
    elif change == "a file edited":
        (refs / "water.md").write_text("hard water, now\n")
    else:
        (refs / "water.md").unlink()
    before = tree_state(home.skills_dir)
    refused = home.approvals.approve(pid, seen=seen)
    assert not refused["success"] and "changed while you were asked" in refused["error"]
    assert tree_state(home.skills_dir) == before and home.approvals.get(pid).action == "delete"
    assert not [r for r in home.journal.query(subsystem="skills") if r.action == "delete"]  # nothing begun
    again = home.approvals.preview(pid)  # asked again: the change came after staging, which it now says
    assert again["stale"].startswith("a file in skills/brew was added, edited or removed after")
    refused = home.approvals.approve(pid, seen=seen_in(again))
    assert not refused["success"] and refused["error"] == again["stale"]
    assert tree_state(home.skills_dir) == before and home.approvals.get(pid).action == "delete"


def test_a_staged_write_that_replaces_or_removes_is_refused_once_that_changed_after_staging(home):
    """What a staged rewrite, file write or file removal finds is kept with the record (``base``):
    another change there first (a hand edit, an earlier proposal approved) refuses it, kept pending."""
    assert home.skills.manage({"action": "create", "name": "brew", "content": SKILL})["success"]
    approval_on(home)
    first = staged(home, action="edit", name="brew", content=SKILL.replace("3", "4"))
    second = staged(home, action="edit", name="brew", content=SKILL.replace("3", "5"))
    water = staged(home, action="write_file", name="brew", file_path="references/water.md", file_content="soft\n")
    assert home.approvals.get(first).base == home.approvals.get(second).base
    assert home.approvals.approve(first)["success"]  # what it found is what is there
    refused = home.approvals.approve(second)
    assert not refused["success"] and "skills/brew/SKILL.md changed after this proposal was staged" in refused["error"]
    assert "approve an edited version that keeps what you want" in refused["error"]
    assert "Steep for 4 minutes." in skill_md(home).read_text() and home.approvals.get(second)
    (home.skills_dir / "brew" / "references").mkdir()
    (home.skills_dir / "brew" / "references" / "water.md").write_text("hard, by hand\n")  # a file it would create
    assert not home.approvals.approve(water)["success"]
    assert (home.skills_dir / "brew" / "references" / "water.md").read_text() == "hard, by hand\n"
    gone = staged(home, action="remove_file", name="brew", file_path="references/water.md")
    (home.skills_dir / "brew" / "references" / "water.md").write_text("harder\n")
    refused = home.approvals.approve(gone)
    assert "remove the file yourself if you still want it gone" in refused["error"]
    assert home.approvals.approve(second, edit=SKILL.replace("3", "6"))["success"]  # the approver's own text
    assert "Steep for 6 minutes." in skill_md(home).read_text()


def test_a_rewrite_through_a_linked_skill_md_sees_an_edit_to_the_file_it_points_at(home):
    """What a rewrite found was the link's own target path, so an edit to the real file after staging
    went unseen and approving overwrote it."""
    assert home.skills.manage({"action": "create", "name": "brew", "content": SKILL})["success"]
    real = home.skills_dir / "brew" / "real.md"
    real.write_text(SKILL)
    skill_md(home).unlink()
    skill_md(home).symlink_to("real.md")
    approval_on(home)
    pid = staged(home, action="edit", name="brew", content=SKILL.replace("3", "4"))
    real.write_text(SKILL + "Kept by hand.\n")
    refused = home.approvals.approve(pid)
    assert not refused["success"] and "changed after this proposal was staged" in refused["error"]
    assert real.read_text().endswith("Kept by hand.\n")
