"""Skills whose SKILL.md does not parse or is longer than a write allows, and an unreadable
``skills/.usage.json``, for ``workbench doctor``.

Discovery is lenient (a broken skill is still listed, by its folder name) and marks what fails
the strict rule every write passes; this check reads those again to name each, in doctor's terms.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..fileio import UnsafePath
from ..health import CHECKS, Finding
from ..textsafety import inline
from ..values import iso_time
from .frontmatter import validate_skill_md
from .index import index_problem
from .usage import record_copy
from .validation import SkillError, not_utf8

if TYPE_CHECKING:
    from ..home import Home


def check_skills(home: Home) -> list[Finding]:
    scanner = home.skills.scanner
    findings = []
    for found in scanner.active() + scanner.archived():
        if found.problem is None:  # discovery read it just now and it passes: nothing to read again
            continue
        skill_md = found.path / "SKILL.md"
        rel = inline(str(skill_md.relative_to(home.root)))  # (a folder name may hold a line break: one line)
        if found.too_long:  # it parses: only its length fails the rule a write passes
            findings.append(
                Finding(
                    "skills",
                    "warning",
                    f"{rel} is too long: {str(found.problem).split('. ')[0]}.",  # (its advice: the fix)
                    "Split it into a smaller SKILL.md with supporting files in references/ or templates/.",
                )
            )
            continue
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


def check_usage(home: Home) -> list[Finding]:
    """The usage file that cannot be read (everything it records is then unseen, and the next write by
    Hermes replaces it), and any copy of one an earlier workbench kept when it replaced it."""
    usage = home.skills.usage
    findings = []
    problem = usage.problem()
    if problem:
        findings.append(
            Finding(
                "skills",
                "error",
                f"{problem}. It is read as empty (Hermes reads it so too): every skill shows unpinned, unused and "
                "not agent-made, the Curator does not run and workbench skill writes are refused; Hermes's next "
                "use of a skill replaces it with that one record.",
                f"Fix {usage.label} where it says (a trailing comma is the usual cause), or move it aside to start "
                "afresh (its pins and counts are then lost).",
            )
        )
    for copy in usage.backups():
        when = iso_time(copy.name.rsplit(".", 1)[-1])
        findings.append(
            Finding(
                "skills",
                "warning",
                f"{copy.relative_to(home.root)} is a copy of an unreadable {usage.label}, kept when it was "
                f"replaced{f' on {when}' * bool(when)}: the pins, use counts and agent-made marks in it were not "
                "carried over.",
                f"Copy what it holds that {usage.label} lacks back into that file, then delete the copy.",
            )
        )
    return findings


def check_index(home: Home) -> list[Finding]:
    """Active skills whose line in the skills index is blocked at prompt build (``index.blocked_in_index``:
    a threat pattern, such as an escape sequence or a bidi override, in the name or description), as
    memory entries the prompt would block are found: the agent never sees them, and someone put it there."""
    findings = []
    for found in home.skills.scanner.active():
        problem = index_problem(found.name, found.description)
        if problem is None:
            continue
        where = (found.path / "SKILL.md").relative_to(home.root)
        findings.append(
            Finding(
                "skills",
                "warning",
                f"skill '{inline(found.name)}' ({inline(str(where))}): {problem}",
                f"If you did not write it, archive it (`{home.skills.command('archive', found)}`, or a in "
                f"Skills: out of the index, kept to inspect); else edit the frontmatter of {inline(str(where))} "
                "without those characters.",
            )
        )
    return findings


def check_made_anew(home: Home) -> list[Finding]:
    """Active skills made again under the name of an archived copy whose usage record is still that
    copy's (``made_anew``: Hermes's create keeps it, state archived). A record is keyed by name and
    cannot be split, so nothing is repaired: the finding says what the shared record means."""
    skills = home.skills
    if skills.usage.problem():  # (check_usage says the file cannot be read)
        return []
    records = skills.usage.load()
    archived = skills.scanner.archived()
    findings = []
    for found in skills.scanner.active():
        record = records.get(found.name)
        copy = record_copy(found.name, record, archived)
        if record is None or copy is None:
            continue
        where = f"skills/{inline(copy.rel)}"
        uses, pin = int(record.get("use_count") or 0), "pinned" if record.get("pinned") else "unpinned"
        findings.append(
            Finding(
                "skills",
                "info",
                f"skill '{inline(found.name)}' (skills/{inline(found.rel)}) was made anew under the name of the "
                f"archived copy in {where}: Hermes's usage record for the name is still that copy's (state "
                f"archived; {uses} use{'s' * (uses != 1)}, {pin}), so the two share their use counts and pin in "
                "Hermes's records (Skills shows the new skill's own uses, and its pin as the active one's). "
                "Hermes's Curator, whose automatic pass skips a skill its record calls archived, never marks "
                "this one stale or archives it for disuse, however long it goes unused (nor does ours, which "
                "cannot tell its age).",
                "Nothing to repair (the record is keyed by name and cannot be split). Archive it by hand when it "
                f"is no longer wanted (`{skills.command('archive', found)}`, or a in Skills).",
            )
        )
    return findings


def check_strays(home: Home) -> list[Finding]:
    """Folders in the library that hold no skill (``Scanner.strays``): the user sees them under skills/,
    but no list shows them, and Hermes's create of a skill by that name would take their files in."""
    return [
        Finding(
            "skills",
            "warning",
            f"skills/{inline(rel)} holds no SKILL.md: neither Hermes nor the workbench lists it as a skill, and "
            "nothing in it reaches the agent (a skill made under that name would take its files in).",
            f"If it was a skill, put its SKILL.md back (`workbench timeline --subsystem skills --search "
            f"{inline(rel.rsplit('/', 1)[-1])}` may show when it went); else move skills/{inline(rel)} out of "
            "skills/.",
        )
        for rel in home.skills.scanner.strays()
    ]


CHECKS.extend((check_skills, check_usage, check_index, check_made_anew, check_strays))
