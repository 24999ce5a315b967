"""The timeline from the journal: rows, groups, filters, paging, revert (engine and CLI)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from engine import open_home
from engine.clock import stamped
from engine.errors import WorkbenchError
from engine.journal import UNDOS_OF, tagged
from engine.skills.manage import skill_manage_tool
from engine.textsafety import cells, flat_line
from engine.timeline import (
    Timeline,
    describe_group,
    detail_lines,
    outcome_lines,
    parse_filter,
    parse_since,
    preview_lines,
    summarize,
)
from engine.tools import ToolContext
from tests.cli_support import completed
from tests.hermes_support import hermes_record
from tests.test_curator_cli import wb

REVIEW = ToolContext(actor="review", session_id="s1", message_id=7)
AGENT = ToolContext(actor="agent", session_id="s1", message_id=3)


def learn(home):
    """An agent write, a two-write background review, a user write and a pinned skill."""
    home.memory.add("memory", "Project uses Postgres 16", ToolContext(actor="agent", session_id="s1", message_id=3))
    home.memory.add("user", "Prefers short answers", REVIEW)
    home.memory.add("memory", "Deploys go through staging", REVIEW)
    home.memory.add("memory", "Hand-written note", ToolContext(actor="user"))


def test_rows_are_newest_first_with_one_line_summaries_and_review_groups(home):
    learn(home)
    rows = Timeline(home).page()
    assert [(r.actor, r.summary, r.group) for r in rows] == [
        ("user", "MEMORY + 'Hand-written note'", None),
        ("review", "MEMORY + 'Deploys go through staging'", "review:s1:7"),
        ("review", "USER + 'Prefers short answers'", "review:s1:7"),
        ("agent", "MEMORY + 'Project uses Postgres 16'", None),
    ]
    assert rows[1].session_id == "s1" and rows[1].message_id == 7
    timeline = Timeline(home)
    assert [r.summary for r in timeline.page(actor="review", target="user")] == ["USER + 'Prefers short answers'"]
    assert [r.actor for r in timeline.page(text="postgres")] == ["agent"]
    assert [r.id for r in timeline.page(session_id="s1", limit=2)] == [rows[1].id, rows[2].id]
    assert [r.id for r in timeline.page(before_id=rows[1].id, limit=1)] == [rows[2].id]
    assert describe_group(timeline.rows_of("review:s1:7")) == "background review (2 rows): 2 memory entries added"


def test_a_rewrite_fitted_to_a_column_keeps_both_versions_or_else_is_left_whole(home):
    """``Row.fitted`` cuts a replace's two versions around where they differ until the summary fits a
    column; where none did, the narrowest was shown anyway, which the list cut again: `USER '…ed 缓存 r67'
    → '…ed ﾃﾞ……`. Where none fits (30 cells here; at 34 the cut between words does), the summary is left
    as it is."""
    home.memory.add("user", "[L869-053] replaced 缓存 r67", AGENT)
    home.memory.replace("user", "缓存 r67", "[L869-053] replaced ﾃﾞﾌﾟﾛｲ r297", AGENT)
    [row, _] = Timeline(home).page()
    assert row.summary == "USER '[L869-053] replaced 缓存 r67' → '[L869-053] replaced ﾃﾞﾌﾟﾛｲ r297'"
    fitted = row.fitted(60)
    assert cells(fitted) <= 60 and "replaced 缓存 r67' → '…" in fitted and fitted.endswith("replaced ﾃﾞﾌﾟﾛｲ r297'")
    assert row.fitted(34) == "USER '…缓存 r67' → '…ﾃﾞﾌﾟﾛｲ r297'"
    assert row.fitted(30) == row.summary


def test_the_session_filter_takes_an_id_or_the_start_of_one(home):
    """``timeline --session`` and ``session:`` matched whole ids only, so a short id found nothing."""
    long_id = "20261130_101000_de0003"
    home.memory.add("memory", "Deploys go through staging", ToolContext(actor="agent", session_id=long_id))
    home.memory.add("memory", "Hand-written note", ToolContext(actor="user"))
    timeline = Timeline(home)
    assert [r.session_id for r in timeline.page(session_id="20261130_1010")] == [long_id]
    assert [r.session_id for r in timeline.page(**parse_filter("session:20261130_10 deploys"))] == [long_id]
    assert parse_filter("session: deploys") == {"text": "deploys"}  # as typed: the key filters nothing yet
    with pytest.raises(WorkbenchError, match="session: is given twice"):  # the first was dropped unsaid
        parse_filter("session:s1 session:s2")
    assert timeline.page(session_id=long_id + "x") == [] and timeline.page(session_id="%") == []
    home.memory.add("memory", "From s1", ToolContext(actor="agent", session_id="s1"))
    home.memory.add("memory", "From s10", ToolContext(actor="agent", session_id="s10"))
    assert [r.session_id for r in timeline.page(session_id="s1")] == ["s1"]  # a whole id is that session's alone
    assert [r.session_id for r in timeline.page(session_id="s")] == ["s10", "s1"]
    listed = completed("timeline", "--session", "s", "--home", str(home.root)).stdout
    assert "From s10'  (session s10)" in listed and "From s1'  (session s1)" in listed  # which is whose

    def text(session: str) -> str:
        return completed("timeline", "--session", session, "--home", str(home.root)).stdout

    assert f"(session {long_id})" in text("20261130_10")  # the start of an id: the whole one is said
    assert "From s1'" in text("s1") and "(session" not in text("s1")  # exactly the session asked for
    code, out = wb(home.root, "timeline", "--session", "20261130_10")
    assert code == 0 and [r["summary"] for r in out["rows"]] == ["MEMORY + 'Deploys go through staging'"]


def test_reverting_a_review_group_undoes_both_writes_and_the_revert_can_be_reverted(home):
    learn(home)
    timeline = Timeline(home)
    preview = timeline.preview("review:s1:7")
    assert [c["undo"] for c in preview["changes"]] == [  # what each will do to the file, in words
        "remove 'Deploys go through staging' from MEMORY",
        "remove 'Prefers short answers' from USER",
    ]
    result = timeline.revert("review:s1:7")
    assert result["success"] and len(result["reverted"]) == 2 and result["refused"] == []
    assert home.memory.entries("memory") == ["Project uses Postgres 16", "Hand-written note"]
    assert home.memory.entries("user") == []
    newest = timeline.page(limit=2)
    assert [r.action for r in newest] == ["undo", "undo"]
    assert newest[0].summary.endswith(": USER − 'Prefers short answers'")  # what the undo itself did
    assert timeline.preview(newest[0].id)["changes"][0]["undo"] == "put 'Prefers short answers' back in USER"
    reverted = {r.id: r.reverted_by for r in timeline.page(group="review:s1:7")}
    assert sorted(reverted.values()) == sorted(r.id for r in newest)  # each written row names its undo
    assert timeline.revert(newest[0].id)["success"]  # reverting the revert brings the entry back
    assert "Prefers short answers" in home.memory.entries("user")
    again = {r.id: r.reverted_by for r in timeline.page(group="review:s1:7")}
    assert sorted(again.values(), key=str) == [newest[1].id, None]  # back: no longer marked
    assert timeline.page(limit=1)[0].reverted_by is None and timeline.rows_of(newest[0].id)[0].reverted_by


def test_a_revert_refused_for_drift_says_which_command_repairs_it(home):
    """An outside edit reverted after free text was appended to the file was refused for the drift
    with no word of how to resolve it (a user's trial)."""
    home.memory.add("memory", "Seeded fact", ToolContext(actor="user"))
    path = home.memory.path("memory")
    path.write_text("Seeded fact\n§\nHermes fact alpha", encoding="utf-8")
    assert home.memory.record_external_change("memory")
    row = Timeline(home).page(limit=1)[0]
    path.write_text(path.read_text(encoding="utf-8") + "trailing text with no delimiter " * 80, encoding="utf-8")
    before = path.read_bytes()
    result = Timeline(home).revert(str(row.id))
    assert not result["success"]
    assert "`workbench memory repair --target memory` (r on the Memory screen)" in result["refused"][0]["error"]
    assert path.read_bytes() == before


def test_a_row_changed_since_is_refused_with_why_and_the_rest_still_reverts(home):
    learn(home)
    home.memory.replace(
        "memory", "Deploys go through staging", "Deploys go straight to prod", ToolContext(actor="user")
    )
    timeline = Timeline(home)
    preview = timeline.preview("review:s1:7")
    assert len(preview["changes"]) == 1 and len(preview["refused"]) == 1
    assert "no longer in MEMORY.md" in preview["refused"][0]["error"]
    newest, oldest = (row.id for row in timeline.rows_of("review:s1:7"))
    # one line a row in the order revert goes (newest first), not grouped by outcome
    assert [line.split(" (")[0] for line in preview_lines(preview)] == [f"refuse row {newest}", f"revert row {oldest}"]
    result = timeline.revert("review:s1:7")
    assert not result["success"] and [r["summary"] for r in result["refused"]] == [
        "MEMORY + 'Deploys go through staging'"
    ]
    assert [line.split(" (")[0] for line in outcome_lines(result)] == [
        f"refused row {newest}",
        f"reverted row {oldest}",
    ]
    assert home.memory.entries("user") == [] and "Deploys go straight to prod" in home.memory.entries("memory")


def test_a_partly_refused_revert_prints_what_it_changed_on_stdout(home, capsys):
    """With one row refused (exit 1), every line went to stderr, the rows reverted with them."""
    from workbench.cli import main

    learn(home)
    home.memory.replace(
        "memory", "Deploys go through staging", "Deploys go straight to prod", ToolContext(actor="user")
    )
    home.close()
    assert main(["--home", str(home.root), "revert", "review:s1:7"]) == 1
    out, err = capsys.readouterr()
    assert "reverted " in out and "refused " in out and "reverted " not in err
    assert main(["--home", str(home.root), "revert", "review:s1:7"]) == 1  # nothing left to change: a refusal
    out, err = capsys.readouterr()
    assert out == "" and "refused " in err


def test_a_refused_rows_line_names_it_once_and_says_nothing_changed_only_where_true(home, capsys):
    """A refused memory row's line repeated the row and ended as if the whole revert changed nothing:
    "refused row 3 (MEMORY + '…'): Cannot undo row 3: … Nothing was changed.", under a row it reverted."""
    from workbench.cli import main

    learn(home)
    home.memory.replace(
        "memory", "Deploys go through staging", "Deploys go straight to prod", ToolContext(actor="user")
    )
    newest, _ = (row.id for row in Timeline(home).rows_of("review:s1:7"))
    [edit] = home.journal.about("memory", "memory", "Deploys go straight to prod")
    home.close()
    assert main(["--home", str(home.root), "revert", "review:s1:7", "--dry-run"]) == 1
    out, _ = capsys.readouterr()
    assert (
        f"would refuse row {newest} (MEMORY + 'Deploys go through staging'): the entry it wrote is no longer "
        f"in MEMORY.md: row {edit.id} (user replace) changed it since; revert that row first\n" in out
    )
    assert "Cannot undo" not in out and "Nothing was changed" not in out
    assert main(["--home", str(home.root), "revert", "review:s1:7"]) == 1
    out, err = capsys.readouterr()
    assert f"refused row {newest} (MEMORY + 'Deploys go through staging'): the entry it wrote" in out + err
    assert "Cannot undo" not in out + err and "Nothing was changed" not in out + err


def test_an_approved_proposal_row_names_its_proposer(home):
    home.config_path.write_text("memory:\n  write_approval: true\n", encoding="utf-8")
    home.reload_config()
    staged = home.memory.add("memory", "Deploys go through staging", REVIEW)
    assert home.approvals.approve(staged["pending_id"])["success"]
    [write] = Timeline(home).page(subsystem="memory", limit=1)
    assert (write.actor, write.summary) == ("user", "MEMORY + 'Deploys go through staging' (proposed by review)")


def test_a_staged_proposals_row_cuts_its_summary_before_a_word_not_inside_its_size(home):
    """The row of a skill create staged for approval read ``… planning meeting (130 char…``: its summary
    cut at 90 characters inside the size, where the Approvals queue now cuts before it."""
    home.config_path.write_text("skills:\n  write_approval: true\n", encoding="utf-8")
    home.reload_config()
    about = "How to brew tea for everyone before the Monday planning meeting"
    content = f"---\nname: brew\ndescription: {about}\n---\n\nBoil water.\nSteep for 3 minutes.\n"
    staged = skill_manage_tool(home, {"action": "create", "name": "brew", "content": content}, AGENT)
    [row] = Timeline(home).page(subsystem="approvals", limit=1)
    assert row.summary == f"staged skills proposal {staged['pending_id']}: create 'brew' — {about}…", row.summary


def test_an_approval_that_changed_nothing_says_so_and_offers_no_revert(home):
    """A duplicate add approved journaled only its approval, whose revert then said to revert 'the
    change it led to', though there was none."""
    home.config_path.write_text("memory:\n  write_approval: true\n", encoding="utf-8")
    home.reload_config()
    staged = home.memory.add("memory", "Deploys go through staging", REVIEW)
    home.memory.add("memory", "Deploys go through staging", ToolContext(actor="user"))  # meanwhile, by hand
    assert home.approvals.approve(staged["pending_id"])["success"]
    [approval] = Timeline(home).page(subsystem="approvals", limit=1)
    assert approval.summary.endswith("Deploys go through staging (already so: nothing changed)")
    [refused] = Timeline(home).preview(str(approval.id))["refused"]
    assert refused["error"] == "an approval that changed nothing (it read so already): nothing to revert"
    [stage] = [r for r in Timeline(home).page(target=staged["pending_id"]) if r.action == "stage"]
    [left] = Timeline(home).preview(str(stage.id))["refused"]  # the staging row: no change to point at either
    assert left["error"].endswith(f"was approved since (row {approval.id}), which changed nothing: nothing to revert")
    fresh = home.memory.add("memory", "Builds are cached", REVIEW)
    home.approvals.approve(fresh["pending_id"])
    [approval] = Timeline(home).page(subsystem="approvals", limit=1)
    assert "nothing changed" not in approval.summary
    assert "revert the change it led to" in Timeline(home).preview(str(approval.id))["refused"][0]["error"]


def test_bad_references_and_since(home, clock):
    learn(home)
    timeline = Timeline(home)
    huge = "99999999999999999999999"  # beyond SQLite's INTEGER: once an OverflowError traceback
    for ref in ("999", "nonsense", "review:nobody:1", huge, str(2**63 - 1), "²", f"review:s:{huge}"):
        with pytest.raises(WorkbenchError):
            timeline.rows_of(ref)
    with pytest.raises(WorkbenchError, match="No timeline row"):
        timeline.revert(huge)
    assert parse_since("2h", clock.now()) == clock.now() - 7200
    assert parse_since("2026-11-30", 0) == clock.now() - 12 * 3600  # midnight UTC of the fixed day
    with pytest.raises(WorkbenchError, match="is not a time"):
        parse_since("yesterday-ish", clock.now())
    clock.advance(3 * 3600)
    home.memory.add("memory", "Late note", ToolContext(actor="user"))
    assert [r.summary for r in timeline.page(since=parse_since("1h", clock.now()))] == ["MEMORY + 'Late note'"]


def test_cli_timeline_and_revert(tmp_path, home):
    learn(home)
    home.close()
    code, listed = wb(home.root, "timeline", "--actor", "review")
    assert code == 0 and [r["group"] for r in listed["rows"]] == ["review:s1:7", "review:s1:7"]
    assert set(listed["rows"][0]) == {
        "id",
        "group",
        "at",
        "actor",
        "subsystem",
        "action",
        "target",
        "summary",
        "session_id",
        "message_id",
        "source",  # an outside memory edit's Hermes call, when found; None here
        "by",  # who it is shown as made by: ``actor``, or ``agent`` for an outside edit Hermes's call made
        "revert_of",  # the group a revert group's row helped revert; None here
        "reverted_by",  # the row that undid it; None here
        "why",  # how a decision made outside was told, or why an approval failed; None here
        "change",  # what an outside skill row's change was; None here
        "file",  # the support file an outside skill row is about; None here
        "session",  # the row's own session, else its source's
        "found_at",  # when a look found an outside change well after it was made; None here
        "hermes_pass",  # an outside skill row credited to a pass of Hermes's own curator; False here
    }
    assert listed["rows"][0]["source"] is None and listed["rows"][0]["session"] == "s1"
    text = completed("timeline", "--home", str(home.root)).stdout
    assert "MEMORY + 'Project uses Postgres 16'  (session s1)" in text  # every row says its session
    proc = completed("revert", "review:s1:7", "--home", str(home.root), "--json")
    result = json.loads(proc.stdout)
    assert proc.returncode == 0 and result["success"] and len(result["reverted"]) == 2
    code, refused = wb(home.root, "revert", str(listed["rows"][0]["id"]))
    assert code == 1 and refused["refused"] and "undid it already" in refused["refused"][0]["error"]
    code, after = wb(home.root, "timeline", "--group", "review:s1:7")
    listed_now = {r["id"]: r for r in wb(home.root, "timeline")[1]["rows"]}
    undoers = {r["reverted_by"] for r in after["rows"]}  # each row names its own undo row, of the revert's group
    assert len(undoers) == 2 and {listed_now[i]["revert_of"] for i in undoers} == {"review:s1:7"}
    text = completed("timeline", "--home", str(home.root), "--group", "review:s1:7").stdout
    assert all(f"  ↶ reverted by row {r['reverted_by']}" in text for r in after["rows"])
    code, bad = wb(home.root, "timeline", "--since", "soon")
    assert code == 2 and "is not a time" in bad["error"]  # a usage error, as every malformed option


@pytest.mark.parametrize("group", ["", "  "])
def test_a_blank_group_is_a_usage_error_for_both_timeline_and_revert(home, group):
    """``timeline --group ''`` listed every row and ``revert ''`` reverted every row (a blank group was no
    filter); a blank group is now refused alike by both, as a usage error, and nothing changes."""
    learn(home)
    before = [p.read_bytes() for p in sorted(home.memories_dir.iterdir())]
    home.close()
    for args in (("timeline", "--group", group), ("revert", group), ("revert", group, "--dry-run")):
        code, said = wb(home.root, *args)
        assert code == 2 and "is not a timeline row or group" in said["error"], (args, said)
    assert [p.read_bytes() for p in sorted(home.memories_dir.iterdir())] == before
    assert len(wb(home.root, "timeline")[1]["rows"]) == 4  # (no revert row was added)


def test_an_unknown_group_says_where_a_group_is_shown(home):
    """`revert outside:zzzz` said "See the group column of `workbench timeline`", which has no such column:
    a row's group is shown in brackets after its summary. The refusal says so, and the brackets are there."""
    learn(home)
    home.close()
    code, said = wb(home.root, "revert", "outside:zzzz")
    assert code == 1 and said["error"] == (
        "No timeline group 'outside:zzzz'. `workbench timeline` shows a row's group in brackets after its "
        "summary ([outside:…], [revert:…])."
    )
    group = next(r["group"] for r in wb(home.root, "timeline")[1]["rows"] if r["group"])
    assert f"  [{group}]" in completed("timeline", "--home", str(home.root)).stdout


def test_the_text_timeline_names_the_next_page_with_this_listings_home_and_filters(tmp_path, home):
    """Run as printed, the "Older" command must list the same home's next rows, not the default home's."""
    learn(home)
    ids = [row.id for row in Timeline(home).page(limit=100)]
    home.close()
    root = str(tmp_path / "a home with spaces")
    (tmp_path / "a home with spaces").symlink_to(home.root)

    def listing(*args: str) -> str:
        proc = completed("timeline", *args)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    first = listing("--home", root, "--limit", "2")
    older = first.splitlines()[-1].split("Older: ", 1)[1].split("   Undo:")[0]
    assert older == f"workbench timeline --home '{root}' --limit 2 --before {ids[1]}"
    following = listing(*shlex.split(older)[2:])
    assert [int(line.split()[0]) for line in following.splitlines()[:-1] if line[:1] == " "] == ids[2:4]
    assert "Older:" not in following and "Older:" not in listing("--home", root, "--limit", "4")  # the last page
    filtered = listing("--home", root, "--actor", "review", "--limit", "1")
    assert "--actor review --limit 1 --before" in filtered.splitlines()[-1]


def test_the_demo_timeline_shows_its_learning_in_groups(home):
    from engine.demo import seed_demo_home
    from engine.scenarios import run_scenario

    seed_demo_home(home)
    run_scenario(home, "demo", speed=0)
    rows = Timeline(home).page(limit=1000)
    kinds = {r.group.partition(":")[0] for r in rows if r.group}
    assert kinds == {"review", "consolidation"}
    assert {r.actor for r in rows} >= {"agent", "review", "user", "curator"}
    [plan] = [r for r in rows if r.group and r.group.startswith("consolidation:")]
    assert plan.summary.startswith("staged skills proposal") and "into 'rerender-invoice'" in plan.summary
    review = next(r for r in rows if r.group and r.group.startswith("review:") and r.subsystem == "skills")
    assert review.summary == "created skill 'triage-invoice-export'" and review.session_id


def test_a_summary_shows_control_characters_as_every_screen_does(home):
    """Summaries quoted entries with repr: the Timeline showed '\\x1b[31mRED' where Memory shows ␛[31mRED."""
    assert home.memory.add("memory", "Placeholder", ToolContext(actor="user"))["success"]
    path = home.memory.path("memory")
    path.write_text("Placeholder\n§\nHand edit \x1b[31mRED\x1b[0m and \u202eevil\u202c", encoding="utf-8")
    assert home.memory.record_external_change("memory")  # journaled as an outside add
    assert home.memory.add("memory", "User's name is Maya", ToolContext(actor="user"))["success"]
    assert home.memory.add("memory", r"Logs live in C:\logs", ToolContext(actor="user"))["success"]
    summaries = [row.summary for row in Timeline(home).page()]
    assert summaries[:2] == ["MEMORY + 'Logs live in C:\\logs'", 'MEMORY + "User\'s name is Maya"']
    assert "MEMORY + 'Hand edit ␛[31mRED␛[0m and <U+202E>evil<U+202C>'" in summaries


def test_a_dry_run_on_a_record_row_says_why_as_the_revert_refuses_it(tmp_path, home):
    """'revert ID --dry-run' on a row that records a decision printed 'Nothing to revert.' and no
    reason, while the revert itself refused it with one."""
    from engine.timeline import Timeline

    home.journal.append("curator", "pause", "curator", actor="user")
    [row] = Timeline(home).page(subsystem="curator")
    preview = Timeline(home).preview(str(row.id))
    assert preview["refused"] and "a record of a decision" in preview["refused"][0]["error"]
    assert Timeline(home).revert(str(row.id))["refused"][0]["error"] == preview["refused"][0]["error"]
    home.close()
    proc = completed("revert", str(row.id), "--dry-run", "--home", str(home.root))
    assert f"would refuse row {row.id} ({row.summary}): a record of a decision, not a change" in proc.stdout
    real = completed("revert", str(row.id), "--home", str(home.root))
    assert proc.returncode == real.returncode == 1  # the dry run exits as the revert would
    said = [
        json.loads(completed("revert", str(row.id), *dry, "--json", "--home", str(home.root)).stdout or "{}").get(
            "error"
        )
        for dry in (["--dry-run"], [])
    ]
    assert said == [
        "1 row would be refused (see 'refused'); nothing would change.",
        "1 row could not be reverted (see 'refused'); nothing was changed.",
    ]


def test_a_summary_keeps_a_line_separator_apart_from_a_space(home, capsys):
    """One-line summaries folded every Unicode space: an entry holding U+2028 (or U+001F) summarised as
    the same line as its plain-space twin, so a change between them read as no change."""
    from workbench.cli import main

    assert home.memory.add("memory", "Placeholder", ToolContext(actor="user"))["success"]
    home.memory.path("memory").write_text("Placeholder\n§\nline\u2028separated\x1funit", encoding="utf-8")
    assert home.memory.record_external_change("memory")
    assert home.memory.replace_exact("memory", "line\u2028separated\x1funit", "line separated unit")["success"]
    summaries = [row.summary for row in Timeline(home).page()]
    assert "'line<U+2028>separated␟unit'" in summaries[0] and "'line separated unit'" in summaries[0]
    assert "MEMORY + 'line<U+2028>separated␟unit'" in summaries
    assert main(["--home", str(home.root), "memory", "history"]) == 0
    printed = capsys.readouterr().out
    assert "- line<U+2028>separated␟unit" in printed and "+ line separated unit" in printed
    home.memory.path("memory").write_text("Placeholder\n§\nline\u2028two\nthree", encoding="utf-8")
    assert main(["--home", str(home.root), "memory", "show"]) == 0
    shown = capsys.readouterr().out.splitlines()  # a U+2028 is a symbol on its line; a newline breaks it
    assert "  2. line<U+2028>two" in shown and "     three" in shown


def test_a_summary_shows_a_line_break_as_approvals_does(home):
    """The Timeline folded an entry's line break into a space (``'Kettle: Descale weekly'``) where Approvals
    showed it as ⏎: two lines read as one text, and a change between a break and a space read as none. One
    rule now (``textsafety.flat_line``)."""
    assert home.memory.add("memory", "Kettle:\nDescale weekly", ToolContext(actor="user"))["success"]
    assert home.memory.replace_exact("memory", "Kettle:\nDescale weekly", "Kettle: Descale weekly")["success"]
    replaced, added = (row.summary for row in Timeline(home).page(limit=2))
    assert added == "MEMORY + 'Kettle:⏎Descale weekly'"
    assert replaced == "MEMORY 'Kettle:⏎Descale weekly' → 'Kettle: Descale weekly'"
    home.config_path.write_text("memory:\n  write_approval: true\n", encoding="utf-8")
    home.reload_config()
    staged = home.memory.add("memory", "Tea:\tgreen\nCoffee: none", REVIEW)
    [row] = Timeline(home).page(subsystem="approvals", limit=1)
    assert row.summary.endswith(": add to memory: Tea:⇥green⏎Coffee: none"), row.summary
    assert flat_line(home.approvals.get(staged["pending_id"]).summary) in row.summary  # as the queue shows it


def test_only_a_first_look_at_nothing_is_left_out_of_listings(home):
    """The empty baseline is bookkeeping; a seen row hand-damaged to lack its entries is still listed."""
    home.memory.catch_up(("user",))  # no USER.md: an empty baseline
    home.journal.append("memory", "seen", "memory", actor="external", detail={"file_sha": "x"})
    assert [(r.action, r.target) for r in Timeline(home).page()] == [("seen", "memory")]
    assert [(r.action, r.target) for r in home.memory.history()] == [("seen", "memory")]


def test_a_hermes_proposal_journaled_before_its_turn_was_stored_finds_its_session_later(home):
    """Hermes stores a turn's messages after its tool ran: a proposal journaled the moment its record
    appeared names no session, until the call that staged it is in state.db."""
    from tests.hermes_support import hermes_record

    pid = "00a1b2c3"
    hermes_record(home, pid, {"action": "add", "target": "memory", "content": "Kettle descales monthly"})
    home.approvals.catch_up()
    timeline = Timeline(home)
    [staged] = [r for r in timeline.with_sources(timeline.page()) if r.target == pid]
    assert staged.session is None
    archive = home.archive
    archive.create_session("hermes-tea")
    call = {"id": "c1", "type": "function", "function": {"name": "memory", "arguments": '{"action": "add"}'}}
    archive.append_message("hermes-tea", "user", "remember the kettle")
    message = archive.append_message("hermes-tea", "assistant", "", tool_calls=[call])
    result = json.dumps({"success": True, "staged": True, "pending_id": pid})
    archive.append_message("hermes-tea", "tool", result, tool_name="memory", tool_call_id="c1")
    [staged] = [r for r in timeline.with_sources(timeline.page()) if r.target == pid]
    assert (staged.session, staged.source.message_id) == ("hermes-tea", message)
    (home.pending_dir / "memory" / f"{pid}.json").unlink()  # rejected in Hermes
    home.approvals.catch_up()
    rows = timeline.with_sources(timeline.page(session_id="hermes-t"))
    assert [(r.action, r.actor, r.session) for r in rows] == [
        ("reject", "external", "hermes-tea"),
        ("stage", "agent", "hermes-tea"),
    ]
    home.approvals.catch_up()
    assert len(timeline.page(target=pid)) == 2  # journaled once


def test_archiving_deleting_and_pruning_sessions_are_on_the_timeline_and_archiving_reverts(home, clock):
    """They change what the agent can recall (session_search, lists), so the Timeline shows them;
    a title, a reopen or a new system prompt does not."""
    archive = home.archive
    for sid in ("s1", "s2", "s3"):
        archive.create_session(sid, source="telegram" if sid == "s3" else "cli", title=f"Talk {sid}")
        archive.append_messages(sid, [{"role": "user", "content": f"hello from {sid}"}])
    archive.create_session("s1b", parent_session_id="s1")
    archive.end_session("s1", "compression")
    archive.set_title("s2", "Renamed")
    archive.set_archived("s1")
    archive.delete_session("s2", live=True)
    archive.end_session("s3", "user_exit")
    clock.set(clock.now() + 40 * 86400)
    archive.prune(30, "telegram")
    timeline = Timeline(home)
    assert [r.summary for r in timeline.page(subsystem="sessions")] == [
        "pruned 1 ended session older than 30 days",
        "deleted session 'Renamed', 1 message",
        "archived session 'Talk s1' with 1 more of its conversation: hidden from lists and session_search",
    ]
    [archived] = timeline.page(subsystem="sessions", target="s1")
    preview = timeline.preview(str(archived.id))
    assert preview["changes"][0]["undo"] == "unarchive session s1"
    [deleted] = timeline.page(subsystem="sessions", target="s2")
    assert "nothing was kept to put back" in timeline.preview(str(deleted.id))["refused"][0]["error"]
    assert timeline.revert(str(archived.id))["success"]
    assert not archive.get_session("s1").archived and not archive.get_session("s1b").archived
    assert timeline.page(limit=1)[0].summary.startswith("revert of row 6: unarchived session 'Talk s1' with 1 more")


def test_a_session_archive_row_reverts_only_while_the_session_is_as_it_left_it(home):
    """Unarchiving twice journaled a second row that changed nothing, and reverting a row whose session
    was archived again, deleted or changed by Hermes since promised a change it could not make."""
    archive = home.archive
    for sid in ("s1", "s2", "s3"):
        archive.create_session(sid, source="cli")
        archive.append_messages(sid, [{"role": "user", "content": f"hello from {sid}"}])
    assert archive.set_archived("s1") == 1 and archive.set_archived("s1") == 0  # the second changes nothing
    timeline = Timeline(home)
    assert len(timeline.page(subsystem="sessions", target="s1")) == 1
    [first] = timeline.page(subsystem="sessions", target="s1")
    assert archive.set_archived("s1", False) == 1
    refusal = timeline.preview(str(first.id))["refused"][0]["error"]
    assert refusal.endswith("(unarchive) changed session s1 since")
    archive.set_archived("s2")
    [s2] = timeline.page(subsystem="sessions", target="s2")
    with archive.conn() as conn:  # unarchived by Hermes, which journals nothing of ours
        conn.execute("UPDATE sessions SET archived = 0 WHERE id = 's2'")
    assert timeline.preview(str(s2.id))["refused"][0]["error"] == "session s2 is listed already"
    archive.set_archived("s3")
    [s3] = timeline.page(subsystem="sessions", target="s3")
    with archive.conn() as conn:  # deleted by Hermes
        conn.execute("DELETE FROM messages WHERE session_id = 's3'")
        conn.execute("DELETE FROM sessions WHERE id = 's3'")
    result = timeline.revert(str(s3.id))
    assert not result["success"] and result["refused"][0]["error"] == "session s3 is no longer in state.db"


def test_archiving_the_new_segment_of_an_archived_chain_names_and_reverts_it_alone(home, clock):
    """Archiving a segment Hermes compressed out of an archived chain journaled the whole chain:
    'with 2 more of its conversation', and its revert was refused for the earlier archive."""
    archive = home.archive
    for parent, child in ((None, "c1"), ("c1", "c2"), ("c2", "c3")):
        clock.advance(1)
        archive.create_session(child, parent_session_id=parent, title="Garden plan" if parent is None else None)
        archive.end_session(child, "compression")
    archive.set_archived("c1")
    clock.advance(1)
    archive.create_session("c4", parent_session_id="c3")  # Hermes goes on after the archive
    assert archive.set_archived("c4") == 1
    timeline = Timeline(home)
    row = timeline.page(subsystem="sessions", limit=1)[0]
    assert row.summary == "archived session c4: hidden from lists and session_search"  # not the chain's title
    assert timeline.revert(str(row.id))["success"]
    assert [s.id for s in archive.list_sessions()] == ["c4"]  # the earlier archive stands


def test_an_archive_row_reverts_exactly_the_sessions_it_names(home):
    """Rows journaled before archiving took the compression family alone named a branch's parent
    too; their revert left the parent archived, saying '1 session(s) unarchived'."""
    archive = home.archive
    archive.create_session("p")
    archive.end_session("p", "branched")
    archive.create_session("b", parent_session_id="p")
    with archive.conn() as conn:  # archived, and journaled, as an older workbench did: the parent with it
        conn.execute("UPDATE sessions SET archived = 1")
    row = home.journal.append("sessions", "archive", "b", actor="user", after="1", detail={"sessions": ["p", "b"]})
    assert Timeline(home).revert(str(row))["success"]
    assert [s.archived for s in archive.list_sessions(include_archived=True)] == [False, False]


def test_an_outside_edit_of_several_entries_is_one_group_reverted_at_once(home):
    """Emptying MEMORY.md in an editor journaled one ungrouped remove row per entry: undoing it took
    one revert per entry, in the right order."""
    entries = ["Uses Postgres 16", "Deploys on Fridays", "Kettle descales monthly"] + [f"Fact {n}" for n in range(9)]
    for entry in entries:
        assert home.memory.add("memory", entry, None)["success"]
    home.memory.path("memory").write_text("", encoding="utf-8")
    home.memory.record_external_change("memory")
    timeline = Timeline(home)
    removes = timeline.page(subsystem="memory", actor="external")
    assert len(removes) == 12 and len({r.group for r in removes}) == 1 and removes[0].group.startswith("outside:")
    [line] = {describe_group(removes)}
    assert line == "outside edit of MEMORY (12 rows): 12 memory entries removed"
    result = timeline.revert(removes[0].group)
    assert result["success"] and len(result["reverted"]) == 12
    assert home.memory.entries("memory") == entries  # each back where it was, in order
    home.memory.path("memory").write_text("\n§\n".join(entries[:-1]), encoding="utf-8")  # one entry: no group
    home.memory.record_external_change("memory")
    newest = timeline.page(limit=1)[0]
    assert (newest.action, newest.group) == ("remove", None)


def test_a_group_revert_leaves_an_outside_removal_whose_entry_is_back(home):
    """Such a row was refused, so the group's revert put the other entry back but reported a failure."""
    for entry in ("Alpha fact", "Beta fact", "Gamma fact"):
        assert home.memory.add("memory", entry, None)["success"]
    home.memory.path("memory").write_text("Alpha fact", encoding="utf-8")
    home.memory.record_external_change("memory")
    timeline = Timeline(home)
    group = timeline.page(limit=1)[0].group
    home.memory.path("memory").write_text("Alpha fact\n§\nBeta fact", encoding="utf-8")  # Beta is back
    home.memory.record_external_change("memory")
    preview = timeline.preview(group)
    assert preview["refused"] == [] and [c["summary"] for c in preview["changes"]] == ["MEMORY − 'Gamma fact'"]
    assert preview["skipped"][0]["reason"] == "the entry it removed is already back in MEMORY.md: nothing to revert"
    result = timeline.revert(group)
    assert result["success"] and len(result["reverted"]) == 1 and len(result["skipped"]) == 1
    assert home.memory.entries("memory") == ["Alpha fact", "Beta fact", "Gamma fact"]
    beta_removed = result["skipped"][0]["id"]
    alone = timeline.revert(str(beta_removed))  # named alone, it is refused, saying why
    assert not alone["success"] and "already back in MEMORY.md" in alone["refused"][0]["error"]
    assert home.memory.add("memory", "Delta fact", None)["success"]  # then: one row reverted alone first
    home.memory.path("memory").write_text("Alpha fact\n§\nBeta fact", encoding="utf-8")
    home.memory.record_external_change("memory")
    second = timeline.page(limit=1)[0].group
    gamma_removed = next(r.id for r in timeline.page(limit=2) if "Gamma" in r.summary)
    undo = timeline.revert(str(gamma_removed))
    assert undo["success"]
    again = timeline.revert(second)  # the Gamma row was refused: "row N undid it already"
    assert (
        again["success"]
        and again["refused"] == []
        and [r["summary"] for r in again["reverted"]] == ["MEMORY − 'Delta fact'"]
    )
    [left] = again["skipped"]
    assert left["id"] == gamma_removed and left["reason"].endswith("undid it already: nothing to revert")
    assert sorted(home.memory.entries("memory")) == ["Alpha fact", "Beta fact", "Delta fact", "Gamma fact"]


def test_a_dry_run_of_a_group_with_nothing_to_revert_says_so(home, capsys):
    """It exited 1 after its 'would leave' lines with no word of why; the revert itself said why."""
    from workbench.cli import main

    for entry in ("Alpha fact", "Beta fact", "Gamma fact"):
        assert home.memory.add("memory", entry, None)["success"]
    home.memory.path("memory").write_text("Alpha fact", encoding="utf-8")
    home.memory.record_external_change("memory")
    group = Timeline(home).page(limit=1)[0].group
    home.memory.path("memory").write_text("Alpha fact\n§\nBeta fact\n§\nGamma fact", encoding="utf-8")
    home.memory.record_external_change("memory")
    assert main(["revert", group, "--dry-run", "--home", str(home.root)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" (")[0] for line in lines[:2]] == ["would leave row 5", "would leave row 4"]
    assert lines[2:] == ["error: Nothing in it changes what the agent knows, so there is nothing to revert."]


def test_a_rename_does_not_stop_an_archive_being_reverted_but_a_later_change_to_its_chain_does(home):
    archive = home.archive
    archive.create_session("c1", source="cli")
    archive.create_session("c2", parent_session_id="c1")
    archive.end_session("c1", "compression")
    archive.set_archived("c1")
    archive.set_title("c1", "Renamed after archiving")  # not an archive change
    timeline = Timeline(home)
    row = next(r for r in timeline.page(subsystem="sessions") if r.action == "archive")
    assert timeline.preview(str(row.id))["refused"] == []
    archive.set_archived("c2", False)  # the chain unarchived through its other segment
    archive.set_archived("c2", True)
    refusal = timeline.preview(str(row.id))["refused"][0]["error"]
    assert refusal.endswith("(unarchive) changed session c1 since")


def test_a_detail_damaged_by_hand_does_not_break_a_search_or_a_group(home):
    for entry in ("Uses Postgres 16", "Deploys on Fridays"):
        home.memory.add("memory", entry, None)
    conn = home.journal.connection()
    with conn:  # one row as the Curator's, one as an outside edit's, both details broken
        conn.execute("UPDATE journal SET detail = '{not json', actor = 'curator' WHERE after = 'Uses Postgres 16'")
        conn.execute("UPDATE journal SET detail = '{not json', actor = 'external' WHERE after = 'Deploys on Fridays'")
    timeline = Timeline(home)
    assert timeline.page(text="nowhere-to-be-found") == []
    for group in ("outside:abcd", "curator:run1", "consolidation:0000aaaa"):
        assert timeline.page(group=group) == []


def test_a_group_reverted_writes_one_group_that_reverts_at_once(home):
    """Reverting an outside edit of several entries wrote one loose undo row per entry: taking the
    revert back meant one revert per row."""
    entries = ["Uses Postgres 16", "Deploys on Fridays", "Kettle descales monthly"]
    for entry in entries:
        assert home.memory.add("memory", entry, None)["success"]
    home.memory.path("memory").write_text("", encoding="utf-8")
    home.memory.record_external_change("memory")
    timeline = Timeline(home)
    [group] = {r.group for r in timeline.page(subsystem="memory", actor="external")}
    assert timeline.revert(group)["success"] and home.memory.entries("memory") == entries
    undos = timeline.page(limit=3)
    assert {r.action for r in undos} == {"undo"} and len({r.group for r in undos}) == 1
    [revert] = {r.group for r in undos}
    assert (
        revert.startswith("revert:") and describe_group(undos) == f"revert of {group} (3 rows): 3 memory entries undone"
    )
    assert all(r.revert_of == group for r in undos)
    assert all(home.journal.get(r.id).detail["revert_of"] == group for r in undos)
    assert timeline.revert(revert)["success"] and home.memory.entries("memory") == []  # the edit made again
    assert timeline.page(limit=1)[0].group not in (None, revert)  # that revert is a group of its own
    timeline.revert(str(timeline.page(limit=1)[0].id))  # a single row's revert: one row, no group
    assert timeline.page(limit=1)[0].group is None


def test_session_rows_name_the_session_by_its_title_or_first_message(home):
    """At 80 columns an archive row showed its session's id twice (the session column and the
    summary) and never what the session was about."""
    archive = home.archive
    archive.create_session("u1", source="cli")
    archive.append_message("u1", "user", "How long do I steep oolong?\x1b[2J")
    archive.create_session("t1", source="cli", title="Cups talk")
    archive.create_session("bare", source="cli")
    for sid in ("u1", "t1", "bare"):
        archive.set_archived(sid)
    archive.delete_session("u1", live=True)
    summaries = [row.summary for row in Timeline(home).page(subsystem="sessions")]
    assert summaries == [
        "deleted session “How long do I steep oolong?␛[2J”, 1 message",
        "archived session bare: hidden from lists and session_search",
        "archived session 'Cups talk': hidden from lists and session_search",
        "archived session “How long do I steep oolong?␛[2J”: hidden from lists and session_search",
    ]
    archive.set_title("t1", "Cup talk")  # journaled, not listed: said plainly where a row is read by id
    [renamed] = home.journal.query(subsystem="sessions", limit=1)
    assert summarize(renamed) == "renamed session t1: 'Cups talk' → 'Cup talk'"


def test_a_tag_marks_the_rows_begun_under_it_and_no_row_settled_meanwhile(home):
    """A killed process's pending row, settled (committed with a detail) while a group was being
    reverted, joined the revert's group, so reverting that group would undo it too."""
    journal = home.journal
    killed = journal.begin("sessions", "title", "s1", actor="user", detail={"title": "old"})
    with tagged("user", revert="abcd"):
        mine = journal.begin("memory", "add", "memory", actor="user", detail={"op": "add"})
        journal.commit(mine, detail={"op": "add", "file_sha": "x"})
        journal.commit(killed, detail={"title": "old", "settled": "done"})
        theirs = journal.append("memory", "add", "memory", actor="external")
    assert journal.get(mine).detail == {"op": "add", "file_sha": "x", "revert": "abcd"}
    assert journal.get(killed).detail == {"title": "old", "settled": "done"}
    assert "revert" not in journal.get(theirs).detail


def test_a_filter_too_long_to_search_says_so_not_that_a_database_is_damaged(home, tmp_path):
    """A 50,001-character search reached SQLite's LIKE limit and was reported as a file that could not be
    read as an SQLite database, with advice to move it aside (so losing it)."""
    home.memory.add("memory", "Uses Postgres 16", ToolContext(actor="user"))
    for filters in ({"text": "x" * 50_001}, {"session_id": "s" * 2_000}):
        with pytest.raises(WorkbenchError) as refused:
            Timeline(home).page(**filters)
        assert "is too long" in refused.value.message and "SQLite" not in refused.value.message
    code, out = wb(home.root, "timeline", "--search", "x" * 50_001)
    assert code == 1 and "search text is too long (50,001 characters; at most 1,000)" in out["error"]


def test_the_end_of_a_session_id_finds_it_as_the_column_shows_it(home):
    """The session column shows an id's end (…155739_27beb3), but only an id's start found it."""
    timeline = Timeline(home)
    for sid in ("20261204_155739_27beb3", "20261204_160000_aa_bb", "20261204_170000_xa_bb"):
        home.memory.add("memory", f"From {sid}", ToolContext(actor="agent", session_id=sid))
    assert [r.session_id for r in timeline.page(session_id="27beb3")] == ["20261204_155739_27beb3"]
    assert [r.session_id for r in timeline.page(session_id="155739_27beb3")] == ["20261204_155739_27beb3"]
    assert [r.session_id for r in timeline.page(session_id="…155739_27beb3")] == ["20261204_155739_27beb3"]
    assert timeline.page(session_id="a_bb") == []  # the end of two: neither is picked
    assert [r.session_id for r in timeline.page(session_id="0_aa_bb")] == ["20261204_160000_aa_bb"]
    assert timeline.page(session_id="%") == [] and timeline.page(session_id="_") == []  # LIKE's signs are text


def test_a_reverted_skill_change_is_marked_until_its_revert_is_reverted(home):
    """Only memory's undo named the row it undid; a revert of any other kind left its row unmarked."""
    from tests.test_skills_support import write_skill

    write_skill(home, "deploy")
    home.curator.pin("deploy")
    timeline = Timeline(home)
    [pin] = timeline.page(limit=1)
    assert pin.reverted_by is None and timeline.revert(pin.id)["success"]
    unpin, pinned = timeline.page(limit=2)
    assert (unpin.action, unpin.reverted_by, pinned.reverted_by) == ("unpin", None, unpin.id)
    assert timeline.revert(unpin.id)["success"]  # pinned again: neither change stands undone
    repin, unpin, pinned = timeline.page(limit=3)
    assert (repin.reverted_by, unpin.reverted_by, pinned.reverted_by) == (None, repin.id, None)
    assert home.journal.undone_by([pinned.id, unpin.id, repin.id]) == {unpin.id: repin.id}


def test_a_replace_that_changes_only_the_end_of_a_long_entry_reads_apart(home):
    """Both versions were cut at the same place: the summary and the revert question showed the
    same text twice when a date at the end was all that changed."""
    old = "The deploy target for service api is staging-3, owned by the platform team since 2026-11-02"
    home.memory.add("memory", old, ToolContext(actor="user"))
    home.memory.replace("memory", "since 2026-11-02", old.replace("11-02", "12-04"), ToolContext(actor="user"))
    timeline = Timeline(home)
    [row] = timeline.page(limit=1)
    assert row.summary == (
        "MEMORY '…owned by the platform team since 2026-11-02' → '…owned by the platform team since 2026-12-04'"
    )
    [change] = timeline.preview(row.id)["changes"]
    assert change["undo"] == (
        "change '…owned by the platform team since 2026-12-04' back to "
        "'…owned by the platform team since 2026-11-02' in MEMORY"
    )
    home.memory.add("memory", "Tea at four", ToolContext(actor="user"))
    home.memory.replace("memory", "Tea at four", "Tea at five", ToolContext(actor="user"))
    assert timeline.page(limit=1)[0].summary == "MEMORY 'Tea at four' → 'Tea at five'"  # short: whole


def test_an_undo_of_an_undo_of_an_undo_still_marks_the_row_and_refuses_it_as_undone(home):
    """Only two undos deep were followed: a third left the first row unmarked, and reverting it
    was refused as if its entry had been changed by someone else."""
    home.memory.add("memory", "Kettle descales monthly", ToolContext(actor="user"))
    timeline = Timeline(home)
    [write] = timeline.page(limit=1)
    chain = [write.id]
    for _ in range(3):
        assert timeline.revert(chain[-1])["success"]
        chain.append(timeline.page(limit=1)[0].id)
    assert "Kettle descales monthly" not in home.memory.entries("memory")
    marks = {r.id: r.reverted_by for r in timeline.page(limit=4)}
    assert marks == {chain[0]: chain[1], chain[1]: None, chain[2]: chain[3], chain[3]: None}
    refused = timeline.revert(write.id)
    assert refused["refused"][0]["error"] == f"row {chain[1]} undid it already: nothing to revert"
    assert timeline.revert(chain[3])["success"]  # a fourth: back again, no row marked but the third
    assert {r.id: r.reverted_by for r in timeline.page(limit=5)}[chain[0]] is None
    assert "Kettle descales monthly" in home.memory.entries("memory")


def test_an_undo_naming_itself_or_a_newer_row_is_no_undo(home):
    """A detail damaged by hand (a row naming itself, or two naming each other) made the chain walk
    loop for ever: the Timeline, revert and memory undo hung."""
    home.memory.add("memory", "Tea at four", ToolContext(actor="user"))
    home.memory.add("memory", "Coffee at nine", ToolContext(actor="user"))
    home.memory.add("memory", "Milk at noon", ToolContext(actor="user"))
    first, second, third = sorted(row.id for row in Timeline(home).page())
    conn = home.journal.connection()
    for row, names in ((first, second), (second, first), (third, third)):
        conn.execute("UPDATE journal SET detail = ? WHERE id = ?", (json.dumps({"undo_of": names}), row))
    conn.commit()
    assert home.journal.undone_by([first, second, third]) == {first: second}  # only a newer row undoes
    marks = {row.id: row.reverted_by for row in Timeline(home).page()}
    assert marks == {third: None, second: None, first: second}


def test_a_restore_or_a_rollback_made_outside_the_timeline_marks_the_row_it_undoes(home):
    """Only the Timeline's revert named the row it undid: the Approvals screen's u, pending restore
    and curator rollback left the rejection or the skill change unmarked."""
    from tests.test_skills_support import write_skill

    home.config_path.write_text("memory:\n  write_approval: true\n")
    home.reload_config()
    staged = home.memory.add("memory", "Tea at four", ToolContext(actor="agent"))
    home.approvals.reject(staged["pending_id"])
    [reject] = home.journal.query(subsystem="approvals", actions=("reject",), limit=1)
    home.approvals.restore(staged["pending_id"])
    write_skill(home, "deploy")
    archived = home.curator.archive("deploy", actor="user")
    home.curator.rollback(archived["ledger_id"])
    [archive] = home.journal.query(subsystem="skills", actions=("archive",), limit=1)
    marks = {row.id: row.reverted_by for row in Timeline(home).page()}
    assert marks[reject.id] is not None and marks[archive.id] is not None


def test_a_read_only_journal_without_the_undo_index_marks_rows_from_the_newest_up(home):
    """A journal an older version made has no ``undo_of`` index, and a read-only home never adds it:
    each page's marks scanned the whole journal. They are found by id from the oldest row asked."""
    for fact in ("Tea at four", "Coffee at nine"):
        home.memory.add("memory", fact, ToolContext(actor="user"))
    timeline = Timeline(home)
    coffee = next(r.id for r in timeline.page() if "Coffee" in r.summary)
    assert timeline.revert(coffee)["success"]
    conn = home.journal.connection()
    conn.execute("DROP INDEX idx_journal_undo_of")
    conn.commit()
    read_only = open_home(home.root, read_only=True)
    try:
        marks = {r.id: r.reverted_by for r in Timeline(read_only).page()}
        undo = max(marks)
        assert marks[coffee] == undo and marks[undo] is None and list(marks.values()).count(None) == len(marks) - 1
        plan = read_only.journal.connection().execute(f"EXPLAIN QUERY PLAN {UNDOS_OF}", ("[1]", 1)).fetchall()
        assert any("INTEGER PRIMARY KEY (rowid>?)" in step[-1] for step in plan), plan
    finally:
        read_only.close()


def test_a_failed_approval_says_why_in_the_row_the_listing_and_json(home, clock):
    """An ``approval failed`` row never said why, though its journal row keeps the refusal: a patch whose
    old_string is gone, and a Hermes record whose skill's name holds a line break and an escape, kept to one line."""
    home.skills.manage(
        {"action": "create", "name": "brew", "content": "---\nname: brew\ndescription: tea\n---\nBoil.\n"}
    )
    home.config_path.write_text("skills:\n  write_approval: true\n", encoding="utf-8")
    home.reload_config()
    patch = skill_manage_tool(
        home, {"action": "patch", "name": "brew", "old_string": "Boil.", "new_string": "Heat."}, AGENT
    )
    (home.skills_dir / "brew" / "SKILL.md").write_text(
        "---\nname: brew\ndescription: tea\n---\nWarm.\n", encoding="utf-8"
    )
    unknown = {"action": "patch", "name": "br\x1b[2J\new", "old_string": "Boil.", "new_string": "Heat."}
    hermes_record(home, "0000bb01", unknown, created_at=clock.now(), subsystem="skills")
    for pid in (patch["pending_id"], "0000bb01"):
        assert not home.approvals.approve(pid)["success"]
    failed = [r for r in Timeline(home).page(subsystem="approvals") if r.action == "approve_failed"]
    assert [r.why for r in failed] == [
        "Skill 'br␛[2J⏎ew' not found.",
        "Could not find old_string in SKILL.md of skill 'brew'. View the current text and copy the exact passage "
        "to replace.",
    ]
    assert all(r.why is None for r in Timeline(home).page() if r.action != "approve_failed")
    home.close()
    code, listed = wb(home.root, "timeline", "--subsystem", "approvals")
    assert [r["why"] for r in listed["rows"] if r["action"] == "approve_failed"] == [r.why for r in failed]
    text = completed("timeline", "--home", str(home.root), "--subsystem", "approvals").stdout.splitlines()
    row = next(i for i, line in enumerate(text) if "approval failed: skills proposal 0000bb01" in line)
    assert text[row + 1] == f"{'':>9}why: {failed[0].why}"


def test_an_actor_filter_names_the_actors_a_row_can_have():
    """`actor:hermes` matched nothing unsaid: Hermes's own changes are `external`."""
    assert parse_filter("actor:external subsystem:memory") == {"actor": "external", "subsystem": "memory"}
    with pytest.raises(WorkbenchError, match=r"'hermes' is not one of agent, review, curator, user, external \("):
        parse_filter("actor:hermes")
    with pytest.raises(
        WorkbenchError, match="outside the workbench are external, save a memory edit a stored Hermes call made: agent"
    ):
        parse_filter("actor:hermes")
    with pytest.raises(WorkbenchError, match="'␛\\[2J' is not one of"):  # (a control char shown as a symbol)
        parse_filter("subsystem:\x1b[2J")


def _shown_everywhere(home):
    """A journal of many kinds of row: memory writes and an undo, skill writes, a pin, an archive and a
    restore by the workbench, a pin and an edit made outside it, proposals staged, approved and
    rejected, a session archived and one deleted, and reverts of each kind."""
    learn(home)
    brew = "---\nname: brew\ndescription: Brew tea\n---\n\nSteep 3 minutes.\n"
    assert home.skills.manage({"action": "create", "name": "brew", "content": brew})["success"]
    assert home.skills.manage({"action": "create", "name": "kettle", "content": brew.replace("brew", "kettle")})[
        "success"
    ]
    assert home.curator.pin("kettle")["success"] and home.curator.unpin("kettle")["success"]
    assert home.curator.archive("kettle")["success"] and home.curator.restore("kettle")["success"]
    home.skills.outside.record()  # the first look: a baseline
    usage_file = home.skills_dir / ".usage.json"
    usage = json.loads(usage_file.read_text())
    usage.setdefault("brew", {})["pinned"] = True
    usage_file.write_text(json.dumps(usage))
    (home.skills_dir / "brew" / "SKILL.md").write_text(brew.replace("3 minutes", "4 minutes"))
    home.skills.outside.record()
    assert home.skills.manage({"action": "create", "name": "teapot", "content": brew.replace("brew", "teapot")})[
        "success"
    ]
    teapot = {"action": "write_file", "name": "teapot", "file_path": "references/notes.md", "file_content": "warm"}
    assert home.skills.manage(teapot)["success"]
    home.skills.outside.record()
    shutil.rmtree(home.skills_dir / "teapot")  # removed outside, with its support file
    home.skills.outside.record()
    home.memory.replace("memory", "Hand-written", "A note written by hand", ToolContext(actor="user"))
    home.memory.remove("user", "short answers", ToolContext(actor="user"))
    newest = Timeline(home).page(subsystem="memory", limit=1)[0]
    assert Timeline(home).revert(newest.id)["reverted"]
    home.config_path.write_text("memory:\n  write_approval: true\n", encoding="utf-8")
    home.reload_config()
    approved = home.memory.add("memory", "Builds are cached", REVIEW)
    assert home.approvals.approve(approved["pending_id"])["success"]
    rejected = home.memory.add("user", "Likes long answers", AGENT)
    assert home.approvals.reject(rejected["pending_id"])["success"]
    archive = home.archive
    for sid, title in (("s-kept", "Garden plans"), ("s-gone", "Old chat")):
        archive.create_session(sid, source="cli", title=title)
        archive.append_messages(sid, [{"role": "user", "content": "hello"}])
    archive.set_archived("s-kept", True)
    archive.delete_session("s-gone", live=True)
    for kind in ({"subsystem": "sessions", "target": "s-kept"}, {"subsystem": "skills", "target": "kettle"}):
        assert Timeline(home).revert(Timeline(home).page(**kind, limit=1)[0].id)["reverted"]  # (a revert row of each)


def test_a_search_finds_a_row_by_the_words_its_summary_shows(home):
    """`pinned` and `outside` found no "skill 'brew' pinned outside the workbench" row: the search ran on
    the stored fields only. Now every word of a row's summary, and every two words side by side as it
    shows them, find that row."""
    _shown_everywhere(home)
    timeline = Timeline(home)
    rows = timeline.page(limit=1000)
    summaries = [r.summary for r in rows]
    assert any("pinned outside the workbench" in s for s in summaries), summaries
    for text in ("pinned", "outside", "pinned outside the workbench", "skill 'brew' pinned", "PINNED OUTSIDE"):
        found = [r.summary for r in timeline.page(text=text)]
        assert "skill 'brew' pinned outside the workbench (brew/SKILL.md)" in found, (text, found)
    for row in rows:
        words = row.summary.split()
        for text in {*words, *(" ".join(pair) for pair in zip(words, words[1:], strict=False))}:
            assert row.id in [r.id for r in timeline.page(text=text, limit=1000)], (text, row.summary)
    assert [r.action for r in timeline.page(text="revert of row")] == ["rollback", "unarchive", "undo"]
    assert [r.action for r in timeline.page(text="user profile")] == ["reject", "stage"]
    assert timeline.page(text="nothing shows this") == []
    assert [r.summary for r in timeline.page(text="postgres")] == ["MEMORY + 'Project uses Postgres 16'"]  # as before
    # a skill removed outside names the support files it had (its diff shows only SKILL.md)
    assert [r.summary for r in timeline.page(text="notes.md")] == [
        "skill 'teapot' removed outside the workbench (teapot/SKILL.md; it had references/notes.md)"
    ]


def test_a_search_finds_the_last_words_of_a_summary_with_no_proposer(home):
    """The words ending a summary were known to the search only glued to " (proposed by …)", which a row
    with no proposer never shows: "3 entries" missed "MEMORY first look: 3 entries already there"."""
    (home.memories_dir / "MEMORY.md").write_text("one\n§\ntwo\n§\nthree", encoding="utf-8")
    home.memory.add("memory", "four", ToolContext(actor="user"))  # (the first look is journaled before it)
    timeline = Timeline(home)
    [look] = [r for r in timeline.page(limit=100) if "first look" in r.summary]
    assert look.summary == "MEMORY first look: 3 entries already there"
    for text in ("3 entries", "entries already there", "ies already", "already there"):
        assert look.id in [r.id for r in timeline.page(text=text)], text


def test_the_cli_search_finds_the_words_a_row_shows(home):
    _shown_everywhere(home)
    home.close()
    shown = subprocess.run(
        [
            sys.executable,
            "-m",
            "workbench",
            "--home",
            str(home.root),
            "--json",
            "timeline",
            "--search",
            "pinned outside",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    summaries = [r["summary"] for r in json.loads(shown.stdout)["rows"]]
    assert summaries == ["skill 'brew' pinned outside the workbench (brew/SKILL.md)"], shown.stderr


def test_every_revert_reads_as_a_revert_of_its_row_and_the_cli_says_what_it_did(home, capsys):
    """A revert read three ways: `undo of row N: MEMORY − 'X'` (memory), `rolled back patch of skill
    'x' (ledger L)` (skills), and with no word of a revert at all (`unarchived session …`, `unpinned
    skill 'x'`). Now every row that took another back reads `revert of row N:` and what it did, and
    `workbench revert` says what it did in the words its --dry-run used."""
    from workbench.cli import main

    learn(home)
    brew = "---\nname: brew\ndescription: Brew tea\n---\n\nSteep 3 minutes.\n"
    assert home.skills.manage({"action": "create", "name": "brew", "content": brew})["success"]
    patched = home.skills.manage({"action": "patch", "name": "brew", "old_string": "3", "new_string": "4"})
    assert home.curator.pin("brew")["success"]
    home.archive.create_session("s-kept", source="cli", title="Garden plans")
    home.archive.append_messages("s-kept", [{"role": "user", "content": "hello"}])
    home.archive.set_archived("s-kept", True)
    home.config_path.write_text("memory:\n  write_approval: true\n", encoding="utf-8")
    home.reload_config()
    assert home.approvals.reject(home.memory.add("user", "Likes long answers", AGENT)["pending_id"])["success"]
    timeline = Timeline(home)
    rows = {(r.subsystem, r.action): r for r in timeline.page(limit=100)}
    memory_row = next(r for r in timeline.page(text="Hand-written note"))
    taken_back = [
        memory_row,
        rows["skills", "patch"],
        rows["skills", "pin"],
        rows["sessions", "archive"],
        rows["approvals", "reject"],
    ]
    assert patched["journal_id"] == rows["skills", "patch"].id
    home.close()
    for row in taken_back:
        assert main(["--home", str(home.root), "revert", str(row.id), "--dry-run"]) == 0
        would = capsys.readouterr().out.strip()
        assert main(["--home", str(home.root), "revert", str(row.id)]) == 0
        did = capsys.readouterr().out.strip()
        assert would.startswith(f"would revert row {row.id} ({row.summary}): ")
        first, undo = did.split("\n")  # (a revert is rows of its own: it names the one it wrote)
        assert first == would.replace("would revert", "reverted", 1)
        assert re.fullmatch(r"  undo: workbench revert \d+", undo), undo
    reverts = {r.action: r.summary for r in Timeline(open_home(home.root)).page(limit=5)}
    ids = [row.id for row in taken_back]
    assert reverts == {
        "undo": f"revert of row {ids[0]}: MEMORY − 'Hand-written note'",
        "rollback": f"revert of row {ids[1]}: rolled back patch of skill 'brew' (ledger {patched['ledger_id']})",
        "unpin": f"revert of row {ids[2]}: unpinned skill 'brew'",
        "unarchive": f"revert of row {ids[3]}: unarchived session 'Garden plans': listed and searchable again",
        "restore": f"revert of row {ids[4]}: restored memory proposal {taken_back[4].target}: "
        "add to user profile: Likes long answers",
    }


def test_timeline_show_prints_what_the_screens_detail_shows(home, clock):
    """`timeline show ROW` printed the row's time, actor, action and summary, but not its target, its
    `why` nor where it came from, which the Timeline screen's detail shows; both now print one engine
    function's lines (``detail_lines``)."""
    home.memory.add("memory", "Project uses Postgres 16", ToolContext(actor="agent", session_id="s1", message_id=3))
    home.skills.manage(
        {"action": "create", "name": "brew", "content": "---\nname: brew\ndescription: tea\n---\nBoil.\n"}
    )
    home.config_path.write_text("skills:\n  write_approval: true\n", encoding="utf-8")
    home.reload_config()
    hermes_record(home, "0000bb01", {"action": "delete", "name": "gone"}, created_at=clock.now(), subsystem="skills")
    assert not home.approvals.approve("0000bb01")["success"]
    rows = Timeline(home).page()
    written = next(r for r in rows if r.subsystem == "memory")
    failed = next(r for r in rows if r.action == "approve_failed")
    home.close()

    def show(row: int) -> list[str]:
        done = completed("timeline", "show", str(row), "--home", str(home.root))
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()

    lines = show(written.id)
    assert lines[0].startswith(f"row {written.id} · ") and lines[0].endswith(" · agent · memory add · target memory")
    assert " UTC · " in lines[0]  # (a time standing alone names its zone, as the screen's does)
    assert lines[1:] == [written.summary, "session s1 · message 3"]
    lines = show(failed.id)
    assert lines[0].endswith(" · approvals approve_failed · target 0000bb01") and f"why: {failed.why}" in lines
    assert failed.why and "gone" in failed.why


def test_a_change_found_by_a_later_look_says_when_it_was_seen(home, clock):
    """An outside row journaled by a look after the change says, in its ``why``, when it was seen and the
    look it was made after (its ``seen_at`` and ``not_before``), and never names a Hermes call it has not."""
    home.journal.append(
        "memory",
        "add",
        "memory",
        actor="external",
        after="Kettle descales monthly",
        detail={"index": 0, "seen_at": clock.now(), "not_before": clock.now() - 3600},
    )
    [row] = Timeline(home).with_sources(Timeline(home).page(actor="external"))
    seen, after = stamped(clock.now(), seconds=True), stamped(clock.now() - 3600, seconds=True)
    assert (
        f"why: found by comparing MEMORY.md with the last version the workbench saw; seen {seen}, made after "
        f"{after}; the file does not say who made it" in detail_lines(row)
    )


@pytest.mark.parametrize("how", ["restore", "by hand"])
def test_reverting_an_archive_already_restored_says_so_not_to_roll_back_later_entries(home, how):
    """`revert` of a Curator archive whose skill was restored since said "Roll back the later entries
    first", which would archive it again to restore it again: the files are as before it, nothing to do."""
    from tests.test_skills_support import write_skill

    write_skill(home, "deploy", category="auto")
    home.curator.archive("deploy", actor="curator")
    [archive] = home.journal.query(subsystem="skills", actions=("archive",), limit=1)
    if how == "restore":
        home.curator.restore("deploy", actor="user")
    else:  # moved back with mv: outside the ledger
        [skill_md] = (home.skills_dir / ".archive").rglob("SKILL.md")
        (home.skills_dir / "auto").mkdir(exist_ok=True)  # (the archive took the emptied category folder)
        skill_md.parent.rename(home.skills_dir / "auto" / "deploy")
    timeline = Timeline(home)
    for answer in (timeline.preview(archive.id), timeline.revert(archive.id)):
        [refused] = answer["refused"]
        assert "is undone already: its files are as they were before it" in refused["error"], refused
        assert "Nothing to roll back" in refused["error"] and "later entries first" not in refused["error"]
    assert (home.skills_dir / "auto" / "deploy" / "SKILL.md").is_file()


def found_after_a_pin(home, clock) -> None:
    """An outside memory edit made 30 s before a pin, found (at 12:01:05) after the pin was journaled."""
    import os

    from tests.test_skills_support import write_skill

    home.memory.add("memory", "Tea at four", ToolContext(actor="user"))
    clock.advance(60)
    path = home.root / "memories" / "MEMORY.md"
    path.write_text(path.read_text() + "\n§\nCoffee at nine", encoding="utf-8")  # Hermes, 30 s before the pin
    os.utime(path, (clock.now() - 30, clock.now() - 30))
    write_skill(home, "deploy")
    home.curator.pin("deploy")
    clock.advance(5)
    home.memory.catch_up()  # (as `workbench timeline` and the TUI's start do first)


def found_in_order(home, clock) -> None:
    """An outside memory edit made 30 s before it was found (at 12:01:00), with no row journaled meanwhile."""
    import os

    home.memory.add("memory", "Tea at four", ToolContext(actor="user"))
    clock.advance(60)
    path = home.root / "memories" / "MEMORY.md"
    path.write_text(path.read_text() + "\n§\nCoffee at nine", encoding="utf-8")
    os.utime(path, (clock.now() - 30, clock.now() - 30))
    home.memory.catch_up()


def test_a_change_found_later_but_listed_in_its_place_has_no_mark(home, clock, cli):
    """Every catch-up row said "↳ found …, made before", also where nothing stamped after it was listed below
    it: noise. The mark is for a row listed above a newer-stamped one; `--json` keeps `found_at` always."""
    found_in_order(home, clock)
    found, added = Timeline(home).page(limit=3)[:2]
    assert found.actor == "external" and found.found_at is not None and added.at < found.at
    assert found.found_later is None
    printed = cli("timeline", "--limit", "3").stdout
    assert "Coffee at nine" in printed and "↳ found" not in printed, printed
    data = json.loads(cli("timeline", "--limit", "3", "--json").stdout)
    assert data["rows"][0]["found_at"].startswith("20") and "overtakes" not in data["rows"][0]


def test_a_row_the_timeline_never_lists_does_not_mark_a_change_found_after_it(home, clock, cli):
    """A Hermes write found by the look a `workbench run` made said "↳ found …, made before" though the row
    listed under it was older: the newer-stamped row it sat above was the run's session title, which no
    listing shows. Only listed rows count."""
    import os

    home.memory.add("memory", "Tea at four", ToolContext(actor="user"))
    clock.advance(60)
    path = home.root / "memories" / "MEMORY.md"
    path.write_text(path.read_text() + "\n§\nCoffee at nine", encoding="utf-8")
    os.utime(path, (clock.now() - 30, clock.now() - 30))
    home.archive.create_session("s-run")
    home.archive.set_title("s-run", "Remember that the build uses Bazel 7", actor="agent")
    clock.advance(5)
    home.memory.catch_up()
    found, added = Timeline(home).page(limit=3)[:2]
    assert found.actor == "external" and found.found_at is not None and added.at < found.at
    assert found.found_later is None
    printed = cli("timeline", "--limit", "3").stdout
    assert "Coffee at nine" in printed and "↳ found" not in printed, printed


def test_a_change_found_after_newer_rows_is_marked_where_it_is_listed(home, clock, cli):
    """Rows are listed by id, the order the workbench learned of them: an outside memory edit made before a
    pin but found after it (the catch-up dates it by the file's mtime) printed above the newer-stamped pin
    in a "newest first" list with nothing to say why. Now it says when it was found."""
    found_after_a_pin(home, clock)
    found, pin = Timeline(home).page(limit=3)[:2]
    assert found.actor == "external" and pin.action == "pin" and found.at < pin.at
    assert found.found_later == "found 12:01:05, made before" and pin.found_later is None
    printed = cli("timeline", "--limit", "3").stdout
    assert printed.splitlines()[1].strip() == "↳ found 12:01:05, made before", printed
    data = json.loads(cli("timeline", "--limit", "3", "--json").stdout)
    assert data["rows"][0]["found_at"].startswith("20") and data["rows"][1]["found_at"] is None


def test_a_page_of_many_found_later_rows_marks_exactly_those_listed_above_a_newer_stamp(home):
    """Each found-later row's mark looked back with a query of its own: a 200-row page of a 100k-row
    journal took 24 ms instead of 5. Now the page's marks come from one query, whatever their number,
    and still mark exactly the rows a newer-stamped row among the ``OVERTAKES_WITHIN`` before it follows."""
    import random

    from engine.timeline import OVERTAKES_WITHIN

    rng = random.Random(5)
    conn = home.journal.connection()
    rows = []
    for i in range(900):  # outside skill changes found late, every third; stamps out of order here and there
        at = 1_780_000_000.0 + i + (rng.choice([0] * 9 + [40]) if i % 3 else -rng.choice([0, 0, 0, 5, 300]))
        seen = json.dumps({"seen_at": at + 30, "change": "edited", "file": "SKILL.md"}) if i % 3 == 0 else None
        rows.append((at, "external", "skills", "external" if seen else "patch", f"skill-{i % 9}", seen))
    with conn:
        conn.executemany(
            "INSERT INTO journal (at, actor, subsystem, action, target, detail, status) "
            "VALUES (?, ?, ?, ?, ?, ?, 'done')",
            rows,
        )
    stamps = dict(conn.execute("SELECT id, at FROM journal"))
    ids = sorted(stamps)

    def overtakes(mid: int) -> bool:
        before = ids[max(0, ids.index(mid) - OVERTAKES_WITHIN) : ids.index(mid)]
        return any(stamps[other] > stamps[mid] for other in before)

    pages = {
        "newest": Timeline(home).page(limit=200),
        "older": Timeline(home).page(before_id=ids[400], limit=200),
        "one row": Timeline(home).page(before_id=ids[600], limit=1),
        "outside only": Timeline(home).page(target="skill-3", limit=200),  # (rows spread out)
    }
    queries: list[str] = []
    counts = {}
    conn.set_trace_callback(queries.append)
    try:
        for name, call in (
            ("many", lambda: Timeline(home).page(limit=200)),
            ("one", lambda: Timeline(home).page(before_id=ids[601], limit=1)),
        ):
            queries.clear()
            call()
            counts[name] = len(queries)
    finally:
        conn.set_trace_callback(None)
    marked = 0
    for name, page in pages.items():
        for row in page:
            expected = row.found_at is not None and overtakes(row.id)
            assert (row.found_later is not None) == expected, (name, row.id)
            marked += expected
    assert 20 < marked < sum(row.found_at is not None for page in pages.values() for row in page)
    assert counts["many"] == counts["one"]  # the same queries for dozens of found-later rows as for one
