"""What ``mcp.Client`` is given for a target: a stdio server's pipes, or the HTTP client of a URL.

A stdio server's read stream is watched (``watch_end``): the SDK ends it when the process exits
and then only fails requests with "Connection closed", so the connection is told, and each item
read is reported (an MCP message, or a stdout line that is not MCP). An HTTP target gets an httpx2
client with the connection's headers, its stream routes (``routing.StreamRoutes``), its sign-in
(if any) and a response hook that notes what the server answered (``open_failures``).

A new transport option is a field of ``target.Target`` (parsed there) and its use here.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from ..core.policy import current_policy
from ..core.text import clip
from ..errors import FlowError
from .server_logs import quiet_stdout

if TYPE_CHECKING:
    import httpx2

    from .target import Target

__all__ = ["http_client", "http_headers", "stdio_transport", "stdout_line", "watch_end", "within_policy"]


def stdio_transport(target: Target, errlog: Any, on_end: Callable[[], None], on_message: Callable[[Any], None]) -> Any:
    """The SDK's stdio client for ``target``'s command, its stderr to ``errlog``, its read stream watched."""
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    t = target
    params = StdioServerParameters(command=t.command[0], args=t.command[1:], env=_child_env(t.env), cwd=t.cwd)
    transport = stdio_client(params, errlog=errlog)
    return watch_end(transport, on_end, on_message)


def http_headers(target: Target) -> dict[str, str]:
    """The headers every request to ``target`` carries: its own, and its bearer token (environment or served)."""
    t = target
    headers = dict(t.headers)
    if t.bearer_env:
        token = os.environ.get(t.bearer_env)
        if not token:
            raise FlowError(f"environment variable {t.bearer_env} is not set (needed by --bearer-env)")
        headers["Authorization"] = f"Bearer {token}"
    if t.served_token is not None and not any(k.lower() == "authorization" for k in headers):
        own = t.served_token()
        if own:
            headers["Authorization"] = f"Bearer {own}"
    return headers


def http_client(headers: dict[str, str], routes: Any, on_response: Any, auth: Any) -> httpx2.AsyncClient:
    """The httpx2 client the SDK's streamable HTTP transport uses (the SDK's own timeouts)."""
    import httpx2
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

    return httpx2.AsyncClient(
        headers=headers or None,
        timeout=httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),  # the SDK's defaults
        transport=routes,  # duck-typed: httpx2 only calls the transport methods
        event_hooks={"request": [within_policy], "response": [on_response]},
        auth=auth,
    )


async def within_policy(request: httpx2.Request) -> None:
    """Every request this connection sends asks the administrator's ``allowed_urls`` (core/policy.py).

    ``wire/registry`` judged the endpoint before connecting, but the SDK follows a redirect that
    stays on the endpoint's origin, and a policy's URLs may name paths: a server allowed at one path
    of a shared host must not reach another through a 307.
    """
    if refused := current_policy().url_refusal(str(request.url)):
        raise FlowError(f"Not sending a request to {request.url}: {refused}.", kind="policy_refused")


@asynccontextmanager
async def watch_end(
    transport: Any, on_end: Callable[[], None], on_message: Callable[[Any], None]
) -> AsyncIterator[tuple[Any, Any]]:
    """``transport`` whose read stream calls ``on_message(item)`` for each item and ``on_end()`` at its end of stream.

    The SDK ends a stdio session's read stream when the server process exits, and then only fails
    requests with "Connection closed"; nothing else tells the owner task, which would hold a dead
    session forever. Whether anything arrived before tells a server that closed on the
    ``server/discover`` probe (``Connection.open``). While the transport runs, the SDK's traceback
    for a stdout line that is not MCP is left out (``server_logs.quiet_stdout``): ``on_message``
    keeps the line in the connection's log instead.
    """
    with quiet_stdout():
        async with transport as (read_stream, write_stream):
            yield _EndWatch(read_stream, on_end, on_message), write_stream


class _EndWatch:
    """A read stream (same shape as the SDK's ``ContextReceiveStream``) that reports its items and its end of stream."""

    def __init__(self, inner: Any, on_end: Callable[[], None], on_message: Callable[[Any], None]) -> None:
        self._inner, self._on_end, self._on_message = inner, on_end, on_message

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        import anyio

        try:
            item = await self._inner.receive()
        except anyio.EndOfStream:
            self._on_end()
            raise
        self._on_message(item)
        return item

    def close(self) -> None:
        self._inner.close()

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _EndWatch:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _EndWatch:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        self._inner.close()


def stdout_line(error: Exception) -> str | None:
    """The stdout line a stdio server wrote that is not JSON-RPC, from the SDK's parse error (``None``: another error)."""
    from pydantic import ValidationError

    if not isinstance(error, ValidationError):
        return None
    issues = error.errors()
    line = issues[0].get("input") if issues else None
    return clip(line, 2000) if isinstance(line, str) else None


def _child_env(extra: dict[str, str]) -> dict[str, str] | None:
    """The SDK passes only a safe subset of the parent environment; add the user's variables."""
    return dict(extra) if extra else None
