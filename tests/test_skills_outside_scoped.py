"""The looks around a change of ours see only what it touches, with the outcomes full looks had.

Each skill change of ours looks before it (an outside change of what it touches is theirs) and
after it (the kept look moves past our row), at its own files, names and pins only; anything
else changed outside meanwhile is left for the next full look (the TUI's watcher, `workbench
timeline`), which must find it as it would have found it.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess

import pytest

from engine import open_home
from engine.errors import WorkbenchError
from engine.skills.outside import OutsideChanges
from tests.hermes_support import workbench_cmd
from tests.test_skills_outside import BREW, _outside_rows
from tests.test_skills_support import skill_md

TEA = "---\nname: tea\ndescription: Which tea to pick\n---\n\nGreen in the morning.\n"

HERMES_PATCHES_BREW = """
import json
from tools.skill_manager_tool import skill_manage
print(json.dumps(json.loads(skill_manage(action="patch", name="brew", old_string="Boil", new_string="Heat"))))
"""
HERMES_RESTORES_BREW = """
import json
from tools.skill_usage import restore_skill
print(json.dumps(list(restore_skill("brew"))))
"""
# while a change of ours runs: a pin of one skill and a restore of another
HERMES_PINS_TEA_RESTORES_MINT = """
import json
from tools.skill_usage import restore_skill, set_pinned
set_pinned("tea", True)
print(json.dumps(list(restore_skill("mint"))))
"""


def _library(root, clock):
    """brew and tea active, mint archived, and the look a TUI kept of it; closed."""
    home = open_home(root, clock=clock)
    for name, text in (("brew", BREW), ("tea", TEA), ("mint", skill_md("mint"))):
        assert home.skills.manage({"action": "create", "name": name, "content": text})["success"]
    assert home.curator.archive("mint")["success"]
    assert home.skills.outside.record() == []  # the baseline
    home.close()


def _cli(root, *args: str) -> str:
    done = subprocess.run(workbench_cmd(*args, "--home", str(root)), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _ours(root, clock, looked: bool):
    """A workbench process about to change a skill: a TUI that has looked already, or the CLI (none yet)."""
    home = open_home(root, clock=clock)
    if looked:
        home.skills.outside.record()
    return home


def _between_our_looks(home, run) -> None:
    """Run ``run`` while our next change is part way: after its look before, before its look after."""
    write = home.skills.usage.update

    def update(change):
        run()
        return write(change)

    home.skills.usage.update = update


def _set_pin(home, name: str) -> None:
    """Flip a pin in .usage.json as Hermes's set_pinned does (a whole new file)."""
    path = home.skills_dir / ".usage.json"
    records = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    record = records.setdefault(name, {})
    record["pinned"] = not record.get("pinned")
    path.with_suffix(".tmp").write_text(json.dumps(records), encoding="utf-8")
    os.replace(path.with_suffix(".tmp"), path)


@pytest.mark.slow  # Hermes's own skill tool, and the CLI, each in its own process
@pytest.mark.parametrize("ours", ["pin", "archive"])
def test_a_hermes_patch_of_a_skill_just_before_we_change_it_is_theirs(tmp_path, hermes, clock, ours):
    """The look before our change sees only that skill: it must still journal Hermes's patch as
    Hermes's, before our row would make it ours."""
    root = tmp_path / "home"
    _library(root, clock)
    assert hermes.json(root, HERMES_PATCHES_BREW)["success"]
    _cli(root, "skills", ours, "brew")
    shown = _cli(root, "timeline")
    assert "skill 'brew' edited outside the workbench (brew/SKILL.md)" in shown
    home = open_home(root, clock=clock)
    try:
        assert _outside_rows(home) == [("external", "brew", "edited", "brew/SKILL.md")]
    finally:
        home.close()


