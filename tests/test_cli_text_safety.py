"""No text output of any command drives the terminal, whatever the data; --json keeps it exact."""

from __future__ import annotations

import contextlib
import io
import json
from os.path import commonprefix

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engine import FixedClock, open_home
from engine.textsafety import is_terminal_safe, json_text
from workbench.cli import main

# Characters that would drive a terminal, mixed into otherwise ordinary text.
DRIVERS = [chr(c) for c in [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)]] + [
    "\u061c",
    "\u200e",
    "\u200f",
    *map(chr, range(0x202A, 0x202F)),
    *map(chr, range(0x2066, 0x206A)),
    # and characters that draw as nothing, so a reader would not see what a model reads
    "\u00ad",
    "\u180e",
    "\u200b",
    "\ufeff",
    "\u3164",
    *map(chr, range(0x2060, 0x2070)),
    "\U000e0001",
    "\U000e0041",
    "\U000e007f",
]
hostile = st.lists(
    st.one_of(
        st.sampled_from(DRIVERS),
        st.sampled_from(["\x1b]0;PWNED\x07", "\x1b[2J", "\x1b]52;c;aGk=\x07"]),
        st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=8),
    ),
    min_size=1,
    max_size=8,
).map("".join)

READ_COMMANDS = [
    ["memory", "show"],
    ["memory", "history"],
    ["sessions", "list"],
    ["sessions", "search", "word"],
    ["sessions", "show", "s_1"],
    ["sessions", "lineage", "s_1"],
    ["sessions", "export", "s_1", "--format", "markdown"],
    ["skills", "list"],
    ["skills", "show", "tool-notes"],
    ["pending", "list"],
    ["curator", "status"],
]


def _seed(root, text: str) -> None:
    home = open_home(root, clock=FixedClock(1796040000.0))
    (home.memories_dir / "MEMORY.md").write_text(f"word {text}\n§\nplain entry", encoding="utf-8")
    home.archive.create_session("s_1", source="cli", title=f"title {text}")
    home.archive.append_message("s_1", "user", f"word {text}")
    skill = home.skills_dir / "tool-notes"
    skill.mkdir(parents=True, exist_ok=True)
    description = json.dumps(f"notes {text}")  # a YAML double-quoted scalar carries any character
    (skill / "SKILL.md").write_text(
        f"---\nname: tool-notes\ndescription: {description}\n---\nbody {text}\n", encoding="utf-8"
    )
    home.close()


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(text=hostile)
def test_no_text_output_contains_controls_or_bidi(tmp_path_factory, text):
    root = tmp_path_factory.mktemp("safe") / "home"
    _seed(root, text)
    for argv in [*READ_COMMANDS, *([*argv, "--json"] for argv in READ_COMMANDS)]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(["--home", str(root), *argv])
        assert status in (0, 1), argv
        printed = out.getvalue() + err.getvalue()
        assert is_terminal_safe(printed), (argv, [c for c in printed if not is_terminal_safe(c)][:5])


def test_json_output_keeps_the_exact_text(tmp_path):
    """Exact for a parser, escaped for the terminal: C1 controls, DEL, bidi controls and tag
    characters are JSON escapes such as ``\\u009b`` (json.dumps wrote them raw, keeping non-ASCII)."""
    root = tmp_path / "home"
    hostile = "\x1b]0;PWNED\x07\u202e\x9b2J\x7f\U000e0041 数据"
    _seed(root, hostile)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["--home", str(root), "sessions", "show", "s_1", "--json"]) == 0
    assert is_terminal_safe(out.getvalue()) and "数据" in out.getvalue()  # CJK stays readable
    doc = json.loads(out.getvalue())
    assert doc["messages"][0]["content"] == "word " + hostile


