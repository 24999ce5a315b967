"""The Sessions screen's P: prune the ended sessions older than a number of days, after asking.

It asks for the days, then names what would go (``prunable``, ``prune_listing`` and
``prune_warnings``: the words ``workbench sessions prune`` gives), and deletes only the
sessions that question named (``prune(among=...)``), so one that ended meanwhile is not
taken unasked. The prune is one Timeline row, as the command's is.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import on, work
from textual.binding import Binding
from textual.message import Message

from engine.archive.sessions import from_source, prune_terms
from engine.clock import days
from engine.errors import WorkbenchError

from .base import WorkbenchScreen
from .dialogs import LineDialog

DAYS_HINT = "enter: list what would go · 90 source:cli: one source · esc: cancel"
DEFAULT_DAYS = "90"
HELP = (
    " P prunes: it asks how many days (and, with source:cli after them, of which source only, as the "
    "CLI's --source), names the ended sessions started longer ago than that, and "
    "deletes them and their messages after asking (their child sessions stay, as roots; a live session "
    "is never pruned). That cannot be undone: the Timeline keeps only a row saying so."
)


@dataclass
class PruneLooked(Message):
    """What a prune of sessions older than ``days`` would delete, read for the question."""

    days: float
    source: str | None  # only sessions of this source (``source:cli`` after the days)
    ids: list[str]
    listing: str
    warnings: list[str]


@dataclass
class DaysRefused(Message):
    """A number of days the prune could not take: asked again with the draft."""

    draft: str
    error: str


class SessionPrune(WorkbenchScreen):
    """P on the Sessions screen: the prune of old ended sessions."""

    BINDINGS = [Binding("P", "prune", "Prune", key_display="P", show=False)]

    def action_prune(self) -> None:
        self._ask_days(DEFAULT_DAYS)

    def _ask_days(self, draft: str, refused: str = "") -> None:
        def answered(text: str | None) -> None:
            if text is not None:
                self._look_prune(text)

        question = "Prune the ended sessions started more than how many days ago (of which source)?"
        self.ask(LineDialog(question, draft, DAYS_HINT, error=refused), answered)

    @on(DaysRefused)
    def _days_refused(self, refusal: DaysRefused) -> None:
        self._ask_days(refusal.draft, refusal.error)

    @work(thread=True, exit_on_error=False, group="session-action")
    def _look_prune(self, text: str) -> None:
        try:
            count, source = prune_terms(text)
        except ValueError as exc:
            self.post_result(DaysRefused(text, f"{exc}."))
            return
        archive = self.home.archive
        with self.archive_read():
            ids = archive.prunable(count, source)
            if not ids:
                self.report(f"No ended session{from_source(source)} is older than {days(count)}; nothing to prune.")
                return
            warnings = archive.prune_warnings(count, source, ids)
            self.post_result(PruneLooked(count, source, ids, archive.prune_listing(ids), warnings))

    @on(PruneLooked)
    def _prune_looked(self, looked: PruneLooked) -> None:
        many = len(looked.ids)
        sessions = f"{many:,} ended session{'s' * (many != 1)}{from_source(looked.source)}"
        warned = "".join(f"{warning} " for warning in looked.warnings)
        self.confirm(
            f"Prune {sessions}?",
            f"It deletes the {sessions} started more than {days(looked.days)} ago, with their messages: "
            f"{looked.listing}. Their child sessions stay, as roots. {warned}This cannot be undone: the "
            "Timeline keeps only a row saying so.",
            lambda: self._prune(looked),
        )

    @work(thread=True, exit_on_error=False, group="session-action")
    def _prune(self, looked: PruneLooked) -> None:
        try:
            count = self.home.archive.prune(looked.days, looked.source, actor="user", among=looked.ids)
        except WorkbenchError as exc:
            self.report(exc.in_app, error=True)
            return
        said = f"Pruned {count:,} session{'s' * (count != 1)}."
        if count < len(looked.ids):  # (resumed, deleted or pruned by another process since the question)
            left = len(looked.ids) - count
            said += f" {left:,} of those asked about had been resumed or deleted meanwhile."
        self.report(said)
