"""The offline model: deterministic, rule-based, no network, and able to drive every tool.

It reads the conversation the way a real model would (the system prompt's memory
blocks, the current user message, the tool results of this turn) and answers with
the next tool call or the final text. It keeps no state between calls: the same
messages always give the same reply, so runs are reproducible and testable.

Understood requests: "remember that ..." (and 请记住/记住/記住 ..., 覚えておいて ... or ...を覚えておいて,
記憶して), "my name is ...", "I prefer ...", "we use ..."
(memory add, to the user profile or to memory); "forget ..." (memory remove); "what did
we discuss about X" (session_search); "how do I X" (skills_list, skill_view); "update
the X skill: ..." (skill_view, skill_manage patch); routine requests such as "prepare
the release" (skills_list, skill_view, session_search: a multi-step sequence that a
background review can turn into a skill). It also answers background reviews and
writes extractive summaries for compression.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..archive.models import unmarked
from ..memory.format import parse_blocks
from ..memory.targets import LABELS as TARGET_LABELS
from ..providers.fence import CLOSE_TAG, SYSTEM_NOTE, sanitize_context
from .base import (
    FLUSH_PROMPT,
    LIVE_MEMORY_HEADING,
    MEMORY_REVIEW_PROMPT,
    SKILL_REVIEW_PROMPT,
    Model,
    ModelReply,
    ToolCall,
    last_user_index,
)
from .learning import already_known, changed, findings, looks_secret
from .phrasing import best_match, declarative, keywords, overlap, search_terms, sentence, shorten, slug
from .skill_changes import Routine, append_patch, next_step, plan_change

_RE = {
    name: re.compile(pattern, re.I)
    for name, pattern in {
        "forget": r"^(?:please\s+)?forget\b(?:\s+(?:that|about|the fact that))?\s*(?P<x>.+)",
        "remember": r"^(?:please\s+)?(?:remember|note|keep in mind|don't forget|do not forget)(?:\s+that)?[:,]?\s+(?P<x>.+)",
        # Chinese asks first (请记住：…, 记住…, 記住…), Japanese first or last (覚えておいて：…, …を覚えておいて)
        "remember_zh": r"^(?:请|請)?(?:帮我|幫我)?(?:记住|記住)[:：,，、\s]*(?P<x>.+)",
        "remember_ja": r"^(?:覚えて(?:おいて)?|記憶して)(?:ください|下さい)?[:：,，、\s]+(?P<x>.+)",
        "remember_jaend": r"^(?P<x>.+?)[、,，\s]*(?:を|って|と)?(?:覚えて(?:おいて)?|記憶して)(?:ください|下さい|ね|おいてね)?[。！!.]*$",
        "fact": r"^(?P<x>(?:my name is|i prefer|i like|i use|i love|i hate|i live|i work (?:at|on|as|in|for)|"
        r"(?:i'm|i am) an? (?!bit\b|little\b|lot\b)|my \w[\w ]{0,30}? (?:is|are) |we use|we're using|we deploy|"
        r"we host|we run|our \w[\w ]{0,30}? (?:is|are) )(?!\s*(?:it|that|this|these|those|them)\b).+)",
        "search": r"(?:what did we (?:discuss|talk about|decide|say|conclude)(?:\s+(?:about|on|regarding|for))?|"
        r"did we (?:ever )?(?:discuss|talk about|decide on)|remind me what we (?:said|discussed|decided) about|"
        r"(?:search|look through|check) (?:my |our |the )?(?:past |previous |earlier |old )?"
        r"(?:sessions|conversations|chats|archive)(?:\s+(?:for|about))?)\s+(?P<x>.+)",
        "patch": r"(?:update|patch|amend|fix|extend) the (?P<name>[\w-]+) skill(?:\s*(?:to|so that|with|:|,))?\s*(?P<x>.+)",
        "patch_add": r"add (?:a |another )?(?:step|note)?\s*(?:to|in) the (?P<name>[\w-]+) skill\s*[:,-]?\s*(?P<x>.+)",
        "howto": r"^(?:how (?:do|can|should|would) (?:i|we|you)|show me how to|what(?:'s| is) the (?:process|procedure|"
        r"steps?) (?:for|to))\s+(?P<x>.+)",
        "routine": r"^(?:please\s+|can you\s+|could you\s+)?(?P<verb>prepare|run|check|triage|audit|release|publish|"
        r"set up|plan|draft|clean up|tidy up|ship|deploy|review)\s+"
        r"(?!(?:what|who|whether|if|how|when|where|why)\b)(?P<x>.+)",
        "greeting": r"^(?:hi|hello|hey|good (?:morning|afternoon|evening)|yo)\b",
        "thanks": r"^(?:thanks|thank you|cheers|great|perfect|ok|okay|cool)\b",
        "recap": r"\bwhat do you (?:know|remember) about (?P<who>me|us|the team|the project|this project)\b|"
        r"\bwhat(?:'s| is) in your memory\b",
    }.items()
}


_FIRST = ("forget", "patch", "patch_add", "search")
_REMEMBER = ("remember", "remember_zh", "remember_ja", "remember_jaend")  # (each answered by ``_remember``)


@dataclass
class Step:
    """One tool call of this turn and its result (None while unanswered)."""

    name: str
    args: dict[str, Any]
    result: dict[str, Any] | None


def _result(content: Any) -> dict[str, Any]:
    try:
        value = json.loads(content) if isinstance(content, str) else content
    except (ValueError, RecursionError):
        return {"success": False, "error": str(content)}
    return value if isinstance(value, dict) else {"success": True, "value": value}


def _steps(messages: list[dict[str, Any]], start: int) -> list[Step]:
    results = {m.get("tool_call_id"): m.get("content") for m in messages[start:] if m.get("role") == "tool"}
    steps = []
    for message in messages[start:]:
        for call in message.get("tool_calls") or []:
            fn = call.get("function", {})
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except (ValueError, RecursionError):
                args = {}
            raw = results.get(call.get("id"))
            steps.append(
                Step(fn.get("name", ""), args if isinstance(args, dict) else {}, None if raw is None else _result(raw))
            )
    return steps


def _recall(content: str) -> str:
    """The body of a <memory-context> fence in the API copy of the user message, if any."""
    if SYSTEM_NOTE not in content:
        return ""
    return content.split(SYSTEM_NOTE, 1)[1].split(CLOSE_TAG, 1)[0].strip()


def frozen_entries(system_prompt: str) -> list[tuple[str, str]]:
    """(target, entry) for every entry of the memory blocks in a system prompt."""
    return [(target, entry) for target, (entries, _) in parse_blocks(system_prompt).items() for entry in entries]


def known_entries(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """What the model can know is in memory: the frozen blocks plus this conversation's writes."""
    entries = frozen_entries(messages[0]["content"]) if messages and messages[0].get("role") == "system" else []
    for step in _steps(messages, 0):
        if step.name != "memory" or not step.result or step.result.get("success") is not True:
            continue
        if step.result.get("staged"):
            continue
        target = step.args.get("target") or "memory"
        if step.args.get("action") in ("remove", "replace"):
            entries = [(t, e) for t, e in entries if not (t == target and step.args.get("old_text", "\0") in e)]
        content = step.args.get("content")
        if step.args.get("action") in ("add", "replace") and content and (target, content) not in entries:
            entries.append((target, content))  # (once: a store never holds an entry twice; a resumed prompt may)
    return entries


