"""Our outputs read well in JupyterLab Light and Dark: contrast from computed styles, and the layout of listings.

JupyterLab (the shared one of ``support/lab_fixtures.py``) in Debian's Chromium. One notebook shows
each kind of thing we draw: a ``%%mcp server`` cell's table of what changed, a listing of more than
20 tools (one with a long description), a filtered listing, a report of a 3,000-line result, an
MCP App's frame, and a call waiting in its form (the cell's waiting badge, the live view's badge, the
form's error text).
In Light and then in Dark (``apputils:change-theme``, as the Settings menu does), every element of
ours that holds text is checked for WCAG AA contrast (4.5:1) between its text colour and the colour
behind it, both read from ``getComputedStyle`` and composited in a canvas as the page paints them
(translucent text and tints included); a screenshot of each theme goes to ``docs/images``.

Layout, in the page: table cells left-aligned (JupyterLab right-aligns them), the long listing in a
bounded scroll area with its row count, the long description folded to one line that opens, the long
result in a bounded box headed by its size.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from ..conftest import REPO_ROOT
from ..support.browser import LAB_ONLY, Front, load_extension, notebook, put_notebook

pytestmark = [LAB_ONLY, pytest.mark.timeout(600)]

SHOP = """\
%%mcp server shop
from typing import Annotated
from pydantic import BaseModel
from mcp.server.mcpserver import Elicit, MCPServer, Resolve
shop = MCPServer("shop")
def make(i):
    def fn(x: int = 0) -> int:
        return x + i
    return fn
for i in range(24):
    shop.tool(name=f"item_{i:02d}", description=f"Item {i}.")(make(i))
shop.tool(name="described", description="A tool whose description runs on and on. " * 8 + "\\nIts second line.")(make(0))
@shop.tool()
def long() -> str:
    return "\\n".join(f"line {n}" for n in range(3000))
class Colour(BaseModel):
    colour: str
async def ask_colour() -> Elicit[Colour]:
    return Elicit("Which colour?", Colour)
@shop.tool()
async def paint(thing: str, choice: Annotated[Colour, Resolve(ask_colour)]) -> str:
    return f"painted {thing} {choice.colour}"
"""
APPS = "%%mcp server apps\nfrom tests.support.app_servers import make_server\napps_server = make_server()"
CELLS = [SHOP, "%mcp tools shop", "%mcp tools shop 'item_0*'", "%mcp call shop.long", APPS, "%mcp call apps.counter"]
WAITING = "%mcp call shop.paint thing=door"

OURS = (
    ".mcpnb .hdr, .mcpnb .note, .mcpnb th, .mcpnb td, .mcpnb summary, .mcpnb .badge, .mcpnb pre, .mcpnb b,"
    " .mcp-notebook-badge, .mcp-elicitation .widget-html-content *, .mcp-notebook-app *"
)
"""Elements of ours that hold text: outputs (.mcpnb), the waiting cell's badge, the form's own text, the App's frame."""

CONTRAST = """(selectors) => {
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 1;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const paint = (colours) => {
    ctx.clearRect(0, 0, 1, 1);
    for (const c of colours) { ctx.fillStyle = 'rgba(0,0,0,0)'; ctx.fillStyle = c; ctx.fillRect(0, 0, 1, 1); }
    return Array.from(ctx.getImageData(0, 0, 1, 1).data);
  };
  const opaque = (c) => paint([c])[3] === 255;
  const lum = (rgb) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(rgb[0]) + 0.7152 * f(rgb[1]) + 0.0722 * f(rgb[2]);
  };
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const out = [];
  for (const el of panel.querySelectorAll(selectors)) {
    const own = Array.from(el.childNodes).filter((n) => n.nodeType === 3).map((n) => n.textContent).join('').trim();
    if (!own || el.getClientRects().length === 0 || getComputedStyle(el).visibility !== 'visible') continue;
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const bg = getComputedStyle(e).backgroundColor;
      layers.push(bg);
      if (opaque(bg)) break;
    }
    layers.push(getComputedStyle(document.body).getPropertyValue('--jp-layout-color0') || 'white');
    layers.reverse();
    const bg = paint(['white', ...layers]);
    const fg = paint(['white', ...layers, getComputedStyle(el).color]);
    const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    out.push({text: own.slice(0, 40), cls: (el.className && el.className.baseVal === undefined ? el.className : '') || el.tagName,
              ratio: (hi + 0.05) / (lo + 0.05), fg: fg.slice(0, 3).join(','), bg: bg.slice(0, 3).join(',')});
  }
  return out;
}"""


