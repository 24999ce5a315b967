"""The memory operations as pure functions on a list of entries.

Each function takes the live entries and returns an ``Outcome`` (the new list and what
changed) or raises ``Refusal`` carrying the JSON result a model can act on. Nothing
here touches disk, so the store can run an operation for real under its lock, or as a
dry run to validate and pin a write before staging it for approval.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..counts import counted
from ..textsafety import flat_line, quoted
from .format import FILE_NAMES, Usage, size_of, split_pieces

MAX_BATCH_OPERATIONS = 200  # a full store holds far fewer entries; bounds the work of one write
BATCH_SUFFIX = " No operations were applied (batch is all-or-nothing)."
REPLACE_HINT = (
    " For 'replace', content is the COMPLETE new entry -- the whole matched entry is overwritten, "
    "not just the old_text span."
)
REMOVES_ONLY = "only removes entries, so it has no text to edit; approve or reject it as it is."


class Refusal(Exception):
    """A refused operation. ``counts`` marks a consolidation failure (Hermes issue #42405)."""

    def __init__(
        self, result: dict[str, Any], counts: bool = False, person: str | None = None, size_after: int | None = None
    ):
        super().__init__(result.get("error", ""))
        self.result = {"success": False, **result}
        self.counts = counts
        self.person = person  # the words for a person (the TUI, the CLI), where the agent's name its tool's fields
        self.size_after = size_after  # an over-capacity refusal: what the store would have held (a preview's budget)

    def said_to(self, actor: str) -> dict[str, Any]:
        """The result as ``actor`` reads it: a person gets ``person`` for the agent's error, when there is one."""
        return {**self.result, "error": self.person} if actor == "user" and self.person else self.result


class NoMatch(Refusal):
    """A replace or remove whose ``old_text`` is in no entry of the store it was sent to."""

    def __init__(self, result: dict[str, Any], person: str, old_text: str):
        super().__init__(result, counts=True, person=person)
        self.old_text = old_text


def refuse(
    error: str, counts: bool = False, person: str | None = None, size_after: int | None = None, **extra: Any
) -> Refusal:
    return Refusal({"error": error, **extra}, counts, person, size_after)


@dataclass(frozen=True)
class Change:
    """One entry-level change: ``before`` None for an add, ``after`` None for a remove."""

    action: str
    before: str | None
    after: str | None
    index: int | None = None  # position of a removed entry, so undo can put it back there
    follows: tuple[str, ...] = ()  # the entries just before a removed one, nearest first (``FOLLOWS``)
    precedes: tuple[str, ...] = ()  # and the entries just after it, nearest first


FOLLOWS = 3  # how many of the entries before (and after) a removed one its row names


def follows_key(entry: str) -> str:
    """How a journal row names an entry a removed one followed: 16 hex digits of its SHA-256
    (enough to find it among a file's entries)."""
    return hashlib.sha256(entry.encode("utf-8")).hexdigest()[:16]


def preceding(entries: list[str], index: int) -> tuple[str, ...]:
    """The ``FOLLOWS`` entries before ``entries[index]``, nearest first."""
    return tuple(reversed(entries[max(0, index - FOLLOWS) : index]))


def succeeding(entries: list[str], index: int) -> tuple[str, ...]:
    """The ``FOLLOWS`` entries after ``entries[index]``, nearest first."""
    return tuple(entries[index + 1 : index + 1 + FOLLOWS])


def _neighbours(detail: dict[str, Any], key: str) -> list[str] | None:
    names = detail.get(key)
    return names if isinstance(names, list) and all(isinstance(name, str) for name in names) else None


def restore_at(entries: list[str], detail: dict[str, Any]) -> int:
    """Where undoing a removal puts the entry back into ``entries``: after the nearest of the
    entries it followed that is still there, first if it was first, else before the nearest of
    those it preceded, last if it was last (so entries removed together, a file emptied
    included, come back in their order undone forwards or back); failing those, first when it
    had fewer than ``FOLLOWS`` before it, last when fewer after, else at its old index (as rows
    from before ``follows`` are)."""
    keys = [follows_key(entry) for entry in entries]
    follows, precedes = _neighbours(detail, "follows"), _neighbours(detail, "precedes")
    for key in follows or ():
        if key in keys:
            return keys.index(key) + 1
    if follows == []:
        return 0
    for key in precedes or ():
        if key in keys:
            return keys.index(key)
    if precedes == []:
        return len(entries)
    if follows is not None and len(follows) < FOLLOWS:
        return 0
    if precedes is not None and len(precedes) < FOLLOWS:
        return len(entries)
    index = detail.get("index")
    return min(index, len(entries)) if isinstance(index, int) and index >= 0 else len(entries)


@dataclass
class Outcome:
    entries: list[str]
    message: str
    changes: list[Change] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)
    pins: dict[int, str] = field(default_factory=dict)  # batch op index (1-based) -> matched entry
    text: str | None = None  # exact file text to write, when not just the serialized entries
    chars: int | None = None  # the size of the text written, once a write has serialized the entries


