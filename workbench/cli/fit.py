"""Listing rows fitted to the terminal's width, so a line never wraps into what reads as the next row.

A row keeps its fixed columns and the ids after its free text (a group, a session: on a line of their
own when the row has no room), and the free text (a title, a summary) gives way, ending in … when cut,
as every cut the CLI makes does, and before a word it would split where that keeps most of it (``cut_cells``
with ``words``, as the TUI cuts prose); ``--json`` and the commands that show one item (``timeline show``,
``sessions show``) keep it whole. Sentences wrap; a command to copy is never cut. Text is measured
as it prints: its control characters and bidi overrides as the symbols ``visible`` makes of them
(a raw one takes no cell, its symbol up to eight).
"""

from __future__ import annotations

import re
import shutil
import sys

from engine.textsafety import cells, cut_cells, fold_end, start_in, tail_start, visible

TIMES = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%m-%d %H:%M")  # a row's time, its seconds then its year given way
MIN_FREE = 12  # cells a row's free text keeps however narrow the terminal: below that, the line is cut at its end


_WORDS = re.compile(r"(\s*)(\S+)")  # each word with the spaces before it


def terminal_width() -> int:
    """``COLUMNS``, else the terminal's width, else 80 (a pipe with no ``COLUMNS``)."""
    return max(20, shutil.get_terminal_size().columns)


def fit_row(head: str, free: str, tail: str, width: int, indent: str, free_first: bool = False) -> list[str]:
    """``head`` + ``free`` + ``tail`` in ``width`` cells, ``free`` cut to fit; when that would leave it
    fewer than ``MIN_FREE`` cells (``free_first``: when it would cut it at all), ``tail`` (ids a command
    takes: never cut) goes on a line of its own after ``indent`` (without it where both would not fit),
    under the row cut at its end. A ``head`` that leaves ``free`` fewer than ``MIN_FREE`` cells by itself
    (the timeline's at 40 columns) has it on the next line, after ``indent``, where it has more: cut at the
    head's end, it showed nothing of it. The head's first word (an id) is never cut."""
    head, free, tail = visible(head), visible(free), visible(tail)
    if free and width - cells(head) < MIN_FREE <= width - cells(indent):
        return [
            _cut_past_id(head.rstrip(), width, words=False),
            *fit_row(indent, free, tail, width, indent, free_first),
        ]
    room = width - cells(head) - cells(tail)
    if not tail or (room >= MIN_FREE and not (free_first and cells(free) > room)):
        return [_cut_past_id(head + cut_cells(free, max(room, MIN_FREE), words=True), width) + tail]
    ids = tail.strip()
    return [_cut_past_id(head + free, width), indent + ids if cells(indent + ids) <= width else ids]


def _cut_past_id(row: str, width: int, words: bool = True) -> str:
    """``row`` cut to ``width`` cells (``cut_cells``), never inside its first word (the id a command takes,
    which a 20-column terminal left as ``20261207_122507_8a6…``): that alone, past the edge, if it is wider."""
    body = row.lstrip()
    lead = row[: len(row) - len(body) + len(body.split(" ", 1)[0])]
    return lead if cells(lead) >= width else cut_cells(row, width, words)


def wrapped(text: str, width: int, indent: str = "", hang: str = "", chop: bool = True) -> list[str]:
    """A sentence on as many lines of ``width`` cells as it takes, each after ``indent`` (the lines after the
    first after ``indent + hang``, so an item that wraps reads as one), broken at spaces (a word wider than
    a line starts one and is folded as the TUI folds it, ``_chopped``; without ``chop``, whole on a line of
    its own: a path or an id a user copies).
    A line break in ``text`` is kept, each line after it wrapped apart after ``indent`` and its own leading
    spaces: a refusal's diff or list, wrapped whole, ran into one paragraph."""
    first, *rest = visible(text).split("\n")
    lines = _wrapped_line(first, width, indent, hang, chop)
    for line in rest:
        body = line.lstrip(" ")
        lines += _wrapped_line(body, width, indent + line[: len(line) - len(body)], hang, chop)
    return lines


def phrased(phrases: list[str], width: int, indent: str = "", hang: str = "", sep: str = " · ") -> list[str]:
    """``phrases`` joined by ``sep`` on as many lines of ``width`` cells as it takes, broken only between
    two (a line ending in ``sep``'s mark, ``·``) so a noun keeps its id or number (``session 2026…``,
    ``message 14``); one wider than a line by itself is ``wrapped`` at its spaces, an id in it whole. The
    lines after the first are after ``indent + hang``."""
    mark = sep.rstrip()
    joiner = sep[len(mark) :]
    lines: list[str] = []
    for n, phrase in enumerate(phrases, 1 - len(phrases)):
        phrase = visible(phrase) + mark * (n < 0)  # (n reaches 0 at the last)
        lead = indent + hang * bool(lines)
        if lines and cells(lines[-1] + joiner + phrase) <= width:
            lines[-1] += joiner + phrase
        elif cells(lead + phrase) <= width:  # (as it is: wrapped, its spaces would be one each)
            lines.append(lead + phrase)
        else:
            lines += wrapped(phrase, width, lead, hang="" if lines else hang, chop=False)
    return lines


