"""What the labextension costs a page: JupyterLab page load to an idle kernel, with mcp-notebook / without it.

P11  the time from navigation to "JupyterLab page loaded with an idle kernel" in Debian's Chromium
     (Playwright): JupyterLab with mcp-notebook installed as ``make`` installs it (the labextension
     and the server extension), against the same JupyterLab without the package (target: ratio of
     medians <= 1.05); and the Apps code (ext-apps, zod, the MCP SDK) is not fetched at load.

The signal, the same on both sides: the page's current widget is the notebook ``bench.ipynb``
and its ``sessionContext.kernelDisplayStatus`` is ``idle`` (what the browser tests wait for),
read on every animation frame by a script that runs before the page's own; the figure is that
frame's ``performance.now()``, i.e. milliseconds since navigation started. The notebook's kernel
is started once per side before timing and stays, so each load opens the notebook and connects
to that kernel: what is timed is the front end (our labextension and what it asks at
activation), not a kernel start (``--fresh-kernel`` adds one to every run, on both sides).

"Without" is a second server of the same JupyterLab whose ``LabApp.labextensions_path`` is a
temporary folder of links to every other installed labextension (not mcp-notebook) and whose
``ServerApp.jpserver_extensions`` leaves out ``mcp_notebook``; the script checks, in each page,
that our plugin is present or absent as it should be and which of our files were fetched.

Both servers run side by side; each run is a fresh browser context (empty cache) on a fresh
workspace, the sides alternate (with/without, then without/with), and each side's server is
warmed by one untimed load first. Best and median of ``--runs`` per side, the ratio of the medians
(the target's figure) and, for the record, the median ratio of each round's back-to-back pair
(steadier on a shared machine, as in overhead.py); the bytes are what the page fetched by the
time the kernel was idle (``performance`` resource entries). ``--build DIR`` times another build
of the labextension (a copy of ``mcp_notebook/labextension``, e.g. from an older commit) as the
"with" side, linked in the same way, with the server extension on.

Usage: python bench/page_load.py [--runs 5] [--fresh-kernel] [--build DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.browser import (  # noqa: E402 - after sys.path holds the repository root
    CHROMIUM_FLAGS,
    api,
    ensure_chromium,
    notebook,
    running_lab,
    shut_down_kernels,
)

NAME = "bench.ipynb"
PLUGIN = "mcp-notebook:plugin"
OURS = "/lab/extensions/mcp-notebook/"
TARGET = 1.05
APPS_MARKERS = ("ui/notifications/initialized", "ZodError", "mcpNotebookGuard")
"""Strings only the Apps code holds: ext-apps' protocol (its AppBridge), zod, our view's guard (``csp.ts``)."""
BUILT = Path(__file__).resolve().parent.parent / "mcp_notebook" / "labextension"

# Runs before the page's scripts (in the top frame): records when the notebook's kernel is first idle.
MARKS = """(name) => {
  if (window !== window.top) return;
  performance.setResourceTimingBufferSize(100000);
  const marks = (window.__pageLoad = {});
  const tick = () => {
    const app = window.jupyterapp;
    const panel = app && app.shell.currentWidget;
    const session = panel && panel.sessionContext;
    if (session && panel.context && panel.context.path === name && session.kernelDisplayStatus === 'idle') {
      marks.idle = performance.now();
      return;
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}"""

FETCHED = """() => performance.getEntriesByType('resource').map(e => ({
  url: e.name, wire: e.transferSize, encoded: e.encodedBodySize, decoded: e.decodedBodySize
}))"""


def apps_files(built: Path) -> set[str]:
    """Our built files that hold the Apps code (by content, whatever the bundler names them)."""
    return {
        f.name for f in (built / "static").glob("*.js") if any(m in f.read_text(errors="replace") for m in APPS_MARKERS)
    }  # fmt: skip


def labextensions(base: Path, ours: Path | None) -> tuple[str, ...]:
    """Server options for a labextensions folder of links to every installed labextension but mcp-notebook,
    and to ``ours`` as mcp-notebook when given; without ``ours``, no server extension of ours either."""
    from jupyter_core.paths import jupyter_path
    from jupyterlab_server.config import get_federated_extensions

    folder = base / "labextensions"
    folder.mkdir()
    found = get_federated_extensions(jupyter_path("labextensions"))
    targets = {name: Path(ext["ext_path"]) for name, ext in found.items() if name != "mcp-notebook"}
    if ours:
        targets["mcp-notebook"] = ours
    for name, target in targets.items():
        link = folder / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target.resolve(), target_is_directory=True)
    return (
        f"--LabApp.labextensions_path={folder}",
        *([] if ours else ["--ServerApp.jpserver_extensions=mcp_notebook=False"]),
    )


@dataclass
class Side:
    name: str
    url: str
    root: Path
    ours: bool  # mcp-notebook should be in this page

    def reset(self, fresh_kernel: bool) -> None:
        """A first visit: no saved workspace; with ``fresh_kernel``, no kernel either."""
        for f in (self.root.parent / "workspaces").iterdir():
            f.unlink()
        if fresh_kernel:
            shut_down_kernels(self.url)

    def start_kernel(self) -> None:
        session = {"path": NAME, "type": "notebook", "name": NAME, "kernel": {"name": "python3"}}
        api(self.url, "sessions", "POST", session)


def load(browser: Any, side: Side) -> dict[str, Any]:
    """One page load in a fresh context: its time to an idle kernel (ms) and what it fetched."""
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    try:
        page = context.new_page()
        page.add_init_script(f"({MARKS})({json.dumps(NAME)})")
        page.goto(f"{side.url}/lab/tree/{NAME}")
        page.wait_for_function("() => window.__pageLoad && window.__pageLoad.idle !== undefined", timeout=120_000)
        idle = page.evaluate("() => window.__pageLoad.idle")
        fetched = page.evaluate(FETCHED)
        present = page.evaluate(f"() => window.jupyterapp.hasPlugin({json.dumps(PLUGIN)})")
    finally:
        context.close()
    if present != side.ours:
        raise RuntimeError(f"{side.name}: the page {'lacks' if side.ours else 'has'} {PLUGIN}")
    ours = [f for f in fetched if OURS in f["url"]]
    if bool(ours) != side.ours:
        raise RuntimeError(f"{side.name}: the page fetched {len(ours)} files of mcp-notebook")
    js = [f for f in fetched if re.search(r"\.js(\?|$)", f["url"])]
    return {
        "ms": idle,
        "ours": ours,
        "ours_bytes": sum(f["decoded"] for f in ours),
        "ours_wire": sum(f["wire"] for f in ours),
        "js_bytes": sum(f["decoded"] for f in js),
        "js_files": len(js),
    }


def main(argv: list[str] | None = None) -> int:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--fresh-kernel", action="store_true", help="start a new kernel in every run (both sides)")
    parser.add_argument(
        "--build",
        type=Path,
        help="time this built labextension (a copy of mcp_notebook/labextension, e.g. an older one)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    built = args.build or BUILT
    apps = apps_files(built)
    if not apps:
        raise SystemExit(f"no built file in {built} holds the Apps code ({APPS_MARKERS}): build the labextension")

    with ExitStack() as stack:
        base = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="page-load-")))
        sides = []
        for name, ours in (("with", True), ("without", False)):
            (base / name).mkdir()
            options = labextensions(base / name, args.build if ours else None) if args.build or not ours else ()
            url, root = stack.enter_context(
                running_lab(base / name, {NAME: notebook(["x = 1"])}, expose_app=True, args=options)
            )
            log = (base / name / "lab.log").read_text(errors="replace")
            if ("mcp-notebook: OAuth sign-in callback" in log) != ours:
                raise RuntimeError(f"{name}: mcp_notebook's server extension is {'not ' if ours else ''}loaded")
            sides.append(Side(name, url, root, ours))
        pw = stack.enter_context(sync_playwright())
        browser = pw.chromium.launch(executable_path=ensure_chromium(), headless=True, args=CHROMIUM_FLAGS)
        stack.callback(browser.close)

        for side in sides:
            side.start_kernel()
            side.reset(args.fresh_kernel)
            load(browser, side)  # warms the server (and its kernel)
        runs: dict[str, list[dict[str, Any]]] = {s.name: [] for s in sides}
        for i in range(args.runs):
            for side in sides if i % 2 == 0 else sides[::-1]:
                side.reset(args.fresh_kernel)
                runs[side.name].append(load(browser, side))

    times = {name: [r["ms"] for r in rs] for name, rs in runs.items()}
    median = {name: statistics.median(t) for name, t in times.items()}
    last = {name: rs[-1] for name, rs in runs.items()}
    fetched_apps = sorted({Path(f["url"].split("?")[0]).name for r in runs["with"] for f in r["ours"]} & apps)
    ratio = median["with"] / median["without"]
    pairs = statistics.median(w / o for w, o in zip(times["with"], times["without"], strict=True))
    results: dict[str, Any] = {
        "P11 page load to an idle kernel, with / without mcp-notebook": {
            "with_ms": median["with"],
            "without_ms": median["without"],
            "with_best_ms": min(times["with"]),
            "without_best_ms": min(times["without"]),
            "ratio": ratio,
            "target": TARGET,
            "pair_ratio": pairs,
            "runs": args.runs,
            "fresh_kernel": args.fresh_kernel,
        },
        "mcp-notebook fetched at load": {
            "bytes": last["with"]["ours_bytes"],
            "wire_bytes": last["with"]["ours_wire"],
            "files": sorted(Path(f["url"].split("?")[0]).name for f in last["with"]["ours"]),
            "page_js_bytes_with": last["with"]["js_bytes"],
            "page_js_bytes_without": last["without"]["js_bytes"],
            "apps_files": sorted(apps),
            "apps_files_fetched_at_load": fetched_apps,
        },
    }
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    p, f = results.values()
    kernel = "a new kernel each run" if args.fresh_kernel else "the notebook's kernel running"
    print(f"JupyterLab page load to an idle kernel (Chromium, {args.runs} runs each, {kernel})")
    print(f"  {'with mcp-notebook':22} best {p['with_best_ms']:7.0f} ms   median {p['with_ms']:7.0f} ms")
    print(f"  {'without':22} best {p['without_best_ms']:7.0f} ms   median {p['without_ms']:7.0f} ms")
    verdict = "ok" if ratio <= TARGET else "OVER"
    print(f"  {'ratio of medians':22} {ratio:.3f}   target <= {TARGET}   {verdict}")
    print(f"  {'median pair ratio':22} {pairs:.3f}   (each round's two loads run back to back)")
    print(
        f"  mcp-notebook JS fetched at load: {f['bytes']:,} bytes ({f['wire_bytes']:,} on the wire) in {len(f['files'])} files;"
        f" the page's JS {f['page_js_bytes_with']:,} bytes with, {f['page_js_bytes_without']:,} without"
    )
    apps_verdict = "not fetched at load: ok" if not fetched_apps else f"FETCHED at load: {', '.join(fetched_apps)}"
    print(f"  the Apps code ({', '.join(sorted(apps))}): {apps_verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
