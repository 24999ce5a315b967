"""The workbench CLI run in this process: for tests whose subject is the words it prints."""

from __future__ import annotations

import contextlib
import io

from workbench.cli import main


def printed(*args: str) -> str:
    """What ``workbench ARGS`` prints on stdout; it must succeed (its stderr is the failure's message)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    assert status == 0, err.getvalue()
    return out.getvalue()
