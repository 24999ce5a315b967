"""Health of MEMORY.md and USER.md for ``workbench doctor``, from the store's own guards.

Drift is the store's ``has_drift`` (what makes it refuse a replace or remove, as
Hermes's guard does for most causes), poisoned entries are those the frozen snapshot would show as ``[BLOCKED]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..counts import counted
from ..errors import ConfigError
from ..health import CHECKS, Finding
from ..safety import assess
from . import encoding, repair, targets
from .format import FILE_NAMES, TARGETS, Usage, far_over, far_over_title, has_crlf, has_drift
from .threats import MAX_SCAN_CHARS, hermes_characters, prompt_note

if TYPE_CHECKING:
    from ..home import Home

PREVIEW = 60


def _preview(entry: str) -> str:
    flat = " ".join(entry.split())
    return flat if len(flat) <= PREVIEW else flat[: PREVIEW - 1] + "…"


def check_memory(home: Home) -> list[Finding]:
    findings = []
    for target in TARGETS:
        name, path = FILE_NAMES[target], home.memory.path(target)
        state = home.memory.read(target)
        if state.not_utf8 is not None:
            findings.append(_not_utf8_finding(home, target, state.not_utf8))
            continue
        if state.error:
            findings.append(
                Finding(
                    "memory",
                    "error",
                    f"{name} cannot be read ({state.error}); both programs refuse to write it.",
                    f"Fix the permissions or encoding (UTF-8) of {path}.",
                )
            )
            continue
        limit = None if home.config_refused else _limit(home, target)
        if limit is not None:
            findings += _limit_findings(target, state, limit)
        # as Hermes reads them (line endings translated; a leading BOM has its own finding, not this one)
        for number, entry in enumerate(state.entries, 1):
            blocked = len(entry) > MAX_SCAN_CHARS or assess(entry).dangerous
            if not blocked and not hermes_characters(entry):
                continue  # (suspicious text is in both prompts, or Hermes judges it: nothing certain to report)
            fix = (
                "If you did not write it, remove it: the TUI's Memory screen, or `workbench "
                f"memory remove --target {target} --old TEXT` with a unique part of it."
                if blocked
                else "To have it in Hermes's prompt, rewrite it without those characters (the TUI's Memory screen, "
                f"e; or `workbench memory replace --target {target} --old TEXT NEW`)."
            )
            findings.append(
                Finding("memory", "warning", f"{name} entry {number}: {prompt_note(entry)}: {_preview(entry)}", fix)
            )
    return findings


def _not_utf8_finding(home: Home, target: str, data: bytes) -> Finding:
    """A file that is not valid UTF-8, where, and the repair (``doctor --fix`` makes it: no byte is lost)."""
    found = repair.diagnose_bytes(target, data, _limit(home, target) or targets.target(target).default_limit)
    return Finding(
        "memory",
        "error",
        found.reasons[0].message,
        f"`workbench doctor --fix`, or {encoding.advice(target)} ({found.file_name}.{encoding.COPY_KIND}.<unix time>; "
        "journaled; undo cannot put those bytes back).",
        repair="memory-encoding",
    )


def _limit(home: Home, target: str) -> int | None:
    """The char limit of ``target``, None when config.yaml's value cannot be used (the config check says so)."""
    try:
        return home.memory.limit(target)
    except ConfigError:
        return None


# A drift finding says this many of the file's problems: 5,000 empty entries made a 750 KB report of one
# sentence said 5,000 times. `workbench memory repair` (and the Memory screen's r) lists each.
SHOWN_REASONS = 5


def _reasons(diagnosis: repair.Diagnosis, target: str) -> str:
    """What makes a file not round-trip, its first ``SHOWN_REASONS`` problems said and the rest counted.
    (Being over the store's limit is its own finding: said once.)"""
    said = [r.message for r in diagnosis.reasons if r.kind != "store_over_limit"]
    if len(said) <= SHOWN_REASONS:
        return " ".join(said)
    more = counted(len(said) - SHOWN_REASONS, "more problem")
    return " ".join(said[:SHOWN_REASONS]) + f" And {more}: `workbench memory repair --target {target}` lists each."


def _limit_findings(target: str, state, limit: int) -> list[Finding]:
    """Drift and over-limit: what needs the store's char limit."""
    findings = []
    name = FILE_NAMES[target]
    if has_drift(state.raw, limit):
        diagnosis = repair.diagnose(target, repair.text_of(state), limit)
        findings.append(
            Finding(
                "memory",
                "warning",
                f"{name} holds text that does not round-trip through the memory tool; the workbench "
                "refuses every replace and remove until it is resolved (Hermes refuses them too, except for a "
                "look-alike '§', where it edits the merged entry as one). " + _reasons(diagnosis, target),
                ("Normalise its line endings first (`workbench doctor --fix`); then " if has_crlf(state.raw) else "")
                + f"`workbench memory repair --target {target}` lists the repairs (split, trim or remove an "
                "entry; journaled, undoable), as does the TUI's Memory screen (r). `doctor --fix` makes none "
                "of them: each is a choice about the file's text.",
            )
        )
    else:
        findings += _edge_findings(target, repair.diagnose(target, repair.text_of(state), limit))
    usage = Usage.of(state.entries, limit)
    if far_over(usage.chars, limit):  # pasted or hand-edited: what Hermes does with it, and the repair that fits
        size = len(repair.text_of(state).encode("utf-8", "surrogatepass"))
        findings.append(
            Finding(
                "memory",
                "warning",
                f"{far_over_title(target, size, limit)} ({usage.short} chars, {len(state.entries):,} entries).",
                f"`workbench memory repair --target {target}` offers to keep the entries that fit (--keep-first; "
                "journaled, undoable), as does the TUI's Memory screen (r).",
            )
        )
    elif repair.over_limit(repair.text_of(state), limit):  # the repairs' own rule (the Memory screen's banner, r)
        findings.append(
            Finding(
                "memory",
                "warning",
                f"{name} is over its limit ({usage.short} chars); every add is refused.",
                f"`workbench memory repair --target {target}` lists the repairs (trim or remove its largest "
                "entries; journaled, undoable), as does the TUI's Memory screen (r); or remove or shorten entries "
                f"by hand (`workbench memory remove --target {target} --old TEXT`).",
            )
        )
    return findings


def _edge_findings(target: str, diagnosis: repair.Diagnosis) -> list[Finding]:
    """What a file that round-trips for the workbench still needs: space around entries (Hermes refuses
    every replace and remove) and a stray '§' line at an entry's end (an add after it is misread)."""
    findings = []
    for reason in diagnosis.reasons:
        if reason.kind == "spacing" and diagnosis.offers("spacing"):
            fix = "Trim it (`workbench doctor --fix`, or `workbench memory repair --target {0} --trim-spacing`)"
            findings.append(
                Finding(
                    "memory",
                    "warning",
                    reason.message,
                    fix.format(target) + "; journaled, undoable with `workbench memory undo`.",
                    repair="memory-spacing",
                )
            )
        elif reason.kind == "spacing":
            findings.append(
                Finding(
                    "memory",
                    "warning",
                    reason.message,
                    f"`workbench memory repair --target {target}` lists the other repairs to make first (or r on "
                    "the Memory screen); the trim is offered once they are made.",
                )
            )
        elif reason.kind == "stray":
            findings.append(
                Finding(
                    "memory",
                    "warning",
                    f"{diagnosis.file_name}: {reason.message}",
                    f"`workbench memory repair --target {target}` offers to drop the line (journaled, undoable), "
                    "as does the TUI's Memory screen (r).",
                )
            )
    return findings


CHECKS.append(check_memory)
