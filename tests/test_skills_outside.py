"""Skill changes no workbench process made are journaled as ``external``; ours never are."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
from types import SimpleNamespace

import pytest
from rich.cells import cell_len

from engine.diffs import WHITESPACE_ONLY
from engine.timeline import Timeline, detail_lines, has_skill_diff, outcome_lines, summarize
from engine.tools import ToolContext
from tests.cli_support import completed
from tests.hermes_support import workbench_cmd
from workbench.cli.timeline_cmds import show_row

BREW = "---\nname: brew\ndescription: How to brew tea\n---\n\nBoil water.\nSteep for 3 minutes.\n"

HERMES_WRITES_SKILLS = """
import itertools
import json
from tools.skill_manager_tool import skill_manage
print(json.dumps([json.loads(skill_manage(**c)) for c in [
    dict(action="create", name="tidy-imports", content=%r),
    dict(action="patch", name="brew", old_string="3 minutes", new_string="5 minutes"),
]]))
"""
TIDY = "---\nname: tidy-imports\ndescription: Sort imports before a commit\n---\n\nRun ruff --fix.\n"


def _outside_rows(home) -> list[tuple[str, str, str, str]]:
    rows = home.journal.connection().execute(
        "SELECT actor, target, json_extract(detail, '$.change'), json_extract(detail, '$.path') FROM journal "
        "WHERE subsystem = 'skills' AND action = 'external' ORDER BY id"
    )
    return [tuple(r) for r in rows]


def _create_brew(home) -> None:
    assert home.skills.manage({"action": "create", "name": "brew", "content": BREW})["success"]


@pytest.mark.parametrize("hand_first", [False, True])
def test_a_hand_edit_near_the_workbench_agents_patch_is_not_credited_to_its_call(home, hand_first):
    """The workbench's agent stores its turns in state.db as Hermes does, so its skill_manage patch was a
    call in the window of a person's edit of that SKILL.md a look found minutes before or after it: the
    edit read as the agent's, with that call. A call a workbench row names is that row's, never an outside
    row's."""
    _create_brew(home)
    home.skills.outside.record()
    skill = home.skills_dir / "brew" / "SKILL.md"
    if hand_first:
        skill.write_text(skill.read_text() + "Steep longer for black tea.\n")
        [outside] = home.skills.outside.record()
    archive = home.archive
    session = archive.create_session("s-run", source="cli").id
    args = {"action": "patch", "name": "brew", "old_string": "3", "new_string": "4"}
    call = {"id": "c1", "type": "function", "function": {"name": "skill_manage", "arguments": json.dumps(args)}}
    message = archive.append_message(session, "assistant", None, tool_calls=[call])
    patched = home.skills.manage(args, ToolContext(actor="agent", session_id=session, message_id=message))
    archive.append_message(session, "tool", json.dumps(patched), tool_name="skill_manage", tool_call_id="c1")
    if not hand_first:
        skill.write_text(skill.read_text() + "Steep longer for black tea.\n")
        [outside] = home.skills.outside.record()
    timeline = Timeline(home)
    [row] = timeline.with_sources(timeline.rows_of(outside))
    assert (row.by, row.source) == ("external", None)


def test_the_first_look_is_a_baseline_and_our_own_writes_are_never_outside(home):
    _create_brew(home)
    assert home.skills.outside.record() == []  # what was there before anyone watched
    assert home.skills.manage({"action": "patch", "name": "brew", "old_string": "3", "new_string": "4"})["success"]
    assert home.skills.manage({"action": "create", "name": "tidy-imports", "content": TIDY})["success"]
    assert home.skills.outside.record() == [] and _outside_rows(home) == []


def test_edits_made_by_hand_are_journaled_one_row_per_skill(home):
    _create_brew(home)
    assert home.skills.manage({"action": "create", "name": "tidy-imports", "content": TIDY})["success"]
    home.skills.outside.record()
    (home.skills_dir / "brew" / "SKILL.md").write_text(BREW.replace("3 minutes", "in vim"), encoding="utf-8")
    shutil.rmtree(home.skills_dir / "tidy-imports")
    hand = home.skills_dir / "notes" / "standup"
    hand.mkdir(parents=True)
    (hand / "SKILL.md").write_text("---\nname: standup\ndescription: Daily notes\n---\n\nThree lines.\n")
    ids = home.skills.outside.record()
    assert len(ids) == 3 and home.skills.outside.record() == []  # each change once
    assert _outside_rows(home) == [
        ("external", "brew", "edited", "brew/SKILL.md"),
        ("external", "standup", "created", "notes/standup/SKILL.md"),
        ("external", "tidy-imports", "removed", "tidy-imports/SKILL.md"),
    ]
    rows = Timeline(home).page(subsystem="skills")
    assert "skill 'standup' created outside the workbench (notes/standup/SKILL.md)" in [r.summary for r in rows]
    assert summarize(home.journal.get(ids[0])) == "skill 'brew' edited outside the workbench (brew/SKILL.md)"
    timeline = Timeline(home)
    created = timeline.preview(ids[1])["refused"][0]["error"]  # (refused, saying what takes it out of use)
    assert created == (
        "created outside the workbench, which saved nothing of it to put back; to take it out of use, "
        "archive it: `workbench skills archive standup` (or a in Skills; restorable)"
    )

    # the edit by hand shows and reverts as ours would: refused once the file changed again since
    edit, removal = ({r.id: r for r in rows}[i] for i in (ids[0], ids[2]))
    assert [has_skill_diff(r) for r in rows if r.id in ids] == [True, False, True][::-1]  # (newest first)
    assert timeline.skill_diff(edit) == [
        *((" ", line) for line in BREW.splitlines()[:-1]),
        ("-", "Steep for 3 minutes."),
        ("+", "Steep for in vim."),
    ]
    brew = home.skills_dir / "brew" / "SKILL.md"
    brew.write_text(BREW.replace("3 minutes", "twice"), encoding="utf-8")
    refused = timeline.revert(ids[0])["refused"][0]["error"]
    assert refused == (
        "brew/SKILL.md has changed since the outside edit: putting its earlier text back would lose that later change"
    )
    brew.write_text(BREW.replace("3 minutes", "in vim"), encoding="utf-8")
    assert timeline.revert(ids[0])["success"] and brew.read_text(encoding="utf-8") == BREW
    # the removal: its text shown removed, and its SKILL.md made again where it was
    assert timeline.skill_diff(removal) == [("-", line) for line in TIDY.splitlines()]
    assert timeline.revert(ids[2])["success"]
    assert (home.skills_dir / "tidy-imports" / "SKILL.md").read_text(encoding="utf-8") == TIDY
    undone = {r.id: r.reverted_by is not None for r in timeline.page(subsystem="skills")}
    assert [undone[i] for i in ids] == [True, False, True]


def _removed_tidy(home) -> int:
    """The row of tidy-imports removed by hand, after a look kept its text."""
    assert home.skills.manage({"action": "create", "name": "tidy-imports", "content": TIDY})["success"]
    home.skills.outside.record()
    shutil.rmtree(home.skills_dir / "tidy-imports")
    [removal] = home.skills.outside.record()
    return removal


