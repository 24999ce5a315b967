"""config.yaml changed while the workbench runs: taken when usable, refused (settings kept) when not."""

from __future__ import annotations

import subprocess

import pytest

from engine.errors import ConfigError
from engine.events import ConfigChanged
from engine.tools import ToolContext
from tests.hermes_support import write_from_another_process


def test_a_changed_file_is_taken_and_the_gate_follows_at_the_next_write(home):
    seen = []
    home.bus.subscribe(lambda e: isinstance(e, ConfigChanged) and seen.append(e))
    assert home.memory.add("memory", "Saved straight away", ToolContext(actor="agent"))["success"]
    assert home.refresh_config() is None  # nothing on disk changed
    write_from_another_process(home.config_path, "memory:\n  write_approval: true\n  memory_char_limit: 900\n")
    change = home.refresh_config()
    assert change.keys == ("memory.memory_char_limit", "memory.write_approval") and not change.error
    assert seen == [change] and "memory.memory_char_limit, memory.write_approval" in change.message
    staged = home.memory.add("memory", "Waits for approval now", ToolContext(actor="agent"))
    assert staged.get("staged") is True and home.memory.entries("memory") == ["Saved straight away"]
    assert home.memory.limit("memory") == 900
    assert home.refresh_config() is None and len(seen) == 1  # the same file again is no news


def test_only_keys_whose_value_in_use_changed_are_named(home):
    """The notice named ``memory.memory_char_limit, …`` when the file was written with the values already in
    use (the defaults, a quoted number): only a key whose value in effect changed is named, none is no news."""
    in_use = "memory:\n  memory_char_limit: 2200\n  user_char_limit: '1375'\n  nudge_interval: 10.0\n"
    write_from_another_process(home.config_path, in_use + "skills:\n  write_approval: no\n")
    assert home.refresh_config() is None
    write_from_another_process(home.config_path, in_use + "  write_approval: true\n")
    change = home.refresh_config()
    assert (
        change.keys == ("memory.write_approval",) and "config.yaml changed (memory.write_approval)." in change.message
    )
    write_from_another_process(home.config_path, "memory:\n  write_approval: true\n")  # the defaults again
    assert home.refresh_config() is None


def test_a_file_that_cannot_be_used_is_refused_and_the_settings_in_use_stay(home):
    write_from_another_process(home.config_path, "memory:\n  write_approval: true\n")
    assert home.refresh_config().keys == ("memory.write_approval",)
    for text, why in (
        ("memory: [write_approval: false\n", "malformed YAML"),
        ("memory:\n  write_approval: true\n  memory_char_limit: lots\n", "must be a whole number, got 'lots'"),
        ("agent:\n  max_iterations: many\n", "agent.max_iterations must be a whole number"),  # not a key Hermes reads
        ("model:\n  timeout: -1\n  stream: maybe\n", "seconds above 0, got -1.0. (1 more value cannot"),
    ):
        write_from_another_process(home.config_path, text)
        change = home.refresh_config()
        assert why in change.error and not change.keys and "settings in use stay" in change.message
        assert home.config.bool("memory.write_approval") is True  # still the last usable file's
        assert home.memory.add("memory", f"Still gated ({why})", ToolContext(actor="agent")).get("staged") is True
    write_from_another_process(home.config_path, "")  # emptied: every setting back to its default
    assert home.refresh_config().keys == ("memory.write_approval",)
    assert home.config.bool("memory.write_approval") is False


def test_a_home_opened_with_an_unusable_file_takes_the_fixed_one(home):
    home.config_path.write_text("memory: [\n", encoding="utf-8")
    with pytest.raises(ConfigError):
        home.reload_config()  # as the workbench starts on it: every read says what is wrong
    write_from_another_process(home.config_path, "skills:\n  write_approval: true\n")
    assert home.refresh_config().keys == ("skills.write_approval",)
    assert home.config.bool("skills.write_approval") is True


@pytest.mark.slow  # Hermes's own CLI in its own process
def test_hermes_config_set_is_taken(home, hermes):
    """`hermes config set` rewrites config.yaml in Hermes's own way; the running workbench takes it."""
    assert home.refresh_config() is None
    subprocess.run(
        [str(hermes.python.parent / "hermes"), "config", "set", "memory.write_approval", "true"],
        env=hermes.env(home.root),
        cwd=str(home.root),
        capture_output=True,
        timeout=120,
        check=True,
    )
    change = home.refresh_config()
    assert "memory.write_approval" in change.keys and not change.error
    assert home.memory.add("memory", "Gated by Hermes's setting", ToolContext(actor="agent")).get("staged") is True


def test_a_key_read_before_an_overlay_or_a_reload_is_read_afresh_in_each(home):
    """Lookups are kept per Config: an overlay and a reloaded file each answer with their own values,
    and a value that cannot be used is refused on every read, not only the first."""
    write_from_another_process(home.config_path, "memory:\n  memory_char_limit: 700\n  user_char_limit: -5\n")
    home.refresh_config()
    first = home.config
    assert first.int("memory.memory_char_limit") == 700 and first.int("memory.user_char_limit") == 1375
    view = first.overlay({"memory.memory_char_limit": 800, "memory.user_char_limit": 900})
    assert view.int("memory.memory_char_limit") == 800 and view.int("memory.user_char_limit") == 900
    assert first.int("memory.memory_char_limit") == 700 and first.substitutions()[0].key == "memory.user_char_limit"
    write_from_another_process(home.config_path, "memory:\n  memory_char_limit: lots\n")
    home.reload_config()
    assert home.config is not first
    for _ in range(2):
        with pytest.raises(ConfigError, match="must be a whole number, got 'lots'"):
            home.config.int("memory.memory_char_limit")
    assert first.int("memory.memory_char_limit") == 700  # the Config read before keeps its answers
