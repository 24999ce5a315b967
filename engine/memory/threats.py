"""What the memory store makes of the threat scan (``engine.safety``).

A write is refused when the scan calls its text dangerous, with the reasons and what to
do instead, so a model can rewrite the fact and retry. Suspicious text is the caller's
to route (staged for an agent, saved with a warning for the user). At prompt-build
time a dangerous entry is replaced by a ``[BLOCKED: …]`` line; the live file keeps the
raw text so it can be found and removed.
"""

from __future__ import annotations

from ..safety import ADVICE, MAX_SCAN_CHARS, Verdict, assess, blocked_line

REMOVE_HINT = "Removed from system prompt; use memory(action=remove) to delete the original."


def scan(text: str) -> list[str]:
    """The ids of every finding in ``text`` (empty when clean)."""
    return assess(text).ids


def refusal_message(verdict: Verdict) -> str:
    first = verdict.worst
    if first.id.startswith("invisible_unicode_U+"):
        head = (
            f"Blocked: content contains invisible unicode character {first.id.rsplit('_', 1)[1]} (possible injection)."
        )
    else:
        head = (
            f"Blocked: content matches threat pattern '{first.id}'. Content is injected into the system prompt "
            "and must not contain injection or exfiltration payloads."
        )
    return f"{head} Why: {'; '.join(verdict.reasons)}. {ADVICE}"


def warning_message(verdict: Verdict) -> str:
    return (
        f"Saved, but flagged as suspicious: {'; '.join(verdict.reasons)}. It will be in every future system "
        "prompt; check that you meant it."
    )


def first_threat_message(text: str) -> str | None:
    """The refusal for dangerous ``text``, or None when it may be stored."""
    verdict = assess(text)
    return refusal_message(verdict) if verdict.dangerous else None


def entry_flags(entry: str) -> Verdict:
    """The verdict for one live entry, for screens that mark flagged entries."""
    return assess(entry)


def sanitize_entry(entry: str, file_name: str) -> str:
    """The entry as it may appear in a system prompt: itself, or a ``[BLOCKED: ...]`` line.

    Nothing exempts an entry from the scan, an entry starting with ``[BLOCKED:`` included.
    """
    if not entry:
        return entry
    if len(entry) > MAX_SCAN_CHARS:
        return (
            f"[BLOCKED: {file_name} entry too large to scan ({len(entry):,} chars). Removed from system prompt; "
            "use memory(action=remove) to delete the original.]"
        )
    verdict = assess(entry)
    return blocked_line(f"{file_name} entry", verdict, REMOVE_HINT) if verdict.dangerous else entry
