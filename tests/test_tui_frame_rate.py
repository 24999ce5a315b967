"""Screens draw up to FRAME_RATE frames a second, unless the user set TEXTUAL_FPS."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.tui_support import make_app, settle
from widgets.textual_fixes import FRAME_RATE

pytestmark = pytest.mark.anyio


async def test_a_screen_ticks_at_the_workbench_frame_rate(home, tmp_path, monkeypatch):
    monkeypatch.delenv("TEXTUAL_FPS", raising=False)
    app = make_app(home, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.screen._update_timer._interval == pytest.approx(1 / FRAME_RATE)
    assert FRAME_RATE > 60  # Textual's default, whose clock made ready results wait for the next frame


def test_a_frame_rate_the_user_set_is_kept():
    probe = "import textual.screen, workbench.app; print(1 / textual.screen.UPDATE_PERIOD)"
    env = {**os.environ, "TEXTUAL_FPS": "30"}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True).stdout
    assert float(out) == pytest.approx(30)
