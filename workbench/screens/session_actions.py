"""What the Sessions screen does to the session it shows: archive or unarchive, rename, delete, export.

Each goes through the archive's own calls (``set_archived``, ``set_title``,
``delete_session``, ``export_session`` with ``write_export``), as ``workbench sessions
archive|rename|delete|export`` does, so both skins keep one rule and one journal row (the
Timeline shows the archive changes). The session is read in a worker first: a question names
what it acts on as state.db holds it now.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from textual import on, work
from textual.binding import Binding
from textual.message import Message

from engine.archive.models import Session
from engine.archive.sessions import MAX_TITLE_LENGTH, DeleteMark, sanitize_title, titled
from engine.db import DatabaseBusyError
from engine.errors import ExportExists, SessionGrew, SessionLive, TitleChanged, UnusableTitle, WorkbenchError
from engine.export_file import write_export
from engine.memory import history
from engine.textsafety import flat_line
from widgets.transcript import Transcript

from ..messages import ResumeSession
from .base import WorkbenchScreen
from .dialogs import LineDialog

ARCHIVING = ("archive", "unarchive")  # what a does to the conversation shown (its label also says how much)
PICK_FIRST = "Pick a session first: these keys act on the session the transcript shows."
ARCHIVED_UNKNOWN = "Wait for the session's transcript: a archives it, or lists it again if it is archived."
FOOTER_ROOM = 120  # columns from which the footer has room for a, e, D and x beside the transcript's keys
EXPORT_ROOM = 90  # columns from which it has room for x beside a, e, D and the search's keys

HELP = (
    " On the session shown: a archives it with its conversation (hidden from lists and session_search; "
    "on a conversation partly archived, a reads Archive rest and archives what is still listed; on one "
    "archived whole, found by search, a reads Unarchive and lists it again), e renames it, D deletes "
    "it (on a chain's row, the segment shown) and its messages after asking (that cannot be undone). An "
    "archive change or a delete is a Timeline row; r there reverts an archive. x exports it to a file you "
    "name (Markdown, or JSON for a name ending .json), asking before it replaces one. R resumes it on the Run "
    "screen, as ctrl+o there does."
)
EXPORT_HINT = "enter: write (a name ending .json writes JSON, else Markdown) · esc: cancel"


@dataclass
class SessionLooked(Message):
    """The shown session as state.db holds it, read for an action."""

    action: str
    session: Session
    name: str  # how the questions name it: its id and title (or the start of its first message)
    segments: tuple[str, ...]  # its compression chain, first to latest
    chain_title: str | None  # the title the tree's row shows for that chain
    chain_label: str | None = None  # what the row shows: that title, else the chain's first message in quotes
    live: str | None = None  # deleting or archiving: why it may not last (it has not ended), said in the question
    mark: DeleteMark | None = None  # deleting: what it takes as asked (``delete_mark``; its count is the question's)
    cited: tuple[str, ...] = ()  # deleting: the memory entries that came from a session it takes


@dataclass
class TitleRefused(Message):
    """A rename the archive refused: asked again with the draft."""

    looked: SessionLooked
    draft: str
    error: str


@dataclass
class ExportRefused(Message):
    """An export that wrote nothing: asked again with the file named (``exists``: asked to replace it)."""

    looked: SessionLooked
    name: str
    error: str
    exists: bool = False


class SessionActions(WorkbenchScreen):
    """The Sessions screen's base: the keys act on the session picked last (``wanted_session``)."""

    # The footer offers the keys where it has room (x needs more); the unlisted twins answer them at any width. a says
    # what it will do to the conversation shown, by how much of it is archived (its second parameter, check_action):
    # Archive; Archive rest, on one partly archived; Unarchive, on one archived whole.
    BINDINGS = [
        Binding("a", "listed_session('archive', 'none')", "Archive"),
        Binding("a", "listed_session('archive', 'part')", "Archive rest"),
        Binding("a", "listed_session('unarchive', 'whole')", "Unarchive"),
        Binding("e", "listed_session('rename')", "Rename"),
        Binding("D", "listed_session('delete')", "Delete", key_display="D"),
        Binding("x", "listed_session('export')", "Export"),
        Binding("a", "session('archive', 'none')", "Archive", show=False),
        Binding("a", "session('archive', 'part')", "Archive rest", show=False),
        Binding("a", "session('unarchive', 'whole')", "Unarchive", show=False),
        Binding("e", "session('rename')", "Rename", show=False),
        Binding("D", "session('delete')", "Delete", key_display="D", show=False),
        Binding("x", "session('export')", "Export", show=False),
        Binding("R", "session('resume')", "Resume in Run", key_display="R", show=False),
    ]
    shown_session: str | None = None
    wanted_session: str | None = None  # the session picked last, its transcript loading or shown
    # How much of the picked session's conversation is archived (``archived_share``: none, part, whole), as its row
    # showed it and then its transcript read it (a's label and what a does); None until read where the row could not
    # say (a jump from another screen; an archived search hit, whose conversation may or may not be archived whole).
    picked_archived: str | None = "none"
    unreadable = False  # the archive's sessions could not be listed: no session can be picked (``RootsLoaded``)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action in ("listed_session", "session") and self.unreadable:
            return False  # (dimmed, they said "Pick a session first" where none can be; the transcript says why)
        if action == "listed_session" and self.size.width < FOOTER_ROOM and self._keys_crowd():
            return False
        if action == "listed_session" and parameters == ("export",) and self.size.width < EXPORT_ROOM:
            return False
        archiving = bool(parameters) and parameters[0] in ARCHIVING
        if archiving and self.picked_archived is None and self.picked_session is not None:
            return None if action == "session" else False  # (a waits for the transcript's read: said, if pressed)
        if archiving and parameters[1] != self.picked_archived:
            return False  # (another of a's labels says what it does now)
        if action in ("listed_session", "session") and self.picked_session is None:
            return None  # dimmed: they act on the session picked, and none is yet
        return super().check_action(action, parameters)

    def explain_dimmed(self, action: str, parameters: tuple) -> str | None:
        """Why a, e or D, dimmed, does nothing: pressed, it says so (``WorkbenchApp.run_action``)."""
        if action in ("listed_session", "session") and self.picked_session is None:
            return PICK_FIRST
        if parameters and parameters[0] in ARCHIVING and self.picked_archived is None:
            return ARCHIVED_UNKNOWN
        return None

    def pick(self, session_id: str, archived: str | None) -> None:
        """``session_id`` is the one the keys act on now; ``archived`` is what its row says of how much of
        its conversation is archived (None: not said), a's label until its transcript reads it."""
        if session_id != self.picked_session or archived is not None:
            self.picked_archived = archived
            self.refresh_bindings()
        self.wanted_session = session_id

    def _keys_crowd(self) -> bool:
        """Whether the focused widget's own keys fill the footer (the transcript's: w, f, m), leaving no
        room below ``FOOTER_ROOM`` columns for a, e, D and x; the tree and the search leave it."""
        return isinstance(self.focused, Transcript)

    def on_resize(self) -> None:
        self.refresh_bindings()

    def action_listed_session(self, action: str, archived: str = "") -> None:
        self.action_session(action)

    @property
    def picked_session(self) -> str | None:
        """The session a, e, D, x and R act on: the one picked last, even while its transcript still
        loads (a key pressed just after a cursor move acted on the one shown before, named in a question
        that then sat over the new one's transcript; before the first transcript came, on none)."""
        return self.wanted_session or self.shown_session

    def action_session(self, action: str, archived: str = "") -> None:
        """``archived``: which of a's labels was pressed (check_action); what a does is ``action``."""
        picked = self.picked_session
        if picked is None:
            self.show_status(PICK_FIRST)
            return
        if action == "resume":
            self.app.post_message(ResumeSession(picked))
            return
        self._look(action, picked)

    @work(thread=True, exit_on_error=False, group="session-action")
    def _look(self, action: str, session_id: str) -> None:
        archive = self.home.archive
        with self.archive_read():  # (damage met here is said, not a bare "Something went wrong")
            session = archive.get_session(session_id)
            if session is None:
                self.report(f"Session {session_id} is no longer in state.db.", error=True)
                return
            archiving = action in ARCHIVING
            # archiving names the conversation it takes, as its Timeline row does (a delegate's: its parent's)
            chain = archive.chain_of(archive.conversation_family(session_id)[0] if archiving else session_id)
            previews = archive.previews([session_id, chain.head.id])
            live = (
                archive.live_delete_warning(session_id)
                if action == "delete"
                else archive.live_archive_warning(session_id)
                if action == "archive"
                else None
            )
            mark = archive.delete_mark(session_id) if action == "delete" else None
            try:
                cited = tuple(history.entries_from(self.home.memory, set(mark.sessions))) if mark else ()
            except WorkbenchError as exc:
                self.report(exc.in_app, error=True)
                return
            name = _named(session.id, titled(session.title, previews.get(session_id)))
            chain_label = titled(chain.title, previews.get(chain.head.id))
            self.post_result(
                SessionLooked(action, session, name, chain.ids, chain.title, chain_label, live, mark, cited)
            )

    @on(SessionLooked)
    def _looked(self, message: SessionLooked) -> None:
        session, name = message.session, message.name
        if message.action == "archive" and message.live:  # (asked first, as D asks: it may not last)
            self.confirm(
                f"Archive {_chain_name(message, 0)}?",
                f"{message.live} Yes archives it anyway; r on its Timeline row lists it again.",
                lambda: self._change(message, True),
            )
        elif message.action in ARCHIVING:  # (on the conversation, as the tree lists it, not the segment shown)
            self._change(message, message.action == "archive")  # as a's label said (already so: said, no change)
        elif message.action == "rename":
            try:
                value = sanitize_title(session.title) or ""
            except WorkbenchError:  # longer than a title may be (Hermes's own): start from what fits
                value = sanitize_title((session.title or "")[:MAX_TITLE_LENGTH]) or ""
            self._ask_title(message, value)
        elif message.action == "export":
            self._ask_file(message, f"~/{session.id}.md")
        else:
            shown = message.mark.messages if message.mark else session.message_count  # (what y is checked against)
            count = f"{shown} message{'s' * (shown != 1)}"
            segment = _segment(message)
            part = f" It is {segment}: only this one goes (a archives the whole conversation)." if segment else ""
            ended = ""
            ours = self.workbench.running_session == session.id
            if ours:
                part += " It is the session Run talks in: your next message there starts a new session."
            run = self.workbench.run_screen
            # (one Run started is live only as ours; one it resumed live, Hermes's too)
            if message.live and (not ours or (run is not None and run.resumed_live(session.id))):
                ended = f"{message.live} Yes deletes it anyway.\n\n"  # (said first: why this delete may not last)
            if message.cited:  # (memory that came from it stays, naming a message that is gone)
                part += " " + history.cited_note(message.cited)
            self.confirm(
                f"Delete {name} and its {count}?",
                f"{ended}Its messages go from state.db, with the delegate sessions it started; its other "
                f"children become roots.{part} This cannot be undone: the Timeline keeps only a row saying so.",
                lambda: self._change(message, message.live is not None),
            )

    def _ask_title(self, message: SessionLooked, draft: str, refused: str | None = None) -> None:
        """The rename box (again, with the draft and why it was refused, when a title was refused)."""
        segment = _segment(message)
        row = (
            f" (the tree's row shows the chain as '{flat_line(message.chain_title, 40)}')"
            if message.chain_title
            else ""
        )
        question = f"Rename {message.name}" + (f", {segment}{row}" if segment else "")
        hint = "enter: save (empty: no title) · esc: cancel"

        def renamed(title: str | None) -> None:
            if title is not None:
                self._change(message, title)

        self.ask(LineDialog(question, draft, hint, error=refused or ""), renamed)

    @on(TitleRefused)
    def _title_refused(self, refusal: TitleRefused) -> None:
        self._ask_title(refusal.looked, refusal.draft, refusal.error)

    def _ask_file(self, message: SessionLooked, draft: str, refused: str = "") -> None:
        """The export's file box (again, with the name and why nothing was written, after a refusal)."""
        segment = _segment(message)
        whole = f", {segment} (workbench sessions export --lineage writes the whole chain)" if segment else ""

        def named(name: str | None) -> None:
            if name is not None and name.strip():
                self._export(message, name.strip())
            elif name is not None:
                self._ask_file(message, name, "Name the file to write the export to.")

        self.ask(LineDialog(f"Export {message.name}{whole} to", draft, EXPORT_HINT, error=refused), named)

    @on(ExportRefused)
    def _export_refused(self, refusal: ExportRefused) -> None:
        if refusal.exists:
            self.confirm(
                "Replace the file?",
                f"{refusal.error} Yes replaces it with {refusal.looked.name}.",
                lambda: self._export(refusal.looked, refusal.name, force=True),
            )
        else:
            self._ask_file(refusal.looked, refusal.name, refusal.error)

    @work(thread=True, exit_on_error=False, group="session-action")
    def _export(self, message: SessionLooked, name: str, *, force: bool = False) -> None:
        """Write the session shown to ``name``, as ``sessions export -o`` does; a refusal asks again."""
        fmt = "json" if name.lower().endswith(".json") else "markdown"
        try:
            body = self.home.archive.export_session(message.session.id, fmt)
            target = write_export(self.home, name, body, force=force)
        except ExportExists as exc:
            self.post_result(ExportRefused(message, name, exc.in_app, exists=True))
            return
        except WorkbenchError as exc:
            self.post_result(ExportRefused(message, name, exc.in_app))
            return
        self.report(f"Exported {message.name} to {target.absolute()} ({'JSON' if fmt == 'json' else 'Markdown'}).")

    @work(thread=True, exit_on_error=False, group="session-action")
    def _change(self, message: SessionLooked, value: object) -> None:
        archive, session_id, name = self.home.archive, message.session.id, message.name
        try:
            if message.action in ARCHIVING:  # (it takes the whole chain, so the message names the chain)
                # (live only as the question said: one resumed since is refused, and that said)
                changed = archive.set_archived(session_id, bool(value), actor="user", if_ended=message.live is None)
                name = _chain_name(message, changed)
                done = (
                    f"Archived {name}: hidden from lists and session_search (r on its Timeline row lists it again)."
                    if value
                    else f"Unarchived {name}: listed and searchable again."
                )
                said = done if changed else f"{name} is {'archived' if value else 'listed'} already."
            elif message.action == "rename":
                try:
                    taken = archive.title_to_take(session_id, str(value))
                    title = archive.set_title(session_id, str(value), actor="user", was=message.session.title)
                except UnusableTitle as exc:  # another session's, or too long: asked again, the draft kept
                    self.post_result(TitleRefused(message, str(value), exc.in_app))
                    return
                except TitleChanged as exc:  # renamed meanwhile: asked again, against the title it has now
                    session = replace(message.session, title=exc.title)
                    now = replace(message, session=session, name=_named(session_id, exc.title))
                    self.post_result(TitleRefused(now, str(value), exc.in_app))
                    return
                except DatabaseBusyError as exc:  # nothing changed: the box back with the draft, to try again
                    self.post_result(TitleRefused(message, str(value), exc.in_app))
                    return
                said = f"Renamed {session_id}: {flat_line(title, 60)}." if title else f"{session_id} has no title now."
                if taken:  # (as Hermes does: one title per conversation)
                    said += f" Taken from {taken}, an earlier segment of this conversation, now untitled."
            else:
                # (live only as the question said: one reopened since is refused, and that said)
                # (what the question said goes: one written to since is refused)
                gone = archive.delete_session(session_id, actor="user", live=bool(value), shown=message.mark)
                said = f"Deleted {name}." if gone else f"{name} was deleted already."
        except SessionLive as exc:  # (reopened since the question was asked without saying so)
            what = "archived: a" if message.action in ARCHIVING else "deleted: D"
            self.report(f"{exc.in_app} Nothing was {what} asks again.", error=True)
            return
        except SessionGrew as exc:  # (written to while the question was open)
            self.report(f"{exc.in_app} D asks again.", error=True)
            return
        except WorkbenchError as exc:
            self.report(exc.in_app, error=True)
            return
        self.report(said)


def _named(session_id: str, label: str | None) -> str:
    """How a question names a session: its id, and its title (or first message) when it has one."""
    return f"session {session_id}" + (f" ({flat_line(label, 40)})" if label else "")


def _segment(message: SessionLooked) -> str:
    """Which segment of its compression chain the session is ("" for a chain of one)."""
    chain = message.segments
    return (
        f"segment {chain.index(message.session.id) + 1} of the {len(chain)} in its compression chain"
        if chain[1:]
        else ""
    )


def _chain_name(message: SessionLooked, changed: int) -> str:
    """What archiving acted on, in words: the session, or, for a compression chain, the chain as the
    tree's row names it and how many sessions of its conversation changed (``'Migration plan', 2 sessions of its
    conversation``)."""
    if len(message.segments) < 2 and changed <= 1:
        return message.name
    if message.chain_title:
        label = f"'{flat_line(message.chain_title, 40)}'"
    else:  # the chain's first message in quotes, as the tree's row names it, else the session's own name
        label = flat_line(message.chain_label, 40) if message.chain_label else message.name
    if changed < 1:
        return f"{label} (its conversation)"
    return f"{label}, {changed} session{'s' * (changed != 1)} of its conversation"
