"""YAML bombs, deep nesting and huge files are refused before anything is built."""

from __future__ import annotations

import json
import subprocess

import pytest

from engine.skills.frontmatter import parse_frontmatter, validate_skill_md
from engine.skills.validation import SkillError
from engine.yamltext import YAMLRefused, load_yaml
from tests.hermes_support import workbench_cmd

BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
    for i in range(9)
)
DEEP = "k: " + "[" * 500 + "]" * 500 + "\n"


@pytest.mark.parametrize(("text", "says"), [(BOMB, "anchors"), (DEEP, "nested"), ("k: v\n" * 300_000, "characters")])
def test_load_yaml_refuses_what_no_real_file_needs(text, says):
    with pytest.raises(YAMLRefused, match=says):
        load_yaml(text)


def test_ordinary_yaml_loads_as_before():
    assert load_yaml("memory:\n  memory_char_limit: 3000\nlist: [1, {a: b}]\n") == {
        "memory": {"memory_char_limit": 3000},
        "list": [1, {"a": "b"}],
    }


@pytest.mark.parametrize("text", [BOMB, DEEP])
def test_config_bomb_is_a_clear_error_from_the_cli(tmp_path, text):
    home = tmp_path / "h"
    home.mkdir()
    (home / "config.yaml").write_text(text)
    proc = subprocess.run(
        workbench_cmd("--home", str(home), "--json", "memory", "show"), capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1
    error = json.loads(proc.stdout)["error"]
    assert "config.yaml" in error and "malformed YAML" in error
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("block", [BOMB, DEEP])
def test_skill_frontmatter_bomb_is_refused_on_write_and_never_expanded_on_read(block):
    text = f"---\nname: bomb\ndescription: d\n{block}---\nbody\n"
    with pytest.raises(SkillError, match="parse error"):
        validate_skill_md(text)
    data, body = parse_frontmatter(text)
    assert body == "body\n"
    assert len(json.dumps(data)) < 10_000
