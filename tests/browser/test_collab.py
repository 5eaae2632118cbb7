"""Two people on one notebook (jupyter-collaboration 5.0.4): one report, whichever page is open.

Under real-time collaboration the pages share one document, outputs included. A call's live area is
settled by an ``update_display_data`` that only the page that ran the cell can place; the kernel
also sends the report on the extension's comm, and a page that does not have it writes it (see
``browser/test_reload.py`` and "Reports" in ``docs/architecture.md``). JupyterLab and Notebook 7,
Chromium pages in separate browser contexts (separate people):

* page A runs the call; page B joins while the form waits and gets a working form (the widgets
  come from the kernel, not "Loading widget..."); A reloads and gets a working form too, then
  leaves; B answers: the report lands in the cell exactly once, in B's view and in the saved file;
* then a second copy is put into the shared outputs, as a page writing at the same moment would,
  and the kernel sends the report again: every page keeps the first copy, so the other goes;
* one writer per record: each record the kernel saved was written into the shared notebook by exactly
  one page (the one that ran the cell, then the one that answered), as the pages' acks tell the kernel.

Its own module: Playwright's sync API runs one driver at a time, and the other browser modules
hold theirs for the whole module (``conftest.page``).
"""

from __future__ import annotations

import base64
import json
import re
import time
from typing import Any

import pytest

from ..support.browser import Front, chromium_pages, has_class, notebook, running_lab, wait_for
from .test_reload import (
    answer,
    cells,
    check_saved,
    expect_one_report,
    expect_working_form,
    flow_cell,
    saved_report,
)

KEY_ENV = "MCPNB_BROWSER_COLLAB_KEY"


@pytest.fixture(scope="module")
def demo_url(start_http_server: Any) -> str:
    return start_http_server("demo", keys_env=KEY_ENV)


@pytest.mark.parametrize("app", ["lab"])  # collaboration is the same server extension under both (browser.LAB_ONLY)
def test_two_pages_one_writes_the_report(tmp_path: Any, demo_url: str, app: str) -> None:
    from playwright.sync_api import expect

    name = "shared.ipynb"
    with running_lab(tmp_path, {name: notebook(cells(demo_url))}, app=app, expose_app=True, collaborative=True) as (
        url,
        _root,
    ):
        with chromium_pages(tmp_path, 2) as (page_a, page_b):
            for page in (page_a, page_b):
                page.set_default_timeout(30_000)
            a, b = Front(page_a, url, app), Front(page_b, url, app)
            a.open(name)
            a.run_all()
            expect_working_form(flow_cell(page_a))

            page_b.goto(b.notebook_url(name))  # B joins while the form waits (the kernel is busy: no idle to wait for)
            expect_working_form(flow_cell(page_b))

            page_a.reload()  # the page that ran the cell reloads: it gets a working form too
            expect_working_form(flow_cell(page_a))
            page_a.goto("about:blank")  # then leaves

            cell = flow_cell(page_b)
            answer(cell)
            expect_one_report(cell)
            expect(cell).not_to_have_class(has_class("mcp-notebook-waiting"))
            b.save()
            output = check_saved(url, name)

            # two pages that write at the same moment both insert the report into the shared
            # outputs; the first in the shared order stays, the other goes (whichever page sees it)
            copy = "() => { const m = window.jupyterapp.shell.currentWidget.content.widgets[2].model.sharedModel; m.updateOutputs(1, 1, [m.getOutputs()[0]]); }"
            page_b.evaluate(copy)
            expect(cell.locator(".jp-OutputArea-output")).to_have_count(2)
            encoded = base64.b64encode(json.dumps(output).encode()).decode()
            again = (
                "import base64, json; _f = get_ipython().magics_manager.registry['MCPMagics'].session.frontend; "
                f"_f.send_report('cell-2', {output['metadata']['mcp_notebook']['display_id']!r}, json.loads(base64.b64decode('{encoded}')))"
            )
            counts = "; print('saves', _f.saves_sent, 'written', _f.saves_written)"
            ran = b.run_in_cell(3, again + counts)
            expect_one_report(cell)
            # one writer per record: every save was written by exactly one page (A, then B once it answered)
            shown = ran.locator(".jp-OutputArea").inner_text()
            sent, written = (int(n) for n in re.fullmatch(r"\s*saves (\d+) written (\d+)\s*", shown).groups())
            assert sent >= 2 and written == sent, shown
            b.save()
            time.sleep(2)  # the server writes the shared document
            wait_for(lambda: len(saved_report(url, name)) == 1, "one report in the saved file")
