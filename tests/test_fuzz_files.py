"""Hypothesis over every on-disk file type: hostile bytes never end in a traceback or a hang.

Each example copies a seeded home, spoils one file (or rows of one database) the way a
hand edit, another program or an attacker could, then runs the CLI commands that read it
(in-process through ``main``) and the engine calls the TUI's screens make. The CLI must
answer 0, 1 or 2 (70 is an internal error: its saved traceback fails the test); the
engine may only raise ``WorkbenchError`` (what the screens show as a message). An example
that runs longer than ``HANG_SECONDS`` is a hang. ``FUZZ_EXAMPLES`` raises the count
(``make fuzz``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import FixedClock, open_home
from engine.config import all_defaults
from engine.demo import seed_demo_home
from engine.errors import WorkbenchError
from engine.memory.tool import memory_tool
from engine.skills.manage import skill_manage_tool
from engine.tools import ToolContext
from workbench.cli import main

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "100"))
HANG_SECONDS = 60


class Hang(BaseException):
    """Raised by the alarm: not an ``Exception``, so nothing on the way can swallow it."""


class Raw(str):
    """A JSON token written as is (``1e999``, ``-Infinity``, deep nesting)."""


DEEP = 100_000
HOSTILE_JSON = [
    None,
    True,
    False,
    0,
    -1,
    2**63,
    10**400,
    1e308,
    -1e308,
    5e-324,
    Raw("1e999"),
    Raw("-1e999"),
    Raw("Infinity"),
    Raw("-Infinity"),
    Raw("NaN"),
    "",
    " ",
    "\ud800",
    "\udcff",
    "0001-01-01T00:00:00",
    "0001-01-01T00:00:00+00:00",
    "9999-12-31T23:59:59+00:00",
    "not a date",
    "2026-13-45",
    "\x1b]0;PWNED\x07\x1b[2J",
    "\u202e",
    "a" * 100_000,
    "数据库",
    "../../etc/passwd",
    [],
    {},
    ["x", 1],
    {"a": {"b": []}},
    [[["deep"]]],
    Raw("[" * DEEP + "]" * DEEP),
    Raw('{"a":' * DEEP + "1" + "}" * DEEP),
]
json_scalars = st.one_of(st.sampled_from(HOSTILE_JSON), st.integers(), st.floats(), st.text(max_size=30))


def dump(value) -> str:
    """JSON text with ``Raw`` tokens verbatim (json.dumps cannot write them)."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(str(k)) + ":" + dump(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(dump(v) for v in value) + "]"
    return json.dumps(value)


@st.composite
def mutated(draw, doc):
    """``doc`` with one value somewhere inside it replaced by a hostile one (or a key dropped)."""
    if isinstance(doc, dict) and doc and draw(st.integers(0, 3)):
        key = draw(st.sampled_from(sorted(doc)))
        if not draw(st.integers(0, 7)):
            return {k: v for k, v in doc.items() if k != key}
        return {**doc, key: draw(mutated(doc[key]))}
    if isinstance(doc, list) and doc and draw(st.integers(0, 3)):
        i = draw(st.integers(0, len(doc) - 1))
        return [*doc[:i], draw(mutated(doc[i])), *doc[i + 1 :]]
    return draw(json_scalars)


HOSTILE_BYTES = [
    b"",
    b"\xff\xfe\x00\x00",
    b"\xef\xbb\xbf",
    b"\x00" * 64,
    "\r\n§\r\n".join(["alpha", "beta", "gamma"]).encode(),
    b"\x1b]0;PWNED\x07\x1b[2J",
    "\ud800".encode("utf-8", "surrogatepass"),
    b"x" * 3_000_000,
    b"\n\xc2\xa7\n" * 5000,
]
file_bytes = st.one_of(
    st.sampled_from(HOSTILE_BYTES),
    st.binary(max_size=300),
    st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")),
)


