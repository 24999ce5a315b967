"""Show user- and agent-written text literally: never parsed, never obeyed by the terminal.

``[bold]x[/]`` or ``<memory-context>`` in an entry must appear exactly as written, so
every widget builds its text with these helpers (Content objects, not markup strings).
Control characters and bidi controls are made visible by the one policy the CLI uses
too (``engine.textsafety.visible``): ``␛`` for ESC, ``<U+202E>`` for an override.
"""

from __future__ import annotations

import re

from rich.cells import cell_len
from textual.content import Content
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual, VisualType
from textual.widgets import Static

from engine.textsafety import cut_cells, fold_end, tail_start, visible

Part = tuple[str, str] | str
TAB_CELLS = 8  # a tab's stops, as Textual's fold spaces them out
HANG = 2  # cells a wrapped line's continuation sits deeper than the line's own start (``hanging``)


def literal(text: str | None, style: str = "") -> Content:
    """``text`` as Content, styled as a whole but never interpreted."""
    return Content.styled(visible(text), style) if style else Content(visible(text))


def assemble(*parts: Part) -> Content:
    """Join literal pieces, each optionally styled: ``assemble(("+ ", "$mark-added"), entry)``."""
    return Content.assemble(*[(visible(p[0]), p[1]) if isinstance(p, tuple) else visible(p) for p in parts])


LOOK_AHEAD = 64  # of the text after a fold, what ``fold_end`` is shown (it reads a symbol's or grapheme's length)


def wrap(content: Content, width: int) -> list[Content]:
    """``content.wrap(width)``, never breaking a line inside a grapheme or a shown symbol, nor before closing
    CJK punctuation, and a word wider than a line after its last ``-`` or ``/`` where that keeps most of the
    line (``fold_end``): Textual folds a long word by cells, so half-width ﾃﾞ (a letter and its voiced mark,
    one character to a reader) was parted, the mark starting the next line on its own, ``<U+202E>`` read as
    two symbols, a Japanese entry's final ``。`` stood alone on a line, and a path read ``…/SKI`` / ``LL.md``."""
    return [line for paragraph in content.split("\n", allow_blank=True) for line in _wrap_paragraph(paragraph, width)]


def _wrap_paragraph(content: Content, width: int) -> list[Content]:
    """``wrap`` for a line of ``content`` (no line break in it). Textual wraps a window of it at a time, never
    the whole rest again after each fold moved: that was quadratic, 1.5 s a draw for 23 KB of Japanese and
    28 s for 93 KB on one line (a transcript's tool output), on the UI's thread."""
    done: list[Content] = []
    size = max(width, 1) * 4 + 128
    while True:
        window = content if len(content.plain) <= size else content[:size]
        lines = window.wrap(width)
        final = window is content
        if not final and len(lines) < 4:  # (marks that take no cell: a window of them fills under 4 lines)
            size *= 2
            continue
        plain, at = content.plain, 0
        # (a window's last two lines may fold otherwise than the whole line would: wrapped again from there)
        for index, line in enumerate(lines[:-1] if final else lines[:-2]):
            start = plain.find(line.plain, at)
            if start < 0:  # (a line wrap rewrote, such as an expanded tab: as Textual wraps the rest)
                return done + content.wrap(width)
            at = start + len(line.plain)
            kept = fold_end(plain[start:at], plain[at : at + LOOK_AHEAD])
            if 0 < len(kept) < at - start:  # moved: it parted a grapheme or a word, or left 。 to start a line
                done += [*lines[:index], content[start : start + len(kept)]]
                content = content[start + len(kept) :]
                break
        else:
            if final:
                return done + lines
            following = lines[-2].plain
            start = plain.find(following, at) if following else -1
            if start <= 0:  # (not found, or no text taken: as Textual wraps the rest, never the same window again)
                return done + content.wrap(width)
            done += lines[:-2]
            content = content[start:]


class WholeWrap(Visual):
    """``content`` as a Static or a transcript draws it, folded by ``wrap`` at whatever width it gets (a
    dialog's, a resized pane's), not by Textual's own fold, so a line never starts with a voiced mark or
    half of ``<U+202E>``; a widget set to ``text-wrap: nowrap`` has it as it is."""

    def __init__(self, content: Content) -> None:
        self.content = content
        self._last: tuple[int, Content] | None = None  # the last fold, by its width (asked for height, then drawn)

    def __str__(self) -> str:
        return self.content.plain

    def _folded(self, rules: RulesMap, width: int) -> Content:
        if rules.get("text_wrap", "wrap") == "nowrap" or width < 1:
            return self.content
        width = max(width - rules.get("line_pad", 0) * 2, 1)
        if self._last is None or self._last[0] != width:
            self._last = width, Content("\n").join(wrap(self.content, width))
        return self._last[1]

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Strip]:
        return self._folded(options.rules, width).render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return self.content.get_optimal_width(rules, container_width)

    def get_minimal_width(self, rules: RulesMap) -> int:
        return self.content.get_minimal_width(rules)

    def get_height(self, rules: RulesMap, width: int) -> int:
        return self._folded(rules, width).get_height(rules, width)


