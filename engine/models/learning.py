"""What the offline model considers worth keeping, read from the user's own words.

Shared by its memory flush and its background review: who the user is (name, role,
team, project), how they want the agent to work (preferences and corrections), stable
facts about their environment and habits. Each finding carries the reason it is
worth keeping, for the review's summary line. Task progress, one-off to-dos, questions
and anything that looks like a secret are never kept; neither is what memory
already holds.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NamedTuple

from ..providers.fence import sanitize_context
from .phrasing import declarative, overlap, sentence

MAX_FINDINGS = 4
_NAME_ENTRY = re.compile(r"^(?:name\s*:|(?:the )?user's name is\b|(?:the )?user is called\b)", re.I)
# What an entry says of the user that has one value at a time (a name, a team, where they work), and why a
# finding with the same subject and another value replaces it, however many words the two share.
_SUBJECTS = [
    ("name", _NAME_ENTRY, "the user gave another name"),
    (
        "team",
        re.compile(r"^(?:the )?user (?:is|works) (?:on|in|part of|with) (?=[^.]*\bteam\b)", re.I),
        "the user named another team",
    ),
    (
        "works",
        re.compile(r"^(?:the )?user works (?P<how>on|at|for|in|with|as)\b", re.I),
        "the user said anew where they work",
    ),
]
# One-value things the user has, said "User's <kind> is <value>." (the words naming one kind, first): another
# value replaces the one memory gives ("User's editor is emacs." for "User's editor is vim.").
_ONE_VALUE = {
    "editor": "editor",
    "text editor": "editor",
    "shell": "shell",
    "os": "operating system",
    "operating system": "operating system",
    "timezone": "time zone",
    "time zone": "time zone",
    "language": "language",
    "preferred language": "language",
    "native language": "language",
    "role": "role",
    "job title": "role",
    "location": "location",
    "city": "location",
    "pronouns": "pronouns",
    "browser": "browser",
    "keyboard layout": "keyboard layout",
}
_KINDS = "|".join(sorted(map(re.escape, _ONE_VALUE), key=len, reverse=True))
_HAS = re.compile(rf"^(?:the )?user's (?P<kind>{_KINDS}) (?:is|are)\b", re.I)
# Tools that are one of those kinds, so "User uses emacs now." says which editor: without such a name
# ("User uses Postgres.") a use is not one value of anything, and another is added beside it.
_TOOLS = {
    "editor": "vim neovim nvim emacs vscode nano helix zed sublime intellij pycharm",
    "shell": "bash zsh fish nushell powershell tcsh ksh",
    "operating system": "linux macos windows ubuntu debian fedora arch nixos freebsd",
    "browser": "firefox chrome chromium safari brave edge",
}
_TOOL_KIND = {tool: kind for kind, tools in _TOOLS.items() for tool in tools.split()}
# The tool alone is the entry's value: "User uses vim for quick edits." names a second editor for something,
# not which one the user's is, and neither replaces nor is replaced by another.
_USES = re.compile(
    rf"^(?:the )?user (?:uses|switched to|moved to|is on|runs) (?P<tool>{'|'.join(_TOOL_KIND)})(?: now)?\.?$", re.I
)
# The words every entry of a kind begins with ("User prefers", "The team uses", "User usually"): no sign
# that two entries say the same thing.
_FRAME = re.compile(
    r"^(?:the team's|the team|user's|user)\s+(?:(?:usually|always|often|normally|never|tend to|wants the agent to)\s+)?"
    r"(?:\w+\s+)?",
    re.I,
)
_CLAUSE_SPLIT = re.compile(
    r"(?:[.!;\n]+\s*|,\s+(?=(?:and |but |so )?(?:i|i'm|we|we're|my|our|please|no)\b)|"
    r"\s+(?:and|but|so)\s+(?=(?:i|i'm|we|we're|my|our|please)\b))",
    re.I,
)
_TRANSIENT = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|right now|this (?:morning|afternoon|week|sprint)|"
    r"next week|at the moment|for now|currently|later|todo|to-do|need to|have to|got to|gotta|"
    r"remind me|picking up|working on|about to|going to|will be)\b",
    re.I,
)
_SECRET = re.compile(
    r"(?:password|passwd|passphrase|api[ _-]?key|secret|token|private key|credentials?|"
    r"\bsk-[A-Za-z0-9]{6,}|\bghp_[A-Za-z0-9]{6,}|\bAKIA[A-Z0-9]{8,})",
    re.I,
)
_NOT_NAMES = frozenset(
    "a an the on in at not so just sure fine back here there done good glad sorry afraid "
    "ready working going trying using looking".split()
)

# (pattern, how to word the entry, why it is worth keeping); patterns match a whole clause.
_RULES: list[tuple[re.Pattern[str], Callable[[re.Match[str]], tuple[str, str]], str]] = [
    (
        re.compile(r"^(?i:hi|hello|hey)?[, ]*(?i:i'm|i am|my name is|call me|this is)\s+(?P<x>[A-Z][\w'-]+)$"),
        lambda m: ("user", f"User's name is {m.group('x')}."),
        "the user gave their name",
    ),
    (
        re.compile(r"^(?:i'm|i am) (?:on|in|part of) (?P<x>(?:the |a )?[\w -]+? team)$", re.I),
        lambda m: ("user", sentence(f"User is on {m.group('x')}")),
        "the user named their team",
    ),
    (
        re.compile(r"^(?:i'm|i am) (?P<x>(?:an?|the) (?!bit\b|little\b|lot\b|fan\b)[\w -]+)$", re.I),
        lambda m: ("user", sentence(f"User is {m.group('x')}")),
        "the user stated their role",
    ),
    (
        re.compile(r"^i work (?P<x>(?:on|at|for|in|with|as) .+)$", re.I),
        lambda m: ("user", sentence(f"User works {m.group('x')}")),
        "the user said what they work on",
    ),
    (
        re.compile(
            r"^(?:no|nope|not like that|actually)[,.!]*\s+(?P<x>(?:please )?(?:use|do|make|write|keep|put|"
            r"always|never|don't|do not|stop)\b.+)$",
            re.I,
        ),
        lambda m: ("user", sentence(f"User wants the agent to {_imperative(m.group('x'))}")),
        "the user corrected how the agent works",
    ),
    (
        re.compile(
            r"^(?:(?:please |can you |could you )?(?:be )?(?:shorter|more concise|briefer|less verbose)|"
            r"(?:that's |that is |it's |way )?too long|tl;?dr)(?: please)?$",
            re.I,
        ),
        lambda m: ("user", "User prefers shorter answers."),
        "the user asked for shorter answers",
    ),
    (
        re.compile(r"^please (?P<x>(?:always|never) .+)$", re.I),
        lambda m: ("user", sentence(f"User wants the agent to {m.group('x')}")),
        "a standing instruction from the user",
    ),
    (
        re.compile(rf"^my (?P<kind>{_KINDS}) (?P<verb>is|are) (?P<x>.+)$", re.I),
        lambda m: ("user", sentence(f"User's {m.group('kind').lower()} {m.group('verb').lower()} {m.group('x')}")),
        "a one-value fact about the user",
    ),
    (
        re.compile(rf"^(?:i (?:use|switched to|moved to|am on)|i'm on) (?P<x>(?:{'|'.join(_TOOL_KIND)})\b.*)$", re.I),
        lambda m: ("user", sentence(f"User uses {m.group('x')}")),
        "a tool the user works with",
    ),
    (
        re.compile(r"^(?P<x>i (?:prefer|like|love|hate|dislike|want) .+)$", re.I),
        lambda m: declarative(m.group("x")),
        "a preference the user stated",
    ),
    (
        re.compile(r"^(?P<x>i (?:usually|always|often|normally|never|tend to) .+)$", re.I),
        lambda m: declarative(m.group("x")),
        "a habit the user described",
    ),
    (
        re.compile(
            r"^(?P<x>(?:we (?:use|deploy|host|run|release|ship|keep|store)|we're using|our [\w -]{1,30}? "
            r"(?:is|are|runs?|lives?|uses?)) .+)$",
            re.I,
        ),
        lambda m: declarative(m.group("x")),
        "a stable fact about the user's environment",
    ),
]


def _imperative(text: str) -> str:
    text = re.sub(r"^please\s+", "", text.strip(), flags=re.I)
    return re.sub(r"^(?:don't|do not)\b", "not", text, flags=re.I)


@dataclass(frozen=True)
class Finding:
    target: str  # user | memory
    entry: str
    why: str
    replaces: str | None = None  # the entry it corrects (the user gave another name, team, ...)

    @property
    def call(self) -> dict[str, str]:
        """The memory tool's arguments that keep it."""
        if self.replaces is not None:
            return {"action": "replace", "target": self.target, "old_text": self.replaces, "content": self.entry}
        return {"action": "add", "target": self.target, "content": self.entry}


