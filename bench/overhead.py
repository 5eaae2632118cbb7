"""Overhead of the notebook client against the raw SDK, measured side by side in one run.

P1  ``%mcp call`` headless / raw ``Client.call_tool``, sequential calls on the same echo server,
    over stdio (target <= 1.15) and in-process (target <= 1.5).
P2  a three-round flow with preset answers / the raw SDK manual loop, over stdio (target <= 1.15).
P1 also over streamable HTTP (target <= 1.15): the path with the OAuth provider and the back-channel router.
P3  ``%load_ext mcp_notebook`` / ``import mcp`` wall time in fresh processes (target <= 0.10).

The raw client of P1 and P2 advertises what the notebook's client advertises (``same_capabilities``):
2026-07-28 requests carry the client's capabilities and the server checks them on every call, so a
raw client that advertises less makes the server do less. The time of a minimal raw client (an
elicitation callback only) is printed beside it for the record.

Both sides run in this process, alternating in blocks, and the best block of each side is kept
(the least disturbed by the rest of the machine). The magic side runs in a real IPython shell with
every display format active, as in a kernel, so rendering the result is part of the cost.

Usage: python bench/overhead.py [--calls 300] [--blocks 5] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

ECHO_STDIO = [sys.executable, "-m", "mcp_notebook.demo", "echo"]
DEMO_STDIO = [sys.executable, "-m", "mcp_notebook.demo", "demo"]


def shell() -> Any:
    from IPython.testing.globalipapp import start_ipython

    ip = start_ipython()
    ip.display_formatter.active_types = list(ip.display_formatter.formatters)  # like a kernel
    ip.run_line_magic("load_ext", "mcp_notebook")
    ip.run_line_magic("config", "MCPMagics.interactive = False")
    return ip


def quiet(fn: Callable[[], Any]) -> Any:
    with contextlib.redirect_stdout(io.StringIO()):
        return fn()


def best_of(blocks: int, ours: Callable[[], float], raw: Callable[[], float]) -> tuple[float, float, float]:
    """Alternate raw/ours ``blocks`` times; each returns seconds per operation.

    Returns the best time of each side and the median of the per-pair ratios: a pair runs back
    to back, so a slow spell of the (shared, virtual) machine hits both sides of it alike.
    """
    o, r = [], []
    for _ in range(blocks):
        r.append(raw())
        o.append(ours())
    return min(o), min(r), statistics.median(a / b for a, b in zip(o, r, strict=True))


# ---------------------------------------------------------------------- raw SDK sides
class RawClient:
    """A raw ``mcp.Client`` kept open on its own loop in this thread (as a script would)."""

    def __init__(self, target: Any, **options: Any) -> None:
        """``options`` go to ``mcp.Client`` (default: an elicitation callback accepting defaults)."""
        self.loop = asyncio.new_event_loop()
        self.target = target
        self.options = options or {"elicitation_callback": _accept_defaults}
        self.client: Any = None
        self.stop = asyncio.Event()
        ready = asyncio.Event()
        self.owner = self.loop.create_task(self._own(ready))  # enter and exit in one task
        self.loop.run_until_complete(ready.wait())

    async def _own(self, ready: asyncio.Event) -> None:
        from mcp import Client

        async with Client(self.target, **self.options) as client:
            self.client = client
            ready.set()
            await self.stop.wait()

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def close(self) -> None:
        self.stop.set()
        self.loop.run_until_complete(self.owner)
        self.loop.close()


def same_capabilities() -> dict[str, Any]:
    """``mcp.Client`` options that advertise what the notebook's client advertises, with do-nothing callbacks.

    Under 2026-07-28 every request carries the client's capabilities in ``_meta``, and the server
    checks them on each request. The notebook's client advertises elicitation, tool-enabled
    sampling, roots, logging and two extensions (tasks, MCP Apps); a raw client with only an
    elicitation callback sends less, so an in-process server (whose work counts in the same
    process) does less per call. Like-for-like raw sides advertise the same.
    """
    from mcp_notebook.wire.apps_ext import advertisement
    from mcp_notebook.wire.connection import _sampling_capabilities
    from mcp_notebook.wire.tasks import TasksExtension

    async def no_sampling(ctx: Any, params: Any) -> Any:
        raise RuntimeError("not used by the benchmark")

    async def no_roots(ctx: Any) -> Any:
        raise RuntimeError("not used by the benchmark")

    async def ignore(*args: Any) -> None:
        return None

    return {
        "elicitation_callback": _accept_defaults,
        "sampling_callback": no_sampling,
        "sampling_capabilities": _sampling_capabilities(),
        "list_roots_callback": no_roots,
        "logging_callback": ignore,
        "log_level": "info",
        "message_handler": ignore,
        "extensions": [TasksExtension(lambda *a: None), advertisement()],
    }


async def _accept_defaults(ctx: Any, params: Any) -> Any:
    from mcp.types import ElicitResult

    props = params.requested_schema.get("properties", {})
    content = {k: v["default"] for k, v in props.items() if "default" in v}
    if "region" in props:
        content["region"] = "us-east-1"
    return ElicitResult(action="accept", content=content)


@contextlib.contextmanager
def http_echo() -> Iterator[str]:
    """The demo echo server over streamable HTTP on a free loopback port (a subprocess, stopped after)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_notebook.demo", "echo", "--transport", "http", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


