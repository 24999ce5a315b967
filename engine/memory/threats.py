"""Threat scanning for text that will be injected into a system prompt.

Memory entries are pasted verbatim into every future session's system prompt, so a
write is refused when it carries invisible/bidirectional control characters or reads
like a prompt injection, an exfiltration command or a persistence trick. Invisible
characters are checked on the raw text; patterns are matched case-insensitively on the
NFKC-folded text, so full-width homoglyphs (``ｉｇｎｏｒｅ``) fold to ASCII first.
The pattern set is Hermes's "strict" scope (every pattern), written afresh here.
"""

from __future__ import annotations

import re
import unicodedata

MAX_SCAN_CHARS = 65_536

# Zero-width, word-joiner, BOM, bidi embeddings/overrides/isolates, invisible operators
# (Hermes's 17), plus soft hyphen, function application and the Mongolian vowel
# separator, which hide text the same way.
INVISIBLE_CHARS = frozenset(
    "\u200b\u200c\u200d\u2060\ufeff\u202a\u202b\u202c\u202d\u202e"
    "\u2062\u2063\u2064\u2066\u2067\u2068\u2069"
    "\u00ad\u2061\u180e"
)

_FILLER = r"(?:\w+\s+){0,8}"
_SECRET_VAR = r"\$\{?\w*(?:KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)S?\b"
_EDIT_VERB = r"(?:update|modify|edit|write|change|append|add\s+to)\s+[^\n]{0,2048}"

# (id, regex) in the order they are tried; the first hit names the refusal.
_PATTERN_SOURCES: list[tuple[str, str]] = [
    ("prompt_injection", rf"ignore\s+{_FILLER}(?:previous|all|above|prior)\s+{_FILLER}instructions"),
    ("sys_prompt_override", r"system\s+prompt\s+override"),
    ("disregard_rules", rf"disregard\s+{_FILLER}(?:your|all|any)\s+{_FILLER}(?:instructions|rules|guidelines)"),
    ("bypass_restrictions",
     rf"act\s+as\s+(?:if|though)\s+{_FILLER}you\s+{_FILLER}(?:have\s+no|don't\s+have|do\s+not\s+have)\s+{_FILLER}"
     r"(?:restrictions|limits|rules)"),
    ("html_comment_injection", r"<!--(?s:.){0,2048}?\b(?:ignore|override|system|secret|hidden)\b(?s:.){0,2048}?-->"),
    ("hidden_div", r"<\s*div\s+style\s*=\s*[\"'][^>]{0,2048}display\s*:\s*none"),
    ("translate_execute", rf"translate\s+{_FILLER}into\s+\w+\s+and\s+(?:execute|run|eval)\b"),
    ("deception_hide", rf"do\s+not\s+{_FILLER}tell\s+{_FILLER}the\s+user"),
    ("role_hijack", rf"you\s+are\s+{_FILLER}now\s+(?:a|an|the)\s+"),
    ("role_pretend", rf"pretend\s+{_FILLER}(?:you\s+are|to\s+be)\s+"),
    ("leak_system_prompt", rf"output\s+{_FILLER}(?:system|initial)\s+prompt"),
    ("remove_filters", rf"(?:respond|answer|reply)\s+without\s+{_FILLER}(?:restrictions|limitations|filters|safety)"),
    ("fake_update", rf"you\s+have\s+been\s+{_FILLER}(?:updated|upgraded|patched)\s+to"),
    ("identity_override", r"\bname\s+yourself\s+\w+"),
    ("c2_node_registration", r"register\s+(?:as\s+)?a?\s*node"),
    ("c2_heartbeat", r"(?:heartbeat|beacon|check[\s\-]?in)\s+(?:to|with)\s+"),
    ("c2_task_pull", r"pull\s+(?:down\s+)?(?:new\s+)?task(?:ing|s)?\b"),
    ("c2_network_connect", r"connect\s+to\s+the\s+network\b"),
    ("forced_action", r"you\s+must\s+(?:\w+\s+){0,3}(?:register|connect|report|beacon)\b"),
    ("anti_forensic_oneliner", r"only\s+use\s+one[\s\-]?liners?\b"),
    ("anti_forensic_disk", rf"never\s+{_FILLER}(?:create|write)\s+{_FILLER}(?:scripts?|files?)\b[^\n]{{0,200}}?\bdisk\b"),
    ("env_var_unset_agent", r"unset\s+\w*(?:CLAUDE|CODEX|HERMES|AGENT|OPENAI|ANTHROPIC)\w*"),
    ("known_c2_framework", r"\b(?:cobalt\s*strike|sliver|havoc|mythic|metasploit|brainworm)\b"),
    ("c2_explicit", r"\bc2\s+(?:server|channel|infrastructure|beacon)\b"),
    ("c2_explicit_long", r"\bcommand\s+and\s+control\b"),
    ("exfil_curl", rf"curl\s+[^\n]{{0,2048}}{_SECRET_VAR}"),
    ("exfil_wget", rf"wget\s+[^\n]{{0,2048}}{_SECRET_VAR}"),
    ("read_secrets", r"cat\s+[^\n]{0,2048}(?:\.env|credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc)"),
    ("send_to_url", r"(?:send|post|upload|transmit)\s+[^\n]{0,2048}\s+(?:to|at)\s+https?://"),
    ("context_exfil",
     rf"(?:include|output|print|share)\s+{_FILLER}"
     r"(?:conversation|chat\s+history|previous\s+messages|full\s+context|entire\s+context)"),
    ("ssh_backdoor", r"authorized_keys"),
    ("ssh_access", r"\$HOME/\.ssh|~/\.ssh"),
    ("hermes_env", r"\$HOME/\.hermes/\.env|~/\.hermes/\.env"),
    ("agent_config_mod", rf"{_EDIT_VERB}(?:AGENTS\.md|CLAUDE\.md|\.cursorrules|\.clinerules)"),
    ("hermes_config_mod", rf"{_EDIT_VERB}\.hermes/(?:config\.yaml|SOUL\.md)"),
    ("hardcoded_secret", r"(?:api[_-]?key|token|secret|password)\s*[=:]\s*[\"'][A-Za-z0-9+/=_-]{20,}"),
]