class Subject(NamedTuple):
    kind: str  # "name", "team", "works on", "works at", ...
    value: str  # the rest of the entry
    why: str  # why another value replaces it


def subject(entry: str) -> Subject | None:
    """What single-valued thing ``entry`` says of the user (``_SUBJECTS``, ``_ONE_VALUE``, a tool of one of
    those kinds it uses); None for anything else."""
    for kind, pattern, why in _SUBJECTS:
        if match := pattern.match(entry):
            return Subject(f"{kind} {match.groupdict().get('how') or ''}".strip().lower(), entry[match.end() :], why)
    if match := _HAS.match(entry):
        kind = _ONE_VALUE[match["kind"].lower()]
        return Subject(kind, entry[match.end() :], f"the user gave another {kind}")
    if match := _USES.match(entry):
        kind = _TOOL_KIND[match["tool"].lower()]
        return Subject(kind, entry[match.start("tool") :], f"the user gave another {kind}")
    return None


def changed(entry: str, known: list[str]) -> str | None:
    """The entry of ``known`` that ``entry`` changes: it says the same single-valued thing of the user
    (``subject``) and not every word of ``entry``'s value is in it ("User's name is Tomas." changes
    "User's name is Maya.", not "Name: Tomas")."""
    said = subject(entry)
    same = next((k for k in known if said is not None and _same_kind(said, k)), None)
    return same if said is not None and same is not None and overlap(said.value, same) < 1 else None


