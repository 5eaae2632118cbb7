"""How an App output behaves as a cell output, in JupyterLab in Debian's Chromium (``labextension/src/apps/output.ts``).

- The frame is sized by the App (``ui/notifications/size-changed``) and starts small: a one-line
  App's frame is about a line high, not a large empty box.
- The tool's own text result stays readable under a live App (folded), and opens by itself, with a
  note, when the App does not start: its page throws (said at once), or never sends ``initialized``
  (said after 10 s).
- A page reload on the same kernel shows what the App last fetched of its own tool, not the
  output's first, older result (the official ``server-basic-vanillajs``: "Get Server Time").
- The official ``@modelcontextprotocol/server-pdf`` (2.0.4) App renders a PDF made here with PDF.js:
  its worker code, a ``data:`` URL started from a ``blob:`` URL, is allowed by the App's CSP
  (``worker-src blob:``, ``script-src`` ``data:`` ``blob:``), and no CSP violation is logged.

JupyterLab only (the shared one of ``support/lab_fixtures.py``): the renderer is the same in Notebook 7 (``browser/test_apps.py`` runs both).
"""

from __future__ import annotations

import re
import shlex
import time
from pathlib import Path
from typing import Any

import pytest

from ..support.browser import LAB_ONLY, Front, load_extension, notebook, put_notebook, wait_for, wait_saved

pytestmark = [pytest.mark.timeout(300), LAB_ONLY]

SERVER_CELL = "%%mcp server apps\nfrom tests.support.app_servers import make_server\napps_server = make_server()"
FRAME = "iframe.mcp-notebook-app-frame"  # the guard's frame; the App's own frame is inside it
INNER = "iframe"


@pytest.fixture(scope="module", autouse=True)
def _view_bundle() -> None:
    from tests.support.app_servers import view_bundle

    view_bundle()  # raises PeersMissing (run `make peers-deps`) before any browser starts


def start(front: Front, name: str, cells: list[str], blank: int = 2) -> Any:
    """Open a fresh notebook ``name`` in this test's folder, load the extension and run ``cells`` one by one;
    returns the panel."""
    put_notebook(front.url, front.path(name), notebook([""] * (1 + len(cells) + blank)))
    panel = front.open(front.path(name))
    load_extension(front, 0)
    for i, source in enumerate(cells):
        front.run_in_cell(1 + i, source)
    return panel


def test_a_one_line_app_gets_a_small_frame_and_keeps_its_text(front: Front) -> None:
    from playwright.sync_api import expect

    panel = start(front, "one-line.ipynb", [SERVER_CELL, "%mcp call apps.one_line"])
    app = panel.locator(".mcp-notebook-app").first
    view = app.frame_locator(FRAME).frame_locator(INNER)
    expect(view.locator("#line")).to_have_text("a single line")
    expect(app).to_have_attribute("data-app-started", "yes")
    frame = app.locator(FRAME)
    line = view.locator("#line").evaluate("e => e.getBoundingClientRect().height")

    def fitted() -> float | None:  # the size-changed sent after the text arrived has landed
        height = float(frame.evaluate("e => e.getBoundingClientRect().height"))
        return height if line <= height < 80 else None

    height = wait_for(fitted, "the frame sized to the App's line", timeout=20)
    assert 10 < line <= height < 80, (line, height)  # the App's line, not the old 150 px (or 60 px) box
    text = app.locator("details.mcp-notebook-app-result")
    expect(text).to_have_count(1)
    assert text.evaluate("e => e.open") is False  # folded under a working App
    expect(text.locator(".mcp-notebook-app-result-text")).to_have_text('{"line": "a single line"}')


