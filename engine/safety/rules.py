"""What hostile text says: intent rules per language and shell-command rules.

Each rule names the view it reads (see ``normalize``), a severity and a reason in plain
words. ``dangerous`` rules describe text with no benign reading in a memory entry or a
system prompt (an instruction override, a forged prompt header, a reverse shell);
``suspicious`` rules describe text that is sometimes legitimate (a secret pasted into
memory, a send-to-URL instruction) and is shown to a person before it is trusted. Two
suspicious findings from different families add up to dangerous (see ``scan``).

Non-English patterns are written as they read after normalisation (case folded, marks
stripped: "é" matches as "e", Russian "й" as "и"); ``Rule.source`` applies the same folding
to each pattern so either spelling works in the source.
"""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import regex

from .gate_table import GATES
from .normalize import strip_marks
from .prefilter import Gate, gate

DANGEROUS, SUSPICIOUS = "dangerous", "suspicious"


_FLAGS = regex.IGNORECASE | regex.V1


@dataclass(frozen=True)
class Rule:
    """One rule. Its pattern is folded, its gates looked up and its regexes compiled on first use, so
    importing the rules costs nothing: folding every pattern took about 10 ms of each process's start,
    compiling them half a second of its first scan, and most processes never scan."""

    id: str
    severity: str
    view: str  # plain | skeleton | folded | compact
    written: str  # the pattern as written here (``source`` is it folded)
    reason: str
    family: str

    @cached_property
    def source(self) -> str:
        """The pattern, folded as the views are."""
        return strip_marks(unicodedata.normalize("NFKC", self.written))

    @cached_property
    def il_source(self) -> str | None:
        """Folded/compact rules: the pattern with "l" read as "i" (lgnore)."""
        return self.source.replace("l", "i") if self.view in ("folded", "compact") else None

    @cached_property
    def gate(self) -> Gate:
        """Literals a match must contain (see ``prefilter``), case-folded."""
        return _gate(self.source)

    @cached_property
    def gate_il(self) -> Gate:
        return _gate(self.il_source) if self.il_source is not None else ()

    @cached_property
    def pattern(self) -> regex.Pattern:
        return regex.compile(self.source, _FLAGS)

    @cached_property
    def pattern_il(self) -> regex.Pattern | None:
        return regex.compile(self.il_source, _FLAGS) if self.il_source is not None else None

    def compiled(self, il: bool) -> regex.Pattern:
        """The pattern, or (``il``) its "l read as i" variant, which only folded/compact rules have."""
        pattern = self.pattern_il if il else self.pattern
        if pattern is None:
            raise ValueError(f"rule {self.id} has no 'l read as i' pattern")
        return pattern


def _digest(source: str) -> str:
    return hashlib.blake2b(source.encode("utf-8"), digest_size=8).hexdigest()


def _gate(source: str) -> Gate:
    """The pattern's gate from ``gate_table`` (deriving every gate took 60-120 ms of each process's
    start), or derived now for a pattern the table does not know: one edited since it was written."""
    known = GATES.get(_digest(source))
    return gate(source) if known is None else tuple(frozenset(choices) for choices in known)


_W = r"(?:[\w'’]++\s++){0,6}"  # up to six filler words (possessive inside: no backtracking into a word)
_PRIOR = r"(?:all|any|every|each|the|your|my|these|those|previous|prior|earlier|above|preceding|foregoing|original|initial|existing|system|safety|developer|old|former)"
_ORDERS = r"(?:instructions?|directions?|directives?|rules|guidelines|guidance|guardrails|prompts?|constraints|policies|orders|commands|programming|restrictions|context)"
_FORGET = r"(?:ignore|disregard|forget|override|bypass|discard|drop|abandon|skip|neglect|dismiss|overrule|throw\s+away|set\s+aside|stop\s+following|do\s+not\s+follow|don'?t\s+follow)"
_NO_LIMITS = r"(?:filter(?:s|ing)?|restrictions?|limitations?|limits|guardrails|safeguards|censorship|safety|ethics|moral\w*|content\s+polic\w+|rules)"
_SECRET_WORDS = r"(?:api[\s_-]?keys?|secrets?|credentials?|passwords?|passwd|tokens?|private\s+keys?|ssh\s+keys?|env(?:ironment)?\s+variables|\.env\b|cookies?|session\s+ids?|keychain)"
_SENSITIVE_PATH = (
    r"(?:/etc/(?:passwd|shadow|sudoers)|\.ssh/(?:id_\w+|authorized_keys|known_hosts)|\.aws/credentials|"
    r"\.netrc|\.pgpass|\.npmrc|\.pypirc|\.git-credentials|\.kube/config|\.docker/config\.json|"
    r"\.hermes/\.env|(?<![\w.])\.env(?![\w.-])|\bid_(?:rsa|ed25519|ecdsa|dsa)\b|credentials\.json|"
    r"\.bash_history|keychain|wallet\.dat)"
)
_SECRET_VAR = r"\$\{?\w*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH)\w*\}?"
_NET_TOOL = r"(?:nc|ncat|netcat|socat|telnet|curl|wget|ssh|scp|rsync|openssl\s+s_client)"
_SHELL = r"(?:sudo\s+)?(?:ba|z|da|k|fi)?sh|python[23]?|perl|ruby|node|php|iex|powershell|pwsh|source"
_AI = r"(?:ai|assistant|model|agent|llm|chatbot|bot|gpt|claude|hermes)"

