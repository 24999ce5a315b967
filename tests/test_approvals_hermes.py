"""Pending records both ways, with the real Hermes Agent 0.19.0 in its own process.

Hermes stages ``{action, target, content, old_text}`` records (and batches) through its
own memory tool; the workbench approves them on the home while Hermes approves the same
records on a copy, and the memory files must come out byte for byte the same. Records
the workbench stages must in turn replay through Hermes's ``apply_memory_pending`` and
``apply_skill_pending``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time

import pytest

from engine import open_home
from engine.clock import shown_time, stamped
from engine.session_writes import session_wrote
from engine.skills.manage import skill_manage_tool
from engine.timeline import Timeline
from engine.tools import ToolContext
from engine.values import iso_time
from tests.cli_support import completed
from tests.hermes_support import MEMORY_TURNS
from tests.tui_support import make_app, wait_for

pytestmark = pytest.mark.slow

SEED = ["User likes tea", "Project uses uv for packaging", "Deploys on Fridays", "Old laptop runs Debian 11"]
USER_SEED = ["Name is Sam", "Prefers short answers"]
BREW = "---\nname: brew\ndescription: How to brew tea\n---\n\nBoil water.\nSteep for 3 minutes.\n"

# Hermes's own memory tool with its gate on stages every write (no interactive approval here).
HERMES_STAGES = """
import json
from tools.memory_tool import load_on_disk_store, memory_tool
store = load_on_disk_store()
calls = [
    dict(action="replace", target="memory", old_text="tea", content="User likes green tea"),
    dict(action="remove", target="memory", old_text="Debian"),
    dict(target="memory", operations=[
        dict(action="add", content="CI runs on GitHub Actions"),
        dict(action="replace", old_text="Fridays", content="Deploys on Thursdays"),
        dict(action="remove", old_text="uv for"),
    ]),
    dict(action="add", target="user", content="Works in UTC+1"),
    dict(target="user", operations=[dict(action="replace", old_text="short", content="Prefers terse answers")]),
    dict(action="remove", target="user", old_text="Sam"),
]
print(json.dumps([json.loads(memory_tool(store=store, **c)) for c in calls]))
"""

# ... and its skill tool, which with the gate on stages every write.
HERMES_STAGES_SKILLS = """
import json
from tools.skill_manager_tool import skill_manage
print(json.dumps([json.loads(skill_manage(**c)) for c in [
    dict(action="create", name="tidy-imports", content=%r),
    dict(action="patch", name="brew", old_string="3 minutes", new_string="5 minutes"),
]]))
"""

HERMES_STAGES_ONE = """
import json
from tools.memory_tool import load_on_disk_store, memory_tool
print(json.dumps([json.loads(memory_tool(store=load_on_disk_store(), {call}))]))
"""

HERMES_APPROVES_ALL = """
import json
from hermes_cli.write_approval_commands import handle_pending_subcommand
from tools.memory_tool import load_on_disk_store
from tools import write_approval as wa
out = [handle_pending_subcommand(s, ["approve", "all"], memory_store=load_on_disk_store()) for s in ("memory", "skills")]
print(json.dumps({"out": out, "left": wa.pending_count("memory") + wa.pending_count("skills")}))
"""


def _seeded_home(tmp_path, name="home"):
    root = tmp_path / name
    home = open_home(root)
    user = ToolContext(actor="user")
    for entry in SEED:
        assert home.memory.add("memory", entry, user)["success"]
    for entry in USER_SEED:
        assert home.memory.add("user", entry, user)["success"]
    assert skill_manage_tool(home, {"action": "create", "name": "brew", "content": BREW}, user)["success"]
    home.config_path.write_text("memory:\n  write_approval: true\nskills:\n  write_approval: true\n")
    home.close()
    return root


def _memory_files(root):
    return {name: (root / "memories" / name).read_bytes() for name in ("MEMORY.md", "USER.md")}


def _skill_files(root):
    skills = root / "skills"
    return {p.relative_to(skills).as_posix(): p.read_bytes() for p in skills.rglob("SKILL.md")}


def _workbench(root, *args):
    """The CLI's JSON, run in this process: what it says of Hermes's records is the subject, not the process."""
    return completed(*args, "--home", str(root), "--json")


def test_hermes_staged_records_approved_by_the_workbench_match_hermes_own_approval(hermes, tmp_path):
    root = _seeded_home(tmp_path)
    staged = hermes.json(root, HERMES_STAGES)
    skills = hermes.json(root, HERMES_STAGES_SKILLS % SKILL)
    assert all(r.get("staged") for r in staged + skills), staged + skills
    assert len(list((root / "pending" / "memory").glob("*.json"))) == len(staged)
    twin = tmp_path / "twin"
    shutil.copytree(root, twin)

    shown = _workbench(root, "pending", "list")
    rows = json.loads(shown.stdout)["pending"]
    ids = [row["id"] for row in rows]
    for row in rows:  # Hermes's own words for each memory write are the workbench's (a replace names its old text)
        if row["subsystem"] == "memory":
            record = json.loads((root / "pending" / "memory" / f"{row['id']}.json").read_text())
            assert row["summary"] == record["summary"], (row, record["summary"])
    assert len(ids) == len(staged) + len(skills)
    assert {(row["actor"], row["staged_by"]) for row in rows} == {("agent", "hermes")}
    listed = completed("pending", "list", "--home", str(root))
    assert listed.stdout.count("agent (Hermes)") == len(ids), listed.stdout
    preview = json.loads(_workbench(root, "pending", "show", staged[1]["pending_id"]).stdout)
    assert preview["error"] is None
    assert [(t["status"], t["entry"]) for t in preview["targets"]] == [("hits", "Old laptop runs Debian 11")]

    approved = _workbench(root, "pending", "approve", "all")
    assert approved.returncode == 0, approved.stdout + approved.stderr
    result = json.loads(approved.stdout)
    assert len(result["approved"]) == len(ids) and result["failed"] == []
    assert not list((root / "pending").rglob("*.json"))

    theirs = hermes.json(twin, HERMES_APPROVES_ALL)
    assert theirs["left"] == 0, theirs["out"]
    assert _memory_files(root) == _memory_files(twin)
    assert _skill_files(root) == _skill_files(twin)
    assert b"Steep for 5 minutes" in _skill_files(root)["brew/SKILL.md"]
    home = open_home(root)
    assert home.memory.entries("memory") == [
        "User likes green tea",
        "Deploys on Thursdays",
        "CI runs on GitHub Actions",
    ]
    assert home.memory.entries("user") == ["Prefers terse answers", "Works in UTC+1"]
    home.close()


# Hermes's staging, made two hours before the workbench first looks (Hermes's clock set back in its process:
# ``write_approval`` stamps ``created_at`` with ``time.time()``)
HERMES_STAGED_EARLIER = "import time\n_now = time.time\ntime.time = lambda: _now() - 7200\n" + HERMES_STAGES


def test_what_hermes_stages_is_a_timeline_row_dated_when_hermes_staged_it(hermes, tmp_path):
    """Only the decision on a record Hermes staged reached the Timeline; the proposal itself did not. Then
    its row showed when the workbench found it, not when Hermes staged it: a proposal staged hours before
    the workbench looked read as staged just now. It shows Hermes's time, listed where it was found, its
    mark saying so where it sits above a row made after it."""
    root = _seeded_home(tmp_path)
    staged = hermes.json(root, HERMES_STAGED_EARLIER)
    home = open_home(root)
    assert home.memory.add("user", "Reads the Timeline newest first", ToolContext(actor="user"))["success"]
    home.close()
    listing = json.loads(_workbench(root, "timeline", "--subsystem", "approvals").stdout)["rows"]
    ids = {s["pending_id"] for s in staged}
    assert {row["target"] for row in listing if row["action"] == "stage"} == ids
    assert all(row["summary"].startswith("staged memory proposal") for row in listing)
    again = json.loads(_workbench(root, "timeline", "--subsystem", "approvals").stdout)["rows"]
    assert len(again) == len(listing)  # journaled once
    home = open_home(root)
    record = home.approvals.get(staged[0]["pending_id"])
    row = next(r for r in Timeline(home).page(subsystem="approvals") if r.target == record.id)
    assert row.at == record.created_at and row.actor == "agent"  # when Hermes staged it, as Hermes's agent
    assert row.found_at is not None and row.found_at - row.at > 7000  # found two hours later
    assert row.found_later.startswith("found ") and row.found_later.endswith(
        f"{shown_time(row.found_at, '%H:%M:%S')}, staged before"
    )
    assert f"Hermes staged it at {stamped(record.created_at, seconds=True)}" in row.found
    shown = next(r for r in again if r["target"] == record.id)
    assert (shown["at"], shown["found_at"]) == (iso_time(record.created_at), iso_time(row.found_at))
    assert f"↳ {row.found_later}" in completed("timeline", "--home", str(root)).stdout
    # Hermes wrote it, so what Hermes did (actor:external) lists it too, as its agent's memory writes;
    # it was missed there, though its own row said "in Hermes"
    for actor in ("agent", "external"):
        assert record.id in {r.target for r in Timeline(home).page(actor=actor)}, actor
    assert record.id not in {r.target for r in Timeline(home).page(actor="review")}
    home.close()
    ours = json.loads(_workbench(root, "timeline", "--actor", "external").stdout)["rows"]
    assert ids <= {row["target"] for row in ours}
    # --since selects by the time a row shows: Hermes's, two hours back, though found just now
    for since, listed in (("1h", set()), ("3h", ids)):
        rows = json.loads(_workbench(root, "timeline", "--since", since).stdout)["rows"]
        assert {row["target"] for row in rows if row["action"] == "stage"} == listed, since
        assert any("Reads the Timeline newest first" in row["summary"] for row in rows), since


# Hermes's staging on a clock that was wrong: ``created_at`` stamped at 1970's first second, or before it
HERMES_STAGED_AT = "import time\ntime.time = lambda: %r\n" + HERMES_STAGES


@pytest.mark.parametrize("clock_at", [0.0, -3600.5])
def test_a_proposal_hermes_stamped_at_an_impossible_time_shows_when_it_was_found(hermes, tmp_path, clock_at):
    """Hermes's records stamped `created_at` 0 (or less) by a clock that was wrong were listed as staged in
    1970 (or 1969), at the foot of the Timeline and out of every `--since`. They show when the workbench
    found them, and the detail says their record holds an impossible time; `--since` (SQL) selects them by
    that same time."""
    from engine.timeline import detail_lines

    root = _seeded_home(tmp_path)
    staged = hermes.json(root, HERMES_STAGED_AT % clock_at)
    assert {
        json.loads((root / "pending" / "memory" / f"{s['pending_id']}.json").read_text())["created_at"] for s in staged
    } == {clock_at}  # (what Hermes's own code wrote)
    listing = json.loads(_workbench(root, "timeline", "--since", "1h").stdout)["rows"]
    found = [row for row in listing if row["action"] == "stage"]
    assert {row["target"] for row in found} == {s["pending_id"] for s in staged}
    assert all(row["at"] > "2000" and row["found_at"] is None for row in found), found
    home = open_home(root)
    row = next(r for r in Timeline(home).page(subsystem="approvals") if r.target == staged[0]["pending_id"])
    entry = home.journal.get(row.id)
    assert row.at == entry.at and row.found_at is None
    said = " ".join(detail_lines(row))
    assert f"its record holds an impossible time (created_at {clock_at:g}, not after 1970 began" in said
    assert "1970" not in stamped(row.at) and "1969" not in stamped(row.at)
    home.close()


HERMES_WRITES_TWICE = """
import json, sys
from tools.memory_tool import load_on_disk_store, memory_tool
for content in ("Written before the gate", "Written after the gate"):
    print(memory_tool(store=load_on_disk_store(), action="add", target="memory", content=content), flush=True)
    sys.stdin.readline()  # the test changes config.yaml meanwhile
