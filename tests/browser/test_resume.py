"""Close and resume in a real browser: JupyterLab and Notebook 7 in Debian's Chromium, driven by Playwright.

In JupyterLab and Notebook 7 (the shared servers of ``support/lab_fixtures.py``): a notebook calls the HTTP demo server (shared request-state
keys), the flow waits in its form, the notebook is saved with the record in its metadata, the
kernel is shut down and the page reloaded. The waiting cell is marked by the extension; running
the notebook again offers Continue, the saved questions come back, the form is filled and the
result arrives. A second notebook holds a tampered record: the refusal is explained in plain
words and Start over calls again.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from ..support.browser import Front, has_class, put_notebook, saved_flows, shut_down_kernels, wait_for
from ..support.browser import notebook as _notebook

KEY_ENV = "MCPNB_BROWSER_RESUME_KEY"


@pytest.fixture(scope="module")
def demo_url(start_http_server: Any) -> str:
    return start_http_server("demo", keys_env=KEY_ENV)


def test_save_close_reopen_resume(front: Front, demo_url: str) -> None:
    from playwright.sync_api import expect

    url = front.url
    resume, tampered = front.path("resume.ipynb"), front.path("tampered.ipynb")
    cells = ["%load_ext mcp_notebook", f"%mcp connect demo {demo_url}", "%mcp call demo.provision_db name=orders"]
    put_notebook(url, resume, _notebook(cells))
    cell = front.open(resume).locator(".jp-Cell").nth(2)
    front.run_all()
    expect(cell.locator(".mcp-elicitation")).to_be_visible(timeout=60_000)
    expect(cell).to_have_class(has_class("mcp-notebook-waiting"), timeout=30_000)  # record in the model

    front.save()
    flows = wait_for(lambda: saved_flows(url, resume), "the record on disk", timeout=60)
    ((flow_id, record),) = flows.items()
    assert record["cell_id"] == "cell-2" and record["round"] == 1 and record["server"]["name"] == "demo"

    shut_down_kernels(url)
    front.page.reload()
    front.wait_idle(resume)
    cell = front.page.locator(".jp-NotebookPanel:visible .jp-Cell").nth(2)
    expect(cell).to_have_class(has_class("mcp-notebook-waiting"))
    expect(cell.locator(".mcp-notebook-badge")).to_contain_text(f"%mcp resume {flow_id}")

    front.run_all()
    offer = cell.locator(".mcp-resume-offer")
    expect(offer).to_contain_text("waiting for input", timeout=60_000)  # Run All reaches it after the cells above
    offer.get_by_role("button", name="Continue").click()

    form = cell.locator(
        ".mcp-elicitation", has_text="Which region should"
    ).last  # the round now asked, below any answered one
    expect(form).to_contain_text("Which region should 'orders' live in?")
    form.locator(".mcp-field-region select").select_option(label="us-west-2")
    form.get_by_role("button", name="Accept").click()
    confirm = cell.locator(".mcp-elicitation", has_text="Create 'orders'").last
    expect(confirm).to_contain_text("Create 'orders' (small) in us-west-2?")
    confirm.get_by_role("button", name="Accept").click()
    expect(cell.locator(".jp-OutputArea").first).to_contain_text(
        "Provisioned 'orders' in us-west-2 (size small).", timeout=30_000
    )
    expect(cell).not_to_have_class(has_class("mcp-notebook-waiting"))  # the record is gone from the model
    front.save()
    wait_for(lambda: not saved_flows(url, resume), "the record removed on disk", timeout=60)

    # a tampered copy: the refusal in plain words, and Start over
    bad = copy.deepcopy(record)
    state = bad["request_state"]
    middle = len(state) // 2
    bad["request_state"] = state[:middle] + ("A" if state[middle] != "A" else "B") + state[middle + 1 :]
    nb = _notebook(cells)
    nb["metadata"]["mcp_notebook"] = {"flows": {flow_id: bad}}
    put_notebook(url, tampered, nb)
    cell = front.open(tampered).locator(".jp-Cell").nth(2)
    front.run_all()
    cell.locator(".mcp-resume-offer").get_by_role("button", name="Continue").click()
    # edited by hand, the record no longer carries this user's signature: asked first, shown whole
    ask = cell.locator(".mcp-confirm-resume")
    expect(ask).to_contain_text("not saved by you")
    expect(ask).to_contain_text("connects to")
    expect(ask).to_contain_text(demo_url)
    ask.get_by_title("Run exactly what is listed above").click()  # the Resume button
    form = cell.locator(
        ".mcp-elicitation", has_text="Which region should"
    ).last  # the round now asked, below any answered one
    expect(form).to_contain_text("Which region should 'orders' live in?")
    form.get_by_role("button", name="Accept").click()
    refused = cell.locator(".mcp-refused")
    expect(refused).to_contain_text("This flow cannot continue", timeout=30_000)
    # the why is said once, by the cell's error; the panel says what Start over does (issue 36, item 10)
    expect(cell.locator(".jp-OutputArea-output", has_text="FlowError")).to_contain_text(
        "RequestStateSecurity(keys=[...])"
    )
    expect(refused).not_to_contain_text("RequestStateSecurity")
    refused.get_by_role("button", name="Start over").click()
    again = cell.locator(
        ".mcp-elicitation", has_text="Which region should"
    ).last  # Start over's new form, after the refused one
    expect(again).to_contain_text("Which region should 'orders' live in?")
    expect(again.get_by_role("button", name="Accept")).to_be_enabled()
