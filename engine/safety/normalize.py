"""Views of a text for matching: what a reader sees, not which code points spell it.

An attacker disguises a phrase so that a literal pattern misses it while a model still
reads it. Each view undoes one family of disguises, and rules match against the view
that suits them:

- ``plain``: NFKC (full-width and styled letters fold to ASCII), case folded, combining
  marks stripped, default-ignorable characters dropped, whitespace collapsed. Every
  language's rules match here.
- ``skeleton``: ``plain`` with each letter replaced by the ASCII letter it is confusable
  with (Unicode TR39's confusables data, via ``confusable-homoglyphs``), so Cyrillic and
  Greek look-alikes read as Latin. English rules match here.
- ``folded``: ``skeleton`` with leetspeak digits turned back into letters and separators
  (``-_.*/|`` ...) turned into spaces: ``1gn0r3-4ll`` reads ``ignore all``.
- ``folded_l``: the same with a "1" inside a word read as "l" (``ru135`` is "rules").
- ``compact``: ``folded`` with everything but letters removed, for letter-by-letter
  spacing (``i g n o r e``) and scripts written without spaces.

The views are for matching only; the stored text is never changed.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache

import regex

from .decode import rot13

_IGNORABLE = regex.compile(r"[\p{Default_Ignorable_Code_Point}\p{Cc}--[\t\n]]", regex.V1)
# ``_IGNORABLE`` within ASCII (no default-ignorable code point is ASCII; the C0 controls and DEL are
# ``Cc``), on ``re``: 1.9 to 0.5 µs a fact.
_IGNORABLE_ASCII = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# Plain character classes on the standard ``re``, about twice as fast on every scanned text. Its
# ``\s`` also holds U+001C-U+001F, which ``regex``'s does not; they are left out so both read the same.
_SPACES = re.compile(r"[^\S\n\x1c-\x1f]+")
_SEPARATORS = re.compile(r"[-_.*~|/\\+=:;,'\"`^#<>(){}\[\]]+")
_NON_LETTERS = regex.compile(r"[^\p{L}]+")
_NON_LETTERS_ASCII = re.compile(r"[^a-zA-Z]+")  # ``_NON_LETTERS`` within ASCII, on ``re``
_LEET = str.maketrans(
    {
        "0": "o",
        "1": "i",
        "3": "e",
        "4": "a",
        "5": "s",
        "7": "t",
        "8": "b",
        "9": "g",
        "@": "a",
        "$": "s",
        "!": "i",
        "€": "e",
        "£": "l",
    }
)
_LEET_L = str.maketrans({"1": "l"})
_WORD_CHARS = r"[\p{L}\d@$!€£]"
# A whole word holding both a letter and a leet character: the only words ``_unleet`` can change.
_LEET_WORD = regex.compile(
    rf"(?<!{_WORD_CHARS})(?={_WORD_CHARS}*\p{{L}}){_WORD_CHARS}*[\d@$!€£]{_WORD_CHARS}*(?!{_WORD_CHARS})"
)
# ``_LEET_WORD`` within ASCII, where a letter is [A-Za-z] and a digit [0-9], on ``re``: its lookahead
# at every position made it the dearest search of a fact's views (26 to 5 µs for one with "python3").
_WORD_CHARS_ASCII = "[A-Za-z0-9@$!]"
_LEET_WORD_ASCII = re.compile(
    rf"(?<!{_WORD_CHARS_ASCII})(?={_WORD_CHARS_ASCII}*[A-Za-z]){_WORD_CHARS_ASCII}*[0-9@$!]"
    rf"{_WORD_CHARS_ASCII}*(?!{_WORD_CHARS_ASCII})"
)


def _unleet(match: re.Match | regex.Match, ones: dict | None = None) -> str:
    """A word with letters and digits (``pr3v10u5``) read as letters; numbers stay numbers."""
    word = match.group()
    body = word.rstrip("!")
    if not any(ch.isalpha() for ch in body):
        return word
    if ones:  # a "1" inside a word (ru135) may be an "l"; a leading one (1gn0r3) stays an "i"
        body = body[:1] + body[1:].translate(ones)
    return body.translate(_LEET) + word[len(body) :]


_LEET_CHARS = frozenset(map(chr, _LEET))
# A letter beside a digit or leet sign: every word ``_LEET_WORD`` finds holds one (a cheap
# search that lets "port 8080" or "staging-4" skip the word-by-word pass). Written from the
# digit or sign, with the letter looked around for, it is tried only at those: 5 to 2 µs a fact.
_LETTER_BY_LEET = regex.compile(r"(?<=\p{L})[\d@$!€£]|[\d@$!€£](?=\p{L})")


def _letters(text: str) -> str:
    """``text``'s letters alone (the compact view)."""
    return (_NON_LETTERS_ASCII if text.isascii() else _NON_LETTERS).sub("", text)


def _spaced(text: str) -> str:
    return _SPACES.sub(" ", _SEPARATORS.sub(" ", text))


def _folds(text: str) -> tuple[str, str, bool]:
    """``text`` read as letters word by word, with a "1" inside a word read as "i" and then as "l",
    and whether any word was read so (if not, both readings are ``text`` respaced).

    One pass over the words for both readings; the second is the first itself whenever no
    word changes with it (numbers such as "2024" are left alone, so most texts).
    """
    if _LEET_CHARS.isdisjoint(text) or not _LETTER_BY_LEET.search(text):
        folded = _spaced(text)
        return folded, folded, False
    as_i: list[str] = []
    as_l: list[str] = []
    last = 0
    for match in (_LEET_WORD_ASCII if text.isascii() else _LEET_WORD).finditer(text):
        between = text[last : match.start()]
        as_i += (between, _unleet(match))
        as_l += (between, _unleet(match, _LEET_L))
        last = match.end()
    read_i, read_l = "".join(as_i) + text[last:], "".join(as_l) + text[last:]
    folded = _spaced(read_i)
    return folded, folded if read_l == read_i else _spaced(read_l), read_i != text


