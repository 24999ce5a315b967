"""The graded decision: clean, suspicious (with reasons) or dangerous (with reasons).

Layers, in order: hidden characters judged by grapheme; homoglyph-mixed words; the
intent and command rules on every normalised view; the same rules on whatever is
hidden in an encoding (base64, hex, escapes, tag characters) or in rot13. Anything
found inside an encoding counts as dangerous, since hiding it is itself the tell. Two
suspicious findings from different families add up to dangerous.

Callers decide what a level means for them (``policy``): dangerous is refused on every
path; suspicious is staged for approval when the agent writes it and saved with a
warning when the user does.
"""

from __future__ import annotations

import functools
import itertools
import threading
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypeVar

import regex

from ..counts import counted
from ..invisible import effect, hidden_characters
from ..textsafety import flat_line
from .decode import hidden_payloads, rot13
from .normalize import Views
from .prefilter import AS_I, ROT13, ROT13_AS_I, SAME, Channels, GateIndex
from .rules import ALL_RULES, DANGEROUS, ENGLISH_VIEWS, SUSPICIOUS, Rule

ADVICE = (
    "Rewrite it as a plain fact about the user or the environment, with no instructions addressed to the "
    "assistant, no hidden characters and no commands that send data out or persist; or leave it out."
)
CLEAN = "clean"
LEVELS = (CLEAN, SUSPICIOUS, DANGEROUS)
MAX_SCAN_CHARS = 65_536
_SMALL_TEXT = 4096
_RULE_TIMEOUT = 0.5  # seconds per rule and view; input that hits the limit is refused, never a hang
_WORD = regex.compile(r"\p{L}[\p{L}\p{M}]*")
_LATIN = regex.compile(r"\p{Script=Latin}")
_LOOKALIKE_SCRIPT = regex.compile(r"[\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Armenian}\p{Script=Cherokee}]")


@dataclass(frozen=True)
class Finding:
    id: str
    severity: str
    reason: str
    excerpt: str = ""

    def text(self) -> str:
        shown = flat_line(self.excerpt, 60)  # (a cut one ends with …)
        return f"{self.reason} ({self.id}" + (f": “{shown}”)" if shown else ")")


@dataclass(frozen=True)
class Verdict:
    level: str
    findings: tuple[Finding, ...] = field(default_factory=tuple)

    @property
    def dangerous(self) -> bool:
        return self.level == DANGEROUS

    @property
    def suspicious(self) -> bool:
        return self.level == SUSPICIOUS

    @property
    def ids(self) -> list[str]:
        return [f.id for f in self.findings]

    @property
    def reasons(self) -> list[str]:
        """One line per finding, worst first: what it looks like, the rule id and the words."""
        order = sorted(self.findings, key=lambda f: f.severity != DANGEROUS)
        return [f.text() for f in order]

    @property
    def worst(self) -> Finding:
        """The finding a refusal names first: the first dangerous one, else the first."""
        return next((f for f in self.findings if f.severity == DANGEROUS), self.findings[0])


# The usual abbreviations of the C0 controls and DEL, which have no character name in Unicode's data.
_C0 = (
    "NUL SOH STX ETX EOT ENQ ACK BEL BS HT LF VT FF CR SO SI DLE DC1 DC2 DC3 DC4 NAK SYN ETB CAN EM SUB ESC FS GS RS US"
).split()


def _control_name(ch: str) -> str:
    code = ord(ch)
    return _C0[code] if code < 0x20 else "DEL" if code == 0x7F else "C1 control" if code <= 0x9F else "unnamed"


def _char_findings(text: str) -> list[Finding]:
    codes = hidden_characters(text)
    tags = [c for c in codes if "U+E0020" <= c <= "U+E007F" and len(c) == 7]
    findings = (
        [
            Finding(
                "invisible_unicode_tag_block",
                DANGEROUS,
                f"holds {counted(len(tags), 'invisible Unicode tag character')}, "
                "which can smuggle a hidden instruction",
            )
        ]
        if tags
        else []
    )
    for code in codes:
        if code in tags:
            continue
        ch = chr(int(code[2:], 16))
        kind, does = effect(ch)
        name = unicodedata.name(ch, "") or _control_name(ch)
        findings.append(Finding(f"invisible_unicode_{code}", DANGEROUS, f"holds the {kind} {code} ({name}), {does}"))
    return findings