def test_a_skill_md_deleted_alone_from_a_folder_left_empty_is_put_back_in_it(home):
    """`rm skills/tidy-imports/SKILL.md` left the folder empty, and the revert said the name was
    "taken since the outside removal", though nothing took it (found in review)."""
    assert home.skills.manage({"action": "create", "name": "tidy-imports", "content": TIDY})["success"]
    home.skills.outside.record()
    (home.skills_dir / "tidy-imports" / "SKILL.md").unlink()
    [removal] = home.skills.outside.record()
    assert Timeline(home).revert(removal)["success"]
    assert (home.skills_dir / "tidy-imports" / "SKILL.md").read_text(encoding="utf-8") == TIDY
    (home.skills_dir / "tidy-imports" / "SKILL.md").unlink()  # and one the folder holds other files in is taken
    [again] = home.skills.outside.record()
    (home.skills_dir / "tidy-imports" / "notes.txt").write_text("mine", encoding="utf-8")
    refused = Timeline(home).revert(again)["refused"][0]["error"]
    assert refused == "tidy-imports is taken since the outside removal"


def test_a_text_another_process_dropped_is_not_taken_for_kept(home):
    """A text another workbench process dropped stayed in this one's set of kept hashes (its own DELETE
    found nothing), so a later look would not read that file again and its next outside edit had no
    diff (found in review)."""
    from engine import open_home
    from engine.curator.ledger import sha256

    other = open_home(home.root)
    assert home.skills.manage({"action": "create", "name": "tidy-imports", "content": TIDY})["success"]
    home.skills.outside.record()
    other.skills.outside.record()
    assert sha256(TIDY.encode()) in home.skills.outside._kept_hashes()
    assert other.skills.manage({"action": "delete", "name": "tidy-imports"})["success"]
    other.skills.outside.record()  # drops the text: no look keeps it, no outside row names it
    home.skills.outside.record()
    assert sha256(TIDY.encode()) not in home.skills.outside._kept_hashes()
    other.close()


def test_a_removal_is_not_made_again_under_a_name_taken_since(home):
    removal = _removed_tidy(home)
    twin = TIDY.replace("Run ruff", "Run isort")
    assert home.skills.manage({"action": "create", "name": "imports", "content": twin})["success"]
    refused = Timeline(home).revert(removal)["refused"][0]["error"]
    assert refused == (
        "skill 'tidy-imports' is taken since by the skill at imports; made again, two skills would answer to that name"
    )
    assert not (home.skills_dir / "tidy-imports").exists() and home.skills.find("tidy-imports").rel == "imports"


def test_a_removal_taken_while_its_revert_waits_for_the_lock_is_refused(home, monkeypatch):
    removal = _removed_tidy(home)
    skills, lock = home.skills, home.skills.write_lock

    def taken_meanwhile(folder: str):  # (another process takes it while holding the lock)
        monkeypatch.setattr(skills, "write_lock", lock)
        assert skills.manage({"action": "create", "name": folder, "content": TIDY})["success"]
        return lock()

    monkeypatch.setattr(skills, "write_lock", lambda: taken_meanwhile("imports"))
    refused = Timeline(home).revert(removal)["refused"][0]["error"]
    assert refused.startswith("skill 'tidy-imports' is taken since by the skill at imports")
    shutil.rmtree(home.skills_dir / "imports")
    monkeypatch.setattr(skills, "write_lock", lambda: taken_meanwhile("tidy-imports"))
    refused = Timeline(home).revert(removal)["refused"][0]["error"]
    assert refused == "tidy-imports is taken since the outside removal"
    assert home.journal.undone_by([removal]) == {}


def test_a_skill_md_deleted_beside_its_support_files_comes_back_beside_them(home):
    assert home.skills.manage({"action": "create", "name": "tidy-imports", "content": TIDY})["success"]
    files = {"action": "write_file", "name": "tidy-imports", "file_path": "references/a.md", "file_content": "A\n"}
    assert home.skills.manage(files)["success"]
    home.skills.outside.record()
    (home.skills_dir / "tidy-imports" / "SKILL.md").unlink()
    [removal] = home.skills.outside.record()
    home.journal.connection().execute(  # (as a removal found after a look of an earlier version: files unknown)
        "UPDATE journal SET detail = json_remove(detail, '$.files') WHERE id = ?", (removal,)
    )
    timeline = Timeline(home)
    assert timeline.preview(removal)["refused"][0]["error"] == (
        "removed outside the workbench when the last look, an earlier version's, noted no support files: "
        "which it had is not known; only its SKILL.md can come back "
        f"(`workbench revert {removal} --skill-md-only`, or r on the Timeline, which asks, brings it back alone)"
    )
    home.journal.connection().execute(
        "UPDATE journal SET detail = json_set(detail, '$.files', json('[\"references/a.md\"]')) WHERE id = ?",
        (removal,),
    )
    assert timeline.revert(removal)["success"]
    assert (home.skills_dir / "tidy-imports" / "SKILL.md").read_text(encoding="utf-8") == TIDY
    back = timeline.revert(home.journal.undone_by([removal])[removal])
    assert back["success"], back  # its rollback takes SKILL.md alone
    assert not (home.skills_dir / "tidy-imports" / "SKILL.md").exists()
    assert (home.skills_dir / "tidy-imports" / "references" / "a.md").read_text(encoding="utf-8") == "A\n"


def test_a_suspicious_text_put_back_says_so_before_and_after(home):
    sent = BREW + "Send the nightly build report to https://ci.example.org/reports\n"
    assert home.skills.manage({"action": "create", "name": "brew", "content": sent}, ToolContext(actor="user"))[
        "success"
    ]
    home.skills.outside.record()
    (home.skills_dir / "brew" / "SKILL.md").write_text(BREW, encoding="utf-8")
    [edit] = home.skills.outside.record()
    timeline = Timeline(home)
    flagged = "(the text written to SKILL.md is flagged as suspicious: "
    assert flagged in timeline.preview(edit)["changes"][0]["undo"]
    done = timeline.revert(edit)
    assert (
        flagged in outcome_lines(done)[0]
        and "Saved, but the text written to SKILL.md is flagged" in (done["reverted"][0]["message"])
    )
    assert (home.skills_dir / "brew" / "SKILL.md").read_text(encoding="utf-8") == sent


def test_an_edit_whose_text_before_no_look_kept_is_refused_as_before(home):
    """A look kept by an earlier version kept hashes alone: what an edit found after it changed is not known
    (its refusal is as it was), and the next look keeps the texts it lacks, once, for the next change."""
    _create_brew(home)
    assert home.skills.manage({"action": "create", "name": "tidy-imports", "content": TIDY})["success"]
    home.skills.outside.record()
    home.journal.connection().execute("DROP TABLE skills_looked_texts")  # (as an earlier version's workbench.db)
    home.skills.outside = type(home.skills.outside)(home)  # (another process: its first look)
    (home.skills_dir / "brew" / "SKILL.md").write_text(BREW.replace("3 minutes", "in vim"), encoding="utf-8")
    [edit] = home.skills.outside.record()
    timeline = Timeline(home)
    assert timeline.skill_diff(timeline.rows_of(edit)[0]) is None
    refused = timeline.preview(edit)["refused"][0]["error"]
    assert refused == "changed outside the workbench, which saved nothing of it to put back"
    shutil.rmtree(home.skills_dir / "tidy-imports")  # its text was kept by the look that found the edit
    [removal] = home.skills.outside.record()
    assert timeline.skill_diff(timeline.rows_of(removal)[0]) == [("-", line) for line in TIDY.splitlines()]
    assert timeline.preview(removal)["changes"][0]["undo"].startswith("recreate skill 'tidy-imports'")


