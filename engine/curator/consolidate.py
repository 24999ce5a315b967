"""Consolidation: overlapping curator-managed skills merged into one umbrella, as a reviewed plan.

A plan names the skills an umbrella absorbs (with the SHA-256 of every file they hold
when planned), the umbrella's SKILL.md, where each support file goes, the sections
dropped (each with a reason) and why. It is plain JSON, staged as one pending skills
record (action ``consolidate``, origin ``curator``). Nothing runs before ``verify``
passes: every absorbed section is in the umbrella verbatim or dropped with a reason,
every support file moves byte-identical, names do not collide and every path stays in
the skill tree. Applying re-verifies under the skills lock (so a skill changed since
planning refuses the plan), writes the umbrella, archives the absorbed skills, points
cron jobs at the umbrella and updates ``.usage.json``: one journal row and one ledger
entry, which ``curator rollback`` reverses byte for byte.

Offline, plans come from deterministic rapidfuzz clustering over names, descriptions
and bodies (``curator.consolidation_threshold``); the umbrella is the absorbed skills'
sections in order, under one heading per skill.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import yaml
from rapidfuzz import fuzz

from ..diffs import line_diff
from ..errors import ReadOnlyError
from ..fileio import UnsafePath, atomic_write_bytes, atomic_write_text, file_lock, read_regular
from ..models.base import ModelError
from ..skills.changes import Change, record_change, remove_empty_parents
from ..skills.discovery import Found
from ..skills.frontmatter import parse_frontmatter, validate_skill_md
from ..skills.usage import default_record, iso, origin_fields
from ..skills.validation import MAX_DESCRIPTION_LENGTH, SkillError, check_name, contained
from .archive import destination, stamp
from .cron import jobs_path, load_jobs, skills_of
from .ledger import sha256
from .transitions import UNJUDGED

ACTION = "consolidate"
ORIGIN = "curator"
REPLAN = "Reject it and let the Curator plan again."  # what to do with a plan that no longer holds
_HEADING = re.compile(r"^#{1,6}\s")
_FENCE = re.compile(r"^\s*(```|~~~)")
_TOKENS = re.compile(r"[-_.]")
MODEL_CANDIDATES = 30  # skills shown to a model in one planning request

_NAMES = {"type": "array", "items": {"type": "string"}}
PLAN_TOOL = {
    "name": "propose_consolidation",
    "description": "Propose one umbrella skill that absorbs two or more overlapping skills (absorbed: [] for none).",
    "parameters": {
        "type": "object",
        "required": ["absorbed", "umbrella_name", "description", "body", "moves", "dropped", "reason"],
        "properties": {
            "absorbed": {**_NAMES, "description": "Names of the skills the umbrella replaces (two or more)."},
            "umbrella_name": {"type": "string", "description": "A new skill name: lowercase, digits, '-', '_' or '.'."},
            "description": {"type": "string", "description": "One sentence: what the umbrella is for."},
            "body": {
                "type": "string",
                "description": "The umbrella SKILL.md body (markdown, no frontmatter). Keep every "
                "section of every absorbed skill verbatim unless it is in dropped.",
            },
            "moves": {
                "type": "array",
                "description": "Every support file of every absorbed skill, and where it goes inside the umbrella.",
                "items": {
                    "type": "object",
                    "required": ["skill", "from", "to"],
                    "properties": {"skill": {"type": "string"}, "from": {"type": "string"}, "to": {"type": "string"}},
                },
            },
            "dropped": {
                "type": "array",
                "description": "Sections left out, each with why (e.g. an exact duplicate).",
                "items": {
                    "type": "object",
                    "required": ["skill", "section", "reason"],
                    "properties": {
                        "skill": {"type": "string"},
                        "section": {"type": "string", "description": "its heading line"},
                        "reason": {"type": "string"},
                    },
                },
            },
            "reason": {"type": "string", "description": "Why these skills belong together."},
        },
    },
}
PLAN_PROMPT = (
    "You maintain an AI agent's skill library. Below are the curator-managed skills as JSON (name, description, "
    "SKILL.md, support files). If two or more overlap enough that one class-level umbrella skill would serve "
    "better, propose that umbrella with propose_consolidation; otherwise call it with absorbed: []. The umbrella "
    "must keep every section of every absorbed skill verbatim (or list it in dropped with a reason) and carry "
    "every support file. Never invent content."
)


def sections(body: str) -> list[tuple[str, str]]:
    """(heading line, section text including its heading) for a markdown body; fenced code never splits."""
    found: list[tuple[str, list[str]]] = [("", [])]
    fenced = False
    for line in body.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        if not fenced and _HEADING.match(line):
            found.append((line.strip(), []))
        found[-1][1].append(line)
    return [(heading, "\n".join(lines).strip()) for heading, lines in found if "\n".join(lines).strip()]


def absorbed_names(meta: dict[str, Any]) -> list[str]:
    """The ``absorbed`` frontmatter list of an umbrella (names it answers to)."""
    value = meta.get("absorbed")
    if isinstance(value, str):
        value = [value]
    return [str(v).strip() for v in value or [] if str(v).strip()] if isinstance(value, (list, tuple, str)) else []


def _files(folder: Path) -> dict[str, bytes]:
    """Every regular file of a skill folder, by path inside it (lock and temp files skipped)."""
    files = {}
    for dirpath, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(dirpath, d)))
        for name in sorted(names):
            path = Path(dirpath, name)
            if not path.is_symlink() and not name.endswith((".lock", ".tmp")):
                try:
                    files[path.relative_to(folder).as_posix()] = read_regular(path)
                except UnsafePath:  # a FIFO or a device has no content (and would block a read)
                    continue
    return files


def _unchanged(files: dict[str, bytes], item: dict[str, Any]) -> bool:
    """Whether a skill's files are those a plan hashed when it was made (``item["files"]``)."""
    return {rel: sha256(data) for rel, data in files.items()} == item["files"]


