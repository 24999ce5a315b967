"""Literal text whose lines wrap with a hanging indent, for a dialog listing items one to a line."""

from __future__ import annotations

import re

from textual.content import Content
from textual.widgets import Static

from .literal import hanging


class HangingText(Static):
    """Literal text, a list's items one to a line, wrapped to the widget's width with a hanging indent
    (``hanging``, under the text after ``label`` where it matches); ``show`` replaces it. Its lines fit the
    width already: Textual is left none to fold again."""

    DEFAULT_CSS = "HangingText { text-wrap: nowrap; }"

    def __init__(self, text: str = "", label: re.Pattern[str] | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.text, self.label = text, label

    def show(self, text: str) -> None:
        self.text = text
        self.refresh(layout=True)

    def get_content_height(self, container, viewport, width: int) -> int:
        return len(hanging(self.text, width, self.label))

    def render(self) -> Content:
        return Content("\n").join(hanging(self.text, self.content_size.width or self.size.width, self.label))