def stdio_params(command: list[str]) -> Any:
    from mcp import StdioServerParameters

    return StdioServerParameters(command=command[0], args=command[1:])


def p1(ip: Any, label: str, target_line: str, raw_target: Any, calls: int, blocks: int) -> dict[str, Any]:
    name = f"echo_{label}"
    quiet(lambda: ip.run_line_magic("mcp", f"connect {name} {target_line}"))
    raw = RawClient(raw_target, **same_capabilities())
    line = f"call {name}.echo text=hello"

    def ours() -> float:
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            for _ in range(calls):
                ip.run_line_magic("mcp", line)
        return (time.perf_counter() - start) / calls

    async def raw_loop(client: Any = None) -> float:
        client = client or raw.client
        start = time.perf_counter()
        for _ in range(calls):
            await client.call_tool("echo", {"text": "hello"})
        return (time.perf_counter() - start) / calls

    quiet(lambda: [ip.run_line_magic("mcp", line) for _ in range(20)])  # warm both sides
    raw.run(raw_loop())
    o, r, ratio = best_of(blocks, ours, lambda: raw.run(raw_loop()))
    raw.close()
    minimal = RawClient(raw_target)
    m = min(minimal.run(raw_loop(minimal.client)) for _ in range(blocks))
    minimal.close()
    quiet(lambda: ip.run_line_magic("mcp", f"disconnect {name}"))
    return {"ours_ms": o * 1e3, "raw_ms": r * 1e3, "ratio": ratio, "minimal_ms": m * 1e3}