@dataclass(frozen=True)
class _Member:
    found: Found
    body: str  # SKILL.md without its frontmatter


class Consolidator:
    def __init__(self, curator):
        self.curator = curator
        self.home = curator.home
        self.skills = curator.skills

    # -- candidates and clustering ---------------------------------------------------
    def candidates(self) -> list[_Member]:
        """Active curator-managed skills that are not pinned (never bundled, hub or user-owned); refused
        while ``.usage.json`` cannot be read, which says which those are."""
        self.skills.usage.check(refused=UNJUDGED)
        records = self.skills.usage.load()
        classify = self.skills.provenance_of()
        members = []
        for found in self.skills.scanner.active():
            record = records.get(found.name)
            if (record or {}).get("pinned") or not self.curator._managed(classify(found, record)):
                continue
            text = (found.path / "SKILL.md").read_text(encoding="utf-8", errors="replace")
            members.append(_Member(found, parse_frontmatter(text)[1]))
        return members

    @staticmethod
    def score(a: _Member, b: _Member) -> float:
        """How much two skills overlap, 0-100: names 40 %, descriptions 30 %, bodies 30 %."""
        name = fuzz.token_set_ratio(_TOKENS.sub(" ", a.found.name), _TOKENS.sub(" ", b.found.name))
        description = fuzz.token_set_ratio(a.found.description, b.found.description)
        body = fuzz.token_set_ratio(a.body[:4000], b.body[:4000])
        return round(0.4 * name + 0.3 * description + 0.3 * body, 1)

    def clusters(self, members: list[_Member], threshold: float) -> list[tuple[float, list[_Member]]]:
        """Groups of two or more linked by a pair scoring at least ``threshold``; best first."""
        parent = list(range(len(members)))

        def root(i: int) -> int:
            while parent[i] != i:
                i = parent[i]
            return i

        best: dict[int, float] = {}
        scores = {}
        for i in range(len(members)):
            for j in range(i + 1, len(members)):
                scores[i, j] = self.score(members[i], members[j])
                if scores[i, j] >= threshold:
                    parent[root(j)] = root(i)
        groups: dict[int, list[int]] = {}
        for i in range(len(members)):
            groups.setdefault(root(i), []).append(i)
        for key, ids in groups.items():
            best[key] = max((scores[i, j] for i in ids for j in ids if i < j), default=0.0)
        found = [(best[k], [members[i] for i in ids]) for k, ids in groups.items() if len(ids) > 1]
        return sorted(found, key=lambda item: (-item[0], item[1][0].found.name))

    # -- the offline plan --------------------------------------------------------------
    def _taken(self) -> set[str]:
        every = self.skills.scanner.active() + self.skills.scanner.archived()
        return {n for f in every for n in (f.name, f.dir_name)} | {n for f in every for n in absorbed_names(f.meta)}

    def _umbrella_name(self, names: list[str]) -> str:
        token_lists = [_TOKENS.split(n) for n in names]
        common = []
        for parts in zip(*token_lists, strict=False):
            if len(set(parts)) != 1:
                break
            common.append(parts[0])
        base = "-".join(common) if common and len("-".join(common)) >= 3 else f"{names[0]}-family"
        taken = self._taken()
        candidate, count = base, 1
        while candidate in taken:
            count += 1
            candidate = f"{base}-skills" if count == 2 else f"{base}-skills-{count - 1}"
        return candidate

    def offline_plan(self, score: float, members: list[_Member]) -> dict[str, Any]:
        members = sorted(members, key=lambda m: m.found.name)
        names = [m.found.name for m in members]
        name = self._umbrella_name(names)
        categories = {m.found.category for m in members}
        category = categories.pop() if len(categories) == 1 else None
        moves, taken = [], set()
        for member in members:
            for rel, data in _files(member.found.path).items():
                if rel == "SKILL.md":
                    continue
                target = rel
                if target in taken:
                    path = PurePosixPath(rel)
                    target = str(path.with_name(f"{member.found.name}-{path.name}"))
                taken.add(target)
                moves.append({"skill": member.found.name, "from": rel, "to": target, "sha256": sha256(data)})
        described = "; ".join(m.found.description.rstrip().removesuffix(".") for m in members)  # (not ".;")
        description = "Umbrella for " + ", ".join(names) + ": " + described
        if len(description) > MAX_DESCRIPTION_LENGTH:
            description = description[: MAX_DESCRIPTION_LENGTH - 3] + "..."
        front = yaml.safe_dump(
            {"name": name, "description": description, "absorbed": names},
            sort_keys=False,
            allow_unicode=True,
            width=10_000,
        )
        parts = [
            f"# {name}",
            "",
            f"Consolidated by the Curator from {len(names)} overlapping skills, now archived. Each part "
            f"below is one of them, unchanged, under its old name: load this skill, {name}, wherever one "
            "of them is called for.",
        ]
        for member in members:
            parts += ["", f"## {member.found.name}", "", member.found.description]
            body = member.body.strip()
            if body:
                parts += ["", body]
            own = [m for m in moves if m["skill"] == member.found.name]
            if own:
                parts += ["", "Support files: " + ", ".join(f"`{m['to']}`" for m in own)]
        reason = (
            f"{len(names)} curator-managed skills overlap (similarity {score:g} of 100, threshold "
            f"{self.home.config.float('curator.consolidation_threshold'):g}): {', '.join(names)}."
        )
        return self.plan_record(
            name,
            category,
            f"---\n{front}---\n\n" + "\n".join(parts) + "\n",
            members,
            moves,
            [],
            reason,
            "offline",
            score,
        )

    def model_plan(self, model, members: list[_Member]) -> dict[str, Any] | None:
        """A plan from a model, forced through ``PLAN_TOOL``; None when it proposes no merge."""
        shown = members[:MODEL_CANDIDATES]
        skills = [
            {
                "name": m.found.name,
                "description": m.found.description,
                "skill_md": (m.found.path / "SKILL.md").read_text(encoding="utf-8", errors="replace"),
                "support_files": [rel for rel in _files(m.found.path) if rel != "SKILL.md"],
            }
            for m in shown
        ]
        reply = model.complete(
            [
                {"role": "system", "content": PLAN_PROMPT},
                {"role": "user", "content": json.dumps(skills, ensure_ascii=False, indent=1)},
            ],
            [{"type": "function", "function": PLAN_TOOL}],
            force_tool=PLAN_TOOL["name"],
        )
        call = next((c for c in reply.tool_calls if c.name == PLAN_TOOL["name"]), None)
        if call is None:
            raise ModelError("The model did not call propose_consolidation; no plan was made.")
        args = call.arguments
        names = [str(n) for n in args.get("absorbed") or []]
        if not names:
            return None
        chosen = [m for m in shown if m.found.name in names]
        if len(chosen) != len(names):
            unknown = sorted(set(names) - {m.found.name for m in chosen})
            raise ModelError(f"The model's plan absorbs skills that are not candidates: {', '.join(unknown)}.")
        by_name = {m.found.name: m for m in chosen}
        moves = []
        for move in args.get("moves") or []:
            source = by_name.get(str(move.get("skill")))
            digest = "missing"
            if source is not None:
                path = source.found.path / str(move.get("from"))
                if self._in_tree(f"{source.found.rel}/{move.get('from')}") and path.is_file():
                    digest = sha256(path.read_bytes())
            moves.append(
                {
                    "skill": str(move.get("skill")),
                    "from": str(move.get("from")),
                    "to": str(move.get("to")),
                    "sha256": digest,
                }
            )
        name = str(args.get("umbrella_name") or "")
        categories = {m.found.category for m in chosen}
        front = yaml.safe_dump(
            {
                "name": name,
                "description": str(args.get("description") or "")[:MAX_DESCRIPTION_LENGTH],
                "absorbed": names,
            },
            sort_keys=False,
            allow_unicode=True,
            width=10_000,
        )
        dropped = [
            {"skill": str(d.get("skill")), "section": str(d.get("section")), "reason": str(d.get("reason") or "")}
            for d in args.get("dropped") or []
            if isinstance(d, dict)
        ]
        return self.plan_record(
            name,
            categories.pop() if len(categories) == 1 else None,
            f"---\n{front}---\n\n{str(args.get('body') or '').strip()}\n",
            chosen,
            moves,
            dropped,
            str(args.get("reason") or ""),
            f"model:{getattr(model, 'name', 'openai')}",
            None,
        )

    def plan_record(
        self,
        name: str,
        category: str | None,
        skill_md: str,
        members: list[_Member],
        moves: list[dict[str, Any]],
        dropped: list[dict[str, str]],
        reason: str,
        source: str,
        score: float | None,
    ) -> dict[str, Any]:
        """The JSON plan (also the pending record's payload under ``plan``)."""
        return {
            "umbrella": {"name": name, "path": f"{category}/{name}" if category else name, "skill_md": skill_md},
            "absorbed": [
                {
                    "name": m.found.name,
                    "path": m.found.rel,
                    "files": {rel: sha256(data) for rel, data in _files(m.found.path).items()},
                }
                for m in members
            ],
            "moves": moves,
            "dropped": dropped,
            "reason": reason,
            "source": source,
            "score": score,
            "planned_at": iso(self.home.clock.now()),
        }

    # -- verification ------------------------------------------------------------------
    def verify(self, plan: Any) -> list[str]:
        """Every reason this plan must not run (empty: it is safe to show and apply)."""
        try:
            return self._verify(plan)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            return [f"the plan is malformed ({type(exc).__name__}: {exc})"]

    def _verify(self, plan: dict[str, Any]) -> list[str]:
        problems: list[str] = []
        umbrella, absorbed = plan["umbrella"], plan["absorbed"]
        names = [a["name"] for a in absorbed]
        if len(names) < 2 or len(set(names)) != len(names):
            problems.append("a consolidation needs two or more distinct skills to absorb")
        try:
            check_name(umbrella["name"])
        except SkillError as exc:
            problems.append(f"umbrella name: {exc.message}")
        target = self.skills.dir / str(umbrella["path"])
        if not self._in_tree(str(umbrella["path"])):
            problems.append(f"umbrella path '{umbrella['path']}' is outside the skill tree")
        elif target.exists():
            problems.append(f"umbrella folder '{umbrella['path']}' already exists")
        if umbrella["name"] in self._taken() - set(names) or umbrella["name"] in names:
            problems.append(f"umbrella name '{umbrella['name']}' collides with an existing skill")
        try:
            meta = validate_skill_md(umbrella["skill_md"])
        except SkillError as exc:
            problems.append(f"umbrella SKILL.md: {exc.message}")
            meta = {}
        if meta and str(meta.get("name")) != umbrella["name"]:
            problems.append("umbrella SKILL.md's name differs from the umbrella's")
        if meta and sorted(absorbed_names(meta)) != sorted(names):
            problems.append("umbrella frontmatter 'absorbed' must list exactly the absorbed skills")
        umbrella_body = parse_frontmatter(umbrella["skill_md"])[1]
        dropped = {(d["skill"], d["section"]) for d in plan.get("dropped") or [] if str(d.get("reason") or "").strip()}
        moves = plan.get("moves") or []
        destinations = [m["to"] for m in moves]
        if len(set(destinations)) != len(destinations):
            problems.append("two support files move to the same path in the umbrella")
        for move in moves:
            if move["skill"] not in names:
                problems.append(f"a support file move names '{move['skill']}', which the plan does not absorb")
            if (
                move["to"] == "SKILL.md"
                or not self._in_tree(f"{umbrella['path']}/{move['to']}")
                or any(other.startswith(move["to"] + "/") for other in destinations)
            ):
                problems.append(f"support file destination '{move['to']}' is not a file inside the umbrella")
        records = self.skills.usage.load()
        classify = self.skills.provenance_of()
        for item in absorbed:
            problems += self._verify_member(item, moves, umbrella_body, dropped, records, classify)
        return problems

    def _in_tree(self, rel: str) -> bool:
        parts = PurePosixPath(rel).parts
        return (
            bool(parts)
            and not PurePosixPath(rel).is_absolute()
            and ".." not in parts
            and not any(p.startswith(".") for p in parts)
            and contained(self.skills.dir / rel, self.skills.dir)
        )

    def _member(self, item) -> tuple[Found, dict[str, bytes]] | None:
        """A skill a plan absorbs, as the library holds it now: still active where the plan found it,
        under its name, and its files (None when it is not)."""
        folder = self.skills.dir / str(item["path"])
        if not self._in_tree(str(item["path"])) or not (folder / "SKILL.md").is_file():
            return None
        found = next((f for f in self.skills.scanner.named(str(item["path"])) if f.rel == item["path"]), None)
        return None if found is None or found.name != item["name"] else (found, _files(folder))

    def as_planned(self, item) -> bool:
        """Whether a skill a plan absorbs is still active where the plan found it, every file as it was then."""
        member = self._member(item)
        return member is not None and _unchanged(member[1], item)

    def _verify_member(self, item, moves, umbrella_body, dropped, records, classify) -> list[str]:
        name = item["name"]
        member = self._member(item)
        if member is None:
            return [f"'{name}' is no longer at skills/{item['path']}"]
        found, files = member
        record = records.get(name)
        if (record or {}).get("pinned") or not self.curator._managed(classify(found, record)):
            return [f"'{name}' is pinned or not curator-managed; the Curator never consolidates it"]
        if not _unchanged(files, item):
            return [f"'{name}' changed since the plan was made"]
        problems = []
        own = {m["from"]: m for m in moves if m["skill"] == name}
        for rel, data in files.items():
            if rel == "SKILL.md":
                continue
            move = own.get(rel)
            if move is None:
                problems.append(f"support file {name}/{rel} is not carried into the umbrella")
            elif move["sha256"] != sha256(data):
                problems.append(f"support file {name}/{rel} would not arrive byte-identical")
        problems += [f"'{name}' has no support file {rel}" for rel in own if rel not in files]
        body = parse_frontmatter(files["SKILL.md"].decode("utf-8", "replace"))[1]
        for heading, text in sections(body):
            if text not in umbrella_body and (name, heading) not in dropped:
                problems.append(
                    f"section '{heading or '(preamble)'}' of '{name}' is neither in the umbrella nor "
                    "dropped with a reason"
                )
        return problems

    # -- reviewing -----------------------------------------------------------------------
    def pending(self) -> list:
        return [r for r in self.home.approvals.list("skills") if r.action == ACTION]

    def propose(self) -> dict[str, Any]:
        """Plan one consolidation, verify it, then stage it (or apply it with ``consolidate_without_approval``)."""
        if self.home.read_only:
            raise ReadOnlyError("This home is open read-only; no consolidation can be planned.")
        waiting = self.pending()
        if waiting:
            return {
                "success": True,
                "staged": False,
                "pending_id": waiting[0].id,
                "message": f"A consolidation plan is already waiting for review ({waiting[0].id}).",
            }
        try:
            plan = self._plan()
        except ModelError as exc:
            return {"success": False, "error": f"No consolidation plan: {exc.message}"}
        if plan is None:
            return {"success": True, "staged": False, "message": "No overlapping curator-managed skills to merge."}
        problems = self.verify(plan)
        if problems:
            self.home.journal.append(
                "skills",
                "consolidate_refused",
                plan["umbrella"]["name"],
                actor="curator",
                detail={"problems": problems, "plan": plan},
            )
            return {
                "success": False,
                "error": "The consolidation plan failed verification and was not staged: " + "; ".join(problems),
                "problems": problems,
            }
        payload = {"action": ACTION, "name": plan["umbrella"]["name"], "plan": plan}
        if self.home.config.bool("curator.consolidate_without_approval"):
            return {**self.apply(payload, actor="curator"), "staged": False}
        record = self.home.approvals.stage(
            subsystem="skills",
            action=ACTION,
            summary=self.summary(plan),
            origin=ORIGIN,
            payload=payload,
            actor="curator",
        )
        return {
            "success": True,
            "staged": True,
            "pending_id": record.id,
            "summary": record.summary,
            "message": f"Consolidation plan staged for review: `workbench pending show {record.id}`.",
        }

    def _plan(self) -> dict[str, Any] | None:
        """The next plan: from the configured model when it is ``openai``, else offline clustering."""
        members = self.candidates()
        if self.home.config.str("model.backend").lower() == "openai":
            from ..models import make_model

            model = make_model(self.home)
            try:
                return self.model_plan(model, members)
            finally:
                model.close()
        clusters = self.clusters(members, self.home.config.float("curator.consolidation_threshold"))
        return self.offline_plan(*clusters[0]) if clusters else None

    @staticmethod
    def summary(plan: dict[str, Any]) -> str:
        names = [a["name"] for a in plan["absorbed"]]
        return f"consolidate {', '.join(names)} into '{plan['umbrella']['name']}'"

    def preview(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The multi-file view of a plan: each file created, moved or archived, with a line diff."""
        plan = payload.get("plan") if isinstance(payload, dict) else None
        problems = self.verify(plan)
        if problems or not isinstance(plan, dict):  # (verify calls a plan that is not a dict malformed)
            return {
                "name": payload.get("name"),
                "file": "SKILL.md",
                "path": None,
                "before": None,
                "after": None,
                "error": f"{'; '.join(problems)}. {REPLAN}",
            }
        umbrella = plan["umbrella"]
        files = [
            {
                "path": f"{umbrella['path']}/SKILL.md",
                "kind": "create",
                "before": None,
                "after": umbrella["skill_md"],
                "diff": line_diff("", umbrella["skill_md"]),
            }
        ]
        for move in plan["moves"]:
            source = next(a for a in plan["absorbed"] if a["name"] == move["skill"])
            data = (self.skills.dir / source["path"] / move["from"]).read_bytes()
            text = data.decode("utf-8", "replace")
            files.append(
                {
                    "path": f"{umbrella['path']}/{move['to']}",
                    "kind": "copy",
                    "from": f"{source['path']}/{move['from']}",
                    "before": None,
                    "after": text,
                    "diff": line_diff("", text),
                }
            )
        for item in plan["absorbed"]:
            text = (self.skills.dir / item["path"] / "SKILL.md").read_text(encoding="utf-8", errors="replace")
            files.append(
                {
                    "path": f"{item['path']}/SKILL.md",
                    "kind": "archive",
                    "before": text,
                    "after": None,
                    "diff": line_diff(text, ""),
                }
            )
        cron = self._cron_rewrite({a["name"]: umbrella["name"] for a in plan["absorbed"]})
        diff = [
            line
            for item in files
            for line in [
                (" ", f"=== {item['kind']} {item['path']}" + (f" (from {item['from']})" if item.get("from") else ""))
            ]
            + item["diff"]
            + [(" ", "")]
        ]
        return {
            "name": umbrella["name"],
            "file": "SKILL.md",
            "path": f"{umbrella['path']}/SKILL.md",
            "before": None,
            "after": umbrella["skill_md"],
            "error": None,
            "files": files,
            "diff": diff[:-1],
            "absorbed": [a["name"] for a in plan["absorbed"]],
            "moves": plan["moves"],
            "dropped": plan["dropped"],
            "reason": plan["reason"],
            "cron": cron[1] if cron else [],
        }

    # -- applying --------------------------------------------------------------------------
    @property
    def _cron_path(self) -> Path:
        return jobs_path(self.home)

    def _cron_rewrite(self, mapping: dict[str, str]) -> tuple[str, list[dict[str, Any]]] | None:
        """(new jobs.json text, rewrites) when a cron job names an absorbed skill; None otherwise."""
        loaded = load_jobs(self.home)
        if loaded is None:
            return None
        data, jobs = loaded
        rewrites = []
        for job in jobs:
            if not isinstance(job, dict):
                continue
            before = skills_of(job)
            after: list[str] = []
            for skill in before:
                mapped = mapping.get(skill, skill)
                if mapped not in after:
                    after.append(mapped)
            if after != before:
                job["skills"], job["skill"] = after, after[0] if after else None
                rewrites.append(
                    {"job_id": job.get("id"), "job_name": job.get("name"), "before": before, "after": after}
                )
        if not rewrites:
            return None
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n", rewrites

    def apply(
        self,
        payload: dict[str, Any],
        *,
        actor: str = "user",
        pending_id: str | None = None,
        session_id: str | None = None,
        message_id: int | None = None,
    ) -> dict[str, Any]:
        """Apply exactly this plan under the skills lock; refused (nothing written) if it no longer verifies."""
        if self.home.read_only:
            raise ReadOnlyError("This home is open read-only; nothing was written.")
        plan = payload.get("plan") if isinstance(payload, dict) else None
        with self.skills.write_lock(), file_lock(self.home.root / "cron" / ".jobs"):
            problems = self.verify(plan)
            if problems:
                raise SkillError(
                    f"The plan no longer holds: {'; '.join(problems)}. {REPLAN}",
                    problems=problems,
                )
            return self._apply(plan, actor, pending_id, session_id, message_id)

    def _apply(self, plan, actor, pending_id, session_id, message_id) -> dict[str, Any]:
        umbrella = plan["umbrella"]
        target = self.skills.dir / umbrella["path"]
        now = self.home.clock.now()
        sources = {a["name"]: self.skills.dir / a["path"] for a in plan["absorbed"]}
        archive_to: dict[str, Path] = {}
        for name, folder in sources.items():
            dest, later = destination(self.skills.archive_dir, folder.name, now), now
            while dest in archive_to.values():  # two absorbed skills share a folder name (other categories)
                later += 1
                dest = self.skills.archive_dir / f"{folder.name}-{stamp(later)}"
            archive_to[name] = dest
        cron = self._cron_rewrite({name: umbrella["name"] for name in sources})
        records = self.skills.usage.load()
        usage_before = {name: records.get(name) for name in [*sources, umbrella["name"]]}
        usage_after = {umbrella["name"]: {**default_record(iso(now)), "created_by": "agent", "absorbed": list(sources)}}
        for name, folder in sources.items():
            usage_after[name] = {
                **(records.get(name) or default_record(iso(now))),
                "state": "archived",
                "archived_at": iso(now),
                "archive_dir": archive_to[name].name,
                **origin_fields(folder.relative_to(self.skills.dir).as_posix(), iso(now)),
                "absorbed_into": umbrella["name"],
            }

        cron_before = self.home.links.read_bytes(self._cron_path) if cron else None

        def mutate() -> None:
            """All or nothing: a failure part-way puts every moved folder and file back."""
            moved: list[tuple[Path, Path]] = []
            try:
                atomic_write_text(target / "SKILL.md", umbrella["skill_md"])
                for move in plan["moves"]:
                    atomic_write_bytes(target / move["to"], (sources[move["skill"]] / move["from"]).read_bytes())
                for name, folder in sources.items():
                    archive_to[name].parent.mkdir(parents=True, exist_ok=True)
                    os.rename(folder, archive_to[name])
                    moved.append((folder, archive_to[name]))
                    remove_empty_parents(folder.parent, self.skills.dir)
                if cron:
                    self.home.links.write_text(self._cron_path, cron[0])  # a linked jobs.json stays a link
                self.skills.usage.update(lambda records_, now_iso: records_.update(usage_after))
            except BaseException:
                if cron_before is not None and self.home.links.read_bytes(self._cron_path) != cron_before:
                    self.home.links.write_bytes(self._cron_path, cron_before)
                for folder, dest in reversed(moved):
                    folder.parent.mkdir(parents=True, exist_ok=True)
                    os.rename(dest, folder)
                shutil.rmtree(target, ignore_errors=True)
                remove_empty_parents(target.parent, self.skills.dir)
                raise

        roots = [target, *sources.values(), *archive_to.values()] + ([self._cron_path] if cron else [])
        evidence = {
            "absorbed": list(sources),
            "moves": plan["moves"],
            "dropped": plan["dropped"],
            "reason": plan["reason"],
            "cron": cron[1] if cron else [],
            "usage": {"before": usage_before, "after": usage_after},
            **({"pending_id": pending_id} if pending_id else {}),
        }
        try:
            recorded = record_change(
                self.home,
                self.skills.ledger,
                Change(
                    action=ACTION,
                    skill=umbrella["name"],
                    actor=actor,
                    roots=roots,
                    mutate=mutate,
                    text_file=self.skills.ledger.rel(target / "SKILL.md"),
                    session_id=session_id,
                    message_id=message_id,
                    evidence=evidence,
                ),
            )
        finally:
            self.skills.scanner.forget_layout()
        done, ledger = f"Consolidated {', '.join(sources)} into '{umbrella['name']}'", recorded.ledger_id
        return {
            "success": True,
            "name": umbrella["name"],
            "absorbed": list(sources),
            "cron_rewrites": cron[1] if cron else [],
            "journal_id": recorded.journal_id,
            "ledger_id": recorded.ledger_id,
            "message": f"{done} (ledger {ledger}; `workbench curator rollback {ledger}` undoes it).",
            # (as ``WorkbenchError.in_app``: the words for a person in the app, whose way back is a key)
            "in_app": f"{done} (ledger {ledger}; on Skills, l opens the ledger, where enter on it rolls it back).",
        }
