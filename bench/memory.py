"""Memory over many calls: 10,000 sequential ``%mcp call`` on one echo server keep the kernel's RSS flat.

M1  RSS growth over ``--calls`` sequential ``%mcp call SERVER.echo text=hello`` (target: what the calls
    add stays within 10 MB for 10,000 calls), on the demo echo server in-process
    (``mcp_notebook.demo:echo_server``) and over stdio (``python -m mcp_notebook.demo echo``, a real
    subprocess, whose own memory is not counted). After a warm-up of 500 calls, RSS is sampled every
    1,000 calls (``/proc/self/statm``, after ``gc.collect()``); growth is the last sample less the first.
M2  the sizes of every per-session, per-connection and per-flow collection that could grow with the
    number of calls or rounds (the store's tables, the connection's logs and flows, the page's slots,
    writers and reports, the live Apps, the session's notes, the last flow's rounds, notes, answers and
    logs, IPython's ``Out``), printed beside their bounds: none may be proportional to the calls.

What a kernel does: the calls run in a real IPython shell with every display format active
(``overhead.shell``), each as a cell of its own through ``run_cell`` (a number, ``In``, the input
transformers, the displayhook). Two things differ from a bare shell and are made as in ipykernel:
displays are not kept (the terminal shell's ``DisplayPublisher`` appends every display to
``history_manager.outputs``; ipykernel's keeps nothing unless ``store_display_history``), and output
goes nowhere (``like_a_kernel``, ``_Discard``). ``Out`` stays empty: a ``%mcp call`` line in a cell is
awaited by ``magics/cell_await.py`` and gives the cell no value (``x = %mcp call ...`` binds the
result, which is the user's), so IPython's output cache (``cache_size``, 1,000) holds no flows. A
plain ``%mcp call`` outside such a cell returns the ``Flow``; ``run_line_magic``, as ``--line-magic``
calls it (and ``bench/overhead.py``), fills no ``Out`` either.

IPython's own part: every cell costs IPython memory that no extension can free (``In`` / ``_ih`` and
the ``_iN`` variables, the history's caches, the compiled cell kept for tracebacks), about 0.8 kB a
cell here, so 10,000 cells grow a kernel by some 8 MB whatever they run. It is measured as many cells
of the same length that call nothing ("IPython, no call", run first), and the target is compared with
the rest ("ours" = growth - IPython's). The growth of a cell is counted whole there, our input
transformer's longer cell included.

``--tracemalloc`` also takes snapshots at call 1,000 and at call 5,000 (or the end) and prints the
allocation sites that grew most between them: how the growing collections were found (RSS figures
are then meaningless: tracemalloc's own memory grows with every allocation).

Usage: python bench/memory.py [--calls 10000] [--transport inproc|stdio|both] [--line-magic]
                              [--tracemalloc] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import os
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from overhead import ECHO_STDIO, shell  # noqa: E402 - after sys.path holds bench/ and the repository root

TARGET_MB = 10.0
WARM_UP = 500
EVERY = 1_000
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mb() -> float:
    """This process's resident set, in MB (after a full collection, so garbage waiting for it is not counted)."""
    gc.collect()
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE / 1e6


def collections(ip: Any, name: str) -> dict[str, tuple[int, Any]]:
    """``{what: (size now, bound)}`` of everything of the session that could grow with calls."""
    from mcp_notebook.flows import store as store_module
    from mcp_notebook.session import session as session_module
    from mcp_notebook.wire import connection as connection_module

    session = ip.magics_manager.registry["MCPMagics"].session
    store = session.store
    conn = session.registry.get(name)
    gone = store._gone
    sizes: dict[str, tuple[int, Any]] = {
        "store records": (len(store._records), "waiting flows"),
        "store origins": (len(store._origin), "waiting flows"),
        "store trusted ids": (len(store._trusted), "waiting flows"),
        "store deleted ids": (len(gone), getattr(store_module, "GONE_KEPT", None)),
        "connection log": (len(conn.logs), connection_module.LOG_LIMIT),
        "connection stderr": (len(conn.stderr), connection_module.LOG_LIMIT),
        "connection active flows": (len(conn.flows), "running flows"),
        "connection resource wakers": (len(conn.resource_wakers), "watches"),
        "session notes": (len(session.notes), getattr(session_module, "NOTES_KEPT", None)),
    }
    page = session.frontend
    for attr, bound in (("_reports", "REPORTS_KEPT"), ("_writers", "WRITERS_KEPT"), ("_pages", "PAGES_KEPT")):
        if hasattr(page, attr):
            from mcp_notebook.notebook import frontend

            sizes[f"page {attr.strip('_')}"] = (len(getattr(page, attr)), getattr(frontend, bound))
    records = getattr(page, "outputs", None)
    if records is not None and hasattr(records, "_slots"):
        from mcp_notebook.notebook.output_records import SLOTS_KEPT

        sizes["page output slots"] = (len(records._slots), SLOTS_KEPT)
    if session.apps is not None:
        from mcp_notebook.notebook import apps

        sizes["live Apps"] = (len(session.apps.apps), getattr(apps, "APPS_KEPT", None))
    last = session.last_flow
    if last is not None:
        from mcp_notebook.flows import flow

        for what, attr, bound in (
            ("rounds", "rounds", "ROUNDS_KEPT"),
            ("notes", "notes", "NOTES_KEPT"),
            ("answers", "answer_summary", "ANSWERS_KEPT"),
            ("logs", "logs", "LOGS_KEPT"),
        ):
            sizes[f"last flow {what}"] = (len(getattr(last, attr)), getattr(flow, bound, None))
    sizes["IPython Out"] = (len(ip.user_ns.get("Out", {})), ip.displayhook.cache_size)
    return sizes