@pytest.fixture(scope="module", autouse=True)
def _view_bundle() -> None:
    from tests.support.app_servers import view_bundle

    view_bundle()  # raises PeersMissing (run `make peers-deps`) before any browser starts


def set_theme(front: Front, theme: str) -> None:
    light = "true" if theme == "JupyterLab Light" else "false"
    front.page.evaluate("(t) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})", theme)
    front.page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{light}'", timeout=30_000)
    front.page.wait_for_timeout(500)  # the theme's stylesheet applies after the attribute changes


def low_contrast(front: Front) -> tuple[list[dict[str, Any]], int]:
    found = front.page.evaluate(CONTRAST, OURS)
    return [f for f in found if f["ratio"] < 4.5], len(found)


def test_our_elements_read_well_in_light_and_dark(front: Front) -> None:
    from playwright.sync_api import expect

    name = front.path("themes.ipynb")
    put_notebook(front.url, name, notebook([""] * (len(CELLS) + 3)))
    panel = front.open(name)
    load_extension(front, 0)
    for i, source in enumerate(CELLS):
        front.run_in_cell(1 + i, source, timeout=120_000)
    waiting = front.run_in_cell(1 + len(CELLS), WAITING, wait=False)
    expect(waiting.locator(".mcp-elicitation")).to_be_visible(timeout=60_000)
    expect(waiting.locator(".mcp-notebook-badge")).to_be_visible()
    waiting.locator(".mcp-accept").click()  # the required colour is empty: the form says so, in its error colour
    expect(waiting.locator(".mcp-error small").first).to_contain_text("⚠")
    expect(panel.locator(".mcp-notebook-app").first).to_have_attribute("data-app-started", "yes", timeout=60_000)
    cells = panel.locator(".jp-Cell")

    # listings: left-aligned, empty columns hidden, more than 20 rows scroll in a bounded area with a count
    changes, tools, filtered = cells.nth(1), cells.nth(2), cells.nth(3)
    expect(changes.locator(".mcpnb .hdr").first).to_have_text("Server 'shop' is connected in-process.")
    expect(changes.locator(".mcpnb th")).to_have_text(["change", "kind", "name"])
    expect(tools.locator(".mcpnb th")).to_have_text(["server", "tool", "description", "parameters"])  # no title column
    scroll = tools.locator(".mcpnb .scroll")
    box = scroll.evaluate("e => [e.clientHeight, e.scrollHeight, getComputedStyle(e).overflowY]")
    assert box[0] < box[1] and box[2] == "auto" and box[0] < 600, box
    expect(tools.locator(".mcpnb .note")).to_have_text("27 rows")
    aligns = tools.locator(".mcpnb td, .mcpnb th").evaluate_all(
        "cells => cells.map(c => getComputedStyle(c).textAlign)"
    )
    assert set(aligns) == {"left"}, set(aligns)
    expect(filtered.locator(".mcpnb tr")).to_have_count(11)  # item_00 ... item_09 and the header
    fold = tools.locator(".mcpnb details.fold")
    expect(fold).to_have_count(1)
    one_line = fold.locator("summary").evaluate("e => e.getBoundingClientRect().height")
    fold.locator("summary").click()
    expect(fold.locator("div")).to_contain_text("Its second line.")
    # a long result: a bounded, scrollable box headed by its size
    report = cells.nth(4)
    expect(report.locator(".mcpnb .hdr").nth(1)).to_have_text(re.compile(r"^3,000 lines · [\d,]+ characters"))
    pre = report.locator(".mcpnb pre.box")
    size = pre.evaluate("e => [e.clientHeight, e.scrollHeight]")
    assert size[0] < size[1] and size[0] < 600, size
    assert one_line < 30, one_line  # folded to one line

    for theme, shot in (("JupyterLab Light", "themes-light.png"), ("JupyterLab Dark", "themes-dark.png")):
        set_theme(front, theme)
        try:
            bad, checked = low_contrast(front)
            front.page.screenshot(path=str(REPO_ROOT / "docs" / "images" / shot), full_page=True)
        finally:
            if theme != "JupyterLab Light":
                set_theme(front, "JupyterLab Light")  # the shared JupyterLab keeps its theme in its settings
        assert checked > 50, checked  # the tables, badges, form and App were all there to check
        assert bad == [], f"{theme}: {bad}"
