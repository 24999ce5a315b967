"""Any OpenAI-compatible chat-completions endpoint (OpenAI, OpenRouter, Ollama, llama.cpp, vLLM).

Settings come from config.yaml (``model.base_url``, ``model.name``, ``model.api_key_env``,
``model.timeout``, ``model.max_retries``) or from flags. The API key is read from the
environment variable named by ``model.api_key_env`` at request time and never stored,
logged or echoed. 429 and 5xx answers are retried with exponential backoff (honouring
``Retry-After``); 401/403 and connection failures raise a ``ModelError`` that says what to fix.
"""

from __future__ import annotations

import os
import time
from typing import Any

import httpx

from .base import Model, ModelError, ModelReply, ToolCall, parse_arguments

RETRY_STATUSES = {408, 409, 429, 500, 502, 503, 504}
MAX_BACKOFF_S = 30.0
_API_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")


def api_message(message: dict[str, Any]) -> dict[str, Any]:
    """The wire form of a stored/internal message (workbench-only keys dropped)."""
    out = {k: message[k] for k in _API_KEYS if k in message and message[k] is not None}
    if out.get("role") == "tool" and "name" not in out and message.get("tool_name"):
        out["name"] = message["tool_name"]
    if out.get("role") == "assistant" and not out.get("tool_calls"):
        out.pop("tool_calls", None)
    out.setdefault("content", "")
    return out


class OpenAIModel(Model):
    def __init__(self, *, base_url: str, model: str, api_key_env: str = "OPENAI_API_KEY", timeout: float = 60.0,
                 max_retries: int = 3, backoff: float = 1.0, sleep=time.sleep):
        if not base_url:
            raise ModelError("No endpoint configured for the openai model. Set model.base_url in config.yaml or pass "
                             "--base-url (e.g. https://api.openai.com/v1, http://localhost:11434/v1 for Ollama).")
        if not model:
            raise ModelError("No model name configured. Set model.name in config.yaml or pass --model-name.")
        self.base_url = base_url.rstrip("/")
        self.name = model
        self.api_key_env = api_key_env
        self.max_retries = max(0, int(max_retries))
        self.backoff = backoff
        self._sleep = sleep
        self._client = httpx.Client(timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)))

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env, "") if self.api_key_env else ""
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        body: dict[str, Any] = {"model": self.name, "messages": [api_message(m) for m in messages]}
        if tools:
            body["tools"] = tools
            body["tool_choice"] = "auto"
        return self._parse(self._post(body))

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        url = f"{self.base_url}/chat/completions"
        for attempt in range(self.max_retries + 1):
            try:
                response = self._client.post(url, json=body, headers=self._headers())
            except httpx.TimeoutException:
                if attempt < self.max_retries:
                    self._sleep(self._delay(attempt, None))
                    continue
                raise ModelError(f"The model endpoint {self.base_url} did not answer in time. Check that it is "
                                 "running, or raise model.timeout.", endpoint=self.base_url)
            except httpx.TransportError as exc:
                raise ModelError(f"Cannot connect to the model endpoint {self.base_url} ({type(exc).__name__}: {exc}). "
                                 "Check model.base_url (or --base-url) and that the server is running.",
                                 endpoint=self.base_url)
            if response.status_code in (401, 403):
                hint = (f"${self.api_key_env} is not set" if self.api_key_env and not os.environ.get(self.api_key_env)
                        else f"check the key in ${self.api_key_env} and its permissions")
                raise ModelError(f"The model endpoint refused the request ({response.status_code} "
                                 f"{'unauthorized' if response.status_code == 401 else 'forbidden'}): {hint}.",
                                 status=response.status_code, endpoint=self.base_url)
            if response.status_code in RETRY_STATUSES and attempt < self.max_retries:
                self._sleep(self._delay(attempt, response.headers.get("retry-after")))
                continue
            if response.status_code >= 400:
                raise ModelError(f"The model endpoint answered {response.status_code}: {_error_text(response)}",
                                 status=response.status_code, endpoint=self.base_url)
            try:
                return response.json()
            except ValueError:
                raise ModelError(f"The model endpoint {self.base_url} returned something that is not JSON. Is "
                                 "model.base_url the API root (usually ending in /v1)?", endpoint=self.base_url)
        raise AssertionError("unreachable")  # the loop always returns or raises

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(float(retry_after), MAX_BACKOFF_S)
            except ValueError:
                pass
        return min(self.backoff * 2**attempt, MAX_BACKOFF_S)

    def _parse(self, data: dict[str, Any]) -> ModelReply:
        try:
            message = data["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            raise ModelError(f"The model endpoint's answer has no choices[0].message: {str(data)[:200]}")
        calls = []
        for n, call in enumerate(message.get("tool_calls") or []):
            fn = call.get("function") or {}
            args, raw = parse_arguments(fn.get("arguments"))
            calls.append(ToolCall(str(call.get("id") or f"call_{n}"), str(fn.get("name") or ""), args, raw))
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else None
        return ModelReply(content=message.get("content") or "", tool_calls=calls, usage=usage)

    def close(self) -> None:
        self._client.close()


def _error_text(response: httpx.Response) -> str:
    try:
        error = response.json().get("error")
        return str(error.get("message") if isinstance(error, dict) else error)[:300]
    except (ValueError, AttributeError):
        return response.text[:300]