def test_invisible_characters_are_named_but_joiners_that_spell_stay():
    from engine.textsafety import visible

    assert visible("zero\u200bwidth\U000e0041") == "zero<U+200B>width<U+E0041>"
    assert visible("soft\u00adhyphen") == "soft<U+00AD>hyphen"
    assert visible("filler\u3164 \u206a \udcff \ufeff") == "filler<U+3164> <U+206A> <U+DCFF> <U+FEFF>"  # lone surrogate
    flag = "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"  # Scotland: tags that spell
    assert visible(f"Supports {flag} at rugby") == f"Supports {flag} at rugby"
    assert (
        visible(f"{flag[:-1]} no cancel tag") == "\U0001f3f4<U+E0067><U+E0062><U+E0073><U+E0063><U+E0074> no cancel tag"
    )
    spelt = (
        "\U0001f469\u200d\U0001f4bb \U0001f469\U0001f3fd\u200d\U0001f4bb "  # woman technologist, with a skin tone
        "\u0645\u06cc\u200c\u062e \u2764\ufe0f \u845b\U000e0100"  # Persian ZWNJ, a red heart, an ideograph variant
    )
    assert visible(spelt) == spelt and is_terminal_safe(spelt)
    # Where nothing is spelt with them they draw as nothing, as the scan that refuses them says.
    assert visible("rota\u200dtes a\ufe0f b\u200c ok\u2800ok") == "rota<U+200D>tes a<U+FE0F> b<U+200C> ok<U+2800>ok"
    assert json_text("rota\u200dtes \U0001f469\u200d\U0001f4bb") == '"rota\\u200dtes \U0001f469\u200d\U0001f4bb"'


hidden_mix = st.lists(
    st.sampled_from(
        [
            "a",
            " ",
            "\u0645",
            "\u0915",
            "\u845b",
            "\u1820",
            "\u2801",
            "\U0001f469",
            "\U0001f3fd",
            "\u2764",
            "\U0001f3f4",
            "\U000e0067",
            "\U000e007f",
            "\u200d",
            "\u200c",
            "\ufe0f",
            "\U000e0100",
            "\u180b",
            "\u180e",
            "\u2800",
            "\u200b",
            "\ufff0",
            "\U000e01f0",
            "\x1b",
        ]
    ),
    max_size=12,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=hidden_mix)
@example(text="\U0001f3f4\U000e0067\U000e0067\U000e007f\U0001f3fd")  # a skin tone after the flag joins it
@example(text="\u0600\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f")  # so does a prepend
@example(text="a\U0001f3fd\U0001f44d\U0001f3fd\U0001f3fd")  # a skin tone alone, after an emoji, after a tone
def test_what_the_scan_refuses_as_hidden_is_what_the_screen_shows_as_a_symbol(text):
    """A refusal naming U+200D must point at a ``<U+200D>`` the reader can see and delete, and a
    character drawn as a symbol is one the scan refuses (or a control it always shows). A flag
    whose grapheme goes on past its cancel tag is no flag to the scan: its tags show too."""
    from engine.invisible import hidden_characters
    from engine.textsafety import shown_with_symbols

    shown = {f"U+{ord(ch):04X}" for _, _, ch in shown_with_symbols(text)[1]}
    assert set(hidden_characters(text)) == shown


def test_a_mongolian_vowel_separator_is_no_variation_selector():
    """U+180E sits between the Mongolian variation selectors U+180B-U+180F but is none, and a selector
    varies a letter only: the second of two U+180E, or a selector after a selector, was printed raw
    (the CI run's hypothesis search found `memory show` printing it)."""
    from engine.invisible import hidden_characters
    from engine.textsafety import visible

    assert visible("word \u180e\u180e") == "word <U+180E><U+180E>"
    assert visible("\u1820\u180b\u180b") == "\u1820\u180b<U+180B>"  # (a letter's selector stays)
    assert hidden_characters("\u180e\u180b") == ["U+180E", "U+180B"]


