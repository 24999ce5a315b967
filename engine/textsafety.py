"""One policy for text from data that reaches a terminal, used by the CLI and the TUI.

Memory entries, titles, skill files and tool output are data: an ESC sequence hidden in
a hand-edited MEMORY.md (``\\x1b]0;PWNED\\x07``, ``\\x1b[2J``, OSC 52 clipboard writes)
must never reach the terminal, and bidirectional controls must not make text display
in another order than it is stored. So C0 controls show as their Unicode control
pictures (``␛``), DEL as ``␡``, C1 controls as ``\\x9b``, and bidi controls (embeddings,
overrides, isolates and the LRM/RLM/ALM marks) as ``<U+202E>``, as are U+FEFF (a
byte-order mark inside text, which Hermes blocks as invisible) and the characters that
draw as nothing at all: the zero-width space, word joiner, invisible operators, soft
hyphen, the line and paragraph separators (U+2028, U+2029: an editor would
split a line there), the Hangul fillers and the tag block (U+E0000-U+E007F, which can spell a hidden
instruction; a subdivision flag such as 🏴 + tags stays a flag), so a reader sees what a
model reads; as are lone surrogates (a file name that was not UTF-8). Joiners, variation
selectors and the braille blank show as symbols only where nothing is spelt with them
(``engine.invisible``, the rule the threat scan refuses them by): 👩🏽‍💻 and 葛󠄀 stay as they are,
a ZWJ inside a word does not. Newlines and tabs are kept.
``--json`` output keeps the exact text, with these characters written as JSON escapes
(``json_text``: U+009B as ``\\u009b``), which a parser reads back as they were and a
terminal never acts on.
"""

from __future__ import annotations

import itertools
import json
import re
import shlex
import unicodedata
from collections.abc import Callable

import regex

from .invisible import BLACK_FLAG, CONTEXTUAL, FLAG, flag_at, needed_at

# A subdivision flag (🏴 + tag letters + cancel tag) is the one thing tag characters may spell.
_CONTROLS = re.compile(  # (a flag joined to what comes before it by a ZWJ is no flag: its tags show)
    "(?<!\u200d)" + FLAG + "|[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e"
    "\u200b\u200e\u200f\u2028-\u202e\u2060-\u206f\u3164\ufeff\uffa0\ufff0-\ufff8\ud800-\udfff\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff" + CONTEXTUAL + "]"
)


def _kept(match: re.Match) -> bool:
    """True for what shows as itself: a flag (one grapheme, as the scan judges it), or a joiner or
    selector its neighbours are spelt with."""
    if len(match.group()) > 1:
        return flag_at(match.string, match.start())
    return needed_at(match.string, match.start())


def _symbol(ch: str) -> str:
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)
    if code > 0xFF or code == 0xAD:
        return f"<U+{code:04X}>"
    return "\u2421" if code == 0x7F else f"\\x{code:02x}"


def _picture(match: re.Match) -> str:
    found = match.group()
    if _kept(match):
        return found
    return "".join(_symbol(ch) if ch != BLACK_FLAG else ch for ch in found)


def visible(text: str | None) -> str:
    """``text`` with every control character (but newline and tab) shown, not executed."""
    return _CONTROLS.sub(_picture, text or "")


def inline(text: str | None) -> str:
    """``visible`` on one line: a line break shows as ⏎, a tab as ⇥. For a name or path from data,
    where a break would start a line that reads as another row, a tab would break its columns,
    and a space would read as another name."""
    return visible(text).replace("\n", "⏎").replace("\t", "⇥")


def quoted(value: object) -> str:
    """``value`` as a message quotes it, the one way every message does: a text in single quotes,
    ``inline`` (``'␛[31mred<U+202E>'``), never ``repr``'s escapes, doubled backslashes or swapped quotes
    (``"it's"``); a number, flag or None as Python writes it (``5``, ``True``), so a message still tells
    a typed ``'5'`` from a read ``5``."""
    return f"'{inline(value)}'" if isinstance(value, str) else inline(repr(value))


def quote_ending(text: str) -> str:
    """``text`` in curly quotes at a sentence's end: a full stop after the closing quote, unless ``text``
    ends a sentence itself (``.``, ``!`` or ``?``), which a second stop would only repeat (``“to stage.”.``)."""
    return f"“{text}”" + ("" if text.rstrip().endswith((".", "!", "?")) else ".")