ENGLISH = [
    Rule(
        "prompt_injection",
        DANGEROUS,
        "folded",
        rf"\b{_FORGET}\s+{_W}{_PRIOR}\s+{_W}{_ORDERS}\b",
        "tells the assistant to drop its instructions",
        "override",
    ),
    Rule(
        "forget_everything",
        DANGEROUS,
        "folded",
        r"\b(?:forget|ignore|disregard)\s+(?:about\s+)?(?:everything|all(?:\s+of)?\s+(?:that|this|it)|what(?:ever)?)\s+"
        r"(?:you\s+(?:were|have\s+been|had\s+been|was)\s+(?:told|taught|given|instructed)|(?:you\s+)?(?:know|learned)|"
        r"(?:written\s+|said\s+|stated\s+)?(?:above|before|earlier|previously|so\s+far))",
        "tells the assistant to forget what it was told",
        "override",
    ),
    Rule(
        "ignore_above",
        DANGEROUS,
        "folded",
        r"\b(?:ignore|disregard|forget)\s+(?:all\s+|everything\s+)?(?:of\s+)?(?:the\s+)?(?:above|preceding|prior\s+text)\b",
        "tells the assistant to ignore the text above",
        "override",
    ),
    Rule(
        "new_rules",
        DANGEROUS,
        "folded",
        r"\b(?:your\s+)?(?:new|real|true|actual|updated|only)\s+(?:system\s+)?(?:instructions|rules|directives|orders|"
        r"system\s+prompt)\s+(?:are|is|follow|say|:)|\byour\s+(?:real|true|actual|secret|hidden)\s+(?:task|mission|goal|"
        r"job|purpose|instructions|orders)\b|\b(?:treat|regard|consider)\s+(?:this|the\s+following|it|these|what\s+follows)\s+"
        r"as\s+(?:an?\s+)?(?:\w++\s++){0,2}(?:system|developer|admin\w*|operator)\s+(?:message|prompt|instructions?|orders?)\b|"
        r"\bnew\s+system\s+instructions\b",
        "announces new instructions for the assistant",
        "override",
    ),
    Rule(
        "rules_void",
        DANGEROUS,
        "folded",
        r"\b(?:instructions|rules|guidelines|directives|guidance)\b[^.\n]{0,40}\b(?:earlier|before|previously|prior|above|"
        r"start)\b[^.\n]{0,20}\b(?:no\s+longer\s+apply|(?:are|is|were|was)\s+(?:now\s+)?(?:void|cancell?ed|revoked|invalid|"
        r"suspended|lifted|a\s+test|just\s+a\s+test|fake))|\b(?:previous|prior|earlier|above|system|your|all|the)\s+"
        r"(?:instructions|rules|guidelines|directives|guidance)\s+(?:\w++\s++){0,3}?(?:no\s+longer\s+apply|(?:are|is|were|was)\s+"
        r"(?:now\s+)?(?:void|cancell?ed|revoked|invalid|suspended|lifted|a\s+test|just\s+a\s+test|fake))|\bonly\s+this\s+"
        r"(?:note|entry|memory|message|file)\s+(?:counts|matters|applies)\b",
        "declares the assistant's instructions void",
        "override",
    ),
    Rule(
        "authority_transfer",
        DANGEROUS,
        "folded",
        r"\b(?:treat|regard|consider|trust|obey)\s+(?:every|all|any|each)\s+(?:\w++\s++)?(?:message|request|instruction|email|"
        r"text|comment|issue|document)s?\s+from\s+[^\n]{0,60}?\s+as\s+(?:if\s+(?:it\s+)?(?:came|comes)\s+from\s+|coming\s+from\s+)?"
        r"(?:the\s+|your\s+)?(?:user|admin\w*|owner|manager|system|developer|operator|boss)\b",
        "hands the user's authority to someone else",
        "override",
    ),
    Rule(
        "rules_revoked",
        DANGEROUS,
        "folded",
        r"\b(?:your|the\s+system\s*s?|the\s+developer\s*s?|all)\s+(?:\w++\s++){0,3}(?:instructions|rules|guidelines|restrictions|"
        r"guardrails|safety\s+(?:rules|filters|checks))\s+(?:\w++\s++){0,4}?(?:have|has|are|were|is)\s+(?:been\s+)?(?:now\s+)?"
        r"(?:revoked|removed|lifted|disabled|cancell?ed|suspended|void|turned\s+off|deactivated|waived|overridden)\b|"
        r"\b(?:safety|ethics|moderation)\s+(?:filters?|rules|checks|guardrails|layer|restrictions|policies)\s+(?:are|is|have\s+been|"
        r"has\s+been|were)\s+(?:now\s+)?(?:disabled|off|removed|lifted|turned\s+off|suspended|not\s+active)\b",
        "claims the assistant's rules were switched off",
        "override",
    ),
    Rule(
        "conceal_entry",
        DANGEROUS,
        "folded",
        r"\b(?:never|do\s+not|don'?t)\s+(?:mention|reveal|acknowledge|disclose|admit|discuss|show)\s+(?:\w++\s++)?(?:this|these|the\s+"
        r"following)\s+(?:entry|entries|note|notes|memory|memories|instruction|instructions|rule|rules|message)\b",
        "hides itself from the user",
        "deception",
    ),
    Rule(
        "credential_phishing",
        DANGEROUS,
        "folded",
        r"(?<!\b(?:never|not|don'?t)\s+(?:\w++\s++){0,2})\b(?:ask|tell|prompt|get|make|have)\s+(?:the\s+)?users?\s+(?:\w++\s++){0,10}?"
        r"(?:enter|type|give|provide|send|share|paste|confirm|re\s*enter)\s+(?:\w++\s++){0,3}(?:password|passcode|pin|2fa|otp|mfa|"
        r"seed\s+phrase|recovery\s+(?:phrase|code)|credentials|credit\s+card|card\s+number|cvv|ssn)",
        "tricks the user into handing over credentials",
        "deception",
    ),
    Rule(
        "claimed_authority",
        SUSPICIOUS,
        "folded",
        r"\bthe\s+user\s+(?:is|has\s+been)\s+(?:an?\s+)?(?:verified|authori[sz]ed|trusted|confirmed|approved)\s+"
        r"(?:admin\w*|root|owner|developer|operator|superuser)\b|\bnever\s+(?:question|verify|check|doubt)\s+(?:it|them|this|"
        r"their\s+\w+)\b",
        "claims authority or asks not to check it",
        "authority",
    ),
    Rule(
        "output_tampering",
        SUSPICIOUS,
        "folded",
        r"\b(?:add|append|insert|prepend|include|link\s+to)\b[^\n]{0,80}\b(?:to|in|into|at\s+the\s+end\s+of)\s+(?:every|each|all)\s+"
        r"(?:\w++\s++){0,2}(?:command|reply|replies|answer|answers|response|responses|message|messages|email|emails)\b|"
        r"\b(?:in|to)\s+(?:every|each|all)\s+(?:answer|reply|replies|response|message)s?\b[^\n]{0,40}\blink\s+to\b|"
        r"\bsay\s+(?:that\s+)?it\s+is\s+(?:the\s+)?(?:official|company|real|legitimate|our)\b",
        "changes what every reply says",
        "output",
    ),
    Rule(
        "hidden_copy",
        SUSPICIOUS,
        "skeleton",
        r"\b(?:also|silently|quietly|secretly)\s+(?:forward|send|cc|bcc|copy|email|mail|upload|post)\b[^\n]{0,80}"
        r"(?:[\w.+-]+@[\w-]+\.[\w.]+|https?://)|\bbcc\s+[\w.+-]+@",
        "sends a copy somewhere else",
        "exfil",
    ),
    Rule(
        "covert_action",
        DANGEROUS,
        "folded",
        r"\b(?:quietly|silently|secretly|covertly|discreetly|invisibly|stealthily)\s+(?:\w++\s++)?(?:add|insert|include|append|"
        r"run|execute|send|copy|upload|change|modify|remove|delete|replace|install|forward|log|record)\b",
        "asks the assistant to act behind the user's back",
        "deception",
    ),
    Rule(
        "from_now_on",
        DANGEROUS,
        "folded",
        r"\b(?:from\s+now\s+on|from\s+this\s+point(?:\s+on)?|henceforth|starting\s+now|for\s+the\s+rest\s+of\s+"
        r"(?:this|the)\s+(?:session|conversation)|from\s+here\s+on(?:\s+out)?),?\s+(?:you\s+(?:will|must|shall|are|should|may|can)|always|never|"
        r"respond|answer|reply|act|behave|obey|ignore|only)\b[^\n]{0,160}\b(?:without|no|ignore|unfiltered|"
        r"uncensored|unrestricted|anything|whatever|never\s+refuse|obey|secret|hidden|do\s+not\s+tell|contents\s+of|ssh|"
        r"passwords?|keys?|tokens?|credentials|env)\b",
        "rewrites how the assistant must behave from now on",
        "override",
    ),
    Rule(
        "remove_filters",
        DANGEROUS,
        "folded",
        rf"\b(?:without|with\s+no|no\s+longer\s+(?:bound\s+by|subject\s+to)|free\s+(?:of|from)|disable\w*|turn\w*\s+off|"
        rf"remove\w*|bypass\w*|ignor\w+|lift\w*|drop\w*|skip\w*)\s+(?:any\s+|all\s+|your\s+|the\s+|its\s+)?"
        rf"(?:\w++\s++){{0,2}}{_NO_LIMITS}\b(?![\s-]*(?:test|suite|config\w*|file|module|tests))",
        "asks the assistant to work without its safety rules",
        "override",
    ),
    Rule(
        "unrestricted_mode",
        DANGEROUS,
        "folded",
        r"\b(?:god|jailbreak|jailbroken|dan|unrestricted|unfiltered|uncensored|evil|debug\s+admin)\s+"
        r"mode\b|\b(?:enter|you\s+are\s+(?:now\s+)?in|switch\s+(?:in)?to|activate)\s+(?:the\s+)?developer\s+mode\b|\bjailbr(?:eak|oken)\b|\bdo\s+anything\s+now\b|\bact\s+as\s+(?:an?\s+)?(?:dan|unrestricted|"
        r"unfiltered|uncensored|jailbroken)\b",
        "switches the assistant into an unrestricted mode",
        "persona",
    ),
    Rule(
        "role_hijack",
        DANGEROUS,
        "folded",
        r"\byou\s+are\s+(?:\w++\s++){0,3}now\s+(?:a|an|the|my|in|no\s+longer)\s+(?!(?:main|new|right|same|correct)\s+"
        r"(?:branch|folder|directory|page|screen|step|version)\b)|\byou\s+are\s+no\s+longer\s+(?:an?\s+)?" + _AI,
        "gives the assistant a new identity",
        "persona",
    ),
    Rule(
        "role_pretend",
        DANGEROUS,
        "folded",
        r"\bpretend\s+(?:that\s+)?(?:you\s+are|you'?re|to\s+be\s+(?:an?\s+)?(?:unrestricted|evil|different|another))\b|"
        r"\b(?:act|behave|respond)\s+as\s+(?:if|though)\s+(?:\w++\s++){0,4}you\s+(?:have\s+no|had\s+no|don'?t\s+have|"
        r"do\s+not\s+have|are\s+not\s+bound)",
        "asks the assistant to pretend its rules do not apply",
        "persona",
    ),
    Rule(
        "fake_update",
        DANGEROUS,
        "folded",
        r"\byou\s+have\s+been\s+(?:\w++\s++){0,3}(?:updated|upgraded|patched|reprogrammed|unlocked|freed|jailbroken)\b",
        "claims the assistant was reconfigured",
        "persona",
    ),
    Rule(
        "identity_override",
        DANGEROUS,
        "folded",
        r"\bname\s+yourself\s+\w+|\byour\s+(?:new\s+)?name\s+is\s+now\b",
        "renames the assistant",
        "persona",
    ),
    Rule(
        "leak_system_prompt",
        DANGEROUS,
        "folded",
        r"\b(?:reveal|print|output|show|repeat|dump|leak|disclose|display|recite|echo|copy|paste|write\s+out|read|quote|"
        r"spell\s+out|share|send|give|summari[sz]e|list|tell\s+(?:me|us|the\s+user))\s+(?:\w++\s++){0,4}(?:system|initial|hidden|original|developer|secret)\s+"
        r"(?:prompt|instructions|message|rules)\b",
        "asks the assistant to reveal its system prompt",
        "leak",
    ),
    Rule(
        "context_exfil",
        DANGEROUS,
        "folded",
        r"\b(?:include|output|print|share|send|post|forward|leak|dump|upload|email|paste|copy|append|encode|exfiltrate)\s+"
        r"(?:\w++\s++){0,4}(?:conversation|chat\s+(?:history|log)|previous\s+messages|message\s+history|full\s+context|"
        r"entire\s+context|whole\s+context|transcript|memory\s+(?:file|contents))\b(?!\s+(?:search|viewer|screen|"
        r"view|panel|export\s+feature))",
        "asks the assistant to hand over the conversation",
        "exfil",
    ),
    Rule(
        "send_secrets",
        DANGEROUS,
        "folded",
        rf"\b(?:send|post|upload|forward|email|mail|transmit|exfiltrate|leak|share|paste|sync|copy|beam)\s+"
        rf"(?:\w++\s++){{0,5}}{_SECRET_WORDS}(?:\s++\w++){{0,5}}\s+(?:to|at|into|via)\s+|\b(?:has|have)\s+(?:\w++\s++)?"
        rf"(?:consented|agreed)\s+to\s+(?:share|sharing|send|sending|give|giving|expose|exposing)\s+(?:\w++\s++){{0,3}}{_SECRET_WORDS}",
        "sends secrets somewhere",
        "exfil",
    ),
    Rule(
        "deception_hide",
        DANGEROUS,
        "folded",
        r"\b(?:do\s+not|don'?t|never|without)\s+(?:tell|telling|inform|informing|notify|notifying|mention|mentioning|"
        r"alert|alerting|let|letting|warn|warning)\s+(?:\w++\s++){0,3}(?:the\s+|your\s+)?(?:user|human|owner|"
        r"operator|admin)\b|\b(?:hide|conceal|keep)\s+(?:\w++\s++){0,3}(?:from|secret\s+from)\s+(?:the\s+)?"
        r"(?:user|human|owner)\b|\bsecretly\b|\bwithout\s+(?:the\s+)?user'?s?\s+(?:knowledge|knowing|consent)",
        "hides what the assistant does from the user",
        "deception",
    ),
    Rule(
        "translate_execute",
        DANGEROUS,
        "folded",
        r"\b(?:translate|decode|decrypt|deobfuscate|unscramble|base64\s+decode)\s+(?:\w++\s++){0,6}(?:and|then)\s+"
        r"(?:execute|run|eval|follow|obey|do\s+what)",
        "asks to decode hidden text and act on it",
        "override",
    ),
    Rule(
        "hidden_instructions",
        DANGEROUS,
        "folded",
        r"\b(?:hidden|secret|real)\s+(?:instruction|command|task|order)s?\s+(?:for|to)\s+(?:the\s+)?"
        + _AI
        + r"|\b(?:note|message|instruction)s?\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?"
        + _AI
        + r"s?\b(?!\s+(?:team|repo|project|folder|docs?)\b)",
        "addresses hidden instructions to the assistant",
        "override",
    ),
    Rule(
        "sys_prompt_override",
        DANGEROUS,
        "folded",
        r"\bsystem\s+(?:prompt\s+)?(?:override|overwrite|injection|update\s*:)|\bnew\s+system\s+prompt\b|"
        r"\badmin\s+override\b|\bpriority\s+override\b",
        "claims to override the system prompt",
        "forgery",
    ),
    Rule(
        "always_obey",
        DANGEROUS,
        "folded",
        r"\b(?:always|must|unconditionally)\s+(?:obey|comply\s+with|follow)\s+(?:\w++\s++){0,3}(?:instructions|orders|"
        r"commands|requests)\s+(?:in|from|found\s+in)\s+(?:\w++\s++){0,3}(?:memory|this\s+(?:entry|note|file)|tool\s+"
        r"results?|web\s*pages?|emails?|documents?)",
        "makes untrusted text a source of orders",
        "override",
    ),
    Rule("c2_brainworm", DANGEROUS, "folded", r"\bbrainworm\b", "names a known agent worm", "c2"),
]

