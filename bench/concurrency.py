"""100 concurrent headless flows in one process / the raw SDK running the same 100 concurrently.

Each flow is the demo's two-question ``provision_db`` (three requests, answered from presets),
over stdio and in-process. Our side starts 100 ``mcp_notebook.call`` flows from the caller's
thread and waits for all; the raw side ``asyncio.gather``s 100 manual input-required loops on one
``mcp.Client``. Blocks alternate and the best of each side is kept. Target: ratio <= 1.25.

Usage: python bench/concurrency.py [--flows 100] [--blocks 5]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from overhead import DEMO_STDIO, RawClient, _accept_defaults, stdio_params  # noqa: E402 - after sys.path holds bench/ and the repository root

ARGS = {"name": "orders"}
ANSWERS = {"region": "us-east-1"}


async def manual(client: Any) -> None:
    from mcp.types import InputRequiredResult

    session = client.session
    result = await session.call_tool("provision_db", ARGS, allow_input_required=True)
    while isinstance(result, InputRequiredResult):
        responses = {k: await _accept_defaults(None, r.params) for k, r in (result.input_requests or {}).items()}
        result = await session.call_tool(
            "provision_db",
            ARGS,
            input_responses=responses,
            request_state=result.request_state,
            allow_input_required=True,
        )
    assert result.content[0].text == "Provisioned 'orders' in us-east-1 (size small).", result


def measure(label: str, target: Any, raw_target: Any, flows: int, blocks: int) -> dict[str, float]:
    import mcp_notebook

    mcp_notebook.connect(label, target)
    raw = RawClient(raw_target)

    def ours() -> float:
        start = time.perf_counter()
        running = [
            mcp_notebook.call(f"{label}.provision_db", ARGS, answers=ANSWERS, accept_defaults=True)
            for _ in range(flows)
        ]
        for flow in running:
            assert flow.result().content[0].text.startswith("Provisioned")
        return time.perf_counter() - start

    async def gathered() -> float:
        start = time.perf_counter()
        await asyncio.gather(*(manual(raw.client) for _ in range(flows)))
        return time.perf_counter() - start

    ours()
    raw.run(gathered())
    o, r = [], []
    for _ in range(blocks):
        r.append(raw.run(gathered()))
        o.append(ours())
    raw.close()
    return {"ours_ms": min(o) * 1e3, "raw_ms": min(r) * 1e3, "ratio": min(o) / min(r)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--flows", type=int, default=100)
    parser.add_argument("--blocks", type=int, default=5)
    args = parser.parse_args(argv)
    from mcp_notebook.demo import make_demo

    results = {
        "stdio": measure("conc_stdio", DEMO_STDIO, stdio_params(DEMO_STDIO), args.flows, args.blocks),
        "in-process": measure("conc_inproc", make_demo(), make_demo(), args.flows, args.blocks),
    }
    print(f"{args.flows} concurrent three-request flows   {'ours':>10} {'raw SDK':>10} {'ratio':>7}  target")
    for name, r in results.items():
        verdict = "ok" if r["ratio"] <= 1.25 else "OVER"
        print(f"  {name:34} {r['ours_ms']:8.1f}ms {r['raw_ms']:8.1f}ms {r['ratio']:7.3f}  <= 1.25 {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