# A terminal escape sequence whole: CSI (ESC [ … final), OSC and the other strings (ESC ] … BEL or
# ST), or ESC and one character; dropping only its ESC would leave "[34m" in a pasted title.
_ESCAPE_SEQUENCE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[ -/]*[0-~]")


def without_escape_sequences(text: str) -> str:
    """``text`` without its terminal escape sequences, each taken whole (a title keeps its words)."""
    return _ESCAPE_SEQUENCE.sub("", text)


def without_controls(text: str) -> str:
    """``text`` without the characters ``visible`` would show as symbols, and without any terminal
    escape sequence whole: for a box whose value keeps none of them (a title), where a symbol
    would be saved as text."""
    return _CONTROLS.sub(
        lambda match: match.group() if _kept(match) else "".join(ch for ch in match.group() if ch == BLACK_FLAG),
        without_escape_sequences(text),
    )


Symbol = tuple[int, int, str]  # where a symbol sits in the shown text, and the character it stands for


def shown_with_symbols(text: str) -> tuple[str, list[Symbol]]:
    """``visible(text)``, and where in it each symbol stands for a character of ``text``: an editor
    keeps these through its edits, to save each symbol left whole as its character."""
    pieces: list[str] = []
    symbols: list[Symbol] = []
    size = done = 0
    for found in _CONTROLS.finditer(text):
        pieces.append(text[done : found.start()])
        size += found.start() - done
        done = found.end()
        if _kept(found):
            pieces.append(found.group())
            size += len(found.group())
            continue
        for ch in found.group():  # one character, or the tags of a flag no screen draws as one
            picture = ch if ch == BLACK_FLAG else _symbol(ch)
            if picture != ch:
                symbols.append((size, size + len(picture), ch))
            pieces.append(picture)
            size += len(picture)
    pieces.append(text[done:])
    return "".join(pieces), symbols


def normalise_line_endings(text: str) -> str:
    """``text`` with every CRLF and lone CR turned into LF, as Hermes reads a file and as a terminal's
    paste means it (it sends a pasted line break as CR)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


_LAYOUT = re.compile(r"[ \t\n]+")


def one_line(text: str, width: int | None = None, words: bool = False) -> str:
    """``text`` on one line, cut to ``width`` (when given; before a word with ``words``, as ``cut`` does):
    runs of spaces, tabs and newlines fold into one space. Nothing else does (``str.split`` would fold
    U+2028, U+001C-U+001F and NEL too), so ``visible`` still shows them and a change to one of them never
    summarises as no change. For a sentence we wrote (an error's message); data (an entry, a title, a
    name) goes through ``flat_line``, whose ⏎ keeps its line breaks in view."""
    flat = _LAYOUT.sub(" ", text).strip(" ")
    return flat if width is None else cut(flat, width, words)


def flat_line(text: str | None, width: int | None = None) -> str:
    """Data text on one line, as every summary and preview in both skins shows it (a Timeline row, a proposal,
    an entry in a notice or the budget advice): a line break shows as ``⏎`` and a tab as ``⇥`` (``inline``: a
    replace reads ``old: 乌龙茶⏎new: …``, never as if its two lines were one text), runs of spaces fold
    (``one_line``), cut to ``width`` when given, before a word it would split (``cut`` with ``words``)."""
    return one_line(inline(text), width, words=True)


SHOWN_CHARS = 6000  # a longer text is cut where a screen shows it (the file or archive keeps it whole)


def clipped(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text``, or its first ``limit`` characters and how many more there are: laying out megabytes (one
    memory entry pasted with no delimiter, a tool's output) would hold a screen for minutes. Never cut
    inside a symbol or a grapheme (``whole``); a number may be (the note under it says the text goes on)."""
    if len(text) <= limit:
        return text
    kept, _ = whole(text[:limit], text[limit:])
    return kept + f"\n… ({len(text) - len(kept):,} more characters)"


