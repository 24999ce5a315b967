"""Skills whose SKILL.md does not parse, for ``workbench doctor``.

Discovery is lenient (a broken skill is still listed, by its folder name); this check
applies the strict rule every write passes, so a hand edit that breaks it is named.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..fileio import UnsafePath
from ..health import CHECKS, Finding
from .frontmatter import validate_skill_md
from .validation import SkillError, not_utf8

if TYPE_CHECKING:
    from ..home import Home


def check_skills(home: Home) -> list[Finding]:
    scanner = home.skills.scanner
    findings = []
    for found in scanner.active() + scanner.archived():
        skill_md = found.path / "SKILL.md"
        rel = skill_md.relative_to(home.root)
        try:
            validate_skill_md(home.links.read_text(skill_md, inside=found.path))
        except UnicodeDecodeError as exc:
            findings.append(
                Finding(
                    "skills",
                    "error",
                    f"{not_utf8(rel, exc)}: Hermes leaves it out of its skills.",
                    "Save it as UTF-8.",
                )
            )
        except (OSError, UnsafePath) as exc:
            findings.append(
                Finding("skills", "error", f"{rel} cannot be read ({exc}).", "Fix its permissions or encoding (UTF-8).")
            )
        except SkillError as exc:
            findings.append(
                Finding(
                    "skills",
                    "warning",
                    f"{rel} does not parse: {exc.message}",
                    "Fix its frontmatter: a '---' block with name and description, closed by "
                    "'---', then the instructions.",
                )
            )
    return findings


CHECKS.append(check_skills)
