"""Render the protocol trace of both generations and save it as docs/images/trace.png.

The HTML is exactly what a cell shows for ``%mcp call ... --trace`` (``TraceView``), taken in
Debian's Chromium through Playwright: ``.venv/bin/python scripts/screenshot_trace.py``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import mcp_notebook
from mcp_notebook.notebook.display import TraceView

OUT = Path(__file__).resolve().parent.parent / "docs" / "images" / "trace.png"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def main() -> None:
    from playwright.sync_api import sync_playwright

    parts = []
    for name, protocol in (("modern", "2026-07-28"), ("legacy", "legacy")):
        mcp_notebook.connect(name, "mcp_notebook.demo:demo", protocol=protocol)
        flow = mcp_notebook.call(
            f"{name}.provision_db", {"name": "orders"}, answers={"region": "us-east-1"}, accept_defaults=True
        )
        flow.result()
        parts.append(TraceView(flow)._repr_mimebundle_()["text/html"])
    page_html = "<html><body style='font-family:sans-serif;width:1100px'>" + "<hr/>".join(parts) + "</body></html>"
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            tmp, executable_path="/usr/bin/chromium", headless=True, args=FLAGS, viewport={"width": 1140, "height": 900}
        )
        page = ctx.new_page()
        page.set_content(page_html)
        OUT.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(OUT), full_page=True)
        ctx.close()
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
