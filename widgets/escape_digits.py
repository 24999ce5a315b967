"""Esc followed at once by a digit arrives as the two keys a person pressed.

Textual 8.2.8 reads ESC and a digit in one go as macOS's Option+digit character
(``¡ ™ £ ¢ ∞ § ¶ • ª º``): Esc to leave the Run box and a digit to change screen, pressed
quickly (or arriving in one read over a slow link), typed ``¡`` into the box, or did nothing
elsewhere. A Mac whose Option key types those characters sends the characters themselves,
not ESC and a digit, so only a terminal set to send Option as Meta is affected, and this app
binds no Alt+digit.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual import events
from textual.drivers import linux_driver

from .paste_escapes import PasteParser

ESC = "\x1b"
DIGITS = frozenset("0123456789")


class KeyParser(PasteParser):
    def _sequence_to_key_events(self, sequence: str, alt: bool = False) -> Iterable[events.Key]:
        if len(sequence) == 2 and sequence[0] == ESC and sequence[1] in DIGITS:
            yield events.Key("escape", ESC)
            yield events.Key(sequence[1], sequence[1])
            return
        yield from super()._sequence_to_key_events(sequence, alt)


def install() -> None:
    """Make the Linux driver (the one Textual uses on Linux and macOS) read input through ``KeyParser``."""
    linux_driver.XTermParser = KeyParser
