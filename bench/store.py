"""What saving flows costs: record size, and restoring many records when a notebook opens.

S1  bytes of a saved record / bytes of its ``request_state`` plus its questions (target <= 1.2).
    A record adds a fixed part (the fields DESIGN.md requires) to the state and the questions, so
    the ratio depends on how big those are; every waiting round of the demo server is shown.
    Records come from real flows on the demo server (state sealed by the SDK), as the kernel sends
    them to the extension (compact JSON). Also shown: the same record as it sits in the ``.ipynb``,
    where nbformat indents the metadata.
S2  restoring 1,000 records (copies of provision_db's round-two record) / ``json.loads`` of the
    same metadata block. The restore side is what
    the kernel does with the extension's reply: decode the message, check every record, merge them
    into the store (``Frontend.handle``). Best of several repetitions on each side.
S3  the first ``%mcp flows`` of a fresh kernel on a notebook holding 1,000 saved records (target
    <= 0.3 s): real waiting flows (each its own sealed state, signed by this user) written into a
    ``.ipynb``'s metadata, then in fresh processes ``%load_ext`` and ``%mcp flows --from PATH`` (the
    file read, every record checked and its signature verified, the table built and shown), timed
    from before the line; median of 5 processes.

Usage: python bench/store.py [--records 1000] [--repeat 15] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import time
from typing import Any

from IPython.testing.globalipapp import start_ipython


def compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


class Capture:
    """A store backend that keeps what would go to the notebook."""

    def __init__(self) -> None:
        self.saved: list[dict[str, Any]] = []

    def save(self, record: dict[str, Any]) -> None:
        self.saved.append(record)

    def delete(self, flow_id: str) -> None:
        pass


def real_records() -> list[dict[str, Any]]:
    """Records of waiting rounds: provision_db rounds one and two, a prompt and a resource."""
    ip = start_ipython()
    ip.run_line_magic("load_ext", "mcp_notebook")
    ip.run_line_magic("config", "MCPMagics.interactive = False")
    hub = ip.magics_manager.registry["MCPMagics"].session
    capture = Capture()
    hub.store.backend = capture
    with contextlib.redirect_stdout(io.StringIO()):
        ip.run_line_magic("mcp", "connect demo mcp_notebook.demo:demo")
        for line in (
            "call demo.provision_db name=orders size=large --answer region=us-east-1 --accept-defaults",
            "prompt demo.briefing topic=MCP --answer audience=teachers",
            "read demo notes://ada/latest --accept-defaults",
            "call demo.ask_everything --accept-defaults",
        ):
            with contextlib.suppress(Exception):  # a form the presets cannot fill still saved its round
                ip.run_line_magic("mcp", line)
        ip.run_line_magic("mcp", "disconnect demo")
    return capture.saved


def sizes(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    import nbformat

    rows = []
    for record in records:
        payload = len((record.get("request_state") or "").encode()) + len(compact(record["pending"]))
        nb = nbformat.v4.new_notebook()
        empty = len(nbformat.writes(nb).encode())
        nb.metadata["mcp_notebook"] = {"flows": {record["id"]: record}}
        in_file = len(nbformat.writes(nb).encode()) - empty
        rows.append(
            {
                "call": f"{record['method']} {record['name']} round {record['round']}",
                "record": len(compact(record)),
                "state+questions": payload,
                "ratio": len(compact(record)) / payload,
                "fixed": len(compact(record)) - payload,
                "in .ipynb": in_file,
                "ratio in .ipynb": in_file / payload,
            }
        )
    return rows


def restore(template: dict[str, Any], count: int, repeat: int) -> dict[str, float]:
    from mcp_notebook.flows.store import Store
    from mcp_notebook.notebook.frontend import Frontend

    flows = {}
    for i in range(count):
        flow_id = f"{i:08x}"
        flows[flow_id] = {**template, "id": flow_id, "cell_id": f"cell-{i}"}
    block = json.dumps({"flows": flows})
    wire = json.dumps({"op": "restore", "v": 1, "reason": "hello", "flows": flows, "path": "nb.ipynb"})

    def ours() -> float:
        frontend = Frontend(Store())
        start = time.perf_counter()
        frontend.handle(json.loads(wire))
        elapsed = time.perf_counter() - start
        assert len(frontend.store) == count
        return elapsed

    def baseline() -> float:
        start = time.perf_counter()
        json.loads(block)
        return time.perf_counter() - start

    ours_times, base_times = [], []
    for _ in range(repeat):
        base_times.append(baseline())
        ours_times.append(ours())
    best_ours, best_base = min(ours_times), min(base_times)
    return {
        "records": count,
        "bytes": len(block),
        "restore_ms": best_ours * 1e3,
        "json_loads_ms": best_base * 1e3,
        "ratio": best_ours / best_base,
    }


def notebook_of_waiting_flows(count: int, path: str) -> int:
    """``count`` real flows of the demo server waiting at their second round, saved into the notebook at ``path``."""
    import nbformat
    from IPython import get_ipython

    ip = start_ipython() or get_ipython()  # real_records() started it
    ip.run_line_magic("load_ext", "mcp_notebook")
    ip.run_line_magic("config", "MCPMagics.interactive = False")
    hub = ip.magics_manager.registry["MCPMagics"].session
    capture = Capture()
    hub.store.backend = capture
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        ip.run_line_magic("mcp", "connect demo mcp_notebook.demo:demo")
        for i in range(count):
            with contextlib.suppress(Exception):  # stops at round two (no preset for the confirmation): saved
                ip.run_line_magic("mcp", f"call demo.provision_db name=db{i} --answer region=us-east-1")
        ip.run_line_magic("mcp", "disconnect demo")
    latest = {r["id"]: r for r in capture.saved}
    nb = nbformat.v4.new_notebook()
    nb.metadata["mcp_notebook"] = {"flows": latest}
    nbformat.write(nb, path)
    return len(latest)


FIRST_LISTING = """
import time, contextlib, io
from IPython.testing.globalipapp import start_ipython
ip = start_ipython()
ip.display_formatter.active_types = list(ip.display_formatter.formatters)
ip.run_line_magic("load_ext", "mcp_notebook")
ip.run_line_magic("config", "MCPMagics.interactive = False")
t = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()) as out:
    table = ip.run_line_magic("mcp", "flows --from {path}")
    ip.display_formatter.format(table)
