"""Hermes's own ``memory`` removes (real Hermes Agent 0.19.0, its own process) as writes, and the
origin of an entry they took away.

A remove is a write like an add: a transcript must list it. And an entry Hermes added, then
removed, still came from the message that added it, not from "present before".
"""

from __future__ import annotations

import json
import subprocess

import pytest

from engine import open_home
from engine.memory.archive_writes import writes_in
from engine.memory.history import entry_history, origin
from engine.session_writes import session_wrote
from tests.cli_support import printed
from tests.hermes_support import MEMORY_TURNS, workbench_cmd

pytestmark = pytest.mark.slow  # Hermes's code runs in its own processes

MEETING = "東京の会議は毎週月曜日"

# PART is prepended: "add" writes the entries, "remove" takes some out (a remove alone, then a batch).
HERMES_REMOVALS = (
    MEMORY_TURNS
    + r"""
if PART == "add":
    db.create_session("ja-tokyo", source="cli", model="m")
    turn("ja-tokyo", "meeting", {"action": "add", "content": "東京の会議は毎週月曜日"})
    turn("ja-tokyo", "staging", {"action": "add", "content": "Staging host is staging-3"})
    turn("ja-tokyo", "notes", {"action": "add", "content": "Keeps notes in English"})
else:
    turn("ja-tokyo", "forget", {"action": "remove", "old_text": "東京の会議"})
    db.create_session("ja-later", source="cli", model="m")
    turn("ja-later", "batch", {"operations": [{"action": "remove", "old_text": "notes in"},
                                              {"action": "remove", "old_text": "staging-3"},
                                              {"action": "add", "content": "Staging host is staging-4"}]})
print(json.dumps(ids))
"""
)


def hermes_writes(hermes, root, part):
    return hermes.json(root, f"PART = {part!r}\n" + HERMES_REMOVALS)


def workbench_json(*args):
    """What ``workbench ARGS --json`` answers, run in this process (Hermes's writes are its own processes')."""
    return json.loads(printed(*args, "--json"))


def test_hermes_removes_are_listed_as_the_writes_of_their_messages(hermes, tmp_path):
    root = tmp_path / "hermes"
    root.mkdir()
    added = hermes_writes(hermes, root, "add")
    removed = hermes_writes(hermes, root, "remove")
    shown = workbench_json("sessions", "show", "ja-tokyo", "--home", str(root))
    writes = {m["id"]: [(w["action"], w["target"], w["text"]) for w in m["writes"]] for m in shown["messages"]}
    assert writes[added["meeting"]] == [("add", "memory", MEETING)]
    assert writes[removed["forget"]] == [("remove", "memory", MEETING)]  # the entry the add wrote, not "東京の会議"
    later = workbench_json("sessions", "show", "ja-later", "--home", str(root))
    batch = next(m for m in later["messages"] if m["id"] == removed["batch"])
    assert [(w["action"], w["text"]) for w in batch["writes"]] == [
        ("remove", "notes in"),  # no earlier write in this session says which entry: the call's old_text
        ("remove", "staging-3"),
        ("add", "Staging host is staging-4"),
    ]
    text = subprocess.run(
        workbench_cmd("sessions", "show", "ja-tokyo", "--home", str(root)), capture_output=True, text=True, timeout=60
    )
    assert f"↳ memory remove (memory): {MEETING}" in text.stdout
    home = open_home(root, read_only=True)
    try:
        messages = home.archive.tool_messages("ja-tokyo", "memory")
        assert [(w.action, w.text, w.old_text) for w in writes_in(messages)[removed["forget"]]] == [
            ("remove", MEETING, "東京の会議")
        ]
        assert session_wrote(home, "ja-later")
    finally:
        home.close()