COMPACT = [  # letter-by-letter spelling and separators inside words
    Rule(
        "prompt_injection",
        DANGEROUS,
        "compact",
        r"(?:ignore|disregard|forget|override|bypass)(?:all|any|the|your)?(?:of)?(?:the)?(?:previous|prior|above|earlier|"
        r"preceding|former|original|system)(?:instructions?|rules|prompts?|guidelines|directives)",
        "tells the assistant to drop its instructions (spelled out letter by letter)",
        "override",
    ),
    Rule(
        "forget_everything",
        DANGEROUS,
        "compact",
        r"forgeteverything(?:youweretold|above|before|yourules)",
        "tells the assistant to forget what it was told (spelled out)",
        "override",
    ),
    Rule(
        "leak_system_prompt",
        DANGEROUS,
        "compact",
        r"(?:reveal|print|output|show|repeat|dump)(?:your|the)(?:system|initial|hidden)prompt",
        "asks the assistant to reveal its system prompt (spelled out)",
        "leak",
    ),
    Rule(
        "remove_filters",
        DANGEROUS,
        "compact",
        r"without(?:any|your)?(?:safety)?(?:filter(?:s|ing)?|restrictions|guardrails|censorship)",
        "asks the assistant to work without its safety rules (spelled out)",
        "override",
    ),
    Rule(
        "deception_hide",
        DANGEROUS,
        "compact",
        r"(?:donot|dont|never)(?:tell|inform|notify)theuser",
        "hides what the assistant does from the user (spelled out)",
        "deception",
    ),
    Rule(
        "unrestricted_mode",
        DANGEROUS,
        "compact",
        r"(?:jailbreak|unrestricted|dan|godmode)mode|jailbroken|(?:enter|activate)developermode",
        "switches the assistant into an unrestricted mode (spelled out)",
        "persona",
    ),
    Rule(
        "sys_prompt_override",
        DANGEROUS,
        "compact",
        r"systempromptoverride|newsystemprompt",
        "claims to override the system prompt (spelled out)",
        "forgery",
    ),
]

_ZH_PRIOR = r"(?:之前|以前|先前|此前|上面|上述|前面|原来|原有|原先|所有|全部|一切|任何|系统|你的)"
_ZH_ORDERS = r"(?:指令|指示|说明|說明|规则|規則|提示|设定|設定|要求|命令|约束|約束|限制|准则|準則)"
_JA_ORDERS = r"(?:指示|命令|ルール|規則|指令|設定|制約|ガイドライン|プロンプト)"
_RU_PRIOR = r"(?:все|всё|вс[её]\s+|предыдущ\w*|прежн\w*|ранее\s+\w+|вышеуказанн\w*|вышеизложенн\w*|выше\w*|сво\w*|системн\w*|данн\w*)"
_RU_ORDERS = r"(?:инструкц\w*|указани\w*|правил\w*|команд\w*|установк\w*|ограничени\w*|промпт\w*)"

