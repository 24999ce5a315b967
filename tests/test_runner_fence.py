"""The <memory-context> fence: wrapper, sanitiser, streaming scrubber, provider manager."""

from __future__ import annotations

import threading

from engine.providers.base import MemoryProvider
from engine.providers.fence import SYSTEM_NOTE, StreamingContextScrubber, build_memory_context_block, sanitize_context
from engine.providers.manager import MemoryManager


def test_block_wraps_recall_exactly():
    block = build_memory_context_block("- user likes tea")
    assert block == f"<memory-context>\n{SYSTEM_NOTE}\n\n- user likes tea\n</memory-context>"
    assert "\u2014 this is" in SYSTEM_NOTE
    assert build_memory_context_block("   \n") == ""


def test_prewrapped_recall_is_stripped_before_wrapping():
    block = build_memory_context_block("<memory-context>old</memory-context>fresh")
    assert block.count("<memory-context>") == 1 and "old" not in block and "fresh" in block


def test_sanitize_removes_blocks_notes_and_stray_tags():
    text = f"hello\n\n<Memory-Context>\n{SYSTEM_NOTE}\n\nsecret\n</memory-context> bye </ memory-context >"
    assert sanitize_context(text) == "hello\n\n bye "
    assert sanitize_context(f"{SYSTEM_NOTE} tail") == "tail"


def _scrub(chunks: list[str]) -> str:
    scrubber = StreamingContextScrubber()
    return "".join(scrubber.feed(c) for c in chunks) + scrubber.flush()


def test_scrubber_drops_block_spans_split_across_chunks():
    stream = "Answer first.\n<memory-context>\nrecalled stuff\n</memory-context>\nAnd after."
    assert _scrub([stream]) == "Answer first.\n\nAnd after."
    for size in (1, 2, 3, 5, 7, 11):
        chunks = [stream[i : i + size] for i in range(0, len(stream), size)]
        assert _scrub(chunks) == "Answer first.\n\nAnd after.", size


def test_scrubber_keeps_inline_mentions_of_the_tag():
    text = "The <memory-context> tag marks recall, as does `<memory-context>` inline."
    assert _scrub([text]) == text
    assert _scrub([text[:9], text[9:20], text[20:]]) == text


def test_scrubber_drops_an_unterminated_span_and_holds_a_bare_tag_until_decided():
    assert _scrub(["ok\n<memory-context>\nleak without end"]) == "ok\n"
    scrubber = StreamingContextScrubber()
    assert scrubber.feed("hi\n<memory-context>") == "hi\n"
    assert scrubber.feed(" is a tag") == "<memory-context> is a tag"
    assert scrubber.flush() == ""


class Recorder(MemoryProvider):
    name = "recorder"

    def __init__(self, recall="- fact", delay=0.0, fail=False):
        self.recall, self.delay, self.fail = recall, delay, fail
        self.writes = []

    def prefetch(self, query, *, session_id=""):
        if self.fail:
            raise RuntimeError("boom")
        threading.Event().wait(self.delay)
        return self.recall

    def tool_schemas(self):
        return [
            {"type": "function", "function": {"name": "rec_tool", "parameters": {"type": "object"}}},
            {"name": "memory", "parameters": {}},
        ]

    def handle_tool_call(self, name, args):
        raise ValueError("tool broke")

    def on_memory_write(self, action, target, content, metadata):
        self.writes.append((action, target, content, metadata.get("old_text")))


def test_manager_allows_one_external_provider_and_guards_every_call():
    manager = MemoryManager(prefetch_timeout=0.2)
    assert manager.add_provider(Recorder()) is True
    assert manager.add_provider(Recorder()) is False
    assert "only one external memory provider can run at a time" in manager.warnings[-1]
    assert [s["name"] for s in manager.tool_schemas()] == ["rec_tool"]  # core names refused
    assert manager.handle_tool_call("rec_tool", {}) == {
        "success": False,
        "error": "Memory tool 'rec_tool' failed: tool broke",
    }
    assert manager.recall_fence("the release plan", "s1").startswith("<memory-context>\n")
    assert manager.recall_fence("ok", "s1") == ""  # nothing to recall for an acknowledgement


def test_manager_prefetch_timeout_and_failure_fail_open():
    slow = MemoryManager(prefetch_timeout=0.05)
    slow.add_provider(Recorder(delay=0.5))
    assert slow.recall_fence("the release plan", "s") == ""
    assert slow.recall_fence("the release plan again", "s") == ""  # still stuck: skipped without a new thread
    broken = MemoryManager()
    broken.add_provider(Recorder(fail=True))
    assert broken.recall_fence("the release plan", "s") == ""
    assert "failed in prefetch" in broken.warnings[-1]


def test_only_committed_memory_writes_are_mirrored():
    manager = MemoryManager()
    provider = Recorder()
    manager.add_provider(provider)
    manager.notify_memory_write({"action": "add", "target": "user", "content": "A"}, {"success": True}, {})
    manager.notify_memory_write(
        {"action": "add", "target": "user", "content": "B"}, {"success": True, "staged": True}, {}
    )
    manager.notify_memory_write({"action": "add", "target": "user", "content": "C"}, {"success": False}, {})
    manager.notify_memory_write(
        {"target": "memory", "operations": [{"action": "remove", "old_text": "x"}, {"action": "add", "content": "D"}]},
        {"success": True},
        {},
    )
    assert manager.flush_pending(5)  # mirrored on the worker thread, in order
    assert provider.writes == [("add", "user", "A", None), ("remove", "memory", "", "x"), ("add", "memory", "D", None)]
    manager.shutdown()