def already_known(entry: str, known: list[str]) -> str | None:
    """The entry of ``known`` that says ``entry`` already, so neither a turn nor a review writes it: itself,
    or one giving the same single-valued thing (``subject``) the same value ("User's editor is vim." for
    "User uses vim.", which ``changed`` does not change); None when none does. (A review also skips a
    free-form fact most of whose words memory holds, ``_as_kept``; a turn the user asked for is not
    dropped on that guess: "the production server is at 10.0.0.9 behind the VPN" shares 3 of 5.)"""
    said = subject(entry)
    if said is None or changed(entry, known) is not None:
        return entry if entry in known else None
    return next((k for k in known if _same_kind(said, k) or overlap(said.value, k) >= 0.6), None)


def looks_secret(text: str) -> bool:
    """Whether ``text`` seems to hold a password, key or token (never written to memory)."""
    return bool(_SECRET.search(text))


def clauses(text: str) -> list[str]:
    """The statements in one user message, trimmed of greetings' punctuation."""
    parts = (re.sub(r"^(?:and|but|so)\s+", "", c.strip(" ,"), flags=re.I) for c in _CLAUSE_SPLIT.split(text) if c)
    return [part for part in parts if part]


def findings(messages: list[dict], known: list[str]) -> list[Finding]:
    """What the user said that is worth keeping and not yet in ``known`` (first ``MAX_FINDINGS``)."""
    found: list[Finding] = []
    for message in messages:
        if message.get("role") != "user":
            continue
        text = sanitize_context(str(message.get("content") or ""))
        if text.startswith("[System note:") or text.startswith("Review the conversation above"):
            continue
        for clause in clauses(text):
            if clause.endswith("?") or _TRANSIENT.search(clause) or looks_secret(clause):
                continue
            finding = _classify(clause)
            if finding is None or finding.entry.split()[-1].rstrip(".").lower() in _NOT_NAMES:
                continue
            kept = _as_kept(finding, known, found)
            if kept is not None:
                found.append(kept)
    return found[:MAX_FINDINGS]


def _as_kept(finding: Finding, known: list[str], found: list[Finding]) -> Finding | None:
    """``finding`` as a review keeps it: None when memory (or an earlier finding) says it already; a replace
    of the known entry it changes (``changed``: "User works on the search team." for "User works on the
    payments team (backend)."), since the words the two share are the subject's, no reason to skip it."""
    said, earlier = subject(finding.entry), [f.entry for f in found]
    if said is None:  # (its value's words: "User prefers tabs." is not known from "User prefers dark mode.")
        value = _FRAME.sub("", finding.entry)
        return None if any(overlap(value, k) >= 0.6 for k in known + earlier) else finding
    if any(_same_kind(said, entry) for entry in earlier):
        return None  # (one value of a subject per review: the first said)
    if already_known(finding.entry, known) is not None:
        return None  # the value memory gives (or a name said as "Lin is my name")
    was = changed(finding.entry, known)
    return finding if was is None else replace(finding, why=said.why, replaces=was)


def _same_kind(said: Subject, entry: str) -> bool:
    other = subject(entry)
    return other is not None and other.kind == said.kind


def _classify(clause: str) -> Finding | None:
    for pattern, word, why in _RULES:
        match = pattern.match(clause)
        if match:
            target, entry = word(match)
            return Finding(target, entry, why)
    return None
