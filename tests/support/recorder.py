"""A loopback HTTP server that keeps every request's headers and answers 500 (no MCP server there).

Where a hostile record, config or suggested line points: a test asserts exactly what reached it
(nothing at all, or no bearer token). ``recording()`` is the fixture body: started, yielded, shut down.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..conftest import free_port

__all__ = ["Recorder", "recording"]


class Recorder:
    """Every request's headers in ``seen`` (one dict each, in order); every answer a 500."""

    def __init__(self) -> None:
        self.seen: list[dict[str, str]] = []
        seen = self.seen

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                seen.append(dict(self.headers))
                self.send_response(500)
                self.end_headers()

            do_GET = do_DELETE = do_POST  # noqa: N815 - http.server's method names

            def log_message(self, *args: Any) -> None:
                pass

        self.port = free_port()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path: str = "mcp") -> str:
        return f"http://127.0.0.1:{self.port}/{path}"

    def authorizations(self) -> list[str | None]:
        """Each request's ``Authorization`` header (``None`` where it had none)."""
        return [h.get("Authorization") for h in self.seen]


@contextmanager
def recording() -> Iterator[Recorder]:
    recorder = Recorder()
    try:
        yield recorder
    finally:
        recorder.server.shutdown()
        recorder.server.server_close()
