"""Model providers that answer ``sampling/createMessage``: payload mapping, HTTP, result parsing.

Five kinds, picked by ``ModelConfig.provider``:

* ``openai``: any OpenAI-compatible ``/chat/completions`` endpoint (OpenAI, Ollama, vLLM,
  llama.cpp, LM Studio) through ``--base-url``;
* ``anthropic``: the Anthropic Messages API (``/v1/messages``);
* ``callable``: a Python function from the notebook, sync or async, given the request params;
* ``human``: the user types the reply in a form (interactive runs only);
* ``echo``: offline and deterministic; says what it was asked.

HTTP goes through ``httpx2`` (the client the SDK already depends on). API keys are read from the
environment variable the configuration names, at call time, and never appear in a message: every
error text is passed through ``_redact`` before it reaches the cell or the server.

The mapping functions (``openai_payload`` / ``openai_result``, ``anthropic_payload`` /
``anthropic_result``) are pure, so the exact wire shapes are easy to read and to test.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import re
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlparse

from ..core.text import content_text

if TYPE_CHECKING:
    from .router import ModelConfig

__all__ = [
    "PROVIDERS",
    "SamplingContext",
    "SamplingDeclined",
    "SamplingError",
    "anthropic_payload",
    "anthropic_result",
    "create_message",
    "openai_payload",
    "openai_result",
]

OPENAI_URL = "https://api.openai.com/v1"
ANTHROPIC_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
CHARS_PER_TOKEN = 4  # local providers cannot count tokens; ~4 characters per token is the usual rule of thumb
ERROR_BODY_LIMIT = 300  # characters of a provider's error body shown in the cell

# OpenAI's chat API takes audio input as wav or mp3 only.
_OPENAI_AUDIO = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}
_OPENAI_STOP = {"stop": "endTurn", "length": "maxTokens", "tool_calls": "toolUse", "function_call": "toolUse"}
_ANTHROPIC_STOP = {"end_turn": "endTurn", "max_tokens": "maxTokens", "stop_sequence": "stopSequence", "tool_use": "toolUse"}
_ANTHROPIC_TOOL_CHOICE = {"auto": "auto", "required": "any", "none": "none"}


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


class Provider(Protocol):
    """One kind of model: answer ``params`` with the model ``config`` describes, or raise ``SamplingError``."""

    def __call__(self, config: ModelConfig, params: Any, ctx: SamplingContext) -> Awaitable[Any]: ...


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
            raise SamplingError(f"the model answered {len(blocks)} content blocks; a sampling reply without tools holds one")
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
    return result.model_copy(update={"content": changed if isinstance(result.content, list) else changed[0], "stop_reason": reason})


def _redact(text: str, key: str | None) -> str:
    """Remove a key (and anything shaped like one) from text that will be shown or sent."""
    if key:
        text = text.replace(key, "***")
    return re.sub(r"\b(sk-(?:ant-)?)[A-Za-z0-9*_\-]{6,}", r"\1***", text)


def _key(config: ModelConfig) -> str | None:
    """The API key from the environment variable the configuration names (``None``: send none)."""
    if not config.api_key_env:
        return None
    value = os.environ.get(config.api_key_env)
    if not value:
        raise SamplingError(
            f"model {config.name!r} reads its API key from the environment variable {config.api_key_env}, which is not set. "
            f"Set it in the kernel's environment (os.environ[{config.api_key_env!r}] = ...) or re-add the model."
        )
    return value


async def _post(config: ModelConfig, url: str, headers: dict[str, str], payload: dict[str, Any], key: str | None) -> dict[str, Any]:
    """POST JSON, turning every transport and HTTP failure into a ``SamplingError`` with a plain reason."""
    import httpx2

    host = urlparse(url).netloc or url
    try:
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(config.timeout), trust_env=False) as client:
            response = await client.post(url, json=payload, headers=headers)
    except httpx2.TimeoutException:
        raise SamplingError(f"{config.provider} at {host} did not answer within {config.timeout:g} s") from None
    except httpx2.RequestError as exc:
        raise SamplingError(_redact(f"could not reach {config.provider} at {host}: {exc or type(exc).__name__}", key)) from None
    if response.status_code >= 400:
        raise SamplingError(_redact(f"{config.provider} at {host} answered HTTP {response.status_code}: {_error_text(response)}", key))
    try:
        body = response.json()
    except ValueError:
        raise SamplingError(_redact(f"{config.provider} at {host} sent a reply that is not JSON: {response.text[:ERROR_BODY_LIMIT]!r}", key)) from None
    if not isinstance(body, dict):
        raise SamplingError(f"{config.provider} at {host} sent a malformed reply (a JSON {type(body).__name__}, not an object)")
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


# ---------------------------------------------------------------------- OpenAI-compatible chat completions
def openai_url(config: ModelConfig) -> str:
    base = (config.base_url or OPENAI_URL).rstrip("/")
    return base if base.endswith("/chat/completions") else f"{base}/chat/completions"


def openai_payload(config: ModelConfig, params: Any) -> dict[str, Any]:
    """The chat-completions request body for ``params``.

    ``maxTokens`` goes out as ``max_tokens`` (what Ollama, vLLM, llama.cpp and LM Studio read), or as
    ``max_completion_tokens`` on OpenAI's own endpoint, whose reasoning models refuse ``max_tokens``.
    """
    messages: list[dict[str, Any]] = []
    if params.system_prompt:
        messages.append({"role": "system", "content": params.system_prompt})
    for message in params.messages:
        messages.extend(_openai_messages(message))
    official = urlparse(openai_url(config)).netloc == urlparse(OPENAI_URL).netloc
    payload: dict[str, Any] = {"model": config.model, "messages": messages}
    payload["max_completion_tokens" if official else "max_tokens"] = params.max_tokens
    if params.temperature is not None:
        payload["temperature"] = params.temperature
    if params.stop_sequences:
        payload["stop"] = list(params.stop_sequences)
    if params.tools:
        payload["tools"] = [
            {"type": "function", "function": {"name": t.name, "description": t.description or "", "parameters": t.input_schema}}
            for t in params.tools
        ]
        if params.tool_choice is not None and params.tool_choice.mode:
            payload["tool_choice"] = params.tool_choice.mode
    return payload


def _openai_messages(message: Any) -> list[dict[str, Any]]:
    blocks = message.content_as_list
    results = [b for b in blocks if b.type == "tool_result"]
    if results:  # each tool result is its own "tool" message
        return [
            {"role": "tool", "tool_call_id": r.tool_use_id, "content": ("[error] " if r.is_error else "") + _tool_result_text(r)}
            for r in results
        ]
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for block in blocks:
        if block.type == "text":
            parts.append({"type": "text", "text": block.text})
        elif block.type == "image":
            if message.role != "user":
                raise SamplingError("OpenAI-compatible chat takes images only in user messages")
            parts.append({"type": "image_url", "image_url": {"url": f"data:{block.mime_type};base64,{block.data}"}})
        elif block.type == "audio":
            fmt = _OPENAI_AUDIO.get(block.mime_type.lower())
            if fmt is None or message.role != "user":
                raise SamplingError(
                    f"OpenAI-compatible chat takes audio only as wav or mp3 in user messages, not {block.mime_type} "
                    f"in a {message.role} message"
                )
            parts.append({"type": "input_audio", "input_audio": {"data": block.data, "format": fmt}})
        elif block.type == "tool_use":
            calls.append({"id": block.id, "type": "function", "function": {"name": block.name, "arguments": json.dumps(block.input)}})
    out: dict[str, Any] = {"role": message.role}
    if len(parts) == 1 and parts[0]["type"] == "text":
        out["content"] = parts[0]["text"]  # a plain string: what every OpenAI-compatible server accepts
    else:
        out["content"] = parts or None
    if calls:
        out["tool_calls"] = calls
    return [out]


def _tool_result_text(result: Any) -> str:
    text = content_text(result.content)
    if not text and result.structured_content is not None:
        text = json.dumps(result.structured_content)
    return text


def openai_result(config: ModelConfig, body: dict[str, Any], params: Any) -> Any:
    """A chat-completions reply -> the SDK's sampling result (refusals and filters are errors)."""
    from mcp.types import TextContent, ToolUseContent

    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise _malformed(config, "no choices")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise _malformed(config, "the first choice has no message")
    finish = choices[0].get("finish_reason")
    if message.get("refusal"):
        raise SamplingError(f"the model refused: {message['refusal']}")
    if finish == "content_filter":
        raise SamplingError("the provider's content filter stopped the reply")
    blocks: list[Any] = []
    content = message.get("content")
    if isinstance(content, list):  # some servers answer with content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if isinstance(content, str) and (content or not message.get("tool_calls")):
        blocks.append(TextContent(type="text", text=content))
    for call in message.get("tool_calls") or []:
        try:
            function = call["function"]
            arguments = function.get("arguments") or "{}"
            data = json.loads(arguments) if isinstance(arguments, str) else arguments
            if not isinstance(data, dict):
                raise ValueError("arguments are not a JSON object")
            blocks.append(ToolUseContent(type="tool_use", id=str(call["id"]), name=str(function["name"]), input=data))
        except (KeyError, TypeError, ValueError) as exc:
            raise _malformed(config, f"a tool call could not be read ({exc})") from None
    if not blocks:
        raise _malformed(config, "the message has neither content nor tool calls")
    stop = _OPENAI_STOP.get(finish, finish) if finish else "endTurn"
    return build_result(blocks, str(body.get("model") or config.model or config.name), stop, params)


