"""The on-disk format of MEMORY.md / USER.md and the numbers shown about it.

Entries are joined by ``"\\n§\\n"`` with no header and no trailing newline. Parsing
splits on the *full* delimiter (so a bare ``§`` inside an entry survives), strips each
piece, drops empties and drops duplicates keeping the first. Sizes are Python ``len``
characters and count the delimiters, exactly as Hermes accounts them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache

from ..invisible import unseen_removed
from ..textsafety import (
    normalise_line_endings,  # noqa: F401  (re-exported: the format's rule)
    whole,
)
from .targets import BLOCK_TITLES, FILE_NAMES, TARGETS  # noqa: F401  (re-exported: the format's names)

ENTRY_DELIMITER = "\n§\n"
SEPARATOR = "═" * 46
BOM = "\ufeff"


def split_pieces(raw: str) -> list[str]:
    """Stripped, non-empty pieces of ``raw`` in file order (duplicates kept)."""
    return [piece for piece in map(str.strip, raw.split(ENTRY_DELIMITER)) if piece]


def parse_entries(raw: str) -> list[str]:
    """The entries of a file's text: split, stripped, empties and duplicates dropped."""
    if raw.startswith(BOM):
        raw = raw[1:]
    return list(dict.fromkeys(split_pieces(raw)))


def breaks_delimiter(entry: str) -> bool:
    """True when ``entry``, stored between two others, would not read back as one entry.

    That is the full delimiter inside it, or a bare ``§`` line at its start or end that
    joins with a neighbour's delimiter (``"fact\\n§"`` followed by another entry).
    """
    pieces = split_pieces(ENTRY_DELIMITER.join(("a", entry, "b")))
    return pieces != ["a", entry.strip(), "b"] or _looks_like_delimiter(entry)


def ends_with_delimiter_line(entry: str) -> bool:
    """Whether the last of an entry's lines (it has several) holds only '§': a delimiter an edit left
    behind, which the next entry appended after it takes (``breaks_delimiter`` refuses such a text
    as an entry; one at an entry's start reads back as written, so it is an entry's own)."""
    body = entry.strip()
    return body.endswith("\n§")


_LINE_BREAK = re.compile(r"\r\n?|\n")  # what Hermes's universal-newline reading takes for a line end


def reads_as_delimiter(line: str) -> bool:
    """Whether ``line`` reads as '§' to a person: with spaces around it, or characters no one sees
    (a variation selector, a zero-width space) beside it."""
    return unseen_removed(line).strip() == "§"


def _looks_like_delimiter(piece: str) -> bool:
    """A line that reads as '§' to a person but is not the exact delimiter (``"§\r"``, ``" § "``,
    ``"§\ufe0e"``), or any '§' line between carriage returns (Hermes reads ``"a\r§\rb"`` as two entries)."""
    if "§" not in piece:
        return False
    if "\r" in piece:
        return any(reads_as_delimiter(line) for line in _LINE_BREAK.split(piece))
    return any(line != "§" and reads_as_delimiter(line) for line in piece.split("\n"))


def has_crlf(raw: str) -> bool:
    """True when the file holds a carriage return: CRLF (Windows) or lone CR (classic Mac) line endings.

    Hermes reads text with Python's universal newlines, so it takes either for a line
    break; the entry format splits on ``"\n§\n"`` only, so we would see fewer entries.
    """
    return "\r" in raw


def line_endings(raw: str) -> str:
    """What kind of carriage-return line endings ``raw`` uses, for messages."""
    crlf, lone = raw.count("\r\n"), raw.count("\r") - raw.count("\r\n")
    if crlf and lone:
        return "mixed CR and CRLF"
    return "CRLF" if crlf else "CR"


def read_as_hermes(raw: str) -> list[str]:
    """The entries of a file's text with its line endings translated, as Hermes and a person read them
    (``parse_entries`` alone splits a CRLF file on LF delimiters only, so it sees one merged entry)."""
    return parse_entries(normalise_line_endings(raw)) if "\r" in raw else parse_entries(raw)


def appended_entries(raw: str, entries: Sequence[str], text: str) -> list[str] | None:
    """``read_as_hermes(text)`` for a ``text`` that is ``raw`` (read as ``entries``) with entries appended,
    without splitting ``raw`` again; None when ``text`` is not that, or when the entries appended would
    not read back one for one as written (blank, padded, repeated, with line endings to translate):
    the caller then reads ``text`` whole.

    ``text`` splits as ``raw`` does, then as what follows the delimiter after it: splitting finds the
    delimiters from left to right, so only one that began in ``raw`` and ended after it (``raw``
    ending with "\n§") could split the two otherwise, and a leading U+FEFF (dropped by reading)
    is left to the whole reading.
    """
    if not raw or raw.startswith(BOM) or raw.endswith("\n§") or "\r" in text or not text.startswith(raw):
        return None
    rest = text[len(raw) :]
    if not rest.startswith(ENTRY_DELIMITER):
        return None
    added = rest[len(ENTRY_DELIMITER) :].split(ENTRY_DELIMITER)
    known = set(entries) if len(added) > 1 else entries
    for i, entry in enumerate(added):
        if not entry or entry != entry.strip() or entry in known or entry in added[:i]:
            return None
    return [*entries, *added]


