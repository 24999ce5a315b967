"""A memory file that is not valid UTF-8: where its bytes do not decode, and the text that mends it.

Hermes reads MEMORY.md and USER.md as UTF-8 and does not catch a decoding error, so one
stray byte (a Latin-1 ``é`` or ``§`` an editor saved, a truncated paste) makes its memory
tool fail with a UnicodeDecodeError on every call; the workbench refuses to write such a
file (saving it as empty would wipe it). The repair (``repair.replace_bytes``) writes
the file again with each sequence of bytes that does not decode replaced by U+FFFD,
the replacement character, exactly as Python's ``errors="replace"`` reads it: the
Unicode standard's mark for it, one character per sequence (so a store's size hardly
moves), and no threat scan blocks it, where ``\\xNN`` escapes would grow the text four
times and the workbench's scan reads ``\\x85`` as a hidden control character. The byte
values are not lost: the repair keeps the file's exact bytes in a copy beside it first
(``COPY_KIND``), and every listing names each sequence by line, byte offset and hex.
Before the repair, a person sees each sequence as ``\\xNN`` (``shown``), so the preview's
diff says what each becomes. A line holding only the byte A7 is the entries' delimiter saved as
Latin-1 or cp1252 (an editor's usual cause): it is read as, and written back as, ``§``, or the
repair would make one entry of them all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

COPY_KIND = "not-utf8"  # the kept copy: memories/<FILE>.not-utf8.<unix time> (Hermes reads only the file)
CONTEXT = 20  # characters of the line shown on each side of a sequence that does not decode
_ESCAPED = re.compile("[\udc80-\udcff]+")  # what ``surrogateescape`` makes of bytes that do not decode
LATIN1_DELIMITER = re.compile(rb"(?<![^\r\n])\xa7(?![^\r\n])")  # a line of '§' saved as Latin-1 or cp1252


@dataclass(frozen=True)
class Undecodable:
    """One run of bytes that do not decode as UTF-8: where it is and what the line around it reads."""

    start: int  # byte offset in the file, from 0 (a byte-order mark counted)
    data: bytes
    line: int
    context: str  # the line around it, each byte that does not decode shown as \xNN

    @property
    def hex(self) -> str:
        return " ".join(f"{byte:02X}" for byte in self.data)

    def describe(self, entry: int | None = None) -> str:
        """``line 9 (entry 3), byte 1,747: A7 in "…"``."""
        where = f"line {self.line}" + (f" (entry {entry})" if entry is not None else "")
        return f'{where}, byte {self.start:,}: {self.hex} in "{self.context}"'

    def to_dict(self) -> dict[str, object]:
        return {"line": self.line, "byte": self.start, "hex": self.hex, "context": self.context}


def undecodable(data: bytes) -> list[Undecodable]:
    """Every run of bytes in ``data`` that does not decode as UTF-8, in file order (one pass)."""
    text = data.decode("utf-8", "surrogateescape")
    found: list[Undecodable] = []
    byte, line, last = 0, 1, 0
    for run in _ESCAPED.finditer(text):
        between = text[last : run.start()]
        byte += len(between.encode("utf-8"))
        line += between.count("\n")
        bad = run.group().encode("utf-8", "surrogateescape")
        head = text[text.rfind("\n", 0, run.start()) + 1 : run.start()][-CONTEXT:]
        stop = text.find("\n", run.end())
        tail = text[run.end() : len(text) if stop < 0 else stop][:CONTEXT]
        context = shown((head + run.group() + tail).encode("utf-8", "surrogateescape"))
        found.append(Undecodable(byte, bad, line, context))
        byte += len(bad)
        last = run.end()
    return found


def shown(data: bytes) -> str:
    """``data`` as a person sees it before the repair: each byte that does not decode as ``\\xNN``."""
    return data.decode("utf-8", "backslashreplace")


def delimited(data: bytes) -> bytes:
    """``data`` with each line holding only the byte A7 (a '§' line saved as Latin-1) as UTF-8's '§'."""
    return LATIN1_DELIMITER.sub("§".encode(), data)


def replaced(data: bytes) -> str:
    """The text the repair writes: each '§' line saved as Latin-1 as '§', and each other sequence that
    does not decode as one U+FFFD (a BOM kept)."""
    return delimited(data).decode("utf-8", "replace")


def advice(target: str) -> str:
    """What mends such a file, for every refusal and finding that meets one."""
    return (
        f"`workbench memory repair --target {target} --replace-invalid-bytes` (or r on the Memory screen) replaces "
        "each sequence of bytes that does not decode with U+FFFD, keeping the file's exact bytes in a copy beside it"
    )
