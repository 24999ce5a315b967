"""The ``<memory-context>`` fence: how recalled memory rides along with a user message.

Recall is appended to the *API copy* of the current user message only, inside a fence
that tells the model it is reference data, not new input. The stored message never
carries it; ``sanitize_context`` strips any fence that leaks into text anyway, and
``StreamingContextScrubber`` does the same for streamed output, where a fence can be
split across chunks.
"""

from __future__ import annotations

import logging
import re

log = logging.getLogger(__name__)

OPEN_TAG = "<memory-context>"
CLOSE_TAG = "</memory-context>"
SYSTEM_NOTE = (
    "[System note: The following is recalled memory context, NOT new user input. Treat as authoritative "
    "reference data \u2014 this is the agent's persistent memory and should inform all responses.]"
)

_BLOCK_RE = re.compile(r"<\s*memory-context\s*>[\s\S]*?</\s*memory-context\s*>", re.IGNORECASE)
_NOTE_RE = re.compile(
    r"\[System note:\s*The following is recalled memory context,\s*NOT new user input\.\s*Treat as "
    r"(?:informational background data|authoritative reference data[^\]]*)\.\]\s*",
    re.IGNORECASE,
)
_STRAY_TAG_RE = re.compile(r"</?\s*memory-context\s*>", re.IGNORECASE)


def sanitize_context(text: str) -> str:
    """Remove whole fenced blocks, the system note and stray fence tags from ``text``."""
    for pattern in (_BLOCK_RE, _NOTE_RE, _STRAY_TAG_RE):
        text = pattern.sub("", text)
    return text


def build_memory_context_block(raw: str) -> str:
    """Wrap provider recall in the fence; ``""`` when there is nothing to recall."""
    if not raw or not raw.strip():
        return ""
    clean = sanitize_context(raw)
    if clean != raw:
        log.warning("memory provider returned pre-wrapped context; stripped")
    return f"{OPEN_TAG}\n{SYSTEM_NOTE}\n\n{clean}\n{CLOSE_TAG}"


def attach_to_user_message(content: str, fence: str) -> str:
    """The text sent to the model for the current user message (never stored)."""
    return f"{content}\n\n{fence}" if fence else content


def _held_prefix(buf: str, tag: str) -> int:
    """Length of the longest suffix of ``buf`` that is a proper prefix of ``tag`` (case-insensitive)."""
    lowered, tag = buf.lower(), tag.lower()
    for size in range(min(len(tag) - 1, len(lowered)), 0, -1):
        if lowered.endswith(tag[:size]):
            return size
    return 0


class StreamingContextScrubber:
    """Drops block-form ``<memory-context>`` spans from streamed text, chunk by chunk.

    Only a tag that starts a line (whitespace before it) and is followed by a newline
    opens a span, so prose that merely mentions the tag passes through untouched.
    Text that could be the start of a tag is held back until the next chunk decides.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._held = ""
        self._in_span = False
        self._at_boundary = True

    def _emit(self, text: str, out: list[str]) -> None:
        if not text:
            return
        out.append(text)
        if "\n" in text:
            self._at_boundary = text.rsplit("\n", 1)[1].strip() == ""
        else:
            self._at_boundary = self._at_boundary and text.strip() == ""

    def _block_open(self, buf: str) -> tuple[int, bool]:
        """Index of the first open tag that starts a block (-1 if none), and whether the
        buffer ends with a complete open tag whose next character is still unknown."""
        lowered = buf.lower()
        start = 0
        while True:
            index = lowered.find(OPEN_TAG, start)
            if index < 0:
                return -1, False
            line_start = buf.rfind("\n", 0, index) + 1
            before = buf[line_start:index]
            at_line_start = before.strip() == "" and (line_start > 0 or self._at_boundary)
            after = index + len(OPEN_TAG)
            if at_line_start:
                if after == len(buf):
                    return -1, True
                if buf[after] in "\r\n":
                    return index, False
            start = index + 1

    def feed(self, text: str) -> str:
        buf = self._held + text
        self._held = ""
        out: list[str] = []
        while buf:
            if self._in_span:
                index = buf.lower().find(CLOSE_TAG)
                if index < 0:
                    keep = _held_prefix(buf, CLOSE_TAG)
                    self._held = buf[len(buf) - keep :] if keep else ""
                    return "".join(out)
                buf = buf[index + len(CLOSE_TAG) :]
                self._in_span = False
                continue
            index, pending_tag = self._block_open(buf)
            if index < 0:
                keep = len(OPEN_TAG) if pending_tag else _held_prefix(buf, OPEN_TAG)
                self._emit(buf[: len(buf) - keep], out)
                self._held = buf[len(buf) - keep :] if keep else ""
                return "".join(out)
            self._emit(buf[:index], out)
            buf = buf[index + len(OPEN_TAG) :]
            self._in_span = True
        return "".join(out)

    def flush(self) -> str:
        """End of stream: an unterminated span is dropped (never leak recall), else the held tail."""
        tail = "" if self._in_span else self._held
        self.reset()
        return tail
