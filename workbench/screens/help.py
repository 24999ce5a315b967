"""The help screen (``?``): every key of every screen, generated from the bindings.

Because the table is built from the same ``BINDINGS`` the footer uses, a key cannot be
missing from help. The screen the user is on is listed from its live bindings
(``working_bindings``): a key its ``check_action`` hides there (the Memory screen's
column keys in the facts view, the other of Pin and Unpin) is left out, as the footer
leaves it out, so help cannot list a key that does nothing where the user is.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.actions import parse as parse_action
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from widgets.literal import assemble

from .dialogs import Dialog


@dataclass(frozen=True)
class HelpSection:
    title: str
    text: str
    keys: list[tuple[str, str]]  # (key as shown, what it does)


KEY_NAMES = {"question_mark": "?", "escape": "esc", "slash": "/"}


def shown_key(key: str) -> str:
    """A key as the footer shows it: ``escape`` -> ``esc``."""
    return KEY_NAMES.get(key.strip(), key.strip())


def binding_rows(bindings) -> list[tuple[str, str]]:
    """(keys, description) for every described binding, each key listed once (``down, j``): keys
    the footer groups (``n N Changes``) each get their own row with their own description, and a
    key that does two things by context (esc on Run: cancel a turn, or leave the box) gets one row
    naming both."""
    rows: dict[str, list[str]] = {}
    for item in bindings:
        binding = item if isinstance(item, Binding) else Binding(*item)
        if binding.description:
            shown = binding.key_display or ", ".join(shown_key(key) for key in binding.key.split(","))
            said = rows.setdefault(shown, [])
            if binding.description not in said:
                said.append(binding.description)
    return [(shown, " / ".join(said)) for shown, said in rows.items()]


def class_bindings(cls) -> list:
    """A screen class's own bindings, then those it inherits from our classes (Textual's
    generic ones, like tab to move focus, are listed once under "Everywhere")."""
    seen: list = []
    for klass in cls.__mro__:
        if not klass.__module__.startswith("textual."):
            seen.extend(klass.__dict__.get("BINDINGS", []))
    return seen


def working_bindings(owner) -> list:
    """A live screen's or widget's bindings (``class_bindings``) less those its ``check_action``
    hides now (returns False: they do nothing here). Dimmed ones (None) stay: they are keys of
    this view that act on another row (the footer shows them too)."""
    kept = []
    for item in class_bindings(type(owner)):
        binding = item if isinstance(item, Binding) else Binding(*item)
        _, name, parameters = parse_action(binding.action)
        if owner.check_action(name, parameters) is not False:
            kept.append(binding)
    return kept


def view_bindings(screen, separate: tuple[type, ...] = ()) -> list:
    """Every key of the view a live screen shows: its own (``working_bindings``), then those of each
    pane of ours it shows (the Sessions lineage tree's ``[`` and ``]``, its search results' ``l`` and
    ``h``), each kind of pane once. A pane hidden now (the search results while the tree is shown, the
    facts under the Memory columns) does nothing, so is left out; ``separate`` kinds (the transcript)
    have their own section."""
    kept = working_bindings(screen)
    seen: set[type] = set()
    for widget in screen.query("*"):
        kind = type(widget)
        if kind in seen or isinstance(widget, separate) or not kind.__module__.startswith("widgets."):
            continue
        if not all(node.display for node in widget.ancestors_with_self if node is not screen):
            continue
        seen.add(kind)
        kept.extend(working_bindings(widget))
    return kept


class HelpScreen(Dialog[None]):
    """Scrollable key reference; any of escape, q or ? closes it."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def __init__(self, sections: list[HelpSection]):
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog dialog-wide help"):
            yield Static(
                assemble(("Memory Workbench — keys", "bold"), ("   esc closes", "$text-muted")), classes="dialog-title"
            )
            with VerticalScroll():
                for section in self.sections:
                    yield Static(assemble((section.title, "bold $accent")), classes="help-title")
                    if section.text:
                        yield Static(assemble((section.text, "$text-muted")))
                    width = max((len(k) for k, _ in section.keys), default=0)
                    yield Static(
                        assemble(
                            *[
                                part
                                for key, desc in section.keys
                                for part in ((f"  {key:<{width}}  ", "bold $secondary"), (desc + "\n", ""))
                            ]
                        )
                    )

    async def action_dismiss(self, result=None) -> None:
        self.dismiss(None)
