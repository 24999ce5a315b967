"""Modal dialogs shared by the screens: confirm, read a text, one line of text, and edit-with-validation.

``EditDialog`` runs its ``submit`` callable (an engine call) in a thread worker. The
callable returns ``None`` when the write is done, an error message to show in place
(the draft stays), or a ``Conflict`` when another writer changed the entry meanwhile:
then the original, their version and the draft are all shown, and nothing is written
until the user chooses "Keep mine" (re-applied against their version) or "Take theirs".

While it is open, a dialog given ``recheck`` looks at the files again (in a worker)
whenever the engine or the file watcher reports a change, so "changed on disk since
you opened it" shows before the user saves, and the budget follows the store on disk.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TypeVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Button, Input, Static, TextArea

from engine import lock_waits
from engine.diffs import changed_lines
from engine.events import Event, MemoryChanged, PendingChanged, SkillChanged
from engine.kept_files import DRAFT, home_drafts
from engine.memory.budget import Budget
from engine.textsafety import clipped, path_lines
from widgets.gauge import CapacityGauge
from widgets.hanging_text import HangingText
from widgets.literal import WholeStatic, assemble, literal, visible
from widgets.symbol_editor import SymbolTextArea
from widgets.textual_fixes import DismissOnce

from ..crash import keep_text
from ..messages import ResultsFromWorkers
from ..settings import drafts_dir
from .toast import toast_room

Result = TypeVar("Result")


class Dialog(DismissOnce, ResultsFromWorkers, ModalScreen[Result]):
    """A modal that closes once (``DismissOnce``) and whose workers answer through ``post_result``."""

    def on_mount(self) -> None:
        """Textual runs this besides a subclass's own ``on_mount``. The information notices up as a dialog
        opens (the outcome of the action before, read by now: "Skill 'x' pinned.") go, so none covers its
        last rows at 80x24, and so does the whole text of a status line the screens below cut (a refused
        approval's advice covered the draft, the gauge and `over by` of the edit `e` opened next: the box
        says the refusal itself), that of a screen in another mode too (after `A` on Approvals, its refusals
        covered the question `D` asked on Sessions); other warnings and errors stay, as does what the
        dialog's own actions say."""
        for notification in list(self.app._notifications):
            if notification.severity == "information":
                self.app._unnotify(notification)
        for stack in self.app._screen_stacks.values():  # (every mode's screens: ``screen_stack`` is this mode's)
            for screen in stack:
                notice = getattr(screen, "status_notice", None)  # (``WorkbenchScreen``'s)
                if notice is not None and notice in self.app._notifications:
                    self.app._unnotify(notice)
                    screen.status_notice = None


@dataclass(frozen=True)
class Conflict:
    """The entry an edit was opened against changed: ``theirs`` is None if it was removed."""

    original: str
    theirs: str | None
    whole_file: bool = False  # a whole file is edited: what changed from original to theirs is shown, as diff lines


Outcome = None | str | Conflict
# Events after which an open editor looks at the files again.
DISK_EVENTS = (MemoryChanged, PendingChanged, SkillChanged)
ADVICE_EVERY = 0.2  # seconds: while keys keep coming, the budget and advice are worked out at most this often
# characters in one line past which the draft is not soft-wrapped: Textual's TextArea divides the whole line for
# each row it draws, 3-10 s a key for a 1 MB entry (one line of 15,000 rows) where unwrapped it is 0.4 s
WRAP_MAX = 20_000


@dataclass(frozen=True)
class DiskCheck:
    """What an open editor learns when the files change: a note to show (None: nothing that
    matters to this edit changed) and the budget against what is on disk now."""

    note: str | None
    budget: Callable[[str], Budget] | None = None
    theirs: tuple[str | None] | None = None  # what the edited entry is now, once another writer moved it


@dataclass
class DiskChecked(Message):
    check: DiskCheck


@dataclass
class SaveDone(Message):
    outcome: Outcome
    text: str  # the draft it was for
    cancelled: bool = False  # esc ended its wait for another process's lock: nothing was written


