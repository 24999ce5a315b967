"""``workbench`` (open the TUI) and ``workbench demo`` (seed a demo home, then open it).

Textual is imported only here, when the TUI really opens, so other commands stay fast.
"""

from __future__ import annotations

from engine.errors import WorkbenchError
from engine.home import Home

from . import UsageError


def register(subparsers, common) -> None:
    demo = subparsers.add_parser("demo", parents=[common],
                                 help="seed (or reuse) a demo home, open the TUI and play the demo scenario")
    demo.add_argument("--speed", type=float, default=1.0, help="demo pace multiplier (2 = twice as fast)")
    demo.set_defaults(handler=open_demo)


def open_tui(home: Home, args) -> None:
    """Open the TUI on the home; returns when the user quits."""
    from workbench.app import run_app

    run_app(home)


def open_demo(home: Home, args) -> None:
    """Seed the demo home unless it already is one, then play the demo scenario live."""
    if not args.speed > 0:
        raise UsageError(f"--speed must be a positive number, got {args.speed}.")
    if holds_other_data(home):
        raise WorkbenchError(f"{home.root} already holds memory or sessions that are not the demo's, and the demo "
                             "would add to them; nothing was changed. Use a folder of its own "
                             "(`workbench demo --home ./demo-home`), or `workbench` to open this home.",
                             home=str(home.root))
    from engine.demo import seed_demo_home
    from workbench.app import run_app

    seed_demo_home(home)
    run_app(home, demo_speed=args.speed)


def holds_other_data(home: Home) -> bool:
    """True for a home with memory or sessions that the demo did not seed (a real install)."""
    from engine.demo import MEMORY, SESSIONS, USER

    entries = set(home.memory.entries("memory")) | set(home.memory.entries("user"))
    if entries and not entries & (set(MEMORY) | set(USER)):
        return True
    archive = home.archive
    return archive.session_count() > 0 and all(archive.get_session(sid) is None for sid, *_ in SESSIONS)
