"""Model backends: ``offline`` (default), ``scripted`` (scenario files) and ``openai``."""

from __future__ import annotations

import os

from ..textsafety import quoted
from .base import Model, ModelError, ModelReply, ToolCall
from .offline import OfflineModel
from .scripted import ScriptedModel

BACKENDS = ("offline", "scripted", "openai")


def make_model(
    home,
    backend: str | None = None,
    *,
    base_url: str | None = None,
    model_name: str | None = None,
    api_key_env: str | None = None,
    stream: bool | None = None,
) -> Model:
    """The model named by ``backend`` (else config ``model.backend``), flags overriding config."""
    config = home.config
    backend = (backend or configured_backend(home)).lower()
    if backend == "offline":
        return OfflineModel()
    if backend == "scripted":
        return ScriptedModel()
    if backend == "openai":
        from .openai import OpenAIModel

        return OpenAIModel(
            base_url=base_url or config.str("model.base_url"),
            model=model_name or config.str("model.name"),
            api_key_env=(
                key_variable(api_key_env, "--api-key-env")
                if api_key_env is not None
                else configured_key_variable(config, "model.api_key_env")
            ),
            timeout=config.seconds("model.timeout"),
            max_retries=config.int("model.max_retries"),
            stream=config.bool("model.stream") if stream is None else stream,
        )
    raise ModelError(f"Unknown model {quoted(backend)}. Use one of: {', '.join(BACKENDS)}.")


def configured_backend(home) -> str:
    """The model a run uses when none is named: config's ``model.backend``, else ``offline``. The
    CLI and the Run screen's model menu both start from it (the menu once began at offline whatever
    config.yaml said)."""
    return home.config.str("model.backend").strip().lower() or "offline"


def key_variable(name: str, where: str) -> str:
    """``name``, the variable ``where`` names as holding the API key, refused when it is not set: a run
    went on without a key and said nothing. An empty name sends no key (a local server needs none)."""
    if name and not os.environ.get(name):
        raise ModelError(
            f"${name} is not set, and {where} names it as holding the API key. Set it, or make {where} "
            "empty for an endpoint that needs no key. Nothing was run."
        )
    return name


def configured_key_variable(config, key: str) -> str:
    """The variable config.yaml's ``key`` names, refused (``key_variable``) when config.yaml sets it and it
    is not set; the default may be unset (no key is sent)."""
    name = config.str(key)
    return key_variable(name, f"{key} in config.yaml") if config.is_set(key) else name


def make_auxiliary_model(home, task: str) -> Model | None:
    """The model ``auxiliary.<task>.backend`` names (offline or openai, with its own model, base_url,
    api_key_env and timeout), or None when the key is empty (the task then runs without a model).
    Refused (``ModelError``) as ``make_model`` refuses: a named key variable that is not set, say."""
    config = home.config
    backend = config.str(f"auxiliary.{task}.backend").strip().lower()
    if not backend:
        return None
    if backend == "offline":
        return OfflineModel()
    if backend == "openai":
        from .openai import OpenAIModel

        return OpenAIModel(
            base_url=config.str(f"auxiliary.{task}.base_url") or config.str("model.base_url"),
            model=config.str(f"auxiliary.{task}.model") or config.str("model.name"),
            api_key_env=configured_key_variable(config, f"auxiliary.{task}.api_key_env"),
            timeout=config.seconds(f"auxiliary.{task}.timeout"),
            max_retries=0,
        )
    raise ModelError(f"auxiliary.{task}.backend must be offline or openai (or empty for none), not {quoted(backend)}.")


__all__ = [
    "BACKENDS",
    "configured_backend",
    "key_variable",
    "Model",
    "ModelError",
    "ModelReply",
    "OfflineModel",
    "ScriptedModel",
    "ToolCall",
    "make_auxiliary_model",
    "make_model",
]
