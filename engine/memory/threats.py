"""What the memory store makes of the threat scan (``engine.safety``).

A write is refused when the scan calls its text dangerous, with the reasons and what to
do instead, so a model can rewrite the fact and retry. Suspicious text is the caller's
to route (staged for an agent, saved with a warning for the user). At prompt-build
time a dangerous entry is replaced by a ``[BLOCKED: …]`` line; the live file keeps the
raw text so it can be found and removed.
"""

from __future__ import annotations

from ..safety import ADVICE, DANGEROUS, MAX_SCAN_CHARS, Verdict, assess, blocked_line

REMOVE_HINT = "Removed from system prompt; use memory(action=remove) to delete the original."

# The invisible code points Hermes 0.19's scan looks for (zero-width characters, the BOM, bidi
# embeddings, overrides and isolates, invisible operators): it blocks an entry holding any of
# them, and lets every other control or invisible character into its prompt as is.
HERMES_INVISIBLE = frozenset(
    "\u200b\u200c\u200d\u2060\ufeff\u202a\u202b\u202c\u202d\u202e\u2062\u2063\u2064\u2066\u2067\u2068\u2069"
)
HERMES_BLOCKS, HERMES_PASSES, HERMES_MAY = "blocks", "passes", "may"


def hermes_verdict(verdict: Verdict) -> str:
    """Whether Hermes's own load-time scan blocks an entry the workbench blocks (``verdict`` dangerous).

    ``HERMES_BLOCKS`` when a finding is a character on its list; ``HERMES_PASSES`` when every
    dangerous finding is a character it never looks at (ESC, BEL, U+200F, tag characters...),
    so a Hermes session's prompt holds the entry as written; else ``HERMES_MAY``: its phrase
    patterns are fewer and narrower than the workbench's rules.
    """
    dangerous = [f.id for f in verdict.findings if f.severity == DANGEROUS]
    codes = [i.removeprefix("invisible_unicode_U+") for i in dangerous if i.startswith("invisible_unicode_U+")]
    if any(chr(int(code, 16)) in HERMES_INVISIBLE for code in codes):
        return HERMES_BLOCKS
    characters_only = all(i.startswith("invisible_unicode_") for i in dangerous)
    return HERMES_PASSES if dangerous and characters_only else HERMES_MAY


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


def hermes_only_blocks(entry: str) -> list[str]:
    """The characters on Hermes's list that ``entry`` holds where the workbench lets it through
    (a ZWJ inside an emoji, a ZWNJ in a Persian word): Hermes's prompt then shows it as
    ``[BLOCKED]`` while the workbench's holds it. Empty when both agree."""
    found = sorted({f"U+{ord(ch):04X}" for ch in entry if ch in HERMES_INVISIBLE})
    return found if found and not assess(entry).dangerous else []


def where_blocked(verdict: Verdict) -> str:
    """Which prompts a dangerous entry is blocked from, in words (doctor, the Memory screen)."""
    return {
        HERMES_BLOCKS: "blocked from every prompt, the workbench's and Hermes's",
        HERMES_PASSES: "blocked from the workbench's prompts but not from Hermes's, whose scan does not look for "
        "these characters: a Hermes session reads the entry as written",
        HERMES_MAY: "blocked from the workbench's prompts; Hermes's own scan, with fewer and narrower patterns, "
        "may let it through",
    }[hermes_verdict(verdict)]


def hermes_only_note(codes: list[str]) -> str:
    """What ``hermes_only_blocks`` found, in words."""
    return (
        f"Hermes's prompt shows it as [BLOCKED]: its scan blocks {', '.join(codes)} wherever it appears (here "
        "it joins letters or an emoji, which the workbench allows, so its own prompt holds the entry)"
    )


def entry_note(entry: str) -> str | None:
    """What a listing says under a live entry the scans flag (None: nothing to say)."""
    if len(entry) > MAX_SCAN_CHARS:
        return "too large to scan: blocked from the workbench's prompts"
    verdict = assess(entry)
    if verdict.dangerous:
        return f"{', '.join(verdict.ids)}: {where_blocked(verdict)}"
    if verdict.findings:
        return f"suspicious ({', '.join(verdict.ids)}): it goes into every prompt as written"
    codes = hermes_only_blocks(entry)
    return hermes_only_note(codes) if codes else None