async def openai_provider(config: ModelConfig, params: Any, ctx: SamplingContext) -> Any:
    key = _key(config)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    body = await _post(config, openai_url(config), headers, openai_payload(config, params), key)
    return openai_result(config, body, params)


# ---------------------------------------------------------------------- Anthropic Messages
def anthropic_url(config: ModelConfig) -> str:
    base = (config.base_url or ANTHROPIC_URL).rstrip("/")
    if base.endswith("/v1/messages"):
        return base
    return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"


def anthropic_payload(config: ModelConfig, params: Any) -> dict[str, Any]:
    """The Messages API request body for ``params``."""
    payload: dict[str, Any] = {
        "model": config.model,
        "max_tokens": params.max_tokens,
        "messages": [{"role": m.role, "content": [_anthropic_block(b) for b in m.content_as_list]} for m in params.messages],
    }
    if params.system_prompt:
        payload["system"] = params.system_prompt
    if params.temperature is not None:
        payload["temperature"] = params.temperature
    if params.stop_sequences:
        payload["stop_sequences"] = list(params.stop_sequences)
    if params.tools:
        payload["tools"] = [{"name": t.name, "description": t.description or "", "input_schema": t.input_schema} for t in params.tools]
        if params.tool_choice is not None and params.tool_choice.mode:
            payload["tool_choice"] = {"type": _ANTHROPIC_TOOL_CHOICE[params.tool_choice.mode]}
    return payload


