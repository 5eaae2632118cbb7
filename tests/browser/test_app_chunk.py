"""The Apps code loads only when an App output appears, in JupyterLab in Debian's Chromium.

The labextension's start is small: the App renderer (``labextension/src/apps/output.ts``) fetches
the App's view and what it imports (``view.ts``, ``csp.ts``, ext-apps' AppBridge, the MCP SDK parts
it uses, zod) as an async chunk of the bundle when the first App output renders. A fresh browser
(this module's own page and profile: nothing cached) records every request of the page; the built
files are told apart by what they hold, not by the names the bundler gives them. When that fetch
fails, the output shows the tool's text and says so, and the next App output fetches it again.

JupyterLab only (the shared one of ``support/lab_fixtures.py``, with this module's own fresh page): Notebook 7 loads the same bundle.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from ..support.browser import LAB_ONLY, Front, load_extension, notebook, put_notebook

pytestmark = [pytest.mark.timeout(300), LAB_ONLY]

SERVER_CELL = "%%mcp server apps\nfrom tests.support.app_servers import make_server\napps_server = make_server()"
FRAME = "iframe.mcp-notebook-app-frame"  # the guard's frame; the App's own frame is inside it
INNER = "iframe"
STATIC = Path(__file__).resolve().parents[2] / "mcp_notebook" / "labextension" / "static"
OURS = "/lab/extensions/mcp-notebook/static/"
APPS_CODE = {"ext-apps": "ui/notifications/initialized", "zod": "ZodError", "the view": "mcpNotebookGuard"}
"""A string only each part of the Apps code holds: ext-apps' protocol, zod, our view's guard (``csp.ts``)."""


@pytest.fixture(scope="module", autouse=True)
def _view_bundle() -> None:
    from tests.support.app_servers import view_bundle

    view_bundle()  # raises PeersMissing (run `make peers-deps`) before any browser starts


def apps_code_files() -> dict[str, set[str]]:
    """Which built files of the labextension hold each part of the Apps code."""
    texts = {f.name: f.read_text(errors="replace") for f in STATIC.glob("*.js")}
    return {part: {name for name, text in texts.items() if marker in text} for part, marker in APPS_CODE.items()}


def test_the_apps_code_loads_only_when_an_app_output_appears(front: Front) -> None:
    """The page loads with its kernel idle, the extension answers the kernel, a server is defined, a cell
    prints: none of it fetches the Apps code. The first App output does, and the App runs."""
    from playwright.sync_api import expect

    parts = apps_code_files()
    assert all(parts.values()), parts  # each part is in some built file
    apps = set().union(*parts.values())
    entry = [f.name for f in STATIC.glob("remoteEntry.*.js")]
    assert len(entry) == 1 and entry[0] not in apps, (entry, parts)
    page = front.page
    assert page.url == "about:blank"  # this module's fresh page: nothing loaded, nothing cached
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url))

    def ours() -> set[str]:
        """The files of our labextension the page has asked for so far."""
        return {Path(url.split("?")[0]).name for url in fetched if OURS in url}

    name = front.path("lazy.ipynb")
    put_notebook(front.url, name, notebook([""] * 5))
    panel = front.open(name)  # the page loaded, the notebook's kernel idle
    assert page.evaluate("() => window.jupyterapp.hasPlugin('mcp-notebook:plugin')")
    assert entry[0] in ours(), ours()  # the extension itself loaded
    assert not ours() & apps, ours()
    load_extension(front, 0)
    front.run_in_cell(1, SERVER_CELL)
    front.run_in_cell(2, "print('no App here')")
    expect(panel.locator(".jp-Cell").nth(2).locator(".jp-OutputArea-output")).to_have_text("no App here")
    assert not ours() & apps, ours()

    front.run_in_cell(3, "%mcp call apps.counter")
    app = panel.locator(".mcp-notebook-app").first
    view = app.frame_locator(FRAME).frame_locator(INNER)
    expect(view.locator("body")).to_have_attribute("data-state", "connected")
    expect(view.locator("#count")).to_have_text("0")  # the App got its tool result
    assert apps <= ours(), (apps, ours())
    view.locator("#inc").click()  # and calls its server through the kernel
    expect(view.locator("#count")).to_have_text("1")


def test_an_app_whose_code_did_not_load_shows_its_text_and_the_next_one_loads_it(front: Front) -> None:
    """The view's chunk refused once: the output keeps the tool's text, its note and one dialog say why; run again,
    the cell's new output fetches the chunk and the App runs."""
    from playwright.sync_api import expect

    (chunk,) = apps_code_files()["the view"]
    refused: list[str] = []
    pattern = re.compile(re.escape(chunk))

    def refuse(route: Any) -> None:
        refused.append(route.request.url)
        route.abort()

    front.page.route(pattern, refuse)
    name = front.path("refused.ipynb")
    put_notebook(front.url, name, notebook([""] * 4))
    front.open(name)  # a new page: the view's code is not in it
    load_extension(front, 0)
    front.run_in_cell(1, SERVER_CELL)
    cell = front.run_in_cell(2, "%mcp call apps.counter")
    app = cell.locator(".mcp-notebook-app")
    expect(app).to_have_attribute("data-app-state", "fallback")
    expect(app.locator(".mcp-notebook-app-status")).to_have_text("App: counter from apps (ui://counter/app.html)")
    expect(app.locator(".mcp-notebook-app-note")).to_contain_text("its code did not load")
    expect(app.locator(".mcp-notebook-app-fallback-text")).to_contain_text("count is 0")
    expect(app.locator(FRAME)).to_have_count(0)
    dialog = front.page.locator(".jp-Dialog")
    expect(dialog).to_contain_text("MCP App could not open")
    dialog.locator(".jp-Dialog-footer").get_by_role("button", name="Close").click()  # an error dialog's one button
    expect(dialog).to_have_count(0)
    assert refused, "the view's chunk was never asked for"

    front.page.unroute(pattern, refuse)
    cell.locator(".jp-InputArea-editor").click()
    front.page.keyboard.press("Shift+Enter")  # the same call again: a new output, a new fetch
    view = cell.locator(".mcp-notebook-app").frame_locator(FRAME).frame_locator(INNER)
    expect(view.locator("body")).to_have_attribute("data-state", "connected")
    expect(view.locator("#count")).to_have_text("0")
