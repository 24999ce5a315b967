"""Home resolution and layout, config parsing, journal and event bus."""

from __future__ import annotations

import threading

import pytest

from engine import ConfigError, open_home, resolve_home
from engine.errors import HomeError, ReadOnlyError
from engine.events import Event, EventBus, MemoryChanged, SkillChanged


def test_home_resolution_order(monkeypatch, tmp_path):
    monkeypatch.delenv("WORKBENCH_HOME", raising=False)
    monkeypatch.delenv("HERMES_HOME", raising=False)
    default = resolve_home()
    assert "memory-workbench" in str(default)
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "hermes"))
    assert resolve_home() == tmp_path / "hermes"
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "wb"))
    assert resolve_home() == tmp_path / "wb"
    assert resolve_home(tmp_path / "explicit") == tmp_path / "explicit"


def test_a_home_named_with_dots_is_the_folder_they_lead_to(tmp_path, monkeypatch, capsys):
    """`--home ../h` refused everything: "config.yaml is outside the home ../h"."""
    from workbench.cli import main

    (tmp_path / "real" / "h").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real" / "h")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    assert resolve_home("../real/h") == tmp_path / "real" / "h"
    assert resolve_home("../link/../h") == tmp_path / "real" / "h"  # (the link is followed before its ..)
    assert resolve_home("../link") == tmp_path / "link"  # a link the path ends in is kept
    assert main(["--home", "../real/h", "memory", "add", "--target", "memory", "Uses Postgres 16"]) == 0
    assert main(["--home", str(tmp_path / "work" / ".." / "real" / "h"), "memory", "show"]) == 0
    assert "Uses Postgres 16" in capsys.readouterr().out
    assert (tmp_path / "real" / "h" / "memories" / "MEMORY.md").read_text() == "Uses Postgres 16"


def test_open_home_creates_hermes_layout(tmp_path):
    home = open_home(tmp_path / "h")
    for sub in ("memories", "skills", "pending/memory", "pending/skills"):
        assert (tmp_path / "h" / sub).is_dir()
    home.journal.append("memory", "add", "memory", after="x", actor="user")
    assert (tmp_path / "h" / "workbench.db").exists()
    home.close()


def test_read_only_home_is_never_created(tmp_path):
    with pytest.raises(HomeError):
        open_home(tmp_path / "missing", read_only=True)
    assert not (tmp_path / "missing").exists()


def test_read_only_home_refuses_journal_writes(tmp_path):
    open_home(tmp_path / "h").journal.append("memory", "add", "memory", after="x")
    ro = open_home(tmp_path / "h", read_only=True)
    with pytest.raises(ReadOnlyError):
        ro.journal.append("memory", "add", "memory", after="y")
    assert [e.after for e in ro.journal.query()] == ["x"]


def test_home_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(HomeError, match="is a file"):
        open_home(tmp_path / "f")


def test_config_defaults_and_string_numbers(tmp_path):
    home_dir = tmp_path / "h"
    home_dir.mkdir()
    (home_dir / "config.yaml").write_text(
        "memory:\n  memory_char_limit: '20000'\n  write_approval: 'on'\ncurator:\n  stale_after_days: 7\n"
    )
    cfg = open_home(home_dir).config
    assert cfg.int("memory.memory_char_limit") == 20000
    assert cfg.int("memory.user_char_limit") == 1375
    assert cfg.bool("memory.write_approval") is True
    assert cfg.bool("skills.write_approval") is False
    assert cfg.int("curator.stale_after_days") == 7
    assert cfg.int("curator.archive_after_days") == 90


def test_malformed_config_names_file_and_line(tmp_path):
    home_dir = tmp_path / "h"
    home_dir.mkdir()
    (home_dir / "config.yaml").write_text("memory:\n  memory_char_limit: 10\n  bad: [unclosed\n")
    with pytest.raises(ConfigError) as info:
        open_home(home_dir)
    assert "config.yaml" in info.value.message and "line" in info.value.message


def test_bad_config_value_names_key_and_line(tmp_path):
    home_dir = tmp_path / "h"
    home_dir.mkdir()
    (home_dir / "config.yaml").write_text("# settings\nmemory:\n  memory_char_limit: lots\n")
    cfg = open_home(home_dir).config
    with pytest.raises(ConfigError) as info:
        cfg.int("memory.memory_char_limit")
    assert "line 3" in info.value.message and "memory.memory_char_limit" in info.value.message


@pytest.mark.parametrize("value", ["0", "-3", "0.0"])
def test_a_timeout_of_zero_or_less_is_refused_with_its_line(tmp_path, value):
    """Found by the config fuzz: ``memory.provider_timeout: 0`` ended a run with a traceback."""
    home_dir = tmp_path / "h"
    home_dir.mkdir()
    (home_dir / "config.yaml").write_text(f"memory:\n  provider_timeout: {value}\nmodel:\n  timeout: 2.5\n")
    cfg = open_home(home_dir).config
    assert cfg.seconds("model.timeout") == 2.5
    with pytest.raises(ConfigError) as info:
        cfg.seconds("memory.provider_timeout")
    assert "line 2" in info.value.message and "seconds above 0" in info.value.message


