"""JupyterLab and Notebook 7 without our labextension, and two plain tabs with it, in Chromium.

* The extension switched off (``jupyter labextension disable``), as in a front end that never loads
  it: the form is ipywidgets and works; the flow's record goes into its cell's output (its text line
  says how to continue); the notebook is saved, the kernel restarted and the page reloaded; a new
  kernel lists the flow from the file (``__session__``) and ``%mcp resume`` finishes it; the saved
  file then holds no waiting flow (the void where it ended outvotes the record above).
  A server of its own: the extension is off there.
* Two plain tabs on one notebook (extension on, collaboration off; the shared JupyterLab of
  ``support/lab_fixtures.py``): the tab that runs the call
  writes its record; the other tab never gets it and stays clean, before and after the flow ends.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mcp_notebook.flows.record import OUTPUT_MIME, read_notebook

from ..support.browser import APPS, Front, chromium_pages, notebook, put_notebook, running_lab, wait_for
from ..support.lab_fixtures import SharedLab, own_folder
from .test_reload import answer, expect_working_form, flow_cell

KEY_ENV = "MCPNB_BROWSER_FRONTENDS_KEY"
RESULT = "Provisioned 'orders' in us-west-2 (size small)."


@pytest.fixture(scope="module")
def demo_url(start_http_server: Any) -> str:
    return start_http_server("demo", keys_env=KEY_ENV)


def _cells(demo_url: str) -> list[str]:
    return [
        "%load_ext mcp_notebook",
        f"%mcp connect demo {demo_url}",
        "%mcp call demo.provision_db name=orders",
        "",
        "",
    ]


_RUN = "(i) => { const app = window.jupyterapp; const nb = app.shell.currentWidget.content; nb.activeCellIndex = i; return app.commands.execute('notebook:run-cell'); }"
_MODEL = "() => { const p = window.jupyterapp.shell.currentWidget; return {dirty: p.context.model.dirty, flows: p.context.model.getMetadata('mcp_notebook') || null}; }"
_CONTENT = "() => JSON.stringify(window.jupyterapp.shell.currentWidget.context.model.toJSON())"


def _run_cell(front: Front, index: int) -> None:
    """Run the existing cell ``index`` (not Run All: the call's cell must not run again) and wait until it ran."""
    from playwright.sync_api import expect

    front.page.evaluate(_RUN, index)
    cell = front.page.locator(".jp-NotebookPanel:visible .jp-Cell").nth(index)
    expect(cell.locator(".jp-InputPrompt")).to_have_text(re.compile(r"\[\d+\]"), timeout=60_000)


def _saved_records(root: Path, name: str) -> dict[str, Any]:
    try:
        return read_notebook(str(root / name))[0]
    except (OSError, ValueError):
        return {"unreadable": {}}


@pytest.mark.parametrize("app", APPS)
def test_without_the_extension_a_waiting_flow_travels_in_its_output(tmp_path: Path, demo_url: str, app: str) -> None:
    from playwright.sync_api import expect

    name = "plain.ipynb"
    with running_lab(
        tmp_path, {name: notebook(_cells(demo_url))}, app=app, expose_app=True, disabled=("mcp-notebook",)
    ) as (url, root):
        with chromium_pages(tmp_path, 1) as (page,):
            page.set_default_timeout(30_000)
            front = Front(page, url, app)
            front.open(name)
            front.save()  # trusted: JupyterLab renders widget views only in cells of a trusted notebook
            front.run_all()
            cell = flow_cell(page)
            form = expect_working_form(cell)  # ipywidgets, without our extension
            form.locator(".mcp-field-region select").select_option(label="us-west-2")
            form.get_by_role("button", name="Accept").click()
            expect(cell.locator(".mcp-elicitation").last).to_contain_text("Create 'orders' (small) in us-west-2?")
            # no extension answers the hello: the record goes into the cell's output, its line says how to go on
            expect(cell.locator(".jp-OutputArea")).to_contain_text("waits for input, round 2", timeout=30_000)
            expect(cell.locator(".jp-OutputArea")).to_contain_text("%mcp resume")
            assert page.evaluate(_MODEL)["flows"] is None  # nothing in the metadata
            front.save()
            saved = wait_for(lambda: _saved_records(root, name), "the record in the saved file's output")
            (flow_id,) = saved
            raw = json.loads((root / name).read_text())
            assert [o["data"][OUTPUT_MIME]["id"] for o in raw["cells"][2]["outputs"] if OUTPUT_MIME in o["data"]] == [
                flow_id
            ]

            front.restart_kernel()  # the flow in the kernel is gone; the file keeps it
            page.reload()
            front.wait_idle(name)
            _run_cell(front, 0)
            _run_cell(front, 1)
            listing = front.run_in_cell(3, "%mcp flows")
            expect(listing.locator(".jp-OutputArea")).to_contain_text(flow_id)
            expect(listing.locator(".jp-OutputArea")).to_contain_text("read from plain.ipynb")
            resumed = front.run_in_cell(4, f"%mcp resume {flow_id}", wait=False)
            confirm = resumed.locator(".mcp-elicitation").last
            expect(confirm).to_contain_text("Create 'orders' (small) in us-west-2?", timeout=60_000)
            confirm.get_by_role("button", name="Accept").click()
            expect(resumed.locator(".jp-OutputArea")).to_contain_text(RESULT, timeout=60_000)
            expect(resumed.locator(".jp-OutputArea")).to_contain_text(f"flow {flow_id} ended here", timeout=30_000)
            front.wait_idle(name)
            front.save()
            wait_for(lambda: _saved_records(root, name) == {}, "a saved file without a waiting flow")


def test_two_plain_tabs_only_the_tab_that_shows_the_flow_writes_it(
    tmp_path: Path, demo_url: str, shared_labs: Callable[[str], SharedLab]
) -> None:
    url = shared_labs("lab").url
    with own_folder(url, "lab", "two-plain-tabs") as folder:
        name = f"{folder}/tabs.ipynb"
        put_notebook(url, name, notebook(_cells(demo_url)))
        with chromium_pages(tmp_path, 2) as (page_a, page_b):
            for page in (page_a, page_b):
                page.set_default_timeout(30_000)
            a, b = Front(page_a, url, "lab"), Front(page_b, url, "lab")
            a.open(name)
            a.save()
            b.open(name)  # the same notebook, the same kernel, its own model
            b.save()
            page_b.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
            before = page_b.evaluate(_CONTENT)
            a.run_all()
            expect_working_form(flow_cell(page_a))
            wait_for(lambda: (page_a.evaluate(_MODEL)["flows"] or {}).get("flows"), "the record in tab A's notebook")
            page_b.wait_for_timeout(3_000)  # the save and the live area reached both tabs' comms by now
            assert page_b.evaluate(_MODEL) == {"dirty": False, "flows": None}
            assert page_b.evaluate(_CONTENT) == before  # no record, no live area: tab B never showed the flow
            answer(flow_cell(page_a))
            wait_for(lambda: page_a.evaluate(_MODEL)["flows"] is None, "the record gone from tab A's notebook")
            page_b.wait_for_timeout(2_000)
            assert page_b.evaluate(_MODEL) == {"dirty": False, "flows": None}
            assert page_b.evaluate(_CONTENT) == before