def stale_pin_message(entry: str) -> str:
    return (
        f"Entry changed since it was staged: '{entry}' is no longer in memory as reviewed. Recreate the change "
        "against the current entry, or reject it."
    )


def _matches(entries: list[str], old_text: str) -> list[int]:
    """Indexes an ``old_text`` identifies: exact whole-entry matches win over substrings."""
    exact = [i for i, e in enumerate(entries) if e == old_text]
    return exact or [i for i, e in enumerate(entries) if old_text in e]


def holds(entries: list[str], old_text: str) -> bool:
    """Whether ``old_text`` identifies any entry (one or several) of ``entries``."""
    return bool(old_text) and bool(_matches(entries, old_text))


class StalePin(Refusal):
    """A write pinned to an entry (a reviewed proposal, a person's edit) that is no longer in the
    file as it was read; its message is the reviewer's, which a person's own edit, or an approval
    pinned to what its question showed, words otherwise (``entry``: the pin)."""

    def __init__(self, entry: str, result: dict[str, Any] | None = None, counts: bool = False):
        super().__init__(result or {"error": stale_pin_message(entry)}, counts)
        self.entry = entry


def _pinned(entries: list[str], pin: str) -> int:
    if pin not in entries:
        raise StalePin(pin)
    return entries.index(pin)


def preview(entry: str) -> str:
    return entry[:80] + ("..." if len(entry) > 80 else "")


def locate(entries: list[str], old_text: str, action: str, pin: str | None = None) -> int:
    """The index of the one entry ``old_text`` identifies, or a Refusal explaining why not."""
    if pin is not None:
        return _pinned(entries, pin)
    found = _matches(entries, old_text)
    if not found:
        raise NoMatch(
            {
                "error": f"No entry matched '{old_text}'. Check current_entries below and retry with the exact "
                f"text of the entry you want to {action}.",
                "current_entries": list(entries),
            },
            person=f"No entry holds {quoted(old_text)}: give part of the exact text of the entry to {action} "
            "(`workbench memory show` lists them).",
            old_text=old_text,
        )
    if len({entries[i] for i in found}) > 1:
        raise refuse(
            f"Multiple entries matched '{old_text}'. Be more specific.", matches=[preview(entries[i]) for i in found]
        )
    return found[0]


def too_long(content: str, limit: int) -> bool:
    """Whether ``content`` alone is longer than the whole store: a write of it is refused however much
    room is made (the approval's rule, and the Memory gauge's for what a pending add would add)."""
    return len(content) > limit


def too_long_message(content: str, limit: int) -> str:
    """An entry longer than the whole store: consolidating cannot make room, so this says to shorten it
    instead of pointing at the other entries (the same words for the agent and for a person)."""
    return (
        f"This entry alone is {len(content):,} chars, more than the store's whole limit of {limit:,}: "
        "no consolidation makes room for it. Save a shorter version (the fact itself in a sentence or "
        "two), or leave it out."
    )


LARGEST_NAMED = 3  # the entries an over-capacity refusal names for a person, largest first


