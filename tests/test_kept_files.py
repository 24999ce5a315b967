"""Crash tracebacks and drafts kept by "Take theirs" (``workbench.crash.keep_text``) are pruned as new ones come:
the newest few always stay, older ones within a month stay up to a cap, and nothing else in the folder is touched."""

from __future__ import annotations

import os
import time

from workbench.crash import keep_text

KEEP_NEWEST, KEEP_DAYS, KEEP_MOST = 10, 30, 100  # as docs/tui.md says: the newest 10, then a month's, up to 100


def _old(folder, kind: str, n: int, age_days: float) -> str:
    path = folder / f"{kind}-20260101-000000-{n:04d}.txt"
    path.write_text(f"{kind} {n}", encoding="utf-8")
    stamp = time.time() - age_days * 86400
    os.utime(path, (stamp, stamp))
    return path.name


def test_keeping_a_draft_drops_the_old_ones_past_the_newest_few(tmp_path):
    """Drafts and tracebacks piled up in the config folder for ever."""
    folder = tmp_path / "drafts"
    folder.mkdir()
    ancient = [_old(folder, "draft", n, KEEP_DAYS + 10 + n) for n in range(KEEP_NEWEST + 5)]  # n: older and older
    other = folder / "notes.txt"  # the person's own file, and another kind's
    other.write_text("mine", encoding="utf-8")
    crash = _old(folder, "crash", 0, KEEP_DAYS + 50)
    kept = keep_text("the newest draft", folder, "draft")
    left = {path.name for path in folder.iterdir()}
    # the new one, and the next newest KEEP_NEWEST - 1 of the old ones, however old
    assert kept.name in left and set(ancient[: KEEP_NEWEST - 1]) <= left
    assert not set(ancient[KEEP_NEWEST - 1 :]) & left
    assert {"notes.txt", crash} <= left and other.read_text(encoding="utf-8") == "mine"


def test_a_crash_loop_keeps_at_most_a_hundred_tracebacks(tmp_path):
    folder = tmp_path / "crashes"
    folder.mkdir()
    young = [_old(folder, "crash", n, 1 + n / 1000) for n in range(KEEP_MOST + 20)]
    keep_text("Traceback ...", folder, "crash")
    left = {path.name for path in folder.iterdir()}
    assert len(left) == KEEP_MOST and set(young[: KEEP_MOST - 1]) <= left


def test_doctor_lists_the_drafts_take_theirs_kept(tmp_path, monkeypatch, capsys):
    """A draft kept by "Take theirs" was named only in a passing notice: once it went, nothing said the file
    was there. `workbench doctor` lists the drafts (how many, the newest, the folder) as information."""
    import json

    from engine import open_home
    from workbench.cli import main

    monkeypatch.setenv("WORKBENCH_CONFIG_DIR", str(tmp_path / "config"))
    home = tmp_path / "home"
    open_home(home).close()
    assert main(["doctor", "--home", str(home)]) == 0
    assert "kept by the editor" not in capsys.readouterr().out  # (none kept: nothing said)
    folder = tmp_path / "config" / "drafts"
    _old(folder if folder.mkdir(parents=True) is None else folder, "draft", 0, 2)
    newest = keep_text("my words", folder, "draft")
    assert main(["doctor", "--home", str(home)]) == 0  # (information: nothing needs attention)
    printed = capsys.readouterr().out
    assert (
        f"2 drafts kept by the editor's Take theirs (your text where theirs was taken), the newest {newest.name}"
        in (printed.replace("\n", " "))
    )
    assert str(folder) in printed.replace("\n", "")
    assert main(["doctor", "--home", str(home), "--json"]) == 0
    [found] = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["area"] == "drafts"]
    assert found["severity"] == "info" and newest.name in found["what"]
