"""Argument types for numbers: finite, in range, or a usage error that says the range.

SQLite stores 64-bit integers and ``float('1e999')`` is infinity, so an unchecked
``--limit 99999999999999999999`` or ``--days inf`` ended in a traceback deep inside a
query; these types refuse such values where the words are parsed.
"""

from __future__ import annotations

import argparse

from engine.values import number_in, typed_whole

INT_MAX = 2**63 - 1


def whole(low: int = 0, high: int = INT_MAX, what: str = "a whole number"):
    def parse(text: str) -> int:
        try:
            value = typed_whole(text, what)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        if high == INT_MAX and value < low:  # (SQLite's bound is no range a person has in mind)
            raise argparse.ArgumentTypeError(f"{text} is out of range: give {what} of {low:,} or more")
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text} is out of range: give {what} from {low:,} to {high:,}")
        return value

    parse.__name__ = "whole number"
    return parse


def number(low: float = 0.0, high: float = 1e9, what: str = "a number"):
    def parse(text: str) -> float:
        try:
            return number_in(text, low, high, what)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = "number"
    return parse


COUNT = whole(0, 1_000_000, "a count")
ROWS = whole(1, 1_000_000, "a number of rows")  # --limit: a page of nothing would answer "none" falsely
ID = whole(1, INT_MAX, "an id")
SPEED = number(0, 1_000, "a speed")
