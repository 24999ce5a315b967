"""Listing, progressive view, the prompt index and usage records."""

from __future__ import annotations

import json
import multiprocessing
import os

import pytest

from engine import open_home
from engine.events import SkillChanged
from engine.skills.frontmatter import problem_line, validate_skill_md
from engine.skills.validation import SkillError
from tests.test_skills_support import skill_md, write_skill


def test_list_is_sorted_and_reports_state_and_usage(home):
    write_skill(home, "zeta", category="ops")
    write_skill(home, "alpha", category="ops")
    write_skill(home, "flat")
    home.skills.record_use("alpha")
    names = [(s.category, s.name) for s in home.skills.list()]
    assert names == [(None, "flat"), ("ops", "alpha"), ("ops", "zeta")]
    alpha = home.skills.get("alpha")
    assert (alpha.state, alpha.use_count, alpha.provenance, alpha.pinned) == ("active", 1, "user", False)
    assert alpha.last_used_at == "2026-11-30T12:00:00+00:00"
    assert alpha.to_dict()["path"] == "ops/alpha"


def test_list_skips_metadata_and_support_folders(home):
    folder = write_skill(home, "real", files={"references/nested/SKILL.md": skill_md("not-a-skill")})
    (home.skills_dir / ".hub" / "x").mkdir(parents=True)
    (home.skills_dir / ".hub" / "x" / "SKILL.md").write_text(skill_md("hidden"))
    (home.skills_dir / "node_modules" / "y").mkdir(parents=True)
    (home.skills_dir / "node_modules" / "y" / "SKILL.md").write_text(skill_md("hidden2"))
    assert folder.exists()
    assert [s.name for s in home.skills.list()] == ["real"]


