"""What the Timeline says of the changes real Hermes Agent 0.19.0 made in its own process: a ``why`` on each
row the workbench found rather than made (how it knows, and the Hermes call behind it when state.db holds
one), and a replace Hermes made that reads on disk as a removed and an added entry journaled as one."""

from __future__ import annotations

import json
import re
import time

import pytest

from engine import FixedClock, open_home
from engine.timeline import Timeline, describe_group
from tests.cli_support import printed as workbench
from tests.hermes_support import MEMORY_TURNS
from tests.screens_seed import open_mode
from tests.test_tui_timeline import cursor_to, status_of
from tests.tui_support import make_app, settle, wait_for
from widgets.timeline_list import TimelineList
from workbench.screens.timeline import TimelineScreen

pytestmark = pytest.mark.slow  # Hermes's code runs in its own processes

# A Hermes process's skill changes: skill_turn(session, name, arguments) is the agent's skill_manage call in
# its turn, stored as Hermes stores one; hand_edit(skill) a person's edit of that SKILL.md.
SKILL_TURNS = r"""
import json, os, pathlib
from hermes_state import SessionDB
from tools.skill_manager_tool import skill_manage
db = SessionDB()

def skill_turn(session, name, arguments):
    call = {"id": "call_" + name, "type": "function",
            "function": {"name": "skill_manage", "arguments": json.dumps(arguments)}}
    db.append_message(session, "user", name)
    message = db.append_message(session, "assistant", None, tool_calls=[call])
    result = skill_manage(**arguments)
    db.append_message(session, "tool", result, tool_name="skill_manage", tool_call_id=call["id"])
    assert json.loads(result)["success"], result
    return message

def hand_edit(skill):
    path = pathlib.Path(os.environ["HERMES_HOME"], "skills", skill, "SKILL.md")
    path.write_text(path.read_text() + "Edited by hand.\n")
"""
# STEP is prepended; the workbench looks (``workbench timeline``) after each step
HERMES_STEPS = (
    MEMORY_TURNS
    + SKILL_TURNS
    + r"""
if STEP == "start":
    db.create_session("s-tea", source="cli", model="m")
    turn("s-tea", "kettle", {"action": "add", "target": "memory", "content": "Kettle descales monthly"})
    for old in ("s-old", "s-gone"):
        db.create_session(old, source="cli", model="m")
        db.append_message(old, "user", "hello from " + old)
elif STEP == "quiet add":  # no turn stored: state.db holds no call that wrote it
    memory_tool(store=store, action="add", target="memory", content="Prefers pytest over unittest")
elif STEP == "replace":  # the last entry, reworded past pairing on disk
    turn("s-tea", "cat", {"action": "replace", "target": "memory", "content": "Owns a cat called Miso",
                          "old_text": "pytest over"})
elif STEP == "remove and add":  # two calls, one look: on disk, the same as a replace of the last entry
    turn("s-tea", "forget", {"action": "remove", "target": "memory", "old_text": "cat called"})
    turn("s-tea", "lake", {"action": "add", "target": "memory", "content": "Lives near Lake Biwa"})
elif STEP == "quiet replace":
    memory_tool(store=store, action="replace", target="memory", content="Drinks sencha at noon",
                old_text="Lake Biwa")
elif STEP == "skill":
    content = "---\nname: tea-timer\ndescription: Time a brew\n---\n# Tea timer\n\nSteps.\n"
    assert json.loads(skill_manage("create", "tea-timer", content=content))["success"]
    assert db.set_session_archived("s-old", True) and db.delete_session("s-gone")
elif STEP == "skill turn":  # the agent's own skill_manage call, stored in its turn
    ids["kettle-care"] = skill_turn("s-tea", "kettle-care", {"action": "create", "name": "kettle-care", "content":
               "---\nname: kettle-care\ndescription: Descale the kettle\n---\n# Kettle care\n\nSteps.\n"})
elif STEP == "skill patch turn":
    ids["kettle-patch"] = skill_turn("s-tea", "kettle-patch", {"action": "patch", "name": "kettle-care", "old_string": "Steps.",
                                "new_string": "Descale monthly."})
elif STEP == "skill hand edit":  # an editor, minutes after the agent's patch: no call made it
    hand_edit("kettle-care")
print(json.dumps(ids))
"""
)
REWORDED = "MEMORY 'Prefers pytest over unittest' → 'Owns a cat called Miso'"  # the "replace" step's row
STEPS = (
    "start",
    "quiet add",
    "replace",
    "remove and add",
    "quiet replace",
    "skill",
    "skill turn",
    "skill patch turn",
    "skill hand edit",
)