@pytest.mark.parametrize("seen_first", ["before the add", "after the add"])
def test_an_entry_hermes_removed_keeps_the_message_that_added_it(hermes, tmp_path, seen_first):
    """The workbench journals Hermes's changes as ``external`` rows when it sees the file: the
    removal row used to hide the add, and the origin fell back to "present before"."""
    root = tmp_path / "watched"
    root.mkdir()
    home = open_home(root)
    try:
        if seen_first == "before the add":
            assert home.memory.add("memory", "Seeded entry")["success"]
        added = hermes_writes(hermes, root, "add")
        assert home.memory.record_external_change("memory")
        removed = hermes_writes(hermes, root, "remove")
        assert home.memory.record_external_change("memory")
        assert MEETING not in home.memory.entries("memory")
    finally:
        home.close()
    found = workbench_json("memory", "history", "--home", str(root), "--entry", MEETING)
    origin = found["origin"]
    assert (origin["via"], origin["actor"], origin["session_id"], origin["message_id"]) == (
        # (seen before it, the add's call is replayed and its row names it; else the first look found it)
        "journal" if seen_first == "before the add" else "archive",
        "agent",
        "ja-tokyo",
        added["meeting"],
    )
    removal = next(e for e in found["events"] if e["action"] == "remove")
    assert (removal["actor"], removal["session_id"], removal["message_id"]) == (
        "agent",  # (its call found: the agent's, as the origin says, though journaled external)
        "ja-tokyo",
        removed["forget"],
    )
    for name, entry in (("staging", "Staging host is staging-3"), ("notes", "Keeps notes in English")):
        batch = workbench_json("memory", "history", "--home", str(root), "--entry", entry)
        assert batch["origin"]["message_id"] == added[name]
        taken = [e for e in batch["events"] if e["before"] == entry]  # a remove, or a replace by staging-4
        assert [(e["session_id"], e["message_id"]) for e in taken] == [("ja-later", removed["batch"])]


# -- labels a person's own edits keep (engine-written Hermes-shaped rows: the matching logic alone) --
class _Home:
    """A home whose MEMORY.md a person edits and a Hermes-shaped session writes, looked at after each step."""

    def __init__(self, tmp_path):
        from engine import FixedClock

        self.clock = FixedClock(1796040000.0)
        self.home = open_home(tmp_path / "h", clock=self.clock)
        self.home.archive.create_session("hs", source="cli")

    def file(self, *entries: str) -> None:
        path = self.home.memory.path("memory")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n§\n".join(entries), encoding="utf-8")
        self.home.memory.record_external_change("memory")

    def hermes(self, arguments: dict) -> int:
        call = {
            "id": f"c{self.clock.now()}",
            "type": "function",
            "function": {"name": "memory", "arguments": json.dumps(arguments)},
        }
        return self.home.archive.append_messages(
            "hs",
            [
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {
                    "role": "tool",
                    "content": json.dumps({"success": True}),
                    "tool_name": "memory",
                    "tool_call_id": call["id"],
                },
            ],
        )[0]


def test_a_persons_removal_of_another_entry_with_the_same_words_is_not_hermess(tmp_path):
    """One Hermes remove (old_text 'tea') was credited to a person's later removal of 'Team tea is at 4pm' too."""
    h = _Home(tmp_path)
    h.file("User likes tea", "Other fact")
    h.clock.advance(10)
    removed_by = h.hermes({"action": "remove", "old_text": "tea"})
    h.clock.advance(5)
    h.file("Other fact")
    h.clock.advance(60)
    h.file("Other fact", "Team tea is at 4pm")
    h.clock.advance(120)
    h.file("Other fact")
    mem = h.home.memory
    [hermes_row] = [r for r in entry_history(mem, "memory", "User likes tea") if r.action == "remove"]
    [person_row] = [r for r in entry_history(mem, "memory", "Team tea is at 4pm") if r.action == "remove"]
    assert (hermes_row.session_id, hermes_row.message_id) == ("hs", removed_by)
    assert (person_row.session_id, person_row.message_id) == (None, None)
    h.home.close()


def test_a_removed_entry_keeps_the_origin_it_had_while_it_lived(tmp_path):
    """Hermes added and removed X; a day later a person typed X back and then removed it: the removed
    entry was credited to Hermes's add of the day before, though while it lived it was the person's."""
    h = _Home(tmp_path)
    entry = "Deploys go out on Fridays"
    h.file("Other fact")
    h.clock.advance(10)
    h.hermes({"action": "add", "content": entry})
    h.clock.advance(5)
    h.file("Other fact", entry)
    h.clock.advance(10)
    h.hermes({"action": "remove", "old_text": "Fridays"})
    h.clock.advance(5)
    h.file("Other fact")
    h.clock.advance(86400)
    h.file("Other fact", entry)
    live = origin(h.home.memory, "memory", entry)
    h.clock.advance(3600)
    h.file("Other fact")
    removed = origin(h.home.memory, "memory", entry)
    assert (live.via, live.actor, live.message_id) == ("journal", "external", None)
    assert (removed.via, removed.actor, removed.message_id) == (live.via, live.actor, live.message_id)
    h.home.close()
