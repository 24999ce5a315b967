"""The Memory screen's guided drift repair: choose a repair, edit an entry, preview, write.

``DriftRepair`` belongs to the Memory screen: it keeps the drift banner up to date (a
worker diagnoses the live file whenever the screen shows it), opens the flow on ``r``
or a click on the banner, and takes over an edit or a removal the store would refuse
because the file drifted. The flow is ``RepairDialog`` (the causes, the repairs on
offer and every entry: enter previews a repair, ``e`` edits an entry, where a line
holding only ``§`` splits it, ``d`` removes it), then ``RepairPreview`` (the resulting
file with the changed lines marked; ``y`` writes, ``n`` goes back to the list, the cursor on the option
the preview came from). Every rule is the engine's
(``engine.memory.repair``): the write re-reads the file under its lock and is refused
if it changed since the preview, and it is journaled, so ``u`` undoes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Button, OptionList, Static
from textual.widgets.option_list import Option, OptionDoesNotExist

from engine.diffs import line_diff
from engine.errors import WorkbenchError
from engine.memory import TARGETS, repair
from engine.memory.format import LISTED, far_over
from engine.memory.ops import Refusal
from engine.textsafety import flat_line
from widgets.diff_view import diff_content
from widgets.drift_banner import DriftBanner
from widgets.literal import WholeStatic, assemble, literal

from .dialogs import ConfirmDialog, Dialog, EditDialog, Outcome

if TYPE_CHECKING:
    from .memory import MemoryScreen

EDIT_HINT = (
    "A line holding only § splits the entry in two; deleting text trims it. Nothing is written before the "
    "preview; text that was not in the file is checked like any edit."
)


@dataclass
class DriftExamined(Message):
    """A drift check's diagnosis of every store, for the Memory screen to hand to ``DriftRepair.show``."""

    target: str
    found: dict[str, repair.Diagnosis | None]


@dataclass(frozen=True)
class Choice:
    """What the repair dialog was closed with: preview ``repair``, or edit the entry ``piece``; ``option``
    is the id of the option it was chosen on (Back from the preview puts the cursor there again)."""

    repair: repair.Repair | None = None
    piece: repair.Piece | None = None
    option: str | None = None


class RepairDialog(Dialog[Choice | None]):
    """The causes, the repairs on offer, then every entry of the file (pieces between § lines)."""

    BINDINGS = [
        Binding("e", "edit", "Edit entry"),
        Binding("d", "remove", "Remove entry"),
        Binding("escape", "close", "Close"),
    ]

    def __init__(self, diagnosis: repair.Diagnosis, piece: int | None = None, option: str | None = None):
        super().__init__()
        self.diagnosis = diagnosis
        self.start = piece
        self.option = option  # the option to put the cursor on (the one a preview was opened from)

    def compose(self) -> ComposeResult:
        found = self.diagnosis
        with Vertical(classes="dialog dialog-wide", id="repair-dialog"):
            yield Static(literal(f"Repair {found.file_name}", "bold"), classes="dialog-title")
            with VerticalScroll(classes="dialog-detail"):
                yield WholeStatic(
                    assemble((found.headline + "\n", "bold"), *[("• " + r.message + "\n", "") for r in found.reasons]),
                    id="repair-reasons",
                )
            yield OptionList(*self._options(), id="repair-options")
            hint = (
                f"enter: preview · esc: close · the entries' repairs wait for {found.waits_for}"
                if found.waits_for
                else "enter: preview, or edit an entry · e: edit · d: remove · esc: close"
            )
            yield Static(literal(hint, "$text-muted"), classes="hint", id="repair-hint")

    def _options(self) -> list[Option]:
        found = self.diagnosis
        options = [
            Option(assemble(("▶ ", "bold $accent"), fix.label), id=f"fix-{i}") for i, fix in enumerate(found.repairs)
        ]
        flagged = found.flagged
        shown = found.pieces[: LISTED if far_over(len(found.text), found.limit) else len(found.pieces)]
        for piece in shown:
            mark = ("⚠ ", "bold $warning") if piece.number in flagged else ("  ", "")
            options.append(
                Option(
                    assemble(
                        mark,
                        (f"entry {piece.number} · line {piece.line} · {piece.chars:,} chars  ", "$text-muted"),
                        flat_line(piece.entry or "(empty)", 60),
                    ),
                    id=f"entry-{piece.number}",
                )
            )
        if len(shown) < len(found.pieces):  # (a file far over its limit: its first entries, as the columns list)
            more = len(found.pieces) - len(shown)
            options.append(Option(literal(f"  ⋯ {more:,} more entries not listed", "$text-muted"), disabled=True))
        return options

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.focus()
        at = self._index_of(self.option)
        if at is not None:
            options.highlighted = at
        elif self.start is not None:
            options.highlighted = len(self.diagnosis.repairs) + self.start - 1
        elif options.option_count:
            options.highlighted = 0

    def _index_of(self, option: str | None) -> int | None:
        if option is None:
            return None
        try:
            return self.query_one(OptionList).get_option_index(option)
        except OptionDoesNotExist:
            return None

    def _highlighted_id(self) -> str | None:
        options = self.query_one(OptionList)
        return None if options.highlighted is None else options.get_option_at_index(options.highlighted).id

    def _highlighted(self) -> tuple[repair.Repair | None, repair.Piece | None]:
        options = self.query_one(OptionList)
        if options.highlighted is None:
            return None, None
        option_id = options.get_option_at_index(options.highlighted).id or ""
        kind, _, number = option_id.partition("-")
        if kind == "fix":
            fix = self.diagnosis.repairs[int(number)]
            return fix, self.diagnosis.pieces[fix.piece - 1] if fix.piece else None
        return None, self.diagnosis.pieces[int(number) - 1]

    @on(OptionList.OptionSelected)
    def _chosen(self) -> None:
        fix, piece = self._highlighted()
        if fix is not None:
            self.dismiss(Choice(repair=fix, option=self._highlighted_id()))
        elif piece is not None and not self._waits():
            self.dismiss(Choice(piece=piece, option=self._highlighted_id()))

    def action_edit(self) -> None:
        _, piece = self._highlighted()
        if piece is not None and not self._waits():
            self.dismiss(Choice(piece=piece, option=self._highlighted_id()))

    def action_remove(self) -> None:
        _, piece = self._highlighted()
        if piece is not None and not self._waits():
            self.dismiss(Choice(repair=repair.remove(piece), option=self._highlighted_id()))

    def _waits(self) -> bool:
        """An entry's repair waits (the engine's rule, ``Diagnosis.entries_wait``): say why in the hint."""
        wait = self.diagnosis.entries_wait
        if wait:
            self.query_one("#repair-hint", Static).update(literal(wait, "bold $warning"))
        return bool(wait)

    def action_close(self) -> None:
        self.dismiss(None)


