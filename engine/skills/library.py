"""The skill library: listing, progressive view, the prompt index, usage, and checked writes.

Writes are planned first (every validation, and the exact before/after text, without
touching the disk), then executed through ``record_change``. The same plan serves the
agent tool, the approval queue's preview and its replay, so a staged write is checked
by exactly the rules that would have applied inline.
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import os
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..approvals.records import approved_by
from ..clock import shown_time
from ..curator.archive import restore_matches
from ..curator.ledger import Ledger
from ..errors import ReadOnlyError, WorkbenchError
from ..events import SkillChanged
from ..fileio import UnsafePath
from ..textsafety import shell_word, typable
from ..tools import BACKGROUND_REVIEW, ToolContext
from .changes import Change, reconcile, record_change, remove_empty_parents, remove_tree_later
from .discovery import ARCHIVE_DIR, Found, Scanner, bundled_names, hub_names
from .frontmatter import parse_frontmatter, tags_of, validate_skill_md
from .index import index_problem, render_index
from .loose_match import loose_matches
from .outside import OutsideChanges
from .threats import check_plan
from .usage import (
    SHARED_WITH_OLD,
    UsageStore,
    UsageUnreadable,
    archived_origin,
    copy_origins,
    copy_usage,
    default_record,
    iso,
    last_activity,
    made_anew,
    since_made,
)
from .validation import (
    OldStringMissing,
    SkillError,
    check_category,
    check_content_size,
    check_file_size,
    check_inside,
    check_name,
    check_relative,
    check_support_path,
    contained,
    name_problem,
    not_utf8,
)

ACTIONS = ("create", "patch", "edit", "delete", "write_file", "remove_file")
# Where each action keeps the text edit-then-approve replaces (delete and remove_file have none).
EDITABLE_SLOTS = {"create": "content", "edit": "content", "write_file": "file_content", "patch": "new_string"}
READ_ONLY_PROVENANCE = ("bundled", "hub")
# How our provenance words map to Hermes's: ``hermes curator usage`` calls every skill neither bundled nor
# hub-installed ``agent`` (its ``is_agent_created``); ours split those by who made them (``provenance_of``).
PROVENANCE_NOTE = (
    "provenance: agent = made by the agent (created_by: agent; the Curator ages it); user = a local skill the "
    "agent did not make. `hermes curator usage` lists both as `agent` (its word for neither bundled nor hub)."
)
_PLATFORMS = {"macos": "darwin", "linux": "linux", "windows": "win32"}
_LINKED = {  # group -> (suffixes or None for any, recursive)
    "references": ((".md",), False),
    "templates": ((".md", ".py", ".yaml", ".yml", ".json", ".tex", ".sh"), True),
    "assets": (None, True),
    "scripts": ((".py", ".sh", ".bash", ".js", ".ts", ".rb"), False),
}


def skill_command(verb: str, arg: str) -> str:
    """``workbench skills VERB ARG`` as a person can type it: ARG quoted for a shell and shown safely
    (``shell_word``), after ``--`` when it starts with a dash (else it would read as an option)."""
    return f"workbench skills {verb} {'-- ' * arg.startswith('-')}{shell_word(arg)}"


def skill_label(name: str, folder: str | None) -> str:
    """How both skins name a skill in a list: its name, and after it, in parentheses, its folder under
    skills/ where the name alone does not pick it out (``k8s-rollout (devops/k8s-rollout)``): another
    listed skill has it, or it cannot be asked for. ``folder`` None: the name is enough."""
    return f"{name} ({folder})" if folder else name


def _unusable(found: Found) -> str | None:
    """Why the name a skill's SKILL.md declares cannot be asked for, and what to ask for instead."""
    problem = name_problem(found.name)
    if problem is None:
        return None
    return f"Its declared name cannot be used ({problem.rstrip('.')}): ask for it by its folder, {found.rel}."


@dataclass(frozen=True)
class SkillInfo:
    name: str
    category: str | None
    description: str
    state: str  # active | stale | archived
    pinned: bool
    provenance: str  # agent | user | bundled | hub
    use_count: int
    view_count: int
    patch_count: int
    last_used_at: str | None
    created_by: str | None
    path: str  # relative to skills/
    created_at: str | None = None
    last_activity_at: str | None = None
    archived_at: str | None = None
    problem: str | None = None  # why SKILL.md fails the strict rule (Hermes lists such a skill all the same)
    too_long: bool = False  # the problem is only SKILL.md's length: it parses
    proposed_by: str | None = None  # who proposed it, when its creation was an approved proposal
    # why the name its SKILL.md declares cannot be asked for (``../../evil``), so its folder stands in
    name_problem: str | None = None
    # its name alone does not pick it out among those listed (``list``): an archived copy whose name
    # another listed skill has, an active skill whose name another active one declares, or a name
    # that cannot be asked for
    needs_folder: bool = False
    # why its line in the skills index (every system prompt) is blocked: its name or description holds a
    # threat pattern (an escape sequence, a bidi override); None for an archived skill, which is not listed there
    index_problem: str | None = None
    # why its counts may not be this copy's alone, where a name's one usage record cannot tell (``copy_usage``)
    uses_note: str | None = None

    @property
    def label_folder(self) -> str | None:
        """The folder ``skill_label`` names beside the name (None when the name is enough)."""
        return self.path if self.needs_folder else None

    @property
    def label(self) -> str:
        return skill_label(self.name, self.label_folder)

    @property
    def owner(self) -> str:
        """The provenance as people read it: a skill approved into the library is the approver's
        (the curator leaves it alone, as Hermes's does) and names who proposed it."""
        return approved_by(self.provenance, self.proposed_by)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Plan:
    """A validated write, ready to run: what changes, and the text before and after."""

    action: str
    name: str
    label: str  # "SKILL.md", a supporting file, or the skill folder for a delete
    before: str | None
    after: str | None
    roots: list[Path]
    mutate: Callable[[], None]
    text_file: Path | None
    result: dict[str, Any]
    usage: str  # create | patch | forget
    evidence: dict[str, Any] = field(default_factory=dict)
    flags: Any = None  # a suspicious verdict on the index text or the added text (threats.SkillFlags)
    undo: Callable[[], None] | None = None  # exact reverse of mutate (else the files are put back)
    cleanup: Callable[[], None] | None = None
    precondition: Callable[[], None] | None = None  # checked under the write lock first; raises to refuse


def _may_rename(plan: Plan) -> bool:
    """Whether a write may change which names find which skill, so the scanner's remembered layout
    (its frontmatter names) must go. A write inside one skill's folder that keeps its SKILL.md's
    ``name`` cannot: forgetting the layout after it cost a walk of the whole library at the next
    lookup (most of a patch's time at 1,000 skills)."""
    if plan.action not in ("edit", "patch", "write_file", "remove_file"):
        return True
    if plan.text_file is None or plan.text_file.name != "SKILL.md":
        return False
    named = [parse_frontmatter(text or "")[0].get("name") for text in (plan.before, plan.after)]
    return named[0] != named[1]


