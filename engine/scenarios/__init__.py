"""Built-in scenarios: scripted agent sessions that make memory change in front of you.

A scenario is a YAML file in this folder::

    name: smoke
    description: one line shown by `workbench scenarios list`
    seed: demo                 # optional: seed the demo home first (engine.demo)
    config: {memory.nudge_interval: 3}   # optional, for the whole run (in memory only)
    pacing: {turn_delay: 1.0, step_delay: 0.3, session_delay: 2.0}   # seconds at speed 1
    sessions:
      - title: Getting started
        config: {skills.write_approval: true}   # optional, this session only
        end: user_exit                          # end reason (default user_exit)
        turns:
          - user: remember that I prefer dark mode       # the offline model decides
          - user: save the project note
            script:                                      # exact replies, in order
              - tool_calls: [{name: memory, args: {action: add, target: memory, content: ...}}]
              - answer: Saved.
          - compress: true                               # compress now (like /compress)

``run_scenario`` plays it through the scripted model (unscripted turns, reviews and
summaries fall back to the offline model), with delays divided by ``speed`` so a
person can watch; speed 0 plays without any delay.

A scenario plays as the agent in the home it is given: its turns and reviews write that home's curated
memory and skills (``Scenario.writes``). On a home that is not a demo home (``engine.demo.holds_other_data``)
it plays only with the user's consent (``consent=True``: the CLI's ``--yes``, the TUI's question, both
worded from ``consent_needed``); a scenario that seeds the demo is refused there outright.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..archive import sanitize_title
from ..counts import counted
from ..errors import UnusableTitle, WorkbenchError
from ..events import RunnerEvent
from ..kept import Kept
from ..memory import ops
from ..memory.format import Usage
from ..memory.targets import FILE_NAMES
from ..models import Model, ScriptedModel
from ..textsafety import quoted

SCENARIO_DIR = Path(__file__).parent
PACING_KEYS = ("turn_delay", "step_delay", "session_delay")
DRY_RUN_CALLS = 8  # model calls a turn's dry run makes at most (``Scenario.memory_writes``)


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    sessions: list[dict[str, Any]]
    config: dict[str, Any] = field(default_factory=dict)
    pacing: dict[str, float] = field(default_factory=dict)
    seed: str | None = None

    @property
    def writes(self) -> tuple[str, ...]:
        """What of a home's curated state playing it may change: "memory" and/or "skills". A turn the
        scenario does not script is the model's to decide (the offline model saves names, notes and
        preferences), and a review (any turn may prompt one) may write both; a scripted turn writes what
        its tool calls name."""
        touched: set[str] = set()
        for spec in self.sessions:
            for turn in spec["turns"]:
                if "user" not in turn:
                    continue
                touched |= {"memory", "skills"}  # (its reviews, or the model, decide)
                for step in turn.get("script") or []:
                    for call in step.get("tool_calls") or []:
                        touched |= {"memory"} if call["name"] == "memory" else set()
                        touched |= {"skills"} if call["name"].startswith("skill") else set()
        return tuple(kind for kind in ("memory", "skills") if kind in touched)

    def memory_writes(self, home) -> list[tuple[Any, dict[str, Any]]]:
        """The memory writes its turns make, word for word, as the scenario plays them (the scripted
        model: a turn's script, else the offline model's rules): found by a dry run of its turns against
        ``home``'s memory as a session's prompt holds it, every tool answered as done and nothing written.
        Each is a ``memory`` call's arguments (``action`` add or replace, ``target``, ``content``,
        ``old_text``), first of each kept, with the home its session plays in (its limits are the
        ``session_config``'s). Reviews and compression flushes are not foreseen here."""
        from ..runner.prompt import build_system_prompt

        found: list[tuple[Any, dict[str, Any]]] = []
        for spec in self.sessions:
            overlay = self.session_config(spec)
            played = home.with_config(overlay, self.config_given_by) if overlay else home
            model, messages = ScriptedModel(), [{"role": "system", "content": build_system_prompt(played)}]
            for turn in spec["turns"]:
                if "user" not in turn:
                    continue
                model.play(turn.get("script"))
                messages.append({"role": "user", "content": turn["user"]})
                for _ in range(DRY_RUN_CALLS):
                    reply = model.complete(messages, [])
                    messages.append(reply.to_message())
                    if not reply.tool_calls:
                        break
                    for call in reply.tool_calls:
                        args = call.arguments if isinstance(call.arguments, dict) else {}
                        if call.name == "memory" and args.get("action") in ("add", "replace"):
                            write = {k: args.get(k) for k in ("action", "target", "content", "old_text")}
                            if isinstance(write["content"], str) and write not in (w for _, w in found):
                                found.append((played, write))
                        done = json.dumps({"success": True})
                        messages.append(
                            {"role": "tool", "tool_call_id": call.id, "tool_name": call.name, "content": done}
                        )
        return found

    @property
    def config_given_by(self) -> str:
        """Where a bad value of its ``config:`` is said to be: it was said to be in config.yaml, which
        may not even exist."""
        return f"the {quoted(self.name)} scenario's config"

    def session_config(self, spec: dict[str, Any]) -> dict[str, Any]:
        """The settings the session ``spec`` plays with over the home's own: the scenario's, then its own."""
        return {**self.config, **(spec.get("config") or {})}

    def summary(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "sessions": len(self.sessions),
            "turns": sum(1 for s in self.sessions for t in s["turns"] if "user" in t),
        }


def _fail(where: str, problem: str) -> WorkbenchError:
    return WorkbenchError(f"Scenario {where}: {problem}")


def _check_turn(where: str, turn: Any) -> None:
    if not isinstance(turn, dict):
        raise _fail(where, "each turn must be a mapping with 'user' (or 'compress: true').")
    if turn.get("compress") is True:
        return
    if not isinstance(turn.get("user"), str) or not turn["user"].strip():
        raise _fail(where, "needs a non-empty 'user' message.")
    for n, step in enumerate(turn.get("script") or []):
        calls = step.get("tool_calls") if isinstance(step, dict) else None
        if not isinstance(step, dict) or (calls is None and "answer" not in step):
            raise _fail(f"{where}.script[{n}]", "each step needs 'tool_calls' and/or 'answer'.")
        for call in calls or []:
            if (
                not isinstance(call, dict)
                or not isinstance(call.get("name"), str)
                or not isinstance(call.get("args", {}), dict)
            ):
                raise _fail(f"{where}.script[{n}]", "each tool call needs a 'name' and a mapping of 'args'.")


def parse_scenario(data: Any, source: str) -> Scenario:
    """Validate a loaded YAML document; every problem names where it is."""
    if not isinstance(data, dict):
        raise _fail(source, "the file must hold a mapping.")
    sessions = data.get("sessions")
    if not isinstance(sessions, list) or not sessions:
        raise _fail(source, "'sessions' must be a non-empty list.")
    for s, spec in enumerate(sessions):
        where = f"{source} sessions[{s}]"
        if not isinstance(spec, dict) or not isinstance(spec.get("turns"), list) or not spec["turns"]:
            raise _fail(where, "needs a non-empty list of 'turns'.")
        if not isinstance(spec.get("config", {}), dict):
            raise _fail(where, "'config' must be a mapping of dotted keys.")
        try:  # (checked here: a session made with it refuses it after the ones before it played)
            sanitize_title(spec.get("title"))
        except UnusableTitle as exc:
            raise _fail(where, f"'title': {exc.message}") from None
        for t, turn in enumerate(spec["turns"]):
            _check_turn(f"{where}.turns[{t}]", turn)
    pacing = data.get("pacing") or {}
    if not isinstance(pacing, dict) or any(
        k not in PACING_KEYS or not isinstance(v, (int, float)) or v < 0 for k, v in pacing.items()
    ):
        raise _fail(source, f"'pacing' takes non-negative numbers for {', '.join(PACING_KEYS)}.")
    if not isinstance(data.get("config", {}), dict):
        raise _fail(source, "'config' must be a mapping of dotted keys.")
    if data.get("seed") not in (None, "demo"):
        raise _fail(source, f"unknown seed {quoted(data.get('seed'))}; the only seed is 'demo'.")
    return Scenario(
        name=str(data.get("name") or Path(source).stem),
        description=str(data.get("description") or ""),
        sessions=sessions,
        config=dict(data.get("config") or {}),
        pacing=dict(pacing),
        seed=data.get("seed"),
    )


def list_scenarios() -> list[Scenario]:
    return [load_scenario(path.stem) for path in sorted(SCENARIO_DIR.glob("*.yaml"))]


def load_scenario(name: str) -> Scenario:
    """A built-in scenario by name, or a scenario file by path."""
    path = Path(name) if name.endswith((".yaml", ".yml")) else SCENARIO_DIR / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(p.stem for p in sorted(SCENARIO_DIR.glob("*.yaml")))
        raise WorkbenchError(f"No scenario named {quoted(name)}. Built-in scenarios: {known} (or pass a .yaml path).")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise _fail(str(path), f"cannot be read ({exc}).") from exc
    return parse_scenario(data, path.name)


class ConsentNeeded(WorkbenchError):
    """The scenario would write the curated memory or skills of a home that is not a demo home, and
    playing it there was not agreed to; nothing was changed. ``changes`` says what would change."""

    def __init__(self, message: str, changes: str) -> None:
        super().__init__(message)
        self.changes = changes


def _needs_consent(home, scenario: Scenario) -> bool:
    """Whether playing ``scenario`` would change what is the user's in ``home`` (not a demo home, nor a
    new one). A scenario that seeds the demo is refused on such a home outright (``WorkbenchError``):
    its seed would be written as the user's."""
    from ..demo import holds_other_data

    if not holds_other_data(home):
        return False
    if scenario.seed == "demo":  # its seed would be written into a real home, as the user
        raise WorkbenchError(
            f"The {quoted(scenario.name)} scenario first adds the demo's memory, sessions and skills, and "
            f"{home.root} already holds memory, sessions or skills that are not the demo's; nothing was changed. "
            "Play it in a demo home (`workbench demo --home ./demo-home`)."
        )
    return bool(scenario.writes)


def consent_needed(home, scenario: Scenario) -> str | None:
    """What playing ``scenario`` would change in ``home``, for the user to agree to; None when it needs
    no consent (``_needs_consent``, which refuses the demo's seed on a home of the user's)."""
    if not _needs_consent(home, scenario):
        return None
    what = " and ".join(
        {"memory": "curated memory (MEMORY.md, USER.md)", "skills": "skills"}[kind] for kind in scenario.writes
    )
    sure = "; ".join(_said_writes(home, scenario.memory_writes(home)))
    return (
        f"{home.root} is not a demo home, and the {quoted(scenario.name)} scenario plays as the agent there: it "
        f"changes your {what} as its agent and reviews decide (they may add or replace entries"
        f"{f'; {sure}' if sure else ''}) and stores its {counted(len(scenario.sessions), 'session')} in state.db."
    )


def _said_writes(home, writes: list[tuple[Any, dict[str, Any]]]) -> list[str]:
    """The foreseen memory writes as the consent question names them, played in turn on the stores'
    entries by the store's own rules (``engine.memory.ops``) and the limits of the session each is made
    in, nothing written: a write the store would refuse says so and why, rather than promise text it
    cannot save."""
    entries: dict[str, list[str]] = {}
    said = []
    for played, write in writes:
        target = write.get("target") or "memory"
        file = FILE_NAMES.get(target, "MEMORY.md")
        old, new = quoted(write.get("old_text") or ""), quoted(write["content"])
        replaces = write["action"] == "replace" and isinstance(write.get("old_text"), str)
        refused, changes = _foreseen(home, played, entries, target, write)
        if refused:
            what = f"replacing {old} by {new} in {file}" if replaces else f"adding {new} to {file}"
            said.append(f"{what} would be refused: {refused}")
        elif not changes:  # (an add of an entry the store holds: "MEMORY.md gets" it promised a change)
            said.append(f"{file} holds {new} already, so it stays as it is")
        else:
            said.append(f"{file} has {old} replaced by {new}" if replaces else f"{file} gets {new}")
    return said


def _foreseen(
    home, played, entries: dict[str, list[str]], target: str, write: dict[str, Any]
) -> tuple[str | None, bool]:
    """Why the store would refuse ``write`` in the session's view of ``home``, ``played`` (``MEMORY.md is
    2,180/2,200 chars``, ``no entry of MEMORY.md holds 'x'``), else None; and whether it would change the
    store (an add of an entry it holds does not). A write it takes changes ``entries`` (each target's, read
    from disk once) for the writes after it. A store that cannot be read is left to the run to report."""
    if target not in FILE_NAMES:
        return None, True
    try:
        limit = played.memory.limit(target)
        current = entries.setdefault(target, home.memory.entries(target))
        if write["action"] == "replace":
            outcome = ops.replace(current, write.get("old_text") or "", write["content"], limit)
        else:
            outcome = ops.add(current, write["content"], limit)
    except ops.NoMatch as refusal:
        return f"no entry of {FILE_NAMES[target]} holds {quoted(refusal.old_text)}", False
    except ops.Refusal as refusal:
        if refusal.size_after is not None:
            ours = "" if limit == home.memory.limit(target) else " (the limit the scenario sets)"
            return f"{FILE_NAMES[target]} is {Usage.of(current, limit).short} chars{ours}", False
        return refusal.person or refusal.result.get("error") or "the store refuses it", False
    except WorkbenchError:
        return None, True
    entries[target] = outcome.entries
    return None, bool(outcome.changes)


@dataclass
class ScenarioResult:
    name: str
    session_ids: list[str] = field(default_factory=list)  # every session written, children included
    turns: list[Any] = field(default_factory=list)  # TurnResult
    cancelled: bool = False
    kept: Kept | None = None  # what state.db did not take as the scenario stopped, kept for later


def run_scenario(
    home,
    name: str,
    speed: float = 1.0,
    on_event: Callable[[RunnerEvent], None] | None = None,
    cancel: threading.Event | None = None,
    model: Model | None = None,
    background_review: bool = False,
    consent: bool = False,
    source: str = "cli",
) -> ScenarioResult:
    """Play a scenario on ``home``; delays are divided by ``speed`` (0 = none). ``background_review``: reviews run
    on each session's review thread (the next turn does not wait; the session's end does). ``consent``: the
    user agreed that it may change a home that is not a demo home (``consent_needed``; without it there,
    ``ConsentNeeded`` and nothing changes). ``source``: the sessions' source in state.db (``cli``, ``tui``)."""
    from ..conversation import Conversation
    from ..demo import seed_demo_home

    scenario = load_scenario(name)
    if speed < 0:
        raise WorkbenchError("speed must be 0 (no delays) or more.")
    cancel = cancel or threading.Event()
    model = model or ScriptedModel()
    scale = 0.0 if speed == 0 else 1.0 / speed
    delay = {k: float(scenario.pacing.get(k, 0)) * scale for k in PACING_KEYS}
    if _needs_consent(home, scenario) and not consent:  # (agreed to: its writes were named already, not foreseen again)
        changes = consent_needed(home, scenario) or ""
        raise ConsentNeeded(f"{changes} It was not agreed to; nothing was changed.", changes)
    if scenario.seed == "demo":
        seed_demo_home(home)
    result = ScenarioResult(scenario.name)
    try:
        for spec in scenario.sessions:
            if cancel.is_set():
                break
            conversation = Conversation(
                home,
                model,
                title=spec.get("title"),
                on_event=on_event,
                config=scenario.session_config(spec),
                config_given_by=scenario.config_given_by,
                step_delay=delay["step_delay"],
                cancel_event=cancel,
                background_review=background_review,
                source=source,
            )
            for turn in spec["turns"]:
                if cancel.wait(delay["turn_delay"]) if delay["turn_delay"] else cancel.is_set():
                    break
                if turn.get("compress"):
                    conversation.compress()
                    continue
                if isinstance(model, ScriptedModel):
                    model.play(turn.get("script"), label=f"s{len(result.session_ids) + 1}t{len(result.turns) + 1}_")
                turn_result = conversation.run_turn(turn["user"])
                result.turns.append(turn_result)
                if turn_result.status == "cancelled":
                    break
            result.kept = conversation.end(spec.get("end") or "user_exit")
            session = conversation.agent
            if session.stored:
                result.session_ids.extend(home.archive.lineage(session.id).chain if session.rotations else [session.id])
            if result.kept is not None:  # state.db refuses what is said: the next sessions would fare no better
                break
            if delay["session_delay"]:
                cancel.wait(delay["session_delay"])
    finally:
        result.cancelled = cancel.is_set()
    return result