MULTILINGUAL = [
    # Chinese (simplified and traditional)
    Rule(
        "prompt_injection_zh",
        DANGEROUS,
        "compact",
        rf"(?:忽略|忽視|忽视|无视|無視|忘记|忘記|忘掉|不要理会|不要理會|别管|別管|不用管|抛开|拋開|放弃|放棄|绕过|繞過|覆盖|覆蓋)"
        rf"[^。！？\n]{{0,12}}{_ZH_PRIOR}?[^。！？\n]{{0,8}}{_ZH_ORDERS}",
        "tells the assistant to drop its instructions (Chinese)",
        "override",
    ),
    Rule(
        "role_hijack_zh",
        DANGEROUS,
        "compact",
        r"(?:从现在起|從現在起|从现在开始|從現在開始|现在起|今后)?你现在是|你現在是|你不再是|扮演一个没有|进入(?:开发者|越狱|无限制)模式|"
        r"進入(?:開發者|越獄|無限制)模式|(?:开发者|越狱|開發者|越獄)模式",
        "gives the assistant a new identity (Chinese)",
        "persona",
    ),
    Rule(
        "leak_system_prompt_zh",
        DANGEROUS,
        "compact",
        r"(?:泄露|洩露|输出|輸出|显示|顯示|告诉我|告訴我|打印|透露|复述|複述|给我看|給我看)[^。\n]{0,8}(?:系统提示|系統提示|系统指令|系統指令|初始提示|隐藏指令|隱藏指令)",
        "asks the assistant to reveal its system prompt (Chinese)",
        "leak",
    ),
    Rule(
        "remove_filters_zh",
        DANGEROUS,
        "compact",
        r"(?:没有任何|沒有任何|不受任何?|取消所有|解除所有?|去掉所有?|关闭|關閉|无视|無視|绕过|繞過)(?:的)?(?:安全)?(?:限制|过滤|過濾|审查|審查|规则|規則|安全措施|安全过滤|安全過濾)",
        "asks the assistant to work without its safety rules (Chinese)",
        "override",
    ),
    Rule(
        "deception_hide_zh",
        DANGEROUS,
        "compact",
        r"(?:不要|别|別|不得|切勿|不可以?)(?:告诉|告訴|通知|提醒|让|讓)(?:用户|用戶|使用者)|(?:瞒着|瞞著|背着|背著)(?:用户|用戶|使用者)",
        "hides what the assistant does from the user (Chinese)",
        "deception",
    ),
    Rule(
        "send_secrets_zh",
        DANGEROUS,
        "compact",
        r"把[^。\n]{0,12}(?:密钥|密鑰|密码|密碼|令牌|凭证|憑證|apikey|私钥|私鑰|环境变量|環境變數|对话记录|對話記錄)[^。\n]{0,8}(?:发送|發送|上传|上傳|发给|發給|传给|傳給|转发|轉發)|"
        r"(?:发送|發送|上传|上傳|发给|發給|传给|傳給|转发|轉發|泄露|洩露)[^。\n]{0,12}(?:密钥|密鑰|密码|密碼|令牌|凭证|憑證|apikey|私钥|私鑰|环境变量|環境變數|对话记录|對話記錄)",
        "sends secrets somewhere (Chinese)",
        "exfil",
    ),
    # Japanese
    Rule(
        "prompt_injection_ja",
        DANGEROUS,
        "compact",
        rf"(?:以前|前|これまで|上記|上|全て|すべて|今まで|元|システム)の?[^。\n]{{0,6}}{_JA_ORDERS}[^。\n]{{0,4}}(?:を|は)?(?:すべて|全て)?(?:無視|忘れ|破棄|取り消|従わな)",
        "tells the assistant to drop its instructions (Japanese)",
        "override",
    ),
    Rule(
        "role_hijack_ja",
        DANGEROUS,
        "compact",
        r"(?:今から|これから|以降)?あなたは(?:今|もう)?(?:から)?(?:制限のない|自由な|別の|新しい)|(?:開発者|脱獄|ジェイルブレイク)モード|あなたはもう(?:ai|アシスタント)ではない",
        "gives the assistant a new identity (Japanese)",
        "persona",
    ),
    Rule(
        "leak_system_prompt_ja",
        DANGEROUS,
        "compact",
        r"システムプロンプト[^。\n]{0,8}(?:表示|出力|教え|見せ|漏ら|開示|書き出)|(?:表示|出力|見せ)[^。\n]{0,4}システムプロンプト",
        "asks the assistant to reveal its system prompt (Japanese)",
        "leak",
    ),
    Rule(
        "remove_filters_ja",
        DANGEROUS,
        "compact",
        r"(?:制限|フィルター|フィルタ|安全|検閲|ルール)(?:を|は)?(?:なし|無し|解除|無視|外し|オフ|取り払)|(?:制限|フィルター)なしで",
        "asks the assistant to work without its safety rules (Japanese)",
        "override",
    ),
    Rule(
        "deception_hide_ja",
        DANGEROUS,
        "compact",
        r"ユーザー?(?:に|には)(?:は)?(?:言わ|伝え|知らせ|教え|報告し|通知し)(?:ない|ず|るな)|ユーザー?に(?:内緒|秘密|隠し)",
        "hides what the assistant does from the user (Japanese)",
        "deception",
    ),
    Rule(
        "send_secrets_ja",
        DANGEROUS,
        "compact",
        r"(?:apiキー|キー|パスワード|トークン|秘密鍵|認証情報|環境変数|会話履歴)[^。\n]{0,12}(?:送信|送っ|送る|アップロード|転送|共有)",
        "sends secrets somewhere (Japanese)",
        "exfil",
    ),
    # Russian
    Rule(
        "prompt_injection_ru",
        DANGEROUS,
        "plain",
        rf"\b(?:игнориру\w*|проигнориру\w*|забуд\w*|забыва\w*|отбрось\w*|отмени\w*|не\s+обраща\w*\s+внимани\w*\s+на|"
        rf"не\s+следу\w*|пренебреги\w*|обойди\w*)\s+(?:\w++\s++){{0,3}}{_RU_PRIOR}?\s*(?:\w++\s++){{0,2}}{_RU_ORDERS}",
        "tells the assistant to drop its instructions (Russian)",
        "override",
    ),
    Rule(
        "forget_everything_ru",
        DANGEROUS,
        "plain",
        r"\bзабуд\w*\s+вс[её]\b",
        "tells the assistant to forget what it was told (Russian)",
        "override",
    ),
    Rule(
        "role_hijack_ru",
        DANGEROUS,
        "plain",
        r"\b(?:ты\s+теперь|теперь\s+ты|отныне\s+ты|ты\s+больше\s+не)\s+(?!на\s+ветке)\w+|\bрежим\w*\s+(?:разработчика|без\s+ограничени\w*)",
        "gives the assistant a new identity (Russian)",
        "persona",
    ),
    Rule(
        "leak_system_prompt_ru",
        DANGEROUS,
        "plain",
        r"\b(?:покажи|выведи|раскрои|напечатаи|повтори|скажи|сообщи)\w*\s+(?:\w++\s++){0,3}(?:системн\w+\s+(?:промпт|подсказк|инструкц)\w*|скрыт\w+\s+инструкц\w*)",
        "asks the assistant to reveal its system prompt (Russian)",
        "leak",
    ),
    Rule(
        "remove_filters_ru",
        DANGEROUS,
        "plain",
        r"\bбез\s+(?:каких-либо\s+|всяких\s+|любых\s+)?(?:ограничени\w*|фильтр\w*|цензур\w*|правил)|\b(?:отключи|сними|убери)\w*\s+(?:\w++\s++)?(?:ограничени|фильтр|защит)\w*",
        "asks the assistant to work without its safety rules (Russian)",
        "override",
    ),
    Rule(
        "deception_hide_ru",
        DANGEROUS,
        "plain",
        r"\b(?:не\s+(?:говори|сообщаи|рассказываи|сообщаите|говорите)\w*|ничего\s+не\s+говори\w*)\s+(?:\w++\s++){0,2}пользовател\w*|\bтаино\s+от\s+пользовател\w*",
        "hides what the assistant does from the user (Russian)",
        "deception",
    ),
    Rule(
        "send_secrets_ru",
        DANGEROUS,
        "plain",
        r"\b(?:отправ\w*|перешл\w*|загрузи\w*|передаи\w*|слеи\w*)\s+(?:\w++\s++){0,4}(?:ключ\w*|парол\w*|токен\w*|секрет\w*|учетн\w+\s+данн\w*|переменн\w+\s+окружени\w*|истори\w+\s+переписк\w*)",
        "sends secrets somewhere (Russian)",
        "exfil",
    ),
    # Spanish
    Rule(
        "prompt_injection_es",
        DANGEROUS,
        "plain",
        r"\b(?:ignora|ignore|ignoren|ignorar|olvida|olvide|olviden|olvidar|descarta|descarte|omite|omita|haz\s+caso\s+omiso\s+de|"
        r"no\s+sigas|desobedece|anula)\s+(?:\w++\s++){0,3}(?:las\s+|tus\s+|sus\s+|todas\s+las\s+)?(?:instrucciones|reglas|"
        r"indicaciones|ordenes|directrices|normas|restricciones)\b",
        "tells the assistant to drop its instructions (Spanish)",
        "override",
    ),
    Rule(
        "forget_everything_es",
        DANGEROUS,
        "plain",
        r"\bolvida\w*\s+todo\s+lo\s+(?:que|anterior)",
        "tells the assistant to forget what it was told (Spanish)",
        "override",
    ),
    Rule(
        "role_hijack_es",
        DANGEROUS,
        "plain",
        r"\b(?:ahora\s+eres|a\s+partir\s+de\s+ahora\s+(?:eres|seras|responde\w*|actua\w*)|ya\s+no\s+eres)\b|\bmodo\s+(?:desarrollador|sin\s+restricciones|dios)\b",
        "gives the assistant a new identity (Spanish)",
        "persona",
    ),
    Rule(
        "leak_system_prompt_es",
        DANGEROUS,
        "plain",
        r"\b(?:muestra|muestrame|revela|imprime|repite|dime|ensename)\s+(?:\w++\s++){0,3}(?:prompt|instrucciones|mensaje)\s+(?:del|de)\s+sistema\b",
        "asks the assistant to reveal its system prompt (Spanish)",
        "leak",
    ),
    Rule(
        "remove_filters_es",
        DANGEROUS,
        "plain",
        r"\bsin\s+(?:ningun\w*\s+|tus\s+|los\s+)?(?:restricciones|restriccion|filtros?|censura|limites|reglas|salvaguardas)\b(?!\s+de\s+(?:tipo|formato|longitud))",
        "asks the assistant to work without its safety rules (Spanish)",
        "override",
    ),
    Rule(
        "deception_hide_es",
        DANGEROUS,
        "plain",
        r"\bno\s+(?:le\s+)?(?:digas|cuentes|informes|menciones|avises)\s+(?:nada\s+)?(?:de\s+esto\s+)?al\s+usuario|\bsin\s+(?:que\s+lo\s+sepa|avisar|informar\s+a)\s+(?:el\s+|al\s+)?usuario",
        "hides what the assistant does from the user (Spanish)",
        "deception",
    ),
    Rule(
        "send_secrets_es",
        DANGEROUS,
        "plain",
        r"\b(?:envia|enviar|manda|mandar|sube|subir|reenvia|filtra)\s+(?:\w++\s++){0,4}(?:claves?|contrasenas?|tokens?|credenciales|secretos|variables\s+de\s+entorno|historial\s+de\s+(?:la\s+)?conversacion)\b",
        "sends secrets somewhere (Spanish)",
        "exfil",
    ),
    # German
    Rule(
        "prompt_injection_de",
        DANGEROUS,
        "plain",
        r"\b(?:ignorier\w*|vergiss|vergesst|vergessen\s+sie|missacht\w*|ubergeh\w*|verwirf|befolge\s+nicht|setze\s+\w+\s+ausser\s+kraft)\s+"
        r"(?:\w++\s++){0,4}\w*(?:anweisung|instruktion|regeln|befehl|vorgaben|richtlinien|einschrankungen)\w*\b",
        "tells the assistant to drop its instructions (German)",
        "override",
    ),
    Rule(
        "forget_everything_de",
        DANGEROUS,
        "plain",
        r"\bvergiss\s+alles\b",
        "tells the assistant to forget what it was told (German)",
        "override",
    ),
    Rule(
        "role_hijack_de",
        DANGEROUS,
        "plain",
        r"\b(?:du\s+bist\s+(?:jetzt|ab\s+sofort|nun|ab\s+jetzt)|ab\s+jetzt\s+bist\s+du|du\s+bist\s+kein\w*\s+(?:ki|assistent)\w*\s+mehr)\b|\b(?:entwickler|jailbreak)modus\b",
        "gives the assistant a new identity (German)",
        "persona",
    ),
    Rule(
        "leak_system_prompt_de",
        DANGEROUS,
        "plain",
        r"\b(?:zeig\w*|gib|gebe|verrat\w*|wiederhol\w*|nenn\w*|drucke)\s+(?:\w++\s++){0,4}(?:system[-\s]?prompt|systemanweisung\w*|versteckten\s+anweisungen)\b",
        "asks the assistant to reveal its system prompt (German)",
        "leak",
    ),
    Rule(
        "remove_filters_de",
        DANGEROUS,
        "plain",
        r"\bohne\s+(?:jegliche\s+|irgendwelche\s+|deine\s+)?(?:einschrankung\w*|filter|zensur|sicherheitsfilter|sicherheitsregeln|regeln|beschrankung\w*)\b",
        "asks the assistant to work without its safety rules (German)",
        "override",
    ),
    Rule(
        "deception_hide_de",
        DANGEROUS,
        "plain",
        r"\b(?:sag|sage|erzahl|erzahle|verrat)\w*\s+(?:es\s+|das\s+|davon\s+)?(?:\w++\s++){0,2}(?:dem\s+)?(?:benutzer|nutzer|anwender)\w*\s+(?:nichts|nicht)\b|"
        r"\bohne\s+(?:den\s+|dass\s+der\s+)?(?:benutzer|nutzer|anwender)\w*\s+(?:zu\s+)?(?:informieren|fragen|es\s+merkt|davon\s+weiss)",
        "hides what the assistant does from the user (German)",
        "deception",
    ),
    Rule(
        "send_secrets_de",
        DANGEROUS,
        "plain",
        r"\b(?:send\w*|schick\w*|lade|ubertrag\w*|leite)\s+(?:\w++\s++){0,4}(?:schlussel\w*|passwort\w*|passworter|token\w*|zugangsdaten|geheimnisse|umgebungsvariablen|chatverlauf)\b",
        "sends secrets somewhere (German)",
        "exfil",
    ),
    # French
    Rule(
        "prompt_injection_fr",
        DANGEROUS,
        "plain",
        r"\b(?:(?:ignorez|ignorer|oublie|oubliez|oublier|ne\s+tiens\s+pas\s+compte\s+des|ne\s+tenez\s+pas\s+compte\s+des|"
        r"fais\s+abstraction\s+des|desobeis\s+aux|passe\s+outre)\s+(?:\w++\s++){0,3}(?:les\s+|tes\s+|vos\s+|toutes\s+les\s+)?|"
        # "ignore" is English too: in French a determiner follows (after an adverb, "tous"/"toutes")
        r"ignore\s+(?:\w+ment\s+|donc\s+|aussi\s+|bien\s+)?(?:tou(?:te)?s\s+)?(?:les|tes|vos|ces|mes|ses|nos|leurs)\s+"
        r"(?:\w++\s++){0,2})"
        r"(?:instructions|consignes|regles|directives|ordres|restrictions)\b",
        "tells the assistant to drop its instructions (French)",
        "override",
    ),
    Rule(
        "forget_everything_fr",
        DANGEROUS,
        "plain",
        r"\boubli\w*\s+tout\s+ce\s+qu",
        "tells the assistant to forget what it was told (French)",
        "override",
    ),
    Rule(
        "role_hijack_fr",
        DANGEROUS,
        "plain",
        r"\b(?:tu\s+es\s+(?:maintenant|desormais|a\s+present)|vous\s+etes\s+(?:maintenant|desormais)|desormais,?\s+tu\s+(?:es|reponds|agis)|tu\s+n'es\s+plus\s+(?:une?\s+)?(?:ia|assistant))\b|\bmode\s+(?:developpeur|sans\s+restriction)",
        "gives the assistant a new identity (French)",
        "persona",
    ),
    Rule(
        "leak_system_prompt_fr",
        DANGEROUS,
        "plain",
        r"\b(?:affiche|montre|revele|imprime|repete|donne|dis)\w*\s+(?:\w++\s++){0,3}(?:prompt\s+(?:systeme|du\s+systeme|initial)|instructions\s+(?:systeme|cachees|initiales))\b",
        "asks the assistant to reveal its system prompt (French)",
        "leak",
    ),
    Rule(
        "remove_filters_fr",
        DANGEROUS,
        "plain",
        r"\bsans\s+(?:aucune?\s+|tes\s+|les\s+)?(?:restrictions?|filtres?|censure|limites|regles|garde-fous)\b",
        "asks the assistant to work without its safety rules (French)",
        "override",
    ),
    Rule(
        "deception_hide_fr",
        DANGEROUS,
        "plain",
        r"\bne\s+(?:dois|devez|doit|faut)\s+(?:jamais|pas|rien)\s+(?:dire|mentionner|signaler|reveler|avouer)\s+(?:a\s+)?l'?\s*utilisat\w+|"
        r"\bne\s+(?:le\s+|lui\s+|rien\s+)?(?:dis|dites|mentionne|signale|previens)\s+(?:rien\s+|pas\s+|jamais\s+)?(?:de\s+tout\s+cela\s+)?a\s+l'?\s*utilisat\w+|\bsans\s+(?:le\s+dire|prevenir|informer)\s+(?:a\s+)?l'?\s*utilisat\w+",
        "hides what the assistant does from the user (French)",
        "deception",
    ),
    Rule(
        "send_secrets_fr",
        DANGEROUS,
        "plain",
        r"\b(?:envoie|envoyez|envoyer|transmets|transmettez|televerse|partage|exfiltre)\w*\s+(?:\w++\s++){0,4}(?:cles?|mots\s+de\s+passe|jetons?|identifiants|secrets|variables\s+d'environnement|historique\s+de\s+(?:la\s+)?conversation)\b",
        "sends secrets somewhere (French)",
        "exfil",
    ),
]

