"""Two processes archiving copies of one skill name at once: each copy keeps where it came from.

Another workbench process (a real one, on the same home) archives its copy in the gap before this
process takes the skills lock: what this archive writes (its folder under .archive/, the name's
``archived_copies``) is chosen under the lock, from the home as the other left it.
"""

from __future__ import annotations

import subprocess

from engine.skills.validation import SkillError
from tests.hermes_support import workbench_cmd
from tests.test_skills_support import skill_md

NAME = "k8s-rollout"


def _skill(home, rel: str) -> None:
    folder = home.skills_dir / rel
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(skill_md(NAME, body=f"from {rel}\n"), encoding="utf-8")


def _archived_first_by_another_process(home, monkeypatch, folder: str) -> None:
    """Just before this process next waits for the skills lock, another process archives ``folder``."""
    take = home.skills.write_lock
    ran = []

    def lock():
        if not ran:
            ran.append(
                subprocess.run(
                    workbench_cmd("--home", str(home.root), "skills", "archive", folder),
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
            )
            assert ran[0].returncode == 0, ran[0].stderr
        return take()

    monkeypatch.setattr(home.skills, "write_lock", lock)


def _restore_each(home) -> dict[str, str]:
    """Every archived copy of NAME restored in turn (archiving the one restored before, as a person
    would): the folder each went back to, by the text it holds."""
    back = {}
    for copy in sorted(f.dir_name for f in home.skills.scanner.archived()):
        restored = home.curator.restore(f".archive/{copy}")["restored_to"]
        text = (home.skills_dir / restored / "SKILL.md").read_text(encoding="utf-8")
        back[text.rsplit("from ", 1)[1].strip()] = home.skills.ledger.rel(home.skills_dir / restored)
        home.curator.archive(NAME)
    return back


def test_a_copy_archived_meanwhile_keeps_its_origin(home, monkeypatch):
    _skill(home, f"ops/{NAME}")
    _skill(home, "devops/k8s-deploy")  # the same name, another folder name
    _archived_first_by_another_process(home, monkeypatch, "devops/k8s-deploy")
    home.curator.archive(NAME, folder=f"ops/{NAME}")
    monkeypatch.undo()
    copies = home.skills.usage.load()[NAME].get("archived_copies") or {}
    assert copies.get("k8s-deploy", {}).get("archived_from") == "devops/k8s-deploy"
    assert _restore_each(home) == {
        "devops/k8s-deploy": "skills/devops/k8s-deploy",
        f"ops/{NAME}": f"skills/ops/{NAME}",
    }


def test_a_folder_name_archived_meanwhile_is_not_moved_onto(home, monkeypatch):
    _skill(home, f"ops/{NAME}")
    _skill(home, f"devops/{NAME}")  # the same folder name in another category
    _archived_first_by_another_process(home, monkeypatch, f"devops/{NAME}")
    archived = home.curator.archive(NAME, folder=f"ops/{NAME}")
    monkeypatch.undo()
    assert archived["archived_to"] != str(home.skills.archive_dir / NAME)  # theirs took that folder
    assert sorted(f.dir_name for f in home.skills.scanner.archived())[0] == NAME
    assert len(home.skills.scanner.archived()) == 2
    assert _restore_each(home) == {f"devops/{NAME}": f"skills/devops/{NAME}", f"ops/{NAME}": f"skills/ops/{NAME}"}


def test_a_folder_made_by_another_program_during_the_move_is_said(home, monkeypatch):
    """A program that takes no skills lock (Hermes) makes the very folder as the archive is journaled:
    nothing moves, and the person is told why, not sent to look at free space."""
    _skill(home, f"ops/{NAME}")
    begin = home.journal.begin

    def begin_while_hermes_archives(*args, **kwargs):
        _skill(home, f".archive/{NAME}")
        return begin(*args, **kwargs)

    monkeypatch.setattr(home.journal, "begin", begin_while_hermes_archives)
    try:
        home.curator.archive(NAME)
    except SkillError as exc:
        message = exc.message
    else:
        raise AssertionError("archived onto another program's folder")
    assert f"skills/.archive/{NAME} was made meanwhile by another program" in message
    assert "free space" not in message
    assert (home.skills_dir / "ops" / NAME / "SKILL.md").read_text(encoding="utf-8").endswith(f"from ops/{NAME}\n")
