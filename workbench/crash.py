"""Last-resort handling of a bug: the traceback goes to a file, the person gets one line.

A refusal is never a crash (those are ``WorkbenchError``s with their own message); this
is only for the unexpected, so that no traceback reaches the terminal and the exit
status says something went wrong.
"""

from __future__ import annotations

import os
import tempfile
import time
import traceback
from pathlib import Path

import platformdirs

CRASH_EXIT = 70  # EX_SOFTWARE: an internal error


def crash_dir() -> Path:
    folder = os.environ.get("WORKBENCH_CONFIG_DIR") or platformdirs.user_config_dir("memory-workbench", appauthor=False)
    return Path(folder) / "crashes"


def save_traceback(exc: BaseException, folder: Path | None = None) -> Path | None:
    """Write the traceback of ``exc`` to a new file in ``folder`` (``crash_dir()``); None if that fails."""
    folder = folder or crash_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(prefix=time.strftime("crash-%Y%m%d-%H%M%S-"), suffix=".txt", dir=folder)
        with open(handle, "w", encoding="utf-8") as out:
            out.write("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    except OSError:
        return None
    return Path(name)


def crash_message(exc: BaseException) -> str:
    saved = save_traceback(exc)
    where = f"the traceback is in {saved}" if saved else "the traceback could not be saved"
    return f"internal error: {type(exc).__name__}. Nothing more was changed; {where}. Please report it with that file."
