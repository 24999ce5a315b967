"""The Doctor dialog: the checks `workbench doctor` runs, on the home the TUI has open, read-only.

Health was a CLI matter only: a user in the TUI had to leave it to learn why memory could not be
written or an index wanted merging. The report is the CLI's (``engine.doctor.render``); repairs
stay with `workbench doctor --fix`, which the report names where one applies.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Static

from engine.doctor import render, run_doctor
from engine.errors import WorkbenchError
from engine.home import Home
from widgets.hanging_text import HangingText
from widgets.literal import assemble

from ..settings import drafts_dir
from .dialogs import Dialog

CHECKING = "Checking the home as `workbench doctor` does…"


@dataclass
class Checked(Message):
    report: str


class DoctorDialog(Dialog[None]):
    """The doctor's report, scrollable; escape or q closes it."""

    BINDINGS = [Binding("escape,q", "dismiss", "Close")]

    def __init__(self, home: Home):
        super().__init__()
        self.home = home

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog dialog-wide help"):
            yield Static(assemble(("Doctor", "bold"), ("   esc closes", "$text-muted")), classes="dialog-title")
            with VerticalScroll():
                yield HangingText(CHECKING, id="doctor-report")

    def on_mount(self) -> None:
        self.check()

    @work(thread=True, exit_on_error=False, group="doctor")
    def check(self) -> None:
        try:
            report = render(run_doctor(self.home, drafts=drafts_dir(self.app.settings_file)).to_dict())  # type: ignore[attr-defined]
        except WorkbenchError as exc:
            report = f"The checks could not run: {exc.in_app}"
        self.post_result(Checked(report))

    @on(Checked)
    def _checked(self, message: Checked) -> None:
        self.query_one("#doctor-report", HangingText).show(message.report)

    async def action_dismiss(self, result=None) -> None:
        self.dismiss(None)