@pytest.fixture(scope="module")
def written(hermes, tmp_path_factory):
    """A home Hermes wrote step by step, the workbench looking after each (its first look after the first):
    the root, and the assistant message of each turn."""
    root = tmp_path_factory.mktemp("hermes-why")
    messages: dict[str, int] = {}
    for step in STEPS:
        messages |= hermes.json(root, f"STEP = {step!r}\n" + HERMES_STEPS)
        workbench("timeline", "--home", str(root))
    return root, messages


def rows(root) -> list[dict]:
    return json.loads(workbench("timeline", "--home", str(root), "--json"))["rows"]


def row_of(root, summary: str) -> dict:
    return next(r for r in rows(root) if r["summary"] == summary)


def why_of(root, row: dict) -> str:
    """The ``why:`` line `workbench timeline show` prints, checked against its JSON, without the time it was
    seen and the look it came after, said when it was journaled a second or more after the file changed (a
    busy machine: ``test_timeline.py`` checks that part)."""
    text = workbench("timeline", "show", str(row["id"]), "--home", str(root))
    said = json.loads(workbench("timeline", "show", str(row["id"]), "--home", str(root), "--json"))["row"]["why"]
    [line] = [line for line in text.splitlines() if line.startswith("why: ")]
    assert line == f"why: {said}"
    return re.sub(r"; seen 2026-\S+ \S+ UTC, made after 2026-\S+ \S+ UTC", "", said)


def test_every_row_hermes_wrote_says_how_the_workbench_knows_of_it(written):
    root, messages = written
    seen = row_of(root, "MEMORY first look: 1 entry already there")
    assert why_of(root, seen) == (
        "the workbench's first look at MEMORY.md: the entries already there, kept as the baseline to compare "
        "with (who wrote them is not journaled)"
    )
    quiet = row_of(root, "MEMORY + 'Prefers pytest over unittest'")
    assert why_of(root, quiet) == (
        "found by comparing MEMORY.md with the last version the workbench saw; the file does not say who made it"
    )
    added = row_of(root, REWORDED)
    assert why_of(root, added) == (
        f"Hermes's memory replace call in session s-tea · message {messages['cat']}, stored in state.db, replayed "
        "on the MEMORY.md the workbench last saw"
    )
    gone = row_of(root, "MEMORY − 'Owns a cat called Miso'")
    assert why_of(root, gone) == (
        f"Hermes's memory remove call in session s-tea · message {messages['forget']}, stored in state.db, "
        "replayed on the MEMORY.md the workbench last saw"
    )
    skill = row_of(root, "skill 'tea-timer' created outside the workbench (tea-timer/SKILL.md)")
    assert why_of(root, skill) == (
        "found by comparing the skills folder with the workbench's last look: tea-timer/SKILL.md is new since"
    )
    archived = next(r for r in rows(root) if r["subsystem"] == "sessions" and r["action"] == "archive")
    assert why_of(root, archived) == (
        "found by comparing the sessions' archived flags in state.db with the workbench's last look"
    )
    deleted = next(r for r in rows(root) if r["subsystem"] == "sessions" and r["action"] == "delete")
    assert why_of(root, deleted) == (
        "found by comparing state.db with the workbench's last look: the session is gone since"
    )
    # the listing keeps its own lines: a `why:` there is still only a decision's told outside
    assert "why:" not in workbench("timeline", "--home", str(root))


