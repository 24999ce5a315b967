"""`workbench memory repair` as the CLI answers it (run in this process): the listing, a preview, a repair, its undo."""

import json

import pytest

MERGED = "alpha fact\n§\nbeta fact\n § \ngamma fact\n§\ndelta fact"
CRLF = b"Name is Sam\r\n\xc2\xa7\r\nWorks in UTC"


@pytest.fixture
def files(tmp_path):
    folder = tmp_path / "home" / "memories"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text(MERGED, encoding="utf-8")
    (folder / "USER.md").write_bytes(CRLF)
    return folder


def test_the_listing_names_each_cause_and_the_option_that_repairs_it(cli, files):
    listed = cli("memory", "repair", "--json")
    assert not (files.parent / "workbench.db").exists(), "the listing opens the home read-only"
    assert listed.returncode == 0
    data = json.loads(listed.stdout)
    memory, user = data["memory"], data["user"]
    assert memory["drifted"] and [(r["kind"], r["entry"], r["line"]) for r in memory["reasons"]] == [
        ("lookalike", 2, 4)
    ]
    assert [r["option"] for r in memory["repairs"]] == ["--split 2:4"]
    assert [r["option"] for r in user["repairs"]] == ["--normalise-line-endings"] and user["crlf"]
    text = cli("memory", "repair", "--target", "memory").stdout
    assert "at line 4 (' § ')" in text and "--split 2:4  Split entry 2 at line 4" in text


def test_a_preview_then_the_repair_it_names_then_undo(cli, files):
    preview = json.loads(cli("memory", "repair", "--json", "--split", "2:4", "--dry-run").stdout)
    assert preview["dry_run"] and preview["after"] == MERGED.replace(" § ", "§") and preview["reasons_after"] == []
    assert (files / "MEMORY.md").read_text(encoding="utf-8") == MERGED, "a dry run writes nothing"
    stale = cli("memory", "repair", "--json", "--split", "2:4", "--expect", "0" * 64)
    assert stale.returncode == 1 and "changed since it was listed" in json.loads(stale.stdout)["error"]
    done = cli("memory", "repair", "--json", "--split", "2:4", "--expect", preview["file_sha"])
    assert done.returncode == 0
    result = json.loads(done.stdout)
    assert result["success"] and result["entry_count"] == 4 and result["repair"]["option"] == "--split 2:4"
    listed = cli("memory", "history", "--target", "memory").stdout  # (a trial: every repair row read `repair`)
    assert "repair  memory  (Split entry 2 at line 4)" in listed
    assert cli("memory", "remove", "--old", "gamma").returncode == 0, "the repaired file takes a remove"
    assert cli("memory", "undo", str(result["event_id"])).returncode == 1, "undo waits for the file to be as left"
    cli(
        "memory",
        "undo",
        str(
            json.loads(cli("memory", "history", "--json", "--target", "memory", "--limit", "1").stdout)["events"][0][
                "id"
            ]
        ),
    )
    assert cli("memory", "undo", str(result["event_id"])).returncode == 0
    assert (files / "MEMORY.md").read_text(encoding="utf-8") == MERGED


def test_refusals_exit_1_with_json_and_bad_words_exit_2(cli, files):
    crlf_first = cli("memory", "repair", "--json", "--target", "user", "--remove", "1")
    assert crlf_first.returncode == 1 and "normalise the line endings first" in json.loads(crlf_first.stdout)["error"]
    missing = cli("memory", "repair", "--json", "--remove", "9")
    assert missing.returncode == 1 and "has no entry 9: it holds 3 pieces" in json.loads(missing.stdout)["error"]
    assert cli("memory", "repair", "--split", "2").returncode == 2
    assert cli("memory", "repair", "--dry-run").returncode == 2
    normalised = cli("memory", "repair", "--target", "user", "--normalise-line-endings")
    assert normalised.returncode == 0 and "undo: workbench memory undo " in normalised.stdout
    assert (files / "USER.md").read_bytes() == CRLF.replace(b"\r", b"")
    assert (files / "MEMORY.md").read_text(encoding="utf-8") == MERGED


