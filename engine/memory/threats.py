"""What the memory store makes of the threat scan (``engine.safety``).

A write is refused when the scan calls its text dangerous, with the reasons and what to
do instead, so a model can rewrite the fact and retry. Suspicious text is the caller's
to route (staged for an agent, saved with a warning for the user). At prompt-build
time a dangerous entry is replaced by a ``[BLOCKED: …]`` line; the live file keeps the
raw text so it can be found and removed.
"""

from __future__ import annotations

from ..safety import ADVICE, DANGEROUS, MAX_SCAN_CHARS, Finding, Verdict, assess, blocked_line

REMOVE_HINT = "Removed from system prompt; use memory(action=remove) to delete the original."

# The invisible code points Hermes 0.19's scan looks for (zero-width characters, the BOM, bidi
# embeddings, overrides and isolates, invisible operators): it blocks an entry holding any of
# them in its first MAX_SCAN_CHARS characters, and no other control or invisible character.
HERMES_INVISIBLE = frozenset(
    "\u200b\u200c\u200d\u2060\ufeff\u202a\u202b\u202c\u202d\u202e\u2062\u2063\u2064\u2066\u2067\u2068\u2069"
)
HERMES_SKIPS = "[BLOCKED:"  # Hermes's load-time scan passes an entry starting so, unscanned


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
    """The verdict for one live entry, for screens that mark flagged entries. One past ``MAX_SCAN_CHARS`` is
    blocked whole (``sanitize_entry``), so that is its one reason: what a scan of its start found (a timeout
    on megabytes of base64) stood beside "too large to scan" as a second, different one."""
    if len(entry) > MAX_SCAN_CHARS:
        reason = f"is {len(entry):,} characters, more than the scan reads ({MAX_SCAN_CHARS:,}), so it is blocked whole"
        return Verdict(DANGEROUS, (Finding("too_large_to_scan", DANGEROUS, reason),))
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


def hermes_characters(entry: str) -> list[str]:
    """The characters on Hermes's list that its load-time scan finds in ``entry`` (``U+200B``...):
    Hermes's prompt shows it as ``[BLOCKED]`` for them. Certain, unlike its phrase patterns,
    which differ from the workbench's rules both ways and are not modelled here."""
    if entry.startswith(HERMES_SKIPS):
        return []
    return sorted({f"U+{ord(ch):04X}" for ch in entry[:MAX_SCAN_CHARS] if ch in HERMES_INVISIBLE})


def prompt_note(entry: str) -> str | None:
    """Which prompts block ``entry``, in words, when either scan has something to say (doctor,
    ``memory show``, the Memory screen): the workbench's verdict, then what is known of Hermes's."""
    hermes = hermes_characters(entry)
    verdict = assess(entry) if len(entry) <= MAX_SCAN_CHARS else None
    if verdict is None:
        ours = "too large to scan: blocked from the workbench's prompts"
    elif verdict.dangerous:
        ours = f"{', '.join(verdict.ids)}: blocked from the workbench's prompts"
    elif verdict.findings:
        ours = f"suspicious ({', '.join(verdict.ids)}): in the workbench's prompts as written"
    elif hermes:
        ours = "the workbench's prompts hold it (it allows these characters where they sit)"
    else:
        return None
    if entry.startswith(HERMES_SKIPS):
        theirs = f"Hermes's prompts hold it as written: its scan skips an entry starting with {HERMES_SKIPS}"
    elif hermes:
        theirs = f"Hermes's prompts show it as [BLOCKED] (its scan blocks {', '.join(hermes)} wherever it is)"
    elif verdict is not None and verdict.dangerous and all(i.startswith("invisible_unicode_") for i in verdict.ids):
        theirs = (
            "Hermes's scan does not look for these characters: its prompts hold it unless a phrase pattern "
            "of its own matches"
        )
    else:
        theirs = "Hermes judges its text with phrase patterns of its own"
    return f"{ours}; {theirs}"