def test_a_replace_hermes_made_reads_as_one_only_when_its_call_says_so(written):
    root, _ = written
    home = open_home(root, read_only=True)
    try:
        timeline = Timeline(home)
        listed = timeline.with_sources(timeline.page())
        groups: dict[str, list] = {}
        for row in listed:
            if row.group:
                groups.setdefault(row.group, []).append(row)
        titles = sorted(describe_group(members) for members in groups.values())
        # two calls (a remove, an add) are replayed as two rows, each its call's; a replace no call records,
        # the same on disk, is what the rows say
        assert titles == ["outside edit of MEMORY (2 rows): 1 memory entry added, 1 memory entry removed"]
        assert [(r.actor, r.group) for r in listed if r.summary == "MEMORY − 'Owns a cat called Miso'"] == [
            ("agent", None)
        ]
        # the replace call was in state.db when the look found it: one row, the replace it was
        (replaced,) = [r for r in listed if "Owns a cat" in r.summary and r.action == "replace"]
        assert replaced.summary == REWORDED and not replaced.group
    finally:
        home.close()


@pytest.mark.anyio
@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_timeline_screen_says_the_same(written, tmp_path, size):
    root, messages = written
    home = open_home(root)
    try:
        async with make_app(home, tmp_path).run_test(size=size) as pilot:
            screen = await open_mode(pilot, "6", TimelineScreen)
            table = screen.query_one(TimelineList)
            what = [str(table.get_row_at(i)[3]) for i in range(table.row_count)]
            cat = next(i for i, line in enumerate(what) if line.startswith(REWORDED[:14]))  # (fitted to the column)
            assert str(table.get_row_at(cat)[1]) == "agent"  # (its call replayed: the agent's, as memory history says)
            table.focus()
            table.move_cursor(row=cat)
            await settle(pilot)
            detail = str(screen.query_one("#timeline-detail").render())
            assert f"Hermes's memory replace call in session s-tea · message {messages['cat']}, stored in" in " ".join(
                detail.split()
            )
    finally:
        home.close()


def test_a_change_hermes_made_gets_one_label_everywhere(written):
    """An outside edit replayed from Hermes's stored tool call is the agent's in the entry's origin, its history,
    ``memory history`` and the Timeline (listing, JSON and detail); an edit no call made stays external."""
    root, messages = written
    listed = {r["summary"]: r for r in rows(root)}
    called, quiet = listed[REWORDED], listed["MEMORY + 'Prefers pytest over unittest'"]
    assert (called["actor"], called["by"], quiet["by"]) == ("agent", "agent", "external")
    line = next(line for line in workbench("timeline", "--home", str(root)).splitlines() if "Owns a cat" in line)
    assert line.split()[3] == "agent"
    shown = workbench("timeline", "show", str(called["id"]), "--home", str(root))
    assert f"row {called['id']} · " in shown and " · agent · memory replace · " in shown
    told = json.loads(workbench("memory", "history", "--home", str(root), "--json", "--limit", "50"))["events"]
    by_id = {e["id"]: e for e in told}
    assert (by_id[called["id"]]["actor"], by_id[called["id"]]["session_id"]) == ("agent", "s-tea")
    assert by_id[quiet["id"]]["actor"] == "external"
    story = json.loads(workbench("memory", "history", "--entry", "Lives near Lake Biwa", "--home", str(root), "--json"))
    assert story["origin"]["actor"] == "agent"
    assert story["events"][-1]["actor"] == "agent" and story["events"][-1]["message_id"] == messages["lake"]