def _skill_names(messages: list[dict[str, Any]], steps: list[Step]) -> list[tuple[str, str]]:
    """(name, description) pairs from a skills_list result of this turn, else from the prompt's index."""
    for step in steps:
        if step.name == "skills_list" and step.result:
            return [(s.get("name", ""), s.get("description", "")) for s in step.result.get("skills", [])]
    system = messages[0].get("content", "") if messages and messages[0].get("role") == "system" else ""
    return re.findall(r"^\s+- ([\w.-]+)(?::\s*(.*))?$", system, re.M)


def _matching_skill(topic: str, skills: list[tuple[str, str]]) -> str | None:
    scored = [(overlap(topic, f"{name.replace('-', ' ')} {desc}"), name) for name, desc in skills]
    scored = [s for s in scored if s[0] >= 0.5]
    return max(scored)[1] if scored else None


def _skill_body(content: str, max_lines: int = 12) -> str:
    body = content.split("\n---", 2)[-1] if content.startswith("---") else content
    lines = [line for line in body.strip("-\n").splitlines() if line.strip() and not line.startswith("#")]
    return "\n".join(lines[:max_lines])


def _report(result: dict[str, Any] | None, proposal: str, done: str, failure: str) -> ModelReply:
    """The answer after a write: staged for approval, done, or refused (with the tool's reason)."""
    result = result or {}
    if result.get("staged"):
        return ModelReply(
            content=f"I've proposed {proposal}; it is waiting for your approval "
            f"(pending {result.get('pending_id', '?')})."
        )
    if result.get("success"):
        return ModelReply(content=done)
    return ModelReply(content=f"{failure}: {result.get('error', 'unknown error')}")