def p2(ip: Any, calls: int, blocks: int) -> dict[str, Any]:
    from mcp.types import ElicitRequest, InputRequiredResult

    quiet(lambda: ip.run_line_magic("mcp", f"connect demo_p2 -- {' '.join(DEMO_STDIO)}"))
    raw = RawClient(stdio_params(DEMO_STDIO), **same_capabilities())
    line = "call demo_p2.provision_db name=orders --answer region=us-east-1 --accept-defaults --no-save"
    flows = max(30, calls // 5)

    async def manual(client: Any = None) -> None:
        session = (client or raw.client).session
        args = {"name": "orders"}
        result = await session.call_tool("provision_db", args, allow_input_required=True)
        while isinstance(result, InputRequiredResult):
            responses = {}
            for key, request in (result.input_requests or {}).items():
                assert isinstance(request, ElicitRequest)
                responses[key] = await _accept_defaults(None, request.params)
            result = await session.call_tool(
                "provision_db",
                args,
                input_responses=responses,
                request_state=result.request_state,
                allow_input_required=True,
            )
        assert result.content[0].text.startswith("Provisioned")

    def ours() -> float:
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            for _ in range(flows):
                ip.run_line_magic("mcp", line)
        return (time.perf_counter() - start) / flows

    async def raw_loop(client: Any = None) -> float:
        start = time.perf_counter()
        for _ in range(flows):
            await manual(client)
        return (time.perf_counter() - start) / flows

    quiet(lambda: [ip.run_line_magic("mcp", line) for _ in range(5)])
    raw.run(raw_loop())
    o, r, ratio = best_of(blocks, ours, lambda: raw.run(raw_loop()))
    raw.close()
    minimal = RawClient(stdio_params(DEMO_STDIO))
    m = min(minimal.run(raw_loop(minimal.client)) for _ in range(blocks))
    minimal.close()
    quiet(lambda: ip.run_line_magic("mcp", "disconnect demo_p2"))
    return {"ours_ms": o * 1e3, "raw_ms": r * 1e3, "ratio": ratio, "minimal_ms": m * 1e3}


def p3(runs: int) -> dict[str, Any]:
    """Fresh processes: time only the statement itself, after IPython is up (as in a kernel)."""
    ours_code = (
        "from IPython.testing.globalipapp import start_ipython; ip = start_ipython(); import time; "
        "t = time.perf_counter(); ip.run_line_magic('load_ext', 'mcp_notebook'); print(time.perf_counter() - t)"
    )
    raw_code = "from IPython.testing.globalipapp import start_ipython; ip = start_ipython(); import time; t = time.perf_counter(); import mcp; print(time.perf_counter() - t)"

    # Bytecode as any installed package has it: PYTHONDONTWRITEBYTECODE (set on some CI machines)
    # would make the editable checkout compile from source on every start, while the SDK in
    # site-packages got its .pyc files from pip.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def once(code: str) -> float:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
        return float(out.strip().splitlines()[-1])

    once(ours_code)  # writes the checkout's .pyc files
    ours, raw = [], []
    for _ in range(runs):
        raw.append(once(raw_code))
        ours.append(once(ours_code))
    o, r = statistics.median(ours), statistics.median(raw)
    return {"ours_ms": o * 1e3, "raw_ms": r * 1e3, "ratio": o / r}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--blocks", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    ip = shell()
    from mcp_notebook.demo import make_echo

    with http_echo() as url:  # the HTTP path carries the sign-in provider and the back-channel router
        http = p1(ip, "http", url, url, args.calls, args.blocks)
    results = {
        "P1 stdio": (
            p1(ip, "stdio", f"-- {' '.join(ECHO_STDIO)}", stdio_params(ECHO_STDIO), args.calls, args.blocks),
            1.15,
        ),
        "P1 streamable HTTP": (http, 1.15),
        "P1 in-process": (p1(ip, "inproc", "mcp_notebook.demo:echo_server", make_echo(), args.calls, args.blocks), 1.5),
        "P2 three rounds, stdio": (p2(ip, args.calls, args.blocks), 1.15),
        "P3 load_ext / import mcp": (p3(5), 0.10),
    }
    if args.json:
        print(json.dumps({k: {**v, "target": t} for k, (v, t) in results.items()}, indent=2))
        return 0
    print(
        f"{'measure':28} {'ours':>10} {'raw SDK':>10} {'ratio':>7} {'target':>7}        {'minimal raw':>11}   (best times; median ratio of back-to-back pairs)"
    )
    for name, (r, target) in results.items():
        verdict = "ok" if r["ratio"] <= target else "OVER"
        minimal = f"{r['minimal_ms']:9.3f}ms" if "minimal_ms" in r else ""
        print(
            f"{name:28} {r['ours_ms']:8.3f}ms {r['raw_ms']:8.3f}ms {r['ratio']:7.3f} {'<= ' + str(target):>7} {verdict:4}   {minimal:>11}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