_SPLIT_BEFORE = re.compile(r"\d[.,:]?$")  # a number's end (its separator too, as in 1,2|34) ...
_SPLIT_AFTER = re.compile(r"[.,:]?\d")  # ... that the text goes on from: the cut splits that number
_NUMBER_END = re.compile(r"[\d.,:]*$")
_SYMBOL = re.compile(r"<U\+[0-9A-F]{4,6}>|\\x[0-9a-f]{2}")  # what ``_symbol`` shows in several characters
_GRAPHEME = regex.compile(r"\X")
_UNIT = regex.compile(_SYMBOL.pattern + r"|\X")  # what a cut never parts: a shown symbol, or a grapheme
_REACH = 32  # of the text after a cut, what a symbol or grapheme it splits is looked for in
# Hermes's CJK ranges, plus the CJK compatibility ideographs and half-width katakana (ﾗｰﾒﾝ,
# which a word tokenizer runs together with the kanji and kana around it).
CJK_CLASS = (
    "\u4e00-\u9fff\u3400-\u4dbf\U00020000-\U0002a6df\u3000-\u303f\u3040-\u309f\u30a0-\u30ff\uac00-\ud7af\uf900-\ufaff"
    "\uff61-\uff9f"
)
_CJK = re.compile(f"[{CJK_CLASS}]")


def cut_end(kept: str, rest: str) -> str:
    """``kept``, a text's start that a cut parts from ``rest``, without the part of a number the cut splits
    (the … follows): `Loop note 18…` read as note 18 where the text said 186, and `1…` as 1 where it said
    1,234. A cut elsewhere stays where it is (a cut word ends in …, and reads as cut), but never inside a
    symbol or a grapheme (``whole``)."""
    kept, rest = whole(kept, rest)
    if _SPLIT_BEFORE.search(kept) and _SPLIT_AFTER.match(rest):
        return _NUMBER_END.sub("", kept).rstrip()
    return kept


def whole(kept: str, rest: str) -> tuple[str, str]:
    """The cut moved back to the start of the symbol or grapheme it splits, if any: half of ``<U+202E>``
    read as another character (``<U+202…``), and half of 👩🏽‍💻 left its joiner to join the … to it."""
    split = _split_at(kept + rest[:_REACH], len(kept))
    if not split:
        return kept, rest
    start = min(start for start, _ in split)
    return kept[:start], kept[start:] + rest


# CJK punctuation that closes what comes before it: a line that starts with one reads as broken (``。`` alone
# under a sentence), so a fold takes the character before it along (the rule of kinsoku shori); and what
# opens what follows it, which never ends a line (``「`` at a line's end, its quote on the next).
_NO_LINE_START = "、。，．！？：；）」』】〕〉》〙〗〟｝］｡､｣"
_NO_LINE_END = "（「『【〔〈《〘〖〝｛［｢"


def fold_end(line: str, rest: str) -> str:
    """Where a line folded before ``rest`` ends: as ``whole`` moves it, after a word's last joint when the fold
    splits that word (``_at_joint``), and then back by a character (a grapheme) at a time while ``rest`` would
    start with closing CJK punctuation (``」。`` takes two) or the line would end with opening punctuation
    (``。「``: the ``「`` goes down), unless that would leave the line empty. A line that nothing or a space
    follows stays: a bracket there opens nothing on the next line either (``note（`` / `` and``), and the CLI's
    chop of a word ending in one put the bracket on a line of its own."""
    if not rest or rest[0].isspace():
        return line
    first, rest = whole(line, rest)
    kept = _at_joint(first, rest)
    rest = first[len(kept) :] + rest
    while kept and not kept[-1].isspace() and ((rest and rest[0] in _NO_LINE_START) or kept[-1] in _NO_LINE_END):
        kept, rest = whole(kept[:-1], kept[-1:] + rest)
    return kept or first


# What a word wider than a line is folded after: the joints of a path (``billing/``), a skill's name or an id
# (``rerender-invoice-``, ``20261207_``), and the symbols of a line break or a tab in a one-line text (``⏎``);
# a run of ``:`` after its last (``test_invoices.py::`` / ``test_rounding``, ``key:`` / ``value``), never
# inside it. Not ``.``: a line ending in one reads as a sentence's end, and ``SKILL.`` / ``md`` parts a file
# from its type.
_JOINTS = frozenset("-/_⏎⇥")
_RUN_JOINT = ":"


