"""Every ``workbench skills ...`` command a message suggests for a skill is one the CLI accepts.

Doctor suggested `workbench skills archive ../../evil` for a skill whose SKILL.md declares that name,
which the CLI refuses ("Skill name cannot contain '..'"): a suggestion names the skill as the CLI picks
it out (its folder when its name will not do), quoted for a shell and shown safely.
"""

from __future__ import annotations

import os
import shlex
import subprocess

import pytest

from engine.doctor import run_doctor
from engine.textsafety import shell_word
from tests.cli_support import completed
from tests.tui_support import make_app, settle, wait_for
from widgets.skill_list import SkillList
from workbench.screens.skills import SkillsScreen

EVIL = '---\nname: "../../evil"\ndescription: "turns \\u202e around \\e[31m"\n---\n\nDo it.\n'


def suggested(text: str, verb: str) -> str:
    """The ``workbench skills VERB ...`` command a message suggests (between backticks)."""
    return next(part for part in text.split("`") if part.startswith(f"workbench skills {verb} "))


def run_suggested(command: str, root) -> subprocess.CompletedProcess:
    """A suggested command as a person pastes it into bash: bash reads its words, which the workbench then
    runs in this process (``tests/cli_support.py``), on ``root``."""
    line = command.replace("workbench", f"printf '%s\\0' --home {shlex.quote(str(root))}", 1)
    words = subprocess.run(["bash", "-c", line], capture_output=True, check=True, timeout=60).stdout
    return completed(*(os.fsdecode(word) for word in words.split(b"\0")[:-1]))


def put(home, folder: str, text: str):
    skill = home.skills_dir / folder
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(text)
    return skill


@pytest.mark.parametrize(
    ("folder", "declared", "arg"),
    [
        ("misc/bad1", "../../evil", "misc/bad1"),  # a name the CLI refuses: its folder stands in
        ("misc/two words", "two words", "'two words'"),  # quoted for the shell
        ("misc/dash", "-dash", "misc/dash"),  # never read as an option
        ("-flat", "-flat", "-- -flat"),  # (nothing else picks it out)
        ("misc/plain", "plain", "plain"),
    ],
)
def test_doctors_suggested_archive_is_one_the_cli_accepts(home, folder, declared, arg):
    skill = put(home, folder, f'---\nname: "{declared}"\ndescription: "turns \\u202e around"\n---\n\nDo it.\n')
    [finding] = [f for f in run_doctor(home).findings if "threat pattern" in f.what]
    command = suggested(finding.fix, "archive")
    assert command == f"workbench skills archive {arg}"
    done = run_suggested(command, home.root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not skill.exists() and (home.skills_dir / ".archive" / skill.name / "SKILL.md").is_file()


def test_a_name_two_skills_answer_to_is_suggested_by_folder(home):
    put(home, "ops/deploy", EVIL.replace("../../evil", "deploy"))
    put(home, "web/deploy", "---\nname: deploy\ndescription: Ships the site\n---\n\nDo it.\n")
    [finding] = [f for f in run_doctor(home).findings if "threat pattern" in f.what]
    assert suggested(finding.fix, "archive") == "workbench skills archive ops/deploy"


@pytest.mark.parametrize("locale", ["C.UTF-8", "C"])  # (bash reads \u escapes only in a UTF-8 locale)
@pytest.mark.parametrize(
    "text",
    [
        "plain",
        "two words",
        "it's",
        "bad\x1b[31m",
        "a\u202eb",
        "line\nbreak",
        "back\\slash",
        "é\U0001f600",
        "nel\x85x",  # a C1 control: $'\x85' would be the byte, not the character (found in review)
        "tag\U000e0041",
    ],
)
def test_a_shell_word_is_shown_safely_and_reads_back_exactly(text, locale):
    word = shell_word(text)
    assert word.isprintable()
    env = {**os.environ, "LC_ALL": locale}
    read = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, timeout=30, env=env)
    assert read.stdout == text.encode()


def test_refusals_suggest_commands_that_work(home):
    skill = put(home, "misc/bad1", EVIL)
    assert home.curator.pin("misc/bad1")["success"]
    refused = run_suggested("workbench skills archive misc/bad1", home.root)
    assert refused.returncode == 1
    unpin = suggested(refused.stdout + refused.stderr, "unpin")
    assert unpin == "workbench skills unpin misc/bad1"
    assert run_suggested(unpin, home.root).returncode == 0
    assert run_suggested("workbench skills archive misc/bad1", home.root).returncode == 0
    assert not skill.exists()
    for refusal in ("workbench skills pin .archive/bad1", "workbench skills archive .archive/bad1"):
        said = run_suggested(refusal, home.root)
        assert said.returncode == 1
    shown = run_suggested("workbench skills show .archive/bad1", home.root)
    restore = suggested(shown.stdout, "restore")
    assert restore == "workbench skills restore .archive/bad1"  # (restore refuses '../../evil' as a name)
    pinned = run_suggested("workbench skills pin .archive/bad1", home.root)
    assert suggested(pinned.stdout + pinned.stderr, "restore") == restore
    done = run_suggested(restore, home.root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (skill / "SKILL.md").is_file()


@pytest.mark.anyio
@pytest.mark.parametrize(
    "declared",
    [EVIL, EVIL.replace('"../../evil"', '"tea\\u202ekit"')],  # (a name that picks it out, but cannot be typed)
)
async def test_the_skills_screen_suggests_the_unpin_the_cli_accepts(home, tmp_path, declared):
    put(home, "misc/bad1", declared)
    home.curator.pin("misc/bad1")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("3")
        await wait_for(pilot, lambda: isinstance(app.screen, SkillsScreen), what="the skills screen")
        table = app.screen.query_one(SkillList)
        await wait_for(pilot, lambda: table.row_count == 1, what="the skill")
        table.focus()
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        said = [n.message for n in app._notifications if "is pinned; unpin it first" in n.message]
        assert len(said) == 1 and suggested(said[0], "unpin") == "workbench skills unpin misc/bad1"
    assert run_suggested("workbench skills unpin misc/bad1", home.root).returncode == 0


def test_the_timeline_suggests_commands_that_work_for_a_name_no_command_takes(home):
    """An outside pin (Hermes's `skills pin`, in .usage.json) of a skill declaring ``../../evil``: the
    refusal to revert it said `workbench skills unpin ../../evil`."""
    import json

    from engine.timeline import Timeline

    put(home, "misc/bad1", EVIL)
    home.skills.outside.record()  # (the baseline)
    usage = home.skills_dir / ".usage.json"
    records = json.loads(usage.read_text()) if usage.exists() else {}
    records["../../evil"] = {**records.get("../../evil", {}), "pinned": True}
    usage.write_text(json.dumps(records))
    home.skills.outside.record()
    [row] = Timeline(home).page(subsystem="skills", limit=1)
    [refused] = Timeline(home).preview(row.id)["refused"]
    unpin = suggested(refused["error"], "unpin")
    assert unpin == "workbench skills unpin misc/bad1"
    assert run_suggested(unpin, home.root).returncode == 0
    assert not home.skills.get("misc/bad1").pinned