def labelled(label: str, text: str, width: int, chop: bool = False) -> list[str]:
    """``text`` after ``label`` (its column's padding kept), ``wrapped`` in ``width`` cells under its own
    start, a word wider than a line (a path, an id) whole unless ``chop``: a report's line, its label a
    column to the left; an entry under its number."""
    lead = " " * cells(visible(label))
    lines = wrapped(text, width, lead, chop=chop)
    return [visible(label) + lines[0][len(lead) :], *lines[1:]]


def diff_line(kind: str, text: str, width: int) -> list[str]:
    """One line of a diff in ``width`` cells: its marker (``+``, ``-`` or a space) in its own column and the
    line's indent kept (up to half the width, so a narrow terminal still has room for its text), the rest
    ``labelled`` under the text's start, a word wider than a line folded: printed whole, the terminal broke
    it under the next line's marker."""
    body = text.lstrip(" ")
    indent = text[: len(text) - len(body)][: max(0, width // 2 - 2)]
    return labelled(f"{kind} {indent}", body, width, chop=True)


def said(sentence: str, indent: str = "") -> str:
    """An error, warning or note as printed: ``wrapped`` to the terminal's width after ``indent``, its
    continuation two cells in from its mark, a word wider than a line (the path or id it names) whole."""
    return "\n".join(wrapped(sentence, terminal_width(), indent, hang="  ", chop=False))


def tell(sentence: str) -> None:
    """A note, warning or error for the person at the terminal: on stderr (``--json`` keeps stdout to its one
    document), as ``said`` fits it (a line wider than the terminal was left to it to break inside words)."""
    sys.stderr.write(said(sentence) + "\n")


def _wrapped_line(text: str, width: int, indent: str, hang: str, chop: bool) -> list[str]:
    first, room = max(1, width - cells(indent)), max(1, width - cells(indent + hang))
    lines: list[str] = []
    used = 0  # the last line's cells, counted as it grows (measured anew for each word, doctor took 36 s to
    # print a finding of 465,000 words: a MEMORY.md of 5,000 empty entries)
    for gap, word in _WORDS.findall(text):  # (spaces kept as written inside a line: an entry's, a YAML error's)
        pieces = _chopped(word, room if lines else first) if chop else [word]
        whole = len(pieces) == 1  # (a word in pieces starts a line, as in the TUI: its first may end at a joint)
        for piece in pieces:
            size = cells(piece)
            if whole and lines and used + cells(gap) + size <= (first if len(lines) == 1 else room):
                lines[-1] += gap + piece
                used += cells(gap) + size
            else:
                lines.append(piece)
                used = size
            gap = ""
    return [indent + hang * bool(i) + line for i, line in enumerate(lines)] or [indent.rstrip()]


def _chopped(word: str, width: int) -> list[str]:
    """``word`` in pieces of at most ``width`` cells (a symbol or grapheme wider than that, alone), parted as the
    TUI folds (``fold_end``): after a ``-`` or ``/`` where that keeps most of the line (``billing/`` /
    ``SKILL.md``, not ``billing/SKI`` / ``LL.md``); Rich's chop parted ﾃﾞ before its voiced mark and left
    ``。`` to start a line."""
    pieces: list[str] = []
    while word:
        piece = start_in(word, width) or word[: tail_start(word, 1)]
        pieces.append(fold_end(piece, word[len(piece) :]))
        word = word[len(pieces[-1]) :]
    return pieces


def folded(line: str, width: int, hang: str = "  ", whole: str = "") -> list[str]:
    """``line`` as it is where it fits ``width``, else ``wrapped`` at spaces after its own indent, its
    continuation ``hang`` deeper: a sentence of a report that the terminal would break inside a word.
    ``whole``, where ``line`` ends with it (a path or an id a user copies), is never cut or split: after
    the rest where it fits, else on a line of its own ``hang`` deeper, past the terminal's edge if it must."""
    if cells(visible(line)) <= width:
        return [line]
    body = line.lstrip(" ")
    indent = line[: len(line) - len(body)]
    if not whole or not body.endswith(" " + whole):
        return wrapped(body, width, indent, hang)
    lines, whole = wrapped(body.removesuffix(whole).rstrip(), width, indent, hang), visible(whole)
    last = f"{lines[-1]} {whole}"
    return [*lines[:-1], last] if cells(last) <= width else [*lines, indent + hang + whole]


def commands(parts: list[str], width: int) -> list[str]:
    """Commands to copy on one line three spaces apart where it fits ``width``, else one a line: never cut."""
    parts = [part for part in parts if part]
    joined = "   ".join(parts)
    return [joined] if cells(joined) <= width else parts
