"""How a count of messages is said, one rule for both skins: ``1 msg``, ``5 msgs``, ``0 msgs``.

Pure (widgets may import it): the Sessions screen's tree said ``5 msg`` where the CLI said ``5 msgs``.
"""

from __future__ import annotations


def msgs(count: int) -> str:
    """The word after a message count."""
    return "msg" if count == 1 else "msgs"