def serialize(entries: list[str]) -> str:
    return ENTRY_DELIMITER.join(entries)


def size_of(entries: list[str]) -> int:
    return len(serialize(entries))


def percent_of(chars: int, limit: int) -> int:
    """Floored percentage, capped at 100; 0 when there is no limit."""
    return min(100, int(chars / limit * 100)) if limit > 0 else 0


# A store past this many times its limit is not one Hermes wrote (its tool refuses every add over the
# limit): a paste or a hand edit. Listings then look up, scan and show only its first ``LISTED``
# entries, so that a 10 MB file costs what a small one does, and say so (``far_over_note``).
FAR_OVER = 10
LISTED = 200


def far_over(chars: int, limit: int) -> bool:
    """Whether a store of ``chars`` is far past its ``limit`` (``FAR_OVER`` times it)."""
    return limit > 0 and chars > FAR_OVER * limit


def listed(entries: Sequence[str], limit: int) -> int:
    """How many of a store's entries a listing shows: all, or the first ``LISTED`` of one far over its limit."""
    if len(entries) <= LISTED:
        return len(entries)
    chars = sum(map(len, entries)) + len(ENTRY_DELIMITER) * (len(entries) - 1)  # (``size_of``, not joined)
    return LISTED if far_over(chars, limit) else len(entries)


# An entry a refused write lists (beside its error, to choose what to merge or remove) shows this much of
# itself: a pasted 30,000-character entry would otherwise bury the refusal under hundreds of lines.
REFUSED_LINES = 3
REFUSED_CHARS = 240


def refused_listing(entry: str) -> str:
    """``entry`` as a refusal lists it: its first few lines, and where the whole is when it goes on."""
    kept = "\n".join(entry.split("\n")[:REFUSED_LINES])
    if len(kept) > REFUSED_CHARS:
        kept, _ = whole(kept[:REFUSED_CHARS], kept[REFUSED_CHARS:])
    if kept == entry:
        return entry
    return f"{kept}\n… ({len(entry) - len(kept):,} more characters: `workbench memory show --json` has it whole)"


def size_words(size: int) -> str:
    """A file size for people: ``10.7 MB``, ``45.2 KB``, ``812 bytes``."""
    if size >= 1_000_000:
        return f"{size / 1_000_000:.1f} MB"
    return f"{size / 1000:.1f} KB" if size >= 1000 else f"{size:,} bytes"


def far_over_title(target: str, size: int, limit: int) -> str:
    """The headline of a store far over its limit (``size``: its file's bytes), for both skins."""
    return (
        f"{FILE_NAMES[target]} is {size_words(size)}, far over its {limit:,}-char limit: Hermes puts all of it "
        "in every new session's prompt and refuses every add"
    )


def far_over_note(target: str, size: int, limit: int, count: int) -> str:
    """What a listing of a store far over its limit says: why, the repair, and what is listed."""
    return (
        f"{far_over_title(target, size, limit)}. `workbench memory repair --target {target}` (r on the Memory "
        f"screen) keeps the entries that fit. Only the first {min(count, LISTED):,} of its {count:,} entries are "
        "listed."
    )


@dataclass(frozen=True)
class Usage:
    chars: int
    limit: int

    @classmethod
    def of(cls, entries: list[str], limit: int) -> Usage:
        return cls(size_of(entries), limit)

    @property
    def percent(self) -> int:
        return percent_of(self.chars, self.limit)

    @property
    def text(self) -> str:
        """Success-result form: ``"67% — 1,474/2,200 chars"``."""
        return f"{self.percent}% — {self.chars:,}/{self.limit:,} chars"

    @property
    def short(self) -> str:
        """Error-result form: ``"2,100/2,200"``."""
        return f"{self.chars:,}/{self.limit:,}"

    def to_dict(self) -> dict:
        return {"chars": self.chars, "limit": self.limit, "percent": self.percent, "text": self.text}


def render_block(target: str, entries: list[str], limit: int) -> str:
    """Hermes's system-prompt block for one store, or ``""`` when it has no entries."""
    if not entries:
        return ""
    usage = Usage.of(entries, limit)
    header = f"{BLOCK_TITLES[target]} [{usage.text}]"
    return "\n".join([SEPARATOR, header, SEPARATOR, serialize(entries)])


