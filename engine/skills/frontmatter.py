"""SKILL.md frontmatter: a lenient parser for discovery and a strict validator for writes.

Discovery must still list a hand-edited skill whose YAML is slightly broken (Hermes
falls back to ``key: value`` splitting); writes made through the workbench must be
well-formed, so they go through ``validate_skill_md`` and get Hermes's exact messages.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from ..yamltext import load_yaml
from .validation import MAX_DESCRIPTION_LENGTH, SkillError

_CLOSE = re.compile(r"\n---[ \t]*(\r?\n|$)")
PARSE_ERROR = "YAML frontmatter parse error: "  # Hermes's words, then PyYAML's lines
_MARK = re.compile(r"line (\d+), column (\d+)")


def _split(text: str) -> tuple[str, str] | None:
    """(yaml text, body) when the text opens with a closed ``---`` block, else None."""
    text = text.removeprefix("\ufeff")
    if not text.startswith("---"):
        return None
    match = _CLOSE.search(text, 3)
    if not match:
        return None
    return text[3 : match.start()], text[match.end() :]


def _fallback_pairs(block: str) -> dict[str, Any]:
    pairs: dict[str, Any] = {}
    for line in block.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not line.startswith((" ", "\t")):
            pairs[key.strip()] = value.strip().strip("'\"")
    return pairs


def parse_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """Frontmatter mapping and body; never raises (bad YAML falls back to ``key: value``)."""
    meta, body, _ = read_frontmatter(text)
    return meta, body


def read_frontmatter(text: str) -> tuple[dict[str, Any], str, str | None]:
    """(the lenient frontmatter, the body, why the strict rule every write passes refuses the text, or
    None), from one YAML parse: discovery lists a broken skill and can say that it is broken."""
    if not text.strip():
        return {}, text, "Content cannot be empty."
    parts = _split(text)
    if parts is None:
        stripped = text.removeprefix("\ufeff")
        if not stripped.startswith("---"):
            return {}, stripped, "SKILL.md must start with YAML frontmatter (---). See existing skills for format."
        return {}, stripped, "SKILL.md frontmatter is not closed. Ensure you have a closing '---' line."
    block, body = parts
    try:
        data = load_yaml(block)
    except yaml.YAMLError as exc:
        return _fallback_pairs(block), body, f"{PARSE_ERROR}{exc}"
    if not isinstance(data, dict):
        return {}, body, "Frontmatter must be a YAML mapping (key: value pairs)."
    return data, body, _missing(data, body)


def problem_line(problem: str) -> str:
    """A skill's problem as one line shows it (a pane's border, the details): a YAML error with where
    first, ``Line 5, column 7: …`` (the file's lines: the block parsed starts on the ``---`` line), so a
    narrow pane's cut keeps it. PyYAML gives the place on a line after its first, which a cut at that
    line lost; its quoted lines and carets are left to the file beside."""
    marks = _MARK.findall(problem)
    if not problem.startswith(PARSE_ERROR) or not marks:
        return problem
    said = [line for line in problem.removeprefix(PARSE_ERROR).splitlines() if line and not line[0].isspace()]
    line, column = marks[-1]  # (where it found the error, said last; an earlier mark is what it was reading)
    return f"Line {line}, column {column}: {'; '.join(reversed(said))}"


def _missing(data: dict[str, Any], body: str) -> str | None:
    if not data.get("name"):
        return "Frontmatter must include 'name' field."
    if not data.get("description"):
        return "Frontmatter must include 'description' field."
    if len(str(data["description"])) > MAX_DESCRIPTION_LENGTH:
        return f"Description exceeds {MAX_DESCRIPTION_LENGTH} characters."
    if not body.strip():
        return "SKILL.md must have content after the frontmatter (instructions, procedures, etc.)."
    return None


def validate_skill_md(content: Any) -> dict[str, Any]:
    """Return the frontmatter of a SKILL.md text, or raise SkillError with Hermes's message."""
    if not isinstance(content, str):
        raise SkillError("Content cannot be empty.")
    data, _, problem = read_frontmatter(content)
    if problem:
        raise SkillError(problem)
    return data


def description_of(meta: dict[str, Any], body: str) -> str:
    """The frontmatter description without surrounding quotes, else the first non-heading body line."""
    text = str(meta.get("description") or "").strip().strip("'\"").strip()
    if text:
        return text
    for line in body.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            return line
    return ""


def tags_of(meta: dict[str, Any], key: str) -> list[str]:
    """``metadata.hermes.<key>`` first, then top-level; a list, ``"[a, b]"`` or ``"a, b"``."""
    hermes = (meta.get("metadata") or {}).get("hermes") if isinstance(meta.get("metadata"), dict) else None
    value = hermes.get(key) if isinstance(hermes, dict) and key in hermes else meta.get(key)
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value if str(v).strip()]
    return [part.strip().strip("'\"") for part in str(value).strip().strip("[]").split(",") if part.strip()]
