"""Memory Workbench engine: Hermes-compatible memory, sessions, skills and the agent runner.

Pure Python; never imports textual or anything from the UI layers.
"""

from .clock import Clock, FixedClock
from .errors import ConfigError, HomeError, WorkbenchError
from .home import Home, open_home, resolve_home

__all__ = ["Clock", "ConfigError", "FixedClock", "Home", "HomeError", "WorkbenchError", "open_home", "resolve_home"]