def room_advice(entries: list[str], content: str, limit: int, replacing: str | None = None) -> str | None:
    """What a person is told about writing ``content`` to ``entries`` under ``limit``, as a new entry or in
    place of ``replacing``: the Memory editor says it as they type, and a refused save (the TUI, the CLI;
    a direct write or an approval) in the same words. None when it fits; when the entry alone is longer
    than the whole store, that no consolidation makes room; else by how much the store would be over, and
    its largest other entries, to merge or remove first."""
    if too_long(content, limit):
        return too_long_message(content, limit)
    index = entries.index(replacing) if replacing in entries else None
    others = entries if index is None else entries[:index] + entries[index + 1 :]
    after = size_of([*others, content])
    if after <= limit:
        return None
    current = size_of(entries)
    if size_of(others) > limit:  # shortening the new text cannot help: the store is the trouble
        return (
            f"Memory is over its limit by itself ({current:,}/{limit:,} chars, {current - limit:,} over), so no "
            "entry fits, however short. Repair it first: `workbench memory repair` lists the repairs (r on the "
            "Memory screen)."
        )
    largest = sorted(others, key=len, reverse=True)[:LARGEST_NAMED]
    named = "; ".join(f"{len(entry):,} chars: {flat_line(entry, 40)}" for entry in largest)
    this = f"this entry ({len(content):,} chars)"
    if index is not None:
        this = f"this text ({len(content):,} chars) in place of entry {index + 1} ({len(entries[index]):,} chars)"
    return (
        f"Memory is at {Usage.of(entries, limit).short} chars: {this} would take it {after - limit:,} "
        f"char{'s' * (after - limit != 1)} past the limit. Shorten it, or merge or remove entries first. "
        f"Largest entries: {named}."
    )


def already_entry(entries: list[str], text: str) -> str:
    """How a person is told ``text`` is an entry already (one of ``entries``)."""
    return f"'{preview(text)}' is already entry {entries.index(text) + 1}"


def twice_advice(entries: list[str], text: str) -> str:
    """What a person is told of a replace whose text another of ``entries`` holds already: the Memory
    editor says it as they type, and the save it refuses in the same words."""
    return (
        f"{already_entry(entries, text)}: the file would hold it twice. Remove this entry instead, or give it "
        "different text."
    )


def _refuse_too_long(entries: list[str], content: str, limit: int, size_after: int) -> None:
    if too_long(content, limit):
        raise refuse(
            too_long_message(content, limit),
            counts=True,
            size_after=size_after,
            usage=Usage.of(entries, limit).short,
        )


# what an add of an entry memory already holds answers, here as in Hermes: a success that wrote nothing
ALREADY_THERE = "Entry already exists (no duplicate added)."


def add(entries: list[str], content: str, limit: int) -> Outcome:
    if content in entries:
        return Outcome(list(entries), ALREADY_THERE)
    new = [*entries, content]
    after = size_of(new)  # (counted once: joining a few hundred entries is most of what counting costs)
    _refuse_too_long(entries, content, limit, after)
    if after > limit:
        usage = Usage.of(entries, limit)
        raise refuse(
            f"Memory at {usage.short} chars. Adding this entry ({len(content)} chars) would exceed the "
            "limit. Consolidate now: use 'replace' to merge overlapping entries into shorter ones or "
            "'remove' stale or less important entries (see current_entries below), then retry this add "
            "— all in this turn.",
            counts=True,
            person=room_advice(entries, content, limit),
            size_after=after,
            current_entries=list(entries),
            usage=usage.short,
        )
    return Outcome(new, "Entry added.", [Change("add", None, content)])


def _refuse_twice(entries: list[str], after: list[str], operation: str = "") -> None:
    """Refuse a replace that would leave an entry's text in the file twice: Hermes keeps one copy when it
    next reads the file, so the write's own row (and its undo) would speak of an entry that is not there,
    and undoing it would take out the one copy left."""
    twice = next((text for text in after if after.count(text) > 1 and entries.count(text) < 2), None)
    if twice is None:
        return
    if twice not in entries:  # (a batch whose two operations write the same text)
        raise refuse(
            f"{operation}Two operations would write '{preview(twice)}': the store would hold it twice. Write it "
            "once, and 'remove' the other entry.",
            person=f"Two of these changes would write '{preview(twice)}': the file would hold it twice. Nothing "
            "was changed.",
        )
    raise refuse(
        f"{operation}The new content is already an entry ('{preview(twice)}'): the store would hold it twice. "
        "To drop the entry being replaced, use 'remove'; to change it, give different content.",
        person=twice_advice(entries, twice),
    )


