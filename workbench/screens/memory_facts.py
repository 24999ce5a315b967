"""The Memory screen's facts view: what the ``local`` provider keeps, and the message each came from.

``p`` on the Memory screen shows it in place of the MEMORY/USER columns (``p`` again goes
back). It reads ``engine.providers.facts.list_facts`` in a worker whenever it is shown
and whenever a fact changes while it is, and ``g`` (or Enter) on a fact opens its source
message on the Sessions screen, as ``g`` does for a memory entry.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static

from engine.errors import WorkbenchError
from engine.events import Event, FactsChanged, MessageStored
from engine.providers import configured_names, configured_note
from engine.providers.facts import list_facts
from widgets.fact_list import FactList, FactRow
from widgets.literal import assemble

from ..messages import JumpToMessage, ResultsFromWorkers

EMPTY = (
    "No provider facts yet. They appear when config.yaml sets memory.provider: local — the agent keeps "
    "facts with its fact_add tool, and every committed memory write is mirrored here as a fact."
)


def fact_rows(home) -> list[FactRow]:
    """Worker thread: every fact, with its source message (role and text) when it is stored."""
    rows = []
    for fact in list_facts(home):
        source = fact["source_message"] or {}
        rows.append(
            FactRow(
                id=fact["id"],
                content=fact["content"],
                origin=fact["origin"],
                merged=fact["merged"],
                session_id=fact["session_id"],
                message_id=fact["message_id"],
                source_role=source.get("role"),
                source_text=source.get("text"),
                source_calls=tuple(source.get("tool_calls") or ()),
            )
        )
    return rows


@dataclass
class FactsLoaded(Message):
    """The facts a load worker read, for the UI thread to draw."""

    rows: list[FactRow]
    state: str  # what memory.provider means for new facts
    problem: str | None


def provider_state(home) -> str:
    """Worker thread: whether new facts are kept, by what memory.provider names (``providers list`` says more)."""
    names = configured_names(home)
    if names[:1] == ["local"]:
        return "memory.provider is local"
    note = configured_note(home)
    if note and note.severity == "info":
        return f"memory.provider is {note.name}, Hermes's own: no new facts are kept"
    return "memory.provider is not local: no new facts are kept"


class FactsPane(ResultsFromWorkers, Vertical):
    """A title line and the list of facts; hidden until the Memory screen shows it."""

    DEFAULT_CSS = """
    FactsPane { height: 1fr; display: none; }
    FactsPane FactList { background: $surface; border: round $primary 30%; }
    FactsPane FactList:focus { border: round $primary; }
    """

    def compose(self) -> ComposeResult:
        yield Static("", id="facts-title", classes="column-title")
        yield FactList(id="facts-list", empty_text=EMPTY)

    def on_mount(self) -> None:
        self.app.engine_events.subscribe(self, self._engine_event)  # type: ignore[attr-defined]

    def _engine_event(self, event: Event) -> None:
        if self.display and isinstance(event, (FactsChanged, MessageStored)):
            self.reload()  # a new fact, or the message a fact names has just been stored

    def toggle(self) -> bool:
        """Show or hide the facts (loading them afresh when shown); returns whether they are shown."""
        self.display = not self.display
        if self.display:
            self.query_one(FactList).focus()
            self.reload()
        return self.display

    @work(thread=True, exclusive=True, group="facts-load", exit_on_error=False)
    def reload(self) -> None:
        home = self.app.home  # type: ignore[attr-defined]
        try:
            rows, state = fact_rows(home), provider_state(home)
            problem = None
        except (WorkbenchError, sqlite3.Error) as exc:
            rows, state, problem = [], "", getattr(exc, "message", None) or str(exc)
        self.post_result(FactsLoaded(rows, state, problem))

    @on(FactsLoaded)
    def _show(self, message: FactsLoaded) -> None:
        rows, state, problem = message.rows, message.state, message.problem
        count = f"{len(rows)} fact{'s' if len(rows) != 1 else ''}"
        title = self.query_one("#facts-title", Static)
        if problem:
            title.update(
                assemble(("Provider facts ", "bold $accent"), (f"could not be read: {problem}", "$text-error"))
            )
        else:
            title.update(
                assemble(
                    ("Provider facts ", "bold $accent"),
                    (f"{count} · {state} · ", "$text-muted"),
                    ("g: source message · p: back to entries", "$text-muted"),
                )
            )
        self.query_one(FactList).set_rows(rows)

    @on(FactList.SourceWanted)
    def _source(self, message: FactList.SourceWanted) -> None:
        row = message.row
        if not row.has_source:
            self.screen.show_status(  # type: ignore[attr-defined]
                f"Fact {row.id} has no recorded source message: it was kept outside any session."
            )
            return
        self.app.post_message(JumpToMessage(row.session_id or "", row.message_id))