class RepairPreview(ConfirmDialog):
    """The whole resulting file, changed lines marked, and what would still be wrong; ``y`` writes it."""

    DEFAULT_CSS = """
    #repair-after { height: 1fr; border: round $primary 30%; }
    #repair-after:focus { border: round $primary; }
    """

    def __init__(self, diagnosis: repair.Diagnosis, fix: repair.Repair, after: str):
        super().__init__(f"{fix.label}: write this {diagnosis.file_name}?")
        self.diagnosis, self.fix, self.after = diagnosis, fix, after
        # a CR shown as ␍ (splitlines would hide it), so normalised line endings show as changed lines
        self.lines = line_diff(_carriage_returns_shown(diagnosis.text), _carriage_returns_shown(after))

    def on_mount(self) -> None:
        """The first changed line in view (a long file's change may be far down)."""
        first = next((i for i, (kind, _) in enumerate(self.lines) if kind != " "), 0)
        self.query_one("#repair-after", VerticalScroll).scroll_to(y=max(0, first - 2), animate=False)

    def compose(self) -> ComposeResult:
        lines = self.lines
        left = repair.left_after(self.diagnosis.target, self.after, self.diagnosis.limit)
        still = (
            "Still to repair after this: " + "; ".join(left) + "."
            if left
            else f"{self.diagnosis.file_name} round-trips and fits its limit after this."
        )
        with Vertical(classes="dialog dialog-wide", id="repair-preview"):
            yield WholeStatic(literal(self.question, "bold"), classes="dialog-title")
            yield Static(literal("The resulting file (+ added, - removed lines):", "$text-muted"))
            with VerticalScroll(id="repair-after"):
                yield WholeStatic(diff_content(lines[:PREVIEW_LINES], context=PREVIEW_LINES), id="repair-diff")
                if len(lines) > PREVIEW_LINES:  # (a file far over its limit: 100,000 lines did not draw)
                    more = len(lines) - PREVIEW_LINES
                    yield Static(literal(f"⋯ {more:,} more lines not shown", "$text-muted"), id="repair-more")
            undo = (
                repair.kept_note(self.diagnosis.file_name)
                if self.diagnosis.data is not None
                else "Journaled; u on the Memory screen undoes it."
            )
            yield Static(literal(f"{still} {undo}", "$text-muted"), id="repair-still")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Write (y)", variant="warning", id="yes")
                yield Button("Back (n)", id="no")