def test_a_skill_the_hermes_agent_made_in_a_turn_is_the_agents_with_its_call(written):
    """Seen on a Hermes home: a skill Hermes's agent created with a skill_manage call in its session read
    "external … created outside the workbench", with no session, where a memory call gets the agent and
    the ``←`` line. Now the stored call is its source; a skill made with no call stored stays external."""
    root, messages = written
    made = row_of(root, "skill 'kettle-care' created outside the workbench (kettle-care/SKILL.md)")
    quiet = row_of(root, "skill 'tea-timer' created outside the workbench (tea-timer/SKILL.md)")
    assert (made["actor"], made["by"], made["session"], quiet["by"]) == ("external", "agent", "s-tea", "external")
    assert (made["source"]["message_id"], made["source"]["tool"]) == (messages["kettle-care"], "skill_manage")
    assert why_of(root, made).endswith(
        f"; Hermes's skill_manage create call in session s-tea · message {messages['kettle-care']} made it"
    )
    # the agent's patch, then an edit by hand a moment later: the call is the patch's row's, not the hand's
    by_hand, patched = [r for r in rows(root) if r["summary"].startswith("skill 'kettle-care' edited")]
    assert (patched["by"], patched["source"]["message_id"]) == ("agent", messages["kettle-patch"])
    assert (by_hand["by"], by_hand["source"]) == ("external", None)
    listed = workbench("timeline", "--home", str(root), "--subsystem", "skills")
    assert f"← session s-tea · message {messages['kettle-care']} (Hermes's skill_manage create call" in listed
    agents = json.loads(workbench("timeline", "--home", str(root), "--json", "--actor", "agent"))["rows"]
    externals = json.loads(workbench("timeline", "--home", str(root), "--json", "--actor", "external"))["rows"]
    assert made["id"] in {r["id"] for r in agents} and quiet["id"] not in {r["id"] for r in agents}
    assert quiet["id"] in {r["id"] for r in externals} and made["id"] not in {r["id"] for r in externals}


def test_the_listing_keeps_the_words_of_a_call_line_whole_at_20_columns(written):
    """Seen on a Hermes home at 20 columns: the ``←`` line chopped a Hermes session id over two lines
    (`20261207_10` / `4643_087e1c`) and the tool's name (`skill_manag` / `e`); each word a user may copy
    stands whole now, on a line of its own where it is wider than the line."""
    import os
    from unittest import mock

    root, messages = written
    with mock.patch.dict(os.environ, {"COLUMNS": "20"}):
        listed = workbench("timeline", "--home", str(root), "--subsystem", "skills").splitlines()
    call = f"← session s-tea · message {messages['kettle-care']} (Hermes's skill_manage create call, from the archive)"
    words = set(call.split())
    shown = {word for line in listed for word in line.split()}
    assert words <= shown, sorted(words - shown)
    assert "         skill_manage" in listed


LATE_TURN = r"""
import json
from hermes_state import SessionDB
from tools.skill_manager_tool import skill_manage
db = SessionDB()
args = {"action": "create", "name": "late-kettle",
        "content": "---\nname: late-kettle\ndescription: Stored late\n---\n# Late kettle\n\nSteps.\n"}
if STEP == "skill":  # the skill first (the watcher journals it), its turn stored when the turn ends
    db.create_session("s-late", source="cli", model="m")
    print(json.dumps({"result": skill_manage(**args)}))
else:
    call = {"id": "call_late", "type": "function", "function": {"name": "skill_manage", "arguments": json.dumps(args)}}
    db.append_message("s-late", "user", "make a kettle skill")
    message = db.append_message("s-late", "assistant", None, tool_calls=[call])
    db.append_message("s-late", "tool", RESULT, tool_name="skill_manage", tool_call_id=call["id"])
    print(json.dumps({"message": message}))
"""


