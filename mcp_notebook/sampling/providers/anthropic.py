"""The ``anthropic`` provider: the Anthropic Messages API (``/v1/messages``).

``anthropic_payload`` / ``anthropic_result`` are pure, so the exact wire shapes are easy to read and to test.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ...core.text import content_text
from .base import Provider, SamplingContext, SamplingError, _key, _malformed, _post, build_result

if TYPE_CHECKING:
    from ..router import ModelConfig


ANTHROPIC_URL = "https://api.anthropic.com"


ANTHROPIC_VERSION = "2023-06-01"


_ANTHROPIC_STOP = {
    "end_turn": "endTurn",
    "max_tokens": "maxTokens",
    "stop_sequence": "stopSequence",
    "tool_use": "toolUse",
}


_ANTHROPIC_TOOL_CHOICE = {"auto": "auto", "required": "any", "none": "none"}


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
        "messages": [
            {"role": m.role, "content": [_anthropic_block(b) for b in m.content_as_list]} for m in params.messages
        ],
    }
    if params.system_prompt:
        payload["system"] = params.system_prompt
    if params.temperature is not None:
        payload["temperature"] = params.temperature
    if params.stop_sequences:
        payload["stop_sequences"] = list(params.stop_sequences)
    if params.tools:
        payload["tools"] = [
            {"name": t.name, "description": t.description or "", "input_schema": t.input_schema} for t in params.tools
        ]
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
        raise SamplingError(
            "Anthropic's Messages API does not take audio; route audio requests to an OpenAI-compatible audio model or a callable"
        )
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
        said = content_text(
            [
                TextContent(type="text", text=b.get("text", ""))
                for b in content or []
                if isinstance(b, dict) and b.get("type") == "text"
            ]
        )
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
                blocks.append(
                    ToolUseContent(
                        type="tool_use", id=str(item["id"]), name=str(item["name"]), input=dict(item.get("input") or {})
                    )
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise _malformed(config, f"a tool_use block could not be read ({exc})") from None
        # other block kinds (thinking, redacted_thinking, ...) are not part of a sampling answer
    if not blocks:
        raise _malformed(config, "no text or tool_use content")
    return build_result(
        blocks,
        str(body.get("model") or config.model or config.name),
        _ANTHROPIC_STOP.get(stop, stop) if stop else "endTurn",
        params,
    )


async def anthropic_provider(config: ModelConfig, params: Any, ctx: SamplingContext) -> Any:
    key = _key(config)
    headers = {"anthropic-version": ANTHROPIC_VERSION}
    if key:
        headers["x-api-key"] = key
    body = await _post(config, anthropic_url(config), headers, anthropic_payload(config, params), key)
    return anthropic_result(config, body, params)


PROVIDER = Provider(
    "anthropic", anthropic_provider, hosted=True, key_env="ANTHROPIC_API_KEY", model_example="claude-sonnet-4-5"
)