# -- the template home -----------------------------------------------------------------
@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A seeded home with a session that called tools, and staged memory and skill writes."""
    root = tmp_path_factory.mktemp("fuzzfiles") / "home"
    home = open_home(root, clock=FixedClock(1796040000.0))
    seed_demo_home(home)
    home.close()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert (
            main(
                [
                    "--home",
                    str(root),
                    "run",
                    "--model",
                    "offline",
                    "-m",
                    "Remember that I prefer tabs",
                    "-m",
                    "search my sessions for postgres",
                ]
            )
            == 0
        )
    config = root / "config.yaml"
    config.write_text("memory:\n  write_approval: true\nskills:\n  write_approval: true\n")
    home = open_home(root)
    ctx = ToolContext(session_id=None)
    memory_tool(home, {"action": "add", "target": "memory", "content": "Staging is on k8s."}, ctx)
    patched = skill_manage_tool(
        home, {"action": "patch", "name": "deploy-staging", "old_string": "Smoke test", "new_string": "Smoke-test"}, ctx
    )
    assert patched.get("staged"), patched
    assert len(home.approvals.list()) >= 3
    home.close()
    config.write_text("memory:\n  write_approval: false\n")
    return root


def ids(root: Path) -> dict[str, str]:
    """Names to pass to the commands that take one, read from the home's own files."""
    state = sqlite3.connect(root / "state.db")
    sessions = [r[0] for r in state.execute("SELECT id FROM sessions ORDER BY started_at")]
    state.close()
    ledger = [json.loads(line)["id"] for line in (root / "skills/.curator_ledger.jsonl").read_text().splitlines()]
    pending = sorted(p.stem for p in (root / "pending").glob("*/*.json"))
    return {"session": sessions[-1], "first_session": sessions[0], "ledger": ledger[-1], "pending": pending}


def commands(names: dict[str, str]) -> dict[str, list[list[str]]]:
    """The CLI commands that read each kind of file."""
    pend = [[verb, pid] for pid in names["pending"] for verb in ("show", "approve")]
    return {
        "memory": [
            ["memory", "show"],
            ["memory", "add", "--target", "memory", "--content", "A new fact."],
            ["memory", "replace", "--target", "memory", "--old", "Ledger", "--content", "Ledger is Go."],
            ["memory", "remove", "--target", "user", "--old", "backend"],
            ["memory", "history"],
            ["doctor"],
        ],
        "config": [
            ["memory", "show"],
            ["skills", "list"],
            ["curator", "status"],
            ["pending", "list"],
            ["doctor"],
            ["run", "--model", "offline", "-m", "hello"],
            ["providers", "list"],
        ],
        "usage": [
            ["skills", "list"],
            ["skills", "show", "deploy-staging"],
            ["curator", "status"],
            ["curator", "run"],
            ["skills", "pin", "deploy-staging"],
            ["skills", "archive", "write-release-notes"],
            ["doctor"],
        ],
        "ledger": [
            ["curator", "ledger"],
            ["curator", "rollback", names["ledger"]],
            ["timeline"],
            ["doctor"],
            ["skills", "archive", "write-release-notes"],
        ],
        "pending": [
            ["pending", "list"],
            *[["pending", *c] for c in pend],
            ["pending", "reject", names["pending"][0]],
            ["doctor"],
            ["timeline"],
        ],
        "skill": [
            ["skills", "list"],
            ["skills", "show", "deploy-staging"],
            ["curator", "run"],
            ["doctor"],
            ["run", "--model", "offline", "-m", "how do I deploy to staging?"],
        ],
        "state": [
            ["sessions", "list"],
            ["sessions", "show", names["session"]],
            ["sessions", "search", "postgres"],
            ["sessions", "export", names["session"]],
            ["sessions", "lineage", names["session"]],
            ["run", "--model", "offline", "--session", names["session"], "-m", "and again"],
            ["sessions", "reindex"],
            ["doctor"],
        ],
        "journal": [
            ["timeline"],
            ["memory", "history"],
            ["memory", "undo"],
            ["revert", "3"],
            ["doctor"],
            ["pending", "list"],
        ],
    }


def tui_reads(home, names) -> None:
    """The engine calls the screens make to draw themselves."""
    for target in ("memory", "user"):
        home.memory.entries(target)
    home.skills.list()
    for record in home.approvals.list():
        home.approvals.preview(record.id)
    home.curator.ledger()
    home.journal.query()
    for root in home.archive.root_sessions():
        home.archive.children_of(root.id)
    home.archive.get_session(names["session"])
    home.archive.search("postgres")