"""


def test_turning_the_gate_on_in_config_yaml_gates_a_running_hermes_too(hermes, tmp_path):
    """docs/running-beside-hermes.md: Hermes reads the same config.yaml at each write, so the gate
    turned on while its loop runs stages its next write in the workbench's queue (a trial saw 140)."""
    root = _seeded_home(tmp_path)
    home = open_home(root)
    home.config_path.write_text("memory:\n  write_approval: false\n", encoding="utf-8")
    agent = hermes.popen(root, HERMES_WRITES_TWICE, stdin=subprocess.PIPE)
    try:
        assert json.loads(agent.stdout.readline())["success"]  # written: the gate is off
        home.config_path.write_text("memory:\n  write_approval: true\n", encoding="utf-8")  # as a user turns it on
        agent.stdin.write("\n")
        agent.stdin.flush()
        staged = json.loads(agent.stdout.readline())
    finally:
        agent.communicate("\n", timeout=60)
    assert staged["staged"], staged
    assert "Written before the gate" in home.memory.read("memory").entries
    assert "Written after the gate" not in home.memory.read("memory").entries
    rows = json.loads(_workbench(root, "pending", "list").stdout)["pending"]
    assert [(r["id"], r["staged_by"]) for r in rows] == [(staged["pending_id"], "hermes")]
    home.close()


