"""Model providers that answer ``sampling/createMessage``, one module each, and ``create_message``.

Five kinds, picked by ``ModelConfig.provider``: ``openai`` and ``anthropic`` (hosted APIs, their own
modules), ``callable``, ``human`` and ``echo`` (``local``: they answer inside this kernel). Each
module defines its ``base.Provider``: how it answers and the rules ``ModelConfig`` checks for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...core.policy import current_policy
from . import anthropic, local, openai
from .base import Provider, SamplingContext, SamplingError, _redact

if TYPE_CHECKING:
    from ..router import ModelConfig

__all__ = ["PROVIDERS", "create_message"]


PROVIDERS: dict[str, Provider] = {
    p.name: p for p in (openai.PROVIDER, anthropic.PROVIDER, local.CALLABLE, local.HUMAN, local.ECHO)
}
"""Every provider by its name (``ModelConfig.provider``); a new one is a module here and one entry."""


async def create_message(config: ModelConfig, params: Any, ctx: SamplingContext) -> Any:
    """Answer ``params`` with the model ``config``; every failure is a ``SamplingError``."""
    provider = PROVIDERS.get(config.provider)
    if provider is None:
        raise SamplingError(f"unknown provider {config.provider!r}; expected one of {', '.join(PROVIDERS)}")
    if refused := current_policy().sampling_refusal(config.provider):  # the administrator's (core/policy.py)
        raise SamplingError(refused)
    try:
        return await provider.answer(config, params, ctx)
    except SamplingError:
        raise
    except Exception as exc:  # noqa: BLE001 - a provider bug must become an answer, not a dead flow
        raise SamplingError(_redact(f"{config.provider} failed: {type(exc).__name__}: {exc}", None)) from None
