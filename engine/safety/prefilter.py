"""Necessary literals of a rule: a cheap test that lets a clean text skip a regex search.

Every memory write is scanned against every rule on several views of its text, and the
regex searches were most of a write's CPU. Almost no text matches, and most rules can
only match where one of a few words appears (``ignore``, ``disregard`` ...), so each rule
gets a *gate*: a list of sets of literal strings such that any match of the rule contains
at least one string of every set. A view that fails the gate cannot match, so the search
is skipped. Searching is the same as before whenever the gate passes.

The gate is derived from the pattern's parse tree (the standard library's parser reads
the ``regex`` syntax our rules use; a pattern it cannot read simply gets no gate). The
derivation only ever weakens: a construct it does not understand contributes nothing,
so a gate can be useless but never wrong. Texts and literals are compared case-folded,
as the views are.

A literal the pattern puts right after or before a word boundary (``\\bact\\s+as``, ``mode\\b``)
carries it as ``BOUNDARY`` at that end, and is found only where the text agrees: ``act`` in
"fact" cannot be the ``act`` of ``\\bact``. Only ASCII letters, digits and ``_`` on both sides
rule an occurrence out, since those are word characters under every definition the ``regex``
module has; anything else counts as a possible boundary.
"""

from __future__ import annotations

import itertools
import re
import re._constants as sre  # the parser's node kinds
import re._parser as sre_parse
from collections.abc import Callable, Iterable

import ahocorasick

from .decode import rot13

MAX_EXACT = 64  # alternatives kept as exact strings before a node becomes "contains one of"
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)
_EMPTY_WIDTH = (sre.AT, sre.ASSERT, sre.ASSERT_NOT)

Gate = tuple[frozenset[str], ...]  # every set must have a member in the text
BOUNDARY = "\x00"  # in a literal: the pattern asserts a word boundary (``\b``) at that end
_TWICE = re.compile(BOUNDARY + "{2,}")  # a boundary asserted twice in a row is one boundary
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def core(literal: str) -> str:
    """The text a literal stands for (its boundary marks dropped; one between two characters says nothing
    a substring can hold, and dropping it only weakens the literal)."""
    return literal.replace(BOUNDARY, "")


def _ends(literal: str) -> tuple[str, bool, bool]:
    """(core, boundary required before it, after it), a boundary kept only beside an ASCII word character."""
    word = core(literal)
    return word, literal[0] == BOUNDARY and word[0] in _WORD, literal[-1] == BOUNDARY and word[-1] in _WORD


def _fits(text: str, start: int, end: int, before: bool, after: bool) -> bool:
    """Whether the literal at ``text[start:end]`` can sit where its pattern asserts boundaries: not when a
    word character on both sides of one rules it out."""
    return not (before and start and text[start - 1] in _WORD) and not (
        after and end < len(text) and text[end] in _WORD
    )


def occurs(literal: str, text: str) -> bool:
    """Whether ``literal`` is in ``text`` somewhere its boundary marks allow."""
    word, before, after = _ends(literal)
    if not (before or after):
        return word in text
    start = text.find(word)
    while start >= 0:
        if _fits(text, start, start + len(word), before, after):
            return True
        start = text.find(word, start + 1)
    return False


def gate(source: str) -> Gate:
    """The gate of a pattern (empty: always search)."""
    try:
        parsed = sre_parse.parse(source)
    except Exception:  # noqa: BLE001 - syntax only the regex module knows: no gate, the rule always runs
        return ()
    sets = {
        frozenset(_TWICE.sub(BOUNDARY, literal) for literal in choices)
        for choices in _requirements(*_sequence(list(parsed)))
    }
    return tuple(sorted(sets, key=_selectivity, reverse=True))


def admits(rule_gate: Gate, text: str) -> bool:
    """Whether ``text`` (case-folded, as the views are) holds a literal of every set of the gate: it may match."""
    return all(any(occurs(literal, text) for literal in choices) for choices in rule_gate)


class Literals:
    """Every literal of some gates, found in a text in one pass (an Aho-Corasick automaton).

    ``present(text)`` costs the text's length, not the number of rules; it runs on every
    view of every scanned text, so it is done in C (``pyahocorasick``) rather than by
    building the text's character pairs in Python, which was six times slower.
    """

    def __init__(self, gates: list[Gate]):
        literals = {literal for rule_gate in gates for choices in rule_gate for literal in choices}
        by_core: dict[str, list[tuple[str, bool, bool]]] = {}
        for literal in literals:
            word, before, after = _ends(literal)
            by_core.setdefault(word, []).append((literal, before, after))
        self.automaton = ahocorasick.Automaton()
        for word, variants in by_core.items():
            # (the unmarked ones first: found wherever the core is)
            bare = tuple(literal for literal, before, after in variants if not (before or after))
            marked = tuple((literal, before, after) for literal, before, after in variants if before or after)
            self.automaton.add_word(word, (len(word), bare, marked))
        self.automaton.make_automaton()

    def present(self, text: str) -> set[str]:
        """The literals in ``text`` (a marked one only where its boundaries may hold)."""
        if not len(self.automaton):
            return set()
        found: set[str] = set()
        for last, (size, bare, marked) in self.automaton.iter(text):
            found.update(bare)
            for literal, before, after in marked:
                if _fits(text, last + 1 - size, last + 1, before, after):
                    found.add(literal)
        return found