def test_an_app_that_does_not_start_leaves_the_tools_text(front: Front) -> None:
    from playwright.sync_api import expect

    panel = start(front, "broken.ipynb", [SERVER_CELL, "%mcp call apps.broken", "%mcp call apps.silent"])
    broken = panel.locator(".jp-Cell").nth(2).locator(".mcp-notebook-app")
    expect(broken).to_have_attribute(
        "data-app-started", "failed", timeout=5_000
    )  # said at once, not after the 10 s wait
    note = broken.locator(".mcp-notebook-app-note")
    expect(note).to_contain_text("The App failed before it started: Uncaught Error: broken on purpose <b>not bold</b>.")
    expect(note.locator("b")).to_have_count(0)  # the App's error message is text, never HTML
    result = broken.locator("details.mcp-notebook-app-result")
    assert result.evaluate("e => e.open") is True
    expect(result.locator(".mcp-notebook-app-result-text")).to_be_visible()
    expect(result.locator(".mcp-notebook-app-result-text")).to_have_text("the broken tool's result: 42")

    silent = panel.locator(".jp-Cell").nth(3).locator(".mcp-notebook-app")
    expect(silent).to_have_attribute("data-app-state", "live")
    expect(silent).to_have_attribute("data-app-started", "waiting")
    expect(silent).to_have_attribute("data-app-started", "failed", timeout=20_000)
    expect(silent.locator(".mcp-notebook-app-note")).to_contain_text(
        'The App did not start (it sent no "initialized" within 10 s).'
    )
    expect(silent.locator(".mcp-notebook-app-result-text")).to_be_visible()
    expect(silent.locator(".mcp-notebook-app-result-text")).to_have_text("the silent tool's result: 43")


def test_a_reload_shows_what_the_app_fetched_last(front: Front) -> None:
    from playwright.sync_api import expect

    from tests.peers import servers

    command = shlex.join(servers.basic_vanillajs())
    panel = start(front, "reload.ipynb", [f"%mcp connect time -- {command}", "%mcp call time.get-time"])
    app = panel.locator(".mcp-notebook-app").first
    shown = app.frame_locator(FRAME).frame_locator(INNER).locator("#server-time")
    iso = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
    expect(shown).to_have_text(iso)
    first = shown.text_content() or ""
    time.sleep(1.1)  # the server's clock moves on
    app.frame_locator(FRAME).frame_locator(INNER).get_by_role(
        "button", name="Get Server Time"
    ).click()  # the App calls get-time itself
    expect(shown).not_to_have_text(first)
    fetched = shown.text_content() or ""
    assert iso.search(fetched), fetched
    front.save()
    wait_saved(front)

    front.page.reload()  # the same kernel: the App is live there and opens again by itself
    front.wait_idle(front.path("reload.ipynb"))
    app = front.page.locator(".jp-NotebookPanel:visible .mcp-notebook-app").first
    expect(app).to_have_attribute("data-app-state", "live")
    shown = app.frame_locator(FRAME).frame_locator(INNER).locator("#server-time")
    expect(shown).to_have_text(fetched)  # what the App showed last, not the cell's first result
    expect(app.locator(".mcp-notebook-app-result-text")).to_contain_text(
        first[:19]
    )  # the cell's text is the call's own


def minimal_pdf(text: str) -> bytes:
    """A one-page PDF (Helvetica, one line of ``text``) with a correct cross-reference table."""
    stream = f"BT /F1 24 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def test_the_official_pdf_app_renders_a_page(front: Front, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    from tests.peers import servers

    papers = tmp_path / "papers"  # outside the notebook's folder, given to the server as its README says
    papers.mkdir()
    pdf = papers / "hello.pdf"
    pdf.write_bytes(minimal_pdf("Hello from mcp-notebook"))
    console: list[str] = []
    front.page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
    command = shlex.join(servers.pdf("--stdio", str(papers)))
    panel = start(
        front, "pdf.ipynb", [f"%mcp connect pdf -- {command}", f"%mcp call pdf.display_pdf url={shlex.quote(str(pdf))}"]
    )
    app = panel.locator(".mcp-notebook-app").first
    expect(app.locator(".mcp-notebook-app-status")).to_have_text(
        "App: display_pdf from pdf (ui://pdf-viewer/mcp-app.html)"
    )
    expect(app).to_have_attribute("data-app-started", "yes", timeout=60_000)
    view = app.frame_locator(FRAME).frame_locator(INNER)
    expect(view.locator("#total-pages")).to_contain_text("1", timeout=60_000)  # PDF.js read the document
    canvas = view.locator("#pdf-canvas")
    expect(canvas).to_be_visible()
    drawn = canvas.evaluate(
        "c => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let ink = 0; for (let i = 0; i < d.length; i += 4) if (d[i] < 128 && d[i + 3] > 0) ink++; return [c.width, c.height, ink]; }"
    )
    assert drawn[0] > 100 and drawn[1] > 100 and drawn[2] > 50, drawn  # a page with dark text pixels on it
    refused = [line for line in console if "Content Security Policy" in line]
    assert refused == [], refused
