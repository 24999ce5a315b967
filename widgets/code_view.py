"""A read-only, highlighted view of a skill file: SKILL.md (YAML frontmatter + Markdown), YAML, scripts.

Highlighting is Pygments through ``textual.highlight`` (colours follow the theme). The
text is never parsed as markup, so a skill body with ``[bold]`` shows literally.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from textual.containers import VerticalScroll
from textual.content import Content
from textual.highlight import guess_language, highlight
from textual.widgets import Static

from engine.textsafety import flat_line

from .literal import WholeStatic
from .transcript import sanitize

EXTENSION_LANGUAGES = {
    ".md": "markdown",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
    ".py": "python",
    ".sh": "bash",
    ".toml": "toml",
    ".txt": "text",
}


def highlight_file(name: str, text: str) -> Content:
    """Highlight by file name; Markdown frontmatter (``---`` … ``---``) is highlighted as YAML."""
    text = sanitize(text)
    language = EXTENSION_LANGUAGES.get(PurePosixPath(name).suffix.lower()) or guess_language(text, name)
    if language == "markdown" and text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end > 0:  # split after the closing line, so every line of the file is shown as it is
            split = text.find("\n", end + 1)
            front, body = (text, "") if split < 0 else (text[:split], text[split + 1 :])
            return Content("\n").join([highlight(front, language="yaml"), highlight(body, language="markdown")])
    return highlight(text, language=language)


class CodeView(VerticalScroll, can_focus=True):
    """Shows one file; ``show(name, text)`` replaces it."""

    DEFAULT_CSS = """
    CodeView { background: $surface; border: round $primary 40%; padding: 0 1; }
    CodeView:focus { border: round $primary; }
    CodeView > Static { width: 1fr; }
    """

    def compose(self):
        yield WholeStatic("", id="code")

    def show(self, name: str, text: str, warning: str | None = None, title: str | None = None) -> None:
        """``warning``: one line under the file (why a SKILL.md does not parse), cut to the border; ``title``:
        what the border names in place of ``name`` (a path to it)."""
        self.border_title = Content(flat_line(title or name))  # a file name from the library is any text
        self.border_subtitle = Content.styled(f"⚠ {flat_line(warning)}", "$text-warning") if warning else None
        self.query_one("#code", Static).update(highlight_file(name, text))
        self.scroll_home(animate=False)

    def show_message(self, title: str, text: str) -> None:
        """A plain, literal message in place of a file (errors, empty states)."""
        self.border_title = Content(title)
        self.border_subtitle = None
        self.query_one("#code", Static).update(Content(text))
