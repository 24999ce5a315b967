"""Settings from ``<home>/config.yaml``, using Hermes's own keys where they exist.

Values are looked up by dotted key (``memory.memory_char_limit``). Numbers given as
strings are accepted; a value that cannot be used, or YAML that does not parse, raises
``ConfigError`` naming the file and line so the user can fix it.

Hermes 0.19.0 reads a few keys more literally (a quoted limit stays text and breaks its
memory; any quoted word turns ``memory_enabled`` on). ``Config.hermes_misreads`` names
every value the two programs would read differently, so the CLI, the TUI and
``workbench doctor`` can warn instead of letting it pass silently.

A few values Hermes runs with mean nothing to us (a char limit of -5, ``memory: "text"``
where a section belongs, ``write_approval: maybe``): rather than refuse them, the
workbench uses a value it can (``Config.substitutions`` says which, with the line, through
the same three channels).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .errors import ConfigError
from .fileio import read_regular
from .textsafety import quoted
from .yamltext import check_bounds

_UNSET = object()
MAX_NUMBER = 10**12  # far above any real setting; keeps sums and timestamps finite
TRUTHY = {"on", "true", "yes", "1", "approve", "enable", "enabled"}
FALSY = {"off", "false", "no", "0", "disable", "disabled", ""}

# Defaults for every key the workbench honours (Hermes's where Hermes has one), but the
# memory targets' limit and enabled keys, which their rows hold (engine/memory/targets.py).
DEFAULTS: dict[str, Any] = {
    "memory.write_approval": False,
    "memory.nudge_interval": 10,
    "memory.provider": "",
    "skills.write_approval": False,
    "skills.creation_nudge_interval": 10,
    "skills.guard_agent_created": False,
    "curator.enabled": True,
    "curator.stale_after_days": 30,
    "curator.archive_after_days": 90,
    "curator.manage_all": False,
    "compression.enabled": True,
    "compression.threshold": 0.5,
    "model.context_length": 16000,
    # runner and models (engine/runner, engine/models)
    "compression.in_place": False,
    "compression.protect_first_n": 3,
    "compression.target_ratio": 0.2,
    "compression.flush_memories": True,  # one memory-only model call before each compression
    "memory.provider_timeout": 8.0,  # seconds a turn waits for the provider's recall (then goes on without it)
    "auxiliary.session_search.backend": "",  # a model for session_search recaps ("" = off, as in Hermes 0.19.0)
    "auxiliary.session_search.model": "",
    "auxiliary.session_search.base_url": "",
    "auxiliary.session_search.api_key_env": "OPENAI_API_KEY",
    "auxiliary.session_search.max_concurrency": 3,
    "auxiliary.session_search.timeout": 30,
    "agent.max_iterations": 16,
    "model.backend": "offline",
    "model.name": "",
    "model.base_url": "",
    "model.api_key_env": "OPENAI_API_KEY",
    "model.timeout": 60,
    "model.max_retries": 3,
    "model.stream": False,
    "approvals.duplicate_threshold": 90,
    # curator schedule and consolidation (engine/curator/schedule.py, consolidate.py)
    "curator.interval_hours": 168,
    "curator.min_idle_hours": 2,
    "curator.consolidate": False,
    "curator.consolidate_without_approval": False,
    "curator.consolidation_threshold": 60,
}


def _kept(value: Any) -> Any:
    return value  # passed on unconverted: a quoted number stays text


def _gate(value: Any) -> bool:
    """tools/write_approval.py: a real bool, or one of its words; anything else is off."""
    if isinstance(value, bool):
        return value
    return isinstance(value, str) and value.strip().lower() in {"on", "true", "yes", "1", "approve", "enabled"}


def _compression_flag(value: Any) -> bool:
    return str(value).lower() in {"true", "1", "yes"}  # agent/agent_init.py


# How Hermes 0.19.0 reads each typed key we share, and how we read it (checked against
# agent/agent_init.py, agent/curator.py and tools/write_approval.py). The numbers it
# converts with int()/float() read alike, quoted or not; the rest can differ.
HERMES_READERS: dict[str, tuple[Callable[[Any], Any], str]] = {
    "memory.memory_char_limit": (_kept, "int"),
    "memory.user_char_limit": (_kept, "int"),
    "memory.memory_enabled": (bool, "bool"),
    "memory.user_profile_enabled": (bool, "bool"),
    "memory.write_approval": (_gate, "bool"),
    "skills.write_approval": (_gate, "bool"),
    "curator.enabled": (bool, "bool"),
    "compression.enabled": (_compression_flag, "bool"),
    "memory.nudge_interval": (int, "int"),
    "skills.creation_nudge_interval": (int, "int"),
    "curator.stale_after_days": (int, "int"),
    "curator.archive_after_days": (int, "int"),
    "compression.threshold": (float, "float"),
}
# The kind every typed setting is read as: Hermes's readers' kinds, and our defaults' types
# (a timeout is a number of seconds above 0); text settings take any value.
_KINDS: dict[str, str] = {
    **{
        key: "seconds" if key.endswith("timeout") else {bool: "bool", int: "int", float: "float"}[type(value)]
        for key, value in DEFAULTS.items()
        if type(value) in (bool, int, float)
    },
    **{key: kind for key, (_, kind) in HERMES_READERS.items()},
    **dict.fromkeys(  # whole numbers by default, read as any number
        (
            "curator.interval_hours",
            "curator.min_idle_hours",
            "curator.consolidation_threshold",
            "approvals.duplicate_threshold",
        ),
        "float",
    ),
}
# Keys whose quoted value makes Hermes's agent inject no memory block at all.
MEMORY_LIMIT_KEYS = {"memory": "memory.memory_char_limit", "user": "memory.user_char_limit"}
# What Hermes 0.19.0 does with a section that is not a mapping (hermes_cli/config.py keeps it as
# written; agent/agent_init.py's memory setup then fails and is skipped), where we know.
SECTION_EFFECTS = {"memory": "Hermes 0.19.0 then runs its agent with no built-in memory at all"}


@dataclass(frozen=True)
class Substitution:
    """A value in config.yaml Hermes 0.19.0 runs with but the workbench cannot use as written: it uses
    ``used`` instead (said, never silent)."""

    key: str
    line: int | None
    value: Any  # as written in the file
    why: str  # what is wrong with it
    used: str  # what the workbench uses instead, in words
    hermes: str  # what Hermes 0.19.0 does with it
    fix: str

    def what(self, path: Path | str | None) -> str:
        where = f"{path} line {self.line}" if self.line else str(path)
        hermes = f" ({self.hermes})" if self.hermes else ""
        return (
            f"{where}: {self.key} is {quoted(self.value)}, {self.why}; the workbench uses {self.used} instead{hermes}."
        )

    def message(self, path: Path | None) -> str:
        return f"{self.what(path)} Fix: {self.fix}."


@dataclass(frozen=True)
class Misread:
    """A value in config.yaml that Hermes 0.19.0 reads differently from the workbench."""

    key: str
    line: int | None
    value: Any  # as written in the file
    hermes: Any  # what Hermes makes of it
    ours: Any  # what the workbench makes of it

    @property
    def breaks_memory(self) -> bool:
        """A quoted char limit: Hermes's agent injects no memory block and its memory tool fails."""
        return self.key in MEMORY_LIMIT_KEYS.values() and isinstance(self.value, str)

    @property
    def effect(self) -> str:
        if self.breaks_memory:
            return (
                "Hermes 0.19.0 keeps it as text: its agent then injects no memory block at all and its memory "
                "tool fails with a TypeError"
            )
        if isinstance(self.ours, bool):
            return (
                f"Hermes 0.19.0 reads it as {'on' if self.hermes else 'off'}, the workbench as "
                f"{'on' if self.ours else 'off'}"
            )
        return f"Hermes 0.19.0 reads it as {quoted(self.hermes)}, the workbench as {quoted(self.ours)}"

    @property
    def literal(self) -> str:
        """The value as plain YAML that both programs read as the workbench does."""
        return ("true" if self.ours else "false") if isinstance(self.ours, bool) else str(self.ours)

    @property
    def fix(self) -> str:
        how = f"write {self.literal} without quotes" if isinstance(self.value, str) else f"write {self.literal}"
        return f"{how} ({self.key.rsplit('.', 1)[-1]}: {self.literal})"

    def message(self, path: Path | None) -> str:
        where = f"{path} line {self.line}" if self.line else str(path)
        return f"{where}: {self.key} is {quoted(self.value)}; {self.effect}. Fix: {self.fix}."


