"""Textual's footer, with the keys that do not fit left out whole rather than cut mid-word.

Textual lays the keys out in a row and the palette's key, docked right, covers what runs past
it: at 60 columns the last key read ``? H``, ``esc Cl`` or ``n N`` with no word of what it does.
Here the keys give way whole, the last first (each screen binds its main actions first), then
those its screen names in ``FOOTER_FIRST`` (the Run screen's ``esc``, the way out of its message
box), and help (``?``, or ``f1`` where ``?`` is text: it lists the rest) last of all.

Textual makes every key anew whenever the screen's bindings may have changed (each focus move,
each ``refresh_bindings``); here only when what they are made from did, which was a third of the
work of an app's first seconds.
"""

from __future__ import annotations

from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey, FooterLabel

HELP_KEYS = ("question_mark", "f1")  # the last to give way


class FittedFooter(Footer):
    _composed_from: tuple | None = None  # what the keys shown were made from

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._widths: dict[Widget, int] = {}  # each unit's width when last shown (a hidden one has no region)
        self._gap = 0  # between two units, as last laid out

    def on_mount(self) -> None:
        # Fitted in each layout of the screen, as it is made: a fit asked for after a change (keys made
        # anew, shown again by a resize) could run before the change was laid out, or after another,
        # and measured no widths or old places; one such left a cut `? H` for good. A fit that changes
        # nothing lays nothing out again, so a change settles in one more layout at most.
        self.screen.screen_layout_refresh_signal.subscribe(self, self._laid_out, immediate=True)

    def _laid_out(self, _) -> None:
        self._fit()

    async def recompose(self) -> None:  # (on every change of the screen's bindings)
        if not self.is_attached or self._pruning:
            return
        source = self._source()
        if source == self._composed_from:  # (asked at every focus move and refresh_bindings: mostly no change)
            return
        self._widths.clear()  # (before: a layout while the new keys are mounted measures them)
        await super().recompose()
        self._composed_from = source

    def _source(self) -> tuple:
        """All ``Footer.compose`` makes the keys from: the same again makes the same keys."""
        active = self.screen.active_bindings.values() if self._bindings_ready else ()
        shown = [(b, enabled, tooltip, self.app.get_key_display(b)) for _, b, enabled, tooltip in active]
        return self._bindings_ready, self.show_command_palette, self.compact, shown

    def on_resize(self) -> None:
        for child in self.children:
            child.display = True  # (measured again at the new width, and fitted in that layout)

    def _units(self) -> tuple[list[list[Widget]], Widget | None]:
        """The footer's keys in order, a group's keys with the label after them as one, and the palette's key."""
        units: list[list[Widget]] = []
        palette = None
        for child in self.children:
            if child.has_class("-command-palette"):
                palette = child
            elif isinstance(child, FooterLabel) and units:
                units[-1].append(child)
            else:
                units.append([child])
        return units, palette

    def _fit(self) -> None:
        """Keep the keys that fit left of the palette's key: help first, then the screen's ``FOOTER_FIRST``,
        then the others in order until one does not."""
        units, palette = self._units()
        shown = [unit for unit in units if unit[0].display]
        if not shown or not all(unit[0].region.width for unit in shown) or (palette and not palette.region.width):
            return  # (not laid out yet: the layout that places them fits them)
        for unit in shown:
            self._widths[unit[0]] = unit[-1].region.right - unit[0].region.x
        if any(unit[0] not in self._widths for unit in units):  # (never measured: shown, then fitted once laid out)
            for child in self.children:
                child.display = True
            return
        room = (palette.region.x if palette is not None else self.region.right) - shown[0][0].region.x
        if len(shown) > 1:
            self._gap = shown[1][0].region.x - shown[0][-1].region.right
        first = getattr(self.screen, "FOOTER_FIRST", ())

        def rank(unit: list[Widget]) -> int:
            key = unit[0].key if isinstance(unit[0], FooterKey) else None
            return 0 if key in HELP_KEYS else 1 if key in first else 2

        kept: list[list[Widget]] = []
        for unit in sorted(units, key=rank):  # (a stable sort: each rank in order)
            if sum(self._widths[u[0]] + self._gap for u in kept) + self._widths[unit[0]] <= room:
                kept.append(unit)
            elif rank(unit) == 2:
                break
        for unit in units:
            for widget in unit:
                widget.display = any(unit is other for other in kept)
