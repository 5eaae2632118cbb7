"""A test server in a child process that prints ``READY <url>`` once it listens (oauth_server, task_servers).

``running_ready_process`` starts it in its own session, waits for that line (showing the child's
stderr if it exits or takes too long), keeps draining stdout so the child never blocks on it, and
stops it (SIGTERM, then SIGKILL of its process group) when the block ends.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def running_ready_process(
    args: Sequence[str], what: str, timeout: float = 30.0, cwd: Path | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Yield ``(url from the READY line, process)``; ``what`` names the server in a start-up error."""
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            list(args), cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, start_new_session=True
        )
        try:
            yield _await_ready(proc, log, timeout, what), proc
        finally:
            stop(proc)


def _await_ready(proc: subprocess.Popen[bytes], log: Any, timeout: float, what: str) -> str:
    assert proc.stdout is not None
    lines: queue.Queue[bytes] = queue.Queue()
    stdout = proc.stdout

    def pump() -> None:  # keeps draining stdout after READY so the child never blocks on it
        for line in stdout:
            lines.put(line)
        lines.put(b"")

    threading.Thread(target=pump, name=f"{what}-stdout", daemon=True).start()
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        try:
            line = lines.get(timeout=max(0.01, remaining)) if remaining > 0 else b""
        except queue.Empty:
            line = b""
        text = line.decode(errors="replace").strip()
        if text.startswith("READY "):
            return text.removeprefix("READY ").strip()
        if not line:
            log.seek(0)
            output = log.read().decode(errors="replace")
            state = f"exited with {proc.poll()}" if proc.poll() is not None else f"not ready after {timeout}s"
            raise RuntimeError(f"{what} {state}:\n{output}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate, then kill the process group if it does not end within 10 s."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


# ---------------------------------------------------------------------- the child's side
def serve_ready(app: Any, host: str, port: int) -> None:
    """Serve the ASGI ``app`` on ``host:port`` (0: any free port) with uvicorn and print ``READY <its /mcp URL>`` once it listens.

    The socket is bound first, so the URL printed is the one that answers; used by the test servers'
    ``--transport http`` (task_servers, app_servers).
    """
    import asyncio
    import socket

    import uvicorn

    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{sock.getsockname()[1]}/mcp"

    async def serve() -> None:
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=2)
        runner = uvicorn.Server(config)
        serving = asyncio.create_task(runner.serve(sockets=[sock]))
        while not runner.started:
            if serving.done():
                await serving
                raise RuntimeError("the server stopped before it started")
            await asyncio.sleep(0.02)
        print(f"READY {url}", flush=True)
        await serving

    asyncio.run(serve())
