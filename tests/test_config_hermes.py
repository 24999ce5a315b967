"""Config values Hermes 0.19.0 reads differently: named everywhere, never silent.

The reader table is checked against the real Hermes (its own ``AIAgent`` init, curator
and write gate reading the same config.yaml), so a value we flag is one Hermes really
misreads, and one we do not flag Hermes reads as we do.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from engine import open_home
from engine.config import HERMES_READERS
from engine.doctor import run_doctor
from engine.tools import ToolContext
from tests.hermes_support import workbench_cmd
from tests.tui_support import make_app, settle

TRICKY = """\
memory:
  memory_char_limit: '3000'
  user_char_limit: 1375
  memory_enabled: 'true'
  user_profile_enabled: 'off'
  nudge_interval: '5'
  write_approval: 1
skills:
  write_approval: 'on'
  creation_nudge_interval: '7'
curator:
  enabled: 'false'
  stale_after_days: '20'
  archive_after_days: '60'
compression:
  enabled: 'on'
  threshold: '0.6'
"""


def configured(home, text):
    home.config_path.write_text(text, encoding="utf-8")
    home.reload_config()
    return home


def test_each_value_hermes_misreads_is_named_with_its_line_and_exact_fix(home):
    found = {m.key: m for m in configured(home, TRICKY).config.hermes_misreads()}
    assert set(found) == {
        "memory.memory_char_limit",
        "memory.user_profile_enabled",
        "memory.write_approval",
        "curator.enabled",
        "compression.enabled",
    }
    limit = found["memory.memory_char_limit"]
    assert (limit.line, limit.value, limit.hermes, limit.ours, limit.breaks_memory) == (2, "3000", "3000", 3000, True)
    assert limit.fix == "write 3000 without quotes (memory_char_limit: 3000)"
    assert "injects no memory block" in limit.effect
    assert found["curator.enabled"].effect == "Hermes 0.19.0 reads it as on, the workbench as off"
    assert found["memory.write_approval"].fix == "write true (write_approval: true)"
    # the workbench still reads every value the way it always did
    assert home.config.int("memory.memory_char_limit") == 3000 and home.config.int("memory.nudge_interval") == 5


def test_a_plain_config_has_no_misreads(home):
    assert (
        configured(home, "memory:\n  memory_char_limit: 3000\n  write_approval: true\n").config.hermes_misreads() == []
    )
    assert configured(home, "").config.hermes_misreads() == []


def test_frozen_view_claims_no_block_when_a_quoted_limit_stops_hermes_injecting(home):
    home.memory.add("memory", "User likes tea", ToolContext(actor="user"))
    configured(home, "memory:\n  user_char_limit: '1375'\n")
    assert home.memory.snapshot().withheld is None  # USER.md is empty: Hermes renders no user block, no error
    home.memory.add("user", "Name is Sam", ToolContext(actor="user"))
    frozen = home.memory.snapshot()
    assert frozen.entries == {"memory": (), "user": ()} and frozen.prompt_text() == ""
    assert "user_char_limit is '1375'" in frozen.withheld and "write 1375 without quotes" in frozen.withheld
    assert home.memory.entries("memory") == ["User likes tea"]  # live memory untouched


def test_cli_warns_on_stderr_and_keeps_stdout_pure_json(tmp_path):
    root = tmp_path / "home"
    home = open_home(root)
    home.memory.add("memory", "User likes tea", ToolContext(actor="user"))
    home.close()
    (root / "config.yaml").write_text("memory:\n  memory_char_limit: '3000'\n", encoding="utf-8")
    proc = subprocess.run(
        workbench_cmd("memory", "show", "--frozen", "--target", "memory", "--home", str(root), "--json"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0
    view = json.loads(proc.stdout)
    assert view["entries"] == view["origins"] == [] and "write 3000 without quotes" in view["withheld"]
    assert proc.stderr.startswith("warning: ") and "line 2: memory.memory_char_limit is '3000'" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.anyio
async def test_tui_warns_on_start(home, tmp_path):
    configured(home, "memory:\n  memory_char_limit: '3000'\n")
    app = make_app(home, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        messages = [n.message for n in app._notifications]
        assert any("write 3000 without quotes" in m for m in messages), messages


HERMES_READS = """
import json
from run_agent import AIAgent
from agent import curator
from tools import write_approval as wa
from tools.memory_tool import memory_tool
a = AIAgent(base_url="http://127.0.0.1:9/v1", api_key="x", model="gpt-4o-mini", quiet_mode=True,
            skip_context_files=True)
st = a._memory_store
try:
    tool = json.loads(memory_tool(action="add", target="memory", content="Works in UTC", store=st))["success"]
except TypeError as exc:
    tool = "TypeError"
