"""``workbench skills ...`` and ``workbench curator ...`` through real subprocesses."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys

import pytest

from engine import open_home
from engine.skills.usage import parse_iso
from engine.skills.validation import SkillError
from tests.cli_support import printed
from tests.test_skills_support import write_skill
from workbench.cli import main


def wb_process(home_dir, *args):
    """A real ``python -m workbench`` process."""
    proc = subprocess.run(
        [sys.executable, "-m", "workbench", *args, "--home", str(home_dir), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return proc.returncode, json.loads(proc.stdout)


def wb(home_dir, *args):
    """The same entry point in this process (fast); output captured from stdout."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([*args, "--home", str(home_dir), "--json"])
    return code, json.loads(out.getvalue())


def test_skills_and_curator_commands(tmp_path):
    home = open_home(tmp_path / "h")
    write_skill(home, "deploy", category="ops", files={"references/api.md": "# API"})
    home.close()
    code, listed = wb_process(tmp_path / "h", "skills", "list")
    assert code == 0 and listed == {
        "skills": [
            {
                "name": "deploy",
                "category": "ops",
                "description": "Does a useful thing",
                "state": "active",
                "pinned": False,
                "provenance": "user",
                "use_count": 0,
                "uses_note": None,
                "last_used_at": None,
                "last_activity_at": None,
                "problem": None,
                "name_problem": None,
                "index_problem": None,
                "proposed_by": None,
            }
        ],
        "usage_problem": None,
    }
    code, shown = wb(tmp_path / "h", "skills", "show", "deploy", "--file", "references/api.md")
    assert code == 0 and shown["content"] == "# API"
    assert wb(tmp_path / "h", "skills", "pin", "deploy") == (
        0,
        {"success": True, "changed": True, "message": "Skill 'deploy' pinned.", "name": "deploy", "pinned": True},
    )
    code, refused = wb_process(tmp_path / "h", "skills", "archive", "deploy")
    assert code == 1 and "is pinned" in refused["error"]
    wb(tmp_path / "h", "skills", "unpin", "deploy")
    code, archived = wb(tmp_path / "h", "skills", "archive", "deploy")
    assert code == 0 and archived["success"]
    code, listed = wb(tmp_path / "h", "skills", "list", "--all")
    assert [s["state"] for s in listed["skills"]] == ["archived"]
    code, run = wb(tmp_path / "h", "curator", "run", "--dry-run")
    assert code == 0 and {k: run[k] for k in ("marked_stale", "archived", "reactivated", "dry_run")} == {
        "marked_stale": [],
        "archived": [],
        "reactivated": [],
        "dry_run": True,
    }
    code, status = wb(tmp_path / "h", "curator", "status")
    assert status["counts"] == {"active": 0, "stale": 0, "archived": 1}
    out = io.StringIO()  # (Hermes's `curator status` counts fewer: its own words say which ones)
    with contextlib.redirect_stdout(out):
        main(["curator", "status", "--home", str(tmp_path / "h")])
    assert "`hermes curator status` says 0 agent-created (0 active, 0 stale, 0 archived)" in out.getvalue()
    code, refused = wb(tmp_path / "h", "curator", "purge", "--days", "0", "--yes")
    assert code == 2 and "0 days is refused: Hermes reads" in refused["error"]  # a usage error, before the engine
    code, refused = wb_process(tmp_path / "h", "curator", "purge", "--days", "1")
    assert code == 1 and "--yes" in refused["error"]
    code, rolled = wb_process(tmp_path / "h", "curator", "rollback", archived["ledger_id"])
    assert code == 0 and rolled["success"]
    code, listed = wb(tmp_path / "h", "skills", "list")
    assert [s["state"] for s in listed["skills"]] == ["active"]
    code, ledger = wb(tmp_path / "h", "curator", "ledger")
    assert [e["action"] for e in ledger["entries"]] == ["rollback", "archive"]
    assert {e["actor"] for e in ledger["entries"]} == {"user"}
    code, missing = wb(tmp_path / "h", "skills", "show", "nope")
    assert code == 1 and missing["error"] == "Skill 'nope' not found."


