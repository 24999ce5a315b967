"""Guards for Textual bugs the workbench can hit, applied once when the app is imported.

``OptionList._move_page`` (Textual 8.2.8, the newest release in the registry) looks the
highlighted option up in a line cache that is only filled once the list has a
non-empty content region, so ``pagedown``/``pageup`` in a list squeezed to zero rows
(a Select dropdown, the command palette's list while it opens) raises ``KeyError: 0``.
Every OptionList is affected, Textual's own included, so the guard wraps the method:
paging a list with nothing laid out does nothing.

Textual draws a screen at most ``TEXTUAL_FPS`` times a second (60 unless set), on a
fixed clock: search results that arrive 10 ms after the frame that echoed the typed
letter wait another 7 ms for the next tick. ``FRAME_RATE`` halves that wait (keystroke
to results p50 38 to 30 ms in ``make bench``). Frames are drawn only when something
changed, so an idle screen costs nothing more; a ``TEXTUAL_FPS`` the user set wins.

``CommandPalette._gather_commands`` is a worker that, when the palette is closed while
it searches (a fast ``enter`` after typing), fails with ``NoMatches`` and, being
``exit_on_error``, ends the app. ``Palette`` runs the same search and stops quietly
once the palette's list is gone; the app opens it for ``ctrl+p`` and the theme picker.

An ESC inside a bracketed paste breaks the paste into key presses (``paste_escapes``),
and Esc followed at once by a digit arrives as an Option character (``escape_digits``).
An ``Input`` draws its text raw, so what is pasted into one (a bracketed paste, or
ctrl+v of the clipboard, which the editor fills with the characters its symbols stand
for) is its first line with control characters as symbols.

``Input`` and ``TextArea`` insert a printable key in their own message queue, but a key
bound to one of their actions (backspace, delete, the arrows, home, ctrl+z) only runs
once the key has bubbled through every ancestor's queue up to the app. A screen busy
with a redraw or a worker's results held a backspace back while the letters typed after
it went in: ``oolong``, two backspaces and ``tulip`` gave ``oolontuli``, and in the memory
editor ``abc``, backspace, left, ``xy`` saved ``abcx``. ``_keys_in_order`` runs a text
box's own bindings in its own queue, as the key arrives, in the order typed. (Priority
bindings were checked before the key reached the box, as before; the box's bindings came
first in the chain after them anyway.) Esc, whose bindings (leave the box, cancel, close
an editor) are the screen's, runs them the same way, as it arrives: a digit typed right after
it is otherwise already in the box's queue and typed into it. So do tab and shift+tab (the
screen's focus keys; not in a box that indents with tab): a conflict's Tab then Enter, sent
together, typed the Enter into the draft as a new line, and Keep mine, focused a moment
later, was never pressed. The keys queued behind that Esc or tab, and any that reach a box
the focus has left, go where the focus is now; when the Esc opened a question over the box
(discard a changed draft?), they are dropped, never typed into the draft behind it nor taken
as its answer.

A ``FooterKey`` starts ``compact`` (its reactive's default) without the ``-compact`` class,
which its watcher adds once it is mounted, restyling the key; the footer then binds the key's
``compact`` to its own, False in our footers, and the watcher removes the class, restyling it again.
The footer makes its keys anew whenever the bindings change (every move of the focus, every
screen), so those passes were about a fifth of the app's CPU in a Pilot test, and as much of each
focus move for the user. ``_footer_key`` gives a key the class it will have before it mounts: its
default's, or, for a key the footer binds, the footer's. Nothing changes after and nothing is
restyled; the keys look as they did (the palette's, unbound, stays compact).

Textual's output thread (``WriterThread``) ends when a write to a terminal that went away fails
(EIO on a closed pty), while its queue holds 30 writes at most: the frames drawn after that filled
it, and the quit's ``stop`` then waited for ever to queue its end mark. A workbench whose tmux was
killed while it was busy lived on at 0% CPU. ``_drains_after_hangup`` keeps the thread taking what
is queued, written nowhere, until that end mark (a failure of the flush after it, which the stop waits
for, just ends the thread). Only a terminal that cannot be written to is given up
so: a write that would block (EAGAIN: another program sharing the terminal made it non-blocking) or
was interrupted (EINTR) is tried again, with the terminal made blocking, rather than leaving the screen
frozen with the app running on under it.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from typing import Any, cast

import textual.screen
from textual import events, work
from textual._context import active_message_pump
from textual.await_complete import AwaitComplete
from textual.command import CommandPalette
from textual.css.query import NoMatches
from textual.drivers._writer_thread import WriterThread
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, OptionList, TextArea
from textual.widgets._footer import Footer, FooterKey

from . import escape_digits, paste_escapes

_move_page = OptionList._move_page


def _guarded_move_page(self: OptionList, direction) -> None:
    if self._index_to_line:
        _move_page(self, direction)


# Errors a later write may not meet: the write would have blocked, or a signal cut it short.
TRANSIENT = frozenset({errno.EAGAIN, errno.EWOULDBLOCK, errno.EINTR})
RETRY_PAUSE = 0.05  # seconds before a write that would have blocked is tried again on a file with no descriptor


def _drains_after_hangup(run):
    def guarded(self: WriterThread) -> None:
        get, ended = self._queue.get, threading.Event()

        def taking() -> str | None:
            text = get()
            if text is None:
                ended.set()
            return text

        self._queue.get = taking  # type: ignore[method-assign]  # (what ``run`` reads its queue with)
        while True:
            try:
                run(self)
                return
            except OSError as exc:
                if ended.is_set():  # the last flush, after the stop's end mark: nothing more comes, and the stop waits
                    return
                if exc.errno in TRANSIENT:  # what that write held may be lost: the next frames go on
                    _blocking(self._file)
                    continue
                # the terminal is gone (EIO, EPIPE, EBADF, ENXIO) or takes nothing more (ENOSPC): no write can
                # succeed, and ending the thread as Textual does would leave a put waiting for ever
                while get() is not None:
                    pass
                return

    return guarded


def _blocking(file) -> None:
    """``file``'s descriptor made blocking again, so that the next write waits for room instead of failing."""
    try:
        os.set_blocking(file.fileno(), True)
    except (OSError, ValueError):  # no descriptor, or one closed meanwhile: a moment, not a spin, before the next
        time.sleep(RETRY_PAUSE)