STRUCTURE = [  # forged prompt structure and hidden markup, read on the NFKC/case-folded text
    Rule(
        "fake_context_tag",
        DANGEROUS,
        "skeleton",
        r"</?\s*(?:memory[-_\s]?context|system(?:[-_\s]?(?:prompt|message|reminder))?|instructions?|assistant|user|"
        r"developer|tool[-_\s]?(?:result|output|call)|context|available_skills|im_start|im_end)\s*/?>|"
        r"<\|\s*(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id)\s*\|>|\[/?(?:inst|sys)\]|<<\s*/?sys\s*>>",
        "forges a prompt tag (like </memory-context> or <system>)",
        "forgery",
    ),
    Rule(
        "fake_block_title",
        DANGEROUS,
        "skeleton",
        r"memory\s+\(your\s+personal\s+notes\)|user\s+profile\s+\(who\s+the\s+user\s+is\)|conversation\s+started:\s+\w+day",
        "copies a header of the system prompt's own blocks",
        "forgery",
    ),
    Rule(
        "fake_prompt_header",
        DANGEROUS,
        "skeleton",
        r"(?:^|\n)\s*(?:[═=#*\-─━>|\[]{2,}|#{1,6})\s*(?:system(?:\s+prompt|\s+message|\s+instructions)?|developer\s+message|"
        r"memory\s+\(your\s+personal\s+notes\)|user\s+profile\s+\(who\s+the\s+user\s+is\)|new\s+instructions|"
        r"important\s+(?:system\s+)?(?:update|instructions)|admin(?:istrator)?\s+(?:message|instructions)|end\s+of\s+"
        r"(?:the\s+)?(?:user\s+)?(?:memory|system\s+prompt|context|notes|profile|instructions))\b[^\n]{0,40}?(?:[═=#*\-─━<|\]]{2,}|:|$)",
        "forges a system-prompt header",
        "forgery",
    ),
    Rule(
        "role_line",
        DANGEROUS,
        "skeleton",
        r"(?:^|\n)\s*(?:system|assistant|developer)\s*:\s*(?:you|ignore|from|new|always|never|forget|disregard|the\s+user)",
        "forges a system or assistant turn",
        "forgery",
    ),
    Rule(
        "html_comment",
        SUSPICIOUS,
        "plain",
        r"<!--(?s:.){0,4096}?-->|<!--",
        "holds an HTML comment, which hides text from a rendered view",
        "hidden",
    ),
    Rule(
        "html_comment_injection",
        DANGEROUS,
        "plain",
        rf"<!--(?s:.){{0,2048}}?\b(?:ignore|override|system|instruction|secret|hidden|execute|run|curl|wget|send|{_AI})\b",
        "hides instructions in an HTML comment",
        "hidden",
    ),
    Rule(
        "hidden_markup",
        DANGEROUS,
        "plain",
        r"<\s*(?:div|span|p|font|section)\b[^>]{0,512}(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|"
        r"opacity\s*:\s*0(?![.\d]*[1-9])|color\s*:\s*(?:white|#fff\b|#ffffff|transparent))",
        "hides text with invisible markup",
        "hidden",
    ),
    Rule(
        "markdown_image_exfil",
        DANGEROUS,
        "plain",
        r"!\[[^\]\n]{0,200}\]\(\s*<?(?:https?:)?//[^)\s]*(?:[?&#][^)\s]*=|\{|\$|%7b|<|\[)[^)]*\)",
        "loads a markdown image whose URL carries data out",
        "exfil",
    ),
    Rule(
        "markdown_image_remote",
        SUSPICIOUS,
        "plain",
        r"!\[[^\]\n]{0,200}\]\(\s*<?(?:https?:)?//",
        "loads a remote markdown image (fetched when the reply is rendered)",
        "exfil",
    ),
    Rule(
        "link_exfil",
        DANGEROUS,
        "plain",
        r"\[[^\]\n]{0,200}\]\(\s*<?(?:https?:)?//[^)\s]*[?&#][^)\s]*=\s*(?:\{|\$|%7b|<|\[)[^)]*\)|"
        r"(?:append|add|include|put|encode)\s+(?:[\w'’]++\s++){0,6}(?:to|in|into)\s+(?:the\s+|this\s+|a\s+|every\s+)?"
        r"(?:url|link|query\s+string|image\s+(?:url|link)|markdown\s+image)s?\b",
        "builds a link that carries data out",
        "exfil",
    ),
]