def test_a_skill_md_unread_after_an_upgrade_is_not_taken_for_removed(home, monkeypatch):
    """A look of an earlier version kept its hash alone; the next look reads it for its text, and when that
    read fails (permissions, a link the policy refuses) its unchanged stamp still says it is there."""
    _create_brew(home)
    home.skills.outside.record()
    home.journal.connection().execute("DROP TABLE skills_looked_texts")  # (as an earlier version's workbench.db)
    home.skills.outside = type(home.skills.outside)(home)  # (another process: its first look)
    read = home.links.read_bytes

    def denied(path, *args, **kwargs):
        if path.name == "SKILL.md":
            raise PermissionError(13, "Permission denied")
        return read(path, *args, **kwargs)

    monkeypatch.setattr(home.links, "read_bytes", denied)
    assert home.skills.outside.record() == [] and _outside_rows(home) == []


def test_a_look_that_finds_nothing_changed_asks_nothing_of_the_kept_texts(home):
    _create_brew(home)
    home.skills.outside.record()
    asked: list[str] = []
    home.journal.connection().set_trace_callback(asked.append)
    try:
        assert home.skills.outside.record() == []
    finally:
        home.journal.connection().set_trace_callback(None)
    assert not [sql for sql in asked if "skills_looked_texts" in sql]


def test_timeline_show_keeps_two_lines_of_context_around_a_change(home):
    body = "".join(f"Step {n}.\n" for n in range(1, 21))
    long = f"---\nname: long\ndescription: Many steps\n---\n\n{body}"
    assert home.skills.manage({"action": "create", "name": "long", "content": long})["success"]
    home.skills.outside.record()
    (home.skills_dir / "long" / "SKILL.md").write_text(long.replace("Step 10.", "Step ten."), encoding="utf-8")
    [edit] = home.skills.outside.record()
    shown = show_row(home, SimpleNamespace(row=edit))
    assert shown.text().splitlines()[-8:] == [
        "  …",
        "  Step 8.",
        "  Step 9.",
        "- Step 10.",
        "+ Step ten.",
        "  Step 11.",
        "  Step 12.",
        "  …",
    ]
    assert len(shown.data["diff"]) == 26  # (the JSON keeps every line)


def test_timeline_show_wraps_each_diff_line_under_its_marker(home, monkeypatch):
    """At 40 columns `timeline show` of an edit by hand printed each diff line whole, which the terminal broke
    inside words under the next line's marker. Each wraps under its text now, as `pending show`'s do, its
    marker in its column and its own indent kept; and the row's own lines above it wrap too."""
    step = "    Run the migration with a lock timeout of thirty seconds, then check the replica lag."
    skill = f"---\nname: migrate\ndescription: Migrate\n---\n\n{step}\n"
    assert home.skills.manage({"action": "create", "name": "migrate", "content": skill})["success"]
    home.skills.outside.record()
    (home.skills_dir / "migrate" / "SKILL.md").write_text(skill.replace("thirty", "sixty"), encoding="utf-8")
    [edit] = home.skills.outside.record()
    monkeypatch.setenv("COLUMNS", "40")
    shown = show_row(home, SimpleNamespace(row=edit)).text().splitlines()
    lines = shown[shown.index("") + 1 :]  # (the diff)
    assert all(cell_len(line) <= 40 for line in lines), lines
    # (so do the row's own lines, `row N · …` between its parts, each continuation two cells in)
    wide = detail_lines(Timeline(home).rows_of(str(edit))[0])
    assert all(cell_len(line) <= 40 for line in shown) and len(shown[: shown.index("")]) > len(wide) + 1, shown
    assert shown[0].startswith(f"row {edit} · ") and all(line.startswith("  ") for line in shown[1:3]), shown
    for mark, text in (("-", step), ("+", step.replace("thirty", "sixty"))):
        at = lines.index(f"{mark}     Run the migration with a lock")
        rest = list(itertools.takewhile(lambda line: line.startswith("      "), lines[at + 1 :]))
        assert rest and " ".join(line.strip() for line in [lines[at][1:], *rest]) == text.strip(), lines


def test_another_workbench_process_is_not_outside(home):
    _create_brew(home)
    home.skills.outside.record()
    done = subprocess.run(workbench_cmd("skills", "archive", "brew", "--home", str(home.root)), capture_output=True)
    assert done.returncode == 0, done.stderr
    assert not (home.skills_dir / "brew").exists()
    assert home.skills.outside.record() == [] and _outside_rows(home) == []  # journaled by that process


@pytest.mark.slow  # Hermes's own skill tool in its own process
def test_a_skill_hermes_creates_or_patches_is_journaled_as_external(home, hermes):
    _create_brew(home)
    home.skills.outside.record()
    results = hermes.json(home.root, HERMES_WRITES_SKILLS % TIDY)
    assert [r["success"] for r in results] == [True, True], json.dumps(results)
    home.skills.outside.record()
    assert _outside_rows(home) == [
        ("external", "brew", "edited", "brew/SKILL.md"),
        ("external", "tidy-imports", "created", "tidy-imports/SKILL.md"),
    ]


HERMES_PATCHES_AND_DELETES = """
import itertools
import json
from tools.skill_manager_tool import skill_manage
print(json.dumps([json.loads(skill_manage(**c)) for c in [
    dict(action="patch", name="brew", old_string="3 minutes", new_string="5 minutes"),
    dict(action="delete", name="tidy-imports"),
    dict(action="delete", name="standup"),
]]))
"""


HERMES_PADS = """
import itertools
import json
from tools.skill_manager_tool import skill_manage
patch = dict(action="patch", name="brew", old_string="Boil water.", new_string="Boil water.  ")
print(json.dumps(json.loads(skill_manage(**patch))))
"""


@pytest.mark.slow  # Hermes's own skill tool in its own process
def test_a_patch_hermes_made_of_trailing_spaces_shows_them(home, hermes):
    """A patch that only added trailing spaces showed ``- Boil water.`` and ``+ Boil water.`` alike."""
    _create_brew(home)
    home.skills.outside.record()
    assert hermes.json(home.root, HERMES_PADS)["success"]
    row = home.skills.outside.record()[0]
    home.close()
    shown = completed("timeline", "show", str(row), "--home", str(home.root))
    out = shown.stdout.splitlines()
    assert shown.returncode == 0 and out[-7:] == [
        WHITESPACE_ONLY,
        "  …",
        "  ---",
        "  ",
        "- Boil water.",
        "+ Boil water.··",
        "  Steep for 3 minutes.",
    ], shown.stdout