def replace(entries: list[str], old_text: str, content: str, limit: int, pin: str | None = None) -> Outcome:
    index = locate(entries, old_text, "replace", pin)
    old = entries[index]
    new = list(entries)
    new[index] = content
    _refuse_twice(entries, new)
    after = size_of(new)  # (counted once, as an add's)
    _refuse_too_long(entries, content, limit, after)
    if after > limit:
        raise refuse(
            f"Replacement would put memory at {after:,}/{limit:,} chars. Shorten the new content, "
            "or 'remove' other stale or less important entries to make room (see current_entries below), "
            "then retry — all in this turn.",
            counts=True,
            person=room_advice(entries, content, limit, old),
            size_after=after,
            current_entries=list(entries),
            usage=Usage.of(entries, limit).short,
        )
    if content == old:  # (a proposal re-staged after its change was made, say): nothing to write or journal
        return Outcome(
            new,
            "Entry replaced (it already read so: nothing changed).",
            [],
            {"replaced_entry": old, "new_entry": content},
        )
    return Outcome(
        new, "Entry replaced.", [Change("replace", old, content)], {"replaced_entry": old, "new_entry": content}
    )


def remove(entries: list[str], old_text: str, pin: str | None = None) -> Outcome:
    index = locate(entries, old_text, "remove", pin)
    old = entries[index]
    new = entries[:index] + entries[index + 1 :]
    change = Change("remove", old, None, index, preceding(entries, index), succeeding(entries, index))
    return Outcome(new, "Entry removed.", [change], {"removed_entry": old})


def op_text(op: dict[str, Any], key: str) -> str:
    """An operation's text field, stripped; ``content`` falls back to ``new_text``."""
    value = op.get(key) if key != "content" else (op.get("content") or op.get("new_text"))
    return value.strip() if isinstance(value, str) else ""


def staged_operations(payload: dict[str, Any]) -> list[Any]:
    """The operations of a staged write: a batch's list, or the single write itself."""
    if payload.get("action") != "batch":
        return [payload]
    operations = payload.get("operations")
    return operations if isinstance(operations, list) else []


def check_batch_size(operations: list[Any]) -> None:
    """Refuse a batch longer than any store holds entries (a record written by hand or another program)."""
    if len(operations) > MAX_BATCH_OPERATIONS:
        raise refuse(
            f"The batch has {len(operations):,} operations; at most {MAX_BATCH_OPERATIONS} are accepted in one "
            "batch. Split it into smaller batches (a pending record this size can only be rejected)."
        )


@dataclass(frozen=True)
class Target:
    """The entry one replace or remove of a staged write identifies in the live entries."""

    op: int  # 1-based position in the write (1 for a single replace or remove)
    action: str
    old_text: str
    pinned: str | None  # the entry named when it was staged (None: Hermes staged it)
    matches: tuple[str, ...]  # the distinct entries it identifies now

    @property
    def entry(self) -> str | None:
        return self.matches[0] if len(self.matches) == 1 else None

    @property
    def status(self) -> str:
        """``hits`` one entry, is ``ambiguous``, or is ``gone`` (nothing matches, or its pin changed)."""
        return "hits" if len(self.matches) == 1 else "ambiguous" if self.matches else "gone"

    def to_dict(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "action": self.action,
            "old_text": self.old_text,
            "pinned": self.pinned,
            "status": self.status,
            "entry": self.entry,
            "matches": list(self.matches),
        }


