"""Run All of a dozen ``%mcp`` cells ends with every cell numbered and the kernel idle (issue 36, item 1).

Each ``%mcp call`` cell awaits its flow (``magics.cell_await``) while its views and the page's widget
manager send comm messages, which ipykernel 7.4 handles beside the awaiting cell. Run All used to
leave now and then a cell ``[*]`` (or empty) after everything had run and the toolbar's indicator
busy for good: the cell's closing ``idle`` went out under the cell before (``magics.kernel_parent``).
Here a notebook of a dozen calls, one of them a form answered while the cells behind it wait, runs
several times in a row in JupyterLab and Notebook 7; after each run the page's own prompts must all
show a number and the kernel and the execution indicator say idle (``Front.settled_prompts``). While
the form waits, the page must show the kernel busy: the status each comm message handled beside the
cell gets ends with ``busy`` again under the cell (``cell_await._comm_status_replies``); the last
status the page saw was that comm's ``idle``, and the status bar said Idle beside cells showing ``[*]``.
"""

from __future__ import annotations

import time

from ..support.browser import Front, notebook, put_notebook, wait_for

ROUNDS = 5
FORM_CELL = 7
CELLS = [
    "%load_ext mcp_notebook",
    "from mcp_notebook.demo import demo\n%mcp connect demo demo",
    "%mcp call demo.slow_count n=3 delay=0.05",
    "%mcp call demo.add a=1 b=2",
    "%mcp call demo.add a=2 b=2",
    "%mcp call demo.slow_count n=3 delay=0.05",
    "%mcp call demo.add a=4 b=2",
    "%mcp call demo.provision_db name=orders size=medium --answer region=eu-west-1",  # asks to confirm: Accept
    "%mcp call demo.slow_count n=3 delay=0.05",
    "%mcp call demo.add a=7 b=2",
    "%mcp call demo.add a=8 b=2",
    "%mcp call demo.slow_count n=3 delay=0.05",
    "%mcp call demo.add a=10 b=2",
    "r = %mcp call demo.add a=11 b=2\nr.structured_content",
    "print('ran to the end')",
]
_LAST_RAN = """() => {
  const cells = window.jupyterapp.shell.currentWidget.content.widgets;
  return cells[cells.length - 1].model.executionCount !== null;
}"""


def _run_all_answering_the_form(front: Front) -> None:
    """Run All, press Accept in the form cell while the cells behind it wait, until the last cell has its count
    (it runs after all others; whether each of them ended in the page is for ``settled_prompts`` to say)."""
    front.run_all()
    cell = front.page.locator(".jp-NotebookPanel:visible .jp-Cell").nth(FORM_CELL)
    accept = cell.get_by_role("button", name="Accept")
    accept.wait_for(state="visible", timeout=90_000)
    waiting = front.page.locator(".jp-NotebookPanel:visible .jp-Cell").nth(len(CELLS) - 1).locator(".jp-InputPrompt")
    assert waiting.inner_text().strip() == "[*]:", "the last cell should wait behind the form"
    status = "() => window.jupyterapp.shell.currentWidget.sessionContext.kernelDisplayStatus"
    wait_for(lambda: front.page.evaluate(status) == "busy", "the kernel shown busy while the form's cell runs", 10)
    accept.click()
    front.page.wait_for_function(_LAST_RAN, timeout=120_000)


def test_run_all_ends_with_every_cell_numbered_and_the_kernel_idle(front: Front) -> None:
    name = front.path("dozen-calls.ipynb")
    put_notebook(front.url, name, notebook(CELLS))
    front.open(name)
    for round_ in range(ROUNDS):
        if round_:
            front.restart_kernel()
            front.wait_idle(name)
            front.page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
            time.sleep(0.5)  # the page drops the counts before the next Run All
        _run_all_answering_the_form(front)
        assert front.settled_prompts() == {}, f"round {round_ + 1} of Run All in {front.app} did not settle"
        text = front.page.locator(".jp-NotebookPanel:visible .jp-Cell").nth(FORM_CELL).inner_text()
        assert "Provisioned 'orders' in eu-west-1 (size medium)." in text, text[:500]