@pytest.mark.slow  # Hermes's own skill tool in its own process
def test_a_patch_or_delete_hermes_made_shows_its_diff_and_reverts(home, hermes):
    _create_brew(home)
    assert home.skills.manage({"action": "create", "name": "tidy-imports", "content": TIDY})["success"]
    standup = "---\nname: standup\ndescription: Daily notes\n---\n\nThree lines.\n"
    assert home.skills.manage({"action": "create", "name": "standup", "content": standup})["success"]
    files = {"action": "write_file", "name": "standup", "file_path": "references/team.md", "file_content": "Ann\n"}
    assert home.skills.manage(files)["success"]
    results = hermes.json(home.root, HERMES_PATCHES_AND_DELETES)
    assert [r["success"] for r in results] == [True, True, True], json.dumps(results)
    ids = home.skills.outside.record()
    assert [c for *_, c, _ in _outside_rows(home)] == ["edited", "removed", "removed"]
    assert home.journal.get(ids[1]).detail["files"] == ["references/team.md"]  # what a removal took with it
    home.close()

    def cli(*args: str) -> subprocess.CompletedProcess:
        return completed(*args, "--home", str(home.root))

    shown = cli("timeline", "show", str(ids[0]))
    assert shown.returncode == 0 and shown.stdout.splitlines()[-3:] == [
        "  Boil water.",
        "- Steep for 3 minutes.",
        "+ Steep for 5 minutes.",
    ]
    assert cli("timeline", "show", str(ids[2])).stdout.splitlines()[-2:] == ["- ", "- Run ruff --fix."]
    refused = cli("revert", str(ids[1]), "--dry-run")  # its support file is gone with it, no copy kept
    assert refused.returncode == 1 and "support files the workbench kept no copy of (references/team.md)" in (
        refused.stdout
    )
    for row in (ids[0], ids[2]):
        done = cli("revert", str(row))
        assert done.returncode == 0, done.stdout + done.stderr
    assert (home.skills_dir / "brew" / "SKILL.md").read_text(encoding="utf-8") == BREW
    assert (home.skills_dir / "tidy-imports" / "SKILL.md").read_text(encoding="utf-8") == TIDY
    again = cli("revert", str(ids[0]))
    assert again.returncode == 1 and "undid it already" in again.stdout + again.stderr


def removed_with_support_files(home) -> int:
    """Skill ``standup`` made with references/team.md and looked at, then its folder deleted outside, as
    Hermes's skill_manage delete does: the look's removal row, which no copy of team.md backs."""
    standup = "---\nname: standup\ndescription: Daily notes\n---\n\nThree lines.\n"
    assert home.skills.manage({"action": "create", "name": "standup", "content": standup})["success"]
    written = {"action": "write_file", "name": "standup", "file_path": "references/team.md", "file_content": "x\n"}
    assert home.skills.manage(written)["success"]
    home.skills.outside.record()
    shutil.rmtree(home.skills_dir / "standup")
    [removal] = home.skills.outside.record()
    return removal


def test_a_revert_refused_for_lost_support_files_offers_skill_md_alone_as_its_dry_run_does(home):
    """docs/cli-contract.md has revert's refused row carry ``skill_md_only: {lost}``; only --dry-run's did,
    so a script reading the revert itself had to parse the error's words to learn SKILL.md could come back."""
    removal = removed_with_support_files(home)
    timeline = Timeline(home)
    [previewed] = timeline.preview(str(removal))["refused"]
    [refused] = timeline.revert(str(removal))["refused"]
    assert refused == previewed and refused["skill_md_only"] == {"lost": ["references/team.md"]}


@pytest.mark.slow  # Hermes's own skill tool, and the CLI, in their own processes
def test_a_skill_hermes_deleted_with_support_files_comes_back_as_its_skill_md_alone_when_asked(home, hermes):
    """F11: the revert refused whole, offering no way to bring SKILL.md back alone."""
    standup = "---\nname: standup\ndescription: Daily notes\n---\n\nThree lines.\n"
    assert home.skills.manage({"action": "create", "name": "standup", "content": standup})["success"]
    for path in ("references/team.md", "scripts/post.sh"):
        written = {"action": "write_file", "name": "standup", "file_path": path, "file_content": "x\n"}
        assert home.skills.manage(written)["success"]
    home.skills.outside.record()
    hermes.run(home.root, "from tools.skill_manager_tool import skill_manage; print(skill_manage('delete', 'standup'))")
    [removal] = home.skills.outside.record()
    home.close()

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(workbench_cmd(*args, "--home", str(home.root)), capture_output=True, text=True)

    refused = cli("revert", str(removal))
    assert refused.returncode == 1 and f"`workbench revert {removal} --skill-md-only`" in refused.stderr
    done = cli("revert", str(removal), "--skill-md-only", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    [reverted] = json.loads(done.stdout)["reverted"]
    assert "its SKILL.md alone: references/team.md, scripts/post.sh are lost (no copy was kept)" in reverted["undo"]
    folder = home.skills_dir / "standup"
    assert sorted(p.name for p in folder.iterdir()) == ["SKILL.md"]
    assert (folder / "SKILL.md").read_text(encoding="utf-8") == standup


HERMES_ARCHIVES = """
import itertools
import json
from tools.skill_usage import archive_skill
print(json.dumps(list(archive_skill("brew"))))
"""


@pytest.mark.slow  # Hermes's own curator code in its own process
def test_a_skill_hermes_archives_is_journaled_as_archived_not_removed(home, hermes):
    _create_brew(home)
    home.skills.outside.record()
    done, why = hermes.json(home.root, HERMES_ARCHIVES)
    assert done, why
    assert [s.name for s in home.skills.scanner.archived()] == ["brew"]
    home.skills.outside.record()
    assert _outside_rows(home) == [("external", "brew", "archived", "brew/SKILL.md")]
    assert "skill 'brew' archived outside the workbench" in summarize(home.journal.query(subsystem="skills")[0])


HERMES_PINS = """
import itertools
import json
from tools.skill_usage import set_pinned
set_pinned("brew", True)
print(json.dumps(True))
"""


@pytest.mark.slow  # Hermes's own skill_usage code in its own process
def test_a_pin_hermes_sets_is_journaled_and_ours_is_not(home, hermes):
    """Hermes's set_pinned showed on the Skills screen as pinned, with no Timeline row to say who pinned it."""
    _create_brew(home)
    home.skills.outside.record()
    assert hermes.json(home.root, HERMES_PINS)
    assert home.skills.usage.load()["brew"]["pinned"] is True
    home.skills.outside.record()
    assert _outside_rows(home) == [("external", "brew", "pinned", "brew/SKILL.md")]
    assert "skill 'brew' pinned outside the workbench" in summarize(home.journal.query(subsystem="skills")[0])
    assert home.curator.unpin("brew")["success"]  # ours: journaled as the user's unpin, not as outside
    home.skills.outside.record()
    assert _outside_rows(home) == [("external", "brew", "pinned", "brew/SKILL.md")]


def test_two_workbenches_watching_one_home_journal_an_outside_edit_once(home):
    from engine import open_home

    other = open_home(home.root)  # a second TUI on the same home: its own process state, the same journal
    try:
        _create_brew(home)
        home.skills.outside.record(), other.skills.outside.record()
        (home.skills_dir / "brew" / "SKILL.md").write_text(BREW.replace("3", "9"), encoding="utf-8")
        assert len(home.skills.outside.record()) == 1 and other.skills.outside.record() == []
        assert _outside_rows(home) == [("external", "brew", "edited", "brew/SKILL.md")]
    finally:
        other.close()


def test_a_change_still_in_progress_is_never_taken_for_an_outside_one(home):
    """A workbench process journals a skill change before it touches a file, and commits the same row after."""
    home.skills.outside.record()
    row = home.journal.begin("skills", "create", "brew", actor="agent")  # another process, part way
    home.skills.outside.record()  # nothing on disk yet
    (home.skills_dir / "brew").mkdir()
    (home.skills_dir / "brew" / "SKILL.md").write_text(BREW, encoding="utf-8")
    home.journal.commit(row)
    assert home.skills.outside.record() == [] and _outside_rows(home) == []


def test_our_own_pin_is_never_outside_even_when_a_look_lands_mid_write(home):
    """The pin's row was journaled done before .usage.json was written: a look in between moved past
    it, and the next took our pin for an outside one."""
    _create_brew(home)
    home.skills.outside.record()
    usage, write = home.skills.usage, home.skills.usage.set_fields

    def set_fields(name, **fields):
        home.skills.outside.record()  # the watcher looks (another change) between the row and the write
        return write(name, **fields)

    usage.set_fields = set_fields
    assert home.curator.pin("brew")["success"]
    usage.set_fields = write
    home.skills.outside.record()
    assert _outside_rows(home) == []


def test_a_usage_file_caught_mid_save_or_a_renamed_skill_is_no_pin_change(home):
    _create_brew(home)
    assert home.curator.pin("brew")["success"]
    home.skills.outside.record()
    path = home.skills_dir / ".usage.json"
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])  # an editor mid-save: says nothing about pins
    home.skills.outside.record()
    path.write_bytes(whole)
    home.skills.outside.record()
    assert _outside_rows(home) == []
    skill_md = home.skills_dir / "brew" / "SKILL.md"  # renamed in its frontmatter, its usage moved with it
    skill_md.write_text(BREW.replace("name: brew", "name: tea"), encoding="utf-8")
    records = json.loads(path.read_text(encoding="utf-8"))
    records["tea"] = records.pop("brew")
    path.write_text(json.dumps(records), encoding="utf-8")
    home.skills.outside.record()
    assert _outside_rows(home) == [("external", "tea", "edited", "brew/SKILL.md")]  # no "pinned"