def one_cell(ip: Any, cell: str) -> Callable[[], None]:
    """Run ``cell`` as a kernel runs a cell (``store_history``: its number, ``In``, the displayhook, ``Out``)."""

    def one() -> None:
        result = ip.run_cell(cell, store_history=True)
        if not result.success:
            raise RuntimeError(f"{cell!r} failed: {result.error_in_exec or result.error_before_exec}")

    return one


def sampled(one: Callable[[], None], calls: int, trace: bool) -> dict[str, Any]:
    """``one()`` ``WARM_UP`` times, then ``calls`` times with RSS sampled every ``EVERY`` (tracemalloc snapshots if ``trace``)."""
    done = 0

    def until(n: int) -> None:
        nonlocal done
        with contextlib.redirect_stdout(_Discard()):
            while done < n:
                one()
                done += 1

    until(WARM_UP)
    samples: list[tuple[int, float]] = [(0, rss_mb())]
    snapshots: list[tuple[int, tracemalloc.Snapshot]] = []
    started = time.perf_counter()
    for at in range(EVERY, calls + 1, EVERY):
        until(WARM_UP + at)
        if trace and at in (EVERY, min(5 * EVERY, calls)):
            snapshots.append((at, tracemalloc.take_snapshot()))
        samples.append((at, rss_mb()))
    seconds = time.perf_counter() - started
    result: dict[str, Any] = {
        "calls": samples[-1][0],
        "start_mb": samples[0][1],
        "end_mb": samples[-1][1],
        "growth_mb": samples[-1][1] - samples[0][1],
        "samples_mb": [round(mb, 2) for _, mb in samples],
        "ms_per_call": seconds / max(1, samples[-1][0]) * 1e3,
    }
    if len(snapshots) == 2:
        (a, first), (b, second) = snapshots
        top = second.compare_to(first, "traceback")[:12]
        result["grew"] = {"between": [a, b], "sites": [_site(stat) for stat in top]}
    return result


def calls(ip: Any, label: str, target_line: str, count: int, line_magic: bool, trace: bool) -> dict[str, Any]:
    """``count`` sequential calls of the echo tool on a connection to ``target_line``, and the collections after."""
    name = f"mem_{label}"
    quiet(lambda: ip.run_line_magic("mcp", f"connect {name} {target_line}"))
    line = f"call {name}.echo text=hello"
    one = (lambda: ip.run_line_magic("mcp", line)) if line_magic else one_cell(ip, f"%mcp {line}")
    result = sampled(one, count, trace)
    sizes = collections(ip, name)
    result["collections"] = {k: {"size": v, "bound": b} for k, (v, b) in sizes.items()}
    quiet(lambda: ip.run_line_magic("mcp", f"disconnect {name}"))
    return result


def ipython_cells(ip: Any, count: int) -> dict[str, Any]:
    """IPython's own cost of ``count`` cells of the same length that call nothing (``In``, ``_iN``, the
    compiled cells kept for tracebacks, the history's caches): a kernel pays it for any cell."""
    return sampled(one_cell(ip, "_mem = 'call mem_inproc.echo text=hello'"), count, False)


def _site(stat: Any) -> dict[str, Any]:
    frames = [f"{frame.filename.rsplit('site-packages/', 1)[-1]}:{frame.lineno}" for frame in stat.traceback[-4:]]
    return {"kb": round(stat.size_diff / 1e3, 1), "count": stat.count_diff, "where": frames}


