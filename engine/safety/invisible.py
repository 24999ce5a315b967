"""Characters a reader cannot see, judged by the grapheme they sit in.

A default-ignorable code point (zero-width characters, bidi controls, variation
selectors, the tag block, fillers), a control character other than tab and newline, or
a braille blank used as a space can hide or reorder text. Each is refused unless the
grapheme it belongs to needs it: a ZWJ inside an emoji sequence (👩‍💻), a variation
selector after an emoji or an ideograph, tag characters spelling a subdivision flag
(🏴 + tags + cancel tag), or ZWNJ/ZWJ between letters of a script that uses them for
spelling (Persian, Arabic, the Indic scripts). Grapheme clusters come from the
``regex`` module's ``\\X``, which follows Unicode's segmentation rules.
"""

from __future__ import annotations

import regex

_SUSPECT = regex.compile(r"[\p{Default_Ignorable_Code_Point}\p{Cc}\u2800--[\t\n]]", regex.V1)
_GRAPHEME = regex.compile(r"\X")
_PICTO = regex.compile(r"\p{Extended_Pictographic}")
_EMOJI = regex.compile(r"[\p{Emoji}\p{Extended_Pictographic}]")
_IDEOGRAPH = regex.compile(r"\p{Ideographic}")
_BRAILLE = regex.compile(r"[\u2801-\u28ff]")
_JOINING_SCRIPT = regex.compile(
    r"[\p{Script=Arabic}\p{Script=Syriac}\p{Script=Nko}\p{Script=Mongolian}\p{Script=Devanagari}"
    r"\p{Script=Bengali}\p{Script=Gurmukhi}\p{Script=Gujarati}\p{Script=Oriya}\p{Script=Tamil}\p{Script=Telugu}"
    r"\p{Script=Kannada}\p{Script=Malayalam}\p{Script=Sinhala}\p{Script=Myanmar}\p{Script=Khmer}]"
)
_FLAG_TAGS = regex.compile("\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,6}\U000e007f")
ZWNJ, ZWJ, BLACK_FLAG = "\u200c", "\u200d", "\U0001f3f4"


def _needed(text: str, i: int, cluster: str) -> bool:
    """True when the character at ``text[i]`` is part of a real grapheme's spelling."""
    ch = text[i]
    before = text[i - 1] if i else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if ch == ZWJ and _PICTO.match(before or " ") and _PICTO.match(after or " "):
        return True
    if ch in (ZWNJ, ZWJ):
        return bool(before and after and _JOINING_SCRIPT.match(before) and _JOINING_SCRIPT.match(after))
    if "\ufe00" <= ch <= "\ufe0f":
        return bool(before and (_EMOJI.match(before) or _IDEOGRAPH.match(before)))
    if "\U000e0100" <= ch <= "\U000e01ef":  # ideographic variation selectors
        return bool(_IDEOGRAPH.match(cluster[:1]))
    if "\U000e0020" <= ch <= "\U000e007f":
        return cluster.startswith(BLACK_FLAG) and bool(_FLAG_TAGS.fullmatch(cluster.rstrip("\ufe0f")))
    if ch == "\u2800":
        return bool(_BRAILLE.match(before or " ") or _BRAILLE.match(after or " "))
    return False


def hidden_characters(text: str) -> list[str]:
    """``U+XXXX`` of every hidden character no grapheme needs, in order of first appearance."""
    if not _SUSPECT.search(text):
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
