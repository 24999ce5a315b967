"""``workbench`` (open the TUI) and ``workbench demo`` (seed a demo home, then open it)."""

from __future__ import annotations

from engine.home import Home

from . import Output


def register(subparsers, common) -> None:
    demo = subparsers.add_parser("demo", parents=[common], help="seed (or reuse) a demo home and open the TUI on it")
    demo.add_argument("--speed", type=float, default=1.0, help="demo pace multiplier (2 = twice as fast)")
    demo.set_defaults(handler=open_demo)


def _memory_files(home: Home) -> str:
    parts = []
    for name in ("MEMORY.md", "USER.md"):
        path = home.memories_dir / name
        body = path.read_text(encoding="utf-8-sig") if path.exists() else "(empty)"
        parts.append(f"== {name} ==\n{body}")
    return "\n\n".join(parts)


def open_tui(home: Home, args) -> Output:
    """The TUI is not built yet: show the home's curated memory instead."""
    return Output({"home": str(home.root)}, text=f"home: {home.root}\n\n{_memory_files(home)}")


def open_demo(home: Home, args) -> Output:
    return open_tui(home, args)
