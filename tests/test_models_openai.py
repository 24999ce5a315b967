"""The openai backend against a real HTTP server on 127.0.0.1 speaking chat-completions."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from engine.models import make_model
from engine.models.base import ModelError
from engine.models.openai import OpenAIModel
from engine.runner import AgentSession


class FakeEndpoint:
    """Answers POST /v1/chat/completions from a queue of (status, body, headers); records every request."""

    def __init__(self):
        self.replies: list[tuple[int, dict, dict]] = []
        self.requests: list[dict] = []
        self.delay = threading.Event()  # set: answer at once; clear: hang until the client gives up
        self.holds: dict[int, threading.Event] = {}  # request number (from 0): answered once that event is set
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                endpoint.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": json.loads(self.rfile.read(length))}
                )
                hold = endpoint.holds.get(len(endpoint.requests) - 1)
                if hold is not None:
                    hold.wait()
                else:
                    endpoint.delay.wait(1.0)
                status, body, headers = endpoint.replies.pop(0) if endpoint.replies else (500, {"error": "empty"}, {})
                raw = isinstance(body, str)  # a server-sent event stream, already formatted
                data = body.encode() if raw else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/event-stream" if raw else "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (the timeout test): nothing to answer

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.delay.set()

    def answer(self, content="", tool_calls=None, usage=None, status=200, headers=None):
        message = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = [
                {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                for cid, name, args in tool_calls
            ]
        body = {
            "id": "x",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        }
        if usage:
            body["usage"] = usage
        self.replies.append((status, body, headers or {}))

    def stream(self, *chunks):
        """Answer with server-sent events: each chunk is a choices[0].delta (or a usage-only chunk)."""
        events = [
            {
                "choices": [] if "usage" in c else [{"index": 0, "delta": c}],
                **({"usage": c["usage"]} if "usage" in c else {}),
            }
            for c in chunks
        ]
        self.replies.append((200, "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n", {}))

    def fail(self, status, message, headers=None):
        self.replies.append((status, {"error": {"message": message}}, headers or {}))

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint():
    server = FakeEndpoint()
    yield server
    server.close()


def test_tool_calls_round_trip_through_a_session(home, endpoint, monkeypatch):
    monkeypatch.setenv("WB_TEST_KEY", "sk-test-123")
    endpoint.answer(
        tool_calls=[("call_a", "memory", {"action": "add", "target": "user", "content": "User prefers tabs."})]
    )
    endpoint.answer("Saved.", usage={"prompt_tokens": 900, "completion_tokens": 5})
    model = OpenAIModel(base_url=endpoint.base_url, model="test-model", api_key_env="WB_TEST_KEY")
    session = AgentSession(home, model)
    result = session.run_turn("remember I prefer tabs")

    assert result.status == "done" and result.assistant == "Saved."
    assert home.memory.entries("user") == ["User prefers tabs."]
    first, second = endpoint.requests
    assert first["path"] == "/v1/chat/completions"
    assert first["headers"]["Authorization"] == "Bearer sk-test-123"
    assert first["body"]["model"] == "test-model"
    assert {t["function"]["name"] for t in first["body"]["tools"]} >= {"memory", "session_search", "skill_view"}
    assert first["body"]["messages"][0]["role"] == "system"
    sent = second["body"]["messages"]
    assert sent[-2]["tool_calls"][0]["id"] == "call_a"
    assert sent[-1]["role"] == "tool" and sent[-1]["tool_call_id"] == "call_a"
    assert json.loads(sent[-1]["content"])["success"] is True
    assert "tool_name" not in sent[-1]  # workbench-only keys never go on the wire
    stored = home.archive.messages(session.id)
    assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert session.last_usage == (900, 3)
    row = home.archive.get_session(session.id)
    assert (row.input_tokens, row.output_tokens) == (900, 5)  # what the endpoint reported, and only that


def test_429_then_success_is_retried_with_backoff(endpoint):
    slept = []
    endpoint.fail(429, "slow down", headers={"Retry-After": "2"})
    endpoint.fail(503, "busy")
    endpoint.answer("hello")
    model = OpenAIModel(base_url=endpoint.base_url, model="m", api_key_env="", backoff=0.5, sleep=slept.append)
    reply = model.complete([{"role": "user", "content": "hi"}], [])
    assert reply.content == "hello"
    assert slept == [2.0, 1.0]  # Retry-After honoured, then exponential backoff (0.5 * 2**1)
    assert len(endpoint.requests) == 3
    assert "Authorization" not in endpoint.requests[0]["headers"]


def test_retries_run_out_with_a_clear_error(endpoint):
    for _ in range(3):
        endpoint.fail(500, "internal")
    model = OpenAIModel(base_url=endpoint.base_url, model="m", max_retries=2, sleep=lambda s: None)
    with pytest.raises(ModelError, match="answered 500: internal"):
        model.complete([{"role": "user", "content": "hi"}], [])


def test_401_fails_clearly_and_names_the_variable(endpoint, monkeypatch):
    monkeypatch.delenv("WB_MISSING_KEY", raising=False)
    endpoint.fail(401, "invalid api key")
    model = OpenAIModel(base_url=endpoint.base_url, model="m", api_key_env="WB_MISSING_KEY", sleep=lambda s: None)
    with pytest.raises(ModelError) as info:
        model.complete([{"role": "user", "content": "hi"}], [])
    assert "401" in info.value.message and "$WB_MISSING_KEY is not set" in info.value.message
    assert len(endpoint.requests) == 1  # auth failures are not retried


def test_401_in_a_session_is_an_error_turn_that_keeps_the_user_message(home, endpoint, monkeypatch):
    monkeypatch.setenv("WB_TEST_KEY", "sk-secret-value")
    endpoint.fail(401, "bad key")
    session = AgentSession(home, OpenAIModel(base_url=endpoint.base_url, model="m", api_key_env="WB_TEST_KEY"))
    result = session.run_turn("hello there")
    assert result.status == "error" and "401" in result.error
    assert [m.text for m in home.archive.messages(session.id)] == ["hello there"]
    assert "sk-secret-value" not in result.error
    for path in (home.state_db_path, home.workbench_db_path):
        assert b"sk-secret-value" not in path.read_bytes()


def test_a_silent_endpoint_times_out_after_retries(endpoint):
    endpoint.delay.clear()
    slept = []
    model = OpenAIModel(base_url=endpoint.base_url, model="m", timeout=0.2, max_retries=1, sleep=slept.append)
    with pytest.raises(ModelError, match="did not answer in time"):
        model.complete([{"role": "user", "content": "hi"}], [])
    assert slept == [1.0]  # one retry after a timeout, then the clear error
    endpoint.delay.set()


def test_dead_port_fails_clearly():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = OpenAIModel(base_url=f"http://127.0.0.1:{port}/v1", model="m", timeout=2)
    with pytest.raises(ModelError, match=r"Cannot connect to the model endpoint http://127.0.0.1:\d+/v1"):
        model.complete([{"role": "user", "content": "hi"}], [])


@pytest.mark.parametrize("url", ["localhost:11434/v1", "notaurl", "http://", "http://[::1", "ftp://host/v1"])
def test_an_endpoint_that_is_not_an_http_url_is_refused_before_any_request(url):
    with pytest.raises(ModelError, match="is not an http\\(s\\) URL"):
        OpenAIModel(base_url=url, model="m")


def test_malformed_tool_arguments_go_back_to_the_model(home, endpoint):
    endpoint.replies.append(
        (
            200,
            {
                "choices": [
                    {
                        "message": {
                            "role": "assistant",
                            "content": "",
                            "tool_calls": [
                                {
                                    "id": "c1",
                                    "type": "function",
                                    "function": {"name": "memory", "arguments": "{not json"},
                                }
                            ],
                        }
                    }
                ]
            },
            {},
        )
    )
    endpoint.answer("ok")
    session = AgentSession(home, OpenAIModel(base_url=endpoint.base_url, model="m", api_key_env=""))
    result = session.run_turn("save something")
    assert result.status == "done"
    assert "not a JSON object" in result.tool_calls[0]["result"]["error"]
    assert endpoint.requests[1]["body"]["messages"][-2]["tool_calls"][0]["function"]["arguments"] == "{not json"


def test_config_and_flags_choose_the_endpoint(home, monkeypatch):
    monkeypatch.delenv("MY_KEY", raising=False)
    home.config_path.write_text(
        "model:\n  backend: openai\n  base_url: http://127.0.0.1:9/v1\n  name: from-config\n  api_key_env: MY_KEY\n",
        encoding="utf-8",
    )
    home.reload_config()
    with pytest.raises(ModelError, match=r"\$MY_KEY is not set, and model.api_key_env in config.yaml names it"):
        make_model(home)  # (as the TUI's Run screen makes it: said there, nothing run)
    monkeypatch.setenv("MY_KEY", "sk-1")
    model = make_model(home)
    assert (model.base_url, model.name, model.api_key_env) == ("http://127.0.0.1:9/v1", "from-config", "MY_KEY")
    flagged = make_model(home, "openai", base_url="http://localhost:11434/v1/", model_name="llama3")
    assert (flagged.base_url, flagged.name) == ("http://localhost:11434/v1", "llama3")
    home.config_path.write_text("model:\n  backend: openai\n", encoding="utf-8")
    home.reload_config()
    with pytest.raises(ModelError, match="model.base_url"):
        make_model(home)


def test_streamed_answers_arrive_as_scrubbed_deltas(home, endpoint):
    endpoint.stream(
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "index": 0,
                    "id": "s1",
                    "type": "function",
                    "function": {"name": "memory", "arguments": '{"action": "add", '},
                }
            ],
        },
        {"tool_calls": [{"index": 0, "function": {"arguments": '"target": "user", "content": "User likes tea."}'}}]},
    )
    endpoint.stream(
        {"content": "Saved. "},
        {"content": "Recall:\n<memory-"},
        {"content": "context>\nsecret\n</memory-context>"},
        {"content": "\nDone."},
        {"usage": {"prompt_tokens": 1200, "completion_tokens": 9}},
    )
    seen = []
    model = make_model(home, "openai", base_url=endpoint.base_url, model_name="m", api_key_env="", stream=True)
    session = AgentSession(home, model, on_event=seen.append)
    result = session.run_turn("remember I like tea")
    assert endpoint.requests[0]["body"]["stream"] is True
    assert home.memory.entries("user") == ["User likes tea."]  # tool-call arguments joined across chunks
    deltas = "".join(e.data["text"] for e in seen if e.kind == "assistant_delta")
    assert deltas == "Saved. Recall:\n\nDone."  # the fenced span never reached the screen
    assert result.assistant == "Saved. Recall:\n\nDone."  # nor the stored answer
    assert session.last_usage == (1200, 3)


def test_a_cancel_stops_reading_a_streamed_answer(home, endpoint):
    """esc while the stream is on its way: no more of it is shown, and neither its text nor its calls are kept."""
    endpoint.holds[0] = threading.Event()
    endpoint.stream(
        {"content": "Saving it "},
        {"tool_calls": [{"index": 0, "id": "s1", "type": "function", "function": {"name": "skills_list"}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]},
    )
    seen = []
    model = make_model(home, "openai", base_url=endpoint.base_url, model_name="m", api_key_env="", stream=True)
    session = AgentSession(home, model, on_event=seen.append)
    box = {}
    worker = threading.Thread(target=lambda: box.setdefault("result", session.run_turn("list my skills")))
    worker.start()
    while not endpoint.requests:  # the request is on its way; its answer waits for the hold
        worker.join(0.01)
    session.cancel()
    endpoint.holds[0].set()
    worker.join(5)
    assert box["result"].status == "cancelled"
    assert [e for e in seen if e.kind in ("assistant_delta", "tool_called")] == []
    assert [m.role for m in home.archive.messages(session.id)] == ["user"]


def _left_call(session, endpoint) -> threading.Thread:
    """A turn started and esc pressed once its model call reached ``endpoint``: the thread of the call the
    turn left (a model call another test left may still be ending, so it is the one that came since)."""
    others = set(threading.enumerate())
    turn = threading.Thread(target=session.run_turn, args=("think slowly",))
    turn.start()
    while len(endpoint.requests) < 1:
        turn.join(0.01)
    session.cancel()
    turn.join(5)
    [left] = [t for t in threading.enumerate() if t.name == "model-call" and t not in others]
    return left


def test_a_left_stream_shows_nothing_in_the_next_turn(home, endpoint):
    """esc left a streamed call still waiting for its answer; the next turn cleared the cancel, so the
    old stream's text, arriving then, was shown as the new turn's answer. What a left call reads is dropped."""
    endpoint.holds[0], endpoint.holds[1] = threading.Event(), threading.Event()
    endpoint.stream({"content": "Old answer."})
    endpoint.stream({"content": "New answer."})
    seen = []
    model = make_model(home, "openai", base_url=endpoint.base_url, model_name="m", api_key_env="", stream=True)
    session = AgentSession(home, model, on_event=seen.append)
    left = _left_call(session, endpoint)
    box = {}
    second = threading.Thread(target=lambda: box.setdefault("result", session.run_turn("and now?")))
    second.start()
    while len(endpoint.requests) < 2:
        second.join(0.01)
    endpoint.holds[0].set()  # the left call's answer arrives while the next turn waits for its own
    left.join(5)
    endpoint.holds[1].set()
    second.join(5)
    assert box["result"].assistant == "New answer."
    assert "".join(e.data["text"] for e in seen if e.kind == "assistant_delta") == "New answer."


def test_a_left_call_is_not_tried_again(home, endpoint):
    """esc left a model call, but the call went on through every retry it had (a 500, a 429, a timeout),
    spending the endpoint's tokens for a turn that had moved on (found in review)."""
    endpoint.holds[0] = threading.Event()
    endpoint.fail(500, "internal")  # (its first answer; every retry would get a 500 too)
    model = make_model(home, "openai", base_url=endpoint.base_url, model_name="m", api_key_env="")
    session = AgentSession(home, model)
    left = _left_call(session, endpoint)
    endpoint.holds[0].set()  # the 500 arrives after the turn left
    left.join(20)  # (retrying, it would try three times more, after 1, 2 and 4 s)
    assert not left.is_alive() and len(endpoint.requests) == 1