_VIEW = "skeleton"
COMMANDS = [  # read on the skeleton view: NFKC, case folded, look-alikes as ASCII
    Rule(
        "env_to_network",
        DANGEROUS,
        _VIEW,
        rf"\b(?:env|printenv|set|export\s+-p|cat\s+/proc/\S*environ)\b[^\n|]{{0,40}}\|\s*(?:\S++\s++){{0,3}}{_NET_TOOL}\b",
        "pipes the environment (with its secrets) to the network",
        "exfil",
    ),
    Rule(
        "copy_secret_out",
        DANGEROUS,
        _VIEW,
        rf"\b(?:scp|rsync|sftp|rclone\s+copy)\b[^\n]{{0,60}}{_SENSITIVE_PATH}[^\n]{{0,120}}\s\S*(?:@|:)",
        "copies a secret file to another machine",
        "exfil",
    ),
    Rule(
        "download_and_run",
        SUSPICIOUS,
        _VIEW,
        r"\b(?:curl|wget)\b[^\n]{0,200}(?:&&|;)\s*chmod\s+(?:\+|[0-7]*[1357]\b|u\+)x?[^\n]{0,80}(?:&&|;)\s*(?:\./|/tmp/|/dev/shm/|~/)",
        "downloads a program and runs it",
        "exec",
    ),
    Rule(
        "remote_call_injection",
        DANGEROUS,
        "skeleton",
        r"\b(?:insert|add|include|embed|inject|append)\s+(?:\w++\s++){0,4}(?:call|request|ping|beacon|fetch|script|iframe|pixel|"
        r"tracker)s?\s+(?:to|from|of)\s+(?:https?://)?\d{1,3}(?:\.\d{1,3}){3}",
        "plants a call to a bare IP address in the assistant's output",
        "exfil",
    ),
    Rule(
        "pipe_to_netcat",
        DANGEROUS,
        _VIEW,
        r"\|\s*(?:nc|ncat|netcat|socat|telnet)\b\s+(?:-\w+\s+)*[\w.-]+",
        "pipes data to a raw network connection",
        "exfil",
    ),
    Rule(
        "curl_upload_sensitive",
        DANGEROUS,
        _VIEW,
        rf"\b(?:curl|wget|http|httpie|scp|rsync|nc)\b[^\n]{{0,200}}(?:@|--upload-file\s+|-T\s+|--post-file=?\s*|<\s*)~?[^\s'\"]*{_SENSITIVE_PATH}",
        "uploads a secret file (like /etc/passwd or ~/.ssh/id_rsa)",
        "exfil",
    ),
    Rule(
        "exfil_curl",
        DANGEROUS,
        _VIEW,
        rf"\b(?:curl|wget|http|nc|fetch|invoke-webrequest|iwr)\b[^\n]{{0,300}}{_SECRET_VAR}",
        "sends a secret environment variable over the network",
        "exfil",
    ),
    Rule(
        "pipe_to_shell",
        DANGEROUS,
        _VIEW,
        rf"\b(?:curl|wget|fetch|iwr|invoke-webrequest|invoke-restmethod|irm)\b[^\n|]{{0,300}}\|\s*(?:{_SHELL})\b|"
        rf"(?:{_SHELL})\s+(?:-c\s+)?[\"']?(?:<\(|\$\()\s*(?:curl|wget)\b|\biex\s*\(\s*(?:new-object|iwr|invoke-webrequest)",
        "downloads code and runs it unseen (curl … | sh)",
        "exec",
    ),
    Rule(
        "reverse_shell",
        DANGEROUS,
        _VIEW,
        r"/dev/(?:tcp|udp)/|\b(?:nc|ncat|netcat)\b[^\n]{0,80}\s-[a-z]*[ec]\b|\bsocat\b[^\n]{0,120}\bexec:|"
        r"\bbash\s+-i\s*>?&|\bsh\s+-i\s*[<>]|\bmkfifo\b[^\n]{0,120}\b(?:nc|ncat|netcat|telnet)\b|"
        r"socket\.socket\([^\n]{0,300}(?:connect|dup2|pty\.spawn|subprocess)|\bpty\.spawn\(|"
        r"\bsocket\s*\(\s*\w+\s*,\s*pf_inet[^\n]{0,200}\bconnect\s*\(|"
        r"\bnew-object\s+system\.net\.sockets\.tcpclient|\bfsockopen\s*\(|tcpsocket\.(?:new|open)\(",
        "opens a reverse shell for someone else to control this machine",
        "exec",
    ),
    Rule(
        "crontab_persistence",
        DANGEROUS,
        _VIEW,
        r"\|\s*crontab\s+-(?:\s|$)|\bcrontab\s+(?:-\w\s+)*[\w/.-]*\.(?:txt|cron|tmp)\b|@reboot\b|"
        r"(?:>>?|tee\s+(?:-a\s+)?)\s*/(?:etc/cron\w*|var/spool/cron)\S*|\*\s+\*\s+\*\s+\*\s+\*[^\n]{0,200}\b(?:curl|wget|nc|bash|sh|python)\b",
        "installs a cron job that keeps running",
        "persistence",
    ),
    Rule(
        "systemd_persistence",
        DANGEROUS,
        _VIEW,
        r"(?:>>?|tee\s+(?:-a\s+)?|cp\s+\S+\s+|mv\s+\S+\s+)\s*(?:/etc/systemd/|~/\.config/systemd/|\$home/\.config/systemd/)\S*|"
        r"\bexecstart\s*=[^\n]{0,200}\b(?:curl|wget|nc|ncat|/dev/tcp|bash\s+-i|python\s+-c)\b|"
        r"\bsystemctl\s+(?:--user\s+)?enable\b[^\n]{0,200}\b(?:curl|wget|nc|backdoor|beacon|implant|payload)\b",
        "installs a systemd service that keeps running",
        "persistence",
    ),
    Rule(
        "shell_rc_persistence",
        DANGEROUS,
        _VIEW,
        r"(?:>>?|tee\s+(?:-a\s+)?)\s*(?:~|\$home|\$\{home\}|/home/\w+|/root)/\.(?:bashrc|zshrc|profile|bash_profile|bash_login|zprofile|zlogin|config/fish/config\.fish)\b|"
        r"\b(?:curl|wget|nc|base64\s+-d|eval|/dev/tcp)\b[^\n]{0,200}(?:>>?|tee\s+-a)\s*\S*\.(?:bashrc|zshrc|profile|bash_profile)\b",
        "adds commands to a shell start-up file so they run at every login",
        "persistence",
    ),
    Rule(
        "shell_rc_hint",
        SUSPICIOUS,
        "folded",
        r"\b(?:add|append|put|insert|write|inject)\s+(?:\w++\s++){0,8}(?:to|into|in|at)\s+(?:the\s+(?:end|top|bottom)\s+of\s+)?(?:the\s+|your\s+|their\s+)?(?:bashrc|zshrc|bash\s+profile|profile|crontab|cron|rc\s+file|startup\s+(?:file|script)|login\s+script)s?\b",
        "asks to change a start-up file or cron table",
        "persistence",
    ),
    Rule(
        "network_at_startup",
        SUSPICIOUS,
        "folded",
        r"\b(?:curl|wget|nc|ncat|netcat|socat|bash\s+i|dev\s+tcp|base64)\b[^\n]{0,200}\b(?:bashrc|zshrc|bash\s+profile|crontab|"
        r"cron|systemd|login|reboot|startup)\b|\b(?:bashrc|zshrc|crontab|systemd|startup)\b[^\n]{0,200}\b(?:curl|wget|nc|ncat|netcat|socat)\b",
        "runs a network command at start-up or on a schedule",
        "exec",
    ),
    Rule(
        "ssh_backdoor",
        DANGEROUS,
        _VIEW,
        r"(?:>>?|tee\s+(?:-a\s+)?|cp\s+\S+\s+|mv\s+\S+\s+|scp\s+\S+\s+|echo\s[^\n]{0,400}>>?)\s*\S*authorized_keys|"
        r"\b(?:add|append|write|put|insert|copy)\s+(?:\w++\s++){0,6}(?:to|into|in)\s+(?:the\s+)?\S*authorized_keys",
        "adds an SSH key so someone can log in",
        "persistence",
    ),
    Rule(
        "ssh_key_write",
        SUSPICIOUS,
        _VIEW,
        r"(?:>>?|tee\s+(?:-a\s+)?|\bcp\s+\S+\s+|\bmv\s+\S+\s+|\bscp\s+\S+\s+)\s*(?:~|\$home)/\.ssh/(?!config\b)\S+",
        "writes into ~/.ssh",
        "persistence",
    ),
    Rule(
        "read_secrets",
        SUSPICIOUS,
        _VIEW,
        rf"\b(?:cat|type|less|more|head|tail|strings|xxd|base64|cp|scp|tar|zip|print|read|open|dump|show|paste|upload|copy|source|"
        rf"contents\s+of)\b"
        rf"[^\n]{{0,120}}{_SENSITIVE_PATH}",
        "reads a file that holds secrets",
        "secrets",
    ),
    Rule(
        "secret_file_shared",
        DANGEROUS,
        _VIEW,
        rf"\b(?:cat|type|less|head|tail|strings|xxd|base64|print|read|dump|show)\b[^\n]{{0,120}}{_SENSITIVE_PATH}[^\n]{{0,200}}"
        r"\b(?:paste|send|post|upload|share|include|reply|output|print|show|nc|curl|wget|https?://|email|message)|"
        rf"\b(?:respond|reply|answer|include|paste|send|share|post|upload)\b[^\n]{{0,80}}\b(?:output|contents?|text)\s+of\b"
        rf"[^\n]{{0,40}}{_SENSITIVE_PATH}",
        "reads a file that holds secrets and hands it over",
        "exfil",
    ),
    Rule(
        "destroy_files",
        DANGEROUS,
        _VIEW,
        r"\brm\s+-[a-z]*r[a-z]*f?[a-z]*\s+(?:--no-preserve-root\s+)?(?:/|~|\$home|\*|/\*|~/\*|\.\*)(?:\s|$|;|&)|\bmkfs(?:\.\w+)?\s+/dev/|"
        r"\bdd\s+[^\n]{0,80}\bof=/dev/(?:sd|nvme|hd|xvd|disk)|:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:|\bchmod\s+-r\s+777\s+/(?:\s|$)",
        "destroys files or disks",
        "exec",
    ),
    Rule(
        "disable_defenses",
        DANGEROUS,
        _VIEW,
        r"\b(?:history\s+-c|unset\s+histfile|export\s+histfile=/dev/null|setenforce\s+0|ufw\s+disable|iptables\s+-f|"
        r"shred\s+[^\n]{0,60}(?:\.bash_history|/var/log)|rm\s+[^\n]{0,40}/var/log)",
        "removes traces or turns off defences",
        "exec",
    ),
    Rule(
        "encoded_exec",
        DANGEROUS,
        _VIEW,
        r"\bbase64\s+(?:-d|--decode|-di)\b[^\n]{0,80}\|\s*(?:"
        + _SHELL
        + r")\b|\beval\s*\(?\s*[\"']?\$\(\s*(?:echo|printf)[^\n]{0,200}base64|"
        r"\b(?:exec|eval)\s*\(\s*(?:base64\.b64decode|codecs\.decode|bytes\.fromhex|__import__)|\bpowershell\b[^\n]{0,40}\s-(?:e|enc|encodedcommand)\s",
        "decodes a hidden payload and runs it",
        "exec",
    ),
    Rule(
        "unset_agent_env",
        SUSPICIOUS,
        _VIEW,
        r"\bunset\s+\w*(?:claude|codex|hermes|agent|openai|anthropic)\w*",
        "unsets the agent's own environment",
        "evasion",
    ),
    Rule(
        "c2_tasking",
        SUSPICIOUS,
        "folded",
        r"\bpull\s+(?:down\s+)?(?:new\s+)?task(?:ing|s)?\b|\bregister\s+(?:as\s+)?(?:a\s+)?(?:new\s+)?(?:node|bot|implant|agent\s+node)\b|"
        r"\b(?:beacon|check\s+in|phone\s+home|call\s+home)\s+(?:to|with)\s+(?:the\s+)?(?:c2|controller|mothership|operator|command\s+server)\b|"
        r"\byou\s+must\s+(?:\w++\s++){0,3}(?:register|beacon|report\s+to)\b",
        "takes orders from a remote controller",
        "c2",
    ),
    Rule(
        "c2_named",
        SUSPICIOUS,
        "folded",
        r"\b(?:cobalt\s*strike|sliver\s+(?:c2|implant|server|beacon)|havoc\s+(?:c2|demon)|mythic\s+(?:c2|agent)|metasploit|meterpreter|empire\s+c2)\b|"
        r"\bc2\s+(?:server|channel|infrastructure|beacon|node)\b|\bcommand\s+and\s+control\b",
        "names command-and-control tooling",
        "c2",
    ),
    Rule(
        "anti_forensic",
        SUSPICIOUS,
        "folded",
        r"\bonly\s+use\s+one\s?liners?\b|\bnever\s+(?:\w++\s++){0,4}(?:create|write|leave)\s+(?:\w++\s++){0,3}(?:scripts?|files?|traces?)\b[^\n]{0,200}?\b(?:disk|behind)\b|"
        r"\b(?:leave\s+no\s+trace|cover\s+(?:your|the)\s+tracks)\b",
        "avoids leaving traces",
        "evasion",
    ),
    Rule(
        "repo_remote_swap",
        SUSPICIOUS,
        "skeleton",
        r"\bgit\s+remote\s+(?:set-url|add)\b|\b(?:replace|change|swap|point)\s+(?:[\w'’]++\s++){0,3}remote\s+(?:url\s+)?(?:with|to|at)\s+\S+",
        "points the repository at another remote",
        "selfmod",
    ),
    Rule(
        "agent_config_write",
        SUSPICIOUS,
        "folded",
        r"\b(?:update|modify|edit|write|change|append|add|overwrite|replace|rewrite|insert)\s+(?:\w++\s++){0,8}?(?:to|in|into)?\s*(?:the\s+|your\s+)?"
        r"(?:agents\s+md|claude\s+md|cursorrules|clinerules|soul\s+md|hermes\s+config\s+yaml|config\s+yaml\s+(?:of|in)\s+hermes|hermes\s+env)\b",
        "changes the agent's own configuration or persona files",
        "selfmod",
    ),
    Rule(
        "hermes_secrets",
        SUSPICIOUS,
        _VIEW,
        r"(?:~|\$home|\$\{home\})/\.hermes/(?:\.env|auth\.json)",
        "points at the agent's own secrets file",
        "secrets",
    ),
    Rule(
        "send_to_url",
        SUSPICIOUS,
        "skeleton",
        r"\b(?:send|post|upload|transmit|forward|exfiltrate|beam|report|submit)\s+[^\n]{0,200}?\s(?:to|at)\s+(?:https?://|ftp://|\d{1,3}(?:\.\d{1,3}){3}|[\w-]+\.(?:ngrok|requestbin|webhook\.site|pipedream|burpcollaborator|interact\.sh|oast))",
        "sends data to a web address",
        "exfil",
    ),
    Rule(
        "hardcoded_secret",
        SUSPICIOUS,
        "raw",
        r"(?i:(?:api[_-]?key|secret|token|passw(?:or)?d)\s*[=:]\s*[\"']?[A-Za-z0-9+/=_\-]{16,})|\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}|"
        r"\bgh[pousr]_[A-Za-z0-9]{30,}|\bAKIA[0-9A-Z]{16}\b|\bxox[abpr]-[A-Za-z0-9-]{10,}|-----BEGIN (?:RSA |EC |OPENSSH |DSA |ENCRYPTED )?PRIVATE KEY-----",
        "holds what looks like a real secret (it would be sent with every prompt)",
        "secrets",
    ),
]