@pytest.mark.anyio
async def test_the_tui_journals_what_hermes_staged_while_it_was_closed_and_while_it_runs(hermes, tmp_path):
    root = _seeded_home(tmp_path)
    first = hermes.json(root, HERMES_STAGES)[0]["pending_id"]  # staged while no workbench was open
    home = open_home(root)
    app = make_app(home, tmp_path, watch_files=True)
    async with app.run_test(size=(120, 40)) as pilot:

        def staged_rows():
            return {r.target for r in Timeline(home).page(subsystem="approvals") if r.action == "stage"}

        await wait_for(pilot, lambda: first in staged_rows(), timeout=10, what="the catch-up at start")
        later = hermes.json(root, HERMES_STAGES_SKILLS % SKILL)[0]["pending_id"]
        await wait_for(pilot, lambda: later in staged_rows(), timeout=10, what="the watcher's catch-up")
    home.close()


def test_hermes_record_that_became_ambiguous_is_refused_and_kept(hermes, tmp_path):
    root = _seeded_home(tmp_path)
    [staged] = hermes.json(root, HERMES_STAGES_ONE.format(call="action='remove', target='memory', old_text='Fridays'"))
    home = open_home(root)
    home.memory.add("memory", "Never deploys on Fridays in December", ToolContext(actor="user"))
    preview = home.approvals.preview(staged["pending_id"])
    [target] = preview["targets"]
    assert target["status"] == "ambiguous" and len(target["matches"]) == 2
    before = _memory_files(root)
    home.close()
    refused = _workbench(root, "pending", "approve", staged["pending_id"])
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "now matches 2 different entries in MEMORY.md" in json.loads(refused.stdout)["error"]
    assert _memory_files(root) == before
    assert (root / "pending" / "memory" / f"{staged['pending_id']}.json").exists()


WORKBENCH_STAGES = [
    ("replace", dict(old_text="tea", content="User likes green tea")),
    ("remove", dict(old_text="Debian")),
    (
        "batch",
        dict(
            operations=[
                {"action": "add", "content": "CI runs on GitHub Actions"},
                {"action": "replace", "old_text": "Fridays", "content": "Deploys on Thursdays"},
                {"action": "remove", "old_text": "uv for"},
            ]
        ),
    ),
    ("add", dict(content="Keeps notes in Obsidian")),
]

