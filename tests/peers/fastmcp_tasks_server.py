"""A FastMCP server with fastmcp-tasks (the 2026-07-28 tasks extension, SEP-2663), run as a real peer.

It runs on the Python of ``.peers/venv-tasks`` (fastmcp-tasks pins ``fastmcp-slim[server]`` at
its own version, which cannot sit beside the FastMCP of ``.peers/venv``):
``.peers/venv-tasks/bin/python tests/peers/fastmcp_tasks_server.py [--transport stdio|http] [--port P]``
(HTTP prints ``READY <url>``). ``TasksExtension()`` keeps its tasks in memory (Docket's
``memory://`` backend), so they live as long as this process. Tools:

- ``crunch`` (``task=True``: task support "optional", fastmcp-tasks' defaults, so its tasks
  suggest ``pollIntervalMs`` 5000): sleeps ``duration`` seconds, then says "Crunched N for Xs".
  A client that declares ``io.modelcontextprotocol/tasks`` gets a task; one that does not gets
  the result inline.
- ``crunch_required`` (``TaskConfig(mode="required")``, suggesting a poll every
  ``POLL_INTERVAL``): the same, as a task only; a client without the extension gets -32021.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
from datetime import timedelta

os.environ.setdefault("FASTMCP_LOG_LEVEL", "WARNING")  # before fastmcp reads its settings

from fastmcp import FastMCP  # noqa: E402 - after FASTMCP_LOG_LEVEL is set, which fastmcp reads at import
from fastmcp.utilities.tasks import TaskConfig  # noqa: E402 - after FASTMCP_LOG_LEVEL is set, which fastmcp reads at import
from fastmcp_tasks import TasksExtension  # noqa: E402 - after FASTMCP_LOG_LEVEL is set, which fastmcp reads at import

POLL_INTERVAL = timedelta(milliseconds=200)

server = FastMCP("fastmcp-tasks-peer")
server.add_extension(TasksExtension())


@server.tool(task=True)
async def crunch(duration: float = 1.0, items: int = 3) -> str:
    """Crunch ``items`` things in ``duration`` seconds (a background task when the client can take one)."""
    await asyncio.sleep(duration)
    return f"Crunched {items} for {duration:g}s"


@server.tool(task=TaskConfig(mode="required", poll_interval=POLL_INTERVAL))
async def crunch_required(duration: float = 1.0, items: int = 3) -> str:
    """The same, as a background task only."""
    await asyncio.sleep(duration)
    return f"Crunched {items} for {duration:g}s"


async def serve_http(port: int) -> None:
    import uvicorn

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    config = uvicorn.Config(
        server.http_app(path="/mcp"), log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=2
    )
    runner = uvicorn.Server(config)
    serving = asyncio.create_task(runner.serve(sockets=[sock]))
    while not runner.started:
        if serving.done():
            await serving
            raise RuntimeError("the server stopped before it started")
        await asyncio.sleep(0.02)
    print(f"READY http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    await serving


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument(
        "--port", type=int, default=0, help="HTTP port on 127.0.0.1 (0: the OS picks one; READY shows the URL)"
    )
    args = parser.parse_args()
    if args.transport == "stdio":
        server.run(transport="stdio", show_banner=False)
    else:
        asyncio.run(serve_http(args.port))


if __name__ == "__main__":
    main()