class _Discard(io.TextIOBase):
    """Standard output that keeps nothing (a ``StringIO`` would hold a thousand reports between samples)."""

    def write(self, text: str) -> int:
        return len(text)


def quiet(fn: Callable[[], Any]) -> Any:
    with contextlib.redirect_stdout(_Discard()):
        return fn()


def like_a_kernel(ip: Any) -> None:
    """Display outputs go nowhere and are not kept, as in ipykernel (``ZMQDisplayPublisher``).

    The terminal shell's ``DisplayPublisher`` appends every display to ``history_manager.outputs``
    (IPython 9); ipykernel sends it on iopub and keeps it only with ``store_display_history``
    (default ``False``). Left as it is, that list would count 10,000 reports against us.
    """
    from IPython.core.displaypub import DisplayPublisher

    class KernelPublisher(DisplayPublisher):
        def publish(self, data: Any, metadata: Any = None, *args: Any, **kwargs: Any) -> None:
            return None  # sent to the front end and forgotten

        def clear_output(self, wait: bool = False) -> None:
            return None

    ip.display_pub = KernelPublisher(shell=ip, parent=ip)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--transport", choices=["inproc", "stdio", "both"], default="both")
    parser.add_argument("--line-magic", action="store_true", help="run_line_magic, not run_cell: no Out entries")
    parser.add_argument("--tracemalloc", action="store_true", help="print what grew between call 1,000 and 5,000")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.tracemalloc:
        tracemalloc.start(4)

    ip = shell()
    like_a_kernel(ip)
    if args.tracemalloc:  # every allocation traced: a first connection (the SDK's imports) takes minutes
        ip.run_line_magic("config", "MCPMagics.connect_timeout = 900")
    targets = {
        "in-process": ("inproc", "mcp_notebook.demo:echo_server"),
        "stdio": ("stdio", f"-- {' '.join(ECHO_STDIO)}"),
    }
    if args.transport != "both":
        targets = {k: v for k, v in targets.items() if v[0] == args.transport}
    base = None if args.line_magic else ipython_cells(ip, args.calls)  # first: no run leaves it freed memory
    results = {
        f"M1 {what}": calls(ip, label, target, args.calls, args.line_magic, args.tracemalloc)
        for what, (label, target) in targets.items()
    }
    ipython_mb = base["growth_mb"] if base is not None else 0.0
    for r in results.values():
        r["ours_mb"] = r["growth_mb"] - ipython_mb  # what the calls add beyond any cell's cost to IPython
    if args.json:
        out: dict[str, Any] = {k: {**v, "target_mb": TARGET_MB} for k, v in results.items()}
        if base is not None:
            out["IPython, no call"] = base
        print(json.dumps(out, indent=2, default=str))
        return 0
    via = "run_line_magic" if args.line_magic else "run_cell, as a kernel runs cells"
    print(
        f"{'measure':17} {'calls':>7} {'start':>9} {'end':>9} {'growth':>9} {'IPython':>9} {'ours':>9} {'target':>9}"
        f"      {'per call':>8}   ({via}; RSS after gc.collect())"
    )
    for name, r in results.items():
        verdict = "ok" if r["ours_mb"] <= TARGET_MB else "OVER"
        print(
            f"{name:17} {r['calls']:7,} {r['start_mb']:7.1f}MB {r['end_mb']:7.1f}MB {r['growth_mb']:+7.2f}MB "
            f"{ipython_mb:+7.2f}MB {r['ours_mb']:+7.2f}MB {'<= ' + str(TARGET_MB):>9} {verdict:4} {r['ms_per_call']:6.2f}ms"
        )
        print(f"{'':17} every {EVERY:,} calls: {' '.join(f'{mb:.1f}' for mb in r['samples_mb'])} MB")
    if base is not None:
        print(
            f"{'IPython, no call':17} {base['calls']:7,} {base['start_mb']:7.1f}MB {base['end_mb']:7.1f}MB "
            f"{base['growth_mb']:+7.2f}MB   as many cells of the same length that call nothing: IPython's own part"
        )
    print("M2 collections after the calls (size / bound):")
    for name, r in results.items():
        shown = ", ".join(f"{k} {v['size']}/{v['bound']}" for k, v in r["collections"].items())
        print(f"  {name}: {shown}")
        for site in r.get("grew", {}).get("sites", []):
            print(f"    {site['kb']:+9.1f} kB {site['count']:+7} blocks  {' < '.join(reversed(site['where']))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
