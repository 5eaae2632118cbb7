"""The first call of a session in a fresh kernel, against the raw SDK in a fresh kernel.

P10   ``%load_ext mcp_notebook``, ``%mcp connect`` (the in-process demo server) and the first
      ``%mcp call``, run as one cell right after the kernel started / ``import mcp``, the same
      server, ``Client(...)`` and ``call_tool`` as one cell (target <= 1.0).
P10'  the connect and the first call made 3 s after ``%load_ext``, as a person types them
      (target <= 0.3 s on this machine): ``%load_ext`` has the kernel import what they need while
      it is idle (magics/warm.py).
P10'' the worst case of that: a busy cell sent right after ``%load_ext`` waits for the import in
      progress; its time from sending to done, with ``%load_ext`` before it / without (for the record).

Real kernels (``jupyter_client``), timed from sending the cell to the kernel going idle; each
figure is the median of ``--runs`` fresh kernels per side, run alternately.

Usage: python bench/first_call.py [--runs 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

FIRST = "%load_ext mcp_notebook\n%config MCPMagics.interactive = False\n%mcp connect demo mcp_notebook.demo:demo\n%mcp call demo.echo text=hello"
LOAD = "%load_ext mcp_notebook\n%config MCPMagics.interactive = False"
CALL = "%mcp connect demo mcp_notebook.demo:demo\n%mcp call demo.echo text=hello"
RAW = """import mcp
from mcp import Client
from mcp_notebook.demo import make_demo
async with Client(make_demo()) as client:
    result = await client.call_tool("echo", {"text": "hello"})"""
BUSY = "total = 0\nfor i in range(3_000_000):\n    total += i % 7"


class Kernel:
    """A fresh python3 kernel; ``run`` times a cell from sending it to the kernel going idle."""

    def __init__(self) -> None:
        from jupyter_client import KernelManager

        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel()
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def send(self, code: str) -> str:
        return self.kc.execute(code, allow_stdin=False)

    def wait(self, msg_id: str) -> float:
        while True:
            msg = self.kc.get_iopub_msg(timeout=120)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "error":
                raise RuntimeError(f"{msg['content']['ename']}: {msg['content']['evalue']}")
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return time.perf_counter()

    def run(self, code: str) -> float:
        start = time.perf_counter()
        return self.wait(self.send(code)) - start

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def once(kind: str) -> float:
    kernel = Kernel()
    try:
        if kind == "raw":
            return kernel.run(RAW)
        if kind == "cold":
            return kernel.run(FIRST)
        if kind == "typed":
            kernel.run(LOAD)
            time.sleep(3)
            return kernel.run(CALL)
        start = time.perf_counter()
        if kind == "busy-after-load":
            kernel.send(LOAD)
        busy = kernel.send(BUSY)
        return kernel.wait(busy) - start
    finally:
        kernel.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    once("cold")  # the checkout's .pyc files written once
    kinds = ("raw", "cold", "typed", "busy", "busy-after-load")
    times: dict[str, list[float]] = {k: [] for k in kinds}
    for _ in range(args.runs):
        for kind in kinds:
            times[kind].append(once(kind))
    m = {k: statistics.median(v) for k, v in times.items()}
    results: dict[str, dict[str, Any]] = {
        "P10 first result, fresh kernel / raw SDK": {"ours_s": m["cold"], "raw_s": m["raw"], "ratio": m["cold"] / m["raw"], "target": 1.0},
        "P10' connect + first call, 3 s after %load_ext": {"ours_s": m["typed"], "target_s": 0.3},
        "P10'' a busy cell sent right after %load_ext / alone": {"ours_s": m["busy-after-load"], "raw_s": m["busy"], "ratio": m["busy-after-load"] / m["busy"]},
    }  # fmt: skip
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(
        f"{'measure':52} {'ours':>8} {'raw SDK':>8} {'ratio':>7} {'target':>9}   (medians of {args.runs} fresh kernels)"
    )
    for name, v in results.items():
        if "ratio" in v:
            target = v.get("target")
            verdict = "" if target is None else ("ok" if v["ratio"] <= target else "OVER")
            print(f"{name:52} {v['ours_s']:7.3f}s {v['raw_s']:7.3f}s {v['ratio']:7.3f} {('<= ' + str(target)) if target else '':>9} {verdict}")  # fmt: skip
        else:
            verdict = "ok" if v["ours_s"] <= v["target_s"] else "OVER"
            print(f"{name:52} {v['ours_s']:7.3f}s {'':>8} {'':>7} {'<= ' + str(v['target_s']) + ' s':>9} {verdict}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
