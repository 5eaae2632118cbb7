"""What every model provider shares: the ``Provider`` record, the errors, the request context, HTTP and limits.

HTTP goes through ``httpx2`` (the client the SDK already depends on). API keys are read from the
environment variable the configuration names, at call time, and never appear in a message: every
error text is passed through ``_redact`` before it reaches the cell or the server.

A provider's own module (``openai``, ``anthropic``, ``local``) maps requests and results and
defines its ``Provider``; ``providers/__init__.py`` lists them.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlparse

from ...core.policy import current_policy

if TYPE_CHECKING:
    from ..router import ModelConfig

__all__ = [
    "Answer",
    "Provider",
    "SamplingContext",
    "SamplingDeclined",
    "SamplingError",
    "build_result",
    "limit_text",
    "wait_for_user",
    "wants_tools",
]

CHARS_PER_TOKEN = 4  # local providers cannot count tokens; ~4 characters per token is the usual rule of thumb
ERROR_BODY_LIMIT = 300  # characters of a provider's error body shown in the cell


class SamplingError(Exception):
    """A provider failed; the server receives an error answer and the cell shows why."""


class SamplingDeclined(SamplingError):
    """The user declined (at review, or in the ``human`` form); the server is told so."""


@dataclass
class SamplingContext:
    """Who is asking: the flow (for notes), the request key, and the interactive UI (``None`` headless)."""

    flow: Any = None
    key: str = ""
    ui: Any = None


class Answer(Protocol):
    """How a kind of model answers: ``params`` with the model ``config`` describes, or a ``SamplingError``."""

    def __call__(self, config: ModelConfig, params: Any, ctx: SamplingContext) -> Awaitable[Any]: ...


@dataclass(frozen=True)
class Provider:
    """One kind of model and its rules, owned by its module: what ``ModelConfig`` checks, whether requests leave the machine.

    ``hosted``: a hosted API (requests leave the machine unless its base URL is a loopback
    address, so the ``remote`` review policy asks); ``key_env``: the variable the official
    endpoint's key is read from when the user names none; ``model_example``: a MODEL is required
    (shown in the error when it is missing); ``check``: any rule of its own; ``described``: what
    ``%mcp model --help`` says of it.
    """

    name: str
    answer: Answer
    hosted: bool = False
    key_env: str | None = None
    model_example: str | None = None
    check: Callable[[ModelConfig], None] | None = None
    described: str = ""

    def configure(self, config: ModelConfig) -> None:
        """Check ``config`` for this provider (``ValueError`` says what is wrong) and fill in its default key variable."""
        if self.model_example is not None and not config.model:
            raise ValueError(f"the {self.name} provider needs a MODEL (for example {self.model_example})")
        if self.key_env is not None and config.api_key_env is None and config.base_url is None:
            config.api_key_env = self.key_env  # the official endpoint needs a key
        if self.check is not None:
            self.check(config)


# ---------------------------------------------------------------------- helpers shared by all kinds
USER_POLL = 0.5  # seconds between checks that the flow a panel belongs to is still running


async def wait_for_user(flow: Any, awaitable: Awaitable[Any]) -> Any:
    """Await a panel's answer, but stop when the flow ends first.

    A 2025 server's back-channel request is answered outside the flow's own task, so cancelling
    the flow (its Cancel button, a timeout) would otherwise leave this waiting for good.
    """
    task = asyncio.ensure_future(awaitable)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=USER_POLL)
            if done:
                return task.result()
            if flow is not None and getattr(flow, "finished", False):
                raise SamplingDeclined("the call ended before you answered")
    finally:
        if not task.done():
            task.cancel()


def wants_tools(params: Any) -> bool:
    """A tools-mode request (its answer may carry ``tool_use`` blocks): ``tools`` or ``tool_choice`` set."""
    return params.tools is not None or params.tool_choice is not None


def build_result(blocks: list[Any], model: str, stop_reason: str | None, params: Any) -> Any:
    """The SDK result for ``blocks``: ``CreateMessageResultWithTools`` for tools-mode requests.

    A plain request takes exactly one text, image or audio block, so several text blocks are joined.
    """
    from mcp.types import CreateMessageResult, CreateMessageResultWithTools, TextContent

    if wants_tools(params):
        content: Any = blocks[0] if len(blocks) == 1 else blocks
        return CreateMessageResultWithTools(role="assistant", content=content, model=model, stop_reason=stop_reason)
    if any(b.type in ("tool_use", "tool_result") for b in blocks):
        raise SamplingError("the model called a tool although the request offered none")
    if len(blocks) != 1:
        texts = [b.text for b in blocks if b.type == "text"]
        if len(texts) != len(blocks) or not texts:
            raise SamplingError(
                f"the model answered {len(blocks)} content blocks; a sampling reply without tools holds one"
            )
        blocks = [TextContent(type="text", text="".join(texts))]
    return CreateMessageResult(role="assistant", content=blocks[0], model=model, stop_reason=stop_reason)


def limit_text(text: str, params: Any) -> tuple[str, str]:
    """Cut ``text`` at the first stop sequence and at ``maxTokens`` (estimated); returns text and stop reason."""
    reason = "endTurn"
    cuts = [(text.find(s), s) for s in (params.stop_sequences or []) if s and s in text]
    if cuts:
        text = text[: min(cuts)[0]]
        reason = "stopSequence"
    budget = max(1, int(params.max_tokens)) * CHARS_PER_TOKEN
    if len(text) > budget:
        text, reason = text[:budget], "maxTokens"
    return text, reason


def _limit_result(result: Any, params: Any) -> Any:
    """Apply ``limit_text`` to the text blocks of a locally made result (``maxTokens`` is always respected)."""
    blocks = result.content if isinstance(result.content, list) else [result.content]
    reason = result.stop_reason
    changed = []
    for block in blocks:
        if block.type == "text":
            text, why = limit_text(block.text, params)
            if text != block.text:
                block = block.model_copy(update={"text": text})
                reason = why
        changed.append(block)
    return result.model_copy(
        update={"content": changed if isinstance(result.content, list) else changed[0], "stop_reason": reason}
    )


def _redact(text: str, key: str | None) -> str:
    """Remove a key (and anything shaped like one) from text that will be shown or sent."""
    if key:
        text = text.replace(key, "***")
    return re.sub(r"\b(sk-(?:ant-)?)[A-Za-z0-9*_\-]{6,}", r"\1***", text)


def _key(config: ModelConfig) -> str | None:
    """The API key from the environment variable the configuration names (``None``: send none).

    A name the administrator's ``denied_env`` lists is refused before it is read, as every other
    variable read into a header is (wire/registry, wire/configs, auth/sdk_provider).
    """
    if not config.api_key_env:
        return None
    if refused := current_policy().env_refusal(config.api_key_env, "read into a model's API key header"):
        raise SamplingError(refused)  # the administrator's (core/policy.py): a denied name is never read nor sent
    value = os.environ.get(config.api_key_env)
    if not value:
        raise SamplingError(
            f"model {config.name!r} reads its API key from the environment variable {config.api_key_env}, which is not set. "
            f"Set it in the kernel's environment (os.environ[{config.api_key_env!r}] = ...) or re-add the model."
        )
    return value


async def _post(
    config: ModelConfig, url: str, headers: dict[str, str], payload: dict[str, Any], key: str | None
) -> dict[str, Any]:
    """POST JSON, turning every transport and HTTP failure into a ``SamplingError`` with a plain reason."""
    import httpx2

    host = urlparse(url).netloc or url
    if refused := current_policy().sampling_refusal(config.provider, url):  # the host, before anything is sent
        raise SamplingError(refused)
    try:
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(config.timeout), trust_env=False) as client:
            response = await client.post(url, json=payload, headers=headers)
    except httpx2.TimeoutException:
        raise SamplingError(f"{config.provider} at {host} did not answer within {config.timeout:g} s") from None
    except httpx2.RequestError as exc:
        raise SamplingError(
            _redact(f"could not reach {config.provider} at {host}: {exc or type(exc).__name__}", key)
        ) from None
    if response.status_code >= 400:
        raise SamplingError(
            _redact(f"{config.provider} at {host} answered HTTP {response.status_code}: {_error_text(response)}", key)
        )
    try:
        body = response.json()
    except ValueError:
        raise SamplingError(
            _redact(
                f"{config.provider} at {host} sent a reply that is not JSON: {response.text[:ERROR_BODY_LIMIT]!r}", key
            )
        ) from None
    if not isinstance(body, dict):
        raise SamplingError(
            f"{config.provider} at {host} sent a malformed reply (a JSON {type(body).__name__}, not an object)"
        )
    return body


def _error_text(response: Any) -> str:
    """The provider's own error message: OpenAI ``{"error": {"message"}}``, Anthropic ``{"error": {"type", "message"}}``."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:ERROR_BODY_LIMIT].strip() or response.reason_phrase
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("message"):
        kind = error.get("type") or error.get("code")
        return f"{error['message']}" + (f" ({kind})" if kind else "")
    if isinstance(error, str):
        return error
    return json.dumps(body)[:ERROR_BODY_LIMIT]


def _malformed(config: ModelConfig, what: str) -> SamplingError:
    return SamplingError(f"{config.provider} sent a malformed reply: {what}")
