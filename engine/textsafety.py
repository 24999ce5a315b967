"""One policy for text from data that reaches a terminal, used by the CLI and the TUI.

Memory entries, titles, skill files and tool output are data: an ESC sequence hidden in
a hand-edited MEMORY.md (``\\x1b]0;PWNED\\x07``, ``\\x1b[2J``, OSC 52 clipboard writes)
must never reach the terminal, and bidirectional controls must not make text display
in another order than it is stored. So C0 controls show as their Unicode control
pictures (``␛``), DEL as ``␡``, C1 controls as ``\\x9b``, and bidi controls (embeddings,
overrides, isolates and the LRM/RLM/ALM marks) as ``<U+202E>``, as are U+FEFF (a
byte-order mark inside text, which Hermes blocks as invisible) and the characters that
draw as nothing at all: the zero-width space, word joiner, invisible operators, soft
hyphen, the Hangul fillers and the tag block (U+E0000-U+E007F, which can spell a hidden
instruction; a subdivision flag such as 🏴 + tags stays a flag), so a reader sees what a
model reads; as are lone surrogates (a file name that was not UTF-8). ZWJ and ZWNJ stay:
emoji and several scripts spell with them (the threat scan judges each by where it sits).
Newlines and tabs are kept.
``--json`` output keeps the exact text, with these characters written as JSON escapes
(``json_text``: U+009B as ``\\u009b``), which a parser reads back as they were and a
terminal never acts on.
"""

from __future__ import annotations

import difflib
import itertools
import json
import re

# A subdivision flag (🏴 + tag letters + cancel tag) is the one thing tag characters may spell.
_FLAG = "\U0001f3f4[\U000e0020-\U000e007e]{2,6}\U000e007f"
_CONTROLS = re.compile(
    _FLAG + "|[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b\u200e\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufeff\uffa0\ud800-\udfff\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e007f\U000e0080-\U000e00ff]"
)


def _picture(match: re.Match) -> str:
    found = match.group()
    if len(found) > 1:  # a flag: drawn as the flag it is
        return found
    code = ord(found)
    if code < 0x20:
        return chr(0x2400 + code)
    if code > 0xFF or code == 0xAD:
        return f"<U+{code:04X}>"
    return "\u2421" if code == 0x7F else f"\\x{code:02x}"


def visible(text: str | None) -> str:
    """``text`` with every control character (but newline and tab) shown, not executed."""
    return _CONTROLS.sub(_picture, text or "")


def shown_back(draft: str, original: str) -> str:
    """``draft``, edited from ``visible(original)``, with each symbol ``visible`` drew for a character
    of ``original`` and left in place turned back into that character: an editor shows symbols, and
    saving must keep the characters the user did not touch rather than write ``<U+200B>`` as text.

    Where each symbol sits is found by aligning the draft with what the editor showed. A symbol
    is one character: one partly deleted (a backspace into ``<U+200B>``) drops that character and
    what is left of it. Text typed or pasted, a symbol too, stays as typed, and so does a symbol
    typed into, since what remains of it may be the user's own text.
    """
    shown, symbols = _shown_with_symbols(original)
    if not symbols:
        return draft
    ops = _alignment(shown, draft)
    fates = [_fate(first, last, ops) for first, last, _ in symbols]
    out: list[str] = []
    for tag, i1, i2, j1, j2 in ops:
        if tag != "equal":
            out.append(draft[j1:j2])  # (a deletion adds nothing)
            continue
        at = i1
        for (first, last, character), fate in zip(symbols, fates, strict=True):
            if last <= i1 or first >= i2:
                continue
            out.append(shown[at : max(at, first)])
            out.append(
                character if fate == "kept" else "" if fate == "deleted" else shown[max(i1, first) : min(i2, last)]
            )
            at = min(i2, last)
        out.append(shown[at:i2])
    return "".join(out)


def _alignment(shown: str, draft: str) -> list[tuple[str, int, int, int, int]]:
    """Opcodes from ``shown`` to ``draft``: the common start and end first, as an edit in one place
    leaves them (so ``␀0␀␀`` from ``␀␀␀`` is one insertion after the first ␀), then the rest."""
    head = _common_start(shown, draft)
    tail = _common_start(shown[head:][::-1], draft[head:][::-1])
    middle = difflib.SequenceMatcher(None, shown[head : len(shown) - tail], draft[head : len(draft) - tail], False)
    ops = [(tag, i1 + head, i2 + head, j1 + head, j2 + head) for tag, i1, i2, j1, j2 in middle.get_opcodes()]
    ends = [("equal", 0, head, 0, head)] if head else []
    if tail:
        ops.append(("equal", len(shown) - tail, len(shown), len(draft) - tail, len(draft)))
    return ends + ops


def _common_start(one: str, other: str) -> int:
    return next((n for n, (a, b) in enumerate(zip(one, other, strict=False)) if a != b), min(len(one), len(other)))


def _fate(first: int, last: int, ops: list[tuple[str, int, int, int, int]]) -> str:
    """What the edit did to the symbol at ``first:last`` of the shown text: kept, deleted (in part,
    with nothing typed into it) or typed (text inserted into it or over part of it)."""
    touching = [op for op in ops if (op[1] < last and op[2] > first) or (op[0] == "insert" and first < op[1] < last)]
    tags = {op[0] for op in touching}
    if tags == {"equal"} and all(a[4] == b[3] for a, b in itertools.pairwise(touching)):
        return "kept"  # (in one piece of the draft, though the alignment may have split it)
    return "deleted" if tags <= {"equal", "delete"} else "typed"


def _shown_with_symbols(text: str) -> tuple[str, list[tuple[int, int, str]]]:
    """``visible(text)``, and where in it each symbol stands for a character of ``text``: (start, end, character)."""
    pieces: list[str] = []
    symbols: list[tuple[int, int, str]] = []
    size = done = 0
    for found in _CONTROLS.finditer(text):
        pieces.append(text[done : found.start()])
        size += found.start() - done
        picture = _picture(found)
        if picture != found.group():
            symbols.append((size, size + len(picture), found.group()))
        pieces.append(picture)
        size += len(picture)
        done = found.end()
    pieces.append(text[done:])
    return "".join(pieces), symbols


def unsafe_spans(text: str) -> list[tuple[int, int, str]]:
    """Where ``visible`` would change ``text``: (start, end, the symbol it draws there)."""
    return [(m.start(), m.end(), _picture(m)) for m in _CONTROLS.finditer(text) if len(m.group()) == 1]


def is_terminal_safe(text: str) -> bool:
    """True when ``text`` holds nothing ``visible`` would change."""
    return all(len(found.group()) > 1 for found in _CONTROLS.finditer(text))


def _escaped(match: re.Match) -> str:
    if len(match.group()) > 1:  # a flag: harmless, kept as it is
        return match.group()
    code = ord(match.group())
    if code > 0xFFFF:  # JSON spells a character past the BMP as its UTF-16 surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def json_text(value: object, indent: int | None = None) -> str:
    """``value`` as a JSON document that keeps every text exact and holds no character ``visible``
    would change (``json.dumps`` writes DEL, C1 controls and bidi controls raw when non-ASCII is kept)."""
    return _CONTROLS.sub(_escaped, json.dumps(value, ensure_ascii=False, indent=indent, default=str))