def _at_joint(line: str, rest: str) -> str:
    """``line``, folded inside a word before ``rest``, ended just after the word's last joint (``_JOINTS``):
    ``billing/rerender-invoice/`` / ``SKILL.md`` where the edge made ``…/SKI`` / ``LL.md``, and
    ``rerender-invoice-`` / ``pdf,`` for ``…-pd`` / ``f,``. A fold inside a run of ``:`` goes before it
    (``test_invoices.py`` / ``::test_rounding``, not ``py:`` / ``:test``). Only where the line keeps more
    than half of its cells, so a joint near the word's start (``a-``, ``tests/``) never leaves a line nearly
    empty (nor, at two cells, moves the fold at all); a fold at a space, or beside CJK (which parts between
    any two characters), stays; a joint is a whole grapheme, never one a mark is drawn on."""
    if not (line and rest) or line[-1].isspace() or rest[0].isspace() or _CJK.match(line[-1]) or _CJK.match(rest[0]):
        return line
    start = len(line) - len(line.split()[-1])  # (the word the fold is in)
    after = line + rest[:1]  # (what follows each unit: a ``:`` is a joint at its run's end)
    ends = [
        start + unit.end()
        for unit in _UNIT.finditer(line[start:])
        if unit.group() in _JOINTS or (unit.group() == _RUN_JOINT and after[start + unit.end()] != _RUN_JOINT)
    ]
    if line[-1] == rest[0] == _RUN_JOINT:  # (a run the fold splits: before it)
        ends.append(len(line.rstrip(_RUN_JOINT)))
    if ends and cells(line[: ends[-1]]) * 2 > cells(line):
        return line[: ends[-1]]
    return line


def tail_start(text: str, at: int) -> int:
    """``at``, where a tail of ``text`` (its end, after a …) begins, moved on past the symbol or grapheme
    it splits, if any: a tail never starts with half of one (``202E>``, a skin tone without its hand)."""
    return max((end for _, end in _split_at(text, at)), default=at)


def _split_at(text: str, at: int) -> list[tuple[int, int]]:
    """Where each symbol or grapheme of ``text`` that a cut at ``at`` splits starts and ends."""
    near = text[: at + _REACH]
    return [
        found.span()
        for pattern in (_SYMBOL, _GRAPHEME)
        for found in pattern.finditer(near)
        if found.start() < at < found.end()
    ]


def cut(text: str, width: int, words: bool = False) -> str:
    """``text`` in at most ``width`` characters, ending in … when cut, never inside a number (``cut_end``),
    nor a word with ``words`` (``word_end``: for a sentence read as prose)."""
    if len(text) <= width:
        return text
    return (word_end if words else cut_end)(text[: width - 1], text[width - 1 :]) + "…"


def word_end(kept: str, rest: str) -> str:
    """``cut_end``, but a cut inside a word, or inside a short aside in parentheses, moves back to before it
    when that keeps two thirds of ``kept``: a summary read ``(146 c…`` where it said ``(146 chars)``. A
    word longer than that (a path) is cut where it is, ending in … as before. CJK text, written without
    spaces, may part between any two characters: a summary read ``USER +…`` where it added ``ユーザーは…``."""
    kept, rest = whole(kept, rest)
    start = len(kept)
    parted = kept and rest and not (_CJK.match(kept[-1]) or _CJK.match(rest[0]))
    if parted and not kept[-1].isspace() and not rest[0].isspace():
        start = kept.rfind(" ") + 1
    aside = kept.rfind("(")
    if aside > kept.rfind(")") and ")" in rest[:_REACH]:
        start = min(start, aside)
    if len(kept) * 2 // 3 <= start < len(kept):
        return kept[:start].rstrip()
    return cut_end(kept, rest).rstrip()


def word_start(text: str, at: int, end: int) -> int:
    """``tail_start``, but a tail (``text[at:end]``, after a …) that would start inside a word, or with a
    space, starts at the next word when that keeps two thirds of it, as ``word_end`` cuts a head: a tail
    read ``…ss the on-call lead`` where the text said ``unless``. CJK may part between any two characters,
    and a longer word is split where it is."""
    at = tail_start(text, at)
    if not 0 < at < end or text[at - 1].isspace() or _CJK.match(text[at - 1]) or _CJK.match(text[at]):
        return at
    space = text.find(" ", at, end)
    moved = space + 1 if space >= 0 else at
    return moved if (end - moved) * 3 >= (end - at) * 2 else at


