"""Which message of a session wrote what: one query for the transcript and ``sessions show``.

The journal says what every workbench-run write changed, and in which session and
message (a write staged for approval is its ``approvals``/``stage`` row). A real Hermes
agent journals nothing of ours, so for a message with no journal rows the archive's own
tool calls and results stand in (``memory.archive_writes``), and a call of its that was
staged for approval is listed from its result (``approvals.sources``) ahead of what the
journal says the approval of it wrote (by the workbench, or by Hermes: the outside edit
its approval is told from, ``approvals.outside``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from .approvals.outside import applied_by
from .approvals.sources import StagedCall, staged_in, staged_in_sessions
from .memory.archive_writes import TOOL, writes_in
from .memory.store import staged_summary

if TYPE_CHECKING:
    from .home import Home
    from .journal import JournalEntry

WRITE_SUBSYSTEMS = ("memory", "skills")
JOURNAL_LIMIT = 10_000  # rows read per session, far more than any session writes


@dataclass(frozen=True)
class Write:
    """One write a message made (or proposed, when ``staged``)."""

    subsystem: str  # "memory" or "skills"; "approvals" for a write staged for approval
    action: str
    target: str  # the store ("memory", "user") or the skill's name
    actor: str
    text: str | None  # the text written (or removed)
    staged: bool = False
    journal_id: int | None = None  # None: read from a Hermes agent's own tool call in state.db

    @property
    def summary(self) -> str:
        """What kind of write, in words: ``memory add (user)``, ``staged for approval (memory) by review``."""
        who = "" if self.actor == "agent" else f" by {self.actor}"
        return (
            f"staged for approval ({self.target}){who}"
            if self.staged
            else f"{self.subsystem} {self.action} ({self.target}){who}"
        )

    @property
    def entry(self) -> tuple[str, str] | None:
        """(target, text) of the memory entry this write left, if it left one."""
        if self.subsystem == "memory" and self.action in ("add", "replace") and self.text is not None:
            return self.target, self.text
        return None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _journal_read(home: Home) -> bool:
    """Whether the journal can be read and has rows: while workbench.db cannot be read, only the session's
    own messages tell what it wrote (every screen says why)."""
    return home.journal.problem() is None and home.journal.exists()


def session_writes(home: Home, session_id: str, messages: Iterable[Any]) -> dict[int, list[Write]]:
    """The writes of a session's ``messages``, by message id, in the order they happened (from the
    messages alone once workbench.db turns out damaged deep in a table, as when it cannot be read)."""
    messages = list(messages)
    found = home.journal.read_or(lambda: _writes(home, session_id, messages, _journal_read(home)), None)
    return found if found is not None else _writes(home, session_id, messages, False)


def _writes(home: Home, session_id: str, messages: list[Any], journal: bool) -> dict[int, list[Write]]:
    found: dict[int, list[Write]] = {}
    called: dict[int, set[int]] = {}  # per message, the Hermes calls its rows are (replayed or credited: ``call``)
    rows = home.journal.query(session_id=session_id, limit=JOURNAL_LIMIT) if journal else []
    for row in reversed(rows):
        staged = row.subsystem == "approvals" and row.action == "stage"
        if row.message_id is not None and isinstance(row.detail.get("call"), int):
            called.setdefault(row.message_id, set()).add(row.detail["call"])
        if row.message_id is not None and (staged or row.subsystem in WRITE_SUBSYSTEMS):
            found.setdefault(row.message_id, []).append(
                Write(
                    row.subsystem,
                    row.action,
                    row.target,
                    row.actor,
                    row.after if row.after is not None else row.before,
                    staged,
                    row.id,
                )
            )
    for message_id, writes in writes_in(messages).items():
        # a Hermes message some of whose calls have rows (a look replayed or credited them): the others from
        # the archive too (a call whose work a look journaled and could not credit: ``replay._made_by``)
        done = called.get(message_id, set())
        if message_id not in found or done:
            found.setdefault(message_id, []).extend(
                Write("memory", w.action, w.target, "agent", w.text) for w in writes if w.index not in done
            )
    staged_calls = staged_in(messages)
    staged_ids = [call.pending_id for calls in staged_calls.values() for call in calls]
    approved = _approved_outside(home, staged_ids) if journal else {}
    for message_id, calls in staged_calls.items():
        ours = found.get(message_id, [])
        if not any(w.staged for w in ours):  # the workbench journals its own stagings
            ours = found[message_id] = [_staged(call) for call in calls] + ours
        known = {w.journal_id for w in ours}
        ours += [w for call in calls for w in approved.get(call.pending_id, []) if w.journal_id not in known]
    return found


def _approved_outside(home: Home, pending_ids: list[str]) -> dict[str, list[Write]]:
    """What Hermes's own approval of each of these proposals wrote to memory (``approvals.outside``):
    outside edits, with no session of their own, listed at the message that staged them."""
    if not pending_ids:
        return {}
    written: dict[str, list[Write]] = {}
    for pending_id, row_ids in home.journal.reading(lambda: applied_by(home.journal.connection(), pending_ids)).items():
        rows = [row for row in map(home.journal.get, row_ids) if row is not None]
        written[pending_id] = [_written(r) for r in rows]
    return written


def _written(row: JournalEntry) -> Write:
    """An outside row a Hermes approval made: a memory entry's text, or a skill file changed (an outside
    skill row holds no text: its change and file, ``created brew/SKILL.md``)."""
    if row.subsystem == "skills":
        change, path = row.detail.get("change"), row.detail.get("path")
        return Write("skills", str(change or row.action), row.target, row.actor, str(path or ""), False, row.id)
    text = row.after if row.after is not None else row.before
    return Write(row.subsystem, row.action, row.target, row.actor, text, False, row.id)


def _staged(call: StagedCall) -> Write:
    """A call a Hermes agent staged, as the journal's ``stage`` row of one of ours reads."""
    args = call.arguments
    text = staged_summary(args) if call.subsystem == "memory" else f"{args.get('action')} '{args.get('name')}'"
    return Write("approvals", "stage", call.pending_id, "agent", text, staged=True)


def approved_outside(home: Home) -> dict[str, list[int]]:
    """The proposals Hermes approved itself, with the memory rows each wrote (``session_wrote``
    reads them; a list of many sessions reads them once)."""
    return home.journal.reading(lambda: applied_by(home.journal.connection())) if _journal_read(home) else {}


def session_wrote(home: Home, session_id: str, approved: dict[str, list[int]] | None = None) -> bool:
    """Whether the session wrote memory or skills: a journaled write, or, for a session a Hermes
    agent ran (it journals nothing of ours), an applied ``memory`` call in its own messages or a
    proposal its calls staged that Hermes approved (``approved``: ``approved_outside``, read here
    when not given)."""
    if _journal_read(home) and any(
        home.journal.query(session_id=session_id, subsystem=name, limit=1) for name in WRITE_SUBSYSTEMS
    ):
        return True
    if writes_in(home.archive.tool_messages(session_id, TOOL)):
        return True
    approved = approved_outside(home) if approved is None else approved  # looked for only when Hermes approved any
    return bool(approved) and any(pid in approved for pid in staged_in_sessions(home, session_id))
