"""A reload keeps the result: pages that did not run a cell still get its flow's report.

A call ends its cell when its flow ends, and its live area is a display updated in place
(``update_display_data``). A display id is not saved, so a page that reloaded (or another page on
the same notebook) drops that update: before, the cell went empty after the answer, and under
real-time collaboration no page wrote the report at all. The kernel now also sends the report on
the extension's comm, and the page writes it over the output that carries the live area's display
id in its metadata (``live_view.OUTPUT_KEY``); under collaboration the pages share one document, so
a copy written twice at once is removed again (``dedupeReports`` in ``labextension/src/reports.ts``).

* One page (JupyterLab and Notebook 7, the shared servers of ``support/lab_fixtures.py``, collaboration off): run a call that shows a form, save,
  reload the page while the kernel keeps waiting, answer the restored form: the cell shows the
  tool's result once, the saved notebook keeps it and no record, and the kernel holds no report
  that no page took.
* The same without a save after the run: the reloaded page's copy of the cell has no output, so
  the page adds the live area the kernel sends again on the page's reconnect (``{"op": "display"}``;
  the page finds the kernel's comm by asking ``where`` on a comm of its own, since the running cell
  holds ``comm_info_request`` back): a working form, then the result.
* Two people on one notebook (real-time collaboration): ``browser/test_collab.py``.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from ..support.browser import (
    LAB_ONLY,
    Front,
    api,
    has_class,
    notebook,
    put_notebook,
    saved_flows,
    wait_for,
)

KEY_ENV = "MCPNB_BROWSER_RELOAD_KEY"
RESULT = "Provisioned 'orders' in us-west-2 (size small)."
QUESTION = "Which region should 'orders' live in?"


@pytest.fixture(scope="module")
def demo_url(start_http_server: Any) -> str:
    return start_http_server("demo", keys_env=KEY_ENV)


def cells(demo_url: str) -> list[str]:
    return ["%load_ext mcp_notebook", f"%mcp connect demo {demo_url}", "%mcp call demo.provision_db name=orders", ""]


def flow_cell(page: Any) -> Any:
    return page.locator(".jp-NotebookPanel:visible .jp-Cell").nth(2)


def expect_working_form(cell: Any) -> Any:
    """The flow's form in ``cell``, rendered from the kernel's live widgets (not "Loading widget..."), its Accept enabled."""
    from playwright.sync_api import expect

    form = cell.locator(".mcp-elicitation", has_text=QUESTION).last  # the one asking now, below any answered
    expect(form).to_contain_text(QUESTION, timeout=60_000)
    expect(form.get_by_role("button", name="Accept")).to_be_enabled()
    expect(form.locator(".mcp-field-region select")).to_be_enabled()
    assert "Loading widget" not in cell.locator(".jp-OutputArea").first.inner_text()
    return form


def answer(cell: Any) -> None:
    """Both rounds of ``provision_db``: the region, then the confirmation."""
    from playwright.sync_api import expect

    form = expect_working_form(cell)
    form.locator(".mcp-field-region select").select_option(label="us-west-2")
    form.get_by_role("button", name="Accept").click()
    confirm = cell.locator(".mcp-elicitation", has_text="Create 'orders'").last
    expect(confirm).to_contain_text("Create 'orders' (small) in us-west-2?", timeout=30_000)
    confirm.get_by_role("button", name="Accept").click()


def expect_one_report(cell: Any) -> None:
    """The cell shows the tool's result in exactly one output, and still one a while later (no late copy)."""
    from playwright.sync_api import expect

    outputs = cell.locator(".jp-OutputArea-output")
    expect(cell.locator(".jp-OutputArea").first).to_contain_text(RESULT, timeout=60_000)
    expect(outputs).to_have_count(1)
    time.sleep(6)  # past the page's last look for copies another page wrote at the same moment
    expect(outputs).to_have_count(1)
    expect(outputs.first).to_contain_text(RESULT)
    expect(outputs.first).to_contain_text("done")
    # the record has left the notebook model too (the waiting mark is gone): a save now writes neither
    expect(cell).not_to_have_class(has_class("mcp-notebook-waiting"), timeout=30_000)


