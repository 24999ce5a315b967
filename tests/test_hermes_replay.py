"""The catch-up replays Hermes Agent 0.19.0's stored memory calls (its own code, in its own process) on the
file the journal last left: each call that applies is an agent row, and only what they do not explain is
an outside edit.

Before, the look compared the journal's last file with the one on disk: a note Hermes added and removed
while no workbench looked left no row at all, though state.db held both calls.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_support import printed
from tests.hermes_support import MEMORY_TURNS, write_from_another_process
from tests.test_hermes_catch_up import loop_notes_on_timeline

pytestmark = pytest.mark.slow  # Hermes's code runs in its own processes

SEED = "Project uses PostgreSQL\n§\nDeploys on Fridays"
NOTE = "Loop note 7 about the build cache"

# Hermes's turns in session s-live (each a stored call and its real result), then a print of their ids.
# EDIT, when given, is a hand edit of MEMORY.md (old text -> new) made between the turns FIRST and THEN.
TURNS = (
    MEMORY_TURNS
    + r"""
import pathlib
db.create_session("s-live", source="cli", model="m")
for name, arguments in FIRST:
    turn("s-live", name, arguments)
if EDIT:
    path = pathlib.Path(store._path_for("memory"))
    path.write_text(path.read_text(encoding="utf-8").replace(*EDIT), encoding="utf-8")
for name, arguments in THEN:
    turn("s-live", name, arguments)
print(json.dumps(ids))
"""
)

ADD = ("add", {"action": "add", "content": NOTE})
DROP = ("drop", {"action": "remove", "old_text": "Loop note 7"})


def hermes_turns(hermes, root: Path, first, then=(), edit=None) -> dict:
    return hermes.json(root, f"FIRST, THEN, EDIT = {list(first)!r}, {list(then)!r}, {edit!r}\n" + TURNS)


def history(root: Path) -> list[tuple]:
    """The memory rows ``memory history`` lists (it catches up first), oldest first, past the first look."""
    events = json.loads(printed("memory", "history", "--home", str(root), "--json"))["events"]
    rows = [(e["actor"], e["action"], e["before"], e["after"], e["message_id"]) for e in reversed(events)]
    assert rows[0][:2] == ("external", "seen")
    return rows[1:]


def looked_at_seed(tmp_path: Path) -> Path:
    root = tmp_path / "home"
    write_from_another_process(root / "memories" / "MEMORY.md", SEED)
    assert history(root) == []
    return root


def test_a_note_hermes_added_and_removed_between_looks_is_two_agent_rows(hermes, tmp_path):
    root = looked_at_seed(tmp_path)
    ids = hermes_turns(hermes, root, [ADD, DROP])
    assert (root / "memories" / "MEMORY.md").read_text(encoding="utf-8") == SEED  # (the file is as it was)
    assert history(root) == [
        ("agent", "add", None, NOTE, ids["add"]),
        ("agent", "remove", NOTE, None, ids["drop"]),
    ]
    assert history(root)[-1] == ("agent", "remove", NOTE, None, ids["drop"])  # a second look repeats neither


def test_a_hand_edit_between_hermess_calls_is_the_one_outside_row(hermes, tmp_path):
    """Hermes adds a note, a person rewords an entry holding the text Hermes's remove names, Hermes removes
    its note: the remove is the note's, and the person's edit one replace, not a remove and an add."""
    root = looked_at_seed(tmp_path)
    edited = "Deploys on Fridays, never Loop note 7 days"
    ids = hermes_turns(
        hermes, root, [ADD], [("drop", {"action": "remove", "old_text": NOTE})], ("Deploys on Fridays", edited)
    )
    assert history(root) == [
        ("agent", "add", None, NOTE, ids["add"]),
        ("agent", "remove", NOTE, None, ids["drop"]),
        ("external", "replace", "Deploys on Fridays", edited, None),
    ]


@pytest.mark.parametrize("between", ["look", "write"])
def test_a_call_a_look_journaled_is_not_replayed_again(hermes, tmp_path, between):
    """The next look reads Hermes's calls again (they go back a minute before the journal's last row), after
    the workbench's own write or none, and a person's note holding the text Hermes's remove names: replayed
    again, the add and the remove were journaled twice."""
    root = looked_at_seed(tmp_path)
    ids = hermes_turns(hermes, root, [ADD, DROP])
    replayed = [("agent", "add", None, NOTE, ids["add"]), ("agent", "remove", NOTE, None, ids["drop"])]
    assert history(root) == replayed
    ours = []
    if between == "write":
        printed("memory", "add", "Workbench note", "--home", str(root))
        ours = [("user", "add", None, "Workbench note", None)]
    path = root / "memories" / "MEMORY.md"
    typed = "Loop note 7 again, typed by hand"
    write_from_another_process(path, path.read_text(encoding="utf-8") + "\n§\n" + typed)
    assert history(root) == [*replayed, *ours, ("external", "add", None, typed, None)]


def test_a_call_whose_text_the_journals_file_lacks_gives_no_row(hermes, tmp_path):
    """A person added a note no look saw and Hermes removed it: the replay cannot apply that remove to the
    journal's file (Hermes's tool would have failed it), so it is skipped; Hermes's own note still shows."""
    root = looked_at_seed(tmp_path)
    path = root / "memories" / "MEMORY.md"
    write_from_another_process(path, SEED + "\n§\nTyped by hand, never seen")
    ids = hermes_turns(hermes, root, [ADD, DROP, ("unseen", {"action": "remove", "old_text": "Typed by hand"})])
    assert path.read_text(encoding="utf-8") == SEED
    replayed = [("agent", "add", None, NOTE, ids["add"]), ("agent", "remove", NOTE, None, ids["drop"])]
    assert history(root) == replayed
    # a skipped call stays skipped: within the minute the next looks read it again, and it held the
    # person's next note, so their edit of it was split into Hermes's remove and an add
    again, edited = "Typed by hand again", "Typed by hand again, and edited"
    write_from_another_process(path, SEED + "\n§\n" + again)
    history(root)
    write_from_another_process(path, SEED + "\n§\n" + edited)
    assert history(root)[len(replayed) :] == [
        ("external", "add", None, again, None),
        ("external", "replace", again, edited, None),
    ]