elapsed = time.perf_counter() - t
print(len(table.rows), elapsed)
"""


def first_listing(path: str, runs: int = 5) -> dict[str, float]:
    import os
    import statistics
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    times, rows = [], 0
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", FIRST_LISTING.format(path=path)], capture_output=True, text=True, check=True, env=env)  # fmt: skip
        rows_text, elapsed = out.stdout.strip().splitlines()[-1].split()
        rows, _ = int(rows_text), times.append(float(elapsed))
    return {"rows": rows, "seconds": statistics.median(times)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    records = real_records()
    rows = sizes(records)
    worst = max(r["ratio"] for r in rows)
    typical = next(r for r in records if r["name"] == "provision_db" and r["round"] == 2)
    restored = restore(typical, args.records, args.repeat)
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = f"{folder}/waiting.ipynb"
        saved = notebook_of_waiting_flows(args.records, path)
        listed = first_listing(path)
    if args.json:
        print(json.dumps({"S1": rows, "S1_worst": worst, "S2": restored, "S3": {**listed, "saved": saved}}, indent=2))
        return 0
    print("S1  saved record bytes / (request_state + questions) bytes   (target <= 1.2)")
    for r in rows:
        print(
            f"    {r['call']:<42} record {r['record']:>5} B = state+questions {r['state+questions']:>5} B + {r['fixed']:>3} B  "
            f"ratio {r['ratio']:.3f}   (in .ipynb {r['in .ipynb']:>5} B, {r['ratio in .ipynb']:.3f})"
        )
    print(f"    worst ratio {worst:.3f}  {'OK' if worst <= 1.2 else 'ABOVE TARGET'}")
    print("    (the fixed part is the fields DESIGN.md requires: v, id, cell_id, server, method, name, arguments,")
    print("     round, updated; the ratio falls under 1.2 once the state and questions pass ~1.5 KB)")
    print(
        f"S2  restore {restored['records']} records ({restored['bytes'] / 1024:.0f} KiB of metadata) / json.loads of the block"
    )
    print(
        f"    restore {restored['restore_ms']:.2f} ms  json.loads {restored['json_loads_ms']:.2f} ms  ratio {restored['ratio']:.2f}"
    )
    verdict = "ok" if listed["seconds"] <= 0.3 else "OVER"
    print(f"S3  first %mcp flows of a fresh kernel, a notebook of {saved} saved records   (target <= 0.3 s)")
    print(f"    {listed['rows']} rows listed in {listed['seconds']:.3f} s  {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
