"""How a count is said, one rule for both skins: ``1 pending write``, ``2 pending writes``, and for
messages ``1 msg``, ``5 msgs``, ``0 msgs``.

Pure (widgets may import it): the Sessions screen's tree said ``5 msg`` where the CLI said ``5 msgs``,
and messages said ``1 pending write(s)``, which a reader has to untangle.
"""

from __future__ import annotations


def counted(count: int, noun: str) -> str:
    """``count`` and its noun (one made plural with an -s) as said: ``1 pending write``, ``0 pending writes``,
    ``1,204 lines``."""
    return f"{count:,} {noun}{'s' * (count != 1)}"


def msgs(count: int) -> str:
    """The word after a message count."""
    return "msg" if count == 1 else "msgs"
