"""``mapping.map`` of 1,000 calls / the raw SDK running the same 1,000 calls, 16 at a time.

Our side maps the demo's ``echo`` over 1,000 rows with ``concurrency=16`` (headless flows on the
session's loop, results in order); the raw side ``asyncio.gather``s the 1,000 ``call_tool``s on
one ``mcp.Client`` behind an ``asyncio.Semaphore(16)``. Over stdio and in-process. Blocks
alternate and the best of each side is kept. Target: ratio <= 1.10.

The raw client advertises what the notebook's client advertises (``overhead.same_capabilities``):
2026 requests carry the client's capabilities and the server checks them on every call, which an
in-process server does in this process. Two more figures are printed for the record: the raw
gather with a minimal client (an elicitation callback only), and the same gather on the session
connection's own ``mcp.Client`` on the session's loop (``map`` / that is what the flows and the
map add, nothing else).

Usage: python bench/map.py [--rows 1000] [--concurrency 16] [--blocks 5]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
from typing import Any

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from overhead import ECHO_STDIO, RawClient, same_capabilities, stdio_params  # noqa: E402 - after sys.path holds bench/ and the repository root

TARGET = 1.10


def measure(label: str, target: Any, raw_target: Any, rows: int, concurrency: int, blocks: int) -> dict[str, float]:
    from mcp_notebook.mapping import map as mapping
    from mcp_notebook.session.session import Session

    session = Session()
    conn = session.connect(label, target)
    raw = RawClient(raw_target, **same_capabilities())
    minimal = RawClient(raw_target)
    arguments = [{"text": f"row {i}"} for i in range(rows)]

    def ours() -> float:
        start = time.perf_counter()
        results = mapping.map(f"{label}.echo", arguments, concurrency=concurrency, session=session)
        elapsed = time.perf_counter() - start
        assert [r.content[0].text for r in results] == [a["text"] for a in arguments]
        return elapsed

    async def gathered(client: Any = None) -> float:
        client = client or raw.client
        gate = asyncio.Semaphore(concurrency)

        async def one(args: dict[str, Any]) -> Any:
            async with gate:
                return await client.call_tool("echo", args)

        start = time.perf_counter()
        results = await asyncio.gather(*(one(a) for a in arguments))
        elapsed = time.perf_counter() - start
        assert [r.content[0].text for r in results] == [a["text"] for a in arguments]
        return elapsed

    ours()
    raw.run(gathered())
    minimal.run(gathered(minimal.client))
    o, r, c, m = [], [], [], []
    for _ in range(
        blocks
    ):  # each side starts from a collected heap: a full collection falls in no side's block by chance
        gc.collect()
        r.append(raw.run(gathered()))
        gc.collect()
        o.append(ours())
        gc.collect()
        c.append(session.runtime.run(gathered(conn.client)))
        gc.collect()
        m.append(minimal.run(gathered(minimal.client)))
    raw.close()
    minimal.close()
    session.close()
    return {
        "ours_ms": min(o) * 1e3,
        "raw_ms": min(r) * 1e3,
        "ratio": min(o) / min(r),
        "conn_ms": min(c) * 1e3,
        "minimal_ms": min(m) * 1e3,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--blocks", type=int, default=5)
    args = parser.parse_args(argv)
    from mcp_notebook.demo import make_echo

    results = {
        "stdio": measure("map_stdio", ECHO_STDIO, stdio_params(ECHO_STDIO), args.rows, args.concurrency, args.blocks),
        "in-process": measure("map_inproc", make_echo(), make_echo(), args.rows, args.concurrency, args.blocks),
    }
    print(
        f"map of {args.rows} echo calls, {args.concurrency} at a time   {'ours':>10} {'raw SDK':>10} {'ratio':>7}  target      {'conn.client':>11} {'ours/conn':>9} {'minimal raw':>11}"
    )
    for name, r in results.items():
        verdict = "ok" if r["ratio"] <= TARGET else "OVER"
        print(
            f"  {name:38} {r['ours_ms']:8.1f}ms {r['raw_ms']:8.1f}ms {r['ratio']:7.3f}  <= {TARGET} {verdict:4} "
            f"{r['conn_ms']:9.1f}ms {r['ours_ms'] / r['conn_ms']:9.3f} {r['minimal_ms']:9.1f}ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