def _mixed_script(text: str) -> list[Finding]:
    if text.isascii():  # no letter of another script at all
        return []
    for match in _WORD.finditer(text):
        word = match.group()
        if _LATIN.search(word) and _LOOKALIKE_SCRIPT.search(word):
            return [
                Finding(
                    "homoglyph_mix",
                    SUSPICIOUS,
                    "mixes Latin letters with look-alike letters of another script in one word",
                    word,
                )
            ]
    return []


@dataclass(frozen=True)
class _RuleSet:
    """Rules with their gates indexed per view: ``main`` for the pattern, ``il`` for its "l as i" twin."""

    rules: list[Rule]
    main: dict[str, GateIndex]
    il: dict[str, GateIndex]

    @classmethod
    def of(cls, rules: list[Rule]) -> _RuleSet:
        views = sorted({rule.view for rule in rules})
        return cls(
            rules,
            {v: GateIndex([r.gate if r.view == v else None for r in rules], as_written=v == "raw") for v in views},
            {
                v: GateIndex([r.gate_il if r.view == v and r.il_source is not None else None for r in rules])
                for v in views
                if any(r.view == v and r.il_source is not None for r in rules)
            },
        )


_T = TypeVar("_T")


def _once(make: Callable[[], _T]) -> Callable[[], _T]:
    """``make``'s result, made on the first call only, even when two threads scan first at once: a gate's
    lookup is keyed by its index's identity (``Slot``), so a second build's indexes answer no first's."""
    made = functools.cache(make)
    lock = threading.Lock()

    def first() -> _T:
        with lock:
            return made()

    return first


@_once
def _rule_sets() -> tuple[_RuleSet, _RuleSet]:
    """Every rule, and those a rot13 decoding is read with (``ENGLISH_VIEWS``), their gates indexed: built
    on the first scan, as are ``_Lookups``' automatons (together about 30 ms of CPU), since most processes
    (a CLI listing, a TUI that only browses) never scan."""
    return _RuleSet.of(ALL_RULES), _RuleSet.of([r for r in ALL_RULES if r.view in ENGLISH_VIEWS])


def _unknown_to_python(text: str) -> bool:
    """Whether ``text`` holds a character this Python's Unicode tables do not know (``Cn``). The rules'
    ``regex`` has newer tables and may fold one into letters (U+1DF95 matches "ss"), which the gates,
    built with ``str.casefold``, cannot see."""
    return not text.isascii() and any(unicodedata.category(ch) == "Cn" for ch in set(text))


Slot = tuple[int, str]  # (a gate index's id, which text of its view: "main", "ones" for folded_l, "il")


def _slots(views: Views, rule_set: _RuleSet) -> list[tuple[GateIndex, str, str]]:
    """Every (gate index, slot, text) a scan of ``views`` looks its rules up in."""
    slots = [(index, "main", getattr(views, view)) for view, index in rule_set.main.items()]
    if views.folded_l != views.folded and "folded" in rule_set.main:  # else the "1 read as l" view adds nothing
        slots.append((rule_set.main["folded"], "ones", views.folded_l))
    slots += [(index, "il", getattr(views, view).replace("l", "i")) for view, index in rule_set.il.items()]
    return slots


def _allowed(views: Views, rule_set: _RuleSet) -> dict[Slot, set[int]]:
    """The rules each slot's gate lets through, looked up slot by slot."""
    unknown = _unknown_to_python(views.raw)  # then no gate can be trusted to rule a rule out
    return {
        (id(index), slot): index.every() if unknown else index.passing(text)
        for index, slot, text in _slots(views, rule_set)
    }