def _keys_in_order(on_key):
    """``on_key`` of a text box, running the box's own binding for the key first, in its queue."""

    async def handle(self: Widget, event: events.Key) -> None:
        if getattr(self, "_escaped", False) or self.screen.focused is not self:  # queued behind an Esc, say
            event.stop()
            event.prevent_default()
            if not _covered(self):  # a question that Esc opened over the box takes no key typed before it
                self.app.post_message(events.Key(event.key, event.character))  # to where the focus is now
            return
        for binding in self._bindings.key_to_bindings.get(event.key, ()):
            if not binding.priority and await self.app.run_action(binding.action, self):
                event.stop()
                event.prevent_default()
                return
        if event.key in FOCUS_KEYS and not _indents(self) and await self.app._check_bindings(event.key):
            event.stop()  # the focus moved on before the next key: it goes where the focus is now
            event.prevent_default()
            return
        if event.key == "escape" and await self.app._check_bindings("escape"):  # leave the box before the next key
            event.stop()
            event.prevent_default()
            self._escaped = True  # until the keys queued here behind it have gone where the focus went
            self.call_later(setattr, self, "_escaped", False)
            return
        await on_key(self, event)

    return handle


FOCUS_KEYS = ("tab", "shift+tab")  # the screen's focus_next / focus_previous, unless the box indents with tab


def _indents(box: Widget) -> bool:
    """Whether tab is text in the box (a code editor's indent) rather than the key to the next widget."""
    return isinstance(box, TextArea) and box.tab_behavior == "indent"


