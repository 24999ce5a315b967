"""Any OpenAI-compatible chat-completions endpoint (OpenAI, OpenRouter, Ollama, llama.cpp, vLLM).

Settings come from config.yaml (``model.base_url``, ``model.name``, ``model.api_key_env``,
``model.timeout``, ``model.max_retries``) or from flags. The API key is read from the
environment variable named by ``model.api_key_env`` at request time and never stored,
logged or echoed. 429 and 5xx answers are retried with exponential backoff (honouring
``Retry-After``); 401/403 and connection failures raise a ``ModelError`` that says what to fix.
With ``model.stream`` on, answers arrive as server-sent chunks and the text is handed on
as it comes (the runner scrubs it and emits ``assistant_delta`` events).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from typing import Any

import httpx

from ..textsafety import quoted
from .base import ModelError, ModelReply, StreamingModel, ToolCall, caller_left, parse_arguments

RETRY_STATUSES = {408, 409, 429, 500, 502, 503, 504}
MAX_BACKOFF_S = 30.0
_API_KEYS = ("role", "content", "tool_calls", "tool_call_id")


def api_message(message: dict[str, Any]) -> dict[str, Any]:
    """The wire form of a stored/internal message: only the keys every compatible server accepts."""
    out = {k: message[k] for k in _API_KEYS if k in message and message[k] is not None}
    if out.get("role") == "assistant" and not out.get("tool_calls"):
        out.pop("tool_calls", None)
    out.setdefault("content", "")
    return out


class OpenAIModel(StreamingModel):
    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 1.0,
        stream: bool = False,
        sleep=time.sleep,
    ):
        if not base_url:
            raise ModelError(
                "No endpoint configured for the openai model. Set model.base_url in config.yaml (e.g. "
                "https://api.openai.com/v1, or http://localhost:11434/v1 for Ollama); `workbench run` also "
                "takes --base-url."
            )
        if not model:
            raise ModelError("No model name configured. Set model.name in config.yaml or pass --model-name.")
        _check_url(base_url)
        self.base_url = base_url.rstrip("/")
        self.name = model
        self.api_key_env = api_key_env
        self.max_retries = max(0, int(max_retries))
        self.stream = self.streams = stream
        self.backoff = backoff
        self._sleep = sleep
        self._client = httpx.Client(timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)))

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env, "") if self.api_key_env else ""
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        on_delta: Callable[[str], None] | None = None,
        force_tool: str | None = None,
    ) -> ModelReply:
        """``force_tool`` names the one tool the model must call (structured output, e.g. a consolidation plan)."""
        body: dict[str, Any] = {"model": self.name, "messages": [api_message(m) for m in messages]}
        if tools:
            body["tools"] = tools
            body["tool_choice"] = {"type": "function", "function": {"name": force_tool}} if force_tool else "auto"
        if self.stream and on_delta is not None:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
            return self._send(body, lambda response: _read_stream(response, on_delta, self.base_url))
        return self._send(body, self._read_json)

    def _send(self, body: dict[str, Any], read: Callable[[httpx.Response], ModelReply]) -> ModelReply:
        """POST with retries on timeouts, 429 and 5xx; ``read`` turns a 2xx response into a reply."""
        url = f"{self.base_url}/chat/completions"
        for attempt in range(self.max_retries + 1):
            if attempt and caller_left():  # (esc during the first try: the turn went on without this call)
                raise ModelError(f"The turn left its call to {self.base_url}; it is not tried again.")
            try:
                with self._client.stream("POST", url, json=body, headers=self._headers()) as response:
                    if response.status_code < 400:
                        return read(response)
                    response.read()
                    if response.status_code in RETRY_STATUSES and attempt < self.max_retries:
                        self._sleep(self._delay(attempt, response.headers.get("retry-after")))
                        continue
                    raise self._refusal(response)
            except httpx.TimeoutException:
                if attempt < self.max_retries:
                    self._sleep(self._delay(attempt, None))
                    continue
                raise ModelError(
                    f"The model endpoint {self.base_url} did not answer in time. Check that it is "
                    "running, or raise model.timeout.",
                    endpoint=self.base_url,
                ) from None
            except httpx.TransportError as exc:
                raise ModelError(
                    f"Cannot connect to the model endpoint {self.base_url} ({type(exc).__name__}: {exc}). "
                    "Check model.base_url (or --base-url) and that the server is running.",
                    endpoint=self.base_url,
                ) from exc
        raise AssertionError("unreachable")  # the loop always returns or raises

    def _refusal(self, response: httpx.Response) -> ModelError:
        if response.status_code in (401, 403):
            hint = (
                f"${self.api_key_env} is not set"
                if self.api_key_env and not os.environ.get(self.api_key_env)
                else f"check the key in ${self.api_key_env} and its permissions"
            )
            return ModelError(
                f"The model endpoint refused the request ({response.status_code} "
                f"{'unauthorized' if response.status_code == 401 else 'forbidden'}): {hint}.",
                status=response.status_code,
                endpoint=self.base_url,
            )
        return ModelError(
            f"The model endpoint answered {response.status_code}: {_error_text(response)}",
            status=response.status_code,
            endpoint=self.base_url,
        )

    def _read_json(self, response: httpx.Response) -> ModelReply:
        response.read()
        try:
            data = response.json()
        except ValueError:
            raise ModelError(
                f"The model endpoint {self.base_url} returned something that is not JSON. Is "
                "model.base_url the API root (usually ending in /v1)?",
                endpoint=self.base_url,
            ) from None
        try:
            message = data["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            raise ModelError(f"The model endpoint's answer has no choices[0].message: {str(data)[:200]}") from None
        calls = [_tool_call(n, call) for n, call in enumerate(message.get("tool_calls") or [])]
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else None
        return ModelReply(content=message.get("content") or "", tool_calls=calls, usage=usage)

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(float(retry_after), MAX_BACKOFF_S)
            except ValueError:
                pass
        return min(self.backoff * 2**attempt, MAX_BACKOFF_S)

    def close(self) -> None:
        self._client.close()


def _check_url(base_url: str) -> None:
    """Refuse an endpoint that could never be reached before any session is started."""
    try:
        url = httpx.URL(base_url)
        valid = url.scheme in ("http", "https") and bool(url.host)
    except (httpx.InvalidURL, ValueError, TypeError):
        valid = False
    if not valid:
        raise ModelError(
            f"model.base_url {quoted(base_url)} is not an http(s) URL. Use the API root with its scheme, e.g. "
            "https://api.openai.com/v1 or http://localhost:11434/v1.",
            endpoint=str(base_url),
        )


def _tool_call(n: int, call: dict[str, Any]) -> ToolCall:
    fn = call.get("function") or {}
    args, raw = parse_arguments(fn.get("arguments"))
    return ToolCall(str(call.get("id") or f"call_{n}"), str(fn.get("name") or ""), args, raw)


def _read_stream(response: httpx.Response, on_delta: Callable[[str], None], endpoint: str) -> ModelReply:
    """Server-sent chat-completion chunks: text goes to ``on_delta`` as it arrives, tool calls are joined up."""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    usage = None
    try:
        for line in response.iter_lines():
            if not line.startswith("data:"):
                continue
            payload = line[5:].strip()
            if payload == "[DONE]":
                break
            try:
                chunk = json.loads(payload)
            except (ValueError, RecursionError):
                raise ModelError(
                    f"The model endpoint {endpoint} sent a stream chunk that is not JSON: {payload[:120]}"
                ) from None
            usage = chunk.get("usage") or usage
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    text.append(delta["content"])
                    on_delta(delta["content"])
                for part in delta.get("tool_calls") or []:
                    slot = calls.setdefault(
                        int(part.get("index", len(calls))), {"function": {"name": "", "arguments": ""}}
                    )
                    slot["id"] = part.get("id") or slot.get("id")
                    fn = part.get("function") or {}
                    slot["function"]["name"] += fn.get("name") or ""
                    slot["function"]["arguments"] += fn.get("arguments") or ""
    except httpx.TransportError as exc:  # a stream cut mid-answer is not retried: part of it was shown already
        raise ModelError(f"The connection to {endpoint} broke in the middle of the answer ({exc}). Try again.") from exc
    return ModelReply(
        content="".join(text),
        tool_calls=[_tool_call(n, calls[n]) for n in sorted(calls)],
        usage=usage if isinstance(usage, dict) else None,
    )


def _error_text(response: httpx.Response) -> str:
    try:
        error = response.json().get("error")
        return str(error.get("message") if isinstance(error, dict) else error)[:300]
    except (ValueError, AttributeError):
        return response.text[:300]
