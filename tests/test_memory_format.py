"""The MEMORY.md / USER.md file format, usage accounting, block rendering and diffing."""

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.memory.format import (
    BLOCK_TITLES,
    ENTRY_DELIMITER,
    SEPARATOR,
    Usage,
    appended_entries,
    breaks_delimiter,
    entry_changes,
    has_drift,
    parse_blocks,
    parse_entries,
    percent_of,
    read_as_hermes,
    render_block,
    serialize,
    size_of,
)
from engine.memory.threats import first_threat_message
from engine.models.offline import frozen_entries


def test_split_on_full_delimiter_strips_and_drops_empties():
    assert parse_entries("  first \n§\n\n§\n second\n") == ["first", "second"]
    assert parse_entries("") == [] and parse_entries(" \n \t") == []


def test_bare_section_sign_inside_an_entry_survives():
    assert parse_entries("Use § 4.2 of the spec\n§\nx§y") == ["Use § 4.2 of the spec", "x§y"]


def test_duplicates_are_dropped_keeping_the_first():
    assert parse_entries("same\n§\nsame\n§\ndifferent") == ["same", "different"]


def test_bom_is_tolerated():
    assert parse_entries("\ufefffirst\n§\nsecond") == ["first", "second"]


def test_serialize_has_no_header_and_no_trailing_newline():
    assert serialize(["first", "second"]) == "first\n§\nsecond"
    assert serialize([]) == ""
    assert parse_entries(serialize(["a\nmultiline", "b"])) == ["a\nmultiline", "b"]


def test_size_counts_delimiters_and_percent_is_floored_and_capped():
    assert size_of(["x" * 10] * 3) == 36
    assert size_of([]) == 0
    assert percent_of(1474, 2200) == 67
    assert percent_of(2199, 2200) == 99
    assert percent_of(5000, 2200) == 100
    assert percent_of(10, 0) == 0


def test_an_add_joins_the_store_into_one_text_once(tmp_path, monkeypatch):
    """An add counts the store it would leave once, for its limit (joining a few hundred entries is
    most of what counting costs; it was counted twice), and joins it once more, into the text it
    writes, whose length is the reply's usage (it joined the entries again for that)."""
    import engine.memory.format as format_module
    from engine import open_home
    from engine.tools import ToolContext

    home = open_home(tmp_path / "h")
    ctx = ToolContext(actor="user")
    for i in range(20):
        assert home.memory.add("memory", f"fact {i}", ctx)["success"]
    joined: list[int] = []
    real_serialize = format_module.serialize

    def serialize(entries):
        joined.append(len(entries))
        return real_serialize(entries)

    monkeypatch.setattr(format_module, "serialize", serialize)
    monkeypatch.setattr("engine.memory.store.serialize", serialize)
    done = home.memory.add("memory", "one more fact", ctx)
    assert done["success"] and joined == [21, 21]  # the limit's count, the text written
    assert done["usage"] == format_module.Usage(len(real_serialize(home.memory.entries("memory"))), 2200).text
    home.close()


def test_usage_strings_use_em_dash_and_thousands():
    usage = Usage(1474, 2200)
    assert usage.text == "67% — 1,474/2,200 chars"
    assert usage.short == "1,474/2,200"
    assert Usage(12345, 20000).text == "61% — 12,345/20,000 chars"


def test_render_block_exactly_like_hermes():
    entries = ["a" * 700, "b" * 771]  # 700 + 3 + 771 = 1,474 chars
    block = render_block("memory", entries, 2200)
    assert SEPARATOR == "═" * 46
    assert block == (
        f"{'═' * 46}\nMEMORY (your personal notes) [67% — 1,474/2,200 chars]\n{'═' * 46}\n"
        + "a" * 700
        + "\n§\n"
        + "b" * 771
    )
    user = render_block("user", ["Name: Ada"], 1375)
    assert user.splitlines()[1] == "USER PROFILE (who the user is) [0% — 9/1,375 chars]"
    assert not user.endswith("\n")
    assert render_block("memory", [], 2200) == ""