def default_value(key: str) -> Any:
    """``key``'s default: from ``DEFAULTS``, or from the memory target row that holds it."""
    if key in DEFAULTS:
        return DEFAULTS[key]
    from .memory.targets import target_defaults  # here: the memory package loads the store, which reads config

    return target_defaults().get(key)


def all_defaults() -> dict[str, Any]:
    """Every key the workbench honours, with its default."""
    from .memory.targets import target_defaults

    return {**target_defaults(), **DEFAULTS}


class Config:
    """Read-only view of config.yaml with typed, validated accessors.

    A Config never changes once made (``overlay`` and a reload make a new one), so what a key
    looks up in the file is kept per key: a memory write reads its limit without walking the
    settings again. Errors are never kept: a bad value raises on every read.
    """

    def __init__(
        self,
        data: dict,
        path: Path | None = None,
        lines: dict[str, int] | None = None,
        given: dict[str, str] | None = None,
    ):
        self._data = data
        self.path = path
        self._lines = lines or {}
        self._given = given or {}  # dotted key -> where an overlay's value came from, said in its errors
        self._found: dict[str, Any] = {}  # dotted key -> its value in the file, or _UNSET
        self._replaced: dict[str, Substitution | None] = {}  # dotted key -> ``_substitution``'s answer

    @classmethod
    def load(cls, path: Path) -> Config:
        if not path.exists():
            return cls({}, path)
        try:
            text = read_regular(path).decode("utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"Cannot read {path}: {exc}. Fix its permissions or encoding (UTF-8).") from exc
        try:
            check_bounds(text)
            node = yaml.compose(text)
            data = yaml.safe_load(text)
        except (ValueError, OverflowError) as exc:  # a scalar YAML cannot build, e.g. the date 2026-13-45
            raise ConfigError(
                f"{path}: a value cannot be read ({exc}). Quote it or fix it, or remove the file to use defaults."
            ) from exc
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            problem = getattr(exc, "problem", None) or str(exc)
            raise ConfigError(
                f"{path}{where}: malformed YAML ({problem}). Fix the file or remove it to use defaults."
            ) from exc
        if data is None:
            return cls({}, path)
        if not isinstance(data, dict):
            raise ConfigError(
                f"{path} line 1: expected a mapping of settings at the top level, got {type(data).__name__}."
            )
        lines: dict[str, int] = {}
        _collect_lines(node, "", lines)
        return cls(data, path, lines)

    def is_set(self, key: str) -> bool:
        """True when config.yaml itself gives ``key`` a value (a default does not count)."""
        return self.raw(key, _UNSET) is not _UNSET

    def raw(self, key: str, default: Any = None) -> Any:
        node = self._found.get(key, _UNSET)
        if node is _UNSET and key not in self._found:
            node = self._found[key] = self._lookup(key)
        if node is _UNSET:
            return default_value(key) if default is None else default
        return node

    def _lookup(self, key: str) -> Any:
        """``key``'s value in the file, or ``_UNSET`` when the file does not give it one."""
        node: Any = self._data
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                return _UNSET
            node = node[part]
        return node

    def settings(self) -> dict:
        """A copy of the parsed file (defaults not filled in)."""
        return copy.deepcopy(self._data)

    def overlay(self, overrides: dict[str, Any], given_by: str | None = None) -> Config:
        """A copy with the given dotted keys set (in memory only; config.yaml is untouched). A value it
        refuses is said as from ``given_by`` (a scenario's config), where config.yaml does not hold it."""
        data = copy.deepcopy(self._data)
        for key, value in overrides.items():
            node = data
            *parents, last = key.split(".")
            for part in parents:
                if not isinstance(node.get(part), dict):
                    node[part] = {}
                node = node[part]
            node[last] = value
        given = {**self._given, **dict.fromkeys(overrides, given_by)} if given_by else self._given
        return Config(data, self.path, self._lines, given)

    def hermes_misreads(self) -> list[Misread]:
        """Values set in the file that Hermes 0.19.0 would read differently from us.

        A value the workbench cannot use at all is left to the typed accessors, which
        refuse it with its line, and one it replaces to ``substitutions``, which says so.
        """
        found = []
        for key, (hermes_reads, kind) in HERMES_READERS.items():
            if not self.is_set(key) or self._substitution(key):
                continue
            value = self.raw(key)
            try:
                ours = self.typed(key, kind)
            except ConfigError:
                continue
            hermes = hermes_reads(value)
            if type(hermes) is not type(ours) or hermes != ours:
                found.append(Misread(key, self._lines.get(key), value, hermes, ours))
        return found

    def substitutions(self) -> list[Substitution]:
        """Every value the workbench replaces (``_substitution``), in file order, each with its line."""
        from .memory.targets import target_defaults

        keys = [*HERMES_READERS, *target_defaults()]
        sections = sorted({k.rsplit(".", i)[0] for k in all_defaults() for i in range(1, k.count(".") + 1)})
        found = [self._section_substitution(s) for s in sections] + [self._substitution(k) for k in dict.fromkeys(keys)]
        return sorted((s for s in found if s is not None), key=lambda s: s.line or 0)

    def warnings(self) -> list[tuple[str, str]]:
        """(title, message) for every value replaced or read unlike Hermes, as the CLI and the TUI say
        them (doctor: as findings)."""
        replaced = [("A config.yaml value is replaced", s.message(self.path)) for s in self.substitutions()]
        misread = [("Hermes reads config.yaml differently", m.message(self.path)) for m in self.hermes_misreads()]
        return replaced + misread

    def _section_substitution(self, section: str) -> Substitution | None:
        """A section (``memory``) that holds a value, not settings: every key under it reads as its default."""
        value = self.raw(section, _UNSET)
        if value is _UNSET or value is None or isinstance(value, dict):
            return None
        return Substitution(
            section,
            self._lines.get(section),
            value,
            "not a section of settings",
            f"the default of every {section}.* setting",
            SECTION_EFFECTS.get(section, ""),
            f"write its settings indented under '{section.rsplit('.', 1)[-1]}:', or delete the line",
        )

    def _substitution(self, key: str) -> Substitution | None:
        """What replaces ``key``'s value, when Hermes runs with a value we cannot use: a char limit not
        above 0 (its default; Hermes refuses every write), a word no on/off reading knows for a switch
        Hermes shares (Hermes's own reading of it). Kept per key (the file does not change)."""
        if key in self._replaced:
            return self._replaced[key]
        found = self._replaced[key] = self._find_substitution(key)
        return found

    def _find_substitution(self, key: str) -> Substitution | None:
        if not self.is_set(key) or not isinstance(self._parent(key), dict):
            return None
        value, line = self.raw(key), self._lines.get(key)
        if key in MEMORY_LIMIT_KEYS.values():
            try:
                limit = self._int(key)
            except ConfigError:  # (not a number: refused by ``int``)
                return None
            if limit > 0:
                return None
            default = default_value(key)
            return Substitution(
                key,
                line,
                value,
                "not a char limit above 0",
                f"{default:,} (the default)",
                "Hermes 0.19.0 takes it and refuses every write to that store",
                f"write a limit above 0 ({key.rsplit('.', 1)[-1]}: {default}), or delete the line",
            )
        hermes_reads, kind = HERMES_READERS.get(key, (_kept, ""))
        if kind != "bool" or self._bool(key) is not None:
            return None
        hermes = hermes_reads(value)
        return Substitution(
            key,
            line,
            value,
            "neither on nor off",
            "on" if hermes else "off",
            "as Hermes 0.19.0 reads it",
            "write true or false",
        )

    def _parent(self, key: str) -> Any:
        """The mapping ``key`` sits in (None when a section above it is no mapping)."""
        parent = key.rsplit(".", 1)[0]
        node = self.raw(parent, _UNSET)
        return node if isinstance(node, dict) else None

    def unusable(self) -> list[tuple[str, str, ConfigError]]:
        """(key, kind, error) for every honoured value set in the file that cannot be read as its kind."""
        found = []
        for key, kind in _KINDS.items():
            if self.is_set(key):
                try:
                    self.typed(key, kind)
                except ConfigError as exc:
                    found.append((key, kind, exc))
        return found

    def changed_keys(self, other: Config) -> list[str]:
        """The dotted keys whose values in effect differ between this file and ``other`` (set, changed or
        removed): a key written as the value already in use (``memory_char_limit: 2200``, the default, or
        ``"10"`` for 10) changes nothing, and the notice named it as a change."""
        keys = _flat(self._data).keys() | _flat(other._data).keys()
        return sorted(key for key in keys if self._in_effect(key) != other._in_effect(key))

    def _in_effect(self, key: str) -> Any:
        """``key`` as it is read (its kind, the default when unset); as written when it cannot be read so."""
        kind = _KINDS.get(key)
        try:
            return self.typed(key, kind) if kind else self.raw(key)
        except ConfigError:
            return self.raw(key)

    def typed(self, key: str, kind: str) -> Any:
        """The value read as ``kind`` (``int``, ``float``, ``bool`` or ``seconds``)."""
        return {"int": self.int, "float": self.float, "bool": self.bool, "seconds": self.seconds}[kind](key)

    def _where(self, key: str) -> str:
        if key in self._given:
            return self._given[key]
        line = self._lines.get(key)
        return f"{self.path} line {line}" if line else f"{self.path}"

    def seconds(self, key: str, default: float | None = None) -> float:
        """A timeout: a number of seconds above zero (0 or less would fail every wait at once, or raise)."""
        number = self.float(key, default)
        if number <= 0:
            raise ConfigError(f"{self._where(key)}: {key} must be a number of seconds above 0, got {quoted(number)}.")
        return number

    def _int(self, key: str, default: int | None = None) -> int:
        value = self.raw(key, default)
        if isinstance(value, bool):
            raise ConfigError(f"{self._where(key)}: {key} must be a whole number, got {quoted(value)}.")
        try:
            number = int(str(value).strip()) if isinstance(value, str) else int(value)
        except (TypeError, ValueError, OverflowError):  # OverflowError: .inf
            raise ConfigError(f"{self._where(key)}: {key} must be a whole number, got {quoted(value)}.") from None
        return self._bounded(key, number)

    def int(self, key: str, default: int | None = None) -> int:
        if self._substitution(key):
            return default_value(key)
        return self._int(key, default)

    def float(self, key: str, default: float | None = None) -> float:
        value = self.raw(key, default)
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):
            raise ConfigError(f"{self._where(key)}: {key} must be a number, got {quoted(value)}.") from None
        return self._bounded(key, number)

    def _bounded(self, key: str, number):
        """Numbers no setting needs (infinite, NaN, beyond ±1e12) are refused with the line, not carried on."""
        if not math.isfinite(number) or abs(number) > MAX_NUMBER:
            raise ConfigError(
                f"{self._where(key)}: {key} must be a finite number between {-MAX_NUMBER:,} and "
                f"{MAX_NUMBER:,}, got {quoted(number)}."
            )
        return number

    def _bool(self, key: str, default: bool | None = None) -> bool | None:
        """The value as on/off, or None when it is a word no reading knows."""
        value = self.raw(key, default)
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float)):
            return bool(value)
        text = str(value).strip().lower()
        if text in TRUTHY:
            return True
        if text in FALSY or value is None:
            return False
        return None

    def bool(self, key: str, default: bool | None = None) -> bool:
        reading = self._bool(key, default)
        if reading is not None:
            return reading
        if key in HERMES_READERS:  # a word Hermes reads its own way: we read it so too (``substitutions`` says)
            return HERMES_READERS[key][0](self.raw(key))
        raise ConfigError(
            f"{self._where(key)}: {key} must be on/off (true/false), got {quoted(self.raw(key, default))}."
        )

    def str(self, key: str, default: str | None = None) -> str:
        value = self.raw(key, default)
        return "" if value is None else str(value)


def _flat(data: Any, prefix: str = "") -> dict[str, Any]:
    """Nested settings as {dotted key: value}; a mapping's leaves only."""
    if not isinstance(data, dict):
        return {prefix: data}
    flat: dict[str, Any] = {}
    for key, value in data.items():
        flat.update(_flat(value, f"{prefix}.{key}" if prefix else str(key)))
    return flat


def _collect_lines(node, prefix: str, out: dict[str, int]) -> None:
    """Record the line of every mapping key so errors can point at it."""
    if not isinstance(node, yaml.MappingNode):
        return
    for key_node, value_node in node.value:
        key = f"{prefix}{key_node.value}"
        out[key] = key_node.start_mark.line + 1
        _collect_lines(value_node, key + ".", out)
