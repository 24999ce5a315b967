"""Model backends: ``offline`` (default), ``scripted`` (scenario files) and ``openai``."""

from __future__ import annotations

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
    backend = (backend or config.str("model.backend") or "offline").lower()
    if backend == "offline":
        return OfflineModel()
    if backend == "scripted":
        return ScriptedModel()
    if backend == "openai":
        from .openai import OpenAIModel

        return OpenAIModel(
            base_url=base_url or config.str("model.base_url"),
            model=model_name or config.str("model.name"),
            api_key_env=api_key_env if api_key_env is not None else config.str("model.api_key_env"),
            timeout=config.seconds("model.timeout"),
            max_retries=config.int("model.max_retries"),
            stream=config.bool("model.stream") if stream is None else stream,
        )
    raise ModelError(f"Unknown model {backend!r}. Use one of: {', '.join(BACKENDS)}.")


def make_auxiliary_model(home, task: str) -> Model | None:
    """The model ``auxiliary.<task>.backend`` names (offline or openai, with its own model, base_url,
    api_key_env and timeout), or None when the key is empty (the task then runs without a model)."""
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
            api_key_env=config.str(f"auxiliary.{task}.api_key_env"),
            timeout=config.seconds(f"auxiliary.{task}.timeout"),
            max_retries=0,
        )
    raise ModelError(f"auxiliary.{task}.backend must be offline or openai (or empty for none), not {backend!r}.")


__all__ = [
    "BACKENDS",
    "Model",
    "ModelError",
    "ModelReply",
    "OfflineModel",
    "ScriptedModel",
    "ToolCall",
    "make_auxiliary_model",
    "make_model",
]