class WholeStatic(Static):
    """A Static for data text (an entry, a title, a path, an error quoting one): its Content is drawn through
    ``WholeWrap`` whichever way it was set (the constructor, ``update``), and a string is never markup."""

    def __init__(self, content: VisualType = "", **kwargs) -> None:
        super().__init__(content, markup=False, **kwargs)
        self._whole: WholeWrap | None = None

    def render(self) -> Visual:
        visual = self.visual
        if not isinstance(visual, Content):
            return visual
        # One WholeWrap while the text stays, so its fold is kept: a new one on each draw folded the whole
        # text again, 0.27 s a frame for a SKILL.md cut at 400,000 characters, each scroll and refresh.
        if self._whole is None or self._whole.content is not visual:
            self._whole = WholeWrap(visual)
        return self._whole


def wrapped(text: str, width: int, lines: int, style: str = "") -> list[Content]:
    """``text`` wrapped to ``width`` cells in at most ``lines`` lines: where it needs more, the last ends
    in … (after a whole word where one fits), so a cut never passes for the end; one … only, where that
    line ended in its own (a summary cut before: the Timeline's detail read ``service……``)."""
    width = max(width, 1)
    kept = [line.rstrip() for line in wrap(literal(text, style), width)]
    if len(kept) <= lines or lines < 1:
        return kept[: max(lines, 0)]
    last = kept[lines - 1].plain
    if cell_len(last) >= width and " " in last:
        last = last.rsplit(" ", 1)[0]
    return [*kept[: lines - 1], Content.styled(cut_cells(last.removesuffix("…") + "…", width), style)]


def hanging(text: str, width: int, label: re.Pattern[str] | None = None) -> list[Content]:
    """``text`` wrapped to ``width`` cells, line by line, each line's continuation ``HANG`` cells deeper than
    its own start (its leading spaces), so an item of a list that wraps reads as one, as a CLI listing's
    does (``fit_row``'s indent): never back at the left edge under the item's id or bullet. No line is wider
    than ``width`` (from 2 cells, a wide character's), so the widget draws them as they are: a tab is spaced
    out first (the fold spaced it out after the rest of its line was measured: ``key:<tab>value one two``
    lost ``tw``) and an indent deeper than the width keeps 2 cells for its text (it had none, and its
    characters were folded one to a line). Where ``label`` matches a line's start (a report's mark and
    column), its continuation goes under the text after it instead, as the CLI prints that report."""
    lines: list[Content] = []
    room = max(width - 2, 0)  # the deepest an indent goes
    for line in visible(text).expandtabs(TAB_CELLS).split("\n"):
        body = line.lstrip(" ")
        lead = min(len(line) - len(body), room)
        first = wrap(Content(body), max(width - lead, 2))[0].plain.rstrip() if body else ""
        rest = body[len(first) :].lstrip(" ")
        lines.append(Content(" " * lead + first))
        labelled = label.match(line).group(0) if label else ""
        deeper = min(cell_len(labelled) if labelled else lead + HANG, room)
        folded = wrap(Content(rest), max(width - deeper, 2)) if rest else []
        lines += [Content(" " * deeper + part.plain.rstrip()) for part in folded if part.plain.strip()]
    return lines


def tail(text: str | None, cells: int) -> str:
    """The end of ``text`` as shown (``visible``) in ``cells`` terminal cells, … where it was cut: an id's
    distinct part (a Hermes session id is a date, a time and a random suffix). Cells, not characters: a
    control character shows as a symbol of several, a CJK character takes two; and never from inside a
    symbol or grapheme (``tail_start``)."""
    shown = visible(text)
    if cell_len(shown) <= cells:
        return shown
    start, used = len(shown), 1  # the ellipsis
    while start and used + cell_len(shown[start - 1]) <= cells:
        start -= 1
        used += cell_len(shown[start])
    return "…" + shown[tail_start(shown, start) :]


def age(seconds: float) -> str:
    """Compact age: 45s, 12m, 3h, 5d."""
    seconds = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
