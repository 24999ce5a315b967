"""The real Hermes agent on a repaired file. Before the repair Hermes reads a merged paste as one
entry (its own drift guard does not see it, so its remove would take the neighbour too; ours
refuses) and a CRLF file as a person does (it reads text with line endings translated); after
it, Hermes reads the entries a person sees and its remove takes only the one entry."""

from __future__ import annotations

import json

import pytest

from tests.cli_support import completed

pytestmark = pytest.mark.slow

MERGED = "alpha fact\n§\nbeta fact\n § \ngamma fact\n§\ndelta fact"
CRLF = b"Name is Sam\r\n\xc2\xa7\r\nWorks in UTC"

HERMES = """
import json, sys
from tools.memory_tool import MemoryStore
store = MemoryStore()
store.load_from_disk()
seen = {{"memory": list(store.memory_entries), "user": list(store.user_entries)}}
print(json.dumps({{"seen": seen, "remove": store.remove("memory", "gamma") if {remove} else None}}))
"""


def repair(home, *args: str) -> dict:
    """``workbench memory repair ARGS --json``, run in this process (what it answers is the subject)."""
    proc = completed("memory", "repair", *args, "--home", str(home), "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def test_hermes_reads_a_repaired_file_as_a_person_does(hermes, tmp_path):
    home = tmp_path / "home"
    (home / "memories").mkdir(parents=True)
    memory, user = home / "memories" / "MEMORY.md", home / "memories" / "USER.md"
    memory.write_text(MERGED, encoding="utf-8")
    user.write_bytes(CRLF)
    before = hermes.json(home, HERMES.format(remove=False))
    assert before["seen"] == {
        "memory": ["alpha fact", "beta fact\n § \ngamma fact", "delta fact"],
        "user": ["Name is Sam", "Works in UTC"],
    }
    listed = repair(home)
    assert [r["kind"] for r in listed["memory"]["reasons"]] == ["lookalike"]
    assert [r["kind"] for r in listed["user"]["reasons"]] == ["crlf"]
    split = listed["memory"]["repairs"][0]["option"].split()
    assert repair(home, "--target", "memory", *split)["success"]
    assert repair(home, "--target", "user", "--normalise-line-endings")["success"]
    after = hermes.json(home, HERMES.format(remove=True))
    assert after["seen"] == {
        "memory": ["alpha fact", "beta fact", "gamma fact", "delta fact"],
        "user": ["Name is Sam", "Works in UTC"],
    }
    assert after["remove"]["success"], after["remove"]
    assert memory.read_text(encoding="utf-8") == "alpha fact\n§\nbeta fact\n§\ndelta fact"


HERMES_ADDS = """
import json
from tools.memory_tool import MemoryStore
store = MemoryStore()
store.load_from_disk()
print(json.dumps({"chars": store._char_count("memory"), "add": store.add("memory", "Deploys on Fridays")}))
"""


def test_the_trim_on_offer_leaves_a_store_hermes_adds_to(hermes, tmp_path):
    """Text appended to MEMORY.md by hand, without a delimiter: the trim offered kept the entry's first
    2,200 chars, the whole limit, so with the other entries and the delimiters between them (Hermes
    counts both) the store stayed over it, and Hermes refused every add. The trim on offer now leaves
    the store under its limit, with room for the next fact."""
    home = tmp_path / "home"
    (home / "memories").mkdir(parents=True)
    memory = home / "memories" / "MEMORY.md"
    pasted = "Pasted notes about the deploy pipeline and its many stages. " * 40
    memory.write_text("User deploys with make deploy-staging\n§\nUses uv\n§\nLikes tea\n" + pasted, encoding="utf-8")
    listed = repair(home, "--target", "memory")
    [trim] = [r for r in listed["repairs"] if r["kind"] == "trim"]
    assert "with room for new entries" in trim["label"], trim
    dry = repair(home, "--target", "memory", *trim["option"].split(), "--dry-run")
    assert dry["left_after"] == [] and dry["over_limit_after"] is None
    made = repair(home, "--target", "memory", *trim["option"].split())
    assert made["success"] and made["over_limit"] is None and not made["drifted"]
    after = hermes.json(home, HERMES_ADDS)
    assert after["chars"] <= 2200 - 220 and after["add"]["success"], after


def test_a_lone_cr_file_reads_as_hermes_reads_it_once_normalised(hermes, tmp_path):
    home = tmp_path / "home"
    (home / "memories").mkdir(parents=True)
    user = home / "memories" / "USER.md"
    user.write_bytes(b"Name is Sam\r\xc2\xa7\rWorks in UTC")  # classic Mac line endings
    before = hermes.json(home, HERMES.format(remove=False))
    assert before["seen"]["user"] == ["Name is Sam", "Works in UTC"]  # universal newlines: two entries
    listed = repair(home)
    assert [r["kind"] for r in listed["user"]["reasons"]] == ["crlf"]
    assert listed["user"]["drifted"] is False  # read translated, as Hermes reads it: nothing is refused
    assert repair(home, "--target", "user", "--normalise-line-endings")["success"]
    assert user.read_bytes() == b"Name is Sam\n\xc2\xa7\nWorks in UTC"
    assert hermes.json(home, HERMES.format(remove=False))["seen"]["user"] == ["Name is Sam", "Works in UTC"]
    assert repair(home)["user"]["reasons"] == []


HERMES_BLOCK = """
import json
from tools.memory_tool import MemoryStore
store = MemoryStore()
store.load_from_disk()
print(json.dumps({"block": store.format_for_system_prompt("memory")}))
"""


def test_a_byte_order_mark_that_makes_hermes_block_entry_one_is_found_and_removed(hermes, tmp_path):
    """Hermes reads a leading U+FEFF into entry 1 and blocks it from the prompt; the workbench
    reads past it. doctor says so and its fix removes the mark, journaled and undoable."""
    home = tmp_path / "home"
    (home / "memories").mkdir(parents=True)
    memory = home / "memories" / "MEMORY.md"
    memory.write_bytes(b"\xef\xbb\xbfNever deploy on Fridays\n\xc2\xa7\nsecond entry")
    before = hermes.json(home, HERMES_BLOCK)["block"]
    assert "Never deploy on Fridays" not in before and "BLOCKED" in before and "second entry" in before
    frozen = completed("memory", "show", "--frozen", "--json", "--home", str(home))
    ours = json.loads(frozen.stdout)["memory"]  # what a new session gets: the same block as Hermes's
    assert ours["blocked"] == 1 and "Never deploy on Fridays" not in ours["rendered"]
    listed = repair(home)
    assert [r["kind"] for r in listed["memory"]["reasons"]] == ["bom"]
    assert listed["memory"]["repairs"][0]["option"] == "--remove-bom"
    doctor = completed("doctor", "--home", str(home))
    assert "starts with a byte-order mark" in doctor.stdout + doctor.stderr
    fixed = completed("doctor", "--fix", "--home", str(home))
    assert "Removed the byte-order mark of MEMORY.md" in fixed.stdout + fixed.stderr
    assert memory.read_bytes() == b"Never deploy on Fridays\n\xc2\xa7\nsecond entry"
    assert "Never deploy on Fridays" in hermes.json(home, HERMES_BLOCK)["block"]
    history = completed("memory", "history", "--home", str(home))
    assert "- <U+FEFF>Never deploy on Fridays" in history.stdout  # shown, never an invisible character


HERMES_WRITES = """
import json
from tools.memory_tool import MemoryStore
store = MemoryStore()
store.load_from_disk()
print(json.dumps({call}))
"""

WRITES = {  # the same write by each program: Hermes's call, then our command's arguments
    "add": ('store.add("memory", "Deploys on Thursdays")', ["add", "Deploys on Thursdays"]),
    "replace": (
        'store.replace("memory", "works late", "Name is Sam\\nworks early")',
        ["replace", "--old", "works late", "Name is Sam\nworks early"],
    ),
    "remove": ('store.remove("memory", "UTC")', ["remove", "--old", "UTC"]),
}


@pytest.mark.parametrize("endings", [b"\r\n", b"\r"])
@pytest.mark.parametrize("write", sorted(WRITES))
def test_a_write_to_a_crlf_file_gives_the_bytes_hermes_gives(hermes, tmp_path, endings, write):
    """Hermes translates line endings as it reads and writes LF; our add, replace and remove come out
    byte for byte the same (replace and remove were refused until the file was normalised)."""
    original = endings.join([b"Name is Sam", b"works late", "§".encode(), b"Works in UTC", "§".encode(), b"Likes tea"])
    call, args = WRITES[write]
    files = {}
    for who in ("hermes", "workbench"):
        home = tmp_path / who
        (home / "memories").mkdir(parents=True)
        (home / "memories" / "MEMORY.md").write_bytes(original)
        if who == "hermes":
            assert hermes.json(home, HERMES_WRITES.format(call=call))["success"]
        else:
            proc = completed("memory", *args, "--home", str(home), "--json")
            assert proc.returncode == 0, proc.stdout + proc.stderr
            assert "written back with LF" in json.loads(proc.stdout)["line_endings"]
        files[who] = (home / "memories" / "MEMORY.md").read_bytes()
    assert files["workbench"] == files["hermes"]
    assert b"\r" not in files["workbench"]
    assert files["workbench"].count("§".encode()) == {"add": 3, "replace": 2, "remove": 1}[write]


def test_a_crlf_file_freezes_and_checks_as_hermes_reads_it(hermes, tmp_path):
    """Hermes translates line endings as it reads, so a CRLF file's entries reach its prompt clean:
    our frozen snapshot and doctor read them the same way (they saw one entry full of U+000D,
    froze it as [BLOCKED] and advised removing it)."""
    home = tmp_path / "home"
    (home / "memories").mkdir(parents=True)
    (home / "memories" / "MEMORY.md").write_bytes(CRLF + b"\r\n\xc2\xa7\r\nDeploys on Thursdays\r\nafter standup")
    block = hermes.json(home, HERMES_BLOCK)["block"]
    assert "BLOCKED" not in block and "Deploys on Thursdays\nafter standup" in block
    frozen = completed("memory", "show", "--frozen", "--json", "--home", str(home))
    ours = json.loads(frozen.stdout)["memory"]
    assert ours["blocked"] == 0 and "Deploys on Thursdays\nafter standup" in ours["rendered"]
    assert all(entry in ours["rendered"] for entry in ("Name is Sam", "Works in UTC"))
    doctor = completed("doctor", "--home", str(home))
    assert "CRLF line endings" in doctor.stdout + doctor.stderr
    assert "blocked from every prompt" not in doctor.stdout + doctor.stderr


HERMES_DRIFT = """
import json, os
from tools.memory_tool import MemoryStore, get_memory_dir
texts = json.loads(os.environ["TEXTS"])
path = get_memory_dir() / "MEMORY.md"
refused = []
for text in texts:
    path.write_text(text, encoding="utf-8")
    store = MemoryStore()
    store.load_from_disk()
    refused.append(store._detect_external_drift("memory") is not None)
for bak in get_memory_dir().glob("MEMORY.md.bak.*"):
    bak.unlink()
print(json.dumps(refused))
"""

SPACED = [
    "alpha fact\n§\n beta fact",  # a space before an entry (a trial's: Hermes refused, we said "round-trips")
    "alpha fact \n§\nbeta fact",
    "alpha fact\n\n§\nbeta fact",
    "\n\nalpha fact\n§\nbeta fact\n\n",  # the file's own two ends: Hermes strips them
    "alpha fact\n§\nbeta fact",
    "Hand-added entry\n§",  # a stray '§' line at the end: Hermes's check passes it
    "alpha\n§\n\n§\nbeta",  # an empty entry
    "alpha\n § \nbeta",  # a look-alike: Hermes reads one entry, and passes it
]


def test_what_the_workbench_says_hermes_refuses_is_what_hermes_refuses(hermes, tmp_path):
    """``Diagnosis.hermes_refuses`` against Hermes 0.19's own drift guard, file by file; then a
    spaced file trimmed by `memory repair --trim-spacing` takes Hermes's remove."""
    home = tmp_path / "home"
    (home / "memories").mkdir(parents=True)
    from engine.memory.repair import diagnose

    theirs = hermes.json(home, HERMES_DRIFT, extra_env={"TEXTS": json.dumps(SPACED)})
    ours = [diagnose("memory", text, 2200).hermes_refuses for text in SPACED]
    assert ours == theirs == [True, True, True, False, False, False, True, False]
    memory = home / "memories" / "MEMORY.md"
    memory.write_text("alpha fact\n§\n gamma fact\n§\nbeta fact", encoding="utf-8")
    listed = repair(home, "--target", "memory")
    assert [r["option"] for r in listed["repairs"]] == ["--trim-spacing"]
    assert repair(home, "--target", "memory", "--trim-spacing")["success"]
    after = hermes.json(home, HERMES.format(remove=True))
    assert after["remove"]["success"], after["remove"]
    assert memory.read_text(encoding="utf-8") == "alpha fact\n§\nbeta fact"


HERMES_LOADS = """
import json
from tools.memory_tool import MemoryStore
store = MemoryStore()
try:
    store.load_from_disk()
except UnicodeDecodeError as exc:
    print(json.dumps({"failed": str(exc)}))
else:
    print(json.dumps({"user": list(store.user_entries), "block": store.format_for_system_prompt("user"),
                      "add": store.add("user", "Drinks tea")}))
"""


def test_hermes_loads_a_file_that_was_not_utf8_once_its_bytes_are_replaced(hermes, tmp_path):
    """Hermes's own load fails on a USER.md with a Latin-1 byte in it (its sessions start with no memory,
    its tool fails on every write to the file); `doctor --fix` replaced nothing. After the repair Hermes
    loads the file, puts it in the prompt and adds to it, and the original bytes are in the kept copy."""
    home = tmp_path / "home"
    (home / "memories").mkdir(parents=True)
    user = home / "memories" / "USER.md"
    data = "Name is Sam\n§\n".encode() + b"Lives in K\xf6ln\n\xa7\nbroken \xff\xfe bytes"
    user.write_bytes(data)
    assert "can't decode byte 0xf6" in hermes.json(home, HERMES_LOADS)["failed"]
    fixed = completed("doctor", "--fix", "--home", str(home))
    assert "fixed: Replaced the bytes that are not UTF-8 of USER.md" in fixed.stdout, fixed.stdout + fixed.stderr
    after = hermes.json(home, HERMES_LOADS)
    assert after["user"] == ["Name is Sam", "Lives in K\ufffdln", "broken \ufffd\ufffd bytes"]  # (A7: a Latin-1 '§')
    assert "Lives in K\ufffdln" in after["block"] and after["add"]["success"], after
    [kept] = (home / "memories").glob("USER.md.not-utf8.*")
    assert kept.read_bytes() == data