@pytest.mark.slow  # Hermes's own code in its own process
@pytest.mark.parametrize("looked", [True, False], ids=["tui", "cli"])
def test_what_hermes_does_to_our_skill_right_after_our_change_is_theirs(tmp_path, hermes, clock, looked):
    """Our patch, then our archive: the look after each moves the kept look past our row, so Hermes's
    patch and then its restore of that archived copy read as Hermes's (restored, not created)."""
    root = tmp_path / "home"
    _library(root, clock)
    home = _ours(root, clock, looked)
    assert home.skills.manage({"action": "patch", "name": "brew", "old_string": "3", "new_string": "4"})["success"]
    home.close()
    assert hermes.json(root, HERMES_PATCHES_BREW)["success"]
    home = _ours(root, clock, looked)
    assert home.curator.archive("brew")["success"]
    home.close()
    assert hermes.json(root, HERMES_RESTORES_BREW)[0]
    assert "skill 'brew' restored outside the workbench" in _cli(root, "timeline")
    later = open_home(root, clock=clock)
    try:
        assert _outside_rows(later) == [
            ("external", "brew", "edited", "brew/SKILL.md"),
            ("external", "brew", "restored", "brew/SKILL.md"),
        ]
    finally:
        later.close()


@pytest.mark.slow  # Hermes's own code in its own process, part way through our change
@pytest.mark.parametrize("looked", [True, False], ids=["tui", "cli"])
def test_hermes_pinning_and_restoring_other_skills_during_our_change_is_found_next(tmp_path, hermes, clock, looked):
    """Our looks leave other skills' pins and the archive's other names as last seen: a look that took
    them in would hide Hermes's pin, and read its restore of mint as created."""
    root = tmp_path / "home"
    _library(root, clock)
    home = _ours(root, clock, looked)
    try:
        _between_our_looks(home, lambda: hermes.json(root, HERMES_PINS_TEA_RESTORES_MINT))
        assert home.curator.archive("brew")["success"]
        assert _outside_rows(home) == []  # neither is this change's to look at
        home.skills.outside.record()  # the next full look (the TUI's watcher)
        assert sorted(_outside_rows(home)) == [
            ("external", "mint", "restored", "mint/SKILL.md"),
            ("external", "tea", "pinned", "tea/SKILL.md"),
        ]
    finally:
        home.close()


@pytest.mark.slow  # another workbench process, part way through our change
@pytest.mark.parametrize("looked", [True, False], ids=["tui", "cli"])
def test_another_workbench_changing_another_skill_during_our_change_is_never_outside(tmp_path, clock, looked):
    """The CLI pins tea while our pin of brew is part way: our look after must not move the kept look
    past the CLI's row, whose pin it did not take in, or the next look reads that pin as outside. (A pin
    holds the skills lock, so the CLI's waits for ours to end and lands after it.)"""
    root = tmp_path / "home"
    _library(root, clock)
    home = _ours(root, clock, looked)
    started: list[subprocess.Popen] = []
    try:
        pin_tea = workbench_cmd("skills", "pin", "tea", "--home", str(root))
        _between_our_looks(home, lambda: started.append(subprocess.Popen(pin_tea, stdout=subprocess.PIPE, text=True)))
        assert home.curator.pin("brew")["success"]
        home.skills.outside.record()
        [cli] = started
        assert cli.wait(timeout=60) == 0
    finally:
        for cli in started:
            cli.kill()
            cli.wait()
        home.close()
    _cli(root, "timeline")  # a first look in another process, from the kept look
    later = open_home(root, clock=clock)
    try:
        assert later.skills.usage.pinned() == {"brew", "tea"}
        assert _outside_rows(later) == []
    finally:
        later.close()


def test_the_looks_around_a_change_look_at_nothing_else(tmp_path, clock, monkeypatch):
    """A patch, a pin, an archive and a restore look at their own skill only, with a look kept to go on from."""
    root = tmp_path / "home"
    _library(root, clock)

    def whole_library(self, seen):
        raise AssertionError("a look around one change walked the whole library")

    for looked in (True, False):
        home = _ours(root, clock, looked)
        monkeypatch.setattr(OutsideChanges, "_scan", whole_library)
        try:
            patch = {"action": "patch", "name": "brew", "old_string": "minutes", "new_string": f"minutes ({looked})"}
            assert home.skills.manage(patch)["success"]
            assert home.curator.pin("tea")["success"] and home.curator.unpin("tea")["success"]
            assert home.curator.archive("brew")["success"] and home.curator.restore("brew")["success"]
        finally:
            monkeypatch.undo()
            home.close()
        home = open_home(root, clock=clock)
        try:
            home.skills.outside.record()
            assert _outside_rows(home) == []
        finally:
            home.close()