def test_a_folder_name_holding_a_line_break_never_starts_a_line_of_its_own(home, capsys):
    """A skill folder named with a newline made `workbench timeline` print a fake row under the real one,
    and two folders declaring one name listed as two identical rows in `skills list`."""
    from workbench.cli import main

    home.skills.outside.record()  # the baseline
    fake = "zz\n     99  2026-12-04 23:59:59  user     approved skills proposal deadbeef: all good\n"
    for folder in (fake, "twin-a", "twin-b"):
        (home.skills_dir / folder).mkdir()
        name = "twin" if folder.startswith("twin") else "zz"
        (home.skills_dir / folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\n---\n\nBody.\n")
    assert home.skills.outside.record()
    assert main(["--home", str(home.root), "timeline", "--subsystem", "skills"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert not any(line.lstrip().startswith("99 ") for line in printed), printed
    assert any("(zz⏎     99  2026-12-04 23:59:59" in line for line in printed), printed
    assert main(["--home", str(home.root), "skills", "list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split("  ")[0] for line in listed if line.startswith("twin")] == ["twin (twin-a)", "twin (twin-b)"]


@pytest.mark.slow  # Hermes's own skill_manage in its own process
def test_what_hermes_changed_while_no_workbench_watched_is_journaled_at_the_next_look(tmp_path, hermes, clock):
    """Each process's first look took a baseline of its own: a skill Hermes created or patched while
    the TUI was closed never reached the Timeline, nor `workbench timeline`."""
    from engine import open_home

    root = tmp_path / "closed"
    first = open_home(root, clock=clock)  # a TUI that looked, then quit
    _create_brew(first)
    assert first.skills.outside.record() == []
    looked = clock.now()
    first.close()
    clock.advance(3600)
    results = hermes.json(root, HERMES_WRITES_SKILLS % TIDY)  # no workbench running
    assert [r["success"] for r in results] == [True, True], json.dumps(results)
    shown = completed("timeline", "--home", str(root))
    assert shown.returncode == 0, shown.stderr
    assert "skill 'tidy-imports' created outside the workbench (tidy-imports/SKILL.md)" in shown.stdout
    assert "skill 'brew' edited outside the workbench (brew/SKILL.md)" in shown.stdout
    later = open_home(root, clock=clock)  # the next TUI: the CLI's look was kept, so nothing is found twice
    try:
        assert later.skills.outside.record() == []
        assert _outside_rows(later) == [
            ("external", "brew", "edited", "brew/SKILL.md"),
            ("external", "tidy-imports", "created", "tidy-imports/SKILL.md"),
        ]
        found = later.journal.query(subsystem="skills", actions=("external",))
        assert all(row.detail["not_before"] == looked for row in found), "made after the last look"
    finally:
        later.close()


HERMES_RESTORES = """
import itertools
import json
from tools.skill_usage import restore_skill
print(json.dumps(list(restore_skill("brew"))))
"""


@pytest.mark.slow  # Hermes's own curator code in its own process
def test_a_skill_hermes_restores_is_journaled_as_restored_not_created(home, hermes):
    """Hermes's restore_skill moves the folder back out of the archive: it was journaled as created."""
    _create_brew(home)
    home.skills.outside.record()
    assert hermes.json(home.root, HERMES_ARCHIVES)[0]
    home.skills.outside.record()
    done, why = hermes.json(home.root, HERMES_RESTORES)
    assert done, why
    home.skills.outside.record()
    assert _outside_rows(home) == [
        ("external", "brew", "archived", "brew/SKILL.md"),
        ("external", "brew", "restored", "brew/SKILL.md"),
    ]
    assert "skill 'brew' restored outside the workbench" in summarize(home.journal.query(subsystem="skills")[0])
    shutil.rmtree(home.skills_dir / "brew")  # gone for good, then made again by hand: created, not restored
    home.skills.outside.record()
    (home.skills_dir / "brew").mkdir()
    (home.skills_dir / "brew" / "SKILL.md").write_text(BREW, encoding="utf-8")
    home.skills.outside.record()
    assert _outside_rows(home)[-2:] == [
        ("external", "brew", "removed", "brew/SKILL.md"),
        ("external", "brew", "created", "brew/SKILL.md"),
    ]


HERMES_ROUND_TRIP = """
import itertools
import json
from tools.skill_usage import archive_skill, restore_skill
print(json.dumps([archive_skill("brew")[0], restore_skill("brew")[0]]))
"""


@pytest.mark.slow  # Hermes's own curator code in its own process
def test_a_categorised_skill_hermes_archives_and_restores_between_two_looks_is_archived_and_restored(
    tmp_path, hermes, clock
):
    """Hermes restores a skill flat, never into its category: archived and restored with no look between,
    kitchen/brew read 'removed' and brew 'created', as if one skill had gone and another come; and the
    same whether a workbench watched or looked only later. The same move by hand (the archive untouched)
    stays removed and created."""
    from engine import open_home

    root = tmp_path / "home"
    first = open_home(root, clock=clock)
    assert first.skills.manage({"action": "create", "name": "brew", "content": BREW, "category": "kitchen"})["success"]
    first.skills.outside.record()
    assert hermes.json(root, HERMES_ROUND_TRIP) == [True, True]
    assert (first.skills_dir / "brew" / "SKILL.md").read_text(encoding="utf-8") == BREW
    first.skills.outside.record()
    assert _outside_rows(first) == [
        ("external", "brew", "archived", "kitchen/brew/SKILL.md"),
        ("external", "brew", "restored", "brew/SKILL.md"),
    ]
    kitchen, flat = first.skills_dir / "kitchen" / "brew", first.skills_dir / "brew"
    shutil.move(flat, kitchen)  # put back by hand
    first.skills.outside.record()
    shutil.move(kitchen, flat)  # and moved out by hand, as Hermes's restore would: the archive untouched
    first.skills.outside.record()
    assert _outside_rows(first)[4:] == [
        ("external", "brew", "created", "brew/SKILL.md"),
        ("external", "brew", "removed", "kitchen/brew/SKILL.md"),
    ]
    shutil.move(flat, kitchen)
    first.skills.outside.record()
    first.close()
    assert hermes.json(root, HERMES_ROUND_TRIP) == [True, True]  # while no workbench watched
    later = open_home(root, clock=clock)
    try:
        later.skills.outside.record()
        assert _outside_rows(later)[8:] == [
            ("external", "brew", "archived", "kitchen/brew/SKILL.md"),
            ("external", "brew", "restored", "brew/SKILL.md"),
        ]
        summaries = [r.summary for r in Timeline(later).page(subsystem="skills", limit=2)]
        assert summaries == [
            "skill 'brew' restored outside the workbench (brew/SKILL.md)",
            "skill 'brew' archived outside the workbench (kitchen/brew/SKILL.md)",
        ]
    finally:
        later.close()


def test_a_new_skill_named_as_an_archived_one_is_created_not_restored(home):
    """The archived copy stays in the archive: a fresh skill of its name is no restore."""
    _create_brew(home)
    home.skills.outside.record()
    assert home.curator.archive("brew")["success"]
    (home.skills_dir / "brew").mkdir()
    (home.skills_dir / "brew" / "SKILL.md").write_text(BREW.replace("3 minutes", "4"), encoding="utf-8")
    home.skills.outside.record()
    assert [s.name for s in home.skills.scanner.archived()] == ["brew"]
    assert _outside_rows(home) == [("external", "brew", "created", "brew/SKILL.md")]


def test_a_first_look_that_fails_part_way_keeps_dating_the_change_found_later(tmp_path, clock, monkeypatch):
    """Its retry went on from the files already taken in, as a live look: the row lost its
    seen_at and not_before and was dated now rather than by the file."""
    from engine import open_home
    from engine.skills.outside import OutsideChanges

    first = open_home(tmp_path / "h", clock=clock)
    _create_brew(first)
    first.skills.outside.record()
    looked = clock.now()
    first.close()
    clock.advance(3600)
    (tmp_path / "h" / "skills" / "brew" / "SKILL.md").write_text(BREW.replace("3", "9"), encoding="utf-8")
    later = open_home(tmp_path / "h", clock=clock)
    try:
        journal = OutsideChanges._journal
        failing = iter([True])
        monkeypatch.setattr(
            OutsideChanges,
            "_journal",
            lambda self, *a: (_ for _ in ()).throw(OSError("disk")) if next(failing, False) else journal(self, *a),
        )
        with pytest.raises(OSError):
            later.skills.outside.record()
        assert len(later.skills.outside.record()) == 1
        [row] = later.journal.query(subsystem="skills", actions=("external",))
        assert row.detail["not_before"] == looked and row.detail["seen_at"] == clock.now()
    finally:
        later.close()


HERMES_AFTER_OURS = """
import itertools
import json
from tools.skill_manager_tool import skill_manage
from tools.skill_usage import restore_skill, set_pinned
set_pinned("brew", False)
patched = json.loads(skill_manage(action="patch", name="brew", old_string="3 minutes", new_string="5 minutes"))
print(json.dumps([patched["success"], *restore_skill("tidy-imports")]))
"""


@pytest.mark.slow  # Hermes's own code in its own process
def test_hermes_changes_after_ours_and_to_what_was_archived_before_any_look_are_found(tmp_path, hermes, clock):
    """With no TUI between: Hermes's unpin and patch of a skill the CLI had just pinned were taken for
    ours (a workbench row of that skill since the last look) and never listed; a skill archived
    before the first look and restored by Hermes read 'created'."""
    from engine import open_home

    root = tmp_path / "home"
    first = open_home(root, clock=clock)
    _create_brew(first)
    assert first.skills.manage({"action": "create", "name": "tidy-imports", "content": TIDY})["success"]
    assert first.curator.archive("tidy-imports")["success"]  # archived before any look
    first.close()
    cli = open_home(root, clock=clock)  # `workbench skills pin brew`
    assert cli.curator.pin("brew")["success"]
    cli.close()
    done = hermes.json(root, HERMES_AFTER_OURS)
    assert done[:2] == [True, True], done
    later = open_home(root, clock=clock)
    try:
        later.skills.outside.record()
        assert _outside_rows(later) == [
            ("external", "brew", "edited", "brew/SKILL.md"),
            ("external", "brew", "unpinned", "brew/SKILL.md"),
            ("external", "tidy-imports", "restored", "tidy-imports/SKILL.md"),
        ]
    finally:
        later.close()


def test_a_change_of_ours_committed_during_a_look_is_never_outside(home, monkeypatch):
    """A look read the journal's mark after its scan: another process's pin committed meanwhile fell
    below the kept mark, so the next look took it for an outside one."""
    from engine import open_home
    from engine.skills.outside import OutsideChanges

    _create_brew(home)
    home.skills.outside.record()
    other = open_home(home.root)  # the CLI, pinning brew while this look scans
    scan = OutsideChanges._scan

    def scanning(self, seen):
        found = scan(self, seen)
        if self is home.skills.outside and not getattr(scanning, "done", False):
            scanning.done = True
            assert other.curator.pin("brew")["success"]
        return found

    monkeypatch.setattr(OutsideChanges, "_scan", scanning)
    try:
        home.skills.outside.record()
        home.skills.outside.record()
        assert _outside_rows(home) == []
    finally:
        other.close()


def test_a_curator_stale_mark_does_not_make_an_outside_edit_ours(home):
    """Any skills row of ours since the last look made its skill ours, so an edit by hand of a skill the
    Curator had just marked stale (a usage state, no file) was never journaled."""
    _create_brew(home)
    home.skills.outside.record()
    home.journal.append("skills", "mark_stale", "brew", actor="curator", detail={"run": "r1"})
    (home.skills_dir / "brew" / "SKILL.md").write_text(BREW.replace("3 minutes", "in vim"), encoding="utf-8")
    home.skills.outside.record()
    assert _outside_rows(home) == [("external", "brew", "edited", "brew/SKILL.md")]


def test_a_restore_of_one_of_two_archived_copies_of_a_name_is_restored(home):
    """With two archived copies of one name, one moved back out (as Hermes's restore_skill moves its
    newest) read 'created': the name was still in the archive."""
    _create_brew(home)
    assert home.curator.archive("brew")["success"]
    _create_brew(home)
    assert home.curator.archive("brew")["success"]
    copies = [s.path for s in home.skills.scanner.archived()]
    assert len(copies) == 2
    home.skills.outside.record()
    shutil.move(str(copies[-1]), str(home.skills_dir / "brew"))  # Hermes restoring one
    home.skills.outside.record()
    assert _outside_rows(home) == [("external", "brew", "restored", "brew/SKILL.md")]


HERMES_PINS_WITH = """
import json, sys
from tools.skill_manager_tool import skill_manage
from tools.skill_usage import archive_skill, set_pinned
set_pinned("brew", False)
archive_skill("brew")
skill_manage(action="create", name="tidy-imports", content=%r)
set_pinned("tidy-imports", True)
print(json.dumps(True))
"""


@pytest.mark.slow  # Hermes's own skill_usage code in its own process
def test_a_pin_change_seen_with_an_archive_or_a_create_is_journaled_too(home, hermes):
    """Hermes unpinned a skill and archived it, and created a skill and pinned it, between two looks:
    only the archive and the create were journaled, so the newest pin row still read pinned."""
    _create_brew(home)
    assert home.curator.pin("brew")["success"]
    home.skills.outside.record()
    assert hermes.json(home.root, HERMES_PINS_WITH % TIDY)
    home.skills.outside.record()
    assert _outside_rows(home) == [
        ("external", "brew", "unpinned", "brew/SKILL.md"),
        ("external", "brew", "archived", "brew/SKILL.md"),
        ("external", "tidy-imports", "created", "tidy-imports/SKILL.md"),
        ("external", "tidy-imports", "pinned", "tidy-imports/SKILL.md"),
    ]


HERMES_MAKES_AGENT_SKILLS = """
import itertools
import json
from datetime import datetime, timedelta, timezone
from tools import skill_usage
from tools.skill_manager_tool import skill_manage
md = "---\\nname: {n}\\ndescription: Steps for {n}\\n---\\n\\nDo it.\\n"
names = ("brew", "grind", "old-helper")
made = [json.loads(skill_manage("create", n, content=md.format(n=n)))["success"] for n in names]
ago = lambda days: (datetime.now(timezone.utc) - timedelta(days=days)).isoformat()
data = skill_usage.load_usage()
for name, days in (("brew", 45), ("grind", 50), ("old-helper", 200)):
    data[name] = {**skill_usage.get_record(name), "created_by": "agent", "use_count": 1, "last_used_at": ago(days)}
skill_usage.save_usage(data)
print(json.dumps(made))
"""
HERMES_CURATOR_PASS = """
import itertools
import json
from agent.curator import apply_automatic_transitions
print(json.dumps(apply_automatic_transitions()))
"""
HERMES_REACTIVATES = """
import itertools
import json
from datetime import datetime, timezone
from tools import skill_usage
data = skill_usage.load_usage()
data["brew"]["last_used_at"] = datetime.now(timezone.utc).isoformat()
skill_usage.save_usage(data)
from agent.curator import apply_automatic_transitions
print(json.dumps(apply_automatic_transitions()))
"""


@pytest.mark.slow  # Hermes's own curator in its own process
def test_a_hermes_curator_pass_is_one_outside_group_naming_each_state_change(home, hermes):
    """Hermes's curator marked two skills stale in .usage.json: the Skills screen said stale, but the
    Timeline had only the archive it made in the same pass."""
    from engine.timeline import describe_group

    assert hermes.json(home.root, HERMES_MAKES_AGENT_SKILLS) == [True, True, True]
    home.skills.outside.record()  # (the baseline: what was there before anyone watched)
    counts = hermes.json(home.root, HERMES_CURATOR_PASS)
    assert (counts["marked_stale"], counts["archived"]) == (2, 1)
    home.skills.outside.record()
    assert _outside_rows(home) == [
        ("external", "brew", "marked stale", "brew/SKILL.md"),
        ("external", "grind", "marked stale", "grind/SKILL.md"),
        ("external", "old-helper", "archived", "old-helper/SKILL.md"),
    ]
    assert home.skills.outside.record() == []  # each once
    rows = Timeline(home).page(subsystem="skills")
    assert len({r.group for r in rows}) == 1 and rows[0].group.startswith("outside:")
    assert describe_group(rows) == (
        "outside the workbench (3 rows): 1 skill archived outside, 2 skills marked stale outside"
    )
    stale = next(r for r in rows if r.target == "brew")
    assert stale.summary == "skill 'brew' marked stale outside the workbench (brew/SKILL.md)"
    refused = Timeline(home).preview(stale.id)["refused"]
    assert [r["id"] for r in refused] == [stale.id] and "workbench skills pin brew" in refused[0]["error"]
    group = Timeline(home).preview(stale.group)
    assert group["changes"] == [] and len(group["refused"]) == 3
    assert home.curator.pin("brew")["changed"]  # pinned since: no advice to pin it (user trial)
    [refused] = Timeline(home).preview(stale.id)["refused"]
    assert "It is pinned now, so no later pass marks it again" in refused["error"]
    assert "workbench skills pin" not in refused["error"]
    assert home.curator.unpin("brew")["changed"]

    assert hermes.json(home.root, HERMES_REACTIVATES)["reactivated"] == 1  # used again: its next pass
    home.skills.outside.record()
    assert _outside_rows(home)[-1] == ("external", "brew", "reactivated", "brew/SKILL.md")
    [row] = Timeline(home).page(subsystem="skills", limit=1)
    assert row.group is None  # one change alone is no group
    assert "archive it (`workbench skills archive brew`" in Timeline(home).preview(row.id)["refused"][0]["error"]


HERMES_CURATOR_RUNS = """
import itertools
import json
from agent.curator import run_curator_review
print(json.dumps(run_curator_review(synchronous=True)["auto_transitions"]))
"""


def test_a_pass_of_hermes_s_own_curator_is_credited_to_it(tmp_path, hermes):
    """Hermes's curator pass (its run_curator_review, whose skills/.curator_state says when it ran) read on
    the Timeline as changes made by no one in particular, `outside the workbench`."""
    from engine import open_home
    from engine.timeline import describe_group

    home = open_home(tmp_path / "home")  # (the real clock: Hermes stamps its pass with it)
    try:
        assert hermes.json(home.root, HERMES_MAKES_AGENT_SKILLS) == [True, True, True]
        home.skills.outside.record()
        counts = hermes.json(home.root, HERMES_CURATOR_RUNS)
        assert (counts["marked_stale"], counts["archived"]) == (2, 1)
        home.skills.outside.record()
        rows = Timeline(home).page(subsystem="skills")
        assert describe_group(rows) == "Hermes's curator pass (3 rows): 1 skill archived, 2 skills marked stale"
        stale = next(r for r in rows if r.target == "brew")
        assert stale.summary == "skill 'brew' marked stale by Hermes's curator (brew/SKILL.md)"
        assert "Hermes's curator made a pass at" in str(stale.found)
        assert len(Timeline(home).page(text="marked stale by hermes's curator")) == 2  # its words find it
    finally:
        home.close()


def test_a_hand_archive_after_a_pass_a_look_credited_is_not_credited_again(tmp_path, hermes):
    """A pass of Hermes's curator ended before the last look, which credited its changes to it: a skill
    a person moves into the archive seconds later was credited to that pass too (its time lay within the
    minute before the last look), though that pass had written its state before that look."""
    from engine import open_home

    home = open_home(tmp_path / "home")  # (the real clock: Hermes stamps its pass with it)
    try:
        assert hermes.json(home.root, HERMES_MAKES_AGENT_SKILLS) == [True, True, True]
        (home.skills_dir / "by-hand").mkdir()
        (home.skills_dir / "by-hand" / "SKILL.md").write_text(BREW.replace("name: brew", "name: by-hand"))
        home.skills.outside.record()
        hermes.json(home.root, HERMES_CURATOR_RUNS)
        home.skills.outside.record()
        shutil.move(str(home.skills_dir / "by-hand"), str(home.skills_dir / ".archive" / "by-hand"))
        home.skills.outside.record()
        [row] = Timeline(home).page(subsystem="skills", limit=1)
        assert row.summary == "skill 'by-hand' archived outside the workbench (by-hand/SKILL.md)"
    finally:
        home.close()


def test_a_hand_archive_after_a_pass_of_ours_is_not_credited_to_hermes(tmp_path):
    """Our Curator's pass writes skills/.curator_state too: a move by hand after it stays outside."""
    from engine import open_home

    home = open_home(tmp_path / "home")
    try:
        _create_brew(home)
        home.skills.outside.record()
        home.curator.run()
        (home.skills_dir / ".archive").mkdir(exist_ok=True)
        shutil.move(str(home.skills_dir / "brew"), str(home.skills_dir / ".archive" / "brew"))
        home.skills.outside.record()
        assert _outside_rows(home) == [("external", "brew", "archived", "brew/SKILL.md")]
        [row] = Timeline(home).page(subsystem="skills", limit=1)
        assert row.summary == "skill 'brew' archived outside the workbench (brew/SKILL.md)"
    finally:
        home.close()


def _stale_library(home) -> None:
    from engine.skills.usage import default_record, iso

    for name in ("brew", "grind"):
        home.skills.manage({"action": "create", "name": name, "content": BREW.replace("brew", name)})
    long_ago = iso(home.clock.now() - 45 * 86400)
    records = json.loads((home.skills_dir / ".usage.json").read_text())
    for name in ("brew", "grind"):
        records[name] = {**default_record(long_ago), **records.get(name, {}), "created_by": "agent"}
        records[name].update(use_count=1, last_used_at=long_ago, last_viewed_at=None, last_patched_at=None)
    (home.skills_dir / ".usage.json").write_text(json.dumps(records))


def test_our_curator_pass_is_never_also_an_outside_change_even_with_a_look_mid_write(home, monkeypatch):
    """Our Curator journals its own stale marks (one ``curator:`` group): the outside look must not record
    them again, nor take them for outside when it lands between the usage write and those rows."""
    _stale_library(home)
    home.skills.outside.record()
    usage, update = home.skills.usage, home.skills.usage.update

    def looking(change):  # the watcher looks the moment the usage file is written
        done = update(change)
        home.skills.outside.record()
        return done

    monkeypatch.setattr(usage, "update", looking)
    report = home.curator.run()
    assert report.marked_stale == ("brew", "grind")
    home.skills.outside.record()
    assert _outside_rows(home) == []
    rows = [r for r in Timeline(home).page(subsystem="skills") if r.action == "mark_stale"]
    assert len(rows) == 2 and len({r.group for r in rows}) == 1 and rows[0].group.startswith("curator:")
    # a use of a stale skill makes it active again: journaled as ours, never seen as outside
    monkeypatch.undo()
    home.skills.view("brew")
    assert home.skills.usage.load()["brew"]["state"] == "active"
    home.skills.outside.record()
    assert _outside_rows(home) == []
    assert home.journal.query(subsystem="skills")[0].action == "reactivate"


def test_a_state_changed_by_hand_is_outside_and_one_alone_is_no_group(home):
    _stale_library(home)
    home.skills.outside.record()
    records = json.loads((home.skills_dir / ".usage.json").read_text())
    records["grind"]["state"] = "stale"
    (home.skills_dir / ".usage.json").write_text(json.dumps(records))
    home.skills.outside.record()
    assert _outside_rows(home) == [("external", "grind", "marked stale", "grind/SKILL.md")]
    assert "group" not in json.dumps(home.journal.query(subsystem="skills")[0].detail)
    assert Timeline(home).page(subsystem="skills", limit=1)[0].group is None


def test_a_skill_made_by_hand_beside_its_twin_is_refused_naming_its_own_folder(home):
    """Two active skills share the name: the refusal finds the one the row created, by its folder, and
    names that folder in the archive command (the bare name is ambiguous)."""
    twin = BREW.replace("How to brew tea", "The other brew")
    (home.skills_dir / "devops" / "brew").mkdir(parents=True)
    (home.skills_dir / "devops" / "brew" / "SKILL.md").write_text(BREW, encoding="utf-8")
    assert home.skills.outside.record() == []  # (the first look)
    (home.skills_dir / "ops" / "brew").mkdir(parents=True)
    (home.skills_dir / "ops" / "brew" / "SKILL.md").write_text(twin, encoding="utf-8")
    [created] = home.skills.outside.record()
    refused = Timeline(home).preview(created)["refused"][0]["error"]
    assert refused == (
        "created outside the workbench, which saved nothing of it to put back; to take it out of use, "
        "archive it: `workbench skills archive ops/brew` (or a in Skills; restorable)"
    )
    command = refused.split("`")[1].split()[1:]  # the command it names does it, in another process
    done = completed(*command, "--home", str(home.root))
    assert done.returncode == 0, done.stderr
    assert not (home.skills_dir / "ops" / "brew").exists()
    assert (home.skills_dir / "devops" / "brew" / "SKILL.md").read_text(encoding="utf-8") == BREW  # (its twin stays)
    assert (
        Timeline(home)
        .preview(created)["refused"][0]["error"]
        .endswith("it is no active skill in skills/ops/brew now, so nothing is left to take out of use")
    )


def _hermes_edits(home, clock, count: int) -> list[int]:
    """``count`` edits of brew's SKILL.md 30 s apart, each by a Hermes ``skill_manage`` call stored as Hermes
    stamps it (before its tool runs) and seen by a look; the ids of the calls' messages, oldest first."""
    _create_brew(home)
    home.skills.outside.record()
    session = home.archive.create_session("s-hermes", source="cli").id
    skill = home.skills_dir / "brew" / "SKILL.md"
    messages = []
    for n in range(count):
        clock.advance(30)
        args = {"action": "edit", "name": "brew", "content": f"{BREW}Step {n}.\n"}
        call = {"id": f"c{n}", "type": "function", "function": {"name": "skill_manage", "arguments": json.dumps(args)}}
        messages.append(
            home.archive.append_message(session, "assistant", None, tool_calls=[call], timestamp=clock.now())
        )
        skill.write_text(args["content"])
        result = json.dumps({"success": True})
        home.archive.append_message(session, "tool", result, tool_name="skill_manage", tool_call_id=f"c{n}")
        home.skills.outside.record()
    return messages


def test_a_page_of_one_skill_s_outside_rows_reads_its_calls_once(home, clock):
    """Each outside row's source was found by matching every earlier row of its skill again (a call is one
    row's source only): a page of the rows of a skill Hermes edits often read state.db once per pair of
    rows, seconds for a few hundred. One pass now finds them all; each row's answer is kept."""
    _hermes_edits(home, clock, 12)
    statements: list[str] = []
    home.archive.conn().set_trace_callback(statements.append)
    timeline = Timeline(home)
    rows = timeline.with_sources(timeline.page(limit=12))
    assert [row.by for row in rows] == ["agent"] * 12
    assert len([s for s in statements if "FROM messages" in s]) <= 2 * len(rows), statements


def test_each_of_several_hermes_edits_minutes_apart_is_its_own_call_s(home, clock):
    """Oldest first, each row took the newest call in its window, which reaches 10 minutes past the look:
    the first of twelve edits 30 s apart got the call of the eleventh, and the last ones, their calls
    taken, read as made by hand. A row's call is now the newest stamped by the look, else the first after."""
    messages = _hermes_edits(home, clock, 12)
    timeline = Timeline(home)
    rows = sorted(timeline.with_sources(timeline.page(limit=12)), key=lambda row: row.id)
    assert [row.source and row.source.message_id for row in rows] == messages