def saved_report(url: str, name: str) -> list[dict[str, Any]]:
    """The outputs of the flow's cell in the saved file; ``[]`` while the server is still writing it.

    Caught mid-write, the contents API answers 400 "Unreadable Notebook", 500, or 404 for an instant while a save
    swaps the file (as ``browser.saved_flows`` says; a loaded run met the 404 here).
    """
    import urllib.error

    try:
        model = api(url, f"contents/{name}?content=1")
    except urllib.error.HTTPError as exc:
        if exc.code in (400, 404) or exc.code >= 500:
            return []
        raise
    return list(model["content"]["cells"][2]["outputs"])


def save_when_settled(front: Front) -> None:
    """Save once the page has dropped the finished flow's record from its metadata (a save before that delete lands
    writes the record to disk and nothing saves again: a fresh clone's run failed so, once in four)."""
    front.page.wait_for_function(
        "() => { const m = window.jupyterapp.shell.currentWidget.context.model.getMetadata('mcp_notebook');"
        " return !(m && m.flows && Object.keys(m.flows).length); }",
        timeout=60_000,
    )
    front.save()


def check_saved(url: str, name: str) -> dict[str, Any]:
    wait_for(
        lambda: not saved_flows(url, name) and any(RESULT in str(o.get("data")) for o in saved_report(url, name)),
        "the report saved, the record gone",
        timeout=60,
    )
    outputs = saved_report(url, name)
    assert len(outputs) == 1, outputs
    (output,) = outputs
    assert output["output_type"] == "display_data"
    assert RESULT in output["data"]["text/plain"]
    assert "application/vnd.jupyter.widget-view+json" not in output["data"]
    mark = output["metadata"]["mcp_notebook"]
    assert mark["final"] is True and re.fullmatch(r"[0-9a-f]{32}", mark["display_id"])
    return output


@LAB_ONLY
def test_reload_then_answer_shows_the_result(front: Front, demo_url: str) -> None:
    from playwright.sync_api import expect

    name = front.path("reload.ipynb")
    put_notebook(front.url, name, notebook(cells(demo_url)))
    front.open(name)
    front.run_all()
    cell = flow_cell(front.page)
    expect_working_form(cell)
    expect(cell).to_have_class(has_class("mcp-notebook-waiting"), timeout=30_000)  # the record is in the model
    front.save()
    wait_for(lambda: saved_flows(front.url, name), "the record on disk", timeout=60)

    front.page.reload()  # same kernel: the call's cell is still running, awaiting its flow
    cell = flow_cell(front.page)
    answer(cell)  # the form came back from the kernel's widgets

    expect_one_report(cell)
    expect(cell).not_to_have_class(has_class("mcp-notebook-waiting"))  # the record is gone from the model
    save_when_settled(front)
    check_saved(front.url, name)
    # the page told the kernel it shows the report: nothing is kept for a later page
    pending = front.run_in_cell(
        3, "print(len(get_ipython().magics_manager.registry['MCPMagics'].session.frontend.pending_reports()))"
    )
    expect(pending.locator(".jp-OutputArea")).to_have_text(re.compile(r"^\s*0\s*$"))


def test_reload_before_a_save_gets_the_form_from_the_kernel(front: Front, demo_url: str) -> None:

    name = front.path("unsaved.ipynb")
    put_notebook(front.url, name, notebook(cells(demo_url)))
    front.open(name)
    # saved once by the user before running (so trusted on reload: JupyterLab renders widget views only in
    # trusted cells, and the added live area is a widget view), then not again before the reload
    front.save()
    front.run_all()
    expect_working_form(flow_cell(front.page))
    assert saved_report(front.url, name) == []  # nothing saved: the file's cell has no output

    front.page.reload()
    cell = flow_cell(front.page)
    answer(cell)  # the live area was added by the page, from the kernel's copy
    expect_one_report(cell)
    save_when_settled(front)
    check_saved(front.url, name)