@pytest.mark.anyio
async def test_the_timeline_shows_the_replayed_calls(hermes, tmp_path):
    root = looked_at_seed(tmp_path)
    hermes_turns(hermes, root, [ADD, DROP])
    notes = await loop_notes_on_timeline(root, tmp_path, lambda notes: len(notes) == 2)
    assert [(actor, note.split(" · ")[0]) for actor, note in notes] == [  # (each found later)
        ("agent", "MEMORY − 'Loop note 7 about the build cache'"),
        ("agent", "MEMORY + 'Loop note 7 about the build cache'"),
    ]


# Hermes stores a turn once it ends: STEP "tool" runs the memory call CALL alone (printing when and its
# result), STEP "store" stores the calls SAID ran as one turn afterwards, each message stamped when it ran.
LATE = (
    MEMORY_TURNS
    + r"""
import time
if STEP == "tool":
    print(json.dumps({"at": time.time(), "result": memory_tool(store=store, **CALL)}))
else:
    db.create_session("s-late", source="cli", model="m")
    db.append_message("s-late", "user", "note it, then forget it", timestamp=SAID[0][1]["at"])
    for i, (call, said) in enumerate(SAID):
        wire = {"id": f"call_{i}", "type": "function", "function": {"name": "memory", "arguments": json.dumps(call)}}
        ids[i] = db.append_message("s-late", "assistant", None, tool_calls=[wire], timestamp=said["at"])
        db.append_message("s-late", "tool", said["result"], tool_name="memory", tool_call_id=f"call_{i}")
    print(json.dumps(list(ids.values())))
"""
)


def test_calls_stored_after_the_looks_that_journaled_their_work_are_not_replayed(hermes, tmp_path):
    """The TUI's watcher journaled Hermes's add and remove as they landed, before Hermes stored the turn:
    the next look read both calls, found the note absent from the journal's file and journaled it added
    and removed a second time."""
    root = looked_at_seed(tmp_path)
    said = []
    for call in (ADD[1], DROP[1]):
        said.append((call, hermes.json(root, f"STEP, CALL = 'tool', {call!r}\n" + LATE)))
        history(root)  # the watcher's look, before the turn is stored
    outside = [("external", "add", None, NOTE, None), ("external", "remove", NOTE, None, None)]
    assert history(root) == outside
    added, dropped = hermes.json(root, f"STEP, SAID = 'store', {said!r}\n" + LATE)
    path = root / "memories" / "MEMORY.md"
    write_from_another_process(path, SEED + "\n§\nTyped by hand")
    assert history(root) == [  # (the outside rows now credited to the calls stored since)
        ("agent", "add", None, NOTE, added),
        ("agent", "remove", NOTE, None, dropped),
        ("external", "add", None, "Typed by hand", None),
    ]


