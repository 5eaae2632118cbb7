"""MCP Apps in cell outputs, in a real browser: the labextension's renderer (``labextension/src/apps/output.ts``).

JupyterLab and Notebook 7 in Debian's Chromium (the shared servers of ``support/lab_fixtures.py``). The notebook defines the test Apps server
(``tests/support/app_servers.py``: a counter App and a hostile probe App, on the ext-apps view bundle) in
a ``%%mcp server`` cell, so the kernel holds it in process. A call of a tool with an App shows the
App live in a sandboxed frame inside the guard's frame (both ``allow-scripts allow-forms``, no ``allow-same-origin``, the CSP
``<meta>`` first); the App gets the tool result, calls its server through the kernel, and the probe
finds every way out blocked. A link the App asks for opens only after a dialog. Re-running the
server cell reloads the App; a kernel restart marks it stale; a reloaded page with a fresh kernel
shows the text fallback with a disabled "Activate App" until ``%load_ext``, then activates on a click.

Cells are run one by one: the kernel shows an App only once the page's extension answered its
hello, which happens between cells.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from ..support.browser import (
    LAB_ONLY,
    Front,
    has_class,
    load_extension,
    notebook,
    put_notebook,
    wait_for,
    wait_saved,
)

pytestmark = pytest.mark.timeout(300)

SERVER_CELL = "%%mcp server apps\nfrom tests.support.app_servers import make_server\napps_server = make_server()"
FRAME = "iframe.mcp-notebook-app-frame"  # the guard's frame (labextension/src/apps/csp.ts); the App's own frame is inside it
INNER = "iframe"
APP_SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "images" / "app.png"


@pytest.fixture(scope="module", autouse=True)
def _view_bundle() -> None:
    from tests.support.app_servers import view_bundle

    view_bundle()  # raises PeersMissing (run `make peers-deps`) before any browser starts


def start(front: Front, name: str, calls: list[str], blank: int = 4) -> Any:
    """Open a fresh notebook ``name`` in this test's folder, load the extension, define the server and run
    ``calls``; returns the panel."""
    put_notebook(front.url, front.path(name), notebook([""] * (2 + len(calls) + blank)))
    panel = front.open(front.path(name))
    load_extension(front, 0)
    front.run_in_cell(1, SERVER_CELL)
    for i, call in enumerate(calls):
        front.run_in_cell(2 + i, call)
    return panel


def srcdoc_frame(front: Front, index: int = 0) -> Any:
    """The Playwright frame of the ``index``-th App (an ``about:srcdoc`` document inside the guard's ``about:srcdoc``)."""

    def apps() -> list[Any]:
        return [
            f
            for f in front.page.frames
            if f.url == "about:srcdoc" and f.parent_frame is not None and f.parent_frame.url == "about:srcdoc"
        ]

    return wait_for(apps, "the App's frame")[index]


def link_asker(front: Front) -> tuple[Any, Any]:
    """``ask(req, url)``: the App (its frame) asks the host to open ``url``; ``reply(req)``: the host's answer."""
    inner = srcdoc_frame(front)
    inner.evaluate(
        "() => { window.__replies = {}; addEventListener('message', e => { if (e.data && e.data.id >= 900) window.__replies[e.data.id] = e.data; }); }"
    )

    def ask(req: int, url: str) -> None:
        inner.evaluate(
            f"() => parent.postMessage({{jsonrpc: '2.0', id: {req}, method: 'ui/open-link', params: {{url: {json.dumps(url)}}}}}, '*')"
        )

    def reply(req: int) -> Any:
        return wait_for(lambda: inner.evaluate(f"() => window.__replies[{req}]"), f"the reply to {req}")

    return ask, reply


def test_an_app_runs_sandboxed_and_reaches_only_its_server(front: Front) -> None:
    from playwright.sync_api import expect

    panel = start(front, "apps.ipynb", ["%mcp call apps.counter", "%mcp call apps.probe"])
    app = panel.locator(".mcp-notebook-app").first
    expect(app).to_have_class(has_class("mcp-notebook-form"))
    expect(app.locator(".mcp-notebook-app-status")).to_have_text("App: counter from apps (ui://counter/app.html)")
    expect(app).to_have_attribute("data-server", "apps")
    expect(app).to_have_attribute("data-app-id", re.compile(r"^[0-9a-f]{16}$"))
    frame = app.locator(FRAME)
    expect(frame).to_have_attribute("sandbox", "allow-scripts allow-forms")
    guard = frame.get_attribute("srcdoc") or ""
    assert "frame-src 'none'" in guard and "<script>" in guard  # the guard: no navigation of the App's frame
    inner = app.frame_locator(FRAME).locator(INNER)
    expect(inner).to_have_attribute("sandbox", "allow-scripts allow-forms")
    srcdoc = inner.get_attribute("srcdoc") or ""
    assert (
        "delete window[name]" in srcdoc.split("</script>", 1)[0]
    )  # the prelude runs before the App: no RTCPeerConnection
    policy = "default-src 'none'; script-src 'unsafe-inline' data: blob:; style-src 'unsafe-inline' data: blob:; img-src data: blob:; font-src data: blob:; media-src data: blob:; worker-src blob:; connect-src 'none'; frame-src 'none'; base-uri 'none'; object-src 'none'; form-action 'none'"
    assert srcdoc.startswith(f'<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="{policy}">'), srcdoc[
        :500
    ]
    assert guard.startswith(f'<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="{policy}">'), guard[
        :500
    ]  # the App's srcdoc inherits it: the same, frame-src 'none' always
    expect(app.locator(".mcp-notebook-app-fallback")).to_have_count(0)  # live: no fallback text

    view = app.frame_locator(FRAME).frame_locator(INNER)
    expect(view.locator("body")).to_have_attribute("data-state", "connected")
    expect(view.locator("#count")).to_have_text("0")  # from the tool result the host sent
    expect(view.locator("#status")).to_have_text("tool-result")
    view.locator("#inc").click()  # a tools/call from the App, through the comm and the kernel
    expect(view.locator("#count")).to_have_text("1")
    expect(view.locator("#status")).to_contain_text("increment")
    height = frame.evaluate("e => e.getBoundingClientRect().height")
    assert 60 <= height < 400, height  # sized by the App (its three lines), not the initial 40 px

    probe = panel.locator(".mcp-notebook-app").nth(1).frame_locator(FRAME).frame_locator(INNER)
    expect(probe.locator("body")).to_have_attribute("data-state", "reported", timeout=60_000)
    outcomes = probe.locator("#outcomes li").all_text_contents()
    assert len(outcomes) == 10, outcomes
    assert not [o for o in outcomes if "allowed:" in o], outcomes


@LAB_ONLY
def test_a_link_opens_only_after_the_dialog(front: Front) -> None:
    from playwright.sync_api import expect

    panel = start(front, "links.ipynb", ["%mcp call apps.counter"])
    expect(
        panel.locator(".mcp-notebook-app").first.frame_locator(FRAME).frame_locator(INNER).locator("body")
    ).to_have_attribute("data-state", "connected")
    ask, reply = link_asker(front)

    ask(901, "javascript:alert(1)")  # refused without a dialog
    assert reply(901)["result"] == {"isError": True}
    dialog = front.page.locator(".jp-Dialog")
    expect(dialog).to_have_count(0)

    port = front.url.rsplit(":", 1)[1].split("/")[0]
    target = f"http://trusted.example@127.0.0.1:{port}/api/status?from=app"
    ask(902, target)
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text(target)
    expect(dialog.locator(".mcp-notebook-app-link-host")).to_have_text(
        f"127.0.0.1:{port}"
    )  # what the browser will visit
    dialog.get_by_role("button", name="Cancel").click()
    assert reply(902)["result"] == {"isError": True}

    ask(903, target)
    with front.page.context.expect_page() as popup_info:
        dialog.get_by_role("button", name="Open").click()
    popup = popup_info.value
    popup.wait_for_load_state()
    assert popup.url.startswith(f"http://trusted.example@127.0.0.1:{port}/api/status")
    assert popup.evaluate("() => window.opener") is None  # noopener
    popup.close()
    assert reply(903)["result"] == {}


@LAB_ONLY
def test_reload_restart_and_activate_in_a_new_kernel(front: Front) -> None:
    from playwright.sync_api import expect

    panel = start(front, "again.ipynb", ["%mcp call apps.counter"], blank=3)
    app = panel.locator(".mcp-notebook-app").first
    view = app.frame_locator(FRAME).frame_locator(INNER)
    view.locator("#inc").click()
    expect(view.locator("#count")).to_have_text("1")

    # re-running the server cell redraws the App from the new server (a new frame)
    app.locator(FRAME).evaluate("e => { e.dataset.old = '1'; }")
    panel.locator(".jp-Cell").nth(1).locator(".jp-InputArea-editor").click()
    front.page.keyboard.press("Shift+Enter")
    expect(app.locator(f"{FRAME}:not([data-old])")).to_have_count(1)
    expect(view.locator("body")).to_have_attribute("data-state", "connected")
    expect(view.locator("#count")).to_have_text("0")

    # a restart leaves the App stale: banner, covered frame
    front.restart_kernel()
    expect(app.locator(".mcp-notebook-stale-banner")).to_contain_text("The kernel that showed this App has restarted")
    expect(app).to_have_class(has_class("mcp-notebook-stale"))
    expect(app).to_have_attribute("data-app-state", "gone")
    assert app.locator(FRAME).evaluate("e => getComputedStyle(e).pointerEvents") == "none"
    front.wait_idle()
    front.save()
    wait_saved(front)

    # the reloaded page, the fresh kernel without the extension: the text and a disabled button
    front.page.reload()
    front.wait_idle(front.path("again.ipynb"))
    panel = front.page.locator(".jp-NotebookPanel:visible")
    app = panel.locator(".mcp-notebook-app").first
    button = app.locator("button.mcp-notebook-app-activate")
    expect(button).to_be_disabled()
    expect(app.locator(".mcp-notebook-app-fallback-text")).to_contain_text("count is 0")
    expect(app.locator(".mcp-notebook-app-fallback-note")).to_contain_text("%load_ext mcp_notebook")
    expect(app.locator(FRAME)).to_have_count(0)

    front.run_in_cell(3, "%load_ext mcp_notebook")  # the comm opens: the App is asked for, not live here
    expect(button).to_be_enabled()
    expect(app.locator(".mcp-notebook-app-fallback-note")).to_have_text("The App is not live in this kernel.")
    expect(app.locator(FRAME)).to_have_count(0)  # never without the click
    button.click()
    expect(app.locator(".mcp-notebook-app-fallback-note")).to_contain_text("is not connected in this kernel")
    front.run_in_cell(4, SERVER_CELL)
    app.locator("button.mcp-notebook-app-activate").click()
    view = app.frame_locator(FRAME).frame_locator(INNER)
    expect(view.locator("body")).to_have_attribute("data-state", "connected")
    expect(view.locator("#status")).to_have_text(
        "tool-result"
    )  # the user's own output is signed: its saved result reached the App
    expect(view.locator("#count")).to_have_text("0")
    assert app.get_attribute("data-saved-data") is None
    view.locator("#inc").click()
    expect(view.locator("#count")).to_have_text("1")
    expect(app).to_have_attribute("data-app-state", "live")


@LAB_ONLY
@pytest.mark.parametrize("example", ["vanillajs", "preact"])
def test_the_official_example_apps_call_their_server_from_the_cell(front: Front, example: str) -> None:
    """npm ``server-basic-vanillajs`` and ``server-basic-preact`` over stdio: the App shows the tool's time, and its
    "Get Server Time" button is a ``tools/call`` that reaches the server through the kernel and returns into the App."""
    import shlex

    from playwright.sync_api import expect

    from tests.peers import servers

    command = shlex.join(servers.basic_vanillajs() if example == "vanillajs" else servers.basic_preact())
    panel = start(front, f"{example}.ipynb", [f"%mcp connect time -- {command}", "%mcp call time.get-time"], blank=1)
    app = panel.locator(".mcp-notebook-app").first
    expect(app.locator(".mcp-notebook-app-status")).to_have_text("App: get-time from time (ui://get-time/mcp-app.html)")
    view = app.frame_locator(FRAME).frame_locator(INNER)
    shown = (
        view.locator("#server-time")
        if example == "vanillajs"
        else view.locator("p", has=view.locator("strong", has_text="Server Time:")).locator("code")
    )
    iso = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
    if example == "vanillajs":
        expect(shown).to_have_text(iso)  # from the tool result the host sent (structuredContent.time)
    before = shown.text_content() or ""
    time.sleep(1.1)  # the server's clock moves on
    view.get_by_role("button", name="Get Server Time").click()  # the App's tools/call, through the kernel to the server
    expect(shown).to_have_text(iso)
    expect(shown).not_to_have_text(before)
    if example == "vanillajs":  # its message and log buttons: ui/message and notifications/message, kept by the kernel
        view.get_by_role("button", name="Send Message").click()
        view.get_by_role("button", name="Send Log").click()
        app_id = app.get_attribute("data-app-id")
        probe = f"_a = get_ipython().magics_manager.registry['MCPMagics'].session.apps.get('{app_id}'); print(sorted(m['method'] for m in _a.messages))"
        kept = front.run_in_cell(4, probe)
        expect(kept.locator(".jp-OutputArea-output")).to_contain_text("['notifications/message', 'ui/message']")
        if front.app == "lab":
            app.screenshot(path=str(APP_SCREENSHOT))
