"""The providers that answer inside this kernel: ``echo`` (offline and deterministic: says what it was
asked), ``callable`` (a Python function from the notebook, sync or async, given the request params)
and ``human`` (the user types the reply in a form; interactive runs only).
"""

from __future__ import annotations

import asyncio
import inspect
from typing import TYPE_CHECKING, Any

from ...core.text import content_text
from .base import (
    Provider,
    SamplingContext,
    SamplingDeclined,
    SamplingError,
    _limit_result,
    build_result,
    limit_text,
    wait_for_user,
)

if TYPE_CHECKING:
    from ..router import ModelConfig


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
    except Exception as exc:  # noqa: BLE001 - the user's function: its failure is an answer, not a crash
        raise SamplingError(f"the function {label}() raised {type(exc).__name__}: {exc}") from None
    return _limit_result(_as_result(value, config.model or label, params, label), params)


def _as_result(value: Any, model: str, params: Any, label: str) -> Any:
    from mcp.types import CreateMessageResult, CreateMessageResultWithTools, TextContent
    from pydantic import BaseModel, ValidationError

    if isinstance(value, (CreateMessageResult, CreateMessageResultWithTools)):
        blocks = value.content if isinstance(value.content, list) else [value.content]
        return build_result(list(blocks), value.model, value.stop_reason, params)
    if isinstance(value, str):
        return build_result([TextContent(type="text", text=value)], model, "endTurn", params)
    if isinstance(value, dict):
        try:
            parsed = CreateMessageResultWithTools.model_validate({"role": "assistant", "model": model, **value})
        except ValidationError as exc:
            raise SamplingError(
                f"{label}() returned a dict that is not a sampling result: {exc.errors()[0]['msg']}"
            ) from None
        return _as_result(parsed, model, params, label)
    blocks = value if isinstance(value, list) else [value]
    if blocks and all(isinstance(b, BaseModel) and getattr(b, "type", None) for b in blocks):
        return build_result(
            list(blocks), model, "toolUse" if any(b.type == "tool_use" for b in blocks) else "endTurn", params
        )
    raise SamplingError(
        f"{label}() returned {type(value).__name__}; return a string, content block(s) or a CreateMessageResult"
    )


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


def _check_callable(config: ModelConfig) -> None:
    if not callable(config.function):
        raise ValueError("the callable provider needs a function (its name in the notebook as MODEL)")


ECHO = Provider("echo", echo_provider, described="offline")
CALLABLE = Provider(
    "callable", callable_provider, check=_check_callable, described="MODEL names a function in the notebook"
)
HUMAN = Provider("human", human_provider, described="you type the reply")