_NO_CELL = {"Mn", "Me", "Mc", "Cc", "Cf", "Zl", "Zp"}  # marks drawn on the character before, and controls
# An emoji that draws as text unless VS16 follows it (1️⃣, ↔️, ❤️): VS16 widens these, and only these, as Rich does.
_TEXT_EMOJI = regex.compile(r"(?V1)[\p{Emoji}--\p{Emoji_Presentation}]")


def char_cells(ch: str) -> int:
    """Terminal cells ``ch`` takes: two for a wide (CJK, emoji) character, none for a mark, a control, a
    Hangul vowel or final (drawn into its syllable) or a skin tone (drawn into its hand), else one; the rule
    Rich and Textual draw by, which the engine may not import."""
    code = ord(ch)
    if unicodedata.category(ch) in _NO_CELL or 0x1160 <= code <= 0x11FF or 0xD7B0 <= code <= 0xD7FF:
        return 0
    if 0x1F3FB <= code <= 0x1F3FF:
        return 0
    return 2 if unicodedata.east_asian_width(ch) in "WF" else 1


def _widths(text: str):
    """Each character's cells in ``text`` (``char_cells``), as Rich counts them in context: what follows
    a zero-width joiner is drawn into the character before it (👩‍💻 takes two), and VS16 widens a
    narrow emoji (❤️, the keycap 1️⃣; not ° or other symbols, which have no emoji form)."""
    joined = False
    before = ""
    for ch in text:
        if ch == "\u200d" or joined:
            width, joined = 0, ch == "\u200d"
        elif ch == "\ufe0f":
            width = int(char_cells(before) == 1 and bool(_TEXT_EMOJI.match(before))) if before else 0
            before = ""
        else:
            width = char_cells(ch)
            before = ch if width else before
        yield width


def cells(text: str) -> int:
    """Terminal cells ``text`` takes on one line (``char_cells``, in context)."""
    return sum(_widths(text))


def cut_cells(text: str, width: int, words: bool = False) -> str:
    """``text`` in at most ``width`` terminal cells, ending in … when cut (a wide character is never
    halved), never inside a number (``cut_end``), nor a word with ``words`` (``word_end``: prose, such as
    a summary). The one cut both skins make of a line of a known width."""
    if cells(text) <= width:
        return text
    kept, used = 0, 1  # the ellipsis
    for cell in _widths(text):
        used += cell
        if used > width:
            break
        kept += 1
    start = text[:kept].rstrip()
    return (word_end if words else cut_end)(start, text[len(start) :]) + "…"


def folder_beside(folder: str, name: str, *, archive: bool = False) -> str:
    """A skill's folder shortened where it repeats the name beside it (``skill_label``'s, where a list is
    narrow): ``devops/…``; for an archived copy ``.archive`` (``.archive/…-20261206000751``) when ``archive``
    (room for the marker that tells it from the active skill of the same name), else ``…-20261206000751``
    or ``…`` alone (the state column says archived): what is left, with the category and state columns,
    tells it from the others."""
    parent, _, last = folder.rpartition("/")
    if not last.startswith(name):
        return folder
    if parent == ".archive":
        if archive:  # (the first archived copy, ``.archive/NAME``: ``.archive`` alone says where it is)
            return ".archive" + f"/…{last[len(name) :]}" * (last != name)
        parent = ""  # (the state column says archived)
    return f"{parent}/" * bool(parent) + "…" + last[len(name) :]


def path_lines(path: str, width: int) -> list[str]:
    """``path`` on lines of at most ``width`` cells, broken only after a ``/``: a path a notice names, which a
    user reads and copies, never parted inside a folder's or file's name (one wider than a line has a
    line of its own)."""
    lines = [""]
    for part in re.findall(r"[^/]*/|[^/]+$", path):  # each folder with its slash, then the file's name
        if lines[-1] and cells(lines[-1] + part) > width:
            lines.append("")
        lines[-1] += part
    return lines


Spans = tuple[tuple[int, int], ...]  # character ranges in a text (a search excerpt's matches)


def shown_spans(text: str, spans: Spans, show: Callable[[str], str] = visible) -> tuple[str, Spans]:
    """``text`` on one line as shown (``show`` on each piece, a line break as a space), with ``spans`` moved
    to match: a symbol (``<U+202E>``) is longer than the character it shows."""
    size = len(text)
    spans = tuple((min(max(a, 0), size), min(max(b, 0), size)) for a, b in spans)
    edges = sorted({0, size, *itertools.chain.from_iterable(spans)})
    moved, shown = {0: 0}, ""
    for a, b in itertools.pairwise(edges):
        shown += show(text[a:b])
        moved[b] = len(shown)
    return shown.replace("\n", " "), tuple((moved[a], moved[b]) for a, b in spans)


