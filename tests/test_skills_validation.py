"""Every refusal of a skill write: a clear message, and the skills tree left byte-identical."""

from __future__ import annotations

import os

import pytest

from engine.skills.manage import skill_manage_tool
from engine.skills.validation import MAX_SKILL_CONTENT_CHARS, MAX_SKILL_FILE_BYTES
from tests.test_skills_support import ctx, skill_md, tree_state, write_skill

GOOD = skill_md("good-skill")


def _refused(home, args, match, **context):
    before = tree_state(home.skills_dir)
    journal_rows = len(home.journal.query(include_pending=True))
    result = skill_manage_tool(home, args, ctx(**context))
    assert result["success"] is False, result
    assert match in result["error"], result["error"]
    assert tree_state(home.skills_dir) == before
    assert len(home.journal.query(include_pending=True)) == journal_rows
    return result


@pytest.mark.parametrize(
    "content, match",
    [
        ("", "content is required for 'create'"),
        ("no frontmatter here\n", "must start with YAML frontmatter"),
        ("---\nname: a\ndescription: b\nbody without closing\n", "frontmatter is not closed"),
        ("---\nname: [unclosed\ndescription: b\n---\nbody\n", "YAML frontmatter parse error"),
        ("---\n- a\n- b\n---\nbody\n", "must be a YAML mapping"),
        ("---\ndescription: b\n---\nbody\n", "must include 'name'"),
        ("---\nname: good-skill\n---\nbody\n", "must include 'description'"),
        ("---\nname: good-skill\ndescription: " + "d" * 1025 + "\n---\nbody\n", "Description exceeds 1024"),
        ("---\nname: good-skill\ndescription: fine\n---\n   \n", "must have content after the frontmatter"),
    ],
)
def test_create_refuses_bad_skill_md(home, content, match):
    _refused(home, {"action": "create", "name": "good-skill", "content": content}, match)


@pytest.mark.parametrize(
    "name, match",
    [
        ("", "Skill name is required"),
        ("Bad-Name", "Invalid skill name 'Bad-Name'"),
        ("-leading", "Invalid skill name"),
        ("has space", "Invalid skill name"),
        ("a/b", "Invalid skill name"),
        ("../escape", "Invalid skill name"),
        ("x" * 65, "exceeds 64 characters"),
    ],
)
def test_create_refuses_bad_names(home, name, match):
    _refused(home, {"action": "create", "name": name, "content": GOOD}, match)


@pytest.mark.parametrize(
    "category, match",
    [
        ("a/b", "Invalid category 'a/b'"),
        ("..", "Invalid category"),
        ("c" * 65, "Category exceeds 64"),
        (5, "Category must be a string"),
    ],
)
def test_create_refuses_bad_categories(home, category, match):
    _refused(home, {"action": "create", "name": "good-skill", "content": GOOD, "category": category}, match)


def test_create_refuses_oversized_skill_md(home):
    content = skill_md("good-skill", body="x" * MAX_SKILL_CONTENT_CHARS)
    _refused(home, {"action": "create", "name": "good-skill", "content": content}, "limit: 100,000")


def test_create_refuses_existing_name(home):
    write_skill(home, "good-skill", category="other")
    _refused(home, {"action": "create", "name": "good-skill", "content": GOOD}, "already exists")


def test_create_refuses_a_category_symlink_leaving_skills(home, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, home.skills_dir / "evil")
    _refused(home, {"action": "create", "name": "good-skill", "content": GOOD, "category": "evil"}, "escapes")
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize(
    "file_path, match",
    [
        ("../../etc/passwd", "Path traversal"),
        ("references/../../x.md", "Path traversal"),
        ("/etc/passwd", "absolute paths are not allowed"),
        ("C:/x.md", "absolute paths are not allowed"),
        ("secrets/x.md", "File must be under one of"),
        ("references", "Provide a file path, not just a directory"),
    ],
)
def test_write_file_refuses_bad_paths(home, file_path, match):
    write_skill(home, "good-skill")
    _refused(home, {"action": "write_file", "name": "good-skill", "file_path": file_path, "file_content": "x"}, match)


def test_write_file_refuses_symlink_leaving_the_skill(home, tmp_path):
    folder = write_skill(home, "good-skill")
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, folder / "references")
    _refused(
        home,
        {"action": "write_file", "name": "good-skill", "file_path": "references/x.md", "file_content": "x"},
        "escapes",
    )
    assert list(outside.iterdir()) == []