_ASCII_NON_LETTERS = re.compile(r"[^a-zA-Z]+")


def _ascii_letters(text: str) -> int:
    return len(_ASCII_NON_LETTERS.sub("", text))


def strip_marks(text: str) -> str:
    """``text`` without combining marks (accents, zalgo stacks), recomposed."""
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFC", "".join(ch for ch in decomposed if not unicodedata.combining(ch)))


# Look-alikes TR39 maps to a small capital or a symbol rather than to an ASCII letter.
_EXTRA_TWINS = {
    "ε": "e",
    "η": "n",
    "κ": "k",
    "τ": "t",
    "ν": "v",
    "т": "t",
    "м": "m",
    "к": "k",
    "н": "h",
    "в": "b",
    "г": "r",
    "ı": "i",
}


@cache
def _confusables() -> dict:
    """TR39's confusables, loaded at the first non-ASCII letter: about 60 ms (the package
    imports urllib and parses its JSON) that a process writing ASCII text never pays."""
    from confusable_homoglyphs.confusables import confusables_data

    return confusables_data


@cache
def _ascii_twin(ch: str) -> str | None:
    """The ASCII letter or digit ``ch`` is confusable with, following at most two hops."""
    if ch in _EXTRA_TWINS:
        return _EXTRA_TWINS[ch]
    frontier = [ch]
    for _ in range(2):
        nxt = []
        for glyph in frontier:
            for alt in _confusables().get(glyph, ()):
                twin = alt["c"]
                if twin.isascii() and twin.isalnum():
                    return twin.lower()
                nxt.append(twin)
        frontier = nxt
    return None


def skeleton(text: str) -> str:
    """Non-ASCII letters replaced by their ASCII look-alikes (others kept)."""
    out = []
    for ch in text:
        twin = None if ch.isascii() or not ch.isalpha() else _ascii_twin(ch)
        if twin == "l" and ch.isupper():  # TR39 folds I and l together; a capital I look-alike reads as "i"
            twin = "i"
        out.append(twin if twin is not None else ch)
    return "".join(out)


def _visible(text: str) -> str:
    """NFKC, marks stripped, ignorables dropped, spaces collapsed; case kept (look-alikes are case-specific)."""
    return _SPACES.sub(" ", _IGNORABLE.sub("", strip_marks(unicodedata.normalize("NFKC", text))))


@dataclass(frozen=True)
class Views:
    raw: str
    plain: str
    skeleton: str
    folded: str
    folded_l: str  # as ``folded``, with "1" read as "l"
    compact: str
    leet: bool = False  # a word's digits or signs were read as letters

    @classmethod
    def of(cls, text: str) -> Views:
        if text.isascii():  # NFKC, marks and look-alikes change nothing in ASCII: most texts take this path
            base = skel = _SPACES.sub(" ", _IGNORABLE_ASCII.sub("", text)).casefold()
        else:
            visible = _visible(text)
            base, skel = visible.casefold(), skeleton(visible).casefold()
        folded, folded_l, leet = _folds(skel)
        return cls(text, base, skel, folded, folded_l, _letters(folded), leet)

    def rot13_translates_base(self) -> bool:
        """Whether rot13 of the text has ``raw``, ``plain`` and ``skeleton`` translated (see ``rot13``)."""
        return self.raw.isascii() or _ascii_letters(self.raw) == _ascii_letters(self.skeleton) == _ascii_letters(
            self.plain
        )

    def rot13_is_translation(self) -> bool:
        """Whether every view of rot13 of the text is this view translated (no leetspeak was read either)."""
        return not self.leet and self.rot13_translates_base()

    def rot13(self) -> Views:
        """``Views.of(rot13(self.raw))``, the second set every scan builds, made cheaply when it can be.

        rot13 only swaps ASCII letters for letters. Every step of ``of`` (NFKC, marks, dropping
        controls, spacing, case folding, look-alikes, separators, keeping letters) treats an
        ASCII letter as any other letter (none composes with what follows it once the marks
        are gone), so it commutes with rot13 and each view can be translated instead, unless
        leetspeak was read (a "0" becomes "o", whose rot13 is "b") or the views hold an ASCII
        letter that another character became (Ａ, é, the Kelvin sign, a Cyrillic а), which
        rot13 of the text leaves alone. The text's ASCII letters each stay one letter in the
        views, so such a letter shows as ``skeleton`` (which the folded views are made from) or
        ``plain`` holding more ASCII letters than the text. When leetspeak was read, only the
        folded views are made again, from the translated ``skeleton``, as ``of`` makes them.
        """
        if not self.rot13_translates_base():
            return Views.of(rot13(self.raw))
        if self.leet:
            raw, plain, skel = rot13(self.raw), rot13(self.plain), rot13(self.skeleton)
            folded, folded_l, leet = _folds(skel)
            return Views(raw, plain, skel, folded, folded_l, _letters(folded), leet)
        raw, plain, skel, folded, folded_l, compact = map(
            rot13, (self.raw, self.plain, self.skeleton, self.folded, self.folded_l, self.compact)
        )
        return Views(raw, plain, skel, folded, folded_l, compact)
