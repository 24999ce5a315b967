"""The Hermes harness itself: the real package runs, in its own process, on our home."""

from __future__ import annotations

from tests.hermes_support import HERMES_VERSION


def test_real_hermes_runs_in_its_own_process_on_the_given_home(hermes, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    info = hermes.json(
        home,
        """
        import json, os, sys
        from importlib.metadata import version
        from hermes_constants import get_hermes_home
        print(json.dumps({"version": version("hermes-agent"), "home": str(get_hermes_home()), "exe": sys.executable}))
        """,
    )
    assert info["version"] == HERMES_VERSION
    assert info["home"] == str(home)
    assert "hermes-agent" in info["exe"]
