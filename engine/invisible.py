"""Characters a reader cannot see, judged by the grapheme they sit in.

A default-ignorable code point (zero-width characters, bidi controls, variation
selectors, the tag block, fillers), a control character other than tab and newline, or
a braille blank used as a space is not what a reader sees: a control character can drive
the terminal, a bidi control reorders the text around it, and the rest show as nothing, so
they hide text (``effect`` says which, in words). Each is refused unless the
grapheme it belongs to needs it: a ZWJ inside an emoji sequence (👩‍💻, 👩🏽‍💻, 🏳️‍🌈), a
variation selector after an emoji or an ideograph, tag characters spelling a subdivision
flag (🏴 + tags + cancel tag), ZWNJ/ZWJ between letters of a script that uses them for
spelling (Persian, Arabic, the Indic scripts), or a Mongolian variation selector after a
Mongolian letter. Grapheme clusters come from the ``regex`` module's ``\\X``, which
follows Unicode's segmentation rules.

Pure (no I/O): the threat scan refuses what ``hidden_characters`` finds, and
``engine.textsafety`` draws the same characters as symbols with ``needed_at``, so what a
refusal names is what the screen shows.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import regex

# A skin tone is drawn two cells wide by a terminal, but measured as none (it combines with the
# emoji before it): alone, it hides the text after it from every screen. So it counts as hidden
# unless it follows an emoji that takes a skin tone.
_SUSPECT = regex.compile(r"[\p{Default_Ignorable_Code_Point}\p{Cc}\u2800\U0001f3fb-\U0001f3ff--[\t\n]]", regex.V1)
# ``_SUSPECT`` within ASCII (no default-ignorable code point is ASCII), on ``re``: 1.9 to 0.4 µs a fact.
_SUSPECT_ASCII = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_TONE_BASE = regex.compile(r"\p{Emoji_Modifier_Base}")
_GRAPHEME = regex.compile(r"\X")
_PICTO = regex.compile(r"\p{Extended_Pictographic}")
# An emoji that a ZWJ may follow: a pictograph, perhaps with its presentation selector or a skin tone.
_PICTO_BEFORE_JOINER = regex.compile(r"\p{Extended_Pictographic}[\ufe0f\U0001f3fb-\U0001f3ff]?$")
_EMOJI = regex.compile(r"[\p{Emoji}\p{Extended_Pictographic}]")
_IDEOGRAPH = regex.compile(r"\p{Ideographic}")
_BRAILLE = regex.compile(r"[\u2801-\u28ff]")
_MONGOLIAN = regex.compile(r"(?=\p{L})\p{Script=Mongolian}")  # a letter a selector varies (not a mark or separator)
_JOINING_SCRIPT = regex.compile(
    r"[\p{Script=Arabic}\p{Script=Syriac}\p{Script=Nko}\p{Script=Mongolian}\p{Script=Devanagari}"
    r"\p{Script=Bengali}\p{Script=Gurmukhi}\p{Script=Gujarati}\p{Script=Oriya}\p{Script=Tamil}\p{Script=Telugu}"
    r"\p{Script=Kannada}\p{Script=Malayalam}\p{Script=Sinhala}\p{Script=Myanmar}\p{Script=Khmer}]"
)
# A subdivision flag: the black flag, two to six tag digits or small letters, the cancel tag.
FLAG = "\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,6}\U000e007f"
_FLAG_TAGS = regex.compile(FLAG)
ZWNJ, ZWJ, BLACK_FLAG = "\u200c", "\u200d", "\U0001f3f4"

# The hidden characters a grapheme may need (tags aside: a flag is judged as a whole).
CONTEXTUAL = "\u180b-\u180d\u180f\u200c\u200d\u2800\ufe00-\ufe0f\U000e0100-\U000e01ef\U0001f3fb-\U0001f3ff"


def unseen_removed(text: str) -> str:
    """``text`` without the characters no reader sees (default-ignorable, controls but tab and newline):
    what a line reads as, for a '§' line with a variation selector or a zero-width space beside it."""
    return _SUSPECT.sub("", text) if not text.isascii() else _SUSPECT_ASCII.sub("", text)


def needed_at(text: str, i: int) -> bool:
    """True when the joiner, variation selector, braille blank or skin tone at ``text[i]`` is part of
    how its neighbours are spelt (any other character: False)."""
    ch = text[i]
    before = text[i - 1] if i else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if ch == ZWJ and _PICTO.match(after or " ") and _PICTO_BEFORE_JOINER.search(text, max(0, i - 2), i):
        return True
    if ch in (ZWNJ, ZWJ):
        return bool(before and after and _JOINING_SCRIPT.match(before) and _JOINING_SCRIPT.match(after))
    if "\ufe00" <= ch <= "\ufe0f":
        return bool(before and (_EMOJI.match(before) or _IDEOGRAPH.match(before)))
    if "\U000e0100" <= ch <= "\U000e01ef":  # ideographic variation selectors
        return bool(before and _IDEOGRAPH.match(before))
    if ch in "\u180b\u180c\u180d\u180f":  # Mongolian free variation selectors (U+180E, between, is none)
        return bool(before and _MONGOLIAN.match(before))
    if ch == "\u2800":
        return bool(_BRAILLE.match(before or " ") or _BRAILLE.match(after or " "))
    if "\U0001f3fb" <= ch <= "\U0001f3ff":  # a skin tone
        return bool(before and _TONE_BASE.match(before))
    return False


def _is_flag(cluster: str) -> bool:
    """True when a grapheme is a subdivision flag and nothing else (an emoji selector aside)."""
    return cluster.startswith(BLACK_FLAG) and bool(_FLAG_TAGS.fullmatch(cluster.rstrip("\ufe0f")))


def flag_at(text: str, start: int) -> bool:
    """True when the flag spelt from ``text[start]`` is a grapheme of its own, as the scan segments
    ``text``: nothing before it (a prepended mark) or after it (an emoji modifier, a joiner) makes its
    tags part of something else, which no screen draws as a flag."""
    return start in _flag_starts(text)


@lru_cache(maxsize=16)
def _flag_starts(text: str) -> frozenset[int]:
    """Where in ``text`` each grapheme that is a flag starts (segmented once for all its flags)."""
    return frozenset(found.start() for found in _GRAPHEME.finditer(text) if _is_flag(found.group()))


def _needed(text: str, i: int, cluster: str) -> bool:
    """True when the character at ``text[i]`` is part of a real grapheme's spelling."""
    if "\U000e0020" <= text[i] <= "\U000e007f":
        return _is_flag(cluster)
    return needed_at(text, i)


def hidden_characters(text: str) -> list[str]:
    """``U+XXXX`` of every hidden character no grapheme needs, in order of first appearance."""
    if not (_SUSPECT_ASCII if text.isascii() else _SUSPECT).search(text):
        return []
    found: dict[str, None] = {}
    for match in _GRAPHEME.finditer(text):
        cluster = match.group()
        if not _SUSPECT.search(cluster):
            continue
        for offset, ch in enumerate(cluster):
            if _SUSPECT.match(ch) and not _needed(text, match.start() + offset, cluster):
                found[f"U+{ord(ch):04X}"] = None
    return list(found)


# The bidi controls: the Arabic letter mark, LRM and RLM, the embeddings and overrides, the isolates.
BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def effect(ch: str) -> tuple[str, str]:
    """What kind of character a hidden one is and what it can do, in words: only a control character
    drives a terminal, only a bidi control reorders text; the rest draw as nothing."""
    if unicodedata.category(ch) == "Cc":
        return "control character", "which can drive the terminal instead of showing as text"
    if ch in BIDI:
        return "bidi control", "which can reorder how the text around it is displayed"
    return "invisible character", "which shows as nothing, so it can hide text"
