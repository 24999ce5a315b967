"""Text a command reads from stdin (``-``), with the same limits and refusals wherever it is taken."""

from __future__ import annotations

import sys
from typing import BinaryIO

from engine.errors import WorkbenchError

STDIN_LIMIT = 1 << 20  # bytes: far beyond any store's or SKILL.md's limit, short of reading a runaway pipe whole


def stdin_text(what: str, example: str, whole: bool = False) -> str:
    """What stdin holds, as UTF-8 (one final line break dropped, as ``echo`` adds it, unless ``whole``:
    a file's own); ``what`` it is read as (``the entry``), and ``example``, a command that pipes it in,
    for a closed stdin's refusal."""
    if sys.stdin is None:  # (started with stdin closed: `<&-`)
        raise WorkbenchError(f"stdin is closed: pipe {what} in (`{example}`); nothing was written.")
    text = bounded_text(sys.stdin.buffer, "stdin", f", far more than {what}", "nothing was written")
    if not whole:
        text = text.removesuffix("\n").removesuffix("\r")
    if not text.strip():
        raise WorkbenchError(f"stdin held no text ({what} is read from it); nothing was written.")
    return text


def bounded_text(stream: BinaryIO, source: str, more: str, outcome: str) -> str:
    """At most ``STDIN_LIMIT`` bytes of ``stream`` as UTF-8, refused (``source`` named, ``outcome`` said)
    when there are more (``more`` saying how much that is) or they are not UTF-8: stdin's and a file's."""
    data = stream.read(STDIN_LIMIT + 1)
    if len(data) > STDIN_LIMIT:
        raise WorkbenchError(f"{source} holds more than {STDIN_LIMIT:,} bytes{more}; {outcome}.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WorkbenchError(f"{source} is not UTF-8 text (byte {exc.start:,} cannot be read); {outcome}.") from None
