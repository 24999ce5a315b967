"""Shared fixtures: a fresh home in a temp folder, with a fixed clock."""

from __future__ import annotations

import pytest

from engine import FixedClock, open_home

# 2026-11-30T12:00:00Z: every test sees the same "now" unless it moves the clock.
FIXED_NOW = 1796040000.0


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(FIXED_NOW)


@pytest.fixture
def home(tmp_path, clock):
    h = open_home(tmp_path / "home", clock=clock)
    yield h
    h.close()
