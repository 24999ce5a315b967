"""``workbench`` or ``workbench tui`` (open the TUI) and ``workbench demo`` (seed a demo home, then open it).

Textual is imported only here, when the TUI really opens, so other commands stay fast.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sys

from engine.demo import holds_other_data
from engine.errors import WorkbenchError
from engine.home import Home, open_home, resolve_home

from . import UsageError, add_command
from .fit import tell
from .numbers import SPEED


def register(subparsers, common) -> None:
    tui = add_command(
        subparsers,
        "tui",
        common,
        description="Open the TUI on the home, as `workbench` alone does. It needs a terminal: run it in one.",
    )
    tui.set_defaults(handler=open_tui, needs_terminal=True)
    demo = add_command(subparsers, "demo", common)
    demo.add_argument("--speed", type=SPEED, default=1.0, help="demo pace multiplier (2 = twice as fast)")
    demo.add_argument(
        "--fresh",
        action="store_true",
        help="start the story over: move a previous demo home aside to <home>.previous first",
    )
    demo.set_defaults(handler=open_demo, no_home=True)


NO_TERMINAL = "the TUI needs a terminal: run it in one, or give a command; see `workbench --help`"


def has_terminal() -> bool:
    """Whether the TUI can run here: Textual reads keys from stdin and draws on stderr, so both must
    be a terminal (``workbench </dev/null`` or ``workbench 2>log`` would draw escape codes unseen).
    A driver of one's own (``TEXTUAL_DRIVER``: the web driver ``textual serve`` sets) needs none."""
    if os.environ.get("TEXTUAL_DRIVER"):
        return True
    for stream in (sys.__stdin__, sys.__stderr__):
        try:
            if stream is None or not os.isatty(stream.fileno()):
                return False
        except (OSError, ValueError):  # (closed, or no file descriptor at all)
            return False
    return True


def check_terminal() -> None:
    """Refuse, as wrong usage and before the home is opened (so nothing is created), to open the TUI
    without a terminal."""
    if not has_terminal():
        raise UsageError(NO_TERMINAL)


def open_tui(home: Home, args) -> None:
    """Open the TUI on the home; returns when the user quits."""
    from workbench.app import run_app

    run_app(home, new_home=home.created)


def open_demo(_home: None, args) -> None:
    """Seed the demo home unless it already is one, then play the demo scenario live."""
    if not args.speed > 0:
        raise UsageError(f"--speed must be a positive number, got {args.speed}.")
    check_terminal()  # (before the home is made or seeded)
    root = resolve_home(getattr(args, "home", None))
    if args.fresh and root.exists():
        set_aside(open_home(root))
    # closed as every command's home is (its -wal copied in and deleted: ``cli._run_closing``)
    with contextlib.closing(open_home(root)) as home:
        if holds_other_data(home):
            raise WorkbenchError(
                f"{home.root} already holds memory, sessions or skills that are not the demo's, and the demo "
                "would add to them; nothing was changed. Use a folder of its own "
                "(`workbench demo --home ./demo-home`), or `workbench` to open this home.",
                home=str(home.root),
            )
        from engine.demo import seed_demo_home
        from workbench.app import run_app

        seed_demo_home(home)
        run_app(home, demo_speed=args.speed)


def set_aside(home: Home) -> None:
    """Move a previous demo home to ``<home>.previous``; never a real home. Nothing is deleted: what
    was at ``<home>.previous`` (hand edits made while exploring it, say) moves on to the first free
    ``<home>.previous-N``, and stderr says where, so a user can delete old ones when done with them."""
    if holds_other_data(home):
        raise WorkbenchError(
            f"{home.root} is not a demo home (it holds memory, sessions or skills the demo did not "
            "seed), so --fresh will not move it; nothing was changed.",
            home=str(home.root),
        )
    home.close()
    previous = home.root.with_name(home.root.name + ".previous")
    if previous.exists() or previous.is_symlink():
        older = next(
            path
            for n in itertools.count(2)
            if not (path := previous.with_name(f"{previous.name}-{n}")).exists() and not path.is_symlink()
        )
        previous.rename(older)
        tell(f"note: the demo home set aside before is kept as {older}; delete it when you no longer need it")
    home.root.rename(previous)