@pytest.mark.anyio
async def test_a_skill_row_listed_before_hermes_stored_its_turn_becomes_the_agents_when_it_is(hermes, tmp_path):
    """The Timeline looks again at a young outside skill row once state.db changes, as it does a memory row:
    Hermes stores a turn when it ends, after the watcher journaled the skill it made."""
    root = tmp_path / "hermes-late"
    root.mkdir()
    workbench("timeline", "--home", str(root))  # (the workbench's first look: what comes after is a change)
    made = hermes.json(root, "STEP = 'skill'\n" + LATE_TURN)["result"]
    home = open_home(root)
    try:
        async with make_app(home, tmp_path, watch_files=True).run_test(size=(120, 40)) as pilot:
            screen = await open_mode(pilot, "6", TimelineScreen)
            table = screen.query_one(TimelineList)

            def actor_of_late() -> str | None:
                rows = [table.get_row_at(i) for i in range(table.row_count)]
                return next((str(r[1]) for r in rows if "late-kettle" in str(r[3])), None)

            await wait_for(pilot, lambda: actor_of_late() == "external", what="the skill's row, external")
            await cursor_to(pilot, screen, "late-kettle")
            await pilot.press("g")  # (it said the row "did not come from a session message")
            await wait_for(pilot, lambda: "not in state.db yet" in status_of(screen), what="why g opens nothing yet")
            stored = hermes.json(root, f"STEP = 'turn'\nRESULT = {made!r}\n" + LATE_TURN)["message"]
            await wait_for(pilot, lambda: actor_of_late() == "agent", timeout=15, what="the row, the agent's")
            row = next(r for r in screen.rows if r.target == "late-kettle")
            assert (row.source.session_id, row.source.message_id) == ("s-late", stored)
    finally:
        home.close()


SUPPORT_PATCH = (
    SKILL_TURNS
    + r"""
if STEP == "made":  # no turn stored: a skill and its support file, made quietly
    db.create_session("s-notes", source="cli", model="m")
    content = "---\nname: brew-notes\ndescription: Brew notes\n---\n# Brew notes\n\nSteps.\n"
    assert json.loads(skill_manage("create", "brew-notes", content=content))["success"]
    ratio = skill_manage("write_file", "brew-notes", file_path="references/ratio.md", file_content="1 g to 15 ml\n")
    assert json.loads(ratio)["success"], ratio
    print(json.dumps({}))
else:  # the agent patches the support file in a turn; a person edits SKILL.md by hand meanwhile
    message = skill_turn("s-notes", "ratio", {"action": "patch", "name": "brew-notes",
                                              "file_path": "references/ratio.md",
                                              "old_string": "15 ml", "new_string": "16 ml"})
    hand_edit("brew-notes")
    print(json.dumps({"message": message}))
"""
)


def made_then(hermes, root, script: str, step: str) -> int:
    """A new home the workbench looks at first, then Hermes's ``made`` step of ``script``, a look, and its
    ``step``: the message that step's turn stored."""
    root.mkdir()
    workbench("timeline", "--home", str(root))  # (the workbench's first look)
    hermes.json(root, "STEP = 'made'\n" + script)
    workbench("timeline", "--home", str(root))
    return hermes.json(root, f"STEP = {step!r}\n" + script)["message"]


def test_a_skill_md_edit_is_not_credited_to_a_patch_of_one_of_its_support_files(hermes, tmp_path):
    """A patch call names the file it patched (``file_path``; none: SKILL.md). The agent's patch of
    references/ratio.md was credited to both rows of the look: that file's and the SKILL.md row of a
    hand edit made meanwhile, shown as the agent's with that call. Now only the file's row is."""
    root = tmp_path / "hermes-patch"
    message = made_then(hermes, root, SUPPORT_PATCH, "patched")
    support = row_of(
        root,
        "file 'references/ratio.md' of skill 'brew-notes' edited outside the workbench "
        "(brew-notes/references/ratio.md)",
    )
    hand = row_of(root, "skill 'brew-notes' edited outside the workbench (brew-notes/SKILL.md)")
    assert (support["by"], support["source"]["message_id"]) == ("agent", message)
    assert (hand["by"], hand["source"]) == ("external", None)


HAND_AFTER_AGENT = (
    SKILL_TURNS
    + r"""
if STEP == "made":  # no turn stored
    db.create_session("s-pour", source="cli", model="m")
    content = "---\nname: pour-over\ndescription: Pour over\n---\n# Pour over\n\nBloom 30 s.\n"
    assert json.loads(skill_manage("create", "pour-over", content=content))["success"]
    print(json.dumps({}))
elif STEP == "patched":  # the agent's patch, in its turn
    message = skill_turn("s-pour", "bloom", {"action": "patch", "name": "pour-over",
                                             "old_string": "30 s", "new_string": "45 s"})
    print(json.dumps({"message": message}))
elif STEP == "rewritten":  # the agent's full rewrite, in its turn
    content = "---\nname: pour-over\ndescription: Pour over\n---\n# Pour over\n\nBloom 40 s.\n"
    message = skill_turn("s-pour", "rewrite", {"action": "edit", "name": "pour-over", "content": content})
    print(json.dumps({"message": message}))
else:  # a person's edit of the same SKILL.md, minutes later at most
    hand_edit("pour-over")
    print(json.dumps({}))
"""
)


