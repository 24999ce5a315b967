"""The budget advice for a memory draft: what the store would hold with it saved, the entries it nearly
duplicates, and what saving would refuse. One rule for the TUI's editors (as the user types) and the
CLI's ``memory add`` / ``replace`` (once written), so both say the same of the same text. (A memory
batch's, for edit-then-approve, is ``engine.approvals.editing.batch_budget``.)"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..textsafety import flat_line
from .format import size_of
from .ops import already_entry, room_advice, twice_advice
from .similar import near_duplicates, strongest
from .threats import hermes_characters

QUOTED = 60  # characters of an entry the advice names


@dataclass(frozen=True)
class Budget:
    """What the store would hold with the draft saved, and entries it could be merged into."""

    chars: int
    limit: int
    similar: tuple[str, ...] = ()  # a batch's closest entries, to merge into when over the limit
    pending: int = 0  # what proposals waiting for approval would add (the gauge's ghost)
    duplicates: tuple[str, ...] = ()  # the entries the draft most nearly duplicates (the approval preview's rule)
    more_duplicates: int = 0  # how many others it nearly duplicates too
    problem: str = ""  # why saving the draft as it stands would be refused (a batch's count of texts, say)
    blocked: str = ""  # what the prompts make of a text Hermes's scan blocks: saved, it shows there as [BLOCKED]

    def advice(self) -> list[str]:
        """The lines said beside the draft: what saving refuses (a single entry's in the refusal's words), else
        how far over the limit it goes (a batch's), else what it nearly duplicates; and whether Hermes's
        prompts would block it."""
        lines = [self.blocked] if self.blocked else []
        over = self.chars - self.limit
        if self.problem:
            lines.insert(0, self.problem)
        elif over > 0:
            similar = "; ".join(flat_line(e, QUOTED) for e in self.similar) or "none close"
            lines.insert(
                0, f"Over the limit by {over:,}: shorten it, or merge entries first. Similar entries: {similar}"
            )
        elif self.duplicates:
            more = f" (and {self.more_duplicates} more)" if self.more_duplicates else ""
            lines.insert(0, "Nearly the same as: " + "; ".join(flat_line(e, QUOTED) for e in self.duplicates) + more)
        return lines


def hermes_blocked(texts: list[str]) -> str:
    """A warning for each text Hermes's prompts would show as ``[BLOCKED]`` (``engine.memory.threats``):
    the store saves it all the same, and a Hermes agent would never read it."""
    warnings = []
    for number, text in enumerate(texts, 1):
        if found := hermes_characters(text):
            which = f"text {number}" if len(texts) > 1 else "this entry"
            warnings.append(
                f"Hermes's prompts will show {which} as [BLOCKED]: its scan blocks {', '.join(found)} wherever it is."
            )
    return " ".join(warnings)


def draft_budget(
    entries: list[str], limit: int, replacing: str | None = None, pending: int = 0, threshold: float | None = None
) -> Callable[[str], Budget]:
    """A memory store's budget once a draft is added to ``entries`` (or put in place of ``replacing``),
    with ``pending`` characters of staged additions shown beside it; with a ``threshold``, also the
    entries the draft nearly duplicates."""

    def budget(draft: str) -> Budget:
        text = draft.strip()
        after = [text if entry == replacing else entry for entry in entries]
        if replacing is None and text:
            after.append(text)
        others = [e for e in entries if e != replacing]
        named, more = strongest(near_duplicates([text], others, threshold)) if threshold and text else ([], 0)
        same = tuple(d["existing"] for d in named)
        problem = ""  # what saving it would refuse, in the refusal's words (or that it adds nothing)
        if text and text in others:
            problem = (
                twice_advice(entries, text)
                if replacing is not None
                else already_entry(entries, text) + ": saving adds nothing."
            )
        elif text:
            problem = room_advice(entries, text, limit, replacing) or ""
        shown = [e for e in dict.fromkeys(after) if e]
        return Budget(size_of(shown), limit, (), pending, same, more, problem, hermes_blocked([text]))

    return budget


def written_advice(entries: list[str], limit: int, text: str, threshold: float) -> list[str]:
    """The editor's advice about ``text`` once it is written among ``entries`` (the store now): the entries
    it nearly duplicates and whether Hermes's prompts would block it."""
    return draft_budget(entries, limit, text.strip(), threshold=threshold)(text).advice()
