"""The TUI's own small settings (the chosen theme), kept per user, never in the home.

Stored as JSON at ``$WORKBENCH_CONFIG_DIR/tui.json``, else under the platform's user
config folder (``~/.config/memory-workbench/tui.json`` on Linux). A missing or broken
file means defaults; saving never raises into the UI.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import platformdirs

from engine.fileio import atomic_write_json

log = logging.getLogger(__name__)


def settings_path() -> Path:
    folder = os.environ.get("WORKBENCH_CONFIG_DIR") or platformdirs.user_config_dir("memory-workbench", appauthor=False)
    return Path(folder) / "tui.json"


def drafts_dir(settings_file: Path) -> Path:
    """Where the editor's "Take theirs" keeps drafts, beside the settings (never in the home), in one
    subfolder a home (``engine.kept_files.home_drafts``); doctor lists the home's, and those of an unknown home."""
    return settings_file.parent / "drafts"


def load_settings(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_setting(path: Path, key: str, value) -> None:
    """Set one key, keeping the others; a failure is logged, not raised."""
    data = load_settings(path)
    data[key] = value
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(path, data)
    except OSError as exc:
        log.warning("could not save TUI settings to %s: %s", path, exc)