HERMES_PATCHES = """
import json
from tools.skill_usage import bump_patch, get_record
bump_patch("deploy")
print(json.dumps(get_record("deploy")["last_patched_at"]))
"""


@pytest.mark.slow  # Hermes's own skill_usage code in its own process
def test_skills_list_json_gives_the_last_activity_the_curator_ages_by(tmp_path, hermes):
    """`skills list --json` gave only `last_used_at`: a script could not tell that Hermes patched a skill
    today, which the Curator (ours, and Hermes's `last_activity`) counts, and would call it idle."""
    home = open_home(tmp_path / "h")
    write_skill(home, "deploy", category="ops")
    home.skills.usage.set_fields("deploy", use_count=1, last_used_at="2026-10-20T10:00:00+00:00")
    home.close()
    patched = hermes.json(tmp_path / "h", HERMES_PATCHES)
    code, listed = wb_process(tmp_path / "h", "skills", "list")
    [deploy] = listed["skills"]
    assert code == 0 and deploy["last_used_at"] == "2026-10-20T10:00:00+00:00"
    assert parse_iso(deploy["last_activity_at"]) == int(parse_iso(patched))  # (in whole seconds)


def test_an_unknown_skill_name_is_answered_with_close_names_in_text_too(tmp_path, capsys):
    """`skills show nosuch` said only "Skill 'nosuch' not found." in text: the skills to pick from
    were under --json alone."""
    home = open_home(tmp_path / "h")
    for name in ("deploy-staging", "rerender-invoice-pdf", "rerender-invoice-pdfs"):
        write_skill(home, name, files={"references/api.md": "# API"})
    home.close()

    def said(*argv) -> str:
        assert main([*argv, "--home", str(tmp_path / "h")]) == 1
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1
        return err

    assert said("skills", "show", "deplo") == "error: Skill 'deplo' not found. Did you mean deploy-staging?\n"
    assert said("skills", "pin", "rerender").endswith("Did you mean rerender-invoice-pdf, rerender-invoice-pdfs?\n")
    assert said("skills", "show", "nosuch").endswith(  # none close, and few: all of them
        "The skills here: deploy-staging, rerender-invoice-pdf, rerender-invoice-pdfs.\n"
    )
    assert said("skills", "show", "deploy-staging", "--file", "api.md").endswith("Did you mean references/api.md?\n")
    code, missing = wb(tmp_path / "h", "skills", "show", "deplo")
    assert code == 1 and missing["close_matches"] == ["deploy-staging"] and len(missing["available_skills"]) == 3
    home = open_home(tmp_path / "h")
    for n in range(12):
        write_skill(home, f"skill-{n:02d}")
    home.close()
    assert said("skills", "show", "nosuch").endswith("`workbench skills list` shows all 15.\n")  # too many to list
    assert said("skills", "restore", "deploy-staging").endswith("No skill is archived.\n")  # (it is active)
    assert main(["skills", "archive", "deploy-staging", "--home", str(tmp_path / "h")]) == 0
    capsys.readouterr()
    assert said("skills", "restore", "deplo").endswith("Did you mean deploy-staging?\n")  # archived names only
    assert said("skills", "restore", "skill-03").endswith("The archived skills: deploy-staging.\n")


def test_skills_list_marks_a_skill_whose_skill_md_does_not_parse(tmp_path):
    home = open_home(tmp_path / "h")
    write_skill(home, "deploy", category="ops")
    (home.skills_dir / "loose").mkdir()
    (home.skills_dir / "loose" / "SKILL.md").write_text("Just a body\n")
    home.close()
    code, listed = wb(tmp_path / "h", "skills", "list")
    problems = {s["name"]: s["problem"] for s in listed["skills"]}
    assert problems == {
        "loose": "SKILL.md must start with YAML frontmatter (---). See existing skills for format.",
        "deploy": None,
    }
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["skills", "list", "--home", str(tmp_path / "h")]) == 0
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("loose ") and lines[0].endswith("⚠ Just a body")
    assert "⚠" not in lines[1]
    assert lines[0].index("active") == lines[1].index("active")
    assert lines[-1] == "⚠ SKILL.md does not parse in loose (`workbench doctor` says why)."


