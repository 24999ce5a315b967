"""A text editor whose symbols for hidden characters stay tied to those characters.

Control and invisible characters are shown as symbols (``␛``, ``<U+200B>``; see
``engine.textsafety``), never drawn raw. An editor that showed symbols and saved its text
would write ``<U+200B>`` into the entry as text; one that turned symbol text back into
characters could not tell a symbol left in place from the same text typed, or a symbol cut
in half from the rest of an edit. So the document itself keeps where each symbol is,
through every edit, undo and redo: a symbol left whole is saved as its character, a
symbol an edit touches is gone with its character (backspace takes it whole), text typed
or pasted is saved as typed (a zero-width joiner typed, too), and hidden characters typed or
pasted in become symbols as they land.
A copy or cut takes each whole symbol as its character, so pasting it back makes it a
symbol again.
"""

from __future__ import annotations

import contextlib
import unicodedata

from textual import events
from textual.widgets import TextArea
from textual.widgets.text_area import Document, DocumentNavigator, EditResult, Location, WrappedDocument

from engine.textsafety import Symbol, normalise_line_endings, shown_with_symbols, visible


class SymbolDocument(Document):
    """A plain document that knows which pieces of its text are symbols, and for which characters."""

    def __init__(self, text: str):
        shown, self.symbols = shown_with_symbols(text)
        super().__init__(shown)
        self._taken: dict[
            tuple[int, str], list[Symbol]
        ] = {}  # what an edit replaced, and where: an undo puts its symbols back
        self.restoring = False  # an undo or redo is putting back text this document once held
        self.replaced_real = ""  # what the last edit took out, its whole symbols as their characters

    @property
    def real(self) -> str:
        """The text with every symbol as the character it stands for: what saving writes."""
        return self.real_between(0, len(self.text))

    def real_between(self, first: int, last: int) -> str:
        """The shown text from ``first`` to ``last`` with each symbol wholly inside as its character
        (what a copy takes: pasted back, the characters become symbols again)."""
        return self._real(first, last, self.text[first:last])

    def _real(self, first: int, last: int, shown: str) -> str:
        out, at = [], 0
        for start, end, character in self.symbols:
            if first <= start and end <= last:
                out += [shown[at : start - first], character]
                at = end - first
        return "".join(out) + shown[at:]

    def symbol_at(self, index: int) -> Symbol | None:
        """The symbol covering the character at ``index``."""
        return next((s for s in self.symbols if s[0] <= index < s[1]), None)

    def replace_range(self, start: Location, end: Location, text: str) -> EditResult:
        top, bottom = sorted((start, end))
        first, last = self.get_index_from_location(top), self.get_index_from_location(bottom)
        # every symbol the edit touches, even in part: an undo puts the same text back in the same place
        taken = [(s - first, e - first, c) for s, e, c in self.symbols if (s < last and e > first) or s < first < e]
        replaced = self.get_text_range(top, bottom)
        if taken:
            self._taken[(first, replaced)] = taken
        self.replaced_real = self._real(first, last, replaced) if taken else replaced
        shown, added = shown_with_symbols(text)  # hidden characters typed or pasted
        if self.restoring and not added:  # an undo re-inserts what an edit took out, symbols and all
            added = self._taken.get((first, text), [])
        result = super().replace_range(top, bottom, shown)
        moved = len(shown) - (last - first)
        kept = [
            (s, e, c) if e <= first else (s + moved, e + moved, c)
            for s, e, c in self.symbols
            if e <= first or s >= last
        ]
        new = [(first + s, first + e, c) for s, e, c in added]
        if self.restoring and new:  # only what is back in place (the text around a symbol cut into, too)
            now = self.text
            new = [n for n in new if now[n[0] : n[1]] == visible(n[2])]
            kept = [k for k in kept if not any(n[0] < k[1] and k[0] < n[1] for n in new)]
        self.symbols = sorted(kept + new)
        return result