def _anthropic_block(block: Any) -> dict[str, Any]:
    kind = block.type
    if kind == "text":
        return {"type": "text", "text": block.text}
    if kind == "image":
        return {"type": "image", "source": {"type": "base64", "media_type": block.mime_type, "data": block.data}}
    if kind == "audio":
        raise SamplingError("Anthropic's Messages API does not take audio; route audio requests to an OpenAI-compatible audio model or a callable")
    if kind == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if kind == "tool_result":
        out: dict[str, Any] = {"type": "tool_result", "tool_use_id": block.tool_use_id, "content": []}
        for inner in block.content:
            if inner.type in ("text", "image"):
                out["content"].append(_anthropic_block(inner))
            else:
                out["content"].append({"type": "text", "text": content_text(inner)})
        if not out["content"] and block.structured_content is not None:
            out["content"].append({"type": "text", "text": json.dumps(block.structured_content)})
        if block.is_error is not None:
            out["is_error"] = block.is_error
        return out
    raise SamplingError(f"Anthropic's Messages API does not take {kind} content")


def anthropic_result(config: ModelConfig, body: dict[str, Any], params: Any) -> Any:
    """A Messages API reply -> the SDK's sampling result (a refusal is an error)."""
    from mcp.types import TextContent, ToolUseContent

    if body.get("type") == "error":
        error = body.get("error") or {}
        raise SamplingError(f"anthropic reported an error: {error.get('message', error)}")
    stop = body.get("stop_reason")
    content = body.get("content")
    if stop == "refusal":
        said = content_text([TextContent(type="text", text=b.get("text", "")) for b in content or [] if isinstance(b, dict) and b.get("type") == "text"])
        raise SamplingError("the model refused" + (f": {said}" if said else ""))
    if not isinstance(content, list):
        raise _malformed(config, "no content list")
    blocks: list[Any] = []
    for item in content:
        if not isinstance(item, dict):
            raise _malformed(config, "a content block is not an object")
        if item.get("type") == "text":
            blocks.append(TextContent(type="text", text=str(item.get("text", ""))))
        elif item.get("type") == "tool_use":
            try:
                blocks.append(ToolUseContent(type="tool_use", id=str(item["id"]), name=str(item["name"]), input=dict(item.get("input") or {})))
            except (KeyError, TypeError, ValueError) as exc:
                raise _malformed(config, f"a tool_use block could not be read ({exc})") from None
        # other block kinds (thinking, redacted_thinking, ...) are not part of a sampling answer
    if not blocks:
        raise _malformed(config, "no text or tool_use content")
    return build_result(blocks, str(body.get("model") or config.model or config.name), _ANTHROPIC_STOP.get(stop, stop) if stop else "endTurn", params)


async def anthropic_provider(config: ModelConfig, params: Any, ctx: SamplingContext) -> Any:
    key = _key(config)
    headers = {"anthropic-version": ANTHROPIC_VERSION}
    if key:
        headers["x-api-key"] = key
    body = await _post(config, anthropic_url(config), headers, anthropic_payload(config, params), key)
    return anthropic_result(config, body, params)