print(json.dumps({
    "memory.memory_char_limit": st.memory_char_limit, "memory.user_char_limit": st.user_char_limit,
    "memory.memory_enabled": bool(a._memory_enabled), "memory.user_profile_enabled": bool(a._user_profile_enabled),
    "memory.write_approval": wa.write_approval_enabled("memory"), "skills.write_approval": wa.write_approval_enabled("skills"),
    "curator.enabled": curator.is_enabled(), "compression.enabled": a.compression_enabled,
    "block": st.format_for_system_prompt("memory"), "tool": tool,
    "memory.nudge_interval": a._memory_nudge_interval, "skills.creation_nudge_interval": a._skill_nudge_interval,
    "curator.stale_after_days": curator.get_stale_after_days(),
    "curator.archive_after_days": curator.get_archive_after_days(),
}))
"""


@pytest.mark.slow
def test_the_reader_table_is_what_the_real_hermes_does(hermes_saw, tmp_path):
    home, seen = hermes_saw("tricky", tmp_path)
    misread = {m.key: m for m in home.config.hermes_misreads()}
    # (compression.threshold is left out: Hermes floors it at 0.75 for this model's window
    # after reading it with float(), as we do, so the agent does not show the reading)
    for key, (_, kind) in [(k, v) for k, v in HERMES_READERS.items() if k != "compression.threshold"]:
        ours = home.config.typed(key, kind)
        expected = misread[key].hermes if key in misread else ours
        assert seen[key] == expected and type(seen[key]) is type(expected), key
    # the quoted limit: no block at all, and the memory tool fails
    assert seen["block"] is None and seen["tool"] == "TypeError"
    # quoted numbers elsewhere: Hermes converts them, as we do, so none is flagged
    for key in (
        "memory.nudge_interval",
        "skills.creation_nudge_interval",
        "curator.stale_after_days",
        "curator.archive_after_days",
        "compression.threshold",
    ):
        assert key not in misread
    home.close()


# Every default the workbench documents as Hermes's (docs/configuration.md).
HERMES_DEFAULTS = """
import json
from hermes_cli.config import load_config
from run_agent import AIAgent
from agent import curator
cfg = load_config()
keys = ["memory.memory_enabled", "memory.user_profile_enabled", "memory.memory_char_limit", "memory.user_char_limit",
        "memory.write_approval", "memory.provider", "skills.write_approval", "skills.guard_agent_created",
        "curator.enabled", "curator.stale_after_days", "curator.archive_after_days", "compression.enabled",
        "compression.threshold", "compression.protect_first_n", "compression.target_ratio"]
seen = {}
for key in keys:
    section, leaf = key.split(".")
    seen[key] = cfg[section][leaf]
a = AIAgent(base_url="http://127.0.0.1:9/v1", api_key="x", model="gpt-4o-mini", quiet_mode=True,
            skip_context_files=True)
seen["memory.nudge_interval"] = a._memory_nudge_interval
seen["skills.creation_nudge_interval"] = a._skill_nudge_interval
seen["curator.stale_after_days (curator.py)"] = curator.get_stale_after_days()
seen["curator.archive_after_days (curator.py)"] = curator.get_archive_after_days()
print(json.dumps(seen))
"""


@pytest.mark.slow
def test_defaults_we_call_hermes_are_hermes_0_19_0(hermes_saw, tmp_path):
    home, seen = hermes_saw("new", tmp_path)
    for key, value in seen.items():
        ours = home.config.raw(key.split(" ")[0])
        assert ours == value and type(ours) is type(value), (key, ours, value)
    home.close()


@pytest.mark.slow
def test_a_quoted_limit_of_an_empty_store_leaves_the_block_hermes_injects(hermes_saw, tmp_path):
    home, seen = hermes_saw("quoted user limit", tmp_path)  # USER.md is empty
    frozen = home.memory.snapshot()  # (Hermes's probe added an entry to a copy of its own)
    assert frozen.withheld is None and seen["block"] == frozen.block("memory") != ""
    home.close()


@pytest.mark.slow
def test_a_nudge_interval_neither_program_can_use_leaves_hermes_without_memory(hermes_saw, tmp_path):
    home, seen = hermes_saw("nudge", tmp_path)
    assert seen == {"store": False}
    [finding] = [f for f in run_doctor(home).findings if f.area == "config"]
    assert finding.severity == "error" and "nudge_interval" in finding.what
    home.close()


# Values Hermes runs with that mean nothing to us: replaced, with the line, never refused or silent.
REPLACED = """\
memory:
  memory_char_limit: -5
  write_approval: maybe
  memory_enabled: maybe
curator:
  enabled: maybe