def test_a_flag_joined_to_an_emoji_before_it_is_no_flag_on_screen_either():
    """The scan refuses the tags of 👩 + ZWJ + 🏴 + tags (one grapheme, not a flag); the screen drew them
    as a flag, so the refusal named characters nobody could see."""
    from engine.invisible import hidden_characters
    from engine.textsafety import shown_with_symbols

    tags = "\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"
    for text in ("\U0001f469\u200d\U0001f3f4" + tags, "a\U0001f3f4" + tags):
        shown = {f"U+{ord(ch):04X}" for _, _, ch in shown_with_symbols(text)[1]}
        assert set(hidden_characters(text)) == shown


@given(st.text(alphabet=st.sampled_from("ab[]0;m\x1b\x07\\()\u202e "), max_size=30))
def test_a_box_that_drops_controls_leaves_nothing_a_terminal_acts_on(text):
    from engine.textsafety import visible, without_controls

    kept = without_controls(text)
    assert "\x1b" not in kept and "\x07" not in kept and "\u202e" not in kept
    assert visible(kept) == kept and without_controls(kept) == kept


def test_a_box_that_drops_controls_drops_escape_sequences_whole():
    """Only the ESC went: a title pasted with colours kept '[34m' and '[0m' as text."""
    from engine.textsafety import without_controls

    assert without_controls("\x1b[34mBlue\x1b[0m talk") == "Blue talk"
    assert without_controls("x\x1b]0;PWNED\x07y\x1b]52;c;aGk=\x1b\\z") == "xyz"
    assert without_controls("a\x1b(Bb \x1b[") == "ab "


@settings(max_examples=500, deadline=None)
@given(
    shared=st.text(alphabet="ab ", max_size=80),
    between=st.text(alphabet="cd ", max_size=120),
    first=st.tuples(st.text(alphabet="xy", max_size=3), st.text(alphabet="XY", max_size=3)),
    last=st.tuples(st.text(alphabet="xyz", min_size=1, max_size=20), st.text(alphabet="XYZ", min_size=1, max_size=20)),
    width=st.integers(min_value=6, max_value=90),
)
@example(shared="Runbook: ", between="c" * 100, first=("ring", "call"), last=("4712.", "4713."), width=60)
def test_two_versions_cut_for_a_line_never_read_the_same(shared, between, first, last, width):
    """``apart`` keeps where two versions differ in view at any width (a width under 30 once took
    the tails of both, which read the same), and a text changed in two places shows both."""
    from engine.textsafety import apart, one_line

    old_text, new_text = shared + first[0] + between + last[0], shared + first[1] + between + last[1]
    old, new = apart(old_text, new_text, width)
    assert len(old) <= width and len(new) <= width
    if one_line(old_text) != one_line(new_text):
        assert old != new
    if width >= 45 and len(between) > width:  # both places in view: the first change and the end
        assert old.endswith(last[0][-3:]) and new.endswith(last[1][-3:])
        if first[0] != first[1]:
            assert (
                old.split("…")[0 if not old.startswith("…") else 1]
                != new.split("…")[0 if not new.startswith("…") else 1]
            )


ENGLISH = st.lists(st.sampled_from("train leaves every second Tuesday; the on-call lead 2026-11-02 (v1.4) a".split()))
CJK = st.text(alphabet="ユーザーは毎朝数据库迁移の確認、。「」", max_size=40)
MIXED = st.lists(st.sampled_from(["deploy", "ユーザー", "数据库迁移", "api", "7", "、", "staging-3"]))
VERSION = st.one_of(ENGLISH.map(" ".join), CJK, MIXED.map(" ".join), MIXED.map("".join))