def resolve_targets(entries: list[str], operations: list[Any]) -> list[Target]:
    """Walk ``operations`` over a copy of ``entries`` and note what each replace or remove hits.

    A pinned operation hits its pinned entry while it is still there. An unpinned one
    (Hermes stages ``old_text`` only) follows Hermes's rule: every entry containing
    ``old_text`` matches, and it must be exactly one distinct entry. An operation that
    hits nothing or several entries is skipped, so later ones see what Hermes would.
    """
    work = list(entries)
    targets: list[Target] = []
    for i, raw_op in enumerate(operations, 1):
        op = raw_op if isinstance(raw_op, dict) else {}
        action, content, old_text = op.get("action"), op_text(op, "content"), op_text(op, "old_text")
        if action == "add" and content and content not in work:
            work.append(content)
        if action not in ("replace", "remove"):
            continue
        pin = op.get("matched_entry") if isinstance(op.get("matched_entry"), str) else None
        if pin is not None:
            found = [pin] if pin in work else []
        else:
            found = list(dict.fromkeys(e for e in work if old_text and old_text in e))
        targets.append(Target(i, action, old_text, pin, tuple(found)))
        if len(found) == 1:
            index = work.index(found[0])
            if action == "remove":
                del work[index]
            elif content:
                work[index] = content
    return targets


def unresolved_message(
    targets: list[Target], file_name: str, batch: bool, held_in: Callable[[str], str | None] = lambda _: None
) -> str:
    """Why a staged write cannot be applied as reviewed, in the reviewer's terms. ``held_in``: the other
    store's file name when it holds a text that matches nothing here (the agent's store mistaken)."""
    reasons = []
    for t in targets:
        what = f"operation {t.op} ({t.action})" if batch else f"this {t.action}"
        if t.pinned is not None:
            reasons.append(f"{what} was staged against '{preview(t.pinned)}', which is no longer in {file_name}")
        elif t.matches:
            listed = "; ".join(f"'{preview(m)}'" for m in t.matches)
            reasons.append(
                f"{what} targets '{t.old_text}', which now matches {len(t.matches)} different entries "
                f"in {file_name} ({listed})"
            )
        else:
            other = held_in(t.old_text)
            held = f" ({other} holds it: it may have been meant for that store)" if other else ""
            reasons.append(f"{what} targets '{t.old_text}', which matches no entry in {file_name} now{held}")
    return (
        "; ".join(reasons) + ". The write names its entry only by that text, so the workbench "
        "does not guess which one was meant. Reject it, or make the change yourself."
    )


def pin_targets(payload: dict[str, Any], targets: list[Target]) -> dict[str, Any]:
    """``payload`` with every replace or remove pinned to the entry it resolved to."""
    if payload.get("action") != "batch":
        return {**payload, "matched_entry": targets[0].entry}
    hits = {t.op: t.entry for t in targets}
    return {
        **payload,
        "operations": [
            {**op, "matched_entry": hits[i]} if i in hits else op for i, op in enumerate(payload["operations"], 1)
        ],
    }


def pin_seen(payload: dict[str, Any], seen: dict[int, str]) -> dict[str, Any]:
    """``payload`` with each replace or remove staged without its entry pinned to the entry a person
    was shown it would hit (``seen``: by operation number, as ``resolve_targets`` numbers them)."""
    if payload.get("action") in ("replace", "remove"):
        pinned = isinstance(payload.get("matched_entry"), str)
        return payload if pinned or 1 not in seen else {**payload, "matched_entry": seen[1]}
    if payload.get("action") != "batch" or not isinstance(payload.get("operations"), list):
        return payload
    operations = [
        {**op, "matched_entry": seen[i]}
        if isinstance(op, dict) and i in seen and not isinstance(op.get("matched_entry"), str)
        else op
        for i, op in enumerate(payload["operations"], 1)
    ]
    return {**payload, "operations": operations}


def edit_batch(operations: Any, edited: str) -> list[Any]:
    """A batch's operations with a reviewer's texts for its adds and replaces, in order.

    ``edited`` holds one text per add or replace, separated as entries are in the memory
    files (a line holding only ``§``).
    """
    if not isinstance(operations, list):
        raise refuse("operations must be a list of {action, content?, old_text?} objects.")
    slots = [i for i, op in enumerate(operations) if isinstance(op, dict) and op.get("action") in ("add", "replace")]
    if not slots:
        raise refuse(f"This batch {REMOVES_ONLY}")
    texts = split_pieces(edited)
    if len(texts) != len(slots):
        raise refuse(
            f"The edit holds {counted(len(texts), 'text')} but the batch adds or replaces {len(slots)}; give one text "
            "per add or replace, in order, separated by a line holding only '§'."
        )
    edited_ops = list(operations)
    for index, text in zip(slots, texts, strict=True):
        edited_ops[index] = {**{k: v for k, v in operations[index].items() if k != "new_text"}, "content": text}
    return edited_ops