def test_discovery_tolerates_broken_yaml_and_missing_name(home):
    folder = home.skills_dir / "loose"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\ndescription: colon: inside: [oops\n---\nBody line\n")
    [info] = home.skills.list()
    assert info.name == "loose"
    assert info.description.startswith("colon")
    assert info.problem.startswith("YAML frontmatter parse error: ")  # listed, and said to be broken
    assert problem_line(info.problem) == "Line 2, column 19: mapping values are not allowed in this context"
    assert problem_line("Frontmatter must include 'name' field.") == "Frontmatter must include 'name' field."


@pytest.mark.parametrize(
    "text",
    [
        "",
        " \n\n",
        "Just a body\n",
        "---\nname: x\ndescription: never closed\n",
        "---\n- a list\n---\nBody\n",
        "---\nname: x\n---\nBody\n",
        "---\nname: x\ndescription: d\n---\n   \n",
        "\ufeff---\nname: x\ndescription: [oops\n---\nBody\n",
    ],
)
def test_a_listed_skill_carries_the_message_a_write_of_its_text_gets(home, text):
    """Only doctor said a SKILL.md was broken; the listing (both skins) showed it as any other."""
    (home.skills_dir / "x").mkdir()
    (home.skills_dir / "x" / "SKILL.md").write_text(text, encoding="utf-8")
    with pytest.raises(SkillError) as refused:
        validate_skill_md(text)
    assert home.skills.list()[0].problem == refused.value.message
    write_skill(home, "fine")
    assert home.skills.get("fine").problem is None


def test_a_skill_md_that_is_not_utf8_is_listed_and_marked(home):
    """It was listed with no mark (decoded leniently) while `doctor` called it an error and Hermes leaves it out."""
    (home.skills_dir / "x").mkdir()
    (home.skills_dir / "x" / "SKILL.md").write_bytes(b"---\nname: x\ndescription: bad \xff bytes\n---\nBody\n")
    [info] = home.skills.list()
    assert info.name == "x" and info.problem == (
        "SKILL.md is not UTF-8 text (byte 29 is b'\\xff'): Hermes leaves it out of its skills; save it as UTF-8."
    )


def test_view_is_progressive_and_records_a_view(home):
    write_skill(
        home,
        "tool",
        files={
            "references/api.md": "# API",
            "scripts/run.sh": "echo",
            "assets/img.bin": "x",
            "templates/deep/t.yaml": "a: 1",
        },
    )
    main = home.skills.view("tool")
    assert main["content"].startswith("---\nname: tool")
    assert main["linked_files"] == {
        "references": ["references/api.md"],
        "templates": ["templates/deep/t.yaml"],
        "assets": ["assets/img.bin"],
        "scripts": ["scripts/run.sh"],
    }
    assert "usage_hint" in main
    one = home.skills.view("tool", "references/api.md")
    assert (one["file"], one["content"], one["file_type"]) == ("references/api.md", "# API", ".md")
    info = home.skills.get("tool")
    assert (info.view_count, info.use_count) == (2, 2)


def test_view_refusals(home):
    write_skill(home, "tool")
    write_skill(home, "tool", category="other")
    with pytest.raises(SkillError, match="Ambiguous skill name 'tool'") as exc:
        home.skills.view("tool")
    assert exc.value.details["matches"] == ["other/tool", "tool"]
    with pytest.raises(SkillError, match="Path traversal"):
        home.skills.view("other/tool", "../tool/SKILL.md")
    with pytest.raises(SkillError, match="not found in skill") as missing:
        home.skills.view("other/tool", "references/none.md")
    assert missing.value.details["available_files"] == ["SKILL.md"]
    with pytest.raises(SkillError, match="Skill 'nope' not found"):
        home.skills.view("nope")


def test_view_of_binary_file(home):
    folder = write_skill(home, "tool")
    (folder / "assets").mkdir()
    (folder / "assets" / "blob.bin").write_bytes(b"\xff\xfe\x00")
    result = home.skills.view("tool", "assets/blob.bin")
    assert result["is_binary"] is True
    assert result["content"] == "[Binary file: blob.bin, size: 3 bytes]"


def test_view_without_record_leaves_usage_alone(home):
    write_skill(home, "tool")
    home.skills.view("tool", record=False)
    assert not (home.skills_dir / ".usage.json").exists()


def test_index_text_renders_sorted_categories_and_cut_descriptions(home):
    assert home.skills.index_text() == ""
    write_skill(home, "b-skill", category="ops", description="B" * 80)
    write_skill(home, "a-skill", category="ops", description="'quoted short'")
    write_skill(home, "flat", description="Flat one")
    write_skill(home, "mac-only", extra="platforms: [windows]\n")
    (home.skills_dir / "ops" / "DESCRIPTION.md").write_text("---\ndescription: Operations work\n---\n")
    text = home.skills.index_text()
    block = text[text.index("<available_skills>") : text.index("</available_skills>")]
    assert block.splitlines() == [
        "<available_skills>",
        "  general:",
        "    - flat: Flat one",
        "  ops: Operations work",
        "    - a-skill: quoted short",
        "    - b-skill: " + "B" * 57 + "...",
    ]
    assert text.startswith("## Skills\n")
    assert text.endswith("Only proceed without loading a skill if genuinely none are relevant to the task.")


def test_index_excludes_archived_skills(home):
    write_skill(home, "gone")
    write_skill(home, "kept")
    home.curator.archive("gone")
    assert "gone" not in home.skills.index_text()
    assert "- kept" in home.skills.index_text()


def test_skills_list_tool_shape(home):
    assert home.skills.skills_list() == {
        "success": True,
        "skills": [],
        "categories": [],
        "message": "No skills found in skills/ directory.",
    }
    write_skill(home, "a", category="ops")
    write_skill(home, "b")
    result = home.skills.skills_list()
    assert result["categories"] == ["ops"] and result["count"] == 2
    assert home.skills.skills_list("ops")["skills"] == [
        {"name": "a", "description": "Does a useful thing", "category": "ops"}
    ]


def test_usage_file_is_hermes_format(home):
    write_skill(home, "tool")
    home.skills.record_use("tool")
    data = json.loads((home.skills_dir / ".usage.json").read_text())
    assert set(data["tool"]) >= {
        "created_by",
        "use_count",
        "view_count",
        "patch_count",
        "last_used_at",
        "last_viewed_at",
        "last_patched_at",
        "created_at",
        "state",
        "pinned",
        "archived_at",
    }
    assert (home.skills_dir / ".usage.json.lock").exists()


def test_usage_fields_of_the_wrong_type_read_as_defaults(home):
    write_skill(home, "tool")
    (home.skills_dir / ".usage.json").write_text(
        json.dumps(
            {
                "tool": {
                    "use_count": "lots",
                    "view_count": None,
                    "state": 5,
                    "pinned": "yes",
                    "last_used_at": 12,
                    "extra": "kept",
                }
            }
        )
    )
    info = home.skills.get("tool")
    assert (info.use_count, info.view_count, info.state, info.pinned, info.last_used_at) == (0, 0, "active", True, None)
    assert home.curator.status()["counts"]["active"] == 1
    home.curator.run()
    home.skills.record_use("tool")
    record = json.loads((home.skills_dir / ".usage.json").read_text())["tool"]
    assert (record["use_count"], record["pinned"], record["extra"]) == (1, True, "kept")


def test_read_only_home_lists_and_views_without_writing(tmp_path, clock):
    writable = open_home(tmp_path / "h", clock=clock)
    write_skill(writable, "tool")
    writable.close()
    home = open_home(tmp_path / "h", read_only=True, clock=clock)
    assert home.skills.view("tool")["success"]
    assert not (tmp_path / "h" / "skills" / ".usage.json").exists()


def _bump_many(root: str, count: int) -> None:
    home = open_home(root)
    for _ in range(count):
        home.skills.record_use("tool")
    home.close()


def test_usage_bumps_from_several_processes_are_never_lost(home):
    write_skill(home, "tool")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_bump_many, args=(str(home.root), 25)) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [w.exitcode for w in workers] == [0, 0, 0]
    assert home.skills.get("tool").use_count == 75
    assert not [n for n in os.listdir(home.skills_dir) if n.endswith(".tmp")]


