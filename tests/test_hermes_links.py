"""A dotfiles-style symlinked MEMORY.md, written in turns by Hermes's memory tool and the workbench."""

from __future__ import annotations

import json
import os
import subprocess

from tests.hermes_support import workbench_cmd

HERMES_ADD = """
import json, sys
from tools.memory_tool import MemoryStore
store = MemoryStore()
store.load_from_disk()
print(json.dumps(store.add("memory", sys.argv[1] if len(sys.argv) > 1 else {fact!r})))
"""


def test_a_symlinked_memory_file_written_by_hermes_and_the_workbench_in_turns(hermes, tmp_path):
    home = tmp_path / "home"
    (home / "memories").mkdir(parents=True)
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "MEMORY.md"
    real.write_text("Seeded in the dotfiles repo")
    link = home / "memories" / "MEMORY.md"
    link.symlink_to(real)
    expected = ["Seeded in the dotfiles repo"]
    for turn in range(3):
        fact = f"Hermes turn {turn}"
        result = hermes.json(home, HERMES_ADD.format(fact=fact))
        assert result["success"], result
        expected.append(fact)
        ours = f"Workbench turn {turn}"
        proc = subprocess.run(
            workbench_cmd("memory", "add", "--target", "memory", ours, "--home", str(home), "--json"),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0 and json.loads(proc.stdout)["success"], proc.stdout + proc.stderr
        expected.append(ours)
        assert link.is_symlink() and os.readlink(link) == str(real), f"turn {turn} detached the link"
    assert real.read_text(encoding="utf-8").split("\n§\n") == expected
    seen = hermes.json(
        home,
        """
        import json
        from tools.memory_tool import MemoryStore
        store = MemoryStore()
        store.load_from_disk()
        print(json.dumps(store.memory_entries))
        """,
    )
    assert seen == expected
    assert not [p.name for p in (home / "memories").iterdir() if p.name.endswith(".tmp")]