def test_a_pin_of_a_name_two_skills_declare_set_just_before_we_patch_one_reads_for_both(home):
    """Pins are kept by name: the look before our patch of twin-a takes in twin's pin, so it must look at
    twin-b too (declaring the same name), or twin-b's pin would never be journaled."""
    for folder in ("twin-a", "twin-b"):
        (home.skills_dir / folder).mkdir()
        (home.skills_dir / folder / "SKILL.md").write_text(skill_md("twin", body=f"{folder}\n"), encoding="utf-8")
    home.skills.outside.record()
    _set_pin(home, "twin")  # as Hermes's set_pinned writes it
    cli = open_home(home.root)  # `workbench` patching twin-a
    try:
        patch = {"action": "patch", "name": "twin-a", "old_string": "twin-a", "new_string": "a"}
        assert cli.skills.manage(patch)["success"]
    finally:
        cli.close()
    home.skills.outside.record()
    assert sorted(_outside_rows(home)) == [
        ("external", "twin", "pinned", "twin-a/SKILL.md"),
        ("external", "twin", "pinned", "twin-b/SKILL.md"),
    ]


# -- the same outcomes as full looks, over many interleavings ---------------------------------------


def _outside(home, kind: str, found, serial: int, copies: set[str]) -> None:
    """One change by hand or as Hermes makes it: of ``found`` (an active skill), a new skill, or one of
    the archived ``copies`` restored."""
    skills = home.skills_dir
    if kind in ("edit", "rename"):
        name, body = (found.name, f"Edit {serial}.\n") if kind == "edit" else (f"n{serial}", "Renamed.\n")
        (found.path / "SKILL.md").write_text(skill_md(name, body=body), encoding="utf-8")
        # a stamp of its own: a write of the same size in the same clock tick as ours may not move it
        moment = (1_500_000_000 + serial) * 10**9
        os.utime(found.path / "SKILL.md", ns=(moment, moment))
    elif kind == "pin":
        _set_pin(home, found.name)
    elif kind == "file":  # a support file written, rewritten or removed, as Hermes's write_file / remove_file
        file = found.path / "references" / "n.md"
        if file.exists() and serial % 2:
            file.unlink()
        else:
            file.parent.mkdir(exist_ok=True)
            file.write_text(f"{serial}\n", encoding="utf-8")
            os.utime(file, ns=((1_500_000_000 + serial) * 10**9,) * 2)  # (a stamp of its own, as an edit's)
    elif kind == "archive":  # as Hermes's curator moves it
        (skills / ".archive").mkdir(exist_ok=True)
        os.rename(found.path, skills / ".archive" / f"{found.dir_name}-{serial}")
    elif kind == "remove":
        shutil.rmtree(found.path)
    elif kind == "create":
        (skills / "c1" / f"h{serial}").mkdir(parents=True)
        (skills / "c1" / f"h{serial}" / "SKILL.md").write_text(skill_md(f"h{serial}"), encoding="utf-8")
    elif kind == "restore":  # as Hermes's restore_skill moves a copy back out
        old = [c for c in home.skills.scanner.archived() if c.rel in copies]
        if old and not (skills / old[0].name).exists():
            os.rename(old[0].path, skills / old[0].name)


def _our_change(home, kind: str, found, serial: int) -> None:
    skills, curator = home.skills, home.curator
    pinned = found is not None and (skills.usage.load().get(found.name) or {}).get("pinned")
    calls = {
        "edit": lambda: skills.manage(
            {"action": "edit", "name": found.name, "content": skill_md(found.name, body=f"Ours {serial}.\n")}
        ),
        "rename": lambda: skills.manage(
            {"action": "edit", "name": found.name, "content": skill_md(f"o{serial}", body="Renamed.\n")}
        ),
        "file": lambda: skills.manage(
            {"action": "write_file", "name": found.name, "file_path": "references/n.md", "file_content": f"{serial}"}
        ),
        "pin": lambda: curator.unpin(found.name) if pinned else curator.pin(found.name),
        "archive": lambda: curator.archive(found.name),
        "delete": lambda: skills.manage({"action": "delete", "name": found.name}),
        "restore": lambda: curator.restore(skills.scanner.archived()[-1].name),
        "create": lambda: skills.manage({"action": "create", "name": f"w{serial}", "content": skill_md(f"w{serial}")}),
        "rollback": lambda: curator.rollback(curator.ledger(1)[0].id),
    }
    if found is None and kind not in ("restore", "create", "rollback"):
        return
    try:
        calls[kind]()
    except (WorkbenchError, IndexError):  # refused (pinned, archived or changed meanwhile): on both twins
        pass


