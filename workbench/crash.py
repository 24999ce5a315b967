"""Last-resort handling of a bug: the traceback goes to a file, the person gets one line.

A refusal is never a crash (those are ``WorkbenchError``s with their own message); this
is only for the unexpected, so that no traceback reaches the terminal and the exit
status says something went wrong.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import platformdirs

from engine.kept_files import KEEP_DAYS, KEEP_MOST, KEEP_NEWEST, kept_files
from engine.textsafety import visible

CRASH_EXIT = 70  # EX_SOFTWARE: an internal error


def crash_dir() -> Path:
    folder = os.environ.get("WORKBENCH_CONFIG_DIR") or platformdirs.user_config_dir("memory-workbench", appauthor=False)
    return Path(folder) / "crashes"


def keep_text(text: str, folder: Path, kind: str) -> Path:
    """Write ``text`` to a new file ``<kind>-<time>-<random>.txt`` in ``folder`` (made if missing); its path.
    Raises OSError when it cannot be written."""
    folder.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix=time.strftime(f"{kind}-%Y%m%d-%H%M%S-"), suffix=".txt", dir=folder)
    with open(handle, "w", encoding="utf-8") as out:
        out.write(text)
    _prune(folder, kind)
    return Path(name)


def _prune(folder: Path, kind: str) -> None:
    """Remove the files of ``kind`` that ``keep_text`` wrote and KEEP_NEWEST, KEEP_DAYS and KEEP_MOST no longer
    keep (newest first by mtime); any other file in ``folder`` is left alone, and a file that will not go stays."""
    young = time.time() - KEEP_DAYS * 86400
    for n, (mtime, path) in enumerate(kept_files(folder, kind)):
        if n >= KEEP_MOST or (n >= KEEP_NEWEST and mtime < young):
            with contextlib.suppress(OSError):
                path.unlink()


def save_traceback(exc: BaseException, folder: Path | None = None) -> Path | None:
    """Write the traceback of ``exc`` to a new file in ``folder`` (``crash_dir()``); None if that fails."""
    try:
        return keep_text(
            "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)), folder or crash_dir(), "crash"
        )
    except OSError:
        return None


def _saved_where(exc: BaseException) -> str:
    """Save the traceback of ``exc``; where it went, in words."""
    saved = save_traceback(exc)
    return f"the traceback is in {saved}" if saved else "the traceback could not be saved"


def crash_message(exc: BaseException) -> str:
    where = _saved_where(exc)
    return f"internal error: {type(exc).__name__}. Nothing more was changed; {where}. Please report it with that file."


LATELY_S = 60.0  # a failure this soon after a warning about its error is that problem again


class OneLineLog(logging.Handler):
    """Warnings the engine logs, each said once as one line through ``say`` (the CLI's stderr, the
    TUI's notifications); a logged traceback goes to a file like a crash's. Without it the CLI
    printed them through Python's last-resort handler (raw data, whole tracebacks), and the TUI,
    whose stderr Textual captures, dropped them."""

    def __init__(self, say: Callable[[str], object]) -> None:
        super().__init__(logging.WARNING)
        self.say = say
        self.said: set[str] = set()  # a warning per entry read (40 entries, one unreadable state.db) is said once
        # the errors those lines were about, with when each was last said: two parts failing on one damaged
        # state.db at start-up are one problem, said once (at 80 columns two such toasts covered most of it)
        self.causes: dict[str, float] = {}

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = " ".join(record.getMessage().split())
            error = record.exc_info[1] if record.exc_info else None
            causes = _causes(record)
            if error is None and (line in self.said or (causes and causes <= self.causes.keys())):
                return
            self.said.add(line)
            self.causes.update(dict.fromkeys(causes, time.monotonic()))
            if error is not None:
                line += f" ({type(error).__name__}; {_saved_where(error)})"
            self.say(visible(line))
        except Exception:  # a broken stderr or a closing app: the work's own result still decides
            pass

    def said_lately(self, cause: str, within: float = LATELY_S) -> bool:
        """Whether a warning about ``cause`` was said in the last ``within`` seconds (a failure then is the
        same problem again; one later is news, and is said)."""
        at = self.causes.get(cause)
        return at is not None and time.monotonic() - at < within


def _causes(record: logging.LogRecord) -> set[str]:
    """The errors a warning is about: its arguments that are exceptions, in their own words."""
    args = record.args.values() if isinstance(record.args, dict) else record.args or ()
    return {" ".join(str(getattr(a, "message", None) or a).split()) for a in args if isinstance(a, BaseException)}


def _to_stderr(line: str) -> None:
    from .cli.fit import tell  # (the CLI's rule for a line on stderr; this module is the TUI's too)

    tell(f"warning: {line}")


def log_to_stderr_in_one_line() -> None:
    """Route the engine's warnings to stderr through ``OneLineLog`` (once per process)."""
    root = logging.getLogger()
    if not any(isinstance(h, OneLineLog) and h.say is _to_stderr for h in root.handlers):
        root.addHandler(OneLineLog(_to_stderr))
