"""A form whose kernel restarted, in a real browser: JupyterLab and Notebook 7 in Debian's Chromium.

On the shared servers of ``support/lab_fixtures.py`` (JupyterLab; see ``browser.LAB_ONLY``). A
notebook calls the HTTP demo server (shared request-state keys) and the flow waits in its form.
The kernel is then restarted through the front end's API, without reloading the page: the
extension marks the old form stale (a banner in plain words, its buttons and fields disabled),
the cell keeps its saved-flow badge, and in new cells of the fresh kernel ``%mcp flows`` lists
the saved flow and ``%mcp resume ID`` continues it to the result, in a form that is not stale.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from ..support.browser import LAB_ONLY, Front, has_class, notebook, put_notebook

KEY_ENV = "MCPNB_BROWSER_RESTART_KEY"
BANNER = "The kernel that asked this question has restarted; this form can no longer send."
RESULT = "Provisioned 'orders' in us-west-2 (size small)."


@pytest.fixture(scope="module")
def demo_url(start_http_server: Any) -> str:
    return start_http_server("demo", keys_env=KEY_ENV)


@LAB_ONLY
def test_restart_marks_the_form_stale_and_resume_continues(front: Front, demo_url: str) -> None:
    from playwright.sync_api import expect

    cells = [
        "%load_ext mcp_notebook",
        f"%mcp connect demo {demo_url}",
        "%mcp call demo.provision_db name=orders",
        "",
        "",
        "",
    ]
    name = front.path("restart.ipynb")
    put_notebook(front.url, name, notebook(cells))
    panel = front.open(name)
    front.run_all()
    cell = panel.locator(".jp-Cell").nth(2)
    flow = cell.locator(".mcp-flow")
    form = flow.locator(".mcp-elicitation")
    expect(form).to_contain_text("Which region should 'orders' live in?", timeout=60_000)
    expect(cell).to_have_class(has_class("mcp-notebook-waiting"), timeout=30_000)  # the record is in the model
    flow_id = cell.get_attribute("data-mcp-flows")
    assert flow_id and " " not in flow_id
    accept = form.get_by_role("button", name="Accept")
    expect(accept).to_be_enabled()
    expect(flow.locator(".mcp-notebook-stale-banner")).to_have_count(0)

    front.restart_kernel()

    # one banner, in the flow's live area (the outermost form root), with our words
    banner = cell.locator(".mcp-notebook-stale-banner")
    expect(banner).to_have_count(1)
    expect(flow.locator(":scope > .mcp-notebook-stale-banner")).to_have_count(1)
    expect(banner).to_be_visible()
    expect(banner).to_contain_text(BANNER)
    expect(banner).to_contain_text("Run %mcp flows then %mcp resume ID (saved flows continue).")
    expect(banner).to_contain_text("%load_ext mcp_notebook")
    expect(flow).to_have_class(has_class("mcp-notebook-stale"))
    expect(accept).to_be_disabled()
    buttons = flow.get_by_role("button")  # Accept, Decline, Cancel (the call's own Cancel is hidden meanwhile)
    assert buttons.count() >= 3
    for i in range(buttons.count()):
        expect(buttons.nth(i)).to_be_disabled()
    expect(form.locator(".mcp-field-region select")).to_be_disabled()
    # the saved flow's badge comes from the notebook's metadata, which the restart leaves alone
    expect(cell).to_have_class(has_class("mcp-notebook-waiting"))
    expect(cell.locator(".mcp-notebook-badge")).to_contain_text(f"%mcp resume {flow_id}")

    front.wait_idle(name)
    front.run_in_cell(3, "%load_ext mcp_notebook")  # the new kernel says hello; the extension restores the record
    listing = front.run_in_cell(4, "%mcp flows")
    expect(listing.locator(".jp-OutputArea")).to_contain_text(flow_id)
    expect(listing.locator(".jp-OutputArea")).to_contain_text("provision_db")

    resumed = front.run_in_cell(
        5, f"%mcp resume {flow_id}", wait=False
    )  # the cell ends with its flow, after the clicks
    new_form = resumed.locator(".mcp-elicitation", has_text="Which region should")
    expect(new_form).to_contain_text("Which region should 'orders' live in?", timeout=60_000)
    expect(resumed.locator(".mcp-notebook-stale-banner")).to_have_count(0)  # the new kernel's form is live
    new_form.locator(".mcp-field-region select").select_option(label="us-west-2")
    new_form.get_by_role("button", name="Accept").click()
    confirm = resumed.locator(".mcp-elicitation", has_text="Create 'orders'")
    expect(confirm).to_contain_text("Create 'orders' (small) in us-west-2?")
    confirm.get_by_role("button", name="Accept").click()
    expect(resumed.locator(".jp-OutputArea").first).to_contain_text(RESULT, timeout=30_000)
    expect(resumed.locator(".jp-InputPrompt")).to_have_text(re.compile(r"\[\d+\]"))  # and the cell has ended
    # done: the record is gone from the model, so the old cell loses its badge; its stale form stays as it was
    expect(cell).not_to_have_class(has_class("mcp-notebook-waiting"))
    expect(banner).to_contain_text(BANNER)
    expect(accept).to_be_disabled()