def test_a_run_with_a_zero_provider_timeout_says_so_and_exits_cleanly(tmp_path):
    import subprocess

    from tests.hermes_support import workbench_cmd

    home_dir = tmp_path / "h"
    home_dir.mkdir()
    (home_dir / "config.yaml").write_text("memory:\n  provider_timeout: 0\n")
    proc = subprocess.run(
        workbench_cmd("--home", str(home_dir), "run", "--model", "offline", "-m", "hello"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "memory.provider_timeout must be a number of seconds above 0" in proc.stderr


def test_config_top_level_must_be_mapping(tmp_path):
    home_dir = tmp_path / "h"
    home_dir.mkdir()
    (home_dir / "config.yaml").write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="mapping"):
        open_home(home_dir)


def test_journal_begin_commit_and_query(home):
    pending = home.journal.begin("memory", "add", "memory", after="entry", actor="agent", session_id="s1", message_id=4)
    assert home.journal.query() == []  # pending rows are hidden until done
    home.journal.commit(pending)
    done = home.journal.query(target="memory")
    assert [(e.id, e.after, e.session_id, e.message_id) for e in done] == [(pending, "entry", "s1", 4)]
    assert home.journal.writers_of("memory", "memory", "entry")[0].id == pending
    abandoned = home.journal.begin("memory", "remove", "memory", before="entry")
    home.journal.abandon(abandoned, "no match")
    assert home.journal.get(abandoned).status == "abandoned"
    assert home.journal.get(abandoned).detail["reason"] == "no match"


def test_journal_rejects_unknown_actor(home):
    with pytest.raises(ValueError):
        home.journal.append("memory", "add", "memory", actor="robot")


def test_journal_one_connection_per_thread(home):
    ids = []

    def worker(n):
        ids.append(home.journal.append("memory", "add", "memory", after=f"e{n}"))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(ids) == list(range(1, 9))
    assert len({e.after for e in home.journal.query(limit=100)}) == 8


def test_event_bus_filters_by_type_and_survives_broken_subscribers():
    bus = EventBus()
    seen, memory_only = [], []

    def broken(event):
        raise RuntimeError("boom")

    bus.subscribe(broken)
    bus.subscribe(seen.append)
    unsubscribe = bus.subscribe(memory_only.append, MemoryChanged)
    bus.publish(MemoryChanged(target="user", action="add"))
    bus.publish(SkillChanged(name="deploy", action="create"))
    assert [type(e) for e in seen] == [MemoryChanged, SkillChanged]
    assert [e.target for e in memory_only] == ["user"]
    unsubscribe()
    bus.publish(MemoryChanged(target="memory"))
    assert len(memory_only) == 1
    assert isinstance(seen[0], Event)


def test_forked_child_never_reuses_the_parents_connection(home):
    """A connection inherited across fork must not be used by the child."""
    import multiprocessing

    parent_conn = home.journal.connection()

    def child():
        raise SystemExit(0 if home.journal.connection() is not parent_conn else 3)

    proc = multiprocessing.get_context("fork").Process(target=child)
    proc.start()
    proc.join(30)
    assert proc.exitcode == 0
    assert home.journal.connection() is parent_conn


def test_a_home_named_by_one_of_a_hermes_homes_folders_is_refused_creating_nothing(tmp_path):
    """`--home ~/.hermes/memories` read as an empty home (doctor: all good) and got memories/, skills/,
    pending/ and workbench.db made inside Hermes's own memories folder (user trial)."""
    hermes = tmp_path / ".hermes"
    (hermes / "memories").mkdir(parents=True)
    (hermes / "memories" / "MEMORY.md").write_text("Uses Postgres 16", encoding="utf-8")
    before = sorted(p.name for p in (hermes / "memories").iterdir())
    with pytest.raises(
        HomeError,
        match=r"memories is the memories/ folder of the Hermes home .*\.hermes, not a home: "
        r"pass --home .*\.hermes\. Nothing was created\.",
    ):
        open_home(hermes / "memories")
    assert sorted(p.name for p in (hermes / "memories").iterdir()) == before
    open_home(hermes).close()  # the home itself opens
    open_home(tmp_path / "skills").close()  # a folder of that name with no home above it is a home
    open_home(hermes / "profiles" / "work").close()  # (a Hermes profile is a home of its own)
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "config.yaml").write_text("x: 1\n", encoding="utf-8")  # any project's
    open_home(tmp_path / "project" / "logs").close()  # (found in review: refused as a Hermes home's logs/)
    (hermes / "config.yaml").write_text("memory: {}\n", encoding="utf-8")
    with pytest.raises(HomeError, match="is the logs/ folder of the Hermes home"):
        open_home(hermes / "logs")