class DriftRepair:
    """The Memory screen's drift banner and repair flow (one per screen)."""

    def __init__(self, screen: MemoryScreen):
        self.screen = screen
        self.diagnosis: repair.Diagnosis | None = None

    @property
    def applies(self) -> bool:
        """The store shown needs a repair (its banner is up): r opens the repair, and the footer says so."""
        return self.diagnosis is not None and self.diagnosis.needs_repair

    # -- the banner ------------------------------------------------------------------
    def check(self, target: str) -> None:
        """Diagnose the live files in a worker, then show the banner for ``target`` (or name another
        store that needs a repair, which would otherwise go unseen until ``t``)."""
        self.screen.run_worker(
            lambda: self.examine(target), thread=True, exclusive=True, group="memory-drift", exit_on_error=False
        )

    def examine(self, target: str) -> None:
        """Worker thread: ``check``'s diagnosis, posted to the screen."""
        found: dict[str, repair.Diagnosis | None] = {}
        for name in TARGETS:
            try:
                found[name] = repair.examine(self.screen.home.memory, name)
            except (Refusal, WorkbenchError):  # unreadable, or a bad limit: the screen and doctor say so
                found[name] = None
        self.screen.post_result(DriftExamined(target, found))

    def show(self, target: str, found: dict[str, repair.Diagnosis | None]) -> None:
        """UI thread (the screen's ``DriftExamined`` handler): the banner for what ``examine`` found."""
        if target != self.screen.target:
            return
        self.diagnosis = mine = found[target]
        banner = self.screen.query_one(DriftBanner)
        if mine is not None and mine.needs_repair:
            banner.show(mine.title, [r.short for r in mine.reasons])
            return
        other = next((d for d in found.values() if d is not None and d.needs_repair), None)
        if other is None:
            banner.show("", [])
        else:
            banner.show(other.title, ["t shows it, then r repairs it"])

    # -- the flow --------------------------------------------------------------------
    def takes(self, entry: str, *, remove: bool) -> bool:
        """An edit or removal of ``entry`` the store would refuse because the file drifted: start the
        repair flow on that entry instead (True), or leave it to the usual path (False)."""
        found = self.diagnosis
        if found is None or not found.drifted:
            return False
        piece = found.piece_of(entry)
        if found.crlf or piece is None:
            self.open()
        elif remove:
            self.preview(found, repair.remove(piece))
        else:
            self.edit(found, piece)
        return True

    def open(self, piece: int | None = None, option: str | None = None) -> None:
        found = self.diagnosis
        if found is None or not found.needs_repair:
            self.screen.show_status(
                found.headline
                if found
                else "Nothing to repair here: the file could not be examined (see the status line)."
            )
            return
        self.screen.app.push_screen(RepairDialog(found, piece, option), lambda choice: self._chosen(found, choice))

    def _chosen(self, found: repair.Diagnosis, choice: Choice | None) -> None:
        if choice is None:
            return
        if choice.repair is not None:
            self.preview(found, choice.repair, choice.option)
        elif choice.piece is not None:
            self.edit(found, choice.piece, choice.option)

    def edit(self, found: repair.Diagnosis, piece: repair.Piece, option: str | None = None) -> None:
        edited: list[repair.Repair] = []

        def submit(text: str) -> Outcome:  # worker thread: checks only, nothing is written here
            fix = repair.rewrite(piece, text)
            try:
                found.result(fix)
            except Refusal as refusal:
                return str(refusal.result["error"])
            edited.append(fix)
            return None

        dialog = EditDialog(f"Edit entry {piece.number} of {found.file_name}", piece.entry, submit, hint=EDIT_HINT)
        self.screen.app.push_screen(
            dialog, lambda saved: self.preview(found, edited[-1], option) if saved and edited else None
        )

    def preview(self, found: repair.Diagnosis, fix: repair.Repair, option: str | None = None) -> None:
        """Preview ``fix``; Back reopens the list on ``option`` (the one it was chosen on), else on its entry."""
        try:
            after = found.result(fix)
        except Refusal as refusal:
            self.screen.show_status(str(refusal.result["error"]), error=True)
            return
        self.screen.app.push_screen(
            RepairPreview(found, fix, after),
            lambda yes: self._write(found, fix) if yes else self.open(fix.piece, option),
        )

    def _write(self, found: repair.Diagnosis, fix: repair.Repair) -> None:
        def write() -> None:
            try:
                with self.screen.workbench.user_write():
                    result = repair.apply(self.screen.home.memory, found.target, fix, found.sha)
            except WorkbenchError as exc:  # e.g. the journal's database is busy: nothing was written
                result = {"success": False, "error": exc.in_app}
            failed = result.get("success") is False
            undo = "" if result.get("kept") else " u undoes it."  # (else its message says what undo does)
            message = str(result.get("error")) if failed else f"{result['message']}{undo}"
            self.screen.report(message, error=failed)

        self.screen.run_worker(write, thread=True, group="memory-write", exit_on_error=False)


PREVIEW_LINES = 2_000  # lines of the resulting file a repair preview draws


def _carriage_returns_shown(text: str) -> str:
    """Each CR as ``␍`` at the end of its line (a lone CR ends a line too, as Hermes reads it)."""
    return re.sub(r"\r\n?", "␍\n", text)