def test_remove_bom_removes_the_mark_it_names(cli, files):
    """--remove-bom was read as no repair at all: it printed the listing and left the mark."""
    marked = files / "MEMORY.md"
    marked.write_bytes("\ufeffalpha fact\n§\nbeta fact".encode())
    done = cli("memory", "repair", "--json", "--remove-bom")
    assert done.returncode == 0 and json.loads(done.stdout)["repair"]["option"] == "--remove-bom"
    assert marked.read_bytes() == "alpha fact\n§\nbeta fact".encode()


def test_a_file_that_is_not_utf8_is_listed_with_its_bytes_repaired_and_undo_names_the_copy(cli, files):
    """`memory repair --target user` said only "Cannot read …: not valid UTF-8 (byte 18). Nothing was
    changed", and no option mended it."""
    data = "Name is Sam\n§\n".encode() + b"caf\xe9 \x1b]0;PWNED\x07 \xe2\x80\xae"
    (files / "USER.md").write_bytes(data)
    listed = cli("memory", "repair", "--target", "user")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert 'line 3 (entry 2), byte 18: E9 in "caf\\xe9 ␛]0;PWNED␇ <U+202E>"' in listed.stdout
    assert "\x1b" not in listed.stdout and "\u202e" not in listed.stdout
    doctor = cli("doctor").stdout
    assert 'byte 18: E9 in "caf\\xe9 ␛]0;PWNED␇ <U+202E>"' in doctor and "\x1b" not in doctor
    assert "--replace-invalid-bytes` (or r on the Memory screen)" in doctor
    assert "--replace-invalid-bytes  Replace the 1 byte that is not UTF-8 with U+FFFD" in listed.stdout
    found = json.loads(cli("memory", "repair", "--target", "user", "--json").stdout)
    assert found["not_utf8"] == [
        {"line": 3, "byte": 18, "hex": "E9", "context": "caf\\xe9 \x1b]0;PWNED\x07 \u202e", "entry": 2}
    ]
    preview = cli("memory", "repair", "--target", "user", "--replace-invalid-bytes", "--dry-run")
    assert (
        "undo cannot put back bytes that are not UTF-8" in preview.stdout and (files / "USER.md").read_bytes() == data
    )
    done = cli("memory", "repair", "--target", "user", "--replace-invalid-bytes", "--expect", found["file_sha"])
    assert done.returncode == 0, done.stdout + done.stderr
    [kept] = files.glob("USER.md.not-utf8.*")
    assert kept.read_bytes() == data and f"  kept: {kept}" in done.stdout and "undo: workbench" not in done.stdout
    assert (files / "USER.md").read_bytes() == data.decode("utf-8", "replace").encode()
    row = json.loads(cli("memory", "history", "--json", "--target", "user", "--limit", "1").stdout)["events"][0]
    undo = cli("memory", "undo", str(row["id"]), "--json")
    assert undo.returncode == 1 and f"kept byte for byte in {kept}" in json.loads(undo.stdout)["error"]


@pytest.mark.parametrize("ending", ["", "\r\n"])
def test_a_preview_parts_the_file_from_the_verdict_with_one_blank_line(cli, files, ending):
    """A file ending in a line break printed two blank lines after the preview of its repair: its own
    final line break ended the last line, and one more came before the verdict."""
    (files / "USER.md").write_bytes(CRLF + ending.encode())
    preview = cli("memory", "repair", "--target", "user", "--normalise-line-endings", "--dry-run")
    assert preview.returncode == 0
    assert "USER.md would read:\nName is Sam\n§\nWorks in UTC\n\nUSER.md round-trips" in preview.stdout


def test_keep_first_on_a_store_that_fits_its_limit_refuses_and_keeps_every_entry(cli, files):
    """`--keep-first 10` is the docs' repair for a file far over its limit; on a store that fits it removed
    the later entries, unasked, though the listing said there was nothing to repair."""
    fine = "\n§\n".join(f"fact number {n}" for n in range(1, 16))
    (files / "MEMORY.md").write_text(fine, encoding="utf-8")
    for extra in ((), ("--dry-run",)):
        done = cli("memory", "repair", "--target", "memory", "--keep-first", "10", "--json", *extra)
        assert done.returncode == 1
        error = json.loads(done.stdout)["error"]
        assert error.startswith("MEMORY.md fits its limit (") and "Nothing was changed" in error
        assert "`workbench memory remove --target memory --old TEXT`" in error
    assert (files / "MEMORY.md").read_text(encoding="utf-8") == fine