def _matches_platform(meta: dict[str, Any]) -> bool:
    platforms = meta.get("platforms")
    if not platforms:
        return True
    wanted = platforms if isinstance(platforms, list) else [platforms]
    return any(sys.platform.startswith(_PLATFORMS.get(str(p).lower(), str(p).lower())) for p in wanted)


_TEXT_ARGS = (
    "action",
    "name",
    "content",
    "category",
    "file_path",
    "file_content",
    "old_string",
    "new_string",
    "absorbed_into",
)


class SkillLibrary:
    def __init__(self, home):
        self.home = home
        self.dir: Path = home.skills_dir
        self.archive_dir = self.dir / ARCHIVE_DIR
        self.usage = UsageStore(self.dir / ".usage.json", home.clock, home.links)
        self.ledger = Ledger(home.root, self.dir, home.clock, home.links)
        self.scanner = Scanner(self.dir, home.links)
        self.outside = OutsideChanges(home)  # changes no workbench process made, journaled as they are seen

    # -- reading ---------------------------------------------------------------------
    def read_text(self, path: Path, skill_dir: Path) -> str:
        """A file of a skill; a link out of the skill's folder (or to a FIFO, a device) is refused,
        and so is one that is not UTF-8 (binary, another encoding), never guessed at."""
        try:
            return self.home.links.read_text(path, inside=skill_dir)
        except UnsafePath as exc:
            raise SkillError(exc.message) from None
        except UnicodeDecodeError as exc:
            raise SkillError(f"{not_utf8(path, exc)}; save it as UTF-8 or move it out of the skills folder.") from None

    def provenance_of(self) -> Callable[[Found, dict[str, Any] | None], str]:
        """A classifier for this moment's manifests: bundled, hub, agent (curator-managed) or user."""
        bundled = bundled_names(self.dir, self.home.links)
        hub, hub_paths = hub_names(self.dir, self.home.links)

        def classify(found: Found, record: dict[str, Any] | None) -> str:
            if found.name in hub or found.dir_name in hub or found.rel in hub_paths:
                return "hub"
            if found.name in bundled or found.dir_name in bundled:
                return "bundled"
            return "agent" if (record or {}).get("created_by") == "agent" else "user"

        return classify

    def _info(
        self,
        found: Found,
        record: dict[str, Any] | None,
        uses_note: str | None,
        provenance: str,
        proposed_by: str | None,
    ) -> SkillInfo:
        record = record or {}
        state = "archived" if found.archived else ("stale" if record.get("state") == "stale" else "active")
        activity = last_activity(record)
        return SkillInfo(
            name=found.name,
            category=found.category or _archived_category(found, record),
            description=found.description,
            state=state,
            pinned=bool(record.get("pinned")),
            provenance=provenance,
            use_count=int(record.get("use_count") or 0),
            uses_note=uses_note,
            view_count=int(record.get("view_count") or 0),
            patch_count=int(record.get("patch_count") or 0),
            last_used_at=record.get("last_used_at"),
            created_by=record.get("created_by"),
            path=found.rel,
            created_at=record.get("created_at"),
            last_activity_at=iso(activity) if activity else None,
            archived_at=record.get("archived_at") if found.archived else None,
            problem=found.problem,
            too_long=found.too_long,
            proposed_by=proposed_by if provenance == "user" else None,  # a review's own skill is the agent's
            name_problem=_unusable(found),
            index_problem=None if found.archived else index_problem(found.name, found.description),
        )

    def infos(self, found: list[Found]) -> list[SkillInfo]:
        records = self.usage.load()
        classify = self.provenance_of()
        # who proposed a skill is the journal's to say; without it the library on disk is still listed
        proposers = self.home.journal.read_or(lambda: self.home.journal.proposers("skills", "create"), {})
        adopted = any(not f.archived and (records.get(f.name) or {}).get("state") == "archived" for f in found)
        archived = self.scanner.archived() if adopted else []

        # a record is keyed by name: while an active skill has the name, its pin is that skill's (an
        # archived skill cannot be pinned: restore it first), so no archived copy of the name shows it
        pins_kept = any(f.archived and (records.get(f.name) or {}).get("pinned") for f in found)
        active_names = {a.name for a in self.scanner.active()} if pins_kept else set()

        copies = [f for f in found if f.archived]
        anew = {f.name for f in found if not f.archived and made_anew(records.get(f.name), f.name, archived)}

        def own(f: Found) -> tuple[dict[str, Any] | None, str | None]:
            """The record ``f`` shows, and why its counts may not be its own alone (``uses_note``)."""
            record = records.get(f.name)
            if f.archived:
                record, note = copy_usage(f, record, copies, f.name in anew)
                return ({**record, "pinned": False} if record and f.name in active_names else record), note
            if f.name not in anew or record is None:
                return record, None
            shown = since_made(record)
            return shown, SHARED_WITH_OLD if shown.get("use_count") or shown.get("view_count") else None

        return [self._info(f, *own(f), classify(f, records.get(f.name)), proposers.get(f.name)) for f in found]

    def list(self, include_archived: bool = False) -> list[SkillInfo]:
        """Every active skill (and archived ones); a refused ``skills/`` link is an error naming it."""
        try:
            self.home.links.resolve(self.dir)
        except UnsafePath as exc:
            raise SkillError(exc.message) from None
        found = self.scanner.active() + (self.scanner.archived() if include_archived else [])
        infos = self.infos(found)
        every = Counter(info.name for info in infos)
        active = Counter(info.name for info in infos if info.state != "archived")
        infos = [
            replace(
                info,
                needs_folder=(every if info.state == "archived" else active)[info.name] > 1
                or info.name_problem is not None,
            )
            for info in infos
        ]
        return sorted(infos, key=lambda s: (s.state == "archived", s.category or "", s.name, s.path))

    def find(self, name: Any, follow_absorbed: bool = False) -> Found:
        """The one active skill called ``name`` (folder name, frontmatter name or ``category/name``).

        ``follow_absorbed`` (the agent's tools): a consolidated skill's old name finds its umbrella.
        """
        if problem := name_problem(name):
            raise SkillError(problem)
        matches = self.scanner.named(name)
        if len(matches) > 1:
            raise SkillError(
                f"Ambiguous skill name '{name}': {len(matches)} skills match. Use the category/name path.",
                matches=[m.rel for m in matches],
                hint="Pass the category/name path shown in matches.",
            )
        if not matches and follow_absorbed:
            umbrellas = self._umbrellas_of(name)
            if len(umbrellas) == 1:
                return umbrellas[0]
        if not matches:
            self._refused_link(name)
            available = sorted({f.name for f in self.scanner.active()})[:20]
            raise SkillError(
                f"Skill '{name}' not found.",
                available_skills=available,
                hint="Use skills_list (workbench skills list) to see all available skills",
            )
        return matches[0]

    def command(self, verb: str, skill: Found | str) -> str:
        """``workbench skills VERB ARG`` (``skill_command``) that acts on ``skill``: a ``Found``, or a name (a
        journal row's; ``restore``: the newest archived copy answering to it), with ARG chosen as the CLI
        resolves it (``command_arg``). What doctor, a refusal or a screen suggests is always one it accepts."""
        return skill_command(verb, self.command_arg(verb, skill))

    def command_arg(self, verb: str, skill: Found | str) -> str:
        """What to give ``workbench skills VERB`` (show, archive, restore, pin, unpin) for this very skill:
        its name when that picks it out alone and can be typed as shown, else its folder (``misc/bad1``,
        ``.archive/bad1``), which always does; one that starts with a dash only when no other will do.
        A name nothing answers to now stays as it is."""
        found = (self._picked(verb, skill) or self._declaring(verb, skill)) if isinstance(skill, str) else skill
        if found is None:
            return str(skill)
        options = [found.rel]
        if found.name != found.rel and typable(found.name):
            picked = self._picked(verb, found.name, exact=True)
            if picked is not None and picked.rel == found.rel:
                options.insert(0, found.name)
        return next((arg for arg in options if typable(arg) and not arg.startswith("-")), options[0])

    def _declaring(self, verb: str, name: str) -> Found | None:
        """The one skill (archived, for ``restore``) whose SKILL.md declares ``name``, for a name no command
        takes (``../../evil``, as a journal row or Hermes's usage record names it)."""
        skills = self.scanner.archived() if verb == "restore" else self.scanner.active()
        declaring = [f for f in skills if f.name == name]
        return declaring[0] if len(declaring) == 1 else None

    def _picked(self, verb: str, name: str, exact: bool = False) -> Found | None:
        """The skill ``workbench skills VERB name`` acts on (``exact``: only if no other could be meant),
        None when it refuses the name or finds none."""
        try:
            if verb == "restore":
                matches = restore_matches(self.scanner.archived(), name)
                return matches[0] if matches and not (exact and len(matches) > 1) else None
            return self.find_any(name) if verb in ("show", "pin", "unpin") else self.find(name)
        except SkillError:
            return None

    def _refused_link(self, name: str) -> None:
        """A name no listing shows because ``skills/<name>`` is a link the policy refuses: say so (the link,
        its target, the rule it breaks and the fix), rather than that no such skill exists."""
        candidate = self.dir / name
        try:
            linked = candidate.is_symlink()
        except OSError:  # (a name longer than the file system allows: nothing can be there)
            return
        if linked:
            try:
                self.home.links.resolve(candidate)
            except UnsafePath as exc:
                raise SkillError(f"Skill '{name}' is not listed: {exc.message}", link=str(candidate)) from None

    def absorbed_into(self, name: str) -> str | None:
        """The umbrella an agent's write to ``name`` goes to: an old name no active skill answers to
        that exactly one umbrella lists as absorbed (None otherwise)."""
        if self.scanner.named(name):
            return None
        umbrellas = self._umbrellas_of(name)
        return umbrellas[0].name if len(umbrellas) == 1 else None

    def _umbrellas_of(self, name: str) -> builtins.list[Found]:
        """Active skills whose frontmatter ``absorbed`` lists ``name`` (a consolidated skill's old name)."""
        from ..curator.consolidate import absorbed_names

        return [f for f in self.scanner.active() if name in absorbed_names(f.meta)]

    def find_any(self, name: Any) -> Found:
        """The active skill ``name``, else its archived copy (the newest when several); an archived copy by
        its own path, ``.archive/FOLDER``, whatever is active under its name (a person looking at it)."""
        if isinstance(name, str) and name.startswith(f"{ARCHIVE_DIR}/"):
            copy = next((f for f in self.scanner.archived() if f.rel == name), None)
            if copy is None:
                raise SkillError(f"No archived skill in {name}: restored or deleted since.")
            return copy
        try:
            return self.find(name)
        except SkillError as missing:
            archived = [f for f in self.scanner.archived() if name in (f.name, f.dir_name)]
            if not archived:
                raise missing
            return archived[-1]

    def at(self, folder: str, name: str) -> Found:
        """The skill in ``folder`` (its path under skills/, ``.archive/...`` for a copy) while it still
        declares ``name``: what a person was asked about, never another skill the name now finds."""
        skills = self.scanner.archived() if folder.startswith(f"{ARCHIVE_DIR}/") else self.scanner.named(folder)
        found = next((f for f in skills if f.rel == folder), None)
        if found is None:
            raise SkillError(
                f"Skill '{name}' is no longer in skills/{folder} (moved, archived or deleted since); "
                "nothing was changed."
            )
        if found.name != name:
            raise SkillError(
                f"skills/{folder} now holds skill '{found.name}', not '{name}' (renamed since); nothing was changed."
            )
        return found

    def get(self, name: str) -> SkillInfo:
        return self.infos([self.find_any(name)])[0]

    def _record(self, bump: Callable[..., object], name: str, action: str) -> None:
        """Usage telemetry (never on a read-only home), announced so views can refresh counts; skipped
        while the usage file cannot be read (``usage_warning`` says so), never breaking the read. A use
        of a stale skill makes it active again (as a Curator pass would): found under the usage file's
        lock, it is journaled (a ``reactivate`` row, pending until the file is written, as our Curator's
        is), so no look takes it for an outside change."""
        if self.home.read_only:
            return
        journal, begun = self.home.journal, []

        def reactivating() -> None:
            begun.append(journal.begin("skills", "reactivate", name, actor="agent", detail={"by": action}))

        try:
            bump(name, reactivating)
        except BaseException as exc:
            for row in begun:
                journal.abandon(row, str(exc) or type(exc).__name__)
            if isinstance(exc, UsageUnreadable):
                return
            raise
        for row in begun:
            journal.commit(row)
        self.home.bus.publish(SkillChanged(name=name, action=action))

    def usage_warning(self) -> str | None:
        """What a listing must say while ``.usage.json`` cannot be read (None when it can): the pins,
        counts and makers shown are then not the file's."""
        problem = self.usage.problem()
        if problem is None:
            return None
        return (
            f"{problem}: every skill shows as unpinned, unused and not agent-made, no use is counted and the "
            "Curator will not run until it is fixed (`workbench doctor` says how)."
        )

    def record_use(self, name: str) -> None:
        """Count a use of an active skill (slash-command load, preload)."""
        self._record(self.usage.bump_use, self.find(name, follow_absorbed=True).name, "use")

    def linked_files(self, skill_dir: Path) -> dict[str, builtins.list[str]]:
        groups: dict[str, list[str]] = {}
        for group, (suffixes, recursive) in _LINKED.items():
            folder = skill_dir / group
            if not folder.is_dir() or not contained(folder, skill_dir):
                continue
            paths = folder.rglob("*") if recursive else folder.iterdir()
            files = sorted(
                p.relative_to(skill_dir).as_posix()
                for p in paths
                if p.is_file() and contained(p, skill_dir) and (suffixes is None or p.suffix in suffixes)
            )
            if files:
                groups[group] = files
        return groups

    def _all_files(self, skill_dir: Path) -> builtins.list[str]:
        return sorted(
            p.relative_to(skill_dir).as_posix()
            for p in skill_dir.rglob("*")
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(skill_dir).parts)
        )

    def view(self, name: str, file_path: str | None = None, record: bool = True) -> dict[str, Any]:
        """Progressive disclosure: SKILL.md with its linked files, or one linked file.

        Records a view (which counts as use) unless ``record`` is False: a person inspecting
        a skill in the CLI or TUI is not the agent using it, and may look at an archived one.
        """
        found = self.find(name, follow_absorbed=True) if record else self.find_any(name)
        if not _matches_platform(found.meta):
            raise SkillError(f"Skill '{found.name}' is not supported on this platform.")
        if file_path:
            result = self._view_file(found, file_path)
        else:
            linked = self.linked_files(found.path)
            result = {
                "success": True,
                "name": found.name,
                "description": found.description,
                "tags": tags_of(found.meta, "tags"),
                "related_skills": tags_of(found.meta, "related_skills"),
                "content": self.read_text(found.path / "SKILL.md", found.path),
                "path": found.rel,
                "skill_dir": str(found.path),
                "linked_files": linked or None,
            }
            if found.archived:
                result["archived"] = True
                umbrella = self.absorbed_into(found.name)
                if umbrella is not None:  # (a consolidation archived it: its content lives on there)
                    result["absorbed_into"] = umbrella
            if "compatibility" in found.meta:
                result["compatibility"] = found.meta["compatibility"]
            if not record:  # a person's look: every file of the folder, the ones the agent is never shown too
                listed = {"SKILL.md", *(path for group in linked.values() for path in group)}
                result["other_files"] = [path for path in _files_under(found.path) if path not in listed] or None
            if linked:
                result["usage_hint"] = (
                    "To view linked files, call skill_view(name, file_path) where file_path is e.g. "
                    "'references/api.md' or 'assets/config.yaml'"
                )
        if record:
            self._record(self.usage.bump_view, found.name, "view")
        return result

    def _view_file(self, found: Found, file_path: str) -> dict[str, Any]:
        try:
            rel = check_relative(file_path, "file_path")
        except SkillError:
            listed = self._all_files(found.path)
            if file_path in listed:  # a real file picked from the listing, not a bad path typed: say what to do
                raise SkillError(
                    "This file's name holds control characters (shown as symbols), so it is not opened. "
                    "Rename the file to view it."
                ) from None
            raise
        target = found.path / rel
        check_inside(target, found.path, f"File '{file_path}'")
        if not target.is_file():
            raise SkillError(
                f"File '{file_path}' not found in skill '{found.name}'.",
                available_files=self._all_files(found.path),
                hint="Use one of available_files as file_path.",
            )
        try:
            data = self.home.links.read_bytes(target, inside=found.path)
        except UnsafePath as exc:
            raise SkillError(exc.message) from None
        try:
            content, binary = data.decode("utf-8"), False
        except UnicodeDecodeError:
            content, binary = f"[Binary file: {target.name}, size: {len(data)} bytes]", True
        result = {
            "success": True,
            "name": found.name,
            "file": rel.as_posix(),
            "content": content,
            "file_type": target.suffix,
        }
        if binary:
            result["is_binary"] = True
        return result

    def skills_list(self, category: str | None = None) -> dict[str, Any]:
        """The ``skills_list`` tool result (Hermes's shape; flat skills have category null)."""
        skills = [
            {
                "name": s.name,
                "description": s.description if len(s.description) <= 1024 else s.description[:1021] + "...",
                "category": s.category,
            }
            for s in self.list()
            if category in (None, s.category)
        ]
        if not skills:
            return {"success": True, "skills": [], "categories": [], "message": "No skills found in skills/ directory."}
        return {
            "success": True,
            "skills": skills,
            "count": len(skills),
            "categories": sorted({s["category"] for s in skills if s["category"]}),
            "hint": "Use skill_view(name) to see full content, tags, and linked files",
        }

    def index_text(self) -> str:
        """The skills block for the system prompt ("" when there are no active skills)."""
        entries = [
            (f.category or "general", f.name, f.description) for f in self.scanner.active() if _matches_platform(f.meta)
        ]
        categories = {}
        for category in {c for c, _, _ in entries}:
            found = self.scanner.parse(self.dir / category / "DESCRIPTION.md")
            if found and found[0].get("description"):
                categories[category] = str(found[0]["description"])
        return render_index(entries, categories)

    # -- writing ---------------------------------------------------------------------
    def write_lock(self):
        """One writer at a time across processes for skill files (skill_manage and the Curator)."""
        return self.home.links.lock(self.dir / ".locks" / "skills")

    def reconcile(self) -> builtins.list[int]:
        """Settle changes a killed process left half done (see ``changes.reconcile``); returns their rows."""
        if not self.home.journal.pending("skills"):
            return []
        with self.write_lock():
            return reconcile(self.home, self.ledger, self.usage)

    def check_writable(self, found: Found, action: str, ctx: ToolContext) -> None:
        """Refuse writes to bundled / hub skills, folders leaving skills/, and review writes it may not make."""
        check_inside(found.path, self.dir, f"Skill folder '{found.rel}'")
        record = self.usage.load().get(found.name)
        provenance = self.provenance_of()(found, record)
        if provenance in READ_ONLY_PROVENANCE:
            label = "hub-installed" if provenance == "hub" else "bundled"
            raise SkillError(
                f"Skill '{found.name}' is {label}; {label} skills are read-only to the agent and the "
                "Curator. Copy it under a new name to change it."
            )
        if ctx.origin == BACKGROUND_REVIEW:
            if (record or {}).get("pinned"):
                raise SkillError(
                    f"Refusing background curator {action} for pinned skill '{found.name}': pinned skills "
                    "are off-limits to autonomous maintenance."
                )
            if provenance != "agent":
                raise SkillError(
                    f"Refusing background curator {action} for skill '{found.name}': it is not "
                    "curator-managed (created_by is not 'agent'). User-owned skills are off-limits to "
                    "autonomous curation."
                )

    def plan(self, args: dict[str, Any], ctx: ToolContext | None = None, beside_files: bool = False) -> Plan:
        """Validate a ``skill_manage`` call and compute its effect, writing nothing. ``beside_files``: a
        create may write its SKILL.md into a folder that exists and holds none (a SKILL.md put back beside
        the support files it lost, by a revert), not only into a new one."""
        ctx = ctx or ToolContext()
        for key in _TEXT_ARGS:  # a model's call, or a staged record someone edited, may carry lists or numbers
            if key != "category" and args.get(key) is not None and not isinstance(args[key], str):
                raise SkillError(f"{key} must be text, got {type(args[key]).__name__}; nothing was changed.")
        action = args.get("action")
        on_skill: dict[str, Callable[[Found, dict[str, Any]], Plan]] = {
            "edit": self._plan_edit,
            "patch": self._plan_patch,
            "delete": self._plan_delete,
            "write_file": self._plan_write_file,
            "remove_file": self._plan_remove_file,
        }
        if action == "create":
            plan = self._plan_create(args, beside_files)
        elif isinstance(action, str) and action in on_skill:
            try:
                found = self.find(args.get("name"), follow_absorbed=action != "delete")  # never delete by an old name
            except SkillError as missing:
                if "available_skills" in missing.details:  # (no active skill answers to it)
                    self.refuse_archived(args["name"], action)
                raise
            self.check_writable(found, action, ctx)
            try:
                plan = on_skill[action](found, args)
            except OldStringMissing as refused:
                self._written_for_absorbed(args.get("name"), found, refused)
                raise
        else:
            raise SkillError(f"Unknown action '{action}'. Use: create, edit, patch, delete, write_file, remove_file")
        plan.flags = check_plan(plan)
        return plan

    def hermes_patch_finds(self, payload: dict[str, Any]) -> tuple[int, str] | None:
        """Where Hermes's own patch (its ``/skills approve`` replays one) would find a patch payload's
        old_string now: how many places its loose matching takes for it (``loose_matches``) in the file
        it names (SKILL.md, or ``file_path``), and that file's label; None when the skill or the file
        cannot be read now, or the file is too large to tell soon."""
        old = payload.get("old_string")
        if not isinstance(old, str):
            return None
        try:
            found = self.find(payload.get("name"))
            label, target = ("SKILL.md", found.path / "SKILL.md")
            if payload.get("file_path"):
                label, target = self._support_target(found, payload["file_path"])
            text = self.read_text(target, found.path)
        except (SkillError, OSError, UnicodeDecodeError, ValueError):
            return None
        count = loose_matches(text, old)
        return None if count is None else (count, label)

    def _written_for_absorbed(self, asked: Any, found: Found, refused: OldStringMissing) -> None:
        """A patch to a consolidated skill's old name whose old_string the umbrella lacks: it was written
        for the old skill (staged before the consolidation, say), so say that, not that the umbrella lacks
        the text, which reads as if the wrong skill were patched."""
        if not (isinstance(asked, str) and asked != found.name and self.absorbed_into(asked) == found.name):
            return
        label = "SKILL.md" if refused.label == "SKILL.md" else "its file"
        raise SkillError(
            f"Skill '{asked}' was absorbed into '{found.name}'{self._absorbed_when(asked, found.name)}: this patch "
            f"was written for the old skill, and its old_string is not in {label} of '{found.name}'. Reject it, or "
            f"make the change in '{found.name}' (view its current text and copy the exact passage to replace).",
            **refused.details,
            absorbed_into=found.name,
        ) from None

    def _absorbed_when(self, old: str, umbrella: str) -> str:
        """`` by the Curator's consolidation of 2026-12-05 14:20 (ledger ID)`` from the newest ledger row that
        absorbed ``old`` into ``umbrella``, else `` on WHEN`` from its usage record, else nothing."""
        for entry in reversed(self.ledger.entries()):
            absorbed = entry.evidence.get("absorbed")
            if entry.action == "consolidate" and entry.skill == umbrella and isinstance(absorbed, list):
                if old in absorbed:
                    return f" by the Curator's consolidation of {entry.when} (ledger {entry.id})"
        record = self.usage.load().get(old) or {}
        when = shown_time(record.get("archived_at")) if record.get("absorbed_into") == umbrella else None
        return f" on {when}" if when else ""

    def refuse_archived(self, name: str, action: str) -> None:
        """A write (patch, edit, delete, a file's) aimed at a skill that is archived, not gone: say so, into
        which umbrella when a consolidation absorbed it, and how to bring it back (else the caller's "not
        found" stands). The agent's tool, an approval's preview and its replay all come here."""
        try:
            copies = [f for f in restore_matches(self.scanner.archived(), name) if name in (f.name, f.dir_name)]
        except SkillError:  # (a path: no archived copy answers to it)
            return
        if not copies:
            return
        found = copies[0]  # (the newest)
        record = self.usage.load().get(found.name) or {}
        umbrella = record.get("absorbed_into") if record.get("archive_dir") == found.dir_name else None
        umbrella = umbrella if isinstance(umbrella, str) and self.scanner.named(umbrella) else None
        into = f" (consolidated into '{umbrella}')" if umbrella else ""
        # (never for a removal: the umbrella holds other skills' content too)
        removes = action in ("delete", "remove_file")
        instead = (
            f", or make the change in '{umbrella}', which holds its content now" if umbrella and not removes else ""
        )
        raise SkillError(
            f"Skill '{found.name}' is archived{into} in skills/{found.rel}: this {action} cannot change it, and "
            f"nothing was changed. Restore it first (`{self.command('restore', found)}`, or r in Skills), then "
            f"try again{instead}.",
            archived=found.rel,
            absorbed_into=umbrella,
        )

    def _content(self, args: dict[str, Any], action: str, what: str) -> tuple[str, dict[str, Any]]:
        """The SKILL.md text of a create or edit, checked, with its frontmatter."""
        content = args.get("content")
        if content is None or content == "":
            raise SkillError(f"content is required for '{action}'. {what}")
        meta = validate_skill_md(content)
        check_content_size(content, "SKILL.md")
        return content, meta

    def _file_plan(
        self,
        action: str,
        found: Found,
        label: str,
        target: Path,
        after: str | None,
        message: str,
        usage: str = "patch",
        **result: Any,
    ) -> Plan:
        """A plan that writes ``after`` to ``target`` (or removes it when ``after`` is None)."""
        before = self.read_text(target, found.path) if target.is_file() else None

        def mutate() -> None:
            current = self.read_text(target, found.path) if target.is_file() else None
            if current != before:  # someone else wrote it since the plan was made: never overwrite their work
                raise SkillError(
                    f"{label} of skill '{found.name}' changed while this write was being prepared; "
                    "nothing was written. View it again and retry."
                )
            try:
                if after is None:
                    self.home.links.unlink(target, inside=found.path)
                    remove_empty_parents(target.parent, found.path)
                else:
                    self.home.links.write_text(target, after, inside=found.path)
            except UnsafePath as exc:
                raise SkillError(exc.message) from None

        return Plan(
            action,
            found.name,
            label,
            before,
            after,
            [target],
            mutate,
            target,
            {"success": True, "message": message, **result},
            usage,
        )

    def _plan_create(self, args: dict[str, Any], beside_files: bool = False) -> Plan:
        name = check_name(args.get("name"))
        category = check_category(args.get("category"))
        content, meta = self._content(args, "create", "Provide the full SKILL.md text (frontmatter + body).")
        listed_as = str(meta["name"]).strip()  # usage records follow the frontmatter name, as discovery does
        for existing in self.scanner.active():
            if existing.dir_name == name:
                raise SkillError(f"A skill named '{name}' already exists at {existing.path}.")
        skill_dir = self.dir / category / name if category else self.dir / name
        check_inside(skill_dir, self.dir, f"Skill folder '{skill_dir.relative_to(self.dir)}'")
        if skill_dir.exists() and not (beside_files and skill_dir.is_dir() and not (skill_dir / "SKILL.md").exists()):
            raise SkillError(f"A folder already exists at {skill_dir}; move it aside or choose another name.")
        rel = skill_dir.relative_to(self.dir).as_posix()
        found = Found(listed_as, name, rel, category, skill_dir, {}, "", False)
        plan = self._file_plan(
            "create",
            found,
            "SKILL.md",
            skill_dir / "SKILL.md",
            content,
            f"Skill '{listed_as}' created.",
            usage="create",
            path=rel,
            skill_md=str(skill_dir / "SKILL.md"),
            hint=f"To add reference files, templates, or scripts, use skill_manage(action='write_file', "
            f"name='{name}', file_path='references/example.md', file_content='...')",
        )
        if category:
            plan.result["category"] = category
        write = plan.mutate

        def mutate() -> None:
            try:
                write()
            except OSError:
                remove_empty_parents(skill_dir, self.dir)
                raise

        plan.mutate, plan.roots = mutate, [skill_dir]
        if skill_dir.exists():  # (beside files already there: not this create's, so its rollback leaves them)
            plan.evidence["beside"] = sorted(self.ledger.snapshot([skill_dir]))
        return plan

    def _plan_edit(self, found: Found, args: dict[str, Any]) -> Plan:
        content, _ = self._content(args, "edit", "Provide the full updated SKILL.md text.")
        return self._file_plan(
            "edit",
            found,
            "SKILL.md",
            found.path / "SKILL.md",
            content,
            f"Skill '{found.name}' updated (full rewrite).",
            path=str(found.path),
        )

    def _support_target(self, found: Found, file_path: Any) -> tuple[str, Path]:
        label = check_support_path(file_path, found.dir_name)
        target = found.path / label
        check_inside(target, found.path, f"File '{label}'")
        return label, target

    def _plan_patch(self, found: Found, args: dict[str, Any]) -> Plan:
        old, new = args.get("old_string"), args.get("new_string")
        if not old:
            raise SkillError("old_string is required for 'patch'. Provide the text to find.")
        if new is None:
            raise SkillError("new_string is required for 'patch'. Use empty string to delete matched text.")
        label, target = ("SKILL.md", found.path / "SKILL.md")
        if args.get("file_path"):
            label, target = self._support_target(found, args["file_path"])
        if not target.is_file():
            raise SkillError(f"File not found: {label}")
        text = self.read_text(target, found.path)
        count = text.count(old)
        preview = text[:500] + ("..." if len(text) > 500 else "")
        if count == 0:
            raise OldStringMissing(
                f"Could not find old_string in {label} of skill '{found.name}'. View the current text and "
                "copy the exact passage to replace.",
                label,
                file_preview=preview,
            )
        if count > 1 and not args.get("replace_all"):
            raise SkillError(
                f"old_string matches {count} places in {label}; include more surrounding text so it is "
                "unique, or set replace_all=true.",
                file_preview=preview,
            )
        after = text.replace(old, new) if args.get("replace_all") else text.replace(old, new, 1)
        check_content_size(after, label)
        if label == "SKILL.md":
            try:
                validate_skill_md(after)
            except SkillError as exc:
                raise SkillError(f"Patch would break SKILL.md structure: {exc.message}") from exc
        replaced = count if args.get("replace_all") else 1
        return self._file_plan(
            "patch",
            found,
            label,
            target,
            after,
            f"Patched {label} in skill '{found.name}' ({replaced} replacement{'s' * (replaced > 1)}).",
        )

    def _plan_write_file(self, found: Found, args: dict[str, Any]) -> Plan:
        if not args.get("file_path"):
            raise SkillError("file_path is required for 'write_file'. Example: 'references/api-guide.md'")
        content = args.get("file_content")
        if content is None:
            raise SkillError("file_content is required for 'write_file'.")
        if not isinstance(content, str):
            raise SkillError("file_content must be text.")
        label, target = self._support_target(found, args["file_path"])
        check_file_size(content)
        if label == "SKILL.md":
            validate_skill_md(content)
        if target.exists() and not target.is_file():
            raise SkillError(f"'{label}' is a folder in skill '{found.name}'; give a file path inside it.")
        return self._file_plan(
            "write_file",
            found,
            label,
            target,
            content,
            f"File '{label}' written to skill '{found.name}'.",
            path=str(target),
        )

    def _plan_remove_file(self, found: Found, args: dict[str, Any]) -> Plan:
        if not args.get("file_path"):
            raise SkillError("file_path is required for 'remove_file'.")
        label, target = self._support_target(found, args["file_path"])
        if label == "SKILL.md":
            raise SkillError("SKILL.md cannot be removed with remove_file; use action='delete' to delete the skill.")
        if not target.is_file():
            raise SkillError(
                f"File '{label}' not found in skill '{found.name}'.",
                available_files=self._all_files(found.path) or None,
            )
        return self._file_plan(
            "remove_file", found, label, target, None, f"File '{label}' removed from skill '{found.name}'."
        )

    def _plan_delete(self, found: Found, args: dict[str, Any]) -> Plan:
        record = self.usage.load().get(found.name) or {}
        if record.get("pinned"):
            raise SkillError(
                f"Skill '{found.name}' is pinned and cannot be deleted by skill_manage. Ask the user to run "
                f"`{self.command('unpin', found)}` if they want to delete it. Patches and edits are "
                "allowed on pinned skills; only deletion is blocked."
            )
        if found.path.is_symlink():
            raise SkillError(f"Skill folder '{found.rel}' is a symlink; refusing to delete through it.")
        absorbed = args.get("absorbed_into")
        suffix = ""
        if isinstance(absorbed, str) and absorbed.strip():
            if absorbed == found.name:
                raise SkillError(f"absorbed_into='{absorbed}' cannot equal the skill being deleted.")
            if not any(absorbed in (f.name, f.dir_name) for f in self.scanner.active()):
                raise SkillError(
                    f"absorbed_into='{absorbed}' does not exist. Create or patch the umbrella skill first, "
                    "then retry the delete."
                )
            suffix = f" Content absorbed into '{absorbed}'."
        skill_md = found.path / "SKILL.md"
        mutate, undo, cleanup = remove_tree_later(found.path, self.dir)
        return Plan(
            "delete",
            found.name,
            found.rel,
            self.read_text(skill_md, found.path),
            None,
            [found.path],
            mutate,
            skill_md,
            {"success": True, "message": f"Skill '{found.name}' deleted.{suffix}"},
            "forget",
            {"absorbed_into": absorbed} if absorbed is not None else {},
            undo=undo,
            cleanup=cleanup,
        )

    def execute(
        self, plan: Plan, ctx: ToolContext | None = None, approval: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Run a plan: atomic write, journal, ledger, usage record, event. ``approval``: the pending
        record it replays (``pending_id``, ``proposed_by``, ``edited``), kept in its journal row."""
        if self.home.read_only:
            raise ReadOnlyError("This home is open read-only; nothing was written.")
        ctx = ctx or ToolContext()
        evidence = {**plan.evidence, **(approval or {})}
        created_by = "agent" if ctx.origin == BACKGROUND_REVIEW else None

        def forget(records: dict[str, dict[str, Any]], now: str) -> None:
            """Under the usage file's lock: the record goes, and the delete's ledger row keeps it (read
            here, not before), so a rollback puts it back whole: who made it, when, its counts, its pin."""
            record = records.pop(plan.name, None)
            if record is not None:
                evidence["usage"] = {"before": {plan.name: record}, "after": {plan.name: None}}

        def created(records: dict[str, dict[str, Any]], now: str) -> None:
            """A new record; archived copies of the name keep their folders (``archived_copies``)."""
            copies = [f for f in self.scanner.archived() if f.name == plan.name]
            kept = copy_origins(records.get(plan.name), copies) if copies else None
            records[plan.name] = {**default_record(now), "created_by": created_by}
            if kept:
                records[plan.name]["archived_copies"] = kept

        usage = {
            "create": lambda: self.usage.change_one(plan.name, created),
            "forget": lambda: self.usage.change_one(plan.name, forget),
        }.get(plan.usage, lambda: self.usage.bump_patch(plan.name))
        try:
            with self.write_lock():
                if plan.precondition is not None:
                    plan.precondition()
                recorded = record_change(
                    self.home,
                    self.ledger,
                    Change(
                        action=plan.action,
                        skill=plan.name,
                        actor=ctx.actor,
                        roots=plan.roots,
                        mutate=plan.mutate,
                        text_file=self.ledger.rel(plan.text_file) if plan.text_file else None,
                        session_id=ctx.session_id,
                        message_id=ctx.message_id,
                        evidence=evidence,
                        undo=plan.undo,
                        usage=usage,
                        cleanup=plan.cleanup,
                    ),
                )
        except BaseException:
            self.scanner.forget_layout()  # (what a failed write left is not known)
            raise
        if _may_rename(plan):  # an edit may rename a skill without touching its parent folder
            self.scanner.forget_layout()
        return {**plan.result, "journal_id": recorded.journal_id, "ledger_id": recorded.ledger_id}

    def apply(self, plan: Plan, ctx: ToolContext, approval: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run a plan; a background review's delete archives instead (recoverable, as in Hermes)."""
        if plan.action == "delete" and ctx.origin == BACKGROUND_REVIEW:
            return self.home.curator.archive(plan.name, actor="curator")
        return self.execute(plan, ctx, approval)

    def manage(
        self, args: dict[str, Any], ctx: ToolContext | None = None, approval: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Validate and apply one ``skill_manage`` action (no approval gate; see ``manage.skill_manage_tool``)."""
        ctx = ctx or ToolContext()
        return self.apply(self.plan(args, ctx), ctx, approval)

    # -- approval queue --------------------------------------------------------------
    @staticmethod
    def _edited(payload: dict[str, Any], edited_content: str | None) -> dict[str, Any]:
        if edited_content is None:
            return dict(payload)
        slot = EDITABLE_SLOTS.get(payload.get("action", ""))
        if slot is None:
            raise SkillError(f"A staged '{payload.get('action')}' has no text to edit; approve or reject it as is.")
        return {**payload, slot: edited_content}

    def _unchanged_since_staged(self, plan: Plan, staged_at: float, base: str | None) -> None:
        """Refuse (under the write lock) a write that would replace or remove what changed after it was
        staged: a hand edit made meanwhile, or another proposal approved first, would be lost."""
        try:
            changed = base_of(plan) != base if base is not None else _changed_after(plan, staged_at)
        except OSError:
            changed = True  # changing as it is read: asked again, it reads whole
        if not changed:
            return
        where = self.ledger.rel(plan.roots[0] if plan.action == "delete" else plan.text_file or plan.roots[0])
        what = f"a file in {where} was added, edited or removed" if plan.action == "delete" else f"{where} changed"
        verb = {"delete": "delete the skill", "remove_file": "remove the file"}.get(plan.action, "overwrite")
        way_out = {
            "delete": "archive it yourself (`workbench skills archive`) if you still want it gone",
            "remove_file": "remove the file yourself if you still want it gone",
        }.get(plan.action, "approve an edited version that keeps what you want")
        raise SkillError(
            f"{what} after this proposal was staged ({iso(staged_at)}), and approving it would {verb} that "
            f"change; its diff shows what would go. Reject it, or {way_out}."
        )

    def _refused_path(self, payload: dict[str, Any]) -> str | None:
        """Where a proposal approving would refuse is aimed, relative to skills/, when that is known: the
        file of the skill it names (SKILL.md, or its support file), the folder of a delete, the SKILL.md a
        create would write; None when it names no usable skill or path. Reads only."""
        action, name = payload.get("action"), payload.get("name")
        try:
            if action == "create":
                folder = check_name(name)
                category = check_category(payload.get("category"))
                skill_dir = self.dir / category / folder if category else self.dir / folder
                check_inside(skill_dir, self.dir, "Skill folder")
                return (skill_dir / "SKILL.md").relative_to(self.dir).as_posix()
            if action not in ("edit", "patch", "delete", "write_file", "remove_file"):
                return None
            found = self.find(name, follow_absorbed=action != "delete")
            if action == "delete":
                return found.path.relative_to(self.dir).as_posix()
            target = found.path / "SKILL.md"
            if payload.get("file_path") and action != "edit":
                target = self._support_target(found, payload["file_path"])[1]
            return target.relative_to(self.dir).as_posix()
        except (SkillError, ValueError, TypeError, OSError):
            return None

    def preview_staged(
        self,
        payload: dict[str, Any],
        edited_content: str | None = None,
        staging: tuple[float, str | None] | None = None,
    ) -> dict[str, Any]:
        """What approving would change, computed without writing: name, file, path (relative to
        skills/), before, after, error; ``stale``: why approving is refused though the write itself
        would go through (what it replaces changed since ``staging``), shown beside its diff."""
        if payload.get("action") == "consolidate":
            if edited_content is not None:
                raise SkillError("A consolidation plan cannot be edited; approve or reject it as is.")
            return self.home.curator.consolidation.preview(payload)
        try:
            plan = self.plan(self._edited(payload, edited_content))
        except SkillError as exc:
            return {
                "name": payload.get("name"),
                "file": payload.get("file_path"),
                "path": self._refused_path(payload),  # (the header names the file a refused one is about too)
                "before": None,
                "after": None,
                "error": exc.message,
            }
        # where it writes, relative to skills/: a delete's label is its folder's path already, and a
        # skill's name is not its folder's (a category above it, a frontmatter name of its own)
        where = plan.roots[0] if plan.action == "delete" else plan.text_file
        staged: dict[str, Any] = {
            "name": plan.name,
            "file": plan.label,
            "path": where.relative_to(self.dir).as_posix() if where is not None else None,
            "before": plan.before,
            "after": plan.after or "",
            "error": None,
            "stale": None,
        }
        asked = payload.get("name")
        if isinstance(asked, str) and asked != plan.name and self.absorbed_into(asked) == plan.name:
            staged["umbrella"] = (
                f"'{asked}' was consolidated into '{plan.name}' (its `absorbed` list names it), so approving "
                f"changes '{plan.name}'."
            )
        if staging is not None and edited_content is None and plan.action in OVERWRITING:
            try:
                self._unchanged_since_staged(plan, *staging)
            except SkillError as exc:
                staged["stale"] = exc.message
        if plan.action == "delete":  # every file goes, not only the SKILL.md the diff shows
            files = _files_under(plan.roots[0])
            staged["removes"], staged["removes_more"] = files[:FILES_LISTED], max(0, len(files) - FILES_LISTED)
            try:
                staged["folder_stamp"] = folder_stamp(plan.roots[0])  # approving checks it still reads so
            except OSError as exc:  # (changing as it was read: the next preview has it)
                staged["error"] = f"Skill '{plan.name}' is changing as it is read ({exc.strerror or exc}); look again."
        return staged

    def apply_staged(
        self,
        payload: dict[str, Any],
        *,
        actor: str = "user",
        edited_content: str | None = None,
        pending_id: str | None = None,
        session_id: str | None = None,
        message_id: int | None = None,
        proposed_by: str | None = None,
        folder_stamp: str | None = None,
        staging: tuple[float, str | None] | None = None,
    ) -> dict[str, Any]:
        """Replay an approved write through every normal check; a refusal writes nothing.

        The journal row keeps the session and message that proposed it, and who did: the
        skill is the approver's (Hermes's curator leaves it alone), proposed by ``proposed_by``.
        ``folder_stamp``: a delete's folder as the approver was shown it (``preview_staged``);
        one that changed since (a file added, edited or removed) is refused, not deleted.
        ``staging``: when the record was staged and what it then found (``base_of``; None in a record
        Hermes staged): a write that replaces or removes what it finds is refused when that changed
        since, unless the approver wrote the text it puts there (``edited_content``).
        """
        ctx = ToolContext(actor=actor, session_id=session_id, message_id=message_id)
        try:
            if payload.get("action") == "consolidate":
                if edited_content is not None:
                    raise SkillError("A consolidation plan cannot be edited; approve or reject it as is.")
                return self.home.curator.consolidation.apply(
                    payload, actor=actor, pending_id=pending_id, session_id=session_id, message_id=message_id
                )
            approval = {"pending_id": pending_id, "proposed_by": proposed_by, "edited": edited_content is not None}
            plan = self.plan(self._edited(payload, edited_content), ctx)
            checks = []  # (changed while the approver was asked: said first, as the more telling)
            if folder_stamp is not None and plan.action == "delete":
                checks.append(lambda: _unchanged_since_shown(plan, folder_stamp))
            if staging is not None and edited_content is None and plan.action in OVERWRITING:
                checks.append(lambda: self._unchanged_since_staged(plan, *staging))
            if checks:
                plan = replace(plan, precondition=lambda: _all(checks))
            return self.apply(plan, ctx, approval)
        except WorkbenchError as exc:
            return exc.to_dict()


FILES_LISTED = 200  # of the files a delete removes, in its preview

# the staged writes that replace or remove what they find (a patch finds its own text or fails; a create
# finds nothing): approving one after that changed would lose the change, so it is refused
OVERWRITING = ("edit", "write_file", "remove_file", "delete")


def base_of(plan: Plan) -> str | None:
    """What a write that replaces or removes something finds there, as approving compares it: the digest
    of the file it overwrites or removes (of nothing, for a file it creates), or a deleted folder's
    ``folder_stamp``; None for other writes."""
    if plan.action == "delete":
        return folder_stamp(plan.roots[0])
    if plan.action not in OVERWRITING or plan.text_file is None:
        return None
    try:
        found = plan.text_file.read_bytes()  # through a link the policy lets it write through: what it overwrites
    except FileNotFoundError:
        return "absent"
    return hashlib.sha256(found).hexdigest()


def folder_stamp(folder: Path) -> str:
    """A digest of every file under ``folder``: its path, size and modification time (a link's own)."""
    lines = []
    for rel in _files_under(folder):
        info = os.lstat(folder / rel)
        lines.append(f"{rel}\0{info.st_size}\0{info.st_mtime_ns}")
    return hashlib.sha256("\n".join(lines).encode("utf-8", "surrogateescape")).hexdigest()


def _all(checks: builtins.list[Callable[[], None]]) -> None:
    for check in checks:
        check()


def _changed_after(plan: Plan, moment: float) -> bool:
    """Whether what ``plan`` replaces or removes was modified after ``moment`` (a file there now that
    was not then included): for a record Hermes staged, which keeps no ``base_of``."""
    if plan.action == "delete":  # (a delete removes links, never what they point at)
        paths = [plan.roots[0] / rel for rel in _files_under(plan.roots[0])]
    else:
        paths = [plan.text_file] if plan.text_file is not None else []
    for path in paths:
        try:
            stamps = [os.lstat(path).st_mtime]
        except FileNotFoundError:
            continue
        if plan.action != "delete":
            with contextlib.suppress(OSError):  # a write goes through a link: its target's edits count
                stamps.append(os.stat(path).st_mtime)
        if max(stamps) > moment:
            return True
    return False


def _unchanged_since_shown(plan: Plan, stamp: str) -> None:
    try:
        now = folder_stamp(plan.roots[0])
    except OSError:
        now = None
    if now != stamp:
        raise SkillError(
            f"Skill '{plan.name}' changed while you were asked (a file in {plan.label} was added, edited or "
            "removed): nothing was deleted, and the proposal stays pending. Look at it again, then decide."
        )


def _files_under(folder: Path) -> builtins.list[str]:
    """The files in ``folder`` and below it, relative to it, sorted (a link is listed, never followed)."""
    found = []
    for root, dirs, files in os.walk(folder):  # (os.walk follows no link to a folder)
        base = Path(root).relative_to(folder)
        found += [(base / name).as_posix() for name in files + [d for d in dirs if (Path(root) / d).is_symlink()]]
    return sorted(found)


def _archived_category(found: Found, record: dict[str, Any]) -> str | None:
    """An archived skill's category: the folders it was archived from (``archived_origin``: when the
    record is about this archived copy), so the list still groups it where it lived."""
    origin = archived_origin(found, record)
    if origin is None:
        return None
    parts = origin.strip("/").split("/")
    return "/".join(parts[:-1]) or None
