"""The background loop's lifecycle: start, stop, restart, finalize at unload and at garbage collection."""

from __future__ import annotations

import asyncio
import gc
import socket
import threading
from typing import Any
from urllib.parse import urlsplit

import pytest
from IPython.core.interactiveshell import InteractiveShell

from mcp_notebook.core.threads import Runtime

from ..conftest import session_of

LOOP_THREAD = "mcp-notebook-loop"

PROTO = """
from mcp.server.mcpserver import MCPServer

lifecycle_srv = MCPServer("lifecycle")

@lifecycle_srv.tool()
def hello(name: str) -> str:
    return f"hello {name}"
"""


def loop_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == LOOP_THREAD]


def test_start_stop_restart() -> None:
    rt = Runtime()
    assert not rt.running

    async def where() -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    first = rt.run(where())
    thread = rt._thread
    assert rt.running and thread is not None and thread.is_alive()
    rt.stop()
    assert not rt.running and not thread.is_alive() and first.is_closed()
    rt.stop()  # stopping twice is harmless

    second = rt.run(where())
    assert second is not first and rt.running and rt._thread is not thread
    rt.stop()
    assert not rt.running


def test_stop_awaits_closers_then_cancels_the_rest() -> None:
    rt = Runtime()
    events: list[str] = []

    async def closer() -> None:
        await asyncio.sleep(0.05)  # a clean close takes a round trip
        events.append("closed")

    async def register_and_linger() -> None:
        rt.at_stop(closer)
        forgotten = rt.at_stop(closer)
        forgotten()  # a connection that closed by itself unregisters

    async def forever() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            events.append("cancelled")
            raise

    rt.run(register_and_linger())
    rt.submit(forever())
    rt.stop()
    assert events == ["closed", "cancelled"]


def test_finalizer_runs_when_the_runtime_is_collected() -> None:
    rt = Runtime()
    rt.run(asyncio.sleep(0))
    thread, finalizer = rt._thread, rt._finalizer
    assert thread is not None and finalizer is not None and finalizer.alive
    del rt
    gc.collect()
    assert not finalizer.alive
    thread.join(5)
    assert not thread.is_alive()


@pytest.mark.usefixtures("undo_each_test")  # the shell is process-wide: the extension loaded again after the test
def test_unload_stops_everything_and_load_starts_fresh(ip: InteractiveShell) -> None:
    ip.run_line_magic("mcp", "connect life_inproc mcp_notebook.demo:echo_server")
    ip.run_cell_magic("mcp", "server lifeproto", PROTO)
    served = ip.run_line_magic("mcp", "serve lifeproto")
    session: Any = session_of(ip)
    registry, runtime = session.registry, session.runtime
    conns = [registry.get("life_inproc"), registry.get("lifeproto")]
    assert all(c.state == "open" for c in conns)
    old_loop, finalizer = runtime.loop, runtime._finalizer
    assert loop_threads() and finalizer is not None and finalizer.alive

    ip.run_line_magic("unload_ext", "mcp_notebook")
    try:
        assert [c.state for c in conns] == ["closed", "closed"]
        assert "life_inproc" not in registry and "lifeproto" not in registry
        assert "lifeproto" not in session.prototypes.served
        parts = urlsplit(served.url)
        with pytest.raises(OSError):
            socket.create_connection((parts.hostname, parts.port), timeout=1).close()
        assert not runtime.running and old_loop.is_closed() and not finalizer.alive  # the finalizer ran
        assert loop_threads() == []  # no thread left behind
    finally:
        ip.run_line_magic("load_ext", "mcp_notebook")
        ip.run_line_magic("config", "MCPMagics.interactive = False")

    fresh: Any = session_of(ip)
    assert fresh is not session  # the reloaded magics own a new session
    conn = ip.run_line_magic("mcp", "connect life_again mcp_notebook.demo:echo_server") or fresh.registry.get(
        "life_again"
    )
    assert conn.state == "open" and fresh.runtime.loop is not old_loop and len(loop_threads()) == 1
    assert ip.run_line_magic("mcp", "call life_again.echo text=back --no-save").result().content[0].text == "back"
    ip.run_line_magic("mcp", "disconnect life_again")
    assert conn.state == "closed"
