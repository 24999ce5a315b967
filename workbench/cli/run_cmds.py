"""``workbench run`` (headless agent turns or a scenario) and ``workbench scenarios list``."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from typing import Any

from engine.conversation import Conversation
from engine.counts import counted
from engine.errors import WorkbenchError
from engine.events import RunnerEvent
from engine.home import Home
from engine.kept import when_stored
from engine.models import BACKENDS, ModelError, key_variable, make_model
from engine.runner import RequestLog
from engine.scenarios import consent_needed, list_scenarios, load_scenario, run_scenario
from engine.textsafety import visible

from . import Output, UsageError, add_command
from .fit import phrased, said, tell, terminal_width, wrapped
from .numbers import SPEED

ARG_PREVIEW = 70
WRITE_KEYS = ("action", "target", "content", "old_text", "operations")


def register(subparsers, common) -> None:
    run = add_command(subparsers, "run", common)
    run.add_argument(
        "--model",
        choices=BACKENDS,
        default=None,
        help="model backend (default: config model.backend, else offline; scenarios: scripted)",
    )
    run.add_argument(
        "--scenario", metavar="NAME", help="play a built-in scenario (see `scenarios list`) or a .yaml file"
    )
    run.add_argument(
        "--message", "-m", action="append", default=[], metavar="TEXT", help="a user message; repeat for several turns"
    )
    run.add_argument("--session", metavar="ID", help="continue this stored session instead of starting a new one")
    run.add_argument("--title", help="title for a new session (default: from the first message)")
    run.add_argument(
        "--yes",
        action="store_true",
        help="play the scenario even in a home that is not a demo home (it changes that home's memory and skills)",
    )
    run.add_argument(
        "--speed",
        type=SPEED,
        default=0.0,
        help="scenario pace: 1 = as written, 2 = twice as fast, 0 = no delays (default)",
    )
    run.add_argument("--base-url", help="openai: endpoint root, e.g. http://localhost:11434/v1 (else model.base_url)")
    run.add_argument("--model-name", help="openai: model name (else model.name)")
    run.add_argument(
        "--api-key-env",
        type=_key_variable,
        help="openai: environment variable holding the API key, which must be set ('': none; else model.api_key_env)",
    )
    run.add_argument(
        "--stream",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="openai: stream answers as they are written (else model.stream)",
    )
    run.set_defaults(handler=run_agent)

    scenarios = add_command(subparsers, "scenarios", common)
    sub = scenarios.add_subparsers(dest="scenarios_command", metavar="ACTION", required=True)
    listing = sub.add_parser("list", parents=[common], help="list the built-in scenarios")
    listing.set_defaults(handler=scenarios_list, no_home=True)  # the built-in scenarios: no home needed


def _key_variable(name: str) -> str:
    """A variable named but not set is a usage error, said before the home is opened."""
    try:
        return key_variable(name, "--api-key-env")
    except ModelError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None


def scenarios_list(home: Home, args) -> Output:
    found = [s.summary() for s in list_scenarios()]

    def text() -> str:  # (a description under its row, wrapped: on the row, the terminal broke it inside words)
        width = terminal_width()
        lines = []
        for s in found:
            size = f"{counted(s['sessions'], 'session')}, {counted(s['turns'], 'turn')}"
            lines += [line.rstrip() for line in phrased([f"{s['name']:<10}", size], width, hang="  ", sep=" ")]
            lines += wrapped(s["description"], width, indent="  ")
        return "\n".join(lines)

    return Output({"scenarios": found}, text=text)


def _brief(args: dict[str, Any]) -> str:
    shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    return shown if len(shown) <= ARG_PREVIEW else shown[: ARG_PREVIEW - 1] + "\u2026"


class TranscriptPrinter:
    """Streams a readable transcript while the run goes (text mode only)."""

    def __init__(self) -> None:
        self.streamed = False  # the current answer was already printed piece by piece

    def __call__(self, event: RunnerEvent) -> None:
        data, kind = event.data, event.kind
        if kind == "assistant_delta":
            sys.stdout.write(("" if self.streamed else "agent> ") + visible(data["text"]))
            sys.stdout.flush()
            self.streamed = True
            return
        line = self._line(event)
        if kind == "assistant_message" and self.streamed:
            line, self.streamed = "", False
        if line is not None:
            sys.stdout.write(visible(line) + "\n")
            sys.stdout.flush()

    @staticmethod
    def _line(event: RunnerEvent) -> str | None:
        data, kind = event.data, event.kind
        tag = "  [review] " if event.actor == "review" else "  "
        if kind == "turn_started":
            return f"\nyou> {data['user']}"
        if kind == "tool_called":
            return f"{tag}-> {data['name']}({_brief(data['arguments'])})"
        if kind == "tool_result" and (event.actor == "review" or not data.get("success") or data.get("staged")):
            outcome = (
                "staged for approval"
                if data.get("staged")
                else "ok"
                if data.get("success")
                else f"error: {data.get('error')}"
            )
            return f"{tag}<- {data['name']}: {outcome}"
        if kind == "assistant_message" and data.get("content"):
            return f"agent> {data['content']}"
        if kind == "session_rotated":
            return (
                f"  -- context compressed: continuing in {data['new_session_id']} ({data.get('title') or 'untitled'})"
            )
        if kind == "review_started":
            return f"  [review] looking back ({', '.join(data['triggers'])})"
        if kind == "review_finished":
            return f"  [review] {data.get('line') or data.get('summary')}"
        if kind == "flush_finished":
            return f"  [flush] {data['summary']}"
        if kind == "unbacked_claim":
            return said(
                "!! unbacked claim: the answer says it saved or will remember, but this turn wrote nothing", "  "
            )
        if kind == "warning":
            return said(f"!! {data.get('message')}", "  ")
        if kind in ("error", "cancelled") and event.actor != "review":
            return said(f"!! {data.get('message') or kind}", "  ")
        return None


def _warn_ended_elsewhere(event: RunnerEvent) -> None:
    """Under ``--json`` (no transcript printed): a session ended elsewhere while in use, which the next
    turn reopens, is still said, on stderr."""
    if event.kind == "warning" and event.data.get("ended_elsewhere"):
        tell(f"warning: {event.data.get('message')}")
        sys.stderr.flush()


def _say_interrupted(home: Home, conversation: Conversation) -> None:
    """ctrl+c exited with nothing said: the user could not tell that what they typed was kept, nor where."""
    kept = conversation.end()
    session_id = conversation.agent.id
    go_on = f"`workbench run --session {session_id} -m TEXT`"
    if kept is not None:
        where = f"{kept.describe(when_stored(home))} Go on with {go_on}."
    elif conversation.agent.message_ids:
        where = f"What was said is stored in session {session_id}: go on with {go_on}."
    else:
        where = "Nothing was stored."
    tell(f"interrupted: the turn stopped, and no answer to it was stored. {where}")


def _summary(home: Home, turns, session_ids: list[str]) -> dict[str, Any]:
    shaped, writes, staged = [], [], []
    for turn in turns:
        actions = [("agent", c) for c in turn.tool_calls] + [
            ("review", a) for a in (turn.review.actions if turn.review else [])
        ]
        for actor, call in actions:
            result = call["result"]
            if result.get("staged"):
                staged.append({"pending_id": result.get("pending_id"), "tool": call["name"], "by": actor})
            elif call["name"] == "memory" and result.get("success") is True:
                args = call["arguments"]
                writes.append({"by": actor, **{k: args[k] for k in WRITE_KEYS if k in args}})
        shaped.append(
            {
                "user": turn.user,
                "assistant": turn.assistant,
                "status": turn.status,
                "tool_calls": [
                    {
                        "name": c["name"],
                        "arguments": c["arguments"],
                        "success": c["result"].get("success", True) is not False,
                        "staged": bool(c["result"].get("staged")),
                    }
                    for c in turn.tool_calls
                ],
                **({"error": turn.error} if turn.error else {}),
            }
        )
    log = RequestLog(home)
    prefixes = {sid: list(dict.fromkeys(log.prefix_hashes(sid, "turn"))) for sid in session_ids}
    data: dict[str, Any] = {
        "session_id": turns[-1].session_id if turns else (session_ids[-1] if session_ids else None),
        "sessions": session_ids,
        "turns": shaped,
        "memory_writes": writes,
        "staged": staged,
        "prefix_hashes": prefixes,
    }  # one per session: the prompt prefix stayed cache-stable
    failed = next((t for t in turns if t.status == "error"), None)
    if failed is not None:
        data.update(success=False, error=failed.error)
    return data


def run_agent(home: Home, args) -> Output:
    if args.scenario and (args.message or args.session):
        raise UsageError("--scenario plays its own messages; drop --message/--session, or drop --scenario.")
    if not args.scenario and not args.message:
        raise UsageError("give at least one --message TEXT, or --scenario NAME (see `workbench scenarios list`).")
    if any(not text.strip() for text in args.message):
        raise UsageError("--message needs some text.")
    if args.session and args.title:
        raise UsageError(
            "--title names a new session; a continued one keeps its title (rename it with "
            "`workbench sessions rename ID TITLE`)."
        )
    if args.model == "scripted" and not args.scenario:
        raise UsageError("--model scripted plays a scenario file; add --scenario NAME.")
    if args.speed < 0:
        raise UsageError("--speed must be 0 (no delays) or more.")
    if args.yes and not args.scenario:
        raise UsageError("--yes agrees to a scenario changing this home; add --scenario NAME, or drop --yes.")
    _ = home.archive.caps  # an unusable state.db is refused before any model call, not after the first turn
    if args.scenario and not args.yes:  # asked before any model is made (the engine refuses it too)
        changes = consent_needed(home, load_scenario(args.scenario))
        if changes is not None:
            raise WorkbenchError(
                f"{changes} Nothing was changed. Add --yes to play it here anyway, or play it in a home of its "
                f"own (`workbench run --home ./demo-home --scenario {shlex.quote(args.scenario)}`).",
                home=str(home.root),
            )
    printer = None if getattr(args, "json", False) else TranscriptPrinter()
    model = make_model(
        home,
        args.model or ("scripted" if args.scenario else None),
        base_url=args.base_url,
        model_name=args.model_name,
        api_key_env=args.api_key_env,
        stream=args.stream,
    )
    try:
        if args.scenario:
            result = run_scenario(
                home,
                args.scenario,
                speed=args.speed,
                on_event=printer,
                model=model,
                background_review=True,
                consent=args.yes,
            )
            turns, session_ids, kept = result.turns, result.session_ids, result.kept
        else:
            # --session: an id, unique id prefix or title; end() below waits for the reviews
            conversation = Conversation(
                home, model, session=args.session, title=args.title, on_event=printer or _warn_ended_elsewhere
            )
            if conversation.live_warning is not None:  # before any turn writes to it (also under --json)
                tell(f"warning: {conversation.live_warning}")
                sys.stderr.flush()
            for note in (conversation.reopened_note, conversation.archived_note):  # (said, as in the TUI)
                if note is not None:
                    tell(f"note: {note}")
                    sys.stderr.flush()
            turns = []
            try:
                for text in args.message:
                    turns.append(conversation.run_turn(text))
                    if turns[-1].status in ("error", "cancelled"):
                        break
            except KeyboardInterrupt:  # ctrl+c mid-turn: the session is ended first, then the user told where it is
                _say_interrupted(home, conversation)
                raise
            finally:  # as Hermes's CLI does on exit (`run --session` reopens it); kept for later when state.db is busy
                kept = conversation.end()
            session = conversation.agent
            session_ids = home.archive.lineage(session.id).chain if session.rotations else [session.id]
    finally:
        model.close()
    data = _summary(home, turns, session_ids)
    if kept is not None:  # not all done (exit 1), but nothing to run again: said so in the one error
        data.update(success=False, error=" ".join(filter(None, [data.get("error"), kept.describe(when_stored(home))])))
        data["kept_messages"] = kept.messages
    text = (
        f"\nsession {data['session_id']}: {counted(len(turns), 'turn')}, "
        f"{counted(len(data['memory_writes']), 'memory write')}, "
        f"{len({s['pending_id'] for s in data['staged']})} staged for approval"  # (an add proposed again waits once)
    )
    if data.get("success") is False:
        text = f"error: {data['error']}"
    return Output(data, text=text)