def test_a_skill_md_over_the_write_limit_is_marked_in_list_and_show(tmp_path):
    """A 5 MB SKILL.md was listed like any other: nothing said it is 50 times what a write allows."""
    home = open_home(tmp_path / "h")
    folder = write_skill(home, "huge")
    with (folder / "SKILL.md").open("a") as md:
        md.write("Step.\n" * 20_000)
    home.close()
    code, listed = wb(tmp_path / "h", "skills", "list")
    [huge] = listed["skills"]
    assert huge["problem"].startswith("SKILL.md content is 120,") and "(limit: 100,000)" in huge["problem"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["skills", "list", "--home", str(tmp_path / "h")]) == 0
        assert main(["skills", "show", "huge", "--home", str(tmp_path / "h")]) == 0
    lines = out.getvalue().splitlines()
    assert "⚠ " in lines[0] and lines[1] == "⚠ SKILL.md is over the 100,000-character limit in huge."
    assert lines[-1].startswith("⚠ SKILL.md content is 120,") and lines[-4] == "Step."


def test_skills_list_keeps_its_columns_for_a_long_name(tmp_path):
    """A name past 32 characters pushed the rest of its line out of the columns."""
    home = open_home(tmp_path / "h")
    write_skill(home, "a-very-long-skill-name-for-alignment-check", category="devops")
    write_skill(home, "short")
    home.close()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["skills", "list", "--home", str(tmp_path / "h")]) == 0
    lines = out.getvalue().splitlines()
    assert {line.index(" active ") for line in lines} == {len("a-very-long-skill-name-for-alignment-check  devops ")}


