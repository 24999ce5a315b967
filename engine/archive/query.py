"""Turning any user text into a safe search plan.

``sanitize_fts_query`` follows Hermes's steps (length cap, balanced quotes kept,
FTS syntax characters and stray ``*`` removed, dangling AND/OR/NOT dropped) and then
goes one step further: every token that is not a plain word becomes a quoted phrase,
so no input can be an FTS5 syntax error. ``parse`` splits the result into terms and
routes queries that contain CJK text to the substring indexes.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass

from ..textsafety import CJK_CLASS
from ..values import decoded_calls, half_width, storable

MAX_QUERY_CHARS = 2048
OPERATORS = ("AND", "OR", "NOT")
NEAR = "NEAR"  # FTS5's proximity group, NEAR(a b, N): with no parentheses here, read as its words
MIN_PREFIX = 3  # search-as-you-type widens the last word only from 3 characters (1-2 would match half the index)

CJK_CHAR = re.compile(f"[{CJK_CLASS}]")
CJK_RUN = re.compile(f"[{CJK_CLASS}]+")

_SYNTAX = re.compile(r'[+{}():"^]')
# ``near(`` in any case but capitals: FTS5's NEAR is case-sensitive, and here the word is searched.
_LOWER_NEAR = re.compile(r"(?<!\w)(?!NEAR)(?i:near)\s*\(")
# ``name:word`` as FTS5 reads a column filter (a bareword name, ``:``, then the phrase), but not a URL's
# ``http://``, a time's ``10:30`` (no name starts with a digit) nor ``a.b:c``, ``user@host:dir``.
_COLUMN_FILTER = re.compile(r"(?<![\w.:/@-])([A-Za-z_]\w*):(?=[^\W_]|[\"(])")
TEXT_COLUMN = "content"  # messages_fts's one column: ``content:`` filters by it in FTS5
# Other names a search user may take for a filter (the message's and session's fields; the Timeline's
# ``session:``): FTS5 refuses them (no such column), and here they are words. Any other ``word:``
# (``TODO:fix``, ``re:``) is text, not noted.
FIELD_NAMES = frozenset(
    {"role", "tool", "tool_name", "tool_calls", "session", "session_id", "source", "title", "model", "timestamp"}
)
_NEAR_DISTANCE = re.compile(r"(\bNEAR\s*\([^()]*?),\s*\d+\s*\)")  # NEAR(a b, 5): the 5 is no term
_BAREWORD = re.compile(r"^[A-Za-z0-9_\u0080-\U0010ffff]+$")


def _wordlike(text: str) -> bool:
    """Whether ``text`` holds something to search for: a letter or digit, or a character past ASCII that
    is not punctuation (an emoji, a symbol such as →). Punctuation is never searched, ASCII (``(``, ``!``)
    and CJK or full-width alike (``「``, ``。``, ``（``, ``！``, ``…``): those were searched as text, so ``「``
    said no message matched it where ``(`` said punctuation is not searched."""
    return any(char.isalnum() or (not char.isascii() and not _punctuation(char)) for char in text)


def _punctuation(char: str) -> bool:
    """A punctuation mark (Unicode's P categories), or a full-width form of ASCII punctuation or of a
    symbol ASCII has (``～``, ``＄``, ``＿``): as ``~``, ``$`` and ``_`` are, no word to search."""
    if unicodedata.category(char).startswith("P"):
        return True
    folded = unicodedata.normalize("NFKC", char)
    return folded != char and folded.isascii() and not any(c.isalnum() for c in folded)


# CJK and full-width punctuation (「」、。！): between words it parts them, as a space does, since
# no index holds it as text a search could want (``「東京」出差`` searches ``東京`` and ``出差``).
_CJK_PUNCTUATION = re.compile(
    "[" + "".join(chr(c) for c in (*range(0x3000, 0x3040), *range(0xFF01, 0xFF66)) if _punctuation(chr(c))) + "]"
)


def _unpunctuated(word: str) -> str:
    """An unquoted word less the punctuation at its ends (``[東京``, ``東京.``): a word tokenizer splits
    there, so it is never part of a word in the index, and kept it made a CJK word match nothing. ASCII
    marks against a Latin word stay (``C#``, ``.net``): the word route splits there all the same, but a
    query holding CJK searches each term as a substring, where ``C`` found every message with a c in it."""
    start, end = 0, len(word)
    while start < end and _punctuation(word[start]):
        start += 1
    while end > start and _punctuation(word[end - 1]):
        end -= 1
    core = word[start:end]
    if not core:
        return core
    return _kept_beside(word[:start], core[0]) + core + _kept_beside(word[end:], core[-1])


def _kept_beside(marks: str, beside: str) -> str:
    """Of the punctuation at a word's end, the ASCII marks, unless the character beside them is CJK."""
    return "" if contains_cjk(beside) else "".join(mark for mark in marks if mark.isascii())


def contains_cjk(text: str) -> bool:
    return bool(CJK_CHAR.search(text))


def holds_symbol(text: str) -> bool:
    """Whether ``text`` holds a symbol past ASCII (an emoji, ✓, →): FTS5's unicode61 tokenizer parts
    words there as at a space, so the word index holds none, and a search for 🚀 found no message."""
    return any(not char.isascii() and unicodedata.category(char).startswith("S") for char in text)


HALF_WIDTH_KANA = re.compile("[\uff61-\uff9f]+")  # half-width katakana and their marks (ﾀﾜｰ, ﾊﾞ, ｡)


def fold_width(text: str) -> str:
    """``text`` as the CJK path compares it: half-width katakana as NFKC makes them (``ﾃﾞﾌﾟﾛｲ``: ``デプロイ``,
    the sound marks joined to their kana), so a search finds a message whichever width either was typed
    in. (Full-width ASCII stays as typed here: folded, no ASCII could narrow a prefilter on stored text.)"""
    return HALF_WIDTH_KANA.sub(lambda run: unicodedata.normalize("NFKC", run.group()), text)


def fold_widths(text: str) -> str:
    """``text`` as a search compares what was typed: full-width ASCII as ASCII (``half_width``) and half-width
    katakana as full-width (``fold_width``), so a CJK input method's ``ＤＥＰＬＯＹ`` or ``ﾃﾞﾌﾟﾛｲ`` reads as
    ``DEPLOY`` or ``デプロイ`` (the Timeline's search, the Skills filter)."""
    return fold_width(half_width(text))


def _half_forms() -> dict[str, str]:
    """Each character ``fold_width`` makes of half-width katakana, and the half-width text it came from."""
    singles = [chr(c) for c in range(0xFF61, 0xFFA0)]
    forms = {unicodedata.normalize("NFKC", s): s for s in singles}
    for base in singles:
        for mark in ("\uff9e", "\uff9f"):  # ﾞ ﾟ: a voiced kana is one character folded, two half-width
            folded = unicodedata.normalize("NFKC", base + mark)
            if len(folded) == 1:
                forms[folded] = base + mark
    return forms


HALF_FORMS = _half_forms()


def width_folded(term: str) -> bool:
    """Whether a folded ``term`` holds a character half-width katakana fold to: only then do its pairs differ
    between text indexed as written and folded (an index of version 3 being upgraded, cjk.py)."""
    return any(char in HALF_FORMS for char in term)


def width_parts(term: str) -> list[str]:
    """The pieces of a folded ``term`` that read the same in the stored text whatever width it was written
    in: a prefilter on the text as stored (LIKE, Hermes's trigram table) may narrow by them only."""
    return [part for part in re.split("[" + re.escape("".join(HALF_FORMS)) + "]+", term) if part]


def width_pattern(term: str) -> str:
    """A regular expression for ``term`` in text written in either width (marks the hits in a snippet)."""
    return "".join(
        f"(?:{re.escape(char)}|{re.escape(HALF_FORMS[char])})" if char in HALF_FORMS else re.escape(char)
        for char in fold_width(term)
    )


@dataclass(frozen=True)
class Token:
    text: str  # the words, without quotes or a trailing *
    phrase: bool = False  # was quoted by the user
    prefix: bool = False
    operator: bool = False

    def shown(self) -> str:
        """As the user typed it (a ``*``, typed or added while typing, left off)."""
        return f'"{self.text}"' if self.phrase else self.text

    def fts(self) -> str:
        """The term as FTS5 reads it; one in full-width letters or digits (ＰＤＦ) also as its half-width
        form (PDF), which unicode61 keeps apart, so it finds the word as typed either way."""
        if self.operator:
            return self.text
        narrow = half_width(self.text)
        if narrow != self.text:
            return f"({self._fts(self.text)} OR {self._fts(narrow)})"
        return self._fts(self.text)

    def _fts(self, text: str) -> str:
        if not self.phrase and _BAREWORD.match(text) and text not in (*OPERATORS, NEAR):
            return text + ("*" if self.prefix else "")
        return '"' + text.replace('"', '""') + '"' + ("*" if self.prefix else "")


def tokenize(query: str, *, prefix: bool = False, min_prefix: int = MIN_PREFIX) -> list[Token]:
    """Split user text into safe tokens (balanced quotes become phrases).

    With ``prefix`` (search as you type) the last word is a prefix from ``min_prefix``
    characters: 1 when the vocabulary can expand it (vocab.py), else ``MIN_PREFIX``.
    """
    return _read(_capped(query or ""), prefix=prefix, min_prefix=min_prefix)[0]


def _read(text: str, *, prefix: bool, min_prefix: int) -> tuple[list[Token], list[str], bool]:
    """The tokens of ``text`` (capped already, ``_capped``), each ``NOT …`` left out for having nothing
    before it to exclude from, and whether a ``NEAR`` was read as the words it groups (its proximity is
    not searched)."""
    tokens: list[Token] = []
    near = False
    # Balanced "..." pairs are phrases; an unmatched quote is just a space.
    parts = re.split(r'("[^"]*")', text)
    for part in parts:
        if len(part) >= 2 and part.startswith('"') and part.endswith('"'):
            inner = " ".join(part[1:-1].split())
            if _wordlike(inner):
                tokens.append(Token(inner, phrase=True))
            continue
        for raw in _SYNTAX.sub(" ", _NEAR_DISTANCE.sub(r"\1)", _CJK_PUNCTUATION.sub(" ", part))).split():
            raw = re.sub(r"\*+", "*", raw)
            is_prefix = raw.endswith("*")
            word = _unpunctuated(raw.replace("*", ""))
            if raw == NEAR:  # (as a dangling AND is dropped; "near" and "NEAR" in quotes are words)
                near = True
            elif raw in OPERATORS:
                tokens.append(Token(raw, operator=True))
            elif _wordlike(word):
                tokens.append(Token(word, prefix=is_prefix))
    if prefix:  # the last word typed, even before an operator still dangling ("deploy AND")
        last = next((i for i in range(len(tokens) - 1, -1, -1) if not tokens[i].operator), None)
        if last is not None and not tokens[last].phrase and len(tokens[last].text) >= min_prefix:
            tokens[last] = Token(tokens[last].text, prefix=True)
    return (*_place_operators(tokens), near)


def _filters(text: str) -> tuple[bool, tuple[str, ...]]:
    """What in ``text`` (capped already) an FTS5 user may mean as syntax this search reads as words:
    whether a ``near(`` not in capitals is there, and the ``name:`` forms FTS5 would read as column
    filters (``content:``, or one of ``FIELD_NAMES``), outside quotes, each once as typed."""
    bare = re.sub(r'"[^"]*"', lambda found: '"' + " " * (len(found.group()) - 2) + '"', text)
    names = [found.group(1) for found in _COLUMN_FILTER.finditer(bare)]
    picked = [name for name in names if name.lower() == TEXT_COLUMN or name.lower() in FIELD_NAMES]
    return bool(_LOWER_NEAR.search(bare)), tuple(dict.fromkeys(picked))


def _capped(text: str) -> str:
    """The first ``MAX_QUERY_CHARS`` of ``text``, less a word the cap would split (``zzzzqqq`` cut
    to ``zz`` would search for another word); text with no space to go back to is cut where it is."""
    if len(text) <= MAX_QUERY_CHARS:
        return text
    kept = text[:MAX_QUERY_CHARS]
    if not text[MAX_QUERY_CHARS].isspace():
        whole = re.sub(r"\S+$", "", kept)
        kept = whole if whole.strip() else kept
    return kept


def negated(tokens: list[Token]) -> list[bool]:
    """For each token, whether a NOT excludes it: the operator before it is NOT."""
    flags, excluded = [], False
    for token in tokens:
        if token.operator:
            excluded = token.text == "NOT"
        flags.append(excluded and not token.operator)
    return flags


def _is(token: Token, operator: str) -> bool:
    return token.operator and token.text == operator


def _place_operators(tokens: list[Token]) -> tuple[list[Token], list[str]]:
    """Keep AND/OR/NOT only between two terms, and read ``a AND NOT b`` as ``a NOT b``.

    A NOT that starts the query or an OR alternative has nothing to exclude from, and
    FTS5 cannot list everything without a word. Joined by AND to terms after it
    (``NOT b AND c``) it excludes from those (``c NOT b``); otherwise (``NOT deploy``,
    ``a OR NOT b``) it is left out with the terms it governs and said, rather than
    dropped to search for the very word it excludes. A NOT with no term after it
    (still being typed) is just dropped.
    """
    kept: list[Token] = []
    left_out: list[list[Token]] = []
    waiting: list[list[Token]] = []  # leading NOT groups joined by AND to the terms that follow
    group: list[Token] | None = None  # the leading NOT group being read

    def close_alternative() -> None:
        if kept and not kept[-1].operator:
            kept.extend(token for found in waiting for token in found)
        else:
            left_out.extend(waiting)
        waiting.clear()

    for token in tokens:
        if group is not None:
            if not token.operator:
                group.append(token)
                continue
            if len(group) > 1:  # a NOT with no term yet is just dropped
                (waiting if _is(token, "AND") else left_out).append(group)
            group = None
            if _is(token, "AND"):
                continue
        if _is(token, "OR") and kept and not kept[-1].operator:  # (an OR after an operator is dropped)
            close_alternative()
        if _is(token, "NOT") and kept and _is(kept[-1], "AND"):
            kept[-1] = token
        elif _is(token, "NOT") and (not kept or _is(kept[-1], "OR")):
            group = [token]
        elif not (token.operator and (not kept or kept[-1].operator)):
            kept.append(token)
    if group is not None:
        left_out.append(group)
    while kept and kept[-1].operator:
        kept.pop()
    close_alternative()
    return kept, [" ".join(t.shown() for t in found) for found in left_out if len(found) > 1]


def sanitize_fts_query(query: str, *, prefix: bool = False) -> str:
    """An FTS5 MATCH expression for any text ('' when nothing searchable is left)."""
    return fts_expression(tokenize(query, prefix=prefix))


def fts_expression(tokens: list[Token]) -> str:
    """``tokens`` as one FTS5 expression. A full-width term is a group, ``(ＰＤＦ OR PDF)``, which FTS5 refuses
    side by side with another term: then each run of terms side by side is joined by AND in parentheses, as
    they bind tighter than any operator (``a NOT b c`` is ``(a) NOT (b AND c)``)."""
    if all(t.operator or half_width(t.text) == t.text for t in tokens):
        return " ".join(t.fts() for t in tokens)
    parts: list[str] = []
    run: list[str] = []
    for token in tokens:
        if not token.operator:
            run.append(token.fts())
            continue
        parts += [f"({' AND '.join(run)})"] if run else []
        parts.append(token.fts())
        run = []
    return " ".join(parts + ([f"({' AND '.join(run)})"] if run else []))


@dataclass(frozen=True)
class Clause:
    """One alternative (between ORs) of a query, width-folded (``fold_width``) and in lower case for the
    substring check.

    It holds when the text has every ``need`` term and, of each ``unless`` group (what
    one NOT excludes), not all the terms.
    """

    need: tuple[str, ...]
    unless: tuple[tuple[str, ...], ...] = ()

    def holds(self, text: str) -> bool:
        return all(t in text for t in self.need) and not any(all(t in text for t in g) for g in self.unless)


@dataclass(frozen=True)
class ParsedQuery:
    tokens: list[Token]
    cjk: bool
    left_out: tuple[str, ...] = ()  # each ``NOT …`` with nothing before it to exclude from
    operators: tuple[str, ...] = ()  # a query of operators alone (``OR``): they were all it held
    cut: tuple[int, str] | None = None  # a query over MAX_QUERY_CHARS: its length, and what was left out
    near: bool = False  # a NEAR was read as the words it groups
    near_word: bool = False  # a ``near(`` not in capitals: the word near was searched (FTS5: a syntax error)
    columns: tuple[str, ...] = ()  # ``name:`` forms FTS5 reads as column filters, here read as words

    @property
    def note(self) -> str | None:
        """Why part of the text was not searched, in words for the user (None when all of it was)."""
        near = (
            "NEAR is not searched as such: its words were searched anywhere in a message, not only near each other."
            if self.near and self.tokens
            else None
        )
        lower = (
            "'near(' in lower case is no operator: 'near' was read as a word too (FTS5's NEAR is in capitals)."
            if self.near_word and self.tokens
            else None
        )
        notes = [self._cut_note(), self._operator_note(), near, lower, self._column_note()]
        return " ".join(filter(None, notes)) or None

    def _column_note(self) -> str | None:
        """``content:`` and field names (``role:``) typed as FTS5 column filters: each name was a word."""
        if not self.tokens:
            return None
        notes = []
        text = [name for name in self.columns if name.lower() == TEXT_COLUMN]
        if text:
            notes.append(
                f"'{text[0]}:' is no column filter here: '{text[0]}' was read as a word too (a message's text "
                "is the one column searched); leave it out."
            )
        fields = [name for name in self.columns if name.lower() != TEXT_COLUMN]
        if fields:
            named = _listed([f"'{name}:'" for name in fields])
            words = _listed([f"'{name}'" for name in fields])
            verb = (
                ("is no filter", "was read as a word") if len(fields) == 1 else ("are no filters", "were read as words")
            )
            role = (
                " To search one role, write role:user apart from other text (the CLI's --role user)."
                if any(n.lower() == "role" for n in fields)
                else ""
            )
            notes.append(f"{named} {verb[0]} here: {words} {verb[1]} too.{role}")
        return " ".join(notes) or None

    def _cut_note(self) -> str | None:
        if self.cut is None:
            return None
        length, rest = self.cut
        shown = rest
        if len(rest) > 40:  # its first and last words (the last is the one most likely missed)
            head, tail = rest[:19].rsplit(" ", 1)[0] or rest[:18], rest[-19:].split(" ", 1)[-1] or rest[-18:]
            shown = f"{head[:18]} … {tail[-18:]}"
        return (
            f"Only the first {MAX_QUERY_CHARS:,} characters of a search are searched; this one has {length:,}, "
            f"so its end was left out: '{shown}'. Shorten it to search all of it."
        )

    def _operator_note(self) -> str | None:
        if self.operators:
            words = list(dict.fromkeys(self.operators))
            shown = _listed(words)
            what = "is an operator" if len(words) == 1 else "are operators"
            how = "AND, OR and NOT join words" + (", NEAR groups them" if NEAR in words else "")
            return (
                f"Nothing was searched: {shown} in capitals {what} ({how}). To find "
                f"a word itself, type it in lower case or in quotes ('{words[0].lower()}', '\"{words[0]}\"')."
            )
        if not self.left_out:
            return None
        parts = _listed([f"'{part}'" for part in self.left_out])
        return (
            f"Left out {parts}: NOT only excludes from what the words before it find, "
            "as in 'release NOT deploy'; a search cannot list everything without a word."
        )

    @property
    def empty(self) -> bool:
        return not self.terms

    @property
    def substrings(self) -> bool:
        """Whether the terms are searched as substrings, not words: CJK, or a symbol no word index holds."""
        return self.cjk or any(holds_symbol(term) for term in self.terms)

    @property
    def terms(self) -> list[str]:
        """Every word and phrase of the query (operators dropped)."""
        return [t.text for t in self.tokens if not t.operator]

    def clauses(self) -> list[Clause]:
        """The query as FTS5 reads its operators, so CJK terms combine as English words do.

        OR binds loosest, then AND, then NOT; terms side by side bind tightest, so
        ``a NOT b c`` excludes only what has both b and c. Without parentheses that is
        always a list of alternatives, each required terms minus excluded groups.
        """
        found: list[Clause] = []
        need: list[str] = []
        unless: list[list[str]] = []
        group = need  # where the next term goes
        for token in self.tokens:
            if token.text == "OR" and token.operator:
                found.append(Clause(tuple(need), tuple(map(tuple, unless))))
                need, unless = [], []
                group = need
            elif token.text == "NOT" and token.operator:
                group = []
                unless.append(group)
            elif token.operator:  # AND
                group = need
            else:
                group.append(fold_width(token.text).lower())
        return [*found, Clause(tuple(need), tuple(map(tuple, unless)))]

    def positive(self) -> list[Token]:
        """The terms searched for: those a NOT excludes are left out (they are never marked)."""
        return [t for t, out in zip(self.tokens, negated(self.tokens), strict=True) if not (t.operator or out)]

    def fts(self) -> str:
        """The query for FTS5 (``fts_expression``)."""
        return fts_expression(self.tokens)

    def literal_fts(self) -> str:
        """Every term quoted, operators kept: the fallback when the first form is refused."""
        return " ".join(t.text if t.operator else '"' + t.text.replace('"', '""') + '"' for t in self.tokens)


def parse(query: str, *, prefix: bool = False, min_prefix: int = MIN_PREFIX) -> ParsedQuery:
    """Tokens of ``query``; a lone surrogate (which SQLite cannot take) becomes U+FFFD and matches nothing."""
    text = storable(query)
    capped = _capped(text)
    tokens, left_out, near = _read(capped, prefix=prefix, min_prefix=min_prefix)
    near_word, columns = _filters(capped)
    cjk = any(contains_cjk(t.text) for t in tokens if not t.operator)
    rest = text[len(capped) :].split()  # (spaces alone past the cap leave nothing out)
    cut = (len(text), " ".join(rest)) if rest else None
    if tokens or left_out:
        return ParsedQuery(tokens, cjk, tuple(left_out), cut=cut, near=near, near_word=near_word, columns=columns)
    operators = tuple(w for w in _SYNTAX.sub(" ", capped).split() if w in (*OPERATORS, NEAR))
    return ParsedQuery(tokens, cjk, operators=operators, cut=cut, near=near)


def bigrams(text: str) -> list[str]:
    """Overlapping character pairs of every CJK run of two or more characters."""
    grams: list[str] = []
    for run in CJK_RUN.findall(text):
        grams.extend(run[i : i + 2] for i in range(len(run) - 1))
    return grams


def bigram_match(terms: list[str]) -> str:
    """FTS5 expression over the bigram index: each CJK run as a phrase of its pairs, all required.

    A single character is the prefix of the pairs it starts, or the run end it is (cjk.grams).
    """
    phrases = []
    for term in terms:
        for run in CJK_RUN.findall(term):
            if len(run) >= 2:
                phrases.append('"' + " ".join(run[i : i + 2] for i in range(len(run) - 1)) + '"')
            else:
                phrases.append(f'"{run}"*')
    return " AND ".join(dict.fromkeys(phrases))


def searchable_calls(raw: str | None) -> str:
    """Tool-call JSON as text to search: ``\\uXXXX`` escapes decoded, also inside the arguments.

    Hermes stores ``tool_calls`` with ``json.dumps`` defaults, so CJK in arguments reads
    ``\\u6570\\u636e``; arguments dumped with defaults too are escaped twice.
    """
    if not raw or "\\u" not in raw:
        return raw or ""
    try:
        return json.dumps(_unescaped(json.loads(raw)), ensure_ascii=False)
    except (ValueError, RecursionError):
        return raw


def readable_calls(raw: str | None) -> str:
    """Tool calls as a person reads them in a search result: ``memory: action=add content=Likes tea``.
    Stored, the arguments are JSON inside JSON, so a quote in them reads ``\\\"`` twice escaped."""
    calls = []
    for _, _, name, arguments in decoded_calls(raw):
        if isinstance(arguments, dict):
            shown = " ".join(
                f"{key}={value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}"
                for key, value in arguments.items()
            )
        else:
            shown = "" if arguments is None else json.dumps(arguments, ensure_ascii=False)
        calls.append(f"{name or '?'}: {shown}".rstrip(": "))
    return "; ".join(calls) if calls else searchable_calls(raw)


def _unescaped(value):
    if isinstance(value, str):
        if "\\u" in value and value.lstrip()[:1] in ("{", "["):
            try:
                return json.dumps(_unescaped(json.loads(value)), ensure_ascii=False)
            except (ValueError, RecursionError):
                return value
        return value
    if isinstance(value, list):
        return [_unescaped(v) for v in value]
    if isinstance(value, dict):
        return {k: _unescaped(v) for k, v in value.items()}
    return value


def searchable_text(content: str | None, tool_name: str | None, tool_calls: str | None) -> str:
    """A message's indexed text (content, tool name, decoded tool-call JSON), as the CJK path reads it."""
    return f"{content or ''} {tool_name or ''} {searchable_calls(tool_calls)}"


def escaped_forms(term: str) -> list[str]:
    """How ``term`` reads inside tool-call JSON stored with ``json.dumps`` defaults (once or twice escaped)."""
    if term.isascii():
        return []
    once = json.dumps(term)[1:-1]
    return [once, json.dumps(once)[1:-1]]


def like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _listed(words: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``: words as a sentence lists them."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"
