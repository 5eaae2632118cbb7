"""A received notebook's saved widget state runs no script when it opens (issue 34, finding 2).

With anywidget installed (the ``app-widget`` extra), ``@jupyter-widgets/jupyterlab-manager``
restores every model saved in ``metadata.widgets`` once the kernel is ready, trusted notebook or
not, and anywidget's front end imports a model's ``_esm`` as the model is created: a notebook file
could run its author's script in the Jupyter page, with the user's session on the server's API,
before any cell ran. The labextension (``labextension/src/widget_guard.ts``) takes the saved models
that carry code out of a notebook that is not trusted before the manager restores them, and says so
above the notebook.

* Not trusted (a file the server did not sign): the saved model's script does not run (it would
  have written a file through the contents API), the page shows the notice, the models without code
  stay, the file on disk keeps its state, and a widget the kernel creates live still renders.
* Trusted (the same state, saved through the server, which signs it): the saved state restores
  and its script runs, so the first test's payload is real and trusted notebooks keep working.

On the shared servers of ``support/lab_fixtures.py`` (their kernels' notary secret is in a temp data
folder). The first in JupyterLab and Notebook 7 (its notebook page has its own shell, where the notice shows
too); the second in JupyterLab only.
"""

from __future__ import annotations

import json
import time
import urllib.error
from collections.abc import Callable
from typing import Any

import pytest

from ..support.browser import LAB_ONLY, Front, api, notebook, put_notebook, wait_for
from ..support.lab_fixtures import SharedLab

pytestmark = pytest.mark.timeout(300)

STATE_MIME = "application/vnd.jupyter.widget-state+json"
NOTICE = ".mcp-notebook-widget-state-notice"
LAYOUT_ID = "0a0a0a0a0a0a4a0a8a0a0a0a0a0a0a01"
ANY_ID = "0a0a0a0a0a0a4a0a8a0a0a0a0a0a0a02"
LIVE_CELL = (
    "import anywidget; live = type('Live', (anywidget.AnyWidget,), {'_esm': "
    "\"export default { render({ el }) { el.textContent = 'live widget ran'; } }\"})(); live"
)


def received(marker: str) -> dict[str, Any]:
    """A notebook whose saved widget state holds an anywidget model: its module, as it is imported,
    writes ``marker`` through the server's contents API (what a hostile author would do)."""
    import anywidget

    version = anywidget.AnyWidget._model_module_version.default_value
    esm = (
        f"fetch('/api/contents/{marker}', {{method: 'PUT', headers: {{'Content-Type': 'application/json'}}, "
        "body: JSON.stringify({type: 'file', format: 'text', content: 'the saved widget ran'})});\n"
        "export default { render({ el }) { el.textContent = 'saved widget'; } };"
    )
    nb = notebook(["print('hello')", ""])
    nb["metadata"]["widgets"] = {
        STATE_MIME: {
            "version_major": 2,
            "version_minor": 0,
            "state": {
                LAYOUT_ID: {
                    "model_name": "LayoutModel",
                    "model_module": "@jupyter-widgets/base",
                    "model_module_version": "2.0.0",
                    "state": {},
                },
                ANY_ID: {
                    "model_name": "AnyModel",
                    "model_module": "anywidget",
                    "model_module_version": version,
                    "state": {"_esm": esm, "_dom_classes": [], "layout": f"IPY_MODEL_{LAYOUT_ID}"},
                },
            },
        }
    }
    return nb


def exists(url: str, name: str) -> bool:
    try:
        api(url, f"contents/{name}?content=0")
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return False
        raise
    return True


def page_widgets(front: Front) -> Any:
    return front.page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.getMetadata('widgets')")


def test_an_untrusted_notebooks_saved_widget_code_does_not_run_and_the_page_says_so(
    front: Front, shared_labs: Callable[[str], SharedLab]
) -> None:
    from playwright.sync_api import expect

    name, marker = front.path("received.ipynb"), front.path("ran-untrusted.txt")
    # written straight to disk, so never signed: a notebook received from someone else
    (shared_labs(front.app).root / name).write_text(json.dumps(received(marker)))
    panel = front.open(name)
    trust = "() => window.jupyterapp.shell.currentWidget.content.model.cells.get(0).trusted"
    assert front.page.evaluate(trust) is False  # the server found no signature: Jupyter's own verdict
    in_page = page_widgets(front)
    # a widget the kernel creates live renders (the manager and anywidget work as before) ...
    front.run_in_cell(1, LIVE_CELL)
    expect(panel.locator(".jp-Cell").nth(1).get_by_text("live widget ran", exact=True)).to_be_visible()
    # ... and by now the manager has long restored the saved state: its script never ran
    time.sleep(2)
    assert not exists(front.url, marker)
    notice = panel.locator(NOTICE)
    expect(notice).to_be_visible()
    expect(notice.locator("span")).to_have_text(
        "This notebook is not trusted, so the saved state of 1 widget that carries its own code (anywidget) was "
        "not loaded: restoring it would run the notebook author's script in this page. Widgets the kernel "
        "creates when you run cells work as usual. Saving leaves that state out of the file; to keep it, close "
        "without saving and, if you know where the notebook came from, run `jupyter trust` on it and open it again."
    )
    # the model without code stays: the page's copy only lost the anywidget model; the file keeps both
    assert sorted(in_page[STATE_MIME]["state"]) == [LAYOUT_ID]
    on_disk = api(front.url, f"contents/{name}?content=1")["content"]["metadata"]["widgets"]
    assert sorted(on_disk[STATE_MIME]["state"]) == sorted([ANY_ID, LAYOUT_ID])

    notice.get_by_role("button", name="Dismiss").click()
    expect(notice).to_have_count(0)


@LAB_ONLY
def test_a_trusted_notebooks_saved_widget_state_restores(front: Front) -> None:
    from playwright.sync_api import expect

    name, marker = front.path("signed.ipynb"), front.path("ran-trusted.txt")
    put_notebook(front.url, name, received(marker))  # saved by the server: signed
    saved = api(front.url, f"contents/{name}?content=1")["content"]
    assert saved["cells"][0]["metadata"].get("trusted") is True, json.dumps(saved["cells"][0])
    panel = front.open(name)
    wait_for(lambda: exists(front.url, marker), "the saved widget's script, restored")
    expect(panel.locator(NOTICE)).to_have_count(0)
    assert sorted(page_widgets(front)[STATE_MIME]["state"]) == sorted([ANY_ID, LAYOUT_ID])