def test_hand_broken_usage_file_and_bad_limits_never_give_a_traceback(tmp_path):
    home = open_home(tmp_path / "h")
    write_skill(home, "deploy", category="ops")
    home.close()
    (tmp_path / "h" / "skills" / ".usage.json").write_text(json.dumps({"deploy": {"use_count": "lots", "pinned": 2}}))
    for args in (("skills", "list"), ("curator", "status"), ("curator", "run", "--dry-run")):
        proc = subprocess.run(
            [sys.executable, "-m", "workbench", *args, "--home", str(tmp_path / "h"), "--json"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, (args, proc.stderr)
        json.loads(proc.stdout)
    proc = subprocess.run(
        [sys.executable, "-m", "workbench", "curator", "ledger", "--limit", "-1", "--home", str(tmp_path / "h")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "--limit: -1 is out of range" in proc.stderr


def test_skills_show_inspects_an_archived_skill_without_counting_a_view(tmp_path):
    home = open_home(tmp_path / "h")
    write_skill(home, "deploy", category="ops", files={"references/api.md": "# API"})
    home.curator.archive("deploy")
    home.close()
    code, shown = wb(tmp_path / "h", "skills", "show", "deploy")
    assert code == 0 and shown["archived"] is True and shown["path"] == ".archive/deploy"
    assert shown["linked_files"] == {"references": ["references/api.md"]}
    code, one = wb(tmp_path / "h", "skills", "show", "deploy", "--file", "references/api.md")
    assert code == 0 and one["content"] == "# API"
    home = open_home(tmp_path / "h")
    assert home.skills.get("deploy").view_count == 0
    with pytest.raises(SkillError, match="not found"):
        home.skills.view("deploy")  # the agent never views an archived skill
    home.close()


def test_pause_resume_status_and_a_staged_consolidation_from_the_shell(tmp_path):
    from tests.test_curator_consolidate import MERGE, REBASE, agent_skill

    home = open_home(tmp_path / "h")
    agent_skill(home, "git-rebase", description="Rebase a git branch onto main safely", body=REBASE)
    agent_skill(
        home,
        "git-merge",
        description="Merge a git branch into main safely",
        body=MERGE,
        files={"scripts/check.sh": "echo ok\n"},
    )
    home.close()
    assert wb(tmp_path / "h", "curator", "pause")[1]["paused"] is True
    code, status = wb_process(tmp_path / "h", "curator", "status")
    assert code == 0 and status["paused"] and status["next"]["reason"].startswith("paused")
    assert status["settings"]["interval_hours"] == 168 and status["settings"]["consolidate"] is False
    assert wb(tmp_path / "h", "curator", "resume")[1]["paused"] is False
    code, staged = wb(tmp_path / "h", "curator", "consolidate")
    assert code == 0 and staged["staged"]
    proc = subprocess.run(
        [sys.executable, "-m", "workbench", "pending", "show", staged["pending_id"], "--home", str(tmp_path / "h")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0
    assert (
        "=== create git/SKILL.md" in proc.stdout
        and "=== copy git/scripts/check.sh (from git-merge/scripts/check.sh)" in proc.stdout
        and "=== archive git-rebase/SKILL.md" in proc.stdout
    )
    code, listed = wb(tmp_path / "h", "pending", "list")
    assert [(p["action"], p["origin"]) for p in listed["pending"]] == [("consolidate", "curator")]


def test_ledger_columns_line_up_whatever_the_action_and_skill():
    """'write_file' (10 letters) pushed its skill a column right of every 'create' row, and the skill
    names were not padded, so the actor column wandered."""
    from engine.curator.ledger import SKILL_CELLS, LedgerEntry, columns

    entries = [
        LedgerEntry(
            "a", "2026-12-04T05:52:19+00:00", "curator", "create", "triage-invoice-export", journal_actor="review"
        ),
        LedgerEntry("b", "2026-12-04T05:52:04+00:00", "user", "write_file", "x" * 50),
        LedgerEntry("c", "2026-12-04T05:52:04+00:00", "user", "archive", "brew"),
    ]
    rows = columns(entries)
    assert {len(action) for _, action, _, _ in rows} == {10} and {len(skill) for _, _, skill, _ in rows} == {
        SKILL_CELLS
    }
    assert rows[0] == (
        "2026-12-04 05:52",
        "create    ",
        "triage-invoice-export".ljust(SKILL_CELLS),
        "review (ledger: curator)",
    )
    assert rows[1][2] == "x" * (SKILL_CELLS - 1) + "…"


def test_the_ledger_names_the_folder_of_a_skill_it_lists_in_two():
    """A trial: two rows read `archive  agent-tool  by curator`, one for each of two folders."""
    from engine.curator.ledger import FileRef, LedgerEntry, columns

    def archive(entry_id: str, folder: str) -> LedgerEntry:
        before = (FileRef(f"skills/{folder}/SKILL.md", "0" * 64),)
        after = (FileRef(f"skills/.archive/{entry_id}/SKILL.md", "0" * 64),)
        return LedgerEntry(
            entry_id, "2026-12-04T05:52:19+00:00", "curator", "archive", "tool", before=before, after=after
        )

    rows = columns([archive("a", "ops/tool"), archive("b", "tool"), archive("c", "ops/tool")])
    assert [skill.rstrip() for _, _, skill, _ in rows] == ["tool (ops/tool)", "tool (tool)", "tool (ops/tool)"]
    assert [skill.rstrip() for _, _, skill, _ in columns([archive("a", "ops/tool")])] == ["tool"]


def test_the_ledger_cuts_a_long_folder_where_it_repeats_the_name():
    """A user trial: a skill archived and restored was listed as `pdf-extract (documents/pdf-extr…` and
    `pdf-extract (.archive/pdf-extra…`, cut where the two rows read alike and at any width. A folder that
    does not fit gives way where it repeats the name, as the Skills table shortens it."""
    from engine.curator.ledger import SKILL_CELLS, FileRef, LedgerEntry, columns, shortened

    def moved(entry_id: str, action: str, folder: str, to: str) -> LedgerEntry:
        before, after = (FileRef(f"skills/{folder}/SKILL.md", "0" * 64),), (FileRef(f"skills/{to}/SKILL.md", "1" * 64),)
        return LedgerEntry(
            entry_id, "2026-12-07T09:15:00+00:00", "user", action, "pdf-extract", before=before, after=after
        )

    rows = columns(
        [
            moved("a", "restore", ".archive/pdf-extract", "documents/pdf-extract"),
            moved("b", "archive", "documents/pdf-extract", ".archive/pdf-extract"),
            moved("c", "restore", ".archive/pdf-extract-20261207091500", "documents/pdf-extract"),
        ]
    )
    assert [skill.rstrip() for _, _, skill, _ in rows] == [
        "pdf-extract (.archive)",
        "pdf-extract (documents/…)",
        "pdf-extract (…-20261207091500)",
    ]
    assert {len(skill) for _, _, skill, _ in rows} == {len(rows[2][2])} and len(rows[2][2]) <= SKILL_CELLS
    named = [moved("a", "restore", ".archive/pdf-extract", "documents/pdf-extract"), moved("d", "x", "ops/t", "ops/t")]
    assert shortened(named) == ["pdf-extract (.archive/pdf-extract)", None]  # what the TUI shows whole, if cut


def test_a_consolidation_is_listed_by_its_umbrella_not_an_absorbed_skills_folder():
    """A user trial: the ledger listed a consolidation and its rollback as `k8s-rollout-v2-family (devops/k…`
    and `k8s-rollout-v2-family (.archive…`: the folder taken for the umbrella was the first SKILL.md the
    change held, an absorbed skill's, so the two rows seemed to name two folders of it."""
    from engine.curator.ledger import FileRef, LedgerEntry, columns

    absorbed = [FileRef(f"skills/devops/{name}/SKILL.md", "0" * 64) for name in ("k8s-rollout-v2", "nginx-reload")]
    archived = [FileRef(f"skills/.archive/{name}/SKILL.md", "1" * 64) for name in ("k8s-rollout-v2", "nginx-reload")]
    umbrella = FileRef("skills/devops/k8s-rollout-v2-family/SKILL.md", "2" * 64)
    made = LedgerEntry(
        "a", "2026-12-07T09:32:00+00:00", "user", "consolidate", "k8s-rollout-v2-family",
        before=tuple(absorbed), after=(*archived, umbrella),
    )  # fmt: skip
    undone = LedgerEntry(
        "b", "2026-12-07T09:58:00+00:00", "user", "rollback", "k8s-rollout-v2-family",
        before=(*archived, umbrella), after=tuple(absorbed),
    )  # fmt: skip
    assert made.folder == undone.folder == "devops/k8s-rollout-v2-family"
    assert [skill.rstrip() for _, _, skill, _ in columns([undone, made])] == ["k8s-rollout-v2-family"] * 2


def test_the_text_listing_keeps_its_columns_for_a_pinned_skill(tmp_path):
    """A pinned row pushed its provenance, uses and description one word to the right."""
    home = open_home(tmp_path / "h")
    write_skill(home, "deploy", category="ops")
    write_skill(home, "rotate-logs", category="ops")
    home.curator.pin("deploy")
    home.close()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["skills", "list", "--home", str(tmp_path / "h")]) == 0
    lines = out.getvalue().splitlines()
    assert [line.index("user") for line in lines] == [lines[0].index("user")] * 2 and "pinned" in lines[0]
    assert len({line.index("uses") for line in lines}) == 1


def test_skills_list_names_who_proposed_a_skill_the_user_approved(tmp_path):
    from engine.approvals.records import BACKGROUND_REVIEW
    from engine.skills.manage import skill_manage_tool
    from engine.tools import ToolContext

    home = open_home(tmp_path / "h")
    home.config_path.write_text("skills:\n  write_approval: true\n")
    home.reload_config()
    content = "---\nname: brew\ndescription: Tea\n---\nBoil.\n"
    review = ToolContext(actor="review", origin=BACKGROUND_REVIEW)
    staged = skill_manage_tool(home, {"action": "create", "name": "brew", "content": content}, review)
    assert home.approvals.approve(staged["pending_id"])["success"]
    write_skill(home, "deploy", category="ops")
    home.close()
    code, listed = wb(tmp_path / "h", "skills", "list")
    assert {s["name"]: (s["provenance"], s["proposed_by"]) for s in listed["skills"]} == {
        "brew": ("user", "review"),
        "deploy": ("user", None),
    }
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["skills", "list", "--home", str(tmp_path / "h")]) == 0
    brew, deploy = sorted(out.getvalue().splitlines())
    assert " user (approved, proposed by review) uses 0" in brew
    assert deploy.index("uses") == brew.index("uses")  # the column is as wide as its longest


def test_curator_rollback_refuses_to_make_a_second_active_skill_of_one_name(tmp_path, capsys):
    """The CLI skin of the ledger rollback: the same refusal as `skills restore`, nothing changed."""
    home = open_home(tmp_path / "h")
    write_skill(home, "k8s-rollout", category="ops")
    home.curator.archive("k8s-rollout")
    write_skill(home, "k8s-rollout", category="devops")
    second = home.curator.archive("k8s-rollout", actor="curator")
    home.curator.restore(".archive/k8s-rollout")
    active = home.skills.find("k8s-rollout").path
    home.close()
    capsys.readouterr()
    assert main(["curator", "rollback", second["ledger_id"], "--home", str(tmp_path / "h")]) != 0
    said = capsys.readouterr()
    assert f"A skill named 'k8s-rollout' is already active at {active}; archive or rename it before restoring " in (
        said.out + said.err
    )
    assert "Traceback" not in said.out + said.err
    assert not (tmp_path / "h" / "skills" / "devops").exists()


@pytest.mark.slow
def test_status_says_how_its_counts_relate_to_hermes_curator_status(hermes, tmp_path):
    """It said ``4 active, 0 stale, 2 archived (4 curator-managed …; hermes curator status counts only the
    agent-created ones)`` where Hermes says 2: the 4 active held user-owned skills, and Hermes leaves out the
    archived agent-made ones. The line Hermes's count is compared with is what Hermes's own code counts."""
    home = open_home(tmp_path / "h")
    for name in ("made-1", "made-2", "made-3", "made-4"):
        write_skill(home, name)
        home.skills.usage.set_fields(name, created_by="agent")
    write_skill(home, "mine-1")
    write_skill(home, "mine-2")
    home.curator.archive("made-3")
    home.curator.archive("made-4")
    home.close()
    theirs = hermes.json(
        tmp_path / "h",
        """
        import json
        from tools import skill_usage
        rows = skill_usage.agent_created_report()
        states = [r.get("state", "active") for r in rows]
        print(json.dumps({s: states.count(s) for s in ("active", "stale", "archived")}))
        """,
    )
    code, status = wb(tmp_path / "h", "curator", "status")
    assert code == 0 and status["hermes_counts"] == theirs == {"active": 2, "stale": 0, "archived": 0}
    assert (status["counts"], status["managed"]) == (
        {"active": 4, "stale": 0, "archived": 2},
        {"active": 2, "stale": 0, "archived": 2},
    )
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["curator", "status", "--home", str(tmp_path / "h")])
    text = out.getvalue()
    assert (
        "skills: 4 active, 0 stale, 2 archived, all skills (bundled, hub and user-owned too); 4 curator-managed, "
        "the ones the Curator ages: 2 active, 0 stale, 2 archived" in text
    )
    assert (
        "hermes: `hermes curator status` says 2 agent-created (2 active, 0 stale, 0 archived): only skills the "
        "agent made, the archived ones (in skills/.archive) left out" in text
    )
    listed = subprocess.run(
        [sys.executable, "-m", "workbench", "skills", "list", "--help"], capture_output=True, text=True
    )
    # (``mine-1`` reads ``user`` where `hermes curator usage` says ``agent``: the listing's help says why)
    said = " ".join(listed.stdout.split())
    assert "user = a local skill the agent did not make. `hermes curator usage` lists both as `agent`" in said


@pytest.mark.parametrize("aging", ["stale_after_days: -5", "stale_after_days: 30\n  archive_after_days: 10"])
def test_curator_status_says_when_its_aging_settings_stop_every_pass(tmp_path, aging):
    """`stale after -5 d` was listed as if it applied, while every pass of ours refuses to run with it (and
    Hermes's marks every agent-made skill stale)."""
    home = tmp_path / "h"
    home.mkdir()
    (home / "config.yaml").write_text(f"curator:\n  {aging}\n", encoding="utf-8")
    code, status = wb(home, "curator", "status")
    assert code == 0 and "must be at least 1 and no more than" in status["policy_problem"]
    text = printed("curator", "status", "--home", str(home))
    assert "⚠ curator.stale_after_days" in text and "no Curator pass of the workbench runs" in text
    (home / "config.yaml").write_text("curator:\n  stale_after_days: 30\n", encoding="utf-8")
    code, status = wb(home, "curator", "status")
    assert code == 0 and status["policy_problem"] is None


HERMES_CURATOR_PASS = """
import json
from agent.curator import load_state, run_curator_review
run_curator_review(synchronous=True, dry_run=%s)
print(json.dumps(load_state()))
"""


@pytest.mark.slow
def test_status_after_a_hermes_dry_run_says_its_summary_is_a_dry_run_s(hermes, tmp_path):
    """After Hermes's curator dry run, status said ``last run: <the real pass>`` beside ``last summary: dry-run
    auto: …``: Hermes records the dry run's summary but leaves ``last_run_at`` at the last real pass."""
    home = tmp_path / "h"
    open_home(home).close()
    ran = hermes.json(home, HERMES_CURATOR_PASS % "False")
    state_file = home / "skills" / ".curator_state"
    state = json.loads(state_file.read_text(encoding="utf-8"))
    state["last_run_at"] = "2026-01-02T03:04:05+00:00"  # (that real pass a while ago)
    state_file.write_text(json.dumps(state), encoding="utf-8")
    dry = hermes.json(home, HERMES_CURATOR_PASS % "True")
    assert ran["run_count"] == dry["run_count"] == 1 and dry["last_run_summary"].startswith("dry-run auto: ")
    code, status = wb(home, "curator", "status")
    stamp = dry["last_report_path"].rsplit("/", 1)[1][:15]
    at = f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]}T{stamp[9:11]}:{stamp[11:13]}:{stamp[13:]}+00:00"
    assert code == 0 and status["last_summary_dry_run"] == {"at": at}
    text = printed("curator", "status", "--home", str(home))
    assert f"last summary: {dry['last_run_summary']} (a dry run at " in text
    assert ": it changed nothing; last run is the last real pass)" in text
    state_file.write_text(json.dumps({**dry, "last_run_at": None, "run_count": 0}), encoding="utf-8")
    assert "it changed nothing; no real pass has run yet)" in printed("curator", "status", "--home", str(home))
    hermes.json(home, HERMES_CURATOR_PASS % "False")  # a real pass again: its summary is its own
    code, status = wb(home, "curator", "status")
    assert status["last_summary_dry_run"] is None and status["last_run_summary"].startswith("auto: ")
