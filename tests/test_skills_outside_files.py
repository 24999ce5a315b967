"""A skill's support files (references/, templates/, scripts/, assets/) changed outside the workbench
are journaled as ``external`` too, one row per file; ours never are."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from engine import open_home
from engine.timeline import Timeline
from tests.hermes_support import workbench_cmd
from tests.test_skills_outside import BREW, _create_brew
from tests.test_skills_support import skill_md

HERMES_FILES = """
import json
from tools.skill_manager_tool import skill_manage
print(json.dumps([json.loads(skill_manage(**c)) for c in [
    dict(action="write_file", name="beta-logs", file_path="scripts/run.sh", file_content="tail -f beta.log\\n"),
    dict(action="remove_file", name="beta-logs", file_path="scripts/run.sh"),
    dict(action="write_file", name="beta-logs", file_path="references/api.md", file_content="# API\\n"),
]]))
"""


def _file_rows(home) -> list[tuple[str, str, str, str | None]]:
    rows = home.journal.connection().execute(
        "SELECT target, json_extract(detail, '$.change'), json_extract(detail, '$.path'), "
        "json_extract(detail, '$.file') FROM journal WHERE subsystem = 'skills' AND action = 'external' ORDER BY id"
    )
    return [tuple(r) for r in rows]


def _beta_logs(home, files: tuple[str, ...] = ()):
    """devops/beta-logs with ``files`` (each holding its own path), all written by us."""
    assert home.skills.manage(
        {"action": "create", "name": "beta-logs", "category": "devops", "content": skill_md("beta-logs")}
    )["success"]
    for path in files:
        call = {"action": "write_file", "name": "beta-logs", "file_path": path, "file_content": f"{path}\n"}
        assert home.skills.manage(call)["success"]
    return home.skills_dir / "devops" / "beta-logs"


@pytest.mark.slow  # Hermes's own skill_manage in its own process, and the CLI in its own
def test_support_files_hermes_writes_and_removes_reach_the_timeline(home, hermes):
    """Hermes's write_file and remove_file never reached the Timeline: only SKILL.md was looked at."""
    _beta_logs(home)
    home.skills.outside.record()
    results = hermes.json(home.root, HERMES_FILES)
    assert [r["success"] for r in results] == [True, True, True], json.dumps(results)
    shown = subprocess.run(workbench_cmd("timeline", "--home", str(home.root)), capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    # one look after all three: the script came and went, the reference is new
    assert "file 'references/api.md' of skill 'beta-logs' created outside the workbench " in shown.stdout
    assert "(devops/beta-logs/references/api.md)" in shown.stdout
    assert "scripts/run.sh" not in shown.stdout
    assert _file_rows(home) == [("beta-logs", "created", "devops/beta-logs/references/api.md", "references/api.md")]


def test_support_files_changed_by_hand_are_created_edited_and_removed(home):
    folder = _beta_logs(home, ("scripts/run.sh",))
    home.skills.outside.record()
    (folder / "scripts" / "run.sh").write_text("scripts/ran.sh\n", encoding="utf-8")  # the same size, in place
    os.utime(folder / "scripts" / "run.sh", ns=(1_500_000_000 * 10**9,) * 2)
    (folder / "templates" / "deep").mkdir(parents=True)
    (folder / "templates" / "deep" / "t.yaml").write_text("a: 1\n", encoding="utf-8")
    (folder / "templates" / "deep" / ".t.yaml.tmp.x").write_text("mid-write\n", encoding="utf-8")
    (folder / "notes.txt").write_text("not a support folder\n", encoding="utf-8")
    ids = home.skills.outside.record()
    assert len(ids) == 2 and home.skills.outside.record() == []
    (folder / "scripts" / "run.sh").unlink()
    home.skills.outside.record()
    assert _file_rows(home) == [
        ("beta-logs", "edited", "devops/beta-logs/scripts/run.sh", "scripts/run.sh"),
        ("beta-logs", "created", "devops/beta-logs/templates/deep/t.yaml", "templates/deep/t.yaml"),
        ("beta-logs", "removed", "devops/beta-logs/scripts/run.sh", "scripts/run.sh"),
    ]
    summaries = [r.summary for r in Timeline(home).page(subsystem="skills", actor="external")]
    assert summaries[0] == (
        "file 'scripts/run.sh' of skill 'beta-logs' removed outside the workbench (devops/beta-logs/scripts/run.sh)"
    )


def test_a_skill_created_removed_or_archived_with_its_files_is_one_row(home):
    folder = _beta_logs(home, ("references/a.md",))
    home.skills.outside.record()
    (home.skills_dir / ".archive").mkdir()
    os.rename(folder, home.skills_dir / ".archive" / "beta-logs")  # as Hermes's curator archives it
    made = home.skills_dir / "tea"
    (made / "assets").mkdir(parents=True)
    (made / "SKILL.md").write_text(skill_md("tea"), encoding="utf-8")
    (made / "assets" / "cup.txt").write_text("cup\n", encoding="utf-8")
    home.skills.outside.record()
    assert _file_rows(home) == [
        ("beta-logs", "archived", "devops/beta-logs/SKILL.md", None),
        ("tea", "created", "tea/SKILL.md", None),
    ]
    (made / "assets" / "cup.txt").write_text("mug\n", encoding="utf-8")  # and its file is watched from then on
    home.skills.outside.record()
    assert _file_rows(home)[-1] == ("tea", "edited", "tea/assets/cup.txt", "assets/cup.txt")


@pytest.mark.parametrize("looked", [True, False], ids=["tui", "cli"])
def test_our_own_support_file_writes_are_never_outside(tmp_path, clock, looked):
    """Our write_file, patch of a file and remove_file, from a process that looked (the TUI) or not (the CLI)."""
    first = open_home(tmp_path / "home", clock=clock)
    _beta_logs(first)
    first.skills.outside.record()
    first.close()
    home = open_home(tmp_path / "home", clock=clock)
    if looked:
        home.skills.outside.record()
    calls = [
        {"action": "write_file", "name": "beta-logs", "file_path": "scripts/run.sh", "file_content": "echo 1\n"},
        {"action": "patch", "name": "beta-logs", "file_path": "scripts/run.sh", "old_string": "1", "new_string": "2"},
        {"action": "write_file", "name": "beta-logs", "file_path": "references/api.md", "file_content": "# API\n"},
        {"action": "remove_file", "name": "beta-logs", "file_path": "scripts/run.sh"},
    ]
    for call in calls:
        assert home.skills.manage(call)["success"], call
    home.skills.outside.record()
    watcher = open_home(tmp_path / "home", clock=clock)  # the next `workbench timeline`
    try:
        assert watcher.skills.outside.record() == [] and _file_rows(watcher) == []
    finally:
        watcher.close()
        home.close()


def test_two_workbenches_journal_an_outside_file_write_once(home):
    folder = _beta_logs(home)
    other = open_home(home.root)
    try:
        home.skills.outside.record(), other.skills.outside.record()
        (folder / "assets").mkdir()
        (folder / "assets" / "logo.svg").write_text("<svg/>\n", encoding="utf-8")
        assert len(home.skills.outside.record()) == 1 and other.skills.outside.record() == []
        assert _file_rows(home) == [("beta-logs", "created", "devops/beta-logs/assets/logo.svg", "assets/logo.svg")]
    finally:
        other.close()


def test_a_look_reads_no_file_whose_stamp_did_not_move(home, monkeypatch):
    folder = _beta_logs(home, ("references/a.md",))
    home.skills.outside.record()
    home.skills.outside._last = None  # a new process: it goes on from the look kept in workbench.db
    read = []
    real = home.links.read_bytes
    monkeypatch.setattr(home.links, "read_bytes", lambda path, **scope: read.append(path) or real(path, **scope))
    assert home.skills.outside.record() == []
    (folder / "references" / "a.md").write_text("bb\n", encoding="utf-8")
    assert home.skills.outside.record()
    assert [path for path in read if folder in path.parents] == [folder / "references" / "a.md"]


def test_a_look_kept_by_an_earlier_version_still_works_both_ways(home):
    """An earlier version keeps no support files: its look is read, its tables hold SKILL.md rows alone,
    the first look after it takes the files' baseline, and a look of its that moved the mark past a
    file change of ours leaves that change ours."""
    folder = _beta_logs(home, ("references/a.md",))
    _create_brew(home)
    home.skills.outside.record()
    conn = home.journal.connection()
    assert [r[0] for r in conn.execute("SELECT path FROM skills_looked")] == [  # as an earlier version reads them
        "brew/SKILL.md",
        "devops/beta-logs/SKILL.md",
    ]
    conn.executescript("DROP TABLE skills_looked_files; DROP TABLE skills_look_files;")  # a look it kept
    (folder / "references" / "b.md").write_text("b\n", encoding="utf-8")
    (home.skills_dir / "brew" / "SKILL.md").write_text(BREW.replace("3", "9"), encoding="utf-8")
    home.skills.outside._last = None
    assert len(home.skills.outside.record()) == 1  # brew's edit; the files are the baseline
    assert [r[1:3] for r in _file_rows(home)] == [("edited", "brew/SKILL.md")]
    # an earlier version writes a support file and, looking after it, moves the kept mark past its row
    assert home.skills.manage(
        {"action": "write_file", "name": "beta-logs", "file_path": "references/a.md", "file_content": "ours\n"}
    )["success"]
    home.skills.outside._last = None
    conn.execute("UPDATE skills_looked_files SET sha = 'before ours', size = 0 WHERE path LIKE '%/a.md'")
    conn.execute("UPDATE skills_look_files SET journal_id = 0")
    assert home.skills.outside.record() == []
    assert [r[1:3] for r in _file_rows(home)] == [("edited", "brew/SKILL.md")]


def test_json_timeline_says_what_each_outside_skill_change_was(home, capsys):
    """Every outside skill row's action is ``external``: only the summary told created from removed."""
    from workbench.cli import main

    folder = _beta_logs(home, ("references/a.md",))
    _create_brew(home)
    assert home.curator.archive("brew")["success"]
    home.skills.outside.record()
    (folder / "references" / "a.md").unlink()
    (folder / "SKILL.md").write_text(skill_md("beta-logs", body="Edited.\n"), encoding="utf-8")
    os.rename(home.skills_dir / ".archive" / "brew", home.skills_dir / "brew")  # as Hermes's restore_skill
    assert main(["--home", str(home.root), "--json", "timeline", "--actor", "external"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [(r["action"], r["change"], r["file"], r["target"]) for r in rows] == [
        ("external", "removed", "references/a.md", "beta-logs"),
        ("external", "edited", None, "beta-logs"),
        ("external", "restored", None, "brew"),
    ]
    assert main(["--home", str(home.root), "--json", "timeline", "--subsystem", "skills"]) == 0
    ours = [r for r in json.loads(capsys.readouterr().out)["rows"] if r["actor"] != "external"]
    assert {(r["action"], r["change"], r["file"]) for r in ours} == {  # (their action says it)
        ("create", None, None),
        ("write_file", None, None),
        ("archive", None, None),
    }