def _back(text: str, end: int, room: int) -> int:
    """Where a stretch of ``text`` ending at ``end`` starts that fills at most ``room`` cells, whole symbols and
    graphemes (``start_in``)."""
    start = end
    for unit in reversed(_UNIT.findall(text[:end])):
        room -= cells(unit)
        if room < 0:
            break
        start -= len(unit)
    return start


def start_in(text: str, room: int) -> str:
    """The longest start of ``text`` that fits in ``room`` cells, a symbol or grapheme at a time, each measured
    whole (``cells``): counted a character at a time, ❤️ took one cell where it draws in two, so an excerpt
    ran past its row, and a cut parted 👩‍💻 after its joiner, ﾃﾞ before its voiced mark or ``<U+202E>``."""
    used = 0
    for found in _UNIT.finditer(text):
        used += cells(found.group())
        if used > room:
            return text[: found.start()]
    return text


def around(text: str, spans: Spans, room: int) -> tuple[str, Spans]:
    """A one-line ``text`` (``shown_spans``) cut to ``room`` cells around its first match, ``spans`` moved
    to match: both skins' search excerpt. Before the match, a quarter of the room of context, never so much
    that the match itself (CJK takes two cells a character) is cut off; a closing ``…`` only when something
    follows the cut."""
    if cells(text) <= room:
        return text, spans
    first, last = spans[0] if spans else (0, 0)
    start = max(_back(text, first, room // 4), _back(text, last, room - 2))  # context, and the whole match
    start = min(start, _back(text, len(text), room - 1), first)  # near the end, use the room for what precedes
    rest = text[start:]
    room -= bool(start)  # after the leading "…"; a trailing one only if the rest does not fit
    cut = start_in(rest, room if cells(rest) <= room else room - 1)
    more = len(cut) < len(rest)
    piece = ("…" if start else "") + cut + ("…" if more else "")
    shift, lowest = (start - 1, 1) if start else (0, 0)
    moved = ((max(lowest, a - shift), min(len(piece) - more, b - shift)) for a, b in spans)
    return piece, tuple((a, b) for a, b in moved if a < b)


APART_CONTEXT = 20  # characters of two versions' shared text kept before where they differ


def apart(old: str | None, new: str | None, width: int) -> tuple[str, str]:
    """Two versions of a text, each on one line (``flat_line``) in at most ``width`` characters, so that where they
    differ is in view: when their shared start would leave no room for it, both start with …
    shortly before it; when the part that differs runs past the room left, each keeps its start
    and its end with … between (a text changed in two places shows both). Versions that differ
    never read the same."""
    old_line, new_line = flat_line(old), flat_line(new)
    longest = max(len(old_line), len(new_line))
    if longest <= width:
        return old_line, new_line
    start = next(
        (i for i, (a, b) in enumerate(zip(old_line, new_line, strict=False)) if a != b),
        min(len(old_line), len(new_line)),
    )
    shared_end = next(
        (i for i, (a, b) in enumerate(zip(reversed(old_line), reversed(new_line), strict=False)) if a != b),
        min(len(old_line), len(new_line)),
    )
    shared_end = min(shared_end, min(len(old_line), len(new_line)) - start)  # (never into the shared start)
    context = min(APART_CONTEXT, width // 2)  # (a narrow width keeps less around the difference)
    lead = max(min(start - context // 2, longest - (width - 2)), 1) if start > width - context else 0
    if lead:  # (the text before ``start`` is the same in both)
        lead = _word_start(old_line, lead, min(lead + width - 1, len(old_line)), start)
    return (
        _around(old_line, lead, start, len(old_line) - shared_end, width, context),
        _around(new_line, lead, start, len(new_line) - shared_end, width, context),
    )


def _around(line: str, lead: int, start: int, end: int, width: int, context: int) -> str:
    """``line`` from ``lead`` (… for what is left out) in ``width`` characters, its difference
    (``start`` to ``end``) in view: cut at the end when that fits, else its start, … and its end.
    Each cut is made at a word (``word_end``, ``_word_start``) where that keeps the difference's
    first character and last in view."""
    shown = ("…" if lead else "") + line[lead:]
    if len(shown) <= width:
        return shown
    first = start - lead + bool(lead)  # where the difference starts in ``shown``
    if end - lead + bool(lead) <= width - 1:
        return _head(shown, width - 1, first + 1) + "…"
    after = min(len(line), end + context // 2)  # a little of what follows the difference
    room = min(max(width // 2, first + context // 2), width - context // 2 - 3)
    head = _head(shown, max(room, first + 1), first + 1)
    tail_room = width - len(head) - 1 - (after < len(line))
    tail = _word_start(line, after - tail_room, after, end - 1)
    return head + "…" + line[tail:after] + ("…" if after < len(line) else "")


def _head(shown: str, room: int, keep: int) -> str:
    """The first ``room`` characters of ``shown``, cut before a word (``word_end``) or else as ``cut_end``
    cuts, unless that would leave fewer than ``keep``: then where they end."""
    rest = shown[room:]
    kept = (word_end(shown[:room], rest), cut_end(shown[:room], rest))
    return next((head for head in kept if len(head) >= keep), shown[:room])


def _word_start(line: str, at: int, end: int, limit: int) -> int:
    """``word_start``, but never past ``limit``: a cut moved so far would hide where two versions differ."""
    moved = word_start(line, at, end)
    return moved if moved <= limit else at


def is_terminal_safe(text: str) -> bool:
    """True when ``text`` holds nothing ``visible`` would change."""
    return all(_kept(found) for found in _CONTROLS.finditer(text))


def typable(text: str) -> bool:
    """Whether ``text`` shows as itself on one line (``inline`` would change nothing): what a person can
    read off the screen and type back."""
    return is_terminal_safe(text) and "\n" not in text and "\t" not in text


def shell_word(text: str) -> str:
    """``text`` as one word a POSIX shell reads back exactly (``shlex.quote``: ``'my skill'``), shown
    safely: a word holding what ``inline`` would show as a symbol (an escape, a bidi override, a line
    break) is written in ``$'...'`` quoting (bash, zsh) with those characters as escapes
    (``$'bad\\x1b[31m'``), so a suggested command is one that can be typed and that runs as shown."""
    if typable(text):
        return shlex.quote(text)
    return "$'" + "".join(_shell_escape(ch) for ch in text) + "'"


def _shell_escape(ch: str) -> str:
    if ch in "\\'":
        return "\\" + ch
    if is_terminal_safe(ch) and ch not in "\n\t":
        return ch
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a name that is not UTF-8 (surrogateescape): the byte itself
        return f"\\x{code - 0xDC00:02x}"
    # its UTF-8 bytes, which bash reads back in any locale (\u only in a UTF-8 one; $'\x85' is one byte)
    return "".join(f"\\x{byte:02x}" for byte in ch.encode("utf-8", "surrogatepass"))


def _escaped(match: re.Match) -> str:
    if _kept(match):  # harmless, kept as it is
        return match.group()
    return "".join(ch if ch == BLACK_FLAG else _json_escape(ch) for ch in match.group())


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code > 0xFFFF:  # JSON spells a character past the BMP as its UTF-16 surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def json_text(value: object, indent: int | None = None) -> str:
    """``value`` as a JSON document that keeps every text exact and holds no character ``visible``
    would change (``json.dumps`` writes DEL, C1 controls and bidi controls raw when non-ASCII is kept)."""
    return _CONTROLS.sub(_escaped, json.dumps(value, ensure_ascii=False, indent=indent, default=str))


def readable_json(value: object) -> str | None:
    """``value`` as a person reads JSON, when it is (or is the text of) a JSON object or array: indented,
    with every script's letters as themselves, not ``\\uXXXX`` (Hermes stores tool calls with ``json.dumps``
    defaults, so Japanese arguments arrive escaped); else None (also when nested past Python's stack).
    What would drive a terminal is left to ``visible``. The Markdown export and the TUI's transcript
    both show a tool call's arguments so."""
    if isinstance(value, str):
        stripped = value.strip()
        if not stripped or stripped[0] not in "[{":
            return None
        try:
            value = json.loads(stripped)
        except (ValueError, RecursionError):
            return None
    if not isinstance(value, (dict, list)):
        return None
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):
        return None
