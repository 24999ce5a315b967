"""The background reviews under way in this process, whoever started them: a turn typed on Run, a
scenario played there (its sessions are its own, never the screen's), the demo. A quit asks about
all of them and drops all of them (``AgentSession.drop_reviews``), not only those of the session a
screen holds: a scenario's review was dropped at quit unasked and unsaid.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..home import Home
    from .session import AgentSession

_sessions: weakref.WeakSet[AgentSession] = weakref.WeakSet()  # (a session no one holds is gone with its reviews)
_guard = threading.Lock()


def track(session: AgentSession) -> None:
    """``session`` may run background reviews (called as it is made)."""
    with _guard:
        _sessions.add(session)


def _of(home: Home) -> list[AgentSession]:
    """By folder: a scenario's sessions hold a view of the home with its settings (``Home.with_config``)."""
    with _guard:
        return [session for session in _sessions if session.home.root == home.root]


def under_way(home: Home) -> list[str]:
    """The sessions of ``home`` whose background reviews are queued or running."""
    return list(dict.fromkeys(sid for session in _of(home) for sid in session.reviews_under_way()))


def drop(home: Home) -> list[str]:
    """Stop them all without waiting for their models (the user quits without them); their sessions."""
    return list(dict.fromkeys(sid for session in _of(home) for sid in session.drop_reviews()))