OUTSIDE = ("edit", "rename", "file", "pin", "archive", "remove", "create", "restore")
ON_TARGET = ("edit", "rename", "file", "pin", "archive", "delete")  # our changes of the round's target skill
OURS = (*ON_TARGET, "restore", "create", "rollback")


def _pick(rng, others: list[str]) -> tuple[str, str | None]:
    """An outside change, and the skill it changes (taken from ``others``: one change each)."""
    kind = rng.choice(OUTSIDE)
    return kind, others.pop() if others and kind not in ("create", "restore") else None


def _twin(root, clock, scoped: bool):
    home = open_home(root, clock=clock)
    if not scoped:
        home.skills.outside._record_scoped = lambda scope: None  # every look a full one
    return home


@pytest.mark.parametrize("looked", [True, False], ids=["tui", "cli"])
def test_scoped_looks_journal_what_full_looks_journal(tmp_path, clock, looked):
    """Rounds of outside changes before and after one change of ours, each closed by a full look: the
    outside rows match, round by round, those of a twin home whose every look is a full one. (Between
    full looks another skill changes once at most: a full look around our change would see its middle.)"""
    first = open_home(tmp_path / "scoped", clock=clock)
    for i in range(8):
        category = f"c{i % 3}" if i % 4 else None
        assert first.skills.manage(
            {"action": "create", "name": f"s{i}", "content": skill_md(f"s{i}"), "category": category}
        )
    assert first.curator.archive("s7")["success"]
    first.skills.outside.record()
    first.close()
    shutil.copytree(tmp_path / "scoped", tmp_path / "full")
    sides = {True: tmp_path / "scoped", False: tmp_path / "full"}
    live = {scoped: _twin(root, clock, scoped) for scoped, root in sides.items()} if looked else {}
    for home in live.values():
        home.skills.outside.record()
    rng = random.Random(20261205)
    try:
        for serial in range(0, 400, 10):
            looking = _twin(sides[True], clock, True)
            active = sorted(f.rel for f in looking.skills.scanner.active())
            copies = {f.rel for f in looking.skills.scanner.archived()}  # (not one archived this round)
            looking.close()
            target = rng.choice(active) if active else None
            others = [rel for rel in active if rel != target]
            rng.shuffle(others)
            before = [_pick(rng, others) for _ in range(rng.randint(0, 2))]
            after = [_pick(rng, others) for _ in range(rng.randint(0, 2))]
            ours = rng.choice(OURS)
            if target is not None and ours in ON_TARGET:
                if rng.random() < 0.5:  # our skill changed outside just before ours
                    before.append((rng.choice(("edit", "file", "pin", "rename")), target))
                if rng.random() < 0.5:  # and just after
                    after.append((rng.choice(OUTSIDE), target))
            rows = {}
            for scoped, root in sides.items():
                home = live.get(scoped) or _twin(root, clock, scoped)
                for n, (kind, rel) in enumerate(before):
                    found = {f.rel: f for f in home.skills.scanner.active()}
                    if rel in found or kind in ("create", "restore"):
                        _outside(home, kind, found.get(rel), serial + n, copies)
                found = {f.rel: f for f in home.skills.scanner.active()}
                _our_change(home, ours, found.get(target), serial + 5)
                for n, (kind, rel) in enumerate(after):
                    found = {f.rel: f for f in home.skills.scanner.active()}
                    if rel in found or kind in ("create", "restore"):
                        _outside(home, kind, found.get(rel), serial + 7 + n, copies)
                watcher = live.get(scoped) or _twin(root, clock, scoped)
                watcher.skills.outside.record()
                rows[scoped] = sorted(row[1:] for row in _outside_rows(watcher))
                if not looked:
                    watcher.close()
                    home.close()
            diff = [[r for r in rows[side] if rows[True].count(r) != rows[False].count(r)] for side in (True, False)]
            assert rows[True] == rows[False], (
                f"{serial} {before} {ours} {target} {after}: scoped {diff[0]} full {diff[1]}"
            )
    finally:
        for home in live.values():
            home.close()
