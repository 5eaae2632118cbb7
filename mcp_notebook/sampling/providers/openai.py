"""The ``openai`` provider: any OpenAI-compatible ``/chat/completions`` endpoint (OpenAI, Ollama, vLLM,
llama.cpp, LM Studio) through ``--base-url``.

``openai_payload`` / ``openai_result`` are pure, so the exact wire shapes are easy to read and to test.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from ...core.text import content_text
from .base import Provider, SamplingContext, SamplingError, _key, _malformed, _post, build_result

if TYPE_CHECKING:
    from ..router import ModelConfig


OPENAI_URL = "https://api.openai.com/v1"


# OpenAI's chat API takes audio input as wav or mp3 only.
_OPENAI_AUDIO = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}


_OPENAI_STOP = {"stop": "endTurn", "length": "maxTokens", "tool_calls": "toolUse", "function_call": "toolUse"}


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
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description or "", "parameters": t.input_schema},
            }
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
            {
                "role": "tool",
                "tool_call_id": r.tool_use_id,
                "content": ("[error] " if r.is_error else "") + _tool_result_text(r),
            }
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
            calls.append(
                {
                    "id": block.id,
                    "type": "function",
                    "function": {"name": block.name, "arguments": json.dumps(block.input)},
                }
            )
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


PROVIDER = Provider(
    "openai",
    openai_provider,
    hosted=True,
    key_env="OPENAI_API_KEY",
    model_example="gpt-4o-mini or llama3.2",
    described="any OpenAI-compatible chat endpoint: OpenAI, or Ollama, vLLM, llama.cpp, LM Studio with --base-url",
)