# ---------------------------------------------------------------------- local kinds
async def echo_provider(config: ModelConfig, params: Any, ctx: SamplingContext) -> Any:
    """Offline and deterministic: ``echo: <the last user message>`` within ``maxTokens`` and stop sequences."""
    from mcp.types import TextContent

    asked = ""
    for message in reversed(params.messages):
        if message.role == "user":
            asked = content_text(message.content)
            break
    text, reason = limit_text(f"echo: {asked}", params)
    return build_result([TextContent(type="text", text=text)], config.model or "echo", reason, params)


async def callable_provider(config: ModelConfig, params: Any, ctx: SamplingContext) -> Any:
    """Call the notebook's function with the request params (a sync one runs in a worker thread).

    It may return a string, a content block or a list of them, a dict shaped like a result, or the
    SDK's ``CreateMessageResult`` / ``CreateMessageResultWithTools``.
    """
    function = config.function
    if not callable(function):
        raise SamplingError(f"model {config.name!r} has no function to call")
    label = getattr(function, "__name__", type(function).__name__)
    try:
        if inspect.iscoroutinefunction(function):
            value = await function(params)
        else:
            value = await asyncio.to_thread(function, params)
            if inspect.isawaitable(value):
                value = await value
    except Exception as exc:  # boundary: the user's function; its failure is an answer, not a crash
        raise SamplingError(f"the function {label}() raised {type(exc).__name__}: {exc}") from None
    return _limit_result(_as_result(value, config.model or label, params, label), params)


def _as_result(value: Any, model: str, params: Any, label: str) -> Any:
    from pydantic import BaseModel, ValidationError

    from mcp.types import CreateMessageResult, CreateMessageResultWithTools, TextContent

    if isinstance(value, (CreateMessageResult, CreateMessageResultWithTools)):
        blocks = value.content if isinstance(value.content, list) else [value.content]
        return build_result(list(blocks), value.model, value.stop_reason, params)
    if isinstance(value, str):
        return build_result([TextContent(type="text", text=value)], model, "endTurn", params)
    if isinstance(value, dict):
        try:
            parsed = CreateMessageResultWithTools.model_validate({"role": "assistant", "model": model, **value})
        except ValidationError as exc:
            raise SamplingError(f"{label}() returned a dict that is not a sampling result: {exc.errors()[0]['msg']}") from None
        return _as_result(parsed, model, params, label)
    blocks = value if isinstance(value, list) else [value]
    if blocks and all(isinstance(b, BaseModel) and getattr(b, "type", None) for b in blocks):
        return build_result(list(blocks), model, "toolUse" if any(b.type == "tool_use" for b in blocks) else "endTurn", params)
    raise SamplingError(f"{label}() returned {type(value).__name__}; return a string, content block(s) or a CreateMessageResult")


def nobody_to_reply(config: ModelConfig) -> SamplingError:
    """The ``human`` provider in a headless run (raised by ``ui.HeadlessUI.human_reply``)."""
    return SamplingError(
        f"model {config.name!r} is the human provider (you type the reply), but this run is headless; "
        "choose another model with %mcp model use NAME"
    )


async def human_provider(config: ModelConfig, params: Any, ctx: SamplingContext) -> Any:
    """The user types the reply in the cell; headless runs have nobody to ask."""
    from mcp.types import TextContent

    if ctx.ui is None:  # headless: nobody to type it (as ``flows.ui.HeadlessUI.human_reply`` says too)
        raise nobody_to_reply(config)
    text = await wait_for_user(ctx.flow, ctx.ui.human_reply(ctx.flow, ctx.key, params, config))
    if text is None:
        raise SamplingDeclined("the user declined to write a reply")
    text, reason = limit_text(text, params)
    return build_result([TextContent(type="text", text=text)], config.model or "human", reason, params)


PROVIDERS: dict[str, Provider] = {
    "openai": openai_provider,
    "anthropic": anthropic_provider,
    "callable": callable_provider,
    "human": human_provider,
    "echo": echo_provider,
}


async def create_message(config: ModelConfig, params: Any, ctx: SamplingContext) -> Any:
    """Answer ``params`` with the model ``config``; every failure is a ``SamplingError``."""
    provider = PROVIDERS.get(config.provider)
    if provider is None:
        raise SamplingError(f"unknown provider {config.provider!r}; expected one of {', '.join(PROVIDERS)}")
    try:
        return await provider(config, params, ctx)
    except SamplingError:
        raise
    except Exception as exc:  # boundary: a provider bug must become an answer, not a dead flow
        raise SamplingError(_redact(f"{config.provider} failed: {type(exc).__name__}: {exc}", None)) from None