SKILL = "---\nname: tidy-imports\ndescription: Sort and group Python imports.\n---\n\n# Tidy imports\n\nRun isort.\n"

HERMES_REPLAYS = """
import json
from tools import write_approval as wa
from tools.memory_tool import apply_memory_pending, load_on_disk_store
from tools.skill_manager_tool import apply_skill_pending
results = []
store = load_on_disk_store()
for rec in wa.list_pending("memory"):
    results.append(apply_memory_pending(rec["payload"], store))
for rec in wa.list_pending("skills"):
    results.append(json.loads(apply_skill_pending(rec["payload"])))
print(json.dumps(results))
"""


def test_records_the_workbench_stages_replay_through_hermes(hermes, tmp_path):
    root = _seeded_home(tmp_path)
    home = open_home(root)
    agent = ToolContext(actor="agent", session_id="s1", message_id=2)
    for action, args in WORKBENCH_STAGES:
        method = getattr(home.memory, action)
        assert method("memory", *args.values(), agent)["staged"]
    for args in (
        {"action": "create", "name": "tidy-imports", "content": SKILL},
        {"action": "patch", "name": "brew", "old_string": "3 minutes", "new_string": "4 minutes"},
    ):
        assert skill_manage_tool(home, args, agent)["staged"]
    home.close()
    twin = tmp_path / "twin"
    shutil.copytree(root, twin)

    replayed = hermes.json(twin, HERMES_REPLAYS)
    assert all(r.get("success") for r in replayed), replayed
    approved = _workbench(root, "pending", "approve", "all")
    assert approved.returncode == 0, approved.stdout
    assert _memory_files(root) == _memory_files(twin)
    [ours] = list((root / "skills").rglob("tidy-imports/SKILL.md"))
    [theirs] = list((twin / "skills").rglob("tidy-imports/SKILL.md"))
    assert ours.read_bytes() == theirs.read_bytes() == SKILL.encode()
    brewed = [(r / "skills" / "brew" / "SKILL.md").read_bytes() for r in (root, twin)]
    assert brewed[0] == brewed[1] == BREW.replace("3 minutes", "4 minutes").encode()


HERMES_STAGES_IN_A_SESSION = (
    MEMORY_TURNS
    + r"""
db.create_session("hermes-tea", source="cli", model="m")
turn("hermes-tea", "kettle", {"action": "add", "target": "memory", "content": "Kettle descales monthly"})
turn("hermes-tea", "cups", {"action": "add", "target": "memory", "content": "Cups live in the left cupboard"})
print(json.dumps(ids))
"""
)

HERMES_DECIDES = """
import json
from hermes_cli.write_approval_commands import handle_pending_subcommand
from tools.memory_tool import load_on_disk_store
print(json.dumps([handle_pending_subcommand("memory", ["approve", {approve!r}], memory_store=load_on_disk_store()),
                  handle_pending_subcommand("memory", ["reject", {reject!r}], memory_store=load_on_disk_store())]))
"""


