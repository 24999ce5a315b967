"""The session archive: Hermes's state.db (sessions, messages, lineage) and search over it.

``SessionArchive`` is reached as ``home.archive``. Its parts live in one module each
(sessions, messages, lineage, search, export, upkeep, interrupted), each a class over ``ArchiveCore``
that subclasses the parts it calls (search needs lineage, upkeep needs search), so the
type checker sees every call; session_search.py is the agent tool and health.py
doctor's check and repair of state.db.
"""

from __future__ import annotations

from .export import ExportMixin
from .interrupted import InterruptedMixin
from .lineage import LineageMixin
from .messages import MessagesMixin
from .models import MARK_CLOSE, MARK_OPEN, Chain, Lineage, Message, SearchHit, Session
from .query import sanitize_fts_query
from .search import SearchMixin
from .sessions import SessionsMixin, sanitize_title
from .upkeep import UpkeepMixin


class SessionArchive(
    SessionsMixin, ExportMixin, MessagesMixin, UpkeepMixin, SearchMixin, LineageMixin, InterruptedMixin
):
    """Sessions, messages, lineage, search, export and index upkeep over one home's state.db."""


__all__ = [
    "SessionArchive",
    "Session",
    "Message",
    "SearchHit",
    "Lineage",
    "Chain",
    "MARK_OPEN",
    "MARK_CLOSE",
    "sanitize_fts_query",
    "sanitize_title",
]
