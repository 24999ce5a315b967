"""How the offline review turns a repeated routine into a skill change, in Hermes's order of preference.

For each routine (a request answered twice by the same multi-step tool sequence):

1. a skill loaded or viewed while answering it is patched with the step it left out;
2. otherwise an existing umbrella skill (a listed skill about the same subject: it names
   the head word of the request's topic, "release" for "prepare the billing release")
   gets the procedure as a new section, while its SKILL.md stays within
   ``UMBRELLA_MAX_LINES``;
3. an umbrella already that long gets the procedure as a support file,
   ``references/<routine>.md``, plus a one-line pointer at the end of its SKILL.md;
4. only when no skill covers the subject is a new skill created.

An umbrella that already names the routine (or holds its reference file) needs nothing.
Each step is planned from the tool results so far (``results``: one per call already
made, in order), so the review stays a pure function of its messages.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .phrasing import keywords, overlap, sentence

UMBRELLA_MAX_LINES = 40  # a SKILL.md longer than this after the update takes a support file instead

Call = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Routine:
    """A request answered twice by the same multi-step tool sequence: a skill waiting to be written."""

    name: str
    request: str  # the verb and the first words of the topic: "prepare billing release"
    body: str  # the procedure in markdown, from its "# Title" heading on
    sequence: list[str]
    uses: int
    patch_of: str | None  # the skill viewed while answering it: patch that rather than create one
    missing: list[str]  # tools the sequence used besides the skill lookups

    @property
    def topic(self) -> str:
        return self.request.split(" ", 1)[-1]

    @property
    def skill_md(self) -> str:
        """A new skill's SKILL.md (the description quoted, so YAML reads it as one string; whole, as the
        index shortens what it lists)."""
        description = json.dumps(f"How to {self.request}, as done each time it was asked", ensure_ascii=False)
        return f"---\nname: {self.name}\ndescription: {description}\n---\n{self.body}"


def append_patch(name: str, content: str, addition: str, file_path: str | None = None) -> dict[str, Any] | None:
    """A ``skill_manage`` patch adding ``addition`` after the end of ``content`` (None for an empty file).

    The passage replaced is the shortest tail of lines found only once, so the patch applies.
    """
    lines = content.rstrip().splitlines()
    for start in range(len(lines) - 1, -1, -1):
        tail = "\n".join(lines[start:])
        if tail.strip() and content.count(tail) == 1:
            patch = {"action": "patch", "name": name, "old_string": tail, "new_string": f"{tail}\n{addition}"}
            return {**patch, "file_path": file_path} if file_path else patch
    return None


def next_step(content: str, text: str) -> str:
    """``text`` as the next item after the last line of ``content``: numbered when that line is."""
    lines = [line for line in content.rstrip().splitlines() if line.strip()]
    numbered = re.match(r"^(\s*)(\d+)\.\s", lines[-1]) if lines else None
    return f"{numbered.group(1)}{int(numbered.group(2)) + 1}. {text}" if numbered else f"- {text}"


def umbrella_for(routine: Routine, skills: list[tuple[str, str]]) -> str | None:
    """The listed skill about the routine's subject: one naming the head of its topic (the last word:
    "billing release" is a kind of release), best covering the rest of it (ties: the first by name)."""
    words = keywords(routine.topic)
    if not words:
        return None
    texts = {name: f"{name.replace('-', ' ')} {desc}" for name, desc in skills}
    scored = sorted((-overlap(routine.topic, text), name) for name, text in texts.items() if overlap(words[-1], text))
    return scored[0][1] if scored else None


def _answered(calls: list[Call], results: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """The result of the call planned last, once the review has made it."""
    return results[len(calls) - 1] if len(results) >= len(calls) else None


def plan_change(routine: Routine, calls: list[Call], results: list[dict[str, Any] | None]) -> str | None:
    """Append the calls for ``routine`` to ``calls``; return why the change is worth making (None: none made)."""
    if routine.patch_of:
        return _patch_viewed(routine, calls, results)
    calls.append(("skills_list", {}))
    listed = _answered(calls, results)
    if listed is None:
        return None
    skills = [(str(s.get("name", "")), str(s.get("description", ""))) for s in listed.get("skills") or []]
    if any(name == routine.name for name, _ in skills):
        return None  # a skill of that name exists already: it was just not used this time
    umbrella = umbrella_for(routine, skills)
    if umbrella is not None:
        return _into_umbrella(routine, umbrella, calls, results)
    calls.append(("skill_manage", {"action": "create", "name": routine.name, "content": routine.skill_md}))
    return f"the same {len(routine.sequence)}-step tool sequence answered a request made {routine.uses} times"


def _patch_viewed(routine: Routine, calls: list[Call], results: list[dict[str, Any] | None]) -> str | None:
    name = routine.patch_of or ""
    calls.append(("skill_view", {"name": name}))
    viewed = _answered(calls, results) or {}
    content = str(viewed.get("content", "")) if viewed.get("success") else ""
    missing = [tool for tool in routine.missing if tool not in content]
    if not content or not missing:
        return None
    step = f"Check earlier work with {missing[0]} before starting (it was needed each time)."
    patch = append_patch(name, content, next_step(content, step))
    if patch is None:
        return None
    calls.append(("skill_manage", patch))
    return f"the {name} skill was followed for a repeated request but left out a step it took ({missing[0]})"


def _into_umbrella(
    routine: Routine, umbrella: str, calls: list[Call], results: list[dict[str, Any] | None]
) -> str | None:
    """Steps 2 and 3: a new section in the umbrella's SKILL.md, or a support file and a pointer to it."""
    calls.append(("skill_view", {"name": umbrella}))
    viewed = _answered(calls, results) or {}
    if not viewed.get("success"):
        return None
    content = str(viewed.get("content", ""))
    reference = f"references/{routine.name}.md"
    if routine.name in content or routine.request in content.lower() or reference in (viewed.get("linked_files") or {}):
        return None  # the umbrella covers this routine already
    section = "#" + routine.body.strip()  # its title one level down
    if len(content.rstrip().splitlines()) + 1 + len(section.splitlines()) <= UMBRELLA_MAX_LINES:
        patch = append_patch(umbrella, content, f"\n{section}")
        if patch is None:
            return None
        calls.append(("skill_manage", patch))
        return (
            f"the {umbrella} skill is the umbrella for {routine.topic}, so it gained the procedure for a request "
            f"made {routine.uses} times instead of a new skill"
        )
    pointer = append_patch(umbrella, content, f"- {sentence(routine.request)[:-1]}: see {reference}")
    if pointer is None:
        return None
    write = {"action": "write_file", "name": umbrella, "file_path": reference, "file_content": routine.body}
    calls.append(("skill_manage", write))
    if (_answered(calls, results) or {}).get("success") is True:
        calls.append(("skill_manage", pointer))
    return (
        f"the {umbrella} skill is the umbrella for {routine.topic} but its SKILL.md is already long, so the "
        f"procedure for a request made {routine.uses} times went to {reference}"
    )
