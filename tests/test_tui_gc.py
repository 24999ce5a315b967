"""The app tunes Python's collector while it runs and puts it back when it exits."""

from __future__ import annotations

import gc

import pytest

from tests.tui_support import make_app, settle
from workbench.app import GC_THRESHOLDS

pytestmark = pytest.mark.anyio


async def test_start_up_objects_are_frozen_while_the_app_runs_and_released_after(home, tmp_path):
    before = gc.get_threshold()
    gc.unfreeze()
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert gc.get_threshold() == GC_THRESHOLDS
        assert gc.get_freeze_count() > 10_000  # the home, its caches and the screens
    assert gc.get_freeze_count() == 0  # collectable again once unreachable (many apps share a test process)
    assert gc.get_threshold() == before
