"""The head of the Skills screen's detail pane: the selected skill's name, state line and description.

The pane is narrow (28 cells beside the files), so each part is fitted to it rather than
left to wrap where it falls: the name keeps one line, cut in cells with … (a name runs to
64 characters), the state line wraps between its parts (never inside ``3 uses``), and the
description takes the lines left, … where it is cut. So nothing is ever cut without a mark,
at any width. All text is literal (``widgets.literal``).
"""

from __future__ import annotations

from rich.cells import cell_len
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from engine.textsafety import flat_line

from .literal import cut_cells, wrapped
from .skill_list import SkillRow

LINES = 4  # at most: the files below keep their rows at 80x24
SEPARATOR = " · "


def fitted(text: str, width: int, style: str = "") -> Content:
    """``text`` as one line of at most ``width`` cells, ending in … where it is cut."""
    return Content.styled(cut_cells(text, max(width, 1)), style)


def state_parts(skill: SkillRow) -> list[tuple[str, str]]:
    uses = f"{skill.use_count} use{'' if skill.use_count == 1 else 's'}"
    parts = [(skill.state, "$text-success" if skill.state == "active" else "$text-warning")]
    if skill.problem:
        parts.append(("⚠ too long" if skill.too_long else "⚠ does not parse", "bold $text-warning"))
    if skill.index_problem:
        parts.append(("⚠ blocked in index", "bold $text-warning"))
    if skill.pinned:
        parts.append(("pinned", "bold"))
    parts += [(skill.provenance or "unknown", "$text-muted"), (uses, "$text-muted")]
    if skill.uses_note:  # on a line of its own too, as long as it is
        parts.append((f"its counts {skill.uses_note}", "$text-warning"))
    if skill.proposed_by:  # last, on a line of its own: the parts before it share one as far as they fit
        parts.append((f"proposed by {skill.proposed_by}", "$text-muted"))
    return parts


def state_lines(skill: SkillRow, width: int) -> list[Content]:
    """The state line in ``width`` cells, broken only between its parts (each part styled with the
    separator before it); a part too long for a line (why its counts may not be its own) is cut before a
    word it would split."""
    lines: list[Content] = []
    line: Content | None = None
    for text, style in state_parts(skill):
        part = cut_cells(flat_line(text), max(width, 1), words=True)
        if line is not None and line.cell_length + cell_len(SEPARATOR + part) <= width:
            line = Content.assemble(line, (SEPARATOR + part, style))
            continue
        if line is not None:
            lines.append(line)
        line = Content.styled(part, style)
    return [*lines, line] if line is not None else lines


def meta_lines(skill: SkillRow, width: int, height: int = LINES) -> list[Content]:
    """What the pane shows for ``skill`` in ``width`` cells and at most ``height`` lines."""
    width = max(width, 1)
    lines = [fitted(flat_line(skill.name, 200), width, "bold"), *state_lines(skill, width)][:height]
    room = height - len(lines)
    # a broken SKILL.md's description is a guess (the file is shown beside): why it is broken instead; a
    # blocked one, why the index will not show it (its characters are in the file beside, as symbols)
    description = flat_line(skill.problem or skill.index_problem or skill.description, 400)
    if room <= 0 or not description:
        return lines
    return [*lines, *wrapped(description, width, room)]


class SkillMeta(Widget):
    """The selected skill's head, fitted to the width it is given (None: empty)."""

    DEFAULT_CSS = "SkillMeta { height: auto; }"

    skill: reactive[SkillRow | None] = reactive(None, layout=True)

    def get_content_height(self, container, viewport, width: int) -> int:
        return len(meta_lines(self.skill, width)) if self.skill is not None else 0

    def render(self) -> Content:
        if self.skill is None:
            return Content("")
        return Content("\n").join(meta_lines(self.skill, self.content_size.width))
