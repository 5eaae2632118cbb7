"""MCP Apps without our labextension: the App as a widget (``notebook/app_widget.py``), in Chromium.

JupyterLab and Notebook 7 with the mcp-notebook labextension disabled (``jupyter labextension
disable``), as in a front end that never loads it; ipywidgets and anywidget's own front end run, as
they do in VS Code and Colab. The kernel's hello goes unanswered, so a call's App report carries an
``AppWidget`` whose front end came with the widget: the labextension's ``AppView`` (one
implementation of the frames, the guard, the CSP and the link rule). The same checks as the
extension's renderer (``test_apps.py``): the frames' sandbox and policy, the counter App's button
reaching the server through the kernel, the hostile probe finding every way out blocked, and a link
opened only after the user agreed (here in the output, not a JupyterLab dialog).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from ..support.browser import APPS, LAB_ONLY, Front, api, has_class, notebook, put_notebook, running_lab, wait_for
from .test_apps import FRAME, INNER, SERVER_CELL, link_asker

pytestmark = pytest.mark.timeout(300)

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
APP_OUTPUT = "application/vnd.mcp-notebook.app+json"

POLICY = (
    "default-src 'none'; script-src 'unsafe-inline' data: blob:; style-src 'unsafe-inline' data: blob:; img-src data: "
    "blob:; font-src data: blob:; media-src data: blob:; worker-src blob:; connect-src 'none'; frame-src 'none'; "
    "base-uri 'none'; object-src 'none'; form-action 'none'"
)


@pytest.fixture(scope="module", params=APPS)
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    from tests.support.app_servers import view_bundle

    view_bundle()  # raises PeersMissing (run `make peers-deps`) before any browser starts
    app = request.param
    root = tmp_path_factory.mktemp(f"app-widget-{app}")
    with running_lab(root, app=app, expose_app=True, disabled=("mcp-notebook",)) as (url, _root):
        yield url, app


def start(front: Front, name: str, calls: list[str]) -> Any:
    put_notebook(front.url, name, notebook([""] * (2 + len(calls) + 2)))
    panel = front.open(name)
    front.save()  # trusted: JupyterLab renders widget views only in cells of a trusted notebook
    front.run_in_cell(0, "%load_ext mcp_notebook")
    time.sleep(3)  # the hello goes unanswered (no extension): the kernel stops waiting after 2.5 s
    front.run_in_cell(1, SERVER_CELL)
    for i, call in enumerate(calls):
        front.run_in_cell(2 + i, call)
    return panel


def test_without_the_extension_an_app_runs_as_a_widget_sandboxed_and_reaching_only_its_server(front: Front) -> None:
    from playwright.sync_api import expect

    panel = start(front, "widget-apps.ipynb", ["%mcp call apps.counter", "%mcp call apps.probe"])
    assert front.page.evaluate("() => window.jupyterapp.hasPlugin('mcp-notebook:plugin')") is False
    app = panel.locator(".mcp-notebook-app").first
    expect(app).to_have_class(has_class("mcp-notebook-form"))
    expect(app.locator(".mcp-notebook-app-status")).to_have_text("App: counter from apps (ui://counter/app.html)")
    expect(app).to_have_attribute("data-server", "apps")
    frame = app.locator(FRAME)
    expect(frame).to_have_attribute("sandbox", "allow-scripts allow-forms")
    guard = frame.get_attribute("srcdoc") or ""
    assert guard.startswith(f'<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="{POLICY}">'), guard[
        :400
    ]
    inner = app.frame_locator(FRAME).locator(INNER)
    expect(inner).to_have_attribute("sandbox", "allow-scripts allow-forms")
    srcdoc = inner.get_attribute("srcdoc") or ""
    assert srcdoc.startswith(f'<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="{POLICY}">')
    assert "delete window[name]" in srcdoc.split("</script>", 1)[0]  # the prelude runs before the App

    view = app.frame_locator(FRAME).frame_locator(INNER)
    expect(view.locator("body")).to_have_attribute("data-state", "connected")
    expect(view.locator("#count")).to_have_text("0")  # the tool result, from the widget's data
    view.locator("#inc").click()  # a tools/call from the App: the widget's message, the kernel, the server
    expect(view.locator("#count")).to_have_text("1")
    expect(view.locator("#status")).to_contain_text("increment")

    probe = panel.locator(".mcp-notebook-app").nth(1).frame_locator(FRAME).frame_locator(INNER)
    expect(probe.locator("body")).to_have_attribute("data-state", "reported", timeout=60_000)
    outcomes = probe.locator("#outcomes li").all_text_contents()
    assert len(outcomes) == 10, outcomes
    assert not [o for o in outcomes if "allowed:" in o], outcomes

    # the saved file keeps the text (and the App's data) beside the widget view, for viewers without widgets
    front.save()

    def saved_report() -> dict[str, Any] | None:
        reports = [o for o in _outputs(front, "widget-apps.ipynb", 2) if WIDGET_VIEW in o.get("data", {})]
        return reports[0] if reports else None

    report = wait_for(saved_report, "the counter's report in the saved file")
    assert "count is 0" in "".join(report["data"]["text/plain"]) and APP_OUTPUT in report["data"]


@LAB_ONLY
def test_without_the_extension_a_link_opens_only_after_the_user_agrees_in_the_output(front: Front) -> None:
    from playwright.sync_api import expect

    panel = start(front, "widget-links.ipynb", ["%mcp call apps.counter"])
    app = panel.locator(".mcp-notebook-app").first
    expect(app.frame_locator(FRAME).frame_locator(INNER).locator("body")).to_have_attribute("data-state", "connected")
    ask, reply = link_asker(front)

    ask(901, "javascript:alert(1)")  # refused without asking
    assert reply(901)["result"] == {"isError": True}
    question = app.locator(".mcp-notebook-app-link-ask")
    expect(question).to_have_count(0)

    port = front.url.rsplit(":", 1)[1].split("/")[0]
    target = f"http://trusted.example@127.0.0.1:{port}/api/status?from=app"
    ask(902, target)
    expect(question).to_be_visible()
    expect(question).to_contain_text(target)
    expect(question.locator(".mcp-notebook-app-link-host")).to_have_text(f"127.0.0.1:{port}")
    question.get_by_role("button", name="Cancel").click()
    assert reply(902)["result"] == {"isError": True}
    expect(question).to_have_count(0)

    ask(903, target)
    with front.page.context.expect_page() as popup_info:
        question.get_by_role("button", name="Open").click()
    popup = popup_info.value
    popup.wait_for_load_state()
    assert popup.url.startswith(f"http://trusted.example@127.0.0.1:{port}/api/status")
    assert popup.evaluate("() => window.opener") is None  # noopener
    popup.close()
    assert reply(903)["result"] == {}


def _outputs(front: Front, name: str, index: int) -> list[dict[str, Any]]:
    """The outputs of cell ``index`` on disk; none while the server is still writing the file (400, 5xx)."""
    import urllib.error

    try:
        model = api(front.url, f"contents/{name}?content=1")
    except urllib.error.HTTPError as exc:
        if exc.code == 400 or exc.code >= 500:
            return []
        raise
    cells = model["content"]["cells"]
    outputs: list[dict[str, Any]] = cells[index].get("outputs", []) if index < len(cells) else []
    return outputs