class ConfirmDialog(Dialog[bool]):
    """Yes / no; ``y`` confirms, ``n`` or Escape cancels. "No" has the focus, so a stray
    Enter never confirms a removal or a bulk decision."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str, detail: str = ""):
        super().__init__()
        self.question = question
        self.detail = detail

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield WholeStatic(literal(self.question, "bold"), classes="dialog-title")
            if self.detail:
                with VerticalScroll(classes="dialog-detail"):
                    yield HangingText(clipped(self.detail))  # (a wrapped item's lines hang under it)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Yes (y)", variant="error", id="yes")
                yield Button("No (n)", id="no")
                yield from self.more_buttons()

    def more_buttons(self) -> ComposeResult:
        """A subclass's further answers, after No."""
        yield from ()

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit_detail)  # (once the question's lines are laid out)

    def _fit_detail(self) -> None:
        """The detail is as tall as its text up to the rows the dialog has left in the terminal, where
        it scrolls: a short list leaves the dialog small, a long one never pushes the question or the
        buttons out of view, at any height (CSS cannot take the rest of an ``auto`` parent's maximum)."""
        found = self.query(".dialog-detail")
        if not found:
            return
        detail = found.first()
        dialog = detail.parent
        if not isinstance(dialog, Widget):
            return
        limit = dialog.styles.max_height
        tallest = int(limit.resolve(self.size, self.app.size)) if limit is not None else self.size.height
        others = sum(w.outer_size.height + w.styles.margin.height for w in dialog.children if w is not detail)
        room = tallest - dialog.styles.gutter.height - others - detail.styles.margin.height
        detail.styles.max_height = max(room, 3)

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(LATER if event.button.id == LATER else event.button.id == "yes")


class ReadDialog(Dialog[None]):
    """A text to read whole, scrolling where the terminal is short; escape or q closes it. A line's
    continuation hangs under the text after ``label`` where it matches (``hanging``)."""

    BINDINGS = [Binding("escape,q", "dismiss", "Close")]

    def __init__(self, heading: str, text: str, text_id: str = "read-text", label: re.Pattern[str] | None = None):
        super().__init__()
        self.heading = heading
        self.text = text
        self.text_id = text_id
        self.label = label

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog dialog-wide help"):
            yield WholeStatic(
                assemble((self.heading, "bold"), ("   esc closes", "$text-muted")), classes="dialog-title"
            )
            with VerticalScroll():
                yield HangingText(self.text, self.label, id=self.text_id)

    def show(self, text: str) -> None:
        """Read ``text`` instead (a worker's answer)."""
        self.text = text
        self.query_one(f"#{self.text_id}", HangingText).show(text)

    async def action_dismiss(self, result=None) -> None:
        self.dismiss(None)


LATER = "later"  # ``QuitLaterDialog``'s third answer


class QuitLaterDialog(ConfirmDialog):
    """Quit now (y), stay (n), or quit once what still runs is done (w, answers ``LATER``): nobody
    has to watch for the end of what they chose to wait for."""

    BINDINGS = [Binding("w", "answer('later')", "Quit when done")]

    def more_buttons(self) -> ComposeResult:
        yield Button("Quit when done (w)", id=LATER)


class LineInput(Input):
    """The line a dialog asks for: a pasted control character is dropped, not shown as a symbol (a
    title keeps none, and a symbol would be saved as text)."""

    drops_controls = True


