"""The Run bar's status: what the agent is doing over the session it talks in."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from .literal import literal, tail


class RunStatus(Static):
    """The state over the session id. The id keeps to one line: where the bar is narrow (60 columns)
    it shows its distinct tail, never pieces of it wrapped (the transcript's title names it whole)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._state: tuple[str, str] = ("", "")
        self._session: str | None = None

    def show(self, state: str, style: str, session: str | None) -> None:
        self._state, self._session = (state, style), session
        self.refresh(layout=True)

    def render(self) -> Content:
        width = self.content_size.width
        session = "new session on first message" if self._session is None else tail(self._session, max(1, width))
        return Content("\n").join([literal(*self._state), literal(session)])
