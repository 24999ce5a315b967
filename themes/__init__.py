"""Our two themes (dark and light) and the app stylesheet.

Custom colour variables live in each Theme's ``variables`` and, with the same names,
in ``VARIABLE_DEFAULTS`` so that Textual's built-in themes keep the stylesheet valid.
"""

from __future__ import annotations

from pathlib import Path

from textual.theme import Theme

THEMES_DIR = Path(__file__).resolve().parent
STYLESHEET = THEMES_DIR / "workbench.tcss"

# Variables our stylesheet uses; every theme gets these unless it overrides them.
VARIABLE_DEFAULTS = {
    "mark-added": "#5faf5f",
    "mark-changed": "#d7af5f",
    "mark-removed": "#d75f5f",
    "gauge-ok": "#5f9fd7",
    "gauge-warn": "#d7af00",
    "gauge-full": "#d75f5f",
    "gauge-ghost": "#8787af",
}

WORKBENCH_DARK = Theme(
    name="workbench-dark",
    primary="#5fafd7",
    secondary="#87afaf",
    accent="#d7af5f",
    warning="#d7af00",
    error="#e06c75",
    success="#87c37d",
    foreground="#dadada",
    background="#1c1e22",
    surface="#24272c",
    panel="#2e3238",
    dark=True,
    variables={
        "mark-added": "#87c37d",
        "mark-changed": "#e5c07b",
        "mark-removed": "#e06c75",
        "gauge-ok": "#5fafd7",
        "gauge-warn": "#e5c07b",
        "gauge-full": "#e06c75",
        "gauge-ghost": "#7f7fa8",
        "footer-key-foreground": "#d7af5f",
    },
)

WORKBENCH_LIGHT = Theme(
    name="workbench-light",
    primary="#1f6fa8",
    secondary="#4d7f7f",
    accent="#9a6a00",
    warning="#a66f00",
    error="#b3261e",
    success="#2e7d32",
    foreground="#1e1f22",
    background="#f6f5f1",
    surface="#ecebe6",
    panel="#dedcd5",
    dark=False,
    variables={
        "mark-added": "#2e7d32",
        "mark-changed": "#9a6a00",
        "mark-removed": "#b3261e",
        "gauge-ok": "#1f6fa8",
        "gauge-warn": "#a66f00",
        "gauge-full": "#b3261e",
        "gauge-ghost": "#8a86b8",
        "footer-key-foreground": "#9a6a00",
    },
)

THEMES = (WORKBENCH_DARK, WORKBENCH_LIGHT)
DEFAULT_THEME = WORKBENCH_DARK.name
