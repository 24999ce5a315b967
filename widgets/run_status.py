"""The Run bar's status: what the agent is doing over the session it talks in."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from .literal import literal, tail


class RunStatus(Static):
    """The state over the session id. An id never wraps into pieces: where the bar is narrower than it
    (60 columns) it shows its distinct tail on one line, in the state too (`ending session …`); the
    transcript's title names the session whole."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._state: tuple[str, str] = ("", "")
        self._session: str | None = None

    def show(self, state: str, style: str, session: str | None) -> None:
        self._state, self._session = (state, style), session
        self.refresh(layout=True)

    def render(self) -> Content:
        width = max(1, self.content_size.width)
        text, style = self._state
        state = " ".join(word if len(word) <= width else tail(word, width) for word in text.split(" "))
        session = "new session on first message" if self._session is None else tail(self._session, width)
        return Content("\n").join([literal(state, style), literal(session)])
