"""Crash tracebacks and drafts kept by "Take theirs" (``workbench.crash.keep_text``) are pruned as new ones come:
the newest few always stay, older ones within a month stay up to a cap, and nothing else in the folder is touched."""

from __future__ import annotations

import os
import time
from pathlib import Path

from engine.kept_files import home_drafts
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
    folder = home_drafts(tmp_path / "config" / "drafts", home)
    _old(folder if folder.mkdir(parents=True) is None else folder, "draft", 0, 2)
    newest = keep_text("my words", folder, "draft")
    assert main(["doctor", "--home", str(home)]) == 0  # (information: nothing needs attention)
    printed = capsys.readouterr().out.replace("\n", " ")
    assert (
        "2 drafts kept by the editor's Take theirs (your text where theirs was taken) on this home, the newest "
        f"{newest.name}" in printed
    )
    assert str(folder) in printed.replace(" ", "")
    assert main(["doctor", "--home", str(home), "--json"]) == 0
    [found] = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["area"] == "drafts"]
    assert found["severity"] == "info" and newest.name in found["what"]


def test_each_home_counts_its_own_drafts_and_names_those_of_an_unknown_home(tmp_path, monkeypatch):
    """Drafts were kept in one folder for every home, and each home's doctor counted all of them. Each home's
    are kept apart now; those kept before, loose in the folder, are named as of an unknown home, never lost."""
    from engine import open_home
    from engine.doctor import run_doctor

    drafts = tmp_path / "drafts"
    drafts.mkdir()
    older = _old(drafts, "draft", 0, 3)  # kept before drafts recorded their home
    homes = [open_home(tmp_path / name) for name in ("one", "two")]
    try:
        kept = [keep_text(f"draft of {home.root.name}", home_drafts(drafts, home.root), "draft") for home in homes]
        assert kept[0].parent != kept[1].parent and (drafts / older).exists()
        for home, mine, theirs in ((homes[0], kept[0], kept[1]), (homes[1], kept[1], kept[0])):
            found = [f for f in run_doctor(home, drafts=drafts).findings if f.area == "drafts"]
            lines = [f.what for f in found]
            assert len(lines) == 2, lines
            assert lines[0].startswith(
                "1 draft kept by the editor's Take theirs (your text where theirs was taken) on "
            )
            assert mine.name in lines[0] and str(mine.parent) in lines[0] and theirs.name not in "".join(lines)
            assert lines[1].startswith("1 draft kept by the editor's Take theirs (your text where theirs was taken) of")
            assert "of an unknown home" in lines[1] and older in lines[1] and lines[1].endswith(f"in {drafts}.")
            assert found[1].fix.endswith("these stay until you delete them.")  # (no longer pruned: none come)
    finally:
        for home in homes:
            home.close()
    monkeypatch.chdir(tmp_path)  # the same home named another way keeps its drafts in the same folder
    (tmp_path / "link").symlink_to(tmp_path / "one")
    assert home_drafts(drafts, Path("one")) == home_drafts(drafts, tmp_path / "link") == kept[0].parent
