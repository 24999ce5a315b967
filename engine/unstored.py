"""What state.db lacks of one session, and the archive calls that store it.

An agent's flush and the late store of messages kept in workbench.db (``kept``) both
write through ``Unstored.store``, so messages stored late leave state.db exactly as a
flush that met no busy database would have.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any

from .archive.sessions import MAX_TITLE_LENGTH, sanitize_title
from .errors import UnusableTitle

if TYPE_CHECKING:
    from .archive import SessionArchive


@dataclass
class Unstored:
    """A session's messages not in state.db yet (each with the time it was said), with what its row
    still needs: made (``created`` false: titled after ``title``'s lineage, started when its first
    message was said, or when its id was made: ``started_at``), reopened, given its prompt, and the token
    counts the API reported."""

    session_id: str
    source: str
    model: str
    parent_id: str | None
    system_prompt: str
    title: str  # the title wanted for a row not made yet; the stored one once it is
    created: bool
    reopen: bool
    prompt_unstored: bool
    rows: list[dict[str, Any]]  # state.db message rows, ``timestamp`` included
    tokens: dict[str, Any] = field(default_factory=dict)  # reported counters, by sessions column
    started_at: float | None = None  # when its id was made (the time the id spells); None: its first message's

    def store(self, archive: SessionArchive) -> list[int]:
        """Write the row's needs and the messages, in the order and with the calls of an agent's flush;
        the new messages' ids. (Then ``store_tokens``.)

        Each step that lands is struck off here (``created`` set, ``reopen`` cleared), so a store
        that fails part way goes on from there the next time.
        """
        archive.refuse_damaged()  # (its first read could be of the damage)
        if not self.created:
            archive.create_session(
                self.session_id,
                source=self.source,
                model=self.model,
                parent_session_id=self.parent_id,
                system_prompt=self.system_prompt,
                title=_lineage_title(archive, self.title),
                # when its id was made, as Hermes's /new makes the row with the id (else its first message's time)
                started_at=self.started_at if self.started_at is not None else self.rows[0]["timestamp"],
            )
            stored = archive.get_session(self.session_id)
            self.title, self.created = (stored.title if stored else None) or self.title, True
        if self.reopen:
            archive.reopen_session(self.session_id)
            self.reopen = False
        if self.prompt_unstored:
            archive.update_system_prompt(self.session_id, self.system_prompt)
            self.prompt_unstored = False
        return archive.append_messages(self.session_id, self.rows)

    def store_tokens(self, archive: SessionArchive) -> None:
        """Add the reported token counts to the row, once its messages are stored."""
        if self.tokens:
            archive.update_token_counts(self.session_id, model=self.model, **self.tokens)
            self.tokens = {}

    def to_json(self) -> str:
        return json.dumps(asdict(self))  # (ASCII: a lone surrogate in a message is kept as its escape)

    @classmethod
    def from_json(cls, text: str) -> Unstored:
        """Read back ``to_json``'s text; keys this version does not know are left out."""
        known = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in json.loads(text).items() if key in known})


def _lineage_title(archive: SessionArchive, wanted: str) -> str | None:
    """The next free ``wanted #N``, or no title when that cannot be stored (past Hermes's 100
    characters, as ``X #2`` of a 100-character X is): a title never keeps the messages out of state.db."""
    try:
        base = sanitize_title(wanted)
    except UnusableTitle:
        return None
    title = archive.next_lineage_title(base) if base else None
    return title if title and len(title) <= MAX_TITLE_LENGTH else None