class SymbolTextArea(TextArea):
    """A TextArea over a ``SymbolDocument``: ``real`` is its text with symbols as their characters."""

    @property
    def real(self) -> str:
        assert isinstance(self.document, SymbolDocument)
        return self.document.real

    def _set_document(self, text: str, language: str | None) -> None:
        """As TextArea builds a plain-text document (no syntax highlighting here), with symbols. Its
        language watcher rebuilds the document from the shown text: that keeps the one it has."""
        self._highlight_query = None
        current = getattr(self, "document", None)
        if not (isinstance(current, SymbolDocument) and current.text == text):
            self.document = SymbolDocument(text)
        self.wrapped_document = WrappedDocument(self.document, tab_width=self.indent_width)
        self.navigator = DocumentNavigator(self.wrapped_document)
        self._build_highlight_map()
        self.move_cursor((0, 0))
        self._rewrap_and_refresh_virtual_size()

    def undo(self) -> None:
        with self._restoring():
            super().undo()

    def redo(self) -> None:
        with self._restoring():
            super().redo()

    @contextlib.contextmanager
    def _restoring(self):
        document = self.document
        if isinstance(document, SymbolDocument):
            document.restoring = True
        try:
            yield
        finally:
            if isinstance(document, SymbolDocument):
                document.restoring = False

    def _on_key(self, event: events.Key) -> None:
        """Type a character that draws as nothing (a ZWNJ in a Persian word, the ZWJ of 👨‍👩‍👧) as a paste
        would: TextArea inserts only what ``str.isprintable`` passes, so it dropped them and changed the
        text. Control characters stay keys (enter, tab, ctrl+…), for TextArea and the bindings."""
        typed = event.character
        if self.read_only or typed is None or len(typed) != 1 or typed.isprintable():
            return  # (TextArea's own handler runs next)
        if unicodedata.category(typed) == "Cc":
            return
        event.stop()
        event.prevent_default()
        self._replace_via_keyboard(typed, *self.selection)

    def _on_paste(self, event: events.Paste) -> None:
        """A pasted line break is a newline: terminals send it as CR, which would land as a ``␍`` symbol.
        (Textual then calls TextArea's own handler, which inserts the text.)"""
        event.text = normalise_line_endings(event.text)

    def action_copy(self) -> None:
        """Copy the selection with its symbols as their characters, so a paste brings them back as symbols."""
        document = self.document
        if self.selection.is_empty or not isinstance(document, SymbolDocument):
            super().action_copy()  # (nothing selected: the binding passes on)
            return
        first, last = sorted(map(document.get_index_from_location, self.selection))
        self.app.copy_to_clipboard(document.real_between(first, last))

    def action_cut(self) -> None:
        """Cut as TextArea does (the selection, else the cursor's line), copying what ``action_copy`` would."""
        if self.read_only or not isinstance(self.document, SymbolDocument):
            super().action_cut()
            return
        start, end = self.selection
        cut = self._delete_cursor_line() if start == end else self._delete_via_keyboard(start, end)
        if cut is not None:
            self.app.copy_to_clipboard(self.document.replaced_real)

    def action_delete_left(self) -> None:
        """Backspace after (or inside) a symbol deletes all of it: a symbol is one character."""
        if not self._delete_symbol(-1):
            super().action_delete_left()

    def action_delete_right(self) -> None:
        if not self._delete_symbol(0):
            super().action_delete_right()

    def _delete_symbol(self, offset: int) -> bool:
        if self.read_only or not self.selection.is_empty or not isinstance(self.document, SymbolDocument):
            return False
        index = self.document.get_index_from_location(self.cursor_location) + offset
        found = self.document.symbol_at(index) if index >= 0 else None
        if found is None:
            return False
        locate = self.document.get_location_from_index
        self._delete_via_keyboard(locate(found[0]), locate(found[1]))
        return True
