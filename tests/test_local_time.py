"""Times people read are in the machine's time zone, as Hermes shows them and spells its session ids;
what is stored and ``--json`` stay ISO-8601 UTC."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from engine import FixedClock, open_home
from engine.clock import shown_time
from engine.tools import ToolContext
from tests.cli_support import printed

NOW = 1796040000.0  # 2026-11-30T12:00:00Z, 21:00 in Tokyo


@pytest.fixture
def tokyo():
    os.environ["TZ"] = "Asia/Tokyo"
    time.tzset()
    yield
    os.environ["TZ"] = "UTC"
    time.tzset()


def test_shown_time_reads_epochs_and_iso_texts_in_the_local_zone(tokyo):
    assert shown_time(NOW) == "2026-11-30 21:00"
    assert shown_time("2026-11-30T12:00:00+00:00", "%H:%M %Z") == "21:00 JST"
    assert shown_time(None) is None and shown_time("not a time") is None and shown_time(1e20) is None


def test_session_ids_are_spelled_in_local_time_as_hermes_spells_them(tmp_path, tokyo):
    home = open_home(tmp_path / "h", clock=FixedClock(NOW))
    assert home.archive.new_session_id().startswith("20261130_210000_")


def test_cli_listings_show_local_times_and_json_keeps_utc(tmp_path, tokyo):
    """The timeline in a process started with TZ set, as a person's shell starts it; the other listings
    in this process, in the same zone (``tokyo``)."""
    home = open_home(tmp_path / "h", clock=FixedClock(NOW))
    home.memory.add("memory", "Uses Postgres 16", ToolContext(actor="user"))
    home.archive.create_session("s1", source="cli")
    home.close()
    cmd = [sys.executable, "-m", "workbench", "--home", str(tmp_path / "h"), "timeline"]
    env = {**os.environ, "TZ": "Asia/Tokyo"}
    assert "2026-11-30 21:00:00" in subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
    run = lambda *args: printed("--home", str(tmp_path / "h"), *args)  # noqa: E731
    assert "2026-11-30 21:00" in run("memory", "history")
    assert "2026-11-30 21:00" in run("sessions", "list")
    assert json.loads(run("timeline", "--json"))["rows"][0]["at"] == "2026-11-30T12:00:00+00:00"


@pytest.mark.anyio
async def test_the_timeline_and_memory_screens_show_local_times(tmp_path, tokyo):
    from tests.screens_seed import open_mode, screen_text
    from tests.tui_support import make_app
    from workbench.screens.timeline import TimelineScreen

    home = open_home(tmp_path / "h", clock=FixedClock(NOW))
    home.memory.add("memory", "Uses Postgres 16", ToolContext(actor="user"))
    async with make_app(home, tmp_path).run_test(size=(100, 30)) as pilot:
        await open_mode(pilot, "6", TimelineScreen)
        shown = screen_text(pilot.app)
        assert "2026-11-30 21:00  user" in shown and "2026-11-30 21:00:00 JST" in shown


def test_since_without_a_zone_is_local_time_as_listings_show_it(tokyo):
    """Listings showed 21:00 (local) while --since 21:00 was read as UTC, nine hours on."""
    from engine.timeline import parse_since

    assert parse_since("2026-11-30T21:00", 0) == NOW
    assert parse_since("2026-11-30T12:00Z", 0) == parse_since("2026-11-30T21:00+09:00", 0) == NOW


def test_an_entry_written_after_staging_is_dated_in_local_time(tokyo):
    """`pending show` named the staging time in local time but the entry written since in UTC."""
    from engine.approvals.preview import target_line
    from workbench.screens.approvals import late_hits

    newer = {"surely": True, "at": "2026-11-30T12:00:00+00:00", "actor": "user", "event_id": 3}
    target = {"op": 1, "action": "remove", "status": "hits", "entry": "Uses Postgres 16", "written_after": newer}
    assert "(2026-11-30 21:00, user, event 3)" in target_line(target)
    [(said, _)] = late_hits({"targets": [target]})
    assert "(user, 21:00)" in said