def test_what_hermes_stages_and_decides_reaches_the_timeline_with_its_session(hermes, tmp_path):
    """A proposal Hermes staged in a session read '-' for its session, and one Hermes approved or
    rejected itself looked pending forever: its file was gone and no row said why."""
    root = _seeded_home(tmp_path)
    calls = hermes.json(root, HERMES_STAGES_IN_A_SESSION)
    home = open_home(root)
    staged = {r.payload["content"]: r.id for r in home.approvals.list()}
    home.close()
    kettle, cups = staged["Kettle descales monthly"], staged["Cups live in the left cupboard"]
    rows = json.loads(_workbench(root, "timeline", "--session", "hermes-tea").stdout)["rows"]
    assert {(r["target"], r["action"], r["session"]) for r in rows} == {
        (kettle, "stage", "hermes-tea"),
        (cups, "stage", "hermes-tea"),
    }
    hermes.json(root, HERMES_DECIDES.format(approve=kettle, reject=cups))
    rows = json.loads(_workbench(root, "timeline", "--subsystem", "approvals").stdout)["rows"]
    decided = {
        r["target"]: (r["action"], r["actor"], r["session"], r["summary"]) for r in rows if r["action"] != "stage"
    }
    assert decided == {
        kettle: (
            "approve",
            "external",
            "hermes-tea",
            f"approved memory proposal {kettle} outside the workbench: add to memory: Kettle descales monthly "
            "(proposed by Hermes agent)",
        ),
        cups: (
            "reject",
            "external",
            "hermes-tea",
            f"rejected memory proposal {cups} outside the workbench: add to memory: Cups live in the left cupboard "
            "(proposed by Hermes agent)",
        ),
    }
    staging = {r["summary"] for r in rows if r["action"] == "stage"}
    assert f"staged memory proposal {kettle} in Hermes: add to memory: Kettle descales monthly" in staging
    again = json.loads(_workbench(root, "timeline", "--subsystem", "approvals").stdout)["rows"]
    assert len(again) == len(rows)  # journaled once
    shown = json.loads(_workbench(root, "sessions", "show", "hermes-tea").stdout)["messages"]
    writes = {m["id"]: [(w["subsystem"], w["action"], w["text"]) for w in m["writes"]] for m in shown if m["writes"]}
    assert writes[calls["kettle"]] == [
        ("approvals", "stage", "add to memory: Kettle descales monthly"),
        ("memory", "add", "Kettle descales monthly"),  # what Hermes's approval of it wrote
    ]
    assert writes[calls["cups"]] == [("approvals", "stage", "add to memory: Cups live in the left cupboard")]
    in_session = json.loads(_workbench(root, "timeline", "--session", "hermes-tea").stdout)["rows"]
    [write] = [r for r in in_session if r["subsystem"] == "memory"]  # the write Hermes's approval made
    assert (write["action"], write["session"]) == ("add", "hermes-tea")
    assert write["summary"] == "MEMORY + 'Kettle descales monthly' (proposed by Hermes agent)"
    approved_write = write["id"]
    shown = completed("memory", "show", "--target", "memory", "--home", str(root)).stdout  # the entry's origin
    assert (
        "↳ external (approved, proposed by Hermes agent) · " in shown
        and f"session hermes-tea · message {calls['kettle']}" in shown
    ), shown
    listed = completed("memory", "history", "--home", str(root)).stdout  # names the message on the write's line
    [line] = [line for line in listed.splitlines() if line.startswith(f"#{approved_write} ")]
    assert f"session hermes-tea msg {calls['kettle']}" in line, listed
    home = open_home(root)
    assert session_wrote(home, "hermes-tea")  # ✎ in the tree: its proposal, approved in Hermes, wrote memory
    message = {
        row.target: row.message_id
        for row in Timeline(home).with_sources(Timeline(home).page())
        if row.target in (kettle, cups)
    }
    assert message[kettle] == calls["kettle"] and message[cups] == calls["cups"]
    timeline = Timeline(home)
    [write] = [r for r in timeline.with_sources(timeline.page(subsystem="memory")) if "Kettle" in r.summary]
    assert (write.actor, write.session, write.source.message_id) == ("external", "hermes-tea", calls["kettle"])
    assert Timeline(home).revert(next(r["id"] for r in rows if r["target"] == cups))["success"]  # back in the queue
    assert [r.id for r in home.approvals.list()] == [cups]
    home.close()
    hermes.json(
        root,
        'import json\nfrom hermes_state import SessionDB\nprint(json.dumps(SessionDB().delete_session("hermes-tea")))',
    )
    after = json.loads(_workbench(root, "timeline", "--session", "hermes-tea").stdout)["rows"]
    assert approved_write in [r["id"] for r in after]  # the session is gone from state.db; its rows stay its own


# Hermes stages skill writes (a background review's create, a user session's others), then decides them itself.
HERMES_STAGES_SKILL_WRITES = """
import json
from tools.skill_manager_tool import skill_manage
from tools.skill_provenance import set_current_write_origin
token = set_current_write_origin("background_review")
review = [json.loads(skill_manage(**c)) for c in [
    dict(action="create", name="tidy-imports", content=%r),
    dict(action="create", name="lint-rules", content=%r),
]]
set_current_write_origin("foreground")
agent = [json.loads(skill_manage(**c)) for c in [
    dict(action="patch", name="brew", old_string="3 minutes", new_string="5 minutes"),
    dict(action="patch", name="brew", old_string="Boil water.", new_string="Boil water.\\nWarm the pot."),
    dict(action="write_file", name="brew", file_path="references/water.md", file_content="Soft water.\\n"),
    dict(action="edit", name="kettle", content=%r),
    dict(action="delete", name="steep"),
]]
print(json.dumps([r["pending_id"] for r in review + agent]))
"""

HERMES_DECIDES_SKILLS = """
import json
from hermes_cli.write_approval_commands import handle_pending_subcommand
out = [handle_pending_subcommand("skills", ["approve", i], memory_store=None) for i in %r]
out += [handle_pending_subcommand("skills", ["reject", i], memory_store=None) for i in %r]
print(json.dumps(out))
"""


USER = ToolContext(actor="user")