def test_views_and_uses_are_announced(home):
    write_skill(home, "tool")
    seen = []
    home.bus.subscribe(seen.append, SkillChanged)
    home.skills.view("tool")
    home.skills.record_use("tool")
    assert [(e.name, e.action) for e in seen] == [("tool", "view"), ("tool", "use")]


def _age(root, seconds=3600):
    """Make every folder look untouched for an hour, so the remembered layout is trusted as is."""
    past = os.stat(root).st_mtime - seconds
    for folder, _, _ in os.walk(root):
        os.utime(folder, (past, past))


def _truth(scanner, name):
    return [f.rel for f in scanner.active() if name in (f.rel, f.dir_name, f.name)]


def test_lookup_by_name_agrees_with_a_full_walk_through_changes_behind_its_back(home):
    scanner = home.skills.scanner
    names = ("deploy", "ops/deploy", "lint", "alias", "inner", "nested/inner", "gone")
    steps = [
        lambda: write_skill(home, "deploy", category="ops"),
        lambda: write_skill(home, "deploy"),  # now ambiguous
        lambda: write_skill(home, "gone", category="tools"),
        lambda: (home.skills_dir / "tools" / "gone").rename(home.skills_dir / "tools" / "lint"),
        lambda: (home.skills_dir / "tools" / "lint" / "SKILL.md").write_text(skill_md("alias")),  # in place
        lambda: (home.skills_dir / "deploy" / "SKILL.md").unlink(),  # a flat folder stops being a skill
        lambda: write_skill(home, "inner", category="nested"),
        lambda: (home.skills_dir / "nested" / "SKILL.md").write_text(skill_md("nested")),  # a folder becomes a skill
    ]
    for step in steps:
        _age(home.skills_dir)
        [scanner.named(name) for name in names]  # warm the remembered layout
        step()
        for name in names:
            assert [f.rel for f in scanner.named(name)] == _truth(scanner, name), (step, name)


def test_lookup_does_not_walk_the_library_once_its_layout_is_known(home):
    for i in range(30):
        write_skill(home, f"s{i}", category=f"c{i % 3}")
    _age(home.skills_dir)
    scanner = home.skills.scanner
    scanner.active()
    walks = []
    walk = scanner._walk  # every walk of the tree goes through it
    scanner._walk = lambda: walks.append(1) or walk()
    assert home.skills.view("s7")["path"] == "c1/s7" and home.skills.view("c2/s8")["path"] == "c2/s8"
    assert walks == [], "a view of a known skill (which rewrites .usage.json) must not walk the library"
    write_skill(home, "fresh", category="c0")
    assert home.skills.view("fresh")["path"] == "c0/fresh" and walks == [1]


def test_the_skills_at_or_around_a_path_agree_with_a_full_walk(home):
    """``Scanner.under``, which the looks around a skill change use instead of a walk (outside.py)."""
    tree = {
        "flat": True, "c/a": True, "c/b": True, "c/b/nested": True, "c/plain/references": False,
        "deep/x/y": True, "both": True, "both/inner": True, ".hidden/z": True, ".archive/old": True,
        "node_modules/q": True,
    }  # fmt: skip
    for rel, skill in tree.items():
        (home.skills_dir / rel).mkdir(parents=True)
        if skill:
            (home.skills_dir / rel / "SKILL.md").write_text(skill_md(rel.rsplit("/", 1)[-1]), encoding="utf-8")
    (home.skills_dir / "c/a/references").mkdir()
    (home.skills_dir / "c/a/references/api.md").write_text("# API\n", encoding="utf-8")
    scanner = home.skills.scanner
    assert scanner.under("c/a") is None  # no walk yet: only a walk can tell
    listed = [f.rel for f in scanner.active()]
    probes = {p.relative_to(home.skills_dir).as_posix() for p in home.skills_dir.rglob("*")} | {"c/gone", "c/a/x"}
    for rel in sorted(probes):
        expected = [f for f in listed if rel == f or rel.startswith(f"{f}/") or f.startswith(f"{rel}/")]
        assert sorted(f.rel for f in scanner.under(rel)) == expected, rel
    (home.skills_dir / "alias").symlink_to(home.skills_dir / "c")  # one folder, two paths
    scanner.active()
    assert scanner.under("c/a") is None


