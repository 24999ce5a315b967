"""Filters typed in a search's text, one rule for the CLI's flags and the TUI's search box.

``role:user sort:oldest 東京`` searches 東京 in user messages, oldest first: a word of its own
that starts ``role:`` or ``sort:`` (any case, outside quotes) is a filter, not text. The CLI's
``--role`` and ``--sort`` feed the same reader, so both skins refuse the same bad values in the
same words (``SearchMixin.search_filters`` adds the check of roles against the archive's).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import BadSearchFilter

SORTS = ("newest", "oldest")  # without one, the best match first (newest first for a word typed as a prefix)
_FILTER = re.compile(r"(?<!\S)(?i:(role|sort)):(\S*)")
_QUOTED = re.compile(r'("[^"]*")')  # a phrase: its text is searched as typed, ``"role:user"`` too


@dataclass(frozen=True)
class SearchFilters:
    """A search's words and the filters given with them."""

    text: str  # what is left to search
    roles: tuple[str, ...] = ()  # only messages with one of these roles ("" for a ``role:`` naming none)
    sort: str | None = None  # ``newest`` or ``oldest``; None: the best match first


def read_filters(query: str, *, roles: Iterable[str] = (), sort: str | None = None) -> SearchFilters:
    """The filters in ``query`` (and those given apart: ``roles`` may be comma-separated), and its text
    without them; a sort other than ``SORTS``, or two different ones, is refused."""
    found = [role for given in roles for role in _roles(given)]
    sorts = [sort.lower()] if sort else []

    def take(match: re.Match) -> str:
        if match.group(1).lower() == "role":
            found.extend(_roles(match.group(2)) or [""])
        else:
            sorts.append(match.group(2).lower())
        return " "

    parts = _QUOTED.split(query)
    text = "".join(part if _QUOTED.fullmatch(part) else _FILTER.sub(take, part) for part in parts)
    for given in sorts:
        if given not in SORTS:
            raise BadSearchFilter(f"sort: takes newest or oldest, not {given!r} (without it, the best match first)")
    if len(set(sorts)) > 1:
        raise BadSearchFilter("two orders given (sort:newest and sort:oldest): keep one")
    text = text if text == query else " ".join(text.split())  # (untouched without filters: notes count its length)
    return SearchFilters(text, tuple(dict.fromkeys(found)), sorts[0] if sorts else None)


def _roles(given: str) -> list[str]:
    return [role.strip() for role in given.split(",") if role.strip()]
