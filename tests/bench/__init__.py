"""Benchmarks (``make bench``): speed and memory figures, printed as numbers and ratios.

Each ``bench_<name>.py`` module here defines ``run(report: Report) -> None``. They are
never part of ``make test``: timing on a shared machine belongs here, not in asserts.
"""
