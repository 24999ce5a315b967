"""`workbench pending ...`: records outlive the process that staged them, and what each command says.

Real processes stage and list where that is the point (another process's records, usage errors'
exit status, a write landing during an approval); elsewhere the CLI runs in this process."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from types import SimpleNamespace

from engine import open_home
from engine.skills.manage import skill_manage_tool
from engine.tools import ToolContext
from tests.cli_support import ran
from tests.hermes_support import hermes_record


def cli(home, *args):
    result = subprocess.run(
        [sys.executable, "-m", "workbench", *args, "--home", str(home), "--json"], capture_output=True, text=True
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout) if result.stdout.strip() else None


def said(home, *args):
    """``cli``'s answer, from the CLI run in this process."""
    status, out, err = ran(*args, "--home", str(home), "--json")
    assert "Traceback" not in err, err
    return status, json.loads(out) if out.strip() else None


def staged(root, subsystem, payload, summary, origin="foreground"):
    """A record staged by the engine in this process; its id."""
    home = open_home(root)
    try:
        return home.approvals.stage(
            subsystem=subsystem, action=payload["action"], summary=summary, origin=origin, payload=payload
        ).id
    finally:
        home.close()


def python(home, body):
    """Run engine code in a fresh process (``home`` is open as ``home``); returns its stdout."""
    code = (
        f"from engine import open_home\nfrom engine.tools import ToolContext\nhome = open_home({str(home)!r})\n{body}"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def stage_in_subprocess(home, subsystem, payload, summary, origin="foreground"):
    return python(
        home,
        f"print(home.approvals.stage(subsystem={subsystem!r}, action={payload['action']!r}, "
        f"summary={summary!r}, origin={origin!r}, payload={payload!r}).id)",
    )


def test_list_shows_records_staged_by_another_process(tmp_path):
    home = tmp_path / "h"
    first = stage_in_subprocess(
        home,
        "memory",
        {"action": "add", "target": "user", "content": "Prefers tea"},
        "add to user profile: Prefers tea",
    )
    second = stage_in_subprocess(
        home, "skills", {"action": "create", "name": "brew"}, "create 'brew'", origin="background_review"
    )
    code, data = cli(home, "pending", "list")
    assert code == 0 and data["problems"] == []
    assert [row["id"] for row in data["pending"]] == [first, second]
    row = data["pending"][1]
    assert {k: row[k] for k in ("subsystem", "action", "summary", "origin")} == {
        "subsystem": "skills",
        "action": "create",
        "summary": "create 'brew'",
        "origin": "background_review",
    }
    assert row["created_at"].endswith("+00:00") and row["age_seconds"] >= 0 and row["age"]
    text = subprocess.run(
        [sys.executable, "-m", "workbench", "pending", "list", "--home", str(home)], capture_output=True, text=True
    ).stdout
    assert first in text and "Prefers tea" in text
    # the origins in the Approvals screen's words: "review" for the background review, "agent" for a turn
    assert re.search(r"skills +review +(just now|\d+[smh] ago) +create 'brew'", text)
    assert re.search(r"memory +agent +(just now|\d+[smh] ago) +add to user profile", text)


def test_age_text():
    from workbench.cli.pending_cmds import age_text

    assert [age_text(s) for s in (0.2, 1, 59.9, 60, 7199, 86400 * 3)] == [
        "just now",
        "1s ago",
        "59s ago",
        "1m ago",
        "1h ago",
        "3d ago",
    ]


def test_show_a_skill_proposal(tmp_path):
    home = tmp_path / "h"
    home.mkdir()
    (home / "config.yaml").write_text("skills:\n  write_approval: on\n")
    skill = "---\nname: brew\ndescription: Brew tea\n---\n\nBoil water.\n"
    opened = open_home(home)
    pid = skill_manage_tool(opened, {"action": "create", "name": "brew", "content": skill}, ToolContext())["pending_id"]
    opened.close()
    code, view = said(home, "pending", "show", pid)
    assert code == 0 and view["error"] is None and view["name"] == "brew"
    assert view["diff"] == [["+", line] for line in skill.splitlines()]
    assert not (home / "skills" / "brew").exists()


def test_reject_one_and_all_and_unknown_ids(tmp_path):
    home = tmp_path / "h"
    ids = [staged(home, "memory", {"action": "add", "target": "memory", "content": f"f{i}"}, f"s{i}") for i in range(3)]
    code, data = said(home, "pending", "reject", ids[0])
    assert code == 0 and data["success"] and [r["id"] for r in data["rejected"]] == [ids[0]]
    code, data = said(home, "pending", "reject", ids[0])
    assert code == 1 and data["success"] is False and "No pending write" in data["error"]
    code, data = said(home, "pending", "reject", "../../config")
    assert code == 1 and "Invalid pending id" in data["error"]
    code, data = said(home, "pending", "reject", "all")
    assert code == 0 and sorted(r["id"] for r in data["rejected"]) == sorted(ids[1:])
    assert said(home, "pending", "list")[1]["pending"] == []


def test_malformed_record_is_reported_not_fatal(tmp_path):
    home = tmp_path / "h"
    good = staged(home, "memory", {"action": "add", "target": "memory", "content": "x"}, "s")
    (home / "pending" / "memory" / "abcdef12.json").write_text("{broken")
    code, data = said(home, "pending", "list")
    assert code == 0 and [r["id"] for r in data["pending"]] == [good]
    assert data["problems"][0]["path"].endswith("abcdef12.json")
    assert (home / "pending" / "memory" / "abcdef12.json").read_text() == "{broken"


def test_usage_errors_exit_2(tmp_path):
    home = tmp_path / "h"
    home.mkdir()
    for args in (("pending",), ("pending", "approve", "all", "--edit", "x"), ("pending", "frob")):
        result = subprocess.run(
            [sys.executable, "-m", "workbench", *args, "--home", str(home)], capture_output=True, text=True
        )
        assert result.returncode == 2 and "Traceback" not in result.stderr


def test_an_unusable_record_can_be_rejected_by_id(tmp_path):
    folder = tmp_path / "h" / "pending" / "memory"
    folder.mkdir(parents=True)
    for pid in ("0badc0de", "0badf00d"):
        (folder / f"{pid}.json").write_text("{broken")

    def reject(*args):
        return ran("pending", "reject", *args, "--home", str(tmp_path / "h"))

    as_json, as_text = reject("0badc0de", "--json"), reject("0badf00d")
    assert as_json[0] == 0 and as_text[0] == 0
    assert "Traceback" not in as_json[2] + as_text[2]
    assert json.loads(as_json[1])["rejected"][0]["summary"].startswith("unusable record (not valid JSON")
    assert "0badf00d  unusable record" in as_text[1]
    assert list(folder.iterdir()) == []


def test_a_file_named_as_no_id_is_pointed_out_by_its_name(tmp_path):
    """`pending reject badjson` answered "Invalid pending id 'badjson' … (see `workbench pending list`)",
    which lists that very file: a name the list shows is now told to be moved out by hand. `pending approve`
    said so too, in words about rejecting: they now speak of both."""
    folder = tmp_path / "h" / "pending" / "memory"
    folder.mkdir(parents=True)
    (folder / "notes.json").write_text('{"id": "x"}')
    for verb, name in (("reject", "notes"), ("reject", "notes.json"), ("approve", "notes")):
        status, _, err = ran("pending", verb, name, "--home", str(tmp_path / "h"))
        assert status == 1
        assert err == (
            f"error: {folder / 'notes.json'} is no pending record: Its name is not a pending id (8 lowercase hex "
            "characters), so it is no proposal, and no approval or rejection can name it. Move it out of "
            "pending/memory/ by hand. Nothing was changed.\n"
        )
    assert (folder / "notes.json").read_text() == '{"id": "x"}'


def test_a_relative_home_lists_and_approves_its_pending_writes(tmp_path):
    """`make run` passes `--home demo-home`: its pending records were once all skipped as "outside the
    home", because the root stayed relative while the files were listed by absolute path."""
    stage = (
        "from engine import open_home\nhome = open_home('rel')\n"
        "print(home.approvals.stage(subsystem='memory', action='add', summary='add: Prefers tea', "
        "origin='foreground', payload={'action': 'add', 'target': 'user', 'content': 'Prefers tea'}).id)"
    )
    staged = subprocess.run(
        [sys.executable, "-c", stage], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.strip()

    def rel(*args):
        result = subprocess.run(
            [sys.executable, "-m", "workbench", *args, "--home", "rel", "--json"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert "Traceback" not in result.stderr, result.stderr
        return json.loads(result.stdout)

    listing = rel("pending", "list")
    assert listing["problems"] == [] and [r["id"] for r in listing["pending"]] == [staged]
    assert rel("pending", "approve", staged)["success"] is True
    assert "Prefers tea" in (tmp_path / "rel" / "memories" / "USER.md").read_text()


def test_show_dates_a_hermes_hit_on_an_entry_written_outside_after_staging(tmp_path):
    """`pending show` first journals what changed outside (as `memory history` does), so a Hermes
    remove that now hits an entry someone rewrote since it was staged says so."""
    home = tmp_path / "h"
    memory = home / "memories" / "MEMORY.md"
    memory.parent.mkdir(parents=True)
    memory.write_text("The build cache lives in /var/cache/ci, cleaned weekly\n§\nProject uses uv", encoding="utf-8")
    assert said(home, "memory", "show")[0] == 0  # the workbench has seen the file
    payload = {"action": "remove", "target": "memory", "old_text": "build cache"}
    hermes_record(SimpleNamespace(pending_dir=home / "pending"), "0000cc02", payload, created_at=time.time() - 30)
    code, shown = said(home, "pending", "show", "0000cc02")
    assert code == 0 and [t.get("written_after") for t in shown["targets"]] == [None]
    memory.write_text("The build cache lives in /var/cache/ci3 now\n§\nProject uses uv", encoding="utf-8")
    code, shown = said(home, "pending", "show", "0000cc02")
    [hit] = shown["targets"]
    assert hit["entry"] == "The build cache lives in /var/cache/ci3 now" and hit["written_after"]["actor"] == "external"
    text = ran("pending", "show", "0000cc02", "--home", str(home))[1]
    assert "⚠ that entry was written after this was staged" in text and "external" in text


MINE = "Project uses PostgreSQL 16; its host is db.internal"  # the user's rewrite of the entry Hermes's replace hits


def test_a_hermes_record_stamped_at_an_impossible_time_has_no_age(tmp_path):
    """`pending list` gave a record Hermes's wrong clock stamped ``created_at: 0`` an age of 20795d, and
    `pending show` said it was staged in 1970."""
    home = tmp_path / "h"
    open_home(home).close()
    payload = {"action": "add", "target": "memory", "content": "Kettle descales monthly"}
    hermes_record(SimpleNamespace(pending_dir=home / "pending"), "0000ee01", payload, created_at=-5.0)
    status, data = said(home, "pending", "list")
    [row] = data["pending"]
    assert status == 0 and (row["age_seconds"], row["age"]) == (None, "unknown")
    code, out, _ = ran("pending", "list", "--home", str(home))
    assert re.search(r"0000ee01 +memory +agent \(Hermes\) +unknown +add to memory", out), out
    code, out, _ = ran("pending", "show", "0000ee01", "--home", str(home))
    assert "staged: unknown (its record holds 1969-12-31" in out and "the clock that wrote it was wrong)" in out
    assert said(home, "pending", "show", "0000ee01")[1]["time_known"] is False


def staged_over_postgres(home, pending_id: str):
    """A home whose MEMORY.md holds 'Project uses PostgreSQL 16' and a replace of it Hermes staged 30 s ago;
    returns MEMORY.md's path."""
    memory = home / "memories" / "MEMORY.md"
    memory.parent.mkdir(parents=True)
    memory.write_text("Project uses PostgreSQL 16\n§\nProject uses uv", encoding="utf-8")
    payload = {"action": "replace", "target": "memory", "old_text": "PostgreSQL 16", "content": "Uses PostgreSQL 17"}
    hermes_record(SimpleNamespace(pending_dir=home / "pending"), pending_id, payload, created_at=time.time() - 30)
    return memory


def test_approve_refuses_a_hermes_replace_that_now_hits_an_entry_written_after_staging(tmp_path):
    """`pending approve ID` shows nothing first: Hermes's replace of 'PostgreSQL 16', staged before the
    user rewrote that entry by hand, replaced the user's newer text unasked (only `pending show`
    warned). It is refused and stays pending, naming the entry; `--anyway` applies it."""
    home = tmp_path / "h"
    memory = staged_over_postgres(home, "0000cc03")
    assert said(home, "memory", "replace", "--target", "memory", "--old", "PostgreSQL 16", MINE)[0] == 0
    code, out = said(home, "pending", "approve", "0000cc03")
    assert code == 1 and out["failed"][0]["id"] == "0000cc03"
    assert "written after this was staged" in out["error"] and MINE in out["error"] and "--anyway" in out["error"]
    assert memory.read_text(encoding="utf-8") == f"{MINE}\n§\nProject uses uv"
    assert (home / "pending" / "memory" / "0000cc03.json").exists()
    code, out = said(home, "pending", "approve", "all")
    assert code == 1 and [f["id"] for f in out["failed"]] == ["0000cc03"]
    code, out = said(home, "pending", "approve", "0000cc03", "--anyway")
    assert code == 0 and memory.read_text(encoding="utf-8") == "Uses PostgreSQL 17\n§\nProject uses uv"


def test_approving_a_duplicate_says_it_changed_nothing(home, capsys):
    """The text said only 'Approved 1 pending write(s).', while --json and the TUI said the entry
    was there already."""
    from workbench.cli import main

    home.memory.add("memory", "Kettle descales monthly", None)
    hermes_record(home, "0000ad01", {"action": "add", "target": "memory", "content": "Kettle descales monthly"})
    hermes_record(home, "0000ad02", {"action": "add", "target": "memory", "content": "Cups live left"})
    home.close()
    assert main(["--home", str(home.root), "pending", "approve", "all"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    duplicate = lines.index(next(line for line in lines if "0000ad01" in line))
    assert lines[duplicate + 1] == "    Nothing changed: Entry already exists (no duplicate added)."
    assert "0000ad02" in out and out.count("Nothing changed") == 1


def test_an_approval_says_what_it_applied_in_the_words_the_tui_shows(tmp_path):
    """A user trial: `pending approve ID` said only which proposal it approved, never what that did, while
    the TUI said `Entry added.` and the like. Each approval now says it under its row, from the engine's
    result (the TUI's words): for a memory add, replace and remove, and a skill's patch."""
    home = tmp_path / "h"
    (home / "skills" / "brew").mkdir(parents=True)
    (home / "skills" / "brew" / "SKILL.md").write_text(
        "---\nname: brew\ndescription: Brew tea\n---\n\nSteep 3 minutes.\n"
    )
    (home / "config.yaml").write_text("skills:\n  write_approval: on\n")
    opened = open_home(home)
    opened.memory.add("memory", "Kettle descales monthly", ToolContext(actor="user"))
    opened.memory.add("memory", "Cups live left of the sink", ToolContext(actor="user"))
    opened.close()
    ids = [
        staged(home, "memory", {"action": "add", "target": "memory", "content": "Tea is oolong"}, "add tea"),
        staged(
            home,
            "memory",
            {"action": "replace", "target": "memory", "old_text": "monthly", "content": "Kettle descales weekly"},
            "replace kettle",
        ),
        staged(home, "memory", {"action": "remove", "target": "memory", "old_text": "Cups live"}, "remove cups"),
    ]
    opened = open_home(home)
    patch = {"action": "patch", "name": "brew", "old_string": "3 minutes", "new_string": "4 minutes"}
    ids.append(skill_manage_tool(opened, patch, ToolContext())["pending_id"])
    opened.close()
    said_ = [
        "Entry added.",
        "Entry replaced.",
        "Entry removed.",
        "Patched SKILL.md in skill 'brew' (1 replacement).",
    ]
    for n, (rid, words) in enumerate(zip(ids, said_, strict=True)):
        if n == 0:  # (once as a person runs it)
            done = subprocess.run(
                [sys.executable, "-m", "workbench", "pending", "approve", rid, "--home", str(home)],
                capture_output=True,
                text=True,
            )
            code, out = done.returncode, done.stdout
        else:
            code, out, _ = ran("pending", "approve", rid, "--home", str(home))
        lines = out.splitlines()
        assert code == 0 and lines[0] == "Approved 1 pending write." and lines[1].startswith(f"  {rid}  "), out
        assert lines[2:] == [f"    {words}"], out
    opened = open_home(home)
    assert opened.memory.entries("memory") == ["Kettle descales weekly", "Tea is oolong"]
    assert "Steep 4 minutes." in (home / "skills" / "brew" / "SKILL.md").read_text()
    opened.close()


def _files(root) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_pending_list_leaves_a_home_no_workbench_journals_exactly_as_it_is(tmp_path):
    """The contract's read-only `pending list`: in a Hermes home no workbench has journaled it
    created workbench.db, pending/ and state.db.lock, and opened state.db for writing (its WAL
    files went), while listing Hermes's record."""
    home = tmp_path / "h"
    memory = home / "memories" / "MEMORY.md"
    memory.parent.mkdir(parents=True)
    memory.write_text("User likes tea", encoding="utf-8")
    hermes_record(
        SimpleNamespace(pending_dir=home / "pending"),
        "0000cd02",
        {"action": "add", "target": "memory", "content": "Kettle descales monthly"},
        created_at=time.time() - 30,
    )
    before = _files(home)
    code, listed = said(home, "pending", "list")
    assert code == 0 and [r["id"] for r in listed["pending"]] == ["0000cd02"]
    assert _files(home) == before


def test_a_hermes_record_seen_by_pending_list_keeps_its_story_when_hermes_approves_it(tmp_path):
    """In a home a workbench journals, `pending list` (or `show`) was the only look before Hermes
    approved: nothing had journaled the record as staged, so its approval's rows read as bare
    outside edits with no proposer."""
    home = tmp_path / "h"
    memory = home / "memories" / "MEMORY.md"
    memory.parent.mkdir(parents=True)
    memory.write_text("User likes tea", encoding="utf-8")
    assert said(home, "timeline")[0] == 0  # a workbench has looked: the home has a journal
    payload = {"action": "add", "target": "memory", "content": "Kettle descales monthly"}
    pending = SimpleNamespace(pending_dir=home / "pending")
    hermes_record(pending, "0000cd01", payload, created_at=time.time() - 30)
    code, listed = said(home, "pending", "list")
    assert code == 0 and [r["id"] for r in listed["pending"]] == ["0000cd01"]
    memory.write_text("User likes tea\n§\nKettle descales monthly", encoding="utf-8")  # Hermes's approval
    (home / "pending" / "memory" / "0000cd01.json").unlink()
    code, timeline = said(home, "timeline")
    summaries = [row["summary"] for row in timeline["rows"]]
    assert any(s.endswith("(proposed by Hermes agent)") and "Kettle descales monthly" in s for s in summaries), (
        summaries
    )
    assert [row["action"] for row in timeline["rows"] if row["subsystem"] == "approvals"][:2] == ["approve", "stage"]


def test_pending_show_of_an_unknown_id_journals_nothing(tmp_path):
    """`pending show zzz` (or an id that names no record) was refused only after the catch-up had
    created workbench.db and state.db.lock in a Hermes home no workbench had touched (user trial)."""
    home = tmp_path / "h"
    (home / "memories").mkdir(parents=True)
    (home / "memories" / "MEMORY.md").write_text("User likes tea", encoding="utf-8")
    for wrong in ("zzz", "00000000"):
        code, shown = said(home, "pending", "show", wrong)
        assert code == 1 and shown["error"]
    assert not (home / "workbench.db").exists() and not (home / "state.db.lock").exists()


def test_a_folder_named_like_a_record_is_refused_by_name_and_listed_with_its_id(tmp_path):
    folder = tmp_path / "h" / "pending" / "memory" / "2badc0de.json"
    folder.mkdir(parents=True)

    def workbench(*args):
        return ran("pending", *args, "--home", str(tmp_path / "h"))

    status, out, err = workbench("reject", "2badc0de")
    assert status == 1 and "Traceback" not in err
    assert "is a folder, not a file: rejecting never deletes a folder" in out + err
    assert folder.is_dir()
    [problem] = json.loads(workbench("list", "--json")[1])["problems"]
    assert (problem["id"], problem["subsystem"], problem["error"]) == (
        "2badc0de",
        "memory",
        "it is a folder, not a file",
    )


def test_a_file_name_with_a_line_break_stays_on_one_line_in_a_refusal(tmp_path):
    """A path from data in a message: a line break in a file name started a line of its own."""
    folder = tmp_path / "h" / "pending" / "memory"
    folder.mkdir(parents=True)
    (folder / "a\nb.json").write_text('{"id": "x"}')
    status, _, err = ran("pending", "reject", "a\nb", "--home", str(tmp_path / "h"))
    assert status == 1
    assert err.count("\n") == 1 and "a⏎b.json is no pending record" in err


def test_reject_and_restore_show_a_summary_as_the_list_does(tmp_path):
    """A Hermes replace's summary holds a line break (`old: 乌龙茶` / `new: …`): `pending list` showed
    it as `⏎`, `pending reject` and `pending restore` folded it into a space. One rule now."""
    home = tmp_path / "h"
    (home / "memories").mkdir(parents=True)
    (home / "memories" / "MEMORY.md").write_text("用户喜欢喝乌龙茶", encoding="utf-8")
    summary = "replace in memory: old: 乌龙茶\nnew: 用户喜欢喝绿茶"
    payload = {"action": "replace", "target": "memory", "old_text": "乌龙茶", "content": "用户喜欢喝绿茶"}
    pid = staged(home, "memory", payload, summary)

    def text(*args):
        status, out, err = ran(*args, "--home", str(home))
        assert status == 0, err
        return next(line for line in out.splitlines() if line.startswith(f"  {pid}"))

    listed = text("pending", "list").replace(f"  {pid}", "", 1)
    assert "old: 乌龙茶⏎new: 用户喜欢喝绿茶" in listed
    shown = listed[listed.index("replace in memory") :]
    assert text("pending", "reject", pid) == f"  {pid}  {shown}"
    assert text("pending", "restore", pid) == f"  {pid}  {shown}"


def test_an_entry_rewritten_between_the_check_and_the_write_is_not_replaced_unseen(tmp_path):
    """`pending approve ID` checks that the entry a Hermes replace hits was not rewritten after staging,
    then applies, and the apply took whatever entry the words hit by then: a user's rewrite landing after
    the check (another process, here at the moment the check reads the journal) was replaced unasked."""
    from engine import open_home

    root = tmp_path / "h"
    memory = staged_over_postgres(root, "0000cc04")
    home = open_home(root)
    conn = home.journal.connection()
    rewrites: list[int] = []

    def meanwhile(sql: str) -> None:  # the check's look at the entry's history: the user writes now
        if not rewrites and sql.startswith("SELECT * FROM journal WHERE subsystem = 'memory' AND target = 'memory'"):
            rewrites.append(cli(root, "memory", "replace", "--target", "memory", "--old", "PostgreSQL 16", MINE)[0])

    conn.set_trace_callback(meanwhile)
    try:
        result = home.approvals.approve("0000cc04")
    finally:
        conn.set_trace_callback(None)
    assert rewrites == [0]
    assert not result["success"] and (root / "pending" / "memory" / "0000cc04.json").exists()
    assert result["error"].startswith("MEMORY.md changed as it was approved: an entry this write would change is no")
    assert memory.read_text(encoding="utf-8") == f"{MINE}\n§\nProject uses uv"
    home.close()


def test_an_edited_approval_says_the_edit_was_applied(tmp_path):
    """`pending approve ID --edit TEXT` listed the proposal's own text as approved, with no word of the
    edit that was written in its place (user trial)."""
    home = tmp_path / "h"
    payload = {"action": "add", "target": "memory", "content": "Hermes fact alpha"}
    rid = staged(home, "memory", payload, "add to memory: Hermes fact alpha")
    code, out, _ = ran("pending", "approve", rid, "--edit", "Edited fact beta", "--home", str(home))
    assert code == 0 and f"  {rid}  add to memory: Hermes fact alpha\n    Entry added. (approved with your edit)" in out
    opened = open_home(home)
    assert opened.memory.entries("memory") == ["Edited fact beta"]
    opened.close()


def test_approve_or_reject_all_of_an_empty_queue_says_what_pending_list_says(tmp_path):
    """`approve all` on an empty queue said "Approved 0 pending write(s)."; it says what `pending list`
    says (nothing waits, which gates are on), exit 0, as `reject all` does."""
    home = tmp_path / "h"
    (home).mkdir()
    (home / "config.yaml").write_text("memory:\n  write_approval: true\n", encoding="utf-8")
    listed = ran("--home", str(home), "pending", "list")
    assert listed[0] == 0 and listed[1].startswith("Nothing waits for approval. memory.write_approval is on")
    for verb in ("approve", "reject"):
        assert ran("--home", str(home), "pending", verb, "all") == listed
    skills = ran("--home", str(home), "pending", "reject", "all", "--subsystem", "skills")
    assert skills[0] == 0 and skills[1].startswith("No pending skill writes.")


def test_counts_of_pending_writes_are_said_as_words(tmp_path):
    """Doctor said "1 write(s) wait for review" and approving "Approved 2 pending write(s).": each count
    reads as English now, the verb too."""
    from engine.approvals.health import check_pending

    home = tmp_path / "h"
    staged(home, "memory", {"action": "add", "target": "memory", "content": "Tea is oolong"}, "add tea")
    opened = open_home(home)
    [finding] = check_pending(opened)
    assert finding.what == "1 write waits for review (`workbench pending list`)."
    opened.close()
    staged(home, "memory", {"action": "add", "target": "memory", "content": "Coffee is black"}, "add coffee")
    opened = open_home(home)
    [finding] = check_pending(opened)
    assert finding.what == "2 writes wait for review (`workbench pending list`)."
    opened.close()
    code, out, _ = ran("pending", "approve", "all", "--home", str(home))
    assert code == 0 and out.splitlines()[0] == "Approved 2 pending writes.", out


def test_reject_all_and_approve_all_name_the_one_revert_that_undoes_them(tmp_path):
    """`pending reject all` said nothing of its undo, and `pending restore` puts one back at a time:
    each `all` names its Timeline group, whose revert takes every decision back in one step, as the
    TUI's u does after R."""
    home = tmp_path / "h"
    for text in ("Tea is oolong", "Coffee is black"):
        staged(home, "memory", {"action": "add", "target": "memory", "content": text}, f"add {text}")
    code, out, _ = ran("pending", "reject", "all", "--home", str(home))
    undo = out.splitlines()[-1]
    assert code == 0 and re.fullmatch(r"undo: workbench revert reject-all:[0-9a-f]{8}", undo), out
    assert said(home, "revert", undo.split()[-1])[1]["success"]
    assert len(said(home, "pending", "list")[1]["pending"]) == 2
    code, out, _ = ran("pending", "approve", "all", "--home", str(home))
    undo = out.splitlines()[-1]
    assert code == 0 and re.fullmatch(r"undo: workbench revert approve-all:[0-9a-f]{8}", undo), out
    assert said(home, "revert", undo.split()[-1])[1]["success"]
    opened = open_home(home)
    assert opened.memory.entries("memory") == [] and opened.approvals.count() == 0
    opened.close()


def test_an_approve_all_that_approved_nothing_names_no_undo(tmp_path):
    """The undo of a bulk decision is named only where it decided something (docs/cli-contract.md): an
    approve all whose every proposal was refused has no group to revert, in the text or in --json; one
    that approved some names it under them, before its failures."""
    home = tmp_path / "h"
    gone = {"action": "remove", "target": "memory", "old_text": "Tea is oolong"}
    staged(home, "memory", gone, "remove tea")
    code, doc = said(home, "pending", "approve", "all")
    assert code == 1 and doc["approved"] == [] and len(doc["failed"]) == 1 and "group" not in doc
    code, out, _ = ran("pending", "approve", "all", "--home", str(home))
    assert code == 1 and "undo:" not in out
    staged(home, "memory", {"action": "add", "target": "memory", "content": "Coffee is black"}, "add coffee")
    code, out, _ = ran("pending", "approve", "all", "--home", str(home))
    lines = out.splitlines()
    assert code == 1 and lines[0] == "Approved 1 pending write."
    assert re.fullmatch(r"undo: workbench revert approve-all:[0-9a-f]{8}", lines[lines.index("Failed:") - 1]), out
