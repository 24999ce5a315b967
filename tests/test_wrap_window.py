"""``widgets.literal.wrap`` folds a long line a window at a time: it wrapped the whole rest of the text again
after each fold it moved (a grapheme parted, ``。`` left to start a line), so long CJK text took time growing
with the square of its length, on the UI's thread (28 s for 93 KB of Japanese on one line)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from textual.content import Content

from engine.textsafety import fold_end
from widgets import literal
from widgets.literal import WholeWrap, wrap

JAPANESE = "デプロイ手順は金曜日に禁止。ﾃﾞﾌﾟﾛｲ、ビルド→テスト。「確認」を求める。"


def folded_whole(content: Content, width: int) -> list[str]:
    """The rule itself, as plainly as it can be said: Textual's fold of the whole rest, moved back wherever
    ``fold_end`` would, and the rest wrapped again from there."""
    done: list[str] = []
    while True:
        lines = content.wrap(width)
        plain, at = content.plain, 0
        for index, line in enumerate(lines[:-1]):
            start = plain.find(line.plain, at)
            at = start + len(line.plain)
            kept = fold_end(plain[start:at], plain[at:])
            if 0 < len(kept) < at - start:
                done += [*(line.plain for line in lines[:index]), kept]
                content = content[start + len(kept) :]
                break
        else:
            return done + [line.plain for line in lines]


PIECES = st.sampled_from(
    [
        "デプロイ",
        "手順",
        "。",
        "、",
        "」",
        "ﾃﾞ",
        "ﾌﾟ",
        "👩‍💻",
        "❤️",
        "e\u0301",
        "<U+202E>",
        " ",
        "  ",
        "word",
        "x" * 30,
        "\n",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PIECES, max_size=400), st.integers(min_value=1, max_value=50))
def test_a_window_at_a_time_folds_as_the_whole_text_would(pieces, width):
    text = "".join(pieces)
    assert [line.plain for line in wrap(Content(text), width)] == folded_whole(Content(text), width)


def test_a_long_japanese_line_is_wrapped_in_work_that_grows_with_its_length(monkeypatch):
    """Counted, not timed: the characters Textual is given to wrap, for 38,000 of Japanese on one line, are
    under four times its length (about twice; the whole rest after each fold moved was some 130 times)."""
    given: list[int] = []
    textual_wrap = Content.wrap

    def counted(self, width, *args, **kwargs):
        given.append(len(self.plain))
        return textual_wrap(self, width, *args, **kwargs)

    monkeypatch.setattr(Content, "wrap", counted)
    text = JAPANESE * 1_000
    lines = wrap(Content(text), 40)
    assert "".join(line.plain for line in lines) == text
    assert sum(given) < 4 * len(text), (sum(given), len(text))


def test_a_fold_is_made_once_for_its_height_and_its_drawing(monkeypatch):
    calls: list[int] = []
    monkeypatch.setattr(literal, "wrap", lambda content, width: calls.append(width) or wrap(content, width))
    visual = WholeWrap(Content(JAPANESE * 20))
    rules = {}
    height = visual.get_height(rules, 30)
    assert visual._folded(rules, 30).get_height(rules, 30) == height
    assert calls == [30]
    visual.get_height(rules, 50)  # (another width: folded again)
    assert calls == [30, 50]