def test_drift_detection():
    assert not has_drift("", 100) and not has_drift("a\n§\nb", 100)
    assert not has_drift("\ufeffa\n§\nb", 100)
    assert not has_drift("a\n\n§\n\nb\n", 100), "blank lines around § are cosmetic, not drift"
    assert not has_drift("a\u3000\u2028\n§\n\u00a0b", 100), "so is any script's whitespace around an entry"
    assert has_drift("a\n§\n\u3000\n§\nb", 100), "an entry of ideographic spaces would vanish on rewrite"
    assert not has_drift("a\r\n§\r\nb\r\n§\r\nc", 100), "CRLF delimiters: read translated, three entries"
    assert not has_drift("a\r§\rb", 100), "lone CR delimiters: Hermes's universal newlines read two entries"
    assert not has_drift("line one\rline two", 100), "CR inside one entry: both read one entry"
    assert has_drift("a\r\n § \r\nb", 100), "a look-alike '§' in a CRLF file is drift as in an LF one"
    assert has_drift("a\r\n§\r\n\r\n§\r\nb", 100), "so is an empty entry"
    assert has_drift("a\n § \nb", 100), "a line that reads as § but is not the delimiter"
    assert not has_drift("same\n§\nsame", 100), "an identical duplicate loses nothing"
    assert has_drift("a\n§\n\n§\nb", 100), "an empty entry would vanish on rewrite"
    assert has_drift("short\n§\n" + "appended free text " * 10, 100), "an entry longer than the whole limit"


# -- reading the blocks back out of a system prompt -------------------------------------------------------------
_HEADER_LIKE = [f"{SEPARATOR}\n{title} [1% — 9/99 chars]\n{SEPARATOR}\n" for title in BLOCK_TITLES.values()]
_piece = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30),
    st.sampled_from(["§", "\n§\n", "\n\n", "═" * 46, "[", "] chars", *_HEADER_LIKE]),
)
_entry = (
    st.lists(_piece, min_size=1, max_size=5)
    .map("".join)
    .map(str.strip)
    .filter(lambda e: e and not breaks_delimiter(e) and first_threat_message(e) is None)
)
_store = st.lists(_entry, max_size=6, unique=True)


@settings(max_examples=200, deadline=None)
@given(memory=_store, user=_store, memory_limit=st.integers(1, 100_000), user_limit=st.integers(1, 100_000))
def test_rendered_blocks_parse_back_to_the_same_entries_and_limits(memory, user, memory_limit, user_limit):
    prompt = "\n\n".join(
        part
        for part in (
            "You are an agent.",
            render_block("memory", memory, memory_limit),
            render_block("user", user, user_limit),
            "## Skills\n- none",
        )
        if part
    )
    blocks = parse_blocks(prompt)
    expected = {
        target: (entries, limit)
        for target, entries, limit in (("memory", memory, memory_limit), ("user", user, user_limit))
        if entries
    }
    assert blocks == expected
    assert frozen_entries(prompt) == [(t, e) for t, (entries, _) in expected.items() for e in entries]


def test_a_prompt_without_blocks_has_none():
    assert parse_blocks("You are an agent.\n\n" + _HEADER_LIKE[0].replace("[1%", "(1%")) == {}


# Texts made of the characters a file's reading turns on: the delimiter's, blanks, line endings, a BOM.
_raw_text = st.text(alphabet=["a", "b", " ", "\t", "\n", "\r", "§", "\ufeff", "é"], max_size=14)
_stored = st.lists(_raw_text, min_size=1, max_size=4).map(ENTRY_DELIMITER.join)


@settings(max_examples=600, deadline=None)
@given(
    raw=st.one_of(_raw_text, _stored),
    tail=st.one_of(_raw_text, _stored, st.lists(_entry, min_size=1, max_size=3).map(ENTRY_DELIMITER.join)),
    joined=st.booleans(),
)
def test_entries_appended_to_a_text_read_as_the_whole_text_is(raw, tail, joined):
    """Reading only what was appended gives the entries reading the whole text gives, or nothing."""
    text = raw + ENTRY_DELIMITER + tail if joined else raw + tail
    found = appended_entries(raw, read_as_hermes(raw), text)
    if found is not None:
        assert found == read_as_hermes(text)


def test_appending_plain_entries_is_read_without_reading_the_file_again():
    raw = serialize(["one", "two § three"])
    assert appended_entries(raw, ["one", "two § three"], raw + ENTRY_DELIMITER + "four") == [
        "one",
        "two § three",
        "four",
    ]
    # what reading would change (or split otherwise) is left to a whole reading
    for tail in ("one", " four", "four\r\nfive", "four" + ENTRY_DELIMITER + "four", ""):
        assert appended_entries(raw, ["one", "two § three"], raw + ENTRY_DELIMITER + tail) is None
    assert appended_entries("one\n§", ["one\n§"], "one\n§" + ENTRY_DELIMITER + "two") is None


def test_a_similar_entry_in_the_last_ones_place_is_guessed_a_replace():
    old, new = ["Kept", "Loop note 71 at 10:00"], ["Kept", "Loop note 125 at 10:05"]
    assert entry_changes(old, new) == [("replace", old[1], new[1], 1)]
    unlike = ["Kept", "Quarterly audits in March"]
    assert entry_changes(old, unlike) == [("remove", old[1], None, 1), ("add", None, unlike[1], 1)]
