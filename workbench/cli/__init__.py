"""The ``workbench`` command line (contract in shared/CLI.md).

Each command group lives in its own module with a ``register(subparsers, common)``
function. Handlers take ``(home, args)`` and return an ``Output``; this module prints
it (``--json``: exactly one JSON document) and maps refusals to exit status 1 and
usage errors to 2, never showing a traceback for either.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sqlite3
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

from engine import open_home
from engine.errors import WorkbenchError

# Command-group modules, each registering its subcommands.
COMMAND_MODULES = [
    "workbench.cli.tui_cmds",
    "workbench.cli.memory_cmds",
    "workbench.cli.pending_cmds",
    "workbench.cli.skills_cmds",
    "workbench.cli.curator_cmds",
    "workbench.cli.sessions_cmds",
    "workbench.cli.run_cmds",
]


@dataclass
class Output:
    """What a command produced: the JSON document and a human rendering of it."""

    data: dict[str, Any]
    text: str | Callable[[], str] = ""
    ok: bool | None = None  # default: data.get("success", True)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def succeeded(self) -> bool:
        return self.ok if self.ok is not None else self.data.get("success", True) is not False


class UsageError(Exception):
    """Wrong usage discovered after parsing (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse prints usage and exits 2
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def common_options() -> argparse.ArgumentParser:
    """Options every command accepts, before or after the subcommand name."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--home", default=argparse.SUPPRESS, help="home folder (default: $WORKBENCH_HOME, $HERMES_HOME, or the user data folder)")
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print exactly one JSON document")
    return common


def build_parser() -> argparse.ArgumentParser:
    common = common_options()
    parser = _Parser(prog="workbench", description="Memory Workbench: see, trust and steer what your agent remembers.",
                     parents=[common])
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers, common)
    return parser


def _print(output: Output, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(output.data, ensure_ascii=False, indent=2, default=str) + "\n")
        return
    text = output.text() if callable(output.text) else output.text
    if not text and output.data:
        text = json.dumps(output.data, ensure_ascii=False, indent=2, default=str)
    if text:
        stream = sys.stdout if output.succeeded else sys.stderr
        stream.write(text.rstrip("\n") + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    as_json = getattr(args, "json", False)
    handler = getattr(args, "handler", None)
    if handler is None:  # bare `workbench` opens the TUI
        handler = importlib.import_module("workbench.cli.tui_cmds").open_tui
    try:
        home = None
        if not getattr(args, "no_home", False):
            home = open_home(getattr(args, "home", None), read_only=getattr(args, "read_only", False))
        output = handler(home, args)
    except UsageError as exc:
        parser.print_usage(sys.stderr)
        sys.stderr.write(f"workbench: error: {exc}\n")
        return 2
    except WorkbenchError as exc:
        _print(Output(exc.to_dict(), text=f"error: {exc.message}"), as_json)
        return 1
    except sqlite3.DatabaseError as exc:  # a file damaged past what the opening checks can see
        where = home.root if home is not None else "this home"
        message = (f"A database in {where} could not be read ({exc}). Nothing more was changed; check it with "
                   "`sqlite3 FILE 'PRAGMA integrity_check'` or restore it from a backup.")
        _print(Output({"success": False, "error": message}, text=f"error: {message}"), as_json)
        return 1
    except KeyboardInterrupt:
        return 130
    if output is None:
        return 0
    _print(output, as_json)
    return 0 if output.succeeded else 1


def run() -> None:
    sys.exit(main())
