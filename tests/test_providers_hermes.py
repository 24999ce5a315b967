"""memory.provider naming one of Hermes's own provider plugins: said so by providers list, doctor and run."""

from __future__ import annotations

import json
import subprocess

from engine.doctor import run_doctor
from engine.models import OfflineModel
from engine.providers import HERMES_BUNDLED, hermes_provider
from engine.runner import AgentSession
from tests.hermes_support import workbench_cmd

PLUGIN = "from agent.memory_provider import MemoryProvider\n\nclass Mine(MemoryProvider):\n    pass\n"


def configure(home, name: str) -> None:
    home.config_path.write_text(f"memory:\n  provider: {name}\n", encoding="utf-8")
    home.reload_config()


def cli(home, *args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(workbench_cmd(*args, "--home", str(home.root)), capture_output=True, text=True, timeout=60)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_the_names_are_the_ones_hermes_finds(home, hermes):
    """Hermes's own discovery: its bundled plugins, and a user plugin in HERMES_HOME/plugins/NAME/."""
    (home.root / "plugins" / "mine").mkdir(parents=True)
    (home.root / "plugins" / "mine" / "__init__.py").write_text(PLUGIN, encoding="utf-8")
    (home.root / "plugins" / "other").mkdir()  # a plugin, but not a memory provider
    (home.root / "plugins" / "other" / "__init__.py").write_text("def register(ctx): pass\n", encoding="utf-8")
    found = hermes.json(
        home.root,
        """
        import json
        from plugins.memory import list_memory_provider_names
        print(json.dumps(list_memory_provider_names()))
        """,
    )
    assert set(found) == HERMES_BUNDLED | {"mine"}
    assert [name for name in [*found, "other", "nothing"] if hermes_provider(home, name)] == found
    assert hermes_provider(home, "a\0b") is None and hermes_provider(home, "../plugins/mine") is None


def test_providers_list_names_a_hermes_provider_and_what_runs_instead(home):
    configure(home, "honcho")
    proc = cli(home, "providers", "list")
    assert proc.returncode == 0
    assert "none active" not in proc.stdout
    text = " ".join(proc.stdout.split())
    assert "memory.provider is 'honcho': a memory provider bundled with Hermes" in text
    assert "which Hermes loads and the workbench does not" in text
    assert "Workbench sessions run without a memory provider: MEMORY.md and USER.md only" in text
    data = json.loads(cli(home, "providers", "list", "--json").stdout)
    assert data["configured"] == "honcho" and "Hermes loads" in data["note"]
    assert [r["active"] for r in data["providers"]] == [False]


def test_doctor_reports_a_hermes_provider_as_info_and_an_unknown_one_as_a_warning(home):
    configure(home, "honcho")
    report = run_doctor(home)
    [finding] = [f for f in report.findings if f.area == "provider"]
    assert report.ok and finding.severity == "info" and "honcho" in finding.what and "Hermes" in finding.what
    proc = cli(home, "doctor")
    assert proc.returncode == 0 and "provider memory.provider is 'honcho'" in proc.stdout
    configure(home, "honcha")
    report = run_doctor(home)
    [finding] = [f for f in report.findings if f.area == "provider"]
    assert not report.ok and finding.severity == "warning"
    assert "neither the workbench nor Hermes has" in finding.what and "Fix the name in config.yaml" in finding.fix
    assert cli(home, "doctor").returncode == 1
    configure(home, "local")  # the workbench's own: Hermes has none of that name, and runs without one
    report = run_doctor(home)
    [finding] = [f for f in report.findings if f.area == "provider"]
    assert report.ok and finding.severity == "info"
    assert finding.what.startswith("memory.provider is 'local': the workbench's own, which Hermes does not have")


def test_a_session_warns_that_hermes_runs_the_provider(home):
    configure(home, "honcho")
    session = AgentSession(home, OfflineModel())
    try:
        [warning] = session.manager.warnings
    finally:
        session.close()
    assert warning.startswith("memory.provider is 'honcho': a memory provider bundled with Hermes")
    assert warning.endswith("See `workbench providers list`.") and "Unknown" not in warning
