"""The Doctor dialog: the checks `workbench doctor` runs, on the home the TUI has open, read-only.

Health was a CLI matter only: a user in the TUI had to leave it to learn why memory could not be
written or an index wanted merging. The report is the CLI's (``engine.doctor.render``); repairs
stay with `workbench doctor --fix`, which the report names where one applies.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import on, work
from textual.message import Message

from engine.doctor import LABEL, render, run_doctor
from engine.errors import WorkbenchError
from engine.home import Home

from ..settings import drafts_dir
from .dialogs import ReadDialog

CHECKING = "Checking the home as `workbench doctor` does…"


@dataclass
class Checked(Message):
    report: str


class DoctorDialog(ReadDialog):
    """The doctor's report, scrollable; escape or q closes it."""

    def __init__(self, home: Home):
        super().__init__("Doctor", CHECKING, text_id="doctor-report", label=LABEL)  # (as the CLI wraps it)
        self.home = home

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
        self.show(message.report)
