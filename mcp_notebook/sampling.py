"""Sampling: ``sampling/createMessage`` answered by a configured model.

Providers are looked up by name; ``echo`` works offline and deterministically, ``callable`` runs a
Python function from the notebook. Keys never live here: providers read them from environment
variables named in the configuration.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["ModelConfig", "ModelRouter", "SamplingError"]


class SamplingError(Exception):
    """A provider failed; the server receives an error answer and the cell shows why."""


@dataclass
class ModelConfig:
    name: str
    provider: str = "echo"
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    function: Callable[..., Any] | None = None
    cost: float = 0.5
    speed: float = 0.5
    intelligence: float = 0.5


@dataclass
class ModelRouter:
    """Configured models and the default; picks one per request."""

    models: dict[str, ModelConfig] = field(default_factory=lambda: {"echo": ModelConfig("echo", "echo")})
    default: str = "echo"

    def add(self, config: ModelConfig) -> None:
        self.models[config.name] = config

    def use(self, name: str) -> None:
        if name not in self.models:
            raise KeyError(f"no model named {name!r} (configured: {', '.join(sorted(self.models))})")
        self.default = name

    def choose(self, params: Any) -> tuple[ModelConfig, str]:
        """The model for a request and why: a hint substring, else the default."""
        prefs = getattr(params, "model_preferences", None)
        for hint in (getattr(prefs, "hints", None) or []):
            wanted = (hint.name or "").lower()
            for config in self.models.values():
                if wanted and (wanted in config.name.lower() or wanted in (config.model or "").lower()):
                    return config, f"hint {hint.name!r}"
        return self.models[self.default], "default model"

    async def sample(self, params: Any) -> tuple[Any, str]:
        """Answer one request; returns the SDK result and a note saying which model answered."""
        from mcp.types import CreateMessageResult, TextContent

        config, why = self.choose(params)
        if config.provider == "echo":
            text = _last_user_text(params)
            reply = f"echo: {text}"[: max(1, int(params.max_tokens) * 4)]
            result = CreateMessageResult(role="assistant", content=TextContent(type="text", text=reply), model="echo", stop_reason="endTurn")
        elif config.provider == "callable" and config.function is not None:
            value = config.function(params)
            if inspect.isawaitable(value):
                value = await value
            if isinstance(value, str):
                value = CreateMessageResult(role="assistant", content=TextContent(type="text", text=value), model=config.name, stop_reason="endTurn")
            result = value
        else:
            raise SamplingError(f"provider {config.provider!r} of model {config.name!r} is not available")
        return result, f"{config.name} ({why})"


def _last_user_text(params: Any) -> str:
    for message in reversed(params.messages):
        blocks = message.content if isinstance(message.content, list) else [message.content]
        texts = [b.text for b in blocks if getattr(b, "type", None) == "text"]
        if message.role == "user" and texts:
            return " ".join(texts)
    return ""