class LineDialog(Dialog[str | None]):
    """One line of text (a title); ``enter`` gives it as typed, for the engine to judge, ``esc`` None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, question: str, value: str = "", hint: str = "enter: save · esc: cancel", error: str = ""):
        super().__init__()
        self.question, self.value, self.hint, self.error = question, value, hint, error

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield WholeStatic(literal(self.question, "bold"), classes="dialog-title")
            yield LineInput(self.value, id="line")
            yield WholeStatic(literal(self.error), id="line-error", classes="error")
            yield Static(literal(self.hint, "$text-muted"))

    def on_mount(self) -> None:
        self.query_one("#line-error").display = bool(self.error)

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        """The refusal was about the text it refused: an edit makes it stale."""
        if self.error and event.value != self.value:
            self.query_one("#line-error").display = False

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class EditDialog(Dialog[bool]):
    """Edit a text and save it through ``submit``; dismisses True once saved."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Save"),  # not priority: keys typed just before are in the draft
        Binding("escape", "cancel", "Cancel"),
        # (a modal takes no app binding that is not a priority one: ctrl+q reaches the app through here)
        Binding("ctrl+q", "quit", "Quit", show=False),
        # keys the draft does not take: on the conflict's buttons they scroll what changed
        *(
            Binding(key, f"scroll_conflict('{action}')", show=False)
            for key, action in (
                ("up", "scroll_up"),
                ("down", "scroll_down"),
                ("pageup", "page_up"),
                ("pagedown", "page_down"),
                ("home", "scroll_home"),
                ("end", "scroll_end"),
            )
        ),
    ]

    def __init__(
        self,
        title: str,
        text: str,
        submit: Callable[[str], Outcome],
        *,
        rebase: Callable[[Conflict], None] | None = None,
        hint: str = "",
        budget: Callable[[str], Budget] | None = None,
        recheck: Callable[[], DiskCheck] | None = None,
        verb: str = "Save",
        what: str = "this entry",
    ):
        super().__init__()
        self.title_text = title
        self.what = what  # what is edited, as a conflict names it
        self.verb = verb  # what ctrl+s does, on its button ("Approve" where saving approves)
        self.original = text
        self.submit = submit
        self.rebase = rebase
        self.hint = hint
        if visible(text) != text:
            self.hint = (hint + " " if hint else "") + (
                "This text holds control or invisible characters, shown as symbols like ␛ or <U+200B>: each "
                "one left in place is saved as the character it stands for, and an edit that touches one drops "
                "that character (backspace deletes a symbol whole; a symbol you type is saved as typed)."
            )
        longest = max(map(len, text.split("\n")))
        self.wrap = longest <= WRAP_MAX
        if not self.wrap:
            self.hint = (self.hint + " " if self.hint else "") + (
                f"Its longest line is {longest:,} characters, so lines are not wrapped (wrapped, each key took "
                "seconds): home, end and the arrows move along it."
            )
        self.budget = budget
        self.recheck = recheck  # worker thread: what changed on disk since the dialog opened
        self.disk_note: str | None = None
        self.conflict: Conflict | None = None
        self.saving = False  # a save is running: a second ctrl+s must not apply the draft twice
        self.cancel_wait = threading.Event()  # set by esc: the running save's wait for a lock ends (lock_waits)
        self.refused: str | None = None  # the draft the error shown refused
        self.waiting: str | None = None  # the lock wait the error line says (``show_wait``)
        self.error_said = ""  # what the error line says now
        self.advice_timer: Timer | None = None  # running: a change now only marks the advice stale
        self.advice_stale = False  # the draft changed since the gauge and advice were worked out

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog dialog-wide"):
            yield WholeStatic(literal(self.title_text, "bold"), classes="dialog-title")
            if self.hint:  # a long one scrolls: unbounded, it pushed the draft out of view at 60x20
                with VerticalScroll(id="hint-box"):
                    yield WholeStatic(literal(self.hint, "$text-muted"), classes="hint")
            yield WholeStatic("", id="on-disk", classes="warning")
            # above the draft: below it, the draft's least height pushed it out of view at 60x20 (a refused
            # save then looked like a key that did nothing); a long refusal scrolls (tab, arrows)
            with VerticalScroll(id="error-box"):
                yield WholeStatic("", id="error", classes="error")
            yield SymbolTextArea(text=self.original, id="draft", soft_wrap=self.wrap, show_line_numbers=False)
            if self.budget is not None:
                yield CapacityGauge(id="draft-budget")
                yield WholeStatic("", id="draft-advice", classes="warning")
            with VerticalScroll(id="conflict", can_focus=False):  # tab goes from the draft to Keep mine
                yield WholeStatic("", id="conflict-text")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.verb} (ctrl+s)", variant="primary", id="save")
                yield Button("Keep mine", variant="warning", id="keep-mine")
                yield Button("Take theirs", id="take-theirs")
                yield Button("Cancel (esc)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#conflict").display = False
        self.query_one("#keep-mine").display = False
        self.query_one("#take-theirs").display = False
        self.show_error("")
        self.query_one(TextArea).focus()
        self._show_budget()
        if self.recheck is not None:
            self.app.engine_events.subscribe(self, self._engine_event)

    def _engine_event(self, event: Event) -> None:
        if isinstance(event, DISK_EVENTS):
            self._recheck()

    @work(thread=True, exclusive=True, group="edit-recheck", exit_on_error=False)
    def _recheck(self) -> None:
        self.post_result(DiskChecked(self.recheck()))

    @on(DiskChecked)
    def _show_disk(self, message: DiskChecked) -> None:
        check = message.check
        if not self.is_attached:  # closed meanwhile
            return
        if check.budget is not None:
            self.budget = check.budget
            self._show_budget()
        if self.conflict is not None and check.theirs is not None and check.theirs[0] != self.conflict.theirs:
            self.conflict = replace(self.conflict, theirs=check.theirs[0])  # moved again while shown
            self._show_conflict(self.conflict)
        self.disk_note = check.note
        self.query_one("#on-disk", Static).update(literal(check.note or ""))
        self._show_disk_note()

    @on(TextArea.Changed, "#draft")
    def _draft_changed(self) -> None:
        if self.refused is not None and self.draft != self.refused:
            self.refused = None
            self.show_error("")  # a refusal was about the text it refused: an edit makes it stale
        if self.budget is None:
            return
        if self.advice_timer is None:  # the first change of a burst is shown at once
            self._show_budget()
            self.advice_timer = self.set_timer(ADVICE_EVERY, self._advice_due)
        else:  # the rest at most every ADVICE_EVERY: a 3,000-key paste took 40 s scoring each draft
            self.advice_stale = True

    def _advice_due(self) -> None:
        self.advice_timer = None
        if self.advice_stale:
            self.advice_stale = False
            self._draft_changed()

    def _burst_over(self) -> None:
        """The advice for the draft now, and the next change's at once."""
        if self.advice_timer is not None:
            self.advice_timer.stop()
            self.advice_timer = None
        if self.advice_stale:
            self.advice_stale = False
            self._show_budget()

    def _show_budget(self) -> None:
        """The gauge and advice for the draft as it is now (the budget scores it against every entry)."""
        if self.budget is None:
            return
        budget = self.budget(self.draft)
        gauge = self.query_one("#draft-budget", CapacityGauge)
        gauge.used, gauge.limit, gauge.ghost = budget.chars, budget.limit, budget.pending
        advice = self.query_one("#draft-advice", Static)
        lines = budget.advice()
        lines = [line for line in lines if line != self.error_said]  # (a refusal of the same words says it)
        advice.update(literal("\n".join(lines)))
        advice.display = bool(lines)

    @property
    def draft(self) -> str:
        """The text as saving would write it: each symbol left whole as the character it stands for."""
        return self.query_one(SymbolTextArea).real

    @property
    def editing(self) -> bool:
        """Whether the editor is there: keys can reach the dialog before it is composed or after it closed."""
        return bool(self.query(TextArea))

    def action_save(self) -> None:
        if self.conflict is None and self.editing:
            self._burst_over()  # (the advice beside a save is the saved text's)
            self._run(self.draft)

    def action_cancel(self) -> None:
        """Escape or Cancel: a changed draft is only thrown away once the user says so; a save waiting for
        another process's lock stops waiting (nothing is written, the draft stays), and one that holds the
        lock already is not stopped: what happened is said when it is over, never pretended."""
        if not self.editing:
            return
        if self.saving:  # only a wait for the lock is cancelled: a write that holds it runs to its end
            self.cancel_wait.set()
            self.show_error("Cancelling: the save stops if it is still waiting for the file's lock…")
            return
        if self.draft == self.original:
            self.dismiss(False)
            return

        def discard(yes: bool | None) -> None:  # returns nothing: Textual awaits a returned dismiss and fails
            if yes:
                self.dismiss(False)

        self.app.push_screen(ConfirmDialog("Discard your changes?", "The draft is lost; nothing is saved."), discard)

    async def action_quit(self) -> None:
        """ctrl+q: the app's quit (which asks before cancelling a save that waits for a lock); a changed
        draft that no save holds is only thrown away once the user says so."""
        if self.saving or not self.editing or self.draft == self.original:
            await self.app.run_action("quit")
            return

        def quit_anyway(yes: bool | None) -> None:
            if yes:
                self.app.call_later(self.app.run_action, "quit")

        self.app.push_screen(ConfirmDialog("Quit and lose your draft?", "Nothing of it is saved."), quit_anyway)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.conflict is not None if action == "scroll_conflict" else True

    def action_scroll_conflict(self, how: str) -> None:
        """What changed is often taller than its room (5 lines at 80x24) and its box takes no focus (so tab,
        then enter, keeps mine): the keys the buttons leave unused scroll it."""
        getattr(self.query_one("#conflict", VerticalScroll), f"action_{how}")()

    @on(Button.Pressed, "#save")
    def _save(self) -> None:
        self.action_save()

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.action_cancel()

    @on(Button.Pressed, "#keep-mine")
    def _keep_mine(self) -> None:
        conflict, self.conflict = self.conflict, None
        if conflict is not None and self.rebase is not None:
            self.rebase(conflict)
        self._show_conflict(None)
        self._run(self.draft)

    @on(Button.Pressed, "#take-theirs")
    def _take_theirs(self) -> None:
        """Theirs stays, and a draft unlike both versions is kept in a file a notice names (it was dropped
        with no way back); one that cannot be written keeps the dialog open, saying so."""
        theirs = self.conflict.theirs if self.conflict is not None else None
        if self.draft not in (self.original, theirs):
            try:
                folder = home_drafts(drafts_dir(self.app.settings_file), self.app.home.root)
                kept = keep_text(self.draft, folder, DRAFT)
            except OSError as exc:
                self.show_error(
                    f"Your draft could not be kept in a file ({exc.strerror or exc}): copy it from above "
                    "before taking theirs, or keep mine."
                )
                return
            where = "\n".join(path_lines(visible(str(kept)), toast_room(self.app.size.width)))
            self.app.notify(
                f"Took theirs. Your draft is kept in\n{where}", title="Draft kept", markup=False, timeout=20
            )
        self.dismiss(False)

    def _run(self, text: str) -> None:
        if not self.saving:
            self.refused = None
            self.cancel_wait = threading.Event()  # (an esc of an earlier save does not stop this one)
            self.show_error("")  # (what the last try met, a cancelled wait say, is not this one's)
            self._saving(True)
            self._submit(text, self.cancel_wait)

    def _saving(self, saving: bool) -> None:
        """While a save runs (it may wait for another process's lock), the draft it saves cannot change:
        keys typed meanwhile were taken in and then lost when the saved dialog closed."""
        self.saving = saving
        self.query_one(SymbolTextArea).read_only = saving

    @work(thread=True, group="edit-submit", exit_on_error=False)
    def _submit(self, text: str, cancel: threading.Event) -> None:
        try:
            with lock_waits.cancellable(cancel):
                outcome = self.submit(text)
        except lock_waits.WaitCancelled as exc:
            self.post_message(SaveDone(f"Not saved. {exc.in_app} Your draft is still here.", text, cancelled=True))
            return
        except Exception as exc:  # an engine refusal must show in place, never kill the app
            outcome = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        self.post_message(SaveDone(outcome, text))

    @on(SaveDone)
    def _done(self, message: SaveDone) -> None:
        outcome = message.outcome
        self._saving(False)
        if message.cancelled:
            self.show_error(str(outcome))  # (in place, as the wait was: a notice covered the draft)
            self.query_one(TextArea).focus()
            return
        if outcome is None:
            self.dismiss(True)
        elif isinstance(outcome, Conflict):
            self.conflict = outcome
            self._show_conflict(outcome)
        else:
            self.refused = message.text
            self.show_error(outcome)
            self._show_budget()

    def show_wait(self, text: str | None) -> None:
        """A lock this dialog's save waits for, said in its error line (``None``: the wait is over,
        and the line goes unless it says something else by now)."""
        if not self.is_attached or (text is None and self.waiting is None):
            return
        self.show_error(text or "")
        self.waiting = text

    def show_error(self, message: str) -> None:
        self.waiting = None
        self.error_said = message
        error = self.query_one("#error", Static)
        error.update(literal(message))
        error.display = self.query_one("#error-box").display = bool(message)
        for hint in self.query("#hint-box"):  # read already: its rows go to what the save met, or what changed
            hint.display = not message and self.conflict is None
        self._show_disk_note()

    def _show_disk_note(self) -> None:
        """What changed on disk, unless a conflict shown says it, and more, or the error line just above
        says the same (a proposal decided elsewhere: both said it, one under the other)."""
        note = self.disk_note
        self.query_one("#on-disk").display = bool(note) and self.conflict is None and note != self.error_said

    def _show_conflict(self, conflict: Conflict | None) -> None:
        shown = conflict is not None
        for selector in ("#conflict", "#keep-mine", "#take-theirs"):
            self.query_one(selector).display = shown
        self.query_one("#error-box").can_focus = not shown  # its note is short; tab goes on to Keep mine
        self.query_one("#save").display = not shown
        if conflict is None:
            self.show_error("")
            self.query_one(TextArea).focus()  # the buttons that had it are gone: typing goes on in the draft
            return
        self.show_error(
            "Not saved: another writer removed this entry while you were editing. Keep mine (your draft is "
            "added back as an entry) or take theirs (it stays removed). Tab reaches the buttons; there, "
            "arrows scroll what changed."
            if conflict.theirs is None
            else f"Not saved: another writer changed {self.what} while you were editing. "
            "Keep mine (your draft replaces theirs), take theirs, or merge by hand, then keep mine. "
            "Tab reaches the buttons; there, arrows scroll what changed."
        )
        theirs = conflict.theirs if conflict.theirs is not None else "(removed)"
        parts = (  # a whole file: what changed in it, not both versions whole
            [
                ("what changed on disk (- as you opened it, + now):\n", "bold $mark-changed"),
                ("\n".join(changed_lines(conflict.original, theirs)) + "\n\n", ""),
            ]
            if conflict.whole_file
            else [
                ("theirs (now on disk):\n", "bold $mark-changed"),
                (theirs + "\n\n", ""),
                ("original (what you opened):\n", "bold $text-muted"),
                (conflict.original + "\n\n", ""),
            ]
        )
        self.query_one("#conflict-text", Static).update(
            assemble(*parts, ("yours (the draft above):\n", "bold $mark-added"), (self.draft, ""))
        )