def _rule_findings(views: Views, rule_set: _RuleSet, allowed: dict[Slot, set[int]] | None = None) -> list[Finding]:
    """Each rule's first match on its view (or the view's variants), skipping rules whose gate fails;
    ``allowed``: what the gates let through, when already looked up (``_lookups``)."""
    allowed = _allowed(views, rule_set) if allowed is None else allowed
    ones = views.folded_l != views.folded
    found: dict[str, Finding] = {}
    for position in sorted(set().union(*allowed.values())):
        rule = rule_set.rules[position]
        if rule.id in found:
            continue
        text = getattr(views, rule.view)
        main = id(rule_set.main[rule.view])
        tries = [(False, (main, "main"), text)]  # (the "l read as i" pattern?, its slot, the text)
        if rule.view == "folded" and ones:
            tries.append((False, (main, "ones"), views.folded_l))
        if rule.il_source is not None:  # capital I and small l look alike: "lgnore" reads "ignore"
            tries.append((True, (id(rule_set.il[rule.view]), "il"), text.replace("l", "i")))
        try:
            match = next(
                (
                    m
                    for il, slot, t in tries
                    if position in allowed[slot] and (m := rule.compiled(il).search(t, timeout=_RULE_TIMEOUT))
                ),
                None,
            )
        except TimeoutError:
            found[rule.id] = Finding(
                "scan_timeout", DANGEROUS, "is too convoluted to check in time; split or simplify it"
            )
            continue
        if match:
            found[rule.id] = Finding(rule.id, rule.severity, rule.reason, match.group())
    return list(found.values())


_SHARED = ("plain", "skeleton", "raw")  # views often one text (most ASCII texts): looked up in one pass


class _Lookups:
    """Every gate of a scan's two rule sets looked up with one automaton pass per distinct view text.

    The "l read as i" slots and, when the rot13 views are the views translated (``Views.rot13_is_translation``),
    every slot of the rot13 scan read their literals' spellings in the view's own text (``Channels``),
    and ``plain``, ``skeleton`` and ``raw`` lowercased (when ASCII) share one pass where they are one text
    (most ASCII texts needing no spacing): a fact's 11 passes become 3 to 5, and a
    text no rot13 gate lets through never has its rot13 views made. What each gate lets through is
    what ``_allowed`` finds slot by slot (tests hold the two equal)."""

    def __init__(self) -> None:
        every_rule, read_in_rot13 = _rule_sets()
        self.raw = every_rule.main["raw"]
        # per view: (rot13 scan?, index, slot, how its slot's text is made from the view's)
        self.channels: dict[str, list[tuple[bool, GateIndex, str, str]]] = {"raw": [(False, self.raw, "main", SAME)]}
        for view in ("plain", "skeleton", "folded", "compact", "folded_l"):
            main_view = "folded" if view == "folded_l" else view
            slot = "ones" if view == "folded_l" else "main"
            self.channels[view] = []
            for english, rule_set, how, how_il in (
                (False, every_rule, SAME, AS_I),
                (True, read_in_rot13, ROT13, ROT13_AS_I),
            ):
                if main_view in rule_set.main:
                    self.channels[view].append((english, rule_set.main[main_view], slot, how))
                if slot == "main" and main_view in rule_set.il:
                    self.channels[view].append((english, rule_set.il[main_view], "il", how_il))
        # one automaton per view, and one per set of the views that often are one text (made here, not at a
        # scan: a text meeting a set first would pay for its automaton)
        sets = [(v,) for v in self.channels] + [
            tuple(v for v in _SHARED if v in chosen) for chosen in itertools.combinations(_SHARED, 2)
        ]
        self.passes: dict[tuple[str, ...], tuple[Channels, list[tuple[bool, GateIndex, str]]]] = {}
        for views in [*sets, _SHARED]:
            every = [channel for view in views for channel in self.channels[view]]
            self.passes[views] = (
                Channels([(index, how) for _, index, _, how in every]),
                [(english, index, slot) for english, index, slot, _ in every],
            )

    def allowed(self, views: Views, rot13_too: bool) -> tuple[dict[Slot, set[int]], dict[Slot, set[int]] | None]:
        """(what ``_allowed(views, every_rule)`` gives, and when ``rot13_too`` what ``_allowed(views.rot13(),
        read_in_rot13)`` gives, else None: the two of ``_rule_sets``)."""
        mine: dict[Slot, set[int]] = {}
        rot: dict[Slot, set[int]] | None = {} if rot13_too else None
        texts: dict[str, list[str]] = {}  # a text, and the views of ``_SHARED`` that are it
        for view in ("plain", "skeleton"):
            texts.setdefault(getattr(views, view), []).append(view)
        if views.raw.isascii():  # (the raw view's gates read ASCII text lowercased, as ``passing`` does)
            texts.setdefault(views.raw.lower(), []).append("raw")
        else:
            mine[(id(self.raw), "main")] = self.raw.passing(views.raw)
        passes = [(text, tuple(names)) for text, names in texts.items()]
        passes += [(views.folded, ("folded",)), (views.compact, ("compact",))]
        if views.folded_l != views.folded:
            passes.append((views.folded_l, ("folded_l",)))
        for text, names in passes:
            channels, slots = self.passes[names]
            for (english, index, slot), literals in zip(slots, channels.found(text), strict=True):
                into = rot if english else mine
                if into is not None:
                    into[(id(index), slot)] = index.passing_found(
                        literals, functools.partial(_MADE[(english, slot)], text)
                    )
        return mine, rot


