"""The Run screen's resume picker: recent sessions, filtered as you type.

An untitled session shows the start of its first user message in quotes, as the Sessions
screen does. Typing narrows the list by id prefix or by what it shows; Enter takes the highlighted session, or,
when nothing in the list matches, asks the engine's resolver (the one the CLI uses:
exact id, unique id prefix, or title) and shows its refusal in place.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from engine.archive import Session
from engine.archive.sessions import titled
from engine.clock import shown_time
from engine.errors import WorkbenchError
from engine.textsafety import flat_line
from widgets.literal import WholeStatic, literal

from .dialogs import Dialog

RECENT = 50  # sessions the picker lists


def matches(session: Session, shown: str, text: str) -> bool:
    """Whether ``text`` starts the session's id or is in what the list shows for it (``shown``)."""
    text = text.strip().casefold()
    return not text or session.id.casefold().startswith(text) or text in shown.casefold()


def session_option(session: Session, shown: str) -> Option:
    when = shown_time(session.started_at or 0) or "?"
    state = "archived" if session.archived else "live" if session.ended_at is None else "ended"
    return Option(
        Content.assemble(
            (session.id, "bold"),
            (f"  {when}  ", "$text-muted"),
            flat_line(shown, 50),
            (f"  {state}", "$text-muted"),
        ),
        id=session.id,
    )


@dataclass
class LookedUp(Message):
    """The archive's answer to what was typed: a session, or why none."""

    session_id: str | None
    error: str | None = None


class ResumeDialog(Dialog[str | None]):
    """Pick a session to resume; dismisses with its id (None: cancelled)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("down", "to_list", show=False)]

    def __init__(self, recent: list[Session], resolve: Callable[[str], Session], previews: dict[str, str]):
        super().__init__()
        self.recent = recent
        self.shown = {s.id: titled(s.title, previews.get(s.id)) or "(untitled)" for s in recent}
        self.resolve = resolve  # worker thread: an id, prefix or title -> Session, or WorkbenchError

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog dialog-wide"):
            yield Static(
                literal("Resume which session? Type an id, its start or a title; enter resumes, esc cancels", "bold"),
                classes="dialog-title",
            )
            yield Input(placeholder="id, id prefix or title", id="resume-filter")
            error = WholeStatic("", id="resume-error", classes="error")
            error.display = False  # hidden from the start: no lookup at mount, which may come once it is closing
            yield error
            yield OptionList(*(session_option(s, self.shown[s.id]) for s in self.recent), id="resume-list")

    def on_mount(self) -> None:
        self._fill("")

    @on(Input.Changed, "#resume-filter")
    def _filter(self, event: Input.Changed) -> None:
        self._fill(event.value)

    def _matching(self, text: str) -> list[Session]:
        return [s for s in self.recent if matches(s, self.shown[s.id], text)]

    def _list(self) -> OptionList | None:
        """The list, or None once the dialog is closing (key events can still arrive then)."""
        found = self.query("#resume-list")
        return found.first(OptionList) if found else None

    def _fill(self, text: str) -> None:
        shown = self._list()
        if shown is None:
            return
        shown.set_options([session_option(s, self.shown[s.id]) for s in self._matching(text)])
        if shown.option_count:
            shown.highlighted = 0
        else:
            shown.add_option(
                Option(
                    Content.styled("No recent session matches; enter asks the archive.", "$text-muted"), disabled=True
                )
            )

    @on(Input.Submitted, "#resume-filter")
    def _submitted(self, event: Input.Submitted) -> None:
        shown = self._list()
        if shown is None:
            return
        option = shown.highlighted_option
        if option is not None and option.id and option.id in {s.id for s in self._matching(event.value)}:
            self.dismiss(option.id)
        elif event.value.strip():
            self._look_up(event.value)

    @on(OptionList.OptionSelected, "#resume-list")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        if event.option_id:
            self.dismiss(event.option_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="resume-lookup")
    def _look_up(self, text: str) -> None:
        try:
            session_id = self.resolve(text).id
        except WorkbenchError as exc:  # the resolver's refusal says what to type instead
            self.post_result(LookedUp(None, exc.in_app))
            return
        except (sqlite3.Error, OSError) as exc:  # damage met as it read: said as every screen says it
            self.post_result(LookedUp(None, self.app.home.archive_unreadable(exc)))  # type: ignore[attr-defined]
            return
        self.post_result(LookedUp(session_id))

    @on(LookedUp)
    def _looked_up(self, message: LookedUp) -> None:
        if message.session_id is not None:
            self.dismiss(message.session_id)
        else:
            self._show_error(message.error or "")

    def _show_error(self, message: str) -> None:
        found = self.query("#resume-error")
        if not found:
            return
        error = found.first(Static)
        error.update(literal(message))
        error.display = True

    def action_to_list(self) -> None:
        shown = self._list()
        if shown is not None:
            shown.focus()

    def action_cancel(self) -> None:
        self.dismiss(None)
