"""A waiting flow's cell after a kernel restart and a page reload, in JupyterLab in Debian's Chromium.

A flow's live area is a widget view of the kernel that ran the cell. The notebook is saved while
its form waits, the kernel restarts, the page reloads: the new kernel has no model for that view,
and the widget renderer showed "Error displaying widget: model not found" in the cell. The
labextension (``labextension/src/lost.ts``) now shows instead what waits (the flow's id and its
question, from the notebook's metadata) and the ``%mcp resume ID`` line; the renderer's error is
hidden. The question comes from the server: it is shown as text (a hostile question is
``tests/security``'s concern; here the markup of a question shows as its characters).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ..support.browser import Front, chromium_page, has_class, notebook, put_notebook, running_lab

QUESTION = "Which region should 'orders' live in?"


@pytest.fixture(scope="module")
def front(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Front]:
    base = tmp_path_factory.mktemp("waiting-after-reload")
    with running_lab(base, expose_app=True) as (url, _root), chromium_page(base / "profile") as page:
        yield Front(page, url, "lab")


def test_a_waiting_cell_after_restart_and_reload_says_what_waits_and_how_to_resume(front: Front) -> None:
    from playwright.sync_api import expect

    cells = [
        "%load_ext mcp_notebook",
        "%mcp connect demo mcp_notebook.demo:demo",
        "%mcp call demo.provision_db name=orders",
    ]
    put_notebook(front.url, "waiting.ipynb", notebook(cells))
    panel = front.open("waiting.ipynb")
    front.run_all()
    cell = panel.locator(".jp-Cell").nth(2)
    expect(cell.locator(".mcp-elicitation")).to_contain_text(QUESTION, timeout=60_000)
    expect(cell).to_have_class(has_class("mcp-notebook-waiting"), timeout=30_000)  # its record is in the metadata
    flow_id = cell.get_attribute("data-mcp-flows")
    assert flow_id and " " not in flow_id
    front.save()
    front.page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000)

    front.restart_kernel()
    front.wait_idle("waiting.ipynb")
    front.page.reload()
    front.wait_idle("waiting.ipynb")
    panel = front.page.locator(".jp-NotebookPanel:visible")
    cell = panel.locator(".jp-Cell").nth(2)

    lost = cell.locator(".mcp-notebook-lost")
    expect(lost).to_have_count(1, timeout=30_000)
    expect(lost).to_be_visible()
    expect(lost).to_contain_text(f"MCP flow {flow_id} waits for input: {QUESTION}")
    expect(lost).to_contain_text(
        f"To continue, run %mcp resume {flow_id} (a new kernel needs %load_ext mcp_notebook first)."
    )
    expect(lost.locator("code").first).to_have_text(f"%mcp resume {flow_id}")
    expect(cell.get_by_text("Error displaying widget")).to_be_hidden()
    # the badge says the same line; the notebook's metadata still holds the record
    expect(cell.locator(".mcp-notebook-badge")).to_contain_text(f"%mcp resume {flow_id}")
    shown: Any = front.page.evaluate(
        "() => Object.keys(window.jupyterapp.shell.currentWidget.context.model.getMetadata('mcp_notebook').flows)"
    )
    assert shown == [flow_id]