@pytest.mark.parametrize(
    "steps",
    [
        # A call is the source of one change: the agent's patch of SKILL.md was credited to its own row and
        # again to the hand edit a look found minutes later (within the 10 minutes of slack either side),
        # which then read as the agent's with the agent's call.
        ("made", "patched", "by hand"),
        # A call stamped after a row (its turn stored once it ended) may be that row's, so the hand edit a
        # look found first took the agent's patch made a minute later: the hand edit read as the agent's
        # and the patch as outside (a trial: "hand patch X1" credited to the call that wrote "X3"). A patch
        # whose new text is not in the SKILL.md a row left behind did not make that row's change.
        ("made", "by hand", "patched"),
        ("made", "by hand", "rewritten"),  # (as for a full rewrite, skill_manage's edit)
    ],
    ids=["hand after", "hand before", "hand before a rewrite"],
)
def test_a_hand_edit_near_the_agents_edit_of_a_skill_is_not_the_agents(hermes, tmp_path, steps):
    root = tmp_path / "hermes-hand"
    root.mkdir()
    workbench("timeline", "--home", str(root))  # (the workbench's first look)
    messages = {}
    for step in steps:
        messages[step] = hermes.json(root, f"STEP = {step!r}\n" + HAND_AFTER_AGENT).get("message")
        workbench("timeline", "--home", str(root))
    edited = [
        r for r in rows(root) if r["summary"] == "skill 'pour-over' edited outside the workbench (pour-over/SKILL.md)"
    ]
    by_step = dict(zip(reversed(steps[1:]), edited, strict=True))  # (newest first)
    [agent_step] = set(steps) - {"made", "by hand"}
    agents, hand = by_step[agent_step], by_step["by hand"]
    assert (agents["by"], agents["source"]["message_id"]) == ("agent", messages[agent_step])
    assert (hand["by"], hand["source"]) == ("external", None)


REINDENTED = (
    SKILL_TURNS
    + r"""
call = {"action": "patch", "name": "pour-over", "old_string": "  - bloom 30 s\n  - pour slowly",
        "new_string": "  - bloom 45 s\n  - pour slowly"}  # (two spaces in: the file has four)
if STEP == "made":  # no turn stored
    db.create_session("s-pour", source="cli", model="m")
    content = "---\nname: pour-over\ndescription: Pour over\n---\n# Pour over\n\n    - bloom 30 s\n    - pour slowly\n"
    assert json.loads(skill_manage("create", "pour-over", content=content))["success"]
    print(json.dumps({}))
elif STEP == "patched":  # the agent's patch, its turn not yet stored
    result = skill_manage(**call)
    assert json.loads(result)["success"], result
    path = pathlib.Path(os.environ["HERMES_HOME"], "skills", "pour-over", "SKILL.md")
    assert call["new_string"] not in path.read_text()  # (Hermes wrote it four spaces in)
    pathlib.Path(os.environ["HERMES_HOME"], "result.json").write_text(result)
    print(json.dumps({"message": None}))
else:  # the turn stored as it ends, after the workbench's look found the patch
    result = pathlib.Path(os.environ["HERMES_HOME"], "result.json").read_text()
    tool_call = {"id": "call_bloom", "type": "function",
                 "function": {"name": "skill_manage", "arguments": json.dumps(call)}}
    db.append_message("s-pour", "user", "bloom")
    message = db.append_message("s-pour", "assistant", None, tool_calls=[tool_call])
    db.append_message("s-pour", "tool", result, tool_name="skill_manage", tool_call_id="call_bloom")
    print(json.dumps({"message": message}))
"""
)


