"""Where an export is written: a plain file the user names, outside the home, replaced only when asked.

Both skins write through ``write_export`` (``sessions export -o`` and the Sessions screen's ``x``), so
the rules that keep an export from destroying anything are one: never a file of the home's own, never
through a link or over a device, never over an existing file unless asked, never half a file.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import ExportExists, WorkbenchError
from .fileio import atomic_write_text
from .home import Home


def export_target(home: Home, name: str, *, force: bool = False) -> Path:
    """The file ``name`` (``~`` expanded) means, checked: refused inside the home, as a link or a
    non-file, or existing unless ``force`` (``ExportExists``, so a skin can ask to replace it)."""
    target = Path(name).expanduser()
    home.refuse_inside(target)
    if os.path.lexists(target) and not target.is_dir():  # (a folder, or a missing one, is refused on writing)
        if target.is_symlink() or not target.is_file():  # a link, a FIFO, a device: never replaced
            raise WorkbenchError(
                f"{target} is {'a link' if target.is_symlink() else 'not a regular file'}; pick a plain file "
                "path. Nothing was written.",
                path=str(target),
            )
        if not force:
            raise ExportExists(
                f"{target} exists; pass --force to replace it, or pick another file. Nothing was written.",
                in_app=f"{target} exists.",
                path=str(target),
            )
    return target


def write_export(home: Home, name: str, body: str, *, force: bool = False) -> Path:
    """Write ``body`` to the file ``name`` means (``export_target``'s checks), whole or not at all."""
    target = export_target(home, name, force=force)
    try:
        if not target.parent.is_dir():
            raise FileNotFoundError(2, "no such folder")
        atomic_write_text(target, body)  # a failed write never leaves half a file
    except OSError as exc:
        raise WorkbenchError(
            f"Could not write {target} ({exc.strerror or exc}); pick a file in a folder that "
            "exists and that you can write to.",
            path=str(target),
        ) from exc
    return target
