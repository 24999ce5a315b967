"""Small language helpers for the rule-based offline model: keywords, overlap, facts.

Deterministic and dependency-free: turning "I prefer dark mode" into the declarative
memory entry "User prefers dark mode.", finding which known entry a phrase refers to,
and naming a skill after a request.
"""

from __future__ import annotations

import re
from collections.abc import Callable

STOPWORDS = frozenset(
    "a an and are as at be but by can could did do does for from had has have how i in into is it its me my of on "
    "or our please should so that the their them then there these this to up us was we were what when where which "
    "who why will with would you your about again also just some any all been being it's i'm we're let's".split()
)
_WORD_RE = re.compile(r"[\w][\w'-]*", re.UNICODE)
_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")

_ADVERB = r"(?:(usually|always|often|normally|never|sometimes|rarely|mostly|also|really)\s+)?"


def _verb(match: re.Match) -> str:
    adverb, verb = match.group(1), match.group(2)
    return f"{adverb.lower()} {third_person(verb)}" if adverb else third_person(verb)


# "I" in Chinese and Japanese, not "we" (我们, 私たち): a fact about the user, kept in its own words
_CJK_I = re.compile(r"^(?:我(?![们們])|私(?!たち|達)|僕(?!ら|たち)|わたし(?!たち))")
_FIRST_PERSON: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (re.compile(r"^(?:i am|i'm)\s+", re.I), "User is "),
    (re.compile(r"^my name is\s+", re.I), "User's name is "),
    (re.compile(r"^my\s+(.+?)\s+(is|are)\s+", re.I), lambda m: f"User's {m.group(1)} {m.group(2)} "),
    (re.compile(rf"^i\s+{_ADVERB}(\w+)\s+", re.I), lambda m: f"User {_verb(m)} "),
    (re.compile(r"^we are\s+|^we're\s+", re.I), "The team is "),
    (re.compile(rf"^we\s+{_ADVERB}(\w+)\s+", re.I), lambda m: f"The team {_verb(m)} "),
    (re.compile(r"^our\s+", re.I), "The team's "),
]


def keywords(text: str) -> list[str]:
    """Content words (lower case, stopwords dropped); each CJK character counts as a word."""
    words: list[str] = []
    for word in _WORD_RE.findall(text.lower()):
        if _CJK_RE.search(word):
            words.extend(ch for ch in word if _CJK_RE.match(ch))
        elif len(word) > 2 and word not in STOPWORDS:
            words.append(word.strip("'-"))
    return words


def search_terms(text: str, limit: int = 5) -> str:
    """A search query from ``text``: its content words, CJK runs kept whole (the archive splits them itself)."""
    words = [w.strip("'-") for w in _WORD_RE.findall(text.lower())]
    kept = [w for w in words if _CJK_RE.search(w) or (len(w) > 2 and w not in STOPWORDS)]
    return " ".join(dict.fromkeys(kept[:limit]))


def overlap(a: str, b: str) -> float:
    """Share of ``a``'s keywords found in ``b`` (0 when ``a`` has none)."""
    wanted = set(keywords(a))
    if not wanted:
        return 0.0
    have = set(keywords(b))
    hits = sum(1 for w in wanted if w in have or any(h.startswith(w[:5]) for h in have if len(w) > 4))
    return hits / len(wanted)


def best_match(phrase: str, candidates: list[str], minimum: float = 0.34) -> str | None:
    """The candidate that best covers ``phrase`` (ties: the first), if it covers enough."""
    scored = [(overlap(phrase, c), -i, c) for i, c in enumerate(candidates)]
    scored = [s for s in scored if s[0] >= minimum]
    return max(scored)[2] if scored else None


def third_person(verb: str) -> str:
    verb = verb.lower()
    if verb in ("have",):
        return "has"
    if verb.endswith(("s", "sh", "ch", "x", "o")):
        return verb + "es"
    if verb.endswith("y") and len(verb) > 2 and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def sentence(text: str) -> str:
    text = text.strip().rstrip(".!。！")
    if not text:
        return ""
    return text[:1].upper() + text[1:] + ("。" if _CJK_RE.match(text[-1]) else ".")


def declarative(fact: str) -> tuple[str, str]:
    """("user"|"memory", entry): a first-person statement becomes a fact about the user or team."""
    fact = re.sub(r"\s+", " ", fact.strip())
    for pattern, replacement in _FIRST_PERSON:
        match = pattern.match(fact)
        if match:
            head = replacement(match) if callable(replacement) else replacement
            rest = fact[match.end() :]
            target = "user" if head.startswith("User") else "memory"
            return target, sentence(head + rest)
    return "user" if _CJK_I.match(fact) else "memory", sentence(fact)


def slug(text: str, limit: int = 48) -> str:
    """A skill-style name from the words of ``text``: ``triage-bug-queue``."""
    words = [w for w in keywords(text) if w.isascii()]
    name = "-".join(words)[:limit].strip("-")
    return re.sub(r"[^a-z0-9-]", "", name) or "procedure"


def shorten(text: str, limit: int = 160) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
