"""Turning what goes wrong into sentences a notebook user can act on.

The SDK raises a zoo of things (``MCPError`` with JSON-RPC codes, nested ``ExceptionGroup``s from
anyio task groups, ``httpx2`` connection errors, ``FileNotFoundError`` for stdio commands). IPython
prints a full traceback for anything but exactly ``UsageError`` or an exception with
``_render_traceback_``, and falls back to a raw traceback when an ``ExceptionGroup`` hides in the
context chain. So every user-facing failure becomes a ``FlowError`` raised outside any ``except``
block, carrying a plain explanation.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FlowError", "MCPNotebookError", "describe_exception", "explain_code", "leaf_exceptions"]

#: JSON-RPC and MCP error codes, in words a notebook user understands.
CODE_MEANINGS: dict[int, str] = {
    -32700: "the server could not parse the message (parse error)",
    -32600: "the server rejected the request as invalid",
    -32601: "the server does not offer this method",
    -32602: "the server rejected the parameters",
    -32603: "the server hit an internal error",
    -32000: "the connection to the server closed",
    -32001: "the server did not answer in time",
    -32002: "the resource was not found",
    -32020: "the tool list changed on the server (header mismatch)",
    -32021: "the server needs a client capability this connection did not offer",
    -32022: "the server does not support the requested protocol version",
    -32042: "the server needs you to open a URL first",
    0: "the server reported an error without a code",
}

STATE_REFUSED_HINT = (
    "The server refused the saved request state: it expired, the server restarted without shared "
    "keys (RequestStateSecurity(keys=[...])), the arguments changed, or the state was altered. "
    "Start the call again."
)


class MCPNotebookError(Exception):
    """Base for errors we explain ourselves; rendered without a traceback in IPython."""

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[31m{type(self).__name__}\x1b[0m: {self}"]


class FlowError(MCPNotebookError):
    """A flow (tools/call, prompts/get, resources/read) ended without a result.

    ``code`` is the MCP/JSON-RPC error code when the server sent one.
    """

    def __init__(self, message: str, *, code: int | None = None, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data


def leaf_exceptions(exc: BaseException) -> list[BaseException]:
    """Flatten nested ``BaseExceptionGroup``s into their leaves (the SDK's anyio code nests them)."""
    if isinstance(exc, BaseExceptionGroup):
        leaves: list[BaseException] = []
        for inner in exc.exceptions:
            leaves.extend(leaf_exceptions(inner))
        return leaves
    return [exc]


def explain_code(code: int | None) -> str:
    """Words for an MCP error code ("" when unknown)."""
    if code is None:
        return ""
    return CODE_MEANINGS.get(code, "")


def describe_exception(exc: BaseException) -> tuple[str, int | None, Any]:
    """A one-paragraph explanation of ``exc``, plus its MCP code and data when it has one."""
    from mcp import MCPError  # lazy: keep `%load_ext` cheap

    leaves = leaf_exceptions(exc)
    real = [e for e in leaves if not _is_noise(e)] or leaves
    exc = real[0]
    if isinstance(exc, MCPError):
        code, message, data = exc.code, exc.message, exc.data
        if code == -32602 and "requestState" in (message or ""):
            return f"{message} (MCP error {code}). {STATE_REFUSED_HINT}", code, data
        # our own answers (a failed model, a user's denial) already say who failed; no server gloss
        meaning = "" if (message or "").startswith(("The client", "The user")) else explain_code(code)
        text = f"{message} (MCP error {code}{': ' + meaning if meaning else ''})"
        if code == -32021 and isinstance(data, dict) and data.get("requiredCapabilities"):
            text += f"; required: {data['requiredCapabilities']}"
        return text, code, data
    name = type(exc).__name__
    if name == "InputRequiredRoundsExceededError":
        return str(exc), None, None
    if name in {"ConnectError", "ConnectTimeout"}:
        return f"could not reach the server ({exc}). Is it running, and is the URL right?", None, None
    if name in {"ReadTimeout", "TimeoutError", "TimeoutException"}:
        return f"the server did not answer in time ({name})", -32001, None
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}", None, None
    if name == "HTTPStatusError":
        response = getattr(exc, "response", None)
        status = getattr(response, "status_code", "?")
        return f"the server answered HTTP {status}: {exc}", None, None
    if name == "ValidationError":
        return f"the server sent a result that does not match the protocol: {_first_line(str(exc))}", None, None
    text = str(exc) or name
    return (text if name in {"RuntimeError", "FlowError"} else f"{name}: {text}"), None, None


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def _is_noise(exc: BaseException) -> bool:
    """Cancellation and stream-closed echoes that accompany the real cause in a group."""
    import asyncio

    return isinstance(exc, (asyncio.CancelledError, GeneratorExit)) or type(exc).__name__ in {
        "ClosedResourceError",
        "BrokenResourceError",
        "EndOfStream",
    }