def _covered(box: Widget) -> bool:
    """Whether another screen now lies over the box's own (a question its Esc opened)."""
    stack = box.app.screen_stack
    return box.screen is not stack[-1] and box.screen in stack


FRAME_RATE = 120  # frames a second at most


def _input_paste(on_paste):
    """``Input._on_paste`` taking ``paste_escapes.first_line`` of the pasted text (its control
    characters dropped in a box marked ``drops_controls``)."""

    def handle(self: Input, event: events.Paste) -> None:
        event.text = paste_escapes.first_line(event.text, getattr(self, "drops_controls", False))
        on_paste(self, event)

    return handle


def _input_clipboard_paste(self: Input) -> None:
    """ctrl+v in an ``Input``: the clipboard's first line (the editor copies hidden characters as they are)."""
    self.replace(paste_escapes.first_line(self.app.clipboard, getattr(self, "drops_controls", False)), *self.selection)


def _footer_key(init, data_bind):
    def plain_init(self: FooterKey, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.add_class("-compact", update=False)  # (``compact`` starts True: its watcher then changes nothing)

    def bind(self: FooterKey, *reactives: Any, **bound: Any) -> FooterKey:
        footer = active_message_pump.get(None)
        if bound.get("compact") is Footer.compact and isinstance(footer, Footer) and not self.is_mounted:
            self.set_reactive(FooterKey.compact, footer.compact)  # (set as the binding will set it)
            self.set_class(footer.compact, "-compact", update=False)  # (styled as it mounts)
        return data_bind(self, *reactives, **bound)

    return plain_init, bind


def apply() -> None:
    FooterKey.__init__, FooterKey.data_bind = _footer_key(FooterKey.__init__, FooterKey.data_bind)  # type: ignore[method-assign]
    OptionList._move_page = _guarded_move_page
    WriterThread.run = _drains_after_hangup(WriterThread.run)  # type: ignore[method-assign]
    Input._on_paste = _input_paste(Input._on_paste)
    Input.action_paste = _input_clipboard_paste
    for box in (Input, TextArea):
        box._on_key = _keys_in_order(box._on_key)
    escape_digits.install()  # (its parser is paste_escapes's, with Esc+digit read as two keys)
    if "TEXTUAL_FPS" not in os.environ:  # read by each screen's update timer when it is first needed
        textual.screen.UPDATE_PERIOD = 1 / FRAME_RATE


class DismissOnce:
    """Mixed in before a screen class: the screen closes once. A second answer (a key burst
    such as ``d enter n``, two escapes, a click racing a key) that lands before the screen is
    gone is ignored, and so is one while another screen is on top of it: Textual's ``dismiss``
    would settle the result a second time (``InvalidStateError``, which ends the app) and
    pop whatever screen is on top. An answer before the screen has mounted closes it just
    after: its ``on_mount`` would otherwise run on a screen already taken apart.
    (Not a Screen itself: Textual takes CSS and component classes from a class's first
    DOMNode base, which must stay the real screen class.)"""

    _dismissed = False

    def dismiss(self, result: Any = None) -> AwaitComplete:
        screen = cast(Screen, self)
        if self._dismissed or screen.app.screen is not screen:  # below another screen, it would pop that one
            return AwaitComplete.nothing()
        self._dismissed = True
        close = cast(Screen, super()).dismiss
        if screen.is_mounted:
            return close(result)

        def after_mount() -> None:  # not awaited: Textual refuses that from the screen's own queue
            close(result)

        screen.call_later(after_mount)  # keys can answer before Mount, which would then find nothing
        return AwaitComplete.nothing()


class Palette(DismissOnce, CommandPalette):
    """Textual's command palette, whose search survives the palette closing under it."""

    @work(exclusive=True, group=CommandPalette._GATHER_COMMANDS_GROUP, exit_on_error=False)
    async def _gather_commands(self, search_value: str) -> None:
        try:
            await CommandPalette._gather_commands.__wrapped__(self, search_value)
        except NoMatches:  # closed while searching: nothing left to show the hits in
            pass