class GateIndex:
    """Which gates of a list a text passes, found from the literals it contains.

    ``None`` marks a rule that takes no part (another view's rule); ``()`` one that always
    runs. Only the rules' first (most selective) sets are looked up in the text; a clean
    text usually contains none of them, so it costs a few set operations instead of one
    test per rule, and the other sets are tested only for the few rules that remain.
    ``as_written``: the texts are not case-folded (the raw view). ASCII text is lowercased
    for the lookup (ASCII letters match only their own two cases); any other text passes every
    gate, since the rules' case-insensitive matching pairs some characters ``str.casefold``
    does not (``İ`` matches ``i`` but folds to ``i̇``).
    """

    def __init__(self, gates: list[Gate | None], as_written: bool = False):
        self.gates = gates
        self.as_written = as_written
        self.always = {i for i, rule_gate in enumerate(gates) if rule_gate == ()}
        self.by_literal: dict[str, set[int]] = {}
        for i, rule_gate in enumerate(gates):
            for literal in rule_gate[0] if rule_gate else ():
                self.by_literal.setdefault(literal, set()).add(i)
        self.first_literals = Literals([(frozenset(self.by_literal),)])

    def every(self) -> set[int]:
        """Every rule taking part, its gate or not."""
        return {i for i, rule_gate in enumerate(self.gates) if rule_gate is not None}

    def passing(self, text: str) -> set[int]:
        if not self.by_literal:
            return set(self.always)
        if self.as_written:
            if not text.isascii():
                return self.every()
            text = text.lower()
        return self.passing_found(self.first_literals.present(text), text)

    def passing_found(self, literals: Iterable[str], text: str | Callable[[], str]) -> set[int]:
        """``passing(text)`` for a text whose first-set literals are ``literals`` (found elsewhere, as
        ``Channels`` finds them); ``text`` may be a function making it, called only when a rule remains."""
        found: set[int] = set()
        for literal in literals:
            found |= self.by_literal[literal]
        if not found:
            return set(self.always)
        whole = text() if callable(text) else text
        return self.always | {i for i in found if admits((self.gates[i] or ())[1:], whole)}


def _il_spellings(word: str) -> list[str]:
    """Every string that reads ``word`` once each "l" in it is read as "i" (none when ``word`` holds an "l")."""
    if "l" in word:
        return []
    return ["".join(letters) for letters in itertools.product(*(("i", "l") if ch == "i" else (ch,) for ch in word))]


# How a channel's text is made from the text the automaton reads, and where in that text its literals show.
SAME, AS_I, ROT13, ROT13_AS_I = "same", "l as i", "rot13", "rot13, l as i"
_SPELLINGS: dict[str, Callable[[str], list[str]]] = {
    SAME: lambda word: [word],
    AS_I: _il_spellings,
    ROT13: lambda word: [rot13(word)],
    ROT13_AS_I: lambda word: [rot13(spelling) for spelling in _il_spellings(word)],
}


class Channels:
    """Several gate indexes looked up in one pass over one text: each through a *channel*, a way its own
    text is made from that one (the same text; "l" read as "i"; rot13; rot13 with "l" read as "i").

    A channel's literal is where the made text holds it exactly where the read text holds one of its
    spellings: each letter is changed in place (the made text is as long), so the automaton holds every
    spelling of every channel's literals and one pass finds them all. A word character stays one there
    ("l" and "i" are both letters, rot13 swaps ASCII letters), so a boundary mark is judged on the read
    text alike. ``found(text)[n]`` is what ``Literals.present`` gives for channel ``n``'s made text (for
    an index that reads text as written, ``text`` is that text lowercased and ASCII, as ``passing`` reads it).
    """

    def __init__(self, channels: list[tuple[GateIndex, str]]):
        self.size = len(channels)
        by_spelling: dict[str, list[tuple[int, str, int, bool, bool]]] = {}
        for number, (index, how) in enumerate(channels):
            for literal in index.by_literal:
                word, before, after = _ends(literal)
                for spelling in _SPELLINGS[how](word):
                    by_spelling.setdefault(spelling, []).append((number, literal, len(word), before, after))
        self.automaton = ahocorasick.Automaton()
        for spelling, entries in by_spelling.items():
            self.automaton.add_word(spelling, tuple(entries))
        self.automaton.make_automaton()

    def found(self, text: str) -> list[set[str]]:
        found: list[set[str]] = [set() for _ in range(self.size)]
        if not len(self.automaton):
            return found
        for last, entries in self.automaton.iter(text):
            for number, literal, size, before, after in entries:
                if not (before or after) or _fits(text, last + 1 - size, last + 1, before, after):
                    found[number].add(literal)
        return found