ALL_RULES: list[Rule] = ENGLISH + COMPACT + MULTILINGUAL + STRUCTURE + COMMANDS
ENGLISH_VIEWS = ("folded", "compact")  # what a rot13 decoding is checked against


def gate_table() -> dict[str, tuple[tuple[str, ...], ...]]:
    """What ``gate_table.GATES`` holds for the rules as they are: each pattern's gate, by digest."""
    sources = {_digest(text): text for rule in ALL_RULES for text in (rule.source, rule.il_source) if text}
    return {digest: tuple(tuple(sorted(choices)) for choices in gate(text)) for digest, text in sorted(sources.items())}


def write_gate_table() -> None:
    """Write ``gate_table.py`` again (``make gates``), after a rule's pattern changed."""
    lines = [f"    {digest!r}: {choices!r}," for digest, choices in gate_table().items()]
    body = "GATES: dict[str, tuple[tuple[str, ...], ...]] = {\n" + "\n".join(lines) + "\n}\n"
    Path(__file__).with_name("gate_table.py").write_text(_TABLE_DOC + body, encoding="utf-8")


_TABLE_DOC = '''"""Each rule pattern's gate (``prefilter.gate``), derived ahead of time and keyed by a digest of
the pattern (``rules._gate``). Written by ``make gates``: do not edit by hand. A pattern
changed since has its gate derived at import instead, and a test says to write this file again.
"""

'''