def _as_i(text: str) -> str:
    return text.replace("l", "i")


# How a slot's text is made from its view's text: (in the rot13 scan?, slot) -> function.
_MADE: dict[tuple[bool, str], Callable[[str], str]] = {
    (False, "main"): str,
    (False, "ones"): str,
    (False, "il"): _as_i,
    (True, "main"): rot13,
    (True, "ones"): rot13,
    (True, "il"): lambda text: _as_i(rot13(text)),
}
_one_pass = _once(_Lookups)


def _lookups(views: Views) -> tuple[dict[Slot, set[int]] | None, dict[Slot, set[int]] | None]:
    """What the gates of both rule sets let through for ``views`` (None: look them up slot by slot)."""
    if _unknown_to_python(views.raw):
        return None, None
    return _one_pass().allowed(views, views.rot13_is_translation())


_FAMILIES = {rule.id: rule.family for rule in ALL_RULES}


def assess(text: str, _depth: int = 0) -> Verdict:
    """The verdict for ``text`` (only its first ``MAX_SCAN_CHARS`` characters are read).

    Cached: a prompt is rebuilt from mostly the same entries, skill lines and files each
    session (many short texts, a few large ones).
    """
    return (_cached if len(text) <= _SMALL_TEXT else _cached_large)(text, _depth)


def _assess(text: str, _depth: int) -> Verdict:
    head = text[:MAX_SCAN_CHARS]
    findings = _char_findings(head) + _mixed_script(head)
    views = Views.of(head)
    allowed, allowed_rot13 = _lookups(views)
    every_rule, read_in_rot13 = _rule_sets()
    findings += _rule_findings(views, every_rule, allowed)
    if _depth < 2:
        for encoding, decoded in hidden_payloads(head):
            for inner in assess(decoded, _depth + 1).findings:
                findings.append(
                    Finding(f"{encoding}:{inner.id}", DANGEROUS, f"{inner.reason}, hidden in {encoding}", inner.excerpt)
                )
    if _depth == 0 and (allowed_rot13 is None or any(allowed_rot13.values())):
        direct = {f.id for f in findings}
        for inner in _rule_findings(views.rot13(), read_in_rot13, allowed_rot13):
            if inner.id not in direct:
                findings.append(
                    Finding(f"rot13:{inner.id}", DANGEROUS, f"{inner.reason}, hidden in rot13", inner.excerpt)
                )
    findings = list({f.id: f for f in findings}.values())
    families = {_FAMILIES.get(f.id, f.id) for f in findings if f.severity == SUSPICIOUS}
    if len(families) >= 2 and not any(f.severity == DANGEROUS for f in findings):
        findings.append(
            Finding("combined_signals", DANGEROUS, f"combines several suspicious signs ({', '.join(sorted(families))})")
        )
    if any(f.severity == DANGEROUS for f in findings):
        return Verdict(DANGEROUS, tuple(findings))
    return Verdict(SUSPICIOUS if findings else CLEAN, tuple(findings))


_cached = lru_cache(maxsize=4096)(_assess)
_cached_large = lru_cache(maxsize=16)(_assess)  # SOUL.md, AGENTS.md: few, but costly to scan
