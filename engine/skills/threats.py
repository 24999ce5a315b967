"""The threat scan applied to skill writes: what a SKILL.md puts in the skills index, and
what any write puts in a skill's files.

The index shows a skill's name and description in every system prompt, and a loaded
skill's body (SKILL.md or a support file served by ``skill_view``) is read by the model as
instructions, so both get memory's graded decision: a write that would put dangerous
text there is refused on every path (the agent's tool, an approval, the CLI), and a
suspicious one is staged for approval when the agent or a review makes it. Only what
the write adds is judged: a patch answers for its own lines, not for text a person put
in the file before, except that a line it adds next to a kept one must not turn the
two into something dangerous (text split across a kept line).
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

from ..safety import MAX_SCAN_CHARS, SUSPICIOUS, Finding, Verdict, assess
from .frontmatter import description_of, parse_frontmatter
from .validation import SkillError

INDEX = "name or description"


@dataclass(frozen=True)
class SkillFlags:
    """A suspicious verdict on a skill write, and which part of it looks suspicious."""

    verdict: Verdict
    where: str  # what looks suspicious: "the skill's name or description", "the text written to FILE" or both

    @property
    def reasons(self) -> list[str]:
        return self.verdict.reasons


def prompt_text(plan) -> str | None:
    """The name, description and category the write would put in the index, or None."""
    if plan.label != "SKILL.md" or plan.after is None:
        return None
    meta, body = parse_frontmatter(plan.after)
    parts = [str(meta.get("name") or plan.name), description_of(meta, body), str(plan.result.get("category") or "")]
    return "\n".join(p for p in parts if p)


@dataclass(frozen=True)
class Change:
    """What a write adds to its file, and the same with the kept line either side of each run."""

    added: str
    in_context: str
    neighbours: str


def change_of(plan) -> Change:
    """Every line of a new file; for a changed one, its new lines (and their neighbours)."""
    if plan.after is None:
        return Change("", "", "")
    if plan.before is None:
        return Change(plan.after, plan.after, "")
    old, new = plan.before.splitlines(), plan.after.splitlines()
    runs = [
        (j1, j2)
        for tag, _, _, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
        if tag in ("insert", "replace")
    ]
    return Change(
        "\n".join("\n".join(new[j1:j2]) for j1, j2 in runs),
        "\n".join("\n".join(new[max(j1 - 1, 0) : j2 + 1]) for j1, j2 in runs),
        "\n".join(line for j1, j2 in runs for line in new[max(j1 - 1, 0) : j1] + new[j2 : j2 + 1]),
    )


def _body_verdict(change: Change) -> Verdict:
    """The scan of the added lines, or of them with their neighbours when only that reads as dangerous
    (text split across a kept line); more than the scan reads is suspicious, so a person looks at the rest."""
    text = change.added
    verdict = assess(text)
    if verdict.dangerous:
        return verdict
    if change.neighbours:
        joined = assess(change.in_context)
        if joined.dangerous and not assess(change.neighbours).dangerous:
            return joined
    if len(text) <= MAX_SCAN_CHARS:
        return verdict
    too_long = Finding(
        "too_large_to_scan",
        SUSPICIOUS,
        f"the write adds {len(text):,} characters and only the first {MAX_SCAN_CHARS:,} are scanned",
    )
    return Verdict(SUSPICIOUS, (*verdict.findings, too_long))


# (memory's advice, "a plain fact about the user", fits no skill)
INDEX_ADVICE = (
    "Say in plain words what the skill is for, with no instructions to the assistant and no hidden or control "
    "characters; or leave it out."
)
BODY_ADVICE = (
    "Write the steps of the task it is for, with no instructions that override the assistant's rules, no "
    "hidden characters and no commands that send data out or persist; or leave it out."
)


def flagged(flags: SkillFlags) -> str:
    """What looks suspicious in a write that goes ahead (a revert's preview says it before, its outcome after)."""
    return f"{flags.where} is flagged as suspicious: {'; '.join(flags.reasons)}"


def warning_message(flags: SkillFlags) -> str:
    """The word a suspicious write saved for the user says, as memory's ``warning_message`` does."""
    return f"Saved, but {flagged(flags)}. A loaded skill is read by the model as instructions; check that you meant it."


def check_plan(plan) -> SkillFlags | None:
    """Refuse a dangerous write; return the flags of a suspicious one (None when clean)."""
    index_text = prompt_text(plan)
    judged = [(INDEX, assess(index_text))] if index_text else []
    change = change_of(plan)
    if change.added:
        judged.append((plan.label, _body_verdict(change)))
    for where, verdict in judged:
        if verdict.dangerous:
            shown = (
                "the skill's name or description matches threat pattern '{id}'. They are shown in every system "
                "prompt's skills index."
                if where == INDEX
                else "the text written to {where} matches threat pattern '{id}'. A loaded skill is read by the "
                "model as instructions."
            )
            raise SkillError(
                f"Blocked: {shown.format(id=verdict.worst.id, where=where)} Why: {'; '.join(verdict.reasons)}. "
                f"{INDEX_ADVICE if where == INDEX else BODY_ADVICE}",
                flags=verdict.reasons,
            )
    flagged = [(where, verdict) for where, verdict in judged if verdict.suspicious]
    if not flagged:
        return None
    findings = tuple(f for _, verdict in flagged for f in verdict.findings)
    where = " and ".join(f"the skill's {w}" if w == INDEX else f"the text written to {w}" for w, _ in flagged)
    return SkillFlags(Verdict(SUSPICIOUS, findings), where)