@settings(max_examples=400, deadline=None)
@given(shared=VERSION, old_end=VERSION, new_end=VERSION, width=st.integers(min_value=6, max_value=90))
@example(shared="、" * 6, old_end="", new_end="release", width=12)
def test_two_versions_cut_at_words_still_show_where_they_first_differ(shared, old_end, new_end, width):
    """Cut at words (``apart``), versions that differ still read apart, each within ``width``, and
    where they first read apart each shows its first changed character: at 12 columns
    ``、、、、、、release`` read ``、、、、、、…ease``, its ``r`` left out."""
    from engine.textsafety import apart, one_line

    old_line, new_line = one_line(shared + old_end), one_line(shared + new_end)
    old, new = apart(shared + old_end, shared + new_end, width)
    assert len(old) <= width and len(new) <= width
    if old_line == new_line:
        return
    assert old != new
    changed = len(commonprefix([old_line, new_line]))
    parted = len(commonprefix([old, new]))
    for line, shown in ((old_line, old), (new_line, new)):
        if changed < len(line):
            assert shown[parted : parted + 1] == line[changed], (line, shown)


def test_two_versions_are_cut_before_a_word_and_resume_at_one():
    """Both ends of a cut split words: ``every second Tue…ss the on-call lead`` (``Tuesday``,
    ``unless``), and a start cut read ``…taging-3``. Each moves to a word's edge now, at every width
    a skin uses, as ``word_end`` does: CJK parts anywhere, a word longer than a third of what is kept
    is cut where it is, and a cut never moves past the first character that differs."""
    from engine.textsafety import apart

    rest = "hotfixes ride the next train unless the on-call lead says otherwise"
    old = f"Release trains leave every second Tuesday; {rest}"
    new = f"Release trains leave every Tuesday now; {rest}, written in the runbook"
    assert apart(old, new, 72) == (
        "Release trains leave every second…unless the on-call lead says otherwise",
        "Release trains leave every Tuesday…otherwise, written in the runbook",
    )
    assert apart(old, new, 45) == (
        "…every second Tuesday;…lead says otherwise",
        "…every Tuesday now;…written in the runbook",
    )
    assert apart(old, new, 30) == ("…every second…says otherwise", "…every Tuesday…in the runbook")
    dated = "The deploy target for service api is staging-3, owned by the platform team since 2026-11-02"
    assert apart(dated, dated.replace("11-02", "12-04"), 55) == (
        "…owned by the platform team since 2026-11-02",
        "…owned by the platform team since 2026-12-04",
    )
    cjk = "ユーザーは毎朝七時に起きて、コーヒーを飲んでから数据库迁移の確認をします。午後はレビューをします"
    assert apart(cjk, cjk.replace("七", "六").replace("レビュー", "テスト"), 20) == (
        "ユーザーは毎朝七時に起き…ビューをします",
        "ユーザーは毎朝六時に起き…テストをします",
    )
    path = "Deploy {} to /srv/releases/very-long-path-name-without-any-spaces/bin/run"  # (cut where it is)
    assert apart(path.format("stage"), path.format("prod"), 30) == (
        "Deploy stage to /srv/releases…",
        "Deploy prod to /srv/releases/…",
    )
    path = "Run /srv/releases/very-long-path-name-without-any-spaces/bin/deploy-{} now"
    assert apart(path.format("stage"), path.format("prod"), 30) == (
        "…-spaces/bin/deploy-stage now",
        "…-spaces/bin/deploy-prod now",
    )
    # a cut that would drop the first change stays after it: a number split read as "Order…" twice
    assert apart("Order 12345678901234567890 shipped", "Order 12395678901234567890 shipped", 20) == (
        "Order 1234567890123…",
        "Order 1239567890123…",
    )


def test_a_skin_tone_alone_is_hidden_and_shown_as_a_symbol_after_an_emoji_it_is_kept():
    """A lone skin tone is measured as no cells but drawn as two: twenty of them hid the word after
    them on every screen, and the scan let them through."""
    from engine.invisible import hidden_characters
    from engine.safety.scan import assess
    from engine.textsafety import visible

    hiding = "Tones " + "\U0001f3fd" * 20 + " end"
    assert hidden_characters(hiding) == ["U+1F3FD"] and assess(hiding).dangerous
    assert visible(hiding) == "Tones " + "<U+1F3FD>" * 20 + " end"
    for kept in ("Thumbs \U0001f44d\U0001f3fd up", "dev \U0001f469\U0001f3fd\u200d\U0001f4bb"):
        assert hidden_characters(kept) == [] and visible(kept) == kept and not assess(kept).dangerous


