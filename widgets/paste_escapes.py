"""Bracketed pastes that hold an ESC arrive whole.

Textual 8.2.8's xterm parser reads an ESC inside a bracketed paste as the start of an
escape sequence: the characters after it leave the paste and arrive as key presses (before
the paste, which comes out scrambled, and as keys a screen may act on). ``PasteParser``
stands in front of it: between the paste's start and end markers it writes each ESC as
``MARK + "e"`` (and a ``MARK`` already there as ``MARK + "m"``), which the parser passes
through as text, and turns them back in the ``Paste`` event. ``MARK`` is a noncharacter,
which Unicode reserves for a program's internal use.

The markers may be split across reads: an end marker's first part inside a paste is held
back until the next read says what it is; a start marker's first part is passed on (it
may be a lone ESC key) and recognised when the rest arrives, unless the parser gave up
waiting for it first and sent it on as keys.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from textual import events
from textual.drivers import linux_driver
from textual.message import Message

from engine.textsafety import normalise_line_endings, visible, without_controls

START, END = "\x1b[200~", "\x1b[201~"
MARK = "\ufdd0"
_MARKED = re.compile(MARK + "(.)", re.DOTALL)


def first_line(text: str, drop: bool = False) -> str:
    """What a one-line box takes of pasted text: its first line, tabs as spaces (a box draws a tab as
    a run of blanks), its control and invisible characters as symbols (an ``Input`` draws its text
    raw: a pasted ESC sequence would drive the terminal), or dropped with ``drop``."""
    line = normalise_line_endings(text).split("\n")[0].replace("\t", " ")
    return without_controls(line) if drop else visible(line)


def _escaped(text: str) -> str:
    return text.replace(MARK, MARK + "m").replace("\x1b", MARK + "e")


def _unescaped(text: str) -> str:
    return _MARKED.sub(lambda m: "\x1b" if m.group(1) == "e" else MARK, text)


def _prefix_at_end(text: str, marker: str) -> int:
    """How many characters at the end of ``text`` are the start of ``marker`` (but not all of it)."""
    return next((n for n in range(min(len(text), len(marker) - 1), 0, -1) if marker.startswith(text[-n:])), 0)


class PasteParser(linux_driver.XTermParser):
    def __init__(self, debug: bool = False) -> None:
        super().__init__(debug)
        self._pasting = False
        self._held = ""  # inside a paste: the start of what may be its end marker
        self._started = ""  # outside: the start of a start marker, already passed on

    def feed(self, data: str) -> Iterable[Message]:
        guarded = self._guarded(data)
        if data and not guarded:  # all held back (an empty feed is the end of input to the parser)
            return
        for event in super().feed(guarded):
            yield self._restored(event)

    def tick(self) -> Iterable[Message]:
        for event in super().tick():
            self._started = ""  # a sequence waited too long and went out as keys: no marker is coming
            yield self._restored(event)

    @staticmethod
    def _restored(event: Message) -> Message:
        if isinstance(event, events.Paste) and MARK in event.text:
            return events.Paste(_unescaped(event.text))
        return event

    def _guarded(self, data: str) -> str:
        out: list[str] = []
        if self._started and not self._pasting:
            rest = START[len(self._started) :]
            if data and rest.startswith(data):  # still only part of it
                self._started += data
                return data
            if data.startswith(rest):  # the rest of a start marker split across reads
                out.append(rest)
                data, self._pasting = data[len(rest) :], True
            self._started = ""
        text, self._held = self._held + data, ""
        while text:
            if self._pasting:
                end = text.find(END)
                if end < 0:
                    keep = _prefix_at_end(text, END) if data else 0  # (the final feed keeps nothing back)
                    out.append(_escaped(text[: len(text) - keep]))
                    self._held = text[len(text) - keep :]
                    break
                out.append(_escaped(text[:end]) + END)
                text, self._pasting = text[end + len(END) :], False
            else:
                start = text.find(START)
                if start < 0:
                    out.append(text)
                    self._started = text[len(text) - _prefix_at_end(text, START) :]
                    break
                out.append(text[: start + len(START)])
                text, self._pasting = text[start + len(START) :], True
        return "".join(out)
