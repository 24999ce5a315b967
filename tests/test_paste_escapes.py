"""Bracketed pastes holding an ESC arrive whole, however the terminal's bytes are split into reads."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from textual import events
from textual._xterm_parser import XTermParser

from widgets.paste_escapes import END, MARK, START, PasteParser


def parsed(parser, chunks):
    out = []
    for chunk in chunks:
        out += list(parser.feed(chunk))
    return out


def described(found):
    return [("paste", e.text) if isinstance(e, events.Paste) else ("key", e.key) for e in found]


def test_textual_alone_breaks_such_a_paste_into_keys():
    """What this guards against: the text after the ESC leaves the paste."""
    found = described(parsed(XTermParser(), [f"{START}log \x1b[31mred{END}"]))
    assert ("paste", "log \x1b[31mred") not in found


pasted = st.text(
    st.sampled_from(["a", "b", " ", "\x1b", "[", "2", "0", "1", "~", MARK, "m", "e", "数", "\n"]), max_size=20
)


@settings(max_examples=300, deadline=None)
@given(pasted, st.lists(st.integers(0, 40), max_size=5))
def test_a_paste_arrives_whole_wherever_the_reads_split_it(text, cuts):
    stream = f"x{START}{text}{END}y"
    bounds = sorted({min(c, len(stream)) for c in cuts})
    chunks = [stream[a:b] for a, b in zip([0, *bounds], [*bounds, len(stream)], strict=True) if a < b]
    if START in text or END in text:  # a marker inside the text ends (or is) the paste: not a case here
        return
    assert described(parsed(PasteParser(), chunks)) == [("key", "x"), ("paste", text), ("key", "y")]


def test_keys_outside_a_paste_read_as_before():
    parser = PasteParser()
    assert described(parsed(parser, ["\x1b[A", "q", "\x1b[2", "00~hi", END])) == [
        ("key", "up"),
        ("key", "q"),
        ("paste", "hi"),
    ]
    assert described(parsed(parser, ["\x1b[1;5C"])) == [("key", "ctrl+right")]


def test_a_start_marker_the_parser_gave_up_on_is_no_paste(monkeypatch):
    """Its first part sent on as keys after the escape delay, the rest is typed text: arrows after it
    must stay arrows, not escaped text."""
    import textual._parser

    now = [0.0]
    monkeypatch.setattr(textual._parser, "get_time", lambda: now[0])
    parser = PasteParser()
    parsed(parser, ["\x1b", "[20"])
    now[0] += 1.0  # past the escape delay
    assert list(parser.tick())  # the parser sent the partial sequence on as keys
    found = described(parsed(parser, ["0~a", "\x1b[A"]))
    assert ("key", "up") in found and not any(kind == "paste" for kind, _ in found)