def test_a_call_a_look_weighed_and_skipped_stays_skipped_after_a_write_of_ours(hermes, tmp_path):
    """Hermes removed a note no look saw (skipped: the journal's file lacks it), then the user adds a note
    holding the text that remove names, in the workbench: the write's row says nothing of Hermes's calls,
    and the next look, reading them again within the minute, applied the skipped remove to the user's note:
    "Hermes removed it", and an outside edit put it back."""
    root = looked_at_seed(tmp_path)
    path = root / "memories" / "MEMORY.md"
    write_from_another_process(path, SEED + "\n§\nTyped by hand, never seen")
    ids = hermes_turns(hermes, root, [ADD, DROP, ("unseen", {"action": "remove", "old_text": "Typed by hand"})])
    replayed = [("agent", "add", None, NOTE, ids["add"]), ("agent", "remove", NOTE, None, ids["drop"])]
    assert history(root) == replayed
    ours = "Typed by hand later, in the workbench"
    printed("memory", "add", ours, "--home", str(root))
    assert history(root) == [*replayed, ("user", "add", None, ours, None)]
    assert ours in path.read_text(encoding="utf-8")


def test_a_remove_hermes_made_before_a_note_of_ours_never_takes_that_note(hermes, tmp_path):
    """No look weighed Hermes's remove (the file was as the journal left it again: a person's note no look
    saw, and Hermes's remove of it), and the user then added a note holding the text it names: the next
    look applied that remove, made before the note was, to the note."""
    root = looked_at_seed(tmp_path)
    path = root / "memories" / "MEMORY.md"
    write_from_another_process(path, SEED + "\n§\nTyped by hand, never seen")
    hermes_turns(hermes, root, [("unseen", {"action": "remove", "old_text": "Typed by hand"})])
    ours = "Typed by hand later, in the workbench"
    printed("memory", "add", ours, "--home", str(root))
    assert history(root) == [("user", "add", None, ours, None)]
    assert ours in path.read_text(encoding="utf-8")


def test_the_first_look_weighs_the_calls_that_wrote_the_file_it_saw(hermes, tmp_path):
    """A user trial: Hermes wrote a note and reworded it, and the workbench first looked within the minute.
    The first look saw the reworded note only, as present before; the next look replayed both calls on it
    anyway, so the journal said Hermes added the old wording again and an outside edit removed it."""
    root = tmp_path / "home"
    root.mkdir()
    reworded = "Loop note 7 about the build cache, kept a week"
    hermes_turns(hermes, root, [ADD, ("reword", {"action": "replace", "old_text": "Loop note 7", "content": reworded})])
    assert history(root) == []
    later = "Loop note 8 about the test shards"
    ids = hermes_turns(hermes, root, [("later", {"action": "add", "content": later})])
    assert history(root) == [("agent", "add", None, later, ids["later"])]
    assert (root / "memories" / "MEMORY.md").read_text(encoding="utf-8") == f"{reworded}\n§\n{later}"


def test_a_first_look_at_a_file_hermes_emptied_weighs_the_calls_that_emptied_it(hermes, tmp_path):
    """The same for a store the first look finds empty (seen without the lock): Hermes's add and remove
    before it were replayed on the empty baseline, as an add and a remove no look could have missed."""
    root = tmp_path / "home"
    root.mkdir()
    hermes_turns(hermes, root, [ADD, DROP])

    def rows() -> list[tuple]:  # (a look at an empty store: its seen row names no entry, so none is listed)
        events = json.loads(printed("memory", "history", "--home", str(root), "--json"))["events"]
        return [(e["actor"], e["action"], e["before"], e["after"], e["message_id"]) for e in reversed(events)]

    assert rows() == []
    later = "Loop note 8 about the test shards"
    ids = hermes_turns(hermes, root, [("later", {"action": "add", "content": later})])
    assert rows() == [("agent", "add", None, later, ids["later"])]