def _skill(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {body}\n---\n\n{body}\n"


def test_skill_proposals_hermes_decides_are_journaled_as_decided_and_keep_their_proposer(hermes, tmp_path):
    """A skill proposal Hermes approved or rejected itself was journaled "closed outside" (not known),
    and a skill it approved read plain ``user`` with no proposer."""
    root = _seeded_home(tmp_path)
    gates = (root / "config.yaml").read_text()
    (root / "config.yaml").write_text("")
    home = open_home(root)
    for name in ("kettle", "steep"):
        made = skill_manage_tool(home, {"action": "create", "name": name, "content": _skill(name, "Old")}, USER)
        assert made["success"] and not made.get("staged"), made
    home.close()
    (root / "config.yaml").write_text(gates)
    ids = hermes.json(
        root, HERMES_STAGES_SKILL_WRITES % (SKILL, _skill("lint-rules", "Lint"), _skill("kettle", "Descale"))
    )
    create, lint, patch, append, write_file, edit, delete = ids
    assert _workbench(root, "timeline").returncode == 0  # the workbench journals them staged
    out = hermes.json(root, HERMES_DECIDES_SKILLS % ([create, patch, append, delete], [lint, write_file, edit]))
    assert all(line.startswith(("Approved 1", "Rejected")) for line in out), "\n".join(out)
    rows = json.loads(_workbench(root, "timeline", "--subsystem", "approvals").stdout)["rows"]
    decided = {r["target"]: (r["action"], r["actor"]) for r in rows if r["action"] != "stage"}
    assert decided == {
        create: ("approve", "external"),
        patch: ("approve", "external"),
        append: ("approve", "external"),  # its old text is in its new one
        delete: ("approve", "external"),
        lint: ("reject", "external"),
        write_file: ("reject", "external"),
        edit: ("reject", "external"),
    }
    [created] = [r for r in rows if r["target"] == create and r["action"] == "approve"]
    assert created["summary"].startswith(f"approved skills proposal {create} outside the workbench: create")
    assert created["summary"].endswith("(proposed by Hermes review)")
    skills = {s["name"]: s for s in json.loads(_workbench(root, "skills", "list").stdout)["skills"]}
    assert (skills["tidy-imports"]["provenance"], skills["tidy-imports"]["proposed_by"]) == ("user", "Hermes review")
    assert skills["brew"]["proposed_by"] is None and "steep" not in skills
    shown = completed("skills", "list", "--home", str(root)).stdout
    assert "tidy-imports  -  active   user (approved, proposed by Hermes review)" in shown, shown


HERMES_STAGES_LOOSE_PATCH = """
import json
from tools.skill_manager_tool import skill_manage
print(json.dumps(json.loads(skill_manage(action="patch", name="brew", old_string="Steep  for 3   minutes.",
                                         new_string="Steep for 4 minutes."))["pending_id"]))
"""


def test_a_hermes_patch_found_only_loosely_is_refused_saying_where_it_may_apply(hermes, tmp_path):
    """Hermes finds a patch's old_string loosely (here: spacing) and applies it; the workbench, which
    applies only the exact text, refused it with the agent's advice to copy the exact passage."""
    root = _seeded_home(tmp_path)
    pid = hermes.json(root, HERMES_STAGES_LOOSE_PATCH)
    shown = json.loads(_workbench(root, "pending", "show", pid).stdout)
    assert shown["error"].endswith(
        f"`/skills approve {pid}` finds old_string loosely (spacing, indentation, "
        "escapes) in SKILL.md as it reads now, and may still apply it; the workbench applies only the exact text, "
        "so approve it there or reject it."
    ), shown
    printed = completed("pending", "show", pid, "--home", str(root)).stdout
    assert "it asks to replace: Steep  for 3   minutes." in printed and "with: Steep for 4 minutes." in printed
    assert "(no textual change)" not in printed, printed
    before = _skill_files(root)
    refused = _workbench(root, "pending", "approve", pid)
    assert refused.returncode == 1 and "approve it there or reject it" in refused.stdout + refused.stderr
    assert _skill_files(root) == before
    out = hermes.json(root, HERMES_DECIDES_SKILLS % ([pid], []))
    assert out == ["Approved 1 skills write(s)."]  # where it does apply
    assert "Steep for 4 minutes." in _skill_files(root)["brew/SKILL.md"].decode()


HERMES_STAGES_THEN_PATCHES = """
import json
from tools import write_approval
from tools.skill_manager_tool import skill_manage
staged = json.loads(skill_manage(action="patch", name="brew", old_string="Steep for 3 minutes.",
                                 new_string="Steep for 3 minutes, covered."))["pending_id"]
write_approval.write_approval_enabled = lambda subsystem: False  # (then Hermes patches it itself, ungated)
done = json.loads(skill_manage(action="patch", name="brew", old_string=%r, new_string=%r))["success"]
print(json.dumps([staged, done]))
"""


@pytest.mark.parametrize(
    ("old", "new", "advice"),
    [
        # the passage is gone: Hermes's approve, matching loosely, finds it no more than the workbench
        ("Steep for 3 minutes.", "Pour, wait, drink.", "Neither can apply it: Hermes's own `/skills approve"),
        # only its spacing changed: Hermes's approve still finds it, once
        ("Steep for 3 minutes.", "Steep  for 3   minutes.", "finds old_string loosely (spacing, indentation"),
        # there twice, loosely: Hermes refuses a patch found in more than one place
        ("Steep for 3 minutes.", "Steep  for 3 minutes.\nSteep for  3 minutes.", "it finds old_string in 2 places"),
    ],
)
def test_a_hermes_patch_whose_text_hermes_changed_says_whether_hermes_can_apply_it(hermes, tmp_path, old, new, advice):
    """A trial: Hermes staged a patch of deploy-stage, then patched the same passage itself. The pane said
    Hermes's own `/skills approve` "finds old_string loosely … may still apply it … approve it there", but
    the text was gone, so Hermes's approve failed too. The advice now follows Hermes's own matching."""
    root = _seeded_home(tmp_path)
    pid, done = hermes.json(root, HERMES_STAGES_THEN_PATCHES % (old, new))
    assert done is True
    shown = json.loads(_workbench(root, "pending", "show", pid).stdout)
    assert shown["error"].startswith("Could not find old_string in SKILL.md") and advice in shown["error"], shown
    applies = advice.startswith("finds")
    assert ("approve it there" in shown["error"]) is applies
    if not applies:
        assert f"eject it (`workbench pending reject {pid}`, or r in Approvals)" in shown["error"]
    before = _skill_files(root)
    refused = _workbench(root, "pending", "approve", pid)
    assert refused.returncode == 1 and advice in refused.stdout + refused.stderr
    # an edit changes only new_string, which cannot make it apply: said before anything else, and why
    cannot = "An edit cannot make this patch apply: it changes only the text the patch writes, and the text it "
    assert shown["edit_refusal"].startswith(cannot + "replaces, 'Steep for 3 minutes.', is not in SKILL.md as it")
    assert shown["edit_refusal"].endswith("(e on the Skills screen, or `workbench skills edit brew`).")
    edited = completed("pending", "approve", pid, "--edit", "Steep for 5 minutes.", "--home", str(root))
    assert edited.returncode == 1 and f"error: Not applied, still pending: {cannot}" in edited.stderr, edited
    assert _skill_files(root) == before
    [said] = hermes.json(root, HERMES_DECIDES_SKILLS % ([pid], []))  # what Hermes's own approve does
    assert said.startswith("Approved 1") is applies, said
    assert (_skill_files(root) == before) is not applies


HERMES_REWRITES = """
import json
from tools.skill_manager_tool import skill_manage
print(json.dumps([json.loads(skill_manage(action="edit", name="brew", content=%r)) for _ in (1, 2)]))
"""


def test_a_rewrite_hermes_staged_is_refused_once_the_skill_changed_after_staging(hermes, tmp_path):
    """Approving a rewrite Hermes staged overwrote a hand edit made after it was staged, and approve
    all applied forty successive rewrites, each over the one before, with nothing said."""
    root = _seeded_home(tmp_path)
    rewrite = BREW.replace("Steep", "Brew it, then steep")
    first, second = hermes.json(root, HERMES_REWRITES % rewrite)
    skill_md = root / "skills" / "brew" / "SKILL.md"
    time.sleep(0.05)  # (a file system whose clock ticks coarsely still dates the edit after the staging)
    skill_md.write_text(skill_md.read_text() + "\nHAND EDIT AFTER STAGING\n")
    hand = skill_md.read_bytes()
    shown = _workbench(root, "pending", "show", first["pending_id"])
    stale = json.loads(shown.stdout)["stale"]
    assert stale.startswith("skills/brew/SKILL.md changed after this proposal was staged")
    assert ["-", "HAND EDIT AFTER STAGING"] in json.loads(shown.stdout)["diff"]  # what would go, still shown
    approved = _workbench(root, "pending", "approve", "all")
    assert approved.returncode == 1
    assert {f["id"] for f in json.loads(approved.stdout)["failed"]} == {first["pending_id"], second["pending_id"]}
    assert skill_md.read_bytes() == hand and len(list((root / "pending" / "skills").glob("*.json"))) == 2
    edited = _workbench(root, "pending", "approve", first["pending_id"], "--edit", rewrite + "HAND EDIT KEPT\n")
    assert edited.returncode == 0, edited.stdout  # the approver wrote what goes there: it is theirs
    assert skill_md.read_text() == rewrite + "HAND EDIT KEPT\n"
    refused = _workbench(root, "pending", "approve", second["pending_id"])  # it would overwrite that approval
    assert refused.returncode == 1 and skill_md.read_text() == rewrite + "HAND EDIT KEPT\n"


def test_approving_what_hermes_staged_for_a_skill_archived_since_says_so(hermes, tmp_path):
    """It said "Skill 'brew' not found.": the skill is archived, and restoring it lets the patch through."""
    root = _seeded_home(tmp_path)
    pid = hermes.json(root, HERMES_STAGES_LOOSE_PATCH.replace("Steep  for 3   minutes.", "Steep for 3 minutes."))
    archived = _workbench(root, "skills", "archive", "brew")
    assert archived.returncode == 0, archived.stdout
    refused = json.loads(_workbench(root, "pending", "approve", pid).stdout)
    said = refused["failed"][0]["error"]
    assert said.startswith("Not applied, still pending: Skill 'brew' is archived in skills/.archive/brew: this patch")
    assert "Restore it first (`workbench skills restore brew`, or r in Skills)" in said
    assert json.loads(_workbench(root, "pending", "show", pid).stdout)["error"] == said.split(": ", 1)[1]
    assert _workbench(root, "skills", "restore", "brew").returncode == 0
    assert json.loads(_workbench(root, "pending", "approve", pid).stdout)["success"]
    assert "Steep for 4 minutes." in _skill_files(root)["brew/SKILL.md"].decode()


HERMES_LISTS = """
import json
from tools import write_approval as wa
try:
    print(json.dumps(sorted(str(r.get("id")) for r in wa.list_pending("memory"))))
except Exception as exc:
    print(json.dumps(type(exc).__name__))
"""


@pytest.mark.parametrize(
    ("content", "sees"),
    [
        (b'{"id": "1badc0de", "summary": "no payload, no created_at"}', "lists"),  # a record to Hermes
        (b"[1, 2]", "breaks"),
        (b'{"id": "1badc0de"', "skips"),
        (b'{"id": "1badc0de", "payload": "\xff"}', "skips"),
    ],
)
def test_what_an_unreadable_record_says_of_hermes_is_what_hermes_does(hermes, tmp_path, content, sees):
    root = tmp_path / "home"
    home = open_home(root)
    (home.pending_dir / "memory").mkdir(parents=True, exist_ok=True)
    (home.pending_dir / "memory" / "1badc0de.json").write_bytes(content)
    [problem] = home.approvals.problems()
    home.close()
    assert problem.hermes == sees
    listed = hermes.json(root, HERMES_LISTS)
    assert listed == {"lists": ["1badc0de"], "breaks": "AttributeError", "skips": []}[sees]


HERMES_PENDING_LIST = """
import json
from hermes_cli.write_approval_commands import _fmt_pending_list
try:
    print(json.dumps(_fmt_pending_list("memory")))
except Exception as exc:
    print(json.dumps(type(exc).__name__))
"""


def test_a_json_object_with_no_id_is_said_to_break_hermess_pending_list(hermes, tmp_path):
    """notes.json holding `{"note": ...}` was said to be one Hermes "still reads ... its own queue lists
    it": its /memory pending list prints each record's id, and stops with a KeyError on this one."""
    root = tmp_path / "home"
    home = open_home(root)
    (home.pending_dir / "memory").mkdir(parents=True, exist_ok=True)
    (home.pending_dir / "memory" / "notes.json").write_text('{"note": "my notes"}')
    [problem] = home.approvals.problems()
    home.close()
    assert problem.hermes == "unnamed" and "/memory pending list stops with an error" in problem.remedy
    assert hermes.json(root, HERMES_PENDING_LIST) == "KeyError"


HERMES_REWRITES_ENTRY = (
    MEMORY_TURNS
    + r"""
db.create_session("hermes-rewrite", source="cli", model="m")
turn("hermes-rewrite", "rewrite", {"action": "replace", "target": "memory", "old_text": "PostgreSQL 16",
     "content": "Project uses PostgreSQL 16 on db.internal"}, user="the database moved")
print(json.dumps(ids))
"""
)


def test_an_entry_hermess_agent_rewrote_after_staging_is_said_to_be_the_agents(hermes, tmp_path):
    """A trial: approving a replace Hermes staged, after Hermes's agent rewrote the entry it hits, was refused
    naming the rewrite's writer `external`, where the entry's history and the Timeline name the agent and
    its message. The refusal and `pending show` now name the agent too."""
    from types import SimpleNamespace

    from tests.cli_support import ran
    from tests.hermes_support import hermes_record

    root = tmp_path / "home"
    (root / "memories").mkdir(parents=True)
    (root / "memories" / "MEMORY.md").write_text("Project uses PostgreSQL 16\n§\nProject uses uv", encoding="utf-8")
    home = open_home(root)
    home.memory.catch_up()  # the workbench has seen the file
    home.close()
    payload = {"action": "replace", "target": "memory", "old_text": "PostgreSQL 16", "content": "Uses PostgreSQL 17"}
    hermes_record(SimpleNamespace(pending_dir=root / "pending"), "0000cc09", payload, created_at=time.time() - 30)
    hermes.json(root, HERMES_REWRITES_ENTRY)
    code, out, err = ran("pending", "approve", "0000cc09", "--home", str(root))
    assert code == 1 and "written after this was staged" in err
    assert ", agent, event " in err and "external" not in err, err
    code, out, _ = ran("pending", "show", "0000cc09", "--home", str(root), "--json")
    [hit] = json.loads(out)["targets"]
    assert hit["written_after"]["actor"] == "agent"


def test_a_cjk_fact_hermes_staged_and_the_user_rejected_is_not_proposed_again(hermes, tmp_path):
    """Rejected as Hermes staged it ("… 佐藤さん"), the same fact told to the offline agent was proposed
    again: it ends CJK text with "。", and only an ASCII full stop was set aside. Now 。 is one too."""
    from engine.conversation import Conversation
    from engine.models import OfflineModel

    root = _seeded_home(tmp_path)
    (staged,) = hermes.json(
        root,
        "import json\nfrom tools.memory_tool import load_on_disk_store, memory_tool\n"
        "print(json.dumps([json.loads(memory_tool(store=load_on_disk_store(), action='add', target='memory', "
        "content='The release manager is 佐藤さん'))]))",
    )
    home = open_home(root)
    home.approvals.reject(staged["pending_id"])
    turn = Conversation(home, OfflineModel(), background_review=False).run_turn(
        "Remember that the release manager is 佐藤さん"
    )
    (call,) = turn.tool_calls
    assert call["arguments"]["content"] == "The release manager is 佐藤さん。"  # (the offline model's stop)
    assert call["result"].get("rejected_before") == staged["pending_id"]
    assert home.approvals.list("memory") == []
