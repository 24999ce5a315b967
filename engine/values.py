"""Values read back from rows and files that another program (or a hand edit) wrote.

SQLite keeps whatever type it is given and JSON holds any number, so every column or
field a reader relies on goes through one of these: a BLOB title, a text timestamp, an
infinite count or JSON nested past Python's stack is shown as well as it can be (or left
out), never raised.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from typing import Any

from .textsafety import quoted


def text_value(raw: Any) -> str | None:
    """A text column as text: bytes decoded (bad bytes as U+FFFD), numbers written out."""
    if raw is None or isinstance(raw, str):
        return raw
    if isinstance(raw, bytes):
        return raw.decode("utf-8", errors="replace")
    return str(raw)


_FULL_WIDTH = re.compile("[\uff01-\uff5e]")  # the full-width forms of ASCII (ＰＤＦ, ２０２６, ＃, ３ｄ)


def half_width(text: str) -> str:
    """``text`` with full-width ASCII forms, which a CJK input method types, as ASCII (NFKC's folding
    of them alone: search's word index path, and typed numbers; half-width katakana are folded on the
    search's CJK path, ``query.fold_width``)."""
    return _FULL_WIDTH.sub(lambda char: chr(ord(char.group()) - 0xFEE0), text)


# What a person may type as a number: ASCII digits, a sign and, where a fraction means something, a point;
# the full-width ones a CJK input method types read as those, and spaces around are ignored. int() and
# float() take more, each read as some number: 1_0 (10), 1e3, nan, and any script's digits (١٠, ۱۰, ¹⁰ no).
_WHOLE = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


def typed_whole(text: str, what: str) -> int:
    """A whole number a person typed (``_WHOLE``), else ValueError saying what to type: the one reading
    of a typed number for every skin, so ``1_0`` or ``١٠`` is refused, never read as 10."""
    plain = half_width(text).strip()
    if not _WHOLE.fullmatch(plain) or len(plain) > 4000:  # (int() refuses more digits than that)
        raise ValueError(f"{quoted(text)} is not {what}: type it with the digits 0-9")
    return int(plain)


def typed_number(text: str, what: str) -> float:
    """A number a person typed (``_DECIMAL``: ``90``, ``0.5``), else ValueError saying what to type."""
    plain = half_width(text).strip()
    if not _DECIMAL.fullmatch(plain):
        raise ValueError(f"{quoted(text)} is not {what}: type it with the digits 0-9 (and a point for a fraction)")
    return float(plain)


def number_in(text: str, low: float, high: float, what: str) -> float:
    """``text`` typed (``typed_number``) as a finite number from ``low`` to ``high``, else ValueError saying
    what was wanted, the one wording for every skin (a huge one is infinity, which no query should meet)."""
    value = typed_number(text, what)
    if not math.isfinite(value) or not low <= value <= high:
        raise ValueError(f"{text} is out of range: give {what} from {low:g} to {high:g}")
    return value


def number_value(raw: Any) -> float | None:
    """A time or amount as a finite float, else None (flags are not numbers)."""
    if isinstance(raw, bool):
        return None
    try:
        value = float(raw)
    except (TypeError, ValueError, OverflowError):
        return None
    return value if math.isfinite(value) else None


def count_value(raw: Any) -> int:
    """A count as an int (0 when it is not a finite number in SQLite's range)."""
    value = number_value(raw)
    return int(value) if value is not None and abs(value) < 2**63 else 0


LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # JSON's "\\ud800" decodes to one: not valid UTF-8, SQLite refuses it


def storable(value: Any) -> Any:
    """A value SQLite can take: in text, each lone surrogate becomes U+FFFD; anything else as it is."""
    return LONE_SURROGATE.sub("\ufffd", value) if isinstance(value, str) else value


MAX_JSON_DEPTH = 64  # far deeper than any record we or Hermes write; every reader and writer copes with it


def row_id(text: str) -> int | None:
    """``text`` as an SQLite row id, or None: digits only (``typed_whole``; ``isdigit`` accepts ``²``) and
    within INTEGER range."""
    plain = text.strip()
    if plain[:1] in ("+", "-") or len(plain) > 19:
        return None
    try:
        value = typed_whole(plain, "an id")
    except ValueError:
        return None
    return value if value < 2**63 else None


def json_value(raw: Any, fallback: Any = None) -> Any:
    """JSON text (or UTF-8 bytes) parsed, or ``fallback`` when it is not JSON or is nested too deep."""
    text = text_value(raw)
    if not text:
        return fallback
    try:
        value = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return fallback
    return value if json_depth(value) <= MAX_JSON_DEPTH else fallback


def json_error(exc: json.JSONDecodeError) -> str:
    """Where and why JSON text does not parse, as one phrase: ``Invalid control character at line 1
    column 11``. Some of ``json``'s messages end in "at" already (``Invalid control character at``,
    ``Unterminated string starting at``), written to be followed by a position: said once."""
    what = exc.msg.removesuffix(" at")
    return f"{what} at line {exc.lineno} column {exc.colno}"


def json_depth(value: Any) -> int:
    """How deeply lists and objects nest in ``value`` (one nested deeper than ``MAX_JSON_DEPTH`` is walked no
    further). A level at a time, without recursion: a pending batch of 100,000 operations is read on every look."""
    depth, level = 0, [value]
    while level := [node for node in level if isinstance(node, (dict, list))]:
        depth += 1
        if depth > MAX_JSON_DEPTH:
            break
        level = [child for node in level for child in (node.values() if isinstance(node, dict) else node)]
    return depth


def iso_time(ts: Any) -> str | None:
    """Epoch seconds as ISO-8601 UTC, or None when it is no time a calendar can show."""
    try:
        return datetime.fromtimestamp(float(ts), UTC).isoformat(timespec="seconds")
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def clock_time(value: Any) -> float | None:
    """``value`` as a time a clock could have stamped: a number (not a boolean) after 1970 began that a
    calendar can show; else None. Hermes stamps its staged records with its own clock, and 0 or less is a
    wrong clock's (an age from it read 20,795 days)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0 or iso_time(value) is None:
        return None
    return float(value)


def json_object(value: Any) -> Any:
    """``value`` decoded when it is JSON text, as it is when already decoded (a dict or list), else None."""
    if isinstance(value, (dict, list)):
        return value
    return json_value(value) if isinstance(value, str) else None


def decoded_calls(tool_calls: Any) -> list[tuple[int, str | None, str | None, Any]]:
    """(position, call id, tool name, decoded arguments) of each call of a message's tool calls.

    Accepts the stored JSON text or the decoded list, in both shapes Hermes stores:
    OpenAI's ``{id, type, function: {name, arguments}}`` and the flat ``{name, arguments}``;
    anything that is not a call is skipped (its position still counts).
    """
    calls = json_object(tool_calls)
    found = []
    for position, call in enumerate(calls if isinstance(calls, list) else []):
        if not isinstance(call, dict):
            continue
        nested = call.get("function")
        function = nested if isinstance(nested, dict) else call
        call_id, name = call.get("id"), function.get("name")
        found.append(
            (
                position,
                call_id if isinstance(call_id, str) else None,
                name if isinstance(name, str) else None,
                json_object(function.get("arguments")),
            )
        )
    return found


def call_name(call: Any) -> str | None:
    """The tool name of one stored OpenAI-style tool call (a hand-written row may hold anything)."""
    function = call.get("function") if isinstance(call, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    return name if isinstance(name, str) else None
