"""Errors the engine raises for bad input or refused operations.

Every error carries a message written for the person (or model) who must act on it;
the CLI prints it as ``{"success": false, "error": ...}`` and exits 1, never a traceback.
"""


class WorkbenchError(Exception):
    """A refusal or failure with an actionable message; nothing was changed."""

    def __init__(self, message: str, *, in_app: str | None = None, **details):
        super().__init__(message)
        self.message = message
        self.details = details
        self._in_app = in_app

    @property
    def in_app(self) -> str:
        """The message as a running app (the TUI) says it: where ``message`` gives advice only a new
        command can take (an environment variable read at start), the words with advice the app's user
        can follow; else ``message`` itself."""
        return self._in_app or self.message

    def to_dict(self) -> dict:
        return {"success": False, "error": self.message, **self.details}


class ConfigError(WorkbenchError):
    """config.yaml is malformed or holds a value we cannot use."""


class HomeError(WorkbenchError):
    """The home folder cannot be opened or created."""


class ReadOnlyError(WorkbenchError):
    """A write was attempted on a home opened read-only."""


class UnusableTitle(WorkbenchError):
    """A session title that cannot be stored (too long, or another session's): the text is at fault."""


class TitleChanged(WorkbenchError):
    """A rename made against a title another process has changed since (``title``: the one now)."""

    def __init__(self, message: str, *, title: str | None, **details):
        super().__init__(message, title=title, **details)
        self.title = title


class SessionLive(WorkbenchError):
    """A delete of a session that has not ended (Hermes may still write to it), not agreed to as such."""


class SessionGrew(WorkbenchError):
    """A delete of a session written to since the person was asked about it (not what they agreed to)."""


def said(exc: BaseException) -> str:
    """A failure in words: an engine refusal's own message, else the error's type and text."""
    return exc.message if isinstance(exc, WorkbenchError) else f"{type(exc).__name__}: {exc}"


def said_in_app(exc: BaseException) -> str:
    """A failure in words as a running app says it (``WorkbenchError.in_app``), else as ``said``."""
    return exc.in_app if isinstance(exc, WorkbenchError) else said(exc)


class ExportExists(WorkbenchError):
    """The export's file exists: replaced only when asked (``--force``, or yes in the app)."""


class BadSearchFilter(WorkbenchError):
    """A search filter (``role:``, ``sort:``, ``--role``, ``--sort``) with a value it cannot take."""