def test_patch_refuses_symlinked_file_leaving_the_skill(home, tmp_path):
    folder = write_skill(home, "good-skill")
    target = tmp_path / "victim.md"
    target.write_text("old text")
    (folder / "references").mkdir()
    os.symlink(target, folder / "references" / "v.md")
    _refused(
        home,
        {
            "action": "patch",
            "name": "good-skill",
            "file_path": "references/v.md",
            "old_string": "old",
            "new_string": "new",
        },
        "escapes",
    )
    assert target.read_text() == "old text"


def test_writes_refuse_a_skill_folder_symlinked_from_outside(home, tmp_path):
    outside = tmp_path / "ext"
    outside.mkdir()
    (outside / "SKILL.md").write_text(skill_md("ext"))
    os.symlink(outside, home.skills_dir / "ext")
    _refused(home, {"action": "edit", "name": "ext", "content": skill_md("ext", body="new\n")}, "escapes")
    assert (outside / "SKILL.md").read_text() == skill_md("ext")


def test_write_file_refuses_oversized_files(home):
    write_skill(home, "good-skill")
    _refused(
        home,
        {
            "action": "write_file",
            "name": "good-skill",
            "file_path": "assets/big.txt",
            "file_content": "é" * (MAX_SKILL_FILE_BYTES // 2 + 1),
        },
        "limit: 1,048,576 bytes",
    )


@pytest.mark.parametrize(
    "args, match",
    [
        ({"action": "edit", "content": ""}, "content is required for 'edit'"),
        ({"action": "edit", "content": "---\nname: good-skill\ndescription: d\n---\n"}, "must have content after"),
        ({"action": "patch", "new_string": "x"}, "old_string is required"),
        ({"action": "patch", "old_string": "Do it."}, "new_string is required"),
        ({"action": "patch", "old_string": "absent text", "new_string": "x"}, "Could not find old_string"),
        ({"action": "patch", "old_string": "o", "new_string": "x"}, "matches"),
        ({"action": "patch", "old_string": "---\nname", "new_string": "name"}, "Patch would break SKILL.md structure"),
        (
            {"action": "patch", "old_string": "x", "new_string": "y", "file_path": "references/none.md"},
            "File not found",
        ),
        ({"action": "write_file", "file_content": "x"}, "file_path is required for 'write_file'"),
        ({"action": "write_file", "file_path": "references/a.md"}, "file_content is required"),
        ({"action": "remove_file"}, "file_path is required for 'remove_file'"),
        ({"action": "remove_file", "file_path": "references/none.md"}, "not found in skill"),
        ({"action": "remove_file", "file_path": "SKILL.md"}, "use action='delete'"),
        ({"action": "delete", "absorbed_into": "good-skill"}, "cannot equal the skill being deleted"),
        ({"action": "delete", "absorbed_into": "missing-umbrella"}, "does not exist"),
        ({"action": "explode"}, "Unknown action 'explode'"),
    ],
)
def test_action_parameter_refusals(home, args, match):
    write_skill(home, "good-skill")
    _refused(home, {"name": "good-skill", **args}, match)


def test_unknown_skill_is_refused_with_the_available_names(home):
    write_skill(home, "good-skill")
    result = _refused(home, {"action": "edit", "name": "nope", "content": GOOD}, "Skill 'nope' not found")
    assert result["available_skills"] == ["good-skill"]


@pytest.mark.parametrize("name, match", [("/abs/x", "relative path"), ("a/../b", "'..' path traversal")])
def test_skill_names_cannot_escape(home, name, match):
    _refused(home, {"action": "edit", "name": name, "content": GOOD}, match)


def test_pinned_skill_cannot_be_deleted(home):
    write_skill(home, "good-skill")
    home.curator.pin("good-skill")
    _refused(home, {"action": "delete", "name": "good-skill"}, "is pinned")


def test_bundled_and_hub_skills_are_read_only(home):
    write_skill(home, "shipped")
    write_skill(home, "from-hub", category="hub")
    (home.skills_dir / ".bundled_manifest").write_text("shipped:abc123\n")
    (home.skills_dir / ".hub").mkdir()
    (home.skills_dir / ".hub" / "lock.json").write_text(
        '{"version": 1, "installed": {"from-hub": {"install_path": "hub/from-hub"}}}'
    )
    _refused(home, {"action": "patch", "name": "shipped", "old_string": "Do it.", "new_string": "x"}, "is bundled")
    _refused(home, {"action": "delete", "name": "from-hub"}, "is hub-installed")
    with pytest.raises(Exception, match="never archives bundled"):
        home.curator.archive("shipped")
    assert {s.name: s.provenance for s in home.skills.list()} == {"shipped": "bundled", "from-hub": "hub"}