@lru_cache(maxsize=8)
def _block_header(titles: tuple[str, ...]) -> re.Pattern[str]:
    """``"═══…\\nMEMORY (your personal notes) [67% — 1,474/2,200 chars]\\n═══…\\n"``, then exactly 1,474 characters."""
    return re.compile(
        rf"{SEPARATOR}\n(?P<title>{'|'.join(re.escape(title) for title in titles)}) "
        rf"\[\d+% — (?P<chars>[\d,]+)/(?P<limit>[\d,]+) chars[^\]\n]*\]\n{SEPARATOR}\n"
    )


def parse_blocks(prompt: str) -> dict[str, tuple[list[str], int]]:
    """The memory blocks a system prompt holds, read back exactly: target -> (entries, limit).

    The inverse of ``render_block``. Each header states its content's size, so the
    content is read by count, not by guessing where it ends: an entry may hold blank
    lines, a bare ``§`` or even text that looks like another block's header. A store
    whose block is missing was empty (or disabled) when the prompt was built.
    """
    titles = {title: target for target, title in BLOCK_TITLES.items()}
    header = _block_header(tuple(titles))
    blocks: dict[str, tuple[list[str], int]] = {}
    position = 0
    while match := header.search(prompt, position):
        position = match.end() + int(match["chars"].replace(",", ""))
        content = prompt[match.end() : position]
        blocks.setdefault(
            titles[match["title"]],
            (content.split(ENTRY_DELIMITER) if content else [], int(match["limit"].replace(",", ""))),
        )
    return blocks


def _without_whitespace(text: str) -> str:
    """``text`` with every whitespace character removed (``str.split`` reads whitespace as a regex's ``\\s`` does)."""
    return "".join(text.split())


def has_drift(raw: str, limit: int) -> bool:
    """True when rewriting ``raw`` from its parsed entries could lose what someone put there.

    Read as Hermes reads it, line endings translated (so CRLF alone is not drift: both
    programs edit such a file and write it back with LF). Signals (Hermes issue #26045):
    the text does not round-trip through parse/serialize (compared ignoring whitespace,
    so blank lines around ``§`` are not drift), an entry holds a line that reads as ``§``
    but is not the delimiter (a paste merged two entries there), or an entry is longer
    than the whole store's limit (free text appended without delimiters). Duplicates are
    not drift: dropping an identical copy loses nothing.
    """
    raw = normalise_line_endings(raw.removeprefix(BOM))
    if not raw.strip():
        return False
    pieces = split_pieces(raw)
    if _without_whitespace(serialize(pieces)) != _without_whitespace(raw):
        return True
    return any(len(piece) > limit or _looks_like_delimiter(piece) for piece in pieces)


def hermes_drift(raw: str, limit: int) -> bool:
    """Whether Hermes 0.19's guard refuses a replace or remove in the file ``raw``: it reads the text
    with line endings translated and wants it back exactly (its two ends aside) from the stripped
    entries joined by the delimiter, none longer than the whole store. So blank lines or spaces
    around an entry count there, which ``has_drift`` forgives (rewriting them loses nothing)."""
    text = normalise_line_endings(raw)
    pieces = split_pieces(text)
    return text.strip() != serialize(pieces) or any(len(piece) > limit for piece in pieces)


def misread_at(entries: list[str]) -> int | None:
    """The index of the first of ``entries`` that, written, would not read back as itself (an entry
    ending in a line holding only '§' joins the next one's delimiter: the next then reads with that
    line at its start), or None when all of them would. Stripped entries free of the delimiter can
    only be misread so, so a write with no such entry (nearly every one) skips the re-split; and one
    with no '§' in any entry but the last (one joined text searched in C) does not look at each."""
    head = entries[:-1]
    if "§" not in "".join(head) or not any(map(ends_with_delimiter_line, head)):
        return None
    read = split_pieces(serialize(entries))
    if read == entries:
        return None
    return next((i for i, (wrote, back) in enumerate(zip(entries, read, strict=False)) if wrote != back), 0)


