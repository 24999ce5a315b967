"""``workbench skills edit NAME``: a person's rewrite of a skill's SKILL.md, in their own editor
($VISUAL, else $EDITOR) on a copy, or from a file or stdin (``--from``).

The rule is the engine's (``engine.skills.hand_edit``), as on the Skills screen. A text the engine
refuses is never lost: the editor's copy is kept, and the error says where and how to try it again.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from engine.errors import WorkbenchError
from engine.home import Home
from engine.skills.hand_edit import Opened, open_skill_md, save_skill_md
from engine.textsafety import inline, shell_word

from . import Output
from .textin import bounded_text, stdin_text


def register(sub, common, name_help: str) -> None:
    edit = sub.add_parser(
        "edit",
        parents=[common],
        help="rewrite a skill's SKILL.md by hand, in your editor or from a file",
        description="Rewrite a skill's SKILL.md by hand: in $VISUAL (else $EDITOR) on a copy, or from --from. "
        "It is checked as the agent's edit is (frontmatter, size, threat scan; the name stays the skill's), "
        "refused if the file changed since it was opened, and journaled as yours: `workbench revert` undoes it.",
    )
    edit.add_argument("name", metavar="NAME", help=name_help)
    edit.add_argument(
        "--from", dest="source", metavar="FILE", help="the new SKILL.md text from FILE (-: from stdin), no editor"
    )
    edit.set_defaults(handler=edit_skill, creates_home=False)


def edit_skill(home: Home, args) -> Output:
    opened = open_skill_md(home.skills, args.name)
    if args.source is not None:
        return _saved(home, opened, _source_text(args.source), None)
    copy = _copy(opened)
    try:
        text = _edit(copy)
    except WorkbenchError as exc:
        if _untouched(copy, opened):  # (the editor never ran, or wrote nothing: no text of theirs to keep)
            shutil.rmtree(copy.parent, ignore_errors=True)
            raise
        raise WorkbenchError(f"{exc.message} {_kept(copy, opened)}", kept=str(copy)) from None
    return _saved(home, opened, text, copy)


def _untouched(copy: Path, opened: Opened) -> bool:
    """Whether the editor's copy still holds the text it was made with."""
    try:
        return copy.read_text(encoding="utf-8") == opened.text
    except (OSError, UnicodeDecodeError):
        return False


def _saved(home: Home, opened: Opened, text: str, copy: Path | None) -> Output:
    """Save ``text``; on a refusal keep the editor's ``copy`` and say how to try it again."""
    try:
        result = save_skill_md(home.skills, opened, text)
    except WorkbenchError as exc:  # (a refusal of the text, or of any write now: the text is kept either way)
        if copy is None:
            raise
        raise WorkbenchError(f"{exc.message}\n{_kept(copy, opened)}", **exc.details, kept=str(copy)) from None
    if copy is not None:
        shutil.rmtree(copy.parent, ignore_errors=True)
    lines = [inline(result["message"])]
    if result.get("journal_id") is not None:
        lines.append(f"undo: workbench revert {result['journal_id']}")
    if result.get("warning"):
        lines.append(f"⚠ {inline(result['warning'])}")
    return Output(result, text="\n".join(lines))


def _kept(copy: Path, opened: Opened) -> str:
    return (
        f"Your text is kept in {inline(str(copy))}; to try it again (mended, or once that is fixed): "
        f"`workbench skills edit {shell_word(opened.name)} --from {shell_word(str(copy))}`."
    )


def _copy(opened: Opened) -> Path:
    """The SKILL.md the editor opens, in a folder of its own (so it is named SKILL.md there)."""
    copy = Path(tempfile.mkdtemp(prefix="workbench-skill-")) / "SKILL.md"
    copy.write_text(opened.text, encoding="utf-8")
    return copy


def _edit(copy: Path) -> str:
    """Run the person's editor on ``copy`` and read what it saved."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor or not editor.strip():
        raise WorkbenchError("No editor is set: set $VISUAL or $EDITOR, or give the text with --from FILE.")
    ignored = signal.signal(signal.SIGINT, signal.SIG_IGN)  # (as git does: a ^C at the terminal is the editor's)
    try:
        status = subprocess.run([*shlex.split(editor), str(copy)], check=False).returncode
    except (OSError, ValueError) as exc:
        raise WorkbenchError(f"The editor ({inline(editor)}) could not be started: {exc}.") from None
    finally:
        signal.signal(signal.SIGINT, ignored)
    if status != 0:
        how = f"was stopped by signal {-status}" if status < 0 else f"exited with status {status}"
        raise WorkbenchError(f"The editor ({inline(editor)}) {how}; nothing was saved.")
    return _file_text(copy)


def _source_text(source: str) -> str:
    if source == "-":
        return stdin_text("the SKILL.md text", "cat SKILL.md | workbench skills edit NAME --from -", whole=True)
    return _file_text(Path(source))


def _file_text(path: Path) -> str:
    """A file's text, UTF-8, refused (writing nothing) when it cannot be read or is far too large."""
    try:
        with path.open("rb") as handle:
            return bounded_text(handle, inline(str(path)), "", "nothing was saved")
    except OSError as exc:
        raise WorkbenchError(
            f"{inline(str(path))} cannot be read ({exc.strerror or exc}); nothing was saved."
        ) from None