def _is_boundary(item) -> bool:
    return item[0] is sre.AT and item[1] is sre.AT_BOUNDARY


_GROUPS = (sre.BRANCH, sre.SUBPATTERN, sre.ATOMIC_GROUP)


def _boundaries_inside(items: list) -> list:
    """``items`` with a word boundary beside a group or a branch also put inside each of its alternatives
    (``\\b(?:a|b)`` reads as ``\\b(?:\\ba|\\bb)``, the same pattern), so that a literal the group starts
    or ends with carries it: the parser factors a ``\\b`` that every alternative starts with out of them."""
    out = None
    for i, (op, arg) in enumerate(items):
        if op not in _GROUPS:
            continue
        before = [(sre.AT, sre.AT_BOUNDARY)] if i and _is_boundary(items[i - 1]) else []
        after = [(sre.AT, sre.AT_BOUNDARY)] if i + 1 < len(items) and _is_boundary(items[i + 1]) else []
        if not (before or after):
            continue
        if op is sre.BRANCH:
            arg = (arg[0], [[*before, *alt, *after] for alt in arg[1]])
        elif op is sre.SUBPATTERN:
            arg = (*arg[:-1], [*before, *arg[-1], *after])
        else:
            arg = [*before, *arg, *after]
        out = list(items) if out is None else out
        out[i] = (op, arg)
    return items if out is None else out


def _sequence(items: list) -> tuple[set[str] | None, list[frozenset[str]]]:
    """(exact strings the sequence matches, or None; sets it requires)."""
    items = _boundaries_inside(items)
    exact: set[str] | None = {""}  # the strings the items since the last break can spell
    whole = True  # no break yet: ``exact`` spells the whole sequence
    required: list[frozenset[str]] = []
    for op, arg in items:
        item_exact, item_required = _node(op, arg)
        if exact is not None and item_exact is not None and len(exact) * len(item_exact) <= MAX_EXACT:
            exact = {a + b for a in exact for b in item_exact}
            continue
        whole = False
        if exact is not None and "" not in exact:
            required.append(frozenset(exact))
        exact = item_exact
        required += item_required
    if whole:
        return exact, required
    if exact is not None and "" not in exact:
        required.append(frozenset(exact))
    return None, required


def _node(op, arg) -> tuple[set[str] | None, list[frozenset[str]]]:
    if op is sre.AT and arg is sre.AT_BOUNDARY:
        return {BOUNDARY}, []
    if op is sre.LITERAL:
        return {chr(arg).casefold()}, []
    if op is sre.IN:
        return _char_class(arg), []
    if op in _EMPTY_WIDTH:
        return {""}, []
    if op is sre.SUBPATTERN:
        return _sequence(list(arg[-1]))
    if op is sre.ATOMIC_GROUP:
        return _sequence(list(arg))
    if op is sre.BRANCH:
        return _branch([_sequence(list(alt)) for alt in arg[1]])
    if op in _REPEATS:
        low, high, body = arg
        if low == 0:
            return None, []
        body_exact, body_required = _sequence(list(body))
        if low == high == 1:
            return body_exact, body_required
        return None, _best(body_exact, body_required)
    return None, []  # any character, categories, back references: nothing known


def _char_class(members) -> set[str] | None:
    chars = set()
    for op, arg in members:
        if op is sre.LITERAL:
            chars.add(chr(arg).casefold())
        elif op is sre.RANGE and arg[1] - arg[0] < 8:
            chars.update(chr(c).casefold() for c in range(arg[0], arg[1] + 1))
        else:
            return None  # negation, categories, wide ranges
    return chars or None


def _branch(alternatives) -> tuple[set[str] | None, list[frozenset[str]]]:
    exacts = [exact for exact, _ in alternatives]
    if all(e is not None for e in exacts) and sum(map(len, exacts)) <= MAX_EXACT:
        return set().union(*exacts), []
    union: set[str] = set()
    for exact, required in alternatives:
        best = _best(exact, required)
        if not best:
            return None, []  # one alternative requires nothing
        union |= best[0]
    return None, [frozenset(union)]


def _requirements(exact: set[str] | None, required: list[frozenset[str]]) -> list[frozenset[str]]:
    """Every set a node requires that rules something out (a set holding "" or a bare boundary is met by any
    text)."""
    sets = [*required, *([frozenset(exact)] if exact is not None else [])]
    return [s for s in sets if s and all(literal.strip(BOUNDARY) for literal in s)]


def _selectivity(choices: frozenset[str]) -> tuple[int, int]:
    """Longer shortest literal first, then fewer literals: the set least texts pass."""
    return min(len(literal) - literal.count(BOUNDARY) for literal in choices), -len(choices)


def _best(exact: set[str] | None, required: list[frozenset[str]]) -> list[frozenset[str]]:
    """The single most selective set a node requires (as a list: empty when it requires none)."""
    sets = _requirements(exact, required)
    return [max(sets, key=_selectivity)] if sets else []
