"""Problem notices: a damaged state.db, an unreadable file, a read that failed.

Their text says what broke, what was not done and how to recover, up to fifteen lines in a
notice, and two or three arriving together covered the screen at 80x24. So each is said in one
line, what to do first (``headline``), the newest in place of the one before, and help (``?``)
lists them whole, newest first.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from textual.message import Message
from textual.notifications import Notification, SeverityLevel

from widgets.literal import cut_cells

from .screens.toast import toast_room

KEPT = 10  # the problems help lists
TITLE_TAIL = " · ? for more"
_ASIDE = re.compile(r"\s*\([^()]*\)")
_COMMAND = re.compile(r"`(workbench [^`]+)`")


class ProblemSaid(Message):
    """A problem to say (posted from any thread: the engine logs its warnings from workers)."""

    def __init__(self, text: str, title: str, severity: SeverityLevel = "warning") -> None:
        super().__init__()
        self.text = text
        self.title = title
        self.severity = severity


def headline(text: str, home: Path, screen_width: int) -> str:
    """``text`` in one line of a notice on a screen ``screen_width`` wide, what to do first: the first
    workbench command it names outside its asides, then its first sentence without its asides in
    parentheses (SQLite's own words, a process's name), the home's own folder left out of its paths
    (``workbench doctor: state.db is damaged``); cut with … past the width. Help has it whole."""
    plain = text.replace(f"{home}{os.sep}", "")
    bare = plain
    while (shorter := _ASIDE.sub("", bare)) != bare:  # (innermost first: asides nest)
        bare = shorter
    what = bare.split(". ")[0].strip().rstrip(".") or plain.split(". ")[0]
    command = _COMMAND.search(bare)  # (one only an aside names, ``(see `workbench memory history`)``, is no step)
    line = f"{command[1]}: {what}" if command else what
    return cut_cells(line, toast_room(screen_width))


def kept(said: list[str], text: str) -> list[str]:
    """The problems help lists once ``text`` is said: newest first, each once, at most ``KEPT``."""
    return [text, *(old for old in said if old != text)][:KEPT]


def is_problem(notice: Notification) -> bool:
    """Whether a notice is a problem's one line (one is shown at a time)."""
    return notice.title.endswith(TITLE_TAIL)