def batch(entries: list[str], operations: list[Any], limit: int, target: str) -> Outcome:
    """Apply every operation to a working copy, all or nothing, checking the budget at the end."""
    try:
        return _batch(entries, operations, limit, target)
    except Refusal as refusal:
        wrapped = refuse(refusal.result["error"] + BATCH_SUFFIX, counts=True, usage=Usage.of(entries, limit).short)
        if isinstance(refusal, StalePin):  # (still a stale pin, whoever words it)
            wrapped = StalePin(refusal.entry, wrapped.result, counts=True)
        raise wrapped from refusal


def _batch(entries: list[str], operations: list[Any], limit: int, target: str) -> Outcome:
    work = list(entries)
    changes: list[Change] = []
    replaced: dict[str, str] = {}
    removed: dict[str, str] = {}
    pins: dict[int, str] = {}
    for i, raw_op in enumerate(operations, 1):
        op = raw_op if isinstance(raw_op, dict) else {}
        action = op.get("action")
        content, old_text = op_text(op, "content"), op_text(op, "old_text")
        pin = op.get("matched_entry") if isinstance(op.get("matched_entry"), str) else None
        if action == "add":
            if not content:
                raise refuse(f"Operation {i} (add): content is required.")
            if content not in work:
                work.append(content)
                changes.append(Change("add", None, content))
            continue
        if action not in ("replace", "remove"):
            raise refuse(f"Operation {i} ({action or 'unknown'}): unknown action. Use add, replace, or remove.")
        if not old_text and pin is None:
            raise refuse(f"Operation {i} ({action}): old_text is required.")
        if action == "replace" and not content:
            raise refuse(f"Operation {i} (replace): content is required (use action='remove' to delete).")
        index = _pinned(work, pin) if pin is not None else _batch_locate(work, old_text, action, i)
        old = work[index]
        pins[i] = old
        if action == "replace":
            work[index] = content
            replaced[str(i)] = old
            if content != old:
                changes.append(Change("replace", old, content))
        else:
            # its neighbours in the file as it was (as for an outside edit): removals of one batch then come
            # back in their order undone either way, not only newest first
            where, at = (entries, entries.index(old)) if old in entries else (work, index)
            changes.append(Change("remove", old, None, index, preceding(where, at), succeeding(where, at)))
            del work[index]
            removed[str(i)] = old
    _refuse_twice(entries, work, "After these operations: ")
    if entries and not work:
        file_name = FILE_NAMES[target]
        raise refuse(
            f"Refusing to empty {file_name}: this batch would remove every entry from a previously "
            "non-empty store. Keep at least one entry — merge overlapping entries into a shorter one "
            "instead of removing the last one. To delete the final entry deliberately, use single "
            "remove() calls."
        )
    total = size_of(work)
    if total > limit:
        raise refuse(
            f"After applying all {len(operations)} operations, memory would be at {total:,}/{limit:,} "
            "chars -- over the limit. Remove or shorten more entries in the same batch, then retry."
        )
    extras: dict[str, Any] = {}
    if replaced:
        extras["replaced_entries"] = replaced
    if removed:
        extras["removed_entries"] = removed
    # (Hermes 0.19.0's memory tool says it so: the agent reads the same result from either)
    return Outcome(work, f"Applied {len(operations)} operation(s).", changes, extras, pins)


def _batch_locate(work: list[str], old_text: str, action: str, i: int) -> int:
    found = _matches(work, old_text)
    if not found:
        raise refuse(f"Operation {i} ({action}): no entry matched '{old_text}'.")
    if len({work[j] for j in found}) > 1:
        raise refuse(f"Operation {i} ({action}): '{old_text}' matched multiple distinct entries -- be more specific.")
    return found[0]
