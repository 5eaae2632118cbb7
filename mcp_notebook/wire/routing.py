"""Which call a 2025 server's back-channel question belongs to, where the transport tells.

A 2025-generation server asks (``elicitation/create``, ``sampling/createMessage``) in the middle
of a ``tools/call``. Over streamable HTTP it sends the question on the response stream of the
POST that carried the call, so the transport knows which call asks; the SDK parses the stream
and hands the callback only the question's own id. ``StreamRoutes`` wraps the httpx2 transport:
each call goes out with a per-flow tag in ``params._meta`` (``TAG_KEY``), and every server
request read from that POST's event stream is noted as belonging to that tag, before the SDK
sees it. ``Connection`` then asks ``origin(request_id)`` to find the flow.

Over stdio and in-process nothing links a question to a call; ``Connection`` handles that case
(one running call: it; several: the form says so and no call's presets are used).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import AsyncIterator
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx2

TAG_KEY = "mcp-notebook/flow"  # a ``_meta`` key of ours (spec: prefix + "/" + name); the value is opaque
_MAX_ROUTES = 1024  # questions noted but never asked for (a server that asks and then gives up) age out


class StreamRoutes:
    """An httpx2 transport that notes, per server request id, the tag of the call whose stream carried it.

    Duck-typed (httpx2 is imported only when a connection uses it: ``%load_ext`` stays fast).
    """

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self.inner = inner
        self._routes: OrderedDict[str, str] = OrderedDict()

    def origin(self, request_id: Any) -> str | None:
        """The tag of the call whose response stream carried server request ``request_id`` (forgotten once read)."""
        return self._routes.pop(str(request_id), None)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        tag = _tag_of(request)
        if tag is not None and response.headers.get("content-type", "").startswith("text/event-stream"):
            response.stream = _watched_stream_class()(response.stream, tag, self._note)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> StreamRoutes:
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.inner.__aexit__(*exc)

    def _note(self, request_id: str, tag: str) -> None:
        self._routes[request_id] = tag
        while len(self._routes) > _MAX_ROUTES:
            self._routes.popitem(last=False)


def _tag_of(request: httpx2.Request) -> str | None:
    """Our tag in a POSTed JSON-RPC request's ``params._meta``; ``None`` for anything else."""
    if request.method != "POST":
        return None
    try:
        body = json.loads(request.content)
    except (ValueError, UnicodeDecodeError):
        return None
    except Exception:  # noqa: BLE001 - httpx2.RequestNotRead: a streamed body is not ours to read
        return None
    meta = (
        body.get("params", {}).get("_meta") if isinstance(body, dict) and isinstance(body.get("params"), dict) else None
    )
    tag = meta.get(TAG_KEY) if isinstance(meta, dict) else None
    return tag if isinstance(tag, str) else None


@cache
def _watched_stream_class() -> type:
    """``_WatchedStream`` as a real ``httpx2.AsyncByteStream`` (httpx2 checks the type), made on first use."""
    import httpx2

    class _WatchedStream(httpx2.AsyncByteStream):
        """Passes an SSE body through unchanged, noting the id of every server request in its ``data:`` lines."""

        def __init__(self, inner: Any, tag: str, note: Any) -> None:
            self.inner, self.tag, self.note = inner, tag, note
            self._partial = b""

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self.inner:
                self._scan(chunk)  # before the chunk goes on: the route is known when the SDK reads the question
                yield chunk

        async def aclose(self) -> None:
            await self.inner.aclose()

        def _scan(self, chunk: bytes) -> None:
            lines = (self._partial + chunk).split(b"\n")
            self._partial = lines.pop()
            if (
                len(self._partial) > 4 * 1024 * 1024
            ):  # one line this long is no question we can route: stop buffering it
                self._partial = b""
            for line in lines:
                if not line.startswith(b"data:"):
                    continue
                try:
                    message = json.loads(line[5:])
                except ValueError:
                    continue
                if isinstance(message, dict) and "method" in message and isinstance(message.get("id"), str | int):
                    self.note(str(message["id"]), self.tag)

    return _WatchedStream
