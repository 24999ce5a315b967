"""``workbench doctor [--fix]``: check a home the way Hermes and the workbench need it."""

from __future__ import annotations

import argparse

from engine.doctor import LABEL, needing_attention, render, run_doctor
from engine.home import Home
from engine.textsafety import cells, visible

from ..settings import drafts_dir, settings_path
from . import Output, add_command
from .fit import labelled, terminal_width, wrapped


class _Fix(argparse.Action):
    """``--fix`` needs a writable home; without it the home is opened read-only, so a
    plain ``doctor`` provably changes nothing."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        namespace.fix, namespace.read_only, namespace.creates_home = True, False, False  # repairs an existing home


def register(subparsers, common) -> None:
    doctor = add_command(subparsers, "doctor", common)
    doctor.add_argument(
        "--fix",
        action=_Fix,
        help="also repair what is safe to repair (journaled; nothing deleted but a temp file whose bytes "
        "are kept elsewhere)",
    )
    # (it reports what is kept for state.db as it is: storing it first would report a home it changed;
    # a config.yaml it cannot take is a finding, the rest checked with the defaults)
    doctor.set_defaults(
        handler=doctor_home, fix=False, read_only=True, reports_problems=True, stores_kept=False, config_defaults=True
    )


def doctor_home(home: Home, args) -> Output:
    report = run_doctor(home, fix=args.fix, drafts=drafts_dir(settings_path()))
    data = report.to_dict()
    attention = [f for f in report.findings if f.needs_attention]
    if attention:
        data.update(
            success=False,
            error=f"{needing_attention(len(attention))}; each says how to fix it.",
        )
    return Output(data, text=lambda: fitted(render(data)), ok=report.ok, report=True)


def fitted(report: str) -> str:
    """``report`` wrapped to the terminal: each line's text under its own start, right of its mark and area
    (at 60 columns the terminal broke a finding's long line inside words, under the next area's column)."""
    columns = terminal_width()
    lines: list[str] = []
    for line in report.split("\n"):
        label = LABEL.match(line).group(0)
        if cells(visible(line)) <= columns:  # (as it is: a YAML error's lines keep their spacing)
            lines.append(line)
        elif label:
            lines += labelled(label, line[len(label) :], columns)
        else:
            lines += wrapped(line, columns, hang="  ", chop=False)
    return "\n".join(lines)
