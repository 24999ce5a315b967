"""The layers import downwards only: the import contracts in pyproject.toml hold and are live.

``lint-imports`` (run by ``make lint``) checks the contracts statically. These tests run
it on the real tree, and on a copy of the packages with one forbidden import added per
contract to prove each contract really fails. The engine is also imported module by
module in a fresh interpreter, which catches what a static graph cannot see (imports
by name at run time).
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "widgets", "workbench", "themes")
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(root: Path, *contracts: str) -> subprocess.CompletedProcess:
    """``lint-imports`` on the packages under ``root``, found there before any installed copy."""
    argv = [str(LINT_IMPORTS), "--no-logo", "--no-cache", *(a for c in contracts for a in ("--contract", c))]
    env = {"PATH": str(LINT_IMPORTS.parent), "PYTHONPATH": str(root), "COLUMNS": "200"}
    return subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=120)


def verdicts(output: str) -> dict[str, str]:
    """Contract name -> KEPT or BROKEN, from lint-imports' summary."""
    return {m[1]: m[2] for m in re.finditer(r"^(.+?) (KEPT|BROKEN)\b", output, re.M)}


def test_the_real_tree_keeps_every_contract():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    found = verdicts(result.stdout)
    assert len(found) == 5 and set(found.values()) == {"KEPT"}, result.stdout


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    """The four packages and pyproject.toml, copied so that one test can break them."""
    root = tmp_path_factory.mktemp("layers")
    for name in PACKAGES:
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", root)
    return root


# (contract id, module file that gains the import, the forbidden import)
VIOLATIONS = [
    ("engine-no-ui", "engine/clock.py", "import textual"),
    ("engine-no-ui", "engine/memory/format.py", "import rich.text"),
    ("engine-no-ui", "engine/home.py", "from workbench import settings"),
    ("widgets-no-workbench", "widgets/gauge.py", "from workbench import messages"),
    ("widgets-pure-engine", "widgets/literal.py", "from engine import fileio"),
    ("widgets-pure-engine", "widgets/transcript.py", "import engine.archive"),
    ("pure-engine-modules", "engine/textsafety.py", "from engine import journal"),
    ("pure-engine-modules", "engine/events.py", "import sqlite3"),
    ("cli-no-tui", "workbench/cli/memory_cmds.py", "from workbench.screens import memory"),
    ("cli-no-tui", "workbench/cli/sessions_cmds.py", "import textual.app"),
]


@pytest.mark.parametrize(("contract", "module", "statement"), VIOLATIONS)
def test_one_forbidden_import_breaks_its_contract(copy, contract, module, statement):
    path = copy / module
    original = path.read_text(encoding="utf-8")
    try:
        path.write_text(original + f"\n{statement}  # added by the test\n", encoding="utf-8")
        broken = lint_imports(copy, contract)
    finally:
        path.write_text(original, encoding="utf-8")
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert list(verdicts(broken.stdout).values()) == ["BROKEN"], broken.stdout
    assert module.removesuffix(".py").replace("/", ".") in broken.stdout  # the report names the offender


def test_engine_import_does_not_load_textual():
    # (not rich: httpx loads its own command line, which uses rich, whenever rich is installed)
    code = (
        "import sys, pkgutil, importlib, engine\n"
        "for mod in pkgutil.walk_packages(engine.__path__, 'engine.'):\n"
        "    importlib.import_module(mod.name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'widgets', 'workbench', 'themes'))\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "", f"engine pulled in UI modules: {result.stdout}"