def test_the_agents_patch_hermes_reindented_is_still_the_agents(hermes, tmp_path):
    """Hermes's patch matches loosely and writes ``new_string`` to the file's indentation (``fuzzy_match``),
    so the text it wrote need not be the call's: the agent's own patch, its turn stored after the look that
    found it, read as made outside the workbench, no call behind it."""
    root = tmp_path / "hermes-reindented"
    made_then(hermes, root, REINDENTED, "patched")
    workbench("timeline", "--home", str(root))  # (the look finds the patch before its turn is stored)
    message = hermes.json(root, "STEP = 'stored'\n" + REINDENTED)["message"]
    patched = row_of(root, "skill 'pour-over' edited outside the workbench (pour-over/SKILL.md)")
    assert (patched["by"], (patched["source"] or {}).get("message_id")) == ("agent", message), patched


MIXED_EDIT = (
    MEMORY_TURNS
    + r"""
if db.get_session("s-mix") is None:
    db.create_session("s-mix", source="cli", model="m")
    turn("s-mix", "kettle", {"action": "add", "target": "memory", "content": "Kettle descales monthly"})
    memory_tool(store=store, action="add", target="memory", content="Prefers pytest over unittest")
else:  # one look finds both: Hermes's stored add, and a remove no stored call made
    turn("s-mix", "lake", {"action": "add", "target": "memory", "content": "Lives near Lake Biwa"})
    memory_tool(store=store, action="remove", target="memory", old_text="pytest over")
print(json.dumps(ids))
"""
)


@pytest.mark.anyio
async def test_a_group_header_names_no_one_actor_or_session_its_rows_do_not_share(hermes, tmp_path):
    """Hermes's add (its call stored, in s-mix) and a remove no call explains, found in one look: the
    group's header row read 'agent · s-mix', the newest row's, as if the agent made both. The add is now
    replayed as its call's own row, outside the look's group."""
    root = tmp_path / "mixed"
    root.mkdir()
    hermes.json(root, MIXED_EDIT)
    workbench("timeline", "--home", str(root))  # the workbench's first look
    hermes.json(root, MIXED_EDIT)
    workbench("timeline", "--home", str(root))  # its next look finds both
    home = open_home(root)
    try:
        async with make_app(home, tmp_path).run_test(size=(120, 40)) as pilot:
            screen = await open_mode(pilot, "6", TimelineScreen)
            table = screen.query_one(TimelineList)
            lines = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
            # the add replayed as its call's row, the remove the look's own: no group holds both
            assert not [line for line in lines if line[3].startswith("▾")]
            edits = [line for line in lines if "Lake Biwa" in line[3] or "pytest" in line[3]]
            assert sorted((line[1], line[2]) for line in edits) == [("agent", "s-mix"), ("external", "-")]
    finally:
        home.close()


CURATOR_DELETE = (
    SKILL_TURNS
    + r"""
from tools.skill_provenance import BACKGROUND_REVIEW, set_current_write_origin
set_current_write_origin(BACKGROUND_REVIEW)  # the curator's review fork: its skills, its deletes archive
if STEP == "made":  # no turn stored: two skills the curator manages
    db.create_session("s-curator", source="cli", model="m")
    for name in ("brew", "brew-old"):
        content = f"---\nname: {name}\ndescription: Brewing {name}\n---\n# {name}\n\nSteps.\n"
        assert json.loads(skill_manage("create", name, content=content))["success"]
    print(json.dumps({}))
else:  # the pass folds brew-old into brew: Hermes archives it, saying so in the call's result
    message = skill_turn("s-curator", "fold", {"action": "delete", "name": "brew-old", "absorbed_into": "brew"})
    print(json.dumps({"message": message}))
"""
)


def test_a_curator_pass_delete_hermes_archived_is_the_agents_with_its_call(hermes, tmp_path):
    """A curator-pass ``skill_manage`` delete archives the skill (Hermes's #29912), so a look journals it as
    archived, not removed: no call was ever matched to an archived row, which read as external."""
    root = tmp_path / "hermes-curator"
    message = made_then(hermes, root, CURATOR_DELETE, "folded")
    [archived] = [r for r in rows(root) if r["summary"].startswith("skill 'brew-old' archived outside")]
    assert (archived["by"], archived["source"]["message_id"]) == ("agent", message)
    assert archived["source"]["tool"] == "skill_manage"


