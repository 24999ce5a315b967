"""The engine must stay free of the UI: importing it never loads textual."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_engine_import_does_not_load_textual():
    code = (
        "import sys, pkgutil, importlib, engine\n"
        "for mod in pkgutil.walk_packages(engine.__path__, 'engine.'):\n"
        "    importlib.import_module(mod.name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'widgets', 'workbench', 'themes'))\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "", f"engine pulled in UI modules: {result.stdout}"


def test_engine_sources_have_no_ui_imports():
    offenders = []
    for path in (ROOT / "engine").rglob("*.py"):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            stripped = line.strip()
            if stripped.startswith(("import ", "from ")) and stripped.split()[1].split(".")[0] in (
                "textual",
                "widgets",
                "workbench",
                "themes",
            ):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {stripped}")
    assert offenders == []