# -- running one example ---------------------------------------------------------------
@contextlib.contextmanager
def bounded(seconds: int):
    def alarm(signum, frame):
        raise Hang(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def check_home(root: Path, kind: str, names: dict[str, str], crashes: Path) -> None:
    with bounded(HANG_SECONDS):
        for argv in commands(names)[kind]:
            for as_json in (False, True):
                full = ["--home", str(root), *argv, *(["--json"] if as_json else [])]
                out, err = io.StringIO(), io.StringIO()
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    status = main(full)
                saved = sorted(crashes.glob("crashes/*.txt"))
                assert status in (0, 1, 2), (full, status, saved[-1].read_text()[-2500:] if saved else err.getvalue())
                assert "Traceback" not in out.getvalue() + err.getvalue(), full
                if as_json:
                    json.loads(out.getvalue())
        try:
            home = open_home(root)
        except WorkbenchError:
            return
        try:
            tui_reads(home, names)
        except WorkbenchError:
            pass
        finally:
            home.close()


@pytest.fixture
def spoil(template, tmp_path_factory, monkeypatch):
    """Returns ``run(kind, change)``: copy the template, apply ``change(root)``, check it."""
    crashes = tmp_path_factory.mktemp("crashes")
    monkeypatch.setenv("WORKBENCH_CONFIG_DIR", str(crashes))
    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT", "2")
    names = ids(template)

    def run(kind, change):
        with tempfile.TemporaryDirectory() as scratch:
            root = Path(scratch) / "home"
            shutil.copytree(template, root)
            change(root)
            check_home(root, kind, names, crashes)

    return run


def fuzz(**strategies):
    return lambda test: settings(
        max_examples=max(EXAMPLES // 10, 6), deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )(given(**strategies)(test))


# -- one test per file type -----------------------------------------------------------
@fuzz(target=st.sampled_from(["MEMORY.md", "USER.md"]), data=file_bytes)
def test_memory_files(spoil, target, data):
    spoil("memory", lambda root: (root / "memories" / target).write_bytes(data))


YAML_VALUES = [
    ".inf",
    "-.inf",
    ".nan",
    "1.0e+400",
    "-1.0e+400",
    "1e999",
    "99999999999999999999999999",
    "0x7fffffffffffffff",
    "-1",
    "0",
    "''",
    "null",
    "[]",
    "{}",
    "[1, 2]",
    "yes",
    "'\\x1b[2J'",
    "&a [*a, *a]",
    "!!python/object:os.system",
    "!!binary AAAA",
    "2026-13-45",
    "0001-01-01",
    '"\\ud800"',
    "[" * 200 + "]" * 200,
    "{a: " * 200 + "1" + "}" * 200,
]


@st.composite
def config_text(draw):
    if not draw(st.integers(0, 5)):
        return draw(file_bytes)
    lines = {}
    for key in draw(st.lists(st.sampled_from(sorted(all_defaults())), min_size=1, max_size=4)):
        section, _, rest = key.partition(".")
        lines.setdefault(section, []).append((rest, draw(st.sampled_from(YAML_VALUES))))
    text = ""
    for section, pairs in lines.items():
        text += f"{section}:\n" + "".join(_yaml_pair(rest, value) for rest, value in pairs)
    return text.encode("utf-8", "surrogatepass")


def _yaml_pair(dotted: str, value: str) -> str:
    parts = dotted.split(".")
    return (
        "".join(f"{'  ' * (i + 1)}{p}:\n" for i, p in enumerate(parts[:-1]))
        + f"{'  ' * len(parts)}{parts[-1]}: {value}\n"
    )


@fuzz(data=config_text())
def test_config_yaml(spoil, data):
    spoil("config", lambda root: (root / "config.yaml").write_bytes(data))


def _rewrite_json(path: Path, draw_doc):
    path.write_text(dump(draw_doc), encoding="utf-8", errors="surrogatepass")


@fuzz(data=st.data())
def test_usage_json(spoil, template, data):
    doc = json.loads((template / "skills/.usage.json").read_text())
    spoiled = data.draw(mutated(doc))
    spoil("usage", lambda root: _rewrite_json(root / "skills/.usage.json", spoiled))


@fuzz(data=st.data())
def test_curator_ledger(spoil, template, data):
    rows = [json.loads(line) for line in (template / "skills/.curator_ledger.jsonl").read_text().splitlines()]
    i = data.draw(st.integers(0, len(rows) - 1))
    rows[i] = data.draw(mutated(rows[i]))
    text = "\n".join(dump(row) for row in rows) + data.draw(st.sampled_from(["\n", "", "\n{", "\n\x00\n"]))

    def change(root):
        (root / "skills/.curator_ledger.jsonl").write_text(text, encoding="utf-8", errors="surrogatepass")

    spoil("ledger", change)


@fuzz(data=st.data())
def test_pending_records(spoil, template, data):
    paths = sorted((template / "pending").glob("*/*.json"))
    path = data.draw(st.sampled_from(paths))
    spoiled = data.draw(mutated(json.loads(path.read_text())))
    raw = data.draw(st.one_of(st.just(None), file_bytes)) if not data.draw(st.integers(0, 5)) else None

    def change(root):
        target = root / path.relative_to(template)
        if raw is not None:
            target.write_bytes(raw)
        else:
            _rewrite_json(target, spoiled)

    spoil("pending", change)


FRONTMATTER_VALUES = [
    "[" * 5000 + "]" * 5000,
    "&a [*a, *a, *a]",
    "{a: " * 100 + "1" + "}" * 100,
    ".inf",
    "1e999",
    "[1, 2]",
    "{x: 1}",
    "null",
    "''",
    "!!binary AAAA",
    '"\\ud800"',
    "'\x1b]0;PWNED\x07'",
    "x" * 100_000,
]


@st.composite
def skill_text(draw):
    if not draw(st.integers(0, 3)):
        return draw(file_bytes)
    name = draw(st.sampled_from(["deploy-staging", *FRONTMATTER_VALUES]))
    description = draw(st.sampled_from(["Deploy to staging", *FRONTMATTER_VALUES]))
    extra = draw(st.sampled_from(["", "metadata: " + draw(st.sampled_from(FRONTMATTER_VALUES)) + "\n"]))
    body = draw(st.sampled_from(["# Steps\n1. deploy\n", "", "x" * 2_000_000, "---\n---\n"]))
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}".encode("utf-8", "surrogatepass")


@fuzz(data=skill_text())
def test_skill_md(spoil, data):
    spoil("skill", lambda root: (root / "skills/devops/deploy-staging/SKILL.md").write_bytes(data))


SQL_VALUES = [
    None,
    b"\xff\xfe\x00binary",
    b"",
    10**18,
    -(2**63),
    1e308,
    float("inf"),
    float("-inf"),
    "",
    "not json",
    "[" * DEEP + "]" * DEEP,
    '{"a":' * 5000 + "1" + "}" * 5000,
    '[{"id": 1}]',
    '[{"function": "x"}]',
    '[{"function": {"name": ["x"], "arguments": 7}}]',
    '[{"function": {"name": "memory", "arguments": "{bad"}}]',
    '{"not": "a list"}',
    "\x1b]0;PWNED\x07\x1b[2J",
    "\ud800",
    "a" * 200_000,
    "9999-99-99",
    "NaN",
]
MESSAGE_COLUMNS = [
    "content",
    "tool_calls",
    "tool_name",
    "role",
    "timestamp",
    "tool_call_id",
    "reasoning",
    "reasoning_details",
    "token_count",
    "session_id",
    "finish_reason",
    "api_content",
]
SESSION_COLUMNS = [
    "title",
    "model_config",
    "system_prompt",
    "started_at",
    "ended_at",
    "parent_session_id",
    "message_count",
    "source",
    "model",
    "input_tokens",
    "estimated_cost_usd",
    "origin_json",
    "archived",
]


@fuzz(table=st.sampled_from(["messages", "sessions"]), data=st.data())
def test_state_db_rows(spoil, template, table, data):
    column = data.draw(st.sampled_from(MESSAGE_COLUMNS if table == "messages" else SESSION_COLUMNS))
    value = data.draw(st.sampled_from(SQL_VALUES))
    every = data.draw(st.booleans())

    def change(root):
        db = sqlite3.connect(root / "state.db")
        where = (
            ""
            if every
            else (
                " WHERE rowid = (SELECT max(rowid) FROM messages WHERE tool_calls IS NOT NULL)"
                if table == "messages"
                else " WHERE rowid = (SELECT max(rowid) FROM sessions)"
            )
        )
        raw = ("\ud800".encode("utf-8", "surrogatepass"),) if isinstance(value, str) and "\ud800" in value else (value,)
        cast = (
            "CAST(? AS TEXT)" if isinstance(value, str) and "\ud800" in value else "?"
        )  # a lone surrogate as raw bytes
        try:
            db.execute(f"UPDATE {table} SET {column} = {cast}{where}", raw)
        except sqlite3.IntegrityError:  # unique (titles) or NOT NULL: the closest one row can get
            one = f" WHERE rowid = (SELECT max(rowid) FROM {table})"
            try:
                db.execute(f"UPDATE {table} SET {column} = {cast}{one}", raw)
            except sqlite3.IntegrityError:
                db.execute(f"UPDATE {table} SET {column} = ''{one}")
        db.commit()
        db.close()

    spoil("state", change)


@fuzz(
    column=st.sampled_from(
        [
            "detail",
            "before",
            "after",
            "at",
            "actor",
            "subsystem",
            "action",
            "target",
            "status",
            "message_id",
            "session_id",
        ]
    ),
    value=st.sampled_from(SQL_VALUES),
)
def test_journal_rows(spoil, column, value):
    def change(root):
        db = sqlite3.connect(root / "workbench.db")
        try:
            db.execute(
                f"UPDATE journal SET {column} = ?",
                (value.encode("utf-8", "surrogatepass") if isinstance(value, str) and "\ud800" in value else value,),
            )
        except sqlite3.IntegrityError:  # NOT NULL columns: the closest a hand edit gets
            db.execute(f"UPDATE journal SET {column} = ''")
        db.commit()
        db.close()

    spoil("journal", change)


# -- the search API -------------------------------------------------------------------
FTS = [
    '"',
    '"unbalanced',
    "AND",
    "OR NOT",
    "NEAR(a b)",
    "a:b",
    "*",
    "(",
    ")",
    "^x",
    "-x",
    "x -",
    "{a b}",
    "\ud800",
    "\udfff",
    "数据库迁移",
    "'",
    "\\",
    "%",
    "_",
    "\x00",
    "a" * 10_000,
    "NOT",
    "postgres*",
    "col:value",
]


@settings(max_examples=max(EXAMPLES * 2, 200), deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(
    query=st.one_of(
        st.sampled_from(FTS), st.text(max_size=40), st.lists(st.sampled_from(FTS), min_size=2, max_size=5).map(" ".join)
    )
)
def test_search_api(template_home, query):
    """Every query is answered or refused (``WorkbenchError``); none raises anything else."""
    with bounded(HANG_SECONDS):
        try:
            template_home.archive.search(query)
        except WorkbenchError:
            pass


@settings(max_examples=max(EXAMPLES // 3, 20), deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(query=st.one_of(st.sampled_from(FTS), st.text(max_size=40)), as_json=st.booleans())
def test_search_cli(template, query, as_json, tmp_path_factory, monkeypatch):
    """`sessions search` answers any query with 0 or 1 (a refusal), and JSON stays JSON."""
    crashes = tmp_path_factory.mktemp("crashes")
    monkeypatch.setenv("WORKBENCH_CONFIG_DIR", str(crashes))
    out, err = io.StringIO(), io.StringIO()
    with bounded(HANG_SECONDS), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["--home", str(template), "sessions", "search", query, *(["--json"] if as_json else [])])
    saved = sorted(crashes.glob("crashes/*.txt"))
    assert status in (0, 1, 2), (query, status, saved[-1].read_text()[-2500:] if saved else err.getvalue())
    if as_json:
        json.loads(out.getvalue())


@pytest.fixture(scope="module")
def template_home(template):
    home = open_home(template)
    yield home
    home.close()
