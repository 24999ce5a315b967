"""Drift repairs: why a memory file no longer round-trips, and rewrites that make it do so.

A file drifts when an edit outside the memory tool leaves text the entry format cannot
hold (``format.has_drift``): a line that reads as ``§`` but is not the delimiter (where a
paste merged two entries), an entry longer than the whole store (text appended without a
delimiter), an empty entry between two delimiters. The store then refuses every replace
and remove, so even a poisoned entry cannot be taken out. CR or CRLF line endings are
not drift (both programs read them translated and write LF), but they are diagnosed
first and normalised as a repair of their own, since pieces are found by ``\n§\n``.
A file that is not valid UTF-8 comes before everything (``diagnose_bytes``): its one
repair replaces what does not decode with U+FFFD (``encoding``), after keeping the
file's bytes in a copy, since the journal's rows hold text and undo cannot restore them.

``diagnose`` names each cause with where it is and proposes repairs; every ``Repair``
rewrites only the pieces it names (normalising line endings names the whole file), so
everything else, a BOM included, stays byte for byte. ``apply`` writes the resulting
file as every write goes (lock, re-read, journal first, atomic replace), refuses if the
file changed since it was diagnosed, and journals one ``repair`` row holding the whole
file before and after, so undo puts back the exact bytes. ``workbench memory repair``,
``doctor --fix`` and the Memory screen's repair dialog all come here.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..counts import counted
from ..errors import WorkbenchError
from ..fileio import UnsafePath
from ..journal import content_hash
from ..textsafety import quoted, shell_word
from . import encoding, ops
from .format import (
    BOM,
    ENTRY_DELIMITER,
    FILE_NAMES,
    TARGETS,
    ends_with_delimiter_line,
    far_over,
    far_over_title,
    has_crlf,
    has_drift,
    hermes_drift,
    line_endings,
    normalise_line_endings,
    read_as_hermes,
    reads_as_delimiter,
    size_of,
    split_pieces,
)
from .ops import Outcome, Refusal, refuse
from .store import _Plan, _scan, _Writer

if TYPE_CHECKING:
    from ..health import Finding
    from ..home import Home
    from .store import FileState, MemoryStore

ACTION = "repair"
PREVIEW = 40
MAX_SPLIT_POINTS = 5  # blank lines offered as split points of one over-long entry
LARGEST_OFFERED = 3  # entries of a store over its limit whose trim and removal are offered
ROOM_LEFT = 0.1  # the share of the limit the trim on offer leaves free, so the next add fits


@dataclass(frozen=True)
class Piece:
    """One ``\\n§\\n``-separated piece of the file, empty ones included, in file order.

    ``start``/``end`` index the file's text (the BOM stays outside every piece); ``line``
    is the file line the piece starts on. ``number`` is what people and commands use.
    """

    number: int
    start: int
    end: int
    text: str
    line: int
    mended: int | None = None  # a file that is not UTF-8: the characters the entry holds once its bytes are replaced

    @property
    def entry(self) -> str:
        return self.text.strip()

    @property
    def chars(self) -> int:
        """The entry's size as listed: in a file that is not UTF-8, what it holds after the repair (its text
        shows each byte that does not decode as four characters, ``\\xNN``; the repair makes it one)."""
        return len(self.entry) if self.mended is None else self.mended

    @property
    def preview(self) -> str:
        flat = " ".join(self.entry.split())
        return flat if len(flat) <= PREVIEW else flat[: PREVIEW - 1] + "…"

    def body_line(self, offset: int) -> int:
        """The file line of line ``offset`` (0-based) of ``entry``."""
        lead = self.text[: len(self.text) - len(self.text.lstrip())]
        return self.line + lead.count("\n") + offset


@dataclass(frozen=True)
class Reason:
    """One thing to repair: ``kind`` is crlf, bom, lookalike, over_limit (an entry longer than the whole store) or
    empty (causes of drift); spacing (blank lines or spaces around entries: Hermes refuses to edit the file,
    the workbench does not); stray (a line holding only '§' at an entry's end: the next add after it is
    misread); store_over_limit (the entries fit one by one but not together, so Hermes refuses every add;
    not drift); or encoding (bytes that are not UTF-8: Hermes cannot read the file). ``piece`` and ``line``
    say where."""

    kind: str
    message: str
    short: str  # a few words for a banner: "entry 2, line 4: a look-alike '§'"
    piece: int | None = None
    line: int | None = None
    over: int | None = None  # over_limit, store_over_limit: characters beyond the limit

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "message": self.message,
            "short": self.short,
            "entry": self.piece,
            "line": self.line,
            "over": self.over,
        }


@dataclass(frozen=True)
class Repair:
    """A rewrite of one piece (``text`` is its new text; ``""`` removes it) or of the whole file."""

    kind: str  # normalise, bom, spacing, encoding, split, trim, remove, rewrite, keep (the first ``piece`` pieces)
    label: str
    piece: int | None = None
    text: str | None = None
    at: int | None = None  # split: the file line; trim: the characters kept

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "label": self.label, "entry": self.piece, "at": self.at}


@dataclass(frozen=True)
class Diagnosis:
    """A file as read at one moment (``sha`` names those bytes), its causes of drift and the repairs on offer."""

    target: str
    text: str  # the whole file, BOM kept
    limit: int
    pieces: list[Piece]  # of a CR or CRLF file: those of its text with line endings normalised, as a person reads it
    reasons: list[Reason]
    repairs: list[Repair] = field(default_factory=list)
    data: bytes | None = None  # the file's bytes when they are not valid UTF-8 (``text`` shows those as \xNN)

    @property
    def file_name(self) -> str:
        return FILE_NAMES[self.target]

    @property
    def sha(self) -> str:
        return content_hash(self.text) if self.data is None else hashlib.sha256(self.data).hexdigest()

    @cached_property
    def undecodable(self) -> list[tuple[encoding.Undecodable, int]]:
        """Each run of bytes that does not decode, with the entry it is in (none in a UTF-8 file)."""
        if self.data is None:
            return []
        starts = [p.line for p in self.pieces]
        return [(run, bisect.bisect_right(starts, run.line)) for run in encoding.undecodable(self.data)]

    @property
    def drifted(self) -> bool:
        """What makes the store refuse a replace or remove (CRLF line endings alone do not)."""
        return has_drift(self.text, self.limit)

    @property
    def hermes_refuses(self) -> bool:
        """What makes Hermes 0.19 refuse a replace or remove: its exact round-trip check."""
        return hermes_drift(self.text, self.limit)

    @property
    def crlf(self) -> bool:
        return has_crlf(self.text)

    @property
    def byte_repair(self) -> Repair:
        """The repair of a file that is not UTF-8 (refused by ``result`` for one that is)."""
        lines = len(encoding.LATIN1_DELIMITER.findall(self.data or b""))
        return replace_bytes(sum(len(run.data) for run, _ in self.undecodable) - lines, lines)

    def has(self, kind: str) -> bool:
        """Whether one of the reasons is of ``kind``."""
        return any(r.kind == kind for r in self.reasons)

    @property
    def flagged(self) -> set[int]:
        """The entries the reasons name, each marked in a list of them (for space around entries, every one)."""
        marked = {r.piece for r in self.reasons if r.piece is not None} | {entry for _, entry in self.undecodable}
        return marked | {p.number for p in _spaced(self.pieces)} if self.has("spacing") else marked

    def offers(self, kind: str) -> bool:
        """Whether one of the repairs on offer is of ``kind``."""
        return any(r.kind == kind for r in self.repairs)

    @property
    def title(self) -> str:
        """The headline in a few words (a banner's)."""
        if self.data is not None:
            return f"Hermes cannot read {self.file_name}"
        if far_over(len(self.text), self.limit):  # before all else: it is what Hermes does with it that matters
            return far_over_title(self.target, len(self.text.encode("utf-8", "surrogatepass")), self.limit)
        if self.drifted:
            return f"{self.file_name} no longer round-trips"
        if self.crlf:  # (the titles say the consequence, the reasons' short words where: a banner joins them)
            return f"The next write rewrites {self.file_name} with LF"
        if self.has("spacing"):
            return f"Hermes refuses to edit {self.file_name}"
        if self.has("stray"):
            return f"An add to {self.file_name} would be misread"
        if self.store_over is not None:
            return f"Hermes refuses every add to {self.file_name}"
        if self.reasons:
            return f"Hermes hides entry 1 of {self.file_name} from every prompt"
        return f"{self.file_name} round-trips"

    @property
    def headline(self) -> str:
        if self.data is not None:
            return (
                f"{self.file_name} is not valid UTF-8: Hermes's memory tool fails on it and the workbench refuses "
                "every write to it."
            )
        if far_over(len(self.text), self.limit):
            return f"{self.title}."
        if self.drifted:
            return f"{self.file_name} no longer round-trips through the memory tool; replace and remove are refused."
        if self.crlf:
            return (
                f"{self.file_name} uses {line_endings(self.text)} line endings; it is read with them translated, "
                "as Hermes reads it, and the next write saves it with LF."
            )
        if self.has("spacing"):
            return (
                f"{self.file_name} round-trips for the workbench, but Hermes wants it exactly as it writes it: with "
                "blank lines or spaces around entries, Hermes refuses every replace and remove in it."
            )
        if self.has("stray"):
            return (
                f"{self.file_name} has a line holding only '§' at the end of an entry, a delimiter an edit left "
                "behind: the next entry added after it would be misread."
            )
        if self.store_over is not None:
            return (
                f"{self.file_name} round-trips but is over its limit: Hermes refuses every add until entries are "
                "trimmed or removed."
            )
        if self.reasons:
            return f"{self.file_name} starts with a byte-order mark, which Hermes reads into entry 1 and blocks."
        return f"{self.file_name} round-trips and fits its limit; nothing to repair."

    @property
    def needs_repair(self) -> bool:
        """The one rule for whether a store needs a repair (the Memory screen's banner and ``r``, the
        CLI's listing, doctor): drift, CR/CRLF line endings, a byte-order mark, space Hermes refuses to
        edit, a stray '§' line, or a store over its limit."""
        return bool(self.reasons)

    @property
    def store_over(self) -> Reason | None:
        """The store_over_limit reason, when the store is over its limit with no entry over it alone."""
        return next((r for r in self.reasons if r.kind == "store_over_limit"), None)

    @property
    def entries_wait(self) -> str | None:
        """Why no entry can be repaired yet (CR or CRLF line endings: entries are repaired by their place
        in the file, which is the normalised file's), else None. The entries are listed all the same, as
        a person reads them (the CLI's listing and the Memory screen's repair dialog say this under them)."""
        if self.data is not None:
            return (
                f"{self.file_name} is not valid UTF-8, and entries are repaired by their place in the file: "
                "replace the bytes that do not decode first (that is its own repair, which keeps a copy of the "
                "file), then choose an entry's repair."
            )
        if not self.crlf:
            return None
        return (
            f"{self.file_name} uses {line_endings(self.text)} line endings, and entries are repaired by "
            "their place in the file: normalise the line endings first (that is its own repair, undoable), "
            "then choose an entry's repair."
        )

    @property
    def waits_for(self) -> str | None:
        """What the entries' repairs wait for, in a few words (a hint's), else None."""
        if self.data is not None:
            return "the bytes that are not UTF-8 to be replaced"
        return "normalised line endings" if self.crlf else None

    def piece(self, number: Any) -> Piece:
        if not isinstance(number, int) or not 1 <= number <= len(self.pieces):
            raise refuse(
                f"{self.file_name} has no entry {quoted(number)}: it holds {counted(len(self.pieces), 'piece')} "
                f"between '§' lines (`workbench memory repair --target {self.target}` lists them). Nothing was changed."
            )
        return self.pieces[number - 1]

    def keep_first(self, count: int) -> Repair:
        """``keep_first`` on this file, refused when the store fits its limit: removing entries is then no
        repair, and ``--keep-first 10`` copied from the docs removed a fine store's later entries unasked."""
        if hermes_excess(self.text, self.limit) is None:
            raise refuse(
                f"{self.file_name} fits its limit ({size_of(read_as_hermes(self.text)):,}/{self.limit:,} chars), "
                "so --keep-first, which removes every entry after the first N of a store over its limit, has "
                f"nothing to repair. Nothing was changed. To remove an entry anyway: `workbench memory remove "
                f"--target {self.target} --old TEXT` (each is journaled and undoable)."
            )
        return keep_first(self.pieces, count)

    def piece_of(self, entry: str) -> Piece | None:
        """The first piece that reads as ``entry`` (what the Memory screen shows as one entry)."""
        return next((p for p in self.pieces if p.entry == entry), None)

    def result(self, repair: Repair) -> str:
        """The whole file once ``repair`` is made (pure); refused when it changes nothing."""
        if repair.kind == "encoding" and self.data is not None:
            after = encoding.replaced(self.data)
        elif repair.kind == "encoding":
            raise refuse(f"{self.file_name} is valid UTF-8; there are no bytes to replace. Nothing was changed.")
        elif self.data is not None:
            raise self._waiting("Replace them", "--replace-invalid-bytes")
        elif repair.kind == "normalise":
            after = normalise_line_endings(self.text)
        elif repair.kind == "bom":
            after = self.text.removeprefix(BOM)
        elif self.entries_wait:
            raise self._waiting("Normalise them", "--normalise-line-endings")
        elif repair.kind == "spacing":
            trimmed = _unspaced(self.text)
            if trimmed is None:
                raise refuse(
                    f"Trimming the space around {self.file_name}'s entries would change what one of them reads "
                    "as; make its other repairs first. Nothing was changed."
                )
            after = trimmed
        elif repair.kind == "keep":
            after = self.text[: self.piece(repair.piece).end]
        else:
            after = _rewrite(self, self.piece(repair.piece), repair.text or "")
        if after == self.text:
            raise refuse(f"That repair would leave {self.file_name} as it is; nothing was changed.")
        return after

    def _waiting(self, first: str, option: str) -> Refusal:
        """The refusal of a repair that waits for another (``entries_wait``), with the command that makes it."""
        return refuse(
            f"{self.entries_wait} Nothing was changed. {first} first: "
            f"`workbench memory repair --target {self.target} {option}`."
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "file": self.file_name,
            "drifted": self.drifted,
            "hermes_refuses": self.hermes_refuses,
            "crlf": self.crlf,
            "entries_wait": self.entries_wait,
            "needs_repair": self.needs_repair,
            "headline": self.headline,
            "file_sha": self.sha,
            "limit": self.limit,
            "reasons": [r.to_dict() for r in self.reasons],
            "repairs": [r.to_dict() for r in self.repairs],
            "not_utf8": [{**run.to_dict(), "entry": entry} for run, entry in self.undecodable],
            "entries": [
                {"entry": p.number, "line": p.line, "chars": p.chars, "preview": p.preview} for p in self.pieces
            ],
        }


# -- diagnosis (pure) --------------------------------------------------------------------
NUMBERS_NAMED = 10  # entry numbers a reason names; the rest are counted


def pieces_of(text: str) -> list[Piece]:
    """Split ``text`` as ``str.split(ENTRY_DELIMITER)`` does, keeping where each piece sits."""
    start = len(BOM) if text.startswith(BOM) else 0
    pieces: list[Piece] = []
    line, counted = 1, 0  # the line ``counted`` is on: counted on from the last piece (from the top each time
    while True:  # was quadratic: 253 s for a 10 MB file)
        end = text.find(ENTRY_DELIMITER, start)
        stop = len(text) if end < 0 else end
        line += text.count("\n", counted, start)
        counted = start
        pieces.append(Piece(len(pieces) + 1, start, stop, text[start:stop], line))
        if end < 0:
            return pieces
        start = end + len(ENTRY_DELIMITER)


def diagnose(target: str, text: str, limit: int) -> Diagnosis:
    """Why ``text`` (a whole file, BOM kept) does not round-trip, and the repairs that would help."""
    name = FILE_NAMES[target]
    marked = text.startswith(BOM)
    mark = [_mark_reason(name)] if marked else []
    unmarking = [unmark()] if marked else []
    if has_crlf(text):
        count, kind = text.count("\r"), line_endings(text)
        after = diagnose(target, normalise_line_endings(text), limit)  # the entries and causes a person sees
        seen = sum(1 for piece in after.pieces if piece.entry)
        reason = Reason(
            "crlf",
            f"{name} uses {kind} line endings on {counted(count, 'line')}. Hermes and the workbench read them "
            f"translated ({_entries(seen)}), and the next write by either saves the file with LF. Normalising "
            "them now makes that change on its own; any other repair waits for it.",
            f"{kind} line endings on {counted(count, 'line')}",
        )
        later = [r for r in after.reasons if r.kind != "bom"]
        return Diagnosis(target, text, limit, after.pieces, [reason, *mark, *later], [normalise(), *unmarking])
    pieces = pieces_of(text)
    reasons: list[Reason] = mark
    repairs: list[Repair] = unmarking
    several = len(pieces) > 1
    for piece in pieces:
        body = piece.entry
        if not body:
            if several:
                reasons.append(
                    Reason(
                        "empty",
                        f"Entry {piece.number} (line {piece.line}) is empty: two '§' lines in a row, or one at the "
                        "start or end of the file. Rewriting the file from its entries would drop it.",
                        f"entry {piece.number} is empty",
                        piece.number,
                        piece.line,
                    )
                )
                repairs.append(Repair("remove", f"Remove empty entry {piece.number}", piece.number, ""))
            continue
        _stray(name, piece, reasons, repairs)
        for offset, line in enumerate(body.split("\n")):
            if line != "§" and reads_as_delimiter(line):
                at = piece.body_line(offset)
                reasons.append(
                    Reason(
                        "lookalike",
                        f"Entry {piece.number} ({piece.preview}) has a line that reads as '§' but is not the "
                        f"delimiter at line {at} ({quoted(line)}): a paste merged two entries there, and Hermes reads "
                        "them as one.",
                        f"entry {piece.number}, line {at}: a look-alike '§' (a merged paste)",
                        piece.number,
                        at,
                    )
                )
                _offer(repairs, split, piece, at)
        if len(body) > limit:
            over = len(body) - limit
            reasons.append(
                Reason(
                    "over_limit",
                    f"Entry {piece.number} ({piece.preview}) is {len(body):,} chars, over the whole store's limit of "
                    f"{limit:,} by {over:,}: text was appended without a delimiter, or a paste merged entries.",
                    f"entry {piece.number} is {over:,} chars over the limit",
                    piece.number,
                    piece.line,
                    over,
                )
            )
            for at in _blank_lines(piece)[:MAX_SPLIT_POINTS]:
                _offer(repairs, split, piece, at)
            repairs.append(fitting_trim(pieces, piece, limit))
            repairs.append(remove(piece))
    if spaced := _spaced(pieces):
        trimmable = _unspaced(text) is not None
        numbers = ", ".join(str(p.number) for p in spaced[:NUMBERS_NAMED]) + (
            f" and {len(spaced) - NUMBERS_NAMED:,} more" if len(spaced) > NUMBERS_NAMED else ""
        )  # (every one, in a file of thousands, made a banner and a message of 100 KB)
        reasons.append(
            Reason(
                "spacing",
                f"Entr{'y' if len(spaced) == 1 else 'ies'} {numbers} of {name} "
                f"{'has' if len(spaced) == 1 else 'have'} blank lines or spaces around "
                f"{'it' if len(spaced) == 1 else 'them'}. The workbench reads past them, but Hermes wants the "
                'file exactly as it writes it: it refuses every replace and remove here ("wouldn\'t round-trip"), '
                "saving a .bak copy each time. "
                + (
                    "Trimming them changes no entry's text."
                    if trimmable
                    else "Make the other repairs first: trimming now would change what an entry reads as."
                ),
                f"space around entr{'y' if len(spaced) == 1 else 'ies'} {numbers}",
                spaced[0].number,
                spaced[0].line,
            )
        )
        if trimmable:
            repairs.append(unspace())
    if not any(r.kind == "over_limit" for r in reasons):  # (an entry over it alone has its own reason and trims)
        _store_over(name, text, limit, pieces, reasons, repairs)
    return Diagnosis(target, text, limit, pieces, reasons, list(dict.fromkeys(repairs)))


def diagnose_bytes(target: str, data: bytes, limit: int) -> Diagnosis:
    """``diagnose`` for a file that is not valid UTF-8 (``data``): where its bytes do not decode (by line,
    entry, byte offset and hex), the one repair that mends it, and what would still be wrong after it.
    The entries are listed as a person sees them now, each such byte as ``\\xNN``."""
    name, text = FILE_NAMES[target], encoding.shown(data)
    pieces = diagnose(target, encoding.shown(encoding.delimited(data)), limit).pieces  # (a Latin-1 '§' parts them)
    found = Diagnosis(target, text, limit, pieces, [], data=data)
    runs = found.undecodable
    count = sum(len(run.data) for run, _ in runs)
    lines = list(dict.fromkeys(run.line for run, _ in runs))
    where = "; ".join(run.describe(entry) for run, entry in runs[:NUMBERS_NAMED])
    reason = Reason(
        "encoding",
        f"{name} is not valid UTF-8: {counted(count, 'byte')} in {counted(len(runs), 'place')} cannot be decoded "
        f"({where}"
        + (f"; and {len(runs) - NUMBERS_NAMED:,} more places" if len(runs) > NUMBERS_NAMED else "")
        + "). Hermes stops loading memory at it, so its sessions start with no memory in the prompt, and its "
        f"memory tool fails with a UnicodeDecodeError on every write to {name}; the workbench refuses every "
        "write to it. Replace each sequence with U+FFFD (the file's exact bytes are kept in a copy first)"
        + (
            "; a line holding only A7 is a '§' saved as Latin-1, and becomes '§' again, so the entries stay apart."
            if encoding.LATIN1_DELIMITER.search(data)
            else "."
        ),
        f"{_not_utf8(count)}, on line{'' if len(lines) == 1 else 's'} "
        + ", ".join(map(str, lines[:5]))
        + (f" and {len(lines) - 5:,} more" if len(lines) > 5 else ""),
        runs[0][1],
        runs[0][0].line,
    )
    later = diagnose(target, encoding.replaced(data), limit)  # what is still wrong once they are replaced
    pieces = [replace(piece, mended=len(then.entry)) for piece, then in zip(found.pieces, later.pieces, strict=True)]
    return Diagnosis(target, text, limit, pieces, [reason, *later.reasons], [found.byte_repair], data)


def _not_utf8(count: int) -> str:
    return f"{count:,} byte that is not UTF-8" if count == 1 else f"{count:,} bytes that are not UTF-8"


def _stray(name: str, piece: Piece, reasons: list[Reason], repairs: list[Repair]) -> None:
    """A line holding only '§' at the end of an entry: a delimiter an edit left behind, which takes the
    next entry added (Hermes's and ours alike; the workbench refuses such a write)."""
    if not ends_with_delimiter_line(piece.entry):
        return
    at = piece.body_line(piece.entry.count("\n"))
    reasons.append(
        Reason(
            "stray",
            f"Entry {piece.number} ({piece.preview}) ends with a line holding only '§' (line {at}), a delimiter an "
            "edit left behind: an entry added after it would be read with that line at its start, and this one "
            "without it (the workbench refuses such an add; Hermes's goes through).",
            f"a stray '§' on line {at}, ending entry {piece.number}",
            piece.number,
            at,
        )
    )
    _offer(repairs, split, piece, at)


def _spaced(pieces: list[Piece]) -> list[Piece]:
    """The entries with whitespace Hermes's exact round-trip check counts: any around an entry, except
    before the file's first piece and after its last (it strips the whole text's two ends)."""
    last = len(pieces) - 1
    return [
        p
        for i, p in enumerate(pieces)
        if p.entry and ((i > 0 and p.text != p.text.lstrip()) or (i < last and p.text != p.text.rstrip()))
    ]


def _unspaced(text: str) -> str | None:
    """The file ``text`` with the whitespace around its entries trimmed as Hermes writes it (the two ends
    too); None when that would change what an entry reads as (a look-alike '§' at an edge: split it first)."""
    mark = BOM if text.startswith(BOM) else ""
    body = text[len(mark) :]
    after = ENTRY_DELIMITER.join(piece.strip() for piece in body.split(ENTRY_DELIMITER))
    return mark + after if split_pieces(after) == split_pieces(body) else None


def _store_over(name: str, text: str, limit: int, pieces: list[Piece], reasons: list[Reason], repairs: list) -> None:
    """A store whose entries each fit but together hold more than its limit, as Hermes counts them (the
    delimiters too): Hermes refuses every add. The repairs on offer trim or remove its largest entries."""
    counted = hermes_excess(text, limit)
    if counted is None:
        return
    chars, over = counted
    reasons.append(
        Reason(
            "store_over_limit",
            f"{name} holds {chars:,} chars as Hermes counts them (entries joined by '§' lines), over its limit of "
            f"{limit:,} by {over:,}: Hermes refuses every add until entries are trimmed or removed.",
            f"{chars:,}/{limit:,} chars, {over:,} over the limit",
            over=over,
        )
    )
    if far_over(chars, limit) and (kept := fitting_prefix(pieces, limit)):
        repairs.append(keep_first(pieces, kept))
    largest = sorted((p for p in pieces if p.entry), key=lambda p: (-len(p.entry), p.number))[:LARGEST_OFFERED]
    for piece in largest:
        fix = fitting_trim(pieces, piece, limit)
        if fix.at is not None and fix.at < len(piece.entry.rstrip()):  # a trim that shortens it
            repairs.append(fix)
    repairs += [remove(piece) for piece in largest]


def _mark_reason(name: str) -> Reason:
    return Reason(
        "bom",
        f"{name} starts with a byte-order mark (U+FEFF). The workbench reads past it, but Hermes reads it as "
        "the first character of entry 1, and its load-time scan then blocks that entry from every session's "
        "prompt as an invisible character. Remove the mark; nothing else changes.",
        "a byte-order mark at the file's start",
        1,
        1,
    )


def _entries(count: int) -> str:
    return f"{count:,} entr{'y' if count == 1 else 'ies'}"


def _offer(repairs: list[Repair], make: Callable[..., Repair], *args: Any) -> None:
    """Add the repair ``make(*args)`` builds, unless it does not apply here (it refuses)."""
    try:
        repairs.append(make(*args))
    except Refusal:
        pass


def _blank_lines(piece: Piece) -> list[int]:
    """File lines of the blank lines inside an entry: where a pasted paragraph may start."""
    lines = piece.entry.split("\n")
    return [piece.body_line(i + 1) for i in range(len(lines) - 1) if not lines[i + 1].strip() and lines[i].strip()]


# -- repairs (pure) ----------------------------------------------------------------------
def normalise() -> Repair:
    return Repair("normalise", "Normalise line endings to LF")


def replace_bytes(count: int, delimiters: int = 0) -> Repair:
    """``count`` bytes that do not decode, and ``delimiters`` lines of '§' saved as Latin-1 besides."""
    lines = f"the {delimiters:,} '§' line{'s' * (delimiters != 1)} saved as Latin-1 with '§'"
    what = " and ".join(filter(None, [f"the {_not_utf8(count)} with U+FFFD" * bool(count), lines * bool(delimiters)]))
    return Repair("encoding", f"Replace {what} (the file's exact bytes are kept in a copy)")


def unmark() -> Repair:
    return Repair("bom", "Remove the byte-order mark Hermes reads into entry 1")


def unspace() -> Repair:
    return Repair("spacing", "Trim the blank lines and spaces around entries (no entry's text changes)")


def split(piece: Piece, line: int) -> Repair:
    """Split ``piece`` before file line ``line``; a line there that reads as '§' becomes the delimiter
    (or, at the entry's start or end, where it separates nothing, is dropped as a stray)."""
    offset = line - piece.line
    lines = piece.text.split("\n")
    if not 0 <= offset < len(lines):
        raise refuse(
            f"Entry {piece.number} spans lines {piece.line}-{piece.line + len(lines) - 1}; line {line} is not in "
            "it. Nothing was changed."
        )
    head, rest = "\n".join(lines[:offset]), lines[offset:]
    stray = reads_as_delimiter(rest[0])
    tail = "\n".join(rest[1:] if stray else rest)
    if head.strip() and tail.strip():
        text = head.rstrip() + ENTRY_DELIMITER + tail.lstrip()  # the piece's outer whitespace stays
        return Repair("split", f"Split entry {piece.number} at line {line}", piece.number, text, line)
    if stray and (head.strip() or tail.strip()):
        label = f"Drop the stray '§' line {line} from entry {piece.number}"
        return Repair("split", label, piece.number, _framed(piece, head.strip() or tail.strip()), line)
    raise refuse(
        f"Splitting entry {piece.number} at line {line} would leave one side empty; pick a line inside it. "
        "Nothing was changed."
    )


def _framed(piece: Piece, core: str) -> str:
    """``core`` in place of the piece's entry, inside the whitespace the piece had around it."""
    lead = piece.text[: len(piece.text) - len(piece.text.lstrip())]
    return lead + core + piece.text[len(piece.text.rstrip()) :]


def trim(piece: Piece, chars: int, note: str = "") -> Repair:
    """Keep the first ``chars`` characters of the entry (trailing whitespace dropped); ``note`` ends the label."""
    if chars < 1:
        raise refuse("Trim to at least 1 character; to drop the entry, remove it. Nothing was changed.")
    label = f"Trim entry {piece.number} to its first {chars:,} chars" + (f" ({note})" if note else "")
    return Repair("trim", label, piece.number, _framed(piece, piece.entry[:chars].rstrip()), chars)


def fitting_trim(pieces: list[Piece], piece: Piece, limit: int) -> Repair:
    """The trim of an over-long ``piece`` offered as its repair, judged by the whole store as Hermes
    counts it (the entries joined by the delimiter, which counts too): trimmed to the limit alone, the
    store stayed over it and Hermes refused every add. It keeps what leaves ``ROOM_LEFT`` of the limit
    free for new entries; when the other entries leave less, what fits (the store is then full), and
    when they leave none, the limit (the drift ends, the store stays over); the label says which."""
    others = list(dict.fromkeys(p.entry for p in pieces if p.number != piece.number and p.entry))
    fits = limit - size_of(others) - (len(ENTRY_DELIMITER) if others else 0)  # the most the store has room for
    roomy = fits - int(limit * ROOM_LEFT)
    if fits < 1:
        return trim(
            piece,
            limit,
            f"the store stays over its limit: its other entries take {size_of(others):,} of its {limit:,} chars",
        )
    keep = roomy if roomy >= 1 else fits
    chars = size_of(list(dict.fromkeys([*others, piece.entry[:keep].rstrip()])))
    if roomy >= 1:
        return trim(piece, keep, f"the store then holds {chars:,}/{limit:,} chars, with room for new entries")
    return trim(piece, keep, f"the store is then full, {chars:,}/{limit:,} chars: adds are refused until it has room")


def fitting_prefix(pieces: list[Piece], limit: int) -> int:
    """How many of the first pieces hold entries that fit ``limit`` together, as Hermes counts them."""
    chars, entries = 0, 0
    for count, piece in enumerate(pieces):
        if piece.entry:
            chars += len(piece.entry) + (len(ENTRY_DELIMITER) if entries else 0)
            entries += 1
        if chars > limit:
            return count
    return len(pieces)


def keep_first(pieces: list[Piece], count: int) -> Repair:
    """Keep the first ``count`` pieces and remove every one after them (a store far over its limit)."""
    if not 1 <= count < len(pieces):
        raise refuse(
            f"Choose how many of the {len(pieces):,} entries to keep: 1 to {len(pieces) - 1:,}. Nothing was changed."
        )
    kept = size_of([p.entry for p in pieces[:count] if p.entry])
    return Repair(
        "keep",
        f"Keep entries 1-{count:,} ({kept:,} chars) and remove the {len(pieces) - count:,} after them",
        count,
        at=count,
    )


def remove(piece: Piece) -> Repair:
    what = f"({piece.preview})" if piece.preview else "(empty)"
    return Repair("remove", f"Remove entry {piece.number} {what}", piece.number, "")


def rewrite(piece: Piece, text: str) -> Repair:
    """The piece as a person edited it: a line holding only '§' splits it, deleting text trims it."""
    core = normalise_line_endings(text).strip()
    return Repair("rewrite", f"Rewrite entry {piece.number}", piece.number, _framed(piece, core) if core else "")


def _rewrite(diagnosis: Diagnosis, piece: Piece, new: str) -> str:
    """The file with ``piece`` replaced by ``new`` (an empty one takes one neighbouring delimiter with it)."""
    text = diagnosis.text
    if not new.strip():
        if piece.number < len(diagnosis.pieces):
            return text[: piece.start] + text[piece.end + len(ENTRY_DELIMITER) :]
        if piece.number > 1:
            return text[: piece.start - len(ENTRY_DELIMITER)] + text[piece.end :]
        return text[: piece.start]
    for entry in split_pieces(new):
        if entry not in piece.text:  # text the person typed gets the checks of any edit
            _scan(entry, f"Entry {piece.number}: ")
    return text[: piece.start] + new + text[piece.end :]


def hermes_excess(text: str, limit: int) -> tuple[int, int] | None:
    """(chars, chars over ``limit``) of the store file ``text`` as Hermes counts it (entries joined by the
    delimiter) when that is over its whole limit, which makes Hermes refuse every add; None when it fits."""
    chars = size_of(read_as_hermes(text))
    return (chars, chars - limit) if chars > limit else None


def over_limit(text: str, limit: int) -> str | None:
    """A few words for a store over its whole limit (``hermes_excess``); None when it fits."""
    counted = hermes_excess(text, limit)
    if counted is None:
        return None
    chars, over = counted
    return f"the store is at {chars:,}/{limit:,} chars, {over:,} over its limit, so Hermes refuses every add"


def left_after(target: str, text: str, limit: int) -> list[str]:
    """What is still wrong once a repair made the file ``text``: its causes of drift (their short
    words), then a store over its limit. The repair previews (the TUI's, the CLI's dry run) and a
    made repair's result say it."""
    found = diagnose(target, text, limit)
    shorts = [r.short for r in found.reasons if r.kind != "store_over_limit"]
    over = over_limit(text, limit)
    return [*shorts, over] if over else shorts


# -- reading and writing -------------------------------------------------------------------
def text_of(state: FileState) -> str:
    """The whole file a read saw, BOM kept (``FileState.raw`` drops it)."""
    return state.data.decode("utf-8") if state.data is not None else ""


def file_text(memory: MemoryStore, target: str) -> str:
    """The whole file as stored now (BOM kept); refused when it cannot be read."""
    state = memory.read(target)
    if state.error:
        raise refuse(f"Cannot read {memory.path(target)}: {state.error}. Nothing was changed.")
    return text_of(state)


def examine(memory: MemoryStore, target: str) -> Diagnosis:
    """The diagnosis of ``target`` as it is on disk now (raises ``Refusal`` for a file that cannot be
    read; one that is not valid UTF-8 is diagnosed, ``diagnose_bytes``)."""
    if target not in TARGETS:
        raise refuse(f"Invalid memory target {quoted(target)}. Use {' or '.join(map(quoted, TARGETS))}.")
    return _now(memory, target, memory.limit(target))


def _now(memory: MemoryStore, target: str, limit: int) -> Diagnosis:
    state = memory.read(target)
    if state.not_utf8 is not None:
        return diagnose_bytes(target, state.not_utf8, limit)
    if state.error:
        raise refuse(f"Cannot read {memory.path(target)}: {state.error}. Nothing was changed.")
    return diagnose(target, text_of(state), limit)


def apply(memory: MemoryStore, target: str, repair: Repair, expected_sha: str, actor: str = "user") -> dict[str, Any]:
    """Make ``repair`` on the file as it was when diagnosed (``expected_sha``): under the lock, the
    file is read again and the repair refused if it changed; else the whole result is written,
    journaled first as one ``repair`` row (before and after, so undo restores the exact bytes). The
    repair of a file that is not UTF-8 first keeps its bytes in a copy beside it (the row names it),
    since the row holds text: undo cannot put those bytes back, and says so."""
    detail = {"repair": repair.kind, "label": repair.label}

    def op(entries: list[str], limit: int) -> Outcome:
        now = _now(memory, target, limit)  # the store holds the lock
        if now.sha != expected_sha:
            raise refuse(
                f"{now.file_name} changed since this repair was previewed, so it was not made. Look at the file "
                "again and choose the repair anew. Nothing was changed."
            )
        after = now.result(repair)
        message = f"{repair.label}: done."
        if now.data is not None:
            detail["kept"] = kept = _kept_copy(memory, target, now.data)
            message = f"{message} {kept_note(now.file_name, kept)}"
        outcome = Outcome(read_as_hermes(after), message, [ops.Change(ACTION, now.text, after)])
        outcome.text = after
        return outcome

    try:
        memory._check_target(target)
        memory._check_writable()
        # (every repair reads a file that is not UTF-8 through its diagnosis, not the write guard: that refuses
        # all but the byte repair, saying to make that one first and how)
        plan = _Plan(ACTION, op, {}, repair.label, drift_guard=False, extra_detail=detail, not_utf8=True)
        outcome = memory._apply(target, plan, _Writer(actor))
    except Refusal as refusal:
        return refusal.result
    result = memory._success(target, outcome)
    row = next((r for r in memory.history(target, limit=20) if r.action == ACTION and r.after == outcome.text), None)
    limit = memory.limit(target)
    after = diagnose(target, outcome.text or "", limit)
    result.update(
        kept=detail.get("kept"),
        event_id=row.id if row else None,
        drifted=after.drifted,
        reasons=[r.to_dict() for r in after.reasons],
        over_limit=over_limit(outcome.text or "", limit),
    )
    return result


def _kept_copy(memory: MemoryStore, target: str, data: bytes) -> str:
    """(Under the lock.) The file's exact bytes in a copy beside it, synced; the repair is refused without one."""
    try:
        return str(memory.keep_copy(target, data, encoding.COPY_KIND))
    except (OSError, UnsafePath) as exc:
        why = exc.message if isinstance(exc, UnsafePath) else exc.strerror or str(exc)
        raise refuse(
            f"Could not keep a copy of {FILE_NAMES[target]} before replacing its bytes ({why}), so nothing was "
            "changed: the repair keeps every byte or is not made."
        ) from exc


def kept_note(file_name: str, kept: str | None = None) -> str:
    """What undo does for the repair of a file that is not UTF-8 (``kept``: the copy, once made)."""
    copy = kept or f"a copy beside it ({file_name}.{encoding.COPY_KIND}.<unix time>)"
    back = f"`cp {shell_word(kept)} {shell_word(str(Path(kept).with_name(file_name)))}`" if kept else "copy it back"
    return (
        f"{file_name} as it was is kept byte for byte in {copy}. The journal holds text, so undo cannot put "
        f"back bytes that are not UTF-8 and refuses; to have them again (Hermes then fails on the file again): {back}."
    )


# -- doctor ----------------------------------------------------------------------------------
def check_line_endings(home: Home) -> list[Finding]:
    """Doctor: a memory file with CR or CRLF line endings (read and written as Hermes does: information only)."""
    from ..health import Finding

    findings = []
    for target in TARGETS:
        state = home.memory.read(target)
        if state.error is None and has_crlf(state.raw):
            findings.append(
                Finding(
                    "memory",
                    "info",
                    f"{FILE_NAMES[target]} uses {line_endings(state.raw)} line endings: Hermes and the workbench "
                    "read it with them translated, and the next write by either saves the whole file with LF.",
                    "To have that change on its own now: normalise its line endings to LF (journaled and undoable "
                    "with `workbench memory undo`).",
                    repair="memory-line-endings",
                )
            )
    return findings


def check_marks(home: Home) -> list[Finding]:
    """Doctor: a memory file that starts with a byte-order mark (Hermes blocks its first entry)."""
    from ..health import Finding

    return [
        Finding(
            "memory",
            "warning",
            f"{FILE_NAMES[target]} starts with a byte-order mark (U+FEFF): Hermes reads it as part of entry 1 "
            "and blocks that entry from every session's prompt as an invisible character.",
            "Remove the mark (journaled and undoable with `workbench memory undo`).",
            repair="memory-bom",
        )
        for target in TARGETS
        if (state := home.memory.read(target)).error is None and state.bom
    ]


def _repair_every(home: Home, kind: str, failure: str) -> list[str]:
    """Doctor --fix: make the repair of ``kind`` on each memory file it is offered for (none other is
    offered for a file that is not UTF-8 until its bytes are replaced); the files done, with their undo."""
    done = []
    for target in TARGETS:
        try:
            diagnosis = examine(home.memory, target)
        except Refusal:
            continue  # the unreadable-file finding says so
        fix = next((r for r in diagnosis.repairs if r.kind == kind), None)
        if fix is not None:
            result = apply(home.memory, target, fix, diagnosis.sha)
            if not result.get("success"):
                raise WorkbenchError(result.get("error", failure))
            undo = f"undo: `workbench memory undo {result['event_id']}`"
            kept = f"its bytes kept in {result['kept']}, which undo cannot put back"
            done.append(f"{diagnosis.file_name} ({kept if result.get('kept') else undo})")
    return done


def mend_all(home: Home) -> str:
    """Doctor --fix: replace the bytes that are not UTF-8 of every memory file that has them; says what it did."""
    done = _repair_every(home, "encoding", "replacing the bytes that are not UTF-8 failed")
    return f"Replaced the bytes that are not UTF-8 of {', '.join(done)}." if done else "Every memory file is UTF-8."


def unmark_all(home: Home) -> str:
    """Doctor --fix: remove the byte-order mark of every memory file that starts with one; says what it did."""
    done = _repair_every(home, "bom", "removing the byte-order mark failed")
    return f"Removed the byte-order mark of {', '.join(done)}." if done else "No memory file starts with one."


def unspace_all(home: Home) -> str:
    """Doctor --fix: trim the space around the entries of every memory file Hermes refuses to edit for it."""
    done = _repair_every(home, "spacing", "trimming the space around entries failed")
    return f"Trimmed the space around entries of {', '.join(done)}." if done else "No memory file has space to trim."


def normalise_all(home: Home) -> str:
    """Doctor --fix: normalise every CR or CRLF memory file with the repair above; says what it did."""
    done = _repair_every(home, "normalise", "normalising failed")
    return f"Normalised line endings of {', '.join(done)}." if done else "No memory file uses CR or CRLF line endings."