class OfflineModel(Model):
    name = "offline"

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        index = last_user_index(messages)
        content = str(messages[index].get("content") or "") if index >= 0 else ""
        steps = _steps(messages, index + 1)
        if content == FLUSH_PROMPT:
            reply = self._flush(messages, index)
        elif content.startswith((MEMORY_REVIEW_PROMPT[:40], SKILL_REVIEW_PROMPT[:40])):
            reply = self._next(messages, steps, self._review_plan(messages[:index], content, steps))
        else:
            reply = self._turn(messages, sanitize_context(content).strip(), _recall(content), steps)
        offered = {t.get("function", t).get("name") for t in tools}
        missing = [c.name for c in reply.tool_calls if tools and c.name not in offered]
        if missing:  # like a real model, never call a tool the request did not offer
            return ModelReply(content=f"I can't do that here: the {missing[0]} tool is not available in this session.")
        return reply

    # -- plumbing ---------------------------------------------------------------------
    @staticmethod
    def _call(messages: list[dict[str, Any]], name: str, args: dict[str, Any]) -> ModelReply:
        numbers = [
            int(m.group(1))
            for msg in messages
            for c in msg.get("tool_calls") or []
            for m in [re.match(r"call_(\d+)$", str(c.get("id", "")))]
            if m
        ]
        call_id = f"call_{max(numbers, default=0) + 1:04d}"
        return ModelReply(tool_calls=[ToolCall(call_id, name, args)])

    def _next(self, messages, steps: list[Step], plan: tuple[list[tuple[str, dict]], str]) -> ModelReply:
        calls, answer = plan
        if len(steps) < len(calls):
            name, args = calls[len(steps)]
            return self._call(messages, name, args)
        return ModelReply(content=answer)

    # -- foreground turns ---------------------------------------------------------------
    def _turn(self, messages, text: str, recall: str, steps: list[Step]) -> ModelReply:
        plain = text.strip()
        for intent in (*_FIRST, *_REMEMBER, "howto", "routine", "fact"):
            match = (
                _RE[intent].search(plain) if intent in ("search", "patch", "patch_add") else _RE[intent].match(plain)
            )
            if match and not (intent == "fact" and plain.endswith("?")):
                return getattr(self, f"_{intent.split('_')[0]}")(messages, match, steps)
        return ModelReply(content=self._chat(messages, plain, recall))

    def _remember(self, messages, match, steps: list[Step]) -> ModelReply:
        if looks_secret(match.group("x")):
            return ModelReply(
                content="I won't put that in memory: it looks like a password, key or token, and memory "
                "is shown to the model in every session. Keep it in a secrets manager."
            )
        target, entry = declarative(match.group("x"))
        if not steps:
            known = [e for t, e in known_entries(messages) if t == target]
            was = changed(entry, known)
            if was is not None:  # one name (team, ...): a new one takes the old one's place
                return self._call(
                    messages, "memory", {"action": "replace", "target": target, "old_text": was, "content": entry}
                )
            there = already_known(entry, known)  # (the review's rule: "User uses vim." beside "… editor is vim.")
            if there is not None:
                return ModelReply(
                    content=f"I know that already; your {TARGET_LABELS[target]} says: \u201c{there}\u201d"
                )
            return self._call(messages, "memory", {"action": "add", "target": target, "content": entry})
        label = TARGET_LABELS[steps[-1].args.get("target", target)]
        result = steps[-1].result or {}
        current = result.get("current_entries") or []
        if not result.get("success") and current and "exceed" in str(result.get("error", "")):
            return ModelReply(
                content=f"Your {label} is full ({result.get('usage', 'at its limit')} chars), so that "
                "was not saved. Tell me what to forget to make room, for example: "
                f"{shorten(str(current[0]), 80)}"
            )
        replaced = steps[-1].args.get("old_text") if steps[-1].args.get("action") == "replace" else None
        done = f" (it said \u201c{replaced}\u201d)" if replaced else ""
        return _report(
            result,
            f"adding that to your {label}",
            f"Got it. {'Updated in' if replaced else 'Saved to'} {label}: \u201c{entry}\u201d{done}",
            f"I couldn't save that to {label}",
        )

    _fact = _remember

    def _forget(self, messages, match, steps: list[Step]) -> ModelReply:
        phrase = match.group("x").strip().rstrip(".!")
        entries = known_entries(messages)
        if not keywords(phrase):  # "forget it": nothing says which entry, so ask instead of guessing
            return ModelReply(content="Which entry should I forget? Quote a few words of it.")
        if not steps:
            best = best_match(phrase, [e for _, e in entries])
            guess_target, guess = declarative(phrase)
            target = next((t for t, e in entries if e == best), guess_target)
            return self._call(
                messages, "memory", {"action": "remove", "target": target, "old_text": best or guess.rstrip(".")}
            )
        last = steps[-1]
        result = last.result or {}
        if result.get("success"):
            return _report(
                result,
                "removing that",
                f"Done. I removed \u201c{shorten(last.args.get('old_text', ''), 120)}"
                f"\u201d from your {TARGET_LABELS.get(last.args.get('target', ''), 'memory')}.",
                "",
            )
        tried = {(s.args.get("target"), s.args.get("old_text")) for s in steps}
        current = [str(e) for e in result.get("current_entries") or []]
        retry = best_match(phrase, current)
        if retry and (last.args.get("target"), retry) not in tried:
            return self._call(
                messages, "memory", {"action": "remove", "target": last.args.get("target"), "old_text": retry}
            )
        other = "user" if last.args.get("target") == "memory" else "memory"
        if len(steps) < 3 and not any(t == other for t, _ in tried):
            return self._call(messages, "memory", {"action": "remove", "target": other, "old_text": phrase})
        return ModelReply(
            content=f"I couldn't find anything about \u201c{phrase}\u201d in memory, so nothing was removed."
        )

    def _search(self, messages, match, steps: list[Step]) -> ModelReply:
        topic = match.group("x").strip().rstrip("?.! ")
        if not steps:
            return self._call(messages, "session_search", {"query": search_terms(topic) or topic})
        result = steps[-1].result or {}
        hits = result.get("results") or result.get("sessions") or []
        words = search_terms(topic).split()
        if not hits and len(steps) == 1 and len(words) > 1:  # too narrow: retry with the most specific word
            return self._call(messages, "session_search", {"query": max(words, key=len)})
        if not result.get("success", True) or not hits:
            reason = result.get("error") or "no past session mentions it"
            return ModelReply(content=f"I couldn't find an earlier discussion about {topic} ({reason}).")
        lines = []
        for hit in hits[:3]:
            title = hit.get("title") or hit.get("session_id") or "a session"
            when = str(hit.get("when") or hit.get("started_at") or "")
            snippet = shorten(
                unmarked(str(hit.get("snippet") or hit.get("summary") or "")), 140
            )  # (an answer quotes the text, not its marks)
            lines.append(f"- {title}{f' ({when})' if when else ''}: {snippet}")
        return ModelReply(content=f"Here is what we discussed about {topic}:\n" + "\n".join(lines))

    def _howto(self, messages, match, steps: list[Step]) -> ModelReply:
        task = match.group("x").strip().rstrip("?.! ")
        if not steps:
            return self._call(messages, "skills_list", {})
        name = _matching_skill(task, _skill_names(messages, steps))
        viewed = next((s for s in steps if s.name == "skill_view"), None)
        if name and viewed is None:
            return self._call(messages, "skill_view", {"name": name})
        if viewed and viewed.result and viewed.result.get("success"):
            body = _skill_body(str(viewed.result.get("content", "")))
            return ModelReply(content=f"Following the {viewed.args.get('name')} skill:\n{body}")
        return ModelReply(
            content=f"I don't have a saved procedure to {task} yet. Walk me through it once and I "
            "can keep it as a skill."
        )

    def _routine(self, messages, match, steps: list[Step]) -> ModelReply:
        verb, topic = match.group("verb").lower(), match.group("x").split(",")[0].strip().rstrip("?.! ")
        if not steps:
            return self._call(messages, "skills_list", {})
        name = _matching_skill(f"{verb} {topic}", _skill_names(messages, steps))
        viewed = next((s for s in steps if s.name == "skill_view"), None)
        if name and viewed is None:
            return self._call(messages, "skill_view", {"name": name})
        searched = next((s for s in steps if s.name == "session_search"), None)
        if searched is None:
            return self._call(messages, "session_search", {"query": search_terms(topic, limit=2) or topic})
        found = len((searched.result or {}).get("results") or [])
        plan = (
            _skill_body(str(viewed.result.get("content", "")))
            if viewed and viewed.result and viewed.result.get("success")
            else (
                "1. Gather what changed since last time.\n"
                f"2. Work through {topic} step by step.\n3. Report the outcome."
            )
        )
        return ModelReply(
            content=f"Plan to {verb} {topic}:\n{plan}\n(I checked {found} related earlier "
            f"session{'s' if found != 1 else ''}.)"
        )

    def _patch(self, messages, match, steps: list[Step]) -> ModelReply:
        name, addition = match.group("name"), sentence(match.group("x").strip())
        if not steps:
            return self._call(messages, "skill_view", {"name": name})
        viewed = steps[0].result or {}
        if not viewed.get("success"):
            return ModelReply(content=f"I couldn't open the {name} skill: {viewed.get('error', 'not found')}")
        if len(steps) == 1:
            content = str(viewed.get("content", ""))
            patch = append_patch(name, content, next_step(content, addition))
            if patch is None:
                return ModelReply(content=f"The {name} skill is empty, so there is nothing to add a step to.")
            return self._call(messages, "skill_manage", patch)
        return _report(
            steps[-1].result,
            f"the change to {name}",
            f"Updated the {name} skill: {addition}",
            f"I couldn't update {name}",
        )

    def _chat(self, messages, text: str, recall: str) -> str:
        if _RE["greeting"].match(text):
            return "Hello! I can remember things for you, search our past sessions and follow saved procedures."
        if _RE["thanks"].match(text):
            return "You're welcome."
        recap = _RE["recap"].search(text)
        if recap:
            target = "user" if recap.group("who") == "me" else "memory"
            entries = [e for t, e in known_entries(messages) if recap.group("who") is None or t == target]
            return (
                ("Here is what I have:\n" + "\n".join(f"- {e}" for e in entries))
                if entries
                else "Nothing yet. Tell me what to remember."
            )
        known = [entry for _, entry in known_entries(messages)]
        hit = best_match(text, known, minimum=0.5)
        if hit:
            return f"From what I remember: {hit}"
        recalled = best_match(text, [line.lstrip("-* ") for line in recall.splitlines() if line.strip()], 0.34)
        if recalled:
            return f"From our earlier sessions: {shorten(recalled, 200)}"
        if text.endswith("?"):
            return "I don't have anything about that in memory yet. If it matters, ask me to remember it."
        return "Okay, noted for this session. Tell me if any of it should be remembered for later."

    # -- memory flush and background review ----------------------------------------------
    @staticmethod
    def _flush(messages, index: int) -> ModelReply:
        """All the adds in one reply (the flush is a single request): stated facts not yet in memory."""
        known = [entry for _, entry in known_entries(messages)]
        found = findings(messages[1:index], known)
        if not found:
            return ModelReply(content="Nothing to save.")
        calls = [ToolCall(f"flush_{n}", "memory", f.call) for n, f in enumerate(found, 1)]
        return ModelReply(
            content="Saving before the compression: " + "; ".join(f.why for f in found) + ".", tool_calls=calls
        )

    def _review_plan(self, conversation, prompt: str, steps: list[Step]) -> tuple[list[tuple[str, dict]], str]:
        """The review's tool calls in order (each decided from the results so far) and its closing line."""
        calls: list[tuple[str, dict]] = []
        why: list[str] = []
        if MEMORY_REVIEW_PROMPT[:40] in prompt:
            live = (
                re.findall(r"^- \[(?:memory|user)\] (.+)$", prompt.split(LIVE_MEMORY_HEADING, 1)[-1], re.M)
                if LIVE_MEMORY_HEADING in prompt
                else []
            )
            for finding in findings(conversation, [entry for _, entry in known_entries(conversation)] + live):
                calls.append(("memory", finding.call))
                why.append(finding.why)
        if SKILL_REVIEW_PROMPT[:40] in prompt:
            results = [s.result for s in steps]
            for routine in self._repeated_routines(conversation):
                reason = plan_change(routine, calls, results)
                if reason:
                    why.append(reason)
        outcomes = [s.result or {} for s in steps]
        refused = [str(r.get("error")) for r in outcomes if r.get("success") is False]
        answer = "Why: " + "; ".join(why) + "." if why else "Nothing to save."
        if refused:
            answer += " Not saved: " + shorten(refused[0], 160)
        return calls, answer

    @staticmethod
    def _repeated_routines(conversation) -> list[Routine]:
        """Routine requests asked at least twice with the same multi-step tool sequence."""
        seen: dict[str, list[tuple[str, list[Step]]]] = {}
        for index, message in enumerate(conversation):
            if message.get("role") != "user":
                continue
            match = _RE["routine"].match(sanitize_context(str(message.get("content") or "")).strip())
            if not match:
                continue
            end = next(
                (i for i in range(index + 1, len(conversation)) if conversation[i].get("role") == "user"),
                len(conversation),
            )
            sequence = _steps(conversation[:end], index + 1)
            if len(sequence) >= 2:  # same verb and first two key words: the same kind of request
                request = f"{match.group('verb').lower()} {' '.join(keywords(match.group('x'))[:2])}"
                seen.setdefault(slug(request), []).append((request, sequence))
        routines = []
        for name, uses in seen.items():
            if len(uses) < 2:
                continue
            request, sequence = uses[-1]
            names = [s.name for s in sequence]
            viewed = next(
                (
                    s.args.get("name")
                    for _, seq in uses
                    for s in seq
                    if s.name == "skill_view" and s.result and s.result.get("success")
                ),
                None,
            )
            steps = "\n".join(
                f"{n}. {line}"
                for n, line in enumerate(
                    [
                        "Check skills_list for an existing procedure and load it with skill_view.",
                        f"Search past sessions (session_search) for earlier work on {request.split(' ', 1)[-1]}.",
                        "Work through the task in small steps and confirm each result.",
                        "Report what was done and anything left open.",
                    ],
                    1,
                )
            )
            body = (
                f"# {sentence(request)[:-1]}\n\n"
                f"Learned from {len(uses)} repeated requests (tool sequence: {' -> '.join(names)}).\n\n"
                f"## Steps\n{steps}\n"
            )
            missing = [n for n in dict.fromkeys(names) if n not in ("skills_list", "skill_view")]
            routines.append(Routine(name, request, body, names, len(uses), viewed, missing))
        return routines

    # -- session_search recaps -----------------------------------------------------------
    def recap(self, topic: str, transcript: str) -> str:
        """Extractive: the first request of the excerpt, then the sentences that share most words with ``topic``."""
        turns = [line.split(": ", 1) for line in transcript.split("\n\n") if ": " in line]
        asked = next((text for role, text in turns if role == "USER"), "")
        sentences = [
            (overlap(topic, part), -n, part.strip())
            for n, (role, text) in enumerate(turns)
            if role in ("USER", "ASSISTANT")
            for part in re.split(r"(?<=[.!?\u3002])\s*", text)
            if part.strip()
        ]
        relevant = [part for score, _, part in sorted(sentences, reverse=True)[:2] if score > 0 and part != asked]
        lines = [f"The user asked: {shorten(asked, 200)}"] if asked else []
        lines += [f"Relevant: {shorten(part, 200)}" for part in relevant]
        return "\n".join(lines) or "No recap: the excerpt has no messages."

    # -- compression --------------------------------------------------------------------
    def summarise(self, messages: list[dict[str, Any]]) -> str:
        """Extractive: the requests, the actions taken with their tools, and the answers given."""
        requests, answers, actions = [], [], []
        for message in messages:
            role, text = message.get("role"), sanitize_context(str(message.get("content") or "")).strip()
            if role == "user" and text:
                requests.append(shorten(text, 160))
            elif role == "assistant":
                if text:
                    answers.append(shorten(text, 160))
                for call in message.get("tool_calls") or []:
                    fn = call.get("function", {})
                    actions.append(f"{fn.get('name')} {shorten(str(fn.get('arguments', '')), 100)}")
        parts = ["## Goal", requests[-1] if requests else "(no user request in the compacted turns)"]
        if requests[:-1]:
            parts += ["## Earlier requests", *[f"- {r}" for r in requests[:-1][-8:]]]
        if actions:
            parts += ["## Completed actions", *[f"{n}. {a}" for n, a in enumerate(actions[-12:], 1)]]
        if answers:
            parts += ["## Answers given", *[f"- {a}" for a in answers[-8:]]]
        return "\n".join(parts)