JA_ENTRIES = ("本番デプロイは金曜日に行わない", "ﾊﾞｯｸｱｯﾌﾟは毎晩 NIGHTLY")  # (full-width, half-width katakana)
# Hermes's agent adding each of JA_ENTRIES in a turn of session s-ja
WIDTHS = (
    MEMORY_TURNS
    + f"""
db.create_session("s-ja", source="cli", model="m")
for n, entry in enumerate({JA_ENTRIES!r}):
    turn("s-ja", f"ja-{{n}}", {{"action": "add", "target": "memory", "content": entry}})
print(json.dumps(ids))
"""
)


def test_the_timeline_search_finds_katakana_and_latin_typed_in_either_width(hermes, tmp_path):
    """Sessions found Hermes's デプロイ entry for ﾃﾞﾌﾟﾛｲ, but `timeline --search ﾃﾞﾌﾟﾛｲ` (and the Timeline's
    box, the same engine call) said no change matched, and ＮＩＧＨＴＬＹ found no NIGHTLY: the search now
    takes the text in either width, as the archive's does."""
    root = tmp_path / "widths"
    root.mkdir()
    workbench("timeline", "--home", str(root))  # the workbench's first look, before Hermes writes
    hermes.json(root, WIDTHS)
    deploy, backup = JA_ENTRIES
    for typed, entry in (("ﾃﾞﾌﾟﾛｲ", deploy), ("デプロイ", deploy), ("バックアップ", backup), ("ＮＩＧＨＴＬＹ", backup)):
        rows = json.loads(workbench("timeline", "--home", str(root), "--search", typed, "--json"))["rows"]
        assert [row["summary"] for row in rows] == [f"MEMORY + '{entry}'"], (typed, rows)


@pytest.mark.anyio
async def test_a_skill_row_whose_turn_was_stored_while_the_timeline_was_hidden_is_the_agents_on_return(
    hermes, tmp_path
):
    """A Timeline left open kept an outside skill row `external` when Hermes stored the turn behind it while
    another screen was shown and the row was over ten minutes old by the time the Timeline was back: only
    young rows were looked up again, though a fresh look (`workbench timeline`) credits it to the agent."""
    root = tmp_path / "hermes-hidden"
    root.mkdir()
    workbench("timeline", "--home", str(root))  # (the workbench's first look: what comes after is a change)
    made = hermes.json(root, "STEP = 'skill'\n" + LATE_TURN)["result"]
    home = open_home(root, clock=FixedClock(time.time()))  # (rows dated now, as Hermes stamps its messages)
    try:
        async with make_app(home, tmp_path, watch_files=True).run_test(size=(120, 40)) as pilot:
            screen = await open_mode(pilot, "6", TimelineScreen)

            def late_row():
                return next((row for row in screen.rows if row.target == "late-kettle"), None)

            await wait_for(pilot, lambda: late_row() is not None and late_row().by == "external", what="external")
            await pilot.press("1")  # another screen while Hermes stores the turn
            await settle(pilot)
            stored = hermes.json(root, f"STEP = 'turn'\nRESULT = {made!r}\n" + LATE_TURN)["message"]
            await wait_for(pilot, lambda: screen.stale, timeout=15, what="the watcher's news of state.db")
            home.clock.advance(3600)  # back an hour later: the row is no longer young
            await pilot.press("6")
            await wait_for(pilot, lambda: late_row().by == "agent", timeout=15, what="the row, the agent's")
            assert (late_row().source.session_id, late_row().source.message_id) == ("s-late", stored)
    finally:
        home.close()
    again = open_home(root)  # what a fresh look says of it
    try:
        timeline = Timeline(again)
        assert [row.by for row in timeline.with_sources(timeline.page()) if row.target == "late-kettle"] == ["agent"]
    finally:
        again.close()