def entry_changes(old: list[str], new: list[str]) -> list[tuple[str, str | None, str | None, int]]:
    """What changed, entry by entry, between two versions of a store (an edit made outside).

    ``(action, before, after, index)``: a gone entry paired with a similar new one is a
    ``replace``, other gone ones are ``remove`` (``index`` in ``old``), other new ones ``add``
    (``index`` in ``new``). Moving entries around or reformatting the file changes no entry,
    so it yields nothing. A replace keeps its entry's place, so only entries in the same slot
    between the entries both versions keep are paired, only where the slot lost as many
    entries as it gained (with more on one side, a burst of adds and removes seen at once,
    which of them was edited is a guess), and only when each gone entry pairs with the new
    one in its own place: were any of them a remove beside an add (``A, B`` gone and ``B', C``
    new, from a batch that removed A, rewrote B and appended C), the places shift, and a
    similar pair across them (``A → C``) is a replace that never happened. Otherwise each
    is a remove or an add, except that an entry a new one holds whole, or that holds a new one
    whole (``extensions``), is still its replace: an edit that added to it or cut it. One entry
    gone and one new in the same slot with kept entries after it is a replace however unlike the
    two are: an add is appended, so only a rewrite (Hermes's replace, an editor's) puts a new entry
    in the middle where one went; at the end, a remove of the last entry beside an append looks
    the same, so there the texts must be alike.

    Those rules guess: the catch-up replays Hermes's stored memory calls first (``replay``), so they
    weigh only what no call explains.
    """
    old_set, new_set = set(old), set(new)
    gone = [e for e in old if e not in new_set]
    fresh = [e for e in new if e not in old_set]
    gone_at, fresh_at = kept_before(old, new_set), kept_before(new, old_set)
    kept = sum(entry in new_set for entry in old)  # (as ``kept_before`` counts them)
    pairs: dict[str, str] = {}
    lost_in: dict[int, list[str]] = {}
    gained_in: dict[int, list[str]] = {}
    for e in gone:
        lost_in.setdefault(gone_at[e], []).append(e)
    for e in fresh:
        gained_in.setdefault(fresh_at[e], []).append(e)
    for slot in lost_in.keys() & gained_in.keys():
        lost, gained = lost_in[slot], gained_in[slot]
        if len(lost) == len(gained) == 1 and slot < kept:  # one entry in another's place, before kept ones
            pairs[gained[0]] = lost[0]
            continue
        found = pair_changes(lost, gained) if len(lost) == len(gained) else {}
        if found and all(found.get(entry) == was for entry, was in zip(gained, lost, strict=True)):
            pairs.update(found)
        else:
            pairs.update(extensions(lost, gained))
    paired = set(pairs.values())
    old_at, new_at = first_index(old), first_index(new)  # (a list's index() for each was quadratic)
    changes: list[tuple[str, str | None, str | None, int]] = [
        ("remove", e, None, old_at[e]) for e in gone if e not in paired
    ]
    changes += [("replace", pairs[e], e, new_at[e]) if e in pairs else ("add", None, e, new_at[e]) for e in fresh]
    return changes


def first_index(entries: Sequence[str]) -> dict[str, int]:
    """Each entry's first index, as ``list.index`` gives it, for all of them in one pass."""
    found: dict[str, int] = {}
    for i, entry in enumerate(entries):
        found.setdefault(entry, i)
    return found


# Pairs of entries a similarity pairing scores at most: each is a difflib ratio, so a burst of
# thousands gone and thousands new (a huge file pasted over another) took hours and gigabytes. Past
# it, the entries are what they are without a pairing: removes and adds (a snapshot column: removed
# and added rows).
MOST_PAIRS = 10_000


MIN_HELD = 8  # characters the shorter of an extension pair has at least: a short one is in many texts


def extensions(gone: list[str], new: list[str]) -> dict[str, str]:
    """New entries paired with the gone one each holds whole or is held by (``a`` -> ``a, and b``),
    where that pairing is the only one either side has: an edit that added to an entry or cut
    it, however unlike the rest of it is (``pair_changes`` scores the whole)."""

    def holds(one: str, other: str) -> bool:
        short, long = sorted((one, other), key=len)
        return len(short) >= MIN_HELD and short in long

    pairs: dict[str, str] = {}
    if len(gone) * len(new) > MOST_PAIRS:
        return pairs
    for entry in new:
        found = [was for was in gone if holds(was, entry)]
        if len(found) == 1 and sum(holds(found[0], other) for other in new) == 1:
            pairs[entry] = found[0]
    return pairs


def kept_before(entries: list[str], kept_in_other: set[str]) -> dict[str, int]:
    """For each entry the other version lacks, its slot: how many entries both keep come before it."""
    slots: dict[str, int] = {}
    kept = 0
    for entry in entries:
        if entry in kept_in_other:
            kept += 1
        else:
            slots.setdefault(entry, kept)
    return slots


def pair_changes(gone: list[str], new: list[str]) -> dict[str, str]:
    """Pair new entries with gone ones, most similar pairs first (ratio >= 0.5); none when there are
    more than ``MOST_PAIRS`` pairs to score."""
    if len(gone) * len(new) > MOST_PAIRS:
        return {}
    scored = sorted(
        (
            (SequenceMatcher(None, old, entry).ratio(), i, j)
            for i, old in enumerate(gone)
            for j, entry in enumerate(new)
        ),
        reverse=True,
    )
    pairs: dict[str, str] = {}
    used: set[int] = set()
    for score, i, j in scored:
        if score < 0.5:
            break
        if i not in used and new[j] not in pairs:
            pairs[new[j]] = gone[i]
            used.add(i)
    return pairs