"""


def test_a_value_hermes_runs_with_is_replaced_and_said_with_its_line(home):
    """`memory_char_limit: -5` was taken ("more than the store's whole limit of -5") and `maybe` refused
    the agent's writes, though Hermes reads it as off; neither was said where the value was given."""
    configured(home, REPLACED)
    replaced = {s.key: s for s in home.config.substitutions()}
    assert [(k, s.line, s.used) for k, s in replaced.items()] == [
        ("memory.memory_char_limit", 2, "2,200 (the default)"),
        ("memory.write_approval", 3, "off"),
        ("memory.memory_enabled", 4, "on"),
        ("curator.enabled", 6, "on"),
    ]
    assert home.config.unusable() == [] and home.config.hermes_misreads() == []
    assert home.memory.limit("memory") == 2200 and not home.config.bool("memory.write_approval")
    assert home.memory.add("memory", "User likes tea", ToolContext(actor="agent"))["success"]  # not staged
    findings = [f for f in run_doctor(home).findings if f.area == "config"]
    assert [f.severity for f in findings] == ["warning"] * 4
    assert findings[0].what.startswith("config.yaml line 2: memory.memory_char_limit is -5, not a char limit above 0")
    assert "refuses every write" in findings[0].what and "memory_char_limit: 2200" in findings[0].fix


def test_a_section_holding_a_value_uses_the_defaults_and_says_so(tmp_path):
    root = tmp_path / "home"
    open_home(root).close()
    (root / "config.yaml").write_text('memory: "just a string"\n', encoding="utf-8")
    proc = subprocess.run(
        workbench_cmd("memory", "add", "--target", "memory", "User likes tea", "--home", str(root), "--json"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and json.loads(proc.stdout)["success"]
    assert proc.stderr.startswith("warning: ") and "line 1: memory is 'just a string', not a section" in proc.stderr
    assert "default of every memory.* setting" in proc.stderr and "no built-in memory" in proc.stderr


HERMES_SECTION = """
import json
from run_agent import AIAgent
a = AIAgent(base_url="http://127.0.0.1:9/v1", api_key="x", model="gpt-4o-mini", quiet_mode=True,
            skip_context_files=True)
print(json.dumps([a._memory_store is None, bool(a._memory_enabled)]))
"""


@pytest.mark.slow
def test_what_we_say_hermes_does_with_a_replaced_value_is_what_it_does(hermes_saw, tmp_path):
    home, seen = hermes_saw("replaced", tmp_path)
    assert seen["memory.memory_char_limit"] == -5 and seen["tool"] is False  # "refuses every write"
    for key in ("memory.write_approval", "memory.memory_enabled", "curator.enabled"):  # read as Hermes reads them
        assert seen[key] is home.config.bool(key), key
    home.close()
    home, seen = hermes_saw("section", tmp_path / "again")
    assert seen == [True, False]  # "no built-in memory at all"
    home.close()


HERMES_NUDGE = """
import json
from run_agent import AIAgent
a = AIAgent(base_url="http://127.0.0.1:9/v1", api_key="x", model="gpt-4o-mini", quiet_mode=True,
            skip_context_files=True)
print(json.dumps({"store": a._memory_store is not None}))
"""

# What every snippet below imports, imported once before the first question (with the OpenAI client
# ``AIAgent`` imports when it is made: 1 s of CPU).
HERMES_IMPORTS = """
import openai
from run_agent import AIAgent
from agent import curator
from hermes_cli.config import load_config
from tools import write_approval
from tools.memory_tool import memory_tool
"""

# The homes the Hermes tests ask about: (entry in MEMORY.md or None, config.yaml or None, Hermes's snippet).
ASKED = {
    "tricky": ("User likes tea", TRICKY, HERMES_READS),
    "new": (None, None, HERMES_DEFAULTS),
    "quoted user limit": ("User likes tea", "memory:\n  user_char_limit: '1375'\n", HERMES_READS),
    "nudge": (None, "memory:\n  nudge_interval: '10.0'\n", HERMES_NUDGE),
    "replaced": (None, REPLACED, HERMES_READS),
    "section": (None, 'memory: "just a string"\n', HERMES_SECTION),
}


@pytest.fixture(scope="module")
def hermes_saw(hermes, tmp_path_factory):
    """``hermes_saw(name, folder)``: the open home ``ASKED[name]`` describes, at ``folder/home``, and what
    Hermes's snippet printed on a copy of it. One Hermes process answers for the module (its imports
    cost 2 s of CPU); each test opens a copy of its own."""
    made = tmp_path_factory.mktemp("asked")
    questions = []
    for name, (entry, config, snippet) in ASKED.items():
        home = open_home(made / name)
        if entry is not None:
            home.memory.add("memory", entry, ToolContext(actor="user"))
        if config is not None:
            configured(home, config)
        home.close()
        shutil.copytree(made / name, made / f"{name} for hermes")
        questions.append((made / f"{name} for hermes", snippet))
    seen = dict(zip(ASKED, hermes.answers(made, HERMES_IMPORTS, questions), strict=True))

    def saw(name, folder):
        shutil.copytree(made / name, folder / "home")
        return open_home(folder / "home"), seen[name]

    return saw
