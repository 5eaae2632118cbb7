"""Close and resume in a real browser: JupyterLab in Debian's Chromium, driven by Playwright.

Extends the forms' browser test (same JupyterLab server and Chromium set-up): a notebook calls
the HTTP demo server (shared request-state keys), the flow waits in its form, the notebook is
saved with the record in its metadata, the kernel is shut down and the page reloaded. The
waiting cell is marked by the extension; running the notebook again offers Continue, the saved
questions come back, the form is filled and the result arrives. A second notebook holds a
tampered record: the refusal is explained in plain words and Start over calls again.
"""

from __future__ import annotations

import copy
import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from .browser import notebook as _notebook
from .test_browser_forms import lab, page  # noqa: F401 - fixtures shared with the forms test

KEY_ENV = "MCPNB_BROWSER_RESUME_KEY"


@pytest.fixture(scope="module")
def demo_url(start_http_server: Any) -> str:
    return start_http_server("demo", keys_env=KEY_ENV)


def api(lab: str, path: str, method: str = "GET", body: Any = None) -> Any:  # noqa: F811 - takes the shared fixture's value
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"{lab}/api/{path}", data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as reply:
        text = reply.read()
    return json.loads(text) if text else None


def put_notebook(lab: str, name: str, nb: dict[str, Any]) -> None:  # noqa: F811 - takes the shared fixture's value
    api(lab, f"contents/{name}", "PUT", {"type": "notebook", "format": "json", "content": nb})


def saved_flows(lab: str, name: str) -> dict[str, Any]:  # noqa: F811 - takes the shared fixture's value
    """The records on disk; ``{}`` while the server is still writing the file.

    Caught mid-write, the contents API answers 500, or 400 "Unreadable Notebook" for a half-written file.
    """
    try:
        model = api(lab, f"contents/{name}?content=1")
    except urllib.error.HTTPError as exc:
        if exc.code == 400 or exc.code >= 500:
            return {}
        raise
    return model["content"]["metadata"].get("mcp_notebook", {}).get("flows", {})


def shut_down_kernels(lab: str) -> None:  # noqa: F811 - takes the shared fixture's value
    for session in api(lab, "sessions"):
        api(lab, f"sessions/{session['id']}", "DELETE")


def menu(page: Any, top: str, item: str) -> None:  # noqa: F811 - takes the shared fixture's value
    page.locator(".lm-MenuBar-itemLabel").get_by_text(top, exact=True).click()
    page.locator(".lm-Menu-itemLabel").get_by_text(item, exact=True).click()


def open_and_run_all(page: Any, lab: str, name: str) -> Any:  # noqa: F811 - takes the shared fixture's value
    """Open ``name`` (the only tab), wait for its kernel, run every cell; returns the notebook panel."""
    from playwright.sync_api import expect

    page.goto(f"{lab}/lab/tree/{name}")
    panel = page.locator(".jp-NotebookPanel:visible")
    expect(page.locator("#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel")).to_have_text(name, timeout=60_000)
    expect(page.locator("#jp-main-statusbar")).to_contain_text("Idle", timeout=60_000)
    panel.locator(".jp-Cell").first.click()
    menu(page, "Run", "Run All Cells")
    return panel


def wait_for(predicate: Any, what: str, timeout: float = 30) -> Any:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


def test_save_close_reopen_resume(lab: str, page: Any, demo_url: str) -> None:  # noqa: F811
    from playwright.sync_api import expect

    page.set_default_timeout(30_000)
    cells = ["%load_ext mcp_notebook", f"%mcp connect demo {demo_url}", "%mcp call demo.provision_db name=orders"]
    put_notebook(lab, "resume.ipynb", _notebook(cells))
    cell = open_and_run_all(page, lab, "resume.ipynb").locator(".jp-Cell").nth(2)
    expect(cell.locator(".mcp-elicitation")).to_be_visible(timeout=60_000)
    expect(cell).to_have_class(lambda_class("mcp-notebook-waiting"), timeout=30_000)  # record in the model

    menu(page, "File", "Save Notebook")
    flows = wait_for(lambda: saved_flows(lab, "resume.ipynb"), "the record on disk")
    (flow_id, record), = flows.items()
    assert record["cell_id"] == "cell-2" and record["round"] == 1 and record["server"]["name"] == "demo"

    shut_down_kernels(lab)
    page.reload()
    expect(page.locator("#jp-main-statusbar")).to_contain_text("Idle", timeout=60_000)
    cell = page.locator(".jp-Notebook .jp-Cell").nth(2)
    expect(cell).to_have_class(lambda_class("mcp-notebook-waiting"))
    expect(cell.locator(".mcp-notebook-badge")).to_contain_text(f"%mcp resume {flow_id}")

    menu(page, "Run", "Run All Cells")
    offer = cell.locator(".mcp-resume-offer")
    expect(offer).to_contain_text("waiting for input")
    offer.get_by_role("button", name="Continue").click()

    form = cell.locator(".mcp-elicitation").last
    expect(form).to_contain_text("Which region should 'orders' live in?")
    form.locator(".mcp-field-region select").select_option(label="us-west-2")
    form.get_by_role("button", name="Accept").click()
    confirm = cell.locator(".mcp-elicitation").last
    expect(confirm).to_contain_text("Create 'orders' (small) in us-west-2?")
    confirm.get_by_role("button", name="Accept").click()
    expect(cell.locator(".jp-OutputArea").first).to_contain_text("Provisioned 'orders' in us-west-2 (size small).", timeout=30_000)
    expect(cell).not_to_have_class(lambda_class("mcp-notebook-waiting"))  # the record is gone from the model
    menu(page, "File", "Save Notebook")
    wait_for(lambda: not saved_flows(lab, "resume.ipynb"), "the record removed on disk")
    menu(page, "File", "Close All Tabs")

    # a tampered copy: the refusal in plain words, and Start over
    bad = copy.deepcopy(record)
    state = bad["request_state"]
    middle = len(state) // 2
    bad["request_state"] = state[:middle] + ("A" if state[middle] != "A" else "B") + state[middle + 1 :]
    nb = _notebook(cells)
    nb["metadata"]["mcp_notebook"] = {"flows": {flow_id: bad}}
    put_notebook(lab, "tampered.ipynb", nb)
    cell = open_and_run_all(page, lab, "tampered.ipynb").locator(".jp-Cell").nth(2)
    cell.locator(".mcp-resume-offer").get_by_role("button", name="Continue").click()
    # edited by hand, the record no longer carries this user's signature: asked first, shown whole
    ask = cell.locator(".mcp-confirm-resume")
    expect(ask).to_contain_text("not saved by you")
    expect(ask).to_contain_text("connects to")
    expect(ask).to_contain_text(demo_url)
    ask.get_by_title("Run exactly what is listed above").click()  # the Resume button
    form = cell.locator(".mcp-elicitation").last
    expect(form).to_contain_text("Which region should 'orders' live in?")
    form.get_by_role("button", name="Accept").click()
    refused = cell.locator(".mcp-refused")
    expect(refused).to_contain_text("This flow cannot continue", timeout=30_000)
    expect(refused).to_contain_text("RequestStateSecurity(keys=[...])")
    refused.get_by_role("button", name="Start over").click()
    expect(cell.locator(".mcp-elicitation").last).to_contain_text("Which region should 'orders' live in?")
    expect(cell.locator(".mcp-elicitation").last.get_by_role("button", name="Accept")).to_be_enabled()


def lambda_class(name: str) -> Any:
    import re

    return re.compile(rf"(^|\s){re.escape(name)}(\s|$)")
