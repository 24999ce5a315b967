"""The closing table of `make bench`: each Hermes figure says where it comes from (no timing here)."""

from tests.bench import common
from tests.bench.common import REFERENCE, THIS_RUN, Report, print_table
from tests.hermes_support import HERMES_VERSION


def test_the_hermes_column_names_each_figures_source(monkeypatch, capsys):
    monkeypatch.setattr(common, "ROWS", [])
    report = Report("memory")
    report.latencies("add", [0.002] * 10, "<= Hermes p50", (1.0, 1.0), THIS_RUN)
    report.figure("search p50", 8.0, "ms", hermes=80.0)
    report.figure("lost updates", 0, target="0")
    print_table()
    lines = capsys.readouterr().out.splitlines()
    rows = [line for line in lines if line.startswith("| memory |")]
    assert rows == [
        "| memory | add p50 | 2.000 ms | <= Hermes p50 | 1.000 (this run) | 2.00x |",
        "| memory | add p95 | 2.000 ms |  | 1.000 (this run) | 2.00x |",
        "| memory | search p50 | 8.000 ms |  | 80.000 (ref.) | 0.10x |",
        "| memory | lost updates | 0 | 0 |  |  |",
    ]
    [legend] = [line for line in lines if line.startswith("Hermes column:")]
    assert f"({THIS_RUN}) hermes-agent {HERMES_VERSION}'s own code" in legend
    assert f"({REFERENCE}) the reference figures" in legend and "614dc194e" in legend


def test_a_table_without_hermes_figures_has_no_legend(monkeypatch, capsys):
    monkeypatch.setattr(common, "ROWS", [])
    Report("skills").figure("curator dry run", 71.3, "ms", "< 2000 ms")
    print_table()
    out = capsys.readouterr().out
    assert "| skills | curator dry run | 71.300 ms | < 2000 ms |  |  |" in out and "Hermes column" not in out