def test_the_ascii_search_for_hidden_characters_reads_as_the_full_one():
    """ASCII text is searched with ``re``: over every ASCII character it finds what the full class finds."""
    from engine import invisible

    every = "".join(map(chr, range(0x80)))
    assert invisible._SUSPECT_ASCII.findall(every) == invisible._SUSPECT.findall(every)
    assert invisible.hidden_characters("a\x1bb\tc\nd\x7f") == ["U+001B", "U+007F"]


def test_export_to_a_file_holds_what_stdout_gets(tmp_path):
    """`-o FILE` is the same bytes as stdout in both formats: Markdown shows what would drive a
    terminal as symbols (a `cat` of the file is as safe as the printout), JSON keeps the text exact
    with those characters escaped (U+202E included)."""
    root = tmp_path / "home"
    hostile = "\x1b]0;PWNED\x07 \x1b[31mred \u202eevil \x9b2J 数据"
    _seed(root, hostile)
    for fmt in ("markdown", "json"):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["--home", str(root), "sessions", "export", "s_1", "--format", fmt]) == 0
        target = tmp_path / f"export.{fmt}"
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["--home", str(root), "sessions", "export", "s_1", "--format", fmt, "-o", str(target)]) == 0
        written = target.read_bytes().decode("utf-8")
        assert written == out.getvalue(), fmt
        assert is_terminal_safe(written) and "数据" in written, fmt
    markdown = (tmp_path / "export.markdown").read_text(encoding="utf-8")
    assert "␛]0;PWNED␇ ␛[31mred <U+202E>evil \\x9b2J 数据" in markdown
    json_doc = (tmp_path / "export.json").read_text(encoding="utf-8")
    assert "\\u202eevil" in json_doc and "\\u001b[31m" in json_doc
    assert json.loads(json_doc)["messages"][0]["content"] == "word " + hostile


def test_a_session_id_with_a_line_break_never_starts_a_row_of_memory_history(tmp_path):
    """state.db's session ids are data: one holding a line break printed `#99 fake row` as a row of its own
    in `memory history`, in the row's session and in the note of a row credited to a Hermes call."""
    import sqlite3

    from engine.tools import ToolContext
    from tests.cli_support import printed

    home = open_home(tmp_path / "h")
    home.memory.add("memory", "A fact", ToolContext(actor="agent", session_id="s-1\n#99 fake row"))
    home.close()
    with sqlite3.connect(tmp_path / "h" / "workbench.db") as db:  # (as engine/memory/credit.py leaves a row)
        db.execute("UPDATE journal SET detail = json_set(detail, '$.credited', json('{\"at\": 1}'))")
    shown = printed("memory", "history", "--home", str(tmp_path / "h"))
    assert not [line for line in shown.splitlines() if line.startswith("#99")], shown
    assert "session s-1⏎#99 fake row (credited to session s-1⏎#99 fake row when its turn was stored)" in shown


def test_a_session_id_with_a_line_break_never_starts_a_row_of_the_timeline(tmp_path):
    """The same in `workbench timeline` (the row's `(session …)` tail) and `timeline show` (its session
    line): a session id holding a line break printed what read as row 99 of its own."""
    from engine.tools import ToolContext
    from tests.cli_support import printed

    home = open_home(tmp_path / "h")
    home.memory.add("memory", "A fact", ToolContext(actor="agent", session_id="s-1\n    99  2026-12-01 fake row"))
    home.close()
    for command in (("timeline",), ("timeline", "show", "1")):
        shown = printed(*command, "--home", str(tmp_path / "h"))
        assert "s-1⏎    99  2026-12-01 fake row" in shown, shown
        assert not [line for line in shown.splitlines() if line.lstrip().startswith("99 ")], shown