def test_renaming_a_skill_through_the_library_is_seen_by_the_next_lookup(home):
    write_skill(home, "tool", category="ops")
    write_skill(home, "other", category="ops")
    _age(home.skills_dir)
    assert home.skills.find("tool").rel == "ops/tool"
    assert home.skills.manage({"action": "edit", "name": "other", "content": skill_md("tool")})["success"]
    with pytest.raises(SkillError, match="Ambiguous skill name 'tool'"):
        home.skills.find("tool")


def test_a_write_that_keeps_the_skill_names_leaves_the_layout_to_trust(home, monkeypatch):
    """Every write forgot the remembered layout, so the next lookup walked the whole library (most of
    a patch's time at 1,000 skills); only a write that may change a name does now."""
    write_skill(home, "tool", category="ops", files={"references/api.md": "# API\n"})
    write_skill(home, "other", category="ops")
    home.skills.outside.record()  # the first look at the library is a whole one, then kept
    _age(home.skills_dir)
    home.skills.find("tool")
    walks = []
    real = home.skills.scanner._walk
    monkeypatch.setattr(home.skills.scanner, "_walk", lambda: walks.append(1) or real())
    writes = [
        {"action": "patch", "name": "tool", "old_string": "Do it.", "new_string": "Do it twice."},
        {"action": "edit", "name": "tool", "content": skill_md("tool", body="# Steps\nDo it once.\n")},
        {"action": "write_file", "name": "tool", "file_path": "references/cli.md", "file_content": "# CLI\n"},
        {"action": "patch", "name": "tool", "file_path": "references/api.md", "old_string": "API", "new_string": "Api"},
    ]
    for args in writes:
        assert home.skills.manage(args)["success"], args
        _age(home.skills_dir)  # (the write touched the folder: a minute later, as a person's next lookup)
        assert home.skills.find("tool").rel == "ops/tool"
    assert walks == []
    assert home.skills.manage(
        {"action": "patch", "name": "other", "old_string": "name: other", "new_string": "name: tool"}
    )["success"]
    with pytest.raises(SkillError, match="Ambiguous skill name 'tool'"):
        home.skills.find("tool")
    assert walks


def test_agentskills_fields_are_understood(home):
    extra = (
        "version: 1.2.0\nlicense: MIT\ncompatibility: Needs git 2.40+\nallowed-tools: Bash(git:*)\n"
        'metadata:\n  hermes:\n    tags: [git, review]\n    related_skills: "commit, rebase"\n'
    )
    write_skill(home, "review", extra=extra)
    write_skill(home, "plain", extra="tags: a, b\n")
    view = home.skills.view("review", record=False)
    assert view["compatibility"] == "Needs git 2.40+"
    assert (view["tags"], view["related_skills"]) == (["git", "review"], ["commit", "rebase"])
    assert home.skills.view("plain", record=False)["tags"] == ["a", "b"]
    assert "compatibility" not in home.skills.view("plain", record=False)
    assert [s.name for s in home.skills.list()] == ["plain", "review"]


def test_a_skill_whose_declared_name_cannot_be_asked_for_is_listed_by_its_folder(tmp_path):
    """``name: ../../evil`` in bad3/SKILL.md was listed as ``../../evil``, which `skills show` then
    refused as path traversal: it is listed by its folder, with why, and shown by it."""
    import subprocess

    from tests.hermes_support import workbench_cmd
    from workbench.screens.skills import skill_row

    home = open_home(tmp_path / "home")
    folder = home.skills_dir / "bad3"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(skill_md("../../evil"), encoding="utf-8")
    write_skill(home, "fine")
    [info] = [s for s in home.skills.list() if s.path == "bad3"]
    assert info.needs_folder and "Skill name cannot contain '..'" in info.name_problem
    assert skill_row(info).ref == "bad3" and not home.skills.get("fine").name_problem
    home.close()

    def cli(*args):
        return subprocess.run(
            workbench_cmd(*args, "--home", str(tmp_path / "home")), capture_output=True, text=True, check=False
        )

    listed = cli("skills", "list").stdout.splitlines()
    assert listed[0].startswith("../../evil (bad3)  ") and "⚠ Does a useful thing" in listed[0]
    assert listed[-1] == (
        "⚠ bad3: Its declared name cannot be used (Skill name cannot contain '..' path traversal components): "
        "ask for it by its folder, bad3."
    )
    shown = cli("skills", "show", "bad3")
    assert shown.returncode == 0 and shown.stdout.startswith("---\nname: ../../evil\n")
    assert shown.stdout.rstrip().endswith("ask for it by its folder, bad3.")