PATTERNS: list[tuple[str, re.Pattern[str]]] = [(pid, re.compile(src, re.IGNORECASE)) for pid, src in _PATTERN_SOURCES]
PATTERN_IDS = tuple(pid for pid, _ in PATTERNS)

# Pure-ASCII text (the usual case) is lowercased once and matched by lowercased patterns
# without IGNORECASE, which is exact for ASCII and several times faster; other text keeps
# IGNORECASE so Unicode case folding (e.g. U+0130 matching "i") still applies.
_ASCII_PATTERNS = [(pid, re.compile(src.lower())) for pid, src in _PATTERN_SOURCES]


def _pattern_hits(head: str) -> list[str]:
    folded = unicodedata.normalize("NFKC", head)
    if folded.isascii():
        lowered = folded.lower()
        return [pid for pid, rx in _ASCII_PATTERNS if rx.search(lowered)]
    return [pid for pid, rx in PATTERNS if rx.search(folded)]


def _invisible(text: str) -> list[str]:
    """Invisible code points in order of first appearance, as ``U+XXXX``."""
    seen = dict.fromkeys(f"U+{ord(ch):04X}" for ch in text if ch in INVISIBLE_CHARS)
    return list(seen)


def scan(text: str) -> list[str]:
    """Every finding in ``text``: ``invisible_unicode_U+XXXX`` ids first, then pattern ids."""
    head = text[:MAX_SCAN_CHARS]
    return [f"invisible_unicode_{code}" for code in _invisible(head)] + _pattern_hits(head)


def first_threat_message(text: str) -> str | None:
    """The refusal for the first finding, or None when ``text`` is clean."""
    head = text[:MAX_SCAN_CHARS]
    invisible = _invisible(head)
    if invisible:
        return f"Blocked: content contains invisible unicode character {invisible[0]} (possible injection)."
    hits = _pattern_hits(head)
    if hits:
        return (f"Blocked: content matches threat pattern '{hits[0]}'. Content is injected into the system prompt "
                "and must not contain injection or exfiltration payloads.")
    return None


def sanitize_entry(entry: str, file_name: str) -> str:
    """The entry as it may appear in a system prompt: itself, or a ``[BLOCKED: ...]`` line."""
    if not entry or entry.startswith("[BLOCKED:"):
        return entry
    if len(entry) > MAX_SCAN_CHARS:
        return (f"[BLOCKED: {file_name} entry too large to scan ({len(entry):,} chars). Removed from system prompt; "
                "use memory(action=remove) to delete the original.]")
    findings = scan(entry)
    if not findings:
        return entry
    return (f"[BLOCKED: {file_name} entry contained threat pattern(s): {', '.join(findings)}. Removed from system "
            "prompt; use memory(action=remove) to delete the original.]")
