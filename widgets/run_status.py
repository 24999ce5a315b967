"""The Run bar's status: what the agent is doing over the session it talks in."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from .literal import literal, tail, wrapped

LINES = 3  # the Run bar's height


class RunStatus(Static):
    """The state over the session, fitted to the bar's lines: the session keeps the last line, the state
    the lines above, ending in … where it needs more (a failed turn's reason: the transcript's last line
    says it whole). An id never wraps into pieces: where the bar is narrower than it (60 columns) it
    shows its distinct tail, in the state too (`ending session …`); the transcript's title names the
    session whole."""

    DEFAULT_CSS = f"RunStatus {{ height: {LINES}; }}"

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._state: tuple[str, str] = ("", "")
        self._session: str | None = None

    def show(self, state: str, style: str, session: str | None) -> None:
        self._state, self._session = (state, style), session
        self.refresh()

    def render(self) -> Content:
        width = max(1, self.content_size.width)
        text, style = self._state
        state = " ".join(tail(word, width) for word in text.split(" "))  # (cells of the word as shown)
        lines = wrapped(state, width, LINES - 1, style)
        if self._session is None:
            lines += wrapped("new session on first message", width, LINES - len(lines))
        else:
            lines.append(literal(tail(self._session, width)))
        return Content("\n").join(lines)
