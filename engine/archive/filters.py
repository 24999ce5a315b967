"""Filters typed as words, one rule for the CLI's flags and the TUI's boxes.

``role:user sort:oldest 東京`` searches 東京 in user messages, oldest first: a word of its own
that starts ``role:`` or ``sort:`` (any case, outside quotes) is a filter, not text. The CLI's
``--role`` and ``--sort`` feed the same reader, so both skins refuse the same bad values in the
same words (``SearchMixin.search_filters`` adds the check of roles against the archive's). The
TUI's prune question reads ``90 source:cli`` the same way (``sessions.prune_terms``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import BadSearchFilter
from ..textsafety import quoted

SORTS = ("newest", "oldest")  # without one, the best match first (newest first for a word typed as a prefix)
_QUOTED = re.compile(r'("[^"]*")')  # a phrase: its text is searched as typed, ``"role:user"`` too
# a filter as an operator's operand (FTS5's are upper case): taken out, it would leave the operator on
# the next word, ``kettle NOT role:user tea`` searching ``kettle NOT tea``
_OPERAND = re.compile(r"(?<!\S)(AND|OR|NOT)\s+((?i:role|sort):\S*)")


@dataclass(frozen=True)
class SearchFilters:
    """A search's words and the filters given with them."""

    text: str  # what is left to search
    roles: tuple[str, ...] = ()  # only messages with one of these roles ("" for a ``role:`` naming none)
    sort: str | None = None  # ``newest`` or ``oldest``; None: the best match first


def read_filters(query: str, *, roles: Iterable[str] = (), sort: str | None = None) -> SearchFilters:
    """The filters in ``query`` (and those given apart: ``roles`` may be comma-separated), and its text
    without them; a sort other than ``SORTS``, two different ones, or a filter after an operator is
    refused."""
    for part in _QUOTED.split(query):
        operand = None if _QUOTED.fullmatch(part) else _OPERAND.search(part)
        if operand:
            raise BadSearchFilter(
                f"{operand.group(2)} after {operand.group(1)}: a filter is for the whole search, not a word "
                "of it; put it apart from AND, OR and NOT (to leave a role out, name the ones to keep)"
            )
    text, named = named_words(query, ("role", "sort"))
    found = [role for given in roles for role in _roles(given)]
    found += [role for name, value in named if name == "role" for role in _roles(value) or [""]]
    sorts = ([sort.lower()] if sort else []) + [value.lower() for name, value in named if name == "sort"]
    for given in sorts:
        if given not in SORTS:
            raise BadSearchFilter(
                f"sort: takes newest or oldest, not {quoted(given)} (without it, the best match first)"
            )
    if len(set(sorts)) > 1:
        raise BadSearchFilter("two orders given (sort:newest and sort:oldest): keep one")
    return SearchFilters(text, tuple(dict.fromkeys(found)), sorts[0] if sorts else None)


def named_words(text: str, names: Iterable[str]) -> tuple[str, list[tuple[str, str]]]:
    """``text`` less its words ``name:value`` (a name of ``names``, any case, outside quotes), and those
    words as (name in lower case, value), in order; ``text`` untouched when it has none (a search's
    notes count its length), else with its spaces made single."""
    named: list[tuple[str, str]] = []
    word = re.compile(rf"(?<!\S)(?i:({'|'.join(map(re.escape, names))})):(\S*)")

    def take(match: re.Match) -> str:
        named.append((match.group(1).lower(), match.group(2)))
        return " "

    kept = "".join(part if _QUOTED.fullmatch(part) else word.sub(take, part) for part in _QUOTED.split(text))
    return (" ".join(kept.split()) if named else text), named


def _roles(given: str) -> list[str]:
    return [role.strip() for role in given.split(",") if role.strip()]
